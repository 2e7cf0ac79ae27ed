"""``gt.autodiff.ForwardAccumulator``: TF's forward-mode semantics, after the cases of
TF's ``forwardprop_test.py`` (nesting with tapes and other accumulators, variables,
custom gradients, ``gt.function``, control flow, Hessians), with concrete values."""

import gc
import logging
import weakref

import numpy as np
import pytest

import gradtape as gt

ForwardAccumulator = gt.autodiff.ForwardAccumulator

_X11_35_DERIVATIVES = [
    1.1**3.5,
    3.5 * 1.1**2.5,
    3.5 * 2.5 * 1.1**1.5,
    3.5 * 2.5 * 1.5 * 1.1**0.5,
]


# ----------------------------------------------------------------------------- helpers
def _jvp(f, primals, tangents):
    with ForwardAccumulator(primals, tangents) as acc:
        out = f(*primals)
    return out, acc.jvp(out, unconnected_gradients=gt.UnconnectedGradients.ZERO)


def _jacfwd(f, primals):
    """The Jacobian of ``f`` at ``primals`` (a list), one forward pass per column:
    per primal, shape ``[out size, primal size]``."""
    flat = list(primals)
    masks = [gt.zeros_like(p) for p in flat]
    jac = []
    for i, p in enumerate(flat):
        n = int(np.prod(p.shape))
        cols = []
        for k in range(n):
            masks[i] = gt.reshape(gt.one_hot(k, n, dtype=p.dtype), p.shape)
            _, t = _jvp(f, flat, list(masks))
            cols.append(gt.reshape(t, [-1]))
        jac.append(gt.stack(cols, axis=1))
        masks[i] = gt.zeros_like(p)
    return jac


def _jacback(f, primals):
    flat = list(primals)
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(flat)
        out = f(*flat)
    jac = tape.jacobian(out, flat, unconnected_gradients=gt.UnconnectedGradients.ZERO)
    return [gt.reshape(j, [int(np.prod(out.shape)), int(np.prod(p.shape))]) for j, p in zip(jac, flat)]


def _jacnum(f, primals, delta=1e-3):
    xs = [p.numpy().astype(np.float64) for p in primals]

    def value(zs):
        return np.asarray(f(*[gt.constant(z.astype(p.dtype.name)) for z, p in zip(zs, primals)]).numpy(),
                          dtype=np.float64).reshape(-1)

    jac = []
    for i, x in enumerate(xs):
        cols = []
        for k in range(x.size):
            e = np.zeros(x.size)
            e[k] = delta
            plus = [z if j != i else z + e.reshape(z.shape) for j, z in enumerate(xs)]
            minus = [z if j != i else z - e.reshape(z.shape) for j, z in enumerate(xs)]
            cols.append((value(plus) - value(minus)) / (2 * delta))
        jac.append(np.stack(cols, axis=1))
    return jac


def _grad(f, argnums=0):
    def g(*params):
        with gt.GradientTape() as tape:
            tape.watch(list(params))
            out = f(*params)
        return tape.gradient(out, params[argnums], unconnected_gradients=gt.UnconnectedGradients.ZERO)

    return g


def _hvp(f, primals, tangents):
    """Forward-over-back Hessian-vector product."""
    with ForwardAccumulator(primals, tangents) as acc:
        with gt.GradientTape() as tape:
            tape.watch(primals)
            out = f(*primals)
        assert out.shape == ()
        return acc.jvp(tape.gradient(out, primals))


