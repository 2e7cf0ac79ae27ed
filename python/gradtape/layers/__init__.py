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
from .convolutional_more import Conv1D, Conv2DTranspose, DepthwiseConv2D, SeparableConv2D
from .core_more import (
    ELU, Activation, Add, AveragePooling1D, Average, Concatenate, Cropping2D, Dot, GaussianDropout,
    GaussianNoise, GlobalAveragePooling1D, GlobalAveragePooling2D, GlobalMaxPooling1D, GlobalMaxPooling2D,
    GroupNormalization, Identity, InputLayer, Lambda, LayerNormalization, LeakyReLU, Masking, MaxPooling1D, Maximum,
    Minimum, Multiply, Normalization, Permute, PReLU, ReLU, RepeatVector, Rescaling, Reshape, Softmax,
    SpatialDropout1D, SpatialDropout2D, SpatialDropout3D, Subtract, UnitNormalization, UpSampling2D,
    ZeroPadding2D, add, average, concatenate, dot, multiply, subtract,
)
from .recurrent import GRU, LSTM, RNN, Bidirectional, GRUCell, LSTMCell, SimpleRNN, SimpleRNNCell
from .core_more import maximum_ as maximum
from .core_more import minimum_ as minimum

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
# issue 16: the other Keras 3 layers (core_more.py, convolutional_more.py).
__all__ += [
    "Activation", "ReLU", "LeakyReLU", "ELU", "Softmax", "PReLU", "Reshape", "Permute", "RepeatVector",
    "Identity", "Lambda", "InputLayer", "Concatenate", "Add", "Subtract", "Multiply", "Average", "Maximum",
    "Minimum", "Dot", "add", "subtract", "multiply", "average", "maximum", "minimum", "concatenate", "dot",
    "LayerNormalization", "GroupNormalization", "UnitNormalization", "Rescaling", "Normalization",
    "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling1D", "GlobalMaxPooling2D",
    "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalMaxPool1D", "GlobalMaxPool2D",
    "MaxPooling1D", "AveragePooling1D", "MaxPool1D", "AvgPool1D", "ZeroPadding2D", "Cropping2D", "UpSampling2D",
    "GaussianNoise", "GaussianDropout", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D",
    "Conv1D", "Conv2DTranspose", "DepthwiseConv2D", "SeparableConv2D", "Convolution1D",
    "RNN", "SimpleRNN", "SimpleRNNCell", "GRU", "GRUCell", "LSTM", "LSTMCell", "Bidirectional", "Masking",
]
GlobalAvgPool1D, GlobalAvgPool2D = GlobalAveragePooling1D, GlobalAveragePooling2D
GlobalMaxPool1D, GlobalMaxPool2D = GlobalMaxPooling1D, GlobalMaxPooling2D
MaxPool1D, AvgPool1D, Convolution1D = MaxPooling1D, AveragePooling1D, Conv1D
