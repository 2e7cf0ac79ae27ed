//! Forward mode: the [`ForwardAccumulator`] and how an op's output tangents are made.
//!
//! TF equivalent: `tf.autodiff.ForwardAccumulator`. An accumulator maps tensor ids to
//! tangents. While it is active on a thread (it shares the tapes' stack, see
//! `tape::stack`), every op with a tangent for one of its inputs gets tangents for
//! its outputs at once: from the op's [`Op::jvp`] when it has one, otherwise by
//! transposing its VJP (TF's generic rule). Tangents are computed with engine ops while
//! only the tapes and accumulators entered *before* this one are active, so those record
//! them: an outer accumulator gives higher-order forward derivatives, an outer tape
//! reverse-over-forward ones, and an accumulator around a tape's `gradient` call sees the
//! backward pass (forward-over-reverse Hessian-vector products). What is not here: the
//! per-op rules (beside each op in `ops/`), nested structures (the Python layer).

use std::sync::{Arc, Mutex, MutexGuard};

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use super::arena::{Node, Slot};
use super::{stack, GradientTape, Source, UnconnectedGradients};
use crate::error::{Error, Result};
use crate::ops::{self, Grads, Op, VjpCx};
use crate::tensor::{Tensor, TensorId};
use crate::variable::Variable;

/// The state of one accumulator: the tangent of every tensor it has seen.
pub(crate) struct AccInner {
    tangents: FxHashMap<TensorId, Tensor>,
}

/// Shared handle of an accumulator (the thread stacks and the owner point at it).
pub(crate) struct AccCell {
    inner: Mutex<AccInner>,
}

impl AccCell {
    fn lock(&self) -> MutexGuard<'_, AccInner> {
        // Every mutation is a single insert: a panic elsewhere leaves it consistent.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether one of `inputs` has a tangent here (the op needs a forward rule).
    pub(crate) fn has_tangent_for(&self, inputs: &[&Tensor]) -> bool {
        let inner = self.lock();
        !inner.tangents.is_empty() && inputs.iter().any(|t| inner.tangents.contains_key(&t.id()))
    }

    fn get(&self, id: TensorId) -> Option<Tensor> {
        self.lock().tangents.get(&id).cloned()
    }

    fn set(&self, id: TensorId, t: Tensor) {
        self.lock().tangents.insert(id, t);
    }
}

/// Computes Jacobian-vector products in forward mode. TF equivalent:
/// `tf.autodiff.ForwardAccumulator`.
///
/// Watch primals with their tangents, enter it, run ops: every op that reads a tensor
/// with a tangent computes its outputs' tangents as it runs. `jvp` looks them up (no
/// computation happens there).
///
/// ```
/// use gradtape::{ops, ForwardAccumulator, Tensor};
/// let x = Tensor::scalar(3.0f64);
/// let acc = ForwardAccumulator::new();
/// acc.watch(&x, &Tensor::scalar(2.0f64))?;
/// let y = {
///     let _on = acc.enter()?;
///     ops::mul(&x, &x)? // y = x², dy = 2x · dx
/// };
/// assert_eq!(acc.jvp(&y).unwrap().to_vec::<f64>()?, vec![12.0]);
/// # Ok::<(), gradtape::Error>(())
/// ```
#[derive(Clone)]
pub struct ForwardAccumulator {
    cell: Arc<AccCell>,
}

/// Keeps an accumulator active on this thread until dropped.
pub struct Accumulating<'a> {
    acc: &'a ForwardAccumulator,
}

impl Drop for Accumulating<'_> {
    fn drop(&mut self) {
        self.acc.exit();
    }
}

impl Default for ForwardAccumulator {
    fn default() -> Self {
        ForwardAccumulator::new()
    }
}

/// The tangent for `primal`, checked: same shape, same dtype.
fn check_tangent(
    what: &'static str,
    shape: &[usize],
    dtype: crate::DType,
    tangent: &Tensor,
) -> Result<()> {
    if tangent.dtype() != dtype {
        return Err(Error::dtype_mismatch(what, dtype, tangent.dtype()));
    }
    if tangent.shape() != shape {
        return Err(Error::invalid(
            what,
            format!(
                "tangent of shape {:?} for a primal of shape {:?}: they must have the same shape",
                tangent.shape(),
                shape
            ),
        ));
    }
    Ok(())
}

