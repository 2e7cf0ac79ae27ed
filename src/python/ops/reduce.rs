//! Reductions and scans.

use pyo3::prelude::*;

use super::axes_arg;
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
    /// Sum over ``axis`` (all axes by default). TF equivalent: ``tf.math.reduce_sum``.
    ///
    /// >>> x = gt.constant([[1.0, 2.0], [3.0, 4.0]])
    /// >>> print(gt.reduce_sum(x))
    /// gt.Tensor(10.0, shape=(), dtype=float32)
    /// >>> print(gt.reduce_sum(x, axis=0, keepdims=True))
    /// gt.Tensor([[4. 6.]], shape=(1, 2), dtype=float32)
    reduce_sum => ops::reduce_sum,
    /// Mean over ``axis`` (all axes by default); integer tensors give integer means, as in TF.
    /// TF equivalent: ``tf.math.reduce_mean``.
    ///
    /// >>> print(gt.reduce_mean(gt.constant([[1.0, 2.0], [3.0, 4.0]]), axis=1))
    /// gt.Tensor([1.5 3.5], shape=(2,), dtype=float32)
    reduce_mean => ops::reduce_mean,
    /// Maximum over ``axis`` (all axes by default). TF equivalent: ``tf.math.reduce_max``.
    ///
    /// >>> print(gt.reduce_max(gt.constant([[1.0, 5.0], [3.0, 4.0]]), axis=0))
    /// gt.Tensor([3. 5.], shape=(2,), dtype=float32)
    reduce_max => ops::reduce_max,
    /// Minimum over ``axis`` (all axes by default). TF equivalent: ``tf.math.reduce_min``.
    ///
    /// >>> print(gt.reduce_min(gt.constant([[1.0, 5.0], [3.0, 4.0]]), axis=0))
    /// gt.Tensor([1. 4.], shape=(2,), dtype=float32)
    reduce_min => ops::reduce_min,
    /// Product over ``axis`` (all axes by default). TF equivalent: ``tf.math.reduce_prod``.
    ///
    /// >>> print(gt.reduce_prod(gt.constant([1.0, 2.0, 3.0])))
    /// gt.Tensor(6.0, shape=(), dtype=float32)
    reduce_prod => ops::reduce_prod,
}

macro_rules! py_scan {
    ($($(#[$doc:meta])* $py:ident => $f:path),* $(,)?) => {$(
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = (x, axis=0, exclusive=false, reverse=false, name=None))]
        fn $py(py: Python<'_>, x: &Bound<'_, PyAny>, axis: isize, exclusive: bool, reverse: bool, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
            let _ = name;
            let x = to_tensor(x, None)?;
            Ok(heavy(py, x.size(), || $f(&x, axis, exclusive, reverse))?.into())
        }
    )*};
}
py_scan! {
    /// Cumulative sum along ``axis`` (``exclusive`` starts from 0, ``reverse`` runs from the
    /// end). TF equivalent: ``tf.math.cumsum``.
    ///
    /// >>> print(gt.cumsum(gt.constant([1.0, 2.0, 3.0])))
    /// gt.Tensor([1. 3. 6.], shape=(3,), dtype=float32)
    /// >>> print(gt.cumsum(gt.constant([1.0, 2.0, 3.0]), exclusive=True))
    /// gt.Tensor([0. 1. 3.], shape=(3,), dtype=float32)
    cumsum => ops::cumsum,
    /// Cumulative product along ``axis`` (``exclusive`` starts from 1, ``reverse`` runs from
    /// the end). TF equivalent: ``tf.math.cumprod``.
    ///
    /// >>> print(gt.cumprod(gt.constant([1.0, 2.0, 3.0])))
    /// gt.Tensor([1. 2. 6.], shape=(3,), dtype=float32)
    cumprod => ops::cumprod,
}

macro_rules! py_arg {
    ($($(#[$doc:meta])* $py:ident => $f:path),* $(,)?) => {$(
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = (input, axis=None, output_type=None, name=None))]
        fn $py(input: &Bound<'_, PyAny>, axis: Option<isize>, output_type: Option<&Bound<'_, PyAny>>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
            let _ = name;
            let x = to_tensor(input, None)?;
            let dt = match output_type {
                Some(d) if !d.is_none() => crate::python::convert::to_dtype(d)?,
                _ => crate::DType::I64,
            };
            Ok($f(&x, axis, dt)?.into())
        }
    )*};
}
py_arg! {
    /// Index of the largest value along ``axis`` (0 by default), int64 unless ``output_type``
    /// says otherwise. TF equivalent: ``tf.math.argmax``.
    ///
    /// >>> print(gt.argmax(gt.constant([[1.0, 5.0], [3.0, 4.0]]), axis=1))
    /// gt.Tensor([1 1], shape=(2,), dtype=int64)
    argmax => ops::argmax,
    /// Index of the smallest value along ``axis`` (0 by default), int64 unless ``output_type``
    /// says otherwise. TF equivalent: ``tf.math.argmin``.
    ///
    /// >>> print(gt.argmin(gt.constant([[1.0, 5.0], [3.0, 4.0]]), axis=1))
    /// gt.Tensor([0 0], shape=(2,), dtype=int64)
    argmin => ops::argmin,
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    for f in [
        wrap_pyfunction!(reduce_sum, m)?,
        wrap_pyfunction!(reduce_mean, m)?,
        wrap_pyfunction!(reduce_max, m)?,
        wrap_pyfunction!(reduce_min, m)?,
        wrap_pyfunction!(reduce_prod, m)?,
        wrap_pyfunction!(cumsum, m)?,
        wrap_pyfunction!(cumprod, m)?,
        wrap_pyfunction!(argmax, m)?,
        wrap_pyfunction!(argmin, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
