"""Issue 14: the array / structural ops, tf.nn and tf.linalg compositions and small
top-level utilities. The expected numbers are TF 2.21's (computed with TF and pasted);
the spec rows in op_specs.py check the differentiable ones against numpy and finite
differences as well.
"""

import numpy as np
import pytest

import gradtape as gt


def L(v):
    if isinstance(v, (list, tuple)):
        return [np.asarray(x.numpy() if hasattr(x, "numpy") else x).tolist() for x in v]
    return np.asarray(v.numpy()).tolist()


def _grads(f, *xs):
    ts = [gt.constant(x) for x in xs]
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(ts)
        y = f(*ts)
    return [tape.gradient(y, t) for t in ts]


# ----------------------------------------------------------------------------- sort / search


def test_sort_and_argsort_match_tf():
    x = gt.constant([[1.0, 5.0, 2.0], [4.0, 4.0, 0.0]])
    assert L(gt.argsort(x, axis=-1, direction="DESCENDING")) == [[1, 2, 0], [0, 1, 2]]
    assert L(gt.argsort(x, axis=0)) == [[0, 1, 1], [1, 0, 0]]
    assert gt.argsort(x).dtype == gt.int32
    assert L(gt.sort(x, axis=0, direction="DESCENDING")) == [[4.0, 5.0, 2.0], [1.0, 4.0, 0.0]]
    w = gt.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    (g,) = _grads(lambda t: gt.sort(t, axis=-1) * w, x.numpy())
    assert L(g) == [[1.0, 3.0, 2.0], [5.0, 6.0, 4.0]]  # ties: the lower index first
    (g,) = _grads(lambda t: gt.sort(t, axis=-1, direction="DESCENDING") * w, x.numpy())
    assert L(g) == [[3.0, 1.0, 2.0], [4.0, 5.0, 6.0]]


def test_sort_traced_uses_the_same_order_as_eager():
    x = gt.constant([[3, 1, 3, 2], [0, 0, -1, 5]])

    @gt.function
    def f(t):
        return gt.sort(t, direction="DESCENDING"), gt.argsort(t), gt.argsort(t, direction="DESCENDING")

    eager = (gt.sort(x, direction="DESCENDING"), gt.argsort(x), gt.argsort(x, direction="DESCENDING"))
    for got, want in zip(f(x), eager):
        assert L(got) == L(want)
    assert L(gt.argsort(x)) == [[1, 3, 0, 2], [2, 0, 1, 3]]


def test_traced_sort_is_one_sort_node_with_the_gather_gradient():
    # A long row: the former pairwise form needed n² (here 4·10^8) comparisons.
    n = 20000
    rng = np.random.default_rng(7)
    a = rng.permutation(n).astype(np.float64) * 0.5
    w = gt.constant(np.arange(n, dtype=np.float64))

    @gt.function
    def f(t):
        with gt.GradientTape() as tape:
            tape.watch(t)
            s = gt.sort(t)
            loss = gt.reduce_sum(s * w)
        return s, gt.argsort(t, direction="DESCENDING"), tape.gradient(loss, t)

    s, order, g = f(gt.constant(a))
    np.testing.assert_array_equal(s.numpy(), np.sort(a))
    np.testing.assert_array_equal(order.numpy(), np.argsort(-a, kind="stable"))
    # Each element's gradient is the weight of the place it lands in: its rank.
    np.testing.assert_array_equal(g.numpy(), np.argsort(np.argsort(a, kind="stable"), kind="stable"))
    # Ascending ties keep their order in traces too; int64 keys sort exactly.
    ints = gt.constant([5, -(2**40), 5, 7, -(2**40)], dtype=gt.int64)
    assert L(gt.function(gt.argsort)(ints)) == [1, 4, 0, 2, 3]


def test_sort_rejects_bad_arguments():
    with pytest.raises(ValueError):
        gt.sort([1.0, 2.0], direction="UP")
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.sort(gt.constant([1 + 1j]))
    with pytest.raises(ValueError):
        gt.sort(gt.constant(1.0))


def test_searchsorted_matches_tf():
    s = [[1.0, 3.0, 3.0, 7.0], [0.0, 2.0, 4.0, 6.0]]
    v = [[3.0, 8.0], [-1.0, 4.0]]
    assert L(gt.searchsorted(s, v)) == [[1, 4], [0, 2]]
    assert L(gt.searchsorted(s, v, side="right")) == [[3, 4], [0, 3]]
    assert gt.searchsorted(s, v, out_type=gt.int64).dtype == gt.int64
    with pytest.raises(ValueError):
        gt.searchsorted(s, v, side="middle")
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.searchsorted(s, [[1.0]] * 3)


