//! Element types of tensors and the `Element` trait tying Rust scalars to them.
//!
//! Every dtype TF has a numpy twin for is here, stored as itself: `float16` (as
//! [`half::f16`]), `float32`, `float64`, the signed and unsigned integers of 8 to 64
//! bits, `bool`, `complex64` and `complex128`; and TF's `bfloat16` (as [`half::bf16`],
//! numpy's twin is `ml_dtypes.bfloat16`) and `string` (byte strings, as [`TStr`]).
//! The list of every dtype lives in one place, the `all_dtypes!` macro in
//! `macros.rs`, which the whole-dtype dispatch tables expand.
//!
//! Kernels are written for the wide types only. An op that TF registers for a narrow
//! dtype computes in its [`DType::compute_dtype`] and rounds (floats) or wraps
//! (integers) the result back, which gives TF's numbers: `float16` ops are computed
//! in `float32` and rounded once, as Eigen's `half` does, and integer arithmetic
//! modulo 2⁸ or 2¹⁶ equals the same arithmetic done modulo 2³² and wrapped. Which ops
//! accept which dtypes is listed at each op (the `via` lists of the dispatch macros
//! in `macros.rs`), following TF's CPU kernel registrations.

use half::{bf16, f16};
use ndarray::{ArcArray, IxDyn};
use num_complex::{Complex32, Complex64};

use crate::tensor::Data;

/// The dtype of a tensor, named as in TensorFlow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    F16,
    F32,
    F64,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    Bool,
    C64,
    C128,
    BF16,
    Str,
}

impl DType {
    /// Every dtype, in TF's enum order.
    pub const ALL: [DType; 16] = [
        DType::F32,
        DType::F64,
        DType::I32,
        DType::U8,
        DType::I16,
        DType::I8,
        DType::Str,
        DType::C64,
        DType::I64,
        DType::Bool,
        DType::BF16,
        DType::U16,
        DType::C128,
        DType::F16,
        DType::U32,
        DType::U64,
    ];

