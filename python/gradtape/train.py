"""Checkpoints: the values of a model's variables and an optimizer's state, saved and
restored. TF equivalent: ``tf.train``.

``gt.train.Checkpoint(model=model, optimizer=opt)`` saves every variable reachable from
its keyword arguments (modules and layers are walked as ``gt.Module.variables`` walks
them; an optimizer contributes its step counter and its slots, e.g. Adam's ``m`` and
``v``), under names made of the attribute path (``model/dense/kernel``). ``restore``
assigns the saved values to the variables found at the same paths (and creates an
optimizer's slots), so a training run stopped and resumed from a checkpoint continues
exactly as if it had not stopped. Restoring before a lazily built model has its variables
(a Keras model or layer built on its first call) defers, as TF's: each saved value is
assigned when its variable is created (when the layer that makes it builds, before it
computes, or when a plain module sets it on the attribute), and the returned status's
``assert_consumed`` holds once all are. As in TF, the global seed's state is not part of a
checkpoint (a model that draws with ``gt.random.normal`` or dropout resumes with other
draws unless it seeds them itself), but a ``gt.random.Generator`` among the objects is:
its state is a variable.

A checkpoint is one safetensors file, ``<prefix>.safetensors``, with metadata
``{"format": "gradtape.checkpoint", "version": "1"}``; a directory's ``checkpoint`` file
(JSON) names its latest checkpoints (``docs/saved_model.md``).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from . import _safetensors
from ._gradtape import Variable as _NativeVariable
from ._module import Module
from ._variable import Variable

__all__ = [
    "Checkpoint", "CheckpointManager", "CheckpointReader", "checkpoints_iterator", "get_checkpoint_state",
    "latest_checkpoint", "list_variables", "load_checkpoint", "load_variable",
]

FORMAT = "gradtape.checkpoint"
VERSION = "1"
_SUFFIX = ".safetensors"
_SLOT = ".OPTIMIZER_SLOT"
_STATE_FILE = "checkpoint"


def _is_optimizer(x: Any) -> bool:
    from .optimizers._base import Optimizer

    return isinstance(x, Optimizer)


def _private_parts(path: tuple[str, ...]) -> int:
    return sum(p.startswith("_") for p in path)


class _Walk:
    """The variables (each under its best path) and optimizers reachable from roots."""

    def __init__(self, roots: Mapping[str, Any]) -> None:
        self.paths: dict[int, tuple[tuple[str, ...], _NativeVariable]] = {}
        self.optimizers: list[tuple[tuple[str, ...], Any]] = []
        for name in sorted(roots):
            self._visit(roots[name], (name,), set())

    def _offer(self, path: tuple[str, ...], v: _NativeVariable) -> None:
        old = self.paths.get(id(v))
        # One name per variable: the path with the fewest private attributes, then the
        # shortest (``dense/kernel`` rather than ``dense/_weights/0``).
        if old is None or (_private_parts(path), len(path), path) < (_private_parts(old[0]), len(old[0]), old[0]):
            self.paths[id(v)] = (path, v)

    def _visit(self, x: Any, path: tuple[str, ...], active: set[int]) -> None:
        if isinstance(x, _NativeVariable):
            self._offer(path, x)
            return
        if id(x) in active:
            return
        if isinstance(x, (list, tuple)):
            items: Any = [(str(i), y) for i, y in enumerate(x)]
        elif isinstance(x, Mapping):
            items = [(str(k), x[k]) for k in sorted(x, key=str)]
        elif isinstance(x, Checkpoint):
            items = sorted(x._children.items())
        elif _is_optimizer(x):
            if not any(o is x for _, o in self.optimizers):
                self.optimizers.append((path, x))
            items = [("iterations", x.iterations)]
        elif isinstance(x, Module):
            items = [(k, vars(x)[k]) for k in sorted(vars(x)) if k not in x._TF_MODULE_IGNORED_PROPERTIES]
        else:
            return
        active.add(id(x))
        for k, y in items:
            self._visit(y, path + (k,), active)
        active.discard(id(x))

    def named_variables(self) -> dict[str, _NativeVariable]:
        return {"/".join(p): v for p, v in self.paths.values()}


def _slot_name(opt_path: tuple[str, ...], var_path: str, key: str) -> str:
    return "/".join(opt_path) + f"/{_SLOT}/{var_path}/{key}"


def _load(path: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The tensors and metadata of the checkpoint file ``path``; a missing file raises
    ``gt.errors.NotFoundError`` (TF's error and message)."""
    try:
        return _safetensors.load_file_with_metadata(path)
    except FileNotFoundError:
        from .errors import NotFoundError

        msg = f"Unsuccessful TensorSliceReader constructor: Failed to find any matching files for {_strip(path)}"
        raise NotFoundError(None, None, msg) from None


