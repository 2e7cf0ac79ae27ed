"""Layers. TF equivalent: ``tf.keras.layers``."""

from ._base import Layer
from .batch_normalization import BatchNormalization
from .dense import Dense
from .sequential import Sequential

__all__ = ["Layer", "BatchNormalization", "Dense", "Sequential"]
