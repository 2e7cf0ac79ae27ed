//! Python values ⇄ tensors.
//!
//! Python floats become float32 and ints int32 (int64 when they do not fit), as in
//! TF; numpy arrays keep their dtype; nested lists go through `numpy.asarray`. A
//! dtype hint (the other operand's dtype) converts Python values and numpy arrays,
//! never tensors.
//!
//! `str` and `bytes` (and numpy text or object arrays of them) become `string`
//! tensors; `.numpy()` of one gives `bytes` (an array of dtype object), as TF. A
//! `bfloat16` tensor's `.numpy()` is an `ml_dtypes.bfloat16` array when `ml_dtypes`
//! (TF's own dependency) can be imported, else `float32` (every `bfloat16` value is
//! exact there); `ml_dtypes.bfloat16` arrays convert back to `bfloat16`.

use half::{bf16, f16};
use ndarray::ArrayD;
use num_complex::{Complex32, Complex64};
use numpy::{
    PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt, PyList, PyStringMethods, PyTuple};

use super::tensor::PyTensor;
use super::variable::PyVariable;
use crate::dtype::{DType, TStr};
use crate::ops;
use crate::tensor::Tensor;

/// The tensor of a `Tensor` or (read) `Variable`, or `None` for other objects.
#[inline]
pub(crate) fn as_tensor(ob: &Bound<'_, PyAny>) -> Option<Tensor> {
    if let Ok(t) = ob.cast::<PyTensor>() {
        return Some(t.get().t.clone());
    }
    if let Ok(v) = ob.cast::<PyVariable>() {
        return Some(v.get().v.read());
    }
    None
}

/// Converts any tensor-like Python value; `hint` is the dtype to give Python values.
pub(crate) fn to_tensor(ob: &Bound<'_, PyAny>, hint: Option<DType>) -> PyResult<Tensor> {
    if let Some(t) = as_tensor(ob) {
        return Ok(t);
    }
    if let Some(t) = dense_of(ob)? {
        return Ok(t);
    }
    convert_value(ob, hint)
}

/// The dense tensor of a Python object that says how to make one (`gt.IndexedSlices`:
/// its `_gt_dense_()`, recorded like any op), or `None`.
fn dense_of(ob: &Bound<'_, PyAny>) -> PyResult<Option<Tensor>> {
    if ob.is_instance_of::<PyList>()
        || ob.is_instance_of::<PyTuple>()
        || ob.is_instance_of::<PyFloat>()
    {
        return Ok(None);
    }
    if !ob.get_type().hasattr("_gt_dense_")? {
        return Ok(None);
    }
    let d = ob.call_method0("_gt_dense_")?;
    Ok(as_tensor(&d))
}

/// A Python number converted to `dt` as TF's eager conversion does it: the value
/// cast to the requested dtype (an integer type wraps, `float16` rounds).
fn scalar_of(dt: DType, v: f64) -> Tensor {
    crate::tensor::scalar_of(v, dt)
}

/// Converts a non-tensor Python value (inside a `gt.function` trace, a constant of the
/// graph).
pub(crate) fn convert_value(ob: &Bound<'_, PyAny>, hint: Option<DType>) -> PyResult<Tensor> {
    if is_sequence(ob) && holds_tensor(ob)? {
        return pack(ob, hint);
    }
    let t = convert_value_untraced(ob, hint)?;
    crate::graph::constant(&t);
    if crate::tape::provenance::enabled() {
        let what = if ob.hasattr("__array_interface__").unwrap_or(false) {
            "numpy value"
        } else if ob.is_instance_of::<PyFloat>() || ob.is_instance_of::<PyInt>() {
            "Python number"
        } else {
            "Python value"
        };
        crate::tape::provenance::note(what, &[], &[&t]);
    }
    Ok(t)
}

fn is_sequence(ob: &Bound<'_, PyAny>) -> bool {
    ob.is_instance_of::<PyList>() || ob.is_instance_of::<PyTuple>()
}

