//! Python-defined gradients: a Python `grad_fn` becomes the rule of a tape node.
//! The backward pass runs without the GIL; the rule retakes it only for the call,
//! and a Python exception raised there crosses Rust unchanged (`Error::Python`).

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyList;

use super::convert::{as_tensor, to_tensor};
use super::tensor::PyTensor;
use super::variable::PyVariable;
use crate::custom::{record_custom, CustomGrads};
use crate::error::Error;
use crate::tape::stack;
use crate::tensor::Tensor;
use crate::variable::Variable;

/// Runs `f()`; returns `(result, trainable variables read)`. With `record` false no
/// tape records on this thread meanwhile (`recompute_grad`); with `record` true the
/// active tapes record the body, as TF eager does for a `custom_gradient` body.
#[pyfunction]
#[pyo3(signature = (f, record=false))]
fn _run_unrecorded(
    py: Python<'_>,
    f: Bound<'_, PyAny>,
    record: bool,
) -> PyResult<(Py<PyAny>, Vec<Py<PyAny>>)> {
    let (r, vars) = stack::collect_reads(|| {
        if record {
            f.call0()
        } else {
            stack::suspended(|| f.call0())
        }
    });
    let vars = vars
        .iter()
        .map(|v| PyVariable::object(py, v))
        .collect::<PyResult<_>>()?;
    Ok((r?.unbind(), vars))
}

fn grads_from(
    py: Python<'_>,
    ob: &Bound<'_, PyAny>,
    like: &[Tensor],
) -> PyResult<Vec<Option<Tensor>>> {
    let _ = py;
    let list = ob.cast::<PyList>()?;
    list.iter()
        .enumerate()
        .map(|(i, g)| {
            if g.is_none() {
                Ok(None)
            } else {
                let hint = like.get(i).map(|t| t.dtype());
                Ok(Some(match as_tensor(&g) {
                    Some(t) => t,
                    None => to_tensor(&g, hint)?,
                }))
            }
        })
        .collect()
}

/// Records `outputs` as one node over `inputs` + `variables` whose gradient is
/// `callback(dys) -> (input_grads: list, variable_grads: list)`.
#[pyfunction]
fn _record_custom(
    inputs: Vec<Bound<'_, PyAny>>,
    outputs: Vec<Bound<'_, PyAny>>,
    variables: Vec<Bound<'_, PyAny>>,
    callback: Py<PyAny>,
) -> PyResult<Vec<PyTensor>> {
    let xs: Vec<Tensor> = inputs
        .iter()
        .map(|x| to_tensor(x, None))
        .collect::<PyResult<_>>()?;
    let ys: Vec<Tensor> = outputs
        .iter()
        .map(|y| to_tensor(y, None))
        .collect::<PyResult<_>>()?;
    let vars: Vec<Variable> = variables
        .iter()
        .map(|v| Ok(v.cast::<PyVariable>()?.get().v.clone()))
        .collect::<PyResult<_>>()?;
    let callback = Arc::new(callback);
    let owned: crate::custom::Owned = callback.clone();
    let grad =
        move |xs: &[Tensor], dys: &[Tensor], vars: &[Variable]| -> crate::Result<CustomGrads> {
            Python::attach(|py| -> PyResult<CustomGrads> {
                let dy_list = PyList::new(py, dys.iter().map(|d| PyTensor::from(d.clone())))?;
                let r = callback.bind(py).call1((dy_list,))?;
                let (gi, gv): (Bound<'_, PyAny>, Bound<'_, PyAny>) = r.extract()?;
                let var_vals: Vec<Tensor> = vars.iter().map(|v| v.value_unrecorded()).collect();
                Ok((grads_from(py, &gi, xs)?, grads_from(py, &gv, &var_vals)?))
            })
            .map_err(Error::Python)
        };
    let grad: Arc<crate::custom::GradFn> = Arc::new(grad);
    if crate::graph::is_tracing() {
        // Inside a gt.function: the node is made on every call, for the tapes of that
        // call (the forward's ops are nodes of the graph already).
        let n = xs.len();
        let all: Vec<&Tensor> = xs.iter().chain(ys.iter()).collect();
        let outs = crate::graph::apply_stateful("CustomGradient", &all, move |a| {
            let x_refs: Vec<&Tensor> = a[..n].iter().collect();
            // Variables the call takes as arguments stand in for the traced ones.
            let vars = vars.iter().map(crate::graph::resolve).collect();
            // While tracing, forward accumulators take the node's JVP from `grad` now:
            // its ops give example values only (the node does it again on each run).
            crate::graph::scratch(|| {
                record_custom(
                    &x_refs,
                    a[n..].to_vec(),
                    vars,
                    grad.clone(),
                    Some(owned.clone()),
                )
            })
        })?;
        return Ok(outs.into_iter().map(PyTensor::from).collect());
    }
    let x_refs: Vec<&Tensor> = xs.iter().collect();
    let outs = record_custom(&x_refs, ys, vars, grad, Some(owned))?;
    Ok(outs.into_iter().map(PyTensor::from).collect())
}

/// Registers `f(op, *grads)` as the gradient function `name` (TF's
/// `RegisterGradient`). `op` has `.type`, `.inputs` and `.outputs`.
#[pyfunction]
fn _register_gradient(name: &str, f: Py<PyAny>) -> PyResult<()> {
    let f = Arc::new(f);
    crate::custom::register_gradient(name, move |info, dys| {
        Python::attach(|py| -> PyResult<Vec<Option<Tensor>>> {
            let ns = py.import("types")?.getattr("SimpleNamespace")?;
            let kw = pyo3::types::PyDict::new(py);
            kw.set_item("type", info.op_type)?;
            kw.set_item(
                "inputs",
                PyList::new(py, info.inputs.iter().map(|t| PyTensor::from(t.clone())))?,
            )?;
            kw.set_item(
                "outputs",
                PyList::new(py, info.outputs.iter().map(|t| PyTensor::from(t.clone())))?,
            )?;
            let op = ns.call((), Some(&kw))?;
            let mut args = vec![op];
            for d in dys {
                args.push(Bound::new(py, PyTensor::from(d.clone()))?.into_any());
            }
            let r = f.bind(py).call1(pyo3::types::PyTuple::new(py, args)?)?;
            let list = if r.is_instance_of::<PyList>() || r.is_instance_of::<pyo3::types::PyTuple>()
            {
                PyList::new(py, r.try_iter()?.collect::<PyResult<Vec<_>>>()?)?
            } else {
                PyList::new(py, [r])?
            };
            grads_from(py, list.as_any(), info.inputs)
        })
        .map_err(Error::Python)
    })?;
    Ok(())
}

/// A gradient override map in force on this thread until `close()`.
#[pyclass(unsendable, name = "_OverrideScope", module = "gradtape")]
struct PyOverrideScope {
    scope: Option<crate::custom::OverrideScope>,
}

#[pymethods]
impl PyOverrideScope {
    fn close(&mut self) {
        self.scope.take();
    }
}

#[pyfunction]
fn _override_scope(map: Vec<(String, String)>) -> PyResult<PyOverrideScope> {
    let pairs: Vec<(&str, &str)> = map.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    Ok(PyOverrideScope {
        scope: Some(crate::custom::gradient_override_map(&pairs)?),
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_run_unrecorded, m)?)?;
    m.add_function(wrap_pyfunction!(_record_custom, m)?)?;
    m.add_function(wrap_pyfunction!(_register_gradient, m)?)?;
    m.add_function(wrap_pyfunction!(_override_scope, m)?)?;
    m.add_class::<PyOverrideScope>()?;
    Ok(())
}
