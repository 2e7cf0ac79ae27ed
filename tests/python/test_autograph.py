"""AutoGraph (issue 13): the source rewrite of ``if`` / ``while`` / ``for`` in a
``gt.function``, with ``global`` and ``nonlocal`` names, names bound only inside a
statement, and the error without it. TF 2.21's ``tf.function`` gave the expected values
(noted per test)."""

import numpy as np
import pytest

import gradtape as gt

TRACES = 0
SCALE = 2.0
ACC = None
SIGN = None


def test_global_counter_with_converted_if_counts_each_trace_in_the_module():
    # TF: `global n; n += 1` before an `if x > 0` on a tensor: n == 1 after two calls
    # of one signature (the trace ran once), and the `if` became a cond.
    @gt.function
    def f(x):
        global TRACES
        TRACES += 1
        if x > 0:
            y = x
        else:
            y = -x
        return y

    before = TRACES
    assert int(f(gt.constant(3))) == 3
    assert int(f(gt.constant(-2))) == 2
    assert TRACES == before + 1
    assert f.experimental_get_tracing_count() == 1


def test_global_declared_inside_a_branch_still_converts():
    global TRACES

    @gt.function
    def f(x):
        if x > 0:
            global TRACES
            TRACES += 1
            y = x * 2.0
        else:
            y = x
        return y

    before = TRACES
    assert float(f(gt.constant(3.0))) == 6.0
    assert float(f(gt.constant(-3.0))) == -3.0
    # Both branches were traced once: the Python side effect ran once.
    assert TRACES == before + 1
    # The branch made the global a traced value (the cond's output), which is out of
    # scope once the trace ended (as in TF): a Python int again for the other tests.
    TRACES = before + 1


def test_global_read_sees_the_value_at_trace_time_and_later_assignments_retrace_nothing():
    global SCALE

    @gt.function
    def f(x):
        if x > 0:
            y = x * SCALE
        else:
            y = x
        return y

    SCALE = 2.0
    assert float(f(gt.constant(3.0))) == 6.0
    SCALE = 10.0  # a Python value captured while tracing, as TF: the graph keeps 2.0
    assert float(f(gt.constant(3.0))) == 6.0
    assert float(f(gt.constant(3))) == 30.0  # a new trace reads the new value
    SCALE = 2.0


def test_global_tensor_carried_through_a_graph_while_loop():
    # TF: `global g; while x > 0: x -= 1; g = g + 2` with g = 0, x = 3 gives x = 0 and the
    # loop's result in g (6 inside the function).
    global ACC

    @gt.function
    def f(x):
        global ACC
        while x > 0:
            x -= 1
            ACC = ACC + 2
        return x, ACC

    ACC = gt.constant(0)
    x, acc = f(gt.constant(3))
    assert int(x) == 0 and int(acc) == 6
    ACC = gt.constant(100)  # captured by value at trace time (TF too)
    x, acc = f(gt.constant(5))
    assert int(x) == 0 and int(acc) == 10
    ACC = None


def test_global_assigned_in_both_branches_of_a_graph_cond():
    # TF: `global k; if x > 0: k = k * 10 else: k = k - 1; return x + k` with k = 1.0
    # gives 11.0 for x = 1.0.
    global SIGN

    @gt.function
    def f(x):
        global SIGN
        if x > 0:
            SIGN = gt.constant(1.0)
        else:
            SIGN = gt.constant(-1.0)
        return x * SIGN

    assert float(f(gt.constant(4.0))) == 4.0
    assert float(f(gt.constant(-4.0))) == 4.0
    assert f.experimental_get_tracing_count() == 1
    SIGN = None


def test_global_in_a_for_over_gt_range():
    # TF: m = 5; `for i in tf.range(x): m = m + i` with x = 4 gives 11.
    global ACC

    @gt.function
    def f(n):
        global ACC
        for i in gt.range(n):
            ACC = ACC + i
        return ACC

    ACC = gt.constant(5)
    assert int(f(gt.constant(4))) == 11
    ACC = gt.constant(5)
    assert int(f(gt.constant(0))) == 5
    ACC = None


