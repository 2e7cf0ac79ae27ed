"""Nadam, Adamax, Adadelta, Ftrl and Lion (the crate's fused kernels) and float16
variables through the kernel for every optimizer (issues 16 and 17), against TF 2.21's
Keras 3: five steps on [1, -2, 0.5] of the gradients [0.3 t, -1, 2 if t <= 2 else 0.01]
(numpy float64 values cast to the variable's dtype), learning rate 0.1."""

import numpy as np
import pytest

import gradtape as gt
from gradtape.optimizers import _base

OPT = gt.optimizers


def _ftrl():
    return OPT.Ftrl(0.1, l1_regularization_strength=0.01, l2_regularization_strength=0.02,
                    l2_shrinkage_regularization_strength=0.03, beta=0.1)


MAKE = {
    "SGD": lambda: OPT.SGD(0.1),
    "SGDm": lambda: OPT.SGD(0.1, momentum=0.9, nesterov=True),
    "Adam": lambda: OPT.Adam(0.1),
    "AdamW": lambda: OPT.AdamW(0.1),
    "RMSprop": lambda: OPT.RMSprop(0.1, momentum=0.5, centered=True),
    "Adagrad": lambda: OPT.Adagrad(0.1),
    "Nadam": lambda: OPT.Nadam(0.1),
    "Adamax": lambda: OPT.Adamax(0.1),
    "Adadelta": lambda: OPT.Adadelta(0.1),
    "Ftrl": _ftrl,
    "Lion": lambda: OPT.Lion(0.1),
    "NadamWD": lambda: OPT.Nadam(0.1, weight_decay=0.05),
}

# tf.keras.optimizers.* (TF 2.21, Keras 3) with the arguments of MAKE.
KERAS_F32 = {
    "Nadam": [0.519058108329773, -1.604022741317749, 0.27931922674179077],
    "Adamax": [0.6247041821479797, -1.5000001192092896, 0.1572778970003128],
    "Adadelta": [0.9989217519760132, -1.999279499053955, 0.49971264600753784],
    "Ftrl": [-0.1202469915151596, -0.9520427584648132, 0.23459981381893158],
    "Lion": [0.49999991059303284, -1.4999998807907104, 1.4901161193847656e-08],
}
KERAS_F32_FTRL_DEFAULT = [-0.09084215760231018, -1.0821610689163208, 0.25181323289871216]

KERAS_F16 = {
    "SGD": [0.55029296875, -1.501953125, 0.09716796875],
    "SGDm": [-0.30517578125, -0.31787109375, -1.2626953125],
    "Adam": [0.52099609375, -1.5068359375, 0.10943603515625],
    "AdamW": [0.5185546875, -1.501953125, 0.10882568359375],
    "RMSprop": [-1.4521484375, 0.03515625, -0.62939453125],
    "Adagrad": [0.63427734375, -1.6845703125, 0.330322265625],
    "Nadam": [0.5185546875, -1.603515625, 0.279296875],
    "Adamax": [0.625, -1.501953125, 0.1578369140625],
    "Adadelta": [0.9990234375, -2.0, 0.49951171875],
    "Ftrl": [-0.1202392578125, -0.951171875, 0.234375],
    "Lion": [0.49951171875, -1.501953125, -0.0001220703125],
    "NadamWD": [0.4990234375, -1.55859375, 0.2705078125],
}


def _grad(t, dtype):
    return gt.constant(np.array([0.3 * t, -1.0, 2.0 if t <= 2 else 0.01]).astype(dtype))


def _run(opt, dtype="float32", steps=5):
    v = gt.Variable(np.array([1.0, -2.0, 0.5], dtype=dtype))
    for t in range(1, steps + 1):
        opt.apply_gradients([(_grad(t, dtype), v)])
    return v


class _Spy:
    def __init__(self, monkeypatch):
        self.kinds = []
        real = _base._optimizer_update

        def spy(kind, *args):
            self.kinds.append(kind)
            return real(kind, *args)

        monkeypatch.setattr(_base, "_optimizer_update", spy)


