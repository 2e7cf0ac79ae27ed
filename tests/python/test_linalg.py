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


# ----------------------------------------------------------------------------- decompositions
def _sym(n, *batch):
    m = RNG.normal(size=(*batch, n, n))
    return m + np.swapaxes(m, -1, -2)


def test_eigh_and_eigvalsh_against_numpy():
    a = _sym(4, 2)
    e, v = gt.linalg.eigh(gt.constant(a))
    np.testing.assert_allclose(e.numpy(), np.linalg.eigvalsh(a), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gt.linalg.eigvalsh(gt.constant(a)).numpy(), np.linalg.eigvalsh(a), atol=1e-12)
    # a v = v diag(e), v orthogonal.
    vn = v.numpy()
    np.testing.assert_allclose(a @ vn, vn * e.numpy()[..., None, :], atol=1e-12)
    np.testing.assert_allclose(np.swapaxes(vn, -1, -2) @ vn, np.broadcast_to(np.eye(4), (2, 4, 4)), atol=1e-12)
    # Complex: eigenvalues keep the complex dtype (TF's SelfAdjointEigV2), imaginary parts 0.
    h = RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))
    h = h + h.conj().T
    ec, _ = gt.linalg.eigh(gt.constant(h))
    assert ec.dtype == gt.complex128
    np.testing.assert_allclose(ec.numpy(), np.linalg.eigvalsh(h), atol=1e-12)
    # Only the lower triangle is read.
    low = np.tril(a[0]) + np.triu(RNG.normal(size=(4, 4)), 1)
    np.testing.assert_allclose(gt.linalg.eigvalsh(gt.constant(low)).numpy(), np.linalg.eigvalsh(a[0]), atol=1e-12)


def test_eigh_gradient_is_tfs_lower_triangle():
    a = gt.constant([[2.0, 1.0], [1.0, 2.0]], dtype=gt.float64)
    with gt.GradientTape() as tape:
        tape.watch(a)
        e = gt.linalg.eigvalsh(a)
        y = e[0] + 2.0 * e[1]
    np.testing.assert_allclose(tape.gradient(y, a).numpy(), [[1.5, 0.0], [1.0, 1.5]], atol=1e-12)


def test_svd_outputs_in_tf_order():
    a = RNG.normal(size=(2, 4, 3))
    s, u, v = gt.linalg.svd(gt.constant(a))
    assert (s.shape, u.shape, v.shape) == ((2, 3), (2, 4, 3), (2, 3, 3))
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    rebuilt = u.numpy() @ (s.numpy()[..., None] * np.swapaxes(v.numpy(), -1, -2))
    np.testing.assert_allclose(rebuilt, a, atol=1e-12)
    s2, u2, v2 = gt.linalg.svd(gt.constant(a), full_matrices=True)
    assert (u2.shape, v2.shape) == ((2, 4, 4), (2, 3, 3))
    only = gt.linalg.svd(gt.constant(a), compute_uv=False)
    assert isinstance(only, gt.Tensor) and only.shape == (2, 3)
    c = RNG.normal(size=(3, 2)) + 1j * RNG.normal(size=(3, 2))
    sc, uc, vc = gt.linalg.svd(gt.constant(c))
    assert sc.dtype == gt.float64 and uc.dtype == gt.complex128
    np.testing.assert_allclose(uc.numpy() @ np.diag(sc.numpy()) @ vc.numpy().conj().T, c, atol=1e-12)
    # A non-finite matrix gives NaNs, as TF's kernel.
    assert np.isnan(gt.linalg.svd(gt.constant([[np.nan, 1.0]]), compute_uv=False).numpy()).all()


def test_qr_and_its_direct_gradient():
    a = RNG.normal(size=(4, 3))
    q, r = gt.linalg.qr(gt.constant(a))
    np.testing.assert_allclose(q.numpy() @ r.numpy(), a, atol=1e-12)
    np.testing.assert_array_equal(np.tril(r.numpy(), -1), 0.0)
    qf, rf = gt.linalg.qr(gt.constant(a), full_matrices=True)
    assert (qf.shape, rf.shape) == ((4, 4), (4, 3))

    # The gradients of q and r themselves (their signs vary smoothly) against differences.
    def loss(x):
        q, r = gt.linalg.qr(x)
        return gt.reduce_sum(q * gt.constant(w_q)) + gt.reduce_sum(r * gt.constant(w_r))

    w_q, w_r = RNG.normal(size=(4, 3)), RNG.normal(size=(3, 3))
    g = grad_of(loss, a)
    d = RNG.normal(size=a.shape)
    eps = 1e-6
    num = (float(loss(gt.constant(a + eps * d))) - float(loss(gt.constant(a - eps * d)))) / (2 * eps)
    assert abs(np.sum(g * d) - num) < 1e-6 * (1 + abs(num))


