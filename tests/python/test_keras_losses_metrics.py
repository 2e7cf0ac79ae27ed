"""gt.keras: losses and metrics against Keras 3's numbers (TF 2.21), the loss
formulas against numpy in float64, and models (subclassed, functional, Sequential)
with compile / fit / evaluate / predict."""


import numpy as np
import pytest

import gradtape as gt

keras = gt.keras
L = keras.losses
M = keras.metrics

YT = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
YP = np.array([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2], [0.2, 0.2, 0.6], [0.9, 0.05, 0.05]])
LOGITS = np.array([[1.0, 2.0, -1.0], [0.5, -0.3, 2.2], [-1.2, 0.0, 0.7], [3.0, 1.0, 0.0]])
LAB = np.array([1, 0, 2, 1])
REG_T = np.array([[1.0, -2.0], [0.5, 3.0], [0.0, 0.0]])
REG_P = np.array([[1.5, -0.5], [0.0, 2.0], [2.5, -0.2]])
BT = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
BP = np.array([[0.8, 0.3], [0.1, 0.6], [0.95, 0.4]])
BL = np.array([[2.0, -1.0], [-0.5, 0.3], [1.2, -2.0]])
SW = np.array([1.0, 0.5, 2.0])

# Keras 3 (TF 2.21) on the arrays above.
KERAS = {
    "mse": 1.6733332872390747,
    "mse_sum": 5.019999980926514,
    "mse_none": [1.25, 0.625, 3.1449999809265137],
    "mse_sw": 2.617500066757202,
    "mae": 1.0333333015441895,
    "huber": 0.628333330154419,
    "huber_d2": 0.815833330154419,
    "bce": 0.360598087310791,
    "bce_logits": 0.6431387662887573,
    "bce_ls": 0.4220585823059082,
    "cce": 1.1390950679779053,
    "cce_logits": 1.2380472421646118,
    "cce_ls": 1.2046390771865845,
    "scce": 1.1390949487686157,
    "scce_logits": 1.2380472421646118,
    "scce_logits_none": [0.349012166261673, 1.9348890781402588, 0.498441606760025, 2.1698460578918457],
    "fn_mse": [1.25, 0.625, 3.145],
    "fn_mae": [1.0, 0.75, 1.35],
    "fn_scce": [0.34901221676818633, 1.9348891194091213, 0.4984416112570428, 2.1698460195562856],
    "fn_bce": [0.2899092476264711, 0.30809306971190853, 0.4837920131308528],
    "fn_cce": [0.35667494393873245, 0.6931471805599453, 0.5108256237659907, 2.995732273553991],
    "mean": 3.0,
    "sum": 8.0,
    "acc": 0.75,
    "bacc": 0.8333333134651184,
    "cacc": 0.75,
    "scacc": 0.800000011920929,
    "scacc_sw": 0.7777777910232544,
    "mmse": 1.6733332872390747,
}

