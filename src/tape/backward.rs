//! The reverse sweep: plan, per-node VJPs, accumulation, unbroadcasting.
//!
//! Gradients are accumulated per tensor id with engine ops, so when another tape is
//! recording (and watches what the rules touch) the whole backward pass is recorded
//! there: that is how nested tapes give higher derivatives. Broadcasting is undone in
//! exactly one place, [`unbroadcast`].

use rustc_hash::{FxHashMap, FxHashSet};

use super::arena::{Entry, Node};
use super::{stack, GradientTape, TapeInner};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::{self, VjpCx};
use crate::tensor::{Tensor, TensorId};
use crate::variable::Variable;

/// What to return for a source the target does not depend on.
/// TF equivalent: `tf.UnconnectedGradients`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum UnconnectedGradients {
    #[default]
    None,
    Zero,
}

/// A source of `gradient`: a tensor or a variable.
#[derive(Clone, Copy)]
pub enum Source<'a> {
    Tensor(&'a Tensor),
    Variable(&'a Variable),
}

impl Source<'_> {
    fn id(&self) -> TensorId {
        match self {
            Source::Tensor(t) => t.id(),
            Source::Variable(v) => v.id(),
        }
    }
    fn dtype(&self) -> DType {
        match self {
            Source::Tensor(t) => t.dtype(),
            Source::Variable(v) => v.dtype(),
        }
    }
    fn shape(&self) -> Vec<usize> {
        match self {
            Source::Tensor(t) => t.shape().to_vec(),
            Source::Variable(v) => v.shape(),
        }
    }
}

/// Which nodes the sweep visits, highest index first, and which tensor ids lie on a
/// path to a source.
struct Plan {
    order: Vec<u32>,
    leads: FxHashSet<TensorId>,
}

