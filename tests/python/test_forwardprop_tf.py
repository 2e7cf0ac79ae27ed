"""TensorFlow's ``tensorflow/python/eager/forwardprop_test.py``, ported to gradtape
(issue 14): ``gt.autodiff.ForwardAccumulator`` against TF's own cases.

Ported from the version of the file in TF's repository at commit 0854f7c6 (the newest
the project's reference store holds; the test file could not be fetched whole). One
test per TF test, same name in snake case, same logic with ``tf`` → ``gt`` (a
parameterized TF test is one parametrized pytest). TF's module-level helpers
(``_jvp``, ``_jacfwd``, ``_grad``, ``_gradfwd``, ``_hvp``, ``_vectorize_parameters``,
``_forward_over_back_hessian``, ``_test_gradients``) are rebuilt over the public API.
Where a TF test also asserts on private TF internals (``tape_lib.should_record_backprop``,
``TFE_Py_TapeSetPossibleGradientTypes``, ``forwardprop_util.pack_tangents``) the public
half is ported and the private asserts are left out; ``NOT_PORTED`` lists the tests
left out whole, each with the reason. TF's ``assert_no_new_pyobjects_executing_eagerly``
decorator (a leak check of TF's Python objects) has no counterpart.
"""

import functools
import gc
import weakref

import numpy as np
import pytest

import gradtape as gt

ForwardAccumulator = gt.autodiff.ForwardAccumulator
UnconnectedGradients = gt.UnconnectedGradients

NOT_PORTED = {
    "testJVPFunction": "forwardprop._jvp_dispatch is TF's private JVP registry",
    "testJVPFunctionUsedByAccumulatorForOps": "TFE_Py_RegisterJVPFunction is TF's private JVP registry",
    "testPushPopAccumulatorState": "forwardprop_util.push_forwardprop_state is private to TF",
    "testRecordingSelectively": "tape_lib.record_operation_forwardprop_only/backprop_only are private to TF",
    "testRecordingWithJVPIndices": "tape_lib.record_operation_forwardprop_only and pack_tangents are private",
    "testSpecialForwardFunctionUsed": "tape_lib.record_operation with a forward function is private to TF",
    "testMirroredVariableWatched": "no distribution strategies (MirroredStrategy) in gradtape",
}


def test_forwardprop_not_ported():
    assert all(NOT_PORTED.values())


_X11_35_DERIVATIVES = [
    1.1**3.5,
    3.5 * 1.1**2.5,
    3.5 * 2.5 * 1.1**1.5,
    3.5 * 2.5 * 1.5 * 1.1**0.5,
]


# --- TF's helpers, over the public API --------------------------------------------------


def _jvp(f, primals, tangents):
    """The Jacobian of ``f`` at ``primals`` times ``tangents``."""
    with ForwardAccumulator(primals, tangents) as acc:
        primals_out = f(*primals)
    return primals_out, acc.jvp(primals_out, unconnected_gradients=UnconnectedGradients.ZERO)


def _jacfwd(f, primals):
    """The Jacobian of ``f`` at ``primals`` by forward mode, one column per element."""
    jac_flat = []
    flat_primals = list(primals)
    tangent_mask = [gt.zeros_like(primal) for primal in flat_primals]
    for primal_index, primal in enumerate(flat_primals):
        primal_vector = gt.reshape(primal, [-1])
        primal_vector_length = int(gt.size(primal_vector))
        jac_columns = []
        for element_index in range(primal_vector_length):
            mask = gt.one_hot(element_index, primal_vector_length)
            tangent_mask[primal_index] = gt.reshape(mask, gt.shape(primal))
            out = _jvp(f, primals, list(tangent_mask))[1]
            jac_columns.append(gt.reshape(out, [-1]))
        jac_flat.append(gt.stack(jac_columns, axis=1))
        tangent_mask[primal_index] = gt.zeros_like(primal)
    return jac_flat


def _grad(f, argnums=0):
    """A function computing the gradient of ``f`` for argument ``argnums``."""

    def _f(*params):
        with gt.GradientTape() as tape:
            tape.watch(params)
            primals_out = f(*params)
        return tape.gradient(primals_out, params[argnums], unconnected_gradients=UnconnectedGradients.ZERO)

    return _f


