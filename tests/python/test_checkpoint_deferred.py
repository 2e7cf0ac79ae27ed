"""Deferred restoration (TF's): ``gt.train.Checkpoint(model=m).restore(path)`` before
``m`` has its variables (a Keras model built on its first call) assigns each saved value
when its variable is created, before the layer first computes; the status's
``assert_consumed`` / ``assert_existing_objects_matched`` / ``expect_partial`` behave as
TF's."""

import numpy as np
import pytest

import gradtape as gt


def _model(seed):
    gt.random.set_seed(seed)
    return gt.keras.Sequential([gt.keras.layers.Dense(4, activation="relu"), gt.keras.layers.Dense(1)])


def _data():
    rng = np.random.default_rng(0)
    return (gt.constant(rng.standard_normal((8, 3)).astype(np.float32)),
            gt.constant(rng.standard_normal((8, 1)).astype(np.float32)))


def _step(model, opt, x, y):
    with gt.GradientTape() as tape:
        loss = gt.reduce_mean((model(x) - y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return float(loss)


def test_restore_before_the_model_is_built_assigns_on_creation(tmp_path):
    x, y = _data()
    m = _model(1)
    opt = gt.optimizers.Adam(0.05)
    for _ in range(3):
        _step(m, opt, x, y)
    path = gt.train.Checkpoint(model=m).save(tmp_path / "ckpt")

    fresh = _model(2)  # other initial values, no variables yet
    assert fresh.variables == []
    status = gt.train.Checkpoint(model=fresh).restore(path)
    with pytest.raises(AssertionError, match="Unresolved"):
        status.assert_consumed()
    status.assert_existing_objects_matched()  # nothing exists that lacks a value
    # The first call already computes with the restored values.
    np.testing.assert_array_equal(fresh(x).numpy(), m(x).numpy())
    status.assert_consumed()
    for a, b in zip(fresh.variables, m.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_expect_partial_and_existing_objects(tmp_path):
    x, y = _data()
    m = _model(1)
    opt = gt.optimizers.SGD(0.1)
    _step(m, opt, x, y)
    path = gt.train.Checkpoint(model=m, optimizer=opt).save(tmp_path / "ckpt")
    fresh = _model(3)
    status = gt.train.Checkpoint(model=fresh).restore(path)
    fresh(x)
    # The optimizer's values have no object here: consumed fails, partial is fine.
    with pytest.raises(AssertionError, match="optimizer"):
        status.assert_consumed()
    assert status.expect_partial() is status
    status.assert_existing_objects_matched()
    # A variable the file does not hold is an unmatched existing object.
    extra = gt.train.Checkpoint(model=fresh, more=gt.Variable(1.0))
    with pytest.raises(AssertionError, match="more"):
        extra.restore(path).assert_existing_objects_matched()


class Net(gt.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = gt.keras.layers.Dense(5, activation="tanh")
        self.out = gt.keras.layers.Dense(2)

    def call(self, x):
        return self.out(self.hidden(x))


def test_a_resumed_run_with_deferred_optimizer_slots_is_bit_identical(tmp_path):
    x, _ = _data()
    y = gt.constant(np.arange(16, dtype=np.float32).reshape(8, 2) / 10)

    def fresh_run(seed):
        gt.random.set_seed(seed)
        return Net(), gt.optimizers.Adam(0.02)

    full, full_opt = fresh_run(1)
    for _ in range(6):
        _step(full, full_opt, x, y)

    a, a_opt = fresh_run(1)
    for _ in range(3):
        _step(a, a_opt, x, y)
    path = gt.train.Checkpoint(model=a, optimizer=a_opt).save(tmp_path / "ckpt")

    b, b_opt = fresh_run(7)  # unbuilt: variables and Adam's slots made later
    status = gt.train.Checkpoint(model=b, optimizer=b_opt).restore(path)
    assert int(b_opt.iterations) == 3
    for _ in range(3):
        _step(b, b_opt, x, y)
    status.assert_consumed()
    for u, v in zip(b.variables, full.variables):
        np.testing.assert_array_equal(u.numpy(), v.numpy())


def test_a_deferred_value_of_the_wrong_shape_raises_when_the_variable_appears(tmp_path):
    x, _ = _data()
    m = _model(1)
    m(x)
    path = gt.train.Checkpoint(model=m).save(tmp_path / "ckpt")
    other = gt.keras.Sequential([gt.keras.layers.Dense(6), gt.keras.layers.Dense(1)])
    gt.train.Checkpoint(model=other).restore(path)
    with pytest.raises(ValueError, match=r"is float32 \(4,\) but the variable is float32 \(6,\)"):
        other(x)
