//! Raw compute kernels over ndarray storage: no tapes, no Python, no ids.
//!
//! Kernels run single-threaded below [`PAR_THRESHOLD`] elements (small ops stay
//! allocation-light) and split across rayon's pool above it.

pub mod elementwise;
pub mod linalg;
pub mod matmul;
pub mod reduce;
pub mod vmath;

/// Element count above which elementwise kernels run in parallel.
pub const PAR_THRESHOLD: usize = 1 << 16;

/// `f(i, piece)` for each `chunk`-sized piece `i` of `out`: the calling thread works
/// through the pieces, and rayon's threads, woken for it, take pieces too once they
/// run.
///
/// An eager op is called from a thread outside the pool (Python's), one op at a time,
/// so the pool's threads are usually asleep when it starts. Handing the whole op to
/// them and sleeping until it is done puts two wake-ups on every op's critical path:
/// measured at 70–200 µs each on this 2-vCPU machine, when a 200K-element multiply
/// takes 25 µs. Here the caller claims pieces from a shared counter from the start and
/// only waits for pieces a helper has already claimed; a helper that wakes after the
/// last piece is claimed finds nothing to do and never touches `out` or `f`.
#[cfg(feature = "rayon")]
pub(crate) fn par_pieces<T: Send>(out: &mut [T], chunk: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let chunk = chunk.max(1);
    let n = out.len();
    let pieces = n.div_ceil(chunk);
    let helpers = rayon::current_num_threads().min(pieces).saturating_sub(1);
    let base = out.as_mut_ptr() as usize;
    // Piece `i` of `out`, through `f`.
    let run = move |i: usize| {
        let start = i * chunk;
        let len = chunk.min(n - start);
        // SAFETY: piece `i` is [start, start + len) of `out`, claimed by one thread
        // alone through the counter, while `out` is borrowed by this call.
        let piece = unsafe { std::slice::from_raw_parts_mut((base as *mut T).add(start), len) };
        f(i, piece);
    };
    if helpers == 0 {
        (0..pieces).for_each(run);
        return;
    }
    /// What the caller and its helpers share: the next piece to claim, the number of
    /// helpers inside `help`, and the work itself as an erased pointer, dereferenced
    /// only for a claimed piece (the caller returns once every piece is claimed and no
    /// helper is inside `help`, so no claimed piece outlives the call).
    struct Shared {
        next: AtomicUsize,
        busy: AtomicUsize,
        pieces: usize,
        run: *const (dyn Fn(usize) + Sync),
    }
    // SAFETY: `run` points to a `Sync` closure, called only while the caller waits.
    unsafe impl Send for Shared {}
    unsafe impl Sync for Shared {}
    impl Shared {
        /// Runs pieces until none is left.
        fn claim(&self) {
            loop {
                let i = self.next.fetch_add(1, Ordering::SeqCst);
                if i >= self.pieces {
                    return;
                }
                // SAFETY: `i` is a claimed piece: the caller is still waiting.
                unsafe { (*self.run)(i) };
            }
        }

        /// A helper's part. It counts as busy from before its first claim, so one the
        /// caller did not see busy can only claim after the last piece: nothing.
        /// (A panic here aborts: rayon's rule for spawned jobs.)
        fn help(&self) {
            self.busy.fetch_add(1, Ordering::SeqCst);
            self.claim();
            self.busy.fetch_sub(1, Ordering::SeqCst);
        }
    }
    let run: &(dyn Fn(usize) + Sync) = &run;
    // SAFETY: erases the closure's lifetime; see `Shared`.
    let run: *const (dyn Fn(usize) + Sync + 'static) = unsafe { std::mem::transmute(run) };
    let shared = Arc::new(Shared {
        next: AtomicUsize::new(0),
        busy: AtomicUsize::new(0),
        pieces,
        run,
    });
    for _ in 0..helpers {
        let s = Arc::clone(&shared);
        rayon::spawn(move || s.help());
    }
    // Waits for pieces a helper is in the middle of (short: spin), also when a piece
    // panics on this thread, before the closure goes away.
    struct Wait<'a>(&'a Shared);
    impl Drop for Wait<'_> {
        fn drop(&mut self) {
            self.0.next.fetch_max(self.0.pieces, Ordering::SeqCst);
            while self.0.busy.load(Ordering::SeqCst) > 0 {
                std::hint::spin_loop();
            }
        }
    }
    let _wait = Wait(&shared);
    shared.claim();
}

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

#[cfg(all(test, feature = "rayon"))]
mod tests {
    use super::par_pieces;

    #[test]
    fn par_pieces_writes_every_piece_once() {
        for (n, chunk) in [(0, 4), (1, 4), (1000, 7), (100_000, 1 << 14), (5, 100)] {
            let mut out = vec![0usize; n];
            par_pieces(&mut out, chunk, |i, p| {
                for (j, x) in p.iter_mut().enumerate() {
                    *x += i * chunk + j + 1;
                }
            });
            assert!(out.iter().enumerate().all(|(j, &x)| x == j + 1), "n={n}");
        }
        // From several threads at once (two Python threads' ops), nested in the pool.
        std::thread::scope(|s| {
            for t in 0..4 {
                s.spawn(move || {
                    for _ in 0..50 {
                        let mut out = vec![0u64; 70_000];
                        par_pieces(&mut out, 1000, |i, p| p.fill(i as u64 + t));
                        assert!(out
                            .iter()
                            .enumerate()
                            .all(|(j, &x)| x == (j / 1000) as u64 + t));
                    }
                });
            }
        });
        rayon::scope(|_| {
            let mut out = vec![1u8; 10_000];
            par_pieces(&mut out, 100, |_, p| p.fill(2));
            assert!(out.iter().all(|&x| x == 2));
        });
    }
}
