"""Gradients exactly at kinks, ties, poles and bounds, against TensorFlow's numbers.

The finite-difference checks in ``test_gradcheck.py`` sample away from these points (a
central difference is meaningless there), so each convention is pinned here instead: the
value TF 2.21 returns for the same computation in float64 (``tf.GradientTape``, upstream
gradient of ones unless a case gives one). Where TF returns None (no gradient), so must
gradtape. Second-order rows differentiate ``sum(g * g)`` for the first-order gradients
``g`` through an outer tape.
"""

import math

import numpy as np
import pytest

import gradtape as gt

nan, inf = math.nan, math.inf
A02 = 0.20000000298023224  # leaky_relu's default alpha: a float32 attribute in TF
A001 = 0.009999999776482582
SELU_SCALE = 1.0507009873554805

# (id, fn over gt tensors, inputs, upstream gradient or None, TF's gradients per input)
FIRST_ORDER = [
    # activations at their kinks
    ("relu_at_0", lambda x: gt.nn.relu(x), [[-1.0, 0.0, 1.0]], None, [[0.0, 0.0, 1.0]]),
    ("relu6_at_0_and_6", lambda x: gt.nn.relu6(x), [[-1.0, 0.0, 3.0, 6.0, 7.0]], None, [[0.0, 0.0, 1.0, 0.0, 0.0]]),
    ("leaky_relu_at_0", lambda x: gt.nn.leaky_relu(x), [[-1.0, 0.0, 1.0]], None, [[A02, A02, 1.0]]),
    ("leaky_relu_alpha_at_0", lambda x: gt.nn.leaky_relu(x, alpha=0.01), [[-1.0, 0.0, 1.0]], None, [[A001, A001, 1.0]]),
    ("elu_at_0", lambda x: gt.nn.elu(x), [[-1.0, 0.0, 1.0]], None, [[0.36787944117144233, 1.0, 1.0]]),
    ("selu_at_0", lambda x: gt.nn.selu(x), [[-1.0, 0.0, 1.0]], None, [[0.6467686030348141, SELU_SCALE, SELU_SCALE]]),
    ("softsign_at_0", lambda x: gt.nn.softsign(x), [[0.0]], None, [[1.0]]),
    ("softplus_at_0", lambda x: gt.nn.softplus(x), [[0.0]], None, [[0.5]]),
    ("abs_at_0", lambda x: gt.abs(x), [[-2.0, 0.0, 2.0]], None, [[-1.0, 0.0, 1.0]]),
    ("abs_complex_at_0", lambda a, b: gt.abs(gt.complex(a, b)), [[0.0], [0.0]], None, [[0.0], [0.0]]),
    ("sign_at_0", lambda x: gt.sign(x), [[-2.0, 0.0, 2.0]], None, [[0.0, 0.0, 0.0]]),
    # ties: maximum/minimum give the whole gradient to x; reductions split it evenly
    (
        "maximum_tie",
        lambda x, y: gt.maximum(x, y),
        [[1.0, 2.0, 3.0], [1.0, 5.0, 3.0]],
        None,
        [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]],
    ),
    (
        "minimum_tie",
        lambda x, y: gt.minimum(x, y),
        [[1.0, 2.0, 3.0], [1.0, 5.0, 3.0]],
        None,
        [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]],
    ),
    (
        "maximum_tie_broadcast",
        lambda x, y: gt.maximum(x, y),
        [[[2.0, 1.0], [2.0, 3.0]], [2.0]],
        None,
        [[[1.0, 0.0], [1.0, 1.0]], [1.0]],
    ),
    ("squared_difference_tie", lambda x, y: gt.math.squared_difference(x, y), [[1.0], [1.0]], None, [[0.0], [-0.0]]),
    ("reduce_max_ties", lambda x: gt.reduce_max(x), [[1.0, 3.0, 3.0, 2.0]], None, [[0.0, 0.5, 0.5, 0.0]]),
    # pooling: MaxPoolGrad routes to the first maximum of each window (scan order),
    # MaxPool3DGrad to every tied maximum; SAME average pools count valid elements only
    (
        "max_pool2d_ties",
        lambda x: gt.nn.max_pool2d(gt.reshape(x, [1, 4, 4, 1]), 2, 1, "VALID"),
        [[1.0, 3.0, 3.0, 2.0, 3.0, 0.0, 1.0, 3.0] + [0.0] * 8],
        None,
        [[0.0, 2.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]],
    ),
    (
        "max_pool3d_ties",
        lambda x: gt.nn.max_pool3d(gt.reshape(x, [1, 2, 3, 3, 1]), [1, 2, 2], 1, "VALID"),
        [[1.0] * 18],
        None,
        [[1.0, 2.0, 1.0, 2.0, 4.0, 2.0, 1.0, 2.0, 1.0] * 2],
    ),
    (
        "avg_pool2d_same",
        lambda x: gt.nn.avg_pool2d(gt.reshape(x, [1, 3, 3, 1]), 2, 2, "SAME"),
        [[-1.0] * 9],
        None,
        [[0.25, 0.25, 0.5, 0.25, 0.25, 0.5, 0.5, 0.5, 1.0]],
    ),
    (
        "reduce_max_ties_axis",
        lambda x: gt.reduce_max(x, axis=1),
        [[[1.0, 1.0, 1.0], [2.0, 0.0, 2.0]]],
        None,
        [[[1 / 3, 1 / 3, 1 / 3], [0.5, 0.0, 0.5]]],
    ),
    ("reduce_min_ties", lambda x: gt.reduce_min(x), [[0.5, -1.0, -1.0, -1.0]], None, [[0.0, 1 / 3, 1 / 3, 1 / 3]]),
    (
        "reduce_min_ties_axis0",
        lambda x: gt.reduce_min(x, axis=0),
        [[[1.0, 2.0], [1.0, 3.0]]],
        None,
        [[[0.5, 1.0], [0.5, 0.0]]],
    ),
    # bounds: a value exactly at a clip bound keeps its gradient; the bound gets none
    (
        "clip_by_value_at_bounds",
        lambda x: gt.clip_by_value(x, -1.0, 1.0),
        [[-2.0, -1.0, 0.0, 1.0, 2.0]],
        None,
        [[0.0, 1.0, 1.0, 1.0, 0.0]],
    ),
    (
        "clip_by_value_tensor_bounds",
        lambda x, lo, hi: gt.clip_by_value(x, lo, hi),
        [[-1.0, 0.0, 1.0], [-1.0, -1.0, -1.0], [1.0, 1.0, 1.0]],
        None,
        [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
    ),
    (
        "clip_by_norm_at_norm",
        lambda x: gt.clip_by_norm(x, 5.0),
        [[3.0, 4.0]],
        None,
        [[0.16000000000000014, -0.11999999999999988]],
    ),
    # pow at a zero base: d/dy uses log(x) only where x > 0 (else 0)
    (
        "pow_zero_base",
        lambda x, y: gt.pow(x, y),
        [[0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.5, 1.0, 2.0, 3.0]],
        None,
        [[nan, inf, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0]],
    ),
    ("pow_zero_base_negative_exp", lambda x, y: gt.pow(x, y), [[0.0], [-1.0]], None, [[-inf], [nan]]),
    (
        "pow_negative_base_int_exp",
        lambda x, y: gt.pow(x, y),
        [[-2.0, -2.0], [2.0, 3.0]],
        None,
        [[-4.0, 12.0], [0.0, -0.0]],
    ),
    # poles: a zero upstream gradient stays 0 (TF's SqrtGrad, RsqrtGrad, InvGrad)
    ("sqrt_at_0_zero_upstream", lambda x: gt.sqrt(x), [[0.0, 4.0]], [0.0, 0.0], [[0.0, 0.0]]),
    ("sqrt_at_0", lambda x: gt.sqrt(x), [[0.0]], None, [[inf]]),
    ("rsqrt_at_0_zero_upstream", lambda x: gt.math.rsqrt(x), [[0.0]], [0.0], [[0.0]]),
    ("reciprocal_at_0_zero_upstream", lambda x: gt.math.reciprocal(x), [[0.0]], [0.0], [[0.0]]),
    ("log_at_0", lambda x: gt.math.log(x), [[0.0]], None, [[inf]]),
    ("divide_by_0", lambda x, y: gt.divide(x, y), [[1.0, 0.0], [0.0, 0.0]], None, [[inf, inf], [-inf, nan]]),
    ("atan2_at_origin", lambda y, x: gt.math.atan2(y, x), [[0.0], [0.0]], None, [[nan], [nan]]),
    # zeros in products; norms at the origin; a constant's deviation
    ("reduce_prod_one_zero", lambda x: gt.reduce_prod(x), [[2.0, 0.0, 3.0]], None, [[0.0, 6.0, 0.0]]),
    ("reduce_prod_two_zeros", lambda x: gt.reduce_prod(x), [[2.0, 0.0, 0.0]], None, [[0.0, 0.0, 0.0]]),
    ("norm_at_0", lambda x: gt.norm(x), [[0.0, 0.0]], None, [[nan, nan]]),
    ("l2_normalize_at_0", lambda x: gt.math.l2_normalize(x), [[0.0, 0.0]], None, [[1e6, 1e6]]),
    ("reduce_std_constant", lambda x: gt.math.reduce_std(x), [[1.0, 1.0, 1.0]], None, [[nan, nan, nan]]),
    (
        "floormod_at_multiple",
        lambda x, y: gt.math.floormod(x, y),
        [[4.0, -4.0], [2.0, 2.0]],
        None,
        [[1.0, 1.0], [-2.0, 2.0]],
    ),
    (
        "sigmoid_ce_at_0",
        lambda z, x: gt.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
        [[1.0, 0.5], [0.0, 0.0]],
        None,
        [[-0.0, -0.0], [-0.5, 0.0]],
    ),
    # piecewise-constant: no gradient at all (None), also at ties and integers
    ("round_half", lambda x: gt.round(x), [[0.5, 1.5, -0.5]], None, [None]),
    ("floor_at_integer", lambda x: gt.floor(x), [[1.0, -2.0]], None, [None]),
    ("ceil_at_integer", lambda x: gt.math.ceil(x), [[1.0, -2.0]], None, [None]),
]

