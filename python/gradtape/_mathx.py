"""More of ``tf.math`` (issue 14), written in Python with public ops: reductions and
helpers that TF itself composes of other ops (``count_nonzero``, ``zero_fraction``,
``polyval``, ``scalar_mul``, ``in_top_k``, ``confusion_matrix``), ``top_k`` (native
indices, values gathered so that the gradient scatters back to them), and the
integer utilities ``bincount``, ``invert_permutation``, ``is_non_decreasing`` and
``is_strictly_increasing``.

Each differentiable one is differentiable because its parts are, with TF's gradients:
``top_k``'s gradient goes to the positions of the values it picked, ``polyval``'s and
``reduce_euclidean_norm``'s follow from their compositions (as TF's do).
"""

from __future__ import annotations

import collections
import json
from typing import Any

import numpy as np

from . import _gradtape as _native
from . import errors

_Tensor = _native.Tensor
_Variable = _native.Variable

TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


def _tensor(x: Any, dtype: Any = None) -> Any:
    if isinstance(x, _Tensor) and dtype is None:
        return x
    return _native.convert_to_tensor(x, dtype=dtype)


def _values(t: Any) -> np.ndarray:
    """The value of a tensor argument that must be known (ids, counts, labels)."""
    return np.asarray(t.numpy() if isinstance(t, (_Tensor, _Variable)) else t)


def _known(t: Any) -> np.ndarray | None:
    """The value of ``t``, or None for a tensor computed inside a ``gt.function`` trace."""
    if isinstance(t, _Tensor) and _native._is_symbolic(t):
        return None
    return _values(t)


def scalar_mul(scalar: Any, x: Any, name: str | None = None) -> Any:
    """``scalar * x`` for a 0-D ``scalar`` (converted to ``x``'s dtype); a
    ``gt.IndexedSlices`` stays one, its values scaled. TF equivalent: ``tf.math.scalar_mul``.

    >>> import gradtape as gt
    >>> print(gt.math.scalar_mul(2.0, gt.constant([1.0, 2.0])))
    gt.Tensor([2. 4.], shape=(2,), dtype=float32)
    """
    del name
    from ._indexed_slices import IndexedSlices

    sparse = isinstance(x, IndexedSlices)
    target = x.values if sparse else _tensor(x)
    s = _tensor(scalar, dtype=target.dtype)
    if s.ndim != 0:
        raise ValueError(f"The input scalar must be a 0-D value. Received shape {tuple(s.shape)}.")
    if sparse:
        return IndexedSlices(_native.multiply(s, target), x.indices, x.dense_shape)
    return _native.multiply(s, target)


def count_nonzero(
    input: Any,  # noqa: A002
    axis: Any = None,
    keepdims: bool | None = None,
    dtype: Any = "int64",
    name: str | None = None,
) -> Any:
    """The number of non-zero (non-False) elements, over ``axis`` (all by default), as
    ``dtype`` (int64 by default). TF equivalent: ``tf.math.count_nonzero``.

    >>> import gradtape as gt
    >>> print(gt.math.count_nonzero(gt.constant([[0.0, 1.0], [2.0, 0.0]]), axis=1))
    gt.Tensor([1 1], shape=(2,), dtype=int64)
    """
    del name
    x = _tensor(input)
    nz = _native.cast(_native.not_equal(x, _native.zeros_like(x)), "int64")
    return _native.cast(_native.reduce_sum(nz, axis=axis, keepdims=bool(keepdims)), dtype)


