//! The Python exposure of the ops: each family file in `src/ops/` ends with an
//! `expose!` table, one row per Python function (see `src/ops/README.md`).
//!
//! A row gives the function's docstring, where it appears (`gt`, `gt.math`, `gt.nn`, ...)
//! and its typed signature for the stub. `unary` and `binary` rows also generate the
//! binding itself (`f(x, name=None)`, `f(x, y, name=None)`); `fn` rows name a
//! `#[pyfunction]` written beside the table. From the tables the native module lists its
//! exports (`_gradtape._exports()`), and `scripts/gen-api` writes the namespace modules'
//! imports and `__all__` and the op stubs in `_gradtape.pyi` (a test checks they are
//! current).

use pyo3::prelude::*;

/// One Python function of an op family.
pub(crate) struct Export {
    /// The Python name (`where`, not the Rust `where_`).
    pub name: &'static str,
    /// The namespaces that hold it: `gt` (the package itself), `math`, `nn`, `linalg`, ...
    pub modules: &'static [&'static str],
    /// The stub signature, from the parameter list to the return type.
    pub signature: &'static str,
}

/// An op family's bindings: its registration and its export rows.
pub(crate) struct Family {
    pub register: fn(&Bound<'_, PyModule>) -> PyResult<()>,
    pub exports: &'static [Export],
}

/// Registers every family's functions in the native module, and `_exports`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    for family in crate::ops::PYTHON {
        (family.register)(m)?;
    }
    m.add_function(wrap_pyfunction!(_exports, m)?)?;
    Ok(())
}

/// `[(name, (namespace, ...), signature), ...]` for every op function, sorted by name.
#[pyfunction]
fn _exports() -> Vec<(&'static str, Vec<&'static str>, &'static str)> {
    let mut rows: Vec<_> = crate::ops::PYTHON
        .iter()
        .flat_map(|f| f.exports)
        .map(|e| (e.name, e.modules.to_vec(), e.signature))
        .collect();
    rows.sort_unstable_by_key(|r| r.0);
    rows
}

/// The stub signature of a `unary` row.
pub(crate) const UNARY_SIGNATURE: &str = "(x: TensorLike, name: str | None = None) -> Tensor";
/// The stub signature of a `binary` row.
pub(crate) const BINARY_SIGNATURE: &str =
    "(x: TensorLike, y: TensorLike, name: str | None = None) -> Tensor";

/// An op family's exposure table. Rows, each after its `///` docstring (for `fn` rows
/// the docstring sits on the function itself):
///
/// ```text
/// unary sin = ops::sin, in [gt, math];
/// binary add = ops::add, in [gt, math];
/// fn where_ as "where" in [gt]: "(condition: TensorLike, ...) -> Tensor";
/// ```
///
/// It defines `register` and `EXPORTS` for the family's entry in `crate::ops::PYTHON`.
macro_rules! expose {
    // Done: the registration and the export rows.
    (@rows [$(($f:ident, $py:expr, [$($m:ident),*], $sig:expr))*]) => {
        pub(crate) fn register(m: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> {
            use pyo3::types::PyModuleMethods;
            $( m.add_function(pyo3::wrap_pyfunction!($f, m)?)?; )*
            Ok(())
        }
        pub(crate) const EXPORTS: &[$crate::python::expose::Export] = &[
            $($crate::python::expose::Export {
                name: $py,
                modules: &[$(stringify!($m)),*],
                signature: $sig,
            },)*
        ];
    };
    (@rows [$($acc:tt)*]
        $(#[$doc:meta])* unary $f:ident = $op:path, in [$($m:ident),*]; $($rest:tt)*
    ) => {
        $(#[$doc])*
        #[pyo3::pyfunction]
        #[pyo3(signature = (x, name=None))]
        fn $f(
            py: pyo3::Python<'_>,
            x: &pyo3::Bound<'_, pyo3::PyAny>,
            name: Option<&pyo3::Bound<'_, pyo3::PyAny>>,
        ) -> pyo3::PyResult<$crate::python::tensor::PyTensor> {
            let _ = name;
            let t = $crate::python::convert::to_tensor(x, None)?;
            $crate::python::tensor::unary(py, t, $op)
        }
        $crate::python::expose::expose!(@rows [$($acc)*
            ($f, stringify!($f), [$($m),*], $crate::python::expose::UNARY_SIGNATURE)] $($rest)*);
    };
    (@rows [$($acc:tt)*]
        $(#[$doc:meta])* binary $f:ident = $op:path, in [$($m:ident),*]; $($rest:tt)*
    ) => {
        $(#[$doc])*
        #[pyo3::pyfunction]
        #[pyo3(signature = (x, y, name=None))]
        fn $f(
            py: pyo3::Python<'_>,
            x: &pyo3::Bound<'_, pyo3::PyAny>,
            y: &pyo3::Bound<'_, pyo3::PyAny>,
            name: Option<&pyo3::Bound<'_, pyo3::PyAny>>,
        ) -> pyo3::PyResult<$crate::python::tensor::PyTensor> {
            let _ = name;
            let (a, b) = $crate::python::args::pair(x, y)?;
            Ok($crate::python::graph::binary(py, &a, &b, $op)?.into())
        }
        $crate::python::expose::expose!(@rows [$($acc)*
            ($f, stringify!($f), [$($m),*], $crate::python::expose::BINARY_SIGNATURE)] $($rest)*);
    };
    (@rows [$($acc:tt)*]
        fn $f:ident as $py:literal in [$($m:ident),*]: $sig:literal; $($rest:tt)*
    ) => {
        $crate::python::expose::expose!(@rows [$($acc)* ($f, $py, [$($m),*], $sig)] $($rest)*);
    };
    (@rows [$($acc:tt)*]
        fn $f:ident in [$($m:ident),*]: $sig:literal; $($rest:tt)*
    ) => {
        $crate::python::expose::expose!(@rows [$($acc)* ($f, stringify!($f), [$($m),*], $sig)] $($rest)*);
    };
    ($($rows:tt)*) => {
        $crate::python::expose::expose!(@rows [] $($rows)*);
    };
}
pub(crate) use expose;
