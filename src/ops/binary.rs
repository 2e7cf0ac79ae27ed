//! Binary elementwise arithmetic with numpy broadcasting.
//!
//! Rules return output-shaped gradients; the tape sums them back to each input's
//! shape (`tape::backward::unbroadcast`). For complex inputs the gradient is the
//! conjugate convention TF uses: `dx = dy * conj(∂z/∂x)`.

use num_traits::Float;

use super::{binary_out, grads, Grads, Op, Saves, VjpCx};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels::elementwise::zip;
use crate::ops::{cast, conj, greater, greater_equal, less_equal, log, neg, where_, zeros_like};
use crate::tensor::Tensor;

macro_rules! arith {
    ($op:expr, $x:expr, $y:expr, [$($dt:ident),*] via [$($nw:ident),+], |$p:ident, $q:ident| $body:expr) => {
        Tensor::new(map_pair!($op, $x.data(), $y.data(), [$($dt),*] via [$($nw),+], a, b => zip($op, a, b, |$p, $q| $body)?))
    };
    ($op:expr, $x:expr, $y:expr, [$($dt:ident),*], |$p:ident, $q:ident| $body:expr) => {
        Tensor::new(map_pair!($op, $x.data(), $y.data(), [$($dt),*], a, b => zip($op, a, b, |$p, $q| $body)?))
    };
}

// Dtype lists follow TF's CPU kernel registrations (TF 2.8 and later): AddV2, Sub
// and Mul take every numeric dtype; the narrow ones (`via`) are computed in
// `DType::compute_dtype` and wrapped or rounded back (see `macros.rs`). uint64 has
// its own kernels: no wider type holds it.

/// `x + y` (strings: concatenated, as TF's Add). TF equivalent: `tf.math.add`.
/// Gradient: `dy` to both.
pub fn add(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let out = arith!("AddV2", x, y, [F32, F64, I32, I64, U64, C64, C128, Str] via [F16, I8, I16, U8, U16, U32], |p, q| p + q);
    binary_out(Add, x, y, out)
}
struct Add;
impl Op for Add {
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        super::elementwise_jvp(cx, tangents)
    }
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "AddV2"
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let dy = &dys[0];
        Ok(grads![
            cx.needs(0).then(|| dy.clone()),
            cx.needs(1).then(|| dy.clone())
        ])
    }
}

/// `x - y`. TF equivalent: `tf.math.subtract`.
pub fn subtract(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let out = arith!("Sub", x, y, [F32, F64, I32, I64, U64, C64, C128] via [F16, I8, I16, U8, U16, U32], |p, q| p - q);
    binary_out(Sub, x, y, out)
}
struct Sub;
impl Op for Sub {
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        super::elementwise_jvp(cx, tangents)
    }
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "Sub"
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let dy = &dys[0];
        let gy = if cx.needs(1) { Some(neg(dy)?) } else { None };
        Ok(grads![cx.needs(0).then(|| dy.clone()), gy])
    }
}

/// `x * y`. TF equivalent: `tf.math.multiply`. Gradient: `dy*conj(y)`, `dy*conj(x)`.
pub fn multiply(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let out = if x.dtype() == DType::Bool && y.dtype() == DType::Bool {
        arith!("Mul", x, y, [Bool], |p, q| p & q)
    } else {
        arith!("Mul", x, y, [F32, F64, I32, I64, U64, C64, C128] via [F16, I8, I16, U8, U16, U32], |p, q| p * q)
    };
    binary_out(Mul, x, y, out)
}
/// Short name of [`multiply`].
pub fn mul(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    multiply(x, y)
}
struct Mul;
impl Op for Mul {
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        super::elementwise_jvp(cx, tangents)
    }
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "Mul"
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let dy = &dys[0];
        let gx = if cx.needs(0) {
            Some(multiply(dy, &conj(cx.input(1)?)?)?)
        } else {
            None
        };
        let gy = if cx.needs(1) {
            Some(multiply(&conj(cx.input(0)?)?, dy)?)
        } else {
            None
        };
        Ok(grads![gx, gy])
    }
}

