"""Stateless gamma, Poisson and binomial draws (issue 15): TF 2.21's rejection samplers on
its Philox streams, so TF's numbers for the same seed; the gamma draw's gradient wrt alpha
(TF's RandomGammaGrad); the same numbers traced and after a SavedModel load; Generator's
binomial and its state; bfloat16 for the stateless float draws."""

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

import gradtape as gt


def h(t):
    return hashlib.sha256(np.ascontiguousarray(t.numpy()).tobytes()).hexdigest()[:16]


S = [5, 6]

# sha256 prefixes of TF 2.21's outputs (tensorflow-cpu 2.21.0, CPU) for the same calls,
# and their first values as TF printed them.
TF = {
    "gamma_f32": ("005da3f23b1d7f47", [0.023146213963627815, 0.5986959934234619, 2.356947660446167]),
    "gamma_f64": ("8741c4f7e9d96342", [0.001299496275368904, 21.07410170570598, 1.628514394797496e-05]),
    "gamma_f16": ("a65440b958ee9fdd", [0.98828125, 4.0625, 2.568359375]),
    "poisson_i32": ("14b6287570b875bd", [0.0, 3.0, 38.0, 1.0, 10.0, 46.0]),
    "poisson_f32": ("cc57b09d2c97dffd", [11.0, 13.0, 13.0, 15.0, 14.0, 10.0]),
    "poisson_f64lam": ("b6cc1ef704a901f1", [1.0, 10105.0, 3.0, 10167.0, 3.0, 10183.0]),
    "binomial_i32": ("bfbd971efbe2a49d", [1.0, 161.0, 5.0, 46.0, 6.0, 155.0]),
    "binomial_bcast": ("53b922b6ea08fd36", [9.0, 19.0, 23.0, 46.0, 2.0, 5.0]),
    "binomial_f64": ("97fc1aeaeee74c70", [11.0, 13.0, 13.0, 14.0, 13.0, 10.0]),
    "uniform_bf16": ("c3518c2bb195e849", [0.8359375, 0.0859375, 0.5, 0.1328125, 0.828125, 0.890625]),
    "uniform_bf16_range": ("e0b5e122f74cf6af", [2.1875, -1.5703125, 0.5, -1.3359375, 2.125, 2.4375]),
    "normal_bf16": ("bcaba3eb4bdee485", [3.046875, -0.078125, 3.5625, 2.8125, 2.8125, 0.78125]),
    "trunc_bf16": ("2d45fa4f524c93f8", [1.0234375, -0.5390625, 1.28125, 0.91015625, -1.5625, 1.671875]),
}


def _cases():
    r = gt.random
    return {
        "gamma_f32": lambda: r.stateless_gamma([1000, 3], seed=S, alpha=[0.5, 1.0, 4.0]),
        "gamma_f64": lambda: r.stateless_gamma([501, 2], seed=S, alpha=[0.3, 7.5], beta=[2.0, 0.5], dtype=gt.float64),
        "gamma_f16": lambda: r.stateless_gamma([301], seed=S, alpha=2.5, dtype=gt.float16),
        "poisson_i32": lambda: r.stateless_poisson([1000, 3], seed=S, lam=[0.5, 5, 40]),
        "poisson_f32": lambda: r.stateless_poisson([1001], seed=S, lam=gt.constant(12.5), dtype=gt.float32),
        "poisson_f64lam": lambda: r.stateless_poisson(
            [500, 2], seed=S, lam=gt.constant([3.0, 1e4], gt.float64), dtype=gt.int64),
        "binomial_i32": lambda: r.stateless_binomial(
            [1000, 4], seed=S, counts=[10.0, 200.0, 5.0, 1000.0], probs=[0.3, 0.8, 0.97, 0.05]),
        "binomial_bcast": lambda: r.stateless_binomial(
            [50, 3, 2], seed=S, counts=gt.constant([[20.0], [50.0], [7.0]]), probs=[0.5, 0.9], output_dtype=gt.float32),
        "binomial_f64": lambda: r.stateless_binomial(
            [777], seed=S, counts=gt.constant(30.0, gt.float64), probs=gt.constant(0.4, gt.float64),
            output_dtype=gt.int64),
        "uniform_bf16": lambda: r.stateless_uniform([1001], seed=S, dtype=gt.bfloat16),
        "uniform_bf16_range": lambda: r.stateless_uniform([1001], seed=S, minval=-2.0, maxval=3.0, dtype=gt.bfloat16),
        "normal_bf16": lambda: r.stateless_normal([1001], seed=S, dtype=gt.bfloat16, mean=1.0, stddev=2.0),
        "trunc_bf16": lambda: r.stateless_truncated_normal([1001], seed=S, dtype=gt.bfloat16),
    }


