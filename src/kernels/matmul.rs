//! Matrix products of 2-D blocks, and batches of them (broadcast batch axes).
//!
//! Floating-point and complex products run on views built from the ndarray strides,
//! through the `gemm` crate's kernels for big products and faer's for the rest (the
//! private `Kernel::choose` documents the measurements behind the choice; a big
//! product's column-major left operand is copied row-major for faer, which multiplies
//! that twice as fast).
//! Integer products use ndarray's generic `dot`. Big products run on the engine's pool,
//! one product at a time across threads; smaller ones run sequentially.

use ndarray::{Array2, ArrayD, ArrayView2, IxDyn, LinalgScalar};

use crate::broadcast::broadcast_shapes;
use crate::error::{Error, Result};
use num_complex::Complex;

/// Total work (`m * n * k` summed over the entries) from which a batch of small
/// products is spread over the pool, one entry per task.
pub const PAR_WORK: usize = 64 * 64 * 64;

/// Work (`m * n * k`) from which one product is split over both cores. Each split
/// wakes the pool's sleeping threads (an eager engine's ops come one at a time), which
/// a product below ~16M multiply-adds does not win back: measured from Python,
/// 784×256×64 `aᵀ@b` 166 µs on one core and 276 µs split (the MLP's first weight
/// gradient); 256³ 204 µs and 116 µs; 8192×64×64 591 µs and 268 µs (AVX-512).
/// On an AVX2-only core, which multiplies half as fast, splitting from 4M paid in a quiet
/// process (64×784 @ 784×256: 405 µs alone, 210 split; the 64×784 MLP step 1.5–1.8 →
/// 1.2–1.4 ms) but lost as soon as another process kept the second core busy: a split
/// product waits for its other half (the MLP step beside PyTorch's spinning OpenMP
/// threads, compare.py: 1.9–2.1 → 2.4–2.8 ms). So the threshold stays.
const PRODUCT_PAR_WORK: usize = 1 << 24;

/// Element types with a matrix-product kernel.
pub trait Gemm: LinalgScalar + Send + Sync {
    /// `out = a @ b` where `out` is `m x n` and may be any strided view.
    ///
    /// # Safety
    /// `a`, `b` must be valid for reads at every index of their shapes through their
    /// strides, `out` valid for writes and not aliasing them.
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemm(a: Raw<Self>, b: Raw<Self>, out: RawMut<Self>, m: usize, n: usize, k: usize);

    /// `out = a @ b`, or `out += a @ b` when `accumulate`, on the calling thread only:
    /// for kernels that already spread their own pieces of work over the pool.
    ///
    /// # Safety
    /// As [`Gemm::gemm`]; with `accumulate`, `out` must be initialized.
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemm_serial(
        a: Raw<Self>,
        b: Raw<Self>,
        out: RawMut<Self>,
        m: usize,
        n: usize,
        k: usize,
        accumulate: bool,
    );
}

/// A read-only strided 2-D block: pointer, row stride, column stride (elements).
#[derive(Clone, Copy)]
pub struct Raw<T> {
    pub ptr: *const T,
    pub rs: isize,
    pub cs: isize,
}

/// A writable strided 2-D block.
#[derive(Clone, Copy)]
pub struct RawMut<T> {
    pub ptr: *mut T,
    pub rs: isize,
    pub cs: isize,
}

impl<T> RawMut<T> {
    /// This block from its row `i` on.
    ///
    /// # Safety
    /// Row `i` must lie inside the allocation the block points into.
    pub unsafe fn from_row(self, i: usize) -> Self {
        // SAFETY: the caller's contract.
        unsafe { self.from(i, 0) }
    }

    /// This block from row `i`, column `j` on.
    ///
    /// # Safety
    /// Element `(i, j)` must lie inside the allocation the block points into.
    unsafe fn from(self, i: usize, j: usize) -> Self {
        RawMut {
            // SAFETY: the caller's contract.
            ptr: unsafe { self.ptr.offset(i as isize * self.rs + j as isize * self.cs) },
            ..self
        }
    }
}

// SAFETY: the raw blocks are only handed between threads for reads of data the
// caller keeps alive and for disjoint writes (the `Gemm` contract); they are plain
// pointers plus strides, like `&[T]` / `&mut [T]` pieces.
unsafe impl<T: Send> Send for Raw<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Raw<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for RawMut<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for RawMut<T> {}

