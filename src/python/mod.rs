//! Python bindings (cargo feature `python`): argument conversion, one engine call,
//! result or error conversion. No math and no shape logic live here.

pub(crate) mod args;
pub(crate) mod binding;
mod callback;
pub(crate) mod convert;
mod debugging;
mod dlpack;
mod entry;
pub(crate) mod errors;
mod experimental;
pub(crate) mod expose;
mod forward;
pub(crate) mod graph;
mod index;
mod io;
mod nn;
mod saved_model;
mod tape;
pub(crate) mod tensor;
mod variable;

use pyo3::prelude::*;

use crate::dtype::DType;

// Large freed buffers are reused instead of returned to the kernel (see `crate::alloc`).
#[global_allocator]
static ALLOCATOR: crate::alloc::CachingAllocator = crate::alloc::CachingAllocator;

pub(crate) use entry::{detached, heavy, interruptible};

#[pymodule]
fn _gradtape(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    // Threads, fork and Ctrl-C: see `entry`.
    crate::pool::set_blocking_hook(entry::release_gil_while);
    crate::pool::register_fork_handlers();
    let main: u64 = py
        .import("threading")?
        .call_method0("main_thread")?
        .getattr("ident")?
        .extract()?;
    entry::signals::set_main_thread(main);
    // A forked child's main thread is the thread that forked (Python's rule too).
    let after_fork = wrap_pyfunction!(entry::signals::_forked_child, m)?;
    if let Ok(register) = py
        .import("os")
        .and_then(|os| os.getattr("register_at_fork"))
    {
        let kw = pyo3::types::PyDict::new(py);
        kw.set_item("after_in_child", &after_fork)?;
        register.call((), Some(&kw))?;
    }
    // The one version number is Cargo.toml's; gradtape.__version__ re-exports this.
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<tensor::PyTensor>()?;
    m.add_class::<tensor::PyDType>()?;
    m.add_class::<variable::PyVariable>()?;
    m.add_class::<tape::PyTape>()?;
    m.add_class::<forward::PyForwardAccumulator>()?;
    m.add_class::<convert::Storage>()?;
    m.add_function(wrap_pyfunction!(convert::_fresh_buffer, m)?)?;
    m.add_function(wrap_pyfunction!(convert::_fresh_copy, m)?)?;
    m.add(
        "InvalidArgumentError",
        py.get_type::<errors::InvalidArgumentError>(),
    )?;
    m.add(
        "ResourceExhaustedError",
        py.get_type::<errors::ResourceExhaustedError>(),
    )?;
    m.add("InternalError", py.get_type::<errors::InternalError>())?;
    m.add(
        "OperatorNotAllowedInGraphError",
        py.get_type::<errors::OperatorNotAllowedInGraphError>(),
    )?;
    m.add(
        "InaccessibleTensorError",
        py.get_type::<errors::InaccessibleTensorError>(),
    )?;
    for dt in DType::ALL {
        m.add(dt.name(), tensor::PyDType { dt })?;
    }
    expose::register(m)?;
    callback::register(m)?;
    experimental::register(m)?;
    debugging::register(m)?;
    graph::register(m)?;
    io::register(m)?;
    saved_model::register(m)?;
    nn::register(m)?;
    m.add_function(wrap_pyfunction!(entry::_panic_for_test, m)?)?;
    Ok(())
}
