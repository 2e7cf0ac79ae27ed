"""SavedModels: a module's traced functions and variables, on disk, loadable in a fresh
process (or from Rust) without the Python code that defined them. TF equivalent:
``tf.saved_model``.

``save(obj, export_dir)`` writes every ``gt.function`` reachable from ``obj`` (methods
and attributes, in nested modules, lists and dicts) that has an input signature or
was already traced, every variable it reaches, and the object tree. ``load`` gives back
an object with the same attributes: variables (restored, trainable), submodules, and
functions that run the saved graphs and are differentiable under tapes. Custom gradients
are saved as traced gradient graphs when ``SaveOptions(experimental_custom_gradients=True)``
(the default, as in TF); without it, differentiating through one in a process that
loaded the model raises TF's ``LookupError``.

The directory holds ``saved_model.json``, ``variables.safetensors`` and
``constants.safetensors``; ``docs/saved_model.md`` describes the format. Loading runs no
Python code from the files (there is none), and a bad directory raises before anything
is built (``gt.errors.DataLossError`` naming what is wrong, or ``OSError``).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from typing import Any

import numpy as np

from . import _gradtape as _native
from . import _custom_gradient, _nest, _safetensors
from ._function import ConcreteFunction, Function, TensorSpec
from ._gradtape import Tensor
from ._gradtape import Variable as _NativeVariable
from ._module import Module
from ._variable import Variable

__all__ = ["SaveOptions", "load", "save"]

FORMAT = "gradtape.saved_model"
VERSION = 2


class SaveOptions:
    """Options of ``save``. TF equivalent: ``tf.saved_model.SaveOptions``.

    ``experimental_custom_gradients`` (default True): save each custom gradient as a
    traced graph, so the loaded functions differentiate with it."""

    def __init__(
        self,
        namespace_whitelist: Any = None,
        save_debug_info: bool = False,
        function_aliases: Any = None,
        experimental_io_device: Any = None,
        experimental_variable_policy: Any = None,
        experimental_custom_gradients: bool = True,
        experimental_image_format: bool = False,
        experimental_skip_saver: bool = False,
        experimental_sharding_callback: Any = None,
        extra_tags: Any = None,
    ) -> None:
        self.namespace_whitelist = namespace_whitelist
        self.save_debug_info = save_debug_info
        self.function_aliases = function_aliases
        self.experimental_custom_gradients = bool(experimental_custom_gradients)


# ------------------------------------------------------------------ tracing for saving

_state = threading.local()


def _saving() -> SaveOptions | None:
    return getattr(_state, "options", None)


def _record_custom_for_saving(inputs: list[Any], flat_y: list[Any], variables: list[Any], callback: Any) -> list[Any]:
    """``gt.custom_gradient`` inside a trace made by ``save``: the gradient function is
    traced too (with the output gradients as arguments), into a graph the node keeps."""
    options = _saving()
    ys = [_custom_gradient._as_tensor(y) for y in flat_y]
    if options is None or not options.experimental_custom_gradients:
        return _native._record_saved_custom(inputs, ys, [], variables, None)

    graph, captured = _custom_gradient._traced_gradient(inputs, ys, variables, callback)
    return _native._record_saved_custom(inputs, ys, captured, variables, graph)


def _retrace(concrete: ConcreteFunction, options: SaveOptions, examples: list[Any] | None = None) -> Any:
    """``concrete``'s function traced again, unoptimized (the graph a file holds), with
    custom gradients traced too; on ``examples`` when given, else on its own."""
    fn = concrete._function
    args, kwargs = concrete._structure
    flat = _nest.flatten((args, kwargs))
    positions = concrete._positions
    if examples is None:
        examples = [flat[i] if isinstance(flat[i], Tensor) else _native.convert_to_tensor(flat[i]) for i in positions]
    func = fn._callable()

    def traced(placeholders: list[Any]) -> list[Any]:
        new_flat = list(flat)
        for i, p in zip(positions, placeholders):
            new_flat[i] = p
        a, kw = _nest.pack_sequence_as((args, kwargs), new_flat)
        out = func(*a, **kw)
        leaves = [v for v in _nest.flatten(out) if isinstance(v, (Tensor, _NativeVariable))]
        return [v.read_value() if isinstance(v, _NativeVariable) else v for v in leaves]

    _state.options = options
    try:
        graph, _ = _native._trace(traced, examples, [(s.dtype, s._dims()) for s in concrete._specs])
    finally:
        _state.options = None
    return graph


def _check_static_sizes(concrete: ConcreteFunction, graph: Any, options: SaveOptions, variables: Any) -> None:
    """Refuses a graph that holds the size its example had in a ``None`` dimension.

    Code that reads a static shape (``x.shape``, ``len(x)``) inside a trace gets the
    example's sizes, and what it computes from them may become constants of the graph.
    A live ``gt.function`` traces again for each new size; a file cannot, so a size read
    there would silently stand for every size. Such a trace is done once more with one
    more element along each ``None`` dimension: a graph that then differs read one.
    """
    specs = concrete._specs
    if not graph.shape_dependent or not any(s._dims() is None or None in s._dims() for s in specs):
        return
    flat = _nest.flatten(concrete._structure)
    examples = []
    for i, spec in zip(concrete._positions, specs):
        x = _native.convert_to_tensor(flat[i])
        dims = spec._dims()
        shape = [n + 1 if dims is None or dims[k] is None else n for k, n in enumerate(x.shape)]
        examples.append(_native.convert_to_tensor(np.resize(x.numpy(), shape).astype(x.numpy().dtype)))
    other = _retrace(concrete, options, examples)
    (text_a,), consts_a = _native._encode_graphs([graph], variables)
    (text_b,), consts_b = _native._encode_graphs([other], variables)
    same = text_a == text_b and len(consts_a) == len(consts_b)
    same = same and all(_same_values(a.numpy(), b.numpy()) for a, b in zip(consts_a, consts_b))
    if not same:
        raise ValueError(
            f"gt.saved_model.save: `{concrete.name}` reads the static size of a None dimension "
            f"of its input signature {specs} (x.shape, len(x)): the saved graph would hold the "
            "traced example's size for every size. Use gt.shape(x) for sizes known only when "
            "the function runs, or give the dimension a size in the signature."
        )


def _same_values(a: Any, b: Any) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


# ------------------------------------------------------------------ the object tree


def _json_leaf(x: Any, what: str) -> Any:
    if x is None or isinstance(x, (bool, int, float, str)):
        return {"value": x}
    raise ValueError(f"gt.saved_model.save: {what} holds a {type(x).__name__}, which cannot be saved")


def _structure(x: Any, counter: list[int], what: str) -> Any:
    """A JSON form of a nest: tensors become ``{"tensor": i}`` in order."""
    if isinstance(x, (Tensor, _NativeVariable, TensorSpec, _TensorMark)):
        counter[0] += 1
        return {"tensor": counter[0] - 1}
    if isinstance(x, dict):
        if not all(isinstance(k, str) for k in x):
            raise ValueError(f"gt.saved_model.save: {what} has a dict with non-string keys")
        return {"dict": {k: _structure(x[k], counter, what) for k in _nest._sorted_keys(x)}}
    if isinstance(x, tuple) and hasattr(type(x), "_fields"):
        return {"tuple": [_structure(v, counter, what) for v in x]}
    if isinstance(x, (list, tuple)):
        return {type(x).__name__: [_structure(v, counter, what) for v in x]}
    return _json_leaf(x, what)


def _output_structure(concrete: ConcreteFunction) -> Any:
    flat = list(_nest.flatten(concrete._outputs))
    if not all(isinstance(k, bool) for k in concrete._out_is_tensor):
        raise ValueError(f"gt.saved_model.save: {concrete.name} returns a gt.IndexedSlices, which cannot be saved")
    it = iter(concrete._out_is_tensor)
    marked = [_TensorMark() if next(it) else v for v in flat]
    return _structure(_nest.pack_sequence_as(concrete._outputs, marked), [0], f"the output of {concrete.name}")


class _TensorMark:
    """Where an output tensor was (the others are Python values)."""


def _concretes(f: Function) -> list[ConcreteFunction]:
    out = []
    if f.input_signature is not None:
        out.append(f.get_concrete_function())
    for c in list(f._cache.values()):
        if not any(c is o for o in out):
            out.append(c)
    return out


class _Saver:
    def __init__(self, options: SaveOptions) -> None:
        self.options = options
        self.objects: list[dict[str, Any]] = []
        self.ids: dict[int, int] = {}
        self.keep: list[Any] = []  # objects indexed by id, kept alive while saving
        self.variables: list[_NativeVariable] = []
        self.var_ids: dict[int, int] = {}
        self.concretes: list[Any] = []
        self.functions: list[dict[str, Any]] = []
        self.fn_ids: dict[int, int] = {}

    def variable(self, v: _NativeVariable) -> int:
        if id(v) not in self.var_ids:
            self.var_ids[id(v)] = len(self.variables)
            self.variables.append(v)
        return self.var_ids[id(v)]

    def concrete(self, c: Any) -> int:
        if id(c) not in self.fn_ids:
            self.fn_ids[id(c)] = len(self.concretes)
            self.concretes.append(c)
        return self.fn_ids[id(c)]

    def obj(self, x: Any) -> int | None:
        """The index of ``x``'s object (``None``: nothing to save in it)."""
        if id(x) in self.ids:
            return self.ids[id(x)]
        if isinstance(x, _NativeVariable):
            entry: dict[str, Any] = {"kind": "variable", "variable": self.variable(x)}
        elif isinstance(x, Function):
            cs = _concretes(x)
            if not cs:
                return None
            entry = {"kind": "function", "functions": [self.concrete(c) for c in cs]}
        elif isinstance(x, ConcreteFunction):
            entry = {"kind": "function", "functions": [self.concrete(x)]}
        elif isinstance(x, _LoadedFunction):
            entry = {"kind": "function", "functions": [self.concrete(c) for c in x.concrete_functions]}
        elif isinstance(x, _Signature):
            return None
        elif isinstance(x, (Module, list, tuple, dict)):
            entry = {}
        else:
            return None
        i = len(self.objects)
        self.ids[id(x)] = i
        self.keep.append(x)
        self.objects.append(entry)
        if isinstance(x, Module):
            children = {}
            for k in sorted(vars(x)):
                c = self.obj(vars(x)[k])
                if c is not None:
                    children[k] = c
            # Methods decorated with gt.function live on the class.
            for k in sorted(dir(type(x))):
                if k in children or not isinstance(getattr(type(x), k, None), Function):
                    continue
                c = self.obj(getattr(x, k))
                if c is not None:
                    children[k] = c
            entry.update(kind="module", children=children)
            entry["class"] = type(x).__name__
        elif isinstance(x, dict):
            items = {}
            for k, v in x.items():
                c = self.obj(v)
                if c is not None:
                    if not isinstance(k, str):
                        raise ValueError(f"gt.saved_model.save: a dict with key {k!r} (keys must be strings)")
                    items[k] = c
            entry.update(kind="dict", items=items)
        elif isinstance(x, (list, tuple)):
            # Items that hold nothing to save (numbers, strings) are left out.
            items_l = [c for c in (self.obj(v) for v in x) if c is not None]
            entry.update(kind="tuple" if isinstance(x, tuple) else "list", items=items_l)
        return i


