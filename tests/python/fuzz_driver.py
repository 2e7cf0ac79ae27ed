"""Fuzzing every public callable of ``gradtape`` in child processes (issue 10, item 3).

``test_fuzz.py`` runs this with a CI-sized budget; run it directly for the dev mode
(see ``test_fuzz.py``'s docstring). The parts:

- **Targets** (``targets()``): every public callable found by walking the package's
  namespaces (``gt``, ``gt.math``, ``gt.nn``, ``gt.linalg``, ``gt.random``, ...,
  recursing into gradtape submodules), plus, for each public class, its public
  methods, properties and operator dunders (``Tensor.__add__``, ``GradientTape.jacobian``,
  ...). A new public name is fuzzed without any change here; ``EXCLUDED`` lists, with a
  reason each, the few that cannot be called blindly, and ``unclassified()`` names any
  public attribute that is neither a target, excluded, a submodule nor a known constant
  (the test fails on it).
- **Calls**: call ``i`` of a run with seed ``s`` is ``targets[i % len(targets)]`` with
  arguments drawn from ``random.Random(f"{s}:{i}")`` alone, so any call can be replayed
  (``--replay I``). Arguments: tensors of every ``gt`` dtype and shapes from 0-d to
  rank 4, empty and huge-but-empty (``[0, 2**62]``); numpy arrays of every numpy dtype,
  Fortran-order, non-contiguous, big-endian, read-only, with NaN/inf; Python scalars
  incl. huge ints (2**31, 2**40, 2**62, 2**63-1, 2**64, -2**63) and NaN/inf; shapes with
  huge and negative entries; None, strings, ragged lists, dicts, callables.
- **Workers**: calls run in child processes, in batches, each under an address-space
  limit (``RLIMIT_AS``) so refused allocations are exercised. A worker reports each
  call before and after it runs; a worker that dies (abort, segfault), or a call that
  does not finish within the timeout, is a failure attributed to that call, and a
  fresh worker continues after it.
- **Outcomes**: a result (touched: ``.numpy()``, ``repr``), or any exception except
  the failures: ``pyo3_runtime.PanicException``, ``gt.errors.InternalError``,
  ``SystemError``, and BaseExceptions that are not Exceptions.
"""

from __future__ import annotations

import argparse
import collections
import enum
import inspect
import math
import os
import random
import select
import subprocess
import sys
import time
import traceback
import types

HERE = os.path.dirname(os.path.abspath(__file__))

# Huge sizes the issue names, and their neighbours.
HUGE = [2**31, 2**40, 2**62, 2**63 - 1]
BIG_INTS = HUGE + [2**32 - 1, 2**63, 2**64, 10**30, -(2**63), -(2**31) - 1]

# Public callables that are not fuzzed, and why. Every entry must exist (a stale entry
# fails the test), and every other public callable is fuzzed.
EXCLUDED = {
    # Replaces the gradient of a built-in op for the rest of the process: later calls
    # in the same worker would depend on the order calls ran in (not reproducible by
    # seed alone). Its own argument checks are pure Python.
    "RegisterGradient": "mutates the global gradient registry",
    "gradient_override": "mutates the global gradient registry",
    "no_gradient": "mutates the global gradient registry (a name registers once per process)",
    "gradient_override_map": "mutates the global gradient registry",
    # Runs its body while a user callable says so: a condition that is always true loops
    # forever (as in TF). Its own checks are Python; test_function.py covers it.
    "while_loop": "loops while a user callable returns true",
    # Turn a process-wide debugging mode on or off: later calls in the same worker would
    # depend on the order calls ran in. test_debugging.py covers them.
    "enable_explanations": "mutates a process-wide mode",
    "disable_explanations": "mutates a process-wide mode",
    "explanations": "mutates a process-wide mode",
    # Writes a file at the path it is given (any string the fuzzer draws).
    "plot_tape": "writes a file at an arbitrary path",
    # Start MPI (mpi4py) in the worker and install process-wide abort hooks; every
    # gt.distributed callable runs under mpiexec in test_distributed.py (the others are
    # fuzzed here, before init: they raise RuntimeError).
    "distributed.init": "starts MPI and installs abort-on-error hooks for the process",
    "distributed.shutdown": "frees the communicators init made",
    # Write files and directories at the path they are given (a fuzzed string is a
    # path in the working directory). Their loading halves are fuzzed; the writers'
    # argument checks are tested in test_saved_model.py and test_checkpoint.py.
    "save": "gt.saved_model.save writes a directory at the path it is given",
    "Checkpoint": "gt.train.Checkpoint.save/write write files at the path they are given",
    "CheckpointManager": "writes and deletes checkpoint files in the directory it is given",
    # Writes a file at the path it is given (the fuzz's strings would litter the working
    # directory); test_keras_models.py covers it and its errors.
    "save_weights": "writes a file named by its argument",
}

