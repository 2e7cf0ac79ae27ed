"""The optimizer base: ``apply_gradients``, slots, the step counter."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Union

from .._gradtape import Tensor, stop_gradient
from .._gradtape import Variable as _NativeVariable
from .._variable import Variable


class Optimizer:
    """Base class. TF equivalent: ``tf.keras.optimizers.Optimizer``.

    Subclasses implement ``_update(var, grad, slots, step)``.
    """

    def __init__(self, learning_rate: float | Callable[[int], float], name: str) -> None:
        self.learning_rate = learning_rate
        self.name = name
        self.iterations = Variable(0, trainable=False, name="iteration", dtype="int64")
        self._slots: dict[int, dict[str, Variable]] = {}

    def _slot(self, var: _NativeVariable, key: str, init: Callable[[Any], Any]) -> Variable:
        slots = self._slots.setdefault(var._unique_id, {})
        if key not in slots:
            slots[key] = Variable(init(var), trainable=False, name=f"{var.name.split(':')[0]}/{key}")
        return slots[key]

    def _lr(self) -> float:
        lr = self.learning_rate
        return float(lr(int(self.iterations.numpy()))) if callable(lr) else float(lr)

    def apply_gradients(
        self, grads_and_vars: Iterable[tuple[Union[Tensor, None], _NativeVariable]]
    ) -> Variable:
        """Applies one update per ``(gradient, variable)`` pair; ``None`` gradients
        are skipped. Returns the step counter."""
        pairs = [(g, v) for g, v in grads_and_vars]
        if not pairs:
            return self.iterations
        live = [(g, v) for g, v in pairs if g is not None]
        if not live:
            raise ValueError(
                "No gradients provided for any variable: "
                + ", ".join(v.name for _, v in pairs)
            )
        step = int(self.iterations.numpy()) + 1
        lr = self._lr()
        for g, v in live:
            if not isinstance(v, Variable.__mro__[1]):
                raise TypeError(f"apply_gradients expects Variables, got {type(v).__name__}")
            if tuple(g.shape) != tuple(v.shape):
                raise ValueError(
                    f"Gradient shape {tuple(g.shape)} does not match variable {v.name} of shape {tuple(v.shape)}"
                )
            self._update(v, stop_gradient(g), lr, step)
        self.iterations.assign_add(1)
        return self.iterations

    def minimize(self, loss: Any, var_list: Any, tape: Any = None) -> Variable:
        """Computes gradients of ``loss`` (a tensor with ``tape``, or a callable)
        and applies them."""
        from .._tape import GradientTape

        if tape is None:
            if not callable(loss):
                raise ValueError("`tape` is required when a `Tensor` loss is passed")
            with GradientTape() as tape:
                value = loss()
        else:
            value = loss
        var_list = list(var_list() if callable(var_list) else var_list)
        grads = tape.gradient(value, var_list)
        return self.apply_gradients(zip(grads, var_list))

    def _update(self, var: _NativeVariable, grad: Tensor, lr: float, step: int) -> None:
        raise NotImplementedError
