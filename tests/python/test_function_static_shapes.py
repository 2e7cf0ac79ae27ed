"""Static shapes inside a trace: what `x.shape` says for sizes a signature leaves unknown.

TF's `tf.function` traces symbolically, so a dimension that is `None` in the input
signature is `None` in `x.shape` and in the static shape of everything computed from
it; gradtape traces by example and tells those dimensions apart by running each op on
inputs of another size as well.
"""

import numpy as np
import pytest

import gradtape as gt


def test_none_dimensions_follow_the_ops_of_the_trace():
    seen = {}

    @gt.function(input_signature=[gt.TensorSpec([None, 3], gt.float32)])
    def f(x):
        seen["x"] = x.shape
        y = gt.matmul(x, gt.ones([3, 4]))
        seen["matmul"] = y.shape
        seen["sum0"] = gt.reduce_sum(y, axis=0).shape
        seen["sum1"] = gt.reduce_sum(y, axis=1).shape
        seen["flat"] = gt.reshape(x, [-1]).shape
        seen["concat0"] = gt.concat([x, x], 0).shape
        seen["concat1"] = gt.concat([x, x], 1).shape
        seen["transpose"] = gt.transpose(x).shape
        seen["slice"] = x[:, 1:].shape
        seen["row"] = x[0].shape
        seen["expand"] = gt.expand_dims(x, 1).shape
        seen["scalar"] = gt.reduce_sum(x).shape
        seen["dynamic"] = gt.shape(x).shape
        return y

    np.testing.assert_array_equal(f(gt.ones([5, 3])).numpy(), np.full((5, 4), 3.0, np.float32))
    np.testing.assert_array_equal(f(gt.ones([7, 3])).numpy(), np.full((7, 4), 3.0, np.float32))
    assert f.experimental_get_tracing_count() == 1
    want = {
        "x": [None, 3],
        "matmul": [None, 4],
        "sum0": [4],
        "sum1": [None],
        "flat": [None],
        "concat0": [None, 3],
        "concat1": [None, 6],
        "transpose": [3, None],
        "slice": [None, 2],
        "row": [3],
        "expand": [None, 1, 3],
        "scalar": [],
        "dynamic": [2],
    }
    assert {k: v.as_list() for k, v in seen.items()} == want
    assert isinstance(seen["x"], gt.TensorShape)
    assert seen["x"] == gt.TensorShape([None, 3]) and seen["x"].rank == 2


def test_an_example_of_size_two_is_told_apart_too():
    # The second size a trace tries must differ from the example's whatever it is.
    seen = []

    def double(x):
        y = x * 2.0
        seen.append(y.shape.as_list())
        return y

    for n in (0, 1, 2, 3):
        f = gt.function(double, input_signature=[gt.TensorSpec([None], gt.float32)])
        np.testing.assert_array_equal(f(gt.ones([n])).numpy(), np.full(n, 2.0, np.float32))
        assert seen == [[None]], n
        seen.clear()


