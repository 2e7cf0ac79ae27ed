"""``BatchNormalization``: normalize with batch statistics in training, moving ones otherwise.

Only public ``gt`` ops are used, so the layer is differentiable to any order (the
advanced-autodiff guide takes Jacobians through it).
"""

from .. import initializers
from .._gradtape import cast, fused_batch_norm, ones, reduce_mean, rsqrt, reshape, square, stop_gradient, zeros
from ._base import Layer


class BatchNormalization(Layer):
    """Batch normalization. TF equivalent: ``tf.keras.layers.BatchNormalization``.

    With ``training=True`` the inputs are normalized with the mean and (biased)
    variance of the batch, taken over every axis except ``axis``, and the moving
    statistics are updated as ``moving = moving * momentum + batch * (1 - momentum)``
    (the update is not recorded on any tape). With ``training=False`` or ``None`` (and
    always when ``layer.trainable`` is False, as in Keras) the moving statistics are
    used::

        y = gamma * (x - mean) / sqrt(variance + epsilon) + beta

    >>> import gradtape as gt
    >>> bn = gt.layers.BatchNormalization(name="bn")
    >>> y = bn(gt.constant([[0.0], [2.0]]), training=True)
    >>> [round(v, 4) for v in y.numpy()[:, 0].tolist()]
    [-0.9995, 0.9995]
    >>> [v.name for v in bn.variables]
    ['bn/gamma:0', 'bn/beta:0', 'bn/moving_mean:0', 'bn/moving_variance:0']
    >>> [round(v, 6) for v in bn.moving_mean.numpy().tolist()]  # 0.99 * 0 + 0.01 * 1
    [0.01]

    ``fused=True`` (4-D inputs, ``axis`` the last or 1) computes the same ``y`` in one
    ``gt.nn.fused_batch_norm`` call, as Keras 2's fused path does: its moving variance
    is updated with the batch's Bessel-corrected (unbiased) variance, and ``epsilon``
    is at least 1.001e-5. ``fused=None`` or ``False``: the composed computation above
    (Keras 3's numbers).

    >>> bn = gt.layers.BatchNormalization(fused=True)
    >>> y = bn(gt.constant([0.0, 2.0], shape=[2, 1, 1, 1]), training=True)
    >>> [round(v, 4) for v in y.numpy().ravel().tolist()]
    [-0.9995, 0.9995]
    >>> [round(v, 6) for v in bn.moving_variance.numpy().tolist()]  # 0.99 * 1 + 0.01 * 2
    [1.01]
    """

    # (No supports_masking: Keras' masked batch moments are not implemented here, so a
    # mask is dropped with Keras' warning rather than passed on with other statistics.)

    def __init__(
        self,
        axis=-1,
        momentum=0.99,
        epsilon=1e-3,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        moving_mean_initializer="zeros",
        moving_variance_initializer="ones",
        name=None,
        trainable=True,
        dtype="float32",
        fused=None,
        **kwargs,
    ):
        super().__init__(name=name, trainable=trainable, **kwargs)
        if fused not in (None, True, False):
            raise TypeError(f"BatchNormalization: `fused` must be None, True or False, got {fused!r}")
        self.fused = fused
        if isinstance(axis, (list, tuple)):
            self.axis = [self._int_axis(a) for a in axis]
            if not self.axis:
                raise ValueError("BatchNormalization: `axis` must not be an empty list")
        else:
            self.axis = self._int_axis(axis)
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)
        if self.epsilon < 0:
            raise ValueError(f"BatchNormalization: `epsilon` must be >= 0, got {epsilon}")
        self.center = bool(center)
        self.scale = bool(scale)
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)
        self.dtype = dtype
        self.gamma = None
        self.beta = None
        self.moving_mean = None
        self.moving_variance = None
        self._axes = None  # normalized (non-negative) axes, set by build
        self._reduce = None  # the axes statistics are taken over
        self._param_shape = None

    @staticmethod
    def _int_axis(a):
        if isinstance(a, bool) or not isinstance(a, int):
            raise TypeError(f"BatchNormalization: `axis` must be an int or a list of ints, got {a!r}")
        return a

    def build(self, input_shape):
        if input_shape is None or len(input_shape) == 0:
            raise ValueError(
                f"BatchNormalization expects inputs with at least one dimension, got shape {input_shape}"
            )
        ndim = len(input_shape)
        given = self.axis if isinstance(self.axis, list) else [self.axis]
        axes = []
        for a in given:
            if not -ndim <= a < ndim:
                raise ValueError(
                    f"Invalid axis {a} for BatchNormalization with inputs of rank {ndim}"
                )
            axes.append(a % ndim)
        if len(set(axes)) != len(axes):
            raise ValueError(f"Duplicate axis in BatchNormalization: {self.axis}")
        self._axes = sorted(axes)
        self._reduce = [i for i in range(ndim) if i not in self._axes]
        dims = {a: int(input_shape[a]) for a in self._axes}
        if len(self._axes) == 1:
            # Keras: a vector for the common single-axis case...
            self._param_shape = (dims[self._axes[0]],)
        else:
            # ...otherwise the input's rank with 1 on the reduced axes.
            self._param_shape = tuple(dims.get(i, 1) for i in range(ndim))
        self._ndim = ndim
        if self.fused and (ndim != 4 or self._axes not in ([3], [1])):
            raise ValueError(
                "Passing `fused=True` is only supported when the input rank is 4 and the "
                f"axis is -1, 3 or 1; got input shape {tuple(input_shape)} and axis {self.axis}"
            )
        shape = self._param_shape
        if self.scale:
            self.gamma = self.add_weight("gamma", shape, self.gamma_initializer, dtype=self.dtype)
        if self.center:
            self.beta = self.add_weight("beta", shape, self.beta_initializer, dtype=self.dtype)
        self.moving_mean = self.add_weight(
            "moving_mean", shape, self.moving_mean_initializer, trainable=False, dtype=self.dtype
        )
        self.moving_variance = self.add_weight(
            "moving_variance", shape, self.moving_variance_initializer, trainable=False, dtype=self.dtype
        )
        self.built = True

    def _broadcastable(self, p):
        """A parameter reshaped so it broadcasts against the inputs."""
        if len(self._param_shape) == self._ndim and self._ndim > 1:
            return p
        shape = [1] * self._ndim
        shape[self._axes[0]] = self._param_shape[0]
        if self._axes[0] == self._ndim - 1:
            return p  # trailing axis: plain broadcasting already lines up
        return reshape(p, shape)

    def call(self, inputs, training=None):
        if inputs.ndim != self._ndim:
            raise ValueError(
                f"BatchNormalization was built for inputs of rank {self._ndim}, got shape {inputs.shape}"
            )
        x = inputs
        if x.dtype != self.moving_mean.dtype:
            if not x.dtype.is_floating:
                raise TypeError(
                    f"BatchNormalization expects floating inputs, got dtype {x.dtype.name}"
                )
            x = cast(x, self.moving_mean.dtype)  # Keras autocasts to the layer's dtype
        expected = [int(x.shape[a]) for a in self._axes]
        built_for = [self._param_shape[0]] if len(self._axes) == 1 else [self._param_shape[a] for a in self._axes]
        if expected != built_for:
            raise ValueError(
                f"BatchNormalization was built for {built_for} features on axis {self.axis}, "
                f"got inputs of shape {x.shape}"
            )

        if self.fused:
            return self._call_fused(x, bool(training) and self.trainable)

        if bool(training) and self.trainable:
            mean = self._batch_mean(x)
            # The biased variance (as Keras). Unlike tf.nn.moments, the mean is not
            # behind stop_gradient: first derivatives are the same either way, but only
            # this form gives the true second derivatives (Hessians through the layer).
            variance = self._batch_mean(square(x - mean))
            self._update_moving(mean, variance)
        else:
            mean = self._broadcastable(self.moving_mean)
            variance = self._broadcastable(self.moving_variance)

        inv = rsqrt(variance + self.epsilon)
        if self.scale:
            inv = inv * self._broadcastable(self.gamma)
        y = (x - mean) * inv
        if self.center:
            y = y + self._broadcastable(self.beta)
        return y

    def _call_fused(self, x, training):
        c = self._param_shape[0]
        gamma = self.gamma if self.scale else ones([c], dtype=x.dtype)
        beta = self.beta if self.center else zeros([c], dtype=x.dtype)
        fmt = "NHWC" if self._axes == [3] else "NCHW"
        if not training:
            y, _, _ = fused_batch_norm(
                x, gamma, beta, self.moving_mean, self.moving_variance,
                epsilon=self.epsilon, data_format=fmt, is_training=False,
            )
            return y
        # The returned statistics are already the moving ones, updated with factor
        # 1 - momentum (and behind stop_gradient): nothing here is recorded.
        y, mean, variance = fused_batch_norm(
            x, gamma, beta, self.moving_mean, self.moving_variance,
            epsilon=self.epsilon, data_format=fmt, is_training=True,
            exponential_avg_factor=1.0 - self.momentum,
        )
        self.moving_mean.assign(mean)
        self.moving_variance.assign(variance)
        return y

    def _batch_mean(self, t):
        if not self._reduce:
            # Every axis is a feature axis (e.g. a 1-D input): each "batch" is one value.
            return t
        return reduce_mean(t, axis=self._reduce, keepdims=True)

    def _update_moving(self, mean, variance):
        m = self.momentum
        for var, batch in ((self.moving_mean, mean), (self.moving_variance, variance)):
            batch = reshape(stop_gradient(batch), var.shape)
            # A Variable that is not trainable is not watched automatically, and the
            # batch statistic is behind stop_gradient, so nothing here is recorded.
            var.assign(var * m + batch * (1.0 - m))

    def get_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "axis": self.axis,
            "momentum": self.momentum,
            "epsilon": self.epsilon,
            "center": self.center,
            "scale": self.scale,
            "fused": self.fused,
        }
