"""Why is my gradient ``None``, what does my tape hold, what does it look like.

- ``tape.explain(target, source)`` (or ``explain(tape, target, source)``) says in a
  sentence why ``tape.gradient(target, source)`` is ``None``.
- ``enable_explanations()`` turns on the opt-in warning mode: the engine notes, for
  every op, its type and the line of your code that ran it, ``explain`` names them,
  and every ``None`` that ``gradient`` returns comes with a ``NoneGradientWarning``
  saying why. It costs a few microseconds per op: a debugging aid, off by default.
- ``tape.memory_info()`` and ``memory_info()``: what a tape holds for its backward
  pass, and the engine's live and cached bytes.
- ``tape.to_dot()`` and ``plot_tape(tape, path)``: the recorded ops drawn (Graphviz
  when its ``dot`` program is installed, matplotlib otherwise).

>>> import gradtape as gt
>>> x = gt.constant(3.0)
>>> with gt.GradientTape() as tape:
...     y = x * x
>>> print(tape.explain(y, x))  # doctest: +NORMALIZE_WHITESPACE
The source is a Tensor this tape never watched: a tape watches trainable Variables by
itself, Tensors only through tape.watch(x), which must come before the ops that use it.
"""

from __future__ import annotations

import collections
import contextlib
import html
import os
import shutil
import subprocess
import sys
import warnings
from collections.abc import Iterator
from typing import Any, NamedTuple

from . import _gradtape as _native

__all__ = [
    "NoneGradientWarning", "disable_explanations", "enable_explanations", "explain",
    "explanations", "explanations_enabled", "memory_info", "plot_tape", "to_dot",
]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_DIFFERENTIABLE = ("float16", "float32", "float64", "complex64", "complex128")
_FOREIGN = ("numpy value", "Python number", "Python value")


class NoneGradientWarning(UserWarning):
    """Issued by ``GradientTape.gradient`` for each ``None`` gradient while
    ``enable_explanations()`` is on; the message says why."""


def _caller_location() -> str | None:
    """``file:line`` of the innermost frame outside the gradtape package (its examples
    and demo count as user code); the engine's provenance hook calls this per op."""
    f: Any = sys._getframe(1)
    while f is not None:
        name = f.f_code.co_filename
        inside = name.startswith(_PACKAGE_DIR)
        if not inside or name.startswith(_PACKAGE_DIR + "examples") or name == _PACKAGE_DIR + "demo.py":
            return f"{name}:{f.f_lineno}"
        f = f.f_back
    return None


def enable_explanations() -> None:
    """Turns on the opt-in warning mode: ops note where they ran (their type and the
    line of your code), ``explain`` names the op and line that cut a gradient, and
    ``gradient`` warns (``NoneGradientWarning``) for each ``None`` it returns."""
    _native._set_explanations(True)


def disable_explanations() -> None:
    """Turns the warning mode off and forgets what it noted."""
    _native._set_explanations(False)


def explanations_enabled() -> bool:
    """Whether ``enable_explanations()`` is in effect."""
    return bool(_native._explanations_enabled())


@contextlib.contextmanager
def explanations() -> Iterator[None]:
    """``enable_explanations()`` for the ``with`` block (restoring the previous state)."""
    was = explanations_enabled()
    enable_explanations()
    try:
        yield
    finally:
        if not was:
            disable_explanations()


class _Origin(NamedTuple):
    op: str
    location: str | None
    inputs: list[int]
    dtype: str
    tapes: list[tuple[int, bool]]


def _origin(tid: int) -> _Origin | None:
    o = _native._origin(tid)
    return None if o is None else _Origin(*o)


def _where(o: _Origin) -> str:
    return f"{o.op} at {o.location}" if o.location else o.op


def _source_info(source: Any) -> tuple[int, bool, str, str]:
    """(id on tapes, is a variable, description, dtype name)."""
    if isinstance(source, _native.Variable):
        return source._unique_id, True, f"the Variable {source.name!r}", source.dtype.name
    if isinstance(source, _native.Tensor):
        return source._id, False, "the Tensor source", source.dtype.name
    raise TypeError(f"explain: source must be a Tensor or Variable, got {type(source).__name__}")


