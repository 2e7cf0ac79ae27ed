"""Ports of TensorFlow's control-flow tests (cond_v2_test, while_v2_test, map_fn_test,
control_flow_ops_py_test) to gradtape, eager and inside ``gt.function``.

Tests that TF runs in graph mode only for values/gradients are ported to eager with a
``gt.GradientTape`` (same numbers). Skipped (out of scope):
- cond: testReturnsIndexedSlicesAndNones/NonesAndIndexedSlices (IndexedSlices branch outputs),
  testCondNestedFunctionGradientWithSavedModel (einsum via gen op + SavedModel),
  testCondNestedFunctionGradientWithXlaDynamicCondition (XLA), testExternalControlDependencies,
  testDefaultName, testInheritParentNameScope, testFuncCond*/testFuncCondWithVariable (op
  types / control inputs), testGradientOfDeserializedCond (meta graph), placeholders/sessions.
- while: testDeferredCaptures (capture_call_time_value), testIteratedGradientsWithList,
  testThreeNestWithLists (TensorList ops), testDeviceLabelsInherited (devices),
  testMultipleWhileLoopsWithFunc/GradStateless/WithDeps/WithVarsDeps (op types, control
  inputs), testPruning*/testDoNotAccumulateInvariants* (grappler graphs),
  testReturnSameStructureTrue (v1 session).
- map_fn: testMapDtypeEager (strings), testMapSparseTensor, testMapRaggedTensor,
  testMap_Scoped (variable_scope), testMapUnknownShape/EmptyScalar/EmptyTensor (v1 placeholders).
- control_flow_ops_py_test: Ref*/Enter*/Switch*/Merge*/Loop_*/DifferentFrame (raw v1 graph ops),
  testFetchable/Feedable, Cond/While IndexedSlices/SparseTensor/RaggedTensor variants,
  testCondMismatchedIndexedSlices, testCondResource/Colocation/Device/Switch*Colocated* and
  *_Device/*Gpu* placement checks, testCondAccessTrueBranchTensorInFalseBranchRaises and
  testSwitchCaseAccessBranch1TensorInBranch4Raises (graph tensor names), testCondWithControl,
  testCondSwitchIdentity/RecvIdentity, testDisableLoweringSwitchMerge, testCondComputeGradAfterSessRun*
  (session), testCondPredicateTensor/FeedConstantPredicate (session feeds), testCondTensorDeps,
  testCond/WhileAutoControlDeps (print ordering, wrap_function), testWhileExternalControlDependencies*,
  testWhileWithRefs*, testXLA*/*InXLAContext, testBufferForwarding, testWhileBadShape* (v1 only),
  testWhileUpdateVariable_* (scatter_update on ref vars), testWhileQueue_1, testWhileTimeOut,
  testWhileStack_1, testWhileGrad_ColocateGradients, testWhileGrad_IndexedSlices/SparseTensor,
  testGradInWhileWrtInitialLoopVal (v1 error), testIssue16504/testStopGradMultiFlows (v1 graph
  collections), testCase*/testOneOpCond/testWithOpsDependencies (tf.case exclusive op errors, refs).
- control_flow_ops_test IndexedCaseTest: testParallelExecution (GPU), ExecuteFnForDeviceTest (devices).
"""

import numpy as np
import pytest

import gradtape as gt

from numpy.testing import assert_allclose


def _eager(f):
    return f


MODES = pytest.mark.parametrize("wrap", [_eager, gt.function], ids=["eager", "function"])


def _two(wrap):
    # TF's eager cond returns the branch's Python value as is; in a function it is a tensor.
    return (lambda: 2.0) if wrap is gt.function else (lambda: gt.constant(2.0))


# ----------------------------------------------------------------------------- cond


def _unconnected(g, wrap):
    """A source captured only by the branch not taken: None eagerly (only the taken branch
    ran); inside a function TF's cond_v2 gradient gives it zeros."""
    if wrap is gt.function:
        assert g is not None
        assert_allclose(g.numpy(), 0.0)
    else:
        assert g is None


def _cond_grads(pred, true_fn, false_fn, srcs, wrap):
    def run():
        with gt.GradientTape(persistent=True) as tape:
            for s in srcs:
                tape.watch(s)
            out = gt.cond(pred, true_fn, false_fn)
        return out, tape.gradient(out, srcs)

    return wrap(run)()


@MODES
@pytest.mark.parametrize("pred", [True, False])
def test_cond_basic(wrap, pred):
    x = gt.constant(1.0)
    y = gt.constant(2.0)
    out, (gx, gy) = _cond_grads(gt.constant(pred), lambda: x * 2.0, lambda: y * 3.0, [x, y], wrap)
    if pred:
        assert_allclose(out.numpy(), 2.0)
        assert_allclose(gx.numpy(), 2.0)
        _unconnected(gy, wrap)
    else:
        assert_allclose(out.numpy(), 6.0)
        _unconnected(gx, wrap)
        assert_allclose(gy.numpy(), 3.0)


@MODES
@pytest.mark.parametrize("pred", [True, False])
def test_cond_multiple_outputs(wrap, pred):
    x = gt.constant(1.0)
    y = gt.constant(3.0)

    def run():
        with gt.GradientTape(persistent=True) as tape:
            tape.watch([x, y])
            out = gt.cond(gt.constant(pred), lambda: (x * y, y), lambda: (x, y * 3.0))
        return out, tape.gradient(out, [x, y])

    (a, b), (gx, gy) = wrap(run)()
    if pred:
        assert_allclose([a.numpy(), b.numpy()], [3.0, 3.0])
        assert_allclose([gx.numpy(), gy.numpy()], [3.0, 2.0])
    else:
        assert_allclose([a.numpy(), b.numpy()], [1.0, 9.0])
        assert_allclose([gx.numpy(), gy.numpy()], [1.0, 3.0])


@MODES
@pytest.mark.parametrize("pred", [True, False])
def test_cond_basic2_python_constant_branch(wrap, pred):
    x = gt.constant(1.0)
    y = gt.constant(2.0)
    out, (gx, gy) = _cond_grads(gt.constant(pred), lambda: x * y * 2.0, _two(wrap), [x, y], wrap)
    if pred:
        assert_allclose(out.numpy(), 4.0)
        assert_allclose([gx.numpy(), gy.numpy()], [4.0, 2.0])
    else:
        assert_allclose(out.numpy(), 2.0)
        _unconnected(gx, wrap)
        _unconnected(gy, wrap)


@MODES
def test_cond_no_inputs(wrap):
    f = wrap(lambda p: gt.cond(p, lambda: gt.constant(1.0), lambda: gt.constant(2.0)))
    assert_allclose(f(gt.constant(True)).numpy(), 1.0)
    assert_allclose(f(gt.constant(False)).numpy(), 2.0)


@pytest.mark.parametrize("pred", [True, False])
def test_cond_function_in_cond(pred):
    x = gt.constant(1.0)
    y = gt.constant(2.0)

    def true_fn():
        @gt.function
        def fn():
            return x * y * 2.0

        return fn()

    def nested_true_fn():
        @gt.function
        def fn():
            @gt.function
            def nested():
                @gt.function
                def nested2():
                    return x * y * 2.0

                return nested2()

            return nested()

        return fn()

    for tf_ in (true_fn, nested_true_fn):
        for wrap in (_eager, gt.function):
            out, (gx, gy) = _cond_grads(gt.constant(pred), tf_, _two(wrap), [x, y], wrap)
            if pred:
                assert_allclose(out.numpy(), 4.0)
                assert_allclose([gx.numpy(), gy.numpy()], [4.0, 2.0])
            else:
                assert_allclose(out.numpy(), 2.0)
                _unconnected(gx, wrap)
                _unconnected(gy, wrap)


@MODES
@pytest.mark.parametrize("pred", [True, False])
def test_cond_nested_cond(wrap, pred):
    x = gt.constant(1.0)
    y = gt.constant(2.0)
    p = gt.constant(pred)

    def false_fn():
        return gt.cond(p, lambda: x * y * 2.0, lambda: x * 5.0)

    out, (gx, gy) = _cond_grads(p, _two(wrap), false_fn, [x, y], wrap)
    if pred:
        assert_allclose(out.numpy(), 2.0)
        _unconnected(gx, wrap)
        _unconnected(gy, wrap)
    else:
        assert_allclose(out.numpy(), 5.0)
        assert_allclose(gx.numpy(), 5.0)
        _unconnected(gy, wrap)


@MODES
@pytest.mark.parametrize("pred", [True, False])
def test_cond_nested_cond_both_branches(wrap, pred):
    x = gt.constant(1.0)
    y = gt.constant(2.0)
    p = gt.constant(pred)
    out, (gx, gy) = _cond_grads(
        p,
        lambda: gt.cond(p, lambda: x + y, lambda: x * x),
        lambda: gt.cond(p, lambda: x - y, lambda: y * y),
        [x, y],
        wrap,
    )
    if pred:
        assert_allclose(out.numpy(), 3.0)
        assert_allclose([gx.numpy(), gy.numpy()], [1.0, 1.0])
    else:
        assert_allclose(out.numpy(), 4.0)
        _unconnected(gx, wrap)
        assert_allclose(gy.numpy(), 4.0)


@MODES
@pytest.mark.parametrize("p1,p2", [(True, True), (True, False), (False, False), (False, True)])
def test_cond_double_nested(wrap, p1, p2):
    x = gt.constant(1.0)
    y = gt.constant(2.0)
    pred1 = gt.constant(p1)
    pred2 = gt.constant(p2)

    def false_fn():
        def ft():
            return gt.cond(pred1, lambda: x * y * 2.0, lambda: x * 10.0)

        return gt.cond(pred2, ft, lambda: x * 5.0)

    # Outer predicate is pred (placeholder fed True/False); use both.
    for outer in (True, False):
        out, (gx, gy) = _cond_grads(gt.constant(outer), _two(wrap), false_fn, [x, y], wrap)
        if outer:
            exp, egx, egy = 2.0, None, None
        elif not p2:
            exp, egx, egy = 5.0, 5.0, None
        elif p1:
            exp, egx, egy = 4.0, 4.0, 2.0
        else:
            exp, egx, egy = 10.0, 10.0, None
        assert_allclose(out.numpy(), exp)
        for g, e in ((gx, egx), (gy, egy)):
            if e is None:
                _unconnected(g, wrap)
            else:
                assert_allclose(g.numpy(), e)


@pytest.mark.parametrize("po,pi,expected", [
    (True, True, [0.0, 0.0]), (True, False, [0.0, 0.0]),
    (False, True, [4.0, 2.0]), (False, False, [5.0, 0.0])])
@pytest.mark.parametrize("nesting", ["function", "nested_function", "built_inside"])
def test_cond_gradient_from_inside_function(po, pi, expected, nesting):
    x = gt.constant(1.0)
    y = gt.constant(2.0)
    pred_outer = gt.constant(po)
    pred_inner = gt.constant(pi)

    def build():
        def false_fn():
            return gt.cond(pred_inner, lambda: x * y * 2.0, lambda: x * 5.0)

        return gt.cond(pred_outer, lambda: 2.0, false_fn)

    def grads():
        with gt.GradientTape() as tape:
            tape.watch([x, y])
            out = build()
        return tape.gradient(out, [x, y], unconnected_gradients=gt.UnconnectedGradients.ZERO)

    if nesting == "function":
        f = gt.function(grads)
    elif nesting == "nested_function":
        f = gt.function(lambda: gt.function(grads)())
    else:
        f = gt.function(grads)
    g = f()
    assert_allclose([g[0].numpy(), g[1].numpy()], expected)


@MODES
@pytest.mark.parametrize("pred", [True, False])
def test_cond_second_derivative(wrap, pred):
    x = gt.constant(3.0)

    def run():
        with gt.GradientTape() as t2:
            t2.watch(x)
            with gt.GradientTape() as t1:
                t1.watch(x)
                out = gt.cond(gt.constant(pred), lambda: gt.pow(x, 3), lambda: x)
            g = t1.gradient(out, x)
        gg = t2.gradient(g, x, unconnected_gradients=gt.UnconnectedGradients.ZERO)
        return g, gg

    g, gg = wrap(run)()
    if pred:
        assert_allclose(g.numpy(), 27.0)
        assert_allclose(gg.numpy(), 18.0)
    else:
        assert_allclose(g.numpy(), 1.0)
        assert_allclose(gg.numpy(), 0.0)


# ----------------------------------------------------------------------------- while


@MODES
def test_while_single_loop_var(wrap):
    x = gt.constant(2.0)

    def run():
        with gt.GradientTape() as tape:
            tape.watch(x)
            ret = gt.while_loop(lambda v: v < 8.0, lambda v: [v * v], [x])
        return ret, tape.gradient(ret, x)

    ret, g = wrap(run)()
    assert isinstance(ret, list) and len(ret) == 1
    assert_allclose(ret[0].numpy(), 16.0)
    assert_allclose(g.numpy(), 32.0)