# (id, fn, inputs, upstream, TF's gradients of sum(g * g) w.r.t. each input)
SECOND_ORDER = [
    ("elu_at_0", lambda x: gt.nn.elu(x), [[-1.0, 0.0, 1.0]], None, [[0.2706705664732254, 0.0, 0.0]]),
    ("selu_at_0", lambda x: gt.nn.selu(x), [[-1.0, 0.0, 1.0]], None, [[0.8366192517432098, 0.0, 0.0]]),
    ("abs_at_0", lambda x: gt.abs(x), [[-2.0, 0.0, 2.0]], None, [[0.0, 0.0, 0.0]]),
    ("softplus_at_0", lambda x: gt.nn.softplus(x), [[0.0]], None, [[0.25]]),
    ("sqrt_at_0_zero_upstream", lambda x: gt.sqrt(x), [[0.0, 4.0]], [0.0, 0.0], [[nan, 0.0]]),
    ("relu_at_0", lambda x: gt.nn.relu(x), [[-1.0, 0.0, 1.0]], None, [[0.0, 0.0, 0.0]]),
    ("relu6_at_0_and_6", lambda x: gt.nn.relu6(x), [[-1.0, 0.0, 3.0, 6.0, 7.0]], None, [[0.0, 0.0, 0.0, 0.0, 0.0]]),
    ("leaky_relu_at_0", lambda x: gt.nn.leaky_relu(x), [[-1.0, 0.0, 1.0]], None, [[0.0, 0.0, 0.0]]),
    # The gradient does not depend on x (a constant times the upstream): None, as in TF.
    ("sign_at_0", lambda x: gt.sign(x), [[-2.0, 0.0, 2.0]], None, [None]),
    ("maximum_tie", lambda x, y: gt.maximum(x, y), [[1.0, 2.0, 3.0], [1.0, 5.0, 3.0]], None, [None, None]),
    ("minimum_tie", lambda x, y: gt.minimum(x, y), [[1.0, 2.0, 3.0], [1.0, 5.0, 3.0]], None, [None, None]),
    ("reduce_max_ties", lambda x: gt.reduce_max(x), [[1.0, 3.0, 3.0, 2.0]], None, [None]),
    ("reduce_min_ties", lambda x: gt.reduce_min(x), [[0.5, -1.0, -1.0, -1.0]], None, [None]),
    ("clip_by_value_at_bounds", lambda x: gt.clip_by_value(x, -1.0, 1.0), [[-2.0, -1.0, 0.0, 1.0, 2.0]], None, [None]),
    # MaxPoolGrad gives its input a zero gradient (TF's), AvgPoolGrad does not read it.
    (
        "max_pool2d_ties",
        lambda x: gt.nn.max_pool2d(gt.reshape(x, [1, 4, 4, 1]), 2, 1, "VALID"),
        [[1.0, 3.0, 3.0, 2.0, 3.0, 0.0, 1.0, 3.0] + [0.0] * 8],
        None,
        [[0.0] * 16],
    ),
    (
        "avg_pool2d_same",
        lambda x: gt.nn.avg_pool2d(gt.reshape(x, [1, 3, 3, 1]), 2, 2, "SAME"),
        [[-1.0] * 9],
        None,
        [None],
    ),
]


