//! The engine's thread pool: the one place where work is handed to other threads.
//!
//! Every parallel kernel and every parallel sweep goes through this module (the test
//! `tests/pool_rule.rs` holds the rest of the crate to it), so these rules hold
//! everywhere:
//!
//! - **No thread waits on the pool while holding the GIL** (or any lock a pool thread
//!   might need). A binding that runs engine work while holding such a lock installs a
//!   [`BlockingHook`] with [`set_blocking_hook`]: every call that waits for pool threads
//!   (`install`, `for_each`, `map`) runs inside it, and Python's hook releases
//!   the GIL there. `pieces` does not wait on the pool: the caller works through the
//!   pieces itself and waits only for pieces a pool thread has already started, which
//!   run kernel code and nothing else. In a [`long_call`] (a graph run) the pieces are
//!   first offered to a pool thread the call keeps awake, under the same rule.
//! - **Pool threads never run user callbacks.** Gradient rules that call back into
//!   user code (custom gradients, registered gradients: [`crate::ops::Op::calls_user_code`])
//!   run on the thread that asked for the gradient, so a pool thread can never block
//!   on the GIL while the thread holding it waits for the pool.
//! - **fork**: a child process has none of its parent's threads. A `pthread_atfork`
//!   handler drops the parent's pool in the child (a new one is started on first use)
//!   and holds the allocator cache's lock across the fork, so the child finds it free.
//! - **Panics** on a pool thread are carried back to the thread that handed the work
//!   over, which unwinds as if the panic had happened there.
//!
//! Without the `rayon` feature everything here runs on the calling thread.

#[cfg(feature = "rayon")]
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
#[cfg(feature = "rayon")]
use std::sync::{Arc, Mutex};

/// Runs a closure that waits for pool threads (see [`set_blocking_hook`]).
pub type BlockingHook = fn(&mut dyn FnMut());

static HOOK: std::sync::OnceLock<BlockingHook> = std::sync::OnceLock::new();

/// Installs the hook every wait on the pool runs inside (once per process; later calls
/// are ignored). The Python bindings install one that releases the GIL when the
/// calling thread holds it.
pub fn set_blocking_hook(hook: BlockingHook) {
    let _ = HOOK.set(hook);
}

/// Runs `f`, which waits for pool threads, inside the blocking hook.
#[cfg(feature = "rayon")]
fn blocking<R>(f: impl FnOnce() -> R) -> R {
    match HOOK.get() {
        // A pool thread holds nothing the hook is about.
        Some(hook) if !in_worker() => {
            let mut f = Some(f);
            let mut r = None;
            hook(&mut || r = f.take().map(|f| f()));
            r.expect("the blocking hook runs its closure once")
        }
        _ => f(),
    }
}

/// Whether the calling thread is one of the pool's threads.
pub fn in_worker() -> bool {
    #[cfg(feature = "rayon")]
    return rayon::current_thread_index().is_some();
    #[cfg(not(feature = "rayon"))]
    false
}

/// Number of threads parallel kernels use (1 without the `rayon` feature).
pub fn threads() -> usize {
    #[cfg(feature = "rayon")]
    return pool().map_or(1, |p| p.current_num_threads());
    #[cfg(not(feature = "rayon"))]
    1
}

/// Proof of running on the pool, for libraries that parallelize on rayon's current
/// pool themselves (the `gemm` and `faer` matrix kernels).
pub(crate) struct Threads(usize);

impl Threads {
    /// The `gemm` crate's parallelism over this pool.
    pub(crate) fn gemm(&self) -> gemm::Parallelism {
        #[cfg(feature = "rayon")]
        if self.0 > 1 {
            return gemm::Parallelism::Rayon(self.0);
        }
        gemm::Parallelism::None
    }

    /// faer's parallelism over this pool.
    pub(crate) fn faer(&self) -> faer::Par {
        if self.0 > 1 {
            faer::Par::rayon(self.0)
        } else {
            faer::Par::Seq
        }
    }
}

