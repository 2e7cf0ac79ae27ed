//! `gt.Variable`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple, PyWeakrefReference};

use super::convert::to_tensor;
use super::tensor::{binary, tensor_methods, unary, PyTensor};
use crate::ops;
use crate::variable::Variable;

/// A mutable tensor cell. TF equivalent: `tf.Variable`.
#[pyclass(frozen, subclass, weakref, name = "Variable", module = "gradtape")]
pub struct PyVariable {
    pub v: Variable,
}

impl PyVariable {
    /// The Python object wrapping `v`: the user's own object when it is alive.
    pub(crate) fn object(py: Python<'_>, v: &Variable) -> PyResult<Py<PyAny>> {
        if let Some(h) = v
            .host()
            .and_then(|h| h.downcast_ref::<Py<PyWeakrefReference>>())
        {
            if let Some(ob) = h.bind(py).upgrade() {
                return Ok(ob.unbind());
            }
        }
        Ok(Py::new(py, PyVariable { v: v.clone() })?.into_any())
    }
}

fn value_of(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    dtype: Option<crate::DType>,
) -> PyResult<crate::Tensor> {
    let _ = py;
    let t = to_tensor(value, dtype)?;
    Ok(match dtype {
        Some(d) if d != t.dtype() => ops::cast(&t, d)?,
        _ => t,
    })
}

tensor_methods!(PyVariable, |self| self.v.read(), {
    #[new]
    #[pyo3(signature = (initial_value, trainable=true, name=None, dtype=None))]
    fn new(
        py: Python<'_>,
        initial_value: &Bound<'_, PyAny>,
        trainable: bool,
        name: Option<String>,
        dtype: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let dtype = dtype.map(super::convert::to_dtype).transpose()?;
        let init =
            if initial_value.is_callable() && super::convert::as_tensor(initial_value).is_none() {
                initial_value.call0()?
            } else {
                initial_value.clone()
            };
        let t = crate::tape::stack::suspended(|| value_of(py, &init, dtype))?;
        Ok(PyVariable {
            v: Variable::new(t, trainable, name.as_deref()),
        })
    }

    /// Attaches the Python object to the engine's variable (called by `__init__`),
    /// so `tape.watched_variables()` returns this very object.
    fn _bind(slf: &Bound<'_, Self>) -> PyResult<()> {
        let w = PyWeakrefReference::new(slf.as_any())?.unbind();
        slf.get().v.set_host(Box::new(w));
        Ok(())
    }

    #[getter]
    fn name(&self) -> String {
        self.v.name().to_string()
    }
    #[getter]
    fn trainable(&self) -> bool {
        self.v.trainable()
    }
    /// Process-unique id (what tapes know the variable by).
    #[getter]
    fn _unique_id(&self) -> u64 {
        self.v.id()
    }
    /// The current value as a tensor (recorded by watching tapes).
    /// TF equivalent: `Variable.read_value()`.
    fn read_value(&self) -> PyTensor {
        self.v.read().into()
    }
    /// TF equivalent: `Variable.value()`.
    fn value(&self) -> PyTensor {
        self.v.read().into()
    }
    /// Replaces the value; same shape and dtype. Returns the variable.
    #[pyo3(signature = (value, use_locking=None, name=None, read_value=true))]
    fn assign<'py>(
        slf: &Bound<'py, Self>,
        value: &Bound<'py, PyAny>,
        use_locking: Option<bool>,
        name: Option<&str>,
        read_value: bool,
    ) -> PyResult<Bound<'py, Self>> {
        let _ = (use_locking, name, read_value);
        let v = &slf.get().v;
        let t = crate::tape::stack::suspended(|| to_tensor(value, Some(v.dtype())))?;
        v.assign(&t)?;
        Ok(slf.clone())
    }
    /// `v += delta`. Returns the variable.
    #[pyo3(signature = (delta, use_locking=None, name=None, read_value=true))]
    fn assign_add<'py>(
        slf: &Bound<'py, Self>,
        delta: &Bound<'py, PyAny>,
        use_locking: Option<bool>,
        name: Option<&str>,
        read_value: bool,
    ) -> PyResult<Bound<'py, Self>> {
        let _ = (use_locking, name, read_value);
        let v = &slf.get().v;
        let t = crate::tape::stack::suspended(|| to_tensor(delta, Some(v.dtype())))?;
        crate::python::detached(slf.py(), || v.assign_add(&t))?;
        Ok(slf.clone())
    }
    /// `v -= delta`. Returns the variable.
    #[pyo3(signature = (delta, use_locking=None, name=None, read_value=true))]
    fn assign_sub<'py>(
        slf: &Bound<'py, Self>,
        delta: &Bound<'py, PyAny>,
        use_locking: Option<bool>,
        name: Option<&str>,
        read_value: bool,
    ) -> PyResult<Bound<'py, Self>> {
        let _ = (use_locking, name, read_value);
        let v = &slf.get().v;
        let t = crate::tape::stack::suspended(|| to_tensor(delta, Some(v.dtype())))?;
        crate::python::detached(slf.py(), || v.assign_sub(&t))?;
        Ok(slf.clone())
    }
    fn __hash__(&self) -> PyResult<isize> {
        Err(PyTypeError::new_err(
            "Variable is unhashable. Instead, use variable.ref() as the key.",
        ))
    }
    /// Pickling, as TF's `ResourceVariable.__reduce__`: a new `gt.Variable` with this
    /// one's current value, dtype, name and trainability.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let kw = PyDict::new(py);
        let value = self.v.value_unrecorded();
        kw.set_item("initial_value", super::convert::to_numpy(py, &value)?)?;
        kw.set_item("trainable", self.v.trainable())?;
        let name = self.v.name();
        kw.set_item("name", name.strip_suffix(":0").unwrap_or(name))?;
        kw.set_item("dtype", value.dtype().name())?;
        let class = py.import("gradtape")?.getattr("Variable")?;
        let make = py
            .import("functools")?
            .getattr("partial")?
            .call((class,), Some(&kw))?;
        PyTuple::new(py, [make, PyTuple::empty(py).into_any()])
    }
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let t = self.v.value_unrecorded();
        let s = super::tensor::tensor_repr(py, &t)?;
        // "<gt.Tensor: shape=.., dtype=.., numpy=..>" → TF's variable repr.
        let body = s.trim_start_matches("<gt.Tensor: ").trim_end_matches('>');
        Ok(format!(
            "<gt.Variable '{}' {}>",
            self.v.name(),
            body.replacen(", dtype=", " dtype=", 1)
        ))
    }
});
