"""Variable initializers. TF equivalent: ``tf.keras.initializers`` (Keras 3's
defaults, fan computation and scaling; the random streams are gradtape's, so seeded
values are reproducible here but are not TF's numbers).

>>> import gradtape as gt
>>> gt.initializers.get("zeros")((2,), "float32").numpy().tolist()
[0.0, 0.0]
"""

from . import random as _random
from ._gradtape import _variance_scaling
from ._gradtape import cast as _cast
from ._gradtape import eye as _eye
from ._gradtape import fill as _fill
from ._gradtape import ones as _ones
from ._gradtape import zeros as _zeros


class Initializer:
    """Base class: ``initializer(shape, dtype)`` gives a tensor.
    TF equivalent: ``tf.keras.initializers.Initializer``."""

    def __call__(self, shape, dtype="float32"):
        raise NotImplementedError

    def get_config(self):
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}


class Zeros(Initializer):
    """All zeros. TF equivalent: ``tf.keras.initializers.Zeros``."""

    def __call__(self, shape, dtype="float32"):
        return _zeros(tuple(shape), dtype=dtype or "float32")


class Ones(Initializer):
    """All ones. TF equivalent: ``tf.keras.initializers.Ones``."""

    def __call__(self, shape, dtype="float32"):
        return _ones(tuple(shape), dtype=dtype or "float32")


class Constant(Initializer):
    """Every entry ``value`` (a number, or an array broadcast to the shape, as Keras 3
    allows). TF equivalent: ``tf.keras.initializers.Constant``."""

    def __init__(self, value=0.0):
        self.value = value

    def __call__(self, shape, dtype="float32"):
        if isinstance(self.value, (int, float)) or getattr(self.value, "ndim", None) == 0:
            return _cast(_fill(tuple(shape), float(self.value)), dtype or "float32")
        import numpy as np

        from ._gradtape import convert_to_tensor

        try:
            value = np.broadcast_to(np.asarray(self.value, dtype=np.float64), tuple(shape))
        except ValueError:
            raise ValueError(
                f"Constant initializer: a value of shape {np.shape(self.value)} does not broadcast to {tuple(shape)}"
            ) from None
        return _cast(convert_to_tensor(np.ascontiguousarray(value)), dtype or "float32")


class RandomNormal(Initializer):
    """Normal (mean 0, stddev 0.05 by default). TF equivalent: ``tf.keras.initializers.RandomNormal``."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype="float32"):
        return _random.normal(tuple(shape), self.mean, self.stddev, dtype=dtype or "float32", seed=self.seed)


class RandomUniform(Initializer):
    """Uniform on [-0.05, 0.05) by default. TF equivalent: ``tf.keras.initializers.RandomUniform``."""

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype="float32"):
        return _random.uniform(tuple(shape), self.minval, self.maxval, dtype=dtype or "float32", seed=self.seed)


class TruncatedNormal(Initializer):
    """Normal cut at two standard deviations (stddev 0.05 by default).
    TF equivalent: ``tf.keras.initializers.TruncatedNormal``."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype="float32"):
        return _random.truncated_normal(tuple(shape), self.mean, self.stddev, dtype=dtype or "float32", seed=self.seed)


class VarianceScaling(Initializer):
    """Keras' ``VarianceScaling``: ``scale / n`` variance, ``n`` the fan in, out or
    their average; a truncated or plain normal, or a uniform.
    TF equivalent: ``tf.keras.initializers.VarianceScaling``."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        if scale <= 0.0:
            raise ValueError(f"Argument `scale` must be positive float. Received: scale={scale}")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode!r}")
        distribution = distribution.lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"Invalid `distribution` argument: {distribution!r}")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed

    def __call__(self, shape, dtype="float32"):
        # The fans, the variance and the distribution's numbers are the crate's
        # (`gradtape::nn::layers::Draw::variance_scaling`, as its Dense kernels).
        kind, a, b = _variance_scaling(tuple(shape), self.scale, self.mode, self.distribution)
        sample = {"uniform": _random.uniform, "truncated_normal": _random.truncated_normal, "normal": _random.normal}
        return sample[kind](tuple(shape), a, b, dtype=dtype or "float32", seed=self.seed)


class GlorotUniform(VarianceScaling):
    """Uniform on ``±sqrt(6 / (fan_in + fan_out))`` (Keras' default for kernels).
    TF equivalent: ``tf.keras.initializers.GlorotUniform``."""

    def __init__(self, seed=None):
        super().__init__(1.0, "fan_avg", "uniform", seed)


class GlorotNormal(VarianceScaling):
    """Truncated normal with variance ``2 / (fan_in + fan_out)``.
    TF equivalent: ``tf.keras.initializers.GlorotNormal``."""

    def __init__(self, seed=None):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed)


class HeUniform(VarianceScaling):
    """Uniform with variance ``2 / fan_in``. TF equivalent: ``tf.keras.initializers.HeUniform``."""

    def __init__(self, seed=None):
        super().__init__(2.0, "fan_in", "uniform", seed)


class HeNormal(VarianceScaling):
    """Truncated normal with variance ``2 / fan_in``. TF equivalent: ``tf.keras.initializers.HeNormal``."""

    def __init__(self, seed=None):
        super().__init__(2.0, "fan_in", "truncated_normal", seed)


class LecunUniform(VarianceScaling):
    """Uniform with variance ``1 / fan_in``. TF equivalent: ``tf.keras.initializers.LecunUniform``."""

    def __init__(self, seed=None):
        super().__init__(1.0, "fan_in", "uniform", seed)


class LecunNormal(VarianceScaling):
    """Truncated normal with variance ``1 / fan_in``. TF equivalent: ``tf.keras.initializers.LecunNormal``."""

    def __init__(self, seed=None):
        super().__init__(1.0, "fan_in", "truncated_normal", seed)


class Identity(Initializer):
    """``gain`` times the identity matrix (2-D shapes only). TF equivalent: ``tf.keras.initializers.Identity``."""

    def __init__(self, gain=1.0):
        self.gain = gain

    def __call__(self, shape, dtype="float32"):
        if len(shape) != 2:
            raise ValueError(f"Identity matrix initializer can only be used for 2D matrices. Received: shape={shape}")
        return _cast(_eye(int(shape[0]), int(shape[1])) * float(self.gain), dtype or "float32")


_BY_NAME = {
    "zeros": Zeros,
    "ones": Ones,
    "constant": Constant,
    "random_normal": RandomNormal,
    "random_uniform": RandomUniform,
    "uniform": RandomUniform,
    "normal": RandomNormal,
    "truncated_normal": TruncatedNormal,
    "variance_scaling": VarianceScaling,
    "glorot_uniform": GlorotUniform,
    "glorot_normal": GlorotNormal,
    "he_uniform": HeUniform,
    "he_normal": HeNormal,
    "lecun_uniform": LecunUniform,
    "lecun_normal": LecunNormal,
    "identity": Identity,
}


def get(identifier):
    """An initializer from a name, a class, an instance or a callable."""
    if callable(identifier) and not isinstance(identifier, type):
        return identifier
    if isinstance(identifier, type):
        return identifier()
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier) or _BY_NAME.get(_snake(identifier))
        if cls is not None:
            return cls()
    raise ValueError(f"Unknown initializer: {identifier!r}")


def _snake(name):
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i:
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


__all__ = [
    "Initializer", "Zeros", "Ones", "Constant", "RandomNormal", "RandomUniform", "TruncatedNormal",
    "VarianceScaling", "GlorotUniform", "GlorotNormal", "HeUniform", "HeNormal", "LecunUniform",
    "LecunNormal", "Identity", "get",
]