def _prefix_file(path: str | os.PathLike[str]) -> str:
    path = os.fspath(path)
    return path if path.endswith(_SUFFIX) else path + _SUFFIX


def _strip(path: str) -> str:
    return path[: -len(_SUFFIX)] if path.endswith(_SUFFIX) else path


class CheckpointLoadStatus:
    """What a ``restore`` matched, as of now (values of a deferred restore are consumed
    as their variables are created). TF equivalent: the status ``Checkpoint.restore``
    returns."""

    def __init__(
        self, unused: list[str] | Callable[[], tuple[list[str], list[str]]], unmatched: list[str] | None = None
    ) -> None:
        if callable(unused):
            self._state = unused
        else:
            fixed = (list(unused), list(unmatched or []))
            self._state = lambda: fixed

    def assert_consumed(self) -> CheckpointLoadStatus:
        """Raises ``AssertionError`` unless every saved value was restored (a deferred
        value counts once its variable exists and has it) and every variable of the
        objects got a value."""
        unused, _ = self._state()
        if unused:
            raise AssertionError(f"Unresolved values in the checkpoint: {unused}")
        return self.assert_existing_objects_matched()

    def assert_existing_objects_matched(self) -> CheckpointLoadStatus:
        """Raises ``AssertionError`` if a variable of the objects has no saved value."""
        _, unmatched = self._state()
        if unmatched:
            raise AssertionError(f"Variables with no value in the checkpoint: {unmatched}")
        return self

    def expect_partial(self) -> CheckpointLoadStatus:
        """Silences the checks (a partial restore is intended)."""
        return self


