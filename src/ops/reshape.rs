//! Reshaping ops: reshape, broadcast_to, transpose, expand_dims, squeeze, and the
//! shape queries shape, size and rank.
//!
//! These move or share storage without arithmetic; their gradients are the inverse
//! movement of `dy`. Ops that pick elements (slice, pad, tile) are in `remap.rs`;
//! joining and splitting (concat, stack, split) in `concat.rs`.

use ndarray::IxDyn;

use super::{grads, record, Grads, Op, Saves, VjpCx};
use crate::broadcast::{broadcast_shapes, norm_axis};
use crate::error::{Error, Result};
use crate::kernels::elementwise::broadcast_owned;
use crate::size::{check_shape, num_elements};
use crate::tape::unbroadcast as backward_unbroadcast;
use crate::tensor::Tensor;

/// Reshapes to `shape` (same number of elements). TF equivalent: `tf.reshape`.
pub fn reshape(x: &Tensor, shape: &[usize]) -> Result<Tensor> {
    let n = num_elements("Reshape", shape)?;
    if n != x.size() {
        return Err(Error::invalid(
            "Reshape",
            format!(
                "Input to reshape is a tensor with {} values, but the requested shape has {}",
                x.size(),
                n
            ),
        ));
    }
    let out = Tensor::new(map_same!(x.data(), a => {
        let a = if a.is_standard_layout() { a.clone() } else { broadcast_owned(a, a.shape())?.into_shared() };
        a.into_shape_with_order(IxDyn(shape))
            .map_err(|e| Error::Internal(format!("Reshape to {shape:?}: {e}")))?
    }));
    record(Reshape, &[x], &[&out])?;
    Ok(out)
}

/// Reshape where one entry may be `-1` (inferred). TF equivalent: `tf.reshape`.
pub fn reshape_infer(x: &Tensor, shape: &[i64]) -> Result<Tensor> {
    let mut unknown = None;
    let mut known = 1usize;
    for (i, &d) in shape.iter().enumerate() {
        if d == -1 {
            if unknown.is_some() {
                return Err(Error::invalid("Reshape", "only one input size may be -1"));
            }
            unknown = Some(i);
        } else if d < 0 {
            return Err(Error::invalid(
                "Reshape",
                format!("size {i} must be non-negative, not {d}"),
            ));
        } else {
            // A zero makes the product 0; a product past i64 is TF's overflow error.
            known = known
                .checked_mul(d as usize)
                .filter(|&k| k <= isize::MAX as usize)
                .ok_or_else(|| {
                    Error::invalid(
                        "Reshape",
                        format!("Encountered overflow when multiplying the dimensions of shape {shape:?}"),
                    )
                })?;
        }
    }
    let mut dims: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
    if let Some(i) = unknown {
        if known == 0 || !x.size().is_multiple_of(known) {
            return Err(Error::invalid(
                "Reshape",
                format!(
                    "Input to reshape is a tensor with {} values, but the requested shape requires a multiple of {}",
                    x.size(),
                    known
                ),
            ));
        }
        dims[i] = x.size() / known;
    }
    reshape(x, &dims)
}

struct Reshape;
impl Op for Reshape {
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        let t = tangents[0].as_ref()?;
        Some(reshape(t, cx.output_shape(0)).map(|t| grads![Some(t)]))
    }
    fn name(&self) -> &'static str {
        "Reshape"
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn batched(&self) -> bool {
        true
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let shape = cx.batched(&dys[0], cx.input_shape(0));
        Ok(grads![Some(reshape(&dys[0], &shape)?)])
    }
}

