//! Elementwise maps and broadcasting zips.

use std::mem::MaybeUninit;

use ndarray::{ArcArray, ArrayD, ArrayViewMutD, Axis, IxDyn, Zip};

use super::PAR_THRESHOLD;
use crate::broadcast::broadcast_shapes;
use crate::error::{Error, Result};
use crate::size::{shaped, shaped_dim, try_uninit, try_vec};

/// The op name kernel allocations report when they fail (`ResourceExhausted`).
pub(crate) const ALLOC: &str = "Allocate";

/// Applies `f` to every element.
#[inline]
pub fn map<T, U, F>(a: &ArcArray<T, IxDyn>, f: F) -> Result<ArrayD<U>>
where
    T: Copy + Send + Sync,
    U: Send + Sync + Copy,
    F: Fn(T) -> U + Sync + Send,
{
    // SAFETY: `fill` writes every element of its output.
    unsafe { map_chunks(a, |x, out| fill(x, out, &f)) }
}

/// Applies `kernel` to matching chunks of the elements and of the result: the whole
/// array below [`PAR_THRESHOLD`] elements, [`CHUNK`]-sized pieces shared between the
/// calling thread and the engine's pool above it.
///
/// # Safety
/// `kernel` must write every element of its output chunk.
pub(crate) unsafe fn map_chunks<T, U, K>(a: &ArcArray<T, IxDyn>, kernel: K) -> Result<ArrayD<U>>
where
    T: Copy + Send + Sync,
    U: Send + Sync + Copy,
    K: Fn(&[T], &mut [MaybeUninit<U>]) + Sync + Send,
{
    // A strided array is gathered once, then the contiguous kernel runs.
    let dense;
    let s = match a.as_slice() {
        Some(s) => s,
        None => {
            dense = broadcast_owned(a, a.shape())?;
            dense
                .as_slice()
                .ok_or_else(|| Error::Internal("a fresh array is contiguous".into()))?
        }
    };
    let v = collect_chunks(s.len(), |range, out| kernel(&s[range], out))?;
    shaped_dim(ALLOC, a.raw_dim(), v)
}

/// `f(x[i], y[i])` for two contiguous operands of one shape, or with `b` repeated
/// over leading axes of `a` (a batched gradient against its saved tensor); `None`
/// otherwise.
pub fn zip_contiguous<A, B, C, F>(
    a: &ArcArray<A, IxDyn>,
    b: &ArcArray<B, IxDyn>,
    f: F,
) -> Result<Option<ArrayD<C>>>
where
    A: Copy + Send + Sync,
    B: Copy + Send + Sync,
    C: Send + Sync + Copy,
    F: Fn(A, B) -> C + Sync + Send,
{
    let (Some(x), Some(y)) = (a.as_slice(), b.as_slice()) else {
        return Ok(None);
    };
    // `b`'s shape without its leading 1s (a bias of shape [1, c] repeats as one of [c]).
    let trailing = &b.shape()[b.shape().iter().take_while(|&&d| d == 1).count()..];
    let v = if a.shape() == b.shape() {
        collect_chunks(x.len(), |r, out| fill2(&x[r.clone()], &y[r], out, &f))?
    } else if !y.is_empty() && b.ndim() <= a.ndim() && a.shape().ends_with(trailing) {
        if y.len() >= MIN_PERIOD {
            zip_tiled(x, y, &f)?
        } else {
            // A short period (a few channels) repeated into one of about 1024
            // elements: `y[i % n]` is `rep[i % (k n)]`.
            let rep: Vec<B> = y
                .iter()
                .copied()
                .cycle()
                .take(y.len() * 1024.min(x.len()).div_ceil(y.len()))
                .collect();
            zip_tiled(x, &rep, &f)?
        }
    } else {
        return Ok(None);
    };
    Ok(Some(shaped_dim(ALLOC, a.raw_dim(), v)?))
}

