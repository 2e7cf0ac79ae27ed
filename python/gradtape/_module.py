"""``gt.Module``: a named container of variables, submodules and functions.

Variables and submodules are found by walking the object's attributes (and the lists,
tuples, dicts and namedtuples in them), as TF's ``tf.Module`` does: nothing needs to be
registered. ``gt.saved_model`` and ``gt.train.Checkpoint`` save what this walk finds.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Iterator, Mapping
from typing import Any, Callable, TypeVar

from ._gradtape import Variable as _NativeVariable
from ._name_scope import name_scope

_F = TypeVar("_F", bound=Callable[..., Any])

# TF's rules: "MyModule" -> "my_module", "HTTPServer" -> "http_server".
_CAMEL_TO_SNAKE = re.compile(r"((?<=[a-z0-9])[A-Z]|(?!^)[A-Z](?=[a-z]))")
_VALID_IDENTIFIER = re.compile(r"^[a-zA-Z_]([a-zA-Z0-9_])*$")


def camel_to_snake(value: str) -> str:
    return _CAMEL_TO_SNAKE.sub(r"_\1", value).lower()


def valid_identifier(name: str) -> bool:
    return bool(_VALID_IDENTIFIER.match(name))


def _may_hold_variables(value: Any) -> bool:
    """Whether an attribute value can bring variables (a variable, a module, a container)."""
    return isinstance(value, (_NativeVariable, Module, list, tuple, dict, Mapping))


class Module:
    """Base class of models and their parts. TF equivalent: ``tf.Module``.

    A module owns the variables, modules and functions assigned to its attributes;
    ``variables``, ``trainable_variables`` and ``submodules`` find them by walking the
    attributes in name order (and the lists, tuples and dicts held there), then the
    submodules', breadth first. Variables made inside ``with self.name_scope:`` (or in
    a method decorated with ``gt.Module.with_name_scope``) are named under the
    module's name.

    >>> import gradtape as gt
    >>> class Dense(gt.Module):
    ...     def __init__(self, n_in, n_out, name=None):
    ...         super().__init__(name=name)
    ...         with self.name_scope:
    ...             self.w = gt.Variable(gt.ones([n_in, n_out]), name="w")
    ...             self.b = gt.Variable(gt.zeros([n_out]), name="b")
    ...     def __call__(self, x):
    ...         return gt.matmul(x, self.w) + self.b
    >>> d = Dense(3, 2)
    >>> [v.name for v in d.trainable_variables]
    ['dense/b:0', 'dense/w:0']
    >>> d(gt.ones([1, 3])).numpy().tolist()
    [[3.0, 3.0]]
    """

    # Whether a deferred checkpoint restore assigns a variable as it is set on an
    # attribute (layers assign theirs when their build is done).
    _RESTORE_ON_SETATTR = True

    # Attributes the walk skips (a subclass may add its own).
    _TF_MODULE_IGNORED_PROPERTIES: frozenset[str] = frozenset()

    def __init__(self, name: str | None = None) -> None:
        if name is None:
            name = camel_to_snake(type(self).__name__)
        elif not isinstance(name, str) or not valid_identifier(name):
            raise ValueError(
                f"{name!r} is not a valid module name. Module names must be valid Python "
                "identifiers (e.g. a valid class name)."
            )
        self._init_module(name)

    def _init_module(self, name: str) -> None:
        self._name = name
        # Made once, under the scope the module is made in (TF 2 memoizes it too).
        with name_scope(name) as scope:
            self._name_scope = name_scope(scope)

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        # A checkpoint restored before this module made its variables (TF's deferred
        # restoration): a variable assigned to an attribute takes its saved value now.
        train = sys.modules.get("gradtape.train")
        if train is not None and train._PENDING and self._RESTORE_ON_SETATTR and _may_hold_variables(value):
            train._on_variables_created()

    @property
    def name(self) -> str:
        """The name given to (or derived for) this module; not the full scope name."""
        return self._name

    @property
    def name_scope(self) -> name_scope:
        """The module's ``gt.name_scope`` (its ``.name`` is the full scope, ``"a/b/"``)."""
        return self._name_scope

    @property
    def variables(self) -> tuple[_NativeVariable, ...]:
        """The variables of this module (attributes in name order), then those of its
        submodules, breadth first, each once."""
        return tuple(self._flatten(predicate=_is_variable))

    @property
    def trainable_variables(self) -> tuple[_NativeVariable, ...]:
        """``variables`` that are trainable."""
        return tuple(self._flatten(predicate=_is_trainable_variable))

    @property
    def non_trainable_variables(self) -> tuple[_NativeVariable, ...]:
        """``variables`` that are not trainable."""
        return tuple(self._flatten(predicate=_is_non_trainable_variable))

    @property
    def submodules(self) -> tuple[Module, ...]:
        """Every module reachable from this one's attributes (itself excluded)."""
        return tuple(self._flatten(predicate=_is_module))

    def _flatten(
        self,
        recursive: bool = True,
        predicate: Callable[[Any], bool] | None = None,
        attribute_traversal_key: Callable[[str], Any] | None = None,
        with_path: bool = False,
    ) -> Iterator[Any]:
        """The attribute values that satisfy ``predicate``, attributes in sorted name
        order, then (``recursive``) each submodule's. With ``with_path`` each value
        comes as ``(path, value)``, the path a tuple of attribute names, indices and
        dict keys, and values reachable by several paths come once per path."""
        return _flatten_module(
            self,
            recursive=recursive,
            predicate=predicate or (lambda _: True),
            attribute_traversal_key=attribute_traversal_key,
            attributes_to_ignore=self._TF_MODULE_IGNORED_PROPERTIES,
            with_path=with_path,
        )

    @classmethod
    def with_name_scope(cls, method: _F) -> _F:
        """Decorator: runs ``method`` inside the module's name scope."""

        @functools.wraps(method)
        def method_with_name_scope(self: Module, *args: Any, **kwargs: Any) -> Any:
            with self.name_scope:
                return method(self, *args, **kwargs)

        return method_with_name_scope  # type: ignore[return-value]


