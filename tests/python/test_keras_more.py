"""The other Keras 3 losses, metrics and layers of issue 16, against TF 2.21's Keras 3
numbers (computed in /tmp/benchvenv and written here; TF is not needed to run these)."""

import numpy as np
import pytest

import gradtape as gt

L = gt.keras.losses
M = gt.keras.metrics
Lr = gt.keras.layers

YT = np.array([[0., 1., 0.], [1., 0., 0.], [0., 0., 1.], [0., 1., 0.]], np.float32)
YP = np.array([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2], [0.2, 0.2, 0.6], [0.4, 0.35, 0.25]], np.float32)
SW = np.array([1, 2, 0.5, 0], np.float32)

# keras.losses.<Name>()(YT, YP) and (YT, YP, sample_weight=SW).
LOSSES = {
    "KLDivergence": (0.6526145339012146, 0.49959301948547363),
    "Hinge": (0.9750000238418579, 0.8333333730697632),
    "SquaredHinge": (1.0920833349227905, 0.9183333516120911),
    "CategoricalHinge": (0.7374999523162842, 0.5999999642372131),
    "CosineSimilarity": (-0.8160250186920166, -0.7567651867866516),
    "LogCosh": (0.05649648979306221, 0.041390977799892426),
    "Poisson": (0.5508724451065063, 0.4581984579563141),
    "MeanAbsolutePercentageError": (154166688.0, 125000016.0),
    "MeanSquaredLogarithmicError": (0.05727822333574295, 0.04137909784913063),
    "BinaryFocalCrossentropy": (0.07493657618761063, 0.04337486997246742),
    "CategoricalFocalCrossentropy": (0.04566683620214462, 0.026221273466944695),
}
LOSS_VARIANTS = {
    "BinaryFocalCrossentropyBal": (
        lambda: L.BinaryFocalCrossentropy(apply_class_balancing=True, gamma=1.5, from_logits=True),
        (0.17926175892353058, 0.1526937484741211)),
    "CategoricalFocalCrossentropyLogits": (
        lambda: L.CategoricalFocalCrossentropy(from_logits=True, label_smoothing=0.1),
        (0.0872696191072464, 0.07079510390758514)),
}

