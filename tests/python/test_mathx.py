"""Issue 14's math ops at TF 2.21's values: edge cases (poles, zeros, ties, empty
segments), the gradient conventions TF fixes there, and the non-differentiable ops.
The smooth behaviour (values against numpy, gradients against finite differences,
forward mode, tracing, saving) comes from their rows in op_specs.py. Expected numbers
were printed by TF 2.21."""

import math

import numpy as np
import pytest

import gradtape as gt

F64 = gt.float64


def _grads(f, *xs, seed=None):
    xs = [gt.constant(x, dtype=F64) for x in xs]
    with gt.GradientTape(persistent=True) as t:
        for x in xs:
            t.watch(x)
        y = f(*xs)
    gs = t.gradient(y, xs, output_gradients=None if seed is None else gt.constant(seed, dtype=F64))
    return y, gs


def test_special_functions_at_poles_and_negative_arguments():
    x = gt.constant([-2.5, -1.0, 0.0, 0.5, 1.0, 3.0], dtype=F64)
    np.testing.assert_allclose(
        gt.math.lgamma(x).numpy(),
        [-0.05624371649767407, np.inf, np.inf, 0.5723649429247001, 0.0, 0.6931471805599453],
        rtol=1e-13,
    )
    d = gt.math.digamma(x).numpy()
    assert np.isnan(d[1]) and np.isnan(d[2])
    np.testing.assert_allclose(
        d[[0, 3, 4, 5]], [1.1031566406452433, -1.9635100260214227, -0.5772156649015329, 0.9227843350984675], rtol=1e-13
    )
    np.testing.assert_allclose(
        gt.math.erfc(x).numpy(),
        [1.999593047982555, 1.8427007929497148, 1.0, 0.47950012218695337, 0.15729920705028522, 2.209049699858544e-05],
        rtol=1e-13,
    )
    one, two = gt.constant(1.0, dtype=F64), gt.constant(2.0, dtype=F64)
    p1 = gt.math.polygamma(one, x).numpy()
    np.testing.assert_allclose(
        p1, [9.539246644989124, np.inf, np.inf, 4.93480220054468, 1.6449340668482266, 0.39493406684822646], rtol=1e-12
    )
    p2 = gt.math.polygamma(two, x).numpy()
    np.testing.assert_allclose(
        p2[[0, 3, 4, 5]],
        [-0.1082040516417282, -16.828796644234316, -2.404113806319188, -0.15411380631918856],
        rtol=1e-12,
    )
    assert np.isnan(gt.math.polygamma(gt.constant([0.5], dtype=F64), gt.constant([1.0], dtype=F64)).numpy()[0])
    # Special functions take real floats only, as TF's kernels.
    for f in (gt.math.lgamma, gt.math.digamma, gt.math.erfc):
        with pytest.raises((TypeError, gt.errors.InvalidArgumentError)):
            f(gt.constant([1 + 1j]))
        with pytest.raises((TypeError, gt.errors.InvalidArgumentError)):
            f(gt.constant([1, 2]))


def test_digamma_gradient_is_trigamma_and_lgamma_second_derivative():
    x = gt.constant([0.5, 2.0], dtype=F64)
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = gt.math.lgamma(x)
        g = inner.gradient(y, x)
    np.testing.assert_allclose(g.numpy(), [-1.9635100260214235, 0.42278433509846713], rtol=1e-13)
    np.testing.assert_allclose(outer.gradient(g, x).numpy(), [math.pi**2 / 2, math.pi**2 / 6 - 1], rtol=1e-13)


