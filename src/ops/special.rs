//! More of `tf.math`'s elementwise functions: the inverse hyperbolic functions, the
//! special functions (`erfc`, `lgamma`, `digamma`, `polygamma`), the zero-safe binary
//! ops (`xlogy`, `xdivy`, `xlog1py`, `divide_no_nan`), the float predicates
//! (`is_finite`, `is_nan`, `is_inf`) and `rint`.
//!
//! Each rule is TF's (`math_grad.py`), written in engine ops so that it is
//! differentiable again; complex gradients take TF's conjugate convention
//! (`dx = dy * conj(∂z/∂x)`). The predicates and `rint` record nothing (TF registers
//! them as not differentiable, see `nondiff.rs`).

use num_traits::Zero;

use super::{binary_out, grads, unary_out, Grads, Op, Saves, VjpCx};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels::elementwise::{map, zip};
use crate::ops::unary::{scalar_like, Log1pFn};
use crate::ops::{
    add, cast, conj, cosh, divide, exp, multiply, neg, not_equal, ones_like, sinh, softplus,
    square, subtract, zeros_like,
};
use crate::tensor::Tensor;

// ----------------------------------------------------------------------------- scalars

/// The special functions on both float widths (float32 computed in float64 where
/// libm has no single-precision form).
pub(crate) trait SpecialFn: Copy {
    fn erfc_(self) -> Self;
    fn lgamma_(self) -> Self;
    fn digamma_(self) -> Self;
    /// `polygamma(self, x)`: the `self`-th derivative of digamma at `x`.
    fn polygamma_(self, x: Self) -> Self;
}
impl SpecialFn for f64 {
    fn erfc_(self) -> f64 {
        libm::erfc(self)
    }
    fn lgamma_(self) -> f64 {
        libm::lgamma(self)
    }
    fn digamma_(self) -> f64 {
        digamma(self)
    }
    fn polygamma_(self, x: f64) -> f64 {
        polygamma(self, x)
    }
}
impl SpecialFn for f32 {
    fn erfc_(self) -> f32 {
        libm::erfcf(self)
    }
    fn lgamma_(self) -> f32 {
        libm::lgammaf(self)
    }
    fn digamma_(self) -> f32 {
        digamma(f64::from(self)) as f32
    }
    fn polygamma_(self, x: f32) -> f32 {
        polygamma(f64::from(self), f64::from(x)) as f32
    }
}

/// ψ(x), the logarithmic derivative of Γ: NaN at the poles (0 and the negative
/// integers, as TF), the reflection `ψ(x) = ψ(1 - x) - π / tan(πx)` below 0, the
/// recurrence `ψ(x) = ψ(x + 1) - 1/x` up to 10 and the asymptotic series there.
pub(crate) fn digamma(x: f64) -> f64 {
    use std::f64::consts::PI;
    if x.is_nan() || x == f64::NEG_INFINITY {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return x;
    }
    let (mut x, mut r) = (x, 0.0);
    if x <= 0.0 {
        if x == x.floor() {
            return f64::NAN;
        }
        // tan has period π: reduce first so that large |x| keep their digits.
        r = -PI / (PI * (x - x.round())).tan();
        x = 1.0 - x;
    }
    while x < 10.0 {
        r -= 1.0 / x;
        x += 1.0;
    }
    let f = 1.0 / (x * x);
    let series = f
        * (-1.0 / 12.0
            + f * (1.0 / 120.0
                + f * (-1.0 / 252.0
                    + f * (1.0 / 240.0
                        + f * (-1.0 / 132.0 + f * (691.0 / 32760.0 + f * (-1.0 / 12.0)))))));
    r + x.ln() - 0.5 / x + series
}

