//! Dense linear-algebra kernels on batches of matrices (the last two axes), through
//! faer: LU (solve, inverse, determinant), Cholesky, triangular solves, and the
//! diagonal helpers. No tape here; shapes are checked and user errors returned.

use faer::linalg::solvers::{DenseSolveCore, Solve};
use faer::{Mat, MatRef, Par};
use ndarray::{ArcArray, ArrayD, ArrayView2, IxDyn};
use num_complex::Complex;

use super::matmul::Gemm;
use crate::error::{Error, Result};

/// Element types with faer factorizations: f32, f64, complex64, complex128.
pub trait La: Gemm + faer::traits::ComplexField + Copy + 'static {
    /// Whether the type is complex.
    const COMPLEX: bool;
    /// `|x|` in f64.
    fn abs64(self) -> f64;
    /// The real number `v` as `Self`.
    fn of_f64(v: f64) -> Self;
    /// `x / |x|` (0 for 0): the sign of a determinant.
    fn unit(self) -> Self {
        let a = self.abs64();
        if a == 0.0 {
            Self::of_f64(0.0)
        } else {
            self.scale(1.0 / a)
        }
    }
    /// `x * s` for a real `s`.
    fn scale(self, s: f64) -> Self;
    /// The complex conjugate (`x` itself for a real type).
    fn conj_(self) -> Self;
    /// The real part, as `Self` (`x` itself for a real type).
    fn re_(self) -> Self;
    /// The real part in f64.
    fn re64(self) -> f64;
    /// The imaginary part in f64 (0 for a real type).
    fn im64(self) -> f64;
}

macro_rules! la_real {
    ($($t:ty),*) => {$(
        impl La for $t {
            const COMPLEX: bool = false;
            fn abs64(self) -> f64 { (self as f64).abs() }
            fn of_f64(v: f64) -> Self { v as $t }
            fn scale(self, s: f64) -> Self { ((self as f64) * s) as $t }
            // Exactly -1, 0 or 1 (`x * (1/|x|)` can miss 1 by an ulp): slogdet's sign.
            fn unit(self) -> Self { if self == 0.0 { 0.0 } else { self.signum() } }
            fn conj_(self) -> Self { self }
            fn re_(self) -> Self { self }
            fn re64(self) -> f64 { self as f64 }
            fn im64(self) -> f64 { 0.0 }
        }
    )*};
}
la_real!(f32, f64);

macro_rules! la_complex {
    ($($t:ty),*) => {$(
        impl La for Complex<$t> {
            const COMPLEX: bool = true;
            fn abs64(self) -> f64 { Complex::new(self.re as f64, self.im as f64).norm() }
            fn of_f64(v: f64) -> Self { Complex::new(v as $t, 0.0) }
            fn scale(self, s: f64) -> Self {
                Complex::new(((self.re as f64) * s) as $t, ((self.im as f64) * s) as $t)
            }
            fn conj_(self) -> Self { self.conj() }
            fn re_(self) -> Self { Complex::new(self.re, 0.0) }
            fn re64(self) -> f64 { self.re as f64 }
            fn im64(self) -> f64 { self.im as f64 }
        }
    )*};
}
la_complex!(f32, f64);

/// Error message of TF's solve/inverse for a singular matrix.
pub const NOT_INVERTIBLE: &str = "Input matrix is not invertible.";

/// Splits a shape `[..., r, c]` into its batch part and `(r, c)`.
pub fn split_matrix<'s>(
    op: &'static str,
    shape: &'s [usize],
) -> Result<(&'s [usize], usize, usize)> {
    let r = shape.len();
    if r < 2 {
        return Err(Error::invalid(
            op,
            format!("Input must have rank >= 2, got {r}"),
        ));
    }
    Ok((&shape[..r - 2], shape[r - 2], shape[r - 1]))
}

/// Splits a shape of square matrices `[..., n, n]`; returns the batch part and `n`.
pub fn split_square<'s>(op: &'static str, shape: &'s [usize]) -> Result<(&'s [usize], usize)> {
    let (batch, r, c) = split_matrix(op, shape)?;
    if r != c {
        return Err(Error::invalid(
            op,
            format!("Input matrices must be square, got shape {shape:?}"),
        ));
    }
    Ok((batch, r))
}

