"""Semantics of ``gt.GradientTape``: watching, structures, recording control, nesting,
variables, and the release of a tape's memory."""

import collections
import gc

import numpy as np
import pytest

import gradtape as gt

P = collections.namedtuple("P", ["a", "b"])


def _val(t):
    return None if t is None else t.numpy().tolist()


# --- watch and nested structures ------------------------------------------------------


def test_watch_nested_structure_and_sources_in_same_structure():
    a, b, c = gt.constant(1.0), gt.constant(2.0), gt.constant([1.0, 2.0])
    with gt.GradientTape(persistent=True) as t:
        t.watch(P(a, {"k": [b], "j": (c,)}))
        y = a * b * 3.0 + gt.reduce_sum(c * c)
    g = t.gradient(y, P(a, {"k": [b], "j": (c,)}))
    assert type(g) is P
    assert isinstance(g.b, dict) and set(g.b) == {"k", "j"}
    assert isinstance(g.b["k"], list) and isinstance(g.b["j"], tuple)
    assert _val(g.a) == 6.0
    assert _val(g.b["k"][0]) == 3.0
    assert _val(g.b["j"][0]) == [2.0, 4.0]

    gl = t.gradient(y, [a, b])
    assert type(gl) is list and [_val(x) for x in gl] == [6.0, 3.0]
    gt_ = t.gradient(y, (b, a))
    assert type(gt_) is tuple and [_val(x) for x in gt_] == [3.0, 6.0]
    gd = t.gradient(y, {"z": a, "a": b})
    assert list(gd) == ["z", "a"]  # the caller's key order is kept
    assert _val(gd["z"]) == 6.0 and _val(gd["a"]) == 3.0


def test_watch_list_of_variables():
    v = gt.Variable(2.0)
    w = gt.Variable(3.0)
    with gt.GradientTape(watch_accessed_variables=False) as t:
        t.watch([v, w])
        y = v * w
    assert [_val(g) for g in t.gradient(y, [v, w])] == [3.0, 2.0]


def test_dict_and_list_targets_are_summed():
    x = gt.constant(2.0)
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x  # dy = 4
        z = x * x * x  # dz = 12
    assert _val(t.gradient({"u": y, "w": [z]}, x)) == 16.0
    assert _val(t.gradient([y, z], x)) == 16.0
    assert _val(t.gradient((y,), x)) == 4.0


def test_output_gradients():
    x = gt.constant([1.0, 2.0, 3.0])
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
        z = 3.0 * x
    g = t.gradient(y, x, output_gradients=gt.constant([1.0, 10.0, 100.0]))
    assert _val(g) == [2.0, 40.0, 600.0]
    # one seed per target, in the target's structure
    g = t.gradient(
        {"y": y, "z": z},
        x,
        output_gradients={"y": gt.constant([1.0, 0.0, 0.0]), "z": gt.constant([0.0, 1.0, 2.0])},
    )
    assert _val(g) == [2.0, 3.0, 6.0]
    g = t.gradient([y, z], x, output_gradients=[gt.constant([0.0, 0.0, 1.0]), None])
    assert _val(g) == [3.0, 3.0, 9.0]


def test_output_gradients_wrong_count():
    x = gt.constant(1.0)
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
    with pytest.raises(ValueError):
        t.gradient([y, y], x, output_gradients=[gt.constant(1.0)])


@pytest.mark.parametrize(
    "how", ["zero", gt.UnconnectedGradients.ZERO, "none", gt.UnconnectedGradients.NONE]
)
def test_unconnected_gradients(how):
    x = gt.constant([1.0, 2.0])
    u = gt.constant([[1.0, 2.0], [3.0, 4.0]], dtype=gt.float64)
    v = gt.Variable([1.0, 2.0, 3.0])
    with gt.GradientTape() as t:
        t.watch([x, u])
        y = gt.reduce_sum(x * 3.0)
    gx, gu, gv = t.gradient(y, [x, u, v], unconnected_gradients=how)
    assert _val(gx) == [3.0, 3.0]
    if how in ("zero", gt.UnconnectedGradients.ZERO):
        assert gu.shape == (2, 2) and gu.dtype == gt.float64 and _val(gu) == [[0, 0], [0, 0]]
        assert gv.shape == (3,) and gv.dtype == gt.float32 and _val(gv) == [0, 0, 0]
    else:
        assert gu is None and gv is None


