"""Operations on ``string`` tensors. TF equivalent: ``tf.strings``.

A minimal set, enough for the labels, class names and small text pipelines of TF's
tutorials: ``length``, ``join``, ``reduce_join``, ``upper``, ``lower``, ``split``
(of a scalar or a vector: a 1-D result, no ragged tensors), ``to_number``,
``as_string``, ``regex_full_match`` (Python's ``re`` syntax, which agrees with TF's
RE2 on ordinary patterns), ``substr`` and ``strip``. They compute on concrete values:
eagerly, or inside a ``gt.function`` as a ``py_function`` step of the graph (run on
each call's values, so ``split``'s result may change length from call to call). They
are never differentiable: string tensors carry no gradients.

>>> import gradtape as gt
>>> gt.strings.upper(gt.constant(["cat", "dog"])).numpy()
array([b'CAT', b'DOG'], dtype=object)
>>> gt.strings.length("héllo").numpy()
np.int32(6)
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable, TypeVar

import numpy as np

from . import _gradtape
from ._gradtape import DType, Tensor
from .dtypes import as_dtype
from .errors import InvalidArgumentError

__all__ = [
    "as_string", "join", "length", "lower", "reduce_join", "regex_full_match", "split",
    "strip", "substr", "to_number", "upper",
]


_F = TypeVar("_F", bound=Callable[..., Any])


class _Slot:
    """Where the i-th tensor argument goes back when a traced call runs."""

    def __init__(self, i: int) -> None:
        self.i = i


def _traceable(fn: _F) -> _F:
    """Runs ``fn`` as it is eagerly; inside a ``gt.function`` trace, on the tensors it
    was given (also inside lists), as a ``py_function`` step of the graph, so it
    computes on each call's values."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not _gradtape._is_tracing():
            return fn(*args, **kwargs)
        tensors: list[Tensor] = []

        def pull(v: Any) -> Any:
            if isinstance(v, Tensor):
                tensors.append(v)
                return _Slot(len(tensors) - 1)
            if isinstance(v, (list, tuple)):
                return type(v)(pull(e) for e in v)
            return v

        def put(v: Any, values: tuple) -> Any:
            if isinstance(v, _Slot):
                return values[v.i]
            if isinstance(v, (list, tuple)):
                return type(v)(put(e, values) for e in v)
            return v

        slotted_args = [pull(v) for v in args]
        slotted_kwargs = {k: pull(v) for k, v in kwargs.items()}
        if not tensors:  # Python values only: a constant of the trace
            return fn(*args, **kwargs)
        from ._everyday import py_function

        def run(*values: Any) -> Any:
            return fn(*(put(v, values) for v in slotted_args), **{k: put(v, values) for k, v in slotted_kwargs.items()})

        return py_function(run, tensors, Tout=None)

    return wrapper  # type: ignore[return-value]


def _text(x: Any, op: str) -> np.ndarray:
    """``x`` (a string tensor or str/bytes values) as a numpy object array of bytes."""
    t = _gradtape.convert_to_tensor(x)
    if t.dtype != _gradtape.string:
        raise TypeError(f"{op}: expected a string tensor, got {t.dtype.name}")
    return np.asarray(t.numpy(), dtype=object)


def _strings(a: np.ndarray) -> Tensor:
    """A string tensor from a numpy object array of bytes (any shape)."""
    return _gradtape.constant(np.asarray(a, dtype=object).reshape(np.shape(a)))


def _map(a: np.ndarray, f: Any, otype: Any = object) -> np.ndarray:
    out = np.empty(a.shape, dtype=otype)
    flat_in, flat_out = a.reshape(-1), out.reshape(-1)
    for i, v in enumerate(flat_in):
        flat_out[i] = f(v)
    return out


@_traceable
def length(input: Any, unit: str = "BYTE", name: str | None = None) -> Tensor:
    """The length of each string, in bytes (``unit="BYTE"``) or Unicode characters
    (``"UTF8_CHAR"``), as ``int32``. TF equivalent: ``tf.strings.length``."""
    a = _text(input, "StringLength")
    if unit == "BYTE":
        return _gradtape.constant(_map(a, len, np.int32))
    if unit == "UTF8_CHAR":
        return _gradtape.constant(
            _map(a, lambda b: len(b.decode("utf-8", "replace")), np.int32))
    raise ValueError(f"unit must be 'BYTE' or 'UTF8_CHAR', not {unit!r}")


