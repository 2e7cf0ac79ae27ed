//! Random tensors: `tf.random`'s ops, with TF's seed rules. TF equivalent: `tf.random`.
//!
//! Seeds follow `tf.random.set_seed`'s documented rules:
//!
//! - neither a global seed ([`set_seed`]) nor an op seed (`seed`): every call draws
//!   fresh numbers (keyed from the operating system's entropy);
//! - a global seed only: each call takes the next op seed of a sequence the global
//!   seed determines, so a program that sets the same global seed draws the same
//!   sequence of tensors;
//! - an op seed only: the global seed is TF's default ([`DEFAULT_GRAPH_SEED`]);
//! - both: the pair keys the stream. As with TF's eager kernels, repeated calls with
//!   the same op seed (and op and dtype) continue that stream — the first call after
//!   [`set_seed`] gives `A1`, the second `A2` — and [`set_seed`] starts them over.
//!
//! Seeds are taken modulo `2**31 - 1`, as TF does. The numbers are gradtape's, not
//! TF's (its Philox streams are not reproduced): a call's values come from ChaCha12
//! ([`rand::rngs::StdRng`]) keyed by (op, seeds, call count), in blocks of
//! [`BLOCK`] elements each with its own key, so they do not depend on the number of
//! threads that fill them.
//!
//! The seed state is a few atomics and a fixed table of atomic counters: no lock, so
//! it is safe to use from any thread and in a child process after `fork` (a child
//! continues its parent's sequence; unseeded calls differ between them, as each draws
//! its own key).
//!
//! Random ops are not recorded on tapes: their outputs do not depend on differentiable
//! inputs.

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};

use half::f16;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// TF's `DEFAULT_GRAPH_SEED`: the global seed of an op seed given without one.
pub const DEFAULT_GRAPH_SEED: i64 = 87_654_321;

/// Elements per independently keyed block of a call's output.
pub const BLOCK: usize = 1 << 12;

/// Seeds are reduced modulo this (TF's `_MAXINT32`, `2**31 - 1`).
const MAXINT32: i64 = (1 << 31) - 1;

/// The global seed, or `NO_SEED`.
static GLOBAL_SEED: AtomicU64 = AtomicU64::new(NO_SEED);
const NO_SEED: u64 = u64::MAX;
/// Calls drawn under the global seed without an op seed since [`set_seed`] (TF's
/// internal operation seed).
static OP_COUNTER: AtomicU64 = AtomicU64::new(0);
/// Bumped by every [`set_seed`]: part of the kernel table's keys, so a count from
/// before a reset is never continued.
static GENERATION: AtomicU64 = AtomicU64::new(0);
/// Counts handed out when the kernel table is full (distinct, in call order).
static OVERFLOW: AtomicU64 = AtomicU64::new(1 << 63);

/// TF keeps one kernel per (op, dtype, seeds) whose counter advances on each call;
/// this table keeps those counters: open addressing over atomics (key 0: free).
const SLOTS: usize = 1 << 12;
struct Slot {
    key: AtomicU64,
    count: AtomicU64,
}
static KERNELS: [Slot; SLOTS] = [const {
    Slot {
        key: AtomicU64::new(0),
        count: AtomicU64::new(0),
    }
}; SLOTS];

/// Sets the global seed (`None` clears it), and starts every seeded stream over.
/// TF equivalent: `tf.random.set_seed`.
pub fn set_seed(seed: Option<i64>) {
    GLOBAL_SEED.store(seed.map_or(NO_SEED, |s| truncate(s) as u64), SeqCst);
    OP_COUNTER.store(0, SeqCst);
    GENERATION.fetch_add(1, SeqCst);
    for slot in &KERNELS {
        slot.count.store(0, SeqCst);
        slot.key.store(0, SeqCst);
    }
}

/// The global seed set by [`set_seed`], if any (modulo `2**31 - 1`).
pub fn global_seed() -> Option<i64> {
    match GLOBAL_SEED.load(SeqCst) {
        NO_SEED => None,
        s => Some(s as i64),
    }
}

/// TF's `_truncate_seed`: Python's `seed % (2**31 - 1)` (never negative).
fn truncate(seed: i64) -> i64 {
    seed.rem_euclid(MAXINT32)
}

/// SplitMix64's finalizer: a bijective mix of 64 bits.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The ops, as tags of their streams.
#[derive(Clone, Copy)]
enum Kind {
    Uniform = 1,
    UniformInt = 2,
    Normal = 3,
    TruncatedNormal = 4,
}
/// Tag bits saying where a stream's seeds came from.
const INTERNAL_SEED: u64 = 1 << 5;
const UNSEEDED: u64 = 1 << 6;