/// Runs `f` on the pool (inside the blocking hook), handing it the pool's threads.
pub(crate) fn install<R: Send>(f: impl FnOnce(Threads) -> R + Send) -> R {
    #[cfg(feature = "rayon")]
    if let Some(p) = pool() {
        if p.current_num_threads() > 1 {
            return blocking(|| p.install(|| f(Threads(p.current_num_threads()))));
        }
    }
    f(Threads(1))
}

/// `f(i)` for every `i` in `0..n`, spread over the pool.
pub(crate) fn for_each(n: usize, f: impl Fn(usize) + Sync + Send) {
    #[cfg(feature = "rayon")]
    if n > 1 && threads() > 1 {
        use rayon::prelude::*;
        install(|_| (0..n).into_par_iter().for_each(f));
        return;
    }
    (0..n).for_each(f)
}

/// `[f(0), ..., f(n - 1)]`, computed on the pool.
pub(crate) fn map<R: Send>(n: usize, f: impl Fn(usize) -> R + Sync + Send) -> Vec<R> {
    #[cfg(feature = "rayon")]
    if n > 1 && threads() > 1 {
        use rayon::prelude::*;
        return install(|_| (0..n).into_par_iter().map(f).collect());
    }
    (0..n).map(f).collect()
}

/// `f(i, piece)` for each `chunk`-sized piece `i` of `out`: the calling thread works
/// through the pieces, and the pool's threads, woken for it, take pieces too once they
/// run.
///
/// An eager op is called from a thread outside the pool (Python's), one op at a time,
/// so the pool's threads are usually asleep when it starts. Handing the whole op to
/// them and sleeping until it is done puts two wake-ups on every op's critical path:
/// measured at 70–200 µs each on this 2-vCPU machine, when a 200K-element multiply
/// takes 25 µs. Here the caller claims pieces from a shared counter from the start and
/// only waits for pieces a helper has already claimed; a helper that wakes after the
/// last piece is claimed finds nothing to do and never touches `out` or `f`. So the
/// caller never waits for a pool thread to be free: it needs no blocking hook.
pub(crate) fn pieces<T: Send>(out: &mut [T], chunk: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    let chunk = chunk.max(1);
    #[cfg(feature = "rayon")]
    if out.len() > chunk {
        if let Some(p) = pool() {
            let count = out.len().div_ceil(chunk);
            let helpers = p.current_num_threads().min(count).saturating_sub(1);
            if helpers > 0 {
                shared_pieces(p, out, chunk, helpers, f);
                return;
            }
        }
    }
    for (i, piece) in out.chunks_mut(chunk).enumerate() {
        f(i, piece);
    }
}

#[cfg(feature = "rayon")]
fn shared_pieces<T: Send>(
    pool: &'static rayon::ThreadPool,
    out: &mut [T],
    chunk: usize,
    helpers: usize,
    f: impl Fn(usize, &mut [T]) + Sync,
) {
    let n = out.len();
    let count = n.div_ceil(chunk);
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
    let run: &(dyn Fn(usize) + Sync) = &run;
    // SAFETY: erases the closure's lifetime; see `Shared`.
    let run: *const (dyn Fn(usize) + Sync + 'static) = unsafe { std::mem::transmute(run) };
    let shared = Arc::new(Shared::new(count, run));
    // A kept thread (see `hot`) takes the pieces at once; otherwise pool threads are
    // woken for them.
    if !hot::offer(&shared) {
        for _ in 0..helpers {
            let s = Arc::clone(&shared);
            pool.spawn(move || s.help());
        }
    }
    // Waits for the helpers' pieces also when a piece panics on this thread, before
    // the closure goes away.
    struct Finish<'a>(&'a Shared);
    impl Drop for Finish<'_> {
        fn drop(&mut self) {
            self.0.finish();
        }
    }
    {
        let _finish = Finish(&shared);
        shared.claim();
    }
    if shared.panicked.load(Ordering::SeqCst) {
        let payload = shared.panic.lock().ok().and_then(|mut p| p.take());
        std::panic::resume_unwind(payload.unwrap_or_else(|| Box::new("a pool thread panicked")));
    }
}

