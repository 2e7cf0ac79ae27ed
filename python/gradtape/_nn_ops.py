"""``tf.nn`` and ``tf.linalg`` functions (issue 14) that TF itself writes as
compositions of other ops, written here the same way with engine ops: bias_add,
moments / weighted_moments / normalize_moments, batch_normalization, crelu,
weighted_cross_entropy_with_logits, log_poisson_loss, compute_average_loss,
local_response_normalization; band_part, set_diag, cross, normalize, logdet, pinv,
matrix_rank. Their gradients are those of their parts, which is TF's formula for
each (TF's fused kernels, e.g. LRN's, compute the same derivative).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _gradtape as _native
from . import errors
from ._array_ops import _host, _t

_Tensor = _native.Tensor


def _real_float(x: Any, op: str) -> None:
    if not x.dtype.is_floating:
        raise errors.InvalidArgumentError(
            f"Value for attr 'T' of {x.dtype.name} is not in the list of allowed values: "
            f"half, bfloat16, float, double [Op:{op}]"
        )


def _float_or_complex(x: Any, op: str) -> None:
    if not (x.dtype.is_floating or x.dtype.is_complex):
        raise errors.InvalidArgumentError(
            f"Value for attr 'T' of {x.dtype.name} is not in the list of allowed values: "
            f"half, bfloat16, float, double, complex64, complex128 [Op:{op}]"
        )


def _axes(axes: Any, rank: int) -> list[int]:
    if isinstance(axes, (int, np.integer)):
        axes = [axes]
    out = []
    for a in axes:
        a = int(a)
        if not -rank <= a < rank:
            raise errors.InvalidArgumentError(f"axis {a} is out of range for rank {rank}")
        out.append(a % rank)
    return out


# ----------------------------------------------------------------------------- tf.nn


def bias_add(value: Any, bias: Any, data_format: str | None = None, name: str | None = None) -> Any:
    """``value + bias`` with the 1-D ``bias`` along the channel axis (the last one, or
    axis 1 for ``data_format`` starting with ``"NC"``). TF equivalent: ``tf.nn.bias_add``.
    Gradient: ``bias`` gets the incoming gradient summed over the other axes.

    >>> import gradtape as gt
    >>> print(gt.nn.bias_add(gt.zeros([2, 2]), [1.0, 2.0]))
    gt.Tensor(
    [[1. 2.]
     [1. 2.]], shape=(2, 2), dtype=float32)
    """
    del name
    x = _t(value)
    b = _t(bias, x.dtype)
    if b.ndim != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {b.ndim} for 'BiasAdd'")
    if x.ndim < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {x.ndim} for 'BiasAdd'")
    nc = data_format is not None and data_format.startswith("NC")
    if data_format is not None and not nc and not data_format.startswith("N"):
        raise ValueError(f"Unknown data_format {data_format!r}")
    c = x.shape[1] if nc else x.shape[-1]
    if b.shape[0] != c:
        raise errors.InvalidArgumentError(
            f"Must provide as many biases as the channel dimension of the input tensor: "
            f"{list(b.shape)} vs. {list(x.shape)} [Op:BiasAdd]"
        )
    if nc:
        b = _native.reshape(b, [c] + [1] * (x.ndim - 2))
    return _native.add(x, b)


def moments(x: Any, axes: Any, shift: Any = None, keepdims: bool = False, name: str | None = None) -> tuple[Any, Any]:
    """``(mean, variance)`` of ``x`` over ``axes`` (float16 computed in float32).
    TF equivalent: ``tf.nn.moments`` (its formula: the variance as the mean squared
    difference from the mean, the mean held constant there).

    >>> import gradtape as gt
    >>> m, v = gt.nn.moments(gt.constant([1.0, 2.0, 3.0, 6.0]), axes=[0])
    >>> float(m), float(v)
    (3.0, 3.5)
    """
    del shift, name
    y = _t(x)
    _float_or_complex(y, "Mean")
    half = y.dtype == _native.float16
    if half:
        y = _native.cast(y, _native.float32)
    ax = _axes(axes, y.ndim)
    mean = _native.reduce_mean(y, axis=ax, keepdims=True)
    var = _native.reduce_mean(_native.squared_difference(y, _native.stop_gradient(mean)), axis=ax, keepdims=True)
    if not keepdims:
        mean = _native.squeeze(mean, ax) if ax else mean
        var = _native.squeeze(var, ax) if ax else var
    if half:
        mean, var = _native.cast(mean, _native.float16), _native.cast(var, _native.float16)
    return mean, var


def _div_no_nan(a: Any, b: Any) -> Any:
    zero = _native.equal(b, _native.zeros_like(b))
    safe = _native.where(zero, _native.ones_like(b), b)
    return _native.where(zero, _native.zeros_like(a * safe), a / safe)


def weighted_moments(x: Any, axes: Any, frequency_weights: Any, keepdims: bool = False,
                     name: str | None = None) -> tuple[Any, Any]:
    """``(mean, variance)`` of ``x`` over ``axes`` with each element counted
    ``frequency_weights`` times (broadcast against ``x``; a zero total weight gives 0).
    TF equivalent: ``tf.nn.weighted_moments``.

    >>> import gradtape as gt
    >>> m, v = gt.nn.weighted_moments(gt.constant([1.0, 3.0]), [0], gt.constant([3.0, 1.0]))
    >>> float(m), float(v)
    (1.5, 0.75)
    """
    del name
    y = _t(x)
    _float_or_complex(y, "Mean")
    w = _t(frequency_weights, y.dtype)
    half = y.dtype == _native.float16
    if half:
        y, w = _native.cast(y, _native.float32), _native.cast(w, _native.float32)
    ax = _axes(axes, y.ndim)
    total = _native.reduce_sum(w * y, axis=ax, keepdims=True)
    weights = _native.reduce_sum(w + _native.zeros_like(y), axis=ax, keepdims=True)
    mean = _div_no_nan(total, weights)
    dist = _native.reduce_sum(w * _native.squared_difference(y, _native.stop_gradient(mean)), axis=ax, keepdims=True)
    var = _div_no_nan(dist, weights)
    if not keepdims:
        mean = _native.squeeze(mean, ax) if ax else mean
        var = _native.squeeze(var, ax) if ax else var
    if half:
        mean, var = _native.cast(mean, _native.float16), _native.cast(var, _native.float16)
    return mean, var


def normalize_moments(
    counts: Any, mean_ss: Any, variance_ss: Any, shift: Any, name: str | None = None
) -> tuple[Any, Any]:
    """``(mean, variance)`` from a count, a (shifted) sum and a (shifted) sum of squares.
    TF equivalent: ``tf.nn.normalize_moments``.

    >>> import gradtape as gt
    >>> m, v = gt.nn.normalize_moments(4.0, 12.0, 50.0, None)
    >>> float(m), float(v)
    (3.0, 3.5)
    """
    del name
    ms = _t(mean_ss)
    divisor = _native.reciprocal(_t(counts, ms.dtype))
    shifted_mean = ms * divisor
    mean = shifted_mean if shift is None else shifted_mean + _t(shift, ms.dtype)
    variance = _t(variance_ss, ms.dtype) * divisor - _native.square(shifted_mean)
    return mean, variance


def batch_normalization(x: Any, mean: Any, variance: Any, offset: Any, scale: Any,
                        variance_epsilon: Any, name: str | None = None) -> Any:
    """``scale · (x − mean) / sqrt(variance + variance_epsilon) + offset`` (``offset`` and
    ``scale`` may be ``None``). TF equivalent: ``tf.nn.batch_normalization`` (its
    formula: ``x · inv + (offset − mean · inv)``).

    >>> import gradtape as gt
    >>> print(gt.nn.batch_normalization(gt.constant([1.0, 3.0]), 2.0, 1.0, None, None, 0.0))
    gt.Tensor([-1.  1.], shape=(2,), dtype=float32)
    """
    del name
    xv = _t(x)
    _float_or_complex(xv, "Rsqrt")
    mv = _t(mean, xv.dtype)
    inv = _native.rsqrt(_t(variance, xv.dtype) + _t(variance_epsilon, xv.dtype))
    if scale is not None:
        inv = inv * _t(scale, xv.dtype)
    shift = (_t(offset, xv.dtype) - mv * inv) if offset is not None else -mv * inv
    return xv * inv + shift


def crelu(features: Any, name: str | None = None, axis: int = -1) -> Any:
    """``relu`` of ``features`` and of ``-features``, concatenated along ``axis``.
    TF equivalent: ``tf.nn.crelu``.

    >>> import gradtape as gt
    >>> print(gt.nn.crelu(gt.constant([1.0, -2.0])))
    gt.Tensor([1. 0. 0. 2.], shape=(4,), dtype=float32)
    """
    del name
    f = _t(features)
    _real_float(f, "Relu") if f.dtype.is_complex else None
    c = _native.concat([f, _native.negative(f)], axis)
    return _native.relu(c)


def weighted_cross_entropy_with_logits(labels: Any, logits: Any, pos_weight: Any, name: str | None = None) -> Any:
    """Sigmoid cross-entropy with the positive term weighted by ``pos_weight``:
    ``(1 − z)·x + (1 + (q − 1)·z)·(log1p(exp(−|x|)) + relu(−x))``. TF equivalent:
    ``tf.nn.weighted_cross_entropy_with_logits``.

    >>> import gradtape as gt
    >>> round(float(gt.nn.weighted_cross_entropy_with_logits(1.0, 0.0, 2.0)), 6)
    1.386294
    """
    del name
    x = _t(logits)
    _real_float(x, "WeightedCrossEntropy")
    z = _t(labels, x.dtype)
    if tuple(z.shape) != tuple(x.shape):
        raise ValueError(f"logits and labels must have the same shape ({list(x.shape)} vs {list(z.shape)})")
    q = _t(pos_weight, x.dtype)
    log_weight = 1 + (q - 1) * z
    # log1p(exp(-|x|)) + relu(-x) (TF's stable form) is softplus(-x); each input is used
    # twice, so traced and eager gradients add their parts in the same order.
    return (1 - z) * x + log_weight * _native.softplus(_native.negative(x))


def log_poisson_loss(targets: Any, log_input: Any, compute_full_loss: bool = False, name: str | None = None) -> Any:
    """``exp(log_input) − log_input · targets``, plus Stirling's approximation of
    ``log(targets!)`` for targets above 1 when ``compute_full_loss``. TF equivalent:
    ``tf.nn.log_poisson_loss``.

    >>> import gradtape as gt
    >>> print(gt.nn.log_poisson_loss(gt.constant([2.0]), gt.constant([0.0])))
    gt.Tensor([1.], shape=(1,), dtype=float32)
    """
    del name
    li = _t(log_input)
    _float_or_complex(li, "Exp")
    t = _t(targets, li.dtype)
    if tuple(t.shape) != tuple(li.shape):
        raise ValueError(f"log_input and targets must have the same shape ({list(li.shape)} vs {list(t.shape)})")
    if not compute_full_loss:
        return _native.exp(li) - li * t
    # Stirling's term t·log(t) − t + ½·log(2πt), zero for targets in [0, 1], arranged so
    # that each input is used twice (traced and eager gradients then add alike).
    zeros = _native.zeros_like(t)
    small = _native.logical_and(_native.greater_equal(t, zeros), _native.less_equal(t, _native.ones_like(t)))
    lt = _native.log(t)
    s_a = _native.where(small, zeros, lt - 1.0)
    s_b = _native.where(small, zeros, 0.5 * (lt + math.log(2.0 * math.pi)))
    return _native.exp(li) + t * (s_a - li) + s_b


def compute_average_loss(per_example_loss: Any, sample_weight: Any = None, global_batch_size: Any = None,
                         name: str | None = None) -> Any:
    """``sum(per_example_loss · sample_weight) / global_batch_size`` (default: the
    first dimension of ``per_example_loss``; 0 gives 0). TF equivalent:
    ``tf.nn.compute_average_loss`` (one replica).

    >>> import gradtape as gt
    >>> print(gt.nn.compute_average_loss(gt.constant([1.0, 2.0, 3.0]), global_batch_size=6))
    gt.Tensor(1.0, shape=(), dtype=float32)
    """
    del name
    loss = _t(per_example_loss)
    dt = loss.dtype
    if loss.ndim == 0:
        raise ValueError(
            "Invalid value passed for `per_example_loss`. Expected a tensor with at least "
            f"rank 1. Received per_example_loss={loss} with rank 0"
        )
    if not (dt.is_floating or dt.is_complex):
        raise TypeError(f"per_example_loss must be a floating-point tensor, got {dt.name}")
    if sample_weight is not None:
        loss = loss * _t(sample_weight, dt)
    if global_batch_size is None:
        n = _native.constant(loss.shape[0], dtype=dt)
    else:
        gb = _host(global_batch_size, "global_batch_size")
        if gb.ndim != 0 or gb.dtype.kind not in "iu":
            raise TypeError(f"global_batch_size must be an integer scalar, got {global_batch_size!r}")
        if int(gb) < 0:
            raise ValueError(f"global_batch_size must be non-negative, got {int(gb)}")
        n = _native.constant(int(gb), dtype=dt)
    return _div_no_nan(_native.reduce_sum(loss), n)


def local_response_normalization(input: Any, depth_radius: int = 5, bias: float = 1.0, alpha: float = 1.0,  # noqa: A002
                                 beta: float = 0.5, name: str | None = None) -> Any:
    """Each element of the 4-D ``input`` divided by ``(bias + alpha · sqr_sum) ** beta``,
    ``sqr_sum`` the sum of squares over the ``2·depth_radius + 1`` channels around it.
    TF equivalent: ``tf.nn.local_response_normalization`` (``tf.nn.lrn``).

    >>> import gradtape as gt
    >>> print(gt.nn.local_response_normalization(gt.ones([1, 1, 1, 2]), depth_radius=1, bias=0.0, alpha=0.5, beta=1.0))
    gt.Tensor([[[[1. 1.]]]], shape=(1, 1, 1, 2), dtype=float32)
    """
    del name
    x = _t(input)
    _real_float(x, "LRN")
    if x.ndim != 4:
        raise errors.InvalidArgumentError(f"input must be 4-dimensional, got rank {x.ndim} [Op:LRN]")
    if not isinstance(depth_radius, (int, np.integer)) or isinstance(depth_radius, bool) or depth_radius < 0:
        raise errors.InvalidArgumentError(f"depth_radius must be a non-negative integer, got {depth_radius!r} [Op:LRN]")
    r = int(depth_radius)
    c = x.shape[-1]
    sq = _native.square(x)
    padded = _native.pad(sq, [[0, 0], [0, 0], [0, 0], [r, r]])
    total = None
    for k in range(2 * r + 1):
        part = _native.slice(padded, [0, 0, 0, k], [-1, -1, -1, c])
        total = part if total is None else total + part
    denom = _native.pow(_t(bias, x.dtype) + _t(alpha, x.dtype) * total, _t(beta, x.dtype))
    return x / denom


# ----------------------------------------------------------------------------- tf.linalg


def band_part(input: Any, num_lower: Any, num_upper: Any, name: str | None = None) -> Any:  # noqa: A002
    """The band of each innermost matrix: entries with ``i − j ≤ num_lower`` and
    ``j − i ≤ num_upper`` kept (a negative count keeps the whole triangle), the rest 0.
    TF equivalent: ``tf.linalg.band_part``. Gradient: the band of the incoming one.

    >>> import gradtape as gt
    >>> print(gt.linalg.band_part(gt.ones([3, 3]), 0, 1))
    gt.Tensor(
    [[1. 1. 0.]
     [0. 1. 1.]
     [0. 0. 1.]], shape=(3, 3), dtype=float32)
    """
    del name
    x = _t(input)
    if x.ndim < 2:
        raise ValueError(f"input must be at least rank 2, got {x.ndim}")
    lo = int(_host(num_lower, "num_lower"))
    hi = int(_host(num_upper, "num_upper"))
    m, n = x.shape[-2], x.shape[-1]
    if lo > m or hi > n:
        raise errors.InvalidArgumentError(
            f"num_lower must be negative or less or equal to number of rows ({m}) got: {lo}; "
            f"num_upper must be negative or less or equal to number of columns ({n}) got: {hi} [Op:MatrixBandPart]"
        )
    if x.size == 0:
        return _native.identity(x)
    i = np.arange(m)[:, None]
    j = np.arange(n)[None, :]
    keep = ((lo < 0) | (i - j <= lo)) & ((hi < 0) | (j - i <= hi))
    mask = _native.broadcast_to(_native.constant(keep), list(x.shape))
    return _native.where(mask, x, _native.zeros_like(x))


_ALIGNS = ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT")


def _diag_positions(m: int, n: int, k0: int, k1: int, align: str) -> tuple[np.ndarray, int]:
    """For each element of an ``m x n`` matrix, the flat index into the packed diagonals
    (``[num_diags, max_diag_len]``, diagonal ``k1`` first) it takes under TF's
    ``MatrixSetDiagV3`` rule, or -1 off the band; and the packed row length."""
    max_len = min(m + min(k1, 0), n - max(k0, 0))
    rows = np.arange(m)[:, None]
    cols = np.arange(n)[None, :]
    d = cols - rows
    diag_len = np.minimum(n - np.maximum(d, 0), m + np.minimum(d, 0))
    right = ((d >= 0) & align.startswith("RIGHT")) | ((d <= 0) & align.endswith("RIGHT"))
    offset = np.where(right, max_len - diag_len, 0)
    at = (k1 - d) * max_len + cols - np.maximum(d, 0) + offset
    return np.where((d >= k0) & (d <= k1), at, -1), max_len


def set_diag(input: Any, diagonal: Any, name: str = "set_diag", k: Any = 0, align: str = "RIGHT_LEFT") -> Any:  # noqa: A002
    """Each innermost matrix with diagonals ``k`` replaced by ``diagonal``: ``k`` is one
    diagonal offset (0 the main diagonal, > 0 above, < 0 below; ``diagonal`` is
    ``[..., max_diag_len]``) or a pair ``(low, high)`` giving a band (``diagonal`` is
    ``[..., high - low + 1, max_diag_len]``, diagonal ``high`` first). ``align``
    (``"RIGHT_LEFT"``, ``"LEFT_RIGHT"``, ``"LEFT_LEFT"``, ``"RIGHT_RIGHT"``) says how
    diagonals shorter than ``max_diag_len`` sit in their rows: the first word for those
    above the main diagonal, the second for those below. TF equivalent:
    ``tf.linalg.set_diag`` (``MatrixSetDiagV3``). Gradient: the matrix gets the
    incoming one outside the band, ``diagonal`` the band's part, packed the same way.

    >>> import gradtape as gt
    >>> print(gt.linalg.set_diag(gt.zeros([2, 3]), [1.0, 2.0]))
    gt.Tensor(
    [[1. 0. 0.]
     [0. 2. 0.]], shape=(2, 3), dtype=float32)
    >>> print(gt.linalg.set_diag(gt.zeros([3, 3]), [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], k=(0, 1)))
    gt.Tensor(
    [[3. 1. 0.]
     [0. 4. 2.]
     [0. 0. 5.]], shape=(3, 3), dtype=float32)
    """
    del name
    x = _t(input)
    d = _t(diagonal, x.dtype)
    if align not in _ALIGNS:
        raise ValueError(f"align must be one of {list(_ALIGNS)}, got {align!r}")
    ks = _host(k, "k")
    if ks.dtype.kind not in "iu" or ks.ndim > 1 or not 1 <= ks.size <= 2:
        raise errors.InvalidArgumentError(
            f"diag_index must be a scalar or a vector of 1 or 2 integers, got {ks.tolist()!r} [Op:MatrixSetDiagV3]"
        )
    k0, k1 = int(ks.reshape(-1)[0]), int(ks.reshape(-1)[-1])
    if x.ndim < 2:
        raise errors.InvalidArgumentError(
            f"input must be at least 2-dim, received shape: {list(x.shape)} [Op:MatrixSetDiagV3]"
        )
    m, n = x.shape[-2], x.shape[-1]
    if k0 > k1:
        raise errors.InvalidArgumentError(
            f"lower_diag_index must not be larger than upper_diag_index: {k0} > {k1} [Op:MatrixSetDiagV3]"
        )
    for v in (k0, k1):
        if not (-m < v < n or v == 0):
            raise errors.InvalidArgumentError(
                f"diagonal index {v} is out of bound: it must be between {-m} and {n} (exclusive) "
                f"[Op:MatrixSetDiagV3]"
            )
    pos, max_len = _diag_positions(m, n, k0, k1, align)
    num = k1 - k0 + 1
    want = list(x.shape[:-2]) + ([max_len] if num == 1 else [num, max_len])
    if list(d.shape) != want:
        raise errors.InvalidArgumentError(
            f"diagonal must have shape {want}, got {list(d.shape)} [Op:MatrixSetDiagV3]"
        )
    if x.size == 0 or d.size == 0:
        return _native.identity(x)
    # Every element takes the packed diagonal entry it maps to (off the band: any entry,
    # discarded by the mask).
    flat = _native.reshape(d, list(x.shape[:-2]) + [num * max_len])
    taken = _native.gather(flat, np.maximum(pos, 0).reshape(-1), axis=flat.ndim - 1)
    taken = _native.reshape(taken, list(x.shape))
    mask = _native.broadcast_to(_native.constant(pos >= 0), list(x.shape))
    return _native.where(mask, taken, x)


def cross(a: Any, b: Any, name: str | None = None) -> Any:
    """The cross product of 3-vectors along the last axis (shapes must match).
    TF equivalent: ``tf.linalg.cross``.

    >>> import gradtape as gt
    >>> print(gt.linalg.cross([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]))
    gt.Tensor([0. 0. 1.], shape=(3,), dtype=float32)
    """
    del name
    x = _t(a)
    y = _t(b, x.dtype)
    if x.dtype.is_complex or x.dtype == _native.bool:
        raise errors.InvalidArgumentError(f"Cross takes real numbers, got {x.dtype.name} [Op:Cross]")
    if tuple(x.shape) != tuple(y.shape):
        raise errors.InvalidArgumentError(
            f"a and b must be the same shape; got {list(x.shape)} vs. {list(y.shape)} [Op:Cross]"
        )
    if x.ndim == 0 or x.shape[-1] != 3:
        raise errors.InvalidArgumentError(
            f"Dimension 0 in both shapes must be equal to 3; got shape {list(x.shape)} [Op:Cross]"
        )
    a0, a1, a2 = _native.unstack(x, axis=-1)
    b0, b1, b2 = _native.unstack(y, axis=-1)
    return _native.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def normalize(tensor: Any, ord: Any = "euclidean", axis: Any = None, name: str | None = None) -> tuple[Any, Any]:  # noqa: A002
    """``(tensor / norm, norm)`` with ``norm = gt.norm(tensor, ord, axis, keepdims=True)``.
    TF equivalent: ``tf.linalg.normalize``.

    >>> import gradtape as gt
    >>> n, r = gt.linalg.normalize(gt.constant([3.0, 4.0]))
    >>> n.numpy().tolist(), float(r[0])
    ([0.6000000238418579, 0.800000011920929], 5.0)
    """
    del name
    x = _t(tensor)
    _float_or_complex(x, "Norm")
    norm = _native.norm(x, ord=ord, axis=axis, keepdims=True)
    return x / _native.cast(norm, x.dtype), norm


def logdet(matrix: Any, name: str | None = None) -> Any:
    """``log(det(matrix))`` of Hermitian positive-definite matrices, from their Cholesky
    factor: ``2 · Σ log(real(diag(L)))`` (real for complex input). TF equivalent:
    ``tf.linalg.logdet``.

    >>> import gradtape as gt
    >>> round(float(gt.linalg.logdet(gt.constant([[4.0, 0.0], [0.0, 9.0]]))), 5)
    3.58352
    """
    del name
    x = _t(matrix)
    _float_or_complex(x, "Cholesky")
    chol = _native.cholesky(x)
    d = _native.diag_part(chol)
    if d.dtype.is_complex:
        d = _native.real(d)
    return 2.0 * _native.reduce_sum(_native.log(d), axis=-1)


def _eps(dtype: Any) -> float:
    name = {"complex64": "float32", "complex128": "float64"}.get(dtype.name, dtype.name)
    return float(np.finfo(np.dtype(name)).eps)


def pinv(a: Any, rcond: Any = None, validate_args: bool = False, name: str | None = None) -> Any:
    """The Moore–Penrose pseudo-inverse from the SVD, singular values at most
    ``rcond · max(s)`` treated as zero (default ``rcond = 10 · max(m, n) · eps``).
    TF equivalent: ``tf.linalg.pinv``.

    >>> import gradtape as gt
    >>> print(gt.linalg.pinv(gt.constant([[2.0, 0.0], [0.0, 0.0]])))
    gt.Tensor(
    [[0.5 0. ]
     [0.  0. ]], shape=(2, 2), dtype=float32)
    """
    del validate_args, name
    x = _t(a)
    if not x.dtype.is_floating or x.dtype == _native.float16:
        raise TypeError(f"Input `a` must have `float`-like `dtype` (float32 or float64), got {x.dtype.name}")
    if x.ndim < 2:
        raise ValueError(f"Input `a` must have at least 2 dimensions, got {x.ndim}")
    m, n = x.shape[-2], x.shape[-1]
    if rcond is None:
        rcond = 10.0 * max(m, n) * _eps(x.dtype)
    rc = _t(rcond, x.dtype)
    s, u, v = _native.svd(x, full_matrices=False, compute_uv=True)
    if s.shape[-1] == 0:
        return _native.zeros([*x.shape[:-2], n, m], dtype=x.dtype)
    cutoff = rc * _native.reduce_max(s, axis=-1)
    keep = _native.greater(s, _native.expand_dims(cutoff, -1))
    s = _native.where(keep, s, _native.fill(list(s.shape), float("inf")) if s.dtype == _native.float32
                      else _native.cast(_native.fill(list(s.shape), float("inf")), s.dtype))
    return _native.matmul(v / _native.expand_dims(s, -2), u, adjoint_b=True)


def matrix_rank(a: Any, tol: Any = None, validate_args: bool = False, name: str | None = None) -> Any:
    """The number of singular values above ``tol`` (default ``max(s) · max(m, n) · eps``),
    int32. TF equivalent: ``tf.linalg.matrix_rank``. Not differentiable.

    >>> import gradtape as gt
    >>> print(gt.linalg.matrix_rank(gt.constant([[1.0, 2.0], [2.0, 4.0]])))
    gt.Tensor(1, shape=(), dtype=int32)
    """
    del validate_args, name
    x = _native.stop_gradient(_t(a))
    _float_or_complex(x, "Svd")
    if x.ndim < 2:
        raise ValueError(f"Input `a` must have at least 2 dimensions, got {x.ndim}")
    s = _native.svd(x, compute_uv=False)
    if tol is None:
        m, n = x.shape[-2], x.shape[-1]
        if s.shape[-1] == 0:
            return _native.zeros(list(x.shape[:-2]), dtype=_native.int32)
        t = _native.reduce_max(s, axis=-1, keepdims=True) * (max(m, n) * _eps(x.dtype))
    else:
        t = _t(tol, s.dtype)
    return _native.reduce_sum(_native.cast(_native.greater(s, t), _native.int32), axis=-1)


def _one_spatial(v: Any, what: str) -> int:
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v)
    vals = list(v) if isinstance(v, (list, tuple)) else None
    if vals is not None and len(vals) == 1:
        return int(vals[0])
    if vals is not None and len(vals) == 3 and vals[0] == 1 and vals[2] == 1:
        return int(vals[1])
    raise ValueError(f"{what} must be an int or a list of 1 or 3 ints (batch and channel 1), got {v!r}")


def conv1d_transpose(input: Any, filters: Any, output_shape: Any, strides: Any, padding: str = "SAME",  # noqa: A002
                     data_format: str = "NWC", dilations: Any = None, name: str | None = None) -> Any:
    """The transpose of ``conv1d`` (its gradient with respect to the input): ``input``
    is ``[batch, width, in_channels]``, ``filters`` ``[width, output_channels,
    in_channels]``, the result has ``output_shape`` ``[batch, out_width,
    output_channels]``. TF equivalent: ``tf.nn.conv1d_transpose`` (TF computes it as a
    2-D transpose over a height of 1, as here).

    >>> import gradtape as gt
    >>> print(gt.nn.conv1d_transpose(gt.ones([1, 2, 1]), gt.ones([2, 1, 1]), [1, 3, 1], 1, "VALID")[0, :, 0])
    gt.Tensor([1. 2. 1.], shape=(3,), dtype=float32)
    """
    del name
    if data_format != "NWC":
        raise ValueError(f"conv1d_transpose: only data_format='NWC' is supported, got {data_format!r}")
    x = _t(input)
    w = _t(filters)
    if x.ndim != 3 or w.ndim != 3:
        raise ValueError(f"input and filters must be rank 3, got ranks {x.ndim} and {w.ndim}")
    out = [int(d) for d in _host(output_shape, "output_shape").reshape(-1).tolist()]
    if len(out) != 3:
        raise ValueError(f"output_shape must have 3 elements, got {out}")
    s = _one_spatial(strides, "strides")
    d = 1 if dilations is None else _one_spatial(dilations, "dilations")
    y = _native.conv2d_transpose(
        _native.expand_dims(x, 1), _native.expand_dims(w, 0), [out[0], 1, out[1], out[2]],
        strides=[1, s], padding=padding, dilations=[1, d],
    )
    return _native.squeeze(y, [1])


NN_ALL = [
    "batch_normalization", "bias_add", "compute_average_loss", "conv1d_transpose", "crelu",
    "local_response_normalization", "log_poisson_loss", "moments", "normalize_moments",
    "weighted_cross_entropy_with_logits", "weighted_moments",
]
LINALG_ALL = ["band_part", "cross", "logdet", "matrix_rank", "normalize", "pinv", "set_diag"]