def _target_id(target: Any) -> int:
    if isinstance(target, _native.Variable):
        return target._unique_id
    if isinstance(target, _native.Tensor):
        return target._id
    raise TypeError(f"explain: target must be a Tensor or Variable, got {type(target).__name__}")


_HINT = " (Call gt.debugging.enable_explanations() before running the code to have the op and line named.)"


def _ancestry(tid: int, limit: int = 200_000) -> dict[int, tuple[int, _Origin] | None]:
    """Breadth-first over the provenance record from ``tid``: each id seen maps to the
    (child id, child's origin) it was reached from (``None`` for ``tid``)."""
    seen: dict[int, tuple[int, _Origin] | None] = {tid: None}
    queue = collections.deque([tid])
    while queue and len(seen) < limit:
        i = queue.popleft()
        o = _origin(i)
        if o is None:
            continue
        for j in o.inputs:
            if j not in seen:
                seen[j] = (i, o)
                queue.append(j)
    return seen


def _path(seen: dict[int, tuple[int, _Origin] | None], sid: int) -> list[tuple[int, _Origin]]:
    """The ops from the source up to the target: (output id, its origin), source side first."""
    out = []
    step = seen.get(sid)
    while step is not None:
        out.append(step)
        step = seen.get(step[0])
    return out


def _on_tape_path(snap: dict[str, Any], tid: int, sid: int) -> list[str] | None:
    """Op types on a recorded path from source to target (differentiable slots only),
    or ``None`` when the recording has none."""
    produced = {}
    for k, node in enumerate(snap["nodes"]):
        for out in node[2]:
            produced[out[0]] = k
    if tid == sid:
        return []
    seen: dict[int, tuple[int, str] | None] = {tid: None}
    queue = collections.deque([tid])
    while queue:
        i = queue.popleft()
        at = produced.get(i)
        if at is None:
            continue
        op, inputs = snap["nodes"][at][0], snap["nodes"][at][1]
        for j, _shape, dtype in inputs:
            if dtype in _DIFFERENTIABLE and j not in seen:
                seen[j] = (i, op)
                if j == sid:
                    ops = []
                    step = seen[j]
                    while step is not None:
                        ops.append(step[1])
                        step = seen[step[0]]
                    return ops
                queue.append(j)
    return None


def _cut(path: list[tuple[int, _Origin]], key: int, produced: set[int], src_desc: str) -> str | None:
    """The first op on a provenance path (source side first) that this tape did not
    record, said in a sentence."""
    for out, o in path:
        if out in produced:
            continue
        where = _where(o)
        if o.op == "StopGradient":
            return (
                f"The path from {src_desc} to the target is cut by stop_gradient ({where}): "
                "no gradient flows through it."
            )
        if o.dtype not in _DIFFERENTIABLE:
            return (
                f"The path from {src_desc} to the target goes through an integer (non-differentiable) value: "
                f"{where} gives {o.dtype}, and no gradient flows through an integer or bool dtype. "
                "Keep the values floating (cast to gt.float32) along the path."
            )
        states = dict(o.tapes)
        if key not in states:
            return (
                f"The path from {src_desc} to the target leaves this tape at {where}: that op ran outside "
                "the tape's `with` block, and a tape records only the ops run inside it."
            )
        if not states[key]:
            return (
                f"The path from {src_desc} to the target is cut at {where}: it ran while this tape was paused "
                "by stop_recording(), so the tape did not record it."
            )
    return None