def _signature_functions(obj: Any, signatures: Any, saver: _Saver) -> dict[str, int]:
    loaded = getattr(obj, "__dict__", {}).get("signatures")
    if signatures is None and isinstance(obj, _Loaded) and isinstance(loaded, dict):
        return {name: saver.concrete(sig._c) for name, sig in loaded.items()}
    if signatures is None:
        found = []
        for k in sorted(dir(type(obj))):
            f = getattr(type(obj), k, None)
            if isinstance(f, Function) and f.input_signature is not None:
                found.append(getattr(obj, k))
        signatures = found[0] if len(found) == 1 else {}
    if isinstance(signatures, (Function, ConcreteFunction)):
        signatures = {"serving_default": signatures}
    if not isinstance(signatures, Mapping):
        raise ValueError(f"signatures must be a gt.function, a concrete function or a dict of them, got {signatures!r}")
    out = {}
    for name, f in signatures.items():
        if isinstance(f, _Signature):
            f = f._c
        if isinstance(f, _LoadedFunction) and len(f.concrete_functions) == 1:
            f = f.concrete_functions[0]
        if isinstance(f, _LoadedConcrete):
            out[str(name)] = saver.concrete(f)
            continue
        if isinstance(f, Function):
            if f.input_signature is None:
                raise ValueError(
                    f"signature {name!r}: a gt.function needs an input_signature to be a signature "
                    "(or pass f.get_concrete_function(...))"
                )
            f = f.get_concrete_function()
        if not isinstance(f, ConcreteFunction):
            raise ValueError(f"signature {name!r} must be a gt.function or a concrete function, got {f!r}")
        out[str(name)] = saver.concrete(f)
    return out