@MODES
def test_while_single_loop_var_back_prop_false(wrap):
    x = gt.constant(2.0)

    def run():
        with gt.GradientTape() as tape:
            tape.watch(x)
            ret = gt.while_loop(lambda v: v < 8.0, lambda v: [v * v], [x], back_prop=False)
        return ret, tape.gradient(ret, x)

    ret, g = wrap(run)()
    assert_allclose(ret[0].numpy(), 16.0)
    if wrap is gt.function:
        # while_v2 (inside a function) stops gradients when back_prop=False.
        assert g is None
    else:
        # TF's eager while_loop ignores back_prop: the tape sees every iteration.
        assert_allclose(g.numpy(), 32.0)


@MODES
def test_while_custom_gradient(wrap):
    x = gt.constant(2.0)
    n = gt.constant(1.0)
    m = gt.Variable(1.0)

    def body_fn(v):
        @gt.custom_gradient
        def inner_fn(v):
            def grad_fn(dy, variables=None):
                return dy * 2 * v * n * m, [v * v]

            return v * v * m, grad_fn

        return [inner_fn(v)]

    def run():
        with gt.GradientTape() as tape:
            tape.watch(x)
            ret = gt.while_loop(lambda v: v < 8.0, body_fn, [x])
        return ret, tape.gradient(ret, x)

    ret, g = wrap(run)()
    assert_allclose(ret[0].numpy(), 16.0)
    assert_allclose(g.numpy(), 32.0)


def test_while_verify_input_output_types_match():
    @gt.function
    def build():
        x = gt.constant(1.0, gt.float32)
        gt.while_loop(lambda x: x < 10, lambda x: [gt.cast(x, gt.float16) + 1], [x])

    with pytest.raises(TypeError, match="float32.*float16|float16.*float32"):
        build()


@pytest.mark.parametrize("dtype", [gt.float32, gt.float64])
def test_while_gradient_tape_resource_variable(dtype):
    v = gt.Variable(1.0, dtype=dtype)

    @gt.function
    def fn_with_loop():
        with gt.GradientTape() as tape:
            _, x = gt.while_loop(lambda i, _: i < 2, lambda i, x: (i + 1, x * v),
                                 [0, gt.constant(2.0, dtype=dtype)])
        return tape.gradient(x, v)

    assert_allclose(fn_with_loop().numpy(), 4.0)


def _numeric_grad(f, x, eps=1e-3):
    return (float(f(gt.constant(x + eps))) - float(f(gt.constant(x - eps)))) / (2 * eps)


def test_while_iterated_gradients():
    def func(x):
        _, z = gt.while_loop(lambda i, _: i < 2, lambda i, y: (i + 1, gt.cos(y)), [0, x])
        return z

    def grad_of(f):
        def g(p):
            with gt.GradientTape() as tape:
                tape.watch(p)
                out = f(p)
            return tape.gradient(out, p)

        return g

    # exact derivatives of cos(cos(x)) at 1
    c1 = np.cos(1.0)
    d1 = np.sin(c1) * np.sin(1.0)
    d2 = -np.cos(c1) * np.sin(1.0) ** 2 + np.sin(c1) * np.cos(1.0)
    f = func
    one = gt.constant(1.0)
    for exact in [d1, d2]:
        numerical = _numeric_grad(gt.function(f), 1.0)
        f = grad_of(f)
        assert_allclose(gt.function(f)(one).numpy(), numerical, rtol=1e-2, atol=1e-3)
        assert_allclose(gt.function(f)(one).numpy(), exact, rtol=1e-4)
        assert_allclose(f(one).numpy(), exact, rtol=1e-4)
    # third order vs numerical
    numerical = _numeric_grad(gt.function(f), 1.0)
    f3 = grad_of(f)
    assert_allclose(gt.function(f3)(one).numpy(), numerical, rtol=1e-2, atol=1e-2)


def test_while_grad_while_grad_while_with_variable():
    v = gt.Variable(1.0)

    @gt.function
    def func(x):
        def inner(a):
            with gt.GradientTape() as tape:
                tape.watch(a)
                _, b = gt.while_loop(lambda i, _: i < 2, lambda i, y: (i + 1, gt.cos(v + y)), [0, a])
            return tape.gradient(b, a)

        _, z = gt.while_loop(lambda i, _: i < 2, lambda i, y: (i + 1, inner(y)), [0, x])
        return z

    x = gt.constant(1.0)
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = func(x)
    dx, _ = tape.gradient(y, [x, v])
    numerical = _numeric_grad(func, 1.0, eps=1e-3)
    assert_allclose(dx.numpy(), numerical, rtol=1e-2)


@MODES
def test_while_multiple_loop_vars_basic(wrap):
    x = gt.constant(5.0)
    y = gt.constant(3.0)

    def run():
        with gt.GradientTape() as tape:
            tape.watch(x)
            ret = gt.while_loop(lambda v, _: v < 45.0, lambda v, w: (v * w, w), [x, y])
        return ret, tape.gradient(ret, x)

    ret, g = wrap(run)()
    assert_allclose([ret[0].numpy(), ret[1].numpy()], [45.0, 3.0])
    assert_allclose(g.numpy(), 9.0)


@MODES
def test_while_multiple_loop_nonscalar_cond(wrap):
    x = gt.constant([[5.0]])
    y = gt.constant(3.0)

    def run():
        with gt.GradientTape() as tape:
            tape.watch(x)
            ret = gt.while_loop(lambda v, _: v < 45.0, lambda v, w: (v * w, w), [x, y])
        return ret, tape.gradient(ret, x)

    ret, g = wrap(run)()
    assert_allclose(ret[0].numpy(), [[45.0]])
    assert_allclose(ret[1].numpy(), 3.0)
    assert_allclose(g.numpy(), [[9.0]])


@MODES
def test_while_multiple_loop_vars(wrap):
    x = gt.constant(5.0)
    y = gt.constant(3.0)

    def run():
        with gt.GradientTape(persistent=True) as tape:
            tape.watch([x, y])
            ret = gt.while_loop(lambda v, _: v < 45.0, lambda v, w: (v * w, v + w), [x, y])
        out = [ret]
        for src in (x, y):
            out.append([tape.gradient(ret[0], src), tape.gradient(ret[1], src),
                        tape.gradient(ret, src)])
        return out

    ret, gx, gy = wrap(run)()
    assert_allclose([ret[0].numpy(), ret[1].numpy()], [120.0, 23.0])
    assert_allclose([g.numpy() for g in gx], [39.0, 4.0, 43.0])
    assert_allclose([g.numpy() for g in gy], [55.0, 6.0, 61.0])


@MODES
def test_while_gradient_tape(wrap):
    def run():
        with gt.GradientTape() as t:
            x = gt.constant(2.0)
            t.watch(x)
            ret = gt.while_loop(lambda v: v < 4.0, lambda v: [v * v], [x])
        return t.gradient(ret, x)

    assert_allclose(wrap(run)().numpy(), 4.0)


@MODES
def test_while_multiple_while_loops_double_derivative(wrap):
    def run():
        x = gt.constant(2.0)
        with gt.GradientTape() as t2:
            t2.watch(x)
            with gt.GradientTape() as t1:
                t1.watch(x)
                (r1,) = gt.while_loop(lambda v: v < 4.0, lambda v: [v * v], [x])
                (r2,) = gt.while_loop(lambda v: v < 16.0, lambda v: [v * v], [r1])
            g = t1.gradient(r2, x)
        return g, t2.gradient(g, x)

    g, gg = wrap(run)()
    assert_allclose(g.numpy(), 32.0)
    assert_allclose(gg.numpy(), 48.0)


@MODES
def test_while_double_derivative(wrap):
    def run():
        x = gt.constant(2.0)
        with gt.GradientTape() as t2:
            t2.watch(x)
            with gt.GradientTape() as t1:
                t1.watch(x)
                (r,) = gt.while_loop(lambda v: v < 8.0, lambda v: [v ** 2], [x])
            g = t1.gradient(r, x)
        return r, g, t2.gradient(g, x)

    r, g, gg = wrap(run)()
    assert_allclose(r.numpy(), 16.0)
    assert_allclose(g.numpy(), 32.0)
    assert_allclose(gg.numpy(), 48.0)


def test_cond_in_function_returns_tensors_for_captured_pred():
    # Inside a function tf.cond is always a cond_v2 op: outputs are tensors even when
    # the predicate is a captured eager tensor and a branch returns a Python float.
    p = gt.constant(True)

    @gt.function
    def f():
        return gt.cond(p, lambda: 2.0, lambda: 3.0)

    out = f()
    assert isinstance(out, gt.Tensor)
    assert_allclose(out.numpy(), 2.0)


@MODES
def test_while_body_returns_bare_tensor_for_single_loop_var(wrap):
    # TF packs a non-sequence body result into the loop-vars structure (both the eager
    # while_loop and while_v2 do), so ``lambda v: v * v`` works with loop_vars=[x].
    x = gt.constant(2.0)

    def run():
        with gt.GradientTape() as tape:
            tape.watch(x)
            ret = gt.while_loop(lambda v: v < 8.0, lambda v: v * v, [x])
        return ret, tape.gradient(ret, x)

    ret, g = wrap(run)()
    assert isinstance(ret, list) and len(ret) == 1
    assert_allclose(ret[0].numpy(), 16.0)
    assert_allclose(g.numpy(), 32.0)


def test_cond_gradient_tape_of_cond_with_resource_variable_in_function():
    v = gt.Variable(2.0)

    @gt.function
    def fn_with_cond():
        with gt.GradientTape() as tape:
            pred = gt.constant(True, dtype=gt.bool)
            c = gt.cond(pred, lambda: gt.pow(v, 3), lambda: v)
        return tape.gradient(c, v)

    assert_allclose(fn_with_cond().numpy(), 12.0)


def _check_iterated_cos_gradients(func):
    def grad_of(f):
        def g(primal):
            with gt.GradientTape() as tape:
                tape.watch(primal)
                out = f(primal)
            return tape.gradient(out, primal)

        return g

    f = func
    one = gt.constant(1.0)
    for expected in [np.cos, lambda x: -np.sin(x), lambda x: -np.cos(x), np.sin, np.cos]:
        assert_allclose(gt.function(f)(one).numpy(), expected(1.0), rtol=1e-6)
        assert_allclose(f(one).numpy(), expected(1.0), rtol=1e-6)
        f = grad_of(f)


def test_cond_iterated_gradients_cond():
    def func(x):
        return gt.cond(gt.constant(True), lambda: gt.cos(gt.identity(x)), lambda: gt.sin(gt.identity(x)))

    _check_iterated_cos_gradients(func)


def test_cond_iterated_gradients_case():
    def func(x):
        return gt.switch_case(gt.constant(1), [lambda: gt.sin(gt.identity(x)), lambda: gt.cos(gt.identity(x))])

    _check_iterated_cos_gradients(func)


@MODES
def test_cond_structured_outputs(wrap):
    x = gt.constant(1.0)
    y = gt.constant(3.0)
    out = wrap(lambda: gt.cond(gt.constant(False), lambda: ((x * y,), y), lambda: ((x,), y * 3.0)))()
    assert isinstance(out, tuple) and isinstance(out[0], tuple)
    assert_allclose(out[0][0].numpy(), 1.0)
    assert_allclose(out[1].numpy(), 9.0)


def test_cond_raises_output_structures_mismatch():
    # TF (cond_v2, i.e. inside a function) raises TypeError for mismatched structures.
    x = gt.constant(1.0)
    y = gt.constant(3.0)

    @gt.function
    def f(p):
        return gt.cond(p, lambda: (x * y, y), lambda: ((x,), y * 3.0))

    with pytest.raises(TypeError, match="same"):
        f(gt.constant(False))


@MODES
def test_cond_and_tensor_array(wrap):
    def run():
        x = gt.range(-5, 5)
        output = gt.TensorArray(dtype=gt.int32, size=x.shape[0])

        def loop_body(i, output):
            def if_true():
                return output.write(i, x[i] ** 2)

            def if_false():
                return output.write(i, x[i])

            output = gt.cond(x[i] > 0, if_true, if_false)
            return i + 1, output

        _, output = gt.while_loop(lambda i, arr: i < x.shape[0], loop_body,
                                  loop_vars=(gt.constant(0), output))
        return output.stack()

    np.testing.assert_array_equal(wrap(run)().numpy(), [-5, -4, -3, -2, -1, 0, 1, 4, 9, 16])


def test_cond_is_control_flow_graph_values():
    x = gt.constant(1.0)

    @gt.function
    def f(c):
        return gt.cond(c, lambda: x + 1, lambda: x + 1)

    assert_allclose(f(gt.constant(True)).numpy(), 2.0)
    assert_allclose(f(gt.constant(False)).numpy(), 2.0)


@MODES
def test_cond_forward_pass_rewrite_values(wrap):
    # Values/gradients of testForwardPassRewrite / testDoNotAccumulateConstants.
    x = gt.constant(1.0)
    y = gt.constant(1.0)

    def run():
        with gt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            o1 = gt.cond(gt.constant(True), lambda: x * (y + 1.0), lambda: x)
            o2 = gt.cond(gt.constant(True), lambda: x * 2.0, lambda: x)
        return o1, tape.gradient(o1, x), tape.gradient(o1, x), o2, tape.gradient(o2, x)

    o1, g1, g1b, o2, g2 = wrap(run)()
    assert_allclose([o1.numpy(), g1.numpy(), g1b.numpy(), o2.numpy(), g2.numpy()], [2.0, 2.0, 2.0, 2.0, 2.0])


