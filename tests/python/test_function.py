"""gt.function: TF's tf.function semantics, one test per rule, and traced == eager."""

import threading

import numpy as np
import pytest

import gradtape as gt


def test_decorator_forms_trace_once_per_signature():
    calls = []

    @gt.function
    def f(x):
        calls.append(1)  # a Python side effect: runs while tracing only
        return x * x + 1.0

    assert float(f(gt.constant(3.0))) == 10.0
    assert float(f(gt.constant(4.0))) == 17.0
    assert len(calls) == 1
    assert f.experimental_get_tracing_count() == 1
    # A new shape or dtype traces again.
    np.testing.assert_allclose(f(gt.constant([1.0, 2.0])).numpy(), [2.0, 5.0])
    assert f.experimental_get_tracing_count() == 2
    assert float(f(gt.constant(2.0, dtype=gt.float64))) == 5.0
    assert f.experimental_get_tracing_count() == 3
    assert len(calls) == 3

    g = gt.function(lambda x: x + 1)
    assert int(g(gt.constant(1))) == 2

    @gt.function()
    def h(x):
        return -x

    assert float(h(gt.constant(1.5))) == -1.5


def test_python_values_are_part_of_the_signature_by_value():
    @gt.function
    def f(x, n):
        return x * n

    assert float(f(gt.constant(2.0), 3)) == 6.0
    assert float(f(gt.constant(5.0), 3)) == 15.0
    assert f.experimental_get_tracing_count() == 1
    assert float(f(gt.constant(2.0), 4)) == 8.0
    assert f.experimental_get_tracing_count() == 2
    # Keyword and positional calls of the same signature share a trace.
    assert float(f(x=gt.constant(1.0), n=4)) == 4.0
    assert f.experimental_get_tracing_count() == 2


def test_input_signature_with_none_dims_traces_once():
    @gt.function(input_signature=[gt.TensorSpec([None], gt.float32)])
    def f(x):
        return gt.reduce_sum(x * x)

    assert float(f(gt.constant([1.0, 2.0]))) == 5.0
    assert float(f(gt.constant([1.0, 2.0, 3.0]))) == 14.0
    assert float(f(np.array([3.0], np.float32))) == 9.0
    assert f.experimental_get_tracing_count() == 1
    with pytest.raises((TypeError, ValueError), match="input_signature"):
        f(gt.constant([[1.0]]))
    with pytest.raises((TypeError, ValueError)):
        f(gt.constant([1.0], dtype=gt.float64))
    with pytest.raises((TypeError, ValueError)):
        f(gt.constant([1.0]), gt.constant([1.0]))


def test_unknown_rank_spec_accepts_any_rank():
    @gt.function(input_signature=[gt.TensorSpec(None)])
    def f(x):
        return x * 2.0

    assert float(f(gt.constant(1.5))) == 3.0
    np.testing.assert_allclose(f(gt.constant([[1.0, 2.0]])).numpy(), [[2.0, 4.0]])
    assert f.experimental_get_tracing_count() == 1


def test_tensor_spec():
    s = gt.TensorSpec([None, 3], gt.float64, name="x")
    assert s.shape.as_list() == [None, 3]
    assert s.dtype == gt.float64
    assert s.name == "x"
    assert s.is_compatible_with(gt.zeros([5, 3], dtype=gt.float64))
    assert not s.is_compatible_with(gt.zeros([5, 2], dtype=gt.float64))
    assert not s.is_compatible_with(gt.zeros([5, 3]))
    assert repr(gt.TensorSpec([None], gt.float32)) == "TensorSpec(shape=(None,), dtype=gt.float32, name=None)"
    assert gt.TensorSpec(None).shape.rank is None
    assert gt.TensorSpec([2]) == gt.TensorSpec([2], gt.float32)


def test_variables_are_captured_by_reference():
    v = gt.Variable(1.0)

    @gt.function
    def f(x):
        return v * x

    assert float(f(gt.constant(2.0))) == 2.0
    v.assign(5.0)
    assert float(f(gt.constant(2.0))) == 10.0
    assert f.experimental_get_tracing_count() == 1


def test_assign_inside_a_function_takes_effect_once_per_call():
    v = gt.Variable(0.0)

    @gt.function
    def step(x):
        v.assign_add(x)
        return v.read_value()

    assert float(step(gt.constant(1.0))) == 1.0
    assert float(v) == 1.0  # tracing did not add it a second time
    assert float(step(gt.constant(2.0))) == 3.0
    assert float(v) == 3.0

    w = gt.Variable([1.0, 2.0])

    @gt.function
    def reset():
        w.assign([0.0, 0.0])

    reset()
    np.testing.assert_array_equal(w.numpy(), [0.0, 0.0])


def test_print_runs_at_call_time(capsys):
    @gt.function
    def f(x):
        print("tracing")
        gt.print("value:", x)
        return x + 1

    f(gt.constant(1))
    f(gt.constant(2))
    err = capsys.readouterr()
    assert err.out.count("tracing") == 1
    assert err.err.splitlines() == ["value: 1", "value: 2"]
    gt.print(gt.constant([1.0, 2.0]), output_stream="stdout")
    assert capsys.readouterr().out == "[1 2]\n"