/// Calls `f` on every matrix of `a` (`[..., r, c]`) in batch order. The list of
/// results is allocated up front (fallibly), and each matrix of a million elements or
/// more first checks that the system can give the room faer's factorizations take
/// for it (faer allocates its own workspaces): a refusal is `ResourceExhausted`.
fn each<T: Copy + Send + Sync, R>(
    a: &ArcArray<T, IxDyn>,
    mut f: impl FnMut(ArrayView2<'_, T>) -> Result<R>,
) -> Result<Vec<R>> {
    let s = a.shape();
    let (r, c) = (s[s.len() - 2], s[s.len() - 1]);
    let nb = crate::size::num_elements("Linalg", &s[..s.len() - 2])?;
    let dense;
    let std = if a.is_standard_layout() {
        a.view()
    } else {
        dense = super::elementwise::to_standard(&a.view(), s)?;
        dense.view()
    };
    let v = std
        .into_shape_with_order((nb, r, c))
        .map_err(|e| Error::Internal(format!("linalg batch of {s:?}: {e}")))?;
    let mut out = crate::size::try_vec("Linalg", nb)?;
    // A factorization's workspace and result: a few copies of the matrix.
    let room = (r * c).saturating_mul(4 * std::mem::size_of::<T>());
    for m in v.outer_iter() {
        if room >= 1 << 20 {
            crate::size::ensure_room("Linalg", room)?;
        }
        out.push(f(m)?);
    }
    Ok(out)
}

/// Stacks matrices (or vectors, or scalars) `parts` under the batch shape.
fn stack<T: Clone>(batch: &[usize], tail: &[usize], parts: Vec<Vec<T>>) -> Result<ArrayD<T>> {
    let mut shape = batch.to_vec();
    shape.extend_from_slice(tail);
    let n = crate::size::check_shape_of::<T>("Linalg", &shape)?;
    let mut flat = crate::size::try_vec("Linalg", n)?;
    for p in parts {
        flat.extend(p);
    }
    crate::size::shaped("Linalg", &shape, flat)
}

/// A faer view of an ndarray 2-D view (no copy).
fn fref<'a, T>(v: &ArrayView2<'a, T>) -> MatRef<'a, T> {
    let (r, c) = v.dim();
    let s = v.strides();
    // SAFETY: the view is valid for reads at every (i, j) through its strides.
    unsafe { MatRef::from_raw_parts(v.as_ptr(), r, c, s[0], s[1]) }
}

/// Row-major elements of a faer matrix.
fn rows_of<T: Copy>(m: MatRef<'_, T>) -> Result<Vec<T>> {
    let (r, c) = (m.nrows(), m.ncols());
    let (rs, cs) = (m.row_stride(), m.col_stride());
    let p = m.as_ptr();
    // A matrix faer made: its element count fits.
    let mut out = crate::size::try_vec("Linalg", r * c)?;
    for i in 0..r {
        for j in 0..c {
            // SAFETY: (i, j) is inside the matrix.
            out.push(unsafe { *p.offset(i as isize * rs + j as isize * cs) });
        }
    }
    Ok(out)
}

/// A faer matrix copied from an ndarray view.
fn to_mat<T: La>(v: &ArrayView2<'_, T>) -> Mat<T> {
    Mat::from_fn(v.nrows(), v.ncols(), |i, j| v[[i, j]])
}

/// Whether an LU factor has a zero pivot.
fn singular<T: La>(u: MatRef<'_, T>) -> bool {
    let n = u.nrows().min(u.ncols());
    let p = u.as_ptr();
    let step = u.row_stride() + u.col_stride();
    // SAFETY: diagonal entries are inside the matrix.
    (0..n).any(|i| unsafe { *p.offset(i as isize * step) }.abs64() == 0.0)
}

/// Checks that `b` (`[..., n, k]`) matches the square batch of `a` (`[..., n, n]`).
fn check_rhs(op: &'static str, a: &[usize], b: &[usize]) -> Result<()> {
    let (ba, n) = split_square(op, a)?;
    let (bb, rn, _) = split_matrix(op, b)?;
    if ba != bb || rn != n {
        return Err(Error::invalid(
            op,
            format!("Incompatible shapes: matrix {a:?} and right-hand side {b:?}"),
        ));
    }
    Ok(())
}

