//! DLPack export of tensors (`Tensor.__dlpack__` / `__dlpack_device__`): a legacy
//! `"dltensor"` capsule that points at the tensor's own storage (no copy) and keeps
//! it alive until the consumer calls the deleter. `gt.from_dlpack` (Python) imports
//! through numpy.

use std::ffi::{c_void, CStr};

use pyo3::ffi;
use pyo3::prelude::*;

use crate::dtype::DType;
use crate::tensor::{Data, Tensor};

/// `kDLCPU`.
pub(crate) const CPU: i32 = 1;

#[repr(C)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// The managed tensor with what it points into: the tensor (its storage) and the
/// shape and strides arrays. `managed` comes first, so a pointer to it is a pointer to
/// the holder.
#[repr(C)]
struct Holder {
    managed: DLManagedTensor,
    _tensor: Tensor,
    shape: Vec<i64>,
    strides: Vec<i64>,
}

const NAME: &CStr = c"dltensor";

unsafe extern "C" fn deleter(m: *mut DLManagedTensor) {
    if !m.is_null() {
        // SAFETY: `m` is the first field of a `Holder` leaked by `to_capsule`, and the
        // DLPack contract calls the deleter once.
        drop(unsafe { Box::from_raw(m as *mut Holder) });
    }
}

/// Frees the managed tensor of a capsule no consumer took (a consumer renames it
/// `"used_dltensor"` and becomes responsible for the deleter).
unsafe extern "C" fn capsule_destructor(cap: *mut ffi::PyObject) {
    // SAFETY: called by Python with the capsule being destroyed.
    unsafe {
        if ffi::PyCapsule_IsValid(cap, NAME.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(cap, NAME.as_ptr()) as *mut DLManagedTensor;
            if !m.is_null() {
                if let Some(d) = (*m).deleter {
                    d(m);
                }
            }
        }
    }
}

fn data_type(dt: DType) -> DLDataType {
    // kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLComplex 5, kDLBool 6
    // (`string` never gets here: `to_capsule` refuses it).
    let code = match dt {
        DType::BF16 => 4,
        DType::Str => 0,
        DType::I8 | DType::I16 | DType::I32 | DType::I64 => 0,
        DType::U8 | DType::U16 | DType::U32 | DType::U64 => 1,
        DType::F16 | DType::F32 | DType::F64 => 2,
        DType::C64 | DType::C128 => 5,
        DType::Bool => 6,
    };
    DLDataType {
        code,
        bits: (dt.size() * 8) as u8,
        lanes: 1,
    }
}

/// A `"dltensor"` capsule viewing `t`'s storage.
pub(crate) fn to_capsule<'py>(py: Python<'py>, t: &Tensor) -> PyResult<Bound<'py, PyAny>> {
    let (ptr, shape, strides): (*const c_void, Vec<i64>, Vec<i64>) = match t.data() {
        Data::F16(a) => (a.as_ptr().cast(), dims(a.shape()), dims_i(a.strides())),
        Data::F32(a) => (a.as_ptr().cast(), dims(a.shape()), dims_i(a.strides())),
        Data::F64(a) => (a.as_ptr().cast(), dims(a.shape()), dims_i(a.strides())),
        Data::I8(a) => (a.as_ptr().cast(), dims(a.shape()), dims_i(a.strides())),
        Data::I16(a) => (a.as_ptr().cast(), dims(a.shape()), dims_i(a.strides())),
        Data::I32(a) => (a.as_ptr().cast(), dims(a.shape()), dims_i(a.strides())),
        Data::I64(a) => (a.as_ptr().cast(), dims(a.shape()), dims_i(a.strides())),
        Data::U8(a) => (a.as_ptr().cast(), dims(a.shape()), dims_i(a.strides())),
        Data::U16(a) => (a.as_ptr().cast(), dims(a.shape()), dims_i(a.strides())),
        Data::U32(a) => (a.as_ptr().cast(), dims(a.shape()), dims_i(a.strides())),
        Data::U64(a) => (a.as_ptr().cast(), dims(a.shape()), dims_i(a.strides())),
        Data::Bool(a) => (a.as_ptr().cast(), dims(a.shape()), dims_i(a.strides())),
        Data::C64(a) => (a.as_ptr().cast(), dims(a.shape()), dims_i(a.strides())),
        Data::C128(a) => (a.as_ptr().cast(), dims(a.shape()), dims_i(a.strides())),
        Data::BF16(a) => (a.as_ptr().cast(), dims(a.shape()), dims_i(a.strides())),
        Data::Str(_) => {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "DLPack has no string dtype: a string tensor cannot be exported",
            ))
        }
    };
    let mut holder = Box::new(Holder {
        managed: DLManagedTensor {
            dl_tensor: DLTensor {
                data: ptr as *mut c_void,
                device: DLDevice {
                    device_type: CPU,
                    device_id: 0,
                },
                ndim: shape.len() as i32,
                dtype: data_type(t.dtype()),
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(deleter),
        },
        _tensor: t.clone(),
        shape,
        strides,
    });
    holder.managed.dl_tensor.shape = holder.shape.as_mut_ptr();
    holder.managed.dl_tensor.strides = holder.strides.as_mut_ptr();
    let raw = Box::into_raw(holder);
    // SAFETY: `raw` is a valid, leaked `Holder` whose first field is the managed
    // tensor; the capsule (or the consumer that takes it) frees it once.
    unsafe {
        (*raw).managed.manager_ctx = raw.cast();
        let cap = ffi::PyCapsule_New(raw.cast(), NAME.as_ptr(), Some(capsule_destructor));
        if cap.is_null() {
            drop(Box::from_raw(raw));
        }
        Bound::from_owned_ptr_or_err(py, cap)
    }
}

fn dims(s: &[usize]) -> Vec<i64> {
    s.iter().map(|&d| d as i64).collect()
}

fn dims_i(s: &[isize]) -> Vec<i64> {
    s.iter().map(|&d| d as i64).collect()
}

/// A tensor with storage of its own (`__dlpack__(copy=True)`).
pub(crate) fn deep_copy(t: &Tensor) -> Tensor {
    macro_rules! own {
        ([$($v:ident),*]) => {
            match t.data() {
                $(Data::$v(a) => Data::$v(a.to_owned().into_shared()),)*
            }
        };
    }
    Tensor::new(all_dtypes!(own!()))
}
