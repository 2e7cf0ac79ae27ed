//! Shape manipulation: reshape, broadcast, transpose, expand/squeeze.
//!
//! These move or share storage without arithmetic; their gradients are the inverse
//! movement of `dy`.

use ndarray::IxDyn;

use super::{grads, record, Grads, Op, Saves, VjpCx};
use crate::broadcast::{broadcast_shapes, norm_axis};
use crate::error::{Error, Result};
use crate::tape::unbroadcast as backward_unbroadcast;
use crate::tensor::Tensor;

/// Reshapes to `shape` (same number of elements). TF equivalent: `tf.reshape`.
pub fn reshape(x: &Tensor, shape: &[usize]) -> Result<Tensor> {
    let n: usize = shape.iter().product();
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
        let a = if a.is_standard_layout() { a.clone() } else { a.as_standard_layout().into_owned().into_shared() };
        a.into_shape_with_order(IxDyn(shape)).expect("standard layout, same size")
    }));
    record(Reshape, &[x], &[&out]);
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
            known *= d as usize;
        }
    }
    let mut dims: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
    if let Some(i) = unknown {
        if known == 0 || x.size() % known != 0 {
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
    fn name(&self) -> &'static str {
        "Reshape"
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        Ok(grads![Some(reshape(&dys[0], cx.input_shape(0))?)])
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
    let out = Tensor::new(map_same!(x.data(), a => {
        a.broadcast(IxDyn(shape)).expect("checked above").to_owned()
    }));
    record(BroadcastTo, &[x], &[&out]);
    Ok(out)
}
struct BroadcastTo;
impl Op for BroadcastTo {
    fn name(&self) -> &'static str {
        "BroadcastTo"
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        Ok(grads![Some(backward_unbroadcast(
            dys[0].clone(),
            cx.input_shape(0)
        )?)])
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
    record(Transpose { perm }, &[x], &[&out]);
    Ok(out)
}
struct Transpose {
    perm: Vec<usize>,
}
impl Op for Transpose {
    fn name(&self) -> &'static str {
        "Transpose"
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn vjp(&self, _cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let mut inv = vec![0; self.perm.len()];
        for (i, &p) in self.perm.iter().enumerate() {
            inv[p] = i;
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
