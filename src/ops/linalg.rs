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
            format!("Input must have rank >= 2, got {r}"),
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
        map_dtypes!("MatrixInverse", x.data(), [F32, F64, C64, C128] via [F16], a => {
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
        // d det(A) = tr(adj(A) dA): the gradient is dy · adj(A)ᴴ, which is
        // conj(det) A⁻ᴴ for an invertible A and, for a singular one (det exactly 0),
        // the adjugate through an SVD (TF's DetGradSingularMatrixTest).
        let a = cx.input(0)?;
        let det = cx.output(0)?;
        let k = per_matrix(&dys[0])?;
        let invertible = |a: &Tensor| -> Result<Tensor> {
            multiply(&per_matrix(&conj(det)?)?, &adjoint(&inv(a, false)?)?)
        };
        let adj_h = match zero_flags(det)? {
            None => invertible(a)?,
            Some(flags) => per_kind(a, &flags, invertible, adjugate_adjoint_svd)?,
        };
        Ok(grads![Some(multiply(&k, &adj_h)?)])
    }
}

/// Where the per-matrix scalars `x` (`[...]`) are exactly zero, as a constant
/// `[..., 1, 1]` bool mask; `None` when none is.
fn zero_flags(x: &Tensor) -> Result<Option<Tensor>> {
    let v = crate::tape::stack::suspended(|| {
        crate::ops::cast(&crate::ops::abs(x)?, crate::DType::F64)?.to_vec::<f64>()
    })?;
    if !v.contains(&0.0) {
        return Ok(None);
    }
    let mut shape = x.shape().to_vec();
    shape.extend([1, 1]);
    let flags: Vec<bool> = v.iter().map(|&a| a == 0.0).collect();
    Ok(Some(Tensor::from_vec(flags, &shape)?))
}

/// `regular(a)` for the matrices of `a` not `flagged` (`[..., 1, 1]`), `special(a)`
/// for the flagged ones. Each rule sees the identity in place of the matrices it does
/// not own, so it neither fails on nor differentiates through the others.
fn per_kind(
    a: &Tensor,
    flagged: &Tensor,
    regular: impl Fn(&Tensor) -> Result<Tensor>,
    special: impl Fn(&Tensor) -> Result<Tensor>,
) -> Result<Tensor> {
    use crate::ops::where_;
    let eye = const_matrix(last(a), a.dtype(), |i, j| if i == j { 1.0 } else { 0.0 })?;
    let r = regular(&where_(flagged, &eye, a)?)?;
    let s = special(&where_(flagged, a, &eye)?)?;
    where_(flagged, &s, &r)
}

/// `adj(a)ᴴ` of square matrices without an inverse, through an SVD `a = u diag(s) vᴴ`:
/// `conj(det(u vᴴ)) u diag(∏_{j≠i} s_j) vᴴ` (finite, and exact, for singular `a`).
fn adjugate_adjoint_svd(a: &Tensor) -> Result<Tensor> {
    use crate::ops::expand_dims;
    let (n, dt) = (last(a), a.dtype());
    let o = svd(a, true, false)?;
    let (s, u, v) = (crate::ops::cast(&o[0], dt)?, &o[1], &o[2]);
    // Row i: the singular values with s_i replaced by 1; their products.
    let off = const_matrix(n, dt, |i, j| if i == j { 0.0 } else { 1.0 })?;
    let eye = const_matrix(n, dt, |i, j| if i == j { 1.0 } else { 0.0 })?;
    let rows = add(&multiply(&expand_dims(&s, -2)?, &off)?, &eye)?;
    let others = crate::ops::reduce_prod(&rows, Some(&[-1]), false)?;
    let core = mm_adj_b(&multiply(u, &expand_dims(&others, -2)?)?, v)?;
    let phase = conj(&det(&mm_adj_b(u, v)?)?)?;
    multiply(&per_matrix(&phase)?, &core)
}

/// `pinv(a)ᴴ = u diag(s⁺) vᴴ` through an SVD, singular values at most
/// `10 max(m, n) ε s_max` counted as zero (TF's `pinv` default).
fn pinv_adjoint(a: &Tensor) -> Result<Tensor> {
    use crate::ops::{expand_dims, where_};
    let dt = a.dtype();
    let o = svd(a, true, false)?;
    let s = &o[0];
    let sv =
        crate::tape::stack::suspended(|| crate::ops::cast(s, crate::DType::F64)?.to_vec::<f64>())?;
    let p = last(s).max(1);
    let sh = a.shape();
    let big = sh[sh.len() - 2].max(sh[sh.len() - 1]) as f64;
    let eps = if matches!(dt, crate::DType::F32 | crate::DType::C64) {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    };
    let mut keep = Vec::with_capacity(sv.len());
    for chunk in sv.chunks(p) {
        let smax = chunk.iter().fold(0.0f64, |x, &y| x.max(y));
        keep.extend(chunk.iter().map(|&v| v > 10.0 * big * eps * smax));
    }
    let keep = Tensor::from_vec(keep, s.shape())?;
    let one = crate::ops::ones_like(s)?;
    let zero = crate::ops::zeros_like(s)?;
    let recip = crate::ops::divide(&one, &where_(&keep, s, &one)?)?;
    let sp = crate::ops::cast(&where_(&keep, &recip, &zero)?, dt)?;
    mm_adj_b(&multiply(&o[1], &expand_dims(&sp, -2)?)?, &o[2])
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
    fn saves(&self) -> Saves {
        Saves::INPUTS_AND_OUTPUT
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
        // A⁻ᴴ; pinv(A)ᴴ for a singular A (sign 0), as TF: finite.
        let a = cx.input(0)?;
        let inv_h = |a: &Tensor| adjoint(&inv(a, false)?);
        let g = match zero_flags(cx.output(0)?)? {
            None => inv_h(a)?,
            Some(flags) => per_kind(a, &flags, inv_h, pinv_adjoint)?,
        };
        Ok(grads![Some(multiply(&k, &g)?)])
    }
}

// ---------------------------------------------------------------------------
// Spectral decompositions: eigh, eigvalsh, svd.

/// A constant `[n, n]` matrix of `dtype` with entry `(i, j)` = `f(i, j)`.
fn const_matrix(n: usize, dtype: crate::DType, f: impl Fn(usize, usize) -> f64) -> Result<Tensor> {
    crate::size::check_shape("MatrixBandPart", &[n, n], dtype)?;
    let mut v = crate::size::try_vec_filled("MatrixBandPart", n * n, 0.0)?;
    for i in 0..n {
        for j in 0..n {
            v[i * n + j] = f(i, j);
        }
    }
    crate::ops::cast(&Tensor::from_vec(v, &[n, n])?, dtype)
}

/// `x / (x² + 1e-20)`: TF's `_SafeReciprocal` (a Lorentz-broadened `1/x`, finite at
/// ties of eigenvalues or singular values).
fn safe_reciprocal(x: &Tensor) -> Result<Tensor> {
    let eps = crate::ops::scalar_like(x, 1e-20);
    crate::ops::divide(x, &add(&multiply(x, x)?, &eps)?)
}

/// `safe_reciprocal(e_j - e_i)` off the diagonal, 0 on it (`[..., k, k]` from `[..., k]`).
fn spectral_f(e: &Tensor) -> Result<Tensor> {
    use crate::ops::{expand_dims, subtract};
    let k = last(e);
    let d = subtract(&expand_dims(e, -2)?, &expand_dims(e, -1)?)?;
    let off = const_matrix(k, e.dtype(), |i, j| if i == j { 0.0 } else { 1.0 })?;
    multiply(&safe_reciprocal(&d)?, &off)
}

/// The gradient of a function of a Hermitian matrix's lower triangle from its gradient
/// `g` as a full matrix: `tril(g + gᴴ)` with the diagonal halved (TF's rule).
fn lower_symmetrized(g: &Tensor) -> Result<Tensor> {
    let n = last(g);
    let mask = tri_mask(n, true, 0.5, g.dtype())?;
    multiply(&add(g, &adjoint(g)?)?, &mask)
}

