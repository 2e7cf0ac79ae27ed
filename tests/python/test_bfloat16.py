"""The ``bfloat16`` dtype (issue 16): storage, casts with TF's rounding, arithmetic,
math, matmul, reductions, gradients, printing and numpy interop. Expected numbers are
TF 2.21's (CPU), which computes bfloat16 ops in float32 and rounds the result to
nearest even."""

import subprocess
import sys

import numpy as np
import pytest

import gradtape as gt

ml_dtypes = pytest.importorskip("ml_dtypes")
bf = gt.bfloat16


def f32(t):
    """A tensor's values as float32 (every bfloat16 value is exact there)."""
    return np.asarray(t.numpy()).astype(np.float32).tolist()


X = [0.1, 1.7, -2.3, 3.14159]
Y = [1.5, 2.5, 3.5, 0.3]


def test_dtype_object_is_tf_s():
    assert bf.name == "bfloat16" and repr(bf) == "gt.bfloat16" and str(bf) == "<dtype: 'bfloat16'>"
    assert bf.is_floating and not bf.is_integer and not bf.is_complex
    assert bf.size == 2 and bf.as_datatype_enum == 14
    assert bf.min == pytest.approx(-3.3895313892515355e38) and bf.max == pytest.approx(3.3895313892515355e38)
    assert bf.real_dtype == bf
    assert gt.dtypes.as_dtype("bfloat16") is bf or gt.dtypes.as_dtype("bfloat16") == bf
    assert gt.dtypes.as_dtype(ml_dtypes.bfloat16) == bf
    assert gt.dtypes.bfloat16 == bf
    assert bf.as_numpy_dtype is ml_dtypes.bfloat16


def test_constant_rounds_to_nearest_even_as_tf():
    x = gt.constant(X, dtype=bf)
    assert x.dtype == bf and x.shape == (4,)
    assert f32(x) == [0.10009765625, 1.703125, -2.296875, 3.140625]
    # Ties go to even: 1 + 2^-8 -> 1, 1 + 3 * 2^-8 -> 1 + 2^-6.
    c = gt.cast(gt.constant([1.00390625, 1.01171875, 1e40, -0.0, 65504.0], gt.float64), bf)
    assert f32(c) == [1.0, 1.015625, np.inf, -0.0, 65536.0]
    assert np.signbit(f32(c)[3])


def test_casts_to_and_from_every_dtype():
    x = gt.constant([2.7, -2.7, 300.0], bf)
    assert gt.cast(x, gt.int32).numpy().tolist() == [2, -2, 300]
    assert gt.cast(x, gt.uint8).numpy().tolist() == [2, 254, 44]
    assert f32(gt.cast(gt.constant([257, 1000001], gt.int32), bf)) == [256.0, 999424.0]
    assert f32(gt.cast(gt.constant([0.1, 1000.5], gt.float16), bf)) == [0.10009765625, 1000.0]
    assert gt.cast(x, gt.bool).numpy().tolist() == [True, True, True]
    assert gt.cast(x, gt.complex64).numpy().tolist() == [2.703125 + 0j, -2.703125 + 0j, 300 + 0j]
    for dt in [gt.float16, gt.float32, gt.float64, gt.int8, gt.int16, gt.int64, gt.uint16,
               gt.uint32, gt.uint64, gt.complex128]:
        back = gt.cast(gt.cast(gt.constant([1.0, 2.0, 3.0], bf), dt), bf)
        assert back.dtype == bf and f32(back) == [1.0, 2.0, 3.0], dt
    with pytest.raises(TypeError, match="Cast bfloat16 to string is not supported"):
        gt.cast(x, gt.string)


@pytest.mark.parametrize("name,expected", [
    ("exp", [1.1015625, 5.5, 0.1005859375, 23.125]),
    ("tanh", [0.099609375, 0.9375, -0.98046875, 0.99609375]),
    ("sin", [0.10009765625, 0.9921875, -0.74609375, 0.00096893310546875]),
    ("square", [0.010009765625, 2.90625, 5.28125, 9.875]),
    ("abs", [0.10009765625, 1.703125, 2.296875, 3.140625]),
    ("negative", [-0.10009765625, -1.703125, 2.296875, -3.140625]),
])
def test_unary_math_matches_tf(name, expected):
    y = getattr(gt.math, name)(gt.constant(X, bf))
    assert y.dtype == bf
    assert f32(y) == expected


