"""Testing and gradient utilities (issue 14, part A) and TF's behaviour at the edges
(part B): ``gt.test.compute_gradient``, ``gt.recompute_grad``,
``gt.grad_pass_through``, ``gt.get_static_value``, ``add_n``, ``repeat``, ``size``,
``embedding_lookup``, ``gather(batch_dims=)``, ``TensorShape``, conversion errors,
second derivatives at kinks, integer sources, custom-gradient bodies."""

import weakref

import numpy as np
import pytest

import gradtape as gt
from isolated import run_python

# --- gt.test.compute_gradient -----------------------------------------------------------


def test_compute_gradient_layout_and_values():
    x = gt.constant([[1.0, 2.0, 3.0]])
    w = gt.constant([[1.0], [0.5], [-1.0]], dtype=gt.float64)

    def f(x, w):
        return gt.matmul(gt.cast(x, gt.float64), w) ** 2

    theoretical, numerical = gt.test.compute_gradient(f, [x, w])
    assert isinstance(theoretical, tuple) and isinstance(numerical, tuple)
    assert [t.shape for t in theoretical] == [(1, 3), (1, 3)]
    # y = (x.w)^2 = (1 + 1 - 3)^2 = 1: dy/dx = 2 (x.w) w, dy/dw = 2 (x.w) x.
    np.testing.assert_allclose(theoretical[0], [[-2.0, -1.0, 2.0]])
    np.testing.assert_allclose(theoretical[1], [[-2.0, -4.0, -6.0]])
    assert theoretical[0].dtype == np.float32 and theoretical[1].dtype == np.float64
    for t, n in zip(theoretical, numerical):
        np.testing.assert_allclose(t, n, rtol=1e-3, atol=1e-3)


def test_compute_gradient_complex_counts_two_reals_and_default_delta():
    # f(z) = z * conj(z) = |z|^2 (real, complex dtype): per TF, rows and columns are
    # (re, im) pairs; d|z|^2/dre = 2 re, /dim = 2 im, imaginary output row zero.
    z = gt.constant([1.0 + 2.0j], dtype=gt.complex128)
    theoretical, numerical = gt.test.compute_gradient(lambda z: z * gt.math.conj(z), [z])
    assert theoretical[0].shape == (2, 2) and theoretical[0].dtype == np.float64
    np.testing.assert_allclose(numerical[0], [[2.0, 4.0], [0.0, 0.0]], atol=1e-9)
    np.testing.assert_allclose(theoretical[0], numerical[0], atol=1e-9)


def test_compute_gradient_rejects_what_tf_rejects():
    with pytest.raises(ValueError, match="must be a list or tuple"):
        gt.test.compute_gradient(lambda x: x, gt.constant(1.0))
    with pytest.raises(ValueError, match="unsupported type int32"):
        gt.test.compute_gradient(lambda x: x, [gt.constant(1)])


def test_compute_gradient_unconnected_argument_is_zero_rows():
    t, n = gt.test.compute_gradient(lambda x, y: x * 2.0, [[1.0, 2.0], [3.0]])
    assert t[1].tolist() == [[0.0], [0.0]] and n[1].tolist() == [[0.0], [0.0]]


# --- gt.recompute_grad ----------------------------------------------------------------


def _mlp(ws):
    def block(h):
        for w in ws:
            h = gt.tanh(h @ w)
        return h

    return block


def test_recompute_grad_gives_the_same_gradients_with_one_node_on_the_tape():
    rng = np.random.default_rng(0)
    ws = [gt.Variable(rng.standard_normal((8, 8)).astype(np.float32) * 0.3) for _ in range(6)]
    x = gt.constant(rng.standard_normal((4, 8)).astype(np.float32))
    plain, checkpointed = _mlp(ws), gt.recompute_grad(_mlp(ws))
    got = []
    for f in (plain, checkpointed):
        with gt.GradientTape() as t:
            t.watch(x)
            y = gt.reduce_sum(f(x) ** 2)
        got.append((t._num_nodes, t.gradient(y, [x] + ws)))
    (n_plain, g_plain), (n_ckpt, g_ckpt) = got
    # Plain: per layer a variable read, matmul and tanh, then ** and the sum. With
    # recompute_grad the reads (so that the variables get gradients), one node for the
    # whole block, ** and the sum: the block's activations stay off the tape.
    assert (n_plain, n_ckpt) == (3 * len(ws) + 2, len(ws) + 3)
    for a, b in zip(g_plain, g_ckpt):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


