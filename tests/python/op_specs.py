"""One table of op specs driving the gradient checks in ``test_gradcheck.py``.

A row says how to call an op (``fn`` over gradtape tensors), what numpy computes for
it (``ref`` over float64 arrays), which input shapes to sweep, how to sample inputs
inside the op's domain (away from kinks and poles, so that central differences are
valid), and to what order and tolerance the gradient is checked.

Adding an op is one line: ``row("name", lambda x: gt.name(x), np_ref, ...)``.
Ops that have no gradient go in ``NOT_DIFFERENTIABLE``; ``test_every_exported_op_has_a_row``
enforces it.

Complex: every row whose op accepts complex inputs (as TF's kernels do) is also checked
with genuinely complex inputs — the row's sampler gives the real part, the imaginary part
is drawn in (-0.5, 0.5) — in complex128 and complex64. So ``ref`` must be right for complex
arrays too (``np.conj`` where the op conjugates, ``np.abs(x) ** 2`` for a squared norm).
Ops TF registers for real dtypes only are listed in ``REAL_ONLY`` (their complex inputs
must raise, as TF's do). Rows built around ``gt.complex`` take real inputs and say
``complex=False``.
"""

import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

import gradtape as gt

# ----------------------------------------------------------------------------- samplers
# A sampler maps (rng, shape) to a float64 array inside an op's domain.


def normal(rng, shape):
    return rng.uniform(-1.5, 1.5, size=shape)


def positive(rng, shape):
    return rng.uniform(0.5, 2.0, size=shape)


def unit_open(rng, shape):
    """Inside (-0.9, 0.9): asin, acos."""
    return rng.uniform(-0.9, 0.9, size=shape)


def away0(rng, shape):
    """|x| in [0.3, 1.5] with a random sign: away from the kink of abs, relu, sign."""
    return rng.uniform(0.3, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def distinct(rng, shape):
    """Values at least 0.2 apart (no ties for max/min), away from 0."""
    n = int(np.prod(shape, dtype=np.int64))
    v = (rng.permutation(n) - n / 2.0 + 0.5) * 0.3 + rng.uniform(-0.05, 0.05, size=n)
    v = np.where(np.abs(v) < 0.1, v + 0.17, v)
    return v.reshape(shape)


def grid(rng, shape):
    """Multiples of 0.5 plus noise; with ``grid_offset`` two inputs are never within
    0.05 of each other: maximum/minimum away from ties even when broadcasting."""
    return 0.5 * rng.integers(-3, 4, size=shape) + rng.uniform(-0.1, 0.1, size=shape)


def grid_offset(rng, shape):
    return grid(rng, shape) + 0.25


def mod_numerator(rng, shape):
    """Odd integers +-0.4: x / y (with ``mod_denominator``) stays away from integers."""
    return 2.0 * rng.integers(-2, 3, size=shape) + 1.0 + rng.uniform(-0.4, 0.4, size=shape)


def mod_denominator(rng, shape):
    return rng.uniform(1.95, 2.05, size=shape)


def interval(lo, hi):
    def sample(rng, shape):
        return rng.uniform(lo, hi, size=shape)

    sample.__name__ = f"interval({lo}, {hi})"
    return sample


# ----------------------------------------------------------------------------- shapes
UNARY = [((),), ((3,),), ((2, 3),), ((1, 3, 1),), ((0,),)]
UNARY_NONEMPTY = UNARY[:-1]
BINARY = [
    ((), ()),
    ((3,), (3,)),
    ((2, 3), (2, 3)),
    ((2, 3), (3,)),
    ((3, 1), (1, 4)),
    ((2, 1, 3), (4, 1)),
    ((), (2, 3)),
    ((0, 3), (3,)),
]
BINARY_NONEMPTY = BINARY[:-1]
MATRIX = [((2, 3),)]
CUBE = [((2, 3, 4),)]


# ----------------------------------------------------------------------------- tolerances
# (rtol, atol) of the forward value against numpy, per dtype.
# float16 is computed in float32 and rounded once per op (as TF's half kernels): an
# op's error is one float16 rounding (2**-11 relative) per op it is composed of.
FORWARD_TOL = {"float16": (4e-3, 2e-3), "float32": (2e-5, 2e-6), "float64": (1e-12, 1e-13)}
# Ops with float16 kernels in TF (most float ops) run on all three float dtypes;
# those TF registers for float32/float64 (and complex) only say so with `dtypes=F32_64`.
ALL_FLOATS = ("float16", "float32", "float64")
F32_64 = ("float32", "float64")
# (rtol, atol) of analytic against numeric directional derivatives (float64).
GRAD_TOL = (1e-6, 1e-7)


@dataclass(frozen=True)
class OpSpec:
    name: str  # the exported op (or operator dunder) this row checks
    fn: Callable  # over gt tensors, one per input
    ref: Callable  # over float64 numpy arrays
    shapes: list  # list of cases: a tuple of input shapes each
    sample: object = normal  # one sampler, or a tuple of one per input
    case: str = ""  # variant label for the test id
    dtypes: tuple = ALL_FLOATS
    order: int = 2
    fwd_tol: dict = field(default_factory=lambda: dict(FORWARD_TOL))
    grad_tol: tuple = GRAD_TOL
    eps: float = 1e-6  # finite-difference step
    out_dtype: Optional[Callable] = None  # input dtype name -> output dtype name
    complex: bool = True  # also checked with complex inputs (unless the op is REAL_ONLY)
    real: bool = True  # checked with real inputs (False: a row for complex inputs only)

    @property
    def id(self):
        return f"{self.name}[{self.case}]" if self.case else self.name

    @property
    def arity(self):
        return len(self.shapes[0])

    def samplers(self):
        if callable(self.sample):
            return (self.sample,) * self.arity
        assert len(self.sample) == self.arity, self.id
        return tuple(self.sample)

    def expected_dtype(self, dtype):
        return self.out_dtype(dtype) if self.out_dtype else dtype


SPECS = []


def row(name, fn, ref, shapes=UNARY, **kw):
    SPECS.append(OpSpec(name, fn, ref, shapes, **kw))


def _np_erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _softplus(x):
    return np.logaddexp(0.0, x)


def _elu(x):
    return np.where(x > 0, x, np.expm1(x))


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _checker(shape):
    """A fixed boolean pattern of ``shape`` for ``where``."""
    n = int(np.prod(shape, dtype=np.int64))
    return (np.arange(n) % 3 != 1).reshape(shape)


def _where(x, y):
    c = _checker(np.broadcast_shapes(tuple(x.shape), tuple(y.shape)))
    return gt.where(gt.constant(c), x, y)


def _np_where(x, y):
    return np.where(_checker(np.broadcast_shapes(x.shape, y.shape)), x, y)


# ----------------------------------------------------------------------------- unary math
row("negative", gt.negative, np.negative)
row("__neg__", lambda x: -x, np.negative)
row("identity", gt.identity, lambda x: x)
row("abs", gt.abs, np.abs, sample=away0)
row("__abs__", lambda x: abs(x), np.abs, sample=away0)
row("sign", gt.sign, np.sign, sample=away0)
row("square", gt.square, np.square)
row("sqrt", gt.sqrt, np.sqrt, sample=positive)
row("rsqrt", gt.rsqrt, lambda x: 1.0 / np.sqrt(x), sample=positive)
row("reciprocal", gt.reciprocal, np.reciprocal, sample=positive)
row("reciprocal", gt.reciprocal, np.reciprocal, sample=interval(-2.0, -0.5), case="neg")
row("exp", gt.exp, np.exp)
row("expm1", gt.expm1, np.expm1)
row("log", gt.log, np.log, sample=positive)
row("log1p", gt.log1p, np.log1p, sample=interval(-0.5, 2.0))
row("sin", gt.sin, np.sin)
row("cos", gt.cos, np.cos)
row("tan", gt.tan, np.tan, sample=interval(-1.2, 1.2))
row("asin", gt.asin, np.arcsin, sample=unit_open)
row("acos", gt.acos, np.arccos, sample=unit_open)
row("atan", gt.atan, np.arctan, sample=interval(-3.0, 3.0))
row("sinh", gt.sinh, np.sinh)
row("cosh", gt.cosh, np.cosh)
row("tanh", gt.tanh, np.tanh)
row("sigmoid", gt.sigmoid, _sigmoid, sample=interval(-4.0, 4.0))
row("erf", gt.erf, _np_erf)
row("relu", gt.nn.relu, lambda x: np.maximum(x, 0.0), sample=away0)
row("elu", gt.nn.elu, _elu, sample=away0)
row("softplus", gt.nn.softplus, _softplus, sample=interval(-4.0, 4.0))
row("softsign", gt.nn.softsign, lambda x: x / (1.0 + np.abs(x)), sample=away0)

# ----------------------------------------------------------------------------- binary math
row("add", gt.add, np.add, BINARY)
row("__add__", lambda x, y: x + y, np.add, BINARY)
row("__add__", lambda x: 2.5 + x, lambda x: 2.5 + x, case="radd_scalar")
row("subtract", gt.subtract, np.subtract, BINARY)
row("__sub__", lambda x, y: x - y, np.subtract, BINARY)
row("__sub__", lambda x: 1.5 - x, lambda x: 1.5 - x, case="rsub_scalar")
row("multiply", gt.multiply, np.multiply, BINARY)
row("__mul__", lambda x, y: x * y, np.multiply, BINARY)
row("divide", gt.divide, np.divide, BINARY, sample=(normal, away0))
row("truediv", gt.truediv, np.divide, BINARY_NONEMPTY, sample=(normal, away0))
row("__truediv__", lambda x, y: x / y, np.divide, BINARY, sample=(normal, away0))
row("__truediv__", lambda x: 2.0 / x, lambda x: 2.0 / x, sample=away0, case="rdiv_scalar")
row("pow", gt.pow, np.power, BINARY, sample=(positive, interval(-2.0, 2.0)))
row("__pow__", lambda x, y: x**y, np.power, BINARY_NONEMPTY, sample=(positive, normal))
row("__pow__", lambda x: x**3.0, lambda x: x**3.0, case="cube")
row("__pow__", lambda x: 2.0**x, lambda x: 2.0**x, case="rpow_scalar")
row("maximum", gt.maximum, np.maximum, BINARY, sample=(grid, grid_offset))
row("minimum", gt.minimum, np.minimum, BINARY, sample=(grid, grid_offset))
row(
    "multiply_no_nan",
    gt.math.multiply_no_nan,
    lambda x, y: np.where(y == 0, 0.0, x * y),
    BINARY,
    dtypes=F32_64,
)
row("squared_difference", gt.squared_difference, lambda x, y: np.abs(x - y) ** 2, BINARY)
row("atan2", gt.atan2, np.arctan2, BINARY, sample=(away0, normal))
row("floormod", gt.floormod, np.mod, BINARY, sample=(mod_numerator, mod_denominator))
row("mod", gt.math.mod, np.mod, BINARY_NONEMPTY, sample=(mod_numerator, mod_denominator))
row("__mod__", lambda x, y: x % y, np.mod, BINARY_NONEMPTY, sample=(mod_numerator, mod_denominator))
row("where", _where, _np_where, BINARY)
row(
    "where",
    lambda x, y: gt.where(gt.constant([[True], [False]]), x, y),
    lambda x, y: np.where(np.array([[True], [False]]), x, y),
    [((2, 3), (2, 3)), ((2, 3), ()), ((3,), (2, 1))],
    case="cond_broadcast",
)

# ----------------------------------------------------------------------------- casts
row(
    "cast",
    lambda x: gt.cast(gt.cast(x, gt.float32), gt.float64),
    lambda x: x.astype(np.float32).astype(np.float64),
    out_dtype=lambda d: "float64",
    eps=0.25,  # linear, so any step is exact; float32 rounding needs a large one
    grad_tol=(1e-5, 1e-5),
    case="f64_f32_f64",
    complex=False,
)
row(
    "cast",
    lambda x: gt.cast(x, gt.float32),
    lambda x: x.astype(np.float32),
    out_dtype=lambda d: "float32",
    eps=0.25,
    grad_tol=(1e-5, 1e-5),
    case="to_f32",
    complex=False,
)

# ----------------------------------------------------------------------------- complex
# z = complex(a, b) with real a, b; results mapped back to reals. TF's Complex op takes
# float32 and float64 only (there is no complex32), so no float16 here.


def _c(a, b):
    return gt.complex(a, b)


def _nc(a, b):
    return a + 1j * b


def _re_im(z):
    return gt.real(z) + 2.0 * gt.imag(z)


def _np_re_im(z):
    return np.real(z) + 2.0 * np.imag(z)


PAIR = [((), ()), ((3,), (3,)), ((2, 3), (3,))]
row("complex", lambda a, b: _re_im(_c(a, b) * _c(a, b)), lambda a, b: _np_re_im(_nc(a, b) ** 2), PAIR, dtypes=F32_64, complex=False)
row("real", lambda a, b: gt.real(_c(a, b) * _c(a, b)), lambda a, b: np.real(_nc(a, b) ** 2), PAIR, dtypes=F32_64, complex=False)
row("imag", lambda a, b: gt.imag(_c(a, b) * _c(b, a)), lambda a, b: np.imag(_nc(a, b) * _nc(b, a)), PAIR, dtypes=F32_64, complex=False)
row("conj", lambda a, b: gt.imag(gt.conj(_c(a, b) * _c(a, b))), lambda a, b: np.imag(np.conj(_nc(a, b) ** 2)), PAIR, dtypes=F32_64, complex=False)
row("abs", lambda a, b: gt.abs(_c(a, b)), lambda a, b: np.abs(_nc(a, b)), PAIR, sample=(away0, normal), case="complex", dtypes=F32_64, complex=False)
row("angle", lambda a, b: gt.angle(_c(a, b)), lambda a, b: np.angle(_nc(a, b)), PAIR, sample=(positive, normal), dtypes=F32_64, complex=False)
_COMPLEX_UNARY = [
    ("exp", np.exp, normal),
    ("log", np.log, positive),
    ("sqrt", np.sqrt, positive),
    ("rsqrt", lambda z: 1.0 / np.sqrt(z), positive),
    ("reciprocal", np.reciprocal, positive),
    ("square", np.square, normal),
    ("sin", np.sin, normal),
    ("cos", np.cos, normal),
    ("tan", np.tan, interval(-0.6, 0.6)),
    ("sinh", np.sinh, normal),
    ("cosh", np.cosh, normal),
    ("tanh", np.tanh, interval(-0.6, 0.6)),
    ("negative", np.negative, normal),
]
for _name, _ref, _s in _COMPLEX_UNARY:
    row(
        _name,
        (lambda f: lambda a, b: _re_im(f(_c(a, b))))(getattr(gt, _name)),
        (lambda r: lambda a, b: _np_re_im(r(_nc(a, b))))(_ref),
        PAIR,
        sample=(_s, interval(-0.8, 0.8)),
        case="complex",
        dtypes=F32_64,
        complex=False,
    )
row(
    "divide",
    lambda a, b: _re_im(_c(a, b) / _c(b, a)),
    lambda a, b: _np_re_im(_nc(a, b) / _nc(b, a)),
    PAIR,
    sample=(positive, positive),
    case="complex",
    dtypes=F32_64,
        complex=False,
)
row(
    "pow",
    lambda a, b: _re_im(_c(a, b) ** _c(b, a)),
    lambda a, b: _np_re_im(_nc(a, b) ** _nc(b, a)),
    PAIR,
    sample=(positive, interval(-0.5, 0.5)),
    case="complex",
    dtypes=F32_64,
        complex=False,
)
row(
    "matmul",
    lambda a, b: _re_im(gt.matmul(_c(a, b), _c(b, a), adjoint_b=True)),
    lambda a, b: _np_re_im(_nc(a, b) @ np.conj(_nc(b, a)).T),
    [((2, 3), (2, 3))],
    case="complex_adjoint_b",
    dtypes=F32_64,
        complex=False,
)

# The complex ops applied to complex inputs directly (complex rows only).
row("real", gt.math.real, np.real, UNARY, case="of_complex", real=False)
row("imag", gt.math.imag, np.imag, UNARY, case="of_complex", real=False)
row("conj", gt.math.conj, np.conj, UNARY, case="of_complex", real=False)
row("angle", gt.math.angle, np.angle, UNARY, sample=positive, case="of_complex", real=False)
row(
    "cast",
    lambda z: gt.cast(gt.cast(z, gt.complex64), gt.complex128),
    lambda z: z.astype(np.complex64).astype(np.complex128),
    eps=0.25,  # linear, so any step is exact; complex64 rounding needs a large one
    grad_tol=(1e-5, 1e-5),
    case="c128_c64_c128",
    out_dtype=lambda d: "complex128",
    real=False,
)
row(
    "cast",
    lambda z: gt.cast(z, gt.float64),
    lambda z: np.real(z),
    case="complex_to_real",
    out_dtype=lambda d: "float64",
    real=False,
)

# ----------------------------------------------------------------------------- reductions


def _reduce_rows(name, ref, sample=normal, shapes=None):
    f = getattr(gt, name) if hasattr(gt, name) else getattr(gt.math, name)
    for case, kw, shp in [
        ("all", {}, shapes or [((),), ((3,),), ((2, 3),), ((2, 1, 3),)]),
        ("axis0", {"axis": 0}, [((3,),), ((2, 3),), ((2, 1, 3),)]),
        ("axis-1_keepdims", {"axis": -1, "keepdims": True}, [((2, 3),), ((2, 1, 3),)]),
        ("axes01", {"axis": [0, 1]}, [((2, 3),), ((2, 1, 3),)]),
        ("axes_neg", {"axis": (-1, 0), "keepdims": True}, [((2, 1, 3),)]),
    ]:
        npkw = dict(kw)
        if "axis" in npkw and isinstance(npkw["axis"], list):
            npkw["axis"] = tuple(npkw["axis"])
        row(
            name,
            # Bound by the outer lambda (ruff's B023 misses that).
            (lambda kw: lambda x: f(x, **kw))(kw),  # noqa: B023
            (lambda npkw: lambda x: ref(x, **npkw))(npkw),  # noqa: B023
            shp,
            sample=sample,
            case=case,
        )


_reduce_rows("reduce_sum", np.sum)
_reduce_rows("reduce_mean", np.mean)
_reduce_rows("reduce_max", np.max, sample=distinct)
_reduce_rows("reduce_min", np.min, sample=distinct)
_reduce_rows("reduce_prod", np.prod, sample=away0)
_reduce_rows("reduce_variance", np.var)
_reduce_rows("reduce_std", np.std, shapes=[((3,),), ((2, 3),), ((2, 1, 3),)])
_reduce_rows(
    "reduce_logsumexp",
    lambda x, axis=None, keepdims=False: np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims)),
)
row("reduce_sum", gt.reduce_sum, np.sum, [((0,),), ((0, 3),)], case="empty")
row("reduce_sum", lambda x: gt.reduce_sum(x, axis=0), lambda x: np.sum(x, axis=0), [((0, 3),)], case="empty_axis0")
row("reduce_logsumexp", lambda x: gt.reduce_logsumexp(x, axis=1), lambda x: np.log(np.sum(np.exp(x), axis=1)), [((2, 3),)], sample=interval(20.0, 30.0), case="large")

