"""Linear algebra. TF equivalent: ``tf.linalg``.

>>> import gradtape as gt
>>> print(gt.linalg.matmul(gt.eye(2), gt.ones([2, 1])))
gt.Tensor(
[[1.]
 [1.]], shape=(2, 1), dtype=float32)
"""

from ._gradtape import (
    adjoint, cholesky, det, diag, diag_part, einsum, eye, inv, matmul, matrix_transpose, matvec,
    slogdet, solve, tensordot, trace, triangular_solve,
)
from .math import l2_normalize

__all__ = [
    "adjoint", "cholesky", "det", "diag", "diag_part", "einsum", "eye", "inv", "l2_normalize",
    "matmul", "matrix_transpose", "matvec", "norm", "slogdet", "solve", "tensordot", "trace",
    "triangular_solve",
]


def norm(tensor, ord="euclidean", axis=None, keepdims=False, name=None):
    """Vector norm over ``axis`` (all elements by default). TF equivalent:
    ``tf.norm`` / ``tf.linalg.norm`` for vector orders 1, 2, ``inf`` and euclidean.

    >>> import gradtape as gt
    >>> float(gt.norm(gt.constant([3.0, 4.0])))
    5.0
    """
    from ._gradtape import abs as _abs
    from ._gradtape import convert_to_tensor, reduce_max, reduce_sum, sqrt

    x = convert_to_tensor(tensor)
    if ord in ("euclidean", 2, 2.0, "fro"):
        a = _abs(x)
        return sqrt(reduce_sum(a * a, axis=axis, keepdims=keepdims))
    if ord in (1, 1.0):
        return reduce_sum(_abs(x), axis=axis, keepdims=keepdims)
    if ord == float("inf") or ord == "inf":
        return reduce_max(_abs(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, (int, float)) and ord > 0:
        a = _abs(x)
        return reduce_sum(a ** float(ord), axis=axis, keepdims=keepdims) ** (1.0 / float(ord))
    raise ValueError(f"'ord' must be a supported vector norm, got {ord!r}")