class Checkpoint:
    """Saves and restores variables and optimizer state. TF equivalent:
    ``tf.train.Checkpoint``.

    >>> import gradtape as gt, tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> v = gt.Variable(1.0)
    >>> ckpt = gt.train.Checkpoint(v=v)
    >>> path = ckpt.save(os.path.join(d, "ckpt"))
    >>> os.path.basename(path)
    'ckpt-1'
    >>> _ = v.assign(5.0)
    >>> _ = ckpt.restore(path).assert_consumed()
    >>> float(v)
    1.0
    """

    def __init__(self, root: Any = None, **kwargs: Any) -> None:
        children = dict(kwargs)
        if root is not None:
            children["root"] = root
        for k, x in children.items():
            if x is None or not (
                isinstance(x, (_NativeVariable, Module, Checkpoint, list, tuple, dict)) or _is_optimizer(x)
            ):
                raise ValueError(
                    f"`Checkpoint` was expecting a trackable object (a Module, layer, Variable, "
                    f"optimizer or Checkpoint) for {k!r}, got {x!r}."
                )
        self._children = children
        self._save_counter: Variable | None = None

    def __getattr__(self, name: str) -> Any:
        children = self.__dict__.get("_children", {})
        if name in children:
            return children[name]
        raise AttributeError(name)

    @property
    def save_counter(self) -> Variable:
        """How many times ``save`` ran (saved and restored with the checkpoint)."""
        if self._save_counter is None:
            self._save_counter = Variable(0, trainable=False, name="save_counter", dtype="int64")
        return self._save_counter

    def _values(self) -> tuple[dict[str, Any], _Walk]:
        # The counter is written once it exists (``save`` or a read of ``save_counter``
        # makes it), as TF: ``write`` alone saves only the objects' own variables.
        children = dict(self._children)
        if self._save_counter is not None:
            children["save_counter"] = self._save_counter
        walk = _Walk(children)
        named = walk.named_variables()
        by_id = {id(v): n for n, v in named.items()}
        tensors: dict[str, Any] = dict(named)
        for opt_path, opt in walk.optimizers:
            for v_id, slots in opt._slots.items():
                v = next((v for v in named.values() if v._unique_id == v_id), None)
                if v is None:
                    continue  # a variable the checkpoint does not hold
                for key, slot in slots.items():
                    tensors[_slot_name(opt_path, by_id[id(v)], key)] = slot
        return tensors, walk

    def write(self, file_prefix: str | os.PathLike[str]) -> str:
        """Writes the checkpoint to ``file_prefix`` (as ``<file_prefix>.safetensors``);
        returns ``file_prefix``."""
        tensors, _ = self._values()
        path = _prefix_file(file_prefix)
        d = os.path.dirname(path)
        if d:
            os.makedirs(d, exist_ok=True)
        meta = {"format": FORMAT, "version": VERSION, _GRAPH_META: json.dumps(_object_graph(tensors))}
        _safetensors.save_file(tensors, path, meta)
        return _strip(path)

    def save(self, file_prefix: str | os.PathLike[str]) -> str:
        """Writes ``<file_prefix>-<n>`` (``n`` the new ``save_counter``), records it as
        the directory's latest checkpoint, and returns that path."""
        self.save_counter.assign_add(1)
        path = self.write(f"{os.fspath(file_prefix)}-{int(self.save_counter.numpy())}")
        _record_state(os.path.dirname(path) or ".", path, None)
        return path

    def read(self, save_path: str | os.PathLike[str]) -> CheckpointLoadStatus:
        """Restores from ``save_path`` (a path ``save`` or ``write`` returned)."""
        return self.restore(save_path)

    def restore(self, save_path: str | os.PathLike[str] | None) -> CheckpointLoadStatus:
        """Assigns the values saved at ``save_path`` to the variables at the same paths
        (``None``: nothing to restore). Every value is read and checked before any
        variable changes: a bad or mismatched file changes nothing."""
        if save_path is None:
            return CheckpointLoadStatus([], [])
        saved, meta = _load(_prefix_file(save_path))
        from .errors import DataLossError

        if meta.get("format") != FORMAT:
            raise DataLossError(f"{save_path}: not a gradtape checkpoint (metadata {meta})")
        if meta.get("version") != VERSION:
            raise DataLossError(
                f"{save_path}: unsupported checkpoint version {meta.get('version')!r} (this gradtape reads {VERSION})"
            )
        if "save_counter" in saved:
            self.save_counter  # noqa: B018  (made now, so the saved count is restored)
        tensors, walk = self._values()
        named = walk.named_variables()
        plan: list[tuple[Any, Any]] = []
        used = set()
        for name, v in named.items():
            if name in saved:
                plan.append((v, saved[name]))
                used.add(name)
        new_slots = []
        for opt_path, opt in walk.optimizers:
            head = "/".join(opt_path) + f"/{_SLOT}/"
            for name, value in saved.items():
                if not name.startswith(head):
                    continue
                var_path, _, key = name[len(head):].rpartition("/")
                target = named.get(var_path)
                if target is None:
                    continue
                v = target
                used.add(name)
                slot = opt._slots.get(v._unique_id, {}).get(key)
                if slot is None:
                    new_slots.append((opt, v, key, value))
                else:
                    plan.append((slot, value))
        for v, value in plan:
            if tuple(v.shape) != tuple(value.shape) or v.dtype != value.dtype:
                raise ValueError(
                    f"Checkpoint value for {v.name} is {value.dtype.name} {tuple(value.shape)} but the variable "
                    f"is {v.dtype.name} {tuple(v.shape)}"
                )
        for v, value in plan:
            v.assign(value)
        for opt, v, key, value in new_slots:
            _make_slot(opt, v, key, value)
        pending = _Deferred(self, {n: saved[n] for n in saved if n not in used}, set(saved))
        if pending.values:
            _PENDING.append(pending)
        return CheckpointLoadStatus(pending.state)


_GRAPH_META = "object_graph"
_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"


