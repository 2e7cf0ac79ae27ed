//! `gt.function`'s native side: tracing Python into a [`Graph`], running it with the GIL
//! released, and the one helper every op binding calls so that tracing sees the op.
//!
//! A binding computes its op through [`call`] (or [`call_n`], [`call_multi`]): eagerly
//! it is the op itself, run as [`heavy`] runs it; while this thread traces, the call is
//! also recorded as a graph node, its closure owning the op's non-tensor arguments.

use std::sync::Arc;

use pyo3::exceptions::{PyAttributeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;

use super::convert::{as_tensor, to_dtype};
use super::entry::guarded;
use super::heavy;
use super::tensor::PyTensor;
use super::variable::PyVariable;
use crate::error::{Error, Result};
use crate::graph::{self, Elementwise, Graph, Spec};
use crate::tensor::Tensor;

/// `f(x)` for a binding: eager, or recorded as node `name` (with `key()` the text of the
/// non-tensor arguments `f` owns) while tracing.
#[inline]
pub(crate) fn call<F>(
    py: Python<'_>,
    name: &str,
    key: impl FnOnce() -> String,
    x: &Tensor,
    f: F,
) -> PyResult<Tensor>
where
    F: Fn(&Tensor) -> Result<Tensor> + Send + Sync + 'static,
{
    if !graph::is_tracing() {
        return heavy(py, x.size(), || f(x));
    }
    let k = key();
    Ok(
        guarded(|| graph::apply(name, Some(k), None, &[x], move |a| Ok(vec![f(&a[0])?])))?
            .remove(0),
    )
}

/// `f(x, y)` for a binding, as [`call`].
#[inline]
pub(crate) fn call2<F>(
    py: Python<'_>,
    name: &str,
    key: impl FnOnce() -> String,
    x: &Tensor,
    y: &Tensor,
    f: F,
) -> PyResult<Tensor>
where
    F: Fn(&Tensor, &Tensor) -> Result<Tensor> + Send + Sync + 'static,
{
    if !graph::is_tracing() {
        return heavy(py, x.size().max(y.size()), || f(x, y));
    }
    let k = key();
    Ok(guarded(|| {
        graph::apply(name, Some(k), None, &[x, y], move |a| {
            Ok(vec![f(&a[0], &a[1])?])
        })
    })?
    .remove(0))
}

/// `f(xs)` for a binding taking any number of tensors, as [`call`].
pub(crate) fn call_n<F>(
    py: Python<'_>,
    name: &str,
    key: impl FnOnce() -> String,
    xs: &[Tensor],
    f: F,
) -> PyResult<Tensor>
where
    F: Fn(&[Tensor]) -> Result<Tensor> + Send + Sync + 'static,
{
    Ok(call_multi(py, name, key, xs, move |a| Ok(vec![f(a)?]))?.remove(0))
}

/// `f(xs)` for a binding with several outputs, as [`call`].
pub(crate) fn call_multi<F>(
    py: Python<'_>,
    name: &str,
    key: impl FnOnce() -> String,
    xs: &[Tensor],
    f: F,
) -> PyResult<Vec<Tensor>>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>> + Send + Sync + 'static,
{
    if !graph::is_tracing() {
        let n = xs.iter().map(|t| t.size()).max().unwrap_or(0);
        return heavy(py, n, || f(xs));
    }
    let k = key();
    let refs: Vec<&Tensor> = xs.iter().collect();
    Ok(guarded(|| graph::apply(name, Some(k), None, &refs, f))?)
}

/// A call with an effect or fresh randomness (`gt.random.*`): run on every call of a
/// graph, never merged or folded; `key()` is the text of its non-tensor arguments (what a
/// SavedModel stores).
pub(crate) fn call_stateful_keyed<F>(
    py: Python<'_>,
    name: &str,
    key: impl FnOnce() -> String,
    xs: &[Tensor],
    f: F,
) -> PyResult<Vec<Tensor>>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>> + Send + Sync + 'static,
{
    if !graph::is_tracing() {
        let n = xs.iter().map(|t| t.size()).max().unwrap_or(0);
        return heavy(py, n, || f(xs));
    }
    let refs: Vec<&Tensor> = xs.iter().collect();
    let k = key();
    Ok(guarded(|| graph::apply_stateful_keyed(name, k, &refs, f))?)
}

/// An elementwise unary op (fusable).
#[inline]
pub(crate) fn unary(
    py: Python<'_>,
    x: &Tensor,
    f: fn(&Tensor) -> Result<Tensor>,
) -> PyResult<Tensor> {
    if !graph::is_tracing() {
        return heavy(py, x.size(), || f(x));
    }
    let key = format!("{:p}", f as *const ());
    Ok(guarded(|| {
        graph::apply(
            "Unary",
            Some(key),
            Some(Elementwise::Unary(f)),
            &[x],
            move |a| Ok(vec![f(&a[0])?]),
        )
    })?
    .remove(0))
}

/// An elementwise binary op with broadcasting (fusable).
#[inline]
pub(crate) fn binary(
    py: Python<'_>,
    x: &Tensor,
    y: &Tensor,
    f: fn(&Tensor, &Tensor) -> Result<Tensor>,
) -> PyResult<Tensor> {
    if !graph::is_tracing() {
        return heavy(py, x.size().max(y.size()), || f(x, y));
    }
    let key = format!("{:p}", f as *const ());
    Ok(guarded(|| {
        graph::apply(
            "Binary",
            Some(key),
            Some(Elementwise::Binary(f)),
            &[x, y],
            move |a| Ok(vec![f(&a[0], &a[1])?]),
        )
    })?
    .remove(0))
}

/// The error for a symbolic tensor used where a Python value is needed.
pub(crate) fn check_concrete(t: &Tensor, what: &str) -> PyResult<()> {
    if graph::is_tracing() && graph::lookup(t) {
        let msg = match what {
            "bool" => "Using a symbolic `gt.Tensor` as a Python `bool` is not allowed in a \
                       gt.function: use gt.cond or gt.while_loop for control flow on a tensor \
                       (with autograph=True, gt.function converts `if`, `while` and `for` \
                       statements on tensors to them)"
                .to_string(),
            "iterator" => "Iterating over a symbolic `gt.Tensor` is not allowed in a gt.function: \
                           use gt.while_loop or gt.map_fn (with autograph=True, gt.function \
                           converts `for` statements over tensors to a gt.while_loop)"
                .to_string(),
            _ => format!(
                "a symbolic `gt.Tensor` has no concrete value while gt.function traces (it \
                 was used as a Python {what}); compute with gt ops instead, or use \
                 gt.cond / gt.while_loop for control flow"
            ),
        };
        return Err(match what {
            "numpy" => PyAttributeError::new_err(msg),
            "bool" | "iterator" => super::errors::OperatorNotAllowedInGraphError::new_err(msg),
            _ => PyTypeError::new_err(msg),
        });
    }
    Ok(())
}

/// A variable the trace saw and the one a call uses instead.
type VariablePair<'py> = (Bound<'py, PyVariable>, Bound<'py, PyVariable>);

/// A traced graph, run with the GIL released.
#[pyclass(frozen, name = "_Graph", module = "gradtape")]
pub(crate) struct PyGraph {
    pub(crate) g: Arc<Graph>,
}

#[pymethods]
impl PyGraph {
    /// Runs the graph on `args` (tensors matching the specs); returns the outputs.
    /// `variables`: `(traced, actual)` pairs for variables the function takes as
    /// arguments (this call reads and assigns `actual` where the trace saw `traced`).
    #[pyo3(signature = (args, variables=None))]
    fn run(
        &self,
        py: Python<'_>,
        args: Vec<Bound<'_, PyAny>>,
        variables: Option<Vec<VariablePair<'_>>>,
    ) -> PyResult<Vec<PyTensor>> {
        let args: Vec<Tensor> = args
            .iter()
            .map(|a| {
                a.cast::<PyTensor>()
                    .map(|t| t.get().t.clone())
                    .map_err(|_| PyTypeError::new_err("graph arguments are tensors"))
            })
            .collect::<PyResult<_>>()?;
        let subs: Vec<_> = variables
            .unwrap_or_default()
            .iter()
            .map(|(t, a)| (t.get().v.clone(), a.get().v.clone()))
            .collect();
        let g = self.g.clone();
        let run = move || {
            if subs.is_empty() {
                g.run(&args)
            } else {
                g.run_with_variables(&args, subs)
            }
        };
        let outs = if graph::is_tracing() {
            guarded(run)?
        } else {
            super::interruptible(py, run)?
        };
        Ok(outs.into_iter().map(PyTensor::from).collect())
    }
    /// The optimized graph (dead code removed, constants folded, repeats merged).
    fn optimize(&self) -> PyResult<PyGraph> {
        Ok(PyGraph {
            g: Arc::new(guarded(|| self.g.optimize())?),
        })
    }
    /// `[(op name, count)]` of the nodes.
    fn op_counts(&self) -> Vec<(String, usize)> {
        self.g.op_counts()
    }
    /// Whether the traced code read a static shape of a traced value.
    #[getter]
    fn shape_dependent(&self) -> bool {
        self.g.shape_dependent()
    }
    #[getter]
    fn num_nodes(&self) -> usize {
        self.g.nodes().len()
    }
}

/// One signature of a [`PyFastCalls`] table: each argument's dtype and shape.
struct FastEntry {
    sig: Vec<(crate::dtype::DType, Vec<usize>)>,
    g: Arc<Graph>,
}

/// A `gt.function`'s calls with positional tensor arguments only, by exact dtypes and
/// shapes, to traces returning one tensor: the whole call (lookup, checks, the run with
/// the GIL released, the result) in one native call, so a thread holds the GIL for as
/// little as possible per call (two Python threads calling traced steps overlap).
#[pyclass(frozen, name = "_FastCalls", module = "gradtape")]
pub(crate) struct PyFastCalls {
    entries: std::sync::Mutex<Vec<FastEntry>>,
}

#[pymethods]
impl PyFastCalls {
    #[new]
    fn new() -> Self {
        PyFastCalls {
            entries: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Calls with tensors of `args`' dtypes and shapes run `graph` (whose one output is
    /// the call's result).
    fn add(&self, args: Vec<PyRef<'_, PyTensor>>, graph: PyRef<'_, PyGraph>) {
        let sig = args
            .iter()
            .map(|t| (t.t.dtype(), t.t.shape().to_vec()))
            .collect();
        let mut e = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        e.push(FastEntry {
            sig,
            g: graph.g.clone(),
        });
    }

    /// The call's result, or `None` when the table has no entry for `args` (not all
    /// tensors, an unseen signature, or a trace in progress): the caller goes the long way.
    fn call(
        &self,
        py: Python<'_>,
        args: &Bound<'_, pyo3::types::PyTuple>,
    ) -> PyResult<Option<PyTensor>> {
        if graph::is_tracing() {
            return Ok(None);
        }
        let mut tensors: Vec<Tensor> = Vec::with_capacity(args.len());
        for a in args.iter() {
            match a.cast_exact::<PyTensor>() {
                Ok(t) => tensors.push(t.get().t.clone()),
                Err(_) => return Ok(None),
            }
        }
        let g = {
            let e = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            let hit = e.iter().find(|f| {
                f.sig.len() == tensors.len()
                    && f.sig
                        .iter()
                        .zip(&tensors)
                        .all(|((d, s), t)| *d == t.dtype() && s.as_slice() == t.shape())
            });
            match hit {
                Some(f) => f.g.clone(),
                None => return Ok(None),
            }
        };
        let mut outs = super::interruptible(py, move || g.run(&tensors))?;
        Ok(Some(PyTensor::from(outs.swap_remove(0))))
    }

    fn __len__(&self) -> usize {
        self.entries.lock().map(|e| e.len()).unwrap_or(0)
    }
}

/// A Python error raised inside a traced callback, carried through the engine.
fn py_err(e: PyErr) -> Error {
    Error::Python(e)
}

fn tensors_of(ob: &Bound<'_, PyAny>, what: &str) -> Result<Vec<Tensor>> {
    let list = ob
        .cast::<PyList>()
        .map_err(|_| Error::Type(format!("{what} must return a list of tensors")))?;
    list.iter()
        .map(|x| {
            as_tensor(&x).ok_or_else(|| {
                Error::Type(format!(
                    "{what} returned a {} where a tensor was expected",
                    x.get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
                ))
            })
        })
        .collect()
}

fn py_tensors<'py>(py: Python<'py>, ts: &[Tensor]) -> PyResult<Bound<'py, PyList>> {
    PyList::new(py, ts.iter().map(|t| PyTensor::from(t.clone())))
}

/// `(dtype, shape or None)` of a traced argument from Python, shape dims `None` where
/// unknown (`None` for the shape: unknown rank).
pub(crate) type SpecArg<'py> = (Bound<'py, PyAny>, Option<Vec<Option<usize>>>);