def test_unknown_rank_and_a_fully_known_signature():
    seen = []

    @gt.function(input_signature=[gt.TensorSpec(None, gt.float32)])
    def f(x):
        y = x + 1.0
        seen.append((x.shape.rank, y.shape.rank, str(y.shape)))
        # As TF: what follows the input's rank is unknown; what does not is known.
        seen.append(
            (
                gt.reduce_sum(x).shape.as_list(),
                gt.shape(x).shape.as_list(),
                gt.reduce_sum(x, axis=0).shape.rank,
                gt.expand_dims(x, 0).shape.rank,
                gt.reshape(x, [-1]).shape.as_list(),
            )
        )
        with pytest.raises(ValueError, match="unknown TensorShape"):
            y.shape.as_list()
        return y

    np.testing.assert_array_equal(f(gt.zeros([2, 3])).numpy(), np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(f(gt.zeros([4])).numpy(), np.ones(4, np.float32))
    np.testing.assert_array_equal(f(gt.constant(2.0)).numpy(), np.float32(3.0))
    assert f.experimental_get_tracing_count() == 1
    assert seen == [(None, None, "<unknown>"), ([], [None], None, None, [None])]
    assert f.get_concrete_function().output_shapes.rank is None

    # A scalar example too: its rank is not taken for the signature's.
    ranks = []

    @gt.function(input_signature=[gt.TensorSpec(None, gt.float32)])
    def h(x):
        ranks.append(((x * 2.0).shape.rank, gt.reduce_max(x).shape.rank))
        return x * 2.0

    np.testing.assert_array_equal(h(gt.constant(1.5)).numpy(), np.float32(3.0))
    np.testing.assert_array_equal(h(gt.ones([2, 2])).numpy(), np.full((2, 2), 2.0, np.float32))
    assert ranks == [(None, 0)]

    @gt.function(input_signature=[gt.TensorSpec([2, 3], gt.float32)])
    def g(x):
        seen.append(gt.matmul(x, x, transpose_b=True).shape.as_list())
        return x

    g(gt.zeros([2, 3]))
    assert seen[-1] == [2, 2]


def test_control_flow_keeps_unknown_sizes():
    seen = []

    @gt.function(input_signature=[gt.TensorSpec([None], gt.float32)])
    def f(x):
        def body(i, a):
            seen.append(("body", a.shape.as_list()))
            return i + 1, a * 2.0

        _, a = gt.while_loop(lambda i, a: i < 3, body, [gt.constant(0), x])
        seen.append(("loop", a.shape.as_list()))
        r = gt.cond(gt.reduce_sum(x) > 0, lambda: a + 1.0, lambda: a - 1.0)
        seen.append(("cond", r.shape.as_list()))
        return r

    np.testing.assert_array_equal(f(gt.ones([4])).numpy(), np.full(4, 9.0, np.float32))
    np.testing.assert_array_equal(f(-gt.ones([2])).numpy(), np.full(2, -9.0, np.float32))
    assert f.experimental_get_tracing_count() == 1
    assert seen == [("body", [None]), ("loop", [None]), ("cond", [None])]


def test_a_value_that_does_not_follow_the_unknown_size_is_known():
    v = gt.Variable(gt.ones([3, 2]))
    seen = []

    @gt.function(input_signature=[gt.TensorSpec([None, 3], gt.float32)])
    def f(x):
        w = v * 2.0
        seen.append(w.shape.as_list())
        return gt.matmul(x, w)

    f(gt.ones([4, 3]))
    f(gt.ones([6, 3]))
    assert seen == [[3, 2]]
    assert f.experimental_get_tracing_count() == 1


def test_an_unknown_size_cannot_be_used_as_a_number():
    @gt.function(input_signature=[gt.TensorSpec([None], gt.float32)])
    def zeros_like_rows(x):
        return gt.zeros([x.shape[0], 2])

    # TF's error for None where a size or tensor is wanted; gt.shape is the dynamic size.
    with pytest.raises(ValueError, match=r"Attempt to convert a value \(None\)"):
        zeros_like_rows(gt.ones([3]))

    @gt.function(input_signature=[gt.TensorSpec([None], gt.float32)])
    def rows(x):
        return gt.zeros(gt.stack([gt.shape(x)[0], 2]))

    assert rows(gt.ones([3])).shape == [3, 2]
    assert rows(gt.ones([5])).shape == [5, 2]
    assert rows.experimental_get_tracing_count() == 1


def test_a_size_baked_into_the_trace_is_the_static_shape():
    # A reshape to literal sizes: its static shape is those sizes, as in TF (and the
    # size only fits examples of that size).
    seen = []

    @gt.function(input_signature=[gt.TensorSpec([None], gt.float32)])
    def f(x):
        y = gt.reshape(x, [2, 3])
        seen.append(y.shape.as_list())
        return y

    assert f(gt.ones([6])).shape == [2, 3]
    assert seen == [[2, 3]]
    with pytest.raises(gt.errors.InvalidArgumentError):
        f(gt.ones([5]))


def test_layers_build_from_the_static_shape_and_trace_once():
    built = []

    class Scale(gt.keras.layers.Layer):
        def build(self, input_shape):
            built.append(list(input_shape))
            self.w = self.add_weight("w", (input_shape[-1],), "ones")

        def call(self, x):
            return x * self.w

    dense = gt.keras.layers.Dense(2, kernel_initializer="ones")
    scale = Scale()
    traces = []

    @gt.function(input_signature=[gt.TensorSpec([None, 3], gt.float32)])
    def f(x):
        traces.append(1)
        return dense(scale(x))

    np.testing.assert_array_equal(f(gt.ones([4, 3])).numpy(), np.full((4, 2), 3.0, np.float32))
    np.testing.assert_array_equal(f(gt.ones([5, 3])).numpy(), np.full((5, 2), 3.0, np.float32))
    assert built == [[None, 3]]
    # The layers read only sizes the signature knows: no trace per batch size. The first
    # trace built the layers' weights, so (as TF) it was traced once more.
    assert len(traces) == 2 and f.experimental_get_tracing_count() == 2
    f(gt.ones([7, 3]))
    assert len(traces) == 2


def test_relaxed_and_concrete_traces_see_unknown_sizes():
    seen = []

    @gt.function(reduce_retracing=True)
    def f(x):
        seen.append(x.shape.as_list())
        return x * 2.0

    f(gt.ones([2, 3]))
    f(gt.ones([4, 3]))
    assert seen == [[2, 3], [None, 3]]

    @gt.function
    def g(x):
        seen.append(x.shape.as_list())
        return x + 1.0

    c = g.get_concrete_function(gt.TensorSpec([None, 2], gt.float32))
    assert seen[-1] == [None, 2]
    np.testing.assert_array_equal(c(gt.zeros([3, 2])).numpy(), np.ones((3, 2), np.float32))


def test_gradients_inside_and_around_a_trace_with_unknown_sizes():
    w = gt.Variable([[1.0], [2.0]])
    seen = []

    @gt.function(input_signature=[gt.TensorSpec([None, 2], gt.float32)])
    def loss(x):
        with gt.GradientTape() as tape:
            y = gt.reduce_sum(gt.matmul(x, w) ** 2)
        g = tape.gradient(y, w)
        seen.append(g.shape.as_list())
        return y, g

    y, g = loss(gt.constant([[1.0, 1.0], [1.0, 0.0]]))
    assert float(y) == 10.0
    np.testing.assert_array_equal(g.numpy(), [[8.0], [6.0]])
    assert seen == [[2, 1]]
    x = gt.constant([[1.0, 2.0], [0.0, 1.0], [1.0, 0.0]])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y, _ = loss(x)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [[10.0, 20.0], [4.0, 8.0], [2.0, 4.0]])
    assert loss.experimental_get_tracing_count() == 1


