//! A graph run under tapes, recorded as one node.
//!
//! Run eagerly under a tape, a graph's ops would each be recorded on it. Instead a run
//! records its ops on a tape of its own (watching what the active tapes watch, with
//! `watch_accessed_variables` if any of them has it) and then puts ONE node on each
//! recording tape that knows one of its inputs: the call, from the arguments, captured
//! tensors and variables to the graph's outputs. The node's gradient rule is the run's
//! own backward sweep (the ops' gradient rules over what the run recorded), run where
//! the outer sweep runs (with the GIL released from Python). Its values are the eager
//! ones: the same rules, over the same recorded ops.
//!
//! Higher order: the rule's ops are recorded by any tape active while the gradient is
//! computed, as any rule's are. Those ops read the run's inner values (what its ops
//! saved for their gradients). A tape entered after the call sees them as constants,
//! as it would eagerly. A tape that saw the call (an outer one of nested tapes, or a
//! persistent tape differentiating its own gradient) must see them as values of the
//! call: then the node also has them as outputs, and its rule takes their gradients
//! (TF's forward function that returns its intermediates). TF's order of nesting holds
//! as for any op.
//!
//! Op by op instead, as before: under a forward accumulator (its tangents are the
//! ops'), when an output of the run is one of its inputs, and, when a tape may
//! differentiate the gradient, when a rule calls user code (whose closures may read
//! values the run did not save).

use std::sync::Arc;

use smallvec::SmallVec;

use super::{tapes, Graph, Value};
use crate::error::Result;
use crate::ops::{Grads, Op, Saves, VjpCx};
use crate::tape::arena::{Entry, Node, Slot};
use crate::tape::stack;
use crate::tape::{Grad, GradientTape, Source, TapeCell, UnconnectedGradients};
use crate::tensor::Tensor;
use crate::variable::Variable;

/// What a call node differentiates with respect to: an argument or captured tensor,
/// or a variable the run read.
enum Wrt {
    Tensor(Tensor),
    Variable(Variable),
}

/// A graph call on an outer tape: its rule asks the run's own tape for the gradients.
struct CallOp {
    /// The run's tape (persistent: a jacobian may sweep it once per block of rows).
    tape: GradientTape,
    /// The node's outputs, in order: the run's differentiable results, then (when a
    /// tape may differentiate the rule) the inner values the rule reads.
    outputs: Vec<Tensor>,
    /// The node's inputs.
    wrt: Vec<Wrt>,
    /// The run recorded a rule that calls back into user code.
    user_code: bool,
}

impl Op for CallOp {
    fn name(&self) -> &'static str {
        "PartitionedCall"
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn batched(&self) -> bool {
        true
    }
    fn calls_user_code(&self) -> bool {
        self.user_code
    }
    fn knows_absent(&self) -> bool {
        true
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let (wanted, sources, seeds) = self.sweep_args(cx, dys);
        let g = self.tape.gradient_batched(
            &self.outputs,
            &sources,
            seeds,
            cx.batch(),
            UnconnectedGradients::None,
        )?;
        Ok(self.per_input(&wanted, g).into_iter().collect())
    }
    fn vjp_keeping_sparse(
        &self,
        cx: &VjpCx<'_>,
        dys: &[Tensor],
    ) -> Option<Result<Vec<Option<Grad>>>> {
        let (wanted, sources, seeds) = self.sweep_args(cx, dys);
        let g = self.tape.gradient_seeded_sparse(
            &self.outputs,
            &sources,
            seeds,
            UnconnectedGradients::None,
        );
        Some(g.map(|g| self.per_input(&wanted, g)))
    }
}

