"""A gt.function call under tapes is ONE node of each tape that records it, whose
gradient rule is the call's own backward sweep: values and gradients equal eager, at
any order, for any arrangement of nested and persistent tapes."""

import numpy as np
import pytest

import gradtape as gt

RTOL = 1e-12


def _mlp(seed):
    rng = np.random.default_rng(seed)
    w1 = gt.Variable(rng.standard_normal((4, 5)), dtype=gt.float64)
    b1 = gt.Variable(rng.standard_normal(5), dtype=gt.float64)
    w2 = gt.Variable(rng.standard_normal((5, 1)), dtype=gt.float64)
    x = gt.constant(rng.standard_normal((3, 4)), dtype=gt.float64)

    def f(x):
        h = gt.tanh(gt.matmul(x, w1) + b1)
        return gt.reduce_sum(gt.exp(gt.sin(gt.matmul(h, w2))) * 0.5)

    return f, x, [w1, b1, w2]


def _np(t):
    return None if t is None else t.numpy()


def _close(a, b, atol=1e-300):
    assert (a is None) == (b is None)
    if a is not None:
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=RTOL, atol=atol)


def test_a_call_is_one_node_with_the_eager_values_and_gradients():
    f, x, ws = _mlp(0)
    traced = gt.function(f)
    for _ in range(3):  # the trace, then calls of the graph
        with gt.GradientTape() as te:
            te.watch(x)
            ye = f(x)
        with gt.GradientTape() as tt:
            tt.watch(x)
            yt = traced(x)
        assert tt._num_nodes == 1
        assert te._num_nodes > 10
        _close(ye.numpy(), yt.numpy())
        for a, b in zip(te.gradient(ye, [x] + ws), tt.gradient(yt, [x] + ws)):
            _close(_np(a), _np(b))


def test_the_node_follows_the_tapes_watches():
    f, x, ws = _mlp(1)
    traced = gt.function(f)
    traced(x)
    # Variables only (read while the tape watches accessed variables).
    with gt.GradientTape() as te:
        ye = f(x)
    with gt.GradientTape() as tt:
        yt = traced(x)
    assert tt._num_nodes == 1
    assert [v.name for v in tt.watched_variables()] == [v.name for v in te.watched_variables()]
    ge, gt_ = te.gradient(ye, [x] + ws), tt.gradient(yt, [x] + ws)
    assert ge[0] is None and gt_[0] is None  # x: a constant no tape watched (TF: None)
    for a, b in zip(ge, gt_):
        _close(_np(a), _np(b))
    # watch_accessed_variables=False and only x watched: no gradient for the variables.
    with gt.GradientTape(watch_accessed_variables=False) as tt:
        tt.watch(x)
        yt = traced(x)
    assert tt._num_nodes == 1
    g = tt.gradient(yt, [x] + ws)
    assert g[1:] == [None, None, None]
    with gt.GradientTape(watch_accessed_variables=False) as te:
        te.watch(x)
        ye = f(x)
    _close(te.gradient(ye, x).numpy(), g[0].numpy())
    # Nothing watched: nothing recorded.
    with gt.GradientTape(watch_accessed_variables=False) as tt:
        traced(x)
    assert tt._num_nodes == 0
    # An explicitly watched non-trainable variable.
    v = gt.Variable([1.5, -2.0], dtype=gt.float64, trainable=False)
    h = gt.function(lambda x: gt.reduce_sum(gt.sin(v * x)))
    xv = gt.constant([0.3, 0.7], dtype=gt.float64)
    h(xv)
    with gt.GradientTape() as tt:
        tt.watch(v)
        y = h(xv)
    assert tt._num_nodes == 1
    _close(np.cos(np.array([1.5, -2.0]) * [0.3, 0.7]) * [0.3, 0.7], tt.gradient(y, v).numpy())


def test_a_training_step_with_its_own_tape_is_one_node():
    def make():
        rng = np.random.default_rng(3)
        w = gt.Variable(rng.standard_normal((3, 2)), dtype=gt.float64)
        return w

    def step_of(w):
        def step(x):
            with gt.GradientTape() as inner:
                loss = gt.reduce_sum(gt.tanh(gt.matmul(x, w)) ** 2)
            g = inner.gradient(loss, w)
            w.assign_sub(0.1 * g)
            return loss * gt.reduce_sum(x)

        return step

    x = gt.constant(np.random.default_rng(4).standard_normal((2, 3)), dtype=gt.float64)
    we, wt = make(), make()
    eager, traced = step_of(we), gt.function(step_of(wt))
    for _ in range(3):
        with gt.GradientTape() as te:
            te.watch(x)
            le = eager(x)
        with gt.GradientTape() as tt:
            tt.watch(x)
            lt = traced(x)
        assert tt._num_nodes == 1
        _close(le.numpy(), lt.numpy())
        _close(we.numpy(), wt.numpy())
        _close(te.gradient(le, x).numpy(), tt.gradient(lt, x).numpy())


