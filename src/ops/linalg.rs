//! Linear algebra: solves, inverses, determinants, factorizations, diagonals and norms.
//! Matrix products live in `matmul.rs`.

use super::{binary_out, grads, unary_out, Grads, Op, Saves, VjpCx};
use crate::error::{Error, Result};
use crate::ops::{add, conj, matmul, matmul_t, multiply, negative};
use crate::tensor::Tensor;

// ---------------------------------------------------------------------------
// Matrix helpers composed of engine ops.

/// Swaps the last two axes (conjugating when `conjugate`). TF equivalent:
/// `tf.linalg.matrix_transpose` (`tf.linalg.adjoint` with `conjugate=true`).
pub fn matrix_transpose(x: &Tensor, conjugate: bool) -> Result<Tensor> {
    let r = x.ndim();
    if r < 2 {
        return Err(Error::invalid(
            "Transpose",
            format!("Input must have rank >= 2, got shape {:?}", x.shape()),
        ));
    }
    let mut perm: Vec<usize> = (0..r).collect();
    perm.swap(r - 2, r - 1);
    let t = crate::ops::transpose(x, Some(&perm))?;
    if conjugate {
        conj(&t)
    } else {
        Ok(t)
    }
}

/// Conjugate transpose of the last two axes. TF equivalent: `tf.linalg.adjoint`.
pub fn adjoint(x: &Tensor) -> Result<Tensor> {
    matrix_transpose(x, true)
}

/// `p @ qᴴ`.
fn mm_adj_b(p: &Tensor, q: &Tensor) -> Result<Tensor> {
    matmul_t(p, &conj(q)?, false, true)
}

/// `x` with two trailing unit axes (a per-matrix scalar ready to broadcast).
fn per_matrix(x: &Tensor) -> Result<Tensor> {
    crate::ops::expand_dims(&crate::ops::expand_dims(x, -1)?, -1)
}

/// A constant `[n, n]` mask of `x`'s dtype: `lower` (or upper) triangle of ones with
/// `diag` on the diagonal.
fn tri_mask(n: usize, lower: bool, diag: f64, dtype: crate::DType) -> Result<Tensor> {
    crate::size::check_shape("MatrixBandPart", &[n, n], dtype)?;
    let mut v = crate::size::try_vec_filled("MatrixBandPart", n * n, 0.0)?;
    for i in 0..n {
        for j in 0..n {
            let inside = if lower { j < i } else { j > i };
            v[i * n + j] = if i == j {
                diag
            } else if inside {
                1.0
            } else {
                0.0
            };
        }
    }
    crate::ops::cast(&Tensor::from_vec(v, &[n, n])?, dtype)
}

/// `solve(a, g)` for a gradient `g` with `batch` leading jacobian axes in front of
/// `a`'s right-hand-side shape `[..., n, k]`: the batch rows become extra right-hand
/// sides (`[..., n, rows * k]`), so each matrix is factored once, not once per row.
fn solve_rows(
    a: &Tensor,
    g: &Tensor,
    batch: usize,
    solve: impl Fn(&Tensor, &Tensor) -> Result<Tensor>,
) -> Result<Tensor> {
    if batch == 0 {
        return solve(a, g);
    }
    let s = g.shape().to_vec();
    let r = s.len();
    // [lead.., mid.., n, k] -> [mid.., n, lead.., k]
    let perm: Vec<usize> = (batch..r - 1).chain(0..batch).chain([r - 1]).collect();
    let mut inv = vec![0; r];
    for (i, &p) in perm.iter().enumerate() {
        inv[p] = i;
    }
    let moved = crate::ops::transpose(g, Some(&perm))?;
    let rows: usize = s[..batch].iter().product();
    let mut flat: Vec<usize> = s[batch..r - 1].to_vec();
    flat.push(rows * s[r - 1]);
    let x = solve(a, &crate::ops::reshape(&moved, &flat)?)?;
    let x = crate::ops::reshape(&x, moved.shape())?;
    crate::ops::transpose(&x, Some(&inv))
}

fn last(x: &Tensor) -> usize {
    x.shape().last().copied().unwrap_or(0)
}

// ---------------------------------------------------------------------------
// Solve, inverse, determinants.

/// Solves `matrix @ x = rhs` (`adjoint`: `matrixᴴ @ x = rhs`) per batch entry.
/// TF equivalent: `tf.linalg.solve`. A singular matrix is an InvalidArgumentError.
/// Gradient: `gb = solve(A, dy, !adjoint)`, `gA = -gb xᴴ` (`-x gbᴴ` when adjoint).
pub fn solve(matrix: &Tensor, rhs: &Tensor, adjoint: bool) -> Result<Tensor> {
    let out = Tensor::new(
        map_pair!("MatrixSolve", matrix.data(), rhs.data(), [F32, F64, C64, C128], a, b => {
            crate::kernels::linalg::solve(a, b, adjoint)?
        }),
    );
    binary_out(MatrixSolve { adjoint }, matrix, rhs, out)
}

