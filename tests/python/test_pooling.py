"""gt.layers.MaxPooling2D and AveragePooling2D: defaults, values, gradients, errors."""

import numpy as np
import pytest

import gradtape as gt

X = np.arange(25.0, dtype=np.float32).reshape(1, 5, 5, 1)


def test_defaults_and_values():
    y = gt.layers.MaxPooling2D()(X)
    np.testing.assert_array_equal(y.numpy()[0, :, :, 0], [[6, 8], [16, 18]])
    y = gt.layers.MaxPooling2D(padding="same")(X)
    np.testing.assert_array_equal(y.numpy()[0, :, :, 0], [[6, 8, 9], [16, 18, 19], [21, 23, 24]])
    y = gt.layers.AveragePooling2D(pool_size=3, strides=1)(X)
    np.testing.assert_array_equal(y.numpy()[0, :, :, 0], [[6, 7, 8], [11, 12, 13], [16, 17, 18]])
    # SAME: the last window holds only the last row/column (valid elements only).
    y = gt.layers.AveragePooling2D(padding="same")(X)
    np.testing.assert_array_equal(y.numpy()[0, 2, :, 0], [20.5, 22.5, 24.0])
    assert gt.layers.MaxPool2D is gt.layers.MaxPooling2D
    assert gt.layers.AvgPool2D is gt.layers.AveragePooling2D
    assert gt.layers.MaxPooling2D().trainable_variables == []


def test_gradients():
    x = gt.constant(X)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reduce_sum(gt.layers.MaxPooling2D((2, 2), strides=(1, 1))(x))
    g = tape.gradient(y, x).numpy()[0, :, :, 0]
    want = np.zeros((5, 5))
    want[1:, 1:] = 1
    np.testing.assert_array_equal(g, want)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reduce_sum(gt.layers.AveragePooling2D()(x))
    g = tape.gradient(y, x).numpy()[0, :, :, 0]
    want = np.zeros((5, 5))
    want[:4, :4] = 0.25
    np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize(
    "make, error",
    [
        (lambda: gt.layers.MaxPooling2D(0), ValueError),
        (lambda: gt.layers.MaxPooling2D(2, padding="causal"), ValueError),
        (lambda: gt.layers.AveragePooling2D(2, data_format="channels_first"), ValueError),
        (lambda: gt.layers.MaxPooling2D()(gt.ones([2, 2])), ValueError),
        (lambda: gt.layers.AveragePooling2D(4, strides=1)(gt.ones([1, 2, 2, 1])), gt.errors.InvalidArgumentError),
    ],
)
def test_errors(make, error):
    with pytest.raises(error):
        make()


def test_window_a_little_larger_than_the_input_gives_an_empty_output_as_tf():
    # TF's output size is (input - window + stride) / stride truncated toward zero:
    # 0 (an empty output, gradient zeros) for a 6-window on 5 inputs, an error only when
    # it is negative (TF 2.21, oneDNN off: (2, 0, 0, 2); 3-D depth 2 with k=6: -3).
    x = gt.constant(np.ones((2, 5, 5, 2), np.float32))
    for f in (gt.nn.max_pool2d, gt.nn.avg_pool2d):
        with gt.GradientTape() as t:
            t.watch(x)
            y = f(x, 6, 1, "VALID")
        assert tuple(y.shape) == (2, 0, 0, 2)
        g = t.gradient(y, x)
        assert tuple(g.shape) == (2, 5, 5, 2) and not np.any(g.numpy())
    assert tuple(gt.nn.max_pool2d(x, [6, 2], 2, "VALID").shape) == (2, 0, 2, 2)
    assert tuple(gt.nn.avg_pool1d(x[:, 0], 6, 1, "VALID").shape) == (2, 0, 2)
    # Keras' layer as well (TF 2.21: (1, 0, 0, 1)).
    assert tuple(gt.layers.AveragePooling2D(3)(gt.ones([1, 2, 2, 1])).shape) == (1, 0, 0, 1)
    with pytest.raises(gt.errors.InvalidArgumentError, match=r"negative: -3 \[input_size: 2"):
        gt.nn.max_pool3d(x[None], 6, 1, "VALID")