/// What the caller of [`pieces`] and its helpers share: the next piece to claim, the
/// number of helpers inside `help`, the first panic a helper met, and the work itself as
/// an erased pointer, dereferenced only for a claimed piece (the caller returns once
/// every piece is claimed and no helper is inside `help`, so no claimed piece outlives
/// the call).
#[cfg(feature = "rayon")]
struct Shared {
    next: AtomicUsize,
    busy: AtomicUsize,
    count: usize,
    panicked: AtomicBool,
    panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
    run: *const (dyn Fn(usize) + Sync),
}

// SAFETY: `run` points to a `Sync` closure, called only while the caller waits (see
// `Shared`); the other fields are thread-safe.
#[cfg(feature = "rayon")]
unsafe impl Send for Shared {}
// SAFETY: as above.
#[cfg(feature = "rayon")]
unsafe impl Sync for Shared {}

#[cfg(feature = "rayon")]
impl Shared {
    fn new(count: usize, run: *const (dyn Fn(usize) + Sync)) -> Shared {
        Shared {
            next: AtomicUsize::new(0),
            busy: AtomicUsize::new(0),
            count,
            panicked: AtomicBool::new(false),
            panic: Mutex::new(None),
            run,
        }
    }

    /// Runs pieces until none is left.
    fn claim(&self) {
        loop {
            let i = self.next.fetch_add(1, Ordering::SeqCst);
            if i >= self.count {
                return;
            }
            // SAFETY: `i` is a claimed piece: the caller is still waiting.
            unsafe { (*self.run)(i) };
        }
    }

    /// A helper's part. It counts as busy from before its first claim, so one the
    /// caller did not see busy can only claim after the last piece: nothing. A panic is
    /// kept for the caller, and the pieces left are given up.
    fn help(&self) {
        self.busy.fetch_add(1, Ordering::SeqCst);
        if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.claim())) {
            self.next.fetch_max(self.count, Ordering::SeqCst);
            if let Ok(mut slot) = self.panic.lock() {
                slot.get_or_insert(p);
            }
            self.panicked.store(true, Ordering::SeqCst);
        }
        self.busy.fetch_sub(1, Ordering::SeqCst);
    }

    /// Stops further claims and waits for pieces a helper is in the middle of (short:
    /// spin).
    fn finish(&self) {
        self.next.fetch_max(self.count, Ordering::SeqCst);
        while self.busy.load(Ordering::SeqCst) > 0 {
            std::hint::spin_loop();
        }
    }
}

/// `f(i)` for every `i` in `0..count`, shared out as [`pieces`] shares pieces: for
/// work split by hand (the blocks of one matrix product).
pub(crate) fn tasks(count: usize, f: impl Fn(usize) + Sync) {
    let mut units = vec![(); count];
    pieces(&mut units, 1, |i, _| f(i));
}

/// A pool thread kept awake for one thread's long engine calls (graph runs).
///
/// Waking a sleeping pool thread takes 70–200 µs on a small VM (see [`pieces`]): an
/// eager op, which returns to Python between calls, cannot make a product of a few
/// hundred microseconds worth splitting. A graph run is one call from start to end, so
/// it can keep one pool thread spinning for itself: the thread takes the pieces of every
/// op the run shares out the moment they are offered, with no wake-up. It is started by
/// the first op that asks for it ([`kept`]: a product big enough), so a run of small ops
/// never wakes anything, and only one thread of the process keeps one at a time (two
/// Python threads running graphs each keep their own core instead). It spins on for
/// [`hot::IDLE`] after the last piece, so a training loop's next run finds it awake,
/// then leaves by itself. When the kept thread is not running (another process has its
/// core), the caller takes every piece itself: it waits only for pieces already started.
#[cfg(feature = "rayon")]
mod hot {
    use std::cell::RefCell;

    use super::{Arc, AtomicBool, AtomicUsize, Mutex, Ordering, Shared};

