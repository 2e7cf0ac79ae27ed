//! Counter-based random numbers: TF's stateless random ops
//! (`tf.random.stateless_uniform`, `stateless_normal`, `stateless_truncated_normal`,
//! `stateless_categorical`) and the draws of `tf.random.Generator`, with TF's numbers.
//!
//! Every value is a pure function of its source: a stateless op's `seed` (a shape-`[2]`
//! int32 or int64 tensor, scrambled into a Philox key and counter as TF's
//! `StatelessRandomGetKeyCounter` does), or a generator's state (an int64 tensor
//! `[counter_lo, counter_hi, key]`, used as is). The generator is TF's Philox-4x32-10, the
//! distributions TF's CPU kernels (`random_distributions.h`): each output group takes one
//! Philox block at `counter + group` (a truncated normal's group takes a reserved run of
//! 256 blocks), so the values are TF 2.21's on CPU, bit for bit, and do not depend on the
//! number of threads that fill them. The normal distributions use the platform's `log`,
//! `sqrt`, `sin` and `cos` (as TF's do); on glibc they agree with TF's to the bit.
//! A categorical draw takes its samples in one sequence, row after row (TF's kernel when it
//! runs in one shard, which it does below several thousand rows times samples).
//!
//! These ops are not recorded on tapes (TF registers them as not differentiable).

use half::{bf16, f16};

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// Philox-4x32-10 at a 128-bit counter (four little-endian words) under a 64-bit key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Philox {
    pub key: [u32; 2],
    pub counter: [u32; 4],
}

impl Philox {
    /// The block (four words) at the current counter.
    pub fn block(&self) -> [u32; 4] {
        let (mut c, mut k) = (self.counter, self.key);
        for _ in 0..10 {
            let p0 = u64::from(M0) * u64::from(c[0]);
            let p1 = u64::from(M1) * u64::from(c[2]);
            c = [
                ((p1 >> 32) as u32) ^ c[1] ^ k[0],
                p1 as u32,
                ((p0 >> 32) as u32) ^ c[3] ^ k[1],
                p0 as u32,
            ];
            k = [k[0].wrapping_add(W0), k[1].wrapping_add(W1)];
        }
        c
    }

    /// Advances the 128-bit counter by `n` blocks (wrapping).
    pub fn skip(&mut self, n: u128) {
        let c = self.counter_u128().wrapping_add(n);
        self.counter = [
            c as u32,
            (c >> 32) as u32,
            (c >> 64) as u32,
            (c >> 96) as u32,
        ];
    }

    fn counter_u128(&self) -> u128 {
        self.counter
            .iter()
            .rev()
            .fold(0u128, |acc, &w| (acc << 32) | u128::from(w))
    }

    pub(super) fn skipped(mut self, n: u128) -> Philox {
        self.skip(n);
        self
    }

    /// The block at the counter, then the counter advanced by one.
    fn next_block(&mut self) -> [u32; 4] {
        let b = self.block();
        self.skip(1);
        b
    }

    /// TF's `GenerateKey`: the seed pair scrambled into a key and a counter.
    pub fn from_seed(s0: i64, s1: i64) -> Philox {
        let (s0, s1) = (s0 as u64, s1 as u64);
        let mix = Philox {
            key: [0x3ec8_f720, 0x0246_1e29],
            counter: [s0 as u32, (s0 >> 32) as u32, s1 as u32, (s1 >> 32) as u32],
        }
        .block();
        Philox {
            key: [mix[0], mix[1]],
            counter: [0, 0, mix[2], mix[3]],
        }
    }

    /// A generator state `[counter_lo, counter_hi, key]` (int64 words, as TF's
    /// `tf.random.Generator` keeps them) as a key and counter.
    pub fn from_state(state: [i64; 3]) -> Philox {
        let [c0, c1, k] = state.map(|w| w as u64);
        Philox {
            key: [k as u32, (k >> 32) as u32],
            counter: [c0 as u32, (c0 >> 32) as u32, c1 as u32, (c1 >> 32) as u32],
        }
    }

    /// The state words of this key and counter ([`Philox::from_state`]'s inverse).
    pub fn state(&self) -> [i64; 3] {
        let w = |lo: u32, hi: u32| ((u64::from(hi) << 32) | u64::from(lo)) as i64;
        [
            w(self.counter[0], self.counter[1]),
            w(self.counter[2], self.counter[3]),
            w(self.key[0], self.key[1]),
        ]
    }
}

/// Where a draw's key and counter come from (an input tensor of the op).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Source {
    /// A stateless op's seed: a shape-`[2]` int32 or int64 tensor.
    Seed,
    /// A generator's state: a shape-`[3]` int64 tensor `[counter_lo, counter_hi, key]`.
    State,
}

