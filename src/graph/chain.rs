//! Elementwise chains compiled to loops over tiles, forward and backward.
//!
//! A fused chain (see `fuse`) whose every op is one of the common real elementwise ops
//! (`+ - * /`, negation, `exp`, `log`, `sin`, `cos`, `tanh`, `sigmoid`, `sqrt`,
//! `square`, `relu`, `reciprocal`) on float32 or float64 operands of one shape (or
//! single elements, broadcast) runs here without a tensor per op: each tile of the
//! output goes through the whole chain in buffers that stay in cache, and the tiles
//! spread over the pool's threads. The element functions are the ops' own kernels, so
//! the values are the unfused ones, bit for bit.
//!
//! Under a tape the chain is recorded as one node ([`ChainOp`]) keeping only its
//! inputs. Its gradient rule, when nothing records the backward pass, is one more tiled
//! pass: each tile recomputes the chain's intermediates (cheaper than writing them to
//! memory and reading them back) and sweeps the ops' derivatives back to the inputs,
//! the same formulas as the ops' rules. When a tape records the backward pass (higher
//! derivatives), the rule runs the ops one by one on a tape of its own, so the
//! gradient is built from the ops' composed rules and is differentiable again.

use std::mem::MaybeUninit;
use std::sync::Arc;

use super::Elementwise;
use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::kernels::elementwise::{fill, fill2};
use crate::kernels::vmath::VMath;
use crate::ops::{self, Grads, Op, Saves, VjpCx};
use crate::tensor::Tensor;

/// Elements per tile of a forward pass (64 KiB of float32).
const TILE: usize = 1 << 14;
/// Elements of all the intermediates of one backward tile together.
const BACKWARD_BUDGET: usize = 1 << 17;

/// An op of a compiled chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Neg,
    Exp,
    Log,
    Sin,
    Cos,
    Tanh,
    Sigmoid,
    Sqrt,
    Square,
    Relu,
    Reciprocal,
    Add,
    Sub,
    Mul,
    Div,
}

/// The compiled form of the op TF calls `name`.
fn form_of(name: &str) -> Option<Form> {
    Some(match name {
        "Neg" => Form::Neg,
        "Exp" => Form::Exp,
        "Log" => Form::Log,
        "Sin" => Form::Sin,
        "Cos" => Form::Cos,
        "Tanh" => Form::Tanh,
        "Sigmoid" => Form::Sigmoid,
        "Sqrt" => Form::Sqrt,
        "Square" => Form::Square,
        "Relu" => Form::Relu,
        "Reciprocal" => Form::Reciprocal,
        "AddV2" => Form::Add,
        "Sub" => Form::Sub,
        "Mul" => Form::Mul,
        "RealDiv" => Form::Div,
        _ => return None,
    })
}

/// What a step's kernel is, learnt from what it does: applied to probe operands on a
/// tape of its own, it must record exactly one op, reading exactly the probes and
/// giving the kernel's result (function pointers cannot tell: one function may have
/// several addresses, one per codegen unit).
fn form(f: Elementwise) -> Option<Form> {
    let probe = |v: [f64; 2]| Tensor::from_vec(v.to_vec(), &[2]).ok();
    let args = match f {
        Elementwise::Unary(_) => vec![probe([0.5, 0.75])?],
        Elementwise::Binary(_) => vec![probe([0.5, 0.75])?, probe([1.25, 1.5])?],
    };
    let tape = crate::GradientTape::new();
    let out = {
        let _rec = tape.enter();
        for a in &args {
            tape.watch(a);
        }
        match f {
            Elementwise::Unary(f) => f(&args[0]),
            Elementwise::Binary(f) => f(&args[0], &args[1]),
        }
        .ok()?
    };
    let t = tape.cell().lock();
    let [node] = t.nodes.as_slice() else {
        return None;
    };
    let reads_args = node.inputs.len() == args.len()
        && node.inputs.iter().zip(&args).all(|(s, a)| s.id == a.id());
    let gives_out = node.outputs.len() == 1 && node.outputs[0].id == out.id();
    if reads_args && gives_out {
        form_of(node.op.name())
    } else {
        None
    }
}

/// Where a step's operand comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Arg {
    /// The previous step's result.
    Carry,
    /// Input `k` of the chain.
    Ext(usize),
}

/// One op of a chain: its kernel (for the unfused and the composed paths) and its
/// operands.
#[derive(Clone, Copy)]
pub(super) struct Step {
    pub f: Elementwise,
    pub args: [Arg; 2],
}