impl CallOp {
    /// What the run's tape is asked for: the wanted inputs (their indices and sources)
    /// and a seed per output (none where the output has no gradient).
    fn sweep_args(
        &self,
        cx: &VjpCx<'_>,
        dys: &[Tensor],
    ) -> (Vec<usize>, Vec<Source<'_>>, Vec<Option<Tensor>>) {
        let wanted: Vec<usize> = (0..self.wrt.len()).filter(|&i| cx.needs(i)).collect();
        let sources = wanted
            .iter()
            .map(|&i| match &self.wrt[i] {
                Wrt::Tensor(t) => Source::Tensor(t),
                Wrt::Variable(v) => Source::Variable(v),
            })
            .collect();
        let seeds = dys
            .iter()
            .enumerate()
            .map(|(k, dy)| cx.has_gradient(k).then(|| dy.clone()))
            .collect();
        (wanted, sources, seeds)
    }

    /// The gradients of the wanted inputs, placed at their indices among all inputs.
    fn per_input<G>(&self, wanted: &[usize], g: Vec<Option<G>>) -> Vec<Option<G>> {
        let mut grads: Vec<Option<G>> = (0..self.wrt.len()).map(|_| None).collect();
        for (&i, g) in wanted.iter().zip(g) {
            grads[i] = g;
        }
        grads
    }
}

/// Runs `g` on `args` recorded as one node of each tape recording on this thread,
/// when that is possible (see the module's text); `None`: run it as before.
pub(super) fn run_as_one_node(g: &Graph, args: &[Tensor]) -> Option<Result<Vec<Tensor>>> {
    let (tapes, nested) = stack::recording_tapes()?;
    // An output that is an argument or a constant would be a node's input and output.
    if g.outputs
        .iter()
        .any(|v| matches!(v, Value::Input(_) | Value::Const(_)))
    {
        return None;
    }
    // What the tapes know: the run's tape watches the same.
    let ins: Vec<&Tensor> = args.iter().chain(&g.consts).collect();
    let mut known = vec![false; ins.len()];
    let mut vars: Vec<Variable> = Vec::new();
    let mut watch_accessed = false;
    let mut higher = nested;
    for cell in &tapes {
        let t = cell.lock();
        for (k, x) in known.iter_mut().zip(&ins) {
            *k |= x.dtype().is_differentiable() && t.ids.contains_key(&x.id());
        }
        for v in &t.watched_vars {
            if !vars.iter().any(|w| w.id() == v.id()) {
                vars.push(v.clone());
            }
        }
        watch_accessed |= t.watch_accessed;
        higher |= t.persistent;
    }
    if !known.contains(&true) && vars.is_empty() && !watch_accessed {
        // Nothing the run does can be recorded on the tapes.
        return None;
    }
    let inner = GradientTape::with_options(true, watch_accessed);
    // Its ops are recorded as the active tapes would record them (see `TapeInner::shared`).
    inner.cell().lock().shared = nested;
    for (x, _) in ins.iter().zip(&known).filter(|(_, k)| **k) {
        inner.watch(x);
    }
    for v in &vars {
        inner.watch_variable(v);
    }
    let run = stack::suspended(|| {
        inner.record(|| stack::collect_reads(|| tapes::with_frame(|| g.run_unchecked(args))))
    });
    let (outs, reads) = match run {
        (Ok(outs), reads) => (outs, reads),
        (Err(e), _) => return Some(Err(e)),
    };
    // The node reads every differentiable argument and constant, watched or not: a
    // gradient with respect to one the run's ops read is the eager one.
    let tensors: Vec<Tensor> = ins
        .into_iter()
        .filter(|x| x.dtype().is_differentiable())
        .cloned()
        .collect();
    let call = Call {
        inner,
        outs,
        tensors,
        reads,
    };
    Some(Ok(call.record(&tapes, nested, higher)))
}

/// A finished run, to be put on the tapes.
struct Call {
    /// The run's tape.
    inner: GradientTape,
    outs: Vec<Tensor>,
    /// The differentiable arguments and constants.
    tensors: Vec<Tensor>,
    /// The variables the run read.
    reads: Vec<Variable>,
}