def save(
    obj: Any, export_dir: str | os.PathLike[str], signatures: Any = None, options: SaveOptions | None = None
) -> None:
    """Writes ``obj`` (a ``gt.Module``, layer or model) to the directory ``export_dir``.
    TF equivalent: ``tf.saved_model.save``.

    >>> import gradtape as gt, tempfile
    >>> class Scale(gt.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.w = gt.Variable(3.0)
    ...     @gt.function(input_signature=[gt.TensorSpec(None)])
    ...     def __call__(self, x):
    ...         return self.w * x
    >>> d = tempfile.mkdtemp()
    >>> gt.saved_model.save(Scale(), d)
    >>> float(gt.saved_model.load(d)(gt.constant(2.0)))
    6.0
    """
    if options is None:
        options = SaveOptions()
    if not isinstance(options, SaveOptions):
        raise TypeError(f"options must be a gt.saved_model.SaveOptions, got {type(options).__name__}")
    if not isinstance(obj, (Module, list, tuple, dict)):
        raise ValueError(f"Expected a gt.Module (or a layer or model) to save, got {obj!r}")
    saver = _Saver(options)
    saver.obj(obj)
    signature_ids = _signature_functions(obj, signatures, saver)
    native = [c for c in saver.concretes if isinstance(c, ConcreteFunction)]
    try:
        graphs = [_retrace(c, options) for c in native]
        for c, g in zip(native, graphs):
            _check_static_sizes(c, g, options, saver.variables)
        texts, constants = _native._encode_graphs(graphs, saver.variables)
    finally:
        _native._forget_saved_gradients()
    constants = list(constants)
    graph_docs = {id(c): json.loads(t) for c, t in zip(native, texts)}
    functions = []
    for c in saver.concretes:
        if isinstance(c, _LoadedConcrete):
            # A loaded function saved again: its graph, with the variables and constants
            # renumbered for this file.
            functions.append({
                "name": c.name,
                "graph": _renumber(c._doc["graph"], c, saver, constants),
                "input_structure": c._doc.get("input_structure"),
                "output_structure": c._doc.get("output_structure"),
            })
            continue
        args, kwargs = c._structure
        flat = _nest.flatten((args, kwargs))
        specs = iter(c._specs)
        marked = [next(specs) if i in c._positions else v for i, v in enumerate(flat)]
        structure = _nest.pack_sequence_as((args, kwargs), marked)
        counter = [0]
        what = f"the arguments of {c.name}"
        try:
            names = list(c._function._signature.parameters) if c._function._signature else []
        except (TypeError, ValueError):
            names = []
        functions.append({
            "name": c.name,
            "graph": graph_docs[id(c)],
            "input_structure": {
                "args": _structure(list(structure[0]), counter, what),
                "kwargs": _structure(dict(structure[1]), counter, what),
                "names": [n for n in names if isinstance(n, str)],
                "spec_names": [s.name for s in c._specs],
            },
            "output_structure": _output_structure(c),
        })
    variables = [
        {"name": v.name, "dtype": v.dtype.name, "shape": list(v.shape), "trainable": bool(v.trainable)}
        for v in saver.variables
    ]
    structure_doc = {
        "format": FORMAT,
        "version": VERSION,
        "variables": variables,
        "functions": functions,
        "signatures": signature_ids,
        "objects": saver.objects,
    }
    d = os.fspath(export_dir)
    os.makedirs(d, exist_ok=True)
    _safetensors.save_file({str(i): v for i, v in enumerate(saver.variables)}, os.path.join(d, "variables.safetensors"))
    _safetensors.save_file({str(i): t for i, t in enumerate(constants)}, os.path.join(d, "constants.safetensors"))
    text = json.dumps(structure_doc, indent=1, sort_keys=True, allow_nan=False)
    tmp = os.path.join(d, ".saved_model.json.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, os.path.join(d, "saved_model.json"))


def _renumber(g: dict[str, Any], c: _LoadedConcrete, saver: _Saver, constants: list[Any]) -> dict[str, Any]:
    def const(i: int) -> int:
        constants.append(c._constants[i])
        return len(constants) - 1

    def graph(g: dict[str, Any]) -> dict[str, Any]:
        g = dict(g)
        g["consts"] = [const(i) for i in g["consts"]]
        nodes = []
        for n in g["nodes"]:
            n = dict(n)
            a = dict(n.get("attrs") or {})
            if n["op"] == "ReadVariableOp":
                a["variable"] = saver.variable(c._variables[a["variable"]])
            if n["op"] == "CustomGradient":
                a["variables"] = [saver.variable(c._variables[i]) for i in a["variables"]]
            for k in ("then", "else", "cond", "body", "gradient"):
                if isinstance(a.get(k), dict):
                    a[k] = graph(a[k])
            n["attrs"] = a
            nodes.append(n)
        g["nodes"] = nodes
        return g

    return graph(g)


# ------------------------------------------------------------------ loading


def _unpack(s: Any, leaves: list[Any]) -> Any:
    if "tensor" in s:
        return leaves[s["tensor"]]
    if "value" in s:
        return s["value"]
    if "dict" in s:
        return {k: _unpack(v, leaves) for k, v in s["dict"].items()}
    if "list" in s:
        return [_unpack(v, leaves) for v in s["list"]]
    if "tuple" in s:
        return tuple(_unpack(v, leaves) for v in s["tuple"])
    raise ValueError(f"malformed structure {s!r}")


class _LoadedConcrete:
    """One saved trace: called with its flat tensor arguments."""

    def __init__(
        self, name: str, graph: Any, doc: dict[str, Any], specs: list[TensorSpec], variables: list[Any],
        constants: list[Any],
    ) -> None:
        self.name = name
        self.graph = graph
        self._doc = doc
        self._specs = specs
        # What the graph's indices refer to (to save it again).
        self._variables = variables
        self._constants = constants

    @property
    def structured_input_signature(self) -> Any:
        s = self._doc.get("input_structure") or {}
        return (_unpack(s.get("args", {"list": []}), self._specs), _unpack(s.get("kwargs", {"dict": {}}), self._specs))

    def _accepts(self, tensors: list[Any]) -> bool:
        return len(tensors) == len(self._specs) and all(s.is_compatible_with(t) for s, t in zip(self._specs, tensors))

    def _run(self, tensors: list[Any]) -> Any:
        outs = self.graph.run(tensors)
        return _unpack(self._doc.get("output_structure") or {"list": []}, outs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        tensors = [a if isinstance(a, Tensor) else _native.convert_to_tensor(a) for a in _nest.flatten((args, kwargs))]
        if not self._accepts(tensors):
            raise TypeError(f"{self.name}: arguments {tensors} do not fit the signature {self._specs}")
        return self._run(tensors)

    def __repr__(self) -> str:
        return f"<loaded ConcreteFunction {self.name} signature={self._specs}>"


class _LoadedFunction:
    """A saved ``gt.function``: runs the first of its traces that fits the arguments."""

    def __init__(self, concretes: list[_LoadedConcrete]) -> None:
        self.concrete_functions = concretes
        self.__name__ = concretes[0].name if concretes else "function"

    def _flat_tensors(self, c: _LoadedConcrete, args: Any, kwargs: Any) -> list[Any] | None:
        s = c._doc.get("input_structure") or {}
        names = [n for n in s.get("names", []) if n != "self"]
        args = list(args)
        # Keyword arguments bound to their positions by the traced function's names.
        for n in names[len(args):]:
            if n in kwargs:
                args.append(kwargs.pop(n))
            else:
                break
        want = _unpack(s.get("args", {"list": []}), c._specs)
        try:
            pairs = list(zip(_nest.flatten(want), _nest.flatten(args)))
            if len(_nest.flatten(want)) != len(_nest.flatten(args)):
                return None
        except (TypeError, ValueError):
            return None
        out = []
        for w, a in pairs:
            if isinstance(w, TensorSpec):
                out.append(a if isinstance(a, Tensor) else _native.convert_to_tensor(a, dtype=w.dtype))
            elif w != a:
                return None
        return out

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        errors = []
        for c in self.concrete_functions:
            try:
                tensors = self._flat_tensors(c, args, dict(kwargs))
            except (TypeError, ValueError) as e:
                errors.append(str(e))
                continue
            if tensors is not None and c._accepts(tensors):
                return c._run(tensors)
        raise TypeError(
            f"{self.__name__}: no saved trace of this function fits the arguments; saved signatures: "
            f"{[c._specs for c in self.concrete_functions]}" + (f" ({errors[0]})" if errors else "")
        )

    def get_concrete_function(self, *args: Any, **kwargs: Any) -> _LoadedConcrete:
        if not args and not kwargs and len(self.concrete_functions) == 1:
            return self.concrete_functions[0]
        for c in self.concrete_functions:
            specs = [
                a if isinstance(a, TensorSpec) else TensorSpec.from_tensor(_native.convert_to_tensor(a))
                for a in _nest.flatten((args, kwargs))
            ]
            if len(specs) == len(c._specs) and all(s.dtype == w.dtype for s, w in zip(specs, c._specs)):
                return c
        raise ValueError(f"{self.__name__}: no saved trace fits {args}")

    def __get__(self, instance: Any, owner: Any = None) -> _LoadedFunction:
        return self

    def __repr__(self) -> str:
        return f"<loaded gt.function {self.__name__}>"


class _Signature:
    """A signature: called with keyword arguments, returns a dict of outputs (TF's
    convention for ``loaded.signatures[...]``)."""

    def __init__(self, c: _LoadedConcrete) -> None:
        self._c = c
        s = c._doc.get("input_structure") or {}
        spec_names = s.get("spec_names") or []
        names = [n for n in s.get("names", []) if n != "self"]
        self._names = [sn or (names[i] if i < len(names) else f"input_{i}") for i, sn in enumerate(spec_names)]

    def __call__(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        vals = list(args) + [kwargs.pop(n) for n in self._names[len(args):] if n in kwargs]
        if kwargs:
            raise TypeError(f"unexpected arguments {sorted(kwargs)}; this signature takes {self._names}")
        out = self._c(*vals)
        if isinstance(out, dict):
            return out
        if isinstance(out, (list, tuple)):
            return {f"output_{i}": o for i, o in enumerate(out)}
        return {"output_0": out}

    @property
    def structured_input_signature(self) -> Any:
        return self._c.structured_input_signature


class _Loaded(Module):
    """A loaded object: the saved attributes, as a ``gt.Module``."""

    def __init__(self, class_name: str) -> None:
        super().__init__(name=None)
        self._class_name = class_name

    def __repr__(self) -> str:
        return f"<loaded {self._class_name}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # `loaded(x)` calls a saved `__call__` (Python looks dunders up on the class).
        f = self.__dict__.get("__call__")
        if not isinstance(f, _LoadedFunction):
            raise TypeError(f"'{self._class_name}' object is not callable")
        return f(*args, **kwargs)


def load(export_dir: str | os.PathLike[str], tags: Any = None, options: Any = None) -> Any:
    """Loads a SavedModel written by ``save``. TF equivalent: ``tf.saved_model.load``.

    Returns the saved object's twin: its variables restored, its submodules, lists and
    dicts, and its ``gt.function``s (callable, differentiable); ``.signatures`` maps
    signature names to functions returning dicts."""
    d = os.fspath(export_dir)
    text, values, constants = _native._saved_model_read(d)
    doc = json.loads(text)
    variables = [
        Variable(val, trainable=vd["trainable"], name=vd["name"][:-2] if vd["name"].endswith(":0") else vd["name"])
        for vd, val in zip(doc["variables"], values)
    ]
    graphs = _native._saved_model_build(text, constants, variables)
    concretes = []
    for fd, g in zip(doc["functions"], graphs):
        spec_names = (fd.get("input_structure") or {}).get("spec_names") or []
        spec_names = list(spec_names) + [None] * len(fd["graph"]["inputs"])
        specs = [
            TensorSpec(None if s["shape"] is None else tuple(s["shape"]), s["dtype"], n)
            for s, n in zip(fd["graph"]["inputs"], spec_names)
        ]
        concretes.append(_LoadedConcrete(fd["name"], g, fd, specs, variables, constants))
    objs: list[Any] = [None] * len(doc["objects"])

    def make(i: int) -> Any:
        if objs[i] is not None:
            return objs[i]
        o = doc["objects"][i]
        kind = o["kind"]
        if kind == "variable":
            objs[i] = variables[o["variable"]]
        elif kind == "function":
            objs[i] = _LoadedFunction([concretes[k] for k in o["functions"]])
        elif kind == "module":
            m = _Loaded(o["class"])
            objs[i] = m
            for k, c in o["children"].items():
                object.__setattr__(m, k, make(c))
        elif kind == "list":
            objs[i] = []
            objs[i].extend(make(c) for c in o["items"])
        elif kind == "tuple":
            objs[i] = tuple(make(c) for c in o["items"])
        elif kind == "dict":
            objs[i] = {}
            for k, c in o["items"].items():
                objs[i][k] = make(c)
        return objs[i]

    root = make(0)
    if isinstance(root, _Loaded):
        object.__setattr__(root, "signatures", {n: _Signature(concretes[i]) for n, i in doc["signatures"].items()})
    return root
