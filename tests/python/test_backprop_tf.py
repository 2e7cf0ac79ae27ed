"""TensorFlow's ``tensorflow/python/eager/backprop_test.py``, ported to gradtape (issue 14).

One test per TF test within gradtape's scope, same name in snake case, same logic with
``tf`` → ``gt``. TF's private helpers (``backprop.gradients_function``,
``implicit_grad``, ``make_vjp``, ``val_and_grad_function``) are rebuilt here from the
public tape, as TF builds them. Tests of graph mode (``ops.Graph``, placeholders),
GPUs, op attributes, strings, sparse tensors, name scopes and the memory checker are
not ported; ``test_backprop_not_ported``
lists them with the reason.
"""

import functools
import gc
import weakref

import numpy as np
import pytest

import gradtape as gt


# --- TF's private helpers, over the public tape ---------------------------------------


def _unique(args):
    """TF's ``_ensure_unique_tensor_objects``: an argument passed twice is copied, so
    that each position gets its own gradient."""
    seen, out = set(), []
    for a in args:
        a = a if isinstance(a, (gt.Tensor, gt.Variable)) else gt.convert_to_tensor(a)
        if id(a) in seen:
            a = gt.identity(a)
        seen.add(id(a))
        out.append(a)
    return out


def gradients_function(f, params=None):
    """``backprop.gradients_function``: gradients of ``f`` for its positional args
    (``params`` picks them), with an optional ``dy`` keyword seeding the output."""

    def decorated(*args, **kwds):
        dy = kwds.pop("dy", None)
        args = _unique(args)
        with gt.GradientTape() as t:
            for i, a in enumerate(args):
                if params is None or i in params:
                    t.watch(a)
            y = f(*args, **kwds)
        if y is None:
            raise ValueError(
                "Cannot differentiate a function that returns None; did you forget "
                f"to return a value from {f.__name__}?"
            )
        srcs = [a for i, a in enumerate(args) if params is None or i in params]
        return t.gradient(y, srcs, output_gradients=dy)

    return decorated


def implicit_grad(f):
    """``backprop.implicit_grad``: [(grad, var)] for the trainable variables ``f`` reads,
    in the order the tape watched them."""

    def grad_fn(*args):
        with gt.GradientTape() as t:
            y = f(*args)
        vs = t.watched_variables()
        return list(zip(t.gradient(y, list(vs)), vs))

    return grad_fn


def val_and_grad_function(f, params=None):
    def decorated(*args):
        args = [gt.convert_to_tensor(a) if not isinstance(a, (gt.Tensor, gt.Variable)) else a for a in args]
        with gt.GradientTape() as t:
            for i, a in enumerate(args):
                if params is None or i in params:
                    t.watch(a)
            y = f(*args)
        if y is None:
            raise ValueError(
                "Cannot differentiate a function that returns None; did you forget "
                f"to return a value from {f.__name__}?"
            )
        srcs = [a for i, a in enumerate(args) if params is None or i in params]
        return y, t.gradient(y, srcs)

    return decorated


def make_vjp(f, persistent=True):
    def decorated(*args):
        args = [gt.convert_to_tensor(a) for a in args]
        t = gt.GradientTape(persistent=persistent)
        with t:
            for a in args:
                t.watch(a)
            y = f(*args)

        def vjp(dy):
            return t.gradient(y, args, output_gradients=dy)

        return y, vjp

    return decorated


def _v(t):
    return np.asarray(t)


# --- BackpropTest ---------------------------------------------------------------------


def test_aggregate_gradients():
    def fn(x):
        g1 = gt.nn.embedding_lookup(x, gt.constant(np.array([0, 1])))
        g2 = gt.nn.embedding_lookup(x, gt.constant(np.array([2, 3])))
        g3 = gt.nn.embedding_lookup(x, gt.constant(np.array([1, 3])))
        return g1 * g2 * g3

    var_np = np.random.RandomState(0).rand(4, 2).astype(np.float32)
    grad = gradients_function(fn, [0])(gt.constant(var_np))[0]
    grad = gt.convert_to_tensor(grad).numpy()
    v = var_np
    expected = np.zeros_like(v)
    expected[[0, 1]] += v[[2, 3]] * v[[1, 3]]
    expected[[2, 3]] += v[[0, 1]] * v[[1, 3]]
    np.add.at(expected, [1, 3], v[[0, 1]] * v[[2, 3]])
    np.testing.assert_allclose(grad, expected, rtol=1e-6)


def test_aggregate_gradients_with_tensor():
    def fn(x):
        g1 = gt.nn.embedding_lookup(x, gt.constant(np.array([0, 1])))
        g2 = gt.math.reduce_sum(x * gt.constant(2.0))
        return g1 * g2

    var_np = np.random.RandomState(1).rand(4, 2).astype(np.float32)
    grad = gt.convert_to_tensor(gradients_function(fn, [0])(gt.constant(var_np))[0]).numpy()
    g2 = (var_np * 2).sum()
    expected = np.full_like(var_np, 2.0 * var_np[[0, 1]].sum())
    expected[[0, 1]] += g2
    np.testing.assert_allclose(grad, expected, rtol=1e-5)


def test_implicit_grad_with_resource_variable():
    x = gt.Variable(gt.constant(1.0), name="x")

    def fn():
        c = gt.math.add(x.value(), gt.constant(2.0))
        return gt.math.add(c, gt.constant(3.0))

    grads_and_vars = implicit_grad(fn)()
    assert grads_and_vars[0][0].numpy() == 1.0
    assert grads_and_vars[0][1] is x


@pytest.mark.parametrize("decorator", [gt.function, lambda f: f], ids=["Function", "NoFunction"])
def test_no_op_behavior_consistent(decorator):
    @decorator
    def f(x):
        x1 = gt.identity(x)
        x2 = gt.math.add(x, 0)
        x3 = gt.math.subtract(x, 0)
        x4 = gt.math.multiply(x, 1)
        with gt.GradientTape() as t:
            t.watch(x)
            t.watch(x1)
            t.watch(x2)
            t.watch(x3)
            t.watch(x4)
            loss = x * 2.0 + x1 * 3.0 + x2 * 3.0 + x3 * 3.0 + x4 * 3.0
        return t.gradient(loss, [x, x1, x2, x3, x4])

    np.testing.assert_allclose([_v(g) for g in f(gt.constant(10.0))], [2.0, 3.0, 3.0, 3.0, 3.0])


def test_where_gradient():
    def f(x):
        return gt.where(x < 10, x, x * x)

    g = gradients_function(f)
    assert g(5.0)[0].numpy() == 1.0
    assert g(50.0)[0].numpy() == 100.0


def test_two_targets():
    with gt.GradientTape() as t:
        x = gt.constant(3.0)
        y = gt.constant(2.0)
        t.watch([x, y])
        xx = 2 * x
        yy = 3 * y
    dx, dy = t.gradient([xx, yy], [x, y])
    assert dx.numpy() == 2.0 and dy.numpy() == 3.0


def test_custom_gradient_empty_error():
    @gt.custom_gradient
    def identity(x):
        def grad(_):
            return []  # wrong: one gradient per input

        return x, grad

    x = gt.Variable(1.0)
    with gt.GradientTape() as t:
        y = identity(x)
    with pytest.raises(ValueError):
        t.gradient(y, [x])


