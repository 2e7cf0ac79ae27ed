"""The ``Layer`` base: naming, lazy building, variable tracking."""

from __future__ import annotations

import collections
import contextlib
import inspect
import re
import warnings
import weakref
from collections.abc import Iterator
from typing import Any

from .. import _gradtape as _native
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


def _input_shape_kwarg(cls: str, kwargs: dict[str, Any]) -> tuple[Any, ...] | None:
    unknown = set(kwargs) - {"input_shape", "input_dim", "batch_input_shape", "batch_size"}
    if unknown:
        raise TypeError(f"{cls}.__init__() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    if kwargs.get("input_shape") is not None:
        return tuple(kwargs["input_shape"])
    if kwargs.get("batch_input_shape") is not None:
        return tuple(kwargs["batch_input_shape"])[1:]
    if kwargs.get("input_dim") is not None:
        return (int(kwargs["input_dim"]),)
    return None


# Keras masks: a layer's output tensor carries the boolean ``(batch, time)`` mask of the
# steps that are real (``_keras_mask`` in Keras; here a side table, as tensors take no
# attributes), keyed by the tensor's id and dropped when the tensor dies.
_MASKS: dict[int, tuple[weakref.ref, Any]] = {}


def _forget_mask(key: int) -> Any:
    return lambda _ref: _MASKS.pop(key, None)


def get_mask(t: Any) -> Any:
    """The Keras mask ``t`` carries (``None`` for none); a list of them for a list."""
    if isinstance(t, (list, tuple)):
        return [get_mask(e) for e in t]
    entry = _MASKS.get(id(t))
    return entry[1] if entry is not None and entry[0]() is t else None


def set_mask(t: Any, mask: Any) -> None:
    """Attaches ``mask`` to the tensor ``t`` (element by element for lists)."""
    if isinstance(t, (list, tuple)):
        masks = mask if isinstance(mask, (list, tuple)) else [mask] * len(t)
        for e, m in zip(t, masks):
            set_mask(e, m)
        return
    if mask is None:
        _MASKS.pop(id(t), None)
        return
    try:
        ref = weakref.ref(t, _forget_mask(id(t)))
    except TypeError:  # not a tensor (a Python value): no mask to carry
        return
    _MASKS[id(t)] = (ref, mask)


# Depth of the example runs that build layers from shapes (the functional API and a
# Sequential given its input shape call layers on zeros): no real data flows, so
# layers keep no state from them (a stateful RNN neither makes nor updates its states).
_example_runs = [0]


@contextlib.contextmanager
def example_run() -> Iterator[None]:
    _example_runs[0] += 1
    try:
        yield
    finally:
        _example_runs[0] -= 1


def in_example_run() -> bool:
    return _example_runs[0] > 0


def _has_mask(mask: Any) -> bool:
    if isinstance(mask, (list, tuple)):
        return any(_has_mask(m) for m in mask)
    return mask is not None


class Layer(Module):
    """Base class of layers. TF equivalent: ``tf.keras.layers.Layer`` (a ``gt.Module``).

    Subclasses create variables in ``build(input_shape)`` with ``add_weight`` and
    compute in ``call``; the layer builds itself on its first call. Its variables are
    the ones ``add_weight`` made, in that order, then those of the layers, modules and
    variables held in its attributes (Keras tracks these too).
    """

    # Keras 3 casts real inputs to the layer's dtype (``False``: inputs as given).
    _cast_inputs = True
    # Keras' ``supports_masking``: the layer passes its input's mask on to its output
    # (``compute_mask``); a layer whose ``call`` takes ``mask`` receives it.
    supports_masking = False
    # A deferred restore assigns a layer's variables once its build is done (not as
    # each attribute is set, as for a plain module).
    _RESTORE_ON_SETATTR = False

    def __init__(self, name: str | None = None, trainable: bool = True, **kwargs: Any) -> None:
        # Keras' names: made unique per base name, and not checked as identifiers.
        self._init_module(name or _unique_name(_snake(type(self).__name__)))
        self.trainable = trainable
        self.built = False
        self._weights: list[Variable] = []
        # The Keras 2 `input_shape=` / `input_dim=` (per example, no batch dimension).
        self._input_shape_arg = _input_shape_kwarg(type(self).__name__, kwargs)

    def add_weight(self, *args: Any, **kwargs: Any) -> Variable:
        """Creates a variable named ``{layer}/{name}:0``: ``add_weight(name, shape,
        initializer, trainable=True, dtype="float32")``, or Keras 3's
        ``add_weight(shape, initializer, dtype, trainable, name=...)`` (the initializer
        by name or object, Glorot uniform by default).
        TF equivalent: ``tf.keras.layers.Layer.add_weight``."""
        from .. import initializers

        names: tuple[str, ...] = ("name", "shape", "initializer", "trainable", "dtype")
        if not (args and isinstance(args[0], str)):
            names = ("shape", "initializer", "dtype", "trainable")
        if len(args) > len(names):
            raise TypeError(f"add_weight() takes at most {len(names)} positional arguments")
        for key, value in zip(names, args):
            if key in kwargs:
                raise TypeError(f"add_weight() got multiple values for argument {key!r}")
            kwargs[key] = value
        unknown = set(kwargs) - {"name", "shape", "initializer", "trainable", "dtype", "regularizer", "constraint"}
        if unknown:
            raise TypeError(f"add_weight() got an unexpected keyword argument {sorted(unknown)[0]!r}")
        shape = kwargs.get("shape")
        shape = () if shape is None else shape
        initializer = kwargs.get("initializer")
        init = initializers.get("glorot_uniform" if initializer is None else initializer)
        dtype = kwargs.get("dtype") or "float32"
        trainable = bool(kwargs.get("trainable", True))
        name = kwargs.get("name") or "variable"
        value = init(tuple(shape), dtype)
        v = Variable(value, trainable=trainable, name=f"{self.name}/{name}", dtype=dtype)
        self._weights.append(v)
        return v

    def build(self, input_shape: Any) -> None:
        self.built = True

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        from .. import cast, convert_to_tensor

        if getattr(inputs, "_gt_symbolic", False):  # a keras.Input: the functional API
            return inputs._gt_symbolic_call(self, args, kwargs)
        previous_mask = kwargs["mask"] if "mask" in kwargs else get_mask(inputs)
        if _has_mask(previous_mask) and "mask" not in kwargs and self._call_takes_mask():
            kwargs["mask"] = previous_mask
        if not isinstance(inputs, (list, tuple, dict)):
            inputs = convert_to_tensor(inputs)
            dtype = getattr(getattr(self, "dtype", None), "name", getattr(self, "dtype", None))
            if self._cast_inputs and isinstance(dtype, str) and inputs.dtype.name != dtype:
                if not (inputs.dtype.is_complex or inputs.dtype.name == "bool"):
                    inputs = cast(inputs, dtype)
        if not self.built:
            # In a trace, the static shape (None for sizes the signature leaves unknown),
            # as TF's build sees it.
            tensor = isinstance(inputs, _native.Tensor)
            self.build(_native._static_shape(inputs) if tensor else getattr(inputs, "shape", None))
            self.built = True
            # A checkpoint restored before these variables existed assigns them now.
            from ..train import _on_variables_created

            _on_variables_created()
        outputs = self.call(inputs, *args, **kwargs)
        if self.supports_masking:
            out_mask = self.compute_mask(inputs, previous_mask)
            if _has_mask(out_mask):
                set_mask(outputs, out_mask)
        elif _has_mask(previous_mask):
            warnings.warn(
                f"Layer '{self.name}' (of type {type(self).__name__}) was passed an input with a mask attached "
                "to it. However, this layer does not support masking and will therefore destroy the mask "
                "information. Downstream layers will not see the mask.",
                stacklevel=2,
            )
        return outputs

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        """The mask of the output for ``inputs`` carrying ``mask``: ``mask`` itself for a
        layer that supports masking, else ``None``. TF equivalent:
        ``tf.keras.layers.Layer.compute_mask``."""
        return mask if self.supports_masking else None

    def _call_takes_mask(self) -> bool:
        try:
            return "mask" in inspect.signature(self.call).parameters
        except (TypeError, ValueError):
            return False

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