def test_sigmoid_within_one_ulp_of_tf():
    # TF's bfloat16 sigmoid rounds inside its formula (0.52734375 at 0.1001); gradtape
    # computes in float32 and rounds once: the correctly rounded 0.5234375.
    tf_values = np.array([0.52734375, 0.84765625, 0.09130859375, 0.95703125])
    got = np.array(f32(gt.sigmoid(gt.constant(X, bf))))
    assert got[0] == 0.5234375
    np.testing.assert_allclose(got, tf_values, rtol=2.0**-7)


def test_sqrt_and_log_match_tf():
    x = gt.abs(gt.constant(X, bf))
    assert f32(gt.sqrt(x)) == [0.31640625, 1.3046875, 1.515625, 1.7734375]
    assert f32(gt.math.log(x)) == [-2.296875, 0.53125, 0.83203125, 1.140625]


def test_arithmetic_and_comparison_match_tf():
    x, y = gt.constant(X, bf), gt.constant(Y, bf)
    assert f32(x + y) == [1.6015625, 4.1875, 1.203125, 3.4375]
    assert f32(x * y) == [0.150390625, 4.25, -8.0625, 0.9453125]
    assert f32(x / y) == [0.06689453125, 0.6796875, -0.65625, 10.4375]
    assert (x < y).numpy().tolist() == [True, True, True, False]
    assert (x == x).numpy().tolist() == [True] * 4
    assert (x + 1).dtype == bf and f32(x + 1) == [1.1015625, 2.703125, -1.296875, 4.125]
    with pytest.raises(gt.errors.InvalidArgumentError):
        x + gt.constant(Y, gt.float32)


def test_matmul_computes_in_float32_and_rounds_once():
    a = gt.cast(gt.reshape(gt.range(1, 7, dtype=gt.float32) * 0.37, [2, 3]), bf)
    b = gt.cast(gt.reshape(gt.range(1, 7, dtype=gt.float32) * 1.13, [3, 2]), bf)
    p = gt.matmul(a, b)
    assert p.dtype == bf
    assert f32(p) == [[9.1875, 11.6875], [20.5, 26.75]]
    assert f32(a @ b) == f32(p)


def test_reductions_match_tf():
    a = gt.cast(gt.reshape(gt.range(1, 7, dtype=gt.float32) * 0.37, [2, 3]), bf)
    assert f32(gt.reduce_sum(a)) == 7.75
    assert f32(gt.reduce_mean(a, axis=0)) == [0.921875, 1.296875, 1.6640625]
    assert f32(gt.reduce_max(a)) == 2.21875
    assert gt.reduce_sum(a).dtype == bf


def test_gradients_and_sgd_training_match_tf():
    w = gt.Variable(gt.constant([0.5, -1.25], bf))
    xs = gt.constant([[1.0, 2.0], [3.0, -1.0]], bf)
    ys = gt.constant([1.0, 2.0], bf)
    for i in range(5):
        with gt.GradientTape() as tape:
            loss = gt.reduce_mean(gt.square(gt.linalg.matvec(xs, w) - ys))
        g = tape.gradient(loss, w)
        assert g.dtype == bf
        if i == 0:
            assert f32(g) == [-0.75, -6.75]
            assert f32(loss) == 4.78125
        w.assign_sub(0.1 * g)
    assert f32(w) == [0.703125, 0.0927734375]


