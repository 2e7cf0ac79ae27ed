"""Every differentiable op in forward mode, driven by the table in ``op_specs.py``.

For each row (float64, and complex128 for rows checked with complex inputs):

- **coverage**: an accumulator watching the inputs gives the output a tangent (a public
  differentiable op without a forward rule fails here: the table knows which ops are
  differentiable, see ``test_every_differentiable_op_has_a_row``);
- **adjoint identity**: with random input tangents ``t`` and a random cotangent ``u``,
  ``<u, J t>`` (forward mode) equals ``sum_i <J_i^T u, t_i>`` (the tape), under the real
  inner product ``<a, b> = sum(Re(conj(a) b))`` for which TF's VJPs are adjoints;
- **central differences**: ``J t`` equals ``(f(x + eps t) - f(x - eps t)) / (2 eps)``;
- **forward over reverse**: for rows checked at second order, the accumulator's tangent
  of the tape's gradient equals the nested-tape Hessian-vector product (so the forward
  rules of the ops the VJPs use are right too).
"""

import os
import sys

import numpy as np
import pytest

import gradtape as gt

sys.path.insert(0, os.path.dirname(__file__))
from op_specs import NOT_DIFFERENTIABLE, NOT_OPS, DEDICATED, SPECS, complex_rows  # noqa: E402
from test_gradcheck import (  # noqa: E402
    _direction,
    _dot,
    _exported_ops,
    _is_empty,
    _rng,
    _sample,
    _shape_id,
)

_COMPLEX = {s.id for s in complex_rows()}


def _params(second_order=False):
    out = []
    for spec in SPECS:
        if second_order and spec.order < 2:
            continue
        for shapes in spec.shapes:
            if _is_empty(spec, shapes):
                continue
            dtypes = (["float64"] if spec.real and "float64" in spec.dtypes else [])
            if spec.id in _COMPLEX and not second_order:
                dtypes.append("complex128")
            for dtype in dtypes:
                pid = f"{spec.id}-{_shape_id(shapes)}-{dtype}"
                out.append(pytest.param(spec, tuple(shapes), dtype, id=pid))
    return out


def _forward(fn, xs, ts):
    """``(fn(x), J t)`` from an accumulator (``J t`` None when it gave none)."""
    prim = [gt.constant(x) for x in xs]
    with gt.autodiff.ForwardAccumulator(prim, [gt.constant(t) for t in ts]) as acc:
        y = fn(*prim)
    jt = acc.jvp(y)
    return y.numpy(), (None if jt is None else jt.numpy())


def _backward(fn, xs, u):
    prim = [gt.constant(x) for x in xs]
    with gt.GradientTape() as tape:
        tape.watch(prim)
        y = fn(*prim)
    gs = tape.gradient(
        y, prim, output_gradients=gt.constant(u.astype(y.dtype.name)),
        unconnected_gradients=gt.UnconnectedGradients.ZERO,
    )
    # A gather's gradient is TF's IndexedSlices: compared densified.
    return [gt.convert_to_tensor(g).numpy() for g in gs]


@pytest.mark.parametrize("spec,shapes,dtype", _params())
def test_jvp_matches_vjp_and_finite_differences(spec, shapes, dtype):
    xs, _ = _sample(spec, shapes, dtype)
    rng = _rng(spec.id, shapes, "jvp")
    ts = [_direction(rng, x.shape, x) for x in xs]
    y, jt = _forward(spec.fn, xs, ts)
    # Coverage: a differentiable op gives its output a tangent.
    assert jt is not None, f"{spec.name}: no JVP"
    assert jt.shape == y.shape and jt.dtype == y.dtype
    # Adjoint identity against the tape's VJP.
    u = _direction(rng, y.shape, y)
    gs = _backward(spec.fn, xs, u)
    lhs = _dot(u, jt)
    rhs = sum(_dot(g, t) for g, t in zip(gs, ts))
    scale = float(np.sum(np.abs(u) * np.abs(jt))) + 1e-300
    # Exact up to rounding (rows that round through float32 inside: to float32 rounding).
    rtol = 1e-10 if spec.grad_tol[0] <= 1e-6 else 1e-6
    assert abs(lhs - rhs) <= rtol * scale + 1e-12, f"<u, Jt> = {lhs} but <J^T u, t> = {rhs}"
    # Central differences along t.
    eps = spec.eps

    def f(zs):
        return np.asarray(spec.fn(*[gt.constant(z) for z in zs]).numpy())

    num = (f([x + eps * t for x, t in zip(xs, ts)]) - f([x - eps * t for x, t in zip(xs, ts)])) / (
        2 * eps
    )
    rtol, atol = spec.grad_tol
    tol = atol + rtol * max(float(np.max(np.abs(num), initial=0.0)), 1.0)
    np.testing.assert_allclose(jt, num, rtol=0, atol=10 * tol)


