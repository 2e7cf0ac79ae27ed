//! Softmax and log-softmax over the last axis, computed stably (the row maximum
//! subtracted first).

use ndarray::{ArcArray, ArrayD, Axis, IxDyn};

use super::elementwise::to_standard;
use crate::error::Result;

/// Stable (log-)softmax over the last axis of a standard float array.
pub fn softmax_kernel<T: num_traits::Float + Send + Sync>(
    a: &ArcArray<T, IxDyn>,
    log: bool,
) -> Result<ArrayD<T>> {
    let mut out = to_standard(&a.view(), a.shape())?;
    if out.is_empty() {
        // No row to normalize (and there may be 2**62 empty ones).
        return Ok(out);
    }
    let last = Axis(out.ndim() - 1);
    for mut lane in out.lanes_mut(last) {
        let m = lane
            .iter()
            .fold(T::neg_infinity(), |p, &q| if q > p { q } else { p });
        // An all -inf (or inf) row: shift by 0 so the result is nan like TF's.
        let m = if m.is_finite() { m } else { T::zero() };
        let s = lane.iter().fold(T::zero(), |p, &q| p + (q - m).exp());
        if log {
            let ls = s.ln();
            lane.mapv_inplace(|v| v - m - ls);
        } else {
            lane.mapv_inplace(|v| (v - m).exp() / s);
        }
    }
    Ok(out)
}