    /// A kept thread: the work offered to it, whether it has left (idle too long), and
    /// the process it was started in (see [`forget_in_child`]).
    struct Kept {
        offered: Mutex<Option<Arc<Shared>>>,
        gone: AtomicBool,
        epoch: usize,
    }

    /// How long a kept thread spins with nothing to do before it leaves: long enough
    /// to carry a training loop from one step's run to the next, short enough that a
    /// single call costs the other core little.
    pub(super) const IDLE: std::time::Duration = std::time::Duration::from_millis(1);

    /// Whether a kept thread is running now (one per process).
    static TAKEN: AtomicBool = AtomicBool::new(false);
    /// Counts forks: a child's kept thread of the parent's epoch does not exist.
    static EPOCH: AtomicUsize = AtomicUsize::new(0);

    enum Scope {
        /// Not in a long call.
        Out,
        /// In one; nothing has asked for a kept thread yet.
        Ready,
        /// In one, with a kept thread (`None`: none could be had).
        Started(Option<Arc<Kept>>),
    }

    thread_local! {
        static SCOPE: RefCell<Scope> = const { RefCell::new(Scope::Out) };
        /// The thread this thread kept in its last long call, perhaps still spinning.
        static LAST: RefCell<Option<Arc<Kept>>> = const { RefCell::new(None) };
    }

    impl Kept {
        fn running(&self) -> bool {
            !self.gone.load(Ordering::Acquire) && self.epoch == EPOCH.load(Ordering::Acquire)
        }
    }

    /// Runs `f` as a long call: ops in it may keep a pool thread (or find the one the
    /// last call kept still running).
    pub(super) fn scope<R>(f: impl FnOnce() -> R) -> R {
        struct End(bool);
        impl Drop for End {
            fn drop(&mut self) {
                if !self.0 {
                    return;
                }
                let was = SCOPE.with(|s| std::mem::replace(&mut *s.borrow_mut(), Scope::Out));
                if let Scope::Started(Some(kept)) = was {
                    LAST.with(|l| *l.borrow_mut() = Some(kept));
                }
            }
        }
        let outer = SCOPE.with(|s| {
            let mut s = s.borrow_mut();
            if !matches!(*s, Scope::Out) {
                return false;
            }
            *s = match LAST.with(|l| l.borrow_mut().take()) {
                Some(kept) if kept.running() => Scope::Started(Some(kept)),
                _ => Scope::Ready,
            };
            true
        });
        let _end = End(outer);
        f()
    }

    /// Whether a pool thread is kept for this thread's pieces, starting one when this
    /// thread is in a long call whose kept thread is not running.
    pub(super) fn want() -> bool {
        SCOPE.with(|s| {
            let mut s = s.borrow_mut();
            match &*s {
                Scope::Out => false,
                Scope::Started(Some(kept)) if kept.running() => true,
                _ => {
                    let kept = start();
                    let have = kept.is_some();
                    *s = Scope::Started(kept);
                    have
                }
            }
        })
    }

    fn start() -> Option<Arc<Kept>> {
        let pool = super::pool().filter(|p| p.current_num_threads() > 1)?;
        if super::in_worker()
            || TAKEN
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
        {
            return None;
        }
        let kept = Arc::new(Kept {
            offered: Mutex::new(None),
            gone: AtomicBool::new(false),
            epoch: EPOCH.load(Ordering::Acquire),
        });
        let k = Arc::clone(&kept);
        pool.spawn(move || keep(&k));
        Some(kept)
    }