/// A chain with the compiled form of every step.
pub(super) struct Chain {
    steps: Arc<[Step]>,
    forms: Vec<Form>,
    inputs: usize,
}

impl Chain {
    /// The compiled chain, when every step has a compiled form.
    pub(super) fn compile(steps: &Arc<[Step]>, inputs: usize) -> Option<Chain> {
        let forms = steps
            .iter()
            .map(|s| form(s.f))
            .collect::<Option<Vec<Form>>>()?;
        Some(Chain {
            steps: steps.clone(),
            forms,
            inputs,
        })
    }
}

/// The shape of the chain's result when its operands fit the compiled loops: one float
/// dtype, standard layouts, and every operand of the result's shape or broadcast along
/// leading axes (a single element, a bias row): then element `i` of the result reads
/// element `i % size` of each operand.
fn fits(xs: &[Tensor]) -> Option<(DType, Vec<usize>)> {
    let dtype = xs.first()?.dtype();
    if !matches!(dtype, DType::F32 | DType::F64) || xs.iter().any(|t| t.dtype() != dtype) {
        return None;
    }
    let full = xs.iter().max_by_key(|t| (t.size(), t.ndim()))?;
    let shape = full.shape().to_vec();
    let trailing = |s: &[usize]| {
        let s = &s[s.iter().take_while(|&&d| d == 1).count()..];
        s.len() <= shape.len() && shape.ends_with(s) && !s.contains(&0)
    };
    let ok = xs.iter().all(|t| {
        t.is_standard_layout()
            && t.ndim() <= shape.len()
            && (t.shape() == shape.as_slice() || trailing(t.shape()))
    });
    ok.then_some((dtype, shape))
}

/// Runs `chain` on `xs` through the compiled loops (`None`: the operands do not fit),
/// recording it on the tapes that watch an input.
pub(super) fn run(chain: &Arc<Chain>, xs: &[Tensor]) -> Result<Option<Tensor>> {
    if xs.len() != chain.inputs {
        return Err(Error::Internal("fused chain input count changed".into()));
    }
    let Some((dtype, shape)) = fits(xs) else {
        return Ok(None);
    };
    // A gradient override in scope must see the chain's ops one by one.
    if crate::tape::stack::any_active() && crate::custom::any_override() {
        return Ok(None);
    }
    let out = match dtype {
        DType::F32 => forward::<f32>(chain, xs, &shape)?,
        DType::F64 => forward::<f64>(chain, xs, &shape)?,
        _ => return Ok(None),
    };
    let refs: Vec<&Tensor> = xs.iter().collect();
    ops::record(
        ChainOp {
            chain: chain.clone(),
            shape,
            sum: false,
            ready: None,
        },
        &refs,
        &[&out],
    )?;
    Ok(Some(out))
}

/// Runs `chain` and sums all of its result (the chain feeding a `reduce_sum` over every
/// axis): each tile is summed where it is computed, so the chain's result is never
/// written to memory. `None` when the operands do not fit the compiled loops. Recorded
/// on the tapes that watch an input as one node whose gradient is one tiled pass with
/// the (scalar) output gradient spread over every element.
pub(super) fn run_sum(chain: &Arc<Chain>, xs: &[Tensor]) -> Result<Option<Tensor>> {
    if xs.len() != chain.inputs {
        return Err(Error::Internal("fused chain input count changed".into()));
    }
    let Some((dtype, shape)) = fits(xs) else {
        return Ok(None);
    };
    if crate::tape::stack::any_active() && crate::custom::any_override() {
        return Ok(None);
    }
    let refs: Vec<&Tensor> = xs.iter().collect();
    // Under a tape that will be asked for the gradient (the only entry of the stack, so
    // the backward pass is not recorded), the pass that sums the chain also computes its
    // gradient for an output gradient of one: each tile's intermediates serve both, and
    // the backward pass is a scaling (or nothing, for the usual seed of one).
    let watched = crate::tape::stack::sole_tape_watching(&refs).filter(|w| w.contains(&true));
    let (out, ready) = match (dtype, watched) {
        (DType::F32, Some(w)) => sum_and_gradient::<f32>(chain, xs, &shape, &w)?,
        (DType::F64, Some(w)) => sum_and_gradient::<f64>(chain, xs, &shape, &w)?,
        (DType::F32, None) => (forward_sum::<f32>(chain, xs, &shape)?, None),
        (DType::F64, None) => (forward_sum::<f64>(chain, xs, &shape)?, None),
        _ => return Ok(None),
    };
    ops::record(
        ChainOp {
            chain: chain.clone(),
            shape,
            sum: true,
            ready,
        },
        &refs,
        &[&out],
    )?;
    Ok(Some(out))
}