def test_stop_gradient_hides_downstream_ops():
    @gt.custom_gradient
    def _backward_pass_error(x):
        def _grad(_):
            raise AssertionError("ran the backward function of an op downstream of stop_gradient")

        return x, _grad

    @gt.function
    def f(x):
        return _backward_pass_error(x)

    x = gt.constant(1.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = f(gt.stop_gradient(x))
    assert tape.gradient(y, x) is None


def test_output_grad_used_in_computation():
    with gt.GradientTape() as t:
        x = gt.constant(3.0)
        y = gt.constant(2.0)
        t.watch([x, y])
        loss = x * y
    (dx,) = t.gradient([loss, x], [x], output_gradients=[1.0, 2.0])
    assert dx.numpy() == 4.0


def test_dy():
    def f(x):
        return x

    assert gradients_function(f)(1.0, dy=2.0)[0].numpy() == 2.0


def test_gradient_integer():
    def f(x):
        return x + x

    with pytest.warns(UserWarning):
        assert gradients_function(f)(gt.constant(1))[0] is None


def test_errors():
    @gt.custom_gradient
    def f(x):
        def grad(_):
            raise RuntimeError("x")

        return x, grad

    with pytest.raises(RuntimeError):
        gradients_function(f)(gt.constant(1.0))


def test_gradients_function_in_custom_gradient():
    @gt.custom_gradient
    def f(x):
        (y,) = gradients_function(lambda x: x * x)(x)

        def grad(dy):
            return [2 * dy]

        return y, grad

    assert f(1.0).numpy() == 2.0


def test_implicit_grad_over_embedding_lookup():
    batch_size, embedding_size, vocab_size, lrn_rate = 8, 16, 50, 0.1
    random_init = gt.random.uniform([vocab_size, embedding_size], seed=3)
    x = gt.ones((batch_size,), gt.int64)
    embedding = gt.Variable(initial_value=random_init, dtype=gt.float32, name="embedding")

    def f():
        embedded_x = gt.nn.embedding_lookup(embedding, x)
        return gt.constant(1.0, gt.float32) - embedded_x

    grad = implicit_grad(f)()[0][0]
    dense = gt.convert_to_tensor(grad).numpy()
    expected = np.zeros((vocab_size, embedding_size), np.float32)
    expected[1] = -batch_size
    np.testing.assert_allclose(dense, expected)
    opt = gt.optimizers.SGD(lrn_rate)
    opt.apply_gradients([(grad, embedding)])
    want = random_init.numpy() - lrn_rate * expected
    np.testing.assert_allclose(embedding.numpy(), want, rtol=1e-6)


def test_implicit_grad_ordering():
    v0 = gt.Variable(1.0)
    v1 = gt.Variable(2.0)

    def f():
        return v1 * v1 + v0 * v0

    grads = implicit_grad(f)()
    assert grads[0][1] is v0
    assert grads[1][1] is v1


def test_tape_no_op_gradient():
    x = gt.constant(3.0)
    with gt.GradientTape() as t:
        t.watch(x)
        y = x
    assert t.gradient(y, x).numpy() == 1.0


def test_tape_identity_gradient_is_identity():
    x = gt.constant(3.0)
    with gt.GradientTape() as t:
        t.watch(x)
        y = gt.identity(x)
    assert t.gradient(y, x).numpy() == 1.0


def test_function_indexed_slices_gradient():
    @gt.function
    def f(x):
        return x + 1

    with gt.GradientTape() as t:
        x = gt.constant([1.0])
        t.watch(x)
        y = f(x)
        y = gt.gather(y, [0])
    assert t.gradient(y, x).numpy().tolist() == [1.0]


def test_tape_gradient_multi_target_one_is_source():
    x = gt.constant(2.0)
    with gt.GradientTape() as t:
        t.watch(x)
        y = x * x
    assert t.gradient([x, y], x).numpy() == 5.0


def test_tape_no_op_gradient_with_multi_target_all_source():
    x = gt.constant(3.0)
    with gt.GradientTape() as t:
        t.watch(x)
        y = x
    assert t.gradient([y, y], x).numpy() == 2.0


def test_tape_no_op_gradient_with_multi_target_multi_source():
    x = gt.constant(3.0)
    y = gt.constant(5.0)
    with gt.GradientTape() as t:
        t.watch(x)
        t.watch(y)
        z = y * y
    assert [g.numpy() for g in t.gradient([x, y, z], [x, y])] == [1.0, 11.0]


def test_tape_gradient_string_target():
    # A string target has no gradient: None, even for a watched float source.
    s = gt.constant("unknown", dtype=gt.string)
    x = gt.constant(3.0)
    with gt.GradientTape() as t:
        t.watch(x)
        with pytest.warns(UserWarning):  # TF logs the same warning
            t.watch(s)
    assert t.gradient(s, x) is None


def test_tape_no_op_gradient_string_source_and_target():
    s = gt.constant("unknown", dtype=gt.string)
    with gt.GradientTape() as t:
        with pytest.warns(UserWarning):
            t.watch(s)
    assert t.gradient(s, s) is None


def test_tape_no_op_gradient_multi_target_multi_source_include_string():
    x, y = gt.constant(3.0), gt.constant(5.0)
    s = gt.constant("unknown", dtype=gt.string)
    with gt.GradientTape() as t:
        t.watch(x)
        t.watch(y)
        with pytest.warns(UserWarning):
            t.watch(s)
        z = y * y
    grads = t.gradient([x, y, z, s], [x, y, s])
    assert [float(g) for g in grads[:2]] == [1.0, 11.0]
    assert grads[2] is None


def test_tape_no_op_on_variable_is_identity():
    v0 = gt.Variable(1.0)
    with gt.GradientTape() as t:
        y = v0.read_value()
    assert t.gradient(y, v0).numpy() == 1.0


def test_tape_no_op_gradient_2_by_2():
    a_2_by_2 = gt.constant(2.0, shape=[2, 2])
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(a_2_by_2)
    dy_dy = tape.gradient(a_2_by_2, [a_2_by_2])[0]
    assert dy_dy.numpy().tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_tape_no_op_gradient_multi_target_2_by_2():
    a_2_by_2 = gt.constant(2.0, shape=[2, 2])
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(a_2_by_2)
    dy_dy = tape.gradient([a_2_by_2, a_2_by_2], [a_2_by_2])[0]
    assert dy_dy.numpy().tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_tape_stop_recording():
    with gt.GradientTape() as t:
        x = gt.Variable(1.0)
        with t.stop_recording():
            y = x * x
    assert t.gradient(y, x) is None


def test_tape_stop_start_recording():
    with gt.GradientTape(persistent=True) as t:
        x = gt.Variable(1.0)
        x2 = x * 2
        with t.stop_recording():
            y = x2 * x2
        z = x2 * x2
    assert t.gradient(y, x2) is None
    assert t.gradient(z, x2).numpy() == 4.0


def test_tape_reset():
    with gt.GradientTape() as t:
        v = gt.Variable(1.0)
        loss = v * v
        t.reset()
        loss += v * v
    assert t.gradient(loss, v).numpy() == 2.0


def test_python_max():
    x = [gt.Variable(2.0), gt.Variable(3.0), gt.Variable(5.0)]
    with gt.GradientTape() as t:
        f = max(x)
    grad = t.gradient(f, x)
    assert f.numpy() == 5.0
    assert grad[0] is None and grad[1] is None and grad[2].numpy() == 1.0


def test_automatic_watched_variables():
    with gt.GradientTape() as t:
        assert len(t.watched_variables()) == 0
        v = gt.Variable(1.0)
        loss = v * v
        assert list(t.watched_variables()) == [v]
        t.reset()
        assert len(t.watched_variables()) == 0
        loss += v * v
        assert list(t.watched_variables()) == [v]


def test_explicit_watched_variables():
    with gt.GradientTape() as t:
        assert len(t.watched_variables()) == 0
        v = gt.Variable(1.0)
        t.watch(v)
        assert list(t.watched_variables()) == [v]
        t.reset()
        assert len(t.watched_variables()) == 0
        t.watch(v)
        assert list(t.watched_variables()) == [v]


def test_gradient_none():
    def loss(x, labels):
        return gt.math.reduce_mean(
            gt.nn.softmax_cross_entropy_with_logits(logits=x, labels=labels), gt.constant([0])
        )

    logits = gt.constant([[0.0, 0.0]])
    labels = gt.constant([[1.0, 0.0]])
    (g,) = gradients_function(loss, [0])(logits, labels)
    assert g.numpy().tolist() == [[-0.5, 0.5]]


def test_gradient_within_tape_block():
    v1 = gt.Variable(1.0)
    with gt.GradientTape() as t:
        loss = 2 * v1
        grad = t.gradient(loss, v1)
    assert grad.numpy() == 2.0
    with gt.GradientTape(persistent=True) as t:
        loss = 2 * v1
        grad = t.gradient(loss, v1)
    assert grad.numpy() == 2.0


def test_nested_self_contexts():
    with gt.GradientTape() as t:
        with pytest.raises(ValueError):
            with t:
                pass


def test_second_grad():
    def first(x):
        labels = gt.constant([[0.0]])
        x = gt.nn.softmax_cross_entropy_with_logits(labels=labels, logits=x)
        return gt.math.reduce_sum(x, gt.constant([0]))

    def second(x):
        grad = gradients_function(first, [0])(x)[0]
        return gt.math.reduce_sum(grad, gt.constant([0]))

    grad = gradients_function(second, [0])(gt.constant([[0.1]]))[0]
    assert grad.numpy().tolist() == [[0.0]]


def test_watching_is_tape_local():
    x1 = gt.Variable(2.0, trainable=False)
    x2 = gt.Variable(2.0, trainable=False)
    with gt.GradientTape() as tape1:
        with gt.GradientTape() as tape2:
            tape1.watch(x1)
            tape2.watch([x1, x2])
            y = x1**3
            z = x2**2
            dy, dz = tape2.gradient([y, z], [x1, x2])
        d2y, d2z = tape1.gradient([dy, dz], [x1, x2])
    assert d2y.numpy() == 12.0
    assert d2z is None


def test_make_vjp():
    def f(x):
        return x * x

    result, vjp = make_vjp(f, persistent=False)(gt.constant(3.0))
    assert result.numpy() == 9.0
    assert vjp(2.0)[0].numpy() == 12.0


def test_persistent_make_vjp():
    def f(x):
        return x * x

    _, vjp = make_vjp(f, persistent=True)(gt.constant(3.0))
    assert vjp(2.0)[0].numpy() == vjp(2.0)[0].numpy() == 12.0


def test_grad_grad():
    def sq(x):
        return x * x

    def grad(x):
        return gradients_function(sq, [0])(x)[0]

    assert gradients_function(grad, [0])(gt.constant(3.0))[0].numpy() == 2.0


def test_grad_grad_exp():
    def grad(x):
        return gradients_function(gt.math.exp, [0])(x)[0]

    assert gradients_function(grad, [0])(gt.constant(0.0))[0].numpy() == 1.0


def test_stop_gradient():
    grad = gradients_function(lambda x: gt.stop_gradient(gt.math.argmax(x)))
    assert grad([0.0])[0] is None


def test_argmax():
    def argmax(x):
        return gt.stop_gradient(gt.math.argmax(x))

    assert gradients_function(argmax)([0.0])[0] is None


def test_cpu():
    def fn(x):
        c = gt.math.add(x, gt.constant(2.0))
        return gt.math.add(c, gt.constant(3.0))

    assert gradients_function(fn, [0])(gt.constant(1.0))[0].numpy() == 1.0


def test_empty_params():
    def fn(a, b):
        return a * b

    x, y = gt.constant(1.0), gt.constant(2.0)
    dx, dy = gradients_function(fn)(x, y)
    assert dx.numpy() == 2.0 and dy.numpy() == 1.0


def test_unconnected_none():
    v = gt.Variable(1.0, name="testUnconnectedNone")

    def f():
        v.read_value()
        return gt.constant(1.0)

    assert implicit_grad(f)()[0][0] is None


def test_gradient_tape_re_enter_context():
    g = gt.GradientTape()
    with g:
        x = gt.constant(3.0)
        g.watch(x)
        y = 2 * x
    with g:
        z = 2 * y
    grad = g.gradient(target=z, sources=[x])
    assert [v.numpy() for v in grad] == [4.0]


def test_gradient_tape_repeated_source():
    with gt.GradientTape(persistent=False) as g:
        x = gt.constant(3.0)
        g.watch(x)
        y = 2 * x
    grad = g.gradient(target=y, sources=[x, x])
    assert [v.numpy() for v in grad] == [2.0, 2.0]


def test_persistent_gradient_tape_repeated_source():
    with gt.GradientTape(persistent=True) as g:
        x = gt.constant(3.0)
        y = gt.constant(5.0)
        g.watch(x)
        g.watch(y)
        z = x * x + x * y
    assert [v.numpy() for v in g.gradient(target=z, sources=[x, x])] == [11.0, 11.0]
    assert [v.numpy() for v in g.gradient(target=z, sources=[y, x])] == [3.0, 11.0]


def test_gradient_tape_structure():
    with gt.GradientTape(persistent=True) as g:
        x1 = gt.constant(3.0)
        x2 = gt.constant(3.1)
        x3 = gt.constant(3.2)
        g.watch(x1)
        g.watch(x2)
        g.watch(x3)
        y = x1 + 2 * x2 + 3 * x3

    def ev(s):
        if isinstance(s, dict):
            return {k: ev(v) for k, v in s.items()}
        if isinstance(s, (list, tuple)):
            return type(s)(ev(v) for v in s)
        return float(s.numpy())

    assert ev(g.gradient(y, x1)) == 1.0
    assert ev(g.gradient(y, (x1,))) == (1.0,)
    assert ev(g.gradient(y, (x1, x2))) == (1.0, 2.0)
    assert ev(g.gradient(y, [(x1, x2), (x2, x3)])) == [(1.0, 2.0), (2.0, 3.0)]
    assert ev(g.gradient(y, (x1, x2, [x1, x3]))) == (1.0, 2.0, [1.0, 3.0])
    assert ev(g.gradient(y, [x1, {"x2": x2, "x3": x3}])) == [1.0, {"x2": 2.0, "x3": 3.0}]


def test_gradient_tape():
    with gt.GradientTape() as g:
        x = gt.constant(3.0)
        g.watch(x)
        y = x * x
        with gt.GradientTape() as gg:
            gg.watch(y)
            z = 2 * y
        inner_grad = gg.gradient(z, [y])[0]
        assert inner_grad.numpy() == 2.0
        y += inner_grad
    assert g.gradient(y, [x])[0].numpy() == 6.0


def test_gadient_tape_called_on_constant_target():
    with gt.GradientTape() as g:
        x = gt.Variable([3.0])
        y = gt.Variable([2.0])
    assert g.gradient(x, y) is None


def test_gradient_tape_with_cond():
    x = gt.constant(3.0)

    def true_fn():
        return x

    def false_fn():
        return x * x

    with gt.GradientTape() as g:
        g.watch(x)
        y = gt.cond(x < x, true_fn, false_fn)
    assert g.gradient(y, [x])[0].numpy() == 6.0


def test_gradient_tape_with_while_loop():
    i = gt.constant(1)
    x = gt.constant(2.0)

    def cond(i, _):
        return i < 3

    def body(i, x):
        return i + 1, x * 2

    with gt.GradientTape() as g:
        g.watch([x])
        _, y = gt.while_loop(cond, body, [i, x])
    assert g.gradient(y, [x])[0].numpy() == 4.0


def test_gradient_tape_gradient_called_multiple_times():
    with gt.GradientTape() as g:
        x = gt.constant(3.0)
        g.watch(x)
        y = x * x
        z = y * y
    g.gradient(z, [x])
    with pytest.raises(RuntimeError, match="A non-persistent GradientTape can only be used to compute one set"):
        g.gradient(y, [x])


def test_gradient_tape_jacobian_called_multiple_times():
    with gt.GradientTape() as g:
        x = gt.constant(3.0)
        g.watch(x)
        y = x * x
        z = y * y
    g.jacobian(z, [x])
    with pytest.raises(RuntimeError, match="A non-persistent GradientTape can only"):
        g.jacobian(y, [x])


def test_gradient_tape_batch_jacobian_called_multiple_times():
    with gt.GradientTape() as g:
        x = gt.constant([[3.0]])
        g.watch(x)
        y = x * x
        z = y * y
    g.batch_jacobian(z, x)
    with pytest.raises(RuntimeError, match="A non-persistent GradientTape can only"):
        g.batch_jacobian(y, [x])


def test_batch_jacobian_parallel_iterations_needs_a_persistent_tape():
    @gt.function
    def f(persistent):
        with gt.GradientTape(persistent=persistent) as t:
            x = gt.constant([[3.0]])
            t.watch(x)
            y = x * x
            z = gt.tile(y * y, [1, 16])
        return t.batch_jacobian(z, x, parallel_iterations=8)

    with pytest.raises(RuntimeError, match="persistent=True.*parallel_iterations"):
        f(persistent=False)
    np.testing.assert_allclose(f(persistent=True).numpy(), [[[4.0 * 3.0**3]] * 16])


def test_jacobian_inside_gradient_tape_scope():
    with gt.GradientTape() as g:
        x = gt.constant(3.0)
        g.watch(x)
        y = x * x
        z = y * y
        np.testing.assert_allclose(g.jacobian(z, x).numpy(), 4.0 * 3.0**3)


def test_batch_jacobian_inside_gradient_tape_scope():
    with gt.GradientTape(persistent=True) as g:
        x = gt.constant([[3.0]])
        g.watch(x)
        y = x * x
        z = y * y
        np.testing.assert_allclose(g.batch_jacobian(z, x).numpy(), [[[4.0 * 3.0**3]]])


def test_gradients_within_persistent_tape():
    with gt.GradientTape(persistent=True) as g:
        x = gt.constant(3.0)
        g.watch(x)
        y = x * x
        z = y * y
        dz_dx = g.gradient(z, [x])[0]
        assert dz_dx.numpy() == 4 * 3 * 3 * 3
        dy_dx = g.gradient(y, [x])[0]
        assert dy_dx.numpy() == 2 * 3
    del g


def test_persistent_tape():
    with gt.GradientTape(persistent=True) as g:
        x = gt.constant(3.0)
        g.watch(x)
        y = x * x
        z = y * y
    assert g.gradient(z, [x])[0].numpy() == 4 * 3 * 3 * 3
    assert g.gradient(y, [x])[0].numpy() == 2 * 3
    del g


def test_higher_order_gradient():
    with gt.GradientTape(persistent=True) as g:
        x = gt.constant(3.0)
        g.watch(x)
        y = x**3
        dy_dx = g.gradient(y, x)
        d2y_dx2 = g.gradient(dy_dx, x)
    d3y_dx3 = g.gradient(d2y_dx2, x)
    assert y.numpy() == 27.0
    assert dy_dx.numpy() == 27.0
    assert d2y_dx2.numpy() == 18.0
    assert d3y_dx3.numpy() == 6.0


def test_persistent_nested_tape():
    with gt.GradientTape(persistent=True) as g:
        x = gt.constant(3.0)
        g.watch(x)
        y = x * x
        with gt.GradientTape(persistent=True) as gg:
            gg.watch(y)
            z = 2 * y
        for _ in range(2):
            inner_grad = gg.gradient(z, [y])[0]
            assert inner_grad.numpy() == 2.0
        y += inner_grad
        del gg
    assert g.gradient(y, [x])[0].numpy() == 6.0
    assert g.gradient(z, [x])[0].numpy() == 12.0


def test_gradient_tape_variable():
    v = gt.Variable(1.0, name="v")
    with gt.GradientTape() as g:
        y = v * v
    assert g.gradient(y, [v])[0].numpy() == 2.0


def test_nested_gradients():
    x = gt.constant(3.0)
    with gt.GradientTape() as g:
        g.watch(x)
        y = x * x
        z = y * y
    dz_dx, dz_dy = g.gradient(z, [x, y])
    assert dz_dx.numpy() == 108.0
    assert dz_dy.numpy() == 18.0


def test_unconnected_gradients_default():
    x = gt.constant(1.0)
    y = gt.constant(3.0)
    with gt.GradientTape() as g:
        g.watch([x, y])
        z = y * 2
    assert g.gradient(z, x) is None


def test_unconnected_gradients_zeros():
    x = gt.constant(1.0, shape=[2, 2])
    y = gt.constant(3.0)
    with gt.GradientTape() as g:
        g.watch([x, y])
        z = y * 2
    dz_dx = g.gradient(z, x, unconnected_gradients="zero")
    assert dz_dx.numpy().tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_unconnected_gradients_variables_zeros():
    x = gt.Variable(gt.constant(1.0, shape=[2, 2]))
    y = gt.Variable(gt.constant(3.0))
    with gt.GradientTape() as g:
        g.watch([x, y])
        z = y * 2
    dz_dx = g.gradient(z, x, unconnected_gradients="zero")
    assert dz_dx.numpy().tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_unknown_unconnected_gradients_value_given():
    x = gt.constant(1.0)
    y = gt.constant(1.0)
    with gt.GradientTape() as g:
        g.watch([x, y])
        z = y * 2
    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients: 'nonsense'"):
        g.gradient(z, x, unconnected_gradients="nonsense")


def test_unconnected_gradients_nested_defun_zeros():
    @gt.function
    def f(x):
        return x * x

    @gt.function
    def h(y):
        return gt.stop_gradient(f(y))

    x = gt.constant(1.0)
    with gt.GradientTape() as g:
        g.watch(x)
        k = x + 2.0
        y = h(k)
    assert g.gradient(y, x, unconnected_gradients="zero").numpy() == 0.0


def test_empty_params_for_value_and_grad_function():
    def fn(a, b):
        return a * b

    val, (dx, dy) = val_and_grad_function(fn)(2.0, 3.0)
    assert val.numpy() == 6.0 and dx.numpy() == 3.0 and dy.numpy() == 2.0


def test_non_empty_params_for_value_and_grad_function():
    def fn(a, b):
        return a * b

    val, grads = val_and_grad_function(fn, params=[1])(2.0, 3.0)
    assert val.numpy() == 6.0 and len(grads) == 1 and grads[0].numpy() == 2.0


def test_mul_type():
    def mul(x):
        return gt.math.multiply(x, x)

    assert gradients_function(mul)(3.0)[0].numpy() == 6.0


def test_args_gradient_function():
    def f(*args):
        return args[0] * args[0]

    assert gradients_function(f)(1.0)[0].numpy() == 2.0


def test_partial():
    def f(x, y):
        return x * y

    part = functools.partial(f, gt.constant(2.0))
    assert gradients_function(part)(gt.constant(1.0))[0].numpy() == 2.0


def test_return_same_thing():
    def f(x):
        return x, 2 * x

    assert gradients_function(f)(1.0)[0].numpy() == 3.0


def test_exception_safety():
    def f(unused_x):
        raise ValueError()

    with pytest.raises(ValueError):
        gradients_function(f)(1.0)

    def real_f(x):
        return x * x

    assert gradients_function(real_f)(1.0)[0].numpy() == 2.0


def test_multi_value_convert_to_tensor():
    x = gt.Variable(initial_value=gt.constant([1.0]), name="x")

    def fn():
        a = gt.math.add(x.value(), 1.0)
        b = gt.stack([a, a], axis=0)
        return gt.math.reduce_mean(b)

    assert implicit_grad(fn)()[0][0].numpy().tolist() == [1.0]


def test_output():
    def multiout(x):
        return x + 2, x * x

    x = gt.constant([0.0, 1.0, 2.0])
    assert gradients_function(multiout)(x)[0].numpy().tolist() == [1.0, 3.0, 5.0]


def test_same_object_for_multiple_arguments():
    def f(x, y):
        return gt.math.multiply(x, y)

    g = gradients_function(f)

    def np_g(x, y):
        dx, dy = g(x, y)
        return [dx.numpy().tolist(), dy.numpy().tolist()]

    x = gt.constant(1.0)
    assert np_g(x, x) == [1.0, 1.0]
    assert np_g(1.0, 1.0) == [1.0, 1.0]
    x = gt.constant([[1.0]])
    assert np_g(x, x) == [[[1.0]], [[1.0]]]
    assert np_g([[1.0]], [[1.0]]) == [[[1.0]], [[1.0]]]
    v = gt.Variable(initial_value=1.0, name="testSameObjectForMultipleArguments.Variable")
    assert np_g(v, v) == [1.0, 1.0]


def test_implicit_gradients_custom_gradient_and_cached_variable_value():
    @gt.custom_gradient
    def my_square(x):
        result = gt.math.square(x)

        def grad(dr):
            return 2 * dr * x + 1

        return result, grad

    x = gt.Variable(initial_value=3.0, name="X")

    def f():
        return my_square(x)

    grads_and_vars = implicit_grad(f)()
    assert len(grads_and_vars) == 1
    grad, var = grads_and_vars[0]
    assert grad.numpy() == 7.0
    assert var is x


def test_jacobian_custom_gradient():
    class MyCallable:
        def __init__(self):
            self.a = gt.Variable(1.0)
            self.b = gt.Variable(2.0)
            self.c = gt.Variable(3.0)

        def __call__(self, x):
            return self.a * x * x + self.b * x + self.c

    def call(c, x):
        @gt.custom_gradient
        def _call():
            y = c(x)

            def grad(dy, variables=None):
                with gt.GradientTape(persistent=True) as g:
                    g.watch(variables)
                    y = c(x)
                grad_vars = [2 * gt.math.reduce_sum(dy * g.jacobian(y, v)) for v in variables]
                del g
                return (), grad_vars

            return y, grad

        return _call()

    c = MyCallable()
    x = gt.constant([1.0, 2.0, 3.0])
    with gt.GradientTape(persistent=True) as g:
        g.watch([c.a, c.b, c.c])
        y = call(c, x)
    assert g.gradient(y, x) is None
    # The variables get the grad_fn's gradients: 2 * sum(dy * dy/dv).
    ga, gb, gc = g.gradient(y, [c.a, c.b, c.c])
    assert [ga.numpy(), gb.numpy(), gc.numpy()] == [28.0, 12.0, 6.0]


def test_custom_gradient():
    @gt.custom_gradient
    def my_mul(x, y):
        result = x * y

        def grad(dr):
            return [dr * y, dr * x]

        return result, grad

    lr = 0.25
    x = gt.Variable(2.0, name="x")
    losses = []
    for _ in range(5):
        with gt.GradientTape() as t:
            loss = my_mul(2.0, x.read_value())
        losses.append(loss.numpy())
        for grad, var in zip(t.gradient(loss, t.watched_variables()), t.watched_variables()):
            var.assign_sub(lr * grad)
    assert losses == [4.0, 3.0, 2.0, 1.0, 0.0]


def test_custom_gradient_identity():
    @gt.custom_gradient
    def my_identity(x):
        def grad(dresult):
            return [2 * dresult]

        return x, grad

    assert gradients_function(my_identity)(1.0)[0].numpy() == 2.0


def test_differentiating_function_that_returns_none():
    def fn(x, y):
        x * y

    with pytest.raises(ValueError, match="Cannot differentiate a function that returns None"):
        with pytest.warns(UserWarning, match="floating"):
            val_and_grad_function(fn)(gt.constant(1), gt.constant(2))


def test_zeros_cache_doesnt_leak():
    def get_grad():
        t = gt.constant(1, dtype=gt.float32, shape=(10, 4))
        x = gt.constant(2, dtype=gt.float32, shape=(10, 4))
        with gt.GradientTape() as tape:
            tape.watch(x)
            x1, _ = gt.split(x, num_or_size_splits=2, axis=1)
            y1 = x1**2
            y = gt.concat([y1, t], axis=1)
        return tape.gradient(y, x).numpy()

    grad1, grad2 = get_grad(), get_grad()
    np.testing.assert_array_equal(grad1, grad2)
    np.testing.assert_array_equal(grad1, np.concatenate([np.full((10, 2), 4.0), np.zeros((10, 2))], 1))


def test_selectively_watch_variables():
    x1 = gt.Variable(1.0)
    x2 = gt.Variable(1.0)
    with gt.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x2)
        y = x1**2
        z = x2**3
    assert tape.watched_variables() == (x2,)
    dy, dz = tape.gradient([y, z], [x1, x2])
    assert dy is None
    assert dz.numpy() == 3.0