/// The engine's specs of Python input specs.
pub(crate) fn specs_of(specs: &[SpecArg<'_>]) -> PyResult<Vec<Spec>> {
    specs
        .iter()
        .map(|(d, s)| {
            Ok(Spec {
                dtype: to_dtype(d)?,
                shape: s.clone(),
            })
        })
        .collect()
}

/// Traces `fn(list_of_inputs) -> list_of_tensors` on example `inputs`; `specs` are
/// `(dtype, shape or None)` with `None` dims. Returns `(graph, outputs)`.
#[pyfunction]
fn _trace(
    py: Python<'_>,
    func: Bound<'_, PyAny>,
    inputs: Vec<Bound<'_, PyAny>>,
    specs: Vec<SpecArg<'_>>,
) -> PyResult<(PyGraph, Vec<PyTensor>)> {
    let inputs: Vec<Tensor> = inputs
        .iter()
        .map(|a| as_tensor(a).ok_or_else(|| PyTypeError::new_err("trace inputs are tensors")))
        .collect::<PyResult<_>>()?;
    let specs = specs_of(&specs)?;
    let traced = graph::trace(&inputs, specs, |xs| {
        let args = py_tensors(py, xs).map_err(py_err)?;
        let out = func.call1((args,)).map_err(py_err)?;
        tensors_of(&out, "the traced function")
    })?;
    let outs = traced.outputs.into_iter().map(PyTensor::from).collect();
    Ok((
        PyGraph {
            g: Arc::new(traced.graph),
        },
        outs,
    ))
}

/// Traced `cond`: `then_fn()` / `else_fn()` return lists of tensors.
#[pyfunction]
fn _cond(
    py: Python<'_>,
    pred: Bound<'_, PyAny>,
    then_fn: Bound<'_, PyAny>,
    else_fn: Bound<'_, PyAny>,
) -> PyResult<Vec<PyTensor>> {
    let pred =
        as_tensor(&pred).ok_or_else(|| PyTypeError::new_err("the predicate must be a tensor"))?;
    let branch = |f: &Bound<'_, PyAny>, what: &str| -> Result<Vec<Tensor>> {
        let out = f.call0().map_err(py_err)?;
        tensors_of(&out, what)
    };
    let _ = py;
    let outs = Graph::cond(
        &pred,
        || branch(&then_fn, "true_fn"),
        || branch(&else_fn, "false_fn"),
    )?;
    Ok(outs.into_iter().map(PyTensor::from).collect())
}