/// The key and counter of `t`, read as `source` says.
pub fn philox_of(op: &'static str, source: Source, t: &Tensor) -> Result<Philox> {
    let words = |n: usize, what: &str| -> Result<Vec<i64>> {
        let ok = matches!(t.dtype(), DType::I32 | DType::I64) && t.shape() == [n];
        let ok = ok || (source == Source::State && t.dtype() == DType::U64 && t.shape() == [n]);
        if !ok {
            return Err(Error::invalid(
                op,
                format!(
                    "{what} must have shape [{n}] and dtype int32 or int64, got shape {:?} and dtype {}",
                    t.shape(),
                    t.dtype().name()
                ),
            ));
        }
        Ok(match t.dtype() {
            DType::I32 => t.to_vec::<i32>()?.into_iter().map(i64::from).collect(),
            DType::U64 => t.to_vec::<u64>()?.into_iter().map(|v| v as i64).collect(),
            _ => t.to_vec::<i64>()?,
        })
    };
    Ok(match source {
        Source::Seed => {
            let s = words(2, "seed")?;
            Philox::from_seed(s[0], s[1])
        }
        Source::State => {
            let s = words(3, "the generator state")?;
            Philox::from_state([s[0], s[1], s[2]])
        }
    })
}

/// Elements per piece when filling in parallel (a multiple of every group size).
pub(super) const PIECE: usize = 1 << 12;

/// `shape` filled group by group: group `g` (`G` elements) from `f` of the generator at
/// `counter + g * stride`.
fn fill<T: crate::dtype::Element + Default, const G: usize>(
    op: &'static str,
    shape: &[usize],
    gen: Philox,
    stride: u128,
    f: impl Fn(Philox) -> [T; G] + Sync,
) -> Result<Tensor> {
    let n = crate::size::check_shape_of::<T>(op, shape)?;
    let mut v = crate::size::try_vec_filled(op, n, T::default())?;
    crate::pool::pieces(&mut v, PIECE, |i, piece| {
        let first = (i * PIECE / G) as u128;
        for (j, chunk) in piece.chunks_mut(G).enumerate() {
            let out = f(gen.skipped((first + j as u128) * stride));
            chunk.copy_from_slice(&out[..chunk.len()]);
        }
    });
    Tensor::from_vec(v, shape)
}

/// TF's `Uint32ToFloat`: a float in `[0, 1)` from 23 random bits.
fn u32_to_f32(x: u32) -> f32 {
    f32::from_bits((x & 0x7f_ffff) | 0x3f80_0000) - 1.0
}

/// TF's `Uint64ToDouble`: a double in `[0, 1)` from 52 random bits (`x0`'s low 20 high).
pub(super) fn u64_to_f64(x0: u32, x1: u32) -> f64 {
    let man = (u64::from(x0 & 0xf_ffff) << 32) | u64::from(x1);
    f64::from_bits((1023u64 << 52) | man) - 1.0
}

/// TF's `Uint16ToHalf`: a half in `[0, 1)` from 10 random bits.
fn u16_to_f16(x: u32) -> f16 {
    f16::from_bits(((x & 0x3ff) | (15 << 10)) as u16) - f16::ONE
}

/// TF's `Uint16ToBfloat16`: a bfloat16 in `[0, 1)` from 7 random bits.
fn u16_to_bf16(x: u32) -> bf16 {
    bf16::from_bits(((x & 0x7f) | (127 << 7)) as u16) - bf16::ONE
}

/// TF's `BoxMullerFloat`: two standard normal floats.
fn box_muller_f32(x0: u32, x1: u32) -> [f32; 2] {
    let u1 = u32_to_f32(x0).max(1.0e-7);
    // `2.0f * M_PI * u` is computed in double (M_PI is a double), then rounded.
    let v1 = (2.0 * std::f64::consts::PI * f64::from(u32_to_f32(x1))) as f32;
    let u2 = (-2.0f32 * u1.ln()).sqrt();
    [v1.sin() * u2, v1.cos() * u2]
}

/// TF's `BoxMullerDouble`: two standard normal doubles.
pub(super) fn box_muller_f64(x: [u32; 4]) -> [f64; 2] {
    let u1 = u64_to_f64(x[0], x[1]).max(1.0e-7);
    let v1 = 2.0 * std::f64::consts::PI * u64_to_f64(x[2], x[3]);
    let u2 = (-2.0 * u1.ln()).sqrt();
    [v1.sin() * u2, v1.cos() * u2]
}

/// One 32-bit sample at a time from consecutive blocks (TF's `SingleSampleAdapter`).
struct Single {
    gen: Philox,
    buf: [u32; 4],
    used: usize,
}
impl Single {
    fn new(gen: Philox) -> Single {
        Single {
            gen,
            buf: [0; 4],
            used: 4,
        }
    }
    fn next(&mut self) -> u32 {
        if self.used == 4 {
            self.buf = self.gen.next_block();
            self.used = 0;
        }
        self.used += 1;
        self.buf[self.used - 1]
    }
}

fn float_dtype_error(op: &'static str, dtype: DType) -> Error {
    Error::dtype(
        op,
        format!(
            "dtype must be a floating point type (float16, bfloat16, float32, float64), got {}",
            dtype.name()
        ),
    )
}

