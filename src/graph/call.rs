//! A graph run under a tape, recorded as one node.
//!
//! Run eagerly under a tape, a graph's ops would each be recorded on it. When the only
//! thing on this thread's stack is one recording, non-persistent tape, a run instead
//! records its ops on a tape of its own (watching what the outer tape watches, with the
//! same `watch_accessed_variables`) and then puts ONE node on the outer tape: the
//! call, from the arguments, captured tensors and variables the outer tape knows to the
//! graph's outputs. The node's gradient rule is the run's own backward sweep (the ops'
//! gradient rules over what the run recorded), run where the outer sweep runs (with
//! the GIL released from Python). Its values are the eager ones: the same rules, over
//! the same recorded ops.
//!
//! Higher order: the rule's ops are recorded by any tape active while the outer
//! gradient is computed, as any rule's are (so a tape entered after the call sees the
//! backward pass as it would eagerly). A tape that saw the call itself would need the
//! run's inner values linked to it, so a run under several tapes, a persistent tape
//! (which may differentiate its own gradient computation) or a forward accumulator is
//! recorded op by op instead, as before.

use std::sync::Arc;

use smallvec::SmallVec;

use super::{tapes, Graph, Value};
use crate::error::Result;
use crate::ops::{Grads, Op, Saves, VjpCx};
use crate::tape::arena::{Node, Slot};
use crate::tape::stack;
use crate::tape::{GradientTape, Source, TapeCell, UnconnectedGradients};
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
    /// The run's differentiable outputs: the node's outputs, in order.
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
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let wanted: Vec<usize> = (0..self.wrt.len()).filter(|&i| cx.needs(i)).collect();
        let sources: Vec<Source<'_>> = wanted
            .iter()
            .map(|&i| match &self.wrt[i] {
                Wrt::Tensor(t) => Source::Tensor(t),
                Wrt::Variable(v) => Source::Variable(v),
            })
            .collect();
        let seeds = dys.iter().cloned().map(Some).collect();
        let g = self.tape.gradient_batched(
            &self.outputs,
            &sources,
            seeds,
            cx.batch(),
            UnconnectedGradients::None,
        )?;
        let mut grads: Grads = (0..self.wrt.len()).map(|_| None).collect();
        for (&i, g) in wanted.iter().zip(g) {
            grads[i] = g;
        }
        Ok(grads)
    }
}

/// Runs `g` on `args` recorded as one node of the tape active on this thread, when
/// that is possible (see the module's text); `None`: run it as before.
pub(super) fn run_as_one_node(g: &Graph, args: &[Tensor]) -> Option<Result<Vec<Tensor>>> {
    let outer = stack::sole_tape()?;
    // An output that is an argument or a constant would be a node's input and output.
    if g.outputs
        .iter()
        .any(|v| matches!(v, Value::Input(_) | Value::Const(_)))
    {
        return None;
    }
    // What the outer tape knows: the run's tape watches the same.
    let (watch_accessed, known, vars) = {
        let t = outer.lock();
        let known: Vec<bool> = args
            .iter()
            .chain(&g.consts)
            .map(|x| x.dtype().is_differentiable() && t.ids.contains_key(&x.id()))
            .collect();
        (t.watch_accessed, known, t.watched_vars.clone())
    };
    if !known.contains(&true) && vars.is_empty() && !watch_accessed {
        // Nothing the run does can be recorded on the outer tape.
        return None;
    }
    let inner = GradientTape::with_options(true, watch_accessed);
    for (x, _) in args
        .iter()
        .chain(&g.consts)
        .zip(&known)
        .filter(|(_, k)| **k)
    {
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
    let tensors: Vec<Tensor> = args
        .iter()
        .chain(&g.consts)
        .filter(|x| x.dtype().is_differentiable())
        .cloned()
        .collect();
    Some(Ok(record(&outer, inner, outs, tensors, reads)))
}

/// Puts the run on the outer tape: one call node, or (when the run's outputs cannot be
/// a node's) every op the run recorded.
fn record(
    outer: &Arc<TapeCell>,
    inner: GradientTape,
    outs: Vec<Tensor>,
    tensors: Vec<Tensor>,
    reads: Vec<Variable>,
) -> Vec<Tensor> {
    // Variables the run's tape watched (explicitly, or read with watch_accessed) that
    // the run read: the outer tape watches them, as it would have eagerly.
    let watched: Vec<Variable> = inner.cell().lock().watched_vars.clone();
    let read_vars: Vec<Variable> = watched
        .into_iter()
        .filter(|v| reads.iter().any(|r| r.id() == v.id()))
        .collect();
    {
        let mut t = outer.lock();
        for v in &read_vars {
            t.watch_variable(v);
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
    let outputs: Vec<Tensor> = outs
        .iter()
        .filter(|t| t.dtype().is_differentiable())
        .cloned()
        .collect();
    // An output that is also an input (an op that returned its input itself), or
    // twice an output: recorded op by op instead.
    let clash = outputs.iter().enumerate().any(|(k, o)| {
        inputs.iter().any(|s| s.id == o.id()) || outputs[..k].iter().any(|p| p.id() == o.id())
    });
    if clash || outputs.is_empty() || inputs.is_empty() {
        stack::splice(inner.cell(), outer);
        return outs;
    }
    let user_code = inner.calls_user_code();
    let node = Node {
        saved_inputs: inputs.iter().map(|_| None).collect(),
        saved_outputs: outputs.iter().map(|_| None).collect(),
        inputs,
        outputs: outputs.iter().map(Slot::of).collect(),
        op: Arc::new(CallOp {
            tape: inner,
            outputs,
            wrt,
            user_code,
        }),
    };
    stack::push_node(outer, node);
    outs
}
