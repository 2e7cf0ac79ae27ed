"""Everyday tensor behaviour real scripts hit: iteration, format(), gt.print,
gt.random.shuffle, gt.device, gt.init_scope, gt.py_function, gt.TensorArray."""

import numpy as np
import pytest

import gradtape as gt


def test_iterating_a_tensor():
    t = gt.constant([[1, 2], [3, 4], [5, 6]])
    rows = [r.numpy().tolist() for r in t]
    assert rows == [[1, 2], [3, 4], [5, 6]]
    assert len(list(t)) == 3
    assert [(i, int(r[0])) for i, r in enumerate(t)] == [(0, 1), (1, 3), (2, 5)]
    a, b = gt.constant([7.0, 8.0])
    assert float(a) == 7.0 and float(b) == 8.0
    assert list(gt.zeros([0, 2])) == []
    with pytest.raises(TypeError, match="scalar"):
        iter(gt.constant(1.0))
    v = gt.Variable([1.0, 2.0])
    assert [float(x) for x in v] == [1.0, 2.0]


def test_iterating_inside_a_function_unrolls():
    @gt.function
    def f(x):
        s = gt.constant(0.0)
        for row in x:
            s = s + gt.reduce_sum(row) * 2
        return s

    assert float(f(gt.constant([[1.0, 2.0], [3.0, 4.0]]))) == 20.0


def test_format():
    loss = gt.constant(0.123456)
    assert f"{loss:.3f}" == "0.123"
    assert "{:.1%}".format(gt.constant(0.25)) == "25.0%"  # noqa: UP032 (str.format is tested)
    assert f"{gt.constant(3)}" == "3"
    assert f"{gt.constant([1.0, 2.0])}" == str(np.array([1.0, 2.0], np.float32))
    # A variable keeps Python's default format, as TF's: its str, no format spec.
    v = gt.Variable(2.5)
    assert f"{v}" == str(v)
    with pytest.raises(TypeError):
        f"{v:.2f}"
    assert f"{v.read_value():.2f}" == "2.50"
    with pytest.raises(TypeError):
        f"{gt.constant([1.0, 2.0]):.2f}"


def test_print_and_device_and_init_scope(capsys):
    with gt.device("/CPU:0"):
        y = gt.constant([1.0, 2.0]) * 2
    gt.print("y:", y)
    assert capsys.readouterr().err == "y: [2 4]\n"
    for name in ["/cpu:0", "/device:CPU:0", "/job:localhost/replica:0/task:0/device:CPU:0", "GPU:0", "", None]:
        with gt.device(name):
            pass
    with pytest.raises(ValueError):
        with gt.device("/banana:0"):
            pass
    with pytest.raises(TypeError):
        with gt.device(3):
            pass

    created = []

    @gt.function
    def f(x):
        with gt.init_scope():
            if not created:
                created.append(gt.Variable(10.0))
            eager = not gt._gradtape._is_tracing()
        assert eager
        return x * created[0]

    assert float(f(gt.constant(2.0))) == 20.0
    assert float(f(gt.constant(3.0))) == 30.0
    assert len(created) == 1


def test_py_function_eager_and_traced():
    calls = []

    def np_square(x):
        calls.append(1)
        return np.square(x.numpy()) + 1

    assert gt.py_function(np_square, [gt.constant([1.0, 2.0])], gt.float32).numpy().tolist() == [2.0, 5.0]

    @gt.function
    def f(x):
        return gt.py_function(np_square, [x], gt.float32) * 2

    n = len(calls)
    assert f(gt.constant([3.0, 1.0])).numpy().tolist() == [20.0, 4.0]
    assert f(gt.constant([2.0, 0.0])).numpy().tolist() == [10.0, 2.0]  # runs on each call
    assert len(calls) > n + 1
    a, b = gt.py_function(lambda x: (x + 1, x * 2), [gt.constant(2)], [gt.int32, gt.float32])
    assert int(a) == 3 and b.dtype == gt.float32 and float(b) == 4.0
    with pytest.raises(ValueError, match="Tout"):
        gt.py_function(lambda x: (x, x), [gt.constant(1.0)], [gt.float32])


