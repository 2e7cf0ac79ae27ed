"""Activations, softmax family, losses and dropout (src/ops/nn.rs): values against formulas and gradients."""

import math

import numpy as np
import pytest

import gradtape as gt
from helpers import A, grad_of


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
