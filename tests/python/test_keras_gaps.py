"""Issue 16, the remaining Keras gaps: F1/FBeta scores, top_k / class_id precision and
recall, multi-label AUC, bilinear UpSampling2D, Conv2DTranspose(output_padding),
recurrent dropout / stateful / masks, and gt.strings inside gt.function. Expected values
come from Keras' formulas written in numpy here (or Keras' documented numbers, said so)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradtape as gt

M = gt.keras.metrics
L = gt.keras.layers
EPS = 1e-7  # Keras' backend.epsilon()

# --- F1Score / FBetaScore --------------------------------------------------------------

YT = np.array([[1, 1, 1], [1, 0, 0], [1, 1, 0], [0, 0, 1]], np.int32)
YP = np.array([[0.2, 0.6, 0.7], [0.2, 0.6, 0.6], [0.6, 0.8, 0.0], [0.0, 0.0, 0.0]], np.float32)


def np_fbeta(yt, yp, beta=1.0, threshold=None, average=None, sw=None):
    """Keras' FBetaScore, in float64."""
    yt, yp = yt.astype(np.float64), yp.astype(np.float64)
    if threshold is None:
        pred = (yp >= yp.max(axis=-1, keepdims=True)) & (np.abs(yp) > 1e-9)
    else:
        pred = yp > threshold
    pred = pred.astype(np.float64)
    w = np.ones(len(yt)) if sw is None else np.asarray(sw, np.float64)
    axis = None if average == "micro" else 0
    tp = (pred * yt * w[:, None]).sum(axis=axis)
    fp = (pred * (1 - yt) * w[:, None]).sum(axis=axis)
    fn = ((1 - pred) * yt * w[:, None]).sum(axis=axis)
    support = (yt * w[:, None]).sum(axis=axis)
    p, r = tp / (tp + fp + EPS), tp / (tp + fn + EPS)
    b2 = beta**2
    f = p * r / (b2 * p + r + EPS) * (1 + b2)
    if average == "weighted":
        return np.sum(f * support / (np.sum(support) + EPS))
    if average is not None:
        return np.mean(f)
    return f


def test_f1_score_keras_doc_example():
    m = M.F1Score(threshold=0.5)
    m.update_state(YT[:3], YP[:3])
    # Keras' documented result: array([0.5, 0.8, 0.6666667], dtype=float32)
    np.testing.assert_allclose(m.result().numpy(), [0.5, 0.8, 0.6666667], rtol=1e-6)
    f2 = M.FBetaScore(beta=2.0, threshold=0.5)
    f2.update_state(YT[:3], YP[:3])
    # Keras' documented FBetaScore(beta=2.0, threshold=0.5) result on the same data
    np.testing.assert_allclose(f2.result().numpy(), [0.3846154, 0.90909094, 0.8333334], rtol=1e-6)


@pytest.mark.parametrize("average", [None, "micro", "macro", "weighted"])
@pytest.mark.parametrize("threshold", [None, 0.5, 0.65])
@pytest.mark.parametrize("beta", [1.0, 0.5, 2.0])
def test_fbeta_matches_keras_formula(average, threshold, beta):
    m = M.FBetaScore(average=average, beta=beta, threshold=threshold)
    sw = [1.0, 0.5, 2.0, 1.0]
    m.update_state(YT[:2], YP[:2], sample_weight=sw[:2])
    m.update_state(YT[2:], YP[2:], sample_weight=sw[2:])
    want = np_fbeta(YT, YP, beta, threshold, average, sw)
    got = m.result().numpy()
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)
    m.reset_state()
    m.update_state(YT, YP)
    np.testing.assert_allclose(m.result().numpy(), np_fbeta(YT, YP, beta, threshold, average), rtol=2e-6, atol=1e-7)