struct MatrixSolve {
    adjoint: bool,
}
impl Op for MatrixSolve {
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "MatrixSolve"
    }
    fn saves(&self) -> Saves {
        Saves::INPUTS_AND_OUTPUT
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let a = cx.input(0)?;
        let x = cx.output(0)?;
        let gb = solve_rows(a, &dys[0], cx.batch(), |a, g| solve(a, g, !self.adjoint))?;
        let ga = if !cx.needs(0) {
            None
        } else if self.adjoint {
            Some(negative(&mm_adj_b(x, &gb)?)?)
        } else {
            Some(negative(&mm_adj_b(&gb, x)?)?)
        };
        Ok(grads![ga, Some(gb)])
    }
}

/// Inverse of each square matrix (`adjoint`: of its conjugate transpose). TF
/// equivalent: `tf.linalg.inv`. A singular matrix is an InvalidArgumentError.
/// Gradient: `-A⁻ᴴ dy A⁻ᴴ`.
pub fn inv(x: &Tensor, adjoint: bool) -> Result<Tensor> {
    let x = if adjoint {
        self::adjoint(x)?
    } else {
        x.clone()
    };
    let out = Tensor::new(
        map_dtypes!("MatrixInverse", x.data(), [F32, F64, C64, C128], a => {
            crate::kernels::linalg::inv(a)?
        }),
    );
    unary_out(MatrixInverse, &x, out)
}

struct MatrixInverse;
impl Op for MatrixInverse {
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "MatrixInverse"
    }
    fn saves(&self) -> Saves {
        Saves::OUTPUT
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let ih = adjoint(cx.output(0)?)?;
        let g = matmul(&ih, &matmul(&dys[0], &ih)?)?;
        Ok(grads![Some(negative(&g)?)])
    }
}

/// Determinant of each square matrix. TF equivalent: `tf.linalg.det`.
/// Gradient: `dy · conj(det) · A⁻ᴴ`.
pub fn det(x: &Tensor) -> Result<Tensor> {
    let out = Tensor::new(
        map_dtypes!("MatrixDeterminant", x.data(), [F32, F64, C64, C128], a => {
            crate::kernels::linalg::det(a)?
        }),
    );
    unary_out(MatrixDeterminant, x, out)
}

struct MatrixDeterminant;
impl Op for MatrixDeterminant {
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "MatrixDeterminant"
    }
    fn saves(&self) -> Saves {
        Saves::INPUTS_AND_OUTPUT
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let d = conj(cx.output(0)?)?;
        let k = per_matrix(&multiply(&dys[0], &d)?)?;
        let g = multiply(&k, &adjoint(&inv(cx.input(0)?, false)?)?)?;
        Ok(grads![Some(g)])
    }
}

/// `(sign, log|det|)` of each square matrix, both of the input's dtype. TF
/// equivalent: `tf.linalg.slogdet`. Gradient (through `log|det|`): `dy · A⁻ᴴ`.
pub fn slogdet(x: &Tensor) -> Result<(Tensor, Tensor)> {
    macro_rules! go {
        ($($dt:ident),*) => {
            match x.data() {
                $(crate::tensor::Data::$dt(a) => {
                    let (s, l) = crate::kernels::linalg::slogdet(a)?;
                    (
                        Tensor::new(crate::tensor::Data::$dt(s.into_shared())),
                        Tensor::new(crate::tensor::Data::$dt(l.into_shared())),
                    )
                })*
                other => {
                    return Err(Error::unsupported("LogMatrixDeterminant", other.dtype()))
                }
            }
        };
    }
    let (s, l) = go!(F32, F64, C64, C128);
    crate::ops::record(LogMatrixDeterminant, &[x], &[&s, &l])?;
    Ok((s, l))
}

struct LogMatrixDeterminant;
impl Op for LogMatrixDeterminant {
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "LogMatrixDeterminant"
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        // log|det A| is real (held in a complex dtype for complex A): only the real part
        // of its upstream gradient reaches A, d log|det A| = Re tr(A⁻¹ dA). (TF
        // multiplies by the whole upstream; the same for every real-valued loss of the
        // real part.) The sign output has no gradient, as in TF.
        let dy = &dys[1];
        let dy = if dy.dtype().is_complex() {
            crate::ops::cast(&crate::ops::real(dy)?, dy.dtype())?
        } else {
            dy.clone()
        };
        let k = per_matrix(&dy)?;
        let g = multiply(&k, &adjoint(&inv(cx.input(0)?, false)?)?)?;
        Ok(grads![Some(g)])
    }
}

// ---------------------------------------------------------------------------
// Cholesky and triangular solves.