/// The Hurwitz zeta function ζ(s, q) = Σₖ (k + q)^(-s) for s > 1 (Euler–Maclaurin
/// summation, as Cephes and Eigen): +inf at s = 1 and at the poles q = 0, -1, ...;
/// NaN for s < 1, or a negative q with a non-integer s.
pub(crate) fn zeta(s: f64, q: f64) -> f64 {
    // The Bernoulli terms (2k)! / B₂ₖ.
    const A: [f64; 12] = [
        12.0,
        -720.0,
        30240.0,
        -1209600.0,
        47900160.0,
        -1.892_437_580_318_379_2e9,
        7.47242496e10,
        -2.950_130_727_918_164e12,
        1.164_678_281_435_006_7e14,
        -4.597_978_722_407_473e15,
        1.815_210_540_194_354_6e17,
        -7.166_165_256_175_667e18,
    ];
    if s.is_nan() || q.is_nan() {
        return f64::NAN;
    }
    if s == 1.0 {
        return f64::INFINITY;
    }
    if s < 1.0 {
        return f64::NAN;
    }
    if q <= 0.0 {
        if q == q.floor() {
            return f64::INFINITY;
        }
        if s != s.floor() {
            return f64::NAN;
        }
        // The sum below steps q up to 9 one by one: refuse (NaN) rather than run for
        // ages on a huge negative q (TF's kernel would loop as long).
        if q < -1e7 {
            return f64::NAN;
        }
    }
    let mut sum = q.powf(-s);
    let (mut a, mut b) = (q, 0.0);
    let mut i = 0;
    while i < 9 || a <= 9.0 {
        i += 1;
        a += 1.0;
        b = a.powf(-s);
        sum += b;
        if (b / sum).abs() < f64::EPSILON {
            return sum;
        }
    }
    let w = a;
    sum += b * w / (s - 1.0);
    sum -= 0.5 * b;
    let (mut fac, mut k) = (1.0, 0.0);
    for coef in A {
        fac *= s + k;
        b /= w;
        let t = fac * b / coef;
        sum += t;
        if (t / sum).abs() < f64::EPSILON {
            break;
        }
        k += 1.0;
        fac *= s + k;
        b /= w;
        k += 1.0;
    }
    sum
}

/// ψ⁽ⁿ⁾(x) = (-1)ⁿ⁺¹ n! ζ(n + 1, x) for a non-negative integer `n` (ψ itself for 0),
/// NaN for any other order (as TF's Polygamma).
pub(crate) fn polygamma(n: f64, x: f64) -> f64 {
    if n.is_nan() || n != n.floor() || n < 0.0 {
        return f64::NAN;
    }
    if n == 0.0 {
        return digamma(x);
    }
    let sign = if n % 2.0 == 0.0 { -1.0 } else { 1.0 };
    sign * libm::lgamma(n + 1.0).exp() * zeta(n + 1.0, x)
}

// ----------------------------------------------------------------------------- unary

unary_op!(
    /// Inverse hyperbolic cosine. TF equivalent: `tf.math.acosh`. Gradient
    /// `dy / conj(sinh y)`.
    acosh, Acosh, "Acosh", [F32, F64, C64, C128] via [F16], |v| v.acosh(),
    saves Saves::OUTPUT,
    vjp |cx, dy| divide(dy, &conj(&sinh(cx.output(0)?)?)?)?
);

unary_op!(
    /// Inverse hyperbolic sine. TF equivalent: `tf.math.asinh`. Gradient
    /// `dy / conj(cosh y)`.
    asinh, Asinh, "Asinh", [F32, F64, C64, C128] via [F16], |v| v.asinh(),
    saves Saves::OUTPUT,
    vjp |cx, dy| divide(dy, &conj(&cosh(cx.output(0)?)?)?)?
);

unary_op!(
    /// Inverse hyperbolic tangent. TF equivalent: `tf.math.atanh`. Gradient
    /// `dy / conj(1 - x²)`.
    atanh, Atanh, "Atanh", [F32, F64, C64, C128] via [F16], |v| v.atanh(),
    saves Saves::INPUTS,
    vjp |cx, dy| {
        let x = conj(cx.input(0)?)?;
        divide(dy, &subtract(&scalar_like(&x, 1.0), &square(&x)?)?)?
    }
);

unary_op!(
    /// Complementary error function `1 - erf(x)`, accurate where erf is near 1. TF
    /// equivalent: `tf.math.erfc`. Gradient `-dy 2/√π e^(-x²)`.
    erfc, Erfc, "Erfc", [F32, F64] via [F16], |v| SpecialFn::erfc_(v),
    saves Saves::INPUTS,
    vjp |cx, dy| {
        let x = cx.input(0)?;
        let k = scalar_like(x, -std::f64::consts::FRAC_2_SQRT_PI);
        multiply(dy, &multiply(&k, &exp(&neg(&square(x)?)?)?)?)?
    }
);

unary_op!(
    /// `log |Γ(x)|` (+inf at the poles). TF equivalent: `tf.math.lgamma`. Gradient
    /// `dy ψ(x)`.
    lgamma, Lgamma, "Lgamma", [F32, F64] via [F16], |v| SpecialFn::lgamma_(v),
    saves Saves::INPUTS,
    vjp |cx, dy| multiply(dy, &digamma_t(cx.input(0)?)?)?
);