def test_differentiating_scalar_cache():
    with gt.GradientTape(persistent=False) as g:
        x1 = gt.constant(3.0)
        x2 = gt.constant(3.0)
        g.watch(x1)
        g.watch(x2)
        y = x1 + x2
    assert [v.numpy() for v in g.gradient(target=y, sources=[x1])] == [1.0]


def test_variables_and_constants_produce_the_same_gradients():
    def get_grads(a, b):
        with gt.GradientTape() as tape:
            tape.watch([a, b])
            y = a**3
            z = b**2
        return [g.numpy() for g in tape.gradient([y, z], [a, b])]

    assert get_grads(gt.constant(2.0), gt.constant(2.0)) == get_grads(gt.Variable(2.0), gt.Variable(2.0))


def test_custom_gradient_in_eager_and_graph():
    @gt.custom_gradient
    def f(x):
        y = x * x

        def grad(dy):
            return [4 * dy]

        return y, grad

    with gt.GradientTape() as t:
        c = gt.constant(1.0)
        t.watch(c)
        g = f(c)
    assert t.gradient(g, c).numpy() == 4.0


def test_override_second_order_with_custom_gradient():
    @gt.custom_gradient
    def f(x):
        def first_order_grad(dz):
            @gt.custom_gradient
            def first_order_custom(unused_x):
                def h(ddz):
                    return -2.1 * ddz

                return -1.1, h

            return dz * first_order_custom(x)

        return x + 10.0, first_order_grad

    c = gt.constant(1.0)
    with gt.GradientTape() as outer:
        outer.watch(c)
        with gt.GradientTape() as inner:
            inner.watch(c)
            d = f(c) ** 4.0
        dd = inner.gradient(d, c)
        np.testing.assert_allclose(dd.numpy(), 4.0 * f(c).numpy() ** 3.0 * -1.1, rtol=1e-6)
    fc = f(c).numpy()
    np.testing.assert_allclose(
        outer.gradient(dd, c).numpy(), 3.0 * 4.0 * fc**2.0 * -1.1 * -1.1 + 4.0 * fc**3.0 * -2.1, rtol=1e-6
    )