impl ForwardAccumulator {
    /// An accumulator watching nothing yet.
    pub fn new() -> ForwardAccumulator {
        ForwardAccumulator {
            cell: Arc::new(AccCell {
                inner: Mutex::new(AccInner {
                    tangents: FxHashMap::default(),
                }),
            }),
        }
    }

    /// Watches `primal` with `tangent` (same shape and dtype). Watching a tensor again
    /// adds the tangents (TF's rule). A primal of a non-differentiable dtype (integer,
    /// bool) is not watched: its JVPs are `None`, as in TF.
    pub fn watch(&self, primal: &Tensor, tangent: &Tensor) -> Result<()> {
        check_tangent(
            "ForwardAccumulator",
            primal.shape(),
            primal.dtype(),
            tangent,
        )?;
        self.watch_id(primal.id(), primal.dtype(), tangent)
    }

    /// Watches a variable: its reads get `tangent`.
    pub fn watch_variable(&self, var: &Variable, tangent: &Tensor) -> Result<()> {
        check_tangent("ForwardAccumulator", &var.shape(), var.dtype(), tangent)?;
        self.watch_id(var.id(), var.dtype(), tangent)
    }

    fn watch_id(&self, id: TensorId, dtype: crate::DType, tangent: &Tensor) -> Result<()> {
        if !dtype.is_differentiable() {
            return Ok(());
        }
        let sum = match self.cell.get(id) {
            // The sum is made with nothing recording it (a watch is not an op).
            Some(old) => stack::suspended(|| ops::add(&old, tangent))?,
            None => tangent.clone(),
        };
        self.cell.set(id, sum);
        Ok(())
    }

    /// Makes the accumulator active on this thread until the guard drops. Fails when
    /// it is active already (TF: "Accumulator is already recording.").
    pub fn enter(&self) -> Result<Accumulating<'_>> {
        self.start()?;
        Ok(Accumulating { acc: self })
    }

    /// Pushes the accumulator on this thread's stack (Python's `__enter__`).
    pub fn start(&self) -> Result<()> {
        if stack::contains_acc(&self.cell) {
            return Err(Error::invalid(
                "ForwardAccumulator",
                "Accumulator is already recording.",
            ));
        }
        stack::push_acc(self.cell.clone());
        Ok(())
    }

    /// Removes the accumulator from this thread's stack (Python's `__exit__`); returns
    /// whether it was active. Tangents already computed stay available to `jvp`.
    pub fn exit(&self) -> bool {
        stack::remove_acc(&self.cell)
    }

    /// Whether the accumulator is on this thread's stack.
    pub fn is_active(&self) -> bool {
        stack::contains_acc(&self.cell)
    }

    /// The tangent computed for `t`, if any. TF equivalent: `acc.jvp(t)`.
    pub fn jvp(&self, t: &Tensor) -> Option<Tensor> {
        self.cell.get(t.id())
    }

    /// The tangent of a watched variable.
    pub fn jvp_variable(&self, v: &Variable) -> Option<Tensor> {
        self.cell.get(v.id())
    }

    /// An identity for this accumulator (shared by its clones), used by graph tracing.
    pub(crate) fn key(&self) -> usize {
        Arc::as_ptr(&self.cell) as *const u8 as usize
    }

    /// Number of tensors with a tangent (for tests and memory accounting).
    pub fn num_tangents(&self) -> usize {
        self.cell.lock().tangents.len()
    }
}

