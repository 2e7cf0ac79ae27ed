"""Every numpy dtype TF has is kept, stored and computed as itself (issue 10, item 7):
numpy round trips, byte order, TypeError for numpy dtypes TF lacks, ``gt.cast`` between
all pairs, Python-scalar promotion, printing, ``DType`` properties, the ops TF registers
for each dtype (and TypeError for those it does not), and pickling."""

import copy
import operator
import pickle
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import numpy as np
import pytest

import gradtape as gt

NEW = ["float16", "int8", "int16", "uint8", "uint16", "uint32", "uint64"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
SIGNED = ["int8", "int16", "int32", "int64"]
UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "float32", "float64"]
ALL = FLOATS + INTS + ["bool", "complex64", "complex128"]


def _extremes(name):
    """A (2, 3) array of `name` holding its extreme values."""
    dt = np.dtype(name)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        v = [info.min, 1, 0, 5, info.max - 1, info.max]
    elif dt.kind == "f":
        info = np.finfo(dt)
        v = [info.min, -0.0, info.tiny, np.nan, np.inf, info.max]
    elif dt.kind == "c":
        v = [1 + 2j, -0.5j, 0, np.nan, np.inf, 3.25]
    else:
        v = [True, False, True, True, False, False]
    return np.array(v, dtype=dt).reshape(2, 3)


# ----------------------------------------------------------------------------- numpy
@pytest.mark.parametrize("name", ALL)
def test_numpy_round_trip_keeps_dtype_and_values(name):
    a = _extremes(name)
    t = gt.constant(a)
    assert t.dtype.name == name and t.dtype == getattr(gt, name)
    assert t.shape == (2, 3)
    back = t.numpy()
    assert back.dtype == a.dtype
    np.testing.assert_array_equal(back, a)
    np.testing.assert_array_equal(np.asarray(t), a)
    # Strided, transposed and 0-d inputs too.
    np.testing.assert_array_equal(gt.constant(a.T).numpy(), a.T)
    np.testing.assert_array_equal(gt.constant(a[:, ::-2]).numpy(), a[:, ::-2])
    s = gt.constant(a[0, 0])
    assert s.dtype.name == name and s.shape == () and s.numpy().dtype == a.dtype


def test_uint64_max_round_trips():
    t = gt.constant(np.array([2**64 - 1], np.uint64))
    assert t.dtype == gt.uint64
    assert t.numpy().tolist() == [2**64 - 1]
    assert int(t[0]) == 2**64 - 1
    assert int(gt.constant(np.int64(2**62 + 1))) == 2**62 + 1
    assert gt.constant(2**64 - 1, dtype=gt.uint64).numpy() == np.uint64(2**64 - 1)


@pytest.mark.parametrize("spec", [">f2", ">f4", ">f8", ">i2", ">i4", ">i8", ">u2", ">u4", ">u8", ">c8", ">c16"])
def test_non_native_byte_order_is_swapped_not_widened(spec):
    a = np.arange(6).reshape(2, 3).astype(spec) * 3 - 1 if spec[1] in "ifc" else np.arange(6).astype(spec)
    t = gt.constant(a)
    native = np.dtype(spec).newbyteorder("=")
    assert t.dtype.name == native.name
    got = t.numpy()
    assert got.dtype == native and got.dtype.isnative
    np.testing.assert_array_equal(got, a)


@pytest.mark.parametrize(
    "value, what",
    [
        (np.zeros(2, np.longdouble), "no equivalent"),
        (np.zeros(2, np.clongdouble), "no equivalent"),
        (np.zeros(2, "datetime64[s]"), "no equivalent"),
        (np.zeros(2, "timedelta64[ms]"), "no equivalent"),
        (np.zeros(2, [("a", "i4"), ("b", "f4")]), "no equivalent"),
        (np.zeros(2, "V4"), "no equivalent"),
        # An object array holding other things than str/bytes (text arrays make
        # string tensors: test_string.py).
        (np.array(["x", 1], dtype=object), "only str and bytes"),
    ],
    ids=[
        "longdouble", "clongdouble", "datetime64", "timedelta64", "structured", "void",
        "object",
    ],
)
def test_numpy_dtypes_tf_lacks_raise_type_error(value, what):
    if isinstance(value, np.ndarray) and value.dtype in (np.dtype(np.float64), np.dtype(np.complex128)):
        pytest.skip("long double is double on this platform")  # not on x86-64 Linux
    with pytest.raises(TypeError, match=what):
        gt.constant(value)
    with pytest.raises(TypeError):
        gt.Variable(value)


