"""Callbacks of ``Model.fit``. TF equivalent: ``tf.keras.callbacks`` (Keras 3).

``fit`` calls, in order: ``on_train_begin``; per epoch ``on_epoch_begin``, per batch
``on_train_batch_begin`` / ``on_train_batch_end`` (its logs: the running means of
the loss and metrics over the epoch so far), the validation's ``on_test_begin`` /
``on_test_end``, ``on_epoch_end`` (the epoch's logs, with ``val_`` entries); then
``on_train_end`` with the last epoch's logs. Logs are dicts of Python floats.

>>> import gradtape as gt, numpy as np
>>> seen = []
>>> cb = gt.keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append(epoch))
>>> model = gt.keras.Sequential([gt.keras.Input((2,)), gt.keras.layers.Dense(1)])
>>> model.compile("sgd", "mse")
>>> history = model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=3, verbose=0, callbacks=[cb])
>>> seen, history.epoch, len(history.history["loss"])
([0, 1, 2], [0, 1, 2], 3)
"""

from __future__ import annotations

import operator
import os
import warnings
from typing import Any

__all__ = ["Callback", "CallbackList", "EarlyStopping", "History", "LambdaCallback", "ModelCheckpoint"]


class Callback:
    """Base class of callbacks: every hook does nothing. ``self.model`` is the model
    being trained, ``self.params`` ``{"verbose", "epochs", "steps"}``.
    TF equivalent: ``tf.keras.callbacks.Callback``."""

    def __init__(self) -> None:
        self.params: dict[str, Any] | None = None
        self._model: Any = None

    def set_params(self, params: dict[str, Any]) -> None:
        self.params = params

    def set_model(self, model: Any) -> None:
        self._model = model

    @property
    def model(self) -> Any:
        return self._model

    def on_batch_begin(self, batch: int, logs: dict | None = None) -> None:
        """The Keras 2 name of ``on_train_batch_begin`` (which calls it)."""

    def on_batch_end(self, batch: int, logs: dict | None = None) -> None:
        """The Keras 2 name of ``on_train_batch_end`` (which calls it)."""

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        pass

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        pass

    def on_train_batch_begin(self, batch: int, logs: dict | None = None) -> None:
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        self.on_batch_end(batch, logs=logs)

    def on_test_batch_begin(self, batch: int, logs: dict | None = None) -> None:
        pass

    def on_test_batch_end(self, batch: int, logs: dict | None = None) -> None:
        pass

    def on_predict_batch_begin(self, batch: int, logs: dict | None = None) -> None:
        pass

    def on_predict_batch_end(self, batch: int, logs: dict | None = None) -> None:
        pass

    def on_train_begin(self, logs: dict | None = None) -> None:
        pass

    def on_train_end(self, logs: dict | None = None) -> None:
        pass

    def on_test_begin(self, logs: dict | None = None) -> None:
        pass

    def on_test_end(self, logs: dict | None = None) -> None:
        pass

    def on_predict_begin(self, logs: dict | None = None) -> None:
        pass

    def on_predict_end(self, logs: dict | None = None) -> None:
        pass


_HOOKS = [
    "on_epoch_begin",
    "on_epoch_end",
    "on_train_batch_begin",
    "on_train_batch_end",
    "on_test_batch_begin",
    "on_test_batch_end",
    "on_predict_batch_begin",
    "on_predict_batch_end",
    "on_train_begin",
    "on_train_end",
    "on_test_begin",
    "on_test_end",
    "on_predict_begin",
    "on_predict_end",
]


