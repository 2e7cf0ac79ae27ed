"""``gt.function``: trace a Python function once per input signature into a graph the
engine runs without Python. TF equivalent: ``tf.function``.

Tracing runs the Python function once on the call's values; every gt op it calls is
recorded (by the engine, not here) as a node of a graph, variables it reads or assigns
as nodes that read or assign them on every call. Later calls with the same signature
run the graph: no Python runs per op, the GIL is released, and tapes record the ops
as they would eagerly, so gradients through a call are the eager ones.
"""

import collections
import functools
import inspect
import logging
import threading
import weakref

import numpy as _np

from . import _gradtape as _native
from . import _nest
from ._gradtape import Tensor as _Tensor
from ._variable import Variable as _Variable
from ._variable import creation_policy as _variable_creation
from ._indexed_slices import IndexedSlices
from ._shape import TensorShape


class _InputSignatureMismatch(TypeError, ValueError):
    """Arguments that do not fit a function's ``input_signature`` (TF raises a
    ``TypeError`` in TF 2.x's newer releases, a ``ValueError`` in older ones: this is both)."""


class TensorSpec:
    """The dtype and shape a ``gt.function`` argument accepts: ``None`` dimensions take
    any size, ``shape=None`` any rank. TF equivalent: ``tf.TensorSpec``.

    >>> import gradtape as gt
    >>> gt.TensorSpec([None, 3], gt.float32)
    TensorSpec(shape=(None, 3), dtype=gt.float32, name=None)
    """

    __slots__ = ("_shape", "_dtype", "_name")

    def __init__(self, shape, dtype=None, name=None):
        from . import dtypes

        if shape is not None and getattr(shape, "rank", 0) is None:
            shape = None  # a TensorShape of unknown rank
        if shape is not None:
            shape = tuple(None if d is None else int(d) for d in shape)
        self._shape = shape
        self._dtype = dtypes.as_dtype(dtype) if dtype is not None else _native.float32
        self._name = name

    @classmethod
    def from_tensor(cls, tensor, name=None):
        """The spec of ``tensor``'s dtype and shape (in a trace, its static shape)."""
        shape = _native._static_shape(tensor) if isinstance(tensor, _Tensor) else tensor.shape
        return cls(None if getattr(shape, "rank", 0) is None else tuple(shape), tensor.dtype, name)

    @property
    def shape(self):
        """The shape, a ``gt.TensorShape`` (``None`` dims unknown; rank ``None`` when
        the rank is unknown)."""
        return TensorShape(None if self._shape is None else list(self._shape))

    @property
    def dtype(self):
        return self._dtype

    @property
    def name(self):
        return self._name

    def is_compatible_with(self, other):
        """Whether a tensor (or spec) fits this spec."""
        if isinstance(other, TensorSpec):
            dt, shape = other.dtype, other._shape
        else:
            dt, shape = other.dtype, tuple(other.shape)
        if dt != self._dtype:
            return False
        if self._shape is None or shape is None:
            return True
        return len(shape) == len(self._shape) and all(
            a is None or b is None or a == b for a, b in zip(self._shape, shape)
        )

    def _dims(self):
        return None if self._shape is None else list(self._shape)

    def __eq__(self, other):
        return (
            isinstance(other, TensorSpec)
            and self._shape == other._shape
            and self._dtype == other._dtype
            and self._name == other._name
        )

    def __hash__(self):
        return hash((self._shape, self._dtype, self._name))

    def __repr__(self):
        if self._shape is None:
            shape = "<unknown>"
        else:
            dims = ", ".join("None" if d is None else str(d) for d in self._shape)
            shape = f"({dims},)" if len(self._shape) == 1 else f"({dims})"
        name = "None" if self._name is None else repr(self._name)
        return f"TensorSpec(shape={shape}, dtype=gt.{self._dtype.name}, name={name})"


def _output_spec(v):
    """A traced output's ``TensorSpec`` (``None`` for a value that is not a tensor)."""
    if not isinstance(v, _Tensor):
        return None
    shape = _native._peek_static_shape(v)
    return TensorSpec(None if shape.rank is None else tuple(shape), v.dtype)


def _is_tensor_arg(x):
    return isinstance(x, (_Tensor, _np.ndarray, _np.generic)) and not isinstance(x, (bool, int, float))


def _leaf_key(x, reduce_retracing):
    # With reduce_retracing, one entry per dtype: its trace is relaxed (sizes, then
    # rank) as calls that do not fit it come.
    if isinstance(x, _Tensor):
        return ("T", x.dtype.name, None if reduce_retracing else tuple(x.shape))
    if isinstance(x, _np.ndarray):
        return ("T", str(x.dtype), None if reduce_retracing else x.shape)
    if isinstance(x, _Variable):
        # By spec, as TF: another variable of the same dtype and shape runs the same
        # graph, which reads and assigns it in place of the traced one.
        return ("V", x.dtype.name, tuple(x.shape), bool(x.trainable))
    if isinstance(x, weakref.ref):
        raise TypeError(f"gt.function does not take weakref arguments ({x!r}): pass the object")
    try:
        hash(x)
    except TypeError:
        raise TypeError(
            f"gt.function cannot key a trace on an argument of type {type(x).__name__} "
            f"({x!r}): it is not hashable; pass a tensor, a nest of them or a hashable value"
        ) from None
    return ("P", type(x).__name__, x)