def test_recompute_grad_nested_arguments_and_python_numbers():
    @gt.recompute_grad
    def f(pair, scale):
        a, b = pair
        return gt.sin(a) * b * scale

    a, b = gt.constant(0.5), gt.constant(2.0)
    with gt.GradientTape() as t:
        t.watch([a, b])
        y = f((a, b), 3.0)
    ga, gb = t.gradient(y, [a, b])
    np.testing.assert_allclose([ga.numpy(), gb.numpy()], [np.cos(0.5) * 6.0, np.sin(0.5) * 3.0], rtol=1e-6)


def test_recompute_grad_holds_less_memory_while_recording():
    # 12 layers h = sin(h * w) on a 512 x 1024 float32 batch under a tape: plain, the
    # tape keeps every activation (2 MiB each: the inputs of * and of sin); with
    # recompute_grad only the block's input and output. RSS growth over the forward
    # pass is measured in a fresh interpreter; the gradients agree.
    out = run_python(
        """
import gc, os
import numpy as np
import gradtape as gt

def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

rng = np.random.default_rng(0)
ws = [gt.Variable(rng.standard_normal(1024).astype(np.float32)) for _ in range(12)]
x = gt.constant(rng.standard_normal((512, 1024)).astype(np.float32))

def block(h):
    for w in ws:
        h = gt.sin(h * w)
    return h

grads = {}
for name, f in [("plain", block), ("recompute", gt.recompute_grad(block))]:
    gc.collect()
    base = rss_mib()
    with gt.GradientTape() as t:
        y = gt.reduce_sum(f(x))
    print(name, rss_mib() - base)
    grads[name] = t.gradient(y, ws)
    del t, y
    gc.collect()
    gt.experimental.release_memory()
err = max(float(np.max(np.abs(a.numpy() - b.numpy()))) for a, b in zip(grads["plain"], grads["recompute"]))
print("err", err)
""",
        timeout=300,
    )
    f = {k: float(v) for k, v in (line.split() for line in out.splitlines())}
    assert f["plain"] > 30, f  # the tape really held the activations
    assert f["recompute"] < f["plain"] / 3, f
    assert f["err"] < 1e-4, f


# --- gt.grad_pass_through -------------------------------------------------------------


def test_grad_pass_through_with_a_variable_assign():
    # TF's GradPassThroughTests.test_gradients_v2.
    x = gt.Variable(1.0, name="x")
    z = gt.Variable(3.0, name="z")
    with gt.GradientTape() as tape:
        y = gt.grad_pass_through(x.assign)(z**2)
    assert tape.gradient(y, z).numpy() == 6.0  # 2 * z
    assert x.numpy() == 9.0


def test_grad_pass_through_straight_through_round():
    x = gt.constant([0.4, 1.6])
    with gt.GradientTape() as t:
        t.watch(x)
        y = gt.reduce_sum(gt.grad_pass_through(gt.math.round)(x) * gt.constant([2.0, 3.0]))
    assert y.numpy() == 6.0
    assert t.gradient(y, x).numpy().tolist() == [2.0, 3.0]


# --- gt.get_static_value --------------------------------------------------------------


def test_get_static_value():
    v = gt.get_static_value(gt.constant([1.0, 2.0]))
    assert isinstance(v, np.ndarray) and v.tolist() == [1.0, 2.0]
    assert gt.get_static_value(gt.constant(3)) == 3
    assert gt.get_static_value(gt.Variable(1.0)) is None
    assert gt.get_static_value([1, 2]) == [1, 2]
    assert gt.get_static_value(None) is None


# --- add_n, repeat, size, embedding_lookup, gather(batch_dims) -------------------------------


