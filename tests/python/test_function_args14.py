"""Issue 14's gt.function gaps: gt.IndexedSlices arguments, gt.one_hot with a depth
computed in the trace, and gt.while_loop outputs connected to every loop input (TF's
While: zero gradients where TF gives zeros, not None), slices whose bounds are computed in
the trace, and the traced sort's NaN placement."""

import numpy as np
import pytest

import gradtape as gt


def test_indexed_slices_argument_is_rebuilt_in_the_trace_and_reused():
    traces = []

    @gt.function
    def f(s):
        traces.append(1)
        assert isinstance(s, gt.IndexedSlices)
        return gt.convert_to_tensor(s) * 2.0, s

    s = gt.IndexedSlices(gt.constant([[1.0, 2.0]]), gt.constant([1]), gt.constant([3, 2]))
    dense, back = f(s)
    np.testing.assert_array_equal(dense.numpy(), [[0.0, 0.0], [2.0, 4.0], [0.0, 0.0]])
    assert isinstance(back, gt.IndexedSlices)
    np.testing.assert_array_equal(back.values.numpy(), [[1.0, 2.0]])
    np.testing.assert_array_equal(back.indices.numpy(), [1])
    # Same component specs: the trace is reused with the new values.
    t = gt.IndexedSlices(gt.constant([[5.0, 6.0]]), gt.constant([2]), gt.constant([3, 2]))
    dense, _ = f(t)
    np.testing.assert_array_equal(dense.numpy(), [[0.0, 0.0], [0.0, 0.0], [10.0, 12.0]])
    assert len(traces) == 1


def test_indexed_slices_gradient_passed_to_a_function():
    v = gt.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with gt.GradientTape() as tape:
        y = gt.reduce_sum(gt.gather(v, [0, 2]))
    g = tape.gradient(y, v)
    assert isinstance(g, gt.IndexedSlices)

    @gt.function
    def apply(grad):
        v.assign_sub(gt.convert_to_tensor(grad))
        return v.read_value()

    np.testing.assert_array_equal(apply(g).numpy(), [[0.0, 1.0], [3.0, 4.0], [4.0, 5.0]])


def test_one_hot_depth_computed_in_the_trace():
    @gt.function
    def f(x, labels):
        return gt.one_hot(labels, gt.shape(x)[0] + 1)

    out = f(gt.zeros([2]), gt.constant([0, 2]))
    np.testing.assert_array_equal(out.numpy(), [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    out = f(gt.zeros([3]), gt.constant([3, 1]))
    np.testing.assert_array_equal(out.numpy(), [[0.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0]])

    @gt.function
    def g(labels, n):
        return gt.one_hot(labels, n * 2, on_value=5.0, off_value=-1.0, axis=0)

    np.testing.assert_array_equal(g(gt.constant([1]), gt.constant(1)).numpy(), [[-1.0], [5.0]])


def test_while_loop_outputs_connect_to_every_loop_input_in_a_function():
    # TF 2.21 in a tf.function: d a / d y = 0 and d b / d x = 0 (not None).
    @gt.function
    def f(x, y):
        with gt.GradientTape(persistent=True) as t:
            t.watch([x, y])
            _, a, b = gt.while_loop(
                lambda i, a, b: i < 3, lambda i, a, b: (i + 1, a * 2.0, b), [gt.constant(0), x, y]
            )
        return t.gradient(a, [x, y]), t.gradient(b, [x, y])

    (ax, ay), (bx, by) = f(gt.constant(2.0), gt.constant(3.0))
    assert float(ax) == 8.0 and float(ay) == 0.0
    assert float(bx) == 0.0 and float(by) == 1.0
    # Eagerly the loop is Python: unconnected stays None, as in TF.
    x, y = gt.constant(2.0), gt.constant(3.0)
    with gt.GradientTape() as t:
        t.watch([x, y])
        _, a, _ = gt.while_loop(lambda i, a, b: i < 3, lambda i, a, b: (i + 1, a * 2.0, b), [0, x, y])
    assert t.gradient(a, y) is None


def test_while_loop_with_a_python_condition_is_a_graph_loop_in_a_function():
    # In a tf.function, tf.while_loop builds a While even when the condition is a Python
    # value or the loop variables are Python numbers: its outputs are tensors, and a loop
    # variable the body replaces by a constant gets 0, not None. TF 2.21 printed
    # [2.0, 0.0, 5.0625, 13.5, 3, 3] and [4, 16.0] (one trace) for these two functions.
    @gt.function
    def f(x):
        with gt.GradientTape(persistent=True) as t:
            t.watch(x)
            i, v = gt.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, 2.0 * gt.ones_like(v)), [0, x])
            j, w = gt.while_loop(lambda j, w: True, lambda j, w: (j + 1, w * x), [0, x], maximum_iterations=3)
        return v, t.gradient(v, x), w, t.gradient(w, x), i, j

    v, dv, w, dw, i, j = f(gt.constant(1.5))
    assert isinstance(i, gt.Tensor) and i.dtype == gt.int32 and int(i) == 3 and int(j) == 3
    assert (float(v), float(dv), float(w), float(dw)) == (2.0, 0.0, 5.0625, 13.5)

    @gt.function
    def g(x):
        return gt.while_loop(lambda i, v: i < 4, lambda i, v: (i + 1, v * x), [0, gt.constant(1.0)])

    i, v = g(gt.constant(2.0))
    assert (int(i), float(v)) == (4, 16.0)
    # The loop runs when the graph runs: another value, no new trace.
    assert float(g(gt.constant(3.0))[1]) == 81.0
    assert g.experimental_get_tracing_count() == 1


