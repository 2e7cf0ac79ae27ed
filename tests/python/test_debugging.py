"""Issue 17: why a gradient is None (``tape.explain`` and the opt-in warning mode),
TF's persistent-tape warning, what a tape holds (``memory_info``), drawings of a tape
(``to_dot``, ``plot_tape``)."""

import inspect
import logging
import os
import re
import stat

import numpy as np
import pytest

import gradtape as gt
from gradtape import _tape, debugging

HERE = os.path.abspath(__file__)


def _line():
    """The caller's line number."""
    return inspect.currentframe().f_back.f_lineno


@pytest.fixture
def explaining():
    gt.debugging.enable_explanations()
    try:
        yield
    finally:
        gt.debugging.disable_explanations()


# ---- explain, without the warning mode: the cause, in words -------------------------


def test_tensor_never_watched():
    x = gt.constant(3.0)
    with gt.GradientTape(persistent=True) as tape:
        y = x * x
    assert tape.gradient(y, x) is None
    msg = tape.explain(y, x)
    assert msg.startswith("The source is a Tensor this tape never watched")
    assert "tape.watch(x)" in msg


def test_connected_gradient_lists_the_ops():
    x = gt.Variable(2.0)
    with gt.GradientTape(persistent=True) as tape:
        y = gt.reduce_sum(gt.exp(x * 3.0))
    assert tape.gradient(y, x) is not None
    assert tape.explain(y, x) == (
        "The gradient is not None: the target depends on the Variable 'Variable:0' through the recorded "
        "ops ReadVariableOp -> Mul -> Exp -> Sum."
    )


def test_integer_variable_and_tensor():
    v = gt.Variable([1, 2])
    with gt.GradientTape(persistent=True) as tape:
        y = gt.reduce_sum(v)
    assert tape.gradient(y, v) is None
    msg = tape.explain(y, v)
    assert msg.startswith("The Variable 'Variable:0' is an int32 Variable: gradients flow only through floating")
    t = gt.constant([1, 2], dtype=gt.int64)
    assert "is an int64 Tensor" in tape.explain(y, t)


def test_variable_not_trainable_or_not_auto_watched():
    v = gt.Variable(1.0, trainable=False)
    with gt.GradientTape(persistent=True) as tape:
        y = v * 2.0
    assert tape.gradient(y, v) is None
    assert "has trainable=False" in tape.explain(y, v)
    w = gt.Variable(1.0)
    with gt.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        y = w * 2.0
    assert tape.gradient(y, w) is None
    assert "watch_accessed_variables=False" in tape.explain(y, w)


def test_unrelated_variable_is_the_guides_first_none():
    x, y = gt.Variable(2.0), gt.Variable(3.0)
    with gt.GradientTape(persistent=True) as tape:
        z = y * y
    assert tape.gradient(z, x) is None
    assert tape.explain(z, x).startswith("The target does not depend on the Variable 'Variable:0'")


def test_used_non_persistent_tape():
    x = gt.Variable(2.0)
    with gt.GradientTape() as tape:
        y = x * x
    tape.gradient(y, x)
    msg = tape.explain(y, x)
    assert msg.startswith("This non-persistent tape was already used")
    with pytest.raises(RuntimeError):
        tape.gradient(y, x)


def test_cut_paths_without_the_mode_point_to_it():
    x = gt.Variable(2.0)
    with gt.GradientTape(persistent=True) as tape:
        y = gt.stop_gradient(x) * 3.0
        z = x * 1.0
    w = z * 2.0
    for target in (y, w):
        msg = tape.explain(target, x)
        assert msg.startswith("The target was not recorded by this tape")
        assert "stop_gradient" in msg and "enable_explanations()" in msg
    # Both on the tape, with no recorded path between them.
    u = gt.Variable(3.0)
    with gt.GradientTape(persistent=True) as tape:
        a = x * 1.0
        t = u * gt.stop_gradient(a)
    assert tape.gradient(t, x) is None
    assert tape.explain(t, x).startswith(
        "No recorded op joins the target to the Variable 'Variable:0': the path between them is cut"
    )


def test_explain_rejects_non_tensors():
    with gt.GradientTape() as tape:
        pass
    with pytest.raises(TypeError, match="source must be a Tensor or Variable"):
        tape.explain(gt.constant(1.0), 3.0)
    with pytest.raises(TypeError, match="target must be a Tensor or Variable"):
        tape.explain([1.0], gt.constant(1.0))


# ---- the warning mode: the guide's three None cases, op and line named ---------------


