"""Forward values of gt.linalg (src/ops/linalg.rs) against numpy, gradients, and error cases."""

import numpy as np
import pytest

import gradtape as gt
from helpers import A, grad_of

RNG = np.random.default_rng(7)


def _wc(*shape):
    return RNG.uniform(-0.5, 0.5, size=shape) + 2.5 * np.eye(shape[-1])


def test_solve_inv_det_slogdet_against_numpy():
    a = _wc(2, 3, 3)
    b = RNG.normal(size=(2, 3, 2))
    ta, tb = gt.constant(a), gt.constant(b)
    np.testing.assert_allclose(gt.linalg.solve(ta, tb).numpy(), np.linalg.solve(a, b), rtol=1e-12)
    np.testing.assert_allclose(
        gt.linalg.solve(ta, tb, adjoint=True).numpy(),
        np.linalg.solve(np.swapaxes(a, -1, -2), b),
        rtol=1e-12,
    )
    np.testing.assert_allclose(gt.linalg.inv(ta).numpy(), np.linalg.inv(a), rtol=1e-12)
    np.testing.assert_allclose(gt.linalg.det(ta).numpy(), np.linalg.det(a), rtol=1e-12)
    sign, logabs = gt.linalg.slogdet(gt.constant(-a))
    ws, wl = np.linalg.slogdet(-a)
    np.testing.assert_array_equal(sign.numpy(), ws)
    np.testing.assert_allclose(logabs.numpy(), wl, rtol=1e-12)
    assert gt.linalg.det(gt.constant([[4.0, 3.0], [6.0, 3.0]], dtype=gt.float64)).numpy() == pytest.approx(-6.0)


def test_complex_solve_and_det():
    a = _wc(3, 3) + 1j * RNG.normal(size=(3, 3))
    b = RNG.normal(size=(3, 1)) + 0j
    ta, tb = gt.constant(a), gt.constant(b)
    np.testing.assert_allclose(gt.linalg.solve(ta, tb).numpy(), np.linalg.solve(a, b), rtol=1e-12)
    np.testing.assert_allclose(
        gt.linalg.solve(ta, tb, adjoint=True).numpy(), np.linalg.solve(a.conj().T, b), rtol=1e-12
    )
    np.testing.assert_allclose(gt.linalg.det(ta).numpy(), np.linalg.det(a), rtol=1e-12)


def test_cholesky_and_triangular_solve():
    m = RNG.normal(size=(2, 3, 3))
    spd = m @ np.swapaxes(m, -1, -2) + np.eye(3)
    chol = gt.linalg.cholesky(gt.constant(spd)).numpy()
    np.testing.assert_allclose(chol, np.linalg.cholesky(spd), rtol=1e-12)
    b = RNG.normal(size=(2, 3, 2))
    for lower in (True, False):
        for adjoint in (False, True):
            t = np.tril(spd) if lower else np.triu(spd)
            t = np.swapaxes(t, -1, -2) if adjoint else t
            got = gt.linalg.triangular_solve(gt.constant(spd), gt.constant(b), lower=lower, adjoint=adjoint)
            np.testing.assert_allclose(got.numpy(), np.linalg.solve(t, b), rtol=1e-10)


def test_diag_trace_matvec_transpose():
    x = RNG.normal(size=(2, 3, 4))
    tx = gt.constant(x)
    np.testing.assert_array_equal(gt.linalg.diag_part(tx).numpy(), np.diagonal(x, axis1=-2, axis2=-1))
    np.testing.assert_allclose(gt.linalg.trace(tx).numpy(), np.trace(x, axis1=-2, axis2=-1))
    np.testing.assert_array_equal(gt.linalg.diag(gt.constant([1.0, 2.0])).numpy(), [[1.0, 0.0], [0.0, 2.0]])
    np.testing.assert_array_equal(gt.linalg.matrix_transpose(tx).numpy(), np.swapaxes(x, -1, -2))
    v = RNG.normal(size=(4,))
    np.testing.assert_allclose(gt.linalg.matvec(tx, gt.constant(v)).numpy(), x @ v, rtol=1e-12)
    c = gt.constant([[1 + 2j, 3j]])
    np.testing.assert_array_equal(gt.linalg.adjoint(c).numpy(), [[1 - 2j], [-3j]])


