"""Port of TensorFlow's tensorflow/python/ops/gradients_test.py (custom_gradient,
recompute_grad, grad_pass_through, stop_gradient, UnconnectedGradients and the
gradient tests expressible with a GradientTape) to gradtape.

Graph-mode `gradients.gradients` calls are re-expressed with `gt.GradientTape`
(eagerly or inside `gt.function`).

Skipped (not ported):
- testGradients, testUnusedOutput: inspect gradient op types / attrs (graph internals).
- testColocateGradients*, testColocateGradientsWithGateGradients: devices/colocation.
- testNoGradientForStringOutputs*: test_ops + string outputs.
- testSingletonIndexedSlices, IndexedSlicesToTensorTest.*: IndexedSlices/placeholders (sparse).
- testVariableAsGraphElementGradient, testVariableRefGradient: graph elements / ref variables.
- testStopGradients (stop_gradients= kwarg), partial half of testPartialDerivatives:
  the `stop_gradients` argument exists only for graph-mode tf.gradients.
- testFunctionGradientsWithGradFunc / WithRegistration / WithGradFuncAndRegistration:
  Defun grad_func / python_grad_func (graph function_def API).
- testGradientOfCaptured: Defun capturing graph tensors (graph-only).
- PreventGradientTest: prevent_gradient is not part of gradtape's API.
- testHessianInvalidDimension: placeholders with unknown shape.
- OnlyRealGradientsTest: v1 tf.gradients complex grad_ys rule (TF2 tapes allow it).
- GetDependentVariablesTest.*: private graph-mode helper `_get_dependent_variables`
  (eager analogues of two cases are ported as variable-capture tests below);
  testGetVariableByName: graph-mode name lookup.
- testCustomGradientRaggedTensor / MultipleRaggedTensors: ragged tensors.
- testCustomGradientQuantizedDtypeTraining: quantized dtypes.
- testCustomGradientErrorsWithNonResourceVariables: v1 ref variables / variable_scope.
- testFnRecomputeWithScopeGradient: variable_scope / get_variable reuse (TF1).
- TensorListGradientsTest: list_ops internals.
- GradPassThroughTest.test_gradients_v1: v1 variable_scope.
- recompute_grad_test (RecomputeGradMemoryTest): device memory stats / XLA HLO.
"""

import warnings

import numpy as np
import pytest

import gradtape as gt


def _val(t):
    return np.asarray(t)


# --------------------------------------------------------------------------------------
# GradientsTest (tape versions)
# --------------------------------------------------------------------------------------


def test_boundary_stop():
    c = gt.constant(1.0)
    x = gt.identity(c)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x + 1.0
        z = y + 1
    grads = tape.gradient(z, [x])
    assert all(g is not None for g in grads)
    np.testing.assert_allclose(_val(grads[0]), 1.0)