def test_f1_score_in_a_function_and_by_name_and_errors():
    m = M.get("f1_score")
    assert isinstance(m, M.F1Score) and m.name == "f1_score"

    @gt.function
    def step(yt, yp):
        m.update_state(yt, yp)

    step(gt.constant(YT, gt.float32), gt.constant(YP))
    step(gt.constant(YT, gt.float32), gt.constant(YP))
    np.testing.assert_allclose(m.result().numpy(), np_fbeta(np.vstack([YT, YT]), np.vstack([YP, YP])), rtol=2e-6)
    with pytest.raises(ValueError, match="average"):
        M.F1Score(average="samples")
    with pytest.raises(ValueError, match="beta"):
        M.FBetaScore(beta=2)
    with pytest.raises(ValueError, match="beta"):
        M.FBetaScore(beta=-1.0)
    with pytest.raises(ValueError, match="threshold"):
        M.F1Score(threshold=1.5)
    with pytest.raises(ValueError, match="threshold"):
        M.F1Score(threshold=1)
    with pytest.raises(ValueError, match="2D"):
        M.F1Score()([1, 0], [0.3, 0.7])
    f = M.F1Score()
    f.update_state(YT, YP)
    with pytest.raises(ValueError):
        f.update_state(YT[:, :2], YP[:, :2])  # built for 3 classes


# --- Precision / Recall with top_k and class_id ------------------------------------


def np_topk_counts(yt, yp, k, class_id=None, threshold=-1e10):
    """Keras' top-k filter (ties: the lower index first), then the counts above threshold."""
    yp = yp.astype(np.float32).copy()
    order = np.argsort(-yp, axis=-1, kind="stable")[..., :k]
    keep = np.zeros_like(yp, bool)
    np.put_along_axis(keep, order, True, axis=-1)
    yp = np.where(keep, yp, np.float32(-1e10))
    yt = yt.astype(bool)
    if class_id is not None:
        yt, yp = yt[..., class_id], yp[..., class_id]
    pos = yp > np.float32(threshold)
    return np.sum(pos & yt), np.sum(pos & ~yt), np.sum(~pos & yt)


def test_precision_top_k_keras_doc_examples():
    # Keras' documented examples: top_k=2 gives 0.0, top_k=4 gives 0.5 (ties: first indices).
    m = M.Precision(top_k=2)
    m.update_state([0, 0, 1, 1], [1, 1, 1, 1])
    assert float(m.result()) == 0.0
    m = M.Precision(top_k=4)
    m.update_state([0, 0, 1, 1], [1, 1, 1, 1])
    assert float(m.result()) == 0.5


PT = np.array([[0, 1, 1, 0], [1, 0, 0, 1], [0, 0, 1, 0]])
PP = np.array([[0.1, 0.7, 0.4, 0.9], [0.8, 0.2, 0.3, 0.3], [0.5, 0.5, 0.4, 0.05]], np.float32)


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("class_id", [None, 0, 2, 3])
def test_precision_recall_top_k_match_keras(k, class_id):
    tp, fp, fn = np_topk_counts(PT, PP, k, class_id)
    p = M.Precision(top_k=k, class_id=class_id)
    r = M.Recall(top_k=k, class_id=class_id)
    p.update_state(PT, PP)
    r.update_state(PT, PP)
    np.testing.assert_allclose(float(p.result()), tp / (tp + fp) if tp + fp else 0.0, rtol=1e-6)
    np.testing.assert_allclose(float(r.result()), tp / (tp + fn) if tp + fn else 0.0, rtol=1e-6)


def test_top_k_with_thresholds_and_sample_weight():
    # A threshold with top_k: a top-k prediction counts only above it.
    tp, fp, _ = np_topk_counts(PT, PP, 2, threshold=0.45)
    p = M.Precision(top_k=2, thresholds=0.45)
    p.update_state(PT, PP)
    np.testing.assert_allclose(float(p.result()), tp / (tp + fp), rtol=1e-6)
    # Per-example weights scale each row's counts.
    w = np.array([2.0, 1.0, 0.5])
    num = den = 0.0
    for i in range(3):
        t, f, _ = np_topk_counts(PT[i : i + 1], PP[i : i + 1], 2)
        num += w[i] * t
        den += w[i] * (t + f)
    p = M.Precision(top_k=2)
    p.update_state(PT, PP, sample_weight=w)
    np.testing.assert_allclose(float(p.result()), num / den, rtol=1e-6)
    with pytest.raises(ValueError):
        M.Recall(top_k=0)
    with pytest.raises(ValueError):
        M.Precision(top_k=9).update_state(PT, PP)
    with pytest.raises(ValueError):
        M.Precision(class_id=7).update_state(PT, PP)