/// Samples of the uniform distribution on `[minval, maxval)` from `gen`: TF's
/// `StatelessRandomUniform` (`u * (maxval - minval) + minval` in `dtype`'s arithmetic).
pub fn uniform_from(
    shape: &[usize],
    gen: Philox,
    minval: f64,
    maxval: f64,
    dtype: DType,
) -> Result<Tensor> {
    const OP: &str = "StatelessRandomUniform";
    match dtype {
        DType::F32 => {
            let (lo, hi) = (minval as f32, maxval as f32);
            let r = hi - lo;
            fill(OP, shape, gen, 1, |g| {
                g.block().map(|x| u32_to_f32(x) * r + lo)
            })
        }
        DType::F64 => {
            let r = maxval - minval;
            fill(OP, shape, gen, 1, |g| {
                let x = g.block();
                [u64_to_f64(x[0], x[1]), u64_to_f64(x[2], x[3])].map(|u| u * r + minval)
            })
        }
        DType::F16 => {
            let (lo, hi) = (f16::from_f64(minval), f16::from_f64(maxval));
            let r = hi - lo;
            fill(OP, shape, gen, 1, |g| {
                g.block().map(|x| u16_to_f16(x) * r + lo)
            })
        }
        DType::BF16 => {
            let (lo, hi) = (bf16::from_f64(minval), bf16::from_f64(maxval));
            let r = hi - lo;
            fill(OP, shape, gen, 1, |g| {
                g.block().map(|x| u16_to_bf16(x) * r + lo)
            })
        }
        d => Err(float_dtype_error(OP, d)),
    }
}

/// Samples of the normal distribution from `gen`: TF's `StatelessRandomNormal` (Box-Muller,
/// then `z * stddev + mean` in `dtype`'s arithmetic).
pub fn normal_from(
    shape: &[usize],
    gen: Philox,
    mean: f64,
    stddev: f64,
    dtype: DType,
) -> Result<Tensor> {
    const OP: &str = "StatelessRandomNormal";
    let f4 = |g: Philox| {
        let x = g.block();
        let [a, b] = box_muller_f32(x[0], x[1]);
        let [c, d] = box_muller_f32(x[2], x[3]);
        [a, b, c, d]
    };
    match dtype {
        DType::F32 => {
            let (m, s) = (mean as f32, stddev as f32);
            fill(OP, shape, gen, 1, |g| f4(g).map(|z| z * s + m))
        }
        DType::F64 => fill(OP, shape, gen, 1, |g| {
            box_muller_f64(g.block()).map(|z| z * stddev + mean)
        }),
        DType::F16 => {
            let (m, s) = (f16::from_f64(mean), f16::from_f64(stddev));
            fill(OP, shape, gen, 1, |g| {
                f4(g).map(|z| f16::from_f32(z) * s + m)
            })
        }
        DType::BF16 => {
            let (m, s) = (bf16::from_f64(mean), bf16::from_f64(stddev));
            fill(OP, shape, gen, 1, |g| {
                f4(g).map(|z| bf16::from_f32(z) * s + m)
            })
        }
        d => Err(float_dtype_error(OP, d)),
    }
}

/// Normal samples redrawn until their magnitude is below 2, from `gen`: TF's
/// `StatelessTruncatedNormal` (each group of outputs draws from its own run of 256 blocks).
pub fn truncated_normal_from(
    shape: &[usize],
    gen: Philox,
    mean: f64,
    stddev: f64,
    dtype: DType,
) -> Result<Tensor> {
    const OP: &str = "StatelessTruncatedNormal";
    let f4 = |g: Philox| {
        let mut s = Single::new(g);
        let mut out = [0f32; 4];
        let mut k = 0;
        loop {
            let (x0, x1) = (s.next(), s.next());
            for z in box_muller_f32(x0, x1) {
                if z.abs() < 2.0 {
                    out[k] = z;
                    k += 1;
                    if k == 4 {
                        return out;
                    }
                }
            }
        }
    };
    match dtype {
        DType::F32 => {
            let (m, s) = (mean as f32, stddev as f32);
            fill(OP, shape, gen, 256, |g| f4(g).map(|z| z * s + m))
        }
        DType::F64 => fill(OP, shape, gen, 128, |g| {
            let mut s = Single::new(g);
            let mut out = [0f64; 2];
            let mut k = 0;
            loop {
                let x = [s.next(), s.next(), s.next(), s.next()];
                for z in box_muller_f64(x) {
                    if z.abs() < 2.0 {
                        out[k] = z * stddev + mean;
                        k += 1;
                        if k == 2 {
                            return out;
                        }
                    }
                }
            }
        }),
        DType::F16 => {
            let (m, s) = (f16::from_f64(mean), f16::from_f64(stddev));
            fill(OP, shape, gen, 256, |g| {
                f4(g).map(|z| f16::from_f32(z) * s + m)
            })
        }
        DType::BF16 => {
            let (m, s) = (bf16::from_f64(mean), bf16::from_f64(stddev));
            fill(OP, shape, gen, 256, |g| {
                f4(g).map(|z| bf16::from_f32(z) * s + m)
            })
        }
        d => Err(float_dtype_error(OP, d)),
    }
}

