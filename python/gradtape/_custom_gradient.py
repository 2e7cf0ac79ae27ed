"""``gt.custom_gradient``: functions whose gradient is defined in Python."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, TypeVar

from . import _gradtape as _native
from . import _nest

_Tensor = _native.Tensor
_Variable = _native.Variable
_F = TypeVar("_F", bound=Callable[..., Any])


def _accepts_variables(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return True
    return "variables" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def custom_gradient(f: _F) -> _F:
    """Decorator defining a function with a custom gradient. TF equivalent:
    ``tf.custom_gradient``.

    ``f(*x)`` returns ``(y, grad_fn)``. ``grad_fn(*dy)`` returns one gradient per
    input of ``f`` (or ``None``). If ``f`` reads variables, ``grad_fn(*dy,
    variables=None)`` returns ``(input_grads, variable_grads)``. The body of ``f`` is
    not recorded; the whole call is one node of every tape watching an input, and
    ``grad_fn`` is called during ``gradient`` (if it uses gt ops, the gradient is
    itself differentiable).

    >>> import gradtape as gt
    >>> @gt.custom_gradient
    ... def clip_gradients(y):
    ...     def backward(dy):
    ...         return gt.clip_by_norm(dy, 0.5)
    ...     return y, backward
    >>> v = gt.Variable(2.0)
    >>> with gt.GradientTape() as t:
    ...     output = clip_gradients(v * v)
    >>> print(t.gradient(output, v))
    gt.Tensor(2.0, shape=(), dtype=float32)
    """
    @functools.wraps(f)
    def decorated(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise ValueError(
                "The custom_gradient function received keyword arguments "
                f"{sorted(kwargs)}; pass tensors positionally"
            )
        inputs = [a if isinstance(a, (_Tensor, _Variable)) else _native.convert_to_tensor(a) for a in args]
        result, variables = _native._run_unrecorded(lambda: f(*args))
        try:
            y, grad_fn = result
        except (TypeError, ValueError):
            raise TypeError(
                "A @custom_gradient function must return a pair (outputs, grad_fn)"
            ) from None
        arg_ids = {a._unique_id for a in args if isinstance(a, _Variable)}
        variables = [v for v in variables if v.trainable and v._unique_id not in arg_ids]
        if variables and not _accepts_variables(grad_fn):
            names = ", ".join(v.name for v in variables)
            raise TypeError(
                "If using @custom_gradient with a function that uses variables, then "
                "grad_fn must accept a keyword argument 'variables'. "
                f"The function read: {names}"
            )
        flat_y = _nest.flatten(y)
        n_in = len(inputs)

        def callback(dys: list[Any]) -> tuple[list[Any], list[Any]]:
            if variables:
                r = grad_fn(*dys, variables=variables)
                try:
                    gx, gv = r
                except (TypeError, ValueError):
                    raise TypeError(
                        "grad_fn of a function that reads variables must return "
                        "(input_grads, variable_grads)"
                    ) from None
                gv = list(gv) if isinstance(gv, (list, tuple)) else [gv]
            else:
                gx, gv = grad_fn(*dys), []
            gx = list(gx) if isinstance(gx, (list, tuple)) else [gx]
            if len(gx) != n_in:
                raise ValueError(
                    f"custom_gradient: grad_fn returned {len(gx)} gradients, expected "
                    f"{n_in} (one per input)"
                )
            return gx, gv

        outs = _native._record_custom(inputs, flat_y, variables, callback)
        return _nest.pack_sequence_as(y, outs)

    return decorated  # type: ignore[return-value]
