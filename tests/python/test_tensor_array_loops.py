"""gt.TensorArray as a loop variable of graph loops in a gt.function (issue 16): the
AutoGraph ``for i in gt.range(n)`` / ``while`` on a tensor and ``gt.while_loop``, with
write / read / stack / unstack / size across iterations, dynamic_size, element_shape,
and gradients through it. The RNN is the loop of TF's "Better performance with
tf.function" guide; its numbers are TF 2.21's for the same weights and inputs."""

import numpy as np
import pytest

import gradtape as gt


def test_guide_dynamic_array_in_a_tensor_for_loop():
    @gt.function
    def f(x):
        ta = gt.TensorArray(gt.float32, size=0, dynamic_size=True)
        for i in gt.range(len(x)):
            ta = ta.write(i, x[i] * 2.0)
        return ta.stack()

    for n in (3, 5, 1):
        x = np.arange(n, dtype=np.float32) + 0.5
        np.testing.assert_array_equal(f(gt.constant(x)).numpy(), x * 2)


def test_tensor_for_loop_over_a_tensor_with_vector_elements():
    @gt.function
    def f(x):
        ta = gt.TensorArray(gt.float32, size=0, dynamic_size=True, element_shape=[2])
        s = gt.zeros([2])
        for row in x:  # a loop over a tensor's rows
            s = s + row
            ta = ta.write(ta.size(), s)
        return ta.stack(), ta.size()

    x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
    out, n = f(gt.constant(x))
    np.testing.assert_array_equal(out.numpy(), np.cumsum(x, axis=0))
    assert int(n) == 3


def test_fixed_size_from_a_tensor_and_reads_of_earlier_iterations():
    @gt.function
    def fib(n):
        ta = gt.TensorArray(gt.int64, size=n)
        ta = ta.write(0, gt.constant(0, gt.int64))
        ta = ta.write(1, gt.constant(1, gt.int64))
        for i in gt.range(2, n):
            ta = ta.write(i, ta.read(i - 1) + ta.read(i - 2))
        return ta.stack()

    assert fib(gt.constant(10)).numpy().tolist() == [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]
    assert fib(gt.constant(4)).numpy().tolist() == [0, 1, 1, 2]


def test_while_on_a_tensor_and_unstack_read():
    @gt.function
    def running_max(x):
        inp = gt.TensorArray(gt.float32, size=0, dynamic_size=True).unstack(x)
        out = gt.TensorArray(gt.float32, size=0, dynamic_size=True)
        i = gt.constant(0)
        m = gt.constant(-np.inf)
        while i < inp.size():
            m = gt.maximum(m, inp.read(i))
            out = out.write(i, m)
            i += 1
        return out.stack()

    x = np.array([1.0, 3.0, 2.0, 5.0, 4.0], np.float32)
    np.testing.assert_array_equal(running_max(gt.constant(x)).numpy(), np.maximum.accumulate(x))


def test_gt_while_loop_with_an_array_and_unwritten_elements_are_zeros():
    def body(i, ta):
        return i + 2, ta.write(i, gt.cast(i, gt.float32) * 10.0)

    @gt.function
    def f(n):
        ta = gt.TensorArray(gt.float32, size=n, element_shape=())
        _, ta = gt.while_loop(lambda i, ta: i < n, body, (gt.constant(0), ta))
        return ta.stack()

    assert f(gt.constant(5)).numpy().tolist() == [0.0, 0.0, 20.0, 0.0, 40.0]


def _rnn_data():
    rng = np.random.default_rng(0)
    x = np.round(rng.normal(size=(2, 4, 3)), 2).astype(np.float32)
    w = np.round(rng.normal(size=(3, 5)) * 0.5, 2).astype(np.float32)
    u = np.round(rng.normal(size=(5, 5)) * 0.5, 2).astype(np.float32)
    return x, w, u


# TF 2.21 on the guide's loop with these weights: the loss and the gradients.
RNN_LOSS = 8.703163146972656
RNN_GW = [[7.455912, 10.10542, -1.698224, -4.908781, -3.987311],
          [1.097167, 0.8434401, 0.7625282, -2.817622, -0.7293157],
          [1.778567, 3.564255, -0.8252097, -0.05305886, -0.6077911]]
RNN_GU = [[0.5459051, -0.6397895, 0.784564, 1.602215, 1.698817],
          [-0.473573, -0.9602528, 1.539821, -1.61829, -0.3573931],
          [0.7551325, 1.548538, -3.501005, 0.2954373, -1.697635],
          [-0.4325327, 0.04115146, -2.173021, -0.3586672, -2.385685],
          [0.9820784, 0.3636955, -1.416654, 0.3708968, -0.4646075]]


