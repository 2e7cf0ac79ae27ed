"""Gathers, masks and one_hot (src/ops/index.rs), with slice, shape, size and rank: values
against numpy and gradients."""

import numpy as np
import pytest

import gradtape as gt
from helpers import A, grad_of


def test_slice_gather_gather_nd_boolean_mask():
    np.testing.assert_array_equal(gt.slice(A, [0, 1], [-1, 2]).numpy(), A[:, 1:3])
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.slice(A, [0, 2], [1, 2])
    np.testing.assert_array_equal(gt.gather(A, [1, 0, 1]).numpy(), A[[1, 0, 1]])
    np.testing.assert_array_equal(gt.gather(A, [[2, 0]], axis=1).numpy(), np.take(A, [[2, 0]], axis=1))
    g = grad_of(lambda t: gt.gather(t, [1, 0, 1]), A)
    np.testing.assert_array_equal(g, [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]])
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.gather(A, [2])
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.gather(A, [0], batch_dims=1)
    np.testing.assert_array_equal(gt.gather_nd(A, [[1, 2], [0, 0]]).numpy(), [6.0, 1.0])
    np.testing.assert_array_equal(gt.gather_nd(A, [[1]]).numpy(), A[[1]])
    g = grad_of(lambda t: gt.gather_nd(t, [[1, 2], [1, 2]]), A)
    np.testing.assert_array_equal(g, [[0.0, 0.0, 0.0], [0.0, 0.0, 2.0]])
    mask = np.array([True, False, True])
    np.testing.assert_array_equal(gt.boolean_mask(A, mask, axis=1).numpy(), A[:, mask])
    np.testing.assert_array_equal(gt.boolean_mask(A, A > 2).numpy(), A[A > 2])
    g = grad_of(lambda t: gt.boolean_mask(t, mask, axis=1), A)
    np.testing.assert_array_equal(g, [[1.0, 0.0, 1.0], [1.0, 0.0, 1.0]])


def test_one_hot_shape_size_rank():
    o = gt.one_hot([0, 2, 5], 3)
    assert o.dtype == gt.float32
    np.testing.assert_array_equal(o.numpy(), [[1, 0, 0], [0, 0, 1], [0, 0, 0]])
    o = gt.one_hot([1], 2, on_value=5, off_value=-1, axis=0)
    assert o.dtype == gt.int32
    np.testing.assert_array_equal(o.numpy(), [[-1], [5]])
    s = gt.shape(gt.ones([2, 3]))
    assert s.dtype == gt.int32
    np.testing.assert_array_equal(s.numpy(), [2, 3])
    assert int(gt.size(gt.ones([2, 3]))) == 6
    assert gt.size(gt.ones([2]), out_type=gt.int64).dtype == gt.int64
    assert int(gt.rank(gt.ones([2, 3, 1]))) == 3