/// The chain's sum and, in the same tiled pass, its gradient with respect to the
/// inputs in `needs` for an output gradient of one.
fn sum_and_gradient<T: Real>(
    chain: &Chain,
    xs: &[Tensor],
    shape: &[usize],
    needs: &[bool],
) -> Result<(Tensor, Option<Vec<Option<Tensor>>>)> {
    let (grads, total) = backward::<T>(chain, xs, OutGrad::Spread(1.0), shape, needs, true)?;
    let total = total.ok_or_else(|| Error::Internal("fused sum without its total".into()))?;
    Ok((total, Some(grads)))
}

/// The float types the compiled loops run on.
trait Real: num_traits::Float + VMath + Element + Default + crate::ops::SigmoidFn {}
impl Real for f32 {}
impl Real for f64 {}

/// `s` as the `MaybeUninit` slice the kernels write.
fn uninit<T>(s: &mut [T]) -> &mut [MaybeUninit<T>] {
    // SAFETY: `MaybeUninit<T>` has `T`'s layout, and the kernels only write valid
    // `T`s through it, so `s` stays initialized.
    unsafe { &mut *(s as *mut [T] as *mut [MaybeUninit<T>]) }
}

/// The chain's operands for elements `lo..hi`: slices of the full-size ones, the
/// broadcast ones repeated into `scratch`.
fn operands<'a, T: Real>(
    xs: &'a [&'a [T]],
    lo: usize,
    hi: usize,
    scratch: &'a mut [Vec<T>],
) -> Vec<&'a [T]> {
    let n = hi - lo;
    let mut out: Vec<&'a [T]> = Vec::with_capacity(xs.len());
    for (x, s) in xs.iter().zip(scratch.iter_mut()) {
        if x.len() >= hi {
            out.push(&x[lo..hi]);
            continue;
        }
        s.clear();
        if x.len() == 1 {
            s.resize(n, x[0]);
        } else {
            let p = x.len();
            let mut i = lo;
            while i < hi {
                let at = i % p;
                let take = (p - at).min(hi - i);
                s.extend_from_slice(&x[at..at + take]);
                i += take;
            }
        }
        out.push(&s[..]);
    }
    out
}

/// `out = form(a, b)` over a tile.
fn step_forward<T: Real>(form: Form, a: &[T], b: &[T], out: &mut [T]) {
    let o = uninit(out);
    match form {
        Form::Neg => fill(a, o, &|v: T| -v),
        Form::Exp => fill(a, o, &|v: T| v.vexp()),
        Form::Log => fill(a, o, &|v: T| v.ln()),
        Form::Sin => T::sin_chunk(a, o),
        Form::Cos => T::cos_chunk(a, o),
        Form::Tanh => fill(a, o, &|v: T| v.vtanh()),
        Form::Sigmoid => fill(a, o, &|v: T| v.sigmoid_()),
        Form::Sqrt => fill(a, o, &|v: T| v.sqrt()),
        Form::Square => fill(a, o, &|v: T| v * v),
        Form::Relu => fill(a, o, &|v: T| if v > T::zero() { v } else { T::zero() }),
        Form::Reciprocal => fill(a, o, &|v: T| v.recip()),
        Form::Add => fill2(a, b, o, &|p: T, q: T| p + q),
        Form::Sub => fill2(a, b, o, &|p: T, q: T| p - q),
        Form::Mul => fill2(a, b, o, &|p: T, q: T| p * q),
        Form::Div => fill2(a, b, o, &|p: T, q: T| p / q),
    }
}

