"""Array and structural ops (issue 14) written as compositions of engine ops:
TF's ``tf.reverse``, ``tf.roll``, ``tf.sort`` / ``tf.argsort``, ``tf.searchsorted``,
``tf.unique``, ``tf.meshgrid``, ``tf.sequence_mask``, ``tf.scatter_nd`` and the
``tf.tensor_scatter_nd_*`` family, ``tf.strided_slice``, ``tf.reverse_sequence``,
``tf.unravel_index``, the broadcast-shape helpers, ``tf.shape_n``, ``tf.identity_n``,
``tf.parallel_stack``, ``tf.realdiv``, ``tf.truncatediv`` / ``tf.truncatemod``,
``tf.space_to_batch_nd`` / ``tf.batch_to_space``, ``tf.nn.space_to_depth`` /
``depth_to_space``, ``tf.scan`` and ``tf.saturate_cast``.

Each is differentiable because its parts are (``gather``, ``transpose``, ``where``,
the scatter-add behind ``gt.IndexedSlices``), with TF's gradients: slices read are
scatter-added back, selected positions get the incoming gradient. Index arithmetic
that depends only on static shapes is done in numpy, so the ops work inside a
``gt.function`` trace too; arguments TF takes as host values (shifts, lengths,
``maxlen``) must be concrete there.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Sequence

import numpy as np

from . import _gradtape as _native
from . import _nest, errors

_Tensor = _native.Tensor
_Variable = _native.Variable


def _t(x: Any, dtype: Any = None) -> Any:
    if isinstance(x, _Tensor) and (dtype is None or x.dtype == dtype):
        return x
    if isinstance(x, _Variable):
        x = _native.identity(x)
        return x if dtype is None or x.dtype == dtype else _native.cast(x, dtype)
    return _native.convert_to_tensor(x, dtype=dtype) if dtype is not None else _native.convert_to_tensor(x)


def _symbolic(x: Any) -> bool:
    return isinstance(x, _Tensor) and _native._is_symbolic(x)


def _host(x: Any, what: str) -> np.ndarray:
    """The concrete value of a host argument (a Python value, array or eager tensor)."""
    if isinstance(x, (_Tensor, _Variable)):
        if _symbolic(x) if isinstance(x, _Tensor) else False:
            raise TypeError(
                f"`{what}` must be a concrete value: inside a gt.function trace pass it as "
                "a Python value or a constant"
            )
        return np.asarray(x.numpy())
    return np.asarray(x)


def _int_list(x: Any, what: str) -> list[int]:
    a = _host(x, what)
    if a.dtype.kind not in "iu" and not (a.size == 0 and a.dtype.kind == "f"):
        raise TypeError(f"`{what}` must be integers, got {a.dtype}")
    if a.ndim > 1:
        raise ValueError(f"`{what}` must be a scalar or a vector, got shape {a.shape}")
    return [int(v) for v in a.reshape(-1)]


def _int_entries(x: Any, what: str) -> list[Any]:
    """``_int_list``, except that a vector computed inside a ``gt.function`` trace gives
    its elements as scalar tensors (read when the graph runs)."""
    if isinstance(x, _native.Tensor) and _native._is_symbolic(x):
        if not x.dtype.is_integer:
            raise TypeError(f"`{what}` must be integers, got {x.dtype.name}")
        if x.ndim > 1 or (x.ndim == 1 and x.shape[0] is None):
            raise ValueError(f"`{what}` must be a scalar or a vector of known length, got shape {x.shape}")
        return [x] if x.ndim == 0 else [x[k] for k in range(x.shape[0])]
    if isinstance(x, (list, tuple)) and any(
        isinstance(v, _native.Tensor) and _native._is_symbolic(v) for v in x
    ):
        return [v if isinstance(v, _native.Tensor) and _native._is_symbolic(v) else _int_list(v, what)[0]
                for v in x]
    return _int_list(x, what)


def _axis(a: int, rank: int, op: str) -> int:
    if not -rank <= a < rank:
        raise errors.InvalidArgumentError(
            f"axis {a} is out of range for a tensor of rank {rank}; it must be in "
            f"[{-rank}, {rank}) [Op:{op}]"
        )
    return a % rank


def _iota(n: int, dtype: Any = None) -> Any:
    return _native.constant(np.arange(n, dtype=np.int64), dtype=dtype or _native.int64)


# ----------------------------------------------------------------------------- reverse, roll


def reverse(tensor: Any, axis: Any, name: str | None = None) -> Any:
    """The tensor with the order of its elements reversed along each axis of ``axis``.
    TF equivalent: ``tf.reverse`` (``ReverseV2``). Gradient: reversed back.

    >>> import gradtape as gt
    >>> print(gt.reverse(gt.constant([[1, 2, 3], [4, 5, 6]]), [1]))
    gt.Tensor(
    [[3 2 1]
     [6 5 4]], shape=(2, 3), dtype=int32)
    """
    del name
    x = _t(tensor)
    axes = [_axis(a, x.ndim, "ReverseV2") for a in _int_list(axis, "axis")]
    if len(set(axes)) != len(axes):
        raise errors.InvalidArgumentError(f"axis {axes} specified more than once [Op:ReverseV2]")
    for a in axes:
        n = x.shape[a]
        x = _native.gather(x, np.arange(n - 1, -1, -1, dtype=np.int64), axis=a)
    return x if axes else _native.identity(x)


def roll(input: Any, shift: Any, axis: Any, name: str | None = None) -> Any:  # noqa: A002
    """Elements shifted by ``shift`` positions along ``axis`` (both scalars or equal-length
    lists; shifts along a repeated axis add up), wrapping around. TF equivalent:
    ``tf.roll``. Gradient: rolled back.

    >>> import gradtape as gt
    >>> print(gt.roll(gt.constant([0, 1, 2, 3, 4]), shift=2, axis=0))
    gt.Tensor([3 4 0 1 2], shape=(5,), dtype=int32)
    """
    del name
    x = _t(input)
    axes = _int_list(axis, "axis")
    if isinstance(shift, _Tensor) and _symbolic(shift):
        return _roll_traced(x, shift, axes)
    shifts = _int_list(shift, "shift")
    if len(shifts) != len(axes):
        raise errors.InvalidArgumentError(
            f"shift and axis must have the same size, got {len(shifts)} and {len(axes)} [Op:Roll]"
        )
    total: dict[int, int] = {}
    for s, a in zip(shifts, axes):
        a = _axis(a, x.ndim, "Roll")
        total[a] = total.get(a, 0) + s
    for a, s in sorted(total.items()):
        n = x.shape[a]
        if n == 0 or s % n == 0:
            continue
        x = _gather_dense(x, _native.constant((np.arange(n, dtype=np.int64) - s) % n), a)
    return _native.identity(x)


def _gather_dense(x: Any, at: Any, axis: int) -> Any:
    """``gather(x, at, axis)`` for a permutation-like ``at`` (1-D, the axis' length) whose
    gradient is a dense tensor (TF's ``Roll`` gradient), not ``IndexedSlices``: a
    batched gather of rows with ``axis`` moved last."""
    perm = [k for k in range(x.ndim) if k != axis] + [axis]
    xt = x if axis == x.ndim - 1 else _native.transpose(x, perm)
    shape = list(xt.shape)
    lead = int(np.prod(shape[:-1], dtype=np.int64))
    rows = _native.reshape(xt, [lead, shape[-1]])
    picked = _native.gather(rows, _native.broadcast_to(at, [lead, shape[-1]]), batch_dims=1)
    out = _native.reshape(picked, shape)
    return out if axis == x.ndim - 1 else _native.transpose(out, list(np.argsort(perm)))


def _roll_traced(x: Any, shift: Any, axes: list[int]) -> Any:
    """``roll`` with shifts known only when the graph runs (TF's ``Roll`` node): the
    gather positions ``(i - shift) mod n`` are computed in the graph."""
    if shift.dtype.name not in ("int32", "int64") or shift.ndim > 1:
        raise TypeError(f"`shift` must be an integer scalar or vector, got {shift.dtype.name} of rank {shift.ndim}")
    m = 1 if shift.ndim == 0 else shift.shape[0]
    if m != len(axes):
        raise errors.InvalidArgumentError(
            f"shift and axis must have the same size, got {m} and {len(axes)} [Op:Roll]"
        )
    s = _native.cast(_native.reshape(shift, [m]), _native.int64)
    by_axis: dict[int, list[int]] = {}
    for j, a in enumerate(axes):
        by_axis.setdefault(_axis(a, x.ndim, "Roll"), []).append(j)
    for a, js in sorted(by_axis.items()):
        n = x.shape[a]
        if n == 0:
            continue
        total = _native.reduce_sum(_native.gather(s, np.array(js, np.int64)))
        at = _native.floormod(_native.constant(np.arange(n, dtype=np.int64)) - total, _native.constant(np.int64(n)))
        x = _gather_dense(x, at, a)
    return _native.identity(x)


# ----------------------------------------------------------------------------- sort, search


_DIRECTIONS = ("ASCENDING", "DESCENDING")


def _check_sortable(x: Any) -> None:
    if x.dtype.is_complex or x.dtype == _native.bool:
        raise errors.InvalidArgumentError(
            f"Value for attr 'T' of {x.dtype.name} is not in the list of allowed values "
            "(real numbers) [Op:TopKV2]"
        )


def _argsort_last(x: Any, descending: bool) -> Any:
    """Stable argsort along the last axis (ties keep their order), int32."""
    if not _symbolic(x):
        a = np.asarray(x.numpy())
        if descending:
            # A stable sort of the order-reversed keys: ties keep the lower index first.
            key = (np.iinfo(a.dtype).max - a) if a.dtype.kind == "u" else -a.astype(
                np.float64 if a.dtype.kind == "f" else a.dtype
            )
            if a.dtype.kind == "i":
                # Negation overflows at INT_MIN: sort on the bitwise complement instead.
                key = ~a
        else:
            key = a
        idx = np.argsort(key, axis=-1, kind="stable")
        return _native.constant(idx.astype(np.int32))
    # Traced: one sort node (TopKV2 of all n, descending by value, ties by position) on
    # keys that put the wanted order first; exact for integers below 2**53.
    keys = x if x.dtype.is_floating else _native.cast(x, _native.float64)
    if not descending:
        keys = _native.negative(keys)
    if not x.dtype.is_floating:
        return _native._sort_indices(keys)
    # NaNs go last in both directions, in their order, as the eager sort (numpy's) puts
    # them: sorted as the lowest key first, then moved behind the rest by a second,
    # stable sort on "is NaN" (ties keep the first sort's order).
    nan = _native.is_nan(x)
    low = _native.constant(float("-inf"), dtype=keys.dtype)
    first = _native._sort_indices(_native.where(nan, low, keys))
    moved = _native.negative(_native.cast(_native.gather(nan, first, batch_dims=x.ndim - 1), _native.float32))
    return _native.gather(first, _native._sort_indices(moved), batch_dims=x.ndim - 1)


def _sort_setup(values: Any, axis: Any, direction: Any) -> tuple[Any, int, bool]:
    x = _t(values)
    _check_sortable(x)
    if direction not in _DIRECTIONS:
        raise ValueError(f"{direction!r} should be one of {', '.join(_DIRECTIONS)}")
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"axis must be a constant scalar, got {axis!r}")
    if x.ndim == 0:
        raise ValueError("input must have rank at least 1")
    return x, _axis(int(axis), x.ndim, "TopKV2"), direction == "DESCENDING"


def _to_last(x: Any, a: int) -> tuple[Any, list[int] | None]:
    if a == x.ndim - 1:
        return x, None
    perm = [k for k in range(x.ndim) if k != a] + [a]
    return _native.transpose(x, perm), list(np.argsort(perm))


def argsort(values: Any, axis: int = -1, direction: str = "ASCENDING", stable: bool = False,
            name: str | None = None) -> Any:
    """The int32 indices that sort ``values`` along ``axis``; ties keep their order
    (``stable=True`` guarantees it, and TF's ``top_k`` gives it anyway). TF equivalent:
    ``tf.argsort``. Not differentiable (integer output).

    >>> import gradtape as gt
    >>> print(gt.argsort([3.0, 1.0, 2.0, 1.0]))
    gt.Tensor([1 3 2 0], shape=(4,), dtype=int32)
    """
    del stable, name
    x, a, desc = _sort_setup(values, axis, direction)
    xl, back = _to_last(x, a)
    idx = _argsort_last(_native.stop_gradient(xl), desc)
    return idx if back is None else _native.transpose(idx, back)


def sort(values: Any, axis: int = -1, direction: str = "ASCENDING", name: str | None = None) -> Any:
    """``values`` sorted along ``axis``. TF equivalent: ``tf.sort``. Gradient: each
    incoming value goes back to the element that landed there (TF's ``top_k`` rule).

    >>> import gradtape as gt
    >>> print(gt.sort([3.0, 1.0, 2.0], direction="DESCENDING"))
    gt.Tensor([3. 2. 1.], shape=(3,), dtype=float32)
    """
    del name
    x, a, desc = _sort_setup(values, axis, direction)
    xl, back = _to_last(x, a)
    idx = _argsort_last(_native.stop_gradient(xl), desc)
    # Gathered as rows of a 2-D batch: a dense gradient, as TF's (TopKV2's rule), also
    # for a vector (whose plain gather would give IndexedSlices).
    # In a trace, shapes as tensors: a trace for a `None` length serves every length
    # (saved too).
    shape: Any
    rows_shape: Any
    if _symbolic(xl):
        shape = _native.shape(xl)
        rows_shape = _native.concat([_native.constant([-1]), shape[-1:]], 0)
    else:
        shape, rows_shape = list(xl.shape), [-1, xl.shape[-1]]
    rows = _native.reshape(xl, rows_shape)
    out = _native.reshape(_native.gather(rows, _native.reshape(idx, rows_shape), batch_dims=1), shape)
    return out if back is None else _native.transpose(out, back)


def searchsorted(sorted_sequence: Any, values: Any, side: str = "left", out_type: Any = None,
                 name: str | None = None) -> Any:
    """For each of ``values``, the index in ``sorted_sequence`` (sorted along its last
    axis; leading axes match those of ``values``) where it would be inserted: before
    equal entries (``side="left"``) or after them (``"right"``). TF equivalent:
    ``tf.searchsorted``. Not differentiable.

    >>> import gradtape as gt
    >>> print(gt.searchsorted([1.0, 2.0, 2.0, 5.0], [2.0, 3.0, 0.0], side="right"))
    gt.Tensor([3 3 0], shape=(3,), dtype=int32)
    """
    del name
    if side not in ("left", "right"):
        raise ValueError(f"Argument `side` must be either 'right' or 'left'. Received: `side` = {side}.")
    out_type = _native.int32 if out_type is None else out_type
    if isinstance(out_type, str):
        out_type = getattr(_native, out_type)
    if out_type not in (_native.int32, _native.int64):
        raise TypeError(f"out_type must be int32 or int64, got {out_type}")
    s = _native.stop_gradient(_t(sorted_sequence))
    v = _native.stop_gradient(_t(values, s.dtype))
    _check_sortable(s)
    if s.ndim == 0 or v.ndim == 0:
        raise ValueError("sorted_sequence and values must have rank at least 1")
    if s.ndim != v.ndim or tuple(s.shape[:-1]) != tuple(v.shape[:-1]):
        raise errors.InvalidArgumentError(
            "Leading dim_size of both tensors must match: sorted_sequence shape "
            f"{list(s.shape)}, values shape {list(v.shape)}"
        )
    cmp = _native.less if side == "left" else _native.less_equal
    below = cmp(_native.expand_dims(s, -2), _native.expand_dims(v, -1))  # [..., m, n]
    return _native.reduce_sum(_native.cast(below, out_type), axis=-1)


def _unique(x: Any, out_type: Any, counts: bool) -> Any:
    x = _t(x)
    if x.ndim != 1:
        raise errors.InvalidArgumentError(f"unique expects a 1D vector, got shape {list(x.shape)} [Op:Unique]")
    out_type = _native.int32 if out_type is None else out_type
    if isinstance(out_type, str):
        out_type = getattr(_native, out_type)
    if out_type not in (_native.int32, _native.int64):
        raise TypeError(f"out_idx must be int32 or int64, got {out_type}")
    if _symbolic(x):
        return _unique_traced(x, out_type, counts)
    a = _host(x, "x")
    # Each NaN is its own value, as in TF (its hash map never finds a NaN equal).
    kw = {"equal_nan": False} if a.dtype.kind in "fc" else {}
    _, first, inverse, cnt = np.unique(a, return_index=True, return_inverse=True, return_counts=True, **kw)
    order = np.argsort(first, kind="stable")  # unique values in order of first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    np_out = np.int32 if out_type == _native.int32 else np.int64
    y = _native.stop_gradient(_native.gather(x, first[order].astype(np.int64)))
    idx = _native.constant(rank[inverse.reshape(-1)].astype(np_out))
    if counts:
        return y, idx, _native.constant(cnt[order].astype(np_out))
    return y, idx


def _unique_traced(x: Any, out_type: Any, counts: bool) -> Any:
    """``unique`` of a vector computed inside a trace: its length is known only when the
    graph runs. Element ``i`` is a first appearance when no earlier element equals it
    (an n x n comparison: memory quadratic in the length); the firsts, in order, give
    ``y`` (a slice whose length is their count), and each element's index is its first
    appearance's rank among them."""
    n = _native.size(x, out_type=_native.int32)
    pos = _native.range(n)
    eq = _native.equal(_native.expand_dims(x, 1), _native.expand_dims(x, 0))
    earlier = _native.less(_native.expand_dims(pos, 0), _native.expand_dims(pos, 1))
    dups = _native.reduce_sum(_native.cast(_native.logical_and(eq, earlier), _native.int32), axis=1)
    first = _native.equal(dups, _native.constant(0))
    rank = _native.cumsum(_native.cast(first, _native.int32), exclusive=True)
    # The first j with x[j] == x[i] (i itself for a NaN, equal to nothing); a column of
    # ones after the last keeps the axis non-empty for an empty x.
    same = _native.logical_or(eq, _native.equal(_native.expand_dims(pos, 0), _native.expand_dims(pos, 1)))
    same = _native.concat([_native.cast(same, _native.int32), _native.expand_dims(_native.ones_like(pos), 1)], 1)
    found = _native.argmax(same, axis=1, output_type=_native.int32)
    idx = _native.cast(_native.gather(rank, found), out_type)
    k = _native.reduce_sum(_native.cast(first, _native.int32))
    # The firsts' positions in order: output slot p takes the first whose rank is p (a
    # one-hot row per element, all zeros for the others). No static length is used, so
    # a trace for a `None` length serves every length, saved or not.
    slot = _native.where(first, rank, _native.fill(_native.shape(rank), k))
    order = _native.reduce_sum(
        _native.multiply(_native.one_hot(slot, k, dtype=_native.int32), _native.expand_dims(pos, 1)), axis=0
    )
    y = _native.stop_gradient(_native.gather(x, order))
    if counts:
        cnt = _native.reduce_sum(_native.one_hot(idx, k, dtype=out_type), axis=0)
        return y, idx, cnt
    return y, idx


def unique(x: Any, out_idx: Any = None, name: str | None = None) -> tuple[Any, Any]:
    """``(y, idx)``: the distinct values of the 1-D ``x`` in order of first appearance,
    and for each element of ``x`` its index in ``y``; each NaN is a value of its own, as
    in TF. Inside a ``gt.function`` the output length is found when the graph runs.
    TF equivalent: ``tf.unique``. Not differentiable.

    >>> import gradtape as gt
    >>> y, idx = gt.unique([1, 1, 2, 4, 4, 4, 7, 8, 8])
    >>> y.numpy().tolist(), idx.numpy().tolist()
    ([1, 2, 4, 7, 8], [0, 0, 1, 2, 2, 2, 3, 4, 4])
    """
    del name
    return _unique(x, out_idx, False)


def unique_with_counts(x: Any, out_idx: Any = None, name: str | None = None) -> tuple[Any, Any, Any]:
    """``(y, idx, count)``: :func:`unique` and how often each value occurs.
    TF equivalent: ``tf.unique_with_counts``.

    >>> import gradtape as gt
    >>> print(gt.unique_with_counts([4, 1, 4])[2])
    gt.Tensor([2 1], shape=(2,), dtype=int32)
    """
    del name
    return _unique(x, out_idx, True)


# ----------------------------------------------------------------------------- creation-like


def meshgrid(*args: Any, **kwargs: Any) -> list[Any]:
    """Coordinate grids of N 1-D coordinate vectors, each broadcast to the full grid:
    ``indexing="xy"`` (Cartesian, the default: the first two axes swapped) or
    ``"ij"`` (matrix). TF equivalent: ``tf.meshgrid``. Gradient: summed over the grid.

    >>> import gradtape as gt
    >>> X, Y = gt.meshgrid([1, 2, 3], [4, 5])
    >>> X.numpy().tolist(), Y.numpy().tolist()
    ([[1, 2, 3], [1, 2, 3]], [[4, 4, 4], [5, 5, 5]])
    """
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"'{next(iter(kwargs))}' is an invalid keyword argument for this function")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Argument `indexing` parameter must be either 'xy' or 'ij', got '{indexing}'")
    xs = [_native.reshape(_t(a), [-1]) for a in args]
    if not xs:
        return []
    ndim = len(xs)
    sizes = [x.shape[0] for x in xs]
    if indexing == "xy" and ndim > 1:
        out_shape = [sizes[1], sizes[0], *sizes[2:]]
    else:
        out_shape = list(sizes)
    out = []
    for i, x in enumerate(xs):
        pos = i
        if indexing == "xy" and ndim > 1 and i < 2:
            pos = 1 - i
        shape = [1] * ndim
        shape[pos] = -1
        out.append(_native.broadcast_to(_native.reshape(x, shape), out_shape))
    return out


def sequence_mask(lengths: Any, maxlen: Any = None, dtype: Any = None, name: str | None = None) -> Any:
    """``mask[i..., j] = j < lengths[i...]`` over ``j`` in ``[0, maxlen)`` (``maxlen``
    defaults to the largest length). TF equivalent: ``tf.sequence_mask``.

    >>> import gradtape as gt
    >>> print(gt.sequence_mask([1, 3, 2], 4))
    gt.Tensor(
    [[ True False False False]
     [ True  True  True False]
     [ True  True False False]], shape=(3, 4), dtype=bool)
    """
    del name
    n = _t(lengths)
    if n.dtype.is_floating or n.dtype.is_complex or n.dtype == _native.bool:
        raise TypeError(f"lengths must be integers, got {n.dtype.name}")
    if maxlen is None:
        m = int(_host(n, "lengths").max()) if n.size else 0
    else:
        mv = _host(maxlen, "maxlen")
        if mv.ndim != 0:
            raise errors.InvalidArgumentError(f"maxlen must be scalar, got shape {list(mv.shape)}")
        if mv.dtype.kind not in "iu":
            raise TypeError(f"maxlen must be an integer, got {mv.dtype}")
        m = int(mv)
    m = max(m, 0)
    mask = _native.less(_native.range(m, dtype=_native.int64), _native.expand_dims(_native.cast(n, _native.int64), -1))
    if dtype is None or dtype == _native.bool or dtype == "bool":
        return mask
    return _native.cast(mask, dtype)


# ----------------------------------------------------------------------------- scatter


def _scatter_setup(indices: Any, updates: Any, shape: Sequence[int], op: str) -> tuple[Any, Any, list[int], int]:
    idx = _t(indices)
    if idx.dtype not in (_native.int32, _native.int64, _native.int16):
        raise TypeError(f"indices must be int32 or int64, got {idx.dtype.name} [Op:{op}]")
    if idx.ndim == 0:
        raise errors.InvalidArgumentError(f"Indices must have rank at least 1 [Op:{op}]")
    k = idx.shape[-1]
    if k > len(shape):
        raise errors.InvalidArgumentError(
            f"Index innermost dimension length must be <= output rank; saw: {k} vs. {len(shape)} [Op:{op}]"
        )
    upd = _t(updates)
    want = list(idx.shape[:-1]) + list(shape[k:])
    if list(upd.shape) != want:
        raise errors.InvalidArgumentError(
            f"Dimensions [0,{idx.ndim - 1}) of indices[shape={list(idx.shape)}] = "
            f"{list(idx.shape[:-1])} must match dimensions [0,{idx.ndim - 1}) of "
            f"updates[shape={list(upd.shape)}]; the updates must have shape {want} [Op:{op}]"
        )
    if not _symbolic(idx):
        a = np.asarray(idx.numpy()).reshape(-1, k) if k else np.zeros((0, 0), np.int64)
        bad = np.nonzero(((a < 0) | (a >= np.asarray(shape[:k], dtype=np.int64))).any(axis=-1))[0]
        if bad.size:
            i = int(bad[0])
            raise errors.InvalidArgumentError(
                f"indices[{i}] = {a[i].tolist()} does not index into shape {list(shape)} [Op:{op}]"
            )
    return idx, upd, want, k


def _scatter_add(idx: Any, upd: Any, shape: list[int], k: int) -> Any:
    rows = int(np.prod(shape[:k], dtype=np.int64))
    rest = list(shape[k:])
    n = int(np.prod(idx.shape[:-1], dtype=np.int64))
    strides = np.ones(k, np.int64)
    for j in range(k - 2, -1, -1):
        strides[j] = strides[j + 1] * shape[j + 1]
    flat_idx = _native.reshape(_native.cast(idx, _native.int64), [n, k])
    if k:
        lin = _native.reduce_sum(flat_idx * _native.constant(strides), axis=-1)
    else:
        lin = _native.zeros([n], dtype=_native.int64)
    values = _native.reshape(upd, [n, *rest])
    if n == 0 or rows == 0:
        return _native.zeros(shape, dtype=upd.dtype)
    dense = _native._indexed_slices_to_dense(values, lin, [rows, *rest])
    return _native.reshape(dense, shape)


def scatter_nd(indices: Any, updates: Any, shape: Any, name: str | None = None) -> Any:
    """Zeros of ``shape`` with ``updates`` added at ``indices`` (index tuples along the
    last axis; repeated indices add up). TF equivalent: ``tf.scatter_nd``. Gradient:
    the incoming gradient gathered at ``indices`` (``gather_nd``).

    >>> import gradtape as gt
    >>> print(gt.scatter_nd([[4], [3], [1], [7]], [9.0, 10.0, 11.0, 12.0], [8]))
    gt.Tensor([ 0. 11.  0. 10.  9.  0.  0. 12.], shape=(8,), dtype=float32)
    """
    del name
    shp = _int_list(shape, "shape")
    if any(d < 0 for d in shp):
        raise errors.InvalidArgumentError(f"shape {shp} has negative dimensions [Op:ScatterNd]")
    idx, upd, _, k = _scatter_setup(indices, updates, shp, "ScatterNd")
    return _scatter_add(idx, upd, shp, k)


def _tensor_scatter(tensor: Any, indices: Any, updates: Any, op: str) -> tuple[Any, Any, Any, int]:
    x = _t(tensor)
    # Python values take the tensor's dtype (TF converts inputs of one type attribute
    # alike); tensors and arrays keep theirs.
    upd = _t(updates) if isinstance(updates, (_Tensor, _Variable, np.ndarray)) else _t(updates, x.dtype)
    if upd.dtype != x.dtype:
        raise errors.InvalidArgumentError(
            f"cannot compute {op} as input #2(zero-based) was expected to be a {x.dtype.name} "
            f"tensor but is a {upd.dtype.name} tensor [Op:{op}]"
        )
    idx, upd, _, k = _scatter_setup(indices, upd, list(x.shape), op)
    return x, idx, upd, k


def tensor_scatter_nd_add(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Any:
    """``tensor`` with ``updates`` added at ``indices``. TF equivalent:
    ``tf.tensor_scatter_nd_add``.

    >>> import gradtape as gt
    >>> print(gt.tensor_scatter_nd_add([1.0, 1.0, 1.0], [[0], [0]], [2.0, 3.0]))
    gt.Tensor([6. 1. 1.], shape=(3,), dtype=float32)
    """
    del name
    x, idx, upd, k = _tensor_scatter(tensor, indices, updates, "TensorScatterAdd")
    return _native.add(x, _scatter_add(idx, upd, list(x.shape), k))


def tensor_scatter_nd_sub(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Any:
    """``tensor`` with ``updates`` subtracted at ``indices``. TF equivalent:
    ``tf.tensor_scatter_nd_sub``.

    >>> import gradtape as gt
    >>> print(gt.tensor_scatter_nd_sub([1.0, 1.0], [[1]], [2.0]))
    gt.Tensor([ 1. -1.], shape=(2,), dtype=float32)
    """
    del name
    x, idx, upd, k = _tensor_scatter(tensor, indices, updates, "TensorScatterSub")
    return _native.subtract(x, _scatter_add(idx, upd, list(x.shape), k))


def _occurrence_layers(idx: Any, k: int) -> list[np.ndarray] | None:
    """Eager: the update positions split into layers in which no index repeats (the
    j-th occurrence of each index is in layer j); ``None`` when traced."""
    if _symbolic(idx):
        return None
    a = np.asarray(idx.numpy()).reshape(-1, k) if k else np.zeros((int(np.prod(idx.shape[:-1])), 0), np.int64)
    seen: dict[tuple, int] = {}
    layer = np.empty(a.shape[0], np.int64)
    for i, row in enumerate(map(tuple, a.tolist())):
        layer[i] = seen.get(row, 0)
        seen[row] = layer[i] + 1
    return [np.nonzero(layer == j)[0] for j in range(int(layer.max()) + 1 if layer.size else 0)]


def _take_updates(idx: Any, upd: Any, rows: np.ndarray) -> tuple[Any, Any]:
    lead = idx.ndim - 1
    i2 = _native.reshape(idx, [-1, idx.shape[-1]])
    u2 = _native.reshape(upd, [-1, *upd.shape[lead:]])
    r = rows.astype(np.int64)
    return _native.gather(i2, r), _native.gather(u2, r)


def _mask(idx: Any, shape: list[int], k: int) -> Any:
    ones = _native.ones([*idx.shape[:-1], *shape[k:]], dtype=_native.int32)
    return _native.greater(_scatter_add(idx, ones, shape, k), _native.constant(0, dtype=_native.int32))


def _last_of_each_index(idx: Any, shape: list[int], k: int) -> Any:
    """Which updates are the last at their index (a bool tensor of ``idx.shape[:-1]``),
    or ``None`` when no index repeats (known eagerly). Traced, the comparison is a
    graph computation on the call's indices (one pair of updates at a time)."""
    n = int(np.prod(idx.shape[:-1], dtype=np.int64))
    if not _symbolic(idx):
        a = np.asarray(idx.numpy()).reshape(n, k)
        keep = np.ones(n, bool)
        seen: set[tuple] = set()
        for i in range(n - 1, -1, -1):
            key = tuple(a[i].tolist())
            keep[i] = key not in seen
            seen.add(key)
        return None if keep.all() else _native.constant(keep.reshape(idx.shape[:-1]))
    if n < 2:
        return None
    # Each update's position in the row-major order of the indexed axes.
    strides = np.ones(k, np.int64)
    for j in range(k - 2, -1, -1):
        strides[j] = strides[j + 1] * shape[j + 1]
    flat = _native.cast(_native.reshape(idx, [n, k]), _native.int64)
    lin = _native.reduce_sum(flat * _native.constant(strides), axis=1)
    same = _native.equal(_native.expand_dims(lin, 1), _native.expand_dims(lin, 0))
    later = _native.constant(np.triu(np.ones((n, n), bool), 1))
    again = _native.reduce_any(_native.logical_and(same, later), axis=1)
    return _native.reshape(_native.logical_not(again), list(idx.shape[:-1]))


def tensor_scatter_nd_update(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Any:
    """``tensor`` with the values at ``indices`` replaced by ``updates`` (for a repeated
    index the last update wins, as TF's CPU kernel, eagerly and inside a
    ``gt.function``). TF equivalent: ``tf.tensor_scatter_nd_update``. Gradient:
    ``tensor`` gets the incoming gradient outside ``indices``, ``updates`` the incoming
    gradient at ``indices``.

    >>> import gradtape as gt
    >>> print(gt.tensor_scatter_nd_update([1, 2, 3, 4], [[1], [3]], [9, 10]))
    gt.Tensor([ 1  9  3 10], shape=(4,), dtype=int32)
    """
    del name
    x, idx, upd, k = _tensor_scatter(tensor, indices, updates, "TensorScatterUpdate")
    shape = list(x.shape)
    mask = _mask(idx, shape, k)
    keep = _last_of_each_index(idx, shape, k)
    if keep is not None:
        # Broadcast over each update's slice.
        keep = _native.reshape(keep, list(keep.shape) + [1] * (upd.ndim - keep.ndim))
        keep = _native.broadcast_to(keep, list(upd.shape))
    if x.dtype == _native.bool:
        as_int = _native.cast(upd, _native.int32)
        if keep is not None:
            as_int = _native.where(keep, as_int, _native.zeros_like(as_int))
        placed = _native.greater(_scatter_add(idx, as_int, shape, k), _native.constant(0, dtype=_native.int32))
        return _native.where(mask, placed, x)
    placed = _scatter_add(idx, upd, shape, k)
    if keep is not None:
        # A repeated index: the last update's value, while every update keeps TF's
        # gradient (the incoming one at its index), through the scatter-add above.
        last = _scatter_add(idx, _native.where(keep, upd, _native.zeros_like(upd)), shape, k)
        placed = placed - _native.stop_gradient(placed - last)
    return _native.where(mask, placed, x)


def _tensor_scatter_minmax(tensor: Any, indices: Any, updates: Any, op: str) -> Any:
    x, idx, upd, k = _tensor_scatter(tensor, indices, updates, op)
    if x.dtype.is_complex or x.dtype == _native.bool:
        raise errors.InvalidArgumentError(f"{op} takes real numbers, got {x.dtype.name} [Op:{op}]")
    shape = list(x.shape)
    pick = _native.maximum if op == "TensorScatterMax" else _native.minimum
    n = int(np.prod(idx.shape[:-1], dtype=np.int64))
    # Eager: repeated indices are applied one occurrence at a time; traced indices are
    # taken as distinct.
    layers = _occurrence_layers(idx, k) or [np.arange(n)]
    xs = _native.stop_gradient(x)
    us = _native.stop_gradient(upd)
    out = xs
    for rows in layers:
        i_l, u_l = _take_updates(idx, us, rows) if len(layers) > 1 else (idx, us)
        placed = _scatter_add(i_l, u_l, shape, k)
        out = _native.where(_mask(i_l, shape, k), pick(out, placed), out)
    if x.dtype.is_integer:
        return out
    # TF's gradient: shared equally among the elements equal to the result. As a
    # value, x·cx + scatter(u·cu) with the shares held constant is the result itself.
    x_ind = _native.cast(_native.equal(xs, out), x.dtype)
    u_ind = _native.cast(_native.equal(us, _native.gather_nd(out, idx)), x.dtype)
    count = x_ind + _scatter_add(idx, u_ind, shape, k)
    cx = _native.stop_gradient(x_ind / count)
    cu = _native.stop_gradient(u_ind / _native.gather_nd(count, idx))
    return x * cx + _scatter_add(idx, upd * cu, shape, k)


def tensor_scatter_nd_max(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Any:
    """``tensor`` with each position at ``indices`` replaced by the largest of its value
    and the updates there. TF equivalent: ``tf.tensor_scatter_nd_max`` (gradient shared
    among the elements equal to the maximum, as TF's). Eager indices.

    >>> import gradtape as gt
    >>> print(gt.tensor_scatter_nd_max([1.0, 5.0], [[0], [1], [0]], [3.0, 2.0, 4.0]))
    gt.Tensor([4. 5.], shape=(2,), dtype=float32)
    """
    del name
    return _tensor_scatter_minmax(tensor, indices, updates, "TensorScatterMax")


def tensor_scatter_nd_min(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Any:
    """``tensor`` with each position at ``indices`` replaced by the smallest of its value
    and the updates there. TF equivalent: ``tf.tensor_scatter_nd_min``.

    >>> import gradtape as gt
    >>> print(gt.tensor_scatter_nd_min([1.0, 5.0], [[0], [1]], [3.0, 2.0]))
    gt.Tensor([1. 2.], shape=(2,), dtype=float32)
    """
    del name
    return _tensor_scatter_minmax(tensor, indices, updates, "TensorScatterMin")


# ----------------------------------------------------------------------------- slicing


def strided_slice(input_: Any, begin: Any, end: Any, strides: Any = None, begin_mask: int = 0,
                  end_mask: int = 0, ellipsis_mask: int = 0, new_axis_mask: int = 0,
                  shrink_axis_mask: int = 0, var: Any = None, name: str | None = None) -> Any:
    """TF's ``StridedSlice`` with its masks: bit ``i`` of ``begin_mask`` / ``end_mask``
    ignores ``begin[i]`` / ``end[i]``, of ``ellipsis_mask`` makes entry ``i`` an
    ellipsis, of ``new_axis_mask`` a new axis, of ``shrink_axis_mask`` an index that
    removes its axis. TF equivalent: ``tf.strided_slice``. Gradient: scattered back.

    >>> import gradtape as gt
    >>> x = gt.reshape(gt.range(12), [3, 4])
    >>> print(gt.strided_slice(x, [0, 1], [3, 4], [2, 2]))
    gt.Tensor(
    [[ 1  3]
     [ 9 11]], shape=(2, 2), dtype=int32)
    """
    del var, name
    x = _t(input_)
    b = _int_entries(begin, "begin")
    e = _int_entries(end, "end")
    s = [1] * len(b) if strides is None else _int_entries(strides, "strides")
    if not (len(b) == len(e) == len(s)):
        raise ValueError(
            f"Expected begin, end, and strides to be 1D equal size tensors, but got shapes "
            f"[{len(b)}], [{len(e)}], and [{len(s)}] instead."
        )
    for m in (begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask):
        if not isinstance(m, (int, np.integer)) or isinstance(m, bool):
            raise TypeError(f"masks must be integers, got {m!r}")
    if bin(int(ellipsis_mask) & ((1 << max(len(b), 1)) - 1)).count("1") > 1 or bin(int(ellipsis_mask)).count("1") > 1:
        raise ValueError("Multiple ellipses in slice spec not allowed")
    key: list[Any] = []
    for i in range(len(b)):
        bit = 1 << i
        if ellipsis_mask & bit:
            key.append(Ellipsis)
        elif new_axis_mask & bit:
            key.append(None)
        elif shrink_axis_mask & bit:
            key.append(b[i])
        else:
            if isinstance(s[i], int) and s[i] == 0:
                raise ValueError("strides must be non-zero")
            key.append(slice(None if begin_mask & bit else b[i], None if end_mask & bit else e[i], s[i]))
    return x[tuple(key)]


def reverse_sequence(input: Any, seq_lengths: Any, seq_axis: Any = None, batch_axis: Any = None,  # noqa: A002
                     name: str | None = None) -> Any:
    """For each example ``i`` along ``batch_axis``, its first ``seq_lengths[i]``
    elements along ``seq_axis`` reversed (the rest kept). TF equivalent:
    ``tf.reverse_sequence``. Gradient: reversed back the same way.

    >>> import gradtape as gt
    >>> print(gt.reverse_sequence([[1, 2, 3], [4, 5, 6]], [2, 3], seq_axis=1, batch_axis=0))
    gt.Tensor(
    [[2 1 3]
     [6 5 4]], shape=(2, 3), dtype=int32)
    """
    del name
    x = _t(input)
    if seq_axis is None:
        raise TypeError("reverse_sequence() missing required argument 'seq_axis'")
    batch_axis = 0 if batch_axis is None else batch_axis
    r = x.ndim
    if r < 2:
        raise errors.InvalidArgumentError(f"input must have rank at least 2, got {r} [Op:ReverseSequence]")
    sa = _axis(int(seq_axis), r, "ReverseSequence")
    ba = _axis(int(batch_axis), r, "ReverseSequence")
    if sa == ba:
        raise errors.InvalidArgumentError(f"seq_dim == batch_dim == {sa} [Op:ReverseSequence]")
    L = _t(seq_lengths)
    if L.dtype not in (_native.int32, _native.int64) or L.ndim != 1 or L.shape[0] != x.shape[ba]:
        raise errors.InvalidArgumentError(
            f"seq_lengths must be a 1-D int32/int64 vector of length input.dims({ba}) = "
            f"{x.shape[ba]}, got {L.dtype.name} of shape {list(L.shape)} [Op:ReverseSequence]"
        )
    T = x.shape[sa]
    if not _symbolic(L):
        lv = np.asarray(L.numpy())
        if lv.size and (lv.min() < 0 or lv.max() > T):
            raise errors.InvalidArgumentError(
                f"seq_lens(i) must be in [0, input.dims({sa}) = {T}], got {lv.tolist()} [Op:ReverseSequence]"
            )
    perm = [ba, sa] + [k for k in range(r) if k not in (ba, sa)]
    xt = _native.transpose(x, perm)
    pos = _native.expand_dims(_iota(T), 0)  # [1, T]
    n = _native.expand_dims(_native.cast(L, _native.int64), 1)  # [B, 1]
    # Lengths 0 and 1 leave the sequence as it is (TF's rule), so does the tail.
    src = _native.where(_native.less(pos, n), n - 1 - pos, pos + 0 * n)
    y = _native.gather(xt, src, axis=1, batch_dims=1)
    return _native.transpose(y, list(np.argsort(perm)))


def unravel_index(indices: Any, dims: Any, name: str | None = None) -> Any:
    """The coordinates in an array of shape ``dims`` of flat (row-major) ``indices``
    (a scalar, or a vector: then one column per index). TF equivalent:
    ``tf.unravel_index``. Not differentiable (integers).

    >>> import gradtape as gt
    >>> print(gt.unravel_index([2, 5, 7], [3, 3]))
    gt.Tensor(
    [[0 1 2]
     [2 2 1]], shape=(2, 3), dtype=int32)
    """
    del name
    i = _t(indices)
    d = _t(dims)
    if i.dtype not in (_native.int32, _native.int64) or d.dtype != i.dtype:
        raise errors.InvalidArgumentError(
            f"indices and dims must both be int32 or int64, got {i.dtype.name} and {d.dtype.name} [Op:UnravelIndex]"
        )
    if i.ndim > 1 or d.ndim != 1:
        raise errors.InvalidArgumentError(
            f"The indices can only be scalar or vector, got shape {list(i.shape)}; "
            "dims must be a vector [Op:UnravelIndex]"
        )
    dv = _host(d, "dims")
    if (dv <= 0).any():
        raise errors.InvalidArgumentError("dims must contain positive values [Op:UnravelIndex]")
    total = int(np.prod(dv.astype(object)))
    if not _symbolic(i):
        iv = np.asarray(i.numpy())
        if iv.size and (iv.min() < 0 or iv.max() >= total):
            raise errors.InvalidArgumentError(
                f"index {int(iv.max() if iv.max() >= total else iv.min())} is out of bound as "
                f"with dims {dv.tolist()} [Op:UnravelIndex]"
            )
    rest = i
    coords = []
    for dd in reversed(dv.tolist()):
        c = _native.constant(dd, dtype=i.dtype)
        coords.append(_native.floormod(rest, c))
        rest = _native.floordiv(rest, c)
    return _native.stop_gradient(_native.stack(coords[::-1], axis=0))


# ----------------------------------------------------------------------------- shapes


def _dims_of(s: Any) -> list[int | None]:
    from ._shape import TensorShape

    if isinstance(s, TensorShape):
        return list(s.as_list()) if s.rank is not None else None  # type: ignore[return-value]
    return [None if v is None else int(v) for v in (s.numpy().tolist() if isinstance(s, _Tensor) else list(s))]


def broadcast_static_shape(shape_x: Any, shape_y: Any) -> Any:
    """The broadcast ``TensorShape`` of two shapes (unknown dimensions stay unknown
    unless the other is known and not 1). TF equivalent: ``tf.broadcast_static_shape``.

    >>> import gradtape as gt
    >>> gt.broadcast_static_shape(gt.TensorShape([1, 3]), gt.TensorShape([2, 1]))
    TensorShape([2, 3])
    """
    from ._shape import TensorShape

    a, b = _dims_of(shape_x), _dims_of(shape_y)
    if a is None or b is None:
        return TensorShape(None)
    out: list[int | None] = []
    for i in range(1, max(len(a), len(b)) + 1):
        p = a[-i] if i <= len(a) else 1
        q = b[-i] if i <= len(b) else 1
        if p is None or q is None:
            known = q if p is None else p
            out.append(None if known in (None, 1) else known)
        elif p == q or q == 1:
            out.append(p)
        elif p == 1:
            out.append(q)
        else:
            raise ValueError(
                "Incompatible shapes for broadcasting. Two shapes are compatible if for each "
                "dimension pair they are either equal or one of them is 1. Received: "
                f"{TensorShape(a)} and {TensorShape(b)}."
            )
    return TensorShape(out[::-1])


def broadcast_dynamic_shape(shape_x: Any, shape_y: Any) -> Any:
    """The broadcast shape of two shape vectors, as a tensor. TF equivalent:
    ``tf.broadcast_dynamic_shape``.

    >>> import gradtape as gt
    >>> print(gt.broadcast_dynamic_shape([1, 3], [2, 1]))
    gt.Tensor([2 3], shape=(2,), dtype=int32)
    """
    x, y = _t(shape_x), _t(shape_y)
    if x.dtype not in (_native.int32, _native.int64) or y.dtype != x.dtype:
        raise TypeError(
            f"shape_x and shape_y must both be int32 or int64 vectors, got {x.dtype.name} and {y.dtype.name}"
        )
    if x.ndim != 1 or y.ndim != 1:
        raise errors.InvalidArgumentError("shape_x and shape_y must be vectors [Op:BroadcastArgs]")
    dt = x.dtype
    a = _host(x, "shape_x").astype(np.int64).reshape(-1).tolist()
    b = _host(y, "shape_y").astype(np.int64).reshape(-1).tolist()
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        p = a[-i] if i <= len(a) else 1
        q = b[-i] if i <= len(b) else 1
        if p == q or q == 1:
            out.append(p)
        elif p == 1:
            out.append(q)
        else:
            raise errors.InvalidArgumentError(f"Incompatible shapes: {a} vs. {b} [Op:BroadcastArgs]")
    return _native.constant(np.asarray(out[::-1], np.int64), dtype=dt)


def shape_n(input: Any, out_type: Any = None, name: str | None = None) -> list[Any]:  # noqa: A002
    """The shape of each tensor of a list. TF equivalent: ``tf.shape_n``.

    >>> import gradtape as gt
    >>> [s.numpy().tolist() for s in gt.shape_n([gt.ones([2, 3]), gt.ones([4])])]
    [[2, 3], [4]]
    """
    del name
    if isinstance(input, (_Tensor, _Variable)) or not isinstance(input, (list, tuple)):
        raise TypeError("Expected list for 'input' argument to 'ShapeN' Op, not a tensor")
    kw = {} if out_type is None else {"out_type": out_type}
    return [_native.shape(_t(x), **kw) for x in input]


def identity_n(input: Any, name: str | None = None) -> list[Any]:  # noqa: A002
    """Each tensor of a list, unchanged (gradients pass through). TF equivalent:
    ``tf.identity_n``.

    >>> import gradtape as gt
    >>> [t.numpy().tolist() for t in gt.identity_n([[1.0], 2.0])]
    [[1.0], 2.0]
    """
    del name
    if isinstance(input, (_Tensor, _Variable)) or not isinstance(input, (list, tuple)):
        raise TypeError("Expected list for 'input' argument to 'IdentityN' Op, not a tensor")
    return [_native.identity(_t(x)) for x in input]


def parallel_stack(values: Any, name: str | None = None) -> Any:
    """The tensors of a list (one shape) stacked along a new first axis. TF equivalent:
    ``tf.parallel_stack`` (eager: ``tf.stack``).

    >>> import gradtape as gt
    >>> print(gt.parallel_stack([[1, 2], [3, 4]]))
    gt.Tensor(
    [[1 2]
     [3 4]], shape=(2, 2), dtype=int32)
    """
    del name
    return _native.stack(values, axis=0)


# ----------------------------------------------------------------------------- arithmetic


def realdiv(x: Any, y: Any, name: str | None = None) -> Any:
    """``x / y`` for floating-point and complex tensors (TF's CPU ``RealDiv`` has no
    integer kernel). TF equivalent: ``tf.realdiv``.

    >>> import gradtape as gt
    >>> print(gt.realdiv(7.0, 2.0))
    gt.Tensor(3.5, shape=(), dtype=float32)
    """
    del name
    a = _t(x)
    b = _t(y, a.dtype)
    if not (a.dtype.is_floating or a.dtype.is_complex):
        raise errors.InvalidArgumentError(
            f"Could not find device for node: RealDiv[T={a.dtype.name}]: RealDiv takes "
            "floating-point or complex tensors [Op:RealDiv]"
        )
    return _native.divide(a, b)


def _trunc_parts(x: Any, y: Any, op: str) -> tuple[Any, Any]:
    a = _t(x)
    b = _t(y, a.dtype)
    if a.dtype.is_complex or a.dtype == _native.bool:
        raise errors.InvalidArgumentError(f"{op} takes real numbers, got {a.dtype.name} [Op:{op}]")
    return a, b


def truncatediv(x: Any, y: Any, name: str | None = None) -> Any:
    """``x / y`` rounded toward zero (C's integer division). TF equivalent:
    ``tf.truncatediv``. Not differentiable (TF's gradient is None).

    >>> import gradtape as gt
    >>> print(gt.truncatediv([-7, 7], [2, -2]))
    gt.Tensor([-3 -3], shape=(2,), dtype=int32)
    """
    del name
    a, b = _trunc_parts(x, y, "TruncateDiv")
    a, b = _native.stop_gradient(a), _native.stop_gradient(b)
    if a.dtype.is_floating:
        q = _native.divide(a, b)
        return _native.sign(q) * _native.floor(_native.abs(q))
    if not a.dtype.is_unsigned and not _symbolic(b) and (np.asarray(b.numpy()) == 0).any():
        raise errors.InvalidArgumentError("Integer division by zero [Op:TruncateDiv]")
    q = _native.floordiv(a, b)
    # floor and truncation differ when the signs differ and the division is inexact.
    fix = _native.logical_and(
        _native.not_equal(_native.floormod(a, b), _native.zeros_like(a)),
        _native.not_equal(_native.less(a, _native.zeros_like(a)), _native.less(b, _native.zeros_like(b))),
    )
    return _native.where(fix, q + _native.ones_like(q), q)


def truncatemod(x: Any, y: Any, name: str | None = None) -> Any:
    """The remainder of :func:`truncatediv`, with the sign of ``x`` (C's ``fmod``).
    TF equivalent: ``tf.truncatemod``. Not differentiable (TF registers no gradient).

    >>> import gradtape as gt
    >>> print(gt.truncatemod([-7, 7], [2, -2]))
    gt.Tensor([-1  1], shape=(2,), dtype=int32)
    """
    del name
    a, b = _trunc_parts(x, y, "TruncateMod")
    a, b = _native.stop_gradient(a), _native.stop_gradient(b)
    if a.dtype.is_floating:
        return _native.stop_gradient(a - truncatediv(a, b) * b)
    return a - truncatediv(a, b) * b


def saturate_cast(value: Any, dtype: Any, name: str | None = None) -> Any:
    """``value`` cast to ``dtype``, clamped to the range ``dtype`` can hold first (no
    wrap-around). TF equivalent: ``tf.saturate_cast``. Gradient: that of the clamp.

    >>> import gradtape as gt
    >>> print(gt.saturate_cast([-5.0, 300.0, 20.5], gt.uint8))
    gt.Tensor([  0 255  20], shape=(3,), dtype=uint8)
    """
    del name
    from .dtypes import as_dtype

    x = _t(value)
    to = as_dtype(dtype)
    if x.dtype.is_complex and not to.is_complex:
        x = _native.real(x)
    src = x.dtype
    if src == _native.bool or to == _native.bool:
        return _native.cast(x, to)

    def limits(d: Any) -> tuple[float, float]:
        nd = np.dtype({"complex64": "float32", "complex128": "float64"}.get(d.name, d.name))
        info = np.finfo(nd) if nd.kind == "f" else np.iinfo(nd)
        return float(info.min), float(info.max)

    lo_s, hi_s = limits(src)
    lo_t, hi_t = limits(to)
    if src.is_complex:
        return _native.cast(x, to)
    if lo_t > lo_s:
        x = _native.maximum(x, _native.cast(_native.constant(lo_t, dtype=_native.float64), src))
    if hi_t < hi_s:
        hi = _native.constant(hi_t, dtype=_native.float64)
        if src.is_floating and not to.is_floating:
            # The largest value of ``src`` not above the target's maximum.
            hv = np.asarray(hi_t, np.dtype(src.name))
            if float(hv) > hi_t:
                hv = np.nextafter(hv, np.asarray(-np.inf, hv.dtype))
            hi = _native.constant(hv)
        x = _native.minimum(x, _native.cast(hi, src))
    return _native.cast(x, to)


# ----------------------------------------------------------------------------- space <-> depth / batch


def _block(block_size: Any) -> int:
    if not isinstance(block_size, (int, np.integer)) or isinstance(block_size, bool):
        raise TypeError(f"block_size must be an int, got {block_size!r}")
    if block_size < 2:
        raise errors.InvalidArgumentError(f"Value for attr 'block_size' of {block_size} must be at least minimum 2")
    return int(block_size)


def _check_nhwc(x: Any, data_format: str, op: str) -> None:
    if data_format != "NHWC":
        raise errors.InvalidArgumentError(f"{op}: only data_format='NHWC' is supported, got {data_format!r}")
    if x.ndim != 4:
        raise errors.InvalidArgumentError(f"input rank should be 4 instead of {x.ndim} [Op:{op}]")


def space_to_depth(input: Any, block_size: int, data_format: str = "NHWC", name: str | None = None) -> Any:  # noqa: A002
    """Non-overlapping ``block_size × block_size`` spatial blocks moved into the depth
    axis: ``[b, h, w, c] → [b, h/bs, w/bs, bs·bs·c]``. TF equivalent:
    ``tf.nn.space_to_depth``. Gradient: :func:`depth_to_space`.

    >>> import gradtape as gt
    >>> print(gt.nn.space_to_depth(gt.reshape(gt.range(4), [1, 2, 2, 1]), 2))
    gt.Tensor([[[[0 1 2 3]]]], shape=(1, 1, 1, 4), dtype=int32)
    """
    del name
    x = _t(input)
    bs = _block(block_size)
    _check_nhwc(x, data_format, "SpaceToDepth")
    b, h, w, c = x.shape
    if h % bs or w % bs:
        raise errors.InvalidArgumentError(
            f"Image width {w} and height {h} should be divisible by block_size: {bs} [Op:SpaceToDepth]"
        )
    y = _native.reshape(x, [b, h // bs, bs, w // bs, bs, c])
    y = _native.transpose(y, [0, 1, 3, 2, 4, 5])
    return _native.reshape(y, [b, h // bs, w // bs, bs * bs * c])


def depth_to_space(input: Any, block_size: int, data_format: str = "NHWC", name: str | None = None) -> Any:  # noqa: A002
    """The inverse of :func:`space_to_depth`: ``[b, h, w, bs·bs·c] → [b, h·bs, w·bs, c]``.
    TF equivalent: ``tf.nn.depth_to_space``.

    >>> import gradtape as gt
    >>> print(gt.reshape(gt.nn.depth_to_space(gt.reshape(gt.range(4), [1, 1, 1, 4]), 2), [2, 2]))
    gt.Tensor(
    [[0 1]
     [2 3]], shape=(2, 2), dtype=int32)
    """
    del name
    x = _t(input)
    bs = _block(block_size)
    _check_nhwc(x, data_format, "DepthToSpace")
    b, h, w, c = x.shape
    if c % (bs * bs):
        raise errors.InvalidArgumentError(
            f"Input depth dimension {c} should be divisible by: {bs * bs} [Op:DepthToSpace]"
        )
    y = _native.reshape(x, [b, h, w, bs, bs, c // (bs * bs)])
    y = _native.transpose(y, [0, 1, 3, 2, 4, 5])
    return _native.reshape(y, [b, h * bs, w * bs, c // (bs * bs)])


def _blocks_and_pads(x: Any, block_shape: Any, pads: Any, what: str, op: str) -> tuple[list[int], np.ndarray]:
    bsh = _int_list(block_shape, "block_shape")
    p = _host(pads, what)
    if p.dtype.kind not in "iu":
        raise TypeError(f"{what} must be integers, got {p.dtype}")
    m = len(bsh)
    if p.shape != (m, 2):
        raise errors.InvalidArgumentError(f"{what} should have shape [{m}, 2] instead of {list(p.shape)} [Op:{op}]")
    if m == 0 or x.ndim < 1 + m:
        raise errors.InvalidArgumentError(f"input rank should be >= {1 + m} instead of {x.ndim} [Op:{op}]")
    if any(b < 1 for b in bsh):
        raise errors.InvalidArgumentError(f"block_shape must be positive, got {bsh} [Op:{op}]")
    if (p < 0).any():
        raise errors.InvalidArgumentError(f"{what} must be non-negative, got {p.tolist()} [Op:{op}]")
    return bsh, p.astype(np.int64)


def space_to_batch_nd(input: Any, block_shape: Any, paddings: Any, name: str | None = None) -> Any:  # noqa: A002
    """Zero-pads the ``M`` spatial axes after the batch axis by ``paddings``, then moves
    ``block_shape`` blocks of them into the batch axis. TF equivalent:
    ``tf.space_to_batch_nd``. Gradient: :func:`batch_to_space` of it.

    >>> import gradtape as gt
    >>> print(gt.space_to_batch_nd(gt.reshape(gt.range(4), [1, 2, 2, 1]), [2, 2], [[0, 0], [0, 0]])[:, 0, 0, 0])
    gt.Tensor([0 1 2 3], shape=(4,), dtype=int32)
    """
    del name
    x = _t(input)
    bsh, p = _blocks_and_pads(x, block_shape, paddings, "paddings", "SpaceToBatchND")
    m = len(bsh)
    full = np.zeros((x.ndim, 2), np.int64)
    full[1:1 + m] = p
    if full.any():
        x = _native.pad(x, full)
    shape = list(x.shape)
    b, spatial, rest = shape[0], shape[1:1 + m], shape[1 + m:]
    for i, (s, k) in enumerate(zip(spatial, bsh)):
        if s % k:
            raise errors.InvalidArgumentError(
                f"padded_shape[{i}]={s} is not divisible by block_shape[{i}]={k} [Op:SpaceToBatchND]"
            )
    split = [b]
    for s, k in zip(spatial, bsh):
        split += [s // k, k]
    y = _native.reshape(x, split + rest)
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)]
    perm += list(range(1 + 2 * m, 1 + 2 * m + len(rest)))
    y = _native.transpose(y, perm)
    return _native.reshape(y, [b * int(np.prod(bsh))] + [s // k for s, k in zip(spatial, bsh)] + rest)


def batch_to_space(input: Any, block_shape: Any, crops: Any, name: str | None = None) -> Any:  # noqa: A002
    """The inverse of :func:`space_to_batch_nd`: batch blocks moved back into the
    spatial axes, then ``crops`` removed. TF equivalent: ``tf.batch_to_space``.

    >>> import gradtape as gt
    >>> x = gt.reshape(gt.range(4), [4, 1, 1, 1])
    >>> print(gt.reshape(gt.batch_to_space(x, [2, 2], [[0, 0], [0, 0]]), [2, 2]))
    gt.Tensor(
    [[0 1]
     [2 3]], shape=(2, 2), dtype=int32)
    """
    del name
    x = _t(input)
    bsh, c = _blocks_and_pads(x, block_shape, crops, "crops", "BatchToSpaceND")
    m = len(bsh)
    shape = list(x.shape)
    prod = int(np.prod(bsh))
    if shape[0] % prod:
        raise errors.InvalidArgumentError(
            f"Input batch dimension ({shape[0]}) is not divisible by product of block sizes "
            f"({prod}) [Op:BatchToSpaceND]"
        )
    b = shape[0] // prod
    spatial, rest = shape[1:1 + m], shape[1 + m:]
    y = _native.reshape(x, bsh + [b] + spatial + rest)
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(1 + 2 * m, 1 + 2 * m + len(rest)))
    y = _native.transpose(y, perm)
    big = [s * k for s, k in zip(spatial, bsh)]
    y = _native.reshape(y, [b] + big + rest)
    for i in range(m):
        lo, hi = int(c[i, 0]), int(c[i, 1])
        if lo + hi > big[i]:
            raise errors.InvalidArgumentError(
                f"Crops {lo}, {hi} exceed the size {big[i]} of dimension {i + 1} [Op:BatchToSpaceND]"
            )
    begin = [0] + [int(c[i, 0]) for i in range(m)] + [0] * len(rest)
    size = [b] + [big[i] - int(c[i, 0]) - int(c[i, 1]) for i in range(m)] + rest
    return _native.slice(y, begin, size)


# ----------------------------------------------------------------------------- scan


def scan(fn: Any, elems: Any, initializer: Any = None, parallel_iterations: int = 10,
         back_prop: bool = True, swap_memory: bool = False, infer_shape: bool = True,
         reverse: bool = False, name: str | None = None) -> Any:
    """Every intermediate accumulator of ``fn`` applied along axis 0 of ``elems`` (a
    tensor or nested structure), stacked: ``out[i] = fn(out[i-1], elems[i])``; without
    an initializer ``out[0] = elems[0]`` and the accumulator has the structure of
    ``elems``. ``reverse=True`` scans from the last element (outputs stay at their
    positions). Unrolled, eagerly and inside a trace; differentiable through ``fn``.
    TF equivalent: ``tf.scan``.

    >>> import gradtape as gt
    >>> print(gt.scan(lambda a, x: a + x, gt.constant([1, 2, 3, 4])))
    gt.Tensor([ 1  3  6 10], shape=(4,), dtype=int32)
    """
    del parallel_iterations, back_prop, swap_memory, infer_shape, name
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    flat = [_t(e) for e in _nest.flatten(elems)]
    if not flat:
        raise ValueError("elems must be a tensor or a non-empty structure of tensors")
    if any(e.ndim == 0 for e in flat):
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
    outs: dict[int, Any] = {}
    if initializer is None:
        if n == 0:
            raise errors.InvalidArgumentError("elems is empty (its first dimension is 0) and no initializer is given")
        a = elem(order[0])
        outs[order[0]] = a
        order = order[1:]
    else:
        a = _nest.map_structure(_t, initializer)
    for i in order:
        a = fn(a, elem(i))
        outs[i] = a
    template = a
    if not outs:
        # No steps: empty stacks with the accumulator's structure.
        return _nest.map_structure(lambda t: _native.zeros([0, *_t(t).shape], dtype=_t(t).dtype), template)
    per = [_nest.flatten(outs[i]) for i in range(n)]
    stacked = [_native.stack([_t(p[j]) for p in per], axis=0) for j in range(len(per[0]))]
    return _nest.pack_sequence_as(template, stacked) if _nest.is_nested(template) else stacked[0]


__all__ = [
    "argsort", "batch_to_space", "broadcast_dynamic_shape", "broadcast_static_shape",
    "depth_to_space", "identity_n", "meshgrid", "parallel_stack", "realdiv", "reverse",
    "reverse_sequence", "roll", "saturate_cast", "scan", "scatter_nd", "searchsorted",
    "sequence_mask", "shape_n", "sort", "space_to_batch_nd", "space_to_depth",
    "strided_slice", "tensor_scatter_nd_add", "tensor_scatter_nd_max", "tensor_scatter_nd_min",
    "tensor_scatter_nd_sub", "tensor_scatter_nd_update", "truncatediv", "truncatemod",
    "unique", "unique_with_counts", "unravel_index",
]
