//! `gt.Tensor`, `gt.DType`, and the operator methods shared with `gt.Variable`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyTuple, PyType};

use super::convert::{as_tensor, convert_value, to_numpy};
use crate::dtype::DType;
use crate::error::Result;
use crate::ops;
use crate::tensor::Tensor;

/// A dtype. TF equivalent: `tf.dtypes.DType`.
#[pyclass(
    frozen,
    eq,
    hash,
    skip_from_py_object,
    name = "DType",
    module = "gradtape"
)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyDType {
    pub dt: DType,
}

#[pymethods]
impl PyDType {
    #[getter]
    fn name(&self) -> &'static str {
        self.dt.name()
    }
    #[getter]
    fn is_floating(&self) -> bool {
        self.dt.is_floating()
    }
    #[getter]
    fn is_complex(&self) -> bool {
        self.dt.is_complex()
    }
    #[getter]
    fn is_integer(&self) -> bool {
        self.dt.is_integer()
    }
    #[getter]
    fn is_bool(&self) -> bool {
        self.dt.is_bool()
    }
    /// TF equivalent: `DType.is_unsigned` (the unsigned integers).
    #[getter]
    fn is_unsigned(&self) -> bool {
        self.dt.is_unsigned()
    }
    /// Always `False`: gradtape has no quantized dtypes. TF equivalent: `DType.is_quantized`.
    #[getter]
    fn is_quantized(&self) -> bool {
        false
    }
    /// Always `True`: every gradtape dtype has a numpy twin (`bfloat16`'s is
    /// `ml_dtypes.bfloat16`, `string`'s is `object`).
    /// TF equivalent: `DType.is_numpy_compatible`.
    #[getter]
    fn is_numpy_compatible(&self) -> bool {
        true
    }
    /// Bytes per element. TF equivalent: `DType.size`.
    #[getter]
    fn size(&self) -> usize {
        self.dt.size()
    }
    /// TF's `DataType` enum value (`DT_FLOAT` = 1, ...). TF equivalent:
    /// `DType.as_datatype_enum`.
    #[getter]
    fn as_datatype_enum(&self) -> u32 {
        self.dt.as_datatype_enum()
    }
    /// The dtype itself (gradtape has no reference dtypes). TF equivalent:
    /// `DType.base_dtype`.
    #[getter]
    fn base_dtype(&self) -> PyDType {
        *self
    }
    /// The smallest value (an int for integer dtypes). TF equivalent: `DType.min`.
    #[getter]
    fn min<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.limit(py, 0)
    }
    /// The largest value (an int for integer dtypes). TF equivalent: `DType.max`.
    #[getter]
    fn max<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.limit(py, 1)
    }
    /// Whether a value of `other` (a dtype-like) can be used where this dtype is
    /// expected: the same dtype. TF equivalent: `DType.is_compatible_with`.
    fn is_compatible_with(&self, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(super::convert::to_dtype(other)? == self.dt)
    }
    /// Pickles as its name (`gt.dtypes.as_dtype(name)` restores it).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let as_dtype = py.import("gradtape.dtypes")?.getattr("as_dtype")?;
        (as_dtype, (self.dt.name(),))
            .into_pyobject(py)
            .map(|t| t.into_any())
    }
    /// The real dtype of a complex one. TF equivalent: `DType.real_dtype`.
    #[getter]
    fn real_dtype(&self) -> PyDType {
        PyDType {
            dt: self.dt.real_dtype(),
        }
    }
    /// The matching numpy dtype (`string`: `object`; `bfloat16`:
    /// `ml_dtypes.bfloat16`, which needs `ml_dtypes`, as in TF). TF equivalent:
    /// `DType.as_numpy_dtype`.
    #[getter]
    fn as_numpy_dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.dt {
            DType::Str => return py.import("builtins")?.getattr("object"),
            DType::BF16 => return py.import("ml_dtypes")?.getattr("bfloat16"),
            _ => {}
        }
        py.import("numpy")?
            .call_method1("dtype", (self.dt.name(),))?
            .getattr("type")
    }
    fn __repr__(&self) -> String {
        format!("gt.{}", self.dt.name())
    }
    fn __str__(&self) -> String {
        format!("<dtype: '{}'>", self.dt.name())
    }
}

