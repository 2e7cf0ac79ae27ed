"""Activation functions by name. TF equivalent: ``tf.keras.activations``.

>>> import gradtape as gt
>>> gt.activations.get("relu") is gt.nn.relu
True
"""

from . import nn


def linear(x):
    """The identity activation."""
    return x


_BY_NAME = {
    "relu": nn.relu,
    "elu": nn.elu,
    "sigmoid": nn.sigmoid,
    "tanh": nn.tanh,
    "softplus": nn.softplus,
    "softsign": nn.softsign,
    "linear": linear,
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
