"""The crate's optimizers and Dense (gradtape::nn) behind gt.optimizers and
gt.layers.Dense: the fused kernels against Keras 3 (TF 2.21's numbers), against the
same update written as gt ops (each optimizer's `_plan`), traced and eager."""

import numpy as np
import pytest

import gradtape as gt
from gradtape import _gradtape
from gradtape.optimizers import _base

OPT = gt.optimizers

# TF 2.21's Keras 3 on [1, -2, 0.5] (float32) after five steps of the gradients
# [0.3 t, -1, 2 if t <= 2 else 0.01] (learning rate 0.1); tf.keras.optimizers.* with
# these arguments.
KERAS = [
    (lambda: OPT.SGD(0.1), [0.5500000715255737, -1.4999998807907104, 0.09700000286102295]),
    (lambda: OPT.SGD(0.1, momentum=0.9), [0.04890698194503784, -0.6855900287628174, -1.0124298334121704]),
    (lambda: OPT.SGD(0.1, momentum=0.9, nesterov=True),
     [-0.30598366260528564, -0.31703096628189087, -1.2641868591308594]),
    (lambda: OPT.Adam(0.1), [0.5149227380752563, -1.5000051259994507, 0.10472580790519714]),
    (lambda: OPT.Adam(0.1, amsgrad=True), [0.5149227380752563, -1.5000051259994507, 0.10490702837705612]),
    (lambda: OPT.AdamW(0.1, weight_decay=0.004), [0.5133150815963745, -1.4964077472686768, 0.10409396886825562]),
    (lambda: OPT.RMSprop(0.1), [-0.32277846336364746, -0.9354715347290039, -0.04947051778435707]),
    (lambda: OPT.RMSprop(0.1, momentum=0.5, centered=True),
     [-1.4535036087036133, 0.03664600849151611, -0.6296383738517761]),
    (lambda: OPT.RMSprop(0.1, momentum=0.5), [-1.1829137802124023, -0.20893675088882446, -0.5482168793678284]),
    (lambda: OPT.RMSprop(0.1, centered=True), [-0.5023789405822754, -0.7728959321975708, -0.09240526705980301]),
    (lambda: OPT.Adagrad(0.1), [0.6346341371536255, -1.6851837635040283, 0.3299000859260559]),
]


def _grad(t):
    return gt.constant([0.3 * t, -1.0, 2.0 if t <= 2 else 0.01])


def _run(opt, steps=5, dtype="float32"):
    v = gt.Variable(np.array([1.0, -2.0, 0.5], dtype=dtype))
    for t in range(1, steps + 1):
        opt.apply_gradients([(gt.cast(_grad(t), dtype), v)])
    return v


class _Calls:
    """Counts the native kernel's calls (and can turn the kernel off: `_plan` runs)."""

    def __init__(self, monkeypatch, off=False):
        self.kinds = []
        real = _base._optimizer_update

        def spy(kind, *args):
            self.kinds.append(kind)
            return real(kind, *args)

        monkeypatch.setattr(_base, "_optimizer_update", spy)
        if off:
            monkeypatch.setattr(_base.Optimizer, "_native", lambda self, v, g: None)


@pytest.mark.parametrize("make,want", KERAS)
def test_kernel_matches_keras(make, want, monkeypatch):
    calls = _Calls(monkeypatch)
    opt = make()
    v = _run(opt)
    np.testing.assert_allclose(v.numpy(), want, rtol=1e-6, atol=1e-7)
    assert len(calls.kinds) == 5  # one native call per variable and step
    assert int(opt.iterations.numpy()) == 5


