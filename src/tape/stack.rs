//! The per-thread stack of active tapes and the recording hot path.
//!
//! Tapes are per thread, as in TF: an op run on one thread is never recorded by a
//! tape entered on another. The stack holds shared handles; an op locks each active
//! tape only briefly (no lock is held while kernels or gradient rules run).
//!
//! Forward accumulators ([`super::forward`]) share the stack with tapes, so that the
//! no-recorder check stays one thread-local read and the order of entry is the order of
//! nesting (TF's rule: an accumulator's tangent ops are seen only by the tapes and
//! accumulators entered before it).

use std::cell::RefCell;
use std::sync::Arc;

use smallvec::SmallVec;

use super::arena::{Entry, Node, Slot};
use super::forward::AccCell;
use super::TapeCell;
use crate::error::Result;
use crate::ops::Op;
use crate::tensor::Tensor;
use crate::variable::Variable;

/// An entry of the per-thread stack: a recording tape or a forward accumulator.
#[derive(Clone)]
pub(crate) enum Active {
    Tape(Arc<TapeCell>),
    Acc(Arc<AccCell>),
}

impl Active {
    fn is_tape(&self, t: &Arc<TapeCell>) -> bool {
        matches!(self, Active::Tape(x) if Arc::ptr_eq(x, t))
    }
    fn is_acc(&self, a: &Arc<AccCell>) -> bool {
        matches!(self, Active::Acc(x) if Arc::ptr_eq(x, a))
    }
}

thread_local! {
    static STACK: RefCell<Vec<Active>> = const { RefCell::new(Vec::new()) };
}

pub(crate) fn push(t: Arc<TapeCell>) {
    STACK.with(|s| s.borrow_mut().push(Active::Tape(t)));
}

pub(crate) fn push_acc(a: Arc<AccCell>) {
    STACK.with(|s| s.borrow_mut().push(Active::Acc(a)));
}

/// Removes `t` from this thread's stack; returns whether it was there.
pub(crate) fn remove(t: &Arc<TapeCell>) -> bool {
    STACK.with(|s| {
        let mut s = s.borrow_mut();
        if let Some(pos) = s.iter().rposition(|x| x.is_tape(t)) {
            s.remove(pos);
            true
        } else {
            false
        }
    })
}

/// Removes the accumulator `a` from this thread's stack; returns whether it was there.
pub(crate) fn remove_acc(a: &Arc<AccCell>) -> bool {
    STACK.with(|s| {
        let mut s = s.borrow_mut();
        if let Some(pos) = s.iter().rposition(|x| x.is_acc(a)) {
            s.remove(pos);
            true
        } else {
            false
        }
    })
}

pub(crate) fn contains(t: &Arc<TapeCell>) -> bool {
    STACK.with(|s| s.borrow().iter().any(|x| x.is_tape(t)))
}

pub(crate) fn contains_acc(a: &Arc<AccCell>) -> bool {
    STACK.with(|s| s.borrow().iter().any(|x| x.is_acc(a)))
}

/// Runs `f` with only the first `k` entries of this thread's stack active: what an
/// accumulator at position `k` computes is seen by the tapes and accumulators entered
/// before it, never by itself or later ones (TF's nesting rule).
pub(crate) fn with_prefix<R>(k: usize, f: impl FnOnce() -> R) -> R {
    struct Restore(Vec<Active>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let rest = std::mem::take(&mut self.0);
            STACK.with(|s| s.borrow_mut().extend(rest));
        }
    }
    let _restore = Restore(STACK.with(|s| {
        let mut s = s.borrow_mut();
        let k = k.min(s.len());
        s.split_off(k)
    }));
    f()
}

/// Each tape on this thread's stack: (its identity, whether it records right now).
pub(crate) fn snapshot() -> Vec<(usize, bool)> {
    STACK.with(|s| {
        s.borrow()
            .iter()
            .filter_map(|e| match e {
                Active::Tape(cell) => {
                    let recording = cell.try_lock().is_some_and(|t| t.recording);
                    Some((Arc::as_ptr(cell) as usize, recording))
                }
                Active::Acc(_) => None,
            })
            .collect()
    })
}

/// Whether any tape is active on this thread (the no-tape fast path).
#[inline]
pub fn any_active() -> bool {
    STACK.with(|s| !s.borrow().is_empty())
}

/// The tapes recording on this thread, outermost first, and whether more than one tape
/// is on the stack (as [`record`] decides nesting); `None` when a forward accumulator
/// is active or no tape records. A traced function's call is then recorded on them as
/// one node (`crate::graph`'s call op).
pub(crate) fn recording_tapes() -> Option<(Vec<Arc<TapeCell>>, bool)> {
    STACK.with(|s| {
        let s = s.borrow();
        let mut tapes = Vec::new();
        let mut count = 0;
        for entry in s.iter() {
            match entry {
                Active::Acc(_) => return None,
                Active::Tape(cell) => {
                    count += 1;
                    if cell.lock().recording {
                        tapes.push(cell.clone());
                    }
                }
            }
        }
        (!tapes.is_empty()).then_some((tapes, count > 1))
    })
}

