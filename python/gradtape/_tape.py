"""``gt.GradientTape``: TF's tape API over the native tape.

Nesting of arguments and results is handled here; recording, the arena and the
backward sweep are native (``_gradtape._Tape``).
"""

from __future__ import annotations

import contextlib
import enum
import warnings
from types import TracebackType
from typing import Any, Iterator, Mapping, TypeVar, Union, overload

from . import _gradtape as _native
from . import _nest

_Tensor = _native.Tensor
_Variable = _native.Variable
_Source = Union[_native.Tensor, _native.Variable]
_K = TypeVar("_K")


class UnconnectedGradients(enum.Enum):
    """What ``gradient`` returns for sources the target does not depend on.
    TF equivalent: ``tf.UnconnectedGradients``.

    >>> import gradtape as gt
    >>> x, y = gt.constant(1.0), gt.constant(2.0)
    >>> with gt.GradientTape() as t:
    ...     t.watch([x, y])
    ...     z = x * 3.0
    >>> t.gradient(z, y, unconnected_gradients=gt.UnconnectedGradients.ZERO)
    <gt.Tensor: shape=(), dtype=float32, numpy=0.0>
    """

    NONE = "none"
    ZERO = "zero"


def _is_zero(unconnected_gradients: UnconnectedGradients | str) -> bool:
    if isinstance(unconnected_gradients, UnconnectedGradients):
        return unconnected_gradients is UnconnectedGradients.ZERO
    if unconnected_gradients in ("zero", "none"):
        return unconnected_gradients == "zero"
    raise ValueError(f"Unknown value for unconnected_gradients: {unconnected_gradients!r}")