# Dunders fuzzed on classes that define them (operators and conversions); other
# dunders (``__init__``, ``__setattr__``, ``__enter__`` ...) are object protocol.
OPERATORS = [
    "__abs__", "__add__", "__and__", "__array__", "__bool__", "__eq__", "__float__",
    "__floordiv__", "__format__", "__ge__", "__getitem__", "__gt__", "__hash__",
    "__index__", "__int__", "__invert__", "__iter__", "__le__", "__len__", "__lt__",
    "__matmul__", "__mod__", "__mul__", "__ne__", "__neg__", "__or__", "__pos__",
    "__pow__", "__radd__", "__rand__", "__reduce__", "__repr__", "__rfloordiv__",
    "__rmatmul__", "__rmod__", "__rmul__", "__ror__", "__rpow__", "__rsub__",
    "__rtruediv__", "__rxor__", "__str__", "__sub__", "__truediv__", "__xor__",
    "__call__", "__copy__", "__deepcopy__", "__contains__", "__reversed__",
    "__dlpack__", "__dlpack_device__",
]

FAILURE_CLASSES = ("PanicException", "InternalError", "SystemError")


# --------------------------------------------------------------------------------------
# Targets


def _is_gradtape_module(m, gt):
    return isinstance(m, types.ModuleType) and m.__name__.startswith(gt.__name__ + ".")


def _public_names(ns):
    names = getattr(ns, "__all__", None)
    if names is None:
        names = [n for n in dir(ns) if not n.startswith("_")]
    return sorted(set(names))


def _walk(gt):
    """(qualified name, object) of every public attribute of every gradtape namespace."""
    seen_mods = set()
    out = []
    stack = [("", gt)]
    while stack:
        prefix, mod = stack.pop()
        if id(mod) in seen_mods:
            continue
        seen_mods.add(id(mod))
        for n in _public_names(mod):
            if not hasattr(mod, n):
                continue
            obj = getattr(mod, n)
            q = f"{prefix}{n}"
            if _is_gradtape_module(obj, gt):
                stack.append((q + ".", obj))
            out.append((q, obj))
    return out


def _is_constant(obj, gt):
    return obj is None or isinstance(obj, (str, int, float, bool, gt.DType, enum.Enum, tuple))


def _selftest_targets():
    """Targets that misbehave on purpose, to check that the harness catches each kind
    of failure (``GRADTAPE_FUZZ_SELFTEST=1``: only these and ``gt.add``)."""
    import gradtape as gt

    def abort(*a, **k):
        os.abort()

    def hang(*a, **k):
        time.sleep(3600)

    def system_error(*a, **k):
        raise SystemError("a bad internal call")

    def internal(*a, **k):
        raise gt.errors.InternalError("a broken invariant")

    def fine(*a, **k):
        raise ValueError("an ordinary error")

    return [("selftest.abort", "call", abort), ("selftest.hang", "call", hang),
            ("selftest.internal", "call", internal), ("selftest.ok_error", "call", fine),
            ("selftest.system_error", "call", system_error), ("add", "call", gt.add)]


def targets():
    """Sorted list of (name, kind, getter) to fuzz; kind: "call", "method", "attr"."""
    import gradtape as gt

    if os.environ.get("GRADTAPE_FUZZ_SELFTEST"):
        return _selftest_targets()

    found = {}
    for q, obj in _walk(gt):
        short = q.rsplit(".", 1)[-1]
        if short in EXCLUDED or q in EXCLUDED:
            continue
        if _is_gradtape_module(obj, gt) or _is_constant(obj, gt):
            continue
        if not callable(obj):
            continue
        key = id(obj)
        if key in found:
            continue  # the same object under another name (gt.add and gt.math.add)
        found[key] = (q, "call", obj)
        if isinstance(obj, type) and obj.__module__.startswith("gradtape"):
            for m in sorted(set(dir(obj))):
                if m in EXCLUDED or (m.startswith("_") and m not in OPERATORS):
                    continue
                # Only what gradtape defines (not object's or Exception's protocol).
                owner = next((k for k in obj.__mro__ if m in vars(k)), None)
                if owner is None or not owner.__module__.startswith("gradtape"):
                    continue
                raw = vars(owner)[m]
                kind = "attr" if isinstance(raw, (property, types.GetSetDescriptorType)) or (
                    not callable(raw) and not isinstance(raw, (staticmethod, classmethod))
                ) else "method"
                found[(id(obj), m)] = (f"{q}.{m}", kind, (obj, m))
    return sorted(found.values(), key=lambda t: t[0])