/// The partial derivatives of one step over a tile, each the formula of the op's own
/// gradient rule: `ga = ∂/∂a` and `gb = ∂/∂b` applied to the output gradient `g`
/// (`y` is the step's output; `tmp` a scratch tile).
#[allow(clippy::too_many_arguments)]
fn step_backward<T: Real>(
    form: Form,
    g: &[T],
    a: &[T],
    b: &[T],
    y: &[T],
    ga: Option<&mut [T]>,
    gb: Option<&mut [T]>,
    tmp: &mut [T],
) {
    let zero = T::zero();
    if let Some(ga) = ga {
        let o = uninit(ga);
        match form {
            Form::Neg => fill(g, o, &|d: T| -d),
            Form::Exp => fill2(g, y, o, &|d: T, y: T| d * y),
            Form::Log => fill2(g, a, o, &|d: T, x: T| d / x),
            Form::Sin => {
                T::cos_chunk(a, uninit(tmp));
                fill2(g, &tmp[..], o, &|d: T, c: T| d * c);
            }
            Form::Cos => {
                T::sin_chunk(a, uninit(tmp));
                fill2(g, &tmp[..], o, &|d: T, s: T| -d * s);
            }
            Form::Tanh => fill2(g, y, o, &|d: T, y: T| d * (T::one() - y * y)),
            Form::Sigmoid => fill2(g, y, o, &|d: T, y: T| d * (y * (T::one() - y))),
            Form::Sqrt => {
                let half = T::from(0.5).unwrap_or_else(T::zero);
                fill2(g, y, o, &|d: T, y: T| {
                    if d == zero {
                        zero
                    } else {
                        half / y * d
                    }
                })
            }
            Form::Square => {
                let two = T::one() + T::one();
                fill2(g, a, o, &|d: T, x: T| d * (two * x))
            }
            Form::Relu => fill2(g, y, o, &|d: T, y: T| if y > zero { d } else { zero }),
            Form::Reciprocal => fill2(g, y, o, &|d: T, y: T| {
                if d == zero {
                    zero
                } else {
                    -(y * y) * d
                }
            }),
            Form::Add | Form::Sub => o.iter_mut().zip(g).for_each(|(o, &d)| {
                o.write(d);
            }),
            Form::Mul => fill2(g, b, o, &|d: T, q: T| d * q),
            Form::Div => fill2(g, b, o, &|d: T, q: T| d / q),
        }
    }
    if let Some(gb) = gb {
        let o = uninit(gb);
        match form {
            Form::Add => o.iter_mut().zip(g).for_each(|(o, &d)| {
                o.write(d);
            }),
            Form::Sub => fill(g, o, &|d: T| -d),
            Form::Mul => fill2(g, a, o, &|d: T, p: T| d * p),
            Form::Div => {
                // TF's rule: dy * ((-x / y) / y).
                for (i, o) in o.iter_mut().enumerate() {
                    o.write(g[i] * ((-a[i] / b[i]) / b[i]));
                }
            }
            _ => {}
        }
    }
}

fn is_binary(form: Form) -> bool {
    matches!(form, Form::Add | Form::Sub | Form::Mul | Form::Div)
}

/// The full-size slices of the operands (single elements as one-element slices).
fn slices<T: Real>(xs: &[Tensor]) -> Result<Vec<&[T]>> {
    xs.iter()
        .map(|t| {
            T::unwrap(t.data())
                .and_then(|a| a.as_slice())
                .ok_or_else(|| Error::Internal("fused chain operand not contiguous".into()))
        })
        .collect()
}

/// Runs `f(lo, len, scratch)` on every tile of `n` elements: the tiles spread over the
/// pool's threads, each job with its own scratch (`make`), reused tile after tile.
fn tiled<S>(
    n: usize,
    tile: usize,
    make: impl Fn() -> S + Sync + Send,
    f: impl Fn(usize, usize, &mut S) + Sync + Send,
) {
    let tiles = n.div_ceil(tile);
    if tiles == 0 {
        return;
    }
    let jobs = tiles.min(crate::pool::threads() * 2).max(1);
    crate::pool::for_each(jobs, |j| {
        let mut scratch = make();
        let mut t = j;
        while t < tiles {
            let lo = t * tile;
            f(lo, tile.min(n - lo), &mut scratch);
            t += jobs;
        }
    });
}

/// An output buffer of `n` zeros, or the error for a size that cannot be allocated.
fn zeroed<T: Real>(n: usize) -> Result<Vec<T>> {
    let mut v: Vec<T> = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| Error::exhausted("fused", format!("cannot allocate {n} elements")))?;
    v.resize(n, T::zero());
    Ok(v)
}

