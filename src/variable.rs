//! Variables: shared mutable cells holding a tensor value.
//!
//! TF equivalent: `tf.Variable` (a resource variable). Reading a variable produces a
//! tensor; tapes that watch the variable record the read, so gradients with respect
//! to the variable are the sum over its reads. Assignment stores a new value; values
//! already read, or saved by a tape, are unaffected.
//!
//! `assign`, `assign_add` and `assign_sub` are linearizable: concurrent updates from
//! several threads act as if applied one at a time, none is lost, and a reader sees
//! either the value before an update or after it (see `Variable::update`).

use std::sync::{Arc, RwLock};

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops;
use crate::tape::stack;
use crate::tensor::{ordered_id, Tensor, TensorId};

struct Inner {
    id: TensorId,
    /// The binding's handle on the object wrapping this variable (the Python
    /// `gt.Variable`), so that `watched_variables` returns the user's objects.
    host: std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>,
    name: String,
    trainable: bool,
    value: RwLock<Tensor>,
}

/// A mutable, shared tensor cell. Cloning shares the same variable.
/// TF equivalent: `tf.Variable`.
///
/// Tapes watch trainable variables automatically when they are read, so one step of
/// gradient descent needs no `watch`:
///
/// ```
/// use gradtape::{ops, GradientTape, Source, Tensor, UnconnectedGradients, Variable};
///
/// let w = Variable::new(Tensor::scalar(3.0f32), true, Some("w"));
/// assert_eq!(w.name(), "w:0");
/// let tape = GradientTape::new();
/// let loss = {
///     let _recording = tape.enter();
///     let wv = w.read(); // a recorded read: the tape watches `w` from here on
///     ops::mul(&wv, &wv)?
/// };
/// let grads = tape.gradient(&[loss], &[Source::Variable(&w)], None, UnconnectedGradients::None)?;
/// let g = grads[0].clone().expect("loss depends on w");
/// assert_eq!(g.to_vec::<f32>()?, vec![6.0]); // d(w^2)/dw = 2w
/// w.assign_sub(&ops::mul(&g, &Tensor::scalar(0.5f32))?)?; // w -= 0.5 * g
/// assert_eq!(w.value_unrecorded().to_vec::<f32>()?, vec![0.0]);
/// // A value of another dtype or shape is rejected.
/// assert!(w.assign(&Tensor::scalar(1.0f64)).is_err());
/// # Ok::<(), gradtape::Error>(())
/// ```
#[derive(Clone)]
pub struct Variable {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Variable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Variable({:?}, {})",
            self.name(),
            self.value_unrecorded()
        )
    }
}

impl Variable {
    /// A new variable. `name` is stored as given plus `:0` (TF's eager naming:
    /// `Variable(.., name="x0")` is named `x0:0`); names are not made unique.
    pub fn new(initial: Tensor, trainable: bool, name: Option<&str>) -> Variable {
        let name = format!("{}:0", name.unwrap_or("Variable"));
        Variable {
            inner: Arc::new(Inner {
                id: ordered_id(),
                host: std::sync::OnceLock::new(),
                name,
                trainable,
                value: RwLock::new(initial.fresh()),
            }),
        }
    }

    pub fn id(&self) -> TensorId {
        self.inner.id
    }
    pub fn name(&self) -> &str {
        &self.inner.name
    }
    pub fn trainable(&self) -> bool {
        self.inner.trainable
    }
    pub fn dtype(&self) -> DType {
        self.value_unrecorded().dtype()
    }
    pub fn shape(&self) -> Vec<usize> {
        self.value_unrecorded().shape().to_vec()
    }

    /// Attaches a host object (once); see [`Variable::host`].
    pub fn set_host(&self, h: Box<dyn std::any::Any + Send + Sync>) {
        let _ = self.inner.host.set(h);
    }

    /// The host object attached by a binding, if any.
    pub fn host(&self) -> Option<&(dyn std::any::Any + Send + Sync)> {
        self.inner.host.get().map(|b| b.as_ref())
    }

    /// The variable as a gradient target: a tensor carrying the variable's own id,
    /// so `gradient(v, v)` is ones (TF differentiates the handle).
    pub fn handle(&self) -> Tensor {
        Tensor::with_id(self.id(), self.value_unrecorded().into_data())
    }

    fn lock_read(&self) -> std::sync::RwLockReadGuard<'_, Tensor> {
        self.inner.value.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The current value without telling any tape (for printing and numpy export).
    pub fn value_unrecorded(&self) -> Tensor {
        self.lock_read().clone()
    }

    /// Reads the value as a new tensor. Active tapes see the read: trainable
    /// variables are auto-watched (unless the tape says otherwise) and a tape that
    /// watches this variable records the read. TF equivalent: `v.read_value()`.
    pub fn read(&self) -> Tensor {
        let t = self.lock_read().fresh();
        if crate::tape::provenance::enabled() {
            crate::tape::provenance::note("ReadVariableOp", &[self.id()], &[&t]);
        }
        crate::graph::on_variable_read(self, &t);
        stack::note_read(self);
        if stack::any_active() {
            stack::on_variable_read(self, &t);
        }
        t
    }

    fn check_like(&self, op: &'static str, v: &Tensor) -> Result<()> {
        let cur = self.lock_read();
        if cur.dtype() != v.dtype() {
            return Err(Error::invalid(
                op,
                format!(
                    "cannot assign a {} value to variable '{}' of dtype {}",
                    v.dtype(),
                    self.name(),
                    cur.dtype()
                ),
            ));
        }
        if cur.shape() != v.shape() {
            return Err(Error::invalid(
                op,
                format!(
                    "Cannot assign value of shape {:?} to variable '{}' of shape {:?}",
                    v.shape(),
                    self.name(),
                    cur.shape()
                ),
            ));
        }
        Ok(())
    }