/// `combine(y[i], k(x)[i])` where `k` is a chunk kernel (see [`map_chunks`]), in one
/// pass: each chunk of `k`'s output is combined while it is still in cache. `None`
/// unless both operands are contiguous and of one shape.
///
/// # Safety
/// `k` must write every element of its output chunk.
pub(crate) unsafe fn zip_chunk_kernel<T, K, F>(
    x: &ArcArray<T, IxDyn>,
    y: &ArcArray<T, IxDyn>,
    k: K,
    combine: F,
) -> Result<Option<ArrayD<T>>>
where
    T: Copy + Send + Sync,
    K: Fn(&[T], &mut [MaybeUninit<T>]) + Sync + Send,
    F: Fn(T, T) -> T + Sync + Send,
{
    let (Some(xs), Some(ys)) = (x.as_slice(), y.as_slice()) else {
        return Ok(None);
    };
    if x.shape() != y.shape() {
        return Ok(None);
    }
    let v = collect_chunks(xs.len(), |r, out| {
        k(&xs[r.clone()], out);
        // SAFETY: `k` initialized the chunk (the caller's contract).
        let done = unsafe { &mut *(out as *mut [MaybeUninit<T>] as *mut [T]) };
        for (o, &q) in done.iter_mut().zip(&ys[r]) {
            *o = combine(q, *o);
        }
    })?;
    Ok(Some(shaped_dim(ALLOC, x.raw_dim(), v)?))
}

/// An array of `shape` with every element `v` (written in parallel, vectorized);
/// `op` names the op in the error for a shape too large to hold.
pub fn filled<T: Copy + Send + Sync>(op: &'static str, shape: &[usize], v: T) -> Result<ArrayD<T>> {
    let n = crate::size::check_shape_of::<T>(op, shape)?;
    let data = collect_chunks_for(op, n, |_, out| {
        for o in out {
            o.write(v);
        }
    })?;
    shaped(op, shape, data)
}

/// `a` broadcast to `shape` (which it must broadcast to) as a new standard-layout
/// array; with `a`'s own shape, a contiguous copy of a strided array.
pub fn broadcast_owned<T: Copy + Send + Sync>(
    a: &ArcArray<T, IxDyn>,
    shape: &[usize],
) -> Result<ArrayD<T>> {
    to_standard(&a.view(), shape)
}

/// `a` broadcast to `shape` as a new standard-layout array (a contiguous copy when
/// `shape` is `a`'s own); `InvalidArgument` when `a` does not broadcast to it.
pub fn to_standard<T: Copy + Send + Sync>(
    a: &ndarray::ArrayViewD<'_, T>,
    shape: &[usize],
) -> Result<ArrayD<T>> {
    if a.len() == 1 {
        if let Some(&v) = a.iter().next() {
            return filled(ALLOC, shape, v);
        }
    }
    let view = a
        .broadcast(IxDyn(shape))
        .ok_or_else(|| Error::shapes("BroadcastTo", a.shape(), shape))?;
    if let Some(src) = view.as_slice() {
        // Already contiguous in row-major order: one copy.
        let mut v = try_vec(ALLOC, src.len())?;
        v.extend_from_slice(src);
        return shaped(ALLOC, shape, v);
    }
    by_rows(ALLOC, shape, |rows, out| {
        Zip::from(out)
            .and(view.slice_axis(Axis(0), rows.into()))
            .for_each(|o, &v| {
                o.write(v);
            });
    })
}