def test_random_shuffle():
    gt.random.set_seed(5)
    t = gt.reshape(gt.range(20), [10, 2])
    s = gt.random.shuffle(t)
    assert sorted(s.numpy()[:, 0].tolist()) == list(range(0, 20, 2))
    np.testing.assert_array_equal(s.numpy()[:, 1], s.numpy()[:, 0] + 1)  # rows move whole
    gt.random.set_seed(5)
    np.testing.assert_array_equal(gt.random.shuffle(t).numpy(), s.numpy())
    with pytest.raises(ValueError, match="rank"):
        gt.random.shuffle(gt.constant(1.0))

    @gt.function
    def f(x):
        return gt.random.shuffle(x)

    outs = {tuple(f(gt.range(8)).numpy().tolist()) for _ in range(5)}
    assert all(sorted(o) == list(range(8)) for o in outs) and len(outs) > 1


def test_tensor_array_eager_and_traced():
    ta = gt.TensorArray(gt.float32, size=3)
    for i in range(3):
        ta = ta.write(i, [float(i), float(i) * 2])
    assert ta.stack().numpy().tolist() == [[0, 0], [1, 2], [2, 4]]
    assert ta.read(1).numpy().tolist() == [1, 2]
    assert int(ta.size()) == 3
    assert ta.gather([2, 0]).numpy().tolist() == [[2, 4], [0, 0]]
    assert ta.concat().numpy().tolist() == [0, 0, 1, 2, 2, 4]
    with pytest.raises(gt.errors.InvalidArgumentError):
        ta.write(3, [1.0, 1.0])
    with pytest.raises(ValueError, match="shape"):
        ta.write(0, [1.0])
    u = gt.TensorArray(gt.int32, size=0, dynamic_size=True).unstack(gt.constant([[1, 2], [3, 4]]))
    assert u.read(1).numpy().tolist() == [3, 4] and int(u.size()) == 2

    @gt.function
    def cumulative(x):
        out = gt.TensorArray(gt.float32, size=0, dynamic_size=True)
        s = gt.constant(0.0)
        for i in range(4):
            s = s + x[i]
            out = out.write(i, s)
        return out.stack()

    assert cumulative(gt.constant([1.0, 2.0, 3.0, 4.0])).numpy().tolist() == [1, 3, 6, 10]
    assert cumulative(gt.constant([0.0, 1.0, 0.0, 1.0])).numpy().tolist() == [0, 1, 1, 2]


def test_dtypes_as_tf():
    x = gt.linspace(-2, 2, 201)  # the basic training loops tutorial's x
    assert x.dtype == gt.float64
    np.testing.assert_allclose(x.numpy(), np.linspace(-2, 2, 201), rtol=1e-15)
    assert gt.linspace(-2.0, 2, 5).dtype == gt.float32
    assert gt.linspace(gt.constant(0, gt.int64), 1, 3).dtype == gt.float64
    u = gt.constant(np.array([1, 2], np.uint8))
    assert u.dtype == gt.uint8 and (u + u).dtype == gt.uint8 and (u < u).dtype == gt.bool
    for dt in (gt.int8, gt.uint16, gt.int16, gt.float16):
        t = gt.cast(gt.constant([1, 2]), dt)
        assert t.dtype == dt and (t * t).numpy().tolist() == [1, 4] and bool(gt.reduce_all(t == t))
    h = gt.Variable(gt.constant([1.0, 2.0], gt.float16))
    with gt.GradientTape() as tape:
        y = gt.reduce_sum(h * h)
    g = tape.gradient(y, h)
    assert g.dtype == gt.float16 and g.numpy().tolist() == [2.0, 4.0]
