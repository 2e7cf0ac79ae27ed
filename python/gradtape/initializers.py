"""Variable initializers. TF equivalent: ``tf.keras.initializers``.

>>> import gradtape as gt
>>> gt.initializers.get("zeros")((2,), "float32").numpy().tolist()
[0.0, 0.0]
"""

import math as _math

from . import random as _random
from ._gradtape import ones as _ones
from ._gradtape import zeros as _zeros


class GlorotUniform:
    """Uniform on ``±sqrt(6 / (fan_in + fan_out))`` (Keras' default for kernels)."""

    def __init__(self, seed=None):
        self.seed = seed

    def __call__(self, shape, dtype="float32"):
        fan_in = shape[-2] if len(shape) >= 2 else shape[0]
        fan_out = shape[-1]
        recept = 1
        for d in shape[:-2]:
            recept *= d
        limit = _math.sqrt(6.0 / ((fan_in + fan_out) * recept))
        return _random.uniform(shape, -limit, limit, dtype=dtype, seed=self.seed)


class Zeros:
    def __call__(self, shape, dtype="float32"):
        return _zeros(shape, dtype=dtype)


class Ones:
    def __call__(self, shape, dtype="float32"):
        return _ones(shape, dtype=dtype)


class RandomNormal:
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype="float32"):
        return _random.normal(shape, self.mean, self.stddev, dtype=dtype, seed=self.seed)


_BY_NAME = {
    "glorot_uniform": GlorotUniform,
    "zeros": Zeros,
    "ones": Ones,
    "random_normal": RandomNormal,
}


def get(identifier):
    """An initializer from a name or a callable."""
    if callable(identifier) and not isinstance(identifier, type):
        return identifier
    if isinstance(identifier, type):
        return identifier()
    try:
        return _BY_NAME[identifier]()
    except KeyError:
        raise ValueError(f"Unknown initializer: {identifier!r}") from None
