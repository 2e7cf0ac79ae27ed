"""Reductions (src/ops/reduce.rs): argmax/argmin and the composites."""


import numpy as np
import pytest

import gradtape as gt


def test_argmax_argmin():
    x = np.array([[1.0, 5.0, 3.0], [7.0, 2.0, 7.0]])
    r = gt.argmax(x)
    assert r.dtype == gt.int64
    np.testing.assert_array_equal(r.numpy(), np.argmax(x, 0))
    np.testing.assert_array_equal(gt.math.argmin(x, axis=1, output_type=gt.int32).numpy(), np.argmin(x, 1))
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.argmax(x, axis=2)