def test_cond_gradient_of_mixed_branch_values():
    # testGradientOfMixedOptionals without the optional: d(x**2)/dx when c is True.
    @gt.function
    def f(c):
        x = gt.constant(1.0)
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = gt.cond(c, lambda: x ** 2.0, lambda: x ** 3.0)
        return tape.gradient(y, x)

    assert_allclose(f(gt.constant(True)).numpy(), 2.0)
    assert_allclose(f(gt.constant(False)).numpy(), 3.0)


def test_cond_collection_like_values():
    # CondV2CollectionTest without graph collections: int values and tensors read in branches.
    def fn():
        return gt.add(gt.constant(2), gt.constant(5))

    assert int(gt.function(lambda: gt.cond(gt.constant(True), fn, fn))()) == 7
    x = gt.constant(2)
    y = gt.constant(5)
    assert int(gt.function(lambda: gt.cond(gt.less(x, y), lambda: x + y, lambda: x + y))()) == 7
    assert int(gt.function(lambda: gt.cond(gt.constant(True), lambda: x * (x + y), lambda: x * (x + y)))()) == 14


@MODES
def test_case_stateless_values(wrap):
    x = gt.constant(1)
    out = wrap(lambda: gt.switch_case(gt.constant(0), [lambda: x + 1, lambda: x + 2]))()
    assert int(out) == 2
    out = wrap(lambda: gt.switch_case(gt.constant(0), [lambda: x, lambda: x + 1]))()
    assert int(out) == 1


# ------------------------------------------------------------------ more while_v2


@MODES
def test_while_capture_external_tensor_in_cond(wrap):
    x = gt.constant(2.0)
    y = gt.constant(1.0)

    def run():
        with gt.GradientTape() as tape:
            tape.watch(x)
            (ret,) = gt.while_loop(lambda v: v + y < 9.0, lambda v: [v * 3.0], [x])
        return ret, tape.gradient(ret, x)

    ret, g = wrap(run)()
    assert_allclose([ret.numpy(), g.numpy()], [18.0, 9.0])


@MODES
def test_while_capture_external_tensor_in_body(wrap):
    x = gt.constant(2.0)
    y = gt.constant(3.0)

    def run():
        with gt.GradientTape(persistent=True) as tape:
            tape.watch([x, y])
            (ret,) = gt.while_loop(lambda v: v < 8.0, lambda v: [v * y], [x])
        return ret, tape.gradient(ret, x), tape.gradient(ret, y)

    ret, g, gy = wrap(run)()
    assert_allclose([ret.numpy(), g.numpy()], [18.0, 9.0])
    # d(x*y*y)/dy = 2xy = 12
    assert_allclose(gy.numpy(), 12.0)


@MODES
def test_while_and_map_fn(wrap):
    param = gt.constant(2.0)
    y0 = gt.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])

    def run():
        with gt.GradientTape() as tape:
            tape.watch(param)
            r = gt.map_fn(lambda x: gt.multiply(x, param), y0)
        return r, tape.gradient(r, param)

    r, g = wrap(run)()
    assert_allclose(r.numpy(), [2.0, 4.0, 6.0, 8.0, 10.0, 12.0])
    assert_allclose(g.numpy(), 21.0)


@MODES
def test_while_nested_while(wrap):
    n = gt.constant(3.0)
    m = gt.constant(5.0)
    sum_of_powers = gt.constant(0.0)

    def body(i, previous_sum):
        prod = gt.constant(1.0)
        return (i - 1.0, previous_sum + gt.while_loop(lambda c, _: c > 0, lambda c, v: (c - 1.0, v * n), [i, prod])[1])

    def run():
        with gt.GradientTape() as tape:
            tape.watch(n)
            result = gt.while_loop(lambda i, _: i >= 0, body, [m, sum_of_powers])[1]
        return result, tape.gradient(result, n)

    result, g = wrap(run)()
    assert_allclose(result.numpy(), 364.0)
    assert_allclose(g.numpy(), 547.0)


@MODES
def test_while_identity_node_in_body(wrap):
    def body(v):
        v = gt.identity(v)
        v = gt.identity(v)
        return [v * v]

    x = gt.constant(2.0)

    def run():
        with gt.GradientTape() as tape:
            tape.watch(x)
            (ret,) = gt.while_loop(lambda v: v < 8.0, body, [x])
        return ret, tape.gradient(ret, x)

    ret, g = wrap(run)()
    assert_allclose([ret.numpy(), g.numpy()], [16.0, 32.0])


def test_while_shapes_of_ops_in_body_in_function():
    shape = gt.constant([3, 4])
    seen = []

    @gt.function
    def f():
        def body(i, u):
            shape_extended = gt.concat([[5], shape], axis=0)
            u = gt.reshape(u, [-1])
            seen.append(tuple(u.shape))
            u = gt.reshape(u, shape_extended)
            seen.append(tuple(u.shape))
            z = gt.zeros(shape_extended)
            o = gt.ones(shape_extended)
            fl = gt.fill(shape_extended, 1.0)
            seen.extend([tuple(z.shape), tuple(o.shape), tuple(fl.shape)])
            return i + 1, u + z + o * fl

        return gt.while_loop(lambda i, _: i < 3, body, [0, gt.zeros([5, 3, 4], dtype=gt.float32)])

    i, u = f()
    assert int(i) == 3
    assert_allclose(u.numpy(), np.full((5, 3, 4), 3.0))
    assert seen[:5] == [(60,), (5, 3, 4), (5, 3, 4), (5, 3, 4), (5, 3, 4)]


@MODES
def test_while_external_colocation_grad_values(wrap):
    v0 = gt.constant(2.0)

    def run():
        with gt.GradientTape() as tape:
            tape.watch(v0)
            ret = gt.while_loop(lambda v: v < 8.0, lambda v: [v * v], [v0])[0]
        return ret, tape.gradient(ret, v0)

    ret, g = wrap(run)()
    assert_allclose([ret.numpy(), g.numpy()], [16.0, 32.0])


@MODES
def test_while_do_not_accumulate_const_nodes_values(wrap):
    v0 = gt.constant(2.0)

    def run():
        with gt.GradientTape() as tape:
            tape.watch(v0)
            ret = gt.while_loop(lambda v: v < 8.0, lambda v: [v * 2.0], [v0])[0]
        return ret, tape.gradient(ret, v0)

    ret, g = wrap(run)()
    assert_allclose([ret.numpy(), g.numpy()], [8.0, 4.0])


def test_while_custom_gradient_zero_grad_in_body():
    # testDoNotAccumulateForwardTensorsForReductionOps: gradient of a custom
    # zero-gradient op in a loop body is zero.
    @gt.function
    def fn():
        with gt.GradientTape() as tape:
            x = gt.constant(2.0)
            tape.watch(x)

            def body(i, x):
                @gt.custom_gradient
                def squared_with_zero_grad(x):
                    def grad(unused_g, variables=None):
                        del variables
                        return gt.zeros(gt.shape(x))

                    return x * 2, grad

                return i + 1, squared_with_zero_grad(x)

            _, result = gt.while_loop(lambda i, _: i < 2, body, [0, x])
        return result, tape.gradient(result, x)

    result, g = fn()
    assert_allclose(result.numpy(), 8.0)
    assert_allclose(g.numpy(), 0.0)


def test_while_python_float_loop_var_in_function():
    # testInheritParentNameScope's loop (name scopes dropped): cond False, Python float var.
    @gt.function
    def f():
        return gt.while_loop(lambda i: False, lambda i: [i], [0.0])

    (r,) = f()
    assert isinstance(r, gt.Tensor)
    assert_allclose(r.numpy(), 0.0)


@MODES
def test_while_run_basic(wrap):
    (ret,) = wrap(lambda: gt.while_loop(lambda x: x < 1000, lambda x: [x + 1], [gt.constant(0)]))()
    assert int(ret) == 1000


def test_while_is_control_flow_graph_values():
    @gt.function
    def f(c):
        return gt.while_loop(lambda i: i < 2, lambda i: [i + 1], [c])

    (ret,) = f(gt.constant(0))
    assert int(ret) == 2


@MODES
def test_while_indexed_slices_in_incoming_grads(wrap):
    def run():
        x = gt.constant([2.0])
        with gt.GradientTape() as tape:
            tape.watch(x)
            (ret,) = gt.while_loop(lambda _: True, lambda v: [v * v], [x], maximum_iterations=2)
            v = gt.gather(ret, [0])
        return tape.gradient(v, x)

    assert_allclose(wrap(run)().numpy(), [32.0])


@MODES
def test_while_maximum_iterations_loop_invariant_grad(wrap):
    # _testDoNotAccumulateInvariants / testPruningNested3 values: r = v**5 * 1, dr/dv = 5 v**4.
    v = gt.constant(5.0)

    def run():
        with gt.GradientTape() as tape:
            tape.watch(v)
            (r,) = gt.while_loop(lambda _: True, lambda x: [v * x], [1.0], maximum_iterations=5)
        return r, tape.gradient(r, v)

    r, g = wrap(run)()
    assert_allclose(r.numpy(), 5.0 ** 5)
    assert_allclose(g.numpy(), 5 * 5.0 ** 4)


# ----------------------------------------------------------------------------- map_fn


@MODES
def test_map_simple(wrap):
    nums = [1, 2, 3, 4, 5, 6]
    elems = gt.constant(nums)
    r = wrap(lambda: gt.map_fn(lambda x: gt.multiply(gt.add(x, 3), 2), elems))()
    np.testing.assert_array_equal(r.numpy(), [(x + 3) * 2 for x in nums])


@MODES
def test_map_variable(wrap):
    v = gt.Variable([1, 2])
    result = wrap(lambda: gt.map_fn(lambda x: x + 1, v))()
    np.testing.assert_array_equal(result.numpy(), [2, 3])


def test_map_over_scalar_errors():
    with pytest.raises(ValueError, match="must be .* Tensor.* not scalar"):
        gt.map_fn(lambda x: x, [1, 2])
    with pytest.raises(ValueError, match="must be .* Tensor.* not scalar"):
        gt.map_fn(lambda x: x, 1)


@MODES
def test_map_grad(wrap):
    param = gt.constant(2.0)
    elems = gt.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])

    def run():
        with gt.GradientTape(persistent=True) as tape:
            tape.watch([param, elems])
            y = gt.map_fn(lambda x: gt.multiply(gt.square(x), param), elems)
        return tape.gradient(y, param), tape.gradient(y, elems)

    r_param, r_elems = wrap(run)()
    assert_allclose(r_param.numpy(), 91.0)
    assert_allclose(r_elems.numpy(), [4.0, 8.0, 12.0, 16.0, 20.0, 24.0])


@MODES
def test_map_grad_second_order(wrap):
    # Second derivative through map_fn: d2/dx2 sum(x**3 * p) = 6 x p.
    param = gt.constant(2.0)
    elems = gt.constant([1.0, 2.0, 3.0])

    def run():
        with gt.GradientTape() as t2:
            t2.watch(elems)
            with gt.GradientTape() as t1:
                t1.watch(elems)
                y = gt.map_fn(lambda x: x * x * x * param, elems)
            g = t1.gradient(y, elems)
        return g, t2.gradient(g, elems)

    g, gg = wrap(run)()
    assert_allclose(g.numpy(), [6.0, 24.0, 54.0])
    assert_allclose(gg.numpy(), [12.0, 24.0, 36.0])


@MODES
def test_map_simple_not_tensor(wrap):
    nums = np.array([1, 2, 3, 4, 5, 6])
    r = wrap(lambda: gt.map_fn(lambda x: gt.multiply(gt.add(x, 3), 2), nums))()
    np.testing.assert_array_equal(r.numpy(), (nums + 3) * 2)


@MODES
def test_map_single_input_multi_output(wrap):
    nums = np.array([1, 2, 3, 4, 5, 6])
    r = wrap(lambda: gt.map_fn(lambda x: ((x + 3) * 2, -(x + 3) * 2), nums, dtype=(gt.int64, gt.int64)))()
    assert len(r) == 2
    assert tuple(r[0].shape) == (6,)
    assert tuple(r[1].shape) == (6,)
    np.testing.assert_array_equal(r[0].numpy(), (nums + 3) * 2)
    np.testing.assert_array_equal(r[1].numpy(), -(nums + 3) * 2)


@MODES
def test_map_single_input_multi_output_fn_output_signature(wrap):
    nums = np.array([1, 2, 3, 4, 5, 6])
    r = wrap(lambda: gt.map_fn(lambda x: ((x + 3) * 2, -(x + 3) * 2), nums,
                               fn_output_signature=(gt.int64, gt.TensorSpec([], gt.int64))))()
    assert r[0].dtype == gt.int64 and r[1].dtype == gt.int64
    np.testing.assert_array_equal(r[0].numpy(), (nums + 3) * 2)
    np.testing.assert_array_equal(r[1].numpy(), -(nums + 3) * 2)


def test_map_multi_output_mismatched_dtype():
    nums = np.array([1, 2, 3, 4, 5, 6])
    with pytest.raises(TypeError, match=r"two structures don't have the same nested structure"):
        gt.map_fn(lambda x: ((x + 3) * 2, -(x + 3) * 2), nums, dtype=[gt.int64, gt.int64])


