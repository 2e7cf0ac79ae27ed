//! The native half of `gt.GradientTape`: the tape's state (persistent, used, active on
//! this thread, watched variables) and every check of the arguments. `gt.GradientTape`
//! (`_tape.py`) is a Python subclass of `_Tape` that adds only what belongs to Python:
//! nested structures of arguments and results, `stop_recording` as a generator context
//! manager, and the warning for a watched integer tensor.

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyString, PyTuple};
use pyo3::{PyTraverseError, PyVisit};

use super::tensor::PyTensor;
use super::variable::PyVariable;
use crate::graph::{self, flatten_grads, SourceRef, TapeSpec};
use crate::tape::{Grad, GradientTape, Source, UnconnectedGradients};
use crate::tensor::Tensor;
use crate::variable::Variable;

/// Subclassed by `gt.GradientTape`; holds no Python state of its own, so it is as
/// thread-safe as the engine's tape.
#[pyclass(frozen, subclass, weakref, name = "_Tape", module = "gradtape")]
pub struct PyTape {
    tape: GradientTape,
}

enum Src {
    T(Tensor),
    V(Variable),
}

impl Src {
    fn as_source(&self) -> Source<'_> {
        match self {
            Src::T(t) => Source::Tensor(t),
            Src::V(v) => Source::Variable(v),
        }
    }
}

/// The sources of a traced tape call as the node refers to them: a tensor becomes one
/// of the node's inputs (appended to `inputs`), a variable one of its variables.
fn source_refs(srcs: &[Src], inputs: &mut Vec<Tensor>, vars: &mut Vec<Variable>) -> Vec<SourceRef> {
    srcs.iter()
        .map(|s| match s {
            Src::T(t) => {
                inputs.push(t.clone());
                SourceRef::Input(inputs.len() - 1)
            }
            Src::V(v) => {
                vars.push(v.clone());
                SourceRef::Variable(vars.len() - 1)
            }
        })
        .collect()
}

/// Which results of a traced call were not `None`.
fn present(r: &[Option<Tensor>]) -> Vec<bool> {
    r.iter().map(Option::is_some).collect()
}

/// Records a tape use that gave `results` during the trace (nothing when not tracing):
/// the node's outputs are the results that were not `None`.
fn record(
    tape: &GradientTape,
    spec: TapeSpec,
    vars: &[Variable],
    inputs: &[Tensor],
    results: &[Option<Tensor>],
) -> PyResult<()> {
    if !graph::is_tracing() {
        return Ok(());
    }
    let outs: Vec<Tensor> = results.iter().flatten().cloned().collect();
    let refs: Vec<&Tensor> = inputs.iter().collect();
    graph::record_tape_use(tape, spec, vars, &refs, &outs)?;
    Ok(())
}

/// `gt.UnconnectedGradients.NONE` and `.ZERO` (a Python enum, as TF's), looked up once.
static UNCONNECTED_MEMBERS: PyOnceLock<(Py<PyAny>, Py<PyAny>)> = PyOnceLock::new();

/// TF's `unconnected_gradients` argument: a member of `gt.UnconnectedGradients` or its
/// value, `"none"` or `"zero"`.
fn unconnected(ob: &Bound<'_, PyAny>) -> PyResult<UnconnectedGradients> {
    let py = ob.py();
    let (none, zero) = UNCONNECTED_MEMBERS.get_or_try_init(py, || -> PyResult<_> {
        let cls = py
            .import("gradtape._tape")?
            .getattr("UnconnectedGradients")?;
        Ok((cls.getattr("NONE")?.unbind(), cls.getattr("ZERO")?.unbind()))
    })?;
    if ob.is(none) {
        return Ok(UnconnectedGradients::None);
    }
    if ob.is(zero) {
        return Ok(UnconnectedGradients::Zero);
    }
    if let Ok(s) = ob.cast::<PyString>() {
        match &*s.to_cow()? {
            "none" => return Ok(UnconnectedGradients::None),
            "zero" => return Ok(UnconnectedGradients::Zero),
            _ => {}
        }
    }
    Err(PyValueError::new_err(format!(
        "Unknown value for unconnected_gradients: {}",
        ob.repr()?
    )))
}

