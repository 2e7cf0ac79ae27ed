"""Elementwise math and reductions. TF equivalent: ``tf.math``.

Every function is a native one (one call into Rust per op); the composites among
them (``reduce_variance``, ``reduce_std``, ``reduce_logsumexp``, ``l2_normalize``) are
composed of engine ops in the crate, differentiable because their parts are.

>>> import gradtape as gt
>>> print(gt.math.sin(gt.constant(0.0)))
gt.Tensor(0.0, shape=(), dtype=float32)
"""

from ._gradtape import (
    abs, acos, add, angle, asin, atan, atan2, complex, conj, cos, cosh, cumprod, cumsum,
    divide, equal, erf, exp, expm1, floordiv, floormod, greater, greater_equal, imag, less,
    less_equal, log, log1p, logical_and, logical_not, logical_or, logical_xor, maximum,
    minimum, multiply, negative, not_equal, pow, real, reciprocal, reduce_max, reduce_mean,
    reduce_min, reduce_prod, reduce_sum, rsqrt, sigmoid, sign, sin, sinh, softplus, sqrt,
    square, squared_difference, subtract, tan, tanh, truediv,
)
from ._gradtape import argmax, argmin, ceil, floor, log_softmax, round, softmax
from ._gradtape import (
    l2_normalize, reduce_all, reduce_any, reduce_logsumexp, reduce_std, reduce_variance,
)

mod = floormod
subtract = subtract

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
