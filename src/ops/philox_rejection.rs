//! The rejection-sampled distributions of TF's stateless random ops, drawn from the same
//! Philox streams as `ops::philox`: `tf.random.stateless_gamma` (`StatelessRandomGammaV3`,
//! with TF's reparameterization gradient wrt alpha, `RandomGammaGrad`),
//! `tf.random.stateless_poisson` (`StatelessRandomPoisson`) and
//! `tf.random.stateless_binomial` (`StatelessRandomBinomial`, and the draw of
//! `tf.random.Generator.binomial` from a generator's state).
//!
//! TF's CPU kernels, step by step: output `i` (counted parameter by parameter: all the
//! samples of the first alpha, then the second's) draws from the generator skipped by
//! `256 * i` blocks (`42 * i` for a binomial drawn by inversion), its uniform and normal
//! doubles taken from each block last first (TF's sample buffers), and is stored at
//! `sample * num_params + param`. So the numbers are TF 2.21's for the same seed, up to
//! the platform's `log`, `exp`, `pow` and `lgamma` (glibc's on Linux, as TF's; `lgamma`
//! is the `libm` crate's, which can only flip a draw that sits on an acceptance bound).

use half::{bf16, f16};

use super::philox::{box_muller_f64, u64_to_f64, Philox, Source, PIECE};
use super::{grads, Grads, Op, Saves, VjpCx};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// Doubles taken one at a time from a distribution that makes two per Philox block,
/// last first (TF's `SampleBuffer` and `UNIFORM` macro).
struct Buffer {
    vals: [f64; 2],
    left: usize,
}

impl Buffer {
    fn new() -> Buffer {
        Buffer {
            vals: [0.0; 2],
            left: 0,
        }
    }
    fn next(&mut self, gen: &mut Philox, make: fn([u32; 4]) -> [f64; 2]) -> f64 {
        if self.left == 0 {
            self.vals = make(gen.block());
            gen.skip(1);
            self.left = 2;
        }
        self.left -= 1;
        self.vals[self.left]
    }
}

/// Attempts a rejection loop makes before giving up (TF's loops have no bound: where
/// they would not end, for parameters at the edge of what doubles hold, this op fails).
const MAX_TRIES: usize = 1 << 16;

/// A sample whose loop gave up (never a value of these distributions).
const STUCK: f64 = f64::NEG_INFINITY;

/// `v`, unless a sample's loop gave up.
fn finished(op: &'static str, v: Vec<f64>) -> Result<Vec<f64>> {
    if v.contains(&STUCK) {
        return Err(Error::invalid(
            op,
            "the rejection sampler did not finish: the parameters are beyond what it can draw from",
        ));
    }
    Ok(v)
}

/// TF's `UniformDistribution<double>`: two doubles in `[0, 1)` per block.
fn uniform2(x: [u32; 4]) -> [f64; 2] {
    [u64_to_f64(x[0], x[1]), u64_to_f64(x[2], x[3])]
}

/// `values` (in output order) as a tensor of `dt`, converted as TF's `static_cast` from
/// double does (half and bfloat16 through float).
fn to_dtype(op: &'static str, values: Vec<f64>, shape: &[usize], dt: DType) -> Result<Tensor> {
    match dt {
        DType::F64 => Tensor::from_vec(values, shape),
        DType::F32 => Tensor::from_vec(values.into_iter().map(|v| v as f32).collect(), shape),
        DType::F16 => Tensor::from_vec(
            values
                .into_iter()
                .map(|v| f16::from_f32(v as f32))
                .collect(),
            shape,
        ),
        DType::BF16 => Tensor::from_vec(
            values
                .into_iter()
                .map(|v| bf16::from_f32(v as f32))
                .collect(),
            shape,
        ),
        DType::I32 => Tensor::from_vec(values.into_iter().map(|v| v as i32).collect(), shape),
        DType::I64 => Tensor::from_vec(values.into_iter().map(|v| v as i64).collect(), shape),
        d => Err(Error::dtype(
            op,
            format!("unsupported output dtype {}", d.name()),
        )),
    }
}

/// The largest value of output dtype `dt` (TF's `NumTraits<U>::highest()`).
fn highest(dt: DType) -> f64 {
    match dt {
        DType::F16 => 65504.0,
        DType::BF16 => f64::from(bf16::MAX),
        DType::F32 => f64::from(f32::MAX),
        DType::I32 => f64::from(i32::MAX),
        DType::I64 => i64::MAX as f64,
        _ => f64::MAX,
    }
}

/// How many samples each parameter gets: `shape` must end with `params` (the
/// parameters' shape), as TF requires.
fn samples_per_param(op: &'static str, shape: &[usize], params: &[usize]) -> Result<usize> {
    let n = crate::size::num_elements(op, shape)?;
    if params.len() > shape.len() || shape[shape.len() - params.len()..] != *params {
        return Err(Error::invalid(
            op,
            format!(
                "Shape passed in must end with broadcasted shape: shape {shape:?}, parameters {params:?}"
            ),
        ));
    }
    let p: usize = params.iter().product();
    if p == 0 {
        if n == 0 {
            return Ok(0);
        }
        return Err(Error::invalid(
            op,
            "the parameters should have a non-zero element count",
        ));
    }
    Ok(n / p)
}