def _object_graph(tensors: Mapping[str, Any]) -> dict[str, Any]:
    """The objects of a checkpoint as TF's ``TrackableObjectGraph`` holds them (its
    fields, as JSON): node 0 the root; each node's named children, its saved value
    (``attributes``: TF's ``VARIABLE_VALUE`` with its checkpoint key) and, for an
    optimizer, its slot variables."""
    nodes: list[dict[str, Any]] = [{"children": [], "attributes": [], "slot_variables": []}]
    ids: dict[tuple[str, ...], int] = {(): 0}

    def node(path: tuple[str, ...]) -> int:
        if path not in ids:
            parent = node(path[:-1])
            ids[path] = len(nodes)
            nodes.append({"children": [], "attributes": [], "slot_variables": []})
            nodes[parent]["children"].append({"node_id": ids[path], "local_name": path[-1]})
        return ids[path]

    def value(n: int, name: str, t: Any) -> None:
        full = getattr(t, "name", name).split(":")[0]
        nodes[n]["attributes"].append(
            {"name": "VARIABLE_VALUE", "full_name": full, "checkpoint_key": _tf_key(name)}
        )

    slots = []
    for name in sorted(tensors):
        head, sep, rest = name.partition(f"/{_SLOT}/")
        if sep:
            slots.append((name, head, rest))
        else:
            value(node(tuple(name.split("/"))), name, tensors[name])
    for name, head, rest in slots:
        var_path, _, slot = rest.rpartition("/")
        n = len(nodes)
        nodes.append({"children": [], "attributes": [], "slot_variables": []})
        value(n, name, tensors[name])
        nodes[node(tuple(head.split("/")))]["slot_variables"].append(
            {"original_variable_node_id": node(tuple(var_path.split("/"))), "slot_name": slot,
             "slot_variable_node_id": n}
        )
    return {"nodes": nodes}


def _make_slot(opt: Any, v: Any, key: str, value: Any) -> None:
    name = f"{v.name.split(':')[0]}/{key}"
    opt._slots.setdefault(v._unique_id, {})[key] = Variable(value, trainable=False, name=name)


class _Deferred:
    """The values of a restore that no variable took yet: assigned when their variables
    appear (``_on_variables_created``). It keeps the checkpoint's objects (as TF's
    deferred dependencies keep theirs) until every value found its variable."""

    def __init__(self, ckpt: Checkpoint, values: dict[str, Any], names: set[str]) -> None:
        self.ckpt = ckpt
        self.values = values
        self.names = names  # every name of the file

    def state(self) -> tuple[list[str], list[str]]:
        named = self.ckpt._values()[1].named_variables()
        return sorted(self.values), sorted(n for n in named if n not in self.names)

    def apply(self) -> None:
        _, walk = self.ckpt._values()
        named = walk.named_variables()
        for name in [n for n in self.values if n in named]:
            # Taken whatever happens: a value that does not fit raises once.
            v, value = named[name], self.values.pop(name)
            if tuple(v.shape) != tuple(value.shape) or v.dtype != value.dtype:
                raise ValueError(
                    f"Checkpoint value for {v.name} is {value.dtype.name} {tuple(value.shape)} but the variable "
                    f"is {v.dtype.name} {tuple(v.shape)}"
                )
            v.assign(value)
        for opt_path, opt in walk.optimizers:
            head = "/".join(opt_path) + f"/{_SLOT}/"
            for name in [n for n in self.values if n.startswith(head)]:
                var_path, _, key = name[len(head):].rpartition("/")
                target = named.get(var_path)
                if target is None:
                    continue
                value = self.values.pop(name)
                slot = opt._slots.get(target._unique_id, {}).get(key)
                if slot is None:
                    _make_slot(opt, target, key, value)
                else:
                    slot.assign(value)


# Restores waiting for variables (few, and emptied as they complete).
_PENDING: list[_Deferred] = []


def _on_variables_created() -> None:
    """Called when a layer has built its variables: deferred restores take theirs."""
    if not _PENDING:
        return
    for d in list(_PENDING):
        try:
            d.apply()
        except Exception:
            # A value that does not fit its variable ends that restore (raised here,
            # where the variable appeared, not again in unrelated code).
            d.values.clear()
            raise
        finally:
            if not d.values and d in _PENDING:
                _PENDING.remove(d)


def _state_path(directory: str) -> str:
    return os.path.join(directory, _STATE_FILE)