for _case, _kw, _ref, _s in [
    ("euclidean", {}, lambda x: np.sqrt(np.sum(np.abs(x) ** 2)), normal),
    ("euclidean_axis1", {"axis": 1}, lambda x: np.sqrt(np.sum(np.abs(x) ** 2, axis=1)), normal),
    ("euclidean_keepdims", {"axis": -1, "keepdims": True}, lambda x: np.sqrt(np.sum(np.abs(x) ** 2, axis=-1, keepdims=True)), normal),
    ("ord1", {"ord": 1}, lambda x: np.sum(np.abs(x)), away0),
    ("ord_inf_axis0", {"ord": np.inf, "axis": 0}, lambda x: np.max(np.abs(x), axis=0), distinct),
    ("ord3", {"ord": 3}, lambda x: np.sum(np.abs(x) ** 3) ** (1 / 3), away0),
]:
    row("norm", (lambda kw: lambda x: gt.norm(x, **kw))(_kw), _ref, MATRIX, sample=_s, case=_case)
row("norm", lambda x: gt.norm(gt.complex(x, 2.0 * x)), lambda x: np.sqrt(5.0 * np.sum(x * x)), MATRIX, case="complex", dtypes=F32_64, complex=False)

for _case, _kw in [
    ("axis0", {}),
    ("axis1", {"axis": 1}),
    ("axis-1_exclusive", {"axis": -1, "exclusive": True}),
    ("axis0_reverse", {"axis": 0, "reverse": True}),
    ("exclusive_reverse", {"axis": 1, "exclusive": True, "reverse": True}),
]:

    def _np_scan(op, axis=0, exclusive=False, reverse=False):
        def ref(x):
            y = np.flip(x, axis) if reverse else x
            c = op(y, axis=axis)
            if exclusive:
                ident = 0.0 if op is np.cumsum else 1.0
                c = np.concatenate([np.full_like(np.take(c, [0], axis), ident), np.delete(c, -1, axis)], axis)
            return np.flip(c, axis) if reverse else c

        return ref

    row("cumsum", (lambda kw: lambda x: gt.cumsum(x, **kw))(_kw), _np_scan(np.cumsum, **_kw), MATRIX, case=_case)
    row("cumprod", (lambda kw: lambda x: gt.cumprod(x, **kw))(_kw), _np_scan(np.cumprod, **_kw), MATRIX, sample=away0, case=_case)

# ----------------------------------------------------------------------------- shapes
row("reshape", lambda x: gt.reshape(x, [3, 2]), lambda x: x.reshape(3, 2), MATRIX, case="3x2")
row("reshape", lambda x: gt.reshape(x, [-1]), lambda x: x.reshape(-1), [((2, 3),), ((0, 3),)], case="flatten")
row("reshape", lambda x: gt.reshape(x, [1, 1]), lambda x: x.reshape(1, 1), [((),)], case="scalar")
row("reshape", lambda x: gt.reshape(x, (2, -1, 1)), lambda x: x.reshape(2, -1, 1), CUBE, case="infer")
row("transpose", gt.transpose, np.transpose, [((3,),), ((2, 3),), ((2, 3, 4),)])
row("transpose", lambda x: gt.transpose(x, perm=[1, 0, 2]), lambda x: np.transpose(x, (1, 0, 2)), CUBE, case="perm")
row("transpose", lambda x: gt.transpose(x, perm=[2, 0, 1], conjugate=True), lambda x: np.conj(np.transpose(x, (2, 0, 1))), CUBE, case="perm_conj")
row("expand_dims", lambda x: gt.expand_dims(x, 0), lambda x: np.expand_dims(x, 0), UNARY, case="0")
row("expand_dims", lambda x: gt.expand_dims(x, -1), lambda x: np.expand_dims(x, -1), UNARY, case="-1")
row("expand_dims", lambda x: gt.expand_dims(x, 1), lambda x: np.expand_dims(x, 1), MATRIX, case="1")
row("squeeze", gt.squeeze, np.squeeze, [((1, 3, 1),), ((1,),), ((2, 3),)])
row("squeeze", lambda x: gt.squeeze(x, axis=[0]), lambda x: np.squeeze(x, 0), [((1, 3, 1),)], case="axis0")
row("squeeze", lambda x: gt.squeeze(x, axis=-1), lambda x: np.squeeze(x, -1), [((1, 3, 1),)], case="axis-1")
for _src, _dst in [((3,), (2, 3)), ((1, 3), (4, 3)), ((), (2, 2)), ((2, 1), (2, 3)), ((2, 1, 3), (4, 2, 5, 3))]:
    row(
        "broadcast_to",
        (lambda d: lambda x: gt.broadcast_to(x, d))(_dst),
        (lambda d: lambda x: np.broadcast_to(x, d))(_dst),
        [(_src,)],
        case="x".join(map(str, _src)) + "_to_" + "x".join(map(str, _dst)),
    )

# ----------------------------------------------------------------------------- indexing
for _case, _key, _shape in [
    ("int", 1, (3,)),
    ("neg_int", -1, (2, 3)),
    ("slice", slice(1, 3), (4,)),
    ("neg_step", slice(None, None, -1), (4,)),
    ("neg_step2", slice(None, None, -2), (5,)),
    ("neg_start_stop", (slice(-1, 0, -1), slice(None)), (3, 2)),
    ("steps2d", (slice(None, None, 2), slice(None, None, -1)), (3, 4)),
    ("ellipsis_int", (Ellipsis, 0), (2, 3, 2)),
    ("newaxis", (None, slice(None), 1), (3, 2)),
    ("col_newaxis", (slice(None), None), (3,)),
    ("ellipsis_newaxis", (Ellipsis, None), (2, 3)),
    ("empty", slice(5, None), (3,)),
    ("out_of_range_slice", slice(-10, 10), (3,)),
]:
    row(
        "__getitem__",
        (lambda k: lambda x: x[k])(_key),
        (lambda k: lambda x: x[k])(_key),
        [(_shape,)],
        case=_case,
    )
row("__getitem__", lambda x: x[gt.constant(1)], lambda x: x[1], [((3, 2),)], case="tensor_int")