/// The `n` outputs (memory order) of `f(output_index, param_index)`, with TF's layout:
/// output index `param * per + sample` is stored at `sample * params + param`.
fn fill(
    op: &'static str,
    n: usize,
    params: usize,
    per: usize,
    f: impl Fn(u128, usize) -> f64 + Sync,
) -> Result<Vec<f64>> {
    let mut v = crate::size::try_vec_filled(op, n, 0f64)?;
    crate::pool::pieces(&mut v, PIECE, |i, piece| {
        for (j, o) in piece.iter_mut().enumerate() {
            let at = i * PIECE + j;
            let (sample, param) = (at / params, at % params);
            *o = f((param * per + sample) as u128, param);
        }
    });
    Ok(v)
}

/// The parameter tensor `t` as doubles, checked to be a float tensor.
fn float_params(op: &'static str, what: &str, t: &Tensor) -> Result<Vec<f64>> {
    if !t.dtype().is_floating() {
        return Err(Error::dtype(
            op,
            format!(
                "{what} must be a floating point tensor, got {}",
                t.dtype().name()
            ),
        ));
    }
    crate::ops::cast(t, DType::F64)?.to_vec::<f64>()
}

// ------------------------------------------------------------------------------ gamma

/// One gamma sample of concentration `alpha` from `gen` (TF's Marsaglia-Tsang loop).
fn gamma_one(mut gen: Philox, alpha: f64) -> f64 {
    if alpha == 1.0 {
        // An exponential: the block's second uniform.
        let u = uniform2(gen.block())[1];
        return -(-u).ln_1p();
    }
    let below_one = alpha < 1.0;
    let d = alpha + if below_one { 2.0 / 3.0 } else { -1.0 / 3.0 };
    let c = 1.0 / 3.0 / d.sqrt();
    let (mut normal, mut uniform) = (Buffer::new(), Buffer::new());
    for _ in 0..MAX_TRIES {
        let x = normal.next(&mut gen, box_muller_f64);
        let mut v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        v = v * v * v;
        let u = uniform.next(&mut gen, uniform2);
        if u < 1.0 - 0.0331 * (x * x) * (x * x) || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
            let mut res = d * v;
            if below_one {
                let b = uniform.next(&mut gen, uniform2);
                res *= b.powf(1.0 / alpha);
            }
            return res;
        }
    }
    STUCK
}

/// Gamma samples of concentration `alpha` (a float tensor whose shape ends `shape`)
/// from `gen`, in `alpha`'s dtype: TF's `StatelessRandomGammaV3` (not recorded).
pub fn gamma_from(shape: &[usize], gen: Philox, alpha: &Tensor) -> Result<Tensor> {
    const OP: &str = "StatelessRandomGammaV3";
    let a = float_params(OP, "alpha", alpha)?;
    let per = samples_per_param(OP, shape, alpha.shape())?;
    let n = crate::size::check_shape_of::<f64>(OP, shape)?;
    let v = finished(
        OP,
        fill(OP, n, a.len().max(1), per, |i, p| {
            gamma_one(gen.skipped(256 * i), a[p])
        })?,
    )?;
    to_dtype(OP, v, shape, alpha.dtype())
}

/// Gamma samples drawn from `source_tensor` (a seed or a generator state), recorded so
/// that tapes differentiate them wrt `alpha` (TF's implicit reparameterization: `dy`
/// times [`random_gamma_grad`], summed over the sample dimensions).
pub fn stateless_gamma(
    shape: &[usize],
    source: Source,
    source_tensor: &Tensor,
    alpha: &Tensor,
) -> Result<Tensor> {
    let gen = super::philox::philox_of("StatelessRandomGammaV3", source, source_tensor)?;
    let out = gamma_from(shape, gen, alpha)?;
    super::record(GammaOp, &[source_tensor, alpha], &[&out])?;
    Ok(out)
}

struct GammaOp;
impl Op for GammaOp {
    fn name(&self) -> &'static str {
        "StatelessRandomGammaV3"
    }
    fn saves(&self) -> Saves {
        Saves {
            inputs: 0b10,
            outputs: 1,
        }
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        if !cx.needs(1) {
            return Ok(grads![None, None]);
        }
        let (alpha, sample) = (cx.input(1)?, cx.output(0)?);
        let partial = random_gamma_grad(alpha, sample)?;
        let g = crate::ops::multiply(&dys[0], &partial)?;
        let lead = sample.ndim() - alpha.ndim();
        let g = if lead == 0 {
            g
        } else {
            let axes: Vec<isize> = (0..lead as isize).collect();
            crate::ops::reduce_sum(&g, Some(&axes[..]), false)?
        };
        Ok(grads![None, Some(g)])
    }
}

