//! Convolution and pooling kernels over NHWC (NDHWC) data: no tapes, no Python.
//!
//! A 2-D or 3-D convolution is `im2col` (each output pixel's receptive field laid out as
//! one row, zeros where the window reaches into the padding) followed by one matrix
//! product with the `[kd*kh*kw*c, o]` filter, through the matmul kernels (a 2-D one has
//! a depth of 1). Its two backprops are the
//! transposed products: the input gradient multiplies by the filter's transpose and
//! scatters the rows back (`col2im`), the filter gradient is `im2colᵀ @ dy`. A batch of
//! small images does all three a few images at a time (see the private `Chunks`), each
//! chunk's rows built and multiplied on one thread while they sit in its cache. Depthwise
//! convolutions (one filter bank per input channel) use the same rows with small per
//! channel products written as loops.
//!
//! Pooling works on 1 to 3 spatial axes as 3 (missing ones of size 1). Max pooling's
//! gradient goes to the first maximum of each window in scan order (depth, then rows,
//! then columns), as TF's CPU `MaxPoolGrad`; average pooling divides by the number of
//! window elements inside the input (padding is not counted), as TF's.
//!
//! Images are independent, so work is spread over the pool one group of images at a
//! time once an op is larger than [`PAR_WORK`].

use ndarray::{ArrayD, ArrayView2, IxDyn};
use num_traits::Float;

use std::mem::MaybeUninit;

use super::matmul::{matmul2, Gemm, Raw, RawMut};
use crate::error::{Error, Result};

/// Multiply-adds (or element visits) from which a kernel runs on the pool.
pub const PAR_WORK: usize = 1 << 16;

/// The shape arithmetic of one 2-D or 3-D convolution (NHWC / NDHWC input, HWIO /
/// DHWIO filter). A 2-D convolution is a 3-D one of depth 1 (`d`, `kd`, `od` 1, no
/// depth padding) that keeps its 4-D shapes (`sp == 2`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvGeom {
    /// Spatial axes of the shapes (2 or 3).
    pub sp: usize,
    pub n: usize,
    pub d: usize,
    pub h: usize,
    pub w: usize,
    pub c: usize,
    pub kd: usize,
    pub kh: usize,
    pub kw: usize,
    /// Output channels (depthwise: the channel multiplier).
    pub o: usize,
    pub sd: usize,
    pub sh: usize,
    pub sw: usize,
    pub dd: usize,
    pub dh: usize,
    pub dw: usize,
    /// Padding before the first plane / row / column.
    pub pf: usize,
    pub pt: usize,
    pub pl: usize,
    pub od: usize,
    pub oh: usize,
    pub ow: usize,
    /// One filter bank per input channel (`DepthwiseConv2dNative`).
    pub depthwise: bool,
}

impl ConvGeom {
    /// `[n, (d,) h, w, c]`-style shape from its full 3-D form, the depth dropped in 2-D.
    fn shape_of(&self, full: [usize; 5]) -> Vec<usize> {
        if self.sp == 3 {
            full.to_vec()
        } else {
            vec![full[0], full[2], full[3], full[4]]
        }
    }
    pub fn input_shape(&self) -> Vec<usize> {
        self.shape_of([self.n, self.d, self.h, self.w, self.c])
    }
    pub fn filter_shape(&self) -> Vec<usize> {
        let full = [self.kd, self.kh, self.kw, self.c, self.o];
        full[5 - (self.sp + 2)..].to_vec()
    }
    pub fn out_channels(&self) -> usize {
        if self.depthwise {
            self.c * self.o
        } else {
            self.o
        }
    }
    pub fn output_shape(&self) -> Vec<usize> {
        self.shape_of([self.n, self.od, self.oh, self.ow, self.out_channels()])
    }
    /// Output pixels of one image.
    fn out_pixels(&self) -> usize {
        self.od * self.oh * self.ow
    }
    /// Input elements of one image.
    fn in_image(&self) -> usize {
        self.d * self.h * self.w * self.c
    }
    /// Window taps.
    fn taps(&self) -> usize {
        self.kd * self.kh * self.kw
    }
    /// Columns of an im2col row.
    fn k(&self) -> usize {
        self.taps() * self.c
    }
    /// Whether the im2col rows are the input itself (1×1 filter, stride 1, no padding).
    fn identity_cols(&self) -> bool {
        self.taps() == 1
            && self.sd == 1
            && self.sh == 1
            && self.sw == 1
            && self.pf == 0
            && self.pt == 0
            && self.pl == 0
            && self.od == self.d
            && self.oh == self.h
            && self.ow == self.w
    }
    /// `f(o, src)` for each window row (an output pixel's taps of one `kz`, `ky`) of
    /// one image, in scan order, when the width is not dilated (`dw == 1`): `o` is the
    /// offset of the row's first tap in the image's im2col rows, and `src` is
    /// `Some((px, a, b))` when taps `a..b` of the row read the input, as one run of
    /// `(b - a) * c` elements from offset `px` of the image (the other taps are
    /// padding), `None` when the whole row is padding.
    #[inline(always)]
    fn each_row_run(&self, mut f: impl FnMut(usize, Option<(usize, usize, usize)>)) {
        let (run, mut o) = (self.kw * self.c, 0);
        let inside = |o: usize, k: usize, s: usize, dil: usize, pad: usize, len: usize| {
            (o * s + k * dil).checked_sub(pad).filter(|&i| i < len)
        };
        for oz in 0..self.od {
            for oy in 0..self.oh {
                for ox in 0..self.ow {
                    // Taps a..b of a row read columns x0 + a..x0 + b (x0 = ox*sw - pl).
                    let x0 = (ox * self.sw) as isize - self.pl as isize;
                    let a = (-x0).clamp(0, self.kw as isize) as usize;
                    let b = (self.w as isize - x0).clamp(a as isize, self.kw as isize) as usize;
                    for kz in 0..self.kd {
                        let z = inside(oz, kz, self.sd, self.dd, self.pf, self.d);
                        for ky in 0..self.kh {
                            let y = inside(oy, ky, self.sh, self.dh, self.pt, self.h);
                            let src = match (z, y) {
                                (Some(z), Some(y)) if a < b => {
                                    let x = (x0 + a as isize) as usize;
                                    Some((((z * self.h + y) * self.w + x) * self.c, a, b))
                                }
                                _ => None,
                            };
                            f(o, src);
                            o += run;
                        }
                    }
                }
            }
        }
    }
    /// `f(output pixel, tap, input pixel)` for each window tap of each output pixel of
    /// one image that reads the input (not the padding), in scan order. Pixels are
    /// indices within the image (`(z * h + y) * w + x`), taps within the window.
    #[inline(always)]
    fn each_tap(&self, mut f: impl FnMut(usize, usize, usize)) {
        let axis = |o: usize, k: usize, s: usize, dil: usize, pad: usize, len: usize| {
            (o * s + k * dil).checked_sub(pad).filter(|&i| i < len)
        };
        let mut p = 0;
        for oz in 0..self.od {
            for oy in 0..self.oh {
                for ox in 0..self.ow {
                    let mut t = 0;
                    for kz in 0..self.kd {
                        let z = axis(oz, kz, self.sd, self.dd, self.pf, self.d);
                        for ky in 0..self.kh {
                            let y = axis(oy, ky, self.sh, self.dh, self.pt, self.h);
                            for kx in 0..self.kw {
                                let x = axis(ox, kx, self.sw, self.dw, self.pl, self.w);
                                if let (Some(z), Some(y), Some(x)) = (z, y, x) {
                                    f(p, t, (z * self.h + y) * self.w + x);
                                }
                                t += 1;
                            }
                        }
                    }
                    p += 1;
                }
            }
        }
    }
}

