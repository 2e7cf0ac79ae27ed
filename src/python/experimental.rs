//! `gt.experimental`'s native half: the allocator cache (see `crate::alloc`).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Returns the memory the allocator cache keeps to the system (and the free memory of
/// malloc's heaps).
#[pyfunction]
fn _release_memory() {
    crate::alloc::release_cached();
}

/// Sets the most bytes the allocator cache keeps while a tape is alive (0: none).
#[pyfunction]
fn _set_memory_cache_limit(bytes: usize) {
    crate::alloc::set_cache_limit(bytes);
}

/// `(limit, bytes cached now)`.
#[pyfunction]
fn _memory_cache_info() -> (usize, usize) {
    (crate::alloc::cache_limit(), crate::alloc::cached_bytes())
}

/// Returns and clears the TF op types whose gradient rules `jacobian` ran once per
/// row (not vectorized) since the last call: a test hook.
#[pyfunction]
fn _per_row_fallbacks() -> Vec<&'static str> {
    crate::tape::take_per_row_fallbacks()
}

/// The dense tensor of `gt.IndexedSlices(values, indices, dense_shape)`: the rows of
/// `values` added at rows `indices` of zeros (recorded: differentiable in `values`).
#[pyfunction]
fn _indexed_slices_to_dense(
    values: &Bound<'_, PyAny>,
    indices: &Bound<'_, PyAny>,
    dense_shape: Vec<usize>,
) -> PyResult<super::tensor::PyTensor> {
    let values = super::convert::to_tensor(values, None)?;
    let indices = super::convert::to_tensor(indices, None)?;
    if values.ndim() == 0 || indices.ndim() != 1 || indices.shape()[0] != values.shape()[0] {
        return Err(PyValueError::new_err(format!(
            "IndexedSlices: values of shape {:?} and indices of shape {:?} do not match",
            values.shape(),
            indices.shape()
        )));
    }
    if dense_shape.is_empty() || dense_shape[1..] != values.shape()[1..] {
        return Err(PyValueError::new_err(format!(
            "IndexedSlices: values of shape {:?} are not rows of dense_shape {dense_shape:?}",
            values.shape()
        )));
    }
    // A node of its own in a gt.function trace (the dense shape is fixed per trace).
    let key = format!("{dense_shape:?}");
    let dense = crate::graph::op(
        "IndexedSlicesToDense",
        &key,
        &[&values, &indices],
        move |a| {
            crate::ops::Sparse {
                values: a[0].clone(),
                indices: a[1].clone(),
                dense_shape: dense_shape.clone(),
            }
            .to_dense()
        },
    )?;
    Ok(dense.into())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The environment's limit, read once as the module loads.
    match crate::alloc::limit_from_env() {
        Ok(Some(limit)) => crate::alloc::set_cache_limit(limit),
        Ok(None) => {}
        Err(msg) => return Err(PyValueError::new_err(msg)),
    }
    m.add_function(wrap_pyfunction!(_release_memory, m)?)?;
    m.add_function(wrap_pyfunction!(_set_memory_cache_limit, m)?)?;
    m.add_function(wrap_pyfunction!(_memory_cache_info, m)?)?;
    m.add_function(wrap_pyfunction!(_per_row_fallbacks, m)?)?;
    m.add_function(wrap_pyfunction!(_indexed_slices_to_dense, m)?)?;
    Ok(())
}