def test_a_spec_from_a_traced_tensor_has_its_static_shape():
    specs = []

    @gt.function(input_signature=[gt.TensorSpec([None, 2], gt.float64)])
    def f(x):
        specs.append(gt.TensorSpec.from_tensor(x * 2.0))
        specs.append(gt.TensorSpec.from_tensor(gt.reduce_sum(x, 0)))
        return x

    f(gt.zeros([3, 2], gt.float64))
    assert specs == [gt.TensorSpec([None, 2], gt.float64), gt.TensorSpec([2], gt.float64)]
    assert gt.TensorSpec.from_tensor(gt.zeros([3, 2])) == gt.TensorSpec([3, 2], gt.float32)


def test_a_custom_gradient_keeps_the_static_shape_of_its_body():
    seen = []

    @gt.custom_gradient
    def clip_grad(x):
        def grad(dy):
            return gt.clip_by_value(dy, -1.0, 1.0)

        return x * 1.0, grad

    @gt.function(input_signature=[gt.TensorSpec([None, 2], gt.float32)])
    def f(x):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = clip_grad(x)
            seen.append(y.shape.as_list())
            loss = gt.reduce_sum(y * 3.0)
        return tape.gradient(loss, x)

    np.testing.assert_array_equal(f(gt.ones([3, 2])).numpy(), np.ones((3, 2), np.float32))
    np.testing.assert_array_equal(f(gt.ones([1, 2])).numpy(), np.ones((1, 2), np.float32))
    assert seen == [[None, 2]]


def test_a_symbolic_tensor_prints_as_tf_prints_a_graph_tensor(capsys):
    @gt.function(input_signature=[gt.TensorSpec([None, 3], gt.float32)])
    def f(x):
        y = gt.matmul(x, gt.ones([3, 4]))
        z = gt.matmul(y, gt.ones([4, 2]))
        print(x)
        print(repr(y))
        print(z)
        print(gt.reduce_sum(z))
        return z

    f(gt.ones([2, 3]))
    f(gt.ones([5, 3]))
    assert capsys.readouterr().out.splitlines() == [
        'Tensor("args_0:0", shape=(None, 3), dtype=float32)',
        "<gt.Tensor 'BatchMatMulV2:0' shape=(None, 4) dtype=float32>",
        'Tensor("BatchMatMulV2_1:0", shape=(None, 2), dtype=float32)',
        'Tensor("Sum:0", shape=(), dtype=float32)',
    ]
    # Printing binds the trace to no size; eager tensors print their values.
    assert f.experimental_get_tracing_count() == 1
    assert str(gt.constant([1.0])) == "gt.Tensor([1.], shape=(1,), dtype=float32)"
