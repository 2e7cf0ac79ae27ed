"""gt.IndexedSlices: where tape.gradient returns one (as TF 2.21 does), how it
aggregates, densifies, takes part in arithmetic and in optimizers. Expected values are
TF 2.21's (eager), noted beside each case."""

import numpy as np
import pytest

import gradtape as gt

ROWS = [[0.0, 1, 2], [2, 3, 4], [4, 5, 6], [6, 7, 8]]


def _parts(g):
    assert isinstance(g, gt.IndexedSlices), type(g)
    return g.indices.numpy().tolist(), g.values.numpy().tolist(), g.dense_shape.numpy().tolist()


ONES2 = [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]


@pytest.mark.parametrize(
    "make,want",
    [
        # tf.gather(v, [1, 3]) (TF: ResourceGather on the variable)
        (lambda v, x: (gt.gather(v, [1, 3]), v), ([1, 3], ONES2, [4, 3])),
        (lambda v, x: (gt.gather(x, [1, 3]), x), ([1, 3], ONES2, [4, 3])),
        # indices of rank 2 are flattened
        (lambda v, x: (gt.gather(x, [[1], [3]]), x), ([1, 3], ONES2, [4, 3])),
        # gather_nd with one index per row
        (lambda v, x: (gt.gather_nd(x, [[1], [3]]), x), ([1, 3], ONES2, [4, 3])),
        (lambda v, x: (gt.gather_nd(v, [[1], [3]]), v), ([1, 3], ONES2, [4, 3])),
        # repeated ids stay repeated
        (lambda v, x: (gt.nn.embedding_lookup(v, [1, 1]), v), ([1, 1], ONES2, [4, 3])),
        # a scalar index
        (lambda v, x: (gt.gather(x, 1), x), ([1], [[1.0, 1.0, 1.0]], [4, 3])),
        # later ops densify the upstream gradient, the gather's rule makes it sparse
        (lambda v, x: (gt.gather(v, [1]) * 2.0, v), ([1], [[2.0, 2.0, 2.0]], [4, 3])),
        (lambda v, x: (gt.gather(gt.gather(x, [1, 3]), [0]), x),
         ([1, 3], [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]], [4, 3])),
        # identities and reads pass it on
        (lambda v, x: (gt.gather(gt.identity(x), [1]), x), ([1], [[1.0, 1.0, 1.0]], [4, 3])),
        (lambda v, x: (gt.gather(v.read_value(), [1]), v), ([1], [[1.0, 1.0, 1.0]], [4, 3])),
    ],
)
def test_gradients_tf_gives_as_indexed_slices(make, want):
    v = gt.Variable(ROWS)
    x = gt.constant(ROWS)
    with gt.GradientTape() as t:
        t.watch(x)
        y, src = make(v, x)
    g = t.gradient(y, src)
    assert _parts(g) == want
    assert g.indices.dtype == gt.int32 and g.dense_shape.dtype == gt.int32
    assert g.dtype == gt.float32 and g.shape.as_list() == [4, 3]


@pytest.mark.parametrize(
    "make,want",
    [
        # axis != 0, batch_dims, several indices per row, an op between: dense (TF)
        (lambda v, x: (gt.gather(x, [1, 2], axis=1), x), [[0.0, 1, 1]] * 4),
        (lambda v, x: (gt.gather_nd(x, [[1, 2]]), x), [[0.0, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]]),
        (lambda v, x: (gt.gather(v[:2] * 1.0, [[0, 1], [1, 0]], batch_dims=1), v),
         [[1.0, 1, 0], [1, 1, 0], [0, 0, 0], [0, 0, 0]]),
        (lambda v, x: (gt.gather(v * 1.0, [1]), v), [[0.0, 0, 0], [1, 1, 1], [0, 0, 0], [0, 0, 0]]),
        # sparse + dense is dense
        (lambda v, x: (gt.reduce_sum(gt.gather(v, [1, 3])) + gt.reduce_sum(v), v),
         [[1.0, 1, 1], [2, 2, 2], [1, 1, 1], [2, 2, 2]]),
        (lambda v, x: (gt.gather(x, [1, 3]) * x[:2], x),
         [[2.0, 3, 4], [6, 8, 10], [0, 0, 0], [2, 3, 4]]),
    ],
)
def test_gradients_tf_gives_dense(make, want):
    v = gt.Variable(ROWS)
    x = gt.constant(ROWS)
    with gt.GradientTape() as t:
        t.watch(x)
        y, src = make(v, x)
    g = t.gradient(y, src)
    assert isinstance(g, gt.Tensor)
    assert g.numpy().tolist() == want


