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


# --- issue 16, the other Keras 3 losses ------------------------------------------


def _hinge_labels(y_true: Any) -> Any:
    # Keras 3: labels that are all 0 or 1 become -1 / 1; other labels stay as given.
    from .._gradtape import logical_or, reduce_all

    binary = reduce_all(logical_or(y_true == 0, y_true == 1))
    return where(binary, 2.0 * y_true - 1.0, y_true)


def _l2_normalize(x: Any, axis: int) -> Any:
    # Keras 3's `normalize`: x * min(rsqrt(sum(x²)), 1 / epsilon).
    from .._gradtape import minimum, rsqrt

    inv = minimum(rsqrt(reduce_sum(square(x), axis=axis, keepdims=True)), cast(1.0 / EPSILON, x.dtype))
    return x * inv


def hinge(y_true: Any, y_pred: Any) -> Any:
    """``mean(maximum(1 - y_true * y_pred, 0), axis=-1)``, 0/1 labels taken as -1/1.
    TF equivalent: ``tf.keras.losses.hinge``."""
    from .._gradtape import maximum

    y_true, y_pred = _pair(y_true, y_pred)
    y_true = _hinge_labels(y_true)
    return reduce_mean(maximum(1.0 - y_true * y_pred, cast(0.0, y_pred.dtype)), axis=-1)


def squared_hinge(y_true: Any, y_pred: Any) -> Any:
    """``mean(square(maximum(1 - y_true * y_pred, 0)), axis=-1)``.
    TF equivalent: ``tf.keras.losses.squared_hinge``."""
    from .._gradtape import maximum

    y_true, y_pred = _pair(y_true, y_pred)
    y_true = _hinge_labels(y_true)
    return reduce_mean(square(maximum(1.0 - y_true * y_pred, cast(0.0, y_pred.dtype))), axis=-1)


def categorical_hinge(y_true: Any, y_pred: Any) -> Any:
    """``maximum(max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1, 0)`` over the
    last axis. TF equivalent: ``tf.keras.losses.categorical_hinge``."""
    from .._gradtape import maximum, reduce_max

    y_true, y_pred = _pair(y_true, y_pred)
    pos = reduce_sum(y_true * y_pred, axis=-1)
    neg = reduce_max((1.0 - y_true) * y_pred, axis=-1)
    return maximum(neg - pos + 1.0, cast(0.0, y_pred.dtype))


def mean_absolute_percentage_error(y_true: Any, y_pred: Any) -> Any:
    """``100 * mean(abs((y_true - y_pred) / maximum(abs(y_true), 1e-7)), axis=-1)``.
    TF equivalent: ``tf.keras.losses.mean_absolute_percentage_error``."""
    from .._gradtape import maximum

    y_true, y_pred = _pair(y_true, y_pred)
    diff = _abs((y_true - y_pred) / maximum(_abs(y_true), cast(EPSILON, y_pred.dtype)))
    return 100.0 * reduce_mean(diff, axis=-1)


def mean_squared_logarithmic_error(y_true: Any, y_pred: Any) -> Any:
    """``mean(square(log(max(y_pred, eps) + 1) - log(max(y_true, eps) + 1)), axis=-1)``.
    TF equivalent: ``tf.keras.losses.mean_squared_logarithmic_error``."""
    from .._gradtape import maximum

    y_true, y_pred = _pair(y_true, y_pred)
    eps = cast(EPSILON, y_pred.dtype)
    first = log(maximum(y_pred, eps) + 1.0)
    second = log(maximum(y_true, eps) + 1.0)
    return reduce_mean(square(first - second), axis=-1)


def cosine_similarity(y_true: Any, y_pred: Any, axis: int = -1) -> Any:
    """Minus the cosine of the angle between the two along ``axis`` (-1: aligned).
    TF equivalent: ``tf.keras.losses.cosine_similarity``."""
    y_true, y_pred = _pair(y_true, y_pred)
    return -reduce_sum(_l2_normalize(y_true, axis) * _l2_normalize(y_pred, axis), axis=axis)


def log_cosh(y_true: Any, y_pred: Any) -> Any:
    """``mean(log(cosh(y_pred - y_true)), axis=-1)``, computed as ``x + softplus(-2x)
    - log 2``. TF equivalent: ``tf.keras.losses.log_cosh``."""
    import math

    y_true, y_pred = _pair(y_true, y_pred)
    x = y_pred - y_true
    return reduce_mean(x + nn.softplus(x * -2.0) - cast(math.log(2.0), x.dtype), axis=-1)


def kl_divergence(y_true: Any, y_pred: Any) -> Any:
    """``sum(y_true * log(y_true / y_pred), axis=-1)``, both clipped to ``[1e-7, 1]``.
    TF equivalent: ``tf.keras.losses.kl_divergence``."""
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = clip_by_value(y_true, EPSILON, 1.0)
    y_pred = clip_by_value(y_pred, EPSILON, 1.0)
    return reduce_sum(y_true * log(y_true / y_pred), axis=-1)