/// `x * y`, but 0 wherever `y` is 0, even where `x` is infinite or NaN. TF equivalent:
/// `tf.math.multiply_no_nan`. The rules of sqrt, rsqrt and reciprocal use it so that a
/// zero upstream gradient stays zero at a pole, as TF's SqrtGrad/RsqrtGrad/InvGrad do.
/// Gradient (TF's): `mul_no_nan(dy, conj(y))` to `x` and `mul_no_nan(conj(x), dy)` to `y`.
pub fn multiply_no_nan(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    use num_traits::Zero;
    let out = arith!("MulNoNan", x, y, [F32, F64, C64, C128] via [F16], |p, q| if q.is_zero() {
        Zero::zero()
    } else {
        p * q
    });
    binary_out(MulNoNan, x, y, out)
}
struct MulNoNan;
impl Op for MulNoNan {
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        super::elementwise_jvp(cx, tangents)
    }
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "MulNoNan"
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let dy = &dys[0];
        let gx = if cx.needs(0) {
            Some(multiply_no_nan(dy, &conj(cx.input(1)?)?)?)
        } else {
            None
        };
        let gy = if cx.needs(1) {
            Some(multiply_no_nan(&conj(cx.input(0)?)?, dy)?)
        } else {
            None
        };
        Ok(grads![gx, gy])
    }
}

/// `x / y`. TF equivalent: `tf.math.divide` (true division: integer inputs are cast
/// first, as `tf.math.truediv` does: 8- and 16-bit integers to `float32`, 32- and
/// 64-bit ones to `float64`).
pub fn divide(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    if x.dtype().is_integer() && x.dtype() == y.dtype() {
        let to = if x.dtype().size() <= 2 {
            DType::F32
        } else {
            DType::F64
        };
        return divide(&cast(x, to)?, &cast(y, to)?);
    }
    let out = arith!("RealDiv", x, y, [F32, F64, C64, C128] via [F16], |p, q| p / q);
    binary_out(Div, x, y, out)
}
/// TF equivalent: `tf.math.truediv`.
pub fn truediv(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    divide(x, y)
}
struct Div;
impl Op for Div {
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        super::elementwise_jvp(cx, tangents)
    }
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "RealDiv"
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        // TF: gx = dy / conj(y); gy = dy * conj((-x / y) / y).
        let dy = &dys[0];
        let y = cx.input(1)?;
        let gx = if cx.needs(0) {
            Some(divide(dy, &conj(y)?)?)
        } else {
            None
        };
        let gy = if cx.needs(1) {
            let x = cx.input(0)?;
            Some(multiply(dy, &conj(&divide(&divide(&neg(x)?, y)?, y)?)?)?)
        } else {
            None
        };
        Ok(grads![gx, gy])
    }
}

/// Floor division. TF equivalent: `tf.math.floordiv`. Not differentiable (None).
pub fn floordiv(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let out = match (x.dtype().compute_dtype(), y.dtype().compute_dtype()) {
        (DType::I32, DType::I32) | (DType::I64, DType::I64) => {
            if int_has_zero(y) {
                return Err(Error::invalid("FloorDiv", "Integer division by zero"));
            }
            // Wrapping: MIN // -1 overflows; TF's integer math wraps (no panic).
            arith!("FloorDiv", x, y, [I32, I64] via [I8, I16, U8, U16, U32], |p, q| p
            .wrapping_div_euclid(q)
            .wrapping_sub(if (p.wrapping_rem_euclid(q) != 0) && (q < 0) {
                1
            } else {
                0
            }))
        }
        (DType::U64, DType::U64) => {
            if int_has_zero(y) {
                return Err(Error::invalid("FloorDiv", "Integer division by zero"));
            }
            arith!("FloorDiv", x, y, [U64], |p, q| p / q)
        }
        _ => arith!("FloorDiv", x, y, [F32, F64] via [F16], |p, q| (p / q).floor()),
    };
    Ok(out)
}

