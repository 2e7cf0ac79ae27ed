"""RMSprop and Adagrad, with Keras 3's update rules."""

from __future__ import annotations

from typing import Any, Callable

from .._gradtape import constant, fill, sqrt
from ._base import Optimizer


class RMSprop(Optimizer):
    """TF equivalent: ``tf.keras.optimizers.RMSprop`` (learning rate 0.001, rho 0.9,
    no momentum, epsilon 1e-7, not centered).

    >>> import gradtape as gt
    >>> v = gt.Variable(1.0)
    >>> _ = gt.optimizers.RMSprop(0.1).apply([gt.constant(2.0)], [v])
    >>> round(float(v), 4)
    0.6838
    """

    def __init__(
        self,
        learning_rate: float | Callable[[int], float] = 0.001,
        rho: float = 0.9,
        momentum: float = 0.0,
        epsilon: float = 1e-7,
        centered: bool = False,
        name: str = "rmsprop",
        **kwargs: Any,
    ) -> None:
        super().__init__(learning_rate, name, **kwargs)
        self.rho, self.momentum, self.epsilon = float(rho), float(momentum), float(epsilon)
        self.centered = bool(centered)

    def _native_rule(self) -> tuple[str, list[float]]:
        return "rmsprop", [self.rho, self.momentum, self.epsilon, float(self.centered)]

    def _plan(self, var: Any, grad: Any, lr: Any, step: Any, slot: Any) -> tuple:
        rho = self.rho
        velocity = slot("velocity") * rho + grad * grad * (1 - rho)
        slots = {"velocity": velocity}
        if self.centered:
            avg = slot("average_gradient") * rho + grad * (1 - rho)
            slots["average_gradient"] = avg
            denom = velocity - avg * avg + self.epsilon
        else:
            denom = velocity + self.epsilon
        increment = (grad * lr) / sqrt(denom)
        if self.momentum > 0:
            m = slot("momentum") * self.momentum + increment
            slots["momentum"] = m
            return slots, "assign_sub", m
        return slots, "assign_sub", increment


class Adagrad(Optimizer):
    """TF equivalent: ``tf.keras.optimizers.Adagrad`` (learning rate 0.001, initial
    accumulator 0.1, epsilon 1e-7).

    >>> import gradtape as gt
    >>> v = gt.Variable(1.0)
    >>> _ = gt.optimizers.Adagrad(0.1).apply([gt.constant(2.0)], [v])
    >>> round(float(v), 4)
    0.9012
    """

    def __init__(
        self,
        learning_rate: float | Callable[[int], float] = 0.001,
        initial_accumulator_value: float = 0.1,
        epsilon: float = 1e-7,
        name: str = "adagrad",
        **kwargs: Any,
    ) -> None:
        super().__init__(learning_rate, name, **kwargs)
        if initial_accumulator_value < 0:
            raise ValueError(f"`initial_accumulator_value` must be non-negative, got {initial_accumulator_value}")
        self.initial_accumulator_value = float(initial_accumulator_value)
        self.epsilon = float(epsilon)

    def _native_rule(self) -> tuple[str, list[float]]:
        return "adagrad", [self.initial_accumulator_value, self.epsilon]

    def _plan(self, var: Any, grad: Any, lr: Any, step: Any, slot: Any) -> tuple:
        acc = slot("accumulator") + grad * grad
        return {"accumulator": acc}, "assign_sub", (grad * lr) / sqrt(acc + self.epsilon)

    def _slot_initial(self, key: str, var: Any) -> Any:
        # The value in the variable's dtype directly (not through float32), as Keras' Constant.
        return fill(tuple(var.shape), constant(self.initial_accumulator_value, dtype=var.dtype))