/// `A⁻¹ b` (or `A⁻ᴴ b` when `adjoint`) per batch entry; a singular `A` is an error.
pub fn solve<T: La>(
    a: &ArcArray<T, IxDyn>,
    b: &ArcArray<T, IxDyn>,
    adjoint: bool,
) -> Result<ArrayD<T>> {
    check_rhs("MatrixSolve", a.shape(), b.shape())?;
    let rhs: Vec<Mat<T>> = each(b, |m| Ok(to_mat(&m)))?;
    let mut rhs = rhs.into_iter();
    let parts = each(a, |m| {
        let lu = fref(&m).partial_piv_lu();
        if singular(lu.U()) {
            return Err(Error::invalid("MatrixSolve", NOT_INVERTIBLE));
        }
        let mut x = rhs
            .next()
            .ok_or_else(|| Error::Internal("right-hand sides of another batch".into()))?;
        if adjoint {
            lu.solve_adjoint_in_place(x.as_mut());
        } else {
            lu.solve_in_place(x.as_mut());
        }
        rows_of(x.as_ref())
    })?;
    let s = b.shape();
    stack(&s[..s.len() - 2], &s[s.len() - 2..], parts)
}

/// `A⁻¹` per batch entry; a singular `A` is an error.
pub fn inv<T: La>(a: &ArcArray<T, IxDyn>) -> Result<ArrayD<T>> {
    let (batch, n) = split_square("MatrixInverse", a.shape())?;
    let parts = each(a, |m| {
        let lu = fref(&m).partial_piv_lu();
        if singular(lu.U()) {
            return Err(Error::invalid("MatrixInverse", NOT_INVERTIBLE));
        }
        rows_of(lu.inverse().as_ref())
    })?;
    stack(batch, &[n, n], parts)
}

/// Sign of the row permutation of an LU factorization.
fn perm_sign(fwd: &[usize]) -> f64 {
    let mut seen = vec![false; fwd.len()];
    let mut sign = 1.0;
    for s in 0..fwd.len() {
        if seen[s] {
            continue;
        }
        let mut len = 0;
        let mut i = s;
        while !seen[i] {
            seen[i] = true;
            i = fwd[i];
            len += 1;
        }
        if len % 2 == 0 {
            sign = -sign;
        }
    }
    sign
}

/// `(sign, log|det|, det)` of one square matrix through its LU factorization. An
/// exactly singular finite matrix (a zero pivot) gives `(0, -inf, 0)`, as TF and
/// numpy: the factors past a zero pivot are not used (faer's are NaN there).
fn lu_det<T: La>(m: ArrayView2<'_, T>) -> (T, f64, T) {
    if m.nrows() == 0 {
        return (T::of_f64(1.0), 0.0, T::of_f64(1.0));
    }
    let lu = fref(&m).partial_piv_lu();
    let u = lu.U();
    if singular(u) && finite(&m) {
        return (T::of_f64(0.0), f64::NEG_INFINITY, T::of_f64(0.0));
    }
    let (fwd, _) = lu.P().arrays();
    let mut sign = T::of_f64(perm_sign(fwd));
    let mut det = sign;
    let mut logabs = 0.0;
    let p = u.as_ptr();
    let step = u.row_stride() + u.col_stride();
    for i in 0..u.nrows() {
        // SAFETY: diagonal entry inside the matrix.
        let d = unsafe { *p.offset(i as isize * step) };
        det *= d;
        sign *= d.unit();
        logabs += d.abs64().ln();
    }
    (sign, logabs, det)
}

/// Determinants of a batch of square matrices.
pub fn det<T: La>(a: &ArcArray<T, IxDyn>) -> Result<ArrayD<T>> {
    let (batch, _) = split_square("MatrixDeterminant", a.shape())?;
    let parts = each(a, |m| Ok(vec![lu_det(m).2]))?;
    stack(batch, &[], parts)
}

/// `(sign, log|det|)` of a batch of square matrices (`log|det|` as `T`).
pub fn slogdet<T: La>(a: &ArcArray<T, IxDyn>) -> Result<(ArrayD<T>, ArrayD<T>)> {
    let (batch, _) = split_square("LogMatrixDeterminant", a.shape())?;
    let parts = each(a, |m| Ok(lu_det(m)))?;
    let signs = parts.iter().map(|p| vec![p.0]).collect();
    let logs = parts.iter().map(|p| vec![T::of_f64(p.1)]).collect();
    Ok((stack(batch, &[], signs)?, stack(batch, &[], logs)?))
}