/// Remainder with the sign of the divisor (Python's `%`). TF equivalent:
/// `tf.math.floormod`. Gradient: `dy` to `x`, `-floor(x/y)*dy` to `y`.
pub fn floormod(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let out = match (x.dtype().compute_dtype(), y.dtype().compute_dtype()) {
        (DType::I32, DType::I32) | (DType::I64, DType::I64) => {
            if int_has_zero(y) {
                return Err(Error::invalid("FloorMod", "Integer division by zero"));
            }
            arith!("FloorMod", x, y, [I32, I64] via [I8, I16, U8, U16, U32], |p, q| {
                let r = p.wrapping_rem(q); // MIN % -1 is 0, not a panic
                if r != 0 && ((r < 0) != (q < 0)) {
                    r + q
                } else {
                    r
                }
            })
        }
        (DType::U64, DType::U64) => {
            if int_has_zero(y) {
                return Err(Error::invalid("FloorMod", "Integer division by zero"));
            }
            arith!("FloorMod", x, y, [U64], |p, q| p % q)
        }
        _ => arith!("FloorMod", x, y, [F32, F64] via [F16], |p, q| {
            let r = p % q;
            if r != 0.0 && ((r < 0.0) != (q < 0.0)) {
                r + q
            } else {
                r
            }
        }),
    };
    binary_out(FloorMod, x, y, out)
}
/// TF equivalent: `tf.math.mod`.
pub fn mod_(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    floormod(x, y)
}
struct FloorMod;
impl Op for FloorMod {
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        super::elementwise_jvp(cx, tangents)
    }
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "FloorMod"
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let dy = &dys[0];
        let gy = if cx.needs(1) {
            let q = floordiv(cx.input(0)?, cx.input(1)?)?;
            Some(multiply(dy, &neg(&q)?)?)
        } else {
            None
        };
        Ok(grads![cx.needs(0).then(|| dy.clone()), gy])
    }
}

/// Whether an integer tensor holds a zero (false for other dtypes).
fn int_has_zero(y: &Tensor) -> bool {
    use crate::tensor::Data;
    macro_rules! any_zero {
        ($a:expr) => {
            $a.iter().any(|&v| v == 0)
        };
    }
    match y.data() {
        Data::I8(a) => any_zero!(a),
        Data::I16(a) => any_zero!(a),
        Data::I32(a) => any_zero!(a),
        Data::I64(a) => any_zero!(a),
        Data::U8(a) => any_zero!(a),
        Data::U16(a) => any_zero!(a),
        Data::U32(a) => any_zero!(a),
        Data::U64(a) => any_zero!(a),
        _ => false,
    }
}

/// `x ** y`. TF equivalent: `tf.math.pow`. Gradient: `dy*y*x^(y-1)` and
/// `dy*z*log(x)`, with `log(x)` taken as 0 where `x <= 0` (TF's convention).
pub fn pow(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    // TF registers Pow for float16/32/64, complex and int8/16/32/64 (no unsigned).
    let out = match (x.dtype(), y.dtype()) {
        (DType::I8, DType::I8)
        | (DType::I16, DType::I16)
        | (DType::I32, DType::I32)
        | (DType::I64, DType::I64) => {
            let neg_exp = match crate::ops::widen(y.data())? {
                crate::tensor::Data::I32(a) => a.iter().any(|&v| v < 0),
                crate::tensor::Data::I64(a) => a.iter().any(|&v| v < 0),
                _ => false,
            };
            if neg_exp {
                return Err(Error::invalid(
                    "Pow",
                    "Integers to negative integer powers are not allowed",
                ));
            }
            arith!("Pow", x, y, [I32, I64] via [I8, I16], |p, q| p.wrapping_pow(q as u32))
        }
        (DType::C64, _) | (DType::C128, _) => arith!("Pow", x, y, [C64, C128], |p, q| p.powc(q)),
        _ => arith!("Pow", x, y, [F32, F64] via [F16], |p, q| Float::powf(p, q)),
    };
    binary_out(Pow, x, y, out)
}
struct Pow;
impl Op for Pow {
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        super::elementwise_jvp(cx, tangents)
    }
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "Pow"
    }
    fn saves(&self) -> Saves {
        Saves::INPUTS_AND_OUTPUT
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let dy = &dys[0];
        let x = cx.input(0)?;
        let y = cx.input(1)?;
        let gx = if cx.needs(0) {
            let one = crate::tensor::scalar_of(1.0, y.dtype());
            let d = multiply(y, &pow(x, &subtract(y, &one)?)?)?;
            Some(multiply(dy, &conj(&d)?)?)
        } else {
            None
        };
        let gy = if cx.needs(1) {
            let z = cx.output(0)?;
            let logx = if x.dtype().is_complex() {
                log(x)?
            } else {
                let zero = zeros_like(x)?;
                let pos = greater(x, &zero)?;
                // log of a clamped-positive x so that no NaN enters `where`'s
                // other branch (its gradient would carry it).
                let safe = where_(&pos, x, &crate::ops::ones_like(x)?)?;
                where_(&pos, &log(&safe)?, &zero)?
            };
            Some(multiply(dy, &conj(&multiply(z, &logx)?)?)?)
        } else {
            None
        };
        Ok(grads![gx, gy])
    }
}

