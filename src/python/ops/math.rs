//! `gt.math` elementwise functions.

use pyo3::prelude::*;

use super::{py_binary, py_unary};
use crate::ops;
use crate::python::tensor::PyTensor;

py_unary! {
    /// Elementwise ``-x``. TF equivalent: ``tf.math.negative``.
    ///
    /// >>> print(gt.negative(gt.constant([-1.0, 0.0, 2.0])))
    /// gt.Tensor([ 1. -0. -2.], shape=(3,), dtype=float32)
    negative => ops::neg,
    /// Elementwise absolute value (the modulus for complex ``x``, as a real tensor).
    /// TF equivalent: ``tf.math.abs``.
    ///
    /// >>> print(gt.abs(gt.constant([-1.0, 0.0, 2.0])))
    /// gt.Tensor([1. 0. 2.], shape=(3,), dtype=float32)
    abs => ops::abs,
    /// Elementwise sign: -1, 0 or 1. TF equivalent: ``tf.math.sign``.
    ///
    /// >>> print(gt.sign(gt.constant([-1.0, 0.0, 2.0])))
    /// gt.Tensor([-1.  0.  1.], shape=(3,), dtype=float32)
    sign => ops::sign,
    /// Elementwise ``x * x``. TF equivalent: ``tf.math.square``.
    ///
    /// >>> print(gt.square(gt.constant([-1.0, 0.0, 2.0])))
    /// gt.Tensor([1. 0. 4.], shape=(3,), dtype=float32)
    square => ops::square,
    /// Elementwise square root. TF equivalent: ``tf.math.sqrt``.
    ///
    /// >>> print(gt.sqrt(gt.constant([0.0, 1.0, 4.0])))
    /// gt.Tensor([0. 1. 2.], shape=(3,), dtype=float32)
    sqrt => ops::sqrt,
    /// Elementwise ``1 / sqrt(x)``. TF equivalent: ``tf.math.rsqrt``.
    ///
    /// >>> print(gt.rsqrt(gt.constant([1.0, 4.0])))
    /// gt.Tensor([1.  0.5], shape=(2,), dtype=float32)
    rsqrt => ops::rsqrt,
    /// Elementwise ``1 / x``. TF equivalent: ``tf.math.reciprocal``.
    ///
    /// >>> print(gt.reciprocal(gt.constant([1.0, 2.0, 4.0])))
    /// gt.Tensor([1.   0.5  0.25], shape=(3,), dtype=float32)
    reciprocal => ops::reciprocal,
    /// Elementwise ``e ** x``. TF equivalent: ``tf.math.exp``.
    ///
    /// >>> print(gt.exp(gt.constant([0.0, 1.0])))
    /// gt.Tensor([1.        2.7182817], shape=(2,), dtype=float32)
    exp => ops::exp,
    /// Elementwise ``exp(x) - 1``, accurate near 0. TF equivalent: ``tf.math.expm1``.
    ///
    /// >>> print(gt.expm1(gt.constant([0.0, 1.0])))
    /// gt.Tensor([0.        1.7182817], shape=(2,), dtype=float32)
    expm1 => ops::expm1,
    /// Elementwise natural logarithm. TF equivalent: ``tf.math.log``.
    ///
    /// >>> print(gt.log(gt.constant([1.0, 2.0])))
    /// gt.Tensor([0.        0.6931472], shape=(2,), dtype=float32)
    log => ops::log,
    /// Elementwise ``log(1 + x)``, accurate near 0. TF equivalent: ``tf.math.log1p``.
    ///
    /// >>> print(gt.log1p(gt.constant([0.0, 1.0])))
    /// gt.Tensor([0.        0.6931472], shape=(2,), dtype=float32)
    log1p => ops::log1p,
    /// Elementwise sine. TF equivalent: ``tf.math.sin``.
    ///
    /// >>> print(gt.sin(gt.constant([0.0, 1.0])))
    /// gt.Tensor([0.         0.84147096], shape=(2,), dtype=float32)
    sin => ops::sin,
    /// Elementwise cosine. TF equivalent: ``tf.math.cos``.
    ///
    /// >>> print(gt.cos(gt.constant([0.0, 1.0])))
    /// gt.Tensor([1.        0.5403023], shape=(2,), dtype=float32)
    cos => ops::cos,
    /// Elementwise tangent. TF equivalent: ``tf.math.tan``.
    ///
    /// >>> print(gt.tan(gt.constant([0.0, 1.0])))
    /// gt.Tensor([0.        1.5574077], shape=(2,), dtype=float32)
    tan => ops::tan,
    /// Elementwise arcsine. TF equivalent: ``tf.math.asin``.
    ///
    /// >>> print(gt.asin(gt.constant([0.0, 1.0])))
    /// gt.Tensor([0.        1.5707964], shape=(2,), dtype=float32)
    asin => ops::asin,
    /// Elementwise arccosine. TF equivalent: ``tf.math.acos``.
    ///
    /// >>> print(gt.acos(gt.constant([0.0, 1.0])))
    /// gt.Tensor([1.5707964 0.       ], shape=(2,), dtype=float32)
    acos => ops::acos,
    /// Elementwise arctangent. TF equivalent: ``tf.math.atan``.
    ///
    /// >>> print(gt.atan(gt.constant([0.0, 1.0])))
    /// gt.Tensor([0.        0.7853982], shape=(2,), dtype=float32)
    atan => ops::atan,
    /// Elementwise hyperbolic sine. TF equivalent: ``tf.math.sinh``.
    ///
    /// >>> print(gt.sinh(gt.constant([0.0, 1.0])))
    /// gt.Tensor([0.        1.1752012], shape=(2,), dtype=float32)
    sinh => ops::sinh,
    /// Elementwise hyperbolic cosine. TF equivalent: ``tf.math.cosh``.
    ///
    /// >>> print(gt.cosh(gt.constant([0.0, 1.0])))
    /// gt.Tensor([1.        1.5430806], shape=(2,), dtype=float32)
    cosh => ops::cosh,
    /// Elementwise hyperbolic tangent. TF equivalent: ``tf.math.tanh``.
    ///
    /// >>> print(gt.tanh(gt.constant([0.0, 1.0])))
    /// gt.Tensor([0.        0.7615942], shape=(2,), dtype=float32)
    tanh => ops::tanh,
    /// Elementwise logistic function ``1 / (1 + exp(-x))``. TF equivalent: ``tf.math.sigmoid``.
    ///
    /// >>> print(gt.sigmoid(gt.constant([0.0, 2.0])))
    /// gt.Tensor([0.5      0.880797], shape=(2,), dtype=float32)
    sigmoid => ops::sigmoid,
    /// Elementwise Gauss error function. TF equivalent: ``tf.math.erf``.
    ///
    /// >>> print(gt.erf(gt.constant([0.0, 1.0])))
    /// gt.Tensor([0.        0.8427008], shape=(2,), dtype=float32)
    erf => ops::erf,
    /// Elementwise ``max(x, 0)``. TF equivalent: ``tf.nn.relu``.
    ///
    /// >>> print(gt.nn.relu(gt.constant([-1.0, 0.0, 2.0])))
    /// gt.Tensor([0. 0. 2.], shape=(3,), dtype=float32)
    relu => ops::relu,
    /// Exponential linear unit: ``x`` if ``x > 0`` else ``exp(x) - 1``. TF equivalent:
    /// ``tf.nn.elu``.
    ///
    /// >>> print(gt.nn.elu(gt.constant([-1.0, 0.0, 2.0])))
    /// gt.Tensor([-0.63212055  0.          2.        ], shape=(3,), dtype=float32)
    elu => ops::elu,
    /// Elementwise ``log(exp(x) + 1)``, computed stably. TF equivalent: ``tf.math.softplus``.
    ///
    /// >>> print(gt.math.softplus(gt.constant([0.0, 1.0])))
    /// gt.Tensor([0.6931472 1.3132617], shape=(2,), dtype=float32)
    softplus => ops::softplus,
    /// Elementwise ``x / (|x| + 1)``. TF equivalent: ``tf.math.softsign``.
    ///
    /// >>> print(gt.nn.softsign(gt.constant([-1.0, 3.0])))
    /// gt.Tensor([-0.5   0.75], shape=(2,), dtype=float32)
    softsign => ops::softsign,
    /// Elementwise complex conjugate (real tensors are returned unchanged). TF equivalent:
    /// ``tf.math.conj``.
    ///
    /// >>> print(gt.conj(gt.constant([1 + 2j])))
    /// gt.Tensor([1.-2.j], shape=(1,), dtype=complex128)
    conj => ops::conj,
    /// The real part of a complex tensor (a real tensor passes through). TF equivalent:
    /// ``tf.math.real``.
    ///
    /// >>> print(gt.real(gt.constant([1 + 2j])))
    /// gt.Tensor([1.], shape=(1,), dtype=float64)
    real => ops::real,
    /// The imaginary part of a complex tensor (zeros for a real tensor). TF equivalent:
    /// ``tf.math.imag``.
    ///
    /// >>> print(gt.imag(gt.constant([1 + 2j])))
    /// gt.Tensor([2.], shape=(1,), dtype=float64)
    imag => ops::imag,
    /// Elementwise argument of a complex tensor. TF equivalent: ``tf.math.angle``.
    ///
    /// >>> print(gt.angle(gt.constant([1j])))
    /// gt.Tensor([1.57079633], shape=(1,), dtype=float64)
    angle => ops::angle,
    /// Elementwise ``not x`` of a bool tensor. TF equivalent: ``tf.math.logical_not``.
    ///
    /// >>> print(gt.logical_not(gt.constant([True, False])))
    /// gt.Tensor([False  True], shape=(2,), dtype=bool)
    logical_not => ops::logical_not,
    /// A tensor with the value of ``x``; recorded, so its gradient is the incoming one.
    /// TF equivalent: ``tf.identity``.
    ///
    /// >>> print(gt.identity(gt.constant([1.0, 2.0])))
    /// gt.Tensor([1. 2.], shape=(2,), dtype=float32)
    identity => ops::identity,
    /// The value of ``x``, treated as a constant by tapes (no gradient flows through it).
    /// TF equivalent: ``tf.stop_gradient``.
    ///
    /// >>> x = gt.constant(3.0)
    /// >>> with gt.GradientTape() as t:
    /// ...     t.watch(x)
    /// ...     y = x * gt.stop_gradient(x)
    /// >>> print(t.gradient(y, x))
    /// gt.Tensor(3.0, shape=(), dtype=float32)
    stop_gradient => ops::stop_gradient,
    /// Elementwise rounding to the nearest integer, halves to even. TF equivalent:
    /// ``tf.math.round``.
    ///
    /// >>> print(gt.round(gt.constant([0.5, 1.5, 2.7])))
    /// gt.Tensor([0. 2. 3.], shape=(3,), dtype=float32)
    round => ops::round,
    /// Elementwise largest integer not greater than ``x``. TF equivalent: ``tf.math.floor``.
    ///
    /// >>> print(gt.floor(gt.constant([-1.5, 2.5])))
    /// gt.Tensor([-2.  2.], shape=(2,), dtype=float32)
    floor => ops::floor,
    /// Elementwise smallest integer not less than ``x``. TF equivalent: ``tf.math.ceil``.
    ///
    /// >>> print(gt.math.ceil(gt.constant([-1.5, 2.5])))
    /// gt.Tensor([-1.  3.], shape=(2,), dtype=float32)
    ceil => ops::ceil,
}