/// Computes the output tangents of an op just run for the accumulator at stack position
/// `k`, with only the entries before it active.
pub(crate) fn propagate(
    acc: &AccCell,
    k: usize,
    op: Arc<dyn Op>,
    inputs: &[&Tensor],
    outputs: &[&Tensor],
) -> Result<()> {
    let tangents: Vec<Option<Tensor>> = {
        let inner = acc.lock();
        inputs
            .iter()
            .map(|t| {
                if t.dtype().is_differentiable() {
                    inner.tangents.get(&t.id()).cloned()
                } else {
                    None
                }
            })
            .collect()
    };
    if tangents.iter().all(Option::is_none) {
        return Ok(());
    }
    let node = Node {
        inputs: inputs.iter().map(|t| Slot::of(t)).collect(),
        outputs: outputs.iter().map(|t| Slot::of(t)).collect(),
        saved_inputs: inputs.iter().map(|t| Some((*t).clone())).collect(),
        saved_outputs: outputs.iter().map(|t| Some((*t).clone())).collect(),
        op,
    };
    let outs = stack::with_prefix(k, || run_jvp(&node, &tangents))?;
    if outs.len() != outputs.len() {
        return Err(Error::Internal(format!(
            "forward rule of {} returned {} tangents for {} outputs",
            node.op.name(),
            outs.len(),
            outputs.len()
        )));
    }
    for (o, t) in outputs.iter().zip(outs) {
        if let Some(t) = t {
            if o.dtype().is_differentiable() {
                acc.set(o.id(), t);
            }
        }
    }
    Ok(())
}

/// A variable read while the accumulator at position `k` is active: the read value gets
/// the variable's tangent (through an identity, so that outer recorders see a new op).
pub(crate) fn on_variable_read(acc: &AccCell, k: usize, var: &Variable, value: &Tensor) {
    if !value.dtype().is_differentiable() {
        return;
    }
    if let Some(t) = acc.get(var.id()) {
        let t = stack::with_prefix(k, || ops::identity(&t)).unwrap_or(t);
        acc.set(value.id(), t);
    }
}

/// The output tangents of `node` from its input tangents: the op's own forward rule,
/// or its VJP transposed.
pub(crate) fn run_jvp(node: &Node, tangents: &[Option<Tensor>]) -> Result<Grads> {
    let needs: Vec<bool> = node
        .inputs
        .iter()
        .zip(tangents)
        .map(|(s, t)| t.is_some() && s.dtype.is_differentiable())
        .collect();
    let cx = VjpCx::new(node, &needs, 0);
    if let Some(r) = node.op.jvp(&cx, tangents) {
        return r;
    }
    jvp_by_transpose(node, &needs, tangents)
}