/// A value and its derivative wrt the gamma concentration (forward mode by hand).
#[derive(Clone, Copy)]
struct Dual(f64, f64);

impl Dual {
    fn plus(self, o: Dual) -> Dual {
        Dual(self.0 + o.0, self.1 + o.1)
    }
    fn times(self, o: Dual) -> Dual {
        Dual(self.0 * o.0, self.1 * o.0 + self.0 * o.1)
    }
    fn inv(self) -> Dual {
        Dual(1.0 / self.0, -self.1 / (self.0 * self.0))
    }
    fn scale(self, k: f64) -> Dual {
        Dual(self.0 * k, self.1 * k)
    }
}

/// `∂x/∂α` of a standard gamma sample `x` held at its CDF value: `-(∂P/∂α) / (∂P/∂x)`
/// with `P` the regularized lower incomplete gamma function (TF's `RandomGammaGrad`).
/// Computed from `P`'s series (`x < α + 1`) or `Q`'s continued fraction, each carried
/// with its derivative wrt `α`, divided by the density in closed form (no underflow).
fn gamma_sample_der_alpha(alpha: f64, x: f64) -> f64 {
    if alpha.is_nan() || x.is_nan() || alpha <= 0.0 || x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return 0.0;
    }
    if x.is_infinite() {
        return f64::INFINITY;
    }
    let (lnx, a) = (x.ln(), Dual(alpha, 1.0));
    const EPS: f64 = 1e-15;
    if x < alpha + 1.0 {
        // P = exp(a ln x - x - lgamma(a + 1)) * S,  S = Σ x^n / ((a+1)...(a+n)).
        let (mut term, mut sum) = (Dual(1.0, 0.0), Dual(1.0, 0.0));
        for n in 1..100_000 {
            term = term.times(a.plus(Dual(n as f64, 0.0)).inv()).scale(x);
            sum = sum.plus(term);
            if term.0.abs() <= sum.0.abs() * EPS
                && term.1.abs() <= (sum.1.abs() + sum.0.abs()) * EPS
            {
                break;
            }
        }
        // ∂P/∂a / pdf, the pdf being exp(L) a / x: -(L' S + S') x / a.
        let dl = lnx - super::special::digamma(alpha + 1.0);
        -(dl * sum.0 + sum.1) * x / alpha
    } else {
        // Q = exp(a ln x - x - lgamma(a)) * F, F the continued fraction (Lentz).
        const TINY: f64 = 1e-300;
        let mut b = Dual(x + 1.0 - alpha, -1.0);
        let mut c = Dual(1.0 / TINY, 0.0);
        let mut d = b.inv();
        let mut h = d;
        for i in 1..100_000 {
            let fi = i as f64;
            let an = Dual(-fi * (fi - alpha), fi);
            b = b.plus(Dual(2.0, 0.0));
            d = an.times(d).plus(b);
            if d.0.abs() < TINY {
                d.0 = TINY;
            }
            c = b.plus(an.times(c.inv()));
            if c.0.abs() < TINY {
                c.0 = TINY;
            }
            d = d.inv();
            let del = d.times(c);
            h = h.times(del);
            if (del.0 - 1.0).abs() < EPS && del.1.abs() < EPS {
                break;
            }
        }
        // ∂P/∂a = -(M' F + F') exp(M); the pdf is exp(M) / x.
        let dm = lnx - super::special::digamma(alpha);
        (dm * h.0 + h.1) * x
    }
}

/// The derivative of gamma samples `sample` wrt their concentration `alpha` (which
/// broadcasts against `sample`), holding the sample's quantile fixed: TF's
/// `RandomGammaGrad`, the rule of [`stateless_gamma`]. Not differentiable (as TF's).
pub fn random_gamma_grad(alpha: &Tensor, sample: &Tensor) -> Result<Tensor> {
    const OP: &str = "RandomGammaGrad";
    if !alpha.dtype().is_floating() || alpha.dtype() != sample.dtype() {
        return Err(Error::dtype(
            OP,
            format!(
                "alpha and sample must be float tensors of one dtype, got {} and {}",
                alpha.dtype().name(),
                sample.dtype().name()
            ),
        ));
    }
    let shape = crate::broadcast::broadcast_shapes(OP, alpha.shape(), sample.shape())?;
    let a = crate::ops::cast(&crate::ops::broadcast_to(alpha, &shape)?, DType::F64)?;
    let x = crate::ops::cast(&crate::ops::broadcast_to(sample, &shape)?, DType::F64)?;
    let (a, x) = (a.to_vec::<f64>()?, x.to_vec::<f64>()?);
    let mut v = crate::size::try_vec_filled(OP, a.len(), 0f64)?;
    crate::pool::pieces(&mut v, 256, |i, piece| {
        for (j, o) in piece.iter_mut().enumerate() {
            *o = gamma_sample_der_alpha(a[i * 256 + j], x[i * 256 + j]);
        }
    });
    to_dtype(OP, v, &shape, alpha.dtype())
}

