"""The ``Layer`` base: naming, lazy building, variable tracking."""

from __future__ import annotations

import collections
import re
from collections.abc import Sequence
from typing import Any, Callable

from .._gradtape import Variable as _NativeVariable
from .._module import Module, _is_module, _is_variable
from .._variable import Variable

_name_counts: collections.Counter[str] = collections.Counter()


def _unique_name(base: str) -> str:
    n = _name_counts[base]
    _name_counts[base] += 1
    return base if n == 0 else f"{base}_{n}"


def _snake(name: str) -> str:
    # Keras' rule: "Conv2D" -> "conv2d", "MaxPooling2D" -> "max_pooling2d".
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


class Layer(Module):
    """Base class of layers. TF equivalent: ``tf.keras.layers.Layer`` (a ``gt.Module``).

    Subclasses create variables in ``build(input_shape)`` with ``add_weight`` and
    compute in ``call``; the layer builds itself on its first call. Its variables are
    the ones ``add_weight`` made, in that order, then those of the layers, modules and
    variables held in its attributes (Keras tracks these too).
    """

    def __init__(self, name: str | None = None, trainable: bool = True) -> None:
        # Keras' names: made unique per base name, and not checked as identifiers.
        self._init_module(name or _unique_name(_snake(type(self).__name__)))
        self.trainable = trainable
        self.built = False
        self._weights: list[Variable] = []

    def add_weight(
        self,
        name: str,
        shape: Sequence[int],
        initializer: Callable[..., Any],
        trainable: bool = True,
        dtype: Any = "float32",
    ) -> Variable:
        """Creates a variable named ``{layer}/{name}:0``."""
        value = initializer(tuple(shape), dtype)
        v = Variable(value, trainable=trainable, name=f"{self.name}/{name}", dtype=dtype)
        self._weights.append(v)
        return v

    def build(self, input_shape: Any) -> None:
        self.built = True

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        from .. import convert_to_tensor

        if not isinstance(inputs, (list, tuple, dict)):
            inputs = convert_to_tensor(inputs)
        if not self.built:
            self.build(getattr(inputs, "shape", None))
            self.built = True
        return self.call(inputs, *args, **kwargs)

    @property
    def variables(self) -> list[_NativeVariable]:  # type: ignore[override]
        """All variables of the layer (empty before it is built)."""
        out: list[_NativeVariable] = list(self._weights)
        seen = {id(v) for v in out}
        for x in self._flatten(predicate=lambda x: _is_variable(x) or _is_module(x), recursive=False):
            for v in x.variables if _is_module(x) else [x]:
                if id(v) not in seen:
                    seen.add(id(v))
                    out.append(v)
        return out

    weights = variables

    @property
    def trainable_variables(self) -> list[_NativeVariable]:  # type: ignore[override]
        """The trainable variables (empty before the layer is built)."""
        return [v for v in self.variables if v.trainable] if self.trainable else []

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self) -> list[_NativeVariable]:  # type: ignore[override]
        if not self.trainable:
            return self.variables
        return [v for v in self.variables if not v.trainable]

    non_trainable_weights = non_trainable_variables