/// A new standard-layout array of `shape`, written by `kernel(rows, block)` for blocks
/// of whole rows (indices along axis 0) of it, in parallel above [`PAR_THRESHOLD`]
/// elements: for broadcasts that have no contiguous runs to work on. `shape` has at
/// least one axis; `op` names a refused allocation.
fn by_rows<U, K>(op: &'static str, shape: &[usize], kernel: K) -> Result<ArrayD<U>>
where
    U: Send,
    K: Fn(std::ops::Range<usize>, ArrayViewMutD<'_, MaybeUninit<U>>) + Sync,
{
    debug_assert!(!shape.is_empty(), "by_rows needs an axis to split");
    let n = crate::size::num_elements(op, shape)?;
    let rows = shape.first().copied().unwrap_or(1);
    let row = n.checked_div(rows).unwrap_or(0);
    let mut v: Vec<U> = try_vec(op, n)?;
    let out = &mut v.spare_capacity_mut()[..n];
    let block = |r0: usize, piece: &mut [MaybeUninit<U>]| {
        let mut dims = shape.to_vec();
        let r = piece.len().checked_div(row).unwrap_or(rows);
        if let Some(d) = dims.first_mut() {
            *d = r;
        }
        let view = ArrayViewMutD::from_shape(IxDyn(&dims), piece).expect("whole rows");
        kernel(r0..r0 + r, view);
    };
    let per_piece = (CHUNK / row.max(1)).max(1);
    if n >= PAR_THRESHOLD && rows >= 2 {
        crate::pool::pieces(out, per_piece * row, |i, piece| block(i * per_piece, piece));
    } else {
        block(0, out);
    }
    // SAFETY: the blocks cover every row, and the kernels write every element of
    // theirs (the callers' contract; a panic unwinds before this and drops `v` empty).
    unsafe { v.set_len(n) };
    shaped(op, shape, v)
}

/// Elements per parallel task of the elementwise kernels.
pub const CHUNK: usize = 1 << 14;

/// A `Vec` of `n` elements written by `kernel(range, out)` over chunks of the index
/// range, in parallel above [`PAR_THRESHOLD`].
fn collect_chunks<U, K>(n: usize, kernel: K) -> Result<Vec<U>>
where
    U: Send,
    K: Fn(std::ops::Range<usize>, &mut [MaybeUninit<U>]) + Sync + Send,
{
    collect_chunks_for(ALLOC, n, kernel)
}

/// [`collect_chunks`] naming `op` in the error for a refused allocation.
pub(crate) fn collect_chunks_for<U, K>(op: &'static str, n: usize, kernel: K) -> Result<Vec<U>>
where
    U: Send,
    K: Fn(std::ops::Range<usize>, &mut [MaybeUninit<U>]) + Sync + Send,
{
    let mut v: Vec<U> = try_vec(op, n)?;
    super::advise_huge_pages(v.as_mut_ptr().cast(), n * std::mem::size_of::<U>());
    let out = &mut v.spare_capacity_mut()[..n];
    if n >= PAR_THRESHOLD {
        crate::pool::pieces(out, CHUNK, |i, o| {
            let start = i * CHUNK;
            kernel(start..start + o.len(), o)
        });
        // SAFETY: every chunk's kernel wrote all of its elements (the callers' contract;
        // a panic unwinds before this and drops `v` empty).
        unsafe { v.set_len(n) };
        return Ok(v);
    }
    kernel(0..n, out);
    // SAFETY: as above.
    unsafe { v.set_len(n) };
    Ok(v)
}

/// `out[i] = f(x[i])`, run through a copy compiled for the widest vector unit the
/// CPU has (AVX-512, AVX2+FMA, or the baseline): with `f` inlined and branch-free,
/// the loop vectorizes.
#[inline]
pub fn fill<T: Copy, U, F: Fn(T) -> U>(x: &[T], out: &mut [MaybeUninit<U>], f: &F) {
    #[inline(always)]
    fn body<T: Copy, U, F: Fn(T) -> U>(x: &[T], out: &mut [MaybeUninit<U>], f: &F) {
        for (o, &v) in out.iter_mut().zip(x) {
            o.write(f(v));
        }
    }
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")]
        unsafe fn wide<T: Copy, U, F: Fn(T) -> U>(x: &[T], out: &mut [MaybeUninit<U>], f: &F) {
            body(x, out, f)
        }
        #[target_feature(enable = "avx2,fma")]
        unsafe fn avx2<T: Copy, U, F: Fn(T) -> U>(x: &[T], out: &mut [MaybeUninit<U>], f: &F) {
            body(x, out, f)
        }
        match simd::level() {
            // SAFETY: each copy runs only on a CPU that has its features.
            simd::Level::Avx512 => return unsafe { wide(x, out, f) },
            // SAFETY: as above.
            simd::Level::Avx2 => return unsafe { avx2(x, out, f) },
            simd::Level::Baseline => {}
        }
    }
    body(x, out, f)
}

/// `out[i] = f(x[i], y[i])`, vectorized like [`fill`].
#[inline]
pub fn fill2<A: Copy, B: Copy, C, F: Fn(A, B) -> C>(
    x: &[A],
    y: &[B],
    out: &mut [MaybeUninit<C>],
    f: &F,
) {
    #[inline(always)]
    fn body<A: Copy, B: Copy, C, F: Fn(A, B) -> C>(
        x: &[A],
        y: &[B],
        out: &mut [MaybeUninit<C>],
        f: &F,
    ) {
        for ((o, &p), &q) in out.iter_mut().zip(x).zip(y) {
            o.write(f(p, q));
        }
    }
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")]
        unsafe fn wide<A: Copy, B: Copy, C, F: Fn(A, B) -> C>(
            x: &[A],
            y: &[B],
            out: &mut [MaybeUninit<C>],
            f: &F,
        ) {
            body(x, y, out, f)
        }
        #[target_feature(enable = "avx2,fma")]
        unsafe fn avx2<A: Copy, B: Copy, C, F: Fn(A, B) -> C>(
            x: &[A],
            y: &[B],
            out: &mut [MaybeUninit<C>],
            f: &F,
        ) {
            body(x, y, out, f)
        }
        match simd::level() {
            // SAFETY: as in `fill`.
            simd::Level::Avx512 => return unsafe { wide(x, y, out, f) },
            // SAFETY: as in `fill`.
            simd::Level::Avx2 => return unsafe { avx2(x, y, out, f) },
            simd::Level::Baseline => {}
        }
    }
    body(x, y, out, f)
}

/// The vector unit of the running CPU, detected once.
#[cfg(target_arch = "x86_64")]
mod simd {
    use std::sync::atomic::{AtomicU8, Ordering};

    #[derive(Clone, Copy, PartialEq, Eq)]
    pub enum Level {
        Baseline,
        Avx2,
        Avx512,
    }

    static LEVEL: AtomicU8 = AtomicU8::new(u8::MAX);

    #[inline]
    pub fn level() -> Level {
        match LEVEL.load(Ordering::Relaxed) {
            0 => Level::Baseline,
            1 => Level::Avx2,
            2 => Level::Avx512,
            _ => detect(),
        }
    }

    #[cold]
    fn detect() -> Level {
        let avx2 = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma");
        let avx512 = avx2
            && is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512dq")
            && is_x86_feature_detected!("avx512vl");
        let (level, code) = match (avx512, avx2) {
            (true, _) => (Level::Avx512, 2),
            (false, true) => (Level::Avx2, 1),
            _ => (Level::Baseline, 0),
        };
        LEVEL.store(code, Ordering::Relaxed);
        level
    }
}

/// Applies `f` pairwise with numpy broadcasting.
#[inline]
pub fn zip<A, B, C, F>(
    op: &'static str,
    a: &ArcArray<A, IxDyn>,
    b: &ArcArray<B, IxDyn>,
    f: F,
) -> Result<ArrayD<C>>
where
    A: Copy + Send + Sync,
    B: Copy + Send + Sync,
    C: Send + Sync + Copy,
    F: Fn(A, B) -> C + Sync + Send,
{
    if a.shape() == b.shape() {
        if let Some(v) = zip_contiguous(a, b, &f)? {
            return Ok(v);
        }
    }
    // One side a single element that does not add dimensions: map the other side.
    if b.len() == 1 && b.ndim() <= a.ndim() {
        if let Some(&q) = b.iter().next() {
            return map(a, |p| f(p, q));
        }
    }
    if a.len() == 1 && a.ndim() <= b.ndim() {
        if let Some(&p) = a.iter().next() {
            return map(b, |q| f(p, q));
        }
    }
    // One side repeats over the other's leading axes (a bias row, a batched
    // gradient against its saved input): contiguous runs, no broadcast iterator.
    if let Some(v) = zip_contiguous(a, b, &f)? {
        return Ok(v);
    }
    if let Some(v) = zip_contiguous(b, a, |q, p| f(p, q))? {
        return Ok(v);
    }
    let shape = broadcast_shapes(op, a.shape(), b.shape())?;
    let bad = || Error::shapes(op, a.shape(), b.shape());
    let av = a.broadcast(IxDyn(&shape)).ok_or_else(bad)?;
    let bv = b.broadcast(IxDyn(&shape)).ok_or_else(bad)?;
    by_rows(op, &shape, |rows, out| {
        let rows: ndarray::Slice = rows.into();
        Zip::from(out)
            .and(av.slice_axis(Axis(0), rows))
            .and(bv.slice_axis(Axis(0), rows))
            .for_each(|o, &p, &q| {
                o.write(f(p, q));
            });
    })
}

/// Shortest repeated operand [`zip_tiled`] takes: shorter runs cost more in calls than
/// the broadcast iterator does.
const MIN_PERIOD: usize = 64;

/// `f(big[i], small[i % small.len()])`: `small` repeated along `big`, in contiguous
/// runs through [`fill2`].
fn zip_tiled<A, B, C, F>(big: &[A], small: &[B], f: &F) -> Result<Vec<C>>
where
    A: Copy + Send + Sync,
    B: Copy + Send + Sync,
    C: Send + Sync,
    F: Fn(A, B) -> C + Sync + Send,
{
    let period = small.len();
    collect_chunks(big.len(), |r, out| {
        let mut p = r.start;
        while p < r.end {
            let j = p % period;
            let len = (period - j).min(r.end - p);
            let o = p - r.start;
            fill2(
                &big[p..p + len],
                &small[j..j + len],
                &mut out[o..o + len],
                f,
            );
            p += len;
        }
    })
}

/// Applies `f` to three operands with broadcasting (used by `where`).
pub fn zip3<A, B, C, D, F>(
    op: &'static str,
    a: &ArcArray<A, IxDyn>,
    b: &ArcArray<B, IxDyn>,
    c: &ArcArray<C, IxDyn>,
    f: F,
) -> Result<ArrayD<D>>
where
    A: Copy + Send + Sync,
    B: Copy + Send + Sync,
    C: Copy + Send + Sync,
    D: Send + Sync + Copy,
    F: Fn(A, B, C) -> D + Sync + Send,
{
    let s = broadcast_shapes(op, a.shape(), b.shape())?;
    let s = broadcast_shapes(op, &s, c.shape())?;
    let bad = || Error::shapes(op, a.shape(), &s);
    let av = a.broadcast(IxDyn(&s)).ok_or_else(bad)?;
    let bv = b.broadcast(IxDyn(&s)).ok_or_else(bad)?;
    let cv = c.broadcast(IxDyn(&s)).ok_or_else(bad)?;
    let mut out = try_uninit::<D>(op, &s)?;
    Zip::from(&mut out)
        .and(&av)
        .and(&bv)
        .and(&cv)
        .for_each(|o, &p, &q, &r| {
            o.write(f(p, q, r));
        });
    // SAFETY: the zip wrote every element.
    Ok(unsafe { out.assume_init() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::ArrayD;

    fn arr(shape: &[usize], f: impl Fn(usize) -> f64) -> ArcArray<f64, IxDyn> {
        let n = shape.iter().product();
        ArrayD::from_shape_vec(IxDyn(shape), (0..n).map(f).collect())
            .unwrap()
            .into_shared()
    }

    #[test]
    fn zip_repeats_the_smaller_operand_over_leading_axes() {
        // Big enough for several parallel chunks whose boundaries cut the period.
        let big = arr(&[3, 41, 1013], |i| i as f64);
        let row = arr(&[41, 1013], |i| (i % 97) as f64 * 0.5);
        let want = |i: usize| i as f64 - ((i % (41 * 1013)) % 97) as f64 * 0.5;
        let got = zip("Sub", &big, &row, |p, q| p - q).unwrap();
        assert_eq!(got.shape(), &[3, 41, 1013]);
        assert!(got.iter().enumerate().all(|(i, &v)| v == want(i)));
        // Operands the other way round keep their order in `f`.
        let got = zip("Sub", &row, &big, |p, q| q - p).unwrap();
        assert!(got.iter().enumerate().all(|(i, &v)| v == want(i)));
        // A short period (a bias of a few channels, also with leading 1s) is repeated
        // into a longer one: every element still pairs with its own channel.
        for bias_shape in [&[7][..], &[1, 1, 7]] {
            let img = arr(&[5, 13, 7], |i| i as f64);
            let bias = arr(bias_shape, |i| 100.0 * i as f64);
            let got = zip("Add", &img, &bias, |p, q| p + q).unwrap();
            assert_eq!(got.shape(), &[5, 13, 7]);
            assert!(got
                .iter()
                .enumerate()
                .all(|(i, &v)| v == i as f64 + 100.0 * (i % 7) as f64));
        }
        // And the general broadcast (a middle axis) still works.
        let col = arr(&[3, 1, 1013], |i| i as f64);
        let got = zip("Add", &big, &col, |p, q| p + q).unwrap();
        assert_eq!(got[[2, 40, 5]], big[[2, 40, 5]] + col[[2, 0, 5]]);
    }
}