def test_boundary_continue():
    x = gt.constant(1.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
        z = y * 3.0
    grads = tape.gradient(z, [x, y])
    assert all(g is not None for g in grads)
    assert float(grads[0]) == 6.0
    assert float(grads[1]) == 3.0


@pytest.mark.parametrize("method", ["accumulate_n", "add_n", "tree"])
def test_aggregation_methods(method):
    # TF's three aggregation methods must all give the same numbers; a tape sums.
    x = gt.constant(1.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
        z = y + y + y + y + y + y + y + y + y + y
    grads = tape.gradient(z, [x, y])
    assert all(g is not None for g in grads)
    assert float(grads[0]) == 20.0
    assert float(grads[1]) == 10.0


def test_non_differentiable_switch_in_while_loop():
    v = gt.constant(1.0)
    n = 4

    def step(i, a, ta):
        a += gt.cast(v, gt.int32)
        return (i + 1, a, ta.write(i, a))

    with gt.GradientTape() as tape:
        tape.watch(v)
        i, _, ta = gt.while_loop(
            lambda i, *_: i < n, step,
            [0, 0, gt.TensorArray(gt.int32, size=n)])
        target = ta.read(i - 1)
    assert tape.gradient(target, v) is None
    assert int(target) == 4


def test_variable_read_value_gradient():
    var = gt.Variable(gt.constant(100.0))
    with gt.GradientTape() as tape:
        out = var.read_value()
    g = tape.gradient(out, var)
    assert g is not None
    np.testing.assert_allclose(_val(g), 1.0)


@pytest.mark.parametrize("dtype", [gt.float32, gt.float64])
def test_variable_default_grad(dtype):
    var = gt.Variable(gt.constant(100.0, dtype=dtype))
    dummy = gt.constant(0.0)
    with gt.GradientTape() as tape:
        tape.watch(var)
    g = tape.gradient(dummy, var, unconnected_gradients=gt.UnconnectedGradients.ZERO)
    assert g is not None
    assert g.dtype == dtype
    np.testing.assert_allclose(_val(g), 0.0)


def test_dependent_ys():
    x = gt.constant(3.0)
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = gt.square(x)
        y1 = gt.square(y)
        y2 = gt.square(y1)
        s = y + y2
        z = gt.identity(y)
        z2 = gt.identity(y2)
    np.testing.assert_allclose(_val(tape.gradient([y, y2], x)), 17502.0)
    np.testing.assert_allclose(_val(tape.gradient(s, x)), 17502.0)
    np.testing.assert_allclose(_val(tape.gradient([z, z2], x)), 17502.0)


def test_partial_derivatives_total():
    x = gt.constant(1.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = 2 * x
        z = x + y
    totalg = tape.gradient(z, [x, y])
    assert [float(g) for g in totalg] == [3.0, 1.0]


def test_unconnected_gradients_none():
    x = gt.constant(1.0, shape=[2, 2])
    y = gt.constant(3.0, shape=[3, 1])
    with gt.GradientTape() as tape:
        tape.watch(x)
    grad = tape.gradient([y], [x], unconnected_gradients="none")
    assert grad[0] is None


def test_unconnected_gradients_zeros():
    x = gt.constant(1.0, shape=[2, 2])
    y = gt.constant(3.0, shape=[3, 1])
    with gt.GradientTape() as tape:
        tape.watch(x)
    grads = tape.gradient([y], [x], unconnected_gradients="zero")
    np.testing.assert_array_equal(_val(grads[0]), [[0.0, 0.0], [0.0, 0.0]])


def test_unconnected_gradients_zero_connected():
    x = gt.constant(1.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * 3.0
    grad = tape.gradient([y], [x], unconnected_gradients="zero")
    assert float(grad[0]) == 3.0


def test_unknown_unconnected_gradients_value():
    x = gt.constant(1.0)
    y = gt.constant(1.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients: 'nonsense'"):
        tape.gradient([y], [x], unconnected_gradients="nonsense")


@pytest.mark.parametrize("ug", [gt.UnconnectedGradients.ZERO, gt.UnconnectedGradients.NONE])
def test_unconnected_op_with_multiple_outputs(ug):
    a = gt.constant(1.0)
    b = gt.constant(1.0)
    with gt.GradientTape() as tape:
        tape.watch([a, b])
        c, d = gt.identity_n([a, b])
        e = gt.identity(c)
    out = tape.gradient(e, d, unconnected_gradients=ug)
    if ug == gt.UnconnectedGradients.ZERO:
        assert out is not None
        np.testing.assert_allclose(_val(out), 0.0)
    else:
        assert out is None


@pytest.mark.parametrize("ug", [gt.UnconnectedGradients.ZERO, gt.UnconnectedGradients.NONE])
def test_unconnected_op_with_multiple_outputs_stop_gradient(ug):
    a = gt.constant(1.0)
    b = gt.constant(1.0)
    with gt.GradientTape() as tape:
        tape.watch([a, b])
        c, d = gt.identity_n([a, b])
        e = gt.stop_gradient(c) + d
    out = tape.gradient(e, c, unconnected_gradients=ug)
    if ug == gt.UnconnectedGradients.ZERO:
        assert out is not None
        np.testing.assert_allclose(_val(out), 0.0)
    else:
        assert out is None


# --------------------------------------------------------------------------------------
# FunctionGradientsTest (gt.function + tapes)
# --------------------------------------------------------------------------------------


def _x_square_plus_b(x, b):
    return x * x + b


def test_function_gradients_basic():
    f = gt.function(_x_square_plus_b)
    x = gt.constant([2.0])
    b = gt.constant([1.0])
    with gt.GradientTape() as tape:
        tape.watch([x, b])
        y = f(x, b)
    gx, gb = tape.gradient(y, [x, b])
    np.testing.assert_array_equal(_val(gx), [4.0])
    np.testing.assert_array_equal(_val(gb), [1.0])


def test_function_gradients_composition():
    f = gt.function(_x_square_plus_b)
    x = gt.constant([2.0])
    b1 = gt.constant([1.0])
    b2 = gt.constant([1.0])
    with gt.GradientTape() as tape:
        tape.watch([x, b1])
        y = f(f(x, b1), b2)
    gx, gb1 = tape.gradient(y, [x, b1])
    np.testing.assert_array_equal(_val(gx), [40.0])
    np.testing.assert_array_equal(_val(gb1), [10.0])


def test_gradient_wrt_captured():
    x = gt.constant(1.0)

    @gt.function
    def foo():
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = gt.multiply(x, 2.0)
        return tape.gradient(y, x)

    assert float(foo()) == 2.0


def test_captured_resource_variable():
    var = gt.Variable(1.0, name="var")

    @gt.function
    def foo():
        with gt.GradientTape() as tape:
            y = gt.multiply(var, 2.0)
        return tape.gradient(y, var)

    assert float(foo()) == 2.0


def test_captured_nested():
    x1 = gt.constant(1.0)
    x2 = gt.constant(2.0)

    @gt.function
    def outer():
        with gt.GradientTape() as tape:
            tape.watch([x1, x2])
            x3 = gt.multiply(x1, x2)
            outer1 = gt.identity(x1)

            @gt.function
            def inner():
                inner1 = gt.identity(outer1)
                inner2 = gt.identity(x2)
                inner3 = gt.identity(x3)
                return inner1, inner2, inner3

            i1, i2, i3 = inner()
        return tape.gradient([i1, i2, i3, x1], [x1, x2])

    g1, g2 = outer()
    # 1 + 0 + 2 + 1 and 0 + 1 + 1 + 0
    assert float(g1) == 4.0
    assert float(g2) == 2.0


def test_captured_from_function():
    x = gt.constant(1.0)

    @gt.function
    def outer():
        y = gt.multiply(x, 2.0)

        @gt.function
        def inner():
            with gt.GradientTape() as tape:
                tape.watch(y)
                z = gt.multiply(y, 3.0)
            return tape.gradient(z, y)

        return inner()

    assert float(outer()) == 3.0


def test_captured_eager_tensors():
    c = gt.constant(2.0)

    @gt.function
    def foo():
        x = gt.constant(10.0)
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = gt.multiply(x, c)
            z = gt.multiply(c, y)
        return tape.gradient(z, x)

    assert foo().numpy() == 4.0


# --------------------------------------------------------------------------------------
# StopGradientTest, HessianVectorProductTest, HessianTest, ResourceCondTest
# --------------------------------------------------------------------------------------


def test_stop_gradient():
    inp = gt.constant(1.0, shape=[100, 32])
    with gt.GradientTape() as tape:
        tape.watch(inp)
        out = gt.stop_gradient(inp)
    assert tape.gradient(out, inp) is None


def test_hessian_vector_product():
    m = 4
    rng = np.random.RandomState([1, 2, 3])
    mat_value = rng.randn(m, m).astype("float32")
    v_value = rng.randn(m, 1).astype("float32")
    x_value = rng.randn(m, 1).astype("float32")
    hess_v_value = np.dot(mat_value + mat_value.T, v_value)
    mat = gt.constant(mat_value)
    v = gt.constant(v_value)
    x = gt.constant(x_value)
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            x_mat_x = gt.matmul(gt.transpose(x), gt.matmul(mat, x))
        grad = inner.gradient(x_mat_x, x)
        elemwise = gt.reduce_sum(grad * gt.stop_gradient(v))
    hess_v = outer.gradient(elemwise, x)
    np.testing.assert_allclose(_val(hess_v), hess_v_value, rtol=1e-5, atol=1e-5)


def _hessian(f, x):
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        g = inner.gradient(y, x)
    return outer.jacobian(g, x)


def test_hessian_1d():
    m = 4
    rng = np.random.RandomState([1, 2, 3])
    mat_value = rng.randn(m, m).astype("float32")
    x_value = rng.randn(m).astype("float32")
    mat = gt.constant(mat_value)
    hess = _hessian(lambda x: gt.reduce_sum(x[:, None] * mat * x[None, :]), gt.constant(x_value))
    np.testing.assert_allclose(_val(hess), mat_value + mat_value.T, rtol=1e-5, atol=1e-5)


def test_hessian_1d_multi():
    m, n = 4, 3
    rng = np.random.RandomState([1, 2, 3])
    mat_values = [rng.randn(m, m).astype("float32") for _ in range(n)]
    x_values = [rng.randn(m).astype("float32") for _ in range(n)]
    mats = [gt.constant(v) for v in mat_values]
    xs = [gt.constant(v) for v in x_values]
    with gt.GradientTape(persistent=True) as outer:
        outer.watch(xs)
        with gt.GradientTape() as inner:
            inner.watch(xs)
            ys = [gt.reduce_sum(x[:, None] * mat * x[None, :]) for x, mat in zip(xs, mats)]
            total = gt.add_n(ys)
        grads = inner.gradient(total, xs)
    for g, x, mv in zip(grads, xs, mat_values):
        np.testing.assert_allclose(_val(outer.jacobian(g, x)), mv + mv.T, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(3, 3), (3, 4)])
def test_hessian_2d(shape):
    m, n = shape
    rng = np.random.RandomState([1, 2, 3])
    x_value = rng.randn(m, n).astype("float32")
    hess = _hessian(
        lambda x: gt.reduce_sum(gt.matmul(gt.transpose(x), x) * 0.5), gt.constant(x_value))
    hess_value = np.kron(np.eye(m), np.ones((n, n))).astype("float32")
    assert tuple(hess.shape) == (m, n, m, n)
    np.testing.assert_allclose(_val(hess).reshape((m * n, m * n)), hess_value)


def test_resource_cond_basic():
    gamma = gt.Variable(np.random.random((3,)), dtype="float32", name="gamma")
    inputs = gt.ones(shape=(3,), dtype="float32")

    @gt.function
    def run(training):
        with gt.GradientTape() as tape:
            output = gt.cond(training, lambda: inputs + gamma, lambda: inputs)
        return tape.gradient(output, [gamma])

    grads = run(gt.constant(True))
    assert None not in grads
    np.testing.assert_allclose(_val(grads[0]), [1.0, 1.0, 1.0])


def test_rv_gradients_dynamic_cond():
    alpha = gt.Variable(np.random.random((1,)), dtype="float32")

    @gt.function
    def run(conditional):
        with gt.GradientTape() as tape:
            output = gt.cond(conditional, lambda: alpha * 2, lambda: alpha * 3)
        return tape.gradient(output, alpha)

    np.testing.assert_array_equal(_val(run(gt.constant(True))), [2.0])
    np.testing.assert_array_equal(_val(run(gt.constant(False))), [3.0])


# --------------------------------------------------------------------------------------
# Variable capture by custom_gradient (eager analogues of GetDependentVariablesTest)
# --------------------------------------------------------------------------------------


def test_custom_gradient_captures_variable_read_inside():
    var = gt.Variable(100.0)
    seen = []

    @gt.custom_gradient
    def f(x):
        def grad(dy, variables=None):
            seen.append(list(variables))
            return dy, [gt.zeros_like(var)]
        return gt.identity(x) + 5.0 + var, grad

    x = gt.constant(2.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    gx, gv = tape.gradient(y, [x, var])
    assert len(seen) == 1 and len(seen[0]) == 1 and seen[0][0] is var
    assert float(gx) == 1.0 and float(gv) == 0.0


def test_custom_gradient_ignores_non_trainable_variables():
    init = gt.constant(100.0, shape=(5,))
    var_trainable = gt.Variable(init)
    var_nontrainable = gt.Variable(init, trainable=False)
    seen = []

    @gt.custom_gradient
    def f(x):
        def grad(dy, variables=None):
            seen.append(list(variables))
            return gt.zeros_like(x), [gt.ones_like(var_trainable)]
        return var_trainable + var_nontrainable + x, grad

    x = gt.constant(2.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    g = tape.gradient(y, var_trainable)
    assert len(seen[0]) == 1 and seen[0][0] is var_trainable
    np.testing.assert_allclose(_val(g), np.ones(5))


# --------------------------------------------------------------------------------------
# CustomGradientTest
# --------------------------------------------------------------------------------------


def test_custom_gradient_trivial():
    @gt.custom_gradient
    def my_identity(x):
        def grad(dy):
            return [3 * dy]
        return x, grad

    x = gt.constant(3.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = my_identity(my_identity(x))
    assert float(tape.gradient(y, x)) == 9.0


def _my_multiply_switched():
    @gt.custom_gradient
    def my_multiply(x1, x2):
        result = x1 * x2

        def grad(dy):
            return [dy * x1, dy * x2]  # switched on purpose
        return result, grad
    return my_multiply


def test_custom_gradient():
    f = _my_multiply_switched()
    x1 = gt.constant(3.0)
    x2 = gt.constant(5.0)
    with gt.GradientTape() as tape:
        tape.watch([x1, x2])
        y = f(x1, x2)
    dy = tape.gradient(y, [x1, x2])
    np.testing.assert_array_equal([_val(d) for d in dy], [3.0, 5.0])


def test_custom_gradient_class():
    class Model:
        @gt.custom_gradient
        def multiply(self, x1, x2):
            result = x1 * x2
            return result, lambda dy: (dy * x1, dy * x2)

    x1 = gt.constant(3.0)
    x2 = gt.constant(5.0)
    m = Model()
    with gt.GradientTape() as tape:
        tape.watch([x1, x2])
        y = m.multiply(x1, x2)
    dy = tape.gradient(y, [x1, x2])
    np.testing.assert_array_equal([_val(d) for d in dy], [3.0, 5.0])


def test_custom_gradient_errors():
    @gt.custom_gradient
    def f(x):
        def grad(_):
            raise RuntimeError("x")
        return x, grad

    x = gt.constant(1.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    with pytest.raises(RuntimeError):
        tape.gradient(y, x)


def _dense_custom_grad_fn(layer, var_grad_shape, nvars_seen):
    @gt.custom_gradient
    def f(x):
        with gt.GradientTape(persistent=True) as inner:
            inner.watch(x)
            out = layer(x)

        def grad(out_grad, variables=None):
            nvars_seen.append(len(variables))
            grads = inner.gradient(out, [x, variables[0]], output_gradients=out_grad)
            return grads[0], [gt.ones(var_grad_shape)]
        return out, grad
    return f


def test_custom_gradient_with_variables():
    layer = gt.layers.Dense(3, use_bias=False)
    seen = []
    f = _dense_custom_grad_fn(layer, (4, 3), seen)
    x = gt.ones((2, 4))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert len(layer.variables) == 1
    grads = tape.gradient(y, [x, layer.variables[0]])
    for g in grads:
        assert g is not None
    assert seen == [1]
    assert float(gt.reduce_sum(grads[1])) == 12.0


def test_custom_gradient_with_capture():
    x = gt.constant(3.0)
    my_multiply = _my_multiply_switched()

    @gt.function
    def f(y):
        with gt.GradientTape() as tape:
            tape.watch(y)
            res = my_multiply(x, y)
        return tape.gradient(res, [y])

    dy = f(gt.constant(5.0))
    np.testing.assert_array_equal(_val(dy[0]), 5.0)


def test_custom_gradient_with_variables_no_false_positives():
    l1 = gt.layers.Dense(3, use_bias=False)
    l2 = gt.layers.Dense(3, use_bias=False)
    l3 = gt.layers.Dense(3, use_bias=False)
    lf = gt.layers.Dense(3, use_bias=False)
    seen = []
    f = _dense_custom_grad_fn(lf, (3, 3), seen)
    with gt.GradientTape() as tape:
        a = gt.ones((2, 4))
        # Variables of these layers must not be handed to f's gradient function.
        b = l1(a)
        c = l2(b)
        x = l3(b) + c
        y = f(x)
    all_vars = [l1.kernel, l2.kernel, l3.kernel, lf.kernel]
    grads = tape.gradient(y, [x] + all_vars)
    for g in grads:
        assert g is not None
    assert seen == [1]
    assert float(gt.reduce_sum(grads[-1])) == 9.0


def test_custom_gradient_with_variables_eager():
    layer = gt.layers.Dense(4, use_bias=False)
    seen = []

    @gt.custom_gradient
    def f(x):
        out = layer(x)

        def grad(out_grad, variables=None):
            del out_grad
            seen.append(len(variables))
            return gt.ones((3, 2)), [gt.ones((2, 4))]
        return out, grad

    x = gt.ones((3, 2)) + 2.0
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    w, = layer.variables
    dx, dw = tape.gradient(y, [x, w])
    assert seen == [1]
    assert gt.reduce_sum(dx).numpy() == 6.0
    assert gt.reduce_sum(dw).numpy() == 8.0


@pytest.mark.parametrize("anonymous_varargs", [True, False])
def test_custom_gradient_variables_kwonly_args(anonymous_varargs):
    x_captured = gt.Variable(3.0)

    @gt.custom_gradient
    def func_mult(x):
        def actual_grad(dy, variables):
            assert len(variables) == 1
            assert variables[0] is x_captured
            return (4.0 * x_captured * dy, [5.0 * x * dy])

        if anonymous_varargs:
            def grad_mult(dy, *, variables=None):
                return actual_grad(dy, variables)
        else:
            def grad_mult(*dys, variables=None):
                return actual_grad(dys[0], variables)
        return x * x_captured, grad_mult

    x = gt.Variable(6.0)
    with gt.GradientTape(persistent=True) as g:
        y = func_mult(x)
    np.testing.assert_array_equal(_val(g.gradient(y, x)), 4.0 * 3.0)


def test_custom_gradient_with_numpy_inputs():
    @gt.custom_gradient
    def f(x):
        def grad(_):
            return (None, None)
        return x, grad

    out = f(np.ones((3, 2), dtype=np.float32))
    np.testing.assert_array_equal(_val(out), np.ones((3, 2)))


def test_recursive_custom_gradient():
    layer = gt.layers.Dense(3, use_bias=False)
    seen = []
    f = _dense_custom_grad_fn(layer, (4, 3), seen)

    @gt.custom_gradient
    def double_f(x):
        with gt.GradientTape(persistent=True) as inner:
            inner.watch(x)
            out = f(x)

        def grad(out_grad, variables=None):
            seen.append(len(variables))
            grads = inner.gradient(out, [x, variables[0]], output_gradients=out_grad)
            return grads[0], [gt.ones((4, 3))]
        return out, grad

    x = gt.ones((2, 4))
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = double_f(x)
    assert len(layer.variables) == 1
    grads = tape.gradient(y, [x, layer.variables[0]])
    for g in grads:
        assert g is not None
    assert float(gt.reduce_sum(grads[1])) == 12.0


_X_STRUCTS = [(None, ()), (((), ()), [None, None], [], (None, ()))]
_Y_STRUCTS = [[None, ()], (None, (), [], (None, ((), None)))]


@pytest.mark.parametrize("y_struct", _Y_STRUCTS)
@pytest.mark.parametrize("x_struct", _X_STRUCTS)
def test_custom_gradient_structural_input_output(x_struct, y_struct):
    def zeros(s):
        return gt.nest.map_structure(lambda _: gt.zeros([], "float32"), s)

    def get_struct(s):
        return gt.nest.map_structure(lambda _: None, s)

    def make_vjp(f, *x):
        with gt.GradientTape(persistent=True) as tape:
            tape.watch(gt.nest.flatten(x))
            y = f(*x)

        def vjp(dy):
            return tape.gradient(y, x, output_gradients=dy)
        return y, vjp

    @gt.custom_gradient
    def f(*x):
        assert x_struct == get_struct(x)

        def vjp(*dy):
            assert len(gt.nest.flatten(y_struct)) == len(gt.nest.flatten(dy))
            return gt.nest.flatten(zeros(x_struct))
        return zeros(y_struct), vjp

    x, dy = zeros([x_struct, y_struct])
    y, vjp = make_vjp(f, *x)
    dx = vjp(dy)
    assert x_struct == get_struct(dx)
    assert y_struct == get_struct(y)


# --------------------------------------------------------------------------------------
# VariablesGradientTest (recompute_grad)
# --------------------------------------------------------------------------------------


def _grad(f, argnums=0):
    def F(*params):
        with gt.GradientTape() as tape:
            with warnings.catch_warnings():
                # TF only logs when an integer tensor is watched.
                warnings.simplefilter("ignore")
                tape.watch(params)
            outputs = f(*params)
        return tape.gradient(outputs, params[argnums],
                             unconnected_gradients=gt.UnconnectedGradients.ZERO)
    return F


def _check_gradients(f, inputs, order, delta=1e-3, rtol=1e-2, atol=1e-6):
    if order > 1:
        _check_gradients(_grad(f), inputs, order - 1, delta, rtol, atol)
    sym, num = gt.test.compute_gradient(f, inputs, delta=delta)
    for s, n in zip(sym, num):
        np.testing.assert_allclose(np.asarray(s), np.asarray(n), rtol=rtol, atol=atol)


def _fn_variables_gradient(inputs, test_fn, vars_to_grad):
    test_fn_re = gt.recompute_grad(test_fn)
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(vars_to_grad)
        out_re = test_fn_re(inputs, vars_to_grad)
        out = test_fn(inputs, vars_to_grad)
    return tape.gradient(out_re, vars_to_grad), tape.gradient(out, vars_to_grad)


def test_recompute_grad_wrapped():
    def f(x):
        return 2 * x

    g = gt.recompute_grad(f)
    assert g.__wrapped__ is f


def test_recompute_grad_zero_size_input():
    def F(x):
        return 2 * x

    x = gt.constant(())
    np.testing.assert_allclose(_val(_grad(gt.recompute_grad(F))(x)), _val(_grad(F)(x)))

    f_graph = gt.function(F, input_signature=[gt.TensorSpec(None)])
    np.testing.assert_allclose(_val(_grad(gt.recompute_grad(f_graph))(x)), _val(_grad(f_graph)(x)))


def test_recompute_grad_different_dtypes_inputs():
    def F(x1, x2):
        return 2 * x1, 2 * x2

    x1 = gt.constant(1, dtype=gt.int32)
    x2 = gt.constant(1.0, dtype=gt.float32)
    np.testing.assert_allclose(_val(_grad(gt.recompute_grad(F))(x1, x2)), _val(_grad(F)(x1, x2)))

    f_graph = gt.function(F, input_signature=[
        gt.TensorSpec(None, dtype=gt.int32), gt.TensorSpec(None, dtype=gt.float32)])
    np.testing.assert_allclose(_val(_grad(gt.recompute_grad(f_graph))(x1, x2)),
                               _val(_grad(f_graph)(x1, x2)))


def test_custom_gradient_recompute_grad_higher_order():
    @gt.recompute_grad
    def F(x):
        return gt.reduce_prod(gt.tanh(x) ** 2)

    _check_gradients(F, [gt.constant([1.0])], order=3)


def _assert_grads_close(grads_re, grads):
    if not isinstance(grads, (list, tuple)):
        grads, grads_re = [grads], [grads_re]
    for g, g_re in zip(grads, grads_re):
        assert g is not None and g_re is not None
        np.testing.assert_allclose(_val(g), _val(g_re))


def test_fn_recompute():
    def test_fn(inputs, input_vars):
        return inputs * input_vars

    def test_fn_seq(inputs, input_vars):
        return (inputs * input_vars, inputs * input_vars * 2.0)

    test_var = gt.Variable(np.zeros([10], np.float32), name="test_var")
    test_var.assign(np.ones([10], np.float32))
    test_input = gt.constant(np.ones((10, 10), dtype=np.float32))

    for fn in (test_fn, test_fn_seq):
        for target in (test_input, test_var):
            grads_re, grads = _fn_variables_gradient(test_input, fn, target)
            _assert_grads_close(grads_re, grads)


def test_fn_recompute_same_tensor():
    def test_fn_mul(x, y):
        return x * y

    def test_fn_single_var(x, y):
        del y
        return x

    x = gt.ones(10)
    grads_re, grads = _fn_variables_gradient(x, test_fn_mul, x)
    _assert_grads_close(grads_re, grads)
    np.testing.assert_allclose(_val(grads_re), 2.0 * np.ones(10))
    grads_re, grads = _fn_variables_gradient(x, test_fn_single_var, x)
    _assert_grads_close(grads_re, grads)
    np.testing.assert_allclose(_val(grads_re), np.ones(10))


def test_recompute_grad_matches_plain_results():
    # Numerical part of recompute_grad_test.testRecomputeGradNonXla, eager and
    # in a gt.function (memory statistics are out of scope).
    n = 8
    a = gt.ones((n, n), dtype=gt.float32) * 0.1

    def f(x):
        for _ in range(3):
            x = gt.matmul(x, x)
        return x

    def g(fn, x):
        for _ in range(2):
            x = fn(x)
        return x[0][0]

    for mode in ("eager", "graph"):
        def run(test_func, mode=mode):
            grad_fn = _grad(test_func)
            if mode == "graph":
                grad_fn = gt.function(grad_fn)
            return grad_fn(a)

        res = run(lambda x: g(f, x))
        res_re = run(lambda x: g(gt.recompute_grad(f), x))
        np.testing.assert_allclose(_val(res_re), _val(res), rtol=1e-5)


# --------------------------------------------------------------------------------------
# GradPassThroughTest
# --------------------------------------------------------------------------------------


def test_grad_pass_through_v2():
    x = gt.Variable(1.0, name="x")
    z = gt.Variable(3.0, name="z")

    with gt.GradientTape() as tape:
        y = x.assign(z ** 2)
    assert tape.gradient(y, z) is None

    with gt.GradientTape() as tape:
        y = gt.grad_pass_through(x.assign)(z ** 2)
    np.testing.assert_allclose(_val(tape.gradient(y, z)), 6.0)

    with gt.GradientTape() as tape:
        y = gt.grad_pass_through(lambda v: x * v)(z)
    assert tape.gradient(y, x) is None


# --------------------------------------------------------------------------------------
# Documented behaviour of tf.custom_gradient / tf.recompute_grad / tf.grad_pass_through
# (examples from their API docs, eager and inside gt.function)
# --------------------------------------------------------------------------------------


@gt.custom_gradient
def _log1pexp(x):
    e = gt.exp(x)

    def grad(upstream):
        return upstream * (1 - 1 / (1 + e))
    return gt.math.log(1 + e), grad


@pytest.mark.parametrize("wrap", [lambda f: f, gt.function])
def test_doc_log1pexp_numerically_stable(wrap):
    f = wrap(_log1pexp)
    x = gt.constant(100.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    np.testing.assert_allclose(_val(tape.gradient(y, x)), 1.0)


def test_doc_nested_custom_gradient_second_order():
    @gt.custom_gradient
    def cube(x):
        y = x * x * x
        x_grad = 3.0 * x * x

        def first_order_gradient(dy):
            @gt.custom_gradient
            def first_order_custom(unused_x):
                def second_order_and_transpose(ddy):
                    return ddy * 6.0 * x * 10.0  # marked: 10x the true value
                return x_grad, second_order_and_transpose
            return dy * first_order_custom(x)
        return y, first_order_gradient

    x = gt.constant(2.0)
    with gt.GradientTape() as t2:
        t2.watch(x)
        with gt.GradientTape() as t1:
            t1.watch(x)
            y = cube(x)
        dy = t1.gradient(y, x)
    d2y = t2.gradient(dy, x)
    assert float(y) == 8.0
    assert float(dy) == 12.0
    assert float(d2y) == 120.0


def test_custom_gradient_kwargs_eager():
    @gt.custom_gradient
    def scale(x, factor=1.0):
        def grad(dy):
            return dy * factor
        return x * factor, grad

    x = gt.constant(3.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = scale(x, factor=4.0)
    assert float(y) == 12.0
    assert float(tape.gradient(y, x)) == 4.0


def test_custom_gradient_none_gradient_for_input():
    @gt.custom_gradient
    def f(x, y):
        def grad(dz):
            return dz * 2.0, None
        return x * y, grad

    x = gt.constant(3.0)
    y = gt.constant(4.0)
    with gt.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        z = f(x, y)
    gx, gy = tape.gradient(z, [x, y])
    assert float(gx) == 2.0
    assert gy is None
    gx, gy = tape.gradient(z, [x, y], unconnected_gradients="zero")
    assert float(gy) == 0.0


def test_custom_gradient_wrong_number_of_gradients():
    @gt.custom_gradient
    def f(x):
        return x * 2.0, lambda dy: (dy, dy)

    x = gt.constant(1.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    with pytest.raises(ValueError, match="expected to return 1 gradients"):
        tape.gradient(y, x)


def test_custom_gradient_variables_without_variables_kwarg_is_type_error():
    v = gt.Variable(2.0)

    @gt.custom_gradient
    def f(x):
        return x * v, lambda dy: dy

    with pytest.raises(TypeError, match="variables"):
        with gt.GradientTape():
            f(gt.constant(1.0))


def test_custom_gradient_in_function_with_variables():
    v = gt.Variable(2.0)

    @gt.custom_gradient
    def f(x):
        def grad(dy, variables=None):
            return dy * v * 10.0, [dy * x * 100.0]
        return x * v, grad

    @gt.function
    def run(x):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return tape.gradient(y, [x, v])

    gx, gv = run(gt.constant(3.0))
    assert float(gx) == 20.0
    assert float(gv) == 300.0


def test_recompute_grad_with_layer_variables():
    layer = gt.layers.Dense(3)
    x = gt.constant(np.arange(8, dtype=np.float32).reshape(2, 4) / 8.0)
    layer(x)  # build
    f_re = gt.recompute_grad(lambda t: gt.tanh(layer(t)))
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y_re = f_re(x)
        y = gt.tanh(layer(x))
    np.testing.assert_allclose(_val(y_re), _val(y))
    srcs = [x, layer.kernel, layer.bias]
    g_re = tape.gradient(y_re, srcs)
    g = tape.gradient(y, srcs)
    for a, b in zip(g_re, g):
        assert a is not None
        np.testing.assert_allclose(_val(a), _val(b), rtol=1e-6)


def test_recompute_grad_inside_function_second_order():
    f_re = gt.recompute_grad(lambda t: gt.sin(t) * t)

    @gt.function
    def run(x):
        with gt.GradientTape() as t2:
            t2.watch(x)
            with gt.GradientTape() as t1:
                t1.watch(x)
                y = f_re(x)
            dy = t1.gradient(y, x)
        return dy, t2.gradient(dy, x)

    x = 0.7
    dy, d2y = run(gt.constant(x))
    np.testing.assert_allclose(_val(dy), np.cos(x) * x + np.sin(x), rtol=1e-5)
    np.testing.assert_allclose(_val(d2y), 2 * np.cos(x) - x * np.sin(x), rtol=1e-5)


def test_doc_grad_pass_through_assign():
    x = gt.Variable(1.0, name="x")
    z = gt.Variable(3.0, name="z")
    with gt.GradientTape() as tape:
        y = gt.grad_pass_through(x.assign)(z ** 2)
    assert float(y) == 9.0
    assert float(x) == 9.0
    assert float(tape.gradient(y, z)) == 6.0


def test_grad_pass_through_straight_through_round():
    x = gt.constant([0.2, 1.7, -2.4])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.grad_pass_through(gt.round)(x) * 3.0
    np.testing.assert_allclose(_val(y), [0.0, 6.0, -6.0])
    np.testing.assert_allclose(_val(tape.gradient(y, x)), [3.0, 3.0, 3.0])


def test_grad_pass_through_in_function():
    @gt.function
    def run(x):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = gt.grad_pass_through(gt.floor)(x * x)
        return y, tape.gradient(y, x)

    y, g = run(gt.constant(1.5))
    assert float(y) == 2.0
    assert float(g) == 3.0


def test_stop_gradient_in_function_and_higher_order():
    @gt.function
    def run(x):
        with gt.GradientTape() as t2:
            t2.watch(x)
            with gt.GradientTape() as t1:
                t1.watch(x)
                y = x * x * gt.stop_gradient(x)
            dy = t1.gradient(y, x)
        return dy, t2.gradient(dy, x)

    dy, d2y = run(gt.constant(3.0))
    assert float(dy) == 18.0  # 2 * x * sg(x)
    assert float(d2y) == 6.0  # 2 * sg(x)


@gt.custom_gradient
def _clip_grad_identity(x):
    return gt.identity(x), lambda dy: gt.clip_by_value(dy, -0.5, 0.5)


@pytest.mark.parametrize("wrap", [lambda f: f, gt.function])
def test_custom_gradient_in_while_loop(wrap):
    def run(x):
        with gt.GradientTape() as t:
            t.watch(x)
            _, y = gt.while_loop(lambda i, a: i < 3,
                                 lambda i, a: (i + 1, _clip_grad_identity(a) * 2.0), [0, x])
        return y, t.gradient(y, x)

    y, g = wrap(run)(gt.constant(1.0))
    assert float(y) == 8.0
    assert float(g) == 0.5


def test_custom_gradient_in_cond_in_function():
    @gt.function
    def run(x, p):
        with gt.GradientTape() as t:
            t.watch(x)
            y = gt.cond(p, lambda: _clip_grad_identity(x * 4.0), lambda: x)
        return t.gradient(y, x)

    assert float(run(gt.constant(1.0), gt.constant(True))) == 2.0
    assert float(run(gt.constant(1.0), gt.constant(False))) == 1.0


def test_custom_gradient_jacobian_float64():
    @gt.custom_gradient
    def f(x):
        return x * x, lambda dy: dy * 10.0

    x = gt.constant([1.0, 2.0], dtype=gt.float64)
    with gt.GradientTape() as t:
        t.watch(x)
        y = f(x)
    j = t.jacobian(y, x)
    assert j.dtype == gt.float64
    np.testing.assert_array_equal(_val(j), [[10.0, 0.0], [0.0, 10.0]])


def test_recompute_grad_nested_outputs_and_jacobian():
    f = gt.recompute_grad(lambda x: {"a": x * 2.0, "b": [x * 3.0]})
    x = gt.constant(1.0)
    with gt.GradientTape() as t:
        t.watch(x)
        y = f(x)
    assert float(y["a"]) == 2.0 and float(y["b"][0]) == 3.0
    assert float(t.gradient(y, x)) == 5.0

    g = gt.recompute_grad(lambda x: gt.sin(x) * x)
    xv = np.array([0.5, 1.0], np.float32)
    x = gt.constant(xv)
    with gt.GradientTape() as t:
        t.watch(x)
        y = g(x)
    np.testing.assert_allclose(_val(t.jacobian(y, x)),
                               np.diag(np.cos(xv) * xv + np.sin(xv)), rtol=1e-5)
