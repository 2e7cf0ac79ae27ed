"""Every differentiable op against numpy (forward) and central finite differences,
driven by the table in ``op_specs.py``.

First order: with a random output projection ``v`` and a random input direction ``u``,
``sum_i <VJP_i(v), u_i>`` must equal ``(L(x + eps u) - L(x - eps u)) / (2 eps)`` where
``L(x) = <v, f(x)>``. For complex values ``<a, b> = sum(Re(conj(a) b))``, the real inner
product under which TF's gradient of a real loss is ``dL/dRe(z) + i dL/dIm(z)``: the
check sees every conjugation a rule makes or forgets.

Second order: the same check applied to ``S(x) = sum_i <VJP_i(v), w_i>`` for
``g(x) = (f(x) + 1)³`` (so that linear and piecewise-linear ops have a nonzero second
derivative), whose gradient comes from an outer tape recording the inner tape's backward
pass; the finite differences are of the first-order gradient.

float64 and complex128 are checked against finite differences in the same precision;
float32 and complex64 gradients (including the fused backward kernels) against finite
differences in float64/complex128 at the same, rounded, point. Cases with an empty output
can only compare 0 with 0: they are checked for shapes and dtypes apart.
"""

import inspect
import os
import sys
import zlib

import numpy as np
import pytest

import gradtape as gt

sys.path.insert(0, os.path.dirname(__file__))
from op_specs import (  # noqa: E402
    DEDICATED,
    NOT_DIFFERENTIABLE,
    NOT_OPS,
    REAL_ONLY,
    SPECS,
    away0,
    complex_rows,
    real_only_rows,
)

# Single cases known to fail because of engine bugs: {(spec id, shapes): reason}.
KNOWN_FAILURES = {}

REAL = {"float64": np.float64, "float32": np.float32, "float16": np.float16}
COMPLEX = {"complex128": np.complex128, "complex64": np.complex64}
# The precision the finite differences of a dtype's check run in.
WIDE = {"float64": "float64", "float32": "float64", "complex128": "complex128", "complex64": "complex128"}
# (rtol, atol) of a float32/complex64 gradient against float64 finite differences,
# relative to sum_i <|g_i|, |u_i|> (the scale the float32 rounding errors add up to).
NARROW_TOL = (3e-5, 1e-6)


def _shape_id(shapes):
    return ",".join("x".join(map(str, s)) if s else "scalar" for s in shapes)