/// Integers in `[minval, maxval)` from `gen`: TF's `StatelessRandomUniformInt` (the
/// random bits modulo the range: slightly biased unless the range is a power of two, as
/// TF's). int32 or int64.
pub fn uniform_int_from(
    shape: &[usize],
    gen: Philox,
    minval: i64,
    maxval: i64,
    dtype: DType,
) -> Result<Tensor> {
    const OP: &str = "StatelessRandomUniformInt";
    if minval >= maxval {
        return Err(Error::invalid(
            OP,
            format!("Need minval < maxval: {minval} >= {maxval}"),
        ));
    }
    match dtype {
        DType::I32 => {
            let (lo, hi) = (i32::try_from(minval), i32::try_from(maxval));
            let (Ok(lo), Ok(hi)) = (lo, hi) else {
                return Err(Error::invalid(
                    OP,
                    format!("minval and maxval must fit int32, got {minval} and {maxval}"),
                ));
            };
            let range = hi.wrapping_sub(lo) as u32;
            fill(OP, shape, gen, 1, |g| {
                g.block().map(|x| lo.wrapping_add((x % range) as i32))
            })
        }
        DType::I64 => {
            let range = maxval.wrapping_sub(minval) as u64;
            fill(OP, shape, gen, 1, |g| {
                let x = g.block();
                [(x[0], x[1]), (x[2], x[3])].map(|(a, b)| {
                    let bits = u64::from(a) | (u64::from(b) << 32);
                    minval.wrapping_add((bits % range) as i64)
                })
            })
        }
        d => Err(Error::dtype(
            OP,
            format!(
                "dtype must be int32 or int64 for bounded integers, got {}",
                d.name()
            ),
        )),
    }
}

/// Integers over the whole range of `dtype` (int32, int64, uint32, uint64) from `gen`:
/// TF's `StatelessRandomUniformFullInt`.
pub fn uniform_full_int_from(shape: &[usize], gen: Philox, dtype: DType) -> Result<Tensor> {
    const OP: &str = "StatelessRandomUniformFullInt";
    let w64 = |g: Philox| {
        let x = g.block();
        [(x[0], x[1]), (x[2], x[3])].map(|(a, b)| u64::from(a) | (u64::from(b) << 32))
    };
    match dtype {
        DType::U32 => fill(OP, shape, gen, 1, |g| g.block()),
        DType::I32 => fill(OP, shape, gen, 1, |g| g.block().map(|x| x as i32)),
        DType::U64 => fill(OP, shape, gen, 1, w64),
        DType::I64 => fill(OP, shape, gen, 1, |g| w64(g).map(|x| x as i64)),
        d => Err(Error::dtype(
            OP,
            format!(
                "dtype must be int32, int64, uint32 or uint64, got {}",
                d.name()
            ),
        )),
    }
}

/// `num_samples` class indices per row of the 2-D `logits` (unnormalized log
/// probabilities) from `gen`: TF's `StatelessMultinomial`. Classes whose logit is not
/// finite are never drawn; `dtype` is int32 or int64.
pub fn categorical_from(
    logits: &Tensor,
    num_samples: usize,
    gen: Philox,
    dtype: DType,
) -> Result<Tensor> {
    const OP: &str = "StatelessMultinomial";
    if logits.ndim() != 2 {
        return Err(Error::invalid(
            OP,
            format!("logits should be a matrix, got shape {:?}", logits.shape()),
        ));
    }
    if !logits.dtype().is_floating() {
        return Err(Error::dtype(
            OP,
            format!(
                "logits must be a floating point tensor, got {}",
                logits.dtype().name()
            ),
        ));
    }
    if !matches!(dtype, DType::I32 | DType::I64) {
        return Err(Error::dtype(
            OP,
            format!("output dtype must be int32 or int64, got {}", dtype.name()),
        ));
    }
    let (rows, classes) = (logits.shape()[0], logits.shape()[1]);
    if classes == 0 && rows > 0 && num_samples > 0 {
        return Err(Error::invalid(
            OP,
            "num_classes should be positive, got: 0".to_string(),
        ));
    }
    if dtype == DType::I32 && classes > i32::MAX as usize {
        return Err(Error::invalid(OP, "num_classes does not fit int32"));
    }
    let n = crate::size::num_elements(OP, &[rows, num_samples])?;
    let l = crate::ops::cast(logits, DType::F64)?.to_vec::<f64>()?;
    let mut out = crate::size::try_vec_filled(OP, n, 0i64)?;
    let mut cdf = crate::size::try_vec_filled(OP, classes, 0f64)?;
    let mut s = Single::new(gen);
    for b in 0..rows {
        let row = &l[b * classes..(b + 1) * classes];
        let max = row
            .iter()
            .copied()
            .filter(|v| v.is_finite())
            .fold(f64::NEG_INFINITY, f64::max);
        let mut total = 0.0;
        for (c, &v) in cdf.iter_mut().zip(row) {
            if v.is_finite() {
                total += (v - max).exp();
            }
            *c = total;
        }
        for o in &mut out[b * num_samples..(b + 1) * num_samples] {
            let (x0, x1) = (s.next(), s.next());
            let find = u64_to_f64(x0, x1) * total;
            *o = cdf.partition_point(|&c| c <= find) as i64;
        }
    }
    let t = Tensor::from_vec(out, &[rows, num_samples])?;
    if dtype == DType::I32 {
        crate::ops::cast(&t, DType::I32)
    } else {
        Ok(t)
    }
}