def test_matmul_large_and_transposed_views():
    a = RNG.normal(size=(70, 90))
    b = RNG.normal(size=(90, 65))
    np.testing.assert_allclose(gt.matmul(gt.constant(a), gt.constant(b)).numpy(), a @ b, rtol=1e-10)
    at, bt = gt.constant(a.T.copy()), gt.constant(b.T.copy())
    got = gt.matmul(at, bt, transpose_a=True, transpose_b=True)
    np.testing.assert_allclose(got.numpy(), a @ b, rtol=1e-10)
    # broadcast batch: (3, 1, 4, 5) @ (2, 5, 6)
    x = RNG.normal(size=(3, 1, 4, 5))
    y = RNG.normal(size=(2, 5, 6))
    np.testing.assert_allclose(gt.matmul(gt.constant(x), gt.constant(y)).numpy(), x @ y, rtol=1e-12)


def test_singular_and_not_positive_definite_raise():
    s = gt.constant([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(gt.errors.InvalidArgumentError, match="Input matrix is not invertible."):
        gt.linalg.inv(s)
    with pytest.raises(gt.errors.InvalidArgumentError, match="Input matrix is not invertible."):
        gt.linalg.solve(s, gt.constant([[1.0], [1.0]]))
    with pytest.raises(gt.errors.InvalidArgumentError, match="Cholesky decomposition was not successful"):
        gt.linalg.cholesky(gt.constant([[1.0, 2.0], [2.0, 1.0]]))
    assert float(gt.linalg.det(s)) == 0.0
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.linalg.inv(gt.constant([[1.0, 2.0, 3.0]]))
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.linalg.solve(gt.eye(2), gt.ones([3, 1]))
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.linalg.det(gt.constant([1.0, 2.0]))
    with pytest.raises((TypeError, gt.errors.InvalidArgumentError)):
        gt.linalg.inv(gt.constant([[1, 2], [3, 4]]))


def test_integer_matmul_of_reversed_views():
    # Negative strides reached the integer kernel as huge unsigned ones.
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    y = np.arange(8, dtype=np.int64).reshape(4, 2)
    gx, gy = gt.constant(x), gt.constant(y)
    np.testing.assert_array_equal((gx[::-1] @ gt.constant(x.T)).numpy(), x[::-1] @ x.T)
    np.testing.assert_array_equal((gt.constant(y[::-1, ::-1]).numpy()), y[::-1, ::-1])
    np.testing.assert_array_equal(gt.matmul(gy[::-1], gy[::-1], transpose_b=True).numpy(), y[::-1] @ y[::-1].T)
    np.testing.assert_array_equal(
        gt.matmul(gx[:, ::-2], gx[::-1, ::-2], transpose_a=True).numpy(), x[:, ::-2].T @ x[::-1, ::-2]
    )
    # int32 wraps on overflow, as TF's kernel does.
    big = gt.constant([[2**30, 2**30]], dtype=gt.int32)
    assert (big @ gt.constant([[2], [2]], dtype=gt.int32)).numpy()[0, 0] == 0


def test_tensordot():
    a = np.arange(24.0).reshape(2, 3, 4)
    b = np.arange(12.0).reshape(4, 3)
    np.testing.assert_allclose(gt.tensordot(a, b, 1).numpy(), np.tensordot(a, b, 1))
    np.testing.assert_allclose(
        gt.tensordot(a, b, [[1, 2], [1, 0]]).numpy(), np.tensordot(a, b, [[1, 2], [1, 0]])
    )
    np.testing.assert_allclose(gt.linalg.tensordot(A, A, 0).numpy(), np.tensordot(A, A, 0))
    g = grad_of(lambda t: gt.tensordot(t, gt.constant(b[:, :2].T.copy(), dtype=gt.float64), [[0], [0]]), b[:2, :])
    np.testing.assert_allclose(g, np.broadcast_to(b[:, :2].T.sum(1, keepdims=True), (2, 3)))
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.tensordot(a, b, [[0], [0]])