def test_custom_gradient_forwardprop():
    @gt.custom_gradient
    def f(x):
        z = 2.0 * gt.get_static_value(x)

        def g(dz):
            @gt.custom_gradient
            def first_order(unused_x, unused_dz):
                def second_order_and_transpose(unused_ddz):
                    return 2.2, 3.1

                return 2.1, second_order_and_transpose

            return first_order(x, dz)

        return z, g

    with gt.GradientTape(persistent=True) as t:
        with gt.GradientTape() as tt:
            c = gt.constant(1.0)
            t.watch(c)
            tt.watch(c)
            output_grad = gt.ones([])
            t.watch(output_grad)
            output = f(c)
            np.testing.assert_allclose(output.numpy(), 2.0)
        gc_ = tt.gradient(output, c, output_gradients=output_grad)
        np.testing.assert_allclose(gc_.numpy(), 2.1)
    np.testing.assert_allclose(t.gradient(gc_, c).numpy(), 2.2)
    np.testing.assert_allclose(t.gradient(gc_, output_grad).numpy(), 3.1)


def test_watch_bad_thing():
    g = gt.GradientTape()
    with pytest.raises(ValueError, match="ndarray"):
        g.watch(np.array(1.0))


def test_watched_variables_after_non_persistent_gradient_call():
    with gt.GradientTape(persistent=False) as tape:
        x = gt.Variable(1.0)
        tape.watch(x)
    tape.gradient(x, x)
    assert tape.watched_variables() == (x,)


