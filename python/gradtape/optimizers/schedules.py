"""Learning-rate schedules. TF equivalent: ``tf.keras.optimizers.schedules``.

A schedule is called with the optimizer's step counter (a Python int when eager,
a tensor inside ``gt.function``) and returns the learning rate as a float32 tensor,
computed as Keras 3 computes it.

>>> import gradtape as gt
>>> s = gt.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
>>> round(float(s(10)), 6)
0.05
"""

from __future__ import annotations

import math
from typing import Any

from .._gradtape import cast, convert_to_tensor, cos, floor, minimum, pow, where


def _step(step: Any, dtype: Any) -> Any:
    return cast(convert_to_tensor(step), dtype)


class LearningRateSchedule:
    """Base class. TF equivalent: ``tf.keras.optimizers.schedules.LearningRateSchedule``."""

    def __call__(self, step: Any) -> Any:
        raise NotImplementedError(
            f"Learning rate schedule '{type(self).__name__}' must override `__call__(self, step)`."
        )

    def get_config(self) -> dict:
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    @classmethod
    def from_config(cls, config: dict) -> Any:
        return cls(**config)


class ExponentialDecay(LearningRateSchedule):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)`` (the exponent
    floored when ``staircase``). TF equivalent: ``tf.keras.optimizers.schedules.ExponentialDecay``."""

    def __init__(
        self,
        initial_learning_rate: float,
        decay_steps: int,
        decay_rate: float,
        staircase: bool = False,
        name: str = "ExponentialDecay",
    ) -> None:
        if decay_steps <= 0:
            raise ValueError(f"Argument `decay_steps` must be > 0. Received: decay_steps={decay_steps}")
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name

    def __call__(self, step: Any) -> Any:
        lr = convert_to_tensor(self.initial_learning_rate)
        p = _step(step, lr.dtype) / cast(self.decay_steps, lr.dtype)
        if self.staircase:
            p = floor(p)
        return lr * pow(cast(self.decay_rate, lr.dtype), p)


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[i]`` while ``boundaries[i-1] < step <= boundaries[i]``.
    TF equivalent: ``tf.keras.optimizers.schedules.PiecewiseConstantDecay``."""

    def __init__(self, boundaries: list, values: list, name: str = "PiecewiseConstant") -> None:
        if len(boundaries) != len(values) - 1:
            raise ValueError(
                "The length of boundaries should be 1 less than the length of values. "
                f"Received: boundaries={boundaries} of length {len(boundaries)}, and "
                f"values={values} of length {len(values)}."
            )
        self.boundaries = list(boundaries)
        self.values = list(values)
        self.name = name

    def __call__(self, step: Any) -> Any:
        values = [convert_to_tensor(v) for v in self.values]
        dtype = values[0].dtype
        s = _step(step, "float64")
        out = cast(s <= float(self.boundaries[0]), dtype) * values[0]
        out = out + cast(s > float(self.boundaries[-1]), dtype) * values[-1]
        for low, high, v in zip(self.boundaries[:-1], self.boundaries[1:], values[1:-1]):
            inside = cast((s > float(low)) & (s <= float(high)), dtype)
            out = out + inside * v
        return out


class CosineDecay(LearningRateSchedule):
    """Cosine decay from ``initial_learning_rate`` to ``alpha`` times it over
    ``decay_steps``, after an optional linear warm-up to ``warmup_target``.
    TF equivalent: ``tf.keras.optimizers.schedules.CosineDecay``."""

    def __init__(
        self,
        initial_learning_rate: float,
        decay_steps: int,
        alpha: float = 0.0,
        name: str = "CosineDecay",
        warmup_target: float | None = None,
        warmup_steps: int = 0,
    ) -> None:
        if decay_steps <= 0:
            raise ValueError(f"Argument `decay_steps` must be > 0. Received: decay_steps={decay_steps}")
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.alpha = alpha
        self.name = name
        self.warmup_target = warmup_target
        self.warmup_steps = warmup_steps

    def _decay(self, step: Any, decay_steps: Any, from_lr: Any, dtype: Any) -> Any:
        frac = step / decay_steps
        cosine = 0.5 * (1.0 + cos(cast(math.pi, dtype) * frac))
        return from_lr * ((1 - self.alpha) * cosine + self.alpha)

    def __call__(self, step: Any) -> Any:
        lr = convert_to_tensor(self.initial_learning_rate)
        dtype = lr.dtype
        decay_steps = cast(self.decay_steps, dtype)
        s = _step(step, dtype)
        if self.warmup_target is None:
            return self._decay(minimum(s, decay_steps), decay_steps, lr, dtype)
        target = cast(self.warmup_target, dtype)
        warm = cast(self.warmup_steps, dtype)
        s = minimum(s, decay_steps + warm)
        warmup = (target - lr) * (s / warm) + lr if self.warmup_steps else lr
        return where(s < warm, warmup, self._decay(s - warm, decay_steps, target, dtype))


__all__ = ["LearningRateSchedule", "ExponentialDecay", "PiecewiseConstantDecay", "CosineDecay"]