@pytest.mark.parametrize("name", sorted(KERAS_F32))
def test_new_optimizers_match_keras_float32(name, monkeypatch):
    spy = _Spy(monkeypatch)
    v = _run(MAKE[name]())
    np.testing.assert_allclose(v.numpy(), KERAS_F32[name], rtol=1e-6, atol=1e-7)
    assert len(spy.kinds) == 5  # one kernel call a step


def test_ftrl_defaults_match_keras():
    np.testing.assert_allclose(_run(OPT.Ftrl(0.1)).numpy(), KERAS_F32_FTRL_DEFAULT, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(KERAS_F16))
def test_float16_variables_run_the_kernel_and_match_keras(name, monkeypatch):
    spy = _Spy(monkeypatch)
    v = _run(MAKE[name](), "float16")
    assert v.dtype == gt.float16
    # float16 as TF computes it: each operation rounded to float16. Equal to Keras'
    # numbers or within one float16 ulp (0.001 near 1).
    np.testing.assert_allclose(v.numpy().astype(np.float64), KERAS_F16[name], rtol=0, atol=2e-3)
    assert len(spy.kinds) == 5


@pytest.mark.parametrize("name", sorted(KERAS_F32))
def test_traced_steps_equal_eager_steps(name):
    eager = _run(MAKE[name]()).numpy()
    opt = MAKE[name]()
    v = gt.Variable(np.array([1.0, -2.0, 0.5], np.float32))

    @gt.function
    def step(g):
        opt.apply_gradients([(g, v)])

    for t in range(1, 6):
        step(_grad(t, "float32"))
    np.testing.assert_allclose(v.numpy(), eager, rtol=1e-6, atol=1e-7)
    assert int(opt.iterations.numpy()) == 5


def test_slots_have_keras_names_and_values():
    v = gt.Variable([1.0, 2.0], name="w")
    opt = OPT.Ftrl(0.1, initial_accumulator_value=0.5)
    opt.apply_gradients([(gt.constant([1.0, -2.0]), v)])
    slots = opt._slots[v._unique_id]
    assert sorted(slots) == ["accumulator", "linear"]
    np.testing.assert_allclose(slots["accumulator"].numpy(), [1.5, 4.5])
    opt = OPT.Adamax(0.1)
    opt.apply_gradients([(gt.constant([1.0, -2.0]), v)])
    slots = opt._slots[v._unique_id]
    np.testing.assert_allclose(slots["momentum"].numpy(), [0.1, -0.2], rtol=1e-6)
    np.testing.assert_allclose(slots["norm"].numpy(), [1.0, 2.0])


def test_lion_steps_by_sign_and_nadam_by_hand():
    v = gt.Variable([1.0, 2.0, 3.0])
    OPT.Lion(0.5).apply_gradients([(gt.constant([2.0, -3.0, 0.0]), v)])
    np.testing.assert_array_equal(v.numpy(), [0.5, 2.5, 3.0])  # sign(0) = 0
    # Nadam's first step by hand (float64): u_1, u_2 from the 0.96 schedule.
    b1, b2, lr, g = 0.9, 0.999, 0.1, 2.0
    u1, u2 = b1 * (1 - 0.5 * 0.96), b1 * (1 - 0.5 * 0.96**2)
    m, s = (1 - b1) * g, (1 - b2) * g * g
    m_hat = u2 * m / (1 - u1 * u2) + (1 - u1) * g / (1 - u1)
    want = 1.0 - m_hat * lr / (np.sqrt(s / (1 - b2)) + 1e-7)
    w = gt.Variable(np.float64(1.0))
    OPT.Nadam(lr).apply_gradients([(gt.constant(g, "float64"), w)])
    np.testing.assert_allclose(float(w.numpy()), want, rtol=1e-12)