def test_sparse_gradients_concatenate_and_int64_indices_stay():
    x = gt.constant(ROWS)
    v = gt.Variable(ROWS)
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        s = gt.reduce_sum(gt.gather(x, [0])) + gt.reduce_sum(gt.gather(x, [2, 2]))
        i64 = gt.gather(x, gt.constant([1], gt.int64))
        r1 = gt.gather(v, [1, 3])
        r7 = gt.nn.embedding_lookup(v, [1, 1])
    # TF: IndexedSlices([0, 2, 2], ones)
    assert _parts(t.gradient(s, x)) == ([0, 2, 2], [[1.0] * 3] * 3, [4, 3])
    g = t.gradient(i64, x)
    assert g.indices.dtype == gt.int64 and g.dense_shape.dtype == gt.int32
    # two targets: TF concatenates in target order
    assert _parts(t.gradient([r1, r7], v))[0] == [1, 3, 1, 1]
    # output_gradients become the values
    og = gt.constant([[1.0, 2, 3], [4, 5, 6]])
    assert _parts(t.gradient(r1, v, output_gradients=og)) == ([1, 3], [[1.0, 2, 3], [4, 5, 6]], [4, 3])
    # unconnected zeros are dense, as in TF
    z = t.gradient(gt.constant(1.0), v, unconnected_gradients="zero")
    assert isinstance(z, gt.Tensor) and z.numpy().tolist() == [[0.0] * 3] * 4


def test_mixed_index_dtypes_become_int64():
    x = gt.constant(ROWS)
    with gt.GradientTape() as t:
        t.watch(x)
        y = gt.reduce_sum(gt.gather(x, [0])) + gt.reduce_sum(gt.gather(x, gt.constant([3], gt.int64)))
    g = t.gradient(y, x)
    assert g.indices.dtype == gt.int64 and g.indices.numpy().tolist() == [0, 3]


def test_densify_arithmetic_and_str():
    x = gt.constant(ROWS)
    with gt.GradientTape() as t:
        t.watch(x)
        s = gt.reduce_sum(gt.gather(x, [0])) + gt.reduce_sum(gt.gather(x, [2, 2]))
    g = t.gradient(s, x)
    dense = [[1.0, 1, 1], [0, 0, 0], [2, 2, 2], [0, 0, 0]]
    assert gt.convert_to_tensor(g).numpy().tolist() == dense
    assert np.asarray(gt.convert_to_tensor(g)).tolist() == dense
    # TF: -g is IndexedSlices; g + g and g * 2 are TypeErrors; tensor ops densify.
    n = -g
    assert isinstance(n, gt.IndexedSlices) and n.values.numpy().tolist() == [[-1.0] * 3] * 3
    with pytest.raises(TypeError):
        g + g
    with pytest.raises(TypeError):
        g * 2.0
    assert (g + x).numpy().tolist() == [[1.0, 2, 3], [2, 3, 4], [6, 7, 8], [6, 7, 8]]
    assert gt.add(g, x).numpy().tolist() == [[1.0, 2, 3], [2, 3, 4], [6, 7, 8], [6, 7, 8]]
    assert gt.multiply(g, 2.0).numpy().tolist() == [[2.0, 2, 2], [0, 0, 0], [4, 4, 4], [0, 0, 0]]
    assert gt.math.add_n([g, g]).numpy().tolist() == [[2.0, 2, 2], [0, 0, 0], [4, 4, 4], [0, 0, 0]]
    assert str(g).startswith("IndexedSlices(indices=")
    assert "dense_shape=" in str(g)
    # without a dense_shape there is no dense tensor (TF's ValueError)
    with pytest.raises(ValueError, match="without dense_shape"):
        gt.convert_to_tensor(gt.IndexedSlices(gt.constant([[1.0]]), gt.constant([0])))
    assert gt.IndexedSlices(gt.constant([[1.0]]), gt.constant([0])).dense_shape is None