@_traceable
def join(inputs: Any, separator: str = "", name: str | None = None) -> Tensor:
    """Elementwise concatenation of a list of string tensors (broadcast against
    each other), with ``separator`` between. TF equivalent: ``tf.strings.join``."""
    if isinstance(inputs, (str, bytes, Tensor)):
        raise TypeError("join expects a list of string tensors")
    arrays = [_text(x, "StringJoin") for x in inputs]
    if not arrays:
        raise ValueError("join needs at least one input")
    sep = separator.encode() if isinstance(separator, str) else bytes(separator)
    parts = np.broadcast_arrays(*arrays)
    out = np.empty(parts[0].shape, dtype=object)
    for idx in np.ndindex(out.shape):
        out[idx] = sep.join(p[idx] for p in parts)
    return _strings(out)


@_traceable
def reduce_join(inputs: Any, axis: Any = None, keepdims: bool = False,
                separator: str = "", name: str | None = None) -> Tensor:
    """Joins strings along ``axis`` (all axes when ``None``). TF equivalent:
    ``tf.strings.reduce_join``."""
    a = _text(inputs, "ReduceJoin")
    sep = separator.encode() if isinstance(separator, str) else bytes(separator)
    if axis is None:
        axes = tuple(range(a.ndim))
    else:
        raw = axis.numpy().tolist() if isinstance(axis, Tensor) else axis
        axes = tuple(raw) if isinstance(raw, (list, tuple)) else (raw,)
        for ax in axes:
            if not -a.ndim <= int(ax) < max(a.ndim, 1):
                raise InvalidArgumentError(
                    f"Invalid reduction dimension {ax} for input with {a.ndim} dimensions")
        axes = tuple(sorted({int(ax) % max(a.ndim, 1) for ax in axes}))
    keep = [d for d in range(a.ndim) if d not in axes]
    moved = np.transpose(a, keep + list(axes))
    outer = moved.shape[:len(keep)]
    flat = moved.reshape(outer + (-1,))
    out = np.empty(outer, dtype=object)
    for idx in np.ndindex(outer):
        out[idx] = sep.join(flat[idx])
    if keepdims:
        out = out.reshape([1 if d in axes else n for d, n in enumerate(a.shape)])
    return _strings(out)


@_traceable
def upper(input: Any, encoding: str = "", name: str | None = None) -> Tensor:
    """ASCII letters to upper case (other bytes unchanged, as TF with
    ``encoding=""``). TF equivalent: ``tf.strings.upper``."""
    return _strings(_map(_text(input, "StringUpper"), bytes.upper))


@_traceable
def lower(input: Any, encoding: str = "", name: str | None = None) -> Tensor:
    """ASCII letters to lower case. TF equivalent: ``tf.strings.lower``."""
    return _strings(_map(_text(input, "StringLower"), bytes.lower))


@_traceable
def strip(input: Any, name: str | None = None) -> Tensor:
    """Leading and trailing whitespace removed. TF equivalent: ``tf.strings.strip``."""
    return _strings(_map(_text(input, "StringStrip"), bytes.strip))


@_traceable
def split(input: Any, sep: str | bytes | None = None, maxsplit: int = -1,
          name: str | None = None) -> Tensor:
    """The pieces of a scalar string (or of all strings of a vector, one after the
    other) as a 1-D string tensor: on runs of whitespace when ``sep`` is ``None``,
    else on each ``sep`` (empty pieces kept). TF returns a ragged tensor for a
    vector; gradtape has none, so a vector is split only when every element gives
    the same number of pieces, into a 2-D tensor. TF equivalent:
    ``tf.strings.split``."""
    a = _text(input, "StringSplit")
    if a.ndim > 1:
        raise ValueError("split takes a scalar or a vector of strings")
    s = sep.encode() if isinstance(sep, str) else sep
    if s == b"":
        raise ValueError("sep must not be empty")

    def pieces(b: bytes) -> list[bytes]:
        return b.split(s, maxsplit) if s is not None else b.split(None, maxsplit)

    if a.ndim == 0:
        parts = pieces(bytes(a[()]))
        out = np.empty(len(parts), dtype=object)
        out[:] = parts
        return _strings(out)
    rows = [pieces(b) for b in a]
    if len({len(r) for r in rows}) > 1:
        raise ValueError(
            "split of a vector whose strings give different numbers of pieces needs a "
            "ragged tensor, which gradtape does not have")
    out = np.empty((len(rows), len(rows[0]) if rows else 0), dtype=object)
    for i, r in enumerate(rows):
        out[i, :] = r
    return _strings(out)