def _rng(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _sample(spec, shapes, dtype):
    """The inputs of a case as numpy arrays of ``dtype`` (sampled in float64, rounded
    once): the sampler's values, plus an imaginary part in (-0.5, 0.5) for complex."""
    rng = _rng(spec.id, shapes)
    xs = [np.asarray(s(rng, shp), dtype=np.float64) for s, shp in zip(spec.samplers(), shapes)]
    if dtype in COMPLEX:
        irng = _rng(spec.id, shapes, "imag")
        xs = [x + 1j * irng.uniform(-0.5, 0.5, size=x.shape) for x in xs]
    return [x.astype(dtype) for x in xs], rng


def _is_empty(spec, shapes):
    """An empty output: every gradient is zeros, whatever the rule computes."""
    xs, _ = _sample(spec, shapes, "float64")
    return np.asarray(spec.ref(*xs)).size == 0


def _params(dtypes_of, order=None, rows=None, empty=False):
    out = []
    for spec in SPECS if rows is None else rows:
        if order is not None and spec.order < order:
            continue
        for shapes in spec.shapes:
            if _is_empty(spec, shapes) != empty:
                continue
            for dtype in dtypes_of(spec):
                marks = []
                reason = KNOWN_FAILURES.get((spec.id, tuple(shapes)))
                if reason:
                    marks.append(pytest.mark.xfail(strict=True, reason=reason))
                pid = f"{spec.id}-{_shape_id(shapes)}" + (f"-{dtype}" if dtype else "")
                out.append(pytest.param(spec, tuple(shapes), dtype, id=pid, marks=marks))
    return out


def _real_dtypes(spec):
    return [d for d in ("float64", "float32") if d in spec.dtypes] if spec.real else []


_COMPLEX_ROWS = complex_rows()


def _complex_dtypes(spec):
    return ["complex128", "complex64"]


def _call(fn, arrays):
    return fn(*[gt.constant(a) for a in arrays])


def _value(fn, arrays):
    """``fn(x)`` as a numpy array (no tape)."""
    return np.asarray(_call(fn, arrays).numpy())


def _dot(a, b):
    """The real inner product: ``sum(Re(conj(a) b))``."""
    return float(np.sum(np.real(np.conj(a) * b)))


def _direction(rng, shape, like):
    d = rng.standard_normal(shape)
    if np.iscomplexobj(like):
        d = d + 1j * rng.standard_normal(shape)
    return d


def _cubed(fn):
    """``x -> (fn(x) + 1)³``: gives linear and piecewise-linear ops a second derivative
    (a square would leave ``sqrt`` linear; the shift keeps it away from 0 where f is)."""

    def g(*xs):
        y = fn(*xs) + 1.0
        return y * y * y

    return g


# ----------------------------------------------------------------------------- forward
FORWARD_COMPLEX_TOL = {"complex128": (1e-12, 1e-13), "complex64": (2e-5, 2e-6)}


def _check_forward(spec, xs, dtype, tol):
    out = _call(spec.fn, xs)
    # The reference sees the same (possibly rounded) values, in double precision.
    want = np.asarray(spec.ref(*[x.astype(WIDE.get(dtype, "float64")) for x in xs]))
    got = out.numpy()
    assert tuple(out.shape) == want.shape
    assert got.shape == want.shape
    rtol, atol = tol
    np.testing.assert_allclose(got.astype(np.result_type(got.dtype, want.dtype)), want, rtol=rtol, atol=atol)
    return out


@pytest.mark.parametrize("spec,shapes,dtype", _params(lambda s: s.dtypes if s.real else []))
def test_forward_matches_numpy(spec, shapes, dtype):
    xs, _ = _sample(spec, shapes, dtype)
    out = _check_forward(spec, xs, dtype, spec.fwd_tol[dtype])
    assert out.dtype.name == spec.expected_dtype(dtype)


@pytest.mark.parametrize("spec,shapes,dtype", _params(_complex_dtypes, rows=_COMPLEX_ROWS))
def test_complex_forward_matches_numpy(spec, shapes, dtype):
    xs, _ = _sample(spec, shapes, dtype)
    out = _check_forward(spec, xs, dtype, FORWARD_COMPLEX_TOL[dtype])
    if spec.out_dtype:
        assert out.dtype.name == spec.out_dtype(dtype)
    else:  # complex in, complex out of the same width, or its real part's dtype (abs)
        real_of = {"complex128": "float64", "complex64": "float32"}[dtype]
        assert out.dtype.name in (dtype, real_of)


@pytest.mark.parametrize("spec", real_only_rows(), ids=lambda s: s.id)
def test_real_only_ops_reject_complex(spec):
    # TF's kernels for these ops take real dtypes only: a clear error, as in TF.
    assert spec.name in REAL_ONLY
    shapes = spec.shapes[0]
    xs, _ = _sample(spec, shapes, "complex128")
    with pytest.raises((TypeError, gt.errors.InvalidArgumentError, ValueError)):
        _call(spec.fn, xs)


# ----------------------------------------------------------------------------- first order
def _vjp(fn, arrays, v, persistent=False):
    """Gradients of ``<v, fn(x)>`` w.r.t. each input (zeros where unconnected)."""
    ts = [gt.constant(a) for a in arrays]
    with gt.GradientTape(persistent=persistent) as tape:
        tape.watch(ts)
        y = fn(*ts)
    gs = tape.gradient(
        y,
        ts,
        output_gradients=gt.constant(v.astype(y.dtype.name)),
        unconnected_gradients=gt.UnconnectedGradients.ZERO,
    )
    # A gather's gradient is TF's IndexedSlices: compared densified.
    gs = [gt.convert_to_tensor(g) for g in gs]
    for g, t in zip(gs, ts):
        assert g.dtype == t.dtype and tuple(g.shape) == tuple(t.shape)
    return [g.numpy() for g in gs]


def _close(analytic, numeric, tol, what, scale=None):
    rtol, atol = tol
    scale = max(abs(numeric), abs(analytic)) if scale is None else scale
    assert abs(analytic - numeric) <= atol + rtol * scale, (
        f"{what}: analytic {analytic!r} vs finite difference {numeric!r}"
    )


def _directional_fd(fun, xs, us, eps):
    plus = fun([x + eps * u for x, u in zip(xs, us)])
    minus = fun([x - eps * u for x, u in zip(xs, us)])
    return (plus - minus) / (2 * eps)


def _first_order(spec, shapes, dtype):
    xs, rng = _sample(spec, shapes, dtype)
    wide = [x.astype(WIDE[dtype]) for x in xs]  # the same point, in double precision
    y = _value(spec.fn, wide)
    v = _direction(rng, y.shape, y)
    us = [_direction(rng, x.shape, x) for x in xs]
    gs = _vjp(spec.fn, xs, v)
    analytic = sum(_dot(g.astype(WIDE[dtype]), u) for g, u in zip(gs, us))
    numeric = _directional_fd(lambda z: _dot(v, _value(spec.fn, z)), wide, us, spec.eps)
    if dtype == WIDE[dtype]:
        _close(analytic, numeric, spec.grad_tol, f"first order ({dtype})")
    else:
        scale = sum(float(np.sum(np.abs(g) * np.abs(u))) for g, u in zip(gs, us)) + abs(numeric)
        _close(analytic, numeric, NARROW_TOL, f"first order ({dtype})", scale)


@pytest.mark.parametrize("spec,shapes,dtype", _params(_real_dtypes))
def test_first_order_matches_finite_differences(spec, shapes, dtype):
    _first_order(spec, shapes, dtype)


@pytest.mark.parametrize("spec,shapes,dtype", _params(_complex_dtypes, rows=_COMPLEX_ROWS))
def test_complex_first_order_matches_finite_differences(spec, shapes, dtype):
    _first_order(spec, shapes, dtype)


# ----------------------------------------------------------------------------- float16
# TF differentiates float16 like the other floats; gradtape computes each float16 op
# in float32 and rounds its result. The float16 gradient of every row that runs in
# float16 must equal the float32 gradient at the same (float16) point, to float16
# rounding: a few roundings per op of the rule, relative to the gradient's scale.
# (The float32 gradient itself is checked against finite differences above.)
F16_GRAD_TOL = 4e-3


@pytest.mark.parametrize(
    "spec,shapes,dtype", _params(lambda s: ["float16"] if "float16" in s.dtypes and s.real else [])
)
def test_float16_gradients_match_float32(spec, shapes, dtype):
    xs, rng = _sample(spec, shapes, "float16")
    y = _call(spec.fn, xs)
    assert y.dtype.name == spec.expected_dtype("float16")
    v = rng.standard_normal(tuple(y.shape)).astype(np.float16)
    g16 = _vjp(spec.fn, xs, v)
    g32 = _vjp(spec.fn, [x.astype(np.float32) for x in xs], v)
    for a, b in zip(g16, g32):
        assert a.dtype == np.float16
        scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
        np.testing.assert_allclose(a.astype(np.float32), b, rtol=0, atol=F16_GRAD_TOL * scale)


# ----------------------------------------------------------------------------- second order
def _second_order(spec, shapes, dtype):
    fn = _cubed(spec.fn)
    xs, rng = _sample(spec, shapes, dtype)
    wide = [x.astype(WIDE[dtype]) for x in xs]
    y = _value(fn, wide)
    v = _direction(rng, y.shape, y)
    ws = [_direction(rng, x.shape, x) for x in xs]
    us = [_direction(rng, x.shape, x) for x in xs]

    def s_numpy(arrays):
        return sum(_dot(w, g) for g, w in zip(_vjp(fn, arrays, v), ws))

    ts = [gt.constant(a) for a in xs]
    with gt.GradientTape() as outer:
        outer.watch(ts)
        with gt.GradientTape() as inner:
            inner.watch(ts)
            out = fn(*ts)
        gs = inner.gradient(
            out,
            ts,
            output_gradients=gt.constant(v.astype(out.dtype.name)),
            unconnected_gradients=gt.UnconnectedGradients.ZERO,
        )
        s = gt.constant(0.0, dtype=gt.float64)
        for g, w in zip(gs, ws):
            s = s + gt.cast(gt.reduce_sum(gt.math.real(gt.conj(gt.constant(w.astype(g.dtype.name))) * g)), gt.float64)
    hs = [gt.convert_to_tensor(h) for h in outer.gradient(s, ts, unconnected_gradients=gt.UnconnectedGradients.ZERO)]
    analytic = sum(_dot(h.numpy().astype(WIDE[dtype]), u) for h, u in zip(hs, us))
    numeric = _directional_fd(s_numpy, wide, us, spec.eps)
    # g(x) = (f(x) + 1)³ has a nonzero second derivative wherever f has a nonzero first one, so
    # the comparison carries information (a rule that is not recorded gives 0 here);
    # only where f is locally constant (a clipped value, softmax over one class) is it 0.
    f = _value(spec.fn, wide)
    first = sum(float(np.sum(np.abs(g))) for g in _vjp(spec.fn, wide, _direction(rng, f.shape, f)))
    if first > 1e-9:
        assert abs(numeric) > 1e-8, f"second order is ~0 ({numeric!r}): the check would pass whatever the code does"
    if dtype == WIDE[dtype]:
        _close(analytic, numeric, spec.grad_tol, f"second order ({dtype})")
    else:
        scale = sum(float(np.sum(np.abs(h.numpy()) * np.abs(u))) for h, u in zip(hs, us)) + abs(numeric)
        _close(analytic, numeric, (10 * NARROW_TOL[0], NARROW_TOL[1]), f"second order ({dtype})", scale)


@pytest.mark.parametrize("spec,shapes,dtype", _params(lambda s: ["float64"] if s.real else [], order=2))
def test_second_order_matches_finite_differences(spec, shapes, dtype):
    _second_order(spec, shapes, dtype)


@pytest.mark.parametrize("spec,shapes,dtype", _params(_complex_dtypes, order=2, rows=_COMPLEX_ROWS))
def test_complex_second_order_matches_finite_differences(spec, shapes, dtype):
    _second_order(spec, shapes, dtype)


# ----------------------------------------------------------------------------- jacobians
def _fd_jacobian(fn, xs, eps):
    """The full jacobian of ``fn`` at ``xs`` by central differences (float64), one
    (out..., in...) block per input."""
    y = _value(fn, xs)
    blocks = []
    for i, x in enumerate(xs):
        cols = []
        for k in range(x.size):
            e = np.zeros(x.size)
            e[k] = eps
            e = e.reshape(x.shape)
            plus = [z + e if j == i else z for j, z in enumerate(xs)]
            minus = [z - e if j == i else z for j, z in enumerate(xs)]
            cols.append((_value(fn, plus) - _value(fn, minus)) / (2 * eps))
        blocks.append(np.stack(cols, axis=-1).reshape(y.shape + x.shape) if cols else np.zeros(y.shape + x.shape))
    return blocks


@pytest.mark.parametrize("spec,shapes,dtype", _params(lambda s: ["float64"] if s.real else []))
def test_jacobian_matches_finite_differences(spec, shapes, dtype):
    # The whole jacobian at once (experimental_use_pfor: the rules see stacked seeds with
    # a leading batch axis, or run once per row when they do not take them): every rule's
    # batch-axis arithmetic and the unbroadcast of batched gradients, against differences.
    xs, _ = _sample(spec, shapes, dtype)
    ts = [gt.constant(a) for a in xs]
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(ts)
        y = spec.fn(*ts)
    got = tape.jacobian(y, ts, unconnected_gradients=gt.UnconnectedGradients.ZERO)
    want = _fd_jacobian(spec.fn, xs, spec.eps)
    rtol, atol = spec.grad_tol
    for g, w in zip(got, want):
        assert tuple(g.shape) == w.shape
        np.testing.assert_allclose(g.numpy(), w, rtol=10 * rtol, atol=10 * atol)


# ----------------------------------------------------------------------------- empty cases
@pytest.mark.parametrize(
    "spec,shapes,dtype",
    _params(lambda s: ["float64"] if s.real else [], empty=True)
    + _params(lambda s: ["complex128"], rows=_COMPLEX_ROWS, empty=True),
)
def test_empty_cases_keep_shapes_and_dtypes(spec, shapes, dtype):
    # An empty output: the gradient is all zeros of each input's shape and dtype,
    # whatever the rule computes, so only shapes and dtypes carry information.
    xs, rng = _sample(spec, shapes, dtype)
    y = _check_forward(spec, xs, dtype, (1e-12, 1e-13))
    v = _direction(rng, tuple(y.shape), y.numpy())
    gs = _vjp(spec.fn, xs, v)  # asserts each gradient's shape and dtype
    for g in gs:
        np.testing.assert_array_equal(g, np.zeros_like(g))


# ----------------------------------------------------------------------------- persistence
_PERSIST = [p for p in _params(lambda s: ["float64"] if s.real else []) if "[" not in p.id.split("-")[0]][::3]


@pytest.mark.parametrize("spec,shapes,dtype", _PERSIST)
def test_persistent_and_non_persistent_tapes_agree(spec, shapes, dtype):
    xs, rng = _sample(spec, shapes, dtype)
    v = rng.standard_normal(_value(spec.fn, xs).shape)
    once = _vjp(spec.fn, xs, v, persistent=False)
    ts = [gt.constant(a) for a in xs]
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(ts)
        y = spec.fn(*ts)
    og = gt.constant(v.astype(y.dtype.name))
    zero = gt.UnconnectedGradients.ZERO
    first = [gt.convert_to_tensor(g) for g in tape.gradient(y, ts, output_gradients=og, unconnected_gradients=zero)]
    second = [gt.convert_to_tensor(g) for g in tape.gradient(y, ts, output_gradients=og, unconnected_gradients=zero)]
    for a, b, c in zip(once, first, second):
        np.testing.assert_array_equal(a, b.numpy())
        np.testing.assert_array_equal(a, c.numpy())


# ----------------------------------------------------------------------------- coverage
def _exported_ops():
    names = set()
    for mod in (gt, gt.math, gt.nn, gt.linalg):
        for name, obj in vars(mod).items():
            if name.startswith("_") or inspect.ismodule(obj) or inspect.isclass(obj):
                continue
            if callable(obj):
                names.add(name)
    return names


def test_every_exported_op_has_a_row():
    rows = {s.name for s in SPECS}
    covered = rows | set(NOT_DIFFERENTIABLE) | set(NOT_OPS) | set(DEDICATED)
    missing = sorted(_exported_ops() - covered)
    assert missing == [], f"ops with neither a spec row nor a NOT_DIFFERENTIABLE entry: {missing}"


def test_coverage_lists_are_consistent():
    rows = {s.name for s in SPECS}
    assert rows.isdisjoint(NOT_DIFFERENTIABLE)
    assert set(DEDICATED).isdisjoint(rows | set(NOT_DIFFERENTIABLE))
    # Every REAL_ONLY name has rows (no stale entries).
    assert REAL_ONLY <= rows
    # Each dedicated test exists, and each dedicated op is a real export.
    assert set(DEDICATED) <= _exported_ops()
    for test in DEDICATED.values():
        assert callable(globals().get(test)), test
    # Every NOT_DIFFERENTIABLE name is a real export (no stale entries).
    assert set(NOT_DIFFERENTIABLE) <= _exported_ops()
    # Row ids are unique, so test ids are.
    ids = [s.id for s in SPECS]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


def test_stop_gradient_gives_none():
    x = gt.constant([1.0, 2.0], dtype=gt.float64)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.stop_gradient(x) * x
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [1.0, 2.0])
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = gt.stop_gradient(x * x)
    assert tape.gradient(y, x) is None