/// The target of `jacobian` or `batch_jacobian` (`op`): one tensor or variable.
fn jacobian_target(op: &str, ob: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    target(ob).map_err(|_| {
        PyTypeError::new_err(format!(
            "{op} target must be a single Tensor, got {}",
            ob.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })
}

fn source(ob: &Bound<'_, PyAny>) -> PyResult<Src> {
    if let Ok(t) = ob.cast::<PyTensor>() {
        return Ok(Src::T(t.get().t.clone()));
    }
    if let Ok(v) = ob.cast::<PyVariable>() {
        return Ok(Src::V(v.get().v.clone()));
    }
    Err(PyTypeError::new_err(format!(
        "gradient sources must be Tensors or Variables, got {}",
        ob.get_type().name()?
    )))
}

fn target(ob: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    match source(ob) {
        Ok(Src::T(t)) => Ok(t),
        Ok(Src::V(v)) => Ok(v.handle()),
        Err(_) => Err(PyTypeError::new_err(format!(
            "gradient target must be a Tensor or Variable, got {}",
            ob.get_type().name()?
        ))),
    }
}

/// The output gradients of `gradient`, each converted to its target's dtype (one the
/// targets lack is converted as given: the engine reports the count mismatch).
fn convert_output_gradients(
    og: Option<Vec<Option<Bound<'_, PyAny>>>>,
    targets: &[Tensor],
) -> PyResult<Option<Vec<Option<Tensor>>>> {
    let Some(og) = og else {
        return Ok(None);
    };
    og.iter()
        .enumerate()
        .map(|(i, g)| {
            g.as_ref()
                .map(|g| super::convert::to_tensor(g, targets.get(i).map(Tensor::dtype)))
                .transpose()
        })
        .collect::<PyResult<_>>()
        .map(Some)
}

#[pymethods]
impl PyTape {
    /// The garbage collector's view of the tape: the Python gradient functions its
    /// custom-gradient nodes hold. A `grad_fn` closure that refers to its own tape
    /// makes a cycle through the tape; without this the collector could not see it.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        let mut r = Ok(());
        self.tape.visit_owned(|owned| {
            // Held by the closure and by the node, both inside this tape's rule (see
            // `_record_custom`): the tape is the callback's only owner.
            if r.is_ok() && Arc::strong_count(owned) == 2 {
                if let Some(cb) = owned.downcast_ref::<Py<PyAny>>() {
                    r = visit.call(cb);
                }
            }
        });
        r
    }

    /// Breaks a cycle the collector found: the tape forgets its recording.
    fn __clear__(&self) {
        self.tape.reset();
    }

    /// TF's constructor: both arguments are taken for their truth value.
    #[new]
    #[pyo3(
        signature = (persistent=None, watch_accessed_variables=None),
        text_signature = "(persistent=False, watch_accessed_variables=True)"
    )]
    fn new(
        persistent: Option<&Bound<'_, PyAny>>,
        watch_accessed_variables: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let flag =
            |ob: Option<&Bound<'_, PyAny>>, default| ob.map_or(Ok(default), |b| b.is_truthy());
        Ok(PyTape {
            tape: GradientTape::with_options(
                flag(persistent, false)?,
                flag(watch_accessed_variables, true)?,
            ),
        })
    }

    /// Starts recording: the tape becomes active on this thread.
    fn __enter__(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
        let tape = &slf.get().tape;
        if tape.is_active() {
            // TF's `_push_tape` on a tape that is still recording.
            return Err(PyValueError::new_err(
                "Tape is still recording, This can happen if you try to re-enter an \
                 already-active tape.",
            ));
        }
        tape.start();
        let spec = TapeSpec::Start {
            persistent: tape.is_persistent(),
            watch_accessed_variables: tape.watches_accessed_variables(),
        };
        record(tape, spec, &[], &[], &[])?;
        Ok(slf)
    }

    /// Stops recording on this thread (nothing to do when `gradient` already did).
    fn __exit__(
        &self,
        _ty: &Bound<'_, PyAny>,
        _value: &Bound<'_, PyAny>,
        _traceback: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.tape.exit();
        record(&self.tape, TapeSpec::Exit, &[], &[], &[])?;
        Ok(())
    }

    /// Whether the tape can compute several gradients. TF equivalent:
    /// `tf.GradientTape` `persistent` argument.
    ///
    /// >>> gt.GradientTape(persistent=True).persistent
    /// True
    #[getter]
    fn persistent(&self) -> bool {
        self.tape.is_persistent()
    }

    /// The variables watched by this tape, in order of construction. TF equivalent:
    /// `tf.GradientTape.watched_variables`.
    ///
    /// >>> v = gt.Variable(1.0, name="w")
    /// >>> with gt.GradientTape() as t:
    /// ...     y = v * 2.0
    /// >>> [x.name for x in t.watched_variables()]
    /// ['w:0']
    fn watched_variables<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let vars = self
            .tape
            .watched_variables()
            .iter()
            .map(|v| PyVariable::object(py, v))
            .collect::<PyResult<Vec<_>>>()?;
        PyTuple::new(py, vars)
    }

    /// Clears everything recorded so far (like leaving the context and entering a new
    /// tape); a used non-persistent tape can compute gradients again. TF equivalent:
    /// `tf.GradientTape.reset`.
    ///
    /// >>> x = gt.constant(3.0)
    /// >>> with gt.GradientTape() as t:
    /// ...     t.watch(x)
    /// ...     y = x * x
    /// ...     t.reset()
    /// ...     t.watch(x)
    /// ...     z = x * 2.0
    /// >>> print(t.gradient(z, x))
    /// gt.Tensor(2.0, shape=(), dtype=float32)
    fn reset(&self) -> PyResult<()> {
        self.tape.reset();
        record(&self.tape, TapeSpec::Reset, &[], &[], &[])?;
        Ok(())
    }

    /// Watches each element (Tensor or Variable) of a flat list; returns the number of
    /// non-differentiable tensors among them (the caller warns).
    fn _watch(&self, xs: Vec<Bound<'_, PyAny>>) -> PyResult<usize> {
        let mut skipped = 0;
        for x in &xs {
            match source(x) {
                Ok(Src::T(t)) => {
                    skipped += usize::from(!t.dtype().is_differentiable());
                    self.tape.watch(&t);
                    let spec = TapeSpec::Watch {
                        source: SourceRef::Input(0),
                    };
                    record(&self.tape, spec, &[], std::slice::from_ref(&t), &[])?;
                }
                Ok(Src::V(v)) => {
                    skipped += usize::from(!v.dtype().is_differentiable());
                    self.tape.watch_variable(&v);
                    let spec = TapeSpec::Watch {
                        source: SourceRef::Variable(0),
                    };
                    record(&self.tape, spec, std::slice::from_ref(&v), &[], &[])?;
                }
                // TF's class and words (`ValueError`, the type's repr).
                Err(_) => {
                    return Err(PyValueError::new_err(format!(
                        "Passed in object of type {}, not gt.Tensor or gt.Variable",
                        x.get_type().repr()?
                    )))
                }
            }
        }
        Ok(skipped)
    }

    /// Pauses recording (`stop_recording`); returns the state for `_resume`.
    fn _pause(&self) -> PyResult<bool> {
        let was = self.tape.pause()?;
        record(&self.tape, TapeSpec::Pause, &[], &[], &[])?;
        Ok(was)
    }

    fn _resume(&self, was: bool) -> PyResult<()> {
        self.tape.resume(was);
        record(&self.tape, TapeSpec::Resume { was }, &[], &[], &[])?;
        Ok(())
    }

    /// What the tape holds (`explain`, `memory_info`, `to_dot`): a dict with `key`,
    /// `persistent`, `recording`, `used`, `active` (on this thread's stack),
    /// `watched` (ids) and `nodes`, each `(op, inputs, outputs, saved_inputs,
    /// saved_outputs)` with slots `(id, shape, dtype name)` and saved bytes or `None`.
    fn _snapshot<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let s = self.tape.snapshot();
        let d = pyo3::types::PyDict::new(py);
        d.set_item("key", s.key)?;
        d.set_item("persistent", s.persistent)?;
        d.set_item("recording", s.recording)?;
        d.set_item("used", s.used)?;
        d.set_item("active", self.tape.is_active())?;
        d.set_item(
            "watch_accessed_variables",
            self.tape.watches_accessed_variables(),
        )?;
        d.set_item("watched", s.watched)?;
        let slots = |v: &[crate::tape::SlotInfo]| -> Vec<(u64, Vec<usize>, &'static str)> {
            v.iter()
                .map(|x| (x.id, x.shape.clone(), x.dtype.name()))
                .collect()
        };
        let nodes = s
            .nodes
            .iter()
            .map(|n| {
                (
                    n.op,
                    slots(&n.inputs),
                    slots(&n.outputs),
                    n.saved_inputs.clone(),
                    n.saved_outputs.clone(),
                )
            })
            .collect::<Vec<_>>();
        d.set_item("nodes", nodes)?;
        Ok(d)
    }

    /// Whether the tape is recording on this thread (inside its `with` block).
    #[getter]
    fn _active(&self) -> bool {
        self.tape.is_active()
    }

    /// Recorded nodes (tests and memory accounting).
    #[getter]
    fn _num_nodes(&self) -> usize {
        self.tape.num_nodes()
    }

    /// Jacobian of one target for each of `sources` (a flat list).
    #[pyo3(signature = (target, sources, unconnected_gradients, parallel_iterations, experimental_use_pfor))]
    fn _jacobian(
        &self,
        py: Python<'_>,
        target: &Bound<'_, PyAny>,
        sources: Vec<Bound<'_, PyAny>>,
        unconnected_gradients: &Bound<'_, PyAny>,
        parallel_iterations: Option<usize>,
        experimental_use_pfor: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<Option<PyTensor>>> {
        self.tape.begin_use()?;
        let t = jacobian_target("jacobian", target)?;
        let srcs: Vec<Src> = sources.iter().map(source).collect::<PyResult<_>>()?;
        let unconnected = unconnected(unconnected_gradients)?;
        let use_pfor = experimental_use_pfor.is_truthy()?;
        let tape = &self.tape;
        let run = move |tape: &GradientTape, t: &Tensor, srcs: &[Src]| {
            let src: Vec<Source<'_>> = srcs.iter().map(Src::as_source).collect();
            tape.jacobian(t, &src, unconnected, parallel_iterations, use_pfor)
        };
        if graph::is_tracing() {
            let r = graph::scratch(|| run(tape, &t, &srcs))?;
            let (mut inputs, mut vars) = (vec![t.clone()], Vec::new());
            let spec = TapeSpec::Jacobian {
                sources: source_refs(&srcs, &mut inputs, &mut vars),
                zero_unconnected: unconnected == UnconnectedGradients::Zero,
                parallel_iterations,
                use_pfor,
                present: present(&r),
            };
            record(tape, spec, &vars, &inputs, &r)?;
            return Ok(r.into_iter().map(|g| g.map(PyTensor::from)).collect());
        }
        let r = crate::python::interruptible(py, || run(tape, &t, &srcs))?;
        Ok(r.into_iter().map(|g| g.map(PyTensor::from)).collect())
    }

    /// Per-example Jacobian of `target` with respect to `source`.
    #[pyo3(signature = (target, source, unconnected_gradients, parallel_iterations, experimental_use_pfor))]
    fn _batch_jacobian(
        &self,
        py: Python<'_>,
        target: &Bound<'_, PyAny>,
        source: &Bound<'_, PyAny>,
        unconnected_gradients: &Bound<'_, PyAny>,
        parallel_iterations: Option<usize>,
        experimental_use_pfor: &Bound<'_, PyAny>,
    ) -> PyResult<Option<PyTensor>> {
        self.tape.begin_use()?;
        let t = jacobian_target("batch_jacobian", target)?;
        let s = match self::source(source)? {
            Src::T(t) => t,
            Src::V(v) => v.handle(),
        };
        let unconnected = unconnected(unconnected_gradients)?;
        let use_pfor = experimental_use_pfor.is_truthy()?;
        let tape = &self.tape;
        let run = move |tape: &GradientTape, t: &Tensor, s: &Tensor| {
            tape.batch_jacobian(t, s, unconnected, parallel_iterations, use_pfor)
        };
        if graph::is_tracing() {
            let r = graph::scratch(|| run(tape, &t, &s))?;
            let spec = TapeSpec::BatchJacobian {
                zero_unconnected: unconnected == UnconnectedGradients::Zero,
                parallel_iterations,
                use_pfor,
                present: vec![r.is_some()],
            };
            record(tape, spec, &[], &[t, s], std::slice::from_ref(&r))?;
            return Ok(r.map(PyTensor::from));
        }
        let r = crate::python::interruptible(py, || run(tape, &t, &s))?;
        Ok(r.map(PyTensor::from))
    }

    /// Gradients of the sum of `targets` for each of `sources` (flat lists).
    /// With `sparse`, eagerly, a gradient that TF gives as `IndexedSlices` comes back
    /// as `(values, indices, dense_shape)`. With `ready`, `ready(i, g)` is called during
    /// the sweep as soon as the (dense) gradient `g` of `sources[i]` is final
    /// (gt.distributed starts reducing it then); an exception it raises stops the sweep
    /// and propagates.
    #[pyo3(signature = (targets, sources, output_gradients, unconnected_gradients, sparse=false, ready=None))]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments
    fn _gradient(
        &self,
        py: Python<'_>,
        targets: Vec<Bound<'_, PyAny>>,
        sources: Vec<Bound<'_, PyAny>>,
        output_gradients: Option<Vec<Option<Bound<'_, PyAny>>>>,
        unconnected_gradients: &Bound<'_, PyAny>,
        sparse: bool,
        ready: Option<Py<PyAny>>,
    ) -> PyResult<Vec<Option<Py<PyAny>>>> {
        // TF's order: a used tape first, then the arguments.
        self.tape.begin_use()?;
        let unconnected = unconnected(unconnected_gradients)?;
        let targets: Vec<Tensor> = targets.iter().map(target).collect::<PyResult<_>>()?;
        let srcs: Vec<Src> = sources.iter().map(source).collect::<PyResult<_>>()?;
        let og = convert_output_gradients(output_gradients, &targets)?;
        if ready.is_some() && graph::is_tracing() {
            return Err(PyRuntimeError::new_err(
                "gradient with a `ready` callback runs eagerly only, not in a gt.function",
            ));
        }
        let tape = &self.tape;
        let run = move |tape: &GradientTape,
                        targets: &[Tensor],
                        srcs: &[Src],
                        og: Option<&[Option<Tensor>]>| {
            let src: Vec<Source<'_>> = srcs.iter().map(Src::as_source).collect();
            tape.gradient(targets, &src, og, unconnected)
        };
        if graph::is_tracing() && sparse {
            return self.traced_sparse(py, targets, srcs, og, unconnected);
        }
        if graph::is_tracing() {
            // The gradient is one node of the trace, computed again on each run: its
            // work now (Python gradient functions included) gives example values only.
            let r = graph::scratch(|| run(tape, &targets, &srcs, og.as_deref()))?;
            let (spec, vars, inputs) =
                gradient_spec(&targets, &srcs, og.as_deref(), unconnected, None, &r);
            record(tape, spec, &vars, &inputs, &r)?;
            return tensors_to_py(py, r);
        }
        if sparse {
            let r = crate::python::interruptible(py, || {
                let src: Vec<Source<'_>> = srcs.iter().map(Src::as_source).collect();
                tape.gradient_sparse(&targets, &src, og.as_deref(), unconnected)
            })?;
            return r
                .into_iter()
                .map(|g| {
                    Ok(match g {
                        None => None,
                        Some(Grad::Dense(t)) => Some(Py::new(py, PyTensor::from(t))?.into_any()),
                        Some(Grad::Sparse(s)) => {
                            let parts = (
                                PyTensor::from(s.values),
                                PyTensor::from(s.indices),
                                s.dense_shape,
                            );
                            Some(parts.into_pyobject(py)?.into_any().unbind())
                        }
                    })
                })
                .collect();
        }
        if let Some(ready) = ready {
            let r = crate::python::interruptible(py, || {
                let src: Vec<Source<'_>> = srcs.iter().map(Src::as_source).collect();
                let mut hook = |i: usize, g: &Tensor| -> crate::Result<()> {
                    Python::attach(|py| {
                        ready
                            .bind(py)
                            .call1((i, PyTensor::from(g.clone())))
                            .map(|_| ())
                    })
                    .map_err(crate::error::Error::Python)
                };
                tape.gradient_with_ready(&targets, &src, og.as_deref(), unconnected, &mut hook)
            })?;
            return tensors_to_py(py, r);
        }
        let r = crate::python::interruptible(py, || run(tape, &targets, &srcs, og.as_deref()))?;
        tensors_to_py(py, r)
    }
}

