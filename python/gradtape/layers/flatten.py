"""``Flatten``: each example's features as one vector."""

from __future__ import annotations

import math
from typing import Any

from .._gradtape import reshape
from ._base import Layer
from .convolutional import _channels_last


class Flatten(Layer):
    """Reshapes ``[batch, d1, d2, ...]`` to ``[batch, d1 * d2 * ...]`` (``[batch]`` to
    ``[batch, 1]``). TF equivalent: ``tf.keras.layers.Flatten``.

    >>> import gradtape as gt
    >>> gt.layers.Flatten()(gt.ones([2, 3, 4])).shape
    TensorShape([2, 12])
    """

    def __init__(
        self, data_format: str | None = None, name: str | None = None, trainable: bool = True, **kwargs: Any
    ) -> None:
        super().__init__(name=name, trainable=trainable, **kwargs)
        _channels_last(data_format)

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        shape = tuple(inputs.shape)
        if len(shape) == 0:
            raise ValueError("Flatten expects inputs with a batch dimension, got a scalar")
        return reshape(inputs, [shape[0], math.prod(shape[1:])])