/// Eigenvalues (ascending) and eigenvectors (the columns of `v`) of each Hermitian
/// matrix `[..., n, n]`, of which only the lower triangle is read: `a = v diag(e) vᴴ`.
/// TF equivalent: `tf.linalg.eigh`; the eigenvalues keep the input's dtype (complex
/// with zero imaginary parts for complex input, as TF's `SelfAdjointEigV2`). An
/// eigenvector's sign (phase) is arbitrary. A non-finite input is an
/// InvalidArgumentError. Gradient: TF's `_SelfAdjointEigV2Grad`.
pub fn eigh(x: &Tensor) -> Result<(Tensor, Tensor)> {
    macro_rules! go {
        ($($dt:ident),*) => {
            match x.data() {
                $(crate::tensor::Data::$dt(a) => {
                    let (e, v) = crate::kernels::linalg::eigh(a)?;
                    (
                        Tensor::new(crate::tensor::Data::$dt(e.into_shared())),
                        Tensor::new(crate::tensor::Data::$dt(v.into_shared())),
                    )
                })*
                other => return Err(Error::unsupported("SelfAdjointEigV2", other.dtype())),
            }
        };
    }
    let (e, v) = go!(F32, F64, C64, C128);
    crate::ops::record(SelfAdjointEig { vectors: true }, &[x], &[&e, &v])?;
    Ok((e, v))
}

/// Eigenvalues (ascending) of each Hermitian matrix; only the lower triangle is read.
/// TF equivalent: `tf.linalg.eigvalsh`. Gradient: `v diag(dy) vᴴ` (lower triangle,
/// symmetrized), with `v` recomputed as TF does.
pub fn eigvalsh(x: &Tensor) -> Result<Tensor> {
    let e = map_dtypes!("SelfAdjointEigV2", x.data(), [F32, F64, C64, C128], a => {
        crate::kernels::linalg::eigh(a)?.0
    });
    let e = Tensor::new(e);
    unary_out(SelfAdjointEig { vectors: false }, x, e)
}

struct SelfAdjointEig {
    vectors: bool,
}
impl Op for SelfAdjointEig {
    fn name(&self) -> &'static str {
        "SelfAdjointEigV2"
    }
    fn batched(&self) -> bool {
        true
    }
    fn saves(&self) -> Saves {
        if self.vectors {
            Saves {
                inputs: 0,
                outputs: Saves::ALL,
            }
        } else {
            Saves::INPUTS
        }
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let ge = &dys[0];
        let n = last(ge);
        let g = if self.vectors {
            let (e, v) = (cx.output(0)?, cx.output(1)?);
            let inner = multiply(&spectral_f(e)?, &matmul_t(&conj(v)?, &dys[1], true, false)?)?;
            let mid = add(&matrix_diag(ge, n, n)?, &inner)?;
            matmul(v, &mm_adj_b(&mid, v)?)?
        } else {
            let (_, v) = eigh(cx.input(0)?)?;
            matmul(&v, &mm_adj_b(&matrix_diag(ge, n, n)?, &v)?)?
        };
        Ok(grads![Some(lower_symmetrized(&g)?)])
    }
}

/// The last axis's first `k` entries (`[..., :k]`).
fn first_cols(x: &Tensor, k: usize) -> Result<Tensor> {
    let r = x.ndim();
    let begin = vec![0i64; r];
    let mut size = vec![-1i64; r];
    size[r - 1] = k as i64;
    crate::ops::slice(x, &begin, &size)
}

/// The last axis from entry `k` on (`[..., k:]`).
fn cols_from(x: &Tensor, k: usize) -> Result<Tensor> {
    let r = x.ndim();
    let mut begin = vec![0i64; r];
    begin[r - 1] = k as i64;
    crate::ops::slice(x, &begin, &vec![-1i64; r])
}

/// Singular values (descending) of each matrix `[..., m, n]`, and with `compute_uv`
/// the singular vectors: `a = u diag(s) vᴴ`, `u` `[..., m, p]` and `v` `[..., n, p]`
/// (`p = min(m, n)`; `[..., m, m]` and `[..., n, n]` with `full_matrices`). TF
/// equivalent: `tf.linalg.svd` (`s` real for complex input, TF's `real(s)`; the
/// vectors' signs or phases are arbitrary). A non-finite matrix gives NaNs. Gradient:
/// TF's `_SvdGrad` (not defined for `full_matrices` with `|m - n| > 1`).
pub fn svd(x: &Tensor, compute_uv: bool, full_matrices: bool) -> Result<Vec<Tensor>> {
    macro_rules! go {
        ($($dt:ident),*) => {
            match x.data() {
                $(crate::tensor::Data::$dt(a) => {
                    let (s, uv) = crate::kernels::linalg::svd(a, compute_uv, full_matrices)?;
                    let mut out = vec![Tensor::new(crate::tensor::Data::$dt(s.into_shared()))];
                    if let Some((u, v)) = uv {
                        out.push(Tensor::new(crate::tensor::Data::$dt(u.into_shared())));
                        out.push(Tensor::new(crate::tensor::Data::$dt(v.into_shared())));
                    }
                    out
                })*
                other => return Err(Error::unsupported("Svd", other.dtype())),
            }
        };
    }
    let mut out = go!(F32, F64, C64, C128);
    let refs: Vec<&Tensor> = out.iter().collect();
    crate::ops::record(
        Svd {
            compute_uv,
            full_matrices,
        },
        &[x],
        &refs,
    )?;
    if x.dtype().is_complex() {
        out[0] = crate::ops::real(&out[0])?;
    }
    Ok(out)
}

struct Svd {
    compute_uv: bool,
    full_matrices: bool,
}
impl Op for Svd {
    fn name(&self) -> &'static str {
        "Svd"
    }
    fn batched(&self) -> bool {
        true
    }
    fn saves(&self) -> Saves {
        if self.compute_uv {
            Saves::EVERYTHING
        } else {
            Saves::INPUTS
        }
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        use crate::ops::{scalar_like, subtract};
        let a = cx.input(0)?;
        // s is real (held in a complex dtype for complex input): only the real part of
        // its gradient reaches a (the user's `real(s)` gives exactly that; a rule that
        // is differentiated again may send an imaginary part, which must not count).
        let gs = if dys[0].dtype().is_complex() {
            crate::ops::cast(&crate::ops::real(&dys[0])?, dys[0].dtype())?
        } else {
            dys[0].clone()
        };
        let gs = &gs;
        let p = last(gs);
        let gs_mat = matrix_diag(gs, p, p)?;
        if !self.compute_uv {
            let o = svd(a, true, false)?;
            let g = matmul(&o[1], &mm_adj_b(&gs_mat, &o[2])?)?;
            return Ok(grads![Some(g)]);
        }
        let shape = a.shape();
        let (mut m, mut n) = (shape[shape.len() - 2], shape[shape.len() - 1]);
        let s = cx.output(0)?;
        let (mut u, mut v) = (cx.output(1)?.clone(), cx.output(2)?.clone());
        let (mut gu, mut gv) = (dys[1].clone(), dys[2].clone());
        let swap = m > n;
        if swap {
            std::mem::swap(&mut m, &mut n);
            std::mem::swap(&mut u, &mut v);
            std::mem::swap(&mut gu, &mut gv);
        }
        if self.full_matrices && n - m > 1 {
            return Err(Error::unimplemented(
                "Svd",
                "svd gradient is not implemented for abs(m - n) > 1 when full_matrices is True",
            ));
        }
        let s_mat = matrix_diag(s, m, m)?;
        let f = spectral_f(&multiply(s, s)?)?;
        let s_inv = matrix_diag(&safe_reciprocal(s)?, m, m)?;
        let (v1, gv1) = if self.full_matrices && n > m {
            (first_cols(&v, m)?, first_cols(&gv, m)?)
        } else {
            (v.clone(), gv.clone())
        };
        // The gradient of u (m×m here) is applied whole: u is square after the swap.
        let u_gu = matmul_t(&conj(&u)?, &gu, true, false)?;
        let v_gv = matmul_t(&conj(&v1)?, &gv1, true, false)?;
        let f_u = multiply(&f, &u_gu)?;
        let f_v = multiply(&f, &v_gv)?;
        let t1 = add(
            &add(&gs_mat, &matmul(&add(&f_u, &adjoint(&f_u)?)?, &s_mat)?)?,
            &matmul(&s_mat, &add(&f_v, &adjoint(&f_v)?)?)?,
        )?;
        let mut g = matmul(&u, &mm_adj_b(&t1, &v1)?)?;
        if m != n {
            let gv1t = adjoint(&gv1)?;
            let mut t2 = subtract(&gv1t, &mm_adj_b(&matmul(&gv1t, &v1)?, &v1)?)?;
            if self.full_matrices {
                let (v2, gv2) = (cols_from(&v, m)?, cols_from(&gv, m)?);
                let v1_gv2 = matmul_t(&conj(&v1)?, &gv2, true, false)?;
                t2 = subtract(&t2, &mm_adj_b(&v1_gv2, &v2)?)?;
            }
            g = add(&g, &matmul(&matmul(&u, &s_inv)?, &t2)?)?;
        }
        if a.dtype().is_complex() {
            let eye = const_matrix(m, a.dtype(), |i, j| if i == j { 1.0 } else { 0.0 })?;
            let l = multiply(&eye, &v_gv)?;
            let t3 = matmul(&s_inv, &subtract(&adjoint(&l)?, &l)?)?;
            let t3 = matmul(&u, &mm_adj_b(&t3, &v1)?)?;
            g = add(&g, &multiply(&t3, &scalar_like(&t3, 0.5))?)?;
        }
        if swap {
            g = adjoint(&g)?;
        }
        Ok(grads![Some(g)])
    }
}

