"""Small helpers shared by the Python modules (not part of the public API)."""

import numpy as _np


def _shape_list(shape):
    """A shape argument (list, tuple, TensorShape, int tensor) as a tuple of ints."""
    if isinstance(shape, int):
        return (shape,)
    return tuple(int(d) for d in _np.asarray(shape).reshape(-1))
