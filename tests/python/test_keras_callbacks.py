"""Model.fit's callbacks (Callback, History, EarlyStopping, ModelCheckpoint,
LambdaCallback), sample_weight / class_weight in fit and evaluate, validation_split,
and loss_weights of multi-output models (issue 16). The expected numbers are Keras
3.15's (TF 2.21), from the same models, data and initial weights."""

import os
import warnings

import numpy as np
import pytest

import gradtape as gt

keras = gt.keras

X = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5], [-2.0, 1.0], [1.0, 1.0], [2.0, 0.0]], np.float32)
Y = np.array([[1.0], [0.0], [1.0], [0.0], [1.0], [0.0]], np.float32)
SW = np.array([1.0, 2.0, 0.5, 0.0, 3.0, 1.0], np.float32)


def _model(lr=0.1, loss="mse", **compile_kw):
    m = keras.Sequential(
        [
            keras.Input((2,)),
            keras.layers.Dense(
                1, kernel_initializer=keras.initializers.Constant([[0.1], [-0.2]]), bias_initializer="zeros"
            ),
        ]
    )
    m.compile(keras.optimizers.SGD(lr), loss, **compile_kw)
    return m


def _two_outputs():
    inp = keras.Input((2,))
    a = keras.layers.Dense(1, name="a", kernel_initializer=keras.initializers.Constant([[0.1], [-0.2]]))(inp)
    b = keras.layers.Dense(1, name="b", kernel_initializer=keras.initializers.Constant([[0.3], [0.4]]))(inp)
    return keras.Model(inp, [a, b])


def _weights(m):
    return [np.asarray(w).tolist() for w in m.get_weights()]


def _close(got, want, rtol=1e-5, atol=1e-6):
    assert set(got) == set(want), (sorted(got), sorted(want))
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=rtol, atol=atol, err_msg=k)


