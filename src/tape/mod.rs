//! Gradient tapes: what is watched, what is recorded, and the public tape API.
//!
//! TF equivalent: `tf.GradientTape`. A tape records an op iff at least one input is
//! watched by it; the op's outputs are then watched too. Tapes stack per thread
//! (the crate-private `stack` module); several may be active at once, each with its own watched set.

pub(crate) mod arena;
mod backward;
pub mod forward;
mod jacobian;
pub mod provenance;
pub(crate) mod stack;

use std::sync::{Arc, Mutex, MutexGuard};

use rustc_hash::FxHashMap;

use crate::error::{Error, Result};
use crate::tensor::{Tensor, TensorId};
use crate::variable::Variable;
use arena::{Entry, Node};

pub(crate) use backward::unbroadcast;
pub use backward::{take_per_row_fallbacks, Grad, ReadyFn, Source, UnconnectedGradients};
pub use forward::{Accumulating, ForwardAccumulator};
pub use stack::any_active;

/// TF's error for a second `gradient` (or `jacobian`) on a non-persistent tape.
pub(crate) const USED: &str =
    "A non-persistent GradientTape can only be used to compute one set of gradients (or jacobians)";

/// The mutable state of one tape.
pub(crate) struct TapeInner {
    pub(crate) persistent: bool,
    pub(crate) watch_accessed: bool,
    /// False inside `stop_recording`.
    pub(crate) recording: bool,
    /// A non-persistent tape that already computed its gradient.
    pub(crate) released: bool,
    /// An op was recorded here while another tape was active too. TF computes an op's
    /// input gradient when any active tape watched that input, so then a source this
    /// tape never watched may still have one (see `backward::plan`).
    pub(crate) shared: bool,
    pub(crate) nodes: Vec<Node>,
    pub(crate) ids: FxHashMap<TensorId, Entry>,
    pub(crate) watched_vars: Vec<Variable>,
    /// Declared last, so dropped after the nodes: see [`crate::alloc::TapeLife`].
    _life: crate::alloc::TapeLife,
}

/// Bytes of saved tensors a dropped tape must have held for its drop to return memory
/// to the system at once. Below it, freed memory stays with malloc and the allocator
/// cache for the next tape: a loop recording thousands of small ops per tape would
/// otherwise fault its node storage in afresh every time (0.6 -> 1.4 us per recorded
/// op); the node storage itself goes to the cache, which keeps at most
/// [`crate::alloc::IDLE_LIMIT`] once no tape is alive.
const RELEASE_BYTES: usize = 8 << 20;

impl Drop for TapeInner {
    /// A tape dropped with its recording frees the saved tensors, then, when they
    /// were [`RELEASE_BYTES`] or more, hands the large blocks back to the system instead
    /// of the allocator cache (see [`crate::alloc`]): deleting a persistent tape
    /// returns its memory, every time.
    fn drop(&mut self) {
        if self.nodes.is_empty() {
            return;
        }
        let held: usize = self
            .nodes
            .iter()
            .flat_map(|n| n.saved_inputs.iter().chain(&n.saved_outputs))
            .flatten()
            .map(|t| t.size() * t.dtype().size())
            .sum();
        drop(std::mem::take(&mut self.nodes));
        if held >= RELEASE_BYTES {
            crate::alloc::release_cached();
        }
    }
}

impl TapeInner {
    pub(crate) fn watch_id(&mut self, id: TensorId) {
        self.ids.entry(id).or_insert(Entry::Watched);
    }

    pub(crate) fn watch_variable(&mut self, var: &Variable) {
        if !var.dtype().is_differentiable() {
            return;
        }
        if let std::collections::hash_map::Entry::Vacant(e) = self.ids.entry(var.id()) {
            e.insert(Entry::Watched);
            self.watched_vars.push(var.clone());
        }
    }
}

/// Shared handle of a tape: the thread stacks and the owner point at the same cell.
pub(crate) struct TapeCell {
    inner: Mutex<TapeInner>,
}