def test_get_by_name_and_argument_checks():
    for name, cls in [("nadam", OPT.Nadam), ("Adamax", OPT.Adamax), ("adadelta", OPT.Adadelta),
                      ("ftrl", OPT.Ftrl), ("lion", OPT.Lion)]:
        assert type(OPT.get(name)) is cls
    with pytest.raises(ValueError, match="learning_rate_power"):
        OPT.Ftrl(learning_rate_power=0.5)
    with pytest.raises(ValueError, match="initial_accumulator_value"):
        OPT.Ftrl(initial_accumulator_value=-1.0)
    with pytest.raises(ValueError, match="beta_1"):
        OPT.Lion(beta_1=0.0)
    with pytest.raises(TypeError, match="not recognized"):
        OPT.Nadam(momentum=0.5)


# bfloat16 variables go through the same fused kernel (every operation rounded to
# bfloat16, as TF computes it). Keras 3 with TF 2.21, variable [0.5, -1.25, 2.0] in
# bfloat16 and these four bfloat16 gradients, printed as float32 (Adam's and Adadelta's
# steps round away in bfloat16, Nadam's schedule overflows to NaN: Keras' own numbers).
_BF16_GRADS = [[0.3, -1.0, 0.75], [0.1, 0.5, -2.0], [-0.6, 0.25, 1.5], [0.05, -0.3, 0.9]]
_BF16_KERAS = [
    ('SGD', {'learning_rate': 0.1}, [0.515625, -1.1875, 1.890625]),
    ('SGD', {'learning_rate': 0.1, 'momentum': 0.9}, [0.48046875, -1.0625, 1.9140625]),
    ('SGD', {'learning_rate': 0.1, 'momentum': 0.9, 'nesterov': True}, [0.49609375, -1.03125, 1.8203125]),
    ('Adam', {'learning_rate': 0.01}, [0.5, -1.25, 2.0]),
    ('Adam', {'learning_rate': 0.01, 'amsgrad': True}, [0.5, -1.25, 2.0]),
    ('AdamW', {'learning_rate': 0.01, 'weight_decay': 0.05}, [0.5, -1.25, 2.0]),
    ('RMSprop', {'learning_rate': 0.01}, [0.486328125, -1.234375, 1.9765625]),
    ('RMSprop', {'learning_rate': 0.01, 'momentum': 0.5, 'centered': True}, [0.4609375, -1.21875, 1.953125]),
    ('Adagrad', {'learning_rate': 0.1}, [0.482421875, -1.203125, 1.9140625]),
    ('Nadam', {'learning_rate': 0.01}, [np.nan, np.nan, np.nan]),
    ('Adamax', {'learning_rate': 0.01}, [0.486328125, -1.2421875, 1.9921875]),
    ('Adadelta', {'learning_rate': 1.0}, [0.5, -1.25, 2.0]),
    ('Ftrl', {'learning_rate': 0.1, 'l1_regularization_strength': 0.01}, [0.11572265625, -0.8125, 1.140625]),
    ('Lion', {'learning_rate': 0.01}, [0.48046875, -1.25, 1.984375]),
]


@pytest.mark.parametrize("name,kw,want", _BF16_KERAS)
def test_bfloat16_variables_update_as_keras(name, kw, want):
    v = gt.Variable(gt.constant([0.5, -1.25, 2.0], gt.bfloat16))
    opt = getattr(OPT, name)(**kw)
    for g in _BF16_GRADS:
        opt.apply_gradients([(gt.constant(g, gt.bfloat16), v)])
    assert v.dtype == gt.bfloat16
    np.testing.assert_array_equal(gt.cast(v, gt.float32).numpy(), np.array(want, np.float32))


def test_integer_variables_are_refused_without_a_change():
    r = gt.Variable([1.0])
    for make in (OPT.Nadam, OPT.Adamax, OPT.Adadelta, OPT.Ftrl, OPT.Lion, OPT.Adam, OPT.SGD):
        opt = make(0.1)
        with pytest.raises(ValueError, match="Invalid type"):
            opt.apply_gradients([(gt.constant([1.0]), r), (gt.constant([1]), gt.Variable([1]))])
        assert r.numpy().tolist() == [1.0] and int(opt.iterations.numpy()) == 0


