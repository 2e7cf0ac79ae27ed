//! Convolutions (conv1d, conv2d, conv2d_transpose, depthwise_conv2d, conv3d,
//! conv3d_transpose), pooling (max and average, 1 to 3 spatial axes) and fused batch
//! normalization, all NHWC (NWC, NDHWC).
//!
//! A 2-D or 3-D convolution and its two backprops are three primitives over one
//! geometry ([`ConvGeom`], a 2-D one being of depth 1): `Conv2D(x, w)`,
//! `Conv2DBackpropInput(w, dy)` and `Conv2DBackpropFilter(x, dy)` (`Conv3D`,
//! `Conv3DBackpropInputV2`, `Conv3DBackpropFilterV2`). Each is bilinear, and the gradient
//! of each is written with the other two (and itself), so gradients of gradients come
//! free. The same holds for the depthwise trio (`DepthwiseConv2dNative*`). Max pooling's
//! gradient (`MaxPoolGrad`, linear in `dy`) and its gradient (`MaxPoolGradGrad`) are
//! likewise a pair; `AvgPool` and `AvgPoolGrad` are each other's adjoints. conv1d and
//! conv2d_transpose are conv2d's primitives under other shapes, as in TF (conv3d_transpose
//! likewise conv3d's); fused batch normalization is composed of engine ops.

use super::{grads, record, Grads, Op, VjpCx};
use crate::error::{Error, Result};
use crate::kernels::conv::{self as k, ConvGeom, PoolGeom};
use crate::ops::{
    add, expand_dims, multiply, reduce_mean, reshape, rsqrt, scalar_like, square, squeeze,
    stop_gradient, subtract, transpose,
};
use crate::tensor::{Data, Tensor};

/// How a convolution or pooling pads its input (TF's `padding`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Padding {
    /// Output size `ceil(in / stride)`; the padding needed is split with the smaller
    /// half first (TF's asymmetric split).
    Same,
    /// No padding: only windows inside the input.
    Valid,
    /// `(before, after)` per spatial axis.
    Explicit(Vec<(usize, usize)>),
}

/// Output size and padding before, along one spatial axis.
fn out_dim(
    op: &'static str,
    input: usize,
    k: usize,
    s: usize,
    d: usize,
    pad: Option<(usize, usize)>,
    same: bool,
) -> Result<(usize, usize)> {
    if s == 0 {
        return Err(Error::invalid(op, "Stride must be > 0, but got 0"));
    }
    if d == 0 {
        return Err(Error::invalid(op, "Dilation rate must be > 0, but got 0"));
    }
    if k == 0 {
        return Err(Error::invalid(
            op,
            "Sliding window ksize (filter size) must be positive, got 0",
        ));
    }
    let too_big = || Error::invalid(op, "window size overflows (filter size times dilation)");
    let eff = (k - 1)
        .checked_mul(d)
        .and_then(|v| v.checked_add(1))
        .ok_or_else(too_big)?;
    if same {
        let out = input.div_ceil(s);
        let needed = (out.saturating_sub(1))
            .checked_mul(s)
            .and_then(|v| v.checked_add(eff))
            .ok_or_else(too_big)?;
        let total = needed.saturating_sub(input);
        return Ok((out, total / 2));
    }
    let (before, after) = pad.unwrap_or((0, 0));
    let padded = input
        .checked_add(before)
        .and_then(|v| v.checked_add(after))
        .ok_or_else(too_big)?;
    // TF's `(input - effective + stride) / stride`, truncated toward zero: a window a
    // little larger than the input gives an empty output, not an error.
    let out = (padded as i128 - eff as i128 + s as i128) / s as i128;
    if out < 0 {
        return Err(Error::invalid(
            op,
            format!(
                "Computed output size would be negative: {out} [input_size: {input}, effective_filter_size: {eff}, stride: {s}]"
            ),
        ));
    }
    Ok((out as usize, before))
}

/// The geometry of a 2-D or 3-D convolution (`strides.len()` spatial axes) of `x`
/// (NHWC / NDHWC) with `w` (`[kh, kw, c, o]` / `[kd, kh, kw, c, o]`).
fn conv_geom(
    op: &'static str,
    x: &[usize],
    w: &[usize],
    strides: &[usize],
    padding: &Padding,
    dilations: &[usize],
    depthwise: bool,
) -> Result<ConvGeom> {
    let sp = strides.len();
    debug_assert!((sp == 2 || sp == 3) && dilations.len() == sp);
    if x.len() != sp + 2 {
        return Err(Error::invalid(
            op,
            format!("input must be {}-dimensional{x:?}", sp + 2),
        ));
    }
    if w.len() != sp + 2 {
        return Err(Error::invalid(
            op,
            format!("filter must be {}-dimensional: {w:?}", sp + 2),
        ));
    }
    if x[sp + 1] != w[sp] {
        return Err(Error::invalid(
            op,
            if depthwise {
                format!(
                    "input and filter must have the same depth: {} vs {}",
                    x[sp + 1],
                    w[sp]
                )
            } else {
                format!(
                    "input depth must be evenly divisible by filter depth: {} vs {}",
                    x[sp + 1],
                    w[sp]
                )
            },
        ));
    }
    let pads: Vec<Option<(usize, usize)>> = match padding {
        Padding::Explicit(p) if p.len() == sp => p.iter().copied().map(Some).collect(),
        Padding::Explicit(p) => {
            let msg = format!(
                "explicit padding needs one (before, after) pair per spatial dimension ({sp}), got {}",
                p.len()
            );
            return Err(Error::invalid(op, msg));
        }
        _ => vec![None; sp],
    };
    let same = *padding == Padding::Same;
    // Per spatial axis (depth first; a 2-D convolution has a depth of 1):
    // (input, kernel, stride, dilation, output, padding before).
    let mut ax = [(1, 1, 1, 1, 1, 0); 3];
    for i in 0..sp {
        let (out, before) = out_dim(op, x[i + 1], w[i], strides[i], dilations[i], pads[i], same)?;
        ax[3 - sp + i] = (x[i + 1], w[i], strides[i], dilations[i], out, before);
    }
    let [d, h, wd] = ax;
    let g = ConvGeom {
        sp,
        n: x[0],
        d: d.0,
        h: h.0,
        w: wd.0,
        c: x[sp + 1],
        kd: d.1,
        kh: h.1,
        kw: wd.1,
        o: w[sp + 1],
        sd: d.2,
        sh: h.2,
        sw: wd.2,
        dd: d.3,
        dh: h.3,
        dw: wd.3,
        pf: d.5,
        pt: h.5,
        pl: wd.5,
        od: d.4,
        oh: h.4,
        ow: wd.4,
        depthwise,
    };
    crate::size::num_elements(op, &g.output_shape())?;
    Ok(g)
}

/// The names of `g`'s three primitives (TF's op types).
fn names(g: &ConvGeom) -> [&'static str; 3] {
    if g.depthwise {
        [
            "DepthwiseConv2dNative",
            "DepthwiseConv2dNativeBackpropInput",
            "DepthwiseConv2dNativeBackpropFilter",
        ]
    } else if g.sp == 3 {
        ["Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2"]
    } else {
        ["Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"]
    }
}

/// The convolution of geometry `g` (`x`, `w` of its shapes), recorded.
fn conv_g(g: &ConvGeom, x: &Tensor, w: &Tensor) -> Result<Tensor> {
    let op = names(g)[0];
    if let (Data::I32(a), Data::I32(b)) = (x.data(), w.data()) {
        // Integers (TF's CPU Conv2D): forward only, nothing recorded.
        return Ok(Tensor::new(Data::I32(
            k::conv_int(op, g, a, b)?.into_shared(),
        )));
    }
    let out = Tensor::new(
        map_pair!(op, x.data(), w.data(), [F32, F64] via [F16], a, b => {
            k::conv(op, g, a, b)?
        }),
    );
    record(Conv { g: g.clone() }, &[x, w], &[&out])?;
    Ok(out)
}

/// The input gradient of `g`'s convolution from the filter `w` and `dy`, recorded.
fn backprop_input_g(g: &ConvGeom, w: &Tensor, dy: &Tensor) -> Result<Tensor> {
    let op = names(g)[1];
    if let (Data::I32(a), Data::I32(b)) = (w.data(), dy.data()) {
        // Integers (TF's CPU Conv2DBackpropInput): forward only, nothing recorded.
        return Ok(Tensor::new(Data::I32(
            k::backprop_input_int(op, g, a, b)?.into_shared(),
        )));
    }
    let out = Tensor::new(
        map_pair!(op, w.data(), dy.data(), [F32, F64] via [F16], a, b => {
            k::backprop_input(op, g, a, b)?
        }),
    );
    record(BackpropInput { g: g.clone() }, &[w, dy], &[&out])?;
    Ok(out)
}

/// The filter gradient of `g`'s convolution from the input `x` and `dy`, recorded.
fn backprop_filter_g(g: &ConvGeom, x: &Tensor, dy: &Tensor) -> Result<Tensor> {
    let op = names(g)[2];
    let out = Tensor::new(
        map_pair!(op, x.data(), dy.data(), [F32, F64] via [F16], a, b => {
            k::backprop_filter(op, g, a, b)?
        }),
    );
    record(BackpropFilter { g: g.clone() }, &[x, dy], &[&out])?;
    Ok(out)
}

/// `a + b` where both may be missing.
fn sum_opt(a: Option<Tensor>, b: Option<Tensor>) -> Result<Option<Tensor>> {
    Ok(match (a, b) {
        (Some(a), Some(b)) => Some(add(&a, &b)?),
        (a, b) => a.or(b),
    })
}

/// The tangent of a bilinear `f(p, q)`: `f(dp, q) + f(p, dq)`.
fn bilinear_jvp(
    cx: &VjpCx<'_>,
    tangents: &[Option<Tensor>],
    f: impl Fn(&Tensor, &Tensor) -> Result<Tensor>,
) -> Result<Grads> {
    let (p, q) = (cx.input(0)?, cx.input(1)?);
    let a = tangents
        .first()
        .cloned()
        .flatten()
        .map(|dp| f(&dp, q))
        .transpose()?;
    let b = tangents
        .get(1)
        .cloned()
        .flatten()
        .map(|dq| f(p, &dq))
        .transpose()?;
    Ok(grads![sum_opt(a, b)?])
}

/// `Conv2D(x, w)`. Gradient: `dx = Conv2DBackpropInput(w, dy)`,
/// `dw = Conv2DBackpropFilter(x, dy)`.
struct Conv {
    g: ConvGeom,
}
impl Op for Conv {
    fn name(&self) -> &'static str {
        names(&self.g)[0]
    }
    fn batched(&self) -> bool {
        true
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let (dy, b) = (&dys[0], cx.batch());
        let dx = if cx.needs(0) {
            Some(prim_batched(Prim::Input, &self.g, cx.input(1)?, dy, b, 1)?)
        } else {
            None
        };
        let dw = if cx.needs(1) {
            Some(prim_batched(Prim::Filter, &self.g, cx.input(0)?, dy, b, 1)?)
        } else {
            None
        };
        Ok(grads![dx, dw])
    }
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        Some(bilinear_jvp(cx, tangents, |x, w| conv_g(&self.g, x, w)))
    }
}

/// `Conv2DBackpropInput(w, dy)`: `z = col2im(dy @ wᵀ)`. Gradient from `dz`:
/// `dw = Conv2DBackpropFilter(dz, dy)`, `ddy = Conv2D(dz, w)`.
struct BackpropInput {
    g: ConvGeom,
}
impl Op for BackpropInput {
    fn name(&self) -> &'static str {
        names(&self.g)[1]
    }
    fn batched(&self) -> bool {
        true
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let (dz, b) = (&dys[0], cx.batch());
        let dw = if cx.needs(0) {
            Some(prim_batched(Prim::Filter, &self.g, dz, cx.input(1)?, b, 0)?)
        } else {
            None
        };
        let ddy = if cx.needs(1) {
            Some(prim_batched(Prim::Conv, &self.g, dz, cx.input(0)?, b, 0)?)
        } else {
            None
        };
        Ok(grads![dw, ddy])
    }
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        Some(bilinear_jvp(cx, tangents, |w, dy| {
            backprop_input_g(&self.g, w, dy)
        }))
    }
}

/// `Conv2DBackpropFilter(x, dy)`: `im2col(x)ᵀ @ dy`. Gradient from `dg`:
/// `dx = Conv2DBackpropInput(dg, dy)`, `ddy = Conv2D(x, dg)`.
struct BackpropFilter {
    g: ConvGeom,
}
impl Op for BackpropFilter {
    fn name(&self) -> &'static str {
        names(&self.g)[2]
    }
    fn batched(&self) -> bool {
        true
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let (dg, b) = (&dys[0], cx.batch());
        let dx = if cx.needs(0) {
            Some(prim_batched(Prim::Input, &self.g, dg, cx.input(1)?, b, 0)?)
        } else {
            None
        };
        let ddy = if cx.needs(1) {
            Some(prim_batched(Prim::Conv, &self.g, cx.input(0)?, dg, b, 1)?)
        } else {
            None
        };
        Ok(grads![dx, ddy])
    }
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        Some(bilinear_jvp(cx, tangents, |x, dy| {
            backprop_filter_g(&self.g, x, dy)
        }))
    }
}

