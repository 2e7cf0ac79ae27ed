"""Issue 14's gt.function gaps: gt.IndexedSlices arguments, gt.one_hot with a depth
computed in the trace, and gt.while_loop outputs connected to every loop input (TF's
While: zero gradients where TF gives zeros, not None)."""

import numpy as np

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
