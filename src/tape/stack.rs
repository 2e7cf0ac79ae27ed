//! The per-thread stack of active tapes and the recording hot path.
//!
//! Tapes are per thread, as in TF: an op run on one thread is never recorded by a
//! tape entered on another. The stack holds shared handles; an op locks each active
//! tape only briefly (no lock is held while kernels or gradient rules run).

use std::cell::RefCell;
use std::sync::Arc;

use smallvec::SmallVec;

use super::arena::{Entry, Node, Slot};
use super::TapeCell;
use crate::ops::Op;
use crate::tensor::Tensor;
use crate::variable::Variable;

thread_local! {
    static STACK: RefCell<Vec<Arc<TapeCell>>> = const { RefCell::new(Vec::new()) };
}

pub(crate) fn push(t: Arc<TapeCell>) {
    STACK.with(|s| s.borrow_mut().push(t));
}

/// Removes `t` from this thread's stack; returns whether it was there.
pub(crate) fn remove(t: &Arc<TapeCell>) -> bool {
    STACK.with(|s| {
        let mut s = s.borrow_mut();
        if let Some(pos) = s.iter().rposition(|x| Arc::ptr_eq(x, t)) {
            s.remove(pos);
            true
        } else {
            false
        }
    })
}

pub(crate) fn contains(t: &Arc<TapeCell>) -> bool {
    STACK.with(|s| s.borrow().iter().any(|x| Arc::ptr_eq(x, t)))
}

/// Whether any tape is active on this thread (the no-tape fast path).
#[inline]
pub fn any_active() -> bool {
    STACK.with(|s| !s.borrow().is_empty())
}

/// Records `op` (inputs → outputs) on every active tape watching one of the inputs.
/// Outputs of a non-differentiable dtype are never recorded.
#[inline]
pub(crate) fn record<O: Op>(op: O, inputs: &[&Tensor], outputs: &[&Tensor]) {
    STACK.with(|s| {
        let s = s.borrow();
        if s.is_empty() {
            return;
        }
        record_slow(&s, op, inputs, outputs);
    })
}

#[inline(never)]
fn record_slow<O: Op>(stack: &[Arc<TapeCell>], op: O, inputs: &[&Tensor], outputs: &[&Tensor]) {
    if !outputs.iter().any(|t| t.dtype().is_differentiable()) {
        return;
    }
    let mut op = Some(op);
    let mut shared: Option<Arc<dyn Op>> = None;
    for cell in stack {
        let mut tape = cell.lock();
        if !tape.recording {
            continue;
        }
        if !inputs.iter().any(|t| tape.ids.contains_key(&t.id())) {
            continue;
        }
        let op = shared
            .get_or_insert_with(|| {
                let op = op.take().expect("taken once");
                // A gradient override in scope replaces the op's rule (TF's
                // gradient_override_map): decided when the op is recorded.
                match crate::custom::override_for(op.name()) {
                    Some(rule) => rule,
                    None => Arc::new(op),
                }
            })
            .clone();
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
        tape.push(node);
    }
}

/// Called when a variable is read into `value`: auto-watches trainable variables on
/// tapes that watch accessed variables, and records the read on tapes watching it.
pub(crate) fn on_variable_read(var: &Variable, value: &Tensor) {
    STACK.with(|s| {
        let s = s.borrow();
        if s.is_empty() {
            return;
        }
        for cell in s.iter() {
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
    struct Restore(Vec<Arc<TapeCell>>);
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
