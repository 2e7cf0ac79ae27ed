//! Shape manipulation.

use pyo3::prelude::*;

use pyo3::exceptions::{PyTypeError, PyValueError};

use crate::dtype::DType;
use crate::ops;
use crate::python::args::{axes_arg, dims_arg, shape_arg};
use crate::python::convert::{as_tensor, to_dtype, to_tensor};
use crate::python::errors::InvalidArgumentError;
use crate::python::heavy;
use crate::python::tensor::PyTensor;
use crate::tensor::Tensor;

/// ``tensor`` with a new shape of the same size; one entry may be -1 (inferred).
/// TF equivalent: ``tf.reshape``.
///
/// >>> print(gt.reshape(gt.range(6), [2, -1]))
/// gt.Tensor(
/// [[0 1 2]
///  [3 4 5]], shape=(2, 3), dtype=int32)
#[pyfunction]
#[pyo3(signature = (tensor, shape, name=None))]
fn reshape(
    py: Python<'_>,
    tensor: &Bound<'_, PyAny>,
    shape: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(tensor, None)?;
    let s = shape_arg(shape)?;
    Ok(heavy(py, x.size(), || ops::reshape_infer(&x, &s))?.into())
}

/// Axes permuted by ``perm`` (reversed by default); ``conjugate=True`` also conjugates.
/// TF equivalent: ``tf.transpose``.
///
/// >>> print(gt.transpose(gt.constant([[1, 2, 3]])))
/// gt.Tensor(
/// [[1]
///  [2]
///  [3]], shape=(3, 1), dtype=int32)
#[pyfunction]
#[pyo3(signature = (a, perm=None, conjugate=false, name=None))]
fn transpose(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    perm: Option<&Bound<'_, PyAny>>,
    conjugate: bool,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(a, None)?;
    let perm = match perm {
        Some(p) if !p.is_none() => Some(dims_arg(p)?),
        _ => None,
    };
    Ok(heavy(py, x.size(), || {
        let t = ops::transpose(&x, perm.as_deref())?;
        if conjugate {
            ops::conj(&t)
        } else {
            Ok(t)
        }
    })?
    .into())
}

/// ``input`` with a new axis of length 1 inserted at ``axis``. TF equivalent:
/// ``tf.expand_dims``.
///
/// >>> print(gt.expand_dims(gt.constant([1, 2]), 0).shape)
/// (1, 2)
#[pyfunction]
#[pyo3(signature = (input, axis, name=None))]
fn expand_dims(
    input: &Bound<'_, PyAny>,
    axis: isize,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(input, None)?;
    Ok(ops::expand_dims(&x, axis)?.into())
}

/// ``input`` without its length-1 axes (or only those in ``axis``). TF equivalent:
/// ``tf.squeeze``.
///
/// >>> print(gt.squeeze(gt.zeros([1, 2, 1])).shape)
/// (2,)
#[pyfunction]
#[pyo3(signature = (input, axis=None, name=None))]
fn squeeze(
    input: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(input, None)?;
    let axes = axes_arg(axis)?;
    Ok(ops::squeeze(&x, axes.as_deref())?.into())
}

/// ``input`` broadcast to ``shape``. TF equivalent: ``tf.broadcast_to``.
///
/// >>> print(gt.broadcast_to(gt.constant([1, 2]), [2, 2]))
/// gt.Tensor(
/// [[1 2]
///  [1 2]], shape=(2, 2), dtype=int32)
#[pyfunction]
#[pyo3(signature = (input, shape, name=None))]
fn broadcast_to(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    shape: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(input, None)?;
    let s = dims_arg(shape)?;
    let n = s.iter().fold(1usize, |n, &d| n.saturating_mul(d));
    Ok(heavy(py, n, || ops::broadcast_to(&x, &s))?.into())
}