impl PyDType {
    fn limit<'py>(&self, py: Python<'py>, end: usize) -> PyResult<Bound<'py, PyAny>> {
        use crate::dtype::Limit;
        let (lo, hi) = self.dt.limits().ok_or_else(|| {
            PyTypeError::new_err(format!(
                "Cannot find {} value of <dtype: '{}'> with type {}.",
                if end == 0 { "minimum" } else { "maximum" },
                self.dt.name(),
                self.dt.name()
            ))
        })?;
        Ok(match if end == 0 { lo } else { hi } {
            Limit::Int(v) => v.into_pyobject(py)?.into_any(),
            Limit::Float(v) => v.into_pyobject(py)?.into_any(),
        })
    }
}

/// An immutable n-dimensional value. TF equivalent: `tf.Tensor` (eager).
#[pyclass(frozen, weakref, name = "Tensor", module = "gradtape")]
pub struct PyTensor {
    pub t: Tensor,
}

impl From<Tensor> for PyTensor {
    #[inline]
    fn from(t: Tensor) -> Self {
        PyTensor { t }
    }
}

static SHAPE_CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// The `gt.TensorShape` (a tuple subclass) of a shape.
pub(crate) fn shape_object<'py>(py: Python<'py>, shape: &[usize]) -> PyResult<Bound<'py, PyAny>> {
    let tup = PyTuple::new(py, shape)?;
    SHAPE_CLASS
        .import(py, "gradtape._shape", "TensorShape")?
        .call1((tup,))
}

/// `x.shape`: the tensor's shape, or in a trace the static shape TF gives it, `None`
/// for sizes that follow an input dimension the signature leaves unknown. The package's
/// own code (layers, composite ops) builds shapes from the sizes it reads, so it is
/// given the example's sizes, and the trace then depends on them (it is traced again
/// for other sizes).
pub(crate) fn static_shape_object<'py>(py: Python<'py>, t: &Tensor) -> PyResult<Bound<'py, PyAny>> {
    match crate::graph::static_shape(t) {
        crate::graph::StaticShape::Example => shape_object(py, t.shape()),
        crate::graph::StaticShape::Partial(_) if called_from_package(py)? => {
            crate::graph::note_shape_read(t);
            shape_object(py, t.shape())
        }
        crate::graph::StaticShape::Partial(dims) => dims_object(py, dims),
    }
}

/// The static shape the traced code sees for `t` (its shape when not tracing).
pub(crate) fn partial_shape_object<'py>(
    py: Python<'py>,
    t: &Tensor,
) -> PyResult<Bound<'py, PyAny>> {
    match crate::graph::static_shape(t) {
        crate::graph::StaticShape::Example => shape_object(py, t.shape()),
        crate::graph::StaticShape::Partial(dims) => dims_object(py, dims),
    }
}

/// [`partial_shape_object`] that leaves the trace as it is: where the trace cannot
/// tell the sizes, all of them unknown (the rank is the example's).
pub(crate) fn peeked_shape_object<'py>(py: Python<'py>, t: &Tensor) -> PyResult<Bound<'py, PyAny>> {
    match crate::graph::peek_static_shape(t) {
        Some(crate::graph::StaticShape::Example) => shape_object(py, t.shape()),
        Some(crate::graph::StaticShape::Partial(dims)) => dims_object(py, dims),
        None => dims_object(py, Some(vec![None; t.shape().len()])),
    }
}

