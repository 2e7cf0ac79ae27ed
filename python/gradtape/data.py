"""Input pipelines. TF equivalent: ``tf.data``.

``Dataset`` covers what training-loop tutorials write: ``from_tensor_slices``,
``shuffle(buffer_size, seed=)``, ``batch``, ``map``, ``repeat``, ``take``, ``skip``,
``prefetch`` / ``cache`` (no-ops here), iterated in an eager loop or in a Python
loop inside a ``gt.function`` (there the loop is unrolled while tracing, so the
elements of that trace are part of its graph). Elements are gradtape tensors (tuples
and dicts of them); ``map`` runs its function in Python on each element. The order
``shuffle`` gives is gradtape's (a seeded generator), not TF's.

>>> import gradtape as gt
>>> ds = gt.data.Dataset.from_tensor_slices(([1, 2, 3, 4], [0, 1, 0, 1])).batch(2)
>>> [x.numpy().tolist() for x, y in ds]
[[1, 2], [3, 4]]
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ._gradtape import Tensor, convert_to_tensor, stack

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


def _row(t: Any, i: int) -> Any:
    return t[i]


def _map_structure(fn: Callable[[Any], Any], x: Any) -> Any:
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*(_map_structure(fn, e) for e in x))
    if isinstance(x, tuple):  # a list is one tensor, as in TF
        return type(x)(_map_structure(fn, e) for e in x)
    if isinstance(x, dict):
        return {k: _map_structure(fn, v) for k, v in x.items()}
    return fn(x)


def _leaves(x: Any) -> list[Any]:
    if isinstance(x, tuple):
        return [e for item in x for e in _leaves(item)]
    if isinstance(x, dict):
        return [e for item in x.values() for e in _leaves(item)]
    return [x]


class Dataset:
    """A sequence of elements, built and transformed lazily. TF equivalent:
    ``tf.data.Dataset``."""

    _gt_dataset = True

    def __init__(self, make: Callable[[], Iterator[Any]], cardinality: int) -> None:
        self._make = make
        self._cardinality = cardinality

    # -- sources --------------------------------------------------------------

    @staticmethod
    def from_tensor_slices(tensors: Any, name: str | None = None) -> Dataset:
        """The slices of ``tensors`` (a tensor, array, or tuple / dict of them) along
        their first dimension."""
        tensor_data = _map_structure(convert_to_tensor, tensors)
        leaves = _leaves(tensor_data)
        if not leaves:
            raise ValueError("from_tensor_slices needs at least one tensor")
        sizes = set()
        for leaf in leaves:
            if len(leaf.shape) == 0:
                raise ValueError("Unbatching a tensor is only supported for rank >= 1 (from_tensor_slices of a scalar)")
            sizes.add(int(leaf.shape[0]))
        if len(sizes) != 1:
            raise ValueError(f"Dimensions of the tensors' first axes differ: {sorted(sizes)}")
        n = sizes.pop()

        def make() -> Iterator[Any]:
            for i in range(n):
                yield _map_structure(functools.partial(_row, i=i), tensor_data)

        return Dataset(make, n)

    @staticmethod
    def from_tensors(tensors: Any, name: str | None = None) -> Dataset:
        """One element: ``tensors`` itself."""
        data = _map_structure(convert_to_tensor, tensors)
        return Dataset(lambda: iter([data]), 1)

    @staticmethod
    def range(*args: int, **kwargs: Any) -> Dataset:
        """``range(start, stop, step)`` as int64 scalars."""
        values = range(*args)
        dtype = kwargs.get("output_type", "int64")
        return Dataset(lambda: (convert_to_tensor(v, dtype=dtype) for v in values), len(values))

    @staticmethod
    def from_generator(
        generator: Callable[[], Any],
        output_types: Any = None,
        output_shapes: Any = None,
        args: Any = None,
        output_signature: Any = None,
        name: str | None = None,
    ) -> Dataset:
        """The elements ``generator()`` yields, as tensors."""

        def make() -> Iterator[Any]:
            for item in generator(*(args or ())):
                yield _map_structure(convert_to_tensor, item)

        return Dataset(make, UNKNOWN_CARDINALITY)

    # -- transformations -------------------------------------------------------

    def map(
        self,
        map_func: Callable[..., Any],
        num_parallel_calls: Any = None,
        deterministic: Any = None,
        name: str | None = None,
    ) -> Dataset:
        """``map_func`` applied to each element (a tuple element is passed unpacked)."""
        src = self._make

        def make() -> Iterator[Any]:
            for e in src():
                out = map_func(*e) if isinstance(e, tuple) else map_func(e)
                yield _map_structure(convert_to_tensor, out)

        return Dataset(make, self._cardinality)

    def filter(self, predicate: Callable[..., Any], name: str | None = None) -> Dataset:
        src = self._make

        def make() -> Iterator[Any]:
            for e in src():
                keep = predicate(*e) if isinstance(e, tuple) else predicate(e)
                if bool(keep):
                    yield e

        return Dataset(make, UNKNOWN_CARDINALITY)

    def batch(
        self,
        batch_size: int,
        drop_remainder: bool = False,
        num_parallel_calls: Any = None,
        deterministic: Any = None,
        name: str | None = None,
    ) -> Dataset:
        """Consecutive elements stacked into batches of ``batch_size`` (the last one
        smaller unless ``drop_remainder``)."""
        batch_size = int(batch_size)
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        src = self._make

        def make() -> Iterator[Any]:
            it = src()
            while True:
                chunk = list(itertools.islice(it, batch_size))
                if not chunk or (drop_remainder and len(chunk) < batch_size):
                    return
                yield _stack(chunk)

        card = self._cardinality
        if card >= 0:
            card = card // batch_size if drop_remainder else -(-card // batch_size)
        return Dataset(make, card)

    def unbatch(self, name: str | None = None) -> Dataset:
        src = self._make

        def make() -> Iterator[Any]:
            for e in src():
                n = int(_leaves(e)[0].shape[0])
                for i in range(n):
                    yield _map_structure(functools.partial(_row, i=i), e)

        return Dataset(make, UNKNOWN_CARDINALITY)

    def shuffle(
        self,
        buffer_size: int,
        seed: int | None = None,
        reshuffle_each_iteration: bool | None = None,
        name: str | None = None,
    ) -> Dataset:
        """Elements in random order, drawn from a buffer of ``buffer_size`` (TF's
        algorithm; each iteration reshuffles unless ``reshuffle_each_iteration=False``).
        With ``seed`` the sequence of orders is reproducible."""
        buffer_size = int(buffer_size)
        if buffer_size <= 0 and buffer_size != AUTOTUNE:
            raise ValueError(f"buffer_size must be positive, got {buffer_size}")
        src = self._make
        reshuffle = True if reshuffle_each_iteration is None else bool(reshuffle_each_iteration)
        base = int(seed) if seed is not None else int(np.random.default_rng().integers(1 << 62))
        state = {"epoch": 0}

        def make() -> Iterator[Any]:
            epoch = state["epoch"]
            if reshuffle:
                state["epoch"] += 1
            rng = np.random.default_rng([base, epoch])
            buf: list[Any] = []
            size = buffer_size if buffer_size > 0 else 1 << 30
            for e in src():
                buf.append(e)
                if len(buf) >= size:
                    j = int(rng.integers(len(buf)))
                    buf[j], buf[-1] = buf[-1], buf[j]
                    yield buf.pop()
            while buf:
                j = int(rng.integers(len(buf)))
                buf[j], buf[-1] = buf[-1], buf[j]
                yield buf.pop()

        return Dataset(make, self._cardinality)

    def repeat(self, count: int | None = None, name: str | None = None) -> Dataset:
        """The elements ``count`` times (forever for ``None`` or -1)."""
        src = self._make
        forever = count is None or int(count) < 0

        def make() -> Iterator[Any]:
            n = 0
            while forever or n < int(count):  # type: ignore[arg-type]
                empty = True
                for e in src():
                    empty = False
                    yield e
                if empty:
                    return
                n += 1

        card = self._cardinality
        if forever:
            card = INFINITE_CARDINALITY if card != 0 else 0
        elif card >= 0:
            card = card * int(count)  # type: ignore[arg-type]
        return Dataset(make, card)

    def take(self, count: int, name: str | None = None) -> Dataset:
        src = self._make
        count = int(count)
        card = self._cardinality
        if count >= 0:
            card = count if card == INFINITE_CARDINALITY else (min(card, count) if card >= 0 else card)
        return Dataset(lambda: itertools.islice(src(), None if count < 0 else count), card)

    def skip(self, count: int, name: str | None = None) -> Dataset:
        src = self._make
        count = int(count)
        card = self._cardinality
        if card >= 0:
            card = max(card - count, 0) if count >= 0 else 0
        return Dataset(
            lambda: itertools.islice(src(), count if count >= 0 else None, None) if count >= 0 else iter(()), card
        )

    def enumerate(self, start: int = 0, name: str | None = None) -> Dataset:
        src = self._make

        def make() -> Iterator[Any]:
            for i, e in enumerate(src(), start):
                yield (convert_to_tensor(i, dtype="int64"), e)

        return Dataset(make, self._cardinality)

    def prefetch(self, buffer_size: Any = None, name: str | None = None) -> Dataset:
        """The same elements (prefetching is not needed here)."""
        return self

    def cache(self, filename: str = "", name: str | None = None) -> Dataset:
        """The same elements (they are computed on each iteration)."""
        return self

    # -- consumption ----------------------------------------------------------

    def __iter__(self) -> Iterator[Any]:
        return iter(self._make())

    def __len__(self) -> int:
        if self._cardinality == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if self._cardinality < 0:
            raise TypeError("The dataset length is unknown.")
        return self._cardinality

    def cardinality(self) -> Tensor:
        return convert_to_tensor(self._cardinality, dtype="int64")

    def as_numpy_iterator(self) -> Iterator[Any]:
        for e in self:
            yield _map_structure(lambda t: t.numpy(), e)

    def reduce(self, initial_state: Any, reduce_func: Callable[[Any, Any], Any], name: str | None = None) -> Any:
        state = initial_state
        for e in self:
            state = reduce_func(state, e)
        return state

    @property
    def element_spec(self) -> Any:
        from ._function import TensorSpec

        first = next(iter(self), None)
        if first is None:
            return None
        return _map_structure(lambda t: TensorSpec(tuple(t.shape), t.dtype), first)


def _stack(chunk: list[Any]) -> Any:
    first = chunk[0]
    if isinstance(first, tuple) and hasattr(first, "_fields"):
        return type(first)(*(_stack([c[i] for c in chunk]) for i in range(len(first))))
    if isinstance(first, (tuple, list)):
        return type(first)(_stack([c[i] for c in chunk]) for i in range(len(first)))
    if isinstance(first, dict):
        return {k: _stack([c[k] for c in chunk]) for k in first}
    return stack(chunk)


__all__ = ["AUTOTUNE", "Dataset", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY"]
