"""Neural-network functions. TF equivalent: ``tf.nn``.

>>> import gradtape as gt
>>> print(gt.nn.relu(gt.constant([-1.0, 2.0])))
gt.Tensor([0. 2.], shape=(2,), dtype=float32)
"""

from ._gradtape import elu, relu, sigmoid, softplus, softsign, tanh

__all__ = ["elu", "relu", "sigmoid", "softplus", "softsign", "tanh"]
