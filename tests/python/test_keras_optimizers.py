"""Keras 3 optimizer additions: ``apply``, RMSprop, Adagrad, AdamW, weight decay,
gradient clipping and learning-rate schedules, against Keras 3's numbers (TF 2.21).

The expected values were computed with Keras 3 (``keras.optimizers``) on the same
variables and gradients (three steps)."""

import numpy as np
import pytest

import gradtape as gt

O = gt.optimizers  # noqa: E741
S = gt.optimizers.schedules

W0 = np.array([[0.5, -1.0], [2.0, 0.25]], np.float32)
B0 = np.array([0.1, -0.3], np.float32)
GRADS = [
    (np.array([[0.3, -0.2], [1.5, 0.05]], np.float32), np.array([2.0, -0.5], np.float32)),
    (np.array([[-0.1, 0.4], [0.7, -0.6]], np.float32), np.array([0.5, 1.5], np.float32)),
    (np.array([[0.2, 0.2], [-1.0, 0.3]], np.float32), np.array([-1.0, 0.25], np.float32)),
]

# Keras 3: w and b after the three steps.
EXPECTED = {
    "rmsprop": [
        [[0.4607456922531128, -1.0105446577072144], [1.971923828125, 0.2351996749639511]],
        [0.0752844288945198, -0.3037526607513428],
    ],
    "rmsprop_mom": [
        [[0.41610556840896606, -0.9821845889091492], [1.9052865505218506, 0.20950746536254883]],
        [0.013957077637314796, -0.2768138349056244],
    ],
    "rmsprop_centered": [
        [[0.4677641689777374, -1.0071355104446411], [1.9759160280227661, 0.23857621848583221]],
        [0.07969930768013, -0.3017776310443878],
    ],
    "adagrad": [
        [[0.41271114349365234, -1.0538771152496338], [1.9116443395614624, 0.28224802017211914]],
        [0.02048764005303383, -0.3238319456577301],
    ],
    "adagrad_init": [
        [[0.44889509677886963, -1.0438175201416016], [1.919238805770874, 0.27679917216300964]],
        [0.024489669129252434, -0.34317493438720703],
    ],
    "adamw": [
        [[0.4799082279205322, -0.9987342357635498], [1.9777487516403198, 0.24872593581676483]],
        [0.07869783788919449, -0.29967793822288513],
    ],
    "adamw_wd": [
        [[0.39297258853912354, -0.979749858379364], [1.8608168363571167, 0.24037300050258636]],
        [-0.007242617662996054, -0.29446423053741455],
    ],
    "sgd_clipnorm": [
        [[0.47197553515434265, -1.0451385974884033], [1.9259601831436157, 0.27843451499938965]],
        [0.06837722659111023, -0.3948683440685272],
    ],
    "sgd_global_clipnorm": [
        [[0.48029571771621704, -1.0269397497177124], [1.9713730812072754, 0.2599603831768036]],
        [0.0626184344291687, -0.37726742029190063],
    ],
    "adam_clipvalue": [
        [[0.2996727228164673, -0.9885355234146118], [1.7738035917282104, 0.22934342920780182]],
        [-0.12619629502296448, -0.23040765523910522],
    ],
    "sgd_wd": [
        [[0.4410664737224579, -1.0420129299163818], [1.726951003074646, 0.300453245639801]],
        [-0.22474992275238037, -0.4615758955478668],
    ],
    "sgd_expdecay": [
        [[0.4670710861682892, -1.0182843208312988], [1.8505024909973145, 0.27242642641067505]],
        [-0.08535534143447876, -0.36856600642204285],
    ],
    "sgd_expdecay_stair": [
        [[0.4699999988079071, -1.0299999713897705], [1.8299999237060547, 0.2900000214576721]],
        [-0.10000000894069672, -0.4124999940395355],
    ],
    "adam_cosine": [
        [[0.33568763732910156, -0.9572123289108276], [1.807342767715454, 0.21803222596645355]],
        [-0.08582180738449097, -0.26603928208351135],
    ],
    "sgd_piecewise": [
        [[0.22999998927116394, -1.0199999809265137], [0.25, 0.4699999988079071]],
        [-2.0500001907348633, -0.574999988079071],
    ],
}

CONFIGS = {
    "rmsprop": lambda: O.RMSprop(0.01),
    "rmsprop_mom": lambda: O.RMSprop(0.01, momentum=0.9),
    "rmsprop_centered": lambda: O.RMSprop(0.01, rho=0.8, centered=True),
    "adagrad": lambda: O.Adagrad(0.1),
    "adagrad_init": lambda: O.Adagrad(0.1, initial_accumulator_value=0.5, epsilon=1e-3),
    "adamw": lambda: O.AdamW(0.01),
    "adamw_wd": lambda: O.AdamW(0.05, weight_decay=0.1, amsgrad=True),
    "sgd_clipnorm": lambda: O.SGD(0.1, clipnorm=1.0),
    "sgd_global_clipnorm": lambda: O.SGD(0.1, global_clipnorm=1.0),
    "adam_clipvalue": lambda: O.Adam(0.1, clipvalue=0.5),
    "sgd_wd": lambda: O.SGD(0.1, momentum=0.5, weight_decay=0.01),
    "sgd_expdecay": lambda: O.SGD(S.ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5)),
    "sgd_expdecay_stair": lambda: O.SGD(S.ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5, staircase=True)),
    "adam_cosine": lambda: O.Adam(S.CosineDecay(0.1, decay_steps=4)),
    "sgd_piecewise": lambda: O.SGD(S.PiecewiseConstantDecay([0, 1], [1.0, 0.5, 0.1])),
}


