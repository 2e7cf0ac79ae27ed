"""gt.layers.Conv2D: shapes, variables, Keras argument forms, values against a numpy
convolution, training a small CNN, errors."""

import numpy as np
import pytest

import gradtape as gt


def test_shapes_and_variables():
    conv = gt.layers.Conv2D(4, 3)
    y = conv(gt.ones([2, 7, 6, 3]))
    assert tuple(y.shape) == (2, 5, 4, 4)
    assert [v.name for v in conv.trainable_variables] == ["conv2d/kernel:0", "conv2d/bias:0"]
    assert tuple(conv.kernel.shape) == (3, 3, 3, 4)
    np.testing.assert_array_equal(conv.bias.numpy(), np.zeros(4))
    assert gt.layers.Conv2D(2, (3, 1), name="c2")(gt.ones([1, 5, 5, 1])).shape == (1, 3, 5, 2)
    assert gt.layers.Conv2D(2, 3, strides=2, padding="same")(gt.ones([1, 5, 5, 1])).shape == (1, 3, 3, 2)
    assert gt.layers.Conv2D(2, 3, dilation_rate=2)(gt.ones([1, 7, 7, 1])).shape == (1, 3, 3, 2)
    assert gt.layers.Conv2D(2, 3, use_bias=False)(gt.ones([1, 3, 3, 1])).shape == (1, 1, 1, 2)


def test_values_match_numpy():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 5, 2)).astype(np.float32)
    conv = gt.layers.Conv2D(3, 2, strides=(1, 2), activation="relu")
    y = conv(x).numpy()
    k, b = conv.kernel.numpy(), conv.bias.numpy()
    want = np.zeros((2, 4, 2, 3), np.float64)
    for i in range(4):
        for j in range(2):
            want[:, i, j] = np.einsum("nhwc,hwco->no", x[:, i : i + 2, 2 * j : 2 * j + 2], k) + b
    np.testing.assert_allclose(y, np.maximum(want, 0), rtol=1e-5, atol=1e-6)
    # Glorot-uniform kernel: |k| <= sqrt(6 / ((2 + 3) * 4)).
    assert np.abs(k).max() <= np.sqrt(6 / 20) + 1e-7


def test_small_cnn_trains():
    gt.random.set_seed(1)
    rng = np.random.default_rng(1)
    # Two classes: a bright top half or a bright bottom half, plus noise.
    labels = rng.integers(0, 2, 32)
    x = rng.normal(0, 0.3, (32, 8, 8, 1)).astype(np.float32)
    x[labels == 0, :4] += 1.0
    x[labels == 1, 4:] += 1.0
    model = gt.layers.Sequential([
        gt.layers.Conv2D(4, 3, padding="same", activation="relu"),
        gt.layers.MaxPooling2D(),
        gt.layers.Conv2D(8, 3, activation="relu"),
        gt.layers.AveragePooling2D(padding="same"),
        gt.layers.Flatten(),
        gt.layers.Dropout(0.1),
        gt.layers.Dense(2),
    ])
    opt = gt.optimizers.SGD(0.1)
    losses = []
    for _ in range(30):
        with gt.GradientTape() as tape:
            logits = model(x, training=True)
            loss = gt.reduce_mean(gt.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
        grads = tape.gradient(loss, model.trainable_variables)
        assert all(g is not None for g in grads)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0]
    acc = np.mean(np.argmax(model(x).numpy(), axis=1) == labels)
    assert acc == 1.0


@pytest.mark.parametrize(
    "make, error",
    [
        (lambda: gt.layers.Conv2D(0, 3), ValueError),
        (lambda: gt.layers.Conv2D(2, (3, 3, 3)), ValueError),
        (lambda: gt.layers.Conv2D(2, 0), ValueError),
        (lambda: gt.layers.Conv2D(2, 3, padding="full"), ValueError),
        (lambda: gt.layers.Conv2D(2, 3, data_format="channels_first"), ValueError),
        (lambda: gt.layers.Conv2D(2, 3, groups=2), ValueError),
        (lambda: gt.layers.Conv2D(2, "3"), TypeError),
        (lambda: gt.layers.Conv2D(2, 3)(gt.ones([3, 3, 1])), ValueError),
        (lambda: gt.layers.Conv2D(2, 5)(gt.ones([1, 3, 3, 1])), gt.errors.InvalidArgumentError),
    ],
)
def test_errors(make, error):
    with pytest.raises(error):
        make()
