//! Constants, fills, ranges and dtype casts.

use half::{bf16, f16};
use ndarray::{ArcArray, Array1, IxDyn};
use num_complex::{Complex32, Complex64};

use super::{grads, unary_out, Grads, Op, Saves, VjpCx};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels::elementwise::{collect_chunks_for, filled, map};
use crate::kernels::fill::set_each;
use crate::size::check_shape;
use crate::tensor::{full_op, Data, Tensor};

/// Zeros of a shape and dtype. TF equivalent: `tf.zeros`.
pub fn zeros(shape: &[usize], dtype: DType) -> Result<Tensor> {
    full_op("Zeros", shape, 0.0, dtype)
}
/// Ones of a shape and dtype. TF equivalent: `tf.ones`.
pub fn ones(shape: &[usize], dtype: DType) -> Result<Tensor> {
    full_op("Ones", shape, 1.0, dtype)
}
/// Zeros shaped and typed like `x`. TF equivalent: `tf.zeros_like`.
pub fn zeros_like(x: &Tensor) -> Result<Tensor> {
    full_op("ZerosLike", x.shape(), 0.0, x.dtype())
}
/// Ones shaped and typed like `x`. TF equivalent: `tf.ones_like`.
pub fn ones_like(x: &Tensor) -> Result<Tensor> {
    full_op("OnesLike", x.shape(), 1.0, x.dtype())
}

/// A tensor of `shape` filled with the scalar `value`. TF equivalent: `tf.fill`.
pub fn fill(shape: &[usize], value: &Tensor) -> Result<Tensor> {
    if value.size() != 1 || value.ndim() != 0 {
        return Err(Error::invalid(
            "Fill",
            format!("value must be a scalar, got shape {:?}", value.shape()),
        ));
    }
    Ok(Tensor::new(map_same!(value.data(), a => {
        let v = *a.iter().next().ok_or_else(|| Error::Internal("Fill: a scalar has an element".into()))?;
        filled("Fill", shape, v)?
    })))
}

/// Identity matrix (`num_rows × num_columns`, columns default to rows), with
/// optional leading batch dimensions. TF equivalent: `tf.eye`.
pub fn eye(
    num_rows: usize,
    num_columns: Option<usize>,
    batch_shape: &[usize],
    dtype: DType,
) -> Result<Tensor> {
    let m = num_columns.unwrap_or(num_rows);
    let mut shape = batch_shape.to_vec();
    shape.extend([num_rows, m]);
    let n = check_shape("Eye", &shape, dtype)?;
    // `per` and every offset below are at most `n`: no overflow.
    let per = num_rows * m;
    let batches = n.checked_div(per).unwrap_or(0);
    let diag = num_rows.min(m);
    let ones = (0..batches).flat_map(move |b| (0..diag).map(move |i| b * per + i * m + i));
    seeded("Eye", &shape, ones, dtype)
}

/// Zeros of `shape` and `dtype` with a one at each flat index of `ones` (the seeds of
/// jacobians), written straight in `dtype`.
pub(crate) fn one_hot_seeds(
    shape: &[usize],
    ones: impl Iterator<Item = usize>,
    dtype: DType,
) -> Result<Tensor> {
    seeded("OneHot", shape, ones, dtype)
}

/// Zeros of `shape` with a one at each flat index of `ones`; an index out of range
/// is an internal error.
fn seeded(
    op: &'static str,
    shape: &[usize],
    ones: impl Iterator<Item = usize>,
    dtype: DType,
) -> Result<Tensor> {
    fn set<T: crate::dtype::Element>(
        mut a: ArcArray<T, IxDyn>,
        ones: impl Iterator<Item = usize>,
        one: T,
    ) -> Result<Data> {
        let s = a
            .as_slice_mut()
            .ok_or_else(|| Error::Internal("a fresh array is contiguous".into()))?;
        set_each(s, ones, one)?;
        Ok(T::wrap(a))
    }
    let one = crate::tensor::scalar_of(1.0, dtype);
    Ok(Tensor::new(
        dispatch!(full_op(op, shape, 0.0, dtype)?.into_data(), a => {
            let one = *crate::dtype::Element::unwrap(one.data())
                .and_then(|o: &ArcArray<_, IxDyn>| o.iter().next())
                .ok_or_else(|| Error::Internal(format!("{op}: a scalar of the same dtype")))?;
            set(a, ones, one)?
        }),
    ))
}

/// A 1-D tensor of `dtype` holding `f(i)` for `i` in `0..n`, converted as `cast`
/// converts `f64` (used by creation ops); checked and allocated fallibly.
pub(crate) fn from_f64_fn(
    op: &'static str,
    n: usize,
    dtype: DType,
    f: impl Fn(usize) -> f64 + Sync + Send,
) -> Result<Tensor> {
    check_shape(op, &[n], dtype)?;
    fn build<U: Send + Clone>(
        op: &'static str,
        n: usize,
        g: impl Fn(usize) -> U + Sync + Send,
    ) -> Result<ArcArray<U, IxDyn>> {
        let v = collect_chunks_for(op, n, |r, out| {
            for (o, i) in out.iter_mut().zip(r) {
                o.write(g(i));
            }
        })?;
        Ok(crate::size::shaped(op, &[n], v)?.into_shared())
    }
    Ok(Tensor::new(match dtype {
        DType::F16 => Data::F16(build(op, n, |i| f(i).f16())?),
        DType::BF16 => Data::BF16(build(op, n, |i| f(i).bf16())?),
        DType::Str => return Err(Error::unsupported(op, DType::Str)),
        DType::F32 => Data::F32(build(op, n, |i| f(i).f32())?),
        DType::F64 => Data::F64(build(op, n, f)?),
        DType::I8 => Data::I8(build(op, n, |i| f(i).int() as i8)?),
        DType::I16 => Data::I16(build(op, n, |i| f(i).int() as i16)?),
        DType::I32 => Data::I32(build(op, n, |i| f(i).i32())?),
        DType::I64 => Data::I64(build(op, n, |i| f(i).int())?),
        DType::U8 => Data::U8(build(op, n, |i| f(i).int() as u8)?),
        DType::U16 => Data::U16(build(op, n, |i| f(i).int() as u16)?),
        DType::U32 => Data::U32(build(op, n, |i| f(i).int() as u32)?),
        DType::U64 => Data::U64(build(op, n, |i| f(i).u64())?),
        DType::Bool => Data::Bool(build(op, n, |i| f(i).bool())?),
        DType::C64 => Data::C64(build(op, n, |i| f(i).c64())?),
        DType::C128 => Data::C128(build(op, n, |i| f(i).c128())?),
    }))
}

