"""Issue 15: TF's checkpoint readers (``gt.train.list_variables``, ``load_variable``,
``load_checkpoint``, ``get_checkpoint_state``, ``checkpoints_iterator``) with TF's
object-based key names, and deferred restoration for a plain ``gt.Module`` that makes
its variables on its first call."""

import json
import os
import threading
import time

import numpy as np
import pytest

import gradtape as gt


class Lazy(gt.Module):
    """Makes its variables on the first call (TF's tf.Module idiom)."""

    def __init__(self, units):
        super().__init__()
        self.units = units
        self.w = None

    def __call__(self, x):
        if self.w is None:
            n = x.shape[-1]
            self.w = gt.Variable(gt.ones([n, self.units]), name="w")
            self.b = gt.Variable(gt.zeros([self.units]), name="b")
        return x @ self.w + self.b


def _trained_checkpoint(tmp_path):
    m = gt.keras.Sequential([gt.keras.layers.Dense(2)])
    opt = gt.optimizers.Adam(0.1)
    x = gt.constant([[1.0, 2.0, 3.0]])
    with gt.GradientTape() as tape:
        loss = gt.reduce_sum(m(x) ** 2)
    opt.apply_gradients(zip(tape.gradient(loss, m.trainable_variables), m.trainable_variables))
    ckpt = gt.train.Checkpoint(model=m, optimizer=opt)
    return ckpt.save(tmp_path / "ckpt"), m, opt


def test_list_and_load_with_tf_names(tmp_path):
    path, m, opt = _trained_checkpoint(tmp_path)
    names = dict(gt.train.list_variables(path))
    kernel_path = next(n for n in names if n.endswith("kernel/.ATTRIBUTES/VARIABLE_VALUE") and "SLOT" not in n)
    var_path = kernel_path[: -len("/.ATTRIBUTES/VARIABLE_VALUE")]
    assert names[kernel_path] == [3, 2]
    assert names["save_counter/.ATTRIBUTES/VARIABLE_VALUE"] == []
    assert names["optimizer/iterations/.ATTRIBUTES/VARIABLE_VALUE"] == []
    assert names[f"{var_path}/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE"] == [3, 2]
    assert names[f"{var_path}/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE"] == [3, 2]
    assert list(names) == sorted(names)
    kernel = m.layers[0].kernel.numpy()
    np.testing.assert_array_equal(gt.train.load_variable(path, kernel_path), kernel)
    # gradtape's own name, and the directory (its latest checkpoint), work too.
    np.testing.assert_array_equal(gt.train.load_variable(str(tmp_path), var_path), kernel)
    assert gt.train.load_variable(path, "save_counter/.ATTRIBUTES/VARIABLE_VALUE") == 1
    reader = gt.train.load_checkpoint(path)
    assert reader.has_tensor(kernel_path) and not reader.has_tensor("nope")
    assert reader.get_variable_to_shape_map()[kernel_path] == [3, 2]
    assert reader.get_variable_to_dtype_map()[kernel_path] == gt.float32
    assert reader.get_variable_to_dtype_map()["save_counter/.ATTRIBUTES/VARIABLE_VALUE"] == gt.int64
    np.testing.assert_array_equal(reader.get_tensor(kernel_path), kernel)
    with pytest.raises(gt.errors.NotFoundError, match="Key nope not found in checkpoint"):
        reader.get_tensor("nope")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="Couldn't find"):
        gt.train.list_variables(empty)
    (tmp_path / "bad.safetensors").write_bytes(b"\x00" * 3)
    with pytest.raises(gt.errors.DataLossError):
        gt.train.list_variables(tmp_path / "bad")


def test_get_checkpoint_state(tmp_path):
    assert gt.train.get_checkpoint_state(tmp_path) is None
    v = gt.Variable(1.0)
    mgr = gt.train.CheckpointManager(gt.train.Checkpoint(v=v), tmp_path, max_to_keep=2)
    for _ in range(3):
        mgr.save()
    state = gt.train.get_checkpoint_state(tmp_path)
    assert state.model_checkpoint_path == os.path.join(str(tmp_path), "ckpt-3")
    assert state.all_model_checkpoint_paths == [os.path.join(str(tmp_path), f"ckpt-{i}") for i in (2, 3)]
    assert state.model_checkpoint_path == gt.train.latest_checkpoint(tmp_path)


def test_checkpoints_iterator_yields_new_checkpoints_and_times_out(tmp_path):
    v = gt.Variable(1.0)
    ckpt = gt.train.Checkpoint(v=v)
    first = ckpt.save(tmp_path / "ckpt")
    it = gt.train.checkpoints_iterator(tmp_path, timeout=0.5)
    assert next(it) == first
    # A checkpoint written while the iterator waits is yielded.
    writer = threading.Timer(0.1, lambda: ckpt.save(tmp_path / "ckpt"))
    writer.start()
    second = next(it)
    writer.join()
    assert second.endswith("ckpt-2")
    # Nothing new for `timeout` seconds: the iteration ends (no timeout_fn).
    start = time.time()
    assert list(it) == []
    assert 0.4 < time.time() - start < 5
    # timeout_fn is asked each time; returning True ends it.
    calls = []
    it2 = gt.train.checkpoints_iterator(tmp_path, timeout=0.1, timeout_fn=lambda: calls.append(1) or len(calls) >= 2)
    assert list(it2) == [second]
    assert len(calls) == 2


