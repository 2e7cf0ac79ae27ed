"""Losses. TF equivalent: ``tf.keras.losses`` (Keras 3's formulas and reductions).

A loss object converts both arguments to its ``dtype`` (float32 unless given),
computes the per-sample loss (the mean or sum over the last axis) and reduces it:
``"sum_over_batch_size"`` (the default: the sum divided by the number of samples),
``"sum"``, or ``None`` / ``"none"``. ``sample_weight`` scales each sample's loss first.

>>> import gradtape as gt
>>> mse = gt.keras.losses.MeanSquaredError()
>>> float(mse([[0.0, 1.0]], [[1.0, 1.0]]))
0.5
"""

from __future__ import annotations

from typing import Any

from .. import nn
from .._gradtape import (
    abs as _abs,
    cast,
    clip_by_value,
    convert_to_tensor,
    expand_dims,
    log,
    reduce_mean,
    reduce_sum,
    size,
    square,
    squeeze,
    where,
)

EPSILON = 1e-7
_REDUCTIONS = (None, "none", "sum", "sum_over_batch_size", "mean", "mean_with_sample_weight", "auto")


def _pair(y_true: Any, y_pred: Any, dtype: Any = None) -> tuple[Any, Any]:
    y_pred = convert_to_tensor(y_pred)
    if dtype is None:
        dtype = y_pred.dtype if y_pred.dtype.is_floating else "float32"
    y_pred = cast(y_pred, dtype)
    y_true = cast(convert_to_tensor(y_true), dtype)
    return y_true, y_pred


# --- function forms: per-sample losses -------------------------------------


def mean_squared_error(y_true: Any, y_pred: Any) -> Any:
    """``mean(square(y_true - y_pred), axis=-1)``. TF equivalent: ``tf.keras.losses.mean_squared_error``."""
    y_true, y_pred = _pair(y_true, y_pred)
    return reduce_mean(square(y_pred - y_true), axis=-1)


def mean_absolute_error(y_true: Any, y_pred: Any) -> Any:
    """``mean(abs(y_true - y_pred), axis=-1)``. TF equivalent: ``tf.keras.losses.mean_absolute_error``."""
    y_true, y_pred = _pair(y_true, y_pred)
    return reduce_mean(_abs(y_pred - y_true), axis=-1)


def huber(y_true: Any, y_pred: Any, delta: float = 1.0) -> Any:
    """Squared error below ``delta``, linear above, averaged over the last axis.
    TF equivalent: ``tf.keras.losses.huber``."""
    y_true, y_pred = _pair(y_true, y_pred)
    d = cast(delta, y_pred.dtype)
    err = y_pred - y_true
    a = _abs(err)
    return reduce_mean(where(a <= d, 0.5 * square(err), d * a - 0.5 * square(d)), axis=-1)


def _check_same_shape(y_true: Any, y_pred: Any, what: str) -> None:
    if tuple(y_true.shape) != tuple(y_pred.shape):
        raise ValueError(
            f"Arguments `target` and `output` must have the same shape for {what}. "
            f"Received: target.shape={tuple(y_true.shape)}, output.shape={tuple(y_pred.shape)}"
        )


def binary_crossentropy(
    y_true: Any, y_pred: Any, from_logits: bool = False, label_smoothing: float = 0.0, axis: int = -1
) -> Any:
    """The binary cross-entropy, averaged over ``axis``. TF equivalent: ``tf.keras.losses.binary_crossentropy``."""
    y_true, y_pred = _pair(y_true, y_pred)
    _check_same_shape(y_true, y_pred, "binary_crossentropy")
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        bce = nn.sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred)
    else:
        p = clip_by_value(y_pred, EPSILON, 1.0 - EPSILON)
        bce = -(y_true * log(p) + (1.0 - y_true) * log(1.0 - p))
    return reduce_mean(bce, axis=axis)


def categorical_crossentropy(
    y_true: Any, y_pred: Any, from_logits: bool = False, label_smoothing: float = 0.0, axis: int = -1
) -> Any:
    """The cross-entropy of one-hot (or soft) labels and probabilities / logits.
    TF equivalent: ``tf.keras.losses.categorical_crossentropy``."""
    y_true, y_pred = _pair(y_true, y_pred)
    _check_same_shape(y_true, y_pred, "categorical_crossentropy")
    if label_smoothing:
        k = cast(y_pred.shape[axis], y_pred.dtype)
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / k
    if from_logits:
        return nn.softmax_cross_entropy_with_logits(labels=y_true, logits=y_pred, axis=axis)
    p = y_pred / reduce_sum(y_pred, axis=axis, keepdims=True)
    p = clip_by_value(p, EPSILON, 1.0 - EPSILON)
    return -reduce_sum(y_true * log(p), axis=axis)


