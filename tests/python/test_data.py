"""gt.data.Dataset: the pipeline pieces training tutorials use."""

import numpy as np
import pytest

import gradtape as gt

Dataset = gt.data.Dataset


def _vals(ds):
    return [e.numpy().tolist() for e in ds]


def test_from_tensor_slices_structures_and_dtypes():
    ds = Dataset.from_tensor_slices(([1, 2, 3], np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)))
    items = list(ds)
    assert len(items) == 3 and len(ds) == 3
    x, y = items[1]
    assert x.dtype == gt.int32 and int(x) == 2
    assert y.dtype == gt.float32 and y.numpy().tolist() == [3.0, 4.0]
    d = list(Dataset.from_tensor_slices({"a": [1.0, 2.0], "b": [[1], [2]]}))
    assert d[1]["a"].numpy() == 2.0 and d[1]["b"].numpy().tolist() == [2]
    with pytest.raises(ValueError, match="differ"):
        Dataset.from_tensor_slices(([1, 2], [1, 2, 3]))
    with pytest.raises(ValueError, match="rank"):
        Dataset.from_tensor_slices(3.0)


def test_batch_repeat_take_skip_map_filter():
    ds = Dataset.from_tensor_slices(np.arange(7))
    assert _vals(ds.batch(3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert _vals(ds.batch(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(ds.batch(3)) == 3 and len(ds.batch(3, drop_remainder=True)) == 2
    assert _vals(ds.take(2).repeat(3)) == [0, 1, 0, 1, 0, 1]
    assert _vals(ds.skip(5)) == [5, 6]
    assert _vals(ds.map(lambda v: v * 10).take(3)) == [0, 10, 20]
    assert _vals(ds.filter(lambda v: v % 2 == 0)) == [0, 2, 4, 6]
    pairs = Dataset.from_tensor_slices((np.arange(4), np.arange(4) * 2)).map(lambda a, b: a + b)
    assert _vals(pairs) == [0, 3, 6, 9]
    assert _vals(ds.take(2).prefetch(gt.data.AUTOTUNE).cache()) == [0, 1]
    assert int(ds.repeat().cardinality()) == gt.data.INFINITE_CARDINALITY
    assert [v for v in ds.repeat().take(9).as_numpy_iterator()] == [0, 1, 2, 3, 4, 5, 6, 0, 1]
    assert [(int(i), int(v)) for i, v in ds.take(2).enumerate()] == [(0, 0), (1, 1)]
    assert int(Dataset.range(5).reduce(gt.constant(0, gt.int64), lambda s, v: s + v)) == 10
    with pytest.raises(ValueError, match="batch_size"):
        ds.batch(0)


def test_shuffle_is_a_seeded_permutation_reshuffled_each_epoch():
    ds = Dataset.from_tensor_slices(np.arange(50)).shuffle(50, seed=3)
    a, b = _vals(ds), _vals(ds)
    assert sorted(a) == list(range(50)) and sorted(b) == list(range(50))
    assert a != list(range(50)) and a != b
    again = Dataset.from_tensor_slices(np.arange(50)).shuffle(50, seed=3)
    assert _vals(again) == a and _vals(again) == b
    fixed = Dataset.from_tensor_slices(np.arange(50)).shuffle(50, seed=3, reshuffle_each_iteration=False)
    assert _vals(fixed) == _vals(fixed)
    # A buffer of 1 keeps the order; a small buffer only moves elements forward
    # by at most the buffer's size.
    assert _vals(Dataset.from_tensor_slices(np.arange(10)).shuffle(1)) == list(range(10))
    small = _vals(Dataset.from_tensor_slices(np.arange(50)).shuffle(4, seed=1))
    assert sorted(small) == list(range(50))
    assert all(v <= pos + 3 for pos, v in enumerate(small))


def test_iterating_inside_a_function():
    ds = Dataset.from_tensor_slices((np.arange(6, dtype=np.float32), np.ones(6, np.float32))).batch(2)

    @gt.function
    def total():
        s = gt.constant(0.0)
        for x, y in ds:
            s += gt.reduce_sum(x * y)
        return s

    assert float(total()) == 15.0


def test_element_spec_and_generator():
    ds = Dataset.from_generator(lambda: iter([(1.0, 2), (3.0, 4)]))
    assert [(float(a), int(b)) for a, b in ds] == [(1.0, 2), (3.0, 4)]
    spec = Dataset.from_tensor_slices(np.zeros((4, 3), np.float32)).batch(2).element_spec
    assert spec.shape == (2, 3) and spec.dtype == gt.float32