@MODES
def test_map_multi_input_single_output(wrap):
    nums = np.array([1, 2, 3, 4, 5, 6])
    r = wrap(lambda: gt.map_fn(lambda x: x[0] * x[1][0] + x[1][1], (nums, (nums, -nums)), dtype=gt.int64))()
    assert tuple(r.shape) == (6,)
    np.testing.assert_array_equal(r.numpy(), nums * nums + (-nums))


@MODES
def test_map_multi_input_same_structure_output(wrap):
    nums = np.array([1, 2, 3, 4, 5, 6])
    r = wrap(lambda: gt.map_fn(lambda x: (x[1][0], (x[1][1], x[0])), (nums, (2 * nums, -nums))))()
    r = [r[0], r[1][0], r[1][1]]
    for t in r:
        assert tuple(t.shape) == (6,)
    np.testing.assert_array_equal(r[0].numpy(), 2 * nums)
    np.testing.assert_array_equal(r[1].numpy(), -nums)
    np.testing.assert_array_equal(r[2].numpy(), nums)


def test_map_autograph_indirect():
    def test_function(x):
        c = gt.constant(-1)
        if c == 0:
            result = x
        else:
            result = x
        return result

    @gt.function
    def map_call(x):
        return gt.map_fn(test_function, x)

    np.testing.assert_array_equal(map_call(gt.constant([1])).numpy(), [1])


@MODES
def test_map_shape(wrap):
    x = gt.constant([[1, 2, 3], [4, 5, 6]])
    y = wrap(lambda: gt.map_fn(lambda e: e, x))()
    assert tuple(y.shape) == y.numpy().shape == (2, 3)


def test_map_empty_list():
    with pytest.raises(ValueError, match=r"elems must be a Tensor or"):
        gt.map_fn(lambda e: e, [])


@MODES
def test_map_nested_elems_gradient(wrap):
    a = gt.constant([1.0, 2.0, 3.0])
    b = gt.constant([4.0, 5.0, 6.0])

    def run():
        with gt.GradientTape(persistent=True) as tape:
            tape.watch([a, b])
            out = gt.map_fn(lambda t: {"p": t["x"] * t["y"][0], "q": t["y"][1] ** 2},
                            {"x": a, "y": (b, a)})
        return out, tape.gradient(out["p"], [a, b]), tape.gradient(out, a)

    out, (ga, gb), gsum = wrap(run)()
    assert_allclose(out["p"].numpy(), [4.0, 10.0, 18.0])
    assert_allclose(out["q"].numpy(), [1.0, 4.0, 9.0])
    assert_allclose(ga.numpy(), [4.0, 5.0, 6.0])
    assert_allclose(gb.numpy(), [1.0, 2.0, 3.0])
    assert_allclose(gsum.numpy(), [6.0, 9.0, 12.0])


# ------------------------------------------------------------------- switch_case
# (IndexedCaseTest of control_flow_ops_test.py, run in eager and in a gt.function with
# the branch index an argument, as TF's placeholder_with_default.)


def _case_branch(bi):
    return lambda: gt.constant(bi * 10.0)


@MODES
@pytest.mark.parametrize("bi", [0, 2, 3])
def test_switch_case(wrap, bi):
    branches = [(i, _case_branch(i)) for i in range(5)]
    out = wrap(lambda b: gt.switch_case(b, branches))(gt.constant(bi))
    assert_allclose(out.numpy(), bi * 10.0)


@MODES
@pytest.mark.parametrize("bi", [-1, 2, 4, 5, 6])
def test_switch_case_with_default(wrap, bi):
    branches = [(i, _case_branch(i)) for i in range(5)]
    out = wrap(lambda b: gt.switch_case(b, branches, default=_case_branch(6)))(gt.constant(bi))
    assert_allclose(out.numpy(), 60.0 if bi < 0 or bi >= 5 else bi * 10.0)


@MODES
@pytest.mark.parametrize("bi", [-1, 0, 3, 5])
def test_switch_case_dict_with_default(wrap, bi):
    branches = {i: _case_branch(i) for i in range(5)}
    out = wrap(lambda b: gt.switch_case(b, branches, default=_case_branch(6)))(gt.constant(bi))
    assert_allclose(out.numpy(), 60.0 if bi < 0 or bi >= 5 else bi * 10.0)


@MODES
@pytest.mark.parametrize("bi", [-1, 1, 4, 5])
def test_switch_case_gradient(wrap, bi):
    nbranches = 5
    inputs = [gt.constant(float(i)) for i in range(nbranches)]
    branches = {i: (lambda i=i: inputs[i] ** 2.0) for i in range(nbranches)}

    def run(b):
        with gt.GradientTape() as tape:
            for x in inputs:
                tape.watch(x)
            out = gt.switch_case(b, branches)
        return tape.gradient(out, inputs, output_gradients=gt.constant(3.0))

    grads = wrap(run)(gt.constant(bi))
    used = nbranches - 1 if bi < 0 or bi >= nbranches - 1 else bi
    assert len(grads) == nbranches
    for i, g in enumerate(grads):
        if i == used:
            assert_allclose(g.numpy(), 3.0 * 2.0 * used)
        elif wrap is gt.function:
            # In a graph the Case op's gradient gives zeros to the untaken branches' inputs.
            assert_allclose(g.numpy(), 0.0)
        else:
            assert g is None


@MODES
@pytest.mark.parametrize("bi", [-2, 2, 5])
def test_switch_case_gradient_diff_shaped_intermediates(wrap, bi):
    nbranches = 5
    inputs = [gt.constant(float(i), shape=[i + 1]) for i in range(nbranches)]

    def make_func(i):
        def f():
            x = inputs[i] ** 2 * inputs[i][: i + 1, None]
            return gt.reduce_sum(x)

        return f

    branches = {i: make_func(i) for i in range(nbranches)}

    def run(b):
        with gt.GradientTape() as tape:
            for x in inputs:
                tape.watch(x)
            out = gt.switch_case(b, branches)
        return tape.gradient(out, inputs, output_gradients=gt.constant(3.0))

    grads = wrap(run)(gt.constant(bi))
    used = nbranches - 1 if bi < 0 or bi >= nbranches - 1 else bi
    # sum_{j,k} x_j^2 x_k with all x = used: d/dx_m = 2 x_m sum_k x_k + sum_j x_j^2
    n = used + 1
    v = float(used)
    expected_used = 3.0 * (2 * v * n * v + n * v * v)
    for i, g in enumerate(grads):
        if i == used:
            assert_allclose(g.numpy(), np.full([n], expected_used))
        elif wrap is gt.function:
            assert_allclose(g.numpy(), np.zeros([i + 1]))
        else:
            assert g is None


def test_switch_case_validate_indices_contiguous():
    branches = {i: _case_branch(i) for i in range(0, 6, 2)}
    with pytest.raises(ValueError, match="must form contiguous"):
        gt.switch_case(gt.constant(0), branches)


def test_switch_case_validate_indices_dup():
    branches = [(i, _case_branch(i)) for i in range(0, 6, 2)]
    branches.append((0, _case_branch(7)))
    with pytest.raises(ValueError, match="must form contiguous"):
        gt.switch_case(gt.constant(0), branches)


def test_switch_case_validate_branch_index():
    branches = {i: _case_branch(i) for i in range(5)}
    with pytest.raises(TypeError, match="branch_index.*Tensor"):
        gt.switch_case(1, branches)


def test_switch_case_validate_non_int_keys():
    branches = [(gt.constant(i), _case_branch(i)) for i in range(5)]
    with pytest.raises(TypeError, match="must be a Python `int`"):
        gt.switch_case(gt.constant(1), branches)


# ------------------------------------------- control_flow_ops_py_test: cond / while
# (ControlFlowTest; the TF test class runs eagerly and with control flow v2.)


def test_cf_cond_bool_pred_in_function_and_eager():
    # TF's graph-mode cond rejects a Python bool predicate ("must not be a Python bool");
    # tf.cond in TF2 eager accepts it. Inside a function it is still rejected.
    values = gt.constant(10)

    @gt.function
    def f():
        return gt.cond(False, lambda: gt.add(values, 1), lambda: gt.subtract(values, 1))

    with pytest.raises(TypeError, match="must not be a Python bool"):
        f()


def test_cf_cond_int_gradient_is_none():
    # Integer tensors are not differentiable: the gradient wrt an int32 source is None.
    v = gt.constant(10)

    @gt.function
    def f(p):
        with gt.GradientTape() as tape:
            # gradtape (per its API) warns when an integer tensor is watched.
            with pytest.warns(UserWarning, match="floating"):
                tape.watch(v)
            y = gt.cond(p, lambda: gt.add(v, 1), lambda: gt.subtract(v, 1))
        return y, tape.gradient(y, [v])

    y, g = f(gt.constant(True))
    assert int(y) == 11
    assert g == [None]


@MODES
def test_cf_cond_output_shape(wrap):
    x = gt.constant(1.0)
    b = wrap(lambda: gt.cond(gt.constant(True), lambda: gt.square(x), lambda: gt.subtract(x, 1.0)))()
    assert tuple(b.shape) == ()


@MODES
def test_cf_cond_resource_grad_shape(wrap):
    rv1 = gt.Variable([1.0, 2.0])
    rv2 = gt.Variable([3.0, 4.0])

    def run():
        with gt.GradientTape() as tape:
            result = gt.cond(gt.constant(True), lambda: rv1, lambda: rv2)
        return tape.gradient(result, [rv1, rv2], unconnected_gradients=gt.UnconnectedGradients.ZERO)

    g1, g2 = wrap(run)()
    assert tuple(g1.shape) == (2,) and tuple(g2.shape) == (2,)
    assert_allclose(g1.numpy(), [1.0, 1.0])
    assert_allclose(g2.numpy(), [0.0, 0.0])


@MODES
@pytest.mark.parametrize("pred", [True, False])
def test_cf_cond_with_map_fn_grad(wrap, pred):
    x = gt.constant([1.0, 2.0, 3.0])

    def run(p):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = gt.cond(p, lambda: gt.map_fn(lambda z: z * 2.0, x), lambda: gt.constant([1.0, 1.0, 1.0]))
        return tape.gradient(y, x, unconnected_gradients=gt.UnconnectedGradients.ZERO)

    g = wrap(run)(gt.constant(pred))
    assert_allclose(g.numpy(), [2.0, 2.0, 2.0] if pred else [0.0, 0.0, 0.0])


@MODES
def test_cf_cond_1_2_3(wrap):
    x = gt.constant(10)

    def run():
        pred = gt.less(1, 2)
        fn1 = lambda: gt.add(x, 1)  # noqa: E731
        fn2 = lambda: gt.subtract(x, 1)  # noqa: E731
        r1 = gt.cond(pred, fn1, fn2)
        r2 = gt.cond(gt.less(1, 0), fn1, fn2)
        r3 = gt.cond(pred, lambda: gt.add(gt.cond(pred, fn1, fn2), 1), fn2)
        return r1, r2, r3

    r1, r2, r3 = wrap(run)()
    assert [int(r1), int(r2), int(r3)] == [11, 9, 12]


def test_cf_cond_pruning_assignments_in_function():
    v1 = gt.Variable(7)
    v2 = gt.Variable(7)
    v3 = gt.Variable(7)

    @gt.function
    def f():
        pred = gt.greater(gt.constant(3), gt.constant(2))

        def fn1():
            v1.assign(1)
            v2.assign(2)
            return gt.constant(True)

        def fn2():
            v3.assign(3)
            return gt.constant(False)

        return gt.cond(pred, fn1, fn2)

    assert bool(f())
    assert [int(v1.numpy()), int(v2.numpy()), int(v3.numpy())] == [1, 2, 7]


@MODES
def test_cf_cond_5(wrap):
    def run():
        alive = gt.constant(True)
        count = gt.constant(0)

        def body(i):
            return gt.cond(alive, lambda: [gt.less(i, 3), gt.add(count, 1)], lambda: [alive, count])

        for i in range(10):
            alive, count = body(i)
        return count

    assert int(wrap(run)()) == 4


@MODES
def test_cf_cond_7_list_tuple_dict_outputs(wrap):
    x = gt.constant(10)
    y = gt.constant(200)

    def run():
        pred = gt.less(1, 2)
        r7 = gt.cond(pred, lambda: [gt.add(x, 1), gt.add(x, 2)], lambda: [y, y])
        rl = gt.cond(pred, lambda: [gt.add(x, y), gt.add(x, y)], lambda: [y, y])
        rt = gt.cond(pred, lambda: (gt.add(x, y), gt.add(x, y)), lambda: (y, y))
        rd = gt.cond(pred, lambda: {"a": gt.add(x, y), "b": gt.add(x, y)}, lambda: {"a": y, "b": y})
        rel = gt.cond(pred, lambda: [[gt.add(x, y), gt.add(x, y)]], lambda: [[y, y]])
        red = gt.cond(pred, lambda: {"a": {"c": gt.add(x, y)}, "b": {"d": gt.add(x, y)}},
                      lambda: {"a": {"c": y}, "b": {"d": y}})
        return r7, rl, rt, rd, rel, red

    r7, rl, rt, rd, rel, red = wrap(run)()
    assert isinstance(r7, list) and [int(t) for t in r7] == [11, 12]
    assert isinstance(rl, list) and [int(t) for t in rl] == [210, 210]
    assert isinstance(rt, tuple) and tuple(int(t) for t in rt) == (210, 210)
    assert {k: int(v) for k, v in rd.items()} == {"a": 210, "b": 210}
    assert isinstance(rel, list) and [[int(t) for t in rel[0]]] == [[210, 210]]
    assert {k: {kk: int(vv) for kk, vv in v.items()} for k, v in red.items()} == {"a": {"c": 210}, "b": {"d": 210}}