/// `num` evenly spaced values from `start` to `stop` inclusive.
/// TF equivalent: `tf.linspace`.
pub fn linspace(start: f64, stop: f64, num: usize, dtype: DType) -> Result<Tensor> {
    if !dtype.is_floating() {
        return Err(Error::unsupported("LinSpace", dtype));
    }
    if num == 1 {
        return from_f64_fn("LinSpace", 1, dtype, |_| start);
    }
    let step = (stop - start) / (num as f64 - 1.0);
    from_f64_fn("LinSpace", num, dtype, |i| {
        if i + 1 == num {
            stop
        } else {
            start + step * i as f64
        }
    })
}

/// TF's checks of `range`'s arguments (the direction of `delta`), shared by the float
/// and integer forms.
fn range_direction<T: PartialOrd + Default + std::fmt::Display>(
    start: T,
    limit: T,
    delta: T,
) -> Result<()> {
    let zero = T::default();
    if delta == zero {
        return Err(Error::invalid("Range", "Requires delta != 0"));
    }
    if delta > zero && start > limit {
        return Err(Error::invalid(
            "Range",
            format!("Requires start <= limit when delta > 0: {start}/{limit}"),
        ));
    }
    if delta < zero && start < limit {
        return Err(Error::invalid(
            "Range",
            format!("Requires start >= limit when delta < 0: {start}/{limit}"),
        ));
    }
    Ok(())
}

/// TF's error for a `range` whose length does not fit `int64`.
fn range_too_long() -> Error {
    Error::invalid(
        "Range",
        format!("Requires ((limit - start) / delta) <= {}", i64::MAX),
    )
}

/// `[start, start+delta, ...)` up to `limit` (exclusive). TF equivalent: `tf.range`.
/// Non-finite arguments or a length beyond `int64` are `InvalidArgument` (TF's
/// errors); a length too large to hold is `ResourceExhausted`. For integer dtypes
/// with integer arguments, [`range_int`] is exact where `f64` is not.
pub fn range(start: f64, limit: f64, delta: f64, dtype: DType) -> Result<Tensor> {
    if start.is_nan() || limit.is_nan() || delta.is_nan() {
        return Err(range_too_long());
    }
    range_direction(start, limit, delta)?;
    // TF computes the length in the output dtype: in float32, (1 - -2) / 0.00375f is
    // 800 (in f64 it is 800.00002, 801 elements).
    let count = if dtype == DType::F32 {
        f64::from(((limit as f32 - start as f32) / delta as f32).abs().ceil())
    } else {
        ((limit - start) / delta).abs().ceil()
    };
    // NaN: inf - inf; infinities and counts past i64 fail the comparison.
    if count.is_nan() || count >= (1u64 << 63) as f64 {
        return Err(range_too_long());
    }
    let n = count as usize;
    from_f64_fn("Range", n, dtype, |i| start + delta * i as f64)
}

/// [`range`] over integers, computed exactly in `i64` and converted to `dtype`.
pub fn range_int(start: i64, limit: i64, delta: i64, dtype: DType) -> Result<Tensor> {
    range_direction(start, limit, delta)?;
    let span = (limit as i128 - start as i128).unsigned_abs();
    let d = (delta as i128).unsigned_abs();
    let count = span.div_ceil(d);
    let n = usize::try_from(count)
        .ok()
        .filter(|&n| n <= i64::MAX as usize)
        .ok_or_else(range_too_long)?;
    check_shape("Range", &[n], dtype)?;
    // Every value lies between start and limit: it fits in i64.
    let at = move |i: usize| (start as i128 + delta as i128 * i as i128) as i64;
    match dtype {
        DType::I64 => Ok(Tensor::new(Data::I64(
            crate::size::shaped(
                "Range",
                &[n],
                collect_chunks_for("Range", n, |r, out| {
                    for (o, i) in out.iter_mut().zip(r) {
                        o.write(at(i));
                    }
                })?,
            )?
            .into_shared(),
        ))),
        DType::I32 => Ok(Tensor::new(Data::I32(
            crate::size::shaped(
                "Range",
                &[n],
                collect_chunks_for("Range", n, |r, out| {
                    for (o, i) in out.iter_mut().zip(r) {
                        o.write(at(i) as i32);
                    }
                })?,
            )?
            .into_shared(),
        ))),
        _ => from_f64_fn("Range", n, dtype, move |i| at(i) as f64),
    }
}

/// A 1-D `f64` tensor from a slice (handy in tests and examples).
pub fn vector(v: &[f64]) -> Tensor {
    Tensor::from_array(Array1::from(v.to_vec()).into_dyn())
}