fn forward<T: Real>(chain: &Chain, xs: &[Tensor], shape: &[usize]) -> Result<Tensor> {
    let n: usize = shape.iter().product();
    let full = slices::<T>(xs)?;
    let mut buf = zeroed::<T>(n)?;
    let out = Shared(buf.as_mut_ptr());
    let last = chain.forms.len() - 1;
    // Scratch of one tile, or of the whole (smaller) result.
    let tile = TILE.min(n.max(1));
    let make = || {
        let singles: Vec<Vec<T>> = vec![Vec::new(); full.len()];
        (singles, vec![T::zero(); tile], vec![T::zero(); tile])
    };
    tiled(n, tile, make, |lo, len, (singles, cur, next)| {
        let ins = operands(&full, lo, lo + len, singles);
        // SAFETY: this tile alone writes elements lo..lo + len of `buf` (n long, alive
        // until `tiled` returns).
        let piece = unsafe { out.slice(lo, len) };
        for (k, (&form, step)) in chain.forms.iter().zip(chain.steps.iter()).enumerate() {
            let get = |a: Arg| -> &[T] {
                match a {
                    Arg::Carry => &cur[..len],
                    Arg::Ext(j) => ins[j],
                }
            };
            let dst: &mut [T] = if k == last {
                &mut *piece
            } else {
                &mut next[..len]
            };
            let b = if is_binary(form) {
                get(step.args[1])
            } else {
                &[][..]
            };
            step_forward(form, get(step.args[0]), b, dst);
            if k != last {
                std::mem::swap(cur, next);
            }
        }
    });
    Tensor::from_vec(buf, shape)
}

/// The sum of the chain's result over every element: each tile's values summed in
/// `f64` as they are made, the tiles' sums added in tile order (the same total whatever
/// the number of threads).
fn forward_sum<T: Real>(chain: &Chain, xs: &[Tensor], shape: &[usize]) -> Result<Tensor> {
    let n: usize = shape.iter().product();
    let full = slices::<T>(xs)?;
    let tile = TILE.min(n.max(1));
    let tiles = n.div_ceil(tile);
    let mut sums = vec![0f64; tiles];
    let out = Shared(sums.as_mut_ptr());
    let make = || {
        let singles: Vec<Vec<T>> = vec![Vec::new(); full.len()];
        (singles, vec![T::zero(); tile], vec![T::zero(); tile])
    };
    tiled(n, tile, make, |lo, len, (singles, cur, next)| {
        let ins = operands(&full, lo, lo + len, singles);
        for (&form, step) in chain.forms.iter().zip(chain.steps.iter()) {
            let get = |a: Arg| -> &[T] {
                match a {
                    Arg::Carry => &cur[..len],
                    Arg::Ext(j) => ins[j],
                }
            };
            let b = if is_binary(form) {
                get(step.args[1])
            } else {
                &[][..]
            };
            step_forward(form, get(step.args[0]), b, &mut next[..len]);
            std::mem::swap(cur, next);
        }
        let mut acc = [0f64; 4];
        let rest = add_quads(&cur[..len], &mut acc);
        // SAFETY: tile `lo / tile` alone writes its entry of `sums` (alive until
        // `tiled` returns).
        let slot = unsafe { out.slice(lo / tile, 1) };
        slot[0] = (acc[0] + acc[1]) + (acc[2] + acc[3]) + rest;
    });
    let total: f64 = sums.iter().sum();
    Ok(Tensor::scalar(T::from(total).unwrap_or_else(T::nan)))
}

/// A raw output buffer written by disjoint tiles from several threads.
#[derive(Clone, Copy)]
struct Shared<T>(*mut T);
// SAFETY: tiles write disjoint ranges of the buffer (see `backward`).
unsafe impl<T: Send> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// Elements `lo..lo + len` of the buffer.
    ///
    /// # Safety
    /// The range lies in the buffer, the buffer outlives the slice, and no other
    /// slice of the range is alive at the same time.
    #[allow(clippy::mut_from_ref)]
    unsafe fn slice(&self, lo: usize, len: usize) -> &mut [T] {
        // SAFETY: as the caller promises.
        unsafe { std::slice::from_raw_parts_mut(self.0.add(lo), len) }
    }
}