def test_add_n_values_gradient_and_errors():
    a, b = gt.constant([1.0, 2.0]), gt.constant([3.0, 4.0])
    with gt.GradientTape() as t:
        t.watch([a, b])
        y = gt.add_n([a, b, a])
    assert y.numpy().tolist() == [5.0, 8.0]
    ga, gb = t.gradient(y, [a, b])
    assert ga.numpy().tolist() == [2.0, 2.0] and gb.numpy().tolist() == [1.0, 1.0]
    assert gt.add_n([a]) is a
    with pytest.raises(ValueError, match="at least one"):
        gt.add_n([])
    with pytest.raises(gt.errors.InvalidArgumentError, match="Shapes of all inputs must match"):
        gt.add_n([a, gt.constant([1.0, 2.0, 3.0])])
    with pytest.raises(TypeError, match="don't all match"):
        gt.add_n([a, gt.constant([1, 2])])


def test_repeat_as_tf():
    assert gt.repeat([1, 2], 2).numpy().tolist() == [1, 1, 2, 2]
    x = gt.constant([[1, 2], [3, 4]])
    assert gt.repeat(x, [1, 2], axis=1).numpy().tolist() == [[1, 2, 2], [3, 4, 4]]
    assert gt.repeat(x, 3).numpy().tolist() == [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]
    y = gt.constant([1.0, 2.0])
    with gt.GradientTape() as t:
        t.watch(y)
        r = gt.repeat(y, [3, 1])
    assert t.gradient(r, y).numpy().tolist() == [3.0, 1.0]
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.repeat(x, [1, 2, 3], axis=0)


def test_size_out_type():
    x = gt.zeros([2, 3])
    assert gt.size(x).dtype == gt.int32 and gt.size(x).numpy() == 6
    s = gt.size(x, out_type=gt.int64)
    assert s.dtype == gt.int64 and s.numpy() == 6
    with pytest.raises(TypeError, match="int32 or int64"):
        gt.size(x, out_type=gt.float32)


def test_embedding_lookup_gradient_is_the_densified_indexed_slices():
    params = gt.Variable(np.arange(12, dtype=np.float32).reshape(4, 3))
    ids = gt.constant([[0, 3], [3, 3]], dtype=gt.int64)
    with gt.GradientTape() as t:
        e = gt.nn.embedding_lookup(params, ids)
        y = gt.reduce_sum(e * gt.constant([[[1.0], [2.0]], [[3.0], [4.0]]]))
    assert e.shape == (2, 2, 3)
    g = t.gradient(y, params)
    # TF's IndexedSlices: the rows as looked up, int64 ids flattened.
    assert isinstance(g, gt.IndexedSlices)
    assert g.indices.numpy().tolist() == [0, 3, 3, 3] and g.indices.dtype == gt.int64
    assert g.values.numpy().tolist() == [[1.0] * 3, [2.0] * 3, [3.0] * 3, [4.0] * 3]
    assert gt.convert_to_tensor(g).numpy().tolist() == [[1.0] * 3, [0.0] * 3, [0.0] * 3, [9.0] * 3]
    # Sharded params (TF's "div" order: shards in sequence) and max_norm.
    shards = [gt.constant([[3.0, 4.0]]), gt.constant([[0.3, 0.4], [6.0, 8.0]])]
    assert gt.nn.embedding_lookup(shards, [2, 0]).numpy().tolist() == [[6.0, 8.0], [3.0, 4.0]]
    clipped = gt.nn.embedding_lookup(shards, [0, 1, 2], max_norm=1.0).numpy()
    np.testing.assert_allclose(clipped, [[0.6, 0.8], [0.3, 0.4], [0.6, 0.8]], rtol=1e-6)