def unclassified():
    """Public names that are neither fuzzed, excluded, submodules nor constants."""
    import gradtape as gt

    names = {t[0] for t in targets()}
    objs = set()
    for t in targets():
        if t[1] == "call":
            objs.add(id(t[2]))
    bad = []
    for q, obj in _walk(gt):
        short = q.rsplit(".", 1)[-1]
        if short in EXCLUDED or q in EXCLUDED:
            continue
        if _is_gradtape_module(obj, gt) or _is_constant(obj, gt):
            continue
        if q in names or id(obj) in objs:
            continue
        bad.append(q)
    return bad


def stale_exclusions():
    import gradtape as gt

    present = {q.rsplit(".", 1)[-1] for q, _ in _walk(gt)} | {q for q, _ in _walk(gt)}
    # Method names too (an exclusion by method name applies to every public class).
    present |= {m for _, obj in _walk(gt) if inspect.isclass(obj) for m in dir(obj)}
    return sorted(e for e in EXCLUDED if e not in present)


# --------------------------------------------------------------------------------------
# Values


class Gen:
    """Random arguments for one call (everything from one ``random.Random``)."""

    def __init__(self, rng, gt, np):
        self.r = rng
        self.gt = gt
        self.np = np
        self.dtypes = [v for v in vars(gt).values() if isinstance(v, gt.DType)]
        self.dtypes = sorted(set(self.dtypes), key=lambda d: d.name)
        # Half the calls are "coherent": their tensors share one dtype and one shape
        # (square matrices often), and shape-like arguments fit that rank, so ops that
        # need matching operands get past their checks and into their kernels.
        self.coherent = rng.random() < 0.5
        self.base_dtype = self.pick(self.dtypes) if rng.random() < 0.3 else self.pick(
            [gt.float32, gt.float64])
        n = rng.randrange(0, 4)
        self.base_shape = self.pick([[], [n], [n, n], [2, n, n], [n, rng.randrange(0, 4)],
                                     [1, n], [0, self.pick(HUGE)]])

    def pick(self, seq):
        return seq[self.r.randrange(len(seq))]

    def dim(self):
        r = self.r.random()
        if r < 0.6:
            return self.r.randrange(0, 5)
        if r < 0.8:
            return self.r.randrange(0, 8)
        if r < 0.95:
            return self.pick(HUGE)
        return self.pick([-1, -2, 2**64, -(2**63)])

    def small_shape(self):
        return [self.r.randrange(0, 4) for _ in range(self.r.randrange(0, 4))]

    def shape(self):
        r = self.r.random()
        if r < 0.5:
            return self.small_shape()
        if r < 0.8:
            return [self.dim() for _ in range(self.r.randrange(0, 5))]
        # Huge but empty: describable (or not) without any element.
        s = [self.pick(HUGE) for _ in range(self.r.randrange(1, 3))]
        s.insert(self.r.randrange(len(s) + 1), 0)
        return s

    def np_array(self, shape=None):
        np, r = self.np, self.r
        shape = self.small_shape() if shape is None else shape
        dt = self.pick([
            "float32", "float64", "int32", "int64", "bool", "complex64", "complex128",
            "float16", "uint8", "int8", "int16", "uint16", "uint32", "uint64", ">f4", ">i8",
            "<f8", ">c16", "object", "U3", "datetime64[s]",
        ])
        n = int(np.prod(shape)) if shape else 1
        raw = np.array([r.choice([0, 1, -1, 2.5, -7.25, 1e30, -1e30, 3, 100]) for _ in range(n)])
        if r.random() < 0.2 and n:
            raw[r.randrange(n)] = r.choice([math.nan, math.inf, -math.inf])
        try:
            with np.errstate(all="ignore"):
                a = raw.astype(dt).reshape(shape)
        except (ValueError, TypeError, OverflowError):
            a = raw.reshape(shape)
        layout = r.random()
        if layout < 0.15 and a.ndim >= 2:
            a = np.asfortranarray(a)
        elif layout < 0.3 and a.ndim >= 1:
            a = np.repeat(a, 2, axis=0)[::2]  # non-contiguous view
        elif layout < 0.4 and a.ndim >= 2:
            a = a.T
        elif layout < 0.5 and a.ndim >= 1 and a.shape[0] > 1:
            a = a[::-1]
        if r.random() < 0.2:
            a = a.view()
            a.setflags(write=False)
        return a

    def tensor(self, dtype=None, shape=None):
        gt, np = self.gt, self.np
        if self.coherent and self.r.random() < 0.85:
            dtype = dtype or self.base_dtype
            shape = self.base_shape if shape is None else shape
        dt = dtype or self.pick(self.dtypes)
        if shape is None:
            shape = self.small_shape() if self.r.random() < 0.9 else [0, self.pick(HUGE)]
        try:
            if 0 in shape:
                return gt.zeros(shape, dtype=dt)
            if dt == gt.string:
                # Text tensors (issue 16): the fuzzer's strings, in the drawn shape.
                n = int(np.prod(shape)) if shape else 1
                texts = np.empty(n, dtype=object)
                texts[:] = [self.string().encode() for _ in range(n)]
                return gt.constant(texts.reshape(shape))
            vals = self.np_array(shape)
            with np.errstate(all="ignore"):
                vals = np.asarray(vals, dtype=np.float64) if vals.dtype.kind in "OUM" else vals
            return gt.cast(gt.constant(vals), dt) if vals.dtype.kind != "c" or dt.is_complex else gt.zeros(shape, dt)
        except Exception:
            return gt.constant(self.r.random())

    def float_tensor(self):
        return self.tensor(dtype=self.pick([self.gt.float32, self.gt.float64]))

    def scalar(self):
        return self.pick([
            0, 1, -1, 2, 3, 0.5, -2.5, math.nan, math.inf, -math.inf, True, False, 1e308,
            -0.0, 1j, 2 + 3j, self.np.float16(1.5), self.np.uint64(2**64 - 1),
            self.np.int8(-3), self.np.float64(math.nan),
        ] + BIG_INTS)

    def string(self):
        return self.pick([
            "", "abc", "float32", "int64", "complex128", "CONSTANT", "REFLECT", "SYMMETRIC",
            "euclidean", "fro", "ij,jk->ik", "ii", "...ij->...ji", "a...,b", "->", "zero",
            "none", "NHWC", "\x00", "é", "relu", "linear", "glorot_uniform", "zeros",
        ])

    def junk(self):
        return self.pick([
            None, [], {}, (), [[1, 2], [3]], [[1.0], [2.0, 3.0]], [None], object(), b"xy",
            [1, "a"], {"a": 1}, lambda *a, **k: None, print, type, Ellipsis, slice(None),
            [float("nan")] * 3, [[[]]], range(3), iter([1, 2]), self.np.float64,
        ])

    def variable(self):
        gt = self.gt
        try:
            return gt.Variable(self.tensor(), trainable=self.r.random() < 0.8)
        except Exception:
            return gt.Variable(1.0)

    def any(self):
        r = self.r.random()
        if r < 0.35:
            return self.tensor()
        if r < 0.5:
            return self.np_array()
        if r < 0.65:
            return self.scalar()
        if r < 0.75:
            return self.shape()
        if r < 0.82:
            return self.string()
        if r < 0.87:
            return self.pick(self.dtypes)
        if r < 0.9:
            return self.variable()
        return self.junk()

    def index(self):
        parts = []
        for _ in range(self.r.randrange(1, 4)):
            k = self.r.random()
            if k < 0.3:
                parts.append(self.pick([0, 1, -1, 2, -3] + BIG_INTS))
            elif k < 0.7:
                def b():
                    return self.pick([None, 0, 1, -1, 3, -2] + BIG_INTS)

                parts.append(slice(b(), b(), self.pick([None, 1, 2, -1, -2, 0] + BIG_INTS)))
            elif k < 0.8:
                parts.append(None)
            elif k < 0.9:
                parts.append(Ellipsis)
            else:
                parts.append(self.any())
        return parts[0] if len(parts) == 1 and self.r.random() < 0.5 else tuple(parts)

    def rank_list(self, lo, hi):
        """One int per axis of the coherent shape, from [lo, hi) (or a huge one)."""
        return [self.r.randrange(lo, hi) if self.r.random() < 0.9 else self.pick(BIG_INTS)
                for _ in self.base_shape]

    # An argument for a parameter, guessed from its name most of the time.
    def for_param(self, name):
        r, n = self.r, name.lower()
        if r.random() < 0.2:
            return self.any()
        if self.coherent and r.random() < 0.7:
            rank = len(self.base_shape)
            if n in ("begin",):
                return self.rank_list(0, 3)
            if n in ("size",):
                return self.rank_list(-1, 3)
            if n in ("multiples",):
                return self.rank_list(0, 4)
            if n in ("paddings",):
                return [[r.randrange(0, 3), r.randrange(0, 3)] for _ in range(rank)]
            if n in ("perm",):
                p = list(range(rank))
                r.shuffle(p)
                return p
            if "axis" in n and rank:
                return r.randrange(-rank, rank)
            if n in ("values", "inputs") and r.random() < 0.6:
                return [self.tensor() for _ in range(r.randrange(1, 4))]
            if n in ("mask",):
                return self.tensor(self.gt.bool)
            if n in ("indices",):
                return self.gt.constant(
                    [r.randrange(-1, 4) for _ in range(r.randrange(0, 4))], dtype=self.gt.int32)
            if n in ("labels",) and rank:
                return self.gt.zeros(self.base_shape[:-1], dtype=self.gt.int32) if r.random() < 0.5 \
                    else self.tensor()
        if n in ("shape", "dims", "multiples", "batch_shape", "perm", "begin", "size",
                 "input_shape", "noise_shape"):
            return self.shape() if r.random() < 0.8 else self.tensor(self.gt.int32, [r.randrange(0, 4)])
        if "axis" in n or n in ("axes", "ord_axis"):
            return self.pick([None, 0, 1, -1, 2, -2, [0, 1], [0, 0], [-1], []] + BIG_INTS[:2])
        if "dtype" in n:
            return self.pick(self.dtypes + ["float32", "uint8", None, float, int, "nope"])
        if n in ("num", "depth", "units", "num_rows", "num_columns", "num_or_size_splits",
                 "parallel_iterations", "k", "batch_dims", "seed"):
            return self.pick([0, 1, 2, 3, 5, -1, None] + BIG_INTS) if r.random() < 0.8 else self.shape()
        if n in ("paddings",):
            return [[self.pick([0, 1, 2, -1] + HUGE), self.pick([0, 1, 3] + HUGE)]
                    for _ in range(r.randrange(0, 4))]
        if n in ("equation",):
            return self.string()
        if n in ("mode", "ord", "padding", "activation", "kernel_initializer",
                 "bias_initializer", "unconnected_gradients", "name"):
            return self.pick([self.string(), None, 1, 2, math.inf, "euclidean", "zero"])
        if n in ("start", "limit", "delta", "stop", "minval", "maxval", "mean", "stddev",
                 "alpha", "rate", "learning_rate", "momentum", "epsilon", "clip_value_min",
                 "clip_value_max", "clip_norm", "on_value", "off_value", "value",
                 "constant_values", "beta_1", "beta_2", "l2", "threshold"):
            return self.scalar() if r.random() < 0.7 else self.tensor(shape=[])
        if n in ("persistent", "watch_accessed_variables", "keepdims", "trainable",
                 "transpose_a", "transpose_b", "adjoint_a", "adjoint_b", "adjoint", "lower",
                 "exclusive", "reverse", "training", "use_bias", "conjugate",
                 "experimental_use_pfor", "approximate", "center", "scale", "nesterov",
                 "amsgrad", "full_matrices", "compute_uv"):
            return self.pick([True, False, None, 0, 1, "yes"])
        if n in ("f", "fn", "func", "grad_fn", "loss", "cond", "body"):
            return self.pick([lambda *a, **k: a[0] if a else None, lambda x: x * 2, None, 3])
        if n in ("layers",):
            return self.pick([[], None, [self.gt.layers.Dense(2)], [3]])
        if n in ("grads_and_vars",):
            v = self.variable()
            return self.pick([[(self.tensor(), v)], [(None, v)], [], [(v, v)], None,
                              zip([self.tensor()], [v])])
        if n in ("var_list", "variables"):
            return [self.variable() for _ in range(r.randrange(0, 3))]
        if n in ("primals", "tangents", "sources", "target", "output_gradients"):
            return self.pick([self.float_tensor(), [self.float_tensor()], self.variable(),
                              {"a": self.float_tensor()}, None])
        if n in ("indices", "labels"):
            return self.tensor(self.pick([self.gt.int32, self.gt.int64]))
        if n in ("mask",):
            return self.tensor(self.gt.bool)
        if n in ("x", "y", "a", "b", "input", "input_", "tensor", "values", "params",
                 "features", "logits", "matrix", "rhs", "diagonal", "t", "initial_value",
                 "condition", "real", "imag", "inputs", "arg", "v", "z", "pred", "value_",
                 "chol", "l", "other", "key"):
            k = r.random()
            if k < 0.6:
                return self.tensor()
            if k < 0.75:
                return self.float_tensor()
            if k < 0.85:
                return self.np_array()
            if k < 0.9:
                return [self.tensor() for _ in range(r.randrange(0, 3))]
            return self.scalar()
        return self.any()


