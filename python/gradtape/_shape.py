"""`gt.TensorShape`: the shape of a tensor, a tuple that also equals lists.

A tensor's shape is always fully known; a ``TensorShape`` a user builds may have
unknown dimensions (``None``) or an unknown rank (``TensorShape(None)``), and the
methods follow TF's rules for them (``merge_with``, ``is_compatible_with``, ...).
"""

from __future__ import annotations

from typing import Any, Optional
from collections.abc import Iterable, Iterator

_Dim = Optional[int]


def _dim(d: Any) -> _Dim:
    if type(d) is int and d >= 0:  # the common case: a tensor's own shape
        return d
    if d is None:
        return None
    value = getattr(d, "value", d)  # a TF-style Dimension
    if value is None:
        return None
    if isinstance(value, float) and not value.is_integer():
        raise TypeError(f"Dimension value must be integer or None, got {d!r}")
    try:
        v = int(value)
    except (TypeError, ValueError):
        raise TypeError(
            "Dimension value must be integer or None or have an __index__ method, got "
            f"value '{d!r}' with type '{type(d)}'"
        ) from None
    if v < 0:
        raise ValueError(f"Dimension {v} must be >= 0")
    return v


def _dim_compatible(a: _Dim, b: _Dim) -> bool:
    return a is None or b is None or a == b


