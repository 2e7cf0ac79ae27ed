//! Custom gradients: a computation recorded as one node whose gradient is a
//! user-supplied function.
//!
//! TF equivalent: `tf.custom_gradient`. The forward function runs with no tape
//! recording; its outputs are recorded as one node whose inputs are the given
//! tensors plus every variable the function read. The gradient function gets the
//! output gradients and returns one gradient per input (then per variable); it is
//! called with the tapes of the calling thread active, so if it uses engine ops it
//! is itself differentiable (higher order works).
//!
//! ```
//! use gradtape::{custom_gradient, ops, GradientTape, Tensor};
//! // An identity whose gradient is clipped to norm 0.5 (the advanced guide's example).
//! let v = Tensor::scalar(2.0f32);
//! let tape = GradientTape::new();
//! let y = {
//!     let _r = tape.enter();
//!     tape.watch(&v);
//!     let vv = ops::mul(&v, &v).unwrap();
//!     custom_gradient(&[&vv], |xs| Ok(vec![xs[0].clone()]), |_xs, dys, _vars| {
//!         let n = ops::sqrt(&ops::reduce_sum(&ops::square(&dys[0])?, None, false)?)?;
//!         let scale = ops::divide(&Tensor::scalar(0.5f32), &ops::maximum(&n, &Tensor::scalar(0.5f32))?)?;
//!         Ok((vec![Some(ops::mul(&dys[0], &scale)?)], vec![]))
//!     })
//!     .unwrap()
//!     .remove(0)
//! };
//! assert_eq!(tape.gradient1(&y, &v).unwrap().unwrap().to_vec::<f32>().unwrap(), vec![2.0]);
//! ```

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::ops::{Grads, Op, Saves, VjpCx};
use crate::tape::stack;
use crate::tensor::Tensor;
use crate::variable::Variable;

/// Gradients a custom rule returns: one per input, then one per variable read.
pub type CustomGrads = (Vec<Option<Tensor>>, Vec<Option<Tensor>>);

/// A gradient function: `(inputs, output gradients, variables read) → gradients`.
pub type GradFn =
    dyn Fn(&[Tensor], &[Tensor], &[Variable]) -> Result<CustomGrads> + Send + Sync + 'static;

/// What a binding keeps alive for a custom rule (Python's callback), shown to it again
/// through [`Op::owned`] (for its garbage collector).
pub type Owned = Arc<dyn std::any::Any + Send + Sync>;

struct Custom {
    grad: Arc<GradFn>,
    n_inputs: usize,
    vars: Vec<Variable>,
    owned: Option<Owned>,
}

impl Op for Custom {
    fn name(&self) -> &'static str {
        "IdentityN"
    }
    fn saves(&self) -> Saves {
        Saves::INPUTS
    }
    fn calls_user_code(&self) -> bool {
        true
    }
    fn owned(&self) -> Option<&Owned> {
        self.owned.as_ref()
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let xs: Vec<Tensor> = (0..self.n_inputs)
            .map(|i| cx.input(i).cloned())
            .collect::<Result<_>>()?;
        let (gx, gv) = (self.grad)(&xs, dys, &self.vars)?;
        if gx.len() != self.n_inputs {
            return Err(Error::invalid(
                "custom_gradient",
                format!(
                    "the gradient function returned {} gradients but the function has {} inputs",
                    gx.len(),
                    self.n_inputs
                ),
            ));
        }
        if gv.len() != self.vars.len() {
            let names: Vec<&str> = self.vars.iter().map(|v| v.name()).collect();
            return Err(Error::invalid(
                "custom_gradient",
                format!(
                    "the gradient function returned {} variable gradients but the function read {} variables: {:?}",
                    gv.len(),
                    self.vars.len(),
                    names
                ),
            ));
        }
        let mut out: Grads = Grads::new();
        for (i, g) in gx.into_iter().chain(gv).enumerate() {
            if let Some(g) = &g {
                let want = cx.input_shape(i);
                if g.shape() != want {
                    return Err(Error::invalid(
                        "custom_gradient",
                        format!(
                            "gradient {i} has shape {:?} but its input has shape {:?}",
                            g.shape(),
                            want
                        ),
                    ));
                }
            }
            out.push(g);
        }
        Ok(out)
    }
}

/// Runs `forward(inputs)` unrecorded and records its outputs as one node with the
/// gradient `grad(inputs, dys, variables)`. Returns the outputs (new tensors).
pub fn custom_gradient(
    inputs: &[&Tensor],
    forward: impl FnOnce(&[Tensor]) -> Result<Vec<Tensor>>,
    grad: impl Fn(&[Tensor], &[Tensor], &[Variable]) -> Result<CustomGrads> + Send + Sync + 'static,
) -> Result<Vec<Tensor>> {
    let xs: Vec<Tensor> = inputs.iter().map(|t| (*t).clone()).collect();
    let (outs, vars) = stack::collect_reads(|| stack::suspended(|| forward(&xs)));
    record_custom(inputs, outs?, vars, Arc::new(grad), None)
}