/// The key of one call's stream: the op, the two seeds, and how many calls of the
/// same kernel came before. Block `i` of the output is drawn from ChaCha12 keyed with
/// these four words and `i`.
#[derive(Clone, Copy, Debug)]
struct Stream([u64; 4]);

impl Stream {
    /// The stream of a call, advancing the seed state as TF does.
    fn next(kind: Kind, dtype: DType, op_seed: Option<i64>) -> Stream {
        let tag = kind as u64;
        match (global_seed(), op_seed) {
            (None, None) => {
                let (a, b) = entropy();
                Stream([tag | UNSEEDED, a, b, 0])
            }
            (Some(g), None) => {
                // A fresh op seed per call: a new kernel each time, its count 0.
                let n = OP_COUNTER.fetch_add(1, SeqCst);
                Stream([tag | INTERNAL_SEED, g as u64, n, 0])
            }
            (g, Some(s)) => {
                let g = g.unwrap_or(DEFAULT_GRAPH_SEED) as u64;
                let s = truncate(s) as u64;
                let count = kernel_count(tag, dtype, g, s);
                Stream([tag, g, s, count])
            }
        }
    }

    /// The generator of block `i` (`i < 2**56`: blocks of [`BLOCK`] elements cover
    /// every possible tensor).
    fn block(&self, i: usize) -> StdRng {
        let mut key = [0u8; 32];
        let words = [
            self.0[0] | ((i as u64) << 8),
            self.0[1],
            self.0[2],
            self.0[3],
        ];
        for (k, w) in key.chunks_exact_mut(8).zip(words) {
            k.copy_from_slice(&w.to_le_bytes());
        }
        StdRng::from_seed(key)
    }
}

/// Two words of the operating system's entropy (a clock- and counter-based key if
/// it has none to give: still distinct per call and per process).
fn entropy() -> (u64, u64) {
    use rand::TryRngCore;
    let mut os = rand::rngs::OsRng;
    match (os.try_next_u64(), os.try_next_u64()) {
        (Ok(a), Ok(b)) => (a, b),
        _ => {
            static CALLS: AtomicU64 = AtomicU64::new(0);
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            let n = CALLS.fetch_add(1, SeqCst);
            (mix(t ^ mix(std::process::id() as u64)), mix(n))
        }
    }
}

/// How many calls of the kernel (op, dtype, seeds) came before this one since the
/// last [`set_seed`], counting this one.
fn kernel_count(tag: u64, dtype: DType, g: u64, s: u64) -> u64 {
    let mut h = mix(GENERATION.load(SeqCst));
    for w in [tag, dtype.as_datatype_enum() as u64, g, s] {
        h = mix(h ^ w);
    }
    let h = h | 1;
    let start = (h as usize) % SLOTS;
    for i in 0..SLOTS {
        let slot = &KERNELS[(start + i) % SLOTS];
        let k = slot.key.load(SeqCst);
        let mine = k == h
            || (k == 0
                && match slot.key.compare_exchange(0, h, SeqCst, SeqCst) {
                    Ok(_) => true,
                    Err(other) => other == h,
                });
        if mine {
            return slot.count.fetch_add(1, SeqCst);
        }
    }
    // More distinct seeded kernels than slots since the last reset: each further call
    // gets a count of its own (still reproducible for a program run in one order).
    OVERFLOW.fetch_add(1, SeqCst)
}