/// The state `delta` outputs later: TF's `RngReadAndSkip` (the counter advances by 256
/// blocks per output, so every draw of up to 256 blocks per output has its own).
pub fn rng_skip(state: &Tensor, delta: u64) -> Result<Tensor> {
    let mut g = philox_of("RngReadAndSkip", Source::State, state)?;
    g.skip(u128::from(delta) * 256);
    let s = g.state();
    let t = Tensor::from_vec(s.to_vec(), &[3])?;
    if state.dtype() == DType::I64 {
        Ok(t)
    } else {
        crate::ops::cast(&t, state.dtype())
    }
}

/// The distributions of [`stateless`] and [`Distribution::sample`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Distribution {
    /// Uniform on `[a, b)` (floats).
    Uniform,
    /// Normal with mean `a` and standard deviation `b`.
    Normal,
    /// Truncated normal with mean `a` and standard deviation `b`.
    TruncatedNormal,
    /// Integers in `[a, b)`.
    UniformInt,
    /// Integers over the dtype's whole range (`a`, `b` unused).
    UniformFullInt,
}

impl Distribution {
    /// TF's op type of the distribution.
    pub fn op(self) -> &'static str {
        match self {
            Distribution::Uniform => "StatelessRandomUniform",
            Distribution::Normal => "StatelessRandomNormal",
            Distribution::TruncatedNormal => "StatelessTruncatedNormal",
            Distribution::UniformInt => "StatelessRandomUniformInt",
            Distribution::UniformFullInt => "StatelessRandomUniformFullInt",
        }
    }

    /// `shape` drawn from `gen` with parameters `a` and `b`.
    pub fn sample(self, shape: &[usize], gen: Philox, a: f64, b: f64, dt: DType) -> Result<Tensor> {
        match self {
            Distribution::Uniform => uniform_from(shape, gen, a, b, dt),
            Distribution::Normal => normal_from(shape, gen, a, b, dt),
            Distribution::TruncatedNormal => truncated_normal_from(shape, gen, a, b, dt),
            Distribution::UniformInt => {
                let int = |v: f64| {
                    if v.is_finite() && v.fract() == 0.0 && v.abs() <= 2f64.powi(63) {
                        Ok(v as i64)
                    } else {
                        Err(Error::invalid(
                            self.op(),
                            format!("minval and maxval must be integers, got {v}"),
                        ))
                    }
                };
                uniform_int_from(shape, gen, int(a)?, int(b)?, dt)
            }
            Distribution::UniformFullInt => uniform_full_int_from(shape, gen, dt),
        }
    }
}

/// `shape` drawn from the distribution with key and counter from `source_tensor` (a seed
/// or a generator state, as `source` says).
pub fn stateless(
    dist: Distribution,
    shape: &[usize],
    source: Source,
    source_tensor: &Tensor,
    a: f64,
    b: f64,
    dtype: DType,
) -> Result<Tensor> {
    let gen = philox_of(dist.op(), source, source_tensor)?;
    dist.sample(shape, gen, a, b, dtype)
}

/// Samples of the uniform distribution on `[minval, maxval)` that depend only on `seed`
/// (shape `[2]`, int32 or int64). TF equivalent: `tf.random.stateless_uniform` (float dtypes).
pub fn stateless_uniform(
    shape: &[usize],
    seed: &Tensor,
    minval: f64,
    maxval: f64,
    dtype: DType,
) -> Result<Tensor> {
    stateless(
        Distribution::Uniform,
        shape,
        Source::Seed,
        seed,
        minval,
        maxval,
        dtype,
    )
}

/// Samples of the normal distribution that depend only on `seed`. TF equivalent:
/// `tf.random.stateless_normal`.
pub fn stateless_normal(
    shape: &[usize],
    seed: &Tensor,
    mean: f64,
    stddev: f64,
    dtype: DType,
) -> Result<Tensor> {
    stateless(
        Distribution::Normal,
        shape,
        Source::Seed,
        seed,
        mean,
        stddev,
        dtype,
    )
}

/// Truncated normal samples that depend only on `seed`. TF equivalent:
/// `tf.random.stateless_truncated_normal`.
pub fn stateless_truncated_normal(
    shape: &[usize],
    seed: &Tensor,
    mean: f64,
    stddev: f64,
    dtype: DType,
) -> Result<Tensor> {
    let d = Distribution::TruncatedNormal;
    stateless(d, shape, Source::Seed, seed, mean, stddev, dtype)
}

/// Class indices drawn from `logits` that depend only on `seed`. TF equivalent:
/// `tf.random.stateless_categorical`.
pub fn stateless_categorical(
    logits: &Tensor,
    num_samples: usize,
    seed: &Tensor,
    dtype: DType,
) -> Result<Tensor> {
    let gen = philox_of("StatelessMultinomial", Source::Seed, seed)?;
    categorical_from(logits, num_samples, gen, dtype)
}

