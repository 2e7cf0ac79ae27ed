"""``MaxPooling2D`` and ``AveragePooling2D`` over NHWC images."""

from __future__ import annotations

from typing import Any

from .._gradtape import avg_pool2d, max_pool2d
from ._base import Layer
from .convolutional import _channels_last, _pair, _padding


class _Pooling2D(Layer):
    _op: Any = None

    def __init__(
        self,
        pool_size: int | tuple[int, int] = (2, 2),
        strides: int | tuple[int, int] | None = None,
        padding: str = "valid",
        data_format: str | None = None,
        name: str | None = None,
        trainable: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(name=name, trainable=trainable, **kwargs)
        _channels_last(data_format)
        self.pool_size = _pair(pool_size, "pool_size")
        self.strides = self.pool_size if strides is None else _pair(strides, "strides")
        self.padding = _padding(padding)

    def build(self, input_shape: Any) -> None:
        if input_shape is None or len(input_shape) != 4:
            raise ValueError(
                f"Input 0 of layer {self.name!r} is incompatible with the layer: expected ndim=4, "
                f"found ndim={None if input_shape is None else len(input_shape)}. Full shape received: {input_shape}"
            )
        self.built = True

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        return type(self)._op(inputs, self.pool_size, self.strides, self.padding)

    def get_config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "trainable": self.trainable,
            "pool_size": self.pool_size,
            "strides": self.strides,
            "padding": self.padding.lower(),
        }


class MaxPooling2D(_Pooling2D):
    """Max pooling over NHWC inputs (``strides`` default to ``pool_size``).
    TF equivalent: ``tf.keras.layers.MaxPooling2D``.

    >>> import gradtape as gt
    >>> x = gt.reshape(gt.range(16.0), [1, 4, 4, 1])
    >>> gt.layers.MaxPooling2D()(x).numpy()[0, :, :, 0].tolist()
    [[5.0, 7.0], [13.0, 15.0]]
    """

    _op = staticmethod(max_pool2d)


class AveragePooling2D(_Pooling2D):
    """Average pooling over NHWC inputs (``strides`` default to ``pool_size``; with
    ``padding="same"`` a window averages its elements inside the input).
    TF equivalent: ``tf.keras.layers.AveragePooling2D``.

    >>> import gradtape as gt
    >>> x = gt.reshape(gt.range(16.0), [1, 4, 4, 1])
    >>> gt.layers.AveragePooling2D()(x).numpy()[0, :, :, 0].tolist()
    [[2.5, 4.5], [10.5, 12.5]]
    """

    _op = staticmethod(avg_pool2d)


MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D