/// `f(image, piece)` over `out` cut into `per`-element pieces, one per image; on the
/// pool (several images per task) when `work` is large.
fn per_image<T: Send>(out: &mut [T], per: usize, work: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    if per == 0 {
        return;
    }
    let n = out.len() / per;
    let threads = crate::pool::threads();
    if work < PAR_WORK || n < 2 || threads < 2 {
        for (i, piece) in out.chunks_mut(per).enumerate() {
            f(i, piece);
        }
        return;
    }
    let group = n.div_ceil(threads * 4).max(1);
    crate::pool::pieces(out, group * per, |g, piece| {
        for (j, img) in piece.chunks_mut(per).enumerate() {
            f(g * group + j, img);
        }
    });
}

/// [`per_image`] with scratch: `f(image, piece, scratch)`, where `scratch` is a lane's
/// `scratch_len` elements (first set to `init`; a lane takes images `l`, `l + lanes`,
/// ...). The scratch is allocated here, so a refusal is an error, not an abort.
#[allow(clippy::too_many_arguments)]
fn per_image_scratch<T: Copy + Send + Sync, S: Clone + Send>(
    op: &'static str,
    out: &mut [T],
    per: usize,
    work: usize,
    scratch_len: usize,
    init: S,
    f: impl Fn(usize, &mut [T], &mut [S]) + Sync,
) -> Result<()> {
    if per == 0 {
        return Ok(());
    }
    let n = out.len() / per;
    let threads = crate::pool::threads();
    let lanes = if work < PAR_WORK || n < 2 || threads < 2 {
        1
    } else {
        n.min(4 * threads)
    };
    let scratch_len = scratch_len.max(1);
    let total = crate::size::num_elements(op, &[lanes, scratch_len])?;
    let mut scratch = crate::size::try_vec_filled(op, total, init)?;
    // Images as rows.
    let base = RawMut {
        ptr: out.as_mut_ptr(),
        rs: per as isize,
        cs: 1,
    };
    striped(&mut scratch, scratch_len, n, |i, s| {
        // SAFETY: image `i`'s piece of `out` belongs to this lane alone, while `out` is
        // borrowed by this call.
        let piece = unsafe { std::slice::from_raw_parts_mut(base.from_row(i).ptr, per) };
        f(i, piece, s);
    });
    Ok(())
}

/// `f(i, scratch of i's lane)` for every `i` in `0..count`: `scratch` holds `per_lane`
/// elements for each lane, lane `l` takes `l`, `l + lanes`, ..., and the lanes are spread
/// over the pool.
fn striped<S: Send>(
    scratch: &mut [S],
    per_lane: usize,
    count: usize,
    f: impl Fn(usize, &mut [S]) + Sync,
) {
    let lanes = scratch.len() / per_lane.max(1);
    crate::pool::pieces(scratch, per_lane, |lane, s| {
        for i in (lane..count).step_by(lanes.max(1)) {
            f(i, s);
        }
    });
}

/// `s` as initialized elements.
///
/// # Safety
/// Every element of `s` must be initialized.
unsafe fn assume_init_mut<T>(s: &mut [MaybeUninit<T>]) -> &mut [T] {
    // SAFETY: `MaybeUninit<T>` has `T`'s layout; the caller's contract.
    unsafe { &mut *(s as *mut [MaybeUninit<T>] as *mut [T]) }
}

/// A standard-layout copy of `a` only when it is not one already.
fn contiguous<T: Clone>(a: &ndarray::ArcArray<T, IxDyn>) -> std::borrow::Cow<'_, [T]> {
    match a.as_slice() {
        Some(s) => std::borrow::Cow::Borrowed(s),
        None => std::borrow::Cow::Owned(a.iter().cloned().collect()),
    }
}

/// The im2col rows of `x` (`[n*od*oh*ow, kd*kh*kw*c]`, row-major).
fn im2col<T: Float + Send + Sync>(op: &'static str, g: &ConvGeom, x: &[T]) -> Result<Vec<T>> {
    let k = g.k();
    let rows = g.n * g.out_pixels();
    let len = crate::size::num_elements(op, &[rows, k])?;
    crate::size::check_shape_of::<T>(op, &[rows, k])?;
    let per = g.out_pixels() * k;
    let img = g.in_image();
    let mut cols = crate::size::try_vec::<T>(op, len)?;
    per_image(&mut cols.spare_capacity_mut()[..len], per, len, |i, out| {
        im2col_image(g, &x[i * img..(i + 1) * img], out);
    });
    // SAFETY: `im2col_image` writes each image's `per` elements in full, and the
    // images tile `len`.
    unsafe { cols.set_len(len) };
    Ok(cols)
}

/// The im2col rows of one image `x` into `out` (`out_pixels * k` elements), each
/// element written once.
fn im2col_image<T: Float>(g: &ConvGeom, x: &[T], out: &mut [std::mem::MaybeUninit<T>]) {
    let (k, c) = (g.k(), g.c);
    if g.dw == 1 {
        // One copy per window row, padding written as zeros (so no zero fill first).
        let run = g.kw * c;
        g.each_row_run(|o, src| {
            let row = &mut out[o..o + run];
            let (a, b) = match src {
                Some((px, a, b)) => {
                    copy_run(&mut row[a * c..b * c], &x[px..px + (b - a) * c]);
                    (a * c, b * c)
                }
                None => (run, run),
            };
            let (head, rest) = row.split_at_mut(a);
            for d in head.iter_mut().chain(&mut rest[b - a..]) {
                d.write(T::zero());
            }
        });
        return;
    }
    // A dilated width: zeros first, then one tap at a time.
    for d in out.iter_mut() {
        d.write(T::zero());
    }
    g.each_tap(|p, t, px| {
        // An element loop, not `copy_from_slice`: with few channels (a first layer's
        // one) a memcpy call per tap costs more than the copy.
        let row = &mut out[p * k + t * c..][..c];
        for (d, &v) in row.iter_mut().zip(&x[px * c..][..c]) {
            d.write(v);
        }
    });
}

/// `to = from` (of one length). A short run (a window row of few channels: 3 for a
/// first layer's 3×3 filter over one channel) is copied by moves of its known length:
/// the compiler turns a plain element loop into a `memcpy` call, which costs more than
/// the copy there.
#[inline(always)]
fn copy_run<T: Copy>(to: &mut [std::mem::MaybeUninit<T>], from: &[T]) {
    #[inline(always)]
    fn fixed<T: Copy, const N: usize>(to: &mut [std::mem::MaybeUninit<T>], from: &[T]) {
        let from: &[T; N] = from.try_into().expect("runs of one length");
        let to: &mut [std::mem::MaybeUninit<T>; N] = to.try_into().expect("runs of one length");
        for (d, &v) in to.iter_mut().zip(from) {
            d.write(v);
        }
    }
    macro_rules! short {
        ($($n:literal)*) => {
            match from.len() {
                $($n => fixed::<T, $n>(to, from),)*
                _ => {
                    for (d, &v) in to.iter_mut().zip(from) {
                        d.write(v);
                    }
                }
            }
        };
    }
    short!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
}

/// Sums im2col-shaped rows back into an NHWC input (the adjoint of [`im2col`]).
fn col2im<T: Float + Send + Sync>(op: &'static str, g: &ConvGeom, cols: &[T]) -> Result<Vec<T>> {
    let len = crate::size::check_shape_of::<T>(op, &g.input_shape())?;
    let mut x = crate::size::try_vec_filled(op, len, T::zero())?;
    let img = g.in_image();
    let per = g.out_pixels() * g.k();
    per_image(&mut x, img, cols.len(), |i, out| {
        col2im_image(g, &cols[i * per..(i + 1) * per], out);
    });
    Ok(x)
}

