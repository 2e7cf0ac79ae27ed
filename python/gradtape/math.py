"""Elementwise math and reductions. TF equivalent: ``tf.math``.

Most functions are the native ones (one call into Rust per op); a few are short
compositions of them, differentiable because their parts are.

>>> import gradtape as gt
>>> print(gt.math.sin(gt.constant(0.0)))
gt.Tensor(0.0, shape=(), dtype=float32)
"""

from __future__ import annotations

from typing import Any

from ._gradtape import Tensor as _Tensor
from ._gradtape import (
    abs, acos, add, angle, asin, atan, atan2, complex, conj, cos, cosh, cumprod, cumsum,
    divide, equal, erf, exp, expm1, floordiv, floormod, greater, greater_equal, imag, less,
    less_equal, log, log1p, logical_and, logical_not, logical_or, logical_xor, maximum,
    minimum, multiply, negative, not_equal, pow, real, reciprocal, reduce_max, reduce_mean,
    reduce_min, reduce_prod, reduce_sum, rsqrt, sigmoid, sign, sin, sinh, softplus, sqrt,
    square, squared_difference, subtract, tan, tanh, truediv,
)
from ._gradtape import argmax, argmin, ceil, floor, log_softmax, round, softmax
from ._gradtape import cast as _cast
from ._gradtape import convert_to_tensor as _convert
from ._gradtape import where as _where

mod = floormod
subtract = subtract


def reduce_variance(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> _Tensor:
    """Variance over ``axis``. TF equivalent: ``tf.math.reduce_variance``.

    >>> import gradtape as gt
    >>> float(gt.math.reduce_variance(gt.constant([1.0, 2.0, 3.0, 4.0])))
    1.25
    """
    x = _convert(input_tensor)
    mean = reduce_mean(x, axis=axis, keepdims=True)
    d = x - mean
    sq = d * conj(d) if x.dtype.is_complex else square(d)
    return real(reduce_mean(sq, axis=axis, keepdims=keepdims))


def reduce_std(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> _Tensor:
    """Standard deviation over ``axis``. TF equivalent: ``tf.math.reduce_std``.

    >>> import gradtape as gt
    >>> print(f"{float(gt.math.reduce_std(gt.constant([1.0, 3.0]))):.6f}")
    1.000000
    """
    return sqrt(reduce_variance(input_tensor, axis=axis, keepdims=keepdims))


def reduce_logsumexp(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> _Tensor:
    """``log(sum(exp(x)))`` over ``axis``, computed stably. TF equivalent:
    ``tf.math.reduce_logsumexp``.

    >>> import gradtape as gt
    >>> print(f"{float(gt.math.reduce_logsumexp(gt.constant([0.0, 0.0]))):.6f}")
    0.693147
    """
    from ._gradtape import stop_gradient

    x = _convert(input_tensor)
    m = stop_gradient(reduce_max(x, axis=axis, keepdims=True))
    # Where the max is infinite the shift would make nan; TF shifts by 0 there.
    finite = _where(abs(m) < float("inf"), m, m * 0.0)
    r = log(reduce_sum(exp(x - finite), axis=axis, keepdims=True)) + finite
    if not keepdims:
        from ._gradtape import squeeze

        r = squeeze(r, axis=axis) if axis is not None else squeeze(r)
    return r


def reduce_any(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> _Tensor:
    """Logical or over ``axis``. TF equivalent: ``tf.math.reduce_any``.

    >>> import gradtape as gt
    >>> bool(gt.math.reduce_any(gt.constant([False, True])))
    True
    """
    x = _cast(_convert(input_tensor), "int32")
    return greater(reduce_max(x, axis=axis, keepdims=keepdims), 0)


def reduce_all(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> _Tensor:
    """Logical and over ``axis``. TF equivalent: ``tf.math.reduce_all``.

    >>> import gradtape as gt
    >>> bool(gt.math.reduce_all(gt.constant([False, True])))
    False
    """
    x = _cast(_convert(input_tensor), "int32")
    return greater(reduce_min(x, axis=axis, keepdims=keepdims), 0)


def l2_normalize(x: Any, axis: Any = None, epsilon: float = 1e-12, name: str | None = None, dim: Any = None) -> _Tensor:
    """``x / sqrt(max(sum(x**2), epsilon))`` over ``axis``. TF equivalent:
    ``tf.math.l2_normalize`` (also ``gt.nn.l2_normalize``).

    >>> import gradtape as gt
    >>> print(gt.math.l2_normalize(gt.constant([3.0, 4.0])))
    gt.Tensor([0.6 0.8], shape=(2,), dtype=float32)
    """
    if dim is not None:
        axis = dim
    x = _convert(x)
    square_sum = reduce_sum(square(x), axis=axis, keepdims=True)
    x_inv_norm = rsqrt(maximum(square_sum, epsilon))
    return multiply(x, x_inv_norm)

__all__ = [
    "abs", "acos", "add", "angle", "argmax", "argmin", "asin", "atan", "atan2", "ceil",
    "complex", "conj", "cos", "cosh", "cumprod", "cumsum", "divide", "equal", "erf",
    "exp", "expm1", "floor", "floordiv", "floormod", "greater", "greater_equal",
    "imag", "l2_normalize", "less", "less_equal", "log", "log1p", "log_softmax",
    "logical_and", "logical_not", "logical_or", "logical_xor", "maximum", "minimum",
    "mod", "multiply", "negative", "not_equal", "pow", "real", "reciprocal",
    "reduce_all", "reduce_any", "reduce_logsumexp", "reduce_max", "reduce_mean",
    "reduce_min", "reduce_prod", "reduce_std", "reduce_sum", "reduce_variance",
    "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "softmax", "softplus", "sqrt",
    "square", "squared_difference", "subtract", "tan", "tanh", "truediv",
]