def _gradfwd(f, argnums=0, f_out_dtypes=gt.float32):
    """A function computing the gradient of ``f`` for argument ``argnums`` in forward
    mode (one JVP per element of that argument)."""

    def _f(*params):
        def _single_jvp(param_mask):
            with ForwardAccumulator(primals=[params[argnums]], tangents=param_mask) as acc:
                primals_out = f(*params)
            return acc.jvp(primals_out)

        return _vectorize_parameters(_single_jvp, [params[argnums]], use_pfor=False, dtype=f_out_dtypes)

    return _f


def _hvp(f, primals, tangents):
    """A forward-over-back Hessian-vector product."""
    with ForwardAccumulator(primals, tangents) as acc:
        with gt.GradientTape() as tape:
            tape.watch(primals)
            f_out = f(*primals)
            f_out.shape.assert_is_compatible_with([])
        return acc.jvp(tape.gradient(f_out, primals))


def _vectorize_parameters(f, params, use_pfor, dtype):
    """``f`` of a one-hot mask over ``params``, for each parameter element."""
    # TF computes the sizes as tensors (for graph mode); they are static here (a
    # symbolic one_hot depth is not supported in a gt.function).
    parameter_sizes = [param.shape.num_elements() for param in params]
    total_size = sum(parameter_sizes)

    def _wrapper(index):
        full_onehot = gt.one_hot(index, total_size)
        split_onehot = gt.split(full_onehot, parameter_sizes)
        tangents = [gt.reshape(v, gt.shape(param)) for param, v in zip(params, split_onehot)]
        return f(tangents)

    if use_pfor:
        return gt.vectorized_map(_wrapper, gt.range(total_size))
    return gt.map_fn(_wrapper, gt.range(total_size), dtype)


def _forward_over_back_hessian(f, params, use_pfor, dtype=None):
    """The full Hessian of the scalar ``f(*params)``, as slices ``[P, p_s]`` per
    parameter."""
    return _vectorize_parameters(functools.partial(_hvp, f, params), params, use_pfor=use_pfor, dtype=dtype)


def _test_gradients(f, primals, order, delta=1e-3, rtol=1e-2, atol=1e-6):
    """Forward and backward Jacobians of ``f``'s [0, ``order``)-order gradients against
    central differences, and against each other."""
    if order < 1:
        raise ValueError(f"`order` should be a positive integer, got '{order}'.")
    if order > 1:
        _test_gradients(f=_grad(f), primals=primals, order=order - 1, delta=delta, rtol=rtol, atol=atol)
    sym_jac_back, num_jac = gt.test.compute_gradient(f, primals, delta=delta)
    sym_jac_fwd = [j.numpy() for j in _jacfwd(f, primals)]
    assert len(num_jac) == len(sym_jac_back) == len(sym_jac_fwd)
    for num, back, fwd in zip(num_jac, sym_jac_back, sym_jac_fwd):
        np.testing.assert_allclose(num, back, rtol=rtol, atol=atol)
        np.testing.assert_allclose(num, fwd, rtol=rtol, atol=atol)
        # And the symbolic computations should be much closer (TF's default tolerance).
        np.testing.assert_allclose(back, fwd, rtol=1e-6, atol=1e-6)
    return sym_jac_back


