"""jacobian / batch_jacobian (issue 3): shapes, values, pfor vs loop, properties."""

import os
import sys

import numpy as np
import pytest

import gradtape as gt


def mlp(x, w1, w2):
    return gt.tanh(gt.matmul(gt.tanh(gt.matmul(x, w1)), w2))


@pytest.fixture
def weights():
    rng = np.random.default_rng(0)
    return (
        gt.constant(rng.normal(size=(4, 5)) * 0.5),
        gt.constant(rng.normal(size=(5, 3)) * 0.5),
    )


def test_scalar_source_jacobian_has_target_shape():
    x = gt.linspace(-10.0, 10.0, 200 + 1)
    delta = gt.Variable(0.0)
    with gt.GradientTape() as tape:
        y = gt.nn.sigmoid(x + delta)
    dy_dx = tape.jacobian(y, delta)
    assert y.shape == (201,) and dy_dx.shape == (201,)
    s = 1 / (1 + np.exp(-x.numpy()))
    np.testing.assert_allclose(dy_dx.numpy(), s * (1 - s), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("pfor", [True, False])
def test_rows_equal_per_component_gradients(weights, pfor):
    w1, w2 = weights
    x = gt.constant(np.random.default_rng(1).normal(size=(2, 4)))
    with gt.GradientTape(persistent=True) as t:
        t.watch([x, w1])
        y = mlp(x, w1, w2)
        parts = {(i, j): y[i, j] for i in range(2) for j in range(3)}
    jx, jw = t.jacobian(y, [x, w1], experimental_use_pfor=pfor)
    assert jx.shape == (2, 3, 2, 4) and jw.shape == (2, 3, 4, 5)
    for i in range(2):
        for j in range(3):
            gx, gw = t.gradient(parts[i, j], [x, w1])
            np.testing.assert_allclose(jx.numpy()[i, j], gx.numpy(), rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(jw.numpy()[i, j], gw.numpy(), rtol=1e-12, atol=1e-14)


def test_pfor_and_loop_agree_and_chunks_agree(weights):
    w1, w2 = weights
    x = gt.constant(np.random.default_rng(2).normal(size=(3, 4)))
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = mlp(x, w1, w2)
    a = t.jacobian(y, x).numpy()
    b = t.jacobian(y, x, experimental_use_pfor=False).numpy()
    c = t.jacobian(y, x, parallel_iterations=4).numpy()
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(a, c, rtol=1e-12, atol=1e-14)


def test_jacobian_sum_equals_gradient():
    x = gt.random.normal([7, 5])
    layer = gt.layers.Dense(10, activation=gt.nn.relu)
    with gt.GradientTape(persistent=True) as tape:
        y = layer(x)
    j = tape.jacobian(y, layer.kernel)
    assert j.shape == (7, 10, 5, 10)
    # Independent reference: dy[i,j]/dK[k,l] = [z_ij > 0] x[i,k] δ_jl, z = x K + b.
    xv = x.numpy().astype(np.float64)
    z = xv @ layer.kernel.numpy().astype(np.float64) + layer.bias.numpy()
    want = np.einsum("ij,ik,jl->ijkl", (z > 0).astype(float), xv, np.eye(10))
    np.testing.assert_allclose(j.numpy(), want, rtol=1e-6, atol=1e-6)
    # And the jacobian's sum over the target is the gradient (two paths agree).
    g = tape.gradient(y, layer.kernel)
    j_sum = gt.reduce_sum(j, axis=[0, 1])
    np.testing.assert_allclose(j_sum.numpy(), g.numpy(), rtol=1e-5, atol=1e-5)


def test_hessian_via_nested_jacobian_is_symmetric():
    x = gt.random.normal([7, 5])
    layer1 = gt.layers.Dense(8, activation=gt.nn.elu)
    layer2 = gt.layers.Dense(6, activation=gt.nn.elu)
    with gt.GradientTape() as t2:
        with gt.GradientTape() as t1:
            h1 = layer2(layer1(x))
            loss = gt.reduce_mean(h1**2)
        g = t1.gradient(loss, layer1.kernel)
    h = t2.jacobian(g, layer1.kernel)
    assert h.shape == (5, 8, 5, 8)
    n = 40
    h_mat = h.numpy().reshape(n, n)
    np.testing.assert_allclose(h_mat, h_mat.T, atol=1e-5)
    # Independent reference: central differences (float64) of the gradient written in numpy.
    xv = x.numpy().astype(np.float64)
    k1, b1 = layer1.kernel.numpy().astype(np.float64), layer1.bias.numpy().astype(np.float64)
    k2, b2 = layer2.kernel.numpy().astype(np.float64), layer2.bias.numpy().astype(np.float64)

    def elu_and_slope(z):
        return np.where(z > 0, z, np.expm1(z)), np.where(z > 0, 1.0, np.exp(z))

    def grad_k1(k):
        a1, s1 = elu_and_slope(xv @ k + b1)
        h2, s2 = elu_and_slope(a1 @ k2 + b2)
        d2 = 2.0 * h2 / h2.size * s2
        return xv.T @ ((d2 @ k2.T) * s1)

    np.testing.assert_allclose(g.numpy(), grad_k1(k1), rtol=1e-4, atol=1e-6)
    eps = 1e-6
    fd = np.stack(
        [
            (grad_k1(k1 + eps * e.reshape(5, 8)) - grad_k1(k1 - eps * e.reshape(5, 8))).ravel() / (2 * eps)
            for e in np.eye(n)
        ]
    )
    np.testing.assert_allclose(h_mat, fd, rtol=1e-3, atol=2e-5)


def test_batch_jacobian_equals_diagonal_blocks():
    x = gt.random.normal([7, 5])
    layer1 = gt.layers.Dense(8, activation=gt.nn.elu)
    layer2 = gt.layers.Dense(6, activation=gt.nn.elu)
    with gt.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer2(layer1(x))
    j = tape.jacobian(y, x)
    assert j.shape == (7, 6, 7, 5)
    jb = tape.batch_jacobian(y, x)
    assert jb.shape == (7, 6, 5)
    jn = j.numpy()
    diag = np.stack([jn[b, :, b, :] for b in range(7)])
    np.testing.assert_allclose(jb.numpy(), diag, atol=1e-6)
    j_sum = gt.reduce_sum(j, axis=2)
    assert float(gt.reduce_max(abs(jb - j_sum))) < 1e-3
    jl = tape.batch_jacobian(y, x, experimental_use_pfor=False)
    np.testing.assert_allclose(jl.numpy(), jb.numpy(), atol=1e-6)


def test_unconnected_jacobian():
    x, z = gt.constant([1.0, 2.0]), gt.constant([3.0])
    with gt.GradientTape(persistent=True) as t:
        t.watch([x, z])
        y = x * 2.0
    assert t.jacobian(y, z) is None
    jz = t.jacobian(y, z, unconnected_gradients=gt.UnconnectedGradients.ZERO)
    assert jz.shape == (2, 1) and not jz.numpy().any()


def test_jacobian_errors():
    x = gt.constant([[1.0, 2.0]])
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
    with pytest.raises(TypeError, match="single Tensor"):
        t.jacobian([y, y], x)
    with pytest.raises(gt.errors.InvalidArgumentError, match="first dimension"):
        t.batch_jacobian(y, gt.constant([[1.0], [2.0]]))
    # The tape is still usable after the errors.
    assert t.jacobian(y, x).shape == (1, 2, 1, 2)


def test_non_persistent_jacobian_then_second_call_fails():
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape() as t:
        t.watch(x)
        y = x * x
    assert t.jacobian(y, x, parallel_iterations=1).shape == (2, 2)
    with pytest.raises(RuntimeError, match="non-persistent"):
        t.jacobian(y, x)


# ----------------------------------------------------------------------------- independent references
# Closed forms in numpy (and central differences of a numpy gradient): none of the
# expected values below comes from gradtape.
def _affine(rng, dtype, b_shape):
    x = rng.normal(size=(4, 3)).astype(dtype)
    w = rng.normal(size=(3, 2)).astype(dtype)
    b = rng.normal(size=b_shape).astype(dtype)
    return x, w, b


_TOL = {"float64": dict(rtol=1e-13, atol=1e-14), "float32": dict(rtol=1e-5, atol=1e-6)}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("pfor", [True, False], ids=["pfor", "loop"])
@pytest.mark.parametrize("b_shape", [(2,), (1, 2), ()], ids=["b2", "b1x2", "scalar_b"])
def test_jacobian_of_affine_layer_wrt_broadcast_bias_weights_and_inputs(b_shape, pfor, dtype):
    # y = x @ W + b, b broadcast over the batch axis (and over everything when scalar).
    x, w, b = _affine(np.random.default_rng(11), dtype, b_shape)
    tx, tw, tb = gt.constant(x), gt.constant(w), gt.constant(b)
    with gt.GradientTape(persistent=True) as tape:
        tape.watch([tx, tw, tb])
        y = gt.matmul(tx, tw) + tb
    jx, jw, jb = tape.jacobian(y, [tx, tw, tb], experimental_use_pfor=pfor)
    eye2, eye4 = np.eye(2), np.eye(4)
    # dy[i,j]/db[..k] = δ_jk; /dW[k,l] = x[i,k] δ_jl; /dx[m,k] = δ_im W[k,j].
    want_b = {
        (2,): np.broadcast_to(eye2, (4, 2, 2)),
        (1, 2): np.broadcast_to(eye2, (4, 2, 2))[:, :, None, :],
        (): np.ones((4, 2)),
    }[b_shape]
    want_w = np.einsum("ik,jl->ijkl", x.astype(np.float64), eye2)
    want_x = np.einsum("im,kj->ijmk", eye4, w.astype(np.float64))
    for got, want in [(jb, want_b), (jw, want_w), (jx, want_x)]:
        assert got.dtype.name == dtype and got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want, **_TOL[dtype])


@pytest.mark.parametrize("pfor", [True, False], ids=["pfor", "loop"])
@pytest.mark.parametrize("b_shape", [(4,), (3, 1), (1, 3, 4)], ids=["b4", "b3x1", "b1x3x4"])
def test_jacobian_wrt_bias_broadcast_over_two_leading_axes(b_shape, pfor):
    # y = tanh(x * s + b) with x of shape (2, 3, 4): dy[a,i,j]/db[..] = (1 - y²)[a,i,j]
    # times the indicator that b's element broadcast to (a, i, j).
    rng = np.random.default_rng(12)
    x, s, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(3, 4)), rng.normal(size=b_shape)
    tb = gt.constant(b)
    with gt.GradientTape(persistent=not pfor) as tape:
        tape.watch(tb)
        y = gt.tanh(gt.constant(x) * gt.constant(s) + tb)
    j = tape.jacobian(y, tb, experimental_use_pfor=pfor)
    yv = np.tanh(x * s + b)
    want = np.zeros((2, 3, 4) + b_shape)
    for idx in np.ndindex(2, 3, 4):
        src = tuple(0 if n == 1 else i for i, n in zip(idx[3 - len(b_shape) :], b_shape))
        want[idx + src] = 1.0 - yv[idx] ** 2
    assert j.shape == want.shape
    np.testing.assert_allclose(j.numpy(), want, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("pfor", [True, False], ids=["pfor", "loop"])
def test_batch_jacobian_of_a_biased_tanh_layer(pfor):
    # y[n] = tanh(W x[n] + b): dy[n,j]/dx[n,k] = (1 - y²)[n,j] W[k,j] (x @ W layout).
    rng = np.random.default_rng(13)
    x, w, b = rng.normal(size=(5, 3)), rng.normal(size=(3, 4)), rng.normal(size=(4,))
    tx = gt.constant(x)
    with gt.GradientTape(persistent=not pfor) as tape:
        tape.watch(tx)
        y = gt.tanh(gt.matmul(tx, gt.constant(w)) + gt.constant(b))
    jb = tape.batch_jacobian(y, tx, experimental_use_pfor=pfor)
    yv = np.tanh(x @ w + b)
    want = (1.0 - yv**2)[:, :, None] * w.T[None, :, :]
    assert jb.shape == (5, 4, 3)
    np.testing.assert_allclose(jb.numpy(), want, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("pfor", [True, False], ids=["pfor", "loop"])
def test_batch_jacobian_wrt_an_operand_broadcast_along_features(pfor):
    # y = x * c with c of shape (5, 1): per example, dy[n, j]/dc[n, 0] = x[n, j].
    rng = np.random.default_rng(14)
    x, c = rng.normal(size=(5, 3)), rng.normal(size=(5, 1))
    tc = gt.constant(c)
    with gt.GradientTape(persistent=not pfor) as tape:
        tape.watch(tc)
        y = gt.constant(x) * tc + 1.0
    jb = tape.batch_jacobian(y, tc, experimental_use_pfor=pfor)
    assert jb.shape == (5, 3, 1)
    np.testing.assert_allclose(jb.numpy(), x[:, :, None], rtol=1e-15)


def _relu_net(x, w1, b1, w2, b2, m=np):
    """f(x) = sum(tanh(relu(x W1 + b1) W2 + b2)) for one input row x."""
    relu = (lambda z: np.maximum(z, 0.0)) if m is np else gt.nn.relu
    tanh = np.tanh if m is np else gt.tanh
    h = relu(m.matmul(x, w1) + b1)
    return m.reduce_sum(tanh(m.matmul(h, w2) + b2)) if m is gt else np.sum(tanh(h @ w2 + b2))


def _relu_net_grad_np(x, w1, b1, w2, b2):
    z = x @ w1 + b1
    t = np.tanh(np.maximum(z, 0.0) @ w2 + b2)
    return (((1.0 - t**2) @ w2.T) * (z > 0)) @ w1.T


def _relu_net_params():
    rng = np.random.default_rng(15)
    w1, b1 = rng.normal(size=(4, 6)), rng.normal(size=(6,)) * 0.5
    w2, b2 = rng.normal(size=(6, 3)) * 0.7, rng.normal(size=(3,)) * 0.3
    x = rng.normal(size=(4,))
    z = x @ w1 + b1
    assert np.min(np.abs(z)) > 0.05  # no hidden unit at its kink: differences are valid
    return x, w1, b1, w2, b2


def test_hessian_of_a_relu_network_against_closed_form_and_differences():
    x, w1, b1, w2, b2 = _relu_net_params()
    # Closed form: H = W1 D W2 diag(-2 t (1 - t²)) W2ᵀ D W1ᵀ, D = diag(z > 0).
    z = x @ w1 + b1
    t = np.tanh(np.maximum(z, 0.0) @ w2 + b2)
    d = np.diag((z > 0).astype(float))
    closed = w1 @ d @ w2 @ np.diag(-2.0 * t * (1.0 - t**2)) @ w2.T @ d @ w1.T
    eps = 1e-6
    fd = np.stack(
        [
            (_relu_net_grad_np(x + eps * e, w1, b1, w2, b2) - _relu_net_grad_np(x - eps * e, w1, b1, w2, b2))
            / (2 * eps)
            for e in np.eye(4)
        ]
    )
    np.testing.assert_allclose(closed, fd, rtol=1e-6, atol=1e-8)  # the reference itself

    params = [gt.constant(p) for p in (w1, b1, w2, b2)]
    tx = gt.constant(x)
    with gt.GradientTape() as outer:
        outer.watch(tx)
        with gt.GradientTape() as inner:
            inner.watch(tx)
            f = _relu_net(gt.reshape(tx, [1, 4]), *params, m=gt)
        g = inner.gradient(f, tx)
    np.testing.assert_allclose(g.numpy(), _relu_net_grad_np(x, w1, b1, w2, b2), rtol=1e-13, atol=1e-14)
    h = outer.jacobian(g, tx)
    np.testing.assert_allclose(h.numpy(), closed, rtol=1e-12, atol=1e-13)
    h2 = gt.autodiff.hessian(lambda v: _relu_net(gt.reshape(v, [1, 4]), *params, m=gt), tx)
    np.testing.assert_allclose(h2.numpy(), closed, rtol=1e-12, atol=1e-13)


def test_hessian_of_a_squared_relu_layer_wrt_its_weights():
    # f(W) = sum_n sum_j v_j relu(x_n W)_j²: H[(k,j),(m,l)] = δ_jl Σ_n 2 v_j [z_nj > 0] x_nk x_nm.
    rng = np.random.default_rng(16)
    x, w, v = rng.normal(size=(5, 3)), rng.normal(size=(3, 4)), rng.normal(size=(4,))
    z = x @ w
    assert np.min(np.abs(z)) > 1e-3
    want = np.einsum("nj,nk,nm,jl->kjml", 2.0 * v * (z > 0), x, x, np.eye(4))
    tw = gt.constant(w)
    with gt.GradientTape() as outer:
        outer.watch(tw)
        with gt.GradientTape() as inner:
            inner.watch(tw)
            f = gt.reduce_sum(gt.constant(v) * gt.nn.relu(gt.matmul(gt.constant(x), tw)) ** 2)
        g = inner.gradient(f, tw)
    h = outer.jacobian(g, tw)
    assert h.shape == (3, 4, 3, 4)
    np.testing.assert_allclose(h.numpy(), want, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("method", ["jacobian", "batch_jacobian"])
def test_loop_on_a_non_persistent_tape_is_refused_as_in_tf(method):
    # TF (eager): the row-by-row loop (experimental_use_pfor=False) needs a persistent
    # tape; the refusal leaves the tape usable.
    x = gt.constant([[1.0, 2.0]])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(RuntimeError, match="persistent=True"):
        getattr(tape, method)(y, x, experimental_use_pfor=False)
    j = getattr(tape, method)(y, x).numpy()
    assert j.reshape(2, 2).tolist() == [[2.0, 0.0], [0.0, 4.0]]


# ---------------------------------------------------------------------------------------
# Every rule vectorized: `jacobian` sweeps all its rows through each gradient rule at
# once (the rule sees output gradients with a leading batch axis). A rule that does not
# accept them is run once per row, which `_per_row_fallbacks` reports. Custom gradients
# written in Python (`gt.custom_gradient`, `RegisterGradient`) stay per row: they call
# user code that expects unbatched gradients.

sys.path.insert(0, os.path.dirname(__file__))
from op_specs import SPECS  # noqa: E402
from test_gradcheck import _is_empty, _sample, _shape_id  # noqa: E402

from gradtape import _gradtape as _native  # noqa: E402


def _spec_params():
    out = []
    for spec in SPECS:
        if not spec.real or "float64" not in spec.dtypes:
            continue
        for shapes in spec.shapes:
            if _is_empty(spec, shapes):
                continue
            # Second order where the row's gradient check goes that far.
            for order in range(1, min(spec.order, 2) + 1):
                pid = f"{spec.id}-{_shape_id(shapes)}-order{order}"
                out.append(pytest.param(spec, tuple(shapes), order, id=pid))
    return out


def _jacobians(fn, xs, pfor, order):
    """Jacobians of ``fn`` (order 1) or of its gradient (order 2: the jacobian of the
    gradient of ``sum((fn + 1)**3)``, a hessian through every rule's own gradient)."""
    prim = [gt.constant(x) for x in xs]
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(prim)
        if order == 1:
            y = fn(*prim)
        else:
            with gt.GradientTape() as inner:
                inner.watch(prim)
                z = fn(*prim) + 1.0
                loss = gt.reduce_sum(z * z * z)
            y = inner.gradient(loss, prim[0], unconnected_gradients=gt.UnconnectedGradients.ZERO)
    js = tape.jacobian(
        y, prim, unconnected_gradients=gt.UnconnectedGradients.ZERO, experimental_use_pfor=pfor
    )
    return [j.numpy() for j in js]


# Every engine rule takes batched seeds (convolutions, pooling and the decompositions
# included): no op may take the per-row path, and the results equal the row loop's.
NOT_YET_BATCHED: set = set()


@pytest.mark.parametrize("spec,shapes,order", _spec_params())
def test_every_rule_takes_batched_seeds(spec, shapes, order):
    xs, _ = _sample(spec, shapes, "float64")
    _native._per_row_fallbacks()
    vec = _jacobians(spec.fn, xs, True, order)
    fell = set(_native._per_row_fallbacks())
    assert fell <= NOT_YET_BATCHED, f"rules run once per row: {sorted(fell - NOT_YET_BATCHED)}"
    loop = _jacobians(spec.fn, xs, False, order)
    for a, b in zip(vec, loop):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_python_custom_gradients_run_per_row_and_are_reported():
    @gt.custom_gradient
    def twice(x):
        def grad(dy):
            # Row by row: the rule sees the unbatched gradient.
            assert tuple(dy.shape) == (3,)
            return 2.0 * dy

        return 2.0 * x, grad

    x = gt.constant([1.0, 2.0, 3.0])
    _native._per_row_fallbacks()
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = twice(x) * x
    j = tape.jacobian(y, x)
    assert _native._per_row_fallbacks() == ["IdentityN"]
    np.testing.assert_allclose(j.numpy(), np.diag([4.0, 8.0, 12.0]))
