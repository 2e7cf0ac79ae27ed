"""Exception classes. TF equivalent: ``tf.errors``."""

from ._gradtape import InvalidArgumentError

__all__ = ["InvalidArgumentError"]