def test_deferred_restore_for_a_plain_module(tmp_path):
    x = gt.constant([[1.0, 2.0]])
    m = Lazy(3)
    m(x)
    m.w.assign(gt.reshape(gt.range(6, dtype=gt.float32), [2, 3]))
    m.b.assign([1.0, -1.0, 0.5])
    path = gt.train.Checkpoint(model=m).save(tmp_path / "ckpt")
    want = m(x).numpy()

    fresh = Lazy(3)
    status = gt.train.Checkpoint(model=fresh).restore(path)
    with pytest.raises(AssertionError, match="Unresolved"):
        status.assert_consumed()
    status.assert_existing_objects_matched()
    # The first call makes the variables; they take the saved values as they are set.
    np.testing.assert_array_equal(fresh(x).numpy(), want)
    status.assert_consumed()
    np.testing.assert_array_equal(fresh.w.numpy(), m.w.numpy())
    np.testing.assert_array_equal(fresh.b.numpy(), m.b.numpy())


def test_deferred_restore_for_a_nested_plain_module_and_mismatch(tmp_path):
    class Outer(gt.Module):
        def __init__(self):
            super().__init__()
            self.inner = Lazy(2)

        def __call__(self, x):
            return self.inner(x)

    x = gt.constant([[1.0, 2.0, 3.0]])
    m = Outer()
    m(x)
    m.inner.w.assign(gt.fill([3, 2], 0.25))
    path = gt.train.Checkpoint(model=m).save(tmp_path / "ckpt")
    fresh = Outer()
    status = gt.train.Checkpoint(model=fresh).restore(path)
    np.testing.assert_array_equal(fresh(x).numpy(), m(x).numpy())
    status.assert_consumed()
    # A waiting value whose variable appears with another shape raises there.
    wrong = Outer()
    gt.train.Checkpoint(model=wrong).restore(path)
    with pytest.raises(ValueError, match="Checkpoint value"):
        wrong(gt.constant([[1.0, 2.0]]))


def test_missing_files_and_keys_raise_not_found_as_tf(tmp_path):
    # TF 2.21: tf.errors.NotFoundError (an OpError), with these messages.
    assert issubclass(gt.errors.NotFoundError, gt.errors.OpError)
    assert not issubclass(gt.errors.NotFoundError, ValueError)
    path = gt.train.Checkpoint(v=gt.Variable([1.0, 2.0])).write(tmp_path / "c")
    with pytest.raises(gt.errors.NotFoundError) as e:
        gt.train.load_variable(path, "nope")
    assert str(e.value) == "Key nope not found in checkpoint"
    assert e.value.error_code == gt.errors.NOT_FOUND == 5 and e.value.op is None
    missing = str(tmp_path / "missing")
    for read in (gt.train.load_checkpoint, gt.train.list_variables, lambda p: gt.train.load_variable(p, "v")):
        with pytest.raises(gt.errors.NotFoundError) as e:
            read(missing)
        want = f"Unsuccessful TensorSliceReader constructor: Failed to find any matching files for {missing}"
        assert str(e.value) == want
    err = gt.errors.NotFoundError(None, None, "gone")
    assert err.message == "gone" and err.node_def is None


def test_object_graph_as_tf(tmp_path):
    # TF 2.21: tf.train.list_variables of tf.train.Checkpoint(v=tf.Variable([1., 2.])).write(...)
    path = gt.train.Checkpoint(v=gt.Variable([1.0, 2.0])).write(tmp_path / "c")
    want = [("_CHECKPOINTABLE_OBJECT_GRAPH", []), ("v/.ATTRIBUTES/VARIABLE_VALUE", [2])]
    assert gt.train.list_variables(path) == want
    reader = gt.train.load_checkpoint(path)
    assert reader.has_tensor("_CHECKPOINTABLE_OBJECT_GRAPH")
    assert reader.get_variable_to_dtype_map()["_CHECKPOINTABLE_OBJECT_GRAPH"] == gt.string
    graph = json.loads(gt.train.load_variable(path, "_CHECKPOINTABLE_OBJECT_GRAPH"))
    root, v = graph["nodes"]
    assert root["children"] == [{"node_id": 1, "local_name": "v"}]
    assert v["attributes"][0]["name"] == "VARIABLE_VALUE"
    assert v["attributes"][0]["checkpoint_key"] == "v/.ATTRIBUTES/VARIABLE_VALUE"


def test_object_graph_of_a_trained_model(tmp_path):
    path, m, opt = _trained_checkpoint(tmp_path)
    graph = json.loads(gt.train.load_checkpoint(path).get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
    nodes = graph["nodes"]
    keys = {a["checkpoint_key"]: i for i, n in enumerate(nodes) for a in n["attributes"]}
    # Every saved value is exactly one node's attribute, reachable from the root.
    assert sorted(keys) == sorted(k for k, _ in gt.train.list_variables(path) if k != "_CHECKPOINTABLE_OBJECT_GRAPH")
    seen, todo = {0}, [0]
    while todo:
        for c in nodes[todo.pop()]["children"]:
            seen.add(c["node_id"])
            todo.append(c["node_id"])
    slots = [s for n in nodes for s in n["slot_variables"]]
    assert {s["slot_name"] for s in slots} == {"m", "v"}
    assert all(s["original_variable_node_id"] in seen for s in slots)
    assert set(keys.values()) <= seen | {s["slot_variable_node_id"] for s in slots}
    # A file without the graph (as written before it was kept) still reads.
    from gradtape import _safetensors

    raw, meta = _safetensors.load_file_with_metadata(path + ".safetensors")
    del meta["object_graph"]
    _safetensors.save_file(raw, str(tmp_path / "old.safetensors"), meta)
    names = [n for n, _ in gt.train.list_variables(tmp_path / "old")]
    assert names == sorted(keys)
    m2_path = tmp_path / "old"
    assert gt.train.load_checkpoint(m2_path).has_tensor("_CHECKPOINTABLE_OBJECT_GRAPH") is False