class TensorShape(tuple):
    """The static shape of a tensor. TF equivalent: ``tf.TensorShape``.

    A tuple of dimensions that prints like TF's (``(3, 2)``) and compares equal to
    tuples and lists of the same dimensions. A dimension may be ``None`` (unknown) and
    the rank may be unknown (``TensorShape(None)``), as in TF.

    >>> import gradtape as gt
    >>> gt.zeros([3, 2]).shape
    TensorShape([3, 2])
    >>> gt.zeros([3, 2]).shape == [3, 2]
    True
    >>> gt.TensorShape([None, 2]).merge_with([3, None])
    TensorShape([3, 2])
    """

    # Set on the instance only for an unknown rank (the common case costs nothing).
    _unknown_rank = False

    def __new__(cls, dims: Iterable[Any] | int | None = ()) -> TensorShape:
        if type(dims) is tuple:
            # A tensor's own shape (a tuple of ints from the engine): taken as it is.
            for d in dims:
                if type(d) is not int or d < 0:
                    break
            else:
                return tuple.__new__(cls, dims)
        if isinstance(dims, TensorShape):
            return dims
        if dims is None:
            self = super().__new__(cls, ())
            self._unknown_rank = True
            return self
        if isinstance(dims, int):
            dims = [dims]
        return super().__new__(cls, (_dim(d) for d in dims))

    # --- rank and dimensions ---------------------------------------------------------

    @property
    def dims(self) -> list[_Dim] | None:
        """The dimensions as a list (``None`` when the rank is unknown)."""
        return None if self._unknown_rank else list(tuple.__iter__(self))

    @property
    def rank(self) -> int | None:
        """Number of dimensions (``None`` when unknown)."""
        return None if self._unknown_rank else tuple.__len__(self)

    @property
    def ndims(self) -> int | None:
        """Number of dimensions (TF's older name)."""
        return self.rank

    def __len__(self) -> int:
        if self._unknown_rank:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return tuple.__len__(self)

    def __iter__(self) -> Iterator[_Dim]:
        if self._unknown_rank:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return tuple.__iter__(self)

    def __bool__(self) -> bool:
        # TF: a shape is truthy when its rank is known (even the scalar shape).
        return not self._unknown_rank

    def __getitem__(self, key: Any) -> Any:
        if self._unknown_rank:
            return TensorShape(None) if isinstance(key, slice) else None
        r = super().__getitem__(key)
        return TensorShape(r) if isinstance(key, slice) else r

    def as_list(self) -> list[_Dim]:
        """The dimensions as a list. TF equivalent: ``TensorShape.as_list``."""
        if self._unknown_rank:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(tuple.__iter__(self))

    def num_elements(self) -> int | None:
        """Product of the dimensions (``None`` unless fully defined)."""
        if not self.is_fully_defined():
            return None
        n = 1
        for d in tuple.__iter__(self):
            n *= d
        return n

    def is_fully_defined(self) -> bool:
        """Whether the rank and every dimension are known."""
        return not self._unknown_rank and all(d is not None for d in tuple.__iter__(self))

    def assert_is_fully_defined(self) -> None:
        if not self.is_fully_defined():
            raise ValueError(f"Shape {self} is not fully defined")

    # --- compatibility -----------------------------------------------------------------

    def is_compatible_with(self, other: Any) -> bool:
        """Whether some fully defined shape could be both. TF equivalent:
        ``TensorShape.is_compatible_with``."""
        other = as_shape(other)
        if self._unknown_rank or other._unknown_rank:
            return True
        if self.rank != other.rank:
            return False
        return all(_dim_compatible(a, b) for a, b in zip(self.dims or [], other.dims or []))

    def assert_is_compatible_with(self, other: Any) -> None:
        """Raises ``ValueError`` unless ``is_compatible_with(other)``."""
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def merge_with(self, other: Any) -> TensorShape:
        """The most specific shape both are compatible with; ``ValueError`` when
        they are not compatible. TF equivalent: ``TensorShape.merge_with``."""
        other = as_shape(other)
        if self._unknown_rank:
            return other
        if other._unknown_rank:
            return self
        if self.rank != other.rank or not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape(
            a if a is not None else b for a, b in zip(self.dims or [], other.dims or [])
        )

    def most_specific_compatible_shape(self, other: Any) -> TensorShape:
        """The most specific shape both shapes are compatible with (unknown where
        they differ). TF equivalent: ``TensorShape.most_specific_compatible_shape``."""
        other = as_shape(other)
        if self._unknown_rank or other._unknown_rank or self.rank != other.rank:
            return TensorShape(None)
        return TensorShape(
            a if a == b else None for a, b in zip(self.dims or [], other.dims or [])
        )

    def is_subtype_of(self, other: Any) -> bool:
        other = as_shape(other)
        if other._unknown_rank:
            return True
        if self._unknown_rank or self.rank != other.rank:
            return False
        return all(b is None or a == b for a, b in zip(self.dims or [], other.dims or []))

    def most_specific_common_supertype(self, others: Iterable[Any]) -> TensorShape:
        r = self
        for o in others:
            r = r.most_specific_compatible_shape(o)
        return r

    def concatenate(self, other: Any) -> TensorShape:
        """The dimensions of ``self`` then ``other``. TF equivalent:
        ``TensorShape.concatenate``."""
        other = as_shape(other)
        if self._unknown_rank or other._unknown_rank:
            return TensorShape(None)
        return TensorShape((self.dims or []) + (other.dims or []))

    def assert_same_rank(self, other: Any) -> None:
        other = as_shape(other)
        if not self._unknown_rank and not other._unknown_rank and self.rank != other.rank:
            raise ValueError(f"Shapes {self} and {other} must have the same rank")

    def assert_has_rank(self, rank: int) -> None:
        if not self._unknown_rank and self.rank != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")

    def with_rank(self, rank: int) -> TensorShape:
        try:
            return self.merge_with(TensorShape([None] * rank))
        except ValueError:
            raise ValueError(f"Shape {self} must have rank {rank}") from None

    def with_rank_at_least(self, rank: int) -> TensorShape:
        if self.rank is not None and self.rank < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def with_rank_at_most(self, rank: int) -> TensorShape:
        if self.rank is not None and self.rank > rank:
            raise ValueError(f"Shape {self} must have rank at most {rank}")
        return self

    # --- comparison and printing ---------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TensorShape):
            return self.dims == other.dims
        if isinstance(other, (list, tuple)):
            return not self._unknown_rank and tuple(tuple.__iter__(self)) == tuple(other)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return hash((self._unknown_rank, tuple(tuple.__iter__(self))))

    def __add__(self, other: Any) -> TensorShape:
        return self.concatenate(other)

    def __radd__(self, other: Any) -> TensorShape:
        return as_shape(other).concatenate(self)

    def __reduce__(self) -> Any:
        return (TensorShape, (self.dims,))

    def __str__(self) -> str:
        if self._unknown_rank:
            return "<unknown>"
        dims = list(tuple.__iter__(self))
        if len(dims) == 1:
            return f"({dims[0]},)"
        return "(" + ", ".join(str(d) for d in dims) + ")"

    def __repr__(self) -> str:
        if self._unknown_rank:
            return "TensorShape(None)"
        return f"TensorShape({list(tuple.__iter__(self))})"


def as_shape(shape: Any) -> TensorShape:
    """``shape`` as a ``TensorShape``."""
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)