py_binary! {
    /// Elementwise ``x + y`` with broadcasting. TF equivalent: ``tf.math.add``.
    ///
    /// >>> print(gt.add(gt.constant([1.0, 2.0, 3.0]), 2.0))
    /// gt.Tensor([3. 4. 5.], shape=(3,), dtype=float32)
    add => ops::add,
    /// Elementwise ``x - y`` with broadcasting. TF equivalent: ``tf.math.subtract``.
    ///
    /// >>> print(gt.subtract(gt.constant([1.0, 2.0, 3.0]), 2.0))
    /// gt.Tensor([-1.  0.  1.], shape=(3,), dtype=float32)
    subtract => ops::subtract,
    /// Elementwise ``x * y`` with broadcasting. TF equivalent: ``tf.math.multiply``.
    ///
    /// >>> print(gt.multiply(gt.constant([1.0, 2.0, 3.0]), 2.0))
    /// gt.Tensor([2. 4. 6.], shape=(3,), dtype=float32)
    multiply => ops::multiply,
    /// Elementwise ``x / y`` with broadcasting. TF equivalent: ``tf.math.divide``.
    ///
    /// >>> print(gt.divide(gt.constant([1.0, 2.0, 3.0]), 2.0))
    /// gt.Tensor([0.5 1.  1.5], shape=(3,), dtype=float32)
    divide => ops::divide,
    /// Elementwise ``x / y`` (integers divide to floats, as in TF). TF equivalent:
    /// ``tf.math.truediv``.
    ///
    /// >>> print(gt.truediv(gt.constant([1, 2, 3]), 2))
    /// gt.Tensor([0.5 1.  1.5], shape=(3,), dtype=float64)
    truediv => ops::truediv,
    /// Elementwise ``x // y`` (rounds toward negative infinity). TF equivalent:
    /// ``tf.math.floordiv``.
    ///
    /// >>> print(gt.floordiv(gt.constant([-3, 3, 7]), 2))
    /// gt.Tensor([-2  1  3], shape=(3,), dtype=int32)
    floordiv => ops::floordiv,
    /// Elementwise remainder of ``floordiv``; the result has the sign of ``y``. TF equivalent:
    /// ``tf.math.floormod``.
    ///
    /// >>> print(gt.floormod(gt.constant([-3, 3, 7]), 2))
    /// gt.Tensor([1 1 1], shape=(3,), dtype=int32)
    floormod => ops::floormod,
    /// Elementwise ``x ** y``. TF equivalent: ``tf.math.pow``.
    ///
    /// >>> print(gt.pow(gt.constant([1.0, 2.0, 3.0]), 2.0))
    /// gt.Tensor([1. 4. 9.], shape=(3,), dtype=float32)
    pow => ops::pow,
    /// Elementwise larger of ``x`` and ``y``. TF equivalent: ``tf.math.maximum``.
    ///
    /// >>> print(gt.maximum(gt.constant([1.0, 2.0, 3.0]), 2.0))
    /// gt.Tensor([2. 2. 3.], shape=(3,), dtype=float32)
    maximum => ops::maximum,
    /// Elementwise smaller of ``x`` and ``y``. TF equivalent: ``tf.math.minimum``.
    ///
    /// >>> print(gt.minimum(gt.constant([1.0, 2.0, 3.0]), 2.0))
    /// gt.Tensor([1. 2. 2.], shape=(3,), dtype=float32)
    minimum => ops::minimum,
    /// Elementwise ``(x - y) ** 2``. TF equivalent: ``tf.math.squared_difference``.
    ///
    /// >>> print(gt.squared_difference(gt.constant([1.0, 2.0, 3.0]), 2.0))
    /// gt.Tensor([1. 0. 1.], shape=(3,), dtype=float32)
    squared_difference => ops::squared_difference,
    /// Elementwise arctangent of ``y / x`` with the quadrant of ``(x, y)``; the first argument
    /// is ``y``. TF equivalent: ``tf.math.atan2``.
    ///
    /// >>> print(gt.atan2(gt.constant([1.0, -1.0]), -1.0))
    /// gt.Tensor([ 2.3561945 -2.3561945], shape=(2,), dtype=float32)
    atan2 => ops::atan2,
    /// Elementwise ``x == y`` as a bool tensor. TF equivalent: ``tf.math.equal``.
    ///
    /// >>> print(gt.equal(gt.constant([1.0, 2.0, 3.0]), 2.0))
    /// gt.Tensor([False  True False], shape=(3,), dtype=bool)
    equal => ops::equal,
    /// Elementwise ``x != y`` as a bool tensor. TF equivalent: ``tf.math.not_equal``.
    ///
    /// >>> print(gt.not_equal(gt.constant([1.0, 2.0, 3.0]), 2.0))
    /// gt.Tensor([ True False  True], shape=(3,), dtype=bool)
    not_equal => ops::not_equal,
    /// Elementwise ``x < y`` as a bool tensor. TF equivalent: ``tf.math.less``.
    ///
    /// >>> print(gt.less(gt.constant([1.0, 2.0, 3.0]), 2.0))
    /// gt.Tensor([ True False False], shape=(3,), dtype=bool)
    less => ops::less,
    /// Elementwise ``x <= y`` as a bool tensor. TF equivalent: ``tf.math.less_equal``.
    ///
    /// >>> print(gt.less_equal(gt.constant([1.0, 2.0, 3.0]), 2.0))
    /// gt.Tensor([ True  True False], shape=(3,), dtype=bool)
    less_equal => ops::less_equal,
    /// Elementwise ``x > y`` as a bool tensor. TF equivalent: ``tf.math.greater``.
    ///
    /// >>> print(gt.greater(gt.constant([1.0, 2.0, 3.0]), 2.0))
    /// gt.Tensor([False False  True], shape=(3,), dtype=bool)
    greater => ops::greater,
    /// Elementwise ``x >= y`` as a bool tensor. TF equivalent: ``tf.math.greater_equal``.
    ///
    /// >>> print(gt.greater_equal(gt.constant([1.0, 2.0, 3.0]), 2.0))
    /// gt.Tensor([False  True  True], shape=(3,), dtype=bool)
    greater_equal => ops::greater_equal,
    /// Elementwise ``x and y`` of bool tensors. TF equivalent: ``tf.math.logical_and``.
    ///
    /// >>> print(gt.logical_and(gt.constant([True, False]), True))
    /// gt.Tensor([ True False], shape=(2,), dtype=bool)
    logical_and => ops::logical_and,
    /// Elementwise ``x or y`` of bool tensors. TF equivalent: ``tf.math.logical_or``.
    ///
    /// >>> print(gt.logical_or(gt.constant([True, False]), False))
    /// gt.Tensor([ True False], shape=(2,), dtype=bool)
    logical_or => ops::logical_or,
    /// Elementwise ``x xor y`` of bool tensors. TF equivalent: ``tf.math.logical_xor``.
    ///
    /// >>> print(gt.logical_xor(gt.constant([True, False]), True))
    /// gt.Tensor([False  True], shape=(2,), dtype=bool)
    logical_xor => ops::logical_xor,
    /// A complex tensor from real and imaginary parts (float32 gives complex64). TF equivalent:
    /// ``tf.complex``.
    ///
    /// >>> print(gt.complex(gt.constant([1.0]), gt.constant([2.0])))
    /// gt.Tensor([1.+2.j], shape=(1,), dtype=complex64)
    complex => ops::complex,
}

