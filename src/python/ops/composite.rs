//! The crate's composite ops (short TF compositions of engine ops): the moments and
//! logical reductions, `l2_normalize`, the `gt.nn` composites and `norm`. `gt.math`,
//! `gt.nn` and `gt.linalg` re-export them.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyString;

use super::{axes_arg, dims_arg};
use crate::ops;
use crate::python::convert::to_tensor;
use crate::python::heavy;
use crate::python::tensor::PyTensor;

macro_rules! py_reduce {
    ($($(#[$doc:meta])* $py:ident => $f:path),* $(,)?) => {$(
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = (input_tensor, axis=None, keepdims=false, name=None))]
        fn $py(py: Python<'_>, input_tensor: &Bound<'_, PyAny>, axis: Option<&Bound<'_, PyAny>>, keepdims: bool, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
            let _ = name;
            let x = to_tensor(input_tensor, None)?;
            let axes = axes_arg(axis)?;
            Ok(heavy(py, x.size(), || $f(&x, axes.as_deref(), keepdims))?.into())
        }
    )*};
}

py_reduce! {
    /// Variance over ``axis`` (all axes by default); real for complex inputs.
    /// TF equivalent: ``tf.math.reduce_variance``.
    ///
    /// >>> float(gt.math.reduce_variance(gt.constant([1.0, 2.0, 3.0, 4.0])))
    /// 1.25
    reduce_variance => ops::reduce_variance,
    /// Standard deviation over ``axis`` (all axes by default). TF equivalent:
    /// ``tf.math.reduce_std``.
    ///
    /// >>> print(f"{float(gt.math.reduce_std(gt.constant([1.0, 3.0]))):.6f}")
    /// 1.000000
    reduce_std => ops::reduce_std,
    /// ``log(sum(exp(x)))`` over ``axis``, computed stably. TF equivalent:
    /// ``tf.math.reduce_logsumexp``.
    ///
    /// >>> print(f"{float(gt.math.reduce_logsumexp(gt.constant([0.0, 0.0]))):.6f}")
    /// 0.693147
    reduce_logsumexp => ops::reduce_logsumexp,
    /// Logical or of a bool tensor over ``axis`` (``False`` over no elements).
    /// TF equivalent: ``tf.math.reduce_any``.
    ///
    /// >>> bool(gt.math.reduce_any(gt.constant([False, True])))
    /// True
    reduce_any => ops::reduce_any,
    /// Logical and of a bool tensor over ``axis`` (``True`` over no elements).
    /// TF equivalent: ``tf.math.reduce_all``.
    ///
    /// >>> bool(gt.math.reduce_all(gt.constant([False, True])))
    /// False
    reduce_all => ops::reduce_all,
}

/// ``x / sqrt(max(sum(x**2), epsilon))`` over ``axis`` (all axes by default; ``dim``
/// is TF's deprecated name for it). TF equivalent: ``tf.math.l2_normalize`` (also
/// ``gt.nn.l2_normalize``).
///
/// >>> print(gt.math.l2_normalize(gt.constant([3.0, 4.0])))
/// gt.Tensor([0.6 0.8], shape=(2,), dtype=float32)
#[pyfunction]
#[pyo3(signature = (x, axis=None, epsilon=1e-12, name=None, dim=None))]
fn l2_normalize(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    epsilon: f64,
    name: Option<&Bound<'_, PyAny>>,
    dim: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let axes = match dim.filter(|d| !d.is_none()) {
        Some(d) => axes_arg(Some(d))?,
        None => axes_arg(axis)?,
    };
    let x = to_tensor(x, None)?;
    Ok(heavy(py, x.size(), || {
        ops::l2_normalize(&x, axes.as_deref(), epsilon)
    })?
    .into())
}

/// Gaussian error linear unit: exactly ``0.5 x (1 + erf(x / sqrt 2))``, or with
/// ``approximate=True`` the tanh form ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``.
/// TF equivalent: ``tf.nn.gelu``.
///
/// >>> round(float(gt.nn.gelu(gt.constant(1.0))), 6)
/// 0.841345
#[pyfunction]
#[pyo3(signature = (features, approximate=false, name=None))]
fn gelu(
    py: Python<'_>,
    features: &Bound<'_, PyAny>,
    approximate: bool,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(features, None)?;
    Ok(heavy(py, x.size(), || ops::gelu(&x, approximate))?.into())
}

/// ``x * sigmoid(beta * x)``. TF equivalent: ``tf.nn.silu`` / ``tf.nn.swish``.
///
/// >>> round(float(gt.nn.silu(gt.constant(1.0))), 6)
/// 0.731059
#[pyfunction]
#[pyo3(signature = (features, beta=1.0, name=None))]
fn silu(
    py: Python<'_>,
    features: &Bound<'_, PyAny>,
    beta: f64,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(features, None)?;
    Ok(heavy(py, x.size(), || ops::silu(&x, beta))?.into())
}

/// ``sum(t ** 2) / 2``. TF equivalent: ``tf.nn.l2_loss``.
///
/// >>> float(gt.nn.l2_loss(gt.constant([1.0, 2.0])))
/// 2.5
#[pyfunction]
#[pyo3(signature = (t, name=None))]
fn l2_loss(
    py: Python<'_>,
    t: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(t, None)?;
    Ok(heavy(py, x.size(), || ops::l2_loss(&x))?.into())
}

