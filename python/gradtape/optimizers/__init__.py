"""Optimizers. TF equivalent: ``tf.keras.optimizers``."""

from . import schedules
from ._base import Optimizer
from .adam import Adam, AdamW
from .adaptive import Adadelta, Adamax, Ftrl, Lion, Nadam
from .rmsprop import Adagrad, RMSprop
from .sgd import SGD


def get(identifier):
    """An optimizer from a name (``"adam"``, ``"sgd"``, ...) or an instance.
    TF equivalent: ``tf.keras.optimizers.get``."""
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str):
        by_name = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop, "adagrad": Adagrad,
                   "nadam": Nadam, "adamax": Adamax, "adadelta": Adadelta, "ftrl": Ftrl, "lion": Lion}
        cls = by_name.get(identifier.lower())
        if cls is not None:
            return cls()
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r}")


__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "get", "schedules"]
__all__ += ["Nadam", "Adamax", "Adadelta", "Ftrl", "Lion"]