def test_gradients_through_a_traced_call_equal_eager():
    w = gt.Variable([[0.5, -1.0], [2.0, 0.25]], dtype=gt.float64)
    b = gt.Variable([0.1, -0.2], dtype=gt.float64)

    def loss(x):
        return gt.reduce_sum(gt.tanh(gt.matmul(x, w) + b) ** 2)

    traced = gt.function(loss)
    x = gt.constant([[1.0, 2.0], [-0.5, 0.3]], dtype=gt.float64)
    for _ in range(2):
        with gt.GradientTape() as t1:
            e = loss(x)
        with gt.GradientTape() as t2:
            g = traced(x)
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-14)
        ge = t1.gradient(e, [w, b])
        gg = t2.gradient(g, [w, b])
        for a, c in zip(ge, gg):
            np.testing.assert_allclose(c.numpy(), a.numpy(), rtol=1e-14)
    # Second order through a traced call.
    xs = gt.constant(0.7, dtype=gt.float64)
    cube = gt.function(lambda x: x * x * x)
    with gt.GradientTape() as outer:
        outer.watch(xs)
        with gt.GradientTape() as inner:
            inner.watch(xs)
            y = cube(xs)
        dy = inner.gradient(y, xs)
    d2y = outer.gradient(dy, xs)
    assert float(dy) == pytest.approx(3 * 0.7**2, rel=1e-14)
    assert float(d2y) == pytest.approx(6 * 0.7, rel=1e-14)


def test_jacobian_and_watch_accessed_variables_through_a_call():
    v = gt.Variable([1.0, 2.0], dtype=gt.float64)
    f = gt.function(lambda x: x * v)
    x = gt.constant([3.0, 4.0], dtype=gt.float64)
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = f(x)
    np.testing.assert_allclose(t.jacobian(y, x).numpy(), np.diag([1.0, 2.0]))
    np.testing.assert_allclose(t.gradient(y, v).numpy(), [3.0, 4.0])
    with gt.GradientTape(watch_accessed_variables=False) as t:
        y = f(x)
    assert t.gradient(y, v) is None
    with gt.GradientTape() as t:
        t.watch(x)
        y = gt.function(lambda x: gt.stop_gradient(x) * x)(x)
    np.testing.assert_allclose(t.gradient(y, x).numpy(), [3.0, 4.0])


def test_a_captured_eager_tensor_is_differentiable():
    c = gt.constant(3.0)
    f = gt.function(lambda: c * c)
    with gt.GradientTape() as t:
        t.watch(c)
        y = f()
    assert float(y) == 9.0
    assert float(t.gradient(y, c)) == 6.0


def test_symbolic_tensors_have_no_python_value():
    @gt.function(autograph=False)
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(gt.errors.OperatorNotAllowedInGraphError, match="gt.cond"):
        f(gt.constant(1.0))
    assert issubclass(gt.errors.OperatorNotAllowedInGraphError, TypeError)

    @gt.function
    def g(x):
        return x.numpy()

    with pytest.raises(AttributeError):
        g(gt.constant(1.0))


def test_cond_eager_and_traced():
    assert float(gt.cond(gt.constant(True), lambda: gt.constant(1.0), lambda: gt.constant(2.0))) == 1.0
    assert float(gt.cond(False, lambda: gt.constant(1.0), lambda: gt.constant(2.0))) == 2.0

    @gt.function
    def f(x):
        return gt.cond(x > 0, lambda: x * 2.0, lambda: x * x)

    assert float(f(gt.constant(3.0))) == 6.0
    assert float(f(gt.constant(-3.0))) == 9.0
    assert f.experimental_get_tracing_count() == 1
    x = gt.constant(-3.0)
    with gt.GradientTape() as t:
        t.watch(x)
        y = f(x)
    assert float(t.gradient(y, x)) == -6.0
    # As TF's cond_v2: branches returning different structures are a TypeError.
    with pytest.raises(TypeError, match="structure"):
        gt.function(lambda x: gt.cond(x > 0, lambda: (x, x), lambda: x))(gt.constant(1.0))


def test_while_loop_eager_and_traced_with_gradients():
    assert [
        int(v) for v in gt.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + i), [gt.constant(0), gt.constant(0)])
    ] == [4, 6]

    @gt.function
    def power(x, n):
        i = gt.constant(0)
        y = gt.ones_like(x)
        i, y = gt.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * x), (i, y))
        return y

    x = gt.constant(1.5, dtype=gt.float64)
    for n in (0, 3, 5):
        with gt.GradientTape() as t:
            t.watch(x)
            y = power(x, gt.constant(n))
        assert float(y) == pytest.approx(1.5**n)
        g = t.gradient(y, x)
        expected = n * 1.5 ** (n - 1) if n else 0.0
        assert (0.0 if g is None else float(g)) == pytest.approx(expected)
    assert power.experimental_get_tracing_count() == 1
    out = gt.while_loop(lambda i: i < 10, lambda i: i + 3, gt.constant(0), maximum_iterations=2)
    assert int(out) == 6


def test_autograph_if_elif_else_on_tensors():
    @gt.function
    def sign_square(x):
        if x > 0:
            y = x * x
        elif x < 0:
            y = -x * x
        else:
            y = gt.zeros_like(x)
        return y

    assert float(sign_square(gt.constant(2.0))) == 4.0
    assert float(sign_square(gt.constant(-3.0))) == -9.0
    assert float(sign_square(gt.constant(0.0))) == 0.0
    assert sign_square.experimental_get_tracing_count() == 1

    @gt.function
    def branch_return(x):
        if gt.reduce_sum(x) > 0:
            return x + 1.0
        else:
            return x - 1.0

    np.testing.assert_allclose(branch_return(gt.constant([1.0, 2.0])).numpy(), [2.0, 3.0])
    np.testing.assert_allclose(branch_return(gt.constant([-1.0, -2.0])).numpy(), [-2.0, -3.0])


def test_autograph_while_and_for_with_break_and_continue():
    @gt.function
    def collatz_steps(n):
        steps = gt.constant(0)
        while n != 1:
            if n % 2 == 0:
                n = n // 2
            else:
                n = 3 * n + 1
            steps += 1
        return steps

    assert int(collatz_steps(gt.constant(6))) == 8
    assert int(collatz_steps(gt.constant(27))) == 111
    assert collatz_steps.experimental_get_tracing_count() == 1

    @gt.function
    def sum_until_negative(xs):
        total = gt.constant(0.0)
        for x in xs:
            if x < 0:
                break
            if x > 10:
                continue
            total += x
        return total

    assert float(sum_until_negative(gt.constant([1.0, 20.0, 2.0, -1.0, 5.0]))) == 3.0
    assert float(sum_until_negative(gt.constant([4.0, 5.0]))) == 9.0

    @gt.function
    def triangle(n):
        s = gt.constant(0)
        for i in gt.range(n):
            s += i
        return s

    assert int(triangle(gt.constant(5))) == 10
    assert int(triangle(gt.constant(0))) == 0

    @gt.function
    def python_loop(x):
        for _ in range(3):
            x = x * 2.0
        return x

    assert float(python_loop(gt.constant(1.0))) == 8.0


