"""``Embedding``: integer indices to dense vectors."""

from __future__ import annotations

from typing import Any, Callable

from .. import initializers
from .._gradtape import cast, gather
from ._base import Layer


class Embedding(Layer):
    """Looks rows up in an ``(input_dim, output_dim)`` table; with ``mask_zero`` the
    output carries the Keras mask ``inputs != 0`` (index 0 is padding). TF equivalent:
    ``tf.keras.layers.Embedding`` (initializer: uniform on ±0.05).

    >>> import gradtape as gt
    >>> gt.layers.Embedding(10, 3)(gt.constant([[1, 2]])).shape
    TensorShape([1, 2, 3])
    """

    _cast_inputs = False  # indices stay integers

    def __init__(
        self,
        input_dim: int,
        output_dim: int,
        embeddings_initializer: str | Callable[..., Any] = "uniform",
        mask_zero: bool = False,
        name: str | None = None,
        trainable: bool = True,
        dtype: Any = "float32",
        **kwargs: Any,
    ) -> None:
        super().__init__(name=name, trainable=trainable, **kwargs)
        if int(input_dim) <= 0 or int(output_dim) <= 0:
            raise ValueError(
                f"Both `input_dim` and `output_dim` should be positive, received input_dim={input_dim} "
                f"and output_dim={output_dim}"
            )
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        # mask_zero: index 0 is padding, and the output carries the mask `inputs != 0`.
        self.mask_zero = bool(mask_zero)
        self.supports_masking = self.mask_zero
        self.dtype = dtype
        self.embeddings: Any = None

    def build(self, input_shape: Any) -> None:
        self.embeddings = self.add_weight(
            "embeddings", (self.input_dim, self.output_dim), self.embeddings_initializer, dtype=self.dtype
        )
        self.built = True

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        if inputs.dtype.is_floating:
            inputs = cast(inputs, "int32")
        return gather(self.embeddings, inputs)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        """``inputs != 0`` with ``mask_zero``, else ``None``."""
        from .._gradtape import convert_to_tensor, not_equal

        if not self.mask_zero:
            return None
        return not_equal(cast(convert_to_tensor(inputs), "int64"), 0)
