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
    stop_gradient => ops::stop_gradient,
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
        where_
    );
    Ok(())
}