class ConcreteFunction:
    """One trace of a ``gt.function``: a graph for one input signature.
    TF equivalent: ``tf.types.experimental.ConcreteFunction``."""

    def __init__(self, function, graph, specs, structure, tensor_positions, outputs, out_is_tensor):
        # Weakly: the function's cache holds its traces (a strong reference back would
        # keep every gt.function alive until the garbage collector runs, as TF's test
        # of reference cycles checks).
        self._function_ref = weakref.ref(function)
        self._function_state = function.__getstate__()
        self._orphan = None
        self.graph = graph
        self._specs = specs
        self._structure = structure
        self._positions = tensor_positions
        self._outputs = outputs
        self._out_is_tensor = out_is_tensor
        self._flat_outputs = None
        self._example_shapes = None
        self._output_specs = None
        self._variables = ()
        # Variables among the arguments: where they are, and the ones the trace saw.
        flat = _nest.flatten(structure)
        self._var_positions = [i for i, x in enumerate(flat) if isinstance(x, _Variable)]
        self._trace_vars = [flat[i] for i in self._var_positions]
        # The function returned one tensor (the common case): no structure to rebuild.
        self._single_output = out_is_tensor == [True] and not _nest.is_nested(outputs)

    @property
    def _function(self):
        """The ``gt.function`` this is a trace of (once it is gone, a new one with its
        settings, for the traces of other sizes a call may need)."""
        f = self._function_ref()
        if f is None:
            if self._orphan is None:
                self._orphan = Function(**self._function_state)
            f = self._orphan
        return f

    @property
    def structured_input_signature(self):
        """The arguments' structure with a ``TensorSpec`` for each tensor (TF's form:
        ``(args, kwargs)``); a lone tensor argument's spec is named after its parameter
        unless the trace's spec has a name."""
        args, kwargs = self._signature_specs()
        names = self._arg_names(len(args))

        def named(a, n):
            return TensorSpec(a._shape, a.dtype, n) if isinstance(a, TensorSpec) and a.name is None else a

        args = tuple(named(a, n) for a, n in zip(args, names))
        return args, {k: named(a, k) for k, a in kwargs.items()}

    def _signature_specs(self):
        """``structured_input_signature`` with the specs as traced (names as given)."""
        flat = _nest.flatten(self._structure)
        for i, spec in zip(self._positions, self._specs):
            flat[i] = spec
        args, kwargs = _nest.pack_sequence_as(self._structure, flat)
        sig = self._function._signature
        if self._function._input_signature is not None and sig is not None:
            # Parameters past the input signature keep their defaults, shown as TF does.
            kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
            rest = [p for p in sig.parameters.values() if p.kind in kinds][len(args) :]
            args = tuple(args) + tuple(p.default for p in rest if p.default is not p.empty)
        return args, kwargs

    @property
    def structured_outputs(self):
        return self._outputs

    @property
    def variables(self):
        """The variables the trace reads or assigns (TF's captured variables)."""
        return self._variables

    @property
    def trainable_variables(self):
        return tuple(v for v in self._variables if v.trainable)

    @property
    def output_dtypes(self):
        """The outputs' structure with each tensor's dtype (``None`` for other values)."""
        return _nest.map_structure(lambda s: None if s is None else s.dtype, self._output_specs)

    @property
    def output_shapes(self):
        """The outputs' structure with each tensor's static shape, a ``gt.TensorShape``
        (``None`` dims vary between calls; ``None`` for other values)."""
        return _nest.map_structure(
            lambda s: None if s is None else s.shape,
            self._output_specs,
        )

    @property
    def name(self):
        return self._function.__name__

    def _run(self, tensors, flat_args=None):
        if self._var_positions and flat_args is not None:
            pairs = [(t, flat_args[i]) for i, t in zip(self._var_positions, self._trace_vars) if flat_args[i] is not t]
            outs = self.graph.run(tensors, pairs) if pairs else self.graph.run(tensors)
        else:
            outs = self.graph.run(tensors)
        if self._single_output:
            return outs[0]
        if self._flat_outputs is None:
            self._flat_outputs = list(_nest.flatten(self._outputs))
        it = iter(outs)
        flat = [_output_leaf(it, v, is_t) for v, is_t in zip(self._flat_outputs, self._out_is_tensor)]
        return _nest.pack_sequence_as(self._outputs, flat)

    def __call__(self, *args, **kwargs):
        """Calls the trace with tensors for the signature's tensor arguments (in order,
        flat), or with the same arguments as the function."""
        flat_args = _nest.flatten((args, kwargs))
        flat_call = len(flat_args) == len(self._specs) and all(isinstance(a, (_Tensor, _np.ndarray)) for a in flat_args)
        if flat_call:
            tensors = [_native.convert_to_tensor(a) for a in flat_args]
        else:
            tensors = self._bind(args, kwargs)
        tracing = _native._is_tracing()
        fits = True
        for spec, t in zip(self._specs, tensors):
            # As TF: called eagerly, a trace takes tensors of other shapes (run as a
            # trace of theirs); called while tracing, the shapes must fit.
            if t.dtype != spec.dtype or (tracing and not spec.is_compatible_with(t)):
                raise _InputSignatureMismatch(
                    f"Binding inputs to gt.function `{self.name}` failed due to: Can not cast "
                    f"{TensorSpec.from_tensor(t)} to {spec}"
                )
            fits = fits and spec.is_compatible_with(t)
        if (not fits or self.graph.shape_dependent) and self._example_shapes is not None:
            if flat_call:
                # The function's own arguments, with these tensors in the trace's places.
                flat = list(_nest.flatten(self._structure))
                for i, t in zip(self._positions, tensors):
                    flat[i] = t
                args, kwargs = _nest.pack_sequence_as(self._structure, flat)
            return self._function._exact(self, tensors, args, kwargs)._run(tensors)
        return self._run(tensors)

    def _bind(self, args, kwargs):
        """The tensors of a call with the function's own arguments, bound as TF binds a
        concrete function's: a parameter the trace saw as tensors takes tensors (by
        position, or by keyword under its name or its spec's); one it saw as a Python
        value has that value, by position only."""
        targs, tkwargs = self._structure
        names = self._param_names(len(targs))
        literal = [not _has_tensor(a) for a in targs]
        if len(args) > len(targs):
            raise TypeError(f"{self.name}(): too many positional arguments")
        values = dict(zip(names, args))
        for k, v in kwargs.items():
            if k in names and k not in values:
                values[k] = v
            elif k in tkwargs and k not in names:
                values[k] = v
            else:
                raise TypeError(f"{self.name}(): got an unexpected keyword argument '{k}'")
        for n, lit, a in zip(names, literal, targs):
            if n not in values:
                if not lit:
                    raise TypeError(f"{self.name}(): missing a required argument: '{n}'")
                values[n] = a
        for k, a in tkwargs.items():
            if k not in values:
                if _has_tensor(a):
                    raise TypeError(f"{self.name}(): missing a required keyword-only argument: '{k}'")
                values[k] = a
        call = (tuple(values[n] for n in names), {k: values[k] for k in tkwargs})
        tensors = []
        for got, traced in zip(call[0] + tuple(call[1].values()), targs + tuple(tkwargs.values())):
            self._match(got, traced, tensors)
        return tensors

    def _match(self, got, traced, tensors):
        """Checks ``got`` (a call's argument) against ``traced`` (the trace's), adding
        its tensors to ``tensors``."""

        def fail(what):
            raise _InputSignatureMismatch(
                f"Binding inputs to gt.function `{self.name}` failed due to: Can not cast {got!r} to {what}"
            )

        if _is_tensor_arg(traced):
            if _nest.is_nested(got) or not (_is_tensor_arg(got) or isinstance(got, (bool, int, float, complex))):
                fail(TensorSpec.from_tensor(_native.convert_to_tensor(traced)))
            tensors.append(got if isinstance(got, _Tensor) else _native.convert_to_tensor(got))
        elif isinstance(traced, _Variable):
            if not isinstance(got, _Variable):
                fail(repr(traced))
        elif isinstance(traced, dict):
            if not isinstance(got, dict) or set(got) != set(traced):
                fail("a Dict")
            for k in _nest._sorted_keys(traced):
                self._match(got[k], traced[k], tensors)
        elif isinstance(traced, (list, tuple)):
            if not isinstance(got, (list, tuple)) or len(got) != len(traced):
                fail(type(traced).__name__)
            for g, t in zip(got, traced):
                self._match(g, t, tensors)
        elif _is_tensor_arg(got) or type(got) is not type(traced) or not _same_value(got, traced):
            fail(repr(traced))

    def _param_names(self, n):
        """The first ``n`` positional parameters' names in the trace: a named spec's name,
        else the function's parameter name."""
        specs = self._spec_names() + [None] * n
        return [sn or name for sn, name in zip(specs, self._arg_names(n))]

    def _spec_names(self):
        """The name each positional argument's spec gives it, if any (a lone tensor
        argument traced from a named ``TensorSpec``)."""
        targs, _ = self._structure
        pos_of = {p: j for j, p in enumerate(self._positions)}
        out = []
        offset = 0
        for a in targs:
            lone = not _nest.is_nested(a) and offset in pos_of
            out.append(self._specs[pos_of[offset]].name if lone else None)
            offset += len(_nest.flatten(a))
        return out

    def _arg_names(self, n):
        """Names of the first ``n`` positional arguments, as TF prints them (extra
        positional arguments ``<varargs>_<i>``)."""
        sig = self._function._signature
        if sig is None:
            return [f"args_{i}" for i in range(n)]
        params = list(sig.parameters.values())
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        names = [p.name for p in params if p.kind in kinds][:n]
        var = next((p.name for p in params if p.kind is inspect.Parameter.VAR_POSITIONAL), "args")
        return names + [f"{var}_{i}" for i in range(n - len(names))]

    def _parameters(self):
        """``(name, kind, argument)`` per parameter of the trace, as TF's FunctionType
        lists them."""
        args, kwargs = self._signature_specs()
        names = self._param_names(len(args))
        sig = self._function._signature
        n_named = len(names)
        if sig is not None:
            kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
            n_named = sum(1 for p in sig.parameters.values() if p.kind in kinds)
        kind = ["POSITIONAL_OR_KEYWORD" if i < n_named else "POSITIONAL_ONLY" for i in range(len(args))]
        return list(zip(names, kind, args)) + [(k, "KEYWORD_ONLY", kwargs[k]) for k in kwargs]

    def _output_type(self):
        outputs = _nest.map_structure(lambda v, sp: v if sp is None else sp, self._outputs, self._output_specs)
        return _type_text(outputs)

    def pretty_printed_signature(self, verbose=True):
        """The signature as TF prints a concrete function's: each parameter's type (a
        ``TensorSpec``, or ``Literal[value]`` for a Python value) and the output's; with
        ``verbose``, one line each, with the parameter kinds and the captures."""
        params = self._parameters()
        if not verbose:
            inner = ", ".join(f"{n}: {_type_text(a)}" for n, _, a in params)
            return f"({inner}) -> {self._output_type()}"
        lines = ["Input Parameters:"]
        lines += [f"  {n} ({kind}): {_type_text(a)}" for n, kind, a in params]
        lines += ["Output Type:", f"  {self._output_type()}", "Captures:", "  None"]
        return "\n".join(lines)

    def __str__(self):
        return f"ConcreteFunction {self.pretty_printed_signature()}"

    def __repr__(self):
        return f"<ConcreteFunction {self.pretty_printed_signature(verbose=False)} at 0x{id(self):X}>"


def _type_text(x):
    """TF's text for a trace type: a spec, ``Literal[v]``, or a typed container."""
    if isinstance(x, TensorSpec):
        return repr(x)
    if isinstance(x, dict):
        items = ", ".join(f"[{k!r}, {_type_text(x[k])}]" for k in _nest._sorted_keys(x))
        return f"Dict[{items}]"
    if isinstance(x, (list, tuple)):
        kind = type(x).__name__ if _nest._is_namedtuple(x) else ("Tuple" if isinstance(x, tuple) else "List")
        return f"{kind}[{', '.join(_type_text(v) for v in x)}]"
    return f"Literal[{x!r}]"