/// Lower Cholesky factors (only the lower triangles are read); a matrix that is not
/// positive definite is an error.
pub fn cholesky<T: La>(a: &ArcArray<T, IxDyn>) -> Result<ArrayD<T>> {
    let (batch, n) = split_square("Cholesky", a.shape())?;
    let parts = each(a, |m| {
        let llt = fref(&m).llt(faer::Side::Lower).map_err(|_| {
            Error::invalid(
                "Cholesky",
                "Cholesky decomposition was not successful. The input might not be valid.",
            )
        })?;
        let l = llt.L();
        let mut v = rows_of(l)?;
        // faer leaves the strict upper triangle unspecified: zero it.
        for i in 0..n {
            for j in i + 1..n {
                v[i * n + j] = T::of_f64(0.0);
            }
        }
        Ok(v)
    })?;
    stack(batch, &[n, n], parts)
}

/// Solves `A x = b` (or `Aᴴ x = b`) with `A` triangular: only its `lower` (or upper)
/// triangle is read.
pub fn triangular_solve<T: La>(
    a: &ArcArray<T, IxDyn>,
    b: &ArcArray<T, IxDyn>,
    lower: bool,
    adjoint: bool,
) -> Result<ArrayD<T>> {
    use faer::linalg::triangular_solve as ts;
    check_rhs("MatrixTriangularSolve", a.shape(), b.shape())?;
    let rhs: Vec<Mat<T>> = each(b, |m| Ok(to_mat(&m)))?;
    let mut rhs = rhs.into_iter();
    let parts = each(a, |m| {
        let t = fref(&m);
        let mut x = rhs
            .next()
            .ok_or_else(|| Error::Internal("right-hand sides of another batch".into()))?;
        match (lower, adjoint) {
            (true, false) => ts::solve_lower_triangular_in_place(t, x.as_mut(), Par::Seq),
            (false, false) => ts::solve_upper_triangular_in_place(t, x.as_mut(), Par::Seq),
            (true, true) => ts::solve_upper_triangular_in_place(t.adjoint(), x.as_mut(), Par::Seq),
            (false, true) => ts::solve_lower_triangular_in_place(t.adjoint(), x.as_mut(), Par::Seq),
        }
        rows_of(x.as_ref())
    })?;
    let s = b.shape();
    stack(&s[..s.len() - 2], &s[s.len() - 2..], parts)
}

/// TF's message for a failed self-adjoint eigendecomposition.
pub const EIGH_FAILED: &str =
    "Self-adjoint eigen decomposition was not successful. The input might not be valid.";

/// Whether every element of a matrix is finite.
fn finite<T: La>(m: &ArrayView2<'_, T>) -> bool {
    m.iter().all(|v| v.abs64().is_finite())
}

/// Eigenvalues (`[..., n]`, ascending, held as `T`) and eigenvectors (`[..., n, n]`,
/// the columns) of Hermitian matrices; only the lower triangles are read. A non-finite
/// input is an error (TF's message).
pub fn eigh<T: La>(a: &ArcArray<T, IxDyn>) -> Result<(ArrayD<T>, ArrayD<T>)> {
    const OP: &str = "SelfAdjointEigV2";
    let (batch, n) = split_square(OP, a.shape())?;
    let parts = each(a, |m| {
        if !finite(&m) {
            return Err(Error::invalid(OP, EIGH_FAILED));
        }
        if n == 0 {
            return Ok((Vec::new(), Vec::new()));
        }
        // Only the real part of the diagonal counts (a Hermitian matrix's diagonal is
        // real), as in TF's Eigen solver.
        let mut h = to_mat(&m);
        for i in 0..n {
            h[(i, i)] = h[(i, i)].re_();
        }
        let e = h
            .as_ref()
            .self_adjoint_eigen(faer::Side::Lower)
            .map_err(|_| Error::invalid(OP, EIGH_FAILED))?;
        let vals: Vec<T> = e.S().column_vector().iter().copied().collect();
        Ok((vals, rows_of(e.U())?))
    })?;
    let (vals, vecs): (Vec<_>, Vec<_>) = parts.into_iter().unzip();
    Ok((stack(batch, &[n], vals)?, stack(batch, &[n, n], vecs)?))
}