/// Traced `while_loop` over a flat list of loop variables.
#[pyfunction]
fn _while_loop(
    py: Python<'_>,
    cond_fn: Bound<'_, PyAny>,
    body_fn: Bound<'_, PyAny>,
    vars: Vec<Bound<'_, PyAny>>,
) -> PyResult<Vec<PyTensor>> {
    let vars: Vec<Tensor> = vars
        .iter()
        .map(|a| as_tensor(a).ok_or_else(|| PyTypeError::new_err("loop variables are tensors")))
        .collect::<PyResult<_>>()?;
    let outs = Graph::while_loop(
        vars,
        |v| {
            let out = cond_fn
                .call1((py_tensors(py, v).map_err(py_err)?,))
                .map_err(py_err)?;
            as_tensor(&out).ok_or_else(|| Error::Type("cond must return a tensor".into()))
        },
        |v| {
            let out = body_fn
                .call1((py_tensors(py, v).map_err(py_err)?,))
                .map_err(py_err)?;
            tensors_of(&out, "body")
        },
    )?;
    Ok(outs.into_iter().map(PyTensor::from).collect())
}

/// Records `callback(list_of_tensors)` to run (with the GIL) at every call of the graph
/// being traced, not now: `gt.print` inside a `gt.function`. `spec`: the print's JSON
/// description (`saved_model::table::PrintSpec`), which makes it saveable.
#[pyfunction]
#[pyo3(signature = (callback, inputs, spec=None))]
fn _effect(
    callback: Py<PyAny>,
    inputs: Vec<Bound<'_, PyAny>>,
    spec: Option<String>,
) -> PyResult<()> {
    let inputs: Vec<Tensor> = inputs
        .iter()
        .map(|a| as_tensor(a).ok_or_else(|| PyTypeError::new_err("effect inputs are tensors")))
        .collect::<PyResult<_>>()?;
    let refs: Vec<&Tensor> = inputs.iter().collect();
    let callback = Arc::new(callback);
    let f = move |xs: &[Tensor]| {
        Python::attach(|py| {
            let args = py_tensors(py, xs)?;
            callback.call1(py, (args,))?;
            Ok::<_, PyErr>(())
        })
        .map_err(py_err)?;
        Ok(Vec::new())
    };
    guarded(|| match spec {
        Some(k) => graph::record_effect_keyed("PrintV2", k, &refs, f),
        None => graph::record_effect("PrintV2", &refs, f),
    })?;
    Ok(())
}

