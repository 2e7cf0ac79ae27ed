"""``Conv1D``, ``Conv2DTranspose``, ``DepthwiseConv2D`` and ``SeparableConv2D``
(channels last), as Keras 3 builds them (issue 16)."""

from __future__ import annotations

from typing import Any, Callable

from .. import activations, initializers
from .._gradtape import add
from ._base import Layer
from .convolutional import _channels_last, _pair, _padding


def _one(value: Any, what: str) -> int:
    if isinstance(value, (list, tuple)):
        if len(value) != 1:
            raise ValueError(f"The `{what}` argument must be a tuple of 1 integer. Received: {value!r}")
        value = value[0]
    if isinstance(value, (bool, str)) or int(value) <= 0:
        raise ValueError(f"The `{what}` argument must be a positive integer. Received: {value!r}")
    return int(value)


def _rank_check(layer: Layer, input_shape: Any, ndim: int) -> None:
    if input_shape is None or len(input_shape) != ndim:
        raise ValueError(
            f"Input 0 of layer {layer.name!r} is incompatible with the layer: expected ndim={ndim}, "
            f"found ndim={None if input_shape is None else len(input_shape)}. Full shape received: {input_shape}"
        )


class _Conv(Layer):
    def _common(self, activation: Any, use_bias: bool, kernel_initializer: Any, bias_initializer: Any,
                dtype: Any, data_format: Any) -> None:
        _channels_last(data_format)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.dtype = dtype
        self.kernel: Any = None
        self.bias: Any = None

    def _finish(self, y: Any) -> Any:
        if self.use_bias:
            y = add(y, self.bias)
        return self.activation(y)


def _filters(filters: Any) -> int:
    if isinstance(filters, bool) or int(filters) <= 0:
        raise ValueError(
            f"Invalid value for argument `filters`. Expected a strictly positive value. Received filters={filters}."
        )
    return int(filters)


class Conv1D(_Conv):
    """1-D convolution over ``(batch, steps, channels)``; kernel ``(kernel_size,
    in_channels, filters)``. TF equivalent: ``tf.keras.layers.Conv1D``.

    >>> import gradtape as gt
    >>> gt.layers.Conv1D(4, 3, padding="same")(gt.ones([2, 7, 3])).shape
    TensorShape([2, 7, 4])
    """

    def __init__(
        self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
        data_format: str | None = None, dilation_rate: Any = 1, groups: int = 1,
        activation: str | Callable[..., Any] | None = None, use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
        name: str | None = None, trainable: bool = True, dtype: Any = "float32", **kwargs: Any,
    ) -> None:
        super().__init__(name=name, trainable=trainable, **kwargs)
        if groups != 1:
            raise ValueError(f"gradtape's Conv1D supports groups=1 only, got groups={groups}")
        self.filters = _filters(filters)
        self.kernel_size = (_one(kernel_size, "kernel_size"),)
        self.strides = (_one(strides, "strides"),)
        self.dilation_rate = (_one(dilation_rate, "dilation_rate"),)
        p = str(padding).lower()
        self.causal = p == "causal"
        self.padding = "VALID" if self.causal else _padding(padding)
        self._common(activation, use_bias, kernel_initializer, bias_initializer, dtype, data_format)

    def build(self, input_shape: Any) -> None:
        _rank_check(self, input_shape, 3)
        shape = (self.kernel_size[0], int(input_shape[-1]), self.filters)
        self.kernel = self.add_weight("kernel", shape, self.kernel_initializer, dtype=self.dtype)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.filters,), self.bias_initializer, dtype=self.dtype)
        self.built = True

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        from .. import nn, pad

        x = inputs
        if self.causal:
            left = self.dilation_rate[0] * (self.kernel_size[0] - 1)
            x = pad(x, [[0, 0], [left, 0], [0, 0]])
        y = nn.conv1d(x, self.kernel, self.strides[0], self.padding, dilations=self.dilation_rate[0])
        return self._finish(y)


class Conv2DTranspose(_Conv):
    """Transposed 2-D convolution over NHWC inputs; kernel ``kernel_size + (filters,
    in_channels)``. TF equivalent: ``tf.keras.layers.Conv2DTranspose``.

    >>> import gradtape as gt
    >>> gt.layers.Conv2DTranspose(2, 3, strides=2, padding="same")(gt.ones([1, 4, 4, 3])).shape
    TensorShape([1, 8, 8, 2])
    """

    def __init__(
        self, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
        output_padding: Any = None, data_format: str | None = None, dilation_rate: Any = (1, 1),
        activation: str | Callable[..., Any] | None = None, use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
        name: str | None = None, trainable: bool = True, dtype: Any = "float32", **kwargs: Any,
    ) -> None:
        super().__init__(name=name, trainable=trainable, **kwargs)
        self.filters = _filters(filters)
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.strides = _pair(strides, "strides")
        self.output_padding: tuple[int, int] | None = None
        if output_padding is not None:
            op = _pair(output_padding, "output_padding", allow_zero=True)
            if any(p >= s for p, s in zip(op, self.strides)):
                raise ValueError(
                    "Strides must be greater than output padding. "
                    f"Received strides={self.strides}, output_padding={op}."
                )
            self.output_padding = op
        self.dilation_rate = _pair(dilation_rate, "dilation_rate")
        if self.dilation_rate != (1, 1) and self.strides != (1, 1):
            raise ValueError("Conv2DTranspose: strides > 1 with dilation_rate > 1 is not supported")
        self.padding = _padding(padding)
        self._common(activation, use_bias, kernel_initializer, bias_initializer, dtype, data_format)

    def build(self, input_shape: Any) -> None:
        _rank_check(self, input_shape, 4)
        shape = (*self.kernel_size, self.filters, int(input_shape[-1]))
        self.kernel = self.add_weight("kernel", shape, self.kernel_initializer, dtype=self.dtype)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.filters,), self.bias_initializer, dtype=self.dtype)
        self.built = True

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        from .. import nn

        def length(i: int) -> int:  # Keras' conv-transpose output length of spatial axis i
            n, s = int(inputs.shape[1 + i]), self.strides[i]
            k = (self.kernel_size[i] - 1) * self.dilation_rate[i] + 1
            if self.output_padding is None:
                return n * s if self.padding == "SAME" else n * s + max(k - s, 0)
            pad = k // 2 if self.padding == "SAME" else 0
            return (n - 1) * s + k - 2 * pad + self.output_padding[i]

        out = [int(inputs.shape[0]), length(0), length(1), self.filters]
        y = nn.conv2d_transpose(inputs, self.kernel, out, list(self.strides), padding=self.padding,
                                dilations=list(self.dilation_rate))
        return self._finish(y)


