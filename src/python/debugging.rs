//! `gt.debugging`'s native half: the provenance record behind `GradientTape.explain`
//! (see `crate::tape::provenance`) and the engine's memory counters.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;

use crate::tape::provenance;

/// `gradtape.debugging._caller_location`, looked up once.
static LOCATE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The provenance hook: `file:line` of the innermost frame outside the package.
fn locate() -> Option<String> {
    Python::attach(|py| {
        let f = LOCATE
            .get_or_try_init(py, || -> PyResult<_> {
                Ok(py
                    .import("gradtape.debugging")?
                    .getattr("_caller_location")?
                    .unbind())
            })
            .ok()?;
        f.call0(py)
            .ok()?
            .bind(py)
            .extract::<Option<String>>()
            .ok()?
    })
}

/// Turns the provenance record on or off (off forgets it).
#[pyfunction]
fn _set_explanations(on: bool) {
    provenance::set_locator(locate);
    provenance::set_enabled(on);
}

#[pyfunction]
fn _explanations_enabled() -> bool {
    provenance::enabled()
}

/// `(op, location, input ids, dtype name, [(tape key, recording)])` of a tensor id, or
/// `None` when it was not noted.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn _origin(
    id: u64,
) -> Option<(
    &'static str,
    Option<String>,
    Vec<u64>,
    &'static str,
    Vec<(usize, bool)>,
)> {
    provenance::origin(id).map(|o| (o.op, o.location, o.inputs, o.dtype.name(), o.tapes))
}

/// The engine's memory: bytes its allocator has handed out and not yet freed (tensors
/// and bookkeeping), and bytes of freed blocks it keeps for reuse.
#[pyfunction]
fn _memory_stats(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("live_bytes", crate::alloc::live_bytes())?;
    d.set_item("cached_bytes", crate::alloc::cached_bytes())?;
    d.set_item("cache_limit", crate::alloc::cache_limit())?;
    Ok(d)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_set_explanations, m)?)?;
    m.add_function(wrap_pyfunction!(_explanations_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(_origin, m)?)?;
    m.add_function(wrap_pyfunction!(_memory_stats, m)?)?;
    Ok(())
}