# ----------------------------------------------------------------------------- matmul
_MM = [((2, 3), (3, 4)), ((2, 2, 3), (3, 4)), ((1, 2, 3), (2, 3, 2)), ((1, 1), (1, 1)), ((0, 3), (3, 2))]
row("matmul", gt.matmul, np.matmul, _MM)
row("__matmul__", lambda a, b: a @ b, np.matmul, _MM[:3])
row("matmul", lambda a, b: gt.matmul(a, b, transpose_a=True), lambda a, b: np.swapaxes(a, -1, -2) @ b, [((3, 2), (3, 4)), ((2, 3, 2), (3, 4))], case="transpose_a")
row("matmul", lambda a, b: gt.matmul(a, b, transpose_b=True), lambda a, b: a @ np.swapaxes(b, -1, -2), [((2, 3), (4, 3)), ((2, 3), (2, 4, 3))], case="transpose_b")
row(
    "matmul",
    lambda a, b: gt.matmul(a, b, transpose_a=True, transpose_b=True),
    lambda a, b: np.swapaxes(a, -1, -2) @ np.swapaxes(b, -1, -2),
    [((3, 2), (4, 3))],
    case="transpose_ab",
)
row("matmul", lambda a, b: gt.linalg.matmul(a, b, adjoint_a=True), lambda a, b: np.conj(a.T) @ b, [((3, 2), (3, 4))], case="adjoint_a")
row("matmul", lambda a, b: gt.linalg.matmul(a, b, adjoint_b=True), lambda a, b: a @ np.conj(np.swapaxes(b, -1, -2)), [((2, 3), (4, 3)), ((2, 2, 3), (4, 3))], case="adjoint_b")


# ----------------------------------------------------------------------------- slicing, joining


def _np_log_softmax(x, axis=-1):
    z = x - np.max(x, axis=axis, keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=axis, keepdims=True))


def _np_clip_by_norm(x, c, axes=None):
    n = np.sqrt(np.sum(x * x, axis=None if axes is None else tuple(axes), keepdims=True))
    return x * c / np.maximum(n, c)


for _case, _begin, _size, _shape in [
    ("scalar", [], [], ()),
    ("vector", [1], [2], (4,)),
    ("size_minus1", [0, 1], [2, -1], (2, 3)),
    ("cube", [1, 0, 1], [1, 3, 2], (2, 3, 4)),
    ("size1_axes", [0, 1, 0], [1, 2, 1], (1, 3, 1)),
    ("empty", [1, 0], [0, 3], (2, 3)),
]:
    row(
        "slice",
        (lambda b, z: lambda x: gt.slice(x, b, z))(_begin, _size),
        (lambda b, z, shp: lambda x: x[tuple(slice(bi, None if zi == -1 else bi + zi) for bi, zi in zip(b, z))])(
            _begin, _size, _shape
        ),
        [(_shape,)],
        case=_case,
    )

row("concat", lambda a, b: gt.concat([a, b], 0), lambda a, b: np.concatenate([a, b], 0), [((3,), (2,)), ((2, 3), (1, 3)), ((0, 3), (2, 3))], case="axis0")
row("concat", lambda a, b: gt.concat([a, b], axis=1), lambda a, b: np.concatenate([a, b], 1), [((2, 3), (2, 1)), ((1, 2, 1), (1, 1, 1))], case="axis1")
row(
    "concat",
    lambda a, b, c: gt.concat([a, b, c], -1),
    lambda a, b, c: np.concatenate([a, b, c], -1),
    [((2, 1), (2, 3), (2, 2))],
    case="three_axis-1",
)
row("concat", lambda a: gt.concat([a], 0), lambda a: a, [((2, 3),)], case="single")

row("stack", lambda a, b: gt.stack([a, b]), lambda a, b: np.stack([a, b]), [((), ()), ((3,), (3,)), ((2, 3), (2, 3))], case="axis0")
row("stack", lambda a, b: gt.stack([a, b], axis=1), lambda a, b: np.stack([a, b], 1), [((3,), (3,)), ((2, 1), (2, 1))], case="axis1")
row(
    "stack",
    lambda a, b, c: gt.stack([a, b, c], axis=-1),
    lambda a, b, c: np.stack([a, b, c], -1),
    [((2, 3), (2, 3), (2, 3))],
    case="three_axis-1",
)
row("stack", lambda a: gt.stack([a]), lambda a: a[None], [((3,),)], case="single")

# Multi-output ops: every output is restacked into one tensor so that the random output
# projection reaches each of them; the "partial" rows use only some outputs, so the
# others get no gradient and must count as zeros.
for _axis, _shp in [(0, (3,)), (0, (2, 3)), (1, (2, 3)), (-1, (2, 1, 3)), (1, (2, 1, 3))]:
    row(
        "unstack",
        (lambda a: lambda x: gt.stack(gt.unstack(x, axis=a)))(_axis),
        (lambda a: lambda x: np.moveaxis(x, a, 0))(_axis),
        [(_shp,)],
        case=f"axis{_axis}_{'x'.join(map(str, _shp))}",
    )
row(
    "unstack",
    lambda x: (lambda p: 2.0 * p[0] - p[2])(gt.unstack(x, num=3, axis=1)),
    lambda x: 2.0 * x[:, 0] - x[:, 2],
    [((2, 3),)],
    case="partial",
)

for _case, _splits, _axis, _shp in [
    ("num3_axis0", 3, 0, (3,)),
    ("num2_axis1", 2, 1, (2, 4)),
    ("num1", 1, 0, (2, 3)),
    ("sizes_axis-1", [1, 2, 1], -1, (2, 4)),
    ("sizes_minus1", [1, -1], 2, (2, 3, 4)),
    ("sizes_with_zero", [0, 3], 1, (2, 3)),
]:

    def _np_split(x, splits=_splits, axis=_axis):
        if isinstance(splits, int):
            parts = np.split(x, splits, axis)
        else:
            sizes = list(splits)
            if -1 in sizes:
                sizes[sizes.index(-1)] = x.shape[axis] - (sum(sizes) + 1)
            parts = np.split(x, np.cumsum(sizes)[:-1], axis)
        return np.concatenate(parts[::-1], axis)

    row(
        "split",
        (lambda sp, a: lambda x: gt.concat(gt.split(x, sp, axis=a)[::-1], a))(_splits, _axis),
        _np_split,
        [(_shp,)],
        case=_case,
    )
row(
    "split",
    lambda x: gt.split(x, [1, 2], axis=1)[1] * 3.0,
    lambda x: x[:, 1:] * 3.0,
    [((2, 3),)],
    case="partial",
)

for _case, _mult, _shp in [
    ("scalar", [], ()),
    ("vector", [2], (3,)),
    ("rows", [2, 1], (2, 3)),
    ("size1_axes", [2, 1, 3], (1, 3, 1)),
    ("zero", [1, 0], (2, 3)),
]:
    row(
        "tile",
        (lambda m: lambda x: gt.tile(x, m))(_mult),
        (lambda m: lambda x: np.tile(x, m) if m else x)(_mult),
        [(_shp,)],
        case=_case,
    )

for _case, _pads, _kw, _shp in [
    ("constant_vector", [[1, 2]], {}, (3,)),
    ("constant_matrix", [[0, 1], [2, 1]], {}, (2, 3)),
    ("constant_values", [[1, 0], [0, 2], [1, 1]], {"constant_values": 1.5}, (1, 3, 1)),
    ("reflect", [[1, 2], [2, 1]], {"mode": "REFLECT"}, (3, 4)),
    ("symmetric", [[1, 3], [0, 4]], {"mode": "symmetric"}, (3, 4)),
]:

    def _np_pad(x, pads=_pads, kw=_kw):
        mode = kw.get("mode", "constant").lower()
        if mode == "constant":
            return np.pad(x, pads, mode="constant", constant_values=kw.get("constant_values", 0.0))
        return np.pad(x, pads, mode=mode)

    row("pad", (lambda p, kw: lambda x: gt.pad(x, p, **kw))(_pads, _kw), _np_pad, [(_shp,)], case=_case)

# ----------------------------------------------------------------------------- gathers
# Fixed indices with duplicates, so that the gradient has to accumulate.
for _case, _idx, _axis, _shp in [
    ("vector_dups", [0, 2, 2, 4], None, (5,)),
    ("scalar_index", 1, None, (3, 2)),
    ("matrix_indices", [[1, 0], [3, 1]], 0, (4, 3)),
    ("axis1_dups", [3, 0, 3], 1, (2, 4)),
    ("axis-1", [[0], [0]], -1, (2, 1, 2)),
    ("empty_indices", np.zeros((0,), np.int32), 0, (3, 2)),
]:
    row(
        "gather",
        (lambda i, a: lambda x: gt.gather(x, i, axis=a))(_idx, _axis),
        (lambda i, a: lambda x: np.take(x, i, axis=a or 0))(_idx, _axis),
        [(_shp,)],
        case=_case,
    )

def _np_batch_gather(x, idx, axis, b):
    """TF's gather with batch_dims=b (the loop over the batch, for the reference)."""
    idx = np.asarray(idx)
    if b == 0:
        return np.take(x, idx, axis=axis)
    return np.stack([_np_batch_gather(x[k], idx[k], axis - 1, b - 1) for k in range(x.shape[0])])


for _case, _idx, _axis, _b, _shp in [
    ("batch1", [[2, 0, 2], [1, 1, 0]], None, 1, (2, 3)),
    ("batch1_axis2", [[1, 0], [0, 0]], 2, 1, (2, 3, 2)),
    ("batch2", [[[1], [0]], [[0], [1]]], None, 2, (2, 2, 2, 3)),
    ("batch-1_axis2", [[1, 1], [0, 1], [1, 0]], 2, -1, (3, 2, 2)),
]:
    row(
        "gather",
        (lambda i, a, b: lambda x: gt.gather(x, i, axis=a, batch_dims=b))(_idx, _axis, _b),
        (lambda i, a, b: lambda x: _np_batch_gather(
            x, i, (b % np.asarray(i).ndim) if a is None else a, b % np.asarray(i).ndim
        ))(_idx, _axis, _b),
        [(_shp,)],
        case=_case,
    )

for _case, _idx, _shp in [
    ("vector_dups", [0, 2, 2, 4], (5, 3)),
    ("matrix_ids", [[1, 0], [3, 1]], (4, 2)),
    ("rows_of_vector", [2, 2], (3,)),
]:
    row(
        "embedding_lookup",
        (lambda i: lambda x: gt.nn.embedding_lookup(x, i))(_idx),
        (lambda i: lambda x: np.take(x, i, axis=0))(_idx),
        [(_shp,)],
        case=_case,
    )

for _case, _reps, _axis, _shp in [
    ("scalar_flat", 2, None, (2, 3)),
    ("per_row", [2, 0, 1], 0, (3, 2)),
    ("axis-1", [1, 3], -1, (2, 2)),
]:
    row(
        "repeat",
        (lambda r, a: lambda x: gt.repeat(x, r, axis=a))(_reps, _axis),
        (lambda r, a: lambda x: np.repeat(x, r, axis=a))(_reps, _axis),
        [(_shp,)],
        case=_case,
    )

row("add_n", lambda x, y, z: gt.math.add_n([x, y, z]), lambda x, y, z: x + y + z,
    [((), (), ()), ((2, 3), (2, 3), (2, 3)), ((0,), (0,), (0,))])
row("add_n", lambda x: gt.math.add_n([x]), lambda x: x, [((3,),)], case="one")


def _np_clip_by_global_norm(xs, clip):
    norm = np.sqrt(sum(np.sum(x * x) for x in xs))
    return [x * clip / max(norm, clip) for x in xs], norm


# clip 0.5: the inputs' global norm is above it almost surely (clipped), clip 100: below
# (unchanged). Each row checks one output of the list, and the norm.
for _clip in (0.5, 100.0):
    for _k in (0, 1):
        row("clip_by_global_norm",
            (lambda c, k: lambda x, y: gt.clip_by_global_norm([x, None, y], c)[0][2 * k])(_clip, _k),
            (lambda c, k: lambda x, y: _np_clip_by_global_norm([x, y], c)[0][k])(_clip, _k),
            [((2, 3), (3,))], case=f"clip{_clip}_out{_k}")
row("clip_by_global_norm", lambda x, y: gt.clip_by_global_norm([x, y], 0.5)[1],
    lambda x, y: _np_clip_by_global_norm([x, y], 0.5)[1], [((2, 3), (3,))], case="norm")
row("global_norm", lambda x, y: gt.linalg.global_norm([x, y]),
    lambda x, y: np.sqrt(np.sum(x * x) + np.sum(y * y)), [((2, 3), (3,)), ((4,), ())])

for _case, _idx, _shp in [
    ("elements_dups", [[0, 1], [2, 3], [0, 1]], (3, 4)),
    ("rows", [[1], [0], [1]], (2, 3)),
    ("nested", [[[0, 0]], [[1, 2]]], (2, 3, 2)),
    ("scalar_result", [1, 0], (2, 3)),
]:
    row(
        "gather_nd",
        (lambda i: lambda x: gt.gather_nd(x, i))(_idx),
        (lambda i: lambda x: x[tuple(np.moveaxis(np.asarray(i), -1, 0))])(_idx),
        [(_shp,)],
        case=_case,
    )

