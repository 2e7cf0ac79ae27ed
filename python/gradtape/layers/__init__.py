"""Layers. TF equivalent: ``tf.keras.layers``."""

from ._base import Layer
from .dense import Dense
from .sequential import Sequential

__all__ = ["Layer", "Dense", "Sequential"]