/// The floating dtypes' arithmetic, as TF's kernels do it in each dtype.
trait RandFloat: Copy + Default + Send + Sync + 'static {
    fn of(v: f64) -> Self;
    /// Uniform on `[0, 1)` with as many random bits as the dtype's mantissa has
    /// (TF's: a random mantissa in `[1, 2)`, minus one).
    fn unit(rng: &mut StdRng) -> Self;
    fn mul_add(self, a: Self, b: Self) -> Self;
    fn sub(self, b: Self) -> Self;
}
impl RandFloat for f64 {
    fn of(v: f64) -> Self {
        v
    }
    fn unit(rng: &mut StdRng) -> Self {
        (rng.random::<u64>() >> 12) as f64 * (1.0 / (1u64 << 52) as f64)
    }
    fn mul_add(self, a: Self, b: Self) -> Self {
        self * a + b
    }
    fn sub(self, b: Self) -> Self {
        self - b
    }
}
impl RandFloat for f32 {
    fn of(v: f64) -> Self {
        v as f32
    }
    fn unit(rng: &mut StdRng) -> Self {
        (rng.random::<u32>() >> 9) as f32 * (1.0 / (1u32 << 23) as f32)
    }
    fn mul_add(self, a: Self, b: Self) -> Self {
        self * a + b
    }
    fn sub(self, b: Self) -> Self {
        self - b
    }
}
impl RandFloat for half::bf16 {
    fn of(v: f64) -> Self {
        half::bf16::from_f32(v as f32)
    }
    fn unit(rng: &mut StdRng) -> Self {
        // 7 mantissa bits, as TF's bfloat16 uniform.
        half::bf16::from_f32((rng.random::<u32>() >> 25) as f32 * (1.0 / 128.0))
    }
    fn mul_add(self, a: Self, b: Self) -> Self {
        // Computed in float32 and rounded after each operation.
        let p = half::bf16::from_f32(f32::from(self) * f32::from(a));
        half::bf16::from_f32(f32::from(p) + f32::from(b))
    }
    fn sub(self, b: Self) -> Self {
        half::bf16::from_f32(f32::from(self) - f32::from(b))
    }
}
impl RandFloat for f16 {
    fn of(v: f64) -> Self {
        f16::from_f64(v)
    }
    fn unit(rng: &mut StdRng) -> Self {
        f16::from_f32((rng.random::<u32>() >> 22) as f32 * (1.0 / 1024.0))
    }
    fn mul_add(self, a: Self, b: Self) -> Self {
        // Rounded to float16 after each operation, as TF's half kernels.
        self * a + b
    }
    fn sub(self, b: Self) -> Self {
        self - b
    }
}

/// `shape` filled block by block from `stream`, each element `f(rng)`.
fn fill<T: Element + Default>(
    op: &'static str,
    shape: &[usize],
    stream: Stream,
    f: impl Fn(&mut StdRng) -> T + Sync,
) -> Result<Tensor> {
    let n = crate::size::check_shape_of::<T>(op, shape)?;
    let mut v = crate::size::try_vec_filled(op, n, T::default())?;
    crate::pool::pieces(&mut v, BLOCK, |i, piece| {
        let mut rng = stream.block(i);
        for e in piece {
            *e = f(&mut rng);
        }
    });
    Tensor::from_vec(v, shape)
}

/// Calls `$body` with `$T` the element type of the floating `$dtype`, or returns
/// TF's error for other dtypes.
macro_rules! by_float {
    ($op:expr, $dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            DType::F16 => {
                type $T = f16;
                $body
            }
            DType::F32 => {
                type $T = f32;
                $body
            }
            DType::BF16 => {
                type $T = half::bf16;
                $body
            }
            DType::F64 => {
                type $T = f64;
                $body
            }
            d => Err(Error::dtype(
                $op,
                format!(
                    "dtype must be a floating point type (float16, bfloat16, float32, float64), got {}",
                    d.name()
                ),
            )),
        }
    };
}

/// Samples of the normal distribution with `mean` and `stddev`, of `shape` and the
/// floating `dtype`. TF equivalent: `tf.random.normal`. Values: standard normal
/// samples (ziggurat) times `stddev` plus `mean`, in `dtype`'s arithmetic.
pub fn normal(
    shape: &[usize],
    mean: f64,
    stddev: f64,
    dtype: DType,
    seed: Option<i64>,
) -> Result<Tensor> {
    const OP: &str = "RandomStandardNormal";
    by_float!(OP, dtype, T => {
        let stream = Stream::next(Kind::Normal, dtype, seed);
        let (m, s) = (T::of(mean), T::of(stddev));
        fill(OP, shape, stream, |rng| {
            T::of(rng.sample::<f64, _>(rand_distr::StandardNormal)).mul_add(s, m)
        })
    })
}

/// Normal samples redrawn until within two standard deviations of the mean, of
/// `shape` and the floating `dtype`. TF equivalent: `tf.random.truncated_normal`.
pub fn truncated_normal(
    shape: &[usize],
    mean: f64,
    stddev: f64,
    dtype: DType,
    seed: Option<i64>,
) -> Result<Tensor> {
    const OP: &str = "TruncatedNormal";
    by_float!(OP, dtype, T => {
        let stream = Stream::next(Kind::TruncatedNormal, dtype, seed);
        let (m, s) = (T::of(mean), T::of(stddev));
        fill(OP, shape, stream, |rng| loop {
            let z: f64 = rng.sample(rand_distr::StandardNormal);
            if z.abs() <= 2.0 {
                break T::of(z).mul_add(s, m);
            }
        })
    })
}