def test_watched_variables_only_has_variables_from_last_tape():
    with gt.GradientTape(persistent=False) as tape:
        x = gt.Variable(1.0)
        tape.watch(x)
    with gt.GradientTape(persistent=False) as tape:
        z = gt.Variable(2.0)
        tape.watch(z)
    tape.gradient(z, z)
    assert tape.watched_variables() == (z,)


def test_watched_variables_respect_reset():
    with gt.GradientTape(persistent=False) as tape:
        x = gt.Variable(1.0)
        tape.watch(x)
        assert tape.watched_variables() == (x,)
        tape.reset()
        z = gt.Variable(2.0)
        tape.watch(z)
        assert tape.watched_variables() == (z,)
    tape.gradient(z, z)
    assert tape.watched_variables() == (z,)


def test_recompute_grad_with_different_shape():
    @gt.recompute_grad
    def outer(x):
        return [x[0] + 1, x[1] + 1]

    x = [gt.Variable([1.0, 2.0], name="a"), gt.Variable(1.0, name="b")]
    with gt.GradientTape():
        y = outer(x)
        assert y[0].numpy().tolist() == [2.0, 3.0]
        assert y[1].numpy() == 2.0

    @gt.recompute_grad
    def outer_dict(x):
        for key in x.keys():
            x[key] = x[key] + 1
        return x

    x = {x[0].ref(): x[0], x[1].ref(): x[1]}
    with gt.GradientTape():
        y = outer_dict(x)
        y = list(y.values())
        assert y[0].numpy().tolist() == [2.0, 3.0]
        assert y[1].numpy() == 2.0