def _pythonify(logs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in (logs or {}).items():
        if hasattr(v, "numpy"):
            v = v.numpy()
        if hasattr(v, "item") and getattr(v, "ndim", 1) == 0:
            v = v.item()
        out[k] = v
    return out


class CallbackList(Callback):
    """Callbacks called as one, each hook in list order (the ``History`` fit adds
    last). TF equivalent: ``tf.keras.callbacks.CallbackList``."""

    def __init__(
        self, callbacks: Any = None, add_history: bool = False, model: Any = None, **params: Any
    ) -> None:
        super().__init__()
        if callbacks is None:
            callbacks = []
        elif isinstance(callbacks, Callback):
            callbacks = [callbacks]
        self.callbacks: list[Callback] = list(callbacks)
        for cb in self.callbacks:
            if not isinstance(cb, Callback):
                raise TypeError(f"callbacks must be keras.callbacks.Callback instances, got {cb!r}")
        self._history = next((cb for cb in self.callbacks if isinstance(cb, History)), None)
        if self._history is None and add_history:
            self._history = History()
            self.callbacks.append(self._history)
        if model is not None:
            self.set_model(model)
        if params:
            self.set_params(params)

    def set_params(self, params: dict[str, Any]) -> None:
        self.params = params
        for cb in self.callbacks:
            cb.set_params(params)

    def wants_batch_logs(self, kind: str = "train") -> bool:
        """Whether a callback has a batch-end hook of ``kind`` (``train`` / ``test``):
        the running logs are computed for each batch only then."""
        hooks = ("on_train_batch_end", "on_batch_end") if kind == "train" else (f"on_{kind}_batch_end",)
        for cb in self.callbacks:
            for h in hooks:
                if h in cb.__dict__ or getattr(type(cb), h) is not getattr(Callback, h):
                    return True
        return False

    def set_model(self, model: Any) -> None:
        self._model = model
        if self._history is not None:
            model.history = self._history
        for cb in self.callbacks:
            cb.set_model(model)

    def _call(self, hook: str, *args: Any, logs: Any = None) -> None:
        # As Keras: batch hooks get `logs=` by keyword, the others positionally.
        logs = _pythonify(logs)
        for cb in self.callbacks:
            if "batch" in hook:
                getattr(cb, hook)(*args, logs=logs)
            else:
                getattr(cb, hook)(*args, logs)

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self._call("on_epoch_begin", epoch, logs=logs)

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        self._call("on_epoch_end", epoch, logs=logs)

    def on_batch_begin(self, batch: int, logs: dict | None = None) -> None:
        self._call("on_batch_begin", batch, logs=logs)

    def on_batch_end(self, batch: int, logs: dict | None = None) -> None:
        self._call("on_batch_end", batch, logs=logs)

    def on_train_batch_begin(self, batch: int, logs: dict | None = None) -> None:
        self._call("on_train_batch_begin", batch, logs=logs)

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        self._call("on_train_batch_end", batch, logs=logs)

    def on_test_batch_begin(self, batch: int, logs: dict | None = None) -> None:
        self._call("on_test_batch_begin", batch, logs=logs)

    def on_test_batch_end(self, batch: int, logs: dict | None = None) -> None:
        self._call("on_test_batch_end", batch, logs=logs)

    def on_predict_batch_begin(self, batch: int, logs: dict | None = None) -> None:
        self._call("on_predict_batch_begin", batch, logs=logs)

    def on_predict_batch_end(self, batch: int, logs: dict | None = None) -> None:
        self._call("on_predict_batch_end", batch, logs=logs)

    def on_train_begin(self, logs: dict | None = None) -> None:
        self._call("on_train_begin", logs=logs)

    def on_train_end(self, logs: dict | None = None) -> None:
        self._call("on_train_end", logs=logs)

    def on_test_begin(self, logs: dict | None = None) -> None:
        self._call("on_test_begin", logs=logs)

    def on_test_end(self, logs: dict | None = None) -> None:
        self._call("on_test_end", logs=logs)

    def on_predict_begin(self, logs: dict | None = None) -> None:
        self._call("on_predict_begin", logs=logs)

    def on_predict_end(self, logs: dict | None = None) -> None:
        self._call("on_predict_end", logs=logs)


class History(Callback):
    """Records each epoch's logs: ``history`` maps each logged name to its
    per-epoch values, ``epoch`` lists the epochs. ``fit`` adds one and returns it.
    TF equivalent: ``tf.keras.callbacks.History``."""

    def __init__(self) -> None:
        super().__init__()
        self.history: dict[str, list[Any]] = {}
        self.epoch: list[int] = []

    def on_train_begin(self, logs: dict | None = None) -> None:
        self.epoch = []

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)
        if self.model is not None:
            self.model.history = self