def test_cf_cond_check_nested_output_struct():
    x = gt.constant(10)
    y = gt.constant(200)

    @gt.function
    def f():
        pred = gt.less(1, 2)
        return gt.cond(pred, lambda: {"a": gt.add(x, y), "b": gt.add(x, y)}, lambda: {"c": y, "d": y})

    with pytest.raises(TypeError, match="true_fn and false_fn arguments to tf.cond must have the same"):
        f()


@pytest.mark.parametrize("dtype", [gt.float32, gt.float64])
def test_cf_cond_resource_grad_variable_branch(dtype):
    v1 = gt.Variable(gt.constant([7.0], dtype=dtype))

    @gt.function
    def f():
        age = gt.constant(3.0, dtype=dtype)
        with gt.GradientTape() as tape:
            r = gt.cond(gt.greater(age, 4.0), lambda: age, lambda: v1)
        return tape.gradient(r, v1)

    assert_allclose(f().numpy(), [1.0])


@MODES
def test_cf_cond_grad_1_and_2(wrap):
    x = gt.constant(10.0)

    def run(c):
        with gt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            r1 = gt.cond(gt.less(1, 2), lambda: gt.identity(x), lambda: gt.identity(x))
            r2 = gt.cond(gt.less(c, 2), lambda: gt.multiply(x, 42.0), lambda: gt.multiply(x, 3.0))
        return tape.gradient(r1, x), tape.gradient(r2, x)

    f = wrap(run)
    g1, g2 = f(gt.constant(1))
    assert_allclose([g1.numpy(), g2.numpy()], [1.0, 42.0])
    _, g2 = f(gt.constant(3))
    assert_allclose(g2.numpy(), 3.0)


@MODES
def test_cf_cond_compute_grad_nested(wrap):
    x = gt.constant(10.0)

    def run():
        with gt.GradientTape(persistent=True) as tape:
            tape.watch(x)

            def true_fn():
                a = x * x
                return a * a

            r = gt.cond(gt.less(1, 2), true_fn, lambda: x * x)
            rn = gt.cond(gt.less(1, 2), lambda: gt.cond(gt.constant(True), true_fn, lambda: x * x), lambda: x * x)
        return r, tape.gradient(r, x), tape.gradient(rn, x)

    r, g, gn = wrap(run)()
    assert_allclose([r.numpy(), g.numpy(), gn.numpy()], [10000.0, 4000.0, 4000.0])


@pytest.mark.parametrize("pred", [True, False])
def test_cf_cond_grad_multi_device_second_order(pred):
    # testCondGradMultiDevice without devices: grad and grad-of-grad through cond.
    @gt.function
    def f(p, x, y):
        with gt.GradientTape() as t2:
            t2.watch(x)
            with gt.GradientTape() as t1:
                t1.watch(x)
                z = gt.cond(p, lambda: x * y * 2.0, lambda: 2.0)
            g = t1.gradient(z, x, unconnected_gradients=gt.UnconnectedGradients.ZERO)
        gg = t2.gradient(g, x, unconnected_gradients=gt.UnconnectedGradients.ZERO)
        return g, gg

    g, gg = f(gt.constant(pred), gt.constant(1.0), gt.constant(2.0))
    assert_allclose(g.numpy(), 4.0 if pred else 0.0)
    assert_allclose(gg.numpy(), 0.0)


@MODES
def test_cf_nested_cond_simple(wrap):
    x = gt.constant(0.0)

    def run():
        with gt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = gt.cond(gt.constant(True), lambda: x, lambda: gt.cond(x < 1.0, lambda: x, lambda: x))
            z = gt.cond(gt.constant(False), lambda: x, lambda: gt.cond(x < 1.0, lambda: x, lambda: x))
        return tape.gradient(y, x), tape.gradient(z, x)

    gy, gz = wrap(run)()
    assert_allclose([gy.numpy(), gz.numpy()], [1.0, 1.0])


@MODES
@pytest.mark.parametrize("c,expected", [(1, [1.0, 1.0]), (3, [0.0, 2.0])])
def test_cf_cond_grad_gather(wrap, c, expected):
    v1 = gt.Variable([1.0, 42.0])

    def run(cc):
        with gt.GradientTape() as tape:
            r = gt.cond(gt.less(cc, 2), lambda: gt.identity(v1), lambda: gt.gather(v1, [1, 1]))
        return tape.gradient(r, v1)

    g = wrap(run)(gt.constant(c))
    assert_allclose(np.asarray(gt.convert_to_tensor(g)), expected)


def test_cf_cond_grad_multi_gather():
    var = gt.Variable(np.ones((4, 2), dtype=np.float32))
    x1 = gt.constant(np.ones((3, 3), dtype=np.float32))
    x2 = gt.constant(2.0)

    def true_fn():
        y1 = gt.gather(var, [1, 2])
        y2 = gt.gather(x1, [2]) * x2
        y3 = x2 * [1.0, 1.0, 1.0]
        return y1, y2, y3

    def false_fn():
        y1 = np.zeros((2, 2), dtype=np.float32)
        y2 = gt.gather(x1, [2]) * x2
        y3 = gt.gather(x1, [2])
        return y1, y2, y3

    @gt.function
    def foo():
        with gt.GradientTape() as tape:
            tape.watch([x1, x2])
            r = gt.cond(gt.constant(True), true_fn, false_fn)
        return tape.gradient(r, [var, x1, x2])

    var_grad, x1_grad, x2_grad = foo()
    assert_allclose(np.asarray(gt.convert_to_tensor(var_grad)), [[0, 0], [1, 1], [1, 1], [0, 0]])
    assert_allclose(np.asarray(gt.convert_to_tensor(x1_grad)), [[0, 0, 0], [0, 0, 0], [2, 2, 2]])
    assert_allclose(x2_grad.numpy(), 6.0)


@MODES
def test_cf_while_1_parallel_iterations(wrap):
    n = gt.constant(0)
    (r,) = wrap(lambda: gt.while_loop(lambda x: gt.less(x, 10000), lambda x: [gt.add(x, 1)], [n],
                                      parallel_iterations=20))()
    assert int(r) == 10000


def _isum(s, maximum_iterations=None):
    i = gt.constant(0)
    _, r_s = gt.while_loop(lambda i, s: gt.less(i, 10), lambda i, s: [gt.add(i, 1), gt.add(i, s)], [i, s],
                           maximum_iterations=maximum_iterations)
    return r_s


@MODES
def test_cf_while_2_and_maximum_iterations(wrap):
    assert int(wrap(lambda: _isum(gt.constant(0)))()) == 45
    r = wrap(lambda: _isum(gt.constant([1, 2, 3, 4, 5]), maximum_iterations=3))()
    np.testing.assert_array_equal(r.numpy(), [4, 5, 6, 7, 8])


@MODES
def test_cf_while_maximum_iterations_single_argument(wrap):
    r = wrap(lambda: gt.while_loop(lambda i: i < 3, lambda i: [i + 1], [0], maximum_iterations=1))()
    assert int(r[0]) == 1


@MODES
def test_cf_while_loop_with_invalid_parallel_iterations(wrap):
    with pytest.raises(TypeError, match="parallel_iterations"):
        wrap(lambda: gt.while_loop(lambda i: i < 3, lambda i: [i + 1], [gt.constant(0)], parallel_iterations=0))()


@MODES
def test_cf_while_3_4(wrap):
    def run3():
        def compute(i, m, c, o):
            m, c = [gt.add(m, 1), gt.add(c, 1)]
            o = gt.add(gt.add(o, m), c)
            return [gt.add(i, 1), m, c, o]

        z = gt.convert_to_tensor(0)
        d = gt.convert_to_tensor(100)
        return gt.while_loop(lambda i, m, c, o: gt.less(i, d), compute, [z, z, z, z])[3]

    def run4():
        x = gt.convert_to_tensor([1, 2, 3, 4, 5, 6])
        s = gt.size(x)

        def compute(i, m, c, o):
            m, c = [gt.gather(x, i), gt.gather(x, i)]
            o = gt.add(gt.add(o, m), c)
            return [gt.add(i, 1), m, c, o]

        z = gt.convert_to_tensor(0)
        return gt.while_loop(lambda i, m, c, o: gt.less(i, s), compute, [z, z, z, z])[3]

    assert int(wrap(run3)()) == 10100
    assert int(wrap(run4)()) == 42


@MODES
def test_cf_while_5_shape_invariants_concat(wrap):
    def run():
        x = gt.convert_to_tensor([1, 2, 3, 4, 5, 6])
        s = gt.size(x)

        def compute(i, c, o):
            c = x[i:i + 1]
            o = gt.concat([o, c], 0)
            return [gt.add(i, 1), c, o]

        i = gt.convert_to_tensor(0)
        return gt.while_loop(lambda i, c, o: gt.less(i, s), compute,
                             [i, gt.convert_to_tensor([0]), gt.convert_to_tensor([0])],
                             [gt.TensorSpec([], gt.int32).shape, gt.TensorSpec(None, gt.int32).shape,
                              gt.TensorSpec(None, gt.int32).shape])[2]

    np.testing.assert_array_equal(wrap(run)().numpy(), [0, 1, 2, 3, 4, 5, 6])


@MODES
def test_cf_while_gpu_1_2(wrap):
    (r,) = wrap(lambda: gt.while_loop(lambda x: gt.less(x, 10.0), lambda x: [gt.add(x, 1.0)], [gt.constant(1.0)]))()
    assert_allclose(r.numpy(), 10.0)


@MODES
def test_cf_while_shape_tile_with_invariant(wrap):
    def run():
        i = gt.constant(0)
        m = gt.ones([2, 2])

        def b(i, j):
            return [gt.add(i, 1), gt.tile(j, [2, 2])]

        # TF's test gives tensor_shape.unknown_shape(); a None invariant is the entry shape.
        r = gt.while_loop(lambda i, j: gt.less(i, 2), b, [i, m],
                          [gt.TensorSpec([], gt.int32).shape, gt.TensorShape(None)])
        return r[1] * gt.ones([8, 8])

    np.testing.assert_array_equal(wrap(run)().numpy(), np.ones((8, 8)))


def test_cf_while_bad_body_return():
    x = gt.constant([2.0, 4.0])
    i = gt.constant(0)
    with pytest.raises(ValueError, match="The two structures don't have the same nested structure"):
        gt.while_loop(lambda i, *x: gt.less(i, 10), lambda i, *x: (i, i) + x, [i, x])


@MODES
def test_cf_while_with_non_tensor_input(wrap):
    r = wrap(lambda: gt.while_loop(lambda x: x < 10000, lambda x: [x + 1], [0], parallel_iterations=20))()
    assert isinstance(r[0], gt.Tensor)
    assert int(r[0]) == 10000
    n = np.array([0])
    r = wrap(lambda: gt.while_loop(lambda x: x[0] < 10000, lambda x: [gt.stack([x[0] + 1])], [n],
                                   parallel_iterations=20))()
    np.testing.assert_array_equal(r[0].numpy(), [10000])


def test_cf_while_shape_inference_with_invariant_in_function():
    @gt.function
    def f():
        i = gt.constant(0)
        m = gt.ones([2, 2])
        r = gt.while_loop(lambda i, j: gt.less(i, 2), lambda i, j: [gt.add(i, 1), gt.concat([j, j], 0)], [i, m],
                          [gt.TensorSpec([], gt.int32).shape, gt.TensorSpec([None, 2]).shape])
        return r[1]

    assert tuple(f().shape) == (8, 2)
    np.testing.assert_array_equal(f().numpy(), np.ones((8, 2)))


def test_cf_while_shape_invariant_is_the_static_shape_in_function():
    # TF: with a shape invariant the While op's output has the invariant's static shape.
    @gt.function
    def f():
        i = gt.constant(0)
        m = gt.ones([2, 2])
        r = gt.while_loop(lambda i, j: gt.less(i, 2), lambda i, j: [gt.add(i, 1), gt.concat([j, j], 0)], [i, m],
                          [gt.TensorSpec([], gt.int32).shape, gt.TensorSpec([None, 2]).shape])
        assert tuple(r[1].shape) == (None, 2)
        return r[1]

    f()


def test_cf_while_shape_inference_bad_shape_in_function():
    # Without a shape invariant, a loop variable whose shape changes is an error in a graph.
    @gt.function
    def f():
        i = gt.constant(0)
        m = gt.ones([2, 2])
        return gt.while_loop(lambda i, j: gt.less(i, 2), lambda i, j: [i + 1, gt.concat([j, j], 0)], [i, m])

    with pytest.raises(ValueError, match=r"\(2, 2\).*\(4, 2\) after one iteration"):
        f()