/// Adds one image's im2col-shaped rows `cols` back into its input gradient `out`.
fn col2im_image<T: Float>(g: &ConvGeom, cols: &[T], out: &mut [T]) {
    let (k, c) = (g.k(), g.c);
    if g.dw == 1 {
        g.each_row_run(|o, src| {
            if let Some((px, a, b)) = src {
                let from = &cols[o + a * c..o + b * c];
                for (d, &s) in out[px..px + (b - a) * c].iter_mut().zip(from) {
                    *d = *d + s;
                }
            }
        });
        return;
    }
    g.each_tap(|p, t, px| {
        let row = &cols[p * k + t * c..][..c];
        for (d, &s) in out[px * c..][..c].iter_mut().zip(row) {
            *d = *d + s;
        }
    });
}

/// im2col elements a chunked convolution builds at a time: 64K (256 KiB of f32), which
/// stay in a core's L2 cache from im2col writing them to the product reading them.
const CHUNK: usize = 1 << 16;

/// One image's im2col elements up to which a convolution is chunked (1 MiB of f32).
const CHUNK_IMAGE_MAX: usize = 1 << 18;

/// Accumulator elements (all lanes' filter gradients together) up to which a filter
/// gradient is chunked.
const CHUNK_ACC_MAX: usize = 1 << 20;

/// A convolution's products done a few images at a time: im2col of a chunk of images
/// into a lane's scratch rows, then that chunk's product on the same thread, so the
/// rows never leave the cache and no im2col buffer of the whole batch is allocated.
/// Lane `l` takes chunks `l`, `l + lanes`, ...; the lanes are spread over the pool.
#[derive(Clone, Copy, Debug)]
struct Chunks {
    /// Images per chunk (the last chunk may have fewer).
    imgs: usize,
    count: usize,
    lanes: usize,
    /// im2col elements of one image.
    per: usize,
}

impl Chunks {
    /// `None` when the convolution takes the whole-batch path: no im2col (depthwise,
    /// 1×1), an image too large for a chunk, or fewer chunks than threads (a big
    /// product split over the cores does better there).
    fn of(g: &ConvGeom) -> Option<Chunks> {
        let per = g.out_pixels() * g.k();
        if g.depthwise || g.identity_cols() || per == 0 || per > CHUNK_IMAGE_MAX {
            return None;
        }
        let imgs = (CHUNK / per).max(1);
        let count = g.n.div_ceil(imgs);
        let threads = crate::pool::threads();
        (count >= threads).then_some(Chunks {
            imgs,
            count,
            lanes: count.min(4 * threads),
            per,
        })
    }

    /// The images of chunk `i` of a batch of `n`.
    fn images(&self, n: usize, i: usize) -> std::ops::Range<usize> {
        i * self.imgs..((i + 1) * self.imgs).min(n)
    }

    /// `f(chunk, its lane's scratch)` for every chunk ([`striped`]); `scratch` holds
    /// `per_lane` elements for each lane.
    fn run<S: Send>(&self, scratch: &mut [S], per_lane: usize, f: impl Fn(usize, &mut [S]) + Sync) {
        striped(scratch, per_lane, self.count, f);
    }

    /// Scratch of `per_lane` uninitialized elements for each lane.
    fn scratch<T>(&self, op: &'static str, per_lane: usize) -> Result<Vec<MaybeUninit<T>>> {
        let n = crate::size::num_elements(op, &[self.lanes, per_lane])?;
        let mut v = crate::size::try_vec(op, n)?;
        // SAFETY: `MaybeUninit` elements need no initialization; the capacity is `n`.
        unsafe { v.set_len(n) };
        Ok(v)
    }

    /// im2col of chunk `ci`'s images of `x` into the front of `s`; the rows, read back.
    fn im2col<'s, T: Float>(
        &self,
        g: &ConvGeom,
        x: &[T],
        ci: usize,
        s: &'s mut [MaybeUninit<T>],
    ) -> &'s [T] {
        let (img, ims) = (g.in_image(), self.images(g.n, ci));
        let cols = &mut s[..ims.len() * self.per];
        for (j, i) in ims.enumerate() {
            im2col_image(
                g,
                &x[i * img..(i + 1) * img],
                &mut cols[j * self.per..][..self.per],
            );
        }
        // SAFETY: `im2col_image` wrote every element of each image's rows.
        unsafe { assume_init(cols) }
    }
}

/// `s` as initialized elements.
///
/// # Safety
/// Every element of `s` must be initialized.
unsafe fn assume_init<T>(s: &[MaybeUninit<T>]) -> &[T] {
    // SAFETY: `MaybeUninit<T>` has `T`'s layout; the caller's contract.
    unsafe { &*(s as *const [MaybeUninit<T>] as *const [T]) }
}

/// [`conv`] chunk by chunk (see [`Chunks`]): each chunk's product writes its rows of
/// the output.
fn conv_chunked<T: Gemm + Float>(
    op: &'static str,
    g: &ConvGeom,
    ch: &Chunks,
    x: &[T],
    w: &[T],
    len: usize,
) -> Result<Vec<T>> {
    let (k, o, px) = (g.k(), g.o, g.out_pixels());
    let mut out = crate::size::try_vec::<T>(op, len)?;
    let dst = RawMut {
        ptr: out.as_mut_ptr(),
        rs: o as isize,
        cs: 1,
    };
    let per_lane = ch.imgs * ch.per;
    let mut scratch = ch.scratch::<T>(op, per_lane)?;
    ch.run(&mut scratch, per_lane, |ci, s| {
        let cols = ch.im2col(g, x, ci, s);
        let rows = cols.len() / k;
        let first = ch.images(g.n, ci).start * px;
        // SAFETY: the chunk's rows `[first, first + rows)` of the `[n*px, o]` output are
        // written by this chunk alone; the operands are valid row-major blocks.
        unsafe {
            T::gemm_serial(
                Raw::row_major(cols.as_ptr(), k),
                Raw::row_major(w.as_ptr(), o),
                dst.from_row(first),
                rows,
                o,
                k,
                false,
            )
        };
    });
    // SAFETY: the chunks' rows tile the output, each written in full by its product.
    unsafe { out.set_len(len) };
    Ok(out)
}

/// [`backprop_input`] chunk by chunk: each chunk's `dy` rows times the filter's
/// transpose, scattered into its images (zeroed there first).
fn backprop_input_chunked<T: Gemm + Float>(
    op: &'static str,
    g: &ConvGeom,
    ch: &Chunks,
    w: &[T],
    dy: &[T],
    len: usize,
) -> Result<Vec<T>> {
    let (k, o, px, img) = (g.k(), g.o, g.out_pixels(), g.in_image());
    let mut x = crate::size::try_vec::<T>(op, len)?;
    // Images as rows.
    let dx = RawMut {
        ptr: x.as_mut_ptr(),
        rs: img as isize,
        cs: 1,
    };
    let per_lane = ch.imgs * ch.per;
    let mut scratch = ch.scratch::<T>(op, per_lane)?;
    ch.run(&mut scratch, per_lane, |ci, s| {
        let ims = ch.images(g.n, ci);
        let rows = ims.len() * px;
        let cols = &mut s[..rows * k];
        // SAFETY: `dy`'s rows of this chunk and the filter read as row-major blocks
        // (the filter transposed); `cols` is this lane's scratch, written in full.
        let cols = unsafe {
            T::gemm_serial(
                Raw::row_major(dy.as_ptr().add(ims.start * px * o), o),
                Raw::row_major(w.as_ptr(), o).t(),
                RawMut {
                    ptr: cols.as_mut_ptr().cast::<T>(),
                    rs: k as isize,
                    cs: 1,
                },
                rows,
                k,
                o,
                false,
            );
            assume_init(cols)
        };
        for (j, i) in ims.enumerate() {
            // SAFETY: image `i` of the input gradient belongs to this chunk alone.
            let out = unsafe {
                std::slice::from_raw_parts_mut(dx.from_row(i).ptr.cast::<MaybeUninit<T>>(), img)
            };
            for d in out.iter_mut() {
                d.write(T::zero());
            }
            // SAFETY: zeroed just above.
            let out = unsafe { assume_init_mut(out) };
            col2im_image(g, &cols[j * ch.per..][..ch.per], out);
        }
    });
    // SAFETY: the chunks' images tile the input gradient, each zeroed and then summed into.
    unsafe { x.set_len(len) };
    Ok(x)
}