@pytest.mark.parametrize("make,want", KERAS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_kernel_matches_the_op_chain(make, want, dtype, monkeypatch):
    # The fused kernel and the update as gt ops (`_plan`) agree to the last bit in
    # float32 (same operations, same order) and to rounding in float64; so do slots.
    fused_opt = make()
    fused = _run(fused_opt, dtype=dtype)
    with monkeypatch.context() as m:
        calls = _Calls(m, off=True)
        chain_opt = make()
        chain = _run(chain_opt, dtype=dtype)
        assert calls.kinds == []
    np.testing.assert_allclose(fused.numpy(), chain.numpy(), rtol=1e-6 if dtype == "float32" else 1e-13)
    a, b = fused_opt._slots.get(fused._unique_id, {}), chain_opt._slots.get(chain._unique_id, {})
    assert sorted(a) == sorted(b)
    for key in a:
        assert a[key].name == b[key].name
        np.testing.assert_allclose(a[key].numpy(), b[key].numpy(), rtol=1e-6 if dtype == "float32" else 1e-13)


@pytest.mark.parametrize("make,want", KERAS)
def test_traced_step_is_the_kernel(make, want, monkeypatch):
    calls = _Calls(monkeypatch)
    opt = make()
    v = gt.Variable([1.0, -2.0, 0.5])

    @gt.function
    def step(g):
        opt.apply_gradients([(g, v)])

    for t in range(1, 6):
        step(_grad(t))
    # One recorded kernel node per trace, which every call of the graph runs (as TF, a
    # first trace that created the optimizer's variables is traced again).
    assert len(calls.kinds) == step.experimental_get_tracing_count() <= 2
    np.testing.assert_allclose(v.numpy(), want, rtol=1e-6, atol=1e-7)
    assert int(opt.iterations.numpy()) == 5


def test_schedule_and_clipping_stay_python():
    sched = OPT.schedules.ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5)
    opt = OPT.SGD(sched, clipvalue=0.5)
    v = gt.Variable([1.0, 1.0])
    opt.apply_gradients([(gt.constant([2.0, -0.25]), v)])  # lr 0.1, g clipped to [0.5, -0.25]
    opt.apply_gradients([(gt.constant([2.0, -0.25]), v)])  # lr 0.05
    np.testing.assert_allclose(v.numpy(), [1.0 - 0.05 - 0.025, 1.0 + 0.025 + 0.0125], rtol=1e-6)


def test_sparse_gradients(monkeypatch):
    # Adam squares the rows before summing them (a row given twice adds two squares);
    # SGD with momentum densifies; both through the kernel, as `_plan` computes them.
    def run(make, off):
        with monkeypatch.context() as m:
            calls = _Calls(m, off=off)
            v = gt.Variable(np.arange(6, dtype=np.float32).reshape(3, 2))
            opt = make()
            for _ in range(3):
                g = gt.IndexedSlices(gt.constant([[1.0, 2.0], [3.0, -1.0]]), gt.constant([0, 0]), [3, 2])
                opt.apply_gradients([(g, v)])
            return v.numpy(), calls.kinds

    for make in (lambda: OPT.Adam(0.1), lambda: OPT.SGD(0.1, momentum=0.9)):
        fused, kinds = run(make, False)
        chain, none = run(make, True)
        assert len(kinds) == 3 and none == []
        np.testing.assert_allclose(fused, chain, rtol=1e-6)
        np.testing.assert_array_equal(fused[1:], np.arange(2, 6, dtype=np.float32).reshape(2, 2))


def test_float16_runs_the_kernel_and_subclasses_keep_the_op_chain(monkeypatch):
    calls = _Calls(monkeypatch)
    v = gt.Variable(np.array([1.0], np.float16))
    OPT.SGD(0.5).apply_gradients([(gt.constant([1.0], "float16"), v)])
    assert v.numpy().tolist() == [0.5] and v.dtype == gt.float16 and calls.kinds == ["sgd"]
    calls.kinds.clear()

    class Halving(OPT.SGD):
        def _plan(self, var, grad, lr, step, slot):
            return {}, "assign", var.read_value() / 2

    w = gt.Variable([4.0])
    Halving(0.1).apply_gradients([(gt.constant([1.0]), w)])
    assert w.numpy().tolist() == [2.0] and calls.kinds == []


def test_weight_decay_exclusion_reaches_the_kernel():
    opt = OPT.AdamW(0.1, weight_decay=0.5)
    a, b = gt.Variable([1.0], name="kernel"), gt.Variable([1.0], name="bias")
    opt.exclude_from_weight_decay(var_names=["bias"])
    opt.apply_gradients([(gt.constant([2.0]), a), (gt.constant([2.0]), b)])
    # Adam's first step is 0.1 for both; only `kernel` also loses 1 * 0.5 * 0.1.
    np.testing.assert_allclose([a.numpy()[0], b.numpy()[0]], [0.85, 0.9], rtol=1e-5)