def reduce_euclidean_norm(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Any:
    """``sqrt(sum(|x|**2))`` over ``axis`` (all by default), in ``x``'s dtype (integers:
    the truncated root, as TF). Gradient ``dy * x / norm`` (NaN at a zero norm, as TF's).
    TF equivalent: ``tf.math.reduce_euclidean_norm``.

    >>> import gradtape as gt
    >>> print(gt.math.reduce_euclidean_norm(gt.constant([[3.0, 4.0], [0.0, 1.0]]), axis=1))
    gt.Tensor([5. 1.], shape=(2,), dtype=float32)
    """
    del name
    x = _tensor(input_tensor)
    dt = x.dtype
    if dt.is_integer:
        w = _native.cast(x, "float64")
        s = _native.reduce_sum(_native.multiply(w, w), axis=axis, keepdims=keepdims)
        return _native.cast(_native.floor(_native.sqrt(s)), dt)
    sq = _native.multiply(x, _native.conj(x)) if dt.is_complex else _native.multiply(x, x)
    return _native.sqrt(_native.reduce_sum(sq, axis=axis, keepdims=keepdims))


def zero_fraction(value: Any, name: str | None = None) -> Any:
    """The fraction of elements of ``value`` that are zero, as a float32 scalar.
    TF equivalent: ``tf.math.zero_fraction``.

    >>> import gradtape as gt
    >>> print(gt.math.zero_fraction(gt.constant([0.0, 1.0, 0.0, 3.0])))
    gt.Tensor(0.5, shape=(), dtype=float32)
    """
    del name
    x = _tensor(value)
    zero = _native.cast(_native.equal(x, _native.zeros_like(x)), "float32")
    return _native.reduce_mean(zero)


def polyval(coeffs: Any, x: Any, name: str | None = None) -> Any:
    """The polynomial ``coeffs[0] * x**(n-1) + ... + coeffs[n-1]`` at ``x`` (Horner's
    rule, as TF: differentiable in the coefficients and ``x``); zeros for no
    coefficients. TF equivalent: ``tf.math.polyval``.

    >>> import gradtape as gt
    >>> print(gt.math.polyval([1.0, 2.0, 3.0], gt.constant([2.0, 3.0])))
    gt.Tensor([11. 18.], shape=(2,), dtype=float32)
    """
    del name
    if not isinstance(coeffs, (list, tuple)):
        raise ValueError(f"Argument coeffs must be list type found {type(coeffs)}.")
    x = _tensor(x)
    if not coeffs:
        return _native.zeros_like(x)
    cs = [_tensor(c, dtype=x.dtype) for c in coeffs]
    p = cs[0]
    for c in cs[1:]:
        p = _native.add(c, _native.multiply(p, x))
    return p


def invert_permutation(x: Any, name: str | None = None) -> Any:
    """The inverse of the permutation ``x`` (1-D int32 or int64): ``y[x[i]] = i``. Not
    differentiable. TF equivalent: ``tf.math.invert_permutation``.

    >>> import gradtape as gt
    >>> print(gt.math.invert_permutation([3, 4, 0, 2, 1]))
    gt.Tensor([2 4 3 0 1], shape=(5,), dtype=int32)
    """
    del name
    t = _tensor(x)
    if t.dtype.name not in ("int32", "int64"):
        raise errors.InvalidArgumentError(
            f"Value for attr 'T' of {t.dtype.name} is not in the list of allowed values: int32, int64"
        )
    if t.ndim != 1:
        raise errors.InvalidArgumentError(f"invert_permutation expects a 1D vector, got shape {list(t.shape)}")
    if _native._is_symbolic(t):
        # Traced: TF's checks at every call of the graph, and the inverse, which is
        # the permutation's (stable) argsort, as a sort node.
        from ._array_ops import _argsort_last

        _native._effect(lambda vs: _inverse_permutation(np.asarray(vs[0].numpy())), [t], None)
        return _native.cast(_argsort_last(_native.stop_gradient(t), False), t.dtype)
    return _native.constant(_inverse_permutation(_values(t)), dtype=t.dtype)


def _inverse_permutation(v: np.ndarray) -> np.ndarray:
    """``v``'s inverse, or TF's ``InvalidArgumentError`` when ``v`` is no permutation."""
    n = v.shape[0]
    out = np.full(n, -1, dtype=v.dtype)
    for i, d in enumerate(v.tolist()):
        if not 0 <= d < n:
            raise errors.InvalidArgumentError(f"{d} is not between 0 and {n}")
        if out[d] != -1:
            raise errors.InvalidArgumentError(f"{d} is duplicated in the input.")
        out[d] = i
    return out


def _monotonic(x: Any, strict: bool) -> Any:
    t = _tensor(x)
    if t.dtype.is_complex or t.dtype.name in ("bool", "string"):
        raise TypeError(f"Expected x to be numeric, instead found: {t.dtype.name}")
    flat = _native.reshape(t, [-1])
    if flat.shape[0] < 2:
        return _native.constant(True)
    cmp = _native.less if strict else _native.less_equal
    return _native.reduce_all(cmp(flat[:-1], flat[1:]))


def is_non_decreasing(x: Any, name: str | None = None) -> Any:
    """Whether ``x`` (flattened) never decreases (True for fewer than two elements).
    TF equivalent: ``tf.math.is_non_decreasing``.

    >>> import gradtape as gt
    >>> print(gt.math.is_non_decreasing([1, 2, 2]))
    gt.Tensor(True, shape=(), dtype=bool)
    """
    del name
    return _monotonic(x, strict=False)


def is_strictly_increasing(x: Any, name: str | None = None) -> Any:
    """Whether ``x`` (flattened) always increases (True for fewer than two elements).
    TF equivalent: ``tf.math.is_strictly_increasing``.

    >>> import gradtape as gt
    >>> print(gt.math.is_strictly_increasing([1, 2, 2]))
    gt.Tensor(False, shape=(), dtype=bool)
    """
    del name
    return _monotonic(x, strict=True)


def top_k(input: Any, k: Any = 1, sorted: bool = True, index_type: Any = "int32", name: str | None = None) -> Any:  # noqa: A002
    """The ``k`` largest entries of each last-axis row of ``input`` and their positions,
    as the namedtuple ``(values, indices)``: largest first (equal values by position)
    when ``sorted``, else in position order. The gradient goes to the positions
    picked. TF equivalent: ``tf.math.top_k`` / ``tf.nn.top_k``.

    >>> import gradtape as gt
    >>> values, indices = gt.math.top_k(gt.constant([1.0, 3.0, 2.0, 3.0]), k=2)
    >>> print(values, indices)
    gt.Tensor([3. 3.], shape=(2,), dtype=float32) gt.Tensor([1 3], shape=(2,), dtype=int32)
    """
    del name
    x = _tensor(input)
    if x.dtype.is_complex or x.dtype.name == "bool":
        raise errors.InvalidArgumentError(f"top_k does not support dtype {x.dtype.name}")
    idx = _native._top_k_indices(x, k, bool(sorted))
    # Gathered as rows of a 2-D batch (a dense gradient, as TF's TopKV2 rule gives; a
    # 1-D gather would give IndexedSlices).
    lead = int(np.prod(tuple(x.shape)[:-1], dtype=np.int64))
    rows = _native.reshape(x, [lead, x.shape[-1]])
    picked = _native.gather(rows, _native.reshape(idx, [lead, idx.shape[-1]]), batch_dims=1)
    values = _native.reshape(picked, list(idx.shape))
    index_type = _native.as_dtype(index_type) if hasattr(_native, "as_dtype") else index_type
    if getattr(index_type, "name", index_type) == "int64":
        idx = _native.cast(idx, "int64")
    return TopKV2(values, idx)


def in_top_k(targets: Any, predictions: Any, k: Any, name: str | None = None) -> Any:
    """Per row ``i``, whether ``predictions[i, targets[i]]`` is among the ``k`` largest
    of the row (ties at the boundary count as in; a non-finite row or an out-of-range
    target gives False). TF equivalent: ``tf.math.in_top_k``.

    >>> import gradtape as gt
    >>> print(gt.math.in_top_k([1, 2], gt.constant([[0.1, 0.9, 0.0], [0.3, 0.3, 0.3]]), k=1))
    gt.Tensor([ True  True], shape=(2,), dtype=bool)
    """
    del name
    p = _tensor(predictions)
    t = _tensor(targets)
    if p.ndim != 2:
        raise errors.InvalidArgumentError(f"predictions must be 2-dimensional, got shape {list(p.shape)}")
    if t.ndim != 1 or t.shape[0] != p.shape[0]:
        raise errors.InvalidArgumentError(
            f"First dimension of predictions {p.shape[0]} must match length of targets {list(t.shape)}"
        )
    n = p.shape[1]
    valid = _native.logical_and(
        _native.greater_equal(t, _native.zeros_like(t)), _native.less(t, _native.constant(n, dtype=t.dtype))
    )
    safe = _native.where(valid, t, _native.zeros_like(t))
    if n == 0:
        return _native.zeros_like(valid)
    pt = _native.gather(p, safe, batch_dims=1)
    above = _native.greater(p, _native.expand_dims(pt, 1))
    count = _native.reduce_sum(_native.cast(above, "int64"), axis=1)
    kt = _native.cast(_tensor(k), "int64")
    finite = _native.reduce_all(_native.is_finite(p), axis=1)
    return _native.logical_and(_native.logical_and(valid, finite), _native.less(count, kt))


def confusion_matrix(
    labels: Any,
    predictions: Any,
    num_classes: Any = None,
    weights: Any = None,
    dtype: Any = "int32",
    name: str | None = None,
) -> Any:
    """The ``num_classes x num_classes`` matrix whose ``[i, j]`` entry counts (or sums
    the ``weights`` of) the examples with label ``i`` and prediction ``j``; by default
    ``num_classes`` is one more than the largest label or prediction (inside a
    ``gt.function``, found when the graph runs, with the bound and sign checks).
    Differentiable in ``weights``. TF equivalent: ``tf.math.confusion_matrix``.

    >>> import gradtape as gt
    >>> print(gt.math.confusion_matrix([0, 1, 1], [0, 1, 0]))
    gt.Tensor(
    [[1 0]
     [1 1]], shape=(2, 2), dtype=int32)
    """
    del name
    lab_t, pre_t = _tensor(labels), _tensor(predictions)
    lv, pv = _known(lab_t), _known(pre_t)
    lab = _native.cast(lab_t, "int64")
    pre = _native.cast(pre_t, "int64")
    if lab.ndim != 1 or pre.ndim != 1 or lab.shape[0] != pre.shape[0]:
        raise errors.InvalidArgumentError(
            f"labels and predictions must be vectors of one length, got {list(lab.shape)} and {list(pre.shape)}"
        )
    for v, what in ((lv, "labels"), (pv, "predictions")):
        if v is not None and (v < 0).any():
            raise errors.InvalidArgumentError(f"`{what}` contains negative values.")
    symbolic_n = num_classes is not None and _known(_tensor(num_classes)) is None
    if lv is None or pv is None or symbolic_n:
        return _confusion_matrix_traced(lab, pre, num_classes, weights, dtype)
    if num_classes is None:
        n = int(max(lv.max(initial=-1), pv.max(initial=-1))) + 1
    else:
        n = int(_values(num_classes))
        for v, what in ((lv, "labels"), (pv, "predictions")):
            if v is not None and (v >= n).any():
                raise errors.InvalidArgumentError(f"`{what}` out of bound.")
    if weights is None:
        w = _native.ones(list(lab.shape), dtype=dtype)
    else:
        w = _native.cast(_tensor(weights), dtype)
    index = _native.add(_native.multiply(lab, _native.constant(n, dtype="int64")), pre)
    flat = _native.unsorted_segment_sum(w, index, n * n)
    return _native.reshape(flat, [n, n])


def _assert_node(cond: Any, message: str) -> None:
    """TF's run-time check in a graph: raises ``InvalidArgumentError(message)`` at a call
    where some element of ``cond`` is false."""
    _native._assert(cond, [], json.dumps({"message": message, "names": []}))


def _confusion_matrix_traced(lab: Any, pre: Any, num_classes: Any, weights: Any, dtype: Any) -> Any:
    """``confusion_matrix`` of labels or predictions (or a class count) computed inside a
    trace: the class count is a tensor when the graph runs, and the matrix is
    ``one_hot(labels)^T @ (one_hot(predictions) * weights)``, in float64 (exact counts)."""
    zero = _native.constant(0, dtype="int64")
    _assert_node(_native.greater_equal(lab, zero), "`labels` contains negative values.")
    _assert_node(_native.greater_equal(pre, zero), "`predictions` contains negative values.")
    if num_classes is None:
        both = _native.concat([lab, pre, _native.constant([-1], dtype="int64")], 0)
        n = _native.add(_native.reduce_max(both), _native.constant(1, dtype="int64"))
    else:
        n = _native.cast(_tensor(num_classes), "int64")
        _assert_node(_native.less(lab, n), "`labels` out of bound.")
        _assert_node(_native.less(pre, n), "`predictions` out of bound.")
    rows = _native.one_hot(lab, n, dtype="float64")
    cols = _native.one_hot(pre, n, dtype="float64")
    if weights is not None:
        cols = _native.multiply(cols, _native.expand_dims(_native.cast(_tensor(weights), "float64"), -1))
    return _native.cast(_native.matmul(rows, cols, transpose_a=True), dtype)


def bincount(
    arr: Any,
    weights: Any = None,
    minlength: Any = None,
    maxlength: Any = None,
    dtype: Any = "int32",
    name: str | None = None,
    axis: Any = None,
    binary_output: bool = False,
) -> Any:
    """Counts of each value in the non-negative integer ``arr`` (or sums of their
    ``weights``): ``max(max(arr) + 1, minlength)`` bins, at most ``maxlength`` (larger
    values are not counted); ``axis=-1`` counts each row of a 2-D ``arr`` apart;
    ``binary_output`` gives 1 for any count. Inside a ``gt.function`` the values may be
    computed by the trace: the bin count is then found when the graph runs (and a
    negative value raises ``InvalidArgumentError`` then). Not differentiable.
    TF equivalent: ``tf.math.bincount``.

    >>> import gradtape as gt
    >>> print(gt.math.bincount([1, 1, 3], minlength=5))
    gt.Tensor([0 2 0 1 0], shape=(5,), dtype=int32)
    """
    del name
    at = _tensor(arr)
    if any(
        isinstance(v, _Tensor) and _native._is_symbolic(v) for v in (at, weights, minlength, maxlength)
    ):
        return _bincount_traced(at, weights, minlength, maxlength, dtype, axis, binary_output)
    a = _values(at)
    if a.dtype.kind not in "iu":
        raise errors.InvalidArgumentError(f"bincount: arr must be integers, got {a.dtype}")
    if a.size and a.min() < 0:
        raise errors.InvalidArgumentError("Input arr must be non-negative!")
    if axis not in (None, 0, -1):
        raise errors.InvalidArgumentError(f"Unsupported axis value {axis}; only 0, -1 and None are")
    w = None
    out_dtype = _native.as_dtype(dtype).name if hasattr(_native, "as_dtype") else getattr(dtype, "name", dtype)
    if weights is not None:
        wt = _tensor(weights)
        w = _values(wt)
        out_dtype = wt.dtype.name
        if w.shape != a.shape:
            raise errors.InvalidArgumentError(
                f"Got arr.shape = {list(a.shape)} and weights.shape = {list(w.shape)}: they must match"
            )
    size = int(a.max()) + 1 if a.size else 0
    if minlength is not None:
        size = max(size, int(_values(minlength)))
    if maxlength is not None:
        size = min(size, int(_values(maxlength)))
    rows = a.reshape(-1, a.shape[-1] if a.ndim else 1) if axis == -1 else a.reshape(1, -1)
    wrows = None if w is None else w.reshape(rows.shape)
    out = np.zeros((rows.shape[0], size), dtype=np.float64 if w is not None else np.int64)
    for r in range(rows.shape[0]):
        keep = rows[r] < size
        np.add.at(out[r], rows[r][keep], 1 if wrows is None else wrows[r][keep])
    if binary_output:
        out = (out != 0).astype(out.dtype)
    if axis != -1:
        out = out[0]
    return _native.constant(out.astype(np.dtype(out_dtype)), dtype=out_dtype)


def _bincount_traced(at: Any, weights: Any, minlength: Any, maxlength: Any, dtype: Any, axis: Any,
                     binary_output: bool) -> Any:
    """``bincount`` of values computed inside a trace: the bin count is a tensor when the
    graph runs (``max(arr) + 1``, bounded by ``minlength`` / ``maxlength``), and the counts
    are sums of one-hot rows (a value past the last bin has an all-zero row)."""
    if not at.dtype.is_integer:
        raise errors.InvalidArgumentError(f"bincount: arr must be integers, got {at.dtype.name}")
    if axis not in (None, 0, -1):
        raise errors.InvalidArgumentError(f"Unsupported axis value {axis}; only 0, -1 and None are")
    a = _native.cast(at, "int64")
    _assert_node(_native.greater_equal(a, _native.constant(0, dtype="int64")), "Input arr must be non-negative!")
    flat = _native.reshape(a, [-1])
    size = _native.add(
        _native.reduce_max(_native.concat([flat, _native.constant([-1], dtype="int64")], 0)),
        _native.constant(1, dtype="int64"),
    )
    if minlength is not None:
        size = _native.maximum(size, _native.cast(_tensor(minlength), "int64"))
    if maxlength is not None:
        size = _native.minimum(size, _native.cast(_tensor(maxlength), "int64"))
    if axis == -1 and at.ndim and at.shape[-1] is None:
        last = _native.shape(a)[-1:]
        rows = _native.reshape(a, _native.concat([_native.constant([-1]), last], 0))
    elif axis == -1:
        rows = _native.reshape(a, [-1, at.shape[-1] if at.ndim else 1])
    else:
        rows = _native.reshape(a, [1, -1])
    out_dtype = dtype
    hot = _native.one_hot(rows, size, dtype="float64")
    if weights is not None:
        wt = _tensor(weights)
        if tuple(wt.shape) != tuple(at.shape):
            raise errors.InvalidArgumentError(
                f"Got arr.shape = {list(at.shape)} and weights.shape = {list(wt.shape)}: they must match"
            )
        out_dtype = wt.dtype
        hot = _native.multiply(hot, _native.expand_dims(_native.reshape(_native.cast(wt, "float64"),
                                                                        _native.shape(rows)), -1))
    out = _native.reduce_sum(hot, axis=1)
    if binary_output:
        out = _native.cast(_native.not_equal(out, _native.constant(0.0, dtype="float64")), "float64")
    if axis != -1:
        out = out[0]
    return _native.cast(out, out_dtype)