def test_python_ints_keep_their_values():
    assert gt.constant([1, 2]).dtype == gt.int32
    t = gt.constant([1, 2**40])
    assert t.dtype == gt.int64 and t.numpy().tolist() == [1, 2**40]
    assert gt.constant(np.uint8(7)).dtype == gt.uint8
    assert gt.constant(np.float16(1.5)).dtype == gt.float16
    assert gt.constant(np.int16(-3)).numpy() == np.int16(-3)


# ----------------------------------------------------------------------------- cast
_CAST_VALUES = [0, 1, 2, 100, 127]


@pytest.mark.parametrize("src", ALL)
@pytest.mark.parametrize("dst", ALL)
def test_cast_between_all_pairs(src, dst):
    a = np.array(_CAST_VALUES, dtype=src)
    t = gt.cast(gt.constant(a), getattr(gt, dst))
    assert t.dtype.name == dst
    want = (a.real if a.dtype.kind == "c" and np.dtype(dst).kind != "c" else a).astype(dst)
    np.testing.assert_array_equal(t.numpy(), want)


@pytest.mark.parametrize(
    "dst, want",
    [
        # C++ static_cast through int64 on TF's x86 CPUs: truncate, then keep the low bits.
        ("uint8", [255, 255, 2, 44, 0]),
        ("int8", [-1, -1, 2, 44, 0]),
        ("uint16", [65535, 65535, 2, 300, 0]),
        ("int16", [-1, -1, 2, 300, 0]),
        ("uint32", [2**32 - 1, 2**32 - 1, 2, 300, 0]),
        ("uint64", [2**64 - 1, 2**64 - 1, 2, 300, 0]),
        ("int32", [-1, -1, 2, 300, 0]),
        ("bool", [True, True, True, True, False]),
        ("float16", [-1.5, -1.0, 2.69921875, 300.0, 0.0]),
    ],
)
def test_cast_from_float_follows_tf(dst, want):
    t = gt.cast(gt.constant([-1.5, -1.0, 2.7, 300.0, 0.0]), getattr(gt, dst))
    assert t.dtype.name == dst and t.numpy().tolist() == want


def test_cast_between_integers_wraps():
    t = gt.constant(np.array([-1, 256, 2**40 + 5], np.int64))
    assert gt.cast(t, gt.uint8).numpy().tolist() == [255, 0, 5]
    assert gt.cast(t, gt.uint64).numpy().tolist() == [2**64 - 1, 256, 2**40 + 5]
    assert gt.cast(gt.constant(np.array([2**64 - 1], np.uint64)), gt.int64).numpy().tolist() == [-1]
    big = gt.constant(np.array([2**64 - 1], np.uint64))
    assert gt.cast(big, gt.float32).numpy().tolist() == [float(np.float32(2**64))]


def test_cast_float16_is_differentiable():
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reduce_sum(gt.cast(x, gt.float16) * 3.0)
    g = tape.gradient(y, x)
    assert g.dtype == gt.float32 and g.numpy().tolist() == [3.0, 3.0]


# ----------------------------------------------------------------------------- Python scalars
def test_python_scalars_take_the_tensor_dtype_like_tf():
    u = gt.constant(np.array([250, 3], np.uint8))
    r = u + 10
    assert r.dtype == gt.uint8 and r.numpy().tolist() == [4, 13]  # wraps
    r = u + 2.0  # an integral float is fine
    assert r.dtype == gt.uint8 and r.numpy().tolist() == [252, 5]
    with pytest.raises(TypeError, match="2.5"):
        u + 2.5
    assert (u + 300).numpy().tolist() == [38, 47]  # 300 is cast to uint8 (44) first
    h = gt.constant(np.array([1.0, 2.0], np.float16))
    for r in (h * 0.1, 0.1 * h, h + 1, h / 3):
        assert r.dtype == gt.float16
    np.testing.assert_array_equal((h * 0.1).numpy(), np.array([1.0, 2.0], np.float16) * np.float16(0.1))
    assert (gt.constant(np.array([5], np.int8)) * 2).dtype == gt.int8


