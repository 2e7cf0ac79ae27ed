"""``Model``: subclassed and functional models, ``Input``, ``Sequential``, and the
``compile`` / ``fit`` / ``evaluate`` / ``predict`` loop.

The loop is a thin one: each batch runs a ``gt.function`` train step (the tape, the
loss, the optimizer, the metric updates), as a hand-written TF training loop would.
"""

from __future__ import annotations

import inspect
import math
import os
import time
from collections.abc import Iterable
from typing import Any

import numpy as np

from .._gradtape import Tensor, convert_to_tensor, zeros
from .._gradtape import Variable  # the native class (gt.Variable subclasses it)
from ..layers._base import Layer, example_run
from ..layers.sequential import Sequential as _LayersSequential
from ..layers.sequential import _accepts_training
from . import losses as _losses
from . import metrics as _metrics


# --- the functional API: symbolic tensors -------------------------------------


class KerasTensor:
    """A symbolic tensor of the functional API: its shape (``None`` for the batch),
    dtype, and the layer call that makes it. TF equivalent: ``keras.KerasTensor``."""

    _gt_symbolic = True

    def __init__(self, shape: tuple, dtype: Any, node: Any = None, name: str | None = None) -> None:
        self.shape = tuple(shape)
        self.dtype = dtype
        self._node = node  # (layer, args, kwargs) or None for an Input
        self.name = name

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        dtype = getattr(self.dtype, "name", self.dtype)
        return f"<KerasTensor shape={self.shape}, dtype={dtype}, name={self.name}>"

    def _gt_symbolic_call(self, layer: Layer, args: tuple, kwargs: dict) -> KerasTensor:
        return _symbolic_call(layer, self, args, kwargs)


def _symbolic_call(layer: Layer, inputs: Any, args: tuple, kwargs: dict) -> Any:
    """Calls ``layer`` on example tensors of the symbolic inputs' shapes (batch 1),
    which builds it and gives the output's shape and dtype."""

    def example(x: Any) -> Any:
        if isinstance(x, KerasTensor):
            return zeros([1 if d is None else d for d in x.shape], dtype=x.dtype)
        if isinstance(x, (list, tuple)):
            return type(x)(example(e) for e in x)
        return x

    with example_run():
        out = layer(example(inputs), *args, **kwargs)

    def symbolic(y: Any) -> Any:
        if isinstance(y, (list, tuple)):
            return type(y)(symbolic(e) for e in y)
        return KerasTensor((None, *tuple(y.shape)[1:]), y.dtype, node=(layer, inputs, args, kwargs), name=layer.name)

    return symbolic(out)


def Input(
    shape: Iterable[int | None] | None = None,
    batch_size: int | None = None,
    dtype: Any = None,
    name: str | None = None,
    batch_shape: Iterable[int | None] | None = None,
    **kwargs: Any,
) -> KerasTensor:
    """A symbolic input of a functional model. TF equivalent: ``tf.keras.Input``.

    >>> import gradtape as gt
    >>> gt.keras.Input(shape=(784,)).shape
    (None, 784)
    """
    if kwargs:
        raise TypeError(f"Input() got an unexpected keyword argument {sorted(kwargs)[0]!r}")
    if batch_shape is not None:
        full = tuple(batch_shape)
    elif shape is not None:
        full = (batch_size, *tuple(shape))
    else:
        raise ValueError("You must pass a `shape` argument.")
    return KerasTensor(full, dtype or "float32", None, name=name or "input_layer")


# --- variable tracking --------------------------------------------------------


def _attr_children(obj: Any) -> list[Any]:
    """The layers and variables held in ``obj``'s attributes, in assignment order."""
    out: list[Any] = []

    def visit(x: Any, depth: int) -> None:
        if isinstance(x, (Layer, Variable)):
            out.append(x)
        elif depth < 3 and isinstance(x, (list, tuple)):
            for e in x:
                visit(e, depth + 1)
        elif depth < 3 and isinstance(x, dict):
            for e in x.values():
                visit(e, depth + 1)

    for key, value in vars(obj).items():
        if key in ("_weights", "_gt_compiled", "optimizer", "_gt_inputs", "_gt_outputs"):
            continue
        visit(value, 0)
    return out


def _all_variables(layer: Layer, seen: set[int]) -> list[Variable]:
    """Every variable of ``layer``: its own weights, then those of the layers and
    variables in its attributes (each once)."""
    out: list[Variable] = []

    def add(v: Variable) -> None:
        if id(v) not in seen:
            seen.add(id(v))
            out.append(v)

    if isinstance(layer, _LayersSequential) and not isinstance(layer, Model):
        for v in layer.variables:
            add(v)
        return out
    for v in layer._weights:
        add(v)
    for child in _attr_children(layer):
        if isinstance(child, Variable):
            add(child)
        elif child is not layer:
            if isinstance(child, Model):
                for v in child.variables:
                    add(v)
            else:
                for v in _all_variables(child, seen):
                    out.append(v)
    return out


def _trainable(layer: Layer, v: Variable) -> bool:
    return bool(v.trainable)


_WEIGHTS_FORMAT = "gradtape.keras.weights/1"

# --- Model --------------------------------------------------------------------