def test_methods_trace_per_instance():
    class Scale:
        def __init__(self, k):
            self.k = gt.Variable(k)

        @gt.function
        def __call__(self, x):
            return self.k * x

    a, b = Scale(2.0), Scale(3.0)
    assert float(a(gt.constant(1.0))) == 2.0
    assert float(b(gt.constant(1.0))) == 3.0
    assert float(a(gt.constant(4.0))) == 8.0


def test_get_concrete_function():
    @gt.function
    def f(x):
        return x + 1.0

    c = f.get_concrete_function(gt.TensorSpec([None], gt.float32))
    np.testing.assert_allclose(c(gt.constant([1.0, 2.0])).numpy(), [2.0, 3.0])
    assert f.experimental_get_tracing_count() == 1
    with pytest.raises((TypeError, ValueError)):
        c(gt.constant([1.0], dtype=gt.float64))


def test_nested_structures_in_and_out():
    @gt.function
    def f(d, pair):
        a, b = pair
        return {"sum": d["x"] + a, "prod": [d["x"] * b, None]}

    out = f({"x": gt.constant(2.0)}, (gt.constant(3.0), gt.constant(4.0)))
    assert float(out["sum"]) == 5.0
    assert float(out["prod"][0]) == 8.0
    assert out["prod"][1] is None


def test_switch_case_and_map_fn():
    fns = [lambda: gt.constant(10), lambda: gt.constant(20), lambda: gt.constant(30)]
    assert int(gt.switch_case(gt.constant(2), fns)) == 30
    assert int(gt.switch_case(gt.constant(7), fns)) == 30

    @gt.function
    def pick(i):
        return gt.switch_case(i, fns, default=lambda: gt.constant(-1))

    assert [int(pick(gt.constant(i))) for i in (0, 1, 2, 5)] == [10, 20, 30, -1]
    np.testing.assert_allclose(gt.map_fn(lambda x: x * x, gt.constant([1.0, 2.0, 3.0])).numpy(), [1.0, 4.0, 9.0])

    @gt.function(input_signature=[gt.TensorSpec([None, 2], gt.float32)])
    def row_norms(m):
        return gt.map_fn(lambda r: gt.reduce_sum(r * r), m)

    np.testing.assert_allclose(row_norms(gt.constant([[1.0, 2.0], [3.0, 4.0], [0.0, 1.0]])).numpy(), [5.0, 25.0, 1.0])
    np.testing.assert_allclose(row_norms(gt.constant([[2.0, 2.0]])).numpy(), [8.0])
    np.testing.assert_allclose(
        gt.vectorized_map(lambda r: r * 2.0, gt.constant([[1.0], [2.0]])).numpy(), [[2.0], [4.0]]
    )


def test_random_ops_draw_fresh_values_each_call():
    f = gt.function(lambda: gt.random.uniform([4]))
    a, b = f().numpy(), f().numpy()
    assert not np.array_equal(a, b)


def test_two_threads_call_one_function():
    w = gt.Variable(np.eye(8, dtype=np.float32))
    f = gt.function(lambda x: gt.reduce_sum(gt.tanh(gt.matmul(x, w))))
    x = gt.constant(np.full((4, 8), 0.1, np.float32))
    expected = float(f(x))
    errors = []

    def work():
        for _ in range(50):
            if abs(float(f(x)) - expected) > 1e-6:
                errors.append("mismatch")

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert f.experimental_get_tracing_count() == 1


# ---- every op of the spec table, traced and eager --------------------------------

import os  # noqa: E402
import sys  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from op_specs import SPECS  # noqa: E402


def _spec_cases():
    out = []
    for spec in SPECS:
        if not spec.real or "float64" not in spec.dtypes:
            continue
        out.append(pytest.param(spec, id=spec.id))
    return out


def _inputs(spec, seed):
    rng = np.random.default_rng(seed)
    shapes = spec.shapes[0]
    return [np.asarray(s(rng, shp), dtype=np.float64) for s, shp in zip(spec.samplers(), shapes)]


def _value_and_grads(fn, arrays, v_seed):
    ts = [gt.constant(a) for a in arrays]
    with gt.GradientTape() as tape:
        tape.watch(ts)
        y = fn(*ts)
    v = np.random.default_rng(v_seed).standard_normal(tuple(y.shape))
    gs = tape.gradient(
        y, ts, output_gradients=gt.constant(v.astype(y.dtype.name)), unconnected_gradients=gt.UnconnectedGradients.ZERO
    )
    # Eager, a gather's gradient is TF's IndexedSlices (traced, dense): compared densified.
    return y.numpy(), [gt.convert_to_tensor(g).numpy() for g in gs]


@pytest.mark.parametrize("spec", _spec_cases())
def test_every_op_traced_equals_eager(spec):
    traced = gt.function(spec.fn)
    for seed in (1, 2):
        xs = _inputs(spec, seed)
        want, want_g = _value_and_grads(spec.fn, xs, seed)
        got, got_g = _value_and_grads(traced, xs, seed)
        np.testing.assert_array_equal(got, want)
        for a, b in zip(got_g, want_g):
            np.testing.assert_array_equal(a, b)
    # The second inputs ran the first trace's graph.
    assert traced.experimental_get_tracing_count() == 1