def test_unique_and_counts_match_tf():
    y, i, c = gt.unique_with_counts([3, 1, 3, 2, 1, 3])
    assert (L(y), L(i), L(c)) == ([3, 1, 2], [0, 1, 0, 2, 1, 0], [3, 2, 1])
    y, i = gt.unique(gt.constant([2.5, 2.5, -1.0]), out_idx=gt.int64)
    assert (L(y), L(i), i.dtype) == ([2.5, -1.0], [0, 0, 1], gt.int64)
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.unique([[1, 2]])


# ----------------------------------------------------------------------------- structure


def test_reverse_and_roll_match_tf():
    x = gt.reshape(gt.range(6), [2, 3])
    assert L(gt.reverse(x, [-1, 0])) == [[5, 4, 3], [2, 1, 0]]
    assert L(gt.roll(x, shift=[1, -1, 2], axis=[0, 1, 1])) == [[5, 3, 4], [2, 0, 1]]
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.reverse(x, [0, 0])
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.roll(x, [1, 2], [0])


def test_roll_with_a_shift_known_only_when_the_graph_runs():
    x = gt.reshape(gt.range(6.0), [2, 3])
    w = gt.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])

    @gt.function
    def f(t, shift):
        with gt.GradientTape() as tape:
            tape.watch(t)
            y = gt.roll(t, shift=shift, axis=[0, 1, 1])
            loss = gt.reduce_sum(y * w)
        return y, tape.gradient(loss, t)

    y, g = f(x, gt.constant([1, -1, 2]))
    assert L(y) == [[5.0, 3.0, 4.0], [2.0, 0.0, 1.0]]  # as the eager roll (TF's numbers above)
    assert L(g) == L(gt.roll(w, shift=[-1, 1, -2], axis=[0, 1, 1]))  # rolled back
    y, _ = f(x, gt.constant([0, 7, -3]))  # the same graph, other shifts; 4 mod 3 = 1
    assert L(y) == L(gt.roll(x, shift=1, axis=1))
    scalar = gt.function(lambda t, s: gt.roll(t, s, 0))
    assert L(scalar(gt.range(5), gt.constant(-2, dtype=gt.int64))) == [2, 3, 4, 0, 1]
    with pytest.raises(gt.errors.InvalidArgumentError, match="same size"):
        f(x, gt.constant([1, 2]))


def test_meshgrid_and_sequence_mask_match_tf():
    X, Y, Z = gt.meshgrid([1, 2], [3, 4, 5], [6, 7, 8, 9])
    assert [tuple(t.shape) for t in (X, Y, Z)] == [(3, 2, 4)] * 3
    assert L(X[:, :, 0]) == [[1, 2], [1, 2], [1, 2]]
    A, B = gt.meshgrid([1, 2], [3, 4, 5], indexing="ij")
    assert L(B) == [[3, 4, 5], [3, 4, 5]]
    with pytest.raises(ValueError):
        gt.meshgrid([1], indexing="xyz")
    assert L(gt.sequence_mask([[1, 3], [2, 0]])) == [
        [[True, False, False], [True, True, True]],
        [[True, True, False], [False, False, False]],
    ]
    assert L(gt.sequence_mask([2], 3, dtype=gt.float32)) == [[1.0, 1.0, 0.0]]
    with pytest.raises(TypeError):
        gt.sequence_mask([1.5])


def test_scatter_nd_and_tensor_scatter_match_tf():
    out = gt.scatter_nd([[0, 1], [1, 0], [0, 1]], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [2, 2, 2])
    assert L(out) == [[[0.0, 0.0], [6.0, 8.0]], [[3.0, 4.0], [0.0, 0.0]]]
    assert L(gt.tensor_scatter_nd_update(gt.zeros([2, 3]), [[0, 1], [1, 2]], [5.0, 6.0])) == [
        [0.0, 5.0, 0.0], [0.0, 0.0, 6.0]]
    # A repeated index: the last update wins; every update gets its gradient (TF's).
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    idx = [[0, 1], [1, 0], [0, 1]]
    assert L(gt.tensor_scatter_nd_update(a, idx, [10.0, 20.0, 30.0])) == [[1.0, 30.0], [20.0, 4.0]]
    w = gt.constant([[1.0, 2.0], [3.0, 4.0]], dtype=gt.float64)
    ga, gu = _grads(lambda t, u: gt.tensor_scatter_nd_update(t, idx, u) * w, a, np.array([10.0, 20.0, 30.0]))
    assert (L(ga), L(gu)) == ([[1.0, 0.0], [0.0, 4.0]], [2.0, 3.0, 2.0])
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.scatter_nd([[3]], [1.0], [3])
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.scatter_nd([[0]], [1.0, 2.0], [3])