/// Which of `inputs` the tape active on this thread watches, when that tape is the
/// stack's only entry (no other tape, no accumulator) and records: an op can then tell,
/// before it runs, which input gradients its node may be asked for. `None` otherwise.
pub(crate) fn sole_tape_watching(inputs: &[&Tensor]) -> Option<Vec<bool>> {
    STACK.with(|s| match s.borrow().as_slice() {
        [Active::Tape(cell)] => {
            let t = cell.lock();
            t.recording
                .then(|| inputs.iter().map(|x| t.ids.contains_key(&x.id())).collect())
        }
        _ => None,
    })
}

/// Appends `nodes` (built by the caller, in order) to each of `into`, keeping those a
/// tape would have recorded itself (TF's rule, as in [`record`]: a node one of whose
/// inputs the tape knows). `nested`: more than one tape was active.
pub(crate) fn push_where_known(into: &[Arc<TapeCell>], nodes: &[Node], nested: bool) {
    for cell in into {
        let mut tape = cell.lock();
        for node in nodes {
            if node.inputs.iter().any(|s| tape.ids.contains_key(&s.id)) {
                tape.shared |= nested;
                tape.push(node.clone());
            }
        }
    }
}

/// Moves the nodes `from` recorded onto `into` ([`push_where_known`]).
pub(crate) fn replay(from: &TapeCell, into: &[Arc<TapeCell>], nested: bool) {
    let nodes = std::mem::take(&mut from.lock().nodes);
    push_where_known(into, &nodes, nested);
}

/// Records `op` (inputs → outputs) on every active tape watching one of the inputs,
/// and has every active accumulator with a tangent for an input compute the outputs'
/// tangents. Outputs of a non-differentiable dtype are never recorded. An error is one
/// of a forward rule (a custom gradient function that raised, say).
#[inline]
pub(crate) fn record<O: Op>(op: O, inputs: &[&Tensor], outputs: &[&Tensor]) -> Result<()> {
    if super::provenance::enabled() {
        let ids: SmallVec<[u64; 4]> = inputs.iter().map(|t| t.id()).collect();
        super::provenance::note(op.name(), &ids, outputs);
    }
    let pending = STACK.with(|s| {
        let s = s.borrow();
        if s.is_empty() {
            return None;
        }
        record_slow(&s, op, inputs, outputs)
    });
    match pending {
        None => Ok(()),
        Some(p) => p.run(inputs, outputs),
    }
}

/// Accumulators that must compute tangents for an op just recorded (run once the
/// stack is no longer borrowed: their rules run ops).
pub(crate) struct Pending {
    op: Arc<dyn Op>,
    accs: SmallVec<[(usize, Arc<AccCell>); 2]>,
}

impl Pending {
    #[inline(never)]
    fn run(self, inputs: &[&Tensor], outputs: &[&Tensor]) -> Result<()> {
        // Outermost first: an inner accumulator's tangent rule may read an output
        // whose tangent an outer one must already know (higher-order forward mode).
        for (k, acc) in self.accs {
            super::forward::propagate(&acc, k, self.op.clone(), inputs, outputs)?;
        }
        Ok(())
    }
}

/// `op` as a shared rule. Most ops carry no data (their rule is all in the type): one
/// `Arc` per type and thread serves every node, so recording one and freeing the tape
/// cost no allocation for it.
fn shared_op<O: Op>(op: O) -> Arc<dyn Op> {
    if std::mem::size_of::<O>() != 0 {
        return Arc::new(op);
    }
    thread_local! {
        static RULES: RefCell<rustc_hash::FxHashMap<std::any::TypeId, Arc<dyn Op>>> =
            RefCell::new(Default::default());
    }
    let mut op = Some(op);
    let shared = RULES.try_with(|r| {
        let mut r = r.borrow_mut();
        let rule = r
            .entry(std::any::TypeId::of::<O>())
            .or_insert_with(|| Arc::new(op.take().expect("taken once")));
        rule.clone()
    });
    match (shared, op) {
        (Ok(rule), _) => rule,
        // Only while the thread is being torn down.
        (Err(_), Some(op)) => Arc::new(op),
        (Err(_), None) => unreachable!("the op is taken only when the rule is kept"),
    }
}