// ---------------------------------------------------------------------------- poisson

/// One Poisson sample of `rate` from `gen` (TF's Knuth loop below 10, Hörmann's
/// transformed rejection above), at most `top`.
fn poisson_one(mut gen: Philox, rate: f64, top: f64) -> f64 {
    let mut uniform = Buffer::new();
    if rate < 10.0 {
        let exp_neg_rate = (-rate).exp();
        let (mut prod, mut x) = (1.0, 0.0);
        for _ in 0..MAX_TRIES {
            prod *= uniform.next(&mut gen, uniform2);
            if prod <= exp_neg_rate && x <= top {
                return x;
            }
            x += 1.0;
        }
        return STUCK;
    }
    let log_rate = rate.ln();
    let b = 0.931 + 2.53 * rate.sqrt();
    let a = -0.059 + 0.02483 * b;
    let inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
    for _ in 0..MAX_TRIES {
        let u = uniform.next(&mut gen, uniform2) - 0.5;
        let v = uniform.next(&mut gen, uniform2);
        let us = 0.5 - u.abs();
        let k = ((2.0 * a / us + b) * u + rate + 0.43).floor();
        if k > top {
            continue;
        }
        if us >= 0.07 && v <= 0.9277 - 3.6224 / (b - 2.0) {
            return k;
        }
        if k < 0.0 || (us < 0.013 && v > us) {
            continue;
        }
        let s = (v * inv_alpha / (a / (us * us) + b)).ln();
        let t = -rate + k * log_rate - libm::lgamma(k + 1.0);
        if s <= t {
            return k;
        }
    }
    STUCK
}

/// Poisson samples of rate `rate` (a tensor whose shape ends `shape`) from `gen`, in
/// `dtype` (float16, bfloat16, float32, float64, int32, int64): TF's
/// `StatelessRandomPoisson`. Rates are taken as doubles (TF's compute type); a rate
/// that is NaN, infinite or beyond what `dtype` holds is an error (TF's loop would not
/// end).
pub fn poisson_from(shape: &[usize], gen: Philox, rate: &Tensor, dtype: DType) -> Result<Tensor> {
    const OP: &str = "StatelessRandomPoisson";
    if !matches!(
        dtype,
        DType::F16 | DType::BF16 | DType::F32 | DType::F64 | DType::I32 | DType::I64
    ) {
        return Err(Error::dtype(
            OP,
            format!(
                "dtype must be float16, bfloat16, float32, float64, int32 or int64, got {}",
                dtype.name()
            ),
        ));
    }
    if !(rate.dtype().is_floating() || matches!(rate.dtype(), DType::I32 | DType::I64)) {
        return Err(Error::dtype(
            OP,
            format!(
                "lam must be a float or integer tensor, got {}",
                rate.dtype().name()
            ),
        ));
    }
    let r = crate::ops::cast(rate, DType::F64)?.to_vec::<f64>()?;
    let top = highest(dtype);
    // Knuth's loop ends for any rate below 10 (a negative one draws 0); Hörmann's needs a
    // finite rate whose draws the dtype holds.
    let drawable = |v: f64| v < 10.0 || (v.is_finite() && v <= top / 2.0);
    if let Some(bad) = r.iter().find(|v| !drawable(**v)) {
        return Err(Error::invalid(
            OP,
            format!(
                "lam must be finite and fit the output dtype {}, got {bad}",
                dtype.name()
            ),
        ));
    }
    let per = samples_per_param(OP, shape, rate.shape())?;
    let n = crate::size::check_shape_of::<f64>(OP, shape)?;
    let v = finished(
        OP,
        fill(OP, n, r.len().max(1), per, |i, p| {
            poisson_one(gen.skipped(256 * i), r[p], top)
        })?,
    )?;
    to_dtype(OP, v, shape, dtype)
}

// --------------------------------------------------------------------------- binomial

/// TF's binomial inversion: geometric waiting times summed until they pass `count`.
fn binomial_inversion(count: f64, prob: f64, mut gen: Philox) -> f64 {
    let mut uniform = Buffer::new();
    let (mut sum, mut n) = (0.0, 0.0);
    let l = (-prob).ln_1p();
    for _ in 0..MAX_TRIES {
        let u = uniform.next(&mut gen, uniform2);
        sum += (u.ln() / l).ceil();
        if sum > count {
            return n;
        }
        n += 1.0;
    }
    STUCK
}