def test_cf_while_shape_invariant_tensor_spec():
    @gt.function
    def f():
        i = gt.constant(0)
        x = gt.constant([1])
        return gt.while_loop(lambda i, _: i < 10, lambda i, x: (i + 1, gt.stack([x, x])), [i, x],
                             [gt.TensorSpec([], dtype=gt.int32), gt.TensorSpec(None, dtype=gt.int32)])

    i, x = f()
    assert int(i) == 10
    assert tuple(x.shape) == (2,) * 10 + (1,)


def test_cf_while_shape_invariants_are_not_read_eagerly():
    # TF's eager while_loop never looks at shape_invariants (neither type nor shape).
    (r,) = gt.while_loop(lambda i: i < 3, lambda i: [i + 1], [gt.constant(0)], shape_invariants=["foo"])
    assert int(r) == 3
    (r,) = gt.while_loop(lambda i: i < 3, lambda i: [i + 1], [gt.constant(0)], shape_invariants=[gt.TensorShape([2])])
    assert int(r) == 3


def test_cf_while_shape_invariant_bad_type():
    i = gt.constant(0)
    x = gt.constant([1])
    with pytest.raises((ValueError, TypeError)):
        gt.function(lambda: gt.while_loop(lambda i, _: i < 10, lambda i, x: (i + 1, x), [i, x], ["foo", "bar"]))()


@MODES
def test_cf_nested_while_1_2(wrap):
    n = gt.constant(0)

    def cpu_sum(s):
        _, r_s = gt.while_loop(lambda i, s: gt.less(i, 10), lambda i, s: (gt.add(i, 1), gt.add(i, s)), [n, s])
        return r_s

    (r,) = wrap(lambda: gt.while_loop(lambda x: gt.less(x, 200), lambda x: [gt.add(x, cpu_sum(n))], [n]))()
    assert int(r) == 225

    def inner_loop(s):
        return gt.while_loop(lambda s: gt.less(s, 20.0), lambda s: [gt.add(s, s)], [s], parallel_iterations=1)[0]

    (r,) = wrap(lambda: gt.while_loop(lambda x: gt.less(x, 3000.0), lambda x: [gt.square(inner_loop(x))],
                                      [gt.constant(2.0)], parallel_iterations=1))()
    assert_allclose(r.numpy(), 1048576.0)


@MODES
def test_cf_while_with_control_2(wrap):
    (res,) = wrap(lambda: gt.while_loop(lambda r_: gt.less(r_, 10), lambda r_: [gt.constant(12)],
                                        [gt.constant(0)], parallel_iterations=1))()
    assert int(res) == 12


@MODES
def test_cf_while_cond_with_control(wrap):
    def run():
        cond = lambda i: gt.cond(i > 0, lambda: gt.constant(True), lambda: gt.constant(False))  # noqa: E731
        body = lambda i: gt.cond(i > 0, lambda: i - 1, lambda: i)  # noqa: E731
        return gt.while_loop(cond, body, (gt.constant(5),))

    (loop,) = wrap(run)()
    assert int(loop) == 0


@MODES
def test_cf_cond_while_1(wrap):
    n = gt.convert_to_tensor(0)
    r = wrap(lambda: gt.cond(gt.less(0, 1), lambda: gt.while_loop(lambda x: gt.less(x, 10),
                                                                  lambda x: [gt.add(x, 1)], [n]), lambda: [n]))()
    assert int(r[0]) == 10


@MODES
@pytest.mark.parametrize("pred", [True, False])
def test_cf_cond_while_3_grad(wrap, pred):
    n = gt.constant(0.0)

    def run(p):
        with gt.GradientTape() as tape:
            tape.watch(n)
            r = gt.cond(p, lambda: gt.while_loop(lambda x: gt.less(x, 10.0), lambda x: [gt.add(x, 1.0)], [n])[0],
                        lambda: gt.multiply(n, 2.0))
        return r, tape.gradient(r, n)

    r, g = wrap(run)(gt.constant(pred))
    assert_allclose([r.numpy(), g.numpy()], [10.0, 1.0] if pred else [0.0, 2.0])


@MODES
def test_cf_while_cond_1_2_3(wrap):
    i = gt.convert_to_tensor(0)
    n = gt.convert_to_tensor(10)
    one = gt.convert_to_tensor(1)

    def run():
        r1 = gt.while_loop(lambda x: gt.less(x, n), lambda x: [gt.cond(gt.constant(True), lambda: gt.add(x, one),
                                                                       lambda: gt.subtract(x, one))], [i])
        r2 = gt.while_loop(lambda x: gt.less(x, 10), lambda x: [gt.cond(gt.constant(True), lambda: gt.add(x, 1),
                                                                        lambda: i)], [i])
        r3 = gt.while_loop(lambda x: gt.less(x, 10), lambda x: [gt.cond(gt.less(0, 1), lambda: gt.add(x, 1),
                                                                        lambda: gt.subtract(x, 1))], [i])
        return r1[0], r2[0], r3[0]

    assert [int(t) for t in wrap(run)()] == [10, 10, 10]


@pytest.mark.parametrize("pred,expected", [(True, 8.0), (False, 0.0)])
def test_cf_while_cond_grad_second_order(pred, expected):
    @gt.function
    def f(p):
        x_init = gt.constant(1.0)
        with gt.GradientTape() as t2:
            t2.watch(x_init)
            with gt.GradientTape() as t1:
                t1.watch(x_init)
                z = gt.while_loop(lambda i, _: i < 3,
                                  lambda i, x: (i + 1, gt.cond(p, lambda: x * 2.0, lambda: 10.0)), [0, x_init])
            grad = t1.gradient(z, x_init, unconnected_gradients=gt.UnconnectedGradients.ZERO)
        return grad, t2.gradient(grad, x_init, unconnected_gradients=gt.UnconnectedGradients.ZERO)

    g, gg = f(gt.constant(pred))
    assert_allclose(g.numpy(), expected)
    assert_allclose(gg.numpy(), 0.0)


@MODES
def test_cf_while_grad_square_shape_base_shape(wrap):
    def run():
        v = gt.constant(2.0)
        x = gt.constant([3.0, 4.0])
        v1 = gt.constant([2.0])
        v0 = gt.constant([2.0, 2.0])
        x2 = gt.constant([1.0, 2.0])
        with gt.GradientTape(persistent=True) as tape:
            tape.watch([v, x, x2])
            r = gt.while_loop(lambda v: gt.less(v, 100.0), lambda v: [gt.square(v)], [v], parallel_iterations=1)[0]
            r = gt.cond(gt.less(1, 2), lambda: r, lambda: v)
            rm = gt.multiply(r, r)
            ra = gt.add(r, r)
            rs = gt.while_loop(lambda i, v: gt.less(i, 5), lambda i, v: [i + 1, gt.multiply(x, v)],
                               # TF's test: unknown_shape() (None would be the entry shape).
                               [gt.constant(0), v1], [gt.TensorSpec([], gt.int32).shape, gt.TensorShape(None)],
                               parallel_iterations=1)[1]
            rb = gt.while_loop(lambda v: gt.constant(False), lambda v: [gt.multiply(v, x2)], [v0])[0]
            y = gt.square(x2)
        return (tape.gradient(r, v), tape.gradient(rm, v), tape.gradient(ra, v), tape.gradient(rs, x),
                tape.gradient([rb, y], x2))

    g_sq, g_mul, g_add, g_shape, g_base = wrap(run)()
    assert_allclose(g_sq.numpy(), 1024.0)
    assert_allclose(g_mul.numpy(), 524288.0)
    assert_allclose(g_add.numpy(), 2048.0)
    assert_allclose(g_shape.numpy(), [810.0, 2560.0])
    assert_allclose(g_base.numpy(), [2.0, 4.0])


@MODES
def test_cf_while_grad_maximum_iterations_and_nested(wrap):
    v0 = gt.constant(2.0)

    def body(v):
        return gt.while_loop(lambda _: True, lambda x: [x * v], [gt.constant(1.0)], maximum_iterations=2)

    def run():
        with gt.GradientTape(persistent=True) as tape:
            tape.watch(v0)
            (r,) = gt.while_loop(lambda _: True, lambda v: [v * v], [v0], maximum_iterations=3)
            (rn,) = gt.while_loop(lambda _: True, body, [v0], maximum_iterations=3)
        return r, tape.gradient(r, v0), rn, tape.gradient(rn, v0)

    r, g, rn, gn = wrap(run)()
    assert_allclose([r.numpy(), g.numpy(), rn.numpy(), gn.numpy()], [256.0, 1024.0, 256.0, 1024.0])


@MODES
@pytest.mark.parametrize("p_iters", [1, 10])
def test_cf_while_grad_mul(wrap, p_iters):
    a = gt.constant(3.0)
    v = gt.constant(2.0)

    def run():
        with gt.GradientTape() as tape:
            tape.watch([a, v])
            r = gt.while_loop(lambda v: gt.less(v, 100.0), lambda v: [gt.multiply(v, a)], [v],
                              parallel_iterations=p_iters)
        return tape.gradient(r, [a, v])

    ga, gv = wrap(run)()
    assert_allclose([ga.numpy(), gv.numpy()], [216.0, 81.0])


def test_cf_while_grad_in_function():
    @gt.function
    def f():
        x_init = gt.constant(2.0)
        with gt.GradientTape() as tape:
            tape.watch(x_init)
            _, x = gt.while_loop(lambda i, x: gt.less(i, 2), lambda i, x: [i + 1, x ** 2], [0, x_init])
        return tape.gradient(x, x_init)

    assert_allclose(f().numpy(), 4.0 * 2.0 ** 3)


def test_cf_function_in_while_loop_body():
    @gt.function
    def loop_body(i):
        return i + 1.0

    (x,) = gt.while_loop(lambda i: True, lambda i: [loop_body(i)], [0.0], maximum_iterations=5)
    assert_allclose(x.numpy(), 5.0)
    (x,) = gt.function(lambda: gt.while_loop(lambda i: True, lambda i: [loop_body(i)], [0.0],
                                             maximum_iterations=5))()
    assert_allclose(x.numpy(), 5.0)


@MODES
def test_cf_nested_while_cond_while_grad(wrap):
    v = gt.constant(1.0)

    def inner_loop(s):
        return gt.while_loop(lambda i, x: gt.less(i, 4), lambda i, x: [gt.add(i, 1), gt.multiply(x, 2.0)],
                             [gt.constant(0), s])

    def b(x):
        return [gt.cond(gt.constant(True), lambda: gt.square(inner_loop(x)[1]), lambda: gt.multiply(x, 2.0))]

    def run():
        with gt.GradientTape() as tape:
            tape.watch(v)
            r = gt.while_loop(lambda x: gt.less(x, 128.0), b, [v])
        return tape.gradient(r, v)

    assert_allclose(wrap(run)().numpy(), 512.0)


@MODES
def test_cf_while_grad_variable(wrap):
    a = gt.Variable(3.0)
    v = gt.constant(2.0)

    def run():
        with gt.GradientTape() as tape:
            r = gt.while_loop(lambda v: gt.less(v, 100.0), lambda v: [gt.multiply(v, a)], [v], parallel_iterations=1)
        return tape.gradient(r, a)

    assert_allclose(wrap(run)().numpy(), 216.0)


def test_cf_while_grad_eager_resource_variable():
    a = gt.Variable(np.ones([2, 2], dtype=np.float32))
    v = gt.constant(1.0)

    @gt.function
    def fn():
        with gt.GradientTape() as tape:
            tape.watch(v)
            r = gt.while_loop(lambda i, _: i < 2, lambda i, x: (i + 1, x * gt.reduce_sum(a) * v), [0, 1.0])[1]
        return tape.gradient(r, v)

    assert_allclose(fn().numpy(), 32.0)


def test_cf_while_grad_resource_var_in_function_call():
    @gt.function
    def foo(x, var):
        return x + gt.reduce_sum(gt.gather(var, [1, 3]))

    @gt.function
    def foo2(x, var):
        return foo(x, var)

    for inner in (foo, foo2):
        @gt.function
        def bar(var, inner=inner):
            with gt.GradientTape() as tape:
                r = gt.while_loop(lambda i, _: i < 2, lambda i, x: (i + 1, inner(x, var)), [0, 0.0])[1]
            return tape.gradient(r, var)

        var = gt.Variable([1.0, 2.0, 3.0, 4.0])
        assert_allclose(np.asarray(gt.convert_to_tensor(bar(var))), [0.0, 2.0, 0.0, 2.0])


def test_cf_while_grad_resource_var_in_loop_in_function_call():
    @gt.function
    def foo(x, var):
        return gt.while_loop(lambda j, _: j < 3, lambda j, y: (j + 1, y + gt.reduce_sum(gt.gather(var, [1, 2]))),
                             [0, x])[1]

    @gt.function
    def bar(var):
        with gt.GradientTape() as tape:
            r = gt.while_loop(lambda i, _: i < 2, lambda i, x: (i + 1, foo(x, var)), [0, 0.0])[1]
        return tape.gradient(r, var)

    var = gt.Variable([1.0, 1.0, 1.0, 1.0])
    assert_allclose(np.asarray(gt.convert_to_tensor(bar(var))), [0.0, 6.0, 6.0, 0.0])


