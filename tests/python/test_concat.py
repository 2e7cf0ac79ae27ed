"""Concatenation, stacking and splitting (src/ops/concat.rs): values against numpy, gradients, errors."""

import numpy as np
import pytest

import gradtape as gt
from helpers import A, grad_of


def test_concat_matches_numpy_and_splits_gradient():
    b = np.array([[7.0, 8.0, 9.0]])
    np.testing.assert_array_equal(gt.concat([A, b], 0).numpy(), np.concatenate([A, b], 0))
    np.testing.assert_array_equal(gt.concat([A, A], axis=-1).numpy(), np.concatenate([A, A], -1))
    w = np.arange(9.0).reshape(3, 3)
    g = grad_of(lambda x: gt.concat([x, gt.constant(b, dtype=gt.float64)], 0), A, w)
    np.testing.assert_array_equal(g, w[:2])


def test_concat_errors():
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.concat([gt.ones([2, 3]), gt.ones([2, 4])], 0)
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.concat([gt.ones([2, 3]), gt.ones([2, 3])], 2)
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.concat([gt.ones([2]), gt.ones([2, 2])], 0)


def test_stack_unstack_split():
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    np.testing.assert_array_equal(gt.stack([a, b]).numpy(), np.stack([a, b]))
    np.testing.assert_array_equal(gt.stack([a, b], axis=1).numpy(), np.stack([a, b], 1))
    parts = gt.unstack(gt.constant(A), axis=1)
    assert isinstance(parts, list) and len(parts) == 3
    for i, p in enumerate(parts):
        np.testing.assert_array_equal(p.numpy(), A[:, i])
    x = np.arange(10.0)
    got = gt.split(x, [2, -1, 3])
    assert [p.shape for p in got] == [(2,), (5,), (3,)]
    np.testing.assert_array_equal(got[1].numpy(), x[2:7])
    halves = gt.split(gt.constant(A), 3, axis=1)
    np.testing.assert_array_equal(halves[2].numpy(), A[:, 2:])
    g = grad_of(lambda t: gt.unstack(t, axis=1)[1], A, [10.0, 20.0])
    np.testing.assert_array_equal(g, [[0.0, 10.0, 0.0], [0.0, 20.0, 0.0]])
    g = grad_of(lambda t: gt.split(t, [1, 2], axis=1)[1], A)
    np.testing.assert_array_equal(g, [[0.0, 1.0, 1.0], [0.0, 1.0, 1.0]])
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.split(x, 3)
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.stack([gt.ones([2]), gt.ones([3])])
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.unstack(gt.ones([2, 3]), num=3)