/// Singular values (`[..., p]`, `p = min(m, n)`, descending, held as `T`) and, when
/// `uv`, the singular vectors `u` (`[..., m, p]`, or `[..., m, m]` when `full`) and `v`
/// (`[..., n, p]` or `[..., n, n]`) of `[..., m, n]`, with `a = u diag(s) vᴴ`. A
/// matrix with a non-finite element gives NaNs (as TF's kernel does).
#[allow(clippy::type_complexity)]
pub fn svd<T: La>(
    a: &ArcArray<T, IxDyn>,
    uv: bool,
    full: bool,
) -> Result<(ArrayD<T>, Option<(ArrayD<T>, ArrayD<T>)>)> {
    const OP: &str = "Svd";
    let (batch, m, n) = split_matrix(OP, a.shape())?;
    let p = m.min(n);
    let (uc, vc) = if full { (m, n) } else { (p, p) };
    let nan = T::of_f64(f64::NAN);
    let eye = |r: usize, c: usize| -> Vec<T> {
        (0..r * c)
            .map(|k| T::of_f64(if k / c == k % c { 1.0 } else { 0.0 }))
            .collect()
    };
    let parts = each(a, |mat| {
        if !finite(&mat) {
            return Ok((vec![nan; p], vec![nan; m * uc], vec![nan; n * vc]));
        }
        if p == 0 {
            return Ok((Vec::new(), eye(m, uc), eye(n, vc)));
        }
        let f = fref(&mat);
        if !uv {
            let d = f
                .thin_svd()
                .map_err(|_| Error::invalid(OP, "SVD did not converge"))?;
            let s = d.S().column_vector().iter().copied().collect();
            return Ok((s, Vec::new(), Vec::new()));
        }
        let d = if full { f.svd() } else { f.thin_svd() }
            .map_err(|_| Error::invalid(OP, "SVD did not converge"))?;
        let s = d.S().column_vector().iter().copied().collect();
        Ok((s, rows_of(d.U())?, rows_of(d.V())?))
    })?;
    let mut ss = Vec::with_capacity(parts.len());
    let mut us = Vec::with_capacity(parts.len());
    let mut vs = Vec::with_capacity(parts.len());
    for (s, u, v) in parts {
        ss.push(s);
        us.push(u);
        vs.push(v);
    }
    let s = stack(batch, &[p], ss)?;
    if !uv {
        return Ok((s, None));
    }
    Ok((
        s,
        Some((stack(batch, &[m, uc], us)?, stack(batch, &[n, vc], vs)?)),
    ))
}

/// `q` (`[..., m, p]`, or `[..., m, m]` when `full`) with orthonormal columns and
/// upper-trapezoidal `r` (`[..., p, n]`, or `[..., m, n]`) with `a = q r` (Householder,
/// `p = min(m, n)`; `r`'s diagonal is real, with the signs LAPACK's and Eigen's
/// Householder steps give it, as in TF and numpy).
pub fn qr<T: La>(a: &ArcArray<T, IxDyn>, full: bool) -> Result<(ArrayD<T>, ArrayD<T>)> {
    let (batch, m, n) = split_matrix("Qr", a.shape())?;
    let p = m.min(n);
    let qc = if full { m } else { p };
    let parts = each(a, |mat| {
        if m == 0 || n == 0 {
            let q = (0..m * qc)
                .map(|k| T::of_f64(if k / qc == k % qc { 1.0 } else { 0.0 }))
                .collect();
            return Ok((q, vec![T::of_f64(0.0); qc * n]));
        }
        let d = fref(&mat).qr();
        let q = if full {
            d.compute_Q()
        } else {
            d.compute_thin_Q()
        };
        // faer's R is p×n with an unspecified strict lower triangle: zero it, and pad
        // with zero rows to m×n for the full factorization.
        let mut rv = rows_of(d.thin_R())?;
        for i in 0..p {
            for j in 0..i.min(n) {
                rv[i * n + j] = T::of_f64(0.0);
            }
        }
        rv.resize(qc * n, T::of_f64(0.0));
        let mut qv = rows_of(q.as_ref())?;
        if T::COMPLEX {
            // faer reflects column k unless its part below the diagonal is zero; its
            // Householder basis keeps that part (zero) then.
            let basis = d.Q_basis();
            let reflected: Vec<bool> = (0..p)
                .map(|k| (k + 1..basis.nrows()).any(|i| basis[(i, k)].abs64() != 0.0))
                .collect();
            real_r_diagonal(&mut qv, qc, &mut rv, n, &reflected);
        }
        Ok((qv, rv))
    })?;
    let (qs, rs): (Vec<_>, Vec<_>) = parts.into_iter().unzip();
    Ok((stack(batch, &[m, qc], qs)?, stack(batch, &[qc, n], rs)?))
}