/// TF's `stirling_approx_tail`: the error of Stirling's approximation of `lgamma(k+1)`.
fn stirling_tail(k: f64) -> f64 {
    const TAIL: [f64; 10] = [
        0.0810614667953272,
        0.0413406959554092,
        0.0276779256849983,
        0.02079067210376509,
        0.0166446911898211,
        0.0138761288230707,
        0.0118967099458917,
        0.0104112652619720,
        0.00925546218271273,
        0.00833056343336287,
    ];
    if k <= 9.0 {
        return TAIL[k as usize];
    }
    let kp1sq = (k + 1.0) * (k + 1.0);
    (1.0 / 12.0 - (1.0 / 360.0 - 1.0 / 1260.0 / kp1sq) / kp1sq) / (k + 1.0)
}

/// TF's BTRS (Hörmann's transformed rejection for the binomial).
fn btrs(count: f64, prob: f64, mut gen: Philox) -> f64 {
    let stddev = (count * prob * (1.0 - prob)).sqrt();
    let b = 1.15 + 2.53 * stddev;
    let a = -0.0873 + 0.0248 * b + 0.01 * prob;
    let c = count * prob + 0.5;
    let v_r = 0.92 - 4.2 / b;
    let r = prob / (1.0 - prob);
    let alpha = (2.83 + 5.1 / b) * stddev;
    let m = ((count + 1.0) * prob).floor();
    let mut uniform = Buffer::new();
    for _ in 0..MAX_TRIES {
        let u = uniform.next(&mut gen, uniform2) - 0.5;
        let v = uniform.next(&mut gen, uniform2);
        let us = 0.5 - u.abs();
        let k = ((2.0 * a / us + b) * u + c).floor();
        if us >= 0.07 && v <= v_r {
            return k;
        }
        if k < 0.0 || k > count {
            continue;
        }
        let v = (v * alpha / (a / (us * us) + b)).ln();
        let upper = (m + 0.5) * ((m + 1.0) / (r * (count - m + 1.0))).ln()
            + (count + 1.0) * ((count - m + 1.0) / (count - k + 1.0)).ln()
            + (k + 0.5) * (r * (count - k + 1.0) / (k + 1.0)).ln()
            + stirling_tail(m)
            + stirling_tail(count - m)
            - stirling_tail(k)
            - stirling_tail(count - k);
        if v <= upper {
            return k;
        }
    }
    STUCK
}

/// `x` rounded to the parameters' dtype `t` (TF computes `count * prob` and `1 - prob`
/// in it).
fn in_dtype(x: f64, t: DType) -> f64 {
    match t {
        DType::F32 => f64::from(x as f32),
        DType::F16 => f64::from(f16::from_f64(x)),
        DType::BF16 => f64::from(bf16::from_f64(x)),
        _ => x,
    }
}

/// One binomial sample (TF's choice of method and its generator offsets).
fn binomial_one(gen: Philox, i: u128, count: f64, prob: f64, t: DType) -> f64 {
    if count <= 0.0 || prob <= 0.0 {
        return 0.0;
    }
    if prob >= 1.0 {
        return count;
    }
    let (p, flip) = if prob <= 0.5 {
        (prob, false)
    } else {
        (in_dtype(1.0 - prob, t), true)
    };
    let k = if in_dtype(count * p, t) >= 10.0 {
        btrs(count, p, gen.skipped(256 * i))
    } else {
        binomial_inversion(count, p, gen.skipped(42 * i))
    };
    if flip && k != STUCK {
        count - k
    } else {
        k
    }
}

/// Binomial samples (`counts` trials of probability `probs`, which broadcast together
/// to a shape that `shape` ends with) from `gen`, in `dtype`: TF's
/// `StatelessRandomBinomial`. Counts must be finite and probabilities not NaN (TF's loop
/// would not end, or its output would be undefined).
pub fn binomial_from(
    shape: &[usize],
    gen: Philox,
    counts: &Tensor,
    probs: &Tensor,
    dtype: DType,
) -> Result<Tensor> {
    const OP: &str = "StatelessRandomBinomial";
    if !matches!(
        dtype,
        DType::F16 | DType::F32 | DType::F64 | DType::I32 | DType::I64
    ) {
        return Err(Error::dtype(
            OP,
            format!(
                "dtype must be float16, float32, float64, int32 or int64, got {}",
                dtype.name()
            ),
        ));
    }
    let t = probs.dtype();
    if counts.dtype() != t || !matches!(t, DType::F16 | DType::F32 | DType::F64) {
        return Err(Error::dtype(
            OP,
            format!(
                "counts and probs must be float16, float32 or float64 tensors of one dtype, got {} and {}",
                counts.dtype().name(),
                t.name()
            ),
        ));
    }
    let batch =
        crate::broadcast::broadcast_shapes(OP, counts.shape(), probs.shape()).map_err(|_| {
            Error::invalid(
                OP,
                format!(
                    "counts and probs must have compatible batch dimensions: {:?} vs. {:?}",
                    counts.shape(),
                    probs.shape()
                ),
            )
        })?;
    let per = samples_per_param(OP, shape, &batch)?;
    let c = float_params(OP, "counts", &crate::ops::broadcast_to(counts, &batch)?)?;
    let p = float_params(OP, "probs", &crate::ops::broadcast_to(probs, &batch)?)?;
    if let Some(bad) = c.iter().find(|v| !v.is_finite()) {
        return Err(Error::invalid(
            OP,
            format!("counts must be finite, got {bad}"),
        ));
    }
    if p.iter().any(|v| v.is_nan()) {
        return Err(Error::invalid(OP, "probs must not be NaN"));
    }
    let n = crate::size::check_shape_of::<f64>(OP, shape)?;
    let v = finished(
        OP,
        fill(OP, n, c.len().max(1), per, |i, j| {
            binomial_one(gen, i, c[j], p[j], t)
        })?,
    )?;
    to_dtype(OP, v, shape, dtype)
}