class Recorder(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.calls = []

    def on_train_begin(self, logs=None):
        self.calls.append(("train_begin", logs))

    def on_train_end(self, logs=None):
        self.calls.append(("train_end", logs))

    def on_epoch_begin(self, epoch, logs=None):
        self.calls.append(("epoch_begin", epoch, logs))

    def on_epoch_end(self, epoch, logs=None):
        self.calls.append(("epoch_end", epoch, logs))

    def on_train_batch_begin(self, batch, logs=None):
        self.calls.append(("batch_begin", batch, logs))

    def on_train_batch_end(self, batch, logs=None):
        self.calls.append(("batch_end", batch, logs))

    def on_test_begin(self, logs=None):
        self.calls.append(("test_begin", logs))

    def on_test_end(self, logs=None):
        self.calls.append(("test_end", logs))


def test_callback_order_logs_params_and_history():
    m = _model(metrics=["mae"])
    rec = Recorder()
    h = m.fit(X, Y, batch_size=4, epochs=2, shuffle=False, verbose=0, validation_data=(X[:2], Y[:2]), callbacks=[rec])
    # Keras 3.15's sequence and logs for the same model and data.
    e0 = {"loss": 0.6548041105270386, "mae": 0.7208333015441895, "val_loss": 0.2381921410560608,
          "val_mae": 0.4808749854564667}
    e1 = {"loss": 0.24263811111450195, "mae": 0.4437750279903412, "val_loss": 0.052309826016426086,
          "val_mae": 0.22671188414096832}
    want = [
        ("train_begin", {}),
        ("epoch_begin", 0, {}),
        ("batch_begin", 0, {}),
        ("batch_end", 0, {"loss": 0.8006249070167542, "mae": 0.8125}),
        ("batch_begin", 1, {}),
        ("batch_end", 1, {"loss": e0["loss"], "mae": e0["mae"]}),
        ("test_begin", {}),
        ("test_end", {"loss": e0["val_loss"], "mae": e0["val_mae"]}),
        ("epoch_end", 0, e0),
        ("epoch_begin", 1, {}),
        ("batch_begin", 0, {}),
        ("batch_end", 0, {"loss": 0.25631874799728394, "mae": 0.43556249141693115}),
        ("batch_begin", 1, {}),
        ("batch_end", 1, {"loss": e1["loss"], "mae": e1["mae"]}),
        ("test_begin", {}),
        ("test_end", {"loss": e1["val_loss"], "mae": e1["val_mae"]}),
        ("epoch_end", 1, e1),
        ("train_end", e1),
    ]
    assert [c[:-1] for c in rec.calls] == [w[:-1] for w in want]
    for got, w in zip(rec.calls, want):
        _close(got[-1], w[-1])
        assert all(type(v) is float for v in got[-1].values())
    assert rec.params == {"verbose": 0, "epochs": 2, "steps": 2}
    assert rec.model is m
    assert isinstance(h, keras.callbacks.History) and m.history is h
    assert h.epoch == [0, 1]
    _close(h.history, {k: [e0[k], e1[k]] for k in e0})


def test_lambda_callback_and_keras2_batch_names():
    seen = []
    cb = keras.callbacks.LambdaCallback(
        on_train_begin=lambda logs: seen.append("begin"),
        on_epoch_begin=lambda epoch, logs: seen.append(("eb", epoch)),
        on_epoch_end=lambda epoch, logs: seen.append(("ee", epoch, round(logs["loss"], 6))),
        on_train_batch_end=lambda batch, logs: seen.append(("b", batch)),
        on_train_end=lambda logs: seen.append("end"),
    )
    _model().fit(X, Y, batch_size=4, epochs=1, shuffle=False, verbose=0, callbacks=[cb])
    assert seen == ["begin", ("eb", 0), ("b", 0), ("b", 1), ("ee", 0, 0.654804), "end"]

    class Old(keras.callbacks.Callback):  # Keras 2's on_batch_end: on_train_batch_end calls it
        def __init__(self):
            super().__init__()
            self.batches = []

        def on_batch_end(self, batch, logs=None):
            self.batches.append((batch, round(logs["loss"], 6)))

    old = Old()
    _model().fit(X, Y, batch_size=4, epochs=1, shuffle=False, verbose=0, callbacks=[old])
    assert old.batches == [(0, 0.800625), (1, 0.654804)]
    with pytest.raises(TypeError, match="callable"):
        keras.callbacks.LambdaCallback(on_epoch_end=3)


def test_stop_training_from_a_batch_callback():
    class Stop(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            self.model.stop_training = True

    h = _model().fit(X, Y, batch_size=2, epochs=5, shuffle=False, verbose=0, callbacks=[Stop()])
    assert h.epoch == [0]
    np.testing.assert_allclose(h.history["loss"], [0.97], rtol=1e-6)  # the first batch only


def test_callbacks_must_be_callbacks():
    with pytest.raises(TypeError, match="Callback"):
        _model().fit(X, Y, verbose=0, callbacks=[object()])


class _Fake:
    """A model stand-in whose weights are the epoch number (as the Keras check)."""

    def __init__(self):
        self.w = 0
        self.stop_training = False
        self.metrics = []

    def get_weights(self):
        return [self.w]

    def set_weights(self, w):
        self.w = w[0]


# (arguments, monitored values) -> Keras 3.15's epochs run, stopped_epoch, best, best_epoch, wait, final weights
EARLY = [
    (dict(monitor="val_loss", patience=2), [1.0, 0.9, 0.95, 0.91, 0.8], ([0, 1, 2, 3], 3, 0.9, 1, 2, 3)),
    (dict(monitor="val_loss", patience=1, min_delta=0.05), [1.0, 0.9, 0.87, 0.86, 0.7], ([0, 1, 2], 2, 0.9, 1, 1, 2)),
    (
        dict(monitor="acc", mode="max", patience=1, restore_best_weights=True),
        [0.5, 0.7, 0.6, 0.65, 0.9],
        ([0, 1, 2], 2, 0.7, 1, 1, 1),
    ),
    (dict(monitor="val_loss", patience=0, baseline=0.5), [1.0, 0.9, 0.8], ([0, 1, 2], 0, 0.8, 2, 3, 2)),
    (dict(monitor="val_loss", patience=0, start_from_epoch=2), [1.0, 1.1, 1.2, 1.3], ([0, 1, 2, 3], 3, 1.2, 2, 1, 3)),
    (
        dict(monitor="val_loss", patience=1, restore_best_weights=True),
        [1.0, 0.5, 0.7, 0.8, 0.2],
        ([0, 1, 2], 2, 0.5, 1, 1, 1),
    ),
]


@pytest.mark.parametrize("kw,values,want", EARLY)
def test_early_stopping_rule(kw, values, want):
    es = keras.callbacks.EarlyStopping(**kw)
    m = _Fake()
    es.set_model(m)
    es.on_train_begin()
    ran = []
    for epoch, v in enumerate(values):
        m.w = epoch
        es.on_epoch_end(epoch, {kw["monitor"]: v})
        ran.append(epoch)
        if m.stop_training:
            break
    es.on_train_end()
    assert (ran, es.stopped_epoch, es.best, es.best_epoch, es.wait, m.w) == want


def test_early_stopping_in_fit_restores_best_weights(capsys):
    m = _model(lr=0.45)  # diverges after the second epoch
    es = keras.callbacks.EarlyStopping(monitor="loss", patience=1, restore_best_weights=True, verbose=1)
    h = m.fit(X, Y, batch_size=6, epochs=20, shuffle=False, verbose=0, callbacks=[es])
    np.testing.assert_allclose(h.history["loss"], [0.7420832514762878, 0.3090277910232544, 0.3655433654785156],
                               rtol=1e-5)
    assert h.epoch == [0, 1, 2] and es.stopped_epoch == 2 and es.best_epoch == 1
    np.testing.assert_allclose(m.get_weights()[0], [[-0.11796867847442627], [0.26228126883506775]], rtol=1e-5)
    np.testing.assert_allclose(m.get_weights()[1], [0.08831250667572021], rtol=1e-5)
    out = capsys.readouterr().out
    assert "Epoch 3: early stopping" in out
    assert "Restoring model weights from the end of the best epoch: 2." in out


def test_early_stopping_mode_auto_and_missing_monitor():
    m = _model(metrics=["accuracy"])
    es = keras.callbacks.EarlyStopping(monitor="val_accuracy", patience=0)
    m.fit(X, Y, epochs=1, verbose=0, validation_data=(X, Y), callbacks=[es])
    assert es.monitor_op(2, 1)  # accuracy: higher is better
    es = keras.callbacks.EarlyStopping(monitor="val_loss")
    with pytest.warns(UserWarning, match="not available"):
        m.fit(X, Y, epochs=2, verbose=0, callbacks=[es])  # no validation data: no val_loss
    with pytest.raises(ValueError, match="mode='max'"):
        m.fit(X, Y, epochs=1, verbose=0, callbacks=[keras.callbacks.EarlyStopping(monitor="something")])
    with pytest.warns(UserWarning, match="unknown"):
        keras.callbacks.EarlyStopping(mode="up")


def test_model_checkpoint_save_best_only(tmp_path):
    m = _model(lr=0.45)
    pattern = os.path.join(tmp_path, "ck-{epoch:02d}-{loss:.3f}.weights.h5")
    ck = keras.callbacks.ModelCheckpoint(pattern, monitor="loss", save_best_only=True, save_weights_only=True)
    h = m.fit(X, Y, batch_size=6, epochs=6, shuffle=False, verbose=0, callbacks=[ck])
    # Keras 3.15 writes the same two files (the loss improves at epochs 1 and 2 only).
    assert sorted(os.listdir(tmp_path)) == ["ck-01-0.742.weights.h5", "ck-02-0.309.weights.h5"]
    np.testing.assert_allclose(
        h.history["loss"],
        [0.7420832514762878, 0.3090277910232544, 0.3655433654785156, 1.1308095455169678, 4.9144978523254395,
         23.056886672973633],
        rtol=1e-4,
    )
    # The best file holds the weights after epoch 2 (EarlyStopping's restored ones above).
    fresh = _model()
    fresh.load_weights(os.path.join(tmp_path, "ck-02-0.309.weights.h5"))
    np.testing.assert_allclose(fresh.get_weights()[0], [[-0.11796867847442627], [0.26228126883506775]], rtol=1e-5)


def test_model_checkpoint_every_epoch_and_every_n_batches(tmp_path, capsys):
    m = _model()
    path = os.path.join(tmp_path, "sub", "last.weights.h5")
    ck = keras.callbacks.ModelCheckpoint(path, save_weights_only=True, verbose=1)
    m.fit(X, Y, batch_size=4, epochs=2, shuffle=False, verbose=0, callbacks=[ck])
    fresh = _model()
    fresh.load_weights(path)
    for a, b in zip(fresh.get_weights(), m.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert f"Epoch 2: saving model to {path}" in capsys.readouterr().out
    batches = os.path.join(tmp_path, "b-{epoch}-{batch}.weights.h5")
    ck = keras.callbacks.ModelCheckpoint(batches, save_weights_only=True, save_freq=3)
    _model().fit(X, Y, batch_size=2, epochs=2, shuffle=False, verbose=0, callbacks=[ck])
    assert sorted(f for f in os.listdir(tmp_path) if f.startswith("b-")) == ["b-1-3.weights.h5", "b-2-3.weights.h5"]


def test_model_checkpoint_errors(tmp_path):
    with pytest.raises(ValueError, match=r"must end in `\.weights\.h5`"):
        keras.callbacks.ModelCheckpoint("a.h5", save_weights_only=True)
    with pytest.raises(ValueError, match="save_weights_only=True"):
        keras.callbacks.ModelCheckpoint("a.keras")
    with pytest.raises(ValueError, match="save_freq"):
        keras.callbacks.ModelCheckpoint("a.weights.h5", save_weights_only=True, save_freq="batch")
    ck = keras.callbacks.ModelCheckpoint(os.path.join(tmp_path, "{nope}.weights.h5"), save_weights_only=True)
    with pytest.raises(KeyError, match="Failed to format"):
        _model().fit(X, Y, epochs=1, verbose=0, callbacks=[ck])
    with pytest.raises(RuntimeError, match="fit"):
        keras.callbacks.ModelCheckpoint("a.weights.h5", save_weights_only=True).on_epoch_end(0, {})


def test_fit_sample_weight_and_weighted_metrics():
    m = _model(metrics=["mae"], weighted_metrics=["mse"])
    h = m.fit(X, Y, batch_size=4, epochs=2, shuffle=False, verbose=0, sample_weight=SW)
    _close(
        h.history,
        {
            "loss": [0.8979125022888184, 0.38529065251350403],
            "mae": [0.7141666412353516, 0.35529065132141113],  # not weighted
            "mse": [0.7183300256729126, 0.30823251605033875],  # weighted
        },
    )
    np.testing.assert_allclose(m.get_weights()[0], [[0.0857059508562088], [0.4767271876335144]], rtol=1e-5)
    np.testing.assert_allclose(m.get_weights()[1], [0.32068997621536255], rtol=1e-5)


def test_evaluate_sample_weight():
    m = _model(metrics=["mae"], weighted_metrics=["mse"])
    got = m.evaluate(X, Y, sample_weight=SW, batch_size=4, verbose=0, return_dict=True)
    _close(got, {"loss": 1.0685416460037231, "mae": 0.7583333849906921, "mse": 0.8548333644866943})


def test_fit_class_weight():
    m = _model(metrics=["mae"])
    h = m.fit(X, Y, batch_size=4, epochs=2, shuffle=False, verbose=0, class_weight={0: 0.5, 1: 2.0})
    _close(h.history, {"loss": [1.0591691732406616, 0.19132232666015625], "mae": [0.7233333587646484,
                                                                                   0.38002756237983704]})
    np.testing.assert_allclose(m.get_weights()[0], [[0.1780456304550171], [0.3109956383705139]], rtol=1e-5)
    # One-hot labels: the class is the argmax; absent classes weigh 1.
    xs = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, -1.0]], np.float32)
    ys = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 1, 0]], np.float32)
    m = keras.Sequential([
        keras.Input((2,)),
        keras.layers.Dense(3, activation="softmax",
                           kernel_initializer=keras.initializers.Constant([[0.1, -0.2, 0.3], [0.2, 0.1, -0.1]])),
    ])
    m.compile(keras.optimizers.SGD(0.5), "categorical_crossentropy", metrics=["accuracy"])
    h = m.fit(xs, ys, batch_size=4, epochs=2, shuffle=False, verbose=0, class_weight={0: 1.0, 1: 3.0, 2: 0.5})
    _close(h.history, {"accuracy": [0.0, 0.5], "loss": [2.1716818809509277, 1.5693376064300537]})
    np.testing.assert_allclose(m.get_weights()[1], [-0.3191920220851898, 0.774871289730072, -0.4556792080402374],
                               rtol=1e-5)
    with pytest.raises(ValueError, match="at the same time"):
        m.fit(xs, ys, class_weight={0: 1.0}, sample_weight=np.ones(4), verbose=0)
    with pytest.raises(TypeError, match="dict"):
        m.fit(xs, ys, class_weight=[1.0, 2.0], verbose=0)