/// Whether a (nested) list or tuple holds a tensor or variable.
fn holds_tensor(ob: &Bound<'_, PyAny>) -> PyResult<bool> {
    for x in ob.try_iter()? {
        let x = x?;
        if x.is_instance_of::<PyTensor>() || x.is_instance_of::<PyVariable>() {
            return Ok(true);
        }
        if is_sequence(&x) && holds_tensor(&x)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The dtype of the first tensor or variable in a nested sequence.
fn first_dtype(ob: &Bound<'_, PyAny>) -> PyResult<Option<DType>> {
    for x in ob.try_iter()? {
        let x = x?;
        if let Some(t) = as_tensor(&x) {
            return Ok(Some(t.dtype()));
        }
        if is_sequence(&x) {
            if let Some(d) = first_dtype(&x)? {
                return Ok(Some(d));
            }
        }
    }
    Ok(None)
}

/// TF's auto-packing: a list holding tensors is their stack along a new first axis
/// (recorded like any op, so it is differentiable and traced). Numbers take the
/// first tensor's dtype (or `hint`); a tensor of another dtype is TF's error.
fn pack(ob: &Bound<'_, PyAny>, hint: Option<DType>) -> PyResult<Tensor> {
    let dt = match hint {
        Some(d) => d,
        None => first_dtype(ob)?.ok_or_else(|| PyTypeError::new_err("nothing to pack"))?,
    };
    let mut items = Vec::new();
    for x in ob.try_iter()? {
        let x = x?;
        let t = match as_tensor(&x) {
            Some(t) if t.dtype() != dt => {
                return Err(PyValueError::new_err(format!(
                    "Tensor conversion requested dtype {} for Tensor with dtype {}: {}",
                    dt.name(),
                    t.dtype().name(),
                    x.repr()?
                )))
            }
            Some(t) => t,
            None => convert_value(&x, Some(dt))?,
        };
        items.push(t);
    }
    let refs: Vec<&Tensor> = items.iter().collect();
    let packed = crate::graph::apply("Pack", Some("0".into()), None, &refs, |xs| {
        Ok(vec![ops::stack(xs, 0)?])
    })?;
    packed
        .into_iter()
        .next()
        .ok_or_else(|| crate::error::Error::Internal("Pack made no output".into()).into())
}

fn convert_value_untraced(ob: &Bound<'_, PyAny>, hint: Option<DType>) -> PyResult<Tensor> {
    // Text is a string (a numeric hint is TF's TypeError); a number next to a string stays a number
    // (the op then says, as TF, that it expected a string tensor).
    let text =
        ob.is_instance_of::<pyo3::types::PyBytes>() || ob.is_instance_of::<pyo3::types::PyString>();
    if let (true, Some(d)) = (text, hint.filter(|d| *d != DType::Str)) {
        // TF's conversion error: text asked to be a number.
        return Err(PyTypeError::new_err(format!(
            "Cannot convert {} to EagerTensor of dtype {}",
            ob.repr()?,
            d.name()
        )));
    }
    if let Ok(b) = ob.cast::<pyo3::types::PyBytes>() {
        return Ok(Tensor::scalar(TStr::new(b.as_bytes())));
    }
    if let Ok(s) = ob.cast::<pyo3::types::PyString>() {
        return Ok(Tensor::scalar(TStr::new(s.to_cow()?.as_bytes())));
    }
    let hint = hint.filter(|d| *d != DType::Str);
    if ob.is_instance_of::<PyBool>() {
        let b: bool = ob.extract()?;
        return Ok(match hint {
            Some(d) if d != DType::Bool => scalar_of(d, b as u8 as f64),
            _ => Tensor::scalar(b),
        });
    }
    // numpy scalars keep their dtype, as in TF: `np.float64` subclasses `float` (and
    // `np.complex128` `complex`) but must not become float32 like a Python float.
    if ((ob.is_instance_of::<PyFloat>() && !ob.is_exact_instance_of::<PyFloat>())
        || (ob.is_instance_of::<PyComplex>() && !ob.is_exact_instance_of::<PyComplex>()))
        && ob.hasattr("dtype")?
    {
        let arr = ob.py().import("numpy")?.call_method1("asarray", (ob,))?;
        if let Ok(a) = arr.cast::<PyUntypedArray>() {
            let t = from_numpy(a)?;
            return Ok(match hint {
                Some(d) if d != t.dtype() => ops::cast(&t, d)?,
                _ => t,
            });
        }
    }
    if ob.is_instance_of::<PyFloat>() {
        let v: f64 = ob.extract()?;
        return Ok(match hint {
            Some(d) if d.is_integer() && v.fract() != 0.0 => {
                return Err(PyTypeError::new_err(format!(
                    "Cannot convert {v} to EagerTensor of dtype {}",
                    d.name()
                )))
            }
            Some(d) => scalar_of(d, v),
            None => Tensor::scalar(v as f32),
        });
    }
    if ob.is_instance_of::<PyInt>() {
        match hint {
            // TF converts straight to these: uint64 takes all of 0..2**64, floats
            // take any int (rounded).
            Some(DType::U64) => {
                if let Ok(v) = ob.extract::<u64>() {
                    return Ok(Tensor::scalar(v));
                }
            }
            Some(d) if d.is_floating() || d.is_complex() => {
                let v: f64 = ob.extract()?;
                return Ok(scalar_of(d, v));
            }
            _ => {}
        }
        let v: i64 = ob.extract().map_err(|_| {
            PyTypeError::new_err("Can't convert Python int: it does not fit in int64")
        })?;
        return Ok(match hint {
            Some(DType::I64) => Tensor::scalar(v),
            // As TF: an int64 cast to the requested integer dtype (wrapping).
            Some(DType::I32) => Tensor::scalar(v as i32),
            Some(d) => Tensor::new(ops::cast_data(Tensor::scalar(v).data(), d)?),
            None if v >= i32::MIN as i64 && v <= i32::MAX as i64 => Tensor::scalar(v as i32),
            None => Tensor::scalar(v),
        });
    }
    if ob.is_instance_of::<PyComplex>() {
        let c: Complex64 = ob.extract()?;
        return Ok(match hint {
            Some(DType::C64) => Tensor::scalar(Complex32::new(c.re as f32, c.im as f32)),
            _ => Tensor::scalar(c),
        });
    }
    if let Ok(a) = ob.cast::<PyUntypedArray>() {
        let t = from_numpy(a)?;
        return Ok(match hint {
            Some(d) if d != t.dtype() => ops::cast(&t, d)?,
            _ => t,
        });
    }
    if ob.is_instance_of::<PyList>() || ob.is_instance_of::<PyTuple>() || ob.hasattr("__array__")? {
        let py = ob.py();
        let np = py.import("numpy")?;
        let is_seq = ob.is_instance_of::<PyList>() || ob.is_instance_of::<PyTuple>();
        let arr = match np.call_method1("asarray", (ob,)) {
            Ok(arr) => arr,
            // numpy's words for a ragged or odd list are not TF's: say TF's.
            Err(e) if is_seq => return Err(sequence_error(ob)?.unwrap_or(e)),
            Err(e) => return Err(e),
        };
        if is_seq {
            if let Ok(a) = arr.cast::<PyUntypedArray>() {
                if matches!(a.dtype().kind(), b'O' | b'U' | b'S') {
                    if let Some(e) = sequence_error(ob)? {
                        return Err(e);
                    }
                }
            }
        }
        let a = arr.cast::<PyUntypedArray>().map_err(|_| {
            PyTypeError::new_err(format!(
                "Cannot convert {} to a tensor",
                ob.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })?;
        let t = from_numpy(a)?;
        let is_py = ob.is_instance_of::<PyList>() || ob.is_instance_of::<PyTuple>();
        let target = match (hint, t.dtype()) {
            (Some(d), _) => d,
            // Python lists follow TF's defaults, not numpy's: float32, and int32
            // unless a value needs int64.
            (None, DType::F64) if is_py => DType::F32,
            (None, DType::I64) if is_py && fits_i32(&t) => DType::I32,
            (None, DType::U64) if is_py => {
                return Err(PyTypeError::new_err(
                    "Can't convert Python int: it does not fit in int64",
                ))
            }
            (None, d) => d,
        };
        return Ok(if target != t.dtype() {
            ops::cast(&t, target)?
        } else {
            t
        });
    }
    if let Some(t) = dense_of(ob)? {
        return Ok(t);
    }
    if ob.is_none() {
        // TF's eager conversion error (an unknown size from a trace's `x.shape` is None).
        return Err(none_error());
    }
    Err(PyTypeError::new_err(format!(
        "Cannot convert object of type {} to a gradtape Tensor",
        ob.get_type().name()?
    )))
}

/// TF's error for `None` where a tensor or a size is wanted.
pub(crate) fn none_error() -> PyErr {
    PyValueError::new_err(
        "Attempt to convert a value (None) with an unsupported type (<class 'NoneType'>) to a Tensor.",
    )
}

/// What a leaf of a Python sequence is, for TF's conversion errors.
#[derive(Clone, Copy, PartialEq)]
enum Leaf {
    Number,
    Text,
}

/// TF's error for a Python sequence numpy could not make a numeric array of (only
/// called once conversion failed): `ValueError` "Can't convert non-rectangular Python
/// sequence to Tensor.", "Attempt to convert a value (None) with an unsupported type
/// (<class 'NoneType'>) to a Tensor." or "Can't convert Python sequence with mixed
/// types to Tensor.". `None` when the sequence is rectangular text only (the caller's
/// no-string-dtype error stands).
fn sequence_error(ob: &Bound<'_, PyAny>) -> PyResult<Option<PyErr>> {
    fn is_seq(x: &Bound<'_, PyAny>) -> bool {
        x.is_instance_of::<PyList>() || x.is_instance_of::<PyTuple>()
    }
    // The shape, from the first element at each depth (as TF infers it).
    let mut shape = Vec::new();
    let mut cur = ob.clone();
    while is_seq(&cur) {
        let n = cur.len()?;
        shape.push(n);
        if n == 0 {
            break;
        }
        cur = cur.get_item(0)?;
    }
    fn walk(
        x: &Bound<'_, PyAny>,
        depth: usize,
        shape: &[usize],
        kinds: &mut Vec<Leaf>,
    ) -> PyResult<Option<PyErr>> {
        let rect =
            || PyValueError::new_err("Can't convert non-rectangular Python sequence to Tensor.");
        if depth < shape.len() {
            if !is_seq(x) || x.len()? != shape[depth] {
                return Ok(Some(rect()));
            }
            for item in x.try_iter()? {
                if let Some(e) = walk(&item?, depth + 1, shape, kinds)? {
                    return Ok(Some(e));
                }
            }
            return Ok(None);
        }
        if is_seq(x) {
            return Ok(Some(rect()));
        }
        let kind = if x.is_instance_of::<pyo3::types::PyString>()
            || x.is_instance_of::<pyo3::types::PyBytes>()
        {
            Leaf::Text
        } else if x.is_instance_of::<PyInt>()
            || x.is_instance_of::<PyFloat>()
            || x.is_instance_of::<PyComplex>()
            || x.is_instance_of::<PyBool>()
            || x.is_instance_of::<PyTensor>()
            || x.is_instance_of::<PyVariable>()
            || x.hasattr("__array__")?
        {
            Leaf::Number
        } else {
            return Ok(Some(PyValueError::new_err(format!(
                "Attempt to convert a value ({}) with an unsupported type ({}) to a Tensor.",
                x.repr()?,
                x.get_type().repr()?
            ))));
        };
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
        Ok(None)
    }
    let mut kinds = Vec::new();
    if let Some(e) = walk(ob, 0, &shape, &mut kinds)? {
        return Ok(Some(e));
    }
    Ok((kinds.len() > 1).then(|| {
        PyValueError::new_err("Can't convert Python sequence with mixed types to Tensor.")
    }))
}

/// Whether every element of an int64 tensor fits in int32.
fn fits_i32(t: &Tensor) -> bool {
    t.array::<i64>()
        .map(|a| a.iter().all(|&v| i32::try_from(v).is_ok()))
        .unwrap_or(false)
}

/// Every dtype with a numpy twin in numpy itself (all but `bfloat16` and `string`).
macro_rules! numpy_dtypes {
    ($m:ident ! ($($pre:tt)*)) => {
        $m!($($pre)* [F16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, Bool, C64, C128])
    };
}

/// `dispatch!` over the dtypes numpy itself has; `bfloat16` and `string` (which
/// callers convert before) raise `TypeError`.
macro_rules! np_dispatch {
    (@ $data:expr, $a:ident => $body:expr, [$($dt:ident),*]) => {
        match $data {
            $(crate::tensor::Data::$dt($a) => $body,)*
            d => {
                return Err(PyTypeError::new_err(format!(
                    "a {} tensor has no numpy buffer to share",
                    d.dtype()
                )))
            }
        }
    };
    ($data:expr, $a:ident => $body:expr) => {
        numpy_dtypes!(np_dispatch!(@ $data, $a => $body,))
    };
}

macro_rules! from_np {
    ($a:expr, $($t:ty),*) => {$(
        if let Ok(x) = $a.cast::<PyArrayDyn<$t>>() {
            // rust-numpy's `as_array` asserts (panics) on empty arrays whose strides
            // are not all zero, e.g. `np.empty((0, 3))`; they hold no data to copy.
            if x.is_empty() {
                let arr = ArrayD::<$t>::from_shape_vec(x.shape(), Vec::new())
                    .expect("a shape with a zero dimension holds no elements");
                return Ok(Tensor::from_array(arr));
            }
            let ro = x.readonly();
            let view = ro.as_array();
            let arr: ArrayD<$t> = crate::kernels::elementwise::to_standard(&view, view.shape())?;
            return Ok(Tensor::from_array(arr));
        }
    )*};
}

/// Copies a numpy array into a new tensor of the same dtype. A non-native byte
/// order is swapped into native storage (same values); numpy dtypes TF has no
/// equivalent of raise `TypeError`.
pub(crate) fn from_numpy(a: &Bound<'_, PyUntypedArray>) -> PyResult<Tensor> {
    from_np!(a, f32, f64, i32, i64, bool, Complex32, Complex64, f16, i8, i16, u8, u16, u32, u64);
    let dtype = a.dtype();
    let kind: u8 = dtype
        .getattr("kind")?
        .extract::<String>()?
        .bytes()
        .next()
        .unwrap_or(b'?');
    let size: usize = dtype.getattr("itemsize")?.extract()?;
    let native = match (kind, size) {
        (b'b', 1) => "bool",
        (b'i', 1) => "int8",
        (b'i', 2) => "int16",
        (b'i', 4) => "int32",
        (b'i', 8) => "int64",
        (b'u', 1) => "uint8",
        (b'u', 2) => "uint16",
        (b'u', 4) => "uint32",
        (b'u', 8) => "uint64",
        (b'f', 2) => "float16",
        (b'f', 4) => "float32",
        (b'f', 8) => "float64",
        (b'c', 8) => "complex64",
        (b'c', 16) => "complex128",
        (b'U' | b'S' | b'O' | b'T', _) => return from_numpy_text(a),
        (b'V', 2) if dtype.getattr("name")?.extract::<String>()? == "bfloat16" => {
            // ml_dtypes.bfloat16: the same 16 bits.
            let bits = a.call_method1("view", ("uint16",))?;
            let bits = from_numpy(bits.cast::<PyUntypedArray>()?)?;
            let a = bits.array::<u16>()?;
            return Ok(Tensor::from_array(a.map(|&b| bf16::from_bits(b))));
        }
        _ => {
            return Err(PyTypeError::new_err(format!(
                "Cannot convert a numpy array of dtype {dtype} to a gradtape Tensor: \
                 TensorFlow has no equivalent dtype"
            )))
        }
    };
    // Same kind and size, another spelling or byte order ('>f4', 'l' vs 'q'): the
    // same values in the native layout.
    let conv = a.call_method1("astype", (native,))?;
    let conv = conv.cast::<PyUntypedArray>()?;
    from_np!(conv, f32, f64, i32, i64, bool, Complex32, Complex64, f16, i8, i16, u8, u16, u32, u64);
    Err(PyTypeError::new_err(format!(
        "Cannot convert a numpy array of dtype {dtype} to a gradtape Tensor"
    )))
}

/// A numpy array of `str` (`U`), `bytes` (`S`) or objects that are all `str` or
/// `bytes` as a `string` tensor (`str` encoded as UTF-8, as TF does).
fn from_numpy_text(a: &Bound<'_, PyUntypedArray>) -> PyResult<Tensor> {
    let shape = a.shape().to_vec();
    let items = a.call_method0("ravel")?.call_method0("tolist")?;
    let mut v = Vec::with_capacity(a.len());
    for x in items.try_iter()? {
        let x = x?;
        if let Ok(b) = x.cast::<pyo3::types::PyBytes>() {
            v.push(TStr::new(b.as_bytes()));
        } else if let Ok(s) = x.cast::<pyo3::types::PyString>() {
            v.push(TStr::new(s.to_cow()?.as_bytes()));
        } else {
            return Err(PyTypeError::new_err(format!(
                "Cannot convert a numpy array of dtype {} holding {} to a gradtape Tensor: \
                 only str and bytes objects make a string tensor",
                a.dtype(),
                x.get_type().name()?
            )));
        }
    }
    Ok(Tensor::from_vec(v, &shape)?)
}

/// A `string` tensor as a numpy array of `bytes` objects (dtype object).
fn text_to_numpy<'py>(
    py: Python<'py>,
    a: &ndarray::ArcArray<TStr, ndarray::IxDyn>,
) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    let out = np.call_method1("empty", (a.shape().to_vec(), "object"))?;
    let flat = out.call_method0("ravel")?;
    for (i, s) in a.iter().enumerate() {
        flat.set_item(i, pyo3::types::PyBytes::new(py, s.as_bytes()))?;
    }
    Ok(out)
}

/// A `bfloat16` tensor as an `ml_dtypes.bfloat16` array (TF's `.numpy()`), or as
/// `float32` when `ml_dtypes` is not installed.
fn bf16_to_numpy<'py>(
    py: Python<'py>,
    a: &ndarray::ArcArray<bf16, ndarray::IxDyn>,
) -> PyResult<Bound<'py, PyAny>> {
    match py.import("ml_dtypes") {
        Ok(ml) => {
            let bits = a.map(|v| v.to_bits());
            let arr = PyArrayDyn::from_owned_array(py, bits).into_any();
            arr.call_method1("view", (ml.getattr("bfloat16")?,))
        }
        Err(_) => Ok(PyArrayDyn::from_owned_array(py, a.map(|v| f32::from(*v))).into_any()),
    }
}

