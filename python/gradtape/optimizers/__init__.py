"""Optimizers. TF equivalent: ``tf.keras.optimizers``."""

from ._base import Optimizer
from .adam import Adam
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam"]
