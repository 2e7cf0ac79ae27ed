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
