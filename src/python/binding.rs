//! What an op family's `python` module (its bindings, see `expose`) uses, in one import.
//!
//! A binding computes its result through [`call`] and its kin (see `graph`): eagerly the
//! op itself, and while a `gt.function` traces, also a node of the graph.

// A prelude: each family uses part of it.
#![allow(unused_imports)]

pub(crate) use pyo3::exceptions::{PyTypeError, PyValueError};
pub(crate) use pyo3::prelude::*;

pub(crate) use super::args::{
    axes_arg, dims_arg, dtype_arg, int_arg, opt_axis, pair, seed_arg, shape_arg, tensor_list,
};
pub(crate) use super::convert::{as_tensor, convert_value, to_dtype, to_tensor};
pub(crate) use super::errors::InvalidArgumentError;
pub(crate) use super::expose::expose;
pub(crate) use super::graph::{call, call2, call_multi, call_n, call_stateful_keyed};
pub(crate) use super::heavy;
pub(crate) use super::tensor::PyTensor;
pub(crate) use crate::dtype::DType;
pub(crate) use crate::ops;
pub(crate) use crate::tensor::Tensor;

/// [`call_n`] for an op whose work is not its largest input's size (a tile, a
/// broadcast): run eagerly as `heavy(py, n, ..)`, so the GIL is released by the `n`
/// elements it makes.
pub(crate) fn call_sized<F>(
    py: Python<'_>,
    n: usize,
    name: &str,
    key: impl FnOnce() -> String,
    xs: &[Tensor],
    f: F,
) -> PyResult<Tensor>
where
    F: Fn(&[Tensor]) -> crate::error::Result<Tensor> + Send + Sync + 'static,
{
    if crate::graph::is_tracing() {
        return call_n(py, name, key, xs, f);
    }
    heavy(py, n, || f(xs))
}

/// A random draw of `n` elements ([`call_stateful_keyed`], one output; `key()` the text
/// of its arguments): run eagerly as `heavy(py, n, ..)`, so the GIL is released by a
/// large draw.
pub(crate) fn draw<F>(
    py: Python<'_>,
    n: usize,
    name: &str,
    key: impl FnOnce() -> String,
    xs: &[Tensor],
    f: F,
) -> PyResult<Tensor>
where
    F: Fn(&[Tensor]) -> crate::error::Result<Tensor> + Send + Sync + 'static,
{
    if crate::graph::is_tracing() {
        return Ok(call_stateful_keyed(py, name, key, xs, move |a| Ok(vec![f(a)?]))?.remove(0));
    }
    heavy(py, n, || f(xs))
}
