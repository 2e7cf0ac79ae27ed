//! Concatenation: same-rank views copied side by side along one axis.

use ndarray::{ArrayD, ArrayViewD, Axis, Slice, Zip};

use crate::error::{Error, Result};
use crate::size::try_uninit;

/// `views` joined along `ax` into a new array of `out_shape` (checked by the caller).
pub fn concat_views<T: Copy>(
    views: &[ArrayViewD<'_, T>],
    ax: usize,
    out_shape: &[usize],
) -> Result<ArrayD<T>> {
    let mut out = try_uninit::<T>("ConcatV2", out_shape)?;
    let mut at = 0;
    for v in views {
        let n = v.shape()[ax];
        let mut part = out.slice_axis_mut(Axis(ax), Slice::from(at..at + n));
        if part.shape() != v.shape() {
            return Err(Error::shapes("ConcatV2", part.shape(), v.shape()));
        }
        Zip::from(&mut part).and(v).for_each(|o, &x| {
            o.write(x);
        });
        at += n;
    }
    if at != out_shape[ax] {
        return Err(Error::Internal(format!(
            "ConcatV2: {at} of {out_shape:?} written"
        )));
    }
    // SAFETY: the parts written above tile the output along `ax` (checked: `at`).
    Ok(unsafe { out.assume_init() })
}