for _case, _mask, _axis, _shp in [
    ("vector", [True, False, True, True], None, (4,)),
    ("matrix_mask", [[True, False, True], [False, False, True]], None, (2, 3)),
    ("rows", [False, True], None, (2, 3)),
    ("axis1", [True, False, True], 1, (2, 3, 2)),
    ("none_kept", [False, False], None, (2, 3)),
]:

    def _np_mask(x, m=_mask, axis=_axis):
        m = np.asarray(m)
        a = axis or 0
        lead = x.shape[:a]
        flat = x.reshape(lead + (-1,) + x.shape[a + m.ndim :])
        return np.compress(m.reshape(-1), flat, axis=a)

    row(
        "boolean_mask",
        (lambda m, a: lambda x: gt.boolean_mask(x, gt.constant(m), axis=a))(_mask, _axis),
        _np_mask,
        [(_shp,)],
        case=_case,
    )

# ----------------------------------------------------------------------------- clipping
row("clip_by_value", lambda x: gt.clip_by_value(x, -0.75, 0.75), lambda x: np.clip(x, -0.75, 0.75), UNARY, sample=grid)
row(
    "clip_by_value",
    lambda x, lo, hi: gt.clip_by_value(x, lo, hi),
    lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
    [((), (), ()), ((2, 3), (), ()), ((2, 3), (3,), (2, 1)), ((2, 3), (2, 3), (2, 3))],
    sample=(grid, interval(-0.8, -0.7), interval(0.7, 0.8)),
    case="tensor_bounds",
)
for _case, _cn, _axes, _shapes in [
    ("active", 0.2, None, UNARY_NONEMPTY),
    ("inactive", 10.0, None, UNARY),
    ("active_axes1", 0.2, [1], [((2, 3),), ((2, 3, 4),)]),
    ("axes_mixed", 1.2, [0], [((3, 4),)]),
]:
    row(
        "clip_by_norm",
        (lambda c, a: lambda x: gt.clip_by_norm(x, c, axes=a))(_cn, _axes),
        (lambda c, a: lambda x: _np_clip_by_norm(x, c, a))(_cn, _axes),
        _shapes,
        sample=away0,
        case=_case,
    )

# ----------------------------------------------------------------------------- nn


def relu6_domain(rng, shape):
    """Away from both kinks of relu6 (0 and 6)."""
    lo = rng.choice([-2.0, 0.3, 6.3], size=shape)
    return lo + rng.uniform(0.0, np.where(lo == 0.3, 5.4, 1.7))


_SELU_A, _SELU_S = 1.6732632423543772, 1.0507009873554805
_SOFTMAX_SHAPES = [((3,),), ((2, 3),), ((1, 3, 1),), ((2, 1),)]

# TF keeps alpha in a float32 attribute, also for float64 inputs.
row("leaky_relu", gt.nn.leaky_relu, lambda x: np.where(x > 0, x, float(np.float32(0.2)) * x), sample=away0)
row(
    "leaky_relu",
    lambda x: gt.nn.leaky_relu(x, alpha=0.01),
    lambda x: np.where(x > 0, x, float(np.float32(0.01)) * x),
    UNARY_NONEMPTY,
    sample=away0,
    case="alpha0.01",
)
row("relu6", gt.nn.relu6, lambda x: np.clip(x, 0.0, 6.0), sample=relu6_domain)
row("selu", gt.nn.selu, lambda x: _SELU_S * np.where(x > 0, x, _SELU_A * np.expm1(x)), sample=away0)
row("gelu", gt.nn.gelu, lambda x: 0.5 * x * (1.0 + _np_erf(x / math.sqrt(2.0))))
row(
    "gelu",
    lambda x: gt.nn.gelu(x, approximate=True),
    lambda x: 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3))),
    case="approximate",
)
row("silu", gt.nn.silu, lambda x: x * _sigmoid(x))
row("silu", lambda x: gt.nn.silu(x, beta=0.5), lambda x: x * _sigmoid(0.5 * x), UNARY_NONEMPTY, case="beta0.5")
row("swish", gt.nn.swish, lambda x: x * _sigmoid(x), UNARY_NONEMPTY)
row("l2_loss", gt.nn.l2_loss, lambda x: 0.5 * np.sum(x * x))
for _case, _kw, _npkw in [("last", {}, {}), ("axis0", {"axis": 0}, {"axis": 0})]:
    row(
        "softmax",
        (lambda kw: lambda x: gt.nn.softmax(x, **kw))(_kw),
        (lambda a: lambda x: np.exp(_np_log_softmax(x, **a)))(_npkw),
        _SOFTMAX_SHAPES,
        sample=interval(-3.0, 3.0),
        case=_case,
    )
    row(
        "log_softmax",
        (lambda kw: lambda x: gt.nn.log_softmax(x, **kw))(_kw),
        (lambda a: lambda x: _np_log_softmax(x, **a))(_npkw),
        _SOFTMAX_SHAPES,
        sample=interval(-3.0, 3.0),
        case=_case,
    )
row("softmax", lambda x: gt.math.softmax(x), lambda x: np.exp(_np_log_softmax(x)), [((2, 3),)], sample=interval(20.0, 30.0), case="large")
row("log_softmax", lambda x: gt.math.log_softmax(x, axis=-1), _np_log_softmax, [((2, 3),)], sample=interval(20.0, 30.0), case="large")

row(
    "sigmoid_cross_entropy_with_logits",
    lambda z, x: gt.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
    lambda z, x: np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x))),
    [((),) * 2, ((3,),) * 2, ((2, 3),) * 2],
    sample=(interval(0.0, 1.0), away0),
)
for _case, _kw, _shapes in [
    ("last", {}, [((3,),) * 2, ((2, 3),) * 2, ((2, 1),) * 2]),
    ("axis0", {"axis": 0}, [((3, 2),) * 2]),
]:
    # TF's logits gradient is softmax - labels, the true derivative only for labels that
    # sum to 1 along the class axis: the row normalizes positive labels first.
    row(
        "softmax_cross_entropy_with_logits",
        (lambda a, kw: lambda z, x: gt.nn.softmax_cross_entropy_with_logits(z / gt.reduce_sum(z, axis=a, keepdims=True), x, **kw))(
            _kw.get("axis", -1), _kw
        ),
        (lambda a: lambda z, x: -np.sum(z / np.sum(z, axis=a, keepdims=True) * _np_log_softmax(x, axis=a), axis=a))(
            _kw.get("axis", -1)
        ),
        _shapes,
        sample=(interval(0.2, 1.0), interval(-3.0, 3.0)),
        case=_case,
    )
for _case, _labels, _shp in [("vector", 1, (3,)), ("batch", [0, 2], (2, 3)), ("batch2d", [[0, 1, 2], [3, 0, 1]], (2, 3, 4))]:
    row(
        "sparse_softmax_cross_entropy_with_logits",
        (lambda lab: lambda x: gt.nn.sparse_softmax_cross_entropy_with_logits(gt.constant(lab), x))(_labels),
        (lambda lab: lambda x: -np.take_along_axis(_np_log_softmax(x), np.asarray(lab)[..., None], -1)[..., 0])(_labels),
        [(_shp,)],
        sample=interval(-3.0, 3.0),
        case=_case,
    )
for _case, _kw, _ref, _shapes in [
    ("all", {}, lambda x: x / np.sqrt(np.sum(np.abs(x) ** 2)), UNARY_NONEMPTY),
    ("axis0", {"axis": 0}, lambda x: x / np.sqrt(np.sum(np.abs(x) ** 2, axis=0, keepdims=True)), [((3,),), ((2, 3),)]),
    ("axis-1", {"axis": -1}, lambda x: x / np.sqrt(np.sum(np.abs(x) ** 2, axis=-1, keepdims=True)), [((2, 3),), ((1, 3, 1),)]),
    ("epsilon_dominates", {"epsilon": 10.0}, lambda x: x / np.sqrt(10.0), [((3,),)]),
]:
    row("l2_normalize", (lambda kw: lambda x: gt.math.l2_normalize(x, **kw))(_kw), _ref, _shapes, sample=away0, case=_case)

# ----------------------------------------------------------------------------- tensordot
for _case, _axes, _shapes in [
    ("axes0_outer", 0, [((2,), (3,)), ((), (2,))]),
    ("axes1", 1, [((2, 3), (3, 4)), ((3,), (3,))]),
    ("axes2", 2, [((2, 3, 4), (3, 4, 2))]),
    ("pairs", [[1], [0]], [((2, 3), (3, 1))]),
    ("pairs_permuted", [[0, 2], [2, 0]], [((2, 3, 4), (4, 1, 2))]),
]:
    row(
        "tensordot",
        (lambda a: lambda x, y: gt.tensordot(x, y, a))(_axes),
        (lambda a: lambda x, y: np.tensordot(x, y, a))(_axes),
        _shapes,
        case=_case,
    )
row("tensordot", lambda x, y: gt.linalg.tensordot(x, y, axes=1), lambda x, y: np.tensordot(x, y, 1), [((2, 3), (3,))], case="linalg")


# ----------------------------------------------------------------------------- linalg


def well_conditioned(rng, shape):
    """Square matrices with a dominant diagonal (|eigenvalues| well away from 0)."""
    a = rng.uniform(-0.5, 0.5, size=shape)
    return a + 2.5 * np.eye(shape[-1])


def _spd(a):
    """a aᴴ + I, so that Cholesky rows see Hermitian perturbations."""
    return gt.matmul(a, a, adjoint_b=True) + gt.eye(a.shape[-1], dtype=a.dtype)


def _np_spd(a):
    return a @ np.conj(np.swapaxes(a, -1, -2)) + np.eye(a.shape[-1])


# TF registers MatrixSolve, MatrixDeterminant, Cholesky and MatrixTriangularSolve for
# float32/float64 (and complex): no float16 rows. MatrixInverse has a float16 kernel.
_SQ = [((3, 3),), ((2, 2, 2),)]
_SQ_RHS = [((3, 3), (3, 2)), ((2, 2, 2), (2, 2, 1))]
row("solve", gt.linalg.solve, np.linalg.solve, _SQ_RHS, sample=(well_conditioned, normal), dtypes=F32_64)
row(
    "solve",
    lambda a, b: gt.linalg.solve(a, b, adjoint=True),
    lambda a, b: np.linalg.solve(np.conj(np.swapaxes(a, -1, -2)), b),
    _SQ_RHS,
    sample=(well_conditioned, normal),
    case="adjoint",
    dtypes=F32_64,
)
row("inv", gt.linalg.inv, np.linalg.inv, _SQ, sample=well_conditioned)  # TF has a float16 MatrixInverse kernel
row("det", gt.linalg.det, np.linalg.det, _SQ + [((1, 1),)], sample=well_conditioned, dtypes=F32_64)
row(
    "slogdet",
    lambda a: gt.linalg.slogdet(a)[1],
    lambda a: np.linalg.slogdet(a)[1],
    _SQ,
    sample=well_conditioned,
    dtypes=F32_64,
)
row("cholesky", lambda a: gt.linalg.cholesky(_spd(a)), lambda a: np.linalg.cholesky(_np_spd(a)), _SQ, dtypes=F32_64)


# Decompositions: a row checks a function of the factors that does not depend on their
# gauge (an eigenvector's or singular vector's sign, or phase for complex inputs), as
# TF's own gradient tests do: the values, |v|² elementwise, u vᴴ.
def _herm(a):
    """(a + aᴴ) / 2: the Hermitian matrices a complex row perturbs in."""
    return (a + gt.linalg.adjoint(a)) * 0.5


def _np_herm(a):
    return (a + np.conj(np.swapaxes(a, -1, -2))) * 0.5


def _absq(x):
    return x * gt.math.conj(x)


def _np_absq(x):
    return np.abs(x) ** 2


_EIG = [((3, 3),), ((2, 2, 2),), ((1, 1),)]
# eigh/eigvalsh read the lower triangle only: the gradient is lower triangular.
row("eigvalsh", gt.linalg.eigvalsh, np.linalg.eigvalsh, _EIG, dtypes=F32_64, complex=False, case="lower")
row("eigvalsh", lambda a: gt.linalg.eigvalsh(_herm(a)), lambda a: np.linalg.eigvalsh(_np_herm(a)), _EIG, dtypes=F32_64)
row("eigh", lambda a: gt.linalg.eigh(a)[0], lambda a: np.linalg.eigh(a)[0], _EIG, dtypes=F32_64, complex=False, case="e,lower")
row("eigh", lambda a: gt.linalg.eigh(_herm(a))[0], lambda a: np.linalg.eigh(_np_herm(a))[0], _EIG, dtypes=F32_64, case="e")
row(
    "eigh",
    lambda a: _absq(gt.linalg.eigh(a)[1]),
    lambda a: _np_absq(np.linalg.eigh(a)[1]),
    _EIG,
    dtypes=F32_64,
    complex=False,
    case="|v|²,lower",
)
row(
    "eigh",
    lambda a: _absq(gt.linalg.eigh(_herm(a))[1]),
    lambda a: _np_absq(np.linalg.eigh(_np_herm(a))[1]),
    _EIG,
    dtypes=F32_64,
    case="|v|²",
)
_SVD = [((3, 3),), ((3, 2),), ((2, 3),), ((2, 2, 3),)]
row(
    "svd",
    lambda a: gt.linalg.svd(a, compute_uv=False),
    lambda a: np.linalg.svd(a, compute_uv=False),
    _SVD,
    dtypes=F32_64,
    case="compute_uv=False",
)
row("svd", lambda a: gt.linalg.svd(a)[0], lambda a: np.linalg.svd(a, compute_uv=False), _SVD, dtypes=F32_64, case="s")
for _full in (False, True):
    row(
        "svd",
        (lambda f: lambda a: _absq(gt.linalg.svd(a, full_matrices=f)[1]))(_full),
        (lambda f: lambda a: _np_absq(np.linalg.svd(a, full_matrices=f)[0]))(_full),
        _SVD,
        dtypes=F32_64,
        case=f"|u|²,full_matrices={_full}",
    )
    row(
        "svd",
        (lambda f: lambda a: _absq(gt.linalg.svd(a, full_matrices=f)[2]))(_full),
        (lambda f: lambda a: _np_absq(np.conj(np.swapaxes(np.linalg.svd(a, full_matrices=f)[2], -1, -2))))(_full),
        _SVD,
        dtypes=F32_64,
        case=f"|v|²,full_matrices={_full}",
    )