#[inline(never)]
fn record_slow<O: Op>(
    stack: &[Active],
    op: O,
    inputs: &[&Tensor],
    outputs: &[&Tensor],
) -> Option<Pending> {
    if !outputs.iter().any(|t| t.dtype().is_differentiable()) {
        return None;
    }
    let mut op = Some(op);
    let mut shared: Option<Arc<dyn Op>> = None;
    let mut get = || {
        shared
            .get_or_insert_with(|| {
                let op = op.take().expect("taken once");
                // A gradient override in scope replaces the op's rule (TF's
                // gradient_override_map): decided when the op is recorded.
                match crate::custom::override_for(op.name()) {
                    Some(rule) => rule,
                    None => shared_op(op),
                }
            })
            .clone()
    };
    let mut accs: SmallVec<[(usize, Arc<AccCell>); 2]> = SmallVec::new();
    let nested = stack
        .iter()
        .filter(|e| matches!(e, Active::Tape(_)))
        .nth(1)
        .is_some();
    for (k, entry) in stack.iter().enumerate() {
        let cell = match entry {
            Active::Tape(cell) => cell,
            Active::Acc(acc) => {
                if acc.has_tangent_for(inputs) {
                    accs.push((k, acc.clone()));
                }
                continue;
            }
        };
        let mut tape = cell.lock();
        if !tape.recording {
            continue;
        }
        if !inputs.iter().any(|t| tape.ids.contains_key(&t.id())) {
            continue;
        }
        let op = get();
        let saves = op.saves();
        let node = Node {
            inputs: inputs.iter().map(|t| Slot::of(t)).collect(),
            outputs: outputs.iter().map(|t| Slot::of(t)).collect(),
            saved_inputs: inputs
                .iter()
                .enumerate()
                .map(|(i, t)| saves.input(i).then(|| (*t).clone()))
                .collect(),
            saved_outputs: outputs
                .iter()
                .enumerate()
                .map(|(i, t)| saves.output(i).then(|| (*t).clone()))
                .collect(),
            op,
        };
        tape.shared |= nested;
        tape.push(node);
    }
    if accs.is_empty() {
        return None;
    }
    Some(Pending { op: get(), accs })
}

/// Called when a variable is read into `value`: auto-watches trainable variables on
/// tapes that watch accessed variables, and records the read on tapes watching it.
pub(crate) fn on_variable_read(var: &Variable, value: &Tensor) {
    STACK.with(|s| {
        let s = s.borrow();
        if s.is_empty() {
            return;
        }
        let mut any_acc = false;
        for entry in s.iter() {
            let cell = match entry {
                Active::Tape(cell) => cell,
                Active::Acc(_) => {
                    any_acc = true;
                    continue;
                }
            };
            let mut tape = cell.lock();
            if !tape.recording {
                continue;
            }
            if tape.watch_accessed && var.trainable() {
                tape.watch_variable(var);
            }
            if tape.ids.contains_key(&var.id()) && value.dtype().is_differentiable() {
                let slot = Slot {
                    id: var.id(),
                    shape: Slot::of(value).shape,
                    dtype: value.dtype(),
                };
                tape.push(Node {
                    op: Arc::new(crate::ops::ReadVariable),
                    inputs: SmallVec::from_elem(slot, 1),
                    outputs: SmallVec::from_elem(Slot::of(value), 1),
                    saved_inputs: SmallVec::from_elem(None, 1),
                    saved_outputs: SmallVec::from_elem(None, 1),
                });
            }
        }
        if !any_acc {
            return;
        }
        let accs: Vec<(usize, Arc<AccCell>)> = s
            .iter()
            .enumerate()
            .filter_map(|(k, e)| match e {
                Active::Acc(a) => Some((k, a.clone())),
                Active::Tape(_) => None,
            })
            .collect();
        drop(s);
        for (k, acc) in accs {
            super::forward::on_variable_read(&acc, k, var, value);
        }
    })
}

impl super::TapeInner {
    fn push(&mut self, node: Node) {
        let idx = self.nodes.len() as u32;
        for (k, o) in node.outputs.iter().enumerate() {
            if o.dtype.is_differentiable() {
                self.ids.insert(
                    o.id,
                    Entry::Produced {
                        node: idx,
                        out: k as u8,
                    },
                );
            }
        }
        self.nodes.push(node);
    }
}

/// Runs `f` with no tape active on this thread (nothing it does is recorded).
pub fn suspended<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(Vec<Active>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let saved = std::mem::take(&mut self.0);
            STACK.with(|s| {
                let mut s = s.borrow_mut();
                let inner = std::mem::replace(&mut *s, saved);
                s.extend(inner);
            });
        }
    }
    let _restore = Restore(STACK.with(|s| std::mem::take(&mut *s.borrow_mut())));
    f()
}

thread_local! {
    /// Variables read while a [`collect_reads`] scope is open on this thread.
    static READS: RefCell<Option<Vec<Variable>>> = const { RefCell::new(None) };
}

/// Notes a variable read for an enclosing [`collect_reads`] scope.
#[inline]
pub(crate) fn note_read(var: &Variable) {
    READS.with(|r| {
        if let Some(v) = r.borrow_mut().as_mut() {
            if !v.iter().any(|x| x.id() == var.id()) {
                v.push(var.clone());
            }
        }
    })
}

/// Runs `f` and returns the variables it read, in order of first read (TF's
/// `VariableWatcher`, used by custom gradients). Scopes nest: an outer scope also
/// sees the inner scope's reads.
pub fn collect_reads<R>(f: impl FnOnce() -> R) -> (R, Vec<Variable>) {
    let outer = READS.with(|r| r.borrow_mut().replace(Vec::new()));
    let out = f();
    let mine = READS
        .with(|r| std::mem::replace(&mut *r.borrow_mut(), outer))
        .unwrap_or_default();
    for v in &mine {
        note_read(v);
    }
    (out, mine)
}
