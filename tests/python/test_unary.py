"""Unary math (src/ops/unary.rs): rounding and clipping, values and gradients."""


import numpy as np

import gradtape as gt
from helpers import grad_of


def test_round_floor_ceil():
    x = gt.constant([0.5, 1.5, 2.5, -0.5, -2.5, 1.7])
    np.testing.assert_array_equal(gt.round(x).numpy(), np.round(x.numpy()))
    np.testing.assert_array_equal(gt.math.floor(x).numpy(), np.floor(x.numpy()))
    np.testing.assert_array_equal(gt.math.ceil(x).numpy(), np.ceil(x.numpy()))
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        ys = [gt.round(x), gt.floor(x), gt.math.ceil(x)]
    assert all(tape.gradient(y, x) is None for y in ys)


def test_clip_by_value_and_norm():
    x = gt.constant([-2.0, 0.0, 0.5, 1.0, 3.0])
    np.testing.assert_array_equal(gt.clip_by_value(x, 0.0, 1.0).numpy(), [0.0, 0.0, 0.5, 1.0, 1.0])
    lo, hi = gt.constant(0.0), gt.constant(1.0)
    with gt.GradientTape(persistent=True) as tape:
        tape.watch([x, lo, hi])
        y = gt.clip_by_value(x, lo, hi)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.0, 1.0, 1.0, 1.0, 0.0])
    assert float(tape.gradient(y, lo)) == 1.0
    assert float(tape.gradient(y, hi)) == 1.0
    np.testing.assert_allclose(gt.clip_by_norm([3.0, 4.0], 2.0).numpy(), [1.2, 1.6], rtol=1e-6)
    np.testing.assert_allclose(gt.clip_by_norm([3.0, 4.0], 10.0).numpy(), [3.0, 4.0])
    g = grad_of(lambda t: gt.clip_by_norm(t, 2.0), [3.0, 4.0])
    np.testing.assert_allclose(g, [0.064, -0.048], atol=1e-12)