/// numpy's limit: the product of an array's non-zero dimensions times its item size
/// must fit `isize`, even when a zero dimension leaves it empty (`[0, 2**62]` int64 is
/// a valid tensor but no numpy array). numpy's own error, a `ValueError`, instead of
/// a null array.
fn check_numpy_size(t: &Tensor) -> PyResult<()> {
    let nonzero = t
        .shape()
        .iter()
        .filter(|&&d| d != 0)
        .try_fold(1usize, |n, &d| n.checked_mul(d));
    let fits = nonzero
        .and_then(|n| n.checked_mul(crate::size::dtype_bytes(t.dtype())))
        .is_some_and(|b| b <= isize::MAX as usize);
    if fits {
        Ok(())
    } else {
        Err(pyo3::exceptions::PyValueError::new_err(format!(
            "array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size (shape {:?}, dtype {})",
            t.shape(),
            t.dtype()
        )))
    }
}

/// A numpy array holding a copy of the tensor's elements (0-d for scalars).
pub(crate) fn to_numpy<'py>(py: Python<'py>, t: &Tensor) -> PyResult<Bound<'py, PyAny>> {
    check_numpy_size(t)?;
    fn owned<T: Copy + Send + Sync>(
        a: &ndarray::ArcArray<T, ndarray::IxDyn>,
    ) -> crate::Result<ArrayD<T>> {
        crate::kernels::elementwise::to_standard(&a.view(), a.shape())
    }
    Ok(match t.data() {
        crate::tensor::Data::Str(a) => text_to_numpy(py, a)?,
        crate::tensor::Data::BF16(a) => bf16_to_numpy(py, a)?,
        d => np_dispatch!(d, a => PyArrayDyn::from_owned_array(py, owned(a)?).into_any()),
    })
}

