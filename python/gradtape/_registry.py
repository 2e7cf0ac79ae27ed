"""Registered gradient functions and overrides of built-in gradients.

TF equivalent: ``tf.RegisterGradient`` and ``Graph.gradient_override_map``. In
gradtape the override map is a context manager of its own: ops *recorded* inside it
use the registered function instead of their built-in rule.
"""

import contextlib

from . import _gradtape as _native


class RegisterGradient:
    """Decorator registering a gradient function under a name. TF equivalent:
    ``tf.RegisterGradient``.

    The function is called as ``fn(op, *grads)`` where ``op.type``, ``op.inputs``
    and ``op.outputs`` describe the op, and returns one gradient per input (a single
    tensor for a one-input op). Use it for a built-in op with
    :func:`gradient_override_map`:

    >>> import gradtape as gt
    >>> @gt.RegisterGradient("DoubledSquareGrad")
    ... def _doubled(op, grad):
    ...     return grad * 4.0 * op.inputs[0]
    >>> x = gt.constant(3.0)
    >>> with gt.GradientTape() as t:
    ...     t.watch(x)
    ...     with gt.gradient_override_map({"Square": "DoubledSquareGrad"}):
    ...         y = gt.square(x)
    >>> float(t.gradient(y, x))
    12.0
    """

    def __init__(self, op_type):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, f):
        _native._register_gradient(self._op_type, f)
        return f


@contextlib.contextmanager
def gradient_override_map(op_type_map):
    """Within this context, ops of the given types are recorded with the gradient
    registered under the mapped name. TF equivalent: ``Graph.gradient_override_map``.
    """
    if not isinstance(op_type_map, dict):
        raise TypeError("op_type_map must be a dictionary mapping strings to strings")
    items = []
    for k, v in op_type_map.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError("op_type_map must be a dictionary mapping strings to strings")
        items.append((k, v))
    scope = _native._override_scope(items)
    try:
        yield
    finally:
        scope.close()


gradient_override = gradient_override_map
