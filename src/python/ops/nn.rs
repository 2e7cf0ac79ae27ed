//! `gt.nn` primitives (activations and softmax losses).

use pyo3::prelude::*;

use crate::ops;
use crate::python::convert::to_tensor;
use crate::python::heavy;
use crate::python::tensor::PyTensor;

macro_rules! py_activation {
    ($($(#[$doc:meta])* $py:ident => $f:path),* $(,)?) => {$(
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = (features, name=None))]
        fn $py(py: Python<'_>, features: &Bound<'_, PyAny>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
            let _ = name;
            let x = to_tensor(features, None)?;
            Ok(heavy(py, x.size(), || $f(&x))?.into())
        }
    )*};
}
py_activation! {
    /// Elementwise ``min(max(x, 0), 6)``. TF equivalent: ``tf.nn.relu6``.
    ///
    /// >>> print(gt.nn.relu6(gt.constant([-1.0, 3.0, 8.0])))
    /// gt.Tensor([0. 3. 6.], shape=(3,), dtype=float32)
    relu6 => ops::relu6,
    /// Scaled exponential linear unit (TF's constants). TF equivalent: ``tf.nn.selu``.
    ///
    /// >>> print(gt.nn.selu(gt.constant([-1.0, 1.0])))
    /// gt.Tensor([-1.1113307  1.050701 ], shape=(2,), dtype=float32)
    selu => ops::selu,
}

/// Elementwise ``x`` if ``x > 0`` else ``alpha * x``. TF equivalent: ``tf.nn.leaky_relu``.
///
/// >>> print(gt.nn.leaky_relu(gt.constant([-1.0, 2.0])))
/// gt.Tensor([-0.2  2. ], shape=(2,), dtype=float32)
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
    ($($(#[$doc:meta])* $py:ident => $f:path),* $(,)?) => {$(
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = (logits, axis=None, name=None))]
        fn $py(py: Python<'_>, logits: &Bound<'_, PyAny>, axis: Option<isize>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
            let _ = name;
            let x = to_tensor(logits, None)?;
            Ok(heavy(py, x.size(), || $f(&x, axis.unwrap_or(-1)))?.into())
        }
    )*};
}
py_softmax! {
    /// ``exp(x) / sum(exp(x))`` along ``axis`` (the last by default), computed stably.
    /// TF equivalent: ``tf.nn.softmax``.
    ///
    /// >>> print(gt.nn.softmax(gt.constant([0.0, 1.0, 2.0])))
    /// gt.Tensor([0.09003057 0.24472848 0.66524094], shape=(3,), dtype=float32)
    softmax => ops::softmax,
    /// ``log(softmax(x))`` along ``axis`` (the last by default), computed stably.
    /// TF equivalent: ``tf.nn.log_softmax``.
    ///
    /// >>> print(gt.nn.log_softmax(gt.constant([0.0, 1.0, 2.0])))
    /// gt.Tensor([-2.407606   -1.4076059  -0.40760595], shape=(3,), dtype=float32)
    log_softmax => ops::log_softmax,
}

/// Cross-entropy between the distributions ``labels`` and ``softmax(logits)`` along
/// ``axis``, one value per example. TF equivalent:
/// ``tf.nn.softmax_cross_entropy_with_logits``.
///
/// >>> print(gt.nn.softmax_cross_entropy_with_logits(labels=[[0.0, 1.0]], logits=gt.constant([[1.0, 2.0]])))
/// gt.Tensor([0.31326166], shape=(1,), dtype=float32)
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

/// Cross-entropy of ``softmax(logits)`` against integer class ``labels``, one value per
/// example. TF equivalent: ``tf.nn.sparse_softmax_cross_entropy_with_logits``.
///
/// >>> print(gt.nn.sparse_softmax_cross_entropy_with_logits(labels=[1], logits=gt.constant([[1.0, 2.0]])))
/// gt.Tensor([0.31326166], shape=(1,), dtype=float32)
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