CASES = {
    "mse": lambda: L.MeanSquaredError()(REG_T, REG_P),
    "mse_sum": lambda: L.MeanSquaredError(reduction="sum")(REG_T, REG_P),
    "mse_none": lambda: L.MeanSquaredError(reduction=None)(REG_T, REG_P),
    "mse_sw": lambda: L.MeanSquaredError()(REG_T, REG_P, sample_weight=SW),
    "mae": lambda: L.MeanAbsoluteError()(REG_T, REG_P),
    "huber": lambda: L.Huber()(REG_T, REG_P),
    "huber_d2": lambda: L.Huber(delta=2.0)(REG_T, REG_P),
    "bce": lambda: L.BinaryCrossentropy()(BT, BP),
    "bce_logits": lambda: L.BinaryCrossentropy(from_logits=True)(BT, BL),
    "bce_ls": lambda: L.BinaryCrossentropy(label_smoothing=0.1)(BT, BP),
    "cce": lambda: L.CategoricalCrossentropy()(YT, YP),
    "cce_logits": lambda: L.CategoricalCrossentropy(from_logits=True)(YT, LOGITS),
    "cce_ls": lambda: L.CategoricalCrossentropy(label_smoothing=0.2)(YT, YP),
    "scce": lambda: L.SparseCategoricalCrossentropy()(LAB, YP),
    "scce_logits": lambda: L.SparseCategoricalCrossentropy(from_logits=True)(LAB, LOGITS),
    "scce_logits_none": lambda: L.SparseCategoricalCrossentropy(from_logits=True, reduction="none")(LAB, LOGITS),
    "fn_mse": lambda: L.MSE(REG_T, REG_P),
    "fn_mae": lambda: L.MAE(REG_T, REG_P),
    "fn_scce": lambda: L.sparse_categorical_crossentropy(LAB, LOGITS, from_logits=True),
    "fn_bce": lambda: L.binary_crossentropy(BT, BP),
    "fn_cce": lambda: L.categorical_crossentropy(YT, YP),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_losses_match_keras(name):
    got = CASES[name]()
    np.testing.assert_allclose(got.numpy(), KERAS[name], rtol=2e-6, atol=1e-7)


def test_loss_objects_compute_in_float32_functions_keep_float64():
    assert L.MeanSquaredError()(REG_T, REG_P).dtype == gt.float32
    assert L.MSE(REG_T, REG_P).dtype == gt.float64
    assert L.MeanSquaredError(dtype="float64")(REG_T, REG_P).dtype == gt.float64


def test_loss_formulas_in_float64():
    e = REG_P - REG_T
    np.testing.assert_allclose(L.MSE(REG_T, REG_P).numpy(), (e**2).mean(-1), rtol=1e-15)
    np.testing.assert_allclose(L.MAE(REG_T, REG_P).numpy(), abs(e).mean(-1), rtol=1e-15)
    a = abs(e)
    hub = np.where(a <= 1.0, 0.5 * e**2, a - 0.5).mean(-1)
    np.testing.assert_allclose(L.huber(REG_T, REG_P).numpy(), hub, rtol=1e-15)
    p = np.clip(BP, 1e-7, 1 - 1e-7)
    bce = -(BT * np.log(p) + (1 - BT) * np.log(1 - p)).mean(-1)
    np.testing.assert_allclose(L.binary_crossentropy(BT, BP).numpy(), bce, rtol=1e-14)
    bcel = (np.maximum(BL, 0) - BL * BT + np.log1p(np.exp(-abs(BL)))).mean(-1)
    np.testing.assert_allclose(L.binary_crossentropy(BT, BL, from_logits=True).numpy(), bcel, rtol=1e-14)
    q = np.clip(YP / YP.sum(-1, keepdims=True), 1e-7, 1 - 1e-7)
    np.testing.assert_allclose(L.categorical_crossentropy(YT, YP).numpy(), -(YT * np.log(q)).sum(-1), rtol=1e-14)
    lsm = LOGITS - np.log(np.exp(LOGITS).sum(-1, keepdims=True))
    np.testing.assert_allclose(
        L.categorical_crossentropy(YT, LOGITS, from_logits=True).numpy(), -(YT * lsm).sum(-1), rtol=1e-14
    )
    np.testing.assert_allclose(
        L.sparse_categorical_crossentropy(LAB, LOGITS, from_logits=True).numpy(), -lsm[np.arange(4), LAB], rtol=1e-14
    )
    # Reductions: sum over batch size divides by the number of per-sample values.
    per = (e**2).mean(-1)
    np.testing.assert_allclose(
        L.MeanSquaredError(dtype="float64")(REG_T, REG_P, sample_weight=SW).numpy(), (per * SW).sum() / 3, rtol=1e-15
    )
    np.testing.assert_allclose(
        L.MeanSquaredError(reduction="mean_with_sample_weight", dtype="float64")(
            REG_T, REG_P, sample_weight=SW
        ).numpy(),
        (per * SW).sum() / SW.sum(),
        rtol=1e-15,
    )


def test_loss_gradients_match_finite_differences():
    logits = gt.Variable(LOGITS)
    with gt.GradientTape() as tape:
        loss = L.SparseCategoricalCrossentropy(from_logits=True, dtype="float64")(LAB, logits)
    g = tape.gradient(loss, logits).numpy()
    soft = np.exp(LOGITS) / np.exp(LOGITS).sum(-1, keepdims=True)
    np.testing.assert_allclose(g, (soft - np.eye(3)[LAB]) / 4, rtol=1e-12)


def test_loss_errors():
    with pytest.raises(ValueError, match="reduction"):
        L.MeanSquaredError(reduction="average")
    with pytest.raises(ValueError, match="same shape"):
        L.binary_crossentropy(BT, BP[:, :1])
    with pytest.raises(ValueError, match="rank"):
        L.sparse_categorical_crossentropy(LAB[:2], LOGITS)
    with pytest.raises(ValueError, match="loss identifier"):
        L.get("nope")


METRICS = {
    "mean": lambda: _mean(),
    "sum": lambda: _sum(),
    "acc": lambda: _upd(M.Accuracy(), [1, 2, 3, 4], [1, 2, 0, 4]),
    "bacc": lambda: _upd(M.BinaryAccuracy(), BT, BP),
    "cacc": lambda: _upd(M.CategoricalAccuracy(), YT, YP),
    "scacc": lambda: _scacc(),
    "scacc_sw": lambda: _upd(M.SparseCategoricalAccuracy(), LAB, YP, sample_weight=[1.0, 2.0, 0.5, 1.0]),
    "mmse": lambda: _upd(M.MeanSquaredError(), REG_T, REG_P),
}


def _upd(m, *args, **kwargs):
    m.update_state(*args, **kwargs)
    return m


def _mean():
    m = M.Mean()
    m.update_state([1.0, 2.0, 3.0])
    m.update_state([4.0], sample_weight=[3.0])
    return m


def _sum():
    m = M.Sum()
    m.update_state([1.0, 2.5])
    m.update_state([[1.0, 2.0]], sample_weight=[[0.5, 2.0]])
    return m


def _scacc():
    m = M.SparseCategoricalAccuracy()
    m.update_state(LAB, YP)
    m.update_state([[2]], [[0.1, 0.2, 0.7]])
    return m


@pytest.mark.parametrize("name", sorted(METRICS))
def test_metrics_match_keras(name):
    m = METRICS[name]()
    assert m.result().dtype == gt.float32
    np.testing.assert_allclose(float(m.result()), KERAS[name], rtol=1e-6)
    m.reset_state()
    assert float(m.result()) == 0.0
    METRICS[name]().reset_states()  # the Keras 2 name


def test_metric_call_and_traced_updates():
    m = M.Mean(name="loss")
    assert float(m(2.0)) == 2.0
    assert float(m(4.0)) == 3.0
    acc = M.SparseCategoricalAccuracy()

    @gt.function
    def step(y, p):
        acc.update_state(y, p)
        m.update_state(gt.reduce_sum(p))

    step(gt.constant([1, 0]), gt.constant([[0.2, 0.8], [0.3, 0.7]]))
    step(gt.constant([0, 0]), gt.constant([[0.9, 0.1], [0.3, 0.7]]))
    assert float(acc.result()) == 0.5
    np.testing.assert_allclose(float(m.result()), (2 + 4 + 2 + 2) / 4, rtol=1e-6)
    assert [v.name for v in m.variables] == ["loss/total:0", "loss/count:0"]
    assert not any(v.trainable for v in m.variables)


def test_metric_names_and_get():
    assert M.SparseCategoricalAccuracy().name == "sparse_categorical_accuracy"
    assert M.Mean(name="train_loss").name == "train_loss"
    assert isinstance(M.get("mae"), M.MeanAbsoluteError)
    with pytest.raises(ValueError, match="metric identifier"):
        M.get(3)


# Issue 16: sample_weight in every loss and metric, Keras 3.15's (TF 2.21) numbers.
SW4 = np.array([1.0, 2.0, 0.5, 0.0])
KERAS_SW = {
    "mae_sw": 1.3583332300186157,
    "mse_sum_sw": 7.852499961853027,
    "mse_none_sw": [1.25, 0.3125, 6.289999961853027],
    "huber_sw": 0.9129166603088379,
    "bce_sw": 0.470513254404068,
    "bce_logits_sw": 0.9558045268058777,
    "cce_sw": 0.4995955228805542,
    "cce_logits_sw": 1.1170028448104858,
    "scce_sw": 0.4995954930782318,
    "scce_logits_sw": 1.1170028448104858,
    "scce_mws": 1.276574730873108,
    "m_mean_sw": 2.5999999046325684,
    "m_acc_sw": 0.5555555820465088,
    "m_bacc_sw": 0.7142857313156128,
    "m_cacc_sw": 1.0,
    "m_mse_sw": 2.2435715198516846,
    "m_mae_sw": 1.164285659790039,
}

SW_CASES = {
    "mae_sw": lambda: L.MeanAbsoluteError()(REG_T, REG_P, sample_weight=SW),
    "mse_sum_sw": lambda: L.MeanSquaredError(reduction="sum")(REG_T, REG_P, sample_weight=SW),
    "mse_none_sw": lambda: L.MeanSquaredError(reduction=None)(REG_T, REG_P, sample_weight=SW),
    "huber_sw": lambda: L.Huber()(REG_T, REG_P, sample_weight=SW),
    "bce_sw": lambda: L.BinaryCrossentropy()(BT, BP, sample_weight=SW),
    "bce_logits_sw": lambda: L.BinaryCrossentropy(from_logits=True)(BT, BL, sample_weight=SW),
    "cce_sw": lambda: L.CategoricalCrossentropy()(YT, YP, sample_weight=SW4),
    "cce_logits_sw": lambda: L.CategoricalCrossentropy(from_logits=True)(YT, LOGITS, sample_weight=SW4),
    "scce_sw": lambda: L.SparseCategoricalCrossentropy()(LAB, YP, sample_weight=SW4),
    "scce_logits_sw": lambda: L.SparseCategoricalCrossentropy(from_logits=True)(LAB, LOGITS, sample_weight=SW4),
    "scce_mws": lambda: L.SparseCategoricalCrossentropy(from_logits=True, reduction="mean_with_sample_weight")(
        LAB, LOGITS, sample_weight=SW4
    ),
    "m_mean_sw": lambda: _upd(M.Mean(), [1.0, 2.0, 3.0], sample_weight=[0.5, 0.0, 2.0]).result(),
    "m_acc_sw": lambda: _upd(M.Accuracy(), [1, 2, 3, 4], [1, 2, 0, 4], sample_weight=[1.0, 0.5, 2.0, 1.0]).result(),
    "m_bacc_sw": lambda: _upd(M.BinaryAccuracy(), BT, BP, sample_weight=SW).result(),
    "m_cacc_sw": lambda: _upd(M.CategoricalAccuracy(), YT, YP, sample_weight=SW4).result(),
    "m_mse_sw": lambda: _upd(M.MeanSquaredError(), REG_T, REG_P, sample_weight=SW).result(),
    "m_mae_sw": lambda: _upd(M.MeanAbsoluteError(), REG_T, REG_P, sample_weight=SW).result(),
}


@pytest.mark.parametrize("name", sorted(SW_CASES))
def test_sample_weight_in_losses_and_metrics_matches_keras(name):
    np.testing.assert_allclose(SW_CASES[name]().numpy(), KERAS_SW[name], rtol=1e-6)