def test_jacobians_through_a_call_node():
    w = gt.Variable([[0.5, -1.0, 2.0], [0.25, 1.5, -0.75]], dtype=gt.float64)
    f = lambda x: gt.sin(gt.matmul(x, w)) * x[:, :1]  # noqa: E731
    traced = gt.function(f)
    x = gt.constant([[1.0, 2.0], [-0.5, 0.3], [0.2, 0.1]], dtype=gt.float64)
    traced(x)
    for kind in ("jacobian", "batch_jacobian"):
        with gt.GradientTape() as te:
            te.watch(x)
            ye = f(x)
        with gt.GradientTape() as tt:
            tt.watch(x)
            yt = traced(x)
        assert tt._num_nodes == 1
        _close(getattr(te, kind)(ye, x).numpy(), getattr(tt, kind)(yt, x).numpy())


def test_second_order_through_a_call_node():
    # A tape entered after the call records its backward pass, as eagerly (no chain of
    # elementwise ops here: a compiled chain's rule recomputes its forward pass under a
    # recording tape, which an eager program does not).
    def f(x):
        col, row = gt.reshape(x, [3, 1]), gt.reshape(gt.sin(x), [1, 3])
        return gt.reduce_mean(gt.matmul(gt.matmul(col, row), gt.reshape(x, [3, 1])))

    traced = gt.function(f)
    x = gt.constant([0.3, -1.2, 2.0], dtype=gt.float64)
    traced(x)
    out = []
    for fn in (f, traced):
        with gt.GradientTape() as t1:
            t1.watch(x)
            y = fn(x)
        nodes = t1._num_nodes
        with gt.GradientTape() as t2:
            t2.watch(x)
            g = t1.gradient(y, x)
            s = gt.reduce_sum(g * g)
        h = t2.gradient(s, x)
        out.append((nodes, g.numpy(), None if h is None else h.numpy()))
    (_, ge, he), (nodes, gt_, ht) = out
    assert nodes == 1
    assert he is not None
    _close(ge, gt_)
    _close(he, ht)
    # Nested tapes both seeing the call: one node on each, exact second derivatives.
    traced = gt.function(lambda x: gt.reduce_sum(gt.exp(gt.sin(x) * x)))
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = traced(x)
        assert (outer._num_nodes, inner._num_nodes) == (1, 1)
        dy = inner.gradient(y, x)
    d2 = outer.gradient(dy, x).numpy()
    xn = x.numpy()
    # d/dx of exp(x sin x) (sin x + x cos x)
    u = np.sin(xn) + xn * np.cos(xn)
    expected = np.exp(xn * np.sin(xn)) * (u * u + 2 * np.cos(xn) - xn * np.sin(xn))
    _close(expected, d2)


def test_a_persistent_tape_records_a_call_as_one_node():
    f, x, ws = _mlp(5)
    traced = gt.function(f)
    with gt.GradientTape(persistent=True) as tt:
        tt.watch(x)
        yt = traced(x)
    assert tt._num_nodes == 1
    with gt.GradientTape(persistent=True) as te:
        te.watch(x)
        ye = f(x)
    for _ in range(2):  # a persistent tape answers again
        for a, b in zip(te.gradient(ye, [x] + ws), tt.gradient(yt, [x] + ws)):
            _close(_np(a), _np(b))
    _close(te.jacobian(ye, ws[0]).numpy(), tt.jacobian(yt, ws[0]).numpy())


_X = np.array([0.3, -1.2, 2.0])
_W = np.array([0.5, 1.5, -0.25])


def _f_of(w):
    # A compiled elementwise chain, a matmul and a variable.
    def f(x):
        row, col = gt.reshape(x, [1, 3]), gt.reshape(w, [3, 1])
        return gt.reduce_sum(gt.exp(gt.sin(x * w) * x) + gt.tanh(gt.matmul(row, col)))

    return f


def _nested(fn, x, w):
    with gt.GradientTape(persistent=True) as o:
        o.watch(x)
        with gt.GradientTape() as i:
            i.watch(x)
            y = fn(x)
            n = [t._num_nodes for t in (o, i)]
        g = i.gradient(y, [x, w])
    # Second derivatives, and the Hessian as the jacobian of the gradient.
    return [y, *g, *o.gradient(g[0], [x, w]), o.jacobian(g[0], x)], n


