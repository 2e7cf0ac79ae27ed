//! One value written at chosen positions of a fresh, contiguous array: the ones of
//! `eye` and of jacobian seeds, the hot entries of `one_hot`.

use crate::error::{Error, Result};

/// Writes `one` at each flat index of `ones`; an index out of range is an internal
/// error.
pub fn set_each<T: Copy>(s: &mut [T], ones: impl Iterator<Item = usize>, one: T) -> Result<()> {
    for i in ones {
        *s.get_mut(i)
            .ok_or_else(|| Error::Internal(format!("seed index {i} out of range")))? = one;
    }
    Ok(())
}

/// Writes `on` into `s`, an `[outer, depth, inner]` array, at `[o, k, i]` for each
/// index `k = idx[o * inner + i]` that lies in `0..depth` (others write nothing).
pub fn set_one_hot<T: Copy>(
    s: &mut [T],
    idx: &[i64],
    (outer, depth, inner): (usize, usize, usize),
    on: T,
) {
    for o in 0..outer {
        for i in 0..inner {
            let k = idx[o * inner + i];
            if k >= 0 && (k as u64) < depth as u64 {
                s[(o * depth + k as usize) * inner + i] = on;
            }
        }
    }
}