# --- AUC multi-label ---------------------------------------------------------------


def np_auc(yt, yp, w=None, num_thresholds=200, curve="ROC", summation="interpolation"):
    """Keras' AUC of one curve from its float32 thresholds, in float64."""
    eps = 1e-7
    t = np.array([0.0 - eps, *[(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)], 1.0 + eps],
                 np.float32)
    yp = np.clip(yp.astype(np.float32), 0, 1)
    w = np.ones(len(yt)) if w is None else np.asarray(w, np.float64)
    above = yp[None, :] > t[:, None]
    lab = yt.astype(bool)[None, :]
    tp = (above & lab) @ w
    fp = (above & ~lab) @ w
    tn = (~above & ~lab) @ w
    fn = (~above & lab) @ w

    def div(a, b):
        return np.where(b == 0, 0.0, a / np.where(b == 0, 1, b))

    if curve == "PR" and summation == "interpolation":
        dtp = tp[:-1] - tp[1:]
        p = tp + fp
        dp = p[:-1] - p[1:]
        slope = div(dtp, np.maximum(dp, 0))
        intercept = tp[1:] - slope * p[1:]
        ratio = np.where((p[:-1] > 0) & (p[1:] > 0), div(p[:-1], np.maximum(p[1:], 0)), 1.0)
        return np.sum(div(slope * (dtp + intercept * np.log(ratio)), np.maximum(tp[1:] + fn[1:], 0)))
    recall = div(tp, tp + fn)
    x, y = (div(fp, fp + tn), recall) if curve == "ROC" else (recall, div(tp, tp + fp))
    h = {"interpolation": (y[:-1] + y[1:]) / 2, "minoring": np.minimum(y[:-1], y[1:]),
         "majoring": np.maximum(y[:-1], y[1:])}[summation]
    return np.sum((x[:-1] - x[1:]) * h)


AT = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0], [0, 0, 1], [1, 0, 0]])
AP = np.array([[0.83, 0.12, 0.61], [0.27, 0.73, 0.47], [0.55, 0.36, 0.22], [0.41, 0.18, 0.92],
               [0.66, 0.58, 0.13]], np.float32)


@pytest.mark.parametrize("curve,summation", [("ROC", "interpolation"), ("PR", "interpolation"),
                                             ("ROC", "minoring"), ("PR", "majoring")])
@pytest.mark.parametrize("label_weights", [None, [0.5, 2.0, 1.0]])
def test_auc_multi_label_matches_keras(curve, summation, label_weights):
    sw = np.array([1.0, 2.0, 0.5, 1.0, 1.5])
    per_label = np.array([np_auc(AT[:, j], AP[:, j], sw, curve=curve, summation=summation) for j in range(3)])
    want = per_label.mean() if label_weights is None else per_label @ label_weights / np.sum(label_weights)
    m = M.AUC(multi_label=True, curve=curve, summation_method=summation, label_weights=label_weights)
    m.update_state(AT[:3], AP[:3], sample_weight=sw[:3])
    m.update_state(AT[3:], AP[3:], sample_weight=sw[3:])
    np.testing.assert_allclose(float(m.result()), want, rtol=1e-5)
    assert tuple(m.true_positives.shape) == (200, 3)
    m.reset_state()
    assert float(m.result()) == 0.0


def test_auc_label_weights_without_multi_label_weight_the_counts():
    lw = np.array([0.5, 2.0, 1.0])
    want = np_auc(AT.ravel(), AP.ravel(), np.tile(lw, len(AT)))
    m = M.AUC(label_weights=lw.tolist())
    m.update_state(AT, AP)
    np.testing.assert_allclose(float(m.result()), want, rtol=1e-5)
    flat = M.AUC()
    flat.update_state(AT, AP)
    np.testing.assert_allclose(float(flat.result()), np_auc(AT.ravel(), AP.ravel()), rtol=1e-5)


