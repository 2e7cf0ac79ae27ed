"""``gt.GradientTape``: TF's tape API over the native tape.

``GradientTape`` subclasses the native ``_gradtape._Tape``, which owns all of the
tape's state (persistent or not, used, active on this thread, watched variables) and
checks every argument. This module adds only what belongs to Python: nested
structures of arguments and results, ``stop_recording`` as a context manager, and the
warning for a watched integer tensor.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import warnings
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar, Union, overload

from . import _gradtape as _native
from . import _nest
from ._indexed_slices import _densify, _from_native

_Source = Union[_native.Tensor, _native.Variable]
_logger = logging.getLogger("gradtape")
_warned_persistent_inside = False

# TF's words (backprop.py), logged once per process as TF does.
_PERSISTENT_INSIDE = (
    "Calling GradientTape.gradient on a persistent tape inside its context is significantly less efficient "
    "than calling it outside the context (it causes the gradient ops to be recorded on the tape, leading to "
    "increased CPU and memory usage). Only call GradientTape.gradient inside the context if you actually want "
    "to trace the gradient in order to compute higher order derivatives."
)
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


class GradientTape(_native._Tape):
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

    def watch(self, tensor: Any) -> None:
        """Ensures ``tensor`` (a tensor, variable, or nested structure of them) is
        traced by this tape; anything else (a numpy array, a number) is a
        ``ValueError``, as in TF. TF equivalent: ``tf.GradientTape.watch``."""
        if self._watch(_nest.flatten(tensor)):
            warnings.warn(
                "The dtype of the watched tensor must be floating (e.g. gt.float32), "
                "got an integer, bool or string tensor: its gradient will be None",
                stacklevel=2,
            )

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
        was = self._pause()
        try:
            yield
        finally:
            self._resume(was)

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
        row and gives the same numbers, on a persistent tape only (as in TF eager, a
        non-persistent tape raises ``RuntimeError``).

        >>> import gradtape as gt
        >>> x = gt.constant([1.0, 2.0])
        >>> with gt.GradientTape() as t:
        ...     t.watch(x)
        ...     y = x * x
        >>> t.jacobian(y, x).numpy().tolist()
        [[2.0, 0.0], [0.0, 4.0]]
        """
        flat = self._jacobian(
            _densify(target), _nest.flatten(sources), unconnected_gradients, parallel_iterations,
            experimental_use_pfor,
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
        Both must have rank 2 or more (``ValueError`` otherwise); a target that does
        not depend on ``source`` gives zeros whatever ``unconnected_gradients`` says,
        and ``experimental_use_pfor=False`` needs a persistent tape, as in TF.
        TF equivalent: ``tf.GradientTape.batch_jacobian``.

        >>> import gradtape as gt
        >>> x = gt.constant([[1.0, 2.0], [3.0, 4.0]])
        >>> with gt.GradientTape() as t:
        ...     t.watch(x)
        ...     y = x * x
        >>> t.batch_jacobian(y, x).numpy().tolist()
        [[[2.0, 0.0], [0.0, 4.0]], [[6.0, 0.0], [0.0, 8.0]]]
        """
        return self._batch_jacobian(
            _densify(target), source, unconnected_gradients, parallel_iterations, experimental_use_pfor
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
        As in TF, a source whose gradient comes only from rows it gives to gathers
        (``gt.gather`` on axis 0, ``gt.nn.embedding_lookup``, ``gt.gather_nd`` with one
        index per row) gets a ``gt.IndexedSlices``; ``gt.convert_to_tensor`` densifies
        it.

        >>> import gradtape as gt
        >>> w = gt.Variable([1.0, 2.0])
        >>> with gt.GradientTape() as t:
        ...     loss = gt.reduce_sum(w * w)
        >>> print(t.gradient(loss, {"w": w})["w"])
        gt.Tensor([2. 4.], shape=(2,), dtype=float32)
        """
        global _warned_persistent_inside
        if not _warned_persistent_inside and self.persistent and self._active:
            _warned_persistent_inside = True
            _logger.warning(_PERSISTENT_INSIDE)
        og = None if output_gradients is None else _nest.flatten(output_gradients)
        flat_targets = [_densify(t) for t in _nest.flatten(target)]
        flat_sources = _nest.flatten(sources)
        if _native._explanations_enabled():
            snap = self._snapshot()
            flat = self._gradient(flat_targets, flat_sources, og, unconnected_gradients, True)
            from . import debugging

            debugging._warn_none(self, snap, flat_targets, flat_sources, flat)
        else:
            flat = self._gradient(flat_targets, flat_sources, og, unconnected_gradients, True)
        return _nest.pack_sequence_as(sources, [_from_native(g, s) for g, s in zip(flat, flat_sources)])

    def explain(self, target: Any, source: Any) -> str:
        """Why ``self.gradient(target, source)`` is ``None``, in a sentence: the source
        never watched, a Variable replaced by a Tensor, a path through numpy or Python
        floats, an integer dtype, ``stop_gradient`` or ``stop_recording`` on the way,
        the target computed outside the tape, the non-persistent tape already used.
        With ``gt.debugging.enable_explanations()`` on while the code ran, it names the
        op and the line that cut the path. (When the gradient is not ``None``, it
        lists the recorded ops it flows through.) Not in TF.

        >>> import gradtape as gt
        >>> x = gt.Variable(2.0)
        >>> with gt.GradientTape(persistent=True) as tape:
        ...     y = gt.stop_gradient(x) * 3.0
        >>> print(tape.gradient(y, x))
        None
        >>> print(tape.explain(y, x))  # doctest: +NORMALIZE_WHITESPACE
        The target was not recorded by this tape: no op that made it had an input the tape
        knew. The path back to the source is cut: by stop_gradient, an integer dtype, values
        that left gradtape (numpy arrays, Python floats), or ops run outside the tape's
        `with` block or under stop_recording(). (Call gt.debugging.enable_explanations()
        before running the code to have the op and line named.)
        """
        from . import debugging

        return debugging.explain(self, target, source)

    def memory_info(self) -> dict[str, Any]:
        """What the tape holds for its backward pass: ``nodes`` (recorded ops),
        ``saved_tensors`` and ``bytes`` (distinct tensors the gradient rules saved, and
        their size), and ``by_op``: the same per op type, largest first. Not in TF.

        >>> import gradtape as gt
        >>> x = gt.constant([1.0, 2.0, 3.0])
        >>> with gt.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = gt.reduce_sum(gt.exp(x))
        >>> info = tape.memory_info()
        >>> info["nodes"], info["saved_tensors"], info["bytes"]
        (2, 1, 12)
        >>> info["by_op"]["Exp"]
        {'nodes': 1, 'saved_tensors': 1, 'bytes': 12}
        """
        from . import debugging

        return debugging._tape_memory_info(self)

    def to_dot(self) -> str:
        """The recording in Graphviz's dot language: ops, the shapes and dtypes of
        their tensors, and what each op saved for the backward pass
        (``gt.debugging.plot_tape`` draws it). Not in TF."""
        from . import debugging

        return debugging.to_dot(self)