def test_traced_tensor_scatter_update_with_repeated_indices_keeps_the_last():
    # As eagerly (TF's CPU kernel: the last update wins), with the indices known only
    # when the graph runs; slices (k < rank) and bool tensors too.
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    w = gt.constant([[1.0, 2.0], [3.0, 4.0]], dtype=gt.float64)

    @gt.function
    def f(t, idx, u):
        with gt.GradientTape() as tape:
            tape.watch([t, u])
            y = gt.tensor_scatter_nd_update(t, idx, u)
            s = gt.reduce_sum(y * w)
        return y, tape.gradient(s, [t, u])

    t = gt.constant(a)
    y, (ga, gu) = f(t, gt.constant([[0, 1], [1, 0], [0, 1]]), gt.constant([10.0, 20.0, 30.0], dtype=gt.float64))
    assert L(y) == [[1.0, 30.0], [20.0, 4.0]]
    assert (L(ga), L(gu)) == ([[1.0, 0.0], [0.0, 4.0]], [2.0, 3.0, 2.0])
    # Same signature, other indices: the same graph decides again.
    y, _ = f(t, gt.constant([[1, 1], [1, 1], [0, 0]]), gt.constant([10.0, 20.0, 30.0], dtype=gt.float64))
    assert L(y) == [[30.0, 2.0], [3.0, 20.0]]
    rows = gt.function(lambda t, i: gt.tensor_scatter_nd_update(t, i, [[5.0, 6.0], [7.0, 8.0]]))
    assert L(rows(gt.zeros([3, 2]), gt.constant([[2], [2]]))) == [[0.0, 0.0], [0.0, 0.0], [7.0, 8.0]]
    flags = gt.function(lambda i: gt.tensor_scatter_nd_update([False, False], i, [True, False]))
    assert L(flags(gt.constant([[0], [0]]))) == [False, False]
    assert L(gt.tensor_scatter_nd_update([False, False], [[0], [0]], [True, False])) == [False, False]


def test_tensor_scatter_max_min_share_ties_like_tf():
    t0, u0 = np.array([1.0, 2.0, 3.0]), np.array([2.0, 5.0, 2.0])
    assert L(gt.tensor_scatter_nd_max(t0, [[1], [1], [2]], u0)) == [1.0, 5.0, 3.0]
    gt_, gu = _grads(lambda t, u: gt.tensor_scatter_nd_max(t, [[1], [1], [2]], u), t0, u0)
    assert (L(gt_), L(gu)) == ([1.0, 0.0, 1.0], [0.0, 1.0, 0.0])
    w = gt.constant([1.0, 2.0, 3.0], dtype=gt.float64)
    t1, u1 = np.array([2.0, 2.0, 3.0]), np.array([2.0, 1.0])
    gt_, gu = _grads(lambda t, u: gt.tensor_scatter_nd_max(t, [[0], [2]], u) * w, t1, u1)
    assert (L(gt_), L(gu)) == ([0.5, 2.0, 3.0], [0.5, 0.0])
    assert L(gt.tensor_scatter_nd_min(t1, [[0], [0]], u1)) == [1.0, 2.0, 3.0]
    gt_, gu = _grads(lambda t, u: gt.tensor_scatter_nd_min(t, [[0], [0]], u) * w, t1, u1)
    assert (L(gt_), L(gu)) == ([0.0, 2.0, 3.0], [0.0, 1.0])


def test_strided_slice_masks_match_tf():
    r = gt.reshape(gt.range(24), [2, 3, 4])
    assert L(gt.strided_slice(r, [0, 0, 3], [2, 3, 0], [1, 2, -1])) == [
        [[3, 2, 1], [11, 10, 9]], [[15, 14, 13], [23, 22, 21]]]
    assert L(gt.strided_slice(r, [1, 0], [2, 2], [1, 1], shrink_axis_mask=1)) == [
        [12, 13, 14, 15], [16, 17, 18, 19]]
    assert L(gt.strided_slice(r, [0, 1], [0, 3], [1, 1], ellipsis_mask=1)) == [
        [[1, 2], [5, 6], [9, 10]], [[13, 14], [17, 18], [21, 22]]]
    assert tuple(gt.strided_slice(r, [0, 0, 1], [1, 0, 3], [1, 1, 1], new_axis_mask=2).shape) == (1, 1, 2, 4)
    assert L(gt.strided_slice(r, [1, 0, 0], [0, 2, 0], [1, 1, 1], begin_mask=1, end_mask=5)) == [
        [[0, 1, 2, 3], [4, 5, 6, 7]], [[12, 13, 14, 15], [16, 17, 18, 19]]]
    with pytest.raises(ValueError):
        gt.strided_slice(r, [0], [1, 2])