# ----------------------------------------------------------------------------- printing
def test_printing_like_tf():
    assert str(gt.constant(np.array([1, 2], np.uint8))) == "gt.Tensor([1 2], shape=(2,), dtype=uint8)"
    assert str(gt.constant(np.float16(1.5))) == "gt.Tensor(1.5, shape=(), dtype=float16)"
    assert repr(gt.constant(np.array([2**64 - 1, 0], np.uint64))) == (
        "<gt.Tensor: shape=(2,), dtype=uint64, numpy=array([18446744073709551615,                    0], dtype=uint64)>"
    )
    assert repr(gt.constant(np.array([-3], np.int8))) == (
        "<gt.Tensor: shape=(1,), dtype=int8, numpy=array([-3], dtype=int8)>"
    )
    v = gt.Variable(np.array([1, 2], np.int16), name="v")
    assert repr(v) == "<gt.Variable 'v:0' shape=(2,) dtype=int16, numpy=array([1, 2], dtype=int16)>"


# ----------------------------------------------------------------------------- DType
# TF's values: tf.dtypes.DType's as_datatype_enum, size, is_*, min, max.
_DTYPE_TABLE = [
    ("float16", 19, 2, False, False, True, -65504.0, 65504.0),
    ("float32", 1, 4, False, False, True, float(np.finfo(np.float32).min), float(np.finfo(np.float32).max)),
    ("float64", 2, 8, False, False, True, float(np.finfo(np.float64).min), float(np.finfo(np.float64).max)),
    ("int8", 6, 1, True, False, False, -128, 127),
    ("int16", 5, 2, True, False, False, -32768, 32767),
    ("int32", 3, 4, True, False, False, -(2**31), 2**31 - 1),
    ("int64", 9, 8, True, False, False, -(2**63), 2**63 - 1),
    ("uint8", 4, 1, True, True, False, 0, 255),
    ("uint16", 17, 2, True, True, False, 0, 65535),
    ("uint32", 22, 4, True, True, False, 0, 2**32 - 1),
    ("uint64", 23, 8, True, True, False, 0, 2**64 - 1),
]


@pytest.mark.parametrize("row", _DTYPE_TABLE, ids=[r[0] for r in _DTYPE_TABLE])
def test_dtype_properties_match_tf(row):
    name, enum, size, is_int, is_unsigned, is_float, lo, hi = row
    d = getattr(gt, name)
    assert d.name == name and gt.dtypes.as_dtype(name) == d and gt.dtypes.as_dtype(np.dtype(name)) == d
    assert d.as_datatype_enum == enum and d.size == size
    got = (d.is_integer, d.is_unsigned, d.is_floating, d.is_complex, d.is_bool)
    assert got == (is_int, is_unsigned, is_float, False, False)
    assert d.min == lo and d.max == hi and type(d.min) is type(lo)
    assert d.as_numpy_dtype is np.dtype(name).type
    assert d.base_dtype == d and d.is_compatible_with(name) and not d.is_quantized
    assert pickle.loads(pickle.dumps(d)) == d
    assert str(d) == f"<dtype: '{name}'>" and repr(d) == f"gt.{name}"


def test_dtype_aliases_and_limits_of_unordered_dtypes():
    assert gt.half == gt.float16 == gt.dtypes.half and gt.double == gt.float64
    assert gt.dtypes.as_dtype("half") == gt.float16
    for d in (gt.bool, gt.complex64):
        with pytest.raises(TypeError):
            _ = d.min
        with pytest.raises(TypeError):
            _ = d.max
    assert not gt.bool.is_unsigned and not gt.bool.is_integer
    assert gt.dtypes.as_dtype("bfloat16") == gt.bfloat16  # issue 16 (test_bfloat16.py)
    with pytest.raises(TypeError):
        gt.dtypes.as_dtype("float8_e4m3fn")


# ----------------------------------------------------------------------------- ops
def _pair(name):
    """Two (2, 3) operands of `name` with extremes, no zero divisor, no overflow of the
    float16 range."""
    dt = np.dtype(name)
    if dt.kind == "f":
        x = np.array([[-2.5, 1.0, 0.0], [0.5, 3.0, 1000.0]], dt)
        y = np.array([[3.0, 2.0, -5.0], [0.25, 1.5, 0.5]], dt)
    else:
        info = np.iinfo(dt)
        x = np.array([[info.min, 1, 0], [5, 7, info.max]], dt)
        y = np.array([[3, 2, 5], [info.max, 1, 3]], dt)
    return x, y


_BINARY = {
    "add": (gt.add, np.add),
    "subtract": (gt.subtract, np.subtract),
    "multiply": (gt.multiply, np.multiply),
    "floordiv": (gt.math.floordiv, np.floor_divide),
    "floormod": (gt.math.floormod, np.mod),
    "maximum": (gt.maximum, np.maximum),
    "minimum": (gt.minimum, np.minimum),
    "less": (gt.less, np.less),
    "greater_equal": (gt.greater_equal, np.greater_equal),
    "equal": (gt.equal, np.equal),
    "not_equal": (gt.not_equal, np.not_equal),
}


