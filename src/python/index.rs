//! `x[key]`: Python index expressions to [`Index`] lists.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyEllipsis, PyInt, PySlice, PyTuple};

use super::convert::as_tensor;
use crate::ops::{self, Index};
use crate::tensor::Tensor;

fn opt_int(ob: &Bound<'_, PyAny>) -> PyResult<Option<isize>> {
    if ob.is_none() {
        Ok(None)
    } else {
        Ok(Some(ob.extract::<isize>().or_else(|_| {
            ob.call_method0("__index__")?.extract::<isize>()
        })?))
    }
}

fn one(ob: &Bound<'_, PyAny>) -> PyResult<Index> {
    if ob.is_none() {
        return Ok(Index::NewAxis);
    }
    if ob.is_instance_of::<PyEllipsis>() {
        return Ok(Index::Ellipsis);
    }
    if let Ok(s) = ob.cast::<PySlice>() {
        let step = opt_int(&s.getattr("step")?)?.unwrap_or(1);
        return Ok(Index::Slice {
            start: opt_int(&s.getattr("start")?)?,
            stop: opt_int(&s.getattr("stop")?)?,
            step,
        });
    }
    if ob.is_instance_of::<PyInt>() {
        return Ok(Index::Int(ob.extract()?));
    }
    if let Some(t) = as_tensor(ob) {
        if t.dtype().is_integer() && t.ndim() == 0 {
            return Ok(Index::Int(t.to_f64_scalar()? as isize));
        }
    }
    if let Ok(i) = ob.call_method0("__index__") {
        return Ok(Index::Int(i.extract()?));
    }
    Err(PyTypeError::new_err(format!(
        "Only integers, slices (`:`), ellipsis (`...`), gt.newaxis (`None`) and scalar int32/int64 tensors are valid indices, got {}",
        ob.repr()?
    )))
}

pub(crate) fn getitem(py: Python<'_>, x: &Tensor, key: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    let idx: Vec<Index> = if let Ok(t) = key.cast::<PyTuple>() {
        t.iter().map(|k| one(&k)).collect::<PyResult<_>>()?
    } else {
        vec![one(key)?]
    };
    super::heavy(py, x.size(), || ops::strided_slice(x, &idx))
}