/// Converts a list of tensor-likes; Python values take the first tensor's dtype.
fn tensor_list(values: &Bound<'_, PyAny>) -> PyResult<Vec<Tensor>> {
    let items: Vec<Bound<'_, PyAny>> = if as_tensor(values).is_some() {
        // A single tensor: its rows (TF unstacks it).
        let t = to_tensor(values, None)?;
        return Ok(ops::unstack(&t, None, 0)?);
    } else {
        values.try_iter()?.collect::<PyResult<_>>()?
    };
    let hint = items.iter().find_map(|it| as_tensor(it)).map(|t| t.dtype());
    items.iter().map(|it| to_tensor(it, hint)).collect()
}

/// An int argument that may also be a scalar int tensor.
fn int_arg(ob: &Bound<'_, PyAny>, what: &str) -> PyResult<i64> {
    if let Ok(i) = ob.extract::<i64>() {
        return Ok(i);
    }
    match as_tensor(ob) {
        Some(t) if t.size() == 1 && t.dtype().is_integer() => t
            .to_i64_scalar()
            .ok_or_else(|| PyTypeError::new_err(format!("{what} must be an int"))),
        _ => Err(PyTypeError::new_err(format!(
            "{what} must be an int, got {}",
            ob.repr()?
        ))),
    }
}

fn opt_axis(axis: Option<&Bound<'_, PyAny>>) -> PyResult<Option<isize>> {
    match axis {
        Some(a) if !a.is_none() => Ok(Some(int_arg(a, "axis")? as isize)),
        _ => Ok(None),
    }
}

fn dtype_arg(d: Option<&Bound<'_, PyAny>>, default: DType) -> PyResult<DType> {
    match d {
        Some(d) if !d.is_none() => to_dtype(d),
        _ => Ok(default),
    }
}

/// The tensors of ``values`` joined along the existing axis ``axis``. TF equivalent:
/// ``tf.concat``.
///
/// >>> print(gt.concat([gt.constant([1, 2]), gt.constant([3])], axis=0))
/// gt.Tensor([1 2 3], shape=(3,), dtype=int32)
#[pyfunction]
#[pyo3(signature = (values, axis, name=None))]
fn concat(
    py: Python<'_>,
    values: &Bound<'_, PyAny>,
    axis: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let xs = tensor_list(values)?;
    let axis = int_arg(axis, "axis")? as isize;
    let n = xs.iter().map(|t| t.size()).sum();
    Ok(heavy(py, n, || ops::concat(&xs, axis))?.into())
}

/// The tensors of ``values`` (same shape) joined along a new axis ``axis``. TF equivalent:
/// ``tf.stack``.
///
/// >>> print(gt.stack([gt.constant([1, 2]), gt.constant([3, 4])], axis=1))
/// gt.Tensor(
/// [[1 3]
///  [2 4]], shape=(2, 2), dtype=int32)
#[pyfunction]
#[pyo3(signature = (values, axis=0, name=None))]
fn stack(
    py: Python<'_>,
    values: &Bound<'_, PyAny>,
    axis: isize,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let xs = tensor_list(values)?;
    let n = xs.iter().map(|t| t.size()).sum();
    Ok(heavy(py, n, || ops::stack(&xs, axis))?.into())
}