/// QR factorization of each matrix `[..., m, n]`: `q` with orthonormal columns
/// (`[..., m, min(m, n)]`, `[..., m, m]` with `full_matrices`) and upper-triangular `r`,
/// `a = q r`. TF equivalent: `tf.linalg.qr` (Householder; `r`'s diagonal is real, its
/// signs not normalized, as TF's and LAPACK's). Gradient: TF's `_QrGrad`, with its complex correction; like TF's, not
/// defined for `full_matrices` with `m > n`.
pub fn qr(x: &Tensor, full_matrices: bool) -> Result<(Tensor, Tensor)> {
    macro_rules! go {
        ($($dt:ident),*) => {
            match x.data() {
                $(crate::tensor::Data::$dt(a) => {
                    let (q, r) = crate::kernels::linalg::qr(a, full_matrices)?;
                    (
                        Tensor::new(crate::tensor::Data::$dt(q.into_shared())),
                        Tensor::new(crate::tensor::Data::$dt(r.into_shared())),
                    )
                })*
                other => return Err(Error::unsupported("Qr", other.dtype())),
            }
        };
    }
    let (q, r) = if x.dtype() == crate::DType::F16 {
        // TF's CPU kernel takes float16 (its gradient does not: no float16 triangular
        // solve): factored in float32, rounded back.
        crate::tape::stack::suspended(|| -> Result<(Tensor, Tensor)> {
            let (q, r) = qr(&crate::ops::cast(x, crate::DType::F32)?, full_matrices)?;
            Ok((
                crate::ops::cast(&q, crate::DType::F16)?,
                crate::ops::cast(&r, crate::DType::F16)?,
            ))
        })?
    } else {
        go!(F32, F64, C64, C128)
    };
    crate::ops::record(Qr { full_matrices }, &[x], &[&q, &r])?;
    Ok((q, r))
}

struct Qr {
    full_matrices: bool,
}

/// `x r⁻ᴴ` for upper-triangular `r`.
/// `x` may have leading jacobian batch axes in front of `r`'s batch shape.
fn times_inv_r_adj(x: &Tensor, r: &Tensor) -> Result<Tensor> {
    let batch = x.ndim().saturating_sub(r.ndim());
    let solved = solve_rows(r, &adjoint(x)?, batch, |a, g| {
        triangular_solve(a, g, false, false)
    })?;
    adjoint(&solved)
}

/// TF's gradient of `a = q r` for `m >= n` (thin factors: `r` square).
fn qr_grad_deep(q: &Tensor, r: &Tensor, dq: &Tensor, dr: &Tensor) -> Result<Tensor> {
    use crate::ops::subtract;
    let n = last(r);
    let qdq = matmul_t(&conj(q)?, dq, true, false)?;
    let qdq_ = subtract(&qdq, &adjoint(&qdq)?)?;
    let rdr = mm_adj_b(r, dr)?;
    let rdr_ = subtract(&rdr, &adjoint(&rdr)?)?;
    let low = multiply(&add(&qdq_, &rdr_)?, &tri_mask(n, true, 1.0, r.dtype())?)?;
    let ga = matmul(q, &add(dr, &times_inv_r_adj(&low, r)?)?)?;
    let gb = times_inv_r_adj(&subtract(dq, &matmul(q, &qdq)?)?, r)?;
    let mut g = add(&ga, &gb)?;
    if q.dtype().is_complex() {
        // TF's correction: the imaginary part of diag(r drᴴ - (qᴴ dq)ᴴ).
        let mm = subtract(&rdr, &adjoint(&qdq)?)?;
        let d = diag_part(&mm)?;
        let im = subtract(&d, &crate::ops::cast(&crate::ops::real(&d)?, d.dtype())?)?;
        let corr = matrix_diag(&im, n, n)?;
        g = add(&g, &times_inv_r_adj(&mm_adj_b(q, &corr)?, r)?)?;
    }
    Ok(g)
}

impl Op for Qr {
    fn name(&self) -> &'static str {
        "Qr"
    }
    fn batched(&self) -> bool {
        true
    }
    fn saves(&self) -> Saves {
        Saves::EVERYTHING
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let (q, r) = (cx.output(0)?, cx.output(1)?);
        let rs = r.shape();
        let (m, n) = (q.shape()[q.ndim() - 2], rs[rs.len() - 1]);
        if self.full_matrices && m > n {
            return Err(Error::unimplemented(
                "Qr",
                "QrGrad not implemented when nrows > ncols and full_matrices is true.",
            ));
        }
        let (dq, dr) = (&dys[0], &dys[1]);
        if m >= n {
            return Ok(grads![Some(qr_grad_deep(q, r, dq, dr)?)]);
        }
        // a = [x, y], r = [u, w]: the square case for x, and dy = q dw.
        let a = cx.input(0)?;
        let y = cols_from(a, m)?;
        let u = first_cols(r, m)?;
        let (du, dw) = (first_cols(dr, m)?, cols_from(dr, m)?);
        let gy = matmul(q, &dw)?;
        let gx = qr_grad_deep(q, &u, &add(dq, &mm_adj_b(&y, &dw)?)?, &du)?;
        Ok(grads![Some(crate::ops::concat(&[gx, gy], -1)?)])
    }
}

// ---------------------------------------------------------------------------
// Least squares.

const LS: &str = "MatrixSolveLs";

/// Cholesky factor of `aᴴ a + λ I` (`first_kind`) or of `a aᴴ + λ I`.
fn regularized_gram_cholesky(a: &Tensor, l2: f64, first_kind: bool) -> Result<Tensor> {
    let g = if first_kind {
        matmul_t(&conj(a)?, a, true, false)?
    } else {
        mm_adj_b(a, a)?
    };
    let k = last(&g);
    let reg = const_matrix(k, g.dtype(), |i, j| if i == j { l2 } else { 0.0 })?;
    let deficient = || {
        Error::invalid(
            LS,
            "Input matrix was rank deficient or ill-conditioned. Try setting fast=False or \
             provide a larger l2_regularizer > 0.",
        )
    };
    let l = cholesky(&add(&g, &reg)?).map_err(|_| deficient())?;
    // A zero (or rounded-away) pivot that the factorization let through.
    let d = crate::tape::stack::suspended(|| {
        crate::ops::cast(&crate::ops::abs(&diag_part(&l)?)?, crate::DType::F64)?.to_vec::<f64>()
    })?;
    if d.iter().any(|&v| v.is_nan() || v <= 0.0) {
        return Err(deficient());
    }
    Ok(l)
}