def test_inverse_hyperbolics_at_their_domain_edges_and_complex():
    np.testing.assert_equal(gt.math.acosh(gt.constant([0.5, 1.0], dtype=F64)).numpy(), [np.nan, 0.0])
    np.testing.assert_equal(
        gt.atanh(gt.constant([-1.0, 0.0, 1.0, 2.0], dtype=F64)).numpy(), [-np.inf, 0.0, np.inf, np.nan]
    )
    assert gt.asinh(gt.constant([1e-10], dtype=F64)).numpy()[0] == 1e-10
    c = gt.constant([0.3 + 0.2j, -0.5 + 1j])
    np.testing.assert_allclose(
        gt.acosh(c).numpy(),
        [0.20772637624812307 + 1.2727619269517418j, 0.9261330313501825 + 1.9202353896521098j],
        rtol=1e-13,
    )
    np.testing.assert_allclose(
        gt.asinh(c).numpy(),
        [0.30107353944664245 + 0.19245144716045318j, -0.7328576759736453 + 0.8959074812088902j],
        rtol=1e-13,
    )
    np.testing.assert_allclose(
        gt.atanh(c).numpy(),
        [0.29574992023641433 + 0.21547449370018829j, -0.2388778612568591 + 0.847575660670829j],
        rtol=1e-13,
    )
    assert gt.acosh is gt.math.acosh and gt.asinh is gt.math.asinh and gt.atanh is gt.math.atanh


XS, YS = [0.0, 0.0, 1.0, 2.0], [0.0, -1.0, 0.0, 3.0]


@pytest.mark.parametrize(
    "name,value,gx,gy",
    [
        (
            "xlogy",
            [0.0, 0.0, -np.inf, 2.197224577336219],
            [0.0, 0.0, -np.inf, 1.0986122886681096],
            [0.0, 0.0, np.inf, 0.6666666666666666],
        ),
        (
            "xdivy",
            [0.0, 0.0, np.inf, 0.6666666666666666],
            [0.0, 0.0, np.inf, 0.3333333333333333],
            [0.0, 0.0, -np.inf, -0.2222222222222222],
        ),
        ("xlog1py", [0.0, 0.0, 0.0, 2.772588722239781], [0.0, 0.0, 0.0, 1.3862943611198906], [0.0, 0.0, 1.0, 0.5]),
        (
            "divide_no_nan",
            [0.0, 0.0, 0.0, 0.6666666666666666],
            [0.0, -1.0, 0.0, 0.3333333333333333],
            [0.0, 0.0, 0.0, -0.2222222222222222],
        ),
    ],
)
def test_zero_safe_binary_ops_values_and_gradients_at_zero(name, value, gx, gy):
    f = getattr(gt.math, name)
    y, (dx, dy) = _grads(f, XS, YS)
    np.testing.assert_allclose(y.numpy(), value, rtol=1e-14)
    np.testing.assert_allclose(dx.numpy(), gx, rtol=1e-14)
    np.testing.assert_allclose(dy.numpy(), gy, rtol=1e-14)


@pytest.mark.parametrize(
    "name,dgy_dx,dgy_dy",
    [
        ("xlogy", [0.0, 0.0, np.inf, 0.3333333333333333], [0.0, 0.0, -np.inf, -0.2222222222222222]),
        ("xlog1py", [0.0, 0.0, 1.0, 0.25], [0.0, 0.0, -1.0, -0.125]),
        ("divide_no_nan", [0.0, -1.0, 0.0, -0.1111111111111111], [0.0, 0.0, 0.0, 0.14814814814814814]),
    ],
)
def test_zero_safe_binary_ops_second_order_at_zero(name, dgy_dx, dgy_dy):
    f = getattr(gt.math, name)
    x, y = gt.constant(XS, dtype=F64), gt.constant(YS, dtype=F64)
    with gt.GradientTape(persistent=True) as outer:
        outer.watch([x, y])
        with gt.GradientTape() as inner:
            inner.watch([x, y])
            z = f(x, y)
        _, gy = inner.gradient(z, [x, y])
    ddx, ddy = outer.gradient(gy, [x, y])
    np.testing.assert_allclose(ddx.numpy(), dgy_dx, rtol=1e-14)
    np.testing.assert_allclose(ddy.numpy(), dgy_dy, rtol=1e-14)