unary_op!(
    /// ψ(x), the derivative of `lgamma` (NaN at 0 and the negative integers). TF
    /// equivalent: `tf.math.digamma`. Gradient `dy ψ⁽¹⁾(x)` (TF's `polygamma(1, x)`).
    digamma_t, Digamma, "Digamma", [F32, F64] via [F16], |v| SpecialFn::digamma_(v),
    saves Saves::INPUTS,
    vjp |cx, dy| {
        let x = cx.input(0)?;
        multiply(dy, &polygamma_t(&scalar_like(x, 1.0), x)?)?
    }
);

/// `log(sigmoid(x))`, stably: TF's composition `-softplus(-x)` (so its gradient).
/// TF equivalent: `tf.math.log_sigmoid`.
pub fn log_sigmoid(x: &Tensor) -> Result<Tensor> {
    neg(&softplus(&neg(x)?)?)
}

/// `1 / x`, 0 where `x` is 0: TF's composition `divide_no_nan(1, x)` (so its gradient).
/// TF equivalent: `tf.math.reciprocal_no_nan`.
pub fn reciprocal_no_nan(x: &Tensor) -> Result<Tensor> {
    divide_no_nan(&ones_like(x)?, x)
}

/// A float predicate elementwise (float16 through float32); other dtypes raise, as
/// TF's kernels are registered for floats only. Records nothing: no gradient.
fn float_predicate(
    op: &'static str,
    x: &Tensor,
    f32p: fn(f32) -> bool,
    f64p: fn(f64) -> bool,
) -> Result<Tensor> {
    use crate::tensor::Data;
    match x.data() {
        Data::F16(_) => float_predicate(op, &cast(x, DType::F32)?, f32p, f64p),
        Data::F32(a) => Ok(Tensor::from_array(map(a, f32p)?)),
        Data::F64(a) => Ok(Tensor::from_array(map(a, f64p)?)),
        d => Err(Error::unsupported(op, d.dtype())),
    }
}

/// Whether each element is finite (not inf, not NaN). TF equivalent: `tf.math.is_finite`.
pub fn is_finite(x: &Tensor) -> Result<Tensor> {
    float_predicate("IsFinite", x, f32::is_finite, f64::is_finite)
}

/// Whether each element is NaN. TF equivalent: `tf.math.is_nan`.
pub fn is_nan(x: &Tensor) -> Result<Tensor> {
    float_predicate("IsNan", x, f32::is_nan, f64::is_nan)
}

/// Whether each element is +inf or -inf. TF equivalent: `tf.math.is_inf`.
pub fn is_inf(x: &Tensor) -> Result<Tensor> {
    float_predicate("IsInf", x, f32::is_infinite, f64::is_infinite)
}

/// The nearest integer, halves to even (`rint(-0.5) = -0`). TF equivalent:
/// `tf.math.rint` (float32 and float64 only, as TF's kernel). Gradient: None.
pub fn rint(x: &Tensor) -> Result<Tensor> {
    Ok(Tensor::new(
        map_dtypes!("Rint", x.data(), [F32, F64], a => map(a, |v| v.round_ties_even())?),
    ))
}

// ----------------------------------------------------------------------------- binary

/// `x != 0` as 0/1 of `x`'s dtype (TF's `not_zero_x` in the rules below): not recorded.
fn not_zero(x: &Tensor) -> Result<Tensor> {
    cast(&not_equal(x, &zeros_like(x)?)?, x.dtype())
}

macro_rules! safe_binary {
    (
        $(#[$doc:meta])*
        $fname:ident, $S:ident, $tf:literal, |$p:ident, $q:ident| $kernel:expr,
        vjp |$x:ident, $y:ident, $dy:ident| ($gx:expr, $gy:expr)
    ) => {
        $(#[$doc])*
        pub fn $fname(x: &Tensor, y: &Tensor) -> Result<Tensor> {
            let out = Tensor::new(map_pair!($tf, x.data(), y.data(), [F32, F64, C64, C128] via [F16],
                a, b => zip($tf, a, b, |$p, $q| $kernel)?));
            binary_out($S, x, y, out)
        }
        struct $S;
        impl Op for $S {
            fn name(&self) -> &'static str {
                $tf
            }
            fn batched(&self) -> bool {
                true
            }
            fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
                super::elementwise_jvp(cx, tangents)
            }
            fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
                let ($x, $y, $dy) = (cx.input(0)?, cx.input(1)?, &dys[0]);
                let gx = if cx.needs(0) { Some($gx) } else { None };
                let gy = if cx.needs(1) { Some($gy) } else { None };
                Ok(grads![gx, gy])
            }
        }
    };
}