def _nested_outer_watches_nothing(fn, x, w):
    # The outer tape watches no tensor; x is a source no tape watched (TF: a gradient
    # where an op read it beside a watched value, as tapes were nested).
    with gt.GradientTape(persistent=True) as o:
        with gt.GradientTape() as i:
            y = fn(x)
            n = [t._num_nodes for t in (o, i)]
        g = i.gradient(y, w)
    return [g, o.gradient(g, w), o.gradient(g, x)], n


def _persistent_second_order(fn, x, w):
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = fn(x)
        n = [t._num_nodes]
        g, gw = t.gradient(y, x), t.gradient(y, w)
    return [g, gw, t.gradient(g, x), t.gradient(g, w), t.gradient(gw, w), t.jacobian(g, x)], n


def _third_order(fn, x, w):
    with gt.GradientTape() as t0:
        t0.watch(x)
        with gt.GradientTape() as t1:
            t1.watch(x)
            with gt.GradientTape() as t2:
                t2.watch(x)
                y = fn(x)
                n = [t._num_nodes for t in (t0, t1, t2)]
            g1 = t2.gradient(y, x)
        g2 = t1.gradient(g1, x)
    return [g1, g2, t0.gradient(g2, x)], n


def _outer_tape_asked_first(fn, x, w):
    with gt.GradientTape(persistent=True) as t1:
        t1.watch(x)
        with gt.GradientTape(persistent=True) as t2:
            t2.watch(x)
            y = fn(x)
            n = [t._num_nodes for t in (t1, t2)]
        g = t1.gradient(y, x)
    return [g, t2.gradient(y, x), t1.gradient(g, x)], n


def _different_watches(fn, x, w):
    with gt.GradientTape() as o:
        o.watch(x)
        with gt.GradientTape(watch_accessed_variables=False) as i:
            i.watch(w)
            y = fn(x)
            n = [t._num_nodes for t in (o, i)]
        g = i.gradient(y, w)
    return [g, o.gradient(g, x)], n


def _outer_paused(fn, x, w):
    # The outer tape does not record the call: it sees the gradient's ops only.
    with gt.GradientTape(persistent=True) as o:
        o.watch(x)
        with gt.GradientTape() as i:
            i.watch(x)
            with o.stop_recording():
                y = fn(x)
                n = [t._num_nodes for t in (i,)]
        g = i.gradient(y, x)
    return [g, o.gradient(g, x)], n


@pytest.mark.parametrize(
    "arrangement",
    [
        _nested,
        _nested_outer_watches_nothing,
        _persistent_second_order,
        _third_order,
        _outer_tape_asked_first,
        _different_watches,
        _outer_paused,
    ],
)
def test_every_arrangement_of_tapes_sees_one_node_and_the_eager_derivatives(arrangement):
    x = gt.constant(_X, dtype=gt.float64)
    we, wt = gt.Variable(_W, dtype=gt.float64), gt.Variable(_W, dtype=gt.float64)
    traced = gt.function(_f_of(wt))
    traced(x)
    # The node counts of the tapes that saw the call, right after it.
    want, eager_nodes = arrangement(_f_of(we), x, we)
    got, nodes = arrangement(traced, x, wt)
    assert nodes == [1] * len(nodes)
    assert all(n > 1 for n in eager_nodes)
    assert len(got) == len(want)
    for a, b in zip(want, got):
        assert a is not None
        # Sums taken in another order: values near zero (1e-4 from terms of 1) differ
        # in their last bits.
        _close(a.numpy(), _np(b), atol=1e-15)


def test_nested_second_derivative_values():
    # d²/dx² of sum(exp(sin(x w) x)) by hand, through the call under two tapes.
    x = gt.constant(_X, dtype=gt.float64)
    w = gt.Variable(_W, dtype=gt.float64)
    traced = gt.function(lambda x: gt.reduce_sum(gt.exp(gt.sin(x * w) * x)))
    with gt.GradientTape() as o:
        o.watch(x)
        with gt.GradientTape() as i:
            i.watch(x)
            y = traced(x)
        g = i.gradient(y, x)
    h = o.gradient(g, x).numpy()
    xn, wn = _X, _W
    s, c = np.sin(xn * wn), np.cos(xn * wn)
    v = xn * s  # the exponent
    u = s + xn * wn * c  # its derivative
    du = 2 * wn * c - xn * wn * wn * s
    _close(np.exp(v) * (u * u + du), h)


