//! Remapping kernels: every output element is one input element (or a fill value)
//! at a precomputed flat offset, and the adjoint that scatter-adds back. The offsets
//! come from `ops::remap`'s `AxisMaps`, which checks them against the input's shape.

use ndarray::{ArcArray, ArrayD, IxDyn};

use super::elementwise::broadcast_owned;
use crate::error::{Error, Result};
use crate::size::{shaped, try_collect, try_full};

/// The elements of `a` at the flat (row-major) offsets `idx`, `fill` where an offset is
/// `None`, shaped `out_shape`. Offsets must lie inside `a` (checked by the caller).
pub fn remap_kernel<T: Copy + Send + Sync>(
    a: &ArcArray<T, IxDyn>,
    idx: &[Option<usize>],
    fill: T,
    out_shape: &[usize],
) -> Result<ArrayD<T>> {
    let dense;
    let s = match a.as_slice() {
        Some(s) => s,
        None => {
            dense = broadcast_owned(a, a.shape())?;
            dense
                .as_slice()
                .ok_or_else(|| Error::Internal("a fresh array is contiguous".into()))?
        }
    };
    // `AxisMaps::flat_index` checked every offset against the input's shape.
    let v = try_collect(
        "Remap",
        idx.len(),
        idx.iter().map(|i| i.map_or(fill, |i| s[i])),
    )?;
    shaped("Remap", out_shape, v)
}

/// The adjoint of [`remap_kernel`]: zeros of `in_shape` with each element of `dy` (in
/// output order) added at its flat offset in `idx` (`None`: dropped).
pub fn scatter_kernel<T: Copy + num_traits::Zero + std::ops::AddAssign>(
    dy: &ArcArray<T, IxDyn>,
    idx: &[Option<usize>],
    in_shape: &[usize],
) -> Result<ArrayD<T>> {
    let mut out = try_full("Remap", in_shape, T::zero())?;
    let o = out
        .as_slice_mut()
        .ok_or_else(|| Error::Internal("a fresh array is contiguous".into()))?;
    // `AxisMaps::flat_index` checked every offset against `in_shape`; `dy` is in output order.
    for (&g, &i) in dy.iter().zip(idx) {
        if let Some(i) = i {
            o[i] += g;
        }
    }
    Ok(out)
}