@pytest.mark.parametrize("reduce_retracing", [True, False])
def test_recompute_grad_with_nested_function_and_while_loop(reduce_retracing):
    @gt.recompute_grad
    @gt.function(reduce_retracing=reduce_retracing)
    def outer(x):
        @gt.function(reduce_retracing=reduce_retracing)
        def middle(y):
            @gt.function(reduce_retracing=reduce_retracing)
            def inner(z):
                return z + 1

            i = gt.constant(0.0)
            y, i = gt.while_loop(lambda y, i: i < 10.0, lambda y, i: (inner(y), i + 1.0), [y, i])
            return y

        return middle(x)

    for _ in range(5):
        x = gt.Variable(1.0, name="x")
        with gt.GradientTape() as t:
            y = outer(x)
            assert y.numpy() == 11.0
        assert t.gradient(y, x).numpy() == 1.0


# --- JacobianTest ---------------------------------------------------------------------


def _jacobian(experimental_use_pfor):
    persistent = not experimental_use_pfor
    with gt.GradientTape(persistent=persistent) as g:
        x = gt.constant([1.0, 2.0])
        y = gt.constant([3.0, 4.0])
        g.watch(x)
        g.watch(y)
        z = x * x * y
    jacobian = g.jacobian(z, [x, y], experimental_use_pfor=experimental_use_pfor)
    answer = [gt.linalg.diag(2 * x * y), gt.linalg.diag(x * x)]
    return jacobian, answer


@pytest.mark.parametrize("use_pfor", [True, False], ids=["Pfor", "WhileLoop"])
@pytest.mark.parametrize("defun", [False, True], ids=["eager", "Defun"])
def test_jacobian(use_pfor, defun):
    def f():
        return _jacobian(use_pfor)

    if defun:
        f = gt.function(f)
    jacobian, answer = f()
    for j, a in zip(jacobian, answer):
        np.testing.assert_array_equal(a.numpy(), j.numpy())


def test_jacobian_persistent_tape():
    with gt.GradientTape() as g:
        x = gt.constant([1.0, 2.0])
        g.watch(x)
        y = x * x
    with pytest.raises(RuntimeError, match="persistent"):
        g.jacobian(y, x, experimental_use_pfor=False)


def test_jacobian_parallel_iterations():
    with gt.GradientTape(persistent=True) as g:
        x = gt.constant([[1.0, 2], [3, 4]])
        g.watch(x)
        y = gt.matmul(x, x)
    np.testing.assert_allclose(
        g.jacobian(y, x, parallel_iterations=2).numpy(), g.jacobian(y, x, parallel_iterations=3).numpy()
    )


def test_nested_jacobian():
    x = gt.ones((10, 2))
    with gt.GradientTape(persistent=False) as g:
        g.watch(x)
        with gt.GradientTape(persistent=False) as gg:
            gg.watch(x)
            y = gt.math.reduce_sum(gt.math.square(x))
        dy_x = gg.jacobian(y, x)
    dy_xx = g.batch_jacobian(dy_x, x)
    np.testing.assert_allclose(dy_xx.numpy(), [[[2.0, 0], [0, 2.0]]] * 10)


def test_nested_batch_jacobian_foldl():
    def _grad(f):
        def _grad_function(primal):
            with gt.GradientTape() as tape:
                tape.watch(primal)
                primal_out = f(primal)
            return tape.batch_jacobian(primal_out, primal)

        return _grad_function

    def _func(x):
        return gt.reshape(gt.foldl(lambda a, b: gt.math.cos(a + b), gt.transpose(x)), [1, 1])

    f = _func
    x = gt.constant([[1.0, 2.0]])
    for _ in range(2):
        theoretical, numerical = gt.test.compute_gradient(f, [x])
        np.testing.assert_allclose(theoretical, numerical, rtol=1e-3)
        f = _grad(f)
        expected_flat = np.reshape(numerical, [-1])
        np.testing.assert_allclose(expected_flat, np.reshape(f(x).numpy(), [-1]), rtol=1e-3)
        np.testing.assert_allclose(expected_flat, np.reshape(gt.function(f)(x).numpy(), [-1]), rtol=1e-3)


def test_jacobian_indexed_slices():
    with gt.GradientTape(persistent=True) as g:
        inp = gt.random.uniform([3, 2], seed=1)
        g.watch(inp)
        output = gt.nn.embedding_lookup(inp, [0, 2])
    a = g.jacobian(output, inp, experimental_use_pfor=True).numpy()
    b = g.jacobian(output, inp, experimental_use_pfor=False).numpy()
    np.testing.assert_allclose(a, b)
    assert a.shape == (2, 2, 3, 2)
    assert a[1, 0, 2, 0] == 1.0 and a.sum() == 4.0