def test_sgd_optimizer_trains_a_bfloat16_variable():
    w = gt.Variable(gt.constant([0.5, -1.25], bf))
    opt = gt.optimizers.SGD(0.1)
    xs = gt.constant([[1.0, 2.0], [3.0, -1.0]], bf)
    ys = gt.constant([1.0, 2.0], bf)
    first = None
    for _ in range(20):
        with gt.GradientTape() as tape:
            loss = gt.reduce_mean(gt.square(gt.linalg.matvec(xs, w) - ys))
        first = first if first is not None else f32(loss)
        opt.apply_gradients([(tape.gradient(loss, w), w)])
    assert w.dtype == bf
    assert f32(loss) < first / 10


def test_numpy_is_an_ml_dtypes_array_and_converts_back():
    x = gt.constant([1.5, 2.7], bf)
    a = x.numpy()
    assert a.dtype == ml_dtypes.bfloat16
    assert a.astype(np.float32).tolist() == [1.5, 2.703125]
    back = gt.constant(a)
    assert back.dtype == bf and f32(back) == [1.5, 2.703125]
    assert np.asarray(x).dtype == ml_dtypes.bfloat16
    s = gt.constant(2.7, bf).numpy()
    assert float(s) == 2.703125


def test_printing_is_tf_s():
    assert str(gt.constant([[1.5, 2.7]], bf)) == "gt.Tensor([[1.5 2.70312]], shape=(1, 2), dtype=bfloat16)"
    assert repr(gt.constant([1.5, 2.7], bf)) == (
        "<gt.Tensor: shape=(2,), dtype=bfloat16, numpy=array([1.5, 2.70312], dtype=bfloat16)>")


def test_without_ml_dtypes_numpy_gives_float32():
    code = (
        "import sys; sys.modules['ml_dtypes'] = None\n"
        "import gradtape as gt\n"
        "a = gt.constant([1.5, 2.7], gt.bfloat16).numpy()\n"
        "print(a.dtype, a.tolist())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "float32 [1.5, 2.703125]"


def test_structural_ops_and_keras_dense_layer():
    x = gt.constant([[1.0, 2.0], [3.0, 4.0]], bf)
    assert gt.transpose(x).dtype == bf and f32(gt.transpose(x)) == [[1.0, 3.0], [2.0, 4.0]]
    assert f32(gt.concat([x, x], 0))[2] == [1.0, 2.0]
    assert f32(x[1]) == [3.0, 4.0]
    assert f32(gt.zeros([2], bf)) == [0.0, 0.0] and gt.ones([1], bf).dtype == bf
    layer = gt.keras.layers.Dense(3, dtype="bfloat16", kernel_initializer="ones")
    y = layer(x)
    assert y.dtype == bf and f32(y) == [[3.0] * 3, [7.0] * 3]
    assert layer.kernel.dtype == bf


def test_safetensors_round_trip(tmp_path):
    x = gt.constant([1.5, -2.7], bf)
    p = str(tmp_path / "w.safetensors")
    gt.io.save_weights(p, {"x": x})
    back = gt.io.load_weights(p)["x"]
    assert back.dtype == bf and f32(back) == f32(x)
    with pytest.raises(TypeError):
        gt.io.save_weights(str(tmp_path / "s.safetensors"), {"s": gt.constant(["a"])})


def test_random_draws_and_default_initialized_dense():
    u = gt.random.uniform([1000], -2.0, 3.0, dtype=bf, seed=1)
    vals = np.array(f32(u))
    assert u.dtype == bf and vals.min() >= -2.0 and vals.max() < 3.0
    assert abs(vals.mean() - 0.5) < 0.2
    # Every drawn value is a bfloat16 value: float32 bits with the low 16 zero.
    assert not (vals.astype(np.float32).view(np.uint32) & 0xFFFF).any()
    n = gt.random.normal([2000], dtype=bf, seed=2)
    assert n.dtype == bf and abs(float(np.mean(f32(n)))) < 0.15
    layer = gt.keras.layers.Dense(4, dtype="bfloat16")
    y = layer(gt.ones([2, 3], bf))
    assert y.dtype == bf and layer.kernel.dtype == bf and y.shape == (2, 4)
    w = np.array(f32(layer.kernel))
    assert np.abs(w).max() <= np.sqrt(6.0 / 7.0) and np.abs(w).max() > 0
