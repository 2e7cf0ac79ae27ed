"""Every op of the spec table (``op_specs.py``) that a ``gt.function`` traces, saved in a
SavedModel and loaded in a fresh process (one process for all rows): the loaded
function's values and gradients equal eager's, for float64 inputs and, for the rows the
gradient checks run with complex inputs, complex128 ones."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gradtape as gt

sys.path.insert(0, os.path.dirname(__file__))
from op_specs import SPECS, complex_rows  # noqa: E402


def _cases():
    """(row, complex inputs?): every real float64 row, and every row checked with complex
    inputs (``complex_rows``), in complex128."""
    real = [(s, False) for s in SPECS if s.real and "float64" in s.dtypes]
    return real + [(s, True) for s in complex_rows()]


CASES = _cases()


def _inputs(spec, is_complex, seed=1):
    rng = np.random.default_rng(seed)
    out = []
    for s, shp in zip(spec.samplers(), spec.shapes[0]):
        a = np.asarray(s(rng, shp), dtype=np.float64)
        if is_complex:  # as the gradient checks: the imaginary part in (-0.5, 0.5)
            a = a + 1j * rng.uniform(-0.5, 0.5, size=a.shape)
        out.append(a)
    return out


def _seed_like(rng, shape, dtype):
    v = rng.standard_normal(shape)
    return v + 1j * rng.standard_normal(shape) if np.dtype(dtype).kind == "c" else v


def _value_and_grads(fn, arrays, v):
    ts = [gt.constant(a) for a in arrays]
    with gt.GradientTape() as tape:
        tape.watch(ts)
        y = fn(*ts)
    gs = tape.gradient(
        y, ts, output_gradients=gt.constant(v.astype(y.dtype.name)), unconnected_gradients=gt.UnconnectedGradients.ZERO
    )
    return y.numpy(), [gt.convert_to_tensor(g).numpy() for g in gs]


def _wrap(fn, n):
    """``fn`` with exactly ``n`` parameters (a row's fn may be the op itself, which also
    takes ``name=None``)."""
    return [
        lambda: fn(),
        lambda a: fn(a),
        lambda a, b: fn(a, b),
        lambda a, b, c: fn(a, b, c),
        lambda a, b, c, d: fn(a, b, c, d),
        lambda a, b, c, d, e: fn(a, b, c, d, e),
    ][n]


LOADER = """
import sys
import numpy as np
import gradtape as gt

root, n = sys.argv[1], int(sys.argv[2])
for k in range(n):
    d = f"{root}/{k}"
    try:
        ins = np.load(f"{d}.in.npz")
    except FileNotFoundError:
        continue  # not saved: the test reports why
    try:
        f = gt.saved_model.load(d).f
        ts = [gt.constant(ins[f"x{i}"]) for i in range(len(ins.files) - 1)]
        with gt.GradientTape() as tape:
            tape.watch(ts)
            y = f(*ts)
        v = ins["v"]
        gs = tape.gradient(y, ts, output_gradients=gt.constant(v.astype(y.dtype.name)),
                           unconnected_gradients=gt.UnconnectedGradients.ZERO)
        out = {"y": y.numpy()}
        out.update({f"g{i}": gt.convert_to_tensor(g).numpy() for i, g in enumerate(gs)})
        np.savez(f"{d}.out.npz", **out)
    except Exception as e:
        with open(f"{d}.err", "w") as fh:
            fh.write(f"{type(e).__name__}: {e}")
"""


@pytest.fixture(scope="module")
def round_trips(tmp_path_factory):
    """Per row: (eager value, eager gradients, the loaded ones or the error)."""
    root = tmp_path_factory.mktemp("saved_ops")
    expected, errors = {}, {}
    for k, (spec, is_complex) in enumerate(CASES):
        xs = _inputs(spec, is_complex)
        m = gt.Module()
        # Traced on the row's inputs (an input_signature would trace on placeholder
        # values, which some ops refuse: a singular matrix to solve).
        m.f = gt.function(_wrap(spec.fn, len(xs)))
        try:
            y = m.f(*[gt.constant(a) for a in xs])
            v = _seed_like(np.random.default_rng(k), tuple(y.shape), y.dtype.name)
            expected[k] = _value_and_grads(spec.fn, xs, v)
            gt.saved_model.save(m, str(root / str(k)))
        except Exception as e:  # reported by the row's test
            errors[k] = f"saving: {type(e).__name__}: {e}"
            continue
        np.savez(root / f"{k}.in.npz", v=v, **{f"x{i}": a for i, a in enumerate(xs)})
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(LOADER), str(root), str(len(CASES))],
        capture_output=True, text=True, timeout=900,
    )
    assert r.returncode == 0, r.stderr
    got = {}
    for k in range(len(CASES)):
        if (root / f"{k}.err").exists():
            errors[k] = "loading: " + (root / f"{k}.err").read_text()
        elif (root / f"{k}.out.npz").exists():
            got[k] = dict(np.load(root / f"{k}.out.npz"))
    return expected, got, errors


@pytest.mark.parametrize("k", range(len(CASES)), ids=[s.id + ("[complex]" if c else "") for s, c in CASES])
def test_every_traced_op_saves_and_loads_in_a_fresh_process(round_trips, k):
    expected, got, errors = round_trips
    assert k not in errors, errors.get(k)
    want_y, want_g = expected[k]
    out = got[k]
    np.testing.assert_allclose(out["y"], want_y, rtol=1e-12, atol=1e-14)
    for i, g in enumerate(want_g):
        np.testing.assert_allclose(out[f"g{i}"], g, rtol=1e-12, atol=1e-14)


def test_the_rows_cover_the_new_op_encodings():
    """The table rows reach the ops saved through their families' rows (not only the
    version-1 vocabulary)."""
    names = {s.name for s, _ in CASES}
    for op in ("gather", "gather_nd", "conv2d", "max_pool2d", "pad", "tile", "split", "__getitem__", "fused_batch_norm",
               "einsum", "svd", "sparse_softmax_cross_entropy_with_logits"):
        assert op in names, op