def _close(a, b, rtol=1e-6, atol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


# --- ForwardpropTest --------------------------------------------------------------------


def test_function_cache_limited():
    # TF: the accumulator's traced Add JVP is retraced for each new shape and the cache
    # stays bounded; here: every size gets the right JVP.
    for execution_count in range(12):
        x = gt.zeros([execution_count])
        with ForwardAccumulator(x, gt.ones_like(x)) as acc:
            y = x + x
        _close(2.0 * np.ones(execution_count), acc.jvp(y))


def test_multiple_watches_add():
    x = gt.constant(-2.0)
    with pytest.raises(ValueError, match="multiple times"):
        with ForwardAccumulator([x, x], [1.0, 2.0]):
            pass
    with ForwardAccumulator([x], [3.0]) as acc:
        _close(3.0, acc.jvp(x))
        acc._watch(x, gt.constant(10.0))
        _close(13.0, acc.jvp(x))
        acc._watch(x, gt.constant(11.0))
        _close(24.0, acc.jvp(x))
        y = gt.constant(3.0) * x
    _close(24.0, acc.jvp(x))
    _close(24.0 * 3.0, acc.jvp(y))


def test_reenter():
    x = gt.constant(-2.0)
    with ForwardAccumulator(x, 1.5) as acc:
        _close(1.5, acc.jvp(x))
        y = 4.0 * x
        _close(6.0, acc.jvp(y))
        with pytest.raises(ValueError, match="already recording"):
            with acc:
                pass
    z = 4.0 * x
    assert acc.jvp(z) is None
    with acc:
        yy = y * y
    _close(6.0 * -8.0 * 2.0, acc.jvp(yy))


def test_dead_tensors_jvp_cleared():
    x = gt.ones([100])
    x_weak = weakref.ref(x)
    grad_tensor = gt.constant(gt.zeros([100]))
    grad_tensor_weak = weakref.ref(grad_tensor)
    with ForwardAccumulator(x, grad_tensor) as acc:
        derived_tensor = gt.constant(2.0) * x
        del grad_tensor
        _close(np.zeros([100]), acc.jvp(x))
        del x
        gc.collect()
        assert x_weak() is None
        assert grad_tensor_weak() is None
        derived_tensor_weak = weakref.ref(derived_tensor)
        derived_tensor_grad = acc.jvp(derived_tensor)
        derived_tensor_grad_weak = weakref.ref(derived_tensor_grad)
        del derived_tensor
        del derived_tensor_grad
        gc.collect()
        assert derived_tensor_weak() is None
        assert derived_tensor_grad_weak() is None


def test_jvp_manual():
    primal, tangent = _jvp(gt.sin, (gt.constant(0.1),), (gt.constant(0.2),))
    _close(np.sin(0.1), primal)
    _close(np.cos(0.1) * 0.2, tangent)


def test_numeric_higher_order():
    def f(x):
        pointwise = gt.sin(x) * gt.tan(x)
        return gt.reduce_prod(pointwise + gt.reduce_sum(pointwise), axis=1)

    _test_gradients(f, [gt.constant([[2.0, 3.0], [1.0, 4.0]])], order=3)


def test_custom_gradient():
    @gt.custom_gradient
    def f(x):
        def grad(dy):
            return dy * gt.cos(x)

        return np.sin(x.numpy()), grad

    jac = _test_gradients(f, [gt.constant([1.0, 2.0])], order=3)
    _close(jac[0], np.diag(np.cos([1.0, 2.0])), rtol=1e-5)


def test_custom_gradient_recompute_grad():
    @gt.recompute_grad
    def f(x):
        return gt.reduce_prod(gt.tanh(x) ** 2)

    jac = _test_gradients(f, [gt.constant([1.0])], order=3)
    t = np.tanh(1.0)
    _close(jac[0], [[2 * t * (1 - t * t)]], rtol=1e-5)


def test_exception_in_custom_gradient_not_swallowed():
    @gt.custom_gradient
    def f(unused_x):
        def grad(unused_dy):
            raise ValueError("test_error_string")

        return 1.0, grad

    c = gt.constant(1.0)
    d = gt.constant(2.0)
    with ForwardAccumulator(c, d):
        with pytest.raises(ValueError, match="test_error_string"):
            f(c)


@pytest.mark.parametrize(
    "value, op_fn",
    [(-0.5, gt.nn.elu), ([0.5], gt.nn.elu), (0.5, gt.nn.swish), ([-0.5], gt.nn.swish)],
    ids=["EluM5", "EluP5", "SwishP5", "SwishM5"],
)
def test_elementwise_nn_ops(value, op_fn):
    _test_gradients(op_fn, [gt.constant(value)], order=3)


def _range_assign(layer):
    """TF's deterministic initialization: each variable a range over [-1, 1)."""
    for v in layer.trainable_variables:
        n = v.shape.num_elements()
        v.assign(gt.reshape(gt.range(-1.0, 1.0, 2.0 / n, dtype=gt.float32), v.shape))


@pytest.mark.parametrize(
    "value, op_fn, atol",
    [
        ([[0.1]], functools.partial(gt.layers.Dense, 5), 1e-6),
        (
            np.reshape(np.arange(start=-1.0, stop=1.0, step=2.0 / (1 * 2 * 4 * 4)), [1, 2, 4, 4]),
            functools.partial(gt.layers.Conv2D, 2, 2),
            1e-3,
        ),
    ],
    ids=["Dense", "Conv2D"],
)
def test_keras_layers(value, op_fn, atol):
    layer = op_fn()
    input_value = gt.constant(value, dtype=gt.float32)
    layer.build(input_value.shape)
    _range_assign(layer)
    # These are linear, so second-order is pretty boring.
    jac = _test_gradients(layer, [input_value], atol=atol, order=2)
    assert np.abs(jac[0]).max() > 0.1


_BN_CASES = [
    ([[0.1], [0.2], [-0.3]], functools.partial(gt.layers.BatchNormalization, fused=False)),
    ([[[[0.1, 2.0]]], [[[0.2, -3.0]]], [[[-0.3, 4.0]]]], functools.partial(gt.layers.BatchNormalization, fused=True)),
]


@pytest.mark.parametrize("value, op_fn", _BN_CASES, ids=["NonFused", "Fused"])
def test_batch_norm(value, op_fn):
    for training in [True, False]:
        layer = op_fn()
        input_value = gt.constant(value, dtype=gt.float32)
        layer.build(input_value.shape)
        _test_gradients(functools.partial(layer, training=training), [input_value], order=2, atol=1e-3)


@pytest.mark.parametrize("value, op_fn", _BN_CASES, ids=["NonFused", "Fused"])
def test_batch_norm_layer_param_grads(value, op_fn):
    for training in [True, False]:
        layer = op_fn()
        with gt.GradientTape() as tape:
            input_value = gt.constant(value, dtype=gt.float32)
            tape.watch(input_value)
            output = layer(input_value, training=training)
        jac_back = tape.jacobian(output, [input_value] + layer.trainable_variables)
        jac_forward = _jacfwd(
            lambda *args, layer=layer, training=training: layer(args[0], training=training),
            [input_value] + layer.trainable_variables,
        )
        for backward, forward in zip(jac_back, jac_forward):
            forward = gt.reshape(forward, gt.shape(backward))
            _close(backward, forward, atol=1e-5)


@pytest.mark.parametrize(
    "data_format, x_shape, channels, test_back_over_forward",
    [
        ("NCHW", [4, 3, 2, 2], 3, False),
        ("NHWC", [4, 2, 2, 3], 3, False),
        ("NCHW", [2, 2, 1, 1], 2, True),
        ("NHWC", [2, 1, 1, 2], 2, True),
    ],
    ids=["NCHW", "NHWC", "NCHWForward", "NHWCForward"],
)
def test_fused_batch_norm_grads_training(data_format, x_shape, channels, test_back_over_forward):
    increment = 3.0 / float(np.prod(x_shape))
    x = gt.reshape(gt.range(-2.0, 1.0, increment), x_shape)
    scale = gt.constant([1.0, 1.1, 0.9])[:channels]
    offset = gt.constant([-0.5, -0.6, -0.7])[:channels]
    epsilon = 0.001

    def _bn_fused(x_arg, scale_arg, offset_arg):
        return gt.nn.fused_batch_norm(
            x_arg, scale_arg, offset_arg, epsilon=epsilon, is_training=True, data_format=data_format
        )[0]

    _test_gradients(_bn_fused, [x, scale, offset], order=2, atol=1e-3)
    if test_back_over_forward:
        # A loop over parameters, so only for the small cases (as in TF).
        gradfwd_x = _gradfwd(_bn_fused, 0)
        _test_gradients(gradfwd_x, [x, scale, offset], order=1, atol=1e-3)
        gradfwd_scale = _gradfwd(_bn_fused, 1)
        _test_gradients(gradfwd_scale, [x, scale, offset], order=1, atol=1e-3)
        gradfwd_offset = _gradfwd(_bn_fused, 2)
        _test_gradients(gradfwd_offset, [x, scale, offset], order=1, atol=1e-3)


def test_fused_batch_norm_grads_inference():
    x_shape = [4, 10, 10, 2]
    increment = 3.0 / float(np.prod(x_shape))
    x = gt.reshape(gt.range(-2.0, 1.0, increment), x_shape)
    scale = gt.constant([1.0, 1.1])
    offset = gt.constant([-0.5, -0.6])
    mean = gt.constant([-1.3, 1.4])
    variance = gt.constant([0.7, 0.9])
    epsilon = 0.001

    def _bn_fused(x_arg, scale_arg, offset_arg):
        return gt.nn.fused_batch_norm(
            x_arg, scale_arg, offset_arg, mean, variance, epsilon=epsilon, is_training=False
        )[0]

    _test_gradients(_bn_fused, [x, scale, offset], order=2, atol=1e-2)


@pytest.mark.parametrize("decorator", [gt.function, lambda f: f], ids=["Function", "NoFunction"])
def test_variables_hvp(decorator):
    class _Model(gt.Module):
        def __init__(self):
            super().__init__()
            self._first_dense = gt.layers.Dense(18)
            self._conv = gt.layers.Conv2D(2, 2)
            self._norm = gt.layers.BatchNormalization()
            self._second_dense = gt.layers.Dense(1)

        def __call__(self, x):
            x = self._first_dense(x)
            x = gt.nn.relu(x)
            x = self._norm(x)
            x = gt.nn.relu(self._conv(gt.reshape(x, [-1, 2, 3, 3])))
            return self._second_dense(x)

    model = _Model()

    def _loss():
        input_value = gt.constant([[-0.5, 1.0], [0.5, -1.0]])
        target = gt.constant([[-1.0], [2.0]])
        return gt.reduce_sum((model(input_value) - target) ** 2.0)

    _loss()  # builds the layers (TF's Keras layers build on first call, in the function)

    @decorator
    def _compute_hvps():
        with gt.GradientTape() as tape:
            loss = _loss()
        vector = tape.gradient(loss, model.trainable_variables)
        variable_input_fn = lambda unused_variables: _loss()  # noqa: E731
        (forward_over_back_hvp,) = _hvp(variable_input_fn, [model.trainable_variables], [vector])
        with gt.GradientTape(persistent=True) as tape:
            tape.watch(model.trainable_variables)
            loss = _loss()
            first_grads = tape.gradient(loss, model.trainable_variables)
        back_over_back_hvp = tape.gradient(first_grads, model.trainable_variables, output_gradients=vector)
        return forward_over_back_hvp, back_over_back_hvp

    fob, bob = _compute_hvps()
    assert len(fob) == len(bob) == len(model.trainable_variables)
    for a, b in zip(fob, bob):
        _close(a, b, rtol=1e-5, atol=1e-5)
    assert max(float(gt.reduce_max(gt.abs(b))) for b in bob) > 1e-2


@pytest.mark.parametrize("order, expected", list(enumerate(_X11_35_DERIVATIVES)), ids=[f"Order{i}" for i in range(4)])
def test_higher_order_pure_forward(order, expected):
    def _forwardgrad(f):
        def _compute_forwardgrad(primal):
            tangent = gt.constant(1.0)
            with ForwardAccumulator(primal, tangent) as acc:
                primal_out = f(primal)
            return acc.jvp(primal_out)

        return _compute_forwardgrad

    def _forward(x):
        return x**3.5

    f = _forward
    primal = gt.constant(1.1)
    for _ in range(order):
        f = _forwardgrad(f)
    _close(expected, f(primal))


@pytest.mark.parametrize("decorator", [gt.function, lambda f: f], ids=["Function", "NoFunction"])
def test_grad_pure_forward(decorator):
    @decorator
    def f(x):
        return x**3.5

    primal = gt.constant(1.1)
    with ForwardAccumulator(primal, gt.constant(1.0)) as outer_acc:
        with ForwardAccumulator(primal, gt.constant(1.0)) as acc:
            primal_out = f(primal)
    inner_jvp = acc.jvp(primal_out)
    outer_jvp = outer_acc.jvp(inner_jvp)
    _close(1.1**3.5, primal_out)
    _close(3.5 * 1.1**2.5, inner_jvp)
    _close(3.5 * 2.5 * 1.1**1.5, outer_jvp)
    assert acc.jvp(outer_acc.jvp(primal_out)) is None


def test_jvp_packing():
    # TF also checks forwardprop_util.pack_tangents (private); the JVPs it packs are
    # checked here.
    two = gt.constant(2.0)
    primal_in = gt.constant(1.0)
    inner_jvp = gt.constant(3.0)
    with ForwardAccumulator([primal_in, inner_jvp], [gt.constant(2.0), gt.constant(4.0)]) as outer_acc:
        with ForwardAccumulator(primal_in, inner_jvp) as inner_acc:
            _close(3.0, inner_acc.jvp(primal_in))
            _close([2.0, 4.0], [outer_acc.jvp(primal_in), outer_acc.jvp(inner_jvp)])
            primal_out = primal_in * two
            _close(6.0, inner_acc.jvp(primal_out))
            _close(4.0, outer_acc.jvp(primal_out))
            _close(8.0, outer_acc.jvp(inner_acc.jvp(primal_out)))


def test_function_grad_in_function_pure_forward():
    @gt.function
    def take_gradients():
        @gt.function
        def f(x):
            return x**3.5

        primal = gt.constant(1.1)
        with ForwardAccumulator(primal, gt.constant(1.0)) as outer_acc:
            with ForwardAccumulator(primal, gt.constant(1.0)) as acc:
                primal_out = f(primal)
        inner_jvp = acc.jvp(primal_out)
        outer_jvp = outer_acc.jvp(inner_jvp)
        assert acc.jvp(outer_acc.jvp(primal_out)) is None
        return primal_out, inner_jvp, outer_jvp

    primal_out, inner_jvp, outer_jvp = take_gradients()
    _close(1.1**3.5, primal_out)
    _close(3.5 * 1.1**2.5, inner_jvp)
    _close(3.5 * 2.5 * 1.1**1.5, outer_jvp)


def test_function_grad():
    @gt.function
    def f(x):
        return gt.reduce_prod(gt.tanh(x) ** 2)

    _test_gradients(f, [gt.constant([1.0, 2.0])], order=3)


def test_reusing_jvp():
    m1 = gt.random.uniform((256, 2096), seed=1)
    m2 = gt.identity(m1)
    tangent1 = gt.random.uniform((256, 2096), seed=2)
    tangent2 = gt.random.uniform((256, 2096), seed=3)
    matmul = gt.function(gt.matmul)

    with ForwardAccumulator(primals=[m1, m2], tangents=[tangent1, tangent2]) as acc:
        result1 = matmul(m1, m1, transpose_b=True)
        result2 = matmul(m2, m2, transpose_b=True)

    def _expected(mat, tangent):
        return gt.matmul(tangent, mat, transpose_b=True) + gt.matmul(mat, tangent, transpose_b=True)

    _close(result1, result2)
    _close(_expected(m1, tangent1), acc.jvp(result1), rtol=1e-5, atol=1e-3)
    _close(_expected(m2, tangent2), acc.jvp(result2), rtol=1e-5, atol=1e-3)


def test_hvp_memory():
    def fun(x):
        return gt.reduce_prod(gt.tanh(x) ** 2)

    primals = gt.constant([1.0, 2.0, 3.0])
    tangents = gt.constant([3.0, 4.0, 5.0])
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(3):
        _hvp(fun, (primals,), (tangents,))
    gc.collect()
    # Nothing accumulates from call to call (TF checks for new Python objects).
    assert len(gc.get_objects()) - before < 50


def test_hvp_correctness():
    def fun(x):
        return gt.reduce_prod(gt.tanh(x) ** 2)

    primals = gt.constant([1.0, 2.0, 3.0])
    tangents = gt.constant([3.0, 4.0, 5.0])
    (forwardback_hvp_eager,) = _hvp(fun, (primals,), (tangents,))
    (forwardback_hvp_function,) = gt.function(_hvp)(fun, (primals,), (tangents,))

    with gt.GradientTape(persistent=True) as g:
        g.watch(primals)
        with gt.GradientTape() as gg:
            gg.watch(primals)
            out = fun(primals)
        grad = gt.unstack(gg.gradient(out, primals))
    hessian = []
    for i in range(3):
        hessian.append(g.gradient(grad[i], primals))
    hessian = gt.stack(hessian, axis=0)
    backback_hvp = gt.tensordot(hessian, tangents, axes=1)

    _close(backback_hvp, forwardback_hvp_eager)
    _close(backback_hvp, forwardback_hvp_function)
    assert float(gt.reduce_max(gt.abs(backback_hvp))) > 1e-3


def test_should_record_and_stop_record():
    # TF also asserts on tape_lib.should_record_backprop and the number of active
    # gradient types, and stops recording with tape_lib.stop_recording, which pauses
    # accumulators too (all private). The public GradientTape.stop_recording pauses
    # that tape only: TF 2.21 gives the tangent 4.0 and the gradient None, as here.
    c = gt.constant(1.0)
    c_tangent = gt.constant(2.0)
    with ForwardAccumulator(c, c_tangent) as acc:
        with gt.GradientTape() as tape:
            tape.watch(c)
            with tape.stop_recording():
                d = c * 2.0
            _close(4.0, acc.jvp(d))
        assert tape.gradient(d, c) is None


def test_op_with_no_trainable_outputs():
    v = gt.Variable(1.0)
    with ForwardAccumulator(v, 11.0):
        v.assign_sub(0.5)
        _close(0.5, v.numpy())


def test_variable_read_in_function():
    v = gt.Variable(1.0)
    with ForwardAccumulator(v, 11.0) as acc:

        @gt.function
        def f():
            return v.read_value(), 2.0 * v.read_value()

        result = f()
        _close((1.0, 2.0), result)
        _close((11.0, 22.0), acc.jvp(result))


@pytest.mark.parametrize("forward_prop_first", [True, False], ids=["ForwardPropFirst", "TapeFirst"])
def test_forward_over_backward_memory_efficiency(forward_prop_first):
    # Watching depends on nesting, not creation order.
    c = gt.constant(1.0)
    if forward_prop_first:
        forward_accumulator = ForwardAccumulator(c, 0.1)
        gradient_tape = gt.GradientTape()
    else:
        gradient_tape = gt.GradientTape()
        forward_accumulator = ForwardAccumulator(c, 0.1)
    try:
        gc.disable()
        with gradient_tape as tape:
            # Adding and removing the tape multiple times in different nesting
            # patterns does not affect watch ordering.
            pass
        with forward_accumulator as acc:
            with gradient_tape as tape:
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


@pytest.mark.parametrize("forward_prop_first", [True, False], ids=["ForwardPropFirst", "TapeFirst"])
def test_backward_over_forward(forward_prop_first):
    c = gt.constant(1.0)
    # Watching depends on nesting, not creation order.
    if forward_prop_first:
        forward_accumulator = ForwardAccumulator(c, 0.1)
        gradient_tape = gt.GradientTape()
    else:
        gradient_tape = gt.GradientTape()
        forward_accumulator = ForwardAccumulator(c, 0.1)
    with gradient_tape as tape:
        with forward_accumulator as acc:
            tape.watch(c)
            d = gt.cos(c)
        _close(-0.1 * np.cos(1.0), tape.gradient(acc.jvp(d), c))


def test_variable_watched():
    v = gt.Variable([1.0, 2.0, 3.0])
    with ForwardAccumulator(v, gt.constant([0.1, -0.2, 0.3])) as acc:
        _close([0.1, -0.2, 0.3], acc.jvp(v))
        x = v * 2.0
        _close([0.2, -0.4, 0.6], acc.jvp(x))
        x2 = v + 0.1
        _close([0.1, -0.2, 0.3], acc.jvp(x2))


def test_unconnected_gradients():
    x = gt.constant(-1.0)
    with ForwardAccumulator(x, 0.1) as acc:
        _close(0.1, acc.jvp(x, unconnected_gradients="zero"))
        _close(0.1, acc.jvp(x, unconnected_gradients="none"))
        y = gt.constant(-2.0)
        _close(0.0, acc.jvp(y, unconnected_gradients="zero"))
        assert acc.jvp(y, unconnected_gradients="none") is None


def test_variable_watched_function():
    class _Model(gt.Module):
        def __init__(self):
            super().__init__()
            self._v = None

        @gt.function
        def compute_jvps(self):
            if self._v is None:
                self._v = gt.Variable([1.0, 2.0, 3.0])
            with ForwardAccumulator(self._v, gt.constant([0.1, -0.2, 0.3])) as acc:
                x = self._v * 2.0
                x2 = self._v + 0.1
            return acc.jvp((self._v, x, x2))

    model = _Model()
    v_jvp, x_jvp, x2_jvp = model.compute_jvps()
    _close([0.1, -0.2, 0.3], v_jvp)
    _close([0.2, -0.4, 0.6], x_jvp)
    _close([0.1, -0.2, 0.3], x2_jvp)


def test_argument_unused():
    v = gt.constant(1.0)
    with ForwardAccumulator(v, 11.0) as acc:

        @gt.function
        def _f(x):
            del x
            return gt.constant(1.0)

        result = _f(v)
        _close(1.0, result)
        assert acc.jvp(result) is None


# --- ControlFlowTests -------------------------------------------------------------------


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
        ret = 0.0
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
            ret = 0.0
    return acc.jvp(ret)


def test_of_function_while():
    y = gt.constant(1.0)
    with ForwardAccumulator(y, 1.0) as acc:
        _close(10.0, acc.jvp(_has_loop(gt.constant(5), y)))


def test_of_function_cond():
    y = gt.constant(1.0)
    with ForwardAccumulator(y, 1.0) as acc:
        _close(3.0, acc.jvp(_has_cond(gt.constant(5), y)))
        _close(0.0, acc.jvp(_has_cond(gt.constant(0), y)))


def test_in_function_while():
    _close(10.0, _fprop_while(gt.constant(5), gt.constant(1.0)))


def test_in_function_cond():
    _close(3.0, _fprop_cond(gt.constant(5), gt.constant(1.0)))
    _close(0.0, _fprop_cond(gt.constant(0), gt.constant(1.0)))


# --- HessianTests -----------------------------------------------------------------------


def test_hessian_1d():
    m = 4
    rng = np.random.RandomState([1, 2, 3])
    mat_value = rng.randn(m, m).astype("float32")
    x_value = rng.randn(m).astype("float32")
    hess_value = mat_value + mat_value.T
    mat = gt.Variable(mat_value)

    def _f(x):
        return gt.reduce_sum(x[:, None] * mat * x[None, :])

    (hessian_eager,) = _forward_over_back_hessian(_f, [gt.constant(x_value)], use_pfor=False, dtype=[gt.float32])
    _close(hess_value, hessian_eager, rtol=1e-5, atol=1e-5)
    (hessian_function,) = gt.function(_forward_over_back_hessian)(
        _f, [gt.constant(x_value)], use_pfor=False, dtype=[gt.float32]
    )
    _close(hess_value, hessian_function, rtol=1e-5, atol=1e-5)
    (hessian_pfor,) = gt.function(_forward_over_back_hessian)(
        _f, [gt.constant(x_value)], use_pfor=True, dtype=[gt.float32]
    )
    _close(hess_value, hessian_pfor, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("use_pfor", [True, False], ids=["PFor", "MapFn"])
def test_hessian_of_variables(use_pfor):
    model = gt.layers.Dense(1)
    model.build([2])

    def _loss(*unused_args):
        input_value = gt.constant([[-0.5, 1.0], [0.5, -1.0]])
        target = gt.constant([[-1.0], [2.0]])
        return gt.reduce_sum((model(input_value) - target) ** 2.0)

    kernel_hess, bias_hess = _forward_over_back_hessian(
        _loss, [model.kernel, model.bias], use_pfor=use_pfor, dtype=[gt.float32, gt.float32]
    )
    # 3 total parameters, the whole hessian is the 3x3 concatenation
    assert kernel_hess.shape.as_list() == [3, 2, 1]
    assert bias_hess.shape.as_list() == [3, 1]
    full_hessian = gt.concat([gt.reshape(kernel_hess, [3, 2]), bias_hess], axis=1)
    # The full Hessian should be symmetric.
    _close(full_hessian, gt.transpose(full_hessian))
    # And it is 2 X^T X with X = [inputs, 1] (the loss is quadratic).
    xs = np.array([[-0.5, 1.0, 1.0], [0.5, -1.0, 1.0]])
    _close(full_hessian, 2 * xs.T @ xs, rtol=1e-5, atol=1e-5)
