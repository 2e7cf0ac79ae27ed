//! Numpy/TF broadcasting of shapes.

use crate::error::{Error, Result};

/// The shape two operands broadcast to, or `ShapeMismatch` naming `op`.
pub fn broadcast_shapes(op: &'static str, a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return Err(Error::shapes(op, a, b));
        };
    }
    Ok(out)
}

/// Normalizes a possibly negative axis against `ndim`.
pub fn norm_axis(op: &'static str, axis: isize, ndim: usize) -> Result<usize> {
    let n = ndim as isize;
    if axis < -n || axis >= n {
        return Err(Error::invalid(
            op,
            format!("axis {axis} is out of bounds for a tensor of rank {ndim}"),
        ));
    }
    Ok(if axis < 0 {
        (axis + n) as usize
    } else {
        axis as usize
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_broadcast_like_numpy() {
        assert_eq!(broadcast_shapes("Add", &[2, 3], &[3]).unwrap(), vec![2, 3]);
        assert_eq!(
            broadcast_shapes("Add", &[2, 1], &[1, 4]).unwrap(),
            vec![2, 4]
        );
        assert_eq!(broadcast_shapes("Add", &[], &[5]).unwrap(), vec![5]);
        assert!(broadcast_shapes("Add", &[2, 3], &[4]).is_err());
    }
}