/// Makes the diagonal of a complex QR factorization's `r` real, as LAPACK's and
/// Eigen's (so numpy's and TF's): their step `k` maps the pivot `α` to
/// `-sign(Re α) ‖column‖`, where faer's maps it to `-(α / |α|) ‖column‖` (and leaves
/// it as it is when nothing is below it: `reflected[k]` false). The signs are theirs
/// when faer's pivots have the same real-part signs, which is usual, not certain
/// (their reflections differ from faer's by phases). For each `k`, with
/// `ph` the phase that turns faer's `r[k, k]` into theirs, column `k` of `q` (`m × qc`,
/// row-major) is multiplied by `ph` and row `k` of `r` (`qc × n`) by `conj(ph)`, which
/// leaves `q r` unchanged. A real `r[k, k]` left alone is kept (theirs too).
fn real_r_diagonal<T: La>(q: &mut [T], qc: usize, r: &mut [T], n: usize, reflected: &[bool]) {
    for (k, &refl) in reflected.iter().enumerate() {
        let d = r[k * n + k];
        let a = d.abs64();
        if a == 0.0 || d.im64() == 0.0 {
            continue;
        }
        // Theirs: sign(Re d) |d| after a reflection, -sign(Re d) |d| otherwise.
        let positive = (d.re64() >= 0.0) == refl;
        let ph = d.scale(if positive { 1.0 / a } else { -1.0 / a });
        for row in q.chunks_mut(qc) {
            row[k] *= ph;
        }
        let c = ph.conj_();
        for v in &mut r[k * n..(k + 1) * n] {
            *v *= c;
        }
        r[k * n + k] = r[k * n + k].re_();
    }
}

/// Main diagonals (`[..., min(r, c)]`) of `[..., r, c]`.
pub fn diag_part<T: Copy + Send + Sync>(a: &ArcArray<T, IxDyn>) -> Result<ArrayD<T>> {
    let (batch, r, c) = split_matrix("MatrixDiagPartV3", a.shape())?;
    let k = r.min(c);
    let parts = each(a, |m| Ok((0..k).map(|i| m[[i, i]]).collect()))?;
    stack(batch, &[k], parts)
}