impl<T> Raw<T> {
    pub fn of(v: &ArrayView2<'_, T>) -> Self {
        let s = v.strides();
        Raw {
            ptr: v.as_ptr(),
            rs: s[0],
            cs: s[1],
        }
    }
    /// A row-major block with rows of `cols` elements.
    pub fn row_major(ptr: *const T, cols: usize) -> Self {
        Raw {
            ptr,
            rs: cols as isize,
            cs: 1,
        }
    }
    /// The element at row `i`, column `j`.
    ///
    /// # Safety
    /// `(i, j)` must be inside the block the pointer and strides describe.
    #[inline(always)]
    unsafe fn read(self, i: usize, j: usize) -> T
    where
        T: Copy,
    {
        // SAFETY: the caller's contract.
        unsafe { *self.ptr.offset(i as isize * self.rs + j as isize * self.cs) }
    }
    /// This block from row `i`, column `j` on.
    ///
    /// # Safety
    /// Element `(i, j)` must lie inside the allocation the block points into.
    unsafe fn from(self, i: usize, j: usize) -> Self {
        Raw {
            // SAFETY: the caller's contract.
            ptr: unsafe { self.ptr.offset(i as isize * self.rs + j as isize * self.cs) },
            ..self
        }
    }
    /// This block with rows and columns swapped.
    pub fn t(self) -> Self {
        Raw {
            ptr: self.ptr,
            rs: self.cs,
            cs: self.rs,
        }
    }
}

macro_rules! float_gemm {
    ($($t:ty),*) => {$(
        impl Gemm for $t {
            unsafe fn gemm(a: Raw<Self>, b: Raw<Self>, out: RawMut<Self>, m: usize, n: usize, k: usize) {
                if m == 0 || n == 0 {
                    return;
                }
                if k == 0 {
                    // SAFETY: `out` is valid for writes at every index of m x n (the
                    // caller's contract).
                    let mut dst = unsafe { faer::MatMut::from_raw_parts_mut(out.ptr, m, n, out.rs, out.cs) };
                    dst.fill(<$t as num_traits::Zero>::zero());
                    return;
                }
                match Kernel::choose(b, out, m, n, k) {
                    // SAFETY: the caller's contract, and m, n, k > 0 (checked above).
                    Kernel::Gemm => unsafe { gemm_crate(a, b, out, m, n, k) },
                    // SAFETY: as above.
                    Kernel::Faer => unsafe { faer_gemm(a, b, out, m, n, k) },
                }
            }

            unsafe fn gemm_serial(
                a: Raw<Self>,
                b: Raw<Self>,
                out: RawMut<Self>,
                m: usize,
                n: usize,
                k: usize,
                accumulate: bool,
            ) {
                if m == 0 || n == 0 {
                    return;
                }
                let accum = if accumulate { faer::Accum::Add } else { faer::Accum::Replace };
                // SAFETY: the caller's contract.
                unsafe { faer_product(a, b, out, m, n, k, accum, faer::Par::Seq) }
            }
        }
    )*};
}
float_gemm!(f32, f64, Complex<f32>, Complex<f64>);

/// Which library multiplies a floating-point product.
///
/// Measured on AVX-512 (2 cores, f32, row-major output; GFLOP/s):
/// - big products: the `gemm` crate's kernels are faster in every layout
///   (1024²: 303 / 258 / 276 for `a@b`, `a@bᵀ`, `aᵀ@b` against faer's 269 / 269 / 163;
///   2048²: 293–317 against 250 / 199–250 / 120–160);
/// - products with few output rows (a batch of 64 times a weight matrix) and products
///   with a column-major right operand below ~1024³: faer's are (64×256×784 `a@bᵀ`:
///   144 against 113; 128×1024×1024 `a@bᵀ`: 203 against 120);
/// - below [`GEMM_WORK`] the two are close, and the `gemm` crate allocates its packing
///   buffers (about 1 MiB) from the heap on every call: freeing them raises glibc's
///   mmap threshold, after which a deep net's activations fragment the heap (a 50-layer
///   512-wide MLP at batch 256 peaked at 59.6 MiB instead of 52.1, and kept 50–80 MiB
///   after its tape was deleted). faer's kernels take those products.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kernel {
    Gemm,
    Faer,
}

