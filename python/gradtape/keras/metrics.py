"""Metrics. TF equivalent: ``tf.keras.metrics``.

A metric keeps its state in non-trainable float32 variables: ``update_state``
accumulates a batch, ``result()`` gives the value so far, ``reset_state()`` (or the
Keras 2 name ``reset_states()``) starts over. Calling the metric updates it and
returns the result. Updates work eagerly and inside ``gt.function``.

>>> import gradtape as gt
>>> m = gt.keras.metrics.Mean()
>>> m.update_state([1.0, 2.0, 3.0])
>>> float(m.result())
2.0
"""

from __future__ import annotations

from typing import Any

from .._gradtape import (
    argmax,
    cast,
    convert_to_tensor,
    equal,
    expand_dims,
    reduce_mean,
    reduce_sum,
    size,
    squeeze,
    where,
    zeros_like,
)
from .._variable import Variable
from . import losses as _losses


class Metric:
    """Base class. TF equivalent: ``tf.keras.metrics.Metric``."""

    def __init__(self, name: str | None = None, dtype: Any = None) -> None:
        self.name = name or type(self).__name__.lower()
        self.dtype = dtype or "float32"
        self._variables: list[Variable] = []

    def add_variable(
        self, shape: Any = (), initializer: Any = "zeros", dtype: Any = None, name: str | None = None
    ) -> Variable:
        from .. import initializers

        init = initializers.get(initializer)
        v = Variable(
            init(tuple(shape), dtype or self.dtype),
            trainable=False,
            name=f"{self.name}/{name}",
            dtype=dtype or self.dtype,
        )
        self._variables.append(v)
        return v

    add_weight = add_variable

    @property
    def variables(self) -> list[Variable]:
        return list(self._variables)

    def update_state(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError

    def result(self) -> Any:
        raise NotImplementedError

    def reset_state(self) -> None:
        """Sets every state variable back to zero."""
        for v in self._variables:
            v.assign(zeros_like(v))

    def reset_states(self) -> None:
        """The Keras 2 name of ``reset_state``."""
        self.reset_state()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.update_state(*args, **kwargs)
        return self.result()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name}>"


def _weights_like(values: Any, sample_weight: Any) -> Any:
    w = cast(convert_to_tensor(sample_weight), values.dtype)
    while w.ndim > values.ndim and w.shape[-1] == 1:
        w = squeeze(w, axis=-1)
    while w.ndim < values.ndim:
        w = expand_dims(w, -1)
    return w * (values * 0 + 1)  # broadcast to the values' shape


def _div_no_nan(a: Any, b: Any) -> Any:
    zero = b == 0
    return where(zero, a * 0, a / where(zero, b * 0 + 1, b))


class Sum(Metric):
    """The running (weighted) sum. TF equivalent: ``tf.keras.metrics.Sum``."""

    def __init__(self, name: str = "sum", dtype: Any = None) -> None:
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable(name="total")

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        values = cast(convert_to_tensor(values), self.dtype)
        if sample_weight is not None:
            values = values * _weights_like(values, sample_weight)
        self.total.assign_add(reduce_sum(values))

    def result(self) -> Any:
        return self.total.read_value()


class Mean(Metric):
    """The running (weighted) mean. TF equivalent: ``tf.keras.metrics.Mean``."""

    def __init__(self, name: str = "mean", dtype: Any = None) -> None:
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable(name="total")
        self.count = self.add_variable(name="count")

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        values = cast(convert_to_tensor(values), self.dtype)
        if sample_weight is None:
            self.total.assign_add(reduce_sum(values))
            self.count.assign_add(cast(size(values), self.dtype))
        else:
            w = _weights_like(values, sample_weight)
            self.total.assign_add(reduce_sum(values * w))
            self.count.assign_add(reduce_sum(w))

    def result(self) -> Any:
        return _div_no_nan(self.total.read_value(), self.count.read_value())