/// The input gradients of the chain for output gradient `dy`: one output-shaped
/// buffer per input in `needs` (the tape sums broadcast inputs' gradients down).
///
/// With `sum`, the same pass also sums the chain's result over every element, exactly
/// as [`forward_sum`] does (the same tiles, the same order of additions), and returns
/// that sum: the forward and the backward pass of a summed chain in one.
fn backward<T: Real>(
    chain: &Chain,
    xs: &[Tensor],
    dy: OutGrad<'_>,
    shape: &[usize],
    needs: &[bool],
    sum: bool,
) -> Result<(Vec<Option<Tensor>>, Option<Tensor>)> {
    let n: usize = shape.iter().product();
    let full = slices::<T>(xs)?;
    let owned;
    let spread = match dy {
        OutGrad::Spread(v) => T::from(v).unwrap_or_else(T::nan),
        OutGrad::Each(_) => T::zero(),
    };
    let dy: Option<&[T]> = match dy {
        OutGrad::Each(dy) => {
            let dy = T::unwrap(dy.data())
                .ok_or_else(|| Error::Internal("fused chain gradient of another dtype".into()))?;
            Some(match dy.as_slice() {
                Some(s) => s,
                None => {
                    owned = crate::kernels::elementwise::to_standard(&dy.view(), shape)?;
                    owned
                        .as_slice()
                        .ok_or_else(|| Error::Internal("standard layout without a slice".into()))?
                }
            })
        }
        OutGrad::Spread(_) => None,
    };
    let mut outs: Vec<Option<Vec<T>>> = Vec::with_capacity(xs.len());
    for &need in needs {
        outs.push(if need { Some(zeroed::<T>(n)?) } else { None });
    }
    let ptrs: Vec<Option<Shared<T>>> = outs
        .iter_mut()
        .map(|o| o.as_mut().map(|v| Shared(v.as_mut_ptr())))
        .collect();
    let m = chain.forms.len();
    let mut tile = (BACKWARD_BUDGET / (m + 4)).clamp(256, TILE);
    if sum {
        // A power of two, so a forward tile is a whole number of these.
        tile = 1 << tile.ilog2();
    }
    let tile = tile.min(n.max(1));
    let make = || Scratch::<T> {
        singles: vec![Vec::new(); full.len()],
        vals: vec![T::zero(); m * tile],
        g: vec![T::zero(); tile],
        ga: vec![T::zero(); tile],
        gb: vec![T::zero(); tile],
        tmp: vec![T::zero(); tile],
        written: vec![false; full.len()],
    };
    let body = |lo: usize, len: usize, s: &mut Scratch<T>| {
        let ins = operands(&full, lo, lo + len, &mut s.singles);
        // The steps' outputs over this tile.
        let vals = &mut s.vals[..m * len];
        for k in 0..m {
            let (done, rest) = vals.split_at_mut(k * len);
            let get = |a: Arg| -> &[T] {
                match a {
                    Arg::Carry => &done[(k - 1) * len..],
                    Arg::Ext(j) => ins[j],
                }
            };
            let form = chain.forms[k];
            let step = chain.steps[k];
            let b = if is_binary(form) {
                get(step.args[1])
            } else {
                &[][..]
            };
            step_forward(form, get(step.args[0]), b, &mut rest[..len]);
        }
        let vals = &s.vals[..m * len];
        // SAFETY: this tile alone owns elements lo..lo + len of every output buffer,
        // each `n` long and alive until `tiled` returns.
        let mut dst: Vec<Option<&mut [T]>> = ptrs
            .iter()
            .map(|p| p.as_ref().map(|p| unsafe { p.slice(lo, len) }))
            .collect();
        s.written.iter_mut().for_each(|w| *w = false);
        let g = &mut s.g[..len];
        match dy {
            Some(dy) => g.copy_from_slice(&dy[lo..lo + len]),
            None => g.fill(spread),
        }
        let (ga, gb, tmp) = (&mut s.ga[..len], &mut s.gb[..len], &mut s.tmp[..len]);
        for k in (0..m).rev() {
            let form = chain.forms[k];
            let step = chain.steps[k];
            let binary = is_binary(form);
            let wants = |a: Arg| match a {
                Arg::Carry => k > 0,
                Arg::Ext(j) => needs[j],
            };
            let want_a = wants(step.args[0]);
            let want_b = binary && wants(step.args[1]);
            if !want_a && !want_b {
                // Only the first step can take no carry: nothing flows further back.
                continue;
            }
            let val = |a: Arg| -> &[T] {
                match a {
                    Arg::Carry => &vals[(k - 1) * len..k * len],
                    Arg::Ext(j) => ins[j],
                }
            };
            let a = val(step.args[0]);
            let b = if binary { val(step.args[1]) } else { &[][..] };
            let y = &vals[k * len..(k + 1) * len];
            step_backward(
                form,
                g,
                a,
                b,
                y,
                want_a.then_some(&mut *ga),
                want_b.then_some(&mut *gb),
                tmp,
            );
            // Route the partials: to the carry (the previous step's gradient) or into
            // an input's gradient.
            let mut carry: Option<&[T]> = None;
            let mut carry2: Option<&[T]> = None;
            for (i, want) in [(0usize, want_a), (1, want_b)] {
                if !want {
                    continue;
                }
                let part: &[T] = if i == 0 { ga } else { gb };
                match step.args[i] {
                    Arg::Carry => {
                        if carry.is_none() {
                            carry = Some(part);
                        } else {
                            carry2 = Some(part);
                        }
                    }
                    Arg::Ext(j) => {
                        if let Some(out) = dst[j].as_deref_mut() {
                            if s.written[j] {
                                out.iter_mut().zip(part).for_each(|(o, &p)| *o = *o + p);
                            } else {
                                out.copy_from_slice(part);
                                s.written[j] = true;
                            }
                        }
                    }
                }
            }
            match (carry, carry2) {
                (Some(c), Some(c2)) => {
                    for ((o, &p), &q) in g.iter_mut().zip(c).zip(c2) {
                        *o = p + q;
                    }
                }
                (Some(c), None) => g.copy_from_slice(c),
                _ => g.iter_mut().for_each(|v| *v = T::zero()),
            }
        }
    };
    let total = if sum {
        // Forward tiles (as `forward_sum`'s), each swept in backward tiles whose last
        // step's values add into the forward tile's sum.
        let ftile = TILE.min(n.max(1));
        let mut sums = vec![0f64; n.div_ceil(ftile)];
        let out = Shared(sums.as_mut_ptr());
        tiled(n, ftile, make, |lo, len, s| {
            let mut acc = [0f64; 4];
            let mut rest = 0f64;
            let mut at = lo;
            while at < lo + len {
                let part = tile.min(lo + len - at);
                body(at, part, s);
                rest += add_quads(&s.vals[(m - 1) * part..m * part], &mut acc);
                at += part;
            }
            // SAFETY: tile `lo / ftile` alone writes its entry of `sums` (alive until
            // `tiled` returns).
            let slot = unsafe { out.slice(lo / ftile, 1) };
            slot[0] = (acc[0] + acc[1]) + (acc[2] + acc[3]) + rest;
        });
        let total: f64 = sums.iter().sum();
        Some(Tensor::scalar(T::from(total).unwrap_or_else(T::nan)))
    } else {
        tiled(n, tile, make, body);
        None
    };
    let grads = outs
        .into_iter()
        .map(|o| o.map(|v| Tensor::from_vec(v, shape)).transpose())
        .collect::<Result<_>>()?;
    Ok((grads, total))
}

