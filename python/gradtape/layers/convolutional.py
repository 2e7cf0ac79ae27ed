"""``Conv2D``: ``activation(conv2d(inputs, kernel) + bias)`` over NHWC images."""

from __future__ import annotations

from typing import Any, Callable

from .. import activations, initializers
from .._gradtape import add
from .._gradtape import conv2d as _conv2d
from ._base import Layer


def _pair(value: Any, what: str, allow_zero: bool = False) -> tuple[int, int]:
    """Keras' int-or-pair arguments (``kernel_size``, ``strides``, ``dilation_rate``;
    ``output_padding`` with ``allow_zero``)."""
    if isinstance(value, (bool, str)):
        raise TypeError(f"`{what}` must be an int or a tuple of 2 ints, got {value!r}")
    if isinstance(value, int):
        values: tuple[int, ...] = (value, value)
    else:
        try:
            values = tuple(int(v) for v in value)
        except TypeError:
            raise TypeError(f"`{what}` must be an int or a tuple of 2 ints, got {value!r}") from None
    if len(values) != 2:
        raise ValueError(f"The `{what}` argument must be a tuple of 2 integers. Received: {value!r}")
    if any(v < 0 if allow_zero else v <= 0 for v in values):
        kind = "non-negative" if allow_zero else "positive"
        raise ValueError(f"The `{what}` argument must be a tuple of 2 {kind} integers. Received: {value!r}")
    return values[0], values[1]


def _padding(padding: str) -> str:
    p = str(padding).lower()
    if p not in ("valid", "same"):
        raise ValueError(f"The `padding` argument must be one of 'valid', 'same'. Received: {padding!r}")
    return p.upper()


def _channels_last(data_format: str | None) -> None:
    if data_format not in (None, "channels_last"):
        raise ValueError(
            f"gradtape's convolution and pooling layers support data_format='channels_last' only, got {data_format!r}"
        )


class Conv2D(Layer):
    """2-D convolution layer over NHWC inputs. TF equivalent: ``tf.keras.layers.Conv2D``.

    The kernel has shape ``kernel_size + (in_channels, filters)``; variables are named
    ``{name}/kernel:0`` and ``{name}/bias:0``.

    >>> import gradtape as gt
    >>> conv = gt.layers.Conv2D(4, 3, padding="same", activation="relu", name="c")
    >>> conv(gt.ones([2, 5, 5, 3])).shape
    TensorShape([2, 5, 5, 4])
    >>> [tuple(v.shape) for v in conv.trainable_variables]
    [(3, 3, 3, 4), (4,)]
    """

    def __init__(
        self,
        filters: int,
        kernel_size: int | tuple[int, int],
        strides: int | tuple[int, int] = (1, 1),
        padding: str = "valid",
        data_format: str | None = None,
        dilation_rate: int | tuple[int, int] = (1, 1),
        groups: int = 1,
        activation: str | Callable[..., Any] | None = None,
        use_bias: bool = True,
        kernel_initializer: str | Callable[..., Any] = "glorot_uniform",
        bias_initializer: str | Callable[..., Any] = "zeros",
        name: str | None = None,
        trainable: bool = True,
        dtype: Any = "float32",
        **kwargs: Any,
    ) -> None:
        super().__init__(name=name, trainable=trainable, **kwargs)
        if isinstance(filters, bool) or int(filters) <= 0:
            raise ValueError(
                f"Invalid value for argument `filters`. Expected a strictly positive value. Received filters={filters}."
            )
        if groups != 1:
            raise ValueError(f"gradtape's Conv2D supports groups=1 only, got groups={groups}")
        _channels_last(data_format)
        self.filters = int(filters)
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.strides = _pair(strides, "strides")
        self.padding = _padding(padding)
        self.dilation_rate = _pair(dilation_rate, "dilation_rate")
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.dtype = dtype
        self.kernel: Any = None
        self.bias: Any = None

    def build(self, input_shape: Any) -> None:
        if input_shape is None or len(input_shape) != 4:
            raise ValueError(
                f"Input 0 of layer {self.name!r} is incompatible with the layer: expected ndim=4, "
                f"found ndim={None if input_shape is None else len(input_shape)}. Full shape received: {input_shape}"
            )
        channels = int(input_shape[-1])
        shape = (*self.kernel_size, channels, self.filters)
        self.kernel = self.add_weight("kernel", shape, self.kernel_initializer, dtype=self.dtype)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.filters,), self.bias_initializer, dtype=self.dtype)
        self.built = True

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        y = _conv2d(inputs, self.kernel, strides=self.strides, padding=self.padding, dilations=self.dilation_rate)
        if self.use_bias:
            y = add(y, self.bias)
        return self.activation(y)

    def get_config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "trainable": self.trainable,
            "filters": self.filters,
            "kernel_size": self.kernel_size,
            "strides": self.strides,
            "padding": self.padding.lower(),
            "dilation_rate": self.dilation_rate,
            "use_bias": self.use_bias,
        }