/// `[..., rows, cols]` zero matrices with `v` (`[..., k]`, `k <= min(rows, cols)`) on
/// their main diagonals.
pub fn diag<T: Copy + Default + Send + Sync>(
    v: &ArcArray<T, IxDyn>,
    rows: usize,
    cols: usize,
) -> Result<ArrayD<T>> {
    let s = v.shape();
    if s.is_empty() {
        return Err(Error::invalid(
            "MatrixDiagV3",
            "diagonal must be at least 1-dim, got a scalar",
        ));
    }
    let k = s[s.len() - 1];
    let batch = &s[..s.len() - 1];
    let mut shape = batch.to_vec();
    shape.extend([rows, cols]);
    let mut out = crate::size::try_full("MatrixDiagV3", &shape, T::default())?;
    if out.is_empty() {
        return Ok(out);
    }
    // A non-empty output: `nb * rows * cols` and `nb * k` (k <= the input) fit.
    let nb: usize = batch.iter().product();
    let dense = super::elementwise::to_standard(&v.view(), s)?;
    let flat = dense
        .as_slice()
        .ok_or_else(|| Error::Internal("a fresh array is contiguous".into()))?;
    let o = out
        .as_slice_mut()
        .ok_or_else(|| Error::Internal("a fresh array is contiguous".into()))?;
    for b in 0..nb {
        for i in 0..k.min(rows).min(cols) {
            o[b * rows * cols + i * cols + i] = flat[b * k + i];
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr(v: &[f64], shape: &[usize]) -> ArcArray<f64, IxDyn> {
        ArrayD::from_shape_vec(IxDyn(shape), v.to_vec())
            .unwrap()
            .into_shared()
    }

    #[test]
    fn solve_inv_det() {
        let a = arr(&[4.0, 3.0, 6.0, 3.0], &[2, 2]);
        let b = arr(&[10.0, 12.0], &[2, 1]);
        let x = solve(&a, &b, false).unwrap();
        assert_eq!(x.iter().copied().collect::<Vec<_>>(), vec![1.0, 2.0]);
        // Aᵀ x = b: [[4, 6], [3, 3]] x = [10, 12] -> x = [7, -3]
        let xt = solve(&a, &b, true).unwrap();
        let v: Vec<f64> = xt.iter().copied().collect();
        assert!(
            (v[0] - 7.0).abs() < 1e-12 && (v[1] + 3.0).abs() < 1e-12,
            "{v:?}"
        );
        let d = det(&a).unwrap();
        assert!((d[[]] + 6.0).abs() < 1e-12);
        let (s, l) = slogdet(&a).unwrap();
        assert_eq!(s[[]], -1.0);
        assert!((l[[]] - 6f64.ln()).abs() < 1e-12);
        let i = inv(&a).unwrap();
        let want = [-0.5, 0.5, 1.0, -2.0 / 3.0];
        for (p, q) in i.iter().zip(want) {
            assert!((p - q).abs() < 1e-12);
        }
    }

    #[test]
    fn singular_and_not_positive_definite_are_errors() {
        let s = arr(&[1.0, 2.0, 2.0, 4.0], &[2, 2]);
        let e = inv(&s).unwrap_err().to_string();
        assert!(e.contains(NOT_INVERTIBLE), "{e}");
        assert!(solve(&s, &arr(&[1.0, 1.0], &[2, 1]), false).is_err());
        assert_eq!(det(&s).unwrap()[[]], 0.0);
        assert!(cholesky(&arr(&[1.0, 2.0, 2.0, 1.0], &[2, 2])).is_err());
        assert!(inv(&arr(&[1.0, 2.0], &[1, 2])).is_err());
    }

    #[test]
    fn exactly_singular_determinants() {
        let z = arr(&[0.0; 4], &[2, 2]);
        assert_eq!(det(&z).unwrap()[[]], 0.0);
        let (s, l) = slogdet(&z).unwrap();
        assert_eq!((s[[]], l[[]]), (0.0, f64::NEG_INFINITY));
        let (s, l) = slogdet(&arr(&[1.0, 2.0, 2.0, 4.0], &[2, 2])).unwrap();
        assert_eq!((s[[]], l[[]]), (0.0, f64::NEG_INFINITY));
    }

    #[test]
    fn complex_qr_has_a_real_diagonal() {
        let v: Vec<Complex<f64>> = [
            (1.0, 2.0),
            (3.0, -1.0),
            (0.5, 0.5),
            (-2.0, 1.0),
            (1.0, 0.0),
            (0.0, 3.0),
        ]
        .iter()
        .map(|&(re, im)| Complex::new(re, im))
        .collect();
        for (m, n) in [(2, 3), (3, 2)] {
            let a = ArrayD::from_shape_vec(IxDyn(&[m, n]), v.clone())
                .unwrap()
                .into_shared();
            let (q, r) = qr(&a, false).unwrap();
            for k in 0..m.min(n) {
                assert_eq!(r[[k, k]].im, 0.0);
            }
            let (q, r) = (
                q.into_dimensionality::<ndarray::Ix2>().unwrap(),
                r.into_dimensionality::<ndarray::Ix2>().unwrap(),
            );
            let back = q.dot(&r);
            for (p, w) in back.iter().zip(&v) {
                assert!((p - w).norm() < 1e-12, "{back:?}");
            }
        }
    }

    #[test]
    fn cholesky_and_triangular() {
        let a = arr(&[4.0, 2.0, 2.0, 5.0], &[1, 2, 2]);
        let l = cholesky(&a).unwrap();
        assert_eq!(
            l.iter().copied().collect::<Vec<_>>(),
            vec![2.0, 0.0, 1.0, 2.0]
        );
        let b = arr(&[2.0, 5.0], &[1, 2, 1]);
        let x = triangular_solve(&l.into_shared(), &b, true, false).unwrap();
        assert_eq!(x.iter().copied().collect::<Vec<_>>(), vec![1.0, 2.0]);
    }

    #[test]
    fn diagonals() {
        let a = arr(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
        assert_eq!(
            diag_part(&a).unwrap().into_raw_vec_and_offset().0,
            vec![1.0, 5.0]
        );
        let d = diag(&arr(&[1.0, 5.0], &[2]), 2, 3).unwrap();
        assert_eq!(
            d.into_raw_vec_and_offset().0,
            vec![1.0, 0.0, 0.0, 0.0, 5.0, 0.0]
        );
    }
}