/// The slices of ``value`` along ``axis``, as a list of tensors. TF equivalent:
/// ``tf.unstack``.
///
/// >>> [t.numpy().tolist() for t in gt.unstack(gt.constant([[1, 2], [3, 4]]))]
/// [[1, 2], [3, 4]]
#[pyfunction]
#[pyo3(signature = (value, num=None, axis=0, name=None))]
fn unstack(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    num: Option<usize>,
    axis: isize,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<PyTensor>> {
    let _ = name;
    let x = to_tensor(value, None)?;
    let parts = heavy(py, x.size(), || ops::unstack(&x, num, axis))?;
    Ok(parts.into_iter().map(Into::into).collect())
}

/// ``value`` cut along ``axis`` into ``num_or_size_splits`` equal parts, or parts of the
/// given sizes (a list of tensors). TF equivalent: ``tf.split``.
///
/// >>> [t.numpy().tolist() for t in gt.split(gt.range(5), [2, 3])]
/// [[0, 1], [2, 3, 4]]
#[pyfunction]
#[pyo3(signature = (value, num_or_size_splits, axis=0, num=None, name=None))]
fn split(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    num_or_size_splits: &Bound<'_, PyAny>,
    axis: isize,
    num: Option<usize>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<PyTensor>> {
    let _ = (name, num);
    let x = to_tensor(value, None)?;
    let spec = match num_or_size_splits.extract::<i64>() {
        Ok(n) if n >= 0 => ops::SplitSpec::Num(n as usize),
        Ok(n) => {
            return Err(PyValueError::new_err(format!(
                "num_or_size_splits must be positive, got {n}"
            )))
        }
        Err(_) => match as_tensor(num_or_size_splits) {
            Some(t) if t.ndim() == 0 && t.dtype().is_integer() => {
                let n = t.to_i64_scalar().unwrap_or(-1);
                ops::SplitSpec::Num(usize::try_from(n).map_err(|_| {
                    PyValueError::new_err(format!("num_or_size_splits must be positive, got {n}"))
                })?)
            }
            _ => ops::SplitSpec::Sizes(shape_arg(num_or_size_splits)?),
        },
    };
    let parts = heavy(py, x.size(), || ops::split(&x, &spec, axis))?;
    Ok(parts.into_iter().map(Into::into).collect())
}

/// ``input`` repeated ``multiples[i]`` times along each axis ``i``. TF equivalent:
/// ``tf.tile``.
///
/// >>> print(gt.tile(gt.constant([1, 2]), [2]))
/// gt.Tensor([1 2 1 2], shape=(4,), dtype=int32)
#[pyfunction]
#[pyo3(signature = (input, multiples, name=None))]
fn tile(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    multiples: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(input, None)?;
    let m = dims_arg(multiples)?;
    let n = m.iter().fold(x.size(), |n, &d| n.saturating_mul(d));
    Ok(heavy(py, n, || ops::tile(&x, &m))?.into())
}

/// ``tensor`` padded by ``paddings[i] = [before, after]`` along each axis; modes CONSTANT,
/// REFLECT and SYMMETRIC. TF equivalent: ``tf.pad``.
///
/// >>> print(gt.pad(gt.constant([1, 2]), [[1, 2]]))
/// gt.Tensor([0 1 2 0 0], shape=(5,), dtype=int32)
/// >>> print(gt.pad(gt.constant([1, 2, 3]), [[1, 1]], mode="REFLECT"))
/// gt.Tensor([2 1 2 3 2], shape=(5,), dtype=int32)
#[pyfunction]
#[pyo3(signature = (tensor, paddings, mode="CONSTANT", constant_values=None, name=None))]
fn pad(
    py: Python<'_>,
    tensor: &Bound<'_, PyAny>,
    paddings: &Bound<'_, PyAny>,
    mode: &str,
    constant_values: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(tensor, None)?;
    let p = to_tensor(paddings, Some(DType::I64))?;
    if !p.dtype().is_integer() || p.ndim() != 2 || p.shape()[1] != 2 {
        return Err(InvalidArgumentError::new_err(format!(
            "paddings must be a matrix of integers with 2 columns, got shape {:?} and dtype {}",
            p.shape(),
            p.dtype().name()
        )));
    }
    let v = ops::cast(&p, DType::I64)?.to_vec::<i64>()?;
    if v.iter().any(|&d| d < 0) {
        return Err(InvalidArgumentError::new_err(format!(
            "paddings must be non-negative, got {v:?}"
        )));
    }
    let pairs: Vec<(usize, usize)> = v
        .chunks(2)
        .map(|c| (c[0] as usize, c[1] as usize))
        .collect();
    let mode = ops::PadMode::parse(mode)?;
    let cv = match constant_values {
        Some(c) if !c.is_none() => Some(to_tensor(c, Some(x.dtype()))?),
        _ => None,
    };
    Ok(heavy(py, x.size(), || ops::pad(&x, &pairs, mode, cv.as_ref()))?.into())
}

/// The block of ``input_`` starting at ``begin`` of extent ``size`` (-1: to the end).
/// TF equivalent: ``tf.slice``.
///
/// >>> print(gt.slice(gt.constant([[1, 2, 3], [4, 5, 6]]), [0, 1], [2, -1]))
/// gt.Tensor(
/// [[2 3]
///  [5 6]], shape=(2, 2), dtype=int32)
#[pyfunction]
#[pyo3(signature = (input_, begin, size, name=None))]
fn slice(
    py: Python<'_>,
    input_: &Bound<'_, PyAny>,
    begin: &Bound<'_, PyAny>,
    size: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(input_, None)?;
    let b = shape_arg(begin)?;
    let s = shape_arg(size)?;
    Ok(heavy(py, x.size(), || ops::slice(&x, &b, &s))?.into())
}

/// Slices of ``params`` along ``axis`` (0 by default) at ``indices``. Only ``batch_dims=0``
/// is supported. TF equivalent: ``tf.gather``.
///
/// >>> print(gt.gather(gt.constant([10, 20, 30]), [2, 0]))
/// gt.Tensor([30 10], shape=(2,), dtype=int32)
#[pyfunction]
#[pyo3(signature = (params, indices, validate_indices=None, axis=None, batch_dims=0, name=None))]
fn gather(
    py: Python<'_>,
    params: &Bound<'_, PyAny>,
    indices: &Bound<'_, PyAny>,
    validate_indices: Option<&Bound<'_, PyAny>>,
    axis: Option<&Bound<'_, PyAny>>,
    batch_dims: isize,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = (name, validate_indices);
    let p = to_tensor(params, None)?;
    let i = to_tensor(indices, None)?;
    let axis = opt_axis(axis)?;
    Ok(heavy(py, p.size(), || ops::gather(&p, &i, axis, batch_dims))?.into())
}

/// Elements or slices of ``params`` at the index tuples in the last axis of ``indices``.
/// Only ``batch_dims=0`` is supported. TF equivalent: ``tf.gather_nd``.
///
/// >>> print(gt.gather_nd(gt.constant([[1, 2], [3, 4]]), [[0, 1], [1, 0]]))
/// gt.Tensor([2 3], shape=(2,), dtype=int32)
#[pyfunction]
#[pyo3(signature = (params, indices, batch_dims=0, name=None))]
fn gather_nd(
    py: Python<'_>,
    params: &Bound<'_, PyAny>,
    indices: &Bound<'_, PyAny>,
    batch_dims: isize,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    if batch_dims != 0 {
        return Err(InvalidArgumentError::new_err(format!(
            "gather_nd: batch_dims={batch_dims} is not supported (only batch_dims=0)"
        )));
    }
    let p = to_tensor(params, None)?;
    let i = to_tensor(indices, None)?;
    Ok(heavy(py, p.size(), || ops::gather_nd(&p, &i))?.into())
}

/// One-hot encoding of ``indices`` with ``depth`` classes (float32 by default, or the dtype
/// of ``on_value``/``off_value``). TF equivalent: ``tf.one_hot``.
///
/// >>> print(gt.one_hot([0, 2], 3))
/// gt.Tensor(
/// [[1. 0. 0.]
///  [0. 0. 1.]], shape=(2, 3), dtype=float32)
#[pyfunction]
#[pyo3(signature = (indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None))]
#[allow(clippy::too_many_arguments)]
fn one_hot(
    indices: &Bound<'_, PyAny>,
    depth: &Bound<'_, PyAny>,
    on_value: Option<&Bound<'_, PyAny>>,
    off_value: Option<&Bound<'_, PyAny>>,
    axis: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let i = to_tensor(indices, None)?;
    let depth = int_arg(depth, "depth")?;
    if depth < 0 {
        return Err(InvalidArgumentError::new_err(format!(
            "depth must be non-negative, got: {depth}"
        )));
    }
    let on = on_value.filter(|v| !v.is_none());
    let off = off_value.filter(|v| !v.is_none());
    let value_dtype = match on.or(off) {
        Some(v) => Some(to_tensor(v, None)?.dtype()),
        None => None,
    };
    let dt = dtype_arg(dtype, value_dtype.unwrap_or(DType::F32))?;
    let scalar = |v: Option<&Bound<'_, PyAny>>, d: f64| -> PyResult<f64> {
        match v {
            Some(v) => Ok(to_tensor(v, Some(dt))?.to_f64_scalar()?),
            None => Ok(d),
        }
    };
    let (on, off) = (scalar(on, 1.0)?, scalar(off, 0.0)?);
    let axis = opt_axis(axis)?.unwrap_or(-1);
    Ok(ops::one_hot(&i, depth as usize, on, off, axis, dt)?.into())
}

/// The entries of ``tensor`` where ``mask`` is true (``mask`` covers the axes from
/// ``axis``). TF equivalent: ``tf.boolean_mask``.
///
/// >>> print(gt.boolean_mask(gt.constant([1, 2, 3]), [True, False, True]))
/// gt.Tensor([1 3], shape=(2,), dtype=int32)
#[pyfunction]
#[pyo3(signature = (tensor, mask, axis=None, name=None))]
fn boolean_mask(
    py: Python<'_>,
    tensor: &Bound<'_, PyAny>,
    mask: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(tensor, None)?;
    let m = to_tensor(mask, Some(DType::Bool))?;
    let axis = opt_axis(axis)?.unwrap_or(0);
    Ok(heavy(py, x.size(), || ops::boolean_mask(&x, &m, axis))?.into())
}

fn axes_list(ob: &Bound<'_, PyAny>) -> PyResult<Vec<isize>> {
    if let Ok(i) = ob.extract::<isize>() {
        return Ok(vec![i]);
    }
    Ok(shape_arg(ob)?.into_iter().map(|v| v as isize).collect())
}

/// Sum of products over the given axes of ``a`` and ``b``: ``axes`` is an int (last axes of
/// ``a`` with first axes of ``b``) or a pair of axis lists. TF equivalent:
/// ``tf.tensordot``.
///
/// >>> a = gt.constant([[1.0, 2.0], [3.0, 4.0]])
/// >>> print(gt.tensordot(a, a, axes=1))
/// gt.Tensor(
/// [[ 7. 10.]
///  [15. 22.]], shape=(2, 2), dtype=float32)
/// >>> print(gt.tensordot(a, a, axes=[[0, 1], [0, 1]]))
/// gt.Tensor(30.0, shape=(), dtype=float32)
#[pyfunction]
#[pyo3(signature = (a, b, axes, name=None))]
fn tensordot(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    axes: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let (x, y) = crate::python::args::pair(a, b)?;
    let spec = if let Ok(n) = axes.extract::<i64>().or_else(|e| {
        // A scalar int tensor counts as an int (not a float one: no silent truncation).
        match as_tensor(axes).filter(|t| t.ndim() == 0) {
            Some(t) => t.to_i64_scalar().ok_or_else(|| {
                PyTypeError::new_err("'axes' must be an int or a pair of lists of ints")
            }),
            None => Err(e),
        }
    }) {
        if n < 0 {
            return Err(PyValueError::new_err(format!(
                "'axes' must be at least 0, got {n}"
            )));
        }
        ops::TensordotAxes::N(n as usize)
    } else if as_tensor(axes).is_some_and(|t| t.ndim() == 0) {
        return Err(PyTypeError::new_err(
            "'axes' must be an int or a pair of lists of ints",
        ));
    } else {
        let items: Vec<Bound<'_, PyAny>> = axes.try_iter()?.collect::<PyResult<_>>()?;
        if items.len() != 2 {
            return Err(PyValueError::new_err(
                "'axes' must be an integer or have length 2",
            ));
        }
        ops::TensordotAxes::Pairs(axes_list(&items[0])?, axes_list(&items[1])?)
    };
    let n = x.size().max(y.size());
    Ok(heavy(py, n, || ops::tensordot(&x, &y, &spec))?.into())
}

/// The shape of ``input`` as a 1-D int32 tensor (or ``out_type``). TF equivalent:
/// ``tf.shape``.
///
/// >>> print(gt.shape(gt.zeros([2, 3])))
/// gt.Tensor([2 3], shape=(2,), dtype=int32)
#[pyfunction]
#[pyo3(signature = (input, out_type=None, name=None))]
fn shape(
    input: &Bound<'_, PyAny>,
    out_type: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(input, None)?;
    Ok(ops::shape(&x, dtype_arg(out_type, DType::I32)?)?.into())
}

/// The number of elements of ``input`` as an int32 scalar tensor (or ``out_type``).
/// TF equivalent: ``tf.size``.
///
/// >>> print(gt.size(gt.zeros([2, 3])))
/// gt.Tensor(6, shape=(), dtype=int32)
#[pyfunction]
#[pyo3(signature = (input, out_type=None, name=None))]
fn size(
    input: &Bound<'_, PyAny>,
    out_type: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(input, None)?;
    Ok(ops::size(&x, dtype_arg(out_type, DType::I32)?)?.into())
}

/// The number of axes of ``input`` as an int32 scalar tensor. TF equivalent: ``tf.rank``.
///
/// >>> print(gt.rank(gt.zeros([2, 3])))
/// gt.Tensor(2, shape=(), dtype=int32)
#[pyfunction]
#[pyo3(signature = (input, name=None))]
fn rank(input: &Bound<'_, PyAny>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(input, None)?;
    Ok(ops::rank(&x)?.into())
}

crate::python::expose::expose! {
    fn reshape in [gt]: "(tensor: TensorLike, shape: ShapeLike, name: str | None=None) -> Tensor";
    fn transpose in [gt]: "(a: TensorLike, perm: ShapeLike | None=None, conjugate: _bool=False, name: str | None=None) -> Tensor";
    fn expand_dims in [gt]: "(input: TensorLike, axis: int, name: str | None=None) -> Tensor";
    fn squeeze in [gt]: "(input: TensorLike, axis: AxisLike | None=None, name: str | None=None) -> Tensor";
    fn broadcast_to in [gt]: "(input: TensorLike, shape: ShapeLike, name: str | None=None) -> Tensor";
    fn concat in [gt]: "(values: Sequence[TensorLike] | Tensor, axis: int | Tensor, name: str | None=None) -> Tensor";
    fn stack in [gt]: "(values: Sequence[TensorLike] | Tensor, axis: int=0, name: str | None=None) -> Tensor";
    fn unstack in [gt]: "(value: TensorLike, num: int | None=None, axis: int=0, name: str | None=None) -> list[Tensor]";
    fn split in [gt]: "(value: TensorLike, num_or_size_splits: int | Sequence[int] | Tensor, axis: int=0, num: int | None=None, name: str | None=None) -> list[Tensor]";
    fn tile in [gt]: "(input: TensorLike, multiples: ShapeLike, name: str | None=None) -> Tensor";
    fn pad in [gt]: "(tensor: TensorLike, paddings: TensorLike, mode: str='CONSTANT', constant_values: TensorLike | None=None, name: str | None=None) -> Tensor";
    fn slice in [gt]: "(input_: TensorLike, begin: ShapeLike, size: TensorLike, name: str | None=None) -> Tensor";
    fn gather in [gt]: "(params: TensorLike, indices: TensorLike, validate_indices: _bool | None=None, axis: int | Tensor | None=None, batch_dims: int=0, name: str | None=None) -> Tensor";
    fn gather_nd in [gt]: "(params: TensorLike, indices: TensorLike, batch_dims: int=0, name: str | None=None) -> Tensor";
    fn one_hot in [gt]: "(indices: TensorLike, depth: int | Tensor, on_value: TensorLike | None=None, off_value: TensorLike | None=None, axis: int | Tensor | None=None, dtype: DTypeLike | None=None, name: str | None=None) -> Tensor";
    fn boolean_mask in [gt]: "(tensor: TensorLike, mask: TensorLike, axis: int | Tensor | None=None, name: str | None=None) -> Tensor";
    fn tensordot in [gt, linalg]: "(a: TensorLike, b: TensorLike, axes: int | Sequence[int | Sequence[int]] | Tensor, name: str | None=None) -> Tensor";
    fn shape in [gt]: "(input: TensorLike, out_type: DTypeLike | None=None, name: str | None=None) -> Tensor";
    fn size in [gt]: "(input: TensorLike, out_type: DTypeLike | None=None, name: str | None=None) -> Tensor";
    fn rank in [gt]: "(input: TensorLike, name: str | None=None) -> Tensor";
}