class MeanMetricWrapper(Mean):
    """The mean of a per-sample function ``fn(y_true, y_pred)``.
    TF equivalent: ``tf.keras.metrics.MeanMetricWrapper``."""

    def __init__(self, fn: Any, name: str | None = None, dtype: Any = None, **kwargs: Any) -> None:
        super().__init__(name=name or str(getattr(fn, "__name__", "mean")), dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:  # type: ignore[override]
        super().update_state(self._fn(y_true, y_pred, **self._fn_kwargs), sample_weight)


# --- per-sample accuracy functions ------------------------------------------


def accuracy(y_true: Any, y_pred: Any) -> Any:
    """1.0 where ``y_true == y_pred``, else 0.0. TF equivalent: ``tf.keras.metrics.accuracy``."""
    y_pred = convert_to_tensor(y_pred)
    y_true = cast(convert_to_tensor(y_true), y_pred.dtype)
    return cast(equal(y_true, y_pred), "float32")


def binary_accuracy(y_true: Any, y_pred: Any, threshold: float = 0.5) -> Any:
    """The fraction of ``y_pred > threshold`` matching ``y_true``, over the last axis.
    TF equivalent: ``tf.keras.metrics.binary_accuracy``."""
    y_pred = convert_to_tensor(y_pred)
    y_true = convert_to_tensor(y_true)
    hit = cast(y_pred > cast(threshold, y_pred.dtype), "float32")
    return reduce_mean(cast(equal(cast(y_true, "float32"), hit), "float32"), axis=-1)


def categorical_accuracy(y_true: Any, y_pred: Any) -> Any:
    """1.0 where ``argmax(y_true) == argmax(y_pred)``. TF equivalent: ``tf.keras.metrics.categorical_accuracy``."""
    return cast(
        equal(argmax(convert_to_tensor(y_true), axis=-1), argmax(convert_to_tensor(y_pred), axis=-1)), "float32"
    )


def sparse_categorical_accuracy(y_true: Any, y_pred: Any) -> Any:
    """1.0 where the integer label equals ``argmax(y_pred)``.
    TF equivalent: ``tf.keras.metrics.sparse_categorical_accuracy``."""
    y_pred = convert_to_tensor(y_pred)
    y_true = convert_to_tensor(y_true)
    if y_true.ndim == y_pred.ndim and y_true.ndim > 0 and y_true.shape[-1] == 1:
        y_true = squeeze(y_true, axis=-1)
    pred = argmax(y_pred, axis=-1)
    return cast(equal(cast(y_true, "float32"), cast(pred, "float32")), "float32")


class Accuracy(MeanMetricWrapper):
    """TF equivalent: ``tf.keras.metrics.Accuracy``."""

    _direction = "up"  # which way is better (EarlyStopping's mode="auto")

    def __init__(self, name: str = "accuracy", dtype: Any = None) -> None:
        super().__init__(accuracy, name=name, dtype=dtype)


class BinaryAccuracy(MeanMetricWrapper):
    """TF equivalent: ``tf.keras.metrics.BinaryAccuracy`` (threshold 0.5)."""

    _direction = "up"  # which way is better (EarlyStopping's mode="auto")

    def __init__(self, name: str = "binary_accuracy", dtype: Any = None, threshold: float = 0.5) -> None:
        super().__init__(binary_accuracy, name=name, dtype=dtype, threshold=threshold)


class CategoricalAccuracy(MeanMetricWrapper):
    """TF equivalent: ``tf.keras.metrics.CategoricalAccuracy``."""

    _direction = "up"  # which way is better (EarlyStopping's mode="auto")

    def __init__(self, name: str = "categorical_accuracy", dtype: Any = None) -> None:
        super().__init__(categorical_accuracy, name=name, dtype=dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """TF equivalent: ``tf.keras.metrics.SparseCategoricalAccuracy``.

    >>> import gradtape as gt
    >>> m = gt.keras.metrics.SparseCategoricalAccuracy()
    >>> m.update_state([1, 0], [[0.2, 0.8], [0.3, 0.7]])
    >>> float(m.result())
    0.5
    """

    _direction = "up"  # which way is better (EarlyStopping's mode="auto")

    def __init__(self, name: str = "sparse_categorical_accuracy", dtype: Any = None) -> None:
        super().__init__(sparse_categorical_accuracy, name=name, dtype=dtype)


class MeanSquaredError(MeanMetricWrapper):
    """TF equivalent: ``tf.keras.metrics.MeanSquaredError``."""

    _direction = "down"  # which way is better (EarlyStopping's mode="auto")

    def __init__(self, name: str = "mean_squared_error", dtype: Any = None) -> None:
        super().__init__(_losses.mean_squared_error, name=name, dtype=dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    """TF equivalent: ``tf.keras.metrics.MeanAbsoluteError``."""

    _direction = "down"  # which way is better (EarlyStopping's mode="auto")

    def __init__(self, name: str = "mean_absolute_error", dtype: Any = None) -> None:
        super().__init__(_losses.mean_absolute_error, name=name, dtype=dtype)


_BY_NAME: dict[str, Any] = {
    "mse": MeanSquaredError,
    "mean_squared_error": MeanSquaredError,
    "mae": MeanAbsoluteError,
    "mean_absolute_error": MeanAbsoluteError,
    "binary_accuracy": BinaryAccuracy,
    "categorical_accuracy": CategoricalAccuracy,
    "sparse_categorical_accuracy": SparseCategoricalAccuracy,
}


def get(identifier: Any) -> Any:
    """A metric from a name or an object (``"accuracy"`` is resolved by ``compile``
    from the loss and shapes, as Keras does). TF equivalent: ``tf.keras.metrics.get``."""
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]()
    if callable(identifier):
        return MeanMetricWrapper(identifier)
    raise ValueError(f"Could not interpret metric identifier: {identifier!r}")


__all__ = [
    "Metric",
    "Mean",
    "Sum",
    "MeanMetricWrapper",
    "Accuracy",
    "BinaryAccuracy",
    "CategoricalAccuracy",
    "SparseCategoricalAccuracy",
    "MeanSquaredError",
    "MeanAbsoluteError",
    "accuracy",
    "binary_accuracy",
    "categorical_accuracy",
    "sparse_categorical_accuracy",
    "get",
]