# --------------------------------------------------------------------------------------
# One call


def _instance(cls, g):
    """An instance to call a method of ``cls`` on (None when none can be made)."""
    gt, r = g.gt, g.r
    if cls is gt.Tensor:
        return g.tensor()
    if cls is gt.Variable:
        return g.variable()
    if cls is gt.GradientTape:
        return _recorded_tape(g)[0]
    if cls is gt.TensorShape:
        return gt.TensorShape(g.small_shape())
    if cls is gt.DType:
        return g.pick(g.dtypes)
    if isinstance(cls, type) and issubclass(cls, enum.Enum):
        return g.pick(list(cls))
    for make in (
        lambda: cls(),
        lambda: cls(r.randrange(1, 4)),
        lambda: cls(r.random(), "fuzz"),
        lambda: cls(g.any()),
    ):
        try:
            return make()
        except Exception:
            continue
    return None


def _recorded_tape(g):
    """A tape that recorded something: (tape, target, source)."""
    gt, r = g.gt, g.r
    x = g.float_tensor() if r.random() < 0.8 else g.variable()
    tape = gt.GradientTape(persistent=r.random() < 0.5,
                           watch_accessed_variables=r.random() < 0.8)
    y = x
    with tape:
        if r.random() < 0.9:
            tape.watch(x)
        try:
            for _ in range(r.randrange(0, 3)):
                y = g.pick([gt.sin, gt.square, gt.exp, lambda v: v * 2.0, gt.reduce_sum,
                            lambda v: gt.matmul(gt.reshape(v, [1, -1]), gt.reshape(v, [-1, 1])),
                            lambda v: v[::-1], gt.nn.softmax, gt.identity])(y)
        except Exception:
            pass
    return tape, y, x