def test_validation_split_with_sample_weight():
    m = _model()
    h = m.fit(X, Y, batch_size=2, epochs=2, shuffle=False, verbose=0, validation_split=0.34, sample_weight=SW)
    _close(h.history, {"loss": [0.8726041316986084, 0.15605540573596954],
                       "val_loss": [0.4849000871181488, 0.1860203593969345]})
    np.testing.assert_allclose(m.get_weights()[0], [[0.14822810888290405], [0.30310311913490295]], rtol=1e-5)
    with pytest.raises(ValueError, match="validation_split"):
        m.fit(X, Y, validation_split=1.5, verbose=0)


def test_validation_data_with_sample_weight():
    h = _model().fit(X, Y, batch_size=6, epochs=1, shuffle=False, verbose=0, validation_data=(X, Y, SW))
    _close(h.history, {"loss": [0.7420832514762878], "val_loss": [0.6003302335739136]})


def test_dataset_of_weighted_batches():
    ds = gt.data.Dataset.from_tensor_slices((X, Y, SW)).batch(4)
    m = _model(metrics=["mae"], weighted_metrics=["mse"])
    h = m.fit(ds, epochs=2, verbose=0)
    np.testing.assert_allclose(h.history["loss"], [0.8979125022888184, 0.38529065251350403], rtol=1e-5)