def test_cf_while_cond_grad_resource_var_in_function_call():
    @gt.function
    def foo(x, var):
        return x + gt.gather(var, [1])[0]

    var1 = gt.Variable([1.0, 2.0, 3.0])
    var2 = gt.Variable([4.0, 5.0])

    def body(i, x):
        return (i + 1, gt.cond(gt.equal(i % 2, 0), lambda: foo(x, var1), lambda: foo(x, var2)))

    @gt.function
    def bar():
        with gt.GradientTape() as tape:
            r = gt.while_loop(lambda i, _: i < 4, body, [0, 0.0])
        return tape.gradient(r, [var1, var2])

    g1, g2 = bar()
    assert_allclose(np.asarray(gt.convert_to_tensor(g1)), [0.0, 2.0, 0.0])
    assert_allclose(np.asarray(gt.convert_to_tensor(g2)), [0.0, 2.0])


@MODES
def test_cf_while_grad_resource_var_sparse_read(wrap):
    var = gt.Variable(np.ones(5), dtype=gt.float32)
    var1 = gt.Variable(np.ones(5), dtype=gt.float32)
    var2 = gt.Variable(np.ones(3), dtype=gt.float32)

    def body(i, unused_x1, x2, x3):
        return i + 1, gt.gather(var1, [1, 3]), x2 * 2, x3 * gt.reduce_sum(gt.gather(var2, [0]))

    def run():
        with gt.GradientTape(persistent=True) as tape:
            r = gt.while_loop(lambda i, _: i < 3, lambda i, x: (i + 1, x * gt.reduce_sum(gt.gather(var, [1, 3]))),
                              [0, gt.constant(1.0)])[1]
            rr = gt.while_loop(lambda i, x1, x2, x3: i < 3, body,
                               [0, gt.constant([0.0, 0.0]), gt.constant(1.0), gt.constant(1.0)])[1:]
        return tape.gradient(r, var), tape.gradient(rr, [var1, var2])

    g, (g1, g2) = wrap(run)()
    assert_allclose(np.asarray(gt.convert_to_tensor(g)), [0.0, 12.0, 0.0, 12.0, 0.0])
    assert_allclose(np.asarray(gt.convert_to_tensor(g1)), [0.0, 1.0, 0.0, 1.0, 0.0])
    assert_allclose(np.asarray(gt.convert_to_tensor(g2)), [3.0, 0.0, 0.0])


@MODES
def test_cf_while_grad_gather(wrap):
    def fn():
        x = gt.constant([1.0, 1.0, 1.0, 1.0, 1.0])
        with gt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = gt.while_loop(lambda i, _: i < 3, lambda i, x: (i + 1, x + gt.gather(x, [0])), [0, x[:1]])[1]
            y2 = gt.while_loop(lambda i, _: i < 3, lambda i, x: (i + 1, gt.gather(x, [0])), [0, x[:1]])[1]
            z = y * 3.0
            z2 = y2 * 3.0
        return y, tape.gradient(z, x), y2, tape.gradient(z2, x)

    y, g, y2, g2 = wrap(fn)()
    assert_allclose(y.numpy(), [8.0])
    assert_allclose(np.asarray(gt.convert_to_tensor(g)), [24.0, 0, 0, 0, 0])
    assert_allclose(y2.numpy(), [1.0])
    assert_allclose(np.asarray(gt.convert_to_tensor(g2)), [3.0, 0, 0, 0, 0])


@MODES
def test_cf_while_grad_in_cond_and_in_while(wrap):
    n = gt.constant(1.0)
    x = gt.constant(1.0)

    def fn1():
        with gt.GradientTape() as tape:
            tape.watch(x)
            r = gt.while_loop(lambda n: gt.less(n, 10.0), lambda n: [gt.add(n, x)], [n])
        return tape.gradient(r, x)

    r = wrap(lambda: gt.cond(gt.less(1, 2), fn1, lambda: x))()
    assert_allclose(r.numpy(), 9.0)
    (r,) = wrap(lambda: gt.while_loop(lambda n: n < 6.0, lambda n: [fn1()], [n]))()
    assert_allclose(r.numpy(), 9.0)


@MODES
def test_cf_cond_grad_in_nested_whiles(wrap):
    def inner_body(j, x):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = gt.cond(gt.less(x, 1), lambda: 2 * x, lambda: x)
        return j + 1, tape.gradient(y, x)

    def outer_body(i, x):
        _, x = gt.while_loop(lambda j, x: j < 3, inner_body, [0, gt.constant(0.0)])
        return i + 1, x

    i, x = wrap(lambda: gt.while_loop(lambda i, x: i < 3, outer_body, [0, gt.constant(0.0)]))()
    assert int(i) == 3
    assert_allclose(x.numpy(), 1.0)


def test_cf_nested_resource_access():
    var = gt.Variable(gt.constant(3.0))

    @gt.function
    def test_fn():
        x = gt.constant(0.0)
        with gt.GradientTape() as tape:
            tape.watch(x)
            r = gt.while_loop(
                lambda i, y: i < 2,
                lambda i, y: (i + 1, y + gt.cond(
                    gt.constant(True),
                    lambda: gt.while_loop(lambda j, z: j < 3, lambda j, z: (j + 1, z + gt.square(var)), [0, y])[1],
                    lambda: 0.0)),
                [0, x])[1]
        return r, tape.gradient(r, x)

    r, grad = test_fn()
    assert_allclose([r.numpy(), grad.numpy()], [81.0, 4.0])


@MODES
def test_cf_while_nested_input(wrap):
    import collections

    named = collections.namedtuple("named", ("a", "b"))

    def run():
        loop_vars = [named(a=gt.constant(0.0), b=gt.constant(1.0)), (gt.constant(2.0), gt.constant(3.0)),
                     gt.constant(4.0)]

        def b(lv0, lv1, lv2):
            lv0 = named(a=lv0.a + 1, b=lv0.b)
            lv1 = (lv1[0] + 1, lv1[1])
            lv2 += 2
            return [lv0, lv1, lv2]

        return gt.while_loop(lambda lv0, _1, _2: lv0.a < 100.0, b, loop_vars)

    r = wrap(run)()
    assert isinstance(r, list)
    assert isinstance(r[0], named)
    assert isinstance(r[1], tuple)
    assert isinstance(r[2], gt.Tensor)
    flat = [r[0].a, r[0].b, r[1][0], r[1][1], r[2]]
    assert_allclose([t.numpy() for t in flat], [100.0, 1.0, 102.0, 3.0, 4.0 + 100 * 2.0])


def test_cf_while_nested_bad_arity_fails():
    import collections

    named = collections.namedtuple("named", ("a", "b"))
    loop_vars = [named(a=gt.constant(0.0), b=gt.constant(1.0)), (gt.constant(2.0), gt.constant(3.0)),
                 gt.constant(4.0)]
    with pytest.raises(ValueError, match="the same number of elements"):
        gt.function(lambda: gt.while_loop(lambda lv0, _1, _2: lv0.a < 100.0, lambda lv0, lv1, _: [lv0, lv1],
                                          loop_vars))()


@MODES
def test_cf_while_grad_ys_xs_dependency_serial_parallel(wrap):
    def b(x, y):
        y1 = gt.add(x, y)
        return gt.multiply(x, y1), y1

    def b2(i, x):
        return gt.add(i, 1), gt.multiply(x, 2.0)

    def run():
        x = gt.constant(3.0)
        y = gt.constant(2.0)
        x2 = gt.constant(2.0)
        i = gt.constant(0)
        with gt.GradientTape(persistent=True) as tape:
            tape.watch([x, y, x2])
            rx, ry = gt.while_loop(lambda x, y: gt.less(x, 100.0), b, [x, y], parallel_iterations=1)
            ri, rdx = gt.while_loop(lambda i, x: gt.less(i, 10), b2, [i, x2], parallel_iterations=1)
            _, s1 = gt.while_loop(lambda i, x: gt.less(i, 5), b2, [i, x2])
            _, s2 = gt.while_loop(lambda i, x: gt.less(i, 5), b2, [i, s1])
            _, p1 = gt.while_loop(lambda i, x: gt.less(i, 5), b2, [i, x2])
            _, p2 = gt.while_loop(lambda i, x: gt.less(i, 5), b2, [i, x2])
            px = gt.add(p1, p2)
        return [tape.gradient([rx, ry], x), tape.gradient([rx, ry], y), tape.gradient([rx], x),
                tape.gradient([rx], y), tape.gradient([ri, rdx], x2), tape.gradient([rdx], x2),
                tape.gradient([s2], x2), tape.gradient([px], x2)]

    got = [g.numpy() for g in wrap(run)()]
    assert_allclose(got, [304.0, 124.0, 295.0, 120.0, 1024.0, 1024.0, 1024.0, 64.0])


def test_cf_while_grad_no_gradient_back_prop_false_in_function():
    @gt.function
    def f():
        v = gt.constant(2.0)
        with gt.GradientTape() as tape:
            tape.watch(v)
            r = gt.while_loop(lambda v: gt.less(v, 100.0), lambda v: [gt.square(v)], [v], back_prop=False)[0]
            r = gt.add(r, v)
        return tape.gradient(r, v)

    assert_allclose(f().numpy(), 1.0)


@MODES
def test_cf_while_grad_no_dependency_and_const(wrap):
    variable = gt.Variable(gt.ones([2, 3]))

    def run():
        c0 = gt.constant(0.0)
        c1 = gt.constant(1.0)
        with gt.GradientTape(persistent=True) as tape:
            tape.watch(c0)
            tensors = gt.while_loop(lambda d, t, _: d < 10, lambda d, t, _: (d + 1, t, t),
                                    [gt.zeros([], dtype=gt.int32), variable, variable])
            cost = gt.reduce_sum(tensors[2])
            t2 = gt.while_loop(lambda d, _: d < 1, lambda d, _: (d + 1, c1), [gt.constant(0), c0])
            cost2 = gt.reduce_sum(t2[1])
        zero = gt.UnconnectedGradients.ZERO
        return tape.gradient(cost, variable), tape.gradient(cost2, c0, unconnected_gradients=zero)

    g, g0 = wrap(run)()
    assert_allclose(g.numpy(), np.ones([2, 3]))
    assert_allclose(g0.numpy(), 0.0)


@MODES
def test_cf_while_grad_one_output_with_control_dependency(wrap):
    def run():
        x = gt.constant(1.0)
        y = gt.constant(1.0)
        with gt.GradientTape() as tape:
            tape.watch(x)
            _, x_f, y_f = gt.while_loop(lambda i, *_: gt.less(i, 1),
                                        lambda i, xi, yi: (gt.add(i, 1), gt.identity(xi), gt.add(xi, yi)),
                                        [gt.constant(0), x, y])
        return y_f, tape.gradient(y_f, x)

    y_f, g = wrap(run)()
    assert_allclose([y_f.numpy(), g.numpy()], [2.0, 1.0])


@MODES
def test_cf_nested_while_grad_simple_serial_parallel(wrap):
    v = gt.constant(1.0)

    def inner(s):
        return gt.while_loop(lambda x: gt.less(x, 4.0), lambda x: [gt.multiply(x, 2.0)], [s])[0]

    def inner_n(s):
        return gt.while_loop(lambda i, x: gt.less(i, 4), lambda i, x: [gt.add(i, 1), gt.multiply(x, 2.0)],
                             [gt.constant(0), s])

    def run():
        with gt.GradientTape(persistent=True) as tape:
            tape.watch(v)
            r1 = gt.while_loop(lambda x: gt.less(x, 2.0), lambda x: [gt.multiply(inner(x), 2.0)], [v])
            r2 = gt.while_loop(lambda x: gt.less(x, 128.0), lambda x: [inner_n(inner_n(x)[1])[1]], [v])
            r3 = gt.while_loop(lambda x: gt.less(x, 128.0),
                               lambda x: [gt.multiply(inner_n(x)[1], inner_n(x)[1])], [v])
        return tape.gradient(r1, v), tape.gradient(r2, v), tape.gradient(r3, v)

    g1, g2, g3 = wrap(run)()
    assert_allclose([g1.numpy(), g2.numpy(), g3.numpy()], [8.0, 256.0, 512.0])


def test_cf_nested_map_fn_parallel_iterations_adam_step():
    var = gt.Variable(gt.constant(3.0))
    inp = gt.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])

    def inner_loop(t):
        return gt.map_fn(fn=lambda n: n + gt.square(var), elems=t, parallel_iterations=10)

    with gt.GradientTape() as tape:
        res = gt.map_fn(fn=inner_loop, elems=inp, parallel_iterations=10)
        loss = gt.reduce_mean(gt.square(res))
    (g,) = tape.gradient(loss, [var])
    # d/dvar mean((inp + var^2)^2) = mean(2 (inp + 9) * 2 var)
    expected = np.mean(2 * (np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]) + 9.0) * 6.0)
    assert_allclose(g.numpy(), expected, rtol=1e-6)
    opt = gt.optimizers.Adam(learning_rate=0.001)
    opt.apply_gradients([(g, var)])
    assert_allclose(var.numpy(), 2.999, rtol=1e-6)


@MODES
def test_cf_while_cond_grad_simple(wrap):
    v = gt.convert_to_tensor(2.0)
    n = gt.convert_to_tensor(100.0)
    one = gt.convert_to_tensor(1.0)

    def run():
        with gt.GradientTape() as tape:
            tape.watch(v)
            r = gt.while_loop(lambda x: gt.less(x, n),
                              lambda x: [gt.cond(gt.constant(True), lambda: gt.square(x), lambda: gt.subtract(x, one))],
                              [v])
        return tape.gradient(r, v)

    assert_allclose(wrap(run)().numpy(), 1024.0)