macro_rules! cast_from {
    ($a:expr, $a_dtype:expr, $to:expr, $conv:ident) => {
        match $to {
            DType::F16 => Data::F16(map($a, |v| $conv::f16(v))?.into_shared()),
            DType::BF16 => Data::BF16(map($a, |v| $conv::bf16(v))?.into_shared()),
            DType::Str => return Err(string_cast($a_dtype, DType::Str)),
            DType::F32 => Data::F32(map($a, |v| $conv::f32(v))?.into_shared()),
            DType::F64 => Data::F64(map($a, |v| $conv::f64(v))?.into_shared()),
            DType::I8 => Data::I8(map($a, |v| $conv::int(v) as i8)?.into_shared()),
            DType::I16 => Data::I16(map($a, |v| $conv::int(v) as i16)?.into_shared()),
            DType::I32 => Data::I32(map($a, |v| $conv::i32(v))?.into_shared()),
            DType::I64 => Data::I64(map($a, |v| $conv::int(v))?.into_shared()),
            DType::U8 => Data::U8(map($a, |v| $conv::int(v) as u8)?.into_shared()),
            DType::U16 => Data::U16(map($a, |v| $conv::int(v) as u16)?.into_shared()),
            DType::U32 => Data::U32(map($a, |v| $conv::int(v) as u32)?.into_shared()),
            DType::U64 => Data::U64(map($a, |v| $conv::u64(v))?.into_shared()),
            DType::Bool => Data::Bool(map($a, |v| $conv::bool(v))?.into_shared()),
            DType::C64 => Data::C64(map($a, |v| $conv::c64(v))?.into_shared()),
            DType::C128 => Data::C128(map($a, |v| $conv::c128(v))?.into_shared()),
        }
    };
}

/// Scalar conversions used by `cast`, with TF's (C++ `static_cast`) semantics:
/// integer to integer keeps the low bits (two's complement wrap); float to integer
/// truncates toward zero, to `int32` and `int64` saturating (as before), to the
/// other integers through `int64` and then wrapping, so `-1.0` becomes `255` as a
/// `uint8` on TF's x86 CPUs; to `float16` rounds through `float32`, as Eigen's
/// `half` does; complex to real drops the imaginary part; nonzero is `true`.
trait Conv: Copy {
    fn f64(self) -> f64;
    fn im(self) -> f64 {
        0.0
    }
    fn f32(self) -> f32 {
        self.f64() as f32
    }
    fn f16(self) -> f16 {
        f16::from_f32(self.f32())
    }
    /// To `bfloat16` through `float32`, rounding to nearest even (TF's `Cast`).
    fn bf16(self) -> bf16 {
        bf16::from_f32(self.f32())
    }
    /// The value as an `int64`: exact (or wrapped, `uint64`) for integers,
    /// truncated (saturating) for floats.
    fn int(self) -> i64 {
        self.f64() as i64
    }
    fn i32(self) -> i32 {
        self.f64() as i32
    }
    fn u64(self) -> u64 {
        let v = self.f64();
        if v >= 0.0 {
            v as u64
        } else {
            v as i64 as u64
        }
    }
    fn bool(self) -> bool {
        self.f64() != 0.0 || self.im() != 0.0
    }
    fn c64(self) -> Complex32 {
        Complex32::new(self.f32(), self.im() as f32)
    }
    fn c128(self) -> Complex64 {
        Complex64::new(self.f64(), self.im())
    }
}
impl Conv for f16 {
    fn f64(self) -> f64 {
        f32::from(self) as f64
    }
    fn f32(self) -> f32 {
        f32::from(self)
    }
    fn f16(self) -> f16 {
        self
    }
}
impl Conv for bf16 {
    fn f64(self) -> f64 {
        f32::from(self) as f64
    }
    fn f32(self) -> f32 {
        f32::from(self)
    }
    fn bf16(self) -> bf16 {
        self
    }
}
impl Conv for f32 {
    fn f64(self) -> f64 {
        self as f64
    }
    fn f32(self) -> f32 {
        self
    }
}
impl Conv for f64 {
    fn f64(self) -> f64 {
        self
    }
}
macro_rules! conv_int {
    ($($t:ty),*) => {$(
        impl Conv for $t {
            fn f64(self) -> f64 {
                self as f64
            }
            fn f32(self) -> f32 {
                self as f32
            }
            fn int(self) -> i64 {
                self as i64
            }
            fn i32(self) -> i32 {
                self as i32
            }
            fn u64(self) -> u64 {
                self as u64
            }
            fn bool(self) -> bool {
                self != 0
            }
        }
    )*};
}
conv_int!(i8, i16, i32, i64, u8, u16, u32, u64);
impl Conv for bool {
    fn f64(self) -> f64 {
        self as u8 as f64
    }
    fn int(self) -> i64 {
        self as i64
    }
    fn i32(self) -> i32 {
        self as i32
    }
    fn u64(self) -> u64 {
        self as u64
    }
    fn bool(self) -> bool {
        self
    }
}
impl Conv for Complex32 {
    fn f64(self) -> f64 {
        self.re as f64
    }
    fn f32(self) -> f32 {
        self.re
    }
    fn im(self) -> f64 {
        self.im as f64
    }
}
impl Conv for Complex64 {
    fn f64(self) -> f64 {
        self.re
    }
    fn im(self) -> f64 {
        self.im
    }
}
use Conv as C;

/// `data` converted to `dtype` (a copy; the same storage when the dtype matches),
/// recorded by no tape: `cast`'s kernel.
pub(crate) fn cast_data(data: &Data, dtype: DType) -> Result<Data> {
    if data.dtype() == dtype {
        return Ok(data.clone());
    }
    let from = data.dtype();
    if from == DType::Str {
        return Err(string_cast(from, dtype));
    }
    Ok(dispatch_num!("Cast", data, a => cast_from!(a, from, dtype, C)))
}

/// TF's error for a cast to or from `string` (`tf.strings.to_number` and
/// `tf.strings.as_string` convert instead).
fn string_cast(from: DType, to: DType) -> Error {
    Error::dtype(
        "Cast",
        format!(
            "Cast {} to {} is not supported",
            tf_short(from),
            tf_short(to)
        ),
    )
}

/// TF's C++ names in cast errors (`float` for float32, `double`, ...).
fn tf_short(d: DType) -> &'static str {
    match d {
        DType::F32 => "float",
        DType::F64 => "double",
        d => d.name(),
    }
}

/// A narrow dtype's data in its compute dtype (see [`DType::compute_dtype`]).
pub(crate) fn widen(data: &Data) -> Result<Data> {
    cast_data(data, data.dtype().compute_dtype())
}

