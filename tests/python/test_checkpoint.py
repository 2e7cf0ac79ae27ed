"""gt.train.Checkpoint and CheckpointManager (issue 15): values and optimizer state saved
and restored, a stopped and resumed training run bit-identical to an uninterrupted one,
numbering and max_to_keep, and bad files changing nothing."""

import os

import numpy as np
import pytest

import gradtape as gt


def _model(seed=0):
    rng = np.random.default_rng(seed)
    model = gt.layers.Sequential([gt.layers.Dense(8, activation="tanh"), gt.layers.Dense(1)])
    model(gt.zeros([1, 3]))
    for v in model.variables:
        v.assign(rng.standard_normal(tuple(v.shape)).astype(np.float32) * 0.5)
    return model


def _data():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((32, 3)).astype(np.float32)
    y = np.sin(x.sum(axis=1, keepdims=True)).astype(np.float32)
    return gt.constant(x), gt.constant(y)


def _train(model, opt, steps, start=0):
    x, y = _data()
    for i in range(start, start + steps):
        xb, yb = x[(i % 4) * 8:(i % 4) * 8 + 8], y[(i % 4) * 8:(i % 4) * 8 + 8]
        with gt.GradientTape() as tape:
            loss = gt.reduce_mean(gt.square(model(xb) - yb))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))


@pytest.mark.parametrize("make_opt", [lambda: gt.optimizers.Adam(0.01), lambda: gt.optimizers.SGD(0.05, momentum=0.9)])
def test_resumed_training_is_bit_identical(make_opt, tmp_path):
    # Uninterrupted: 20 steps.
    ref_model, ref_opt = _model(), make_opt()
    _train(ref_model, ref_opt, 20)
    # Stopped after 8 steps, saved, and resumed in new objects.
    model, opt = _model(), make_opt()
    _train(model, opt, 8)
    path = gt.train.Checkpoint(model=model, optimizer=opt).save(tmp_path / "ckpt")
    model2, opt2 = _model(seed=5), make_opt()
    status = gt.train.Checkpoint(model=model2, optimizer=opt2).restore(path)
    status.assert_consumed()
    assert int(opt2.iterations.numpy()) == 8
    _train(model2, opt2, 12, start=8)
    for a, b in zip(ref_model.variables, model2.variables):
        assert a.numpy().tobytes() == b.numpy().tobytes(), a.name
    assert int(opt2.iterations.numpy()) == 20
    for (_, sa), (_, sb) in zip(sorted(ref_opt._slots.items()), sorted(opt2._slots.items())):
        for key in sa:
            assert sa[key].numpy().tobytes() == sb[key].numpy().tobytes()


def test_save_numbers_paths_and_tracks_the_latest(tmp_path):
    v = gt.Variable(1.0)
    ckpt = gt.train.Checkpoint(v=v)
    prefix = os.path.join(tmp_path, "ckpt")
    p1 = ckpt.save(prefix)
    v.assign(2.0)
    p2 = ckpt.save(prefix)
    assert (os.path.basename(p1), os.path.basename(p2)) == ("ckpt-1", "ckpt-2")
    assert os.path.exists(p2 + ".safetensors")
    assert gt.train.latest_checkpoint(tmp_path) == p2
    assert int(ckpt.save_counter.numpy()) == 2
    ckpt.restore(p1).assert_consumed()
    assert float(v) == 1.0
    # The save counter is restored too: the next save is number 2 again.
    assert int(ckpt.save_counter.numpy()) == 1
    # write/read: no numbering.
    w = ckpt.write(os.path.join(tmp_path, "plain"))
    assert w.endswith("plain") and os.path.exists(w + ".safetensors")
    v.assign(9.0)
    ckpt.read(w)
    assert float(v) == 1.0
    assert ckpt.restore(None) is not None
    assert gt.train.latest_checkpoint(tmp_path / "empty") is None


def test_checkpoint_names_are_attribute_paths_and_files_are_safetensors(tmp_path):
    from gradtape import _safetensors

    model = _model()
    opt = gt.optimizers.Adam(0.1)
    _train(model, opt, 1)
    path = gt.train.Checkpoint(model=model, optimizer=opt).write(tmp_path / "c")
    tensors, meta = _safetensors.load_file_with_metadata(path + ".safetensors")
    assert sorted(meta) == ["format", "object_graph", "version"]
    assert meta["format"] == "gradtape.checkpoint" and meta["version"] == "1"
    assert "model/layers/0/kernel" in tensors and "optimizer/iterations" in tensors
    assert "optimizer/.OPTIMIZER_SLOT/model/layers/0/kernel/m" in tensors
    np.testing.assert_array_equal(tensors["model/layers/1/bias"].numpy(), model.layers[1].bias.numpy())