/// Records precomputed `outputs` of a custom computation (the Python binding runs the
/// forward function itself). `owned`: what the rule keeps alive for a binding, if any
/// (see [`Op::owned`]).
pub fn record_custom(
    inputs: &[&Tensor],
    outputs: Vec<Tensor>,
    vars: Vec<Variable>,
    grad: Arc<GradFn>,
    owned: Option<Owned>,
) -> Result<Vec<Tensor>> {
    // Reading the variables here (outside the forward pass) lets active tapes
    // auto-watch them and record the reads, so gradients reach them.
    let reads: Vec<Tensor> = vars.iter().map(|v| v.read()).collect();
    let outs: Vec<Tensor> = outputs.iter().map(|t| t.fresh()).collect();
    let mut all: Vec<&Tensor> = inputs.to_vec();
    all.extend(reads.iter());
    let out_refs: Vec<&Tensor> = outs.iter().collect();
    stack::record(
        Custom {
            grad,
            n_inputs: inputs.len(),
            vars,
            owned,
        },
        &all,
        &out_refs,
    )?;
    Ok(outs)
}

// ---------------------------------------------------------------------------
// Registered gradients and overrides of built-in rules.
// ---------------------------------------------------------------------------

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{LazyLock, RwLock};

/// What a registered gradient function sees of the op it differentiates.
/// TF equivalent: the `op` argument of a `tf.RegisterGradient` function.
pub struct OpInfo<'a> {
    /// TF op type of the op being differentiated ("Square", "MatMul", ...).
    pub op_type: &'static str,
    pub inputs: &'a [Tensor],
    pub outputs: &'a [Tensor],
}

/// A registered gradient function: `(op, output gradients) → input gradients`.
pub type RegisteredFn = dyn Fn(&OpInfo<'_>, &[Tensor]) -> Result<Vec<Option<Tensor>>> + Send + Sync;

static REGISTRY: LazyLock<RwLock<HashMap<String, Arc<RegisteredFn>>>> =
    LazyLock::new(|| RwLock::new(HashMap::new()));

thread_local! {
    /// Active override maps on this thread (innermost last): op type → registered name.
    static OVERRIDES: RefCell<Vec<HashMap<String, String>>> = const { RefCell::new(Vec::new()) };
}

/// Registers a gradient function under `name`. TF equivalent: `tf.RegisterGradient`.
/// Registering a name twice is an error, as in TF.
pub fn register_gradient(
    name: &str,
    f: impl Fn(&OpInfo<'_>, &[Tensor]) -> Result<Vec<Option<Tensor>>> + Send + Sync + 'static,
) -> Result<()> {
    let mut reg = REGISTRY.write().unwrap_or_else(|e| e.into_inner());
    if reg.contains_key(name) {
        return Err(Error::invalid(
            "RegisterGradient",
            format!("Registering two gradient with name '{name}'!"),
        ));
    }
    reg.insert(name.to_string(), Arc::new(f));
    Ok(())
}

/// Keeps a gradient override map in force on this thread until dropped.
pub struct OverrideScope {
    _private: (),
}

impl Drop for OverrideScope {
    fn drop(&mut self) {
        OVERRIDES.with(|o| {
            o.borrow_mut().pop();
        });
    }
}

/// Ops recorded while the returned guard lives use the registered gradient named
/// `map[op_type]` instead of their built-in rule. TF equivalent:
/// `Graph.gradient_override_map`. Every name must be registered.
pub fn gradient_override_map(map: &[(&str, &str)]) -> Result<OverrideScope> {
    let reg = REGISTRY.read().unwrap_or_else(|e| e.into_inner());
    for (_, name) in map {
        if !reg.contains_key(*name) {
            return Err(Error::invalid(
                "gradient_override_map",
                format!("no gradient registered under the name '{name}'"),
            ));
        }
    }
    let m: HashMap<String, String> = map
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    OVERRIDES.with(|o| o.borrow_mut().push(m));
    Ok(OverrideScope { _private: () })
}

/// Whether a gradient override map is in force on this thread.
pub(crate) fn any_override() -> bool {
    OVERRIDES.with(|o| o.borrow().iter().any(|m| !m.is_empty()))
}

/// The overriding rule for `op_type` in scope on this thread, if any.
pub(crate) fn override_for(op_type: &'static str) -> Option<Arc<dyn Op>> {
    let name = OVERRIDES.with(|o| {
        let o = o.borrow();
        o.iter().rev().find_map(|m| m.get(op_type).cloned())
    })?;
    let f = REGISTRY
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&name)?
        .clone();
    Some(Arc::new(Overridden { op_type, f }))
}

/// A recorded op whose rule is a registered gradient function.
struct Overridden {
    op_type: &'static str,
    f: Arc<RegisteredFn>,
}

impl Op for Overridden {
    fn name(&self) -> &'static str {
        self.op_type
    }
    fn saves(&self) -> Saves {
        Saves::EVERYTHING
    }
    fn calls_user_code(&self) -> bool {
        true
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let inputs: Vec<Tensor> = (0..cx.num_inputs())
            .map(|i| cx.input(i).cloned())
            .collect::<Result<_>>()?;
        let outputs: Vec<Tensor> = (0..dys.len())
            .map(|i| cx.output(i).cloned())
            .collect::<Result<_>>()?;
        let info = OpInfo {
            op_type: self.op_type,
            inputs: &inputs,
            outputs: &outputs,
        };
        let g = (self.f)(&info, dys)?;
        if g.len() != inputs.len() {
            return Err(Error::invalid(
                "RegisterGradient",
                format!(
                    "the gradient registered for {} returned {} gradients for {} inputs",
                    self.op_type,
                    g.len(),
                    inputs.len()
                ),
            ));
        }
        Ok(g.into_iter().collect())
    }
}
