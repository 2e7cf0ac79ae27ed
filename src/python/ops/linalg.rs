//! Matrix products and linear algebra.

use pyo3::prelude::*;

use crate::ops;
use crate::python::heavy;
use crate::python::tensor::PyTensor;

/// TF equivalent: `tf.linalg.matmul`.
#[pyfunction]
#[pyo3(signature = (a, b, transpose_a=false, transpose_b=false, adjoint_a=false, adjoint_b=false, name=None))]
#[allow(clippy::too_many_arguments)]
fn matmul(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    transpose_a: bool,
    transpose_b: bool,
    adjoint_a: bool,
    adjoint_b: bool,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let (x, y) = super::pair(a, b)?;
    let n = x.size().max(y.size());
    Ok(heavy(py, n, || {
        let x = if adjoint_a { ops::conj(&x)? } else { x.clone() };
        let y = if adjoint_b { ops::conj(&y)? } else { y.clone() };
        ops::matmul_t(&x, &y, transpose_a || adjoint_a, transpose_b || adjoint_b)
    })?
    .into())
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(matmul, m)?)?;
    Ok(())
}
