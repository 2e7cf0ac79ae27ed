"""``gt.custom_gradient``: functions whose gradient is defined in Python."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, TypeVar, cast

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


def _as_tensor(v: Any) -> Any:
    return v if isinstance(v, _Tensor) else _native.convert_to_tensor(v)


def _traced_gradient(inputs: list[Any], ys: list[Any], variables: list[Any], callback: Any) -> Any:
    """``(graph, captured)``: a custom gradient's ``callback`` traced inside the current
    trace, with the output gradients as arguments (of any shape), into a graph giving one
    gradient per input then per variable (zeros for ``None``); ``captured``: the values
    of the outer trace it reads (the body's)."""

    def grads(dys: list[Any]) -> list[Any]:
        gx, gv = callback(list(dys))
        out = []
        for g, like in zip(list(gx) + list(gv), list(inputs) + list(variables)):
            if g is None:
                g = _native.zeros_like(like)
            elif not isinstance(g, _Tensor):
                g = _native.convert_to_tensor(g, dtype=like.dtype)
            out.append(g)
        return out

    examples = [_native.ones_like(y) for y in ys]
    return _native._trace_subgraph(grads, examples, [(y.dtype, None) for y in ys])


def custom_gradient(f: _F) -> _F:
    """Decorator defining a function with a custom gradient. TF equivalent:
    ``tf.custom_gradient``.

    ``f(*x)`` returns ``(y, grad_fn)``; ``x`` and ``y`` may be nested structures of
    tensors (and keyword arguments are passed through, with no gradient).
    ``grad_fn(*dy)`` returns one gradient per (flattened) positional input of ``f``
    (or ``None``). If ``f`` reads trainable variables it does not take as arguments,
    ``grad_fn(*dy, variables=None)`` returns ``(input_grads, variable_grads)``. As in
    TF eager, the body of ``f`` is recorded on the active tapes, while the gradient of
    ``y`` comes from ``grad_fn``: a ``grad_fn`` that uses tensors computed in the body
    is differentiable through them (second derivatives).

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
    return cast(_F, _Bindable(f))


class _Bindable:
    """A custom-gradient function that binds as a method (as TF's ``Bind``): on an
    instance, ``self`` is bound before the call, so it is not taken for an input."""

    def __init__(self, f: Callable[..., Any]) -> None:
        functools.update_wrapper(self, f)
        self._f = f
        self._decorated = _custom_gradient(f)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._decorated(*args, **kwargs)

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        return _custom_gradient(self._f.__get__(instance, owner))


def _custom_gradient(f: _F, record_body: bool = True, trace_gradient: bool = True) -> _F:
    """``custom_gradient``; ``record_body=False`` runs the body with every tape
    paused (``recompute_grad``: its activations must not stay on the tape);
    ``trace_gradient=False``: in a ``gt.function``, the gradient function is called at
    gradient time on every call instead of being traced (``gt.distributed``: its
    gradients communicate)."""

    @functools.wraps(f)
    def decorated(*args: Any, **kwargs: Any) -> Any:
        flat_args = _nest.flatten(args)
        inputs = [
            a if isinstance(a, (_Tensor, _Variable)) else _native.convert_to_tensor(a)
            for a in flat_args
        ]
        result, variables = _native._run_unrecorded(lambda: f(*args, **kwargs), record_body)
        try:
            y, grad_fn = result
        except (TypeError, ValueError):
            raise TypeError(
                "A @custom_gradient function must return a pair (outputs, grad_fn)"
            ) from None
        arg_ids = {
            a._unique_id
            for a in flat_args + _nest.flatten(kwargs)
            if isinstance(a, _Variable)
        }
        variables = [v for v in variables if v.trainable and v._unique_id not in arg_ids]
        if variables and not _accepts_variables(grad_fn):
            names = ", ".join(v.name for v in variables)
            raise TypeError(
                "@gt.custom_gradient grad_fn must accept keyword argument 'variables', "
                f"since function uses variables: {names}"
            )
        flat_y = _nest.flatten(y)
        n_in = len(inputs)

        def callback(dys: list[Any]) -> tuple[list[Any], list[Any]]:
            dy_args = dys  # TF: one gradient per flattened output
            if variables:
                r = grad_fn(*dy_args, variables=variables)
                try:
                    gx, gv = r
                except (TypeError, ValueError):
                    raise TypeError(
                        "grad_fn of a function that reads variables must return "
                        "(input_grads, variable_grads)"
                    ) from None
                gv = list(gv) if isinstance(gv, (list, tuple)) else [gv]
                if len(gv) != len(variables):
                    raise ValueError(
                        "Must return gradient for each variable from @custom_gradient grad_fn."
                    )
            else:
                gx, gv = grad_fn(*dy_args), []
            gx = _nest.flatten(gx)
            if len(gx) != n_in:
                raise ValueError(
                    f"custom_gradient function expected to return {n_in} gradients, "
                    f"but returned {len(gx)} instead."
                )
            return gx, gv

        if _native._is_tracing():
            from . import saved_model

            if saved_model._saving() is not None:
                # Traced by gt.saved_model.save: the gradient is traced too.
                outs = saved_model._record_custom_for_saving(inputs, flat_y, variables, callback)
                return _nest.pack_sequence_as(y, outs)
            # In a gt.function (TF's tf.function): the gradient function is traced
            # now, reading the body's values of each call (not this trace's). One that
            # cannot be traced (it raises) is called at gradient time instead, where
            # it raises when a gradient needs it, as TF's backward function would.
            ys = [_as_tensor(v) for v in flat_y]
            try:
                traced = _traced_gradient(inputs, ys, variables, callback) if trace_gradient else None
            except Exception:
                traced = None
            if traced is not None:
                graph, captured = traced
                outs = _native._record_saved_custom(inputs, ys, captured, variables, graph, live=True)
                return _nest.pack_sequence_as(y, outs)
        outs = _native._record_custom(inputs, flat_y, variables, callback)
        return _nest.pack_sequence_as(y, outs)

    return decorated  # type: ignore[return-value]