def _values(t):
    return np.asarray(t.numpy(), dtype=np.float64).reshape(-1)


@pytest.mark.parametrize("name", sorted(TF))
def test_tfs_numbers(name):
    t = _cases()[name]()
    want_hash, first = TF[name]
    np.testing.assert_array_equal(_values(t)[: len(first)], first)
    assert h(t) == want_hash


@pytest.mark.parametrize("name", sorted(TF))
def test_traced_gives_the_eager_numbers(name):
    f = _cases()[name]
    eager = f()
    traced = gt.function(f)
    np.testing.assert_array_equal(traced().numpy(), eager.numpy())
    np.testing.assert_array_equal(traced().numpy(), eager.numpy())


def test_dtypes_and_shapes():
    r = gt.random
    assert r.stateless_gamma([2, 3], seed=S, alpha=[1.0, 2.0, 3.0]).dtype == gt.float32
    assert r.stateless_gamma([2], seed=S, alpha=1.0, dtype=gt.bfloat16).dtype == gt.bfloat16
    assert r.stateless_poisson([2], seed=S, lam=3).dtype == gt.int32
    assert r.stateless_binomial([2], seed=S, counts=3, probs=0.5).dtype == gt.int32
    assert r.gamma([4], alpha=[1.0, 2.0], beta=[[1.0], [2.0]], seed=3).shape == [4, 2, 2]
    p = r.poisson([5], lam=[1.0, 20.0], seed=3)
    assert p.shape == [5, 2] and p.dtype == gt.float32
    assert r.poisson([2], lam=1.0, dtype=gt.int64).dtype == gt.int64
    # Edge parameters as TF: zero counts or probabilities, certain success, rate <= 0.
    b = r.stateless_binomial([3, 3], seed=S, counts=[0.0, 5.0, 5.0], probs=[0.5, 0.0, 1.0]).numpy()
    assert b.tolist() == [[0, 0, 5]] * 3
    assert r.stateless_poisson([3], seed=S, lam=0.0).numpy().tolist() == [0, 0, 0]
    # Underflowing gamma samples are the smallest normal number, never 0 (as TF).
    g = r.stateless_gamma([2000], seed=S, alpha=0.01).numpy()
    assert g.min() == np.finfo(np.float32).tiny


def test_moments():
    r = gt.random
    g = r.stateless_gamma([20000, 2], seed=[1, 1], alpha=[0.7, 6.0], beta=[2.0, 0.5], dtype=gt.float64).numpy()
    np.testing.assert_allclose(g.mean(0), [0.35, 12.0], rtol=0.03)
    np.testing.assert_allclose(g.var(0), [0.175, 24.0], rtol=0.06)
    p = r.stateless_poisson([20000, 2], seed=[1, 1], lam=[2.5, 60.0], dtype=gt.float64).numpy()
    np.testing.assert_allclose(p.mean(0), [2.5, 60.0], rtol=0.03)
    np.testing.assert_allclose(p.var(0), [2.5, 60.0], rtol=0.06)
    b = r.stateless_binomial([20000, 2], seed=[1, 1], counts=[8.0, 500.0], probs=[0.4, 0.7]).numpy()
    np.testing.assert_allclose(b.mean(0), [3.2, 350.0], rtol=0.03)
    np.testing.assert_allclose(b.var(0), [1.92, 105.0], rtol=0.06)
    # Another seed, other numbers; the same seed, the same numbers.
    a1 = r.stateless_poisson([50], seed=[1, 2], lam=4.0).numpy()
    assert not np.array_equal(a1, r.stateless_poisson([50], seed=[1, 3], lam=4.0).numpy())
    np.testing.assert_array_equal(a1, r.stateless_poisson([50], seed=[1, 2], lam=4.0).numpy())