def test_reverse_sequence_and_unravel_index_match_tf():
    assert L(gt.reverse_sequence(gt.reshape(gt.range(12), [3, 4]), [4, 0, 2], seq_axis=1, batch_axis=0)) == [
        [3, 2, 1, 0], [4, 5, 6, 7], [9, 8, 10, 11]]
    assert L(gt.reverse_sequence(gt.reshape(gt.range(12), [4, 3]), [1, 3, 2], seq_axis=0, batch_axis=1)) == [
        [0, 7, 5], [3, 4, 2], [6, 1, 8], [9, 10, 11]]
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.reverse_sequence(gt.ones([2, 3]), [4, 1], seq_axis=1)
    assert L(gt.unravel_index(7, [3, 4])) == [1, 3]
    assert L(gt.unravel_index([2, 5, 7], [3, 3])) == [[0, 1, 2], [2, 2, 1]]
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.unravel_index(12, [3, 4])


def test_shape_helpers_match_tf():
    assert str(gt.broadcast_static_shape(gt.TensorShape([None, 1, 3]), gt.TensorShape([4, 1]))) == "(None, 4, 3)"
    with pytest.raises(ValueError):
        gt.broadcast_static_shape(gt.TensorShape([2, 3]), gt.TensorShape([4]))
    assert L(gt.broadcast_dynamic_shape([2, 1, 3], [4, 1])) == [2, 4, 3]
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.broadcast_dynamic_shape([2, 3], [4])
    assert L(gt.shape_n([gt.ones([2, 3]), gt.ones([4])])) == [[2, 3], [4]]
    assert gt.shape_n([gt.ones([1])], out_type=gt.int64)[0].dtype == gt.int64
    assert L(gt.identity_n([[1.0], 2.0])) == [[1.0], 2.0]
    assert L(gt.parallel_stack([[1, 2], [3, 4]])) == [[1, 2], [3, 4]]