impl Kernel {
    fn choose<T>(b: Raw<T>, out: RawMut<T>, m: usize, n: usize, k: usize) -> Kernel {
        let row_major_out = out.cs == 1;
        let column_major_b = b.rs == 1 && b.cs != 1;
        let work = m.saturating_mul(n).saturating_mul(k);
        if row_major_out && m >= 128 && work >= GEMM_WORK && (!column_major_b || work >= 1 << 30) {
            Kernel::Gemm
        } else {
            Kernel::Faer
        }
    }
}

/// Work (`m * n * k`) from which the `gemm` crate's kernels may take a product.
const GEMM_WORK: usize = 1 << 27;

/// `out = a @ b` with the `gemm` crate.
///
/// # Safety
/// As [`Gemm::gemm`], with `m, n, k > 0`.
unsafe fn gemm_crate<T>(a: Raw<T>, b: Raw<T>, out: RawMut<T>, m: usize, n: usize, k: usize)
where
    T: num_traits::Zero + num_traits::One + Send + Sync + 'static,
{
    let work = m.saturating_mul(n).saturating_mul(k);
    let run = move |par| {
        // The whole blocks move in (they are `Send`), not their raw pointer fields.
        let (a, b, out) = (a, b, out);
        // SAFETY: the caller's contract; `read_dst = false` overwrites `out` (`beta = 1`
        // scales the product, `alpha` is ignored).
        unsafe {
            gemm::gemm(
                m,
                n,
                k,
                out.ptr,
                out.cs,
                out.rs,
                false,
                a.ptr,
                a.cs,
                a.rs,
                b.ptr,
                b.cs,
                b.rs,
                T::zero(),
                T::one(),
                false,
                false,
                false,
                par,
            )
        }
    };
    match ParallelSlot::claim(work, PRODUCT_PAR_WORK) {
        Some(_slot) => crate::pool::install(|threads| run(threads.gemm())),
        None => run(gemm::Parallelism::None),
    }
}

/// `out = a @ b` with faer.
///
/// # Safety
/// As [`Gemm::gemm`], with `m, n, k > 0`.
unsafe fn faer_gemm<T>(a: Raw<T>, b: Raw<T>, out: RawMut<T>, m: usize, n: usize, k: usize)
where
    T: faer::traits::ComplexField + num_traits::One + Copy + Send + Sync,
{
    let work = m.saturating_mul(n).saturating_mul(k);
    // faer writing a row-major output is about twice as fast when the left operand is
    // row-major too (measured: a.T @ b at 1024², 136 vs 258 GFLOP/s); for a big
    // product a transposed copy of it pays.
    // An optimization only: when the system refuses the copy's memory, the product
    // reads `a` where it is.
    let copy;
    let a = match (a.cs != 1 && work >= RELAYOUT_WORK && out.cs == 1)
        // SAFETY: the caller's contract.
        .then(|| unsafe { row_major_copy(a, m, k) })
        .flatten()
    {
        Some(c) => {
            copy = c;
            Raw {
                ptr: copy.as_ptr(),
                rs: k as isize,
                cs: 1,
            }
        }
        None => a,
    };
    if (KEPT_PRODUCT_WORK..PRODUCT_PAR_WORK).contains(&work) && crate::pool::kept() {
        // SAFETY: the caller's contract (after the copy, `a` is the copy's block).
        unsafe { kept_product(a, b, out, m, n, k) };
        return;
    }
    // Splitting a product with few output rows over the cores pays only when it is wide
    // (64×256×784: 179 µs alone, 203 µs split; 64×1024×1024: 1224 µs alone, 737 split).
    let par_work = if m >= 128 || n >= 512 {
        PRODUCT_PAR_WORK
    } else {
        usize::MAX
    };
    let run = move |par| {
        // The whole blocks move in (they are `Send`), not their raw pointer fields.
        let (a, b, out) = (a, b, out);
        // SAFETY: the caller's contract.
        unsafe { faer_product(a, b, out, m, n, k, faer::Accum::Replace, par) }
    };
    match ParallelSlot::claim(work, par_work) {
        Some(_slot) => crate::pool::install(|threads| run(threads.faer())),
        None => run(faer::Par::Seq),
    }
}

