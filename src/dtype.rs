//! Element types of tensors and the `Element` trait tying Rust scalars to them.

use ndarray::{ArcArray, IxDyn};
use num_complex::{Complex32, Complex64};

use crate::tensor::Data;

/// The dtype of a tensor, named as in TensorFlow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    F32,
    F64,
    I32,
    I64,
    Bool,
    C64,
    C128,
}

impl DType {
    /// TF's name: `float32`, `int64`, `complex128`, ...
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::Bool => "bool",
            DType::C64 => "complex64",
            DType::C128 => "complex128",
        }
    }

    /// Parses TF's names (and numpy's aliases `float`, `double`, `int`).
    pub fn from_name(s: &str) -> Option<DType> {
        Some(match s {
            "float32" | "float" | "f32" => DType::F32,
            "float64" | "double" | "f64" => DType::F64,
            "int32" | "i32" => DType::I32,
            "int64" | "int" | "i64" => DType::I64,
            "bool" => DType::Bool,
            "complex64" | "c64" => DType::C64,
            "complex128" | "complex" | "c128" => DType::C128,
            _ => return None,
        })
    }

    pub fn is_floating(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }
    pub fn is_complex(self) -> bool {
        matches!(self, DType::C64 | DType::C128)
    }
    pub fn is_integer(self) -> bool {
        matches!(self, DType::I32 | DType::I64)
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
            DType::F32 | DType::C64 => DType::C64,
            _ => DType::C128,
        }
    }
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
element!(f32, F32);
element!(f64, F64);
element!(i32, I32);
element!(i64, I64);
element!(bool, Bool);
element!(Complex32, C64);
element!(Complex64, C128);