impl TapeCell {
    pub(crate) fn lock(&self) -> MutexGuard<'_, TapeInner> {
        // A panic while holding the lock can only come from a bug; the state is
        // still consistent (every mutation is a single push/insert), so recover it.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The state, unless another thread holds it right now.
    pub(crate) fn try_lock(&self) -> Option<MutexGuard<'_, TapeInner>> {
        match self.inner.try_lock() {
            Ok(g) => Some(g),
            Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }
}

/// One input or output of a recorded op, as [`GradientTape::snapshot`] reports it.
#[derive(Clone, Debug)]
pub struct SlotInfo {
    pub id: TensorId,
    pub shape: Vec<usize>,
    pub dtype: crate::dtype::DType,
}

/// One recorded op, as [`GradientTape::snapshot`] reports it.
#[derive(Clone, Debug)]
pub struct NodeInfo {
    /// The TF op type.
    pub op: &'static str,
    pub inputs: Vec<SlotInfo>,
    pub outputs: Vec<SlotInfo>,
    /// Per input: the bytes of the tensor the gradient rule saved, `None` if not saved.
    pub saved_inputs: Vec<Option<usize>>,
    /// Per output: likewise.
    pub saved_outputs: Vec<Option<usize>>,
}

impl NodeInfo {
    /// Bytes of the tensors this node keeps alive for the backward pass.
    pub fn saved_bytes(&self) -> usize {
        self.saved_inputs
            .iter()
            .chain(&self.saved_outputs)
            .flatten()
            .sum()
    }
}

/// What a tape holds: [`GradientTape::snapshot`].
#[derive(Clone, Debug)]
pub struct TapeSnapshot {
    /// An identity shared by the tape's clones (what [`provenance::Origin::tapes`] lists).
    pub key: usize,
    pub persistent: bool,
    /// False inside `stop_recording`.
    pub recording: bool,
    /// A non-persistent tape that already computed its gradients (and freed its nodes).
    pub used: bool,
    /// Recorded ops in execution order.
    pub nodes: Vec<NodeInfo>,
    /// Ids watched explicitly (`watch`, or variables read while watched), sorted.
    pub watched: Vec<TensorId>,
}

impl TapeSnapshot {
    /// Bytes of all saved tensors (a tensor saved by two nodes counts twice).
    pub fn saved_bytes(&self) -> usize {
        self.nodes.iter().map(NodeInfo::saved_bytes).sum()
    }
}

/// Records operations for automatic differentiation. TF equivalent: `tf.GradientTape`.
///
/// [`record`](GradientTape::record) runs a closure with the tape recording (TF's `with`
/// block); [`enter`](GradientTape::enter) is the guard form, recording until the guard
/// drops (`let _recording = tape.enter();` — not `let _ = ...`, which drops it at once).
///
/// ```
/// use gradtape::{ops, GradientTape, Tensor};
/// let x = Tensor::scalar(3.0f32);
/// let tape = GradientTape::new();
/// let y = tape.record(|| {
///     tape.watch(&x);
///     ops::mul(&x, &x).unwrap()
/// });
/// let dy_dx = tape.gradient1(&y, &x).unwrap().unwrap();
/// assert_eq!(dy_dx.to_vec::<f32>().unwrap(), vec![6.0]);
/// ```
#[derive(Clone)]
pub struct GradientTape {
    cell: Arc<TapeCell>,
}

/// Keeps a tape active on this thread until dropped (the `with` block of Python).
pub struct Recording<'a> {
    tape: &'a GradientTape,
}

impl Drop for Recording<'_> {
    fn drop(&mut self) {
        self.tape.exit();
    }
}

/// Pauses a tape's recording until dropped. TF equivalent: `tape.stop_recording()`.
pub struct Paused<'a> {
    tape: &'a GradientTape,
    was: bool,
}

impl Drop for Paused<'_> {
    fn drop(&mut self) {
        self.tape.resume(self.was);
    }
}

impl Default for GradientTape {
    fn default() -> Self {
        GradientTape::new()
    }
}

