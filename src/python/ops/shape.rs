//! Shape manipulation.

use pyo3::prelude::*;

use super::{axes_arg, dims_arg, shape_arg};
use crate::ops;
use crate::python::convert::to_tensor;
use crate::python::heavy;
use crate::python::tensor::PyTensor;

/// TF equivalent: `tf.reshape` (one entry may be -1).
#[pyfunction]
#[pyo3(signature = (tensor, shape, name=None))]
fn reshape(
    py: Python<'_>,
    tensor: &Bound<'_, PyAny>,
    shape: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(tensor, None)?;
    let s = shape_arg(shape)?;
    Ok(heavy(py, x.size(), || ops::reshape_infer(&x, &s))?.into())
}

/// TF equivalent: `tf.transpose`.
#[pyfunction]
#[pyo3(signature = (a, perm=None, conjugate=false, name=None))]
fn transpose(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    perm: Option<&Bound<'_, PyAny>>,
    conjugate: bool,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(a, None)?;
    let perm = match perm {
        Some(p) if !p.is_none() => Some(dims_arg(p)?),
        _ => None,
    };
    Ok(heavy(py, x.size(), || {
        let t = ops::transpose(&x, perm.as_deref())?;
        if conjugate {
            ops::conj(&t)
        } else {
            Ok(t)
        }
    })?
    .into())
}

/// TF equivalent: `tf.expand_dims`.
#[pyfunction]
#[pyo3(signature = (input, axis, name=None))]
fn expand_dims(
    input: &Bound<'_, PyAny>,
    axis: isize,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(input, None)?;
    Ok(ops::expand_dims(&x, axis)?.into())
}

/// TF equivalent: `tf.squeeze`.
#[pyfunction]
#[pyo3(signature = (input, axis=None, name=None))]
fn squeeze(
    input: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(input, None)?;
    let axes = axes_arg(axis)?;
    Ok(ops::squeeze(&x, axes.as_deref())?.into())
}

/// TF equivalent: `tf.broadcast_to`.
#[pyfunction]
#[pyo3(signature = (input, shape, name=None))]
fn broadcast_to(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    shape: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(input, None)?;
    let s = dims_arg(shape)?;
    let n = s.iter().product();
    Ok(heavy(py, n, || ops::broadcast_to(&x, &s))?.into())
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    for f in [
        wrap_pyfunction!(reshape, m)?,
        wrap_pyfunction!(transpose, m)?,
        wrap_pyfunction!(expand_dims, m)?,
        wrap_pyfunction!(squeeze, m)?,
        wrap_pyfunction!(broadcast_to, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