def _tensors(inputs):
    return [gt.constant(np.array(x, dtype=np.float64)) for x in inputs]


def _check(got, want, what):
    if want is None:
        assert got is None, f"{what}: TF gives None, gradtape {got}"
        return
    assert got is not None, f"{what}: TF gives {want}, gradtape None"
    assert got.dtype == gt.float64
    # Exact up to the last bit or two; NaN where TF has NaN, inf where TF has inf.
    np.testing.assert_allclose(got.numpy(), np.array(want, dtype=np.float64), rtol=1e-15, atol=0, equal_nan=True)
    # The sign of a zero is part of TF's result too (-0.0 from a negated product).
    w = np.array(want, dtype=np.float64)
    real = ~np.isnan(w)
    np.testing.assert_array_equal(np.signbit(got.numpy())[real], np.signbit(w)[real])


@pytest.mark.parametrize("cid,fn,inputs,upstream,want", FIRST_ORDER, ids=[c[0] for c in FIRST_ORDER])
def test_first_order_matches_tf_at_kinks(cid, fn, inputs, upstream, want):
    ts = _tensors(inputs)
    with gt.GradientTape() as tape:
        tape.watch(ts)
        y = fn(*ts)
    og = None if upstream is None else gt.constant(np.array(upstream, dtype=np.float64))
    gs = tape.gradient(y, ts, output_gradients=og)
    for i, (g, w) in enumerate(zip(gs, want)):
        _check(g, w, f"{cid}: input {i}")