def _read_state(directory: str) -> dict[str, Any] | None:
    try:
        with open(_state_path(directory), encoding="utf-8") as f:
            state = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(state, dict) or not isinstance(state.get("model_checkpoint_path"), str):
        return None
    return state


def _record_state(directory: str, latest: str, all_paths: list[str] | None) -> None:
    state = _read_state(directory) or {}
    paths = list(state.get("all_model_checkpoint_paths", [])) if all_paths is None else list(all_paths)
    rel = os.path.relpath(latest, directory)
    if all_paths is None:
        paths = [p for p in paths if p != rel] + [rel]
    else:
        paths = [os.path.relpath(p, directory) for p in paths]
    tmp = _state_path(directory) + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"model_checkpoint_path": rel, "all_model_checkpoint_paths": paths}, f, indent=1)
    os.replace(tmp, _state_path(directory))


def latest_checkpoint(checkpoint_dir: str | os.PathLike[str]) -> str | None:
    """The path of the newest checkpoint saved in ``checkpoint_dir`` (``None`` if none).
    TF equivalent: ``tf.train.latest_checkpoint``."""
    d = os.fspath(checkpoint_dir)
    state = _read_state(d)
    if state is None:
        return None
    path = os.path.join(d, state["model_checkpoint_path"])
    return path if os.path.exists(_prefix_file(path)) else None


class CheckpointManager:
    """Numbered checkpoints in a directory, keeping the newest ``max_to_keep``.
    TF equivalent: ``tf.train.CheckpointManager``."""

    def __init__(
        self,
        checkpoint: Checkpoint,
        directory: str | os.PathLike[str],
        max_to_keep: int | None,
        keep_checkpoint_every_n_hours: float | None = None,
        checkpoint_name: str = "ckpt",
        step_counter: Any = None,
        checkpoint_interval: int | None = None,
        init_fn: Any = None,
    ) -> None:
        if not isinstance(checkpoint, Checkpoint):
            raise TypeError(f"CheckpointManager expects a gt.train.Checkpoint, got {type(checkpoint).__name__}")
        if max_to_keep is not None and (not isinstance(max_to_keep, int) or max_to_keep <= 0):
            raise ValueError(f"max_to_keep must be a positive integer or None, got {max_to_keep!r}")
        if checkpoint_interval is not None and step_counter is None:
            raise ValueError("`step_counter` should be passed if `checkpoint_interval` is not None.")
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._keep_hours = keep_checkpoint_every_n_hours
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._step_counter = step_counter
        self._interval = checkpoint_interval
        self._init_fn = init_fn
        self._last_kept = time.time()
        self._last_step: int | None = None
        state = _read_state(self._directory)
        self._checkpoints: list[str] = []
        if state is not None:
            for p in state.get("all_model_checkpoint_paths", []):
                full = os.path.join(self._directory, p)
                if isinstance(p, str) and os.path.exists(_prefix_file(full)):
                    self._checkpoints.append(full)

    @property
    def directory(self) -> str:
        return self._directory

    @property
    def checkpoints(self) -> list[str]:
        """The paths of the kept checkpoints, oldest first."""
        return list(self._checkpoints)

    @property
    def latest_checkpoint(self) -> str | None:
        """The newest checkpoint's path (``None`` before the first save)."""
        return self._checkpoints[-1] if self._checkpoints else None

    @property
    def checkpoint_interval(self) -> int | None:
        return self._interval

    def save(self, checkpoint_number: int | None = None, check_interval: bool = True) -> str | None:
        """Saves a checkpoint numbered ``checkpoint_number`` (default: the checkpoint's
        ``save_counter``), deletes the oldest beyond ``max_to_keep``, and returns its
        path (``None`` if ``checkpoint_interval`` steps have not passed)."""
        if self._interval is not None and check_interval:
            step = int(self._step_counter.numpy() if hasattr(self._step_counter, "numpy") else self._step_counter)
            if self._last_step is not None and step < self._last_step + self._interval:
                return None
            self._last_step = step
        ckpt = self._checkpoint
        ckpt.save_counter.assign_add(1)
        n = int(ckpt.save_counter.numpy()) if checkpoint_number is None else int(checkpoint_number)
        path = ckpt.write(f"{self._prefix}-{n}")
        self._checkpoints = [p for p in self._checkpoints if p != path] + [path]
        if self._max_to_keep is not None:
            while len(self._checkpoints) > self._max_to_keep:
                old = self._checkpoints.pop(0)
                keep = self._keep_hours is not None and time.time() - self._last_kept >= self._keep_hours * 3600
                if keep:
                    self._last_kept = time.time()
                    continue
                try:
                    os.remove(_prefix_file(old))
                except FileNotFoundError:
                    pass
        _record_state(self._directory, path, self._checkpoints)
        return path

    def restore_or_initialize(self) -> str | None:
        """Restores the latest checkpoint if there is one (returning its path), else
        calls ``init_fn`` (if given) and returns ``None``."""
        if self.latest_checkpoint is not None:
            self._checkpoint.restore(self.latest_checkpoint)
            return self.latest_checkpoint
        if self._init_fn is not None:
            self._init_fn()
        return None