def test_while_loop_zero_iterations_and_outer_tape_in_a_function():
    @gt.function
    def g(x, y, n):
        _, a, b = gt.while_loop(lambda i, a, b: i < n, lambda i, a, b: (i + 1, a * 2.0, b), [gt.constant(0), x, y])
        return a, b

    x, y = gt.constant(2.0), gt.constant(3.0)
    for n, da in [(3, 8.0), (0, 1.0)]:
        with gt.GradientTape(persistent=True) as t:
            t.watch([x, y])
            a, b = g(x, y, gt.constant(n))
        ax, ay = t.gradient(a, [x, y])
        bx, by = t.gradient(b, [x, y])
        assert (float(ax), float(ay), float(bx), float(by)) == (da, 0.0, 0.0, 1.0)


def test_slices_with_bounds_computed_in_a_function():
    # TF's StridedSlice reads begin/end/strides when the graph runs: x[:n], x[n - 1],
    # x[1:n:2], x[-n:], x[::s] and gt.strided_slice with traced vectors give the eager
    # values for every n, from one trace.
    x = gt.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    m = gt.reshape(gt.range(12.0), [3, 4])

    @gt.function
    def f(x, m, n, s):
        return (x[:n], x[n - 1], x[1:n:2], x[-n:], x[::s], m[:, :n], m[n - 2, 1:],
                gt.strided_slice(m, gt.stack([0, n - 2]), gt.stack([n - 1, n + 1]), [1, 1]))

    for n, s in [(3, 2), (4, -1), (2, 3)]:
        got = f(x, m, gt.constant(n), gt.constant(s))
        want = (x[:n], x[n - 1], x[1:n:2], x[-n:], x[::s], m[:, :n], m[n - 2, 1:], m[0:n - 1, n - 2:n + 1])
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_array_equal(g.numpy(), w.numpy())
    assert f.experimental_get_tracing_count() == 1
    with pytest.raises(gt.errors.InvalidArgumentError, match="step"):
        f(x, m, gt.constant(2), gt.constant(0))

    # Differentiable in x, traced as eagerly: the gradient lands on the first n.
    @gt.function
    def head_sum(x, n):
        return gt.reduce_sum(x[:n] * x[:n])

    with gt.GradientTape() as t:
        t.watch(x)
        y = head_sum(x, gt.constant(2))
    assert float(y) == 5.0
    np.testing.assert_array_equal(t.gradient(y, x).numpy(), [2.0, 4.0, 0.0, 0.0, 0.0, 0.0])


