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


# --- issue 16, the other Keras 3 metrics -----------------------------------------


def _in_top_k(y_true_index: Any, y_pred: Any, k: int) -> Any:
    """1.0 where the target's prediction is among the ``k`` largest (as TF's
    ``in_top_k``: ties at the boundary count as in)."""
    from .._gradtape import gather, reshape

    y_pred = convert_to_tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = cast(y_pred, "float32")
    n = y_pred.shape[-1]
    flat = reshape(y_pred, [-1, n])
    idx = reshape(cast(convert_to_tensor(y_true_index), "int64"), [-1])
    target = gather(flat, idx, axis=1, batch_dims=1)
    above = reduce_sum(cast(flat > expand_dims(target, -1), "int32"), axis=-1)
    return reshape(cast(above < k, "float32"), list(y_pred.shape[:-1]))


def top_k_categorical_accuracy(y_true: Any, y_pred: Any, k: int = 5) -> Any:
    """1.0 where the one-hot target is among the ``k`` largest predictions.
    TF equivalent: ``tf.keras.metrics.top_k_categorical_accuracy``."""
    return _in_top_k(argmax(convert_to_tensor(y_true), axis=-1), y_pred, k)


def sparse_top_k_categorical_accuracy(y_true: Any, y_pred: Any, k: int = 5) -> Any:
    """1.0 where the integer target is among the ``k`` largest predictions.
    TF equivalent: ``tf.keras.metrics.sparse_top_k_categorical_accuracy``."""
    y_pred = convert_to_tensor(y_pred)
    y_true = convert_to_tensor(y_true)
    if y_true.ndim == y_pred.ndim and y_true.ndim > 0 and y_true.shape[-1] == 1:
        y_true = squeeze(y_true, axis=-1)
    return _in_top_k(y_true, y_pred, k)


class _Wrapped(MeanMetricWrapper):
    """A ``MeanMetricWrapper`` of ``_fn`` taking ``(*_params, name, dtype)``."""

    _fn: Any = None
    _default_name = ""
    _params: tuple[str, ...] = ()
    _defaults: tuple[Any, ...] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cls = type(self)
        names = (*cls._params, "name", "dtype")
        if len(args) > len(names):
            raise TypeError(f"{cls.__name__}() takes at most {len(names)} positional arguments")
        given = dict(zip(names, args))
        for key in kwargs:
            if key not in names or key in given:
                raise TypeError(f"{cls.__name__}() got an unexpected or repeated argument {key!r}")
        given.update(kwargs)
        fn_kwargs = {p: given.get(p, d) for p, d in zip(cls._params, cls._defaults)}
        super().__init__(cls._fn, name=given.get("name") or cls._default_name, dtype=given.get("dtype"), **fn_kwargs)
        for key, value in fn_kwargs.items():
            setattr(self, key, value)


def _cosine(y_true: Any, y_pred: Any, axis: int = -1) -> Any:
    return -_losses.cosine_similarity(y_true, y_pred, axis=axis)


class TopKCategoricalAccuracy(_Wrapped):
    """TF equivalent: ``tf.keras.metrics.TopKCategoricalAccuracy`` (``k=5``)."""

    _direction = "up"
    _fn = staticmethod(top_k_categorical_accuracy)
    _default_name = "top_k_categorical_accuracy"
    _params = ("k",)
    _defaults = (5,)


class SparseTopKCategoricalAccuracy(_Wrapped):
    """TF equivalent: ``tf.keras.metrics.SparseTopKCategoricalAccuracy`` (``k=5``)."""

    _direction = "up"
    _fn = staticmethod(sparse_top_k_categorical_accuracy)
    _default_name = "sparse_top_k_categorical_accuracy"
    _params = ("k",)
    _defaults = (5,)


class BinaryCrossentropy(_Wrapped):
    """TF equivalent: ``tf.keras.metrics.BinaryCrossentropy``."""

    _direction = "down"
    _fn = staticmethod(_losses.binary_crossentropy)
    _default_name = "binary_crossentropy"
    _params = ("from_logits", "label_smoothing")
    _defaults = (False, 0.0)


