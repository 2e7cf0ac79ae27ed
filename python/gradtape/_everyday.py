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
    ``concat`` / ``scatter`` / ``size``. Works eagerly, in a traced ``gt.function``
    whose loop is a Python loop (the writes are part of the trace), and as a loop
    variable of a graph loop (an AutoGraph ``for i in gt.range(n)`` / ``while`` on a
    tensor, or ``gt.while_loop``): there it is carried as one tensor of its elements
    stacked, written and read at tensor indices, growing when ``dynamic_size``, and
    differentiable (gradients flow from ``stack()`` / ``read()`` to what was written).

    >>> import gradtape as gt
    >>> ta = gt.TensorArray(gt.float32, size=0, dynamic_size=True)
    >>> for i in range(3):
    ...     ta = ta.write(i, float(i) * 2)
    >>> ta.stack().numpy().tolist()
    [0.0, 2.0, 4.0]
    """

    _cell: dict[str, Any]

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
        self._dynamic = bool(dynamic_size)
        self._element_shape = None if element_shape is None else _static_shape(element_shape)
        # Graph form (`_buf` not None): the elements stacked in one tensor; `_size` is
        # the declared size (a Python int or an int32 tensor).
        self._buf: Tensor | None = None
        self._n: Tensor | None = None  # graph form: rows written (the highest index + 1)
        self._size: Any = 0
        if isinstance(size, Tensor) and _native._is_symbolic(size):
            self._items: list[Tensor | None] = []
            self._size = cast(size, "int32")
            self._buf = self._empty_buffer()
            self._n = convert_to_tensor(0, dtype="int32")
            return
        n = 0 if size is None else int(size)
        if n < 0:
            raise ValueError(f"TensorArray size must be non-negative, got {n}")
        self._items = [None] * n
        self._size = n

    # -- the graph form ------------------------------------------------------------

    def _empty_buffer(self) -> Tensor:
        from . import zeros

        return zeros((0, *(self._element_shape or ())), dtype=self.dtype)

    def _to_graph_form(self) -> None:
        """Switches to the stacked-tensor form (for tensor indices and graph loops)."""
        if self._buf is not None:
            return
        n = len(self._items)
        self._size = n
        self._n = convert_to_tensor(n, dtype="int32")
        if self._element_shape is None:
            self._buf = self._empty_buffer()  # nothing written: a [0] placeholder
        else:
            self._buf = stack(self._all()) if n else self._empty_buffer()
        self._items = []

    def _loop_tensors(self) -> list[Tensor]:
        """What a graph loop or branch carries: the buffer and the rows written."""
        self._to_graph_form()
        assert self._buf is not None and self._n is not None
        return [self._buf, self._n]

    def _from_loop_tensors(self, buf: Tensor, n: Tensor) -> TensorArray:
        """The array a graph loop's condition or body (or its result, or a branch's)
        sees, carried as ``buf`` and ``n``; it shares this array's shape cell."""
        out = TensorArray.__new__(TensorArray)
        out.dtype = self.dtype
        out._dynamic = self._dynamic
        out._items = []
        out._size = self._size
        out._buf = buf
        out._n = n
        out._cell = self._shape_cell()
        out._element_shape = self._known_shape()
        return out

    def _shape_cell(self) -> dict[str, Any]:
        # Shared by the arrays a graph loop makes from one: the element shape the
        # body's first write sets is known to the loop's result too.
        cell = self.__dict__.get("_cell")
        if cell is None:
            cell = {"element_shape": self._element_shape}
            self._cell = cell
        return cell

    def _known_shape(self) -> tuple | None:
        if self._element_shape is None and "_cell" in self.__dict__:
            self._element_shape = self._cell["element_shape"]
        return self._element_shape

    def _set_shape(self, shape: tuple) -> None:
        self._element_shape = shape
        if "_cell" in self.__dict__ and self._cell["element_shape"] is None:
            self._cell["element_shape"] = shape

    def _rows(self) -> Tensor:
        """The buffer as [rows, *element_shape] (it enters a loop as [0] when nothing
        was written before)."""
        from . import reshape

        assert self._buf is not None
        shape = self._known_shape()
        if shape is None:
            return self._buf
        return reshape(self._buf, [-1, *shape])

    def _size_tensor(self) -> Tensor:
        return self._size if isinstance(self._size, Tensor) else convert_to_tensor(int(self._size), dtype="int32")

    def _grown(self, rows: Tensor, need: Tensor) -> Tensor:
        """``rows`` with zero rows appended up to ``need`` rows."""
        from . import expand_dims, maximum, range as range_, shape, zeros, zeros_like

        have = cast(shape(rows)[0], "int32")
        pad = maximum(need - have, 0)
        zero = expand_dims(zeros(tuple(rows.shape[1:]), dtype=self.dtype), 0)
        return concat([rows, gather(zero, zeros_like(range_(pad)))], axis=0)

    def _graph_write(self, index: Tensor, v: Tensor) -> None:
        from . import equal, expand_dims, maximum, range as range_, reshape, shape, where

        assert self._n is not None
        rows = self._rows()
        i = cast(index, "int32")
        self._n = maximum(self._n, i + 1) if self._dynamic else maximum(self._n, self._size_tensor())
        rows = self._grown(rows, maximum(self._n, self._size_tensor()))
        # The size is the declared one or the rows written, whichever is larger; `_n`
        # travels with the buffer through loops and branches (a tensor of this scope
        # could not leave them otherwise).
        mask = reshape(equal(range_(cast(shape(rows)[0], "int32")), i), [-1, *([1] * len(v.shape))])
        self._buf = where(mask, expand_dims(v, 0), rows)

    # -- the eager (list) form -----------------------------------------------------

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
        if self._buf is None and isinstance(index, Tensor) and _native._is_symbolic(index):
            self._to_graph_form()
        v = convert_to_tensor(value, dtype=self.dtype)
        shape = tuple(v.shape)
        known = self._known_shape()
        if known is None:
            self._set_shape(shape)
        elif known != shape:
            raise ValueError(
                f"Could not write to TensorArray index {index}: the element shape {shape} is not the array's "
                f"{known}"
            )
        if self._buf is not None:
            # Functional in graph form, as TF's graph TensorArray: a new array (the two
            # branches of an `if` each write their own).
            assert self._n is not None
            out = self._from_loop_tensors(self._buf, self._n)
            out._graph_write(convert_to_tensor(index), v)
            return out
        target = self._traced_copy()
        i = target._check_index(index, writing=True)
        target._items[i] = v
        return target

    def _traced_copy(self) -> TensorArray:
        """In a trace, a list-form write makes a new array (as TF's graph arrays do:
        the two branches of a ``gt.cond`` each write their own); eagerly it writes in
        place, as TF's eager arrays do."""
        if not _native._is_tracing():
            return self
        out = TensorArray.__new__(TensorArray)
        out.__dict__.update(self.__dict__)
        out._items = list(self._items)
        return out

    def read(self, index: Any, name: str | None = None) -> Tensor:
        if self._buf is None and isinstance(index, Tensor) and _native._is_symbolic(index):
            if self._element_shape is None:
                raise _native_error(_UNWRITTEN)
            self._to_graph_form()
        if self._buf is not None:
            if self._known_shape() is None:
                raise _native_error(_UNWRITTEN)
            rows = self._grown(self._rows(), self.size())
            return gather(rows, cast(convert_to_tensor(index), "int32"))
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
        if self._buf is not None:
            if self._known_shape() is None:
                return self._buf
            return self._grown(self._rows(), self.size())
        items = self._all()
        if not items:
            from . import zeros

            return zeros((0, *(self._element_shape or ())), dtype=self.dtype)
        return stack(items)

    def gather(self, indices: Any, name: str | None = None) -> Tensor:
        return gather(self.stack(), convert_to_tensor(indices))

    def concat(self, name: str | None = None) -> Tensor:
        """The elements joined along their first axis."""
        if self._buf is not None:
            from . import reshape

            shape = self._known_shape() or ()
            return reshape(self.stack(), [-1, *shape[1:]])
        return concat(self._all(), axis=0)

    def unstack(self, value: Any, name: str | None = None) -> TensorArray:
        """Writes the rows of ``value`` as the elements."""
        value = convert_to_tensor(value, dtype=self.dtype)
        if self._buf is not None or _native._is_symbolic(value):
            self._to_graph_form()
            self._set_shape(tuple(value.shape[1:]))
            from . import shape

            return self._from_loop_tensors(value, cast(shape(value)[0], "int32"))
        rows = unstack(value)
        if len(rows) > len(self._items) and not self._dynamic and self._items:
            raise ValueError(f"Could not unstack {len(rows)} rows into a TensorArray of size {len(self._items)}")
        out = self._traced_copy()
        out._items = [*rows, *self._items[len(rows) :]]
        if rows:
            out._element_shape = tuple(rows[0].shape)
        return out

    def scatter(self, indices: Any, value: Any, name: str | None = None) -> TensorArray:
        idx = convert_to_tensor(indices)
        rows = unstack(convert_to_tensor(value))
        if self._buf is not None or _native._is_symbolic(idx):
            out = self
            for k, row in enumerate(rows):
                out = out.write(idx[k], row)
            return out
        out = self
        for i, row in zip([int(i) for i in idx.numpy().tolist()], rows):
            out = out.write(i, row)
        return out

    def size(self, name: str | None = None) -> Tensor:
        if self._buf is not None:
            from . import maximum

            assert self._n is not None
            return maximum(self._size_tensor(), self._n)
        return convert_to_tensor(len(self._items), dtype="int32")

    @property
    def element_shape(self) -> Any:
        from ._shape import TensorShape

        return TensorShape(self._known_shape())

    def close(self, name: str | None = None) -> None:
        self._items = []
        self._buf = None
        self._n = None
        self._size = 0


_UNWRITTEN = "Could not read from a TensorArray: no element was written and no element_shape given"


def _static_shape(shape: Any) -> tuple | None:
    dims = getattr(shape, "as_list", None)
    dims = dims() if callable(dims) else shape
    if dims is None:
        return None
    dims = tuple(dims)
    if any(d is None for d in dims):
        return None  # a partly known shape: learnt from the first write
    return tuple(int(d) for d in dims)


def _native_error(msg: str) -> Exception:
    from .errors import InvalidArgumentError

    return InvalidArgumentError(msg)