def _mlp(seed, x):
    gt.random.set_seed(seed)
    model = gt.layers.Sequential([gt.layers.Dense(16, activation="relu"), gt.layers.Dense(1)])
    model(x)  # built here, from the seed
    return model


@pytest.mark.parametrize("make_opt", [lambda: gt.optimizers.SGD(0.05, momentum=0.9), lambda: gt.optimizers.Adam(0.01)])
def test_a_training_step_traced_gives_the_eager_weights(make_opt):
    rng = np.random.default_rng(0)
    x = gt.constant(rng.standard_normal((32, 4)).astype(np.float32))
    y = gt.constant(rng.standard_normal((32, 1)).astype(np.float32))

    def make_step(model, opt):
        def step(x, y):
            with gt.GradientTape() as tape:
                loss = gt.reduce_mean((model(x) - y) ** 2)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        return step

    eager_model, traced_model = _mlp(1, x), _mlp(1, x)
    for a, b in zip(eager_model.trainable_variables, traced_model.trainable_variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    eager_opt, traced_opt = make_opt(), make_opt()
    eager_step = make_step(eager_model, eager_opt)
    traced_step = gt.function(make_step(traced_model, traced_opt))
    losses = []
    for _ in range(5):
        le = eager_step(x, y)
        lt = traced_step(x, y)
        losses.append(float(lt))
        np.testing.assert_allclose(float(lt), float(le), rtol=1e-6)
    # As TF: the first trace creates the optimizer's variables, so it is traced again.
    assert traced_step.experimental_get_tracing_count() == 2
    assert losses[-1] < losses[0]
    assert int(traced_opt.iterations.numpy()) == 5
    for a, b in zip(eager_model.trainable_variables, traced_model.trainable_variables):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-6)


def test_tapes_inside_a_function_persistent_and_nested():
    @gt.function
    def derivatives(x):
        with gt.GradientTape() as outer:
            outer.watch(x)
            with gt.GradientTape(persistent=True) as inner:
                inner.watch(x)
                y = x * x * x
            dy = inner.gradient(y, x)
            dy_again = inner.gradient(y, x)
        d2y = outer.gradient(dy, x)
        return y, dy, dy_again, d2y

    for v in (2.0, -1.5):
        y, dy, dy2, d2y = derivatives(gt.constant(v, dtype=gt.float64))
        assert float(y) == pytest.approx(v**3)
        assert float(dy) == pytest.approx(3 * v * v)
        assert float(dy2) == pytest.approx(3 * v * v)
        assert float(d2y) == pytest.approx(6 * v)
    assert derivatives.experimental_get_tracing_count() == 1

    @gt.function
    def jac(x):
        with gt.GradientTape() as t:
            t.watch(x)
            y = gt.sin(x) * 2.0
        return t.jacobian(y, x)

    xs = np.array([0.1, 0.7], np.float64)
    np.testing.assert_allclose(jac(gt.constant(xs)).numpy(), np.diag(2 * np.cos(xs)), rtol=1e-14)
    np.testing.assert_allclose(jac(gt.constant(xs + 1)).numpy(), np.diag(2 * np.cos(xs + 1)), rtol=1e-14)