def test_reciprocal_no_nan_and_log_sigmoid():
    y, (g,) = _grads(gt.math.reciprocal_no_nan, [0.0, 2.0, -4.0])
    np.testing.assert_allclose(y.numpy(), [0.0, 0.5, -0.25])
    np.testing.assert_allclose(g.numpy(), [0.0, -0.25, -0.0625])
    ls = gt.math.log_sigmoid(gt.constant([-100.0, 0.0, 100.0], dtype=F64)).numpy()
    np.testing.assert_allclose(ls, [-100.0, -0.6931471805599453, -3.720075976020836e-44], rtol=1e-13)


def test_predicates_and_rint():
    x = gt.constant([1.0, np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal(gt.math.is_finite(x).numpy(), [True, False, False, False])
    np.testing.assert_array_equal(gt.math.is_nan(x).numpy(), [False, False, False, True])
    np.testing.assert_array_equal(gt.math.is_inf(x).numpy(), [False, True, True, False])
    np.testing.assert_array_equal(gt.math.is_nan(gt.constant([np.nan], dtype=gt.float16)).numpy(), [True])
    r = gt.math.rint(gt.constant([-1.5, -0.5, 0.5, 2.5, 3.7])).numpy()
    np.testing.assert_array_equal(r, [-2.0, -0.0, 0.0, 2.0, 4.0])
    assert np.signbit(r[1])
    # As TF: integer and complex inputs raise; rint has no float16 kernel.
    for f in (gt.math.is_finite, gt.math.is_nan, gt.math.is_inf, gt.math.rint):
        with pytest.raises((TypeError, gt.errors.InvalidArgumentError)):
            f(gt.constant([1, 2]))
    with pytest.raises((TypeError, gt.errors.InvalidArgumentError)):
        gt.math.rint(gt.constant([1.5], dtype=gt.float16))


@pytest.mark.parametrize(
    "name,fn",
    [
        ("is_finite", gt.math.is_finite),
        ("is_nan", gt.math.is_nan),
        ("is_inf", gt.math.is_inf),
        ("rint", gt.math.rint),
        ("count_nonzero", gt.math.count_nonzero),
        ("zero_fraction", gt.math.zero_fraction),
        ("is_non_decreasing", gt.math.is_non_decreasing),
        ("is_strictly_increasing", gt.math.is_strictly_increasing),
    ],
)
def test_issue14_not_differentiable_ops_give_none(name, fn):
    x = gt.constant([[0.3, 1.7, -1.2], [2.6, -0.4, 0.9]], dtype=F64)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    assert tape.gradient(y, x) is None


def test_counting_reductions():
    x = gt.constant([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0]])
    c = gt.math.count_nonzero(x)
    assert c.dtype == gt.int64 and int(c) == 3
    np.testing.assert_array_equal(gt.math.count_nonzero(x, axis=1, keepdims=True).numpy(), [[2], [1]])
    c32 = gt.math.count_nonzero(gt.constant([1, 0, 2]), dtype=gt.int32)
    assert c32.dtype == gt.int32 and int(c32) == 2
    assert int(gt.math.count_nonzero(gt.constant([[True, False], [True, True]]))) == 3
    z = gt.math.zero_fraction(gt.constant([[0, 1], [0, 0]]))
    assert z.dtype == gt.float32 and float(z) == 0.75
    assert np.isnan(float(gt.nn.zero_fraction(gt.constant([], dtype=gt.float32))))


def test_reduce_euclidean_norm_values_and_zero_norm_gradient():
    x = gt.constant([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0]])
    np.testing.assert_allclose(float(gt.math.reduce_euclidean_norm(x)), 3.7416575, rtol=1e-6)
    n = gt.math.reduce_euclidean_norm(gt.constant([3, 4]))
    assert n.dtype == gt.int32 and int(n) == 5
    # TF: dy * x / norm, so NaN where the norm is 0.
    z = gt.constant([[0.0, 0.0], [3.0, 4.0]], dtype=F64)
    _, (g,) = _grads(lambda t: gt.math.reduce_euclidean_norm(t, axis=1), z.numpy())
    assert np.isnan(g.numpy()[0]).all()
    np.testing.assert_allclose(g.numpy()[1], [0.6, 0.8])