def test_multi_output_loss_weights():
    mm = _two_outputs()
    mm.compile(keras.optimizers.SGD(0.1), loss=["mse", "mae"], loss_weights=[0.3, 2.0])
    h = mm.fit(X, [Y, 1 - Y], batch_size=4, epochs=2, shuffle=False, verbose=0)
    _close(h.history, {"a_loss": [0.6688997745513916, 0.5003139972686768],
                       "b_loss": [0.643750011920929, 0.503125011920929],
                       "loss": [1.5971759557724, 1.2662115097045898]})
    want = [[[0.11124533414840698], [-0.032931793481111526]], [0.10158281028270721],
            [[0.44999998807907104], [-0.049999989569187164]], [0.0]]
    for got, w in zip(mm.get_weights(), want):
        np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-7)
    assert mm.metrics_names == ["loss", "a_loss", "b_loss"]
    got = mm.evaluate(X, [Y, 1 - Y], verbose=0, return_dict=True)
    _close(got, {"a_loss": 0.4144195020198822, "b_loss": 0.5666666626930237, "loss": 1.2576591968536377})
    np.testing.assert_allclose(mm.evaluate(X, [Y, 1 - Y], verbose=0),
                               [1.2576591968536377, 0.4144195020198822, 0.5666666626930237], rtol=1e-5)


