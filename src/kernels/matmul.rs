//! Matrix products of 2-D blocks.

use ndarray::{Array2, ArrayView2, LinalgScalar};

/// `a @ b` for 2-D views (with optional transposes applied through views).
pub fn matmul2<T: LinalgScalar>(a: ArrayView2<'_, T>, b: ArrayView2<'_, T>) -> Array2<T> {
    a.dot(&b)
}
