//! Joining and splitting: concat, stack, unstack, split.
//!
//! Concat is the primitive (its gradient slices `dy`); stack, unstack and split are
//! composed of it, of `slice` and of reshapes.

use super::{record, Grads, Op, Saves, VjpCx};
use crate::broadcast::norm_axis;
use crate::error::{Error, Result};
use crate::kernels::concat::concat_views;
use crate::ops::{expand_dims, reshape, slice};
use crate::size::{check_shape, try_vec, try_vec_filled};
use crate::tensor::Tensor;

/// Joins tensors along an existing axis. TF equivalent: `tf.concat`. Gradient:
/// the matching slice of `dy` to each input.
pub fn concat(values: &[Tensor], axis: isize) -> Result<Tensor> {
    let first = values
        .first()
        .ok_or_else(|| Error::invalid("ConcatV2", "concat needs at least one tensor"))?;
    let nd = first.ndim();
    if nd == 0 {
        return Err(Error::invalid(
            "ConcatV2",
            "Can't concatenate scalars (use tf.stack instead)",
        ));
    }
    let ax = norm_axis("ConcatV2", axis, nd)?;
    for (i, v) in values.iter().enumerate().skip(1) {
        if v.dtype() != first.dtype() {
            return Err(Error::dtype_mismatch("ConcatV2", first.dtype(), v.dtype()));
        }
        let ok = v.ndim() == nd && (0..nd).all(|k| k == ax || v.shape()[k] == first.shape()[k]);
        if !ok {
            return Err(Error::invalid(
                "ConcatV2",
                format!(
                    "ConcatOp : Dimensions of inputs should match: shape[0] = {:?} vs. shape[{i}] = {:?}",
                    first.shape(),
                    v.shape()
                ),
            ));
        }
    }
    let mut out_shape = first.shape().to_vec();
    out_shape[ax] = values
        .iter()
        .try_fold(0usize, |n, v| n.checked_add(v.shape()[ax]))
        .ok_or_else(|| {
            Error::invalid(
                "ConcatV2",
                "Encountered overflow when adding the concatenated sizes",
            )
        })?;
    check_shape("ConcatV2", &out_shape, first.dtype())?;
    macro_rules! cat {
        ([$($dt:ident),*]) => {
            match first.data() {
                $(crate::tensor::Data::$dt(_) => {
                    let mut views = Vec::with_capacity(values.len());
                    for v in values {
                        match v.data() {
                            crate::tensor::Data::$dt(a) => views.push(a.view()),
                            d => return Err(Error::dtype_mismatch("ConcatV2", first.dtype(), d.dtype())),
                        }
                    }
                    crate::tensor::Data::$dt(concat_views(&views, ax, &out_shape)?.into_shared())
                })*
            }
        };
    }
    let out = Tensor::new(all_dtypes!(cat!()));
    let sizes: Vec<usize> = values.iter().map(|v| v.shape()[ax]).collect();
    let inputs: Vec<&Tensor> = values.iter().collect();
    record(Concat { axis: ax, sizes }, &inputs, &[&out])?;
    Ok(out)
}
struct Concat {
    axis: usize,
    sizes: Vec<usize>,
}
impl Op for Concat {
    fn name(&self) -> &'static str {
        "ConcatV2"
    }
    fn batched(&self) -> bool {
        true
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let dy = &dys[0];
        // The concatenation axis, behind the jacobian's batch axes.
        let axis = self.axis + cx.batch();
        let mut g = Grads::new();
        let mut begin = vec![0i64; dy.ndim()];
        let mut size: Vec<i64> = dy.shape().iter().map(|&d| d as i64).collect();
        for (i, &n) in self.sizes.iter().enumerate() {
            if cx.needs(i) {
                size[axis] = n as i64;
                g.push(Some(slice(dy, &begin, &size)?));
            } else {
                g.push(None);
            }
            begin[axis] += n as i64;
        }
        Ok(g)
    }
}

/// Joins same-shaped tensors along a new axis. TF equivalent: `tf.stack`.
pub fn stack(values: &[Tensor], axis: isize) -> Result<Tensor> {
    let first = values
        .first()
        .ok_or_else(|| Error::invalid("Pack", "stack needs at least one tensor"))?;
    let ax = norm_axis("Pack", axis, first.ndim() + 1)?;
    for (i, v) in values.iter().enumerate() {
        if v.shape() != first.shape() {
            return Err(Error::invalid(
                "Pack",
                format!(
                    "Shapes of all inputs must match: values[0].shape = {:?} != values[{i}].shape = {:?}",
                    first.shape(),
                    v.shape()
                ),
            ));
        }
    }
    let parts = values
        .iter()
        .map(|v| expand_dims(v, ax as isize))
        .collect::<Result<Vec<_>>>()?;
    concat(&parts, ax as isize)
}

