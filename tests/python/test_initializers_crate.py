"""Issue 17: the variance-scaling initializers (and so gt.layers.Dense's kernel) take their
fans and scale from the crate (gradtape::nn::layers::Draw) and draw the values they drew
when Python computed them (the numbers below were printed by that earlier version)."""

import numpy as np
import pytest

import gradtape as gt

GLOROT_3x4_SEED3 = [0.29728612303733826, -0.2828279137611389, -0.6354122161865234,
                    0.6615937948226929, -0.5772815942764282]


def _first5(t):
    return np.asarray(t).ravel()[:5].tolist()


def test_seeded_draws_are_unchanged():
    init = gt.initializers
    gt.random.set_seed(1)
    assert _first5(init.GlorotUniform(seed=3)((3, 4), "float32")) == GLOROT_3x4_SEED3
    gt.random.set_seed(1)
    assert _first5(init.HeNormal(seed=5)((4, 2), "float32")) == [
        0.1435403823852539, 1.5380715131759644, -1.1103193759918213, 0.9088544845581055, 0.4992775321006775]
    gt.random.set_seed(1)
    assert _first5(init.VarianceScaling(2.0, "fan_out", "untruncated_normal", seed=7)((3, 3), "float64")) == [
        0.46591994545684573, -0.15971530700401082, 1.0392945332473398, 0.7848374494624943, 0.34222837435079406]


def test_dense_kernels_are_unchanged():
    gt.random.set_seed(1)
    d = gt.layers.Dense(4, kernel_initializer=gt.initializers.GlorotUniform(seed=3))
    d(gt.ones([1, 3]))
    assert _first5(d.kernel.numpy()) == GLOROT_3x4_SEED3
    gt.random.set_seed(1)
    d = gt.layers.Dense(4)
    d(gt.ones([1, 3]))
    assert _first5(d.kernel.numpy()) == [
        0.18269428610801697, -0.3769693076610565, 0.5481863617897034, -0.26012665033340454, -0.871376633644104]
    gt.random.set_seed(None)


def test_bad_arguments_are_value_errors():
    with pytest.raises(ValueError, match="mode"):
        gt.initializers.VarianceScaling(mode="fan")
    with pytest.raises(gt.errors.InvalidArgumentError, match="distribution"):
        gt._gradtape._variance_scaling((2, 2), 1.0, "fan_in", "cauchy")