def _special_args(name, g):
    """Realistic arguments for some targets part of the time (else: generic)."""
    r = g.r
    if name.startswith("GradientTape.") and r.random() < 0.6:
        tape, y, x = _recorded_tape(g)
        meth = name.split(".", 1)[1]
        if meth in ("gradient", "jacobian", "batch_jacobian"):
            kw = {}
            if r.random() < 0.4:
                kw["unconnected_gradients"] = g.pick(["zero", "none", g.gt.UnconnectedGradients.ZERO, "bad"])
            if meth != "gradient" and r.random() < 0.5:
                kw["parallel_iterations"] = g.pick([None, 1, 2, 0, -1] + HUGE)
            if meth != "gradient" and r.random() < 0.5:
                kw["experimental_use_pfor"] = r.random() < 0.5
            return tape, [y, x], kw
        return tape, None, None
    return None, None, None


def build_call(name, kind, obj, g):
    """(callable, args, kwargs, description) for one call of target ``name``."""
    if kind in ("method", "attr"):
        cls, meth = obj
        inst, args, kwargs = _special_args(name, g)
        if inst is None:
            inst = _instance(cls, g)
        if inst is None:
            return None
        if kind == "attr":
            return (lambda: getattr(inst, meth)), [], {}, f"getattr({_short(inst)}, {meth!r})"
        fn = getattr(inst, meth)
        if args is None:
            if meth == "__getitem__":
                args, kwargs = [g.index()], {}
            else:
                args, kwargs = _args_for(fn, g)
        return fn, args, kwargs, f"{_short(inst)}.{meth}"
    args, kwargs = _args_for(obj, g)
    return obj, args, kwargs, name