def test_nonlocal_python_counter_and_tensor_loop_variable():
    # TF: `nonlocal cnt; cnt += 1` runs once per trace and writes the enclosing
    # function's variable; a nonlocal tensor doubled in a while loop gives 8 from 1.
    def make():
        cnt = 0
        v = gt.constant(1)

        @gt.function
        def inner(x):
            nonlocal cnt, v
            cnt += 1
            while x > 0:
                x -= 1
                v = v * 2
            return x, v

        return inner, lambda: cnt

    inner, count = make()
    x, v = inner(gt.constant(3))
    assert (int(x), int(v)) == (0, 8)
    x, v = inner(gt.constant(1))
    assert (int(x), int(v)) == (0, 2)
    assert count() == 1


def test_nonlocal_assigned_in_a_python_loop_and_a_graph_cond():
    def make():
        hits = 0

        @gt.function
        def f(x):
            nonlocal hits
            for _ in range(3):  # a Python loop: unrolled, three side effects per trace
                hits += 1
            if gt.reduce_sum(x) > 0:
                y = x + 1.0
            else:
                y = x - 1.0
            return y

        return f, lambda: hits

    f, hits = make()
    np.testing.assert_allclose(f(gt.constant([1.0, 2.0])).numpy(), [2.0, 3.0])
    np.testing.assert_allclose(f(gt.constant([-1.0, -2.0])).numpy(), [-2.0, -3.0])
    assert hits() == 3


def test_closure_values_are_read_live_not_copied_at_conversion():
    def make():
        k = 2.0

        @gt.function
        def f(x):
            if x > 0:
                y = x * k
            else:
                y = x
            return y

        def set_k(v):
            nonlocal k
            k = v

        return f, set_k

    f, set_k = make()
    assert float(f(gt.constant(1.0))) == 2.0
    set_k(5.0)
    # A new trace (new dtype) reads the closure's current value.
    assert float(f(gt.constant(1.0, dtype=gt.float64))) == 5.0


def test_names_bound_only_inside_a_branch_need_no_else():
    # TF: a name assigned in one branch and never read after the `if` is local to it.
    @gt.function
    def f(x):
        if x > 0:
            tmp = x * 2.0
            y = tmp + 1.0
        else:
            y = -x
        return y

    assert float(f(gt.constant(3.0))) == 7.0
    assert float(f(gt.constant(-3.0))) == 3.0


def test_a_name_read_after_the_if_but_bound_in_one_branch_is_an_error():
    @gt.function
    def f(x):
        if x > 0:
            y = x
        return y  # noqa: F821 - the point of the test

    with pytest.raises(ValueError, match="'y' must also be initialized in the else branch"):
        f(gt.constant(1.0))


def test_loop_temporaries_are_not_loop_variables():
    # TF: names bound in the body before any read, and not read after the loop, are
    # local to each iteration (no value needed on entry; their dtype may differ from
    # anything outside).
    @gt.function
    def f(n):
        i = gt.constant(0)
        s = gt.constant(0.0)
        while i < n:
            sq = gt.cast(i * i, gt.float32)
            s += sq
            i += 1
        return s

    assert float(f(gt.constant(4))) == 14.0

    @gt.function
    def g(xs):
        total = gt.constant(0.0)
        for x in xs:
            positive = x > 0
            if positive:
                total += x
        return total

    assert float(g(gt.constant([1.0, -2.0, 3.0]))) == 4.0


def test_a_loop_variable_with_no_value_on_entry_is_an_error_naming_it():
    @gt.function
    def f(n):
        i = gt.constant(0)
        while i < n:
            if i > 0:
                last = last + i  # noqa: F821 - read before any assignment
            else:
                last = i
            i += 1
        return last

    with pytest.raises(ValueError, match="'last' must be defined before the loop"):
        f(gt.constant(3))


def test_nested_loops_break_continue_elif_and_gradients():
    @gt.function
    def f(x, n):
        acc = gt.zeros_like(x)
        for i in gt.range(n):
            if i == 1:
                continue
            elif i >= 4:
                break
            j = gt.constant(0)
            while j < i:
                acc = acc + x * gt.cast(j + 1, gt.float32)
                j += 1
        return acc

    # i = 0: nothing; i = 1 skipped; i = 2: x*(1+2); i = 3: x*(1+2+3); i >= 4 stops.
    x = gt.constant(2.0)
    for n, k in ((0, 0.0), (3, 3.0), (4, 9.0), (10, 9.0)):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = f(x, gt.constant(n))
        assert float(y) == 2.0 * k
        assert float(tape.gradient(y, x) or gt.constant(0.0)) == k
    assert f.experimental_get_tracing_count() == 1