def _polar(a):
    _, u, v = gt.linalg.svd(a)
    return gt.matmul(u, v, adjoint_b=True)


def _np_polar(a):
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    return u @ vh


# QR: r's diagonal signs are a convention (Householder's, as TF's and LAPACK's), so the
# values are compared as |q|², |r|² and q r (Householder's signs vary smoothly, so TF's
# tests also differentiate q and r directly: test_linalg.py).
_QR = [((3, 3),), ((4, 2),), ((2, 4),), ((2, 3, 2),)]
row("qr", lambda a: _absq(gt.linalg.qr(a)[0]), lambda a: _np_absq(np.linalg.qr(a)[0]), _QR, dtypes=F32_64, case="|q|²")
row("qr", lambda a: _absq(gt.linalg.qr(a)[1]), lambda a: _np_absq(np.linalg.qr(a)[1]), _QR, dtypes=F32_64, case="|r|²")
row(
    "qr",
    lambda a: _absq(gt.linalg.qr(a, full_matrices=True)[0]),
    lambda a: _np_absq(np.linalg.qr(a, mode="complete")[0]),
    [((3, 3),), ((2, 4),)],
    dtypes=F32_64,
    case="|q|²,full_matrices=True",
)
row(
    "qr",
    lambda a: gt.matmul(*gt.linalg.qr(a)),
    lambda a: a,
    _QR,
    dtypes=F32_64,
    case="q r",
)


_LS = [((4, 2), (4, 3)), ((2, 4), (2, 1)), ((2, 3, 3), (2, 3, 2))]


def _full_rank(rng, shape):
    """Matrices with a dominant (rectangular) diagonal: full rank, well conditioned."""
    return rng.uniform(-0.5, 0.5, size=shape) + 2.0 * np.eye(shape[-2], shape[-1])


def _np_ridge(a, b, l2):
    """(aᴴa + λI)⁻¹ aᴴ b, or aᴴ (aaᴴ + λI)⁻¹ b for wide a (the minimum-norm solution at λ = 0)."""
    ah = np.conj(np.swapaxes(a, -1, -2))
    if a.shape[-2] >= a.shape[-1]:
        return np.linalg.solve(ah @ a + l2 * np.eye(a.shape[-1]), ah @ b)
    return ah @ np.linalg.solve(a @ ah + l2 * np.eye(a.shape[-2]), b)


row("lstsq", gt.linalg.lstsq, lambda a, b: _np_ridge(a, b, 0.0), _LS, sample=(_full_rank, normal), dtypes=F32_64)


row(
    "lstsq",
    lambda a, b: gt.linalg.lstsq(a, b, l2_regularizer=0.5),
    lambda a, b: _np_ridge(a, b, 0.5),
    _LS,
    sample=(_full_rank, normal),
    dtypes=F32_64,
    case="l2_regularizer=0.5",
)




def _np_expm(a):
    """exp(a) through an eigendecomposition (the sampled matrices are diagonalizable)."""
    w, v = np.linalg.eig(a)
    out = v @ (np.exp(w)[..., None] * np.linalg.inv(v))
    return out if np.iscomplexobj(a) else out.real


# Small, medium and large norms: Padé degrees 3 to 13 and squarings.
for _scale in (0.005, 0.3, 3.0):
    row(
        "expm",
        gt.linalg.expm,
        _np_expm,
        [((3, 3),), ((2, 2, 2),)],
        sample=interval(-_scale, _scale),
        dtypes=F32_64,
        case=f"|a|<{_scale}",
        fwd_tol={"float32": (1e-4, 1e-5), "float64": (1e-10, 1e-12)},
    )


# u vᴴ ties the phases of u's and v's columns together (complex: TF's extra term).
row("svd", _polar, _np_polar, [((3, 3),), ((2, 2, 2),)], dtypes=F32_64, case="u vᴴ")


def _np_tri_solve(a, b, lower, adjoint):
    t = np.tril(a) if lower else np.triu(a)
    if adjoint:
        t = np.conj(np.swapaxes(t, -1, -2))
    return np.linalg.solve(t, b)


for _lower in (True, False):
    for _adj in (False, True):
        row(
            "triangular_solve",
            (lambda lo, ad: lambda a, b: gt.linalg.triangular_solve(a, b, lower=lo, adjoint=ad))(_lower, _adj),
            (lambda lo, ad: lambda a, b: _np_tri_solve(a, b, lo, ad))(_lower, _adj),
            _SQ_RHS,
            sample=(well_conditioned, normal),
            case=f"lower={_lower},adjoint={_adj}",
            dtypes=F32_64,
        )
row("trace", gt.linalg.trace, lambda a: np.trace(a, axis1=-2, axis2=-1), [((3, 3),), ((2, 2, 3),)])
row(
    "diag_part",
    gt.linalg.diag_part,
    lambda a: np.diagonal(a, axis1=-2, axis2=-1),
    [((3, 3),), ((2, 2, 3),), ((3, 2),)],
)
row("diag", gt.linalg.diag, lambda v: v[..., None] * np.eye(v.shape[-1]), [((3,),), ((2, 2),)])
row(
    "diag",
    lambda v: gt.linalg.diag(v, num_rows=2, num_cols=3),
    lambda v: np.pad(v[..., None] * np.eye(2), [(0, 0)] * (v.ndim - 1) + [(0, 0), (0, 1)]),
    [((2,),), ((3, 2),)],
    case="rectangular",
)
row("matvec", gt.linalg.matvec, lambda a, b: (a @ b[..., None])[..., 0], [((2, 3), (3,)), ((2, 2, 3), (2, 3))])
row(
    "matvec",
    lambda a, b: gt.linalg.matvec(a, b, transpose_a=True),
    lambda a, b: (np.swapaxes(a, -1, -2) @ b[..., None])[..., 0],
    [((3, 2), (3,))],
    case="transpose_a",
)
row("matrix_transpose", gt.linalg.matrix_transpose, lambda a: np.swapaxes(a, -1, -2), [((2, 3),), ((2, 3, 4),)])
row("adjoint", gt.linalg.adjoint, lambda a: np.conj(np.swapaxes(a, -1, -2)), [((2, 3),), ((2, 2, 3),)])
for _eq, _shapes in [
    ("ij,jk->ik", [((2, 3), (3, 4))]),
    ("ii->i", [((3, 3),)]),
    ("ii", [((3, 3),)]),
    ("bxby->bxy", [((2, 3, 2, 2),)]),
    ("ij,ij->i", [((2, 3), (2, 3))]),
    ("...ij,...jk->...ik", [((2, 2, 3), (3, 2))]),
    ("abc,cd,de->abe", [((2, 3, 2), (2, 2), (2, 3))]),
]:
    row(
        "einsum",
        (lambda e: lambda *xs: gt.einsum(e, *xs))(_eq),
        (lambda e: lambda *xs: np.einsum(e, *xs))(_eq),
        _shapes,
        case=_eq,
    )

# ----------------------------------------------------------------------------- convolutions and pooling
# numpy references of TF's NHWC convolutions and pools, written with explicit padding:
# SAME pads ``max((out - 1) * stride + (k - 1) * dilation + 1 - in, 0)`` elements, the
# smaller half before.