    /// Replaces the value (same shape and dtype). TF equivalent: `v.assign(value)`.
    pub fn assign(&self, value: &Tensor) -> Result<()> {
        self.traced("AssignVariableOp", value, |v, x| {
            v.check_like("AssignVariableOp", x)?;
            *v.lock_write() = x.fresh();
            Ok(())
        })
    }

    /// `v += delta`. TF equivalent: `v.assign_add(delta)`. Not recorded by tapes.
    pub fn assign_add(&self, delta: &Tensor) -> Result<()> {
        self.traced("AssignAddVariableOp", delta, |v, d| {
            v.update("AssignAddVariableOp", d, ops::add)
        })
    }

    /// `v -= delta`. TF equivalent: `v.assign_sub(delta)`. Not recorded by tapes.
    pub fn assign_sub(&self, delta: &Tensor) -> Result<()> {
        self.traced("AssignSubVariableOp", delta, |v, d| {
            v.update("AssignSubVariableOp", d, ops::subtract)
        })
    }

    /// Runs a write; inside a trace ([`crate::graph`]) it is also recorded, to run on
    /// every call of the graph (and undone when the trace ends: tracing is not a call).
    fn traced(
        &self,
        op: &'static str,
        value: &Tensor,
        write: fn(&Variable, &Tensor) -> Result<()>,
    ) -> Result<()> {
        if !crate::graph::is_tracing() {
            return write(self, value);
        }
        crate::graph::on_variable_assign(self);
        let v = self.clone();
        let key = format!("variable:{}", self.id());
        crate::graph::apply_stateful_keyed(op, key, &[value], move |x| {
            write(&crate::graph::resolve(&v), &x[0])?;
            Ok(Vec::new())
        })?;
        Ok(())
    }

    /// Puts back a value saved before a trace assigned the variable.
    pub(crate) fn restore_unrecorded(&self, value: Tensor) {
        *self.lock_write() = value;
    }

    /// Stores `new` (same shape and dtype, not checked) if the variable still holds
    /// `snapshot`, as [`Variable::update`] does; `false` if another write came first.
    /// Not recorded by tapes or traces: the fused optimizer updates (`crate::nn`).
    pub(crate) fn store_if_current(&self, snapshot: &Tensor, new: Tensor) -> bool {
        let mut slot = self.lock_write();
        if slot.id() != snapshot.id() {
            return false;
        }
        *slot = new.fresh();
        true
    }

    fn lock_write(&self) -> std::sync::RwLockWriteGuard<'_, Tensor> {
        self.inner.value.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Read–compute–write, linearizable: the new value is computed from a snapshot
    /// with no lock held, and stored only if the variable still holds that snapshot
    /// (every stored value has a fresh id); otherwise it is recomputed from the newer
    /// value. Concurrent updates are therefore never lost, readers only ever take the
    /// lock for a pointer copy and see whole values, and no lock is held while the
    /// kernel runs (it may wait on the thread pool, whose workers may need the GIL).
    /// A failed attempt means another write succeeded, so some writer always makes
    /// progress.
    fn update(
        &self,
        op: &'static str,
        delta: &Tensor,
        f: fn(&Tensor, &Tensor) -> Result<Tensor>,
    ) -> Result<()> {
        loop {
            let cur = self.value_unrecorded();
            if cur.dtype() != delta.dtype() {
                return Err(Error::dtype_mismatch(op, cur.dtype(), delta.dtype()));
            }
            let b = crate::broadcast::broadcast_shapes(op, cur.shape(), delta.shape())?;
            if b != cur.shape() {
                return Err(Error::shapes(op, cur.shape(), delta.shape()));
            }
            // Computed outside any tape: updates are not differentiable.
            let new = stack::suspended(|| f(&cur, delta))?;
            let mut slot = self.lock_write();
            if slot.id() == cur.id() {
                // A fresh id even if `f` handed back its input, so that the next
                // update's snapshot check sees this write.
                *slot = new.fresh();
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrent_updates_are_not_lost() {
        let n = 50_000;
        let v = Variable::new(Tensor::from_vec(vec![0i32; n], &[n]).unwrap(), false, None);
        let one = Tensor::from_vec(vec![1i32; n], &[n]).unwrap();
        let (threads, per) = (4, 25);
        std::thread::scope(|s| {
            for t in 0..threads {
                let (v, one) = (&v, &one);
                s.spawn(move || {
                    for _ in 0..per {
                        if t % 2 == 0 {
                            v.assign_add(one).unwrap();
                        } else {
                            v.assign_sub(&ops::neg(one).unwrap()).unwrap();
                        }
                    }
                });
            }
        });
        let got = v.value_unrecorded().to_vec::<i32>().unwrap();
        assert!(got.iter().all(|&x| x == threads * per), "{:?}", &got[..4]);
    }

    #[test]
    fn failed_update_changes_nothing() {
        let v = Variable::new(
            Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap(),
            true,
            None,
        );
        assert!(v
            .assign_add(&Tensor::from_vec(vec![1.0f32; 3], &[3]).unwrap())
            .is_err());
        assert!(v.assign_sub(&Tensor::scalar(1.0f64)).is_err());
        assert_eq!(
            v.value_unrecorded().to_vec::<f32>().unwrap(),
            vec![1.0, 2.0]
        );
    }
}
