//! Native half of `gradtape._safetensors`: safetensors bytes and files (see `crate::io`).

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use super::convert::to_tensor;
use super::entry::detached;
use super::tensor::PyTensor;
use crate::io::{self, Metadata};
use crate::Tensor;

type Named = Vec<(String, Tensor)>;

/// The (name, tensor) pairs of a mapping whose values convert to tensors.
fn named_tensors(tensors: &Bound<'_, PyAny>) -> PyResult<Named> {
    let items = tensors.call_method0("items").map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!(
            "expected a mapping of names to tensors, got {}",
            tensors
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let mut out = Vec::new();
    for item in items.try_iter()? {
        let (name, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
        let name: String = name.extract().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(format!(
                "tensor names must be strings, got {}",
                name.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })?;
        out.push((name, to_tensor(&value, None)?));
    }
    Ok(out)
}

fn to_python(py: Python<'_>, (tensors, metadata): (Named, Metadata)) -> PyResult<Py<PyAny>> {
    let d = PyDict::new(py);
    for (name, t) in tensors {
        d.set_item(name, Py::new(py, PyTensor::from(t))?)?;
    }
    Ok((d, metadata).into_pyobject(py)?.into_any().unbind())
}

fn refs(named: &Named) -> impl Iterator<Item = (&str, &Tensor)> {
    named.iter().map(|(n, t)| (n.as_str(), t))
}

/// `_safetensors_save(tensors, metadata) -> bytes`.
#[pyfunction]
#[pyo3(signature = (tensors, metadata=None))]
fn _safetensors_save<'py>(
    py: Python<'py>,
    tensors: &Bound<'py, PyAny>,
    metadata: Option<Metadata>,
) -> PyResult<Bound<'py, PyBytes>> {
    let named = named_tensors(tensors)?;
    let meta = metadata.unwrap_or_default();
    let bytes = detached(py, || io::serialize(refs(&named), &meta))?;
    Ok(PyBytes::new(py, &bytes))
}

/// `_safetensors_load(data) -> (dict of tensors, metadata)`.
#[pyfunction]
fn _safetensors_load(py: Python<'_>, data: &[u8]) -> PyResult<Py<PyAny>> {
    let r = detached(py, || io::deserialize(data))?;
    to_python(py, r)
}

/// `_safetensors_save_file(tensors, filename, metadata)`.
#[pyfunction]
#[pyo3(signature = (tensors, filename, metadata=None))]
fn _safetensors_save_file(
    py: Python<'_>,
    tensors: &Bound<'_, PyAny>,
    filename: PathBuf,
    metadata: Option<Metadata>,
) -> PyResult<()> {
    let named = named_tensors(tensors)?;
    let meta = metadata.unwrap_or_default();
    detached(py, || io::save_file(&filename, refs(&named), &meta))
}

/// `_safetensors_load_file(filename) -> (dict of tensors, metadata)`.
#[pyfunction]
fn _safetensors_load_file(py: Python<'_>, filename: PathBuf) -> PyResult<Py<PyAny>> {
    let r = detached(py, || io::load_file(&filename))?;
    to_python(py, r)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_safetensors_save, m)?)?;
    m.add_function(wrap_pyfunction!(_safetensors_load, m)?)?;
    m.add_function(wrap_pyfunction!(_safetensors_save_file, m)?)?;
    m.add_function(wrap_pyfunction!(_safetensors_load_file, m)?)?;
    m.add(
        "DataLossError",
        m.py().get_type::<super::errors::DataLossError>(),
    )?;
    Ok(())
}
