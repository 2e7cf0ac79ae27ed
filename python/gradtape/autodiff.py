"""Derivative helpers built from nested tapes. TF equivalent: ``tf.autodiff``.

``hessian`` and ``hessian_vector_product`` are not in TensorFlow: they package the
nested-tape patterns of TF's advanced autodiff guide (a ``jacobian`` of a gradient, and
the gradient of ``<grad f, v>``) so they need not be rewritten each time.

>>> import gradtape as gt
>>> x = gt.constant([1.0, 2.0])
>>> gt.autodiff.hessian(lambda x: gt.reduce_sum(x**3), x).numpy().tolist()
[[6.0, 0.0], [0.0, 12.0]]
>>> v = gt.constant([1.0, 1.0])
>>> gt.autodiff.hessian_vector_product(lambda x: gt.reduce_sum(x**3), x, v).numpy().tolist()
[6.0, 12.0]
"""

from __future__ import annotations

from typing import Any, Callable

from ._gradtape import Tensor as _Tensor
from ._gradtape import Variable as _Variable
from ._gradtape import convert_to_tensor as _convert
from ._gradtape import reduce_sum as _reduce_sum
from ._gradtape import zeros_like as _zeros_like
from ._tape import GradientTape, UnconnectedGradients

__all__ = ["hessian", "hessian_vector_product"]


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
    return inner.gradient(y, x, unconnected_gradients=UnconnectedGradients.ZERO)


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


def hessian_vector_product(f: Callable[[Any], Any], x: Any, v: Any) -> _Tensor:
    """``H @ v`` for the Hessian ``H`` of the scalar function ``f`` at ``x``, without
    forming ``H``: the gradient of ``<grad f(x), v>`` (a double backward pass, costing
    about two gradients). TF equivalent: none (the gradient of ``tf.reduce_sum(g * v)``
    under an outer ``tf.GradientTape``, as TF's guide shows).

    ``v`` has the shape of ``x``, and so has the result (``H`` is contracted over all
    of ``x``'s axes).

    >>> import gradtape as gt
    >>> f = lambda x: gt.reduce_sum(gt.sin(x))
    >>> x, v = gt.constant([0.0, 1.5]), gt.constant([2.0, 1.0])
    >>> [round(t, 4) for t in gt.autodiff.hessian_vector_product(f, x, v).numpy().tolist()]
    [-0.0, -0.9975]
    """
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
    with GradientTape(watch_accessed_variables=False) as outer:
        outer.watch(x)
        g = _gradient_under(f, x, "hessian_vector_product")
        gv = _reduce_sum(g * v)
    hv = outer.gradient(gv, x, unconnected_gradients=UnconnectedGradients.ZERO)
    return hv if hv is not None else _zeros_like(x)