// ---------------------------------------------------------------------------
// Batched seeds (jacobians): a rule's gradient arrives with `cx.batch()` leading axes.
// Each primitive is linear in the batched argument, so the batch is folded into an
// axis the primitive already sums or maps over: the image axis when the other argument
// has none (a filter), else a channel axis (the batch rows become independent channel
// blocks). Depthwise convolutions couple input channel `c` with output channels
// `c*m..(c+1)*m`, so there the unbatched argument is tiled along the new blocks too.

/// The leading `batch` axes of `t` and their product.
fn lead_of(t: &Tensor, batch: usize) -> (Vec<usize>, usize) {
    let lead = t.shape()[..batch].to_vec();
    let bf = lead.iter().product();
    (lead, bf)
}

/// `t` (`[lead.., rest..]`) as `[bf * rest[0], rest[1..]..]`: the batch folded into the
/// first axis of the unbatched shape (the images).
fn fold_images(t: &Tensor, batch: usize) -> Result<Tensor> {
    let s = t.shape();
    let mut shape = vec![s[..=batch].iter().product()];
    shape.extend_from_slice(&s[batch + 1..]);
    reshape(t, &shape)
}

/// `[bf * n, rest..]` back to `[lead.., n, rest..]`.
fn unfold_images(t: &Tensor, lead: &[usize], bf: usize) -> Result<Tensor> {
    let s = t.shape();
    let mut shape = lead.to_vec();
    shape.push(s[0] / bf.max(1));
    shape.extend_from_slice(&s[1..]);
    reshape(t, &shape)
}

/// `t` (`[lead.., d..]`, the batch `bf` rows) with the rows moved into axis `axis` of
/// `d`: that axis (of size `outer * inner`) becomes `outer * bf * inner`, row `b`'s
/// entries at `(o, b, i)`.
fn batch_into(t: &Tensor, batch: usize, axis: usize, outer: usize) -> Result<Tensor> {
    let s = t.shape();
    let bf: usize = s[..batch].iter().product();
    let d = &s[batch..];
    let inner = d[axis] / outer.max(1);
    let mut split = vec![bf];
    split.extend_from_slice(&d[..axis]);
    split.extend_from_slice(&[outer, inner]);
    split.extend_from_slice(&d[axis + 1..]);
    let t = reshape(t, &split)?;
    // [bf, d<axis.., outer, inner, d>axis..] -> [d<axis.., outer, bf, inner, d>axis..]
    let r = split.len();
    let perm: Vec<usize> = (1..=axis + 1).chain([0]).chain(axis + 2..r).collect();
    let t = transpose(&t, Some(&perm))?;
    let mut merged = d.to_vec();
    merged[axis] *= bf;
    reshape(&t, &merged)
}

/// The inverse of [`batch_into`]: axis `axis` of `t` (size `outer * bf * inner`) split
/// into the rows `[lead.., d..]` (axis size `outer * inner`).
fn batch_out_of(
    t: &Tensor,
    lead: &[usize],
    bf: usize,
    axis: usize,
    outer: usize,
) -> Result<Tensor> {
    let d = t.shape().to_vec();
    let inner = d[axis] / (outer * bf).max(1);
    let mut split = d[..axis].to_vec();
    split.extend_from_slice(&[outer, bf, inner]);
    split.extend_from_slice(&d[axis + 1..]);
    let t = reshape(t, &split)?;
    // [d<axis.., outer, bf, inner, d>axis..] -> [bf, d<axis.., outer, inner, d>axis..]
    let r = split.len();
    let perm: Vec<usize> = [axis + 1]
        .into_iter()
        .chain(0..=axis)
        .chain(axis + 2..r)
        .collect();
    let t = transpose(&t, Some(&perm))?;
    let mut shape = lead.to_vec();
    shape.extend_from_slice(&d);
    shape[lead.len() + axis] = d[axis] / bf.max(1);
    reshape(&t, &shape)
}

/// `t` repeated `bf` times as batch rows (`[bf, t..]`), to go with batched rows of the
/// other argument of a depthwise primitive.
fn tile_rows(t: &Tensor, bf: usize) -> Result<Tensor> {
    let mut shape = vec![bf];
    shape.extend_from_slice(t.shape());
    crate::ops::broadcast_to(t, &shape)
}

/// The three primitives of one convolution geometry.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Prim {
    /// `Conv2D(x, w)`.
    Conv,
    /// `Conv2DBackpropInput(w, dy)`.
    Input,
    /// `Conv2DBackpropFilter(x, dy)`.
    Filter,
}

fn run_prim(prim: Prim, g: &ConvGeom, p: &Tensor, q: &Tensor) -> Result<Tensor> {
    match prim {
        Prim::Conv => conv_g(g, p, q),
        Prim::Input => backprop_input_g(g, p, q),
        Prim::Filter => backprop_filter_g(g, p, q),
    }
}

/// `prim(p, q)` where argument `which` (0: `p`, 1: `q`) has `batch` leading axes (a
/// jacobian's batched seed) and the other none; the result has the same leading axes.
/// Linear in the batched argument, so every row goes through one call.
fn prim_batched(
    prim: Prim,
    g: &ConvGeom,
    p: &Tensor,
    q: &Tensor,
    batch: usize,
    which: usize,
) -> Result<Tensor> {
    if batch == 0 {
        return run_prim(prim, g, p, q);
    }
    let t = if which == 0 { p } else { q };
    let (lead, bf) = lead_of(t, batch);
    let mut gb = g.clone();
    // The channel axis of (p, q, output) where depthwise blocks (and non-depthwise free
    // channels) sit: images are NHWC / NDHWC (axis `sp + 1`), filters HWCO / DHWCO
    // (input channels at `sp`, output channels at `sp + 1`).
    let (fi, ch) = (g.sp, g.sp + 1);
    let (pa, qa, oa) = match prim {
        Prim::Conv => (ch, fi, ch),
        Prim::Input => (fi, ch, ch),
        Prim::Filter => (ch, ch, fi),
    };
    if g.depthwise {
        // Channel blocks: the unbatched argument is tiled, every row its own channels.
        gb.c *= bf;
        let tiled = |u: &Tensor, axis| batch_into(&tile_rows(u, bf)?, 1, axis, 1);
        let (p2, q2) = if which == 0 {
            (batch_into(p, batch, pa, 1)?, tiled(q, qa)?)
        } else {
            (tiled(p, pa)?, batch_into(q, batch, qa, 1)?)
        };
        return batch_out_of(&run_prim(prim, &gb, &p2, &q2)?, &lead, bf, oa, 1);
    }
    // Non-depthwise: an image argument beside a filter takes the rows as images.
    let images = matches!((prim, which), (Prim::Conv, 0) | (Prim::Input, 1));
    if images {
        gb.n *= bf;
        let f = fold_images(t, batch)?;
        let out = if which == 0 {
            run_prim(prim, &gb, &f, q)?
        } else {
            run_prim(prim, &gb, p, &f)?
        };
        return unfold_images(&out, &lead, bf);
    }
    // Else the rows become blocks of the argument's free channels: a filter's output
    // channels (Conv), a filter's input channels (Input), the image's input channels or
    // dy's output channels (Filter).
    let (axis, out_axis) = match (prim, which) {
        (Prim::Conv, _) => {
            gb.o *= bf;
            (ch, ch)
        }
        (Prim::Input, _) => {
            gb.c *= bf;
            (fi, ch)
        }
        (Prim::Filter, 0) => {
            gb.c *= bf;
            (ch, fi)
        }
        (Prim::Filter, _) => {
            gb.o *= bf;
            (ch, ch)
        }
    };
    let moved = batch_into(t, batch, axis, 1)?;
    let out = if which == 0 {
        run_prim(prim, &gb, &moved, q)?
    } else {
        run_prim(prim, &gb, p, &moved)?
    };
    batch_out_of(&out, &lead, bf, out_axis, 1)
}

fn check_float(op: &'static str, x: &Tensor) -> Result<()> {
    use crate::dtype::DType;
    if !matches!(x.dtype(), DType::F16 | DType::F32 | DType::F64) {
        return Err(Error::unsupported(op, x.dtype()));
    }
    Ok(())
}

/// [`check_float`], or `int32` where `int32` is allowed (TF's CPU `Conv2D` and
/// `Conv2DBackpropInput`: forward only).
fn check_float_or_int32(op: &'static str, x: &Tensor, int32: bool) -> Result<()> {
    if int32 && x.dtype() == crate::dtype::DType::I32 {
        return Ok(());
    }
    check_float(op, x)
}

/// 2-D convolution of `input` (`[batch, height, width, in_channels]`) with `filters`
/// (`[filter_height, filter_width, in_channels, out_channels]`): each output pixel is
/// the sum over its window of input times filter. `strides` and `dilations` are per
/// spatial axis (height, width). Axes before the last three are all batch axes (TF's
/// `squeeze_batch_dims`); a filter whose `in_channels` divides the input's computes
/// TF's grouped convolution (each block of input channels with its block of output
/// channels); `int32` is computed too (forward only, as TF's CPU kernel). TF
/// equivalent: `tf.nn.conv2d` (NHWC). Gradients: `Conv2DBackpropInput` and
/// `Conv2DBackpropFilter`, themselves differentiable.
pub fn conv2d(
    input: &Tensor,
    filters: &Tensor,
    strides: [usize; 2],
    padding: &Padding,
    dilations: [usize; 2],
) -> Result<Tensor> {
    let op = "Conv2D";
    // TF's squeeze_batch_dims: leading axes before the last three are one batch.
    if input.ndim() > 4 {
        let s = input.shape();
        let split = s.len() - 3;
        let mut folded = vec![s[..split].iter().product()];
        folded.extend_from_slice(&s[split..]);
        let y = conv2d(
            &reshape(input, &folded)?,
            filters,
            strides,
            padding,
            dilations,
        )?;
        let mut shape = s[..split].to_vec();
        shape.extend_from_slice(&y.shape()[1..]);
        return reshape(&y, &shape);
    }
    // TF's grouped convolution: the filter's input depth divides the input's; each of
    // the `groups` channel blocks of the input is convolved with its block of output
    // channels, and the results are concatenated.
    let (xs, ws) = (input.shape(), filters.shape());
    if xs.len() == 4 && ws.len() == 4 && ws[2] > 0 && xs[3] != ws[2] && xs[3].is_multiple_of(ws[2])
    {
        let groups = xs[3] / ws[2];
        if !ws[3].is_multiple_of(groups) {
            return Err(Error::invalid(
                op,
                format!(
                    "output depth {} is not a multiple of the number of groups {groups} (input depth {} / filter depth {})",
                    ws[3], xs[3], ws[2]
                ),
            ));
        }
        check_float_or_int32(op, input, true)?;
        let parts_x = crate::ops::split(input, &crate::ops::SplitSpec::Num(groups), 3)?;
        let parts_w = crate::ops::split(filters, &crate::ops::SplitSpec::Num(groups), 3)?;
        let ys = parts_x
            .iter()
            .zip(&parts_w)
            .map(|(x, w)| conv_nd(op, x, w, &strides, padding, &dilations))
            .collect::<Result<Vec<_>>>()?;
        return crate::ops::concat(&ys, 3);
    }
    conv_nd(op, input, filters, &strides, padding, &dilations)
}

/// 3-D convolution of `input` (`[batch, depth, height, width, in_channels]`) with
/// `filters` (`[filter_depth, filter_height, filter_width, in_channels,
/// out_channels]`); `strides` and `dilations` per spatial axis (depth, height,
/// width). TF equivalent: `tf.nn.conv3d` (NDHWC). Gradients: `Conv3DBackpropInputV2`
/// and `Conv3DBackpropFilterV2`, themselves differentiable (the 2-D primitives over
/// one more axis).
pub fn conv3d(
    input: &Tensor,
    filters: &Tensor,
    strides: [usize; 3],
    padding: &Padding,
    dilations: [usize; 3],
) -> Result<Tensor> {
    conv_nd("Conv3D", input, filters, &strides, padding, &dilations)
}

/// A 2-D or 3-D convolution (`strides.len()` spatial axes).
fn conv_nd(
    op: &'static str,
    input: &Tensor,
    filters: &Tensor,
    strides: &[usize],
    padding: &Padding,
    dilations: &[usize],
) -> Result<Tensor> {
    check_float_or_int32(op, input, strides.len() == 2)?;
    let g = conv_geom(
        op,
        input.shape(),
        filters.shape(),
        strides,
        padding,
        dilations,
        false,
    )?;
    conv_g(&g, input, filters)
}