class Function:
    """A Python function traced into graphs, one per input signature.
    TF equivalent: ``tf.function`` (``tf.types.experimental.PolymorphicFunction``)."""

    def __init__(
        self,
        python_function,
        input_signature=None,
        autograph=True,
        jit_compile=None,
        reduce_retracing=False,
        name=None,
    ):
        if not callable(python_function):
            raise TypeError(f"{python_function!r} is not a callable object")
        functools.update_wrapper(self, python_function)
        self._python_function = python_function
        if input_signature is not None and not isinstance(input_signature, (list, tuple)):
            raise TypeError(
                f"input_signature must be either a tuple or a list, got {type(input_signature).__name__}"
            )
        self._input_signature = None if input_signature is None else list(input_signature)
        if self._input_signature is not None:
            for s in _nest.flatten(self._input_signature):
                if not isinstance(s, TensorSpec):
                    raise TypeError(f"input_signature must hold TensorSpecs, got {type(s).__name__}")
        self._autograph = autograph
        self._jit_compile = jit_compile
        self._reduce_retracing = reduce_retracing
        self._name = name or getattr(python_function, "__name__", "function")
        self._signature = None
        try:
            self._signature = inspect.signature(python_function)
        except (TypeError, ValueError):
            pass
        if self._input_signature is not None and self._signature is not None:
            for p in self._signature.parameters.values():
                if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is p.empty:
                    raise TypeError(
                        f"Since input_signature is defined, keyword-only parameter `{p.name}` "
                        "must have a default value"
                    )
        self._converted = None
        self._reset()

    def _reset(self):
        """No traces yet (a new function, or ``clear_cache``)."""
        self._cache = {}
        self._fast = {}
        # Calls with positional tensors of a seen signature, to traces returning one
        # tensor: looked up and run in one native call (the least GIL time per call).
        self._fastcalls = _native._FastCalls()
        self._tracing_count = 0
        # The first trace may create variables (and is then traced again); later ones
        # may not, as TF.
        self._may_create_variables = True
        self._lock = threading.RLock()
        # Per instance (by id, unhashable objects included): (weak reference, Function).
        self._bound_instances = {}

    def clear_cache(self):
        """Drops every trace (and those of the instances' bound methods)."""
        with self._lock:
            bound = [entry[1] for entry in self._bound_instances.values()]
            self._reset()
        for b in bound:
            b.clear_cache()

    def __getstate__(self):
        return {
            "python_function": self._python_function,
            "input_signature": self._input_signature,
            "autograph": self._autograph,
            "jit_compile": self._jit_compile,
            "reduce_retracing": self._reduce_retracing,
            "name": self._name,
        }

    def __setstate__(self, state):
        self.__init__(**state)

    # Methods: `@gt.function` on a method traces per instance, as TF.
    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        key = id(instance)
        entry = self._bound_instances.get(key)
        if entry is not None and entry[0]() is instance:
            return entry[1]
        func = self._python_function
        try:
            # The instance held weakly: its traces must not keep it alive.
            method = _WeakMethod(func, instance) if inspect.isfunction(func) else func.__get__(instance, owner)
        except TypeError:
            method = func.__get__(instance, owner)
        bound = Function(
            method,
            input_signature=self._input_signature,
            autograph=self._autograph,
            jit_compile=self._jit_compile,
            reduce_retracing=self._reduce_retracing,
            name=self._name,
        )
        try:
            ref = weakref.ref(instance, lambda _, k=key, d=self._bound_instances: d.pop(k, None))
        except TypeError:
            # No weak references: keep the instance alive with its traces.
            ref = (lambda obj: lambda: obj)(instance)
        self._bound_instances[key] = (ref, bound)
        return bound

    @property
    def python_function(self):
        """The wrapped Python function."""
        return self._python_function

    @property
    def input_signature(self):
        return None if self._input_signature is None else tuple(self._input_signature)

    def experimental_get_tracing_count(self):
        """How many times the Python function was traced."""
        return self._tracing_count

    def _list_all_concrete_functions(self):
        """The traces made so far (TF's: one per signature traced)."""
        with self._lock:
            return [c for k, c in self._cache.items() if k[0] != "exact"]

    _list_all_concrete_functions_for_serialization = _list_all_concrete_functions

    def pretty_printed_concrete_signatures(self, verbose=True):
        """Each trace's ``pretty_printed_signature``, one after another."""
        joiner = "\n\n" if verbose else "\n"
        return joiner.join(c.pretty_printed_signature(verbose=verbose) for c in self._list_all_concrete_functions())

    def _callable(self):
        if self._converted is None:
            if self._autograph:
                from . import _autograph

                pf = self._python_function
                if isinstance(pf, _WeakMethod):
                    self._converted = pf.with_function(_autograph.convert(pf.__func__))
                else:
                    self._converted = _autograph.convert(pf)
            else:
                self._converted = self._python_function
        return self._converted

    def _canonical(self, args, kwargs):
        """The arguments bound to the parameters, defaults applied: ``(args, kwargs)``
        with every parameter positional where it can be."""
        if self._signature is None:
            return _wrap_slices((args, kwargs))
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self._name}(): {e}") from None
        given = set(bound.arguments)
        sig = self._input_signature
        if sig is not None:
            # As TF: parameters past the signature keep their Python defaults (they are
            # not arguments of the trace); passing one is an error.
            params = list(self._signature.parameters.values())
            names = [p.name for p in params]
            positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
            uncovered = [p.name for p in params[len(sig) :] if p.kind in positional and p.default is p.empty]
            if uncovered:
                raise TypeError(
                    f"{self._name}(): input_signature missing type constraint for {', '.join(uncovered)}"
                )
            extra = [n for n in names[len(sig) :] if n in given]
            if extra:
                raise _InputSignatureMismatch(
                    f"{self._name}({', '.join(names)}) specifies {len(sig)} positional "
                    f"arguments, but got {len(sig) + len(extra)}"
                )
            # Defaults inside the signature's length are filled in (and converted).
            bound.apply_defaults()
            for n in names[len(sig) :]:
                bound.arguments.pop(n, None)
            return _wrap_slices((tuple(bound.args), dict(bound.kwargs)))
        bound.apply_defaults()
        # A native function's signature shows some defaults as `...`: leave those out.
        for k in [k for k, v in bound.arguments.items() if v is Ellipsis and k not in given]:
            del bound.arguments[k]
        return _wrap_slices((tuple(bound.args), dict(bound.kwargs)))

    def _signature_args(self, args, kwargs):
        """With an input signature: the arguments checked against it."""
        sig = self._input_signature
        if kwargs:
            # Keyword arguments fill the positional slots of the signature.
            args = tuple(args) + tuple(kwargs.values())
            kwargs = {}
        if len(args) != len(sig):
            raise _InputSignatureMismatch(
                f"Binding inputs to gt.function `{self._name}` failed: it takes "
                f"{len(sig)} argument(s) by its input_signature, got {len(args)}"
            )
        out = []
        for a, spec in zip(args, sig):
            flat_s = _nest.flatten(spec)
            flat_a = _flatten_up_to(spec, a)
            if flat_a is None:
                raise _InputSignatureMismatch(
                    f"Binding inputs to gt.function `{self._name}` failed: {a!r} does not "
                    f"match the structure of input_signature {spec}"
                )
            conv = []
            for x, s in zip(flat_a, flat_s):
                try:
                    t = (
                        x
                        if isinstance(x, _Tensor)
                        else _native.convert_to_tensor(x.read_value() if isinstance(x, _Variable) else x, dtype=s.dtype)
                    )
                except (TypeError, ValueError) as e:
                    raise _InputSignatureMismatch(f"Binding inputs to gt.function `{self._name}` failed: {e}") from None
                if not s.is_compatible_with(t):
                    raise _InputSignatureMismatch(
                        f"Binding inputs to gt.function `{self._name}` failed: "
                        f"{t.dtype.name} tensor of shape {tuple(t.shape)} is incompatible "
                        f"with input_signature {s}"
                    )
                conv.append(t)
            out.append(_nest.pack_sequence_as(spec, conv) if _nest.is_nested(spec) else conv[0])
        return tuple(out), {}

    def _key(self, args, kwargs):
        if self._input_signature is not None:
            return ("signature",)
        flat = _nest.flatten((args, kwargs))
        leaves = tuple(_leaf_key(x, self._reduce_retracing) for x in flat)
        # Which variable arguments are the same object (a graph for `f(v, v)` is not one
        # for `f(v, w)`).
        variables = [x for x in flat if isinstance(x, _Variable)]
        aliases = tuple(next(i for i, w in enumerate(variables) if w is v) for v in variables)
        return (_structure_key((args, kwargs)), leaves, aliases)

    def __call__(self, *args, **kwargs):
        if not kwargs:
            out = self._fastcalls.call(args)
            if out is not None:
                return out
        if _native._is_tracing():
            # Inside another trace: the body becomes part of that graph.
            return self._callable()(*args, **kwargs)
        # Fast path: positional tensors only, a signature seen before.
        fast = None
        if not kwargs and self._input_signature is None:
            try:
                fast = tuple((a.dtype, a.shape) for a in args if type(a) is _Tensor)
            except AttributeError:
                fast = None
            if fast is not None and len(fast) == len(args):
                concrete = self._fast.get(fast)
                if concrete is not None:
                    return concrete._run(list(args))
            else:
                fast = None
        traces = self._tracing_count
        concrete, cargs, ckwargs = self._concrete(args, kwargs)
        if self._tracing_count == traces:
            _TRACING_DETECTORS.called(self._stats_key())
        if fast is not None and concrete._positions == list(range(len(args))):
            # Every argument a tensor, in order (defaults, if any, are Python values of
            # the function itself): the same key always finds this trace.
            self._fast[fast] = concrete
            if concrete._single_output and not concrete._var_positions:
                self._fastcalls.add(list(args), concrete.graph)
        flat = _nest.flatten((cargs, ckwargs)) if concrete._var_positions else None
        return concrete._run(self._tensors_for(concrete, cargs, ckwargs, checked=True), flat)

    def _tensors_for(self, concrete, args, kwargs, checked=False):
        if not checked:
            args, kwargs = self._canonical(args, kwargs)
            if self._input_signature is not None:
                args, kwargs = self._signature_args(args, kwargs)
        flat = _nest.flatten((args, kwargs))
        return [
            flat[i] if isinstance(flat[i], _Tensor) else _native.convert_to_tensor(flat[i]) for i in concrete._positions
        ]

    def _concrete(self, args, kwargs, specs=None):
        args, kwargs = self._canonical(args, kwargs)
        if self._input_signature is not None:
            args, kwargs = self._signature_args(args, kwargs)
        if specs is None:
            key = self._key(args, kwargs)
        else:
            unnamed = tuple(TensorSpec(s._shape, s.dtype) for s in specs)
            key = ("specs", unnamed, self._key(args, kwargs)[0], tuple(s.name for s in specs))
        with self._lock:
            concrete = self._cache.get(key)
            if concrete is None and specs is not None and all(n is None for n in key[3]):
                # Unnamed specs take a trace of the same specs under any names (TF).
                concrete = next((c for k, c in self._cache.items() if k[:3] == key[:3]), None)
            if concrete is not None and specs is None and self._reduce_retracing:
                # TF's reduce_retracing: the first trace is exact; a call it does not
                # fit is traced once more with the dimensions that differ unknown.
                tensors = self._tensors_for(concrete, args, kwargs, checked=True)
                if not all(sp.is_compatible_with(t) for sp, t in zip(concrete._specs, tensors)):
                    relaxed = [_relax(sp, t) for sp, t in zip(concrete._specs, tensors)]
                    # The narrower trace stays listed (TF keeps it), under a key no call
                    # looks up.
                    self._cache[("relaxed", id(concrete))] = concrete
                    concrete = self._trace(args, kwargs, relaxed)
                    self._cache[key] = concrete
            if concrete is None:
                concrete = self._trace(args, kwargs, specs)
                self._cache[key] = concrete
            if concrete.graph.shape_dependent:
                tensors = self._tensors_for(concrete, args, kwargs, checked=True)
                concrete = self._exact(concrete, tensors, args, kwargs)
        return concrete, args, kwargs

    def _exact(self, concrete, tensors, args, kwargs):
        """``concrete``, or when ``tensors`` have other sizes than its example, the trace
        of these exact sizes. The traced code read a static shape (``x.shape``,
        ``len(x)``), so the graph may hold the example's sizes as constants: other sizes
        get a trace of their own (not counted: the signature's trace is the one TF
        counts), so a size never silently comes from another call."""
        shapes = tuple(tuple(t.shape) for t in tensors)
        if shapes == concrete._example_shapes:
            return concrete
        with self._lock:
            skey = ("exact", concrete, shapes)
            exact = self._cache.get(skey)
            if exact is None:
                exact_specs = [TensorSpec(s, sp.dtype) for s, sp in zip(shapes, concrete._specs)]
                exact = self._trace(args, kwargs, exact_specs, count=False)
                self._cache[skey] = exact
        return exact

    def get_concrete_function(self, *args, **kwargs):
        """The trace for these arguments (tensors, ``TensorSpec``s or Python values),
        tracing if needed. Without arguments, the input signature's."""
        if not args and not kwargs and self._input_signature is not None:
            args = tuple(self._input_signature)
        flat = _nest.flatten((args, kwargs))
        specs = None
        if any(isinstance(x, TensorSpec) for x in flat) and self._input_signature is None:
            specs = [x for x in flat if isinstance(x, (TensorSpec, _Tensor, _np.ndarray))]
            specs = [
                s if isinstance(s, TensorSpec) else TensorSpec(tuple(s.shape), _native.convert_to_tensor(s).dtype)
                for s in specs
            ]
            if all(s._shape is not None and None not in s._shape and s.name is None for s in specs):
                specs = None  # as the tensors they describe: the same trace
        if any(isinstance(x, TensorSpec) for x in flat):
            flat = [_example(x) if isinstance(x, TensorSpec) else x for x in flat]
            args, kwargs = _nest.pack_sequence_as((args, kwargs), flat)
        concrete, _, _ = self._concrete(tuple(args), kwargs, specs)
        return concrete

    def _trace(self, args, kwargs, given_specs=None, count=True):
        flat = _nest.flatten((args, kwargs))
        positions = [i for i, x in enumerate(flat) if _is_tensor_arg(x)]
        examples = [flat[i] if isinstance(flat[i], _Tensor) else _native.convert_to_tensor(flat[i]) for i in positions]
        if self._input_signature is not None:
            specs = list(_nest.flatten(self._input_signature))
        elif given_specs is not None:
            specs = list(given_specs)
        else:
            specs = [TensorSpec(tuple(t.shape), t.dtype) for t in examples]
        func = self._callable()
        result = {}

        def traced(placeholders):
            new_flat = list(flat)
            for i, p in zip(positions, placeholders):
                new_flat[i] = p
            a, kw = _unwrap_slices(_nest.pack_sequence_as((args, kwargs), new_flat))
            shape_before = _structure_key((a, kw))
            leaves_before = _nest.flatten((a, kw))
            out = func(*a, **kw)
            leaves_after = _nest.flatten((a, kw))
            if _structure_key((a, kw)) != shape_before or any(x is not y for x, y in zip(leaves_before, leaves_after)):
                raise ValueError(
                    f"{self._name}() should not modify its Python input arguments. Modifying a "
                    "copy is allowed (for example `l = list(l)`)."
                )
            # As TF, every output but None is a tensor (a Python value is converted).
            out = _nest.map_structure(lambda v: _output_tensor(v, self._name), out)
            leaves = _nest.flatten(out)
            is_t = []
            tensors = []
            for v in leaves:
                if isinstance(v, _Variable):
                    v = v.read_value()
                if isinstance(v, IndexedSlices):
                    # Returned as TF returns a composite tensor: its component tensors.
                    parts = [v.values, v.indices] + ([] if v.dense_shape is None else [v.dense_shape])
                    is_t.append(_SLICES[len(parts)])
                    tensors.extend(parts)
                elif isinstance(v, _Tensor):
                    is_t.append(True)
                    tensors.append(v)
                else:
                    is_t.append(False)
            result["out"] = out
            result["is_t"] = is_t
            # The static shapes are known here, in the trace (read without making the
            # trace depend on the example's sizes).
            result["specs"] = _nest.map_structure(_output_spec, out)
            result["variables"] = _native._traced_variables()
            return tensors

        dims = [(s.dtype, s._dims()) for s in specs]
        if count:
            self._tracing_count += 1
            _TRACING_DETECTORS.traced(self._stats_key(), self._name)
        with _variable_creation(self._may_create_variables) as created:
            graph, _ = _native._trace(traced, examples, dims)
        if created.count:
            # As TF: a first trace that created variables is traced again (the
            # variables now exist), and that trace may create none.
            if count:
                self._tracing_count += 1
            with _variable_creation(False):
                graph, _ = _native._trace(traced, examples, dims)
        self._may_create_variables = False
        graph = graph.optimize()
        concrete = ConcreteFunction(self, graph, specs, (args, kwargs), positions, result["out"], result["is_t"])
        concrete._example_shapes = tuple(tuple(t.shape) for t in examples)
        concrete._output_specs = result["specs"]
        concrete._variables = tuple(result["variables"])
        return concrete

    def _stats_key(self):
        """What TF counts retracing by: the Python function (a bound method's)."""
        f = self._python_function
        while hasattr(f, "__wrapped__"):
            f = f.__wrapped__
        f = getattr(f, "__func__", f)
        return getattr(f, "__code__", f)

    def __repr__(self):
        return f"<gt.function {self._name}>"


