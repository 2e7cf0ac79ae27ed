"""Stochastic gradient descent, optionally with (Nesterov) momentum."""

from __future__ import annotations

from typing import Any, Callable

from .._indexed_slices import IndexedSlices, _densify
from ._base import Optimizer


class SGD(Optimizer):
    """TF equivalent: ``tf.keras.optimizers.SGD`` (same defaults: learning rate 0.01,
    no momentum).

    >>> import gradtape as gt
    >>> v = gt.Variable(1.0)
    >>> _ = gt.optimizers.SGD(0.1).apply_gradients([(gt.constant(2.0), v)])
    >>> round(float(v), 6)
    0.8
    """

    _sparse_updates = True

    def __init__(
        self,
        learning_rate: float | Callable[[int], float] = 0.01,
        momentum: float = 0.0,
        nesterov: bool = False,
        name: str = "SGD",
        **kwargs: Any,
    ) -> None:
        super().__init__(learning_rate, name, **kwargs)
        if not 0.0 <= momentum <= 1.0:
            raise ValueError("`momentum` must be in the range [0, 1].")
        self.momentum = float(momentum)
        self.nesterov = bool(nesterov)

    def _native_rule(self) -> tuple[str, list[float]]:
        return "sgd", [self.momentum, float(self.nesterov)]

    def _native_grads(self, grad: Any) -> tuple[Any, Any] | None:
        if isinstance(grad, IndexedSlices) and self.momentum == 0.0:
            return None  # stays a scatter of the scaled rows (as TF)
        return super()._native_grads(grad)

    def _plan(self, var: Any, grad: Any, lr: Any, step: Any, slot: Any) -> tuple:
        if isinstance(grad, IndexedSlices):
            # TF (Keras): a sparse gradient's rows scaled and scatter-subtracted without
            # momentum; with momentum, densified into the momentum update.
            if self.momentum == 0.0:
                return {}, "assign_sub", _densify(IndexedSlices(grad.values * lr, grad.indices, grad.dense_shape))
            grad = _densify(grad)
        if self.momentum == 0.0:
            return {}, "assign_sub", grad * lr
        m = slot("momentum") * self.momentum - grad * lr
        if self.nesterov:
            return {"momentum": m}, "assign_add", m * self.momentum - grad * lr
        return {"momentum": m}, "assign_add", m
