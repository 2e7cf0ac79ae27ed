"""Keras 3's parameter-free and small layers (issue 16): activations, reshaping,
merging, normalization, global pooling, padding and cropping, noise, rescaling."""

from __future__ import annotations

import math
from typing import Any, Callable

from .. import activations, initializers
from .._gradtape import (
    cast,
    concat,
    convert_to_tensor,
    expand_dims,
    maximum,
    minimum,
    reduce_max,
    reduce_mean,
    reduce_sum,
    reshape,
    rsqrt,
    square,
    transpose,
    where,
)
from ._base import Layer


def _ndim_check(layer: Layer, input_shape: Any, ndim: int) -> None:
    if input_shape is None or len(input_shape) != ndim:
        raise ValueError(
            f"Input 0 of layer {layer.name!r} is incompatible with the layer: expected ndim={ndim}, "
            f"found ndim={None if input_shape is None else len(input_shape)}. Full shape received: {input_shape}"
        )


# --- activations -------------------------------------------------------------------


class Activation(Layer):
    """Applies an activation (a name or a callable). TF equivalent:
    ``tf.keras.layers.Activation``.

    >>> import gradtape as gt
    >>> gt.layers.Activation("relu")(gt.constant([-1.0, 2.0])).numpy().tolist()
    [0.0, 2.0]
    """

    supports_masking = True  # the input's Keras mask passes on to the output

    def __init__(self, activation: str | Callable[..., Any], dtype: Any = "float32", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.activation = activations.get(activation)
        self.dtype = dtype

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        return self.activation(inputs)


class ReLU(Layer):
    """``max(x, 0)`` with Keras' options: ``max_value`` caps it, below ``threshold``
    the output is ``negative_slope * (x - threshold)``. TF equivalent:
    ``tf.keras.layers.ReLU``."""

    supports_masking = True  # the input's Keras mask passes on to the output

    def __init__(
        self, max_value: float | None = None, negative_slope: float = 0.0, threshold: float = 0.0,
        dtype: Any = "float32", **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if max_value is not None and max_value < 0.0:
            raise ValueError(f"max_value of a ReLU layer cannot be a negative value. Received: {max_value}")
        if negative_slope is None or negative_slope < 0.0:
            raise ValueError(f"negative_slope of a ReLU layer cannot be a negative value. Received: {negative_slope}")
        if threshold is None or threshold < 0.0:
            raise ValueError(f"threshold of a ReLU layer cannot be a negative value. Received: {threshold}")
        self.max_value, self.negative_slope, self.threshold = max_value, float(negative_slope), float(threshold)
        self.dtype = dtype

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        x = inputs
        t = cast(self.threshold, x.dtype)
        y = where(x > t, x, (x - t) * self.negative_slope if self.negative_slope else x * 0)
        if self.max_value is not None:
            y = minimum(y, cast(self.max_value, x.dtype))
        return y


class LeakyReLU(Layer):
    """``x`` for ``x >= 0``, ``negative_slope * x`` below (0.3). TF equivalent:
    ``tf.keras.layers.LeakyReLU`` (``alpha=`` is Keras 2's name)."""

    supports_masking = True  # the input's Keras mask passes on to the output

    def __init__(self, negative_slope: float = 0.3, dtype: Any = "float32", **kwargs: Any) -> None:
        if "alpha" in kwargs:
            negative_slope = kwargs.pop("alpha")
        super().__init__(**kwargs)
        if negative_slope is None or negative_slope < 0:
            raise ValueError(
                f"The negative_slope value of a Leaky ReLU layer cannot be None or negative. Received: {negative_slope}"
            )
        self.negative_slope = float(negative_slope)
        self.dtype = dtype

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        from .. import nn

        return nn.leaky_relu(inputs, alpha=self.negative_slope)


class ELU(Layer):
    """``x`` above 0, ``alpha * (exp(x) - 1)`` below. TF equivalent: ``tf.keras.layers.ELU``."""

    supports_masking = True  # the input's Keras mask passes on to the output

    def __init__(self, alpha: float = 1.0, dtype: Any = "float32", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.alpha = float(alpha)
        self.dtype = dtype

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        from .. import nn

        y = nn.elu(inputs)
        return y if self.alpha == 1.0 else where(inputs > 0, y, y * self.alpha)


class Softmax(Layer):
    """Softmax over ``axis`` (-1). TF equivalent: ``tf.keras.layers.Softmax``."""

    supports_masking = True  # the input's Keras mask passes on to the output

    def __init__(self, axis: int = -1, dtype: Any = "float32", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axis = axis
        self.dtype = dtype

    def call(self, inputs: Any, mask: Any = None, **kwargs: Any) -> Any:
        from .. import nn

        if mask is not None:
            # Keras: masked positions get a large negative logit before the softmax.
            m = cast(convert_to_tensor(mask), inputs.dtype)
            inputs = inputs + (1.0 - m) * -1e9
        if isinstance(self.axis, (list, tuple)):
            from .. import exp, reduce_logsumexp

            return exp(inputs - reduce_logsumexp(inputs, axis=list(self.axis), keepdims=True))
        return nn.softmax(inputs, axis=self.axis)


class PReLU(Layer):
    """``x`` above 0, ``alpha * x`` below, with a learned ``alpha`` per element of the
    input (or shared along ``shared_axes``). TF equivalent: ``tf.keras.layers.PReLU``."""

    supports_masking = True  # the input's Keras mask passes on to the output

    def __init__(
        self, alpha_initializer: Any = "zeros", alpha_regularizer: Any = None, alpha_constraint: Any = None,
        shared_axes: Any = None, dtype: Any = "float32", **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.alpha_initializer = initializers.get(alpha_initializer)
        if shared_axes is None:
            self.shared_axes = None
        elif isinstance(shared_axes, (list, tuple)):
            self.shared_axes = [int(a) for a in shared_axes]
        else:
            self.shared_axes = [int(shared_axes)]
        self.dtype = dtype
        self.alpha: Any = None

    def build(self, input_shape: Any) -> None:
        if input_shape is None or len(input_shape) < 2:
            raise ValueError(f"PReLU expects inputs of rank >= 2, got shape {input_shape}")
        shape = [int(d) for d in input_shape[1:]]
        for a in self.shared_axes or []:
            shape[a - 1] = 1
        self.alpha = self.add_weight("alpha", tuple(shape), self.alpha_initializer, dtype=self.dtype)
        self.built = True

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        from .. import nn

        pos = nn.relu(inputs)
        neg = -self.alpha * nn.relu(-inputs)
        return pos + neg


# --- reshaping -----------------------------------------------------------------------


class Reshape(Layer):
    """Reshapes each example to ``target_shape`` (one entry may be -1). TF equivalent:
    ``tf.keras.layers.Reshape``."""

    _cast_inputs = False

    def __init__(self, target_shape: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target_shape = tuple(int(d) for d in target_shape)
        if sum(d == -1 for d in self.target_shape) > 1 or any(d < -1 for d in self.target_shape):
            raise ValueError(f"Invalid `target_shape`: {target_shape}")

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        return reshape(inputs, [inputs.shape[0], *self.target_shape])


class Permute(Layer):
    """Permutes the non-batch axes (``dims`` counts them from 1). TF equivalent:
    ``tf.keras.layers.Permute``."""

    _cast_inputs = False

    def __init__(self, dims: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.dims = tuple(int(d) for d in dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(
                "Invalid permutation argument `dims` for Permute Layer. The set of indices in `dims` must be "
                f"consecutive and start from 1. Received dims={dims}"
            )

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        if inputs.ndim != len(self.dims) + 1:
            raise ValueError(f"Permute{self.dims} expects inputs of rank {len(self.dims) + 1}, got {inputs.ndim}")
        return transpose(inputs, [0, *self.dims])


class RepeatVector(Layer):
    """``(batch, features)`` to ``(batch, n, features)``. TF equivalent:
    ``tf.keras.layers.RepeatVector``."""

    _cast_inputs = False

    def __init__(self, n: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(n, int) or isinstance(n, bool):
            raise TypeError(f"Expected an integer value for `n`, got {type(n)}.")
        self.n = n

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        from .. import tile

        if inputs.ndim != 2:
            raise ValueError(f"RepeatVector expects inputs of rank 2, got shape {tuple(inputs.shape)}")
        return tile(expand_dims(inputs, 1), [1, self.n, 1])


class Identity(Layer):
    """Returns its input. TF equivalent: ``tf.keras.layers.Identity``."""

    supports_masking = True  # the input's Keras mask passes on to the output

    _cast_inputs = False

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        return inputs


class Lambda(Layer):
    """Wraps a function of the inputs (``arguments``: extra keyword arguments).
    TF equivalent: ``tf.keras.layers.Lambda``."""

    _cast_inputs = False

    def __init__(self, function: Callable[..., Any], output_shape: Any = None, mask: Any = None,
                 arguments: dict | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not callable(function):
            raise TypeError(f"Lambda expects a callable, got {type(function).__name__}")
        self.function = function
        self.arguments = dict(arguments or {})

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        return self.function(inputs, **self.arguments)


class InputLayer(Layer):
    """The input of a ``Sequential`` model: checks nothing, returns its input.
    TF equivalent: ``tf.keras.layers.InputLayer`` (``shape=`` / ``input_shape=``)."""

    _cast_inputs = False

    def __init__(self, shape: Any = None, batch_size: int | None = None, dtype: Any = None,
                 name: str | None = None, **kwargs: Any) -> None:
        input_shape = kwargs.pop("input_shape", None)
        batch_shape = kwargs.pop("batch_shape", None)
        kwargs.pop("sparse", None)
        kwargs.pop("ragged", None)
        super().__init__(name=name, **kwargs)
        if batch_shape is not None:
            shape = tuple(batch_shape)[1:]
        shape = shape if shape is not None else input_shape
        self._input_shape_arg = None if shape is None else tuple(shape)
        self.batch_size = batch_size
        self.dtype = dtype or "float32"

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        return inputs


# --- merging -------------------------------------------------------------------------


class _Merge(Layer):
    """Combines a list of tensors (broadcast as Keras does)."""

    _cast_inputs = False

    def __init__(self, dtype: Any = "float32", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.dtype = dtype

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(inputs, (list, tuple)) and any(getattr(x, "_gt_symbolic", False) for x in inputs):
            from ..keras._model import _symbolic_call

            return _symbolic_call(self, list(inputs), args, kwargs)
        if not isinstance(inputs, (list, tuple)) or len(inputs) < self._min_inputs:
            raise ValueError(
                f"A {type(self).__name__} layer should be called on a list of at least {self._min_inputs} inputs. "
                f"Received: inputs={inputs!r}"
            )
        xs = [convert_to_tensor(x) for x in inputs]
        xs = [cast(x, self.dtype) if x.dtype.is_integer else x for x in xs]
        return super().__call__(xs, *args, **kwargs)

    _min_inputs = 1

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        out = inputs[0]
        for x in inputs[1:]:
            out = self._merge(out, x)
        return self._finish(out, len(inputs))

    def _merge(self, a: Any, b: Any) -> Any:
        raise NotImplementedError

    def _finish(self, out: Any, n: int) -> Any:
        return out


class Add(_Merge):
    """The elementwise sum of its inputs. TF equivalent: ``tf.keras.layers.Add``."""

    def _merge(self, a: Any, b: Any) -> Any:
        return a + b


class Subtract(_Merge):
    """``inputs[0] - inputs[1]``. TF equivalent: ``tf.keras.layers.Subtract``."""

    _min_inputs = 2

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        if len(inputs) != 2:
            raise ValueError(f"A `Subtract` layer should be called on exactly 2 inputs. Received: {len(inputs)}")
        return inputs[0] - inputs[1]


class Multiply(_Merge):
    """The elementwise product of its inputs. TF equivalent: ``tf.keras.layers.Multiply``."""

    def _merge(self, a: Any, b: Any) -> Any:
        return a * b


class Average(_Merge):
    """The elementwise mean of its inputs. TF equivalent: ``tf.keras.layers.Average``."""

    def _merge(self, a: Any, b: Any) -> Any:
        return a + b

    def _finish(self, out: Any, n: int) -> Any:
        return out / cast(n, out.dtype)


class Maximum(_Merge):
    """The elementwise maximum. TF equivalent: ``tf.keras.layers.Maximum``."""

    def _merge(self, a: Any, b: Any) -> Any:
        return maximum(a, b)


class Minimum(_Merge):
    """The elementwise minimum. TF equivalent: ``tf.keras.layers.Minimum``."""

    def _merge(self, a: Any, b: Any) -> Any:
        return minimum(a, b)


class Concatenate(_Merge):
    """Concatenates its inputs along ``axis`` (-1). TF equivalent:
    ``tf.keras.layers.Concatenate``."""

    def __init__(self, axis: int = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        return concat(list(inputs), axis=self.axis)


class Dot(_Merge):
    """The dot product of two batches of vectors along ``axes`` (per example; with
    ``normalize`` the cosine). TF equivalent: ``tf.keras.layers.Dot``."""

    _min_inputs = 2

    def __init__(self, axes: int | tuple[int, int], normalize: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axes = axes
        self.normalize = bool(normalize)

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        from .. import linalg

        if len(inputs) != 2:
            raise ValueError(f"A `Dot` layer should be called on exactly 2 inputs. Received: {len(inputs)}")
        a, b = inputs
        axes = self.axes if isinstance(self.axes, (list, tuple)) else (self.axes, self.axes)
        for x, t in zip(axes, (a, b)):
            if not -t.ndim <= int(x) < t.ndim or int(x) % t.ndim == 0:
                raise ValueError(f"Dot: axis {x} is out of range (or the batch axis) for an input of rank {t.ndim}")
        ax = [int(x) % t.ndim for x, t in zip(axes, (a, b))]
        if self.normalize:
            a = linalg.l2_normalize(a, axis=ax[0])
            b = linalg.l2_normalize(b, axis=ax[1])
        # Per example: move the contracted axis last in a, first (after batch) in b.
        if a.ndim == 2 and b.ndim == 2:
            return reduce_sum(a * b, axis=1, keepdims=True)
        from .. import matmul

        pa = [d for d in range(a.ndim) if d != ax[0]] + [ax[0]]
        pb = [0, ax[1]] + [d for d in range(1, b.ndim) if d != ax[1]]
        a2, b2 = transpose(a, pa), transpose(b, pb)
        sa, sb = list(a2.shape), list(b2.shape)
        a3 = reshape(a2, [sa[0], -1, sa[-1]])
        b3 = reshape(b2, [sb[0], sb[1], -1])
        out = matmul(a3, b3)
        return reshape(out, [sa[0], *sa[1:-1], *sb[2:]])


def add(inputs: Any, **kwargs: Any) -> Any:
    """``Add()(inputs)``. TF equivalent: ``tf.keras.layers.add``."""
    return Add(**kwargs)(inputs)


def subtract(inputs: Any, **kwargs: Any) -> Any:
    """``Subtract()(inputs)``. TF equivalent: ``tf.keras.layers.subtract``."""
    return Subtract(**kwargs)(inputs)


def multiply(inputs: Any, **kwargs: Any) -> Any:
    """``Multiply()(inputs)``. TF equivalent: ``tf.keras.layers.multiply``."""
    return Multiply(**kwargs)(inputs)


def average(inputs: Any, **kwargs: Any) -> Any:
    """``Average()(inputs)``. TF equivalent: ``tf.keras.layers.average``."""
    return Average(**kwargs)(inputs)


def maximum_(inputs: Any, **kwargs: Any) -> Any:
    """``Maximum()(inputs)``. TF equivalent: ``tf.keras.layers.maximum``."""
    return Maximum(**kwargs)(inputs)


def minimum_(inputs: Any, **kwargs: Any) -> Any:
    """``Minimum()(inputs)``. TF equivalent: ``tf.keras.layers.minimum``."""
    return Minimum(**kwargs)(inputs)


def concatenate(inputs: Any, axis: int = -1, **kwargs: Any) -> Any:
    """``Concatenate(axis)(inputs)``. TF equivalent: ``tf.keras.layers.concatenate``."""
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs: Any, axes: Any = -1, normalize: bool = False, **kwargs: Any) -> Any:
    """``Dot(axes, normalize)(inputs)``. TF equivalent: ``tf.keras.layers.dot``."""
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)


maximum_.__name__ = "maximum"
minimum_.__name__ = "minimum"


# --- normalization -------------------------------------------------------------------


def _axes(axis: Any, ndim: int) -> list[int]:
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    for a in axes:
        if not -ndim <= int(a) < ndim:
            raise ValueError(f"Axis {a} is out of bounds for an input of rank {ndim}")
    return sorted(int(a) % ndim for a in axes)


class LayerNormalization(Layer):
    """Normalizes each example over ``axis`` (-1): ``(x - mean) / sqrt(var + epsilon)
    * gamma + beta``. TF equivalent: ``tf.keras.layers.LayerNormalization``
    (``epsilon=1e-3``)."""

    supports_masking = True  # the input's Keras mask passes on to the output

    def __init__(
        self, axis: Any = -1, epsilon: float = 1e-3, center: bool = True, scale: bool = True,
        beta_initializer: Any = "zeros", gamma_initializer: Any = "ones", dtype: Any = "float32",
        rms_scaling: bool = False, **kwargs: Any,
    ) -> None:
        for k in ("beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"):
            kwargs.pop(k, None)
        super().__init__(**kwargs)
        self.axis, self.epsilon = axis, float(epsilon)
        self.center, self.scale, self.rms_scaling = bool(center), bool(scale), bool(rms_scaling)
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.dtype = dtype
        self.gamma: Any = None
        self.beta: Any = None

    def build(self, input_shape: Any) -> None:
        if input_shape is None or len(input_shape) < 1:
            raise ValueError(f"LayerNormalization expects inputs of rank >= 1, got shape {input_shape}")
        self._ax = _axes(self.axis, len(input_shape))
        shape = tuple(int(input_shape[a]) for a in self._ax)
        if self.scale:
            self.gamma = self.add_weight("gamma", shape, self.gamma_initializer, dtype=self.dtype)
        if self.center and not self.rms_scaling:
            self.beta = self.add_weight("beta", shape, self.beta_initializer, dtype=self.dtype)
        self.built = True

    def _broadcast(self, w: Any, ndim: int) -> Any:
        shape = [1] * ndim
        for a, d in zip(self._ax, w.shape):
            shape[a] = int(d)
        return reshape(w, shape)

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        x = inputs
        if self.rms_scaling:
            # Keras 3's rms_scaling divides by the root of the variance (not of the
            # mean square), then scales by gamma.
            mean = reduce_mean(x, axis=self._ax, keepdims=True)
            var = reduce_mean(square(x - mean), axis=self._ax, keepdims=True)
            y = x * rsqrt(var + self.epsilon)
            return y * self._broadcast(self.gamma, x.ndim) if self.scale else y
        mean = reduce_mean(x, axis=self._ax, keepdims=True)
        var = reduce_mean(square(x - mean), axis=self._ax, keepdims=True)
        inv = rsqrt(var + self.epsilon)
        if self.scale:
            inv = inv * self._broadcast(self.gamma, x.ndim)
        # Keras' order: x * inv + (beta - mean * inv).
        res = -mean * inv
        if self.center:
            res = res + self._broadcast(self.beta, x.ndim)
        return x * inv + res


class GroupNormalization(Layer):
    """Normalizes each example over groups of channels: ``groups`` (32) groups of the
    ``axis`` (-1) channels. TF equivalent: ``tf.keras.layers.GroupNormalization``
    (``epsilon=1e-3``)."""

    def __init__(
        self, groups: int = 32, axis: int = -1, epsilon: float = 1e-3, center: bool = True, scale: bool = True,
        beta_initializer: Any = "zeros", gamma_initializer: Any = "ones", dtype: Any = "float32", **kwargs: Any,
    ) -> None:
        for k in ("beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"):
            kwargs.pop(k, None)
        super().__init__(**kwargs)
        self.groups, self.axis, self.epsilon = int(groups), int(axis), float(epsilon)
        self.center, self.scale = bool(center), bool(scale)
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.dtype = dtype
        self.gamma: Any = None
        self.beta: Any = None

    def build(self, input_shape: Any) -> None:
        if input_shape is None or len(input_shape) < 2:
            raise ValueError(f"GroupNormalization expects inputs of rank >= 2, got shape {input_shape}")
        self._ax = self.axis % len(input_shape)
        c = int(input_shape[self._ax])
        if self.groups == -1:
            self.groups = c
        if self.groups <= 0 or c < self.groups or c % self.groups:
            raise ValueError(
                f"Number of groups ({self.groups}) must be a positive divisor of the number of channels ({c})."
            )
        if self.scale:
            self.gamma = self.add_weight("gamma", (c,), self.gamma_initializer, dtype=self.dtype)
        if self.center:
            self.beta = self.add_weight("beta", (c,), self.beta_initializer, dtype=self.dtype)
        self.built = True

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        x = inputs
        if self._ax != x.ndim - 1:
            perm = [d for d in range(x.ndim) if d != self._ax] + [self._ax]
            inv_perm = [perm.index(d) for d in range(x.ndim)]
            x = transpose(x, perm)
        shape = [int(d) for d in x.shape]
        c = shape[-1]
        g = reshape(x, [*shape[:-1], self.groups, c // self.groups])
        red = list(range(1, g.ndim - 2)) + [g.ndim - 1]
        mean = reduce_mean(g, axis=red, keepdims=True)
        var = reduce_mean(square(g - mean), axis=red, keepdims=True)
        y = reshape((g - mean) * rsqrt(var + self.epsilon), shape)
        if self.scale:
            y = y * self.gamma
        if self.center:
            y = y + self.beta
        if self._ax != inputs.ndim - 1:
            y = transpose(y, inv_perm)
        return y


class UnitNormalization(Layer):
    """Scales each example to unit L2 norm over ``axis`` (-1). TF equivalent:
    ``tf.keras.layers.UnitNormalization``."""

    def __init__(self, axis: Any = -1, dtype: Any = "float32", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axis = axis
        self.dtype = dtype

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        ax = _axes(self.axis, inputs.ndim)
        # Keras 3: x * min(rsqrt(sum(x²)), 1 / 1e-12)... via normalize(epsilon=1e-12)
        inv = minimum(rsqrt(reduce_sum(square(inputs), axis=ax, keepdims=True)), cast(1e12, inputs.dtype))
        return inputs * inv


class Rescaling(Layer):
    """``x * scale + offset``. TF equivalent: ``tf.keras.layers.Rescaling``."""

    def __init__(self, scale: Any, offset: Any = 0.0, dtype: Any = "float32", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scale, self.offset = scale, offset
        self.dtype = dtype

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        scale = cast(convert_to_tensor(self.scale), inputs.dtype)
        offset = cast(convert_to_tensor(self.offset), inputs.dtype)
        return inputs * scale + offset


class Normalization(Layer):
    """``(x - mean) / sqrt(var)`` per feature along ``axis`` (-1), with the mean and
    variance given or learned by ``adapt(data)``; ``invert=True`` undoes it.
    TF equivalent: ``tf.keras.layers.Normalization``.

    >>> import gradtape as gt, numpy as np
    >>> norm = gt.layers.Normalization()
    >>> norm.adapt(np.array([[1.0], [3.0]]))
    >>> norm(gt.constant([[2.0], [5.0]])).numpy().ravel().tolist()
    [0.0, 3.0]
    """

    def __init__(self, axis: Any = -1, mean: Any = None, variance: Any = None, invert: bool = False,
                 dtype: Any = "float32", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if (mean is None) != (variance is None):
            raise ValueError(
                "When setting values directly, both `mean` and `variance` must be set. "
                f"Received: mean={mean} and variance={variance}"
            )
        self.axis = axis
        self.invert = bool(invert)
        self.dtype = dtype
        self._given = (mean, variance)
        self.mean: Any = None
        self.variance: Any = None
        self._adapted = mean is not None

    def _keep(self, ndim: int) -> list[int]:
        if self.axis is None:
            return []
        return _axes(self.axis, ndim)

    def adapt(self, data: Any, batch_size: Any = None, steps: Any = None) -> None:
        """Computes the mean and variance of ``data`` (an array, tensor or a
        ``gt.data.Dataset`` of batches) over every axis but ``axis``."""
        import numpy as np

        if hasattr(data, "__iter__") and not hasattr(data, "shape") and not isinstance(data, (list, tuple)):
            data = np.concatenate([np.asarray(b) for b in data], axis=0)
        x = np.asarray(data, dtype=np.float64)
        keep = self._keep(x.ndim)
        red = tuple(d for d in range(x.ndim) if d not in keep)
        mean = x.mean(axis=red, keepdims=True)
        var = x.var(axis=red, keepdims=True)
        self._given = (None, None)
        self._set(mean, var, x.shape)
        self._adapted = True

    def _set(self, mean: Any, var: Any, input_shape: Any) -> None:
        import numpy as np

        from .._variable import Variable

        ndim = len(input_shape)
        shape = [1] * ndim
        for a in self._keep(ndim):
            shape[a] = int(input_shape[a])
        m = np.asarray(mean, np.float64)
        v = np.asarray(var, np.float64)
        if m.size > 1 or m.ndim == ndim:
            m, v = m.reshape(shape), v.reshape(shape)
        dt = self.dtype
        if self.mean is None:
            self.mean = Variable(m.astype(np.float32), trainable=False, name=f"{self.name}/mean", dtype=dt)
            self.variance = Variable(v.astype(np.float32), trainable=False, name=f"{self.name}/variance", dtype=dt)
        else:
            self.mean.assign(cast(convert_to_tensor(m), dt))
            self.variance.assign(cast(convert_to_tensor(v), dt))
        self.built = True

    def build(self, input_shape: Any) -> None:
        mean, var = self._given
        if mean is not None:
            self._set(mean, var, tuple(input_shape))
        elif self.mean is None:
            raise ValueError(f"Normalization layer {self.name!r} needs `adapt(data)` or `mean`/`variance` first")
        self.built = True

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        from .._gradtape import sqrt

        if self.mean is None:
            self.build(tuple(inputs.shape))
        mean = cast(self.mean.read_value(), inputs.dtype)
        std = maximum(sqrt(cast(self.variance.read_value(), inputs.dtype)), cast(1e-7, inputs.dtype))
        if self.invert:
            return mean + inputs * std
        return (inputs - mean) / std


# --- global pooling, 1-D pooling --------------------------------------------------------


class _GlobalPooling(Layer):
    _rank = 3
    _reduce: Any = None

    def __init__(self, data_format: str | None = None, keepdims: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last", "channels_first"):
            raise ValueError(f"Invalid data_format: {data_format!r}")
        self.data_format = data_format or "channels_last"
        self.keepdims = bool(keepdims)

    def build(self, input_shape: Any) -> None:
        _ndim_check(self, input_shape, self._rank)
        self.built = True

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        axes = list(range(1, self._rank - 1)) if self.data_format == "channels_last" else list(range(2, self._rank))
        return type(self)._reduce(inputs, axis=axes, keepdims=self.keepdims)


class GlobalAveragePooling1D(_GlobalPooling):
    """The mean over the steps of ``(batch, steps, features)`` (with a Keras mask,
    over the unmasked steps only). TF equivalent: ``tf.keras.layers.GlobalAveragePooling1D``."""

    _reduce = staticmethod(reduce_mean)
    supports_masking = True  # consumes the mask; the output has none

    def call(self, inputs: Any, mask: Any = None, **kwargs: Any) -> Any:
        from .. import expand_dims, reduce_sum

        if mask is None:
            return super().call(inputs)
        m = expand_dims(cast(mask, inputs.dtype), 2 if self.data_format == "channels_last" else 1)
        axis = 1 if self.data_format == "channels_last" else 2
        return reduce_sum(inputs * m, axis=axis, keepdims=self.keepdims) / reduce_sum(
            m, axis=axis, keepdims=self.keepdims
        )

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return None


class GlobalMaxPooling1D(_GlobalPooling):
    """The maximum over the steps. TF equivalent: ``tf.keras.layers.GlobalMaxPooling1D``."""

    _reduce = staticmethod(reduce_max)


class GlobalAveragePooling2D(_GlobalPooling):
    """The mean over height and width of NHWC inputs. TF equivalent:
    ``tf.keras.layers.GlobalAveragePooling2D``."""

    _rank = 4
    _reduce = staticmethod(reduce_mean)


class GlobalMaxPooling2D(_GlobalPooling):
    """The maximum over height and width. TF equivalent: ``tf.keras.layers.GlobalMaxPooling2D``."""

    _rank = 4
    _reduce = staticmethod(reduce_max)


class _Pooling1D(Layer):
    _op: Any = None

    def __init__(self, pool_size: int = 2, strides: int | None = None, padding: str = "valid",
                 data_format: str | None = None, **kwargs: Any) -> None:
        from .convolutional import _channels_last, _padding

        super().__init__(**kwargs)
        _channels_last(data_format)
        self.pool_size = int(pool_size[0] if isinstance(pool_size, (list, tuple)) else pool_size)
        s = self.pool_size if strides is None else strides
        self.strides = int(s[0] if isinstance(s, (list, tuple)) else s)
        if self.pool_size <= 0 or self.strides <= 0:
            raise ValueError(f"pool_size and strides must be positive, got {pool_size}, {strides}")
        self.padding = _padding(padding)

    def build(self, input_shape: Any) -> None:
        _ndim_check(self, input_shape, 3)
        self.built = True

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        return type(self)._op(inputs, self.pool_size, self.strides, self.padding)


def _max_pool1d(x: Any, k: int, s: int, p: str) -> Any:
    from .. import nn

    return nn.max_pool1d(x, k, s, p)


def _avg_pool1d(x: Any, k: int, s: int, p: str) -> Any:
    from .. import nn

    return nn.avg_pool1d(x, k, s, p)


class MaxPooling1D(_Pooling1D):
    """Max pooling over the steps of ``(batch, steps, features)``. TF equivalent:
    ``tf.keras.layers.MaxPooling1D``."""

    _op = staticmethod(_max_pool1d)


class AveragePooling1D(_Pooling1D):
    """Average pooling over the steps. TF equivalent: ``tf.keras.layers.AveragePooling1D``."""

    _op = staticmethod(_avg_pool1d)


# --- padding, cropping, upsampling --------------------------------------------------------


def _two_pairs(value: Any, what: str) -> tuple[tuple[int, int], tuple[int, int]]:
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"`{what}` must be non-negative. Received: {value}.")
        return (value, value), (value, value)
    value = tuple(value)
    if len(value) != 2:
        raise ValueError(f"`{what}` should have two elements. Received: {value}.")
    out = []
    for v in value:
        if isinstance(v, int):
            out.append((v, v))
        else:
            v = tuple(int(e) for e in v)
            if len(v) != 2:
                raise ValueError(f"`{what}` entries should be ints or pairs. Received: {value}.")
            out.append(v)
    for a, b in out:
        if a < 0 or b < 0:
            raise ValueError(f"`{what}` must be non-negative. Received: {value}.")
    return out[0], out[1]


class ZeroPadding2D(Layer):
    """Zeros around NHWC images: ``padding`` an int, ``(h, w)`` or ``((top, bottom),
    (left, right))``. TF equivalent: ``tf.keras.layers.ZeroPadding2D``."""

    _cast_inputs = False

    def __init__(self, padding: Any = (1, 1), data_format: str | None = None, **kwargs: Any) -> None:
        from .convolutional import _channels_last

        super().__init__(**kwargs)
        _channels_last(data_format)
        self.padding = _two_pairs(padding, "padding")

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        from .. import pad

        if inputs.ndim != 4:
            raise ValueError(f"ZeroPadding2D expects inputs of rank 4, got shape {tuple(inputs.shape)}")
        return pad(inputs, [[0, 0], list(self.padding[0]), list(self.padding[1]), [0, 0]])


class Cropping2D(Layer):
    """Crops NHWC images: ``cropping`` as ``ZeroPadding2D``'s ``padding``. TF equivalent:
    ``tf.keras.layers.Cropping2D``."""

    _cast_inputs = False

    def __init__(self, cropping: Any = ((0, 0), (0, 0)), data_format: str | None = None, **kwargs: Any) -> None:
        from .convolutional import _channels_last

        super().__init__(**kwargs)
        _channels_last(data_format)
        self.cropping = _two_pairs(cropping, "cropping")

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        if inputs.ndim != 4:
            raise ValueError(f"Cropping2D expects inputs of rank 4, got shape {tuple(inputs.shape)}")
        (t, b), (lf, r) = self.cropping
        h, w = int(inputs.shape[1]), int(inputs.shape[2])
        if t + b >= h or lf + r >= w:
            raise ValueError(
                f"Values in `cropping` argument should be smaller than the corresponding spatial dimension "
                f"of the input. Received: input_shape={tuple(inputs.shape)}, cropping={self.cropping}"
            )
        return inputs[:, t: h - b, lf: w - r, :]


def _bilinear_weights(n_in: int, n_out: int) -> Any:
    """The ``(n_out, n_in)`` matrix of ``tf.image.resize``'s bilinear interpolation
    along one axis (half-pixel centres, no antialiasing; float32 source positions
    as TF's kernel computes them)."""
    import numpy as np

    if n_out == 0 or n_in == 0:
        return np.zeros((n_out, n_in), np.float32)
    scale = np.float32(n_in) / np.float32(n_out)
    src = (np.arange(n_out, dtype=np.float32) + np.float32(0.5)) * scale - np.float32(0.5)
    low = np.floor(src)
    lerp = src - low
    rows = np.arange(n_out)
    w = np.zeros((n_out, n_in), np.float32)
    np.add.at(w, (rows, np.maximum(low.astype(np.int64), 0)), np.float32(1) - lerp)
    np.add.at(w, (rows, np.minimum(np.ceil(src).astype(np.int64), n_in - 1)), lerp)
    return w


class UpSampling2D(Layer):
    """Repeats rows and columns of NHWC images ``size`` times (``interpolation``
    ``"nearest"``), or resizes them by ``size`` with ``tf.image.resize``'s bilinear
    interpolation (``"bilinear"``: half-pixel centres, as Keras 3), differentiably.
    TF equivalent: ``tf.keras.layers.UpSampling2D``."""

    _cast_inputs = False

    def __init__(self, size: Any = (2, 2), data_format: str | None = None, interpolation: str = "nearest",
                 **kwargs: Any) -> None:
        from .convolutional import _channels_last, _pair

        super().__init__(**kwargs)
        _channels_last(data_format)
        if interpolation not in ("nearest", "bilinear"):
            raise ValueError(
                f"gradtape's UpSampling2D supports interpolation 'nearest' and 'bilinear', got {interpolation!r}"
            )
        self.size = _pair(size, "size")
        self.interpolation = interpolation

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        from .. import constant, einsum, repeat

        if inputs.ndim != 4:
            raise ValueError(f"UpSampling2D expects inputs of rank 4, got shape {tuple(inputs.shape)}")
        if self.interpolation == "nearest":
            return repeat(repeat(inputs, self.size[0], axis=1), self.size[1], axis=2)
        if not inputs.dtype.is_floating:
            raise TypeError(f"UpSampling2D(interpolation='bilinear') needs floating inputs, got {inputs.dtype.name}")
        h, w = int(inputs.shape[1]), int(inputs.shape[2])
        rows = constant(_bilinear_weights(h, h * self.size[0]), dtype=inputs.dtype)
        cols = constant(_bilinear_weights(w, w * self.size[1]), dtype=inputs.dtype)
        return einsum("qw,npwc->npqc", cols, einsum("ph,nhwc->npwc", rows, inputs))


# --- noise and dropout ------------------------------------------------------------------


class _Noise(Layer):

    supports_masking = True  # the input's Keras mask passes on to the output
    def __init__(self, rate: float, seed: int | None = None, dtype: Any = "float32", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rate = float(rate)
        self.seed = seed
        self.dtype = dtype

    def _draw(self, kind: str, shape: Any, dtype: Any, **params: Any) -> Any:
        from .. import random

        return getattr(random, kind)(shape, dtype=dtype, **params)


class GaussianNoise(_Noise):
    """Adds ``N(0, stddev²)`` noise in training; the identity otherwise. TF equivalent:
    ``tf.keras.layers.GaussianNoise``."""

    def __init__(self, stddev: float, seed: int | None = None, **kwargs: Any) -> None:
        if not 0 <= stddev <= 1:
            raise ValueError(f"Invalid value received for argument `stddev`. Expected a float value between 0 and 1. "
                             f"Received: stddev={stddev}")
        super().__init__(stddev, seed, **kwargs)
        self.stddev = float(stddev)

    def call(self, inputs: Any, training: Any = None, **kwargs: Any) -> Any:
        if not training or self.stddev == 0:
            return inputs
        return inputs + self._draw("normal", list(inputs.shape), inputs.dtype, stddev=self.stddev)


class GaussianDropout(_Noise):
    """Multiplies by ``N(1, rate / (1 - rate))`` noise in training. TF equivalent:
    ``tf.keras.layers.GaussianDropout``."""

    def __init__(self, rate: float, seed: int | None = None, **kwargs: Any) -> None:
        if not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 and 1. "
                             f"Received: rate={rate}")
        super().__init__(rate, seed, **kwargs)

    def call(self, inputs: Any, training: Any = None, **kwargs: Any) -> Any:
        if not training or not 0 < self.rate < 1:
            return inputs
        std = math.sqrt(self.rate / (1.0 - self.rate))
        return inputs * self._draw("normal", list(inputs.shape), inputs.dtype, mean=1.0, stddev=std)


class _SpatialDropout(_Noise):
    """Drops whole channels (the same for every position) in training."""

    _rank = 3

    def __init__(self, rate: float, seed: int | None = None, **kwargs: Any) -> None:
        if not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 and 1. "
                             f"Received: rate={rate}")
        super().__init__(rate, seed, **kwargs)

    def call(self, inputs: Any, training: Any = None, **kwargs: Any) -> Any:
        if not training or self.rate == 0:
            return inputs
        if inputs.ndim != self._rank:
            raise ValueError(f"{type(self).__name__} expects inputs of rank {self._rank}, got {inputs.ndim}")
        if self.rate >= 1:
            return inputs * 0
        shape = [int(inputs.shape[0])] + [1] * (self._rank - 2) + [int(inputs.shape[-1])]
        keep = cast(self._draw("uniform", shape, "float32") >= self.rate, inputs.dtype)
        return inputs * keep / cast(1.0 - self.rate, inputs.dtype)


class SpatialDropout1D(_SpatialDropout):
    """Drops whole feature channels of ``(batch, steps, channels)``. TF equivalent:
    ``tf.keras.layers.SpatialDropout1D``."""


class SpatialDropout2D(_SpatialDropout):
    """Drops whole channels of NHWC images. TF equivalent: ``tf.keras.layers.SpatialDropout2D``."""

    _rank = 4


class SpatialDropout3D(_SpatialDropout):
    """Drops whole channels of NDHWC volumes. TF equivalent: ``tf.keras.layers.SpatialDropout3D``."""

    _rank = 5


# --- masking ---------------------------------------------------------------------------


class Masking(Layer):
    """Masks the time steps of ``(batch, time, features)`` inputs whose features all
    equal ``mask_value``: those steps become zeros, and the output carries the Keras
    mask (a step is kept where any feature differs) for the layers after it (RNNs skip
    masked steps). TF equivalent: ``tf.keras.layers.Masking``.

    >>> import gradtape as gt
    >>> gt.layers.Masking()(gt.constant([[[1.0], [0.0]]])).numpy().tolist()
    [[[1.0], [0.0]]]
    """

    supports_masking = True

    def __init__(self, mask_value: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mask_value = mask_value

    def _keep(self, inputs: Any) -> Any:
        from .. import not_equal, reduce_any

        return reduce_any(not_equal(inputs, cast(self.mask_value, inputs.dtype)), axis=-1)

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        from .. import expand_dims

        return inputs * cast(expand_dims(self._keep(inputs), -1), inputs.dtype)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return self._keep(inputs)