class DepthwiseConv2D(_Conv):
    """Depthwise 2-D convolution: each input channel convolved with its own
    ``depth_multiplier`` filters; kernel ``kernel_size + (in_channels,
    depth_multiplier)``. TF equivalent: ``tf.keras.layers.DepthwiseConv2D``."""

    def __init__(
        self, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid", depth_multiplier: int = 1,
        data_format: str | None = None, dilation_rate: Any = (1, 1),
        activation: str | Callable[..., Any] | None = None, use_bias: bool = True,
        depthwise_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
        name: str | None = None, trainable: bool = True, dtype: Any = "float32", **kwargs: Any,
    ) -> None:
        super().__init__(name=name, trainable=trainable, **kwargs)
        if isinstance(depth_multiplier, bool) or int(depth_multiplier) <= 0:
            raise ValueError(f"Invalid value for argument `depth_multiplier`: {depth_multiplier}")
        self.depth_multiplier = int(depth_multiplier)
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.strides = _pair(strides, "strides")
        self.dilation_rate = _pair(dilation_rate, "dilation_rate")
        self.padding = _padding(padding)
        self._common(activation, use_bias, depthwise_initializer, bias_initializer, dtype, data_format)

    def build(self, input_shape: Any) -> None:
        _rank_check(self, input_shape, 4)
        c = int(input_shape[-1])
        shape = (*self.kernel_size, c, self.depth_multiplier)
        self.kernel = self.add_weight("kernel", shape, self.kernel_initializer, dtype=self.dtype)
        if self.use_bias:
            self.bias = self.add_weight("bias", (c * self.depth_multiplier,), self.bias_initializer, dtype=self.dtype)
        self.built = True

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        from .. import nn

        y = nn.depthwise_conv2d(inputs, self.kernel, [1, *self.strides, 1], self.padding,
                                dilations=list(self.dilation_rate))
        return self._finish(y)


class SeparableConv2D(_Conv):
    """A depthwise convolution then a 1x1 convolution to ``filters`` channels.
    TF equivalent: ``tf.keras.layers.SeparableConv2D``."""

    def __init__(
        self, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
        data_format: str | None = None, dilation_rate: Any = (1, 1), depth_multiplier: int = 1,
        activation: str | Callable[..., Any] | None = None, use_bias: bool = True,
        depthwise_initializer: Any = "glorot_uniform", pointwise_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros", name: str | None = None, trainable: bool = True,
        dtype: Any = "float32", **kwargs: Any,
    ) -> None:
        super().__init__(name=name, trainable=trainable, **kwargs)
        self.filters = _filters(filters)
        self.depth_multiplier = int(depth_multiplier)
        if self.depth_multiplier <= 0:
            raise ValueError(f"Invalid value for argument `depth_multiplier`: {depth_multiplier}")
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.strides = _pair(strides, "strides")
        self.dilation_rate = _pair(dilation_rate, "dilation_rate")
        self.padding = _padding(padding)
        self._common(activation, use_bias, depthwise_initializer, bias_initializer, dtype, data_format)
        self.pointwise_initializer = initializers.get(pointwise_initializer)
        self.depthwise_kernel: Any = None
        self.pointwise_kernel: Any = None

    def build(self, input_shape: Any) -> None:
        _rank_check(self, input_shape, 4)
        c = int(input_shape[-1])
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", (*self.kernel_size, c, self.depth_multiplier), self.kernel_initializer,
            dtype=self.dtype)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", (1, 1, c * self.depth_multiplier, self.filters), self.pointwise_initializer,
            dtype=self.dtype)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.filters,), self.bias_initializer, dtype=self.dtype)
        self.built = True

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        from .. import nn

        y = nn.depthwise_conv2d(inputs, self.depthwise_kernel, [1, *self.strides, 1], self.padding,
                                dilations=list(self.dilation_rate))
        y = nn.conv2d(y, self.pointwise_kernel, strides=1, padding="VALID")
        return self._finish(y)
