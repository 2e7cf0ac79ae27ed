//! Native half of `gt.saved_model`: encoding traced graphs, custom gradients traced for
//! saving, and reading SavedModel directories (see `crate::saved_model`).

use std::sync::Arc;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyList;

use super::convert::as_tensor;
use super::entry::guarded;
use super::graph::{specs_of, PyGraph, SpecArg};
use super::tensor::PyTensor;
use super::variable::PyVariable;
use crate::error::Error;
use crate::graph;
use crate::saved_model::{self, Encoder, SavedGradient};
use crate::tensor::Tensor;
use crate::variable::Variable;

fn tensors(obs: &[Bound<'_, PyAny>], what: &str) -> PyResult<Vec<Tensor>> {
    obs.iter()
        .map(|a| as_tensor(a).ok_or_else(|| PyTypeError::new_err(format!("{what} are tensors"))))
        .collect()
}

fn variables(obs: &[Bound<'_, PyAny>]) -> PyResult<Vec<Variable>> {
    obs.iter()
        .map(|v| Ok(v.cast::<PyVariable>()?.get().v.clone()))
        .collect()
}

/// Traces `func(list_of_inputs) -> list_of_tensors` as a subgraph of the current trace:
/// its arguments take `specs` (dtype, shape or None); values of the enclosing trace it
/// reads become extra inputs. Returns `(graph, captured tensors)`.
#[pyfunction]
fn _trace_subgraph(
    py: Python<'_>,
    func: Bound<'_, PyAny>,
    inputs: Vec<Bound<'_, PyAny>>,
    specs: Vec<SpecArg<'_>>,
) -> PyResult<(PyGraph, Vec<PyTensor>)> {
    let inputs = tensors(&inputs, "subgraph inputs")?;
    let specs = specs_of(&specs)?;
    if !graph::is_tracing() {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(
            "_trace_subgraph runs inside a trace",
        ));
    }
    let (traced, outer) = graph::trace_subgraph(&inputs, |xs| {
        let args =
            PyList::new(py, xs.iter().map(|t| PyTensor::from(t.clone()))).map_err(Error::Python)?;
        let out = func.call1((args,)).map_err(Error::Python)?;
        let list = out.cast::<PyList>().map_err(|_| {
            Error::Type("the gradient function must return a list of tensors".into())
        })?;
        list.iter()
            .map(|x| {
                as_tensor(&x).ok_or_else(|| {
                    Error::Type("the gradient function returned a non-tensor".into())
                })
            })
            .collect()
    })?;
    let mut g = traced.graph;
    for (s, spec) in g.inputs.iter_mut().zip(&specs) {
        *s = spec.clone();
    }
    Ok((
        PyGraph { g: Arc::new(g) },
        outer.into_iter().map(PyTensor::from).collect(),
    ))
}

/// Records a custom-gradient node traced for saving (see
/// `saved_model::record_saved_custom_gradient`); `gradient` is None when saved without
/// custom gradients.
/// `live`: a node of a gt.function's trace, not of a trace for saving (see
/// `saved_model::record_traced_custom_gradient`).
#[pyfunction]
#[pyo3(signature = (inputs, outputs, captured, vars, gradient, live = false))]
fn _record_saved_custom(
    inputs: Vec<Bound<'_, PyAny>>,
    outputs: Vec<Bound<'_, PyAny>>,
    captured: Vec<Bound<'_, PyAny>>,
    vars: Vec<Bound<'_, PyAny>>,
    gradient: Option<Bound<'_, PyGraph>>,
    live: bool,
) -> PyResult<Vec<PyTensor>> {
    let xs = tensors(&inputs, "inputs")?;
    let ys = tensors(&outputs, "outputs")?;
    let cs = tensors(&captured, "captured values")?;
    let saved = SavedGradient {
        gradient: gradient.map(|g| g.get().g.clone()),
        n_inputs: xs.len(),
        n_outputs: ys.len(),
        n_captured: cs.len(),
        variables: variables(&vars)?,
    };
    let outs = guarded(|| {
        if live {
            saved_model::record_traced_custom_gradient(&xs, &ys, &cs, saved)
        } else {
            saved_model::record_saved_custom_gradient(&xs, &ys, &cs, saved)
        }
    })?;
    Ok(outs.into_iter().map(PyTensor::from).collect())
}

/// `(graph JSON texts, constants)` of `graphs`, whose variable reads name indices into
/// `variables`.
#[pyfunction]
fn _encode_graphs(
    graphs: Vec<Bound<'_, PyGraph>>,
    vars: Vec<Bound<'_, PyAny>>,
) -> PyResult<(Vec<String>, Vec<PyTensor>)> {
    let vars = variables(&vars)?;
    let index = |v: &Variable| vars.iter().position(|w| w.id() == v.id());
    let id_index = |id: u64| vars.iter().position(|w| w.id() == id);
    let mut enc = Encoder {
        variable_index: &index,
        variable_id_index: &id_index,
        constants: Vec::new(),
    };
    let mut out = Vec::with_capacity(graphs.len());
    for g in &graphs {
        let def = guarded(|| enc.encode(&g.get().g))?;
        out.push(serde_json::to_string(&def).map_err(|e| Error::Internal(e.to_string()))?);
    }
    Ok((out, enc.constants.into_iter().map(PyTensor::from).collect()))
}

/// Forgets the custom gradients recorded while saving.
#[pyfunction]
fn _forget_saved_gradients() {
    saved_model::forget_saved_gradients();
}

/// Reads and checks the SavedModel in `path`: `(structure JSON text, variable values,
/// constants)`.
#[pyfunction]
fn _saved_model_read(
    py: Python<'_>,
    path: std::path::PathBuf,
) -> PyResult<(String, Vec<PyTensor>, Vec<PyTensor>)> {
    let parts = super::entry::detached(py, || saved_model::read(&path))?;
    let text = serde_json::to_string(&parts.def).map_err(|e| Error::Internal(e.to_string()))?;
    Ok((
        text,
        parts.values.into_iter().map(PyTensor::from).collect(),
        parts.constants.into_iter().map(PyTensor::from).collect(),
    ))
}

/// The functions of a structure `_saved_model_read` returned, built over `variables`
/// (one `gt.Variable` per declared variable).
#[pyfunction]
fn _saved_model_build(
    structure: &str,
    constants: Vec<Bound<'_, PyAny>>,
    vars: Vec<Bound<'_, PyAny>>,
) -> PyResult<Vec<PyGraph>> {
    let def = saved_model::parse(structure.as_bytes())?;
    let consts = tensors(&constants, "constants")?;
    let vars = variables(&vars)?;
    let model = guarded(|| saved_model::build(def, consts, vars))?;
    Ok(model
        .functions()
        .iter()
        .map(|f| PyGraph {
            g: f.graph().clone(),
        })
        .collect())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_trace_subgraph, m)?)?;
    m.add_function(wrap_pyfunction!(_record_saved_custom, m)?)?;
    m.add_function(wrap_pyfunction!(_encode_graphs, m)?)?;
    m.add_function(wrap_pyfunction!(_forget_saved_gradients, m)?)?;
    m.add_function(wrap_pyfunction!(_saved_model_read, m)?)?;
    m.add_function(wrap_pyfunction!(_saved_model_build, m)?)?;
    Ok(())
}