def test_custom_gradients_under_nested_tapes_give_the_eager_derivatives():
    # A rule that calls user code may read values the call did not save: with a tape
    # that differentiates the gradient, the call is recorded op by op (values equal).
    @gt.custom_gradient
    def square(x):
        y = x * x

        def grad(dy):
            return dy * 2.0 * x

        return y, grad

    def f(x):
        return gt.reduce_sum(gt.sin(square(x)))

    x = gt.constant(_X, dtype=gt.float64)
    traced = gt.function(f)
    traced(x)
    out = []
    for fn in (f, traced):
        with gt.GradientTape() as o:
            o.watch(x)
            with gt.GradientTape() as i:
                i.watch(x)
                y = fn(x)
            g = i.gradient(y, x)
        out.append((g.numpy(), o.gradient(g, x).numpy()))
    _close(out[0][0], out[1][0])
    _close(out[0][1], out[1][1])
    # d/dx sin(x²) = 2x cos(x²); d²: 2 cos(x²) - 4x² sin(x²).
    _close(2 * _X * np.cos(_X**2), out[1][0])
    _close(2 * np.cos(_X**2) - 4 * _X**2 * np.sin(_X**2), out[1][1])


def test_a_training_step_under_nested_tapes():
    def step_of(w):
        def step(x):
            with gt.GradientTape() as inner:
                loss = gt.reduce_sum(gt.tanh(gt.matmul(x, w)) ** 2)
            g = inner.gradient(loss, w)
            return loss * gt.reduce_sum(g * g)

        return step

    rng = np.random.default_rng(6)
    wv, xv = rng.standard_normal((3, 2)), rng.standard_normal((2, 3))
    out = []
    for traced in (False, True):
        w = gt.Variable(wv, dtype=gt.float64)
        x = gt.constant(xv, dtype=gt.float64)
        step = gt.function(step_of(w)) if traced else step_of(w)
        step(x)
        with gt.GradientTape() as o:
            o.watch(x)
            with gt.GradientTape() as i:
                i.watch(x)
                y = step(x)
                if traced:
                    assert (o._num_nodes, i._num_nodes) == (1, 1)
            gx, gw = i.gradient(y, [x, w])
        out.append([y, gx, gw, *o.gradient(gx, [x, w])])
    for a, b in zip(*out):
        _close(a.numpy(), b.numpy())


def test_custom_gradients_and_stop_gradient_inside_a_call_node():
    @gt.custom_gradient
    def clip_grad(x):
        def grad(dy):
            return gt.clip_by_value(dy, -0.5, 0.5)

        return gt.identity(x), grad

    def f(x):
        return gt.reduce_sum(clip_grad(x * 3.0) ** 2 + gt.stop_gradient(x) * x)

    traced = gt.function(f)
    x = gt.constant([0.05, -0.4, 1.0], dtype=gt.float64)
    traced(x)
    with gt.GradientTape() as te:
        te.watch(x)
        ye = f(x)
    with gt.GradientTape() as tt:
        tt.watch(x)
        yt = traced(x)
    assert tt._num_nodes == 1
    _close(ye.numpy(), yt.numpy())
    _close(te.gradient(ye, x).numpy(), tt.gradient(yt, x).numpy())


def test_several_outputs_and_arguments_passed_twice():
    @gt.function
    def f(a, b):
        return a * b, gt.cast(a > 0, gt.int32), gt.sin(a) + b

    x = gt.constant([0.5, -1.5], dtype=gt.float64)
    f(x, x)
    with gt.GradientTape() as t:
        t.watch(x)
        p, mask, s = f(x, x)
    assert t._num_nodes == 1
    assert mask.numpy().tolist() == [1, 0]
    xn = x.numpy()
    _close(2 * xn + np.cos(xn) + 1, t.gradient([p, s], x).numpy())
    # Only one output asked for: the other gets no gradient.
    with gt.GradientTape() as t:
        t.watch(x)
        p, _, s = f(x, x)
    _close(np.cos(xn) + 1, t.gradient(s, x).numpy())


def test_a_call_returning_its_argument_is_still_differentiable():
    f = gt.function(lambda x: (x, x * 2.0))
    x = gt.constant(1.5, dtype=gt.float64)
    f(x)
    with gt.GradientTape() as t:
        t.watch(x)
        a, b = f(x)
    assert float(t.gradient([a, b], x)) == pytest.approx(3.0, rel=RTOL)


def test_a_custom_gradient_reads_the_body_values_of_each_call():
    # grad_fn closes over a value of the body: each call's, not the trace's example.
    @gt.custom_gradient
    def square(x):
        def grad(dy):
            return dy * 2.0 * x

        return x * x, grad

    traced = gt.function(lambda x: gt.reduce_sum(gt.sin(square(x))))
    traced(gt.constant([1.0, 2.0, 3.0], dtype=gt.float64))
    x = gt.constant(_X, dtype=gt.float64)
    for persistent in (False, True):
        with gt.GradientTape(persistent=persistent) as t:
            t.watch(x)
            y = traced(x)
        assert traced.experimental_get_tracing_count() == 1
        _close(2 * _X * np.cos(_X**2), t.gradient(y, x).numpy())