def test_auc_num_labels_and_errors():
    m = M.AUC(multi_label=True, num_labels=3)
    assert tuple(m.false_negatives.shape) == (200, 3)
    assert float(m.result()) == 0.0
    with pytest.raises(ValueError, match="num_labels"):
        M.AUC(num_labels=3)
    with pytest.raises(ValueError, match="rank 2"):
        M.AUC(multi_label=True).update_state([1, 0], [0.3, 0.2])
    with pytest.raises(ValueError, match="labels"):
        m.update_state(AT[:, :2], AP[:, :2])
    with pytest.raises(ValueError, match="labels"):
        M.AUC(multi_label=True, label_weights=[1.0, 2.0]).update_state(AT, AP)

    m2 = M.AUC(multi_label=True)

    @gt.function
    def step(yt, yp):
        m2.update_state(yt, yp)

    step(gt.constant(AT), gt.constant(AP))
    want = np.mean([np_auc(AT[:, j], AP[:, j]) for j in range(3)])
    np.testing.assert_allclose(float(m2.result()), want, rtol=1e-5)


# --- UpSampling2D(bilinear), Conv2DTranspose(output_padding) ------------------------


def np_resize_bilinear(x, oh, ow):
    """tf.image.resize(method="bilinear") (half-pixel centres, no antialias), as TF's
    kernel computes it (float32 source positions)."""
    n, h, w, c = x.shape

    def weights(n_in, n_out):
        scale = np.float32(n_in) / np.float32(n_out)
        out = []
        for o in range(n_out):
            src = (np.float32(o) + np.float32(0.5)) * scale - np.float32(0.5)
            lo = int(np.floor(src))
            out.append((max(lo, 0), min(int(np.ceil(src)), n_in - 1), float(src - np.floor(src))))
        return out

    y = np.zeros((n, oh, ow, c), np.float64)
    for i, (t, b, ly) in enumerate(weights(h, oh)):
        for j, (left, r, lx) in enumerate(weights(w, ow)):
            top = x[:, t, left] + (x[:, t, r] - x[:, t, left]) * lx
            bot = x[:, b, left] + (x[:, b, r] - x[:, b, left]) * lx
            y[:, i, j] = top + (bot - top) * ly
    return y


def test_upsampling2d_bilinear_known_values():
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32).reshape(1, 2, 2, 1)
    y = L.UpSampling2D(2, interpolation="bilinear")(x).numpy()[0, :, :, 0]
    # tf.image.resize([[1, 2], [3, 4]], (4, 4)) printed by TF:
    want = [[1.0, 1.25, 1.75, 2.0], [1.5, 1.75, 2.25, 2.5], [2.5, 2.75, 3.25, 3.5], [3.0, 3.25, 3.75, 4.0]]
    np.testing.assert_allclose(y, want, rtol=1e-6)


@pytest.mark.parametrize("size", [(2, 2), (3, 2), (1, 4)])
def test_upsampling2d_bilinear_matches_tf_resize_with_gradient(size):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 3, 5, 2))
    layer = L.UpSampling2D(size, interpolation="bilinear")
    y = layer(gt.constant(x))
    assert y.dtype == gt.float64
    np.testing.assert_allclose(y.numpy(), np_resize_bilinear(x, 3 * size[0], 5 * size[1]), rtol=1e-12, atol=1e-12)
    # The layer is linear: the gradient of sum(w * y) is the adjoint applied to w.
    w = rng.normal(size=y.shape)
    xt = gt.constant(x)
    with gt.GradientTape() as tape:
        tape.watch(xt)
        s = gt.reduce_sum(layer(xt) * w)
    g = tape.gradient(s, xt).numpy()
    want = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        e = np.zeros_like(x)
        e[idx] = 1.0
        want[idx] = np.sum(np_resize_bilinear(e, 3 * size[0], 5 * size[1]) * w)
    np.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-12)
    f32 = L.UpSampling2D(size, interpolation="bilinear")(x.astype(np.float32))
    np.testing.assert_allclose(f32.numpy(), np_resize_bilinear(x.astype(np.float32), 3 * size[0], 5 * size[1]),
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="interpolation"):
        L.UpSampling2D(2, interpolation="lanczos9")


