"""Seed 002, TF's advanced-autodiff guide: custom gradients, jacobians (scalar and
tensor sources), the Hessian example, batch jacobians and BatchNormalization, run as
written with ``tf`` -> ``gt`` (``tf.keras.layers`` -> ``gt.layers``).

The tape-control parts of the guide are in test_guides.py; the parts that need
``gt.linalg.solve`` / ``gt.einsum`` are in test_advanced_guide_linalg.py. Plotting calls
are left out (``python -m gradtape.examples.guide`` draws the figures).
"""

import subprocess
import sys

import numpy as np
import pytest

import gradtape as gt


def _offdiag_max(m):
    m = np.asarray(m)
    return np.abs(m - np.diag(np.diag(m))).max()


# --------------------------------------------------------------------------------------
# Custom gradients
# --------------------------------------------------------------------------------------


def test_custom_gradient_clip_by_norm(capsys):
    # Establish an identity operation, but clip during the gradient pass.
    @gt.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return gt.clip_by_norm(dy, 0.5)

        return y, backward

    v = gt.Variable(2.0)
    with gt.GradientTape() as t:
        output = clip_gradients(v * v)
    print(t.gradient(output, v))  # calls "backward", which clips 4 to 2
    assert capsys.readouterr().out == "gt.Tensor(2.0, shape=(), dtype=float32)\n"
    assert output.numpy() == 4.0


# --------------------------------------------------------------------------------------
# Jacobians
# --------------------------------------------------------------------------------------


def test_jacobian_scalar_source():
    x = gt.linspace(-10.0, 10.0, 200 + 1)
    delta = gt.Variable(0.0)

    with gt.GradientTape() as tape:
        y = gt.nn.sigmoid(x + delta)

    dy_dx = tape.jacobian(y, delta)

    assert y.shape == (201,)
    assert dy_dx.shape == (201,)
    s = 1 / (1 + np.exp(-x.numpy().astype(np.float64)))
    np.testing.assert_allclose(dy_dx.numpy(), s * (1 - s), rtol=1e-5, atol=1e-7)
    assert dy_dx.numpy()[100] == pytest.approx(0.25)


def test_jacobian_tensor_source(capsys):
    x = gt.random.normal([7, 5])
    layer = gt.layers.Dense(10, activation=gt.nn.relu)

    with gt.GradientTape(persistent=True) as tape:
        y = layer(x)

    assert y.shape == (7, 10)
    assert layer.kernel.shape == (5, 10)

    j = tape.jacobian(y, layer.kernel)
    assert j.shape == (7, 10, 5, 10)

    g = tape.gradient(y, layer.kernel)
    print("g.shape:", g.shape)

    j_sum = gt.reduce_sum(j, axis=[0, 1])
    delta = gt.reduce_max(abs(g - j_sum)).numpy()
    assert delta < 1e-3
    print("delta:", delta)

    out = capsys.readouterr().out.splitlines()
    assert out[0] == "g.shape: (5, 10)"
    assert out[1].startswith("delta: ")
    # And the values themselves: dy[b, u]/dkernel[i, u'] = x[b, i] * relu'(pre[b, u]) * (u == u').
    pre = x.numpy() @ layer.kernel.numpy() + layer.bias.numpy()
    mask = (pre > 0).astype(np.float32)
    expected = np.einsum("bi,bu,uv->buiv", x.numpy(), mask, np.eye(10, dtype=np.float32))
    np.testing.assert_allclose(j.numpy(), expected, rtol=1e-6, atol=1e-7)


def test_hessian_example(capsys):
    x = gt.random.normal([7, 5])
    layer1 = gt.layers.Dense(8, activation=gt.nn.relu)
    layer2 = gt.layers.Dense(6, activation=gt.nn.relu)

    with gt.GradientTape() as t2:
        with gt.GradientTape() as t1:
            x = layer1(x)
            x = layer2(x)
            loss = gt.reduce_mean(x**2)

        g = t1.gradient(loss, layer1.kernel)

    h = t2.jacobian(g, layer1.kernel)

    print(f"layer.kernel.shape: {layer1.kernel.shape}")
    print(f"h.shape: {h.shape}")
    assert capsys.readouterr().out == "layer.kernel.shape: (5, 8)\nh.shape: (5, 8, 5, 8)\n"

    n_params = gt.reduce_prod(layer1.kernel.shape)
    g_vec = gt.reshape(g, [n_params, 1])
    h_mat = gt.reshape(h, [n_params, n_params])
    assert int(n_params) == 40
    assert g_vec.shape == (40, 1)
    assert h_mat.shape == (40, 40)

    # The Hessian matrix should be symmetric.
    hm = h_mat.numpy()
    assert np.abs(hm).max() > 1e-3  # not trivially zero
    np.testing.assert_allclose(hm, hm.T, rtol=1e-5, atol=1e-6)