def test_cumulative_logsumexp_is_stable_and_exclusive_follows_tf():
    v = gt.constant([-800.0, 0.0, -900.0, 1.0], dtype=F64)
    np.testing.assert_allclose(
        gt.math.cumulative_logsumexp(v).numpy(), [-800.0, 0.0, 0.0, 1.3132616875182228], rtol=1e-14
    )
    np.testing.assert_allclose(
        gt.math.cumulative_logsumexp(v, exclusive=True).numpy(), [-np.inf, -800.0, 0.0, 0.0], rtol=1e-14
    )
    np.testing.assert_allclose(
        gt.math.cumulative_logsumexp(v, exclusive=True, reverse=True).numpy(),
        [1.3132616875182228, 1.0, 1.0, -np.inf],
        rtol=1e-14,
    )
    # float32: no underflow to -inf (TF's 0.0 for the second is its flush of the subnormal
    # log1p(exp(-100)) = 3.8e-44 to zero)
    np.testing.assert_allclose(
        gt.math.cumulative_logsumexp(gt.constant([-100.0, 0.0])).numpy(), [-100.0, 0.0], atol=1e-40
    )
    _, (g,) = _grads(
        lambda t: gt.math.cumulative_logsumexp(t, exclusive=True), [0.5, -1.0, 2.0, 0.3], seed=[1.0, 2.0, -3.0, 4.0]
    )
    np.testing.assert_allclose(
        g.numpy(), [0.24843813997921638, -0.3908262783363191, 3.142388138357103, 0.0], rtol=1e-13
    )


def test_polyval_and_scalar_mul():
    np.testing.assert_allclose(gt.math.polyval([1.0, 2.0, 3.0], gt.constant([2.0, 3.0])).numpy(), [11.0, 18.0])
    assert float(gt.math.polyval([], gt.constant(2.0))) == 0.0
    with pytest.raises(ValueError, match="must be list"):
        gt.math.polyval(gt.constant([1.0]), 2.0)
    s = gt.math.scalar_mul(2, gt.constant([1, 2]))
    assert s.dtype == gt.int32 and s.numpy().tolist() == [2, 4]
    with pytest.raises(ValueError, match="must be a 0-D value"):
        gt.math.scalar_mul(gt.constant([1.0, 2.0]), gt.constant([1.0, 2.0]))
    sl = gt.IndexedSlices(gt.constant([[1.0, 2.0]]), gt.constant([0]), gt.constant([3, 2]))
    out = gt.scalar_mul(gt.constant(2.0), sl)
    assert isinstance(out, gt.IndexedSlices)
    np.testing.assert_array_equal(out.values.numpy(), [[2.0, 4.0]])


def test_invert_permutation_inside_a_function_checks_each_call():
    f = gt.function(gt.math.invert_permutation)
    np.testing.assert_array_equal(f(gt.constant([3, 4, 0, 2, 1])).numpy(), [2, 4, 3, 0, 1])
    out = f(gt.constant([1, 2, 0, 4, 3], dtype=gt.int64))
    assert out.dtype == gt.int64 and out.numpy().tolist() == [2, 0, 1, 4, 3]
    # TF's run-time errors (the same graph: the values are not known when tracing).
    with pytest.raises(gt.errors.InvalidArgumentError, match="1 is duplicated in the input"):
        f(gt.constant([1, 1, 0, 2, 3]))
    with pytest.raises(gt.errors.InvalidArgumentError, match="7 is not between 0 and 5"):
        f(gt.constant([7, 1, 0, 2, 3]))


