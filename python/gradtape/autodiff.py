"""Forward mode and derivative helpers. TF equivalent: ``tf.autodiff``.

``ForwardAccumulator`` is TF's forward-mode API. ``hessian`` and
``hessian_vector_product`` are not in TensorFlow: they package the nested-tape
patterns of TF's advanced autodiff guide (a ``jacobian`` of a gradient, and the
derivative of the gradient along ``v``) so they need not be rewritten each time.
``jvp``, ``vjp`` and ``linearize`` are not in TensorFlow either: they are the functional
forms JAX users know, with JAX's return values.

>>> import gradtape as gt
>>> x = gt.constant([1.0, 2.0])
>>> gt.autodiff.hessian(lambda x: gt.reduce_sum(x**3), x).numpy().tolist()
[[6.0, 0.0], [0.0, 12.0]]
>>> v = gt.constant([1.0, 1.0])
>>> gt.autodiff.hessian_vector_product(lambda x: gt.reduce_sum(x**3), x, v).numpy().tolist()
[6.0, 12.0]
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from . import _nest
from ._gradtape import Tensor as _Tensor
from ._gradtape import _ForwardAccumulator
from ._gradtape import Variable as _Variable
from ._gradtape import convert_to_tensor as _convert
from ._gradtape import reduce_sum as _reduce_sum
from ._gradtape import ones_like as _ones_like
from ._gradtape import zeros_like as _zeros_like
from ._tape import GradientTape, UnconnectedGradients
from ._indexed_slices import IndexedSlices, _densify

__all__ = [
    "ForwardAccumulator", "hessian", "hessian_vector_product", "jvp", "linearize", "vjp",
]

_log = logging.getLogger("gradtape")


class ForwardAccumulator(_ForwardAccumulator):
    """Computes Jacobian-vector products ("JVPs") in forward mode. TF equivalent:
    ``tf.autodiff.ForwardAccumulator``.

    ``primals`` (a tensor, variable or nested structure of them) are watched with
    ``tangents`` (the same structure, each of its primal's shape; Python values are
    converted to the primal's dtype). While the accumulator is active (inside its
    ``with`` block) every op that reads a tensor with a tangent computes its outputs'
    tangents at once; ``jvp`` only looks them up, inside or after the block. Listing a
    tensor twice in ``primals`` is a ``ValueError``; an integer primal gets no tangent
    (its JVPs are ``None``).

    Accumulators and tapes see each other in the order they were entered: an outer
    accumulator sees what an inner one computes (higher-order JVPs), an inner tape does
    not record an outer accumulator's tangents, and an accumulator around a tape sees its
    ``gradient`` computation (forward-over-reverse Hessian-vector products).

    >>> import gradtape as gt
    >>> x = gt.constant(1.1)
    >>> with gt.autodiff.ForwardAccumulator(x, gt.constant(1.0)) as outer:
    ...     with gt.autodiff.ForwardAccumulator(x, gt.constant(1.0)) as inner:
    ...         y = x ** 3.5
    >>> print(inner.jvp(y))  # 3.5 * 1.1 ** 2.5
    gt.Tensor(4.4417057, shape=(), dtype=float32)
    >>> print(outer.jvp(inner.jvp(y)))  # 3.5 * 2.5 * 1.1 ** 1.5
    gt.Tensor(10.094786, shape=(), dtype=float32)
    >>> v = gt.Variable([1.0, 2.0])
    >>> with gt.autodiff.ForwardAccumulator(v, gt.constant([1.0, 0.0])) as acc:
    ...     with gt.GradientTape() as tape:
    ...         y = gt.reduce_sum(v ** 3.0)
    ...     backward = tape.gradient(y, v)
    >>> print(acc.jvp(backward))  # forward-over-reverse Hessian-vector product
    gt.Tensor([6. 0.], shape=(2,), dtype=float32)
    """

    def __init__(self, primals: Any, tangents: Any) -> None:
        seen = set()
        for p in _nest.flatten(primals):
            if id(p) in seen:
                raise ValueError(
                    f"Tensor {p} was specified as a primal multiple times. This may "
                    "indicate an error. If it was intended, please sum the corresponding "
                    "tangents."
                )
            seen.add(id(p))
        self._watch(primals, tangents)

    def __enter__(self) -> ForwardAccumulator:
        self._push()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._recording:
            self._pop()

    def _watch(self, primals: Any, tangents: Any) -> None:
        """Watches ``primals`` with ``tangents`` (same structure). Watching a tensor
        again adds its tangents."""
        flat_p = _nest.flatten(primals)
        flat_t = _nest.flatten(tangents)
        if len(flat_p) != len(flat_t) or _nest.is_nested(primals) != _nest.is_nested(tangents):
            raise ValueError(
                "ForwardAccumulator: `primals` and `tangents` must have the same "
                f"structure, got {len(flat_p)} primals and {len(flat_t)} tangents"
            )
        for p, t in zip(flat_p, flat_t):
            if self._watch_one(p, t):
                _log.warning(
                    "The dtype of the watched primal must be floating (e.g. gt.float32), "
                    "got %s: its JVPs will be None", p.dtype.name,
                )

    def jvp(
        self,
        primals: Any,
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
    ) -> Any:
        """The JVPs computed for ``primals`` (a tensor, variable or nested structure),
        in its structure. Performs no computation. A tensor with no JVP gives ``None``,
        or zeros with ``unconnected_gradients="zero"``. TF equivalent:
        ``tf.autodiff.ForwardAccumulator.jvp``.

        >>> import gradtape as gt
        >>> x, y = gt.constant(-1.0), gt.constant(-2.0)
        >>> with gt.autodiff.ForwardAccumulator(x, 0.5) as acc:
        ...     z = x * 4.0
        >>> acc.jvp({"x": x, "z": z})
        {'x': <gt.Tensor: shape=(), dtype=float32, numpy=0.5>, 'z': <gt.Tensor: shape=(), dtype=float32, numpy=2.0>}
        >>> print(acc.jvp(y))
        None
        >>> print(acc.jvp(y, unconnected_gradients="zero"))
        gt.Tensor(0.0, shape=(), dtype=float32)
        """
        zero = UnconnectedGradients(unconnected_gradients) is UnconnectedGradients.ZERO

        def fetch(t: Any) -> Any:
            if isinstance(t, IndexedSlices):
                # A gather's gradient: the tangent of its values, at the same rows.
                v = fetch(t.values)
                return None if v is None else IndexedSlices(v, t.indices, t.dense_shape)
            r = self._jvp_one(t)
            if r is None and zero:
                r = _zeros_like(t)
            return r

        return _nest.map_structure(fetch, primals)



def _source(x: Any, what: str) -> Any:
    if isinstance(x, (_Tensor, _Variable)):
        t = x
    else:
        t = _convert(x)
    if not t.dtype.is_floating:
        raise TypeError(f"{what}: `x` must have a floating dtype, got {t.dtype.name}")
    return t


def _scalar(y: Any, what: str) -> Any:
    if not isinstance(y, (_Tensor, _Variable)):
        y = _convert(y)
    if y.ndim != 0:
        raise ValueError(f"{what}: `f(x)` must return a scalar, got shape {tuple(y.shape)}")
    return y


def _gradient_under(f: Callable[[Any], Any], x: Any, what: str) -> Any:
    """``grad f(x)``, computed while an outer tape records, so it can be differentiated again.
    Zeros when ``f`` does not depend on ``x``."""
    with GradientTape(watch_accessed_variables=False) as inner:
        inner.watch(x)
        y = _scalar(f(x), what)
    return _densify(inner.gradient(y, x, unconnected_gradients=UnconnectedGradients.ZERO))


def hessian(f: Callable[[Any], Any], x: Any) -> _Tensor:
    """The Hessian of the scalar function ``f`` at ``x``: the Jacobian of its
    gradient, of shape ``x.shape + x.shape``. TF equivalent: none (TF's guide
    computes it as ``tape.jacobian`` of an inner ``tape.gradient``).

    ``f`` takes one tensor (or variable) and returns a scalar tensor. The result is
    the ``jacobian`` of the gradient, computed with two nested tapes, so every op
    ``f`` uses must have a differentiable gradient (all gt ops do). Entries ``f`` does
    not depend on are zeros.

    >>> import gradtape as gt
    >>> a = gt.constant([[1.0, 2.0], [0.0, 3.0]])
    >>> def f(x):
    ...     return gt.reduce_sum(x * gt.reshape(a @ gt.reshape(x, [2, 1]), [2]))  # x^T A x
    >>> gt.autodiff.hessian(f, gt.constant([1.0, -1.0])).numpy().tolist()  # A + A^T
    [[2.0, 2.0], [2.0, 6.0]]
    """
    x = _source(x, "hessian")
    with GradientTape(watch_accessed_variables=False) as outer:
        outer.watch(x)
        g = _gradient_under(f, x, "hessian")
    return outer.jacobian(g, x, unconnected_gradients=UnconnectedGradients.ZERO)


def hessian_vector_product(
    f: Callable[[Any], Any], x: Any, v: Any, mode: str = "reverse_over_reverse"
) -> _Tensor:
    """``H @ v`` for the Hessian ``H`` of the scalar function ``f`` at ``x``, without
    forming ``H``. TF equivalent: none (TF's guide and ``tf.autodiff.ForwardAccumulator``'s
    documentation show both ways).

    ``mode="reverse_over_reverse"`` (the default) takes the gradient of
    ``<grad f(x), v>`` under an outer tape: a second backward pass through the first.
    ``mode="forward_over_reverse"`` runs the gradient of ``f`` under a
    ``ForwardAccumulator`` watching ``x`` with tangent ``v``: the tangent of the
    gradient is ``H v``, computed alongside the backward pass, and no tape records the
    backward pass (less memory). Both give the same numbers; in ``benches/hvp.py``
    forward over reverse takes 1.0 to 1.3 times as long.

    ``v`` has the shape of ``x``, and so has the result (``H`` is contracted over all
    of ``x``'s axes).

    >>> import gradtape as gt
    >>> f = lambda x: gt.reduce_sum(gt.sin(x))
    >>> x, v = gt.constant([0.0, 1.5]), gt.constant([2.0, 1.0])
    >>> [round(t, 4) for t in gt.autodiff.hessian_vector_product(f, x, v).numpy().tolist()]
    [-0.0, -0.9975]
    >>> hv = gt.autodiff.hessian_vector_product(f, x, v, mode="forward_over_reverse")
    >>> [round(t, 4) for t in hv.numpy().tolist()]
    [-0.0, -0.9975]
    """
    if mode not in ("forward_over_reverse", "reverse_over_reverse"):
        raise ValueError(
            "hessian_vector_product: `mode` must be 'forward_over_reverse' or "
            f"'reverse_over_reverse', got {mode!r}"
        )
    x = _source(x, "hessian_vector_product")
    v = _convert(v, dtype=x.dtype) if not isinstance(v, (_Tensor, _Variable)) else v
    if tuple(v.shape) != tuple(x.shape):
        raise ValueError(
            f"hessian_vector_product: `v` must have the shape of `x` {tuple(x.shape)}, "
            f"got {tuple(v.shape)}"
        )
    if v.dtype != x.dtype:
        raise TypeError(
            f"hessian_vector_product: `v` must have the dtype of `x` ({x.dtype.name}), "
            f"got {v.dtype.name}"
        )
    if mode == "forward_over_reverse":
        with ForwardAccumulator(x, v) as acc:
            g = _gradient_under(f, x, "hessian_vector_product")
        return acc.jvp(g, unconnected_gradients=UnconnectedGradients.ZERO)
    with GradientTape(watch_accessed_variables=False) as outer:
        outer.watch(x)
        g = _gradient_under(f, x, "hessian_vector_product")
        gv = _reduce_sum(g * v)
    hv = _densify(outer.gradient(gv, x, unconnected_gradients=UnconnectedGradients.ZERO))
    return hv if hv is not None else _zeros_like(x)


def _function(f: Any, what: str) -> None:
    if not callable(f):
        raise TypeError(f"{what}: `f` must be callable, got {type(f).__name__}")


def _args(xs: Any, what: str, name: str) -> list:
    """The positional arguments of ``f``: a list or tuple of tensors (or one tensor)."""
    if isinstance(xs, (list, tuple)):
        items = list(xs)
    else:
        items = [xs]
    return [
        x if isinstance(x, (_Tensor, _Variable)) else _convert(x) for x in items
    ]


def jvp(f: Callable[..., Any], primals: Any, tangents: Any) -> tuple[Any, Any]:
    """``(f(*primals), J @ tangents)``: the value of ``f`` and its Jacobian-vector
    product, in one forward pass. TF equivalent: none (a ``ForwardAccumulator`` around
    the call); JAX's ``jax.jvp``, with the same arguments and return value.

    ``primals`` and ``tangents`` are lists or tuples (one entry per argument of ``f``;
    a single tensor is one argument) of tensors, variables or values, each tangent of
    its primal's shape. The tangent has the structure of ``f``'s output; outputs that do
    not depend on the primals get zeros.

    >>> import gradtape as gt
    >>> y, t = gt.autodiff.jvp(lambda a, b: a * b, (gt.constant(3.0), gt.constant(4.0)),
    ...                        (gt.constant(1.0), gt.constant(0.0)))
    >>> float(y), float(t)
    (12.0, 4.0)
    """
    _function(f, "jvp")
    ps = _args(primals, "jvp", "primals")
    ts = list(tangents) if isinstance(tangents, (list, tuple)) else [tangents]
    if len(ps) != len(ts):
        raise ValueError(f"jvp: {len(ps)} primals but {len(ts)} tangents")
    with ForwardAccumulator(ps, ts) as acc:
        out = f(*ps)
    return out, acc.jvp(out, unconnected_gradients=UnconnectedGradients.ZERO)


def vjp(f: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[[Any], tuple]]:
    """``(f(*primals), vjp_fn)`` where ``vjp_fn(cotangents)`` returns the tuple of the
    vector-Jacobian products ``cotangents @ J``, one per primal. TF equivalent: none (a
    persistent ``GradientTape`` and its ``gradient`` with ``output_gradients``); JAX's
    ``jax.vjp``, with the same return value.

    ``f`` runs once, under a persistent tape; ``vjp_fn`` may be called any number of
    times (each call is one backward pass). ``cotangents`` has the structure of ``f``'s
    output; primals the output does not depend on get zeros.

    >>> import gradtape as gt
    >>> y, vjp_fn = gt.autodiff.vjp(lambda a, b: a * b, gt.constant(3.0), gt.constant(4.0))
    >>> [float(g) for g in vjp_fn(gt.constant(2.0))]
    [8.0, 6.0]
    """
    _function(f, "vjp")
    ps = _args(primals, "vjp", "primals")
    tape = GradientTape(persistent=True, watch_accessed_variables=False)
    with tape:
        tape.watch(ps)
        out = f(*ps)

    def vjp_fn(cotangents: Any) -> tuple:
        gs = tape.gradient(
            out, ps, output_gradients=cotangents,
            unconnected_gradients=UnconnectedGradients.ZERO,
        )
        return tuple(_densify(g) for g in gs)

    return out, vjp_fn


def linearize(f: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(f(*primals), f_jvp)`` where ``f_jvp(*tangents)`` returns ``J @ tangents`` at
    ``primals``, for any number of tangents, without running ``f`` again.
    TF equivalent: none; JAX's ``jax.linearize``, with the same return value.

    ``f`` runs once, with its backward pass recorded on a persistent tape; each
    ``f_jvp`` call is one backward pass through that recording (the VJP is linear, and
    its transpose is the JVP), so it costs about one gradient.

    >>> import gradtape as gt
    >>> y, f_jvp = gt.autodiff.linearize(gt.sin, gt.constant([0.0, 1.0]))
    >>> [round(v, 4) for v in f_jvp(gt.constant([2.0, 1.0])).numpy().tolist()]
    [2.0, 0.5403]
    """
    _function(f, "linearize")
    ps = _args(primals, "linearize", "primals")
    outer = GradientTape(persistent=True, watch_accessed_variables=False)
    with outer:
        with GradientTape(watch_accessed_variables=False) as inner:
            inner.watch(ps)
            out = f(*ps)
        flat = [o if isinstance(o, (_Tensor, _Variable)) else _convert(o) for o in _nest.flatten(out)]
        aids = [_ones_like(o) for o in flat]
        outer.watch([a for a in aids if a.dtype.is_floating or a.dtype.is_complex])
        gs = [_densify(g) for g in inner.gradient(
            flat, ps, output_gradients=aids, unconnected_gradients=UnconnectedGradients.ZERO
        )]

    def f_jvp(*tangents: Any) -> Any:
        if len(tangents) != len(ps):
            raise ValueError(f"linearize: f_jvp takes {len(ps)} tangents, got {len(tangents)}")
        ts = [_convert(t, dtype=p.dtype) if not isinstance(t, (_Tensor, _Variable)) else t
              for t, p in zip(tangents, ps)]
        for t, p in zip(ts, ps):
            if tuple(t.shape) != tuple(p.shape):
                raise ValueError(
                    f"linearize: a tangent of shape {tuple(t.shape)} for a primal of "
                    f"shape {tuple(p.shape)}"
                )
        used = [(g, t) for g, t in zip(gs, ts) if g is not None]
        jt = outer.gradient(
            [g for g, _ in used], aids, output_gradients=[t for _, t in used],
            unconnected_gradients=UnconnectedGradients.ZERO,
        )
        jt = [_densify(j) if j is not None else _zeros_like(o) for j, o in zip(jt, flat)]
        return _nest.pack_sequence_as(out, jt)

    return out, f_jvp
