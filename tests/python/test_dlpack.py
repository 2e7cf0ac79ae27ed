"""Issue 17: DLPack exchange. ``Tensor.__dlpack__`` shares the tensor's memory;
``gt.from_dlpack`` copies into the engine. numpy always; PyTorch and JAX only where
installed (the bench venv), the only tests here that skip."""

import gc

import numpy as np
import pytest

import gradtape as gt

DTYPES = [np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8,
          np.uint16, np.uint32, np.uint64, np.bool_, np.complex64, np.complex128]


def _values(dt, shape=(2, 3)):
    a = np.arange(int(np.prod(shape))).reshape(shape)
    if dt is np.bool_:
        return (a % 2).astype(bool)
    if np.issubdtype(dt, np.complexfloating):
        return (a + 1j * a[::-1]).astype(dt)
    return a.astype(dt)


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_numpy_reads_every_dtype_without_a_copy(dt):
    a = _values(dt)
    t = gt.constant(a)
    assert t.__dlpack_device__() == (1, 0)
    b = np.from_dlpack(t)
    assert b.dtype == a.dtype and b.shape == a.shape
    np.testing.assert_array_equal(b, a)
    # The same memory as the tensor's own numpy view.
    view = t.numpy()
    c = np.from_dlpack(t)
    assert c.__array_interface__["data"][0] == np.from_dlpack(t).__array_interface__["data"][0]
    np.testing.assert_array_equal(c, view)


def test_memory_is_shared_and_outlives_the_tensor():
    t = gt.constant(np.arange(6.0).reshape(2, 3))
    a = np.from_dlpack(t)
    b = np.from_dlpack(t)
    assert a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
    del t
    gc.collect()
    np.testing.assert_array_equal(a, np.arange(6.0).reshape(2, 3))


def test_strided_views_keep_their_layout():
    t = gt.transpose(gt.constant(np.arange(12.0).reshape(3, 4)))
    np.testing.assert_array_equal(np.from_dlpack(t), np.arange(12.0).reshape(3, 4).T)
    s = gt.constant(np.arange(10.0))[::3]
    np.testing.assert_array_equal(np.from_dlpack(s), np.arange(10.0)[::3])
    z = gt.zeros([0, 3])
    assert np.from_dlpack(z).shape == (0, 3)
    assert np.from_dlpack(gt.constant(5.0)).shape == ()


def test_copy_true_gives_separate_memory():
    t = gt.constant([1.0, 2.0])
    a = np.from_dlpack(t)
    b = np.from_dlpack(t, copy=True)
    np.testing.assert_array_equal(a, b)
    assert a.__array_interface__["data"][0] != b.__array_interface__["data"][0]


def test_unused_capsule_frees_its_reference():
    import sys

    t = gt.constant([1.0, 2.0, 3.0])
    for _ in range(100):
        cap = t.__dlpack__()
        assert type(cap).__name__ == "PyCapsule"
        del cap
    assert sys.getrefcount(t) == 2  # `t` and getrefcount's argument


def test_other_devices_refused():
    with pytest.raises(BufferError, match="CPU"):
        gt.constant(1.0).__dlpack__(dl_device=(2, 0))


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_from_dlpack_numpy(dt):
    a = _values(dt)
    t = gt.from_dlpack(a)
    assert isinstance(t, gt.Tensor) and t.dtype.name == np.dtype(dt).name
    np.testing.assert_array_equal(t.numpy(), a)
    # A copy: changing the array later does not change the tensor.
    if dt is not np.bool_:
        a[0, 0] = a[0, 1]
        assert t.numpy()[0, 0] == _values(dt)[0, 0]


def test_from_dlpack_capsule_and_round_trip():
    x = gt.constant([[1.0, 2.0], [3.0, 4.0]])
    y = gt.from_dlpack(x.__dlpack__())
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    assert gt.from_dlpack(x) is x
    # Differentiable like any constant.
    with gt.GradientTape() as tape:
        tape.watch(y)
        z = gt.reduce_sum(y * y)
    np.testing.assert_array_equal(tape.gradient(z, y).numpy(), 2 * x.numpy())


def test_from_dlpack_rejects_non_producers():
    with pytest.raises(TypeError, match="__dlpack__"):
        gt.from_dlpack([1.0, 2.0])


def test_torch_exchange():
    torch = pytest.importorskip("torch")
    t = gt.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    pt = torch.from_dlpack(t)
    assert pt.dtype == torch.float32 and list(pt.shape) == [2, 3]
    np.testing.assert_array_equal(pt.numpy(), t.numpy())
    back = gt.from_dlpack(torch.arange(4, dtype=torch.float64) * 0.5)
    np.testing.assert_array_equal(back.numpy(), [0.0, 0.5, 1.0, 1.5])
    assert back.dtype == gt.float64


def test_jax_exchange():
    jnp = pytest.importorskip("jax.numpy")
    t = gt.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    j = jnp.from_dlpack(t)
    np.testing.assert_array_equal(np.asarray(j), t.numpy())
    back = gt.from_dlpack(jnp.arange(4, dtype=jnp.float32) * 2)
    np.testing.assert_array_equal(back.numpy(), [0.0, 2.0, 4.0, 6.0])