# Issue 17: every optimizer on complex variables, against its formula in numpy
# complex128 (Keras 3's update rules with the operations of TF's training ops on complex
# numbers: `g * g` for the square, principal square roots and powers, sign(z) = z / |z|;
# AMSGrad's maximum and Ftrl's clip compare moduli; Adamax's norm is max(b2 u, |g|)).
def _csign(z):
    n = np.abs(z)
    return np.where(n == 0, 0, z / np.where(n == 0, 1, n))


def _np_adam(amsgrad=False, weight_decay=None, b1=0.9, b2=0.999, eps=1e-7):
    def step(x, g, t, s, lr):
        if weight_decay is not None:
            x = x - x * weight_decay * lr
        m = s.get("m", 0) + (g - s.get("m", 0)) * (1 - b1)
        v = s.get("v", 0) + (g * g - s.get("v", 0)) * (1 - b2)
        s.update(m=m, v=v)
        if amsgrad:
            vh = s.get("vh", np.zeros_like(v))
            s["vh"] = vh = np.where(np.abs(v) > np.abs(vh), v, vh)
            v = vh
        alpha = lr * np.sqrt(1 - b2**t) / (1 - b1**t)
        return x - m * alpha / (np.sqrt(v) + eps)

    return step


def _np_sgd_nesterov(x, g, t, s, lr, mo=0.9):
    s["m"] = m = mo * s.get("m", 0) - lr * g
    return x + mo * m - lr * g


def _np_rmsprop(x, g, t, s, lr, rho=0.9, mo=0.5, eps=1e-7):
    s["v"] = v = rho * s.get("v", 0) + (1 - rho) * g * g
    s["a"] = a = rho * s.get("a", 0) + (1 - rho) * g
    s["m"] = m = mo * s.get("m", 0) + lr * g / np.sqrt(v - a * a + eps)
    return x - m


def _np_adagrad(x, g, t, s, lr, eps=1e-7):
    s["acc"] = acc = s.get("acc", 0.1) + g * g
    return x - lr * g / np.sqrt(acc + eps)


def _np_nadam(x, g, t, s, lr, b1=0.9, b2=0.999, eps=1e-7):
    u = [b1 * (1 - 0.5 * 0.96**k) for k in range(1, t + 2)]
    u_prod, u_t, u_t1 = np.prod(u[:t]), u[t - 1], u[t]
    s["m"] = m = s.get("m", 0) + (g - s.get("m", 0)) * (1 - b1)
    s["v"] = v = s.get("v", 0) + (g * g - s.get("v", 0)) * (1 - b2)
    m_hat = u_t1 * m / (1 - u_prod * u_t1) + (1 - u_t) * g / (1 - u_prod)
    return x - lr * m_hat / (np.sqrt(v / (1 - b2**t)) + eps)


def _np_adamax(x, g, t, s, lr, b1=0.9, b2=0.999, eps=1e-7):
    s["m"] = m = s.get("m", 0) + (g - s.get("m", 0)) * (1 - b1)
    s["u"] = u = np.maximum(b2 * s.get("u", 0), np.abs(g))
    return x - lr * m / ((1 - b1**t) * (u + eps))


def _np_adadelta(x, g, t, s, lr, rho=0.95, eps=1e-7):
    s["a"] = a = rho * s.get("a", 0) + (1 - rho) * g * g
    delta = -np.sqrt(s.get("d", 0) + eps) * g / np.sqrt(a + eps)
    s["d"] = rho * s.get("d", 0) + (1 - rho) * delta * delta
    return x + lr * delta