def poisson(y_true: Any, y_pred: Any) -> Any:
    """``mean(y_pred - y_true * log(y_pred + 1e-7), axis=-1)``.
    TF equivalent: ``tf.keras.losses.poisson``."""
    y_true, y_pred = _pair(y_true, y_pred)
    return reduce_mean(y_pred - y_true * log(y_pred + cast(EPSILON, y_pred.dtype)), axis=-1)


def binary_focal_crossentropy(
    y_true: Any,
    y_pred: Any,
    apply_class_balancing: bool = False,
    alpha: float = 0.25,
    gamma: float = 2.0,
    from_logits: bool = False,
    label_smoothing: float = 0.0,
    axis: int = -1,
) -> Any:
    """The binary cross-entropy scaled by ``(1 - p_t)^gamma`` (and by ``alpha`` with
    class balancing), averaged over ``axis``.
    TF equivalent: ``tf.keras.losses.binary_focal_crossentropy``."""
    from .._gradtape import pow as _pow
    from .._gradtape import sigmoid

    y_true, y_pred = _pair(y_true, y_pred)
    _check_same_shape(y_true, y_pred, "binary_focal_crossentropy")
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        y_pred = sigmoid(y_pred)
    p = clip_by_value(y_pred, EPSILON, 1.0 - EPSILON)
    bce = -(y_true * log(p) + (1.0 - y_true) * log(1.0 - p))
    p_t = y_true * y_pred + (1.0 - y_true) * (1.0 - y_pred)
    focal = _pow(1.0 - p_t, cast(gamma, y_pred.dtype)) * bce
    if apply_class_balancing:
        focal = (y_true * alpha + (1.0 - y_true) * (1.0 - alpha)) * focal
    return reduce_mean(focal, axis=axis)


def categorical_focal_crossentropy(
    y_true: Any,
    y_pred: Any,
    alpha: float = 0.25,
    gamma: float = 2.0,
    from_logits: bool = False,
    label_smoothing: float = 0.0,
    axis: int = -1,
) -> Any:
    """The categorical cross-entropy scaled by ``alpha (1 - p)^gamma`` per class.
    TF equivalent: ``tf.keras.losses.categorical_focal_crossentropy``."""
    from .._gradtape import pow as _pow

    if isinstance(axis, bool):
        raise ValueError(f"`axis` must be of type `int`. Received: axis={axis} of type {type(axis)}")
    y_true, y_pred = _pair(y_true, y_pred)
    _check_same_shape(y_true, y_pred, "categorical_focal_crossentropy")
    if label_smoothing:
        k = cast(y_true.shape[-1], y_pred.dtype)
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / k
    if from_logits:
        y_pred = nn.softmax(y_pred, axis=axis)
    out = y_pred / reduce_sum(y_pred, axis=axis, keepdims=True)
    out = clip_by_value(out, EPSILON, 1.0 - EPSILON)
    cce = -y_true * log(out)
    factor = _pow(1.0 - out, cast(gamma, out.dtype)) * alpha
    return reduce_sum(factor * cce, axis=axis)


kld = KLD = kullback_leibler_divergence = kl_divergence
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
logcosh = log_cosh


class _Wrapped(LossFunctionWrapper):
    """A ``LossFunctionWrapper`` of ``_fn`` taking the keyword arguments ``_params``
    (defaults ``_defaults``) before ``reduction``, ``name`` and ``dtype``."""

    _fn: Any = None
    _default_name = ""
    _params: tuple[str, ...] = ()
    _defaults: tuple[Any, ...] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cls = type(self)
        names = (*cls._params, "reduction", "name", "dtype")
        if len(args) > len(names):
            raise TypeError(f"{cls.__name__}() takes at most {len(names)} positional arguments")
        given = dict(zip(names, args))
        for key in kwargs:
            if key in given:
                raise TypeError(f"{cls.__name__}() got multiple values for argument {key!r}")
            if key not in names:
                raise TypeError(f"{cls.__name__}() got an unexpected keyword argument {key!r}")
        given.update(kwargs)
        fn_kwargs = {p: given.get(p, d) for p, d in zip(cls._params, cls._defaults)}
        super().__init__(
            cls._fn, reduction=given.get("reduction", "sum_over_batch_size"),
            name=given.get("name") or cls._default_name, dtype=given.get("dtype"), **fn_kwargs,
        )
        for key, value in fn_kwargs.items():
            setattr(self, key, value)


class KLDivergence(_Wrapped):
    """TF equivalent: ``tf.keras.losses.KLDivergence``."""

    _fn = staticmethod(kl_divergence)
    _default_name = "kl_divergence"


