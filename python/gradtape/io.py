"""``gt.io``: a model's weights to a safetensors file and back.

Built on the safetensors primitive (``gradtape._safetensors``): files are plain
safetensors, so PyTorch and JAX tools (``safetensors.numpy``, ``safetensors.torch``)
read what ``save_weights`` writes and ``load_weights`` reads what they write. A model's
weights are stored under their variable names without the ``:0`` suffix
(``dense/kernel``), as Keras names them in its weight files.

>>> import gradtape as gt, os, tempfile
>>> w = gt.Variable([[1.0, 2.0]], name="w")
>>> path = os.path.join(tempfile.mkdtemp(), "weights.safetensors")
>>> gt.io.save_weights(path, {"w": w})
>>> _ = w.assign([[0.0, 0.0]])
>>> _ = gt.io.load_weights(path, {"w": w})
>>> w.numpy().tolist()
[[1.0, 2.0]]
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from . import _gradtape, _safetensors

__all__ = ["load_weights", "save_weights"]


def _named(model_or_dict: Any) -> dict[str, Any]:
    """``name -> tensor or variable`` of a mapping, or of a model's variables."""
    if isinstance(model_or_dict, Mapping):
        for k in model_or_dict:
            if not isinstance(k, str):
                raise TypeError(f"weight names must be str, got {type(k).__name__}")
        return dict(model_or_dict)
    variables = getattr(model_or_dict, "variables", None)
    if variables is None:
        raise TypeError(
            f"expected a gt.Module / layer (something with .variables) or a dict of name -> tensor, "
            f"got {type(model_or_dict).__name__}"
        )
    out: dict[str, Any] = {}
    for v in variables:
        name = v.name[:-2] if v.name.endswith(":0") else v.name
        if name in out:
            raise ValueError(f"two variables of the model are named {name!r}: give them distinct names")
        out[name] = v
    return out


def save_weights(path: str | os.PathLike[str], model_or_dict: Any, metadata: Mapping[str, str] | None = None) -> None:
    """Writes the weights of ``model_or_dict`` (a ``gt.Module`` or layer: its
    ``variables``; or a mapping of names to tensors, variables or arrays) to the
    safetensors file ``path``. Keras equivalent: ``Model.save_weights`` (in the
    safetensors format rather than HDF5)."""
    _safetensors.save_file(_named(model_or_dict), path, metadata)


def load_weights(path: str | os.PathLike[str], model_or_dict: Any = None) -> dict[str, _gradtape.Tensor]:
    """Reads the safetensors file ``path`` and returns its tensors by name. Given a
    model (or a mapping of names to ``gt.Variable``s), also assigns each of its
    variables the tensor of the same name: every variable must be in the file with its
    shape and dtype (``ValueError`` naming the first that is not; nothing is assigned
    then). Keras equivalent: ``Model.load_weights``."""
    loaded = _safetensors.load_file(path)
    if model_or_dict is None:
        return loaded
    targets = _named(model_or_dict)
    plan = []
    for name, var in targets.items():
        if not isinstance(var, _gradtape.Variable):
            raise TypeError(f"load_weights assigns Variables; {name!r} is a {type(var).__name__}")
        if name not in loaded:
            raise ValueError(f"{os.fspath(path)!r} has no weight named {name!r} (it has {sorted(loaded)})")
        t = loaded[name]
        if tuple(t.shape) != tuple(var.shape) or t.dtype != var.dtype:
            raise ValueError(
                f"weight {name!r}: the file has shape {tuple(t.shape)} {t.dtype.name}, "
                f"the variable {tuple(var.shape)} {var.dtype.name}"
            )
        plan.append((var, t))
    for var, t in plan:
        var.assign(t)
    return loaded