def _np_ftrl(x, g, t, s, lr, l1=0.01, l2=0.02, shrink=0.03, beta=0.1, p=0.5):
    acc = s.get("acc", 0.1)
    new_acc = acc + g * g
    lin = s.get("lin", 0) + (g + 2 * shrink * x) - (new_acc**p - acc**p) / lr * x
    s.update(acc=new_acc, lin=lin)
    quadratic = new_acc**p / lr + 2 * (l2 + beta / (2 * lr))
    clipped = np.where(np.abs(lin) > l1, l1 * _csign(lin), lin)
    return (clipped - lin) / quadratic


def _np_lion(x, g, t, s, lr, b1=0.9, b2=0.99):
    m = s.get("m", 0)
    s["m"] = b2 * m + (1 - b2) * g
    return x - lr * _csign(b1 * m + (1 - b1) * g)


NUMPY_COMPLEX = {
    "SGD": (lambda: OPT.SGD(0.1), lambda x, g, t, s, lr: x - lr * g),
    "SGDm": (lambda: OPT.SGD(0.1, momentum=0.9, nesterov=True), _np_sgd_nesterov),
    "Adam": (lambda: OPT.Adam(0.1), _np_adam()),
    "AdamAMSGrad": (lambda: OPT.Adam(0.1, amsgrad=True), _np_adam(amsgrad=True)),
    "AdamW": (lambda: OPT.AdamW(0.1, weight_decay=0.05), _np_adam(weight_decay=0.05)),
    "RMSprop": (lambda: OPT.RMSprop(0.1, momentum=0.5, centered=True), _np_rmsprop),
    "Adagrad": (lambda: OPT.Adagrad(0.1), _np_adagrad),
    "Nadam": (lambda: OPT.Nadam(0.1), _np_nadam),
    "Adamax": (lambda: OPT.Adamax(0.1), _np_adamax),
    "Adadelta": (lambda: OPT.Adadelta(0.1), _np_adadelta),
    "Ftrl": (_ftrl, _np_ftrl),
    "Lion": (lambda: OPT.Lion(0.1), _np_lion),
}


def _complex_grads(t):
    # Step 3 has a zero element (Lion's sign(0) = 0, Adamax's |0|), step 4 a gradient
    # that shrinks the second moment's modulus (AMSGrad keeps the larger).
    g = np.array([0.3 * t - 0.2j, -1 + 0.1j * t, (2 if t <= 2 else 0.01) + 1j, 0.5 - 0.5j])
    if t == 3:
        g[3] = 0
    if t == 4:
        g[3] = 0.01j
    return g


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(NUMPY_COMPLEX))
def test_complex_variables_follow_the_formula_in_numpy(name, dtype, monkeypatch):
    make, formula = NUMPY_COMPLEX[name]
    x0 = np.array([1 + 1j, -2 + 0.5j, 0.5 - 3j, 0.25 + 0.75j])
    spy = _Spy(monkeypatch)
    v = gt.Variable(x0.astype(dtype))
    opt = make()
    want, state = x0.copy(), {}
    for t in range(1, 6):
        g = _complex_grads(t)
        opt.apply_gradients([(gt.constant(g.astype(dtype)), v)])
        want = formula(want, g.astype(dtype).astype(np.complex128), t, state, 0.1)
        got = v.numpy()
        assert got.dtype == dtype
        tol = 2e-5 if dtype == "complex64" else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"step {t}")
    assert len(spy.kinds) == 5  # the crate's kernel, once a step
    # The slots are complex too.
    slots = list(opt._slots[v._unique_id].values())
    assert all(s.dtype.name == dtype for s in slots) and (name == "SGD") == (slots == [])