class _WeakMethod:
    """A function bound as a method to an instance it holds weakly (a ``gt.function``
    method's traces live as long as the instance, not longer)."""

    def __init__(self, func, instance, _ref=None):
        self._ref = _ref if _ref is not None else weakref.ref(instance)
        functools.update_wrapper(self, func)
        self.__func__ = func
        params = list(inspect.signature(func).parameters.values())[1:]
        self.__signature__ = inspect.Signature(params)

    @property
    def __self__(self):
        return self._ref()

    def with_function(self, func):
        """The same binding of another function (AutoGraph's conversion)."""
        return _WeakMethod(func, self._ref(), self._ref)

    def __call__(self, *args, **kwargs):
        # As TF's weak method target: once the instance is gone, `self` is None.
        return self.__func__(self._ref(), *args, **kwargs)


class _TracingDetectors:
    """TF's frequent-retracing warning: 5 traces within the last 10 calls of a Python
    function warn (twice at most per function). Calls that find a trace count only when
    they take the Python path (the native fast path keeps no count)."""

    HISTORY = 10
    THRESHOLD = 5
    MAX_WARNINGS = 2

    def __init__(self):
        self._lock = threading.Lock()
        self._state = weakref.WeakKeyDictionary()
        self._plain = {}

    def _get(self, key):
        try:
            return self._state.setdefault(key, [[], 0, 0])
        except TypeError:
            return self._plain.setdefault(id(key), [[], 0, 0])

    def called(self, key):
        with self._lock:
            st = self._get(key)
            if not st[0]:
                st[0].append(0)
            st[0][-1] += 1
            st[1] += 1

    def traced(self, key, name):
        with self._lock:
            st = self._get(key)
            calls = st[0]
            st[1] += 1
            calls.append(1)
            while calls and st[1] - calls[0] > self.HISTORY:
                st[1] -= calls.pop(0)
            if st[2] >= self.MAX_WARNINGS or len(calls) < self.THRESHOLD:
                return
            st[2] += 1
        _logger.warning(
            "%d out of the last %d calls to %s triggered gt.function retracing. Tracing is "
            "expensive and the excessive number of tracings could be due to (1) creating "
            "@gt.function repeatedly in a loop, (2) passing tensors with different shapes, (3) "
            "passing Python objects instead of tensors. For (1), define your @gt.function outside "
            "of the loop. For (2), @gt.function has reduce_retracing=True option that can avoid "
            "unnecessary retracing. For (3), see TF's guide on controlling retracing "
            "(https://www.tensorflow.org/guide/function#controlling_retracing).",
            len(calls),
            st[1],
            name,
        )


