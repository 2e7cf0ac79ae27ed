//! Tensors on disk: reading and writing the safetensors format.
//!
//! A safetensors file is an 8-byte little-endian header length, a JSON header naming
//! each tensor's dtype, shape and byte range (plus an optional `__metadata__` map of
//! strings), then the raw little-endian bytes. The `safetensors` crate parses and
//! validates the header (offsets contiguous, sizes equal to shape × dtype, no overflow,
//! header at most 100 MB); this module converts between its byte views and
//! [`Tensor`]s. Loading never runs code and never allocates more than the file holds.
//!
//! Dtypes map one to one (`float16` ↔ `F16`, `float32` ↔ `F32`, `int8` ↔ `I8`, ...,
//! `bool` ↔ `BOOL`, `complex64` ↔ `C64`, `bfloat16` ↔ `BF16`), except `complex128`, which safetensors has
//! no dtype for: it is written as `F64` with a trailing axis of 2 (real, imaginary) and
//! the metadata entry `"gradtape.complex128.<name>": "1"`, and read back as
//! `complex128`. Metadata keys starting with `gradtape.` are reserved for this. Files
//! with other safetensors dtypes (the 8-bit floats) are refused with an error, and so
//! are `string` tensors (safetensors holds numbers only).
//!
//! Files written here load with the `safetensors` Python package
//! (`safetensors.numpy.load_file`) and the other way round. `docs/saved_model.md`
//! describes how SavedModels and checkpoints use these files.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use half::{bf16, f16};
use num_complex::{Complex32, Complex64};
use safetensors::tensor::{Dtype, SafeTensorError, SafeTensors, View};

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// The `__metadata__` map of a safetensors file.
pub type Metadata = BTreeMap<String, String>;

/// The metadata key that marks tensor `name` as complex128 stored as float64 pairs.
const COMPLEX128_KEY: &str = "gradtape.complex128.";

/// Element types with a fixed little-endian byte form.
trait LeBytes: Copy {
    const SIZE: usize;
    fn put(self, out: &mut Vec<u8>);
    fn get(b: &[u8]) -> Option<Self>;
}

macro_rules! le_bytes {
    ($($t:ty),*) => {$(
        impl LeBytes for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(b: &[u8]) -> Option<Self> {
                Some(<$t>::from_le_bytes(b.try_into().ok()?))
            }
        }
    )*};
}
le_bytes!(f32, f64, i8, i16, i32, i64, u8, u16, u32, u64);

impl LeBytes for f16 {
    const SIZE: usize = 2;
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_bits().to_le_bytes());
    }
    fn get(b: &[u8]) -> Option<Self> {
        Some(f16::from_bits(u16::get(b)?))
    }
}

impl LeBytes for bf16 {
    const SIZE: usize = 2;
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_bits().to_le_bytes());
    }
    fn get(b: &[u8]) -> Option<Self> {
        Some(bf16::from_bits(u16::get(b)?))
    }
}
impl LeBytes for bool {
    const SIZE: usize = 1;
    fn put(self, out: &mut Vec<u8>) {
        out.push(self as u8);
    }
    fn get(b: &[u8]) -> Option<Self> {
        // Any other byte is not a bool: a corrupted file, refused.
        match b {
            [0] => Some(false),
            [1] => Some(true),
            _ => None,
        }
    }
}

impl LeBytes for Complex32 {
    const SIZE: usize = 8;
    fn put(self, out: &mut Vec<u8>) {
        self.re.put(out);
        self.im.put(out);
    }
    fn get(b: &[u8]) -> Option<Self> {
        Some(Complex32::new(
            f32::get(b.get(..4)?)?,
            f32::get(b.get(4..)?)?,
        ))
    }
}

impl LeBytes for Complex64 {
    const SIZE: usize = 16;
    fn put(self, out: &mut Vec<u8>) {
        self.re.put(out);
        self.im.put(out);
    }
    fn get(b: &[u8]) -> Option<Self> {
        Some(Complex64::new(
            f64::get(b.get(..8)?)?,
            f64::get(b.get(8..)?)?,
        ))
    }
}

