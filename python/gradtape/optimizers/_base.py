"""The optimizer base: ``apply_gradients``, slots, the step counter."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Callable

from .._gradtape import Tensor, _is_tracing, cast, convert_to_tensor, stop_gradient, zeros, zeros_like
from .._gradtape import Variable as _NativeVariable
from .._indexed_slices import IndexedSlices
from .._variable import Variable

# TF's `OptimizerV2._assert_valid_dtypes`: the dtypes an optimizer updates.
_VALID_DTYPES = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")


class Optimizer:
    """Base class. TF equivalent: ``tf.keras.optimizers.Optimizer``.

    Subclasses implement ``_plan(var, grad, lr, step, slot)``: it computes one step
    without changing anything and returns ``(new_slots, method, value)``: the new
    value of each slot it uses (``slot(key)`` gives a slot's current value, zeros for
    a slot not made yet) and the variable's update, ``getattr(var, method)(value)``.
    ``apply_gradients`` validates every pair and plans every update before it
    applies any, so a call that raises leaves variables, slots and ``iterations`` as
    they were.
    """

    def __init__(self, learning_rate: float | Callable[[int], float], name: str) -> None:
        self.learning_rate = learning_rate
        self.name = name
        self.iterations = Variable(0, trainable=False, name="iteration", dtype="int64")
        self._slots: dict[int, dict[str, Variable]] = {}

    def _lr(self) -> float:
        lr = self.learning_rate
        return float(lr(int(self.iterations.numpy()))) if callable(lr) else float(lr)

    def _validate(self, g: Any, v: Any) -> Tensor | IndexedSlices:
        """The gradient as a tensor, checked against its variable; raises otherwise."""
        if not isinstance(v, _NativeVariable):
            raise TypeError(f"apply_gradients expects Variables, got {type(v).__name__}")
        if v.dtype.name not in _VALID_DTYPES:
            raise ValueError(f"Invalid type {v.dtype!r} for {v.name}, expected: {list(_VALID_DTYPES)}.")
        if isinstance(g, IndexedSlices):
            # TF's sparse gradient: kept sparse (each optimizer applies it as TF's does).
            if g.dtype != v.dtype:
                raise TypeError(
                    f"Gradient of dtype {g.dtype.name} does not match variable {v.name} of dtype {v.dtype.name}"
                )
            if g.dense_shape is not None and tuple(g.shape) != tuple(v.shape):
                raise ValueError(
                    f"Gradient shape {tuple(g.shape)} does not match variable {v.name} of shape {tuple(v.shape)}"
                )
            return g
        if not isinstance(g, Tensor):
            g = convert_to_tensor(g, dtype=v.dtype)
        if g.dtype != v.dtype:
            raise TypeError(
                f"Gradient of dtype {g.dtype.name} does not match variable {v.name} of dtype {v.dtype.name}"
            )
        if tuple(g.shape) != tuple(v.shape):
            raise ValueError(
                f"Gradient shape {tuple(g.shape)} does not match variable {v.name} of shape {tuple(v.shape)}"
            )
        return g

    def apply_gradients(
        self, grads_and_vars: Iterable[tuple[Tensor | IndexedSlices | None, _NativeVariable]]
    ) -> Variable:
        """Applies one update per ``(gradient, variable)`` pair; ``None`` gradients
        are skipped. Returns the step counter. Every pair is checked (variable type
        and dtype, gradient dtype and shape) and every update computed before any
        variable, slot or the step counter changes."""
        pairs = [(g, v) for g, v in grads_and_vars]
        if not pairs:
            return self.iterations
        given = [(g, v) for g, v in pairs if g is not None]
        if not given:
            raise ValueError("No gradients provided for any variable: " + ", ".join(v.name for _, v in pairs))
        live = [(self._validate(g, v), v) for g, v in given]
        tracing = _is_tracing()
        step: int | Tensor
        lr: Any
        if tracing:
            # Inside a gt.function: the step and the learning rate are read when the
            # graph runs (a float64 tensor step; the plans compute with it as with the
            # Python int), and slots exist before the first update reads them.
            step = cast(self.iterations.read_value() + 1, "float64")
            # A schedule gets the step counter as a tensor, as TF's schedules do.
            schedule: Any = self.learning_rate
            lr = schedule(self.iterations.read_value()) if callable(schedule) else float(schedule)
        else:
            step = int(self.iterations.numpy()) + 1
            lr = self._lr()
        plan = []
        for g, v in live:
            slots = self._slots.get(v._unique_id, {})

            def slot(key: str, v: Any = v, slots: dict = slots) -> Tensor:
                if key not in slots and tracing:
                    slots = self._slots.setdefault(v._unique_id, slots)
                    slots[key] = Variable(
                        zeros(tuple(v.shape), dtype=v.dtype), trainable=False, name=f"{v.name.split(':')[0]}/{key}"
                    )
                return slots[key].read_value() if key in slots else zeros_like(v)

            if isinstance(g, IndexedSlices):
                shape = v.shape if g.dense_shape is None else g.dense_shape
                g = IndexedSlices(stop_gradient(g.values), g.indices, shape)
            else:
                g = stop_gradient(g)
            plan.append((v, *self._plan(v, g, lr, step, slot)))
        # Everything that can fail has run; apply.
        for v, new_slots, method, value in plan:
            slots = self._slots.setdefault(v._unique_id, {}) if new_slots else {}
            for key, new in new_slots.items():
                if key in slots:
                    slots[key].assign(new)
                else:
                    slots[key] = Variable(new, trainable=False, name=f"{v.name.split(':')[0]}/{key}")
            getattr(v, method)(value)
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

    def _plan(
        self, var: _NativeVariable, grad: Tensor | IndexedSlices, lr: Any, step: int | Tensor,
        slot: Callable[[str], Tensor],
    ) -> tuple[dict[str, Tensor], str, Tensor]:
        raise NotImplementedError