/// How this family's traced ops are saved in SavedModels (see `saved_model::table`).
pub(crate) mod saved {
    use super::Source;
    use crate::error::Result;
    use crate::graph::Forward;
    use crate::saved_model::table::{get, get_dtype, one_out, Attrs, OpDef};

    pub(crate) const SAVED: &[OpDef] = &[
        OpDef::new("StatelessRandomGammaV3", 2, &["shape", "source"], gamma),
        OpDef::new(
            "StatelessRandomPoisson",
            2,
            &["shape", "dtype", "source"],
            poisson,
        ),
        OpDef::new(
            "StatelessRandomBinomial",
            3,
            &["shape", "dtype", "source"],
            binomial,
        ),
        OpDef::new("RandomGammaGrad", 2, &[], gamma_grad),
    ];

    fn gamma(a: &Attrs, _: usize) -> Result<Forward> {
        let op = "StatelessRandomGammaV3";
        let dims: Vec<usize> = get(op, a, "shape")?;
        crate::size::num_elements(op, &dims)?;
        let source: Source = get(op, a, "source")?;
        Ok(one_out(move |xs| {
            super::stateless_gamma(&dims, source, &xs[0], &xs[1])
        }))
    }
    fn poisson(a: &Attrs, _: usize) -> Result<Forward> {
        let op = "StatelessRandomPoisson";
        let dims: Vec<usize> = get(op, a, "shape")?;
        crate::size::num_elements(op, &dims)?;
        let dt = get_dtype(op, a, "dtype")?;
        let source: Source = get(op, a, "source")?;
        Ok(one_out(move |xs| {
            let gen = crate::ops::philox::philox_of(op, source, &xs[0])?;
            super::poisson_from(&dims, gen, &xs[1], dt)
        }))
    }
    fn binomial(a: &Attrs, _: usize) -> Result<Forward> {
        let op = "StatelessRandomBinomial";
        let dims: Vec<usize> = get(op, a, "shape")?;
        crate::size::num_elements(op, &dims)?;
        let dt = get_dtype(op, a, "dtype")?;
        let source: Source = get(op, a, "source")?;
        Ok(one_out(move |xs| {
            let gen = crate::ops::philox::philox_of(op, source, &xs[0])?;
            super::binomial_from(&dims, gen, &xs[1], &xs[2], dt)
        }))
    }
    fn gamma_grad(_: &Attrs, _: usize) -> Result<Forward> {
        Ok(one_out(|xs| super::random_gamma_grad(&xs[0], &xs[1])))
    }
}

/// The Python functions of this family (see `src/ops/README.md`).
#[cfg(feature = "python")]
pub(super) mod python {
    #[allow(unused_imports)]
    use crate::python::binding::*;

    use super::Source;

    fn source_arg(s: &str) -> PyResult<Source> {
        match s {
            "seed" => Ok(Source::Seed),
            "state" => Ok(Source::State),
            _ => Err(PyValueError::new_err(format!(
                "source must be 'seed' or 'state', got {s:?}"
            ))),
        }
    }

    /// Gamma samples of concentration ``alpha`` (whose shape ``shape`` must end with),
    /// key and counter from ``source`` (TF's ``StatelessRandomGammaV3``); differentiable
    /// wrt ``alpha``. The engine of ``gt.random.stateless_gamma``.
    ///
    /// >>> x = gt._gradtape._philox_gamma([1000], gt.constant([1, 2]), gt.constant(2.0))
    /// >>> bool(abs(float(gt.reduce_mean(x)) - 2.0) < 0.2)
    /// True
    #[pyfunction]
    #[pyo3(signature = (shape, source, alpha, kind="seed"))]
    fn _philox_gamma(
        py: Python<'_>,
        shape: &Bound<'_, PyAny>,
        source: &Bound<'_, PyAny>,
        alpha: &Bound<'_, PyAny>,
        kind: &str,
    ) -> PyResult<PyTensor> {
        let dims = dims_arg(shape)?;
        let src = source_arg(kind)?;
        let (s, a) = (
            to_tensor(source, None)?,
            to_tensor(alpha, Some(DType::F32))?,
        );
        let key = format!("{dims:?},{src:?}");
        let f = move |xs: &[Tensor]| super::stateless_gamma(&dims, src, &xs[0], &xs[1]);
        Ok(call_n(py, "StatelessRandomGammaV3", || key, &[s, a], f)?.into())
    }