/// A tensor as safetensors sees it: dtype, shape and its bytes (row-major, LE).
struct Bytes {
    dtype: Dtype,
    shape: Vec<usize>,
    bytes: Vec<u8>,
}

impl View for &Bytes {
    fn dtype(&self) -> Dtype {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(&self.bytes)
    }
    fn data_len(&self) -> usize {
        self.bytes.len()
    }
}

fn st_dtype(dt: DType) -> Dtype {
    match dt {
        DType::F16 => Dtype::F16,
        DType::BF16 => Dtype::BF16,
        // Refused before (`to_bytes`); never written.
        DType::Str => Dtype::U8,
        DType::F32 => Dtype::F32,
        // complex128 travels as F64 pairs (see the module docs).
        DType::F64 | DType::C128 => Dtype::F64,
        DType::I8 => Dtype::I8,
        DType::I16 => Dtype::I16,
        DType::I32 => Dtype::I32,
        DType::I64 => Dtype::I64,
        DType::U8 => Dtype::U8,
        DType::U16 => Dtype::U16,
        DType::U32 => Dtype::U32,
        DType::U64 => Dtype::U64,
        DType::Bool => Dtype::BOOL,
        DType::C64 => Dtype::C64,
    }
}

fn to_bytes(t: &Tensor) -> Result<Bytes> {
    let n = crate::size::num_bytes("safetensors", t.size(), t.dtype().size())?;
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(n)
        .map_err(|_| Error::exhausted("safetensors", format!("cannot allocate {n} bytes")))?;
    dispatch_num!("safetensors", t.data(), a => a.iter().for_each(|x| x.put(&mut bytes)));
    let mut shape = t.shape().to_vec();
    if t.dtype() == DType::C128 {
        shape.push(2);
    }
    Ok(Bytes {
        dtype: st_dtype(t.dtype()),
        shape,
        bytes,
    })
}

fn from_bytes<T: LeBytes + crate::dtype::Element>(
    name: &str,
    bytes: &[u8],
    shape: &[usize],
) -> Result<Tensor> {
    let mut v = Vec::new();
    v.try_reserve_exact(bytes.len() / T::SIZE)
        .map_err(|_| Error::exhausted("safetensors", format!("cannot allocate {name}")))?;
    for chunk in bytes.chunks_exact(T::SIZE) {
        v.push(T::get(chunk).ok_or_else(|| {
            Error::DataLoss(format!(
                "tensor {name:?} holds a byte that is not a {}",
                T::DTYPE.name()
            ))
        })?);
    }
    Tensor::from_vec(v, shape)
        .map_err(|e| Error::DataLoss(format!("tensor {name:?} does not fit its shape: {e}")))
}

fn check_name(name: &str) -> Result<()> {
    if name == "__metadata__" {
        return Err(Error::invalid(
            "safetensors",
            "\"__metadata__\" is reserved and cannot name a tensor",
        ));
    }
    Ok(())
}

/// The bytes of a safetensors file holding `tensors` (name, tensor) and `metadata`.
///
/// Names must be unique. Any dtype of gradtape can be written (complex128 as described
/// in the module docs).
///
/// ```
/// use gradtape::{io, Tensor};
///
/// let w = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
/// let bytes = io::serialize([("w", &w)], &io::Metadata::new())?;
/// let (tensors, _) = io::deserialize(&bytes)?;
/// assert_eq!(tensors[0].0, "w");
/// assert_eq!(tensors[0].1.to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 4.0]);
/// # Ok::<(), gradtape::Error>(())
/// ```
pub fn serialize<'a>(
    tensors: impl IntoIterator<Item = (&'a str, &'a Tensor)>,
    metadata: &Metadata,
) -> Result<Vec<u8>> {
    let mut meta: HashMap<String, String> = metadata.clone().into_iter().collect();
    let mut views = Vec::new();
    let mut names = std::collections::HashSet::new();
    for (name, t) in tensors {
        check_name(name)?;
        if !names.insert(name) {
            return Err(Error::invalid(
                "safetensors",
                format!("two tensors are named {name:?}"),
            ));
        }
        if t.dtype() == DType::C128 {
            meta.insert(format!("{COMPLEX128_KEY}{name}"), "1".into());
        }
        views.push((name.to_string(), to_bytes(t)?));
    }
    let data_info = if meta.is_empty() { None } else { Some(meta) };
    safetensors::tensor::serialize(views.iter().map(|(n, b)| (n, b)), data_info)
        .map_err(|e| Error::invalid("safetensors", format!("cannot write the tensors: {e}")))
}

