"""``gt.from_dlpack``: tensors from any DLPack producer (numpy, PyTorch, JAX, ...).

Export is ``Tensor.__dlpack__`` / ``__dlpack_device__`` (native, no copy): numpy's,
PyTorch's and JAX's ``from_dlpack`` take a ``gt.Tensor`` directly.
"""

from __future__ import annotations

from typing import Any

from . import _gradtape as _native


class _Capsule:
    """A bare DLPack capsule dressed as a producer, for numpy's ``from_dlpack``."""

    def __init__(self, capsule: Any) -> None:
        self._capsule = capsule

    def __dlpack__(self, **_kwargs: Any) -> Any:
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)


def from_dlpack(x: Any) -> _native.Tensor:
    """A tensor from a DLPack producer (an object with ``__dlpack__``, such as a numpy
    array or a CPU PyTorch or JAX array) or a ``"dltensor"`` capsule. The data is
    copied into the engine's own immutable storage (exporting with ``__dlpack__`` is
    what shares memory). TF equivalent: ``tf.experimental.dlpack.from_dlpack``.

    >>> import numpy as np
    >>> import gradtape as gt
    >>> gt.from_dlpack(np.arange(3.0))
    <gt.Tensor: shape=(3,), dtype=float64, numpy=array([0., 1., 2.])>
    >>> np.from_dlpack(gt.constant([1.0, 2.0]))
    array([1., 2.], dtype=float32)
    """
    import numpy as np

    if isinstance(x, _native.Tensor):
        return x
    if type(x).__name__ == "PyCapsule":
        x = _Capsule(x)
    elif not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ or a DLPack capsule, got {type(x).__name__}")
    if hasattr(x, "__dlpack_device__"):
        kind = x.__dlpack_device__()[0]
        if kind != 1:
            raise ValueError(f"from_dlpack: gradtape tensors live on the CPU (DLPack device 1), got device type {kind}")
    a = np.from_dlpack(x)
    return _native.constant(np.array(a, copy=True))