/// Records a traced `gt.assert_*` (TF's `Assert` node): at every call of the graph,
/// `InvalidArgumentError` unless every element of `cond` holds, with `spec`'s message
/// and `data`'s values (`saved_model::table::AssertSpec`, JSON; saveable). Runs now
/// when nothing traces. No Python runs at call time.
#[pyfunction]
fn _assert(cond: &Bound<'_, PyAny>, data: Vec<Bound<'_, PyAny>>, spec: String) -> PyResult<()> {
    let parsed: crate::saved_model::table::AssertSpec = serde_json::from_str(&spec)
        .map_err(|e| PyValueError::new_err(format!("assert spec: {e}")))?;
    if parsed.names.len() != data.len() {
        return Err(PyValueError::new_err(
            "assert spec: one name per data tensor",
        ));
    }
    let mut inputs = vec![as_tensor(cond).ok_or_else(|| PyTypeError::new_err("cond is a tensor"))?];
    for d in &data {
        inputs.push(as_tensor(d).ok_or_else(|| PyTypeError::new_err("assert data are tensors"))?);
    }
    let refs: Vec<&Tensor> = inputs.iter().collect();
    let f = move |xs: &[Tensor]| {
        crate::saved_model::table::assert_check(&parsed, xs)?;
        Ok(Vec::new())
    };
    guarded(|| graph::record_effect_keyed("Assert", spec, &refs, f))?;
    Ok(())
}