/// Elementwise maximum. TF equivalent: `tf.math.maximum`. Ties send the gradient
/// to `x` (TF's `greater_equal` mask).
pub fn maximum(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let out = arith!("Maximum", x, y, [F32, F64, I32, I64, U64] via [F16, I8, I16, U8, U16, U32], |p, q| if p >= q
        || p.partial_cmp(&p).is_none()
    {
        p
    } else {
        q
    });
    binary_out(MinMax { max: true }, x, y, out)
}

/// Elementwise minimum. TF equivalent: `tf.math.minimum`. Ties send the gradient to `x`.
pub fn minimum(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let out = arith!("Minimum", x, y, [F32, F64, I32, I64, U64] via [F16, I8, I16, U8, U16, U32], |p, q| if p <= q
        || p.partial_cmp(&p).is_none()
    {
        p
    } else {
        q
    });
    binary_out(MinMax { max: false }, x, y, out)
}
struct MinMax {
    max: bool,
}
impl Op for MinMax {
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        super::elementwise_jvp(cx, tangents)
    }
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        if self.max {
            "Maximum"
        } else {
            "Minimum"
        }
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let dy = &dys[0];
        let (x, y) = (cx.input(0)?, cx.input(1)?);
        let mask = if self.max {
            greater_equal(x, y)?
        } else {
            less_equal(x, y)?
        };
        let zero = zeros_like(dy)?;
        let gx = if cx.needs(0) {
            Some(where_(&mask, dy, &zero)?)
        } else {
            None
        };
        let gy = if cx.needs(1) {
            Some(where_(&mask, &zero, dy)?)
        } else {
            None
        };
        Ok(grads![gx, gy])
    }
}

/// `(x - y)^2`. TF equivalent: `tf.math.squared_difference`.
pub fn squared_difference(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let d = subtract(x, y)?;
    multiply(&d, &conj(&d)?)
}

/// Four-quadrant arctangent of `y/x`. TF equivalent: `tf.math.atan2(y, x)`.
/// Gradient: `dy * x/(x²+y²)` for `y`, `-dy * y/(x²+y²)` for `x`.
pub fn atan2(y: &Tensor, x: &Tensor) -> Result<Tensor> {
    let out = arith!("Atan2", y, x, [F32, F64] via [F16], |p, q| p.atan2(q));
    binary_out(Atan2, y, x, out)
}
struct Atan2;
impl Op for Atan2 {
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        super::elementwise_jvp(cx, tangents)
    }
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "Atan2"
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let (y, x) = (cx.input(0)?, cx.input(1)?);
        let r = divide(&dys[0], &add(&multiply(x, x)?, &multiply(y, y)?)?)?;
        let gy = if cx.needs(0) {
            Some(multiply(&r, x)?)
        } else {
            None
        };
        let gx = if cx.needs(1) {
            Some(neg(&multiply(&r, y)?)?)
        } else {
            None
        };
        Ok(grads![gy, gx])
    }
}

/// The Python functions of this family: bindings and where they appear (see
/// `src/ops/README.md`).
#[cfg(feature = "python")]
pub(super) mod python {
    use crate::python::binding::*;