def test_multi_output_dicts_and_per_output_metrics():
    mm = _two_outputs()
    mm.compile(keras.optimizers.SGD(0.1), loss={"a": "mse", "b": "mae"}, loss_weights={"a": 0.3, "b": 2.0},
               metrics=[["mae"], ["mse"]])
    h = mm.fit(X, {"a": Y, "b": 1 - Y}, batch_size=4, epochs=2, shuffle=False, verbose=0)
    _close(h.history, {"a_loss": [0.6688997745513916, 0.5003139972686768],
                       "a_mae": [0.7470833659172058, 0.6538814902305603],
                       "b_loss": [0.643750011920929, 0.503125011920929],
                       "b_mse": [0.5879166722297668, 0.5557292103767395],
                       "loss": [1.5971759557724, 1.2662115097045898]})


def test_multi_output_one_loss_and_sample_weight():
    mm = _two_outputs()
    mm.compile(keras.optimizers.SGD(0.1), loss="mse")
    h = mm.fit(X, [Y, 1 - Y], batch_size=4, epochs=2, shuffle=False, verbose=0, sample_weight=SW)
    _close(h.history, {"a_loss": [1.004212498664856, 0.358697772026062],
                       "b_loss": [0.5162875056266785, 0.13381703197956085],
                       "loss": [1.389708161354065, 0.5135011076927185]})
    np.testing.assert_allclose(mm.get_weights()[2], [[0.3872396945953369], [-0.0833340659737587]], rtol=1e-5)