def test_for_over_a_matrix_and_break_on_a_tensor():
    @gt.function
    def first_row_over(m, limit):
        out = gt.zeros([2])
        for row in m:
            if gt.reduce_sum(row) > limit:
                out = row
                break
        return out

    m = gt.constant([[1.0, 1.0], [2.0, 3.0], [9.0, 9.0]])
    np.testing.assert_allclose(first_row_over(m, gt.constant(4.0)).numpy(), [2.0, 3.0])
    np.testing.assert_allclose(first_row_over(m, gt.constant(100.0)).numpy(), [0.0, 0.0])


def test_a_method_using_super_still_converts():
    class Base:
        def scale(self):
            return 3.0

    class Child(Base):
        @gt.function
        def __call__(self, x):
            if x > 0:
                y = x * super().scale()
            else:
                y = x
            return y

    c = Child()
    assert float(c(gt.constant(2.0))) == 6.0
    assert float(c(gt.constant(-2.0))) == -2.0


def test_without_autograph_control_flow_on_tensors_names_cond_and_while_loop():
    @gt.function(autograph=False)
    def w(x):
        while x > 0:
            x -= 1
        return x

    with pytest.raises(gt.errors.OperatorNotAllowedInGraphError, match="gt.cond or gt.while_loop"):
        w(gt.constant(3))

    @gt.function(autograph=False)
    def g(x):
        global TRACES
        TRACES += 1
        if x > 0:
            return x
        return -x

    with pytest.raises(gt.errors.OperatorNotAllowedInGraphError, match="gt.cond"):
        g(gt.constant(1.0))
    # The same function converted works.
    assert float(gt.function(g.python_function)(gt.constant(-1.0))) == 1.0


def test_python_conditions_still_run_as_python():
    @gt.function
    def f(x, flag):
        global TRACES
        if flag:
            TRACES += 1
            y = x + 1.0
        else:
            y = x - 1.0
        return y

    before = TRACES
    assert float(f(gt.constant(1.0), True)) == 2.0
    assert float(f(gt.constant(1.0), False)) == 0.0
    assert TRACES == before + 1


def test_an_if_that_returns_followed_by_more_statements_converts():
    # TF's return converter: the statements after `if c: return a` are the else branch.
    @gt.function
    def f(x):
        if x > 1.0:
            return x
        elif x > 0.0:
            return x * 10.0
        y = -x
        return y + 1.0

    assert float(f(gt.constant(2.0))) == 2.0
    assert float(f(gt.constant(0.5))) == 5.0
    assert float(f(gt.constant(-3.0))) == 4.0
    assert f.experimental_get_tracing_count() == 1


def test_comprehension_and_lambda_names_inside_a_loop_are_not_loop_variables():
    @gt.function
    def f(x, n):
        i = gt.constant(0)
        while i < n:
            parts = [x * k for k in (1.0, 2.0)]
            scale = lambda v: v * 0.5  # noqa: E731
            x = scale(parts[0] + parts[1])
            i += 1
        return x

    # Each step: x -> (x + 2x) / 2 = 1.5 x.
    assert float(f(gt.constant(2.0), gt.constant(2))) == pytest.approx(4.5)


def test_iterating_tensors_eagerly_and_the_error_for_a_symbolic_one():
    # TF: eager tensors iterate their rows; a scalar cannot be iterated; inside a
    # tf.function without AutoGraph, iterating a symbolic tensor raises
    # OperatorNotAllowedInGraphError.
    rows = list(gt.constant([[1.0, 2.0], [3.0, 4.0]]))
    assert [r.numpy().tolist() for r in rows] == [[1.0, 2.0], [3.0, 4.0]]
    a, b = gt.constant([5, 6])
    assert (int(a), int(b)) == (5, 6)
    assert [float(v) for v in gt.Variable([1.5, 2.5])] == [1.5, 2.5]
    assert list(gt.zeros([0, 3])) == []
    with pytest.raises(TypeError, match="scalar"):
        iter(gt.constant(1.0))

    @gt.function(autograph=False)
    def f(xs):
        t = gt.constant(0.0)
        for x in xs:
            t += x
        return t

    with pytest.raises(gt.errors.OperatorNotAllowedInGraphError, match="gt.while_loop"):
        f(gt.constant([1.0, 2.0]))

    @gt.function(autograph=False)
    def g(n):
        t = gt.constant(0)
        for i in gt.range(n):
            t += i
        return t

    with pytest.raises(gt.errors.OperatorNotAllowedInGraphError, match="gt.while_loop"):
        g(gt.constant(3))
    # Converted, both work.
    assert float(gt.function(f.python_function)(gt.constant([1.0, 2.0]))) == 3.0
    assert int(gt.function(g.python_function)(gt.constant(3))) == 3