/// TF's generic forward rule: the VJP `u ↦ Jᵀu` is linear in `u`, so its own VJP
/// applied to the tangents is `J t`. Runs the rule once on (watched) ones, then a
/// backward pass through it seeded with the tangents.
pub(crate) fn jvp_by_transpose(
    node: &Node,
    needs: &[bool],
    tangents: &[Option<Tensor>],
) -> Result<Grads> {
    let aids: Vec<Tensor> = node
        .outputs
        .iter()
        .map(|o| ops::ones(&o.shape, o.dtype))
        .collect::<Result<_>>()?;
    let tape = GradientTape::with_options(false, false);
    let gs = {
        let _on = tape.enter();
        for (a, o) in aids.iter().zip(&node.outputs) {
            if o.dtype.is_differentiable() {
                tape.watch(a);
            }
        }
        let cx = VjpCx::new(node, needs, 0);
        let gs = ops::run_vjp(&cx, &aids)?;
        if gs.len() != node.inputs.len() {
            return Err(Error::Internal(format!(
                "gradient of {} returned {} values for {} inputs",
                node.op.name(),
                gs.len(),
                node.inputs.len()
            )));
        }
        let mut out: SmallVec<[(Tensor, Tensor); 2]> = SmallVec::new();
        for ((g, slot), (need, t)) in gs
            .into_iter()
            .zip(&node.inputs)
            .zip(needs.iter().zip(tangents))
        {
            let (Some(g), true, Some(t)) = (g, *need, t) else {
                continue;
            };
            let g = super::unbroadcast(g, &slot.shape, 0)?;
            out.push((g, t.clone()));
        }
        out
    };
    if gs.is_empty() {
        return Ok(node.outputs.iter().map(|_| None).collect());
    }
    let (targets, seeds): (Vec<Tensor>, Vec<Option<Tensor>>) =
        gs.into_iter().map(|(g, t)| (g, Some(t))).unzip();
    let sources: Vec<Source<'_>> = aids.iter().map(Source::Tensor).collect();
    let r = tape.gradient(&targets, &sources, Some(&seeds), UnconnectedGradients::None)?;
    Ok(r.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testutil::{close, t64, vals};

    #[test]
    fn product_rule_and_reading_after_exit() {
        let x = t64(&[1.0, 2.0], &[2]);
        let y = t64(&[3.0, 4.0], &[2]);
        let acc = ForwardAccumulator::new();
        acc.watch(&x, &t64(&[1.0, 0.0], &[2])).unwrap();
        acc.watch(&y, &t64(&[0.0, 1.0], &[2])).unwrap();
        let z = {
            let _on = acc.enter().unwrap();
            ops::mul(&x, &y).unwrap()
        };
        close(&vals(&acc.jvp(&z).unwrap()), &[3.0, 2.0]);
        // After exit nothing new is computed.
        let w = ops::mul(&x, &y).unwrap();
        assert!(acc.jvp(&w).is_none());
    }

    #[test]
    fn nested_accumulators_give_second_derivatives() {
        let x = Tensor::scalar(1.1f64);
        let outer = ForwardAccumulator::new();
        let inner = ForwardAccumulator::new();
        outer.watch(&x, &Tensor::scalar(1.0f64)).unwrap();
        inner.watch(&x, &Tensor::scalar(1.0f64)).unwrap();
        let y = {
            let _o = outer.enter().unwrap();
            let _i = inner.enter().unwrap();
            ops::pow(&x, &Tensor::scalar(3.5f64)).unwrap()
        };
        let d1 = inner.jvp(&y).unwrap();
        let d2 = outer.jvp(&d1).unwrap();
        close(&vals(&d1), &[3.5 * 1.1f64.powf(2.5)]);
        close(&vals(&d2), &[3.5 * 2.5 * 1.1f64.powf(1.5)]);
        // The inner accumulator never sees the outer one's tangents.
        assert!(inner.jvp(&outer.jvp(&y).unwrap()).is_none());
    }

    #[test]
    fn forward_over_reverse_is_a_hessian_vector_product() {
        let x = t64(&[1.0, 2.0], &[2]);
        let acc = ForwardAccumulator::new();
        acc.watch(&x, &t64(&[1.0, 0.0], &[2])).unwrap();
        let g = {
            let _on = acc.enter().unwrap();
            let tape = GradientTape::new();
            let y = {
                let _r = tape.enter();
                tape.watch(&x);
                let c = ops::mul(&ops::mul(&x, &x).unwrap(), &x).unwrap();
                ops::reduce_sum(&c, None, false).unwrap()
            };
            tape.gradient1(&y, &x).unwrap().unwrap()
        };
        close(&vals(&g), &[3.0, 12.0]);
        close(&vals(&acc.jvp(&g).unwrap()), &[6.0, 0.0]);
    }

    #[test]
    fn reverse_over_forward() {
        let c = Tensor::scalar(1.0f64);
        let tape = GradientTape::new();
        let acc = ForwardAccumulator::new();
        acc.watch(&c, &Tensor::scalar(0.1f64)).unwrap();
        let jd = {
            let _r = tape.enter();
            let _a = acc.enter().unwrap();
            tape.watch(&c);
            let d = ops::cos(&c).unwrap();
            acc.jvp(&d).unwrap()
        };
        let g = tape.gradient1(&jd, &c).unwrap().unwrap();
        close(&vals(&g), &[-0.1 * 1.0f64.cos()]);
    }

    #[test]
    fn bad_tangents_and_reentry_are_errors() {
        let x = t64(&[1.0, 2.0], &[2]);
        let acc = ForwardAccumulator::new();
        assert!(acc.watch(&x, &t64(&[1.0], &[1])).is_err());
        assert!(acc.watch(&x, &Tensor::scalar(1.0f32)).is_err());
        let _on = acc.enter().unwrap();
        assert!(acc.enter().is_err());
    }

    #[test]
    fn variables_and_integers() {
        let v = Variable::new(t64(&[1.0, 2.0], &[2]), true, None);
        let acc = ForwardAccumulator::new();
        acc.watch_variable(&v, &t64(&[0.5, -1.0], &[2])).unwrap();
        let i = Tensor::scalar(3i32);
        acc.watch(&i, &Tensor::scalar(1i32)).unwrap();
        let y = {
            let _on = acc.enter().unwrap();
            ops::mul(&v.read(), &t64(&[2.0, 2.0], &[2])).unwrap()
        };
        close(&vals(&acc.jvp(&y).unwrap()), &[1.0, -2.0]);
        assert!(acc.jvp(&i).is_none());
    }
}