def np_conv_transpose(x, k, strides, out_hw, padding):
    """TF's conv2d_transpose (NHWC, kernel (kh, kw, out, in)) for an output size."""
    n, h, w, _ = x.shape
    kh, kw, co, _ = k.shape
    full = np.zeros((n, (h - 1) * strides[0] + kh, (w - 1) * strides[1] + kw, co))
    for i in range(h):
        for j in range(w):
            full[:, i * strides[0] : i * strides[0] + kh, j * strides[1] : j * strides[1] + kw] += np.einsum(
                "nc,abdc->nabd", x[:, i, j], k
            )
    pads = []
    for size_in, kk, s, out in ((h, kh, strides[0], out_hw[0]), (w, kw, strides[1], out_hw[1])):
        total = max((size_in - 1) * s + kk - out, 0) if padding == "same" else 0
        pads.append(total // 2)
    y = np.zeros((n, out_hw[0], out_hw[1], co))
    ch = min(out_hw[0], full.shape[1] - pads[0])
    cw = min(out_hw[1], full.shape[2] - pads[1])
    y[:, :ch, :cw] = full[:, pads[0] : pads[0] + ch, pads[1] : pads[1] + cw]
    return y


@pytest.mark.parametrize("padding", ["same", "valid"])
@pytest.mark.parametrize("output_padding", [(0, 0), (1, 0), (1, 2), 1])
def test_conv2d_transpose_output_padding(padding, output_padding):
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2, 3, 4, 3))
    strides = (2, 3)
    op = (output_padding, output_padding) if isinstance(output_padding, int) else output_padding
    layer = L.Conv2DTranspose(2, 3, strides=strides, padding=padding, output_padding=output_padding,
                              dtype="float64", bias_initializer="ones")
    y = layer(gt.constant(x))
    pad = 1 if padding == "same" else 0
    # Keras' output length: (in - 1) * stride + kernel - 2 * pad + output_padding
    out_hw = ((3 - 1) * 2 + 3 - 2 * pad + op[0], (4 - 1) * 3 + 3 - 2 * pad + op[1])
    assert tuple(y.shape) == (2, *out_hw, 2)
    want = np_conv_transpose(x, layer.kernel.numpy(), strides, out_hw, padding) + 1.0
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-10, atol=1e-10)
    with gt.GradientTape() as tape:
        s = gt.reduce_sum(layer(gt.constant(x)) ** 2)
    gk = tape.gradient(s, layer.kernel)
    assert gk is not None and tuple(gk.shape) == (3, 3, 2, 3)


def test_conv2d_transpose_output_padding_errors():
    with pytest.raises(ValueError, match="greater than output padding"):
        L.Conv2DTranspose(2, 3, strides=2, output_padding=2)
    with pytest.raises(ValueError, match="greater than output padding"):
        L.Conv2DTranspose(2, 3, output_padding=1)
    with pytest.raises(ValueError, match="non-negative"):
        L.Conv2DTranspose(2, 3, strides=2, output_padding=-1)
    # Keras' shapes: strides 2, 'same', output_padding 1 on 4x4 -> 8x8.
    y = L.Conv2DTranspose(2, 3, strides=2, padding="same", output_padding=1)(gt.ones([1, 4, 4, 3]))
    assert tuple(y.shape) == (1, 8, 8, 2)


# --- recurrent layers: dropout, stateful, masks ---------------------------------------


def np_simple_rnn(x, k, u, b, h0=None, mask=None, zero_output=False, backwards=False):
    """Keras' SimpleRNN with a mask: (sequence outputs, final state)."""
    n, t, _ = x.shape
    h = np.zeros((n, k.shape[1])) if h0 is None else h0
    steps = range(t - 1, -1, -1) if backwards else range(t)
    outs, prev = [], np.zeros_like(h)
    for s in steps:
        new = np.tanh(x[:, s] @ k + b + h @ u)
        if mask is not None:
            m = mask[:, s][:, None]
            out = np.where(m, new, 0.0 if zero_output else prev)
            h = np.where(m, new, h)
        else:
            out = h = new
        outs.append(out)
        prev = out
    return np.stack(outs, 1), h


def _rnn_weights(layer):
    c = layer.cell
    return c.kernel.numpy(), c.recurrent_kernel.numpy(), c.bias.numpy()