class GradientTape:
    """Record operations for automatic differentiation. TF equivalent: ``tf.GradientTape``.

    Operations are recorded if they run inside this context manager and at least one
    of their inputs is watched. Trainable variables read inside the context are
    watched automatically (unless ``watch_accessed_variables=False``).

    >>> import gradtape as gt
    >>> x = gt.constant(3.0)
    >>> with gt.GradientTape() as g:
    ...     g.watch(x)
    ...     y = x * x
    >>> print(g.gradient(y, x))
    gt.Tensor(6.0, shape=(), dtype=float32)
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        self._tape = _native._Tape(bool(persistent), bool(watch_accessed_variables))
        self._persistent = bool(persistent)
        self._watch_accessed_variables = bool(watch_accessed_variables)
        self._recording = False
        self._used = False

    def __enter__(self) -> GradientTape:
        self._push()
        return self

    def __exit__(
        self,
        typ: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._recording:
            self._pop()

    def _push(self) -> None:
        self._tape.push()
        self._recording = True

    def _pop(self) -> None:
        self._tape.pop()
        self._recording = False

    @property
    def persistent(self) -> bool:
        """Whether the tape can compute several gradients. TF equivalent:
        ``tf.GradientTape`` ``persistent`` argument.

        >>> import gradtape as gt
        >>> gt.GradientTape(persistent=True).persistent
        True
        """
        return self._persistent

    def watch(self, tensor: Any) -> None:
        """Ensures ``tensor`` (a tensor, variable, or nested structure of them) is
        traced by this tape. TF equivalent: ``tf.GradientTape.watch``."""
        flat = _nest.flatten(tensor)
        skipped = self._tape.watch(flat)
        if skipped:
            warnings.warn(
                "The dtype of the watched tensor must be floating (e.g. gt.float32), "
                "got an integer or bool tensor: its gradient will be None",
                stacklevel=2,
            )

    def watched_variables(self) -> tuple[_native.Variable, ...]:
        """The variables watched by this tape, in order of construction. TF equivalent:
        ``tf.GradientTape.watched_variables``.

        >>> import gradtape as gt
        >>> v = gt.Variable(1.0, name="w")
        >>> with gt.GradientTape() as t:
        ...     y = v * 2.0
        >>> [x.name for x in t.watched_variables()]
        ['w:0']
        """
        return tuple(self._tape.watched_variables())

    @contextlib.contextmanager
    def stop_recording(self) -> Iterator[None]:
        """Temporarily stops recording on this tape. TF equivalent:
        ``tf.GradientTape.stop_recording``.

        >>> import gradtape as gt
        >>> x = gt.Variable(2.0)
        >>> with gt.GradientTape() as t:
        ...     with t.stop_recording():
        ...         y = x * x
        >>> print(t.gradient(y, x))
        None
        """
        was = self._tape.pause()
        try:
            yield
        finally:
            self._tape.resume(was)

    def reset(self) -> None:
        """Clears everything recorded so far (like leaving the context and entering
        a new tape). TF equivalent: ``tf.GradientTape.reset``."""
        self._tape.reset()
        self._used = False

    def _check_usable(self) -> None:
        if self._used and not self._persistent:
            raise RuntimeError(
                "A non-persistent GradientTape can only be used to compute one set "
                "of gradients (or jacobians)"
            )
        if self._recording and not self._persistent:
            # TF: computing gradients inside the context of a non-persistent tape
            # stops its recording.
            self._pop()

    @overload
    def jacobian(
        self,
        target: _Source,
        sources: _Source,
        unconnected_gradients: UnconnectedGradients | str = ...,
        parallel_iterations: int | None = ...,
        experimental_use_pfor: bool = ...,
    ) -> _native.Tensor | None: ...
    @overload
    def jacobian(
        self,
        target: _Source,
        sources: list[Any],
        unconnected_gradients: UnconnectedGradients | str = ...,
        parallel_iterations: int | None = ...,
        experimental_use_pfor: bool = ...,
    ) -> list[_native.Tensor | None]: ...
    @overload
    def jacobian(
        self,
        target: _Source,
        sources: Mapping[_K, Any],
        unconnected_gradients: UnconnectedGradients | str = ...,
        parallel_iterations: int | None = ...,
        experimental_use_pfor: bool = ...,
    ) -> dict[_K, _native.Tensor | None]: ...
    @overload
    def jacobian(
        self,
        target: _Source,
        sources: Any,
        unconnected_gradients: UnconnectedGradients | str = ...,
        parallel_iterations: int | None = ...,
        experimental_use_pfor: bool = ...,
    ) -> Any: ...
    def jacobian(
        self,
        target: _Source,
        sources: Any,
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
        parallel_iterations: int | None = None,
        experimental_use_pfor: bool = True,
    ) -> Any:
        """Jacobian of ``target`` (one tensor) with respect to ``sources`` (a tensor,
        variable or nested structure): per source, shape ``target.shape +
        source.shape``. TF equivalent: ``tf.GradientTape.jacobian``.

        All rows travel through one vectorized backward sweep (in chunks of at most
        ``parallel_iterations`` rows); ``experimental_use_pfor=False`` sweeps row by
        row and gives the same numbers.

        >>> import gradtape as gt
        >>> x = gt.constant([1.0, 2.0])
        >>> with gt.GradientTape() as t:
        ...     t.watch(x)
        ...     y = x * x
        >>> t.jacobian(y, x).numpy().tolist()
        [[2.0, 0.0], [0.0, 4.0]]
        """
        self._check_usable()
        if not isinstance(target, (_Tensor, _Variable)):
            raise TypeError(f"jacobian target must be a single Tensor, got {type(target).__name__}")
        flat_sources = _nest.flatten(sources)
        self._check_sources(flat_sources)
        self._used = True
        flat = self._tape.jacobian(
            target, flat_sources, _is_zero(unconnected_gradients), parallel_iterations,
            bool(experimental_use_pfor),
        )
        return _nest.pack_sequence_as(sources, flat)

    def batch_jacobian(
        self,
        target: _Source,
        source: _Source,
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
        parallel_iterations: int | None = None,
        experimental_use_pfor: bool = True,
    ) -> _native.Tensor | None:
        """Per-example Jacobians: for ``target`` of shape ``(batch, ...)`` and
        ``source`` of shape ``(batch, ...)``, a tensor of shape ``(batch,) +
        target.shape[1:] + source.shape[1:]``, computed without the full Jacobian
        (it assumes ``target[i]`` does not depend on ``source[j]`` for ``i != j``).
        TF equivalent: ``tf.GradientTape.batch_jacobian``.

        >>> import gradtape as gt
        >>> x = gt.constant([[1.0, 2.0], [3.0, 4.0]])
        >>> with gt.GradientTape() as t:
        ...     t.watch(x)
        ...     y = x * x
        >>> t.batch_jacobian(y, x).numpy().tolist()
        [[[2.0, 0.0], [0.0, 4.0]], [[6.0, 0.0], [0.0, 8.0]]]
        """
        self._check_usable()
        if not isinstance(target, (_Tensor, _Variable)):
            raise TypeError(f"batch_jacobian target must be a single Tensor, got {type(target).__name__}")
        self._check_sources([source])
        self._used = True
        return self._tape.batch_jacobian(
            target, source, _is_zero(unconnected_gradients), parallel_iterations,
            bool(experimental_use_pfor),
        )

    @staticmethod
    def _check_sources(flat_sources: list[Any]) -> None:
        for s in flat_sources:
            if not isinstance(s, (_Tensor, _Variable)):
                raise TypeError(
                    f"gradient sources must be Tensors or Variables, got {type(s).__name__}"
                )

    @overload
    def gradient(
        self,
        target: Any,
        sources: _Source,
        output_gradients: Any = ...,
        unconnected_gradients: UnconnectedGradients | str = ...,
    ) -> _native.Tensor | None: ...
    @overload
    def gradient(
        self,
        target: Any,
        sources: list[Any],
        output_gradients: Any = ...,
        unconnected_gradients: UnconnectedGradients | str = ...,
    ) -> list[_native.Tensor | None]: ...
    @overload
    def gradient(
        self,
        target: Any,
        sources: Mapping[_K, Any],
        output_gradients: Any = ...,
        unconnected_gradients: UnconnectedGradients | str = ...,
    ) -> dict[_K, _native.Tensor | None]: ...
    @overload
    def gradient(
        self,
        target: Any,
        sources: Any,
        output_gradients: Any = ...,
        unconnected_gradients: UnconnectedGradients | str = ...,
    ) -> Any: ...
    def gradient(
        self,
        target: Any,
        sources: Any,
        output_gradients: Any = None,
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
    ) -> Any:
        """Gradient of ``target`` (a tensor or nested structure: gradients of the sum)
        with respect to ``sources`` (a tensor, variable or nested structure), returned
        in the structure of ``sources``. TF equivalent: ``tf.GradientTape.gradient``.

        >>> import gradtape as gt
        >>> w = gt.Variable([1.0, 2.0])
        >>> with gt.GradientTape() as t:
        ...     loss = gt.reduce_sum(w * w)
        >>> print(t.gradient(loss, {"w": w})["w"])
        gt.Tensor([2. 4.], shape=(2,), dtype=float32)
        """
        self._check_usable()
        zero = _is_zero(unconnected_gradients)
        flat_targets = _nest.flatten(target)
        flat_sources = _nest.flatten(sources)
        self._check_sources(flat_sources)
        if output_gradients is not None:
            og = _nest.flatten(output_gradients)
            if len(og) != len(flat_targets):
                raise ValueError(
                    f"output_gradients has {len(og)} entries but target has {len(flat_targets)}"
                )
        else:
            og = None
        self._used = True
        flat = self._tape.gradient(flat_targets, flat_sources, og, zero)
        return _nest.pack_sequence_as(sources, flat)