def test_unconnected_gradients_enum_values():
    assert gt.UnconnectedGradients.NONE.value == "none"
    assert gt.UnconnectedGradients.ZERO.value == "zero"


def test_unconnected_gradients_bad_value():
    x = gt.constant(1.0)
    with gt.GradientTape() as t:
        t.watch(x)
        y = x * x
    with pytest.raises(ValueError):
        t.gradient(y, x, unconnected_gradients="zeros")


def test_integer_source_warns_and_gives_none():
    i = gt.constant([1, 2, 3])
    with gt.GradientTape() as t:
        with pytest.warns(UserWarning, match="dtype"):
            t.watch(i)
        y = i * i
    assert t.gradient(y, i) is None


def test_integer_variable_watch_warns():
    v = gt.Variable(3)
    with gt.GradientTape(watch_accessed_variables=False) as t:
        with pytest.warns(UserWarning):
            t.watch(v)
        y = v * v
    assert t.gradient(y, v) is None


def test_float64_and_complex_sources():
    x = gt.constant(2.0, dtype=gt.float64)
    with gt.GradientTape() as t:
        t.watch(x)
        y = x * x * x
    g = t.gradient(y, x)
    assert g.dtype == gt.float64 and _val(g) == 12.0


# --- non-persistent and persistent use ------------------------------------------------


def test_non_persistent_second_call_raises():
    x = gt.constant(3.0)
    with gt.GradientTape() as t:
        t.watch(x)
        y = x * x
    assert _val(t.gradient(y, x)) == 6.0
    with pytest.raises(RuntimeError):
        t.gradient(y, x)


def test_gradient_inside_own_context_stops_recording():
    x = gt.constant(3.0)
    with gt.GradientTape() as t:
        t.watch(x)
        y = x * x
        n = t._num_nodes
        assert _val(t.gradient(y, x)) == 6.0
        z = y * x  # no longer recorded on t
        assert t._num_nodes == 0
    assert _val(z) == 27.0
    with pytest.raises(RuntimeError):
        t.gradient(z, x)
    assert n == 1


def test_persistent_gradient_inside_context():
    x = gt.constant(3.0)
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
        assert _val(t.gradient(y, x)) == 6.0
        z = y * x  # still recorded
    assert _val(t.gradient(z, x)) == 27.0
    assert _val(t.gradient(y, x)) == 6.0
    assert t.persistent


def test_persistent_gradient_inside_context_is_recorded_on_itself():
    # TF: a persistent tape's gradient computed inside its context is recorded, so
    # it can be differentiated again by the same tape.
    x = gt.constant(3.0)
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x * x
        dy = t.gradient(y, x)
    assert _val(dy) == 27.0
    assert _val(t.gradient(dy, x)) == 18.0


def test_many_gradient_calls_on_persistent_tape():
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = gt.reduce_sum(gt.exp(x))
    for _ in range(20):
        np.testing.assert_allclose(t.gradient(y, x).numpy(), np.exp([1.0, 2.0]), rtol=1e-6)


# --- variables ------------------------------------------------------------------------


def test_watched_variables_order_is_construction_order():
    c = gt.Variable(1.0, name="c")
    a = gt.Variable(2.0, name="a")
    b = gt.Variable(3.0, name="b")
    with gt.GradientTape() as t:
        b * a + c * b
    got = t.watched_variables()
    assert isinstance(got, tuple)
    assert [v.name for v in got] == ["c:0", "a:0", "b:0"]
    assert got[0] is c and got[1] is a and got[2] is b


def test_watched_variables_explicit_watch_order():
    v2 = gt.Variable(1.0, name="first")
    v1 = gt.Variable(1.0, name="second")
    with gt.GradientTape(watch_accessed_variables=False) as t:
        t.watch(v1)
        t.watch(v2)
    assert [v.name for v in t.watched_variables()] == ["first:0", "second:0"]


def test_watch_accessed_variables_false():
    v = gt.Variable(2.0)
    w = gt.Variable(3.0)
    x = gt.constant(4.0)
    with gt.GradientTape(watch_accessed_variables=False, persistent=True) as t:
        t.watch(x)
        y = v * w * x
    assert t.watched_variables() == ()
    assert t.gradient(y, [v, w]) == [None, None]
    assert _val(t.gradient(y, x)) == 6.0


def test_non_trainable_variables_are_not_watched():
    v = gt.Variable(2.0, trainable=False)
    w = gt.Variable(3.0)
    with gt.GradientTape() as t:
        y = v * w
    assert [x is w for x in t.watched_variables()] == [True]
    gv, gw = t.gradient(y, [v, w])
    assert gv is None and _val(gw) == 2.0


