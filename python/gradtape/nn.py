"""Neural-network functions. TF equivalent: ``tf.nn``.

All native: relu6, selu, leaky_relu, softmax, log_softmax and the softmax
cross-entropies are primitives with TF's gradients; gelu, silu, l2_loss,
sigmoid_cross_entropy_with_logits, l2_normalize and dropout are TF's compositions of
engine ops, written in the crate (differentiable because their parts are).

>>> import gradtape as gt
>>> print(gt.nn.relu(gt.constant([-1.0, 2.0])))
gt.Tensor([0. 2.], shape=(2,), dtype=float32)
"""

from ._gradtape import (
    dropout, elu, gelu, l2_loss, leaky_relu, log_softmax, relu, relu6, selu, sigmoid,
    sigmoid_cross_entropy_with_logits, silu, softmax, softmax_cross_entropy_with_logits,
    softplus, softsign, sparse_softmax_cross_entropy_with_logits, tanh,
)
from .math import l2_normalize

swish = silu

__all__ = [
    "dropout", "elu", "gelu", "l2_loss", "l2_normalize", "leaky_relu", "log_softmax",
    "relu", "relu6", "selu", "sigmoid", "sigmoid_cross_entropy_with_logits", "silu",
    "softmax", "softmax_cross_entropy_with_logits", "softplus", "softsign",
    "sparse_softmax_cross_entropy_with_logits", "swish", "tanh",
]