/// Lower Cholesky factor of each Hermitian positive-definite matrix (only the lower
/// triangle is read). TF equivalent: `tf.linalg.cholesky`; a matrix that is not
/// positive definite is an InvalidArgumentError. Gradient: TF's `_CholeskyGrad`.
pub fn cholesky(x: &Tensor) -> Result<Tensor> {
    let out = Tensor::new(
        map_dtypes!("Cholesky", x.data(), [F32, F64, C64, C128], a => {
            crate::kernels::linalg::cholesky(a)?
        }),
    );
    unary_out(Cholesky, x, out)
}

struct Cholesky;
impl Op for Cholesky {
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "Cholesky"
    }
    fn saves(&self) -> Saves {
        Saves::OUTPUT
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let l = cx.output(0)?;
        let n = last(l);
        let eye = crate::ops::broadcast_to(&crate::ops::eye(n, None, &[], l.dtype())?, l.shape())?;
        let l_inv = triangular_solve(l, &eye, true, false)?;
        // tril(Lᴴ dy) with its diagonal halved.
        let middle = matmul(&adjoint(l)?, &dys[0])?;
        let middle = multiply(&middle, &tri_mask(n, true, 0.5, l.dtype())?)?;
        let g = matmul(&matmul(&adjoint(&l_inv)?, &middle)?, &l_inv)?;
        let g = add(&g, &adjoint(&g)?)?;
        let half = crate::tensor::scalar_of(0.5, l.dtype());
        Ok(grads![Some(multiply(&g, &half)?)])
    }
}

/// Solves `matrix @ x = rhs` (`adjoint`: `matrixᴴ @ x = rhs`) with `matrix`
/// triangular (only its `lower` or upper triangle is read). TF equivalent:
/// `tf.linalg.triangular_solve`. Gradient: TF's `_MatrixTriangularSolveGrad`.
pub fn triangular_solve(
    matrix: &Tensor,
    rhs: &Tensor,
    lower: bool,
    adjoint: bool,
) -> Result<Tensor> {
    let out = Tensor::new(map_pair!(
        "MatrixTriangularSolve", matrix.data(), rhs.data(), [F32, F64, C64, C128], a, b => {
            crate::kernels::linalg::triangular_solve(a, b, lower, adjoint)?
        }
    ));
    binary_out(MatrixTriangularSolve { lower, adjoint }, matrix, rhs, out)
}

struct MatrixTriangularSolve {
    lower: bool,
    adjoint: bool,
}
impl Op for MatrixTriangularSolve {
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "MatrixTriangularSolve"
    }
    fn saves(&self) -> Saves {
        Saves::INPUTS_AND_OUTPUT
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let a = cx.input(0)?;
        let x = cx.output(0)?;
        let gb = solve_rows(a, &dys[0], cx.batch(), |a, g| {
            triangular_solve(a, g, self.lower, !self.adjoint)
        })?;
        let ga = if !cx.needs(0) {
            None
        } else {
            let g = if self.adjoint {
                mm_adj_b(x, &gb)?
            } else {
                mm_adj_b(&gb, x)?
            };
            let mask = tri_mask(last(a), self.lower, 1.0, a.dtype())?;
            Some(negative(&multiply(&g, &mask)?)?)
        };
        Ok(grads![ga, Some(gb)])
    }
}

// ---------------------------------------------------------------------------
// Diagonals, trace, matvec.

/// Main diagonals `[..., min(r, c)]` of `[..., r, c]`. TF equivalent:
/// `tf.linalg.diag_part`. Gradient: the output gradient placed on the diagonal of
/// zeros.
pub fn diag_part(x: &Tensor) -> Result<Tensor> {
    let out = Tensor::new(map_same!(x.data(), a => crate::kernels::linalg::diag_part(a)?));
    unary_out(MatrixDiagPart, x, out)
}

struct MatrixDiagPart;
impl Op for MatrixDiagPart {
    fn name(&self) -> &'static str {
        "MatrixDiagPartV3"
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn batched(&self) -> bool {
        true
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let s = cx.input_shape(0);
        let (r, c) = (s[s.len() - 2], s[s.len() - 1]);
        Ok(grads![Some(matrix_diag(&dys[0], r, c)?)])
    }
}

/// `[..., rows, cols]` zeros with `v` (`[..., min(rows, cols)]`) on the main
/// diagonal (the adjoint of [`diag_part`]).
fn matrix_diag(v: &Tensor, rows: usize, cols: usize) -> Result<Tensor> {
    if v.ndim() == 0 || last(v) != rows.min(cols) {
        return Err(Error::invalid(
            "MatrixDiagV3",
            format!(
                "diagonal of shape {:?} does not fit a {rows}x{cols} matrix",
                v.shape()
            ),
        ));
    }
    let out = Tensor::new(map_same!(v.data(), a => crate::kernels::linalg::diag(a, rows, cols)?));
    unary_out(MatrixDiag, v, out)
}

