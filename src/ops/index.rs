//! Indexing: `x[...]` (TF's strided slice) and its gradient, a scatter into zeros.

use ndarray::{IxDyn, SliceInfo, SliceInfoElem};

use super::{grads, record, unary_out, Grads, Op, Saves, VjpCx};
use crate::error::{Error, Result};
use crate::ops::zeros;
use crate::tensor::Tensor;

/// One entry of an index expression, with Python's meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Index {
    /// `x[i]`: selects one position and drops the axis (negative counts from the end).
    Int(isize),
    /// `x[start:stop:step]`.
    Slice {
        start: Option<isize>,
        stop: Option<isize>,
        step: isize,
    },
    /// `x[None]` / `x[np.newaxis]`: inserts a size-1 axis.
    NewAxis,
    /// `x[...]`: as many full slices as needed.
    Ellipsis,
}

/// Python's `slice.indices` followed by conversion to ndarray's convention
/// (ndarray slices `start..end` first, then steps from the end when `step < 0`).
fn slice_elem(start: Option<isize>, stop: Option<isize>, step: isize, len: usize) -> SliceInfoElem {
    let n = len as isize;
    let (first, count) = if step > 0 {
        let clamp = |v: isize| if v < 0 { (v + n).max(0) } else { v.min(n) };
        let s = start.map_or(0, clamp);
        let e = stop.map_or(n, clamp);
        (s, if e > s { (e - s + step - 1) / step } else { 0 })
    } else {
        let clamp = |v: isize| if v < 0 { (v + n).max(-1) } else { v.min(n - 1) };
        let s = start.map_or(n - 1, clamp);
        let e = stop.map_or(-1, clamp);
        (
            s,
            if s > e {
                (s - e + (-step) - 1) / (-step)
            } else {
                0
            },
        )
    };
    if count == 0 {
        return SliceInfoElem::Slice {
            start: 0,
            end: Some(0),
            step: 1,
        };
    }
    if step > 0 {
        SliceInfoElem::Slice {
            start: first,
            end: Some(first + step * (count - 1) + 1),
            step,
        }
    } else {
        let last = first + step * (count - 1);
        SliceInfoElem::Slice {
            start: last,
            end: Some(first + 1),
            step,
        }
    }
}

/// Resolves an index expression against `shape` into ndarray slice elements.
fn resolve(index: &[Index], shape: &[usize]) -> Result<Vec<SliceInfoElem>> {
    let consumed = index
        .iter()
        .filter(|i| matches!(i, Index::Int(_) | Index::Slice { .. }))
        .count();
    let ellipses = index
        .iter()
        .filter(|i| matches!(i, Index::Ellipsis))
        .count();
    if ellipses > 1 {
        return Err(Error::invalid(
            "StridedSlice",
            "an index can only have a single ellipsis ('...')",
        ));
    }
    if consumed > shape.len() {
        return Err(Error::invalid(
            "StridedSlice",
            format!(
                "too many indices: the tensor has rank {} but {} were given",
                shape.len(),
                consumed
            ),
        ));
    }
    let mut out = Vec::with_capacity(shape.len() + 2);
    let mut axis = 0;
    for it in index {
        match *it {
            Index::Int(i) => {
                let n = shape[axis] as isize;
                let j = if i < 0 { i + n } else { i };
                if j < 0 || j >= n {
                    return Err(Error::invalid(
                        "StridedSlice",
                        format!("slice index {i} of dimension {axis} out of bounds."),
                    ));
                }
                out.push(SliceInfoElem::Index(j));
                axis += 1;
            }
            Index::Slice { start, stop, step } => {
                if step == 0 {
                    return Err(Error::invalid("StridedSlice", "slice step cannot be zero"));
                }
                out.push(slice_elem(start, stop, step, shape[axis]));
                axis += 1;
            }
            Index::NewAxis => out.push(SliceInfoElem::NewAxis),
            Index::Ellipsis => {
                let k = shape.len() - consumed;
                for _ in 0..k {
                    out.push(SliceInfoElem::Slice {
                        start: 0,
                        end: None,
                        step: 1,
                    });
                    axis += 1;
                }
            }
        }
    }
    while axis < shape.len() {
        out.push(SliceInfoElem::Slice {
            start: 0,
            end: None,
            step: 1,
        });
        axis += 1;
    }
    Ok(out)
}

fn info(elems: &[SliceInfoElem]) -> SliceInfo<Vec<SliceInfoElem>, IxDyn, IxDyn> {
    SliceInfo::try_from(elems.to_vec()).expect("dynamic-dimension slice info is always valid")
}

/// `x[index]` with Python/numpy basic-indexing semantics. TF equivalent:
/// `tf.Tensor.__getitem__` (StridedSlice). Gradient: `dy` scattered into zeros.
pub fn strided_slice(x: &Tensor, index: &[Index]) -> Result<Tensor> {
    let elems = resolve(index, x.shape())?;
    let si = info(&elems);
    let out = Tensor::new(map_same!(x.data(), a => a.slice(si.clone()).to_owned()));
    record(StridedSlice { elems }, &[x], &[&out]);
    Ok(out)
}
struct StridedSlice {
    elems: Vec<SliceInfoElem>,
}
impl Op for StridedSlice {
    fn name(&self) -> &'static str {
        "StridedSlice"
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        Ok(grads![Some(slice_scatter(
            &dys[0],
            cx.input_shape(0),
            &self.elems
        )?)])
    }
}

/// Zeros of `shape` with `dy` written into the slice `elems` (the adjoint of
/// `strided_slice`). TF equivalent: `StridedSliceGrad`.
fn slice_scatter(dy: &Tensor, shape: &[usize], elems: &[SliceInfoElem]) -> Result<Tensor> {
    let si = info(elems);
    let z = zeros(shape, dy.dtype());
    let out = Tensor::new(
        map_pair!("StridedSliceGrad", z.data(), dy.data(), [F32, F64, C64, C128], base, g => {
            let mut o = base.to_owned();
            o.slice_mut(si.clone()).assign(g);
            o
        }),
    );
    unary_out(
        SliceScatter {
            elems: elems.to_vec(),
        },
        dy,
        out,
    )
}
struct SliceScatter {
    elems: Vec<SliceInfoElem>,
}
impl Op for SliceScatter {
    fn name(&self) -> &'static str {
        "StridedSliceGrad"
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn vjp(&self, _cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let si = info(&self.elems);
        let out = Tensor::new(map_same!(dys[0].data(), a => a.slice(si.clone()).to_owned()));
        record(
            StridedSlice {
                elems: self.elems.clone(),
            },
            &[&dys[0]],
            &[&out],
        );
        Ok(grads![Some(out)])
    }
}