def test_kernel_rejects_bad_input():
    v = gt.Variable([1.0, 2.0])
    with pytest.raises(ValueError, match="unknown optimizer rule"):
        _gradtape._optimizer_update("nope", [], v, gt.constant([1.0, 1.0]), [], 0.1, 1)
    with pytest.raises(ValueError, match="too few"):
        _gradtape._optimizer_update("adam", [0.9], v, gt.constant([1.0, 1.0]), [], 0.1, 1)
    with pytest.raises(gt.errors.InvalidArgumentError, match="slots"):
        _gradtape._optimizer_update("adagrad", [0.1, 1e-7], v, gt.constant([1.0, 1.0]), [], 0.1, 1)
    with pytest.raises(gt.errors.InvalidArgumentError, match="shape"):
        _gradtape._optimizer_update("sgd", [0.0, 0.0], v, gt.constant([1.0]), [], 0.1, 1)
    with pytest.raises((TypeError, gt.errors.InvalidArgumentError)):
        _gradtape._optimizer_update("sgd", [0.0, 0.0], gt.Variable([1, 2]), gt.constant([1, 1]), [], 0.1, 1)
    assert v.numpy().tolist() == [1.0, 2.0]
    assert _gradtape._optimizer_slots("rmsprop", [0.9, 0.5, 1e-7, 1.0]) == [
        ("velocity", 0.0), ("momentum", 0.0), ("average_gradient", 0.0)]
    assert _gradtape._optimizer_slots("adagrad", [0.25, 1e-7]) == [("accumulator", 0.25)]


@pytest.mark.parametrize("activation", [None, "relu", "sigmoid", "tanh", "softmax", "elu"])
def test_dense_forward_and_gradient(activation):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    layer = gt.layers.Dense(5, activation=activation)
    layer(gt.constant(x))
    k = rng.standard_normal((3, 5)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    layer.kernel.assign(k)
    layer.bias.assign(b)
    z = x @ k + b
    want = {
        None: z, "relu": np.maximum(z, 0), "sigmoid": 1 / (1 + np.exp(-z)), "tanh": np.tanh(z),
        "softmax": np.exp(z) / np.exp(z).sum(-1, keepdims=True), "elu": np.where(z > 0, z, np.expm1(z)),
    }[activation]
    with gt.GradientTape() as tape:
        y = layer(gt.constant(x))
        loss = gt.reduce_sum(y * y)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-6)
    gk, gb = tape.gradient(loss, [layer.kernel, layer.bias])
    # Finite differences of the loss in float64 for one kernel and one bias entry.
    def loss_of(k_, b_):
        z_ = x.astype(np.float64) @ k_ + b_
        y_ = {None: z_, "relu": np.maximum(z_, 0), "sigmoid": 1 / (1 + np.exp(-z_)), "tanh": np.tanh(z_),
              "softmax": np.exp(z_) / np.exp(z_).sum(-1, keepdims=True),
              "elu": np.where(z_ > 0, z_, np.expm1(z_))}[activation]
        return (y_ * y_).sum()
    h = 1e-6
    k64, b64 = k.astype(np.float64), b.astype(np.float64)
    dk = k64.copy()
    dk[1, 2] += h
    db = b64.copy()
    db[3] += h
    np.testing.assert_allclose(gk.numpy()[1, 2], (loss_of(dk, b64) - loss_of(k64, b64)) / h, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(gb.numpy()[3], (loss_of(k64, db) - loss_of(k64, b64)) / h, rtol=1e-3, atol=1e-3)


def test_dense_native_op_and_its_errors():
    x, k = gt.constant([[1.0, 2.0]]), gt.constant([[1.0], [-1.0]])
    assert _gradtape._dense(x, k, None, "linear").numpy().tolist() == [[-1.0]]
    assert _gradtape._dense(x, k, gt.constant([3.0]), "relu").numpy().tolist() == [[2.0]]
    with pytest.raises(ValueError, match="activation"):
        _gradtape._dense(x, k, None, "swish")
    with pytest.raises(gt.errors.InvalidArgumentError, match="kernel"):
        _gradtape._dense(gt.constant([[1.0, 2.0, 3.0]]), k, None, "linear")

    layer = gt.layers.Dense(1, use_bias=False)

    @gt.function
    def f(x):
        return layer(x)

    np.testing.assert_allclose(f(x).numpy(), x.numpy() @ layer.kernel.numpy(), rtol=1e-6)
