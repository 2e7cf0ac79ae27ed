"""Linear algebra. TF equivalent: ``tf.linalg``.

>>> import gradtape as gt
>>> print(gt.linalg.matmul(gt.eye(2), gt.ones([2, 1])))
gt.Tensor(
[[1.]
 [1.]], shape=(2, 1), dtype=float32)
"""

from ._gradtape import (
    adjoint, cholesky, det, diag, diag_part, einsum, eye, inv, matmul, matrix_transpose, matvec,
    norm, slogdet, solve, tensordot, trace, triangular_solve,
)
from .math import l2_normalize

__all__ = [
    "adjoint", "cholesky", "det", "diag", "diag_part", "einsum", "eye", "inv", "l2_normalize",
    "matmul", "matrix_transpose", "matvec", "norm", "slogdet", "solve", "tensordot", "trace",
    "triangular_solve",
]