def test_densified_gradient_is_differentiable_in_its_values():
    x = gt.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = gt.reduce_sum(gt.gather(x, [0, 2, 0]) ** 3)
        g = inner.gradient(y, x)
        assert isinstance(g, gt.IndexedSlices)
        total = gt.reduce_sum(gt.convert_to_tensor(g))
    h = outer.gradient(total, x)
    # d/dx sum over gathered rows of 3 x^2 = 6 x per occurrence: row 0 twice, row 2 once
    want = np.array([[12.0, 24.0], [0.0, 0.0], [30.0, 36.0]])
    np.testing.assert_allclose(gt.convert_to_tensor(h).numpy(), want)


def test_jacobian_and_hessian_stay_dense():
    x = gt.constant([1.0, 2.0, 3.0])
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = gt.gather(x, [2, 0]) * 2.0
    j = t.jacobian(y, x)
    assert isinstance(j, gt.Tensor)
    np.testing.assert_allclose(j.numpy(), [[0.0, 0, 2], [2, 0, 0]])
    hv = gt.autodiff.hessian_vector_product(
        lambda z: gt.reduce_sum(gt.gather(z, [0, 0]) ** 2), x, gt.constant([1.0, 1.0, 1.0])
    )
    np.testing.assert_allclose(hv.numpy(), [4.0, 0.0, 0.0])


def test_forward_mode_through_a_gather():
    x = gt.constant([1.0, 2.0, 3.0])
    with gt.autodiff.ForwardAccumulator(x, gt.constant([1.0, 10.0, 100.0])) as acc:
        y = gt.gather(x, [[2, 0], [1, 1]])
    np.testing.assert_allclose(acc.jvp(y).numpy(), [[100.0, 1.0], [10.0, 10.0]])


def _train(opt, dense):
    v = gt.Variable([[1.0, 2], [3, 4], [5, 6]])
    for _ in range(2):
        with gt.GradientTape() as t:
            y = gt.reduce_sum(gt.gather(v, [0, 2, 0]) * gt.constant([[1.0, 2], [3, 4], [5, 6]]))
        g = t.gradient(y, v)
        assert isinstance(g, gt.IndexedSlices)
        if dense:
            g = gt.convert_to_tensor(g)
        opt.apply_gradients([(g, v)])
    return v.numpy()


@pytest.mark.parametrize(
    "make,sparse_want,dense_want",
    [
        # TF 2.21 (Keras 3) tf.keras.optimizers, same loop, IndexedSlices vs densified
        (lambda: gt.optimizers.SGD(0.1),
         [[-0.2, 0.4], [3, 4], [4.4, 5.2]], [[-0.2, 0.4], [3, 4], [4.4, 5.2]]),
        (lambda: gt.optimizers.SGD(0.1, momentum=0.9),
         [[-0.74, -0.32], [3, 4], [4.13, 4.84]], [[-0.74, -0.32], [3, 4], [4.13, 4.84]]),
        (lambda: gt.optimizers.SGD(0.1, momentum=0.9, nesterov=True),
         [[-1.766, -1.688], [3, 4], [3.617, 4.156]], [[-1.766, -1.688], [3, 4], [3.617, 4.156]]),
        # Keras squares the rows before adding repeated ones: v differs for row 0
        (lambda: gt.optimizers.Adam(0.1),
         [[0.7646627426147461, 1.7470200061798096], [3, 4], [4.800001621246338, 5.800001621246338]],
         [[0.8000017404556274, 1.8000017404556274], [3, 4], [4.800001621246338, 5.800001621246338]]),
        (lambda: gt.optimizers.Adam(0.1, amsgrad=True),
         [[0.7646627426147461, 1.7470200061798096], [3, 4], [4.800001621246338, 5.800001621246338]],
         [[0.8000017404556274, 1.8000017404556274], [3, 4], [4.800001621246338, 5.800001621246338]]),
    ],
)
def test_optimizers_apply_indexed_slices_as_tf(make, sparse_want, dense_want):
    # float32 roundings: Keras computes Adam's step size in float32, gradtape in float64.
    np.testing.assert_allclose(_train(make(), False), sparse_want, rtol=5e-6)
    np.testing.assert_allclose(_train(make(), True), dense_want, rtol=5e-6)