/// ``x`` where ``condition`` is true, else ``y`` (broadcasting). Only the three-argument
/// form is supported. TF equivalent: ``tf.where``.
///
/// >>> print(gt.where([True, False], gt.constant([1.0, 2.0]), gt.constant([10.0, 20.0])))
/// gt.Tensor([ 1. 20.], shape=(2,), dtype=float32)
#[pyfunction]
#[pyo3(name = "where", signature = (condition, x=None, y=None, name=None))]
fn where_(
    py: Python<'_>,
    condition: &Bound<'_, PyAny>,
    x: Option<&Bound<'_, PyAny>>,
    y: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let c = crate::python::convert::to_tensor(condition, Some(crate::DType::Bool))?;
    let (Some(x), Some(y)) = (x, y) else {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "gt.where with only a condition (indices of true elements) is not supported; pass x and y",
        ));
    };
    let (a, b) = super::pair(x, y)?;
    let n = a.size().max(b.size());
    Ok(crate::python::heavy(py, n, || ops::where_(&c, &a, &b))?.into())
}

/// ``t`` clipped elementwise to ``[clip_value_min, clip_value_max]``. TF equivalent:
/// ``tf.clip_by_value``.
///
/// >>> print(gt.clip_by_value(gt.constant([-2.0, 0.5, 3.0]), 0.0, 1.0))
/// gt.Tensor([0.  0.5 1. ], shape=(3,), dtype=float32)
#[pyfunction]
#[pyo3(signature = (t, clip_value_min, clip_value_max, name=None))]
fn clip_by_value(
    py: Python<'_>,
    t: &Bound<'_, PyAny>,
    clip_value_min: &Bound<'_, PyAny>,
    clip_value_max: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = crate::python::convert::to_tensor(t, None)?;
    let lo = crate::python::convert::to_tensor(clip_value_min, Some(x.dtype()))?;
    let hi = crate::python::convert::to_tensor(clip_value_max, Some(x.dtype()))?;
    Ok(crate::python::heavy(py, x.size(), || ops::clip_by_value(&x, &lo, &hi))?.into())
}

