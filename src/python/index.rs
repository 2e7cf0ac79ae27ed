//! `x[key]`: Python index expressions to [`Index`] lists.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyEllipsis, PyInt, PySlice, PyTuple};

use super::convert::as_tensor;
use crate::ops::{self, Index};
use crate::tensor::Tensor;

/// A slice bound or step: `None`, or an integer (anything with `__index__`). Integers
/// beyond `isize` are clamped to it, which slices the same (numpy's rule).
fn opt_int(ob: &Bound<'_, PyAny>) -> PyResult<Option<isize>> {
    if ob.is_none() {
        return Ok(None);
    }
    if let Ok(i) = ob.extract::<isize>() {
        return Ok(Some(i));
    }
    let i = ob.call_method0("__index__")?;
    match i.extract::<isize>() {
        Ok(i) => Ok(Some(i)),
        Err(_) if i.lt(0)? => Ok(Some(isize::MIN)),
        Err(_) => Ok(Some(isize::MAX)),
    }
}

/// One index entry; a scalar int tensor index also gives the tensor (an input of the
/// slice, so that a traced `x[i]` reads `i` on every call).
fn one(ob: &Bound<'_, PyAny>) -> PyResult<(Index, Option<Tensor>)> {
    if let Some(t) = as_tensor(ob) {
        if t.dtype().is_integer() && t.ndim() == 0 {
            if let Some(i) = t.to_i64_scalar() {
                return Ok((Index::Int(i as isize), Some(t)));
            }
        }
    }
    Ok((plain(ob)?, None))
}

fn plain(ob: &Bound<'_, PyAny>) -> PyResult<Index> {
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
        // An int beyond isize is out of range for any dimension: clamp, and let the
        // bounds check report it.
        return Ok(Index::Int(match ob.extract::<isize>() {
            Ok(i) => i,
            Err(_) if ob.lt(0)? => isize::MIN,
            Err(_) => isize::MAX,
        }));
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
    let entries: Vec<(Index, Option<Tensor>)> = if let Ok(t) = key.cast::<PyTuple>() {
        t.iter().map(|k| one(&k)).collect::<PyResult<_>>()?
    } else {
        vec![one(key)?]
    };
    // Scalar tensor indices are inputs after `x`: the node's key has 0 in their places.
    let mut xs = vec![x.clone()];
    let mut at = Vec::new();
    let mut idx = Vec::with_capacity(entries.len());
    for (k, (i, t)) in entries.into_iter().enumerate() {
        match t {
            Some(t) => {
                xs.push(t);
                at.push(k);
                idx.push(Index::Int(0));
            }
            None => idx.push(i),
        }
    }
    let key = || format!("{idx:?},{at:?}");
    let (template, places) = (idx.clone(), at.clone());
    let f = ops::strided_slice_node(template, places);
    super::graph::call_n(py, "StridedSlice", key, &xs, f)
}