    expose! {
        /// Elementwise ``x + y`` with broadcasting. TF equivalent: ``tf.math.add``.
        ///
        /// >>> print(gt.add(gt.constant([1.0, 2.0, 3.0]), 2.0))
        /// gt.Tensor([3. 4. 5.], shape=(3,), dtype=float32)
        binary add = ops::add, in [gt, math];
        /// Elementwise ``x - y`` with broadcasting. TF equivalent: ``tf.math.subtract``.
        ///
        /// >>> print(gt.subtract(gt.constant([1.0, 2.0, 3.0]), 2.0))
        /// gt.Tensor([-1.  0.  1.], shape=(3,), dtype=float32)
        binary subtract = ops::subtract, in [gt, math];
        /// Elementwise ``x * y`` with broadcasting. TF equivalent: ``tf.math.multiply``.
        ///
        /// >>> print(gt.multiply(gt.constant([1.0, 2.0, 3.0]), 2.0))
        /// gt.Tensor([2. 4. 6.], shape=(3,), dtype=float32)
        binary multiply = ops::multiply, in [gt, math];
        /// Elementwise ``x * y``, but 0 wherever ``y`` is 0 (even where ``x`` is inf or NaN).
        /// TF equivalent: ``tf.math.multiply_no_nan``.
        ///
        /// >>> print(gt.math.multiply_no_nan(gt.constant([float("inf"), 2.0]), gt.constant([0.0, 3.0])))
        /// gt.Tensor([0. 6.], shape=(2,), dtype=float32)
        binary multiply_no_nan = ops::multiply_no_nan, in [math];
        /// Elementwise ``x / y`` with broadcasting. TF equivalent: ``tf.math.divide``.
        ///
        /// >>> print(gt.divide(gt.constant([1.0, 2.0, 3.0]), 2.0))
        /// gt.Tensor([0.5 1.  1.5], shape=(3,), dtype=float32)
        binary divide = ops::divide, in [gt, math];
        /// Elementwise ``x / y`` (integers divide to floats, as in TF). TF equivalent:
        /// ``tf.math.truediv``.
        ///
        /// >>> print(gt.truediv(gt.constant([1, 2, 3]), 2))
        /// gt.Tensor([0.5 1.  1.5], shape=(3,), dtype=float64)
        binary truediv = ops::truediv, in [gt, math];
        /// Elementwise ``x // y`` (rounds toward negative infinity). TF equivalent:
        /// ``tf.math.floordiv``.
        ///
        /// >>> print(gt.floordiv(gt.constant([-3, 3, 7]), 2))
        /// gt.Tensor([-2  1  3], shape=(3,), dtype=int32)
        binary floordiv = ops::floordiv, in [gt, math];
        /// Elementwise remainder of ``floordiv``; the result has the sign of ``y``. TF equivalent:
        /// ``tf.math.floormod``.
        ///
        /// >>> print(gt.floormod(gt.constant([-3, 3, 7]), 2))
        /// gt.Tensor([1 1 1], shape=(3,), dtype=int32)
        binary floormod = ops::floormod, in [gt, math];
        /// Elementwise ``x ** y``. TF equivalent: ``tf.math.pow``.
        ///
        /// >>> print(gt.pow(gt.constant([1.0, 2.0, 3.0]), 2.0))
        /// gt.Tensor([1. 4. 9.], shape=(3,), dtype=float32)
        binary pow = ops::pow, in [gt, math];
        /// Elementwise larger of ``x`` and ``y``. TF equivalent: ``tf.math.maximum``.
        ///
        /// >>> print(gt.maximum(gt.constant([1.0, 2.0, 3.0]), 2.0))
        /// gt.Tensor([2. 2. 3.], shape=(3,), dtype=float32)
        binary maximum = ops::maximum, in [gt, math];
        /// Elementwise smaller of ``x`` and ``y``. TF equivalent: ``tf.math.minimum``.
        ///
        /// >>> print(gt.minimum(gt.constant([1.0, 2.0, 3.0]), 2.0))
        /// gt.Tensor([1. 2. 2.], shape=(3,), dtype=float32)
        binary minimum = ops::minimum, in [gt, math];
        /// Elementwise ``(x - y) ** 2``. TF equivalent: ``tf.math.squared_difference``.
        ///
        /// >>> print(gt.squared_difference(gt.constant([1.0, 2.0, 3.0]), 2.0))
        /// gt.Tensor([1. 0. 1.], shape=(3,), dtype=float32)
        binary squared_difference = ops::squared_difference, in [gt, math];
        /// Elementwise arctangent of ``y / x`` with the quadrant of ``(x, y)``; the first argument
        /// is ``y``. TF equivalent: ``tf.math.atan2``.
        ///
        /// >>> print(gt.atan2(gt.constant([1.0, -1.0]), -1.0))
        /// gt.Tensor([ 2.3561945 -2.3561945], shape=(2,), dtype=float32)
        binary atan2 = ops::atan2, in [gt, math];
    }
}
