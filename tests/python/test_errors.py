"""Bad input raises a clear Python exception (never a Rust panic), and a failed op
leaves the tape and all variables as they were."""

import numpy as np
import pytest

import gradtape as gt


def _not_panic(excinfo):
    # pyo3's PanicException derives from BaseException: `pytest.raises(Exception)`
    # would not catch it, but name it explicitly in case that ever changes.
    assert type(excinfo.value).__name__ != "PanicException"


# --- shapes and dtypes ----------------------------------------------------------------


def test_invalid_argument_error_is_value_error():
    assert issubclass(gt.errors.InvalidArgumentError, ValueError)


@pytest.mark.parametrize(
    "fn, op, shapes",
    [
        (lambda: gt.ones((2, 3)) + gt.ones((4,)), "AddV2", ("[2, 3]", "[4]")),
        (lambda: gt.ones((2, 3)) * gt.ones((3, 2)), "Mul", ("[2, 3]", "[3, 2]")),
        (lambda: gt.subtract(gt.ones((5,)), gt.ones((3,))), "Sub", ("[5]", "[3]")),
        (lambda: gt.matmul(gt.ones((2, 3)), gt.ones((2, 3))), "MatMul", ("[2, 3]",)),
        (lambda: gt.reshape(gt.ones((2, 3)), (4,)), "Reshape", ("6", "4")),
        (lambda: gt.broadcast_to(gt.ones((2, 3)), (3, 3)), "BroadcastTo", ("[2, 3]", "[3, 3]")),
    ],
)
def test_shape_mismatch_message_names_op_and_shapes(fn, op, shapes):
    with pytest.raises(gt.errors.InvalidArgumentError) as e:
        fn()
    msg = str(e.value)
    assert op in msg
    for s in shapes:
        assert s in msg


def test_shape_mismatch_is_catchable_as_value_error():
    with pytest.raises(ValueError, match="incompatible shapes"):
        gt.ones((2,)) + gt.ones((3,))


@pytest.mark.parametrize(
    "a, b",
    [
        (gt.constant(1.0), gt.constant(1.0, dtype=gt.float64)),
        (gt.constant(1.0), gt.constant(1)),
        (gt.constant([1, 2]), gt.constant([1, 2], dtype=gt.int64)),
    ],
)
def test_dtype_mismatch_between_tensors(a, b):
    with pytest.raises(gt.errors.InvalidArgumentError) as e:
        a + b
    msg = str(e.value)
    assert a.dtype.name in msg and b.dtype.name in msg


@pytest.mark.parametrize(
    "fn",
    [
        lambda: gt.ones((2, 3))[5],
        lambda: gt.ones((2, 3))[:, 5],
        lambda: gt.ones((2, 3))[1, 2, 3],
        lambda: gt.ones((2, 3))[..., ...],
        lambda: gt.ones((2, 3))[::0],
        lambda: gt.reduce_sum(gt.ones((2, 3)), axis=5),
        lambda: gt.reduce_sum(gt.ones((2, 3)), axis=[0, 0]),
        lambda: gt.reduce_max(gt.ones((0,))),
        lambda: gt.transpose(gt.ones((2, 3)), [0, 0]),
        lambda: gt.transpose(gt.ones((2, 3)), [0, 1, 2]),
        lambda: gt.squeeze(gt.ones((2, 3)), axis=0),
        lambda: gt.expand_dims(gt.ones((2, 3)), 7),
        lambda: gt.cumsum(gt.ones((2, 3)), axis=4),
        lambda: gt.reshape(gt.ones((2, 3)), (-1, -1)),
        lambda: gt.zeros((-1,)),
        lambda: gt.fill((2, -3), 1.0),
        lambda: gt.range(0, 10, 0),
        lambda: gt.constant([1.0, 2.0], shape=(3,)),
        lambda: gt.where(gt.constant([True]), gt.ones((2, 3)), gt.ones((4,))),
        lambda: gt.floordiv(gt.constant(2), gt.constant(0)),
        lambda: gt.constant(2) % 0,
        lambda: gt.pow(gt.constant(2), gt.constant(-1)),
    ],
)
def test_invalid_arguments(fn):
    with pytest.raises(gt.errors.InvalidArgumentError) as e:
        fn()
    _not_panic(e)
    assert str(e.value)


@pytest.mark.parametrize(
    "fn",
    [
        lambda: gt.ones((2**40, 2**40)),
        lambda: gt.zeros((2**62, 4)),
        lambda: gt.fill((2**33, 2**33), 1.0),
    ],
)
def test_shape_overflow_is_an_error(fn):
    # An element count past int64: TF's "Encountered overflow when multiplying".
    with pytest.raises(gt.errors.InvalidArgumentError, match="overflow") as e:
        fn()
    _not_panic(e)


