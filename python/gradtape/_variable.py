"""``gt.Variable``: the native variable, bound to its Python object on creation."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any, cast

from . import _gradtape, _name_scope


class Variable(_gradtape.Variable):
    """A mutable tensor cell. TF equivalent: ``tf.Variable``.

    Trainable variables read inside a ``GradientTape`` are watched automatically.

    >>> import gradtape as gt
    >>> v = gt.Variable(3.0, name="x0")
    >>> v.name
    'x0:0'
    >>> v.assign_add(1.0).numpy()
    np.float32(4.0)
    """

    def __new__(
        cls,
        initial_value: Any = None,
        trainable: bool = True,
        name: str | None = None,
        dtype: Any = None,
    ) -> Variable:
        _note_creation()
        # Inside a `gt.name_scope` (or a module's), the name takes the scope's prefix.
        if _name_scope.current():
            name = _name_scope.scoped(name)
        return cast(Variable, super().__new__(cls, initial_value, trainable, name, dtype))

    def __init__(
        self,
        initial_value: Any = None,
        trainable: bool = True,
        name: str | None = None,
        dtype: Any = None,
    ) -> None:
        # The value was set by the native constructor; attach this object so the
        # engine hands it back from `watched_variables`.
        self._bind()

    def __copy__(self) -> Variable:
        # TF: a shallow copy of a variable is the variable itself.
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Variable:
        # TF: a deep copy is a new variable with the current value, trainability and name.
        copied = Variable(self.read_value(), trainable=self.trainable, name=self.name.split(":")[0], dtype=self.dtype)
        memo[id(self)] = copied
        return copied

    def ref(self) -> _Ref:
        """A hashable reference to this variable. TF equivalent: ``Variable.ref()``."""
        return _Ref(self)


class _Ref:
    __slots__ = ("_v",)

    def __init__(self, v: Variable) -> None:
        self._v = v

    def deref(self) -> Variable:
        return self._v

    def __hash__(self) -> int:
        return hash(self._v._unique_id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Ref) and other._v._unique_id == self._v._unique_id


# What a `gt.function` trace allows of variable creation on this thread (TF's rule: the
# first trace may create variables, later ones may not).
_creation = threading.local()


class _Creations:
    """Variables created under ``creation_policy``."""

    def __init__(self, allowed: bool) -> None:
        self.allowed = allowed
        self.count = 0


def _note_creation() -> None:
    policy: _Creations | None = getattr(_creation, "policy", None)
    if policy is None:
        return
    if not policy.allowed:
        raise ValueError(
            "gt.function only supports singleton gt.Variables created on the first call. Make "
            "sure the gt.Variable is only created once or created outside gt.function."
        )
    policy.count += 1


@contextlib.contextmanager
def creation_policy(allowed: bool) -> Iterator[_Creations]:
    """Counts (or, when not ``allowed``, forbids) variable creation on this thread."""
    old = getattr(_creation, "policy", None)
    _creation.policy = policy = _Creations(allowed)
    try:
        yield policy
    finally:
        _creation.policy = old
