//! Matrix products and linear algebra.

use ndarray::{ArrayD, IxDyn};

use super::{binary_out, grads, unary_out, Grads, Op, Saves, VjpCx};
use crate::broadcast::broadcast_shapes;
use crate::error::{Error, Result};
use crate::kernels::matmul::{matmul2, Gemm, Raw, RawMut};
use crate::ops::{add, conj, multiply, negative};
use crate::tensor::Tensor;

fn mm<T: Gemm>(
    a: &ndarray::ArcArray<T, IxDyn>,
    b: &ndarray::ArcArray<T, IxDyn>,
    ta: bool,
    tb: bool,
) -> Result<ArrayD<T>> {
    let (ra, rb) = (a.ndim(), b.ndim());
    if ra < 2 || rb < 2 {
        return Err(Error::invalid(
            "MatMul",
            format!(
                "In[0] and In[1] must have rank >= 2, got shapes {:?} and {:?}",
                a.shape(),
                b.shape()
            ),
        ));
    }
    let (sa, sb) = (a.shape(), b.shape());
    let (m, ka) = if ta {
        (sa[ra - 1], sa[ra - 2])
    } else {
        (sa[ra - 2], sa[ra - 1])
    };
    let (kb, n) = if tb {
        (sb[rb - 1], sb[rb - 2])
    } else {
        (sb[rb - 2], sb[rb - 1])
    };
    if ka != kb {
        return Err(Error::invalid(
            "MatMul",
            format!("Matrix size-incompatible: In[0]: {sa:?}, In[1]: {sb:?}"),
        ));
    }
    if ra == 2 && rb == 2 {
        let av = a
            .view()
            .into_dimensionality::<ndarray::Ix2>()
            .expect("rank 2");
        let bv = b
            .view()
            .into_dimensionality::<ndarray::Ix2>()
            .expect("rank 2");
        let av = if ta { av.reversed_axes() } else { av };
        let bv = if tb { bv.reversed_axes() } else { bv };
        return Ok(matmul2(av, bv)?.into_dyn());
    }
    let batch = broadcast_shapes("MatMul", &sa[..ra - 2], &sb[..rb - 2])?;
    let mut shape = batch.clone();
    shape.extend([m, n]);
    crate::size::check_shape_of::<T>("MatMul", &shape)?;
    let nb = crate::size::num_elements("MatMul", &batch)?;
    // A batched, contiguous, untransposed `a` times one matrix `b`: fold the batch
    // into rows and make one GEMM instead of `nb` small ones (jacobians push batched
    // gradients through every layer this way).
    if rb == 2 && !ta && a.is_standard_layout() {
        let a2 = a
            .view()
            .into_shape_with_order((nb * m, ka))
            .expect("contiguous, same size");
        let bv = b
            .view()
            .into_dimensionality::<ndarray::Ix2>()
            .expect("rank 2");
        let bv = if tb { bv.reversed_axes() } else { bv };
        return matmul2(a2, bv)?
            .into_shape_with_order(IxDyn(&shape))
            .map_err(|e| Error::Internal(format!("MatMul: {e}")));
    }
    let mut out = crate::size::try_full("MatMul", &shape, T::zero())?;
    if nb == 0 || m == 0 || n == 0 {
        return Ok(out);
    }
    // Element offsets of each batch entry in `a` and `b` (broadcast axes: stride 0);
    // the operands are read in place, whatever their layout.
    let offsets = |x: &ndarray::ArcArray<T, IxDyn>| -> Result<Vec<isize>> {
        let r = x.ndim() - 2;
        let lead = batch.len() - r;
        let strides: Vec<isize> = (0..batch.len())
            .map(|d| {
                if d < lead || x.shape()[d - lead] == 1 {
                    0
                } else {
                    x.strides()[d - lead]
                }
            })
            .collect();
        let mut offs = crate::size::try_vec("MatMul", nb)?;
        let mut idx = vec![0usize; batch.len()];
        for _ in 0..nb {
            offs.push(
                idx.iter()
                    .zip(&strides)
                    .map(|(&i, &s)| i as isize * s)
                    .sum(),
            );
            for d in (0..batch.len()).rev() {
                idx[d] += 1;
                if idx[d] < batch[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        Ok(offs)
    };
    let (oa, ob) = (offsets(a)?, offsets(b)?);
    let raw = |x: &ndarray::ArcArray<T, IxDyn>, t: bool| {
        let s = x.strides();
        let r = Raw {
            ptr: x.as_ptr(),
            rs: s[s.len() - 2],
            cs: s[s.len() - 1],
        };
        if t {
            r.t()
        } else {
            r
        }
    };
    let (pa, pb) = (raw(a, ta), raw(b, tb));
    let job = Batch {
        a: pa,
        b: pb,
        out: RawMut {
            ptr: out.as_mut_ptr(),
            rs: n as isize,
            cs: 1,
        },
        oa: &oa,
        ob: &ob,
        m,
        n,
        k: ka,
    };
    let work = m.saturating_mul(n).saturating_mul(ka);
    if work < crate::kernels::matmul::PAR_WORK
        && work.saturating_mul(nb) >= crate::kernels::matmul::PAR_WORK
    {
        crate::pool::for_each(nb, |i| job.run(i));
        return Ok(out);
    }
    (0..nb).for_each(|i| job.run(i));
    Ok(out)
}

/// One batched product: operands read in place at per-entry offsets, entry `i`
/// written to the `i`-th `(m, n)` block of the output.
struct Batch<'a, T> {
    a: Raw<T>,
    b: Raw<T>,
    out: RawMut<T>,
    oa: &'a [isize],
    ob: &'a [isize],
    m: usize,
    n: usize,
    k: usize,
}

impl<T: Gemm> Batch<'_, T> {
    fn run(&self, i: usize) {
        let a = Raw {
            ptr: self.a.ptr.wrapping_offset(self.oa[i]),
            ..self.a
        };
        let b = Raw {
            ptr: self.b.ptr.wrapping_offset(self.ob[i]),
            ..self.b
        };
        let o = RawMut {
            ptr: self.out.ptr.wrapping_add(i * self.m * self.n),
            ..self.out
        };
        // SAFETY: offsets stay inside the operands (computed from their shapes and
        // strides); each entry writes its own disjoint (m, n) block of the output.
        unsafe { T::gemm(a, b, o, self.m, self.n, self.k) };
    }
}

/// Matrix product of the last two axes, batch axes broadcast. `transpose_a/b`
/// transpose an operand first. TF equivalent: `tf.linalg.matmul` (`@`).
/// Gradient: `dy @ bᴴ` and `aᴴ @ dy` (with the transposes of TF's rule).
pub fn matmul_t(a: &Tensor, b: &Tensor, transpose_a: bool, transpose_b: bool) -> Result<Tensor> {
    let out = Tensor::new(
        map_pair!("MatMul", a.data(), b.data(), [F32, F64, I32, I64, C64, C128] via [F16], x, y => {
            mm(x, y, transpose_a, transpose_b)?
        }),
    );
    binary_out(
        MatMul {
            ta: transpose_a,
            tb: transpose_b,
        },
        a,
        b,
        out,
    )
}

/// `a @ b`. TF equivalent: `tf.linalg.matmul`.
pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    matmul_t(a, b, false, false)
}