/// Splits `x` along `axis` into rank-reduced tensors. TF equivalent: `tf.unstack`.
pub fn unstack(x: &Tensor, num: Option<usize>, axis: isize) -> Result<Vec<Tensor>> {
    if x.ndim() == 0 {
        return Err(Error::invalid("Unpack", "Cannot unstack a scalar (rank 0)"));
    }
    let ax = norm_axis("Unpack", axis, x.ndim())?;
    let n = x.shape()[ax];
    if let Some(k) = num {
        if k != n {
            return Err(Error::invalid(
                "Unpack",
                format!(
                    "Input shape axis {ax} must equal {k}, got shape {:?}",
                    x.shape()
                ),
            ));
        }
    }
    let mut rest = x.shape().to_vec();
    rest.remove(ax);
    split_sizes(x, &try_vec_filled("Unpack", n, 1)?, ax)?
        .iter()
        .map(|p| reshape(p, &rest))
        .collect()
}

/// How [`split`] divides an axis.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SplitSpec {
    /// Into this many equal parts.
    Num(usize),
    /// Into parts of these sizes (one entry may be -1: the rest).
    Sizes(Vec<i64>),
}

/// Splits `x` along `axis`. TF equivalent: `tf.split`. Gradient: the parts'
/// gradients side by side (missing parts count as zeros).
pub fn split(x: &Tensor, spec: &SplitSpec, axis: isize) -> Result<Vec<Tensor>> {
    let ax = norm_axis("Split", axis, x.ndim())?;
    let d = x.shape()[ax];
    let sizes: Vec<usize> = match spec {
        SplitSpec::Num(0) => {
            return Err(Error::invalid(
                "Split",
                "Number of ways to split should be > 0",
            ))
        }
        SplitSpec::Num(n) => {
            if !d.is_multiple_of(*n) {
                return Err(Error::invalid(
                    "Split",
                    format!("Number of ways to split should evenly divide the split dimension, but got split_dim {ax} (size = {d}) and num_split {n}"),
                ));
            }
            try_vec_filled("Split", *n, d / n)?
        }
        SplitSpec::Sizes(s) => {
            let unknown = s.iter().filter(|&&v| v == -1).count();
            let known = s
                .iter()
                .filter(|&&v| v != -1)
                .try_fold(0i64, |k, &v| k.checked_add(v));
            if unknown > 1 || s.iter().any(|&v| v < -1) {
                return Err(Error::invalid(
                    "SplitV",
                    "size_splits may contain at most one -1 and otherwise non-negative sizes",
                ));
            }
            let known = known.unwrap_or(i64::MAX);
            let fits = if unknown == 1 {
                known <= d as i64
            } else {
                known == d as i64
            };
            if !fits {
                return Err(Error::invalid(
                    "SplitV",
                    format!("Determined shape must either match input shape along split_dim exactly if fully specified, or be less than the size of the input along split_dim if not fully specified.  Got: {known} vs. {d}"),
                ));
            }
            s.iter()
                .map(|&v| {
                    if v == -1 {
                        (d as i64 - known) as usize
                    } else {
                        v as usize
                    }
                })
                .collect()
        }
    };
    split_sizes(x, &sizes, ax)
}

fn split_sizes(x: &Tensor, sizes: &[usize], ax: usize) -> Result<Vec<Tensor>> {
    let mut begin = vec![0i64; x.ndim()];
    let mut size: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
    let mut out = try_vec("Split", sizes.len())?;
    for &n in sizes {
        size[ax] = n as i64;
        out.push(slice(x, &begin, &size)?);
        begin[ax] += n as i64;
    }
    Ok(out)
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
        OpDef::new("Unpack", 1, &["num", "axis"], unpack).outputs(None),
        OpDef::new("SplitV", 1, &["split", "axis"], split).outputs(None),
    ];

    fn unpack(a: &Attrs, _: usize) -> Result<Forward> {
        let num: Option<usize> = get("Unpack", a, "num")?;
        let axis: isize = get("Unpack", a, "axis")?;
        Ok(many_out(move |xs| ops::unstack(&xs[0], num, axis)))
    }

    fn split(a: &Attrs, _: usize) -> Result<Forward> {
        let spec: ops::SplitSpec = get("SplitV", a, "split")?;
        let axis: isize = get("SplitV", a, "axis")?;
        Ok(many_out(move |xs| ops::split(&xs[0], &spec, axis)))
    }
}