def test_division_helpers_match_tf():
    assert L(gt.truncatediv([-7.0, 7.5, -0.5], [2.0, -2.0, 3.0])) == [-3.0, -3.0, -0.0]
    assert L(gt.truncatemod([-7.0, 7.5, -0.5], [2.0, -2.0, 3.0])) == [-1.0, 1.5, -0.5]
    assert L(gt.truncatediv([-7, 7, 6], [2, -2, -4])) == [-3, -3, -1]
    assert L(gt.truncatemod([-7, 7, 6], [2, -2, -4])) == [-1, 1, 2]
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.truncatediv([1], [0])
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.realdiv(gt.constant([7]), gt.constant([2]))  # no integer RealDiv kernel
    x = gt.constant([3.0, -4.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.truncatediv(x, 2.0) + gt.truncatemod(x, 2.0)
    assert tape.gradient(y, x) is None  # TF: None (TruncateDiv), unregistered (TruncateMod)


def test_saturate_cast_matches_tf():
    assert L(gt.saturate_cast([-3e10, 3e10, 1.5], gt.int32)) == [-2147483648, 2147483520, 1]
    assert L(gt.saturate_cast([-1e6, 7e4, 1.5], gt.float16)) == [-65504.0, 65504.0, 1.5]
    assert L(gt.saturate_cast([-300, 300, 7], gt.int8)) == [-128, 127, 7]
    assert L(gt.saturate_cast([-5.0, 300.0, 20.5], "uint8")) == [0, 255, 20]
    (g,) = _grads(lambda t: gt.saturate_cast(t, gt.float16), np.array([-1e6, 2.0], np.float32))
    assert L(g) == [0.0, 1.0]


def test_space_depth_batch_moves_match_tf():
    s2d = gt.nn.space_to_depth(gt.reshape(gt.range(32), [1, 4, 4, 2]), 2)
    assert L(s2d) == [[[[0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15]],
                       [[16, 17, 18, 19, 24, 25, 26, 27], [20, 21, 22, 23, 28, 29, 30, 31]]]]
    assert L(gt.nn.depth_to_space(gt.reshape(gt.range(16), [1, 1, 2, 8]), 2)) == [
        [[[0, 1], [2, 3], [8, 9], [10, 11]], [[4, 5], [6, 7], [12, 13], [14, 15]]]]
    assert L(gt.space_to_batch_nd(gt.reshape(gt.range(12), [1, 2, 3, 2]), [2, 2], [[0, 0], [0, 1]])) == [
        [[[0, 1], [4, 5]]], [[[2, 3], [0, 0]]], [[[6, 7], [10, 11]]], [[[8, 9], [0, 0]]]]
    assert L(gt.batch_to_space(gt.reshape(gt.range(16), [4, 2, 2, 1]), [2, 2], [[0, 1], [1, 0]])) == [
        [[[4], [1], [5]], [[12], [9], [13]], [[6], [3], [7]]]]
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.nn.space_to_depth(gt.ones([1, 3, 4, 1]), 2)


def test_scan_matches_tf_eager_and_traced_with_gradients():
    out = gt.scan(lambda a, x: a * 2 + x, gt.constant([1.0, 2.0, 3.0]), initializer=gt.constant(1.0))
    assert L(out) == [3.0, 8.0, 19.0]
    assert L(gt.scan(lambda a, x: a + x, gt.constant([1.0, 2.0, 3.0]), reverse=True)) == [6.0, 5.0, 3.0]
    out = gt.scan(lambda a, x: (a[0] + x, a[1] * x), gt.constant([1.0, 2.0, 3.0]),
                  initializer=(gt.constant(0.0), gt.constant(1.0)))
    assert isinstance(out, tuple) and L(out) == [[1.0, 3.0, 6.0], [1.0, 2.0, 6.0]]

    def loss(x):
        return gt.reduce_sum(gt.scan(lambda a, v: a * v, x))

    x = gt.constant([1.0, 2.0, 3.0])
    for f in (loss, gt.function(loss)):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        assert L(tape.gradient(y, x)) == [9.0, 4.0, 2.0]


# ----------------------------------------------------------------------------- linalg


def test_set_diag_off_the_main_diagonal_and_bands_follow_tf_docs():
    # The examples of TF 2.21's tf.linalg.set_diag docstring (inputs and printed outputs).
    x = np.full((2, 3, 4), 7, np.int32)
    diag = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    assert L(gt.linalg.set_diag(x, diag, k=1)) == [
        [[7, 1, 7, 7], [7, 7, 2, 7], [7, 7, 7, 3]], [[7, 4, 7, 7], [7, 7, 5, 7], [7, 7, 7, 6]]]
    band = np.array([[[0, 9, 1], [6, 5, 8], [1, 2, 3], [4, 5, 0]],
                     [[0, 1, 2], [5, 6, 4], [6, 1, 2], [3, 4, 0]]], np.int32)
    want = [[[1, 6, 9, 7], [4, 2, 5, 1], [7, 5, 3, 8]], [[6, 5, 1, 7], [3, 1, 6, 2], [7, 4, 2, 4]]]
    assert L(gt.linalg.set_diag(x, band, k=(-1, 2))) == want
    band_lr = np.array([[[9, 1, 0], [6, 5, 8], [1, 2, 3], [0, 4, 5]],
                        [[1, 2, 0], [5, 6, 4], [6, 1, 2], [0, 3, 4]]], np.int32)
    assert L(gt.linalg.set_diag(x, band_lr, k=(-1, 2), align="LEFT_RIGHT")) == want
    # k as a tensor; a one-element pair is a single diagonal.
    assert L(gt.linalg.set_diag(x, diag, k=gt.constant([1, 1]))) == L(gt.linalg.set_diag(x, diag, k=1))
    # Gradients: the matrix keeps the incoming one off the band, the packed diagonals
    # take theirs at the band's entries (zero at the padding entries).
    a = gt.constant(np.zeros((3, 4)))
    d = gt.constant(np.ones((4, 3)))
    dy = gt.constant(np.arange(12.0).reshape(3, 4))
    with gt.GradientTape() as tape:
        tape.watch([a, d])
        y = gt.linalg.set_diag(a, d, k=(-1, 2))
    ga, gd = tape.gradient(y, [a, d], output_gradients=dy)
    assert L(ga) == [[0.0] * 3 + [3.0], [0.0] * 4, [8.0, 0.0, 0.0, 0.0]]
    # RIGHT_LEFT: diagonal 2 (length 2) sits right, -1 (length 2) left, 0 and 1 full.
    assert L(gd) == [[0.0, 2.0, 7.0], [1.0, 6.0, 11.0], [0.0, 5.0, 10.0], [4.0, 9.0, 0.0]]


@pytest.mark.parametrize("call, match", [
    (lambda: gt.linalg.set_diag(gt.zeros([3, 4]), gt.zeros([3]), k=(2, 1)), "must not be larger"),
    (lambda: gt.linalg.set_diag(gt.zeros([3, 4]), gt.zeros([3]), k=4), "out of bound"),
    (lambda: gt.linalg.set_diag(gt.zeros([3, 4]), gt.zeros([3]), k=-3), "out of bound"),
    (lambda: gt.linalg.set_diag(gt.zeros([3, 4]), gt.zeros([2]), k=1), "shape"),
    (lambda: gt.linalg.set_diag(gt.zeros([3, 4]), gt.zeros([3, 3]), k=(0, 1)), "shape"),
    (lambda: gt.linalg.set_diag(gt.zeros([3, 4]), gt.zeros([3]), k=[0, 1, 2]), "1 or 2"),
    (lambda: gt.linalg.set_diag(gt.zeros([4]), gt.zeros([4])), "2-dim"),
])
def test_set_diag_errors(call, match):
    with pytest.raises(gt.errors.InvalidArgumentError, match=match):
        call()
    with pytest.raises(ValueError, match="align"):
        gt.linalg.set_diag(gt.zeros([2, 2]), gt.zeros([2]), align="LEFT")


def test_linalg_compositions_match_tf():
    A = gt.reshape(gt.range(16, dtype=gt.float32), [4, 4])
    assert L(gt.linalg.band_part(A, 1, -1)) == [
        [0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [0.0, 9.0, 10.0, 11.0], [0.0, 0.0, 14.0, 15.0]]
    assert L(gt.linalg.set_diag(gt.zeros([3, 2]), [1.0, 2.0])) == [[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]]
    assert L(gt.linalg.set_diag(gt.ones([2, 2, 3]), [[1.0, 2.0], [3.0, 4.0]])) == [
        [[1.0, 1.0, 1.0], [1.0, 2.0, 1.0]], [[3.0, 1.0, 1.0], [1.0, 4.0, 1.0]]]
    assert L(gt.linalg.cross([[1.0, 2.0, 3.0]], [[4.0, 5.0, 7.0]])) == [[-1.0, 5.0, -3.0]]
    n, r = gt.linalg.normalize([[3.0, 4.0], [6.0, 8.0]], ord=1)
    np.testing.assert_allclose(
        L(n), [[0.1428571492433548, 0.190476194024086], [0.2857142984867096, 0.380952388048172]], rtol=1e-7
    )
    assert L(r) == [[21.0]]
    M = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    np.testing.assert_allclose(float(gt.linalg.logdet(M)), 3.0582374789053883, rtol=1e-14)
    (g,) = _grads(gt.linalg.logdet, M)
    np.testing.assert_allclose(L(g), [
        [0.2799436355096289, -0.08924377642085486, -0.06106153123532173],
        [-0.08924377642085486, 0.36402066697980273, -0.014091122592766557],
        [-0.06106153123532173, -0.014091122592766557, 0.516674495068107]], rtol=1e-12)
    np.testing.assert_allclose(L(gt.linalg.pinv(np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 1.0]]))), [
        [-0.04, -0.08, 0.4], [0.12, 0.24, -0.2]], atol=1e-14)
    assert L(gt.linalg.pinv(gt.constant([[2.0, 0.0], [0.0, 0.0]]))) == [[0.5, 0.0], [0.0, 0.0]]
    rank = gt.linalg.matrix_rank(gt.constant([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 0.0]]))
    assert (int(rank), rank.dtype) == (2, gt.int32)
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.linalg.cross([1.0, 2.0], [3.0, 4.0])


