"""TensorFlow's ``tensorflow/python/eager/polymorphic_function/gradients_test.py``,
ported to gradtape (issue 13): gradients through ``gt.function`` calls, at every order,
under persistent, nested and inner tapes.

One test per TF test within gradtape's scope, same name in snake case, same logic with
``tf`` → ``gt``; TF's private helpers come from ``test_backprop_tf``. Not ported: the
graph-mode tests (``ops.Graph``, sessions, placeholders, ``gradients_impl.gradients``
on graph tensors: ``testGraphGradientVariable``, ``testSymbolicHigherOrder``,
``testSymbolicHigherOrderUnderTape``, ``testSymGradGatherNd``,
``testNoSymGradNestedDefun``, ``testGraphLoopGradientInsideSession``,
``testSymbolicGradientVariableNoneNotZerosLike``, ``testGraphModeEagerGradError``, the
``TFGradient`` variants and ``...MultipleTFGrads``).
"""

import numpy as np
import pytest
from test_backprop_tf import gradients_function, implicit_grad

import gradtape as gt

_COS_DERIVATIVES = [
    gt.cos,
    lambda x: -gt.sin(x),
    lambda x: -gt.cos(x),
    gt.sin,
    gt.cos,
]


def _close(expected, got, rtol=1e-6):
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=rtol, atol=1e-6)


def _gradient_step():
    """A traced step returning the gradient of v² at v = 1 (TF's two graph-function
    tests share it)."""
    v = gt.Variable(1.0, name="v")

    @gt.function
    def step():
        def inner():
            return v * v

        return implicit_grad(inner)()[0][0]

    return step


def test_graph_mode_with_gradients():
    assert float(_gradient_step()()) == 2.0


def test_iterated_gradients_nested():
    def _grad(f):
        def _grad_function(primal):
            with gt.GradientTape() as tape:
                tape.watch(primal)
                primal_out = f(primal)
            return tape.gradient(primal_out, primal)

        return _grad_function

    @gt.function
    def _forward(x):
        return gt.cos(x)

    f = _forward
    traced_f = gt.function(f)
    one = gt.constant(1.0)
    for expected in _COS_DERIVATIVES:
        _close(expected(one), f(one))
        _close(expected(one), traced_f(one))
        _close(expected(one), gt.function(f)(one))
        f = _grad(f)
        traced_f = gt.function(_grad(traced_f))


def test_iterated_gradients_nested_with_variable():
    def _grad(f):
        def _grad_function():
            with gt.GradientTape() as tape:
                primal_out = f()
            (g,) = tape.gradient(primal_out, tape.watched_variables())
            return g

        return _grad_function

    v = gt.Variable(2.0)

    @gt.function
    def _forward():
        return gt.cos(v)

    f = _forward
    two = gt.constant(2.0)
    for expected in _COS_DERIVATIVES:
        _close(expected(two), f())
        _close(expected(two), gt.function(f)())
        f = _grad(f)


def test_iterated_gradients_persistent():
    @gt.function
    def _forward(z):
        return gt.cos(z)

    with gt.GradientTape(persistent=True) as tape:
        start = gt.constant(1.0)
        tape.watch(start)
        x = _forward(start)
        assert tape._num_nodes == 1  # the call is one node of the persistent tape
        for expected in _COS_DERIVATIVES:
            _close(expected(start), x)
            x = tape.gradient(x, start)


def test_higher_order_with_variable():
    v = gt.Variable(1.0)

    @gt.function
    def _forward():
        return gt.cos(v)

    with gt.GradientTape(persistent=True) as tape:
        x = _forward()
        for expected in _COS_DERIVATIVES:
            _close(expected(gt.constant(1.0)), x)
            (x,) = tape.gradient(x, tape.watched_variables())


def test_gradients_chained():
    @gt.function
    def _forward(z):
        return gt.cos(z)

    x = gt.constant(1.0)
    with gt.GradientTape() as t:
        t.watch(x)
        y = _forward(x)
    with gt.GradientTape() as tt:
        doutputs = gt.constant(2.0)
        tt.watch(doutputs)
        g = t.gradient(y, x, doutputs)
    _close(-2.0 * gt.sin(x), g)
    gg = tt.gradient(g, doutputs)
    # Linear in the output gradient.
    _close(-gt.sin(x), gg)


def test_graph_function_with_gradients():
    step_op = _gradient_step().get_concrete_function()
    assert step_op.output_dtypes == gt.float32
    assert step_op.output_shapes == gt.TensorShape([])
    assert float(step_op()) == 2.0


def test_defun_cond_gradient():
    @gt.function
    def f(x):
        return gt.cond(x > 0.5, lambda: 2 * x, lambda: 3 * x)

    with gt.GradientTape() as t:
        x = gt.constant(1.0)
        t.watch(x)
        y = f(x)
    assert float(t.gradient(y, x)) == 2.0