/// The tensors (in file order) and metadata of the safetensors file `bytes`.
///
/// Every size and offset is checked before anything is allocated; a truncated or
/// corrupted file, or one with a dtype gradtape has no twin for, is an
/// [`Error::DataLoss`] naming what is wrong.
pub fn deserialize(bytes: &[u8]) -> Result<(Vec<(String, Tensor)>, Metadata)> {
    let bad = |e: SafeTensorError| Error::DataLoss(format!("not a valid safetensors file: {e}"));
    let (_, header) = SafeTensors::read_metadata(bytes).map_err(bad)?;
    let st = SafeTensors::deserialize(bytes).map_err(bad)?;
    let metadata: Metadata = header
        .metadata()
        .as_ref()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    let mut out = Vec::new();
    for name in header.offset_keys() {
        let view = st.tensor(&name).map_err(bad)?;
        let shape = view.shape();
        let data = view.data();
        let complex128 = metadata.contains_key(&format!("{COMPLEX128_KEY}{name}"));
        let t = match view.dtype() {
            Dtype::F64 if complex128 => {
                let Some((&2, inner)) = shape.split_last() else {
                    return Err(Error::DataLoss(format!(
                        "tensor {name:?} is marked complex128 but its shape {shape:?} does not end in 2"
                    )));
                };
                from_bytes::<Complex64>(&name, data, inner)?
            }
            Dtype::F16 => from_bytes::<f16>(&name, data, shape)?,
            Dtype::BF16 => from_bytes::<bf16>(&name, data, shape)?,
            Dtype::F32 => from_bytes::<f32>(&name, data, shape)?,
            Dtype::F64 => from_bytes::<f64>(&name, data, shape)?,
            Dtype::I8 => from_bytes::<i8>(&name, data, shape)?,
            Dtype::I16 => from_bytes::<i16>(&name, data, shape)?,
            Dtype::I32 => from_bytes::<i32>(&name, data, shape)?,
            Dtype::I64 => from_bytes::<i64>(&name, data, shape)?,
            Dtype::U8 => from_bytes::<u8>(&name, data, shape)?,
            Dtype::U16 => from_bytes::<u16>(&name, data, shape)?,
            Dtype::U32 => from_bytes::<u32>(&name, data, shape)?,
            Dtype::U64 => from_bytes::<u64>(&name, data, shape)?,
            Dtype::BOOL => from_bytes::<bool>(&name, data, shape)?,
            Dtype::C64 => from_bytes::<Complex32>(&name, data, shape)?,
            other => {
                return Err(Error::DataLoss(format!(
                    "tensor {name:?} has dtype {other:?}, which gradtape has no dtype for"
                )))
            }
        };
        out.push((name, t));
    }
    Ok((out, metadata))
}

/// Writes [`serialize`]'s bytes to `path` through a temporary file in the same
/// directory renamed over it, so a reader never sees a half-written file.
pub fn save_file<'a>(
    path: impl AsRef<Path>,
    tensors: impl IntoIterator<Item = (&'a str, &'a Tensor)>,
    metadata: &Metadata,
) -> Result<()> {
    let bytes = serialize(tensors, metadata)?;
    write_atomic(path.as_ref(), &bytes)
}