def test_lstsq_and_expm():
    a = RNG.normal(size=(5, 3))
    b = RNG.normal(size=(5, 2))
    x = gt.linalg.lstsq(gt.constant(a), gt.constant(b))
    np.testing.assert_allclose(x.numpy(), np.linalg.lstsq(a, b, rcond=None)[0], rtol=1e-10)
    x2 = gt.linalg.lstsq(gt.constant(a), gt.constant(b), fast=False)
    np.testing.assert_allclose(x2.numpy(), np.linalg.lstsq(a, b, rcond=None)[0], rtol=1e-10)
    ta = gt.constant(a)
    with gt.GradientTape() as tape:
        tape.watch(ta)
        y = gt.reduce_sum(gt.linalg.lstsq(ta, gt.constant(b), fast=False))
    with pytest.raises((ValueError, gt.errors.InvalidArgumentError), match="fast=False"):
        tape.gradient(y, ta)
    m = np.array([[0.0, 1.0], [-1.0, 0.0]])
    np.testing.assert_allclose(
        gt.linalg.expm(gt.constant(m)).numpy(), [[np.cos(1), np.sin(1)], [-np.sin(1), np.cos(1)]], atol=1e-14
    )
    assert gt.linalg.expm(gt.zeros([2, 0, 0])).shape == (2, 0, 0)


def test_decomposition_errors():
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.linalg.eigh(gt.ones([2, 3]))
    with pytest.raises(gt.errors.InvalidArgumentError, match="not successful"):
        gt.linalg.eigvalsh(gt.constant([[np.nan, 0.0], [0.0, 1.0]]))
    with pytest.raises(TypeError):
        gt.linalg.eigh(gt.constant([[1, 0], [0, 1]]))
    with pytest.raises(TypeError):
        gt.linalg.svd(gt.constant([[1, 0], [0, 1]]))
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.linalg.svd(gt.ones([3]))
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.linalg.qr(gt.ones([3]))
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.linalg.expm(gt.ones([2, 3]))
    with pytest.raises(gt.errors.InvalidArgumentError, match="rank deficient"):
        gt.linalg.lstsq(gt.constant([[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]]), gt.ones([3, 1]))
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.linalg.lstsq(gt.ones([3, 2]), gt.ones([2, 1]))


def test_decompositions_in_a_traced_function():
    @gt.function
    def f(x):
        e, v = gt.linalg.eigh(x)
        s = gt.linalg.svd(x, compute_uv=False)
        q, r = gt.linalg.qr(x)
        return e, s, gt.matmul(q, r), gt.linalg.expm(x)

    a = _sym(3)
    e, s, qr, ex = f(gt.constant(a))
    np.testing.assert_allclose(e.numpy(), np.linalg.eigvalsh(a), atol=1e-12)
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a, compute_uv=False), atol=1e-12)
    np.testing.assert_allclose(qr.numpy(), a, atol=1e-12)
    w, v = np.linalg.eigh(a)
    np.testing.assert_allclose(ex.numpy(), v @ np.diag(np.exp(w)) @ v.T, rtol=1e-10)


def test_float16_inverse_and_qr_as_tf_cpu():
    # TF's CPU kernels take float16 for MatrixInverse and Qr only (det, solve,
    # cholesky, svd, eigh, ... raise): gradtape factors in float32 and rounds back.
    a = np.array([[4.0, 1.0], [1.0, 3.0]], np.float16)
    inv = gt.linalg.inv(gt.constant(a))
    assert inv.dtype == gt.float16
    # TF 2.21: [[0.2727, -0.09088], [-0.09088, 0.3635]]
    np.testing.assert_allclose(
        inv.numpy().astype(np.float64), [[0.272705078125, -0.09088134765625], [-0.09088134765625, 0.363525390625]],
        rtol=1e-3,
    )
    x = gt.constant(a)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reduce_sum(gt.linalg.inv(x))
    g = tape.gradient(y, x)
    assert g.dtype == gt.float16
    # TF 2.21's float16 gradient of sum(inv(a))
    np.testing.assert_allclose(
        g.numpy().astype(np.float64),
        [[-0.0330810546875, -0.049591064453125], [-0.049591064453125, -0.0743408203125]],
        rtol=3e-3,
    )
    wide = np.array([[4.0, 1, 2], [1, 3, 0]], np.float16)
    for m, full in [(a, False), (wide, False), (wide.T.copy(), True)]:
        q, r = gt.linalg.qr(gt.constant(m), full_matrices=full)
        assert q.dtype == r.dtype == gt.float16
        qn, rn = q.numpy().astype(np.float64), r.numpy().astype(np.float64)
        np.testing.assert_allclose(qn @ rn, m.astype(np.float64), atol=1e-2)
        np.testing.assert_allclose(qn.T @ qn, np.eye(qn.shape[1]), atol=2e-3)
        np.testing.assert_array_equal(np.tril(rn, -1), 0.0)
    # TF 2.21 (Householder, r's diagonal not normalized): q = [[-0.97, -0.24], [-0.24, 0.97]]
    q, r = gt.linalg.qr(gt.constant(a))
    np.testing.assert_allclose(q.numpy().astype(np.float64), [[-0.9697, -0.2424], [-0.2424, 0.9702]], atol=2e-3)
    np.testing.assert_allclose(r.numpy().astype(np.float64), [[-4.125, -1.697], [0.0, 2.668]], atol=4e-3)
    # TF has no float16 gradient for Qr (no float16 MatrixTriangularSolve), nor kernels
    # for the other decompositions and solvers.
    x = gt.constant(a)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reduce_sum(gt.linalg.qr(x)[1])
    with pytest.raises(TypeError, match="float16"):
        tape.gradient(y, x)
    for f in [gt.linalg.det, gt.linalg.cholesky, gt.linalg.eigvalsh, lambda z: gt.linalg.svd(z, compute_uv=False)]:
        with pytest.raises(TypeError, match="float16"):
            f(gt.constant(a))
