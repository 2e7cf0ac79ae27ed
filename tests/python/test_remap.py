"""Tile, pad and slice (src/ops/remap.rs): values against numpy and gradients."""

import numpy as np
import pytest

import gradtape as gt
from helpers import A, grad_of


def test_tile_and_gradient():
    np.testing.assert_array_equal(gt.tile(A, [2, 1]).numpy(), np.tile(A, [2, 1]))
    g = grad_of(lambda t: gt.tile(t, [3]), [1.0, 2.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    np.testing.assert_array_equal(g, [9.0, 12.0])
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.tile(A, [2])


@pytest.mark.parametrize("mode", ["CONSTANT", "REFLECT", "SYMMETRIC"])
def test_pad_matches_numpy(mode):
    paddings = [[1, 1], [2, 1]]
    np_mode = {"CONSTANT": "constant", "REFLECT": "reflect", "SYMMETRIC": "symmetric"}[mode]
    got = gt.pad(gt.constant(A), paddings, mode=mode).numpy()
    np.testing.assert_array_equal(got, np.pad(A, paddings, mode=np_mode))


def test_pad_constant_values_and_gradients():
    got = gt.pad(gt.constant([1.0, 2.0]), [[1, 2]], constant_values=7.0).numpy()
    np.testing.assert_array_equal(got, [7.0, 1.0, 2.0, 7.0, 7.0])
    w = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    x = [1.0, 2.0, 3.0]
    # reflect [3,2,1,2,3,2,1]: positions 0,1,2 read by outputs {2,6},{1,3,5},{0,4}.
    np.testing.assert_array_equal(grad_of(lambda t: gt.pad(t, [[2, 2]], "REFLECT"), x, w), [10.0, 12.0, 6.0])
    # symmetric [2,1,1,2,3,3,2]
    np.testing.assert_array_equal(grad_of(lambda t: gt.pad(t, [[2, 2]], "SYMMETRIC"), x, w), [5.0, 12.0, 11.0])
    np.testing.assert_array_equal(grad_of(lambda t: gt.pad(t, [[2, 2]]), x, w), [3.0, 4.0, 5.0])
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.pad(gt.constant(x), [[3, 0]], mode="REFLECT")
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.pad(gt.constant(x), [[1, 0]], mode="WRAP")