/// Keeps a tensor's storage alive for numpy arrays that view it.
#[pyclass(frozen, name = "_Storage", module = "gradtape")]
pub(crate) struct Storage {
    _t: Tensor,
}

/// A read-only numpy array sharing the tensor's storage (no copy). Tensors are
/// immutable, so the view is marked non-writeable; `Storage` keeps the buffer alive
/// for as long as numpy holds the view.
pub(crate) fn numpy_view<'py>(py: Python<'py>, t: &Tensor) -> PyResult<Bound<'py, PyAny>> {
    check_numpy_size(t)?;
    if matches!(t.dtype(), DType::Str | DType::BF16) {
        // No numpy dtype to view the storage as: a copy.
        return to_numpy(py, t);
    }
    let keep = Bound::new(py, Storage { _t: t.clone() })?.into_any();
    // SAFETY: the arrays borrowed below live in `t`'s shared buffers, which `keep`
    // (a clone of `t`) owns until numpy drops the view.
    let arr =
        unsafe { np_dispatch!(t.data(), a => PyArrayDyn::borrow_from_array(a, keep).into_any()) };
    // SAFETY: `arr` is a freshly created ndarray object; clearing a flag bit is how
    // numpy's own `setflags(write=False)` marks it read-only.
    unsafe {
        let p = arr.as_ptr() as *mut numpy::npyffi::PyArrayObject;
        (*p).flags &= !numpy::npyffi::NPY_ARRAY_WRITEABLE;
    }
    Ok(arr)
}

