//! Constants, conversion, fills, ranges and casts.

use pyo3::prelude::*;

use super::dims_arg;
use crate::dtype::DType;
use crate::ops;
use crate::python::convert::{as_tensor, convert_value, to_dtype, to_tensor};
use crate::python::tensor::PyTensor;

fn dtype_opt(d: Option<&Bound<'_, PyAny>>) -> PyResult<Option<DType>> {
    match d {
        Some(d) if !d.is_none() => Ok(Some(to_dtype(d)?)),
        _ => Ok(None),
    }
}

/// TF equivalent: `tf.constant` (a new tensor; never recorded).
#[pyfunction]
#[pyo3(signature = (value, dtype=None, shape=None, name=None))]
fn constant(
    value: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    shape: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let dt = dtype_opt(dtype)?;
    let t = crate::tape::stack::suspended(|| -> PyResult<_> {
        let t = match as_tensor(value) {
            Some(t) => t,
            None => convert_value(value, dt)?,
        };
        let t = match dt {
            Some(d) if d != t.dtype() => ops::cast(&t, d)?,
            _ => t.fresh_public(),
        };
        Ok(match shape {
            Some(s) if !s.is_none() => {
                let dims = dims_arg(s)?;
                if t.size() == 1 {
                    ops::broadcast_to(&ops::reshape(&t, &[])?, &dims)?
                } else {
                    ops::reshape(&t, &dims)?
                }
            }
            _ => t,
        })
    })?;
    Ok(t.into())
}

/// TF equivalent: `tf.convert_to_tensor` (tensors pass through unchanged).
#[pyfunction]
#[pyo3(signature = (value, dtype=None, dtype_hint=None, name=None))]
fn convert_to_tensor(
    value: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    dtype_hint: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let dt = dtype_opt(dtype)?;
    let hint = dtype_opt(dtype_hint)?;
    if let Some(t) = as_tensor(value) {
        if let Some(d) = dt {
            if d != t.dtype() {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "Tensor conversion requested dtype {} for Tensor with dtype {}",
                    d.name(),
                    t.dtype().name()
                )));
            }
        }
        return Ok(t.into());
    }
    Ok(convert_value(value, dt.or(hint))?.into())
}

/// TF equivalent: `tf.cast`.
#[pyfunction]
#[pyo3(signature = (x, dtype, name=None))]
fn cast(
    x: &Bound<'_, PyAny>,
    dtype: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let d = to_dtype(dtype)?;
    let t = to_tensor(x, None)?;
    Ok(ops::cast(&t, d)?.into())
}

/// TF equivalent: `tf.zeros`.
#[pyfunction]
#[pyo3(signature = (shape, dtype=None, name=None))]
fn zeros(
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    Ok(ops::zeros(&dims_arg(shape)?, dtype_opt(dtype)?.unwrap_or(DType::F32)).into())
}

/// TF equivalent: `tf.ones`.
#[pyfunction]
#[pyo3(signature = (shape, dtype=None, name=None))]
fn ones(
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    Ok(ops::ones(&dims_arg(shape)?, dtype_opt(dtype)?.unwrap_or(DType::F32)).into())
}

/// TF equivalent: `tf.zeros_like`.
#[pyfunction]
#[pyo3(signature = (input, dtype=None, name=None))]
fn zeros_like(
    input: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let t = to_tensor(input, None)?;
    Ok(ops::zeros(t.shape(), dtype_opt(dtype)?.unwrap_or(t.dtype())).into())
}

/// TF equivalent: `tf.ones_like`.
#[pyfunction]
#[pyo3(signature = (input, dtype=None, name=None))]
fn ones_like(
    input: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let t = to_tensor(input, None)?;
    Ok(ops::ones(t.shape(), dtype_opt(dtype)?.unwrap_or(t.dtype())).into())
}

/// TF equivalent: `tf.fill`.
#[pyfunction]
#[pyo3(signature = (dims, value, name=None))]
fn fill(
    dims: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let v = to_tensor(value, None)?;
    Ok(ops::fill(&dims_arg(dims)?, &v)?.into())
}

/// TF equivalent: `tf.eye`.
#[pyfunction]
#[pyo3(signature = (num_rows, num_columns=None, batch_shape=None, dtype=None, name=None))]
fn eye(
    num_rows: usize,
    num_columns: Option<usize>,
    batch_shape: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let batch = match batch_shape {
        Some(b) if !b.is_none() => dims_arg(b)?,
        _ => vec![],
    };
    Ok(ops::eye(
        num_rows,
        num_columns,
        &batch,
        dtype_opt(dtype)?.unwrap_or(DType::F32),
    )
    .into())
}

/// TF equivalent: `tf.linspace` (dtype follows `start`: float32 for Python floats).
#[pyfunction]
#[pyo3(signature = (start, stop, num, name=None, axis=0))]
fn linspace(
    start: &Bound<'_, PyAny>,
    stop: &Bound<'_, PyAny>,
    num: usize,
    name: Option<&Bound<'_, PyAny>>,
    axis: isize,
) -> PyResult<PyTensor> {
    let _ = (name, axis);
    let s = to_tensor(start, None)?;
    let dt = if s.dtype().is_floating() {
        s.dtype()
    } else {
        DType::F32
    };
    let e = to_tensor(stop, Some(dt))?;
    Ok(ops::linspace(s.to_f64_scalar()?, e.to_f64_scalar()?, num, dt)?.into())
}

/// TF equivalent: `tf.range` (int32 for int arguments, float32 for floats).
#[pyfunction]
#[pyo3(signature = (start, limit=None, delta=None, dtype=None, name=None))]
fn range(
    start: &Bound<'_, PyAny>,
    limit: Option<&Bound<'_, PyAny>>,
    delta: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let mut args = vec![to_tensor(start, None)?];
    if let Some(l) = limit.filter(|l| !l.is_none()) {
        args.push(to_tensor(l, None)?);
    }
    if let Some(d) = delta.filter(|d| !d.is_none()) {
        args.push(to_tensor(d, None)?);
    }
    let inferred = if args.iter().any(|t| t.dtype().is_floating()) {
        args.iter()
            .map(|t| t.dtype())
            .find(|d| d.is_floating())
            .unwrap_or(DType::F32)
    } else if args.iter().any(|t| t.dtype() == DType::I64) {
        DType::I64
    } else {
        DType::I32
    };
    let dt = dtype_opt(dtype)?.unwrap_or(inferred);
    let vals: Vec<f64> = args
        .iter()
        .map(|t| t.to_f64_scalar())
        .collect::<crate::Result<_>>()?;
    let (s, l) = if vals.len() == 1 {
        (0.0, vals[0])
    } else {
        (vals[0], vals[1])
    };
    let d = if vals.len() == 3 { vals[2] } else { 1.0 };
    Ok(ops::range(s, l, d, dt)?.into())
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    for f in [
        wrap_pyfunction!(constant, m)?,
        wrap_pyfunction!(convert_to_tensor, m)?,
        wrap_pyfunction!(cast, m)?,
        wrap_pyfunction!(zeros, m)?,
        wrap_pyfunction!(ones, m)?,
        wrap_pyfunction!(zeros_like, m)?,
        wrap_pyfunction!(ones_like, m)?,
        wrap_pyfunction!(fill, m)?,
        wrap_pyfunction!(eye, m)?,
        wrap_pyfunction!(linspace, m)?,
        wrap_pyfunction!(range, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
