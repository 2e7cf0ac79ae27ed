//! The one place where engine errors become Python exceptions.

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::error::Error;

pyo3::create_exception!(
    gradtape,
    InvalidArgumentError,
    PyValueError,
    "An op got an invalid argument (shapes, values). TF equivalent: tf.errors.InvalidArgumentError."
);

impl From<Error> for PyErr {
    fn from(e: Error) -> PyErr {
        match e {
            Error::Python(err) => err,
            Error::ShapeMismatch { .. } | Error::InvalidArgument { .. } => {
                InvalidArgumentError::new_err(e.to_string())
            }
            Error::DType { .. } | Error::Type(_) => PyTypeError::new_err(e.to_string()),
            Error::Tape(_) | Error::Internal(_) => PyRuntimeError::new_err(e.to_string()),
        }
    }
}