def test_optimizer_checks_an_indexed_slices_gradient():
    v = gt.Variable([[1.0, 2.0], [3.0, 4.0]])
    bad_shape = gt.IndexedSlices(gt.constant([[1.0, 1.0]]), gt.constant([0]), gt.constant([3, 2]))
    with pytest.raises(ValueError, match="does not match"):
        gt.optimizers.SGD(0.1).apply_gradients([(bad_shape, v)])
    bad_dtype = gt.IndexedSlices(gt.constant([[1.0, 1.0]], gt.float64), gt.constant([0]), gt.constant([2, 2]))
    with pytest.raises(TypeError, match="does not match"):
        gt.optimizers.SGD(0.1).apply_gradients([(bad_dtype, v)])
    assert v.numpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_indexed_slices_as_output_gradients_and_tangents():
    # TF's testIndexedSlicesInIncomingGrads: an IndexedSlices upstream gradient.
    x = gt.constant([2.0])
    with gt.GradientTape() as t:
        t.watch(x)
        y = x * x
    dy = gt.IndexedSlices(gt.constant([1.0]), gt.constant([0]), gt.constant([1]))
    assert t.gradient(y, x, output_gradients=dy).numpy().tolist() == [4.0]
    # Forward over reverse: the tangent of a sparse gradient is sparse at the same rows.
    p = gt.constant([1.0, 2.0, 3.0])
    with gt.autodiff.ForwardAccumulator(p, gt.constant([1.0, 10.0, 100.0])) as acc:
        with gt.GradientTape() as t:
            t.watch(p)
            y = gt.reduce_sum(gt.gather(p, [2, 0, 2]) ** 2)
        g = t.gradient(y, p)
    assert _parts(g) == ([2, 0, 2], [6.0, 2.0, 6.0], [3])
    tg = acc.jvp(g)
    assert isinstance(tg, gt.IndexedSlices)
    assert tg.indices.numpy().tolist() == [2, 0, 2]
    np.testing.assert_allclose(tg.values.numpy(), [200.0, 2.0, 200.0])


@pytest.mark.parametrize(
    "make",
    [
        lambda: gt.keras.optimizers.RMSprop(0.1),
        lambda: gt.keras.optimizers.Adagrad(0.1),
        lambda: gt.optimizers.SGD(0.1, clipnorm=0.5),
    ],
)
def test_optimizers_without_a_sparse_rule_apply_the_densified_gradient(make):
    # Rows 0 and 2 of a 3x2 variable: the update equals the dense gradient's.
    g = gt.IndexedSlices(gt.constant([[1.0, 2.0], [3.0, 4.0]]), gt.constant([2, 0]), (3, 2))
    dense = np.array([[3.0, 4.0], [0.0, 0.0], [1.0, 2.0]], np.float32)
    a = gt.Variable(np.ones((3, 2), np.float32))
    b = gt.Variable(np.ones((3, 2), np.float32))
    make().apply_gradients([(g, a)])
    make().apply_gradients([(gt.constant(dense), b)])
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), np.ones((3, 2), np.float32))


# --- clipping (TF 2.21 / Keras 3 numbers) -----------------------------------------------