@pytest.mark.parametrize("name", NEW)
@pytest.mark.parametrize("op", list(_BINARY))
def test_binary_ops_on_every_real_dtype(name, op):
    x, y = _pair(name)
    f, ref = _BINARY[op]
    with np.errstate(over="ignore"):
        want = ref(x, y)
    got = f(gt.constant(x), gt.constant(y))
    assert got.dtype.name == want.dtype.name
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("name", NEW)
def test_reductions_and_scans_on_every_real_dtype(name):
    x, _ = _pair(name)
    t = gt.constant(x)
    wide = np.float32 if name == "float16" else x.dtype
    cases = [
        (gt.reduce_sum(t, axis=1), np.sum(x.astype(wide), axis=1, dtype=wide).astype(x.dtype)),
        (gt.reduce_prod(t, axis=0), np.prod(x.astype(wide), axis=0, dtype=wide).astype(x.dtype)),
        (gt.reduce_max(t), np.max(x)),
        (gt.reduce_min(t, axis=1), np.min(x, axis=1)),
        (gt.math.cumsum(t, axis=1), np.cumsum(x.astype(wide), axis=1, dtype=wide).astype(x.dtype)),
    ]
    for got, want in cases:
        assert got.dtype.name == name
        np.testing.assert_array_equal(got.numpy(), want)
    assert gt.argmax(t, axis=1).numpy().tolist() == np.argmax(x, axis=1).tolist()
    assert gt.math.argmin(t).numpy().tolist() == np.argmin(x, axis=0).tolist()