def _args_for(fn, g):
    r = g.r
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return [g.any() for _ in range(r.randrange(0, 4))], {}
    args, kwargs = [], {}
    for p in sig.parameters.values():
        if p.name in ("self", "cls"):
            continue
        if p.kind is p.VAR_POSITIONAL:
            args.extend(g.for_param("x") for _ in range(r.randrange(0, 3)))
            continue
        if p.kind is p.VAR_KEYWORD:
            if r.random() < 0.1:
                kwargs["bogus"] = g.any()
            continue
        required = p.default is p.empty
        if not required and r.random() < 0.6:
            continue
        if required and r.random() < 0.03:
            continue  # a missing argument
        v = g.for_param(p.name)
        if p.kind is p.POSITIONAL_ONLY or (p.kind is p.POSITIONAL_OR_KEYWORD and required and not kwargs):
            args.append(v)
        else:
            kwargs[p.name] = v
    if r.random() < 0.03:
        args.append(g.any())  # one too many
    return args, kwargs


def _short(v):
    try:
        s = repr(v)
    except BaseException as e:  # noqa: BLE001 - a description, never an outcome
        s = f"<{type(v).__name__}: repr raised {type(e).__name__}>"
    return s if len(s) <= 120 else s[:117] + "..."


def describe(fn_desc, args, kwargs):
    parts = [_short(a) for a in args] + [f"{k}={_short(v)}" for k, v in kwargs.items()]
    return f"{fn_desc}({', '.join(parts)})"


def _touch(v, depth=0):
    """Uses a result as a caller would: converts tensors to numpy, prints them."""
    if depth > 2:
        return
    if hasattr(v, "numpy") and callable(v.numpy):
        v.numpy()
        repr(v)
    elif isinstance(v, (list, tuple)):
        for x in v[:8]:
            _touch(x, depth + 1)
    elif isinstance(v, dict):
        for x in list(v.values())[:8]:
            _touch(x, depth + 1)


def is_failure(exc):
    if not isinstance(exc, Exception):
        return True  # PanicException and other BaseExceptions escaping `except Exception`
    return type(exc).__name__ in FAILURE_CLASSES


