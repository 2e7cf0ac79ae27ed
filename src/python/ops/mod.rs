//! Op functions exposed to Python, one file per engine family. Each function
//! converts its arguments, makes one engine call (GIL released when large), and
//! wraps the result.

mod composite;
mod create;
mod linalg;
mod math;
mod nn;
mod random;
mod reduce;
mod shape;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use super::convert::{as_tensor, convert_value, to_tensor};
use crate::tensor::Tensor;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    composite::register(m)?;
    create::register(m)?;
    linalg::register(m)?;
    math::register(m)?;
    nn::register(m)?;
    random::register(m)?;
    reduce::register(m)?;
    shape::register(m)?;
    Ok(())
}

/// Converts two operands: a Python value takes the dtype of the tensor beside it.
pub(crate) fn pair(x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<(Tensor, Tensor)> {
    match (as_tensor(x), as_tensor(y)) {
        (Some(a), Some(b)) => Ok((a, b)),
        (Some(a), None) => {
            let b = convert_value(y, Some(a.dtype()))?;
            Ok((a, b))
        }
        (None, Some(b)) => Ok((convert_value(x, Some(b.dtype()))?, b)),
        (None, None) => {
            let a = convert_value(x, None)?;
            let b = convert_value(y, Some(a.dtype()))?;
            Ok((a, b))
        }
    }
}

/// An `axis` argument: None, an int, a list/tuple of ints, or an int tensor.
pub(crate) fn axes_arg(ob: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<isize>>> {
    let Some(ob) = ob else { return Ok(None) };
    if ob.is_none() {
        return Ok(None);
    }
    if let Ok(i) = ob.extract::<isize>() {
        return Ok(Some(vec![i]));
    }
    if let Ok(v) = ob.extract::<Vec<isize>>() {
        return Ok(Some(v));
    }
    let t = to_tensor(ob, None)?;
    if t.dtype().is_integer() {
        let t = crate::ops::cast(&t, crate::DType::I64)?;
        return Ok(Some(
            t.to_vec::<i64>()?.into_iter().map(|v| v as isize).collect(),
        ));
    }
    Err(PyTypeError::new_err(format!(
        "axis must be an int or a list of ints, got {}",
        ob.repr()?
    )))
}

/// A shape argument: list/tuple (may hold ints or scalar tensors), TensorShape,
/// int tensor, or a single int. Entries may be -1 where the op allows it.
pub(crate) fn shape_arg(ob: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    if let Ok(i) = ob.extract::<i64>() {
        return Ok(vec![i]);
    }
    if ob.is_instance_of::<PyList>() || ob.is_instance_of::<PyTuple>() {
        let mut v = Vec::new();
        for it in ob.try_iter()? {
            let it = it?;
            let d: i64 = match it.extract::<i64>() {
                Ok(d) => d,
                Err(_) => match as_tensor(&it).and_then(|t| t.to_i64_scalar()) {
                    Some(d) => d,
                    None => it.call_method0("__index__")?.extract()?,
                },
            };
            v.push(d);
        }
        return Ok(v);
    }
    let t = to_tensor(ob, None)?;
    if t.dtype().is_integer() && t.ndim() <= 1 {
        let t = crate::ops::cast(&t, crate::DType::I64)?;
        return Ok(t.to_vec::<i64>()?);
    }
    Err(PyTypeError::new_err(format!(
        "expected a shape (list of ints), got {}",
        ob.repr()?
    )))
}

/// A shape argument with no unknown (-1) entries. Only the signs are checked here:
/// the op that uses the shape checks its size (`crate::size`), as TF does.
pub(crate) fn dims_arg(ob: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    shape_arg(ob)?
        .into_iter()
        .map(|d| {
            usize::try_from(d).map_err(|_| {
                crate::python::errors::InvalidArgumentError::new_err(format!(
                    "dimensions must be non-negative, got {d}"
                ))
            })
        })
        .collect()
}

/// Defines `#[pyfunction]`s `f(x, name=None)` over engine unary ops.
macro_rules! py_unary {
    ($($(#[$doc:meta])* $py:ident => $f:path),* $(,)?) => {$(
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = (x, name=None))]
        fn $py(py: Python<'_>, x: &Bound<'_, PyAny>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
            let _ = name;
            let t = $crate::python::convert::to_tensor(x, None)?;
            $crate::python::tensor::unary(py, t, $f)
        }
    )*};
}
pub(crate) use py_unary;

/// Defines `#[pyfunction]`s `f(x, y, name=None)` over engine binary ops.
macro_rules! py_binary {
    ($($(#[$doc:meta])* $py:ident => $f:path),* $(,)?) => {$(
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = (x, y, name=None))]
        fn $py(py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
            let _ = name;
            let (a, b) = $crate::python::ops::pair(x, y)?;
            let n = a.size().max(b.size());
            Ok($crate::python::heavy(py, n, || $f(&a, &b))?.into())
        }
    )*};
}
pub(crate) use py_binary;