class Hinge(_Wrapped):
    """TF equivalent: ``tf.keras.losses.Hinge``."""

    _fn = staticmethod(hinge)
    _default_name = "hinge"


class SquaredHinge(_Wrapped):
    """TF equivalent: ``tf.keras.losses.SquaredHinge``."""

    _fn = staticmethod(squared_hinge)
    _default_name = "squared_hinge"


class CategoricalHinge(_Wrapped):
    """TF equivalent: ``tf.keras.losses.CategoricalHinge``."""

    _fn = staticmethod(categorical_hinge)
    _default_name = "categorical_hinge"


class CosineSimilarity(_Wrapped):
    """TF equivalent: ``tf.keras.losses.CosineSimilarity`` (``axis=-1``)."""

    _fn = staticmethod(cosine_similarity)
    _default_name = "cosine_similarity"
    _params = ("axis",)
    _defaults = (-1,)


class LogCosh(_Wrapped):
    """TF equivalent: ``tf.keras.losses.LogCosh``."""

    _fn = staticmethod(log_cosh)
    _default_name = "log_cosh"


class Poisson(_Wrapped):
    """TF equivalent: ``tf.keras.losses.Poisson``."""

    _fn = staticmethod(poisson)
    _default_name = "poisson"


class MeanAbsolutePercentageError(_Wrapped):
    """TF equivalent: ``tf.keras.losses.MeanAbsolutePercentageError``."""

    _fn = staticmethod(mean_absolute_percentage_error)
    _default_name = "mean_absolute_percentage_error"


class MeanSquaredLogarithmicError(_Wrapped):
    """TF equivalent: ``tf.keras.losses.MeanSquaredLogarithmicError``."""

    _fn = staticmethod(mean_squared_logarithmic_error)
    _default_name = "mean_squared_logarithmic_error"


class BinaryFocalCrossentropy(_Wrapped):
    """TF equivalent: ``tf.keras.losses.BinaryFocalCrossentropy`` (``gamma=2``,
    ``alpha=0.25`` with ``apply_class_balancing``)."""

    _fn = staticmethod(binary_focal_crossentropy)
    _default_name = "binary_focal_crossentropy"
    _params = ("apply_class_balancing", "alpha", "gamma", "from_logits", "label_smoothing", "axis")
    _defaults = (False, 0.25, 2.0, False, 0.0, -1)


class CategoricalFocalCrossentropy(_Wrapped):
    """TF equivalent: ``tf.keras.losses.CategoricalFocalCrossentropy``."""

    _fn = staticmethod(categorical_focal_crossentropy)
    _default_name = "categorical_focal_crossentropy"
    _params = ("alpha", "gamma", "from_logits", "label_smoothing", "axis")
    _defaults = (0.25, 2.0, False, 0.0, -1)


class Reduction:
    """The reduction names. TF equivalent: ``tf.keras.losses.Reduction`` (Keras 2's
    constants, as strings Keras 3 takes)."""

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls) -> tuple[str, ...]:
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)

    @classmethod
    def validate(cls, key: str) -> None:
        if key not in cls.all():
            raise ValueError(f'Invalid Reduction Key: {key}. Expected keys are "{cls.all()}"')


_BY_NAME.update({
    "kl_divergence": kl_divergence, "kld": kl_divergence, "kullback_leibler_divergence": kl_divergence,
    "hinge": hinge, "squared_hinge": squared_hinge, "categorical_hinge": categorical_hinge,
    "cosine_similarity": cosine_similarity, "log_cosh": log_cosh, "logcosh": log_cosh, "poisson": poisson,
    "mape": mean_absolute_percentage_error, "mean_absolute_percentage_error": mean_absolute_percentage_error,
    "msle": mean_squared_logarithmic_error, "mean_squared_logarithmic_error": mean_squared_logarithmic_error,
    "binary_focal_crossentropy": binary_focal_crossentropy,
    "categorical_focal_crossentropy": categorical_focal_crossentropy,
})

__all__ += [
    "KLDivergence", "Hinge", "SquaredHinge", "CategoricalHinge", "CosineSimilarity", "LogCosh", "Poisson",
    "MeanAbsolutePercentageError", "MeanSquaredLogarithmicError", "BinaryFocalCrossentropy",
    "CategoricalFocalCrossentropy", "Reduction",
    "kl_divergence", "kld", "KLD", "kullback_leibler_divergence", "hinge", "squared_hinge", "categorical_hinge",
    "cosine_similarity", "log_cosh", "logcosh", "poisson", "mean_absolute_percentage_error", "mape", "MAPE",
    "mean_squared_logarithmic_error", "msle", "MSLE", "binary_focal_crossentropy",
    "categorical_focal_crossentropy",
]