    /// Poisson samples of rate ``lam`` (whose shape ``shape`` must end with) in ``dtype``,
    /// key and counter from ``source`` (TF's ``StatelessRandomPoisson``).
    ///
    /// >>> gt._gradtape._philox_poisson([3], gt.constant([1, 2]), gt.constant(0.0), gt.int32).numpy().tolist()
    /// [0, 0, 0]
    #[pyfunction]
    #[pyo3(signature = (shape, source, lam, dtype, kind="seed"))]
    fn _philox_poisson(
        py: Python<'_>,
        shape: &Bound<'_, PyAny>,
        source: &Bound<'_, PyAny>,
        lam: &Bound<'_, PyAny>,
        dtype: &Bound<'_, PyAny>,
        kind: &str,
    ) -> PyResult<PyTensor> {
        let dims = dims_arg(shape)?;
        let src = source_arg(kind)?;
        let dt = to_dtype(dtype)?;
        let (s, r) = (to_tensor(source, None)?, to_tensor(lam, Some(DType::F32))?);
        let key = format!("{dims:?},{dt:?},{src:?}");
        let f = move |xs: &[Tensor]| {
            let gen = crate::ops::philox::philox_of("StatelessRandomPoisson", src, &xs[0])?;
            super::poisson_from(&dims, gen, &xs[1], dt)
        };
        Ok(call_n(py, "StatelessRandomPoisson", || key, &[s, r], f)?.into())
    }

    /// Binomial samples of ``counts`` trials with success probability ``probs`` in
    /// ``dtype``, key and counter from ``source`` (TF's ``StatelessRandomBinomial``).
    ///
    /// >>> gt._gradtape._philox_binomial([2], gt.constant([1, 2]), gt.constant(5.0), gt.constant(1.0), gt.int32).numpy().tolist()
    /// [5, 5]
    #[pyfunction]
    #[pyo3(signature = (shape, source, counts, probs, dtype, kind="seed"))]
    #[allow(clippy::too_many_arguments)]
    fn _philox_binomial(
        py: Python<'_>,
        shape: &Bound<'_, PyAny>,
        source: &Bound<'_, PyAny>,
        counts: &Bound<'_, PyAny>,
        probs: &Bound<'_, PyAny>,
        dtype: &Bound<'_, PyAny>,
        kind: &str,
    ) -> PyResult<PyTensor> {
        let dims = dims_arg(shape)?;
        let src = source_arg(kind)?;
        let dt = to_dtype(dtype)?;
        let s = to_tensor(source, None)?;
        let (c, p) = (
            to_tensor(counts, Some(DType::F32))?,
            to_tensor(probs, Some(DType::F32))?,
        );
        let key = format!("{dims:?},{dt:?},{src:?}");
        let f = move |xs: &[Tensor]| {
            let gen = crate::ops::philox::philox_of("StatelessRandomBinomial", src, &xs[0])?;
            super::binomial_from(&dims, gen, &xs[1], &xs[2], dt)
        };
        Ok(call_n(py, "StatelessRandomBinomial", || key, &[s, c, p], f)?.into())
    }

    /// The derivative of gamma samples wrt their concentration (TF's
    /// ``RandomGammaGrad``; not differentiable).
    ///
    /// >>> round(float(gt._gradtape._random_gamma_grad(gt.constant(1.0, gt.float64), gt.constant(0.5, gt.float64))), 6)
    /// -0.286004
    #[pyfunction]
    #[pyo3(signature = (alpha, sample))]
    fn _random_gamma_grad(
        py: Python<'_>,
        alpha: &Bound<'_, PyAny>,
        sample: &Bound<'_, PyAny>,
    ) -> PyResult<PyTensor> {
        let (a, x) = (
            to_tensor(alpha, Some(DType::F32))?,
            to_tensor(sample, Some(DType::F32))?,
        );
        let f = |xs: &[Tensor]| super::random_gamma_grad(&xs[0], &xs[1]);
        Ok(call_n(py, "RandomGammaGrad", String::new, &[a, x], f)?.into())
    }