struct MatMul {
    ta: bool,
    tb: bool,
}
impl Op for MatMul {
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "MatMul"
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let dy = &dys[0];
        let a = conj(cx.input(0)?)?;
        let b = conj(cx.input(1)?)?;
        let (ga, gb) = match (self.ta, self.tb) {
            (false, false) => (
                cx.needs(0).then(|| matmul_t(dy, &b, false, true)),
                cx.needs(1).then(|| matmul_t(&a, dy, true, false)),
            ),
            (false, true) => (
                cx.needs(0).then(|| matmul_t(dy, &b, false, false)),
                cx.needs(1).then(|| matmul_t(dy, &a, true, false)),
            ),
            (true, false) => (
                cx.needs(0).then(|| matmul_t(&b, dy, false, true)),
                cx.needs(1).then(|| matmul_t(&a, dy, false, false)),
            ),
            (true, true) => (
                cx.needs(0).then(|| matmul_t(&b, dy, true, true)),
                cx.needs(1).then(|| matmul_t(dy, &a, true, true)),
            ),
        };
        Ok(grads![ga.transpose()?, gb.transpose()?])
    }
}

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
    fn name(&self) -> &'static str {
        "MatrixSolve"
    }
    fn saves(&self) -> Saves {
        Saves::INPUTS_AND_OUTPUT
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let a = cx.input(0)?;
        let x = cx.output(0)?;
        let gb = solve(a, &dys[0], !self.adjoint)?;
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
    crate::ops::record(LogMatrixDeterminant, &[x], &[&s, &l]);
    Ok((s, l))
}