def test_integer_utilities():
    np.testing.assert_array_equal(gt.math.invert_permutation([3, 4, 0, 2, 1]).numpy(), [2, 4, 3, 0, 1])
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.math.invert_permutation([0, 0, 1])
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.math.invert_permutation([0, 3])
    assert bool(gt.math.is_non_decreasing([1, 2, 2]))
    assert not bool(gt.math.is_strictly_increasing([1, 2, 2]))
    assert bool(gt.math.is_strictly_increasing([]))
    assert not bool(gt.math.is_non_decreasing(gt.constant([[1.0, 2.0], [0.0, 3.0]])))
    with pytest.raises(TypeError, match="numeric"):
        gt.math.is_non_decreasing(gt.constant([1j]))
    np.testing.assert_array_equal(gt.math.bincount([1, 1, 3]).numpy(), [0, 2, 0, 1])
    np.testing.assert_array_equal(gt.math.bincount([1, 1, 3], minlength=6).numpy(), [0, 2, 0, 1, 0, 0])
    np.testing.assert_array_equal(gt.math.bincount([1, 1, 3], maxlength=2).numpy(), [0, 2])
    w = gt.math.bincount([1, 1, 3], weights=gt.constant([0.5, 1.0, 2.0]))
    assert w.dtype == gt.float32
    np.testing.assert_array_equal(w.numpy(), [0.0, 1.5, 0.0, 2.0])
    e = gt.math.bincount(gt.constant([], dtype=gt.int32))
    assert e.shape == (0,) and e.dtype == gt.int32
    np.testing.assert_array_equal(gt.math.bincount([[1, 1], [0, 2]], axis=-1).numpy(), [[0, 2, 0], [1, 0, 1]])
    np.testing.assert_array_equal(gt.math.bincount([1, 1, 3], binary_output=True).numpy(), [0, 1, 0, 1])
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.math.bincount([-1, 2])


def test_confusion_matrix():
    cm = gt.math.confusion_matrix([1, 2, 4], [2, 2, 4])
    assert cm.dtype == gt.int32 and cm.shape == (5, 5)
    expected = np.zeros((5, 5), dtype=np.int32)
    expected[1, 2] = expected[2, 2] = expected[4, 4] = 1
    np.testing.assert_array_equal(cm.numpy(), expected)
    w = gt.math.confusion_matrix([0, 1], [1, 1], num_classes=3, weights=[2.0, 3.0], dtype=gt.float32)
    np.testing.assert_array_equal(w.numpy(), [[0, 2, 0], [0, 3, 0], [0, 0, 0]])
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.math.confusion_matrix([0, 3], [0, 1], num_classes=3)
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.math.confusion_matrix([0, -1], [0, 1])


@pytest.mark.parametrize("kw", [
    dict(arr=[1, 1, 3, 0, 7]),
    dict(arr=[1, 1, 3], minlength=6),
    dict(arr=[1, 1, 3, 9], maxlength=4),
    dict(arr=[2, 0, 2], weights=[0.5, 1.5, 2.0]),
    dict(arr=[[1, 2, 2], [0, 0, 3]], axis=-1),
    dict(arr=[[1, 2, 2], [0, 0, 3]], axis=-1, binary_output=True),
    dict(arr=[1, 4], dtype="int64"),
    dict(arr=[], minlength=2),
])
def test_bincount_of_values_computed_in_a_function_equals_eager(kw):
    # Inside a trace the bin count is known only when the graph runs (TF's Bincount
    # node): the traced form gives the eager values, dtype and shape on every call.
    kw = dict(kw)
    arr = np.asarray(kw.pop("arr"), np.int32)
    w = kw.pop("weights", None)
    eager = gt.math.bincount(arr, weights=None if w is None else np.float32(w), **kw)
    if w is None:
        f = gt.function(lambda a: gt.math.bincount(a, **kw))
        traced = f(gt.constant(arr))
    else:
        f = gt.function(lambda a, w: gt.math.bincount(a, weights=w, **kw))
        traced = f(gt.constant(arr), gt.constant(np.float32(w)))
    assert traced.dtype == eager.dtype
    np.testing.assert_array_equal(traced.numpy(), eager.numpy())