class CategoricalCrossentropy(_Wrapped):
    """TF equivalent: ``tf.keras.metrics.CategoricalCrossentropy``."""

    _direction = "down"
    _fn = staticmethod(_losses.categorical_crossentropy)
    _default_name = "categorical_crossentropy"
    _params = ("from_logits", "label_smoothing")
    _defaults = (False, 0.0)


class SparseCategoricalCrossentropy(_Wrapped):
    """TF equivalent: ``tf.keras.metrics.SparseCategoricalCrossentropy``."""

    _direction = "down"
    _fn = staticmethod(_losses.sparse_categorical_crossentropy)
    _default_name = "sparse_categorical_crossentropy"
    _params = ("from_logits",)
    _defaults = (False,)


class KLDivergence(_Wrapped):
    """TF equivalent: ``tf.keras.metrics.KLDivergence``."""

    _direction = "down"
    _fn = staticmethod(_losses.kl_divergence)
    _default_name = "kl_divergence"


class CosineSimilarity(_Wrapped):
    """The mean cosine of the angle between targets and predictions (1: aligned).
    TF equivalent: ``tf.keras.metrics.CosineSimilarity``."""

    _direction = "up"
    _fn = staticmethod(_cosine)
    _default_name = "cosine_similarity"
    _params = ("axis",)
    _defaults = (-1,)


class MeanAbsolutePercentageError(_Wrapped):
    """TF equivalent: ``tf.keras.metrics.MeanAbsolutePercentageError``."""

    _direction = "down"
    _fn = staticmethod(_losses.mean_absolute_percentage_error)
    _default_name = "mean_absolute_percentage_error"


class MeanSquaredLogarithmicError(_Wrapped):
    """TF equivalent: ``tf.keras.metrics.MeanSquaredLogarithmicError``."""

    _direction = "down"
    _fn = staticmethod(_losses.mean_squared_logarithmic_error)
    _default_name = "mean_squared_logarithmic_error"


class RootMeanSquaredError(Mean):
    """``sqrt`` of the running mean squared error.
    TF equivalent: ``tf.keras.metrics.RootMeanSquaredError``."""

    _direction = "down"

    def __init__(self, name: str = "root_mean_squared_error", dtype: Any = None) -> None:
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:  # type: ignore[override]
        y_pred = cast(convert_to_tensor(y_pred), self.dtype)
        y_true = cast(convert_to_tensor(y_true), self.dtype)
        err = (y_pred - y_true) * (y_pred - y_true)
        super().update_state(err, sample_weight)

    def result(self) -> Any:
        from .._gradtape import sqrt

        return sqrt(super().result())


# --- confusion-matrix metrics -----------------------------------------------------


_NEG_INF = -1e10  # Keras' threshold (and filler) for predictions outside the top k


def _thresholds(thresholds: Any, default: float = 0.5) -> list[float]:
    if thresholds is None:
        return [default]
    values = [float(t) for t in (thresholds if isinstance(thresholds, (list, tuple)) else [thresholds])]
    for t in values:
        if not 0.0 <= t <= 1.0:
            raise ValueError(f"Threshold values must be in [0, 1]. Received: {values}")
    return values


def _filter_top_k(x: Any, k: int) -> Any:
    """``x`` where an entry is among the ``k`` largest of its last axis (ties: the
    lower index first, as ``top_k``), ``-1e10`` elsewhere (Keras' ``_filter_top_k``)."""
    from .._gradtape import one_hot
    from ..math import top_k as _top_k

    if x.ndim == 0 or k > x.shape[-1]:
        raise ValueError(f"top_k={k} is larger than the last dimension of y_pred {tuple(x.shape)}")
    idx = _top_k(x, k).indices
    mask = reduce_sum(one_hot(idx, int(x.shape[-1]), dtype=x.dtype), axis=-2)
    return x * mask + _NEG_INF * (1.0 - mask)


_COUNT_NAMES = {"tp": "true_positives", "fp": "false_positives", "tn": "true_negatives", "fn": "false_negatives"}


