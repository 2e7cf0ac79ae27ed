"""jacobian / batch_jacobian (issue 3): shapes, values, pfor vs loop, properties."""

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
    g = tape.gradient(y, layer.kernel)
    j_sum = gt.reduce_sum(j, axis=[0, 1])
    assert float(gt.reduce_max(abs(g - j_sum))) < 1e-3


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
    assert np.abs(h_mat).max() > 0


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