_TRACING_DETECTORS = _TracingDetectors()
_logger = logging.getLogger("gradtape")


class _SlicesArg(collections.namedtuple("_SlicesArg", ["values", "indices", "dense_shape"])):
    """A ``gt.IndexedSlices`` argument as its component tensors, which the trace takes
    as inputs (TF passes a composite tensor's components); rebuilt for the traced
    function by ``_unwrap_slices``."""

    __slots__ = ()


def _wrap_slices(x):
    """``x`` with each ``IndexedSlices`` leaf as a ``_SlicesArg``: its values and
    indices tensors (inputs of the trace) and its dense shape as Python ints (a static
    shape, part of the trace's key, as a tensor's shape is)."""

    def wrap(v):
        if not isinstance(v, IndexedSlices):
            return v
        shape = None if v.dense_shape is None else tuple(int(d) for d in _np.asarray(v.dense_shape).reshape(-1))
        return _SlicesArg(v.values, v.indices, shape)

    return _nest.map_structure(wrap, x)


def _unwrap_slices(x):
    """The inverse of ``_wrap_slices``."""
    if isinstance(x, _SlicesArg):
        return IndexedSlices(*x)
    if isinstance(x, dict):
        vals = {k: _unwrap_slices(v) for k, v in x.items()}
        return vals if type(x) is dict else type(x)(vals.items())
    if _nest._is_namedtuple(x):
        return type(x)(*[_unwrap_slices(v) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap_slices(v) for v in x)
    return x


class _SlicesOutput:
    """In a trace's ``out_is_tensor``: the output is a ``gt.IndexedSlices`` of
    ``n`` component tensors (values, indices and, when it has one, dense_shape)."""

    __slots__ = ("n",)

    def __init__(self, n):
        self.n = n


_SLICES = {2: _SlicesOutput(2), 3: _SlicesOutput(3)}


def _output_leaf(it, v, is_t):
    """One output of a graph run: the next tensor, an ``IndexedSlices`` of the next
    tensors, or the traced Python value ``v``."""
    if isinstance(is_t, _SlicesOutput):
        values, indices = next(it), next(it)
        return IndexedSlices(values, indices, next(it) if is_t.n == 3 else None)
    return next(it) if is_t else v


def _relax(spec, t):
    """The spec of ``spec``'s dtype whose dims are ``None`` where ``t``'s differ."""
    shape = tuple(t.shape)
    if spec._shape is None or len(spec._shape) != len(shape):
        return TensorSpec(None, spec.dtype)
    return TensorSpec(tuple(a if a == b else None for a, b in zip(spec._shape, shape)), spec.dtype)


def _flatten_up_to(spec, x):
    """``x``'s parts where ``spec`` (a nest of ``TensorSpec``) has its leaves (a nested
    list for a spec is one leaf, as TF converts it); ``None`` when the structures
    differ."""
    if isinstance(spec, TensorSpec):
        return [x]
    if isinstance(spec, dict):
        if not isinstance(x, dict) or set(x) != set(spec):
            return None
        parts = [_flatten_up_to(spec[k], x[k]) for k in _nest._sorted_keys(spec)]
    elif isinstance(spec, (list, tuple)):
        if not isinstance(x, (list, tuple)) or len(x) != len(spec):
            return None
        parts = [_flatten_up_to(s, v) for s, v in zip(spec, x)]
    else:
        return None
    if any(p is None for p in parts):
        return None
    return [v for p in parts for v in p]


def _output_tensor(v, name):
    if v is None or isinstance(v, (_Tensor, _Variable, IndexedSlices)):
        return v
    try:
        return _native.convert_to_tensor(v)
    except (TypeError, ValueError):
        raise TypeError(
            "To be compatible with gt.function, Python functions must return zero or more "
            f"Tensors or None values; in compilation of {name}, found return value of type "
            f"{type(v).__name__}, which is not a Tensor."
        ) from None


def _has_tensor(x):
    return any(_is_tensor_arg(v) for v in _nest.flatten(x))


def _same_value(a, b):
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - a value without a truth value: compare identity
        return a is b


def _structure_key(x):
    if isinstance(x, dict):
        return ("dict", tuple((k, _structure_key(x[k])) for k in _nest._sorted_keys(x)))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(_structure_key(v) for v in x))
    return "."


def _example(spec):
    """A tensor fitting ``spec`` to trace with (ones; ``None`` dims of size 1, unknown
    rank a scalar)."""
    dims = spec._dims()
    shape = [] if dims is None else [1 if d is None else d for d in dims]
    return _native.ones(shape, dtype=spec.dtype)


def function(
    func=None,
    input_signature=None,
    autograph=True,
    jit_compile=None,
    reduce_retracing=False,
    experimental_implements=None,
    experimental_autograph_options=None,
    experimental_attributes=None,
    experimental_relax_shapes=None,
    experimental_compile=None,
    experimental_follow_type_hints=None,
    name=None,
):
    """Traces ``func`` into a graph per input signature; calls run the graph.
    TF equivalent: ``tf.function``. Usable as ``@gt.function``,
    ``@gt.function(input_signature=[...])`` and ``gt.function(f)``.

    ``jit_compile=True`` asks for the graph to be compiled as far as the engine can: the
    graph is always optimized (dead code removed, constants folded, repeated
    computations merged), so the flag changes nothing more.

    >>> import gradtape as gt
    >>> @gt.function
    ... def f(x):
    ...     return x * x + 1.0
    >>> print(f(gt.constant(3.0)))
    gt.Tensor(10.0, shape=(), dtype=float32)
    """
    del experimental_implements, experimental_autograph_options, experimental_attributes
    del experimental_follow_type_hints
    if experimental_relax_shapes:
        reduce_retracing = True
    if experimental_compile is not None and jit_compile is None:
        jit_compile = experimental_compile

    def wrap(f):
        return Function(
            f,
            input_signature=input_signature,
            autograph=autograph,
            jit_compile=jit_compile,
            reduce_retracing=reduce_retracing,
            name=name,
        )

    if func is None:
        return wrap
    return wrap(func)


