//! The bindings of `crate::nn` the Python package's layers and optimizers call
//! (private: `gt.optimizers` and `gt.layers.Dense` wrap them).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::convert::to_tensor;
use super::entry::heavy;
use super::graph::call_n;
use super::tensor::PyTensor;
use super::variable::PyVariable;
use crate::dtype::DType;
use crate::nn::layers::{dense, Activation, Draw};
use crate::nn::optimizers::{apply_update_with, Rule};

/// A rule from its Python form: `(kind, [hyperparameters])`.
fn rule(kind: &str, p: &[f64]) -> PyResult<Rule> {
    let get = |i: usize| -> PyResult<f64> {
        p.get(i).copied().ok_or_else(|| {
            PyValueError::new_err(format!(
                "optimizer rule {kind:?}: too few hyperparameters ({p:?})"
            ))
        })
    };
    Ok(match kind {
        "sgd" => Rule::Sgd {
            momentum: get(0)?,
            nesterov: get(1)? != 0.0,
        },
        "adam" => Rule::Adam {
            beta_1: get(0)?,
            beta_2: get(1)?,
            epsilon: get(2)?,
            amsgrad: get(3)? != 0.0,
        },
        "rmsprop" => Rule::RmsProp {
            rho: get(0)?,
            momentum: get(1)?,
            epsilon: get(2)?,
            centered: get(3)? != 0.0,
        },
        "adagrad" => Rule::Adagrad {
            initial_accumulator_value: get(0)?,
            epsilon: get(1)?,
        },
        "nadam" => Rule::Nadam {
            beta_1: get(0)?,
            beta_2: get(1)?,
            epsilon: get(2)?,
        },
        "adamax" => Rule::Adamax {
            beta_1: get(0)?,
            beta_2: get(1)?,
            epsilon: get(2)?,
        },
        "adadelta" => Rule::Adadelta {
            rho: get(0)?,
            epsilon: get(1)?,
        },
        "ftrl" => Rule::Ftrl {
            learning_rate_power: get(0)?,
            initial_accumulator_value: get(1)?,
            l1: get(2)?,
            l2: get(3)?,
            l2_shrinkage: get(4)?,
            beta: get(5)?,
        },
        "lion" => Rule::Lion {
            beta_1: get(0)?,
            beta_2: get(1)?,
        },
        _ => {
            return Err(PyValueError::new_err(format!(
                "unknown optimizer rule {kind:?}"
            )))
        }
    })
}

/// `[(slot name, initial value), ...]` of a rule, in `_optimizer_update`'s order.
#[pyfunction]
fn _optimizer_slots(kind: &str, params: Vec<f64>) -> PyResult<Vec<(&'static str, f64)>> {
    let r = rule(kind, &params)?;
    Ok(r.slot_names()
        .into_iter()
        .map(|n| (n, r.slot_initial(n)))
        .collect())
}

/// One fused optimizer step of `var` (see `gradtape::nn::optimizers::apply_update`);
/// `learning_rate` and `step` are numbers, or scalar tensors inside a `gt.function`.
#[pyfunction]
#[pyo3(signature = (kind, params, var, grad, slots, learning_rate, step, weight_decay=None, grad_squared=None))]
#[allow(clippy::too_many_arguments)]
fn _optimizer_update(
    py: Python<'_>,
    kind: &str,
    params: Vec<f64>,
    var: PyRef<'_, PyVariable>,
    grad: &Bound<'_, PyAny>,
    slots: Vec<PyRef<'_, PyVariable>>,
    learning_rate: &Bound<'_, PyAny>,
    step: &Bound<'_, PyAny>,
    weight_decay: Option<f64>,
    grad_squared: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let r = rule(kind, &params)?;
    let v = var.v.clone();
    let g = to_tensor(grad, Some(v.dtype()))?;
    let sq = grad_squared
        .map(|s| to_tensor(s, Some(v.dtype())))
        .transpose()?;
    let lr = to_tensor(learning_rate, Some(DType::F64))?;
    let t = to_tensor(step, Some(DType::F64))?;
    let slot_vars: Vec<crate::Variable> = slots.iter().map(|s| s.v.clone()).collect();
    heavy(py, g.size(), move || {
        let refs: Vec<&crate::Variable> = slot_vars.iter().collect();
        apply_update_with(&r, &v, &g, &refs, &lr, &t, weight_decay, sq.as_ref())
    })
}

/// `activation(x @ kernel + bias)`: the forward pass of `gt.layers.Dense`.
#[pyfunction]
#[pyo3(signature = (x, kernel, bias, activation))]
fn _dense(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    kernel: &Bound<'_, PyAny>,
    bias: Option<&Bound<'_, PyAny>>,
    activation: &str,
) -> PyResult<PyTensor> {
    let act = Activation::from_name(activation)
        .ok_or_else(|| PyValueError::new_err(format!("unknown Dense activation {activation:?}")))?;
    let k = to_tensor(kernel, None)?;
    let x = to_tensor(x, Some(k.dtype()))?;
    let mut xs = vec![x, k];
    if let Some(b) = bias {
        let b = to_tensor(b, Some(xs[1].dtype()))?;
        xs.push(b);
    }
    // One node in a trace, as the other multi-op bindings.
    let y = call_n(
        py,
        "Dense",
        || act.name().to_string(),
        &xs,
        move |a| dense(&a[0], &a[1], a.get(2), act),
    )?;
    Ok(y.into())
}

/// Keras' `VarianceScaling(scale, mode, distribution)` for `shape` as `(sampler, a,
/// b)`: the `gt.random` function to call (`"uniform"`, `"truncated_normal"`,
/// `"normal"`) and its two numbers (see `gradtape::nn::layers::Draw`). The Python
/// initializers (`GlorotUniform`, `HeNormal`, ...) draw from it.
#[pyfunction]
fn _variance_scaling(
    shape: &Bound<'_, PyAny>,
    scale: f64,
    mode: &str,
    distribution: &str,
) -> PyResult<(&'static str, f64, f64)> {
    let dims = super::args::dims_arg(shape)?;
    Ok(
        match Draw::variance_scaling(&dims, scale, mode, distribution)? {
            Draw::Uniform(a, b) => ("uniform", a, b),
            Draw::TruncatedNormal(a, b) => ("truncated_normal", a, b),
            Draw::Normal(a, b) => ("normal", a, b),
        },
    )
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_optimizer_slots, m)?)?;
    m.add_function(wrap_pyfunction!(_optimizer_update, m)?)?;
    m.add_function(wrap_pyfunction!(_dense, m)?)?;
    m.add_function(wrap_pyfunction!(_variance_scaling, m)?)?;
    Ok(())
}
