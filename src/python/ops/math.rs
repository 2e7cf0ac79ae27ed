//! `gt.math` elementwise functions.

use pyo3::prelude::*;

use super::{py_binary, py_unary};
use crate::ops;
use crate::python::tensor::PyTensor;

py_unary! {
    negative => ops::neg, abs => ops::abs, sign => ops::sign, square => ops::square,
    sqrt => ops::sqrt, rsqrt => ops::rsqrt, reciprocal => ops::reciprocal, exp => ops::exp,
    expm1 => ops::expm1, log => ops::log, log1p => ops::log1p, sin => ops::sin,
    cos => ops::cos, tan => ops::tan, asin => ops::asin, acos => ops::acos, atan => ops::atan,
    sinh => ops::sinh, cosh => ops::cosh, tanh => ops::tanh, sigmoid => ops::sigmoid,
    erf => ops::erf, relu => ops::relu, elu => ops::elu, softplus => ops::softplus,
    softsign => ops::softsign, conj => ops::conj, real => ops::real, imag => ops::imag,
    angle => ops::angle, logical_not => ops::logical_not, identity => ops::identity,
    stop_gradient => ops::stop_gradient, round => ops::round, floor => ops::floor,
    ceil => ops::ceil,
}

py_binary! {
    add => ops::add, subtract => ops::subtract, multiply => ops::multiply,
    divide => ops::divide, truediv => ops::truediv, floordiv => ops::floordiv,
    floormod => ops::floormod, pow => ops::pow, maximum => ops::maximum,
    minimum => ops::minimum, squared_difference => ops::squared_difference,
    atan2 => ops::atan2, equal => ops::equal, not_equal => ops::not_equal, less => ops::less,
    less_equal => ops::less_equal, greater => ops::greater, greater_equal => ops::greater_equal,
    logical_and => ops::logical_and, logical_or => ops::logical_or,
    logical_xor => ops::logical_xor, complex => ops::complex,
}

/// `x` where `condition`, else `y` (broadcasting). TF equivalent: `tf.where`.
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

/// TF equivalent: `tf.clip_by_value`.
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

/// TF equivalent: `tf.clip_by_norm`.
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