def sparse_categorical_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False, axis: int = -1) -> Any:
    """The cross-entropy of integer labels and probabilities / logits.
    TF equivalent: ``tf.keras.losses.sparse_categorical_crossentropy``."""
    y_pred = convert_to_tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = cast(y_pred, "float32")
    y_true = convert_to_tensor(y_true)
    if y_true.ndim == y_pred.ndim and y_true.ndim > 0 and y_true.shape[-1] == 1:
        y_true = squeeze(y_true, axis=-1)
    if tuple(y_true.shape) != tuple(y_pred.shape[:-1]):
        raise ValueError(
            "Argument `output` must have rank (ndim) `target.ndim + 1` with matching leading dimensions. "
            f"Received: target.shape={tuple(y_true.shape)}, output.shape={tuple(y_pred.shape)}"
        )
    labels = cast(y_true, "int64")
    logits = y_pred if from_logits else log(clip_by_value(y_pred, EPSILON, 1.0 - EPSILON))
    return nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)


MSE = mse = MeanSquaredErrorFn = mean_squared_error
MAE = mae = mean_absolute_error
del MeanSquaredErrorFn


# --- loss objects -------------------------------------------------------------


class Loss:
    """Base class. TF equivalent: ``tf.keras.losses.Loss``: subclasses define
    ``call(y_true, y_pred)`` returning per-sample losses."""

    def __init__(
        self, name: str | None = None, reduction: str | None = "sum_over_batch_size", dtype: Any = None
    ) -> None:
        if reduction not in _REDUCTIONS:
            raise ValueError(
                f"Invalid value for argument `reduction`. Expected one of {_REDUCTIONS}. Received: {reduction!r}"
            )
        self.name = name or type(self).__name__
        self.reduction = "sum_over_batch_size" if reduction == "auto" else reduction
        self.dtype = dtype or "float32"

    def call(self, y_true: Any, y_pred: Any) -> Any:
        raise NotImplementedError

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        y_pred = cast(convert_to_tensor(y_pred), self.dtype)
        y_true = cast(convert_to_tensor(y_true), self.dtype)
        values = self.call(y_true, y_pred)
        return _reduce(values, sample_weight, self.reduction)

    def get_config(self) -> dict:
        return {"name": self.name, "reduction": self.reduction}


def _reduce(values: Any, sample_weight: Any, reduction: str | None) -> Any:
    if sample_weight is not None:
        w = cast(convert_to_tensor(sample_weight), values.dtype)
        while w.ndim > values.ndim and w.shape[-1] == 1:
            w = squeeze(w, axis=-1)
        while w.ndim < values.ndim:
            w = expand_dims(w, -1)
        values = values * w
    if reduction in (None, "none") or values.ndim == 0:
        return values
    total = reduce_sum(values)
    if reduction == "sum":
        return total
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        divisor = reduce_sum(w * (values * 0 + 1))
    else:
        divisor = cast(size(values), values.dtype)
    # divide_no_nan: an empty batch gives 0.
    return where(divisor == 0, divisor * 0, total / where(divisor == 0, divisor * 0 + 1, divisor))