/// Work (`m * n * k`) from which a product in a long call with a kept pool thread (a
/// graph run, see `pool::long_call`) is shared with it. The kept thread is awake, so
/// there is no wake-up to win back. Measured on the 2-core AVX2 machine, each product as
/// a one-op traced function called in a loop: `x @ W1` (64×784 @ 784×256) 320 → 197 µs
/// against the same eager op, its weight gradient `xᵀ @ dy` 350 → 245 µs; with another
/// process spinning on the second core, 323 → 303 µs (the caller took the blocks).
const KEPT_PRODUCT_WORK: usize = 1 << 21;

/// Multiply-adds per block of a shared product: about 100 µs on one core, so a block
/// the kept thread has started and then lost its core to another process holds the
/// caller up briefly, and few enough blocks that packing each block's operands costs
/// little (blocks of 1M took `x @ W1` above to 285 µs instead of 197).
const KEPT_BLOCK_WORK: usize = 1 << 22;

/// `out = a @ b` in blocks of output rows or columns (along the longer side), shared
/// between the calling thread and the kept pool thread (`pool::tasks`).
///
/// # Safety
/// As [`Gemm::gemm`], with `m, n, k > 0`.
unsafe fn kept_product<T>(a: Raw<T>, b: Raw<T>, out: RawMut<T>, m: usize, n: usize, k: usize)
where
    T: faer::traits::ComplexField + num_traits::One + Copy + Send + Sync,
{
    // Sides cut at multiples of 16, a multiple of every kernel's register block.
    let long = m.max(n);
    let blocks = (m * n * k / KEPT_BLOCK_WORK)
        .clamp(2, 8)
        .min(long.div_ceil(16));
    let step = long.div_ceil(blocks).next_multiple_of(16);
    crate::pool::tasks(long.div_ceil(step), |i| {
        let (a, b, out) = (a, b, out);
        let start = i * step;
        let len = step.min(long - start);
        // SAFETY: block `i` is rows (or columns) [start, start + len) of `out`, written
        // by this task alone, and the matching rows of `a` (columns of `b`); the
        // caller's contract covers the rest.
        unsafe {
            let (a, b, out, rows, cols) = if m >= n {
                (a.from(start, 0), b, out.from(start, 0), len, n)
            } else {
                (a, b.from(0, start), out.from(0, start), m, len)
            };
            faer_product(
                a,
                b,
                out,
                rows,
                cols,
                k,
                faer::Accum::Replace,
                faer::Par::Seq,
            )
        }
    });
}

/// `out = a @ b`, or `out += a @ b` with [`faer::Accum::Add`], by faer's kernels at
/// parallelism `par`.
///
/// # Safety
/// As [`Gemm::gemm`].
#[allow(clippy::too_many_arguments)]
unsafe fn faer_product<T>(
    a: Raw<T>,
    b: Raw<T>,
    out: RawMut<T>,
    m: usize,
    n: usize,
    k: usize,
    accum: faer::Accum,
    par: faer::Par,
) where
    T: faer::traits::ComplexField + num_traits::One,
{
    // SAFETY: the caller's contract.
    let (dst, lhs, rhs) = unsafe {
        (
            faer::MatMut::from_raw_parts_mut(out.ptr, m, n, out.rs, out.cs),
            faer::MatRef::from_raw_parts(a.ptr, m, k, a.rs, a.cs),
            faer::MatRef::from_raw_parts(b.ptr, k, n, b.rs, b.cs),
        )
    };
    faer::linalg::matmul::matmul(dst, accum, lhs, rhs, T::one(), par)
}

/// Work (`m * n * k`) from which a column-major left operand is copied row-major.
const RELAYOUT_WORK: usize = 128 * 128 * 128;

/// The `m x k` block `a` copied into a row-major `Vec`, tile by tile (both the reads
/// and the writes stay within a few cache lines per tile), bands of rows in parallel;
/// `None` when the system refuses the memory.
///
/// # Safety
/// `a` must be valid for reads at every index of `m x k` through its strides.
unsafe fn row_major_copy<T: Copy + Send + Sync>(a: Raw<T>, m: usize, k: usize) -> Option<Vec<T>> {
    const TILE: usize = 32;
    // `a` exists, so `m * k` elements fit in memory's address space.
    let mut v: Vec<T> = crate::size::try_vec("MatMul", m * k).ok()?;
    let out = &mut v.spare_capacity_mut()[..m * k];
    let band = |i0: usize, rows: &mut [std::mem::MaybeUninit<T>]| {
        let m_band = rows.len() / k.max(1);
        for p0 in (0..k).step_by(TILE) {
            for p in p0..(p0 + TILE).min(k) {
                for i in 0..m_band {
                    // SAFETY: (i0 + i, p) is inside the block (the caller's contract).
                    let x = unsafe { a.read(i0 + i, p) };
                    rows[i * k + p].write(x);
                }
            }
        }
    };
    if k > 0 {
        crate::pool::pieces(out, TILE * k, |b, rows| band(b * TILE, rows));
    }
    // SAFETY: the bands cover every (i, p) of the m x k block.
    unsafe { v.set_len(m * k) };
    Some(v)
}