    /// TF's name: `float32`, `int64`, `complex128`, ...
    pub fn name(self) -> &'static str {
        match self {
            DType::F16 => "float16",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::Bool => "bool",
            DType::C64 => "complex64",
            DType::C128 => "complex128",
            DType::BF16 => "bfloat16",
            DType::Str => "string",
        }
    }

    /// Parses TF's names (and numpy's aliases `half`, `float`, `double`, `int`).
    pub fn from_name(s: &str) -> Option<DType> {
        Some(match s {
            "float16" | "half" | "f16" => DType::F16,
            "float32" | "float" | "f32" => DType::F32,
            "float64" | "double" | "f64" => DType::F64,
            "int8" | "i8" => DType::I8,
            "int16" | "i16" => DType::I16,
            "int32" | "i32" => DType::I32,
            "int64" | "int" | "i64" => DType::I64,
            "uint8" | "u8" => DType::U8,
            "uint16" | "u16" => DType::U16,
            "uint32" | "u32" => DType::U32,
            "uint64" | "u64" => DType::U64,
            "bool" => DType::Bool,
            "complex64" | "c64" => DType::C64,
            "complex128" | "complex" | "c128" => DType::C128,
            "bfloat16" | "bf16" => DType::BF16,
            "string" => DType::Str,
            _ => return None,
        })
    }

    /// TF's `DType.as_datatype_enum` (`DT_FLOAT` = 1, ...).
    pub fn as_datatype_enum(self) -> u32 {
        match self {
            DType::F32 => 1,
            DType::F64 => 2,
            DType::I32 => 3,
            DType::U8 => 4,
            DType::I16 => 5,
            DType::I8 => 6,
            DType::Str => 7,
            DType::C64 => 8,
            DType::I64 => 9,
            DType::Bool => 10,
            DType::BF16 => 14,
            DType::U16 => 17,
            DType::C128 => 18,
            DType::F16 => 19,
            DType::U32 => 22,
            DType::U64 => 23,
        }
    }

    /// Bytes per element (`string`: 0, as TF says). TF equivalent: `DType.size`.
    pub fn size(self) -> usize {
        match self {
            DType::Str => 0,
            DType::I8 | DType::U8 | DType::Bool => 1,
            DType::F16 | DType::BF16 | DType::I16 | DType::U16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 | DType::U64 | DType::C64 => 8,
            DType::C128 => 16,
        }
    }

    pub fn is_floating(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }
    /// TF's `string`: byte strings, no arithmetic, never differentiable.
    pub fn is_string(self) -> bool {
        self == DType::Str
    }
    pub fn is_complex(self) -> bool {
        matches!(self, DType::C64 | DType::C128)
    }
    pub fn is_integer(self) -> bool {
        self.is_signed_integer() || self.is_unsigned()
    }
    fn is_signed_integer(self) -> bool {
        matches!(self, DType::I8 | DType::I16 | DType::I32 | DType::I64)
    }
    /// The unsigned integers (not bool, whose `min` TF does not define).
    /// TF equivalent: `DType.is_unsigned`.
    pub fn is_unsigned(self) -> bool {
        matches!(self, DType::U8 | DType::U16 | DType::U32 | DType::U64)
    }
    pub fn is_bool(self) -> bool {
        self == DType::Bool
    }
    /// Whether gradients flow through values of this dtype (real or complex floats).
    pub fn is_differentiable(self) -> bool {
        self.is_floating() || self.is_complex()
    }
    /// The real dtype of a complex one (`complex64` → `float32`); others unchanged.
    pub fn real_dtype(self) -> DType {
        match self {
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            d => d,
        }
    }
    /// The complex dtype with this real part (`float32` → `complex64`).
    pub fn complex_dtype(self) -> DType {
        match self {
            DType::F16 | DType::BF16 | DType::F32 | DType::C64 => DType::C64,
            _ => DType::C128,
        }
    }

    /// The dtype kernels compute this one in: `float16` and `bfloat16` in `float32`
    /// (as TF's CPU kernels do for `bfloat16`), the 8- and
    /// 16-bit integers in `int32`, `uint32` in `int64`; the others in themselves.
    /// Every value of a narrow dtype is exact in its compute dtype, order is kept,
    /// and converting back wraps (or rounds) as TF's own narrow kernels do.
    pub fn compute_dtype(self) -> DType {
        match self {
            DType::F16 | DType::BF16 => DType::F32,
            DType::I8 | DType::I16 | DType::U8 | DType::U16 => DType::I32,
            DType::U32 => DType::I64,
            d => d,
        }
    }

    /// The dtype whose `via` entries stand for this one in the dispatch macros'
    /// `[..] via [..]` lists: `bfloat16` is accepted wherever `float16` is (TF
    /// registers its CPU float kernels for both half types); others stand for
    /// themselves. So the lists name `F16` once for both.
    pub fn via_class(self) -> DType {
        match self {
            DType::BF16 => DType::F16,
            d => d,
        }
    }

    /// The smallest and largest values, as exact integers for integer dtypes and as
    /// `f64` for floats. TF equivalent: `DType.min`, `DType.max`. `None` for bool and
    /// complex dtypes (TF raises there).
    pub fn limits(self) -> Option<(Limit, Limit)> {
        use Limit::{Float, Int};
        Some(match self {
            DType::F16 => (Float(-65504.0), Float(65504.0)),
            DType::BF16 => (Float(f64::from(bf16::MIN)), Float(f64::from(bf16::MAX))),
            DType::F32 => (Float(f32::MIN as f64), Float(f32::MAX as f64)),
            DType::F64 => (Float(f64::MIN), Float(f64::MAX)),
            DType::I8 => (Int(i8::MIN as i128), Int(i8::MAX as i128)),
            DType::I16 => (Int(i16::MIN as i128), Int(i16::MAX as i128)),
            DType::I32 => (Int(i32::MIN as i128), Int(i32::MAX as i128)),
            DType::I64 => (Int(i64::MIN as i128), Int(i64::MAX as i128)),
            DType::U8 => (Int(0), Int(u8::MAX as i128)),
            DType::U16 => (Int(0), Int(u16::MAX as i128)),
            DType::U32 => (Int(0), Int(u32::MAX as i128)),
            DType::U64 => (Int(0), Int(u64::MAX as i128)),
            DType::Bool | DType::C64 | DType::C128 | DType::Str => return None,
        })
    }
}