/// `run` on `data` widened to its compute dtype, the result narrowed back: the narrow
/// dtypes' path of `map_dtypes!`, kept out of line (cold) so that the common dtypes'
/// code in every op stays small and together.
#[cold]
#[inline(never)]
pub(crate) fn through_wide(
    data: &Data,
    run: &mut dyn FnMut(&Data) -> Result<Data>,
) -> Result<Data> {
    narrow(run(&widen(data)?)?, data.dtype())
}

/// The two-operand [`through_wide`] of `map_pair!` (`narrow_back`) and
/// `map_pair_to_bool!` (bool results stay bool).
#[cold]
#[inline(never)]
pub(crate) fn through_wide2(
    x: &Data,
    y: &Data,
    narrow_back: bool,
    run: &mut dyn FnMut(&Data, &Data) -> Result<Data>,
) -> Result<Data> {
    let out = run(&widen(x)?, &widen(y)?)?;
    if narrow_back {
        narrow(out, x.dtype())
    } else {
        Ok(out)
    }
}

/// A result computed in a wider dtype, brought back to `dtype` (rounded for
/// floats, wrapped for integers); unchanged when it already has that dtype.
pub(crate) fn narrow(data: Data, dtype: DType) -> Result<Data> {
    if data.dtype() == dtype {
        Ok(data)
    } else {
        cast_data(&data, dtype)
    }
}

/// Converts to another dtype. TF equivalent: `tf.cast`. Differentiable between
/// real/complex float dtypes (the gradient is cast back); `None` for integers.
pub fn cast(x: &Tensor, dtype: DType) -> Result<Tensor> {
    if x.dtype() == dtype {
        return Ok(x.clone());
    }
    let out = Tensor::new(cast_data(x.data(), dtype)?);
    if x.dtype().is_differentiable() && dtype.is_differentiable() {
        unary_out(Cast, x, out)
    } else {
        if crate::tape::provenance::enabled() {
            crate::tape::provenance::note("Cast", &[x.id()], &[&out]);
        }
        Ok(out)
    }
}
struct Cast;
impl Op for Cast {
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "Cast"
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        Ok(grads![Some(cast(&dys[0], cx.input_dtype(0))?)])
    }
}

/// The computation of a traced `gt.range`: its inputs are `[start,] limit [, delta]`
/// (`has_start`, `has_delta` say which are there), read as Python numbers.
pub(crate) fn range_node(
    has_start: bool,
    has_delta: bool,
    dt: DType,
) -> impl Fn(&[Tensor]) -> Result<Tensor> + Send + Sync + 'static {
    move |xs: &[Tensor]| {
        let mut it = xs.iter();
        let start = if has_start { it.next() } else { None };
        let limit = it.next();
        let delta = if has_delta { it.next() } else { None };
        // Integer arguments for an integer range: exact in i64 (f64 is not beyond 2^53).
        if dt.is_integer() {
            let int = |t: Option<&Tensor>, default: i64| match t {
                Some(t) => t.to_i64_scalar(),
                None => Some(default),
            };
            if let (Some(s), Some(l), Some(d)) = (int(start, 0), int(limit, 0), int(delta, 1)) {
                return range_int(s, l, d, dt);
            }
        }
        let float = |t: Option<&Tensor>, default: f64| match t {
            Some(t) => t.to_f64_scalar(),
            None => Ok(default),
        };
        let (s, l, d) = (float(start, 0.0)?, float(limit, 0.0)?, float(delta, 1.0)?);
        range(s, l, d, dt)
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
        OpDef::new("Fill", 1, &["dims"], fill),
        OpDef::new("Fill", 2, &[], dynamic_fill).named("DynamicFill"),
        OpDef::new("Zeros", 1, &["dtype"], dynamic_zeros).named("DynamicZeros"),
        OpDef::new("Ones", 1, &["dtype"], dynamic_ones).named("DynamicOnes"),
        OpDef::new(
            "Eye",
            0,
            &["num_rows", "num_columns", "batch_shape", "dtype"],
            eye,
        ),
        OpDef::new("LinSpace", 2, &["num", "dtype"], linspace),
        OpDef::new("Range", 1, &["has_start", "has_delta", "dtype"], range).inputs(1, 3),
    ];

    fn fill(a: &Attrs, _: usize) -> Result<Forward> {
        let dims: Vec<usize> = get("Fill", a, "dims")?;
        crate::size::num_elements("Fill", &dims)?;
        Ok(one_out(move |xs| ops::fill(&dims, &xs[0])))
    }

    fn dynamic_fill(_: &Attrs, _: usize) -> Result<Forward> {
        Ok(one_out(|xs| ops::fill(&ops::udims_of(&xs[0])?, &xs[1])))
    }

    fn dynamic_zeros(a: &Attrs, _: usize) -> Result<Forward> {
        let dt = get_dtype("Zeros", a, "dtype")?;
        Ok(one_out(move |xs| ops::zeros(&ops::udims_of(&xs[0])?, dt)))
    }

    fn dynamic_ones(a: &Attrs, _: usize) -> Result<Forward> {
        let dt = get_dtype("Ones", a, "dtype")?;
        Ok(one_out(move |xs| ops::ones(&ops::udims_of(&xs[0])?, dt)))
    }

    fn eye(a: &Attrs, _: usize) -> Result<Forward> {
        let op = "Eye";
        let (rows, cols): (usize, Option<usize>) =
            (get(op, a, "num_rows")?, get(op, a, "num_columns")?);
        let batch: Vec<usize> = get(op, a, "batch_shape")?;
        let mut all = batch.clone();
        all.extend([rows, cols.unwrap_or(rows)]);
        crate::size::num_elements(op, &all)?;
        let dt = get_dtype(op, a, "dtype")?;
        Ok(one_out(move |_| ops::eye(rows, cols, &batch, dt)))
    }

    fn linspace(a: &Attrs, _: usize) -> Result<Forward> {
        let num: usize = get("LinSpace", a, "num")?;
        crate::size::num_elements("LinSpace", &[num])?;
        let dt = get_dtype("LinSpace", a, "dtype")?;
        Ok(one_out(move |xs| {
            ops::linspace(xs[0].to_f64_scalar()?, xs[1].to_f64_scalar()?, num, dt)
        }))
    }

    fn range(a: &Attrs, n: usize) -> Result<Forward> {
        let op = "Range";
        let (s, d): (bool, bool) = (get(op, a, "has_start")?, get(op, a, "has_delta")?);
        ensure(
            n == 1 + usize::from(s) + usize::from(d),
            op,
            "inputs do not fit has_start and has_delta",
        )?;
        let dt = get_dtype(op, a, "dtype")?;
        Ok(one_out(ops::range_node(s, d, dt)))
    }
}

