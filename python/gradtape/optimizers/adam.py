"""Adam."""

from __future__ import annotations

from typing import Any, Callable

import math

from .._gradtape import Tensor, cast, constant, maximum, pow, sqrt
from .._indexed_slices import IndexedSlices, _densify
from ._base import Optimizer


class Adam(Optimizer):
    """TF equivalent: ``tf.keras.optimizers.Adam`` (learning rate 0.001, betas 0.9 and
    0.999, epsilon 1e-7), with Keras' update order.

    >>> import gradtape as gt
    >>> v = gt.Variable(1.0)
    >>> _ = gt.optimizers.Adam(0.1).apply_gradients([(gt.constant(2.0), v)])
    >>> round(float(v), 5)
    0.9
    """

    _sparse_updates = True

    def __init__(
        self,
        learning_rate: float | Callable[[int], float] = 0.001,
        beta_1: float = 0.9,
        beta_2: float = 0.999,
        epsilon: float = 1e-7,
        amsgrad: bool = False,
        name: str = "Adam",
        **kwargs: Any,
    ) -> None:
        super().__init__(learning_rate, name, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        self.amsgrad = bool(amsgrad)

    def _native_rule(self) -> tuple[str, list[float]]:
        return "adam", [self.beta_1, self.beta_2, self.epsilon, float(self.amsgrad)]

    def _native_grads(self, grad: Any) -> tuple[Any, Any] | None:
        if isinstance(grad, IndexedSlices):
            # As `_plan`: the rows squared before they are summed.
            sq = _densify(IndexedSlices(grad.values * grad.values, grad.indices, grad.dense_shape))
            return _densify(grad), sq
        return grad, None

    def _plan(self, var: Any, grad: Any, lr: Any, step: Any, slot: Any) -> tuple:
        b1, b2 = self.beta_1, self.beta_2
        m, v = slot("m"), slot("v")
        if var.dtype.is_complex:
            if isinstance(step, Tensor):
                if isinstance(lr, Tensor):  # a schedule's value
                    lr = cast(lr, "float64")
                alpha = cast(lr * sqrt(1.0 - pow(b2, step)) / (1.0 - pow(b1, step)), var.dtype)
            else:
                alpha = lr * math.sqrt(1.0 - b2**step) / (1.0 - b1**step)
        else:
            # Keras 3: in the variable's dtype (the crate's kernel computes it so too).
            d = var.dtype
            t = cast(step, d) if isinstance(step, Tensor) else constant(float(step), dtype=d)
            lr_d = cast(lr, d) if isinstance(lr, Tensor) else constant(lr, dtype=d)
            alpha = lr_d * sqrt(1.0 - pow(constant(b2, dtype=d), t)) / (1.0 - pow(constant(b1, dtype=d), t))
        if isinstance(grad, IndexedSlices):
            # TF (Keras 3): a sparse gradient is squared row by row before its rows are
            # added up (a row gathered twice adds two squares to v), then densified.
            sq = _densify(IndexedSlices(grad.values * grad.values, grad.indices, grad.dense_shape))
            grad = _densify(grad)
        else:
            sq = grad * grad
        m = m + (grad - m) * (1.0 - b1)
        v = v + (sq - v) * (1.0 - b2)
        slots = {"m": m, "v": v}
        denom_src = v
        if self.amsgrad:
            slots["vhat"] = denom_src = maximum(slot("vhat"), v)
        return slots, "assign_sub", (m * alpha) / (sqrt(denom_src) + self.epsilon)


class AdamW(Adam):
    """Adam with decoupled weight decay. TF equivalent: ``tf.keras.optimizers.AdamW``
    (weight decay 0.004: ``var -= var * weight_decay * lr`` before each Adam step).

    >>> import gradtape as gt
    >>> v = gt.Variable(1.0)
    >>> _ = gt.optimizers.AdamW(0.1).apply([gt.constant(2.0)], [v])
    >>> round(float(v), 5)
    0.8996
    """

    def __init__(
        self,
        learning_rate: float | Callable[[int], float] = 0.001,
        weight_decay: float = 0.004,
        beta_1: float = 0.9,
        beta_2: float = 0.999,
        epsilon: float = 1e-7,
        amsgrad: bool = False,
        name: str = "adamw",
        **kwargs: Any,
    ) -> None:
        if weight_decay is None:
            raise ValueError("Argument `weight_decay` must be a float. Received: weight_decay=None")
        super().__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad, name, weight_decay=weight_decay, **kwargs)