@_traceable
def to_number(input: Any, out_type: Any = None, name: str | None = None) -> Tensor:
    """Parses each string as a number of ``out_type`` (``float32`` by default).
    TF equivalent: ``tf.strings.to_number``; an unparsable string is
    ``InvalidArgumentError`` with TF's message."""
    dt = _gradtape.float32 if out_type is None else as_dtype(out_type)
    if not (dt.is_floating or dt in (_gradtape.int32, _gradtape.int64)):
        raise TypeError(f"to_number: out_type must be a float or int32/int64, not {dt.name}")
    a = _text(input, "StringToNumber")

    def parse(b: bytes) -> Any:
        text = b.decode("utf-8", "replace")
        try:
            if dt.is_floating:
                return float(text.strip())
            if text.strip() != text:
                raise ValueError
            v = int(text, 10)
            lo, hi = dt.min, dt.max
            if not lo <= v <= hi:
                raise ValueError
            return v
        except ValueError:
            raise InvalidArgumentError(
                f"StringToNumberOp could not correctly convert string: {text}") from None

    values = _map(a, parse, object)
    np_type = {"float16": np.float16, "float32": np.float32, "float64": np.float64,
               "bfloat16": np.float32, "int32": np.int32, "int64": np.int64}[dt.name]
    out = _gradtape.constant(values.astype(np_type))
    return out if out.dtype == dt else _gradtape.cast(out, dt)


@_traceable
def as_string(input: Any, precision: int = -1, scientific: bool = False,
              shortest: bool = False, width: int = -1, fill: str = "",
              name: str | None = None) -> Tensor:
    """Each number as text (floats with 6 decimals unless ``precision`` says,
    booleans as ``true``/``false``; strings unchanged). TF equivalent:
    ``tf.strings.as_string`` (``tf.as_string``)."""
    t = _gradtape.convert_to_tensor(input)
    if t.dtype == _gradtape.string:
        return t
    dt: DType = t.dtype
    a = np.asarray(t.numpy())
    if dt.is_bool:
        body = "s"
        conv: Any = lambda v: "true" if v else "false"  # noqa: E731
    elif dt.is_integer:
        body, conv = "d", int
    elif dt.is_floating:
        if shortest and scientific:
            raise InvalidArgumentError(
                "Cannot select both scientific and shortest notation")
        body = "g" if shortest else ("e" if scientific else "f")
        if precision >= 0:
            body = f".{precision}{body}"
        conv = float
    else:
        raise TypeError(f"as_string does not support dtype {dt.name}")
    if fill not in ("", " ", "0"):
        raise InvalidArgumentError("Fill argument not supported: " + fill)
    spec = "%" + (fill if fill == "0" else "") + (str(width) if width >= 0 else "") + body

    def fmt(v: Any) -> bytes:
        x = conv(v)
        if isinstance(x, float) and not np.isfinite(x):
            return (b"nan" if np.isnan(x) else (b"inf" if x > 0 else b"-inf"))
        return (spec % x).encode()

    return _strings(_map(a, fmt))


@_traceable
def regex_full_match(input: Any, pattern: str, name: str | None = None) -> Tensor:
    """Whether each whole string matches ``pattern``. TF equivalent:
    ``tf.strings.regex_full_match`` (RE2 there; Python's ``re`` here)."""
    a = _text(input, "RegexFullMatch")
    p = pattern.decode() if isinstance(pattern, bytes) else str(pattern)
    try:
        rx = re.compile(p.encode())
    except re.error as e:
        raise InvalidArgumentError(
            f"Invalid pattern: {pattern}, error: {e}") from None
    return _gradtape.constant(_map(a, lambda b: rx.fullmatch(b) is not None, np.bool_))


@_traceable
def substr(input: Any, pos: Any, len: Any, unit: str = "BYTE",
           name: str | None = None) -> Tensor:
    """``len`` bytes (or UTF-8 characters) of each string from ``pos`` (negative:
    from the end); ``pos`` past the end is ``InvalidArgumentError``, as TF.
    TF equivalent: ``tf.strings.substr``."""
    a = _text(input, "Substr")
    p = np.broadcast_to(np.asarray(_gradtape.convert_to_tensor(pos).numpy()), a.shape)
    n = np.broadcast_to(np.asarray(_gradtape.convert_to_tensor(len).numpy()), a.shape)
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"unit must be 'BYTE' or 'UTF8_CHAR', not {unit!r}")
    out = np.empty(a.shape, dtype=object)
    for idx in np.ndindex(a.shape):
        s: Any = a[idx] if unit == "BYTE" else a[idx].decode("utf-8", "replace")
        size = s.__len__()
        start, count = int(p[idx]), int(n[idx])
        if start < 0:
            start += size
        if not 0 <= start <= size:
            raise InvalidArgumentError(
                f"pos {int(p[idx])} out of range for string at index {idx}")
        piece = s[start:start + max(count, 0)]
        out[idx] = piece if unit == "BYTE" else piece.encode()
    return _strings(out)