def _run(opt, traced):
    w, b = gt.Variable(W0), gt.Variable(B0)

    def step(gw, gb):
        opt.apply([gw, gb], [w, b])

    if traced:
        step = gt.function(step)
    for gw, gb in GRADS:
        step(gt.constant(gw), gt.constant(gb))
    return w.numpy(), b.numpy()


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_matches_keras(name, traced):
    w, b = _run(CONFIGS[name](), traced)
    ew, eb = EXPECTED[name]
    np.testing.assert_allclose(w, ew, rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(b, eb, rtol=2e-5, atol=2e-6)


def test_apply_matches_apply_gradients():
    a, b = gt.Variable(W0), gt.Variable(W0)
    O.RMSprop(0.1).apply([gt.constant(GRADS[0][0])], [a])
    O.RMSprop(0.1).apply_gradients([(gt.constant(GRADS[0][0]), b)])
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_apply_checks_lengths():
    v = gt.Variable(1.0)
    with pytest.raises(ValueError, match="one gradient a variable"):
        O.SGD().apply([gt.constant(1.0), gt.constant(2.0)], [v])
    with pytest.raises(ValueError, match="trainable_variables"):
        O.SGD().apply([gt.constant(1.0)])


def test_clip_options_are_exclusive_and_kwargs_checked():
    with pytest.raises(ValueError, match="Only one of"):
        O.SGD(clipnorm=1.0, global_clipnorm=1.0)
    with pytest.raises(TypeError, match="not recognized"):
        O.Adam(bogus=1)
    with pytest.raises(ValueError, match="weight_decay"):
        O.AdamW(weight_decay=None)
    with pytest.raises(ValueError, match="initial_accumulator_value"):
        O.Adagrad(initial_accumulator_value=-1.0)


def test_exclude_from_weight_decay():
    w, b = gt.Variable(W0, name="kernel"), gt.Variable(B0, name="bias")
    opt = O.SGD(0.1, weight_decay=0.5)
    opt.exclude_from_weight_decay(var_names=["bias"])
    opt.apply([gt.zeros_like(w), gt.zeros_like(b)], [w, b])
    np.testing.assert_allclose(w.numpy(), W0 * (1 - 0.05), rtol=1e-6)
    np.testing.assert_array_equal(b.numpy(), B0)


STEPS = [0, 1, 5, 10, 11, 15, 20, 21, 50, 105, 200]
SCHEDULES = {
    "exp": (
        lambda: S.ExponentialDecay(0.1, 10, 0.9),
        [
            0.10000000149011612,
            0.09895192831754684,
            0.09486832469701767,
            0.08999999612569809,
            0.08905673027038574,
            0.08538150042295456,
            0.08099999278783798,
            0.08015105873346329,
            0.05904899165034294,
            0.03307853266596794,
            0.01215765904635191,
        ],
    ),
    "exp_stair": (
        lambda: S.ExponentialDecay(0.1, 10, 0.9, staircase=True),
        [
            0.10000000149011612,
            0.10000000149011612,
            0.10000000149011612,
            0.08999999612569809,
            0.08999999612569809,
            0.08999999612569809,
            0.08099999278783798,
            0.08099999278783798,
            0.05904899165034294,
            0.03486783429980278,
            0.01215765904635191,
        ],
    ),
    "cos": (
        lambda: S.CosineDecay(0.1, 100, alpha=0.1),
        [
            0.10000000149011612,
            0.09997779130935669,
            0.09944597631692886,
            0.09779754281044006,
            0.09733963757753372,
            0.09509529173374176,
            0.09140576422214508,
            0.09055697917938232,
            0.05499999597668648,
            0.010000000707805157,
            0.010000000707805157,
        ],
    ),
    "cos_warm": (
        lambda: S.CosineDecay(0.0, 100, warmup_target=0.2, warmup_steps=10),
        [
            0.0,
            0.020000001415610313,
            0.10000000149011612,
            0.20000000298023224,
            0.19995065033435822,
            0.19876883924007416,
            0.1951056569814682,
            0.19408808648586273,
            0.13090169429779053,
            0.001231163740158081,
            0.0,
        ],
    ),
    "pw": (
        lambda: S.PiecewiseConstantDecay([10, 20], [1.0, 0.5, 0.1]),
        [
            1.0,
            1.0,
            1.0,
            1.0,
            0.5,
            0.5,
            0.5,
            0.10000000149011612,
            0.10000000149011612,
            0.10000000149011612,
            0.10000000149011612,
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedules_match_keras(name):
    make, expected = SCHEDULES[name]
    s = make()
    got = [float(s(step)) for step in STEPS]
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
    # A tensor step (as inside gt.function) gives the same.
    got_t = [float(s(gt.constant(step, dtype=gt.int64))) for step in STEPS]
    np.testing.assert_allclose(got_t, expected, rtol=1e-6, atol=1e-7)


def test_schedule_arguments_checked():
    with pytest.raises(ValueError, match="decay_steps"):
        S.ExponentialDecay(0.1, 0, 0.5)
    with pytest.raises(ValueError, match="decay_steps"):
        S.CosineDecay(0.1, 0)
    with pytest.raises(ValueError, match="1 less"):
        S.PiecewiseConstantDecay([1, 2], [1.0])


def test_optimizers_get():
    assert isinstance(O.get("adam"), O.Adam)
    assert isinstance(O.get("RMSprop"), O.RMSprop)
    opt = O.SGD()
    assert O.get(opt) is opt
    with pytest.raises(ValueError, match="optimizer identifier"):
        O.get("nope")
