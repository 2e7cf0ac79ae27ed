"""Exception classes. TF equivalent: ``tf.errors``.

- ``InvalidArgumentError`` (a ``ValueError``): an op got arguments it cannot use.
- ``ResourceExhaustedError`` (a ``MemoryError``): a size too large to hold, or memory
  the system refused.
- ``InternalError`` (a ``RuntimeError``): a bug inside gradtape; please report it.
- ``OperatorNotAllowedInGraphError`` (a ``TypeError``): a symbolic tensor of a
  ``gt.function`` trace used as a Python ``bool``.
"""

from ._gradtape import (
    InternalError,
    InvalidArgumentError,
    OperatorNotAllowedInGraphError,
    ResourceExhaustedError,
)

__all__ = ["InternalError", "InvalidArgumentError", "OperatorNotAllowedInGraphError", "ResourceExhaustedError"]
