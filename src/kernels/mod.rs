//! Raw compute kernels over ndarray storage: no tapes, no Python, no ids.
//!
//! Kernels run single-threaded below [`PAR_THRESHOLD`] elements (small ops stay
//! allocation-light) and split across rayon's pool above it.

pub mod elementwise;
pub mod linalg;
pub mod matmul;
pub mod reduce;

/// Element count above which elementwise kernels run in parallel.
pub const PAR_THRESHOLD: usize = 1 << 16;