/// How this family's traced ops are saved in SavedModels (see `saved_model::table`):
/// pure functions of their inputs (a seed or a generator state), so a loaded function
/// draws the same numbers from the same seed.
pub(crate) mod saved {
    use super::{Distribution, Source};
    use crate::error::Result;
    use crate::graph::Forward;
    use crate::saved_model::table::{get, get_dtype, get_f64, one_out, Attrs, OpDef};

    const FIELDS: &[&str] = &["shape", "a", "b", "dtype", "source"];

    pub(crate) const SAVED: &[OpDef] = &[
        OpDef::new("StatelessRandomUniform", 1, FIELDS, uniform),
        OpDef::new("StatelessRandomNormal", 1, FIELDS, normal),
        OpDef::new("StatelessTruncatedNormal", 1, FIELDS, truncated),
        OpDef::new("StatelessRandomUniformInt", 1, FIELDS, uniform_int),
        OpDef::new("StatelessRandomUniformFullInt", 1, FIELDS, full_int),
        OpDef::new(
            "StatelessMultinomial",
            2,
            &["num_samples", "dtype", "source"],
            multinomial,
        ),
        OpDef::new("RngReadAndSkip", 1, &["delta"], skip),
    ];

    fn build(d: Distribution, a: &Attrs) -> Result<Forward> {
        let op = d.op();
        let dims: Vec<usize> = get(op, a, "shape")?;
        crate::size::num_elements(op, &dims)?;
        let (x, y) = (get_f64(op, a, "a")?, get_f64(op, a, "b")?);
        let dt = get_dtype(op, a, "dtype")?;
        let source: Source = get(op, a, "source")?;
        Ok(one_out(move |xs| {
            super::stateless(d, &dims, source, &xs[0], x, y, dt)
        }))
    }

    fn uniform(a: &Attrs, _: usize) -> Result<Forward> {
        build(Distribution::Uniform, a)
    }
    fn normal(a: &Attrs, _: usize) -> Result<Forward> {
        build(Distribution::Normal, a)
    }
    fn truncated(a: &Attrs, _: usize) -> Result<Forward> {
        build(Distribution::TruncatedNormal, a)
    }
    fn uniform_int(a: &Attrs, _: usize) -> Result<Forward> {
        build(Distribution::UniformInt, a)
    }
    fn full_int(a: &Attrs, _: usize) -> Result<Forward> {
        build(Distribution::UniformFullInt, a)
    }
    fn multinomial(a: &Attrs, _: usize) -> Result<Forward> {
        let op = "StatelessMultinomial";
        let n: usize = get(op, a, "num_samples")?;
        let dt = get_dtype(op, a, "dtype")?;
        let source: Source = get(op, a, "source")?;
        Ok(one_out(move |xs| {
            let gen = super::philox_of(op, source, &xs[1])?;
            super::categorical_from(&xs[0], n, gen, dt)
        }))
    }
    fn skip(a: &Attrs, _: usize) -> Result<Forward> {
        let delta: u64 = get("RngReadAndSkip", a, "delta")?;
        Ok(one_out(move |xs| super::rng_skip(&xs[0], delta)))
    }
}

/// The Python functions of this family: bindings and where they appear (see
/// `src/ops/README.md`).
#[cfg(feature = "python")]
pub(super) mod python {
    #[allow(unused_imports)]
    use crate::python::binding::*;

    use super::{Distribution, Source};

    fn source_arg(s: &str) -> PyResult<Source> {
        match s {
            "seed" => Ok(Source::Seed),
            "state" => Ok(Source::State),
            _ => Err(PyValueError::new_err(format!(
                "source must be 'seed' or 'state', got {s:?}"
            ))),
        }
    }

    fn dist_arg(s: &str) -> PyResult<Distribution> {
        Ok(match s {
            "uniform" => Distribution::Uniform,
            "normal" => Distribution::Normal,
            "truncated_normal" => Distribution::TruncatedNormal,
            "uniform_int" => Distribution::UniformInt,
            "uniform_full_int" => Distribution::UniformFullInt,
            _ => return Err(PyValueError::new_err(format!("unknown distribution {s:?}"))),
        })
    }