/// 1-D convolution of `input` (`[batch, width, in_channels]`) with `filters`
/// (`[filter_width, in_channels, out_channels]`). TF equivalent: `tf.nn.conv1d`
/// (NWC): a [`conv2d`] over a height of 1, as TF computes it.
pub fn conv1d(
    input: &Tensor,
    filters: &Tensor,
    stride: usize,
    padding: &Padding,
    dilation: usize,
) -> Result<Tensor> {
    let op = "Conv2D";
    if input.ndim() < 3 {
        return Err(Error::invalid(
            op,
            format!(
                "conv1d: input must be at least 3-dimensional [batch..., width, channels], got shape {:?}",
                input.shape()
            ),
        ));
    }
    if filters.ndim() != 3 {
        return Err(Error::invalid(
            op,
            format!("conv1d: filters must be 3-dimensional [width, in_channels, out_channels], got shape {:?}", filters.shape()),
        ));
    }
    let padding = match padding {
        Padding::Explicit(p) if p.len() == 1 => Padding::Explicit(vec![(0, 0), p[0]]),
        p => p.clone(),
    };
    // The height axis goes before the width (TF's `spatial_start_dim = -3`); leading
    // batch axes stay (conv2d folds them).
    let y = conv2d(
        &expand_dims(input, -3)?,
        &expand_dims(filters, 0)?,
        [1, stride],
        &padding,
        [1, dilation],
    )?;
    squeeze(&y, Some(&[-3]))
}

/// The transpose (adjoint) of [`conv2d`]: from `input` shaped like conv2d's output,
/// the `output_shape`-shaped tensor whose conv2d gradient it is. `filters` is
/// `[filter_height, filter_width, output_channels, in_channels]`. TF equivalent:
/// `tf.nn.conv2d_transpose` (op `Conv2DBackpropInput`).
pub fn conv2d_transpose(
    input: &Tensor,
    filters: &Tensor,
    output_shape: &[usize],
    strides: [usize; 2],
    padding: &Padding,
    dilations: [usize; 2],
) -> Result<Tensor> {
    let op = "Conv2DBackpropInput";
    conv_transpose_nd(
        op,
        input,
        filters,
        output_shape,
        &strides,
        padding,
        &dilations,
    )
}

/// The transpose (adjoint) of [`conv3d`]: from `input` shaped like conv3d's output,
/// the `output_shape`-shaped (NDHWC) tensor whose conv3d gradient it is. `filters` is
/// `[filter_depth, filter_height, filter_width, output_channels, in_channels]`. TF
/// equivalent: `tf.nn.conv3d_transpose` (op `Conv3DBackpropInputV2`).
pub fn conv3d_transpose(
    input: &Tensor,
    filters: &Tensor,
    output_shape: &[usize],
    strides: [usize; 3],
    padding: &Padding,
    dilations: [usize; 3],
) -> Result<Tensor> {
    let op = "Conv3DBackpropInputV2";
    conv_transpose_nd(
        op,
        input,
        filters,
        output_shape,
        &strides,
        padding,
        &dilations,
    )
}

/// The input gradient of a 2-D or 3-D convolution, as a transposed convolution.
fn conv_transpose_nd(
    op: &'static str,
    input: &Tensor,
    filters: &Tensor,
    output_shape: &[usize],
    strides: &[usize],
    padding: &Padding,
    dilations: &[usize],
) -> Result<Tensor> {
    check_float_or_int32(op, input, strides.len() == 2)?;
    let rank = strides.len() + 2;
    if output_shape.len() != rank {
        return Err(Error::invalid(
            op,
            format!(
                "output_shape must have {rank} elements, got {}",
                output_shape.len()
            ),
        ));
    }
    let g = conv_geom(
        op,
        output_shape,
        filters.shape(),
        strides,
        padding,
        dilations,
        false,
    )?;
    if input.shape() != g.output_shape().as_slice() {
        return Err(Error::invalid(
            op,
            format!(
                "input (out_backprop) has shape {:?}, but a convolution from output_shape {output_shape:?} with this filter, strides and padding makes {:?}",
                input.shape(),
                g.output_shape()
            ),
        ));
    }
    backprop_input_g(&g, filters, input)
}

/// Depthwise 2-D convolution: each input channel convolved with its own
/// `channel_multiplier` filters (`filter` is `[filter_height, filter_width,
/// in_channels, channel_multiplier]`), output channel `c * multiplier + m`.
/// TF equivalent: `tf.nn.depthwise_conv2d` (NHWC).
pub fn depthwise_conv2d(
    input: &Tensor,
    filter: &Tensor,
    strides: [usize; 2],
    padding: &Padding,
    dilations: [usize; 2],
) -> Result<Tensor> {
    let op = "DepthwiseConv2dNative";
    check_float(op, input)?;
    let g = conv_geom(
        op,
        input.shape(),
        filter.shape(),
        &strides,
        padding,
        &dilations,
        true,
    )?;
    conv_g(&g, input, filter)
}

/// Which pooling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolKind {
    Max,
    Avg,
}

fn pool_geom(
    op: &'static str,
    x: &[usize],
    ksize: &[usize],
    strides: &[usize],
    padding: &Padding,
) -> Result<PoolGeom> {
    let sp = x.len().wrapping_sub(2);
    if !(1..=3).contains(&sp) {
        return Err(Error::invalid(
            op,
            format!("input must be 3-, 4- or 5-dimensional (1 to 3 spatial dimensions), got shape {x:?}"),
        ));
    }
    if ksize.len() != sp || strides.len() != sp {
        return Err(Error::invalid(
            op,
            format!(
                "ksize and strides must have one entry per spatial dimension ({sp}), got {ksize:?} and {strides:?}"
            ),
        ));
    }
    if let Some(&z) = ksize.iter().find(|&&k| k == 0) {
        let _ = z;
        return Err(Error::invalid(
            op,
            format!("Sliding window ksize must be positive. The specified or inferred ksize is: {ksize:?}"),
        ));
    }
    let (same, pads) = match padding {
        Padding::Same => (true, None),
        Padding::Valid => (false, None),
        // TF's MaxPool (1-D, 2-D) takes explicit padding; AvgPool and MaxPool3D do not.
        Padding::Explicit(p) if op == "MaxPool" && p.len() == sp => (false, Some(p)),
        Padding::Explicit(p) if op == "MaxPool" => {
            return Err(Error::invalid(
                op,
                format!(
                    "explicit padding needs one (before, after) pair per spatial dimension ({sp}), got {}",
                    p.len()
                ),
            ))
        }
        Padding::Explicit(_) => {
            return Err(Error::invalid(
                op,
                "explicit padding is supported by 1-D and 2-D max pooling only; this pooling takes padding 'SAME' or 'VALID'",
            ))
        }
    };
    let mut dims = [x[0], 1, 1, 1, x[x.len() - 1]];
    let (mut k, mut s, mut pad, mut out) = ([1; 3], [1; 3], [0; 3], [1; 3]);
    for i in 0..sp {
        let a = 3 - sp + i;
        dims[a + 1] = x[1 + i];
        k[a] = ksize[i];
        s[a] = strides[i];
        let p = pads.map(|p| p[i]);
        let (o, p) = out_dim(op, x[1 + i], ksize[i], strides[i], 1, p, same)?;
        out[a] = o;
        pad[a] = p;
    }
    let g = PoolGeom {
        shape: x.to_vec(),
        dims,
        k,
        s,
        pad,
        out,
    };
    crate::size::num_elements(op, &g.output_shape())?;
    Ok(g)
}

fn pool_names(kind: PoolKind, sp: usize) -> [&'static str; 3] {
    match (kind, sp) {
        (PoolKind::Max, 3) => ["MaxPool3D", "MaxPool3DGrad", "MaxPool3DGradGrad"],
        (PoolKind::Max, _) => ["MaxPool", "MaxPoolGrad", "MaxPoolGradGrad"],
        (PoolKind::Avg, 3) => ["AvgPool3D", "AvgPool3DGrad", ""],
        (PoolKind::Avg, _) => ["AvgPool", "AvgPoolGrad", ""],
    }
}

/// Max or average pooling of `input` (`[batch, spatial..., channels]`, 1 to 3 spatial
/// axes) over windows of `ksize` moved by `strides`. Max pooling's gradient goes to the
/// first maximum of each window (scan order), as TF's `MaxPoolGrad`; average pooling
/// divides by the number of window elements inside the input (SAME's padding is not
/// counted), as TF's. Max pooling in 1-D and 2-D also takes [`Padding::Explicit`]
/// (padded cells are never candidates), and follows TF's CPU `MaxPool` with NaNs: each
/// window starts at the lowest finite value and takes only larger elements. TF
/// equivalent: `tf.nn.max_pool` / `tf.nn.avg_pool` (and their 1d/2d/3d forms).
pub fn pool(
    kind: PoolKind,
    input: &Tensor,
    ksize: &[usize],
    strides: &[usize],
    padding: &Padding,
) -> Result<Tensor> {
    let sp = input.ndim().wrapping_sub(2);
    let op = pool_names(kind, sp)[0];
    check_float(op, input)?;
    let g = pool_geom(op, input.shape(), ksize, strides, padding)?;
    pool_g(kind, &g, input)
}

fn pool_g(kind: PoolKind, g: &PoolGeom, x: &Tensor) -> Result<Tensor> {
    let op = pool_names(kind, g.shape.len() - 2)[0];
    let out = Tensor::new(match kind {
        PoolKind::Max => {
            map_dtypes!(op, x.data(), [F32, F64] via [F16], a => k::max_pool(op, g, a)?)
        }
        PoolKind::Avg => {
            map_dtypes!(op, x.data(), [F32, F64] via [F16], a => k::avg_pool(op, g, a)?)
        }
    });
    match kind {
        PoolKind::Max => record(MaxPool { g: g.clone() }, &[x], &[&out])?,
        PoolKind::Avg => record(AvgPool { g: g.clone() }, &[x], &[&out])?,
    }
    Ok(out)
}

/// A pooling primitive `f(geometry, x, t)`, linear in `t`, for a `t` with `batch`
/// leading axes (a jacobian's batched seed): the rows become extra images (`x`, when
/// the primitive reads it, tiled to match), one call for all of them.
fn pool_batched(
    g: &PoolGeom,
    x: Option<&Tensor>,
    t: &Tensor,
    batch: usize,
    f: impl Fn(&PoolGeom, Option<&Tensor>, &Tensor) -> Result<Tensor>,
) -> Result<Tensor> {
    if batch == 0 {
        return f(g, x, t);
    }
    let (lead, bf) = lead_of(t, batch);
    let mut gb = g.clone();
    gb.shape[0] *= bf;
    gb.dims[0] *= bf;
    let x = x.map(|x| fold_images(&tile_rows(x, bf)?, 1)).transpose()?;
    let out = f(&gb, x.as_ref(), &fold_images(t, batch)?)?;
    unfold_images(&out, &lead, bf)
}

fn max_pool_grad_g(g: &PoolGeom, x: &Tensor, dy: &Tensor) -> Result<Tensor> {
    let op = pool_names(PoolKind::Max, g.shape.len() - 2)[1];
    // TF's MaxPool3DGrad gives `dy` to every element equal to its window's maximum;
    // MaxPoolGrad (1-D, 2-D) and both GradGrads use the first maximum only.
    let all_ties = g.shape.len() == 5;
    let out = Tensor::new(
        map_pair!(op, x.data(), dy.data(), [F32, F64] via [F16], a, b => {
            k::max_pool_grad(op, g, a, b, all_ties)?
        }),
    );
    record(
        MaxPoolGrads {
            g: g.clone(),
            second: false,
        },
        &[x, dy],
        &[&out],
    )?;
    Ok(out)
}

fn max_pool_grad_grad_g(g: &PoolGeom, x: &Tensor, ddx: &Tensor) -> Result<Tensor> {
    let op = pool_names(PoolKind::Max, g.shape.len() - 2)[2];
    let out = Tensor::new(
        map_pair!(op, x.data(), ddx.data(), [F32, F64] via [F16], a, b => {
            k::max_pool_grad_grad(op, g, a, b)?
        }),
    );
    record(
        MaxPoolGrads {
            g: g.clone(),
            second: true,
        },
        &[x, ddx],
        &[&out],
    )?;
    Ok(out)
}

fn avg_pool_grad_g(g: &PoolGeom, dy: &Tensor) -> Result<Tensor> {
    let op = pool_names(PoolKind::Avg, g.shape.len() - 2)[1];
    let out = Tensor::new(
        map_dtypes!(op, dy.data(), [F32, F64] via [F16], a => k::avg_pool_grad(op, g, a)?),
    );
    record(AvgPoolGrad { g: g.clone() }, &[dy], &[&out])?;
    Ok(out)
}

/// `MaxPool(x)`. Gradient `MaxPoolGrad(x, dy)`: `dy` added at each window's first
/// maximum (TF's tie rule, NaNs as TF's CPU kernel; `MaxPool3DGrad`: at every maximum, as TF's); tangent
/// `MaxPoolGradGrad(x, dx)`: `dx` read at the first maximum.
struct MaxPool {
    g: PoolGeom,
}
impl Op for MaxPool {
    fn name(&self) -> &'static str {
        pool_names(PoolKind::Max, self.g.shape.len() - 2)[0]
    }
    fn batched(&self) -> bool {
        true
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let g = pool_batched(
            &self.g,
            Some(cx.input(0)?),
            &dys[0],
            cx.batch(),
            |g, x, t| max_pool_grad_g(g, x.unwrap_or(t), t),
        )?;
        Ok(grads![Some(g)])
    }
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        let Some(dx) = tangents.first().cloned().flatten() else {
            return Some(Ok(grads![None]));
        };
        Some(
            cx.input(0)
                .and_then(|x| max_pool_grad_grad_g(&self.g, x, &dx))
                .map(|t| grads![Some(t)]),
        )
    }
}