    expose! {
        fn _philox_gamma in []: "(shape: ShapeLike, source: TensorLike, alpha: TensorLike, kind: str = 'seed') -> Tensor";
        fn _philox_poisson in []: "(shape: ShapeLike, source: TensorLike, lam: TensorLike, dtype: DTypeLike, kind: str = 'seed') -> Tensor";
        fn _philox_binomial in []: "(shape: ShapeLike, source: TensorLike, counts: TensorLike, probs: TensorLike, dtype: DTypeLike, kind: str = 'seed') -> Tensor";
        fn _random_gamma_grad in []: "(alpha: TensorLike, sample: TensorLike) -> Tensor";
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed(a: i64, b: i64) -> Tensor {
        Tensor::from_vec(vec![a, b], &[2]).unwrap()
    }

    #[test]
    fn gamma_moments_and_layout() {
        let alpha = Tensor::from_vec(vec![0.5f64, 1.0, 4.0], &[3]).unwrap();
        let x = stateless_gamma(&[4000, 3], Source::Seed, &seed(1, 2), &alpha).unwrap();
        let v = x.to_vec::<f64>().unwrap();
        for (k, a) in [0.5, 1.0, 4.0].iter().enumerate() {
            let col: Vec<f64> = v.iter().skip(k).step_by(3).copied().collect();
            let mean = col.iter().sum::<f64>() / col.len() as f64;
            assert!(
                (mean - a).abs() < 0.1 * a.max(1.0),
                "alpha {a}: mean {mean}"
            );
            assert!(col.iter().all(|&s| s >= 0.0));
        }
        // The same seed, the same numbers; one column alone is the same column.
        let one = Tensor::from_vec(vec![0.5f64], &[1]).unwrap();
        let y = stateless_gamma(&[4, 1], Source::Seed, &seed(1, 2), &one).unwrap();
        let y = y.to_vec::<f64>().unwrap();
        assert_eq!(y, v.iter().step_by(3).take(4).copied().collect::<Vec<_>>());
        assert!(stateless_gamma(&[4, 2], Source::Seed, &seed(1, 2), &alpha).is_err());
    }

    #[test]
    fn gamma_grad_matches_differences() {
        // d/da of the quantile F^-1(q; a) at fixed q, against central differences of
        // the inverse CDF found by bisection on the series/fraction value.
        for (a, x) in [(0.5, 0.2), (2.0, 1.5), (3.0, 7.0), (10.0, 9.0)] {
            let g = gamma_sample_der_alpha(a, x);
            let p = |a: f64, x: f64| {
                // P(a, x) by Simpson's rule on the density (fine for these points).
                let n = 20000;
                let h = x / n as f64;
                let f = |t: f64| {
                    if t == 0.0 {
                        if a < 1.0 {
                            0.0
                        } else if a == 1.0 {
                            1.0
                        } else {
                            0.0
                        }
                    } else {
                        ((a - 1.0) * t.ln() - t - libm::lgamma(a)).exp()
                    }
                };
                let mut s = f(0.0) + f(x);
                for i in 1..n {
                    s += f(i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
                }
                s * h / 3.0
            };
            if a < 1.0 {
                continue; // the density's pole at 0 defeats Simpson's rule
            }
            let e = 1e-4;
            let dpda = (p(a + e, x) - p(a - e, x)) / (2.0 * e);
            let pdf = ((a - 1.0) * x.ln() - x - libm::lgamma(a)).exp();
            let want = -dpda / pdf;
            assert!(
                (g - want).abs() < 1e-4 * want.abs().max(1.0),
                "{a} {x}: {g} vs {want}"
            );
        }
        assert_eq!(gamma_sample_der_alpha(2.0, 0.0), 0.0);
        assert!(gamma_sample_der_alpha(-1.0, 1.0).is_nan());
    }

    #[test]
    fn poisson_and_binomial_moments() {
        let g = Philox::from_seed(3, 4);
        let lam = Tensor::from_vec(vec![0.5f32, 4.0, 30.0], &[3]).unwrap();
        let x = poisson_from(&[3000, 3], g, &lam, DType::I64).unwrap();
        let v = x.to_vec::<i64>().unwrap();
        for (k, l) in [0.5, 4.0, 30.0].iter().enumerate() {
            let col: Vec<f64> = v.iter().skip(k).step_by(3).map(|&s| s as f64).collect();
            let mean = col.iter().sum::<f64>() / col.len() as f64;
            assert!((mean - l).abs() < 0.1 * l.max(1.0), "lam {l}: mean {mean}");
        }
        let bad = Tensor::from_vec(vec![f32::NAN], &[1]).unwrap();
        assert!(poisson_from(&[2, 1], g, &bad, DType::I32).is_err());
        let counts = Tensor::from_vec(vec![10.0f32, 200.0], &[2]).unwrap();
        let probs = Tensor::from_vec(vec![0.3f32, 0.8], &[2]).unwrap();
        let b = binomial_from(&[3000, 2], g, &counts, &probs, DType::I32).unwrap();
        let v = b.to_vec::<i32>().unwrap();
        for (k, (n, p)) in [(10.0, 0.3), (200.0, 0.8)].iter().enumerate() {
            let col: Vec<f64> = v.iter().skip(k).step_by(2).map(|&s| f64::from(s)).collect();
            let mean = col.iter().sum::<f64>() / col.len() as f64;
            assert!((mean - n * p).abs() < 0.05 * n * p, "{n} {p}: mean {mean}");
            assert!(col.iter().all(|&s| (0.0..=*n).contains(&s)));
        }
    }
}