    /// The kept thread's loop: offered pieces first, then any other pool work (a product
    /// split by its library), else a short spin, yielding the core to other processes,
    /// until nothing came for [`IDLE`].
    fn keep(kept: &Kept) {
        let mut spins = 0u32;
        let mut since = std::time::Instant::now();
        loop {
            let offered = kept.offered.lock().ok().and_then(|mut o| o.take());
            if let Some(shared) = offered {
                shared.help();
            } else if let Some(rayon::Yield::Executed) = rayon::yield_now() {
            } else {
                spins += 1;
                if !spins.is_multiple_of(64) {
                    std::hint::spin_loop();
                    continue;
                }
                if since.elapsed() < IDLE {
                    std::thread::yield_now();
                    continue;
                }
                // Pieces offered from here on are the caller's (it takes every piece
                // no helper has started).
                kept.gone.store(true, Ordering::Release);
                TAKEN.store(false, Ordering::Release);
                return;
            }
            spins = 0;
            since = std::time::Instant::now();
        }
    }

    /// Offers `shared`'s pieces to this thread's kept pool thread; false when it has
    /// none running (the caller wakes pool threads instead).
    pub(super) fn offer(shared: &Arc<Shared>) -> bool {
        SCOPE.with(|s| match &*s.borrow() {
            Scope::Started(Some(kept)) if kept.running() => match kept.offered.lock() {
                Ok(mut o) => {
                    *o = Some(Arc::clone(shared));
                    true
                }
                Err(_) => false,
            },
            _ => false,
        })
    }

    /// In a forked child: no pool thread of the parent runs here.
    pub(super) fn forget_in_child() {
        EPOCH.fetch_add(1, Ordering::AcqRel);
        TAKEN.store(false, Ordering::Release);
    }
}

/// Runs `f`, one long engine call (a graph run), letting the ops in it keep a pool
/// thread awake for their pieces until it returns (see the `hot` module).
pub fn long_call<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(feature = "rayon")]
    return hot::scope(f);
    #[cfg(not(feature = "rayon"))]
    f()
}

/// Whether work split into pieces now would find a pool thread ready for it: in a long
/// call ([`long_call`]) on a pool of two or more threads, the first call starts one.
pub(crate) fn kept() -> bool {
    #[cfg(feature = "rayon")]
    return hot::want();
    #[cfg(not(feature = "rayon"))]
    false
}

// ---------------------------------------------------------------------------
// The pool itself, and fork.
// ---------------------------------------------------------------------------

#[cfg(feature = "rayon")]
mod state {
    use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

    /// The pool (leaked: it lives as long as the process, or until a fork leaves it
    /// without threads in the child, which then starts another).
    pub(super) static POOL: AtomicPtr<rayon::ThreadPool> = AtomicPtr::new(std::ptr::null_mut());
    /// Held while the pool is being built: a spin flag (not a `Mutex`) so that the
    /// fork handler can reset it in the child.
    pub(super) static BUILDING: AtomicBool = AtomicBool::new(false);
    /// The pool could not be started (no threads available): kernels run serially.
    pub(super) static FAILED: AtomicBool = AtomicBool::new(false);

    pub(super) fn get() -> Option<&'static rayon::ThreadPool> {
        let p = POOL.load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: a non-null POOL points to a leaked, never freed pool.
            return Some(unsafe { &*p });
        }
        build()
    }

    #[cold]
    fn build() -> Option<&'static rayon::ThreadPool> {
        if FAILED.load(Ordering::Relaxed) {
            return None;
        }
        super::register_fork_handlers();
        while BUILDING
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::thread::yield_now();
        }
        let mut p = POOL.load(Ordering::Acquire);
        if p.is_null() {
            // Sized like rayon's global pool (RAYON_NUM_THREADS, else the CPU count).
            match rayon::ThreadPoolBuilder::new()
                .thread_name(|i| format!("gradtape-{i}"))
                .build()
            {
                Ok(pool) => {
                    p = Box::into_raw(Box::new(pool));
                    POOL.store(p, Ordering::Release);
                }
                Err(_) => FAILED.store(true, Ordering::Relaxed),
            }
        }
        BUILDING.store(false, Ordering::Release);
        // SAFETY: as in `get`.
        (!p.is_null()).then(|| unsafe { &*p })
    }

    /// In a forked child: the pool's threads are gone; forget it (its memory stays
    /// leaked) so the next parallel op starts a new one.
    pub(super) fn forget_in_child() {
        POOL.store(std::ptr::null_mut(), Ordering::Release);
        BUILDING.store(false, Ordering::Release);
    }
}