struct MatrixDiag;
impl Op for MatrixDiag {
    fn name(&self) -> &'static str {
        "MatrixDiagV3"
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn batched(&self) -> bool {
        true
    }
    fn vjp(&self, _cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        Ok(grads![Some(diag_part(&dys[0])?)])
    }
}

/// Square matrices `[..., k, k]` (or `[..., num_rows, num_cols]`, which must leave
/// room for exactly `k` diagonal entries) with `diagonal` `[..., k]` on the main
/// diagonal. TF equivalent: `tf.linalg.diag` with `k=0`.
pub fn diag(diagonal: &Tensor, num_rows: Option<usize>, num_cols: Option<usize>) -> Result<Tensor> {
    if diagonal.ndim() == 0 {
        return Err(Error::invalid(
            "MatrixDiagV3",
            "diagonal must be at least 1-dim, got a scalar",
        ));
    }
    let k = last(diagonal);
    let rows = num_rows.or(num_cols).unwrap_or(k);
    let cols = num_cols.or(num_rows).unwrap_or(k);
    matrix_diag(diagonal, rows, cols)
}

/// Sum of the main diagonal of each matrix. TF equivalent: `tf.linalg.trace`.
pub fn trace(x: &Tensor) -> Result<Tensor> {
    crate::ops::reduce_sum(&diag_part(x)?, Some(&[-1]), false)
}

/// The order of a [`norm`]: TF's `ord` argument.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NormOrd {
    /// `'euclidean'` (also `'fro'`, and `2` over one axis or all): the square root of
    /// the sum of squared magnitudes (the Frobenius norm over two axes).
    Euclidean,
    /// A positive `p`: `sum(|x|^p)^(1/p)`. Over two axes (a matrix norm) only 1 (the
    /// largest column sum) is supported; TF's spectral norm (2) is not.
    P(f64),
    /// `inf`: the largest magnitude; over two axes, the largest row sum.
    Inf,
}

/// Vector norm over `axis` (one axis, or all when `None`), or matrix norm over two
/// axes. TF equivalent: `tf.norm` / `tf.linalg.norm`, composed as TF does, with the
/// same argument checks: at most two distinct axes, `ord` a positive number or
/// `Euclidean`/`Inf` for vectors, and `Euclidean`, 1 or `Inf` for matrices (TF's
/// matrix 2-norm needs an SVD gradtape does not have: an error). Gradients are those
/// of the composition (`x / norm` for the Euclidean norm; at 0, TF's NaN).
pub fn norm(x: &Tensor, ord: NormOrd, axis: Option<&[isize]>, keepdims: bool) -> Result<Tensor> {
    use crate::ops::{abs, pow, reduce_max, reduce_sum, scalar_like, sqrt, squeeze};
    const OP: &str = "norm";
    let axes: Option<Vec<usize>> = match axis {
        None => None,
        Some(a) if a.len() == 1 || a.len() == 2 => Some(
            a.iter()
                .map(|&i| crate::broadcast::norm_axis(OP, i, x.ndim()))
                .collect::<Result<_>>()?,
        ),
        Some(a) => {
            return Err(Error::invalid(
                OP,
                format!(
                    "'axis' must be None, an integer, or a tuple of 2 unique integers, got {a:?}"
                ),
            ))
        }
    };
    let matrix = match axes.as_deref() {
        Some([a, b]) if a == b => {
            return Err(Error::invalid(
                OP,
                format!(
                "'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis:?}"
            ),
            ))
        }
        Some(&[a, b]) => Some((a as isize, b as isize)),
        _ => None,
    };
    let ord = match ord {
        NormOrd::P(p) if p == f64::INFINITY => NormOrd::Inf,
        NormOrd::P(p) if p == 2.0 && matrix.is_none() => NormOrd::Euclidean,
        o => o,
    };
    match ord {
        NormOrd::P(p) if p.is_nan() || p <= 0.0 => {
            return Err(Error::invalid(
                OP,
                format!("'ord' must be a supported vector norm, got {p}"),
            ))
        }
        NormOrd::Euclidean | NormOrd::Inf | NormOrd::P(_) if matrix.is_none() => {}
        NormOrd::Euclidean | NormOrd::Inf => {}
        NormOrd::P(1.0) => {}
        NormOrd::P(p) => {
            return Err(Error::invalid(
                OP,
                if p == 2.0 {
                    "the matrix 2-norm (ord=2 over two axes) is not supported".to_string()
                } else {
                    format!("'ord' must be a supported matrix norm in ['euclidean', 'fro', 1, 2, inf], got {p}")
                },
            ))
        }
    }
    let all: Vec<isize> = axes
        .as_deref()
        .map(|a| a.iter().map(|&i| i as isize).collect())
        .unwrap_or_default();
    let axis = axes.as_ref().map(|_| all.as_slice());
    let result = match (ord, matrix) {
        (NormOrd::Euclidean, _) => {
            // |x|² as x·x for real dtypes (TF: x·conj(x)); real for complex ones.
            let sq = if x.dtype().is_complex() {
                let a = abs(x)?;
                multiply(&a, &a)?
            } else {
                multiply(x, x)?
            };
            sqrt(&reduce_sum(&sq, axis, true)?)?
        }
        (NormOrd::P(_), Some((a0, a1))) => {
            let cols = reduce_sum(&abs(x)?, Some(&[a0]), true)?;
            reduce_max(&cols, Some(&[a1]), true)?
        }
        (NormOrd::Inf, Some((a0, a1))) => {
            let rows = reduce_sum(&abs(x)?, Some(&[a1]), true)?;
            reduce_max(&rows, Some(&[a0]), true)?
        }
        (NormOrd::Inf, None) => reduce_max(&abs(x)?, axis, true)?,
        (NormOrd::P(1.0), None) => reduce_sum(&abs(x)?, axis, true)?,
        (NormOrd::P(p), None) => {
            let a = abs(x)?;
            let s = reduce_sum(&pow(&a, &scalar_like(&a, p))?, axis, true)?;
            pow(&s, &scalar_like(&s, 1.0 / p))?
        }
    };
    if keepdims {
        Ok(result)
    } else {
        squeeze(
            &result,
            axis.or(Some(&(0..x.ndim() as isize).collect::<Vec<_>>())),
        )
    }
}

