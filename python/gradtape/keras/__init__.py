"""The Keras surface of TF's training-loop tutorials. TF equivalent: ``tf.keras``
(Keras 3, with the Keras 2 names tutorials still use).

``layers`` is ``gt.layers``, ``optimizers`` is ``gt.optimizers``, ``initializers``
and ``activations`` are gradtape's; ``Model``, ``Sequential`` and ``Input`` add
Keras' models and its ``compile`` / ``fit`` loop, ``callbacks`` its callbacks; ``losses`` and ``metrics`` are
Keras 3's, with its numbers.

>>> import gradtape as gt
>>> inputs = gt.keras.Input(shape=(3,))
>>> outputs = gt.keras.layers.Dense(2)(inputs)
>>> model = gt.keras.Model(inputs, outputs)
>>> model(gt.ones([5, 3])).shape
TensorShape([5, 2])
"""

from .. import activations, initializers, layers, optimizers
from . import callbacks, losses, metrics
from ._model import Input, KerasTensor, Model, Sequential
from .callbacks import History

__all__ = [
    "History",
    "Input",
    "KerasTensor",
    "Model",
    "Sequential",
    "activations",
    "callbacks",
    "initializers",
    "layers",
    "losses",
    "metrics",
    "optimizers",
]