def test_clip_by_norm_keeps_indexed_slices():
    # tf.clip_by_norm of an IndexedSlices: the values clipped by their own norm (the
    # repeated row is not summed first: norm sqrt(50), not that of the dense [[6, 8]]).
    s = gt.IndexedSlices(gt.constant([[3.0, 4.0], [3.0, 4.0]]), gt.constant([0, 0]), gt.constant([3, 2]))
    c = gt.clip_by_norm(s, 1.0)
    assert isinstance(c, gt.IndexedSlices)
    assert c.indices.numpy().tolist() == [0, 0] and c.dense_shape.numpy().tolist() == [3, 2]
    np.testing.assert_allclose(c.values.numpy(), [[0.42426407, 0.56568545]] * 2, rtol=1e-6)
    # axes apply to the values (TF: each row of values clipped to norm 1).
    r = gt.clip_by_norm(gt.IndexedSlices(gt.constant([[3.0, 4.0], [0.3, 0.4]]), gt.constant([2, 0])), 1.0, axes=[1])
    np.testing.assert_allclose(r.values.numpy(), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)
    assert r.dense_shape is None
    # Dense tensors as before; a negative clip_norm counts as 0 (TF).
    np.testing.assert_allclose(gt.clip_by_norm(gt.constant([3.0, 4.0]), -1.0).numpy(), [0.0, 0.0])