def test_gather_batch_dims_values_gradient_and_errors():
    p = gt.constant(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    idx = gt.constant([[2, 0], [1, 1]])
    # batch_dims=1, axis=1: out[b, i, :] = p[b, idx[b, i], :]
    got = gt.gather(p, idx, batch_dims=1)
    want = np.stack([p.numpy()[b, idx.numpy()[b]] for b in range(2)])
    np.testing.assert_array_equal(got.numpy(), want)
    # axis=2: out[b, j, i] = p[b, j, idx[b, i]]
    got = gt.gather(p, [[3, 0], [1, 2]], axis=2, batch_dims=1)
    want = np.stack([np.take(p.numpy()[b], [[3, 0], [1, 2]][b], axis=1) for b in range(2)])
    np.testing.assert_array_equal(got.numpy(), want)
    with gt.GradientTape() as t:
        t.watch(p)
        y = gt.gather(p, idx, batch_dims=1)
    g = t.gradient(y, p).numpy()
    assert g[0, 2].tolist() == [1.0] * 4 and g[0, 1].tolist() == [0.0] * 4 and g[1, 1].tolist() == [2.0] * 4
    with pytest.raises(gt.errors.InvalidArgumentError, match="must be less than or equal to axis"):
        gt.gather(p, idx, axis=0, batch_dims=1)
    with pytest.raises(gt.errors.InvalidArgumentError, match="should be equal to indices.shape"):
        gt.gather(p, gt.constant([[0], [0], [0]]), batch_dims=1)
    with pytest.raises(gt.errors.InvalidArgumentError, match="not in"):
        gt.gather(p, gt.constant([[0], [3]]), batch_dims=1)


# --- TensorShape ----------------------------------------------------------------------


def test_tensor_shape_methods_as_tf():
    S = gt.TensorShape
    s = gt.zeros([3, 2]).shape
    assert s.as_list() == [3, 2] and s.rank == 2 and s.num_elements() == 6 and s.is_fully_defined()
    assert S([None, 2]).merge_with([3, None]) == S([3, 2])
    with pytest.raises(ValueError, match="are not compatible"):
        S([3, 2]).merge_with([4, 2])
    assert S([None, 2]).is_compatible_with(S([5, 2]))
    assert not S([3, 2]).is_compatible_with([3, 2, 1])
    S([None, 2]).assert_is_compatible_with([7, 2])
    with pytest.raises(ValueError, match="are incompatible"):
        S([1, 2]).assert_is_compatible_with([2, 2])
    assert S([3, 2]).most_specific_compatible_shape([4, 2]) == S([None, 2])
    assert S([3]).most_specific_compatible_shape([3, 1]).rank is None
    assert S([1]).concatenate([2, None]) == S([1, 2, None])
    assert S([1, None]).num_elements() is None and not S([1, None]).is_fully_defined()
    u = S(None)
    assert u.rank is None and u.ndims is None and u.dims is None and repr(u) == "TensorShape(None)"
    assert str(u) == "<unknown>" and str(S([None, 3])) == "(None, 3)" and str(S([4])) == "(4,)"
    assert u.merge_with([1, 2]) == [1, 2] and u.is_compatible_with([5])
    with pytest.raises(ValueError, match="unknown TensorShape"):
        u.as_list()
    with pytest.raises(ValueError, match="must have rank at least 3"):
        S([1, 2]).with_rank_at_least(3)
    assert bool(S([])) and not bool(u)
    assert S([2, 3])[1:] == S([3]) and isinstance(S([2, 3])[1:], S)


# --- weak references, convert_to_tensor ------------------------------------------------


def test_weak_references_and_conversion_identity():
    t, v = gt.constant([1.0]), gt.Variable([1.0])
    wt, wv = weakref.ref(t), weakref.ref(v)
    assert wt() is t and wv() is v
    assert gt.convert_to_tensor(t) is t
    assert gt.convert_to_tensor(v) is not v and isinstance(gt.convert_to_tensor(v), gt.Tensor)
    with pytest.raises(ValueError, match="requested dtype float64"):
        gt.convert_to_tensor(t, dtype=gt.float64)
    d = weakref.WeakValueDictionary({"t": t})
    del t
    assert wt() is None and "t" not in d


# --- part B: conversion errors --------------------------------------------------------


@pytest.mark.parametrize(
    "value, message",
    [
        ([[1, 2], [3]], "Can't convert non-rectangular Python sequence to Tensor."),
        ([1.0, [2.0]], "Can't convert non-rectangular Python sequence to Tensor."),
        ([1, "a"], "Can't convert Python sequence with mixed types to Tensor."),
        (
            [1, None],
            r"Attempt to convert a value \(None\) with an unsupported type \(<class 'NoneType'>\) to a Tensor.",
        ),
        ([[None]], r"Attempt to convert a value \(None\)"),
    ],
)
def test_bad_python_lists_raise_tf_messages(value, message):
    with pytest.raises(ValueError, match=message):
        gt.constant(value)
    with pytest.raises(ValueError, match=message):
        gt.convert_to_tensor(value)


# --- part B: zeros and None where TF gives them ----------------------------------------


def _second(f, x0):
    x = gt.constant(x0)
    with gt.GradientTape() as t2:
        t2.watch(x)
        with gt.GradientTape() as t1:
            t1.watch(x)
            y = f(x)
        g = t1.gradient(y, x)
    return g, None if g is None else t2.gradient(g, x)


@pytest.mark.parametrize(
    "name, f, x0, first, second",
    [
        # ReluGrad's gradient and Sign's are zeros_like in TF: a zero, not None.
        ("relu", gt.nn.relu, 0.0, 0.0, 0.0),
        ("abs", gt.abs, 0.0, 0.0, 0.0),
        ("relu6", gt.nn.relu6, 6.0, 0.0, 0.0),
        ("elu", gt.nn.elu, 0.0, 1.0, 0.0),
        ("leaky_relu", gt.nn.leaky_relu, 0.0, float(np.float32(0.2)), 0.0),
        # Maximum's gradient is a select on a comparison: no second derivative (None);
        # a tie sends the gradient to x (greater_equal).
        ("maximum", lambda x: gt.maximum(x, 0.0), 0.0, 1.0, None),
        ("minimum", lambda x: gt.minimum(x, 0.0), 0.0, 1.0, None),
        ("sign", gt.sign, 0.0, 0.0, None),
        ("floor", gt.floor, 0.5, None, None),
    ],
)
def test_second_derivatives_at_kinks_follow_tf(name, f, x0, first, second):
    g, gg = _second(f, x0)
    assert (None if g is None else float(g)) == first
    if g is not None:
        assert (None if gg is None else float(gg)) == second


def test_integer_sources_get_zeros_with_unconnected_zero():
    x = gt.constant([1, 2])
    y = gt.constant(1.0)
    with pytest.warns(UserWarning, match="floating"):
        with gt.GradientTape(persistent=True) as t:
            t.watch([x, y])
            z = y * 2.0 + gt.cast(x, gt.float32)
    assert t.gradient(z, x) is None
    g = t.gradient(z, x, unconnected_gradients="zero")
    assert g.dtype == gt.int32 and g.numpy().tolist() == [0, 0]


def test_custom_gradient_body_is_recorded_for_second_derivatives():
    # TF eager records the body: a grad_fn using a tensor the body computed is
    # differentiable through it (d/dx of dy * exp(x) = exp(x)).
    @gt.custom_gradient
    def f(x):
        y = gt.exp(x)

        def grad(dy):
            return dy * y

        return y, grad

    x = gt.constant(1.0)
    with gt.GradientTape() as t2:
        t2.watch(x)
        with gt.GradientTape() as t1:
            t1.watch(x)
            y = f(x)
        g = t1.gradient(y, x)
    gg = t2.gradient(g, x)
    assert gg is not None
    np.testing.assert_allclose([g.numpy(), gg.numpy()], [np.e, np.e], rtol=1e-6)


def test_custom_gradient_nested_arguments_and_keywords():
    @gt.custom_gradient
    def f(xs, scale=1.0):
        a, (b,) = xs

        def grad(dy):
            return [dy * b * scale, dy * a * scale]

        return a * b * scale, grad

    a, b = gt.constant(2.0), gt.constant(3.0)
    with gt.GradientTape() as t:
        t.watch([a, b])
        y = f([a, (b,)], scale=2.0)
    assert y.numpy() == 12.0
    assert [g.numpy() for g in t.gradient(y, [a, b])] == [6.0, 4.0]


# --- TF's VariablesGradientTest (gradients_test.py), recompute_grad ---------------------


def _grad(f, argnums=0):
    def F(*params):
        with gt.GradientTape() as tape:
            tape.watch([p for p in params if p.dtype.is_floating])
            outputs = f(*params)
        return tape.gradient(outputs, params[argnums], unconnected_gradients="zero")

    return F


def test_recompute_grad_wrapped():
    def f(x):
        return 2 * x

    assert gt.recompute_grad(f).__wrapped__ is f


def test_recompute_grad_zero_size_input():
    def F(x):
        return 2 * x

    x = gt.constant(())
    assert _grad(gt.recompute_grad(F))(x).numpy().tolist() == _grad(F)(x).numpy().tolist() == []


def test_recompute_grad_different_dtypes_inputs():
    def F(x1, x2):
        return 2 * x1, 2 * x2

    x1, x2 = gt.constant(1, dtype=gt.int32), gt.constant(1.0)
    for argnums, want in [(0, 0), (1, 2.0)]:
        got_re = _grad(gt.recompute_grad(F), argnums)(x1, x2)
        got = _grad(F, argnums)(x1, x2)
        assert got_re.numpy() == got.numpy() == want and got_re.dtype == got.dtype


def test_recompute_grad_higher_order():
    @gt.recompute_grad
    def F(x):
        return gt.reduce_prod(gt.tanh(x) ** 2)

    f = F
    x = [gt.constant([1.0], dtype=gt.float64)]
    for _ in range(3):
        theoretical, numerical = gt.test.compute_gradient(f, x, delta=1e-3)
        np.testing.assert_allclose(numerical, theoretical, rtol=1e-2, atol=1e-6)
        f = _grad(f)


@pytest.mark.parametrize("seq", [False, True])
@pytest.mark.parametrize("wrt", ["input", "variable"])
def test_fn_recompute(seq, wrt):
    def TestFn(inputs, input_vars):
        if seq:
            return (inputs * input_vars, inputs * input_vars * 2.0)
        return inputs * input_vars

    test_var = gt.Variable(np.ones([10], np.float32), name="test_var")
    test_input = gt.constant(np.arange(100, dtype=np.float32).reshape(10, 10))
    vars_to_grad = test_input if wrt == "input" else test_var
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(vars_to_grad)
        out_re = gt.recompute_grad(TestFn)(test_input, vars_to_grad)
        out = TestFn(test_input, vars_to_grad)
    g_re, g = tape.gradient(out_re, vars_to_grad), tape.gradient(out, vars_to_grad)
    np.testing.assert_allclose(g_re.numpy(), g.numpy())


def test_fn_recompute_variable_read_inside():
    w = gt.Variable(np.arange(10, dtype=np.float32))

    def TestFn(x):
        return x * w

    x = gt.constant(np.ones((3, 10), np.float32))
    with gt.GradientTape(persistent=True) as tape:
        out_re = gt.recompute_grad(TestFn)(x)
        out = TestFn(x)
    np.testing.assert_allclose(tape.gradient(out_re, w).numpy(), tape.gradient(out, w).numpy())
    np.testing.assert_allclose(tape.gradient(out_re, w).numpy(), np.full(10, 3.0))


def test_fn_recompute_same_tensor():
    x = gt.ones((10,))
    for fn in (lambda a, b: a * b, lambda a, b: a):
        with gt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            out_re = gt.recompute_grad(fn)(x, x)
            out = fn(x, x)
        np.testing.assert_allclose(tape.gradient(out_re, x).numpy(), tape.gradient(out, x).numpy())


def test_grad_pass_through_variables_get_no_gradient():
    x = gt.Variable(1.0, name="x")
    z = gt.Variable(3.0, name="z")
    with gt.GradientTape() as tape:
        y = x.assign(z**2)
    assert tape.gradient(y, z) is None
    with gt.GradientTape() as tape:
        y = gt.grad_pass_through(lambda v: x * v)(z)
    assert tape.gradient(y, x) is None