# ---- control flow ----------------------------------------------------------------


def _to_tensors(flat, what):
    out = []
    for v in flat:
        if isinstance(v, _Variable):
            v = v.read_value()
        if not isinstance(v, _Tensor):
            try:
                v = _native.convert_to_tensor(v)
            except (TypeError, ValueError):
                raise TypeError(
                    f"{what} must return tensors (or values convertible to tensors), got {type(v).__name__}"
                ) from None
        out.append(v)
    return out


def cond(pred, true_fn=None, false_fn=None, name=None):
    """``true_fn()`` if ``pred`` else ``false_fn()``. Eagerly, only the taken branch runs;
    inside a ``gt.function`` both are traced and the choice is made on every call.
    TF equivalent: ``tf.cond``.

    >>> import gradtape as gt
    >>> print(gt.cond(gt.constant(2.0) > 1.0, lambda: gt.constant(1.0), lambda: gt.constant(0.0)))
    gt.Tensor(1.0, shape=(), dtype=float32)
    """
    del name
    if true_fn is None or false_fn is None:
        raise TypeError("cond: true_fn and false_fn are required")
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("cond: true_fn and false_fn must be callable")
    if not _native._is_tracing():
        return true_fn() if _truth(pred) else false_fn()
    # Inside a trace it is one graph node (TF's If op), also on a predicate captured from
    # outside (an eager tensor or a variable, read when the graph runs): both branches
    # are traced, the outputs are the node's (tensors connected to both branches).
    if isinstance(pred, bool):
        # TF's cond_v2: a Python bool has no place in a graph's If op.
        raise TypeError("pred must not be a Python bool")
    if isinstance(pred, _Variable):
        pred = pred.read_value()
    from ._everyday import TensorArray

    structure = {}
    flats = {}

    def branch(fn, key):
        def run():
            out = fn()
            structure[key] = out
            # A gt.TensorArray output is its elements stacked in one tensor.
            flat = []
            for v in _nest.flatten(out):
                flat.extend(v._loop_tensors() if isinstance(v, TensorArray) else [v])
            flats[key] = _to_tensors(flat, "cond's branches")
            if len(flats) == 2:
                _check_same_outputs(structure["t"], structure["f"], flats["t"], flats["f"])
            return flats[key]

        return run

    outs = _native._cond(_pred_tensor(pred), branch(true_fn, "t"), branch(false_fn, "f"))
    leaves = []
    it = iter(outs)
    for a in _nest.flatten(structure["t"]):
        leaves.append(a._from_loop_tensors(next(it), next(it)) if isinstance(a, TensorArray) else next(it))
    return _nest.pack_sequence_as(structure["t"], leaves)


def _check_same_outputs(a, b, flat_a, flat_b, na="true_fn", nb="false_fn", op="tf.cond"):
    """TF's cond_v2 check that two branches return the same structure (sequence types
    included) of values of the same dtypes: a TypeError naming both outputs."""
    from ._everyday import TensorArray
    from ._utils import assert_same_structure

    def error(detail):
        raise TypeError(
            f"{na} and {nb} arguments to {op} must have the same number, type, and overall structure "
            f"of return values.\n\n{na} output: {a!r}\n{nb} output: {b!r}\n\nError details:\n{detail}"
        )

    try:
        assert_same_structure(a, b)
    except (TypeError, ValueError) as e:
        error(str(e))
    for x, y in zip(_nest.flatten(a), _nest.flatten(b)):
        if isinstance(x, TensorArray) != isinstance(y, TensorArray):
            error(f"{x!r} and {y!r}: one is a TensorArray, the other is not")
    for x, y in zip(flat_a, flat_b):
        if x.dtype != y.dtype:
            error(f"{x!r} and {y!r} have different types")


def _pred_tensor(pred):
    t = pred if isinstance(pred, _Tensor) else _native.convert_to_tensor(pred)
    if t.dtype != _native.bool:
        raise TypeError(f"the predicate must be a bool tensor, got {t.dtype.name}")
    if t.shape.rank if hasattr(t.shape, "rank") else len(t.shape):
        if t.size != 1:
            raise ValueError(f"the predicate must be a scalar, got shape {tuple(t.shape)}")
        t = _native.reshape(t, [])
    return t


def _truth(pred):
    if isinstance(pred, (_Tensor, _Variable)):
        t = pred if isinstance(pred, _Tensor) else pred.read_value()
        if t.size != 1:
            raise ValueError(f"the predicate must be a scalar, got shape {tuple(t.shape)}")
        return bool(t)
    return bool(pred)


def while_loop(
    cond,
    body,
    loop_vars,
    shape_invariants=None,
    parallel_iterations=10,
    back_prop=True,
    swap_memory=False,
    maximum_iterations=None,
    name=None,
):
    """``while cond(*loop_vars): loop_vars = body(*loop_vars)``; returns the final loop
    variables (same structure, as tensors). Inside a ``gt.function`` the loop is one graph
    node run on every call, as TF's, also when the condition is a Python value (its
    outputs are tensors); there, as TF's ``while_v2``, a loop variable may not change its
    dtype, nor its shape unless ``shape_invariants`` allows it, and ``back_prop=False``
    stops the gradients of the outputs (eagerly, as TF, it changes nothing). A body
    result that is not a sequence is the one loop variable. TF equivalent:
    ``tf.while_loop``.

    >>> import gradtape as gt
    >>> print(gt.while_loop(lambda i: i < 10, lambda i: (i + 3,), [gt.constant(0)]))
    [<gt.Tensor: shape=(), dtype=int32, numpy=12>]
    """
    del swap_memory, name
    if not callable(cond) or not callable(body):
        raise TypeError("while_loop: cond and body must be callable")
    _check_parallel_iterations(parallel_iterations)
    single = not isinstance(loop_vars, (list, tuple)) or _nest._is_namedtuple(loop_vars)
    structure = (loop_vars,) if single else loop_vars
    invariants = None
    if shape_invariants is not None and _native._is_tracing():
        # (Eagerly TF's while_loop does not look at them.)
        invariants = _shape_invariants(structure, (shape_invariants,) if single else shape_invariants)

    def call_body(vs):
        out = body(*vs)
        if single:
            if not (
                isinstance(out, (list, tuple))
                and len(out) == 1
                and len(structure) == 1
                and not _nest._is_namedtuple(out)
            ):
                out = (out,)
        elif not _nest.is_nested(out):
            # As TF: a body result that is not a sequence is the one loop variable.
            out = type(structure)((out,)) if type(structure) in (list, tuple) else [out]
        return out

    if maximum_iterations is not None:
        # The counter rides along as one more loop variable.
        n_max = maximum_iterations

        def cond2(i, *vs):
            return _native.logical_and(i < n_max, _to_pred(cond(*vs)))

        def body2(i, *vs):
            return (i + 1, *call_body(vs))

        out = _loop(
            cond2,
            body2,
            (_native.constant(0),) + tuple(structure),
            None if invariants is None else [TensorShape([])] + invariants,
            back_prop,
            skip=1,
        )
        out = out[1:]
    else:
        out = _loop(lambda *vs: cond(*vs), lambda *vs: call_body(vs), tuple(structure), invariants, back_prop)
    if single:
        return out[0]
    return type(loop_vars)(out) if not _nest._is_namedtuple(loop_vars) else type(loop_vars)(*out)


def _check_parallel_iterations(n):
    """TF's check of ``parallel_iterations`` (the engine runs iterations in order)."""
    if isinstance(n, bool) or not isinstance(n, (int, _np.integer)) or n < 1:
        raise TypeError(f"'parallel_iterations' must be a positive integer, got {n!r}")