/// Broadcasts to `shape`. TF equivalent: `tf.broadcast_to`. Gradient: `dy` summed
/// over the broadcast axes.
pub fn broadcast_to(x: &Tensor, shape: &[usize]) -> Result<Tensor> {
    if x.shape() == shape {
        return Ok(x.clone());
    }
    let b = broadcast_shapes("BroadcastTo", x.shape(), shape)?;
    if b != shape {
        return Err(Error::shapes("BroadcastTo", x.shape(), shape));
    }
    check_shape("BroadcastTo", shape, x.dtype())?;
    let out = Tensor::new(map_same!(x.data(), a => broadcast_owned(a, shape)?));
    record(BroadcastTo, &[x], &[&out])?;
    Ok(out)
}
struct BroadcastTo;
impl Op for BroadcastTo {
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        let t = tangents[0].as_ref()?;
        Some(broadcast_to(t, cx.output_shape(0)).map(|t| grads![Some(t)]))
    }
    fn name(&self) -> &'static str {
        "BroadcastTo"
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn batched(&self) -> bool {
        true
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let g = backward_unbroadcast(dys[0].clone(), cx.input_shape(0), cx.batch())?;
        Ok(grads![Some(g)])
    }
}

/// Permutes axes (`None`: reverse them). TF equivalent: `tf.transpose`.
pub fn transpose(x: &Tensor, perm: Option<&[usize]>) -> Result<Tensor> {
    let nd = x.ndim();
    let perm: Vec<usize> = match perm {
        Some(p) => p.to_vec(),
        None => (0..nd).rev().collect(),
    };
    let mut seen = vec![false; nd];
    if perm.len() != nd
        || perm
            .iter()
            .any(|&p| p >= nd || std::mem::replace(&mut seen[p], true))
    {
        return Err(Error::invalid(
            "Transpose",
            format!("perm {perm:?} is not a permutation of 0..{nd}"),
        ));
    }
    let out = Tensor::new(map_same!(x.data(), a => {
        a.clone().permuted_axes(IxDyn(&perm))
    }));
    record(Transpose { perm }, &[x], &[&out])?;
    Ok(out)
}
struct Transpose {
    perm: Vec<usize>,
}
impl Op for Transpose {
    fn jvp(&self, _cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        let t = tangents[0].as_ref()?;
        Some(transpose(t, Some(&self.perm)).map(|t| grads![Some(t)]))
    }
    fn name(&self) -> &'static str {
        "Transpose"
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn batched(&self) -> bool {
        true
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        // Inverse permutation, behind the batch axes left in place.
        let b = cx.batch();
        let mut inv: Vec<usize> = (0..b + self.perm.len()).collect();
        for (i, &p) in self.perm.iter().enumerate() {
            inv[b + p] = b + i;
        }
        Ok(grads![Some(transpose(&dys[0], Some(&inv))?)])
    }
}

/// Inserts a size-1 axis at `axis`. TF equivalent: `tf.expand_dims`.
pub fn expand_dims(x: &Tensor, axis: isize) -> Result<Tensor> {
    let ax = norm_axis("ExpandDims", axis, x.ndim() + 1)?;
    let mut shape = x.shape().to_vec();
    shape.insert(ax, 1);
    reshape(x, &shape)
}

/// Removes size-1 axes (all, or those in `axis`). TF equivalent: `tf.squeeze`.
pub fn squeeze(x: &Tensor, axis: Option<&[isize]>) -> Result<Tensor> {
    let shape = x.shape();
    let drop: Vec<usize> = match axis {
        None => (0..shape.len()).filter(|&i| shape[i] == 1).collect(),
        Some(a) => {
            let mut v = Vec::new();
            for &ax in a {
                let i = norm_axis("Squeeze", ax, shape.len())?;
                if shape[i] != 1 {
                    return Err(Error::invalid(
                        "Squeeze",
                        format!(
                            "Can not squeeze dim[{i}], expected a dimension of 1, got {}",
                            shape[i]
                        ),
                    ));
                }
                v.push(i);
            }
            v
        }
    };
    let new: Vec<usize> = (0..shape.len())
        .filter(|i| !drop.contains(i))
        .map(|i| shape[i])
        .collect();
    reshape(x, &new)
}

