//! The reverse sweep: plan, per-node VJPs, accumulation, unbroadcasting.
//!
//! Gradients are accumulated per tensor id with engine ops, so when another tape is
//! recording (and watches what the rules touch) the whole backward pass is recorded
//! there: that is how nested tapes give higher derivatives. Broadcasting is undone in
//! exactly one place, [`unbroadcast`].

use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;

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
    let mut leads: FxHashSet<TensorId> =
        FxHashSet::with_capacity_and_hasher(sources.len() + n, Default::default());
    // A source the tape does not know (never watched, not the output of a recorded op)
    // gets no gradient, even when a recorded op read it beside a watched tensor: TF
    // skips the input gradients no active tape watched when it records an op. Unless
    // another tape was active (and may have watched it) when this one recorded.
    leads.extend(
        sources
            .iter()
            .map(|s| s.id())
            .filter(|id| tape.shared || tape.ids.contains_key(id)),
    );
    let mut order = Vec::with_capacity(n);
    for (k, node) in tape.nodes.iter().enumerate() {
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
pub(crate) fn unbroadcast(g: Tensor, shape: &[usize], batch: usize) -> Result<Tensor> {
    if g.shape().len() >= batch && &g.shape()[batch..] == shape {
        return Ok(g);
    }
    let gs = g.shape().to_vec();
    if gs.len() < shape.len() + batch {
        return Err(Error::Internal(format!(
            "gradient of shape {gs:?} for an input of shape {shape:?} (batch {batch})"
        )));
    }
    // Axes of `g` after the batch axes: `extra` leading ones the input lacks, then
    // the input's own.
    let extra = gs.len() - batch - shape.len();
    let mut axes: Vec<isize> = (batch..batch + extra).map(|a| a as isize).collect();
    for (i, &d) in shape.iter().enumerate() {
        let k = batch + extra + i;
        if d == 1 && gs[k] != 1 {
            axes.push(k as isize);
        } else if d != gs[k] {
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
    let mut want = gs[..batch].to_vec();
    want.extend_from_slice(shape);
    if r.shape() == want.as_slice() {
        Ok(r)
    } else {
        ops::reshape(&r, &want)
    }
}

/// A gradient in the sweep: dense, or (only when the caller asked for them, see
/// [`GradientTape::gradient_sparse`]) TF's `IndexedSlices`.
#[derive(Clone, Debug)]
pub enum Grad {
    Dense(Tensor),
    /// Boxed: the sweep moves gradients around, and dense ones are the common case.
    Sparse(Box<ops::Sparse>),
}

impl Grad {
    /// The dense gradient.
    pub fn into_dense(self) -> Result<Tensor> {
        match self {
            Grad::Dense(t) => Ok(t),
            Grad::Sparse(s) => s.to_dense(),
        }
    }
}

/// Adds `g` to the gradient of `id`: sparse ones concatenate (TF's aggregation of
/// `IndexedSlices`), anything with a dense one is dense.
fn accumulate(grads: &mut FxHashMap<TensorId, Grad>, id: TensorId, g: Grad) -> Result<()> {
    use std::collections::hash_map::Entry;
    match grads.entry(id) {
        Entry::Vacant(e) => {
            e.insert(g);
        }
        Entry::Occupied(mut e) => {
            let sum = match (e.get(), g) {
                (Grad::Dense(a), Grad::Dense(b)) => Grad::Dense(ops::add(a, &b)?),
                // The sweep goes from the last op back: the new rows come from an
                // earlier op, and go first (TF's order, that of the ops).
                (Grad::Sparse(a), Grad::Sparse(b)) => {
                    Grad::Sparse(Box::new(ops::Sparse::concat(&[*b, (**a).clone()])?))
                }
                (a, b) => Grad::Dense(ops::add(&a.clone().into_dense()?, &b.into_dense()?)?),
            };
            e.insert(sum);
        }
    }
    Ok(())
}

/// A callback the sweep calls with `(source index, gradient)` as soon as a source's
/// gradient is final: when the sweep has passed every node that reads the source, before
/// it goes on with the rest of the tape. Data-parallel training uses it to start
/// reducing early gradients while later ones are still being computed. Only sources
/// with a gradient are reported (an unconnected or integer source is not). An error it
/// returns stops the sweep.
pub type ReadyFn<'a> = dyn FnMut(usize, &Tensor) -> Result<()> + 'a;

pub(super) fn gradient(
    tape: &GradientTape,
    targets: &[Tensor],
    sources: &[Source<'_>],
    output_gradients: Option<&[Option<Tensor>]>,
    unconnected: UnconnectedGradients,
    ready: Option<&mut ReadyFn<'_>>,
) -> Result<Vec<Option<Tensor>>> {
    densify(gradient_with(
        tape,
        targets,
        sources,
        output_gradients,
        unconnected,
        false,
        ready,
    )?)
}

fn densify(grads: Vec<Option<Grad>>) -> Result<Vec<Option<Tensor>>> {
    grads
        .into_iter()
        .map(|g| g.map(Grad::into_dense).transpose())
        .collect()
}

fn gradient_with(
    tape: &GradientTape,
    targets: &[Tensor],
    sources: &[Source<'_>],
    output_gradients: Option<&[Option<Tensor>]>,
    unconnected: UnconnectedGradients,
    sparse: bool,
    ready: Option<&mut ReadyFn<'_>>,
) -> Result<Vec<Option<Grad>>> {
    tape.begin_use()?;
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
    let seeds: Vec<Option<Tensor>> = targets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            if !t.dtype().is_differentiable() {
                return Ok(None);
            }
            Ok(Some(match output_gradients.and_then(|og| og[i].clone()) {
                Some(g) => g,
                None => ops::ones_like(t)?,
            }))
        })
        .collect::<Result<_>>()?;
    sweep_seeded(tape, targets, seeds, sources, unconnected, sparse, ready)
}

/// [`gradient`] with TF's sparse gradients kept: a source whose gradient comes only
/// from gathers of its rows (through identities and variable reads) gets
/// [`Grad::Sparse`], as TF's tape returns `IndexedSlices`.
pub(super) fn gradient_sparse(
    tape: &GradientTape,
    targets: &[Tensor],
    sources: &[Source<'_>],
    output_gradients: Option<&[Option<Tensor>]>,
    unconnected: UnconnectedGradients,
) -> Result<Vec<Option<Grad>>> {
    gradient_with(
        tape,
        targets,
        sources,
        output_gradients,
        unconnected,
        true,
        None,
    )
}

/// The sweep with no batch axes from `seeds` (`None`: no output gradient), once
/// [`GradientTape::begin_use`] passed: a non-persistent tape is released. `sparse` and
/// `ready` as in [`sweep_grads`].
pub(super) fn sweep_seeded(
    tape: &GradientTape,
    targets: &[Tensor],
    seeds: Vec<Option<Tensor>>,
    sources: &[Source<'_>],
    unconnected: UnconnectedGradients,
    sparse: bool,
    ready: Option<&mut ReadyFn<'_>>,
) -> Result<Vec<Option<Grad>>> {
    let release = !tape.is_persistent();
    sweep_grads(
        tape,
        targets,
        seeds,
        sources,
        0,
        release,
        unconnected,
        sparse,
        ready,
    )
}

/// The reverse sweep. `seeds[i]` is the output gradient of `targets[i]`, with `batch`
/// leading batch dimensions (jacobians run many seeds in one sweep). With
/// `release` the tape's nodes are handed over (and freed as the sweep goes) and the
/// tape is marked used; otherwise the needed nodes are copied and the tape stays
/// intact.
pub(super) fn sweep(
    tape: &GradientTape,
    targets: &[Tensor],
    seeds: Vec<Option<Tensor>>,
    sources: &[Source<'_>],
    batch: usize,
    release: bool,
    unconnected: UnconnectedGradients,
) -> Result<Vec<Option<Tensor>>> {
    densify(sweep_grads(
        tape,
        targets,
        seeds,
        sources,
        batch,
        release,
        unconnected,
        false,
        None,
    )?)
}

/// [`sweep`], keeping sparse gradients (TF's `IndexedSlices`) when `sparse` (and no
/// batch axes): gather rules give them, identities pass them on, every other rule
/// sees them densified. With `ready`, each source's gradient is handed to it (dense)
/// as soon as it is final.
#[allow(clippy::too_many_arguments)]
fn sweep_grads(
    tape: &GradientTape,
    targets: &[Tensor],
    seeds: Vec<Option<Tensor>>,
    sources: &[Source<'_>],
    batch: usize,
    release: bool,
    unconnected: UnconnectedGradients,
    sparse: bool,
    mut ready: Option<&mut ReadyFn<'_>>,
) -> Result<Vec<Option<Grad>>> {
    let sparse = sparse && batch == 0;
    // Take what the sweep needs out of the tape, holding its lock only briefly: rules
    // run unlocked, and may record on this very tape (a persistent tape in context).
    let (leads, mut nodes, order) = {
        let cell = tape.cell();
        let mut inner = cell.lock();
        if inner.released {
            return Err(Error::Tape(super::USED.into()));
        }
        if !inner.persistent {
            // TF: calling gradient inside the context of a non-persistent tape stops
            // its recording.
            inner.released = release;
            drop(inner);
            stack::remove(cell);
            inner = cell.lock();
        }
        let Plan { order, leads } = plan(&inner, targets, sources);
        if !release {
            // The planned nodes copied (cheap: shapes, ids and shared tensors), in
            // sweep order: the rules may record on this very tape while they run.
            let nodes: Vec<Node> = order
                .iter()
                .map(|&k| inner.nodes[k as usize].clone())
                .collect();
            (leads, nodes, (0..order.len() as u32).collect())
        } else {
            // Release the tape's memory: a non-persistent tape keeps nothing after its
            // gradient. The nodes are taken as they lie (never moved one by one); the
            // saved tensors of unplanned ones are dropped now, of planned ones as the
            // sweep passes them.
            let mut nodes = std::mem::take(&mut inner.nodes);
            inner.ids = FxHashMap::default();
            let mut planned = vec![false; nodes.len()];
            for &k in &order {
                planned[k as usize] = true;
            }
            for (node, planned) in nodes.iter_mut().zip(planned) {
                if !planned {
                    node.release_saved();
                }
            }
            (leads, nodes, order)
        }
    };

    let mut grads: FxHashMap<TensorId, Grad> =
        FxHashMap::with_capacity_and_hasher(16, Default::default());
    let lead: Vec<usize> = seeds
        .iter()
        .flatten()
        .next()
        .map(|g| g.shape()[..batch].to_vec())
        .unwrap_or_default();
    for (t, seed) in targets.iter().zip(seeds) {
        if let Some(seed) = seed {
            accumulate(&mut grads, t.id(), Grad::Dense(seed))?;
        }
    }
    let source_ids: FxHashSet<TensorId> = sources.iter().map(|s| s.id()).collect();

    // With a `ready` callback: after which node (sweep position) each source's gradient
    // is final — the last node in sweep order that reads it; `None` when no node does
    // (the gradient, if any, is a seed and final from the start).
    let mut ready_after: Vec<Vec<usize>> = Vec::new();
    if ready.is_some() {
        let mut last: FxHashMap<TensorId, usize> = FxHashMap::default();
        for (pos, node) in order.iter().map(|&k| &nodes[k as usize]).enumerate() {
            for s in &node.inputs {
                if source_ids.contains(&s.id) {
                    last.insert(s.id, pos);
                }
            }
        }
        ready_after = vec![Vec::new(); order.len() + 1];
        for (i, s) in sources.iter().enumerate() {
            let slot = last.get(&s.id()).map_or(0, |&pos| pos + 1);
            ready_after[slot].push(i);
        }
    }
    let mut report = |slot: usize, grads: &FxHashMap<TensorId, Grad>| -> Result<()> {
        let Some(f) = ready.as_deref_mut() else {
            return Ok(());
        };
        for &i in &ready_after[slot] {
            let s = &sources[i];
            if !s.dtype().is_differentiable() {
                continue;
            }
            match grads.get(&s.id()) {
                Some(Grad::Dense(g)) => f(i, g)?,
                Some(Grad::Sparse(g)) => f(i, &g.to_dense()?)?,
                None => {}
            }
        }
        Ok(())
    };
    report(0, &grads)?;

    for (pos, &k) in order.iter().enumerate() {
        let node = &mut nodes[k as usize];
        sweep_node(node, &mut grads, &source_ids, &leads, &lead, batch, sparse)?;
        if release {
            // A released tape's sweep goes down the indices: this node and every one
            // above it are done with (passed, or unplanned and released). Freed now, in
            // the order they were made in reverse, as the forward's temporaries would be.
            nodes.truncate(k as usize);
        } else {
            // Whatever the copy saved for its gradient is not needed any more.
            node.release_saved();
        }
        report(pos + 1, &grads)?;
    }
    drop(nodes);

    sources
        .iter()
        .map(|s| {
            // An integer or bool source is never connected (its ops are not
            // recorded): `None`, or TF's `zeros_like(source)` for `Zero`.
            let grad = if s.dtype().is_differentiable() {
                grads.get(&s.id())
            } else {
                None
            };
            match grad {
                Some(g) => Ok(Some(g.clone())),
                None => Ok(match unconnected {
                    UnconnectedGradients::None => None,
                    UnconnectedGradients::Zero => {
                        let shape: Vec<usize> = lead.iter().copied().chain(s.shape()).collect();
                        Some(Grad::Dense(ops::zeros(&shape, s.dtype())?))
                    }
                }),
            }
        })
        .collect()
}

/// One node of the sweep: its VJP from the gradients of its outputs, accumulated into
/// the gradients of its inputs (sparse ones kept as they are when `sparse`).
fn sweep_node(
    node: &Node,
    grads: &mut FxHashMap<TensorId, Grad>,
    source_ids: &FxHashSet<TensorId>,
    leads: &FxHashSet<TensorId>,
    lead: &[usize],
    batch: usize,
    sparse: bool,
) -> Result<()> {
    // A safe point: nothing of the tape changes from here on (a persistent tape's
    // nodes were copied, a released tape's are dropped with the error).
    crate::interrupt::check()?;
    let mut dys: SmallVec<[Option<Grad>; 2]> = SmallVec::with_capacity(node.outputs.len());
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
        return Ok(());
    }
    // TF's Identity and ReadVariableOp rules hand a sparse gradient on as it is.
    if sparse && node.op.passes_sparse() && node.inputs.len() == 1 && dys.len() == 1 {
        if let Some(Grad::Sparse(g)) = &dys[0] {
            let slot = &node.inputs[0];
            if slot.dtype.is_differentiable() && leads.contains(&slot.id) {
                accumulate(grads, slot.id, Grad::Sparse(g.clone()))?;
            }
            return Ok(());
        }
    }
    let knows_absent = node.op.knows_absent();
    let present: SmallVec<[bool; 4]> = if knows_absent {
        dys.iter().map(Option::is_some).collect()
    } else {
        SmallVec::new()
    };
    let dys = {
        let mut dense: SmallVec<[Tensor; 2]> = SmallVec::with_capacity(dys.len());
        for (o, g) in node.outputs.iter().zip(dys) {
            dense.push(match g {
                Some(Grad::Dense(g)) => g,
                Some(g) => g.into_dense()?,
                None if knows_absent => ops::zeros(&[], o.dtype)?,
                None => {
                    let shape: Vec<usize> = lead.iter().chain(o.shape.iter()).copied().collect();
                    ops::zeros(&shape, o.dtype)?
                }
            });
        }
        dense
    };
    let needs: SmallVec<[bool; 4]> = node
        .inputs
        .iter()
        .map(|s| s.dtype.is_differentiable() && leads.contains(&s.id))
        .collect();
    let cx = VjpCx::new(node, &needs, batch);
    let cx = if knows_absent {
        cx.with_present(&present)
    } else {
        cx
    };
    if sparse {
        if dys.len() == 1 && needs.len() == 1 && needs[0] {
            if let Some(g) = node.op.sparse_vjp(&cx, &dys[0]) {
                accumulate(grads, node.inputs[0].id, Grad::Sparse(Box::new(g?)))?;
                return Ok(());
            }
        }
        if let Some(gs) = node.op.vjp_keeping_sparse(&cx, &dys) {
            for ((slot, need), g) in node.inputs.iter().zip(&needs).zip(gs?) {
                if let (true, Some(g)) = (*need, g) {
                    accumulate(grads, slot.id, g)?;
                }
            }
            return Ok(());
        }
    }
    let gs = if batch > 0 && !node.op.batched() {
        vjp_per_row(node, &needs, &dys, batch)?
    } else {
        ops::run_vjp(&cx, &dys)?
    };
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
        let g = unbroadcast(g, &slot.shape, batch)?;
        accumulate(grads, slot.id, Grad::Dense(g))?;
    }
    Ok(())
}

/// The ops whose rules ran once per batch row ([`vjp_per_row`]) since the last
/// [`take_per_row_fallbacks`], one entry per node: every engine rule accepts batched
/// gradients ([`crate::ops::Op::batched`]); user-code gradients (custom and
/// registered gradients) run per row. Touched only on that slow path.
static PER_ROW: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());

/// Returns and clears the names of the ops whose gradient rules a jacobian ran once
/// per batch row (see [`crate::ops::Op::batched`]): a test hook for the vectorized
/// path.
pub fn take_per_row_fallbacks() -> Vec<&'static str> {
    std::mem::take(&mut *PER_ROW.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Runs a rule that does not accept batched gradients once per batch row (one
/// leading batch axis), and stacks the rows.
fn vjp_per_row(node: &Node, needs: &[bool], dys: &[Tensor], batch: usize) -> Result<ops::Grads> {
    if batch != 1 {
        return Err(Error::Internal(format!(
            "{}: per-row gradients need exactly one batch axis, got {batch}",
            node.op.name()
        )));
    }
    PER_ROW
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(node.op.name());
    let rows = dys[0].shape()[0];
    let mut per_input: Vec<Vec<Tensor>> = vec![Vec::with_capacity(rows); node.inputs.len()];
    let mut missing = vec![false; node.inputs.len()];
    for r in 0..rows {
        let row: Vec<Tensor> = dys
            .iter()
            .map(|d| ops::strided_slice(d, &[ops::Index::Int(r as isize)]))
            .collect::<Result<_>>()?;
        let gs = ops::run_vjp(&VjpCx::new(node, needs, 0), &row)?;
        for (i, (g, slot)) in gs.into_iter().zip(&node.inputs).enumerate() {
            match g {
                Some(g) if needs[i] => per_input[i].push(unbroadcast(g, &slot.shape, 0)?),
                _ => missing[i] = true,
            }
        }
    }
    per_input
        .into_iter()
        .zip(missing)
        .map(|(rows, miss)| {
            if miss || rows.is_empty() {
                Ok(None)
            } else {
                ops::stack(&rows, 0).map(Some)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ones(shape: &[usize]) -> Tensor {
        ops::ones(shape, crate::DType::F64).unwrap()
    }

    #[test]
    fn gathers_of_rows_give_sparse_gradients_in_op_order() {
        let x = Tensor::from_vec(vec![1.0f64, 2., 3., 4., 5., 6.], &[3, 2]).unwrap();
        let tape = GradientTape::persistent();
        let (y, z) = {
            let _on = tape.enter();
            tape.watch(&x);
            let a = ops::gather(&x, &Tensor::from_vec(vec![2i32], &[1]).unwrap(), None, 0).unwrap();
            let b =
                ops::gather(&x, &Tensor::from_vec(vec![0i32, 2], &[2]).unwrap(), None, 0).unwrap();
            let y = ops::add(
                &ops::reduce_sum(&a, None, false).unwrap(),
                &ops::reduce_sum(&ops::multiply(&b, &b).unwrap(), None, false).unwrap(),
            )
            .unwrap();
            (
                y,
                ops::reduce_sum(&ops::multiply(&a, &x).unwrap(), None, false).unwrap(),
            )
        };
        let src = [Source::Tensor(&x)];
        let g = tape
            .gradient_sparse(
                std::slice::from_ref(&y),
                &src,
                None,
                UnconnectedGradients::None,
            )
            .unwrap();
        let Some(Grad::Sparse(s)) = &g[0] else {
            panic!("expected a sparse gradient, got {:?}", g[0]);
        };
        // The first gather's rows first: [2] then [0, 2].
        assert_eq!(s.indices.to_vec::<i32>().unwrap(), vec![2, 0, 2]);
        assert_eq!(
            s.values.to_vec::<f64>().unwrap(),
            vec![1., 1., 2., 4., 10., 12.]
        );
        assert_eq!(s.dense_shape, vec![3, 2]);
        assert_eq!(
            s.to_dense().unwrap().to_vec::<f64>().unwrap(),
            vec![2., 4., 0., 0., 11., 13.]
        );
        // A dense use of x beside the gather: dense, as TF's sum.
        let g = tape
            .gradient_sparse(
                std::slice::from_ref(&z),
                &src,
                None,
                UnconnectedGradients::None,
            )
            .unwrap();
        let Some(Grad::Dense(d)) = &g[0] else {
            panic!("expected a dense gradient");
        };
        assert_eq!(d.to_vec::<f64>().unwrap(), vec![5., 6., 5., 6., 14., 18.]);
        // The plain gradient is dense and equal.
        let plain = tape
            .gradient(&[y], &src, None, UnconnectedGradients::None)
            .unwrap();
        assert_eq!(
            plain[0].as_ref().unwrap().to_vec::<f64>().unwrap(),
            vec![2., 4., 0., 0., 11., 13.]
        );
    }

    #[test]
    fn unbroadcast_sums_leading_and_size_one_axes() {
        // A [2, 3] gradient for a [1, 3] input with one batch axis in front: [4, 2, 3].
        let g = unbroadcast(ones(&[4, 2, 3]), &[1, 3], 1).unwrap();
        assert_eq!(g.shape(), &[4, 1, 3]);
        assert_eq!(g.to_vec::<f64>().unwrap(), vec![2.0; 12]);
        // Already the input's shape after the batch axes: returned as it is.
        let same = ones(&[4, 3]);
        let g = unbroadcast(same.clone(), &[3], 1).unwrap();
        assert_eq!(g.id(), same.id());
    }

    #[test]
    fn unbroadcast_rejects_a_gradient_with_fewer_axes_than_the_batch_and_input() {
        // Fewer axes than the batch: an error, not an out-of-range slice.
        assert!(matches!(
            unbroadcast(ones(&[2]), &[], 3),
            Err(Error::Internal(_))
        ));
        // One axis, for a one-axis input behind one batch axis (two needed).
        assert!(matches!(
            unbroadcast(ones(&[4]), &[4], 1),
            Err(Error::Internal(_))
        ));
    }
}
