//! What an op family's `python` module (its bindings, see `expose`) uses, in one import.

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
pub(crate) use super::heavy;
pub(crate) use super::tensor::PyTensor;
pub(crate) use crate::dtype::DType;
pub(crate) use crate::ops;
pub(crate) use crate::tensor::Tensor;
