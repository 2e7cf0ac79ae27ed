"""Small top-level functions real TF code calls (issue 14): ``tf.executing_eagerly``,
``tf.is_tensor``, ``tf.no_op``, ``tf.group``, ``tf.control_dependencies``,
``tf.get_current_name_scope``, ``tf.ensure_shape``, the ``tf.debugging.assert_*``
checks, ``tf.gradients`` (TF's eager error) and ``tf.no_gradient``.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any
from collections.abc import Iterator

import numpy as np

from . import _gradtape as _native
from . import _nest, errors

_Tensor = _native.Tensor
_Variable = _native.Variable


def executing_eagerly() -> bool:
    """``True`` eagerly, ``False`` while a ``gt.function`` traces its Python body.
    TF equivalent: ``tf.executing_eagerly``.

    >>> import gradtape as gt
    >>> gt.executing_eagerly()
    True
    """
    return not _native._is_tracing()


def is_tensor(x: Any) -> bool:
    """Whether ``x`` is a gradtape tensor-like (a ``Tensor``, a ``Variable`` or an
    ``IndexedSlices``), not a Python or numpy value. TF equivalent: ``tf.is_tensor``.

    >>> import gradtape as gt
    >>> gt.is_tensor(gt.constant(1.0)), gt.is_tensor(1.0)
    (True, False)
    """
    from ._indexed_slices import IndexedSlices

    return isinstance(x, (_Tensor, _Variable, IndexedSlices))


def no_op(name: str | None = None) -> None:
    """Does nothing (``None`` eagerly, as TF's). TF equivalent: ``tf.no_op``.

    >>> import gradtape as gt
    >>> gt.no_op() is None
    True
    """
    del name
    return None


def group(*inputs: Any, **kwargs: Any) -> None:
    """Groups ops for control dependencies; gradtape runs ops in program order, so
    this returns ``None`` (as eager TF). TF equivalent: ``tf.group``.

    >>> import gradtape as gt
    >>> gt.group(gt.constant(1.0)) is None
    True
    """
    unknown = set(kwargs) - {"name"}
    if unknown:
        raise TypeError(f"Unknown keyword arguments: {sorted(unknown)}")
    del inputs
    return None


@contextlib.contextmanager
def control_dependencies(control_inputs: Any) -> Iterator[None]:
    """A context whose ops run after ``control_inputs``. Eagerly a no-op (as TF's);
    inside a ``gt.function`` trace effects already run in program order (the traced
    graph keeps the order of its stateful ops), so nothing more is needed.
    ``control_inputs`` must be ``None`` or a list of tensors, ops or callables.
    TF equivalent: ``tf.control_dependencies``.

    >>> import gradtape as gt
    >>> with gt.control_dependencies([gt.constant(1.0)]):
    ...     print(gt.constant(2.0) + 1)
    gt.Tensor(3.0, shape=(), dtype=float32)
    """
    if control_inputs is not None and not isinstance(control_inputs, (list, tuple)):
        raise TypeError(f"control_inputs must be a list of tensors or operations, got {type(control_inputs).__name__}")
    yield


def get_current_name_scope() -> str:
    """The current name scope: ``""`` at the root, else ``"a/b"`` (no trailing slash).
    TF equivalent: ``tf.get_current_name_scope``.

    >>> import gradtape as gt
    >>> with gt.name_scope("outer"):
    ...     with gt.name_scope("inner"):
    ...         gt.get_current_name_scope()
    'outer/inner'
    """
    from ._name_scope import current

    return current().rstrip("/")


def _shape_list(shape: Any) -> list[int | None] | None:
    from ._shape import TensorShape

    if isinstance(shape, TensorShape):
        return None if shape.rank is None else list(shape.as_list())
    if shape is None:
        return None
    if isinstance(shape, (_Tensor, _Variable)):
        shape = shape.numpy().tolist()
    out: list[int | None] = []
    for d in shape:
        if d is None or (isinstance(d, (int, np.integer)) and int(d) == -1):
            out.append(None)
        elif isinstance(d, (int, np.integer)) and not isinstance(d, bool):
            out.append(int(d))
        else:
            raise TypeError(f"shape must be a list of ints or None, got {shape!r}")
    return out


def ensure_shape(x: Any, shape: Any, name: str | None = None) -> Any:
    """``x`` (an identity: gradients pass through) after checking that its shape is
    compatible with ``shape`` (``None`` entries match anything). TF equivalent:
    ``tf.ensure_shape``.

    >>> import gradtape as gt
    >>> print(gt.ensure_shape(gt.constant([1.0, 2.0]), [None]))
    gt.Tensor([1. 2.], shape=(2,), dtype=float32)
    """
    del name
    t = x if isinstance(x, _Tensor) else _native.convert_to_tensor(x)
    want = _shape_list(shape)
    got = list(t.shape)
    if want is not None and (
        len(want) != len(got) or any(w is not None and w != g for w, g in zip(want, got))
    ):
        fmt = "[" + ",".join("?" if w is None else str(w) for w in want) + "]"
        raise errors.InvalidArgumentError(
            f"Shape of tensor x [{','.join(map(str, got))}] is not compatible with expected "
            f"shape {fmt}. [Op:EnsureShape]"
        )
    return _native.identity(t)


def _tensor_of(x: Any) -> Any:
    if isinstance(x, _Variable):
        return x.read_value()
    return x if isinstance(x, _Tensor) else _native.convert_to_tensor(x)


def _fail(message: Any, default: str) -> None:
    msg = default if message is None else f"{message}\n{default}"
    raise errors.InvalidArgumentError(msg)


def _compare(x: Any, y: Any, op: Any, what: str, message: Any, summarize: Any) -> None:
    """Checks ``op(x, y)`` everywhere: now when both values are known, else (inside a
    ``gt.function`` trace) at every call of the graph, as TF's ``Assert`` node: a
    failing call raises ``InvalidArgumentError``. Shapes that cannot broadcast are a
    ``ValueError`` at once (TF's static check)."""
    del summarize
    tx, ty = _tensor_of(x), _tensor_of(y)
    try:
        np.broadcast_shapes(tuple(tx.shape), tuple(ty.shape))
    except ValueError:
        raise ValueError(f"Shapes {tuple(tx.shape)} and {tuple(ty.shape)} are incompatible") from None

    def check(values: Any) -> None:
        a, b = (np.asarray(v.numpy()) for v in values)
        if not np.all(op(a, b)):
            _fail(message, f"Condition x {what} y did not hold.\nx = {a}\ny = {b}")

    if _native._is_symbolic(tx) or _native._is_symbolic(ty):
        # TF's Assert node: the condition (elementwise, every element must hold) in
        # engine ops, checked in the graph at each call (no Python then; saveable).
        cond = _SYMBOLIC[what](tx, ty)
        head = f"Condition x {what} y did not hold."
        spec = {"message": head if message is None else f"{message}\n{head}", "names": ["x", "y"]}
        _native._assert(cond, [tx, ty], json.dumps(spec))
    else:
        check([tx, ty])
    return None


_SYMBOLIC = {"==": _native.equal, "<": _native.less, ">": _native.greater}


def assert_equal(x: Any, y: Any, message: Any = None, summarize: Any = None, name: str | None = None) -> None:
    """Raises ``InvalidArgumentError`` unless ``x == y`` elementwise (broadcast):
    at once eagerly, at every call of the graph inside a ``gt.function``.
    TF equivalent: ``tf.debugging.assert_equal``.

    >>> import gradtape as gt
    >>> gt.assert_equal(gt.constant([1, 2]), [1, 2]) is None
    True
    """
    del name
    return _compare(x, y, np.equal, "==", message, summarize)


def assert_less(x: Any, y: Any, message: Any = None, summarize: Any = None, name: str | None = None) -> None:
    """Raises ``InvalidArgumentError`` unless ``x < y`` elementwise. TF equivalent:
    ``tf.debugging.assert_less``.

    >>> import gradtape as gt
    >>> gt.assert_less(1, 2) is None
    True
    """
    del name
    return _compare(x, y, np.less, "<", message, summarize)


def assert_greater(x: Any, y: Any, message: Any = None, summarize: Any = None, name: str | None = None) -> None:
    """Raises ``InvalidArgumentError`` unless ``x > y`` elementwise. TF equivalent:
    ``tf.debugging.assert_greater``.

    >>> import gradtape as gt
    >>> gt.assert_greater(2, 1) is None
    True
    """
    del name
    return _compare(x, y, np.greater, ">", message, summarize)


def assert_rank(x: Any, rank: Any, message: Any = None, name: str | None = None) -> None:
    """Raises ``ValueError`` (TF's static check) unless ``x`` has rank ``rank``.
    TF equivalent: ``tf.debugging.assert_rank``.

    >>> import gradtape as gt
    >>> gt.assert_rank(gt.ones([2, 3]), 2) is None
    True
    """
    del name
    t = x if isinstance(x, (_Tensor, _Variable)) else _native.convert_to_tensor(x)
    r = np.asarray(rank.numpy() if isinstance(rank, (_Tensor, _Variable)) else rank)
    if r.ndim != 0 or r.dtype.kind not in "iu":
        raise ValueError(f"Rank must be a scalar integer, got {rank!r}")
    if t.ndim != int(r):
        prefix = "" if message is None else f"{message}. "
        raise ValueError(
            f"{prefix}Tensor must have rank {int(r)}. Received rank {t.ndim}, shape {tuple(t.shape)}"
        )
    return None


def gradients(ys: Any, xs: Any, grad_ys: Any = None, name: str = "gradients", gate_gradients: bool = False,
              aggregation_method: Any = None, stop_gradients: Any = None,
              unconnected_gradients: Any = None) -> Any:
    """TF's graph-mode ``tf.gradients``: not supported eagerly, where TF raises this
    ``RuntimeError``; use ``gt.GradientTape`` (also inside a ``gt.function``).
    TF equivalent: ``tf.gradients``.

    >>> import gradtape as gt
    >>> try:
    ...     gt.gradients(gt.constant(1.0), gt.constant(1.0))
    ... except RuntimeError as e:
    ...     print(e)
    tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape instead.
    """
    del ys, xs, grad_ys, name, gate_gradients, aggregation_method, stop_gradients, unconnected_gradients
    if executing_eagerly():
        raise RuntimeError(
            "tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape instead."
        )
    raise RuntimeError(
        "gt.gradients is not supported inside a gt.function trace either (gradtape has no "
        "graph-mode symbolic gradients). Use gt.GradientTape instead."
    )


_NO_GRADIENT: set[str] = set()


def no_gradient(op_type: str) -> None:
    """Declares the op type ``op_type`` not differentiable: ops of that type recorded
    under ``gt.gradient_override_map({op_type: op_type})`` get ``None`` gradients. A
    second declaration of the same type raises ``KeyError`` (as TF's registry).
    TF equivalent: ``tf.no_gradient``.

    >>> import gradtape as gt
    >>> gt.no_gradient("MyUndifferentiableOp")
    """
    if not isinstance(op_type, str):
        raise TypeError("op_type must be a string")
    if op_type in _NO_GRADIENT:
        raise KeyError(f"Registering two gradient with name '{op_type}'! (Previous registration was in no_gradient)")
    _NO_GRADIENT.add(op_type)

    def _none(op: Any, *grads: Any) -> Any:
        n = len(op.inputs)
        return None if n == 1 else [None] * n

    _native._register_gradient(op_type, _none)


def assert_same_structure(nest1: Any, nest2: Any, check_types: bool = True, expand_composites: bool = False) -> None:
    """Raises ``ValueError`` (``TypeError`` for differing sequence types with
    ``check_types``) unless the two structures nest the same way. TF equivalent:
    ``tf.nest.assert_same_structure``.

    >>> import gradtape as gt
    >>> gt.nest.assert_same_structure([1, (2, 3)], ["a", ("b", "c")])
    """
    del expand_composites

    def walk(a: Any, b: Any) -> None:
        sa, sb = _nest.is_nested(a), _nest.is_nested(b)
        if sa != sb:
            raise ValueError(
                "The two structures don't have the same nested structure.\n\n"
                f"First structure: {nest1!r}\n\nSecond structure: {nest2!r}\n\n"
                f"More specifically: Substructure \"{a!r}\" is a sequence, while substructure "
                f"\"{b!r}\" is not" if sa else
                "The two structures don't have the same nested structure.\n\n"
                f"First structure: {nest1!r}\n\nSecond structure: {nest2!r}"
            )
        if not sa:
            return
        if check_types and type(a) is not type(b):
            raise TypeError(
                "The two structures don't have the same sequence type. Input structure has type "
                f"{type(a)}, while shallow structure has type {type(b)}."
            )
        if isinstance(a, dict):
            if set(a) != set(b):
                raise ValueError(
                    "The two dictionaries don't have the same set of keys. First structure has "
                    f"keys {sorted(map(str, a))}, while second structure has keys {sorted(map(str, b))}."
                )
            for k in a:
                walk(a[k], b[k])
            return
        if len(a) != len(b):
            raise ValueError(
                "The two structures don't have the same nested structure.\n\n"
                f"First structure: {nest1!r}\n\nSecond structure: {nest2!r}\n\n"
                f"More specifically: The two structures don't have the same number of elements. "
                f"First structure: {a!r}. Second structure: {b!r}"
            )
        for p, q in zip(a, b):
            walk(p, q)

    walk(nest1, nest2)


__all__ = [
    "assert_equal", "assert_greater", "assert_less", "assert_rank", "control_dependencies",
    "ensure_shape", "executing_eagerly", "get_current_name_scope", "gradients", "group",
    "is_tensor", "no_gradient", "no_op",
]