def test_custom_gradient_inside_a_function():
    @gt.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return gt.clip_by_norm(dy, 0.5)

        return y, backward

    class Module:
        @gt.function(input_signature=[gt.TensorSpec(None)])
        def call_custom_grad(self, x):
            return clip_gradients(x)

    model = Module()
    v = gt.Variable(2.0)
    for _ in range(2):
        with gt.GradientTape() as t:
            result = model.call_custom_grad(v)
        # The seed's SavedModel example: the clipped gradient, 0.5 (not 1.0).
        assert float(t.gradient(result, v)) == 0.5
    xs = gt.constant([3.0, 4.0])
    with gt.GradientTape() as t:
        t.watch(xs)
        y = model.call_custom_grad(xs) * 10.0
    # dy = [10, 10], clipped to norm 0.5.
    np.testing.assert_allclose(t.gradient(y, xs).numpy(), [0.5 / np.sqrt(2)] * 2, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_elementwise_chains_equal_unfused_with_nan_and_inf(dtype):
    n = 200_003
    x = np.random.default_rng(3).standard_normal(n).astype(dtype) * 3

    def chain(x, c):
        return gt.tanh(gt.exp(gt.sin(x) * x) + c) - gt.sqrt(gt.abs(x)) * c

    traced = gt.function(chain)
    xt, c = gt.constant(x), gt.constant(dtype(0.5))
    counts = dict(traced.get_concrete_function(xt, c).graph.op_counts())
    assert any(k.startswith("Fused[") for k in counts), counts
    # The fused pass runs the same kernels on tiles: bit for bit the unfused values.
    np.testing.assert_array_equal(traced(xt, c).numpy(), chain(xt, c).numpy())
    # With NaN and infinities the vectorized kernels take their scalar path for the
    # chunks that hold them, and chunks differ between a tile and a whole array: finite
    # results agree to a few ulp, special values exactly.
    x[[0, 10, 70_000, 150_001]] = [np.nan, np.inf, -np.inf, 0.0]
    xt = gt.constant(x)
    got, want = traced(xt, c).numpy(), chain(xt, c).numpy()
    assert np.array_equal(np.isnan(got), np.isnan(want)) and np.isnan(got[0])
    np.testing.assert_allclose(got, want, rtol={np.float32: 1e-6, np.float64: 1e-15}[dtype], atol=0)
    # Under a tape the chain runs op by op, as eagerly: the same gradient (to the same
    # few ulp of the forward values it reads).
    with gt.GradientTape() as t:
        t.watch(xt)
        y = gt.reduce_sum(traced(xt, c))
    with gt.GradientTape() as t2:
        t2.watch(xt)
        y2 = gt.reduce_sum(chain(xt, c))
    g, g2 = t.gradient(y, xt).numpy(), t2.gradient(y2, xt).numpy()
    assert np.array_equal(np.isnan(g), np.isnan(g2))
    tol = {np.float32: 1e-5, np.float64: 1e-13}[dtype]
    np.testing.assert_allclose(g, g2, rtol=tol, atol=tol)
    assert np.isnan(float(y)) and np.isnan(float(y2))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_compiled_chains_give_the_eager_derivatives_at_every_order(dtype):
    # Chains of common ops run as compiled tiled loops and, under a tape, are one node
    # whose rule is a tiled pass (first order) or the ops' composed rules (when a tape
    # records the backward pass): both must give what the ops give one by one.
    rng = np.random.default_rng(5)
    x = gt.constant(rng.standard_normal((64, 300)).astype(dtype))
    b = gt.constant(rng.standard_normal(300).astype(dtype))
    s = gt.constant(dtype(0.7))

    def chain(x, b, s):
        return gt.sigmoid(gt.nn.relu(x + b) * s - x) / s + gt.square(gt.cos(x)) * gt.exp(-x)

    def first(x, b, s):
        with gt.GradientTape() as t:
            t.watch([x, b, s])
            y = gt.reduce_sum(chain(x, b, s))
        return [y] + t.gradient(y, [x, b, s])

    def second(x, b, s):
        with gt.GradientTape() as outer:
            outer.watch([x, b])
            with gt.GradientTape() as inner:
                inner.watch(x)
                y = gt.reduce_sum(chain(x, b, s))
            g = inner.gradient(y, x)
            z = gt.reduce_sum(g * g)
        return outer.gradient(z, [x, b])

    tol = {np.float32: 2e-5, np.float64: 1e-12}[dtype]
    traced = gt.function(first)
    counts = dict(traced.get_concrete_function(x, b, s).graph.op_counts())
    assert any(k.startswith("Fused[") for k in counts), counts
    for got, want in zip(traced(x, b, s), first(x, b, s)):
        assert got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol, atol=tol)
    for got, want in zip(gt.function(second)(x, b, s), second(x, b, s)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol, atol=tol)
    # A tape around the call, and jacobians through it.
    small = x[:3, :4]
    bs = b[:4]
    traced_chain = gt.function(chain)
    with gt.GradientTape(persistent=True) as t:
        t.watch([small, bs])
        y1 = traced_chain(small, bs, s)
        y2 = chain(small, bs, s)
    for src in (small, bs):
        np.testing.assert_allclose(
            t.jacobian(y1, src).numpy(), t.jacobian(y2, src).numpy(), rtol=tol, atol=tol
        )
    # A known value: d/dx sum(exp(x) * x) = exp(x) (1 + x).
    xv = gt.constant(np.array([0.5, -1.0, 2.0], dtype))

    @gt.function
    def known(x):
        with gt.GradientTape() as t:
            t.watch(x)
            y = gt.reduce_sum(gt.exp(x) * x)
        return t.gradient(y, x)

    np.testing.assert_allclose(known(xv).numpy(), np.exp(xv.numpy()) * (1 + xv.numpy()), rtol=tol)


def test_a_function_called_inside_another_is_part_of_its_graph():
    inner = gt.function(lambda x: x * 2.0)

    @gt.function
    def outer(x):
        return inner(x) + 1.0

    assert float(outer(gt.constant(3.0))) == 7.0
    assert float(outer(gt.constant(4.0))) == 9.0
    assert outer.experimental_get_tracing_count() == 1


def test_methods_of_unhashable_objects_trace_once():
    class Model:
        __hash__ = None

        def __init__(self):
            self.w = gt.Variable(3.0)

        def __eq__(self, other):
            return self is other

        @gt.function
        def f(self, x):
            return self.w * x

    m = Model()
    assert float(m.f(gt.constant(2.0))) == 6.0
    assert float(m.f(gt.constant(5.0))) == 15.0
    assert m.f.experimental_get_tracing_count() == 1


def test_reduce_retracing_generalizes_on_the_second_shape(capsys):
    @gt.function(reduce_retracing=True)
    def g(x):
        print("Tracing")
        return x * 2

    np.testing.assert_array_equal(g(gt.constant([1, 2, 3])).numpy(), [2, 4, 6])
    np.testing.assert_array_equal(g(gt.constant([1, 2, 3, 4, 5])).numpy(), [2, 4, 6, 8, 10])
    np.testing.assert_array_equal(g(gt.constant([7])).numpy(), [14])
    assert g.experimental_get_tracing_count() == 2
    assert capsys.readouterr().out.count("Tracing") == 2