class LossFunctionWrapper(Loss):
    """A loss object around a per-sample function.
    TF equivalent: ``keras.losses.LossFunctionWrapper``."""

    def __init__(
        self,
        fn: Any,
        reduction: str | None = "sum_over_batch_size",
        name: str | None = None,
        dtype: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return self.fn(y_true, y_pred, **self._fn_kwargs)


class MeanSquaredError(LossFunctionWrapper):
    """TF equivalent: ``tf.keras.losses.MeanSquaredError``."""

    def __init__(
        self, reduction: str | None = "sum_over_batch_size", name: str = "mean_squared_error", dtype: Any = None
    ) -> None:
        super().__init__(mean_squared_error, reduction=reduction, name=name, dtype=dtype)


class MeanAbsoluteError(LossFunctionWrapper):
    """TF equivalent: ``tf.keras.losses.MeanAbsoluteError``."""

    def __init__(
        self, reduction: str | None = "sum_over_batch_size", name: str = "mean_absolute_error", dtype: Any = None
    ) -> None:
        super().__init__(mean_absolute_error, reduction=reduction, name=name, dtype=dtype)


class Huber(LossFunctionWrapper):
    """TF equivalent: ``tf.keras.losses.Huber`` (``delta=1.0``)."""

    def __init__(
        self,
        delta: float = 1.0,
        reduction: str | None = "sum_over_batch_size",
        name: str = "huber_loss",
        dtype: Any = None,
    ) -> None:
        super().__init__(huber, reduction=reduction, name=name, dtype=dtype, delta=delta)


class BinaryCrossentropy(LossFunctionWrapper):
    """TF equivalent: ``tf.keras.losses.BinaryCrossentropy``."""

    def __init__(
        self,
        from_logits: bool = False,
        label_smoothing: float = 0.0,
        axis: int = -1,
        reduction: str | None = "sum_over_batch_size",
        name: str = "binary_crossentropy",
        dtype: Any = None,
    ) -> None:
        super().__init__(
            binary_crossentropy,
            reduction=reduction,
            name=name,
            dtype=dtype,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
            axis=axis,
        )
        self.from_logits = from_logits


class CategoricalCrossentropy(LossFunctionWrapper):
    """TF equivalent: ``tf.keras.losses.CategoricalCrossentropy``."""

    def __init__(
        self,
        from_logits: bool = False,
        label_smoothing: float = 0.0,
        axis: int = -1,
        reduction: str | None = "sum_over_batch_size",
        name: str = "categorical_crossentropy",
        dtype: Any = None,
    ) -> None:
        super().__init__(
            categorical_crossentropy,
            reduction=reduction,
            name=name,
            dtype=dtype,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
            axis=axis,
        )
        self.from_logits = from_logits


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    """TF equivalent: ``tf.keras.losses.SparseCategoricalCrossentropy``.

    >>> import gradtape as gt
    >>> loss = gt.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    >>> round(float(loss([1], [[0.0, 0.0]])), 5)
    0.69315
    """

    def __init__(
        self,
        from_logits: bool = False,
        reduction: str | None = "sum_over_batch_size",
        name: str = "sparse_categorical_crossentropy",
        dtype: Any = None,
    ) -> None:
        super().__init__(
            sparse_categorical_crossentropy, reduction=reduction, name=name, dtype=dtype, from_logits=from_logits
        )
        self.from_logits = from_logits

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        # The labels stay integers (Keras casts them back after its float cast).
        y_pred = cast(convert_to_tensor(y_pred), self.dtype)
        values = self.call(convert_to_tensor(y_true), y_pred)
        return _reduce(values, sample_weight, self.reduction)


_BY_NAME: dict[str, Any] = {
    "mse": mean_squared_error,
    "mean_squared_error": mean_squared_error,
    "mae": mean_absolute_error,
    "mean_absolute_error": mean_absolute_error,
    "huber": huber,
    "huber_loss": huber,
    "binary_crossentropy": binary_crossentropy,
    "categorical_crossentropy": categorical_crossentropy,
    "sparse_categorical_crossentropy": sparse_categorical_crossentropy,
}


def get(identifier: Any) -> Any:
    """A loss from a name (``"mse"``, ``"sparse_categorical_crossentropy"``, ...),
    an object or a function. TF equivalent: ``tf.keras.losses.get``."""
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, str):
        fn = _BY_NAME.get(identifier)
        if fn is not None:
            return LossFunctionWrapper(fn, name=identifier)
    raise ValueError(f"Could not interpret loss identifier: {identifier!r}")


__all__ = [
    "Loss",
    "LossFunctionWrapper",
    "MeanSquaredError",
    "MeanAbsoluteError",
    "Huber",
    "BinaryCrossentropy",
    "CategoricalCrossentropy",
    "SparseCategoricalCrossentropy",
    "mean_squared_error",
    "mean_absolute_error",
    "huber",
    "binary_crossentropy",
    "categorical_crossentropy",
    "sparse_categorical_crossentropy",
    "MSE",
    "MAE",
    "mse",
    "mae",
    "get",
]