def _is_variable(obj: Any) -> bool:
    return isinstance(obj, _NativeVariable)


def _is_trainable_variable(obj: Any) -> bool:
    return isinstance(obj, _NativeVariable) and obj.trainable


def _is_non_trainable_variable(obj: Any) -> bool:
    return isinstance(obj, _NativeVariable) and not obj.trainable


def _is_module(obj: Any) -> bool:
    return isinstance(obj, Module)


def _leaves_with_paths(x: Any, path: tuple[Any, ...], out: list[tuple[tuple[Any, ...], Any]]) -> None:
    """``tf.nest.flatten_with_tuple_paths``: dicts in sorted key order."""
    if isinstance(x, Mapping):
        for k in sorted(x):  # unorderable keys raise TypeError (reported by the caller)
            _leaves_with_paths(x[k], path + (k,), out)
    elif isinstance(x, (list, tuple)):
        for i, v in enumerate(x):
            _leaves_with_paths(v, path + (i,), out)
    else:
        out.append((path, x))


def _flatten_module(
    module: Module,
    recursive: bool,
    predicate: Callable[[Any], bool],
    attribute_traversal_key: Callable[[str], Any] | None,
    attributes_to_ignore: frozenset[str],
    with_path: bool,
    module_path: tuple[Any, ...] = (),
    seen: set[int] | None = None,
) -> Iterator[Any]:
    if seen is None:
        seen = {id(module)}
    module_dict = vars(module)
    submodules = []
    for key in sorted(module_dict, key=attribute_traversal_key):
        if key in attributes_to_ignore:
            continue
        prop = module_dict[key]
        leaves: list[tuple[tuple[Any, ...], Any]] = []
        try:
            _leaves_with_paths(prop, (), leaves)
        except Exception as cause:
            raise ValueError(f"Error processing property {key!r} of {prop!r}") from cause
        for leaf_path, leaf in leaves:
            leaf_path = (key,) + leaf_path
            if not with_path:
                if id(leaf) in seen:
                    continue
                seen.add(id(leaf))
            if predicate(leaf):
                yield (module_path + leaf_path, leaf) if with_path else leaf
            if recursive and _is_module(leaf):
                # This module's own attributes first, then the submodules'.
                submodules.append((module_path + leaf_path, leaf))
    for submodule_path, submodule in submodules:
        if with_path and id(submodule) in seen:
            continue  # a cycle: with paths, `seen` holds the modules above this one
        yield from _flatten_module(
            submodule,
            recursive=recursive,
            predicate=predicate,
            attribute_traversal_key=attribute_traversal_key,
            attributes_to_ignore=submodule._TF_MODULE_IGNORED_PROPERTIES,
            with_path=with_path,
            module_path=submodule_path,
            seen=seen if not with_path else seen | {id(submodule)},
        )

