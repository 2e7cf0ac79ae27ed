"""Random tensors. TF equivalent: ``tf.random``.

Values come from numpy's PCG64 generator: ``set_seed`` makes a program's sequence
reproducible, and an op-level ``seed=`` makes one call reproducible on its own. The
numbers differ from TF's (its Philox streams are not reproduced).

>>> import gradtape as gt
>>> gt.random.set_seed(1)
>>> a = gt.random.normal([2])
>>> gt.random.set_seed(1)
>>> bool(gt.reduce_all(gt.random.normal([2]) == a))
True
"""

from __future__ import annotations

from typing import Any

import numpy as _np

from . import _gradtape
from .dtypes import as_dtype

_global: dict[str, Any] = {"gen": _np.random.default_rng(), "seed": None, "counter": 0}


def set_seed(seed: int | None) -> None:
    """Sets the global seed. TF equivalent: ``tf.random.set_seed``.

    >>> import gradtape as gt
    >>> gt.random.set_seed(3)
    >>> a = gt.random.uniform([3])
    >>> gt.random.set_seed(3)
    >>> bool(gt.reduce_all(gt.random.uniform([3]) == a))
    True
    """
    _global["seed"] = None if seed is None else int(seed)
    _global["counter"] = 0
    _global["gen"] = _np.random.default_rng(seed)


def _gen(seed: int | None) -> Any:
    if seed is None:
        return _global["gen"]
    # An op seed: its own stream, combined with the global seed as TF does.
    _global["counter"] += 1
    return _np.random.default_rng([int(seed), _global["seed"] or 0, _global["counter"]])


def _shape(shape: Any) -> tuple[int, ...]:
    from .ops import _shape_list

    return _shape_list(shape)


def _out(values: Any, dtype: Any) -> _gradtape.Tensor:
    dt = as_dtype(dtype)
    return _gradtape.constant(values.astype(dt.name), dtype=dt)


def normal(
    shape: Any,
    mean: float = 0.0,
    stddev: float = 1.0,
    dtype: Any = "float32",
    seed: int | None = None,
    name: str | None = None,
) -> _gradtape.Tensor:
    """Samples of a normal distribution. TF equivalent: ``tf.random.normal``.

    >>> import gradtape as gt
    >>> x = gt.random.normal([2, 3], seed=1)
    >>> x.shape, x.dtype
    (TensorShape([2, 3]), gt.float32)
    """
    g = _gen(seed)
    return _out(g.normal(float(mean), float(stddev), size=_shape(shape)), dtype)


def uniform(
    shape: Any,
    minval: float = 0,
    maxval: float | None = None,
    dtype: Any = "float32",
    seed: int | None = None,
    name: str | None = None,
) -> _gradtape.Tensor:
    """Samples of a uniform distribution on ``[minval, maxval)``. TF equivalent:
    ``tf.random.uniform`` (``maxval`` defaults to 1 for floats).

    >>> import gradtape as gt
    >>> x = gt.random.uniform([100], minval=2, maxval=5, dtype=gt.int32, seed=7)
    >>> sorted(set(x.numpy().tolist()))
    [2, 3, 4]
    """
    dt = as_dtype(dtype)
    g = _gen(seed)
    if dt.is_integer:
        if maxval is None:
            raise ValueError("Must specify maxval for integer dtype")
        return _out(g.integers(int(minval), int(maxval), size=_shape(shape)), dt)
    hi = 1.0 if maxval is None else float(maxval)
    return _out(g.uniform(float(minval), hi, size=_shape(shape)), dt)


def truncated_normal(
    shape: Any,
    mean: float = 0.0,
    stddev: float = 1.0,
    dtype: Any = "float32",
    seed: int | None = None,
    name: str | None = None,
) -> _gradtape.Tensor:
    """Normal samples redrawn until within two standard deviations. TF equivalent:
    ``tf.random.truncated_normal``.

    >>> import gradtape as gt
    >>> x = gt.random.truncated_normal([1000], seed=2)
    >>> bool(gt.reduce_max(gt.abs(x)) <= 2.0)
    True
    """
    g = _gen(seed)
    size = _shape(shape)
    v = g.standard_normal(size=size)
    bad = _np.abs(v) > 2.0
    while bad.any():
        v[bad] = g.standard_normal(size=int(bad.sum()))
        bad = _np.abs(v) > 2.0
    return _out(v * float(stddev) + float(mean), dtype)


__all__ = ["set_seed", "normal", "uniform", "truncated_normal"]
