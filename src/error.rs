//! The one error type of the crate.
//!
//! Variants are grouped by the Python exception class they become (see
//! `python/errors.rs`, the only place that maps them): invalid arguments become
//! `gt.errors.InvalidArgumentError` (a `ValueError`), wrong types `TypeError`, tape
//! misuse `RuntimeError`, unsupported cases `NotImplementedError`, sizes too large to hold `gt.errors.ResourceExhaustedError` (a
//! `MemoryError`), an internal bug `gt.errors.InternalError`.

use crate::dtype::DType;

/// Result alias used by every fallible function of the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in gradtape. No user input makes the engine panic;
/// it returns one of these instead.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    // ---- invalid argument (InvalidArgumentError / ValueError) ----
    /// Two shapes that must agree (or broadcast) do not.
    #[error("{op}: incompatible shapes: {lhs:?} vs. {rhs:?}")]
    ShapeMismatch {
        op: &'static str,
        lhs: Vec<usize>,
        rhs: Vec<usize>,
    },
    /// Any other invalid argument, with a message saying what was wrong.
    #[error("{op}: {msg}")]
    InvalidArgument { op: &'static str, msg: String },

    // ---- wrong type (TypeError) ----
    /// An op got a dtype it does not support, or two dtypes that must match do not.
    #[error("{op}: {msg}")]
    DType { op: &'static str, msg: String },
    /// A value of the wrong kind (not a tensor, not a variable, ...).
    #[error("{0}")]
    Type(String),

    /// A symbolic tensor of a finished subgraph (a loop body, a branch) read outside it.
    /// TF's `InaccessibleTensorError` (a `ValueError`).
    #[error("{0}")]
    Inaccessible(String),

    // ---- tape misuse (RuntimeError) ----
    /// A gradient tape was used in a way its contract forbids.
    #[error("{0}")]
    Tape(String),

    // ---- resources (ResourceExhaustedError / MemoryError) ----
    /// A size whose byte count overflows or exceeds `isize::MAX`, or an allocation the
    /// system refused. TF equivalent: `tf.errors.ResourceExhaustedError`.
    #[error("{op}: {msg}")]
    ResourceExhausted { op: &'static str, msg: String },

    // ---- interruption (KeyboardInterrupt) ----
    /// The work was stopped at a safe point because an interrupt was requested
    /// ([`crate::interrupt`]); nothing was changed.
    #[error("interrupted")]
    Interrupted,

    // ---- no gradient (LookupError) ----
    /// Differentiating through an op that has no gradient function (a custom gradient
    /// saved without `experimental_custom_gradients`). TF's `LookupError`.
    #[error("No gradient defined for operation '{0}' (op type: {0})")]
    NoGradient(String),

    // ---- not implemented (NotImplementedError) ----
    /// A case an op (or its gradient) does not support, where TF raises
    /// `NotImplementedError` (e.g. the QR gradient of a tall full factorization).
    #[error("{op}: {msg}")]
    Unimplemented { op: &'static str, msg: String },

    // ---- files (DataLossError / OSError) ----
    /// A file that is not what it should be: truncated, corrupted, of an unknown format
    /// version, with pieces missing or sizes that do not match their shapes. The
    /// message names the file and what is wrong. TF equivalent:
    /// `tf.errors.DataLossError`.
    #[error("{0}")]
    DataLoss(String),
    /// The file system refused a read or write (a missing file, no permission).
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },

    /// A Python exception raised by a user callback, carried through Rust unchanged.
    #[cfg(feature = "python")]
    #[error("{0}")]
    Python(pyo3::PyErr),

    /// A broken internal invariant: a bug in gradtape.
    #[error("internal error (please report this as a gradtape bug): {0}")]
    Internal(String),
}

impl Error {
    pub(crate) fn invalid(op: &'static str, msg: impl Into<String>) -> Self {
        Error::InvalidArgument {
            op,
            msg: msg.into(),
        }
    }

    pub(crate) fn exhausted(op: &'static str, msg: impl Into<String>) -> Self {
        Error::ResourceExhausted {
            op,
            msg: msg.into(),
        }
    }

    pub(crate) fn unimplemented(op: &'static str, msg: impl Into<String>) -> Self {
        Error::Unimplemented {
            op,
            msg: msg.into(),
        }
    }

    pub(crate) fn dtype(op: &'static str, msg: impl Into<String>) -> Self {
        Error::DType {
            op,
            msg: msg.into(),
        }
    }

    pub(crate) fn dtype_mismatch(op: &'static str, a: DType, b: DType) -> Self {
        // TF eager raises InvalidArgumentError for this, with this wording.
        Error::invalid(
            op,
            format!(
                "cannot compute {op} as input #1(zero-based) was expected to be a {} tensor but is a {} tensor",
                a.name(),
                b.name()
            ),
        )
    }

    pub(crate) fn unsupported(op: &'static str, dt: DType) -> Self {
        Error::dtype(op, format!("{op} does not support dtype {}", dt.name()))
    }

    pub(crate) fn shapes(op: &'static str, lhs: &[usize], rhs: &[usize]) -> Self {
        Error::ShapeMismatch {
            op,
            lhs: lhs.to_vec(),
            rhs: rhs.to_vec(),
        }
    }
}
