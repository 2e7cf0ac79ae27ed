"""Safetensors files: a name → tensor mapping to bytes or a file, and back.

The primitive under ``gt.io``, checkpoints and SavedModels, with the names of the
``safetensors`` package's numpy API (``safetensors.numpy.save_file`` ...): files
written here load there and the other way round. The Rust side is ``gradtape::io``;
``docs/saved_model.md`` describes the format and its dtypes.

- ``save(tensors, metadata=None) -> bytes`` and ``save_file(tensors, filename,
  metadata=None)``: ``tensors`` maps ``str`` names to anything ``gt.convert_to_tensor``
  takes (``gt.Tensor``, ``gt.Variable`` (its current value), numpy arrays, lists);
  ``metadata`` is a ``dict[str, str]`` stored in the header's ``__metadata__``. A file
  is written to a temporary file beside it and renamed over it (never half-written).
- ``load(data) -> dict[str, gt.Tensor]`` and ``load_file(filename)``: the tensors in
  file order; ``load_file_with_metadata`` / ``load_with_metadata`` also return the
  metadata dict.

Every dtype of gradtape is stored as safetensors' own (``complex128``, which safetensors
lacks, as float64 pairs marked in the metadata). Bad files raise
``gt.errors.DataLossError`` (a ``ValueError``) naming what is wrong; missing files
``FileNotFoundError``.

>>> import gradtape as gt
>>> from gradtape import _safetensors as st
>>> data = st.save({"w": gt.constant([[1.0, 2.0]]), "step": gt.constant(3, dtype=gt.int64)})
>>> loaded = st.load(data)
>>> sorted(loaded), loaded["w"].numpy().tolist(), loaded["step"].dtype
(['step', 'w'], [[1.0, 2.0]], gt.int64)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from . import _gradtape
from ._gradtape import Tensor

__all__ = ["load", "load_file", "load_file_with_metadata", "load_with_metadata", "save", "save_file"]


def _metadata(metadata: Mapping[str, str] | None) -> dict[str, str] | None:
    if metadata is None:
        return None
    if not isinstance(metadata, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        raise TypeError("metadata must be a mapping of str to str")
    return dict(metadata)


def save(tensors: Mapping[str, Any], metadata: Mapping[str, str] | None = None) -> bytes:
    """The bytes of a safetensors file holding ``tensors``."""
    return _gradtape._safetensors_save(tensors, _metadata(metadata))


def save_file(
    tensors: Mapping[str, Any], filename: str | os.PathLike[str], metadata: Mapping[str, str] | None = None
) -> None:
    """Writes ``tensors`` to the safetensors file ``filename``."""
    _gradtape._safetensors_save_file(tensors, os.fspath(filename), _metadata(metadata))


def load_with_metadata(data: bytes) -> tuple[dict[str, Tensor], dict[str, str]]:
    """The tensors and metadata of safetensors ``data``."""
    return _gradtape._safetensors_load(bytes(memoryview(data)))


def load(data: bytes) -> dict[str, Tensor]:
    """The tensors of safetensors ``data``, in file order."""
    return load_with_metadata(data)[0]


def load_file_with_metadata(filename: str | os.PathLike[str]) -> tuple[dict[str, Tensor], dict[str, str]]:
    """The tensors and metadata of the safetensors file ``filename``."""
    return _gradtape._safetensors_load_file(os.fspath(filename))


def load_file(filename: str | os.PathLike[str]) -> dict[str, Tensor]:
    """The tensors of the safetensors file ``filename``, in file order."""
    return load_file_with_metadata(filename)[0]