def _np_pads(size, k, s, d, padding):
    eff = (k - 1) * d + 1
    if padding == "SAME":
        out = -(-size // s)
        total = max((out - 1) * s + eff - size, 0)
        return out, total // 2, total - total // 2
    if padding == "VALID":
        return (size - eff) // s + 1, 0, 0
    before, after = padding
    return (size + before + after - eff) // s + 1, before, after


def _np_conv2d(x, w, strides=(1, 1), padding="VALID", dilations=(1, 1), depthwise=False):
    n, h, wd, c = x.shape
    kh, kw = w.shape[:2]
    pads = [padding] * 2 if isinstance(padding, str) else padding
    oh, pt, pb = _np_pads(h, kh, strides[0], dilations[0], pads[0])
    ow, pl, pr = _np_pads(wd, kw, strides[1], dilations[1], pads[1])
    xp = np.pad(x, [(0, 0), (pt, max(pb, 0)), (pl, max(pr, 0)), (0, 0)])
    out = 0.0
    for i in range(kh):
        for j in range(kw):
            y0, x0 = i * dilations[0], j * dilations[1]
            patch = xp[:, y0 : y0 + (oh - 1) * strides[0] + 1 : strides[0], x0 : x0 + (ow - 1) * strides[1] + 1 : strides[1], :]
            if depthwise:
                out = out + (patch[..., :, None] * w[i, j][None, None, None]).reshape(n, oh, ow, -1)
            else:
                out = out + np.einsum("nhwc,co->nhwo", patch, w[i, j])
    return out


def _np_conv2d_transpose(x, w, out_shape, strides=(1, 1), padding="VALID"):
    # The adjoint of _np_conv2d: scatter each input pixel's filter-weighted window.
    n, hh, ww, oc = out_shape
    kh, kw = w.shape[:2]
    _, pt, pb = _np_pads(hh, kh, strides[0], 1, padding)
    _, pl, pr = _np_pads(ww, kw, strides[1], 1, padding)
    big = np.zeros((n, hh + pt + pb + kh + strides[0], ww + pl + pr + kw + strides[1], oc), dtype=x.dtype)
    ih, iw = x.shape[1:3]
    for i in range(kh):
        for j in range(kw):
            big[:, i : i + (ih - 1) * strides[0] + 1 : strides[0], j : j + (iw - 1) * strides[1] + 1 : strides[1], :] += np.einsum("nhwi,oi->nhwo", x, w[i, j])
    return big[:, pt : pt + hh, pl : pl + ww, :]


def _np_pool(x, k, s, padding, kind):
    sp = x.ndim - 2
    outs, los = [], []
    for a in range(sp):
        o, before, _ = _np_pads(x.shape[1 + a], k[a], s[a], 1, padding)
        outs.append(o)
        los.append(before)
    out = np.zeros((x.shape[0], *outs, x.shape[-1]), dtype=x.dtype)
    for idx in np.ndindex(*outs):
        sl = []
        for a, o in enumerate(idx):
            start = o * s[a] - los[a]
            sl.append(slice(max(start, 0), min(start + k[a], x.shape[1 + a])))
        win = x[(slice(None), *sl, slice(None))]
        win = win.reshape(x.shape[0], int(np.prod(win.shape[1:-1])), x.shape[-1])
        out[(slice(None), *idx, slice(None))] = win.max(axis=1) if kind == "max" else win.mean(axis=1)
    return out


def _np_fused_batch_norm(x, scale, offset, eps=1e-3):
    m = x.mean(axis=(0, 1, 2))
    v = x.var(axis=(0, 1, 2))
    return (x - m) / np.sqrt(v + eps) * scale + offset


_CONV = [((2, 5, 6, 2), (3, 3, 2, 3)), ((1, 4, 4, 3), (1, 1, 3, 2)), ((0, 4, 4, 2), (2, 2, 2, 1))]
for _pad in ["SAME", "VALID"]:
    for _st, _dl in [((1, 1), (1, 1)), ((2, 2), (1, 1)), ((2, 1), (1, 1)), ((1, 1), (2, 1))]:
        row(
            "conv2d",
            (lambda p, st, dl: lambda x, w: gt.nn.conv2d(x, w, strides=st, padding=p, dilations=dl))(_pad, _st, _dl),
            (lambda p, st, dl: lambda x, w: _np_conv2d(x, w, st, p, dl))(_pad, _st, _dl),
            _CONV,
            case=f"{_pad},s={_st},d={_dl}",
        )
row(
    "conv2d",
    lambda x, w: gt.nn.conv2d(x, w, strides=[1, 2, 1, 1], padding=[[0, 0], [1, 2], [0, 1], [0, 0]]),
    lambda x, w: _np_conv2d(x, w, (2, 1), [(1, 2), (0, 1)]),
    _CONV[:1],
    case="explicit",
)
row(
    "conv1d",
    lambda x, w: gt.nn.conv1d(x, w, stride=2, padding="SAME"),
    lambda x, w: _np_conv2d(x[:, None], w[None], (1, 2), "SAME")[:, 0],
    [((2, 7, 2), (3, 2, 3))],
)
row(
    "conv1d",
    lambda x, w: gt.nn.conv1d(x, w, stride=1, padding="VALID", dilations=2),
    lambda x, w: _np_conv2d(x[:, None], w[None], (1, 1), "VALID", (1, 2))[:, 0],
    [((2, 7, 2), (2, 2, 3))],
    case="dilated",
)
for _pad, _st, _out in [("SAME", (2, 2), (2, 6, 7, 3)), ("VALID", (2, 1), (2, 7, 5, 3)), ("SAME", (1, 1), (2, 3, 4, 3))]:
    row(
        "conv2d_transpose",
        (lambda p, st, o: lambda x, w: gt.nn.conv2d_transpose(x, w, o, st, p))(_pad, _st, _out),
        (lambda p, st, o: lambda x, w: _np_conv2d_transpose(x, w, o, st, p))(_pad, _st, _out),
        [({"SAME": (2, -(-_out[1] // _st[0]), -(-_out[2] // _st[1]), 2), "VALID": (2, 3, 3, 2)}[_pad], (3, 3, 3, 2))],
        case=f"{_pad},s={_st}",
    )
for _pad, _st, _dl in [("SAME", (1, 1), (1, 1)), ("VALID", (2, 2), (1, 1)), ("SAME", (1, 1), (2, 2))]:
    row(
        "depthwise_conv2d",
        (lambda p, st, dl: lambda x, w: gt.nn.depthwise_conv2d(x, w, [1, *st, 1], p, dilations=dl))(_pad, _st, _dl),
        (lambda p, st, dl: lambda x, w: _np_conv2d(x, w, st, p, dl, depthwise=True))(_pad, _st, _dl),
        [((2, 5, 6, 3), (3, 3, 3, 2))],
        case=f"{_pad},s={_st},d={_dl}",
    )



def _np_conv3d(x, w, strides, padding, dilations):
    # Sum over the filter's depth taps of 2-D convolutions of the (strided) depth planes.
    d = x.shape[1]
    kd = w.shape[0]
    od, front, back = _np_pads(d, kd, strides[0], dilations[0], padding)
    xp = np.pad(x, [(0, 0), (front, max(back, 0)), (0, 0), (0, 0), (0, 0)])
    planes = []
    for z in range(od):
        planes.append(sum(
            _np_conv2d(xp[:, z * strides[0] + t * dilations[0]], w[t], strides[1:], padding, dilations[1:])
            for t in range(kd)
        ))
    return np.stack(planes, axis=1)


def _np_conv3d_transpose(x, w, out_shape, strides, padding):
    # The adjoint of _np_conv3d (filters [kd, kh, kw, out, in]): <conv(z, w), x> = <z, T(x)>,
    # so T(x) is the gradient of that inner product, read off column by column.
    n = int(np.prod(out_shape))
    basis = np.eye(n, dtype=x.dtype).reshape((n, *out_shape))
    cols = [np.sum(_np_conv3d(b, w, strides, padding, (1, 1, 1)) * x) for b in basis]
    return np.array(cols, dtype=x.dtype).reshape(out_shape)


for _pad, _st, _dl in [("SAME", (1, 1, 1), (1, 1, 1)), ("VALID", (2, 1, 2), (1, 1, 1)),
                       ("SAME", (1, 2, 1), (2, 1, 1)), ("VALID", (1, 1, 1), (1, 2, 2))]:
    row(
        "conv3d",
        (lambda p, st, dl: lambda x, w: gt.nn.conv3d(x, w, [1, *st, 1], p, dilations=dl))(_pad, _st, _dl),
        (lambda p, st, dl: lambda x, w: _np_conv3d(x, w, st, p, dl))(_pad, _st, _dl),
        [((2, 4, 5, 4, 2), (2, 2, 2, 2, 3)), ((0, 3, 3, 3, 1), (1, 2, 1, 1, 2))],
        case=f"{_pad},s={_st},d={_dl}",
    )
for _pad, _st, _out in [("SAME", (2, 1, 2), (1, 3, 4, 4, 2)), ("VALID", (1, 2, 1), (1, 3, 5, 3, 2))]:
    row(
        "conv3d_transpose",
        (lambda p, st, o: lambda x, w: gt.nn.conv3d_transpose(x, w, o, [1, *st, 1], p))(_pad, _st, _out),
        (lambda p, st, o: lambda x, w: _np_conv3d_transpose(x, w, o, st, p))(_pad, _st, _out),
        [({"SAME": (1, 2, 4, 2, 3), "VALID": (1, 2, 2, 2, 3)}[_pad], (2, 2, 2, 2, 3))],
        case=f"{_pad},s={_st}",
    )

# Pools: distinct values (no ties) so max pooling is smooth around the sample.
for _pad in ["SAME", "VALID"]:
    for _k, _s in [((2, 2), (2, 2)), ((3, 3), (2, 2)), ((3, 2), (1, 2))]:
        for _name, _kind in [("max_pool2d", "max"), ("avg_pool2d", "avg")]:
            row(
                _name,
                (lambda n, k, s, p: lambda x: getattr(gt.nn, n)(x, k, s, p))(_name, _k, _s, _pad),
                (lambda kind, k, s, p: lambda x: _np_pool(x, k, s, p, kind))(_kind, _k, _s, _pad),
                [((2, 5, 6, 2),), ((0, 4, 4, 1),)],
                sample=distinct,
                case=f"{_pad},k={_k},s={_s}",
            )
for _name, _kind, _sp in [("max_pool3d", "max", 3), ("avg_pool3d", "avg", 3), ("max_pool1d", "max", 1), ("avg_pool1d", "avg", 1)]:
    for _pad in ["SAME", "VALID"]:
        row(
            _name,
            (lambda n, p: lambda x: getattr(gt.nn, n)(x, 2, 2, p))(_name, _pad),
            (lambda kind, p, sp: lambda x: _np_pool(x, (2,) * sp, (2,) * sp, p, kind))(_kind, _pad, _sp),
            [((1, 3, 4, 5, 2),)] if _sp == 3 else [((2, 7, 3),)],
            sample=distinct,
            case=_pad,
        )
for _name, _kind in [("max_pool", "max"), ("avg_pool", "avg")]:
    row(
        _name,
        (lambda n: lambda x: getattr(gt.nn, n)(x, 3, 2, "SAME"))(_name),
        (lambda kind: lambda x: _np_pool(x, (3,) * (x.ndim - 2), (2,) * (x.ndim - 2), "SAME", kind))(_kind),
        [((2, 7, 3),), ((1, 5, 5, 2),), ((1, 3, 4, 5, 1),)],
        sample=distinct,
    )
row(
    "fused_batch_norm",
    lambda x, s, o: gt.nn.fused_batch_norm(x, s, o)[0],
    _np_fused_batch_norm,
    [((2, 3, 3, 2), (2,), (2,))],
    sample=(normal, positive, normal),
    fwd_tol={**FORWARD_TOL, "float16": (2e-2, 2e-2)},
)

# ----------------------------------------------------------------------------- issue 14: array ops
_IDX3 = [[0, 1], [2, 0], [0, 1]]  # index tuples into [3, 2, ...] (one repeated)
_IDX_UNIQ = [[0, 1], [2, 0], [1, 1]]


def _np_scatter(idx, upd, shape):
    out = np.zeros(shape, dtype=upd.dtype)
    for i, t in enumerate(idx):
        out[tuple(t)] += upd[i]
    return out


def _np_update(x, idx, upd):
    out = x.copy()
    for i, t in enumerate(idx):
        out[tuple(t)] = upd[i]
    return out


def _np_minmax(x, idx, upd, f):
    out = x.copy()
    for i, t in enumerate(idx):
        out[tuple(t)] = f(out[tuple(t)], upd[i])
    return out


def _np_revseq(x, lengths):
    out = x.copy()
    for b, n in enumerate(lengths):
        out[b, :n] = x[b, :n][::-1]
    return out


def _np_space_to_depth(x, bs):
    b, h, w, c = x.shape
    return x.reshape(b, h // bs, bs, w // bs, bs, c).transpose(0, 1, 3, 2, 4, 5).reshape(b, h // bs, w // bs, bs * bs * c)


def _np_depth_to_space(x, bs):
    b, h, w, c = x.shape
    return x.reshape(b, h, w, bs, bs, c // (bs * bs)).transpose(0, 1, 3, 2, 4, 5).reshape(b, h * bs, w * bs, c // (bs * bs))


def _np_space_to_batch(x, bsh, pads):
    x = np.pad(x, [(0, 0), *pads, (0, 0)])
    b, h, w, c = x.shape
    y = x.reshape(b, h // bsh[0], bsh[0], w // bsh[1], bsh[1], c).transpose(2, 4, 0, 1, 3, 5)
    return y.reshape(b * bsh[0] * bsh[1], h // bsh[0], w // bsh[1], c)


def _np_scan(x):
    out, a = [], None
    for v in x:
        a = v if a is None else a * v + v
        out.append(a)
    return np.stack(out)


def _np_lrn(x, r, bias, alpha, beta):
    sq = np.pad(x ** 2, [(0, 0)] * 3 + [(r, r)])
    s = sum(sq[..., k:k + x.shape[-1]] for k in range(2 * r + 1))
    return x / (bias + alpha * s) ** beta


row("reverse", lambda x: gt.reverse(x, [0, -1]), lambda x: np.flip(x, (0, -1)), MATRIX + CUBE)
row("roll", lambda x: gt.roll(x, [1, -2], [0, 1]), lambda x: np.roll(np.roll(x, 1, 0), -2, 1), MATRIX + CUBE)
for _dir in ["ASCENDING", "DESCENDING"]:
    row(
        "sort",
        (lambda d: lambda x: gt.sort(x, axis=0, direction=d))(_dir),
        (lambda d: lambda x: np.sort(x, axis=0)[::-1] if d == "DESCENDING" else np.sort(x, axis=0))(_dir),
        MATRIX + CUBE + [((5,),)],
        sample=distinct,
        case=_dir,
    )
row(
    "meshgrid",
    lambda x, y: (lambda a, b: a * b)(*gt.meshgrid(x, y)),
    lambda x, y: (lambda a, b: a * b)(*np.meshgrid(x, y)),
    [((3,), (2,))],
)
row(
    "meshgrid",
    lambda x, y: (lambda a, b: a - b)(*gt.meshgrid(x, y, indexing="ij")),
    lambda x, y: (lambda a, b: a - b)(*np.meshgrid(x, y, indexing="ij")),
    [((3,), (2,))],
    case="ij",
)
row("scatter_nd", lambda u: gt.scatter_nd(_IDX3, u, [3, 2, 2]),
    lambda u: _np_scatter(_IDX3, u, (3, 2, 2)), [((3, 2),)])
row("tensor_scatter_nd_add", lambda x, u: gt.tensor_scatter_nd_add(x, _IDX3, u),
    lambda x, u: x + _np_scatter(_IDX3, u, x.shape), [((3, 2, 2), (3, 2))])
row("tensor_scatter_nd_sub", lambda x, u: gt.tensor_scatter_nd_sub(x, _IDX3, u),
    lambda x, u: x - _np_scatter(_IDX3, u, x.shape), [((3, 2), (3,))])
row("tensor_scatter_nd_update", lambda x, u: gt.tensor_scatter_nd_update(x, _IDX_UNIQ, u),
    lambda x, u: _np_update(x, _IDX_UNIQ, u), [((3, 2, 2), (3, 2))])
for _name, _f in [("tensor_scatter_nd_max", np.maximum), ("tensor_scatter_nd_min", np.minimum)]:
    row(_name, (lambda n: lambda x, u: getattr(gt, n)(x, _IDX_UNIQ, u))(_name),
        (lambda f: lambda x, u: _np_minmax(x, _IDX_UNIQ, u, f))(_f),
        [((3, 2, 2), (3, 2))], sample=(grid, grid_offset))
row("strided_slice", lambda x: gt.strided_slice(x, [0, 2, 1], [2, 0, 4], [1, -1, 2], begin_mask=1, shrink_axis_mask=0),
    lambda x: x[:2, 2:0:-1, 1:4:2], CUBE)
row("strided_slice", lambda x: gt.strided_slice(x, [0, 1], [0, 3], ellipsis_mask=1, new_axis_mask=0),
    lambda x: x[..., 1:3], CUBE, case="ellipsis")
row("strided_slice", lambda x: gt.strided_slice(x, [1, 0, 0], [2, 0, 2], new_axis_mask=2, shrink_axis_mask=1),
    lambda x: x[1, None, 0:2], CUBE, case="new_axis,shrink")
row("reverse_sequence", lambda x: gt.reverse_sequence(x, [3, 1], seq_axis=1, batch_axis=0),
    lambda x: _np_revseq(x, [3, 1]), MATRIX + CUBE)
row("reverse_sequence", lambda x: gt.reverse_sequence(x, [2, 0, 1, 2], seq_axis=0, batch_axis=2),
    lambda x: np.moveaxis(_np_revseq(np.moveaxis(x, [2, 0], [0, 1]), [2, 0, 1, 2]), [0, 1], [2, 0]), CUBE,
    case="seq0,batch2")
row("identity_n", lambda x, y: gt.identity_n([x, y])[0] * gt.identity_n([x, y])[1], lambda x, y: x * y, BINARY_NONEMPTY)
row("parallel_stack", lambda x, y: gt.parallel_stack([x, y]), lambda x, y: np.stack([x, y]), [((2, 3), (2, 3))])
row("ensure_shape", lambda x: gt.ensure_shape(x, [None, 3]), lambda x: x, MATRIX)
row("realdiv", gt.realdiv, lambda x, y: x / y, BINARY_NONEMPTY, sample=(normal, positive))
row("saturate_cast", lambda x: gt.saturate_cast(x, x.dtype), lambda x: x, UNARY_NONEMPTY)
row("space_to_depth", lambda x: gt.nn.space_to_depth(x, 2), lambda x: _np_space_to_depth(x, 2), [((2, 4, 2, 3),)])
row("depth_to_space", lambda x: gt.nn.depth_to_space(x, 2), lambda x: _np_depth_to_space(x, 2), [((2, 1, 2, 8),)])
row("space_to_batch_nd", lambda x: gt.space_to_batch_nd(x, [2, 2], [[0, 1], [1, 1]]),
    lambda x: _np_space_to_batch(x, [2, 2], [(0, 1), (1, 1)]), [((1, 3, 2, 2),)])
row("batch_to_space", lambda x: gt.batch_to_space(x, [2, 2], [[0, 1], [1, 1]]),
    lambda x: x.reshape(2, 2, 1, 2, 2, 2).transpose(2, 3, 0, 4, 1, 5).reshape(1, 4, 4, 2)[:, 0:3, 1:3],
    [((4, 2, 2, 2),)])
row("scan", lambda x: gt.scan(lambda a, v: a * v + v, x), _np_scan, [((4,),), ((3, 2),)])

# ----------------------------------------------------------------------------- issue 14: nn and linalg
row("bias_add", gt.nn.bias_add, lambda x, b: x + b, [((2, 3), (3,)), ((2, 2, 3), (3,))])
row("bias_add", lambda x, b: gt.nn.bias_add(x, b, data_format="NCHW"), lambda x, b: x + b[:, None, None],
    [((2, 3, 2, 2), (3,))], case="NCHW")
row("moments", lambda x: gt.nn.moments(x, [0, 2])[0], lambda x: x.mean(axis=(0, 2)), CUBE, complex=False)
# TF's variance formula holds the mean constant (stop_gradient): its first derivative
# is exact, its second is not the variance's (TF's too), so first order only.
row("moments", lambda x: gt.nn.moments(x, [1], keepdims=True)[1], lambda x: x.var(axis=1, keepdims=True), CUBE,
    complex=False, order=1, case="variance", fwd_tol={**FORWARD_TOL, "float16": (1e-2, 1e-2)})
row(
    "weighted_moments",
    lambda x, w: (lambda m, v: m + 2.0 * v)(*gt.nn.weighted_moments(x, [1], w)),
    lambda x, w: (lambda m: m + 2.0 * (w * (x - m[:, None]) ** 2).sum(1) / w.sum(1))((w * x).sum(1) / w.sum(1)),
    [((2, 3), (2, 3))], sample=(normal, positive), complex=False, order=1, fwd_tol={**FORWARD_TOL, "float16": (1e-2, 1e-2)},
)
row(
    "normalize_moments",
    lambda c, m, v, s: (lambda a, b: a * b)(*gt.nn.normalize_moments(c, m, v, s)),
    lambda c, m, v, s: (m / c + s) * (v / c - (m / c) ** 2),
    [((), (3,), (3,), (3,))], sample=(positive, normal, positive, normal), complex=False,
    fwd_tol={**FORWARD_TOL, "float16": (2e-2, 2e-2)},
)
row(
    "batch_normalization",
    lambda x, m, v, o, sc: gt.nn.batch_normalization(x, m, v, o, sc, 1e-3),
    lambda x, m, v, o, sc: sc * (x - m) / np.sqrt(v + 1e-3) + o,
    [((2, 3), (3,), (3,), (3,), (3,))], sample=(normal, normal, positive, normal, normal), complex=False,
    fwd_tol={**FORWARD_TOL, "float16": (1e-2, 1e-2)},
)
row("crelu", gt.nn.crelu, lambda x: np.concatenate([np.maximum(x, 0), np.maximum(-x, 0)], -1),
    UNARY_NONEMPTY[1:], sample=away0)
row(
    "weighted_cross_entropy_with_logits",
    lambda z, x: gt.nn.weighted_cross_entropy_with_logits(z, x, 2.5),
    lambda z, x: (1 - z) * x + (1 + 1.5 * z) * (np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0)),
    [((3,), (3,)), ((2, 3), (2, 3))], sample=(interval(0.0, 1.0), away0),
)
row("log_poisson_loss", lambda t, x: gt.nn.log_poisson_loss(t, x, compute_full_loss=True),
    lambda t, x: np.exp(x) - x * t + np.where(t <= 1, 0.0, t * np.log(t) - t + 0.5 * np.log(2 * np.pi * t)),
    [((4,), (4,))], sample=(interval(1.2, 3.0), normal), complex=False,
    fwd_tol={**FORWARD_TOL, "float16": (1e-2, 1e-2)})
row("compute_average_loss", lambda x, w: gt.nn.compute_average_loss(x, sample_weight=w, global_batch_size=5),
    lambda x, w: (x * w).sum() / 5.0, [((3,), (3,)), ((2, 3), (2, 3))], complex=False)
row("local_response_normalization", lambda x: gt.nn.local_response_normalization(x, 1, 2.0, 0.5, 0.75),
    lambda x: _np_lrn(x, 1, 2.0, 0.5, 0.75), [((1, 2, 1, 4),)], fwd_tol={**FORWARD_TOL, "float16": (1e-2, 1e-2)})
row("lrn", lambda x: gt.nn.lrn(x, 2, 1.0, 0.3, 0.5), lambda x: _np_lrn(x, 2, 1.0, 0.3, 0.5), [((1, 1, 2, 5),)],
    fwd_tol={**FORWARD_TOL, "float16": (1e-2, 1e-2)})
for _pad, _st, _ow in [("SAME", 2, 6), ("VALID", 1, 5)]:
    row(
        "conv1d_transpose",
        (lambda p, st, ow: lambda x, w: gt.nn.conv1d_transpose(x, w, [2, ow, 3], st, p))(_pad, _st, _ow),
        (lambda p, st, ow: lambda x, w: _np_conv2d_transpose(x[:, None], w[None], (2, 1, ow, 3), (1, st), p)[:, 0])(
            _pad, _st, _ow),
        [((2, 3, 2), (3, 3, 2))],
        case=f"{_pad},s={_st}",
    )
row("band_part", lambda x: gt.linalg.band_part(x, 1, 0), lambda x: np.tril(np.triu(x, -1)), [((3, 3),), ((2, 3, 4),)])
row("set_diag", gt.linalg.set_diag,
    lambda x, d: (lambda o: (o.__setitem__((..., np.arange(2), np.arange(2)), d), o)[1])(x.copy()),
    [((2, 3), (2,)), ((2, 3, 2), (2, 2))])


def _np_set_diag(x, diag, k, align="RIGHT_LEFT"):
    # Diagonal by diagonal: d's entries run down the rows; a short one sits at the right
    # of its packed row when ``align`` says so (first word: d >= 0, second: d <= 0).
    k0, k1 = (k, k) if np.ndim(k) == 0 else k
    m, n = x.shape[-2:]
    out = x.copy()
    packed = diag if k0 != k1 else diag[..., None, :]
    width = packed.shape[-1]
    for d in range(k0, k1 + 1):
        rows = np.arange(max(-d, 0), min(m, n - d))
        right = (d >= 0 and align.startswith("RIGHT")) or (d <= 0 and align.endswith("RIGHT"))
        start = width - len(rows) if right else 0
        out[..., rows, rows + d] = packed[..., k1 - d, start:start + len(rows)]
    return out


for _k, _shapes in [(1, [((3, 4), (3,)), ((2, 4, 3), (2, 2))]), (-2, [((4, 3), (2,))]),
                    ((-1, 2), [((3, 4), (4, 3)), ((2, 3, 3), (2, 4, 3))]), ((0, 1), [((2, 3), (2, 2))])]:
    for _al in ["RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT"]:
        row("set_diag",
            (lambda k, al: lambda x, d: gt.linalg.set_diag(x, d, k=k, align=al))(_k, _al),
            (lambda k, al: lambda x, d: _np_set_diag(x, d, k, al))(_k, _al),
            _shapes, case=f"k={_k},{_al}")
row("cross", gt.linalg.cross, np.cross, [((3,), (3,)), ((2, 3), (2, 3))])
row("normalize", lambda x: gt.linalg.normalize(x, axis=-1)[0],
    lambda x: x / np.linalg.norm(x, axis=-1, keepdims=True), MATRIX, sample=away0, complex=False)
row("logdet", lambda a: gt.linalg.logdet(_spd(a)), lambda a: np.linalg.slogdet(_np_spd(a))[1], [((3, 3),), ((2, 3, 3),)], dtypes=F32_64, complex=False)
row("pinv", gt.linalg.pinv, np.linalg.pinv, [((2, 3),), ((3, 2),)], dtypes=F32_64,
    fwd_tol={**FORWARD_TOL, "float32": (1e-4, 1e-5)})
# ----------------------------------------------------------------------------- issue 14's math ops
def _np_digamma(x):
    """ψ by the recurrence up to 20 and the asymptotic series there (an independent
    reference for gt.math.digamma)."""
    x = np.asarray(x, dtype=np.float64)
    acc = np.zeros_like(x)
    z = x.copy()
    for _ in range(20):
        acc -= 1.0 / z
        z = z + 1.0
    f = 1.0 / (z * z)
    series = f * (-1 / 12 + f * (1 / 120 + f * (-1 / 252 + f * (1 / 240 + f * (-1 / 132)))))
    return acc + np.log(z) - 0.5 / z + series


def _np_hurwitz(s, q, n=30):
    """ζ(s, q) by a direct sum of n terms and the Euler–Maclaurin tail."""
    q = np.asarray(q, dtype=np.float64)
    total = sum((q + k) ** -s for k in range(n))
    z = q + n
    tail = z ** (1 - s) / (s - 1) + 0.5 * z**-s
    bern = [1 / 6, -1 / 30, 1 / 42, -1 / 30]
    rising = s
    for j, b in enumerate(bern, 1):
        tail = tail + b / math.factorial(2 * j) * rising * z ** (-s - 2 * j + 1)
        rising = rising * (s + 2 * j - 1) * (s + 2 * j)
    return total + tail


def _np_polygamma(n, x):
    if n == 0:
        return _np_digamma(x)
    return (-1) ** (n + 1) * math.factorial(n) * _np_hurwitz(n + 1, x)


def _np_xlogy(x, y):
    return np.where(x == 0, 0.0, x * np.log(np.where(x == 0, 1.0, y)))


row("acosh", gt.math.acosh, np.arccosh, sample=interval(1.2, 3.0))
row("asinh", gt.asinh, np.arcsinh)
row("atanh", gt.math.atanh, np.arctanh, sample=unit_open)
row("erfc", gt.math.erfc, lambda x: 1.0 - _np_erf(x))
row("lgamma", gt.math.lgamma, np.vectorize(math.lgamma, otypes=[np.float64]), sample=interval(0.3, 4.0))
row(
    "lgamma",
    gt.math.lgamma,
    np.vectorize(math.lgamma, otypes=[np.float64]),
    sample=interval(-1.8, -1.2),
    case="negative",
    fwd_tol={**FORWARD_TOL, "float64": (1e-11, 1e-12)},
)
row("digamma", gt.math.digamma, _np_digamma, sample=interval(0.4, 4.0), fwd_tol={**FORWARD_TOL, "float64": (1e-11, 1e-12)})
row("digamma", gt.math.digamma, _np_digamma, sample=interval(-1.8, -1.2), case="negative", fwd_tol={**FORWARD_TOL, "float64": (1e-11, 1e-12)})
for _n in (1, 2):
    row(
        "polygamma",
        (lambda n: lambda x: gt.math.polygamma(gt.constant(float(n), dtype=x.dtype), x))(_n),
        (lambda n: lambda x: _np_polygamma(n, x))(_n),
        sample=interval(0.5, 3.0),
        dtypes=F32_64,
        case=f"n={_n}",
        fwd_tol={**FORWARD_TOL, "float64": (1e-11, 1e-12)},
    )
row("log_sigmoid", gt.math.log_sigmoid, lambda x: -np.logaddexp(0.0, -x), sample=interval(-4.0, 4.0))
row("softsign", gt.math.softsign, lambda x: x / (1.0 + np.abs(x)), sample=away0, case="math")
row("reciprocal_no_nan", gt.math.reciprocal_no_nan, np.reciprocal, sample=away0)
row("xlogy", gt.math.xlogy, _np_xlogy, BINARY, sample=(away0, positive))
row("xdivy", gt.math.xdivy, lambda x, y: np.where(x == 0, 0.0, x / y), BINARY, sample=(away0, away0))
row("xlog1py", gt.math.xlog1py, lambda x, y: x * np.log1p(y), BINARY, sample=(away0, interval(-0.5, 2.0)))
row("divide_no_nan", gt.math.divide_no_nan, np.divide, BINARY, sample=(normal, away0))
row("scalar_mul", lambda x: gt.math.scalar_mul(2.5, x), lambda x: 2.5 * x)
row("scalar_mul", lambda s, x: gt.scalar_mul(s, x), np.multiply, [((), (2, 3))], case="tensor")
for _axis, _kd in [(None, False), (1, False), (0, True)]:
    row(
        "reduce_euclidean_norm",
        (lambda a, k: lambda x: gt.math.reduce_euclidean_norm(x, axis=a, keepdims=k))(_axis, _kd),
        (lambda a, k: lambda x: np.sqrt(np.sum(x * x, axis=a, keepdims=k)))(_axis, _kd),
        MATRIX,
        sample=away0,
        complex=False,
        case=f"axis={_axis},keepdims={_kd}",
    )
# (exclusive: the first output is -inf, which finite differences cannot take;
# test_mathx.py checks its values and gradient)
for _axis, _ex, _rev in [(0, False, False), (1, False, False), (1, False, True), (-1, False, True)]:
    row(
        "cumulative_logsumexp",
        (lambda a, e, r: lambda x: gt.math.cumulative_logsumexp(x, axis=a, exclusive=e, reverse=r))(_axis, _ex, _rev),
        (lambda a, e, r: lambda x: _np_cum_lse(x, a, e, r))(_axis, _ex, _rev),
        MATRIX,
        case=f"axis={_axis},exclusive={_ex},reverse={_rev}",
    )


def _np_cum_lse(x, axis, exclusive, reverse):
    x = np.moveaxis(np.asarray(x, dtype=np.float64), axis, -1)
    if reverse:
        x = x[..., ::-1]
    out = np.logaddexp.accumulate(x, axis=-1)
    if exclusive:
        out = np.concatenate([np.full(out.shape[:-1] + (1,), -np.inf), out[..., :-1]], axis=-1)
    if reverse:
        out = out[..., ::-1]
    return np.moveaxis(out, -1, axis)


row(
    "polyval",
    lambda c0, c1, c2, x: gt.math.polyval([c0, c1, c2], x),
    lambda c0, c1, c2, x: (c0 * x + c1) * x + c2,
    [((), (), (), (3,)), ((3,), (3,), (), (3,))],
)
row(
    "confusion_matrix",
    lambda w: gt.math.confusion_matrix([0, 1, 1, 2], [0, 2, 1, 2], num_classes=3, weights=w, dtype=w.dtype),
    lambda w: np.array([[w[0], 0, 0], [0, w[2], w[1]], [0, 0, w[3]]]),
    [((4,),)],
)
_SEG_IDS = [0, 2, 0, -1]
_SORTED_IDS = [0, 0, 1, 3]


def _np_segment(x, ids, n, how):
    out_shape = (n,) + x.shape[1:]
    fill = {"sum": 0.0, "mean": 0.0, "sqrt_n": 0.0, "prod": 1.0, "max": np.finfo(np.float64).min, "min": np.finfo(np.float64).max}[how]
    out = np.full(out_shape, fill, dtype=x.dtype)
    for k in range(n):
        rows = [x[i] for i, v in enumerate(ids) if v == k]
        if not rows:
            continue
        r = np.stack(rows)
        out[k] = {
            "sum": r.sum(0), "mean": r.mean(0), "sqrt_n": r.sum(0) / np.sqrt(len(rows)), "prod": r.prod(0),
            "max": r.max(0) if not np.iscomplexobj(r) else r[0], "min": r.min(0) if not np.iscomplexobj(r) else r[0],
        }[how]
    return out


for _how, _sample in [("sum", normal), ("mean", normal), ("sqrt_n", normal), ("max", distinct), ("min", distinct), ("prod", away0)]:
    # max/min: no empty segment (its fill, the dtype's lowest/highest value, is checked in
    # test_mathx.py; finite differences cannot take it)
    _ids = [0, 2, 1, -1] if _how in ("max", "min") else _SEG_IDS
    row(
        f"unsorted_segment_{_how}",
        (lambda h, ids: lambda x: getattr(gt.math, f"unsorted_segment_{h}")(x, ids, 3))(_how, _ids),
        (lambda h, ids: lambda x: _np_segment(x, ids, 3, h))(_how, _ids),
        [((4,),), ((4, 2),)],
        sample=_sample,
        dtypes=F32_64,
        # complex products: TF's gradient is not conjugated (dy * prod / x), unlike the
        # convention the complex gradient check holds; test_mathx.py checks TF's numbers
        complex=_how != "prod",
    )
for _how, _sample in [("sum", normal), ("mean", normal), ("max", distinct), ("min", distinct), ("prod", away0)]:
    row(
        f"segment_{_how}",
        (lambda h: lambda x: getattr(gt.math, f"segment_{h}")(x, _SORTED_IDS))(_how),
        (lambda h: lambda x: _np_segment(x, _SORTED_IDS, 4, h) if h not in ("max", "min")
         else np.where(np.array([1, 1, 0, 1]).reshape((4,) + (1,) * (x.ndim - 1)) == 1, _np_segment(x, _SORTED_IDS, 4, h), 0.0))(_how),
        [((4,),), ((4, 2),)],
        sample=_sample,
        dtypes=F32_64,
        complex=_how != "prod",
    )
row(
    "top_k",
    lambda x: gt.math.top_k(x, k=2).values,
    lambda x: -np.sort(-x, axis=-1)[..., :2],
    [((5,),), ((2, 4),)],
    sample=distinct,
)
row(
    "top_k",
    lambda x: gt.nn.top_k(x, k=3, sorted=False).values,
    lambda x: np.take_along_axis(x, np.sort(np.argsort(-x, axis=-1, kind="stable")[..., :3], axis=-1), axis=-1),
    [((2, 4),)],
    sample=distinct,
    case="unsorted",
)

# ----------------------------------------------------------------------------- coverage lists
NOT_DIFFERENTIABLE = [
    # comparisons and logic: bool outputs
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_xor", "logical_not", "reduce_any", "reduce_all",
    # integer-valued / piecewise constant, recorded with no gradient (TF: None)
    "floordiv",
    # creation: no tensor inputs
    "constant", "convert_to_tensor", "zeros", "ones", "zeros_like", "ones_like", "fill",
    "eye", "range", "linspace",
    # gradient blocked by definition (test_stop_gradient_gives_none checks it)
    "stop_gradient",
    # integer outputs, or piecewise constant with TF's None gradient
    # (test_not_differentiable_ops_give_none checks it)
    "argmax", "argmin", "one_hot", "shape", "size", "rank", "round", "floor", "ceil",
    # issue 14: integer / boolean outputs or no tensor outputs (test_tf_surface.py)
    "argsort", "searchsorted", "unique", "unique_with_counts", "sequence_mask",
    "unravel_index", "broadcast_static_shape", "broadcast_dynamic_shape", "shape_n",
    "matrix_rank",
    # issue 14: TF's gradient is None (TruncateDiv) or unregistered (TruncateMod)
    "truncatediv", "truncatemod",
    # issue 16: string outputs (test_string.py), never differentiable as in TF
    "as_string",
    # issue 14: float predicates, rint and integer / bool results (TF: None gradients;
    # test_mathx.py checks their values)
    "is_finite", "is_nan", "is_inf", "rint", "count_nonzero", "zero_fraction", "in_top_k",
    "bincount", "invert_permutation", "is_non_decreasing", "is_strictly_increasing",
]

# Ops checked by a dedicated test in test_gradcheck.py instead of a row: {name: test}.
# dropout draws a new mask on every call (as TF's does), so it cannot be re-evaluated
# for finite differences; its test checks the gradient against the mask it drew.
DEDICATED = {"dropout": "test_dropout_gradient_is_mask_over_keep_prob"}

# Public callables that are not ops (decorators, tape helpers): no row expected.
# Control flow and tracing (gt.function, gt.cond, ...) are tested in test_function.py,
# gradients through them included; gt.print is an effect.
NOT_OPS = [
    "custom_gradient", "gradient_override", "gradient_override_map",
    "function", "cond", "while_loop", "switch_case", "map_fn", "vectorized_map", "print",
    # gradient utilities over the tape and custom_gradient (test_gradient_utils.py)
    "recompute_grad", "grad_pass_through", "get_static_value",
    # folds of a user function (test_backprop_tf.py: jacobians through foldl)
    "foldl", "foldr",
    # issue 16 (test_everyday.py): contexts (device placement, lifting out of a trace)
    # and a call of user Python code, not differentiable (as TF's py_function is here)
    "device", "init_scope", "py_function",
    # DLPack import: a copy into a constant, no gradient of its own (test_dlpack.py)
    "from_dlpack",
    # issue 15 (test_random_stateless.py): gt.random's stateless draws, generators and seed
    # helpers. Random draws have no differentiable inputs (TF registers the stateless ops as
    # not differentiable); their values are checked bit for bit against TF 2.21's, and their
    # gradients are None.
    "stateless_uniform", "stateless_normal", "stateless_truncated_normal", "stateless_categorical",
    "categorical", "split", "fold_in", "create_rng_state", "get_global_generator",
    "set_global_generator", "Generator", "Algorithm",
    # issue 15 (test_random_rejection.py): the rejection-sampled draws, TF's numbers bit for
    # bit; no differentiable inputs but gamma's alpha and beta, whose gradient (TF's
    # RandomGammaGrad) is checked there against TF's values and against central
    # differences of the quantile (a random draw has no numpy reference for a spec row).
    "stateless_gamma", "stateless_poisson", "stateless_binomial", "gamma", "poisson",
    # issue 14 (test_tf_surface.py): execution-state queries, control-flow no-ops,
    # value checks, TF's graph-only gradients (raises) and registry/dtype helpers
    "executing_eagerly", "is_tensor", "no_op", "group", "control_dependencies",
    "get_current_name_scope", "assert_equal", "assert_less", "assert_greater",
    "assert_rank", "gradients", "no_gradient", "as_dtype",
]

# Ops whose TF kernels take real dtypes only (TF 2.21 raises InvalidArgumentError or
# ValueError for complex128): their rows get no complex variant, and
# test_real_only_ops_reject_complex checks that gradtape raises too.
REAL_ONLY = {
    "erf", "relu", "relu6", "elu", "selu", "leaky_relu", "softplus", "softsign", "gelu",
    "maximum", "minimum", "atan2", "floormod", "mod", "__mod__", "clip_by_value", "clip_by_norm",
    "clip_by_global_norm", "global_norm",  # TF's global_norm uses L2Loss (real floats only)
    "reduce_max", "reduce_min", "reduce_logsumexp", "softmax", "log_softmax", "l2_loss",
    "sigmoid_cross_entropy_with_logits", "softmax_cross_entropy_with_logits",
    "sparse_softmax_cross_entropy_with_logits",
    # TF's convolution, pooling and batch-norm kernels take real floats only.
    "conv1d", "conv2d", "conv2d_transpose", "depthwise_conv2d", "max_pool", "max_pool1d",
    "conv3d", "conv3d_transpose",
    "max_pool2d", "max_pool3d", "avg_pool", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "fused_batch_norm",
    # issue 14: TF's TopKV2, TensorScatterMax/Min, Relu, LRN and Cross kernels and
    # tf.linalg.pinv take real numbers only
    "sort", "tensor_scatter_nd_max", "tensor_scatter_nd_min", "crelu",
    "weighted_cross_entropy_with_logits", "local_response_normalization", "lrn", "cross", "pinv",
    "conv1d_transpose",
    # issue 14: TF's special-function, log-sigmoid, cumulative-logsumexp, segment max/min
    # and top_k kernels take real dtypes only
    "erfc", "lgamma", "digamma", "polygamma", "log_sigmoid", "cumulative_logsumexp",
    "unsorted_segment_max", "unsorted_segment_min", "segment_max", "segment_min", "top_k",
}


def complex_rows():
    """The rows checked with complex inputs."""
    return [s for s in SPECS if s.complex and s.name not in REAL_ONLY]


def real_only_rows():
    """Rows whose op must reject complex inputs."""
    return [s for s in SPECS if s.complex and s.name in REAL_ONLY]
