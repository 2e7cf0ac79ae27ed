"""gt.keras models: subclassing, the functional form, Sequential, variable tracking,
compile / fit / evaluate / predict and the progress line."""

import contextlib
import io
import re

import numpy as np
import pytest

import gradtape as gt

keras = gt.keras


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 5)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 1).astype(np.int64)
    return x, y


def _weights(shapes, seed=1):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-0.5, 0.5, size=s).astype(np.float32) for s in shapes]


SHAPES = [(5, 8), (8,), (8, 3), (3,)]


class Subclassed(keras.Model):
    def __init__(self):
        super().__init__()
        self.d1 = keras.layers.Dense(8, activation="relu")
        self.d2 = keras.layers.Dense(3)

    def call(self, x, training=None):
        return self.d2(self.d1(x))


def _functional():
    inputs = keras.Input(shape=(5,))
    h = keras.layers.Dense(8, activation="relu")(inputs)
    return keras.Model(inputs, keras.layers.Dense(3)(h))


def _sequential():
    return keras.Sequential([keras.layers.Dense(8, activation="relu", input_shape=(5,)), keras.layers.Dense(3)])


def _train(model, steps=5):
    x, y = _data()
    model(x[:1])
    model.set_weights(_weights(SHAPES))
    opt = keras.optimizers.Adam(0.05)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    losses = []
    for _ in range(steps):
        with gt.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply(grads, model.trainable_variables)
        losses.append(float(loss))
    return losses, [w.copy() for w in model.get_weights()]


def _by_hand(steps=5):
    x, y = _data()
    w1, b1, w2, b2 = [gt.Variable(w) for w in _weights(SHAPES)]
    opt = gt.optimizers.Adam(0.05)
    losses = []
    for _ in range(steps):
        with gt.GradientTape() as tape:
            logits = gt.matmul(gt.nn.relu(gt.matmul(gt.constant(x), w1) + b1), w2) + b2
            loss = gt.reduce_mean(gt.nn.sparse_softmax_cross_entropy_with_logits(labels=gt.constant(y), logits=logits))
        grads = tape.gradient(loss, [w1, b1, w2, b2])
        opt.apply_gradients(zip(grads, [w1, b1, w2, b2]))
        losses.append(float(loss))
    return losses, [v.numpy() for v in (w1, b1, w2, b2)]


@pytest.mark.parametrize("make", [Subclassed, _functional, _sequential], ids=["subclassed", "functional", "sequential"])
def test_models_train_like_the_same_network_by_hand(make):
    want_losses, want_w = _by_hand()
    losses, w = _train(make())
    np.testing.assert_allclose(losses, want_losses, rtol=1e-6)
    for a, b in zip(w, want_w):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_subclassed_tracking():
    m = Subclassed()
    assert m.variables == [] and not m.built
    m(gt.ones([2, 5]))
    assert [tuple(v.shape) for v in m.trainable_variables] == SHAPES
    assert m.layers == [m.d1, m.d2]
    assert m.non_trainable_variables == []
    m.d1.trainable = False
    assert [tuple(v.shape) for v in m.trainable_variables] == SHAPES[2:]
    assert len(m.variables) == 4 and len(m.non_trainable_variables) == 2


