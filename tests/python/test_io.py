"""Issue 17: gt.io.save_weights / load_weights over the safetensors primitive, and
interop with the safetensors package's numpy API both ways."""

import numpy as np
import pytest

import gradtape as gt

safetensors_numpy = pytest.importorskip("safetensors.numpy")


def _model():
    gt.random.set_seed(1)
    m = gt.layers.Sequential([gt.layers.Dense(3, activation="tanh"), gt.layers.Dense(1)])
    m(gt.constant(np.ones((2, 4), np.float32)))
    return m


def test_model_round_trip(tmp_path):
    m = _model()
    path = tmp_path / "w.safetensors"
    gt.io.save_weights(path, m)
    before = [v.numpy().copy() for v in m.variables]
    for v in m.variables:
        v.assign(gt.zeros_like(v))
    loaded = gt.io.load_weights(path, m)
    for v, b in zip(m.variables, before):
        np.testing.assert_array_equal(v.numpy(), b)
    names = [v.name[:-2] for v in m.variables]
    assert list(loaded) == sorted(names) or set(loaded) == set(names)


def test_file_readable_by_the_safetensors_package(tmp_path):
    m = _model()
    path = tmp_path / "w.safetensors"
    gt.io.save_weights(path, m)
    arrays = safetensors_numpy.load_file(str(path))
    assert set(arrays) == {v.name[:-2] for v in m.variables}
    for v in m.variables:
        np.testing.assert_array_equal(arrays[v.name[:-2]], v.numpy())


def test_file_written_by_the_safetensors_package_loads(tmp_path):
    path = tmp_path / "np.safetensors"
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    safetensors_numpy.save_file({"w": w, "b": np.array([0.5], np.float64)}, str(path))
    var = gt.Variable(np.zeros((2, 3), np.float32))
    loaded = gt.io.load_weights(path, {"w": var})
    np.testing.assert_array_equal(var.numpy(), w)
    assert loaded["b"].dtype == gt.float64 and loaded["b"].numpy().tolist() == [0.5]
    assert set(gt.io.load_weights(path)) == {"w", "b"}


def test_mismatches_are_errors_and_assign_nothing(tmp_path):
    path = tmp_path / "w.safetensors"
    gt.io.save_weights(path, {"a": gt.constant([1.0, 2.0]), "b": gt.constant([3.0])})
    a, b = gt.Variable([0.0, 0.0]), gt.Variable([0.0, 0.0])
    with pytest.raises(ValueError, match=r"weight 'b': the file has shape \(1,\) float32, the variable \(2,\)"):
        gt.io.load_weights(path, {"a": a, "b": b})
    assert a.numpy().tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="no weight named 'c'"):
        gt.io.load_weights(path, {"c": a})
    with pytest.raises(TypeError, match="assigns Variables"):
        gt.io.load_weights(path, {"a": gt.constant([0.0, 0.0])})
    with pytest.raises(TypeError, match="something with .variables"):
        gt.io.save_weights(path, 3.0)
    with pytest.raises(FileNotFoundError):
        gt.io.load_weights(tmp_path / "missing.safetensors")