/// `gt.py_function`: `callback(list_of_tensors)` returns a list of tensors; eagerly it
/// runs now; while tracing it also runs on every call of the graph (a stateful node).
#[pyfunction]
fn _py_call(callback: Py<PyAny>, inputs: Vec<Bound<'_, PyAny>>) -> PyResult<Vec<PyTensor>> {
    let inputs: Vec<Tensor> = inputs
        .iter()
        .map(|a| as_tensor(a).ok_or_else(|| PyTypeError::new_err("py_function inputs are tensors")))
        .collect::<PyResult<_>>()?;
    let refs: Vec<&Tensor> = inputs.iter().collect();
    let callback = Arc::new(callback);
    let outs = guarded(|| {
        graph::apply_stateful("EagerPyFunc", &refs, move |xs| {
            // The callback computes eagerly on the values (while tracing too: its
            // outputs come from the trace's example values, its ops are not recorded).
            graph::paused(|| {
                Python::attach(|py| {
                    let args = py_tensors(py, xs)?;
                    let out = callback.call1(py, (args,))?;
                    let mut tensors = Vec::new();
                    for item in out.bind(py).try_iter()? {
                        let item = item?;
                        tensors.push(as_tensor(&item).ok_or_else(|| {
                            PyTypeError::new_err("a py_function's callback returns tensors")
                        })?);
                    }
                    Ok::<_, PyErr>(tensors)
                })
            })
            .map_err(py_err)
        })
    })?;
    Ok(outs.into_iter().map(PyTensor::from).collect())
}

/// Turns tracing off on this thread (`gt.init_scope`); returns the state to resume.
#[pyfunction]
fn _suspend_tracing() -> bool {
    graph::suspend()
}

/// Puts back what `_suspend_tracing` returned.
#[pyfunction]
fn _resume_tracing(state: bool) {
    graph::resume(state)
}

/// Whether this thread is tracing a `gt.function`.
#[pyfunction]
fn _is_tracing() -> bool {
    graph::is_tracing()
}

/// Whether `t` is symbolic in the current trace (computed from the function's inputs).
#[pyfunction]
fn _is_symbolic(t: Bound<'_, PyAny>) -> bool {
    graph::is_tracing()
        && t.cast::<PyTensor>()
            .is_ok_and(|t| graph::lookup(&t.get().t))
}