/// Samples of the uniform distribution on `[minval, maxval)`, of `shape` and
/// `dtype`. TF equivalent: `tf.random.uniform` (which defaults `maxval` to 1 for
/// floats). Floats: `u * (maxval - minval) + minval` in `dtype`'s arithmetic, `u` with
/// as many random bits as the dtype's mantissa. Integer dtypes take integral bounds
/// and draw as [`uniform_int`] does (exact up to `2**53`; beyond, use
/// [`uniform_int`]).
pub fn uniform(
    shape: &[usize],
    minval: f64,
    maxval: f64,
    dtype: DType,
    seed: Option<i64>,
) -> Result<Tensor> {
    const OP: &str = "RandomUniform";
    if dtype.is_integer() {
        let int = |v: f64| {
            if v.is_finite() && v.fract() == 0.0 && v.abs() <= 2f64.powi(64) {
                Ok(v as i128)
            } else {
                Err(Error::invalid(
                    "RandomUniformInt",
                    format!(
                        "minval and maxval must be integers for dtype {}, got {v}",
                        dtype.name()
                    ),
                ))
            }
        };
        return uniform_int(shape, int(minval)?, int(maxval)?, dtype, seed);
    }
    let dtype_err = || {
        Error::dtype(
            OP,
            format!(
                "dtype must be a floating point or integer type, got {}",
                dtype.name()
            ),
        )
    };
    if !dtype.is_floating() {
        return Err(dtype_err());
    }
    by_float!(OP, dtype, T => {
        let stream = Stream::next(Kind::Uniform, dtype, seed);
        let lo = T::of(minval);
        let range = T::of(maxval).sub(lo);
        fill(OP, shape, stream, |rng| T::unit(rng).mul_add(range, lo))
    })
}

/// Integers drawn uniformly (without bias) from `[minval, maxval)`, of `shape` and
/// the integer `dtype`. TF equivalent: `tf.random.uniform` with an integer `dtype`.
/// `minval < maxval` is required, and both ends must fit `dtype` (`maxval` may be one
/// past its largest value).
pub fn uniform_int(
    shape: &[usize],
    minval: i128,
    maxval: i128,
    dtype: DType,
    seed: Option<i64>,
) -> Result<Tensor> {
    const OP: &str = "RandomUniformInt";
    let Some((crate::dtype::Limit::Int(lo), crate::dtype::Limit::Int(hi))) = dtype.limits() else {
        return Err(Error::dtype(
            OP,
            format!("dtype must be an integer type, got {}", dtype.name()),
        ));
    };
    if minval >= maxval {
        return Err(Error::invalid(
            OP,
            format!("Need minval < maxval: {minval} >= {maxval}"),
        ));
    }
    if minval < lo || maxval - 1 > hi {
        return Err(Error::invalid(
            OP,
            format!(
                "minval and maxval must satisfy {lo} <= minval < maxval <= {} for {}, got {minval} and {maxval}",
                hi + 1,
                dtype.name()
            ),
        ));
    }
    let stream = Stream::next(Kind::UniformInt, dtype, seed);
    macro_rules! ints {
        ($($dt:ident => $t:ty),*) => {
            match dtype {
                $(DType::$dt => fill(OP, shape, stream, |rng| rng.random_range(minval..maxval) as $t),)*
                _ => Err(Error::Internal(format!("{OP}: integer dtype {} not handled", dtype.name()))),
            }
        };
    }
    ints!(I8 => i8, I16 => i16, I32 => i32, I64 => i64, U8 => u8, U16 => u16, U32 => u32, U64 => u64)
}

/// The seed state is global: unit tests that draw seeded numbers run one at a time.
/// The Python functions of this family: bindings and where they appear (see
/// `src/ops/README.md`).
/// How this family's traced ops are saved in SavedModels (see `saved_model::table`):
/// draws of fresh numbers on every call, as the traced nodes.
pub(crate) mod saved {
    use crate::error::Result;
    use crate::graph::Forward;
    use crate::saved_model::table::{get, get_dtype, get_f64, one_out, Attrs, OpDef};

    const FIELDS: &[&str] = &["shape", "a", "b", "dtype", "seed"];

    pub(crate) const SAVED: &[OpDef] = &[
        OpDef::new("RandomStandardNormal", 0, FIELDS, normal).stateful(),
        OpDef::new("TruncatedNormal", 0, FIELDS, truncated).stateful(),
        OpDef::new("RandomUniform", 0, FIELDS, uniform).stateful(),
        OpDef::new("RandomUniformInt", 0, FIELDS, uniform_int).stateful(),
    ];