/// `(L Lᴴ)⁻¹ b` from a lower Cholesky factor `L` (`b` may have leading jacobian batch
/// axes in front of `L`'s batch shape).
fn cholesky_solve(l: &Tensor, b: &Tensor) -> Result<Tensor> {
    let batch = b.ndim().saturating_sub(l.ndim());
    solve_rows(l, b, batch, |l, b| {
        triangular_solve(l, &triangular_solve(l, b, true, false)?, true, true)
    })
}

/// Least-squares solutions `x` (`[..., n, k]`) of `matrix @ x = rhs` for `matrix`
/// `[..., m, n]` and `rhs` `[..., m, k]`. TF equivalent: `tf.linalg.lstsq`. `fast`: the
/// regularized normal equations through Cholesky (`(aᴴa + λI)⁻¹ aᴴ b` for `m >= n`,
/// `aᴴ (aaᴴ + λI)⁻¹ b` otherwise; a rank-deficient matrix with `λ = 0` is an
/// InvalidArgumentError); else the minimum-norm solution (λ ignored) through an SVD,
/// with no gradient, as in TF. Gradient: TF's `_MatrixSolveLsGrad` (with `x zᴴ`'s
/// conjugate transpose where TF transposes, which is the same for real dtypes and the
/// gradient for complex ones); none for `l2_regularizer`.
pub fn lstsq(matrix: &Tensor, rhs: &Tensor, l2_regularizer: f64, fast: bool) -> Result<Tensor> {
    let dt = matrix.dtype();
    if !matches!(
        dt,
        crate::DType::F32 | crate::DType::F64 | crate::DType::C64 | crate::DType::C128
    ) {
        return Err(Error::unsupported(LS, dt));
    }
    if rhs.dtype() != dt {
        return Err(Error::dtype(
            LS,
            format!(
                "matrix and rhs must have the same dtype, got {} and {}",
                dt.name(),
                rhs.dtype().name()
            ),
        ));
    }
    let (ba, m, n) = crate::kernels::linalg::split_matrix(LS, matrix.shape())?;
    let (bb, rm, k) = crate::kernels::linalg::split_matrix(LS, rhs.shape())?;
    if ba != bb || rm != m {
        return Err(Error::invalid(
            LS,
            format!(
                "Incompatible shapes: matrix {:?} and right-hand side {:?}",
                matrix.shape(),
                rhs.shape()
            ),
        ));
    }
    // The solution and the Gram matrix must fit before any work starts (an empty
    // matrix may still have a huge other side).
    for (r, c) in [(n, k), (m.min(n), m.min(n))] {
        let shape: Vec<usize> = ba.iter().copied().chain([r, c]).collect();
        crate::size::check_shape(LS, &shape, dt)?;
    }
    if l2_regularizer.is_nan() || l2_regularizer < 0.0 {
        return Err(Error::invalid(
            LS,
            format!("l2_regularizer must be >= 0, got {l2_regularizer}"),
        ));
    }
    let x = crate::tape::stack::suspended(|| -> Result<Tensor> {
        if !fast {
            return min_norm_lstsq(matrix, rhs);
        }
        if m >= n {
            let l = regularized_gram_cholesky(matrix, l2_regularizer, true)?;
            cholesky_solve(&l, &matmul_t(&conj(matrix)?, rhs, true, false)?)
        } else {
            let l = regularized_gram_cholesky(matrix, l2_regularizer, false)?;
            matmul_t(&conj(matrix)?, &cholesky_solve(&l, rhs)?, true, false)
        }
    })?;
    binary_out(
        MatrixSolveLs {
            l2: l2_regularizer,
            fast,
        },
        matrix,
        rhs,
        x,
    )
}

/// The minimum-norm least-squares solution `v diag(s⁺) uᴴ b` (singular values below
/// `max(m, n) ε s_max` count as zero).
fn min_norm_lstsq(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let o = svd(a, true, false)?;
    let s = crate::ops::cast(&o[0], crate::DType::F64)?;
    let sv = s.to_vec::<f64>()?;
    let p = last(&s).max(1);
    let sh = a.shape();
    let big = sh[sh.len() - 2].max(sh[sh.len() - 1]) as f64;
    let eps = if matches!(a.dtype(), crate::DType::F32 | crate::DType::C64) {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    };
    let mut inv = sv.clone();
    for chunk in inv.chunks_mut(p) {
        let smax = chunk.iter().fold(0.0f64, |x, &y| x.max(y));
        for v in chunk.iter_mut() {
            *v = if *v > big * eps * smax { 1.0 / *v } else { 0.0 };
        }
    }
    let inv = crate::ops::cast(&Tensor::from_vec(inv, s.shape())?, a.dtype())?;
    let uhb = matmul_t(&conj(&o[1])?, b, true, false)?;
    matmul(&o[2], &multiply(&crate::ops::expand_dims(&inv, -1)?, &uhb)?)
}

struct MatrixSolveLs {
    l2: f64,
    fast: bool,
}
impl Op for MatrixSolveLs {
    fn name(&self) -> &'static str {
        "MatrixSolveLs"
    }
    fn batched(&self) -> bool {
        true
    }
    fn saves(&self) -> Saves {
        Saves::INPUTS_AND_OUTPUT
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        use crate::ops::subtract;
        if !self.fast {
            return Err(Error::invalid(LS, "Gradient not defined for fast=False"));
        }
        let (a, b) = (cx.input(0)?, cx.input(1)?);
        let g = &dys[0];
        let s = a.shape();
        let (m, n) = (s[s.len() - 2], s[s.len() - 1]);
        if m >= n {
            let x = cx.output(0)?;
            let l = regularized_gram_cholesky(a, self.l2, true)?;
            let z = cholesky_solve(&l, g)?;
            let xz = mm_adj_b(x, &z)?;
            let sym = add(&xz, &adjoint(&xz)?)?;
            let ga = subtract(&mm_adj_b(b, &z)?, &matmul(a, &sym)?)?;
            Ok(grads![Some(ga), Some(matmul(a, &z)?)])
        } else {
            let l = regularized_gram_cholesky(a, self.l2, false)?;
            let gb = cholesky_solve(&l, &matmul(a, g)?)?;
            let tmp = cholesky_solve(&l, b)?;
            let a1 = negative(&matmul(&gb, &matmul_t(&conj(&tmp)?, a, true, false)?)?)?;
            let a2 = mm_adj_b(&tmp, &subtract(g, &matmul_t(&conj(a)?, &gb, true, false)?)?)?;
            Ok(grads![Some(add(&a1, &a2)?), Some(gb)])
        }
    }
}

// ---------------------------------------------------------------------------
// Matrix exponential.

/// Padé coefficients `b_0..b_m` of `exp` for the degrees TF uses (Higham, 2005).
const PADE3: [f64; 4] = [120.0, 60.0, 12.0, 1.0];
const PADE5: [f64; 6] = [30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0];
const PADE7: [f64; 8] = [
    17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0,
];
const PADE9: [f64; 10] = [
    17643225600.0,
    8821612800.0,
    2075673600.0,
    302702400.0,
    30270240.0,
    2162160.0,
    110880.0,
    3960.0,
    90.0,
    1.0,
];
const PADE13: [f64; 14] = [
    64764752532480000.0,
    32382376266240000.0,
    7771770303897600.0,
    1187353796428800.0,
    129060195264000.0,
    10559470521600.0,
    670442572800.0,
    33522128640.0,
    1323241920.0,
    40840800.0,
    960960.0,
    16380.0,
    182.0,
    1.0,
];