    /// The engine of ``gt.random``'s stateless ops and ``gt.random.Generator``: ``shape``
    /// drawn from ``dist`` (``"uniform"``, ``"normal"``, ``"truncated_normal"``,
    /// ``"uniform_int"``, ``"uniform_full_int"``) with parameters ``a`` and ``b``, the Philox
    /// key and counter from ``source`` (a shape-[2] seed, or with ``source="state"`` a
    /// generator's ``[counter_lo, counter_hi, key]``). A pure function of its inputs.
    ///
    /// >>> x = gt._gradtape._philox_sample([2], "uniform", gt.constant([1, 2]), 0.0, 1.0, gt.float32)
    /// >>> [round(v, 6) for v in x.numpy().tolist()]
    /// [0.84406, 0.192045]
    #[pyfunction]
    #[pyo3(signature = (shape, dist, source, a, b, dtype, kind="seed"))]
    #[allow(clippy::too_many_arguments)]
    fn _philox_sample(
        py: Python<'_>,
        shape: &Bound<'_, PyAny>,
        dist: &str,
        source: &Bound<'_, PyAny>,
        a: f64,
        b: f64,
        dtype: &Bound<'_, PyAny>,
        kind: &str,
    ) -> PyResult<PyTensor> {
        let dims = dims_arg(shape)?;
        let d = dist_arg(dist)?;
        let src = source_arg(kind)?;
        let dt = to_dtype(dtype)?;
        let s = to_tensor(source, None)?;
        let n = dims.iter().fold(1usize, |n, &d| n.saturating_mul(d));
        let key = format!("{dims:?},{a:?},{b:?},{dt:?},{src:?}");
        let f = move |xs: &[Tensor]| super::stateless(d, &dims, src, &xs[0], a, b, dt);
        Ok(call_sized(py, n, d.op(), || key, &[s], f)?.into())
    }

    /// Class indices drawn from each row of ``logits`` with key and counter from ``source``
    /// (TF's ``StatelessMultinomial``); the engine of ``gt.random.stateless_categorical``.
    ///
    /// >>> gt._gradtape._philox_categorical(gt.constant([[0.0, -1e9]]), 3, gt.constant([1, 2]), gt.int64).numpy().tolist()
    /// [[0, 0, 0]]
    #[pyfunction]
    #[pyo3(signature = (logits, num_samples, source, dtype, kind="seed"))]
    fn _philox_categorical(
        py: Python<'_>,
        logits: &Bound<'_, PyAny>,
        num_samples: i64,
        source: &Bound<'_, PyAny>,
        dtype: &Bound<'_, PyAny>,
        kind: &str,
    ) -> PyResult<PyTensor> {
        let n = usize::try_from(num_samples).map_err(|_| {
            InvalidArgumentError::new_err(format!(
                "num_samples should be nonnegative, got {num_samples}"
            ))
        })?;
        let src = source_arg(kind)?;
        let dt = to_dtype(dtype)?;
        let (l, s) = (
            to_tensor(logits, Some(DType::F32))?,
            to_tensor(source, None)?,
        );
        let key = format!("{n:?},{dt:?},{src:?}");
        let f = move |xs: &[Tensor]| {
            let gen = super::philox_of("StatelessMultinomial", src, &xs[1])?;
            super::categorical_from(&xs[0], n, gen, dt)
        };
        Ok(call_n(py, "StatelessMultinomial", || key, &[l, s], f)?.into())
    }

    /// A generator state ``[counter_lo, counter_hi, key]`` advanced by ``delta`` outputs
    /// (TF's ``RngReadAndSkip``: 256 Philox blocks per output).
    ///
    /// >>> gt._gradtape._rng_skip(gt.constant([1, 0, 0], gt.int64), 3).numpy().tolist()
    /// [769, 0, 0]
    #[pyfunction]
    #[pyo3(signature = (state, delta))]
    fn _rng_skip(py: Python<'_>, state: &Bound<'_, PyAny>, delta: u64) -> PyResult<PyTensor> {
        let s = to_tensor(state, Some(DType::I64))?;
        let key = format!("{delta:?}");
        let f = move |xs: &[Tensor]| super::rng_skip(&xs[0], delta);
        Ok(call_n(py, "RngReadAndSkip", || key, &[s], f)?.into())
    }

