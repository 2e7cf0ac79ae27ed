"""Ops that are short compositions of engine ops, written in Python with public
calls: TF's ``tf.math.add_n``, ``tf.repeat`` and ``tf.nn.embedding_lookup``; and the
folds ``tf.foldl`` / ``tf.foldr`` (a user function applied along axis 0, unrolled:
eagerly and inside a ``gt.function`` trace alike).

Each is differentiable because its parts are (``add``, ``gather``), with TF's
gradients: every input of ``add_n`` gets the incoming gradient; ``repeat`` and
``embedding_lookup`` scatter-add it back to the rows they read.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Sequence

import numpy as np

from . import _gradtape as _native
from . import _nest, errors

_Tensor = _native.Tensor
_Variable = _native.Variable

_ADD_N_ERROR = (
    "Inputs must be an iterable of at least one Tensor/IndexedSlices with the same "
    "dtype and shape."
)


def add_n(inputs: Sequence[Any], name: str | None = None) -> Any:
    """Elementwise sum of a list of tensors of one shape and dtype (no broadcasting).
    TF equivalent: ``tf.math.add_n``.

    >>> import gradtape as gt
    >>> print(gt.math.add_n([gt.constant([1.0, 2.0]), gt.constant([3.0, 4.0]), [5.0, 6.0]]))
    gt.Tensor([ 9. 12.], shape=(2,), dtype=float32)
    """
    del name
    if isinstance(inputs, (_Tensor, _Variable, str, bytes)) or not inputs:
        raise ValueError(_ADD_N_ERROR)
    try:
        xs = [x if isinstance(x, _Tensor) else _native.convert_to_tensor(x) for x in inputs]
    except TypeError:
        raise ValueError(_ADD_N_ERROR) from None
    if len(xs) == 1:
        return xs[0]
    dtypes = [x.dtype for x in xs]
    if any(d != dtypes[0] for d in dtypes):
        raise TypeError(
            "Tensors in list passed to 'inputs' of 'AddN' Op have types "
            f"[{', '.join(d.name for d in dtypes)}] that don't all match."
        )
    shape0 = tuple(xs[0].shape)
    for i, x in enumerate(xs[1:], 1):
        if tuple(x.shape) != shape0:
            raise errors.InvalidArgumentError(
                f"Shapes of all inputs must match: values[0].shape = {list(shape0)} != "
                f"values[{i}].shape = {list(x.shape)} [Op:AddN]"
            )
    total = xs[0]
    for x in xs[1:]:
        total = _native.add(total, x)
    return total


def repeat(input: Any, repeats: Any, axis: int | None = None, name: str | None = None) -> Any:  # noqa: A002
    """Repeats each element (``axis=None``: of the flattened input) or each slice
    along ``axis`` ``repeats`` times (a scalar, or one count per slice).
    TF equivalent: ``tf.repeat``.

    >>> import gradtape as gt
    >>> print(gt.repeat(gt.constant([[1, 2], [3, 4]]), repeats=[2, 1], axis=0))
    gt.Tensor(
    [[1 2]
     [1 2]
     [3 4]], shape=(3, 2), dtype=int32)
    >>> print(gt.repeat([1, 2], 2))
    gt.Tensor([1 1 2 2], shape=(4,), dtype=int32)
    """
    del name
    x = input if isinstance(input, _Tensor) else _native.convert_to_tensor(input)
    if axis is None:
        x = _native.reshape(x, [-1])
        axis = 0
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"axis must be an int, got {type(axis).__name__}")
    rank = x.ndim
    if rank == 0:
        raise ValueError("input must have rank at least 1 to repeat along an axis")
    if not -rank <= axis < rank:
        raise errors.InvalidArgumentError(
            f"axis = {axis} is not in [{-rank}, {rank})"
        )
    axis = int(axis) % rank
    reps = np.asarray(repeats.numpy() if isinstance(repeats, (_Tensor, _Variable)) else repeats)
    if reps.dtype.kind not in "iub":
        raise TypeError(f"repeats must be integers, got {reps.dtype}")
    if reps.ndim > 1:
        raise ValueError(f"repeats must be a scalar or a 1-D tensor, got shape {reps.shape}")
    n = x.shape[axis]
    if reps.ndim == 1 and reps.shape[0] not in (1, n):
        raise errors.InvalidArgumentError(
            f"repeats has {reps.shape[0]} values, but input.shape[{axis}] = {n}"
        )
    if np.any(reps < 0):
        raise errors.InvalidArgumentError("repeats must be non-negative")
    index = np.repeat(np.arange(n, dtype=np.int64), np.broadcast_to(reps, (n,)).astype(np.int64))
    return _native.gather(x, index, axis=axis)


def embedding_lookup(params: Any, ids: Any, max_norm: float | None = None, name: str | None = None) -> Any:
    """Rows of ``params`` (a tensor or variable, or a list of shards split along axis
    0 in order) at ``ids``. With ``max_norm``, each looked-up embedding whose L2 norm
    is larger is scaled down to it. TF equivalent: ``tf.nn.embedding_lookup``.

    The gradient with respect to ``params`` is TF's ``gt.IndexedSlices``: the incoming
    rows at ``ids``; densified, they are scatter-added (repeated ids accumulate).

    >>> import gradtape as gt
    >>> e = gt.Variable([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    >>> with gt.GradientTape() as t:
    ...     y = gt.reduce_sum(gt.nn.embedding_lookup(e, [2, 0, 2]))
    >>> g = t.gradient(y, e)
    >>> g.indices.numpy().tolist()
    [2, 0, 2]
    >>> print(gt.convert_to_tensor(g))
    gt.Tensor(
    [[1. 1.]
     [0. 0.]
     [2. 2.]], shape=(3, 2), dtype=float32)
    """
    del name
    if isinstance(params, (list, tuple)):
        if not params:
            raise ValueError("Need at least one param")
        params = params[0] if len(params) == 1 else _native.concat(list(params), axis=0)
    ids_t = ids if isinstance(ids, _Tensor) else _native.convert_to_tensor(ids)
    if ids_t.dtype.is_floating or ids_t.dtype.is_complex:
        raise TypeError(f"ids must be int32 or int64, got {ids_t.dtype.name}")
    out = _native.gather(params, ids_t)
    if max_norm is not None:
        axes = list(range(ids_t.ndim, out.ndim))
        if axes:
            out = _native.clip_by_norm(out, max_norm, axes=axes)
    return out


def _fold(fn: Any, elems: Any, initializer: Any, reverse: bool) -> Any:
    if not callable(fn):
        raise TypeError(f"{fn!r} is not callable. Please provide a callable function.")
    flat = [e if isinstance(e, _Tensor) else _native.convert_to_tensor(e) for e in _nest.flatten(elems)]
    if not flat:
        raise ValueError("elems must be a Tensor or (possibly nested) sequence of Tensors")
    for e in flat:
        if e.ndim == 0:
            raise ValueError("Elements in elems must be 1+ dimensional Tensors, not scalars")
    n = flat[0].shape[0]
    if any(e.shape[0] != n for e in flat):
        raise ValueError(
            "All elements in elems must have the same size in the first dimension, got "
            f"{[e.shape[0] for e in flat]}"
        )
    rows = [_native.unstack(e) for e in flat]

    def elem(i: int) -> Any:
        return _nest.pack_sequence_as(elems, [r[i] for r in rows]) if _nest.is_nested(elems) else rows[0][i]

    order = list(range(n - 1, -1, -1)) if reverse else list(range(n))
    if initializer is None:
        if n == 0:
            raise errors.InvalidArgumentError(
                "elems is empty (its first dimension is 0) and no initializer is given"
            )
        a, order = elem(order[0]), order[1:]
    else:
        a = initializer
    for i in order:
        a = fn(a, elem(i))
    return a


def foldl(
    fn: Any, elems: Any, initializer: Any = None, parallel_iterations: int = 10,
    back_prop: bool = True, swap_memory: bool = False, name: str | None = None,
) -> Any:
    """Left fold of ``fn`` over ``elems`` (a tensor or nested structure of tensors)
    along axis 0: ``fn(...fn(fn(initializer, elems[0]), elems[1])..., elems[n-1])``;
    without an initializer the fold starts from ``elems[0]``. Differentiable
    through ``fn``. TF equivalent: ``tf.foldl``.

    >>> import gradtape as gt
    >>> print(gt.foldl(lambda a, x: a + x, gt.constant([1.0, 2.0, 3.0])))
    gt.Tensor(6.0, shape=(), dtype=float32)
    """
    del parallel_iterations, back_prop, swap_memory, name
    return _fold(fn, elems, initializer, reverse=False)


def foldr(
    fn: Any, elems: Any, initializer: Any = None, parallel_iterations: int = 10,
    back_prop: bool = True, swap_memory: bool = False, name: str | None = None,
) -> Any:
    """Right fold of ``fn`` over ``elems`` along axis 0, from the last element to
    the first (without an initializer, from ``elems[n-1]``). TF equivalent:
    ``tf.foldr``.

    >>> import gradtape as gt
    >>> print(gt.foldr(lambda a, x: a * 10.0 + x, gt.constant([1.0, 2.0, 3.0])))
    gt.Tensor(321.0, shape=(), dtype=float32)
    """
    del parallel_iterations, back_prop, swap_memory, name
    return _fold(fn, elems, initializer, reverse=True)


__all__ = ["add_n", "embedding_lookup", "foldl", "foldr", "repeat"]


def _clip_parts(t_list: Any, what: str) -> list[Any]:
    """The dense part of each entry (an ``IndexedSlices``' values), ``None`` kept."""
    from ._indexed_slices import IndexedSlices

    if not isinstance(t_list, Sequence) or isinstance(t_list, (str, bytes)):
        raise TypeError(f"`{what}` should be a sequence of tensors. Received {type(t_list)}.")
    out: list[Any] = []
    for t in t_list:
        if t is None:
            out.append(None)
        else:
            v = t.values if isinstance(t, IndexedSlices) else t
            out.append(v if isinstance(v, _Tensor) else _native.convert_to_tensor(v))
    return out


def _global_norm(values: list[Any]) -> Any:
    for v in values:
        if v is not None and not v.dtype.is_floating:
            # TF's L2Loss kernel, which its global_norm uses, takes real floats only.
            raise errors.InvalidArgumentError(
                f"Value for attr 'T' of {v.dtype.name} is not in the list of allowed values: "
                "half, bfloat16, float, double [Op:L2Loss]"
            )
    squares = [_native.reduce_sum(_native.square(v)) for v in values if v is not None]
    if not squares:
        raise ValueError("global_norm needs at least one tensor that is not None")
    return _native.sqrt(_native.reduce_sum(_native.stack(squares)))


def global_norm(t_list: Sequence[Any], name: str | None = None) -> Any:
    """The L2 norm of all the values of a list of tensors (``None`` entries ignored;
    a ``gt.IndexedSlices`` counts its values): ``sqrt(sum(sum(t**2) for t in t_list))``.
    TF equivalent: ``tf.linalg.global_norm``.

    >>> import gradtape as gt
    >>> print(gt.linalg.global_norm([gt.constant([3.0]), None, gt.constant([[4.0]])]))
    gt.Tensor(5.0, shape=(), dtype=float32)
    """
    del name
    return _global_norm(_clip_parts(t_list, "t_list"))


def clip_by_global_norm(
    t_list: Sequence[Any], clip_norm: Any, use_norm: Any = None, name: str | None = None
) -> tuple[list[Any], Any]:
    """Scales every tensor of ``t_list`` by ``clip_norm / max(global_norm, clip_norm)``
    and returns ``(list_clipped, global_norm)``. ``None`` entries stay ``None``; a
    ``gt.IndexedSlices`` stays one (its values scaled, its norm that of its values);
    a non-finite norm makes every value NaN. ``use_norm`` gives the norm instead of
    computing it. TF equivalent: ``tf.clip_by_global_norm``.

    >>> import gradtape as gt
    >>> clipped, norm = gt.clip_by_global_norm([gt.constant([3.0]), gt.constant([4.0])], 1.0)
    >>> [c.numpy().tolist() for c in clipped], float(norm)
    ([[0.6000000238418579], [0.800000011920929]], 5.0)
    """
    from ._indexed_slices import IndexedSlices

    del name
    t_list = list(t_list) if isinstance(t_list, Sequence) and not isinstance(t_list, (str, bytes)) else t_list
    values = _clip_parts(t_list, "t_list")
    if use_norm is None:
        use_norm = _global_norm(values)
    elif not isinstance(use_norm, _Tensor):
        use_norm = _native.convert_to_tensor(use_norm, dtype=_native.float32)
    c = clip_norm if isinstance(clip_norm, _Tensor) else _native.convert_to_tensor(clip_norm, dtype=use_norm.dtype)
    # TF's formula: finite norms give clip_norm * min(1 / norm, 1 / clip_norm); inf or
    # NaN, NaN (TF adds norm - norm; a select keeps the gradient's sum order the same
    # traced and eager).
    one = _native.ones_like(use_norm)
    scale = c * _native.minimum(one / use_norm, one / c)
    finite = _native.less(_native.abs(use_norm), float("inf"))
    scale = _native.where(finite, scale, _native.constant(float("nan"), dtype=scale.dtype))
    out: list[Any] = []
    for t, v in zip(t_list, values):
        if v is None:
            out.append(None)
            continue
        clipped = _native.identity(v * _native.cast(scale, v.dtype))
        out.append(IndexedSlices(clipped, t.indices, t.dense_shape) if isinstance(t, IndexedSlices) else clipped)
    return out, use_norm