class LambdaCallback(Callback):
    """A callback from functions: ``on_epoch_begin(epoch, logs)``,
    ``on_epoch_end(epoch, logs)``, ``on_train_batch_begin(batch, logs)``,
    ``on_train_batch_end(batch, logs)``, ``on_train_begin(logs)``,
    ``on_train_end(logs)`` (and any other hook by keyword, e.g. ``on_batch_end``).
    TF equivalent: ``tf.keras.callbacks.LambdaCallback``."""

    def __init__(
        self,
        on_epoch_begin: Any = None,
        on_epoch_end: Any = None,
        on_train_begin: Any = None,
        on_train_end: Any = None,
        on_train_batch_begin: Any = None,
        on_train_batch_end: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        given = {
            "on_epoch_begin": on_epoch_begin,
            "on_epoch_end": on_epoch_end,
            "on_train_begin": on_train_begin,
            "on_train_end": on_train_end,
            "on_train_batch_begin": on_train_batch_begin,
            "on_train_batch_end": on_train_batch_end,
            **kwargs,
        }
        for name, fn in given.items():
            if fn is None:
                continue
            if name in _HOOKS or name in ("on_batch_begin", "on_batch_end"):
                if not callable(fn):
                    raise TypeError(f"LambdaCallback: {name} must be callable, got {fn!r}")
            setattr(self, name, fn)


class _MonitorCallback(Callback):
    """What ``EarlyStopping`` and ``ModelCheckpoint`` share: a monitored log entry,
    its direction (``mode``) and the ``min_delta`` an improvement must exceed."""

    def __init__(self, monitor: str = "val_loss", mode: str = "auto", baseline: Any = None, min_delta: float = 0):
        super().__init__()
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"{type(self).__name__} mode '{mode}' is unknown, fallback to auto mode.", stacklevel=3)
            mode = "auto"
        if not isinstance(monitor, str):
            raise TypeError(f"monitor must be the name of a logged quantity (a str), got {monitor!r}")
        self.monitor = monitor
        self.mode = mode
        self.best = baseline
        self.min_delta = abs(float(min_delta))
        self.monitor_op: Any = None

    def _set_monitor_op(self) -> None:
        if self.mode == "min":
            self.monitor_op = operator.lt
        elif self.mode == "max":
            self.monitor_op = operator.gt
        else:
            name = self.monitor[4:] if self.monitor.startswith("val_") else self.monitor
            if name == "loss" or name.endswith("_loss"):
                self.monitor_op = operator.lt
            for m in getattr(self.model, "metrics", None) or []:
                if getattr(m, "name", None) == name and getattr(m, "_direction", None) is not None:
                    self.monitor_op = operator.gt if m._direction == "up" else operator.lt
            if self.monitor_op is None:
                raise ValueError(
                    f"{type(self).__name__} callback received monitor={self.monitor}, but gradtape isn't able to "
                    "automatically determine whether that metric should be maximized or minimized. Pass "
                    "`mode='max'` in order to monitor based on the highest metric value, or pass `mode='min'` in "
                    "order to use the lowest value."
                )
        if self.monitor_op is operator.lt:
            self.min_delta = -self.min_delta

    def _is_improvement(self, value: float, reference: Any) -> bool:
        if reference is None:
            return True
        return bool(self.monitor_op(value - self.min_delta, reference))


class EarlyStopping(_MonitorCallback):
    """Stops training when ``monitor`` has not improved by more than ``min_delta``
    for ``patience`` epochs (``baseline``: a value to beat; ``start_from_epoch``:
    epochs to wait before watching); ``restore_best_weights`` sets the best epoch's
    weights back at the end. TF equivalent: ``tf.keras.callbacks.EarlyStopping``."""

    def __init__(
        self,
        monitor: str = "val_loss",
        min_delta: float = 0,
        patience: int = 0,
        verbose: int = 0,
        mode: str = "auto",
        baseline: Any = None,
        restore_best_weights: bool = False,
        start_from_epoch: int = 0,
    ) -> None:
        super().__init__(monitor, mode, min_delta=min_delta)
        self.patience = int(patience)
        self.verbose = verbose
        self.baseline = baseline
        self.wait = 0
        self.stopped_epoch = 0
        self.restore_best_weights = bool(restore_best_weights)
        self.best_weights: Any = None
        self.best_epoch = 0
        self.start_from_epoch = int(start_from_epoch)

    def on_train_begin(self, logs: dict | None = None) -> None:
        self.wait = 0
        self.stopped_epoch = 0
        self.best = None
        self.best_weights = None
        self.best_epoch = 0

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if self.monitor_op is None:
            self._set_monitor_op()
        current = self._monitor_value(logs)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
            self.best_epoch = epoch
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs: dict | None = None) -> None:
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print(f"Restoring model weights from the end of the best epoch: {self.best_epoch + 1}.")
            self.model.set_weights(self.best_weights)

    def _monitor_value(self, logs: dict | None) -> Any:
        logs = logs or {}
        value = logs.get(self.monitor)
        if value is None:
            warnings.warn(
                f"Early stopping conditioned on metric `{self.monitor}` which is not available. "
                f"Available metrics are: {','.join(logs)}",
                stacklevel=3,
            )
        return value