/// The shape of `x` as a 1-D integer tensor (`int32` or `int64`). TF equivalent:
/// `tf.shape`. Not differentiable.
pub fn shape(x: &Tensor, dtype: crate::dtype::DType) -> Result<Tensor> {
    let dt = check_index_dtype("Shape", dtype)?;
    // Exact: a dimension beside a zero one may exceed what f64 or int32 hold.
    let v: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
    let n = v.len();
    let t = Tensor::from_vec(v, &[n])?;
    if dt == crate::dtype::DType::I32 && x.shape().iter().any(|&d| d > i32::MAX as usize) {
        return Err(Error::invalid(
            "Shape",
            format!(
                "shape {:?} does not fit in int32: use out_type=int64",
                x.shape()
            ),
        ));
    }
    crate::ops::cast(&t, dt)
}

/// The number of elements of `x` as a scalar integer tensor. TF equivalent: `tf.size`.
pub fn size(x: &Tensor, dtype: crate::dtype::DType) -> Result<Tensor> {
    match check_index_dtype("Size", dtype)? {
        crate::dtype::DType::I32 => match i32::try_from(x.size()) {
            Ok(n) => Ok(Tensor::scalar(n)),
            Err(_) => Err(Error::invalid(
                "Size",
                format!(
                    "size {} does not fit in int32: use out_type=int64",
                    x.size()
                ),
            )),
        },
        _ => Ok(Tensor::scalar(x.size() as i64)),
    }
}

/// The rank of `x` as a scalar `int32` tensor. TF equivalent: `tf.rank`.
pub fn rank(x: &Tensor) -> Result<Tensor> {
    Ok(Tensor::scalar(x.ndim() as i32))
}

fn check_index_dtype(op: &'static str, dt: crate::dtype::DType) -> Result<crate::dtype::DType> {
    use crate::dtype::DType;
    match dt {
        DType::I32 | DType::I64 => Ok(dt),
        _ => Err(Error::dtype(
            op,
            format!("out_type must be int32 or int64, got {}", dt.name()),
        )),
    }
}

/// The integers of a shape tensor (a computed shape), as int64.
pub(crate) fn dims_of(t: &Tensor) -> Result<Vec<i64>> {
    crate::ops::cast(t, crate::dtype::DType::I64)?.to_vec::<i64>()
}

/// [`dims_of`] with no unknown (-1) entries.
pub(crate) fn udims_of(t: &Tensor) -> Result<Vec<usize>> {
    dims_of(t)?
        .into_iter()
        .map(|d| {
            usize::try_from(d).map_err(|_| {
                crate::error::Error::invalid(
                    "shape",
                    format!("dimensions must be non-negative, got {d}"),
                )
            })
        })
        .collect()
}

/// How this family's traced ops are saved in SavedModels (see `saved_model::table`).
pub(crate) mod saved {
    #[allow(unused_imports)]
    use crate::error::Result;
    #[allow(unused_imports)]
    use crate::graph::Forward;
    #[allow(unused_imports)]
    use crate::ops;
    #[allow(unused_imports)]
    use crate::saved_model::table::{
        ensure, get, get_dtype, get_f64, many_out, one_out, Attrs, OpDef,
    };
    #[allow(unused_imports)]
    use crate::tensor::Tensor;

    pub(crate) const SAVED: &[OpDef] = &[
        OpDef::new("Reshape", 2, &[], dynamic_reshape).named("DynamicReshape"),
        OpDef::new("BroadcastTo", 2, &[], dynamic_broadcast).named("DynamicBroadcastTo"),
        OpDef::new("Shape", 1, &["out_type"], shape),
        OpDef::new("Size", 1, &["out_type"], size),
        OpDef::new("Rank", 1, &[], rank),
    ];

    fn dynamic_reshape(_: &Attrs, _: usize) -> Result<Forward> {
        Ok(one_out(|xs| {
            ops::reshape_infer(&xs[0], &ops::dims_of(&xs[1])?)
        }))
    }