/// `MaxPoolGrad(x, dy)` (`second: false`: `dy` routed to each window's maximum) or
/// `MaxPoolGradGrad(x, ddx)` (`second: true`: `ddx` read at each window's first
/// maximum). Each is linear in its second input, and each is the other's adjoint there;
/// `x` gets a zero gradient (the argmax is locally constant), as TF gives.
struct MaxPoolGrads {
    g: PoolGeom,
    second: bool,
}
impl MaxPoolGrads {
    /// `MaxPoolGradGrad` when `second`, else `MaxPoolGrad`, of `x` and `t`.
    fn apply(&self, second: bool, x: &Tensor, t: &Tensor) -> Result<Tensor> {
        if second {
            max_pool_grad_grad_g(&self.g, x, t)
        } else {
            max_pool_grad_g(&self.g, x, t)
        }
    }
}
impl Op for MaxPoolGrads {
    fn name(&self) -> &'static str {
        pool_names(PoolKind::Max, self.g.shape.len() - 2)[if self.second { 2 } else { 1 }]
    }
    fn batched(&self) -> bool {
        true
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let x = cx.input(0)?;
        let dx = if cx.needs(0) {
            Some(crate::ops::zeros(
                &cx.batched(&dys[0], x.shape()),
                x.dtype(),
            )?)
        } else {
            None
        };
        let dt = if cx.needs(1) {
            Some(pool_batched(
                &self.g,
                Some(x),
                &dys[0],
                cx.batch(),
                |g, x, t| {
                    let x = x.unwrap_or(t);
                    if self.second {
                        max_pool_grad_g(g, x, t)
                    } else {
                        max_pool_grad_grad_g(g, x, t)
                    }
                },
            )?)
        } else {
            None
        };
        Ok(grads![dx, dt])
    }
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        let t = tangents.get(1).cloned().flatten();
        Some(match t {
            Some(t) => cx
                .input(0)
                .and_then(|x| self.apply(self.second, x, &t))
                .map(|t| grads![Some(t)]),
            None => Ok(grads![None]),
        })
    }
}

/// `AvgPool(x)`, linear. Gradient `AvgPoolGrad(dy)`; tangent `AvgPool(dx)`.
struct AvgPool {
    g: PoolGeom,
}
impl Op for AvgPool {
    fn name(&self) -> &'static str {
        pool_names(PoolKind::Avg, self.g.shape.len() - 2)[0]
    }
    fn batched(&self) -> bool {
        true
    }
    fn saves(&self) -> super::Saves {
        super::Saves::NOTHING
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let g = pool_batched(&self.g, None, &dys[0], cx.batch(), |g, _, t| {
            avg_pool_grad_g(g, t)
        })?;
        Ok(grads![Some(g)])
    }
    fn jvp(&self, _cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        let Some(dx) = tangents.first().cloned().flatten() else {
            return Some(Ok(grads![None]));
        };
        Some(pool_g(PoolKind::Avg, &self.g, &dx).map(|t| grads![Some(t)]))
    }
}

/// `AvgPoolGrad(dy)`, the adjoint of `AvgPool`. Gradient `AvgPool(dz)`.
struct AvgPoolGrad {
    g: PoolGeom,
}
impl Op for AvgPoolGrad {
    fn name(&self) -> &'static str {
        pool_names(PoolKind::Avg, self.g.shape.len() - 2)[1]
    }
    fn batched(&self) -> bool {
        true
    }
    fn saves(&self) -> super::Saves {
        super::Saves::NOTHING
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let g = pool_batched(&self.g, None, &dys[0], cx.batch(), |g, _, t| {
            pool_g(PoolKind::Avg, g, t)
        })?;
        Ok(grads![Some(g)])
    }
    fn jvp(&self, _cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        let Some(t) = tangents.first().cloned().flatten() else {
            return Some(Ok(grads![None]));
        };
        Some(avg_pool_grad_g(&self.g, &t).map(|t| grads![Some(t)]))
    }
}

/// Batch normalization of a 4-D `x` over all axes but the channel axis (the last,
/// or axis 1 when `channels_last` is false), as one call. Returns `(y, mean,
/// variance)`: in training (`is_training`), `y` uses the batch mean and biased
/// variance, and the returned statistics are the batch mean and the *unbiased*
/// (Bessel-corrected) variance, each mixed as `(1 - f) * given + f * batch` when the
/// `exponential_avg_factor` `f` is not 1; in inference, `y` uses the given `mean` and
/// `variance`, which are returned. `epsilon` is raised to at least 1.001e-5 (TF's
/// floor). Gradients flow to `x`, `scale` and `offset` through `y` only (TF's
/// `FusedBatchNormGrad`: none to the statistics). TF equivalent:
/// `tf.compat.v1.nn.fused_batch_norm`. Composed of engine ops (differentiable to any
/// order).
#[allow(clippy::too_many_arguments)]
pub fn fused_batch_norm(
    x: &Tensor,
    scale: &Tensor,
    offset: &Tensor,
    mean: Option<&Tensor>,
    variance: Option<&Tensor>,
    epsilon: f64,
    channels_last: bool,
    is_training: bool,
    exponential_avg_factor: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    let op = "FusedBatchNormV3";
    check_float(op, x)?;
    if x.ndim() != 4 {
        return Err(Error::invalid(
            op,
            format!("input must be 4-dimensional{:?}", x.shape()),
        ));
    }
    // TF's U type: a float16 `x` may come with float32 statistics and parameters; then
    // everything is computed in float32 and only `y` is float16 (as TF's kernel).
    if x.dtype() == crate::dtype::DType::F16 && scale.dtype() == crate::dtype::DType::F32 {
        let (y, m, v) = fused_batch_norm(
            &crate::ops::cast(x, crate::dtype::DType::F32)?,
            scale,
            offset,
            mean,
            variance,
            epsilon,
            channels_last,
            is_training,
            exponential_avg_factor,
        )?;
        return Ok((crate::ops::cast(&y, x.dtype())?, m, v));
    }
    let ca = if channels_last { 3 } else { 1 };
    let c = x.shape()[ca];
    for (what, t) in [
        ("scale", Some(scale)),
        ("offset", Some(offset)),
        ("mean", mean),
        ("variance", variance),
    ] {
        if let Some(t) = t {
            if t.shape() != [c] {
                return Err(Error::invalid(
                    op,
                    format!("{what} must be a 1-D tensor of size {c} (the channels of x), got shape {:?}", t.shape()),
                ));
            }
            if t.dtype() != x.dtype() {
                return Err(Error::dtype_mismatch(op, x.dtype(), t.dtype()));
            }
        }
    }
    if !exponential_avg_factor.is_finite() || !epsilon.is_finite() {
        return Err(Error::invalid(
            op,
            "epsilon and exponential_avg_factor must be finite",
        ));
    }
    let needs_stats = !is_training || exponential_avg_factor != 1.0;
    let (Some(mean), Some(variance)) = (mean.cloned(), variance.cloned()) else {
        if needs_stats {
            return Err(Error::invalid(
                op,
                format!("Both `mean` and `variance` must be a 1D tensor when `is_training` is False or `exponential_avg_factor` != 1.0. Received: `mean` {} and `variance` {}",
                    if mean.is_some() { "given" } else { "None" },
                    if variance.is_some() { "given" } else { "None" }),
            ));
        }
        return fused_batch_norm(
            x,
            scale,
            offset,
            Some(&crate::ops::zeros(&[c], x.dtype())?),
            Some(&crate::ops::zeros(&[c], x.dtype())?),
            epsilon,
            channels_last,
            is_training,
            exponential_avg_factor,
        );
    };
    let epsilon = epsilon.max(1.001e-5);
    let bshape: Vec<usize> = if channels_last {
        vec![c]
    } else {
        vec![c, 1, 1]
    };
    let b = |t: &Tensor| reshape(t, &bshape);
    let (mean, variance) = (stop_gradient(&mean)?, stop_gradient(&variance)?);
    let normalize = |m: &Tensor, v: &Tensor| -> Result<Tensor> {
        let inv = multiply(&rsqrt(&add(v, &scalar_like(v, epsilon))?)?, &b(scale)?)?;
        add(&multiply(&subtract(x, m)?, &inv)?, &b(offset)?)
    };
    if !is_training {
        let y = normalize(&b(&mean)?, &b(&variance)?)?;
        return Ok((y, mean, variance));
    }
    let axes: [isize; 3] = if channels_last { [0, 1, 2] } else { [0, 2, 3] };
    let bm = reduce_mean(x, Some(&axes), true)?;
    let bv = reduce_mean(&square(&subtract(x, &bm)?)?, Some(&axes), true)?;
    let y = normalize(&bm, &bv)?;
    let n = x.size() / c.max(1);
    let bessel = n as f64 / (n.max(2) - 1) as f64;
    let m_out = stop_gradient(&reshape(&bm, &[c])?)?;
    let v_out = stop_gradient(&multiply(&reshape(&bv, &[c])?, &scalar_like(&bv, bessel))?)?;
    let f = exponential_avg_factor;
    let mix = |old: &Tensor, new: &Tensor| -> Result<Tensor> {
        if f == 1.0 {
            return Ok(new.clone());
        }
        add(
            &multiply(old, &scalar_like(old, 1.0 - f))?,
            &multiply(new, &scalar_like(new, f))?,
        )
    };
    Ok((y, mix(&mean, &m_out)?, mix(&variance, &v_out)?))
}

/// The computation of a traced `gt.nn.fused_batch_norm`: inputs `x, scale, offset`, then
/// the mean and the variance when given (`has_m`, `has_v`); outputs `y, mean, variance`.
pub(crate) fn batch_norm_node(
    has_m: bool,
    has_v: bool,
    epsilon: f64,
    last: bool,
    is_training: bool,
    exponential_avg_factor: f64,
) -> impl Fn(&[Tensor]) -> Result<Vec<Tensor>> + Send + Sync + 'static {
    move |a: &[Tensor]| {
        let mut rest = a[3..].iter();
        let m = if has_m { rest.next() } else { None };
        let v = if has_v { rest.next() } else { None };
        let (y, m, v) = fused_batch_norm(
            &a[0],
            &a[1],
            &a[2],
            m,
            v,
            epsilon,
            last,
            is_training,
            exponential_avg_factor,
        )?;
        Ok(vec![y, m, v])
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
        OpDef::new("Conv2D", 2, &["strides", "padding", "dilations"], conv2d),
        OpDef::new(
            "DepthwiseConv2dNative",
            2,
            &["strides", "padding", "dilations"],
            depthwise,
        ),
        OpDef::new("Conv1D", 2, &["stride", "padding", "dilation"], conv1d),
        OpDef::new(
            "Conv2DBackpropInput",
            2,
            &["output_shape", "strides", "padding", "dilations"],
            conv2d_transpose,
        ),
        OpDef::new("Conv3D", 2, &["strides", "padding", "dilations"], conv3d),
        OpDef::new(
            "Conv3DBackpropInputV2",
            2,
            &["output_shape", "strides", "padding", "dilations"],
            conv3d_transpose,
        ),
        OpDef::new("MaxPool", 1, &["ksize", "strides", "padding"], max_pool),
        OpDef::new("AvgPool", 1, &["ksize", "strides", "padding"], avg_pool),
        OpDef::new(
            "FusedBatchNormV3",
            3,
            &[
                "has_mean",
                "has_variance",
                "epsilon",
                "channels_last",
                "is_training",
                "exponential_avg_factor",
            ],
            batch_norm,
        )
        .inputs(3, 5)
        .outputs(Some(3)),
    ];

    type Geometry = ([usize; 2], ops::Padding, [usize; 2]);

    fn geometry(op: &str, a: &Attrs) -> Result<Geometry> {
        Ok((
            get(op, a, "strides")?,
            get(op, a, "padding")?,
            get(op, a, "dilations")?,
        ))
    }

    fn conv2d(a: &Attrs, _: usize) -> Result<Forward> {
        let (s, p, d) = geometry("Conv2D", a)?;
        Ok(one_out(move |xs| ops::conv2d(&xs[0], &xs[1], s, &p, d)))
    }

    type Geometry3 = ([usize; 3], ops::Padding, [usize; 3]);

    fn geometry3(op: &str, a: &Attrs) -> Result<Geometry3> {
        Ok((
            get(op, a, "strides")?,
            get(op, a, "padding")?,
            get(op, a, "dilations")?,
        ))
    }

    fn conv3d(a: &Attrs, _: usize) -> Result<Forward> {
        let (s, p, d) = geometry3("Conv3D", a)?;
        Ok(one_out(move |xs| ops::conv3d(&xs[0], &xs[1], s, &p, d)))
    }

    fn conv3d_transpose(a: &Attrs, _: usize) -> Result<Forward> {
        let op = "Conv3DBackpropInputV2";
        let out: Vec<usize> = get(op, a, "output_shape")?;
        crate::size::num_elements(op, &out)?;
        let (s, p, d) = geometry3(op, a)?;
        Ok(one_out(move |xs| {
            ops::conv3d_transpose(&xs[0], &xs[1], &out, s, &p, d)
        }))
    }

    fn depthwise(a: &Attrs, _: usize) -> Result<Forward> {
        let (s, p, d) = geometry("DepthwiseConv2dNative", a)?;
        Ok(one_out(move |xs| {
            ops::depthwise_conv2d(&xs[0], &xs[1], s, &p, d)
        }))
    }

    fn conv1d(a: &Attrs, _: usize) -> Result<Forward> {
        let op = "Conv1D";
        let (s, p, d): (usize, ops::Padding, usize) = (
            get(op, a, "stride")?,
            get(op, a, "padding")?,
            get(op, a, "dilation")?,
        );
        Ok(one_out(move |xs| ops::conv1d(&xs[0], &xs[1], s, &p, d)))
    }

    fn conv2d_transpose(a: &Attrs, _: usize) -> Result<Forward> {
        let out: Vec<usize> = get("Conv2DBackpropInput", a, "output_shape")?;
        crate::size::num_elements("Conv2DBackpropInput", &out)?;
        let (s, p, d) = geometry("Conv2DBackpropInput", a)?;
        Ok(one_out(move |xs| {
            ops::conv2d_transpose(&xs[0], &xs[1], &out, s, &p, d)
        }))
    }

    fn pool(op: &str, kind: ops::PoolKind, a: &Attrs) -> Result<Forward> {
        let k: Vec<usize> = get(op, a, "ksize")?;
        let s: Vec<usize> = get(op, a, "strides")?;
        let p: ops::Padding = get(op, a, "padding")?;
        Ok(one_out(move |xs| ops::pool(kind, &xs[0], &k, &s, &p)))
    }

    fn max_pool(a: &Attrs, _: usize) -> Result<Forward> {
        pool("MaxPool", ops::PoolKind::Max, a)
    }

    fn avg_pool(a: &Attrs, _: usize) -> Result<Forward> {
        pool("AvgPool", ops::PoolKind::Avg, a)
    }

    fn batch_norm(a: &Attrs, n: usize) -> Result<Forward> {
        let op = "FusedBatchNormV3";
        let (has_m, has_v): (bool, bool) = (get(op, a, "has_mean")?, get(op, a, "has_variance")?);
        ensure(
            n == 3 + usize::from(has_m) + usize::from(has_v),
            op,
            "inputs do not fit has_mean and has_variance",
        )?;
        let eps = get_f64(op, a, "epsilon")?;
        let (last, training): (bool, bool) =
            (get(op, a, "channels_last")?, get(op, a, "is_training")?);
        let factor = get_f64(op, a, "exponential_avg_factor")?;
        Ok(many_out(super::batch_norm_node(
            has_m, has_v, eps, last, training, factor,
        )))
    }
}

