"""Exception classes. TF equivalent: ``tf.errors``.

- ``InvalidArgumentError`` (a ``ValueError``): an op got arguments it cannot use.
- ``ResourceExhaustedError`` (a ``MemoryError``): a size too large to hold, or memory
  the system refused.
- ``InternalError`` (a ``RuntimeError``): a bug inside gradtape; please report it.
- ``DataLossError`` (a ``ValueError``): a file (checkpoint, SavedModel, safetensors)
  that is truncated, corrupted, of an unknown format version or missing pieces.
- ``OperatorNotAllowedInGraphError`` (a ``TypeError``): a symbolic tensor of a
  ``gt.function`` trace used as a Python ``bool``.
"""

from ._gradtape import (
    DataLossError,
    InternalError,
    InvalidArgumentError,
    OperatorNotAllowedInGraphError,
    ResourceExhaustedError,
)

__all__ = [
    "DataLossError", "InternalError", "InvalidArgumentError", "OperatorNotAllowedInGraphError",
    "ResourceExhaustedError",
]
