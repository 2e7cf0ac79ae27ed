//! `gt.nn` primitives (activations and softmax losses).

use pyo3::prelude::*;

use crate::ops;
use crate::python::convert::to_tensor;
use crate::python::heavy;
use crate::python::tensor::PyTensor;

macro_rules! py_activation {
    ($($py:ident => $f:path),* $(,)?) => {$(
        #[pyfunction]
        #[pyo3(signature = (features, name=None))]
        fn $py(py: Python<'_>, features: &Bound<'_, PyAny>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
            let _ = name;
            let x = to_tensor(features, None)?;
            Ok(heavy(py, x.size(), || $f(&x))?.into())
        }
    )*};
}
py_activation! { relu6 => ops::relu6, selu => ops::selu }

/// TF equivalent: `tf.nn.leaky_relu`.
#[pyfunction]
#[pyo3(signature = (features, alpha=0.2, name=None))]
fn leaky_relu(
    py: Python<'_>,
    features: &Bound<'_, PyAny>,
    alpha: f64,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(features, None)?;
    Ok(heavy(py, x.size(), || ops::leaky_relu(&x, alpha))?.into())
}

macro_rules! py_softmax {
    ($($py:ident => $f:path),* $(,)?) => {$(
        #[pyfunction]
        #[pyo3(signature = (logits, axis=None, name=None))]
        fn $py(py: Python<'_>, logits: &Bound<'_, PyAny>, axis: Option<isize>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
            let _ = name;
            let x = to_tensor(logits, None)?;
            Ok(heavy(py, x.size(), || $f(&x, axis.unwrap_or(-1)))?.into())
        }
    )*};
}
py_softmax! { softmax => ops::softmax, log_softmax => ops::log_softmax }

/// TF equivalent: `tf.nn.softmax_cross_entropy_with_logits`.
#[pyfunction]
#[pyo3(signature = (labels, logits, axis=-1, name=None))]
fn softmax_cross_entropy_with_logits(
    py: Python<'_>,
    labels: &Bound<'_, PyAny>,
    logits: &Bound<'_, PyAny>,
    axis: isize,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let lg = to_tensor(logits, None)?;
    let lb = to_tensor(labels, Some(lg.dtype()))?;
    Ok(heavy(py, lg.size(), || {
        ops::softmax_cross_entropy_with_logits(&lb, &lg, axis)
    })?
    .into())
}

/// TF equivalent: `tf.nn.sparse_softmax_cross_entropy_with_logits`.
#[pyfunction]
#[pyo3(signature = (labels, logits, name=None))]
fn sparse_softmax_cross_entropy_with_logits(
    py: Python<'_>,
    labels: &Bound<'_, PyAny>,
    logits: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let lg = to_tensor(logits, None)?;
    let lb = to_tensor(labels, None)?;
    Ok(heavy(py, lg.size(), || {
        ops::sparse_softmax_cross_entropy_with_logits(&lb, &lg)
    })?
    .into())
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    for f in [
        wrap_pyfunction!(relu6, m)?,
        wrap_pyfunction!(selu, m)?,
        wrap_pyfunction!(leaky_relu, m)?,
        wrap_pyfunction!(softmax, m)?,
        wrap_pyfunction!(log_softmax, m)?,
        wrap_pyfunction!(softmax_cross_entropy_with_logits, m)?,
        wrap_pyfunction!(sparse_softmax_cross_entropy_with_logits, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
