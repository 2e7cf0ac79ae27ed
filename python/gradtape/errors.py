"""Exception classes. TF equivalent: ``tf.errors``.

- ``InvalidArgumentError`` (a ``ValueError``): an op got arguments it cannot use.
- ``ResourceExhaustedError`` (a ``MemoryError``): a size too large to hold, or memory
  the system refused.
- ``InternalError`` (a ``RuntimeError``): a bug inside gradtape; please report it.
- ``DataLossError`` (a ``ValueError``): a file (checkpoint, SavedModel, safetensors)
  that is truncated, corrupted, of an unknown format version or missing pieces.
- ``OperatorNotAllowedInGraphError`` (a ``TypeError``): a symbolic tensor of a
  ``gt.function`` trace used as a Python ``bool``.
- ``InaccessibleTensorError`` (a ``ValueError``): a symbolic tensor made inside a loop
  body or branch of a ``gt.function`` trace, read outside it.
- ``NotFoundError`` (an ``OpError``, as TF's): a checkpoint file, or a key in one, that
  does not exist (``gt.train.load_variable``, ``load_checkpoint``, ``list_variables``,
  ``Checkpoint.restore``).
- ``UnimplementedError`` (an ``OpError``, as TF's): an operation TF does not implement
  either, such as pooling over the batch dimension.

``OpError`` is TF's base of the errors an op raises, with TF's constructor
``(node_def, op, message)`` and its ``message``, ``op``, ``node_def`` and ``error_code``.
Of gradtape's errors only ``NotFoundError`` and ``UnimplementedError`` derive from it;
the others derive from the Python exception a Python program expects (``ValueError``,
``MemoryError``, ...).
"""

from __future__ import annotations

from typing import Any

from ._gradtape import (
    DataLossError,
    InaccessibleTensorError,
    InternalError,
    InvalidArgumentError,
    OperatorNotAllowedInGraphError,
    ResourceExhaustedError,
)

# TF's error codes (``tf.errors.NOT_FOUND`` and the others of ``tf.errors``' codes).
OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """An error of an op, with TF's constructor ``(node_def, op, message, error_code)``.
    TF equivalent: ``tf.errors.OpError``."""

    def __init__(self, node_def: Any, op: Any, message: str, error_code: int | None = None, *args: Any) -> None:
        super().__init__(message, *args)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = UNKNOWN if error_code is None else error_code

    @property
    def message(self) -> str:
        """The error message."""
        return self._message

    @property
    def op(self) -> Any:
        """The op that failed (``None`` when no op is known)."""
        return self._op

    @property
    def node_def(self) -> Any:
        """The failing op's definition (``None`` in gradtape)."""
        return self._node_def

    @property
    def error_code(self) -> int:
        """TF's integer code of the error (``gt.errors.NOT_FOUND`` for ``NotFoundError``)."""
        return self._error_code

    def __str__(self) -> str:
        return self._message


class NotFoundError(OpError):
    """Something requested (a checkpoint file, a key in a checkpoint) does not exist.
    TF equivalent: ``tf.errors.NotFoundError``.

    >>> import gradtape as gt
    >>> e = gt.errors.NotFoundError(None, None, "Key x not found in checkpoint")
    >>> isinstance(e, gt.errors.OpError), e.error_code == gt.errors.NOT_FOUND, str(e)
    (True, True, 'Key x not found in checkpoint')
    """

    def __init__(self, node_def: Any, op: Any, message: str, *args: Any) -> None:
        super().__init__(node_def, op, message, NOT_FOUND, *args)


class UnimplementedError(OpError):
    """An operation TF does not implement either (such as pooling over the batch
    dimension). TF equivalent: ``tf.errors.UnimplementedError``.

    >>> import gradtape as gt
    >>> try:
    ...     gt.nn.avg_pool(gt.ones([2, 3, 3, 1]), ksize=1, strides=[2, 1, 1, 1], padding="SAME")
    ... except gt.errors.UnimplementedError as e:
    ...     print(e, e.error_code == gt.errors.UNIMPLEMENTED)
    Pooling is not yet supported on the batch dimension. True
    """

    def __init__(self, node_def: Any, op: Any, message: str, *args: Any) -> None:
        super().__init__(node_def, op, message, UNIMPLEMENTED, *args)


__all__ = [
    "DataLossError", "InternalError", "InvalidArgumentError", "NotFoundError", "OpError",
    "OperatorNotAllowedInGraphError", "ResourceExhaustedError", "InaccessibleTensorError",
    "UnimplementedError",
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
    "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
    "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
]