/// Adds `vals` into four running sums, element `i` into `acc[i % 4]` (so the
/// additions do not wait on each other); the elements after the last whole four are
/// summed apart and returned. The partial sums of consecutive slices, each but the
/// last a whole number of fours, are those of the slices together.
fn add_quads<T: Real>(vals: &[T], acc: &mut [f64; 4]) -> f64 {
    let mut quads = vals.chunks_exact(4);
    for q in &mut quads {
        for (a, v) in acc.iter_mut().zip(q) {
            *a += v.to_f64().unwrap_or(f64::NAN);
        }
    }
    quads
        .remainder()
        .iter()
        .map(|v| v.to_f64().unwrap_or(f64::NAN))
        .sum()
}

/// The output gradient of a backward pass: one per element, or (a chain summed into
/// one value) the scalar's gradient, the same for every element.
#[derive(Clone, Copy)]
enum OutGrad<'a> {
    Each(&'a Tensor),
    Spread(f64),
}

/// One backward job's buffers, reused tile after tile.
struct Scratch<T> {
    singles: Vec<Vec<T>>,
    vals: Vec<T>,
    g: Vec<T>,
    ga: Vec<T>,
    gb: Vec<T>,
    tmp: Vec<T>,
    written: Vec<bool>,
}

/// A compiled chain on a tape: one node, its inputs kept. With `sum`, the node is the
/// chain followed by a sum over every element (its output a scalar).
///
/// `ready`: the input gradients for an output gradient of one, computed with the
/// forward pass (a summed chain under a tape, see `run_sum`); `None` for the inputs
/// no tape watched then.
struct ChainOp {
    chain: Arc<Chain>,
    shape: Vec<usize>,
    sum: bool,
    ready: Option<Vec<Option<Tensor>>>,
}