def test_non_trainable_variable_explicitly_watched():
    v = gt.Variable(2.0, trainable=False)
    with gt.GradientTape() as t:
        t.watch(v)
        y = v * v
    assert _val(t.gradient(y, v)) == 4.0


def test_variable_assign_inside_tape_reads_are_separate():
    v = gt.Variable(2.0)
    with gt.GradientTape(persistent=True) as t:
        y = v * v  # reads 2.0
        r = v.assign(3.0)
        z = v * v  # reads 3.0
    assert r.numpy() == 3.0
    assert _val(t.gradient(y, v)) == 4.0
    assert _val(t.gradient(z, v)) == 6.0
    assert _val(t.gradient([y, z], v)) == 10.0
    assert v.numpy() == 3.0
    assert _val(y) == 4.0 and _val(z) == 9.0


def test_assign_is_not_differentiable():
    x = gt.constant(1.5)
    v = gt.Variable(0.0)
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        v.assign(x * 2.0)
        y = v * 1.0
    assert v.numpy() == 3.0
    assert t.gradient(y, x) is None
    assert _val(t.gradient(y, v)) == 1.0


def test_assign_add_and_sub_semantics():
    v = gt.Variable([1.0, 2.0])
    r = v.assign_add([1.0, 1.0])
    assert v.numpy().tolist() == [2.0, 3.0] and r.numpy().tolist() == [2.0, 3.0]
    v.assign_sub(gt.constant([0.5, 1.0]))
    assert v.numpy().tolist() == [1.5, 2.0]
    v.assign(np.array([7.0, 8.0], dtype=np.float32))
    assert v.numpy().tolist() == [7.0, 8.0]
    with gt.GradientTape() as t:
        y = gt.reduce_sum(v * v)
        v.assign_add([1.0, 1.0])
        z = gt.reduce_sum(v)
        total = y + z
    assert _val(y) == 113.0 and _val(z) == 17.0
    # each read sees the value of its time; gradients of both reads add up
    assert _val(t.gradient(total, v)) == [15.0, 17.0]
    # outside the tape: plain updates, nothing recorded
    n = t._num_nodes
    v.assign_sub([8.0, 9.0])
    assert v.numpy().tolist() == [0.0, 0.0] and t._num_nodes == n


def test_variable_replaced_by_tensor_gives_none():
    x = gt.Variable(2.0)
    results = []
    for _ in range(3):
        with gt.GradientTape() as t:
            y = x + 1
        results.append(_val(t.gradient(y, x)))
        x = x + 1
    assert results == [1.0, None, None]


def test_variable_assign_add_in_loop_keeps_gradient():
    x = gt.Variable(2.0)
    results = []
    for _ in range(3):
        with gt.GradientTape() as t:
            y = x * x
        results.append(_val(t.gradient(y, x)))
        x.assign_add(1.0)
    assert results == [4.0, 6.0, 8.0]


# --- recording control ----------------------------------------------------------------


def test_reset_clears_recording_and_keeps_recording_after():
    x = gt.constant(2.0)
    with gt.GradientTape() as t:
        t.watch(x)
        x * x
        t.reset()
        assert t._num_nodes == 0
        t.watch(x)
        z = x * x * x
    assert _val(t.gradient(z, x)) == 12.0


def test_reset_drops_watches():
    x = gt.constant(2.0)
    with gt.GradientTape() as t:
        t.watch(x)
        t.reset()
        y = x * x
    assert t.gradient(y, x) is None


def test_reset_outside_context_allows_reuse():
    x = gt.constant(2.0)
    t = gt.GradientTape()
    with t:
        t.watch(x)
        y = x * x
    assert _val(t.gradient(y, x)) == 4.0
    t.reset()
    with t:
        t.watch(x)
        z = x * x * x
    assert _val(t.gradient(z, x)) == 12.0


def test_stop_recording():
    x = gt.constant(2.0)
    with gt.GradientTape() as t:
        t.watch(x)
        with t.stop_recording():
            a = x * x
            assert t._num_nodes == 0
        b = x * x * x
    ga, gb = t.gradient([a, b], [x, x])
    assert _val(ga) == 12.0 and _val(gb) == 12.0  # only b is connected