/// A new zero-filled tensor and a *writeable* numpy array over its storage: the way
/// `gt.distributed` receives a collective's result straight into a tensor (MPI writes
/// through the array's buffer; no copy afterwards). Private: the caller writes only
/// before it hands the tensor to anything else, and then drops the array.
#[pyfunction]
pub(crate) fn _fresh_buffer<'py>(
    py: Python<'py>,
    shape: Vec<usize>,
    dtype: &Bound<'py, PyAny>,
) -> PyResult<(PyTensor, Bound<'py, PyAny>)> {
    let dt = to_dtype(dtype)?;
    crate::size::check_shape("FreshBuffer", &shape, dt)?;
    macro_rules! fresh {
        ($($d:ident => $t:ty),*) => {
            match dt {
                $(DType::$d => Tensor::from_array(crate::size::try_full::<$t>(
                    "FreshBuffer", &shape, <$t>::default())?),)*
                d => return Err(crate::error::Error::unsupported("FreshBuffer", d).into()),
            }
        };
    }
    let t = fresh!(F16 => f16, F32 => f32, F64 => f64, I8 => i8, I16 => i16, I32 => i32,
        I64 => i64, U8 => u8, U16 => u16, U32 => u32, U64 => u64, Bool => bool,
        C64 => Complex32, C128 => Complex64);
    check_numpy_size(&t)?;
    let keep = Bound::new(py, Storage { _t: t.clone() })?.into_any();
    // SAFETY: the array views `t`'s freshly allocated, standard-layout buffer, which
    // `keep` (a clone of `t`) owns until numpy drops the view. The tensor has not been
    // shown to any code yet: the engine reads it only after the caller's writes
    // through this view are done (see above), so no read races a write.
    let arr =
        unsafe { np_dispatch!(t.data(), a => PyArrayDyn::borrow_from_array(a, keep).into_any()) };
    Ok((PyTensor::from(t), arr))
}