/// The `gt.TensorShape` of partly known dimensions (`None`: unknown rank).
fn dims_object(py: Python<'_>, dims: Option<Vec<Option<usize>>>) -> PyResult<Bound<'_, PyAny>> {
    let class = SHAPE_CLASS.import(py, "gradtape._shape", "TensorShape")?;
    match dims {
        None => class.call1((py.None(),)),
        Some(d) => class.call1((PyTuple::new(py, d)?,)),
    }
}

/// Whether the Python code running (the caller of a native method) is the package's
/// own, not a user's (the examples are a user's).
fn called_from_package(py: Python<'_>) -> PyResult<bool> {
    let frame = py.import("sys")?.getattr("_getframe")?.call1((0,))?;
    let name = frame.getattr("f_globals")?.get_item("__name__")?;
    let name: &str = &name.extract::<String>().unwrap_or_default();
    Ok((name == "gradtape" || name.starts_with("gradtape."))
        && !name.starts_with("gradtape.examples"))
}

/// `x op other` with `other` converted to `x`'s dtype when it is a Python value.
#[inline]
pub(crate) fn binary(
    py: Python<'_>,
    x: Tensor,
    other: &Bound<'_, PyAny>,
    f: fn(&Tensor, &Tensor) -> Result<Tensor>,
    reflected: bool,
) -> PyResult<PyTensor> {
    binary_call(py, x, other, f, reflected, true)
}

/// `x @ other`: as [`binary`], but not an elementwise op (never fused).
pub(crate) fn matmul_op(
    py: Python<'_>,
    x: Tensor,
    other: &Bound<'_, PyAny>,
    reflected: bool,
) -> PyResult<PyTensor> {
    binary_call(py, x, other, ops::matmul, reflected, false)
}

fn binary_call(
    py: Python<'_>,
    x: Tensor,
    other: &Bound<'_, PyAny>,
    f: fn(&Tensor, &Tensor) -> Result<Tensor>,
    reflected: bool,
    elementwise: bool,
) -> PyResult<PyTensor> {
    let y = match as_tensor(other) {
        Some(t) => t,
        None => convert_value(other, Some(x.dtype()))?,
    };
    let (a, b) = if reflected { (&y, &x) } else { (&x, &y) };
    let r = if elementwise {
        super::graph::binary(py, a, b, f)?
    } else {
        super::graph::call2(
            py,
            "BatchMatMulV2",
            || "false,false,false,false".into(),
            a,
            b,
            f,
        )?
    };
    Ok(r.into())
}

#[inline]
pub(crate) fn unary(
    py: Python<'_>,
    x: Tensor,
    f: fn(&Tensor) -> Result<Tensor>,
) -> PyResult<PyTensor> {
    Ok(super::graph::unary(py, &x, f)?.into())
}

fn format_value(py: Python<'_>, t: &Tensor) -> PyResult<String> {
    let a = to_numpy(py, t)?;
    if t.ndim() == 0 {
        Ok(a.call_method1("__getitem__", (PyTuple::empty(py),))?
            .str()?
            .to_string())
    } else {
        Ok(multiline(a.str()?.to_string()))
    }
}

/// TF starts a value that spans several lines on a line of its own
/// (`tf.Tensor(\n[[1.]\n [1.]], ...)`), so columns line up.
fn multiline(text: String) -> String {
    if text.contains('\n') {
        format!("\n{text}")
    } else {
        text
    }
}

fn shape_str(s: &[usize]) -> String {
    match s.len() {
        1 => format!("({},)", s[0]),
        _ => format!(
            "({})",
            s.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A symbolic tensor's static shape as TF prints it: `(None, 3)`, `<unknown>`.
fn static_shape_str(shape: crate::graph::StaticShape, t: &Tensor) -> String {
    match shape {
        crate::graph::StaticShape::Example => shape_str(t.shape()),
        crate::graph::StaticShape::Partial(d) => crate::graph::shape_text(d.as_deref()),
    }
}

pub(crate) fn tensor_str(py: Python<'_>, t: &Tensor) -> PyResult<String> {
    if let Some((name, shape)) = crate::graph::symbolic_name(t) {
        // In a trace, as TF prints a graph tensor: no value, the static shape.
        return Ok(format!(
            "Tensor(\"{name}\", shape={}, dtype={})",
            static_shape_str(shape, t),
            t.dtype()
        ));
    }
    Ok(format!(
        "gt.Tensor({}, shape={}, dtype={})",
        format_value(py, t)?,
        shape_str(t.shape()),
        t.dtype()
    ))
}

pub(crate) fn tensor_repr(py: Python<'_>, t: &Tensor) -> PyResult<String> {
    if let Some((name, shape)) = crate::graph::symbolic_name(t) {
        return Ok(format!(
            "<gt.Tensor '{name}' shape={} dtype={}>",
            static_shape_str(shape, t),
            t.dtype()
        ));
    }
    let a = to_numpy(py, t)?;
    let v = if t.ndim() == 0 {
        format_value(py, t)?
    } else {
        multiline(a.repr()?.to_string())
    };
    Ok(format!(
        "<gt.Tensor: shape={}, dtype={}, numpy={}>",
        shape_str(t.shape()),
        t.dtype(),
        v
    ))
}

/// `numpy()` of a tensor: a numpy scalar for rank 0 (as TF), else an array.
pub(crate) fn numpy_of<'py>(py: Python<'py>, t: &Tensor) -> PyResult<Bound<'py, PyAny>> {
    let a = to_numpy(py, t)?;
    if t.ndim() == 0 {
        a.call_method1("__getitem__", (PyTuple::empty(py),))
    } else {
        Ok(a)
    }
}

pub(crate) fn scalar_of(t: &Tensor, what: &str) -> PyResult<f64> {
    if t.size() != 1 {
        return Err(PyTypeError::new_err(format!(
            "only a tensor with one element can be converted to Python {what}, not shape {:?}",
            t.shape()
        )));
    }
    Ok(t.to_f64_scalar()?)
}

/// `int(t)`: exact for integers (no trip through `f64`), and Python's `int(float)`
/// for floats (so 1e30 stays 1e30; NaN and inf raise as Python does).
pub(crate) fn int_of<'py>(py: Python<'py>, t: &Tensor) -> PyResult<Bound<'py, PyAny>> {
    let v = scalar_of(t, "int")?;
    if t.dtype().is_integer() || t.dtype().is_bool() {
        return Ok(t.to_i128_scalar()?.into_pyobject(py)?.into_any());
    }
    // Python's own conversion: exact for large floats, an error for NaN and inf.
    pyo3::types::PyFloat::new(py, v).call_method0("__int__")
}