# ----------------------------------------------------------------------------- nn


def test_nn_compositions_match_tf():
    assert L(gt.nn.bias_add(gt.zeros([1, 2, 2]), [1.0, 2.0], data_format="NCW")) == [[[1.0, 1.0], [2.0, 2.0]]]
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.nn.bias_add(gt.zeros([2, 3]), [1.0, 2.0])
    xm = gt.constant([[1.0, 2.0], [3.0, 6.0]])
    assert L(gt.nn.moments(xm, axes=[0], keepdims=True)) == [[[2.0, 4.0]], [[1.0, 4.0]]]
    wm = gt.constant([[1.0, 3.0], [0.0, 0.0]])
    assert L(gt.nn.weighted_moments(xm, [1], wm)) == [[1.75, 0.0], [0.1875, 0.0]]
    nm = gt.nn.normalize_moments(gt.constant(4.0), gt.constant(2.0), gt.constant(10.0), gt.constant(1.0))
    assert L(nm) == [1.5, 2.25]
    np.testing.assert_allclose(L(gt.nn.batch_normalization(
        gt.constant([[1.0, 2.0], [3.0, 6.0]]), gt.constant([2.0, 4.0]), gt.constant([1.0, 4.0]),
        gt.constant([0.5, 0.0]), gt.constant([2.0, 1.0]), 1e-3)),
        [[-1.4990007877349854, -0.9998750686645508], [2.4990010261535645, 0.9998750686645508]], rtol=1e-6)
    cr = gt.nn.crelu(gt.constant([[1.0, -2.0], [0.0, 3.0]]), axis=0)
    assert L(cr) == [[1.0, 0.0], [0.0, 3.0], [0.0, 2.0], [0.0, 0.0]]
    np.testing.assert_allclose(L(gt.nn.weighted_cross_entropy_with_logits(
        gt.constant([0.0, 1.0, 0.5]), gt.constant([-2.0, 3.0, 0.7]), 3.0)),
        [0.12692809104919434, 0.14576205611228943, 1.1563720703125], rtol=1e-6)
    np.testing.assert_allclose(L(gt.nn.log_poisson_loss(
        gt.constant([0.0, 0.5, 2.0, 5.0]), gt.constant([0.1, -1.0, 0.5, 2.0]), compute_full_loss=True)),
        [1.1051709651947021, 0.8678794503211975, 1.3005276918411255, 2.1599035263061523], rtol=1e-6)
    assert float(gt.nn.compute_average_loss(gt.constant([1.0, 2.0, 3.0, 4.0]),
                                            sample_weight=gt.constant([1.0, 0.0, 2.0, 1.0]))) == 2.75
    with pytest.raises(ValueError):
        gt.nn.compute_average_loss(gt.constant(1.0))
    lx = np.arange(1.0, 9.0, dtype=np.float32).reshape(1, 1, 2, 4) / 4.0
    lrn = gt.nn.local_response_normalization(lx, depth_radius=1, bias=2.0, alpha=0.5, beta=0.75)
    np.testing.assert_allclose(L(lrn), [[[[
        0.14049655199050903, 0.2563076317310333, 0.336946964263916, 0.4643227756023407], [
        0.44987308979034424, 0.42125189304351807, 0.4222949147224426, 0.5545140504837036]]]], rtol=1e-6)
    w = gt.reshape(gt.range(8.0), [1, 1, 2, 4])
    (g,) = _grads(lambda t: gt.nn.lrn(t, 1, 2.0, 0.5, 0.75) * w, lx)
    np.testing.assert_allclose(L(g), [[[[
        -0.019715972244739532, 0.3862292766571045, 0.4272223711013794, 0.843428373336792], [
        0.6445673704147339, 0.02189844846725464, -0.4812129735946655, 0.3171718120574951]]]], rtol=1e-5, atol=1e-6)
    (g,) = _grads(lambda t: (lambda m, v: gt.reduce_sum(m * gt.constant([1.0, 2.0]) + v * gt.constant([3.0, 5.0])))(
        *gt.nn.moments(t, [0])), np.array([[0.5, 1.5], [2.0, -1.0]], np.float32))
    assert L(g) == [[-1.75, 7.25], [2.75, -5.25]]