@pytest.mark.parametrize("cid,fn,inputs,upstream,want", SECOND_ORDER, ids=[c[0] for c in SECOND_ORDER])
def test_second_order_matches_tf_at_kinks(cid, fn, inputs, upstream, want):
    ts = _tensors(inputs)
    with gt.GradientTape() as outer:
        outer.watch(ts)
        with gt.GradientTape() as inner:
            inner.watch(ts)
            y = fn(*ts)
        og = None if upstream is None else gt.constant(np.array(upstream, dtype=np.float64))
        gs = inner.gradient(y, ts, output_gradients=og)
        s = sum(gt.reduce_sum(g * g) for g in gs if g is not None)
    hs = outer.gradient(s, ts)
    for i, (h, w) in enumerate(zip(hs, want)):
        _check(h, w, f"{cid}: input {i}")


def test_reduce_max_shares_the_gradient_between_float32_ties():
    # The same convention on the fused float32 path, and with an upstream gradient.
    x = gt.constant([[4.0, 4.0, 1.0, 4.0], [0.0, -1.0, 0.0, 0.0]])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reduce_max(x, axis=1)
    g = tape.gradient(y, x, output_gradients=gt.constant([3.0, 6.0]))
    np.testing.assert_array_equal(g.numpy(), [[1.0, 1.0, 0.0, 1.0], [2.0, 0.0, 2.0, 2.0]])