def explain(tape: Any, target: Any, source: Any, *, _snapshot: dict[str, Any] | None = None) -> str:
    """Why ``tape.gradient(target, source)`` is ``None`` (or, when it is not, the ops
    the gradient flows through), in a sentence or two. With ``enable_explanations()``
    on while the code ran, the sentence names the op and the line that cut the path."""
    tid = _target_id(target)
    sid, is_var, desc, dtype = _source_info(source)
    remembered = getattr(tape, "_explained", None)
    if remembered and (tid, sid) in remembered:
        return str(remembered[(tid, sid)])
    snap = _snapshot if _snapshot is not None else tape._snapshot()
    if snap["used"]:
        return (
            "This non-persistent tape was already used: its gradient() freed the recording, and a second "
            "gradient() raises RuntimeError. Use gt.GradientTape(persistent=True) to compute several gradients "
            "(or ask explain() before calling gradient())."
        )
    if dtype not in _DIFFERENTIABLE:
        kind = "Variable" if is_var else "Tensor"
        via = ""
        seen = _ancestry(tid) if explanations_enabled() else {}
        path = _path(seen, sid)
        users = [o for _, o in path if o.op != "ReadVariableOp"]
        if users:
            via = (
                f" Its value reaches the target through {_where(users[0])}, which passes no gradient "
                f"to an {dtype} input."
            )
        return (
            f"{desc[0].upper() + desc[1:]} is an {dtype} {kind}: gradients flow only through floating and complex "
            f"dtypes, so the tape never watches it and its gradient is None.{via} "
            "Create it with a float dtype (e.g. dtype=gt.float32) or cast it before the computation."
        )
    produced = {out[0] for node in snap["nodes"] for out in node[2]}
    watched = set(snap["watched"])
    key = snap["key"]
    src_on_tape = sid in watched or sid in produced
    tgt_on_tape = tid in produced or tid in watched
    ops = _on_tape_path(snap, tid, sid) if src_on_tape and tgt_on_tape else None
    if ops is not None:
        chain = " -> ".join(ops) if ops else "the source itself"
        return f"The gradient is not None: the target depends on {desc} through the recorded ops {chain}."
    prov = explanations_enabled()
    if not src_on_tape:
        if not is_var:
            o = _origin(sid) if prov else None
            made = f", made by {_where(o)}," if o is not None and o.op not in _FOREIGN else ""
            replaced = (
                " If it was a Variable before (`x = x + 1` makes a new Tensor), update the Variable in place "
                "instead: x.assign_add(1) or x.assign(...)."
                if made
                else ""
            )
            return (
                f"The source is a Tensor{made} this tape never watched: a tape watches trainable Variables by "
                "itself, Tensors only through tape.watch(x), which must come before the ops that use it." + replaced
            )
        if prov:
            seen = _ancestry(tid)
            if sid in seen:
                why = _cut(_path(seen, sid), key, produced, desc)
                if why:
                    return why
        if not source.trainable:
            return (
                f"{desc[0].upper() + desc[1:]} has trainable=False, so the tape does not watch it: "
                "call tape.watch() on it."
            )
        if not snap["watch_accessed_variables"]:
            return (
                f"The tape was made with watch_accessed_variables=False and {desc} was never passed to "
                "tape.watch(), so nothing about it was recorded."
            )
        return (
            f"The target does not depend on {desc}: it was never read while this tape was recording "
            "(a Variable is watched when an op inside the tape's `with` block reads it)."
        )
    # The source is on the tape, but no recorded path joins it to the target.
    if not prov:
        if not tgt_on_tape:
            return (
                "The target was not recorded by this tape: no op that made it had an input the tape knew. The "
                "path back to the source is cut: by stop_gradient, an integer dtype, values that left gradtape "
                "(numpy arrays, Python floats), or ops run outside the tape's `with` block or under "
                "stop_recording()." + _HINT
            )
        return (
            f"No recorded op joins the target to {desc}: the path between them is cut (stop_gradient, an integer "
            "dtype, numpy or Python values, stop_recording), or the target does not use the source." + _HINT
        )
    seen = _ancestry(tid)
    if sid in seen:
        why = _cut(_path(seen, sid), key, produced, desc)
        if why:
            return why
    numbers = []
    for i, step in seen.items():
        o = _origin(i)
        if o is None or step is None or o.op not in _FOREIGN:
            continue
        user = step[1]
        if o.op == "numpy value":
            return (
                f"The target was computed from a numpy value that entered gradtape at {_where(user)}: the "
                "computation left gradtape before it (numpy), and the tape cannot follow a value out of the engine "
                f"and back, so the path to {desc} is cut. Keep the computation in gradtape ops (gt.reduce_mean "
                "instead of np.mean)."
            )
        numbers.append(_where(user))
    if numbers and not tgt_on_tape:
        return (
            f"The target does not depend on {desc} through any gradtape op. Python numbers entered the "
            f"computation at {', '.join(numbers[:3])}: if one of them came from a tensor (float(t), "
            "t.numpy().item()), the path left gradtape there and the tape cannot follow it."
        )
    t = _origin(tid)
    if t is not None and not tgt_on_tape:
        states = dict(t.tapes)
        if key not in states:
            return f"The target was made by {_where(t)}, outside this tape's `with` block: the tape did not record it."
        if not states[key]:
            return f"The target was made by {_where(t)} while this tape was paused by stop_recording()."
    return f"The target does not depend on {desc}: none of the ops that made it read the source."