def test_multi_output_errors():
    mm = _two_outputs()
    mm.compile("sgd", loss=["mse"])
    with pytest.raises(ValueError, match="2 entries"):
        mm.fit(X, [Y, Y], verbose=0)
    mm = _two_outputs()
    mm.compile("sgd", loss={"a": "mse", "c": "mse"})
    with pytest.raises(ValueError, match="unknown output"):
        mm.fit(X, [Y, Y], verbose=0)
    mm = _two_outputs()
    mm.compile("sgd", loss="mse")
    with pytest.raises(ValueError, match="one entry per output"):
        mm.fit(X, {"a": Y}, verbose=0)
    with pytest.raises(ValueError, match="single output"):
        mm.fit(X, [Y, Y], class_weight={0: 1.0}, verbose=0)
    with pytest.raises(ValueError, match="2 outputs"):
        mm.fit(X, Y, verbose=0)
    with pytest.raises(ValueError, match="2 outputs"):
        mm.fit(X, [Y, Y, Y], verbose=0)
    with pytest.raises(TypeError, match="loss_weights"):
        mm.compile("sgd", loss="mse", loss_weights="x")


def test_single_output_loss_weight_scales_the_loss():
    m = _model(loss_weights=2.0)
    h = m.fit(X, Y, batch_size=6, epochs=1, shuffle=False, verbose=0)
    np.testing.assert_allclose(h.history["loss"], [2 * 0.7420832514762878], rtol=1e-5)


def test_history_reused_and_no_warnings():
    m = _model()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        h1 = m.fit(X, Y, epochs=1, verbose=0)
        h2 = m.fit(X, Y, epochs=2, verbose=0)
    assert h1 is not h2 and h2.epoch == [0, 1] and len(h2.history["loss"]) == 2


def test_test_and_predict_batch_hooks():
    seen = []

    class Hooks(keras.callbacks.Callback):
        def on_test_batch_end(self, batch, logs=None):
            seen.append(("test", batch, round(logs["loss"], 6)))

        def on_predict_batch_end(self, batch, logs=None):
            seen.append(("predict", batch, tuple(np.shape(logs["outputs"]))))

        def on_predict_end(self, logs=None):
            seen.append(("predict_end",))

    m = _model()
    m.evaluate(X, Y, batch_size=4, verbose=0, callbacks=[Hooks()])
    m.predict(X, batch_size=4, verbose=0, callbacks=[Hooks()])
    # The running mean of the loss after each test batch: the first four samples', then
    # all six (Keras 3.15's loss on all six at these weights: 0.7420832514762878).
    assert seen == [("test", 0, 0.800625), ("test", 1, round(0.7420832514762878, 6)),
                    ("predict", 0, (4, 1)), ("predict", 1, (2, 1)), ("predict_end",)]