def test_clip_by_norm_of_indexed_slices_is_differentiable():
    x = gt.constant([[3.0, 4.0], [1.0, 0.0]])
    with gt.GradientTape() as t:
        t.watch(x)
        c = gt.clip_by_norm(gt.IndexedSlices(x, gt.constant([1, 0]), gt.constant([2, 2])), 2.0)
        y = gt.reduce_sum(c.values * gt.constant([[1.0, 2.0], [3.0, 4.0]]))
    dense_x = gt.constant(x.numpy())
    with gt.GradientTape() as t2:
        t2.watch(dense_x)
        y2 = gt.reduce_sum(gt.clip_by_norm(dense_x, 2.0) * gt.constant([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_allclose(y.numpy(), y2.numpy())
    np.testing.assert_allclose(t.gradient(y, x).numpy(), t2.gradient(y2, dense_x).numpy())


def test_clip_by_global_norm_keeps_indexed_slices():
    s = gt.IndexedSlices(gt.constant([[3.0, 4.0], [3.0, 4.0]]), gt.constant([0, 0]), gt.constant([3, 2]))
    t = gt.constant([1.0, 1.0])
    clipped, norm = gt.clip_by_global_norm([s, t, None], 1.0)
    # TF 2.21: norm 7.2111025 (the values' squares: 50 + 2), IndexedSlices kept.
    np.testing.assert_allclose(norm.numpy(), 7.2111025, rtol=1e-6)
    assert isinstance(clipped[0], gt.IndexedSlices) and clipped[2] is None
    assert clipped[0].indices.numpy().tolist() == [0, 0]
    np.testing.assert_allclose(clipped[0].values.numpy(), [[0.41602516, 0.5547002]] * 2, rtol=1e-6)
    np.testing.assert_allclose(clipped[1].numpy(), [0.13867505, 0.13867505], rtol=1e-6)
    # Under the limit nothing changes; use_norm replaces the computed norm.
    same, n = gt.clip_by_global_norm([t], 10.0)
    np.testing.assert_allclose(same[0].numpy(), [1.0, 1.0])
    np.testing.assert_allclose(n.numpy(), 2**0.5, rtol=1e-6)
    half, n = gt.clip_by_global_norm([t], 1.0, use_norm=gt.constant(2.0))
    np.testing.assert_allclose(half[0].numpy(), [0.5, 0.5])
    assert float(n) == 2.0
    # A non-finite norm makes everything NaN (TF).
    nan, n = gt.clip_by_global_norm([gt.constant([np.inf, 1.0]), t], 1.0)
    assert np.isinf(n.numpy()) and np.isnan(nan[0].numpy()).all() and np.isnan(nan[1].numpy()).all()
    np.testing.assert_allclose(gt.linalg.global_norm([s, None, t]).numpy(), 7.2111025, rtol=1e-6)


def test_clip_by_global_norm_errors():
    with pytest.raises(TypeError, match="should be a sequence"):
        gt.clip_by_global_norm(gt.constant([1.0]), 1.0)
    with pytest.raises(ValueError, match="at least one"):
        gt.clip_by_global_norm([None], 1.0)
    with pytest.raises(Exception):  # noqa: B017 - mixed dtypes cannot be stacked (TF: InvalidArgumentError)
        gt.clip_by_global_norm([gt.constant([1.0]), gt.constant([1.0], gt.float64)], 1.0)


def test_clip_by_global_norm_gradient():
    a = gt.constant([3.0, 4.0])
    b = gt.constant([12.0])
    with gt.GradientTape() as t:
        t.watch([a, b])
        (ca, cb), _ = gt.clip_by_global_norm([a, b], 1.0)
        y = gt.reduce_sum(ca * gt.constant([1.0, 2.0])) + gt.reduce_sum(cb)
    ga, gb = t.gradient(y, [a, b])

    def f(v):
        n = np.linalg.norm(v)
        return (v[0] * 1 + v[1] * 2 + v[2]) / n

    v0 = np.array([3.0, 4.0, 12.0])
    num = [(f(v0 + e) - f(v0 - e)) / 2e-6 for e in np.eye(3) * 1e-6]
    np.testing.assert_allclose(np.concatenate([ga.numpy(), gb.numpy()]), num, rtol=1e-3)


def _sparse_step(**kw):
    v = gt.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    w = gt.Variable([1.0, 1.0])
    opt = gt.optimizers.SGD(1.0, **kw)
    with gt.GradientTape() as t:
        loss = gt.reduce_sum(gt.gather(v, [0, 2, 0]) * 3.0) + gt.reduce_sum(w * w)
    g = t.gradient(loss, [v, w])
    assert isinstance(g[0], gt.IndexedSlices)
    clipped = opt._clip(g)
    opt.apply_gradients(zip(g, [v, w]))
    return clipped, v.numpy(), w.numpy()


def test_optimizer_clipnorm_on_sparse_gradients_as_keras3():
    # Keras 3 (TF backend) keeps the gradient sparse and clips its values (norm of the
    # values: sqrt(6 * 9)); SGD scatter-subtracts them (row 0 twice).
    clipped, v, w = _sparse_step(clipnorm=1.0)
    assert isinstance(clipped[0], gt.IndexedSlices)
    np.testing.assert_allclose(clipped[0].values.numpy(), np.full((3, 2), 0.40824828), rtol=1e-6)
    np.testing.assert_allclose(v, [[0.18350342, 1.1835034], [3.0, 4.0], [4.5917516, 5.5917516]], rtol=1e-6)
    np.testing.assert_allclose(w, [0.29289323, 0.29289323], rtol=1e-6)


def test_optimizer_clipvalue_on_sparse_gradients_as_keras3():
    clipped, v, w = _sparse_step(clipvalue=0.5)
    assert isinstance(clipped[0], gt.IndexedSlices)
    np.testing.assert_allclose(clipped[0].values.numpy(), np.full((3, 2), 0.5))
    np.testing.assert_allclose(v, [[0.0, 1.0], [3.0, 4.0], [4.5, 5.5]])
    np.testing.assert_allclose(w, [0.5, 0.5])


def test_optimizer_global_clipnorm_on_sparse_gradients_as_keras3():
    # Keras 3: the norm from the values (sqrt(6 * 9 + 8)), the scaled gradient dense.
    clipped, v, w = _sparse_step(global_clipnorm=1.0)
    assert isinstance(clipped[0], gt.Tensor)
    np.testing.assert_allclose(clipped[0].numpy(), [[0.76200074] * 2, [0.0] * 2, [0.38100037] * 2], rtol=1e-6)
    np.testing.assert_allclose(v, [[0.23799926, 1.2379992], [3.0, 4.0], [4.6189995, 5.6189995]], rtol=1e-6)
    np.testing.assert_allclose(w, [0.74599975, 0.74599975], rtol=1e-6)


# --- IndexedSlices inside gt.function ---------------------------------------------------


def test_traced_gradient_gives_indexed_slices():
    v = gt.Variable(ROWS)

    @gt.function
    def grads(idx):
        with gt.GradientTape() as t:
            y = gt.reduce_sum(gt.gather(v, idx) * 2.0)
        g = t.gradient(y, v)
        assert isinstance(g, gt.IndexedSlices)  # also while tracing
        return g

    for idx in ([1, 3], [0, 0]):
        g = grads(gt.constant(idx))
        assert _parts(g) == (idx, [[2.0, 2.0, 2.0]] * 2, [4, 3])
    assert grads.experimental_get_tracing_count() == 1


def test_traced_gradient_indexed_slices_follow_the_shape():
    # reduce_retracing: one trace for several shapes; dense_shape is computed per call.
    @gt.function(reduce_retracing=True)
    def grads(x):
        with gt.GradientTape() as t:
            t.watch(x)
            y = gt.gather(x, [0])
        return t.gradient(y, x)

    for n in (2, 3, 5):
        g = grads(gt.ones([n, 2]))
        assert isinstance(g, gt.IndexedSlices)
        assert g.dense_shape.numpy().tolist() == [n, 2]
        dense = np.zeros((n, 2), np.float32)
        dense[0] = 1.0
        np.testing.assert_array_equal(gt.convert_to_tensor(g).numpy(), dense)


def test_traced_function_returns_indexed_slices_in_structures():
    @gt.function
    def f(x):
        s = gt.IndexedSlices(x * 2.0, gt.constant([1, 0]), gt.constant([3, 2]))
        return {"s": s, "n": 3, "t": x, "u": gt.IndexedSlices(x, gt.constant([2, 2]))}

    out = f(gt.constant([[1.0, 2.0], [3.0, 4.0]]))
    assert out["n"] == 3 and isinstance(out["t"], gt.Tensor)
    assert _parts(out["s"]) == ([1, 0], [[2.0, 4.0], [6.0, 8.0]], [3, 2])
    assert out["u"].dense_shape is None and out["u"].indices.numpy().tolist() == [2, 2]


@pytest.mark.parametrize(
    "make",
    [
        lambda: gt.optimizers.SGD(0.1),
        lambda: gt.optimizers.SGD(0.1, momentum=0.9),
        lambda: gt.optimizers.Adam(0.1),
        lambda: gt.optimizers.SGD(0.1, clipnorm=0.5),
    ],
)
def test_traced_training_step_with_sparse_gradients_equals_eager(make):
    ids = [[0, 2, 0], [1, 1, 3]]

    def run(traced):
        table = gt.Variable(np.arange(8, dtype=np.float32).reshape(4, 2) / 8)
        opt = make()

        def step(i):
            with gt.GradientTape() as t:
                loss = gt.reduce_sum(gt.nn.embedding_lookup(table, i) ** 2)
            (g,) = t.gradient(loss, [table])
            assert isinstance(g, gt.IndexedSlices)
            opt.apply_gradients([(g, table)])
            return loss

        fn = gt.function(step) if traced else step
        for _ in range(3):
            for i in ids:
                fn(gt.constant(i))
        return table.numpy()

    eager = run(False)
    np.testing.assert_allclose(run(True), eager, rtol=1e-6, atol=1e-7)
    # Row 3 got gradients only from the second batch; nothing is left untouched.
    assert not np.allclose(eager, np.arange(8, dtype=np.float32).reshape(4, 2) / 8)


def test_saving_a_function_that_returns_indexed_slices_is_refused(tmp_path):
    class M(gt.Module):
        @gt.function(input_signature=[gt.TensorSpec([2, 2], gt.float32)])
        def f(self, x):
            return gt.IndexedSlices(x, gt.constant([0, 1]), gt.constant([2, 2]))

    with pytest.raises(ValueError, match="IndexedSlices"):
        gt.saved_model.save(M(), str(tmp_path / "m"))