/// The Python functions of this family: bindings and where they appear (see
/// `src/ops/README.md`).
#[cfg(feature = "python")]
pub(super) mod python {
    use crate::python::binding::*;

    fn dtype_opt(d: Option<&Bound<'_, PyAny>>) -> PyResult<Option<DType>> {
        match d {
            Some(d) if !d.is_none() => Ok(Some(to_dtype(d)?)),
            _ => Ok(None),
        }
    }

    /// A new tensor from a Python value, numpy array or tensor; ``shape`` reshapes or
    /// broadcasts a scalar. Never recorded by tapes. TF equivalent: ``tf.constant``.
    ///
    /// >>> print(gt.constant([[1, 2], [3, 4]]))
    /// gt.Tensor(
    /// [[1 2]
    ///  [3 4]], shape=(2, 2), dtype=int32)
    /// >>> print(gt.constant(0.5, shape=[2], dtype=gt.float64))
    /// gt.Tensor([0.5 0.5], shape=(2,), dtype=float64)
    #[pyfunction]
    #[pyo3(signature = (value, dtype=None, shape=None, name=None))]
    fn constant(
        py: Python<'_>,
        value: &Bound<'_, PyAny>,
        dtype: Option<&Bound<'_, PyAny>>,
        shape: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let dt = dtype_opt(dtype)?;
        let (t, dims) = crate::tape::stack::suspended(|| -> PyResult<_> {
            let t = match as_tensor(value) {
                Some(t) => t,
                None => convert_value(value, dt)?,
            };
            let dims = match shape {
                Some(s) if !s.is_none() => Some(dims_arg(s)?),
                _ => None,
            };
            Ok((t, dims))
        })?;
        let key = || format!("{dt:?},{dims:?}");
        let owned = dims.clone();
        let t = call(py, "Const", key, &t, move |t| {
            crate::tape::stack::suspended(|| {
                let t = match dt {
                    Some(d) if d != t.dtype() => ops::cast(t, d)?,
                    _ => t.fresh(),
                };
                Ok(match &owned {
                    Some(dims) if t.size() == 1 => {
                        ops::broadcast_to(&ops::reshape(&t, &[])?, dims)?
                    }
                    Some(dims) => ops::reshape(&t, dims)?,
                    None => t,
                })
            })
        })?;
        Ok(t.into())
    }

    /// ``value`` as a tensor: tensors pass through unchanged, other values are converted
    /// (``dtype_hint`` is used when ``dtype`` is not given). TF equivalent:
    /// ``tf.convert_to_tensor``.
    ///
    /// >>> print(gt.convert_to_tensor([1.0, 2.0]))
    /// gt.Tensor([1. 2.], shape=(2,), dtype=float32)
    /// >>> x = gt.constant(1.0)
    /// >>> gt.convert_to_tensor(x) is x
    /// True
    #[pyfunction]
    #[pyo3(signature = (value, dtype=None, dtype_hint=None, name=None))]
    fn convert_to_tensor(
        py: Python<'_>,
        value: &Bound<'_, PyAny>,
        dtype: Option<&Bound<'_, PyAny>>,
        dtype_hint: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let _ = name;
        let dt = dtype_opt(dtype)?;
        let hint = dtype_opt(dtype_hint)?;
        if let Some(t) = as_tensor(value) {
            if let Some(d) = dt {
                if d != t.dtype() {
                    return Err(pyo3::exceptions::PyValueError::new_err(format!(
                        "Tensor conversion requested dtype {} for Tensor with dtype {}",
                        d.name(),
                        t.dtype().name()
                    )));
                }
            }
            // As TF: a tensor is returned as it is (the same object); a variable is
            // read.
            if value.is_instance_of::<PyTensor>() {
                return Ok(value.clone().unbind());
            }
            return Ok(PyTensor::from(t).into_pyobject(py)?.into_any().unbind());
        }
        Ok(PyTensor::from(convert_value(value, dt.or(hint))?)
            .into_pyobject(py)?
            .into_any()
            .unbind())
    }

    /// ``x`` converted to ``dtype`` (floats to integers truncate toward zero). TF equivalent:
    /// ``tf.cast``.
    ///
    /// >>> print(gt.cast(gt.constant([1.7, -1.7]), gt.int32))
    /// gt.Tensor([ 1 -1], shape=(2,), dtype=int32)
    #[pyfunction]
    #[pyo3(signature = (x, dtype, name=None))]
    fn cast(
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        dtype: &Bound<'_, PyAny>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let d = to_dtype(dtype)?;
        let t = to_tensor(x, None)?;
        let f = move |t: &Tensor| ops::cast(t, d);
        Ok(call(py, "Cast", || format!("{d:?}"), &t, f)?.into())
    }

    /// A tensor of zeros (float32 by default). TF equivalent: ``tf.zeros``.
    ///
    /// >>> print(gt.zeros([2, 3]))
    /// gt.Tensor(
    /// [[0. 0. 0.]
    ///  [0. 0. 0.]], shape=(2, 3), dtype=float32)
    #[pyfunction]
    #[pyo3(signature = (shape, dtype=None, name=None))]
    fn zeros(
        py: Python<'_>,
        shape: &Bound<'_, PyAny>,
        dtype: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let dt = dtype_arg(dtype, DType::F32)?;
        if let Some(st) = crate::python::args::dynamic_shape(py, shape)? {
            let f = move |s: &Tensor| ops::zeros(&crate::python::args::udims_of(s)?, dt);
            return Ok(call(py, "Zeros", || format!("{dt:?}"), &st, f)?.into());
        }
        let dims = dims_arg(shape)?;
        let key = || format!("{dims:?},{dt:?}");
        let owned = dims.clone();
        Ok(call_n(py, "Zeros", key, &[], move |_| ops::zeros(&owned, dt))?.into())
    }