    type Sampler =
        fn(&[usize], f64, f64, crate::dtype::DType, Option<i64>) -> Result<crate::tensor::Tensor>;

    fn sampler(op: &'static str, a: &Attrs, f: Sampler) -> Result<Forward> {
        let dims: Vec<usize> = get(op, a, "shape")?;
        crate::size::num_elements(op, &dims)?;
        let (x, y) = (get_f64(op, a, "a")?, get_f64(op, a, "b")?);
        let dt = get_dtype(op, a, "dtype")?;
        let seed: Option<i64> = get(op, a, "seed")?;
        Ok(one_out(move |_| f(&dims, x, y, dt, seed)))
    }

    fn normal(a: &Attrs, _: usize) -> Result<Forward> {
        sampler("RandomStandardNormal", a, super::normal)
    }
    fn truncated(a: &Attrs, _: usize) -> Result<Forward> {
        sampler("TruncatedNormal", a, super::truncated_normal)
    }
    fn uniform(a: &Attrs, _: usize) -> Result<Forward> {
        sampler("RandomUniform", a, super::uniform)
    }
    fn uniform_int(a: &Attrs, _: usize) -> Result<Forward> {
        let op = "RandomUniformInt";
        let dims: Vec<usize> = get(op, a, "shape")?;
        crate::size::num_elements(op, &dims)?;
        let (lo, hi): (i128, i128) = (get(op, a, "a")?, get(op, a, "b")?);
        let dt = get_dtype(op, a, "dtype")?;
        let seed: Option<i64> = get(op, a, "seed")?;
        Ok(one_out(move |_| {
            super::uniform_int(&dims, lo, hi, dt, seed)
        }))
    }
}

#[cfg(feature = "python")]
pub(super) mod python {
    #[allow(unused_imports)]
    use crate::python::binding::*;

    /// The element count of `shape` (saturating: only to choose whether to release the GIL).
    fn count(shape: &[usize]) -> usize {
        shape.iter().fold(1usize, |n, &d| n.saturating_mul(d))
    }

    /// Sets the global seed (``None`` clears it): a program that sets the same seed draws the
    /// same sequence of random tensors, and calls with an op-level ``seed`` start over.
    /// TF equivalent: ``tf.random.set_seed``.
    ///
    /// >>> gt.random.set_seed(3)
    /// >>> a = gt.random.uniform([3])
    /// >>> gt.random.set_seed(3)
    /// >>> bool(gt.reduce_all(gt.random.uniform([3]) == a))
    /// True
    #[pyfunction]
    #[pyo3(signature = (seed))]
    fn set_seed(seed: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        super::set_seed(seed_arg(seed)?);
        Ok(())
    }

    type Sampler = fn(&[usize], f64, f64, DType, Option<i64>) -> crate::error::Result<Tensor>;

    /// `normal` and `truncated_normal`: the arguments converted, `f` run (GIL released
    /// when large; in a `gt.function`, drawn afresh on every call).
    #[allow(clippy::too_many_arguments)]
    fn sample(
        py: Python<'_>,
        op: &str,
        shape: &Bound<'_, PyAny>,
        mean: f64,
        stddev: f64,
        dtype: Option<&Bound<'_, PyAny>>,
        seed: Option<&Bound<'_, PyAny>>,
        f: Sampler,
    ) -> PyResult<PyTensor> {
        let dims = dims_arg(shape)?;
        let (dt, seed) = (dtype_arg(dtype, DType::F32)?, seed_arg(seed)?);
        let n = count(&dims);
        let key = format!("{dims:?},{mean:?},{stddev:?},{dt:?},{seed:?}");
        Ok(draw(
            py,
            n,
            op,
            || key,
            &[],
            move |_| f(&dims, mean, stddev, dt, seed),
        )?
        .into())
    }

