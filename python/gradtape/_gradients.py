"""Gradient utilities written over the tape and ``custom_gradient``: TF's
``tf.recompute_grad``, ``tf.grad_pass_through`` and ``tf.get_static_value``.

No op lives here: each is a few public calls (the tape, ``custom_gradient``), as in
TF's ``custom_gradient.py`` and ``tensor_util.py``.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

from . import _gradtape as _native
from . import _nest
from ._custom_gradient import _custom_gradient
from ._tape import GradientTape, UnconnectedGradients
from ._indexed_slices import _densify

_F = TypeVar("_F", bound=Callable[..., Any])


def _differentiable(a: Any) -> bool:
    return isinstance(a, _native.Tensor) and (a.dtype.is_floating or a.dtype.is_complex)


def recompute_grad(f: _F) -> _F:
    """Gradient checkpointing: ``f``'s activations are not kept on the tape but
    recomputed when the gradient is asked for. TF equivalent: ``tf.recompute_grad``.

    The forward pass runs unrecorded, so a tape holds only the call's inputs and
    outputs (one node); ``gradient`` runs ``f`` again under a fresh tape and
    differentiates that. Gradients equal those of ``f`` itself (for a deterministic
    ``f``), variables ``f`` reads included.

    >>> import gradtape as gt
    >>> @gt.recompute_grad
    ... def block(x):
    ...     return gt.tanh(x) * x
    >>> x = gt.constant(0.5)
    >>> with gt.GradientTape() as t:
    ...     t.watch(x)
    ...     y = block(x)
    >>> print(t.gradient(y, x))
    gt.Tensor(0.855341, shape=(), dtype=float32)
    """

    @functools.wraps(f)
    def inner(*args: Any, **kwargs: Any) -> Any:
        result = f(*args, **kwargs)

        def grad_wrapper(*dresult: Any, variables: Any = None) -> Any:
            with GradientTape() as t:
                id_args = _nest.map_structure(
                    lambda a: _native.identity(a) if isinstance(a, (_native.Tensor, _native.Variable)) else a,
                    list(args),
                )
                t.watch([a for a in _nest.flatten(id_args) if _differentiable(a)])
                if variables:
                    t.watch(list(variables))
                recomputed = f(*id_args, **kwargs)
            flat_ids = _nest.flatten(id_args)
            kw_vars = list(variables) if variables else []
            tensors = [a for a in flat_ids if isinstance(a, _native.Tensor)]
            grads = t.gradient(
                _nest.flatten(recomputed),
                tensors + kw_vars,
                output_gradients=list(dresult),
                unconnected_gradients=UnconnectedGradients.ZERO,
            )
            grads = [_densify(g) for g in grads]
            it = iter(grads[: len(tensors)])
            arg_grads = [next(it) if isinstance(a, _native.Tensor) else None for a in flat_ids]
            if variables is not None:
                return arg_grads, list(grads[len(tensors):])
            return arg_grads

        return result, grad_wrapper

    decorated = _custom_gradient(inner, record_body=False)
    decorated.__wrapped__ = f
    return decorated  # type: ignore[return-value]


def grad_pass_through(f: _F) -> _F:
    """Wraps ``f`` so that its gradient is the identity: the incoming gradient goes
    to ``f``'s inputs unchanged (a straight-through estimator). Variables ``f`` uses
    get no gradient. TF equivalent: ``tf.grad_pass_through``.

    >>> import gradtape as gt
    >>> x = gt.constant(1.7)
    >>> with gt.GradientTape() as t:
    ...     t.watch(x)
    ...     y = gt.grad_pass_through(gt.round)(x) * 3.0
    >>> print(y.numpy(), t.gradient(y, x).numpy())
    6.0 3.0
    """

    def _grad_pass_through_op(*args: Any, **kwargs: Any) -> Any:
        def grad(*dys: Any, **kw: Any) -> Any:
            variables = kw.get("variables")
            if variables is not None:
                return list(dys), [None] * len(variables)
            return list(dys)

        return f(*args, **kwargs), grad

    decorated = functools.wraps(f)(_custom_gradient(_grad_pass_through_op))
    decorated.__wrapped__ = f
    return decorated  # type: ignore[return-value]


def get_static_value(tensor: Any, partial: bool = False) -> Any:
    """The value of ``tensor`` known without running anything: a numpy array for a
    tensor, ``None`` for a variable (its value may change), and anything that is not
    a tensor as given. TF equivalent: ``tf.get_static_value``.

    >>> import gradtape as gt
    >>> gt.get_static_value(gt.constant([1, 2]))
    array([1, 2], dtype=int32)
    >>> print(gt.get_static_value(gt.Variable(1.0)))
    None
    >>> gt.get_static_value(3.0)
    3.0
    """
    del partial  # eager tensors are always fully known
    if isinstance(tensor, _native.Variable):
        return None
    if isinstance(tensor, _native.Tensor):
        return tensor.numpy()
    return tensor


__all__ = ["get_static_value", "grad_pass_through", "recompute_grad"]