/// Elementwise logistic loss, computed stably as TF does:
/// ``max(x, 0) - x * z + log(1 + exp(-|x|))``. TF equivalent:
/// ``tf.nn.sigmoid_cross_entropy_with_logits``.
///
/// >>> round(float(gt.nn.sigmoid_cross_entropy_with_logits(labels=1.0, logits=0.0)), 6)
/// 0.693147
#[pyfunction]
#[pyo3(signature = (labels=None, logits=None, name=None))]
fn sigmoid_cross_entropy_with_logits(
    py: Python<'_>,
    labels: Option<&Bound<'_, PyAny>>,
    logits: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let (Some(labels), Some(logits)) = (
        labels.filter(|l| !l.is_none()),
        logits.filter(|l| !l.is_none()),
    ) else {
        return Err(PyValueError::new_err(
            "Both labels and logits must be provided.",
        ));
    };
    let lg = to_tensor(logits, None)?;
    let lb = to_tensor(labels, Some(lg.dtype()))?;
    Ok(heavy(py, lg.size(), || {
        ops::sigmoid_cross_entropy_with_logits(&lb, &lg)
    })?
    .into())
}

/// Zeros elements with probability ``rate`` and scales the rest by ``1 / (1 - rate)``;
/// ``noise_shape`` (broadcast to ``x``'s shape) shares one decision along its size-1
/// axes. TF equivalent: ``tf.nn.dropout`` (the random stream is gradtape's, not TF's;
/// ``seed`` follows ``gt.random``'s rules).
///
/// >>> y = gt.nn.dropout(gt.ones([1000]), rate=0.5, seed=1)
/// >>> sorted(set(y.numpy().tolist()))
/// [0.0, 2.0]
#[pyfunction]
#[pyo3(signature = (x, rate, noise_shape=None, seed=None, name=None))]
fn dropout(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    rate: f64,
    noise_shape: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(x, None)?;
    let noise = match noise_shape.filter(|n| !n.is_none()) {
        Some(n) => Some(dims_arg(n)?),
        None => None,
    };
    let seed = super::random::seed_arg(seed)?;
    Ok(heavy(py, x.size(), || {
        ops::dropout(&x, rate, noise.as_deref(), seed)
    })?
    .into())
}

/// TF's ``ord`` argument: ``'euclidean'``/``'fro'``, ``inf``/``'inf'``, or a positive
/// number.
fn ord_arg(ord: Option<&Bound<'_, PyAny>>) -> PyResult<ops::NormOrd> {
    let Some(ord) = ord.filter(|o| !o.is_none()) else {
        return Ok(ops::NormOrd::Euclidean);
    };
    if ord.is_instance_of::<PyString>() {
        return match ord.extract::<String>()?.as_str() {
            "euclidean" | "fro" => Ok(ops::NormOrd::Euclidean),
            "inf" => Ok(ops::NormOrd::Inf),
            other => Err(PyValueError::new_err(format!(
                "'ord' must be a supported vector norm, got '{other}'"
            ))),
        };
    }
    match ord.extract::<f64>() {
        Ok(p) => Ok(ops::NormOrd::P(p)),
        Err(_) => Err(PyValueError::new_err(format!(
            "'ord' must be a supported vector norm, got {}",
            ord.repr()?
        ))),
    }
}

/// Vector norm over ``axis`` (all elements by default, or one axis), or matrix norm
/// over a pair of axes. TF equivalent: ``tf.norm`` / ``tf.linalg.norm`` for vector
/// orders ``'euclidean'``, 1, 2, ``inf`` and any ``p > 0``, and matrix orders
/// ``'euclidean'``/``'fro'``, 1 and ``inf`` (not 2).
///
/// >>> float(gt.norm(gt.constant([3.0, 4.0])))
/// 5.0
/// >>> float(gt.norm(gt.constant([[1.0, -2.0], [3.0, 4.0]]), ord=1, axis=[0, 1]))
/// 6.0
#[pyfunction]
#[pyo3(
    signature = (tensor, ord=None, axis=None, keepdims=false, name=None),
    text_signature = "(tensor, ord='euclidean', axis=None, keepdims=False, name=None)"
)]
fn norm(
    py: Python<'_>,
    tensor: &Bound<'_, PyAny>,
    ord: Option<&Bound<'_, PyAny>>,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let ord = ord_arg(ord)?;
    let axes = axes_arg(axis)?;
    let x = to_tensor(tensor, None)?;
    Ok(heavy(py, x.size(), || {
        ops::norm(&x, ord, axes.as_deref(), keepdims)
    })?
    .into())
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    for f in [
        wrap_pyfunction!(reduce_variance, m)?,
        wrap_pyfunction!(reduce_std, m)?,
        wrap_pyfunction!(reduce_logsumexp, m)?,
        wrap_pyfunction!(reduce_any, m)?,
        wrap_pyfunction!(reduce_all, m)?,
        wrap_pyfunction!(l2_normalize, m)?,
        wrap_pyfunction!(gelu, m)?,
        wrap_pyfunction!(silu, m)?,
        wrap_pyfunction!(l2_loss, m)?,
        wrap_pyfunction!(sigmoid_cross_entropy_with_logits, m)?,
        wrap_pyfunction!(dropout, m)?,
        wrap_pyfunction!(norm, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