def test_gamma_gradient_is_tfs():
    # TF 2.21: d/dalpha of sum(x**2) for stateless_gamma([4, 3], seed=[5, 6], alpha, float64).
    alpha = gt.Variable([0.5, 2.0, 10.0], dtype=gt.float64)
    with gt.GradientTape() as tape:
        x = gt.random.stateless_gamma([4, 3], seed=S, alpha=alpha, dtype=gt.float64)
        y = gt.reduce_sum(x * x)
    np.testing.assert_allclose(x.numpy()[0], [0.02314621369244793, 7.4187830324496, 5.697202672686868], rtol=1e-12)
    np.testing.assert_allclose(tape.gradient(y, alpha).numpy(), [0.270490721028062, 49.16932847667737,
                                                                 66.90517894606876], rtol=1e-7)
    # TF's RandomGammaGrad values (gen_random_ops.random_gamma_grad).
    a = gt.constant([1.0, 0.5, 2.0, 10.0, 3.0], gt.float64)
    s = gt.constant([0.5, 0.1, 3.0, 9.0, 20.0], gt.float64)
    np.testing.assert_allclose(gt._gradtape._random_gamma_grad(a, s).numpy(),
                               [0.806979116825318, 0.5097655670826974, 1.3217985181779608,
                                0.9641827242847961, 2.348346064720833], rtol=1e-9)
    f = gt._gradtape._random_gamma_grad(gt.constant([1.0, 0.5, 2.0]), gt.constant([0.5, 1e-30, 0.0])).numpy()
    np.testing.assert_allclose(f, [0.8069790601730347, 1.3822808470980374e-28, 0.0], rtol=1e-5)


def test_gamma_gradient_against_differences_and_beta():
    # The reparameterization gradient: d sample / d alpha at a fixed quantile, which a
    # central difference of the same seed approximates (the draws move smoothly with
    # alpha wherever the rejection loop takes the same path).
    a0 = 3.0
    alpha = gt.Variable(a0, dtype=gt.float64)
    beta = gt.Variable(2.0, dtype=gt.float64)
    with gt.GradientTape() as tape:
        x = gt.random.stateless_gamma([], seed=[3, 3], alpha=alpha, beta=beta, dtype=gt.float64)
    ga, gb = tape.gradient(x, [alpha, beta])
    np.testing.assert_allclose(gb.numpy(), -x.numpy() / 2.0, rtol=1e-12)
    # Through the quantile: x(a) = P^-1(q; a) / beta with q = P(x0 beta; a0).
    from math import exp, lgamma, log

    def P(a, z, n=400):
        s, t = 1.0, 1.0
        for k in range(1, n):
            t *= z / (a + k)
            s += t
        return exp(a * log(z) - z - lgamma(a + 1)) * s

    z0 = float(x.numpy()) * 2.0
    q = P(a0, z0)

    def quantile(a):
        lo, hi = 1e-9, 100.0
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if P(a, mid) < q else (lo, mid)
        return lo

    e = 1e-5
    want = (quantile(a0 + e) - quantile(a0 - e)) / (2 * e) / 2.0
    np.testing.assert_allclose(ga.numpy(), want, rtol=1e-5)
    # Poisson and binomial draws, like TF's, have no gradient.
    lam = gt.Variable(3.0)
    with gt.GradientTape() as tape:
        y = gt.reduce_sum(gt.random.stateless_poisson([3], seed=S, lam=lam, dtype=gt.float32))
    assert tape.gradient(y, lam) is None


def test_generator_binomial_is_tfs():
    g = gt.random.Generator.from_seed(7)
    b = g.binomial([5, 2], counts=[10.0, 100.0], probs=[0.5, 0.2])
    # TF 2.21: tf.random.Generator.from_seed(7).binomial(...) and its state after.
    assert b.numpy().tolist() == [[4, 23], [4, 20], [7, 17], [4, 25], [3, 21]]
    assert g.state.numpy().tolist() == [204807, 0, 0]
    np.testing.assert_allclose(g.normal([3]).numpy(), [-1.391096591949463, 1.3576104640960693,
                                                       -0.4562273919582367], rtol=1e-6)
    assert g.state.numpy().tolist() == [205575, 0, 0]