/// The Python functions of this family: bindings and where they appear (see
/// `src/ops/README.md`).
#[cfg(feature = "python")]
pub(super) mod python {
    use super::{Padding, PoolKind};
    use crate::python::binding::*;

    /// TF's `strides` / `dilations` / `ksize`: an int, or a list of 1, `n` or `n + 2`
    /// ints (the last form with 1 for the batch and channel axes).
    fn spatial(ob: Option<&Bound<'_, PyAny>>, n: usize, what: &str) -> PyResult<Vec<usize>> {
        let Some(ob) = ob.filter(|o| !o.is_none()) else {
            return Ok(vec![1; n]);
        };
        let v = shape_arg(ob)?;
        let v: Vec<i64> = match v.len() {
            1 => vec![v[0]; n],
            l if l == n => v,
            l if l == n + 2 => {
                if v[0] != 1 || v[n + 1] != 1 {
                    return Err(InvalidArgumentError::new_err(format!(
                        "Current implementation does not yet support {what} in the batch and depth dimensions, got {v:?}"
                    )));
                }
                v[1..=n].to_vec()
            }
            l => {
                return Err(PyValueError::new_err(format!(
                    "{what} should be of length 1, {n} or {} but was {l}",
                    n + 2
                )))
            }
        };
        v.into_iter()
            .map(|d| {
                usize::try_from(d).map_err(|_| {
                    InvalidArgumentError::new_err(format!("{what} must be > 0, but got {d}"))
                })
            })
            .collect()
    }

    fn two(v: Vec<usize>) -> [usize; 2] {
        [v[0], v[1]]
    }

    fn three(v: Vec<usize>) -> [usize; 3] {
        [v[0], v[1], v[2]]
    }

    /// TF's `padding`: "SAME", "VALID", or explicit `[[0, 0], [before, after]..., [0, 0]]`.
    fn padding_arg(ob: &Bound<'_, PyAny>, n: usize, explicit: bool) -> PyResult<Padding> {
        if let Ok(s) = ob.extract::<String>() {
            return match s.as_str() {
                "SAME" => Ok(Padding::Same),
                "VALID" => Ok(Padding::Valid),
                _ => Err(PyValueError::new_err(format!(
                    "padding must be 'SAME' or 'VALID'{}, got {s:?}",
                    if explicit {
                        " or a list of explicit paddings"
                    } else {
                        ""
                    }
                ))),
            };
        }
        if !explicit {
            return Err(PyValueError::new_err(format!(
                "padding must be 'SAME' or 'VALID', got {}",
                ob.repr()?
            )));
        }
        let mut pairs = Vec::new();
        for it in ob.try_iter()? {
            let p = shape_arg(&it?)?;
            if p.len() != 2 {
                return Err(PyValueError::new_err(format!(
                    "explicit padding must be a list of [before, after] pairs, got {}",
                    ob.repr()?
                )));
            }
            if p[0] < 0 || p[1] < 0 {
                return Err(InvalidArgumentError::new_err(format!(
                    "All elements of explicit_paddings must be nonnegative, got {p:?}"
                )));
            }
            pairs.push((p[0] as usize, p[1] as usize));
        }
        if pairs.len() != n + 2 {
            return Err(PyValueError::new_err(format!(
                "explicit padding must have {} [before, after] pairs (batch, spatial..., channels), got {}",
                n + 2,
                pairs.len()
            )));
        }
        if pairs[0] != (0, 0) || pairs[n + 1] != (0, 0) {
            return Err(PyValueError::new_err(
                "explicit padding on the batch or channel dimension must be [0, 0]",
            ));
        }
        Ok(Padding::Explicit(pairs[1..=n].to_vec()))
    }

    fn channels_last(data_format: Option<&str>, want: &str) -> PyResult<()> {
        match data_format {
            None => Ok(()),
            Some(f) if f == want || (want == "NWC" && f == "NHWC") => Ok(()),
            Some(f) => Err(InvalidArgumentError::new_err(format!(
                "data_format {f:?} is not supported: gradtape computes convolutions and pooling in {want} only (as TF's CPU kernels)"
            ))),
        }
    }

    /// 2-D convolution, NHWC input ``[batch, height, width, in_channels]``, filters
    /// ``[filter_height, filter_width, in_channels, out_channels]``. ``strides`` and
    /// ``dilations``: an int or a list of 1, 2 or 4 ints; ``padding``: ``"SAME"``,
    /// ``"VALID"`` or explicit ``[[0, 0], [top, bottom], [left, right], [0, 0]]``.
    /// Leading batch axes, grouped filters (``in_channels`` a divisor of the input's) and
    /// ``int32`` (forward only) work as in TF. TF equivalent: ``tf.nn.conv2d``.
    ///
    /// >>> x = gt.reshape(gt.range(16.0), [1, 4, 4, 1])
    /// >>> print(gt.nn.conv2d(x, gt.ones([2, 2, 1, 1]), strides=2, padding="VALID")[0, :, :, 0])
    /// gt.Tensor(
    /// [[10. 18.]
    ///  [42. 50.]], shape=(2, 2), dtype=float32)
    #[pyfunction]
    #[pyo3(signature = (input, filters, strides, padding, data_format="NHWC", dilations=None, name=None))]
    #[allow(clippy::too_many_arguments)]
    fn conv2d(
        py: Python<'_>,
        input: &Bound<'_, PyAny>,
        filters: &Bound<'_, PyAny>,
        strides: &Bound<'_, PyAny>,
        padding: &Bound<'_, PyAny>,
        data_format: Option<&str>,
        dilations: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        channels_last(data_format, "NHWC")?;
        let (x, w) = pair(input, filters)?;
        let s = two(spatial(Some(strides), 2, "strides")?);
        let d = two(spatial(dilations, 2, "dilations")?);
        let p = padding_arg(padding, 2, true)?;
        let key = format!("{s:?},{p:?},{d:?}");
        let f = move |x: &Tensor, w: &Tensor| ops::conv2d(x, w, s, &p, d);
        Ok(call2(py, "Conv2D", || key, &x, &w, f)?.into())
    }

    /// 3-D convolution, NDHWC input ``[batch, depth, height, width, in_channels]``,
    /// filters ``[filter_depth, filter_height, filter_width, in_channels,
    /// out_channels]``. ``strides`` and ``dilations``: an int or a list of 1, 3 or 5
    /// ints; ``padding``: ``"SAME"`` or ``"VALID"``. TF equivalent: ``tf.nn.conv3d``.
    ///
    /// >>> x = gt.reshape(gt.range(8.0), [1, 2, 2, 2, 1])
    /// >>> print(gt.nn.conv3d(x, gt.ones([2, 2, 2, 1, 1]), [1, 1, 1, 1, 1], "SAME").numpy().ravel())
    /// [28. 16. 18. 10. 22. 12. 13.  7.]
    #[pyfunction]
    #[pyo3(signature = (input, filters, strides, padding, data_format="NDHWC", dilations=None, name=None))]
    #[allow(clippy::too_many_arguments)]
    fn conv3d(
        py: Python<'_>,
        input: &Bound<'_, PyAny>,
        filters: &Bound<'_, PyAny>,
        strides: &Bound<'_, PyAny>,
        padding: &Bound<'_, PyAny>,
        data_format: Option<&str>,
        dilations: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        channels_last(data_format, "NDHWC")?;
        let (x, w) = pair(input, filters)?;
        let s = three(spatial(Some(strides), 3, "strides")?);
        let d = three(spatial(dilations, 3, "dilations")?);
        let p = padding_arg(padding, 3, false)?;
        let key = format!("{s:?},{p:?},{d:?}");
        let f = move |x: &Tensor, w: &Tensor| ops::conv3d(x, w, s, &p, d);
        Ok(call2(py, "Conv3D", || key, &x, &w, f)?.into())
    }

    /// The transpose of conv3d (its gradient with respect to the input): ``input`` is
    /// shaped like a conv3d output, ``filters`` is ``[filter_depth, filter_height,
    /// filter_width, output_channels, in_channels]``, the result has ``output_shape``
    /// (NDHWC). TF equivalent: ``tf.nn.conv3d_transpose``.
    ///
    /// >>> y = gt.nn.conv3d_transpose(gt.ones([1, 1, 1, 1, 1]), gt.ones([2, 2, 2, 1, 1]), [1, 2, 2, 2, 1], strides=1, padding="VALID")
    /// >>> print(y.numpy().ravel())
    /// [1. 1. 1. 1. 1. 1. 1. 1.]
    #[pyfunction]
    #[pyo3(signature = (input, filters, output_shape, strides, padding=None, data_format="NDHWC", dilations=None, name=None))]
    #[allow(clippy::too_many_arguments)]
    fn conv3d_transpose(
        py: Python<'_>,
        input: &Bound<'_, PyAny>,
        filters: &Bound<'_, PyAny>,
        output_shape: &Bound<'_, PyAny>,
        strides: &Bound<'_, PyAny>,
        padding: Option<&Bound<'_, PyAny>>,
        data_format: Option<&str>,
        dilations: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        channels_last(data_format, "NDHWC")?;
        let (x, w) = pair(input, filters)?;
        let out = dims_arg(output_shape)?;
        let s = three(spatial(Some(strides), 3, "strides")?);
        let d = three(spatial(dilations, 3, "dilations")?);
        let p = match padding.filter(|p| !p.is_none()) {
            Some(p) => padding_arg(p, 3, false)?,
            None => Padding::Same,
        };
        let key = format!("{out:?},{s:?},{p:?},{d:?}");
        let f = move |x: &Tensor, w: &Tensor| ops::conv3d_transpose(x, w, &out, s, &p, d);
        Ok(call2(py, "Conv3DBackpropInputV2", || key, &x, &w, f)?.into())
    }