def test_variable_arguments_share_a_trace_by_dtype_and_shape():
    @gt.function
    def scale_and_bump(v, x):
        v.assign_add(gt.ones_like(x))
        return v * x

    a, b = gt.Variable([1.0, 2.0]), gt.Variable([10.0, 20.0])
    x = gt.constant([2.0, 3.0])
    np.testing.assert_array_equal(scale_and_bump(a, x).numpy(), [4.0, 9.0])
    np.testing.assert_array_equal(scale_and_bump(b, x).numpy(), [22.0, 63.0])
    assert scale_and_bump.experimental_get_tracing_count() == 1
    np.testing.assert_array_equal(a.numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(b.numpy(), [11.0, 21.0])
    # The gradient reaches the variable passed in.
    with gt.GradientTape() as t:
        y = gt.reduce_sum(scale_and_bump(b, x))
    np.testing.assert_array_equal(t.gradient(y, b).numpy(), [2.0, 3.0])
    # Another shape, or the same variable twice, is another trace.
    scale_and_bump(gt.Variable([1.0]), gt.constant([1.0]))
    assert scale_and_bump.experimental_get_tracing_count() == 2

    @gt.function
    def add(v, w):
        return v + w

    assert float(add(gt.Variable(1.0), gt.Variable(2.0))) == 3.0
    c = gt.Variable(5.0)
    assert float(add(c, c)) == 10.0
    assert add.experimental_get_tracing_count() == 2


def test_a_static_shape_read_in_a_trace_never_leaks_into_other_sizes():
    # `len(x)` gives the example's size (x.shape says None, as TF): the function is
    # traced again for each size, so no call computes with another call's size.
    @gt.function(input_signature=[gt.TensorSpec([None], gt.float32)])
    def mean(x):
        return gt.reduce_sum(x) / len(x)

    assert float(mean(gt.constant([1.0, 2.0]))) == 1.5
    assert float(mean(gt.constant([1.0, 2.0, 3.0, 6.0]))) == 3.0
    assert float(mean(gt.constant([4.0]))) == 4.0
    assert mean.experimental_get_tracing_count() == 1

    @gt.function
    def per_row(x):
        return gt.reshape(x, [len(x), -1])

    assert per_row(gt.zeros([2, 3, 2])).shape == [2, 6]
    assert per_row(gt.zeros([4, 2])).shape == [4, 2]


def test_a_concrete_function_that_read_a_static_shape_traces_other_sizes():
    @gt.function(input_signature=[gt.TensorSpec([None], gt.float32)])
    def mean(x):
        return gt.reduce_sum(x) / float(len(x))

    cf = mean.get_concrete_function()
    assert float(cf(gt.constant([1.0, 2.0, 3.0, 6.0]))) == 3.0
    assert float(cf(gt.constant([5.0]))) == 5.0
    assert mean.experimental_get_tracing_count() == 1

    @gt.function
    def head(x, k):
        return x[: len(x) // k]

    c2 = head.get_concrete_function(gt.TensorSpec([None], gt.float32), 2)
    assert c2(gt.constant([1.0, 2.0, 3.0, 4.0])).numpy().tolist() == [1.0, 2.0]
    # Called flat (the tensors only) and with the function's own arguments.
    assert c2(gt.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])).numpy().tolist() == [1.0, 2.0, 3.0]
    assert c2(gt.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]), 2).numpy().tolist() == [1.0, 2.0, 3.0, 4.0]


def test_a_variable_predicate_is_read_on_every_call():
    flag = gt.Variable(True)
    f = gt.function(lambda x: gt.cond(flag, lambda: x, lambda: -x))
    assert float(f(gt.constant(2.0))) == 2.0
    flag.assign(False)
    assert float(f(gt.constant(2.0))) == -2.0
    assert f.experimental_get_tracing_count() == 1


def test_an_error_when_the_graph_runs_names_the_traced_line():
    w = gt.constant([1.0, 2.0, 3.0])

    @gt.function(input_signature=[gt.TensorSpec([None], gt.float32)])
    def f(x):
        return x * w  # the line the error names

    assert f(gt.constant([1.0, 1.0, 1.0])).numpy().tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(gt.errors.InvalidArgumentError) as err:
        f(gt.constant([1.0, 2.0]))
    line = f.python_function.__code__.co_firstlineno + 2
    assert f"test_function.py:{line}" in str(err.value)


CALLS = 0


def test_a_function_assigning_a_global_keeps_writing_the_module():
    @gt.function
    def g(x):
        global CALLS
        CALLS += 1
        for _ in range(2):  # a statement AutoGraph would rewrite
            x = x * 2.0
        return x

    assert float(g(gt.constant(1.0))) == 4.0
    assert float(g(gt.constant(5.0))) == 20.0
    assert CALLS == 1  # a Python side effect: once, while tracing, in this module