# ----------------------------------------------------------------------------- utilities


def test_executing_eagerly_is_false_while_tracing():
    seen = []

    @gt.function
    def f(x):
        seen.append(gt.executing_eagerly())
        return x + 1

    f(gt.constant(1.0))
    assert gt.executing_eagerly() is True and seen == [False]


def test_small_utilities():
    from gradtape._indexed_slices import IndexedSlices

    assert gt.is_tensor(gt.constant(1.0)) and gt.is_tensor(gt.Variable(1.0))
    assert gt.is_tensor(IndexedSlices(gt.ones([1]), gt.constant([0]), [2]))
    assert not gt.is_tensor(np.ones(2)) and not gt.is_tensor(1.0)
    assert gt.no_op() is None and gt.group(gt.constant(1.0)) is None
    with pytest.raises(TypeError):
        gt.group(foo=1)
    with gt.control_dependencies([gt.constant(1.0)]):
        assert float(gt.constant(2.0) + 1) == 3.0
    with pytest.raises(TypeError):
        with gt.control_dependencies(gt.constant(1.0)):
            pass
    assert gt.get_current_name_scope() == ""
    with gt.name_scope("a"):
        with gt.name_scope("b"):
            assert gt.get_current_name_scope() == "a/b"
    assert gt.as_dtype("float64") is gt.float64
    assert gt.zeros_initializer is gt.initializers.Zeros
    assert L(gt.constant_initializer(2.0)((2,), gt.float32)) == [2.0, 2.0]
    assert L(gt.ones_initializer()((1,))) == [1.0]
    assert gt.random_normal_initializer is gt.initializers.RandomNormal
    assert gt.random_uniform_initializer is gt.initializers.RandomUniform


def test_ensure_shape_and_asserts():
    x = gt.constant([[1.0, 2.0, 3.0]])
    assert L(gt.ensure_shape(x, [None, 3])) == [[1.0, 2.0, 3.0]]
    assert L(gt.ensure_shape(x, gt.TensorShape([1, None]))) == [[1.0, 2.0, 3.0]]
    msg = r"Shape of tensor x \[1,3\] is not compatible with expected shape \[\?,2\]"
    with pytest.raises(gt.errors.InvalidArgumentError, match=msg):
        gt.ensure_shape(x, [None, 2])
    (g,) = _grads(lambda t: gt.ensure_shape(t, [2]) * 3.0, np.array([1.0, 2.0]))
    assert L(g) == [3.0, 3.0]
    assert gt.assert_equal([1, 2], [1, 2]) is None
    assert gt.debugging.assert_less(1, [2, 3]) is None
    assert gt.assert_greater([2, 3], 1) is None
    assert gt.assert_rank(x, 2) is None
    with pytest.raises(gt.errors.InvalidArgumentError, match="oops"):
        gt.assert_equal([1, 2], [1, 3], message="oops")
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.assert_less([1, 3], 2)
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.debugging.assert_greater(0, 0)
    with pytest.raises(ValueError, match="must have rank 1"):
        gt.debugging.assert_rank(x, 1)