def test_bincount_and_confusion_matrix_in_a_function_check_and_size_at_run_time(tmp_path):
    f = gt.function(lambda a: gt.math.bincount(a))
    np.testing.assert_array_equal(f(gt.constant([0, 2])).numpy(), [1, 0, 1])
    np.testing.assert_array_equal(f(gt.constant([4, 4])).numpy(), [0, 0, 0, 0, 2])  # same trace
    assert f.experimental_get_tracing_count() == 1
    with pytest.raises(gt.errors.InvalidArgumentError, match="Input arr must be non-negative!"):
        f(gt.constant([1, -1]))
    cm = gt.function(lambda lab, pre: gt.math.confusion_matrix(lab, pre))
    got = cm(gt.constant([0, 1, 1, 3]), gt.constant([0, 1, 0, 2]))
    np.testing.assert_array_equal(got.numpy(), gt.math.confusion_matrix([0, 1, 1, 3], [0, 1, 0, 2]).numpy())
    assert got.dtype == gt.int32 and got.shape == (4, 4)
    with pytest.raises(gt.errors.InvalidArgumentError, match="`labels` contains negative values."):
        cm(gt.constant([0, -1]), gt.constant([0, 1]))
    bounded = gt.function(lambda lab, pre: gt.math.confusion_matrix(lab, pre, num_classes=2))
    with pytest.raises(gt.errors.InvalidArgumentError, match="`labels` out of bound."):
        bounded(gt.constant([0, 2]), gt.constant([0, 1]))
    # Differentiable in the weights, traced as eagerly.
    lab, pre, w = gt.constant([0, 1, 1]), gt.constant([0, 1, 0]), gt.constant([1.0, 2.0, 0.5])
    weighted = gt.function(lambda lab, pre, w: gt.reduce_sum(
        gt.math.confusion_matrix(lab, pre, weights=w, dtype=gt.float32) * gt.constant([[1.0, 2.0], [3.0, 4.0]])))
    with gt.GradientTape() as t:
        t.watch(w)
        y = weighted(lab, pre, w)
    assert float(y) == 1.0 + 2.0 * 4.0 + 0.5 * 3.0
    np.testing.assert_array_equal(t.gradient(y, w).numpy(), [1.0, 4.0, 3.0])

    class M(gt.Module):
        @gt.function(input_signature=[gt.TensorSpec([None], gt.int32)])
        def counts(self, a):
            return gt.math.bincount(a, minlength=3)

    gt.saved_model.save(M(), tmp_path / "m")
    loaded = gt.saved_model.load(tmp_path / "m")
    np.testing.assert_array_equal(loaded.counts(gt.constant([5, 1, 5])).numpy(), [0, 1, 0, 0, 0, 2])
    with pytest.raises(gt.errors.InvalidArgumentError, match="non-negative"):
        loaded.counts(gt.constant([-2]))


def test_top_k_and_in_top_k():
    r = gt.math.top_k(gt.constant([[1.0, 3.0, 2.0, 3.0]]), k=2)
    assert type(r).__name__ == "TopKV2" and r._fields == ("values", "indices")
    np.testing.assert_array_equal(r.values.numpy(), [[3.0, 3.0]])
    np.testing.assert_array_equal(r.indices.numpy(), [[1, 3]])
    assert r.indices.dtype == gt.int32
    u = gt.nn.top_k(gt.constant([3, 1, 2]), 2, sorted=False)
    np.testing.assert_array_equal(u.values.numpy(), [3, 2])
    np.testing.assert_array_equal(u.indices.numpy(), [0, 2])
    # The gradient goes to the picked positions (ties: the earlier position first).
    x = gt.constant([1.0, 3.0, 2.0, 3.0], dtype=F64)
    with gt.GradientTape() as t:
        t.watch(x)
        v = gt.math.top_k(x, 3).values
    g = t.gradient(v, x, output_gradients=gt.constant([1.0, 10.0, 100.0], dtype=F64))
    np.testing.assert_array_equal(g.numpy(), [0.0, 1.0, 100.0, 10.0])
    assert gt.math.top_k(x, 2, index_type=gt.int64).indices.dtype == gt.int64
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.math.top_k(x, 5)
    got = gt.math.in_top_k(
        [0, 1, 2, 5], gt.constant([[1.0, 2.0, 3.0], [np.nan, 1.0, 0.0], [3.0, 3.0, 3.0], [1.0, 1.0, 1.0]]), 2
    )
    np.testing.assert_array_equal(got.numpy(), [False, False, True, False])
    np.testing.assert_array_equal(
        gt.nn.in_top_k([1, 2], gt.constant([[0.1, 0.9, 0.0], [0.3, 0.3, 0.3]]), k=1).numpy(), [True, True]
    )


