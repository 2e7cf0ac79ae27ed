//! `gt.random`: the crate's random ops (`crate::ops::random`), with TF's seed rules.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::dims_arg;
use crate::dtype::DType;
use crate::ops::random;
use crate::python::convert::to_dtype;
use crate::python::heavy;
use crate::python::tensor::PyTensor;

/// A `seed` argument: `None`, or any Python integer, taken modulo `2**31 - 1` as TF's
/// `_truncate_seed` does (so it fits the crate's `i64`).
pub(super) fn seed_arg(seed: Option<&Bound<'_, PyAny>>) -> PyResult<Option<i64>> {
    let Some(seed) = seed.filter(|s| !s.is_none()) else {
        return Ok(None);
    };
    let index = seed.py().import("operator")?.getattr("index")?;
    let i = index.call1((seed,))?;
    Ok(Some(i.rem((1i64 << 31) - 1)?.extract()?))
}

fn dtype_arg(dtype: Option<&Bound<'_, PyAny>>) -> PyResult<DType> {
    match dtype {
        Some(d) if !d.is_none() => to_dtype(d),
        _ => Ok(DType::F32),
    }
}

/// The element count of `shape` (saturating: only to choose whether to release the GIL).
fn count(shape: &[usize]) -> usize {
    shape.iter().fold(1usize, |n, &d| n.saturating_mul(d))
}

/// Sets the global seed (``None`` clears it): a program that sets the same seed draws the
/// same sequence of random tensors, and calls with an op-level ``seed`` start over.
/// TF equivalent: ``tf.random.set_seed``.
///
/// >>> gt.random.set_seed(3)
/// >>> a = gt.random.uniform([3])
/// >>> gt.random.set_seed(3)
/// >>> bool(gt.reduce_all(gt.random.uniform([3]) == a))
/// True
#[pyfunction]
#[pyo3(signature = (seed))]
fn set_seed(seed: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    random::set_seed(seed_arg(seed)?);
    Ok(())
}

/// Samples of a normal distribution (float dtypes). TF equivalent: ``tf.random.normal``.
///
/// >>> x = gt.random.normal([2, 3], seed=1)
/// >>> x.shape, x.dtype
/// (TensorShape([2, 3]), gt.float32)
#[pyfunction]
#[pyo3(
    signature = (shape, mean=0.0, stddev=1.0, dtype=None, seed=None, name=None),
    text_signature = "(shape, mean=0.0, stddev=1.0, dtype='float32', seed=None, name=None)"
)]
fn normal(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    mean: f64,
    stddev: f64,
    dtype: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let dims = dims_arg(shape)?;
    let (dt, seed) = (dtype_arg(dtype)?, seed_arg(seed)?);
    Ok(heavy(py, count(&dims), || {
        random::normal(&dims, mean, stddev, dt, seed)
    })?
    .into())
}

/// Normal samples redrawn until within two standard deviations of the mean (float
/// dtypes). TF equivalent: ``tf.random.truncated_normal``.
///
/// >>> x = gt.random.truncated_normal([1000], seed=2)
/// >>> bool(gt.reduce_max(gt.abs(x)) <= 2.0)
/// True
#[pyfunction]
#[pyo3(
    signature = (shape, mean=0.0, stddev=1.0, dtype=None, seed=None, name=None),
    text_signature = "(shape, mean=0.0, stddev=1.0, dtype='float32', seed=None, name=None)"
)]
fn truncated_normal(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    mean: f64,
    stddev: f64,
    dtype: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let dims = dims_arg(shape)?;
    let (dt, seed) = (dtype_arg(dtype)?, seed_arg(seed)?);
    Ok(heavy(py, count(&dims), || {
        random::truncated_normal(&dims, mean, stddev, dt, seed)
    })?
    .into())
}

/// An integer bound of `uniform`: a Python integer (any size the dtype allows), or an
/// integral float.
fn int_bound(ob: &Bound<'_, PyAny>) -> PyResult<i128> {
    if let Ok(i) = ob.extract::<i128>() {
        return Ok(i);
    }
    let v: f64 = ob.extract()?;
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 2f64.powi(100) {
        Ok(v as i128)
    } else {
        Err(PyValueError::new_err(format!(
            "minval and maxval must be integers for an integer dtype, got {v}"
        )))
    }
}

/// Samples of a uniform distribution on ``[minval, maxval)``; ``maxval`` defaults to 1
/// for floats and is required for integer dtypes (drawn without bias). TF equivalent:
/// ``tf.random.uniform``.
///
/// >>> x = gt.random.uniform([100], minval=2, maxval=5, dtype=gt.int32, seed=7)
/// >>> sorted(set(x.numpy().tolist()))
/// [2, 3, 4]
#[pyfunction]
#[pyo3(
    signature = (shape, minval=None, maxval=None, dtype=None, seed=None, name=None),
    text_signature = "(shape, minval=0, maxval=None, dtype='float32', seed=None, name=None)"
)]
fn uniform(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    minval: Option<&Bound<'_, PyAny>>,
    maxval: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let dims = dims_arg(shape)?;
    let (dt, seed) = (dtype_arg(dtype)?, seed_arg(seed)?);
    let minval = minval.filter(|m| !m.is_none());
    let maxval = maxval.filter(|m| !m.is_none());
    if dt.is_integer() {
        let Some(maxval) = maxval else {
            return Err(PyValueError::new_err(format!(
                "Must specify maxval for integer dtype {}",
                dt.name()
            )));
        };
        let lo = minval.map_or(Ok(0), int_bound)?;
        let hi = int_bound(maxval)?;
        return Ok(heavy(py, count(&dims), || {
            random::uniform_int(&dims, lo, hi, dt, seed)
        })?
        .into());
    }
    let lo: f64 = minval.map_or(Ok(0.0), |m| m.extract())?;
    let hi: f64 = maxval.map_or(Ok(1.0), |m| m.extract())?;
    Ok(heavy(py, count(&dims), || {
        random::uniform(&dims, lo, hi, dt, seed)
    })?
    .into())
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    for f in [
        wrap_pyfunction!(set_seed, m)?,
        wrap_pyfunction!(normal, m)?,
        wrap_pyfunction!(truncated_normal, m)?,
        wrap_pyfunction!(uniform, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