def test_foldl_partial_function():
    x = gt.zeros([3])
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        result = gt.function(functools.partial(gt.foldl, lambda a, b: a + b))(x)
    for pfor in (True, False):
        np.testing.assert_allclose(tape.jacobian(result, x, experimental_use_pfor=pfor).numpy(), [1.0, 1.0, 1.0])
    x = gt.zeros([3])
    with gt.GradientTape() as tape:
        tape.watch(x)
        result = gt.function(functools.partial(gt.foldl, lambda a, b: a + b))(x)
    np.testing.assert_allclose(tape.jacobian(result, x, experimental_use_pfor=True).numpy(), [1.0, 1.0, 1.0])


def test_foldl_pure_function():
    @gt.function
    def compute_jacobian(use_pfor):
        x = gt.zeros([3])
        with gt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            result = functools.partial(gt.foldl, lambda a, b: a + b)(x)
        return tape.jacobian(result, x, experimental_use_pfor=use_pfor)

    a, b = compute_jacobian(use_pfor=True), compute_jacobian(use_pfor=False)
    np.testing.assert_allclose(a.numpy(), b.numpy())
    np.testing.assert_allclose(a.numpy(), [1.0, 1.0, 1.0])


def test_cond_func_grad_jacobian():
    @gt.function
    def f(x):
        return gt.cond(x > 0.0, lambda: x**3.0, lambda: x**2.0)

    with gt.GradientTape(persistent=True) as tape:
        x = gt.constant(1.0)
        tape.watch(x)
        y = f(x)
        grad = tape.gradient(y, x)
    np.testing.assert_allclose(grad.numpy(), 3.0)
    np.testing.assert_allclose(tape.jacobian(grad, x, experimental_use_pfor=False).numpy(), 6.0)
    np.testing.assert_allclose(tape.jacobian(grad, x, experimental_use_pfor=True).numpy(), 6.0)


def test_empty_tensor_consistent_jacobian():
    variable = gt.Variable(1.0)
    rng = np.random.default_rng(0)
    inputs = (gt.constant(rng.uniform(size=(0, 4))), gt.constant(rng.uniform(size=(0, 3))))
    with gt.GradientTape(persistent=True) as tape:
        outputs = variable * gt.cast(gt.concat(inputs, axis=-1), gt.float32)
    a = tape.jacobian(outputs, variable, experimental_use_pfor=True)
    b = tape.jacobian(outputs, variable, experimental_use_pfor=False)
    assert a.shape == b.shape == (0, 7)


# --- BatchJacobianTest ----------------------------------------------------------------


def _batch_jacobian(experimental_use_pfor):
    persistent = not experimental_use_pfor
    with gt.GradientTape(persistent=persistent) as g:
        x = gt.constant([[1.0, 2.0], [3.0, 4.0]])
        y = gt.constant([[3.0, 4.0], [5.0, 6.0]])
        g.watch(x)
        z = x * x * y
    batch_jacobian = g.batch_jacobian(z, x, experimental_use_pfor=experimental_use_pfor)
    answer = gt.stack([gt.linalg.diag(2 * x[0] * y[0]), gt.linalg.diag(2 * x[1] * y[1])])
    return batch_jacobian, answer


@pytest.mark.parametrize("use_pfor", [True, False], ids=["Pfor", "WhileLoop"])
@pytest.mark.parametrize("defun", [False, True], ids=["eager", "Defun"])
def test_batch_jacobian(use_pfor, defun):
    def f():
        return _batch_jacobian(use_pfor)

    if defun:
        f = gt.function(f)
    batch_jacobian, answer = f()
    np.testing.assert_array_equal(answer.numpy(), batch_jacobian.numpy())


def test_batch_jacobian_persistent_tape():
    with gt.GradientTape() as g:
        x = gt.constant([[1.0, 2.0]])
        g.watch(x)
        y = x * x
    with pytest.raises(RuntimeError, match="persistent"):
        g.batch_jacobian(y, x, experimental_use_pfor=False)


def test_batch_jacobian_bad_shape():
    x = gt.random.uniform([2, 3])
    with gt.GradientTape() as g:
        y = gt.concat([x, x], axis=0)
    with pytest.raises(ValueError, match="Need first dimension"):
        g.batch_jacobian(y, x)


def test_batch_jacobian_bad_input_rank():
    x = gt.random.uniform([2])
    with gt.GradientTape() as g:
        y = gt.random.uniform([2, 2])
    with pytest.raises(ValueError, match="must have rank at least 2"):
        g.batch_jacobian(y, x)


def test_batch_jacobian_bad_output_rank():
    x = gt.random.uniform([2, 2])
    with gt.GradientTape() as g:
        y = gt.random.uniform([2])
    with pytest.raises(ValueError, match="must have rank at least 2"):
        g.batch_jacobian(y, x)


def test_batch_jacobian_parallel_iterations():
    with gt.GradientTape(persistent=True) as g:
        x = gt.constant([[1.0, 2], [3, 4]])
        g.watch(x)
        w = gt.constant([[1.0, 2, 3, 4], [5, 6, 7, 8]])
        y = gt.matmul(x, w)
    np.testing.assert_allclose(
        g.batch_jacobian(y, x, parallel_iterations=2).numpy(),
        g.batch_jacobian(y, x, parallel_iterations=3).numpy(),
    )


@pytest.mark.parametrize("use_function", [True, False])
@pytest.mark.parametrize("use_pfor", [True, False])
def test_batch_jacobian_degenerate_shape(use_function, use_pfor):
    def f(x):
        with gt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x**2
        return tape.batch_jacobian(y, x, experimental_use_pfor=use_pfor)

    if use_function:
        f = gt.function(f)
    assert gt.shape(f(gt.zeros([1, 0]))).numpy().tolist() == [1, 0, 0]


@pytest.mark.parametrize("use_pfor", [True, False])
def test_batch_jacobian_zeros_type_correct(use_pfor):
    for dtype in [gt.float32, gt.float64]:

        @gt.function
        def f(x, dtype=dtype):
            del x
            return gt.constant([[1.0]], dtype=dtype)

        for how in ("none", "zero"):
            with gt.GradientTape(persistent=True) as tape:
                x = gt.constant([[2.0]], dtype=dtype)
                tape.watch(x)
                y = f(x)
            jac = tape.batch_jacobian(y, x, unconnected_gradients=how, experimental_use_pfor=use_pfor)
            assert jac.dtype == dtype and jac.numpy().tolist() == [[[0.0]]]


def test_batch_jacobian_strided_slice():
    x = gt.ones([2, 4, 2])
    length = gt.constant([2, 3, 4, 4], dtype=gt.int64)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.repeat(x, [2], axis=1)
        y = y[:, : gt.reduce_max(length), :]
    j = tape.batch_jacobian(y, x)
    assert j.shape == (2, 4, 2, 4, 2)
    # y[b, i] = x[b, i // 2]: one 1 per output element.
    assert j.numpy().sum() == 16.0 and j.numpy()[1, 3, 1, 1, 1] == 1.0


def test_batch_jacobian_unconnected():
    # TF keeps an older behaviour here: zeros of the target's dtype for an unconnected
    # target, whatever `unconnected_gradients` says.
    x = gt.constant([[1.0, 2.0], [3.0, 4.0]])
    with gt.GradientTape(persistent=True) as g:
        g.watch(x)
        y = gt.constant([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]])
    for how in ("none", "zero"):
        z = g.batch_jacobian(y, x, unconnected_gradients=how)
        assert z.shape == (2, 3, 2) and z.dtype == gt.float32 and not z.numpy().any()


# --- not ported -----------------------------------------------------------------------