/// Reads a file written by [`save_file`] (or any safetensors writer).
pub fn load_file(path: impl AsRef<Path>) -> Result<(Vec<(String, Tensor)>, Metadata)> {
    let path = path.as_ref();
    let bytes = read(path)?;
    deserialize(&bytes).map_err(|e| in_file(path, e))
}

/// Prefixes a data-loss error with the file it is about.
pub(crate) fn in_file(path: &Path, e: Error) -> Error {
    match e {
        Error::DataLoss(msg) => Error::DataLoss(format!("{}: {msg}", path.display())),
        e => e,
    }
}

/// The bytes of `path`, or an [`Error::Io`] naming it.
pub(crate) fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|source| Error::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Writes `bytes` to `path` by way of a sibling temporary file and a rename.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let io = |source| Error::Io {
        path: path.display().to_string(),
        source,
    };
    let file_name = path.file_name().ok_or_else(|| {
        Error::invalid(
            "safetensors",
            format!("{} is not a file path", path.display()),
        )
    })?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(file_name);
    tmp_name.push(format!(".tmp{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(t: &Tensor) -> Tensor {
        let bytes = serialize([("t", t)], &Metadata::new()).unwrap();
        let (mut ts, _) = deserialize(&bytes).unwrap();
        ts.pop().unwrap().1
    }

    #[test]
    fn every_dtype_round_trips() {
        let s = Tensor::from_vec(vec![crate::dtype::TStr::new(b"a")], &[1]).unwrap();
        assert!(serialize([("s", &s)], &Metadata::new()).is_err());
        for dt in DType::ALL.into_iter().filter(|d| !d.is_string()) {
            let t = crate::ops::cast(
                &Tensor::from_vec(vec![0.0f64, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]).unwrap(),
                dt,
            )
            .unwrap();
            let back = round_trip(&t);
            assert_eq!(back.dtype(), dt);
            assert_eq!(back.shape(), &[2, 3]);
            let (a, b) = (
                crate::ops::cast(&t, DType::C128).unwrap(),
                crate::ops::cast(&back, DType::C128).unwrap(),
            );
            assert_eq!(
                a.to_vec::<Complex64>().unwrap(),
                b.to_vec::<Complex64>().unwrap()
            );
        }
    }

    #[test]
    fn complex128_keeps_both_parts_and_non_contiguous_tensors_are_row_major() {
        let z = Tensor::from_vec(vec![Complex64::new(1.5, -2.0)], &[1]).unwrap();
        assert_eq!(
            round_trip(&z).to_vec::<Complex64>().unwrap(),
            vec![Complex64::new(1.5, -2.0)]
        );
        let m = Tensor::from_vec(vec![1i32, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
        let mt = crate::ops::transpose(&m, None).unwrap();
        assert_eq!(
            round_trip(&mt).to_vec::<i32>().unwrap(),
            vec![1, 4, 2, 5, 3, 6]
        );
    }

    #[test]
    fn bad_bytes_are_errors_not_panics() {
        let t = Tensor::from_vec(vec![true, false], &[2]).unwrap();
        let good = serialize([("b", &t)], &Metadata::new()).unwrap();
        for cut in 0..good.len() {
            assert!(matches!(deserialize(&good[..cut]), Err(Error::DataLoss(_))));
        }
        let mut bad = good.clone();
        *bad.last_mut().unwrap() = 7; // not a bool
        let e = deserialize(&bad).unwrap_err().to_string();
        assert!(e.contains("not a bool"), "{e}");
        // A header length far beyond the file.
        let mut huge = good.clone();
        huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(deserialize(&huge), Err(Error::DataLoss(_))));
        assert!(serialize([("__metadata__", &t)], &Metadata::new()).is_err());
        assert!(serialize([("a", &t), ("a", &t)], &Metadata::new()).is_err());
    }
}