def test_hessian_example_equals_autodiff_hessian():
    x = gt.random.normal([7, 5])
    layer1 = gt.layers.Dense(8, activation=gt.nn.relu)
    layer2 = gt.layers.Dense(6, activation=gt.nn.relu)
    with gt.GradientTape() as t2:
        with gt.GradientTape() as t1:
            loss = gt.reduce_mean(layer2(layer1(x)) ** 2)
        g = t1.gradient(loss, layer1.kernel)
    h = t2.jacobian(g, layer1.kernel)
    h2 = gt.autodiff.hessian(lambda k: gt.reduce_mean(layer2(layer1(x)) ** 2), layer1.kernel)
    np.testing.assert_allclose(h.numpy(), h2.numpy(), rtol=1e-6, atol=1e-7)


def _batch_model(x, with_bn=False):
    layer1 = gt.layers.Dense(8, activation=gt.nn.elu)
    bn = gt.layers.BatchNormalization() if with_bn else None
    layer2 = gt.layers.Dense(6, activation=gt.nn.elu)
    with gt.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer1(x)
        if with_bn:
            y = bn(y, training=True)
        y = layer2(y)
    return tape, y


def test_batch_jacobian():
    x = gt.random.normal([7, 5])
    tape, y = _batch_model(x)
    assert y.shape == (7, 6)

    j = tape.jacobian(y, x)
    assert j.shape == (7, 6, 7, 5)

    # Every (batch, batch) slice is diagonal.
    for o in range(6):
        for i in range(5):
            s = j[:, o, :, i].numpy()
            assert _offdiag_max(s) == 0.0
    assert np.abs(np.diagonal(j[:, 0, :, 0].numpy())).max() > 1e-3

    j_sum = gt.reduce_sum(j, axis=2)
    assert j_sum.shape == (7, 6, 5)

    jb = tape.batch_jacobian(y, x)
    assert jb.shape == (7, 6, 5)

    error = gt.reduce_max(abs(jb - j_sum))
    assert error < 1e-3
    assert float(error) < 1e-6
    # jb[b] is the (ins, outs) Jacobian of example b on its own.
    jn = j.numpy()
    np.testing.assert_allclose(jb.numpy(), np.stack([jn[b, :, b, :] for b in range(7)]), rtol=1e-6)


def test_batch_jacobian_with_batch_normalization(capsys):
    x = gt.random.normal([7, 5])
    tape, y = _batch_model(x, with_bn=True)

    j = tape.jacobian(y, x)
    print(f"j.shape: {j.shape}")

    # These slices are not diagonal: batch statistics couple the examples.
    jn = j.numpy()
    for o in range(6):
        for i in range(5):
            assert _offdiag_max(jn[:, o, :, i]) > 1e-4

    jb = tape.batch_jacobian(y, x)
    print(f"jb.shape: {jb.shape}")
    assert capsys.readouterr().out == "j.shape: (7, 6, 7, 5)\njb.shape: (7, 6, 5)\n"

    # "Something with the expected shape, but unclear meaning": as in TF, the
    # gradient of each output column summed over the batch, i.e. the full Jacobian
    # summed over the *target's* batch axis — not the per-example diagonal blocks.
    np.testing.assert_allclose(jb.numpy(), jn.sum(axis=0).transpose(1, 0, 2), rtol=1e-4, atol=1e-5)
    diag_blocks = np.stack([jn[b, :, b, :] for b in range(7)])
    assert np.abs(jb.numpy() - diag_blocks).max() > 1e-3


def test_batch_normalization_layer_in_guide_model_updates_moving_stats():
    x = gt.random.normal([7, 5])
    layer1 = gt.layers.Dense(8, activation=gt.nn.elu)
    bn = gt.layers.BatchNormalization()
    h = layer1(x)
    bn(h, training=True)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.01 * h.numpy().mean(axis=0), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(
        bn.moving_variance.numpy(), 0.99 + 0.01 * h.numpy().var(axis=0), rtol=1e-5
    )


# --------------------------------------------------------------------------------------
# python -m gradtape.examples.guide
# --------------------------------------------------------------------------------------


def test_guide_module_without_matplotlib_says_so(tmp_path):
    # Hide matplotlib (an optional extra) and run the module's main().
    code = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "from gradtape.examples import guide\n"
        f"sys.exit(guide.main([{str(tmp_path / 'figs')!r}]))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert "needs matplotlib" in r.stderr
    assert "optional extra" in r.stderr
    assert not (tmp_path / "figs").exists()


def test_tensors_copy_as_themselves_for_plotting():
    # The guide plots tensors directly (plt.plot(x.numpy(), y)); matplotlib copies
    # the data with copy.copy, which TF's immutable EagerTensor answers with itself.
    import copy

    y = gt.nn.sigmoid(gt.linspace(-1.0, 1.0, 3))
    assert copy.copy(y) is y
    assert copy.deepcopy(y) is y
    assert copy.deepcopy([y, {"k": y}])[1]["k"] is y
    # Variables as in TF: a shallow copy is the variable, a deep copy a new one.
    v = gt.Variable([1.0, 2.0], trainable=False, name="w")
    assert copy.copy(v) is v
    w = copy.deepcopy(v)
    assert w is not v
    assert w.name == "w:0" and w.trainable is False and w.dtype == gt.float32
    v.assign([3.0, 4.0])
    assert w.numpy().tolist() == [1.0, 2.0]