/// One end of a dtype's range (see [`DType::limits`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Limit {
    Int(i128),
    Float(f64),
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A Rust scalar type that can be a tensor element.
pub trait Element: Copy + Send + Sync + std::fmt::Debug + 'static {
    const DTYPE: DType;
    fn wrap(a: ArcArray<Self, IxDyn>) -> Data;
    fn unwrap(d: &Data) -> Option<&ArcArray<Self, IxDyn>>;
}

macro_rules! element {
    ($t:ty, $dt:ident) => {
        impl Element for $t {
            const DTYPE: DType = DType::$dt;
            fn wrap(a: ArcArray<Self, IxDyn>) -> Data {
                Data::$dt(a)
            }
            fn unwrap(d: &Data) -> Option<&ArcArray<Self, IxDyn>> {
                match d {
                    Data::$dt(a) => Some(a),
                    _ => None,
                }
            }
        }
    };
}
element!(f16, F16);
element!(f32, F32);
element!(f64, F64);
element!(i8, I8);
element!(i16, I16);
element!(i32, I32);
element!(i64, I64);
element!(u8, U8);
element!(u16, U16);
element!(u32, U32);
element!(u64, U64);
element!(bool, Bool);
element!(Complex32, C64);
element!(Complex64, C128);
element!(bf16, BF16);
element!(TStr, Str);

/// One element of a `string` tensor: a byte string, as TF's `tstring`. A `Copy`
/// handle so that every structural kernel (reshape, slicing, gather, concat, ...)
/// moves strings as it moves numbers: up to 22 bytes are held inline; longer strings
/// are interned once per distinct value for the life of the process (TF's own
/// `tstring` also keeps short strings inline; here long ones are never freed, which
/// suits labels and class names, not gigabytes of distinct text).
#[derive(Clone, Copy)]
pub struct TStr(TStrRepr);

#[derive(Clone, Copy)]
enum TStrRepr {
    Inline { len: u8, buf: [u8; TStr::INLINE] },
    Interned(&'static [u8]),
}

impl TStr {
    const INLINE: usize = 22;

    /// The string holding `bytes`.
    pub fn new(bytes: &[u8]) -> TStr {
        if bytes.len() <= Self::INLINE {
            let mut buf = [0u8; Self::INLINE];
            buf[..bytes.len()].copy_from_slice(bytes);
            return TStr(TStrRepr::Inline {
                len: bytes.len() as u8,
                buf,
            });
        }
        use std::collections::HashSet;
        use std::sync::{Mutex, OnceLock};
        static POOL: OnceLock<Mutex<HashSet<&'static [u8]>>> = OnceLock::new();
        let pool = POOL.get_or_init(|| Mutex::new(HashSet::new()));
        let mut pool = pool.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&s) = pool.get(bytes) {
            return TStr(TStrRepr::Interned(s));
        }
        let s: &'static [u8] = Box::leak(bytes.to_vec().into_boxed_slice());
        pool.insert(s);
        TStr(TStrRepr::Interned(s))
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            TStrRepr::Inline { len, buf } => &buf[..*len as usize],
            TStrRepr::Interned(s) => s,
        }
    }
}

impl Default for TStr {
    fn default() -> TStr {
        TStr::new(b"")
    }
}
impl PartialEq for TStr {
    fn eq(&self, other: &TStr) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}