/// [`backprop_filter`] chunk by chunk: each lane sums its chunks' `colsᵀ @ dy` into its
/// own accumulator, and the lanes' accumulators are added in lane order (the same
/// result for the same number of threads, whichever thread ran a lane).
fn backprop_filter_chunked<T: Gemm + Float>(
    op: &'static str,
    g: &ConvGeom,
    ch: &Chunks,
    x: &[T],
    dy: &[T],
    len: usize,
) -> Result<Vec<T>> {
    let (k, o, px) = (g.k(), g.o, g.out_pixels());
    let cols_len = ch.imgs * ch.per;
    let per_lane = cols_len + len;
    let mut scratch = ch.scratch::<T>(op, per_lane)?;
    ch.run(&mut scratch, per_lane, |ci, s| {
        let (s, acc) = s.split_at_mut(cols_len);
        let cols = ch.im2col(g, x, ci, s);
        let rows = cols.len() / k;
        let first = ch.images(g.n, ci).start * px;
        // SAFETY: the rows read as a column-major `k x rows` block (their transpose),
        // `dy`'s as row-major; the lane's accumulator is written in full by its first
        // chunk (`ci < lanes`) and added to by the later ones.
        unsafe {
            T::gemm_serial(
                Raw::row_major(cols.as_ptr(), k).t(),
                Raw::row_major(dy.as_ptr().add(first * o), o),
                RawMut {
                    ptr: acc.as_mut_ptr().cast::<T>(),
                    rs: o as isize,
                    cs: 1,
                },
                k,
                o,
                rows,
                ci >= ch.lanes,
            )
        };
    });
    let mut lanes = scratch.chunks(per_lane).map(|l| {
        // SAFETY: every lane ran at least one chunk (`lanes <= count`), which wrote its
        // accumulator.
        unsafe { assume_init(&l[cols_len..]) }
    });
    let mut out = crate::size::try_vec(op, len)?;
    out.extend_from_slice(lanes.next().expect("at least one lane"));
    for l in lanes {
        for (d, &v) in out.iter_mut().zip(l) {
            *d = *d + v;
        }
    }
    Ok(out)
}

fn view2<T>(v: &[T], r: usize, c: usize) -> ArrayView2<'_, T> {
    ArrayView2::from_shape((r, c), v).expect("the caller sized the buffer r x c")
}

fn shaped<T>(op: &'static str, shape: &[usize], v: Vec<T>) -> Result<ArrayD<T>> {
    crate::size::shaped(op, shape, v)
}

fn check_len<T>(op: &'static str, a: &ndarray::ArcArray<T, IxDyn>, want: &[usize]) -> Result<()> {
    if a.shape() != want {
        return Err(Error::invalid(
            op,
            format!("expected a tensor of shape {want:?}, got {:?}", a.shape()),
        ));
    }
    Ok(())
}

/// The convolution of `x` (`g.input_shape()`) with `w` (`g.filter_shape()`).
pub fn conv<T: Gemm + Float>(
    op: &'static str,
    g: &ConvGeom,
    x: &ndarray::ArcArray<T, IxDyn>,
    w: &ndarray::ArcArray<T, IxDyn>,
) -> Result<ArrayD<T>> {
    check_len(op, x, &g.input_shape())?;
    check_len(op, w, &g.filter_shape())?;
    let out_shape = g.output_shape();
    let len = crate::size::check_shape_of::<T>(op, &out_shape)?;
    let (xs, ws) = (contiguous(x), contiguous(w));
    let rows = g.n * g.out_pixels();
    let k = g.k();
    if len == 0 {
        return shaped(op, &out_shape, Vec::new());
    }
    if let Some(ch) = Chunks::of(g) {
        return shaped(op, &out_shape, conv_chunked(op, g, &ch, &xs, &ws, len)?);
    }
    let cols = if g.identity_cols() {
        std::borrow::Cow::Borrowed(&xs[..])
    } else {
        std::borrow::Cow::Owned(im2col(op, g, &xs)?)
    };
    if !g.depthwise {
        let y = matmul2(view2(&cols, rows, k), view2(&ws, k, g.o))?;
        return y
            .into_shape_with_order(IxDyn(&out_shape))
            .map_err(|e| Error::Internal(format!("{op}: {e}")));
    }
    // Depthwise: out[p, c*m + j] = sum over taps t of cols[p, t*c + ci] * w[t, ci, j].
    let (c, m, taps) = (g.c, g.o, g.taps());
    let mut out = crate::size::try_vec_filled(op, len, T::zero())?;
    let per = g.out_pixels() * c * m;
    let cols_per = g.out_pixels() * k;
    per_image(&mut out, per, len * taps, |i, o| {
        let cols = &cols[i * cols_per..(i + 1) * cols_per];
        for p in 0..g.out_pixels() {
            let row = &cols[p * k..][..k];
            let orow = &mut o[p * c * m..][..c * m];
            for t in 0..taps {
                for ci in 0..c {
                    let v = row[t * c + ci];
                    let wr = &ws[(t * c + ci) * m..][..m];
                    for (d, &wv) in orow[ci * m..(ci + 1) * m].iter_mut().zip(wr) {
                        *d = *d + v * wv;
                    }
                }
            }
        }
    });
    shaped(op, &out_shape, out)
}

/// The gradient of [`conv`] with respect to its input: `dy` (`g.output_shape()`)
/// through the filter's transpose, scattered back to `g.input_shape()`.
pub fn backprop_input<T: Gemm + Float>(
    op: &'static str,
    g: &ConvGeom,
    w: &ndarray::ArcArray<T, IxDyn>,
    dy: &ndarray::ArcArray<T, IxDyn>,
) -> Result<ArrayD<T>> {
    check_len(op, w, &g.filter_shape())?;
    check_len(op, dy, &g.output_shape())?;
    let in_shape = g.input_shape();
    let len = crate::size::check_shape_of::<T>(op, &in_shape)?;
    let (ws, dys) = (contiguous(w), contiguous(dy));
    let rows = g.n * g.out_pixels();
    let k = g.k();
    if len == 0 {
        return shaped(op, &in_shape, Vec::new());
    }
    if let Some(ch) = Chunks::of(g) {
        return shaped(
            op,
            &in_shape,
            backprop_input_chunked(op, g, &ch, &ws, &dys, len)?,
        );
    }
    let dcols: Vec<T> = if !g.depthwise {
        let wv = view2(&ws, k, g.o);
        let d = matmul2(view2(&dys, rows, g.o), wv.reversed_axes())?;
        d.into_raw_vec_and_offset().0
    } else {
        let (c, m, taps) = (g.c, g.o, g.taps());
        let n = crate::size::num_elements(op, &[rows, k])?;
        crate::size::check_shape_of::<T>(op, &[rows, k])?;
        let mut d = crate::size::try_vec_filled(op, n, T::zero())?;
        per_image(&mut d, k, n * m, |p, row| {
            let dyr = &dys[p * c * m..][..c * m];
            for t in 0..taps {
                for ci in 0..c {
                    let wr = &ws[(t * c + ci) * m..][..m];
                    let gr = &dyr[ci * m..][..m];
                    let mut s = T::zero();
                    for (&a, &b) in wr.iter().zip(gr) {
                        s = s + a * b;
                    }
                    row[t * c + ci] = s;
                }
            }
        });
        d
    };
    if g.identity_cols() {
        return shaped(op, &in_shape, dcols);
    }
    shaped(op, &in_shape, col2im(op, g, &dcols)?)
}