    /// Samples of a normal distribution (float dtypes). TF equivalent: ``tf.random.normal``.
    ///
    /// >>> x = gt.random.normal([2, 3], seed=1)
    /// >>> x.shape, x.dtype
    /// (TensorShape([2, 3]), gt.float32)
    #[pyfunction]
    #[pyo3(
        signature = (shape, mean=0.0, stddev=1.0, dtype=None, seed=None, name=None),
        text_signature = "(shape, mean=0.0, stddev=1.0, dtype='float32', seed=None, name=None)"
    )]
    fn normal(
        py: Python<'_>,
        shape: &Bound<'_, PyAny>,
        mean: f64,
        stddev: f64,
        dtype: Option<&Bound<'_, PyAny>>,
        seed: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let op = "RandomStandardNormal";
        sample(py, op, shape, mean, stddev, dtype, seed, super::normal)
    }

    /// Normal samples redrawn until within two standard deviations of the mean (float
    /// dtypes). TF equivalent: ``tf.random.truncated_normal``.
    ///
    /// >>> x = gt.random.truncated_normal([1000], seed=2)
    /// >>> bool(gt.reduce_max(gt.abs(x)) <= 2.0)
    /// True
    #[pyfunction]
    #[pyo3(
        signature = (shape, mean=0.0, stddev=1.0, dtype=None, seed=None, name=None),
        text_signature = "(shape, mean=0.0, stddev=1.0, dtype='float32', seed=None, name=None)"
    )]
    fn truncated_normal(
        py: Python<'_>,
        shape: &Bound<'_, PyAny>,
        mean: f64,
        stddev: f64,
        dtype: Option<&Bound<'_, PyAny>>,
        seed: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        sample(
            py,
            "TruncatedNormal",
            shape,
            mean,
            stddev,
            dtype,
            seed,
            super::truncated_normal,
        )
    }

    /// An integer bound of `uniform`: a Python integer (any size the dtype allows), or an
    /// integral float.
    fn int_bound(ob: &Bound<'_, PyAny>) -> PyResult<i128> {
        if let Ok(i) = ob.extract::<i128>() {
            return Ok(i);
        }
        let v: f64 = ob.extract()?;
        if v.is_finite() && v.fract() == 0.0 && v.abs() < 2f64.powi(100) {
            Ok(v as i128)
        } else {
            Err(PyValueError::new_err(format!(
                "minval and maxval must be integers for an integer dtype, got {v}"
            )))
        }
    }

    /// Samples of a uniform distribution on ``[minval, maxval)``; ``maxval`` defaults to 1
    /// for floats and is required for integer dtypes (drawn without bias). TF equivalent:
    /// ``tf.random.uniform``.
    ///
    /// >>> x = gt.random.uniform([100], minval=2, maxval=5, dtype=gt.int32, seed=7)
    /// >>> sorted(set(x.numpy().tolist()))
    /// [2, 3, 4]
    #[pyfunction]
    #[pyo3(
        signature = (shape, minval=None, maxval=None, dtype=None, seed=None, name=None),
        text_signature = "(shape, minval=0, maxval=None, dtype='float32', seed=None, name=None)"
    )]
    fn uniform(
        py: Python<'_>,
        shape: &Bound<'_, PyAny>,
        minval: Option<&Bound<'_, PyAny>>,
        maxval: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        seed: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let dims = dims_arg(shape)?;
        let (dt, seed) = (dtype_arg(dtype, DType::F32)?, seed_arg(seed)?);
        let minval = minval.filter(|m| !m.is_none());
        let maxval = maxval.filter(|m| !m.is_none());
        if dt.is_integer() {
            let Some(maxval) = maxval else {
                return Err(PyValueError::new_err(format!(
                    "Must specify maxval for integer dtype {}",
                    dt.name()
                )));
            };
            let lo = minval.map_or(Ok(0), int_bound)?;
            let hi = int_bound(maxval)?;
            let n = count(&dims);
            let key = format!("{dims:?},{lo:?},{hi:?},{dt:?},{seed:?}");
            let f = move |_: &[Tensor]| super::uniform_int(&dims, lo, hi, dt, seed);
            return Ok(draw(py, n, "RandomUniformInt", || key, &[], f)?.into());
        }
        let lo: f64 = minval.map_or(Ok(0.0), |m| m.extract())?;
        let hi: f64 = maxval.map_or(Ok(1.0), |m| m.extract())?;
        let n = count(&dims);
        let key = format!("{dims:?},{lo:?},{hi:?},{dt:?},{seed:?}");
        let f = move |_: &[Tensor]| super::uniform(&dims, lo, hi, dt, seed);
        Ok(draw(py, n, "RandomUniform", || key, &[], f)?.into())
    }

    expose! {
        fn set_seed in [random]: "(seed: int | None) -> None";
        fn normal in [random]: "(shape: ShapeLike, mean: float = 0.0, stddev: float = 1.0, dtype: DTypeLike = 'float32', seed: int | None = None, name: str | None = None) -> Tensor";
        fn truncated_normal in [random]: "(shape: ShapeLike, mean: float = 0.0, stddev: float = 1.0, dtype: DTypeLike = 'float32', seed: int | None = None, name: str | None = None) -> Tensor";
        fn uniform in [random]: "(shape: ShapeLike, minval: float = 0, maxval: float | None = None, dtype: DTypeLike = 'float32', seed: int | None = None, name: str | None = None) -> Tensor";
    }
}

