"""Dtypes. TF equivalent: ``tf.dtypes``.

Every TF dtype that numpy also has: ``float16`` (``half``), ``float32``, ``float64``
(``double``), ``int8``, ``int16``, ``int32``, ``int64``, ``uint8``, ``uint16``,
``uint32``, ``uint64``, ``bool``, ``complex64``, ``complex128``. Values keep their
dtype (numpy arrays convert without widening). Also TF's ``bfloat16`` (computed in
float32 and rounded to nearest even, as TF's CPU kernels; ``.numpy()`` is an
``ml_dtypes.bfloat16`` array when ``ml_dtypes`` is installed, as in TF, else
``float32``) and ``string`` (byte strings: no arithmetic, no gradients).

>>> import gradtape as gt
>>> gt.float32.name, gt.float32.is_floating, gt.int32.is_integer
('float32', True, True)
>>> gt.uint8.is_unsigned, gt.uint8.min, gt.uint8.max, gt.float16.size
(True, 0, 255, 2)
"""

from __future__ import annotations

from typing import Any

from ._gradtape import (
    DType, bool, complex64, complex128, float16, float32, float64, int8, int16, int32, int64,
    uint8, uint16, uint32, uint64, bfloat16, string,
)

double = float64
half = float16

__all__ = [
    "DType", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
    "uint16", "uint32", "uint64", "bool", "complex64", "complex128", "double", "half",
    "as_dtype", "bfloat16", "string",
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
    aliases = {"half": "float16", "float": "float32", "double": "float64"}
    if isinstance(type_value, str):
        name = aliases.get(type_value, type_value)
    elif type_value is object:
        name = "string"
    else:
        try:
            npd = np.dtype(type_value)
            # numpy's text and object arrays convert to string tensors, as in TF.
            name = "string" if npd.kind in "OSU" else npd.name
        except TypeError:
            name = ""
    dt = getattr(_gradtape, name, None)
    if not isinstance(dt, DType):
        raise TypeError(f"Cannot convert {type_value!r} to a gradtape DType")
    return dt