/// Integer products: a plain loop over the raw blocks (their strides may be negative:
/// `x[::-1] @ y`), wrapping on overflow as TF's integer kernels do.
macro_rules! int_gemm {
    ($($t:ty),*) => {$(
        impl Gemm for $t {
            unsafe fn gemm(a: Raw<Self>, b: Raw<Self>, out: RawMut<Self>, m: usize, n: usize, k: usize) {
                // SAFETY: the caller's contract.
                unsafe { Self::gemm_serial(a, b, out, m, n, k, false) }
            }

            unsafe fn gemm_serial(
                a: Raw<Self>,
                b: Raw<Self>,
                out: RawMut<Self>,
                m: usize,
                n: usize,
                k: usize,
                accumulate: bool,
            ) {
                // Row i of the output accumulates a[i, p] * row p of b: rows are read
                // along their stride, whatever the layout.
                let at = |i: usize, j: usize| out.ptr.wrapping_offset(i as isize * out.rs + j as isize * out.cs);
                for i in 0..m {
                    if !accumulate {
                        for j in 0..n {
                            // SAFETY: (i, j) lies inside the m x n output block (the
                            // caller's contract), which may be uninitialized: written first.
                            unsafe { at(i, j).write(0) };
                        }
                    }
                    for p in 0..k {
                        // SAFETY: (i, p) lies inside the m x k block.
                        let x = unsafe { a.read(i, p) };
                        for j in 0..n {
                            // SAFETY: (p, j) lies inside the k x n block, (i, j) inside
                            // the output, written above.
                            unsafe { *at(i, j) = (*at(i, j)).wrapping_add(x.wrapping_mul(b.read(p, j))) };
                        }
                    }
                }
            }
        }
    )*};
}
int_gemm!(i32, i64);

/// Products running on the pool right now, across threads.
static PARALLEL_GEMMS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The pool, claimed for one product while it runs. Big products use the pool, but
/// only one at a time: when another thread's product already occupies it (two Python
/// threads training their own models, say), this one runs on its own thread instead of
/// queueing behind it, so both cores stay busy.
struct ParallelSlot(());

impl ParallelSlot {
    /// Claims the pool for a product of `work` multiply-adds when it reaches
    /// `threshold`; `None`: run it on this thread.
    fn claim(work: usize, threshold: usize) -> Option<ParallelSlot> {
        use std::sync::atomic::Ordering;
        (work >= threshold
            && !crate::pool::in_worker()
            && crate::pool::threads() > 1
            && PARALLEL_GEMMS
                .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok())
        .then_some(ParallelSlot(()))
    }
}

/// In a forked child: a product another thread of the parent was running when it
/// forked does not exist here; the pool is free.
pub(crate) fn fork_child() {
    PARALLEL_GEMMS.store(0, std::sync::atomic::Ordering::Release);
}

impl Drop for ParallelSlot {
    fn drop(&mut self) {
        PARALLEL_GEMMS.store(0, std::sync::atomic::Ordering::Release);
    }
}