def test_segment_values_follow_tf():
    d = gt.constant([1.0, 2.0, 3.0, 4.0])
    ids = [0, -1, 2, 2]
    np.testing.assert_array_equal(
        gt.math.unsorted_segment_max(d, ids, 4).numpy(), [1.0, np.finfo(np.float32).min, 4.0, np.finfo(np.float32).min]
    )
    np.testing.assert_array_equal(
        gt.math.unsorted_segment_min(d, ids, 4).numpy(), [1.0, np.finfo(np.float32).max, 3.0, np.finfo(np.float32).max]
    )
    np.testing.assert_allclose(gt.math.unsorted_segment_mean(d, ids, 4).numpy(), [1.0, 0.0, 3.5, 0.0])
    np.testing.assert_allclose(
        gt.math.unsorted_segment_sqrt_n(d, ids, 4).numpy(), [1.0, 0.0, 4.9497476, 0.0], rtol=1e-6
    )
    np.testing.assert_array_equal(gt.math.unsorted_segment_prod(d, ids, 4).numpy(), [1.0, 1.0, 12.0, 1.0])
    s = [0, 0, 2, 2]
    np.testing.assert_array_equal(gt.math.segment_sum(d, s).numpy(), [3.0, 0.0, 7.0])
    np.testing.assert_array_equal(gt.math.segment_max(d, s).numpy(), [2.0, 0.0, 4.0])
    np.testing.assert_array_equal(gt.math.segment_prod(d, s).numpy(), [2.0, 1.0, 12.0])
    np.testing.assert_array_equal(gt.math.segment_mean(d, s).numpy(), [1.5, 0.0, 3.5])
    np.testing.assert_array_equal(gt.math.segment_sum(gt.constant([[1, 2], [3, 4]]), [1, 1]).numpy(), [[0, 0], [4, 6]])
    with pytest.raises(gt.errors.InvalidArgumentError, match="not increasing"):
        gt.math.segment_sum(gt.constant([1.0, 2.0]), [1, 0])
    with pytest.raises(gt.errors.InvalidArgumentError, match="out of range"):
        gt.math.unsorted_segment_sum(gt.constant([1.0, 2.0]), [1, 5], 3)


@pytest.mark.parametrize(
    "name,expected_value,expected_grad",
    [
        ("unsorted_segment_max", [2.0, 4.0, 5.0], [0.0, 0.5, 0.5, 10.0, 0.0, 100.0]),
        ("unsorted_segment_prod", [4.0, 0.0, 5.0], [4.0, 2.0, 2.0, 0.0, 40.0, 100.0]),
        ("unsorted_segment_mean", [5 / 3, 2.0, 5.0], [1 / 3, 1 / 3, 1 / 3, 5.0, 5.0, 100.0]),
        (
            "unsorted_segment_sqrt_n",
            [5 / math.sqrt(3), 2 * math.sqrt(2), 5.0],
            [1 / math.sqrt(3)] * 3 + [10 / math.sqrt(2)] * 2 + [100.0],
        ),
    ],
)
def test_segment_gradients_at_ties_and_zeros_follow_tf(name, expected_value, expected_grad):
    f = getattr(gt.math, name)
    y, (g,) = _grads(lambda d: f(d, [0, 0, 0, 1, 1, 2], 3), [1.0, 2.0, 2.0, 4.0, 0.0, 5.0], seed=[1.0, 10.0, 100.0])
    np.testing.assert_allclose(y.numpy(), expected_value, rtol=1e-14)
    np.testing.assert_allclose(g.numpy(), expected_grad, rtol=1e-14)