def test_byte_count_overflow_is_resource_exhausted():
    # 2**62 elements are describable, but not 2**64 bytes of them (TF: OOM).
    with pytest.raises(gt.errors.ResourceExhaustedError) as e:
        gt.zeros((2**62,))
    _not_panic(e)


# --- types ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda: gt.exp("a"),
        lambda: gt.constant(np.array([1, "a"], dtype=object)),  # text and numbers
        lambda: gt.cast(gt.ones((2,)), "nope"),
        lambda: gt.ones((2,), dtype="foo"),
        lambda: gt.constant(2**70),
        lambda: gt.exp(gt.constant(1)),  # Exp has no int32 kernel
        lambda: gt.constant(True) + gt.constant(False),
        lambda: gt.ones((2, 3))["a"],
        lambda: gt.Variable(gt.constant("s")) * "t",  # string tensors have no math
    ],
)
def test_wrong_types_raise_type_error(fn):
    with pytest.raises(TypeError) as e:
        fn()
    _not_panic(e)


def test_gradient_wrt_python_float_is_type_error():
    x = gt.constant(1.0)
    with gt.GradientTape() as t:
        t.watch(x)
        y = x * x
    with pytest.raises(TypeError, match="float"):
        t.gradient(y, 3.0)
    with pytest.raises(TypeError):
        t.gradient(y, [x, 3.0])
    # the type check does not consume the non-persistent tape
    assert t.gradient(y, x).numpy() == 2.0


def test_gradient_target_python_float_is_type_error():
    x = gt.constant(1.0)
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
    with pytest.raises(TypeError):
        t.gradient(3.0, x)


@pytest.mark.parametrize("bad", [3, "s", 3.0, [gt.constant(1.0), "s"], object()])
def test_watch_wrong_type(bad):
    # TF: ValueError naming the type ("Passed in object of type <class 'int'>, ...").
    with gt.GradientTape() as t:
        with pytest.raises(ValueError, match="Passed in object of type <class"):
            t.watch(bad)


# --- variables ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "method, value, exc",
    [
        ("assign", [1.0, 2.0, 3.0], gt.errors.InvalidArgumentError),
        ("assign", gt.constant([1.0, 2.0], dtype=gt.float64), gt.errors.InvalidArgumentError),
        ("assign", gt.ones((2, 1)), gt.errors.InvalidArgumentError),
        ("assign", "x", TypeError),
        ("assign_add", [1.0, 2.0, 3.0], gt.errors.InvalidArgumentError),
        ("assign_add", gt.constant([1, 2], dtype=gt.int64), gt.errors.InvalidArgumentError),
        ("assign_sub", gt.ones((3,)), gt.errors.InvalidArgumentError),
        ("assign_sub", "x", TypeError),
    ],
)
def test_bad_assign_leaves_variable_unchanged(method, value, exc):
    v = gt.Variable([1.0, 2.0], name="v")
    with pytest.raises(exc) as e:
        getattr(v, method)(value)
    _not_panic(e)
    assert v.numpy().tolist() == [1.0, 2.0]
    assert v.shape == (2,) and v.dtype == gt.float32


def test_assign_shape_error_message():
    v = gt.Variable([1.0, 2.0], name="v")
    with pytest.raises(gt.errors.InvalidArgumentError, match=r"\[3\].*\[2\]|\[2\].*\[3\]"):
        v.assign([1.0, 2.0, 3.0])


# --- tape misuse ----------------------------------------------------------------------


def test_non_persistent_gradient_twice():
    x = gt.constant(1.0)
    with gt.GradientTape() as t:
        t.watch(x)
        y = x * x
    t.gradient(y, x)
    with pytest.raises(RuntimeError, match="non-persistent"):
        t.gradient(y, x)


def test_stop_recording_when_not_recording():
    t = gt.GradientTape()
    with pytest.raises(RuntimeError):
        with t.stop_recording():
            pass
    with t:
        pass
    with pytest.raises(RuntimeError):
        with t.stop_recording():
            pass


def test_failed_gradient_does_not_consume_persistent_tape():
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
    with pytest.raises(gt.errors.InvalidArgumentError, match=r"\[3\]"):
        t.gradient(y, x, output_gradients=gt.ones((3,)))
    assert t.gradient(y, x).numpy().tolist() == [2.0, 4.0]


def test_output_gradients_wrong_dtype():
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
    with pytest.raises((gt.errors.InvalidArgumentError, TypeError)) as e:
        t.gradient(y, x, output_gradients=gt.ones((2,), dtype=gt.float64))
    _not_panic(e)


# --- a failed op changes nothing ------------------------------------------------------