def test_nested_layers_lists_and_variables_are_tracked():
    class Block(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.inner = [keras.layers.Dense(2), keras.layers.Dense(2)]

        def call(self, x):
            return self.inner[1](self.inner[0](x))

    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.scale = gt.Variable(2.0)
            self.block = Block()

        def call(self, x):
            return self.block(x) * self.scale

    net = Net()
    net(gt.ones([1, 3]))
    assert sorted(tuple(v.shape) for v in net.trainable_variables) == sorted([(), (3, 2), (2,), (2, 2), (2,)])
    assert len(net.variables) == 5


def test_functional_model_graph():
    inputs = keras.Input(shape=(784,), name="digits")
    assert inputs.shape == (None, 784)
    x1 = keras.layers.Dense(4, activation="relu", name="a")(inputs)
    x2 = keras.layers.Dense(4, activation="relu", name="b")(x1)
    out = keras.layers.Dense(2, name="c")(x2)
    model = keras.Model(inputs=inputs, outputs=out, name="mlp")
    assert [layer.name for layer in model.layers] == ["a", "b", "c"]
    assert out.shape == (None, 2)
    assert len(model.trainable_weights) == 6
    x = np.random.default_rng(0).normal(size=(3, 784)).astype(np.float32)
    ws = model.layers
    want = ws[2](ws[1](ws[0](gt.constant(x))))
    np.testing.assert_array_equal(model(x).numpy(), want.numpy())
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert 'Model: "mlp"' in text and "a (Dense)" in text and "(None, 2)" in text
    assert "Total params: 3170" in text
    with pytest.raises(ValueError, match="expects 1 input"):
        model([x, x])


def test_functional_two_inputs_and_shared_layer():
    a, b = keras.Input(shape=(3,)), keras.Input(shape=(3,))
    shared = keras.layers.Dense(2)
    model = keras.Model([a, b], [shared(a), shared(b)])
    assert len(model.layers) == 1 and len(model.variables) == 2
    xa, xb = np.ones((2, 3), np.float32), np.zeros((2, 3), np.float32)
    ya, yb = model([xa, xb])
    np.testing.assert_allclose(ya.numpy(), shared(xa).numpy())
    np.testing.assert_allclose(yb.numpy(), shared(xb).numpy())


def test_model_init_errors():
    with pytest.raises(TypeError, match="keras.Input"):
        keras.Model(gt.ones([1, 2]), gt.ones([1, 2]))
    x = keras.Input(shape=(2,))
    y = keras.layers.Dense(1)(x)
    with pytest.raises(ValueError, match="must come from"):
        keras.Model(y, y)
    with pytest.raises(ValueError, match="shape"):
        keras.Input()


def test_sequential_input_shape_builds_and_keras_input():
    m = _sequential()
    assert m.built and [tuple(v.shape) for v in m.weights] == SHAPES
    m2 = keras.Sequential([keras.Input(shape=(5,)), keras.layers.Dense(2)])
    assert [tuple(v.shape) for v in m2.weights] == [(5, 2), (2,)]
    m3 = keras.Sequential()
    m3.add(keras.layers.Dense(2, input_dim=4))
    assert [tuple(v.shape) for v in m3.weights] == [(4, 2), (2,)]
    with pytest.raises(TypeError, match="keras.Layer"):
        m3.add("dense")
    with pytest.raises(TypeError, match="unexpected keyword"):
        keras.layers.Dense(2, input_shap=(3,))
    assert isinstance(m, keras.Model) and isinstance(m, gt.layers.Sequential)


def test_integer_and_numpy_inputs_are_cast_to_the_layer_dtype():
    d = keras.layers.Dense(2, kernel_initializer="ones")
    y = d(np.array([[1, 2]]))
    assert y.dtype == gt.float32
    np.testing.assert_array_equal(y.numpy(), [[3.0, 3.0]])
    y = d(gt.constant([[1, 2]]))
    assert y.dtype == gt.float32
    y = d(np.array([[1.0, 2.0]]))  # numpy float64 -> the layer's float32, as Keras
    assert y.dtype == gt.float32


def test_embedding_flatten_activation_strings():
    emb = keras.layers.Embedding(10, 3)
    out = emb(gt.constant([[1, 2], [3, 9]]))
    assert out.shape == (2, 2, 3)
    np.testing.assert_array_equal(out.numpy()[1, 1], emb.embeddings.numpy()[9])
    assert float(gt.reduce_max(gt.abs(emb.embeddings))) <= 0.05
    flat = keras.layers.Flatten()(out)
    assert flat.shape == (2, 6)
    for name, fn in [
        ("softmax", lambda v: np.exp(v) / np.exp(v).sum(-1, keepdims=True)),
        ("relu", lambda v: np.maximum(v, 0)),
        ("tanh", np.tanh),
    ]:
        d = keras.layers.Dense(3, activation=name, kernel_initializer="ones", bias_initializer="zeros")
        v = np.array([[0.5, -1.0]], np.float32)
        np.testing.assert_allclose(d(v).numpy(), fn(v @ np.ones((2, 3))), rtol=1e-6)
    with pytest.raises(ValueError, match="positive"):
        keras.layers.Embedding(0, 3)


def _compiled(metrics=("accuracy",), **kw):
    model = _sequential()
    model.set_weights(_weights(SHAPES))
    model.compile(
        optimizer=keras.optimizers.SGD(0.1),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=list(metrics),
        **kw,
    )
    return model


def _manual_fit(epochs, batch):
    """The loop fit runs, written out."""
    x, y = _data()
    model = _sequential()
    model.set_weights(_weights(SHAPES))
    opt = keras.optimizers.SGD(0.1)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    hist = {"accuracy": [], "loss": []}
    for _ in range(epochs):
        lm, am = keras.metrics.Mean(), keras.metrics.SparseCategoricalAccuracy()
        for i in range(0, len(x), batch):
            bx, by = x[i : i + batch], y[i : i + batch]
            with gt.GradientTape() as tape:
                pred = model(bx, training=True)
                loss = loss_fn(by, pred)
            opt.apply(tape.gradient(loss, model.trainable_variables), model.trainable_variables)
            lm.update_state(loss, sample_weight=float(len(bx)))
            am.update_state(by, pred)
        hist["loss"].append(float(lm.result()))
        hist["accuracy"].append(float(am.result()))
    return hist, model.get_weights()


@pytest.mark.parametrize("run_eagerly", [False, True])
def test_fit_is_the_training_loop(run_eagerly):
    x, y = _data()
    model = _compiled(run_eagerly=run_eagerly)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        history = model.fit(x, y, batch_size=16, epochs=3, shuffle=False)
    want, want_w = _manual_fit(3, 16)
    assert list(history.history) == ["accuracy", "loss"]
    np.testing.assert_allclose(history.history["loss"], want["loss"], rtol=1e-5)
    np.testing.assert_allclose(history.history["accuracy"], want["accuracy"], rtol=1e-6)
    for a, b in zip(model.get_weights(), want_w):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    lines = out.getvalue().splitlines()
    assert lines[0] == "Epoch 1/3" and lines[2] == "Epoch 2/3" and len(lines) == 6
    assert re.fullmatch(r"3/3 ━{20} \d+s \d+[mu]?s/step - accuracy: \d\.\d{4} - loss: \d\.\d{4}", lines[1]), lines[1]
    assert f"loss: {history.history['loss'][0]:.4f}" in lines[1]
    assert history.epoch == [0, 1, 2]


def test_fit_validation_verbose2_evaluate_predict():
    x, y = _data()
    model = _compiled(metrics=["accuracy", keras.metrics.SparseCategoricalAccuracy(name="acc2")])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        history = model.fit(x, y, batch_size=8, epochs=2, validation_data=(x[:10], y[:10]), verbose=2)
    # Keras 3 sorts the logs by name (TF 2.21: acc2, accuracy, loss, val_acc2, ...).
    assert list(history.history) == ["acc2", "accuracy", "loss", "val_acc2", "val_accuracy", "val_loss"]
    line = out.getvalue().splitlines()[1]
    assert re.fullmatch(r"5/5 - \d+s - \d+[mu]?s/step - acc2: .* - accuracy: .* - val_loss: \d\.\d{4}", line), line
    ev = model.evaluate(x[:10], y[:10], verbose=0)
    np.testing.assert_allclose(
        ev,
        [history.history["val_loss"][-1], history.history["val_accuracy"][-1], history.history["val_acc2"][-1]],
        rtol=1e-6,
    )
    d = model.evaluate(x[:10], y[:10], verbose=0, return_dict=True)
    assert list(d) == ["acc2", "accuracy", "loss"]
    logits = model(x[:10]).numpy()
    want_loss = np.mean(np.log(np.exp(logits).sum(-1)) - logits[np.arange(10), y[:10]])
    np.testing.assert_allclose(d["loss"], want_loss, rtol=1e-5)
    np.testing.assert_allclose(d["accuracy"], np.mean(logits.argmax(-1) == y[:10]), rtol=1e-6)
    pred = model.predict(x, batch_size=7, verbose=0)
    assert pred.shape == (40, 3)
    np.testing.assert_allclose(pred, model(x).numpy(), rtol=1e-6)


def test_fit_accuracy_resolution_and_string_losses():
    x, y = _data()
    bin_y = (y > 0).astype(np.float32)[:, None]
    model = keras.Sequential([keras.layers.Dense(1, activation="sigmoid", input_shape=(5,))])
    model.compile(optimizer="sgd", loss="binary_crossentropy", metrics=["accuracy"])
    model.fit(x, bin_y, epochs=1, verbose=0)
    assert isinstance(model.metrics[1], keras.metrics.BinaryAccuracy)
    onehot = np.eye(3, dtype=np.float32)[y]
    model = _sequential()
    model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, onehot, epochs=1, verbose=0)
    assert isinstance(model.metrics[1], keras.metrics.CategoricalAccuracy)
    model = _sequential()
    model.compile(optimizer="rmsprop", loss="mse")
    assert isinstance(model.optimizer, keras.optimizers.RMSprop)
    h = model.fit(x, onehot, epochs=1, verbose=0, validation_split=0.25)
    assert list(h.history) == ["loss", "val_loss"]
    assert isinstance(model.evaluate(x, onehot, verbose=0), float)