def test_for_over_python_range_of_a_tensor_is_a_graph_loop():
    # TF's AutoGraph turns `range(n)` of a tensor into `tf.range(n)`.
    @gt.function
    def f(n, x):
        for i in range(n):
            x = x * 2.0 + gt.cast(i, gt.float32)
        for _ in range(2):  # a Python range stays Python (unrolled)
            x = x + 1.0
        return x

    # n = 3 from 1: ((1*2+0)*2+1)*2+2 = 12, then +2.
    assert float(f(gt.constant(3), gt.constant(1.0))) == 14.0
    assert float(f(gt.constant(0), gt.constant(1.0))) == 3.0
    assert f.experimental_get_tracing_count() == 1

    def shadowed(n):
        return [n]

    @gt.function
    def g(x):
        range = shadowed  # noqa: A001 - a user's own `range` is called as written
        for k in range(x):
            x = x + k
        return x

    assert float(g(gt.constant(2.0))) == 4.0


def test_private_attributes_of_a_converted_method():
    class Counter:
        def __init__(self):
            self.__scale = 3.0

        @gt.function
        def __call__(self, x):
            if x > 0:
                y = x * self.__scale
            else:
                y = -x
            return y

    c = Counter()
    assert float(c(gt.constant(2.0))) == 6.0
    assert float(c(gt.constant(-2.0))) == 2.0


def test_a_closure_called_in_a_converted_loop_sees_the_names_the_loop_assigned():
    # TF's testCondWhile_5 shape: the inner function reads `alive` / `count`, which the
    # loop assigns; in TF the loop counts to 4 (alive turns False once i reaches 3).
    def run():
        alive = gt.constant(True)
        count = gt.constant(0)

        def body(i):
            return gt.cond(alive, lambda: [gt.less(i, 3), gt.add(count, 1)], lambda: [alive, count])

        for i in range(10):
            alive, count = body(i)
        return count

    assert int(run()) == 4
    assert int(gt.function(run)()) == 4

    # The same in a graph loop on a tensor, and in both branches of a graph cond.
    @gt.function
    def loop(n):
        s = gt.constant(0)

        def add(k):
            return s + k

        i = gt.constant(0)
        while i < n:
            s = add(i)
            i += 1
        return s

    assert int(loop(gt.constant(4))) == 0 + 1 + 2 + 3

    @gt.function
    def branches(x):
        y = x

        def twice():
            return y * 2.0

        if x > 0:
            y = twice()
        else:
            y = twice() + 1.0
        return y, twice()

    assert [float(t) for t in branches(gt.constant(3.0))] == [6.0, 12.0]
    assert [float(t) for t in branches(gt.constant(-3.0))] == [-5.0, -10.0]


def _sign_of(x):
    # Control flow on a tensor in a function a gt.function calls (not one it defines).
    if x > 0:
        s = 1.0
    else:
        s = -1.0
    return s


def _scaled_sign(x, scale=SCALE):
    return _sign_of(x) * scale


def test_functions_called_from_converted_code_are_converted_too():
    # TF's AutoGraph converts the user's functions a converted function calls
    # (recursively), not gradtape's own or the standard library's.
    @gt.function
    def f(x):
        return _scaled_sign(x) + abs(-1.0)

    assert float(f(gt.constant(3.0))) == 3.0
    assert float(f(gt.constant(-3.0))) == -1.0
    assert f.experimental_get_tracing_count() == 1

    # Without AutoGraph nothing is converted: the `if` on a tensor is TF's error.
    g = gt.function(lambda x: _scaled_sign(x), autograph=False)
    with pytest.raises(gt.errors.OperatorNotAllowedInGraphError):
        g(gt.constant(3.0))

    # gt.map_fn converts its fn under AutoGraph, as TF's map_fn does.
    @gt.function
    def signs(xs):
        return gt.map_fn(_sign_of, xs)

    np.testing.assert_array_equal(signs(gt.constant([2.0, -1.0, 0.0])).numpy(), [1.0, -1.0, -1.0])


def test_a_converted_function_keeps_defaults_that_name_enclosing_variables():
    results = []
    for k in (1.0, 2.0):

        @gt.function
        def f(x, k=k):
            return gt.add(x, k)

        results.append(float(f(gt.constant(1.0))))
    assert results == [2.0, 3.0]