/// The gradient of [`conv`] with respect to its filter: `im2col(x)ᵀ @ dy`.
pub fn backprop_filter<T: Gemm + Float>(
    op: &'static str,
    g: &ConvGeom,
    x: &ndarray::ArcArray<T, IxDyn>,
    dy: &ndarray::ArcArray<T, IxDyn>,
) -> Result<ArrayD<T>> {
    check_len(op, x, &g.input_shape())?;
    check_len(op, dy, &g.output_shape())?;
    let f_shape = g.filter_shape();
    let len = crate::size::check_shape_of::<T>(op, &f_shape)?;
    let (xs, dys) = (contiguous(x), contiguous(dy));
    let rows = g.n * g.out_pixels();
    let k = g.k();
    if len == 0 {
        return shaped(op, &f_shape, Vec::new());
    }
    if let Some(ch) = Chunks::of(g).filter(|ch| ch.lanes.saturating_mul(len) <= CHUNK_ACC_MAX) {
        return shaped(
            op,
            &f_shape,
            backprop_filter_chunked(op, g, &ch, &xs, &dys, len)?,
        );
    }
    let cols = if g.identity_cols() {
        std::borrow::Cow::Borrowed(&xs[..])
    } else {
        std::borrow::Cow::Owned(im2col(op, g, &xs)?)
    };
    if !g.depthwise {
        let cv = view2(&cols, rows, k);
        let d = matmul2(cv.reversed_axes(), view2(&dys, rows, g.o))?;
        return d
            .into_shape_with_order(IxDyn(&f_shape))
            .map_err(|e| Error::Internal(format!("{op}: {e}")));
    }
    // Depthwise: dw[t, ci, j] = sum over rows p of cols[p, t*c + ci] * dy[p, ci*m + j],
    // one tap per task.
    let (c, m) = (g.c, g.o);
    let mut out = crate::size::try_vec_filled(op, len, T::zero())?;
    per_image(&mut out, c * m, rows * len, |t, o| {
        for p in 0..rows {
            let row = &cols[p * k + t * c..][..c];
            let dyr = &dys[p * c * m..][..c * m];
            for ci in 0..c {
                let v = row[ci];
                for (d, &gv) in o[ci * m..(ci + 1) * m].iter_mut().zip(&dyr[ci * m..]) {
                    *d = *d + v * gv;
                }
            }
        }
    });
    shaped(op, &f_shape, out)
}

/// The shape arithmetic of one pooling (1 to 3 spatial axes, held as 3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolGeom {
    /// The input's shape as the caller sees it (`[n, (d,) (h,) w, c]`).
    pub shape: Vec<usize>,
    /// `[n, d, h, w, c]`.
    pub dims: [usize; 5],
    pub k: [usize; 3],
    pub s: [usize; 3],
    /// Padding before each spatial axis.
    pub pad: [usize; 3],
    pub out: [usize; 3],
}

impl PoolGeom {
    pub fn output_shape(&self) -> Vec<usize> {
        let sp = self.shape.len() - 2;
        let mut s = vec![self.shape[0]];
        s.extend_from_slice(&self.out[3 - sp..]);
        s.push(self.dims[4]);
        s
    }
    fn in_img(&self) -> usize {
        self.dims[1] * self.dims[2] * self.dims[3] * self.dims[4]
    }
    fn out_img(&self) -> usize {
        self.out[0] * self.out[1] * self.out[2] * self.dims[4]
    }
    /// Elements of a window, padding included (saturating: only a work estimate).
    fn window_elems(&self) -> usize {
        self.k[0]
            .saturating_mul(self.k[1])
            .saturating_mul(self.k[2])
    }
    /// The input ranges `[lo, hi)` of output position `o` along spatial axis `a`.
    #[inline(always)]
    fn range(&self, a: usize, o: usize) -> (usize, usize) {
        let start = o * self.s[a];
        let lo = start.saturating_sub(self.pad[a]);
        let hi = (start + self.k[a])
            .saturating_sub(self.pad[a])
            .min(self.dims[a + 1]);
        // A window wholly in explicit padding is empty.
        (lo.min(hi), hi)
    }
    /// `f(output pixel index, its window)` for each output pixel of one image.
    #[inline(always)]
    fn windows(&self, mut f: impl FnMut(usize, Window)) {
        let [_, _, h, w, _] = self.dims;
        let mut op = 0;
        for od in 0..self.out[0] {
            let d = self.range(0, od);
            for oh in 0..self.out[1] {
                let hr = self.range(1, oh);
                for ow in 0..self.out[2] {
                    let wr = self.range(2, ow);
                    f(
                        op,
                        Window {
                            d,
                            h: hr,
                            w: wr,
                            hs: h,
                            ws: w,
                        },
                    );
                    op += 1;
                }
            }
        }
    }
}

/// The input pixels of one pooling window: `[lo, hi)` per spatial axis, and the
/// image's height and width (to index pixels).
#[derive(Clone, Copy)]
struct Window {
    d: (usize, usize),
    h: (usize, usize),
    w: (usize, usize),
    hs: usize,
    ws: usize,
}

impl Window {
    /// `f(pixel index within the image)` for the window's pixels in scan order.
    #[inline(always)]
    fn each(self, mut f: impl FnMut(usize)) {
        for z in self.d.0..self.d.1 {
            for y in self.h.0..self.h.1 {
                let base = (z * self.hs + y) * self.ws;
                for x in self.w.0..self.w.1 {
                    f(base + x);
                }
            }
        }
    }
    /// [`Window::each`] in reverse scan order.
    #[inline(always)]
    fn each_rev(self, mut f: impl FnMut(usize)) {
        for z in (self.d.0..self.d.1).rev() {
            for y in (self.h.0..self.h.1).rev() {
                let base = (z * self.hs + y) * self.ws;
                for x in (self.w.0..self.w.1).rev() {
                    f(base + x);
                }
            }
        }
    }
    /// The first pixel in scan order, `None` for an empty window.
    #[inline(always)]
    fn first(self) -> Option<usize> {
        (self.d.0 < self.d.1 && self.h.0 < self.h.1 && self.w.0 < self.w.1)
            .then(|| (self.d.0 * self.hs + self.h.0) * self.ws + self.w.0)
    }
    fn count(self) -> usize {
        (self.d.1 - self.d.0) * (self.h.1 - self.h.0) * (self.w.1 - self.w.0)
    }
}

fn check_pool<T>(op: &'static str, a: &ndarray::ArcArray<T, IxDyn>, want: &[usize]) -> Result<()> {
    check_len(op, a, want)
}

