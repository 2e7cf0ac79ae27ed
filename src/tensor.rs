//! Immutable tensors: shared ndarray storage plus an identity the tapes track.
//!
//! A [`Tensor`] is cheap to clone (reference-counted storage). Every tensor made by an
//! op gets a fresh [`TensorId`]; tapes know tensors only by id, so a tensor can be
//! dropped by its owner while a tape still holds what a gradient needs of it.

use std::sync::atomic::{AtomicU64, Ordering};

use half::{bf16, f16};
use ndarray::{ArcArray, ArrayD, IxDyn};
use num_complex::{Complex32, Complex64};

use crate::dtype::{DType, Element, TStr};
use crate::error::{Error, Result};

/// Identity of a tensor or variable as seen by tapes.
pub type TensorId = u64;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Ids a thread hands out without touching the shared counter (threads making tensors
/// at the same time would otherwise contend on its cache line for every op).
const ID_BLOCK: u64 = 1 << 12;

thread_local! {
    /// This thread's block of ids: the next one and the end (exclusive).
    static IDS: std::cell::Cell<(TensorId, TensorId)> = const { std::cell::Cell::new((0, 0)) };
}

/// A fresh, process-unique id. Ids grow on each thread (not across threads).
pub(crate) fn fresh_id() -> TensorId {
    IDS.with(|c| {
        let (next, end) = c.get();
        if next < end {
            c.set((next + 1, end));
            return next;
        }
        let start = NEXT_ID.fetch_add(ID_BLOCK, Ordering::Relaxed);
        c.set((start + 1, start + ID_BLOCK));
        start
    })
}

/// A fresh id from the shared counter itself: ids made this way grow in the order they
/// are made across all threads (variables: `watched_variables` lists them in order of
/// construction).
pub(crate) fn ordered_id() -> TensorId {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// Starts a new block of ids on this thread and returns its first id: every tensor this
/// thread makes from now on has an id at least that large (a trace's start line).
pub(crate) fn next_id() -> TensorId {
    IDS.with(|c| {
        let start = NEXT_ID.fetch_add(ID_BLOCK, Ordering::Relaxed);
        c.set((start, start + ID_BLOCK));
        start
    })
}

/// Typed storage of a tensor: one variant per [`DType`], named alike.
#[derive(Clone, Debug)]
pub enum Data {
    F16(ArcArray<f16, IxDyn>),
    F32(ArcArray<f32, IxDyn>),
    F64(ArcArray<f64, IxDyn>),
    I8(ArcArray<i8, IxDyn>),
    I16(ArcArray<i16, IxDyn>),
    I32(ArcArray<i32, IxDyn>),
    I64(ArcArray<i64, IxDyn>),
    U8(ArcArray<u8, IxDyn>),
    U16(ArcArray<u16, IxDyn>),
    U32(ArcArray<u32, IxDyn>),
    U64(ArcArray<u64, IxDyn>),
    Bool(ArcArray<bool, IxDyn>),
    C64(ArcArray<Complex32, IxDyn>),
    C128(ArcArray<Complex64, IxDyn>),
    BF16(ArcArray<bf16, IxDyn>),
    Str(ArcArray<TStr, IxDyn>),
}

impl Data {
    pub fn dtype(&self) -> DType {
        match self {
            Data::F16(_) => DType::F16,
            Data::F32(_) => DType::F32,
            Data::F64(_) => DType::F64,
            Data::I8(_) => DType::I8,
            Data::I16(_) => DType::I16,
            Data::I32(_) => DType::I32,
            Data::I64(_) => DType::I64,
            Data::U8(_) => DType::U8,
            Data::U16(_) => DType::U16,
            Data::U32(_) => DType::U32,
            Data::U64(_) => DType::U64,
            Data::Bool(_) => DType::Bool,
            Data::C64(_) => DType::C64,
            Data::C128(_) => DType::C128,
            Data::BF16(_) => DType::BF16,
            Data::Str(_) => DType::Str,
        }
    }
    pub fn shape(&self) -> &[usize] {
        dispatch!(self, a => a.shape())
    }
    pub fn len(&self) -> usize {
        dispatch!(self, a => a.len())
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An immutable n-dimensional value. TF equivalent: `tf.Tensor` (eager).
///
/// Cloning is cheap (the storage is shared) and keeps the tensor's identity, which is
/// what tapes watch.
///
/// ```
/// use gradtape::{DType, Tensor};
///
/// let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
/// assert_eq!(t.shape(), &[2, 3]);
/// assert_eq!(t.dtype(), DType::F32);
/// assert_eq!(t.size(), 6);
/// assert_eq!(t.to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
/// // The element type must match the dtype: no silent conversion.
/// assert!(t.to_vec::<f64>().is_err());
/// // A shape that the values cannot fill is an error, not a panic.
/// assert!(Tensor::from_vec(vec![1i32, 2, 3], &[2, 2]).is_err());
/// assert_eq!(Tensor::scalar(7i64).shape(), &[] as &[usize]);
/// # Ok::<(), gradtape::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Tensor {
    id: TensorId,
    data: Data,
}

impl Tensor {
    /// Wraps storage as a new tensor with a fresh id.
    pub fn new(data: Data) -> Tensor {
        Tensor {
            id: fresh_id(),
            data,
        }
    }

    /// A tensor with a given id: a variable used as a gradient target is its handle.
    pub(crate) fn with_id(id: TensorId, data: Data) -> Tensor {
        Tensor { id, data }
    }

    /// From an owned ndarray of any element type.
    pub fn from_array<T: Element>(a: ArrayD<T>) -> Tensor {
        Tensor::new(T::wrap(a.into_shared()))
    }

    /// From a flat vector in row-major order and a shape.
    pub fn from_vec<T: Element>(v: Vec<T>, shape: &[usize]) -> Result<Tensor> {
        let n = crate::size::num_elements("Const", shape)?;
        if n != v.len() {
            return Err(Error::invalid(
                "Const",
                format!(
                    "{} values cannot fill a tensor of shape {:?} ({} elements)",
                    v.len(),
                    shape,
                    n
                ),
            ));
        }
        Ok(Tensor::from_array(crate::size::shaped("Const", shape, v)?))
    }

    /// A rank-0 tensor.
    pub fn scalar<T: Element>(v: T) -> Tensor {
        Tensor::from_array(ArrayD::from_elem(IxDyn(&[]), v))
    }

    pub fn id(&self) -> TensorId {
        self.id
    }
    pub fn data(&self) -> &Data {
        &self.data
    }
    pub fn into_data(self) -> Data {
        self.data
    }
    pub fn dtype(&self) -> DType {
        self.data.dtype()
    }
    pub fn shape(&self) -> &[usize] {
        self.data.shape()
    }
    pub fn ndim(&self) -> usize {
        self.shape().len()
    }
    /// Number of elements.
    pub fn size(&self) -> usize {
        self.data.len()
    }

    /// The typed array, if the dtype is `T`'s.
    pub fn array<T: Element>(&self) -> Result<&ArcArray<T, IxDyn>> {
        T::unwrap(&self.data).ok_or_else(|| {
            Error::dtype(
                "Tensor",
                format!(
                    "expected a {} tensor, got {}",
                    T::DTYPE.name(),
                    self.dtype().name()
                ),
            )
        })
    }

    /// The elements in row-major order.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        let a = self.array::<T>()?;
        crate::size::try_collect("Tensor", a.len(), a.iter().copied())
    }

    /// `InvalidArgument` unless the tensor has exactly one element.
    fn check_one_element(&self) -> Result<()> {
        if self.size() != 1 {
            return Err(Error::invalid(
                "Tensor",
                format!(
                    "only a tensor with one element converts to a scalar, not shape {:?}",
                    self.shape()
                ),
            ));
        }
        Ok(())
    }

    /// The single element of a tensor with one element, converted to `f64`
    /// (complex: the real part; bool: 0/1).
    pub fn to_f64_scalar(&self) -> Result<f64> {
        self.check_one_element()?;
        let one = || Error::Internal("a tensor of size 1 has an element".into());
        macro_rules! first {
            ($a:expr) => {
                *$a.iter().next().ok_or_else(one)?
            };
        }
        Ok(match &self.data {
            Data::F16(a) => f32::from(first!(a)) as f64,
            Data::F32(a) => first!(a) as f64,
            Data::F64(a) => first!(a),
            Data::I8(a) => first!(a) as f64,
            Data::I16(a) => first!(a) as f64,
            Data::I32(a) => first!(a) as f64,
            Data::I64(a) => first!(a) as f64,
            Data::U8(a) => first!(a) as f64,
            Data::U16(a) => first!(a) as f64,
            Data::U32(a) => first!(a) as f64,
            Data::U64(a) => first!(a) as f64,
            Data::Bool(a) => first!(a) as u8 as f64,
            Data::C64(a) => first!(a).re as f64,
            Data::C128(a) => first!(a).re,
            Data::BF16(a) => f32::from(first!(a)) as f64,
            Data::Str(_) => {
                return Err(Error::unsupported("Tensor", DType::Str));
            }
        })
    }

    /// The single element of an integer (or bool) tensor with one element, exactly.
    pub fn to_i128_scalar(&self) -> Result<i128> {
        self.check_one_element()?;
        let one = || Error::Internal("a tensor of size 1 has an element".into());
        macro_rules! first {
            ($a:expr) => {
                *$a.iter().next().ok_or_else(one)? as i128
            };
        }
        Ok(match &self.data {
            Data::I8(a) => first!(a),
            Data::I16(a) => first!(a),
            Data::I32(a) => first!(a),
            Data::I64(a) => first!(a),
            Data::U8(a) => first!(a),
            Data::U16(a) => first!(a),
            Data::U32(a) => first!(a),
            Data::U64(a) => first!(a),
            Data::Bool(a) => first!(a),
            d => {
                return Err(Error::dtype(
                    "Tensor",
                    format!("expected an integer tensor, got {}", d.dtype()),
                ))
            }
        })
    }

    /// The single element of an integer or bool tensor with one element, as `i64`
    /// (exact, unlike [`Tensor::to_f64_scalar`] for values beyond 2^53); `None` for
    /// other dtypes or sizes.
    pub fn to_i64_scalar(&self) -> Option<i64> {
        if self.size() != 1 {
            return None;
        }
        self.to_i128_scalar()
            .ok()
            .and_then(|v| i64::try_from(v).ok())
    }

    /// Same storage under a new id, recorded by no tape (what variable reads,
    /// `tf.constant(t)` and custom-gradient outputs start from).
    /// Whether the storage is contiguous in row-major order.
    pub(crate) fn is_standard_layout(&self) -> bool {
        dispatch!(&self.data, a => a.is_standard_layout())
    }

    /// Elements `lo..hi` of a contiguous tensor, in row-major order, as a new 1-D
    /// tensor (a copy).
    pub(crate) fn flat_range(&self, lo: usize, hi: usize) -> Result<Tensor> {
        macro_rules! take {
            ($a:expr, $dt:ident) => {{
                let s = $a.as_slice().ok_or_else(|| {
                    crate::error::Error::Internal("flat_range of a strided tensor".into())
                })?;
                let part = s.get(lo..hi).ok_or_else(|| {
                    crate::error::Error::Internal("flat_range out of bounds".into())
                })?;
                Data::$dt(
                    ArcArray::from_shape_vec(IxDyn(&[hi - lo]), part.to_vec())
                        .map_err(|e| crate::error::Error::Internal(e.to_string()))?,
                )
            }};
        }
        macro_rules! take_all {
            ([$($dt:ident),*]) => {
                match &self.data {
                    $(Data::$dt(a) => take!(a, $dt),)*
                }
            };
        }
        let data = all_dtypes!(take_all!());
        Ok(Tensor::new(data))
    }

    pub fn fresh(&self) -> Tensor {
        Tensor::new(self.data.clone())
    }
}

/// Conversions of Rust values into tensors, for the `Tensor::from` sugar.
impl From<f32> for Tensor {
    fn from(v: f32) -> Tensor {
        Tensor::scalar(v)
    }
}
impl From<f64> for Tensor {
    fn from(v: f64) -> Tensor {
        Tensor::scalar(v)
    }
}
impl From<Vec<f32>> for Tensor {
    fn from(v: Vec<f32>) -> Tensor {
        let n = v.len();
        Tensor::from_vec(v, &[n]).expect("length matches")
    }
}
impl From<Vec<f64>> for Tensor {
    fn from(v: Vec<f64>) -> Tensor {
        let n = v.len();
        Tensor::from_vec(v, &[n]).expect("length matches")
    }
}

/// A constant filled with `v` converted to `dtype` (as `tf.cast` converts: floats to
/// `int32`/`int64` truncate, saturating; to the narrower integers through `int64`,
/// wrapping). `InvalidArgument` for a shape whose element count
/// overflows, `ResourceExhausted` for one too large to hold.
pub fn full(shape: &[usize], v: f64, dtype: DType) -> Result<Tensor> {
    full_op("Fill", shape, v, dtype)
}

/// [`full`] naming `op` in its errors.
pub(crate) fn full_op(op: &'static str, shape: &[usize], v: f64, dtype: DType) -> Result<Tensor> {
    use crate::kernels::elementwise::filled;
    let data = match dtype {
        DType::F16 => Data::F16(filled(op, shape, f16::from_f64(v))?.into_shared()),
        DType::BF16 => Data::BF16(filled(op, shape, bf16::from_f32(v as f32))?.into_shared()),
        // TF's zeros of a string dtype are empty strings.
        DType::Str if v == 0.0 => Data::Str(filled(op, shape, TStr::default())?.into_shared()),
        DType::Str => return Err(Error::unsupported(op, DType::Str)),
        DType::F32 => Data::F32(filled(op, shape, v as f32)?.into_shared()),
        DType::F64 => Data::F64(filled(op, shape, v)?.into_shared()),
        DType::I8 => Data::I8(filled(op, shape, v as i64 as i8)?.into_shared()),
        DType::I16 => Data::I16(filled(op, shape, v as i64 as i16)?.into_shared()),
        DType::I32 => Data::I32(filled(op, shape, v as i32)?.into_shared()),
        DType::I64 => Data::I64(filled(op, shape, v as i64)?.into_shared()),
        DType::U8 => Data::U8(filled(op, shape, v as i64 as u8)?.into_shared()),
        DType::U16 => Data::U16(filled(op, shape, v as i64 as u16)?.into_shared()),
        DType::U32 => Data::U32(filled(op, shape, v as i64 as u32)?.into_shared()),
        DType::U64 => Data::U64(filled(op, shape, f64_to_u64(v))?.into_shared()),
        DType::Bool => Data::Bool(filled(op, shape, v != 0.0)?.into_shared()),
        DType::C64 => Data::C64(filled(op, shape, Complex32::new(v as f32, 0.0))?.into_shared()),
        DType::C128 => Data::C128(filled(op, shape, Complex64::new(v, 0.0))?.into_shared()),
    };
    Ok(Tensor::new(data))
}

/// `v` as `uint64` the way `cast` converts it (TF's `static_cast` on x86): negative
/// values through `int64`, so `-1.0` is `2^64 - 1`.
fn f64_to_u64(v: f64) -> u64 {
    if v >= 0.0 {
        v as u64
    } else {
        v as i64 as u64
    }
}

/// A rank-0 tensor of `dtype` holding `v` converted as [`full`] converts it
/// (`string`: the empty string, the zero TF pads strings with).
pub fn scalar_of(v: f64, dtype: DType) -> Tensor {
    match dtype {
        DType::F16 => Tensor::scalar(f16::from_f64(v)),
        DType::BF16 => Tensor::scalar(bf16::from_f32(v as f32)),
        DType::Str => Tensor::scalar(TStr::default()),
        DType::F32 => Tensor::scalar(v as f32),
        DType::F64 => Tensor::scalar(v),
        DType::I8 => Tensor::scalar(v as i64 as i8),
        DType::I16 => Tensor::scalar(v as i64 as i16),
        DType::I32 => Tensor::scalar(v as i32),
        DType::I64 => Tensor::scalar(v as i64),
        DType::U8 => Tensor::scalar(v as i64 as u8),
        DType::U16 => Tensor::scalar(v as i64 as u16),
        DType::U32 => Tensor::scalar(v as i64 as u32),
        DType::U64 => Tensor::scalar(f64_to_u64(v)),
        DType::Bool => Tensor::scalar(v != 0.0),
        DType::C64 => Tensor::scalar(Complex32::new(v as f32, 0.0)),
        DType::C128 => Tensor::scalar(Complex64::new(v, 0.0)),
    }
}

impl std::fmt::Display for Tensor {
    /// TF's eager repr: `tf.Tensor(6.0, shape=(), dtype=float32)` with `gt.`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shape: Vec<String> = self.shape().iter().map(|d| d.to_string()).collect();
        let shape = if shape.len() == 1 {
            format!("({},)", shape[0])
        } else {
            format!("({})", shape.join(", "))
        };
        let body = dispatch!(&self.data, a => format!("{a}"));
        write!(f, "Tensor({body}, shape={shape}, dtype={})", self.dtype())
    }
}
