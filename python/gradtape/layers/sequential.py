"""``Sequential``: layers applied in order."""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any

from .._gradtape import Variable as _NativeVariable
from ._base import Layer


def _accepts_training(layer: Layer) -> bool:
    try:
        return "training" in inspect.signature(layer.call).parameters
    except (TypeError, ValueError):
        return False


class Sequential(Layer):
    """A stack of layers. TF equivalent: ``tf.keras.Sequential``.

    >>> import gradtape as gt
    >>> model = gt.layers.Sequential([gt.layers.Dense(4, activation="tanh"), gt.layers.Dense(1)])
    >>> model(gt.ones([2, 3])).shape
    TensorShape([2, 1])
    >>> len(model.trainable_variables)
    4
    """

    def __init__(self, layers: Iterable[Layer] | None = None, name: str | None = None) -> None:
        super().__init__(name=name)
        self.layers = list(layers or [])

    def add(self, layer: Layer) -> None:
        """Appends ``layer``. TF equivalent: ``tf.keras.Sequential.add``."""
        self.layers.append(layer)

    def build(self, input_shape: Any) -> None:
        self.built = True

    def call(self, inputs: Any, training: bool | None = None, **kwargs: Any) -> Any:
        x = inputs
        for layer in self.layers:
            if training is not None and _accepts_training(layer):
                x = layer(x, training=training)
            else:
                x = layer(x)
        return x

    @property
    def variables(self) -> list[_NativeVariable]:  # type: ignore[override]
        return [v for layer in self.layers for v in layer.variables]

    weights = variables

    @property
    def trainable_variables(self) -> list[_NativeVariable]:  # type: ignore[override]
        return [v for layer in self.layers for v in layer.trainable_variables]

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self) -> list[_NativeVariable]:  # type: ignore[override]
        return [v for layer in self.layers for v in layer.non_trainable_variables]