def test_simple_rnn_dropout_in_training_only():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 5, 3))
    layer = L.SimpleRNN(6, dropout=0.5, recurrent_dropout=0.25, return_sequences=True, dtype="float64",
                        bias_initializer="glorot_uniform")
    inference = layer(x).numpy()
    k, u, b = _rnn_weights(layer)
    np.testing.assert_allclose(inference, np_simple_rnn(x, k, u, b)[0], rtol=1e-12)
    np.testing.assert_allclose(layer(x, training=False).numpy(), inference, rtol=1e-12)
    train = layer(x, training=True).numpy()
    dm, rm = layer.cell._dropout_mask.numpy(), layer.cell._recurrent_dropout_mask.numpy()
    # One mask per sequence, the same at every step: zeros and 1 / (1 - rate).
    assert dm.shape == (4, 3) and rm.shape == (4, 6)
    assert set(np.unique(dm)) <= {0.0, 2.0} and set(np.unique(rm)) <= {0.0, 1 / 0.75}
    h = np.zeros((4, 6))
    outs = []
    for s in range(5):
        h = np.tanh((x[:, s] * dm) @ k + b + (h * rm) @ u)
        outs.append(h)
    np.testing.assert_allclose(train, np.stack(outs, 1), rtol=1e-12)
    assert not np.allclose(train, inference)


@pytest.mark.parametrize("cls", [L.LSTM, L.GRU])
def test_lstm_gru_dropout_follows_training(cls):
    x = np.random.default_rng(1).normal(size=(3, 4, 2)).astype(np.float32)
    layer = cls(5, dropout=0.4, recurrent_dropout=0.4)
    plain = cls(5)
    layer(x)
    plain(x)
    for v, w in zip(plain.variables, layer.variables):
        v.assign(w)
    np.testing.assert_allclose(layer(x).numpy(), plain(x).numpy(), rtol=1e-6)
    np.testing.assert_allclose(layer(x, training=False).numpy(), plain(x).numpy(), rtol=1e-6)
    assert not np.allclose(layer(x, training=True).numpy(), plain(x).numpy())
    # Gradients flow through the dropped steps.
    with gt.GradientTape() as tape:
        s = gt.reduce_sum(layer(x, training=True))
    assert all(g is not None for g in tape.gradient(s, layer.trainable_variables))
    # The sequential model passes training on to the RNN.
    model = L.Sequential([layer])
    assert not np.allclose(model(x, training=True).numpy(), plain(x).numpy())


@pytest.mark.parametrize("cls", [L.SimpleRNN, L.LSTM, L.GRU])
def test_stateful_carries_the_states_across_calls(cls):
    x = np.random.default_rng(2).normal(size=(2, 6, 3)).astype(np.float32)
    layer = cls(4, stateful=True, return_sequences=True)
    first = layer(x[:, :3]).numpy()
    second = layer(x[:, 3:]).numpy()
    whole = cls(4, return_sequences=True)
    whole(x)
    for v, w in zip(whole.variables, layer.variables):
        v.assign(w)
    np.testing.assert_allclose(np.concatenate([first, second], 1), whole(x).numpy(), rtol=1e-5, atol=1e-6)
    # The carried states are no weights (as Keras).
    assert len(layer.weights) == len(whole.weights)
    assert all(np.any(s.numpy() != 0) for s in layer.states)
    layer.reset_state()
    assert all(np.all(s.numpy() == 0) for s in layer.states)
    np.testing.assert_allclose(layer(x[:, :3]).numpy(), first, rtol=1e-6)
    layer.reset_states()
    np.testing.assert_allclose(layer(x[:, :3]).numpy(), first, rtol=1e-6)
    with pytest.raises(ValueError, match="batch"):
        layer(x[:1, :3])


def test_stateful_inside_a_function_and_in_a_model():
    x = np.random.default_rng(3).normal(size=(2, 4, 3)).astype(np.float32)
    layer = L.LSTM(3, stateful=True)
    ref = L.LSTM(3)
    ref(np.concatenate([x, x], 1))
    layer(x)
    layer.reset_state()
    for v, w in zip(ref.variables, layer.variables):
        v.assign(w)

    @gt.function
    def run(t):
        return layer(t)

    run(gt.constant(x))
    out = run(gt.constant(x)).numpy()
    np.testing.assert_allclose(out, ref(np.concatenate([x, x], 1)).numpy(), rtol=1e-5, atol=1e-6)
    model = gt.keras.Sequential([L.SimpleRNN(2, stateful=True)])
    a = model(x).numpy()
    b = model(x).numpy()
    assert not np.allclose(a, b)
    model.layers[-1].reset_states()
    np.testing.assert_allclose(model(x).numpy(), a, rtol=1e-6)