fn plan(tape: &TapeInner, targets: &[Tensor], sources: &[Source<'_>]) -> Plan {
    let n = tape.nodes.len();
    let producer = |id: &TensorId| match tape.ids.get(id) {
        Some(Entry::Produced { node, .. }) => Some(*node as usize),
        _ => None,
    };
    // Nodes the targets depend on.
    let mut marked = vec![false; n];
    for t in targets {
        if let Some(k) = producer(&t.id()) {
            marked[k] = true;
        }
    }
    for k in (0..n).rev() {
        if marked[k] {
            for s in &tape.nodes[k].inputs {
                if let Some(m) = producer(&s.id) {
                    marked[m] = true;
                }
            }
        }
    }
    // Of those, the ones that depend on a source.
    let mut leads: FxHashSet<TensorId> = sources.iter().map(|s| s.id()).collect();
    let mut order = Vec::new();
    for k in 0..n {
        let node = &tape.nodes[k];
        if marked[k] && node.inputs.iter().any(|s| leads.contains(&s.id)) {
            order.push(k as u32);
            for o in &node.outputs {
                leads.insert(o.id);
            }
        }
    }
    order.reverse();
    Plan { order, leads }
}

/// Sums a gradient down to `shape`, undoing broadcasting. TF's rule: reduce over the
/// leading axes the input lacked and over its size-1 axes, then reshape.
pub(crate) fn unbroadcast(g: Tensor, shape: &[usize]) -> Result<Tensor> {
    if g.shape() == shape {
        return Ok(g);
    }
    let gs = g.shape().to_vec();
    if gs.len() < shape.len() {
        return Err(Error::Internal(format!(
            "gradient of shape {gs:?} for an input of shape {shape:?}"
        )));
    }
    let lead = gs.len() - shape.len();
    let mut axes: Vec<isize> = (0..lead as isize).collect();
    for (i, &d) in shape.iter().enumerate() {
        if d == 1 && gs[lead + i] != 1 {
            axes.push((lead + i) as isize);
        } else if d != gs[lead + i] {
            return Err(Error::Internal(format!(
                "gradient of shape {gs:?} does not broadcast to input shape {shape:?}"
            )));
        }
    }
    let r = if axes.is_empty() {
        g
    } else {
        ops::reduce_sum(&g, Some(&axes), false)?
    };
    if r.shape() == shape {
        Ok(r)
    } else {
        ops::reshape(&r, shape)
    }
}

fn accumulate(grads: &mut FxHashMap<TensorId, Tensor>, id: TensorId, g: Tensor) -> Result<()> {
    match grads.remove(&id) {
        None => {
            grads.insert(id, g);
        }
        Some(prev) => {
            grads.insert(id, ops::add(&prev, &g)?);
        }
    }
    Ok(())
}

pub(super) fn gradient(
    tape: &GradientTape,
    targets: &[Tensor],
    sources: &[Source<'_>],
    output_gradients: Option<&[Option<Tensor>]>,
    unconnected: UnconnectedGradients,
) -> Result<Vec<Option<Tensor>>> {
    if let Some(og) = output_gradients {
        if og.len() != targets.len() {
            return Err(Error::invalid(
                "gradient",
                format!(
                    "output_gradients has {} entries but target has {}",
                    og.len(),
                    targets.len()
                ),
            ));
        }
        for (t, g) in targets.iter().zip(og) {
            if let Some(g) = g {
                if g.shape() != t.shape() {
                    return Err(Error::invalid(
                        "gradient",
                        format!(
                            "output_gradients shape {:?} does not match target shape {:?}",
                            g.shape(),
                            t.shape()
                        ),
                    ));
                }
                if g.dtype() != t.dtype() {
                    return Err(Error::dtype_mismatch("gradient", t.dtype(), g.dtype()));
                }
            }
        }
    }

    // Take what the sweep needs out of the tape, holding its lock only briefly: rules
    // run unlocked, and may record on this very tape (a persistent tape in context).
    let (order, leads, mut nodes) = {
        let cell = tape.cell();
        let mut inner = cell.lock();
        if inner.released {
            return Err(Error::Tape(
                "A non-persistent GradientTape can only be used to compute one set of gradients (or jacobians)".into(),
            ));
        }
        if !inner.persistent {
            // TF: calling gradient inside the context of a non-persistent tape stops
            // its recording.
            inner.released = true;
            drop(inner);
            stack::remove(cell);
            inner = cell.lock();
        }
        let Plan { order, leads } = plan(&inner, targets, sources);
        let nodes: FxHashMap<u32, Node> = if inner.persistent {
            order
                .iter()
                .map(|&k| (k, inner.nodes[k as usize].clone()))
                .collect()
        } else {
            // Release the tape's memory as the sweep goes: a non-persistent tape
            // keeps nothing after its gradient.
            let all = std::mem::take(&mut inner.nodes);
            inner.ids = FxHashMap::default();
            let keep: FxHashSet<u32> = order.iter().copied().collect();
            all.into_iter()
                .enumerate()
                .filter(|(k, _)| keep.contains(&(*k as u32)))
                .map(|(k, n)| (k as u32, n))
                .collect()
        };
        (order, leads, nodes)
    };

    // Seed.
    let mut grads: FxHashMap<TensorId, Tensor> = FxHashMap::default();
    for (i, t) in targets.iter().enumerate() {
        if !t.dtype().is_differentiable() {
            continue;
        }
        let seed = match output_gradients.and_then(|og| og[i].clone()) {
            Some(g) => g,
            None => ops::ones_like(t),
        };
        accumulate(&mut grads, t.id(), seed)?;
    }
    let source_ids: FxHashSet<TensorId> = sources.iter().map(|s| s.id()).collect();

    for k in order {
        let node = nodes.remove(&k).expect("planned node present");
        let mut dys = Vec::with_capacity(node.outputs.len());
        let mut any = false;
        for o in &node.outputs {
            let g = if source_ids.contains(&o.id) {
                grads.get(&o.id).cloned()
            } else {
                grads.remove(&o.id)
            };
            any |= g.is_some();
            dys.push(g);
        }
        if !any {
            continue;
        }
        let dys: Vec<Tensor> = node
            .outputs
            .iter()
            .zip(dys)
            .map(|(o, g)| g.unwrap_or_else(|| ops::zeros(&o.shape, o.dtype)))
            .collect();
        let needs: Vec<bool> = node
            .inputs
            .iter()
            .map(|s| s.dtype.is_differentiable() && leads.contains(&s.id))
            .collect();
        let cx = VjpCx::new(&node, &needs);
        let gs = ops::run_vjp(&cx, &dys)?;
        if gs.len() != node.inputs.len() {
            return Err(Error::Internal(format!(
                "gradient of {} returned {} values for {} inputs",
                node.op.name(),
                gs.len(),
                node.inputs.len()
            )));
        }
        for ((slot, need), g) in node.inputs.iter().zip(&needs).zip(gs) {
            let (true, Some(g)) = (*need, g) else {
                continue;
            };
            let g = unbroadcast(g, &slot.shape)?;
            accumulate(&mut grads, slot.id, g)?;
        }
        drop(node);
    }

    sources
        .iter()
        .map(|s| {
            if !s.dtype().is_differentiable() {
                return Ok(None);
            }
            match grads.get(&s.id()) {
                Some(g) => Ok(Some(g.clone())),
                None => Ok(match unconnected {
                    UnconnectedGradients::None => None,
                    UnconnectedGradients::Zero => Some(ops::zeros(&s.shape(), s.dtype())),
                }),
            }
        })
        .collect()
}
