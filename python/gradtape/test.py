"""Testing helpers. TF equivalent: ``tf.test`` (its gradient checker).

``compute_gradient`` is TF's ``gradient_checker_v2.compute_gradient``: the Jacobian of
``f`` at ``x`` computed twice, from the tape (one backward pass per output element)
and by central differences, in TF's layout, so that a test compares the two.
"""

from __future__ import annotations

from typing import Any, Callable
from collections.abc import Sequence

import numpy as np

from . import _gradtape as _native
from ._tape import GradientTape

_ALLOWED = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")


def _real_np(dtype: Any) -> Any:
    return {"complex64": np.float32, "complex128": np.float64}.get(dtype.name, _np_dtype(dtype).type)


def _np_dtype(dtype: Any) -> np.dtype:
    # The numpy dtype of the tensors' .numpy(): for bfloat16 ml_dtypes' where it is
    # installed, else float32 (what .numpy() gives then; it holds every bfloat16 value).
    try:
        return np.dtype(dtype.name)
    except TypeError:
        if dtype.name == "bfloat16":
            return np.dtype(np.float32)
        raise


def _to_numpy(a: Any) -> Any:
    if isinstance(a, (_native.Tensor, _native.Variable)):
        return a.numpy()
    return a


def _call(f: Callable[..., Any], xs: Sequence[Any], dtypes: Sequence[Any]) -> Any:
    # TF's `_prepare`: every argument converted to its original dtype.
    return f(*[_native.convert_to_tensor(np.asarray(x), dtype=d) for x, d in zip(xs, dtypes)])


def _theoretical(f: Callable[..., Any], y_shape: tuple, y_dtype: Any, xs: list, param: int) -> np.ndarray:
    x = xs[param]
    x_shape = tuple(x.shape) + ((2,) if x.dtype.is_complex else ())
    y_size = int(np.prod(y_shape, dtype=np.int64)) * (2 if y_dtype.is_complex else 1)
    x_size = int(np.prod(x_shape, dtype=np.int64))
    jacobian = np.zeros((y_size, x_size), dtype=_real_np(x.dtype))
    dy_data = np.zeros(y_shape, dtype=_np_dtype(y_dtype))
    dy_flat = dy_data.ravel().view(_real_np(y_dtype))

    def grad(dy: np.ndarray) -> Any:
        args = [_native.convert_to_tensor(np.asarray(_to_numpy(a)), dtype=a.dtype) for a in xs]
        with GradientTape() as t:
            t.watch(args[param])
            y = f(*args)
        g = t.gradient(y, args[param], output_gradients=_native.convert_to_tensor(dy, dtype=y_dtype))
        # TF converts an IndexedSlices gradient (a gather's) to its dense tensor.
        return None if g is None else _native.convert_to_tensor(g)

    for row in range(y_size):
        dy_flat[row] = 1
        g = grad(dy_data)
        if g is not None:
            jacobian[row, :] = np.asarray(g.numpy()).ravel().view(jacobian.dtype)
        dy_flat[row] = 0
    if y_size == 0:
        g = grad(dy_data)
        if g is not None:
            gv = np.asarray(g.numpy())
            if gv.shape != tuple(x.shape):
                raise ValueError(
                    f"Empty gradient has wrong shape: expected {tuple(x.shape)}, got {gv.shape}"
                )
            if np.any(gv):
                raise ValueError("Empty tensor with nonzero gradients")
    return jacobian


def _numeric(f: Callable[..., Any], y_size: int, y_dtype: Any, xs: list, param: int, delta: float) -> np.ndarray:
    x_dtype = xs[param].dtype
    x_size = int(np.prod(tuple(xs[param].shape), dtype=np.int64)) * (2 if x_dtype.is_complex else 1)
    y_size = y_size * (2 if y_dtype.is_complex else 1)
    xr, yr = _real_np(x_dtype), _real_np(y_dtype)
    dtypes = [a.dtype for a in xs]
    arrays = [np.array(_to_numpy(a)) for a in xs]
    x = arrays[param]
    scale = np.asarray(2 * delta, dtype=yr)[()]
    jacobian = np.zeros((y_size, x_size), dtype=xr)
    flat = x.reshape(-1).view(xr)
    for col in range(x_size):
        original = flat[col]
        flat[col] += delta
        y_pos = np.asarray(_to_numpy(_call(f, arrays, dtypes)))
        flat[col] = original
        flat[col] -= delta
        y_neg = np.asarray(_to_numpy(_call(f, arrays, dtypes)))
        flat[col] = original
        diff = (y_pos - y_neg) / scale
        jacobian[:, col] = diff.ravel().view(yr)
    return jacobian


def compute_gradient(f: Callable[..., Any], x: Sequence[Any], delta: float | None = None) -> tuple:
    """The theoretical and numerical Jacobians of ``f`` at ``x`` (a list or tuple of
    arguments). Returns ``(theoretical, numerical)``, each a tuple with one 2-D numpy
    array per argument of shape ``(y.size, x_i.size)`` (complex values count as two
    reals). ``delta`` is the central-difference step, ``1/1024`` by default. TF
    equivalent: ``tf.test.compute_gradient``.

    >>> import gradtape as gt
    >>> theoretical, numerical = gt.test.compute_gradient(lambda x: x * x, [gt.constant([1.0, 2.0])])
    >>> theoretical[0].tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    >>> numerical[0].round(3).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    if not isinstance(x, (list, tuple)):
        raise ValueError(
            "`x` must be a list or tuple of values convertible to a Tensor (arguments "
            f"to `f`), not a {type(x)}"
        )
    if not callable(f):
        raise TypeError(f"`f` must be callable, got {type(f).__name__}")
    if delta is None:
        # A step exactly representable in binary, as TF's default.
        delta = 1.0 / 1024
    xs = [a if isinstance(a, _native.Tensor) else _native.convert_to_tensor(a) for a in x]
    for i, a in enumerate(xs):
        if a.dtype.name not in _ALLOWED:
            raise ValueError(f"Cannot compute gradient for unsupported type {a.dtype.name} of argument {i}")
    y = _call(f, [np.asarray(_to_numpy(a)) for a in xs], [a.dtype for a in xs])
    if not isinstance(y, (_native.Tensor, _native.Variable)):
        y = _native.convert_to_tensor(y)
    if y.dtype.name not in _ALLOWED:
        raise ValueError(f"Cannot compute gradient for unsupported type {y.dtype.name} of y")
    y_shape = tuple(y.shape)
    y_size = int(np.prod(y_shape, dtype=np.int64))
    pairs = [
        (_theoretical(f, y_shape, y.dtype, xs, i), _numeric(f, y_size, y.dtype, xs, i, delta))
        for i in range(len(xs))
    ]
    return tuple(zip(*pairs))


__all__ = ["compute_gradient"]