def test_embedding_mask_zero_and_masking_layer():
    emb = L.Embedding(10, 3, mask_zero=True)
    ids = np.array([[3, 5, 0, 0], [0, 2, 7, 1]])
    np.testing.assert_array_equal(emb.compute_mask(ids).numpy(), ids != 0)
    assert L.Embedding(10, 3).compute_mask(ids) is None
    m = L.Masking(mask_value=-1.0)
    x = np.array([[[1.0, 2.0], [-1.0, -1.0], [-1.0, 0.0]]], np.float32)
    np.testing.assert_allclose(m(x).numpy(), [[[1.0, 2.0], [0.0, 0.0], [-1.0, 0.0]]])
    np.testing.assert_array_equal(m.compute_mask(x).numpy(), [[True, False, True]])


@pytest.mark.parametrize("backwards", [False, True])
@pytest.mark.parametrize("zero_output", [False, True])
def test_simple_rnn_honours_a_mask_as_keras(backwards, zero_output):
    rng = np.random.default_rng(4)
    x = rng.normal(size=(3, 5, 2))
    mask = np.array([[1, 1, 1, 0, 0], [0, 1, 0, 1, 1], [1, 0, 0, 0, 0]], bool)
    layer = L.SimpleRNN(4, return_sequences=True, return_state=True, go_backwards=backwards,
                        zero_output_for_mask=zero_output, dtype="float64", bias_initializer="glorot_uniform")
    seq, state = layer(x, mask=mask)
    k, u, b = _rnn_weights(layer)
    want_seq, want_state = np_simple_rnn(x, k, u, b, mask=mask, zero_output=zero_output, backwards=backwards)
    np.testing.assert_allclose(seq.numpy(), want_seq, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(state.numpy(), want_state, rtol=1e-12)
    last = L.SimpleRNN(4, go_backwards=backwards, zero_output_for_mask=zero_output, dtype="float64")
    last(x)
    for v, w in zip(last.variables, layer.variables):
        v.assign(w)
    np.testing.assert_allclose(last(x, mask=mask).numpy(), want_seq[:, -1], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("cls", [L.LSTM, L.GRU])
def test_masked_padding_gives_the_unpadded_result(cls):
    """Right padding behind Embedding(mask_zero=True): each sequence's LSTM/GRU output
    (and its gradient) equals that of the sequence alone."""
    ids = np.array([[4, 2, 7, 0, 0], [1, 3, 0, 0, 0], [5, 6, 2, 8, 9]])
    emb = L.Embedding(10, 3, mask_zero=True)
    rnn = cls(4)
    head = L.Dense(1)
    model = gt.keras.Sequential([emb, rnn, head])
    out = model(ids).numpy()
    for i, n in enumerate([3, 2, 5]):
        alone = head(rnn(emb(ids[i : i + 1, :n]))).numpy()
        np.testing.assert_allclose(out[i], alone[0], rtol=1e-5, atol=1e-6)
    with gt.GradientTape() as tape:
        s = gt.reduce_sum(model(ids))
    grads = tape.gradient(s, model.trainable_variables)
    # The padding id 0 feeds masked steps only, whose results are discarded: its
    # embedding row gets no gradient.
    np.testing.assert_allclose(gt.convert_to_tensor(grads[0]).numpy()[0], 0.0, atol=1e-7)
    assert np.any(gt.convert_to_tensor(grads[0]).numpy()[4] != 0)


def test_bidirectional_with_a_mask():
    ids = np.array([[4, 2, 7, 0], [1, 3, 0, 0]])
    emb = L.Embedding(10, 3, mask_zero=True)
    bi = L.Bidirectional(L.LSTM(2))
    model = gt.keras.Sequential([emb, bi])
    out = model(ids).numpy()
    for i, n in enumerate([3, 2]):
        np.testing.assert_allclose(out[i], bi(emb(ids[i : i + 1, :n])).numpy()[0], rtol=1e-5, atol=1e-6)
    seq = L.Bidirectional(L.GRU(2, return_sequences=True), merge_mode="sum")
    y = seq(emb(ids)).numpy()  # the embedding's output carries its mask
    # Keras zeros each direction's masked steps in the sequences.
    np.testing.assert_allclose(y[0, 3], 0.0, atol=1e-7)
    np.testing.assert_allclose(y[1, 2:], 0.0, atol=1e-7)
    alone = seq(emb(ids[1:, :2])).numpy()
    np.testing.assert_allclose(y[1, :2], alone[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(seq.compute_mask(None, gt.constant(ids != 0)).numpy(), ids != 0)


def test_masks_through_a_functional_model_and_global_average_pooling():
    ids = np.array([[4, 2, 0, 0], [1, 3, 5, 0]])
    inputs = gt.keras.Input(shape=(4,), dtype="int32")
    emb = L.Embedding(10, 3, mask_zero=True)
    pooled = L.GlobalAveragePooling1D()(L.Dense(2)(emb(inputs)))
    model = gt.keras.Model(inputs, pooled)
    out = model(ids).numpy()
    d = [layer for layer in model.layers if isinstance(layer, L.Dense)][0]
    h = emb(ids).numpy() @ d.kernel.numpy() + d.bias.numpy()
    keep = (ids != 0)[..., None]
    np.testing.assert_allclose(out, (h * keep).sum(1) / keep.sum(1), rtol=1e-5)
    # A layer that cannot take the mask drops it, with Keras' warning.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        flat = L.Flatten()(emb(ids))
    assert any("does not support masking" in str(w.message) for w in caught)
    assert L.SimpleRNN(2)(gt.reshape(flat, [2, 4, 3])).shape == (2, 2)


# --- gt.strings inside gt.function ---------------------------------------------------


def test_strings_ops_inside_a_function_compute_on_each_calls_values():
    traces = []

    @gt.function
    def words(s, n):
        traces.append(1)
        w = gt.strings.split(gt.strings.lower(gt.strings.strip(s)))
        tagged = gt.strings.join([w, gt.strings.as_string(n)], separator="#")
        return tagged, gt.strings.length(w) + n, gt.strings.regex_full_match(w, "[a-c]+")

    t, lengths, match = words(gt.constant("  Abc B xyZ "), gt.constant(1))
    np.testing.assert_array_equal(t.numpy(), [b"abc#1", b"b#1", b"xyz#1"])
    np.testing.assert_array_equal(lengths.numpy(), [4, 2, 4])
    np.testing.assert_array_equal(match.numpy(), [True, True, False])
    # Same signature, other values: the graph runs the string ops again (no retrace),
    # and split's result has another length.
    t, lengths, _ = words(gt.constant("Q R"), gt.constant(7))
    np.testing.assert_array_equal(t.numpy(), [b"q#7", b"r#7"])
    np.testing.assert_array_equal(lengths.numpy(), [8, 8])
    assert len(traces) == 1

    @gt.function
    def number(s):
        return gt.strings.to_number(gt.strings.reduce_join(s, separator="")) * 2.0

    assert float(number(gt.constant(["1", "2"]))) == 24.0
    assert float(number(gt.constant(["4", "5"]))) == 90.0

    @gt.function
    def cut(s, pos):
        return gt.strings.substr(s, pos, 2)

    np.testing.assert_array_equal(cut(gt.constant(["hello"]), gt.constant(1)).numpy(), [b"el"])
    with pytest.raises(gt.errors.InvalidArgumentError):
        cut(gt.constant(["hello"]), gt.constant(9))


def test_a_stateful_gru_built_by_its_first_call_inside_a_function():
    x = np.random.default_rng(6).normal(size=(2, 4, 3)).astype(np.float32)
    layer = L.GRU(3, stateful=True)

    @gt.function
    def run(t):
        return layer(t)

    run(gt.constant(x))
    second = run(gt.constant(x)).numpy()
    ref = L.GRU(3)
    ref(np.concatenate([x, x], 1))
    for v, w in zip(ref.variables, layer.variables):
        v.assign(w)
    np.testing.assert_allclose(second, ref(np.concatenate([x, x], 1)).numpy(), rtol=1e-5, atol=1e-6)