    /// A tensor of ones (float32 by default). TF equivalent: ``tf.ones``.
    ///
    /// >>> print(gt.ones([2], dtype=gt.int32))
    /// gt.Tensor([1 1], shape=(2,), dtype=int32)
    #[pyfunction]
    #[pyo3(signature = (shape, dtype=None, name=None))]
    fn ones(
        py: Python<'_>,
        shape: &Bound<'_, PyAny>,
        dtype: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let dt = dtype_arg(dtype, DType::F32)?;
        if let Some(st) = crate::python::args::dynamic_shape(py, shape)? {
            let f = move |s: &Tensor| ops::ones(&crate::python::args::udims_of(s)?, dt);
            return Ok(call(py, "Ones", || format!("{dt:?}"), &st, f)?.into());
        }
        let dims = dims_arg(shape)?;
        let key = || format!("{dims:?},{dt:?}");
        let owned = dims.clone();
        Ok(call_n(py, "Ones", key, &[], move |_| ops::ones(&owned, dt))?.into())
    }

    /// Zeros with the shape (and by default the dtype) of ``input``. TF equivalent:
    /// ``tf.zeros_like``.
    ///
    /// >>> print(gt.zeros_like(gt.constant([1, 2])))
    /// gt.Tensor([0 0], shape=(2,), dtype=int32)
    #[pyfunction]
    #[pyo3(signature = (input, dtype=None, name=None))]
    fn zeros_like(
        py: Python<'_>,
        input: &Bound<'_, PyAny>,
        dtype: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let t = to_tensor(input, None)?;
        let dt = dtype_arg(dtype, t.dtype())?;
        let f = move |t: &Tensor| ops::zeros(t.shape(), dt);
        Ok(call(py, "ZerosLike", || format!("{dt:?}"), &t, f)?.into())
    }

    /// Ones with the shape (and by default the dtype) of ``input``. TF equivalent:
    /// ``tf.ones_like``.
    ///
    /// >>> print(gt.ones_like(gt.constant([1.0, 2.0])))
    /// gt.Tensor([1. 1.], shape=(2,), dtype=float32)
    #[pyfunction]
    #[pyo3(signature = (input, dtype=None, name=None))]
    fn ones_like(
        py: Python<'_>,
        input: &Bound<'_, PyAny>,
        dtype: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let t = to_tensor(input, None)?;
        let dt = dtype_arg(dtype, t.dtype())?;
        let f = move |t: &Tensor| ops::ones(t.shape(), dt);
        Ok(call(py, "OnesLike", || format!("{dt:?}"), &t, f)?.into())
    }

    /// A tensor of shape ``dims`` filled with the scalar ``value`` (its dtype). TF equivalent:
    /// ``tf.fill``.
    ///
    /// >>> print(gt.fill([2, 2], 7))
    /// gt.Tensor(
    /// [[7 7]
    ///  [7 7]], shape=(2, 2), dtype=int32)
    #[pyfunction]
    #[pyo3(signature = (dims, value, name=None))]
    fn fill(
        py: Python<'_>,
        dims: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let v = to_tensor(value, None)?;
        if let Some(st) = crate::python::args::dynamic_shape(py, dims)? {
            let f = |s: &Tensor, v: &Tensor| ops::fill(&crate::python::args::udims_of(s)?, v);
            return Ok(call2(py, "Fill", String::new, &st, &v, f)?.into());
        }
        let dims = dims_arg(dims)?;
        let key = || format!("{dims:?}");
        let owned = dims.clone();
        Ok(call(py, "Fill", key, &v, move |v| ops::fill(&owned, v))?.into())
    }

    /// An identity matrix (or a batch of them), float32 by default. TF equivalent: ``tf.eye``.
    ///
    /// >>> print(gt.eye(2))
    /// gt.Tensor(
    /// [[1. 0.]
    ///  [0. 1.]], shape=(2, 2), dtype=float32)
    /// >>> print(gt.eye(2, 3).shape)
    /// (2, 3)
    #[pyfunction]
    #[pyo3(signature = (num_rows, num_columns=None, batch_shape=None, dtype=None, name=None))]
    fn eye(
        py: Python<'_>,
        num_rows: usize,
        num_columns: Option<usize>,
        batch_shape: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let batch = match batch_shape {
            Some(b) if !b.is_none() => dims_arg(b)?,
            _ => vec![],
        };
        let dt = dtype_arg(dtype, DType::F32)?;
        let key = || format!("{num_rows},{num_columns:?},{batch:?},{dt:?}");
        let owned = batch.clone();
        let f = move |_: &[Tensor]| ops::eye(num_rows, num_columns, &owned, dt);
        Ok(call_n(py, "Eye", key, &[], f)?.into())
    }

    /// ``num`` evenly spaced values from ``start`` to ``stop`` inclusive; the dtype follows
    /// ``start`` (float32 for Python floats, float64 for integers, as TF). TF equivalent:
    /// ``tf.linspace``.
    ///
    /// >>> print(gt.linspace(0.0, 1.0, 5))
    /// gt.Tensor([0.   0.25 0.5  0.75 1.  ], shape=(5,), dtype=float32)
    #[pyfunction]
    #[pyo3(signature = (start, stop, num, name=None, axis=0))]
    fn linspace(
        py: Python<'_>,
        start: &Bound<'_, PyAny>,
        stop: &Bound<'_, PyAny>,
        num: usize,
        name: Option<&Bound<'_, PyAny>>,
        axis: isize,
    ) -> PyResult<PyTensor> {
        let _ = (name, axis);
        let s = to_tensor(start, None)?;
        // TF: an integer start (a Python int included) gives float64.
        let dt = if s.dtype().is_floating() {
            s.dtype()
        } else {
            DType::F64
        };
        let e = to_tensor(stop, Some(dt))?;
        let f = move |s: &Tensor, e: &Tensor| {
            ops::linspace(s.to_f64_scalar()?, e.to_f64_scalar()?, num, dt)
        };
        Ok(call2(py, "LinSpace", || format!("{num},{dt:?}"), &s, &e, f)?.into())
    }