/// ``t`` rescaled so its L2 norm (over ``axes``, or all elements) is at most ``clip_norm``.
/// TF equivalent: ``tf.clip_by_norm``.
///
/// >>> print(gt.clip_by_norm(gt.constant([3.0, 4.0]), 1.0))
/// gt.Tensor([0.6 0.8], shape=(2,), dtype=float32)
#[pyfunction]
#[pyo3(signature = (t, clip_norm, axes=None, name=None))]
fn clip_by_norm(
    py: Python<'_>,
    t: &Bound<'_, PyAny>,
    clip_norm: &Bound<'_, PyAny>,
    axes: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = crate::python::convert::to_tensor(t, None)?;
    let c = crate::python::convert::to_tensor(clip_norm, Some(x.dtype()))?;
    let axes = super::axes_arg(axes)?;
    Ok(crate::python::heavy(py, x.size(), || ops::clip_by_norm(&x, &c, axes.as_deref()))?.into())
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    macro_rules! add {
        ($($f:ident),* $(,)?) => {$( m.add_function(wrap_pyfunction!($f, m)?)?; )*};
    }
    add!(
        negative,
        abs,
        sign,
        square,
        sqrt,
        rsqrt,
        reciprocal,
        exp,
        expm1,
        log,
        log1p,
        sin,
        cos,
        tan,
        asin,
        acos,
        atan,
        sinh,
        cosh,
        tanh,
        sigmoid,
        erf,
        relu,
        elu,
        softplus,
        softsign,
        conj,
        real,
        imag,
        angle,
        logical_not,
        identity,
        stop_gradient,
        add,
        subtract,
        multiply,
        divide,
        truediv,
        floordiv,
        floormod,
        pow,
        maximum,
        minimum,
        squared_difference,
        atan2,
        equal,
        not_equal,
        less,
        less_equal,
        greater,
        greater_equal,
        logical_and,
        logical_or,
        logical_xor,
        complex,
        where_,
        round,
        floor,
        ceil,
        clip_by_value,
        clip_by_norm
    );
    Ok(())
}
