"""Neural-network functions. TF equivalent: ``tf.nn``.

relu6, selu, leaky_relu, softmax, log_softmax and the softmax cross-entropies are
native primitives with TF's gradients; the rest are compositions of native ops that
give TF's numbers (and are differentiable because their parts are).

>>> import gradtape as gt
>>> print(gt.nn.relu(gt.constant([-1.0, 2.0])))
gt.Tensor([0. 2.], shape=(2,), dtype=float32)
"""

from __future__ import annotations

from typing import Any

from ._gradtape import Tensor as _Tensor
import math as _math

from ._gradtape import (
    elu, leaky_relu, log_softmax, relu, relu6, selu, sigmoid, softmax,
    softmax_cross_entropy_with_logits, softplus, softsign,
    sparse_softmax_cross_entropy_with_logits, tanh,
)
from ._gradtape import convert_to_tensor as _convert
from .math import l2_normalize

__all__ = [
    "dropout", "elu", "gelu", "l2_loss", "l2_normalize", "leaky_relu", "log_softmax",
    "relu", "relu6", "selu", "sigmoid", "sigmoid_cross_entropy_with_logits", "silu",
    "softmax", "softmax_cross_entropy_with_logits", "softplus", "softsign",
    "sparse_softmax_cross_entropy_with_logits", "swish", "tanh",
]


def gelu(features: Any, approximate: bool = False, name: str | None = None) -> _Tensor:
    """Gaussian error linear unit. TF equivalent: ``tf.nn.gelu``: exactly
    ``0.5 x (1 + erf(x / sqrt 2))``, or with ``approximate=True`` the tanh form
    ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``.

    >>> import gradtape as gt
    >>> round(float(gt.nn.gelu(gt.constant(1.0))), 6)
    0.841345
    """
    from ._gradtape import erf

    x = _convert(features)
    if approximate:
        coeff = _convert(0.044715, dtype=x.dtype)
        inner = 0.7978845608028654 * (x + coeff * x * x * x)
        return 0.5 * x * (1.0 + tanh(inner))
    return 0.5 * x * (1.0 + erf(x * _convert(1.0 / _math.sqrt(2.0), dtype=x.dtype)))


def silu(features: Any, beta: float = 1.0, name: str | None = None) -> _Tensor:
    """``x * sigmoid(beta * x)``. TF equivalent: ``tf.nn.silu`` / ``tf.nn.swish``.

    >>> import gradtape as gt
    >>> round(float(gt.nn.silu(gt.constant(1.0))), 6)
    0.731059
    """
    x = _convert(features)
    return x * sigmoid(beta * x)


swish = silu


def l2_loss(t: Any, name: str | None = None) -> _Tensor:
    """``sum(t ** 2) / 2``. TF equivalent: ``tf.nn.l2_loss``.

    >>> import gradtape as gt
    >>> float(gt.nn.l2_loss(gt.constant([1.0, 2.0])))
    2.5
    """
    from ._gradtape import reduce_sum

    x = _convert(t)
    return reduce_sum(x * x) * 0.5


def sigmoid_cross_entropy_with_logits(labels: Any = None, logits: Any = None, name: str | None = None) -> _Tensor:
    """Elementwise logistic loss, computed stably as TF does:
    ``max(x, 0) - x * z + log(1 + exp(-|x|))``. TF equivalent:
    ``tf.nn.sigmoid_cross_entropy_with_logits``.

    >>> import gradtape as gt
    >>> round(float(gt.nn.sigmoid_cross_entropy_with_logits(labels=1.0, logits=0.0)), 6)
    0.693147
    """
    from ._gradtape import exp, greater_equal, log1p, where, zeros_like

    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    logits = _convert(logits)
    labels = _convert(labels, dtype=logits.dtype)
    if tuple(labels.shape) != tuple(logits.shape):
        raise ValueError(
            f"logits and labels must have the same shape ({tuple(logits.shape)} vs "
            f"{tuple(labels.shape)})"
        )
    zeros = zeros_like(logits)
    cond = greater_equal(logits, zeros)
    relu_logits = where(cond, logits, zeros)
    neg_abs_logits = where(cond, -logits, logits)
    return (relu_logits - logits * labels) + log1p(exp(neg_abs_logits))


def dropout(x: Any, rate: Any, noise_shape: Any = None, seed: int | None = None, name: str | None = None) -> _Tensor:
    """Zeros elements with probability ``rate`` and scales the rest by
    ``1 / (1 - rate)``. TF equivalent: ``tf.nn.dropout`` (the random stream is
    gradtape's, not TF's).

    >>> import gradtape as gt
    >>> y = gt.nn.dropout(gt.ones([1000]), rate=0.5, seed=1)
    >>> sorted(set(y.numpy().tolist()))
    [0.0, 2.0]
    """
    from ._gradtape import cast, greater_equal
    from .random import uniform

    x = _convert(x)
    if not x.dtype.is_floating:
        raise ValueError(
            "x has to be a floating point tensor since it's going to be scaled. "
            f"Got a {x.dtype.name} tensor instead."
        )
    if isinstance(rate, (int, float)):
        if not 0 <= rate < 1:
            raise ValueError(f"rate must be a scalar tensor or a float in the range [0, 1), got {rate}")
        if rate == 0:
            return x
    shape = tuple(x.shape) if noise_shape is None else tuple(int(d) for d in noise_shape)
    keep = greater_equal(uniform(shape, dtype=x.dtype, seed=seed), rate)
    scale = 1.0 / (1.0 - float(rate))
    return x * scale * cast(keep, x.dtype)