def test_failed_op_leaves_tape_unchanged():
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape() as t:
        t.watch(x)
        y = x * x
        n = t._num_nodes
        with pytest.raises(gt.errors.InvalidArgumentError):
            x + gt.ones((3,))
        with pytest.raises(gt.errors.InvalidArgumentError):
            gt.matmul(x, x)
        with pytest.raises(gt.errors.InvalidArgumentError):
            gt.reshape(y, (3,))
        with pytest.raises(TypeError):
            y + "a"
        assert t._num_nodes == n
        z = y * 3.0
    assert t.gradient(z, x).numpy().tolist() == [6.0, 12.0]


def test_failed_assign_inside_tape_leaves_everything_unchanged():
    v = gt.Variable([1.0, 2.0])
    with gt.GradientTape() as t:
        y = v * v
        n = t._num_nodes
        with pytest.raises(gt.errors.InvalidArgumentError):
            v.assign([1.0, 2.0, 3.0])
        with pytest.raises(gt.errors.InvalidArgumentError):
            v.assign_add(gt.ones((2, 2)))
        assert t._num_nodes == n
    assert v.numpy().tolist() == [1.0, 2.0]
    assert t.gradient(y, v).numpy().tolist() == [2.0, 4.0]
    assert [w is v for w in t.watched_variables()] == [True]


# --- integer edge cases never panic ---------------------------------------------------

INT32_MIN = -(2**31)


@pytest.mark.parametrize(
    "fn, expected",
    [
        (lambda: gt.constant(INT32_MIN) // -1, INT32_MIN),  # wraps, as TF's int32 math
        (lambda: gt.constant(INT32_MIN) % -1, 0),
        (lambda: gt.floordiv(gt.constant(-7), gt.constant(2)), -4),
        (lambda: gt.constant(-7) % 3, 2),
        (lambda: -gt.constant(INT32_MIN), INT32_MIN),
        (lambda: gt.abs(gt.constant(INT32_MIN)), INT32_MIN),
        (lambda: gt.constant(2**31 - 1) + 1, INT32_MIN),
        (lambda: gt.constant(2**31 - 1) * 2, -2),
        (lambda: gt.constant(INT32_MIN) - 1, 2**31 - 1),
        (lambda: gt.reduce_prod(gt.constant([2**31 - 1, 2])), -2),
        (lambda: gt.reduce_sum(gt.constant([2**31 - 1, 1])), INT32_MIN),
    ],
)
def test_integer_overflow_wraps(fn, expected):
    r = fn()
    assert r.dtype == gt.int32
    assert int(r) == expected


# --- impossible allocations -----------------------------------------------------------


def test_huge_allocation_raises_instead_of_aborting():
    # Issue 10, item 3: gt.range(0, 10**12) (8 TB) aborted the process through Rust's
    # handle_alloc_error; it raises ResourceExhaustedError (a MemoryError) now.
    import subprocess
    import sys

    code = (
        "import gradtape as gt\n"
        "try:\n"
        "    gt.range(0, 10**12)\n"
        "except gt.errors.ResourceExhaustedError as e:\n"
        "    print('raised', type(e).__name__)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr[-500:]
    assert r.stdout.startswith("raised")


def test_reduce_over_no_axes_is_identity():
    # Regression: `axis=[]` panicked in the sum kernel.
    x = gt.constant([[1.0, 2.0], [3.0, 4.0]])
    for f in (gt.reduce_sum, gt.reduce_mean, gt.reduce_max, gt.reduce_prod):
        np.testing.assert_array_equal(f(x, axis=[]).numpy(), x.numpy())


# --- the panic boundary (issue 10) ------------------------------------------------------


@pytest.mark.parametrize("at", ["call", "detached", "pool"])
def test_a_panic_inside_the_engine_becomes_internal_error(at):
    # A panic is a gradtape bug; it must surface as an ordinary exception asking for a
    # report (pyo3's PanicException derives from BaseException and escapes
    # `except Exception`), whether it happened with the GIL held, released, or on a
    # pool thread, and the engine keeps working afterwards.
    with pytest.raises(gt.errors.InternalError, match="please report") as e:
        gt._gradtape._panic_for_test(at)
    assert "deliberate panic" in str(e.value)
    assert isinstance(e.value, Exception) and isinstance(e.value, RuntimeError)
    x = gt.ones([300_000])
    assert float(gt.reduce_sum(x * 2.0)) == 600_000.0


def test_error_classes_follow_tf_names_and_python_bases():
    assert issubclass(gt.errors.ResourceExhaustedError, MemoryError)
    assert issubclass(gt.errors.InternalError, RuntimeError)
    assert issubclass(gt.errors.InvalidArgumentError, ValueError)