# --- Reading checkpoints (issue 15): TF's ``tf.train`` readers -----------------------------
#
# Names are given as TF names the values of an object-based checkpoint: a variable at
# attribute path ``model/dense/kernel`` is ``model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE``;
# an optimizer slot ``m`` of it is ``model/dense/kernel/.OPTIMIZER_SLOT/optimizer/m/
# .ATTRIBUTES/VARIABLE_VALUE``. The paths are gradtape's attribute paths (TF's Keras
# models name their layers ``layer_with_weights-0`` instead). The object graph is
# ``_CHECKPOINTABLE_OBJECT_GRAPH``, a scalar string as TF's: TF's ``TrackableObjectGraph``
# fields as JSON (the file's ``object_graph`` metadata), not TF's protobuf. Readers also
# take gradtape's own names (``model/dense/kernel``).

_ATTR = "/.ATTRIBUTES/VARIABLE_VALUE"


def _tf_key(name: str) -> str:
    """The TF key of a gradtape checkpoint name."""
    head, sep, rest = name.partition(f"/{_SLOT}/")
    if sep:
        var_path, _, slot = rest.rpartition("/")
        return f"{var_path}/{_SLOT}/{head}/{slot}{_ATTR}"
    return name + _ATTR


def _checkpoint_file(ckpt_dir_or_file: str | os.PathLike[str]) -> str:
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = latest_checkpoint(path)
        if latest is None:
            raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given directory {path}")
        path = latest
    return _prefix_file(path)


class CheckpointReader:
    """The values of one checkpoint file by name (TF's names, or gradtape's).
    TF equivalent: the reader ``tf.train.load_checkpoint`` returns."""

    def __init__(self, path: str) -> None:
        from .errors import DataLossError

        tensors, meta = _load(path)
        if meta.get("format") != FORMAT:
            raise DataLossError(f"{path}: not a gradtape checkpoint (metadata {meta})")
        self._path = path
        self._tensors = {_tf_key(n): t for n, t in tensors.items()}
        self._own = {n: _tf_key(n) for n in tensors}
        # TF's serialized object graph is a scalar string: here the JSON of the metadata
        # (files written before it was kept have none).
        self._graph = meta.get(_GRAPH_META)

    def _key(self, name: str) -> str:
        if name in self._tensors or (name == _GRAPH_KEY and self._graph is not None):
            return name
        if name in self._own:
            return self._own[name]
        from .errors import NotFoundError

        raise NotFoundError(None, None, f"Key {name} not found in checkpoint")

    def has_tensor(self, name: str) -> bool:
        """Whether the checkpoint holds ``name``."""
        return name in self._tensors or name in self._own or (name == _GRAPH_KEY and self._graph is not None)

    def get_tensor(self, name: str) -> Any:
        """The value saved under ``name``, as a numpy array (the object graph: its
        serialized form, ``bytes``, as TF's)."""
        key = self._key(name)
        if key == _GRAPH_KEY and key not in self._tensors:
            return str(self._graph).encode()
        return self._tensors[key].numpy()

    def get_variable_to_shape_map(self) -> dict[str, list[int]]:
        """``{name: shape}`` for every value."""
        shapes = {n: list(t.shape) for n, t in self._tensors.items()}
        if self._graph is not None:
            shapes[_GRAPH_KEY] = []
        return shapes

    def get_variable_to_dtype_map(self) -> dict[str, Any]:
        """``{name: dtype}`` for every value."""
        dtypes: dict[str, Any] = {n: t.dtype for n, t in self._tensors.items()}
        if self._graph is not None:
            from . import dtypes as _dtypes

            dtypes[_GRAPH_KEY] = _dtypes.string
        return dtypes