RT = np.array([[1.5, -2.0], [0.3, 4.0], [2.0, 0.0]], np.float32)
RP = np.abs(np.array([[1.0, -1.0], [0.5, 3.0], [2.5, 0.5]], np.float32))
# keras.losses.<fn>(RT, RP): per-sample values.
FUNCTIONS = {
    "hinge": [1.5, 0.42500001192092896, 0.5],
    "log_cosh": [1.214721441268921, 0.22682449221611023, 0.12011450529098511],
    "mape": [91.66667175292969, 45.83333206176758, 250000000.0],
    "msle": [0.2651229500770569, 0.035135455429553986, 0.09408212453126907],
    "poisson": [1.0, -0.343252569437027, 0.5837092399597168],
    "cosine_similarity": [0.141421377658844, -0.9959266781806946, -0.9805806875228882],
    "kld": [-1.611809580026602e-06, -0.1532476842403412, -1.542494942441408e-06],
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_losses_match_keras(name):
    loss = getattr(L, name)()
    plain, weighted = LOSSES[name]
    np.testing.assert_allclose(float(loss(YT, YP)), plain, rtol=2e-6)
    np.testing.assert_allclose(float(loss(YT, YP, sample_weight=SW)), weighted, rtol=2e-6)
    # Reductions: "sum" and None give the sum and the per-sample values.
    per = getattr(L, name)(reduction=None)(YT, YP).numpy()
    assert per.shape == (4,)
    np.testing.assert_allclose(getattr(L, name)(reduction="sum")(YT, YP).numpy(), per.sum(), rtol=1e-6)
    np.testing.assert_allclose(per.mean(), plain, rtol=2e-6)


@pytest.mark.parametrize("name", sorted(LOSS_VARIANTS))
def test_loss_options_match_keras(name):
    make, (plain, weighted) = LOSS_VARIANTS[name]
    np.testing.assert_allclose(float(make()(YT, YP)), plain, rtol=2e-6)
    np.testing.assert_allclose(float(make()(YT, YP, sample_weight=SW)), weighted, rtol=2e-6)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_loss_functions_and_aliases(name):
    fn = getattr(L, name)
    np.testing.assert_allclose(fn(RT, RP).numpy(), FUNCTIONS[name], rtol=2e-6, atol=1e-9)
    assert L.get(name) is not None


def test_loss_aliases_and_reduction_names():
    assert L.kld is L.KLD is L.kl_divergence and L.mape is L.MAPE and L.msle is L.MSLE
    assert L.logcosh is L.log_cosh
    assert L.Reduction.SUM_OVER_BATCH_SIZE == "sum_over_batch_size"
    assert L.Reduction.NONE == "none" and L.Reduction.SUM == "sum" and L.Reduction.AUTO == "auto"
    per = L.Hinge(reduction=L.Reduction.NONE)(YT, YP)
    assert per.shape == (4,)
    with pytest.raises(ValueError, match="Invalid Reduction"):
        L.Reduction.validate("mean_of_nothing")
    with pytest.raises(ValueError, match="reduction"):
        L.Poisson(reduction="bogus")
    with pytest.raises(TypeError):
        L.Poisson(gamma=2.0)
    assert L.CosineSimilarity(axis=0).axis == 0 and L.Hinge().name == "hinge"


def test_losses_have_gradients_and_trace():
    p = gt.Variable(YP)
    with gt.GradientTape() as tape:
        loss = L.CategoricalFocalCrossentropy()(YT, p) + L.LogCosh()(YT, p) + L.Hinge()(YT, p)
    g = tape.gradient(loss, p)
    # Finite differences of the same sum.
    eps = 1e-3
    i, j = 3, 1
    up, dn = YP.copy(), YP.copy()
    up[i, j] += eps
    dn[i, j] -= eps

    def f(x):
        return float(L.CategoricalFocalCrossentropy()(YT, x) + L.LogCosh()(YT, x) + L.Hinge()(YT, x))

    np.testing.assert_allclose(g.numpy()[i, j], (f(up) - f(dn)) / (2 * eps), rtol=2e-2)

    @gt.function
    def traced(t, q):
        return L.Hinge()(t, q) + L.SquaredHinge()(t, q)

    np.testing.assert_allclose(float(traced(gt.constant(YT), gt.constant(YP))),
                               LOSSES["Hinge"][0] + LOSSES["SquaredHinge"][0], rtol=2e-6)


# --- metrics ---------------------------------------------------------------------------

BT = np.array([0, 1, 1, 0, 1, 0, 1, 1], np.float32)
BP = np.array([0.1, 0.8, 0.4, 0.6, 0.95, 0.2, 0.55, 0.3], np.float32)
BW = np.array([1, 1, 2, 1, 0.5, 1, 1, 3], np.float32)
MRT = np.array([[1.5, -2.0], [0.3, 4.0], [2.0, 0.0], [1.0, 1.0]], np.float32)
MRP = np.array([[1.0, -1.0], [0.5, 3.0], [2.5, 0.5], [0.0, 1.5]], np.float32)

# keras.metrics.<...> after update_state on the batches shown.
METRICS = [
    (lambda: M.TopKCategoricalAccuracy(k=2), [(YT, YP)], 1.0),
    (lambda: M.TopKCategoricalAccuracy(k=1), [(YT, YP)], 0.75),
    (lambda: M.TopKCategoricalAccuracy(k=1), [(YT, YP, SW)], 1.0),
    (lambda: M.SparseTopKCategoricalAccuracy(k=2), [(np.array([1, 0, 2, 2]), YP)], 0.75),
    (M.RootMeanSquaredError, [(YT, YP), (YT[:2], YP[:2] * 2)], 0.35629263520240784),
    (M.CategoricalCrossentropy, [(YT, YP, SW)], 0.5709663033485413),
    (M.SparseCategoricalCrossentropy, [(np.array([1, 0, 2, 1]), YP)], 0.6526173949241638),
    (M.BinaryCrossentropy, [(BT, BP)], 0.529666543006897),
    (M.KLDivergence, [(YT, YP)], 0.6526145339012146),
    (M.CosineSimilarity, [(YT, YP)], 0.8160250186920166),
    (M.TruePositives, [(BT, BP, BW)], 2.5),
    (lambda: M.FalsePositives(thresholds=[0.3, 0.5, 0.7]), [(BT, BP)], [1.0, 1.0, 0.0]),
    (M.TrueNegatives, [(BT, BP)], 2.0),
    (M.FalseNegatives, [(BT, BP, BW)], 5.0),
    (M.Precision, [(BT, BP), (BT[:4], BP[::-1][:4])], 0.6666666865348816),
    (lambda: M.Recall(thresholds=[0.3, 0.6]), [(BT, BP, BW)], [0.6000000238418579, 0.20000000298023224]),
    (lambda: M.Precision(class_id=1), [(YT, YP)], 1.0),
    (M.AUC, [(BT, BP)], 0.800000011920929),
    (lambda: M.AUC(num_thresholds=50), [(BT, BP, BW)], 0.7333333492279053),
    (lambda: M.AUC(curve="PR"), [(BT, BP)], 0.8613705635070801),
    (lambda: M.AUC(summation_method="minoring", num_thresholds=10), [(BT, BP)], 0.800000011920929),
    (lambda: M.AUC(curve="PR", summation_method="majoring"), [(BT, BP)], 0.8766666650772095),
    (M.R2Score, [(MRT, MRP)], 0.44599154591560364),
    (lambda: M.R2Score(class_aggregation=None), [(MRT, MRP)], [0.02531641721725464, 0.8666666746139526]),
    (lambda: M.R2Score(class_aggregation="variance_weighted_average", num_regressors=1), [(MRT, MRP)],
     0.7681586146354675),
    (M.MeanAbsolutePercentageError, [(MRT, MRP)], 62500040.0),
    (M.MeanSquaredLogarithmicError, [(np.abs(MRT), np.abs(MRP))], 0.12535952031612396),
]


@pytest.mark.parametrize("i", range(len(METRICS)))
def test_metrics_match_keras(i):
    make, batches, want = METRICS[i]
    m = make()
    for b in batches:
        m.update_state(*b)
    np.testing.assert_allclose(np.asarray(m.result().numpy()), want, rtol=2e-6, atol=1e-7)
    # reset_state starts over; the same batches give the same number.
    m.reset_state()
    for b in batches:
        m.update_state(*b)
    np.testing.assert_allclose(np.asarray(m.result().numpy()), want, rtol=2e-6, atol=1e-7)


def test_metrics_update_inside_a_function_and_by_name():
    auc, prec = M.AUC(), M.Precision()

    @gt.function
    def step(t, p):
        auc.update_state(t, p)
        prec.update_state(t, p)

    step(gt.constant(BT), gt.constant(BP))
    np.testing.assert_allclose(float(auc.result()), 0.800000011920929, rtol=1e-6)
    np.testing.assert_allclose(float(prec.result()), 0.75, rtol=1e-6)
    for name in ["precision", "recall", "auc", "top_k_categorical_accuracy", "kl_divergence"]:
        assert isinstance(M.get(name), M.Metric)
    np.testing.assert_allclose(M.top_k_categorical_accuracy(YT, YP, k=1).numpy(), [1, 1, 1, 0])
    np.testing.assert_allclose(M.sparse_top_k_categorical_accuracy([1, 0, 2, 2], YP, k=1).numpy(), [1, 1, 1, 0])


def test_metric_argument_errors():
    with pytest.raises(ValueError, match="curve"):
        M.AUC(curve="XY")
    with pytest.raises(ValueError, match="summation_method"):
        M.AUC(summation_method="simpson")
    with pytest.raises(ValueError, match="Threshold"):
        M.Precision(thresholds=[1.5])
    with pytest.raises(ValueError, match="2D"):
        M.R2Score().update_state(np.ones((2, 2, 2)), np.ones((2, 2, 2)))


# --- layers ------------------------------------------------------------------------------


def X(*shape):
    return np.sin(np.arange(int(np.prod(shape))) * 0.7 + 0.3).reshape(shape).astype(np.float32)


def K(*shape):
    return (np.cos(np.arange(int(np.prod(shape))) * 0.37) * 0.5).reshape(shape).astype(np.float32)


def _with(layer, x, *weights):
    """Builds ``layer`` on ``x``, sets its weights (Keras' order), calls it."""
    layer(gt.constant(x))
    assert len(layer.weights) == len(weights), [v.name for v in layer.weights]
    for v, w in zip(layer.weights, weights):
        assert tuple(v.shape) == w.shape, (v.name, v.shape, w.shape)
        v.assign(w)
    return layer(gt.constant(x))


X3, X4 = X(2, 5, 3), X(1, 4, 4, 2)

LAYERS = {
    "Conv1D_same_s1": lambda: _with(Lr.Conv1D(2, 3, padding="same"), X3, K(3, 3, 2), K(2) + 0.1),
    "Conv1D_valid_s2_d1": lambda: _with(Lr.Conv1D(2, 2, strides=2), X3, K(2, 3, 2), K(2)),
    "Conv1D_causal_dil2": lambda: _with(Lr.Conv1D(1, 2, padding="causal", dilation_rate=2), X3, K(2, 3, 1), K(1)),
    "Conv2DT_same_s2": lambda: _with(Lr.Conv2DTranspose(2, 3, strides=2, padding="same"), X4, K(3, 3, 2, 2), K(2)),
    "Conv2DT_valid_s1": lambda: _with(Lr.Conv2DTranspose(1, 2), X4, K(2, 2, 1, 2), K(1)),
    "Conv2DT_valid_s2_k3": lambda: _with(Lr.Conv2DTranspose(1, 3, strides=2), X4, K(3, 3, 1, 2), K(1)),
    "Depthwise": lambda: _with(Lr.DepthwiseConv2D(2, depth_multiplier=2), X4, K(2, 2, 2, 2), K(4)),
    "Depthwise_same_s2": lambda: _with(Lr.DepthwiseConv2D(3, strides=2, padding="same"), X4, K(3, 3, 2, 1), K(2)),
    "Separable": lambda: _with(Lr.SeparableConv2D(3, 2), X4, K(2, 2, 2, 1), K(1, 1, 2, 3), K(3)),
    "LayerNorm": lambda: _with(Lr.LayerNormalization(), X3, K(3) + 1, K(3)),
    "LayerNorm_axes": lambda: _with(Lr.LayerNormalization(axis=[1, 2], epsilon=0.01), X3, K(5, 3) + 1, K(5, 3)),
    "LayerNorm_rms": lambda: _with(Lr.LayerNormalization(rms_scaling=True), X3, K(3) + 1),
    "GroupNorm": lambda: _with(Lr.GroupNormalization(groups=2), X(2, 3, 6), K(6) + 1, K(6)),
    "GroupNorm4d": lambda: _with(Lr.GroupNormalization(groups=3, epsilon=0.1), X(1, 2, 2, 6), K(6) + 1, K(6)),
    "UnitNorm": lambda: Lr.UnitNormalization()(X3),
    "PReLU": lambda: _with(Lr.PReLU(), X3, K(5, 3)),
    "PReLU_shared": lambda: _with(Lr.PReLU(shared_axes=[1]), X3, K(1, 3)),
    "ReLU_opts": lambda: Lr.ReLU(max_value=0.6, negative_slope=0.1, threshold=0.2)(X3),
    "LeakyReLU": lambda: Lr.LeakyReLU()(X3),
    "ELU": lambda: Lr.ELU(alpha=0.5)(X3),
    "Softmax": lambda: Lr.Softmax()(X3),
    "Dot_axes1": lambda: Lr.Dot(axes=1)([X(2, 3), K(2, 3)]),
    "Dot_3d": lambda: Lr.Dot(axes=(2, 2))([X3, K(2, 4, 3)]),
    "Dot_norm": lambda: Lr.Dot(axes=1, normalize=True)([X(2, 3), K(2, 3)]),
    "MaxPool1D": lambda: Lr.MaxPooling1D(2)(X3),
    "AvgPool1D_same": lambda: Lr.AveragePooling1D(2, padding="same")(X3),
    "GAP1D": lambda: Lr.GlobalAveragePooling1D()(X3),
    "GMP2D": lambda: Lr.GlobalMaxPooling2D()(X4),
    "Normalization_given": lambda: Lr.Normalization(mean=2.0, variance=4.0)(X3[0]),
    "Normalization_invert": lambda: Lr.Normalization(mean=[1.0, 2.0, 3.0], variance=[1.0, 4.0, 9.0],
                                                     invert=True)(X3[0]),
    "UpSampling2D": lambda: Lr.UpSampling2D((2, 1))(X(1, 2, 2, 1)),
    "Rescaling": lambda: Lr.Rescaling(1 / 127.5, offset=-1)(np.arange(4, dtype=np.uint8) * 60),
}


def _normalization_adapt():
    n = Lr.Normalization()
    n.adapt(X(10, 3) * 3 + 1)
    return n(X3[0])


LAYERS["Normalization_adapt"] = _normalization_adapt

# The Keras outputs: (shape, values).
KERAS_LAYERS = {
    "Conv1D_same_s1": ([2, 5, 2], [
        -0.69112444, -0.52759016, 0.8958903, 0.06679139, 2.42600918, 2.76258516, -1.53959739, -1.15217352,
        1.16711187, 0.65689445, 2.08973694, 2.34971046, -1.55382288, -1.17781579, 0.9726668, 0.14280716,
        2.37754393, 2.73760319, -1.17545021, -0.90526354,
    ]),
    "Conv1D_valid_s2_d1": ([2, 2, 2], [
        1.0382514, 0.52958244, -1.26385236, -0.9811554, -1.26990151, -0.99341571, 1.66831481, 1.80658209,
    ]),
    "Conv1D_causal_dil2": ([2, 5, 1], [
        0.46720544, 0.73637235, 1.20031118, 0.60268784, -0.3039943, 0.29158059, 0.47578609, -0.29797465,
        1.21768618, 0.57333249,
    ]),
    "Conv2DT_same_s2": ([1, 8, 8, 2], [
        1.04002333, 0.76236475, 0.39744705, 0.01849833, 0.75208825, 0.60511446, 0.45188239, -0.12123594,
        -0.58387017, -0.27737197, 0.58619612, 0.71415174, -0.12053287, 0.07445964, 0.57741863, 1.13786292,
        0.50125086, 0.8453933, 1.05884743, 0.91231656, 0.49961102, 0.64229012, 1.30121303, 1.17505562,
        0.71036798, -0.0976809, 0.21351233, 0.26098746, 0.57190031, 0.09836715, -0.39859998, -0.31247476,
        -0.08240545, -0.10287091, 0.24197716, 0.65411472, 1.16539276, 0.83163905, 0.01923847, -0.00624803,
        0.90956056, 1.10638952, 0.59459555, 0.11762369, -0.026169, 0.31832299, 1.01291776, 0.82009465,
        0.56547338, 0.49764511, 0.48102272, 0.40665397, 0.36489689, 0.98312938, 1.39214897, 1.22457266,
        0.6400004, 0.20308018, 0.82224929, 0.78348255, 0.68269408, -0.14023313, -0.28260535, -0.18437776,
        -0.09823954, 0.11511505, 0.57976282, 0.93501693, 0.82614374, 0.37928587, 0.01419631, 0.27161193,
        1.19929087, 1.12711287, 0.25509584, -0.06882444, 0.41156921, 0.77772069, 0.90255237, 0.4788546,
        0.60030699, 0.13576591, -0.08828366, -0.07229659, 0.29082626, 1.09191918, 1.08262753, 0.93366396,
        0.50679111, 0.62193108, 1.28633881, 1.16354334, 0.71148223, -0.10664126, 0.18467593, 0.23572658,
        0.15445706, 0.49067557, 0.88174546, 1.00546587, 0.34049919, -0.03407058, 0.22721604, 0.63680005,
        1.1751318, 0.85115713, 0.02552587, -0.01513332, 0.88900137, 1.09727049, 0.61149395, 0.13191795,
        0.59011596, -0.07780823, -0.39352822, -0.30954948, 0.3106471, 0.91982722, 0.51158315, 0.43290925,
        0.37053353, 0.97086287, 1.39746571, 1.23057246, 0.64534277, 0.18406469, 0.79349625, 0.75926685,
    ]),
    "Conv2DT_valid_s1": ([1, 5, 5, 1], [
        1.04002333, 1.60690987, 0.75189734, -0.52128136, -0.05735683, 0.35573798, 0.82185537, 0.87580574,
        0.30589387, 0.72280943, -0.16459846, 0.54392689, 0.95672137, 0.61132836, 0.96774077, -0.38661772,
        0.246281, 0.8326292, 0.86679101, 1.00271821, 0.57488286, 1.10391974, 0.36108243, -0.1511426,
        0.31109166,
    ]),
    "Conv2DT_valid_s2_k3": ([1, 9, 9, 1], [
        1.04002333, 0.79620111, 1.20815587, 1.01633286, 0.1874468, 0.37931818, -0.31440341, -0.05735683,
        0.57741863, 0.05233467, -0.05862057, -0.46478176, -0.31943458, 0.12513426, 0.78006667, 1.33735204,
        1.41463888, 1.17916489, 0.4595418, 0.81044674, 1.78490841, 1.5084244, 1.5110656, 0.53235126,
        -0.44121259, -0.49742711, -0.29176986, 0.48034552, 0.53085041, -0.1131618, -0.40415174, -0.36794508,
        0.1617974, 0.8181175, 1.28918505, 1.0589056, -0.03924614, 0.12858912, 0.98875457, 1.37117171,
        1.99716043, 1.16755199, 0.52018154, -0.14424795, -0.19431633, 0.91717863, 1.10647368, 0.51368695,
        -0.08302391, -0.47143149, -0.30466348, 0.15609017, 0.80949116, 0.68777126, -0.29598367, -0.386554,
        -0.02678567, 0.84287786, 1.81122744, 1.50310993, 1.47251678, 0.49811363, 0.21479368, 1.16675353,
        1.40987015, 1.13439202, 0.49980488, -0.1388731, -0.40993643, -0.35156697, 0.19087648, 0.23235238,
        0.59011596, -0.0439719, -0.33072984, 0.55036205, 0.44281453, 1.06109166, 1.3112905, 0.64037228,
        0.79349625,
    ]),
    "Depthwise": ([1, 3, 3, 4], [
        0.7621848, 0.69234824, 0.56662786, 0.39601851, 0.49031061, 0.53732377, 0.38963497, 0.3459014,
        0.23452145, 0.26416886, 0.17877564, 0.09064895, 0.73809487, 0.62062711, 0.53074956, 0.29679012,
        0.66149247, 0.65849614, 0.50928301, 0.4159759, 0.316802, 0.37708065, 0.25532636, 0.21369796,
        0.60713172, 0.47957227, 0.42237222, 0.16413938, 0.76018548, 0.69333661, 0.56606758, 0.39912921,
        0.48131427, 0.52997893, 0.38300678, 0.34062201,
    ]),
    "Depthwise_same_s2": ([1, 2, 2, 2], [
        1.08222783, 1.09377789, 0.13590688, 0.25037259, 0.3258844, 0.30652204, 0.4205873, 0.21278858,
    ]),
    "Separable": ([1, 3, 3, 3], [
        0.6373356, 0.58154148, 0.4470385, 0.68177664, 0.63046271, 0.49381864, 0.42445651, 0.40663671,
        0.33378059, 0.50502193, 0.46296105, 0.35824063, 0.70916361, 0.64960933, 0.50213349, 0.56607997,
        0.53172576, 0.42540497, 0.37045407, 0.34581819, 0.27437747, 0.6426636, 0.58641291, 0.45079404,
        0.67804217, 0.62738597, 0.49181604,
    ]),
    "LayerNorm": ([2, 5, 3], [
        -1.56476474, 1.10919976, 1.65347481, 2.32444477, 0.48431581, -1.31311297, -0.80628633, -0.29419184,
        2.27172971, -1.56894684, 1.13095284, 1.63697696, 2.32824969, 0.47697371, -1.3097291, -0.82908487,
        -0.26838446, 2.26844049, -1.57303059, 1.15363598, 1.61952162, 2.33202648, 0.46963727, -1.30632544,
        -0.85052776, -0.2437067, 2.26496792, -1.57698679, 1.17731023, 1.60102248,
    ]),
    "LayerNorm_axes": ([2, 5, 3], [
        0.82633734, 1.96189559, 2.06841135, 1.17100251, -0.11748715, -1.10035157, -1.45628953, -1.2960726,
        -0.88134575, -0.36846298, 0.17110658, 0.56730038, 0.52130318, -0.14053273, -1.16642296, -1.47150064,
        -1.2533623, -0.28642428, 0.76156843, 1.25219476, 1.00525749, 0.30772474, -0.41868675, -0.92598313,
        -1.1620841, -1.09315264, -0.62016308, 0.26569027, 1.2714386, 1.84518898,
    ]),
    "LayerNorm_rms": ([2, 5, 3], [
        1.47375095, 4.1017313, 4.51427794, 1.9243331, 0.11578736, -1.59116662, -5.49038839, -4.85007381,
        -1.91684854, 1.58927286, 4.24048901, 4.60704947, 1.88773549, 0.0689541, -1.62466335, -5.37117672,
        -4.68546009, -1.79050791, 1.71000803, 4.38517427, 4.70353127, 1.85114121, 0.02215704, -1.65811133,
        -5.25682259, -4.52804852, -1.67002141, 1.83633184, 4.53619051, 4.80395508,
    ]),
    "GroupNorm": ([2, 3, 6], [
        1.13755822, 2.22207069, 2.30007529, 1.38226521, 0.0999391, -0.88976502, -1.56470442, -1.35677969,
        -0.34582445, 0.7529853, 1.29605722, 1.06325865, 1.9175303, 0.52760273, -0.83254278, -1.48191845,
        -1.25614846, -0.58041096, 1.20508146, 2.25829577, 2.2901063, 1.33876073, 0.05008781, -0.92202985,
        -1.5784229, -1.32294965, -0.2850557, 0.80786401, 1.32158172, 1.05669832, 1.86289024, 0.45765123,
        -0.88267756, -1.49271333, -1.23174334, -0.54205912,
    ]),
    "GroupNorm4d": ([1, 2, 2, 6], [
        0.80508941, 1.8374306, 1.74763823, 0.95856488, 0.21378836, -0.78240848, -1.7548207, -1.55288982,
        -0.64350224, 0.3896867, 1.3897177, 1.13765097, 1.54397345, 0.23222545, -1.08335721, -1.63069868,
        -1.11941051, -0.4782759, 0.86934453, 1.87220168, 1.73907053, 0.91921115, 0.16491467, -0.81388408,
    ]),
    "UnitNorm": ([2, 5, 3], [
        0.22157617, 0.63092101, 0.74353391, 0.74037004, 0.04557624, -0.67065275, -0.713727, -0.64503944,
        -0.27297968, 0.23226534, 0.63403124, 0.73760235, 0.7273286, 0.02718056, -0.6857509, -0.7198419,
        -0.64243436, -0.26287991, 0.24279907, 0.63700753, 0.73162144, 0.71373302, 0.00874011, -0.7003634,
        -0.72591293, -0.63970703, -0.25263688, 0.25318158, 0.63985419, 0.72559345,
    ]),
    "PReLU": ([2, 5, 3], [
        0.29552022, 0.84147096, 0.99166483, 0.6754632, 0.04158066, 0.08431103, 0.29548404, 0.37621519,
        0.18386456, 0.31154135, 0.85043663, 0.98935825, 0.66296923, 0.02477542, -0.14087687, -0.49046811,
        -0.408104, -0.13227053, 0.32747445, 0.85916179, 0.98677194, 0.65028787, 0.00796318, 0.31380725,
        0.48332539, 0.36773708, 0.10259178, 0.34331492, 0.86764407, 0.98390669,
    ]),
    "PReLU_shared": ([2, 5, 3], [
        0.29552022, 0.84147096, 0.99166483, 0.6754632, 0.04158066, -0.22591892, -0.48876506, -0.41183448,
        -0.13804808, 0.31154135, 0.85043663, 0.98935825, 0.66296923, 0.02477542, -0.23079751, -0.49046811,
        -0.408104, -0.13227053, 0.32747445, 0.85916179, 0.98677194, 0.65028787, 0.00796318, -0.23561087,
        -0.4920325, -0.40425813, -0.12645559, 0.34331492, 0.86764407, 0.98390669,
    ]),
    "ReLU_opts": ([2, 5, 3], [
        0.29552022, 0.60000002, 0.60000002, 0.60000002, -0.01584193, -0.08118579, -0.11775302, -0.10834547,
        -0.05738767, 0.31154135, 0.60000002, 0.60000002, 0.60000002, -0.01752246, -0.08250707, -0.11809362,
        -0.10754522, -0.05582293, 0.32747445, 0.60000002, 0.60000002, 0.60000002, -0.01920368, -0.08381067,
        -0.1184065, -0.10672022, -0.05424806, 0.34331492, 0.60000002, 0.60000002,
    ]),
    "LeakyReLU": ([2, 5, 3], [
        0.29552022, 0.84147096, 0.99166483, 0.6754632, 0.04158066, -0.18355738, -0.29325905, -0.2650364,
        -0.112163, 0.31154135, 0.85043663, 0.98935825, 0.66296923, 0.02477542, -0.1875212, -0.29428089,
        -0.26263565, -0.10746879, 0.32747445, 0.85916179, 0.98677194, 0.65028787, 0.00796318, -0.19143201,
        -0.29521951, -0.26016065, -0.10274419, 0.34331492, 0.86764407, 0.98390669,
    ]),
    "ELU": ([2, 5, 3], [
        0.29552022, 0.84147096, 0.99166483, 0.6754632, 0.04158066, -0.22882885, -0.31188041, -0.29332379,
        -0.15596911, 0.31154135, 0.85043663, 0.98935825, 0.66296923, 0.02477542, -0.23238817, -0.31252006,
        -0.29166323, -0.1505436, 0.32747445, 0.85916179, 0.98677194, 0.65028787, 0.00796318, -0.23585415,
        -0.3131057, -0.28993732, -0.14499655, 0.34331492, 0.86764407, 0.98390669,
    ]),
    "Softmax": ([2, 5, 3], [
        0.21131586, 0.3647837, 0.42390043, 0.55354524, 0.29367125, 0.15278356, 0.25461939, 0.27973574,
        0.46564493, 0.21350707, 0.36597502, 0.4205178, 0.55430633, 0.29280993, 0.15288369, 0.25155872,
        0.2795442, 0.46889713, 0.21573879, 0.36714455, 0.41711664, 0.55500633, 0.29197109, 0.15302248,
        0.2485427, 0.27935338, 0.47210392, 0.2180108, 0.36829111, 0.41369808,
    ]),
    "Dot_axes1": ([2, 1], [0.9061799, 0.23637237]),
    "Dot_3d": ([2, 5, 4], [
        0.9061799, -0.03279457, -0.93534493, -0.79902917, 0.13119608, 0.23637237, 0.0790153, -0.16610225,
        -1.03864765, -0.20586878, 0.85556376, 0.96674132, 0.91751832, -0.02850828, -0.94287139, -0.81000894,
        0.11223651, 0.23465335, 0.09644612, -0.14888161, 0.00855626, -0.95272428, -0.85583586, 0.1916097,
        0.22021076, 1.01659822, 0.68387341, -0.4084138, -0.23090136, -0.073727, 0.16533419, 0.22076255,
        0.01292853, -0.94215661, -0.85081011, 0.18551157, 0.21784753, 1.02501523, 0.69372207, -0.40807214,
    ]),
    "Dot_norm": ([2, 1], [0.87450117, 0.97595555]),
    "MaxPool1D": ([2, 2, 3], [
        0.6754632, 0.84147096, 0.99166483, 0.31154135, 0.85043663, 0.98935825, 0.32747445, 0.85916179,
        0.98677194, 0.65028787, 0.00796318, -0.34248063,
    ]),
    "AvgPool1D_same": ([2, 3, 3], [
        0.48549169, 0.44152582, 0.18990347, -0.3329944, -0.01650903, 0.30774081, 0.66296923, 0.02477542,
        -0.62507063, -0.32673091, -0.00814518, 0.31427133, -0.16688856, -0.42961949, -0.49029368, 0.34331492,
        0.86764407, 0.98390669,
    ]),
    "GAP1D": ([2, 3], [0.19359276, 0.17496181, 0.07404357, -0.12878481, -0.00157706, 0.12637241]),
    "GMP2D": ([1, 2], [0.99166483, 0.98935825]),
    "Normalization_adapt": ([5, 3], [
        -0.39384601, -0.19446653, -0.14065202, -0.20719196, -0.56606138, -0.87064713, -1.01925564, -0.99579328,
        -0.76230747, -0.38597533, -0.19030146, -0.14170207, -0.21332985, -0.57386839, -0.87666219,
    ]),
    "Normalization_given": ([5, 3], [
        -0.85223991, -0.57926452, -0.50416756, -0.6622684, -0.97920966, -1.30592895, -1.488765, -1.4417274,
        -1.18693829, -0.84422934, -0.57478166, -0.50532091, -0.66851538, -0.98761231, -1.31253529,
    ]),
    "Normalization_invert": ([5, 3], [
        1.29552019, 3.68294191, 5.97499466, 1.6754632, 2.08316135, 1.16442633, 0.02246988, 0.23309064,
        1.87837005, 1.31154132, 3.70087337, 5.9680748, 1.66296923, 2.04955077, 1.12478805,
    ]),
    "UpSampling2D": ([1, 4, 2, 1], [
        0.29552022, 0.84147096, 0.29552022, 0.84147096, 0.99166483, 0.6754632, 0.99166483, 0.6754632,
    ]),
    "Rescaling": ([4], [-1.0, -0.52941173, -0.05882347, 0.41176474]),
}


@pytest.mark.parametrize("name", sorted(KERAS_LAYERS))
def test_layers_match_keras(name):
    shape, values = KERAS_LAYERS[name]
    y = LAYERS[name]()
    assert list(y.shape) == shape
    assert y.dtype == gt.float32
    np.testing.assert_allclose(y.numpy().ravel(), values, rtol=2e-5, atol=2e-6)


def test_shape_layers_against_numpy():
    x = X(2, 3, 4)
    np.testing.assert_array_equal(Lr.Reshape((4, 3))(x).numpy(), x.reshape(2, 4, 3))
    np.testing.assert_array_equal(Lr.Reshape((-1,))(x).numpy(), x.reshape(2, 12))
    np.testing.assert_array_equal(Lr.Permute((2, 1))(x).numpy(), x.transpose(0, 2, 1))
    np.testing.assert_array_equal(Lr.RepeatVector(3)(x[:, 0]).numpy(), np.repeat(x[:, None, 0], 3, axis=1))
    np.testing.assert_array_equal(Lr.Identity()(x).numpy(), x)
    np.testing.assert_array_equal(Lr.Lambda(lambda t, k: t * k, arguments={"k": 2.0})(x).numpy(), 2 * x)
    np.testing.assert_allclose(Lr.Activation("tanh")(x).numpy(), np.tanh(x), rtol=1e-6)
    img = X(1, 3, 4, 2)
    np.testing.assert_array_equal(Lr.ZeroPadding2D(((1, 0), (2, 1)))(img).numpy(),
                                  np.pad(img, [(0, 0), (1, 0), (2, 1), (0, 0)]))
    np.testing.assert_array_equal(Lr.Cropping2D(((1, 0), (1, 2)))(img).numpy(), img[:, 1:, 1:2, :])
    np.testing.assert_array_equal(Lr.GlobalAveragePooling2D(keepdims=True)(img).numpy().shape, (1, 1, 1, 2))
    np.testing.assert_allclose(Lr.GlobalMaxPooling1D()(x).numpy(), x.max(axis=1))
    with pytest.raises(ValueError, match="consecutive"):
        Lr.Permute((1, 3))
    with pytest.raises(ValueError, match="cropping"):
        Lr.Cropping2D(((2, 2), (0, 0)))(img)


def test_merge_layers_and_functional_forms():
    a, b, c = X(2, 3), K(2, 3), X(2, 3) * 2
    np.testing.assert_allclose(Lr.Add()([a, b, c]).numpy(), a + b + c, rtol=1e-6)
    np.testing.assert_allclose(Lr.add([a, b]).numpy(), a + b, rtol=1e-6)
    np.testing.assert_allclose(Lr.subtract([a, b]).numpy(), a - b, rtol=1e-6)
    np.testing.assert_allclose(Lr.multiply([a, b, c]).numpy(), a * b * c, rtol=1e-6)
    np.testing.assert_allclose(Lr.average([a, b, c]).numpy(), (a + b + c) / 3, rtol=1e-6)
    np.testing.assert_allclose(Lr.maximum([a, b, c]).numpy(), np.maximum(np.maximum(a, b), c))
    np.testing.assert_allclose(Lr.minimum([a, b]).numpy(), np.minimum(a, b))
    np.testing.assert_allclose(Lr.concatenate([a, b], axis=0).numpy(), np.concatenate([a, b], 0))
    np.testing.assert_allclose(Lr.Concatenate()([a, b]).numpy(), np.concatenate([a, b], -1))
    np.testing.assert_allclose(Lr.dot([a, b], axes=1).numpy(), (a * b).sum(1, keepdims=True), rtol=1e-6)
    with pytest.raises(ValueError, match="exactly 2"):
        Lr.Subtract()([a, b, c])
    with pytest.raises(ValueError, match="list"):
        Lr.Add()(a)
    # In a functional model, with gradients to both branches.
    i1, i2 = gt.keras.Input(shape=(3,)), gt.keras.Input(shape=(3,))
    d1, d2 = Lr.Dense(4), Lr.Dense(4)
    h = Lr.concatenate([d1(i1), Lr.Add()([d2(i2), d1(i2)])])
    out = Lr.Dense(1)(Lr.LayerNormalization()(h))
    model = gt.keras.Model([i1, i2], out)
    with gt.GradientTape() as tape:
        y = model([a, b])
        loss = gt.reduce_sum(y * y)
    assert y.shape == (2, 1)
    grads = tape.gradient(loss, model.trainable_variables)
    assert len(grads) == len(model.trainable_variables) == 2 + 2 + 2 + 2
    assert all(g is not None for g in grads)


def test_layer_gradients_match_finite_differences():
    x = gt.Variable(X(1, 4, 4, 2).astype(np.float64))
    layers = [
        Lr.Conv2DTranspose(2, 3, strides=2, padding="same", dtype="float64"),
        Lr.DepthwiseConv2D(2, dtype="float64"),
        Lr.GroupNormalization(groups=1, dtype="float64"),
        Lr.PReLU(dtype="float64"),
    ]
    for layer in layers:
        layer(x)
        # Non-zero PReLU slopes, so both branches carry gradient.
        for v in layer.weights:
            v.assign(K(*v.shape).astype(np.float64) + 0.3)

        def f(value, layer=layer):
            return float(gt.reduce_sum(gt.sin(layer(gt.constant(value)))))

        with gt.GradientTape() as tape:
            loss = gt.reduce_sum(gt.sin(layer(x)))
        g = tape.gradient(loss, x).numpy()
        base = x.numpy()
        for idx in [(0, 0, 0, 0), (0, 1, 2, 1), (0, 3, 3, 0)]:
            up, dn = base.copy(), base.copy()
            up[idx] += 1e-6
            dn[idx] -= 1e-6
            np.testing.assert_allclose(g[idx], (f(up) - f(dn)) / 2e-6, rtol=1e-5, atol=1e-8, err_msg=layer.name)


def test_noise_layers_train_only():
    x = gt.ones([200, 50])
    for layer in [Lr.GaussianNoise(0.5), Lr.GaussianDropout(0.3), Lr.SpatialDropout1D(0.5)]:
        z = X(2, 5, 50)
        np.testing.assert_array_equal(layer(z).numpy(), z)  # inference: the identity
    gt.random.set_seed(3)
    y = Lr.GaussianNoise(0.5)(x, training=True).numpy()
    assert abs(y.mean() - 1) < 0.02 and abs(y.std() - 0.5) < 0.02
    y = Lr.GaussianDropout(0.5)(x, training=True).numpy()
    assert abs(y.mean() - 1) < 0.03 and abs(y.std() - 1.0) < 0.03
    y = Lr.SpatialDropout1D(0.5)(gt.ones([40, 6, 30]), training=True).numpy()
    # Whole channels: each (example, channel) column is all 0 or all 2.
    assert set(np.unique(y)) <= {0.0, 2.0}
    assert (y.min(axis=1) == y.max(axis=1)).all()
    assert 0.4 < (y[:, 0, :] == 0).mean() < 0.6


def test_sequential_with_input_layer_and_activation_layers():
    model = gt.keras.Sequential([
        Lr.InputLayer(shape=(4,)), Lr.Dense(8), Lr.LeakyReLU(0.2), Lr.Dense(3), Lr.Softmax(),
    ])
    y = model(X(5, 4))
    assert y.shape == (5, 3)
    np.testing.assert_allclose(y.numpy().sum(1), np.ones(5), rtol=1e-6)


# --- recurrent layers ----------------------------------------------------------------------

XR = X(2, 4, 3)


def _rnn(layer):
    """Builds ``layer`` on XR and sets weight i to K(shape) + 0.05 i (Keras' order)."""
    layer(XR)
    for i, v in enumerate(layer.weights):
        v.assign(K(*v.shape) + 0.05 * i)
    return layer(XR)


RNNS = {
    "SimpleRNN": lambda: _rnn(Lr.SimpleRNN(2, return_sequences=True)),
    "LSTM_last": lambda: _rnn(Lr.LSTM(2, return_state=True))[0],
    "LSTM_h": lambda: _rnn(Lr.LSTM(2, return_state=True))[1],
    "LSTM_c": lambda: _rnn(Lr.LSTM(2, return_state=True))[2],
    "LSTM_seq_back": lambda: _rnn(Lr.LSTM(3, return_sequences=True, go_backwards=True)),
    "GRU_seq": lambda: _rnn(Lr.GRU(2, return_sequences=True)),
    "GRU_noreset": lambda: _rnn(Lr.GRU(2, reset_after=False)),
    "Bidir_LSTM_seq": lambda: _rnn(Lr.Bidirectional(Lr.LSTM(2, return_sequences=True))),
    "Bidir_GRU_sum": lambda: _rnn(Lr.Bidirectional(Lr.GRU(2), merge_mode="sum")),
}

KERAS_RNNS = {
    "SimpleRNN": ([2, 4, 2], [
        0.80172342, 0.63774455, 0.92658073, 0.91575903, 0.57944065, 0.60005337, 0.9334932, 0.8416025,
        0.72223175, 0.7473194, 0.44670296, 0.49292517, 0.91829568, 0.81396794, 0.9408567, 0.92949456,
    ]),
    "LSTM_last": ([2, 2], [
        0.12566088, -0.01127007, 0.07487068, -0.04621008,
    ]),
    "LSTM_h": ([2, 2], [
        0.12566088, -0.01127007, 0.07487068, -0.04621008,
    ]),
    "LSTM_c": ([2, 2], [
        0.29878139, -0.02952915, 0.18164521, -0.11916567,
    ]),
    "LSTM_seq_back": ([2, 4, 3], [
        0.0403822, 0.02152868, 0.00308346, -0.07118865, -0.07869536, -0.06990063, -0.10656585, -0.14887695,
        -0.18070924, -0.09121762, -0.14412785, -0.16163573, -0.08031741, -0.12814058, -0.16533315, -0.06000108,
        -0.12133076, -0.14929311, -0.12745962, -0.15545855, -0.15380652, -0.12793276, -0.16838075, -0.19897574,
    ]),
    "GRU_seq": ([2, 4, 2], [
        0.04758757, 0.0327224, -0.05801817, -0.16507754, 0.03727629, -0.0462935, 0.06861451, 0.00605038,
        -0.09078924, -0.18533225, 0.02298357, -0.05183138, 0.05916531, 0.00098952, -0.04706728, -0.18201019,
    ]),
    "GRU_noreset": ([2, 2], [
        0.19109243, 0.06704246, 0.09149904, -0.08687295,
    ]),
    "Bidir_LSTM_seq": ([2, 4, 4], [
        0.07715066, 0.0010968, 0.36683854, 0.20875013, 0.05691753, -0.0395768, 0.15776032, 0.0456216,
        0.08001057, -0.01820817, 0.12637566, 0.05722023, 0.12566088, -0.01127007, 0.25247487, 0.16811411,
        0.00965299, -0.03861573, 0.17778061, 0.04695108, 0.04765796, -0.01561521, 0.15716927, 0.06086775,
        0.10567332, -0.00953955, 0.29788813, 0.16978504, 0.07487068, -0.04621008, 0.05807421, -0.00022058,
    ]),
    "Bidir_GRU_sum": ([2, 2], [
        0.28762141, 0.15947321, 0.02005402, -0.23659907,
    ]),
}


@pytest.mark.parametrize("name", sorted(KERAS_RNNS))
def test_recurrent_layers_match_keras(name):
    shape, values = KERAS_RNNS[name]
    y = RNNS[name]()
    assert list(y.shape) == shape
    np.testing.assert_allclose(y.numpy().ravel(), values, rtol=2e-5, atol=2e-6)


def test_recurrent_weights_as_keras():
    lstm, gru = Lr.LSTM(2), Lr.GRU(2)
    lstm(XR)
    gru(XR)
    assert [tuple(v.shape) for v in lstm.weights] == [(3, 8), (2, 8), (8,)]
    assert [tuple(v.shape) for v in gru.weights] == [(3, 6), (2, 6), (2, 6)]
    np.testing.assert_array_equal(lstm.weights[2].numpy(), [0, 0, 1, 1, 0, 0, 0, 0])  # unit_forget_bias
    q = lstm.weights[1].numpy()  # orthogonal recurrent kernel: orthonormal rows
    np.testing.assert_allclose(q @ q.T, np.eye(2), atol=1e-6)
    bi = Lr.Bidirectional(Lr.GRU(2))
    bi(XR)
    assert len(bi.trainable_variables) == 6


def test_lstm_gradients_through_time_match_finite_differences():
    layer = Lr.LSTM(2, return_sequences=True, dtype="float64")
    x = gt.Variable(XR.astype(np.float64))
    layer(x)
    for i, v in enumerate(layer.weights):
        v.assign(K(*v.shape).astype(np.float64) + 0.05 * i)
    kernel = layer.weights[0]

    def f():
        return gt.reduce_sum(gt.square(layer(x)) * gt.constant(np.arange(16.0).reshape(2, 4, 2)))

    with gt.GradientTape() as tape:
        loss = f()
    gx, gk = tape.gradient(loss, [x, kernel])
    for var, g, idx in [(x, gx, (0, 0, 1)), (x, gx, (1, 2, 0)), (kernel, gk, (2, 5))]:
        base = var.numpy()
        vals = []
        for sign in (1, -1):
            b = base.copy()
            b[idx] += sign * 1e-6
            var.assign(b)
            vals.append(float(f()))
        var.assign(base)
        np.testing.assert_allclose(g.numpy()[idx], (vals[0] - vals[1]) / 2e-6, rtol=1e-5)


def test_text_classifier_with_a_bidirectional_lstm_trains():
    rng = np.random.default_rng(0)
    tokens = rng.integers(1, 20, size=(64, 6))
    labels = (tokens[:, 0] > 10).astype(np.float32)[:, None]  # the first word decides
    model = gt.keras.Sequential([
        Lr.Embedding(20, 8), Lr.Bidirectional(Lr.LSTM(8)), Lr.Dense(1, activation="sigmoid"),
    ])
    opt = gt.optimizers.Adam(0.05)
    bce = L.BinaryCrossentropy()
    losses = []
    for _ in range(15):
        with gt.GradientTape() as tape:
            loss = bce(labels, model(tokens))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0], losses


def test_recurrent_layers_on_an_empty_batch():
    y, h, c = Lr.LSTM(3, return_sequences=True, return_state=True)(np.zeros((0, 1000, 2), np.float32))
    assert y.shape == (0, 1000, 3) and h.shape == (0, 3) and c.shape == (0, 3)
    with pytest.raises(ValueError, match="time"):
        Lr.GRU(2)(np.zeros((1, 4), np.float32))


def test_bad_layer_and_metric_arguments_are_errors():
    with pytest.raises(ValueError, match="num_thresholds"):
        M.AUC(num_thresholds=2**40)
    with pytest.raises(ValueError, match="non-negative"):
        Lr.Cropping2D(-1)
    with pytest.raises(ValueError, match="out of range"):
        Lr.Dot(axes=5)([np.ones((2, 3)), np.ones((2, 3))])
    with pytest.raises(ValueError, match="divisor"):
        Lr.GroupNormalization(groups=4)(np.ones((1, 2, 6)))