safe_binary!(
    /// `x * log(y)`, 0 where `x` is 0 (whatever `y`). TF equivalent: `tf.math.xlogy`.
    /// Gradient (TF's): `xlogy(x != 0, y)` to `x` (so 0 where `x` is 0) and `xdivy(x, y)`
    /// to `y`.
    xlogy, Xlogy, "Xlogy", |p, q| if p.is_zero() { Zero::zero() } else { p * q.ln() },
    vjp |x, y, dy| (
        multiply(dy, &conj(&xlogy(&not_zero(x)?, y)?)?)?,
        multiply(dy, &conj(&xdivy(x, y)?)?)?
    )
);

safe_binary!(
    /// `x / y`, 0 where `x` is 0 (whatever `y`). TF equivalent: `tf.math.xdivy`.
    /// Gradient (TF's): `xdivy(x != 0, y)` to `x` and `xdivy(-x, y²)` to `y`.
    xdivy, Xdivy, "Xdivy", |p, q| if p.is_zero() { Zero::zero() } else { p / q },
    vjp |x, y, dy| (
        multiply(dy, &conj(&xdivy(&not_zero(x)?, y)?)?)?,
        multiply(dy, &conj(&xdivy(&neg(x)?, &square(y)?)?)?)?
    )
);

safe_binary!(
    /// `x * log(1 + y)`, 0 where `x` is 0 (whatever `y`). TF equivalent:
    /// `tf.math.xlog1py`. Gradient (TF's): `xlog1py(x != 0, y)` to `x` and
    /// `xdivy(x, 1 + y)` to `y`.
    xlog1py, Xlog1py, "Xlog1py", |p, q| if p.is_zero() { Zero::zero() } else { p * Log1pFn::log1p_(q) },
    vjp |x, y, dy| (
        multiply(dy, &conj(&xlog1py(&not_zero(x)?, y)?)?)?,
        multiply(dy, &conj(&xdivy(x, &add(&scalar_like(y, 1.0), y)?)?)?)?
    )
);

safe_binary!(
    /// `x / y`, 0 where `y` is 0 (whatever `x`). TF equivalent: `tf.math.divide_no_nan`.
    /// Gradient (TF's DivNoNan): `divide_no_nan(dy, conj(y))` to `x` and
    /// `dy conj(divide_no_nan(divide_no_nan(-x, y), y))` to `y`.
    divide_no_nan, DivNoNan, "DivNoNan", |p, q| if q.is_zero() { Zero::zero() } else { p / q },
    vjp |x, y, dy| (
        divide_no_nan(dy, &conj(y)?)?,
        multiply(dy, &conj(&divide_no_nan(&divide_no_nan(&neg(x)?, y)?, y)?)?)?
    )
);

/// ψ⁽ᵃ⁾(x), the `a`-th derivative of digamma, for a non-negative integer order `a` of
/// `x`'s dtype (NaN for any other). TF equivalent: `tf.math.polygamma`. Gradient:
/// `dy ψ⁽ᵃ⁺¹⁾(x)` to `x`, none to `a` (as TF).
pub fn polygamma_t(a: &Tensor, x: &Tensor) -> Result<Tensor> {
    let out = Tensor::new(
        map_pair!("Polygamma", a.data(), x.data(), [F32, F64] via [F16],
        p, q => zip("Polygamma", p, q, SpecialFn::polygamma_)?),
    );
    binary_out(Polygamma, a, x, out)
}
struct Polygamma;
impl Op for Polygamma {
    fn name(&self) -> &'static str {
        "Polygamma"
    }
    fn batched(&self) -> bool {
        true
    }
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        super::elementwise_jvp(cx, tangents)
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let gx = if cx.needs(1) {
            let a = cx.input(0)?;
            let a1 = add(a, &scalar_like(a, 1.0))?;
            Some(multiply(&dys[0], &polygamma_t(&a1, cx.input(1)?)?)?)
        } else {
            None
        };
        Ok(grads![None, gx])
    }
}

/// The Python functions of this family (see `src/ops/README.md`).
#[cfg(feature = "python")]
pub(super) mod python {
    use crate::python::binding::*;