    /// 1-D convolution, NWC input ``[batch, width, in_channels]``, filters
    /// ``[filter_width, in_channels, out_channels]`` (a conv2d over a height of 1).
    /// TF equivalent: ``tf.nn.conv1d``.
    ///
    /// >>> x = gt.reshape(gt.range(5.0), [1, 5, 1])
    /// >>> print(gt.nn.conv1d(x, gt.ones([2, 1, 1]), stride=1, padding="VALID")[0, :, 0])
    /// gt.Tensor([1. 3. 5. 7.], shape=(4,), dtype=float32)
    #[pyfunction]
    #[pyo3(signature = (input, filters, stride, padding, data_format="NWC", dilations=None, name=None))]
    #[allow(clippy::too_many_arguments)]
    fn conv1d(
        py: Python<'_>,
        input: &Bound<'_, PyAny>,
        filters: &Bound<'_, PyAny>,
        stride: &Bound<'_, PyAny>,
        padding: &Bound<'_, PyAny>,
        data_format: Option<&str>,
        dilations: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        channels_last(data_format, "NWC")?;
        let (x, w) = pair(input, filters)?;
        let s = spatial(Some(stride), 1, "stride")?[0];
        let d = spatial(dilations, 1, "dilations")?[0];
        let p = padding_arg(padding, 1, true)?;
        let key = format!("{s:?},{p:?},{d:?}");
        let f = move |x: &Tensor, w: &Tensor| ops::conv1d(x, w, s, &p, d);
        Ok(call2(py, "Conv1D", || key, &x, &w, f)?.into())
    }

    /// The transpose of conv2d (its gradient with respect to the input): ``input`` is
    /// shaped like a conv2d output, ``filters`` is ``[filter_height, filter_width,
    /// output_channels, in_channels]``, the result has ``output_shape``. TF equivalent:
    /// ``tf.nn.conv2d_transpose``.
    ///
    /// >>> y = gt.nn.conv2d_transpose(gt.ones([1, 2, 2, 1]), gt.ones([2, 2, 1, 1]), [1, 3, 3, 1], strides=1, padding="VALID")
    /// >>> print(y[0, :, :, 0])
    /// gt.Tensor(
    /// [[1. 2. 1.]
    ///  [2. 4. 2.]
    ///  [1. 2. 1.]], shape=(3, 3), dtype=float32)
    #[pyfunction]
    #[pyo3(signature = (input, filters, output_shape, strides, padding=None, data_format="NHWC", dilations=None, name=None))]
    #[allow(clippy::too_many_arguments)]
    fn conv2d_transpose(
        py: Python<'_>,
        input: &Bound<'_, PyAny>,
        filters: &Bound<'_, PyAny>,
        output_shape: &Bound<'_, PyAny>,
        strides: &Bound<'_, PyAny>,
        padding: Option<&Bound<'_, PyAny>>,
        data_format: Option<&str>,
        dilations: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        channels_last(data_format, "NHWC")?;
        let (x, w) = pair(input, filters)?;
        let out = dims_arg(output_shape)?;
        let s = two(spatial(Some(strides), 2, "strides")?);
        let d = two(spatial(dilations, 2, "dilations")?);
        let p = match padding.filter(|p| !p.is_none()) {
            Some(p) => padding_arg(p, 2, true)?,
            None => Padding::Same,
        };
        let key = format!("{out:?},{s:?},{p:?},{d:?}");
        let f = move |x: &Tensor, w: &Tensor| ops::conv2d_transpose(x, w, &out, s, &p, d);
        Ok(call2(py, "Conv2DBackpropInput", || key, &x, &w, f)?.into())
    }

    /// Depthwise 2-D convolution: input channel ``c`` is convolved with its own
    /// ``channel_multiplier`` filters (``filter`` is ``[filter_height, filter_width,
    /// in_channels, channel_multiplier]``), giving output channel
    /// ``c * channel_multiplier + m``. TF equivalent: ``tf.nn.depthwise_conv2d``.
    ///
    /// >>> x = gt.ones([1, 3, 3, 2])
    /// >>> w = gt.constant([[1.0, 2.0]], shape=[1, 1, 2, 1])
    /// >>> print(gt.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "VALID")[0, 0, 0])
    /// gt.Tensor([1. 2.], shape=(2,), dtype=float32)
    #[pyfunction]
    #[pyo3(signature = (input, filter, strides, padding, data_format=None, dilations=None, name=None))]
    #[allow(clippy::too_many_arguments)]
    fn depthwise_conv2d(
        py: Python<'_>,
        input: &Bound<'_, PyAny>,
        filter: &Bound<'_, PyAny>,
        strides: &Bound<'_, PyAny>,
        padding: &Bound<'_, PyAny>,
        data_format: Option<&str>,
        dilations: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        channels_last(data_format, "NHWC")?;
        let (x, w) = pair(input, filter)?;
        let s = two(spatial(Some(strides), 2, "strides")?);
        let d = two(spatial(dilations, 2, "dilations")?);
        let p = padding_arg(padding, 2, true)?;
        let key = format!("{s:?},{p:?},{d:?}");
        let f = move |x: &Tensor, w: &Tensor| ops::depthwise_conv2d(x, w, s, &p, d);
        Ok(call2(py, "DepthwiseConv2dNative", || key, &x, &w, f)?.into())
    }

    /// One pooling binding: `n` spatial axes (`None`: from the input's rank).
    #[allow(clippy::too_many_arguments)]
    fn pool_call(
        py: Python<'_>,
        kind: PoolKind,
        n: Option<usize>,
        format: &str,
        input: &Bound<'_, PyAny>,
        ksize: &Bound<'_, PyAny>,
        strides: &Bound<'_, PyAny>,
        padding: &Bound<'_, PyAny>,
        data_format: Option<&str>,
    ) -> PyResult<PyTensor> {
        let x = to_tensor(input, None)?;
        let sp = match n {
            Some(n) => n,
            None => match x.ndim() {
                3..=5 => x.ndim() - 2,
                r => {
                    let msg = format!(
                        "`input.shape.rank` must be 3, 4 or 5. Received: input.shape={:?} of rank {r}",
                        x.shape()
                    );
                    return Err(PyValueError::new_err(msg));
                }
            },
        };
        let format = match (n, sp) {
            (Some(_), _) => format,
            (None, 1) => "NWC",
            (None, 2) => "NHWC",
            (None, _) => "NDHWC",
        };
        channels_last(data_format, format)?;
        let (k, kd) = pool_window(ksize, sp, "ksize")?;
        let (s, sd) = pool_window(strides, sp, "strides")?;
        if kd != 1 || sd != 1 {
            return depthwise_max_pool(py, kind, &x, sp, &k, kd, &s, sd, padding);
        }
        // TF's max_pool (1-D, 2-D) takes explicit padding, avg_pool and max_pool3d not.
        let p = padding_arg(padding, sp, kind == PoolKind::Max && sp <= 2)?;
        let name = match kind {
            PoolKind::Max => "MaxPool",
            PoolKind::Avg => "AvgPool",
        };
        let key = format!("{k:?},{s:?},{p:?}");
        let f = move |x: &Tensor| ops::pool(kind, x, &k, &s, &p);
        Ok(call(py, name, || key, &x, f)?.into())
    }

    /// A pooling `ksize` / `strides`: as [`spatial`], and the channel entry of a list
    /// of `n + 2` (1 otherwise). A batch entry other than 1 is TF's UnimplementedError.
    fn pool_window(ob: &Bound<'_, PyAny>, n: usize, what: &str) -> PyResult<(Vec<usize>, usize)> {
        let v = shape_arg(ob)?;
        if v.len() != n + 2 {
            return Ok((spatial(Some(ob), n, what)?, 1));
        }
        if v[0] != 1 {
            return Err(crate::python::errors::unimplemented_error(
                "Pooling is not yet supported on the batch dimension.",
            ));
        }
        let depth = usize::try_from(v[n + 1]).map_err(|_| {
            InvalidArgumentError::new_err(format!("{what} must be > 0, but got {v:?}"))
        })?;
        let inner = v[1..=n].to_vec().into_pyobject(ob.py())?;
        Ok((spatial(Some(&inner), n, what)?, depth))
    }

    /// TF's depthwise max pooling (`ksize = strides = [1, 1, 1, d]`, 2-D NHWC): the
    /// maximum over each block of `d` consecutive channels, as `reduce_max` over a
    /// reshaped input (so gradients and traces follow that op's).
    #[allow(clippy::too_many_arguments)]
    fn depthwise_max_pool(
        py: Python<'_>,
        kind: PoolKind,
        x: &Tensor,
        sp: usize,
        k: &[usize],
        kd: usize,
        s: &[usize],
        sd: usize,
        padding: &Bound<'_, PyAny>,
    ) -> PyResult<PyTensor> {
        let unimpl = crate::python::errors::unimplemented_error;
        if kind != PoolKind::Max || sp != 2 {
            return Err(unimpl(
                "Pooling on the depth dimension is supported by 2-D max pooling only.",
            ));
        }
        if k.iter().any(|&v| v != 1) {
            return Err(unimpl(
                "MaxPooling supports exactly one of pooling across depth or pooling across width/height.",
            ));
        }
        if kd != sd {
            return Err(unimpl(
                "Depthwise max pooling requires the depth window to equal the depth stride.",
            ));
        }
        if s.iter().any(|&v| v != 1) {
            return Err(unimpl(
                "Depthwise max pooling requires spatial strides of 1.",
            ));
        }
        if !matches!(
            padding_arg(padding, sp, true)?,
            Padding::Same | Padding::Valid
        ) {
            return Err(unimpl(
                "Depthwise max pooling does not take explicit padding.",
            ));
        }
        if x.ndim() != 4 {
            return Err(PyValueError::new_err(format!(
                "input must be 4-dimensional (NHWC), got shape {:?}",
                x.shape()
            )));
        }
        let c = x.shape()[3];
        if kd == 0 || !c.is_multiple_of(kd) {
            return Err(unimpl(
                "Depthwise max pooling requires the depth window to evenly divide the input depth.",
            ));
        }
        let gt = py.import("gradtape")?;
        let xt = PyTensor::from(x.clone());
        let shape = vec![
            -1i64,
            x.shape()[1] as i64,
            x.shape()[2] as i64,
            (c / kd) as i64,
            kd as i64,
        ];
        let r = gt.getattr("reshape")?.call1((xt, shape))?;
        let m = gt.getattr("reduce_max")?.call1((r, -1))?;
        Ok(to_tensor(&m, None)?.into())
    }