@pytest.mark.parametrize("traced", [True, False])
def test_guide_rnn_loop_and_its_gradients(traced):
    x, w0, u0 = _rnn_data()
    w, u = gt.Variable(w0), gt.Variable(u0)

    def rnn(input_data):
        input_data = gt.transpose(input_data, [1, 0, 2])
        timesteps = gt.shape(input_data)[0]
        batch_size = gt.shape(input_data)[1]
        outputs = gt.TensorArray(gt.float32, timesteps)
        state = gt.zeros([batch_size, 5])
        for i in gt.range(timesteps):
            state = gt.tanh(gt.matmul(input_data[i], w) + gt.matmul(state, u))
            outputs = outputs.write(i, state)
        return gt.transpose(outputs.stack(), [1, 0, 2]), state

    f = gt.function(rnn) if traced else rnn
    with gt.GradientTape() as tape:
        out, st = f(gt.constant(x))
        loss = gt.reduce_sum(out * out) + gt.reduce_sum(st)
    gw, gu = tape.gradient(loss, [w, u])
    # Forward: the loop unrolled in numpy.
    state = np.zeros((2, 5), np.float32)
    want = []
    for t in range(4):
        state = np.tanh(x[:, t] @ w0 + state @ u0)
        want.append(state)
    np.testing.assert_allclose(out.numpy(), np.stack(want, axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(loss), RNN_LOSS, rtol=1e-5)
    np.testing.assert_allclose(gw.numpy(), RNN_GW, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gu.numpy(), RNN_GU, rtol=1e-4, atol=1e-5)


def test_gradient_through_read_of_an_unstacked_array_in_a_loop():
    @gt.function
    def weighted(x):
        ta = gt.TensorArray(gt.float32, size=0, dynamic_size=True).unstack(x)
        acc = gt.constant(0.0)
        for i in gt.range(ta.size()):
            acc = acc + gt.cast(i + 1, gt.float32) * ta.read(i) ** 2
        return acc

    x = gt.constant([1.0, 2.0, 3.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = weighted(x)
    assert float(y) == 1 + 2 * 4 + 3 * 9
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [2.0, 8.0, 18.0])


def test_errors_in_graph_loops():
    @gt.function
    def shape_change(x):
        ta = gt.TensorArray(gt.float32, size=0, dynamic_size=True, element_shape=[2])
        for i in gt.range(gt.shape(x)[0]):
            ta = ta.write(i, x[i])
        return ta.stack()

    with pytest.raises(ValueError, match="element shape"):
        shape_change(gt.constant([1.0, 2.0, 3.0]))

    @gt.function
    def read_unwritten(n):
        ta = gt.TensorArray(gt.float32, size=0, dynamic_size=True)
        s = gt.constant(0.0)
        for i in gt.range(n):
            s = s + ta.read(i)
        return s

    with pytest.raises(gt.errors.InvalidArgumentError, match="no element was written"):
        read_unwritten(gt.constant(3))

    @gt.function
    def replaced(n):
        ta = gt.TensorArray(gt.float32, size=0, dynamic_size=True)
        for _ in gt.range(n):
            ta = gt.constant(1.0)
        return ta

    with pytest.raises(TypeError, match="TensorArray"):
        replaced(gt.constant(2))


def test_guide_dynamic_rnn_with_a_python_step_function():
    # The guide's `dynamic_rnn` verbatim (a static sequence length, a Python step).
    def rnn_step(inp, state):
        return inp + state

    @gt.function
    def dynamic_rnn(rnn_step, input_data, initial_state):
        input_data = gt.transpose(input_data, [1, 0, 2])
        max_seq_len = input_data.shape[0]
        states = gt.TensorArray(gt.float32, size=max_seq_len)
        state = initial_state
        for i in gt.range(max_seq_len):
            state = rnn_step(input_data[i], state)
            states = states.write(i, state)
        return gt.transpose(states.stack(), [1, 0, 2])

    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 10
    out = dynamic_rnn(rnn_step, gt.constant(x), gt.zeros([2, 4]))
    np.testing.assert_allclose(out.numpy(), np.cumsum(x, axis=1), rtol=1e-6)


def test_writes_under_an_if_in_a_graph_loop():
    @gt.function
    def positives(x):
        ta = gt.TensorArray(gt.float32, size=0, dynamic_size=True)
        for i in gt.range(gt.shape(x)[0]):
            if x[i] > 0:  # a gt.cond: one branch writes, the other keeps the array
                ta = ta.write(ta.size(), x[i])
        return ta.stack()

    assert positives(gt.constant([1.0, -2.0, 3.0, -1.0, 5.0])).numpy().tolist() == [1.0, 3.0, 5.0]
    assert positives(gt.constant([-1.0, 2.0])).numpy().tolist() == [2.0]

    @gt.function
    def alternate(x):
        ta = gt.TensorArray(gt.float32, size=gt.shape(x)[0])
        for i in gt.range(gt.shape(x)[0]):
            if i % 2 == 0:
                ta = ta.write(i, x[i] * 10.0)
            else:
                ta = ta.write(i, -x[i])
        return ta.stack()

    x = gt.constant([1.0, 2.0, 3.0, 4.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reduce_sum(alternate(x) * gt.constant([1.0, 2.0, 3.0, 4.0]))
    assert float(y) == 10 - 4 + 90 - 16
    assert tape.gradient(y, x).numpy().tolist() == [10.0, -2.0, 30.0, -4.0]


def test_gt_cond_returning_arrays():
    @gt.function
    def f(flag, v):
        ta = gt.TensorArray(gt.float32, size=2, element_shape=())
        ta = gt.cond(flag, lambda: ta.write(0, v), lambda: ta.write(1, v * 2.0))
        return ta.stack(), ta.size()

    out, n = f(gt.constant(True), gt.constant(3.0))
    assert out.numpy().tolist() == [3.0, 0.0] and int(n) == 2
    out, n = f(gt.constant(False), gt.constant(3.0))
    assert out.numpy().tolist() == [0.0, 6.0] and int(n) == 2

    @gt.function
    def mixed(flag):
        ta = gt.TensorArray(gt.float32, size=1, element_shape=())
        return gt.cond(flag, lambda: ta.write(0, 1.0), lambda: gt.constant([1.0]))

    # As TF's cond_v2: a TensorArray against a tensor is a TypeError naming both outputs.
    with pytest.raises(TypeError, match="same number, type, and overall structure"):
        mixed(gt.constant(True))

    @gt.function
    def mixed2(flag):
        ta = gt.TensorArray(gt.float32, size=1, element_shape=())
        return gt.cond(flag, lambda: ta.write(0, 1.0), lambda: (gt.constant([1.0]), gt.constant(1)))

    with pytest.raises(TypeError, match="same nested structure"):
        mixed2(gt.constant(True))