def _shape_invariants(structure, invariants):
    """The flat list (one per leaf of ``structure``) of the ``TensorShape`` each loop
    variable must keep (``None``: its shape on entry), as TF's ``shape_invariants``: a
    ``TensorShape``, a ``TensorSpec`` or ``None`` per loop variable."""
    out = []

    def walk(s, inv):
        if _nest.is_nested(s):
            if isinstance(s, dict):
                if not isinstance(inv, dict) or set(inv) != set(s):
                    raise ValueError(
                        "shape_invariants must have the same structure as loop_vars: "
                        f"{inv!r} for {s!r}"
                    )
                for k in _nest._sorted_keys(s):
                    walk(s[k], inv[k])
                return
            if isinstance(inv, TensorShape) or not isinstance(inv, (list, tuple)) or len(inv) != len(s):
                raise ValueError(
                    "The two structures don't have the same nested structure: shape_invariants "
                    f"must have the same structure as loop_vars, got {inv!r} for {s!r}"
                )
            for a, b in zip(s, inv):
                walk(a, b)
            return
        if inv is None:
            out.append(None)
        elif isinstance(inv, TensorSpec):
            out.append(inv.shape)
        elif isinstance(inv, TensorShape):
            out.append(inv)
        else:
            raise TypeError(f"'shape' must be one of TypeSpec, TensorShape or None. Received: {type(inv)}")

    walk(structure, invariants)
    return out


def _shape_fits(shape, invariant):
    """Whether ``shape`` (static, ``None`` dims unknown) is at least as specific as
    ``invariant`` (TF's ``_ShapeLessThanOrEqual``); dimensions the trace cannot tell pass."""
    if invariant.rank is None or shape.rank is None:
        return True
    if shape.rank != invariant.rank:
        return False
    return all(b is None or a is None or a == b for a, b in zip(shape.as_list(), invariant.as_list()))


def _to_pred(c):
    return c if isinstance(c, _Tensor) else _native.constant(bool(c))


def _final_tensor(v):
    """A loop's final value as TF's eager while_loop returns it: a tensor (a TensorArray
    stays one)."""
    from ._everyday import TensorArray

    if isinstance(v, (_Tensor, TensorArray)):
        return v
    if isinstance(v, _Variable):
        return v.read_value()
    try:
        return _native.convert_to_tensor(v)
    except (TypeError, ValueError):
        return v


def _loop(cond, body, vars_, invariants=None, back_prop=True, skip=0):
    """The loop over a tuple of (nested) loop variables. ``invariants``: one shape (or
    ``None``) per leaf; ``skip`` leading leaves are the package's own (not counted in
    the names errors give)."""
    first = cond(*vars_)
    # Inside a trace the loop is always a graph loop, as TF's while_loop is in a graph,
    # even with a Python condition or loop variables that are Python numbers: the
    # outputs are the loop node's (tensors, connected to every loop variable), so a loop
    # variable the body replaces gets a zero gradient, not None. (AutoGraph's `while` on
    # a Python condition stays a Python loop: it does not come here.)
    if not (_native._is_symbolic(first) or _native._is_tracing()):
        c = first
        while _truth(c):
            new = body(*vars_)
            _check_loop_structure(vars_, new, check_types=True)
            vars_ = tuple(new)
            c = cond(*vars_)
        return tuple(_nest.map_structure(_final_tensor, list(vars_)))
    # A gt.TensorArray loop variable is carried as one tensor (its elements stacked).
    from ._everyday import TensorArray

    entry = _nest.flatten(vars_)
    arrays = {k: v for k, v in enumerate(entry) if isinstance(v, TensorArray)}

    def unpack(vs):
        it = iter(vs)
        leaves = [
            arrays[k]._from_loop_tensors(next(it), next(it)) if k in arrays else next(it) for k in range(len(entry))
        ]
        return _nest.pack_sequence_as(vars_, leaves)

    def carried(flat_new, what):
        out = []
        for k, v in enumerate(flat_new):
            if k in arrays:
                if not isinstance(v, TensorArray):
                    raise TypeError(
                        f"{what}: loop variable {k} enters the loop as a TensorArray, got {type(v).__name__}"
                    )
                out.extend(v._loop_tensors())
                continue
            if isinstance(v, TensorArray):
                raise TypeError(f"{what}: loop variable {k} becomes a TensorArray but does not enter the loop as one")
            out.append(v)
        return _to_tensors(out, what)

    flat = carried(entry, "while_loop's loop variables")
    # Where each plain (not TensorArray) loop variable sits among the carried tensors,
    # and the shape it must keep: its invariant, else its shape on entry.
    plain = []
    pos = 0
    for k in range(len(entry)):
        if k in arrays:
            pos += 2
            continue
        shape = _native._peek_static_shape(flat[pos])
        inv = invariants[k] if invariants is not None else None
        name = f"loop variable {k - skip}"
        if inv is not None and not _shape_fits(shape, inv):
            raise ValueError(
                f"The shape invariant specified for {name} is not compatible with the initial shape "
                f"of the loop variable. It enters the loop with shape {shape}, but the specified "
                f"shape invariant is {inv}."
            )
        plain.append((pos, name, inv if inv is not None else shape))
        pos += 1

    def c(vs):
        return _pred_tensor(_to_pred(cond(*unpack(vs))))

    def b(vs):
        new = body(*unpack(vs))
        _check_loop_structure(vars_, new)
        out = carried(_nest.flatten(new), "while_loop's body")
        # TF's while_v2 checks: a loop variable keeps its dtype, and its shape (or
        # shape invariant).
        for p, name, _want in plain:
            if out[p].dtype != flat[p].dtype:
                raise TypeError(
                    f"Loop var {name} enters the loop with type {flat[p].dtype.name} but has type "
                    f"{out[p].dtype.name} after 1 iteration. {name} type should remain constant."
                )
        for p, name, want in plain:
            got = _native._peek_static_shape(out[p])
            if not _shape_fits(got, want):
                raise ValueError(
                    f"Input tensor `{name}` enters the loop with shape {want}, but has shape {got} "
                    "after one iteration. To allow the shape to vary across iterations, use the "
                    "`shape_invariants` argument of gt.while_loop to specify a less-specific shape."
                )
        return out

    outs = _native._while_loop(c, b, flat)
    if not back_prop:
        # TF's while_v2: back_prop=False puts the outputs behind stop_gradient.
        outs = [_native.stop_gradient(t) for t in outs]
    return tuple(unpack(outs))


def _check_loop_structure(before, after, check_types=False):
    """TF's check of a body's result against the loop variables (``check_types`` as the
    eager loop does; a graph loop takes lists and tuples alike)."""
    from ._utils import assert_same_structure

    if not isinstance(after, (list, tuple)):
        raise ValueError(
            "The two structures don't have the same nested structure: the body must return "
            f"the loop variables ({len(before)}), got {after!r}"
        )
    assert_same_structure(list(after), list(before), check_types=check_types)


def print_(*inputs, output_stream=None, summarize=3, sep=" ", end="\n", name=None):
    """Prints tensors (and Python values) when the op runs: every call of a
    ``gt.function``, not only while tracing. Writes to ``sys.stderr`` by default, as TF.
    TF equivalent: ``tf.print``."""
    del name
    import sys

    tensors = []
    parts = []
    for x in inputs:
        if isinstance(x, _Variable):
            x = x.read_value()
        if isinstance(x, _Tensor):
            parts.append(None)
            tensors.append(x)
        else:
            parts.append(x)

    def emit(values):
        it = iter(values)
        text = sep.join(_format(next(it), summarize) if p is None else str(p) for p in parts)
        stream = output_stream if output_stream is not None else sys.stderr
        if isinstance(stream, str):
            stream = sys.stdout if "stdout" in stream else sys.stderr
        print(text, end=end, file=stream)

    # What a SavedModel stores of the print (a stream other than sys.stdout / sys.stderr
    # cannot be saved).
    stream_name = None
    if output_stream is None or output_stream is sys.stderr:
        stream_name = "stderr"
    elif output_stream is sys.stdout:
        stream_name = "stdout"
    elif isinstance(output_stream, str):
        stream_name = "stdout" if "stdout" in output_stream else "stderr"
    spec = None
    if stream_name is not None and isinstance(sep, str) and isinstance(end, str):
        import json

        spec = json.dumps({
            "parts": [None if p is None else str(p) for p in parts],
            "sep": sep,
            "end": end,
            "stream": stream_name,
            "summarize": summarize if isinstance(summarize, int) else None,
        })
    _native._effect(emit, tensors, spec)


def _print_saved(spec_text, tensors):
    """A loaded ``gt.print`` node: prints as the unsaved function's ``print_`` did."""
    import json
    import sys

    spec = json.loads(spec_text)
    it = iter(tensors)
    text = spec["sep"].join(_format(next(it), spec["summarize"]) if p is None else p for p in spec["parts"])
    print(text, end=spec["end"], file=sys.stdout if spec["stream"] == "stdout" else sys.stderr)


