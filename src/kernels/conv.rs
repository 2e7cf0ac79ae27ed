//! Convolution and pooling kernels over NHWC (NDHWC) data: no tapes, no Python.
//!
//! A 2-D or 3-D convolution is `im2col` (each output pixel's receptive field laid out as
//! one row, zeros where the window reaches into the padding) followed by one matrix
//! product with the `[kd*kh*kw*c, o]` filter, through the matmul kernels (a 2-D one has
//! a depth of 1). Its two backprops are the
//! transposed products: the input gradient multiplies by the filter's transpose and
//! scatters the rows back (`col2im`), the filter gradient is `im2colᵀ @ dy`. Depthwise
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

use super::matmul::{matmul2, Gemm};
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
    let c = g.c;
    if g.dw == 1 {
        // One copy per window row, padding written as zeros (so no zero fill first).
        let mut cols = crate::size::try_vec::<T>(op, len)?;
        let run = g.kw * c;
        per_image(&mut cols.spare_capacity_mut()[..len], per, len, |i, out| {
            let x = &x[i * img..(i + 1) * img];
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
        });
        // SAFETY: the window rows of the output pixels tile each image's `per`
        // elements, each written in full, and the images tile `len`.
        unsafe { cols.set_len(len) };
        return Ok(cols);
    }
    let mut cols = crate::size::try_vec_filled(op, len, T::zero())?;
    per_image(&mut cols, per, len, |i, out| {
        let x = &x[i * img..(i + 1) * img];
        g.each_tap(|p, t, px| {
            // An element loop, not `copy_from_slice`: with few channels (a first
            // layer's one) a memcpy call per tap costs more than the copy.
            let row = &mut out[p * k + t * c..][..c];
            for (d, &v) in row.iter_mut().zip(&x[px * c..][..c]) {
                *d = v;
            }
        });
    });
    Ok(cols)
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
    let k = g.k();
    let len = crate::size::check_shape_of::<T>(op, &g.input_shape())?;
    let mut x = crate::size::try_vec_filled(op, len, T::zero())?;
    let img = g.in_image();
    let per = g.out_pixels() * k;
    let c = g.c;
    if g.dw == 1 {
        per_image(&mut x, img, cols.len(), |i, out| {
            let cols = &cols[i * per..(i + 1) * per];
            g.each_row_run(|o, src| {
                if let Some((px, a, b)) = src {
                    let from = &cols[o + a * c..o + b * c];
                    for (d, &s) in out[px..px + (b - a) * c].iter_mut().zip(from) {
                        *d = *d + s;
                    }
                }
            });
        });
        return Ok(x);
    }
    per_image(&mut x, img, cols.len(), |i, out| {
        let cols = &cols[i * per..(i + 1) * per];
        g.each_tap(|p, t, px| {
            let row = &cols[p * k + t * c..][..c];
            for (d, &s) in out[px * c..][..c].iter_mut().zip(row) {
                *d = *d + s;
            }
        });
    });
    Ok(x)
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
        (lo, hi)
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
    let mut out = crate::size::try_vec_filled(op, len, T::neg_infinity())?;
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
/// TF's `MaxPoolGrad` routes its gradient to: the first maximum in scan order,
/// [`NO_ARG`] where no element exceeds the lowest finite value (TF's starting point).
fn argmax<T: Float + Send + Sync>(
    op: &'static str,
    g: &PoolGeom,
    x: &[T],
    n: usize,
) -> Result<Vec<usize>> {
    let c = g.dims[4];
    let (ii, oi) = (g.in_img(), g.out_img());
    let mut arg = crate::size::try_vec_filled(op, n * oi, NO_ARG)?;
    per_image(
        &mut arg,
        oi,
        (n * oi).saturating_mul(g.window_elems()),
        |i, a| {
            let x = &x[i * ii..][..ii];
            let lowest = T::min_value();
            let mut best = vec![lowest; c];
            g.windows(|p, win| {
                // The maximum first (selects, which vectorize; see `max_pool`), then its
                // first occurrence in scan order (the element that first exceeded
                // everything before it), found by walking the window backwards with
                // selects: the last match written is the first in scan order. Branches
                // here would mispredict on random data.
                best.iter_mut().for_each(|b| *b = lowest);
                win.each(|q| {
                    for (b, &v) in best.iter_mut().zip(&x[q * c..][..c]) {
                        *b = if v > *b { v } else { *b };
                    }
                });
                let arow = &mut a[p * c..][..c];
                win.each_rev(|q| {
                    let xs = &x[q * c..][..c];
                    for (ch, ((ai, &v), &b)) in arow.iter_mut().zip(xs).zip(&best).enumerate() {
                        *ai = if v == b { q * c + ch } else { *ai };
                    }
                });
                // No element above the lowest finite value: no gradient (TF's start).
                for (ai, &b) in arow.iter_mut().zip(&best) {
                    *ai = if b > lowest { *ai } else { NO_ARG };
                }
            });
        },
    );
    Ok(arg)
}

/// No element of the window takes the gradient.
const NO_ARG: usize = usize::MAX;

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
    let arg = argmax(op, g, &xs, n)?;
    let (ii, oi) = (g.in_img(), g.out_img());
    let mut out = crate::size::try_vec_filled(op, len, T::zero())?;
    per_image(&mut out, ii, n * oi, |i, o| {
        for (j, &q) in arg[i * oi..(i + 1) * oi].iter().enumerate() {
            if q != NO_ARG {
                o[q] = o[q] + dys[i * oi + j];
            }
        }
    });
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
            if q != NO_ARG {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `max_pool_grad` against a direct search of each window's first maximum, with
    /// overlapping and padded windows, ties and a channel of only the lowest value.
    #[test]
    fn max_pool_grad_routes_to_each_windows_first_maximum() {
        let (n, h, w, c) = (2, 5, 6, 3);
        // Ties everywhere (few distinct values), and one channel of an image all at
        // the lowest finite value: no gradient there.
        let x = ndarray::ArrayD::from_shape_fn(IxDyn(&[n, h, w, c]), |ix| {
            if ix[0] == 1 && ix[3] == 2 {
                f64::MIN
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
        // Each window's first maximum in scan order, found directly.
        let (ii, xs, dys) = (g.in_img(), x.as_slice().unwrap(), dy.as_slice().unwrap());
        let mut want = vec![0.0; n * ii];
        for img in 0..n {
            g.windows(|p, win| {
                for ch in 0..c {
                    let mut best: Option<(usize, f64)> = None;
                    win.each(|q| {
                        let v = xs[img * ii + q * c + ch];
                        if v > f64::MIN && best.is_none_or(|(_, b)| v > b) {
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
        // The all-lowest channel got nothing; some other element got several windows'.
        assert!((0..h * w).all(|p| want[ii + p * c + 2] == 0.0));
        assert!(want.iter().any(|&v| v > 2000.0));
    }
}