/// The Python methods a value with tensor semantics has: `gt.Tensor` and
/// `gt.Variable` share them (`$get` turns `&self` into a `Tensor`).
macro_rules! tensor_methods {
    ($ty:ty, |$s:ident| $get:expr, { $($extra:tt)* }) => {
        #[pymethods]
        impl $ty {
            $($extra)*

            #[getter]
            fn shape<'py>(&$s, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                $crate::python::tensor::static_shape_object(py, &$get)
            }
            #[getter]
            fn dtype(&$s) -> $crate::python::tensor::PyDType {
                $crate::python::tensor::PyDType { dt: $get.dtype() }
            }
            #[getter]
            fn ndim(&$s) -> usize {
                $get.ndim()
            }
            /// The value as a numpy array (a numpy scalar for rank 0).
            fn numpy<'py>(&$s, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                let t = $get;
                $crate::python::graph::check_concrete(&t, "numpy")?;
                $crate::python::tensor::numpy_of(py, &t)
            }
            #[pyo3(signature = (dtype=None, copy=None))]
            fn __array__<'py>(&$s, py: Python<'py>, dtype: Option<Bound<'py, PyAny>>, copy: Option<bool>) -> PyResult<Bound<'py, PyAny>> {
                // Zero-copy (a read-only view) unless a copy is asked for.
                let t = $get;
                $crate::python::graph::check_concrete(&t, "numpy array")?;
                let a = if copy == Some(true) {
                    $crate::python::convert::to_numpy(py, &t)?
                } else {
                    $crate::python::convert::numpy_view(py, &t)?
                };
                match dtype {
                    Some(d) => a.call_method1("astype", (d,)),
                    None => Ok(a),
                }
            }
            fn __len__(&$s) -> PyResult<usize> {
                let t = $get;
                $crate::graph::note_shape_read(&t);
                t.shape().first().copied().ok_or_else(|| PyTypeError::new_err("Scalar tensor has no `len()`"))
            }
            /// Iterates the rows (axis 0), as TF's eager tensors do; a symbolic tensor
            /// in a trace cannot be iterated (its length is not a Python value).
            fn __iter__<'py>(&$s, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                let t = $get;
                $crate::python::graph::check_concrete(&t, "iterator")?;
                let n = *t
                    .shape()
                    .first()
                    .ok_or_else(|| PyTypeError::new_err("Cannot iterate over a scalar tensor."))?;
                let mut rows: Vec<$crate::python::tensor::PyTensor> = Vec::with_capacity(n);
                for i in 0..n {
                    let key = (i as isize).into_pyobject(py)?.into_any();
                    rows.push($crate::python::index::getitem(py, &t, &key)?.into());
                }
                Ok(pyo3::types::PyList::new(py, rows)?.as_any().try_iter()?.into_any())
            }
            fn __float__(&$s) -> PyResult<f64> {
                let t = $get;
                $crate::python::graph::check_concrete(&t, "float")?;
                $crate::python::tensor::scalar_of(&t, "float")
            }
            fn __int__<'py>(&$s, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                let t = $get;
                $crate::python::graph::check_concrete(&t, "int")?;
                $crate::python::tensor::int_of(py, &t)
            }
            fn __index__(&$s) -> PyResult<i128> {
                let t = $get;
                $crate::python::graph::check_concrete(&t, "int")?;
                if !t.dtype().is_integer() {
                    return Err(PyTypeError::new_err("only integer scalar tensors can be used as an index"));
                }
                $crate::python::tensor::scalar_of(&t, "int")?;
                Ok(t.to_i128_scalar()?)
            }
            fn __bool__(&$s) -> PyResult<bool> {
                let t = $get;
                $crate::python::graph::check_concrete(&t, "bool")?;
                if t.size() != 1 {
                    return Err(PyValueError::new_err(
                        "The truth value of a tensor with more than one element is ambiguous. Use a.any() or a.all()",
                    ));
                }
                Ok(t.to_f64_scalar()? != 0.0)
            }
            fn __getitem__(&$s, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                Ok($crate::python::index::getitem(py, &$get, key)?.into())
            }
            fn __add__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(py, $get, o, ops::add, false) }
            fn __radd__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(py, $get, o, ops::add, true) }
            fn __sub__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(py, $get, o, ops::subtract, false) }
            fn __rsub__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(py, $get, o, ops::subtract, true) }
            fn __mul__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(py, $get, o, ops::multiply, false) }
            fn __rmul__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(py, $get, o, ops::multiply, true) }
            fn __truediv__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(py, $get, o, ops::divide, false) }
            fn __rtruediv__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(py, $get, o, ops::divide, true) }
            fn __floordiv__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(py, $get, o, ops::floordiv, false) }
            fn __rfloordiv__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(py, $get, o, ops::floordiv, true) }
            fn __mod__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(py, $get, o, ops::floormod, false) }
            fn __rmod__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(py, $get, o, ops::floormod, true) }
            fn __pow__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>, modulo: &Bound<'_, PyAny>) -> PyResult<PyTensor> { let _ = modulo; binary(py, $get, o, ops::pow, false) }
            fn __rpow__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>, modulo: &Bound<'_, PyAny>) -> PyResult<PyTensor> { let _ = modulo; binary(py, $get, o, ops::pow, true) }
            fn __matmul__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { $crate::python::tensor::matmul_op(py, $get, o, false) }
            fn __rmatmul__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { $crate::python::tensor::matmul_op(py, $get, o, true) }
            fn __lt__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(py, $get, o, ops::less, false) }
            fn __le__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(py, $get, o, ops::less_equal, false) }
            fn __gt__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(py, $get, o, ops::greater, false) }
            fn __ge__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(py, $get, o, ops::greater_equal, false) }
            fn __eq__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                // TF 2: elementwise equality; False for values that are not tensor-like.
                match binary(py, $get, o, ops::equal, false) {
                    Ok(t) => Ok(Py::new(py, t)?.into_any()),
                    Err(_) => Ok(false.into_pyobject(py)?.to_owned().into_any().unbind()),
                }
            }
            fn __ne__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                match binary(py, $get, o, ops::not_equal, false) {
                    Ok(t) => Ok(Py::new(py, t)?.into_any()),
                    Err(_) => Ok(true.into_pyobject(py)?.to_owned().into_any().unbind()),
                }
            }
            fn __and__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(py, $get, o, ops::logical_and, false) }
            fn __rand__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(py, $get, o, ops::logical_and, true) }
            fn __or__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(py, $get, o, ops::logical_or, false) }
            fn __ror__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(py, $get, o, ops::logical_or, true) }
            fn __xor__(&$s, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(py, $get, o, ops::logical_xor, false) }
            fn __invert__(&$s, py: Python<'_>) -> PyResult<PyTensor> { unary(py, $get, ops::logical_not) }
            fn __neg__(&$s, py: Python<'_>) -> PyResult<PyTensor> { unary(py, $get, ops::neg) }
            fn __pos__(&$s) -> PyTensor { PyTensor::from($get) }
            fn __abs__(&$s, py: Python<'_>) -> PyResult<PyTensor> { unary(py, $get, ops::abs) }
        }
    };
}
pub(crate) use tensor_methods;