class _Confusion(Metric):
    """Counts of true/false positives/negatives at each of ``thresholds`` (a prediction
    above a threshold is positive), weighted by ``sample_weight`` (and ``label_weights``
    per label); one column per label with ``multi_label`` (rank-2 inputs), after keeping
    only the ``top_k`` predictions of a row and slicing ``class_id`` when given."""

    _kinds: tuple[str, ...] = ("tp", "fp", "tn", "fn")
    true_positives: Any
    false_positives: Any
    true_negatives: Any
    false_negatives: Any

    def __init__(
        self, thresholds: list[float], name: str | None, dtype: Any, class_id: int | None = None,
        top_k: int | None = None, multi_label: bool = False, label_weights: Any = None,
    ) -> None:
        super().__init__(name=name, dtype=dtype)
        self.thresholds = thresholds if len(thresholds) > 1 else thresholds[0]
        self._t = list(thresholds)
        self.class_id = None if class_id is None else int(class_id)
        if top_k is not None and (isinstance(top_k, bool) or int(top_k) < 1):
            raise ValueError(f"Argument `top_k` must be a positive integer. Received: {top_k}")
        self.top_k = None if top_k is None else int(top_k)
        self.multi_label = bool(multi_label)
        self.label_weights = None
        if label_weights is not None:
            from .._gradtape import constant

            self.label_weights = constant(label_weights, dtype=self.dtype)
            if self.label_weights.ndim != 1:
                raise ValueError(f"`label_weights` must be a 1-D list of weights. Received: {label_weights}")
        self._num_labels: int | None = None
        if not self.multi_label:
            self._build(None)

    def _build(self, num_labels: int | None) -> None:
        shape = (len(self._t),) if num_labels is None else (len(self._t), num_labels)
        self._num_labels = num_labels
        for kind in self._kinds:
            setattr(self, _COUNT_NAMES[kind], self.add_variable(shape, name=_COUNT_NAMES[kind]))

    def _built(self) -> bool:
        return hasattr(self, _COUNT_NAMES[self._kinds[0]])

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        from .._gradtape import constant, logical_and, logical_not, reshape

        y_pred = cast(convert_to_tensor(y_pred), "float32")
        y_true = convert_to_tensor(y_true)
        if tuple(y_true.shape) != tuple(y_pred.shape) and y_true.size == y_pred.size:
            y_true = reshape(y_true, list(y_pred.shape))
        if self.multi_label:
            if y_pred.ndim != 2:
                raise ValueError(
                    "`y_pred` must have rank 2 when `multi_label=True`. "
                    f"Found rank {y_pred.ndim}. Full shape received for `y_pred`: {tuple(y_pred.shape)}"
                )
            if not self._built():
                self._build(int(y_pred.shape[1]))
            if int(y_pred.shape[1]) != self._num_labels:
                raise ValueError(
                    f"Number of labels is not consistent: the metric counts {self._num_labels} labels, "
                    f"y_pred has shape {tuple(y_pred.shape)}"
                )
        labels = 1 if y_pred.ndim == 0 else int(y_pred.shape[-1])
        if self.label_weights is not None and self.label_weights.shape[0] not in (1, labels):
            raise ValueError(
                f"Number of labels is not consistent: {self.label_weights.shape[0]} label weights, "
                f"y_pred has shape {tuple(y_pred.shape)}"
            )
        w = None
        if sample_weight is not None:
            w = _weights_like(cast(y_pred, self.dtype), sample_weight)
        if self.label_weights is not None and not self.multi_label:
            lw = self.label_weights * (cast(y_pred, self.dtype) * 0 + 1)
            w = lw if w is None else w * lw
        if self.top_k is not None:
            y_pred = _filter_top_k(y_pred, self.top_k)
        if self.class_id is not None:
            if y_pred.ndim < 2:
                raise ValueError(
                    "When class_id is provided, y_pred must be a 2D array with shape "
                    f"(num_samples, num_classes), found shape: {tuple(y_pred.shape)}"
                )
            if not 0 <= self.class_id < int(y_pred.shape[-1]):
                raise ValueError(f"class_id={self.class_id} is out of range for y_pred of shape {tuple(y_pred.shape)}")
            y_true, y_pred = y_true[..., self.class_id], y_pred[..., self.class_id]
            if w is not None:
                w = w[..., self.class_id]
        if self.multi_label:  # (1, N, L) against thresholds (T, 1, 1): counts (T, L)
            label = expand_dims(cast(y_true, "bool"), 0)
            pred = expand_dims(y_pred, 0)
            t = reshape(constant(self._t, dtype="float32"), [-1, 1, 1])
            if w is not None:
                w = expand_dims(w, 0)
        else:  # everything flattened: counts (T,)
            label = reshape(cast(y_true, "bool"), [1, -1])
            pred = reshape(y_pred, [1, -1])
            t = reshape(constant(self._t, dtype="float32"), [-1, 1])
            if w is not None:
                w = reshape(w, [1, -1])
        above = pred > t
        cases = {
            "tp": logical_and(above, label), "fp": logical_and(above, logical_not(label)),
            "tn": logical_and(logical_not(above), logical_not(label)), "fn": logical_and(logical_not(above), label),
        }
        for kind in self._kinds:
            hits = cast(cases[kind], self.dtype)
            if w is not None:
                hits = hits * w
            getattr(self, _COUNT_NAMES[kind]).assign_add(reduce_sum(hits, axis=1))

    def reset_state(self) -> None:
        if self._built():
            super().reset_state()

    def _per_label(self, values: Any) -> Any:
        """The scalar of a multi-label metric from its per-label ``values``: their mean,
        or their ``label_weights``-weighted mean."""
        if self.label_weights is None:
            return reduce_mean(values)
        return _div_no_nan(reduce_sum(values * self.label_weights), reduce_sum(self.label_weights))