#[cfg(test)]
pub(crate) fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testutil::vals;

    #[test]
    fn global_seed_repeats_the_program_sequence() {
        let _s = serial();
        set_seed(Some(3));
        let a = vals(&normal(&[4], 0.0, 1.0, DType::F32, None).unwrap());
        let b = vals(&normal(&[4], 0.0, 1.0, DType::F32, None).unwrap());
        assert_ne!(a, b, "each call takes a new op seed");
        set_seed(Some(3));
        assert_eq!(vals(&normal(&[4], 0.0, 1.0, DType::F32, None).unwrap()), a);
        assert_eq!(vals(&normal(&[4], 0.0, 1.0, DType::F32, None).unwrap()), b);
        set_seed(Some(4));
        assert_ne!(vals(&normal(&[4], 0.0, 1.0, DType::F32, None).unwrap()), a);
        // Seeds are taken modulo 2**31 - 1, like TF's.
        set_seed(Some(3 + MAXINT32));
        assert_eq!(vals(&normal(&[4], 0.0, 1.0, DType::F32, None).unwrap()), a);
        assert_eq!(global_seed(), Some(3));
        set_seed(None);
        assert_eq!(global_seed(), None);
    }

    #[test]
    fn op_seed_calls_continue_their_kernel_and_reset_with_set_seed() {
        let _s = serial();
        for g in [Some(1234), None] {
            set_seed(g);
            let a1 = vals(&uniform(&[3], 0.0, 1.0, DType::F64, Some(1)).unwrap());
            let a2 = vals(&uniform(&[3], 0.0, 1.0, DType::F64, Some(1)).unwrap());
            assert_ne!(a1, a2);
            // Another op or seed does not advance this kernel.
            normal(&[2], 0.0, 1.0, DType::F64, Some(1)).unwrap();
            uniform(&[2], 0.0, 1.0, DType::F64, Some(2)).unwrap();
            set_seed(g);
            assert_eq!(
                vals(&uniform(&[3], 0.0, 1.0, DType::F64, Some(1)).unwrap()),
                a1
            );
            uniform(&[2], 0.0, 1.0, DType::F64, Some(2)).unwrap();
            assert_eq!(
                vals(&uniform(&[3], 0.0, 1.0, DType::F64, Some(1)).unwrap()),
                a2
            );
        }
        // No global seed: the op seed goes with TF's default global seed.
        set_seed(Some(DEFAULT_GRAPH_SEED));
        let d = vals(&uniform(&[3], 0.0, 1.0, DType::F64, Some(9)).unwrap());
        set_seed(None);
        assert_eq!(
            vals(&uniform(&[3], 0.0, 1.0, DType::F64, Some(9)).unwrap()),
            d
        );
    }

    #[test]
    fn unseeded_calls_differ() {
        let _s = serial();
        set_seed(None);
        let a = vals(&uniform(&[8], 0.0, 1.0, DType::F64, None).unwrap());
        let b = vals(&uniform(&[8], 0.0, 1.0, DType::F64, None).unwrap());
        assert_ne!(a, b);
    }

    #[test]
    fn pinned_values() {
        // The stream is part of the crate's behaviour: a change here is a
        // CHANGELOG entry.
        let _s = serial();
        set_seed(Some(0));
        let u = uniform(&[3], 0.0, 1.0, DType::F64, Some(1)).unwrap();
        let n = normal(&[2], 0.0, 1.0, DType::F32, Some(1)).unwrap();
        let i = uniform_int(&[4], 0, 10, DType::I32, Some(1)).unwrap();
        assert_eq!(
            u.to_vec::<f64>().unwrap(),
            vec![0.4128418979781239, 0.17644635681935217, 0.21232654016468722]
        );
        assert_eq!(n.to_vec::<f32>().unwrap(), vec![0.63434154, 0.64129585]);
        assert_eq!(i.to_vec::<i32>().unwrap(), vec![2, 4, 4, 8]);
    }

    #[test]
    fn values_lie_in_their_ranges_and_look_right() {
        let _s = serial();
        set_seed(Some(7));
        let n = 20_000;
        let u = vals(&uniform(&[n], -2.0, 3.0, DType::F32, None).unwrap());
        assert!(u.iter().all(|&v| (-2.0..3.0).contains(&v)));
        let mean = u.iter().sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.05, "{mean}");
        let h = vals(&uniform(&[n], 0.0, 1.0, DType::F16, None).unwrap());
        assert!(h.iter().all(|&v| (0.0..1.0).contains(&v)));
        let z = vals(&normal(&[n], 1.0, 2.0, DType::F64, None).unwrap());
        let m = z.iter().sum::<f64>() / n as f64;
        let var = z.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n as f64;
        assert!(
            (m - 1.0).abs() < 0.1 && (var.sqrt() - 2.0).abs() < 0.1,
            "{m} {var}"
        );
        let t = vals(&truncated_normal(&[n], 0.0, 3.0, DType::F64, None).unwrap());
        assert!(t.iter().all(|v| v.abs() <= 6.0));
        assert!(t.iter().any(|v| v.abs() > 5.0));
        let i = uniform_int(&[n], -3, 4, DType::I8, None).unwrap();
        let iv = i.to_vec::<i8>().unwrap();
        for k in -3..4 {
            assert!(iv.contains(&k));
        }
        assert!(iv.iter().all(|v| (-3..4).contains(v)));
        let w = uniform_int(&[100], 0, 1 << 64, DType::U64, None).unwrap();
        assert!(w.to_vec::<u64>().unwrap().iter().any(|&v| v > 1 << 63));
        let f = uniform(&[5], 2.0, 5.0, DType::I64, None).unwrap();
        assert_eq!(f.dtype(), DType::I64);
    }

    #[test]
    fn results_do_not_depend_on_blocks_or_threads() {
        let _s = serial();
        // Several blocks: the same values whether the pool fills them or not (the
        // pool decides; the keys are per block).
        set_seed(Some(11));
        let big = vals(&normal(&[3 * BLOCK + 5], 0.0, 1.0, DType::F64, Some(5)).unwrap());
        set_seed(Some(11));
        let again = vals(&normal(&[3 * BLOCK + 5], 0.0, 1.0, DType::F64, Some(5)).unwrap());
        assert_eq!(big, again);
        // The first block of a bigger call is the whole of a smaller one.
        set_seed(Some(11));
        let small = vals(&normal(&[BLOCK], 0.0, 1.0, DType::F64, Some(5)).unwrap());
        assert_eq!(&big[..BLOCK], &small[..]);
        // The seed state is the process's, not the thread's (as TF's global seed).
        let t = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    set_seed(Some(11));
                    vals(&normal(&[10], 0.0, 1.0, DType::F64, Some(5)).unwrap())
                })
                .join()
                .unwrap()
        });
        assert_eq!(&t[..], &small[..10]);
    }

    #[test]
    fn bad_arguments_are_errors() {
        let _s = serial();
        for dt in [DType::I32, DType::Bool, DType::C64] {
            assert!(matches!(
                normal(&[2], 0.0, 1.0, dt, None),
                Err(Error::DType { .. })
            ));
            assert!(matches!(
                truncated_normal(&[2], 0.0, 1.0, dt, None),
                Err(Error::DType { .. })
            ));
        }
        assert!(matches!(
            uniform(&[2], 0.0, 1.0, DType::Bool, None),
            Err(Error::DType { .. })
        ));
        assert!(matches!(
            uniform_int(&[2], 0, 1, DType::F32, None),
            Err(Error::DType { .. })
        ));
        for (lo, hi) in [(5, 5), (6, 5)] {
            assert!(matches!(
                uniform_int(&[2], lo, hi, DType::I32, None),
                Err(Error::InvalidArgument { .. })
            ));
        }
        assert!(uniform_int(&[2], 0, 257, DType::U8, None).is_err());
        assert!(uniform_int(&[2], -1, 5, DType::U8, None).is_err());
        assert!(uniform_int(&[2], 0, 256, DType::U8, None).is_ok());
        assert!(uniform(&[2], 0.5, 3.0, DType::I32, None).is_err());
        assert!(matches!(
            normal(&[1 << 31, 1 << 31], 0.0, 1.0, DType::F32, None),
            Err(Error::ResourceExhausted { .. })
        ));
        assert!(matches!(
            uniform(&[usize::MAX, 2], 0.0, 1.0, DType::F32, None),
            Err(Error::InvalidArgument { .. })
        ));
        assert_eq!(
            normal(&[0, 3], 0.0, 1.0, DType::F32, None).unwrap().shape(),
            &[0, 3]
        );
    }
}