def test_asserts_inside_a_function_check_every_call():
    # TF: the checks are Assert nodes of the graph, run at each call with the call's
    # values (not at trace time only).
    traces = []

    @gt.function
    def f(x, y):
        traces.append(1)
        gt.debugging.assert_less(x, 3.0, message="x too big")
        gt.assert_equal(y, x, message="y differs")
        gt.assert_greater(x, [0.0, -1.0])
        return x * 2.0

    ok = gt.constant([1.0, 2.0])
    assert L(f(ok, ok)) == [2.0, 4.0]
    with pytest.raises(gt.errors.InvalidArgumentError, match="x too big"):
        f(gt.constant([1.0, 5.0]), gt.constant([1.0, 5.0]))
    with pytest.raises(gt.errors.InvalidArgumentError, match="y differs"):
        f(ok, gt.constant([1.0, 2.5]))
    with pytest.raises(gt.errors.InvalidArgumentError, match=r"x > y did not hold"):
        f(gt.constant([0.0, 2.0]), gt.constant([0.0, 2.0]))
    assert len(traces) == 1  # one graph: the failures came from its calls
    assert L(f(ok, ok)) == [2.0, 4.0]
    # Shapes that cannot broadcast: TF's static ValueError, while tracing too.
    with pytest.raises(ValueError, match="incompatible"):
        gt.function(lambda x: gt.assert_equal(x, [1.0, 2.0, 3.0]))(ok)


def test_gradients_raises_tfs_eager_error():
    with pytest.raises(RuntimeError, match="tf.gradients is not supported when eager execution is enabled"):
        gt.gradients(gt.constant(1.0), gt.constant(1.0))

    @gt.function
    def f(x):
        return gt.gradients(x, x)

    with pytest.raises(RuntimeError, match="GradientTape"):
        f(gt.constant(1.0))


def test_no_gradient_gives_none_under_an_override():
    gt.no_gradient("I14eSquareNoGrad")
    with pytest.raises(KeyError):
        gt.no_gradient("I14eSquareNoGrad")
    x = gt.constant(3.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        with gt.gradient_override_map({"Square": "I14eSquareNoGrad"}):
            y = gt.square(x)
    assert tape.gradient(y, x) is None


def test_nest_module():
    assert gt.nest.flatten({"b": [1, 2], "a": 3}) == [3, 1, 2]
    assert gt.nest.pack_sequence_as((0, [0]), [5, 6]) == (5, [6])
    assert gt.nest.map_structure(lambda a, b: a + b, [1, (2,)], [10, (20,)]) == [11, (22,)]
    assert gt.nest.is_nested([1]) and not gt.nest.is_nested(gt.constant(1.0))
    gt.nest.assert_same_structure([1, (2, 3)], ["a", ("b", "c")])
    with pytest.raises(ValueError):
        gt.nest.assert_same_structure([1, 2], [1])
    with pytest.raises(TypeError):
        gt.nest.assert_same_structure([1, 2], (1, 2))
    gt.nest.assert_same_structure([1, 2], (1, 2), check_types=False)


def test_conv1d_transpose_matches_tf():
    x = gt.reshape(gt.range(1.0, 7.0), [1, 3, 2])
    w = gt.reshape(gt.range(1.0, 13.0), [3, 2, 2]) / 10
    want_same = [[[0.5, 1.1], [1.7, 2.3], [4.0, 6.0], [3.9, 5.3], [8.4, 12.0], [6.1, 8.3]]]
    np.testing.assert_allclose(L(gt.nn.conv1d_transpose(x, w, [1, 6, 2], 2, "SAME")), want_same, rtol=1e-6)
    want_valid = [[[0.5, 1.1], [2.8, 4.8], [8.5, 12.7], [12.8, 16.4], [10.5, 12.7]]]
    np.testing.assert_allclose(L(gt.nn.conv1d_transpose(x, w, [1, 5, 2], [1], "VALID")), want_valid, rtol=1e-6)
    want_dil = [[[0.5, 1.1], [1.1, 2.5], [3.4, 6.2], [3.9, 5.3], [9.0, 11.8], [6.7, 8.1], [10.5, 12.7]]]
    got = gt.nn.conv1d_transpose(x, w, [1, 7, 2], [1, 1, 1], "VALID", dilations=2)
    np.testing.assert_allclose(L(got), want_dil, rtol=1e-6)
    with pytest.raises(ValueError):
        gt.nn.conv1d_transpose(x, w, [1, 6, 2], [2, 2], "SAME")


def test_control_dependencies_in_a_trace_sees_effects_in_program_order():
    v = gt.Variable(1.0)
    seen = []

    @gt.function
    def f(x):
        a = v.assign_add(x)
        with gt.control_dependencies([a]):
            seen.append(gt.executing_eagerly())
            out = v.read_value() * 2.0
        return out

    assert float(f(gt.constant(2.0))) == 6.0
    assert float(f(gt.constant(2.0))) == 10.0  # the traced graph reads after the assign
    assert seen == [False]
