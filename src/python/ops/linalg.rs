//! Matrix products and linear algebra.

use pyo3::prelude::*;

use crate::ops;
use crate::python::heavy;
use crate::python::tensor::PyTensor;

/// Matrix product of the last two axes (batch axes broadcast).
/// TF equivalent: `tf.linalg.matmul` (`a @ b`).
///
/// >>> import gradtape as gt
/// >>> gt.linalg.matmul(gt.constant([[1.0, 2.0]]), gt.constant([[3.0], [4.0]])).numpy().tolist()
/// [[11.0]]
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

fn one(x: &Bound<'_, PyAny>) -> PyResult<crate::tensor::Tensor> {
    crate::python::convert::to_tensor(x, None)
}

/// Solves `matrix @ x = rhs` (LU with partial pivoting); a singular matrix raises.
/// TF equivalent: `tf.linalg.solve`.
///
/// >>> import gradtape as gt
/// >>> a = gt.constant([[2.0, 1.0], [1.0, 3.0]])
/// >>> [round(v, 4) for v in gt.linalg.solve(a, gt.constant([[3.0], [5.0]])).numpy().ravel().tolist()]
/// [0.8, 1.4]
#[pyfunction]
#[pyo3(signature = (matrix, rhs, adjoint=false, name=None))]
fn solve(
    py: Python<'_>,
    matrix: &Bound<'_, PyAny>,
    rhs: &Bound<'_, PyAny>,
    adjoint: bool,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let (a, b) = super::pair(matrix, rhs)?;
    let n = a.size().max(b.size());
    Ok(heavy(py, n, || ops::solve(&a, &b, adjoint))?.into())
}

/// Solves a triangular system. TF equivalent: `tf.linalg.triangular_solve`.
///
/// >>> import gradtape as gt
/// >>> l = gt.constant([[2.0, 0.0], [1.0, 1.0]])
/// >>> gt.linalg.triangular_solve(l, gt.constant([[2.0], [3.0]])).numpy().tolist()
/// [[1.0], [2.0]]
#[pyfunction]
#[pyo3(signature = (matrix, rhs, lower=true, adjoint=false, name=None))]
fn triangular_solve(
    py: Python<'_>,
    matrix: &Bound<'_, PyAny>,
    rhs: &Bound<'_, PyAny>,
    lower: bool,
    adjoint: bool,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let (a, b) = super::pair(matrix, rhs)?;
    let n = a.size().max(b.size());
    Ok(heavy(py, n, || ops::triangular_solve(&a, &b, lower, adjoint))?.into())
}

/// Matrix inverse; a singular matrix raises. TF equivalent: `tf.linalg.inv`.
///
/// >>> import gradtape as gt
/// >>> gt.linalg.inv(gt.constant([[2.0, 0.0], [0.0, 4.0]])).numpy().tolist()
/// [[0.5, 0.0], [0.0, 0.25]]
#[pyfunction]
#[pyo3(signature = (input, adjoint=false, name=None))]
fn inv(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    adjoint: bool,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = one(input)?;
    Ok(heavy(py, x.size(), || ops::inv(&x, adjoint))?.into())
}

