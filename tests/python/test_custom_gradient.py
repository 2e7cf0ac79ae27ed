"""@gt.custom_gradient: Python-defined gradients as tape nodes (issue 3)."""

import gc
import weakref

import numpy as np
import pytest

import gradtape as gt


def clip_by_norm(dy, clip):
    n = gt.sqrt(gt.reduce_sum(dy * dy))
    return dy * clip / gt.maximum(n, clip)


@gt.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return clip_by_norm(dy, 0.5)

    return y, backward


def test_guide_clip_gradients_gives_2():
    v = gt.Variable(2.0)
    with gt.GradientTape() as t:
        output = clip_gradients(v * v)
    assert float(t.gradient(output, v)) == 2.0


def test_multiple_inputs_and_outputs():
    @gt.custom_gradient
    def f(a, b):
        def grad(da, db):
            return da * 10.0 + db, da + db * 100.0

        return (a * b, a + b), grad

    a, b = gt.constant(2.0), gt.constant(3.0)
    with gt.GradientTape(persistent=True) as t:
        t.watch([a, b])
        p, s = f(a, b)
        loss = p + s
    ga, gb = t.gradient(loss, [a, b])
    assert (float(ga), float(gb)) == (11.0, 101.0)
    # Only one output used: the other output's gradient is zero.
    ga = t.gradient(p, a)
    assert float(ga) == 10.0


def test_variables_read_inside_need_the_variables_argument():
    w = gt.Variable(3.0, name="w")

    @gt.custom_gradient
    def f(x):
        def grad(dy, variables=None):
            assert [v.name for v in variables] == ["w:0"]
            return dy * w, [dy * x * 2.0]

        return x * w, grad

    x = gt.constant(2.0)
    with gt.GradientTape() as t:
        t.watch(x)
        y = f(x)
    gx, gw = t.gradient(y, [x, w])
    assert (float(gx), float(gw)) == (3.0, 4.0)

    @gt.custom_gradient
    def g(x):
        return x * w, lambda dy: dy

    with pytest.raises(TypeError, match="w:0"):
        g(x)


def test_exception_in_grad_fn_reaches_caller_and_tape_stays_usable():
    class Boom(Exception):
        pass

    @gt.custom_gradient
    def bad(x):
        def grad(dy):
            raise Boom("from grad_fn")

        return x * 2.0, grad

    x = gt.constant(1.5)
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = bad(x)
        z = x * x
    with pytest.raises(Boom, match="from grad_fn"):
        t.gradient(y, x)
    assert float(t.gradient(z, x)) == 3.0


def test_wrong_number_of_gradients_is_a_clear_error():
    @gt.custom_gradient
    def f(a, b):
        return a + b, lambda dy: dy  # one gradient for two inputs

    a, b = gt.constant(1.0), gt.constant(2.0)
    with gt.GradientTape() as t:
        t.watch([a, b])
        y = f(a, b)
    with pytest.raises(ValueError, match="expected to return 2 gradients, but returned 1"):
        t.gradient(y, [a, b])


def test_wrong_gradient_shape_is_a_clear_error():
    @gt.custom_gradient
    def f(a):
        return a * 1.0, lambda dy: gt.ones([3])

    a = gt.constant([1.0, 2.0])
    with gt.GradientTape() as t:
        t.watch(a)
        y = f(a)
    with pytest.raises(gt.errors.InvalidArgumentError, match="shape"):
        t.gradient(y, a)


def test_higher_order_when_grad_fn_uses_gt_ops():
    @gt.custom_gradient
    def cube(x):
        def grad(dy):
            return dy * 3.0 * x * x

        return x * x * x, grad

    x = gt.constant(2.0)
    with gt.GradientTape() as t2:
        t2.watch(x)
        with gt.GradientTape() as t1:
            t1.watch(x)
            y = cube(x)
        d1 = t1.gradient(y, x)
    d2 = t2.gradient(d1, x)
    assert (float(d1), float(d2)) == (12.0, 12.0)


def test_nested_custom_gradients():
    @gt.custom_gradient
    def double_grad(x):
        return x * 1.0, lambda dy: dy * 2.0

    @gt.custom_gradient
    def outer(x):
        y = double_grad(x)
        return y * 1.0, lambda dy: dy * 5.0

    x = gt.constant(1.0)
    with gt.GradientTape() as t:
        t.watch(x)
        y = double_grad(outer(x))
    assert float(t.gradient(y, x)) == 10.0


def test_dropped_tape_frees_custom_nodes():
    class Marker:
        pass

    box = [Marker()]
    ref = weakref.ref(box[0])

    @gt.custom_gradient
    def f(x):
        held = box[0]

        def grad(dy):
            return dy * (1.0 if held else 0.0)

        return x * 1.0, grad

    x = gt.constant(1.0)
    t = gt.GradientTape(persistent=True)
    with t:
        t.watch(x)
        y = f(x)
    box.clear()
    del f
    assert float(t.gradient(y, x)) == 1.0
    del t, y
    gc.collect()
    assert ref() is None


def test_custom_gradient_matches_builtin_values():
    @gt.custom_gradient
    def my_exp(x):
        e = gt.exp(x)
        return e, lambda dy: dy * e

    x = gt.constant(np.linspace(-1, 1, 5))
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        a = my_exp(x)
        b = gt.exp(x)
    want = np.exp(np.linspace(-1, 1, 5))  # d/dx eˣ
    np.testing.assert_allclose(t.gradient(a, x).numpy(), want, rtol=1e-15)
    np.testing.assert_allclose(t.gradient(b, x).numpy(), want, rtol=1e-15)


def test_custom_gradient_with_more_than_eight_inputs():
    # The node keeps every input for the rule; the mask of saved inputs used to have
    # 8 bits ("input 8 was not saved").
    @gt.custom_gradient
    def weighted_sum(*xs):
        def grad_fn(dy):
            return [dy * float(i + 1) for i in range(len(xs))]

        return sum(xs[1:], xs[0]), grad_fn

    xs = [gt.constant(float(i)) for i in range(12)]
    with gt.GradientTape() as t:
        t.watch(xs)
        y = weighted_sum(*xs)
    assert float(y) == 66.0
    assert [float(g) for g in t.gradient(y, xs)] == [float(i + 1) for i in range(12)]