def test_numpy_scalars_keep_their_dtype():
    # The finite differences above feed numpy scalars; np.float64 subclasses float.
    assert gt.constant(np.float64(1.5)).dtype == gt.float64
    assert gt.constant(np.asarray(1.5)).dtype == gt.float64
    assert gt.constant(1.5).dtype == gt.float32
    assert gt.constant(np.empty((0, 3))).shape == (0, 3)


_NOT_DIFFERENTIABLE_CALLS = [
    ("argmax", lambda x: gt.argmax(x, axis=1)),
    ("argmin", lambda x: gt.math.argmin(x)),
    ("one_hot", lambda x: gt.one_hot(gt.cast(x, gt.int32), 3)),
    ("shape", gt.shape),
    ("size", gt.size),
    ("rank", gt.rank),
    ("round", gt.round),
    ("floor", gt.floor),
    ("ceil", gt.math.ceil),
]


@pytest.mark.parametrize("name,fn", _NOT_DIFFERENTIABLE_CALLS, ids=[n for n, _ in _NOT_DIFFERENTIABLE_CALLS])
def test_not_differentiable_ops_give_none(name, fn):
    assert name in NOT_DIFFERENTIABLE
    x = gt.constant([[0.3, 1.7, -1.2], [2.6, -0.4, 0.9]], dtype=gt.float64)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    assert tape.gradient(y, x) is None
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    zero = tape.gradient(y, x, unconnected_gradients=gt.UnconnectedGradients.ZERO)
    np.testing.assert_array_equal(zero.numpy(), np.zeros((2, 3)))


