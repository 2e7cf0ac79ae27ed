"""``Dropout``: ``gt.nn.dropout`` in training, the identity otherwise."""

from __future__ import annotations

from typing import Any

from .._gradtape import dropout
from ._base import Layer


class Dropout(Layer):
    """Zeros a fraction ``rate`` of the inputs and scales the rest by ``1 / (1 - rate)``
    when called with ``training=True``; passes inputs through otherwise. TF equivalent:
    ``tf.keras.layers.Dropout`` (gradtape's random stream).

    >>> import gradtape as gt
    >>> layer = gt.layers.Dropout(0.5, seed=1)
    >>> layer(gt.ones([4])).numpy().tolist()
    [1.0, 1.0, 1.0, 1.0]
    >>> sorted(set(layer(gt.ones([1000]), training=True).numpy().tolist()))
    [0.0, 2.0]
    """

    supports_masking = True  # the input's Keras mask passes on to the output

    def __init__(
        self,
        rate: float,
        noise_shape: Any = None,
        seed: int | None = None,
        name: str | None = None,
        trainable: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(name=name, trainable=trainable, **kwargs)
        if isinstance(rate, bool) or not 0 <= float(rate) <= 1:
            raise ValueError(
                "Invalid value received for argument `rate`. Expected a float value between 0 and 1. "
                f"Received: rate={rate}"
            )
        self.rate = float(rate)
        self.noise_shape = noise_shape
        self.seed = seed

    def call(self, inputs: Any, training: bool | None = None, **kwargs: Any) -> Any:
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:
            from .._gradtape import zeros_like

            return zeros_like(inputs)
        return dropout(inputs, rate=self.rate, noise_shape=self.noise_shape, seed=self.seed)

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, "trainable": self.trainable, "rate": self.rate, "seed": self.seed}