def test_constant_folding_keeps_ops_on_a_watched_constant():
    # Regression (issue 14, TF's test_foldl_pure_function): a constant made inside the
    # function and watched by a tape there must not have its consumers folded away, or
    # the gradient is None when the graph runs.
    @gt.function
    def f():
        x = gt.zeros([3])
        with gt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            r = gt.reduce_sum(x[:2]) * 3.0
        return tape.gradient(r, x), tape.jacobian(r, x)

    for _ in range(2):
        g, j = f()
        assert g.numpy().tolist() == [3.0, 3.0, 0.0] and j.numpy().tolist() == [3.0, 3.0, 0.0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_chain_summed_whole_is_one_pass_with_the_eager_values_and_derivatives(dtype):
    # `reduce_sum(chain)` fuses into one node (the chain's result never stored; the
    # backward pass spreads the scalar's gradient in the tiles). Values: the sum is
    # accumulated in float64 per tile, so it may differ from the engine's reduce_sum by
    # a few float32 ulp of the total; gradients use the ops' own formulas.
    rng = np.random.default_rng(11)
    xn = rng.standard_normal(100_003).astype(dtype)

    def loss(x):
        return gt.reduce_sum(gt.exp(gt.sin(x) * x) + x)

    def value_and_grad(x):
        with gt.GradientTape() as t:
            t.watch(x)
            y = loss(x)
        return y, t.gradient(y, x)

    traced = gt.function(value_and_grad)
    x = gt.constant(xn)
    counts = dict(traced.get_concrete_function(x).graph.op_counts())
    assert "Fused[Unary,Binary,Unary,Binary,Sum]" in counts and "Sum" not in counts, counts
    tol = {np.float32: 1e-5, np.float64: 1e-12}[dtype]
    (y, g), (y2, g2) = traced(x), value_and_grad(x)
    want = np.sum(np.exp(np.sin(xn.astype(np.float64)) * xn) + xn)
    np.testing.assert_allclose(float(y), want, rtol=tol)
    np.testing.assert_allclose(float(y), float(y2), rtol=tol)
    np.testing.assert_allclose(g.numpy(), g2.numpy(), rtol=tol, atol=tol)
    # Known derivative: exp(sin(x) x) (cos(x) x + sin(x)) + 1.
    x64 = xn.astype(np.float64)
    np.testing.assert_allclose(
        g.numpy(), np.exp(np.sin(x64) * x64) * (np.cos(x64) * x64 + np.sin(x64)) + 1.0, rtol=tol * 10, atol=tol
    )

    # NaN and infinities: the sum is NaN, the gradient NaN exactly where eager's is.
    bad = xn.copy()
    bad[[0, 5, 99_999]] = [np.nan, np.inf, -np.inf]
    xb = gt.constant(bad)
    (y, g), (y2, g2) = traced(xb), value_and_grad(xb)
    assert np.isnan(float(y)) and np.isnan(float(y2))
    assert np.array_equal(np.isnan(g.numpy()), np.isnan(g2.numpy()))
    ok = ~np.isnan(g2.numpy())
    np.testing.assert_allclose(g.numpy()[ok], g2.numpy()[ok], rtol=tol, atol=tol)

    # An empty input: 0 and an empty gradient.
    y, g = traced(gt.constant(np.zeros(0, dtype)))
    assert float(y) == 0.0 and g.shape == (0,)

    # Tapes around the call (first and second order, persistent, a jacobian) and a
    # forward accumulator: what the ops give one by one.
    small = gt.constant(xn[:7])
    traced_loss = gt.function(loss)
    with gt.GradientTape(persistent=True) as outer:
        outer.watch(small)
        with gt.GradientTape() as inner:
            inner.watch(small)
            y1 = traced_loss(small)
        d1 = inner.gradient(y1, small)
        s1 = gt.reduce_sum(d1 * d1)
    with gt.GradientTape(persistent=True) as outer2:
        outer2.watch(small)
        with gt.GradientTape() as inner2:
            inner2.watch(small)
            y2 = loss(small)
        d2 = inner2.gradient(y2, small)
        s2 = gt.reduce_sum(d2 * d2)
    np.testing.assert_allclose(d1.numpy(), d2.numpy(), rtol=tol, atol=tol)
    pairs = [(outer.gradient(s1, small), outer2.gradient(s2, small))]
    pairs.append((outer.jacobian(d1, small), outer2.jacobian(d2, small)))
    for got, want in pairs:
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol, atol=tol)
    tangent = gt.constant(np.linspace(-1.0, 1.0, 7).astype(dtype))
    with gt.autodiff.ForwardAccumulator(small, tangent) as acc:
        yf = traced_loss(small)
    with gt.autodiff.ForwardAccumulator(small, tangent) as acc2:
        ye = loss(small)
    np.testing.assert_allclose(float(acc.jvp(yf)), float(acc2.jvp(ye)), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_summed_chain_under_a_tape_has_its_gradient_from_the_forward_pass(dtype):
    # Under a tape (the thread's only one) a fused `reduce_sum(chain)` computes its
    # gradient for an output gradient of one in the pass that sums it (each element's
    # sin and exp once); the backward pass only scales that. The sum is the one computed
    # with no tape, bit for bit (the same tiles, the same order of additions).
    rng = np.random.default_rng(13)
    # Several forward tiles (16 Ki elements each) and a ragged last one.
    xn = (rng.standard_normal(3 * 16384 + 4099) * 2).astype(dtype)
    x, c = gt.constant(xn), gt.constant(dtype(0.75))

    def loss(x, c):
        return gt.reduce_sum(gt.exp(gt.sin(x) * x) * c + x)

    @gt.function
    def grads(x, c, scale):
        with gt.GradientTape(persistent=True) as t:
            t.watch(x)
            y = loss(x, c)
            z = y * scale
        # Asked twice (persistent), scaled by another seed, and for an unwatched input.
        return y, t.gradient(y, x), t.gradient(y, x), t.gradient(z, x), t.gradient(y, c)

    @gt.function
    def both(x, c):
        with gt.GradientTape() as t:
            t.watch([x, c])
            y = loss(x, c)
        return [y] + t.gradient(y, [x, c])

    counts = dict(grads.get_concrete_function(x, c, gt.constant(dtype(2.5))).graph.op_counts())
    assert "Fused[Unary,Binary,Unary,Binary,Binary,Sum]" in counts and "Sum" not in counts, counts
    y, g1, g2, gz, gc = grads(x, c, gt.constant(dtype(2.5)))
    assert gc is None
    assert float(y) == float(gt.function(loss)(x, c))
    x64 = xn.astype(np.float64)
    e = np.exp(np.sin(x64) * x64)
    want = e * 0.75 * (np.cos(x64) * x64 + np.sin(x64)) + 1.0
    tol = {np.float32: 1e-5, np.float64: 1e-12}[dtype]
    np.testing.assert_allclose(float(y), np.sum(e * 0.75 + x64), rtol=tol)
    np.testing.assert_allclose(g1.numpy(), want, rtol=tol * 10, atol=tol)
    np.testing.assert_array_equal(g1.numpy(), g2.numpy())
    np.testing.assert_allclose(gz.numpy(), 2.5 * g1.numpy(), rtol=tol, atol=0)
    # The op by op (eager) gradient.
    with gt.GradientTape() as t:
        t.watch(x)
        ye = loss(x, c)
    np.testing.assert_allclose(g1.numpy(), t.gradient(ye, x).numpy(), rtol=tol, atol=tol)
    # Both inputs watched: the broadcast scalar's gradient summed down by the tape.
    yb, gx, gcb = both(x, c)
    assert float(yb) == float(y)
    np.testing.assert_array_equal(gx.numpy(), g1.numpy())
    assert gcb.shape == ()
    np.testing.assert_allclose(float(gcb), np.sum(e), rtol=tol)


# --- a traced cond's outputs depend on every input its branches read (TF's If op) -------


@gt.function
def _cond_unused_in_false_branch(k, y):
    if k > 1:
        ret = 3.0 * y
    else:
        ret = 0.0
    return ret


@pytest.mark.parametrize("first", [5, 0])
def test_traced_cond_branch_without_an_input_gives_zero_not_none(first):
    # TF 2.21: the gradient and the tangent through the branch that does not read y
    # are 0.0 (tf.function's cond is one op with y as an input), not None.
    f = gt.function(_cond_unused_in_false_branch.python_function)
    for k, want in [(first, 3.0 if first > 1 else 0.0), (5 - first, 0.0 if first > 1 else 3.0)]:
        y = gt.constant(1.0)
        with gt.GradientTape() as t:
            t.watch(y)
            r = f(gt.constant(k), y)
        assert float(t.gradient(r, y)) == want
        with gt.autodiff.ForwardAccumulator(y, gt.constant(1.0)) as acc:
            r = f(gt.constant(k), y)
        assert float(acc.jvp(r)) == want
    assert f.experimental_get_tracing_count() == 1


@gt.function
def _grad_in_function_cond(k, y):
    with gt.GradientTape() as t:
        t.watch(y)
        if k > 1:
            ret = 3.0 * y
        else:
            ret = 0.0
    return t.gradient(ret, y)


@gt.function
def _jvp_in_function_cond(k, y):
    with gt.autodiff.ForwardAccumulator(y, 1.0) as acc:
        if k > 1:
            ret = 3.0 * y
        else:
            ret = 0.0
    return acc.jvp(ret)


@pytest.mark.parametrize("fn", [_grad_in_function_cond, _jvp_in_function_cond], ids=["tape", "accumulator"])
def test_tape_and_accumulator_inside_a_function_see_the_cond_connected(fn):
    # Traced first with the branch that does not read y (TF 2.21: 0.0, then 3.0); it
    # gave None, then an internal error.
    f = gt.function(fn.python_function)
    assert float(f(gt.constant(0), gt.constant(1.0))) == 0.0
    assert float(f(gt.constant(5), gt.constant(1.0))) == 3.0
    assert float(f(gt.constant(0), gt.constant(2.0))) == 0.0


@gt.custom_gradient
def clip_grad(x):
    def grad(dy):
        return gt.clip_by_value(dy, -1.0, 1.0)

    return x * 1.0, grad


def test_a_custom_gradient_function_runs_inside_a_traced_tape():
    # The grad_fn's ops run while the trace computes the gradient's example value: they
    # are not nodes of the graph (the gradient is one node, computed again each run).
    def f(x):
        with gt.GradientTape() as tape:
            tape.watch(x)
            loss = gt.reduce_sum(clip_grad(x) * gt.constant([3.0, 0.5]))
        return tape.gradient(loss, x)

    x = gt.constant([1.0, 2.0])
    traced = gt.function(f)
    assert f(x).numpy().tolist() == [1.0, 0.5]
    assert traced(x).numpy().tolist() == [1.0, 0.5]
    assert traced(gt.constant([4.0, 5.0])).numpy().tolist() == [1.0, 0.5]
    assert traced.experimental_get_tracing_count() == 1


def test_a_custom_gradient_under_an_accumulator_and_a_jacobian_in_a_trace():
    def jvp(x):
        with gt.autodiff.ForwardAccumulator(x, gt.constant([3.0, 0.5])) as acc:
            y = clip_grad(x) * 2.0
        return acc.jvp(y)

    def jac(x):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = clip_grad(x) * x
        return tape.jacobian(y, x)

    x = gt.constant([1.0, 2.0])
    # The JVP goes through grad_fn (TF's double-VJP rule: the derivative of grad_fn at a
    # zero upstream gradient, where the clip passes it), times 2.
    assert jvp(x).numpy().tolist() == [6.0, 1.0]
    assert gt.function(jvp)(x).numpy().tolist() == [6.0, 1.0]
    assert jac(x).numpy().tolist() == [[2.0, 0.0], [0.0, 3.0]]
    assert gt.function(jac)(x).numpy().tolist() == [[2.0, 0.0], [0.0, 3.0]]


def test_parameters_past_the_input_signature_keep_their_defaults():
    @gt.function(input_signature=[gt.TensorSpec(None)])
    def fn(a, b=1):
        return a + b

    np.testing.assert_array_equal(fn(gt.constant(2.0)).numpy(), np.float32(3.0))
    np.testing.assert_array_equal(fn(a=gt.constant([1.0, 2.0])).numpy(), np.array([2.0, 3.0], np.float32))
    with pytest.raises(TypeError, match=r"fn\(a, b\) specifies 1 positional arguments, but got 2"):
        fn(gt.constant(2.0), 3)
    assert fn.get_concrete_function().structured_input_signature == ((gt.TensorSpec(None, name="a"), 1), {})
    assert fn.experimental_get_tracing_count() == 1


def test_pretty_printed_signatures_and_the_list_of_traces():
    @gt.function
    def f(x, scale=2):
        return {"y": x * scale, "n": gt.shape(x)}

    c = f.get_concrete_function(gt.TensorSpec([None, 3], gt.float32))
    f(gt.constant([1, 2]), scale=3)
    spec = "TensorSpec(shape=(None, 3), dtype=gt.float32, name=None)"
    out = "Dict[['n', TensorSpec(shape=(2,), dtype=gt.int32, name=None)], ['y', " + spec + "]]"
    assert c.pretty_printed_signature(verbose=False) == f"(x: {spec}, scale: Literal[2]) -> {out}"
    assert c.pretty_printed_signature() == (
        "Input Parameters:\n"
        f"  x (POSITIONAL_OR_KEYWORD): {spec}\n"
        "  scale (POSITIONAL_OR_KEYWORD): Literal[2]\n"
        "Output Type:\n"
        f"  {out}\n"
        "Captures:\n"
        "  None"
    )
    assert str(c) == "ConcreteFunction " + c.pretty_printed_signature()
    assert repr(c).startswith(f"<ConcreteFunction (x: {spec}, scale: Literal[2]) -> ")
    assert len(f._list_all_concrete_functions()) == 2
    second = "  scale (POSITIONAL_OR_KEYWORD): Literal[3]"
    assert second in f.pretty_printed_concrete_signatures()
    assert f.pretty_printed_concrete_signatures(verbose=False).count("\n") == 1