impl PyTape {
    /// `_gradient(sparse=True)` inside a `gt.function`: the gradient traced as one node
    /// whose outputs are each gradient's tensors: a dense gradient's one, an
    /// `IndexedSlices`' values, indices and dense shape (an int32 tensor, computed
    /// when the graph runs). Each run must give the kinds the trace gave.
    fn traced_sparse(
        &self,
        py: Python<'_>,
        targets: Vec<Tensor>,
        srcs: Vec<Src>,
        og: Option<Vec<Option<Tensor>>>,
        unconnected: UnconnectedGradients,
    ) -> PyResult<Vec<Option<Py<PyAny>>>> {
        let tape = &self.tape;
        let src: Vec<Source<'_>> = srcs.iter().map(Src::as_source).collect();
        let r =
            graph::scratch(|| tape.gradient_sparse(&targets, &src, og.as_deref(), unconnected))?;
        let kinds: Vec<bool> = r
            .iter()
            .map(|g| matches!(g, Some(Grad::Sparse(_))))
            .collect();
        let flat = flatten_grads(r)?;
        let (spec, vars, inputs) = gradient_spec(
            &targets,
            &srcs,
            og.as_deref(),
            unconnected,
            Some(kinds.clone()),
            &flat,
        );
        record(tape, spec, &vars, &inputs, &flat)?;
        let mut it = flat.into_iter();
        let mut out = Vec::with_capacity(kinds.len());
        for sparse in kinds {
            let first = it.next().flatten();
            out.push(match first {
                None => None,
                Some(t) if !sparse => Some(Py::new(py, PyTensor::from(t))?.into_any()),
                Some(values) => {
                    let indices = it.next().flatten();
                    let shape = it.next().flatten();
                    let parts = (
                        PyTensor::from(values),
                        indices.map(PyTensor::from),
                        shape.map(PyTensor::from),
                    );
                    Some(parts.into_pyobject(py)?.into_any().unbind())
                }
            });
        }
        Ok(out)
    }
}