impl Call {
    /// Puts the run on the tapes: one call node, or (when the run's outputs cannot be
    /// a node's, or `higher` order needs what a user rule reads) every op the run
    /// recorded. `nested`: more than one tape is active; `higher`: a tape that saw the
    /// call may differentiate its gradient.
    fn record(self, tapes: &[Arc<TapeCell>], nested: bool, higher: bool) -> Vec<Tensor> {
        let Call {
            inner,
            outs,
            tensors,
            reads,
        } = self;
        // Variables the run read that a tape watches (explicitly, or as a trainable
        // variable read with watch_accessed): the tape watches them, as it would have
        // eagerly. `read_vars`: those some tape watches.
        let mut read_vars: Vec<Variable> = Vec::new();
        for cell in tapes {
            let mut t = cell.lock();
            for v in &reads {
                if t.watch_accessed && v.trainable() {
                    t.watch_variable(v);
                }
                let watched = t.ids.contains_key(&v.id());
                if watched && !read_vars.iter().any(|r| r.id() == v.id()) {
                    read_vars.push(v.clone());
                }
            }
        }
        if inner.num_nodes() == 0 {
            return outs;
        }
        // Each input once (an argument passed twice is one source).
        let mut wrt: Vec<Wrt> = Vec::new();
        let mut inputs: SmallVec<[Slot; 2]> = SmallVec::new();
        for x in &tensors {
            if !inputs.iter().any(|s| s.id == x.id()) {
                inputs.push(Slot::of(x));
                wrt.push(Wrt::Tensor(x.clone()));
            }
        }
        for v in &read_vars {
            if !inputs.iter().any(|s| s.id == v.id()) {
                inputs.push(Slot {
                    id: v.id(),
                    shape: SmallVec::from_slice(&v.shape()),
                    dtype: v.dtype(),
                });
                wrt.push(Wrt::Variable(v.clone()));
            }
        }
        let mut outputs: Vec<Tensor> = outs
            .iter()
            .filter(|t| t.dtype().is_differentiable())
            .cloned()
            .collect();
        // An output that is also an input (an op that returned its input itself), or
        // twice an output: recorded op by op instead.
        let clash = outputs.iter().enumerate().any(|(k, o)| {
            inputs.iter().any(|s| s.id == o.id()) || outputs[..k].iter().any(|p| p.id() == o.id())
        });
        let user_code = inner.calls_user_code();
        if clash || outputs.is_empty() || inputs.is_empty() || (higher && user_code) {
            stack::replay(inner.cell(), tapes, nested);
            return outs;
        }
        if higher {
            outputs.extend(saved_values(&inner, &inputs, &outputs));
        }
        let node = Node {
            saved_inputs: inputs.iter().map(|_| None).collect(),
            saved_outputs: outputs.iter().map(|_| None).collect(),
            outputs: outputs.iter().map(Slot::of).collect(),
            op: Arc::new(CallOp {
                tape: inner,
                outputs,
                wrt,
                user_code,
            }),
            inputs,
        };
        // On each tape that knows one of the node's inputs, as any op.
        stack::push_where_known(tapes, &[node], nested);
        outs
    }
}

/// The values the run's ops saved for their gradients that the run made (not its
/// inputs, not its results), each once: what a gradient computed by the call's rule
/// reads, for a tape that differentiates it.
fn saved_values(inner: &GradientTape, inputs: &[Slot], results: &[Tensor]) -> Vec<Tensor> {
    let t = inner.cell().lock();
    let mut seen: rustc_hash::FxHashSet<crate::tensor::TensorId> = inputs
        .iter()
        .map(|s| s.id)
        .chain(results.iter().map(Tensor::id))
        .collect();
    let mut values = Vec::new();
    for node in &t.nodes {
        for x in node
            .saved_inputs
            .iter()
            .chain(&node.saved_outputs)
            .flatten()
        {
            let made = matches!(t.ids.get(&x.id()), Some(Entry::Produced { .. }));
            if made && x.dtype().is_differentiable() && seen.insert(x.id()) {
                values.push(x.clone());
            }
        }
    }
    values
}