#[cfg(feature = "rayon")]
fn pool() -> Option<&'static rayon::ThreadPool> {
    state::get()
}

/// Registers the `fork` handlers (once per process): the allocator cache's lock is
/// taken before a fork and released after it in both processes, and the child drops
/// its copy of the pool. Called when the pool starts and when the Python module loads.
pub fn register_fork_handlers() {
    #[cfg(unix)]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        extern "C" fn prepare() {
            crate::alloc::fork_prepare();
        }
        extern "C" fn parent() {
            crate::alloc::fork_parent();
        }
        extern "C" fn child() {
            crate::alloc::fork_child();
            crate::kernels::matmul::fork_child();
            #[cfg(feature = "rayon")]
            {
                state::forget_in_child();
                hot::forget_in_child();
            }
        }
        ONCE.call_once(|| {
            // SAFETY: registers plain functions that only touch atomics.
            unsafe { libc::pthread_atfork(Some(prepare), Some(parent), Some(child)) };
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_writes_every_piece_once() {
        for (n, chunk) in [(0, 4), (1, 4), (1000, 7), (100_000, 1 << 14), (5, 100)] {
            let mut out = vec![0usize; n];
            pieces(&mut out, chunk, |i, p| {
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
                        pieces(&mut out, 1000, |i, p| p.fill(i as u64 + t));
                        assert!(out
                            .iter()
                            .enumerate()
                            .all(|(j, &x)| x == (j / 1000) as u64 + t));
                    }
                });
            }
        });
        for_each(3, |_| {
            let mut out = vec![1u8; 10_000];
            pieces(&mut out, 100, |_, p| p.fill(2));
            assert!(out.iter().all(|&x| x == 2));
        });
    }

    #[test]
    fn a_long_call_keeps_a_thread_for_its_pieces() {
        // Pieces in a long call (offered to the kept thread when this test gets one),
        // in nested long calls, and from several threads' long calls at once (one keeps
        // a thread at a time, the others wake the pool as outside one).
        std::thread::scope(|s| {
            for t in 0..3u64 {
                s.spawn(move || {
                    long_call(|| {
                        for round in 0..200 {
                            assert!(!kept() || threads() > 1);
                            let mut out = vec![0u64; 20_000];
                            pieces(&mut out, 700, |i, p| p.fill(i as u64 + t + round));
                            assert!(out
                                .iter()
                                .enumerate()
                                .all(|(j, &x)| x == (j / 700) as u64 + t + round));
                            long_call(|| tasks(5, |i| assert!(i < 5)));
                        }
                    })
                });
            }
        });
        assert!(!kept(), "outside a long call nothing is kept");
    }

    #[test]
    fn a_panic_in_a_piece_reaches_the_caller() {
        for bad in [0, 63] {
            let r = std::panic::catch_unwind(|| {
                let mut out = vec![0u32; 64 * 1000];
                pieces(&mut out, 1000, |i, _| {
                    if i == bad {
                        panic!("piece {i}");
                    }
                });
            });
            let msg = r.expect_err("the panic propagates");
            assert_eq!(
                msg.downcast_ref::<String>().map(String::as_str),
                Some(&*format!("piece {bad}"))
            );
        }
        // The pool still works afterwards.
        assert_eq!(map(4, |i| i * i), vec![0, 1, 4, 9]);
    }

    #[test]
    fn map_and_for_each_cover_every_index() {
        let v = map(1000, |i| i as u64 * 3);
        assert_eq!(v.len(), 1000);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 * 3));
        let hits: Vec<std::sync::atomic::AtomicUsize> = (0..500)
            .map(|_| std::sync::atomic::AtomicUsize::new(0))
            .collect();
        for_each(500, |i| {
            hits[i].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        });
        assert!(hits
            .iter()
            .all(|h| h.load(std::sync::atomic::Ordering::Relaxed) == 1));
        assert!(install(|t| t.0 >= 1));
    }
}
