//! Reductions and scans.

use pyo3::prelude::*;

use super::axes_arg;
use crate::ops;
use crate::python::convert::to_tensor;
use crate::python::heavy;
use crate::python::tensor::PyTensor;

macro_rules! py_reduce {
    ($($py:ident => $f:path),* $(,)?) => {$(
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
    reduce_sum => ops::reduce_sum, reduce_mean => ops::reduce_mean,
    reduce_max => ops::reduce_max, reduce_min => ops::reduce_min,
    reduce_prod => ops::reduce_prod,
}

macro_rules! py_scan {
    ($($py:ident => $f:path),* $(,)?) => {$(
        #[pyfunction]
        #[pyo3(signature = (x, axis=0, exclusive=false, reverse=false, name=None))]
        fn $py(py: Python<'_>, x: &Bound<'_, PyAny>, axis: isize, exclusive: bool, reverse: bool, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
            let _ = name;
            let x = to_tensor(x, None)?;
            Ok(heavy(py, x.size(), || $f(&x, axis, exclusive, reverse))?.into())
        }
    )*};
}
py_scan! { cumsum => ops::cumsum, cumprod => ops::cumprod }

macro_rules! py_arg {
    ($($py:ident => $f:path),* $(,)?) => {$(
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
py_arg! { argmax => ops::argmax, argmin => ops::argmin }

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