def test_guide_case_1_variable_replaced_by_tensor(explaining):
    x = gt.Variable(2.0)
    results = []
    for _ in range(2):
        with gt.GradientTape() as tape:
            y = x + 1
        if isinstance(x, gt.Variable):
            results.append(tape.gradient(y, x))
        else:
            with pytest.warns(debugging.NoneGradientWarning) as rec:
                results.append(tape.gradient(y, x))
            source = x
        line = _line() + 1
        x = x + 1  # This should be `x.assign_add(1)`
    assert results[0].numpy() == 1.0 and results[1] is None
    msg = str(rec[0].message)
    assert f"made by AddV2 at {HERE}:{line}" in msg
    assert "x.assign_add(1)" in msg
    # The warning points at the gradient call, and explain gives the same sentence.
    assert rec[0].filename == HERE
    assert "gradient is None: " + tape.explain(y, source) == msg


def test_guide_case_2_calculation_outside_gradtape(explaining):
    x = gt.Variable([[1.0, 2.0], [3.0, 4.0]], dtype=gt.float32)
    with gt.GradientTape(persistent=True) as tape:
        x2 = x**2
        y = np.mean(x2, axis=0)
        line = _line() + 1
        y = gt.reduce_mean(y, axis=0)
    with pytest.warns(debugging.NoneGradientWarning):
        assert tape.gradient(y, x) is None
    msg = tape.explain(y, x)
    assert msg.startswith(f"The target was computed from a numpy value that entered gradtape at Mean at {HERE}:{line}")


def test_guide_case_3_integer_dtype(explaining):
    x = gt.Variable([[2, 2], [2, 2]])
    with gt.GradientTape(persistent=True) as tape:
        y = gt.cast(x, gt.float32)
        line = _line() + 1
        y = gt.reduce_sum(x)
    with pytest.warns(debugging.NoneGradientWarning) as rec:
        assert tape.gradient(y, x) is None
    msg = tape.explain(y, x)
    assert "is an int32 Variable" in msg
    assert f"Its value reaches the target through Sum at {HERE}:{line}" in msg
    assert str(rec[0].message) == "gradient is None: " + msg


def test_stop_gradient_named(explaining):
    x = gt.Variable(2.0)
    with gt.GradientTape(persistent=True) as tape:
        line = _line() + 1
        y = gt.stop_gradient(x) * 3.0
    assert tape.explain(y, x) == (
        f"The path from the Variable 'Variable:0' to the target is cut by stop_gradient (StopGradient at "
        f"{HERE}:{line}): no gradient flows through it."
    )


def test_stop_recording_named(explaining):
    x = gt.Variable(2.0)
    with gt.GradientTape(persistent=True) as tape:
        with tape.stop_recording():
            line = _line() + 1
            y = x * x
    msg = tape.explain(y, x)
    assert "paused by stop_recording()" in msg
    assert f"ReadVariableOp at {HERE}:{line}" in msg


def test_target_outside_the_tape_named(explaining):
    x = gt.constant(3.0)
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
    line = _line() + 1
    y = x * x
    msg = tape.explain(y, x)
    assert msg.startswith(f"The path from the Tensor source to the target leaves this tape at Mul at {HERE}:{line}")


def test_integer_cast_on_the_path_named(explaining):
    x = gt.Variable([1.5, 2.5])
    with gt.GradientTape(persistent=True) as tape:
        line = _line() + 1
        i = gt.cast(x, gt.int32)
        y = gt.cast(i, gt.float32) * 2.0
    msg = tape.explain(y, x)
    assert f"Cast at {HERE}:{line} gives int32" in msg


def test_path_through_python_float_named(explaining):
    x = gt.Variable(2.0)
    with gt.GradientTape(persistent=True) as tape:
        f = float(x * 3.0)
        line = _line() + 1
        y = gt.constant(f) * gt.constant(2.0)
    msg = tape.explain(y, x)
    assert "Python numbers entered the computation" not in msg or f"{HERE}:{line}" in msg
    assert "does not depend on" in msg or "left gradtape" in msg


def test_warning_mode_silent_for_connected_gradients(explaining):
    x = gt.Variable(2.0)
    with gt.GradientTape() as tape:
        y = x * x
    assert tape.gradient(y, x).numpy() == 4.0  # filterwarnings=error: any warning fails


def test_warning_mode_is_off_by_default_and_restores():
    assert not gt.debugging.explanations_enabled()
    with gt.debugging.explanations():
        assert gt.debugging.explanations_enabled()
    assert not gt.debugging.explanations_enabled()
    x = gt.constant(1.0)
    with gt.GradientTape() as tape:
        y = x * 2.0
    assert tape.gradient(y, x) is None  # no warning without the mode


# ---- TF's warning: gradient of a persistent tape inside its context ----------------


def test_persistent_gradient_inside_context_logs_once(caplog, monkeypatch):
    monkeypatch.setattr(_tape, "_warned_persistent_inside", False)
    x = gt.Variable(2.0)
    with caplog.at_level(logging.WARNING, logger="gradtape"):
        with gt.GradientTape(persistent=True) as tape:
            y = x * x
            g = tape.gradient(y, x)
            tape.gradient(y, x)
        tape.gradient(y, x)
        with gt.GradientTape() as t2:
            y = x * x
            t2.gradient(y, x)  # non-persistent: not this warning
    assert g.numpy() == 4.0
    msgs = [r.getMessage() for r in caplog.records]
    assert len(msgs) == 1
    assert msgs[0].startswith("Calling GradientTape.gradient on a persistent tape inside its context is significantly")


