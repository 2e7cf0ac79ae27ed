"""gt.layers.Flatten."""

import numpy as np
import pytest

import gradtape as gt


def test_flatten_shapes_and_order():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    y = gt.layers.Flatten()(x)
    assert y.shape == (2, 12)
    np.testing.assert_array_equal(y.numpy(), x.reshape(2, 12))
    assert gt.layers.Flatten()(gt.ones([3])).shape == (3, 1)
    assert gt.layers.Flatten()(gt.ones([0, 2, 2])).shape == (0, 4)
    with pytest.raises(ValueError):
        gt.layers.Flatten()(gt.constant(1.0))
    with pytest.raises(ValueError):
        gt.layers.Flatten(data_format="channels_first")


def test_flatten_gradient_is_reshaped_back():
    x = gt.constant(np.ones((2, 2, 2), np.float32))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reduce_sum(gt.layers.Flatten()(x) * gt.constant([[1.0, 2.0, 3.0, 4.0]]))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy()[0], [[1, 2], [3, 4]])