/// Sign and log of the absolute determinant.
/// TF equivalent: `tf.linalg.slogdet`: `(sign, log_abs_determinant)`.
///
/// >>> import gradtape as gt
/// >>> sign, logdet = gt.linalg.slogdet(gt.constant([[2.0, 0.0], [0.0, 3.0]]))
/// >>> float(sign), round(float(logdet), 5)
/// (1.0, 1.79176)
#[pyfunction]
#[pyo3(signature = (input, name=None))]
fn slogdet(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<(PyTensor, PyTensor)> {
    let _ = name;
    let x = one(input)?;
    let (s, l) = heavy(py, x.size(), || ops::slogdet(&x))?;
    Ok((s.into(), l.into()))
}

/// A matrix with `diagonal` on its main diagonal.
/// TF equivalent: `tf.linalg.diag` (main diagonal, `k=0`).
///
/// >>> import gradtape as gt
/// >>> gt.linalg.diag(gt.constant([1.0, 2.0])).numpy().tolist()
/// [[1.0, 0.0], [0.0, 2.0]]
#[pyfunction]
#[pyo3(signature = (diagonal, name=None, k=0, num_rows=-1, num_cols=-1, padding_value=0))]
fn diag(
    diagonal: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
    k: i64,
    num_rows: i64,
    num_cols: i64,
    padding_value: i64,
) -> PyResult<PyTensor> {
    let _ = name;
    if k != 0 || padding_value != 0 {
        return Err(pyo3::exceptions::PyNotImplementedError::new_err(
            "tf.linalg.diag: only k=0 and padding_value=0 are supported",
        ));
    }
    let dim = |v: i64| (v >= 0).then_some(v as usize);
    let x = one(diagonal)?;
    Ok(ops::diag(&x, dim(num_rows), dim(num_cols))?.into())
}

/// The main diagonal. TF equivalent: `tf.linalg.diag_part` (main diagonal, `k=0`).
///
/// >>> import gradtape as gt
/// >>> gt.linalg.diag_part(gt.constant([[1.0, 2.0], [3.0, 4.0]])).numpy().tolist()
/// [1.0, 4.0]
#[pyfunction]
#[pyo3(signature = (input, name=None, k=0, padding_value=0))]
fn diag_part(
    input: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
    k: i64,
    padding_value: i64,
) -> PyResult<PyTensor> {
    let _ = name;
    if k != 0 || padding_value != 0 {
        return Err(pyo3::exceptions::PyNotImplementedError::new_err(
            "tf.linalg.diag_part: only k=0 and padding_value=0 are supported",
        ));
    }
    Ok(ops::diag_part(&one(input)?)?.into())
}

/// Matrix-vector product. TF equivalent: `tf.linalg.matvec`.
///
/// >>> import gradtape as gt
/// >>> gt.linalg.matvec(gt.constant([[1.0, 2.0], [3.0, 4.0]]), gt.constant([1.0, 1.0])).numpy().tolist()
/// [3.0, 7.0]
#[pyfunction]
#[pyo3(signature = (a, b, transpose_a=false, adjoint_a=false, a_is_sparse=false, b_is_sparse=false, name=None))]
#[allow(clippy::too_many_arguments)]
fn matvec(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    transpose_a: bool,
    adjoint_a: bool,
    a_is_sparse: bool,
    b_is_sparse: bool,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = (name, a_is_sparse, b_is_sparse);
    let (x, y) = super::pair(a, b)?;
    let n = x.size().max(y.size());
    Ok(heavy(py, n, || ops::matvec(&x, &y, transpose_a, adjoint_a))?.into())
}

/// Transposes the last two axes. TF equivalent: `tf.linalg.matrix_transpose`.
///
/// >>> import gradtape as gt
/// >>> gt.linalg.matrix_transpose(gt.constant([[1.0, 2.0, 3.0]])).shape
/// TensorShape([3, 1])
#[pyfunction]
#[pyo3(signature = (a, name=None, conjugate=false))]
fn matrix_transpose(
    a: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
    conjugate: bool,
) -> PyResult<PyTensor> {
    let _ = name;
    Ok(ops::matrix_transpose(&one(a)?, conjugate)?.into())
}

/// Defines `f(input, name=None)` over engine functions of one matrix.
macro_rules! py_matrix_unary {
    ($($(#[$doc:meta])* $py:ident => $f:path),* $(,)?) => {$(
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = (input, name=None))]
        fn $py(py: Python<'_>, input: &Bound<'_, PyAny>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
            let _ = name;
            let x = one(input)?;
            Ok(heavy(py, x.size(), || $f(&x))?.into())
        }
    )*};
}
py_matrix_unary!(
    /// Determinant. TF equivalent: `tf.linalg.det`.
    ///
    /// >>> import gradtape as gt
    /// >>> float(gt.linalg.det(gt.constant([[2.0, 0.0], [0.0, 3.0]])))
    /// 6.0
    det => ops::det,
    /// Cholesky factor `L` (lower) of a positive-definite matrix; raises otherwise.
    /// TF equivalent: `tf.linalg.cholesky`.
    ///
    /// >>> import gradtape as gt
    /// >>> gt.linalg.cholesky(gt.constant([[4.0, 2.0], [2.0, 2.0]])).numpy().tolist()
    /// [[2.0, 0.0], [1.0, 1.0]]
    cholesky => ops::cholesky,
    /// Sum of the main diagonal. TF equivalent: `tf.linalg.trace`.
    ///
    /// >>> import gradtape as gt
    /// >>> float(gt.linalg.trace(gt.constant([[1.0, 2.0], [3.0, 4.0]])))
    /// 5.0
    trace => ops::trace,
    /// Conjugate transpose of the last two axes. TF equivalent: `tf.linalg.adjoint`.
    ///
    /// >>> import gradtape as gt
    /// >>> gt.linalg.adjoint(gt.constant([[1.0, 2.0]])).numpy().tolist()
    /// [[1.0], [2.0]]
    adjoint => ops::adjoint,
);

/// Einstein summation. TF equivalent: `tf.einsum(equation, *inputs)`.
///
/// >>> import gradtape as gt
/// >>> gt.einsum("ij,jk->ik", gt.constant([[1.0, 2.0]]), gt.constant([[3.0], [4.0]])).numpy().tolist()
/// [[11.0]]
#[pyfunction]
#[pyo3(signature = (equation, *inputs, **kwargs))]
fn einsum(
    py: Python<'_>,
    equation: &str,
    inputs: &Bound<'_, pyo3::types::PyTuple>,
    kwargs: Option<&Bound<'_, pyo3::types::PyDict>>,
) -> PyResult<PyTensor> {
    if let Some(kw) = kwargs {
        for k in kw.keys() {
            let k: String = k.extract()?;
            if k != "name" && k != "optimize" {
                return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                    "einsum() got an unexpected keyword argument '{k}'"
                )));
            }
        }
    }
    let mut ts: Vec<crate::tensor::Tensor> = Vec::with_capacity(inputs.len());
    let first = inputs
        .iter()
        .find_map(|x| crate::python::convert::as_tensor(&x).map(|t| t.dtype()));
    for x in inputs.iter() {
        ts.push(match crate::python::convert::as_tensor(&x) {
            Some(t) => t,
            None => crate::python::convert::convert_value(&x, first)?,
        });
    }
    let n = ts.iter().map(|t| t.size()).max().unwrap_or(0);
    Ok(heavy(py, n, || ops::einsum(equation, &ts))?.into())
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(matmul, m)?)?;
    for f in [
        wrap_pyfunction!(solve, m)?,
        wrap_pyfunction!(triangular_solve, m)?,
        wrap_pyfunction!(inv, m)?,
        wrap_pyfunction!(slogdet, m)?,
        wrap_pyfunction!(diag, m)?,
        wrap_pyfunction!(diag_part, m)?,
        wrap_pyfunction!(matvec, m)?,
        wrap_pyfunction!(matrix_transpose, m)?,
        wrap_pyfunction!(det, m)?,
        wrap_pyfunction!(cholesky, m)?,
        wrap_pyfunction!(trace, m)?,
        wrap_pyfunction!(adjoint, m)?,
        wrap_pyfunction!(einsum, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