/// Max pooling.
pub fn max_pool<T: Float + Send + Sync>(
    op: &'static str,
    g: &PoolGeom,
    x: &ndarray::ArcArray<T, IxDyn>,
) -> Result<ArrayD<T>> {
    check_pool(op, x, &g.shape)?;
    let out_shape = g.output_shape();
    let len = crate::size::check_shape_of::<T>(op, &out_shape)?;
    let xs = contiguous(x);
    let c = g.dims[4];
    let (ii, oi) = (g.in_img(), g.out_img());
    // TF's start: MaxPool (1-D, 2-D) the lowest finite value, MaxPool3D -inf. NaNs
    // never replace it (`v > d` is false), so a window of NaNs (or of padding) keeps it.
    let start = if g.shape.len() == 5 {
        T::neg_infinity()
    } else {
        T::min_value()
    };
    let mut out = crate::size::try_vec_filled(op, len, start)?;
    per_image(
        &mut out,
        oi,
        len.saturating_mul(g.window_elems()),
        |i, o| {
            let x = &xs[i * ii..][..ii];
            g.windows(|p, win| {
                let orow = &mut o[p * c..][..c];
                // A select, not a branch: it vectorizes, and random data would
                // mispredict a branch half the time.
                win.each(|q| {
                    for (d, &v) in orow.iter_mut().zip(&x[q * c..][..c]) {
                        *d = if v > *d { v } else { *d };
                    }
                });
            });
        },
    );
    shaped(op, &out_shape, out)
}

/// For each output element, the flat index (within its image) of the input element
/// TF's `MaxPoolGrad` routes its gradient to (see [`argmax_image`]), [`PoolIndex::NONE`]
/// for a window wholly in explicit padding.
fn argmax<T: Float + Send + Sync>(
    op: &'static str,
    g: &PoolGeom,
    x: &[T],
    n: usize,
) -> Result<Vec<usize>> {
    let (ii, oi) = (g.in_img(), g.out_img());
    let mut arg = crate::size::try_vec_filled(op, n * oi, usize::NONE)?;
    per_image(
        &mut arg,
        oi,
        (n * oi).saturating_mul(g.window_elems()),
        |i, a| argmax_image(g, &x[i * ii..][..ii], a),
    );
    Ok(arg)
}

/// [`argmax`] of one image `x` into `a` (its output elements, each written), by TF's
/// CPU rule: the window's first element in scan order, replaced by each later element
/// `v` with `best < v`. That is the first maximum in scan order; NaNs never replace
/// (`best < NaN` is false), and a NaN first element is never replaced.
fn argmax_image<T: Float, I: PoolIndex>(g: &PoolGeom, x: &[T], a: &mut [I]) {
    let c = g.dims[4];
    let mut best = vec![T::zero(); c];
    g.windows(|p, win| {
        let arow = &mut a[p * c..][..c];
        let Some(first) = win.first() else {
            arow.iter_mut().for_each(|ai| *ai = I::NONE);
            return;
        };
        // The maximum from the first element on (selects, which vectorize; see
        // `max_pool`), then its first occurrence in scan order, found by walking the
        // window backwards with selects: the last match written is the first in scan
        // order. Branches here would mispredict on random data. A NaN maximum (the
        // first element NaN) matches nothing and leaves the first element.
        best.copy_from_slice(&x[first * c..][..c]);
        win.each(|q| {
            for (b, &v) in best.iter_mut().zip(&x[q * c..][..c]) {
                *b = if *b < v { v } else { *b };
            }
        });
        for (ch, ai) in arow.iter_mut().enumerate() {
            *ai = I::of(first * c + ch);
        }
        win.each_rev(|q| {
            let xs = &x[q * c..][..c];
            for (ch, ((ai, &v), &b)) in arow.iter_mut().zip(xs).zip(&best).enumerate() {
                *ai = if v == b { I::of(q * c + ch) } else { *ai };
            }
        });
    });
}

/// An element's index within its image, as the max-pool gradient keeps it: `u32` for
/// images of fewer than `u32::MAX` elements (the selects that find it then run in
/// lanes as wide as the `f32` values they compare, and it takes half the memory),
/// `usize` beyond.
trait PoolIndex: Copy + PartialEq + Send + Sync {
    /// No element of the window takes the gradient.
    const NONE: Self;
    fn of(i: usize) -> Self;
    fn get(self) -> usize;
}

impl PoolIndex for u32 {
    const NONE: Self = u32::MAX;
    #[inline(always)]
    fn of(i: usize) -> Self {
        i as u32
    }
    #[inline(always)]
    fn get(self) -> usize {
        self as usize
    }
}

impl PoolIndex for usize {
    const NONE: Self = usize::MAX;
    #[inline(always)]
    fn of(i: usize) -> Self {
        i
    }
    #[inline(always)]
    fn get(self) -> usize {
        self
    }
}

/// The first-maximum gradient of max pooling: per image, its [`argmax`] into a
/// lane's scratch, then the image's gradient zeroed and `dy` added at those indices,
/// all while the image is in the cache.
fn max_pool_grad_first<T: Float + Send + Sync, I: PoolIndex>(
    op: &'static str,
    g: &PoolGeom,
    xs: &[T],
    dys: &[T],
    len: usize,
) -> Result<Vec<T>> {
    let (ii, oi) = (g.in_img(), g.out_img());
    let work = dys.len().saturating_mul(g.window_elems());
    let mut out = crate::size::try_vec::<T>(op, len)?;
    per_image_scratch(
        op,
        &mut out.spare_capacity_mut()[..len],
        ii,
        work,
        oi,
        I::NONE,
        |i, o, arg| {
            argmax_image(g, &xs[i * ii..][..ii], arg);
            for d in o.iter_mut() {
                d.write(T::zero());
            }
            // SAFETY: zeroed just above.
            let o = unsafe { assume_init_mut(o) };
            for (&q, &d) in arg.iter().zip(&dys[i * oi..][..oi]) {
                if q != I::NONE {
                    o[q.get()] = o[q.get()] + d;
                }
            }
        },
    )?;
    // SAFETY: every image's piece was zeroed, then added to.
    unsafe { out.set_len(len) };
    Ok(out)
}

/// The gradient of [`max_pool`]: each `dy` element added at its window's first maximum
/// of `x`, or (`all_ties`, TF's `MaxPool3DGrad`) at every element equal to the maximum.
pub fn max_pool_grad<T: Float + Send + Sync>(
    op: &'static str,
    g: &PoolGeom,
    x: &ndarray::ArcArray<T, IxDyn>,
    dy: &ndarray::ArcArray<T, IxDyn>,
    all_ties: bool,
) -> Result<ArrayD<T>> {
    check_pool(op, x, &g.shape)?;
    check_pool(op, dy, &g.output_shape())?;
    let len = crate::size::check_shape_of::<T>(op, &g.shape)?;
    let (xs, dys) = (contiguous(x), contiguous(dy));
    let n = g.dims[0];
    if all_ties {
        let c = g.dims[4];
        let (ii, oi) = (g.in_img(), g.out_img());
        let mut out = crate::size::try_vec_filled(op, len, T::zero())?;
        let work = (n * oi).saturating_mul(g.window_elems());
        per_image(&mut out, ii, work, |i, o| {
            let x = &xs[i * ii..][..ii];
            let dy = &dys[i * oi..][..oi];
            let mut best = vec![T::neg_infinity(); c];
            g.windows(|p, win| {
                best.iter_mut().for_each(|b| *b = T::neg_infinity());
                win.each(|q| {
                    for (b, &v) in best.iter_mut().zip(&x[q * c..][..c]) {
                        if v > *b {
                            *b = v;
                        }
                    }
                });
                let drow = &dy[p * c..][..c];
                win.each(|q| {
                    for ch in 0..c {
                        if x[q * c + ch] == best[ch] {
                            o[q * c + ch] = o[q * c + ch] + drow[ch];
                        }
                    }
                });
            });
        });
        return shaped(op, &g.shape, out);
    }
    let out = if g.in_img() < u32::MAX as usize {
        max_pool_grad_first::<T, u32>(op, g, &xs, &dys, len)?
    } else {
        max_pool_grad_first::<T, usize>(op, g, &xs, &dys, len)?
    };
    shaped(op, &g.shape, out)
}