class ModelCheckpoint(_MonitorCallback):
    """Saves the model's weights each epoch (or every ``save_freq`` batches) to
    ``filepath``, formatted with ``epoch`` (from 1) and the logs
    (``"ckpt-{epoch:02d}-{val_loss:.2f}.weights.h5"``); ``save_best_only`` saves
    only when ``monitor`` improves. gradtape writes its safetensors weights format
    (``Model.save_weights``): ``save_weights_only=True`` with a ``.weights.h5`` name,
    as Keras requires; whole-model ``.keras`` files are not supported.
    TF equivalent: ``tf.keras.callbacks.ModelCheckpoint``."""

    def __init__(
        self,
        filepath: str | os.PathLike[str],
        monitor: str = "val_loss",
        verbose: int = 0,
        save_best_only: bool = False,
        save_weights_only: bool = False,
        mode: str = "auto",
        save_freq: Any = "epoch",
        initial_value_threshold: Any = None,
    ) -> None:
        super().__init__(monitor, mode, initial_value_threshold)
        self.verbose = verbose
        self.filepath = os.fspath(filepath)
        self.save_best_only = bool(save_best_only)
        self.save_weights_only = bool(save_weights_only)
        if save_freq != "epoch" and (isinstance(save_freq, bool) or not isinstance(save_freq, int) or save_freq < 1):
            raise ValueError(
                f"Unrecognized save_freq: {save_freq}. Expected save_freq are 'epoch' or integer values"
            )
        self.save_freq = save_freq
        self._batches_seen_since_last_saving = 0
        self._last_batch_seen: int | None = None
        self._current_epoch = 0
        if self.save_weights_only:
            if not self.filepath.endswith(".weights.h5"):
                raise ValueError(
                    "When using `save_weights_only=True` in `ModelCheckpoint`, the filepath provided must end in "
                    f"`.weights.h5` (Keras weights format). Received: filepath={self.filepath}"
                )
        else:
            raise ValueError(
                "gradtape has no whole-model (`.keras`) format: use `ModelCheckpoint(..., save_weights_only=True)` "
                f"with a filepath ending in `.weights.h5`. Received: filepath={self.filepath}"
            )

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self._current_epoch = epoch

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        if self.save_freq == "epoch":
            return
        if self._last_batch_seen is None or batch <= self._last_batch_seen:
            added = batch + 1
        else:
            added = batch - self._last_batch_seen
        self._batches_seen_since_last_saving += added
        self._last_batch_seen = batch
        if self._batches_seen_since_last_saving >= self.save_freq:
            self._batches_seen_since_last_saving = 0
            self._save(self._current_epoch, batch, logs)

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if self.monitor_op is None:
            self._set_monitor_op()
        if self.save_freq == "epoch":
            self._save(epoch, None, logs)

    def _file_path(self, epoch: int, batch: int | None, logs: dict) -> str:
        try:
            if batch is None or "batch" in logs:
                return self.filepath.format(epoch=epoch + 1, **logs)
            return self.filepath.format(epoch=epoch + 1, batch=batch + 1, **logs)
        except KeyError as e:
            raise KeyError(f'Failed to format this callback filepath: "{self.filepath}". Reason: {e}') from None

    def _should_save(self, epoch: int, logs: dict, filepath: str) -> bool:
        if not self.save_best_only:
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: saving model to {filepath}")
            return True
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Can save best model only with {self.monitor} available.", stacklevel=3)
            return True
        if self.monitor_op is None:
            self._set_monitor_op()
        best = "None" if self.best is None else f"{self.best:.5f}"
        if self._is_improvement(current, self.best):
            if self.verbose > 0:
                print(
                    f"\nEpoch {epoch + 1}: {self.monitor} improved from {best} to {current:.5f}, "
                    f"saving model to {filepath}"
                )
            self.best = current
            return True
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {best}")
        return False

    def _save(self, epoch: int, batch: int | None, logs: dict | None) -> None:
        if self.model is None:
            raise RuntimeError("ModelCheckpoint has no model: it saves during Model.fit")
        logs = logs or {}
        filepath = self._file_path(epoch, batch, logs)
        if not self._should_save(epoch, logs, filepath):
            return
        if os.path.isdir(filepath):
            raise OSError(
                "Please specify a non-directory filepath for ModelCheckpoint. Filepath used is an existing "
                f"directory: {filepath}"
            )
        dirname = os.path.dirname(filepath)
        if dirname:
            os.makedirs(dirname, exist_ok=True)
        self.model.save_weights(filepath, overwrite=True)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: finished saving model to {filepath}")

