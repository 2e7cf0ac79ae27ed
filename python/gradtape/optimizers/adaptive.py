"""Nadam, Adamax, Adadelta, Ftrl and Lion, with Keras 3's update rules. Each step of a
variable is one fused kernel of the crate (``gradtape::nn::optimizers``), for float16,
bfloat16, float32, float64, complex64 and complex128 variables alike (complex numbers as TF's
training ops take them: ``g * g`` for the square, ``sign(z) = z / |z|``; a maximum or a
clip compares moduli)."""

from __future__ import annotations

from typing import Any, Callable

from ._base import Optimizer


class _KernelOnly(Optimizer):
    """An optimizer whose only implementation is the crate's kernel (float16, bfloat16,
    float32, float64, complex64 and complex128 variables)."""

    def _native_rule(self) -> tuple[str, list[float]] | None:
        return None  # each subclass names its rule

    def _plan(self, var: Any, grad: Any, lr: Any, step: Any, slot: Any) -> tuple:
        raise ValueError(
            f"{type(self).__name__} updates float16, bfloat16, float32, float64, complex64 and complex128 "
            f"variables; "
            f"{var.name} is {var.dtype.name}"
        )


class Nadam(_KernelOnly):
    """Adam with Nesterov momentum. TF equivalent: ``tf.keras.optimizers.Nadam``
    (learning rate 0.001, betas 0.9 and 0.999, epsilon 1e-7).

    >>> import gradtape as gt
    >>> v = gt.Variable(1.0)
    >>> _ = gt.optimizers.Nadam(0.1).apply([gt.constant(2.0)], [v])
    >>> round(float(v), 4)
    0.8937
    """

    def __init__(
        self,
        learning_rate: float | Callable[[int], float] = 0.001,
        beta_1: float = 0.9,
        beta_2: float = 0.999,
        epsilon: float = 1e-7,
        name: str = "nadam",
        **kwargs: Any,
    ) -> None:
        super().__init__(learning_rate, name, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)

    def _native_rule(self) -> tuple[str, list[float]]:
        return "nadam", [self.beta_1, self.beta_2, self.epsilon]


class Adamax(_KernelOnly):
    """Adam with the infinity norm. TF equivalent: ``tf.keras.optimizers.Adamax``
    (learning rate 0.001, betas 0.9 and 0.999, epsilon 1e-7).

    >>> import gradtape as gt
    >>> v = gt.Variable(1.0)
    >>> _ = gt.optimizers.Adamax(0.1).apply([gt.constant(2.0)], [v])
    >>> round(float(v), 4)
    0.9
    """

    def __init__(
        self,
        learning_rate: float | Callable[[int], float] = 0.001,
        beta_1: float = 0.9,
        beta_2: float = 0.999,
        epsilon: float = 1e-7,
        name: str = "adamax",
        **kwargs: Any,
    ) -> None:
        super().__init__(learning_rate, name, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)

    def _native_rule(self) -> tuple[str, list[float]]:
        return "adamax", [self.beta_1, self.beta_2, self.epsilon]


class Adadelta(_KernelOnly):
    """TF equivalent: ``tf.keras.optimizers.Adadelta`` (learning rate 0.001, rho 0.95,
    epsilon 1e-7).

    >>> import gradtape as gt
    >>> v = gt.Variable(1.0)
    >>> _ = gt.optimizers.Adadelta(1.0).apply([gt.constant(2.0)], [v])
    >>> round(float(v), 5)
    0.99859
    """

    def __init__(
        self,
        learning_rate: float | Callable[[int], float] = 0.001,
        rho: float = 0.95,
        epsilon: float = 1e-7,
        name: str = "adadelta",
        **kwargs: Any,
    ) -> None:
        super().__init__(learning_rate, name, **kwargs)
        self.rho, self.epsilon = float(rho), float(epsilon)

    def _native_rule(self) -> tuple[str, list[float]]:
        return "adadelta", [self.rho, self.epsilon]


class Ftrl(_KernelOnly):
    """Follow the regularized leader. TF equivalent: ``tf.keras.optimizers.Ftrl``
    (learning rate 0.001, learning-rate power -0.5, initial accumulator 0.1, no
    regularization, beta 0).

    >>> import gradtape as gt
    >>> v = gt.Variable(1.0)
    >>> _ = gt.optimizers.Ftrl(0.1).apply([gt.constant(2.0)], [v])
    >>> round(float(v), 4)
    0.7451
    """

    def __init__(
        self,
        learning_rate: float | Callable[[int], float] = 0.001,
        learning_rate_power: float = -0.5,
        initial_accumulator_value: float = 0.1,
        l1_regularization_strength: float = 0.0,
        l2_regularization_strength: float = 0.0,
        l2_shrinkage_regularization_strength: float = 0.0,
        beta: float = 0.0,
        name: str = "ftrl",
        **kwargs: Any,
    ) -> None:
        super().__init__(learning_rate, name, **kwargs)
        # Keras 3's argument checks.
        if initial_accumulator_value < 0.0:
            raise ValueError(
                "`initial_accumulator_value` needs to be positive or zero. "
                f"Received: initial_accumulator_value={initial_accumulator_value}."
            )
        if learning_rate_power > 0.0:
            raise ValueError(
                "`learning_rate_power` needs to be negative or zero. "
                f"Received: learning_rate_power={learning_rate_power}."
            )
        for key, value in (
            ("l1_regularization_strength", l1_regularization_strength),
            ("l2_regularization_strength", l2_regularization_strength),
            ("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength),
        ):
            if value < 0.0:
                raise ValueError(f"`{key}` needs to be positive or zero. Received: {key}={value}.")
        self.learning_rate_power = float(learning_rate_power)
        self.initial_accumulator_value = float(initial_accumulator_value)
        self.l1_regularization_strength = float(l1_regularization_strength)
        self.l2_regularization_strength = float(l2_regularization_strength)
        self.l2_shrinkage_regularization_strength = float(l2_shrinkage_regularization_strength)
        self.beta = float(beta)

    def _native_rule(self) -> tuple[str, list[float]]:
        return "ftrl", [
            self.learning_rate_power,
            self.initial_accumulator_value,
            self.l1_regularization_strength,
            self.l2_regularization_strength,
            self.l2_shrinkage_regularization_strength,
            self.beta,
        ]

    def _slot_initial(self, key: str, var: Any) -> Any:
        from .._gradtape import constant, fill

        if key == "accumulator":
            return fill(tuple(var.shape), constant(self.initial_accumulator_value, dtype=var.dtype))
        return super()._slot_initial(key, var)


class Lion(_KernelOnly):
    """Evolved sign momentum. TF equivalent: ``tf.keras.optimizers.Lion`` (learning
    rate 0.001, betas 0.9 and 0.99).

    >>> import gradtape as gt
    >>> v = gt.Variable(1.0)
    >>> _ = gt.optimizers.Lion(0.1).apply([gt.constant(2.0)], [v])
    >>> round(float(v), 4)
    0.9
    """

    def __init__(
        self,
        learning_rate: float | Callable[[int], float] = 0.001,
        beta_1: float = 0.9,
        beta_2: float = 0.99,
        name: str = "lion",
        **kwargs: Any,
    ) -> None:
        super().__init__(learning_rate, name, **kwargs)
        if beta_1 <= 0 or beta_1 > 1:
            raise ValueError(f"Argument `beta_1` must be in the [0, 1] range. Received: beta_1={beta_1}.")
        self.beta_1, self.beta_2 = float(beta_1), float(beta_2)

    def _native_rule(self) -> tuple[str, list[float]]:
        return "lion", [self.beta_1, self.beta_2]