/// The gradient of [`max_pool_grad`] with respect to its `dy`: `ddx` read at each
/// window's first maximum of `x` (output-shaped).
pub fn max_pool_grad_grad<T: Float + Send + Sync>(
    op: &'static str,
    g: &PoolGeom,
    x: &ndarray::ArcArray<T, IxDyn>,
    ddx: &ndarray::ArcArray<T, IxDyn>,
) -> Result<ArrayD<T>> {
    check_pool(op, x, &g.shape)?;
    check_pool(op, ddx, &g.shape)?;
    let out_shape = g.output_shape();
    let len = crate::size::check_shape_of::<T>(op, &out_shape)?;
    let (xs, dds) = (contiguous(x), contiguous(ddx));
    let n = g.dims[0];
    let arg = argmax(op, g, &xs, n)?;
    let ii = g.in_img();
    let oi = g.out_img();
    let mut out = crate::size::try_vec_filled(op, len, T::zero())?;
    per_image(&mut out, oi, len, |i, o| {
        for (d, &q) in o.iter_mut().zip(&arg[i * oi..(i + 1) * oi]) {
            if q != usize::NONE {
                *d = dds[i * ii + q];
            }
        }
    });
    shaped(op, &out_shape, out)
}

/// Average pooling over the window elements inside the input.
pub fn avg_pool<T: Float + Send + Sync>(
    op: &'static str,
    g: &PoolGeom,
    x: &ndarray::ArcArray<T, IxDyn>,
) -> Result<ArrayD<T>> {
    check_pool(op, x, &g.shape)?;
    let out_shape = g.output_shape();
    let len = crate::size::check_shape_of::<T>(op, &out_shape)?;
    let xs = contiguous(x);
    let c = g.dims[4];
    let (ii, oi) = (g.in_img(), g.out_img());
    let mut out = crate::size::try_vec_filled(op, len, T::zero())?;
    per_image(
        &mut out,
        oi,
        len.saturating_mul(g.window_elems()),
        |i, o| {
            let x = &xs[i * ii..][..ii];
            g.windows(|p, win| {
                let orow = &mut o[p * c..][..c];
                win.each(|q| {
                    for (d, &v) in orow.iter_mut().zip(&x[q * c..][..c]) {
                        *d = *d + v;
                    }
                });
                let inv = T::one() / T::from(win.count().max(1)).expect("a count is a float");
                orow.iter_mut().for_each(|d| *d = *d * inv);
            });
        },
    );
    shaped(op, &out_shape, out)
}

/// The gradient of [`avg_pool`]: each `dy` element spread evenly over its window's
/// elements inside the input.
pub fn avg_pool_grad<T: Float + Send + Sync>(
    op: &'static str,
    g: &PoolGeom,
    dy: &ndarray::ArcArray<T, IxDyn>,
) -> Result<ArrayD<T>> {
    check_pool(op, dy, &g.output_shape())?;
    let len = crate::size::check_shape_of::<T>(op, &g.shape)?;
    let dys = contiguous(dy);
    let c = g.dims[4];
    let (ii, oi) = (g.in_img(), g.out_img());
    let mut out = crate::size::try_vec_filled(op, len, T::zero())?;
    per_image(
        &mut out,
        ii,
        dys.len().saturating_mul(g.window_elems()),
        |i, o| {
            let dy = &dys[i * oi..][..oi];
            g.windows(|p, win| {
                let inv = T::one() / T::from(win.count().max(1)).expect("a count is a float");
                let drow = &dy[p * c..][..c];
                win.each(|q| {
                    for (d, &v) in o[q * c..][..c].iter_mut().zip(drow) {
                        *d = *d + v * inv;
                    }
                });
            });
        },
    );
    shaped(op, &g.shape, out)
}

/// The input position of output position `o`'s tap `t` along one axis (stride `s`,
/// dilation `d`, padding before `p`, size `n`), `None` in the padding.
#[inline(always)]
fn tap_at(o: usize, t: usize, s: usize, d: usize, p: usize, n: usize) -> Option<usize> {
    (o * s + t * d).checked_sub(p).filter(|&i| i < n)
}

/// `f(image, output pixel, tap, input pixel)` for each tap of each output pixel that
/// reads the input (not the padding), all as flat indices (pixels within their image).
fn each_int_tap(g: &ConvGeom, mut f: impl FnMut(usize, usize, usize, usize)) {
    for i in 0..g.n {
        let mut op = 0;
        for od in 0..g.od {
            for oh in 0..g.oh {
                for ow in 0..g.ow {
                    let mut t = 0;
                    for kz in 0..g.kd {
                        for ky in 0..g.kh {
                            for kx in 0..g.kw {
                                let at = (
                                    tap_at(od, kz, g.sd, g.dd, g.pf, g.d),
                                    tap_at(oh, ky, g.sh, g.dh, g.pt, g.h),
                                    tap_at(ow, kx, g.sw, g.dw, g.pl, g.w),
                                );
                                if let (Some(z), Some(y), Some(x)) = at {
                                    f(i, op, t, (z * g.h + y) * g.w + x);
                                }
                                t += 1;
                            }
                        }
                    }
                    op += 1;
                }
            }
        }
    }
}

/// [`conv`] for integers (TF's CPU `Conv2D` takes `int32`): a direct loop with
/// wrapping arithmetic (no BLAS for integers; not a hot path).
pub fn conv_int<T>(
    op: &'static str,
    g: &ConvGeom,
    x: &ndarray::ArcArray<T, IxDyn>,
    w: &ndarray::ArcArray<T, IxDyn>,
) -> Result<ArrayD<T>>
where
    T: Copy + num_traits::Zero + num_traits::WrappingAdd + num_traits::WrappingMul,
{
    check_len(op, x, &g.input_shape())?;
    check_len(op, w, &g.filter_shape())?;
    if g.depthwise {
        return Err(Error::Internal(format!(
            "{op}: no integer depthwise kernel"
        )));
    }
    let out_shape = g.output_shape();
    let len = crate::size::check_shape_of::<T>(op, &out_shape)?;
    let (xs, ws) = (contiguous(x), contiguous(w));
    let mut out = crate::size::try_vec_filled(op, len, T::zero())?;
    let (c, o) = (g.c, g.o);
    let (img, opx) = (g.in_image(), g.out_pixels());
    each_int_tap(g, |i, p, t, q| {
        let orow = &mut out[(i * opx + p) * o..][..o];
        for (ci, &v) in xs[i * img + q * c..][..c].iter().enumerate() {
            for (d, wv) in orow.iter_mut().zip(&ws[(t * c + ci) * o..][..o]) {
                *d = d.wrapping_add(&v.wrapping_mul(wv));
            }
        }
    });
    shaped(op, &out_shape, out)
}