def test_stop_recording_only_pauses_that_tape():
    x = gt.constant(2.0)
    with gt.GradientTape() as outer, gt.GradientTape() as inner:
        outer.watch(x)
        inner.watch(x)
        with inner.stop_recording():
            y = x * x
    assert _val(outer.gradient(y, x)) == 4.0
    assert inner.gradient(y, x) is None


def test_stop_recording_outside_context_raises():
    t = gt.GradientTape()
    with pytest.raises(RuntimeError):
        with t.stop_recording():
            pass


def test_stop_gradient_and_identity():
    x = gt.constant(3.0)
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = gt.stop_gradient(x * x) * x
        z = gt.identity(x * x)
    assert _val(t.gradient(y, x)) == 9.0
    assert _val(t.gradient(z, x)) == 6.0


# --- nesting and several tapes --------------------------------------------------------


def test_nested_second_and_third_derivatives():
    x = gt.constant(2.0)
    with gt.GradientTape() as t3:
        t3.watch(x)
        with gt.GradientTape() as t2:
            t2.watch(x)
            with gt.GradientTape() as t1:
                t1.watch(x)
                y = x**4
            d1 = t1.gradient(y, x)  # 4 x^3 = 32
        d2 = t2.gradient(d1, x)  # 12 x^2 = 48
    d3 = t3.gradient(d2, x)  # 24 x = 48
    assert (_val(d1), _val(d2), _val(d3)) == (32.0, 48.0, 48.0)


def test_nested_transcendental_second_derivative():
    x = gt.constant(0.5)
    with gt.GradientTape() as t2:
        t2.watch(x)
        with gt.GradientTape() as t1:
            t1.watch(x)
            y = gt.sin(x) * gt.exp(x)
        d1 = t1.gradient(y, x)
    d2 = t2.gradient(d1, x)
    # (sin e^x)' = e^x (sin + cos); '' = 2 e^x cos
    assert float(d1) == pytest.approx(np.exp(0.5) * (np.sin(0.5) + np.cos(0.5)), rel=1e-6)
    assert float(d2) == pytest.approx(2 * np.exp(0.5) * np.cos(0.5), rel=1e-6)


def test_several_tapes_each_with_its_own_watched_set():
    a = gt.constant(1.0)
    b = gt.constant(2.0)
    with gt.GradientTape(persistent=True) as ta:
        ta.watch(a)
        with gt.GradientTape(persistent=True) as tb:
            tb.watch(b)
            y = a * b  # recorded on both
            za = a * a  # only on ta
            zb = b * b  # only on tb
    assert ta._num_nodes == 2 and tb._num_nodes == 2
    assert _val(ta.gradient(y, a)) == 2.0
    assert _val(tb.gradient(y, b)) == 1.0
    # TF's rule: a source that is an input of a recorded op gets its gradient even
    # if that tape does not watch it (y = a * b is on both tapes).
    assert _val(ta.gradient(y, b)) == 1.0 and _val(tb.gradient(y, a)) == 2.0
    assert _val(ta.gradient(za, a)) == 2.0 and ta.gradient(zb, b) is None
    assert _val(tb.gradient(zb, b)) == 4.0 and tb.gradient(za, a) is None


def test_tape_reentered_after_exit_keeps_recording():
    x = gt.constant(2.0)
    t = gt.GradientTape(persistent=True)
    with t:
        t.watch(x)
        y = x * x
    with t:
        z = y * x
    assert _val(t.gradient(z, x)) == 12.0


# --- intermediate tensors and trivial targets -----------------------------------------


def test_gradient_wrt_intermediate():
    x = gt.constant(3.0)
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
        z = y * y
    assert _val(t.gradient(z, y)) == 18.0
    assert _val(t.gradient(z, [x, y])[0]) == 108.0
    assert t.gradient(y, z) is None


def test_target_is_source_gives_ones():
    x = gt.constant([[1.0, 2.0], [3.0, 4.0]])
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
    assert _val(t.gradient(x, x)) == [[1.0, 1.0], [1.0, 1.0]]
    v = gt.Variable([1.0, 2.0, 3.0])
    with gt.GradientTape() as t2:
        t2.watch(v)
    assert _val(t2.gradient(v, v)) == [1.0, 1.0, 1.0]


def test_unwatched_target_is_source_gives_ones():
    # TF seeds a target that is also a source with ones, watched or not.
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape(persistent=True) as t:
        pass
    assert _val(t.gradient(x, x)) == [1.0, 1.0]
    y = gt.constant(3.0)
    assert t.gradient(x, y) is None


# --- memory ---------------------------------------------------------------------------


