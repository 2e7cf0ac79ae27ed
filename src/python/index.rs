//! `x[key]`: Python index expressions to [`Index`] lists.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyEllipsis, PyInt, PySlice, PyTuple};

use super::convert::as_tensor;
use crate::ops::{self, Index, Part, Place};
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

/// A scalar integer tensor (a traced one too) and its value now.
fn int_tensor(ob: &Bound<'_, PyAny>) -> Option<(isize, Tensor)> {
    let t = as_tensor(ob)?;
    if !(t.dtype().is_integer() && t.ndim() == 0) {
        return None;
    }
    let i = t.to_i64_scalar()?;
    Some((
        isize::try_from(i).unwrap_or(if i < 0 { isize::MIN } else { isize::MAX }),
        t,
    ))
}

/// A tensor an index entry reads: which part of the entry it gives (an integer index, or
/// a slice bound: `Place` without the entry's position).
type Read = (fn(usize) -> Place, Tensor);

/// One index entry, and the scalar int tensors it reads (inputs of the slice, so that a
/// traced `x[i]` or `x[:n]` reads `i` and `n` on every call).
fn one(ob: &Bound<'_, PyAny>) -> PyResult<(Index, Vec<Read>)> {
    if let Some((i, t)) = int_tensor(ob) {
        return Ok((Index::Int(i), vec![(Place::Int as fn(usize) -> Place, t)]));
    }
    if let Ok(s) = ob.cast::<PySlice>() {
        let mut reads: Vec<Read> = Vec::new();
        let mut bound = |name: &str, part: fn(usize) -> Place| -> PyResult<Option<isize>> {
            let b = s.getattr(name)?;
            if let Some((i, t)) = int_tensor(&b) {
                reads.push((part, t));
                return Ok(Some(i));
            }
            opt_int(&b)
        };
        let start = bound("start", |k| Place::Part(Part::Start(k)))?;
        let stop = bound("stop", |k| Place::Part(Part::Stop(k)))?;
        let step = bound("step", |k| Place::Part(Part::Step(k)))?.unwrap_or(1);
        return Ok((Index::Slice { start, stop, step }, reads));
    }
    Ok((plain(ob)?, Vec::new()))
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
    let entries: Vec<(Index, Vec<Read>)> = if let Ok(t) = key.cast::<PyTuple>() {
        t.iter().map(|k| one(&k)).collect::<PyResult<_>>()?
    } else {
        vec![one(key)?]
    };
    // Tensors read by the index are inputs after `x`; the node's key has 0 in their
    // places (a step of 0 is written in when the node runs).
    let mut xs = vec![x.clone()];
    let mut at = Vec::new();
    let mut idx = Vec::with_capacity(entries.len());
    for (k, (mut i, reads)) in entries.into_iter().enumerate() {
        for (place, t) in reads {
            let place = place(k);
            match (&mut i, place) {
                (Index::Int(v), Place::Int(_)) => *v = 0,
                (Index::Slice { start, .. }, Place::Part(Part::Start(_))) => *start = Some(0),
                (Index::Slice { stop, .. }, Place::Part(Part::Stop(_))) => *stop = Some(0),
                (Index::Slice { step, .. }, Place::Part(Part::Step(_))) => *step = 1,
                _ => {}
            }
            xs.push(t);
            at.push(place);
        }
        idx.push(i);
    }
    let key = || format!("{idx:?},{at:?}");
    let (template, places) = (idx.clone(), at.clone());
    let f = ops::strided_slice_node(template, places);
    super::graph::call_n(py, "StridedSlice", key, &xs, f)
}