/// `(u, v)` of the degree-`b.len() - 1` Padé approximant of `exp(a)`: the odd and
/// even parts of the numerator, `exp(a) ≈ (v - u)⁻¹ (v + u)`.
fn pade(a: &Tensor, b: &[f64]) -> Result<(Tensor, Tensor)> {
    let n = last(a);
    let eye = crate::ops::eye(n, None, &[], a.dtype())?;
    let sc = |x: &Tensor, c: f64| multiply(x, &crate::ops::scalar_like(x, c));
    let a2 = matmul(a, a)?;
    if b.len() == 14 {
        let a4 = matmul(&a2, &a2)?;
        let a6 = matmul(&a4, &a2)?;
        let sum = |terms: &[(&Tensor, f64)]| -> Result<Tensor> {
            let mut acc = sc(terms[0].0, terms[0].1)?;
            for (t, c) in &terms[1..] {
                acc = add(&acc, &sc(t, *c)?)?;
            }
            Ok(acc)
        };
        let hi_u = sum(&[(&a6, b[13]), (&a4, b[11]), (&a2, b[9])])?;
        let lo_u = sum(&[(&a6, b[7]), (&a4, b[5]), (&a2, b[3]), (&eye, b[1])])?;
        let u = matmul(a, &add(&matmul(&a6, &hi_u)?, &lo_u)?)?;
        let hi_v = sum(&[(&a6, b[12]), (&a4, b[10]), (&a2, b[8])])?;
        let lo_v = sum(&[(&a6, b[6]), (&a4, b[4]), (&a2, b[2]), (&eye, b[0])])?;
        let v = add(&matmul(&a6, &hi_v)?, &lo_v)?;
        return Ok((u, v));
    }
    // Powers a², a⁴, ...: u = a Σ b_{2k+1} a^{2k}, v = Σ b_{2k} a^{2k}.
    let mut p = eye;
    let (mut u, mut v) = (sc(&p, b[1])?, sc(&p, b[0])?);
    for k in 1..b.len() / 2 {
        p = matmul(&p, &a2)?;
        u = add(&u, &sc(&p, b[2 * k + 1])?)?;
        v = add(&v, &sc(&p, b[2 * k])?)?;
    }
    Ok((matmul(a, &u)?, v))
}

