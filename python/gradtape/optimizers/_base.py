"""The optimizer base: ``apply_gradients``, slots, the step counter."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Callable

from .._gradtape import Tensor, _is_tracing, cast, clip_by_norm, constant, sqrt, convert_to_tensor, stop_gradient, zeros
from .._gradtape import Variable as _NativeVariable
from .._gradtape import _optimizer_slots, _optimizer_update
from .._indexed_slices import IndexedSlices, _densify
from .._variable import Variable

# Keras 3 arguments accepted and without effect here (no EMA, loss scaling or
# gradient accumulation).
_IGNORED_KWARGS = {"use_ema", "ema_momentum", "ema_overwrite_frequency", "loss_scale_factor", "jit_compile"}

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
    they were. A subclass whose ``_plan`` applies ``IndexedSlices`` gradients as TF does
    sets ``_sparse_updates``; the others get them densified.
    """

    _sparse_updates = False

    def __init__(
        self,
        learning_rate: float | Callable[[int], float],
        name: str,
        weight_decay: float | None = None,
        clipnorm: float | None = None,
        clipvalue: float | None = None,
        global_clipnorm: float | None = None,
        **kwargs: Any,
    ) -> None:
        unknown = set(kwargs) - _IGNORED_KWARGS
        if unknown:
            raise TypeError(f"Argument(s) not recognized: {sorted(unknown)}")
        if sum(c is not None for c in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError(
                "Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. "
                f"Received: clipnorm={clipnorm}, clipvalue={clipvalue}, global_clipnorm={global_clipnorm}"
            )
        self.learning_rate = learning_rate
        self.name = name
        self.weight_decay = None if weight_decay is None else float(weight_decay)
        self.clipnorm = clipnorm
        self.clipvalue = clipvalue
        self.global_clipnorm = global_clipnorm
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
        live = list(zip(self._clip([g for g, _ in live]), [v for _, v in live]))
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
        plan: list[tuple[Any, ...]] = []
        for g, v in live:
            slots = self._slots.get(v._unique_id, {})

            def slot(key: str, v: Any = v, slots: dict = slots) -> Tensor:
                if key not in slots and tracing:
                    slots = self._slots.setdefault(v._unique_id, slots)
                    slots[key] = Variable(
                        self._slot_initial(key, v), trainable=False, name=f"{v.name.split(':')[0]}/{key}"
                    )
                return slots[key].read_value() if key in slots else self._slot_initial(key, v)

            if isinstance(g, IndexedSlices) and not self._sparse_updates:
                g = _densify(g)
            if isinstance(g, IndexedSlices):
                shape = v.shape if g.dense_shape is None else g.dense_shape
                g = IndexedSlices(stop_gradient(g.values), g.indices, shape)
            else:
                g = stop_gradient(g)
            native = self._native(v, g)
            if native is not None:
                # One fused kernel of the crate (`gradtape::nn::optimizers`) for the
                # whole step of this variable: weight decay, slots and the update.
                wd = self.weight_decay if self.weight_decay and self._use_weight_decay(v) else None
                plan.append((v, None, native, wd, None))
                continue
            decay = None
            if self.weight_decay and self._use_weight_decay(v):
                # Keras 3: `var -= var * weight_decay * lr` before the update.
                # In the variable's dtype, in Keras' order: (var * wd) * lr.
                lr_d = cast(lr, v.dtype) if isinstance(lr, Tensor) else constant(lr, dtype=v.dtype)
                decay = v.read_value() * constant(self.weight_decay, dtype=v.dtype) * lr_d
            # A schedule's tensor learning rate, in the variable's dtype (as Keras casts it).
            lr_v = cast(lr, v.dtype) if isinstance(lr, Tensor) and lr.dtype != v.dtype else lr
            plan.append((v, decay, *self._plan(v, g, lr_v, step, slot)))
        # Everything that can fail has run; apply.
        for v, decay, new_slots, method, value in plan:
            if isinstance(new_slots, tuple):
                self._apply_native(v, new_slots, method, lr, step)
                continue
            if decay is not None:
                v.assign_sub(decay)
            slots = self._slots.setdefault(v._unique_id, {}) if new_slots else {}
            for key, new in new_slots.items():
                if key in slots:
                    slots[key].assign(new)
                else:
                    slots[key] = Variable(new, trainable=False, name=f"{v.name.split(':')[0]}/{key}")
            getattr(v, method)(value)
        self.iterations.assign_add(1)
        return self.iterations

    def _native_rule(self) -> tuple[str, list[float]] | None:
        """The crate's update rule of this optimizer as ``(kind, hyperparameters)``
        (``gradtape::nn::optimizers::Rule``), or ``None`` for one it does not run."""
        return None

    def _native(self, var: Any, grad: Any) -> tuple[str, list[float], Any, Any] | None:
        """``(kind, hyperparameters, gradient, squared gradient or None)`` when the
        crate's fused kernel runs this step of ``var`` (a floating or complex variable, a
        built-in rule whose ``_plan`` no subclass replaced), else ``None``."""
        rule = self._native_rule()
        if rule is None:
            return None
        if var.dtype.name not in _VALID_DTYPES:
            return None  # refused by `_plan` with Keras' message
        owner = next(c for c in type(self).__mro__ if "_plan" in c.__dict__)
        if "_native_rule" not in owner.__dict__:
            return None  # a subclass's own `_plan`
        grads = self._native_grads(grad)
        return None if grads is None else (*rule, *grads)

    def _native_grads(self, grad: Any) -> tuple[Any, Any] | None:
        """The gradient (and Adam's squared gradient) the kernel takes; ``None`` for a
        sparse update that stays a scatter."""
        if isinstance(grad, IndexedSlices):
            return _densify(grad), None
        return grad, None

    def _apply_native(self, v: Any, native: tuple, wd: float | None, lr: Any, step: Any) -> None:
        kind, params, grad, grad_squared = native
        slots = self._slots.setdefault(v._unique_id, {})
        names = [name for name, _ in _optimizer_slots(kind, params)]
        for key in names:
            if key not in slots:
                slots[key] = Variable(
                    self._slot_initial(key, v), trainable=False, name=f"{v.name.split(':')[0]}/{key}"
                )
        _optimizer_update(kind, params, v, grad, [slots[k] for k in names], lr, step, wd, grad_squared)

    def apply(self, grads: Iterable[Tensor | None], trainable_variables: Iterable[Any] | None = None) -> Variable:
        """Keras 3's form of ``apply_gradients``: the gradients and the variables as
        two lists. TF equivalent: ``tf.keras.optimizers.Optimizer.apply``."""
        grads = list(grads)
        if trainable_variables is None:
            raise ValueError("`apply` needs `trainable_variables` (gradtape optimizers are not built ahead)")
        variables = list(trainable_variables)
        if len(grads) != len(variables):
            raise ValueError(
                f"Got {len(grads)} gradients for {len(variables)} variables; `apply` needs one gradient a variable"
            )
        return self.apply_gradients(zip(grads, variables))

    def exclude_from_weight_decay(
        self, var_list: Iterable[Any] | None = None, var_names: Iterable[str] | None = None
    ) -> None:
        """Variables (or variables whose name contains one of ``var_names``) that
        ``weight_decay`` leaves alone."""
        self._wd_excluded_ids = {v._unique_id for v in (var_list or [])}
        self._wd_excluded_names = list(var_names or [])

    def _use_weight_decay(self, v: Any) -> bool:
        if v._unique_id in getattr(self, "_wd_excluded_ids", ()):
            return False
        return not any(n in v.name for n in getattr(self, "_wd_excluded_names", ()))

    def _clip(self, grads: list[Tensor | IndexedSlices]) -> list[Tensor | IndexedSlices]:
        """Keras 3's `_clip_gradients` (TF backend): per-gradient norm or value, a
        sparse gradient kept sparse (its values clipped, by their own norm); or the
        global norm, with a sparse gradient's values in the norm and the scaled
        gradient densified, as Keras 3 gives it."""
        from .._gradtape import clip_by_value, maximum, reduce_sum

        if not any(c is not None and c > 0 for c in (self.clipnorm, self.global_clipnorm, self.clipvalue)):
            return grads
        if self.clipnorm is not None and self.clipnorm > 0:
            return [clip_by_norm(g, self.clipnorm) for g in grads]
        if self.global_clipnorm is not None and self.global_clipnorm > 0:
            total = cast(0.0, "float64")
            for g in grads:
                v = g.values if isinstance(g, IndexedSlices) else g
                total = total + cast(reduce_sum(v * v), "float64")
            norm = sqrt(total)
            clip = float(self.global_clipnorm)
            return [_densify(g) * cast(clip / maximum(norm, clip), g.dtype) for g in grads]
        c = float(self.clipvalue or 0.0)
        return [
            IndexedSlices(clip_by_value(g.values, -c, c), g.indices, g.dense_shape)
            if isinstance(g, IndexedSlices) else clip_by_value(g, -c, c)
            for g in grads
        ]

    def minimize(self, loss: Any, var_list: Any, tape: Any = None) -> Variable:
        """Computes gradients of ``loss`` (a tensor with ``tape``, or a callable)
        and applies them."""
        tape, value, var_list = _loss_on_tape(loss, var_list, tape)
        grads = tape.gradient(value, var_list)
        return self.apply_gradients(zip(grads, var_list))

    def _slot_initial(self, key: str, var: Any) -> Tensor:
        """A slot's value before its first update (zeros unless a subclass says)."""
        return zeros(tuple(var.shape), dtype=var.dtype)

    def _plan(
        self, var: _NativeVariable, grad: Tensor | IndexedSlices, lr: Any, step: int | Tensor,
        slot: Callable[[str], Tensor],
    ) -> tuple[dict[str, Tensor], str, Tensor]:
        raise NotImplementedError


def _loss_on_tape(loss: Any, var_list: Any, tape: Any) -> tuple[Any, Any, list[Any]]:
    """``minimize``'s arguments as ``(tape, loss value, variables)``: a callable loss
    runs on a new tape; a tensor loss needs the tape that recorded it."""
    from .._tape import GradientTape

    if tape is None:
        if not callable(loss):
            raise ValueError("`tape` is required when a `Tensor` loss is passed")
        with GradientTape() as tape:
            value = loss()
    else:
        value = loss
    return tape, value, list(var_list() if callable(var_list) else var_list)