impl GradientTape {
    /// A non-persistent tape that watches accessed trainable variables.
    pub fn new() -> GradientTape {
        GradientTape::with_options(false, true)
    }

    /// A persistent tape: `gradient` may be called any number of times.
    pub fn persistent() -> GradientTape {
        GradientTape::with_options(true, true)
    }

    /// TF's constructor arguments `persistent` and `watch_accessed_variables`.
    pub fn with_options(persistent: bool, watch_accessed_variables: bool) -> GradientTape {
        GradientTape {
            cell: Arc::new(TapeCell {
                inner: Mutex::new(TapeInner {
                    persistent,
                    watch_accessed: watch_accessed_variables,
                    recording: true,
                    released: false,
                    shared: false,
                    nodes: Vec::new(),
                    ids: FxHashMap::default(),
                    watched_vars: Vec::new(),
                    _life: crate::alloc::TapeLife::new(),
                }),
            }),
        }
    }

    /// An identity for this tape (shared by its clones), used by graph tracing.
    pub(crate) fn key(&self) -> usize {
        Arc::as_ptr(&self.cell) as usize
    }

    /// Whether the tape watches the trainable variables its ops read.
    pub fn watches_accessed_variables(&self) -> bool {
        self.cell.lock().watch_accessed
    }

    pub fn is_persistent(&self) -> bool {
        self.cell.lock().persistent
    }

    /// Runs `f` with the tape recording on this thread, and returns what it returns:
    /// the primary way to record (the closure's end is the `with` block's end).
    ///
    /// ```
    /// use gradtape::{GradientTape, Tensor};
    /// let x = Tensor::scalar(3.0f32);
    /// let tape = GradientTape::new();
    /// let y = tape.record(|| {
    ///     tape.watch(&x);
    ///     &x * &x
    /// })?;
    /// assert_eq!(tape.gradient1(&y, &x)?.unwrap().to_vec::<f32>()?, vec![6.0]);
    /// # Ok::<(), gradtape::Error>(())
    /// ```
    pub fn record<R>(&self, f: impl FnOnce() -> R) -> R {
        let _recording = self.enter();
        f()
    }