@pytest.mark.parametrize("spec,shapes,dtype", _params(second_order=True))
def test_forward_over_reverse_matches_reverse_over_reverse(spec, shapes, dtype):
    xs, _ = _sample(spec, shapes, dtype)
    rng = _rng(spec.id, shapes, "hvp")
    prim = [gt.constant(x) for x in xs]
    ts = [gt.constant(_direction(rng, x.shape, x)) for x in xs]
    y0 = spec.fn(*prim)
    w = gt.constant(_direction(rng, tuple(y0.shape), y0.numpy()).astype(y0.dtype.name))

    def loss(*zs):
        y = spec.fn(*zs) + 1.0
        return gt.reduce_sum(y * y * y * w)

    # Forward over reverse.
    with gt.autodiff.ForwardAccumulator(prim, ts) as acc:
        with gt.GradientTape() as tape:
            tape.watch(prim)
            out = loss(*prim)
        gs = tape.gradient(out, prim, unconnected_gradients=gt.UnconnectedGradients.ZERO)
    # A gather's gradient (IndexedSlices) has the tangent of its values at its rows.
    fwd = [gt.convert_to_tensor(acc.jvp(g, unconnected_gradients="zero")).numpy() for g in gs]
    # Reverse over reverse: the gradient of <grad, t>.
    with gt.GradientTape() as outer:
        outer.watch(prim)
        with gt.GradientTape() as inner:
            inner.watch(prim)
            out = loss(*prim)
        zero = gt.UnconnectedGradients.ZERO
        gs = [gt.convert_to_tensor(g) for g in inner.gradient(out, prim, unconnected_gradients=zero)]
        gt_dot = gt.reduce_sum(gs[0] * ts[0])
        for g, t in zip(gs[1:], ts[1:]):
            gt_dot = gt_dot + gt.reduce_sum(g * t)
    rev = [gt.convert_to_tensor(g) for g in outer.gradient(gt_dot, prim, unconnected_gradients=zero)]
    # Rows that round through float32 inside agree to float32 rounding.
    rtol = 1e-8 if spec.grad_tol[0] <= 1e-6 else 1e-5
    for a, b in zip(fwd, rev):
        b = b.numpy()
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * (1 + np.max(np.abs(b), initial=0)))


def test_every_differentiable_op_has_a_row():
    # The checks above run on exactly the table's rows; every exported op that is
    # differentiable has one (so an op without a forward rule fails above), and the
    # rows' ops are the exported differentiable ones.
    exported = _exported_ops()
    missing = sorted(exported - {s.name for s in SPECS} - set(NOT_DIFFERENTIABLE) - set(NOT_OPS) - set(DEDICATED))
    assert missing == [], f"differentiable ops not checked in forward mode: {missing}"


def test_dropout_tangent_is_mask_over_keep_prob():
    x = gt.constant(np.linspace(0.5, 2.0, 64).reshape(8, 8))
    t = gt.ones_like(x)
    with gt.autodiff.ForwardAccumulator(x, t) as acc:
        y = gt.nn.dropout(x, rate=0.5, seed=3)
    jt = acc.jvp(y).numpy()
    mask = y.numpy() != 0
    np.testing.assert_allclose(jt[mask], 2.0)
    np.testing.assert_allclose(jt[~mask], 0.0)