@pytest.mark.parametrize("noise_shape", [None, [1, 4]], ids=["elementwise", "noise_shape"])
@pytest.mark.parametrize("rate", [0.25, 0.5])
def test_dropout_gradient_is_mask_over_keep_prob(rate, noise_shape):
    rng = _rng("dropout", rate, noise_shape)
    xv = away0(rng, (3, 4))  # nonzero, so y == 0 exactly where the mask dropped
    v = rng.standard_normal((3, 4))
    x = gt.constant(xv)
    seen = set()
    # Each call draws a new mask; draw until both kept and dropped elements were seen
    # (a few calls at most), checking every draw.
    for _ in range(30):
        with gt.GradientTape() as outer:
            outer.watch(x)
            with gt.GradientTape() as tape:
                tape.watch(x)
                y = gt.nn.dropout(x, rate=rate, noise_shape=noise_shape, seed=7)
            g = tape.gradient(y, x, output_gradients=gt.constant(v))
            s = gt.reduce_sum(g * gt.constant(v))
        mask = (y.numpy() != 0.0).astype(np.float64)
        if noise_shape is not None:  # one decision per column, shared by every row
            assert (mask == mask[:1]).all()
        np.testing.assert_allclose(y.numpy(), xv * mask / (1.0 - rate), rtol=1e-15)
        np.testing.assert_allclose(g.numpy(), v * mask / (1.0 - rate), rtol=1e-15)
        # Linear in x: the second derivative is zero.
        h = outer.gradient(s, x, unconnected_gradients=gt.UnconnectedGradients.ZERO)
        np.testing.assert_array_equal(h.numpy(), np.zeros((3, 4)))
        seen |= set(mask.ravel().tolist())
        if seen == {0.0, 1.0}:
            break
    assert seen == {0.0, 1.0}, "dropout never mixed kept and dropped elements"