def _format(t, summarize):
    """TF's ``tf.print`` text of a tensor: floats in ``%g`` form (six significant
    digits), ``summarize`` items at each end of an axis (all when negative or None)."""
    a = t.numpy()

    def real(v):
        return f"{v:g}"

    def cplx(v):
        return f"({real(v.real)}+{real(v.imag)}j)"

    fmt = {"float_kind": real, "complexfloat": cplx}
    if a.ndim == 0:
        kind = a.dtype.kind
        return real(a) if kind == "f" else cplx(a) if kind == "c" else str(a)
    n = summarize if summarize is not None and summarize > 0 else None
    opts = {"threshold": 2 * n if n else _np.inf}
    if n:
        opts["edgeitems"] = n
    with _np.printoptions(**opts):
        return _np.array2string(a, separator=" ", formatter=fmt)


def switch_case(branch_index, branch_fns, default=None, name=None):
    """Runs ``branch_fns[branch_index]`` (``default``, or the last branch, when the index
    is out of range). ``branch_fns`` is a list of callables, of ``(index, callable)``
    pairs, or a dict. TF equivalent: ``tf.switch_case``.

    >>> import gradtape as gt
    >>> print(gt.switch_case(gt.constant(1), [lambda: gt.constant(10), lambda: gt.constant(20)]))
    gt.Tensor(20, shape=(), dtype=int32)
    """
    del name
    if not isinstance(branch_index, (_Tensor, _Variable)):
        raise TypeError(f"'branch_index' must be a Tensor, got {type(branch_index)}")
    if not branch_index.dtype.is_integer:
        raise TypeError(f"'branch_index' must be an integer Tensor, got {branch_index.dtype.name}")
    if not isinstance(branch_fns, (list, tuple, dict)):
        raise TypeError("'branch_fns' must be a list, tuple, or dict")
    if not branch_fns:
        raise ValueError("switch_case: branch_fns must not be empty")
    items = list(branch_fns.items()) if isinstance(branch_fns, dict) else list(branch_fns)
    if all(callable(fn) for fn in items):
        items = list(enumerate(items))
    for pair in items:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in 'branch_fns' must be a 2-tuple. Received {pair!r}.")
        key, fn = pair
        if isinstance(key, bool) or not isinstance(key, int):
            raise TypeError(f"key must be a Python `int`, got {type(key)}")
        if not callable(fn):
            raise TypeError(f"fn for key {key} must be callable.")
    keys = [k for k, _ in items]
    if min(keys) < 0 or max(keys) >= len(keys) or len(set(keys)) != len(keys):
        raise ValueError(
            f"branch indices (keys) must form contiguous range of [0 to {len(keys)}) but found "
            f"{{{','.join(map(str, sorted(keys)))}}}"
        )
    pairs = sorted(items, key=lambda p: p[0])
    if default is None:
        default = pairs[-1][1]
    elif not callable(default):
        raise TypeError("switch_case: default must be callable")
    if not _native._is_tracing():
        i = int(branch_index if not isinstance(branch_index, _Variable) else branch_index.read_value())
        for k, fn in pairs:
            if k == i:
                return fn()
        return default()
    index = branch_index

    def chain(rest):
        if not rest:
            return default()
        (k, fn), tail = rest[0], rest[1:]
        return cond(_native.equal(index, k), fn, lambda: chain(tail))

    return chain(pairs)


def map_fn(
    fn,
    elems,
    dtype=None,
    parallel_iterations=None,
    back_prop=True,
    swap_memory=False,
    infer_shape=True,
    name=None,
    fn_output_signature=None,
):
    """``fn`` applied to each slice of ``elems`` along axis 0 (a nested structure of
    tensors is sliced together), the results stacked. Inside a ``gt.function`` on
    symbolic input it is one loop node; there ``back_prop=False`` stops the gradients
    of the result (eagerly, as TF, it changes nothing). ``fn_output_signature`` (or
    ``dtype``): the structure and dtypes of ``fn``'s result. TF equivalent:
    ``tf.map_fn``.

    >>> import gradtape as gt
    >>> print(gt.map_fn(lambda x: x * x, gt.constant([1.0, 2.0, 3.0])))
    gt.Tensor([1. 4. 9.], shape=(3,), dtype=float32)
    """
    del swap_memory, infer_shape, name
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {fn!r}")
    if parallel_iterations is not None:
        _check_parallel_iterations(parallel_iterations)
    if _native._is_tracing():
        from . import _autograph

        if _autograph.enabled():
            # As TF's map_fn (autograph.tf_convert under an enabled control status).
            fn = _autograph.convert_call(fn)
    signature = fn_output_signature if fn_output_signature is not None else dtype
    flat = [
        e.read_value() if isinstance(e, _Variable) else (e if isinstance(e, _Tensor) else _native.convert_to_tensor(e))
        for e in _nest.flatten(elems)
    ]
    if not flat:
        raise ValueError(
            "elems must be a Tensor or (possibly nested) sequence of Tensors. "
            f"Got {elems!r}, which does not contain any Tensors."
        )
    if any(not len(t.shape) for t in flat):
        raise ValueError("Elements in elems must be 1+ dimensional Tensors, not scalars")
    n0 = flat[0].shape[0]
    for t in flat[1:]:
        if t.shape[0] != n0:
            raise ValueError("map_fn: all elems must have the same size along axis 0")

    def item(i):
        return _nest.pack_sequence_as(elems, [t[i] for t in flat]) if _nest.is_nested(elems) else flat[0][i]

    def result(out):
        return _map_result(out, signature)

    if not any(_native._is_symbolic(t) for t in flat):
        outs = [result(fn(item(i))) for i in range(n0)]
        if not outs:
            raise ValueError("map_fn: elems is empty, so the output structure is unknown")
        leaves = [_nest.flatten(o) for o in outs]
        stacked = [_native.stack([row[k] for row in leaves]) for k in range(len(leaves[0]))]
        res = _nest.pack_sequence_as(outs[0], stacked)
    else:
        # Symbolic: a loop that grows the stacked results one row at a time.
        n = _native.shape(flat[0])[0]
        first = result(fn(item(0)))
        first_flat = _nest.flatten(first)
        acc0 = tuple(_native.expand_dims(t, 0) for t in first_flat)

        def body(i, *acc):
            # The loop body is traced on the loop's entry values, where i may already be
            # past the end (one element); the clamp keeps that trace in range and changes
            # nothing when the graph runs (i < n there).
            out = _nest.flatten(result(fn(item(_native.minimum(i, n - 1)))))
            return (i + 1, *[_native.concat([a, _native.expand_dims(o, 0)], 0) for a, o in zip(acc, out)])

        # The stacked results grow along axis 0.
        invariants = [TensorShape([])] + [TensorShape([None] * len(a.shape)) for a in acc0]
        loop = while_loop(lambda i, *acc: i < n, body, (_native.constant(1),) + acc0, shape_invariants=invariants)
        res = _nest.pack_sequence_as(first, list(loop[1:]))
    if not back_prop and _native._is_tracing():
        # TF's map_fn runs a while_loop with back_prop=False: its outputs stop gradients.
        res = _nest.map_structure(_native.stop_gradient, res)
    return res


def _map_result(out, signature):
    """``fn``'s result in map_fn as tensors, checked against ``fn_output_signature``
    (dtypes and ``TensorSpec``s in a structure) as TF checks it."""
    from . import errors
    from ._utils import assert_same_structure

    if signature is None:
        return _nest.pack_sequence_as(out, _to_tensors(_nest.flatten(out), "map_fn's fn"))
    try:
        assert_same_structure(signature, out)
    except (TypeError, ValueError) as e:
        detail = str(e)
        if not detail.startswith("The two structures"):
            detail = (
                "The two structures don't have the same nested structure.\n\n"
                f"First structure: {signature!r}\n\nSecond structure: {out!r}\n\nMore specifically: {detail}"
            )
        elif "nested structure" not in detail:
            detail = f"The two structures don't have the same nested structure. {detail}"
        raise type(e)(detail) from None
    leaves = []
    for spec, v in zip(_nest.flatten(signature), _nest.flatten(out)):
        want = spec.dtype if isinstance(spec, TensorSpec) else spec
        if isinstance(v, _Variable):
            v = v.read_value()
        if not isinstance(v, _Tensor):
            v = _native.convert_to_tensor(v, dtype=want)
        elif v.dtype != want:
            raise errors.InvalidArgumentError(
                f"map_fn: fn_output_signature gives dtype {want.name} but fn returned {v.dtype.name}"
            )
        leaves.append(v)
    return _nest.pack_sequence_as(out, leaves)


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """``fn`` over the slices of ``elems`` along axis 0, stacked: the values of
    ``map_fn``. TF equivalent: ``tf.vectorized_map``."""
    del fallback_to_while_loop, warn
    return map_fn(fn, elems)