def test_graph_loop_gradient():
    @gt.function
    def f(x):
        return gt.while_loop(lambda _, i: i < 2, lambda x, i: (2 * x, i + 1), [x, 0])[0]

    with gt.GradientTape() as t:
        x = gt.constant(1.0)
        t.watch(x)
        y = f(x)
    assert float(t.gradient(y, x)) == 4.0


def test_defun_differentiable():
    v = gt.Variable(1.0)

    @gt.function
    def f():
        return v * v

    assert float(implicit_grad(f)()[0][0]) == 2.0


def test_defun_can_be_differentiated_twice():
    v = gt.Variable(1.0)

    @gt.function
    def f():
        return v * v

    assert float(implicit_grad(f)()[0][0]) == 2.0
    # v is watched again.
    assert float(implicit_grad(f)()[0][0]) == 2.0


def test_defun_call_backprop():
    @gt.function
    def f(x):
        return gt.add(x, x)

    @gt.function
    def g(x):
        return gradients_function(f, [0])(x)[0]

    assert float(g(gt.constant(2.0))) == 2.0


def test_defun_call_backprop_using_same_object_for_multiple_arguments():
    @gt.function
    def g(x):
        return gradients_function(gt.multiply, [0, 1])(x, x)

    def np_g(x):
        return [d.numpy() for d in g(x)]

    x = gt.constant(1.0)
    assert np_g(x) == [1.0, 1.0]
    assert np_g(1.0) == [1.0, 1.0]


def test_gradient_tensor_conversion_with_defun():
    three = gt.Variable(3.0, name="v")

    @gt.function
    def f(x):
        return gt.add(x, three)

    def g(x):
        return f(x)

    g = implicit_grad(g)(gt.constant(1.0))[0][0]
    assert float(g) == 1.0


def test_gradient():
    matmul = gt.function(gt.matmul)

    def sq(x):
        return matmul(x, x, transpose_a=True)

    t = gt.constant([[1.0, 2.0], [3.0, 4.0]])
    (grad_t,) = gradients_function(sq, [0])(t)
    assert grad_t.numpy().tolist() == [[6, 6], [14, 14]]


def test_gradient_in_function():
    @gt.function
    def f(x):
        return gradients_function(lambda y: y * y, [0])(x)[0]

    assert float(f(gt.constant(1.0))) == 2.0


def test_gradient_of_gather_with_defun():
    v = gt.Variable([0.0, 1.0, 2.0])

    def sum_gather():
        return gt.reduce_sum(gt.gather(v, [1, 2]))

    gradient = implicit_grad(sum_gather)()
    defun_gradient = implicit_grad(gt.function(sum_gather))()
    assert len(gradient) == len(defun_gradient)
    gradient, defun_gradient = gradient[0][0], defun_gradient[0][0]
    # As TF: both IndexedSlices, with equal rows.
    assert isinstance(gradient, gt.IndexedSlices)
    assert isinstance(defun_gradient, gt.IndexedSlices)
    assert gradient.values.numpy().tolist() == defun_gradient.values.numpy().tolist()
    assert gradient.indices.numpy().tolist() == defun_gradient.indices.numpy().tolist()
    assert list(gradient.dense_shape.numpy()) == list(defun_gradient.dense_shape.numpy())


def test_differentiable_function_none_outputs():
    @gt.function
    def my_function(x):
        return x, None

    def wrapper(x):
        return my_function(x)[0]

    g = gradients_function(wrapper, [0])(gt.constant(0.0))
    assert float(g[0]) == 1.0

    @gt.function
    def foo(a):
        return None, a * a

    x = gt.constant(5.0)
    with gt.GradientTape() as tp:
        tp.watch(x)
        none, r = foo(x)
    g = tp.gradient(r, x)
    assert none is None
    assert float(r) == 25.0
    assert float(g) == 10.0


def test_nested_differentiable_function():
    @gt.function
    def inner_fn(a, b):
        return a * gt.add(a, b)

    @gt.function
    def outer_fn(x):
        return inner_fn(x, 1.0)

    x = gt.constant(5.0)
    with gt.GradientTape() as tp:
        tp.watch(x)
        result = outer_fn(x)
    assert float(tp.gradient(result, x)) == 11.0


def _inner_middle_outer(b):
    @gt.function
    def inner_inner_fn(a, b):
        return gt.add(a, b)

    @gt.function
    def inner_fn(a, b):
        return inner_inner_fn(a, b)

    @gt.function
    def middle_fn(a, b):
        return a * inner_fn(a, b)

    @gt.function
    def outer_fn(x):
        return middle_fn(x, b)

    return inner_fn, middle_fn, outer_fn


def test_deeply_nested_differentiable_function():
    _, _, outer_fn = _inner_middle_outer(1.0)
    x = gt.constant(5.0)
    with gt.GradientTape() as tp:
        tp.watch(x)
        result = outer_fn(x)
    assert float(tp.gradient(result, x)) == 11.0


