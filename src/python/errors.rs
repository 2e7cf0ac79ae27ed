//! The one place where engine errors become Python exceptions.

use pyo3::exceptions::{
    PyFileNotFoundError, PyIsADirectoryError, PyKeyboardInterrupt, PyLookupError, PyMemoryError,
    PyNotImplementedError, PyOSError, PyPermissionError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;

use crate::error::Error;

pyo3::create_exception!(
    gradtape,
    InvalidArgumentError,
    PyValueError,
    "An op got an invalid argument (shapes, values). TF equivalent: tf.errors.InvalidArgumentError."
);

pyo3::create_exception!(
    gradtape,
    ResourceExhaustedError,
    PyMemoryError,
    "A size too large to hold, or memory the system refused. TF equivalent: \
     tf.errors.ResourceExhaustedError (here also a MemoryError)."
);

pyo3::create_exception!(
    gradtape,
    InternalError,
    PyRuntimeError,
    "A broken invariant inside gradtape: a bug, to be reported. TF equivalent: \
     tf.errors.InternalError."
);

pyo3::create_exception!(
    gradtape,
    OperatorNotAllowedInGraphError,
    PyTypeError,
    "A symbolic tensor of a gt.function trace used where a Python value is needed (a \
     bool, an iteration). TF equivalent: tf.errors.OperatorNotAllowedInGraphError."
);

pyo3::create_exception!(
    gradtape,
    InaccessibleTensorError,
    PyValueError,
    "A symbolic tensor of a gt.function trace used where it is out of scope (made inside a \
     loop body or branch and read outside it). TF equivalent: \
     tf.errors.InaccessibleTensorError (a ValueError)."
);

pyo3::create_exception!(
    gradtape,
    DataLossError,
    PyValueError,
    "A file that is truncated, corrupted, of an unknown format version or otherwise not \
     what it should be. TF equivalent: tf.errors.DataLossError (here also a ValueError)."
);

impl From<Error> for PyErr {
    fn from(e: Error) -> PyErr {
        match e {
            Error::Python(err) => err,
            Error::ShapeMismatch { .. } | Error::InvalidArgument { .. } => {
                InvalidArgumentError::new_err(e.to_string())
            }
            Error::DType { .. } | Error::Type(_) => PyTypeError::new_err(e.to_string()),
            Error::ResourceExhausted { .. } => ResourceExhaustedError::new_err(e.to_string()),
            Error::Tape(_) => PyRuntimeError::new_err(e.to_string()),
            Error::Inaccessible(_) => InaccessibleTensorError::new_err(e.to_string()),
            Error::Internal(_) => InternalError::new_err(e.to_string()),
            Error::DataLoss(_) => DataLossError::new_err(e.to_string()),
            Error::NoGradient(_) => PyLookupError::new_err(e.to_string()),
            Error::Unimplemented { .. } => PyNotImplementedError::new_err(e.to_string()),
            Error::Io { ref source, .. } => {
                let msg = e.to_string();
                match source.kind() {
                    std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(msg),
                    std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(msg),
                    std::io::ErrorKind::IsADirectory => PyIsADirectoryError::new_err(msg),
                    _ => PyOSError::new_err(msg),
                }
            }
            // The work stopped for a signal: let Python run its handler now (Ctrl-C's
            // raises KeyboardInterrupt); one that returns still ends the call.
            Error::Interrupted => Python::attach(|py| match py.check_signals() {
                Err(err) => err,
                Ok(()) => PyKeyboardInterrupt::new_err("interrupted"),
            }),
        }
    }
}

/// TF's `tf.errors.UnimplementedError` (`gt.errors.UnimplementedError`, an `OpError`
/// defined in Python): an operation TF does not support either, such as pooling over
/// the batch axis.
pub(crate) fn unimplemented_error(msg: impl Into<String>) -> PyErr {
    let msg = msg.into();
    Python::attach(|py| {
        let made = py
            .import("gradtape.errors")
            .and_then(|m| m.getattr("UnimplementedError"))
            .and_then(|c| c.call1((py.None(), py.None(), msg.as_str())));
        match made {
            Ok(e) => PyErr::from_value(e),
            Err(e) => e,
        }
    })
}