def _test_gradients(f, primals, order, rtol=1e-2, atol=1e-6):
    """Forward, backward and numeric Jacobians of ``f``'s derivatives of orders
    ``0 .. order-1`` agree."""
    if order > 1:
        _test_gradients(_grad(f), primals, order - 1, rtol, atol)
    num = _jacnum(f, primals)
    back = [j.numpy() for j in _jacback(f, primals)]
    fwd = [j.numpy() for j in _jacfwd(f, primals)]
    for n, b, w in zip(num, back, fwd):
        np.testing.assert_allclose(b, n, rtol=rtol, atol=atol)
        np.testing.assert_allclose(w, n, rtol=rtol, atol=atol)
        np.testing.assert_allclose(w, b, rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------------- basics
def test_jvp_manual():
    primal, tangent = _jvp(gt.sin, (gt.constant(0.1),), (gt.constant(0.2),))
    np.testing.assert_allclose(primal.numpy(), np.sin(np.float32(0.1)), rtol=1e-6)
    np.testing.assert_allclose(tangent.numpy(), np.cos(0.1) * 0.2, rtol=1e-6)


def test_multiple_watches_add():
    x = gt.constant(-2.0)
    with pytest.raises(ValueError, match="multiple times"):
        with ForwardAccumulator([x, x], [1.0, 2.0]):
            pass
    with ForwardAccumulator([x], [3.0]) as acc:
        assert float(acc.jvp(x)) == 3.0
        acc._watch(x, gt.constant(10.0))
        assert float(acc.jvp(x)) == 13.0
        acc._watch(x, gt.constant(11.0))
        assert float(acc.jvp(x)) == 24.0
        y = gt.constant(3.0) * x
    assert float(acc.jvp(x)) == 24.0
    assert float(acc.jvp(y)) == 72.0


def test_reenter():
    x = gt.constant(-2.0)
    with ForwardAccumulator(x, 1.5) as acc:
        assert float(acc.jvp(x)) == 1.5
        y = 4.0 * x
        assert float(acc.jvp(y)) == 6.0
        with pytest.raises(ValueError, match="already recording"):
            with acc:
                pass
        # The failed re-entry left it recording.
        y2 = 2.0 * x
        assert float(acc.jvp(y2)) == 3.0
    z = 4.0 * x
    assert acc.jvp(z) is None
    with acc:
        yy = y * y
    assert float(acc.jvp(yy)) == 6.0 * -8.0 * 2.0


def test_dead_tensors_are_not_kept_alive():
    x = gt.ones([100])
    x_weak = weakref.ref(x)
    tangent = gt.constant(np.zeros(100, np.float32))
    tangent_weak = weakref.ref(tangent)
    with ForwardAccumulator(x, tangent) as acc:
        derived = gt.constant(2.0) * x
        del tangent
        np.testing.assert_array_equal(acc.jvp(x).numpy(), np.zeros(100))
        del x
        assert x_weak() is None
        assert tangent_weak() is None
        derived_weak = weakref.ref(derived)
        derived_jvp = acc.jvp(derived)
        derived_jvp_weak = weakref.ref(derived_jvp)
        del derived, derived_jvp
        assert derived_weak() is None
        assert derived_jvp_weak() is None


def test_unconnected_gradients():
    x = gt.constant(-1.0)
    with ForwardAccumulator(x, 0.1) as acc:
        assert float(acc.jvp(x, unconnected_gradients="zero")) == pytest.approx(0.1)
        assert float(acc.jvp(x, unconnected_gradients="none")) == pytest.approx(0.1)
        y = gt.constant(-2.0)
        assert float(acc.jvp(y, unconnected_gradients="zero")) == 0.0
        assert acc.jvp(y, unconnected_gradients=gt.UnconnectedGradients.ZERO).dtype == gt.float32
        assert acc.jvp(y, unconnected_gradients="none") is None
        with pytest.raises(ValueError):
            acc.jvp(y, unconnected_gradients="sometimes")


def test_nested_structures():
    a, b = gt.constant([1.0, 2.0]), gt.constant(3.0)
    primals = {"a": a, "b": (b,)}
    tangents = {"a": gt.constant([1.0, -1.0]), "b": (gt.constant(0.5),)}
    with ForwardAccumulator(primals, tangents) as acc:
        y = a * b
        z = gt.reduce_sum(a) + b
    out = acc.jvp({"y": y, "zs": [z, a]})
    np.testing.assert_allclose(out["y"].numpy(), [3.0 + 0.5, -3.0 + 1.0])
    assert float(out["zs"][0]) == pytest.approx(0.5)
    np.testing.assert_allclose(out["zs"][1].numpy(), [1.0, -1.0])
    with pytest.raises(ValueError):
        ForwardAccumulator([a, b], [gt.constant([1.0, 1.0])])


def test_bad_tangents():
    x = gt.constant([1.0, 2.0])
    with pytest.raises((ValueError, gt.errors.InvalidArgumentError)):
        ForwardAccumulator(x, gt.constant([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError):
        ForwardAccumulator("x", 1.0)
    with pytest.raises(TypeError):
        ForwardAccumulator(x, gt.constant([1.0, 2.0])).jvp("x")


def test_integer_primals_give_none(caplog):
    i = gt.constant([1, 2])
    x = gt.constant(2.0)
    with caplog.at_level(logging.WARNING, logger="gradtape"):
        with ForwardAccumulator([i, x], [gt.constant([1, 1]), 1.0]) as acc:
            y = gt.cast(i, gt.float32) * x
            k = i * 2
    assert "floating" in caplog.text
    assert acc.jvp(i) is None
    assert acc.jvp(k) is None
    np.testing.assert_allclose(acc.jvp(y).numpy(), [1.0, 2.0])


def test_op_with_no_trainable_outputs():
    v = gt.Variable(1.0)
    with ForwardAccumulator(v, 11.0) as acc:
        v.assign_sub(0.5)
        assert float(v) == 0.5
        assert float(acc.jvp(v)) == 11.0


def test_variable_watched():
    v = gt.Variable([1.0, 2.0, 3.0])
    with ForwardAccumulator(v, gt.constant([0.1, -0.2, 0.3])) as acc:
        np.testing.assert_allclose(acc.jvp(v).numpy(), [0.1, -0.2, 0.3])
        x = v * 2.0
        np.testing.assert_allclose(acc.jvp(x).numpy(), [0.2, -0.4, 0.6])
        x2 = v + 0.1
        np.testing.assert_allclose(acc.jvp(x2).numpy(), [0.1, -0.2, 0.3])


def test_exception_in_custom_gradient_not_swallowed():
    @gt.custom_gradient
    def f(unused_x):
        def grad(unused_dy):
            raise ValueError("test_error_string")

        return gt.constant(1.0), grad

    c = gt.constant(1.0)
    with ForwardAccumulator(c, gt.constant(2.0)):
        with pytest.raises(ValueError, match="test_error_string"):
            f(c)


# ----------------------------------------------------------------------------- numbers
def test_numeric_higher_order():
    def f(x):
        pointwise = gt.sin(x) * gt.tan(x)
        return gt.reduce_prod(pointwise + gt.reduce_sum(pointwise), axis=1)

    _test_gradients(f, [gt.constant([[2.0, 3.0], [1.0, 4.0]], dtype=gt.float64)], order=3)


def test_custom_gradient():
    @gt.custom_gradient
    def f(x):
        def grad(dy):
            return dy * gt.cos(x)

        return gt.constant(np.sin(x.numpy())), grad

    x = gt.constant([1.0, 2.0], dtype=gt.float64)
    # Forward mode through a custom gradient transposes its gradient function (TF).
    _, t = _jvp(f, [x], [gt.constant([0.5, 2.0], dtype=gt.float64)])
    np.testing.assert_allclose(t.numpy(), np.cos([1.0, 2.0]) * [0.5, 2.0])
    _test_gradients(f, [x], order=3)


@pytest.mark.parametrize(
    "value,op_fn",
    [(-0.5, gt.nn.elu), ([0.5], gt.nn.elu), (0.5, gt.nn.swish), ([-0.5], gt.nn.swish)],
)
def test_elementwise_nn_ops(value, op_fn):
    _test_gradients(op_fn, [gt.constant(value, dtype=gt.float64)], order=3)


def _deterministic(layer):
    for v in layer.trainable_variables:
        n = int(np.prod(v.shape))
        v.assign(np.arange(-1.0, 1.0, 2.0 / n)[:n].reshape(v.shape).astype(np.float32))


def test_dense_layer():
    layer = gt.layers.Dense(5)
    x = gt.constant([[0.1]])
    layer(x)
    _deterministic(layer)
    _test_gradients(layer, [x], order=2, atol=1e-5)


@pytest.mark.parametrize("training", [True, False])
def test_batch_normalization(training):
    layer = gt.layers.BatchNormalization()
    x = gt.constant([[0.1], [0.2], [-0.3]])
    layer(x, training=False)
    _test_gradients(lambda x: layer(x, training=training), [x], order=2, atol=1e-3)


def test_batch_normalization_parameters_forward_equals_backward():
    layer = gt.layers.BatchNormalization()
    x = gt.constant([[0.1], [0.2], [-0.3]])
    layer(x, training=True)
    params = [x] + list(layer.trainable_variables)
    back = _jacback(lambda *a: layer(a[0], training=True), params)
    fwd = _jacfwd(lambda *a: layer(a[0], training=True), params)
    for b, f in zip(back, fwd):
        np.testing.assert_allclose(f.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("order,expected", list(enumerate(_X11_35_DERIVATIVES)))
def test_higher_order_pure_forward(order, expected):
    def forwardgrad(f):
        def g(primal):
            with ForwardAccumulator(primal, gt.constant(1.0)) as acc:
                out = f(primal)
            return acc.jvp(out)

        return g

    f = lambda x: x**3.5  # noqa: E731
    for _ in range(order):
        f = forwardgrad(f)
    assert float(f(gt.constant(1.1))) == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("decorator", [gt.function, lambda f: f], ids=["function", "eager"])
def test_grad_pure_forward(decorator):
    @decorator
    def f(x):
        return x**3.5

    primal = gt.constant(1.1)
    with ForwardAccumulator(primal, gt.constant(1.0)) as outer:
        with ForwardAccumulator(primal, gt.constant(1.0)) as acc:
            out = f(primal)
    inner_jvp = acc.jvp(out)
    outer_jvp = outer.jvp(inner_jvp)
    assert float(out) == pytest.approx(1.1**3.5, rel=1e-6)
    assert float(inner_jvp) == pytest.approx(3.5 * 1.1**2.5, rel=1e-6)
    assert float(outer_jvp) == pytest.approx(3.5 * 2.5 * 1.1**1.5, rel=1e-6)
    # Inner accumulators never see the outer one's tangents.
    assert acc.jvp(outer.jvp(out)) is None


def test_function_grad_in_function_pure_forward():
    @gt.function
    def take_gradients(primal):
        @gt.function
        def f(x):
            return x**3.5

        with ForwardAccumulator(primal, gt.constant(1.0)) as outer:
            with ForwardAccumulator(primal, gt.constant(1.0)) as acc:
                out = f(primal)
        inner_jvp = acc.jvp(out)
        outer_jvp = outer.jvp(inner_jvp)
        return out, inner_jvp, outer_jvp

    for x in (1.1, 1.3):
        out, inner_jvp, outer_jvp = take_gradients(gt.constant(x))
        assert float(out) == pytest.approx(x**3.5, rel=1e-6)
        assert float(inner_jvp) == pytest.approx(3.5 * x**2.5, rel=1e-6)
        assert float(outer_jvp) == pytest.approx(3.5 * 2.5 * x**1.5, rel=1e-6)


def test_function_grad():
    @gt.function
    def f(x):
        return gt.reduce_prod(gt.tanh(x) ** 2)

    _test_gradients(f, [gt.constant([1.0, 2.0], dtype=gt.float64)], order=3)


def test_reusing_jvp():
    rng = np.random.default_rng(0)
    m1 = gt.constant(rng.uniform(size=(16, 40)).astype(np.float32))
    m2 = gt.identity(m1)
    t1 = gt.constant(rng.uniform(size=(16, 40)).astype(np.float32))
    t2 = gt.constant(rng.uniform(size=(16, 40)).astype(np.float32))
    matmul = gt.function(gt.matmul)
    with ForwardAccumulator(primals=[m1, m2], tangents=[t1, t2]) as acc:
        r1 = matmul(m1, m1, transpose_b=True)
        r2 = matmul(m2, m2, transpose_b=True)

    def expected(m, t):
        return gt.matmul(t, m, transpose_b=True) + gt.matmul(m, t, transpose_b=True)

    np.testing.assert_allclose(r1.numpy(), r2.numpy())
    np.testing.assert_allclose(acc.jvp(r1).numpy(), expected(m1, t1).numpy(), rtol=1e-5)
    np.testing.assert_allclose(acc.jvp(r2).numpy(), expected(m2, t2).numpy(), rtol=1e-5)


# ----------------------------------------------------------------------------- with tapes
def _tanh_prod(x):
    return gt.reduce_prod(gt.tanh(x) ** 2)


def test_hvp_correctness():
    primals = gt.constant([1.0, 2.0, 3.0], dtype=gt.float64)
    tangents = gt.constant([3.0, 4.0, 5.0], dtype=gt.float64)
    (eager,) = _hvp(_tanh_prod, (primals,), (tangents,))
    (traced,) = gt.function(_hvp)(_tanh_prod, (primals,), (tangents,))
    with gt.GradientTape(persistent=True) as g:
        g.watch(primals)
        with gt.GradientTape() as gg:
            gg.watch(primals)
            out = _tanh_prod(primals)
        grad = gt.unstack(gg.gradient(out, primals))
    hessian = gt.stack([g.gradient(grad[i], primals) for i in range(3)], axis=0)
    want = gt.tensordot(hessian, tangents, axes=1).numpy()
    np.testing.assert_allclose(eager.numpy(), want, rtol=1e-10)
    np.testing.assert_allclose(traced.numpy(), want, rtol=1e-10)


@pytest.mark.parametrize("forward_first", [True, False])
def test_forward_over_backward_inner_tape_ignores_tangents(forward_first):
    # Watching depends on nesting, not creation order.
    c = gt.constant(1.0)
    if forward_first:
        acc_obj = ForwardAccumulator(c, 0.1)
        tape_obj = gt.GradientTape()
    else:
        tape_obj = gt.GradientTape()
        acc_obj = ForwardAccumulator(c, 0.1)
    try:
        gc.disable()
        with tape_obj:
            pass
        with acc_obj as acc:
            with tape_obj as tape:
                tape.watch(c)
                d = gt.cos(c)
                e = gt.cos(acc.jvp(d))
                gt.cos(e)
                weak_e = weakref.ref(e)
                del e
                assert weak_e() is None
            assert tape.gradient(acc.jvp(d), c) is None
    finally:
        gc.enable()


@pytest.mark.parametrize("forward_first", [True, False])
def test_backward_over_forward(forward_first):
    c = gt.constant(1.0)
    if forward_first:
        acc_obj = ForwardAccumulator(c, 0.1)
        tape_obj = gt.GradientTape()
    else:
        tape_obj = gt.GradientTape()
        acc_obj = ForwardAccumulator(c, 0.1)
    with tape_obj as tape:
        with acc_obj as acc:
            tape.watch(c)
            d = gt.cos(c)
        got = tape.gradient(acc.jvp(d), c)
    assert float(got) == pytest.approx(-0.1 * np.cos(1.0), rel=1e-6)


def test_forward_over_backward_docstring_example():
    v = gt.Variable([1.0, 2.0])
    with ForwardAccumulator(v, gt.constant([1.0, 0.0])) as acc:
        with gt.GradientTape() as tape:
            y = gt.reduce_sum(v**3.0)
        backward = tape.gradient(y, v)
    np.testing.assert_allclose(backward.numpy(), [3.0, 12.0])
    np.testing.assert_allclose(acc.jvp(backward).numpy(), [6.0, 0.0])


def test_tape_stop_recording_does_not_stop_the_accumulator():
    c = gt.constant(1.0)
    with ForwardAccumulator(c, gt.constant(2.0)) as acc:
        with gt.GradientTape() as tape:
            tape.watch(c)
            with tape.stop_recording():
                d = c * 2.0
        assert tape.gradient(d, c) is None
    assert float(acc.jvp(d)) == 4.0


@pytest.mark.parametrize("decorator", [gt.function, lambda f: f], ids=["function", "eager"])
def test_variables_hvp(decorator):
    first = gt.layers.Dense(6)
    norm = gt.layers.BatchNormalization()
    second = gt.layers.Dense(1)
    x = gt.constant([[-0.5, 1.0], [0.5, -1.0]])
    target = gt.constant([[-1.0], [2.0]])

    def model(x):
        return second(gt.nn.relu(norm(gt.nn.relu(first(x)), training=True)))

    model(x)
    variables = first.trainable_variables + norm.trainable_variables + second.trainable_variables

    def loss():
        return gt.reduce_sum((model(x) - target) ** 2.0)

    @decorator
    def compute():
        with gt.GradientTape() as tape:
            out = loss()
        vector = tape.gradient(out, variables)
        (fwd,) = _hvp(lambda unused: loss(), [variables], [vector])
        with gt.GradientTape(persistent=True) as tape:
            tape.watch(variables)
            out = loss()
            first_grads = tape.gradient(out, variables)
        back = tape.gradient(first_grads, variables, output_gradients=vector)
        return fwd, back

    fwd, back = compute()
    for a, b in zip(fwd, back):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-4)


# ----------------------------------------------------------------------------- gt.function
def test_variable_read_in_function():
    v = gt.Variable(1.0)
    with ForwardAccumulator(v, 11.0) as acc:

        @gt.function
        def f():
            return v.read_value(), 2.0 * v.read_value()

        result = f()
        np.testing.assert_allclose([float(r) for r in result], [1.0, 2.0])
        np.testing.assert_allclose([float(r) for r in acc.jvp(result)], [11.0, 22.0])
        # A second call runs the graph: the accumulator sees its ops as eagerly.
        result = f()
        np.testing.assert_allclose([float(r) for r in acc.jvp(result)], [11.0, 22.0])


def test_variable_watched_in_function():
    v = gt.Variable([1.0, 2.0, 3.0])

    @gt.function
    def compute_jvps():
        with ForwardAccumulator(v, gt.constant([0.1, -0.2, 0.3])) as acc:
            x = v * 2.0
            x2 = v + 0.1
        return acc.jvp((v, x, x2))

    for _ in range(2):
        v_jvp, x_jvp, x2_jvp = compute_jvps()
        np.testing.assert_allclose(v_jvp.numpy(), [0.1, -0.2, 0.3])
        np.testing.assert_allclose(x_jvp.numpy(), [0.2, -0.4, 0.6])
        np.testing.assert_allclose(x2_jvp.numpy(), [0.1, -0.2, 0.3])


def test_argument_unused():
    v = gt.constant(1.0)
    with ForwardAccumulator(v, 11.0) as acc:

        @gt.function
        def _f(x):
            del x
            return gt.constant(1.0)

        result = _f(v)
        assert float(result) == 1.0
        assert acc.jvp(result) is None


def test_function_jvp_equals_eager():
    def f(x, w):
        h = gt.tanh(gt.matmul(x, w))
        return gt.reduce_sum(h * h, axis=1) + gt.reduce_max(h, axis=1)

    rng = np.random.default_rng(1)
    x = gt.constant(rng.standard_normal((3, 4)))
    w = gt.constant(rng.standard_normal((4, 2)))
    tx = gt.constant(rng.standard_normal((3, 4)))
    tw = gt.constant(rng.standard_normal((4, 2)))
    _, eager = _jvp(f, [x, w], [tx, tw])
    traced_f = gt.function(f)
    for _ in range(2):
        _, traced = _jvp(traced_f, [x, w], [tx, tw])
        np.testing.assert_allclose(traced.numpy(), eager.numpy(), rtol=1e-12)


@gt.function
def _has_loop(iters, y):
    ret = 0.0
    for i in gt.range(iters):
        ret += y * gt.cast(i, gt.float32)
    return ret


@gt.function
def _has_cond(k, y):
    if k > 1:
        ret = 3.0 * y
    else:
        ret = 0.0 * y
    return ret


@gt.function
def _fprop_while(iters, y):
    with ForwardAccumulator(y, 1.0) as acc:
        ret = 0.0
        for i in gt.range(iters):
            ret += y * gt.cast(i, gt.float32)
    return acc.jvp(ret)


@gt.function
def _fprop_cond(k, y):
    with ForwardAccumulator(y, 1.0) as acc:
        if k > 1:
            ret = 3.0 * y
        else:
            ret = 0.0 * y
    return acc.jvp(ret)


def test_of_function_while():
    y = gt.constant(1.0)
    with ForwardAccumulator(y, 1.0) as acc:
        assert float(acc.jvp(_has_loop(gt.constant(5), y))) == 10.0


def test_of_function_cond():
    y = gt.constant(1.0)
    with ForwardAccumulator(y, 1.0) as acc:
        assert float(acc.jvp(_has_cond(gt.constant(5), y))) == 3.0
        assert float(acc.jvp(_has_cond(gt.constant(0), y))) == 0.0


def test_in_function_while():
    assert float(_fprop_while(gt.constant(5), gt.constant(1.0))) == 10.0
    assert float(_fprop_while(gt.constant(3), gt.constant(1.0))) == 3.0


def test_in_function_cond():
    assert float(_fprop_cond(gt.constant(5), gt.constant(1.0))) == 3.0
    assert float(_fprop_cond(gt.constant(0), gt.constant(1.0))) == 0.0


# ----------------------------------------------------------------------------- Hessians
def _forward_over_back_hessian(f, params):
    """Rows of the Hessian of ``f(*params)``: per param, shape ``[P, param size]``."""
    sizes = [int(np.prod(p.shape)) for p in params]
    total = sum(sizes)
    rows = []
    for k in range(total):
        onehot = np.zeros(total, np.float32)
        onehot[k] = 1.0
        parts = np.split(onehot, np.cumsum(sizes)[:-1])
        tangents = [gt.constant(v.reshape(p.shape)) for v, p in zip(parts, params)]
        rows.append(_hvp(f, params, tangents))
    return [gt.stack([r[i] for r in rows]) for i in range(len(params))]


def test_hessian_1d():
    m = 4
    rng = np.random.RandomState([1, 2, 3])
    mat_value = rng.randn(m, m).astype("float32")
    x_value = rng.randn(m).astype("float32")
    mat = gt.Variable(mat_value)

    def f(x):
        return gt.reduce_sum(x[:, None] * mat * x[None, :])

    (hess,) = _forward_over_back_hessian(f, [gt.constant(x_value)])
    np.testing.assert_allclose(hess.numpy(), mat_value + mat_value.T, rtol=1e-5, atol=1e-5)
    (hess,) = gt.function(_forward_over_back_hessian)(f, [gt.constant(x_value)])
    np.testing.assert_allclose(hess.numpy(), mat_value + mat_value.T, rtol=1e-5, atol=1e-5)


def test_hessian_of_variables():
    model = gt.layers.Dense(1)
    x = gt.constant([[-0.5, 1.0], [0.5, -1.0]])
    target = gt.constant([[-1.0], [2.0]])
    model(x)

    def loss(*unused):
        return gt.reduce_sum((model(x) - target) ** 2.0)

    kernel_hess, bias_hess = _forward_over_back_hessian(loss, [model.kernel, model.bias])
    assert tuple(kernel_hess.shape) == (3, 2, 1)
    assert tuple(bias_hess.shape) == (3, 1)
    full = np.concatenate([kernel_hess.numpy().reshape(3, 2), bias_hess.numpy()], axis=1)
    np.testing.assert_allclose(full, full.T, atol=1e-6)
    # Loss = sum((x k + b - t)^2): H = 2 [x 1]^T [x 1].
    a = np.concatenate([x.numpy(), np.ones((2, 1), np.float32)], axis=1)
    np.testing.assert_allclose(full, 2 * a.T @ a, rtol=1e-6)


# ----------------------------------------------------------------------------- functional forms
def test_functional_jvp():
    a, b = gt.constant([1.0, 2.0]), gt.constant([3.0, 4.0])
    y, t = gt.autodiff.jvp(lambda a, b: a * b, (a, b), (gt.constant([1.0, 0.0]), gt.constant([0.0, 1.0])))
    np.testing.assert_allclose(y.numpy(), [3.0, 8.0])
    np.testing.assert_allclose(t.numpy(), [3.0, 2.0])
    # One tensor is one argument; an output that does not depend on it gets zeros.
    y, t = gt.autodiff.jvp(lambda x: (gt.sin(x), gt.constant(2.0)), a, gt.ones_like(a))
    np.testing.assert_allclose(t[0].numpy(), np.cos([1.0, 2.0]), rtol=1e-6)
    assert float(t[1]) == 0.0
    with pytest.raises(TypeError):
        gt.autodiff.jvp(3, (a,), (a,))
    with pytest.raises(ValueError):
        gt.autodiff.jvp(gt.sin, (a, b), (a,))


def test_functional_vjp():
    a, b = gt.constant([1.0, 2.0]), gt.constant([3.0, 4.0])
    y, vjp_fn = gt.autodiff.vjp(lambda a, b: a * b, a, b)
    np.testing.assert_allclose(y.numpy(), [3.0, 8.0])
    for _ in range(2):  # any number of calls
        ga, gb = vjp_fn(gt.constant([1.0, -1.0]))
        np.testing.assert_allclose(ga.numpy(), [3.0, -4.0])
        np.testing.assert_allclose(gb.numpy(), [1.0, -2.0])
    _, vjp_fn = gt.autodiff.vjp(lambda a, b: a * 2.0, a, b)
    ga, gb = vjp_fn(gt.ones_like(a))
    np.testing.assert_allclose(gb.numpy(), [0.0, 0.0])


def test_functional_linearize_matches_jvp():
    rng = np.random.default_rng(3)
    x = gt.constant(rng.standard_normal((3, 4)))
    w = gt.constant(rng.standard_normal((4, 2)))

    def f(x, w):
        return gt.tanh(x @ w), gt.reduce_sum(x)

    y, f_jvp = gt.autodiff.linearize(f, x, w)
    for _ in range(3):
        tx = gt.constant(rng.standard_normal((3, 4)))
        tw = gt.constant(rng.standard_normal((4, 2)))
        got = f_jvp(tx, tw)
        _, want = gt.autodiff.jvp(f, (x, w), (tx, tw))
        np.testing.assert_allclose(got[0].numpy(), want[0].numpy(), rtol=1e-10)
        np.testing.assert_allclose(float(got[1]), float(want[1]), rtol=1e-10)
    with pytest.raises(ValueError):
        f_jvp(tx)


@pytest.mark.parametrize("mode", ["forward_over_reverse", "reverse_over_reverse"])
def test_hessian_vector_product_modes(mode):
    x = gt.constant([1.0, 2.0, 3.0], dtype=gt.float64)
    v = gt.constant([3.0, 4.0, 5.0], dtype=gt.float64)
    got = gt.autodiff.hessian_vector_product(_tanh_prod, x, v, mode=mode)
    want = gt.autodiff.hessian(_tanh_prod, x).numpy() @ v.numpy()
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)
    # f independent of x: zeros.
    z = gt.autodiff.hessian_vector_product(lambda x: gt.constant(1.0, dtype=gt.float64), x, v, mode=mode)
    np.testing.assert_array_equal(z.numpy(), [0.0, 0.0, 0.0])


def test_hessian_vector_product_bad_mode():
    with pytest.raises(ValueError, match="mode"):
        gt.autodiff.hessian_vector_product(gt.sin, gt.constant([1.0]), gt.constant([1.0]), mode="sideways")


def _vectorized_hessian(f, x, use_pfor):
    """TF's ``_forward_over_back_hessian`` with ``map_fn`` or ``vectorized_map`` over
    one-hot tangents: an accumulator and a tape inside the mapped function."""
    n = int(np.prod(x.shape))

    def row(i):
        (h,) = _hvp(f, [x], [gt.reshape(gt.one_hot(i, n), x.shape)])
        return h

    if use_pfor:
        return gt.vectorized_map(row, gt.range(n))
    return gt.map_fn(row, gt.range(n), dtype=gt.float32)


@pytest.mark.parametrize("use_pfor", [True, False], ids=["vectorized_map", "map_fn"])
@pytest.mark.parametrize("traced", [True, False], ids=["function", "eager"])
def test_hessian_with_mapped_accumulators(use_pfor, traced):
    mat_value = np.array([[1.0, 2.0], [0.5, -1.0]], np.float32)
    mat = gt.Variable(mat_value)

    def f(x):
        return gt.reduce_sum(x[:, None] * mat * x[None, :])

    def hess():
        return _vectorized_hessian(f, gt.constant([1.0, 2.0]), use_pfor)

    got = (gt.function(hess) if traced else hess)()
    np.testing.assert_allclose(got.numpy(), mat_value + mat_value.T)


def test_tape_in_map_fn_inside_function():
    # A tape made inside a loop body of a traced function (found with forward mode: the
    # trace's example run of the loop had no frame for the tapes it makes).
    x = gt.constant([1.0, 2.0])

    def row(i):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = gt.reduce_sum(x * x * gt.cast(i, gt.float32))
        return tape.gradient(y, x)

    got = gt.function(lambda: gt.map_fn(row, gt.range(2), dtype=gt.float32))()
    np.testing.assert_allclose(got.numpy(), [[0.0, 0.0], [2.0, 4.0]])
