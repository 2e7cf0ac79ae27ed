//! Argument conversion shared by the op bindings: operand pairs, axes and shapes.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use super::convert::{as_tensor, convert_value, to_dtype, to_tensor};
use crate::dtype::DType;
use crate::ops;
use crate::tensor::Tensor;

/// Converts two operands: a Python value takes the dtype of the tensor beside it.
pub(crate) fn pair(x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<(Tensor, Tensor)> {
    match (as_tensor(x), as_tensor(y)) {
        (Some(a), Some(b)) => Ok((a, b)),
        (Some(a), None) => {
            let b = convert_value(y, Some(a.dtype()))?;
            Ok((a, b))
        }
        (None, Some(b)) => Ok((convert_value(x, Some(b.dtype()))?, b)),
        (None, None) => {
            let a = convert_value(x, None)?;
            let b = convert_value(y, Some(a.dtype()))?;
            Ok((a, b))
        }
    }
}

/// Refuses a tensor computed inside the `gt.function` being traced where the binding
/// needs its value now (an axis, a size): its value at trace time would be frozen.
pub(crate) fn static_value(t: &Tensor, what: &str) -> PyResult<()> {
    if crate::graph::is_tracing() && crate::graph::lookup(t) {
        return Err(PyTypeError::new_err(format!(
            "{what} computed inside a gt.function (a symbolic tensor) is not supported \
             here: pass a Python value (a shape from `x.shape`, an int), or use an op that \
             takes it as a tensor (gt.reshape, gt.zeros, gt.ones, gt.fill and \
             gt.broadcast_to take a shape tensor)"
        )));
    }
    Ok(())
}

/// A shape given as a tensor computed in the trace (`gt.shape(x)`, or a list holding
/// such scalars): the 1-D int64 tensor the op reads when the graph runs. `None` for a
/// static shape (read now with [`shape_arg`]).
pub(crate) fn dynamic_shape(py: Python<'_>, ob: &Bound<'_, PyAny>) -> PyResult<Option<Tensor>> {
    if !crate::graph::is_tracing() {
        return Ok(None);
    }
    let symbolic = |x: &Bound<'_, PyAny>| as_tensor(x).is_some_and(|t| crate::graph::lookup(&t));
    let items: Vec<Bound<'_, PyAny>> =
        if ob.is_instance_of::<PyList>() || ob.is_instance_of::<PyTuple>() {
            ob.try_iter()?.collect::<PyResult<_>>()?
        } else if symbolic(ob) {
            let t = to_tensor(ob, None)?;
            let f = |x: &Tensor| ops::cast(x, DType::I64);
            return Ok(Some(super::graph::call(
                py,
                "Cast",
                || "I64".into(),
                &t,
                f,
            )?));
        } else {
            return Ok(None);
        };
    if !items.iter().any(symbolic) {
        return Ok(None);
    }
    let parts: Vec<Tensor> = items
        .iter()
        .map(|x| {
            let t = to_tensor(x, Some(DType::I64))?;
            super::graph::call(
                py,
                "Cast",
                || "I64".into(),
                &t,
                |x: &Tensor| ops::cast(x, DType::I64),
            )
        })
        .collect::<PyResult<_>>()?;
    Ok(Some(super::graph::call_n(
        py,
        "Pack",
        || "0".into(),
        &parts,
        |xs| ops::stack(xs, 0),
    )?))
}

/// The dims a shape tensor holds when the graph runs.
pub(crate) use crate::ops::{dims_of, udims_of};

/// An `axis` argument: None, an int, a list/tuple of ints, or an int tensor.
pub(crate) fn axes_arg(ob: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<isize>>> {
    let Some(ob) = ob else { return Ok(None) };
    if ob.is_none() {
        return Ok(None);
    }
    if let Ok(i) = ob.extract::<isize>() {
        return Ok(Some(vec![i]));
    }
    if let Ok(v) = ob.extract::<Vec<isize>>() {
        return Ok(Some(v));
    }
    let t = to_tensor(ob, None)?;
    static_value(&t, "an axis")?;
    if t.dtype().is_integer() {
        let t = crate::ops::cast(&t, crate::DType::I64)?;
        return Ok(Some(
            t.to_vec::<i64>()?.into_iter().map(|v| v as isize).collect(),
        ));
    }
    Err(PyTypeError::new_err(format!(
        "axis must be an int or a list of ints, got {}",
        ob.repr()?
    )))
}

/// A shape argument: list/tuple (may hold ints or scalar tensors), TensorShape,
/// int tensor, or a single int. Entries may be -1 where the op allows it.
pub(crate) fn shape_arg(ob: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    if let Ok(i) = ob.extract::<i64>() {
        return Ok(vec![i]);
    }
    if ob.is_instance_of::<PyList>() || ob.is_instance_of::<PyTuple>() {
        let mut v = Vec::new();
        for it in ob.try_iter()? {
            let it = it?;
            if it.is_none() {
                // An unknown size (`x.shape[0]` in a trace): TF's conversion error.
                return Err(super::convert::none_error());
            }
            let d: i64 = match it.extract::<i64>() {
                Ok(d) => d,
                Err(_) => match as_tensor(&it)
                    .map(|t| static_value(&t, "a shape").map(|_| t))
                    .transpose()?
                    .and_then(|t| t.to_i64_scalar())
                {
                    Some(d) => d,
                    None => it.call_method0("__index__")?.extract()?,
                },
            };
            v.push(d);
        }
        return Ok(v);
    }
    let t = to_tensor(ob, None)?;
    static_value(&t, "a shape")?;
    if t.dtype().is_integer() && t.ndim() <= 1 {
        let t = crate::ops::cast(&t, crate::DType::I64)?;
        return Ok(t.to_vec::<i64>()?);
    }
    Err(PyTypeError::new_err(format!(
        "expected a shape (list of ints), got {}",
        ob.repr()?
    )))
}

/// A shape argument with no unknown (-1) entries. Only the signs are checked here:
/// the op that uses the shape checks its size (`crate::size`), as TF does.
pub(crate) fn dims_arg(ob: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    shape_arg(ob)?
        .into_iter()
        .map(|d| {
            usize::try_from(d).map_err(|_| {
                crate::python::errors::InvalidArgumentError::new_err(format!(
                    "dimensions must be non-negative, got {d}"
                ))
            })
        })
        .collect()
}

/// Converts a list of tensor-likes; Python values take the first tensor's dtype.
pub(crate) fn tensor_list(values: &Bound<'_, PyAny>) -> PyResult<Vec<Tensor>> {
    let items: Vec<Bound<'_, PyAny>> = if as_tensor(values).is_some() {
        // A single tensor: its rows (TF unstacks it).
        let t = to_tensor(values, None)?;
        let f = |a: &[Tensor]| ops::unstack(&a[0], None, 0);
        // The key of `gt.unstack(t)`'s node, so the two merge.
        return super::graph::call_multi(values.py(), "Unpack", || "None,0".into(), &[t], f);
    } else {
        values.try_iter()?.collect::<PyResult<_>>()?
    };
    let hint = items.iter().find_map(|it| as_tensor(it)).map(|t| t.dtype());
    items.iter().map(|it| to_tensor(it, hint)).collect()
}

/// An int argument that may also be a scalar int tensor.
pub(crate) fn int_arg(ob: &Bound<'_, PyAny>, what: &str) -> PyResult<i64> {
    if let Ok(i) = ob.extract::<i64>() {
        return Ok(i);
    }
    let t = as_tensor(ob);
    if let Some(t) = &t {
        static_value(t, what)?;
    }
    match t {
        Some(t) if t.size() == 1 && t.dtype().is_integer() => t
            .to_i64_scalar()
            .ok_or_else(|| PyTypeError::new_err(format!("{what} must be an int"))),
        _ => Err(PyTypeError::new_err(format!(
            "{what} must be an int, got {}",
            ob.repr()?
        ))),
    }
}

pub(crate) fn opt_axis(axis: Option<&Bound<'_, PyAny>>) -> PyResult<Option<isize>> {
    match axis {
        Some(a) if !a.is_none() => Ok(Some(int_arg(a, "axis")? as isize)),
        _ => Ok(None),
    }
}

pub(crate) fn dtype_arg(d: Option<&Bound<'_, PyAny>>, default: DType) -> PyResult<DType> {
    match d {
        Some(d) if !d.is_none() => to_dtype(d),
        _ => Ok(default),
    }
}

/// A `seed` argument: `None`, or any Python integer, taken modulo `2**31 - 1` as TF's
/// `_truncate_seed` does (so it fits the crate's `i64`).
pub(crate) fn seed_arg(seed: Option<&Bound<'_, PyAny>>) -> PyResult<Option<i64>> {
    let Some(seed) = seed.filter(|s| !s.is_none()) else {
        return Ok(None);
    };
    let index = seed.py().import("operator")?.getattr("index")?;
    let i = index.call1((seed,))?;
    Ok(Some(i.rem((1i64 << 31) - 1)?.extract()?))
}
