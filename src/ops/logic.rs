//! Comparisons, logical ops and `where` (select).
//!
//! Comparisons and logical ops return bool tensors and have no gradient; `where`
//! routes the gradient to the branch each element was taken from.

use super::{grads, record, Grads, Op, Saves, VjpCx};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels::elementwise::{map, zip, zip3};
use crate::ops::zeros_like;
use crate::tensor::{Data, Tensor};

macro_rules! compare {
    ($(#[$doc:meta])* $fname:ident, $tf:literal, |$p:ident, $q:ident| $body:expr) => {
        // TF registers the ordering comparisons for every real dtype (a string is an
        // invalid argument there, as TF's op definition rejects it).
        compare!($(#[$doc])* $fname, $tf, [F32, F64, I32, I64, U64, Bool], ordered, |$p, $q| $body);
    };
    ($(#[$doc:meta])* $fname:ident, $tf:literal, [$($dt:ident),*], |$p:ident, $q:ident| $body:expr) => {
        compare!($(#[$doc])* $fname, $tf, [$($dt),*], any_dtype, |$p, $q| $body);
    };
    ($(#[$doc:meta])* $fname:ident, $tf:literal, [$($dt:ident),*], $check:ident, |$p:ident, $q:ident| $body:expr) => {
        $(#[$doc])*
        // Booleans compare as TF orders them (false < true).
        #[allow(clippy::bool_comparison)]
        pub fn $fname(x: &Tensor, y: &Tensor) -> Result<Tensor> {
            $check($tf, x, y)?;
            Ok(Tensor::new(map_pair_to_bool!($tf, x.data(), y.data(),
                [$($dt),*] via [F16, I8, I16, U8, U16, U32],
                a, b => zip($tf, a, b, |$p, $q| $body)?)))
        }
    };
}

fn any_dtype(_op: &'static str, _x: &Tensor, _y: &Tensor) -> Result<()> {
    Ok(())
}

/// TF's ordering comparisons are defined for real numbers only: a string operand is an
/// `InvalidArgumentError` (TF's wording), not a `TypeError`.
fn ordered(op: &'static str, x: &Tensor, y: &Tensor) -> Result<()> {
    if x.dtype() == DType::Str || y.dtype() == DType::Str {
        return Err(Error::invalid(
            op,
            format!(
                "Value for attr 'T' of string is not in the list of allowed values: bfloat16, half, \
                 float, double, uint8, int8, int16, int32, int64, uint16, uint32, uint64 [Op:{op}]"
            ),
        ));
    }
    Ok(())
}

compare!(
    /// `x == y` elementwise (also complex and string, as TF's Equal). TF equivalent:
    /// `tf.math.equal`.
    equal, "Equal", [F32, F64, I32, I64, U64, Bool, C64, C128, Str], |p, q| p == q
);
compare!(
    /// `x != y` elementwise (also complex and string). TF equivalent: `tf.math.not_equal`.
    not_equal, "NotEqual", [F32, F64, I32, I64, U64, Bool, C64, C128, Str], |p, q| p != q
);
compare!(
    /// `x < y` elementwise. TF equivalent: `tf.math.less`.
    less, "Less", |p, q| p < q
);
compare!(
    /// `x <= y` elementwise. TF equivalent: `tf.math.less_equal`.
    less_equal, "LessEqual", |p, q| p <= q
);
compare!(
    /// `x > y` elementwise. TF equivalent: `tf.math.greater`.
    greater, "Greater", |p, q| p > q
);
compare!(
    /// `x >= y` elementwise. TF equivalent: `tf.math.greater_equal`.
    greater_equal, "GreaterEqual", |p, q| p >= q
);

fn bools<'a>(
    op: &'static str,
    x: &'a Tensor,
) -> Result<&'a ndarray::ArcArray<bool, ndarray::IxDyn>> {
    match x.data() {
        Data::Bool(a) => Ok(a),
        d => Err(Error::dtype(
            op,
            format!("expected a bool tensor, got {}", d.dtype().name()),
        )),
    }
}

/// TF equivalent: `tf.math.logical_and`.
pub fn logical_and(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let (a, b) = (bools("LogicalAnd", x)?, bools("LogicalAnd", y)?);
    Ok(Tensor::from_array(zip("LogicalAnd", a, b, |p, q| p && q)?))
}
/// TF equivalent: `tf.math.logical_or`.
pub fn logical_or(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let (a, b) = (bools("LogicalOr", x)?, bools("LogicalOr", y)?);
    Ok(Tensor::from_array(zip("LogicalOr", a, b, |p, q| p || q)?))
}
/// TF equivalent: `tf.math.logical_xor`.
pub fn logical_xor(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let (a, b) = (bools("LogicalXor", x)?, bools("LogicalXor", y)?);
    Ok(Tensor::from_array(zip("LogicalXor", a, b, |p, q| p != q)?))
}
/// TF equivalent: `tf.math.logical_not`.
pub fn logical_not(x: &Tensor) -> Result<Tensor> {
    Ok(Tensor::from_array(map(bools("LogicalNot", x)?, |p| !p)?))
}

/// Elementwise select with broadcasting: `x` where `condition`, else `y`.
/// TF equivalent: `tf.where(condition, x, y)` (SelectV2). Gradient: `dy` masked
/// to each branch.
pub fn where_(condition: &Tensor, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let c = bools("SelectV2", condition)?;
    // Every dtype (TF's SelectV2 takes all types): pure selection, no arithmetic.
    macro_rules! select {
        ([$($dt:ident),*]) => {
            match (x.data(), y.data()) {
                $((Data::$dt(a), Data::$dt(b)) => Data::$dt(
                    zip3("SelectV2", c, a, b, |k, p, q| if k { p } else { q })?.into_shared(),
                ),)*
                (p, q) => return Err(Error::dtype_mismatch("SelectV2", p.dtype(), q.dtype())),
            }
        };
    }
    let out = all_dtypes!(select!());
    let out = Tensor::new(out);
    record(Select, &[condition, x, y], &[&out])?;
    Ok(out)
}
struct Select;
impl Op for Select {
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        super::elementwise_jvp(cx, tangents)
    }
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "SelectV2"
    }
    fn saves(&self) -> Saves {
        Saves::input_only(0)
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let c = cx.input(0)?;
        let dy = &dys[0];
        let zero = zeros_like(dy)?;
        let gx = if cx.needs(1) {
            Some(where_(c, dy, &zero)?)
        } else {
            None
        };
        let gy = if cx.needs(2) {
            Some(where_(c, &zero, dy)?)
        } else {
            None
        };
        Ok(grads![None, gx, gy])
    }
}

/// The Python functions of this family: bindings and where they appear (see
/// `src/ops/README.md`).
#[cfg(feature = "python")]
pub(super) mod python {
    use crate::python::binding::*;

    /// ``x`` where ``condition`` is true, else ``y`` (broadcasting). Only the three-argument
    /// form is supported. TF equivalent: ``tf.where``.
    ///
    /// >>> print(gt.where([True, False], gt.constant([1.0, 2.0]), gt.constant([10.0, 20.0])))
    /// gt.Tensor([ 1. 20.], shape=(2,), dtype=float32)
    #[pyfunction]
    #[pyo3(name = "where", signature = (condition, x=None, y=None, name=None))]
    fn where_(
        py: Python<'_>,
        condition: &Bound<'_, PyAny>,
        x: Option<&Bound<'_, PyAny>>,
        y: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let c = crate::python::convert::to_tensor(condition, Some(crate::DType::Bool))?;
        let (Some(x), Some(y)) = (x, y) else {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "gt.where with only a condition (indices of true elements) is not supported; pass x and y",
            ));
        };
        let (a, b) = pair(x, y)?;
        let f = |xs: &[Tensor]| ops::where_(&xs[0], &xs[1], &xs[2]);
        Ok(call_n(py, "SelectV2", String::new, &[c, a, b], f)?.into())
    }

    expose! {
        /// Elementwise ``not x`` of a bool tensor. TF equivalent: ``tf.math.logical_not``.
        ///
        /// >>> print(gt.logical_not(gt.constant([True, False])))
        /// gt.Tensor([False  True], shape=(2,), dtype=bool)
        unary logical_not = ops::logical_not, in [gt, math];
        /// Elementwise ``x == y`` as a bool tensor. TF equivalent: ``tf.math.equal``.
        ///
        /// >>> print(gt.equal(gt.constant([1.0, 2.0, 3.0]), 2.0))
        /// gt.Tensor([False  True False], shape=(3,), dtype=bool)
        binary equal = ops::equal, in [gt, math];
        /// Elementwise ``x != y`` as a bool tensor. TF equivalent: ``tf.math.not_equal``.
        ///
        /// >>> print(gt.not_equal(gt.constant([1.0, 2.0, 3.0]), 2.0))
        /// gt.Tensor([ True False  True], shape=(3,), dtype=bool)
        binary not_equal = ops::not_equal, in [gt, math];
        /// Elementwise ``x < y`` as a bool tensor. TF equivalent: ``tf.math.less``.
        ///
        /// >>> print(gt.less(gt.constant([1.0, 2.0, 3.0]), 2.0))
        /// gt.Tensor([ True False False], shape=(3,), dtype=bool)
        binary less = ops::less, in [gt, math];
        /// Elementwise ``x <= y`` as a bool tensor. TF equivalent: ``tf.math.less_equal``.
        ///
        /// >>> print(gt.less_equal(gt.constant([1.0, 2.0, 3.0]), 2.0))
        /// gt.Tensor([ True  True False], shape=(3,), dtype=bool)
        binary less_equal = ops::less_equal, in [gt, math];
        /// Elementwise ``x > y`` as a bool tensor. TF equivalent: ``tf.math.greater``.
        ///
        /// >>> print(gt.greater(gt.constant([1.0, 2.0, 3.0]), 2.0))
        /// gt.Tensor([False False  True], shape=(3,), dtype=bool)
        binary greater = ops::greater, in [gt, math];
        /// Elementwise ``x >= y`` as a bool tensor. TF equivalent: ``tf.math.greater_equal``.
        ///
        /// >>> print(gt.greater_equal(gt.constant([1.0, 2.0, 3.0]), 2.0))
        /// gt.Tensor([False  True  True], shape=(3,), dtype=bool)
        binary greater_equal = ops::greater_equal, in [gt, math];
        /// Elementwise ``x and y`` of bool tensors. TF equivalent: ``tf.math.logical_and``.
        ///
        /// >>> print(gt.logical_and(gt.constant([True, False]), True))
        /// gt.Tensor([ True False], shape=(2,), dtype=bool)
        binary logical_and = ops::logical_and, in [gt, math];
        /// Elementwise ``x or y`` of bool tensors. TF equivalent: ``tf.math.logical_or``.
        ///
        /// >>> print(gt.logical_or(gt.constant([True, False]), False))
        /// gt.Tensor([ True False], shape=(2,), dtype=bool)
        binary logical_or = ops::logical_or, in [gt, math];
        /// Elementwise ``x xor y`` of bool tensors. TF equivalent: ``tf.math.logical_xor``.
        ///
        /// >>> print(gt.logical_xor(gt.constant([True, False]), True))
        /// gt.Tensor([False  True], shape=(2,), dtype=bool)
        binary logical_xor = ops::logical_xor, in [gt, math];
        fn where_ as "where" in [gt]: "(condition: TensorLike, x: TensorLike | None = None, y: TensorLike | None = None, name: str | None = None) -> Tensor";
    }
}