impl Eq for TStr {}
impl PartialOrd for TStr {
    fn partial_cmp(&self, other: &TStr) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for TStr {
    fn cmp(&self, other: &TStr) -> std::cmp::Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}
/// Concatenation (TF's `Add` of strings).
impl std::ops::Add for TStr {
    type Output = TStr;
    fn add(self, other: TStr) -> TStr {
        let mut v = Vec::with_capacity(self.as_bytes().len() + other.as_bytes().len());
        v.extend_from_slice(self.as_bytes());
        v.extend_from_slice(other.as_bytes());
        TStr::new(&v)
    }
}
impl std::hash::Hash for TStr {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.as_bytes().hash(h)
    }
}

/// Python's `bytes` repr (`b'cat'`, `b'a\\x00'`), which TF prints.
impl std::fmt::Display for TStr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = self.as_bytes();
        let q = if b.contains(&b'\'') && !b.contains(&b'"') {
            '"'
        } else {
            '\''
        };
        write!(f, "b{q}")?;
        for &c in b {
            match c {
                b'\\' => f.write_str("\\\\")?,
                b'\n' => f.write_str("\\n")?,
                b'\r' => f.write_str("\\r")?,
                b'\t' => f.write_str("\\t")?,
                c if c as char == q => write!(f, "\\{q}")?,
                0x20..=0x7e => write!(f, "{}", c as char)?,
                c => write!(f, "\\x{c:02x}")?,
            }
        }
        write!(f, "{q}")
    }
}
impl std::fmt::Debug for TStr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_enums_are_tf_s() {
        for dt in DType::ALL {
            assert_eq!(DType::from_name(dt.name()), Some(dt));
        }
        assert_eq!(DType::from_name("half"), Some(DType::F16));
        assert_eq!(DType::U64.as_datatype_enum(), 23);
        assert_eq!(DType::F16.as_datatype_enum(), 19);
        assert_eq!(DType::BF16.as_datatype_enum(), 14);
        assert_eq!(DType::Str.as_datatype_enum(), 7);
        assert_eq!(DType::from_name("bfloat16"), Some(DType::BF16));
    }

    #[test]
    fn kinds_and_limits() {
        assert!(DType::U8.is_integer() && DType::U8.is_unsigned());
        assert!(DType::I8.is_integer() && !DType::I8.is_unsigned());
        assert!(!DType::Bool.is_unsigned() && !DType::Bool.is_integer());
        assert!(DType::F16.is_floating() && DType::F16.is_differentiable());
        assert_eq!(
            DType::U64.limits(),
            Some((Limit::Int(0), Limit::Int(u64::MAX as i128)))
        );
        assert_eq!(DType::F16.limits().unwrap().1, Limit::Float(65504.0));
        assert_eq!(DType::C64.limits(), None);
        assert_eq!(
            DType::BF16.limits().unwrap().1,
            Limit::Float(3.3895313892515355e38)
        );
        assert_eq!(DType::BF16.compute_dtype(), DType::F32);
        assert!(!DType::Str.is_differentiable() && DType::Str.limits().is_none());
        for dt in DType::ALL {
            let c = dt.compute_dtype();
            assert_eq!(c.compute_dtype(), c);
            assert_eq!(c.is_floating(), dt.is_floating());
        }
    }
}

#[cfg(test)]
mod tstr_tests {
    use super::TStr;

    #[test]
    fn short_and_long_strings_compare_and_print_as_python_bytes() {
        let long = "x".repeat(40);
        assert_eq!(TStr::new(long.as_bytes()).as_bytes(), long.as_bytes());
        assert_eq!(TStr::new(long.as_bytes()), TStr::new(long.as_bytes()));
        assert!(TStr::new(b"cat") < TStr::new(b"dog"));
        assert_eq!(TStr::new(b"cat").to_string(), "b'cat'");
        assert_eq!(TStr::new(b"it's").to_string(), "b\"it's\"");
        assert_eq!(TStr::new(b"a\x00\n").to_string(), "b'a\\x00\\n'");
    }
}