class _Count(_Confusion):
    """One of the four counts at each threshold (a scalar for one threshold)."""

    def __init__(self, thresholds: Any = None, name: str | None = None, dtype: Any = None) -> None:
        super().__init__(_thresholds(thresholds), name or _COUNT_NAMES[self._kinds[0]], dtype)

    def result(self) -> Any:
        v = getattr(self, _COUNT_NAMES[self._kinds[0]]).read_value()
        return v[0] if len(self._t) == 1 else v


class TruePositives(_Count):
    """TF equivalent: ``tf.keras.metrics.TruePositives`` (threshold 0.5)."""

    _kinds = ("tp",)


class FalsePositives(_Count):
    """TF equivalent: ``tf.keras.metrics.FalsePositives`` (threshold 0.5)."""

    _kinds = ("fp",)


class TrueNegatives(_Count):
    """TF equivalent: ``tf.keras.metrics.TrueNegatives`` (threshold 0.5)."""

    _kinds = ("tn",)


class FalseNegatives(_Count):
    """TF equivalent: ``tf.keras.metrics.FalseNegatives`` (threshold 0.5)."""

    _kinds = ("fn",)


class Precision(_Confusion):
    """``tp / (tp + fp)`` at ``thresholds`` (0.5; with ``top_k``, a prediction among the
    ``k`` largest of its row is positive), of class ``class_id`` only when given.
    TF equivalent: ``tf.keras.metrics.Precision``."""

    _kinds = ("tp", "fp")
    _direction = "up"

    def __init__(
        self, thresholds: Any = None, top_k: int | None = None, class_id: int | None = None,
        name: str | None = None, dtype: Any = None,
    ) -> None:
        default = 0.5 if top_k is None else _NEG_INF
        super().__init__(_thresholds(thresholds, default), name or "precision", dtype, class_id, top_k)

    def result(self) -> Any:
        tp = self.true_positives.read_value()
        r = _div_no_nan(tp, tp + self.false_positives.read_value())
        return r[0] if len(self._t) == 1 else r