@pytest.mark.parametrize("name", INTS)
def test_integer_mean_sums_wide_and_truncates_like_tf(name):
    x, _ = _pair(name)
    m = gt.reduce_mean(gt.constant(x), axis=1)
    # TF's MeanReducer sums in 64 bits (wrapping there) and divides with truncation.
    sums = [sum(int(v) for v in row) for row in x]
    sums = [s % 2**64 if name in UNSIGNED else (s + 2**63) % 2**64 - 2**63 for s in sums]
    want = [abs(s) // 3 * (1 if s >= 0 else -1) for s in sums]
    assert m.dtype.name == name and m.numpy().tolist() == want
    # The sum of int8 values overflows int8; TF's mean does not.
    assert gt.reduce_mean(gt.constant(np.array([100, 100, 100], np.int8))).numpy() == 100
    assert gt.reduce_mean(gt.constant(np.array([-3, -4], np.int32))).numpy() == -3


@pytest.mark.parametrize("name", INTS)
def test_true_division_of_integers_casts_like_tf(name):
    x, y = _pair(name)
    to = np.float32 if np.dtype(name).itemsize <= 2 else np.float64
    got = gt.constant(x) / gt.constant(y)
    assert got.dtype.name == np.dtype(to).name
    np.testing.assert_array_equal(got.numpy(), x.astype(to) / y.astype(to))


@pytest.mark.parametrize("name", NEW)
def test_signed_unary_ops(name):
    x, _ = _pair(name)
    t = gt.constant(x)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(gt.square(t).numpy(), np.square(x))
    if name in UNSIGNED:
        for f in (gt.negative, gt.abs):
            with pytest.raises(TypeError, match=f"does not support dtype {name}"):
                f(t)
        return
    np.testing.assert_array_equal(gt.negative(t).numpy(), -x)
    np.testing.assert_array_equal(abs(t).numpy(), np.abs(x))  # int8 |-128| wraps to -128, as TF


@pytest.mark.parametrize(
    "name, op",
    [
        ("uint8", "pow"), ("uint16", "pow"), ("uint32", "pow"), ("uint64", "pow"),
        ("int8", "sqrt"), ("uint16", "exp"), ("int16", "sign"), ("uint32", "sign"),
        ("int8", "matmul"), ("uint8", "matmul"), ("float16", "det"), ("float16", "cholesky"),
        ("float16", "complex"), ("uint64", "neg"),
    ],
)
def test_ops_tf_has_no_kernel_for_raise_type_error(name, op):
    x = gt.constant(np.ones((2, 2), name))
    f = {
        "pow": lambda: x**x, "sqrt": lambda: gt.sqrt(x), "exp": lambda: gt.exp(x),
        "sign": lambda: gt.sign(x), "matmul": lambda: x @ x, "det": lambda: gt.linalg.det(x),
        "cholesky": lambda: gt.linalg.cholesky(x), "complex": lambda: gt.complex(x, x),
        "neg": lambda: -x,
    }[op]
    with pytest.raises(TypeError, match=name):
        f()


def test_signed_pow_and_float16_math():
    x = gt.constant(np.array([2, -3, 5], np.int8))
    assert (x ** gt.constant(np.array([3, 2, 4], np.int8))).numpy().tolist() == [8, 9, 113]  # 625 wraps
    h = np.array([0.5, 1.0, 2.0], np.float16)
    t = gt.constant(h)
    for f, ref in [
        (gt.exp, np.exp), (gt.sqrt, np.sqrt), (gt.tanh, np.tanh), (gt.sigmoid, lambda v: 1 / (1 + np.exp(-v)))
    ]:
        got = f(t)
        assert got.dtype == gt.float16
        # float16 ops compute in float32 and round once.
        np.testing.assert_array_equal(got.numpy(), ref(h.astype(np.float32)).astype(np.float16))
    m = gt.constant(np.array([[1.0, 2.0], [3.0, 4.0]], np.float16))
    assert (m @ m).dtype == gt.float16 and (m @ m).numpy().tolist() == [[7.0, 10.0], [15.0, 22.0]]


@pytest.mark.parametrize("name", ALL)
def test_shape_and_selection_ops_on_every_dtype(name):
    a = _extremes(name)
    t = gt.constant(a)
    checks = [
        (gt.reshape(t, [3, 2]), a.reshape(3, 2)),
        (gt.transpose(t), a.T),
        (gt.concat([t, t], 0), np.concatenate([a, a], 0)),
        (gt.stack([t, t], axis=1), np.stack([a, a], 1)),
        (gt.slice(t, [0, 1], [2, 2]), a[:, 1:3]),
        (t[::-1, 1:], a[::-1, 1:]),
        (gt.gather(t, [2, 0, 2], axis=1), a[:, [2, 0, 2]]),
        (gt.gather_nd(t, [[1, 2], [0, 0]]), a[[1, 0], [2, 0]]),
        (gt.tile(t, [2, 1]), np.tile(a, [2, 1])),
        (gt.pad(t, [[1, 0], [0, 1]]), np.pad(a, [[1, 0], [0, 1]])),
        (
            gt.where(gt.constant([[True], [False]]), t, gt.zeros_like(t)),
            np.where([[True], [False]], a, np.zeros_like(a)),
        ),
        (gt.boolean_mask(t, [False, True]), a[[False, True]]),
        (gt.broadcast_to(t[:1], [3, 3]), np.broadcast_to(a[:1], (3, 3))),
        (gt.expand_dims(t, 0), a[None]),
        (gt.split(t, 3, axis=1)[2], a[:, 2:]),
        (gt.unstack(t)[1], a[1]),
        (gt.identity(t), a),
        (gt.zeros_like(t), np.zeros_like(a)),
        (gt.ones([2], dtype=name), np.ones(2, name)),
        (gt.fill([2, 2], t[0, 0]), np.full((2, 2), a[0, 0])),
    ]
    for got, want in checks:
        assert got.dtype.name == name
        np.testing.assert_array_equal(got.numpy(), want)
    # Equal and NotEqual take complex too (TF registers them for it).
    np.testing.assert_array_equal(gt.equal(t, t).numpy(), a == a)
    np.testing.assert_array_equal(gt.not_equal(t, t).numpy(), a != a)


def test_creation_ops_take_every_numeric_dtype():
    for name in NEW:
        assert gt.range(4, dtype=name).numpy().tolist() == [0, 1, 2, 3]
        assert gt.eye(2, dtype=name).numpy().tolist() == [[1, 0], [0, 1]]
        oh = gt.one_hot([1, 0], 2, dtype=name)
        assert oh.dtype.name == name and oh.numpy().tolist() == [[0, 1], [1, 0]]
        assert gt.zeros([2, 1], dtype=getattr(gt, name)).dtype.name == name
    assert gt.random.normal([3], dtype=gt.float16).dtype == gt.float16
    assert gt.random.uniform([3], dtype="float16").dtype == gt.float16


# ----------------------------------------------------------------------------- variables
def test_variables_of_new_dtypes():
    v = gt.Variable(np.array([250, 1], np.uint8))
    assert v.dtype == gt.uint8 and not v.dtype.is_floating
    v.assign_add(np.array([10, 1], np.uint8))
    assert v.numpy().tolist() == [4, 2]
    v.assign_sub([5, 5])
    assert v.numpy().tolist() == [255, 253]
    w = gt.Variable(np.array([1.0, 2.0], np.float16))
    with gt.GradientTape() as tape:
        y = gt.reduce_sum(w * w)
    g = tape.gradient(y, w)
    assert g.dtype == gt.float16 and g.numpy().tolist() == [2.0, 4.0]
    gt.optimizers.SGD(0.5).apply_gradients([(g, w)])
    assert w.dtype == gt.float16 and w.numpy().tolist() == [0.0, 0.0]


# ----------------------------------------------------------------------------- pickle
@pytest.mark.parametrize("name", ALL)
def test_tensors_pickle_with_dtype_shape_and_values(name):
    a = _extremes(name)
    for value in (a, a.T, a[0, 0], a[:0]):
        t = gt.constant(value)
        for proto in (2, pickle.HIGHEST_PROTOCOL):
            u = pickle.loads(pickle.dumps(t, protocol=proto))
            assert type(u) is gt.Tensor
            assert u.dtype == t.dtype and u.shape == t.shape
            np.testing.assert_array_equal(u.numpy(), np.asarray(value))


@pytest.mark.parametrize("trainable", [True, False])
def test_variables_pickle_with_value_dtype_name_and_trainable(trainable):
    v = gt.Variable(np.array([[1, 2**63 + 5]], np.uint64), trainable=trainable, name="layer/kernel")
    v.assign_add(np.array([[1, 1]], np.uint64))
    u = pickle.loads(pickle.dumps(v))
    assert isinstance(u, gt.Variable) and u is not v
    assert u.dtype == gt.uint64 and u.shape == (1, 2) and u.numpy().tolist() == [[2, 2**63 + 6]]
    assert u.name == "layer/kernel:0" and u.trainable is trainable
    u.assign([[0, 0]])  # a new variable: the original is untouched
    assert v.numpy().tolist() == [[2, 2**63 + 6]]
    h = pickle.loads(pickle.dumps(gt.Variable(np.float16(0.5))))
    assert h.dtype == gt.float16 and h.name == "Variable:0" and h.numpy() == np.float16(0.5)


def test_tensors_and_variables_cross_processes():
    # multiprocessing pickles arguments and results both ways.
    t = gt.constant(np.array([[1, 2], [3, 250]], np.uint8))
    v = gt.Variable(np.array([0.5, 1.5], np.float16), trainable=False, name="w")
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as ex:
        s = ex.submit(operator.add, t, t).result(timeout=120)
        w = ex.submit(copy.deepcopy, v).result(timeout=120)
    assert s.dtype == gt.uint8 and s.numpy().tolist() == [[2, 4], [6, 244]]
    assert isinstance(w, gt.Variable) and w.dtype == gt.float16 and w.name == "w:0"
    assert w.trainable is False and w.numpy().tolist() == [0.5, 1.5]


def test_index_dtypes_tf_takes():
    # OneHot takes uint8 and int8 indices; GatherV2 and GatherNd take int16 ones.
    labels = gt.constant(np.array([2, 0], np.uint8))
    assert gt.one_hot(labels, 3).numpy().tolist() == [[0, 0, 1], [1, 0, 0]]
    assert gt.one_hot(gt.constant(np.array([1], np.int8)), 2).numpy().tolist() == [[0, 1]]
    x = gt.constant([[1.0, 2.0], [3.0, 4.0]])
    assert gt.gather(x, gt.constant(np.array([1], np.int16))).numpy().tolist() == [[3.0, 4.0]]
    assert gt.gather_nd(x, gt.constant(np.array([[1, 0]], np.int16))).numpy().tolist() == [3.0]
    with pytest.raises(TypeError, match="uint8"):
        gt.gather(x, gt.constant(np.array([1], np.uint8)))


def test_equal_compares_complex_numbers_as_tf():
    x = gt.constant(np.array([1 + 2j, 1 - 2j, 0j], dtype=np.complex64))
    y = gt.constant(np.array([1 + 2j, 1 + 2j, -0j], dtype=np.complex64))
    np.testing.assert_array_equal(gt.equal(x, y).numpy(), [True, False, True])
    np.testing.assert_array_equal(gt.not_equal(x, y).numpy(), [False, True, False])
    with pytest.raises(TypeError):
        gt.less(x, y)  # no order on complex numbers (TF raises too)