    macro_rules! py_pool {
        ($($(#[$doc:meta])* $py:ident => $kind:ident, $n:expr, $fmt:literal;)*) => {$(
            $(#[$doc])*
            #[pyfunction]
            #[pyo3(signature = (input, ksize, strides, padding, data_format=None, name=None))]
            fn $py(
                py: Python<'_>,
                input: &Bound<'_, PyAny>,
                ksize: &Bound<'_, PyAny>,
                strides: &Bound<'_, PyAny>,
                padding: &Bound<'_, PyAny>,
                data_format: Option<&str>,
                name: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<PyTensor> {
                let _ = name;
                pool_call(py, PoolKind::$kind, $n, $fmt, input, ksize, strides, padding, data_format)
            }
        )*};
    }
    py_pool! {
        /// 2-D max pooling over NHWC input; the gradient goes to the first maximum of
        /// each window (TF's rule for ties). ``padding``: ``"SAME"``, ``"VALID"`` or
        /// explicit ``[[0, 0], [top, bottom], [left, right], [0, 0]]``; ``ksize = strides
        /// = [1, 1, 1, d]`` pools over blocks of ``d`` channels instead (TF's depthwise
        /// max pooling). TF equivalent: ``tf.nn.max_pool2d``.
        ///
        /// >>> x = gt.reshape(gt.range(16.0), [1, 4, 4, 1])
        /// >>> print(gt.nn.max_pool2d(x, ksize=2, strides=2, padding="VALID")[0, :, :, 0])
        /// gt.Tensor(
        /// [[ 5.  7.]
        ///  [13. 15.]], shape=(2, 2), dtype=float32)
        max_pool2d => Max, Some(2), "NHWC";
        /// 2-D average pooling over NHWC input; with SAME padding a window's average is
        /// over its elements inside the input. TF equivalent: ``tf.nn.avg_pool2d``.
        ///
        /// >>> x = gt.reshape(gt.range(9.0), [1, 3, 3, 1])
        /// >>> print(gt.nn.avg_pool2d(x, ksize=2, strides=2, padding="SAME")[0, :, :, 0])
        /// gt.Tensor(
        /// [[2.  3.5]
        ///  [6.5 8. ]], shape=(2, 2), dtype=float32)
        avg_pool2d => Avg, Some(2), "NHWC";
        /// 3-D max pooling over NDHWC input. TF equivalent: ``tf.nn.max_pool3d``.
        ///
        /// >>> print(gt.nn.max_pool3d(gt.reshape(gt.range(8.0), [1, 2, 2, 2, 1]), 2, 2, "VALID").numpy().ravel())
        /// [7.]
        max_pool3d => Max, Some(3), "NDHWC";
        /// 3-D average pooling over NDHWC input. TF equivalent: ``tf.nn.avg_pool3d``.
        ///
        /// >>> print(gt.nn.avg_pool3d(gt.reshape(gt.range(8.0), [1, 2, 2, 2, 1]), 2, 2, "VALID").numpy().ravel())
        /// [3.5]
        avg_pool3d => Avg, Some(3), "NDHWC";
        /// 1-D max pooling over NWC input. TF equivalent: ``tf.nn.max_pool1d``.
        ///
        /// >>> print(gt.nn.max_pool1d(gt.constant([[[1.0], [3.0], [2.0]]]), 2, 1, "VALID").numpy().ravel())
        /// [3. 3.]
        max_pool1d => Max, Some(1), "NWC";
        /// 1-D average pooling over NWC input. TF equivalent: ``tf.nn.avg_pool1d``.
        ///
        /// >>> print(gt.nn.avg_pool1d(gt.constant([[[1.0], [3.0], [2.0]]]), 2, 1, "VALID").numpy().ravel())
        /// [2.  2.5]
        avg_pool1d => Avg, Some(1), "NWC";
        /// Max pooling with 1, 2 or 3 spatial axes, from the input's rank (3, 4 or 5).
        /// TF equivalent: ``tf.nn.max_pool``.
        ///
        /// >>> print(gt.nn.max_pool(gt.constant([[[1.0], [3.0], [2.0]]]), 3, 1, "VALID").numpy().ravel())
        /// [3.]
        max_pool => Max, None, "";
        /// Average pooling with 1, 2 or 3 spatial axes, from the input's rank (3, 4 or
        /// 5). TF equivalent: ``tf.nn.avg_pool``.
        ///
        /// >>> print(gt.nn.avg_pool(gt.constant([[[1.0], [3.0], [2.0]]]), 3, 1, "VALID").numpy().ravel())
        /// [2.]
        avg_pool => Avg, None, "";
    }

    /// Batch normalization of a 4-D input in one call; returns ``(y, mean, variance)``.
    /// Training (``is_training=True``): normalizes with the batch mean and biased
    /// variance and returns the batch mean and the Bessel-corrected variance (mixed
    /// with the given ``mean``/``variance`` as ``(1 - f) * given + f * batch`` when
    /// ``exponential_avg_factor`` ``f`` is not 1). Inference: normalizes with, and
    /// returns, the given statistics. ``epsilon`` is at least 1.001e-5. Gradients reach
    /// ``x``, ``scale`` and ``offset``. TF equivalent: ``tf.compat.v1.nn.fused_batch_norm``.
    ///
    /// >>> y, m, v = gt.nn.fused_batch_norm(gt.constant([1.0, 3.0], shape=[2, 1, 1, 1]), [1.0], [0.0])
    /// >>> print(y.numpy().ravel(), m.numpy(), v.numpy())
    /// [-0.9995004  0.9995004] [2.] [2.]
    #[pyfunction]
    #[pyo3(signature = (x, scale, offset, mean=None, variance=None, epsilon=0.001, data_format="NHWC", is_training=true, name=None, exponential_avg_factor=1.0))]
    #[allow(clippy::too_many_arguments)]
    fn fused_batch_norm(
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        scale: &Bound<'_, PyAny>,
        offset: &Bound<'_, PyAny>,
        mean: Option<&Bound<'_, PyAny>>,
        variance: Option<&Bound<'_, PyAny>>,
        epsilon: f64,
        data_format: &str,
        is_training: bool,
        name: Option<&Bound<'_, PyAny>>,
        exponential_avg_factor: f64,
    ) -> PyResult<(PyTensor, PyTensor, PyTensor)> {
        let _ = name;
        let last = match data_format {
            "NHWC" => true,
            "NCHW" => false,
            f => {
                return Err(PyValueError::new_err(format!(
                    "data_format must be 'NHWC' or 'NCHW', got {f:?}"
                )))
            }
        };
        let x = to_tensor(x, None)?;
        // TF's U type: float32 parameters and statistics for a float16 `x` (given as
        // float32 tensors or arrays); otherwise all take `x`'s dtype.
        let dt = match to_tensor(scale, None) {
            Ok(s)
                if x.dtype() == DType::F16
                    && s.dtype() == DType::F32
                    && scale.hasattr("dtype").unwrap_or(false) =>
            {
                Some(DType::F32)
            }
            _ => Some(x.dtype()),
        };
        let mut xs = vec![x, to_tensor(scale, dt)?, to_tensor(offset, dt)?];
        let (m, v) = (
            mean.filter(|m| !m.is_none()),
            variance.filter(|v| !v.is_none()),
        );
        if let Some(m) = m {
            xs.push(to_tensor(m, dt)?);
        }
        if let Some(v) = v {
            xs.push(to_tensor(v, dt)?);
        }
        let (has_m, has_v) = (m.is_some(), v.is_some());
        let key =
            format!("{has_m},{has_v},{epsilon:?},{last},{is_training},{exponential_avg_factor:?}");
        let f = ops::batch_norm_node(
            has_m,
            has_v,
            epsilon,
            last,
            is_training,
            exponential_avg_factor,
        );
        let mut out = call_multi(py, "FusedBatchNormV3", || key, &xs, f)?;
        let v = out.remove(2);
        let m = out.remove(1);
        Ok((out.remove(0).into(), m.into(), v.into()))
    }

    expose! {
        fn conv2d in [nn]: "(input: TensorLike, filters: TensorLike, strides: int | Sequence[int], padding: str | Sequence[Sequence[int]], data_format: str | None = 'NHWC', dilations: int | Sequence[int] | None = None, name: str | None = None) -> Tensor";
        fn conv3d in [nn]: "(input: TensorLike, filters: TensorLike, strides: int | Sequence[int], padding: str, data_format: str | None = 'NDHWC', dilations: int | Sequence[int] | None = None, name: str | None = None) -> Tensor";
        fn conv3d_transpose in [nn]: "(input: TensorLike, filters: TensorLike, output_shape: ShapeLike, strides: int | Sequence[int], padding: str | None = None, data_format: str | None = 'NDHWC', dilations: int | Sequence[int] | None = None, name: str | None = None) -> Tensor";
        fn conv1d in [nn]: "(input: TensorLike, filters: TensorLike, stride: int | Sequence[int], padding: str | Sequence[Sequence[int]], data_format: str | None = 'NWC', dilations: int | Sequence[int] | None = None, name: str | None = None) -> Tensor";
        fn conv2d_transpose in [nn]: "(input: TensorLike, filters: TensorLike, output_shape: ShapeLike, strides: int | Sequence[int], padding: str | Sequence[Sequence[int]] | None = None, data_format: str | None = 'NHWC', dilations: int | Sequence[int] | None = None, name: str | None = None) -> Tensor";
        fn depthwise_conv2d in [nn]: "(input: TensorLike, filter: TensorLike, strides: int | Sequence[int], padding: str | Sequence[Sequence[int]], data_format: str | None = None, dilations: int | Sequence[int] | None = None, name: str | None = None) -> Tensor";
        fn max_pool2d in [nn]: "(input: TensorLike, ksize: int | Sequence[int], strides: int | Sequence[int], padding: str | Sequence[Sequence[int]], data_format: str | None = None, name: str | None = None) -> Tensor";
        fn avg_pool2d in [nn]: "(input: TensorLike, ksize: int | Sequence[int], strides: int | Sequence[int], padding: str, data_format: str | None = None, name: str | None = None) -> Tensor";
        fn max_pool3d in [nn]: "(input: TensorLike, ksize: int | Sequence[int], strides: int | Sequence[int], padding: str, data_format: str | None = None, name: str | None = None) -> Tensor";
        fn avg_pool3d in [nn]: "(input: TensorLike, ksize: int | Sequence[int], strides: int | Sequence[int], padding: str, data_format: str | None = None, name: str | None = None) -> Tensor";
        fn max_pool1d in [nn]: "(input: TensorLike, ksize: int | Sequence[int], strides: int | Sequence[int], padding: str | Sequence[Sequence[int]], data_format: str | None = None, name: str | None = None) -> Tensor";
        fn avg_pool1d in [nn]: "(input: TensorLike, ksize: int | Sequence[int], strides: int | Sequence[int], padding: str, data_format: str | None = None, name: str | None = None) -> Tensor";
        fn max_pool in [nn]: "(input: TensorLike, ksize: int | Sequence[int], strides: int | Sequence[int], padding: str | Sequence[Sequence[int]], data_format: str | None = None, name: str | None = None) -> Tensor";
        fn avg_pool in [nn]: "(input: TensorLike, ksize: int | Sequence[int], strides: int | Sequence[int], padding: str, data_format: str | None = None, name: str | None = None) -> Tensor";
        fn fused_batch_norm in [nn]: "(x: TensorLike, scale: TensorLike, offset: TensorLike, mean: TensorLike | None = None, variance: TensorLike | None = None, epsilon: float = 0.001, data_format: str = 'NHWC', is_training: _bool = True, name: str | None = None, exponential_avg_factor: float = 1.0) -> tuple[Tensor, Tensor, Tensor]";
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testutil::{close, grad, grad2, t64, vals};

    fn ramp(shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        t64(&(0..n).map(|v| v as f64).collect::<Vec<_>>(), shape)
    }

    /// The jacobians of `f` (one output, two inputs) by the batched sweep and by the
    /// row loop, and the op types that fell back to rows in the batched one.
    fn both_jacobians(
        p: &Tensor,
        q: &Tensor,
        f: impl Fn(&Tensor, &Tensor) -> Tensor,
    ) -> (Vec<Vec<f64>>, Vec<Vec<f64>>, Vec<&'static str>) {
        use crate::tape::{GradientTape, Source, UnconnectedGradients};
        let tape = GradientTape::persistent();
        let y = {
            let _on = tape.enter();
            tape.watch(p);
            tape.watch(q);
            // A second-order target: the gradients of sum(f²) run every rule's own rule.
            let inner = GradientTape::new();
            let z = {
                let _in = inner.enter();
                inner.watch(p);
                inner.watch(q);
                crate::ops::square(&f(p, q)).unwrap()
            };
            let g = inner
                .gradient(
                    &[z],
                    &[Source::Tensor(p), Source::Tensor(q)],
                    None,
                    UnconnectedGradients::Zero,
                )
                .unwrap();
            crate::ops::concat(
                &[
                    reshape(g[0].as_ref().unwrap(), &[p.size()]).unwrap(),
                    reshape(g[1].as_ref().unwrap(), &[q.size()]).unwrap(),
                ],
                0,
            )
            .unwrap()
        };
        let src = [Source::Tensor(p), Source::Tensor(q)];
        crate::tape::take_per_row_fallbacks();
        let run = |pfor| -> Vec<Vec<f64>> {
            tape.jacobian(&y, &src, UnconnectedGradients::Zero, None, pfor)
                .unwrap()
                .into_iter()
                .map(|j| vals(&j.unwrap()))
                .collect()
        };
        let batched = run(true);
        let fell = crate::tape::take_per_row_fallbacks();
        (batched, run(false), fell)
    }

    #[test]
    fn batched_seeds_equal_the_row_loop() {
        let x = ramp(&[2, 4, 4, 2]);
        let w = ramp(&[2, 2, 2, 3]);
        let dw = ramp(&[2, 2, 2, 2]);
        type F = Box<dyn Fn(&Tensor, &Tensor) -> Tensor>;
        let cases: Vec<(Tensor, Tensor, F)> = vec![
            (
                x.clone(),
                w,
                Box::new(|x, w| conv2d(x, w, [2, 1], &Padding::Same, [1, 1]).unwrap()),
            ),
            (
                x.clone(),
                dw,
                Box::new(|x, w| depthwise_conv2d(x, w, [1, 1], &Padding::Valid, [1, 1]).unwrap()),
            ),
            (
                ramp(&[2, 3, 4, 3, 2]),
                ramp(&[2, 2, 2, 2, 3]),
                Box::new(|x, w| conv3d(x, w, [1, 2, 1], &Padding::Same, [1, 1, 1]).unwrap()),
            ),
            (
                ramp(&[1, 2, 2, 2, 3]),
                ramp(&[2, 2, 2, 2, 3]),
                Box::new(|y, w| {
                    conv3d_transpose(y, w, &[1, 3, 3, 3, 2], [2, 2, 2], &Padding::Same, [1, 1, 1])
                        .unwrap()
                }),
            ),
            (
                x.clone(),
                x,
                Box::new(|x, y| {
                    let m = pool(PoolKind::Max, x, &[2, 2], &[2, 2], &Padding::Same).unwrap();
                    let a = pool(PoolKind::Avg, y, &[3, 3], &[1, 1], &Padding::Valid).unwrap();
                    multiply(&m, &crate::ops::reduce_sum(&a, None, false).unwrap()).unwrap()
                }),
            ),
        ];
        for (p, q, f) in cases {
            let (batched, rows, fell) = both_jacobians(&p, &q, f);
            assert!(fell.is_empty(), "per-row rules: {fell:?}");
            for (a, b) in batched.iter().zip(&rows) {
                close(a, b);
            }
        }
    }

    #[test]
    fn conv2d_values_same_and_valid() {
        let x = ramp(&[1, 4, 4, 1]);
        let w = t64(&[1.; 4], &[2, 2, 1, 1]);
        let y = conv2d(&x, &w, [2, 2], &Padding::Valid, [1, 1]).unwrap();
        assert_eq!(y.shape(), &[1, 2, 2, 1]);
        close(&vals(&y), &[10., 18., 42., 50.]);
        // SAME on a 5-wide row with a 2-wide kernel, stride 2: one padding column, after.
        let x = ramp(&[1, 1, 5, 1]);
        let w = t64(&[1., 1.], &[1, 2, 1, 1]);
        let y = conv2d(&x, &w, [1, 2], &Padding::Same, [1, 1]).unwrap();
        close(&vals(&y), &[1., 5., 4.]);
        // Dilation 2: taps two apart.
        let y = conv2d(&x, &w, [1, 1], &Padding::Valid, [1, 2]).unwrap();
        close(&vals(&y), &[2., 4., 6.]);
        // Explicit padding.
        let y = conv2d(
            &x,
            &w,
            [1, 1],
            &Padding::Explicit(vec![(0, 0), (1, 0)]),
            [1, 1],
        )
        .unwrap();
        close(&vals(&y), &[0., 1., 3., 5., 7.]);
    }

    #[test]
    fn conv2d_gradients_and_second_order() {
        let x = ramp(&[1, 3, 3, 1]);
        let w = t64(&[1., 2., 3., 4.], &[2, 2, 1, 1]);
        // d/dx sum(conv(x, w)): each input pixel times the filter taps covering it.
        let gx = grad(&x, None, |x| {
            conv2d(x, &w, [1, 1], &Padding::Valid, [1, 1]).unwrap()
        });
        close(&gx, &[1., 3., 2., 4., 10., 6., 3., 7., 4.]);
        let gw = grad(&w, None, |w| {
            conv2d(&x, w, [1, 1], &Padding::Valid, [1, 1]).unwrap()
        });
        close(&gw, &[8., 12., 20., 24.]);
        // sum(conv(x, w)²): its second derivative in w is 2 Σ patches patchesᵀ.
        let g2 = grad2(&w, |w| {
            let y = conv2d(&x, w, [1, 1], &Padding::Valid, [1, 1]).unwrap();
            crate::ops::square(&y).unwrap()
        });
        // Row sums of 2 PᵀP, P the 4×4 patch matrix of x.
        let p = [
            [0., 1., 3., 4.],
            [1., 2., 4., 5.],
            [3., 4., 6., 7.],
            [4., 5., 7., 8.],
        ];
        let want: Vec<f64> = (0..4)
            .map(|a| {
                (0..4)
                    .map(|b| 2. * (0..4).map(|r| p[r][a] * p[r][b]).sum::<f64>())
                    .sum()
            })
            .collect();
        close(&g2, &want);
    }

    #[test]
    fn conv3d_is_a_sum_of_conv2d_over_the_depth_taps() {
        // Depth stride 2, dilation 2 in height: each output plane z is the sum over the
        // filter's depth taps t of conv2d(x[:, 2z + t], w[t]).
        let x = ramp(&[2, 5, 5, 4, 2]);
        let w = t64(
            &(0..36).map(|v| (v % 7) as f64 - 3.).collect::<Vec<_>>(),
            &[2, 3, 1, 2, 3],
        );
        let y = conv3d(&x, &w, [2, 1, 1], &Padding::Valid, [1, 2, 1]).unwrap();
        assert_eq!(y.shape(), &[2, 2, 1, 4, 3]);
        let plane = |t: &Tensor, axis: usize, i: usize| {
            let idx: Vec<crate::ops::Index> = (0..axis)
                .map(|_| crate::ops::Index::Slice {
                    start: None,
                    stop: None,
                    step: 1,
                })
                .chain([crate::ops::Index::Int(i as isize)])
                .collect();
            crate::ops::strided_slice(t, &idx).unwrap()
        };
        let mut want = Vec::new();
        for z in 0..2 {
            let mut acc: Option<Tensor> = None;
            for t in 0..2 {
                let c = conv2d(
                    &plane(&x, 1, 2 * z + t),
                    &plane(&w, 0, t),
                    [1, 1],
                    &Padding::Valid,
                    [2, 1],
                )
                .unwrap();
                acc = Some(match acc {
                    Some(a) => add(&a, &c).unwrap(),
                    None => c,
                });
            }
            want.push(expand_dims(&acc.unwrap(), 1).unwrap());
        }
        let want = crate::ops::concat(&want, 1).unwrap();
        close(&vals(&y), &vals(&want));
        // SAME in 3-D pads each axis as conv2d does (the smaller half first).
        let y = conv3d(
            &ramp(&[1, 2, 2, 2, 1]),
            &t64(&[1.; 8], &[2, 2, 2, 1, 1]),
            [1, 1, 1],
            &Padding::Same,
            [1, 1, 1],
        )
        .unwrap();
        close(&vals(&y), &[28., 16., 18., 10., 22., 12., 13., 7.]);
        // 2-D shapes are refused, and the other way round.
        assert!(conv3d(&ramp(&[1, 2, 2, 1]), &w, [1; 3], &Padding::Same, [1; 3]).is_err());
        assert!(conv2d(&x, &w, [1; 2], &Padding::Same, [1; 2]).is_err());
    }

    #[test]
    fn transpose_and_depthwise() {
        let y = conv2d_transpose(
            &t64(&[1.; 4], &[1, 2, 2, 1]),
            &t64(&[1.; 4], &[2, 2, 1, 1]),
            &[1, 3, 3, 1],
            [1, 1],
            &Padding::Valid,
            [1, 1],
        )
        .unwrap();
        close(&vals(&y), &[1., 2., 1., 2., 4., 2., 1., 2., 1.]);
        let x = t64(&[1., 10., 2., 20.], &[1, 1, 2, 2]);
        let w = t64(&[1., 2., 3., 4.], &[1, 1, 2, 2]);
        let y = depthwise_conv2d(&x, &w, [1, 1], &Padding::Valid, [1, 1]).unwrap();
        assert_eq!(y.shape(), &[1, 1, 2, 4]);
        close(&vals(&y), &[1., 2., 30., 40., 2., 4., 60., 80.]);
        let gw = grad(&w, None, |w| {
            depthwise_conv2d(&x, w, [1, 1], &Padding::Valid, [1, 1]).unwrap()
        });
        close(&gw, &[3., 3., 30., 30.]);
    }

    #[test]
    fn pools_follow_tf_conventions() {
        // Ties: the first maximum in scan order takes the gradient.
        let x = t64(&[1., 3., 3., 1.], &[1, 2, 2, 1]);
        let p = |x: &Tensor| pool(PoolKind::Max, x, &[2, 2], &[2, 2], &Padding::Valid).unwrap();
        close(&vals(&p(&x)), &[3.]);
        close(&grad(&x, None, p), &[0., 1., 0., 0.]);
        // Average over the valid elements only (SAME).
        let x = t64(&[-1.; 9], &[1, 3, 3, 1]);
        let a = |x: &Tensor| pool(PoolKind::Avg, x, &[2, 2], &[2, 2], &Padding::Same).unwrap();
        close(&vals(&a(&x)), &[-1.; 4]);
        close(
            &grad(&x, None, a),
            &[0.25, 0.25, 0.5, 0.25, 0.25, 0.5, 0.5, 0.5, 1.],
        );
        // Linear pieces: second derivatives vanish.
        close(&grad2(&ramp(&[1, 2, 2, 1]), p), &[0.; 4]);
        assert!(pool(PoolKind::Max, &ramp(&[2, 2]), &[1], &[1], &Padding::Valid).is_err());
        assert!(pool(
            PoolKind::Avg,
            &ramp(&[1, 2, 2, 1]),
            &[4, 4],
            &[1, 1],
            &Padding::Valid
        )
        .is_err());
        // TF's output size (2 - 3 + 1) / 1 = 0: an empty output, not an error.
        let empty = pool(
            PoolKind::Avg,
            &ramp(&[1, 2, 2, 1]),
            &[3, 3],
            &[1, 1],
            &Padding::Valid,
        );
        assert_eq!(empty.unwrap().shape(), &[1, 0, 0, 1]);
    }

    #[test]
    fn errors_are_invalid_arguments() {
        let x = ramp(&[1, 3, 3, 2]);
        let w = ramp(&[2, 2, 2, 1]);
        for r in [
            conv2d(&x, &w, [0, 1], &Padding::Same, [1, 1]),
            conv2d(&x, &w, [1, 1], &Padding::Same, [0, 1]),
            conv2d(&x, &ramp(&[2, 2, 3, 1]), [1, 1], &Padding::Same, [1, 1]),
            conv2d(&ramp(&[3, 3, 2]), &w, [1, 1], &Padding::Same, [1, 1]),
            // TF's output size (3 - 5 + 1) / 1 < 0 (a 4x4 filter gives an empty output).
            conv2d(&x, &ramp(&[5, 5, 2, 1]), [1, 1], &Padding::Valid, [1, 1]),
            conv2d(&x, &w, [1, 1], &Padding::Same, [usize::MAX, 1]),
        ] {
            assert!(matches!(r, Err(Error::InvalidArgument { .. })), "{r:?}");
        }
        // Integers other than int32 (TF's CPU Conv2D takes int32 only).
        let i = Tensor::from_vec(vec![1i64; 18], &[1, 3, 3, 2]).unwrap();
        assert!(matches!(
            conv2d(&i, &i, [1, 1], &Padding::Same, [1, 1]),
            Err(Error::DType { .. })
        ));
    }

    /// The forward-mode rule of `op` at `inputs` along `tangents` (one output).
    fn jvp_of(op: impl Op, inputs: &[&Tensor], tangents: &[Option<Tensor>]) -> Vec<f64> {
        use crate::tape::arena::{Node, Slot};
        let node = Node {
            op: std::sync::Arc::new(op),
            inputs: inputs.iter().map(|t| Slot::of(t)).collect(),
            outputs: Default::default(),
            saved_inputs: inputs.iter().map(|t| Some((*t).clone())).collect(),
            saved_outputs: Default::default(),
        };
        let needs = vec![true; inputs.len()];
        let cx = VjpCx::new(&node, &needs, 0);
        let out = node.op.jvp(&cx, tangents).expect("a rule").unwrap();
        vals(out[0].as_ref().expect("a tangent"))
    }

    #[test]
    fn jvps_match_the_linearizations() {
        let x = t64(&[0.5, -1., 2., 3., 1.5, -0.5, 4., 0.], &[1, 2, 4, 1]);
        let w = t64(&[1., -2., 0.5, 3.], &[2, 2, 1, 1]);
        let dx = t64(&[1., 0., -1., 2., 0.5, 1., 0., -2.], &[1, 2, 4, 1]);
        let dw = t64(&[0., 1., 1., -1.], &[2, 2, 1, 1]);
        let g = conv_geom(
            "Conv2D",
            x.shape(),
            w.shape(),
            &[1, 1],
            &Padding::Same,
            &[1, 1],
            false,
        )
        .unwrap();
        let conv = |x: &Tensor, w: &Tensor| vals(&conv_g(&g, x, w).unwrap());
        // Bilinear: the tangent is conv(dx, w) + conv(x, dw), exactly.
        let want: Vec<f64> = conv(&dx, &w)
            .iter()
            .zip(conv(&x, &dw))
            .map(|(a, b)| a + b)
            .collect();
        let got = jvp_of(
            Conv { g: g.clone() },
            &[&x, &w],
            &[Some(dx.clone()), Some(dw.clone())],
        );
        close(&got, &want);
        close(
            &jvp_of(Conv { g: g.clone() }, &[&x, &w], &[None, Some(dw.clone())]),
            &conv(&x, &dw),
        );
        // The backprops are bilinear too.
        let dy = conv_g(&g, &x, &w).unwrap();
        let bpi = |w: &Tensor, dy: &Tensor| vals(&backprop_input_g(&g, w, dy).unwrap());
        let want: Vec<f64> = bpi(&dw, &dy)
            .iter()
            .zip(bpi(&w, &dy))
            .map(|(a, b)| a + b)
            .collect();
        let got = jvp_of(
            BackpropInput { g: g.clone() },
            &[&w, &dy],
            &[Some(dw.clone()), Some(dy.clone())],
        );
        close(&got, &want);
        // Max pooling reads the tangent at each window's maximum; average pooling
        // averages it.
        let pg = pool_geom("MaxPool", x.shape(), &[2, 2], &[2, 2], &Padding::Valid).unwrap();
        close(
            &jvp_of(MaxPool { g: pg.clone() }, &[&x], &[Some(dx.clone())]),
            &[0.5, 0.],
        );
        close(
            &jvp_of(AvgPool { g: pg }, &[&x], &[Some(dx.clone())]),
            &[0.625, -0.25],
        );
    }

    #[test]
    fn fused_batch_norm_statistics() {
        let x = t64(&[1., 2., 4., 9.], &[2, 2, 1, 1]);
        let one = t64(&[1.], &[1]);
        let zero = t64(&[0.], &[1]);
        let (y, m, v) =
            fused_batch_norm(&x, &one, &zero, None, None, 1e-3, true, true, 1.0).unwrap();
        let var: f64 = [9., 4., 0., 25.].iter().sum::<f64>() / 4.;
        close(&vals(&m), &[4.]);
        close(&vals(&v), &[var * 4. / 3.]);
        let s = (var + 1e-3).sqrt();
        close(&vals(&y), &[-3. / s, -2. / s, 0., 5. / s]);
        assert!(fused_batch_norm(&x, &one, &zero, None, None, 1e-3, true, false, 1.0).is_err());
    }
}