/// A traced `gradient`'s spec, variables and inputs (the targets, the tensor sources,
/// then the output gradients given); `results` are what it gave during the trace.
fn gradient_spec(
    targets: &[Tensor],
    srcs: &[Src],
    og: Option<&[Option<Tensor>]>,
    unconnected: UnconnectedGradients,
    sparse: Option<Vec<bool>>,
    results: &[Option<Tensor>],
) -> (TapeSpec, Vec<Variable>, Vec<Tensor>) {
    let mut inputs = targets.to_vec();
    let mut vars = Vec::new();
    let sources = source_refs(srcs, &mut inputs, &mut vars);
    let output_gradients = og.map(|og| {
        og.iter()
            .map(|g| {
                g.as_ref().map(|g| {
                    inputs.push(g.clone());
                    inputs.len() - 1
                })
            })
            .collect()
    });
    let spec = TapeSpec::Gradient {
        targets: targets.len(),
        sources,
        output_gradients,
        zero_unconnected: unconnected == UnconnectedGradients::Zero,
        sparse,
        present: present(results),
    };
    (spec, vars, inputs)
}

/// Optional tensors as Python objects.
fn tensors_to_py(py: Python<'_>, r: Vec<Option<Tensor>>) -> PyResult<Vec<Option<Py<PyAny>>>> {
    r.into_iter()
        .map(|g| {
            g.map(|t| Ok(Py::new(py, PyTensor::from(t))?.into_any()))
                .transpose()
        })
        .collect()
}