tensor_methods!(PyTensor, |self| self.t.clone(), {
    /// `f"{t:.3f}"`: the value's numpy format, as TF's `__format__` (a variable keeps
    /// Python's default, as TF's).
    fn __format__<'py>(&self, py: Python<'py>, spec: &str) -> PyResult<Bound<'py, PyAny>> {
        let t = self.t.clone();
        if crate::graph::is_tracing() && crate::graph::lookup(&t) && spec.is_empty() {
            return Ok(
                pyo3::types::PyString::new(py, &crate::python::tensor::tensor_str(py, &t)?)
                    .into_any(),
            );
        }
        crate::python::graph::check_concrete(&t, "format")?;
        crate::python::tensor::numpy_of(py, &t)?.call_method1("__format__", (spec,))
    }
    #[classattr]
    #[allow(non_upper_case_globals)]
    const __array_priority__: i32 = 100;

    /// TF equivalent: `tf.Tensor.__hash__` — tensors are unhashable; use `.ref()`.
    fn __hash__(&self) -> PyResult<isize> {
        Err(PyTypeError::new_err(
            "Tensor is unhashable. Instead, use tensor.ref() as the key.",
        ))
    }
    fn __str__(&self, py: Python<'_>) -> PyResult<String> {
        tensor_str(py, &self.t)
    }
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        tensor_repr(py, &self.t)
    }
    /// A hashable reference to this tensor (TF's `Tensor.ref()`).
    fn r#ref(slf: &Bound<'_, Self>) -> Py<PyAny> {
        slf.clone().into_any().unbind()
    }
    /// Tensors are immutable, so a copy is the tensor itself, as TF's
    /// `EagerTensor.__copy__` (matplotlib copies the data it plots).
    fn __copy__(slf: &Bound<'_, Self>) -> Py<PyAny> {
        slf.clone().into_any().unbind()
    }
    /// As `__copy__`: TF's `EagerTensor.__deepcopy__` returns the tensor itself.
    #[pyo3(signature = (memo=None))]
    fn __deepcopy__(slf: &Bound<'_, Self>, memo: Option<&Bound<'_, PyAny>>) -> Py<PyAny> {
        let _ = memo;
        slf.clone().into_any().unbind()
    }
    /// Pickling, as TF's `EagerTensor.__reduce__`: rebuilt by `gt.constant` from the
    /// value as a numpy array, so dtype, shape and values come back exactly.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let constant = py.import("gradtape")?.getattr("constant")?;
        let args = PyTuple::new(py, [super::convert::to_numpy(py, &self.t)?])?;
        PyTuple::new(py, [constant, args.into_any()])
    }
    /// Number of elements.
    #[getter]
    fn size(&self) -> usize {
        crate::graph::note_shape_read(&self.t);
        self.t.size()
    }
    /// Identity of the tensor as seen by tapes (for debugging).
    #[getter]
    fn _id(&self) -> u64 {
        self.t.id()
    }
    /// A DLPack capsule viewing the tensor's memory (no copy; CPU). The memory is the
    /// tensor's, which is immutable: a consumer must not write to it. TF equivalent:
    /// `tf.experimental.dlpack.to_dlpack` (the array API's `__dlpack__`).
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__<'py>(
        &self,
        py: Python<'py>,
        stream: Option<Bound<'py, PyAny>>,
        max_version: Option<Bound<'py, PyAny>>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let _ = (stream, max_version);
        if let Some((kind, _)) = dl_device {
            if kind != super::dlpack::CPU {
                return Err(pyo3::exceptions::PyBufferError::new_err(format!(
                    "gradtape tensors live on the CPU (DLPack device 1), not device type {kind}"
                )));
            }
        }
        if copy == Some(true) {
            return super::dlpack::to_capsule(py, &super::dlpack::deep_copy(&self.t));
        }
        super::dlpack::to_capsule(py, &self.t)
    }
    /// `(1, 0)`: DLPack's CPU device.
    fn __dlpack_device__(&self) -> (i32, i32) {
        (super::dlpack::CPU, 0)
    }
});