    expose! {
        fn _philox_sample in []: "(shape: ShapeLike, dist: str, source: TensorLike, a: float, b: float, dtype: DTypeLike, kind: str = 'seed') -> Tensor";
        fn _philox_categorical in []: "(logits: TensorLike, num_samples: int, source: TensorLike, dtype: DTypeLike, kind: str = 'seed') -> Tensor";
        fn _rng_skip in []: "(state: TensorLike, delta: int) -> Tensor";
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed(a: i64, b: i64) -> Tensor {
        Tensor::from_vec(vec![a, b], &[2]).unwrap()
    }

    // Numbers from TF 2.21 (CPU): tf.random.stateless_*(..., seed=[1, 2]).
    #[test]
    fn matches_tf_numbers() {
        let s = seed(1, 2);
        let u = stateless_uniform(&[6], &s, 0.0, 1.0, DType::F32).unwrap();
        assert_eq!(
            u.to_vec::<f32>().unwrap(),
            vec![
                0.844_060_4,
                0.192_045_33,
                0.996_223_2,
                0.160_387_4,
                0.271_990_18,
                0.649_346
            ]
        );
        let d = stateless_uniform(&[3], &s, 0.0, 1.0, DType::F64).unwrap();
        assert_eq!(
            d.to_vec::<f64>().unwrap(),
            vec![0.7524837538451801, 0.9697857725627486, 0.17592233912897481]
        );
        let g = Philox::from_seed(1, 2);
        let w = uniform_full_int_from(&[6], g, DType::U32).unwrap();
        assert_eq!(
            w.to_vec::<u32>().unwrap(),
            vec![1105988140, 1738052849, 3959391294, 370444179, 10670227, 4048756165]
        );
        let w = uniform_full_int_from(&[3], g, DType::U64).unwrap();
        assert_eq!(
            w.to_vec::<u64>().unwrap(),
            vec![
                7464880146280614444,
                1591045637757961278,
                17389275318164050067
            ]
        );
        let i = uniform_int_from(&[6], g, 0, 10, DType::I32).unwrap();
        assert_eq!(i.to_vec::<i32>().unwrap(), vec![0, 9, 4, 9, 7, 5]);
        let i = uniform_int_from(&[3], g, 0, 10, DType::I64).unwrap();
        assert_eq!(i.to_vec::<i64>().unwrap(), vec![4, 8, 7]);
        let n = stateless_normal(&[6], &s, 0.0, 1.0, DType::F32).unwrap();
        assert_eq!(
            n.to_vec::<f32>().unwrap(),
            vec![
                0.544_110_1,
                0.207_380_31,
                0.073_564_32,
                0.046_434_55,
                -1.301_589_8,
                -0.953_856_5
            ]
        );
        let n = stateless_normal(&[3], &s, 0.0, 1.0, DType::F64).unwrap();
        assert_eq!(
            n.to_vec::<f64>().unwrap(),
            vec![-0.1423118100189212, 0.7406072461585091, -1.469047669443883]
        );
        let t = stateless_truncated_normal(&[6], &s, 0.0, 1.0, DType::F32).unwrap();
        assert_eq!(
            t.to_vec::<f32>().unwrap(),
            vec![
                0.544_110_1,
                0.207_380_31,
                0.073_564_32,
                0.046_434_55,
                0.168_205_92,
                -1.685_033_3
            ]
        );
    }

    #[test]
    fn seeds_and_states() {
        // int32 seeds sign-extend as TF's (seed [-1, 2] as int32 or int64 is one seed).
        let a = Tensor::from_vec(vec![-1i32, 2], &[2]).unwrap();
        let b = seed(-1, 2);
        let (x, y) = (
            stateless_uniform(&[2], &a, 0.0, 1.0, DType::F32).unwrap(),
            stateless_uniform(&[2], &b, 0.0, 1.0, DType::F32).unwrap(),
        );
        assert_eq!(x.to_vec::<f32>().unwrap(), y.to_vec::<f32>().unwrap());
        assert_eq!(x.to_vec::<f32>().unwrap(), vec![0.413_599_5, 0.620_097_9]);
        // A generator state round trips, and a skip carries into the high word.
        let p = Philox::from_state([-1, 5, 77]);
        assert_eq!(p.state(), [-1, 5, 77]);
        let st = Tensor::from_vec(vec![-1i64, 5, 77], &[3]).unwrap();
        let next = rng_skip(&st, 1).unwrap().to_vec::<i64>().unwrap();
        assert_eq!(next, vec![255, 6, 77]);
        // Bad seeds are errors.
        for bad in [
            Tensor::from_vec(vec![1i64, 2, 3], &[3]).unwrap(),
            Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap(),
        ] {
            assert!(matches!(
                stateless_normal(&[2], &bad, 0.0, 1.0, DType::F32),
                Err(Error::InvalidArgument { .. })
            ));
        }
        assert!(uniform_int_from(&[2], p, 5, 5, DType::I32).is_err());
        assert!(uniform_int_from(&[2], p, 0, 5, DType::U8).is_err());
        assert!(normal_from(&[2], p, 0.0, 1.0, DType::I32).is_err());
    }

    #[test]
    fn large_draws_do_not_depend_on_pieces() {
        let s = seed(3, 4);
        let big = stateless_normal(&[3 * PIECE + 7], &s, 0.0, 1.0, DType::F32).unwrap();
        let small = stateless_normal(&[PIECE + 3], &s, 0.0, 1.0, DType::F32).unwrap();
        let (b, sm) = (big.to_vec::<f32>().unwrap(), small.to_vec::<f32>().unwrap());
        assert_eq!(&b[..PIECE + 3], &sm[..]);
        let t = stateless_truncated_normal(&[2 * PIECE + 1], &s, 1.0, 2.0, DType::F64).unwrap();
        let t = t.to_vec::<f64>().unwrap();
        assert!(t.iter().all(|v| (v - 1.0).abs() < 4.0));
    }

    #[test]
    fn categorical() {
        let logits = Tensor::from_vec(vec![0.0f32, f32::NEG_INFINITY, 1.0, 1.0], &[2, 2]).unwrap();
        let c = stateless_categorical(&logits, 200, &seed(7, 17), DType::I64).unwrap();
        let v = c.to_vec::<i64>().unwrap();
        assert!(v[..200].iter().all(|&k| k == 0));
        let ones = v[200..].iter().filter(|&&k| k == 1).count();
        assert!((70..130).contains(&ones), "{ones}");
        let bad = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
        assert!(stateless_categorical(&bad, 2, &seed(1, 1), DType::I64).is_err());
    }
}