struct LogMatrixDeterminant;
impl Op for LogMatrixDeterminant {
    fn name(&self) -> &'static str {
        "LogMatrixDeterminant"
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let k = per_matrix(&dys[1])?;
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
    fn name(&self) -> &'static str {
        "MatrixTriangularSolve"
    }
    fn saves(&self) -> Saves {
        Saves::INPUTS_AND_OUTPUT
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let a = cx.input(0)?;
        let x = cx.output(0)?;
        let gb = triangular_solve(a, &dys[0], self.lower, !self.adjoint)?;
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

/// Matrix-vector product over the last axes: `a [..., m, n]`, `b [..., n]`.
/// TF equivalent: `tf.linalg.matvec`.
pub fn matvec(a: &Tensor, b: &Tensor, transpose_a: bool, adjoint_a: bool) -> Result<Tensor> {
    if b.ndim() < 1 {
        return Err(Error::invalid(
            "MatVec",
            format!("b must have rank >= 1, got shape {:?}", b.shape()),
        ));
    }
    let a = if adjoint_a { conj(a)? } else { a.clone() };
    let y = matmul_t(
        &a,
        &crate::ops::expand_dims(b, -1)?,
        transpose_a || adjoint_a,
        false,
    )?;
    crate::ops::squeeze(&y, Some(&[-1]))
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
        NormOrd::P(p) if !(p > 0.0) => {
            return Err(Error::invalid(
                OP,
                format!("'ord' must be a supported vector norm, got {p}"),
            ))
        }
        NormOrd::Euclidean | NormOrd::Inf | NormOrd::P(_) if matrix.is_none() => {}
        NormOrd::Euclidean | NormOrd::Inf => {}
        NormOrd::P(p) if p == 1.0 => {}
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
        (NormOrd::P(p), None) if p == 1.0 => reduce_sum(&abs(x)?, axis, true)?,
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

#[cfg(test)]
mod tests {
    use super::*;
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
    fn batched_matmul_broadcasts_and_reads_strided_operands() {
        let a = t64(&(0..12).map(|v| v as f64).collect::<Vec<_>>(), &[2, 2, 3]);
        let b = t64(&[1.0, 0.0, 0.0, 1.0, 1.0, 1.0], &[3, 2]);
        let y = matmul(&a, &b).unwrap();
        assert_eq!(y.shape(), &[2, 2, 2]);
        close(&vals(&y), &[2.0, 3.0, 8.0, 9.0, 14.0, 15.0, 20.0, 21.0]);
        // transposed batch operand (non-contiguous) gives the same as a copy
        let at = crate::ops::transpose(&a, Some(&[0, 2, 1])).unwrap();
        let y2 = matmul_t(&at, &b, true, false).unwrap();
        close(&vals(&y2), &vals(&y));
    }

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