impl ChainOp {
    /// The gradient through the ops' own rules: the chain run again op by op on a tape
    /// of its own (recorded by any outer tape, so differentiable again).
    fn composed(&self, xs: &[Tensor], dy: &Tensor, needs: &[bool], batch: usize) -> Result<Grads> {
        let tape = crate::GradientTape::new();
        let out = {
            let _rec = tape.enter();
            for x in xs {
                tape.watch(x);
            }
            let y = run_steps(&self.chain.steps, xs)?;
            if self.sum {
                ops::reduce_sum(&y, None, false)?
            } else {
                y
            }
        };
        // An input passed twice (the same tensor) gets its gradient once.
        let wanted: Vec<usize> = (0..xs.len())
            .filter(|&i| needs[i] && xs.iter().position(|t| t.id() == xs[i].id()) == Some(i))
            .collect();
        let sources: Vec<crate::tape::Source<'_>> = wanted
            .iter()
            .map(|&i| crate::tape::Source::Tensor(&xs[i]))
            .collect();
        let g = tape.gradient_batched(
            std::slice::from_ref(&out),
            &sources,
            vec![Some(dy.clone())],
            batch,
            crate::tape::UnconnectedGradients::Zero,
        )?;
        let mut grads: Grads = (0..xs.len()).map(|_| None).collect();
        for (&i, g) in wanted.iter().zip(g) {
            grads[i] = g;
        }
        Ok(grads)
    }
}

impl ChainOp {
    /// The gradients computed with the forward pass (for an output gradient of one)
    /// times the scalar output gradient `dy`: as they are when `dy` is one.
    fn scaled(ready: &[Option<Tensor>], needs: &[bool], dy: &Tensor) -> Result<Grads> {
        let one = dy.to_f64_scalar()? == 1.0;
        ready
            .iter()
            .zip(needs)
            .map(|(g, &need)| match g {
                Some(g) if need => {
                    if one {
                        Ok(Some(g.clone()))
                    } else {
                        crate::tape::stack::suspended(|| ops::mul(g, dy)).map(Some)
                    }
                }
                _ => Ok(None),
            })
            .collect()
    }
}

/// The chain op by op (engine calls, recorded by active tapes).
pub(super) fn run_steps(steps: &[Step], xs: &[Tensor]) -> Result<Tensor> {
    let mut carry: Option<Tensor> = None;
    for s in steps {
        let get = |a: Arg| -> Result<&Tensor> {
            match a {
                Arg::Carry => carry
                    .as_ref()
                    .ok_or_else(|| Error::Internal("fused chain without a carry".into())),
                Arg::Ext(k) => xs
                    .get(k)
                    .ok_or_else(|| Error::Internal("fused chain input out of range".into())),
            }
        };
        let next = match s.f {
            Elementwise::Unary(f) => f(get(s.args[0])?)?,
            Elementwise::Binary(f) => f(get(s.args[0])?, get(s.args[1])?)?,
        };
        carry = Some(next);
    }
    carry.ok_or_else(|| Error::Internal("empty fused chain".into()))
}

impl Op for ChainOp {
    fn name(&self) -> &'static str {
        if self.sum {
            "FusedElementwiseSum"
        } else {
            "FusedElementwise"
        }
    }
    fn batched(&self) -> bool {
        true
    }
    fn saves(&self) -> Saves {
        Saves::INPUTS
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let xs: Vec<Tensor> = (0..cx.num_inputs())
            .map(|i| cx.input(i).cloned())
            .collect::<Result<_>>()?;
        let needs: Vec<bool> = (0..xs.len()).map(|i| cx.needs(i)).collect();
        let dy = &dys[0];
        let fits = if self.sum {
            dy.ndim() == 0
        } else {
            dy.shape() == self.shape.as_slice()
        };
        let plain = !crate::tape::stack::any_active() && fits && dy.dtype() == xs[0].dtype();
        if !plain {
            return self.composed(&xs, dy, &needs, cx.batch());
        }
        if let Some(ready) = &self.ready {
            if needs.iter().zip(ready).all(|(&n, r)| !n || r.is_some()) {
                return Self::scaled(ready, &needs, dy);
            }
        }
        let g = if self.sum {
            OutGrad::Spread(dy.to_f64_scalar()?)
        } else {
            OutGrad::Each(dy)
        };
        let (g, _) = match dy.dtype() {
            DType::F32 => backward::<f32>(&self.chain, &xs, g, &self.shape, &needs, false)?,
            DType::F64 => backward::<f64>(&self.chain, &xs, g, &self.shape, &needs, false)?,
            _ => return self.composed(&xs, dy, &needs, cx.batch()),
        };
        Ok(g.into_iter().collect())
    }
}