    /// Values from ``start`` (0 if only one argument) up to ``limit`` exclusive in steps of
    /// ``delta``; int32 for int arguments, float32 for floats. TF equivalent: ``tf.range``.
    ///
    /// >>> print(gt.range(5))
    /// gt.Tensor([0 1 2 3 4], shape=(5,), dtype=int32)
    /// >>> print(gt.range(1.0, 2.0, 0.25))
    /// gt.Tensor([1.   1.25 1.5  1.75], shape=(4,), dtype=float32)
    #[pyfunction]
    #[pyo3(signature = (start, limit=None, delta=None, dtype=None, name=None))]
    fn range(
        py: Python<'_>,
        start: &Bound<'_, PyAny>,
        limit: Option<&Bound<'_, PyAny>>,
        delta: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        // TF converts Python numbers to a float `dtype` directly: 3 / 800 as float64 is
        // not its float32 rounding (the length of range(-2, 1, 3 / 800) is 800, not 801).
        let hint = match dtype.filter(|d| !d.is_none()) {
            Some(d) => Some(dtype_arg(Some(d), DType::F32)?).filter(|d| d.is_floating()),
            None => None,
        };
        let conv = |x: &Bound<'_, PyAny>| {
            let number = x.is_instance_of::<pyo3::types::PyFloat>()
                || x.is_instance_of::<pyo3::types::PyInt>();
            to_tensor(x, if number { hint } else { None })
        };
        // TF: `range(limit)` and `range(limit, delta=d)` start at 0.
        let first = conv(start)?;
        let (start, limit) = match limit.filter(|l| !l.is_none()) {
            Some(l) => (Some(first), conv(l)?),
            None => (None, first),
        };
        let delta = match delta.filter(|d| !d.is_none()) {
            Some(d) => Some(conv(d)?),
            None => None,
        };
        let args: Vec<&crate::Tensor> = start.iter().chain([&limit]).chain(delta.iter()).collect();
        let inferred = if args.iter().any(|t| t.dtype().is_floating()) {
            args.iter()
                .map(|t| t.dtype())
                .find(|d| d.is_floating())
                .unwrap_or(DType::F32)
        } else if args.iter().any(|t| t.dtype() == DType::I64) {
            DType::I64
        } else {
            DType::I32
        };
        let dt = dtype_arg(dtype, inferred)?;
        let (has_start, has_delta) = (start.is_some(), delta.is_some());
        let xs: Vec<Tensor> = start.into_iter().chain([limit]).chain(delta).collect();
        let f = ops::range_node(has_start, has_delta, dt);
        let key = || format!("{has_start},{has_delta},{dt:?}");
        Ok(call_n(py, "Range", key, &xs, f)?.into())
    }

    expose! {
        fn constant in [gt]: "(value: TensorLike, dtype: DTypeLike | None = None, shape: ShapeLike | None = None, name: str | None = None) -> Tensor";
        fn convert_to_tensor in [gt]: "(value: TensorLike, dtype: DTypeLike | None = None, dtype_hint: DTypeLike | None = None, name: str | None = None) -> Tensor";
        fn cast in [gt]: "(x: TensorLike, dtype: DTypeLike, name: str | None = None) -> Tensor";
        fn zeros in [gt]: "(shape: ShapeLike, dtype: DTypeLike | None = None, name: str | None = None) -> Tensor";
        fn ones in [gt]: "(shape: ShapeLike, dtype: DTypeLike | None = None, name: str | None = None) -> Tensor";
        fn zeros_like in [gt]: "(input: TensorLike, dtype: DTypeLike | None = None, name: str | None = None) -> Tensor";
        fn ones_like in [gt]: "(input: TensorLike, dtype: DTypeLike | None = None, name: str | None = None) -> Tensor";
        fn fill in [gt]: "(dims: ShapeLike, value: TensorLike, name: str | None = None) -> Tensor";
        fn eye in [gt, linalg]: "(num_rows: int, num_columns: int | None = None, batch_shape: ShapeLike | None = None, dtype: DTypeLike | None = None, name: str | None = None) -> Tensor";
        fn linspace in [gt]: "(start: TensorLike, stop: TensorLike, num: int | None, name: str | None = None, axis: int = 0) -> Tensor";
        fn range in [gt]: "(start: TensorLike, limit: TensorLike | None = None, delta: TensorLike | None = None, dtype: DTypeLike | None = None, name: str | None = None) -> Tensor";
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_too_large_to_hold_are_resource_exhausted() {
        let exhausted = |r: Result<Tensor>| matches!(r, Err(Error::ResourceExhausted { .. }));
        assert!(exhausted(zeros(&[1 << 40], DType::F32)));
        assert!(exhausted(eye(1 << 31, None, &[], DType::F32)));
        assert!(exhausted(linspace(0.0, 1.0, usize::MAX >> 1, DType::F32)));
        assert!(exhausted(range(0.0, 1e13, 1.0, DType::F32)));
        assert!(exhausted(range_int(0, i64::MAX, 1, DType::I64)));
        // Element counts past isize are TF's overflow error instead.
        assert!(matches!(
            zeros(&[1 << 32, 1 << 32], DType::Bool),
            Err(Error::InvalidArgument { .. })
        ));
        // Empty results with huge dimensions need no memory.
        assert_eq!(
            zeros(&[0, 1 << 62], DType::F64).unwrap().shape(),
            &[0, 1 << 62]
        );
        assert_eq!(eye(0, Some(1 << 40), &[], DType::F32).unwrap().size(), 0);
    }

    #[test]
    fn range_follows_tf() {
        for bad in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e300] {
            assert!(matches!(
                range(0.0, bad, 1.0, DType::F32),
                Err(Error::InvalidArgument { .. })
            ));
        }
        assert!(range(0.0, 1.0, 0.0, DType::F32).is_err());
        assert!(range(1.0, 0.0, 1.0, DType::F32).is_err());
        assert!(range(0.0, 1.0, -1.0, DType::F32).is_err());
        let r = range_int(i64::MAX - 3, i64::MAX, 2, DType::I64).unwrap();
        assert_eq!(r.to_vec::<i64>().unwrap(), vec![i64::MAX - 3, i64::MAX - 1]);
        let r = range_int(5, -5, -4, DType::I32).unwrap();
        assert_eq!(r.to_vec::<i32>().unwrap(), vec![5, 1, -3]);
        let f = range(1.0, 2.0, 0.25, DType::F64).unwrap();
        assert_eq!(f.to_vec::<f64>().unwrap(), vec![1.0, 1.25, 1.5, 1.75]);
        let e = eye(2, Some(3), &[2], DType::I32).unwrap();
        assert_eq!(
            e.to_vec::<i32>().unwrap(),
            vec![1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0]
        );
    }

    #[test]
    fn cast_follows_static_cast_semantics() {
        let x = Tensor::from_vec(vec![-1.5f32, -1.0, 2.7, 300.0], &[4]).unwrap();
        let u8s = cast(&x, DType::U8).unwrap().to_vec::<u8>().unwrap();
        assert_eq!(u8s, vec![255, 255, 2, 44]);
        let u64s = cast(&x, DType::U64).unwrap().to_vec::<u64>().unwrap();
        assert_eq!(u64s, vec![u64::MAX, u64::MAX, 2, 300]);
        let i = Tensor::from_vec(vec![-1i64, 256, (1 << 40) + 5], &[3]).unwrap();
        let w = cast(&i, DType::U8).unwrap().to_vec::<u8>().unwrap();
        assert_eq!(w, vec![255, 0, 5]);
        let big = Tensor::from_vec(vec![u64::MAX], &[1]).unwrap();
        assert_eq!(
            cast(&big, DType::I64).unwrap().to_vec::<i64>().unwrap(),
            vec![-1]
        );
        assert_eq!(
            cast(&big, DType::F64).unwrap().to_vec::<f64>().unwrap(),
            vec![u64::MAX as f64]
        );
        // float16 rounds to nearest even: 2.7 -> 2.69921875.
        let h = cast(&x, DType::F16).unwrap().to_vec::<f16>().unwrap();
        assert_eq!(f32::from(h[2]), 2.699_218_8);
    }

    #[test]
    fn widen_and_narrow_round_trip_every_dtype() {
        // Every numeric dtype (strings are not numbers).
        for dt in DType::ALL.into_iter().filter(|d| !d.is_string()) {
            let t = crate::tensor::full(&[3], 5.0, dt).unwrap();
            let w = widen(t.data()).unwrap();
            assert_eq!(w.dtype(), dt.compute_dtype());
            let back = narrow(w, dt).unwrap();
            assert_eq!(back.dtype(), dt);
            let f = cast_data(&back, DType::F64).unwrap();
            let want = if dt == DType::Bool { 1.0 } else { 5.0 };
            assert_eq!(Tensor::new(f).to_vec::<f64>().unwrap(), vec![want; 3]);
        }
    }

    #[test]
    fn bfloat16_rounds_to_nearest_even_and_computes_in_f32() {
        let x = Tensor::from_vec(
            vec![1.0f32 + 1.0 / 256.0, 1.0 + 3.0 / 256.0, 2.7, -0.0],
            &[4],
        )
        .unwrap();
        let b = cast(&x, DType::BF16).unwrap();
        let v: Vec<f32> = b
            .to_vec::<half::bf16>()
            .unwrap()
            .into_iter()
            .map(f32::from)
            .collect();
        assert_eq!(v, vec![1.0, 1.015_625, 2.703_125, -0.0]);
        // 2.703125 * 2.703125 = 7.306640625 in f32, rounded once: 7.3125.
        let sq = crate::ops::multiply(&b, &b).unwrap();
        assert_eq!(sq.dtype(), DType::BF16);
        assert_eq!(f32::from(sq.to_vec::<half::bf16>().unwrap()[2]), 7.312_5);
        let s = crate::ops::reduce_sum(&b, None, false).unwrap();
        assert_eq!(s.dtype(), DType::BF16);
        // Strings refuse casts both ways, with TF's words.
        let t = Tensor::from_vec(vec![crate::dtype::TStr::new(b"a")], &[1]).unwrap();
        let e = cast(&t, DType::F32).unwrap_err().to_string();
        assert!(e.contains("Cast string to float is not supported"), "{e}");
        assert!(cast(&x, DType::Str).is_err());
    }

    #[test]
    fn narrow_dtypes_compute_wide_and_wrap_back() {
        let x = Tensor::from_vec(vec![250u8, 3], &[2]).unwrap();
        let y = Tensor::from_vec(vec![10u8, 4], &[2]).unwrap();
        let s = crate::ops::add(&x, &y).unwrap();
        assert_eq!(s.to_vec::<u8>().unwrap(), vec![4, 7]);
        let m = crate::ops::multiply(&x, &y).unwrap();
        assert_eq!(m.to_vec::<u8>().unwrap(), vec![196, 12]);
        let d = crate::ops::subtract(&y, &x).unwrap();
        assert_eq!(d.to_vec::<u8>().unwrap(), vec![16, 1]);
        // Neg has no unsigned kernel in TF.
        assert!(crate::ops::neg(&x).is_err());
        let h = Tensor::from_vec(vec![f16::from_f32(0.1), f16::from_f32(0.2)], &[2]).unwrap();
        let r = crate::ops::add(&h, &h).unwrap().to_vec::<f16>().unwrap();
        assert_eq!(
            r,
            vec![
                f16::from_f32(f32::from(h.to_vec::<f16>().unwrap()[0]) * 2.0),
                f16::from_f32(f32::from(h.to_vec::<f16>().unwrap()[1]) * 2.0)
            ]
        );
    }
}
