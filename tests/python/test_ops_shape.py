"""Shape, indexing, rounding/clipping and nn ops: forward values against numpy,
gradients against hand-computed values, and error cases."""

import math

import numpy as np
import pytest

import gradtape as gt


def grad_of(f, x, w=None):
    """Gradient of ``sum(f(x) * w)`` with respect to tensor ``x``."""
    x = gt.constant(x, dtype=gt.float64)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
        if w is not None:
            y = y * gt.constant(w, dtype=gt.float64)
        loss = gt.reduce_sum(y)
    return tape.gradient(loss, x).numpy()


A = np.arange(1.0, 7.0).reshape(2, 3)


# ---- shape family -------------------------------------------------------------


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


def test_tensordot():
    a = np.arange(24.0).reshape(2, 3, 4)
    b = np.arange(12.0).reshape(4, 3)
    np.testing.assert_allclose(gt.tensordot(a, b, 1).numpy(), np.tensordot(a, b, 1))
    np.testing.assert_allclose(
        gt.tensordot(a, b, [[1, 2], [1, 0]]).numpy(), np.tensordot(a, b, [[1, 2], [1, 0]])
    )
    np.testing.assert_allclose(gt.linalg.tensordot(A, A, 0).numpy(), np.tensordot(A, A, 0))
    g = grad_of(lambda t: gt.tensordot(t, gt.constant(b[:, :2].T.copy(), dtype=gt.float64), [[0], [0]]), b[:2, :])
    np.testing.assert_allclose(g, np.broadcast_to(b[:, :2].T.sum(1, keepdims=True), (2, 3)))
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.tensordot(a, b, [[0], [0]])


# ---- reductions, rounding, clipping -------------------------------------------


def test_argmax_argmin():
    x = np.array([[1.0, 5.0, 3.0], [7.0, 2.0, 7.0]])
    r = gt.argmax(x)
    assert r.dtype == gt.int64
    np.testing.assert_array_equal(r.numpy(), np.argmax(x, 0))
    np.testing.assert_array_equal(gt.math.argmin(x, axis=1, output_type=gt.int32).numpy(), np.argmin(x, 1))
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.argmax(x, axis=2)


def test_round_floor_ceil():
    x = gt.constant([0.5, 1.5, 2.5, -0.5, -2.5, 1.7])
    np.testing.assert_array_equal(gt.round(x).numpy(), np.round(x.numpy()))
    np.testing.assert_array_equal(gt.math.floor(x).numpy(), np.floor(x.numpy()))
    np.testing.assert_array_equal(gt.math.ceil(x).numpy(), np.ceil(x.numpy()))
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        ys = [gt.round(x), gt.floor(x), gt.math.ceil(x)]
    assert all(tape.gradient(y, x) is None for y in ys)


def test_clip_by_value_and_norm():
    x = gt.constant([-2.0, 0.0, 0.5, 1.0, 3.0])
    np.testing.assert_array_equal(gt.clip_by_value(x, 0.0, 1.0).numpy(), [0.0, 0.0, 0.5, 1.0, 1.0])
    lo, hi = gt.constant(0.0), gt.constant(1.0)
    with gt.GradientTape(persistent=True) as tape:
        tape.watch([x, lo, hi])
        y = gt.clip_by_value(x, lo, hi)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.0, 1.0, 1.0, 1.0, 0.0])
    assert float(tape.gradient(y, lo)) == 1.0
    assert float(tape.gradient(y, hi)) == 1.0
    np.testing.assert_allclose(gt.clip_by_norm([3.0, 4.0], 2.0).numpy(), [1.2, 1.6], rtol=1e-6)
    np.testing.assert_allclose(gt.clip_by_norm([3.0, 4.0], 10.0).numpy(), [3.0, 4.0])
    g = grad_of(lambda t: gt.clip_by_norm(t, 2.0), [3.0, 4.0])
    np.testing.assert_allclose(g, [0.064, -0.048], atol=1e-12)


# ---- nn -------------------------------------------------------------------------