def test_complex_maximum_and_clip_by_modulus():
    # AMSGrad: after g = 2j, v = 0.001 g*g = -0.004 = vhat. After g = 1.5, v = -0.004 +
    # (2.25 + 0.004) 0.001 = -0.001746: a larger real part (a lexicographic maximum, as
    # NumPy's, would take it) but a smaller modulus, so vhat stays -0.004.
    v = gt.Variable(np.array([0j], np.complex128))
    opt = OPT.Adam(0.1, amsgrad=True)
    opt.apply_gradients([(gt.constant(np.array([2j])), v)])
    vhat = opt._slots[v._unique_id]["vhat"]
    np.testing.assert_allclose(vhat.numpy(), [0.001 * -4], rtol=1e-12)
    opt.apply_gradients([(gt.constant(np.array([1.5 + 0j])), v)])
    np.testing.assert_allclose(opt._slots[v._unique_id]["v"].numpy(), [-0.001746])
    np.testing.assert_allclose(vhat.numpy(), [-0.004], rtol=1e-12)
    # Ftrl with l1 = 1: the first linear term z = g - (sqrt(0.1 + g*g) - sqrt(0.1)) / lr * x
    # for x = 0 is g = 3 + 4j, |z| = 5 > 1: the variable becomes (z / |z| - z) / quadratic.
    x = gt.Variable(np.array([0j], np.complex128))
    OPT.Ftrl(0.5, l1_regularization_strength=1.0).apply_gradients([(gt.constant(np.array([3 + 4j])), x)])
    z = 3 + 4j
    quadratic = np.sqrt(0.1 + z * z) / 0.5
    np.testing.assert_allclose(x.numpy(), [(z / 5 - z) / quadratic], rtol=1e-12)


COMPLEX = {
    "SGD": lambda: OPT.SGD(0.1),
    "SGDm": lambda: OPT.SGD(0.1, momentum=0.9, nesterov=True),
    "Adam": lambda: OPT.Adam(0.1),
    "AdamW": lambda: OPT.AdamW(0.1, weight_decay=0.05),
    "RMSprop": lambda: OPT.RMSprop(0.1),
    "RMSpropmc": lambda: OPT.RMSprop(0.1, momentum=0.5, centered=True),
    "Adagrad": lambda: OPT.Adagrad(0.1),
}


def _complex_run(make, dtype, monkeypatch=None):
    v = gt.Variable(np.array([1 + 1j, -2 + 0.5j, 0.5 - 3j], dtype))
    opt = make()
    for t in range(1, 6):
        g = np.array([0.3 * t - 0.2j, -1 + 0.1j * t, (2 if t <= 2 else 0.01) + 1j], dtype)
        opt.apply_gradients([(gt.constant(g), v)])
    return v.numpy()


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(COMPLEX))
def test_complex_variables_run_the_kernel_as_the_op_chain(name, dtype, monkeypatch):
    with monkeypatch.context() as m:
        spy = _Spy(m)
        fused = _complex_run(COMPLEX[name], dtype)
        assert len(spy.kinds) == 5  # the kernel, once a step
    with monkeypatch.context() as m:
        spy = _Spy(m)
        m.setattr(_base.Optimizer, "_native", lambda self, v, g: None)
        chain = _complex_run(COMPLEX[name], dtype)
        assert spy.kinds == []
    rtol = 1e-5 if dtype == "complex64" else 1e-12
    np.testing.assert_allclose(fused, chain, rtol=rtol, atol=rtol)


def test_complex_first_steps_by_hand():
    v = gt.Variable(np.array([1 + 1j], np.complex128))
    OPT.SGD(0.1).apply_gradients([(gt.constant(np.array([2 - 1j])), v)])
    np.testing.assert_allclose(v.numpy(), [0.8 + 1.1j], rtol=1e-15)
    # Adagrad: acc = 0.1 + g*g (g*g = 3 - 4j), step lr g / sqrt(acc + eps).
    v = gt.Variable(np.array([1 + 1j], np.complex128))
    OPT.Adagrad(0.1).apply_gradients([(gt.constant(np.array([2 - 1j])), v)])
    want = (1 + 1j) - 0.1 * (2 - 1j) / np.sqrt(0.1 + (2 - 1j) ** 2 + 1e-7)
    np.testing.assert_allclose(v.numpy(), [want], rtol=1e-12)
