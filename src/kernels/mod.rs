//! Raw compute kernels over ndarray storage: no tapes, no Python, no ids.
//!
//! Kernels run single-threaded below [`PAR_THRESHOLD`] elements (small ops stay
//! allocation-light) and split across the engine's pool ([`crate::pool`]) above it.

pub mod concat;
pub mod conv;
pub mod elementwise;
pub mod fill;
pub mod linalg;
pub mod matmul;
pub mod reduce;
pub mod remap;
pub mod softmax;
pub mod vmath;

/// Element count above which elementwise kernels run in parallel.
pub const PAR_THRESHOLD: usize = 1 << 16;

/// Bytes from which a fresh buffer is backed by transparent huge pages.
pub const HUGE_PAGE_BYTES: usize = 4 << 20;

/// Asks Linux to back a fresh, not yet written buffer of `bytes` with 2 MiB pages
/// (`madvise(MADV_HUGEPAGE)`, as numpy does for large arrays): writing a large output
/// then takes a few hundred page faults instead of one per 4 KiB. Only advice: a
/// kernel without transparent huge pages, or another OS, ignores it.
pub(crate) fn advise_huge_pages(ptr: *mut u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    if bytes >= HUGE_PAGE_BYTES {
        // The advice applies to whole pages inside the buffer.
        const PAGE: usize = 4096;
        let start = (ptr as usize).div_ceil(PAGE) * PAGE;
        let end = (ptr as usize + bytes) / PAGE * PAGE;
        if end > start {
            // SAFETY: [start, end) lies inside the caller's allocation; madvise only
            // changes how the kernel backs it and cannot invalidate it.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, bytes);
}
