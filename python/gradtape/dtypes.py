"""Dtypes. TF equivalent: ``tf.dtypes``.

>>> import gradtape as gt
>>> gt.float32.name, gt.float32.is_floating, gt.int32.is_integer
('float32', True, True)
"""

from __future__ import annotations

from typing import Any

from ._gradtape import DType, bool, complex64, complex128, float32, float64, int32, int64

double = float64
half = None  # float16 is not supported by gradtape

__all__ = [
    "DType", "float32", "float64", "int32", "int64", "bool", "complex64", "complex128",
    "double", "as_dtype",
]


def as_dtype(type_value: Any) -> DType:
    """Converts a dtype-like (a ``DType``, a name, a numpy dtype) to a ``DType``.
    TF equivalent: ``tf.dtypes.as_dtype``.

    >>> import gradtape as gt
    >>> gt.dtypes.as_dtype("float64")
    gt.float64
    """
    import numpy as np

    from . import _gradtape

    if isinstance(type_value, DType):
        return type_value
    name = type_value if isinstance(type_value, str) else np.dtype(type_value).name
    try:
        return getattr(_gradtape, name)
    except AttributeError:
        raise TypeError(f"Cannot convert {type_value!r} to a gradtape DType") from None
