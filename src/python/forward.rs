//! The native half of `gt.autodiff.ForwardAccumulator`: the accumulator's state and the
//! checks of each primal/tangent pair. `autodiff.ForwardAccumulator` (Python) adds the
//! nested structures, the duplicate-primal check and the integer-primal warning.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use super::convert::to_tensor;
use super::tensor::PyTensor;
use super::variable::PyVariable;
use crate::graph::{self, AccUse};
use crate::tape::ForwardAccumulator;
use crate::tensor::Tensor;

/// Subclassed by `gt.autodiff.ForwardAccumulator`.
#[pyclass(frozen, subclass, name = "_ForwardAccumulator", module = "gradtape")]
pub struct PyForwardAccumulator {
    acc: ForwardAccumulator,
}

#[pymethods]
impl PyForwardAccumulator {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(
        _args: &Bound<'_, pyo3::types::PyTuple>,
        _kwargs: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> PyResult<Self> {
        let acc = ForwardAccumulator::new();
        graph::record_acc_use("AccumulatorNew", &acc, AccUse::New, &[], &[])?;
        Ok(PyForwardAccumulator { acc })
    }

    /// Watches one primal (Tensor or Variable) with its tangent (converted to the
    /// primal's dtype). Returns whether the primal's dtype is not differentiable (it
    /// is then not watched; the caller warns).
    fn _watch_one(&self, primal: &Bound<'_, PyAny>, tangent: &Bound<'_, PyAny>) -> PyResult<bool> {
        if let Ok(t) = primal.cast::<PyTensor>() {
            let p = &t.get().t;
            let tan = to_tensor(tangent, Some(p.dtype()))?;
            self.acc.watch(p, &tan)?;
            graph::record_acc_use(
                "AccumulatorWatch",
                &self.acc,
                AccUse::Call(Box::new(|acc, xs| {
                    acc.watch(&xs[0], &xs[1])?;
                    Ok(Vec::new())
                })),
                &[p, &tan],
                &[],
            )?;
            return Ok(!p.dtype().is_differentiable());
        }
        if let Ok(v) = primal.cast::<PyVariable>() {
            let v = &v.get().v;
            let tan = to_tensor(tangent, Some(v.dtype()))?;
            self.acc.watch_variable(v, &tan)?;
            let var = v.clone();
            graph::record_acc_use(
                "AccumulatorWatch",
                &self.acc,
                AccUse::Call(Box::new(move |acc, xs| {
                    acc.watch_variable(&crate::graph::resolve(&var), &xs[0])?;
                    Ok(Vec::new())
                })),
                &[&tan],
                &[],
            )?;
            return Ok(!v.dtype().is_differentiable());
        }
        Err(PyTypeError::new_err(format!(
            "ForwardAccumulator primals must be Tensors or Variables, got {}",
            primal.get_type().name()?
        )))
    }

    /// Pushes the accumulator on this thread's stack.
    fn _push(&self) -> PyResult<()> {
        if self.acc.is_active() {
            return Err(PyValueError::new_err("Accumulator is already recording."));
        }
        self.acc.start()?;
        graph::record_acc_use("AccumulatorStart", &self.acc, AccUse::Start, &[], &[])?;
        Ok(())
    }

    /// Removes the accumulator from this thread's stack; returns whether it was there.
    fn _pop(&self) -> PyResult<bool> {
        let was = self.acc.exit();
        graph::record_acc_use("AccumulatorExit", &self.acc, AccUse::Exit, &[], &[])?;
        Ok(was)
    }

    /// Whether the accumulator is active on this thread.
    #[getter]
    fn _recording(&self) -> bool {
        self.acc.is_active()
    }

    /// The tangent of one Tensor or Variable, or `None`.
    fn _jvp_one(&self, x: &Bound<'_, PyAny>) -> PyResult<Option<PyTensor>> {
        if let Ok(t) = x.cast::<PyTensor>() {
            let t = &t.get().t;
            let Some(r) = self.acc.jvp(t) else {
                return Ok(None);
            };
            // When the graph runs, a tangent the trace found may be absent: a cond output
            // from a branch that does not use the primal. TF's tangent of it is zeros.
            return self.traced_jvp(r, &[t], |acc, xs| {
                acc.jvp(&xs[0])
                    .or_else(|| crate::ops::zeros_like(&xs[0]).ok())
            });
        }
        if let Ok(v) = x.cast::<PyVariable>() {
            let Some(r) = self.acc.jvp_variable(&v.get().v) else {
                return Ok(None);
            };
            let var = v.get().v.clone();
            return self.traced_jvp(r, &[], move |acc, _| {
                acc.jvp_variable(&crate::graph::resolve(&var))
            });
        }
        Err(PyTypeError::new_err(format!(
            "ForwardAccumulator.jvp expects Tensors or Variables, got {}",
            x.get_type().name()?
        )))
    }
}

impl PyForwardAccumulator {
    /// A JVP looked up during a trace is a node that looks it up when the graph runs
    /// (a fresh tensor, so that it is the node's own output).
    fn traced_jvp(
        &self,
        r: Tensor,
        inputs: &[&Tensor],
        f: impl Fn(&ForwardAccumulator, &[Tensor]) -> Option<Tensor> + Send + Sync + 'static,
    ) -> PyResult<Option<PyTensor>> {
        if !graph::is_tracing() {
            return Ok(Some(PyTensor::from(r)));
        }
        // The tangent itself is the node's output (the trace maps its id to the node
        // from here on): outer accumulators and tapes know it by that id, inside the
        // accumulator's block or after it, and when the graph runs the node returns the
        // run's own tangent tensor, which they know the same way.
        graph::record_acc_use(
            "AccumulatorJvp",
            &self.acc,
            AccUse::Call(Box::new(move |acc, xs| {
                let t = f(acc, xs).ok_or_else(|| {
                    crate::error::Error::Internal(
                        "a JVP found when the function was traced is missing when it runs".into(),
                    )
                })?;
                Ok(vec![t])
            })),
            inputs,
            std::slice::from_ref(&r),
        )?;
        Ok(Some(PyTensor::from(r)))
    }
}