def test_non_persistent_nodes_freed_by_gradient():
    x = gt.constant([1.0, 2.0, 3.0])
    with gt.GradientTape() as t:
        t.watch(x)
        y = gt.reduce_sum(gt.exp(gt.sin(x) * x))
    assert t._num_nodes == 4
    t.gradient(y, x)
    assert t._num_nodes == 0


def test_persistent_nodes_kept_until_reset():
    x = gt.constant([1.0, 2.0, 3.0])
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = gt.reduce_sum(x * x)
    t.gradient(y, x)
    t.gradient(y, x)
    assert t._num_nodes == 2
    t.reset()
    assert t._num_nodes == 0


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_persistent_tape_memory_released_on_del():
    # 20M float32 = 80 MB per tensor: above glibc's largest mmap threshold and above the
    # largest block gradtape's allocator keeps when no tape is alive (64 MiB), so freed
    # buffers go back to the OS and RSS measures what the tape holds.
    n = 20_000_000
    gc.collect()
    base = _rss_bytes()
    x = gt.constant(np.full(n, 0.5, dtype=np.float32))
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x
        for _ in range(5):
            y = gt.sin(y)  # each node saves its 80 MB input
        s = gt.reduce_sum(y)
    del y
    held = _rss_bytes() - base
    assert held > 300e6, held  # the intermediates are alive, held by the tape
    assert t._num_nodes == 6
    del t, s
    gc.collect()
    after = _rss_bytes() - base
    # What is left: x (80 MB) plus allocator slack.
    assert after < held - 240e6, (held, after)
    del x
    gc.collect()
    # x's block may stay in the allocator cache, which keeps large blocks while any
    # tape lives (a gt.function that uses a tape keeps one for its calls; an earlier
    # test's may still be alive): it is the cache's, not held by a tensor or tape.
    assert _rss_bytes() - base - gt.experimental.memory_cached_bytes() < 60e6


# --- the native tape owns the state ---------------------------------------------------


def test_gradient_tape_keeps_no_python_state():
    # Persistent/used/recording/watched all live in the native tape: the Python
    # subclass adds behaviour, never fields.
    v = gt.Variable(1.0)
    t = gt.GradientTape(persistent=1, watch_accessed_variables=0)
    assert isinstance(t, gt._gradtape._Tape) and t.persistent is True
    with t:
        t.watch(v)
        y = v * v
        with t.stop_recording():
            pass
    t.gradient(y, v)
    t.jacobian(y, [v])
    assert vars(t) == {}


def test_failed_call_does_not_use_up_non_persistent_tape():
    # As in TF, a call that fails on its arguments leaves the tape usable.
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape() as t:
        t.watch(x)
        y = x * x
    with pytest.raises(ValueError, match="output_gradients has 2 entries but target has 1"):
        t.gradient(y, x, output_gradients=[gt.ones((2,)), gt.ones((2,))])
    with pytest.raises(gt.errors.InvalidArgumentError, match=r"\[3\]"):
        t.gradient(y, x, output_gradients=gt.ones((3,)))
    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients: 'zeros'"):
        t.gradient(y, x, unconnected_gradients="zeros")
    with pytest.raises(TypeError, match="gradient sources must be Tensors or Variables, got str"):
        t.gradient(y, [x, "x"])
    with pytest.raises(TypeError, match="batch_jacobian target must be a single Tensor"):
        t.batch_jacobian([y], x)
    assert t.gradient(y, x).numpy().tolist() == [2.0, 4.0]
    # A used tape says so before looking at the arguments (TF's order).
    with pytest.raises(RuntimeError, match="non-persistent"):
        t.gradient(y, "x", unconnected_gradients="zeros")


def test_reentering_an_active_tape_is_a_value_error_as_in_tf():
    # TF's `_push_tape`: a tape still recording cannot be entered again; it can once
    # it exited (or once a non-persistent tape's gradient stopped its recording).
    x = gt.constant(2.0)
    t = gt.GradientTape(persistent=True)
    with t:
        t.watch(x)
        with pytest.raises(ValueError, match="Tape is still recording"):
            with t:
                pass
        y = x * x
    with t:
        z = y * 3.0
    assert t.gradient(z, x).numpy() == 12.0
    u = gt.GradientTape()
    with u:
        u.watch(x)
        w = x * x
        assert u.gradient(w, x).numpy() == 4.0
        with u:  # recording stopped by gradient: entering again is allowed
            pass