@pytest.mark.parametrize("dtype", [gt.complex64, gt.complex128])
def test_complex_segment_products_and_tfs_unconjugated_gradient(dtype):
    d = np.array([1 + 2j, 3 - 1j, 0.5j, 2 + 0j, 0j, -1 + 1j, 0j, 0j])
    ids = [0, 2, 0, -1, 1, 1, 3, 3]
    seed = np.array([1 + 1j, 2 - 1j, 1j, 3 + 0j])
    x = gt.constant(d, dtype=dtype)
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = gt.math.unsorted_segment_prod(x, ids, 4)
        ys = gt.math.segment_prod(x[:3], [0, 0, 2])
    assert y.dtype == dtype
    prods = [(1 + 2j) * 0.5j, 0j, 3 - 1j, 0j]
    np.testing.assert_allclose(y.numpy(), prods, rtol=1e-6)
    np.testing.assert_allclose(ys.numpy(), [(1 + 2j) * (3 - 1j), 1, 0.5j], rtol=1e-6)
    g = t.gradient(y, x, output_gradients=gt.constant(seed, dtype=dtype))
    # TF's _UnsortedSegmentProdGrad: dy * prod / x (no conjugate), the product of the
    # others at a segment's one zero, 0 in a segment of two zeros and at dropped rows.
    want = [seed[0] * 0.5j, seed[2], seed[0] * (1 + 2j), 0, seed[1] * (-1 + 1j), 0, 0, 0]
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-6)
    gs = t.gradient(ys, x, output_gradients=gt.constant([1j, 5, 2], dtype=dtype))
    np.testing.assert_allclose(gs.numpy(), [1j * (3 - 1j), 1j * (1 + 2j), 2, 0, 0, 0, 0, 0], rtol=1e-6)
    with pytest.raises(TypeError, match="complex"):
        gt.math.unsorted_segment_max(x, ids, 4)


def test_sorted_segment_gradients_follow_tf():
    d = [1.0, 2.0, 2.0, 4.0, 0.0, 5.0]
    ids = [0, 0, 0, 1, 1, 3]
    seed = [1.0, 10.0, 100.0, 1000.0]
    _, (g,) = _grads(lambda t: gt.math.segment_max(t, ids), d, seed=seed)
    np.testing.assert_allclose(g.numpy(), [0.0, 0.5, 0.5, 10.0, 0.0, 1000.0])
    _, (g,) = _grads(lambda t: gt.math.segment_prod(t, ids), d, seed=seed)
    np.testing.assert_allclose(g.numpy(), [4.0, 2.0, 2.0, 0.0, 40.0, 1000.0])
    _, (g,) = _grads(lambda t: gt.math.segment_mean(t, ids), d, seed=seed)
    np.testing.assert_allclose(g.numpy(), [1 / 3, 1 / 3, 1 / 3, 5.0, 5.0, 1000.0])


def test_segment_ops_inside_a_function_and_a_jacobian():
    ids = gt.constant([0, 1, 0])

    @gt.function
    def f(d):
        return gt.math.unsorted_segment_sum(d, ids, 2)

    d = gt.constant([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(f(d).numpy(), [4.0, 2.0])
    with gt.GradientTape() as t:
        t.watch(d)
        y = gt.math.unsorted_segment_max(d, ids, 2)
    np.testing.assert_array_equal(t.jacobian(y, d).numpy(), [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