def load_checkpoint(ckpt_dir_or_file: str | os.PathLike[str]) -> CheckpointReader:
    """A reader of a checkpoint (a directory: its latest). TF equivalent:
    ``tf.train.load_checkpoint``."""
    return CheckpointReader(_checkpoint_file(ckpt_dir_or_file))


def list_variables(ckpt_dir_or_file: str | os.PathLike[str]) -> list[tuple[str, list[int]]]:
    """``(name, shape)`` of every value of a checkpoint, sorted by name. TF equivalent:
    ``tf.train.list_variables``.

    >>> import gradtape as gt, tempfile, os
    >>> path = gt.train.Checkpoint(v=gt.Variable([1.0, 2.0])).write(os.path.join(tempfile.mkdtemp(), "c"))
    >>> gt.train.list_variables(path)
    [('_CHECKPOINTABLE_OBJECT_GRAPH', []), ('v/.ATTRIBUTES/VARIABLE_VALUE', [2])]
    """
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return sorted(shapes.items())


def load_variable(ckpt_dir_or_file: str | os.PathLike[str], name: str) -> Any:
    """The value saved under ``name`` (TF's key or gradtape's path), a numpy array.
    TF equivalent: ``tf.train.load_variable``."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


class CheckpointState:
    """A directory's latest checkpoint and the kept ones (full paths). TF equivalent: the
    ``CheckpointState`` that ``tf.train.get_checkpoint_state`` returns."""

    def __init__(self, latest: str, all_paths: list[str]) -> None:
        self.model_checkpoint_path = latest
        self.all_model_checkpoint_paths = all_paths

    def __repr__(self) -> str:
        return (f"CheckpointState(model_checkpoint_path={self.model_checkpoint_path!r}, "
                f"all_model_checkpoint_paths={self.all_model_checkpoint_paths!r})")


def get_checkpoint_state(
    checkpoint_dir: str | os.PathLike[str], latest_filename: str | None = None
) -> CheckpointState | None:
    """The directory's ``checkpoint`` file, or ``None`` if there is none. TF equivalent:
    ``tf.train.get_checkpoint_state``."""
    d = os.fspath(checkpoint_dir)
    if latest_filename is not None and latest_filename != _STATE_FILE:
        raise ValueError(
            f"gradtape keeps a directory's state in {_STATE_FILE!r}, got latest_filename={latest_filename!r}"
        )
    state = _read_state(d)
    if state is None:
        return None

    def full(p: str) -> str:
        return p if os.path.isabs(p) else os.path.join(d, p)

    paths = [full(p) for p in state.get("all_model_checkpoint_paths", []) if isinstance(p, str)]
    return CheckpointState(full(state["model_checkpoint_path"]), paths)


def checkpoints_iterator(
    checkpoint_dir: str | os.PathLike[str],
    min_interval_secs: float = 0,
    timeout: float | None = None,
    timeout_fn: Callable[[], bool] | None = None,
) -> Any:
    """Yields each new latest checkpoint of ``checkpoint_dir`` as it appears, waiting at
    least ``min_interval_secs`` between them. With ``timeout`` (seconds), a wait that long
    without a new checkpoint calls ``timeout_fn`` (the iteration ends when it returns true,
    or when there is none). TF equivalent: ``tf.train.checkpoints_iterator``."""
    d = os.fspath(checkpoint_dir)
    last: str | None = None
    while True:
        start = time.time()
        while True:
            path = latest_checkpoint(d)
            if path is not None and path != last:
                break
            if timeout is not None and time.time() - start + 0.05 > timeout:
                path = None
                break
            time.sleep(0.05 if timeout is None else min(0.05, max(timeout / 10, 0.001)))
        if path is None:
            if timeout_fn is None or timeout_fn():
                return
            continue
        last = path
        yielded = time.time()
        yield path
        wait = yielded + min_interval_secs - time.time()
        if wait > 0:
            time.sleep(wait)