def test_fit_on_a_dataset():
    x, y = _data()
    model = _compiled()
    ds = gt.data.Dataset.from_tensor_slices((x, y)).batch(16)
    history = model.fit(ds, epochs=3, verbose=0)
    want, _ = _manual_fit(3, 16)
    np.testing.assert_allclose(history.history["loss"], want["loss"], rtol=1e-5)


def test_fit_errors():
    x, y = _data()
    with pytest.raises(RuntimeError, match="compile"):
        _sequential().fit(x, y, verbose=0)
    model = _compiled()
    with pytest.raises(ValueError, match="cardinality"):
        model.fit(x, y[:5], verbose=0)
    with pytest.raises(TypeError, match="unexpected keyword"):
        model.fit(x, y, epocs=2)
    with pytest.raises(ValueError, match="batch_size"):
        model.fit(x, y, batch_size=0, verbose=0)
    with pytest.raises(ValueError, match="loss"):
        _sequential().compile(optimizer="sgd")
    with pytest.raises(TypeError, match="callbacks"):
        model.fit(x, y, callbacks=[object()], verbose=0)


def test_get_set_weights_checks():
    m = _sequential()
    with pytest.raises(ValueError, match="4 variables"):
        m.set_weights([np.zeros((5, 8))])
    with pytest.raises(ValueError, match="shape"):
        m.set_weights([np.zeros((5, 9)), np.zeros(8), np.zeros((8, 3)), np.zeros(3)])