@pytest.mark.parametrize("with_variable", [False, True])
def test_deeply_nested_differentiable_function_with_multiple_grad_calls(with_variable):
    # TF's ...WithMultipleGradCalls and ...WithVariableMultipleGradCalls.
    b = gt.Variable(3.0) if with_variable else 3.0
    inner_fn, middle_fn, outer_fn = _inner_middle_outer(b)
    x = gt.constant(5.0)
    assert float(outer_fn(x)) == 40.0
    for _ in range(2):
        with gt.GradientTape() as tp:
            tp.watch(x)
            result = outer_fn(x)
        assert float(tp.gradient(result, x)) == 13.0
        assert float(outer_fn(x)) == 40.0
        assert float(middle_fn(b, x)) == 24.0
    y = gt.constant(4.0)
    with gt.GradientTape() as tp:
        tp.watch(y)
        result = outer_fn(y)
    assert float(tp.gradient(result, y)) == 11.0
    if with_variable:
        b.assign(1.5)
        with gt.GradientTape() as tp:
            tp.watch(y)
            result = outer_fn(y)
        assert float(tp.gradient(result, y)) == 9.5
    with gt.GradientTape() as tp:
        tp.watch(y)
        result = inner_fn(y, b if with_variable else y)
    assert float(tp.gradient(result, y)) == (1.0 if with_variable else 2.0)


@pytest.mark.parametrize("depth", [0, 1, 2])
def test_deeply_nested_differentiable_function_gradient_tape_in_defun(depth):
    # TF's ...GradientTapeInDefun, ...InNestedDefun, ...InMultNestedDefun.
    _, middle_fn, _ = _inner_middle_outer(1.0)

    @gt.function
    def almost_outer_fn(x):
        with gt.GradientTape() as tp:
            tp.watch(x)
            result = middle_fn(x, 1.0)
        return tp.gradient(result, x)

    fn = almost_outer_fn
    for _ in range(depth):
        fn = gt.function(lambda x, fn=fn: fn(x))
    assert float(fn(gt.constant(5.0))) == 11.0


def test_deeply_nested_differentiable_function_with_variable():
    var = gt.Variable(1.0)
    _, _, outer_fn = _inner_middle_outer(var)
    x = gt.constant(5.0)
    with gt.GradientTape() as tp:
        tp.watch(x)
        result = outer_fn(x)
    assert float(tp.gradient(result, x)) == 11.0


def test_nested_differentiable_function_none_outputs():
    @gt.function
    def foo(a, b):
        return None, a * gt.add(a, b), None, 2 * a

    @gt.function
    def bar(x):
        return foo(x, 1.0)

    x = gt.constant(5.0)
    with gt.GradientTape(persistent=True) as tp:
        tp.watch(x)
        none1, r1, none2, r2 = bar(x)
    g1 = tp.gradient(r1, x)
    g2 = tp.gradient(r2, x)
    assert float(r1) == 30.0 and float(r2) == 10.0
    assert none1 is None and none2 is None
    assert float(g1) == 11.0 and float(g2) == 2.0


def test_gradient_with_keyword_arguments():
    matmul = gt.function(gt.matmul)

    def sq(x):
        return matmul(a=x, b=x, transpose_a=True)

    t = gt.constant([[1.0, 2.0], [3.0, 4.0]])
    (grad_t,) = gradients_function(sq, [0])(t)
    assert grad_t.numpy().tolist() == [[6, 6], [14, 14]]
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(t)
        one = matmul(t, b=t, transpose_a=True)
        two = matmul(b=t, a=t, transpose_a=True)
        three = matmul(a=t, b=t, transpose_a=True)
    for output in [one, two, three]:
        assert tape.gradient(output, t).numpy().tolist() == [[6, 6], [14, 14]]


def test_gradient_in_function_with_keyword_arguments():
    @gt.function
    def f(x):
        return gradients_function(lambda y: y * y, [0])(x)[0]

    assert float(f(x=gt.constant(1.0))) == 2.0


def test_function_has_no_second_order_gradient():
    v = gt.Variable(1.0)

    @gt.function
    def f(labels, logits):
        return gt.function(gt.nn.sparse_softmax_cross_entropy_with_logits)(labels=labels, logits=logits + v)

    @gt.function
    def f_grad():
        with gt.GradientTape() as tape:
            logits = gt.constant([1.0, 2.0])
            tape.watch(logits)
            out = f(gt.constant(1), logits)
        return tape.gradient(out, logits)

    g = f_grad()
    assert g.shape == [2]
    # softmax([1, 2]) - onehot(1)
    p = np.exp([1.0, 2.0]) / np.exp([1.0, 2.0]).sum()
    _close(p - [0.0, 1.0], g)
