"""Small pieces real TF scripts touch: ``gt.device``, ``gt.init_scope``,
``gt.py_function``, ``gt.TensorArray``."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any, Callable

from . import _gradtape as _native
from ._gradtape import Tensor, cast, concat, convert_to_tensor, gather, stack, unstack

_DEVICE = re.compile(
    r"^(/job:[\w-]+)?(/replica:\d+)?(/task:\d+)?(/?(device:)?(CPU|GPU|TPU)(:(\d+|\*))?)?$", re.IGNORECASE
)


@contextlib.contextmanager
def device(device_name: str | None) -> Iterator[None]:
    """Places the ops of the block on a device. gradtape computes on the CPU only,
    so any valid device name (``"/CPU:0"``, ``"/GPU:0"``, ``"cpu"``, ...) places on the
    CPU, as TF's soft placement does on a machine without a GPU.
    TF equivalent: ``tf.device``."""
    if device_name is not None:
        if not isinstance(device_name, str):
            raise TypeError(f"device_name must be a string or None, got {type(device_name).__name__}")
        if device_name and not _DEVICE.match(device_name):
            raise ValueError(f"Unknown attribute: '{device_name}' in '{device_name}'")
    yield


@contextlib.contextmanager
def init_scope() -> Iterator[None]:
    """Lifts the block out of a ``gt.function`` trace: its ops run eagerly, once, when
    the function is traced (variable creation, one-time set-up). Outside a trace it
    changes nothing. TF equivalent: ``tf.init_scope``."""
    state = _native._suspend_tracing()
    try:
        yield
    finally:
        _native._resume_tracing(state)


def py_function(func: Callable[..., Any], inp: Any, Tout: Any, name: str | None = None) -> Any:
    """Runs the Python function ``func`` on eager tensors: now when eager; on every
    call of the graph inside a ``gt.function`` (it also runs once while tracing, on the
    trace's example values, to learn its outputs' shapes). Not differentiable.
    TF equivalent: ``tf.py_function``."""
    del name
    inputs = [convert_to_tensor(x) for x in (inp if isinstance(inp, (list, tuple)) else [inp])]
    single = not isinstance(Tout, (list, tuple))
    touts = [Tout] if single else list(Tout)

    def callback(tensors: list[Tensor]) -> list[Tensor]:
        out = func(*tensors)
        outs = [out] if single else list(out if isinstance(out, (list, tuple)) else [out])
        if len(outs) != len(touts):
            raise ValueError(f"py_function: func returned {len(outs)} values, Tout lists {len(touts)}")
        return [cast(convert_to_tensor(o), t) if t is not None else convert_to_tensor(o) for o, t in zip(outs, touts)]

    outs = _native._py_call(callback, inputs)
    return outs[0] if single else list(outs)


class TensorArray:
    """A list of tensors written by index, then stacked. TF equivalent:
    ``tf.TensorArray``: ``write`` / ``read`` / ``stack`` / ``unstack`` / ``gather`` /
    ``concat`` / ``size``. Works eagerly and in a traced ``gt.function`` whose loop
    is a Python loop (the writes are part of the trace).

    >>> import gradtape as gt
    >>> ta = gt.TensorArray(gt.float32, size=0, dynamic_size=True)
    >>> for i in range(3):
    ...     ta = ta.write(i, float(i) * 2)
    >>> ta.stack().numpy().tolist()
    [0.0, 2.0, 4.0]
    """

    def __init__(
        self,
        dtype: Any,
        size: Any = None,
        dynamic_size: bool | None = None,
        clear_after_read: bool | None = None,
        tensor_array_name: str | None = None,
        handle: Any = None,
        flow: Any = None,
        infer_shape: bool = True,
        element_shape: Any = None,
        colocate_with_first_write_call: bool = True,
        name: str | None = None,
    ) -> None:
        self.dtype = dtype
        n = 0 if size is None else int(size)
        if n < 0:
            raise ValueError(f"TensorArray size must be non-negative, got {n}")
        self._items: list[Tensor | None] = [None] * n
        self._dynamic = bool(dynamic_size)
        self._element_shape = None if element_shape is None else tuple(element_shape)

    def _check_index(self, index: Any, writing: bool) -> int:
        i = int(index)
        if i < 0:
            raise _native_error(f"Tried to access element {i} of a TensorArray (a negative index)")
        if i >= len(self._items):
            if writing and self._dynamic:
                self._items.extend([None] * (i + 1 - len(self._items)))
            else:
                raise _native_error(
                    f"Tried to {'write' if writing else 'read'} element {i} of a TensorArray of size {len(self._items)}"
                )
        return i

    def write(self, index: Any, value: Any, name: str | None = None) -> TensorArray:
        """Writes ``value`` at ``index``; returns the array (use the result, as in TF)."""
        i = self._check_index(index, writing=True)
        v = convert_to_tensor(value, dtype=self.dtype)
        shape = tuple(v.shape)
        if self._element_shape is None:
            self._element_shape = shape
        elif self._element_shape != shape:
            raise ValueError(
                f"Could not write to TensorArray index {i}: the element shape {shape} is not the array's "
                f"{self._element_shape}"
            )
        self._items[i] = v
        return self

    def read(self, index: Any, name: str | None = None) -> Tensor:
        i = self._check_index(index, writing=False)
        item = self._items[i]
        if item is None:
            from . import zeros

            if self._element_shape is None:
                raise _native_error(f"Could not read index {i} of a TensorArray: it was never written")
            return zeros(self._element_shape, dtype=self.dtype)
        return item

    def _all(self) -> list[Tensor]:
        return [self.read(i) for i in range(len(self._items))]

    def stack(self, name: str | None = None) -> Tensor:
        """The elements stacked on a new first axis."""
        items = self._all()
        if not items:
            from . import zeros

            return zeros((0, *(self._element_shape or ())), dtype=self.dtype)
        return stack(items)

    def gather(self, indices: Any, name: str | None = None) -> Tensor:
        return gather(self.stack(), convert_to_tensor(indices))

    def concat(self, name: str | None = None) -> Tensor:
        """The elements joined along their first axis."""
        return concat(self._all(), axis=0)

    def unstack(self, value: Any, name: str | None = None) -> TensorArray:
        """Writes the rows of ``value`` as the elements."""
        rows = unstack(convert_to_tensor(value, dtype=self.dtype))
        if len(rows) > len(self._items) and not self._dynamic and self._items:
            raise ValueError(f"Could not unstack {len(rows)} rows into a TensorArray of size {len(self._items)}")
        self._items = [*rows, *self._items[len(rows) :]]
        if rows:
            self._element_shape = tuple(rows[0].shape)
        return self

    def scatter(self, indices: Any, value: Any, name: str | None = None) -> TensorArray:
        for i, row in zip(
            [int(i) for i in convert_to_tensor(indices).numpy().tolist()], unstack(convert_to_tensor(value))
        ):
            self.write(i, row)
        return self

    def size(self, name: str | None = None) -> Tensor:
        return convert_to_tensor(len(self._items), dtype="int32")

    @property
    def element_shape(self) -> Any:
        from ._shape import TensorShape

        return TensorShape(self._element_shape)

    def close(self, name: str | None = None) -> None:
        self._items = []


def _native_error(msg: str) -> Exception:
    from .errors import InvalidArgumentError

    return InvalidArgumentError(msg)