    expose! {
        /// Elementwise inverse hyperbolic cosine. TF equivalent: ``tf.math.acosh``.
        ///
        /// >>> print(gt.math.acosh(gt.constant([1.0, 2.0])))
        /// gt.Tensor([0.       1.316958], shape=(2,), dtype=float32)
        unary acosh = ops::acosh, in [gt, math];
        /// Elementwise inverse hyperbolic sine. TF equivalent: ``tf.math.asinh``.
        ///
        /// >>> print(gt.math.asinh(gt.constant([0.0, 1.0])))
        /// gt.Tensor([0.        0.8813736], shape=(2,), dtype=float32)
        unary asinh = ops::asinh, in [gt, math];
        /// Elementwise inverse hyperbolic tangent. TF equivalent: ``tf.math.atanh``.
        ///
        /// >>> print(gt.math.atanh(gt.constant([0.0, 0.5])))
        /// gt.Tensor([0.         0.54930615], shape=(2,), dtype=float32)
        unary atanh = ops::atanh, in [gt, math];
        /// Elementwise complementary error function ``1 - erf(x)``. TF equivalent:
        /// ``tf.math.erfc``.
        ///
        /// >>> print(gt.math.erfc(gt.constant([0.0, 1.0])))
        /// gt.Tensor([1.        0.1572992], shape=(2,), dtype=float32)
        unary erfc = ops::erfc, in [math];
        /// Elementwise ``log(|Gamma(x)|)``. TF equivalent: ``tf.math.lgamma``.
        ///
        /// >>> print(gt.math.lgamma(gt.constant([0.5, 3.0])))
        /// gt.Tensor([0.5723649 0.6931472], shape=(2,), dtype=float32)
        unary lgamma = ops::lgamma, in [math];
        /// Elementwise digamma function, the derivative of ``lgamma``. TF equivalent:
        /// ``tf.math.digamma``.
        ///
        /// >>> print(gt.math.digamma(gt.constant([1.0, 2.0])))
        /// gt.Tensor([-0.5772157   0.42278433], shape=(2,), dtype=float32)
        unary digamma = ops::digamma_t, in [math];
        /// Elementwise ``log(sigmoid(x))``, computed as ``-softplus(-x)``. TF equivalent:
        /// ``tf.math.log_sigmoid``.
        ///
        /// >>> print(gt.math.log_sigmoid(gt.constant([0.0, 2.0])))
        /// gt.Tensor([-0.6931472 -0.126928 ], shape=(2,), dtype=float32)
        unary log_sigmoid = ops::log_sigmoid, in [math];
        /// Elementwise ``1 / x``, 0 where ``x`` is 0. TF equivalent:
        /// ``tf.math.reciprocal_no_nan``.
        ///
        /// >>> print(gt.math.reciprocal_no_nan(gt.constant([2.0, 0.0])))
        /// gt.Tensor([0.5 0. ], shape=(2,), dtype=float32)
        unary reciprocal_no_nan = ops::reciprocal_no_nan, in [math];
        /// Elementwise: whether ``x`` is finite. TF equivalent: ``tf.math.is_finite``.
        ///
        /// >>> print(gt.math.is_finite(gt.constant([1.0, float("inf"), float("nan")])))
        /// gt.Tensor([ True False False], shape=(3,), dtype=bool)
        unary is_finite = ops::is_finite, in [math];
        /// Elementwise: whether ``x`` is NaN. TF equivalent: ``tf.math.is_nan``.
        ///
        /// >>> print(gt.math.is_nan(gt.constant([1.0, float("inf"), float("nan")])))
        /// gt.Tensor([False False  True], shape=(3,), dtype=bool)
        unary is_nan = ops::is_nan, in [math];
        /// Elementwise: whether ``x`` is +inf or -inf. TF equivalent: ``tf.math.is_inf``.
        ///
        /// >>> print(gt.math.is_inf(gt.constant([1.0, float("-inf"), float("nan")])))
        /// gt.Tensor([False  True False], shape=(3,), dtype=bool)
        unary is_inf = ops::is_inf, in [math];
        /// Elementwise nearest integer, halves to even. TF equivalent: ``tf.math.rint``.
        ///
        /// >>> print(gt.math.rint(gt.constant([0.5, 1.5, -1.7])))
        /// gt.Tensor([ 0.  2. -2.], shape=(3,), dtype=float32)
        unary rint = ops::rint, in [math];
        /// Elementwise ``x * log(y)``, 0 where ``x`` is 0. TF equivalent: ``tf.math.xlogy``.
        ///
        /// >>> print(gt.math.xlogy(gt.constant([0.0, 2.0]), gt.constant([0.0, 1.0])))
        /// gt.Tensor([0. 0.], shape=(2,), dtype=float32)
        binary xlogy = ops::xlogy, in [math];
        /// Elementwise ``x / y``, 0 where ``x`` is 0. TF equivalent: ``tf.math.xdivy``.
        ///
        /// >>> print(gt.math.xdivy(gt.constant([0.0, 3.0]), gt.constant([0.0, 2.0])))
        /// gt.Tensor([0.  1.5], shape=(2,), dtype=float32)
        binary xdivy = ops::xdivy, in [math];
        /// Elementwise ``x * log1p(y)``, 0 where ``x`` is 0. TF equivalent:
        /// ``tf.math.xlog1py``.
        ///
        /// >>> print(gt.math.xlog1py(gt.constant([0.0, 2.0]), gt.constant([-1.0, 0.0])))
        /// gt.Tensor([0. 0.], shape=(2,), dtype=float32)
        binary xlog1py = ops::xlog1py, in [math];
        /// Elementwise ``x / y``, 0 where ``y`` is 0. TF equivalent:
        /// ``tf.math.divide_no_nan``.
        ///
        /// >>> print(gt.math.divide_no_nan(gt.constant([1.0, 3.0]), gt.constant([0.0, 2.0])))
        /// gt.Tensor([0.  1.5], shape=(2,), dtype=float32)
        binary divide_no_nan = ops::divide_no_nan, in [math];
        /// Elementwise ``a``-th derivative of the digamma function (``a`` a non-negative
        /// integer of ``x``'s dtype). TF equivalent: ``tf.math.polygamma``.
        ///
        /// >>> print(gt.math.polygamma(gt.constant([0.0, 1.0]), gt.constant([1.0, 1.0])))
        /// gt.Tensor([-0.5772157  1.644934 ], shape=(2,), dtype=float32)
        binary polygamma = ops::polygamma_t, in [math];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testutil::{close, grad, t64, vals};

    #[test]
    fn special_functions_match_known_values() {
        // ψ(1) = -γ, ψ(1/2) = -γ - 2 ln 2, ψ(-1.5) = 0.70315664...
        let g = 0.5772156649015329;
        assert!((digamma(1.0) + g).abs() < 1e-15);
        assert!((digamma(0.5) + g + 2.0 * std::f64::consts::LN_2).abs() < 1e-14);
        assert!((digamma(-1.5) - 0.7031566406452432).abs() < 1e-13);
        assert!(digamma(0.0).is_nan() && digamma(-2.0).is_nan());
        // ψ⁽¹⁾(1) = π²/6, ψ⁽²⁾(1) = -2 ζ(3).
        let pi2 = std::f64::consts::PI.powi(2);
        assert!((polygamma(1.0, 1.0) - pi2 / 6.0).abs() < 1e-14);
        assert!((polygamma(2.0, 1.0) + 2.0 * 1.2020569031595942).abs() < 1e-13);
        assert!(polygamma(0.5, 1.0).is_nan());
        assert!((zeta(2.0, 2.0) - (pi2 / 6.0 - 1.0)).abs() < 1e-14);
    }

    #[test]
    fn zero_safe_binary_ops_follow_tf_at_zero() {
        let x = t64(&[0., 1., 2.], &[3]);
        let y = t64(&[0., 0., 3.], &[3]);
        let v = vals(&xlogy(&x, &y).unwrap());
        assert_eq!(v[0], 0.0);
        assert_eq!(v[1], f64::NEG_INFINITY);
        close(&v[2..], &[2.0 * 3f64.ln()]);
        close(&vals(&divide_no_nan(&x, &y).unwrap()), &[0., 0., 2.0 / 3.0]);
        // TF: xlogy's gradient at x = 0 is 0 for both inputs.
        let gx = grad(&x, None, |x| xlogy(x, &y).unwrap());
        assert_eq!(gx[0], 0.0);
        let gy = grad(&y, None, |y| xlogy(&x, y).unwrap());
        assert_eq!(gy[0], 0.0);
        close(&gy[2..], &[2.0 / 3.0]);
        let gy = grad(&y, None, |y| divide_no_nan(&x, y).unwrap());
        close(&gy, &[0., 0., -2.0 / 9.0]);
    }
}