/// `t.shape` as the traced code sees it (`None` for sizes that follow an input's unknown
/// dimensions), for the package's own code that can work with unknown sizes (a layer's
/// `build`); reading it does not make the trace depend on the example's sizes.
#[pyfunction]
fn _static_shape<'py>(py: Python<'py>, t: &Bound<'py, PyTensor>) -> PyResult<Bound<'py, PyAny>> {
    super::tensor::partial_shape_object(py, &t.get().t)
}

/// `_static_shape` for code that only reports the shape (a concrete function's
/// `output_shapes`): never makes the trace depend on the example's sizes; sizes the
/// trace cannot tell are `None`.
/// The variables the innermost trace has read or assigned so far (first use first).
#[pyfunction]
fn _traced_variables(py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
    graph::traced_variables()
        .iter()
        .map(|v| super::variable::PyVariable::object(py, v))
        .collect()
}

#[pyfunction]
fn _peek_static_shape<'py>(
    py: Python<'py>,
    t: &Bound<'py, PyTensor>,
) -> PyResult<Bound<'py, PyAny>> {
    super::tensor::peeked_shape_object(py, &t.get().t)
}

static PACKAGE_DIR: pyo3::sync::PyOnceLock<String> = pyo3::sync::PyOnceLock::new();

/// The user's `file:line` making the current call: the innermost Python frame outside
/// the gradtape package (the tracing hook; called only while tracing).
fn user_origin() -> Option<String> {
    Python::attach(|py| {
        let dir = PACKAGE_DIR
            .get_or_try_init(py, || -> PyResult<String> {
                let file: String = py.import("gradtape")?.getattr("__file__")?.extract()?;
                Ok(std::path::Path::new(&file)
                    .parent()
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_default())
            })
            .ok()?;
        let mut frame = py
            .import("sys")
            .ok()?
            .call_method1("_getframe", (0,))
            .ok()?;
        for _ in 0..64 {
            let code = frame.getattr("f_code").ok()?;
            let file: String = code.getattr("co_filename").ok()?.extract().ok()?;
            if !file.starts_with(dir.as_str()) {
                let line: u32 = frame.getattr("f_lineno").ok()?.extract().ok()?;
                return Some(format!("{file}:{line}"));
            }
            frame = frame.getattr("f_back").ok()?;
            if frame.is_none() {
                return None;
            }
        }
        None
    })
}

/// A loaded `gt.print` node prints through the package's own formatting (so the text is
/// the unsaved function's): `gradtape._function._print_saved(spec_json, tensors)`.
fn print_saved(spec: &crate::saved_model::table::PrintSpec, xs: &[Tensor]) -> Result<()> {
    let text = serde_json::to_string(spec).map_err(|e| Error::Internal(e.to_string()))?;
    Python::attach(|py| {
        let args = py_tensors(py, xs)?;
        py.import("gradtape._function")?
            .getattr("_print_saved")?
            .call1((text, args))?;
        Ok::<_, PyErr>(())
    })
    .map_err(py_err)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::graph::set_origin_hook(user_origin);
    crate::saved_model::table::set_print_hook(print_saved);
    m.add_class::<PyGraph>()?;
    m.add_class::<PyFastCalls>()?;
    m.add_function(wrap_pyfunction!(_trace, m)?)?;
    m.add_function(wrap_pyfunction!(_cond, m)?)?;
    m.add_function(wrap_pyfunction!(_while_loop, m)?)?;
    m.add_function(wrap_pyfunction!(_effect, m)?)?;
    m.add_function(wrap_pyfunction!(_assert, m)?)?;
    m.add_function(wrap_pyfunction!(_py_call, m)?)?;
    m.add_function(wrap_pyfunction!(_suspend_tracing, m)?)?;
    m.add_function(wrap_pyfunction!(_resume_tracing, m)?)?;
    m.add_function(wrap_pyfunction!(_is_tracing, m)?)?;
    m.add_function(wrap_pyfunction!(_is_symbolic, m)?)?;
    m.add_function(wrap_pyfunction!(_static_shape, m)?)?;
    m.add_function(wrap_pyfunction!(_peek_static_shape, m)?)?;
    m.add_function(wrap_pyfunction!(_traced_variables, m)?)?;
    Ok(())
}