def _fmt_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    raise AssertionError


def _tape_memory_info(tape: Any) -> dict[str, Any]:
    """What ``tape`` holds for its backward pass (``GradientTape.memory_info``)."""
    snap = tape._snapshot()
    saved: dict[int, int] = {}
    by_op: dict[str, dict[str, int]] = {}
    for op, inputs, outputs, s_in, s_out in snap["nodes"]:
        row = by_op.setdefault(op, {"nodes": 0, "saved_tensors": 0, "bytes": 0})
        row["nodes"] += 1
        for slot, b in list(zip(inputs, s_in)) + list(zip(outputs, s_out)):
            if b is not None:
                row["saved_tensors"] += 1
                if slot[0] not in saved:
                    row["bytes"] += b
                saved[slot[0]] = b
    return {
        "nodes": len(snap["nodes"]),
        "saved_tensors": len(saved),
        "bytes": sum(saved.values()),
        "by_op": dict(sorted(by_op.items(), key=lambda kv: (-kv[1]["bytes"], kv[0]))),
    }


def memory_info() -> dict[str, int]:
    """The engine's memory: ``live_bytes`` (allocated by the engine and not freed:
    tensors, tape records, bookkeeping), ``cached_bytes`` (freed blocks kept for
    reuse, see ``gt.experimental``) and ``cache_limit``."""
    return dict(_native._memory_stats())


def _shape(s: list[int]) -> str:
    return "(" + ", ".join(map(str, s)) + ("," if len(s) == 1 else "") + ")"