def run_one(seed, i, tgts, gt, np, verbose=False):
    """Runs call ``i``; returns (outcome class name, failed?, description)."""
    name, kind, obj = tgts[i % len(tgts)]
    g = Gen(random.Random(f"{seed}:{i}"), gt, np)
    desc = name
    try:
        built = build_call(name, kind, obj, g)
        if built is None:
            return "NoInstance", False, desc
        fn, args, kwargs, fdesc = built
        desc = describe(fdesc, args, kwargs)
        if verbose:
            print("call:", desc, flush=True)
        res = fn(*args, **kwargs)
        _touch(res)
        out = "ok"
    except BaseException as e:  # noqa: BLE001 - classifying every outcome is the point
        out = type(e).__name__
        if is_failure(e):
            tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
            return out, True, desc + "\n" + tb[-3000:]
    return out, False, desc


# --------------------------------------------------------------------------------------
# Worker (child process) and parent


def limit_memory(gib):
    import resource

    if gib > 0:
        lim = int(gib * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))


def worker(seed, start, stop, mem_gib):
    import warnings

    warnings.simplefilter("ignore")
    import numpy as np

    import gradtape as gt

    tgts = targets()
    limit_memory(mem_gib)
    out = os.fdopen(os.dup(1), "w", buffering=1)
    sys.stdout = open(os.devnull, "w")  # calls that print must not break the protocol
    for i in range(start, stop):
        out.write(f"B {i}\n")
        cls, failed, desc = run_one(seed, i, tgts, gt, np)
        if failed:
            out.write(f"F {i} {cls} " + desc.replace("\\", "\\\\").replace("\n", "\\n") + "\n")
        out.write(f"E {i} {cls}\n")
    out.write("DONE\n")
    out.flush()
    os._exit(0)  # no teardown work (e.g. tapes' destructors) after the last report