def test_restore_reports_unused_and_unmatched(tmp_path):
    a, b = gt.Variable(1.0), gt.Variable(2.0)
    path = gt.train.Checkpoint(a=a, b=b).write(tmp_path / "c")
    status = gt.train.Checkpoint(a=a).restore(path)
    with pytest.raises(AssertionError, match="Unresolved"):
        status.assert_consumed()
    status.assert_existing_objects_matched()
    status = gt.train.Checkpoint(a=a, c=gt.Variable(3.0)).restore(path)
    with pytest.raises(AssertionError, match="no value"):
        status.assert_existing_objects_matched()
    status.expect_partial()


def test_bad_checkpoints_change_nothing(tmp_path):
    v = gt.Variable([1.0, 2.0])
    w = gt.Variable(5.0)
    path = gt.train.Checkpoint(v=v, w=w).write(tmp_path / "c")
    with open(path + ".safetensors", "rb") as f:
        raw = f.read()
    v.assign([7.0, 8.0])
    w.assign(6.0)
    bad = tmp_path / "bad.safetensors"
    for data in (raw[:-3], raw[:20], b"junk"):
        bad.write_bytes(data)
        with pytest.raises(gt.errors.DataLossError):
            gt.train.Checkpoint(v=v, w=w).restore(tmp_path / "bad")
    with pytest.raises(gt.errors.NotFoundError, match="Failed to find any matching files"):
        gt.train.Checkpoint(v=v).restore(tmp_path / "missing")
    # A value of another shape: refused before any variable changes.
    other = gt.train.Checkpoint(v=gt.Variable([1.0, 2.0, 3.0]), w=gt.Variable(0.0)).write(tmp_path / "o")
    with pytest.raises(ValueError, match="shape|\\(3,\\)"):
        gt.train.Checkpoint(v=v, w=w).restore(other)
    np.testing.assert_array_equal(v.numpy(), [7.0, 8.0])
    assert float(w) == 6.0
    # A safetensors file that is not a checkpoint, and another version.
    from gradtape import _safetensors

    _safetensors.save_file({"v": np.zeros(2, np.float32)}, tmp_path / "x.safetensors")
    with pytest.raises(gt.errors.DataLossError, match="not a gradtape checkpoint"):
        gt.train.Checkpoint(v=v).restore(tmp_path / "x")
    _safetensors.save_file({"v": np.zeros(2, np.float32)}, tmp_path / "y.safetensors",
                           {"format": "gradtape.checkpoint", "version": "9"})
    with pytest.raises(gt.errors.DataLossError, match="version"):
        gt.train.Checkpoint(v=v).restore(tmp_path / "y")
    with pytest.raises(ValueError, match="trackable"):
        gt.train.Checkpoint(v=3.0)


def test_manager_keeps_max_to_keep(tmp_path):
    v = gt.Variable(0.0)
    ckpt = gt.train.Checkpoint(v=v)
    mgr = gt.train.CheckpointManager(ckpt, tmp_path, max_to_keep=2)
    assert mgr.latest_checkpoint is None and mgr.restore_or_initialize() is None
    paths = []
    for i in range(4):
        v.assign(float(i))
        paths.append(mgr.save())
    assert [os.path.basename(p) for p in paths] == ["ckpt-1", "ckpt-2", "ckpt-3", "ckpt-4"]
    assert mgr.checkpoints == paths[2:]
    assert not os.path.exists(paths[0] + ".safetensors") and os.path.exists(paths[3] + ".safetensors")
    assert gt.train.latest_checkpoint(tmp_path) == paths[3]
    # A new manager over the directory sees the kept checkpoints.
    mgr2 = gt.train.CheckpointManager(gt.train.Checkpoint(v=v), tmp_path, max_to_keep=2)
    assert mgr2.checkpoints == paths[2:]
    v.assign(-1.0)
    assert mgr2.restore_or_initialize() == paths[3]
    assert float(v) == 3.0
    assert os.path.basename(mgr.save(checkpoint_number=100)) == "ckpt-100"
    with pytest.raises(ValueError):
        gt.train.CheckpointManager(ckpt, tmp_path, max_to_keep=0)
    with pytest.raises(TypeError):
        gt.train.CheckpointManager(v, tmp_path, max_to_keep=1)