def test_relu_family_at_0_in_float32():
    # The fused float32 backward kernels keep TF's conventions at the kink too.
    x = gt.constant([-1.0, 0.0, 6.0, 2.0])
    for fn, want in [
        (gt.nn.relu, [0.0, 0.0, 1.0, 1.0]),
        (gt.nn.relu6, [0.0, 0.0, 0.0, 1.0]),
        (gt.nn.elu, [float(np.float32(math.exp(-1.0))), 1.0, 1.0, 1.0]),
        (gt.nn.leaky_relu, [float(np.float32(0.2)), float(np.float32(0.2)), 1.0, 1.0]),
    ]:
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        g = tape.gradient(y, x)
        assert g.dtype == gt.float32
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-7)


def test_complex_sign_is_z_over_abs_with_tf_gradient():
    # TF composes complex sign as div_no_nan(z, |z|): the gradient is that of z/|z|
    # (TF 2.21's numbers below), and 0 at 0.
    z = gt.constant(np.array([0.5 + 0.3j, 0j]))
    with gt.GradientTape() as tape:
        tape.watch(z)
        y = gt.sign(z)
    np.testing.assert_allclose(y.numpy(), [(0.5 + 0.3j) / abs(0.5 + 0.3j), 0j], rtol=1e-15)
    g = tape.gradient(y, z, output_gradients=gt.constant(np.array([1 + 1j, 2 + 0j])))
    np.testing.assert_allclose(g.numpy(), [-0.30264456 + 0.5044076j, 0j], rtol=1e-7)


@pytest.mark.parametrize(
    "fn,series",
    [
        (gt.math.expm1, lambda z: z + z**2 / 2 + z**3 / 6 + z**4 / 24),
        (gt.math.log1p, lambda z: z - z**2 / 2 + z**3 / 3 - z**4 / 4),
        (gt.asin, lambda z: z + z**3 / 6 + 3 * z**5 / 40),
        (gt.atan, lambda z: z - z**3 / 3 + z**5 / 5),
        (gt.sin, lambda z: z - z**3 / 6 + z**5 / 120),
        (gt.tanh, lambda z: z - z**3 / 3 + 2 * z**5 / 15),
    ],
    ids=["expm1", "log1p", "asin", "atan", "sin", "tanh"],
)
def test_complex_kernels_keep_small_arguments_digits(fn, series):
    # Near 0 a naive complex formula (exp(z) - 1, log(1 + z), -i log(iz + sqrt(1 - z²)))
    # cancels to a few digits; the series is exact to double precision there.
    z = np.array([1e-9 + 2e-9j, -3e-7 + 1e-8j, 2e-5j])
    got = fn(gt.constant(z)).numpy()
    np.testing.assert_allclose(got.real, series(z).real, rtol=1e-14)
    np.testing.assert_allclose(got.imag, series(z).imag, rtol=1e-14)