class Model(Layer):
    """A model: layers composed by a ``call`` method (subclassing) or by a graph of
    ``Input`` to outputs (``Model(inputs, outputs)``), with Keras' training loop.
    TF equivalent: ``tf.keras.Model``.

    >>> import gradtape as gt
    >>> class Net(gt.keras.Model):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.d1 = gt.keras.layers.Dense(4, activation="relu")
    ...         self.d2 = gt.keras.layers.Dense(1)
    ...     def call(self, x, training=None):
    ...         return self.d2(self.d1(x))
    >>> net = Net()
    >>> net(gt.ones([2, 3])).shape
    TensorShape([2, 1])
    >>> len(net.trainable_variables)
    4
    """

    # The training state is not part of the model's module walk.
    _TF_MODULE_IGNORED_PROPERTIES = Layer._TF_MODULE_IGNORED_PROPERTIES | frozenset(
        {"_gt_compiled", "optimizer", "_loss_tracker", "history", "_gt_inputs", "_gt_outputs"}
    )

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is Model and (args or "inputs" in kwargs or "outputs" in kwargs):
            return super().__new__(Functional)
        return super().__new__(cls)

    def __init__(self, *args: Any, name: str | None = None, trainable: bool = True, **kwargs: Any) -> None:
        if args:
            raise TypeError(
                f"{type(self).__name__}.__init__() takes no positional arguments besides a functional model's"
            )
        Layer.__init__(self, name=name, trainable=trainable, **kwargs)
        self._gt_compiled: dict[str, Any] | None = None
        self.optimizer: Any = None
        self.stop_training = False
        self.history: Any = None  # the History of the last fit

    # Variables of the layers in attributes (a subclassed model); Sequential and
    # the functional form list theirs from `layers`.
    @property
    def layers(self) -> list[Layer]:
        """The model's direct sublayers, in the order they were assigned."""
        return [c for c in _attr_children(self) if isinstance(c, Layer)]

    @property
    def variables(self) -> list[Variable]:  # type: ignore[override]
        return _all_variables(self, set())

    weights = variables

    @property
    def trainable_variables(self) -> list[Variable]:  # type: ignore[override]
        if not self.trainable:
            return []
        return [v for v in self._trainable_walk()]

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self) -> list[Variable]:  # type: ignore[override]
        trainable = {id(v) for v in self.trainable_variables}
        return [v for v in self.variables if id(v) not in trainable]

    non_trainable_weights = non_trainable_variables

    def _trainable_walk(self) -> list[Variable]:
        out: list[Variable] = []
        seen: set[int] = set()
        for w in self._weights:
            if w.trainable and id(w) not in seen:
                seen.add(id(w))
                out.append(w)
        for layer in self.layers:
            for v in layer.trainable_variables if not isinstance(layer, Model) else layer._trainable_walk():
                if id(v) not in seen:
                    seen.add(id(v))
                    out.append(v)
            if not isinstance(layer, (Model, _LayersSequential)):
                for v in _all_variables(layer, set()):
                    if v.trainable and layer.trainable and id(v) not in seen:
                        seen.add(id(v))
                        out.append(v)
        for child in _attr_children(self):
            if isinstance(child, Variable) and child.trainable and id(child) not in seen:
                seen.add(id(child))
                out.append(child)
        return out

    def get_weights(self) -> list[np.ndarray]:
        """The variables' values as numpy arrays, in ``weights`` order."""
        return [v.numpy() for v in self.weights]

    def set_weights(self, weights: Iterable[Any]) -> None:
        """Assigns ``weights`` (as ``get_weights`` gives them) to the variables."""
        weights = list(weights)
        mine = self.weights
        if len(weights) != len(mine):
            raise ValueError(
                f"You called `set_weights(weights)` on model {self.name} with {len(weights)} arrays, "
                f"but the model has {len(mine)} variables"
            )
        for v, w in zip(mine, weights):
            w = np.asarray(w)
            if tuple(w.shape) != tuple(v.shape):
                raise ValueError(f"Weight {v.name} has shape {tuple(v.shape)}, received an array of shape {w.shape}")
        for v, w in zip(mine, weights):
            v.assign(convert_to_tensor(np.asarray(w), dtype=v.dtype))

    def save_weights(self, filepath: str | os.PathLike[str], overwrite: bool = True) -> None:
        """Writes the model's variables to ``filepath`` in gradtape's safetensors
        format (any name, Keras' ``.weights.h5`` included: the content is safetensors,
        not HDF5). TF equivalent: ``tf.keras.Model.save_weights``."""
        from .. import _safetensors

        path = os.fspath(filepath)
        if not overwrite and os.path.exists(path):
            raise FileExistsError(f"{path} exists and overwrite=False")
        weights = self.weights
        tensors = {f"{i:06d}/{v.name}": v for i, v in enumerate(weights)}
        meta = {"format": _WEIGHTS_FORMAT, "model": self.name, "count": str(len(weights))}
        _safetensors.save_file(tensors, path, metadata=meta)

    def load_weights(self, filepath: str | os.PathLike[str], skip_mismatch: bool = False, **kwargs: Any) -> None:
        """Assigns the variables saved by ``save_weights``, in order; the model must
        be built and have the same variables (count, shapes and dtypes).
        TF equivalent: ``tf.keras.Model.load_weights``."""
        from .. import _safetensors, cast

        if kwargs:
            raise TypeError(f"load_weights() got an unexpected keyword argument {sorted(kwargs)[0]!r}")
        path = os.fspath(filepath)
        tensors, meta = _safetensors.load_file_with_metadata(path)
        if meta.get("format") != _WEIGHTS_FORMAT:
            raise ValueError(f"{path} is not a gradtape weights file (written by Model.save_weights)")
        saved = [tensors[k] for k in sorted(tensors)]
        mine = self.weights
        if not self.built or not mine:
            raise ValueError(
                f"Model {self.name} has no variables yet: build it (call it on a batch) before load_weights"
            )
        if len(saved) != len(mine):
            raise ValueError(
                f"The weights file {path} holds {len(saved)} variables, model {self.name} has {len(mine)}"
            )
        pairs = []
        for v, t in zip(mine, saved):
            if tuple(t.shape) != tuple(v.shape):
                if skip_mismatch:
                    continue
                raise ValueError(
                    f"Variable {v.name} has shape {tuple(v.shape)}, the saved value has shape {tuple(t.shape)}"
                )
            pairs.append((v, t if t.dtype == v.dtype else cast(t, v.dtype)))
        for v, t in pairs:
            v.assign(t)

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        # Keras passes `training` only to a `call` that takes it.
        if "training" in kwargs and not _takes(self.call, "training"):
            del kwargs["training"]
        return super().__call__(inputs, *args, **kwargs)

    def build(self, input_shape: Any = None) -> None:
        """Builds the model for inputs of ``input_shape`` (the batch dimension may be
        ``None``) by calling it once on zeros, as Keras' ``build`` does."""
        if input_shape is not None and type(self).build is Model.build and not self.built:
            self.built = True
            self.call(zeros([1 if d is None else d for d in input_shape]))
        self.built = True

    def count_params(self) -> int:
        return int(sum(math.prod(tuple(v.shape)) for v in self.variables))

    # -- summary --------------------------------------------------------------

    def _summary_rows(self) -> list[tuple[str, str, int]]:
        rows = []
        for layer in self.layers:
            n = int(sum(math.prod(tuple(v.shape)) for v in _layer_variables(layer)))
            shape = getattr(layer, "_gt_output_shape", None)
            rows.append((f"{layer.name} ({type(layer).__name__})", "?" if shape is None else str(shape), n))
        return rows

    def summary(self, print_fn: Any = None, line_length: int | None = None, **kwargs: Any) -> None:
        """Prints a table of the layers, their output shapes and parameter counts.
        TF equivalent: ``tf.keras.Model.summary``."""
        self._gt_fill_output_shapes()
        emit = print_fn or print
        width = line_length or 80
        cols = (int(width * 0.45), int(width * 0.33))
        lines = [f'Model: "{self.name}"', "-" * width]
        lines.append(f"{'Layer (type)':<{cols[0]}}{'Output Shape':<{cols[1]}}{'Param #':>{width - sum(cols)}}")
        lines.append("=" * width)
        for name, shape, n in self._summary_rows():
            lines.append(f"{name:<{cols[0]}}{shape:<{cols[1]}}{n:>{width - sum(cols)}}")
        lines.append("=" * width)
        total = sum(math.prod(tuple(v.shape)) for v in self.variables)
        trainable = sum(math.prod(tuple(v.shape)) for v in self.trainable_variables)
        size = sum(math.prod(tuple(v.shape)) * v.dtype.size for v in self.variables)
        lines.append(f" Total params: {total} ({_bytes(size)})")
        lines.append(f" Trainable params: {trainable}")
        lines.append(f" Non-trainable params: {total - trainable}")
        emit("\n".join(lines))

    def _gt_fill_output_shapes(self) -> None:
        pass

    # -- compile / fit / evaluate / predict -----------------------------------

    def compile(
        self,
        optimizer: Any = "rmsprop",
        loss: Any = None,
        metrics: Any = None,
        loss_weights: Any = None,
        weighted_metrics: Any = None,
        run_eagerly: bool = False,
        steps_per_execution: int = 1,
        jit_compile: Any = "auto",
        **kwargs: Any,
    ) -> None:
        """Sets the optimizer, the loss and the metrics ``fit`` and ``evaluate`` use.
        A model with several outputs takes one loss for all, a list or a dict (by
        output name) of losses, ``loss_weights`` (a list or dict) scaling each output's
        loss in the total, and metrics as a list of per-output lists or a dict;
        ``weighted_metrics`` are updated with the sample weights.
        TF equivalent: ``tf.keras.Model.compile``."""
        from .. import optimizers

        self.optimizer = optimizers.get(optimizer)
        if loss is None:
            raise ValueError("compile() needs a `loss` (gradtape models have no `add_loss` losses)")
        if loss_weights is not None and not isinstance(loss_weights, (int, float, list, tuple, dict)):
            raise TypeError(f"loss_weights must be a number, a list or a dict, got {loss_weights!r}")
        self._gt_compiled = {
            "loss_id": loss,
            "loss_weights": loss_weights,
            "metric_ids": metrics,
            "weighted_metric_ids": weighted_metrics,
            "losses": None,  # resolved on the first batch, with the outputs' structure
            "metrics": None,  # resolved on the first batch ("accuracy" depends on shapes)
            "run_eagerly": bool(run_eagerly),
            "train_fn": None,
            "test_fn": None,
        }
        if not isinstance(loss, (list, tuple, dict)):
            self._gt_compiled["loss"] = _losses.get(loss)
        self._loss_tracker = _metrics.Mean(name="loss")

    @property
    def metrics(self) -> list[Any]:
        """The loss tracker, the per-output loss trackers and the compiled metrics
        (after the first batch)."""
        if self._gt_compiled is None:
            return []
        losses = self._gt_compiled["losses"] or []
        trackers = [t for (_, _, _, t) in losses if t is not None]
        return [self._loss_tracker, *trackers, *(self._gt_compiled["metrics"] or [])]

    @property
    def metrics_names(self) -> list[str]:
        return [m.name for m in self.metrics]

    def _output_names(self, n: int) -> list[str]:
        outs = getattr(self, "_gt_outputs", None)
        if isinstance(outs, (list, tuple)) and len(outs) == n:
            return [getattr(t, "name", None) or f"output_{i}" for i, t in enumerate(outs)]
        return [f"output_{i}" for i in range(n)]

    def _per_output(self, spec: Any, names: list[str], what: str) -> list[Any]:
        """``spec`` (one value for all outputs, a list, or a dict by name) as a list."""
        if isinstance(spec, dict):
            unknown = sorted(set(spec) - set(names))
            if unknown:
                raise ValueError(f"{what}: unknown output name(s) {unknown}; the model's outputs are {names}")
            return [spec.get(n) for n in names]
        if isinstance(spec, (list, tuple)):
            if len(spec) != len(names):
                raise ValueError(
                    f"For a model with {len(names)} outputs, `{what}` as a list must have {len(names)} entries, "
                    f"got {len(spec)}"
                )
            return list(spec)
        return [spec] * len(names)

    def _resolve_metrics(self, y: Any, y_pred: Any) -> list[Any]:
        c = self._gt_compiled
        assert c is not None
        if c["losses"] is None:
            multi = isinstance(y_pred, (list, tuple))
            names = self._output_names(len(y_pred)) if multi else [""]
            if multi:
                loss_ids = self._per_output(c["loss_id"], names, "loss")
                weights = self._per_output(c["loss_weights"], names, "loss_weights")
            else:
                if isinstance(c["loss_id"], (list, tuple, dict)):
                    if len(c["loss_id"]) != 1:
                        raise ValueError(f"The model has one output; compile() got {len(c['loss_id'])} losses")
                    loss_ids = list(c["loss_id"].values() if isinstance(c["loss_id"], dict) else c["loss_id"])
                else:
                    loss_ids = [c["loss_id"]]
                lw = c["loss_weights"]
                if isinstance(lw, (list, tuple, dict)):
                    lw = list(lw.values() if isinstance(lw, dict) else lw)
                    if len(lw) != 1:
                        raise ValueError(f"The model has one output; compile() got {len(lw)} loss_weights")
                    lw = lw[0]
                weights = [lw]
            c["losses"] = [
                (
                    None if ident is None else _losses.get(ident),
                    None if w is None else float(w),
                    name,
                    _metrics.Mean(name=f"{name}_loss") if multi else None,
                )
                for ident, w, name in zip(loss_ids, weights, names)
            ]
            c["multi"] = multi
        if c["metrics"] is None:
            ys = _per_output_y(y, len(y_pred)) if c["multi"] else [y]
            ps = list(y_pred) if c["multi"] else [y_pred]
            names = [name for (_, _, name, _) in c["losses"]]
            out: list[Any] = []
            for weighted, key in ((False, "metric_ids"), (True, "weighted_metric_ids")):
                ids = c[key]
                if ids is None:
                    continue
                if c["multi"]:
                    per = self._per_output(ids, names, "metrics" if not weighted else "weighted_metrics")
                else:
                    if isinstance(ids, dict):
                        raise ValueError("Per-output metrics (a dict) need a model with several outputs; pass a list")
                    per = [ids]
                for i, entry in enumerate(per):
                    if entry is None:
                        continue
                    for ident in entry if isinstance(entry, (list, tuple)) else [entry]:
                        m = self._make_metric(ident, ys[i], ps[i])
                        if c["multi"]:
                            m.name = f"{names[i]}_{m.name}"
                        m._gt_output = i
                        m._gt_weighted = weighted
                        out.append(m)
            c["metrics"] = out
        return c["metrics"]

    @staticmethod
    def _make_metric(ident: Any, y: Any, y_pred: Any) -> Any:
        m: Any
        if ident in ("accuracy", "acc"):
            pred_shape, true_shape = tuple(y_pred.shape), tuple(np.shape(y))
            if pred_shape[-1:] == (1,):
                m = _metrics.BinaryAccuracy(name=ident)
            elif len(true_shape) < len(pred_shape) or (true_shape[-1:] == (1,) and pred_shape[-1] > 1):
                m = _metrics.SparseCategoricalAccuracy(name=ident)
            else:
                m = _metrics.CategoricalAccuracy(name=ident)
        elif isinstance(ident, str):
            m = _metrics.get(ident)
            m.name = ident
        else:
            m = _metrics.get(ident)
        return m

    def _require_compiled(self) -> dict[str, Any]:
        if self._gt_compiled is None:
            raise RuntimeError("You must call `compile()` before using the model for training or evaluation.")
        return self._gt_compiled

    def _compute_loss(self, y: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        return self._compute_losses(y, y_pred, sample_weight)[0]

    def _compute_losses(self, y: Any, y_pred: Any, sample_weight: Any = None) -> tuple[Any, list[Any]]:
        """The total loss (each output's loss times its loss weight, summed) and the
        unweighted loss of each output."""
        c = self._gt_compiled
        assert c is not None
        if c["losses"] is None:
            self._resolve_metrics(y, y_pred)
        multi = c["multi"]
        ys = _per_output_y(y, len(y_pred)) if multi else [y]
        ps = list(y_pred) if multi else [y_pred]
        sws = list(sample_weight) if multi and isinstance(sample_weight, (list, tuple)) else [sample_weight] * len(ps)
        total = None
        parts: list[Any] = []
        for (loss_fn, w, _, _), yt, yp, sw in zip(c["losses"], ys, ps, sws):
            if loss_fn is None:
                parts.append(None)
                continue
            if isinstance(loss_fn, _losses.Loss):
                value = loss_fn(yt, yp, sw)
            else:
                value = _losses._reduce(loss_fn(yt, yp), sw, "sum_over_batch_size")
            parts.append(value)
            if w is not None:
                value = value * w
            total = value if total is None else total + value
        if total is None:
            raise ValueError("compile() was given no loss for any output")
        return total, parts

    def train_step(self, x: Any, y: Any, sample_weight: Any = None) -> None:
        """One optimizer step on a batch, and the loss and metric updates."""
        from .._tape import GradientTape

        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss, parts = self._compute_losses(y, y_pred, sample_weight)
        variables = self.trainable_variables
        grads = tape.gradient(loss, variables)
        self.optimizer.apply_gradients(zip(grads, variables))
        self._update_metrics(x, y, y_pred, loss, sample_weight, parts)

    def test_step(self, x: Any, y: Any, sample_weight: Any = None) -> None:
        """The loss and metric updates of a batch, without training."""
        y_pred = self(x, training=False)
        loss, parts = self._compute_losses(y, y_pred, sample_weight)
        self._update_metrics(x, y, y_pred, loss, sample_weight, parts)

    def _update_metrics(
        self, x: Any, y: Any, y_pred: Any, loss: Any, sample_weight: Any = None, parts: Any = None
    ) -> None:
        c = self._gt_compiled
        assert c is not None
        batch = x.shape[0] if not isinstance(x, (list, tuple)) else x[0].shape[0]
        self._loss_tracker.update_state(loss, sample_weight=float(batch))
        multi = c["multi"]
        ys = _per_output_y(y, len(y_pred)) if multi else [y]
        ps = list(y_pred) if multi else [y_pred]
        if parts is not None:
            # Each output's loss is averaged over batches with equal weights: Keras 3
            # weighs it by the batch's static size, unknown (None) in its traced step.
            for (_, _, _, tracker), value in zip(c["losses"], parts):
                if tracker is not None and value is not None:
                    tracker.update_state(value)
        sws = list(sample_weight) if multi and isinstance(sample_weight, (list, tuple)) else [sample_weight] * len(ps)
        for m in c["metrics"]:
            i = getattr(m, "_gt_output", 0)
            if getattr(m, "_gt_weighted", False) and sws[i] is not None:
                m.update_state(ys[i], ps[i], sample_weight=sws[i])
            else:
                m.update_state(ys[i], ps[i])

    def _step_fn(self, kind: str) -> Any:
        c = self._gt_compiled
        assert c is not None
        key = f"{kind}_fn"
        if c[key] is None:
            step = self.train_step if kind == "train" else self.test_step
            if c["run_eagerly"]:
                c[key] = step
            else:
                from .._function import function

                c[key] = function(step, autograph=False)
        return c[key]

    def _logs(self) -> dict[str, float]:
        """The running results, named and ordered as Keras 3's logs (sorted by name)."""
        logs = {m.name: float(m.result()) for m in self.metrics}
        return dict(sorted(logs.items()))

    def _ordered(self, logs: dict[str, float]) -> Any:
        """``evaluate``'s list: the loss, then the other metrics in ``metrics`` order."""
        ordered = [logs[m.name] for m in self.metrics]
        return ordered[0] if len(ordered) == 1 else ordered

    def _reset_metrics(self) -> None:
        for m in self.metrics:
            m.reset_state()

    def reset_metrics(self) -> None:
        self._reset_metrics()

    def _prepare_batch(self, bx: Any, by: Any, bw: Any, class_weight: Any) -> tuple[Any, Any, Any]:
        bx, by = _tensor(bx), _tensor(by)
        if class_weight is not None:
            bw = _class_weights(by, class_weight)
        bw = None if bw is None else _tensor(bw)
        if self._gt_compiled["metrics"] is None:  # type: ignore[index]
            self._resolve_metrics(by, self(bx, training=False))
        return bx, by, bw

    def fit(
        self,
        x: Any = None,
        y: Any = None,
        batch_size: int | None = None,
        epochs: int = 1,
        verbose: Any = "auto",
        callbacks: Any = None,
        validation_split: float = 0.0,
        validation_data: Any = None,
        shuffle: bool = True,
        class_weight: Any = None,
        sample_weight: Any = None,
        initial_epoch: int = 0,
        steps_per_epoch: int | None = None,
        validation_batch_size: int | None = None,
        validation_freq: int = 1,
        **kwargs: Any,
    ) -> Any:
        """Trains for ``epochs`` passes over ``(x, y)`` (numpy arrays, tensors or a
        ``gt.data.Dataset`` of ``(x, y)`` or ``(x, y, sample_weight)`` batches),
        printing a Keras-style line per epoch and calling ``callbacks`` (see
        ``gt.keras.callbacks``). ``sample_weight`` weighs each sample's loss;
        ``class_weight`` (a dict from class index to weight) weighs each sample by its
        label. ``validation_split`` holds out the last fraction of the data. Returns
        the ``History``. TF equivalent: ``tf.keras.Model.fit``."""
        from . import callbacks as _callbacks

        if kwargs:
            raise TypeError(f"fit() got an unexpected keyword argument {sorted(kwargs)[0]!r}")
        self._require_compiled()
        verbose = 1 if verbose == "auto" else int(verbose)
        if class_weight is not None:
            if not isinstance(class_weight, dict):
                raise TypeError(f"class_weight must be a dict from class index to weight, got {class_weight!r}")
            if sample_weight is not None:
                raise ValueError("You cannot use both `class_weight` and `sample_weight` at the same time.")
            if isinstance(y, (list, tuple, dict)) and not isinstance(_to_numpy(y), np.ndarray):
                raise ValueError("`class_weight` is only supported for Models with a single output.")
        if not (0.0 <= float(validation_split) < 1.0):
            raise ValueError(f"validation_split must be in [0, 1), got {validation_split}")
        y = self._y_list(y)
        data = _Data(x, y, batch_size, shuffle, sample_weight)
        if validation_split and validation_data is None:
            data, val = data.split(validation_split)
            validation_data = val
        cbs = _callbacks.CallbackList(callbacks, add_history=True, model=self)
        cbs.set_params({"verbose": verbose, "epochs": epochs, "steps": data.steps(steps_per_epoch)})
        self.stop_training = False
        train = None
        batch_logs = cbs.wants_batch_logs("train")
        cbs.on_train_begin()
        logs: dict[str, float] = {}
        for epoch in range(initial_epoch, epochs):
            self._reset_metrics()
            cbs.on_epoch_begin(epoch)
            if verbose:
                print(f"Epoch {epoch + 1}/{epochs}")
            start = time.perf_counter()
            steps = 0
            for bx, by, bw in data.batches(steps_per_epoch):
                cbs.on_train_batch_begin(steps)
                bx, by, bw = self._prepare_batch(bx, by, bw, class_weight)
                if train is None:
                    train = self._step_fn("train")
                if bw is None:
                    train(bx, by)
                else:
                    train(bx, by, bw)
                cbs.on_train_batch_end(steps, self._logs() if batch_logs else None)
                steps += 1
                if self.stop_training:
                    break
            logs = self._logs()
            if validation_data is not None and (epoch + 1) % int(validation_freq) == 0:
                vx, vy, vw = _val_triple(validation_data)
                val_logs = self.evaluate(
                    vx,
                    vy,
                    sample_weight=vw,
                    batch_size=validation_batch_size or data.batch_size or None,
                    verbose=0,
                    return_dict=True,
                    _callbacks=cbs,
                )
                logs.update({f"val_{k}": v for k, v in val_logs.items()})
            elapsed = time.perf_counter() - start
            if verbose:
                print(_progress_line(steps, elapsed, logs, verbose))
            cbs.on_epoch_end(epoch, logs)
            if self.stop_training:
                break
        cbs.on_train_end(logs)
        return self.history

    def _y_list(self, y: Any) -> Any:
        """``y`` given as a dict by output name, as the list of the outputs' order."""
        if isinstance(y, dict):
            outs = getattr(self, "_gt_outputs", None)
            names = self._output_names(len(outs)) if isinstance(outs, (list, tuple)) else []
            missing = [n for n in names if n not in y]
            if not names or missing or len(y) != len(names):
                raise ValueError(f"`y` as a dict needs one entry per output name {names}, got keys {sorted(y)}")
            return [y[n] for n in names]
        return y

    def evaluate(
        self,
        x: Any = None,
        y: Any = None,
        batch_size: int | None = None,
        verbose: Any = "auto",
        sample_weight: Any = None,
        steps: int | None = None,
        callbacks: Any = None,
        return_dict: bool = False,
        **kwargs: Any,
    ) -> Any:
        """The loss and metrics over ``(x, y)``: a float (no metrics), a list
        ``[loss, *metrics]``, or a dict with ``return_dict=True``.
        TF equivalent: ``tf.keras.Model.evaluate``."""
        from . import callbacks as _callbacks

        cbs = kwargs.pop("_callbacks", None)
        if kwargs:
            raise TypeError(f"evaluate() got an unexpected keyword argument {sorted(kwargs)[0]!r}")
        self._require_compiled()
        verbose = 1 if verbose == "auto" else int(verbose)
        data = _Data(x, self._y_list(y), batch_size, False, sample_weight)
        if cbs is None:
            cbs = _callbacks.CallbackList(callbacks, model=self)
            cbs.set_params({"verbose": verbose, "epochs": 1, "steps": data.steps(steps)})
        self._reset_metrics()
        batch_logs = cbs.wants_batch_logs("test")
        cbs.on_test_begin()
        start = time.perf_counter()
        n = 0
        test = None
        for bx, by, bw in data.batches(steps):
            cbs.on_test_batch_begin(n)
            bx, by, bw = self._prepare_batch(bx, by, bw, None)
            if test is None:
                test = self._step_fn("test")
            if bw is None:
                test(bx, by)
            else:
                test(bx, by, bw)
            cbs.on_test_batch_end(n, self._logs() if batch_logs else None)
            n += 1
        logs = self._logs()
        cbs.on_test_end(logs)
        if verbose:
            print(_progress_line(n, time.perf_counter() - start, logs, verbose))
        if return_dict:
            return logs
        return self._ordered(logs)

    def predict(
        self,
        x: Any,
        batch_size: int | None = None,
        verbose: Any = "auto",
        steps: int | None = None,
        callbacks: Any = None,
        **kwargs: Any,
    ) -> np.ndarray:
        """The model's outputs on ``x``, batch by batch, as one numpy array.
        TF equivalent: ``tf.keras.Model.predict``."""
        from . import callbacks as _callbacks

        if kwargs:
            raise TypeError(f"predict() got an unexpected keyword argument {sorted(kwargs)[0]!r}")
        verbose = 1 if verbose == "auto" else int(verbose)
        data = _Data(x, None, batch_size, shuffle=False)
        cbs = _callbacks.CallbackList(callbacks, model=self)
        cbs.set_params({"verbose": verbose, "epochs": 1, "steps": data.steps(steps)})
        outs = []
        start = time.perf_counter()
        n = 0
        cbs.on_predict_begin()
        for bx, _, _ in data.batches(steps):
            cbs.on_predict_batch_begin(n)
            out = self(_tensor(bx), training=False)
            outs.append(np.asarray(out.numpy()))
            cbs.on_predict_batch_end(n, {"outputs": out})
            n += 1
        cbs.on_predict_end()
        if verbose:
            print(_progress_line(n, time.perf_counter() - start, {}, verbose))
        if not outs:
            raise ValueError("Unexpected result of `predict_function` (Empty batch_outputs).")
        return np.concatenate(outs, axis=0)

    def predict_on_batch(self, x: Any) -> np.ndarray:
        return np.asarray(self(_tensor(x), training=False).numpy())

    def train_on_batch(
        self, x: Any, y: Any, sample_weight: Any = None, class_weight: Any = None, return_dict: bool = False
    ) -> Any:
        self._require_compiled()
        bx, by, bw = self._prepare_batch(x, self._y_list(y), sample_weight, class_weight)
        self._reset_metrics()
        if bw is None:
            self._step_fn("train")(bx, by)
        else:
            self._step_fn("train")(bx, by, bw)
        logs = self._logs()
        if return_dict:
            return logs
        return self._ordered(logs)

def _per_output_y(y: Any, n: int) -> list[Any]:
    """The targets of a model with ``n`` outputs: a list or tuple of ``n``."""
    if not isinstance(y, (list, tuple)) or len(y) != n:
        got = f"{len(y)} entries" if isinstance(y, (list, tuple)) else "one array"
        raise ValueError(
            f"The model has {n} outputs: `y` must be a list of {n} arrays (or a dict by output name), got {got}"
        )
    return list(y)


def _set_output_shape(layer: Layer, shape: Any) -> None:
    """Notes a layer's output shape for ``summary()``."""
    layer.__dict__["_gt_output_shape"] = shape


def _takes(fn: Any, name: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return True
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _layer_variables(layer: Layer) -> list[Variable]:
    if isinstance(layer, (Model, _LayersSequential)):
        return layer.variables
    return _all_variables(layer, set())


def _bytes(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.2f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n:.2f} GB"


def _fmt(v: float) -> str:
    return f"{v:.4f}" if abs(v) > 1e-3 or v == 0 else f"{v:.4e}"


def _progress_line(steps: int, elapsed: float, logs: dict[str, float], verbose: int) -> str:
    per_step = elapsed / max(steps, 1)
    if per_step >= 1:
        per = f"{per_step:.0f}s/step"
    elif per_step >= 1e-3:
        per = f"{per_step * 1e3:.0f}ms/step"
    else:
        per = f"{per_step * 1e6:.0f}us/step"
    metrics = "".join(f" - {k}: {_fmt(v)}" for k, v in logs.items())
    if verbose == 2:
        return f"{steps}/{steps} - {elapsed:.0f}s - {per}{metrics}"
    return f"{steps}/{steps} {'━' * 20} {elapsed:.0f}s {per}{metrics}"


def _tensor(x: Any) -> Any:
    if x is None or isinstance(x, Tensor):
        return x
    if isinstance(x, (list, tuple)):
        return type(x)(_tensor(e) for e in x)
    if isinstance(x, Variable):
        return x.read_value()
    arr = np.asarray(x)
    if arr.dtype == np.float64:
        arr = arr.astype(np.float32)  # Keras' floatx for numpy data
    return convert_to_tensor(arr)


def _val_triple(validation_data: Any) -> tuple[Any, Any, Any]:
    if isinstance(validation_data, tuple):
        if len(validation_data) not in (2, 3):
            raise ValueError(
                "validation_data must be a tuple (x, y) or (x, y, sample_weight), "
                f"got a tuple of {len(validation_data)} elements"
            )
        return validation_data[0], validation_data[1], validation_data[2] if len(validation_data) == 3 else None
    return validation_data, None, None


def _class_weights(y: Any, class_weight: dict) -> Any:
    """Keras' per-sample weights of ``class_weight``: each sample's class (the argmax
    of a one-hot label, or the rounded label) looked up, 1.0 when absent."""
    labels = np.asarray(y.numpy() if hasattr(y, "numpy") else y)
    if labels.ndim > 1:
        labels = np.argmax(labels, axis=-1) if labels.shape[-1] != 1 else np.squeeze(labels, axis=-1)
    labels = np.round(labels).astype(np.int64).reshape(-1)
    return np.array([float(class_weight.get(int(c), 1.0)) for c in labels], dtype=np.float32)


class _Data:
    """Batches of numpy data (shuffled per epoch when asked) or a ``gt.data.Dataset``;
    each batch is ``(x, y, sample_weight)`` (``None`` for what is not given)."""

    def __init__(self, x: Any, y: Any, batch_size: int | None, shuffle: bool, sample_weight: Any = None) -> None:
        self.dataset: Any = None
        self.batch_size: int = 0  # 0: batched by the dataset
        if hasattr(x, "_gt_dataset"):
            if y is not None:
                raise ValueError("`y` argument is not supported when using a dataset as input.")
            if sample_weight is not None:
                raise ValueError("`sample_weight` argument is not supported when using a dataset as input.")
            if batch_size is not None:
                raise ValueError("`batch_size` is not supported when the input is a dataset (it is batched already)")
            self.dataset = x
            return
        if x is None:
            raise ValueError("fit/evaluate/predict need `x`")
        self.x = _to_numpy(x)
        self.y = None if y is None else _to_numpy(y)
        self.w = None if sample_weight is None else _to_numpy(sample_weight)
        n = _length(self.x)
        if self.y is not None and _length(self.y) != n:
            raise ValueError(f"Data cardinality is ambiguous: x has {n} samples, y has {_length(self.y)}")
        if self.w is not None and _length(self.w) != n:
            raise ValueError(
                f"Data cardinality is ambiguous: x has {n} samples, sample_weight has {_length(self.w)}"
            )
        self.n = n
        self.batch_size = 32 if batch_size is None else int(batch_size)
        if self.batch_size <= 0:
            raise ValueError(f"`batch_size` must be positive, got {batch_size}")
        self.shuffle = shuffle

    def steps(self, limit: int | None) -> int | None:
        """Batches per epoch (None for a dataset without ``limit``)."""
        if self.dataset is not None:
            return limit
        count = math.ceil(self.n / self.batch_size)
        return count if limit is None else min(count, limit)

    def split(self, fraction: float) -> tuple[_Data, tuple[Any, Any, Any]]:
        if self.dataset is not None:
            raise ValueError("`validation_split` is only supported for numpy arrays and tensors")
        cut = int(self.n * (1.0 - fraction))
        head, tail = slice(0, cut), slice(cut, None)
        val = tuple(None if a is None else _take(a, tail) for a in (self.x, self.y, self.w))
        self.x = _take(self.x, head)
        self.y = None if self.y is None else _take(self.y, head)
        self.w = None if self.w is None else _take(self.w, head)
        self.n = cut
        return self, val  # type: ignore[return-value]

    def batches(self, steps: int | None) -> Iterable[tuple[Any, Any, Any]]:
        if self.dataset is not None:
            for i, item in enumerate(self.dataset):
                if steps is not None and i >= steps:
                    return
                if isinstance(item, (tuple, list)) and len(item) == 3:
                    yield item[0], item[1], item[2]
                elif isinstance(item, (tuple, list)) and len(item) >= 2:
                    yield item[0], item[1], None
                else:
                    yield item, None, None
            return
        order = np.random.permutation(self.n) if self.shuffle else np.arange(self.n)
        count = math.ceil(self.n / self.batch_size)
        if steps is not None:
            count = min(count, steps)
        for i in range(count):
            idx = order[i * self.batch_size : (i + 1) * self.batch_size]
            yield (
                _take(self.x, idx),
                None if self.y is None else _take(self.y, idx),
                None if self.w is None else _take(self.w, idx),
            )

def _to_numpy(x: Any) -> Any:
    if isinstance(x, (list, tuple)) and x and not np.isscalar(x[0]) and hasattr(x[0], "shape"):
        return type(x)(_to_numpy(e) for e in x)
    if isinstance(x, (Tensor, Variable)):
        return x.numpy()
    return np.asarray(x)


def _length(x: Any) -> int:
    if isinstance(x, (list, tuple)):
        return _length(x[0])
    if np.ndim(x) == 0:
        raise ValueError("Training data must have a batch dimension")
    return int(np.shape(x)[0])


def _take(x: Any, idx: Any) -> Any:
    if isinstance(x, (list, tuple)):
        return type(x)(_take(e, idx) for e in x)
    return x[idx]


# --- Functional ------------------------------------------------------------


class Functional(Model):
    """A model built from ``Input`` to outputs (``Model(inputs, outputs)``)."""

    def __init__(
        self, inputs: Any = None, outputs: Any = None, name: str | None = None, trainable: bool = True, **kwargs: Any
    ) -> None:
        super().__init__(name=name, trainable=trainable, **kwargs)
        for t in _flatten(inputs) + _flatten(outputs):
            if not isinstance(t, KerasTensor):
                raise TypeError(f"Model(inputs, outputs) expects keras.Input tensors and layer outputs, got {t!r}")
        for t in _flatten(inputs):
            if t._node is not None:
                raise ValueError("Model inputs must come from `keras.Input`, not from a layer's output")
        self._gt_inputs = inputs
        self._gt_outputs = outputs
        self._gt_layers = _graph_layers(outputs)
        for layer in self._gt_layers:
            _set_output_shape(layer, None)
        self.built = True

    @property
    def layers(self) -> list[Layer]:
        return list(self._gt_layers)

    @property
    def inputs(self) -> list[KerasTensor]:
        return _flatten(self._gt_inputs)

    @property
    def outputs(self) -> list[KerasTensor]:
        return _flatten(self._gt_outputs)

    @property
    def variables(self) -> list[Variable]:  # type: ignore[override]
        seen: set[int] = set()
        out = []
        for layer in self._gt_layers:
            for v in _layer_variables(layer):
                if id(v) not in seen:
                    seen.add(id(v))
                    out.append(v)
        return out

    weights = variables

    def _trainable_walk(self) -> list[Variable]:
        out: list[Variable] = []
        for layer in self._gt_layers:
            if layer.trainable:
                out.extend(v for v in _layer_variables(layer) if v.trainable)
        return out

    def _gt_fill_output_shapes(self) -> None:
        def visit(t: Any) -> None:
            if isinstance(t, (list, tuple)):
                for e in t:
                    visit(e)
            elif isinstance(t, KerasTensor) and t._node is not None:
                _set_output_shape(t._node[0], t.shape)
                visit(t._node[1])

        visit(self._gt_outputs)

    def call(self, inputs: Any, training: Any = None, mask: Any = None, **kwargs: Any) -> Any:
        given = _flatten(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        expected = _flatten(self._gt_inputs)
        if len(given) != len(expected):
            raise ValueError(f"Model {self.name} expects {len(expected)} input(s), got {len(given)}")
        values: dict[int, Any] = {}
        for k, v in zip(expected, given):
            v = convert_to_tensor(v)
            if v.dtype.name != getattr(k.dtype, "name", k.dtype) and not v.dtype.is_floating:
                from .._gradtape import cast

                v = cast(v, k.dtype)
            values[id(k)] = v

        def run(t: Any) -> Any:
            if isinstance(t, (list, tuple)):
                return type(t)(run(e) for e in t)
            if not isinstance(t, KerasTensor):
                return t
            if id(t) in values:
                return values[id(t)]
            layer, layer_in, args, kwargs = t._node
            x = run(layer_in)
            if training is not None and "training" not in kwargs and _accepts_training(layer):
                kwargs = {**kwargs, "training": training}
            out = layer(x, *args, **kwargs)
            values[id(t)] = out
            return out

        return run(self._gt_outputs)


def _flatten(x: Any) -> list[Any]:
    if isinstance(x, (list, tuple)):
        return [e for item in x for e in _flatten(item)]
    if isinstance(x, dict):
        return [e for item in x.values() for e in _flatten(item)]
    return [x]


def _graph_layers(outputs: Any) -> list[Layer]:
    """The layers from the inputs to ``outputs``, in call order, each once."""
    order: list[Layer] = []
    seen_t: set[int] = set()

    def visit(t: Any) -> None:
        if isinstance(t, (list, tuple)):
            for e in t:
                visit(e)
            return
        if not isinstance(t, KerasTensor) or t._node is None or id(t) in seen_t:
            return
        seen_t.add(id(t))
        visit(t._node[1])
        if all(layer is not t._node[0] for layer in order):
            order.append(t._node[0])

    visit(outputs)
    return order


# --- Sequential ---------------------------------------------------------------


class Sequential(Model, _LayersSequential):
    """A stack of layers with Keras' training loop. TF equivalent: ``tf.keras.Sequential``.

    A first layer given ``input_shape=`` (or a leading ``keras.Input``) builds the
    model at once, as Keras does.

    >>> import gradtape as gt
    >>> model = gt.keras.Sequential([gt.keras.layers.Dense(3, input_shape=(4,)), gt.keras.layers.Dense(1)])
    >>> [tuple(v.shape) for v in model.trainable_variables]
    [(4, 3), (3,), (3, 1), (1,)]
    """

    def __init__(self, layers: Iterable[Any] | None = None, name: str | None = None, trainable: bool = True) -> None:
        Model.__init__(self, name=name, trainable=trainable)
        self.layers = []
        self._gt_input_shape: tuple | None = None
        for layer in layers or []:
            self.add(layer)

    @property
    def layers(self) -> list[Layer]:
        return self._gt_seq_layers

    @layers.setter
    def layers(self, value: list[Layer]) -> None:
        self._gt_seq_layers = list(value)

    def add(self, layer: Any) -> None:
        """Appends ``layer`` (a ``keras.Input`` first sets the input shape)."""
        if isinstance(layer, KerasTensor):
            if self._gt_seq_layers or self._gt_input_shape is not None:
                raise ValueError("A keras.Input can only be the first element of a Sequential model")
            self._gt_input_shape = layer.shape
            self._gt_input_dtype = layer.dtype
            return
        if not isinstance(layer, Layer):
            raise TypeError(f"Only instances of `keras.Layer` can be added to a Sequential model. Received: {layer!r}")
        if not self._gt_seq_layers and self._gt_input_shape is None and layer._input_shape_arg is not None:
            self._gt_input_shape = (None, *layer._input_shape_arg)
        self._gt_seq_layers.append(layer)
        if self._gt_input_shape is not None:
            self._gt_build_from_shape()

    def pop(self) -> Layer:
        if not self._gt_seq_layers:
            raise IndexError("There are no layers in the model.")
        return self._gt_seq_layers.pop()

    def _gt_build_from_shape(self) -> None:
        shape = self._gt_input_shape
        assert shape is not None
        x = zeros([1 if d is None else d for d in shape], dtype=getattr(self, "_gt_input_dtype", "float32"))
        with example_run():
            for layer in self._gt_seq_layers:
                x = layer(x)
                _set_output_shape(layer, (None, *tuple(x.shape)[1:]))
        self.built = True

    def build(self, input_shape: Any = None) -> None:
        if input_shape is not None and self._gt_input_shape is None:
            self._gt_input_shape = (None, *tuple(input_shape)[1:])
            self._gt_build_from_shape()
        self.built = True

    def call(self, inputs: Any, training: bool | None = None, **kwargs: Any) -> Any:
        x = inputs
        for layer in self._gt_seq_layers:
            x = layer(x, training=training) if training is not None and _accepts_training(layer) else layer(x)
            if getattr(layer, "_gt_output_shape", None) is None:
                _set_output_shape(layer, (None, *tuple(x.shape)[1:]))
        return x

    @property
    def variables(self) -> list[Variable]:  # type: ignore[override]
        return _LayersSequential.variables.fget(self)  # type: ignore[attr-defined]

    weights = variables

    def _trainable_walk(self) -> list[Variable]:
        return _LayersSequential.trainable_variables.fget(self)  # type: ignore[attr-defined]