def to_dot(tape: Any) -> str:
    """The tape's recording in Graphviz's dot language: one box per recorded op (its
    type and what it saved for the backward pass), one ellipse per tensor (shape,
    dtype; watched sources shaded), edges in the direction of the computation."""
    snap = tape._snapshot()
    lines = ["digraph tape {", "  rankdir=TB;", '  node [fontname="Helvetica", fontsize=10];']
    tensors: dict[int, tuple[list[int], str]] = {}
    watched = set(snap["watched"])
    for k, (op, inputs, outputs, s_in, s_out) in enumerate(snap["nodes"]):
        saved = [f"in{i}" for i, b in enumerate(s_in) if b is not None]
        saved += [f"out{i}" for i, b in enumerate(s_out) if b is not None]
        nbytes = sum(b for b in list(s_in) + list(s_out) if b is not None)
        label = f"<b>{html.escape(op)}</b>"
        label += f"<br/>saves {', '.join(saved)} ({_fmt_bytes(nbytes)})" if saved else "<br/>saves nothing"
        lines.append(f'  op{k} [shape=box, style="rounded,filled", fillcolor="#dbe8f6", label=<{label}>];')
        for tid, shape, dtype in inputs:
            tensors.setdefault(tid, (shape, dtype))
            lines.append(f"  t{tid} -> op{k};")
        for tid, shape, dtype in outputs:
            tensors.setdefault(tid, (shape, dtype))
            lines.append(f"  op{k} -> t{tid};")
    for tid, (shape, dtype) in tensors.items():
        fill = ', style=filled, fillcolor="#fde9c8"' if tid in watched else ""
        lines.append(f'  t{tid} [shape=ellipse{fill}, label="{_shape(shape)} {dtype}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def plot_tape(tape: Any, path: str) -> str:
    """Draws the tape's recording (``to_dot``) to ``path`` (``.png``, ``.svg`` or
    ``.pdf``): with Graphviz's ``dot`` program when it is on PATH, otherwise with
    matplotlib (ops in execution order, top to bottom). Returns the renderer used,
    ``"graphviz"`` or ``"matplotlib"``."""
    path = os.fspath(path)
    fmt = os.path.splitext(path)[1].lstrip(".").lower() or "png"
    if fmt not in ("png", "svg", "pdf"):
        raise ValueError(f"plot_tape: the file must end in .png, .svg or .pdf, got {path!r}")
    dot = shutil.which("dot")
    if dot is not None:
        r = subprocess.run([dot, f"-T{fmt}", "-o", path], input=to_dot(tape), text=True, capture_output=True)
        if r.returncode == 0:
            return "graphviz"
    _plot_matplotlib(tape, path)
    return "matplotlib"


def _plot_matplotlib(tape: Any, path: str) -> None:
    import matplotlib

    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    snap = tape._snapshot()
    nodes = snap["nodes"]
    watched = set(snap["watched"])
    rows = max(len(nodes), 1)
    fig, ax = plt.subplots(figsize=(8, 0.9 + 0.55 * rows))
    ax.set_xlim(0, 10)
    ax.set_ylim(rows + 0.5, -0.5)
    ax.axis("off")
    ax.set_title(f"tape: {len(nodes)} recorded ops (top first)", fontsize=10)
    for k, (op, inputs, outputs, s_in, s_out) in enumerate(nodes):
        ins = ", ".join(
            ("*" if tid in watched else "") + f"{_shape(shape)} {dtype}" for tid, shape, dtype in inputs
        )
        outs = ", ".join(f"{_shape(shape)} {dtype}" for _tid, shape, dtype in outputs)
        nbytes = sum(b for b in list(s_in) + list(s_out) if b is not None)
        ax.text(0.1, k, ins, ha="left", va="center", fontsize=7, color="#555555")
        ax.text(
            4.6, k, op, ha="center", va="center", fontsize=9,
            bbox={"boxstyle": "round", "facecolor": "#dbe8f6", "edgecolor": "#4a78a8"},
        )
        ax.text(6.0, k, f"-> {outs}   saves {_fmt_bytes(nbytes)}", ha="left", va="center", fontsize=7)
    if not nodes:
        ax.text(5, 0, "(nothing recorded)", ha="center", va="center")
    ax.text(0.1, rows - 0.2, "* watched source", fontsize=7, color="#555555")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _warn_none(tape: Any, snap: dict[str, Any], targets: list[Any], sources: list[Any], grads: list[Any]) -> None:
    """The warning mode's half of ``gradient``: one ``NoneGradientWarning`` per
    ``None``, from the recording as it was before the sweep."""
    if len(targets) != 1:
        tgt = None
    else:
        tgt = targets[0]
    remembered: dict[tuple[int, int], str] = {}
    for src, g in zip(sources, grads):
        if g is not None or tgt is None:
            continue
        why = explain(tape, tgt, src, _snapshot=snap)
        remembered[(_target_id(tgt), _source_info(src)[0])] = why
        warnings.warn(f"gradient is None: {why}", NoneGradientWarning, stacklevel=3)
    with contextlib.suppress(AttributeError):
        tape._explained = remembered


# issue 14: TF's value checks (also top-level: gt.assert_equal, ...)
from ._utils import assert_equal, assert_greater, assert_less, assert_rank  # noqa: E402

__all__ += ["assert_equal", "assert_greater", "assert_less", "assert_rank"]