def test_layer_add_weight_keras3_form():
    class L(keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], 2), initializer="zeros", name="w")
            self.b = self.add_weight((2,), name="b")

        def call(self, x):
            return gt.matmul(x, self.w) + self.b

    layer = L(name="l")
    layer(gt.ones([1, 3]))
    assert [v.name for v in layer.variables] == ["l/w:0", "l/b:0"]
    assert [tuple(v.shape) for v in layer.variables] == [(3, 2), (2,)]


@pytest.mark.parametrize("name", ["model.weights.h5", "model.safetensors"])
def test_save_and_load_weights(tmp_path, name):
    x, _ = _data()
    m = _compiled()
    path = tmp_path / name
    m.save_weights(path)
    want = m(x).numpy()
    m2 = _sequential()  # other random weights
    assert not np.allclose(m2(x).numpy(), want)
    m2.load_weights(str(path))
    np.testing.assert_array_equal(m2(x).numpy(), want)
    # A subclassed model and the functional form read the same file (same variables).
    sub = Subclassed()
    sub(x[:1])
    sub.load_weights(path)
    np.testing.assert_array_equal(sub(x).numpy(), want)
    # The file is a safetensors file with the variables in order.
    from gradtape import _safetensors

    tensors = _safetensors.load_file(path)
    assert [tuple(t.shape) for _, t in sorted(tensors.items())] == SHAPES
    with pytest.raises(FileExistsError):
        m.save_weights(path, overwrite=False)


def test_load_weights_errors(tmp_path):
    path = tmp_path / "w.weights.h5"
    _sequential().save_weights(path)
    with pytest.raises(ValueError, match="no variables yet"):
        Subclassed().load_weights(path)
    other = keras.Sequential([keras.layers.Dense(2, input_shape=(5,))])
    with pytest.raises(ValueError, match="holds 4 variables"):
        other.load_weights(path)
    wrong = keras.Sequential([keras.layers.Dense(8, input_shape=(4,)), keras.layers.Dense(3)])
    with pytest.raises(ValueError, match="shape"):
        wrong.load_weights(path)
    from gradtape import _safetensors

    _safetensors.save_file({"a": gt.ones([2])}, tmp_path / "plain.safetensors")
    with pytest.raises(ValueError, match="not a gradtape weights file"):
        _sequential().load_weights(tmp_path / "plain.safetensors")
    with pytest.raises(FileNotFoundError):
        _sequential().load_weights(tmp_path / "missing.weights.h5")
