"""gt.layers.Dropout: identity unless training, mask and scale in training."""

import numpy as np
import pytest

import gradtape as gt


def test_identity_unless_training():
    layer = gt.layers.Dropout(0.5)
    x = gt.ones([10])
    assert layer(x).numpy().tolist() == [1.0] * 10
    assert layer(x, training=False).numpy().tolist() == [1.0] * 10
    assert layer.trainable_variables == []


def test_training_masks_and_scales():
    y = gt.layers.Dropout(0.25, seed=3)(gt.ones([4000]), training=True).numpy()
    assert set(np.unique(y).tolist()) <= {0.0, float(np.float32(4.0 / 3.0))}
    assert 0.2 < np.mean(y == 0) < 0.3
    np.testing.assert_array_equal(gt.layers.Dropout(1.0)(gt.ones([3]), training=True).numpy(), [0.0, 0.0, 0.0])
    # noise_shape shares one decision along size-1 axes.
    y = gt.layers.Dropout(0.5, noise_shape=[1, 5], seed=1)(gt.ones([4, 5]), training=True).numpy()
    assert (y == y[0]).all()


def test_bad_rate():
    for rate in (-0.1, 1.5):
        with pytest.raises(ValueError):
            gt.layers.Dropout(rate)