    /// Makes the tape active on this thread until the returned guard drops (the guard
    /// form of [`GradientTape::record`]). Bind the guard to a named variable:
    /// `let _recording = tape.enter();`. **`let _ = tape.enter();` records nothing**:
    /// `_` is not a binding, so the guard is dropped at once and the tape stops.
    #[must_use = "the tape records only while the guard lives: bind it (`let _recording = tape.enter();`), not `let _ = ...`"]
    pub fn enter(&self) -> Recording<'_> {
        self.start();
        Recording { tape: self }
    }

    /// Pushes the tape on this thread's stack (Python's `__enter__`).
    pub fn start(&self) {
        self.cell.lock().recording = true;
        stack::push(self.cell.clone());
    }

    /// Removes the tape from this thread's stack (Python's `__exit__`). Returns
    /// whether it was active.
    pub fn exit(&self) -> bool {
        stack::remove(&self.cell)
    }

    /// Whether the tape is on this thread's stack.
    pub fn is_active(&self) -> bool {
        stack::contains(&self.cell)
    }

    /// Watches a tensor: ops on it are recorded from now on. Integer and bool
    /// tensors are not differentiable; watching one has no effect (the Python layer
    /// warns, as TF does).
    pub fn watch(&self, x: &Tensor) {
        if x.dtype().is_differentiable() {
            self.cell.lock().watch_id(x.id());
        }
    }

    /// Watches a variable: reads of it are recorded from now on.
    pub fn watch_variable(&self, v: &Variable) {
        self.cell.lock().watch_variable(v);
    }

    /// The variables this tape watches, in order of construction.
    pub fn watched_variables(&self) -> Vec<Variable> {
        let mut v = self.cell.lock().watched_vars.clone();
        v.sort_by_key(|x| x.id());
        v
    }

    /// Pauses recording until the returned guard drops.
    pub fn stop_recording(&self) -> Result<Paused<'_>> {
        let was = self.pause()?;
        Ok(Paused { tape: self, was })
    }

    /// Pauses recording; returns the previous state for [`GradientTape::resume`].
    /// Fails when the tape is not active on this thread.
    pub fn pause(&self) -> Result<bool> {
        if !stack::contains(&self.cell) {
            return Err(Error::Tape(
                "Tape.stop_recording() can only be used while the tape is recording (inside its context)".into(),
            ));
        }
        let mut t = self.cell.lock();
        Ok(std::mem::replace(&mut t.recording, false))
    }

    /// Restores the recording state returned by [`GradientTape::pause`].
    pub fn resume(&self, was: bool) {
        self.cell.lock().recording = was;
    }

    /// Clears everything recorded and watched so far.
    pub fn reset(&self) {
        let mut t = self.cell.lock();
        t.nodes = Vec::new();
        t.ids = FxHashMap::default();
        t.watched_vars.clear();
        t.released = false;
        t.shared = false;
    }

    /// The first step of `gradient`, `jacobian` and `batch_jacobian`, taken before any
    /// argument is looked at (as TF does): fails with [`USED`] when a non-persistent tape
    /// already computed its gradients, and stops a non-persistent tape's recording on
    /// this thread (TF: computing gradients inside its own context ends the recording).
    pub(crate) fn begin_use(&self) -> Result<()> {
        let t = self.cell.lock();
        if t.released {
            return Err(Error::Tape(USED.into()));
        }
        let persistent = t.persistent;
        drop(t);
        if !persistent {
            stack::remove(&self.cell);
        }
        Ok(())
    }

    /// Frees everything recorded and marks a non-persistent tape as used.
    pub(crate) fn release(&self) {
        let mut t = self.cell.lock();
        t.released = !t.persistent;
        t.nodes = Vec::new();
        t.ids = FxHashMap::default();
    }

    /// Whether a recorded rule calls back into user code ([`crate::ops::Op::calls_user_code`]).
    pub(crate) fn calls_user_code(&self) -> bool {
        self.cell
            .lock()
            .nodes
            .iter()
            .any(|n| n.op.calls_user_code())
    }

    /// Calls `f` with what each recorded rule keeps alive for a binding
    /// ([`crate::ops::Op::owned`]) and that this tape alone holds: the rule is on no
    /// other tape or sweep, and nothing but the rule holds the value. Visits nothing
    /// when another thread is using the tape (a binding's garbage collector calls this
    /// and must not wait).
    pub fn visit_owned(&self, mut f: impl FnMut(&crate::custom::Owned)) {
        let Some(inner) = self.cell.try_lock() else {
            return;
        };
        for node in &inner.nodes {
            if Arc::strong_count(&node.op) != 1 {
                continue;
            }
            if let Some(owned) = node.op.owned() {
                f(owned);
            }
        }
    }

    /// Number of recorded nodes (for tests and memory accounting).
    pub fn num_nodes(&self) -> usize {
        self.cell.lock().nodes.len()
    }

    /// Gradient of the sum of `targets` with respect to each source.
    /// TF equivalent: `tape.gradient(target, sources, output_gradients, unconnected_gradients)`.
    ///
    /// One result per source, in order: `None` for a source the targets do not depend on
    /// (or zeros with [`UnconnectedGradients::Zero`]).
    ///
    /// ```
    /// use gradtape::{ops, GradientTape, Source, Tensor, UnconnectedGradients};
    ///
    /// let a = Tensor::from_vec(vec![1.0f64, 2.0], &[2])?;
    /// let b = Tensor::from_vec(vec![3.0f64, 4.0], &[2])?;
    /// let c = Tensor::scalar(5.0f64);
    /// let tape = GradientTape::new();
    /// let y = {
    ///     let _recording = tape.enter();
    ///     for t in [&a, &b, &c] {
    ///         tape.watch(t);
    ///     }
    ///     ops::reduce_sum(&ops::mul(&a, &b)?, None, false)? // y = a . b
    /// };
    /// let sources = [Source::Tensor(&a), Source::Tensor(&b), Source::Tensor(&c)];
    /// let g = tape.gradient(&[y.clone()], &sources, None, UnconnectedGradients::Zero)?;
    /// assert_eq!(g[0].as_ref().unwrap().to_vec::<f64>()?, vec![3.0, 4.0]); // dy/da = b
    /// assert_eq!(g[1].as_ref().unwrap().to_vec::<f64>()?, vec![1.0, 2.0]); // dy/db = a
    /// assert_eq!(g[2].as_ref().unwrap().to_vec::<f64>()?, vec![0.0]); // unconnected
    /// // A non-persistent tape answers once.
    /// assert!(tape.gradient(&[y], &sources, None, UnconnectedGradients::None).is_err());
    /// # Ok::<(), gradtape::Error>(())
    /// ```
    pub fn gradient<'s, S>(
        &self,
        targets: &[Tensor],
        sources: &[S],
        output_gradients: Option<&[Option<Tensor>]>,
        unconnected: UnconnectedGradients,
    ) -> Result<Vec<Option<Tensor>>>
    where
        S: Into<Source<'s>> + Copy,
    {
        let sources: smallvec::SmallVec<[Source<'s>; 4]> =
            sources.iter().map(|s| (*s).into()).collect();
        backward::gradient(self, targets, &sources, output_gradients, unconnected, None)
    }

    /// The gradients of one target with respect to each source (tensors, variables,
    /// or [`Source`]s, which mix the two: [`sources!`](crate::sources)), `None` for a
    /// source the target does not depend on: [`GradientTape::gradient`] with no output
    /// gradients.
    pub fn gradients<'s, S>(&self, target: &Tensor, sources: &[S]) -> Result<Vec<Option<Tensor>>>
    where
        S: Into<Source<'s>> + Copy,
    {
        self.gradient(
            std::slice::from_ref(target),
            sources,
            None,
            UnconnectedGradients::None,
        )
    }

    /// [`GradientTape::gradient`] keeping TF's sparse gradients: a source whose
    /// gradient comes only from gathers of its rows (`GatherV2` on axis 0, `GatherNd`
    /// with one index per row, through identities and variable reads) gets
    /// [`Grad::Sparse`] (TF's `IndexedSlices`); every other gradient is dense.
    pub fn gradient_sparse(
        &self,
        targets: &[Tensor],
        sources: &[Source<'_>],
        output_gradients: Option<&[Option<Tensor>]>,
        unconnected: UnconnectedGradients,
    ) -> Result<Vec<Option<Grad>>> {
        backward::gradient_sparse(self, targets, sources, output_gradients, unconnected)
    }

    /// [`GradientTape::gradient`], calling `ready(i, g)` during the sweep as soon as
    /// the gradient `g` of `sources[i]` is final (the sweep has passed every recorded op
    /// that reads it), while the rest is still being computed: data-parallel training
    /// starts reducing those gradients early. Sources with no gradient are not
    /// reported; an error from `ready` stops the sweep and is returned.
    ///
    /// ```
    /// use gradtape::{ops, GradientTape, Source, Tensor, UnconnectedGradients};
    ///
    /// let a = Tensor::from_vec(vec![1.0f64, 2.0], &[2])?;
    /// let b = Tensor::scalar(3.0f64);
    /// let tape = GradientTape::new();
    /// let y = {
    ///     let _recording = tape.enter();
    ///     tape.watch(&a);
    ///     tape.watch(&b);
    ///     let h = ops::mul(&a, &a)?; // read first: its gradient is final last
    ///     ops::reduce_sum(&ops::mul(&h, &b)?, None, false)?
    /// };
    /// let mut order = Vec::new();
    /// let sources = [Source::Tensor(&a), Source::Tensor(&b)];
    /// let g = tape.gradient_with_ready(&[y], &sources, None, UnconnectedGradients::None, &mut |i, _| {
    ///     order.push(i);
    ///     Ok(())
    /// })?;
    /// assert_eq!(order, vec![1, 0]); // b's gradient was ready before a's
    /// assert_eq!(g[1].as_ref().unwrap().to_vec::<f64>()?, vec![5.0]);
    /// # Ok::<(), gradtape::Error>(())
    /// ```
    pub fn gradient_with_ready(
        &self,
        targets: &[Tensor],
        sources: &[Source<'_>],
        output_gradients: Option<&[Option<Tensor>]>,
        unconnected: UnconnectedGradients,
        ready: &mut backward::ReadyFn<'_>,
    ) -> Result<Vec<Option<Tensor>>> {
        backward::gradient(
            self,
            targets,
            sources,
            output_gradients,
            unconnected,
            Some(ready),
        )
    }

    /// [`GradientTape::gradient`] from seeds with `batch` leading batch axes (a
    /// batched gradient rule composed of a tape of its own). The seeds' shapes are
    /// not checked against the targets'.
    pub(crate) fn gradient_batched(
        &self,
        targets: &[Tensor],
        sources: &[Source<'_>],
        seeds: Vec<Option<Tensor>>,
        batch: usize,
        unconnected: UnconnectedGradients,
    ) -> Result<Vec<Option<Tensor>>> {
        self.begin_use()?;
        let release = !self.is_persistent();
        backward::sweep(self, targets, seeds, sources, batch, release, unconnected)
    }

    /// [`GradientTape::gradient_batched`] with no batch axes, keeping sparse gradients
    /// (as [`GradientTape::gradient_sparse`]); `seeds[i]` is `None` where `targets[i]`
    /// has no output gradient.
    pub(crate) fn gradient_seeded_sparse(
        &self,
        targets: &[Tensor],
        sources: &[Source<'_>],
        seeds: Vec<Option<Tensor>>,
        unconnected: UnconnectedGradients,
    ) -> Result<Vec<Option<Grad>>> {
        self.begin_use()?;
        backward::sweep_seeded(self, targets, seeds, sources, unconnected, true, None)
    }

    /// Shorthand for one target and one source (a tensor or a variable).
    pub fn gradient1<'s>(
        &self,
        target: &Tensor,
        source: impl Into<Source<'s>>,
    ) -> Result<Option<Tensor>> {
        let mut g = self.gradient(
            std::slice::from_ref(target),
            &[source.into()],
            None,
            UnconnectedGradients::None,
        )?;
        Ok(g.pop().flatten())
    }

    /// What the tape holds right now, node by node (for `explain`, `memory_info` and
    /// drawings of the tape): cheap to call, it copies ids and shapes, not data.
    pub fn snapshot(&self) -> TapeSnapshot {
        let t = self.cell.lock();
        let slot = |s: &arena::Slot| SlotInfo {
            id: s.id,
            shape: s.shape.to_vec(),
            dtype: s.dtype,
        };
        let bytes = |t: &Option<Tensor>| t.as_ref().map(|t| t.size() * t.dtype().size());
        let nodes = t
            .nodes
            .iter()
            .map(|n| NodeInfo {
                op: n.op.name(),
                inputs: n.inputs.iter().map(slot).collect(),
                outputs: n.outputs.iter().map(slot).collect(),
                saved_inputs: n.saved_inputs.iter().map(bytes).collect(),
                saved_outputs: n.saved_outputs.iter().map(bytes).collect(),
            })
            .collect();
        let mut watched: Vec<TensorId> = t
            .ids
            .iter()
            .filter(|(_, e)| matches!(e, Entry::Watched))
            .map(|(id, _)| *id)
            .collect();
        watched.sort_unstable();
        TapeSnapshot {
            key: self.key(),
            persistent: t.persistent,
            recording: t.recording,
            used: t.released,
            nodes,
            watched,
        }
    }

    pub(crate) fn cell(&self) -> &Arc<TapeCell> {
        &self.cell
    }
}
