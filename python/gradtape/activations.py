"""Activation functions by name. TF equivalent: ``tf.keras.activations``.

>>> import gradtape as gt
>>> gt.activations.get("relu") is gt.nn.relu
True
"""

from . import nn


def linear(x):
    """The identity activation."""
    return x


relu = nn.relu
elu = nn.elu
selu = nn.selu
gelu = nn.gelu
sigmoid = nn.sigmoid
tanh = nn.tanh
softplus = nn.softplus
softsign = nn.softsign
silu = swish = nn.silu
relu6 = nn.relu6
leaky_relu = nn.leaky_relu
log_softmax = nn.log_softmax


def softmax(x, axis=-1):
    """The softmax over ``axis`` (the last by default).
    TF equivalent: ``tf.keras.activations.softmax``."""
    return nn.softmax(x, axis=axis)


def exponential(x):
    """``exp(x)``. TF equivalent: ``tf.keras.activations.exponential``."""
    from ._gradtape import exp

    return exp(x)


_BY_NAME = {
    "relu": nn.relu,
    "elu": nn.elu,
    "sigmoid": nn.sigmoid,
    "tanh": nn.tanh,
    "softplus": nn.softplus,
    "softsign": nn.softsign,
    "linear": linear,
    "softmax": softmax,
    "exponential": exponential,
    "swish": nn.silu,
}


def get(identifier):
    """An activation from a name, a function, or ``None`` (linear)."""
    if identifier is None:
        return linear
    if callable(identifier):
        return identifier
    if isinstance(identifier, str):
        fn = _BY_NAME.get(identifier)
        if fn is None:
            fn = getattr(nn, identifier, None)
        if fn is None:
            raise ValueError(f"Unknown activation function: {identifier!r}")
        return fn
    raise TypeError(f"Could not interpret activation function identifier: {identifier!r}")