@MODES
def test_cf_while_grad_concat_sgd(wrap):
    x = gt.Variable([[1.0, 2.0]])

    def run():
        with gt.GradientTape() as tape:
            _, h = gt.while_loop(lambda i, _: i < 2, lambda i, h: (i + 1, gt.concat([h, x], 0)),
                                 [gt.constant(0), gt.zeros([0, 2])],
                                 [gt.TensorSpec([], gt.int32).shape, gt.TensorSpec([None, 2]).shape])
            s = gt.reduce_sum(h)
        return tape.gradient(s, x)

    g = wrap(run)()
    assert_allclose(g.numpy(), [[2.0, 2.0]])
    gt.optimizers.SGD(0.01).apply_gradients([(g, x)])
    assert_allclose(x.numpy(), [[0.98, 1.98]], rtol=1e-6)


@MODES
def test_cf_call_grad_in_loop(wrap):
    params = gt.constant(5.0)

    def b(i, x):
        with gt.GradientTape() as tape:
            tape.watch(params)
            data = gt.multiply(gt.constant([1.0, 2.0, 3.0]), gt.square(params))
        return i + 1, x + tape.gradient(data, params)

    out = wrap(lambda: gt.while_loop(lambda i, _: i < 10, b, [gt.constant(0), gt.constant(0.0)]))()
    assert_allclose(out[1].numpy(), 600.0)


@MODES
def test_cf_while_and_map_fn_grad(wrap):
    param = gt.constant(2.0)
    y0 = gt.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])

    def run():
        with gt.GradientTape() as tape:
            tape.watch(param)
            r = gt.while_loop(lambda i, _: i < 10,
                              lambda i, y: [i + 1, gt.map_fn(lambda x: gt.multiply(x, param), y)],
                              [gt.constant(0), y0], parallel_iterations=1)
        return tape.gradient(r, param)

    assert_allclose(wrap(run)().numpy(), 107520.0)


@MODES
def test_cf_nested_while_and_tensor_array(wrap):
    n = gt.constant(3.0)

    def body(row, ta):
        def inner_body(row, col, ta):
            ta = ta.write(gt.cast(n * (row - 1.0) + col - 1.0, gt.int32), row * col)
            return row, col + 1.0, ta

        ta = gt.while_loop(lambda _, col, _1: col <= n, inner_body, [row, gt.constant(1.0), ta])[2]
        return row + 1.0, ta

    def run():
        ta = gt.TensorArray(dtype=gt.float32, size=9)
        ta = gt.while_loop(lambda row, _: row <= n, body, [gt.constant(1.0), ta])[1]
        return gt.reshape(ta.stack(), [3, 3])

    assert_allclose(wrap(run)().numpy(), [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [3.0, 6.0, 9.0]])


@MODES
def test_cf_while_grad_stop_grad(wrap):
    def b(x, y):
        y1 = gt.square(y)
        return gt.add(gt.square(x), y1), y1

    def b_inside(x, y):
        y1 = gt.stop_gradient(gt.square(y))
        return gt.add(gt.square(x), y1), y1

    def run():
        x = gt.constant(3.0)
        y = gt.constant(2.0)
        with gt.GradientTape(persistent=True) as tape:
            tape.watch([x, y])
            rx, ry = gt.while_loop(lambda x, y: gt.less(x, 100.0), b, [x, y])
            s_rx, s_ry = gt.stop_gradient(rx), gt.stop_gradient(ry)
            s_sq = gt.stop_gradient(gt.square(rx))
            s_add = gt.stop_gradient(gt.add(rx, ry))
            add = gt.add(rx, ry)
            add_sy = gt.add(rx, gt.stop_gradient(ry))
            add_sx = gt.add(gt.stop_gradient(rx), ry)
            ix, _ = gt.while_loop(lambda x, y: gt.less(x, 100.0), b_inside, [x, y])
        return [tape.gradient(rx, y), tape.gradient(ry, y), tape.gradient(s_rx, y), tape.gradient(s_ry, y),
                tape.gradient(s_sq, y), tape.gradient(s_add, x), tape.gradient(s_add, y), tape.gradient(add, y),
                tape.gradient(add_sy, y), tape.gradient(add_sx, y),
                tape.gradient(ix, y, unconnected_gradients=gt.UnconnectedGradients.ZERO), tape.gradient(ix, x)]

    g = wrap(run)()
    assert_allclose([g[0].numpy(), g[1].numpy()], [136.0, 32.0])
    assert g[2] is None and g[3] is None and g[4] is None and g[5] is None and g[6] is None
    assert_allclose([g[7].numpy(), g[8].numpy(), g[9].numpy()], [168.0, 136.0, 32.0])
    assert_allclose([g[10].numpy(), g[11].numpy()], [0.0, 156.0])


@MODES
def test_cf_while_grad_stop_grad_inside_vector(wrap):
    def b(x, y):
        y1 = gt.stop_gradient(gt.square(y))
        return gt.add(gt.square(x), y1), y1

    def run():
        x = gt.constant([3.0, 4.0])
        y = gt.constant([2.0, 3.0])
        with gt.GradientTape(persistent=True) as tape:
            tape.watch([x, y])
            rx, _ = gt.while_loop(lambda x, y: gt.less(gt.reduce_sum(x), 100.0), b, [x, y])
        return tape.gradient(rx, y, unconnected_gradients=gt.UnconnectedGradients.ZERO), tape.gradient(rx, x)

    gy, gx = wrap(run)()
    assert_allclose(gy.numpy(), [0.0, 0.0])
    assert_allclose(gx.numpy(), [156.0, 400.0])


def test_cf_while_grad_grad_of_scan():
    theta = gt.Variable(1.0)
    with gt.GradientTape() as t2:
        with gt.GradientTape() as t1:
            result = gt.scan(lambda prev, x: prev + x * theta, np.array([1.0, 2.0, 3.0], dtype=np.float32))
        grad_theta = t1.gradient(result, theta)
    # No initializer: result = [1, 1 + 2θ, 1 + 5θ], d/dθ sum = 7; second derivative 0.
    assert_allclose(grad_theta.numpy(), 7.0)
    gg = t2.gradient(grad_theta, theta, unconnected_gradients=gt.UnconnectedGradients.ZERO)
    assert_allclose(gg.numpy(), 0.0)


@MODES
def test_cf_stop_grad_on_while_grad(wrap):
    def run():
        x = gt.constant(2.0)
        y = gt.constant(2.0)
        with gt.GradientTape() as outer:
            outer.watch(y)
            with gt.GradientTape() as inner:
                inner.watch(y)
                (rx,) = gt.while_loop(lambda x: gt.less(x, 100.0), lambda x: [gt.multiply(x, y)], [x])
            rg = gt.stop_gradient(inner.gradient(rx, y))
            r = gt.add(gt.add(gt.square(y), rx), rg)
        return outer.gradient(r, y)

    assert_allclose(wrap(run)().numpy(), 388.0)


@MODES
@pytest.mark.parametrize("d,expected", [(1, 4.0), (2, 2.0 * np.sqrt(2))])
def test_cf_example_cond(wrap, d, expected):
    x = gt.convert_to_tensor([-2.0, 2.0])

    def l2():
        return gt.sqrt(gt.reduce_sum(gt.square(x)))

    def l1():
        return gt.reduce_sum(gt.abs(x))

    i = wrap(lambda dd: gt.cond(gt.equal(dd, 2), l2, l1))(gt.constant(d))
    assert_allclose(i.numpy(), expected, rtol=1e-6)


@MODES
@pytest.mark.parametrize("c,expected", [(2, 1), (0, 2)])
def test_cf_one_value_cond(wrap, c, expected):
    one = gt.convert_to_tensor(1)
    two = gt.convert_to_tensor(2)
    i = wrap(lambda cc: gt.cond(gt.greater_equal(cc, 1), lambda: one, lambda: two))(gt.constant(c))
    assert isinstance(i, gt.Tensor)
    assert int(i) == expected


# ----------------------------------------------------- map_fn: signatures and functions


@MODES
def test_map_fn_output_signature_changes_dtype_and_shape(wrap):
    elems = gt.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])

    def run():
        with gt.GradientTape() as tape:
            tape.watch(elems)
            out = gt.map_fn(lambda r: (gt.reduce_sum(r * r), gt.cast(gt.argmax(r), gt.int64)), elems,
                            fn_output_signature=(gt.TensorSpec([], gt.float32), gt.int64))
        return out, tape.gradient(out[0], elems)

    (s, idx), g = wrap(run)()
    assert_allclose(s.numpy(), [5.0, 25.0, 61.0])
    assert idx.dtype == gt.int64
    np.testing.assert_array_equal(idx.numpy(), [1, 1, 1])
    assert_allclose(g.numpy(), 2 * elems.numpy())


def test_map_fn_in_function_with_unknown_batch():
    @gt.function(input_signature=[gt.TensorSpec([None, 2], gt.float32)])
    def f(x):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = gt.map_fn(lambda r: gt.reduce_sum(gt.sin(r)), x)
        return y, tape.gradient(y, x)

    for n in (1, 3):
        x = np.arange(2 * n, dtype=np.float32).reshape(n, 2)
        y, g = f(gt.constant(x))
        assert_allclose(y.numpy(), np.sin(x).sum(axis=1), rtol=1e-6)
        assert_allclose(g.numpy(), np.cos(x), rtol=1e-6)


@MODES
def test_map_fn_variable_captured_gradient_second_order(wrap):
    w = gt.Variable(2.0)
    elems = gt.constant([1.0, 2.0, 3.0])

    def run():
        with gt.GradientTape() as t2:
            with gt.GradientTape() as t1:
                y = gt.map_fn(lambda e: w * w * w * e, elems)
            g = t1.gradient(y, w)
        return g, t2.gradient(g, w)

    g, gg = wrap(run)()
    # sum(w^3 e) with sum(e) = 6: 3 w^2 * 6 = 72, 6 w * 6 = 72
    assert_allclose([g.numpy(), gg.numpy()], [72.0, 72.0])


@MODES
def test_map_fn_back_prop_false(wrap):
    x = gt.constant([1.0, 2.0])

    def run():
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = gt.map_fn(lambda e: e * e, x, back_prop=False)
        return tape.gradient(y, x)

    g = wrap(run)()
    if wrap is gt.function:
        # map_fn passes back_prop to while_v2, which stops the gradient inside a function.
        assert g is None
    else:
        # TF's eager while_loop ignores back_prop.
        assert_allclose(g.numpy(), [2.0, 4.0])


# ------------------------------------------------ extra: maximum_iterations, switch_case


@pytest.mark.parametrize("n,expected", [(0, 2.0), (1, 4.0), (2, 16.0), (5, 256.0)])
def test_while_maximum_iterations_symbolic_tensor(n, expected):
    # maximum_iterations given as a tensor argument of the function (symbolic when traced).
    @gt.function
    def f(x, m):
        with gt.GradientTape() as tape:
            tape.watch(x)
            (r,) = gt.while_loop(lambda v: v < 100.0, lambda v: [v * v], [x], maximum_iterations=m)
        return r, tape.gradient(r, x)

    r, g = f(gt.constant(2.0), gt.constant(n))
    assert_allclose(r.numpy(), expected)
    # r = x ** (2 ** k), k the number of iterations run
    k = int(np.log2(np.log2(expected))) if expected > 2 else 0
    assert_allclose(g.numpy(), (2 ** k) * 2.0 ** (2 ** k - 1))


def test_while_maximum_iterations_must_be_scalar():
    with pytest.raises(ValueError, match="must be a scalar"):
        gt.while_loop(lambda i: i < 3, lambda i: [i + 1], [gt.constant(0)], maximum_iterations=gt.constant([1, 2]))


def test_switch_case_in_function_with_captured_index_returns_tensors():
    idx = gt.constant(1)

    @gt.function
    def f():
        return gt.switch_case(idx, [lambda: 1.0, lambda: 2.0, lambda: 3.0])

    out = f()
    assert isinstance(out, gt.Tensor)
    assert_allclose(out.numpy(), 2.0)


@MODES
def test_switch_case_second_order(wrap):
    x = gt.constant(0.5)

    def run(b):
        with gt.GradientTape() as t2:
            t2.watch(x)
            with gt.GradientTape() as t1:
                t1.watch(x)
                y = gt.switch_case(b, [lambda: gt.sin(x), lambda: x ** 3, lambda: gt.exp(x)])
            g = t1.gradient(y, x)
        return g, t2.gradient(g, x)

    f = wrap(run)
    g, gg = f(gt.constant(0))
    assert_allclose([g.numpy(), gg.numpy()], [np.cos(0.5), -np.sin(0.5)], rtol=1e-6)
    g, gg = f(gt.constant(1))
    assert_allclose([g.numpy(), gg.numpy()], [3 * 0.25, 6 * 0.5], rtol=1e-6)
    g, gg = f(gt.constant(7))
    assert_allclose([g.numpy(), gg.numpy()], [np.exp(0.5), np.exp(0.5)], rtol=1e-6)