/// Matrix exponential of each square matrix, by scaling and squaring with Padé
/// approximants of degree 3 to 13 (7 for single precision) chosen by the 1-norm, as TF
/// composes it. TF equivalent: `tf.linalg.expm`. A matrix with a non-finite 1-norm gives
/// NaNs. Gradient: that of the composition (as in TF, whose `expm` is a composition).
pub fn expm(x: &Tensor) -> Result<Tensor> {
    use crate::DType;
    const OP: &str = "MatrixExponential";
    let dt = x.dtype();
    let single = match dt {
        DType::F32 | DType::C64 => true,
        DType::F64 | DType::C128 => false,
        other => return Err(Error::unsupported(OP, other)),
    };
    let shape = x.shape().to_vec();
    let (batch, n) = crate::kernels::linalg::split_square(OP, &shape)?;
    let nb: usize = batch.iter().product();
    if n == 0 || nb == 0 {
        return Ok(x.clone());
    }
    let flat = crate::ops::reshape(x, &[nb, n, n])?;
    // The 1-norms (largest column sums), the degrees and the squarings: constants.
    let l1: Vec<f64> = crate::tape::stack::suspended(|| -> Result<Vec<f64>> {
        let colsum = crate::ops::reduce_sum(&crate::ops::abs(&flat)?, Some(&[-2]), false)?;
        let m = crate::ops::reduce_max(&colsum, Some(&[-1]), false)?;
        crate::ops::cast(&m, DType::F64)?.to_vec::<f64>()
    })?;
    if l1.iter().any(|v| !v.is_finite()) {
        return multiply(x, &crate::ops::scalar_like(x, f64::NAN));
    }
    let (maxnorm, conds): (f64, &[f64]) = if single {
        (3.92572478313866, &[4.258730016922831e-1, 1.880152677804762])
    } else {
        (
            5.371920351148152,
            &[
                1.495585217958292e-2,
                2.53939833006323e-1,
                9.504178996162932e-1,
                2.097847961257068,
            ],
        )
    };
    let degrees: &[&[f64]] = if single {
        &[&PADE3, &PADE5, &PADE7]
    } else {
        &[&PADE3, &PADE5, &PADE7, &PADE9, &PADE13]
    };
    let squarings: Vec<u32> = l1
        .iter()
        .map(|&v| {
            if v > 0.0 {
                (v / maxnorm).log2().floor().max(0.0) as u32
            } else {
                0
            }
        })
        .collect();
    let choice: Vec<usize> = l1
        .iter()
        .map(|&v| conds.iter().position(|&c| v < c).unwrap_or(conds.len()))
        .collect();
    let scale: Vec<f64> = squarings.iter().map(|&s| 0.5f64.powi(s as i32)).collect();
    let scale = crate::ops::cast(&Tensor::from_vec(scale, &[nb, 1, 1])?, dt)?;
    let scaled = multiply(&flat, &scale)?;
    let mut uv: Option<(Tensor, Tensor)> = None;
    for (d, b) in degrees.iter().enumerate() {
        if !choice.contains(&d) {
            continue;
        }
        // The last degree works on the scaled matrices (the others see norms below
        // the first squaring's, where the scaled matrix is the matrix).
        let (u, v) = pade(&scaled, b)?;
        uv = Some(match uv {
            None => (u, v),
            Some((pu, pv)) => {
                let mask: Vec<bool> = choice.iter().map(|&c| c == d).collect();
                let mask = Tensor::from_vec(mask, &[nb, 1, 1])?;
                (
                    crate::ops::where_(&mask, &u, &pu)?,
                    crate::ops::where_(&mask, &v, &pv)?,
                )
            }
        });
    }
    let (u, v) = uv.ok_or_else(|| Error::Internal("expm: no Padé degree chosen".into()))?;
    let mut r = solve(&crate::ops::subtract(&v, &u)?, &add(&u, &v)?, false)?;
    let max_sq = squarings.iter().copied().max().unwrap_or(0);
    for i in 0..max_sq {
        let sq = matmul(&r, &r)?;
        r = if squarings.iter().all(|&s| s > i) {
            sq
        } else {
            let mask: Vec<bool> = squarings.iter().map(|&s| s > i).collect();
            crate::ops::where_(&Tensor::from_vec(mask, &[nb, 1, 1])?, &sq, &r)?
        };
    }
    crate::ops::reshape(&r, &shape)
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
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
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

/// How this family's traced ops are saved in SavedModels (see `saved_model::table`).
pub(crate) mod saved {
    #[allow(unused_imports)]
    use crate::error::Result;
    #[allow(unused_imports)]
    use crate::graph::Forward;
    #[allow(unused_imports)]
    use crate::ops;
    #[allow(unused_imports)]
    use crate::saved_model::table::{
        ensure, get, get_dtype, get_f64, many_out, one_out, Attrs, OpDef,
    };
    #[allow(unused_imports)]
    use crate::tensor::Tensor;

    pub(crate) const SAVED: &[OpDef] = &[
        OpDef::new("MatrixDeterminant", 1, &[], det),
        OpDef::new("Cholesky", 1, &[], cholesky),
        OpDef::new("Trace", 1, &[], trace),
        OpDef::new("Adjoint", 1, &[], adjoint),
        OpDef::new("MatrixExponential", 1, &[], expm),
        OpDef::new("MatrixDiagPartV3", 1, &[], diag_part),
        OpDef::new("MatrixSolve", 2, &["adjoint"], solve),
        OpDef::new(
            "MatrixTriangularSolve",
            2,
            &["lower", "adjoint"],
            triangular_solve,
        ),
        OpDef::new("MatrixInverse", 1, &["adjoint"], inv),
        OpDef::new("LogMatrixDeterminant", 1, &[], slogdet).outputs(Some(2)),
        OpDef::new("SelfAdjointEigV2", 1, &["compute_v"], eigh).outputs(None),
        OpDef::new("Svd", 1, &["full_matrices", "compute_uv"], svd).outputs(None),
        OpDef::new("Qr", 1, &["full_matrices"], qr).outputs(Some(2)),
        OpDef::new("MatrixSolveLs", 2, &["l2_regularizer", "fast"], lstsq),
        OpDef::new("MatrixDiagV3", 1, &["num_rows", "num_cols"], diag),
        OpDef::new("MatrixTranspose", 1, &["conjugate"], matrix_transpose),
        OpDef::new("Norm", 1, &["ord", "axis", "keepdims"], norm),
    ];

    fn det(_: &Attrs, _: usize) -> Result<Forward> {
        Ok(one_out(|xs| ops::det(&xs[0])))
    }
    fn cholesky(_: &Attrs, _: usize) -> Result<Forward> {
        Ok(one_out(|xs| ops::cholesky(&xs[0])))
    }
    fn trace(_: &Attrs, _: usize) -> Result<Forward> {
        Ok(one_out(|xs| ops::trace(&xs[0])))
    }
    fn adjoint(_: &Attrs, _: usize) -> Result<Forward> {
        Ok(one_out(|xs| ops::adjoint(&xs[0])))
    }
    fn expm(_: &Attrs, _: usize) -> Result<Forward> {
        Ok(one_out(|xs| ops::expm(&xs[0])))
    }
    fn diag_part(_: &Attrs, _: usize) -> Result<Forward> {
        Ok(one_out(|xs| ops::diag_part(&xs[0])))
    }
    fn solve(a: &Attrs, _: usize) -> Result<Forward> {
        let adj: bool = get("MatrixSolve", a, "adjoint")?;
        Ok(one_out(move |xs| ops::solve(&xs[0], &xs[1], adj)))
    }
    fn triangular_solve(a: &Attrs, _: usize) -> Result<Forward> {
        let op = "MatrixTriangularSolve";
        let (lower, adj): (bool, bool) = (get(op, a, "lower")?, get(op, a, "adjoint")?);
        Ok(one_out(move |xs| {
            ops::triangular_solve(&xs[0], &xs[1], lower, adj)
        }))
    }
    fn inv(a: &Attrs, _: usize) -> Result<Forward> {
        let adj: bool = get("MatrixInverse", a, "adjoint")?;
        Ok(one_out(move |xs| ops::inv(&xs[0], adj)))
    }
    fn slogdet(_: &Attrs, _: usize) -> Result<Forward> {
        Ok(many_out(|xs| {
            let (s, l) = ops::slogdet(&xs[0])?;
            Ok(vec![s, l])
        }))
    }
    fn eigh(a: &Attrs, _: usize) -> Result<Forward> {
        let v: bool = get("SelfAdjointEigV2", a, "compute_v")?;
        Ok(many_out(move |xs| {
            if v {
                let (e, v) = ops::eigh(&xs[0])?;
                Ok(vec![e, v])
            } else {
                Ok(vec![ops::eigvalsh(&xs[0])?])
            }
        }))
    }
    fn svd(a: &Attrs, _: usize) -> Result<Forward> {
        let (full, uv): (bool, bool) = (
            get("Svd", a, "full_matrices")?,
            get("Svd", a, "compute_uv")?,
        );
        Ok(many_out(move |xs| ops::svd(&xs[0], uv, full)))
    }
    fn qr(a: &Attrs, _: usize) -> Result<Forward> {
        let full: bool = get("Qr", a, "full_matrices")?;
        Ok(many_out(move |xs| {
            let (q, r) = ops::qr(&xs[0], full)?;
            Ok(vec![q, r])
        }))
    }
    fn lstsq(a: &Attrs, _: usize) -> Result<Forward> {
        let l2 = get_f64("MatrixSolveLs", a, "l2_regularizer")?;
        let fast: bool = get("MatrixSolveLs", a, "fast")?;
        Ok(one_out(move |xs| ops::lstsq(&xs[0], &xs[1], l2, fast)))
    }
    fn diag(a: &Attrs, _: usize) -> Result<Forward> {
        let rows: Option<usize> = get("MatrixDiagV3", a, "num_rows")?;
        let cols: Option<usize> = get("MatrixDiagV3", a, "num_cols")?;
        Ok(one_out(move |xs| ops::diag(&xs[0], rows, cols)))
    }
    fn matrix_transpose(a: &Attrs, _: usize) -> Result<Forward> {
        let c: bool = get("MatrixTranspose", a, "conjugate")?;
        Ok(one_out(move |xs| ops::matrix_transpose(&xs[0], c)))
    }
    fn norm(a: &Attrs, _: usize) -> Result<Forward> {
        let op = "Norm";
        // A `P` order may be infinite (a string in JSON).
        let ord = match a.get("ord") {
            Some(serde_json::Value::Object(m)) if m.len() == 1 && m.contains_key("P") => {
                ops::NormOrd::P(get_f64(op, m, "P")?)
            }
            _ => get(op, a, "ord")?,
        };
        let axes: Option<Vec<isize>> = get(op, a, "axis")?;
        let keepdims: bool = get(op, a, "keepdims")?;
        Ok(one_out(move |xs| {
            ops::norm(&xs[0], ord, axes.as_deref(), keepdims)
        }))
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

    /// Eigenvalues (ascending) and eigenvectors (columns) of self-adjoint matrices; only
    /// the lower triangle is read. TF equivalent: `tf.linalg.eigh`: `(e, v)`.
    ///
    /// >>> import gradtape as gt
    /// >>> e, v = gt.linalg.eigh(gt.constant([[2.0, 1.0], [1.0, 2.0]]))
    /// >>> [round(x, 5) for x in e.numpy().tolist()]
    /// [1.0, 3.0]
    /// >>> [round(abs(x), 5) for x in v.numpy().ravel().tolist()]
    /// [0.70711, 0.70711, 0.70711, 0.70711]
    #[pyfunction]
    #[pyo3(signature = (tensor, name=None))]
    fn eigh(
        py: Python<'_>,
        tensor: &Bound<'_, PyAny>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<(PyTensor, PyTensor)> {
        let _ = name;
        let x = one(tensor)?;
        let mut out = call_multi(
            py,
            "SelfAdjointEigV2",
            || "true".into(),
            &[x],
            |a| {
                let (e, v) = ops::eigh(&a[0])?;
                Ok(vec![e, v])
            },
        )?;
        let v = out.remove(1);
        Ok((out.remove(0).into(), v.into()))
    }

    /// Eigenvalues (ascending) of self-adjoint matrices; only the lower triangle is read.
    /// TF equivalent: `tf.linalg.eigvalsh`.
    ///
    /// >>> import gradtape as gt
    /// >>> gt.linalg.eigvalsh(gt.constant([[2.0, 0.0], [0.0, -1.0]])).numpy().tolist()
    /// [-1.0, 2.0]
    #[pyfunction]
    #[pyo3(signature = (tensor, name=None))]
    fn eigvalsh(
        py: Python<'_>,
        tensor: &Bound<'_, PyAny>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let x = one(tensor)?;
        Ok(call(py, "SelfAdjointEigV2", || "false".into(), &x, ops::eigvalsh)?.into())
    }

    /// Singular value decomposition `a = u diag(s) vᴴ`, returned as `(s, u, v)` in TF's
    /// order (only `s` when `compute_uv=False`); `s` descending and real.
    /// TF equivalent: `tf.linalg.svd`.
    ///
    /// >>> import gradtape as gt
    /// >>> s, u, v = gt.linalg.svd(gt.constant([[3.0, 0.0], [0.0, -4.0]]))
    /// >>> s.numpy().tolist(), u.shape, v.shape
    /// ([4.0, 3.0], TensorShape([2, 2]), TensorShape([2, 2]))
    /// >>> gt.linalg.svd(gt.constant([[3.0, 0.0, 0.0]]), compute_uv=False).numpy().tolist()
    /// [3.0]
    #[pyfunction]
    #[pyo3(signature = (tensor, full_matrices=false, compute_uv=true, name=None))]
    fn svd(
        py: Python<'_>,
        tensor: &Bound<'_, PyAny>,
        full_matrices: bool,
        compute_uv: bool,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let _ = name;
        let x = one(tensor)?;
        let key = || format!("{full_matrices},{compute_uv}");
        let mut out = call_multi(py, "Svd", key, &[x], move |a| {
            ops::svd(&a[0], compute_uv, full_matrices)
        })?;
        if !compute_uv {
            return Ok(PyTensor::from(out.remove(0))
                .into_pyobject(py)?
                .into_any()
                .unbind());
        }
        let v = PyTensor::from(out.remove(2));
        let u = PyTensor::from(out.remove(1));
        let s = PyTensor::from(out.remove(0));
        Ok((s, u, v).into_pyobject(py)?.into_any().unbind())
    }

    /// QR factorization `a = q r`: `(q, r)`, `q` with orthonormal columns, `r` upper
    /// triangular. TF equivalent: `tf.linalg.qr`.
    ///
    /// >>> import gradtape as gt
    /// >>> q, r = gt.linalg.qr(gt.constant([[3.0, 1.0], [4.0, 2.0]]))
    /// >>> [round(abs(x), 5) for x in r.numpy().ravel().tolist()]
    /// [5.0, 2.2, 0.0, 0.4]
    /// >>> q.shape, gt.linalg.qr(gt.ones([3, 2]), full_matrices=True)[0].shape
    /// (TensorShape([2, 2]), TensorShape([3, 3]))
    #[pyfunction]
    #[pyo3(signature = (input, full_matrices=false, name=None))]
    fn qr(
        py: Python<'_>,
        input: &Bound<'_, PyAny>,
        full_matrices: bool,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<(PyTensor, PyTensor)> {
        let _ = name;
        let x = one(input)?;
        let mut out = call_multi(
            py,
            "Qr",
            || full_matrices.to_string(),
            &[x],
            move |a| {
                let (q, r) = ops::qr(&a[0], full_matrices)?;
                Ok(vec![q, r])
            },
        )?;
        let r = out.remove(1);
        Ok((out.remove(0).into(), r.into()))
    }

    /// Least-squares solution of `matrix @ x = rhs`, optionally L2-regularized (`fast`:
    /// normal equations through Cholesky; otherwise the minimum-norm solution, with no
    /// gradient). TF equivalent: `tf.linalg.lstsq`.
    ///
    /// >>> import gradtape as gt
    /// >>> a = gt.constant([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    /// >>> [round(v, 5) for v in gt.linalg.lstsq(a, gt.constant([[1.0], [2.0], [2.0]])).numpy().ravel().tolist()]
    /// [0.66667, 1.66667]
    #[pyfunction]
    #[pyo3(signature = (matrix, rhs, l2_regularizer=None, fast=true, name=None))]
    fn lstsq(
        py: Python<'_>,
        matrix: &Bound<'_, PyAny>,
        rhs: &Bound<'_, PyAny>,
        l2_regularizer: Option<&Bound<'_, PyAny>>,
        fast: bool,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let l2: f64 = match l2_regularizer {
            None => 0.0,
            Some(v) if v.is_none() => 0.0,
            Some(v) => v.extract()?,
        };
        let (a, b) = pair(matrix, rhs)?;
        let f = move |a: &Tensor, b: &Tensor| ops::lstsq(a, b, l2, fast);
        Ok(call2(py, "MatrixSolveLs", || format!("{l2},{fast}"), &a, &b, f)?.into())
    }

    /// Matrix exponential (scaling and squaring with Padé approximants, as TF).
    /// TF equivalent: `tf.linalg.expm`.
    ///
    /// >>> import gradtape as gt
    /// >>> [round(v, 5) for v in gt.linalg.expm(gt.constant([[0.0, 1.0], [0.0, 0.0]])).numpy().ravel().tolist()]
    /// [1.0, 1.0, 0.0, 1.0]
    #[pyfunction]
    #[pyo3(signature = (input, name=None))]
    fn expm(
        py: Python<'_>,
        input: &Bound<'_, PyAny>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let x = one(input)?;
        Ok(call(py, "MatrixExponential", String::new, &x, ops::expm)?.into())
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
        fn eigh in [linalg]: "(tensor: TensorLike, name: str | None = None) -> tuple[Tensor, Tensor]";
        fn eigvalsh in [linalg]: "(tensor: TensorLike, name: str | None = None) -> Tensor";
        fn expm in [linalg]: "(input: TensorLike, name: str | None = None) -> Tensor";
        fn lstsq in [linalg]: "(matrix: TensorLike, rhs: TensorLike, l2_regularizer: float | TensorLike | None = None, fast: _bool = True, name: str | None = None) -> Tensor";
        fn qr in [linalg]: "(input: TensorLike, full_matrices: _bool = False, name: str | None = None) -> tuple[Tensor, Tensor]";
        fn svd in [linalg]: "(tensor: TensorLike, full_matrices: _bool = False, compute_uv: _bool = True, name: str | None = None) -> Any";
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
    fn eigh_values_vectors_and_gradients() {
        let a = t64(&[2.0, 1.0, 1.0, 2.0], &[2, 2]);
        let (e, v) = eigh(&a).unwrap();
        close(&vals(&e), &[1.0, 3.0]);
        let h = std::f64::consts::FRAC_1_SQRT_2;
        close(
            &vals(&v).iter().map(|x| x.abs()).collect::<Vec<_>>(),
            &[h, h, h, h],
        );
        close(&vals(&eigvalsh(&a).unwrap()), &[1.0, 3.0]);
        // d(e₀ + 2 e₁)/dA = v diag(1, 2) vᵀ = [[1.5, 0.5], [0.5, 1.5]], folded onto the
        // lower triangle (the only one read).
        let w = t64(&[1.0, 2.0], &[2]);
        close(
            &grad(&a, Some(&w), |m| eigvalsh(m).unwrap()),
            &[1.5, 0.0, 1.0, 1.5],
        );
        close(
            &grad(&a, Some(&w), |m| eigh(m).unwrap().0),
            &[1.5, 0.0, 1.0, 1.5],
        );
        // Only the lower triangle is read: an unsymmetric input is its lower part mirrored.
        check(&A, &[3, 3], &|m| eigvalsh(m).unwrap());
        check(&A, &[3, 3], &|m| {
            let v = eigh(m).unwrap().1;
            multiply(&v, &v).unwrap()
        });
        assert!(eigh(&t64(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])).is_err());
        let e = eigh(&t64(&[f64::NAN, 0.0, 0.0, 1.0], &[2, 2])).unwrap_err();
        assert!(e.to_string().contains("not successful"), "{e}");
        assert!(eigvalsh(&crate::ops::cast(&a, crate::DType::I32).unwrap()).is_err());
    }

    #[test]
    fn svd_values_vectors_and_gradients() {
        let a = t64(&[3.0, 0.0, 0.0, -4.0], &[2, 2]);
        let o = svd(&a, true, false).unwrap();
        close(&vals(&o[0]), &[4.0, 3.0]);
        // u diag(s) vᵀ rebuilds a.
        let us = multiply(&o[1], &o[0]).unwrap();
        close(&vals(&mm_adj_b(&us, &o[2]).unwrap()), &vals(&a));
        assert_eq!(svd(&a, false, false).unwrap().len(), 1);
        // ds/dA = u_k v_kᵀ: for diag(3, -4), d(s₀ + s₁)/dA = [[1, 0], [0, -1]].
        close(
            &grad(&a, None, |m| svd(m, false, false).unwrap().remove(0)),
            &[1.0, 0.0, 0.0, -1.0],
        );
        let r = [1.0, 2.0, -0.5, 0.3, 1.5, -2.0];
        for shape in [[2, 3], [3, 2]] {
            check(&r, &shape, &|m| svd(m, false, false).unwrap().remove(0));
            check(&r, &shape, &|m| svd(m, true, false).unwrap().remove(0));
            for full in [false, true] {
                for k in [1, 2] {
                    check(&r, &shape, &|m| {
                        let x = svd(m, true, full).unwrap().remove(k);
                        multiply(&x, &x).unwrap()
                    });
                }
            }
        }
        let full = svd(&t64(&r, &[3, 2]), true, true).unwrap();
        assert_eq!(full[1].shape(), &[3, 3]);
        assert_eq!(full[2].shape(), &[2, 2]);
        let nan = svd(&t64(&[f64::NAN, 1.0], &[1, 2]), false, false).unwrap();
        assert!(vals(&nan[0])[0].is_nan());
        assert!(svd(&t64(&[1.0, 2.0], &[2]), true, false).is_err());
    }

    #[test]
    fn qr_values_and_gradients() {
        let a = t64(&[3.0, 1.0, 4.0, 2.0], &[2, 2]);
        let (q, r) = qr(&a, false).unwrap();
        close(&vals(&matmul(&q, &r).unwrap()), &[3.0, 1.0, 4.0, 2.0]);
        let rv: Vec<f64> = vals(&r).iter().map(|x| x.abs()).collect();
        close(&rv, &[5.0, 2.2, 0.0, 0.4]);
        let qtq = matmul_t(&q, &q, true, false).unwrap();
        close(&vals(&qtq), &[1.0, 0.0, 0.0, 1.0]);
        let x = [
            1.0, 2.0, -0.5, 0.3, 1.5, -2.0, 0.7, 0.2, 1.1, -1.3, 0.4, 2.2,
        ];
        for shape in [[4, 3], [3, 4], [2, 6]] {
            check(&x, &shape, &|m| qr(m, false).unwrap().0);
            check(&x, &shape, &|m| qr(m, false).unwrap().1);
        }
        check(&x, &[3, 4], &|m| qr(m, true).unwrap().0);
        let (qf, rf) = qr(&t64(&x, &[4, 3]), true).unwrap();
        assert_eq!((qf.shape(), rf.shape()), (&[4, 4][..], &[4, 3][..]));
        close(&vals(&matmul(&qf, &rf).unwrap()), &x);
        // Like TF's: no gradient for full_matrices with more rows than columns.
        let t = crate::GradientTape::new();
        let xs = t64(&x, &[4, 3]);
        let y = {
            let _r = t.enter();
            t.watch(&xs);
            crate::ops::reduce_sum(&qr(&xs, true).unwrap().0, None, false).unwrap()
        };
        assert!(t.gradient1(&y, &xs).is_err());
    }

    #[test]
    fn lstsq_values_and_gradients() {
        let a = t64(&[1.0, 0.0, 0.0, 1.0, 1.0, 1.0], &[3, 2]);
        let b = t64(&[1.0, 2.0, 2.0], &[3, 1]);
        let x = lstsq(&a, &b, 0.0, true).unwrap();
        close(&vals(&x), &[2.0 / 3.0, 5.0 / 3.0]);
        let x = lstsq(&a, &b, 0.0, false).unwrap();
        close(&vals(&x), &[2.0 / 3.0, 5.0 / 3.0]);
        // (aᵀa + I)⁻¹ aᵀ b with aᵀa = [[2, 1], [1, 2]], aᵀb = [3, 4]: [[3, 1], [1, 3]]⁻¹ [3, 4].
        let x = lstsq(&a, &b, 1.0, true).unwrap();
        close(&vals(&x), &[5.0 / 8.0, 9.0 / 8.0]);
        // Underdetermined: the minimum-norm solution of x₀ + x₁ = 2 is [1, 1].
        let w = t64(&[1.0, 1.0], &[1, 2]);
        close(
            &vals(&lstsq(&w, &t64(&[2.0], &[1, 1]), 0.0, true).unwrap()),
            &[1.0, 1.0],
        );
        close(
            &vals(&lstsq(&w, &t64(&[2.0], &[1, 1]), 0.0, false).unwrap()),
            &[1.0, 1.0],
        );
        let r = [1.0, 2.0, -0.5, 0.3, 1.5, -2.0];
        let rhs6 = t64(&[0.5, -1.0, 2.0, 1.0, 0.2, 0.3], &[3, 2]);
        for l2 in [0.0, 0.5] {
            check(&r, &[3, 2], &|m| lstsq(m, &rhs6, l2, true).unwrap());
            check(&r, &[2, 3], &|m| {
                lstsq(m, &t64(&r[..4], &[2, 2]), l2, true).unwrap()
            });
            let am = t64(&r, &[3, 2]);
            check(&[0.5, -1.0, 2.0, 1.0, 0.2, 0.3], &[3, 2], &|v| {
                lstsq(&am, v, l2, true).unwrap()
            });
        }
        // A rank-deficient matrix needs fast=False or a regularizer.
        let rd = t64(&[1.0, 1.0, 0.0, 0.0], &[2, 2]);
        assert!(lstsq(&rd, &t64(&[1.0, 1.0], &[2, 1]), 0.0, true).is_err());
        close(
            &vals(&lstsq(&rd, &t64(&[2.0, 0.0], &[2, 1]), 0.0, false).unwrap()),
            &[1.0, 1.0],
        );
        assert!(lstsq(&a, &t64(&[1.0, 2.0], &[2, 1]), 0.0, true).is_err());
    }

    #[test]
    fn expm_values_and_gradients() {
        // exp([[0, t], [-t, 0]]) is the rotation by t; large norms take squarings.
        for t in [0.001, 0.1, 0.5, 1.5, 10.0] {
            let e = expm(&t64(&[0.0, t, -t, 0.0], &[2, 2])).unwrap();
            let (c, s) = (f64::cos(t), f64::sin(t));
            let got = vals(&e);
            for (g, w) in got.iter().zip([c, s, -s, c]) {
                // TF's squarings (floor of log2(|a|₁ / θ₁₃)) leave norms up to 2 θ₁₃ to
                // the degree-13 approximant: ~1e-9 at t = 10, as TF's.
                assert!((g - w).abs() < 1e-8 * (1.0 + t), "{t}: {got:?}");
            }
        }
        // A batch mixing degrees; nilpotent and diagonal cases.
        let b = t64(&[0.0, 1.0, 0.0, 0.0, 3.0, 0.0, 0.0, -2.0], &[2, 2, 2]);
        let e = vals(&expm(&b).unwrap());
        let want = [1.0, 1.0, 0.0, 1.0, 3f64.exp(), 0.0, 0.0, (-2f64).exp()];
        for (g, w) in e.iter().zip(want) {
            assert!((g - w).abs() < 1e-12 * (1.0 + w.abs()), "{e:?}");
        }
        check(&A, &[3, 3], &|m| expm(m).unwrap());
        let small: Vec<f64> = A.iter().map(|v| v * 0.01).collect();
        check(&small, &[3, 3], &|m| expm(m).unwrap());
        // d exp(a)/da along a's own direction at a diagonal: exp(a_ii) on the diagonal.
        let g = grad(&t64(&[1.0, 0.0, 0.0, 2.0], &[2, 2]), None, |m| {
            expm(m).unwrap()
        });
        close(&g[..1], &[1f64.exp()]);
        assert!(vals(&expm(&t64(&[f64::INFINITY, 0.0, 0.0, 1.0], &[2, 2])).unwrap())[0].is_nan());
        assert!(expm(&t64(&[1.0, 2.0], &[1, 2])).is_err());
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