# ---- memory_info ---------------------------------------------------------------------


def test_tape_memory_info_counts_saved_tensors():
    x = gt.constant(np.ones((4, 8), np.float32))
    w = gt.Variable(np.ones((8, 2), np.float64))
    with gt.GradientTape() as tape:
        tape.watch(x)
        h = gt.exp(x)  # saves its output: 4*8 float32 = 128 bytes
        m = gt.matmul(gt.cast(h, gt.float64), w)  # saves both inputs: 256 + 128
        s = gt.reduce_sum(m)  # saves nothing
    info = tape.memory_info()
    assert info["nodes"] == 5  # Exp, Cast, ReadVariableOp, MatMul, Sum
    assert info["by_op"]["Exp"] == {"nodes": 1, "saved_tensors": 1, "bytes": 128}
    assert info["by_op"]["MatMul"] == {"nodes": 1, "saved_tensors": 2, "bytes": 256 + 128}
    assert info["by_op"]["Sum"] == {"nodes": 1, "saved_tensors": 0, "bytes": 0}
    assert info["saved_tensors"] == 3 and info["bytes"] == 128 + 256 + 128
    assert list(info["by_op"])[0] == "MatMul"  # largest first
    tape.gradient(s, x)
    assert tape.memory_info() == {"nodes": 0, "saved_tensors": 0, "bytes": 0, "by_op": {}}


def test_a_tensor_saved_twice_counts_once():
    x = gt.constant([1.0, 2.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        x * x  # saves x twice (both inputs)
    info = tape.memory_info()
    assert info["by_op"]["Mul"]["saved_tensors"] == 2
    assert info["saved_tensors"] == 1 and info["bytes"] == 8


def test_engine_memory_info_tracks_live_bytes():
    info = gt.debugging.memory_info()
    assert set(info) == {"live_bytes", "cached_bytes", "cache_limit"}
    assert info["cache_limit"] == gt.experimental.memory_cache_limit()
    before = gt.debugging.memory_info()["live_bytes"]
    t = gt.zeros([1024, 1024], dtype=gt.float64)  # 8 MiB
    during = gt.debugging.memory_info()["live_bytes"]
    assert during - before >= 8 * 2**20
    del t
    gt.experimental.release_memory()
    after = gt.debugging.memory_info()
    assert after["live_bytes"] < during - 7 * 2**20
    assert after["cached_bytes"] == 0


# ---- to_dot and plot_tape ------------------------------------------------------------


def _small_tape():
    x = gt.constant([[1.0, 2.0]])
    w = gt.Variable([[1.0], [2.0]], name="w")
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.reduce_sum(gt.tanh(gt.matmul(x, w)))
    return tape, x, y


def test_to_dot_shows_ops_shapes_and_saved_tensors():
    tape, x, _ = _small_tape()
    dot = tape.to_dot()
    assert dot.startswith("digraph tape {") and dot.rstrip().endswith("}")
    ops = re.findall(r"<b>(\w+)</b>", dot)
    assert ops == ["ReadVariableOp", "MatMul", "Tanh", "Sum"]
    assert "<b>MatMul</b><br/>saves in0, in1 (16 B)" in dot
    assert "<b>Tanh</b><br/>saves out0 (4 B)" in dot
    assert "<b>Sum</b><br/>saves nothing" in dot
    assert f't{x._id} [shape=ellipse, style=filled, fillcolor="#fde9c8", label="(1, 2) float32"];' in dot
    assert dot.count(" -> ") == 9  # 4 ops: 5 inputs (MatMul has 2), 4 outputs


def test_plot_tape_matplotlib_fallback(tmp_path, monkeypatch):
    monkeypatch.setattr(debugging.shutil, "which", lambda _name: None)
    tape, _, _ = _small_tape()
    path = tmp_path / "tape.png"
    assert gt.debugging.plot_tape(tape, str(path)) == "matplotlib"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match=r"\.png, \.svg or \.pdf"):
        gt.debugging.plot_tape(tape, str(tmp_path / "tape.txt"))


def test_plot_tape_uses_graphviz_when_installed(tmp_path, monkeypatch):
    # A stand-in `dot` that records its arguments and input.
    fake = tmp_path / "dot"
    fake.write_text('#!/bin/sh\necho "$@" > "$(dirname "$0")/args"\ncat > "$(dirname "$0")/input"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(debugging.shutil, "which", lambda _name: str(fake))
    tape, _, _ = _small_tape()
    out = tmp_path / "t.svg"
    assert gt.debugging.plot_tape(tape, out) == "graphviz"
    assert (tmp_path / "args").read_text().split() == ["-Tsvg", "-o", str(out)]
    assert (tmp_path / "input").read_text() == tape.to_dot()