class Recall(_Confusion):
    """``tp / (tp + fn)`` at ``thresholds`` (0.5; with ``top_k``, a prediction among the
    ``k`` largest of its row is positive), of class ``class_id`` only when given.
    TF equivalent: ``tf.keras.metrics.Recall``."""

    _kinds = ("tp", "fn")
    _direction = "up"

    def __init__(
        self, thresholds: Any = None, top_k: int | None = None, class_id: int | None = None,
        name: str | None = None, dtype: Any = None,
    ) -> None:
        default = 0.5 if top_k is None else _NEG_INF
        super().__init__(_thresholds(thresholds, default), name or "recall", dtype, class_id, top_k)

    def result(self) -> Any:
        tp = self.true_positives.read_value()
        r = _div_no_nan(tp, tp + self.false_negatives.read_value())
        return r[0] if len(self._t) == 1 else r


class AUC(_Confusion):
    """The area under the ROC or precision-recall curve, from the confusion counts at
    ``num_thresholds`` thresholds spread over [0, 1], by Keras 3's Riemann sums
    (``summation_method`` ``"interpolation"``, ``"minoring"``, ``"majoring"``). With
    ``multi_label=True`` one curve per column of rank-2 inputs, the result their mean
    (weighted by ``label_weights`` when given); without it ``label_weights`` weight the
    counts of each label. TF equivalent: ``tf.keras.metrics.AUC``."""

    _direction = "up"

    def __init__(
        self,
        num_thresholds: int = 200,
        curve: str = "ROC",
        summation_method: str = "interpolation",
        name: str | None = None,
        dtype: Any = None,
        thresholds: Any = None,
        multi_label: bool = False,
        num_labels: int | None = None,
        label_weights: Any = None,
        from_logits: bool = False,
    ) -> None:
        if curve.upper() not in ("ROC", "PR"):
            raise ValueError(f'Invalid `curve` argument value "{curve}". Expected one of: ["ROC", "PR"]')
        if summation_method.lower() not in ("interpolation", "minoring", "majoring"):
            raise ValueError(
                f'Invalid `summation_method` argument value "{summation_method}". '
                'Expected one of: ["interpolation", "minoring", "majoring"]'
            )
        if num_labels and not multi_label:
            raise ValueError("`num_labels` is needed only when `multi_label` is True.")
        eps = 1e-7
        if thresholds is not None:
            inner = sorted(_thresholds(thresholds))
        else:
            if isinstance(num_thresholds, bool) or not 1 < int(num_thresholds) <= 2**24:
                # (Keras: any integer > 1; here at most 2^24 thresholds, each a row of counts.)
                raise ValueError(
                    f"Argument `num_thresholds` must be an integer > 1 (and at most 2^24). Received: {num_thresholds}"
                )
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        self.curve = curve.upper()
        self.summation_method = summation_method.lower()
        self.from_logits = bool(from_logits)
        self.num_thresholds = len(inner) + 2
        self.num_labels = num_labels
        self._clip = thresholds is None  # Keras' evenly spaced thresholds see y_pred clipped to [0, 1]
        super().__init__(
            [0.0 - eps, *inner, 1.0 + eps], name or "auc", dtype, multi_label=multi_label, label_weights=label_weights
        )
        if self.multi_label and num_labels:
            self._build(int(num_labels))

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        if self.from_logits:
            from .._gradtape import sigmoid

            y_pred = sigmoid(convert_to_tensor(y_pred))
        if self._clip:
            from .._gradtape import clip_by_value

            y_pred = clip_by_value(cast(convert_to_tensor(y_pred), "float32"), 0.0, 1.0)
        super().update_state(y_true, y_pred, sample_weight)

    def result(self) -> Any:
        from .._gradtape import log, logical_and, maximum, minimum, ones_like

        if not self._built():  # multi_label, nothing seen yet
            return cast(0.0, self.dtype)
        total = reduce_sum if not self.multi_label else (lambda v: self._per_label(reduce_sum(v, axis=0)))
        tp, fp = self.true_positives.read_value(), self.false_positives.read_value()
        tn, fn = self.true_negatives.read_value(), self.false_negatives.read_value()
        n = self.num_thresholds
        if self.curve == "PR" and self.summation_method == "interpolation":
            dtp = tp[: n - 1] - tp[1:]
            p = tp + fp
            dp = p[: n - 1] - p[1:]
            zero = p * 0
            slope = _div_no_nan(dtp, maximum(dp, zero[1:]))
            intercept = tp[1:] - slope * p[1:]
            ratio = where(
                logical_and(p[: n - 1] > 0, p[1:] > 0),
                _div_no_nan(p[: n - 1], maximum(p[1:], zero[1:])),
                ones_like(p[1:]),
            )
            inc = _div_no_nan(slope * (dtp + intercept * log(ratio)), maximum(tp[1:] + fn[1:], zero[1:]))
            return total(inc)
        recall = _div_no_nan(tp, tp + fn)
        if self.curve == "ROC":
            x, y = _div_no_nan(fp, fp + tn), recall
        else:
            x, y = recall, _div_no_nan(tp, tp + fp)
        if self.summation_method == "interpolation":
            heights = (y[: n - 1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = minimum(y[: n - 1], y[1:])
        else:
            heights = maximum(y[: n - 1], y[1:])
        return total((x[: n - 1] - x[1:]) * heights)


_EPSILON = 1e-7  # Keras' backend.epsilon()


class FBetaScore(Metric):
    """``(1 + beta^2) * precision * recall / (beta^2 * precision + recall)`` per class of
    rank-2 ``(batch, classes)`` inputs: ``y_pred > threshold`` is a positive (with
    ``threshold=None``, each row's largest nonzero prediction); ``average`` ``None`` (one
    score per class), ``"micro"`` (from the counts of all classes together), ``"macro"``
    (the mean of the class scores) or ``"weighted"`` (their mean weighted by each class's
    true count). Keras' epsilon (1e-7) guards the divisions.
    TF equivalent: ``tf.keras.metrics.FBetaScore``."""

    _direction = "up"

    def __init__(
        self, average: str | None = None, beta: float = 1.0, threshold: float | None = None,
        name: str = "fbeta_score", dtype: Any = None,
    ) -> None:
        if average not in (None, "micro", "macro", "weighted"):
            raise ValueError(
                "Invalid `average` argument value. Expected one of: "
                f"{{None, 'micro', 'macro', 'weighted'}}. Received: average={average}"
            )
        if not isinstance(beta, float):
            raise ValueError(f"Invalid `beta` argument value. It should be a Python float. Received: beta={beta}")
        if beta <= 0.0:
            raise ValueError(f"Invalid `beta` argument value. It should be > 0. Received: beta={beta}")
        if threshold is not None:
            if not isinstance(threshold, float):
                raise ValueError(
                    f"Invalid `threshold` argument value. It should be a Python float. Received: threshold={threshold}"
                )
            if not 0.0 < threshold <= 1.0:
                raise ValueError(
                    f"Invalid `threshold` argument value. It should verify 0 < threshold <= 1. Received: {threshold}"
                )
        super().__init__(name=name, dtype=dtype)
        self.average = average
        self.beta = beta
        self.threshold = threshold
        self._built = False

    def _build(self, y_true_shape: tuple[int, ...], y_pred_shape: tuple[int, ...]) -> None:
        if len(y_pred_shape) != 2 or len(y_true_shape) != 2:
            raise ValueError(
                "FBetaScore expects 2D inputs with shape (batch_size, output_dim). Received input "
                f"shapes: y_pred.shape={y_pred_shape} and y_true.shape={y_true_shape}."
            )
        shape = () if self.average == "micro" else (int(y_pred_shape[-1]),)
        self.true_positives = self.add_variable(shape, name="true_positives")
        self.false_positives = self.add_variable(shape, name="false_positives")
        self.false_negatives = self.add_variable(shape, name="false_negatives")
        self.intermediate_weights = self.add_variable(shape, name="intermediate_weights")
        self._built = True

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        from .._gradtape import abs as _abs
        from .._gradtape import logical_and, reduce_max

        y_true = cast(convert_to_tensor(y_true), self.dtype)
        y_pred = cast(convert_to_tensor(y_pred), self.dtype)
        if not self._built:
            self._build(tuple(y_true.shape), tuple(y_pred.shape))
        if tuple(y_true.shape) != tuple(y_pred.shape) or y_pred.ndim != 2:
            raise ValueError(
                f"FBetaScore expects y_true and y_pred of the same 2D shape. Received: "
                f"y_true.shape={tuple(y_true.shape)}, y_pred.shape={tuple(y_pred.shape)}"
            )
        if self.average != "micro" and int(y_pred.shape[-1]) != int(self.true_positives.shape[0]):
            raise ValueError(
                f"FBetaScore was built for {int(self.true_positives.shape[0])} classes, "
                f"y_pred has shape {tuple(y_pred.shape)}"
            )
        if y_pred.shape[0] == 0:
            return  # an empty batch adds nothing
        if self.threshold is None:
            # each row's maximum is the positive (an all-zero row has none)
            top = reduce_max(y_pred, axis=-1, keepdims=True)
            positive = logical_and(y_pred >= top, _abs(y_pred) > 1e-9)
        else:
            positive = y_pred > self.threshold
        pred = cast(positive, self.dtype)
        axis = None if self.average == "micro" else 0
        w = None
        if sample_weight is not None:
            w = expand_dims(cast(convert_to_tensor(sample_weight), self.dtype), 1)

        def weighted_sum(v: Any) -> Any:
            return reduce_sum(v if w is None else v * w, axis=axis)

        self.true_positives.assign_add(weighted_sum(pred * y_true))
        self.false_positives.assign_add(weighted_sum(pred * (1.0 - y_true)))
        self.false_negatives.assign_add(weighted_sum((1.0 - pred) * y_true))
        self.intermediate_weights.assign_add(weighted_sum(y_true))

    def result(self) -> Any:
        if not self._built:
            return cast(0.0, self.dtype)
        tp = self.true_positives.read_value()
        precision = tp / (tp + self.false_positives.read_value() + _EPSILON)
        recall = tp / (tp + self.false_negatives.read_value() + _EPSILON)
        b2 = self.beta**2
        score = precision * recall / (b2 * precision + recall + _EPSILON) * (1.0 + b2)
        if self.average == "weighted":
            support = self.intermediate_weights.read_value()
            return reduce_sum(score * (support / (reduce_sum(support) + _EPSILON)))
        if self.average is not None:  # micro (a scalar already) or macro
            return reduce_mean(score)
        return score


class F1Score(FBetaScore):
    """``FBetaScore`` with ``beta=1``: ``2 * precision * recall / (precision + recall)``.
    TF equivalent: ``tf.keras.metrics.F1Score``.

    >>> import gradtape as gt
    >>> m = gt.keras.metrics.F1Score(threshold=0.5)
    >>> m.update_state([[1, 1, 1], [1, 0, 0], [1, 1, 0]],
    ...                [[0.2, 0.6, 0.7], [0.2, 0.6, 0.6], [0.6, 0.8, 0.0]])
    >>> [round(float(v), 4) for v in m.result()]
    [0.5, 0.8, 0.6667]
    """

    def __init__(
        self, average: str | None = None, threshold: float | None = None, name: str = "f1_score", dtype: Any = None,
    ) -> None:
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name, dtype=dtype)


class R2Score(Metric):
    """The coefficient of determination ``1 - SS_res / SS_tot`` over everything seen
    (``class_aggregation="uniform_average"``: the mean over output columns).
    TF equivalent: ``tf.keras.metrics.R2Score``."""

    _direction = "up"

    def __init__(
        self, class_aggregation: str | None = "uniform_average", num_regressors: int = 0,
        name: str = "r2_score", dtype: Any = None,
    ) -> None:
        if class_aggregation not in (None, "uniform_average", "variance_weighted_average"):
            raise ValueError(f"Invalid value for argument `class_aggregation`: {class_aggregation!r}")
        if num_regressors < 0:
            raise ValueError(f"Invalid value for argument `num_regressors`: {num_regressors}")
        super().__init__(name=name, dtype=dtype)
        self.class_aggregation = class_aggregation
        self.num_regressors = int(num_regressors)
        self._built = False

    def _build(self, n: int) -> None:
        self.squared_sum = self.add_variable((n,), name="squared_sum")
        self.sum = self.add_variable((n,), name="sum")
        self.total_mse = self.add_variable((n,), name="residual")
        self.count = self.add_variable((n,), name="count")
        self.num_samples = self.add_variable((), name="num_samples", dtype="int32")
        self._built = True

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        from .._gradtape import ones_like, reshape

        y_pred = cast(convert_to_tensor(y_pred), self.dtype)
        y_true = cast(convert_to_tensor(y_true), self.dtype)
        if y_pred.ndim == 1:
            y_pred, y_true = reshape(y_pred, [-1, 1]), reshape(y_true, [-1, 1])
        if y_pred.ndim != 2 or tuple(y_true.shape) != tuple(y_pred.shape):
            raise ValueError(
                "R2Score expects 2D inputs of the same shape (num_samples, num_outputs). "
                f"Received: y_true.shape={tuple(y_true.shape)}, y_pred.shape={tuple(y_pred.shape)}"
            )
        if not self._built:
            self._build(int(y_pred.shape[1]))
        w = ones_like(y_true) if sample_weight is None else _weights_like(y_true, sample_weight)
        wy = y_true * w
        self.sum.assign_add(reduce_sum(wy, axis=0))
        self.squared_sum.assign_add(reduce_sum(y_true * wy, axis=0))
        self.total_mse.assign_add(reduce_sum((y_true - y_pred) * (y_true - y_pred) * w, axis=0))
        self.count.assign_add(reduce_sum(w, axis=0))
        self.num_samples.assign_add(cast(size(y_true), "int32"))  # elements, as Keras counts

    def result(self) -> Any:
        if not self._built:
            return cast(0.0, self.dtype)
        mean = self.sum.read_value() / self.count.read_value()
        total = self.squared_sum.read_value() - self.sum.read_value() * mean
        raw = 1.0 - _div_no_nan(self.total_mse.read_value(), total)
        raw = where(total == 0, raw * 0, raw)
        if self.class_aggregation == "uniform_average":
            r2 = reduce_mean(raw)
        elif self.class_aggregation == "variance_weighted_average":
            r2 = reduce_sum(total * raw) / reduce_sum(total)
        else:
            r2 = raw
        if self.num_regressors:
            # Keras falls back to the plain score when n - 1 <= p.
            n = cast(self.num_samples.read_value(), self.dtype)
            p = float(self.num_regressors)
            adjusted = 1.0 - (1.0 - r2) * (n - 1.0) / where(n - p - 1.0 > 0, n - p - 1.0, n * 0 + 1)
            r2 = where(n - 1.0 > p, adjusted, r2)
        return r2

    def reset_state(self) -> None:
        for v in self._variables:
            v.assign(zeros_like(v))


_BY_NAME.update({
    "top_k_categorical_accuracy": TopKCategoricalAccuracy,
    "sparse_top_k_categorical_accuracy": SparseTopKCategoricalAccuracy,
    "binary_crossentropy": BinaryCrossentropy, "categorical_crossentropy": CategoricalCrossentropy,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy, "kl_divergence": KLDivergence,
    "cosine_similarity": CosineSimilarity, "mape": MeanAbsolutePercentageError,
    "msle": MeanSquaredLogarithmicError, "precision": Precision, "recall": Recall, "auc": AUC,
    "f1_score": F1Score,
})

__all__ += [
    "TopKCategoricalAccuracy", "SparseTopKCategoricalAccuracy", "BinaryCrossentropy", "CategoricalCrossentropy",
    "SparseCategoricalCrossentropy", "KLDivergence", "CosineSimilarity", "MeanAbsolutePercentageError",
    "MeanSquaredLogarithmicError", "RootMeanSquaredError", "TruePositives", "FalsePositives", "TrueNegatives",
    "FalseNegatives", "Precision", "Recall", "AUC", "R2Score", "FBetaScore", "F1Score", "top_k_categorical_accuracy",
    "sparse_top_k_categorical_accuracy",
]