/// The Python functions of this family: bindings and where they appear (see
/// `src/ops/README.md`).
#[cfg(feature = "python")]
pub(super) mod python {
    #[allow(unused_imports)]
    use crate::python::binding::*;

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
        let f = move |xs: &[Tensor]| ops::concat(xs, axis);
        Ok(call_sized(py, n, "ConcatV2", || axis.to_string(), &xs, f)?.into())
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
        let f = move |xs: &[Tensor]| ops::stack(xs, axis);
        Ok(call_sized(py, n, "Pack", || axis.to_string(), &xs, f)?.into())
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
        let key = || format!("{num:?},{axis}");
        let f = move |a: &[Tensor]| ops::unstack(&a[0], num, axis);
        let parts = call_multi(py, "Unpack", key, &[x], f)?;
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
                        PyValueError::new_err(format!(
                            "num_or_size_splits must be positive, got {n}"
                        ))
                    })?)
                }
                _ => ops::SplitSpec::Sizes(shape_arg(num_or_size_splits)?),
            },
        };
        let key = || format!("{spec:?},{axis}");
        let owned = spec.clone();
        let parts = call_multi(py, "SplitV", key, &[x], move |a| {
            ops::split(&a[0], &owned, axis)
        })?;
        Ok(parts.into_iter().map(Into::into).collect())
    }

    expose! {
        fn concat in [gt]: "(values: Sequence[TensorLike] | Tensor, axis: int | Tensor, name: str | None = None) -> Tensor";
        fn stack in [gt]: "(values: Sequence[TensorLike] | Tensor, axis: int = 0, name: str | None = None) -> Tensor";
        fn unstack in [gt]: "(value: TensorLike, num: int | None = None, axis: int = 0, name: str | None = None) -> list[Tensor]";
        fn split in [gt]: "(value: TensorLike, num_or_size_splits: int | Sequence[int] | Tensor, axis: int = 0, num: int | None = None, name: str | None = None) -> list[Tensor]";
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testutil::{close, grad, t64, vals};

    #[test]
    fn concat_joins_and_splits_the_gradient() {
        let a = t64(&[1., 2., 3., 4.], &[2, 2]);
        let b = t64(&[5., 6.], &[1, 2]);
        let c = concat(&[a.clone(), b.clone()], 0).unwrap();
        assert_eq!(c.shape(), &[3, 2]);
        close(&vals(&c), &[1., 2., 3., 4., 5., 6.]);
        let d = concat(&[a.clone(), t64(&[7., 8.], &[2, 1])], -1).unwrap();
        close(&vals(&d), &[1., 2., 7., 3., 4., 8.]);
        let w = t64(&[1., 2., 3., 4., 5., 6.], &[3, 2]);
        let bb = b.clone();
        close(
            &grad(&a, Some(&w), |x| {
                concat(&[x.clone(), bb.clone()], 0).unwrap()
            }),
            &[1., 2., 3., 4.],
        );
        close(
            &grad(&b, Some(&w), |x| {
                concat(&[a.clone(), x.clone()], 0).unwrap()
            }),
            &[5., 6.],
        );
        assert!(matches!(
            concat(&[a.clone(), b.clone()], 1),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(concat(std::slice::from_ref(&a), 2).is_err());
        assert!(concat(&[], 0).is_err());
    }

    #[test]
    fn stack_and_unstack_are_inverse() {
        let p = t64(&[1., 2.], &[2]);
        let q = t64(&[3., 4.], &[2]);
        let s = stack(&[p.clone(), q.clone()], 1).unwrap();
        assert_eq!(s.shape(), &[2, 2]);
        close(&vals(&s), &[1., 3., 2., 4.]);
        let w = t64(&[1., 2., 3., 4.], &[2, 2]);
        let qq = q.clone();
        close(
            &grad(&p, Some(&w), |x| {
                stack(&[x.clone(), qq.clone()], 1).unwrap()
            }),
            &[1., 3.],
        );
        assert!(stack(&[p.clone(), t64(&[1.], &[1])], 0).is_err());

        let x = t64(&[1., 2., 3., 4., 5., 6.], &[2, 3]);
        let parts = unstack(&x, None, 1).unwrap();
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[1].shape(), &[2]);
        close(&vals(&parts[1]), &[2., 5.]);
        let w = t64(&[10., 20.], &[2]);
        close(
            &grad(&x, Some(&w), |x| unstack(x, Some(3), 1).unwrap()[1].clone()),
            &[0., 10., 0., 0., 20., 0.],
        );
        assert!(unstack(&x, Some(2), 1).is_err());
    }

    #[test]
    fn split_by_count_and_by_sizes() {
        let x = t64(&[0., 1., 2., 3., 4., 5.], &[6]);
        let p = split(&x, &SplitSpec::Sizes(vec![2, -1, 1]), 0).unwrap();
        close(&vals(&p[0]), &[0., 1.]);
        close(&vals(&p[1]), &[2., 3., 4.]);
        close(&vals(&p[2]), &[5.]);
        let q = split(&x, &SplitSpec::Num(3), 0).unwrap();
        close(&vals(&q[2]), &[4., 5.]);
        assert!(split(&x, &SplitSpec::Num(4), 0).is_err());
        assert!(split(&x, &SplitSpec::Sizes(vec![2, 2]), 0).is_err());
        // Gradient of a sum over two of the parts: ones there, zeros elsewhere.
        let g = grad(&x, None, |x| {
            let p = split(x, &SplitSpec::Num(3), 0).unwrap();
            concat(&[p[0].clone(), p[2].clone()], 0).unwrap()
        });
        close(&g, &[1., 1., 0., 0., 1., 1.]);
    }
}