NOT_PORTED = {
    "testGradientInsideLoop": "graph mode (ops.Graph, v1 while_loop)",
    "testGPU": "no GPU",
    "testGPUImplicitGrad": "no GPU",
    "testTensorCopyGPU2CPU2GPU": "no GPU",
    "testTensorCopyCPU2GPU2CPU": "no GPU",
    "testInvalidRecordOperationMessage": "tape_lib.record_operation is private",
    "testGetAttrType": "TF op attributes",
    "testGetAttrList": "TF op attributes",
    "testMakeAttrType": "TF op attributes",
    "testMakeAttrTypeList": "TF op attributes",
    "testMakeAttrShape": "TF op attributes",
    "testMakeAttrShapeList": "TF op attributes",
    "testUnknownShapes": "graph mode placeholders",
    "testWatchComposite": "no SparseTensor",
    "testNameScope": "no name scopes in traced graphs",
}


def test_backprop_not_ported():
    assert all(NOT_PORTED.values())


# --- weak references, identity of conversion ------------------------------------------


def test_weakref_to_tensor_and_variable():
    t = gt.constant(1.0)
    v = gt.Variable(1.0)
    rt, rv = weakref.ref(t), weakref.ref(v)
    assert rt() is t and rv() is v
    del t, v
    gc.collect()
    assert rt() is None and rv() is None


def test_convert_to_tensor_of_a_tensor_is_the_tensor():
    t = gt.constant([1.0, 2.0])
    assert gt.convert_to_tensor(t) is t
    assert gt.convert_to_tensor(t, dtype=gt.float32) is t


# --- testMultiValuePreservesIfNotDiffedAgainst, testMaxPooling3DGradient ----------------


def test_multi_value_preserves_if_not_diffed_against():
    def tfe_conv2d(timage, tkernel, conv2dstrides):
        return gt.nn.conv2d(timage, tkernel, conv2dstrides, "SAME")

    i = gt.constant([[[[1.0]]]])
    k = gt.constant([[[[2.0]]]])
    s = [1, 1, 1, 1]
    grad = gradients_function(tfe_conv2d, params=(0,))(i, k, s)[0]
    assert grad.numpy().tolist() == [[[[2.0]]]]


def test_max_pooling_3d_gradient():
    def forward(a):
        return gt.nn.max_pool3d(a, ksize=(2, 2, 1), strides=(1, 1, 1), padding="SAME")

    input_sizes = [1, 3, 2, 4, 1]
    x = np.arange(1, np.prod(input_sizes) + 1, dtype=np.float32)
    aa = gt.reshape(gt.constant(x), input_sizes)
    (da,) = gradients_function(forward)(aa)
    # TF 2.21's gradient (its graph-mode half compares with tf.gradients).
    want = [0.0] * 12 + [2.0] * 4 + [0.0] * 4 + [4.0] * 4
    assert da.numpy().reshape(-1).tolist() == want


# --- AggregateIndexedSlicesGradientsTest ------------------------------------------------
# TF's backprop.aggregate_indexed_slices_gradients is private; it is what the tape does
# when several gradients reach one tensor. Each gradient enters here as the output
# gradient of its own read of one source (an IndexedSlices through a gather of its
# rows, a tensor through an identity), and the tape aggregates them.


def _as_indexed_slices(t):
    """TF's ``math_ops._as_indexed_slices``: every row, at its own index."""
    n = t.shape[0]
    return gt.IndexedSlices(t, gt.range(n), gt.constant(list(t.shape)))


def _aggregate(grads):
    x = gt.zeros([3, 2])
    targets, ogs = [], []
    with gt.GradientTape() as t:
        t.watch(x)
        for g in grads:
            if g is None:
                continue
            if isinstance(g, gt.IndexedSlices):
                targets.append(gt.gather(x, g.indices))
                ogs.append(g.values)
            else:
                targets.append(gt.identity(x))
                ogs.append(g)
    return t.gradient(targets, x, output_gradients=ogs)


def _assert_indexed_slices_equal(left, right):
    np.testing.assert_array_equal(gt.convert_to_tensor(left).numpy(), gt.convert_to_tensor(right).numpy())


def test_aggregate_no_gradients():
    assert _aggregate([]) is None


def test_aggregate_one_gradient():
    t = _as_indexed_slices(gt.constant([[1.0, 2.0], [0, 0], [3.0, 4.0]]))
    result = _aggregate([t])
    assert isinstance(result, gt.IndexedSlices)
    _assert_indexed_slices_equal(t, result)


def test_aggregate_multiple_gradients():
    t0 = _as_indexed_slices(gt.constant([[1.0, 2.0], [0, 0], [3.0, 4.0]]))
    t1 = _as_indexed_slices(gt.constant([[0.0, 0.0], [5, 6], [7.0, 8.0]]))
    total = gt.constant([[1.0, 2.0], [5, 6], [10.0, 12.0]])
    result = _aggregate([t0, t1])
    assert isinstance(result, gt.IndexedSlices)  # concatenated, as TF
    assert result.indices.numpy().shape == (6,)
    _assert_indexed_slices_equal(total, result)


def test_aggregate_multiple_gradients_with_nones():
    t0 = _as_indexed_slices(gt.constant([[1.0, 2.0], [0, 0], [3.0, 4.0]]))
    t1 = _as_indexed_slices(gt.constant([[0.0, 0.0], [5, 6], [7.0, 8.0]]))
    total = gt.constant([[1.0, 2.0], [5, 6], [10.0, 12.0]])
    _assert_indexed_slices_equal(total, _aggregate([t0, t1, None]))


def test_aggregate_mixed_tensor_and_indexed_slices():
    t0 = _as_indexed_slices(gt.constant([[1.0, 2.0], [0, 0], [3.0, 4.0]]))
    t1 = gt.constant([[0.0, 0.0], [5, 6], [7.0, 8.0]])
    total = gt.constant([[1.0, 2.0], [5, 6], [10.0, 12.0]])
    result = _aggregate([t0, t1])
    assert isinstance(result, gt.Tensor)  # dense when mixed, as TF
    _assert_indexed_slices_equal(total, result)


def test_grad_jacobian_conv():
    def _inner(x):
        kernel = gt.ones([3, 3, 1, 9])
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = gt.nn.conv2d(x, kernel, strides=(1, 1), padding="SAME", data_format="NHWC")
            reduced = gt.reduce_sum(y**2.0, axis=[2, 3])
        return gt.reduce_sum(tape.batch_jacobian(reduced, x))

    theoretical, numerical = gt.test.compute_gradient(gt.function(_inner), [gt.ones([10, 4, 4, 1])])
    np.testing.assert_allclose(numerical, theoretical, rtol=1e-1)
    assert np.abs(theoretical[0]).max() > 1.0

    @gt.function
    def _outer():
        with gt.GradientTape() as tape:
            x = gt.ones([10, 4, 4, 1])
            tape.watch(x)
            y = _inner(x)
        return tape.gradient(y, x)

    np.testing.assert_allclose(np.reshape(numerical, [-1]), np.reshape(_outer().numpy(), [-1]), rtol=1e-1)


def test_an_unwatched_tensor_read_beside_a_watched_one_has_no_gradient():
    # TF's tape follows only the tensors on it: `c` was never watched and no recorded op
    # made it, so dy/dc is None (zeros when asked), though `x * c` was recorded for `x`.
    x, c = gt.constant([1.0, 2.0]), gt.constant(0.75)
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        h = x * c
        y = gt.reduce_sum(h * h)
    assert t.gradient(y, c) is None
    gx, gc, gh = t.gradient(y, [x, c, h], unconnected_gradients=gt.UnconnectedGradients.ZERO)
    np.testing.assert_allclose(gx.numpy(), [2 * 0.75 * 0.75 * 1.0, 2 * 0.75 * 0.75 * 2.0])
    assert gc.numpy() == 0.0
    np.testing.assert_allclose(gh.numpy(), [1.5, 3.0])  # made by a recorded op: on the tape