class Run:
    """Drives workers over calls [0, calls) and gathers the figures."""

    def __init__(self, seed, calls, batch, jobs, timeout, mem_gib, log=None, progress=None):
        self.seed, self.calls, self.batch, self.jobs = seed, calls, batch, jobs
        self.timeout, self.mem_gib, self.log = timeout, mem_gib, log
        self.progress, self._shown = progress, 0
        self.outcomes = collections.Counter()
        self.failures = []  # (kind, index, message)
        self.next = 0
        self.done_calls = 0

    def _spawn(self, start, stop):
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--seed", str(self.seed),
               "--start", str(start), "--stop", str(stop), "--mem-gib", str(self.mem_gib)]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL)
        return {"p": p, "start": start, "stop": stop, "cur": None, "buf": b"",
                "last": time.monotonic(), "err": b""}

    def _take(self):
        if self.next >= self.calls:
            return None
        start, stop = self.next, min(self.calls, self.next + self.batch)
        self.next = stop
        return start, stop

    def _describe(self, i):
        """The call's description, rebuilt in a child (building it may crash too)."""
        cmd = [sys.executable, os.path.abspath(__file__), "--describe", str(i),
               "--seed", str(self.seed)]
        try:
            p = subprocess.run(cmd, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return f"{self._tgts[i % len(self._tgts)][0]} (describing it hangs)"
        if p.returncode != 0:
            return f"{self._tgts[i % len(self._tgts)][0]} (describing it fails: status {p.returncode})"
        return p.stdout.decode("utf-8", "replace").strip()

    def _fail(self, kind, i, msg):
        self.failures.append((kind, i, msg))
        if self.log:
            self.log(f"FAILURE {kind} at call {i} (replay: --seed {self.seed} --replay {i}):\n{msg}")

    def go(self):
        self._tgts = targets()
        running = []
        t0 = time.monotonic()
        while True:
            while len(running) < self.jobs:
                rng = self._take()
                if rng is None:
                    break
                running.append(self._spawn(*rng))
            if not running:
                break
            fds = {w["p"].stdout.fileno(): w for w in running}
            fds.update({w["p"].stderr.fileno(): w for w in running})
            ready, _, _ = select.select(list(fds), [], [], 0.5)
            now = time.monotonic()
            for fd in ready:
                w = fds[fd]
                data = os.read(fd, 65536)
                if fd == w["p"].stderr.fileno():
                    w["err"] = (w["err"] + data)[-20000:]
                    continue
                if not data:
                    continue
                w["buf"] += data
                w["last"] = now
                *lines, w["buf"] = w["buf"].split(b"\n")
                for line in lines:
                    self._line(w, line.decode("utf-8", "replace"))
            for w in list(running):
                p = w["p"]
                finished = p.poll() is not None
                if finished:
                    # Drain what is left.
                    rest = p.stdout.read() or b""
                    for line in (w["buf"] + rest).split(b"\n"):
                        if line:
                            self._line(w, line.decode("utf-8", "replace"))
                    w["err"] += p.stderr.read() or b""
                    running.remove(w)
                    self._close(w)
                    if w.get("done"):
                        continue
                    i = w["cur"]
                    tail = w["err"][-4000:].decode("utf-8", "replace")
                    sig = -p.returncode if p.returncode < 0 else None
                    what = f"signal {sig}" if sig else f"exit status {p.returncode}"
                    if i is None:
                        # Between calls (a destructor, the collector) or at start-up.
                        last = w.get("last_done")
                        where = "before its first call" if last is None else f"after call {last}"
                        self._fail("worker", w["start"] if last is None else last,
                                   f"worker died {where} ({what})\n{tail}")
                        if last is not None and last + 1 < w["stop"]:
                            running.append(self._spawn(last + 1, w["stop"]))
                        continue
                    self.outcomes["ABORT"] += 1
                    self.done_calls += 1
                    self._fail("abort", i, f"{self._describe(i)}\n  worker died: {what}\n{tail}")
                    if i + 1 < w["stop"]:
                        running.append(self._spawn(i + 1, w["stop"]))
                elif w["cur"] is not None and now - w["last"] > self.timeout:
                    p.kill()
                    p.wait()
                    running.remove(w)
                    self._close(w)
                    i = w["cur"]
                    self.outcomes["HANG"] += 1
                    self.done_calls += 1
                    self._fail("hang", i, f"{self._describe(i)}\n  no result within {self.timeout} s")
                    if i + 1 < w["stop"]:
                        running.append(self._spawn(i + 1, w["stop"]))
                elif w["cur"] is None and now - w["last"] > self.timeout * 3:
                    p.kill()
                    p.wait()
                    running.remove(w)
                    self._close(w)
                    self._fail("worker", w["start"], "worker did not start in time")
        self.seconds = time.monotonic() - t0
        return self

    @staticmethod
    def _close(w):
        w["p"].stdout.close()
        w["p"].stderr.close()

    def _line(self, w, line):
        if line == "DONE":
            w["done"] = True
            return
        tag, _, rest = line.partition(" ")
        if tag == "B":
            w["cur"] = int(rest)
        elif tag == "E":
            i, _, cls = rest.partition(" ")
            self.outcomes[cls] += 1
            self.done_calls += 1
            w["cur"] = None
            w["last_done"] = int(i)
            if self.progress and self.done_calls - self._shown >= self.progress:
                self._shown = self.done_calls
                if self.log:
                    self.log(f"... {self.done_calls} calls, {len(self.failures)} failures")
        elif tag == "F":
            i, _, rest = rest.partition(" ")
            cls, _, desc = rest.partition(" ")
            msg = desc.replace("\\n", "\n").replace("\\\\", "\\")
            self._fail(cls, int(i), msg)

    def summary(self):
        lines = [
            f"seed {self.seed}: {self.done_calls} calls over {len(self._tgts)} targets in "
            f"{self.seconds:.1f} s ({self.done_calls / max(self.seconds, 1e-9):.0f} calls/s)",
            "outcomes: " + ", ".join(f"{k} {v}" for k, v in self.outcomes.most_common()),
            f"aborts {self.outcomes['ABORT']}, panics {self.outcomes['PanicException']}, "
            f"internal errors {self.outcomes['InternalError']}, hangs {self.outcomes['HANG']}, "
            f"failures {len(self.failures)}",
        ]
        return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=int(os.environ.get("GRADTAPE_FUZZ_CALLS", 20000)))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("GRADTAPE_FUZZ_SEED", 0)))
    ap.add_argument("--batch", type=int, default=2000)
    ap.add_argument("--jobs", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--mem-gib", type=float, default=1.0)
    ap.add_argument("--replay", type=int, help="run call I in this process, verbosely")
    ap.add_argument("--describe", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--stop", type=int, default=0, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        worker(a.seed, a.start, a.stop, a.mem_gib)
        return 0
    if a.describe is not None:
        import numpy as np

        import gradtape as gt

        tgts = targets()
        name, kind, obj = tgts[a.describe % len(tgts)]
        built = build_call(name, kind, obj, Gen(random.Random(f"{a.seed}:{a.describe}"), gt, np))
        print(name if built is None else describe(built[3], built[1], built[2]))
        return 0
    if a.replay is not None:
        import numpy as np

        import gradtape as gt

        limit_memory(a.mem_gib)
        cls, failed, desc = run_one(a.seed, a.replay, targets(), gt, np, verbose=True)
        print(f"outcome: {cls}{' (FAILURE)' if failed else ''}\n{desc}")
        return 1 if failed else 0
    run = Run(a.seed, a.calls, a.batch, a.jobs, a.timeout, a.mem_gib,
              log=lambda m: print(m, file=sys.stderr, flush=True),
              progress=max(a.calls // 20, 1000)).go()
    print(run.summary())
    return 1 if run.failures else 0


if __name__ == "__main__":
    sys.exit(main())