def test_a_function_slicing_by_a_computed_size_saves_and_loads(tmp_path):
    class Half(gt.Module):
        @gt.function(input_signature=[gt.TensorSpec([None], gt.float32)])
        def first_half(self, x):
            return x[: gt.shape(x)[0] // 2]

    gt.saved_model.save(Half(), tmp_path / "h")
    loaded = gt.saved_model.load(tmp_path / "h")
    np.testing.assert_array_equal(loaded.first_half(gt.constant([1.0, 2.0, 3.0, 4.0])).numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(loaded.first_half(gt.constant([5.0, 6.0, 7.0])).numpy(), [5.0])


def test_traced_sort_places_nans_as_the_eager_sort():
    # NaNs last in both directions, in their order; infinities before them (numpy's
    # order, which the eager sort uses: TF's own kernel leaves NaN placement to its
    # comparator). Traced and eager agree, also along a batch of rows and axis 0.
    x = gt.constant([1.0, np.nan, 0.0, -np.inf, np.nan, 2.0, np.inf])
    for d, order in [("ASCENDING", [3, 2, 0, 5, 6, 1, 4]), ("DESCENDING", [6, 5, 0, 2, 3, 1, 4])]:
        np.testing.assert_array_equal(gt.argsort(x, direction=d).numpy(), order)
        np.testing.assert_array_equal(gt.function(lambda x, d=d: gt.argsort(x, direction=d))(x).numpy(), order)
        np.testing.assert_array_equal(gt.function(lambda x, d=d: gt.sort(x, direction=d))(x).numpy(),
                                      x.numpy()[order])
    m = gt.constant([[3.0, np.nan, 1.0], [np.nan, -1.0, np.nan]])
    for axis in (-1, 0):
        np.testing.assert_array_equal(gt.function(lambda m, axis=axis: gt.argsort(m, axis=axis))(m).numpy(),
                                      gt.argsort(m, axis=axis).numpy())
    np.testing.assert_array_equal(gt.argsort(m).numpy(), [[2, 0, 1], [1, 0, 2]])


def test_strided_slice_with_a_list_of_traced_bounds():
    h = gt.function(lambda x, b: gt.strided_slice(x, [b], [b + 2]))
    x = gt.constant([1.0, 2.0, 3.0, 4.0, 5.0])
    np.testing.assert_array_equal(h(x, gt.constant(1)).numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(h(x, gt.constant(3)).numpy(), [4.0, 5.0])
    assert h.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("vals,dtype", [
    ([1, 1, 2, 4, 4, 4, 7, 8, 8], "int32"),
    ([3.0, np.nan, 3.0, np.nan, -1.0], "float32"),
    ([5], "int64"),
    ([], "float32"),
])
def test_unique_of_values_computed_in_a_function_equals_eager(vals, dtype):
    # TF's Unique: values in order of first appearance, each NaN a value of its own.
    x = gt.constant(np.array(vals, dtype=dtype))
    want = gt.unique_with_counts(x, out_idx=gt.int64)
    got = gt.function(lambda x: gt.unique_with_counts(x, out_idx=gt.int64))(x)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    if dtype == "float32" and vals:
        np.testing.assert_array_equal(want[2].numpy(), [2, 1, 1, 1])


def test_unique_in_a_function_of_any_length_saves_and_loads(tmp_path):
    class U(gt.Module):
        @gt.function(input_signature=[gt.TensorSpec([None], gt.int32)])
        def distinct(self, x):
            y, idx = gt.unique(x)
            return y, idx

    m = U()
    y, idx = m.distinct(gt.constant([4, 1, 4, 1, 0]))
    assert (y.numpy().tolist(), idx.numpy().tolist()) == ([4, 1, 0], [0, 1, 0, 1, 2])
    y, idx = m.distinct(gt.constant([7, 7]))  # another length, the same trace
    assert (y.numpy().tolist(), idx.numpy().tolist()) == ([7], [0, 0])
    gt.saved_model.save(m, tmp_path / "u")
    loaded = gt.saved_model.load(tmp_path / "u")
    y, idx = loaded.distinct(gt.constant([2, 2, 9]))
    assert (y.numpy().tolist(), idx.numpy().tolist()) == ([2, 9], [0, 0, 1])


def test_a_saved_sort_of_a_none_length_serves_every_length(tmp_path):
    class S(gt.Module):
        @gt.function(input_signature=[gt.TensorSpec([None], gt.float32)])
        def order(self, x):
            return gt.sort(x), gt.argsort(x, direction="DESCENDING")

    m = S()
    m.order(gt.constant([3.0, 1.0, 2.0]))
    gt.saved_model.save(m, tmp_path / "s")
    loaded = gt.saved_model.load(tmp_path / "s")
    v, i = loaded.order(gt.constant([5.0, np.nan, -1.0, 4.0, 0.5]))
    np.testing.assert_array_equal(v.numpy(), [-1.0, 0.5, 4.0, 5.0, np.nan])
    np.testing.assert_array_equal(i.numpy(), [0, 3, 4, 2, 1])