/// The Python functions of this family: bindings and where they appear (see
/// `src/ops/README.md`).
#[cfg(feature = "python")]
pub(super) mod python {
    use crate::python::binding::*;

    fn one(x: &Bound<'_, PyAny>) -> PyResult<crate::tensor::Tensor> {
        crate::python::convert::to_tensor(x, None)
    }

    /// Defines `f(input, name=None)` over engine functions of one matrix.
    macro_rules! py_matrix_unary {
        ($($(#[$doc:meta])* $py:ident => $f:path as $tf:literal),* $(,)?) => {$(
            $(#[$doc])*
            #[pyfunction]
            #[pyo3(signature = (input, name=None))]
            fn $py(py: Python<'_>, input: &Bound<'_, PyAny>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
                let _ = name;
                let x = one(input)?;
                Ok(call(py, $tf, String::new, &x, $f)?.into())
            }
        )*};
    }
    py_matrix_unary!(
        /// Determinant. TF equivalent: `tf.linalg.det`.
        ///
        /// >>> import gradtape as gt
        /// >>> float(gt.linalg.det(gt.constant([[2.0, 0.0], [0.0, 3.0]])))
        /// 6.0
        det => ops::det as "MatrixDeterminant",
        /// Cholesky factor `L` (lower) of a positive-definite matrix; raises otherwise.
        /// TF equivalent: `tf.linalg.cholesky`.
        ///
        /// >>> import gradtape as gt
        /// >>> gt.linalg.cholesky(gt.constant([[4.0, 2.0], [2.0, 2.0]])).numpy().tolist()
        /// [[2.0, 0.0], [1.0, 1.0]]
        cholesky => ops::cholesky as "Cholesky",
        /// Sum of the main diagonal. TF equivalent: `tf.linalg.trace`.
        ///
        /// >>> import gradtape as gt
        /// >>> float(gt.linalg.trace(gt.constant([[1.0, 2.0], [3.0, 4.0]])))
        /// 5.0
        trace => ops::trace as "Trace",
        /// Conjugate transpose of the last two axes. TF equivalent: `tf.linalg.adjoint`.
        ///
        /// >>> import gradtape as gt
        /// >>> gt.linalg.adjoint(gt.constant([[1.0, 2.0]])).numpy().tolist()
        /// [[1.0], [2.0]]
        adjoint => ops::adjoint as "Adjoint",
    );

    /// TF's ``ord`` argument: ``'euclidean'``/``'fro'``, ``inf``/``'inf'``, or a positive
    /// number.
    fn ord_arg(ord: Option<&Bound<'_, PyAny>>) -> PyResult<ops::NormOrd> {
        let Some(ord) = ord.filter(|o| !o.is_none()) else {
            return Ok(ops::NormOrd::Euclidean);
        };
        if ord.is_instance_of::<pyo3::types::PyString>() {
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
        let (a, b) = pair(matrix, rhs)?;
        let f = move |a: &Tensor, b: &Tensor| ops::solve(a, b, adjoint);
        Ok(call2(py, "MatrixSolve", || adjoint.to_string(), &a, &b, f)?.into())
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
        let (a, b) = pair(matrix, rhs)?;
        let f = move |a: &Tensor, b: &Tensor| ops::triangular_solve(a, b, lower, adjoint);
        let key = || format!("{lower},{adjoint}");
        Ok(call2(py, "MatrixTriangularSolve", key, &a, &b, f)?.into())
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
        let f = move |x: &Tensor| ops::inv(x, adjoint);
        Ok(call(py, "MatrixInverse", || adjoint.to_string(), &x, f)?.into())
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
        let mut out = call_multi(py, "LogMatrixDeterminant", String::new, &[x], |a| {
            let (s, l) = ops::slogdet(&a[0])?;
            Ok(vec![s, l])
        })?;
        let l = out.remove(1);
        Ok((out.remove(0).into(), l.into()))
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
        py: Python<'_>,
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
        let (rows, cols) = (dim(num_rows), dim(num_cols));
        let f = move |x: &Tensor| ops::diag(x, rows, cols);
        Ok(call(py, "MatrixDiagV3", || format!("{rows:?},{cols:?}"), &x, f)?.into())
    }

    /// The main diagonal. TF equivalent: `tf.linalg.diag_part` (main diagonal, `k=0`).
    ///
    /// >>> import gradtape as gt
    /// >>> gt.linalg.diag_part(gt.constant([[1.0, 2.0], [3.0, 4.0]])).numpy().tolist()
    /// [1.0, 4.0]
    #[pyfunction]
    #[pyo3(signature = (input, name=None, k=0, padding_value=0))]
    fn diag_part(
        py: Python<'_>,
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
        let x = one(input)?;
        Ok(call(py, "MatrixDiagPartV3", String::new, &x, ops::diag_part)?.into())
    }

    /// Transposes the last two axes. TF equivalent: `tf.linalg.matrix_transpose`.
    ///
    /// >>> import gradtape as gt
    /// >>> gt.linalg.matrix_transpose(gt.constant([[1.0, 2.0, 3.0]])).shape
    /// TensorShape([3, 1])
    #[pyfunction]
    #[pyo3(signature = (a, name=None, conjugate=false))]
    fn matrix_transpose(
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        name: Option<&Bound<'_, PyAny>>,
        conjugate: bool,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let x = one(a)?;
        let f = move |x: &Tensor| ops::matrix_transpose(x, conjugate);
        Ok(call(py, "MatrixTranspose", || conjugate.to_string(), &x, f)?.into())
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
        let key = || format!("{ord:?},{axes:?},{keepdims}");
        let owned = axes.clone();
        let f = move |x: &Tensor| ops::norm(x, ord, owned.as_deref(), keepdims);
        Ok(call(py, "Norm", key, &x, f)?.into())
    }

    expose! {
        fn solve in [linalg]: "(matrix: TensorLike, rhs: TensorLike, adjoint: _bool = False, name: str | None = None) -> Tensor";
        fn triangular_solve in [linalg]: "(matrix: TensorLike, rhs: TensorLike, lower: _bool = True, adjoint: _bool = False, name: str | None = None) -> Tensor";
        fn inv in [linalg]: "(input: TensorLike, adjoint: _bool = False, name: str | None = None) -> Tensor";
        fn slogdet in [linalg]: "(input: TensorLike, name: str | None = None) -> tuple[Tensor, Tensor]";
        fn diag in [linalg]: "(diagonal: TensorLike, name: str | None = None, k: int = 0, num_rows: int = -1, num_cols: int = -1, padding_value: Any = 0) -> Tensor";
        fn diag_part in [linalg]: "(input: TensorLike, name: str | None = None, k: int = 0, padding_value: Any = 0) -> Tensor";
        fn matrix_transpose in [linalg]: "(a: TensorLike, name: str | None = None, conjugate: _bool = False) -> Tensor";
        fn det in [linalg]: "(input: TensorLike, name: str | None = None) -> Tensor";
        fn cholesky in [linalg]: "(input: TensorLike, name: str | None = None) -> Tensor";
        fn trace in [linalg]: "(input: TensorLike, name: str | None = None) -> Tensor";
        fn adjoint in [linalg]: "(input: TensorLike, name: str | None = None) -> Tensor";
        fn norm in [gt, linalg]: "(tensor: TensorLike, ord: str | float = 'euclidean', axis: AxisLike | None = None, keepdims: _bool = False, name: str | None = None) -> Tensor";
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::matvec;
    use crate::ops::testutil::{close, grad, grad2, t64, vals};

    /// Central-difference gradient of `sum(f(x) * w)` with `w = 1, 2, 3, ...`.
    fn numeric(x: &[f64], shape: &[usize], f: &dyn Fn(&Tensor) -> Tensor) -> Vec<f64> {
        let total = |v: &[f64]| -> f64 {
            vals(&f(&t64(v, shape)))
                .iter()
                .enumerate()
                .map(|(i, y)| y * (i + 1) as f64)
                .sum()
        };
        (0..x.len())
            .map(|i| {
                let (mut p, mut m) = (x.to_vec(), x.to_vec());
                p[i] += 1e-6;
                m[i] -= 1e-6;
                (total(&p) - total(&m)) / 2e-6
            })
            .collect()
    }

    fn check(x: &[f64], shape: &[usize], f: &dyn Fn(&Tensor) -> Tensor) {
        let y = f(&t64(x, shape));
        let w: Vec<f64> = (0..y.size()).map(|i| (i + 1) as f64).collect();
        let w = t64(&w, y.shape());
        let g = grad(&t64(x, shape), Some(&w), f);
        let n = numeric(x, shape, f);
        for (a, b) in g.iter().zip(&n) {
            assert!((a - b).abs() < 1e-5 * (1.0 + b.abs()), "{g:?} vs {n:?}");
        }
    }

    const A: [f64; 9] = [4.0, 1.0, -2.0, 1.0, 3.0, 0.5, 0.0, -1.0, 2.5];

    #[test]
    fn solve_inv_det_values_and_gradients() {
        let a = t64(&A, &[3, 3]);
        let b = t64(&[1.0, 2.0, 3.0, -1.0, 0.5, 2.0], &[3, 2]);
        let x = solve(&a, &b, false).unwrap();
        close(&vals(&matmul(&a, &x).unwrap()), &vals(&b));
        let xa = solve(&a, &b, true).unwrap();
        close(&vals(&matmul_t(&a, &xa, true, false).unwrap()), &vals(&b));
        check(&A, &[3, 3], &|m| solve(m, &b, false).unwrap());
        check(&A, &[3, 3], &|m| solve(m, &b, true).unwrap());
        check(&[1.0, 2.0, 3.0, -1.0, 0.5, 2.0], &[3, 2], &|r| {
            solve(&a, r, false).unwrap()
        });
        check(&A, &[3, 3], &|m| inv(m, false).unwrap());
        check(&A, &[3, 3], &|m| inv(m, true).unwrap());
        check(&A, &[3, 3], &|m| det(m).unwrap());
        check(&A, &[3, 3], &|m| slogdet(m).unwrap().1);
        // d det / dA for 2x2 is the cofactor matrix
        let g = grad(&t64(&[1.0, 2.0, 3.0, 4.0], &[2, 2]), None, |m| {
            det(m).unwrap()
        });
        close(&g, &[4.0, -3.0, -2.0, 1.0]);
        // second order: d/dA of sum(cofactors) = d/dA (d - c - b + a) = [1, -1, -1, 1]
        let h = grad2(&t64(&[1.0, 2.0, 3.0, 4.0], &[2, 2]), |m| det(m).unwrap());
        close(&h, &[1.0, -1.0, -1.0, 1.0]);
    }

    #[test]
    fn singular_errors() {
        let s = t64(&[1.0, 2.0, 2.0, 4.0], &[2, 2]);
        let e = inv(&s, false).unwrap_err();
        assert!(
            e.to_string().contains("Input matrix is not invertible."),
            "{e}"
        );
        assert!(solve(&s, &t64(&[1.0, 1.0], &[2, 1]), false).is_err());
        assert!(cholesky(&t64(&[1.0, 2.0, 2.0, 1.0], &[2, 2])).is_err());
        let (sign, logabs) = slogdet(&s).unwrap();
        assert_eq!(vals(&sign), vec![0.0]);
        assert_eq!(vals(&logabs), vec![f64::NEG_INFINITY]);
    }

    #[test]
    fn cholesky_and_triangular_gradients() {
        let spd = |m: &Tensor| {
            // m mᵀ + 3 I: symmetric positive definite for any m near A
            let s = matmul_t(m, m, false, true).unwrap();
            add(
                &s,
                &crate::ops::eye(3, None, &[], crate::DType::F64).unwrap(),
            )
            .unwrap()
        };
        let l = cholesky(&spd(&t64(&A, &[3, 3]))).unwrap();
        close(
            &vals(&matmul_t(&l, &l, false, true).unwrap()),
            &vals(&spd(&t64(&A, &[3, 3]))),
        );
        check(&A, &[3, 3], &|m| cholesky(&spd(m)).unwrap());
        let b = t64(&[1.0, 2.0, 3.0], &[3, 1]);
        for lower in [true, false] {
            for adj in [true, false] {
                check(&A, &[3, 3], &|m| {
                    triangular_solve(m, &b, lower, adj).unwrap()
                });
                check(&[1.0, 2.0, 3.0], &[3, 1], &|r| {
                    triangular_solve(&t64(&A, &[3, 3]), r, lower, adj).unwrap()
                });
            }
        }
    }

    #[test]
    fn diag_trace_matvec() {
        let x = t64(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
        close(&vals(&diag_part(&x).unwrap()), &[1.0, 5.0]);
        close(&vals(&trace(&x).unwrap()), &[6.0]);
        check(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3], &|m| {
            diag_part(m).unwrap()
        });
        check(&[1.0, 2.0], &[2], &|v| diag(v, None, None).unwrap());
        let d = diag(&t64(&[1.0, 2.0], &[2]), None, None).unwrap();
        close(&vals(&d), &[1.0, 0.0, 0.0, 2.0]);
        let v = matvec(&x, &t64(&[1.0, 0.0, 1.0], &[3]), false, false).unwrap();
        close(&vals(&v), &[4.0, 10.0]);
        let v = matvec(&x, &t64(&[1.0, 1.0], &[2]), true, false).unwrap();
        close(&vals(&v), &[5.0, 7.0, 9.0]);
        assert!(matrix_transpose(&t64(&[1.0], &[1]), false).is_err());
    }

    #[test]
    fn norms() {
        let x = t64(&[3.0, -4.0, 0.0, 1.0, 2.0, -2.0], &[2, 3]);
        let n = |o, a: Option<&[isize]>, k| vals(&norm(&x, o, a, k).unwrap());
        close(&n(NormOrd::Euclidean, None, false), &[34f64.sqrt()]);
        close(&n(NormOrd::P(2.0), Some(&[1]), false), &[5.0, 3.0]);
        let k = norm(&x, NormOrd::Euclidean, Some(&[-1]), true).unwrap();
        assert_eq!(k.shape(), &[2, 1]);
        assert_eq!(
            norm(&x, NormOrd::Euclidean, None, true).unwrap().shape(),
            &[1, 1]
        );
        assert_eq!(
            norm(&x, NormOrd::Euclidean, None, false).unwrap().shape(),
            &[] as &[usize]
        );
        close(&n(NormOrd::P(1.0), None, false), &[12.0]);
        close(&n(NormOrd::Inf, Some(&[0]), false), &[3.0, 4.0, 2.0]);
        close(&n(NormOrd::P(f64::INFINITY), None, false), &[4.0]);
        close(
            &n(NormOrd::P(3.0), Some(&[0]), false),
            &[28f64.cbrt(), 72f64.cbrt(), 8f64.cbrt()],
        );
        // Matrix norms: Frobenius, largest column sum, largest row sum.
        close(
            &n(NormOrd::Euclidean, Some(&[0, 1]), false),
            &[34f64.sqrt()],
        );
        close(&n(NormOrd::P(1.0), Some(&[0, 1]), false), &[6.0]);
        close(&n(NormOrd::P(1.0), Some(&[1, 0]), false), &[7.0]);
        close(&n(NormOrd::Inf, Some(&[0, 1]), false), &[7.0]);
        let km = norm(&x, NormOrd::Inf, Some(&[-2, -1]), true).unwrap();
        assert_eq!(km.shape(), &[1, 1]);
        // d|x|/dx = x / |x|; second order through the composition.
        let v = t64(&[3.0, 4.0], &[2]);
        close(
            &grad(&v, None, |v| {
                norm(v, NormOrd::Euclidean, None, false).unwrap()
            }),
            &[0.6, 0.8],
        );
        // Row sums of the Hessian (I - u uᵀ)/|x|, u = x/|x|: (1 - u_i (u_1 + u_2)) / 5.
        close(
            &grad2(&v, |v| norm(v, NormOrd::Euclidean, None, false).unwrap()),
            &[(1.0 - 0.6 * 1.4) / 5.0, (1.0 - 0.8 * 1.4) / 5.0],
        );
        close(
            &grad(&v, None, |v| norm(v, NormOrd::P(1.0), None, false).unwrap()),
            &[1.0, 1.0],
        );
        // Complex: the magnitudes' norm, real.
        let c = crate::ops::complex(&t64(&[3.0, 0.0], &[2]), &t64(&[0.0, 4.0], &[2])).unwrap();
        let nc = norm(&c, NormOrd::Euclidean, None, false).unwrap();
        assert_eq!(nc.dtype(), crate::DType::F64);
        close(&vals(&nc), &[5.0]);
        for (o, a) in [
            (NormOrd::P(0.0), None),
            (NormOrd::P(-1.0), None),
            (NormOrd::P(f64::NAN), None),
            (NormOrd::P(2.0), Some(&[0isize, 1][..])),
            (NormOrd::P(3.0), Some(&[0, 1][..])),
            (NormOrd::Euclidean, Some(&[0, 0][..])),
            (NormOrd::Euclidean, Some(&[1, -1][..])),
            (NormOrd::Euclidean, Some(&[0, 1, 0][..])),
            (NormOrd::Euclidean, Some(&[2][..])),
        ] {
            assert!(
                matches!(norm(&x, o, a, false), Err(Error::InvalidArgument { .. })),
                "{o:?} {a:?}"
            );
        }
    }
}