def test_bad_arguments():
    r = gt.random
    with pytest.raises(gt.errors.InvalidArgumentError, match="end with"):
        r.stateless_gamma([4, 2], seed=S, alpha=[1.0, 2.0, 3.0])
    with pytest.raises(gt.errors.InvalidArgumentError, match="end with"):
        r.stateless_poisson([4], seed=S, lam=[1.0, 2.0])
    with pytest.raises(gt.errors.InvalidArgumentError, match="end with"):
        r.stateless_binomial([3], seed=S, counts=[1.0, 2.0], probs=0.5)
    with pytest.raises(gt.errors.InvalidArgumentError, match="compatible"):
        r.stateless_binomial([3, 2], seed=S, counts=[1.0, 2.0], probs=[0.5, 0.5, 0.5])
    with pytest.raises(gt.errors.InvalidArgumentError, match="lam"):
        r.stateless_poisson([2], seed=S, lam=float("nan"))
    with pytest.raises(gt.errors.InvalidArgumentError, match="lam"):
        r.stateless_poisson([2], seed=S, lam=float("inf"))
    with pytest.raises(gt.errors.InvalidArgumentError, match="lam"):
        r.stateless_poisson([2], seed=S, lam=1e12, dtype=gt.int32)
    with pytest.raises(gt.errors.InvalidArgumentError, match="finite"):
        r.stateless_binomial([2], seed=S, counts=float("inf"), probs=0.5)
    with pytest.raises(gt.errors.InvalidArgumentError, match="NaN"):
        r.stateless_binomial([2], seed=S, counts=3.0, probs=float("nan"))
    with pytest.raises(TypeError):
        r.stateless_poisson([2], seed=S, lam=1.0, dtype=gt.bool)
    with pytest.raises(ValueError, match="Invalid dtype"):
        r.stateless_gamma([2], seed=S, alpha=1.0, dtype=gt.int32)
    with pytest.raises(gt.errors.InvalidArgumentError, match="shape \\[2\\]"):
        r.stateless_gamma([2], seed=[1, 2, 3], alpha=1.0)
    with pytest.raises(gt.errors.ResourceExhaustedError):
        r.stateless_poisson([2**31, 2**31], seed=S, lam=1.0)
    # A failed draw leaves a generator's state as it was.
    g = gt.random.Generator.from_seed(1)
    with pytest.raises(gt.errors.InvalidArgumentError):
        g.binomial([3], counts=[1.0, 2.0], probs=0.5)
    assert g.state.numpy().tolist() == [1, 0, 0]


def test_saved_model_round_trip_in_a_fresh_process(tmp_path):
    class M(gt.Module):
        @gt.function(input_signature=[gt.TensorSpec([2], gt.int32), gt.TensorSpec([3], gt.float32)])
        def draw(self, seed, alpha):
            g = gt.random.stateless_gamma([4, 3], seed=seed, alpha=alpha)
            p = gt.random.stateless_poisson([4, 3], seed=seed, lam=alpha * 5.0, dtype=gt.float32)
            b = gt.random.stateless_binomial([4, 3], seed=seed, counts=alpha * 10.0, probs=0.3, output_dtype=gt.float32)
            return g + p + b

    m = M()
    seed, alpha = gt.constant([3, 4]), gt.constant([0.5, 2.0, 7.0])
    want = m.draw(seed, alpha).numpy()
    with gt.GradientTape() as tape:
        tape.watch(alpha)
        y = gt.reduce_sum(gt.random.stateless_gamma([4, 3], seed=seed, alpha=alpha))
    want_g = tape.gradient(y, alpha).numpy()
    gt.saved_model.save(m, str(tmp_path / "m"))
    code = (
        "import sys, numpy as np, gradtape as gt\n"
        f"m = gt.saved_model.load({str(tmp_path / 'm')!r})\n"
        "s, a = gt.constant([3, 4]), gt.constant([0.5, 2.0, 7.0])\n"
        "np.save(sys.argv[1], m.draw(s, a).numpy())\n"
        "with gt.GradientTape() as t:\n"
        "    t.watch(a)\n"
        "    y = gt.reduce_sum(m.draw(s, a))\n"
        "np.save(sys.argv[2], t.gradient(y, a).numpy())\n"
    )
    out = [str(tmp_path / f"{k}.npy") for k in ("v", "t")]
    subprocess.run([sys.executable, "-c", code, *out], check=True, env={**os.environ}, timeout=300)
    np.testing.assert_array_equal(np.load(out[0]), want)
    np.testing.assert_allclose(np.load(out[1]), want_g, rtol=1e-6)  # only the gamma term depends on alpha
