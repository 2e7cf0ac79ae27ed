"""Layers. TF equivalent: ``tf.keras.layers``."""

from ._base import Layer
from .batch_normalization import BatchNormalization
from .convolutional import Conv2D
from .dense import Dense
from .dropout import Dropout
from .embedding import Embedding
from .flatten import Flatten
from .pooling import AveragePooling2D, AvgPool2D, MaxPool2D, MaxPooling2D
from .sequential import Sequential

__all__ = [
    "Layer",
    "AveragePooling2D",
    "AvgPool2D",
    "BatchNormalization",
    "Conv2D",
    "Dense",
    "Dropout",
    "Embedding",
    "Flatten",
    "MaxPool2D",
    "MaxPooling2D",
    "Sequential",
]
