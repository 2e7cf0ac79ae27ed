"""``gt.name_scope``: the per-thread stack of name prefixes new variables take.

TF 2 executes eagerly, where a name scope only names things: a ``gt.Variable`` made
inside ``with gt.name_scope("a"):`` is called ``a/<name>:0``. Scopes are not made
unique (eager TF's rule), and each thread has its own stack.
"""

from __future__ import annotations

import threading
from typing import Any

_state = threading.local()


def _stack() -> list[str]:
    s = getattr(_state, "stack", None)
    if s is None:
        s = _state.stack = []
    return s


def current() -> str:
    """The scope names are made in now: ``""`` at the root, else ending in ``/``."""
    s = _stack()
    return s[-1] if s else ""


def scoped(name: str | None, default: str = "Variable") -> str:
    """``name`` (or ``default``) under the current scope."""
    return current() + (default if name is None else name)


class name_scope:  # noqa: N801 (TF's name)
    """A context manager that prefixes the names of variables made inside it.

    TF equivalent: ``tf.name_scope`` (TF 2). Entering gives the full scope name, which
    ends in ``/``; a name ending in ``/`` is taken as a full scope name as it is, and
    ``""`` returns to the root scope.

    >>> import gradtape as gt
    >>> with gt.name_scope("outer") as scope:
    ...     with gt.name_scope("inner"):
    ...         v = gt.Variable(1.0, name="v")
    >>> scope, v.name
    ('outer/', 'outer/inner/v:0')
    """

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise ValueError("name for name_scope must be a string.")
        self._name = name

    @property
    def name(self) -> str:
        """The name this scope was made with."""
        return self._name

    def __enter__(self) -> str:
        name = self._name
        if not name:
            scope = ""
        elif name.endswith("/"):
            scope = name
        else:
            scope = current() + name + "/"
        _stack().append(scope)
        return scope

    def __exit__(self, *exc: Any) -> None:
        stack = _stack()
        if stack:
            stack.pop()

    def __repr__(self) -> str:
        return f"name_scope({self._name!r})"