/// `a @ b` for 2-D views (with optional transposes applied through views).
/// `a`'s columns must match `b`'s rows; `ResourceExhausted` when the output is too
/// large to hold.
pub fn matmul2<T: Gemm>(a: ArrayView2<'_, T>, b: ArrayView2<'_, T>) -> Result<Array2<T>> {
    let (m, k) = a.dim();
    let n = b.dim().1;
    if k != b.dim().0 {
        return Err(Error::invalid(
            "MatMul",
            format!(
                "Matrix size-incompatible: In[0]: {:?}, In[1]: {:?}",
                a.shape(),
                b.shape()
            ),
        ));
    }
    // Left uninitialized: the product overwrites every element.
    let mut out = crate::size::try_uninit::<T>("MatMul", &[m, n])?
        .into_dimensionality::<ndarray::Ix2>()
        .map_err(|e| Error::Internal(format!("MatMul: {e}")))?;
    super::advise_huge_pages(out.as_mut_ptr().cast(), m * n * std::mem::size_of::<T>());
    let o = RawMut {
        ptr: out.as_mut_ptr().cast::<T>(),
        rs: n as isize,
        cs: 1,
    };
    // SAFETY: the views are valid for their shapes; `out` is a fresh (m, n) array,
    // which `gemm` writes in full (zeros when `k == 0`).
    unsafe {
        T::gemm(Raw::of(&a), Raw::of(&b), o, m, n, k);
        Ok(out.assume_init())
    }
}

