"""Seed 002, TF's advanced-autodiff guide: the parts that need ``gt.linalg.solve`` and
``gt.einsum`` (the Newton step on a Hessian, selecting batch-jacobian diagonals), and a
run of ``python -m gradtape.examples.guide``, which also needs ``gt.pad``.

These fail until ``gt.linalg.solve``, ``gt.einsum`` and ``gt.pad`` are available: they
are not skipped, because the guide must run end to end.
"""

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

import gradtape as gt


def _hessian_example():
    x = gt.random.normal([7, 5])
    layer1 = gt.layers.Dense(8, activation=gt.nn.relu)
    layer2 = gt.layers.Dense(6, activation=gt.nn.relu)

    def loss_fn():
        return gt.reduce_mean(layer2(layer1(x)) ** 2)

    with gt.GradientTape() as t2:
        with gt.GradientTape() as t1:
            loss = loss_fn()
        g = t1.gradient(loss, layer1.kernel)
    h = t2.jacobian(g, layer1.kernel)
    return layer1, loss, g, h, loss_fn


def test_newton_step():
    layer1, loss, g, h, loss_fn = _hessian_example()

    n_params = gt.reduce_prod(layer1.kernel.shape)
    g_vec = gt.reshape(g, [n_params, 1])
    h_mat = gt.reshape(h, [n_params, n_params])

    eps = 1e-3
    eye_eps = gt.eye(h_mat.shape[0]) * eps

    kernel_before = layer1.kernel.numpy().copy()
    # X(k+1) = X(k) - (∇²f(X(k)))^-1 @ ∇f(X(k))
    # h_mat = ∇²f(X(k))
    # g_vec = ∇f(X(k))
    update = gt.linalg.solve(h_mat + eye_eps, g_vec)

    # Reshape the update and apply it to the variable.
    _ = layer1.kernel.assign_sub(gt.reshape(update, layer1.kernel.shape))

    assert update.shape == (40, 1)
    expected = np.linalg.solve(
        h_mat.numpy().astype(np.float64) + 1e-3 * np.eye(40), g_vec.numpy().astype(np.float64)
    )
    np.testing.assert_allclose(update.numpy(), expected, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(
        layer1.kernel.numpy(), kernel_before - expected.reshape(5, 8), rtol=1e-3, atol=1e-4
    )
    # The step lowers the loss (seeded: gt.random.set_seed(0) in conftest).
    assert float(loss_fn()) < float(loss)


def test_einsum_selects_batch_diagonals(capsys):
    x = gt.random.normal([7, 5])
    layer1 = gt.layers.Dense(8, activation=gt.nn.elu)
    layer2 = gt.layers.Dense(6, activation=gt.nn.elu)
    with gt.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer1(x)
        y = layer2(y)
    j = tape.jacobian(y, x)

    j_sum = gt.reduce_sum(j, axis=2)
    print(j_sum.shape)
    j_select = gt.einsum("bxby->bxy", j)
    print(j_select.shape)
    assert capsys.readouterr().out == "(7, 6, 5)\n(7, 6, 5)\n"

    jn = j.numpy()
    np.testing.assert_allclose(j_select.numpy(), np.einsum("bxby->bxy", jn), rtol=1e-6)
    # Independent examples: selecting the diagonal equals summing over the batch.
    np.testing.assert_allclose(j_select.numpy(), j_sum.numpy(), rtol=1e-5, atol=1e-7)

    jb = tape.batch_jacobian(y, x)
    error = gt.reduce_max(abs(jb - j_select))
    assert error < 1e-3


def test_guide_module_writes_the_figures(tmp_path):
    if importlib.util.find_spec("matplotlib") is None:
        pytest.skip("matplotlib is an optional extra (pip install matplotlib) and is not installed")
    out = tmp_path / "figs"
    r = subprocess.run(
        [sys.executable, "-m", "gradtape.examples.guide", str(out)],
        capture_output=True, text=True, timeout=600,
    )
    assert r.returncode == 0, r.stderr
    names = ["sigmoid.png", "hessian.png", "batch_slice.png", "batch_patches.png", "batchnorm_patches.png"]
    for name in names:
        data = (out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", name
        assert len(data) > 5000, name
    assert "h.shape: (5, 8, 5, 8)" in r.stdout
    line = [s for s in r.stdout.splitlines() if s.startswith("Newton step: loss ")][0]
    before, after = (float(v) for v in line[len("Newton step: loss "):].split(" -> "))
    assert after < before
