"""``Dense``: ``activation(inputs @ kernel + bias)``."""

from __future__ import annotations

from typing import Any, Callable

from .. import activations, initializers
from .._gradtape import _dense, add
from ._base import Layer


class Dense(Layer):
    """A densely connected layer. TF equivalent: ``tf.keras.layers.Dense``.

    >>> import gradtape as gt
    >>> layer = gt.layers.Dense(2, activation="relu", name="d")
    >>> layer(gt.ones([1, 3])).shape
    TensorShape([1, 2])
    >>> [v.name for v in layer.trainable_variables]
    ['d/kernel:0', 'd/bias:0']
    """

    supports_masking = True  # the input's Keras mask passes on to the output

    def __init__(
        self,
        units: int,
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
        if int(units) <= 0:
            raise ValueError(f"Received an invalid value for `units`, expected a positive integer, got {units}")
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.dtype = dtype
        # Variables once built.
        self.kernel: Any = None
        self.bias: Any = None

    def build(self, input_shape: Any) -> None:
        if input_shape is None or len(input_shape) < 1:
            raise ValueError(f"Dense expects inputs with a last dimension, got shape {input_shape}")
        last = int(input_shape[-1])
        self.kernel = self.add_weight("kernel", (last, self.units), self.kernel_initializer, dtype=self.dtype)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.units,), self.bias_initializer, dtype=self.dtype)
        self.built = True

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        if inputs.ndim == 2:
            # The crate's Dense forward (`gradtape::nn::layers::dense`), fused with a
            # built-in activation; any other activation runs after it.
            name = next((n for f, n in _NATIVE_ACTIVATIONS if f is self.activation), None)
            y = _dense(inputs, self.kernel, self.bias if self.use_bias else None, name or "linear")
            return y if name is not None else self.activation(y)
        from .. import tensordot

        y = tensordot(inputs, self.kernel, [[inputs.ndim - 1], [0]])
        if self.use_bias:
            y = add(y, self.bias)
        return self.activation(y)


# The activations the crate's Dense applies itself (`gradtape::nn::Activation`).
_NATIVE_ACTIVATIONS = [
    (activations.linear, "linear"),
    (activations.get("relu"), "relu"),
    (activations.get("sigmoid"), "sigmoid"),
    (activations.get("tanh"), "tanh"),
    (activations.softmax, "softmax"),
]