/// [`_fresh_buffer`] holding a copy of `t` (standard layout) instead of zeros: for an
/// in-place reduction into the result (MPI's `IN_PLACE`), one pass over the data
/// fewer than zeros plus a separate receive buffer. The same rules for the view apply.
#[pyfunction]
pub(crate) fn _fresh_copy<'py>(
    py: Python<'py>,
    t: PyRef<'py, PyTensor>,
) -> PyResult<(PyTensor, Bound<'py, PyAny>)> {
    let src = t.t.clone();
    let copy =
        np_dispatch!(src.data(), a => Tensor::from_array(a.as_standard_layout().into_owned()));
    check_numpy_size(&copy)?;
    let keep = Bound::new(py, Storage { _t: copy.clone() })?.into_any();
    // SAFETY: as in `_fresh_buffer`: the array views `copy`'s new standard-layout
    // buffer, kept alive by `keep`; no code has seen the tensor yet.
    let arr = unsafe {
        np_dispatch!(copy.data(), a => PyArrayDyn::borrow_from_array(a, keep).into_any())
    };
    Ok((PyTensor::from(copy), arr))
}

/// Parses a dtype argument: a `gt.DType`, a string, or a numpy dtype/type.
pub(crate) fn to_dtype(ob: &Bound<'_, PyAny>) -> PyResult<DType> {
    if let Ok(d) = ob.cast::<super::tensor::PyDType>() {
        return Ok(d.get().dt);
    }
    if let Ok(s) = ob.extract::<String>() {
        return DType::from_name(&s)
            .ok_or_else(|| PyTypeError::new_err(format!("Unknown dtype: {s:?}")));
    }
    // numpy dtypes and scalar types, and Python's float/int/bool/complex.
    let py = ob.py();
    if ob.is(py.get_type::<PyFloat>()) {
        return Ok(DType::F32);
    }
    if ob.is(py.get_type::<PyBool>()) {
        return Ok(DType::Bool);
    }
    if ob.is(py.get_type::<PyInt>()) {
        return Ok(DType::I32);
    }
    if ob.is(py.get_type::<PyComplex>()) {
        return Ok(DType::C128);
    }
    let np = py.import("numpy")?;
    if let Ok(d) = np.call_method1("dtype", (ob,)) {
        let name: String = d.getattr("name")?.extract()?;
        if let Some(dt) = DType::from_name(&name) {
            return Ok(dt);
        }
    }
    Err(PyTypeError::new_err(format!(
        "Cannot interpret {} as a dtype",
        ob.repr()?
    )))
}