/// [`backprop_input`] for integers, as [`conv_int`].
pub fn backprop_input_int<T>(
    op: &'static str,
    g: &ConvGeom,
    w: &ndarray::ArcArray<T, IxDyn>,
    dy: &ndarray::ArcArray<T, IxDyn>,
) -> Result<ArrayD<T>>
where
    T: Copy + num_traits::Zero + num_traits::WrappingAdd + num_traits::WrappingMul,
{
    check_len(op, w, &g.filter_shape())?;
    check_len(op, dy, &g.output_shape())?;
    if g.depthwise {
        return Err(Error::Internal(format!(
            "{op}: no integer depthwise kernel"
        )));
    }
    let in_shape = g.input_shape();
    let len = crate::size::check_shape_of::<T>(op, &in_shape)?;
    let (ws, dys) = (contiguous(w), contiguous(dy));
    let mut out = crate::size::try_vec_filled(op, len, T::zero())?;
    let (c, o) = (g.c, g.o);
    let (img, opx) = (g.in_image(), g.out_pixels());
    each_int_tap(g, |i, p, t, q| {
        let drow = &dys[(i * opx + p) * o..][..o];
        for ci in 0..c {
            let mut s = T::zero();
            for (&wv, dv) in ws[(t * c + ci) * o..][..o].iter().zip(drow) {
                s = s.wrapping_add(&wv.wrapping_mul(dv));
            }
            let d = &mut out[i * img + q * c + ci];
            *d = d.wrapping_add(&s);
        }
    });
    shaped(op, &in_shape, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `max_pool_grad` against TF's CPU rule run directly (each window's first element,
    /// replaced by each later larger one), with overlapping and padded windows, ties,
    /// and a channel of NaNs among numbers.
    #[test]
    fn max_pool_grad_routes_to_each_windows_first_maximum() {
        // The second is large enough to run on the pool's lanes.
        for (n, h, w, c) in [(2, 5, 6, 3), (6, 20, 21, 16)] {
            max_pool_grad_case(n, h, w, c);
        }
    }

    fn max_pool_grad_case(n: usize, h: usize, w: usize, c: usize) {
        // Ties everywhere (few distinct values), and one channel of an image NaN at
        // every other pixel: windows starting at a NaN keep it, later NaNs never win.
        let x = ndarray::ArrayD::from_shape_fn(IxDyn(&[n, h, w, c]), |ix| {
            if ix[0] == 1 && ix[3] == 2 && (ix[1] + ix[2]) % 2 == 0 {
                f64::NAN
            } else {
                ((ix[1] * 3 + ix[2] * 5 + ix[3]) % 4) as f64
            }
        })
        .into_shared();
        let out = [1, h.div_ceil(1), w.div_ceil(2)];
        let g = PoolGeom {
            shape: vec![n, h, w, c],
            dims: [n, 1, h, w, c],
            k: [1, 3, 3],
            s: [1, 1, 2],
            pad: [0, 1, 1],
            out,
        };
        let oi = g.out_img();
        let dy = ndarray::ArrayD::from_shape_fn(IxDyn(&g.output_shape()), |ix| {
            1.0 + (ix[0] * 1000 + ix[1] * 100 + ix[2] * 10 + ix[3]) as f64
        })
        .into_shared();
        let got = max_pool_grad("MaxPoolGrad", &g, &x, &dy, false).unwrap();
        // TF's rule, run directly.
        let (ii, xs, dys) = (g.in_img(), x.as_slice().unwrap(), dy.as_slice().unwrap());
        let mut want = vec![0.0; n * ii];
        for img in 0..n {
            g.windows(|p, win| {
                for ch in 0..c {
                    let mut best: Option<(usize, f64)> = None;
                    win.each(|q| {
                        let v = xs[img * ii + q * c + ch];
                        if best.is_none_or(|(_, b)| b < v) {
                            best = Some((q, v));
                        }
                    });
                    if let Some((q, _)) = best {
                        want[img * ii + q * c + ch] += dys[img * oi + p * c + ch];
                    }
                }
            });
        }
        assert_eq!(got.as_slice().unwrap(), &want[..]);
        // Some NaN element took a window's gradient; some element got several windows'.
        assert!((0..h * w).any(|p| xs[ii + p * c + 2].is_nan() && want[ii + p * c + 2] > 0.0));
        assert!(want.iter().any(|&v| v > 2000.0));
        // Both index widths route alike.
        let wide = max_pool_grad_first::<f64, usize>("MaxPoolGrad", &g, xs, dys, n * ii).unwrap();
        assert_eq!(wide, want);
    }

    /// A 2-D geometry (`od`, `oh`, `ow` from VALID-style arithmetic over the padding).
    #[allow(clippy::too_many_arguments)]
    fn geom2(
        [n, h, w, c]: [usize; 4],
        [kh, kw, o]: [usize; 3],
        [sh, sw]: [usize; 2],
        [dh, dw]: [usize; 2],
        [pt, pl]: [usize; 2],
    ) -> ConvGeom {
        let out = |len: usize, k: usize, s: usize, d: usize, p: usize| {
            (len + 2 * p - (k - 1) * d - 1) / s + 1
        };
        ConvGeom {
            sp: 2,
            n,
            d: 1,
            h,
            w,
            c,
            kd: 1,
            kh,
            kw,
            o,
            sd: 1,
            sh,
            sw,
            dd: 1,
            dh,
            dw,
            pf: 0,
            pt,
            pl,
            od: 1,
            oh: out(h, kh, sh, dh, pt),
            ow: out(w, kw, sw, dw, pl),
            depthwise: false,
        }
    }

    /// The chunked products (short last chunk, more chunks than lanes, padding,
    /// strides, a dilated width) against im2col of the whole batch and one product.
    #[test]
    fn chunked_convolution_matches_the_whole_batch_products() {
        let cases = [
            geom2([5, 7, 6, 3], [3, 3, 4], [1, 1], [1, 1], [0, 0]),
            geom2([5, 8, 9, 2], [3, 2, 5], [2, 1], [1, 1], [1, 1]),
            geom2([6, 9, 9, 2], [2, 3, 3], [1, 2], [2, 2], [2, 1]),
            geom2([3, 4, 4, 1], [3, 3, 2], [1, 1], [1, 1], [1, 1]),
        ];
        let val = |seed: usize| {
            move |i: usize| (((i * 7919 + seed * 104_729) % 1000) as f64) / 500.0 - 1.0
        };
        for g in cases {
            let (xl, wl, yl) = (g.n * g.in_image(), g.k() * g.o, g.n * g.out_pixels() * g.o);
            let x: Vec<f64> = (0..xl).map(val(1)).collect();
            let w: Vec<f64> = (0..wl).map(val(2)).collect();
            let dy: Vec<f64> = (0..yl).map(val(3)).collect();
            let (rows, k) = (g.n * g.out_pixels(), g.k());
            let cols = im2col("Conv", &g, &x).unwrap();
            let want_y = matmul2(view2(&cols, rows, k), view2(&w, k, g.o)).unwrap();
            let want_dw =
                matmul2(view2(&cols, rows, k).reversed_axes(), view2(&dy, rows, g.o)).unwrap();
            let dcols = matmul2(view2(&dy, rows, g.o), view2(&w, k, g.o).reversed_axes()).unwrap();
            let want_dx = col2im("Conv", &g, dcols.as_slice().unwrap()).unwrap();
            let per = g.out_pixels() * k;
            for (imgs, lanes) in [(1, 1), (2, 2), (2, 3), (4, 1)] {
                let ch = Chunks {
                    imgs,
                    count: g.n.div_ceil(imgs),
                    lanes: lanes.min(g.n.div_ceil(imgs)),
                    per,
                };
                let close = |got: &[f64], want: &[f64]| {
                    assert_eq!(got.len(), want.len());
                    for (a, b) in got.iter().zip(want) {
                        assert!(
                            (a - b).abs() <= 1e-12 * (1.0 + b.abs()),
                            "{g:?} {ch:?}: {a} vs {b}"
                        );
                    }
                };
                close(
                    &conv_chunked("Conv", &g, &ch, &x, &w, yl).unwrap(),
                    want_y.as_slice().unwrap(),
                );
                close(
                    &backprop_input_chunked("Conv", &g, &ch, &w, &dy, xl).unwrap(),
                    &want_dx,
                );
                close(
                    &backprop_filter_chunked("Conv", &g, &ch, &x, &dy, wl).unwrap(),
                    want_dw.as_slice().unwrap(),
                );
            }
        }
    }
}