    fn dynamic_broadcast(_: &Attrs, _: usize) -> Result<Forward> {
        Ok(one_out(|xs| {
            ops::broadcast_to(&xs[0], &ops::udims_of(&xs[1])?)
        }))
    }

    fn shape(a: &Attrs, _: usize) -> Result<Forward> {
        let dt = get_dtype("Shape", a, "out_type")?;
        Ok(one_out(move |xs| ops::shape(&xs[0], dt)))
    }

    fn size(a: &Attrs, _: usize) -> Result<Forward> {
        let dt = get_dtype("Size", a, "out_type")?;
        Ok(one_out(move |xs| ops::size(&xs[0], dt)))
    }

    fn rank(_: &Attrs, _: usize) -> Result<Forward> {
        Ok(one_out(|xs| ops::rank(&xs[0])))
    }
}

/// The Python functions of this family: bindings and where they appear (see
/// `src/ops/README.md`).
#[cfg(feature = "python")]
pub(super) mod python {
    #[allow(unused_imports)]
    use crate::python::binding::*;

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
        if let Some(st) = crate::python::args::dynamic_shape(py, shape)? {
            let f =
                |x: &Tensor, s: &Tensor| ops::reshape_infer(x, &crate::python::args::dims_of(s)?);
            return Ok(call2(py, "Reshape", String::new, &x, &st, f)?.into());
        }
        let s = shape_arg(shape)?;
        let key = || format!("{s:?}");
        let owned = s.clone();
        let f = move |x: &Tensor| ops::reshape_infer(x, &owned);
        Ok(call(py, "Reshape", key, &x, f)?.into())
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
        let key = || format!("{perm:?},{conjugate}");
        let owned = perm.clone();
        let f = move |x: &Tensor| {
            let t = ops::transpose(x, owned.as_deref())?;
            if conjugate {
                ops::conj(&t)
            } else {
                Ok(t)
            }
        };
        Ok(call(py, "Transpose", key, &x, f)?.into())
    }

    /// ``input`` with a new axis of length 1 inserted at ``axis``. TF equivalent:
    /// ``tf.expand_dims``.
    ///
    /// >>> print(gt.expand_dims(gt.constant([1, 2]), 0).shape)
    /// (1, 2)
    #[pyfunction]
    #[pyo3(signature = (input, axis, name=None))]
    fn expand_dims(
        py: Python<'_>,
        input: &Bound<'_, PyAny>,
        axis: isize,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let x = to_tensor(input, None)?;
        let f = move |x: &Tensor| ops::expand_dims(x, axis);
        Ok(call(py, "ExpandDims", || axis.to_string(), &x, f)?.into())
    }

    /// ``input`` without its length-1 axes (or only those in ``axis``). TF equivalent:
    /// ``tf.squeeze``.
    ///
    /// >>> print(gt.squeeze(gt.zeros([1, 2, 1])).shape)
    /// (2,)
    #[pyfunction]
    #[pyo3(signature = (input, axis=None, name=None))]
    fn squeeze(
        py: Python<'_>,
        input: &Bound<'_, PyAny>,
        axis: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let x = to_tensor(input, None)?;
        let axes = axes_arg(axis)?;
        let key = || format!("{axes:?}");
        let owned = axes.clone();
        let f = move |x: &Tensor| ops::squeeze(x, owned.as_deref());
        Ok(call(py, "Squeeze", key, &x, f)?.into())
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
        if let Some(st) = crate::python::args::dynamic_shape(py, shape)? {
            let f =
                |x: &Tensor, s: &Tensor| ops::broadcast_to(x, &crate::python::args::udims_of(s)?);
            return Ok(call2(py, "BroadcastTo", String::new, &x, &st, f)?.into());
        }
        let s = dims_arg(shape)?;
        let n = s.iter().fold(1usize, |n, &d| n.saturating_mul(d));
        let key = || format!("{s:?}");
        let owned = s.clone();
        let f = move |xs: &[Tensor]| ops::broadcast_to(&xs[0], &owned);
        Ok(call_sized(py, n, "BroadcastTo", key, &[x], f)?.into())
    }

    /// The shape of ``input`` as a 1-D int32 tensor (or ``out_type``). TF equivalent:
    /// ``tf.shape``.
    ///
    /// >>> print(gt.shape(gt.zeros([2, 3])))
    /// gt.Tensor([2 3], shape=(2,), dtype=int32)
    #[pyfunction]
    #[pyo3(signature = (input, out_type=None, name=None))]
    fn shape(
        py: Python<'_>,
        input: &Bound<'_, PyAny>,
        out_type: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let x = to_tensor(input, None)?;
        let dt = dtype_arg(out_type, DType::I32)?;
        let f = move |x: &Tensor| ops::shape(x, dt);
        Ok(call(py, "Shape", || format!("{dt:?}"), &x, f)?.into())
    }

    /// The number of elements of ``input`` as an int32 scalar tensor (or ``out_type``).
    /// TF equivalent: ``tf.size``.
    ///
    /// >>> print(gt.size(gt.zeros([2, 3])))
    /// gt.Tensor(6, shape=(), dtype=int32)
    #[pyfunction]
    #[pyo3(signature = (input, out_type=None, name=None))]
    fn size(
        py: Python<'_>,
        input: &Bound<'_, PyAny>,
        out_type: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let x = to_tensor(input, None)?;
        let dt = dtype_arg(out_type, DType::I32)?;
        let f = move |x: &Tensor| ops::size(x, dt);
        Ok(call(py, "Size", || format!("{dt:?}"), &x, f)?.into())
    }

    /// The number of axes of ``input`` as an int32 scalar tensor. TF equivalent: ``tf.rank``.
    ///
    /// >>> print(gt.rank(gt.zeros([2, 3])))
    /// gt.Tensor(2, shape=(), dtype=int32)
    #[pyfunction]
    #[pyo3(signature = (input, name=None))]
    fn rank(
        py: Python<'_>,
        input: &Bound<'_, PyAny>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let x = to_tensor(input, None)?;
        Ok(call(py, "Rank", String::new, &x, ops::rank)?.into())
    }

    expose! {
        fn reshape in [gt]: "(tensor: TensorLike, shape: ShapeLike, name: str | None = None) -> Tensor";
        fn transpose in [gt]: "(a: TensorLike, perm: ShapeLike | None = None, conjugate: _bool = False, name: str | None = None) -> Tensor";
        fn expand_dims in [gt]: "(input: TensorLike, axis: int, name: str | None = None) -> Tensor";
        fn squeeze in [gt]: "(input: TensorLike, axis: AxisLike | None = None, name: str | None = None) -> Tensor";
        fn broadcast_to in [gt]: "(input: TensorLike, shape: ShapeLike, name: str | None = None) -> Tensor";
        fn shape in [gt]: "(input: TensorLike, out_type: DTypeLike | None = None, name: str | None = None) -> Tensor";
        fn size in [gt]: "(input: TensorLike, out_type: DTypeLike | None = None, name: str | None = None) -> Tensor";
        fn rank in [gt]: "(input: TensorLike, name: str | None = None) -> Tensor";
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testutil::t64;

    #[test]
    fn shape_size_rank() {
        let x = t64(&[0.; 6], &[2, 3]);
        let s = shape(&x, crate::DType::I32).unwrap();
        assert_eq!(s.to_vec::<i32>().unwrap(), vec![2, 3]);
        assert_eq!(
            size(&x, crate::DType::I64)
                .unwrap()
                .to_vec::<i64>()
                .unwrap(),
            vec![6]
        );
        assert_eq!(rank(&x).unwrap().to_vec::<i32>().unwrap(), vec![2]);
        assert!(shape(&x, crate::DType::F32).is_err());
    }
}
