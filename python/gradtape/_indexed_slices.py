"""``gt.IndexedSlices``: TF's sparse representation of a gradient's rows.

``tape.gradient`` returns one where TF does: for a source whose gradient comes only
from rows gathered along axis 0 (``gt.gather`` with ``axis=0`` and no ``batch_dims``,
``gt.nn.embedding_lookup``, ``gt.gather_nd`` with one index per row), through
identities and variable reads. Several of them add up by concatenation; with a dense
gradient, densely. Anything that takes a tensor densifies one (``gt.convert_to_tensor``
and every op: the rows scatter-added), as TF converts it.
"""

from __future__ import annotations

import weakref
from typing import Any

from . import _gradtape as _native

_Tensor = _native.Tensor
_Variable = _native.Variable


class IndexedSlices:
    """A sparse representation of a set of tensor slices at given indices: the dense
    tensor of shape ``dense_shape`` whose row ``indices[i]`` is (the sum of)
    ``values[i]``. TF equivalent: ``tf.IndexedSlices``.

    >>> import gradtape as gt
    >>> v = gt.Variable([[0.0, 1.0, 2.0], [2.0, 3.0, 4.0], [4.0, 5.0, 6.0], [6.0, 7.0, 8.0]])
    >>> with gt.GradientTape() as tape:
    ...     r = gt.gather(v, [1, 3])
    >>> g = tape.gradient(r, v)
    >>> g.indices.numpy().tolist(), g.values.numpy().tolist()
    ([1, 3], [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    >>> gt.convert_to_tensor(g).numpy().tolist()
    [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]
    """

    __slots__ = ("_values", "_indices", "_dense_shape", "__weakref__")

    def __init__(self, values: Any, indices: Any, dense_shape: Any = None) -> None:
        self._values = values if isinstance(values, _Tensor) else _native.convert_to_tensor(values)
        self._indices = indices if isinstance(indices, _Tensor) else _native.convert_to_tensor(indices)
        if dense_shape is not None and not isinstance(dense_shape, _Tensor):
            dense_shape = _native.convert_to_tensor(dense_shape)
        self._dense_shape = dense_shape

    @property
    def values(self) -> Any:
        """A ``Tensor`` containing the values of the slices."""
        return self._values

    @property
    def indices(self) -> Any:
        """A 1-D ``Tensor`` containing the indices of the slices."""
        return self._indices

    @property
    def dense_shape(self) -> Any:
        """A 1-D ``Tensor`` containing the shape of the corresponding dense tensor
        (``None`` when not given)."""
        return self._dense_shape

    @property
    def dtype(self) -> Any:
        """The ``DType`` of elements in this tensor."""
        return self._values.dtype

    @property
    def shape(self) -> Any:
        """The ``TensorShape`` of the dense tensor (unknown without ``dense_shape``)."""
        from ._shape import TensorShape

        if self._dense_shape is None:
            return TensorShape(None)
        return TensorShape(_dims(self._dense_shape))

    @property
    def device(self) -> str:
        """The device of ``values``."""
        return str(getattr(self._values, "device", ""))

    @property
    def name(self) -> str:
        """The name of ``values`` (eager tensors have none in TF either)."""
        return str(getattr(self._values, "name", ""))

    def __neg__(self) -> IndexedSlices:
        return IndexedSlices(-self._values, self._indices, self._dense_shape)

    def __str__(self) -> str:
        shape = "" if self._dense_shape is None else f", dense_shape={self._dense_shape}"
        return f"IndexedSlices(indices={self._indices}, values={self._values}{shape})"

    def _gt_dense_(self) -> Any:
        """The dense tensor (TF's conversion): ``values`` scatter-added at ``indices``,
        differentiable in ``values``."""
        if self._dense_shape is None:
            raise ValueError(
                "Tensor conversion requested for IndexedSlices without dense_shape: "
                f"{self}"
            )
        return _native._indexed_slices_to_dense(self._values, self._indices, _dims(self._dense_shape))


def _densify(g: Any) -> Any:
    """``g`` as a dense tensor when it is an ``IndexedSlices``, else ``g``."""
    return g._gt_dense_() if isinstance(g, IndexedSlices) else g


# In a gt.function trace, a traced gradient's dense_shape is a tensor of the graph (its
# value computed when the graph runs), with no concrete value for Python code. Its value
# is the shape of the gradient's source: ``id(dense_shape) -> source`` for those
# tensors, so that ``shape`` and densifying read the source's static shape (a read
# that makes the trace depend on the inputs' shapes, so another shape gets a trace of
# its own).
_SHAPE_SOURCES: dict[int, Any] = {}


def _dims(dense_shape: Any) -> list[int]:
    src = _SHAPE_SOURCES.get(id(dense_shape))
    if src is not None:
        return [int(d) for d in src.shape]
    return [int(d) for d in dense_shape.numpy().reshape(-1).tolist()]


def _from_native(g: Any, source: Any = None) -> Any:
    """A gradient from the native tape: a tensor, ``None``, or ``(values, indices,
    dense_shape)`` for TF's ``IndexedSlices`` (``dense_shape`` int32, as TF's; a list
    eagerly, a tensor of the graph in a gt.function trace)."""
    if isinstance(g, tuple):
        values, indices, shape = g
        if not isinstance(shape, _Tensor):
            shape = _native.constant(list(shape), dtype="int32")
        elif source is not None:
            key = id(shape)
            _SHAPE_SOURCES[key] = source
            weakref.finalize(shape, _SHAPE_SOURCES.pop, key, None)
        return IndexedSlices(values, indices, shape)
    return g