/// Matrix product of the last two axes of `a` and `b` (`ta`, `tb`: of an operand's
/// transpose), batch axes broadcast. Ranks and inner sizes are checked here (errors
/// name `MatMul`); batch entries are read in place, whatever the operands' layout.
pub fn batched_matmul<T: Gemm>(
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
    // The mirror case: one matrix `a` times a batched, contiguous `b` (the gradient of
    // a matrix-vector or matrix product for a jacobian's batch of seeds). The batch
    // becomes columns of one GEMM: for vectors (`n == 1`) `out = B aᵀ` with `B` the
    // `[nb, k]` rows of `b`, read in place; otherwise `a [b_1 … b_nb]`, one copy of `b`
    // and of the output to move the batch next to the columns.
    if ra == 2 && rb > 2 && b.is_standard_layout() && nb > 0 && m > 0 && n > 0 {
        let av = a
            .view()
            .into_dimensionality::<ndarray::Ix2>()
            .expect("rank 2");
        let av = if ta { av.reversed_axes() } else { av };
        if n == 1 {
            let b2 = b
                .view()
                .into_shape_with_order((nb, ka))
                .expect("contiguous, same size");
            return matmul2(b2, av.reversed_axes())?
                .into_shape_with_order(IxDyn(&shape))
                .map_err(|e| Error::Internal(format!("MatMul: {e}")));
        }
        // `[nb, k, n]` (or `[nb, n, k]` when transposed) → `[k, nb * n]`.
        let cols = if tb {
            b.view()
                .into_shape_with_order((nb, n, ka))
                .expect("contiguous, same size")
                .permuted_axes([2, 0, 1])
        } else {
            b.view()
                .into_shape_with_order((nb, ka, n))
                .expect("contiguous, same size")
                .permuted_axes([1, 0, 2])
        };
        let cols = cols.as_standard_layout();
        let cols = cols
            .view()
            .into_shape_with_order((ka, nb * n))
            .expect("standard layout");
        let prod = matmul2(av, cols)?
            .into_shape_with_order((m, nb, n))
            .map_err(|e| Error::Internal(format!("MatMul: {e}")))?;
        return prod
            .permuted_axes([1, 0, 2])
            .as_standard_layout()
            .into_owned()
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
    if work < PAR_WORK && work.saturating_mul(nb) >= PAR_WORK {
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

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, Array2};

    fn naive(a: &Array2<f64>, b: &Array2<f64>) -> Array2<f64> {
        let (m, k) = a.dim();
        let n = b.dim().1;
        Array2::from_shape_fn((m, n), |(i, j)| (0..k).map(|p| a[[i, p]] * b[[p, j]]).sum())
    }

    #[test]
    fn small_and_transposed() {
        let a = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let b = array![[1.0, 0.0], [0.0, 1.0], [2.0, -1.0]];
        assert_eq!(
            matmul2(a.view(), b.view()).unwrap(),
            array![[7.0, -1.0], [16.0, -1.0]]
        );
        // aᵀ through a reversed view: (3x2) @ (2x3)
        let at = a.t();
        let r = matmul2(at, a.view()).unwrap();
        assert_eq!(r, naive(&at.to_owned(), &a));
        // empty inner dimension gives zeros
        let e = Array2::<f64>::zeros((2, 0));
        let f = Array2::<f64>::zeros((0, 3));
        assert_eq!(
            matmul2(e.view(), f.view()).unwrap(),
            Array2::<f64>::zeros((2, 3))
        );
    }

    #[test]
    fn large_parallel_matches_naive() {
        let n = 70;
        let a = Array2::from_shape_fn((n, n + 3), |(i, j)| ((i * 7 + j * 3) % 11) as f64 - 5.0);
        let b = Array2::from_shape_fn((n + 3, n - 1), |(i, j)| ((i * 5 + j) % 13) as f64 * 0.5);
        let r = matmul2(a.view(), b.view()).unwrap();
        let want = naive(&a, &b);
        for (x, y) in r.iter().zip(want.iter()) {
            assert!((x - y).abs() < 1e-9);
        }
        // strided (every other column) view
        let s = b.slice(ndarray::s![.., ..;2]);
        let r = matmul2(a.view(), s).unwrap();
        assert_eq!(r, naive(&a, &s.to_owned()));
    }

    #[test]
    fn big_products_with_a_transposed_left_operand() {
        // Above RELAYOUT_WORK the column-major left operand is copied row-major first.
        let (m, k, n) = (150, 131, 140);
        let a = Array2::from_shape_fn((k, m), |(i, j)| ((i * 7 + j * 3) % 11) as f64 - 5.0);
        let b = Array2::from_shape_fn((k, n), |(i, j)| ((i * 5 + j) % 13) as f64 * 0.5);
        assert!(m * n * k >= RELAYOUT_WORK);
        let r = matmul2(a.t(), b.view()).unwrap();
        assert_eq!(r, naive(&a.t().to_owned(), &b));
    }

    #[test]
    fn products_cut_into_blocks_match_naive() {
        // Cut along the columns (few rows, as a batch times a weight matrix), along the
        // rows, with a short last block, and with a transposed left operand (copied
        // row-major first).
        for (m, n, k, transposed) in [
            (64, 256, 160, false),
            (300, 40, 200, false),
            (100, 37, 600, false),
            (170, 64, 200, true),
        ] {
            assert!(m * n * k >= KEPT_PRODUCT_WORK && m * n * k < PRODUCT_PAR_WORK);
            let a = Array2::from_shape_fn((m, k), |(i, j)| ((i * 7 + j * 3) % 11) as f64 - 5.0);
            let a = if transposed {
                a.t().as_standard_layout().t().to_owned()
            } else {
                a
            };
            let b = Array2::from_shape_fn((k, n), |(i, j)| ((i * 5 + j) % 13) as f64 * 0.5);
            let want = naive(&a, &b);
            // Directly (the pool's threads woken for the blocks), and as a long call's
            // product (a kept thread's, when this test gets one).
            let mut out = Array2::<f64>::zeros((m, n));
            let o = RawMut {
                ptr: out.as_mut_ptr(),
                rs: n as isize,
                cs: 1,
            };
            // SAFETY: valid views; `out` is a fresh (m, n) array; m, n, k > 0.
            unsafe { kept_product(Raw::of(&a.view()), Raw::of(&b.view()), o, m, n, k) };
            assert_eq!(out, want, "{m}x{n}x{k}");
            let r = crate::pool::long_call(|| matmul2(a.view(), b.view()).unwrap());
            assert_eq!(r, want, "{m}x{n}x{k} in a long call");
        }
    }

    /// `a @ b` through one kernel, into a fresh row-major array.
    fn with<T>(kernel: Kernel, a: ArrayView2<'_, T>, b: ArrayView2<'_, T>) -> Array2<T>
    where
        T: Gemm + faer::traits::ComplexField + 'static,
    {
        let (m, k) = a.dim();
        let n = b.dim().1;
        let mut out = Array2::<T>::zeros((m, n));
        let o = RawMut {
            ptr: out.as_mut_ptr(),
            rs: n as isize,
            cs: 1,
        };
        // SAFETY: valid views; `out` is a fresh (m, n) array; m, n, k > 0.
        unsafe {
            match kernel {
                Kernel::Gemm => gemm_crate(Raw::of(&a), Raw::of(&b), o, m, n, k),
                Kernel::Faer => faer_gemm(Raw::of(&a), Raw::of(&b), o, m, n, k),
            }
        }
        out
    }

    #[test]
    fn both_kernels_in_every_layout() {
        // Every layout of both operands gives the same product through either library.
        for (m, k, n) in [(150, 70, 90), (40, 130, 60)] {
            let a = Array2::from_shape_fn((m, k), |(i, j)| ((i * 7 + j * 3) % 11) as f64 - 5.0);
            let b = Array2::from_shape_fn((k, n), |(i, j)| ((i * 5 + j) % 13) as f64 * 0.5);
            let want = naive(&a, &b);
            let (at, bt) = (a.t().to_owned(), b.t().to_owned());
            for (av, bv) in [
                (a.view(), b.view()),
                (at.t(), b.view()),
                (a.view(), bt.t()),
                (at.t(), bt.t()),
            ] {
                for kernel in [Kernel::Gemm, Kernel::Faer] {
                    assert_eq!(with(kernel, av, bv), want);
                    let (a32, b32) = (av.mapv(|x| x as f32), bv.mapv(|x| x as f32));
                    assert_eq!(
                        with(kernel, a32.view(), b32.view()),
                        want.mapv(|x| x as f32)
                    );
                    let (ac, bc) = (
                        av.mapv(|x| Complex::new(x, -x)),
                        bv.mapv(|x| Complex::new(0.5, x)),
                    );
                    let wc = Array2::from_shape_fn((m, n), |(i, j)| {
                        (0..k)
                            .map(|p| ac[[i, p]] * bc[[p, j]])
                            .sum::<Complex<f64>>()
                    });
                    assert_eq!(with(kernel, ac.view(), bc.view()), wc);
                }
            }
            let e = Array2::<f32>::zeros((m, 0));
            let f = Array2::<f32>::zeros((0, n));
            assert_eq!(
                matmul2(e.view(), f.view()).unwrap(),
                Array2::<f32>::zeros((m, n))
            );
        }
    }

    #[test]
    fn kernel_choice() {
        let out = |n: usize| RawMut::<f32> {
            ptr: std::ptr::null_mut(),
            rs: n as isize,
            cs: 1,
        };
        let row_major = |n: usize| Raw::<f32> {
            ptr: std::ptr::null(),
            rs: n as isize,
            cs: 1,
        };
        let column_major = |k: usize| Raw::<f32> {
            ptr: std::ptr::null(),
            rs: 1,
            cs: k as isize,
        };
        let choose = |b, m: usize, n: usize, k: usize| Kernel::choose(b, out(n), m, n, k);
        // Big: gemm, whatever b's layout from ~1024³.
        assert_eq!(choose(row_major(1024), 1024, 1024, 1024), Kernel::Gemm);
        assert_eq!(choose(column_major(1024), 1024, 1024, 1024), Kernel::Gemm);
        assert_eq!(choose(row_major(512), 512, 512, 512), Kernel::Gemm);
        // Column-major b below 1024³, few output rows, or mid-sized: faer.
        assert_eq!(choose(column_major(512), 512, 512, 512), Kernel::Faer);
        assert_eq!(choose(row_major(4096), 64, 4096, 4096), Kernel::Faer);
        assert_eq!(choose(row_major(512), 256, 512, 512), Kernel::Faer);
    }

    #[test]
    fn integers_and_complex() {
        let a = array![[1i32, 2], [3, 4]];
        assert_eq!(
            matmul2(a.view(), a.view()).unwrap(),
            array![[7, 10], [15, 22]]
        );
        let c = array![[Complex::new(0.0f32, 1.0)]];
        assert_eq!(
            matmul2(c.view(), c.view()).unwrap()[[0, 0]],
            Complex::new(-1.0, 0.0)
        );
        // Negative strides (a reversed view, as `x[::-1] @ y` gives) and a mismatched
        // inner dimension, which is an error rather than an out-of-bounds read.
        let x = array![[1i64, 2, 3], [4, 5, 6]];
        let y = array![[1i64, 0], [0, 1], [2, -1]];
        let r = matmul2(
            x.slice(ndarray::s![..;-1, ..;-1]),
            y.slice(ndarray::s![..;-1, ..]),
        )
        .unwrap();
        assert_eq!(
            r,
            // [[6, 5, 4], [3, 2, 1]] @ [[2, -1], [0, 1], [1, 0]]
            array![[16, -1], [7, -1]]
        );
        assert_eq!(
            matmul2(array![[i32::MAX]].view(), array![[2]].view()).unwrap(),
            array![[-2]]
        );
        assert!(matmul2(x.view(), x.view()).is_err());
    }
}