def _softmax(v, axis=-1):
    e = np.exp(v - v.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _log_softmax(v, axis=-1):
    m = v.max(axis=axis, keepdims=True)
    return v - m - np.log(np.exp(v - m).sum(axis=axis, keepdims=True))


def test_activations_match_formulas():
    x = np.array([-3.0, -0.5, 0.0, 0.5, 7.0])
    np.testing.assert_allclose(gt.nn.relu6(x).numpy(), np.clip(x, 0, 6))
    np.testing.assert_allclose(gt.nn.leaky_relu(x).numpy(), np.where(x > 0, x, 0.2 * x))
    scale, alpha = 1.0507009873554805, 1.6732632423543772
    np.testing.assert_allclose(gt.nn.selu(x).numpy(), np.where(x > 0, scale * x, scale * alpha * np.expm1(x)))
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(gt.nn.gelu(x).numpy(), 0.5 * x * (1 + erf(x / math.sqrt(2))), rtol=1e-12)
    approx = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(gt.nn.gelu(x, approximate=True).numpy(), approx, rtol=1e-12)
    np.testing.assert_allclose(gt.nn.silu(x).numpy(), x / (1 + np.exp(-x)), rtol=1e-12)
    np.testing.assert_allclose(gt.nn.swish(x).numpy(), x / (1 + np.exp(-x)), rtol=1e-12)
    np.testing.assert_array_equal(grad_of(gt.nn.relu6, x), [0, 0, 0, 1, 0])
    np.testing.assert_allclose(grad_of(gt.nn.leaky_relu, x), [0.2, 0.2, 0.2, 1, 1])


def test_softmax_family():
    x = np.array([[1.0, 2.0, 3.0], [1000.0, 1000.0, 0.0]])
    np.testing.assert_allclose(gt.nn.softmax(x).numpy(), _softmax(x), rtol=1e-12)
    np.testing.assert_allclose(gt.nn.softmax(x, axis=0).numpy(), _softmax(x, 0), rtol=1e-12)
    np.testing.assert_allclose(gt.nn.log_softmax(x).numpy(), _log_softmax(x), rtol=1e-12)
    y = _softmax(x[0])
    g = grad_of(gt.nn.softmax, x[0], [1.0, 0.0, 0.0])
    np.testing.assert_allclose(g, [y[0] * (1 - y[0]), -y[0] * y[1], -y[0] * y[2]], rtol=1e-12)
    labels = np.array([[0.0, 1.0, 0.0], [0.5, 0.5, 0.0]])
    logits = np.array([[1.0, 2.0, 3.0], [0.0, 1.0, -1.0]])
    want = -(labels * np.log(_softmax(logits))).sum(-1)
    got = gt.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    g = grad_of(lambda t: gt.nn.softmax_cross_entropy_with_logits(labels, t), logits)
    np.testing.assert_allclose(g, _softmax(logits) - labels, rtol=1e-12)
    sp = gt.nn.sparse_softmax_cross_entropy_with_logits(labels=[1, 0], logits=logits)
    np.testing.assert_allclose(sp.numpy(), -np.log(_softmax(logits))[[0, 1], [1, 0]], rtol=1e-12)
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.nn.sparse_softmax_cross_entropy_with_logits(labels=[1, 3], logits=logits)


def test_losses_and_normalize_and_dropout():
    z = np.array([0.0, 1.0, 1.0])
    x = np.array([0.0, -2.0, 30.0])
    want = np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))
    got = gt.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    assert float(gt.nn.l2_loss(gt.constant([1.0, 2.0, 3.0]))) == 7.0
    np.testing.assert_allclose(grad_of(gt.nn.l2_loss, [1.0, 2.0]), [1.0, 2.0])
    np.testing.assert_allclose(gt.nn.l2_normalize(gt.constant([3.0, 4.0])).numpy(), [0.6, 0.8], rtol=1e-6)
    np.testing.assert_allclose(gt.math.l2_normalize(A, axis=1).numpy(), A / np.linalg.norm(A, axis=1, keepdims=True))
    y = gt.nn.dropout(gt.ones([2000]), rate=0.25, seed=3).numpy()
    assert set(np.unique(y).tolist()) <= {0.0, float(np.float32(4.0 / 3.0))}
    assert 0.15 < (y == 0).mean() < 0.35
    with pytest.raises(ValueError):
        gt.nn.dropout(gt.ones([2]), rate=1.0)
