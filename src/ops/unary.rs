//! Unary elementwise math and activations.
//!
//! Each rule is written in public ops, so it is differentiable again. Kinks follow
//! TF: `relu'(0) = 0`, `abs'(0) = 0` (through `sign`).

use num_complex::Complex;
use num_traits::Inv;

use super::{fused_grad, grads, unary_out, Grads, Op, Saves, VjpCx};
use crate::error::Result;
use crate::kernels::elementwise::{map, map_chunks};
use crate::kernels::vmath::VMath;
use crate::ops::{
    add, divide, greater, less, multiply, multiply_no_nan, subtract, where_, zeros_like,
};
use crate::tensor::Tensor;

/// A rank-0 constant of `x`'s dtype.
pub(crate) fn scalar_like(x: &Tensor, v: f64) -> Tensor {
    crate::tensor::scalar_of(v, x.dtype())
}

macro_rules! unary_op {
    (
        $(#[$doc:meta])*
        $fname:ident, $S:ident, $tf:literal, [$($dt:ident),*] $(via [$($nw:ident),+])?, |$v:ident| $kernel:expr,
        saves $saves:expr, vjp |$cx:ident, $dy:ident| $vjp:expr
    ) => {
        unary_op!(
            $(#[$doc])*
            $fname, $S, $tf, [$($dt),*] $(via [$($nw),+])?, kernel |a| map(a, |$v| $kernel)?,
            saves $saves, vjp |$cx, $dy| $vjp
        );
    };
    (
        $(#[$doc:meta])*
        $fname:ident, $S:ident, $tf:literal, [$($dt:ident),*] $(via [$($nw:ident),+])?, kernel |$a:ident| $apply:expr,
        saves $saves:expr, vjp |$cx:ident, $dy:ident| $vjp:expr
    ) => {
        $(#[$doc])*
        pub fn $fname(x: &Tensor) -> Result<Tensor> {
            let out = Tensor::new(map_dtypes!($tf, x.data(), [$($dt),*] $(via [$($nw),+])?, $a => $apply));
            unary_out($S, x, out)
        }
        struct $S;
        impl Op for $S {
            fn name(&self) -> &'static str {
                $tf
            }
            fn batched(&self) -> bool {
                true
            }
            fn saves(&self) -> Saves {
                $saves
            }
            fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
                super::elementwise_jvp(cx, tangents)
            }
            #[allow(unused_variables)]
            fn vjp(&self, $cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
                let $dy = &dys[0];
                Ok(grads![Some($vjp)])
            }
        }
    };
}

unary_op!(
    /// `-x`. TF equivalent: `tf.math.negative`.
    neg, Neg, "Neg", [F32, F64, I32, I64, C64, C128] via [F16, I8, I16], |v| -v,
    saves Saves::NOTHING, vjp |cx, dy| neg(dy)?
);

/// TF equivalent: `tf.math.negative`.
pub fn negative(x: &Tensor) -> Result<Tensor> {
    neg(x)
}

/// Complex conjugate; the input itself for real dtypes. TF equivalent: `tf.math.conj`.
pub fn conj(x: &Tensor) -> Result<Tensor> {
    if !x.dtype().is_complex() {
        return Ok(x.clone());
    }
    conj_complex(x)
}
unary_op!(
    conj_complex, Conj, "Conj", [C64, C128], |v| v.conj(),
    saves Saves::NOTHING, vjp |cx, dy| conj(dy)?
);

unary_op!(
    /// `|x|` for real dtypes. TF equivalent: `tf.math.abs`. Gradient `dy*sign(x)` (0 at 0).
    abs_real, Abs, "Abs", [F32, F64, I32, I64] via [F16, I8, I16], |v| if v < Default::default() { -v } else { v },
    saves Saves::INPUTS, vjp |cx, dy| multiply(dy, &sign(cx.input(0)?)?)?
);

/// `|x|`; for complex inputs the modulus (a real tensor). TF equivalent: `tf.math.abs`.
pub fn abs(x: &Tensor) -> Result<Tensor> {
    if x.dtype().is_complex() {
        crate::ops::complex_abs(x)
    } else {
        abs_real(x)
    }
}

/// `log1p`, `asin`, `atan` and `sigmoid` element kernels: the real ones, and complex ones
/// where the real formula does not carry over.
pub(crate) trait Log1pFn: Copy {
    fn log1p_(self) -> Self;
}
impl Log1pFn for f32 {
    #[inline(always)]
    fn log1p_(self) -> f32 {
        self.ln_1p()
    }
}
impl Log1pFn for f64 {
    #[inline(always)]
    fn log1p_(self) -> f64 {
        self.ln_1p()
    }
}
impl<T: num_traits::Float> Log1pFn for Complex<T> {
    /// `log(1 + z)` without the cancellation of `1 + z` near 0: the real part is
    /// `log1p(2x + x² + y²) / 2`, the imaginary part `atan2(y, 1 + x)`.
    fn log1p_(self) -> Self {
        let (x, y) = (self.re, self.im);
        let two = T::one() + T::one();
        Complex::new(
            (two * x + x * x + y * y).ln_1p() / two,
            y.atan2(T::one() + x),
        )
    }
}

/// For complex numbers asin and atan go through the accurate `log1p`, so that small
/// arguments keep their digits (num_complex's `ln(iz + sqrt(1 - z²))` loses them).
trait AsinFn: Copy {
    fn asin_(self) -> Self;
    fn atan_(self) -> Self;
}
macro_rules! real_asin {
    ($($t:ty),*) => {$(
        impl AsinFn for $t {
            #[inline(always)]
            fn asin_(self) -> Self {
                self.asin()
            }
            #[inline(always)]
            fn atan_(self) -> Self {
                self.atan()
            }
        }
    )*};
}
real_asin!(f32, f64);
impl<T: num_traits::Float> AsinFn for Complex<T> {
    /// `-i log1p(iz - z² / (1 + sqrt(1 - z²)))` (= `-i log(iz + sqrt(1 - z²))`).
    fn asin_(self) -> Self {
        let (one, i) = (
            Complex::new(T::one(), T::zero()),
            Complex::new(T::zero(), T::one()),
        );
        let z2 = self * self;
        let w = i * self - z2 / (one + (one - z2).sqrt());
        -i * w.log1p_()
    }
    /// `(log1p(iz) - log1p(-iz)) / 2i`.
    fn atan_(self) -> Self {
        let i = Complex::new(T::zero(), T::one());
        let two_i = i + i;
        ((i * self).log1p_() - (-(i * self)).log1p_()) / two_i
    }
}

pub(crate) trait SigmoidFn: Copy {
    fn sigmoid_(self) -> Self;
}
macro_rules! real_sigmoid {
    ($($t:ty),*) => {$(
        impl SigmoidFn for $t {
            #[inline(always)]
            fn sigmoid_(self) -> Self {
                // Stable on both tails: exponentiates only -|v|. Branch-free, so it
                // vectorizes.
                let e = (-self.abs()).vexp();
                let r = 1.0 / (1.0 + e);
                if self >= 0.0 { r } else { e * r }
            }
        }
    )*};
}
real_sigmoid!(f32, f64);
impl<T: num_traits::Float> SigmoidFn for Complex<T>
where
    Complex<T>: VMath,
{
    /// `1 / (1 + e^(-z))`, as TF's complex Sigmoid.
    fn sigmoid_(self) -> Self {
        let one = Complex::new(T::one(), T::zero());
        one / (one + (-self).vexp())
    }
}

/// Sign: -1, 0 or 1 for real numbers (gradient: zeros), `z / |z|` for complex ones and 0
/// at 0, composed as TF's `tf.math.sign` does (`div_no_nan(z, |z|)`), with that
/// composition's gradient (0 at 0). TF equivalent: `tf.math.sign`.
pub fn sign(x: &Tensor) -> Result<Tensor> {
    if !x.dtype().is_complex() {
        return sign_real(x);
    }
    let a = abs(x)?;
    let zero = crate::ops::equal(&a, &zeros_like(&a)?)?;
    let safe = crate::ops::cast(&where_(&zero, &scalar_like(&a, 1.0), &a)?, x.dtype())?;
    where_(&zero, &zeros_like(x)?, &divide(x, &safe)?)
}

unary_op!(
    /// Sign (-1, 0, 1) of real numbers. Gradient: zeros.
    sign_real, Sign, "Sign", [F32, F64, I32, I64] via [F16], |v| {
        let z = Default::default();
        let one = num_traits::one();
        if v > z { one } else if v < z { z - one } else { z }
    },
    saves Saves::NOTHING, vjp |cx, dy| zeros_like(dy)?
);

unary_op!(
    /// `x²`. TF equivalent: `tf.math.square`. Gradient `dy * 2 conj(x)`.
    square, Square, "Square", [F32, F64, I32, I64, U64, C64, C128] via [F16, I8, I16, U8, U16, U32], |v| v * v,
    saves Saves::INPUTS,
    vjp |cx, dy| multiply(dy, &multiply(&scalar_like(dy, 2.0), &conj(cx.input(0)?)?)?)?
);

unary_op!(
    /// `√x`. TF equivalent: `tf.math.sqrt`. Gradient `dy * 0.5 / conj(y)`, 0 where `dy`
    /// is 0 (also at `x = 0`, as TF's SqrtGrad).
    sqrt, Sqrt, "Sqrt", [F32, F64, C64, C128] via [F16], |v| v.sqrt(),
    saves Saves::OUTPUT,
    vjp |cx, dy| multiply_no_nan(&divide(&scalar_like(dy, 0.5), &conj(cx.output(0)?)?)?, dy)?
);

unary_op!(
    /// `1/√x`. TF equivalent: `tf.math.rsqrt`. Gradient `-0.5 dy conj(y)³`, 0 where `dy`
    /// is 0 (as TF's RsqrtGrad).
    rsqrt, Rsqrt, "Rsqrt", [F32, F64, C64, C128] via [F16], |v| v.sqrt().inv(),
    saves Saves::OUTPUT,
    vjp |cx, dy| {
        let y = conj(cx.output(0)?)?;
        let k = multiply(&scalar_like(dy, -0.5), &multiply(&y, &multiply(&y, &y)?)?)?;
        multiply_no_nan(&k, dy)?
    }
);

unary_op!(
    /// `1/x`. TF equivalent: `tf.math.reciprocal`. Gradient `-dy conj(y)²`, 0 where `dy`
    /// is 0 (as TF's InvGrad).
    reciprocal, Reciprocal, "Reciprocal", [F32, F64, C64, C128] via [F16], |v| v.inv(),
    saves Saves::OUTPUT,
    vjp |cx, dy| {
        let y = conj(cx.output(0)?)?;
        multiply_no_nan(&neg(&multiply(&y, &y)?)?, dy)?
    }
);

unary_op!(
    /// `eˣ`. TF equivalent: `tf.math.exp`. Gradient `dy * conj(y)`.
    exp, Exp, "Exp", [F32, F64, C64, C128] via [F16], |v| v.vexp(),
    saves Saves::OUTPUT, vjp |cx, dy| multiply(dy, &conj(cx.output(0)?)?)?
);

unary_op!(
    /// `eˣ - 1`. TF equivalent: `tf.math.expm1`. Gradient `dy * conj(eˣ)`.
    expm1, Expm1, "Expm1", [F32, F64, C64, C128] via [F16], |v| v.vexpm1(),
    saves Saves::INPUTS, vjp |cx, dy| multiply(dy, &conj(&exp(cx.input(0)?)?)?)?
);

unary_op!(
    /// Natural logarithm. TF equivalent: `tf.math.log`. Gradient `dy / conj(x)`.
    log, Log, "Log", [F32, F64, C64, C128] via [F16], |v| v.ln(),
    saves Saves::INPUTS, vjp |cx, dy| divide(dy, &conj(cx.input(0)?)?)?
);

unary_op!(
    /// `log(1 + x)`. TF equivalent: `tf.math.log1p`. Gradient `dy / (1 + conj(x))`.
    log1p, Log1p, "Log1p", [F32, F64, C64, C128] via [F16], |v| Log1pFn::log1p_(v),
    saves Saves::INPUTS,
    vjp |cx, dy| divide(dy, &add(&scalar_like(dy, 1.0), &conj(cx.input(0)?)?)?)?
);

unary_op!(
    /// Sine. TF equivalent: `tf.math.sin`. Gradient `dy * conj(cos x)`.
    sin, Sin, "Sin", [F32, F64, C64, C128] via [F16],
    // SAFETY: the chunk kernels write every element.
    kernel |a| unsafe { map_chunks(a, VMath::sin_chunk) }?,
    saves Saves::INPUTS,
    vjp |cx, dy| {
        let x = cx.input(0)?;
        match fused_trig(dy, x, VMath::cos_chunk, 1.0)? {
            Some(g) => g,
            None => multiply(dy, &conj(&cos(x)?)?)?,
        }
    }
);

unary_op!(
    /// Cosine. TF equivalent: `tf.math.cos`. Gradient `-dy * conj(sin x)`.
    cos, Cos, "Cos", [F32, F64, C64, C128] via [F16],
    // SAFETY: the chunk kernels write every element.
    kernel |a| unsafe { map_chunks(a, VMath::cos_chunk) }?,
    saves Saves::INPUTS,
    vjp |cx, dy| {
        let x = cx.input(0)?;
        match fused_trig(dy, x, VMath::sin_chunk, -1.0)? {
            Some(g) => g,
            None => neg(&multiply(dy, &conj(&sin(x)?)?)?)?,
        }
    }
);

unary_op!(
    /// Tangent. TF equivalent: `tf.math.tan`. Gradient `dy / cos²x`.
    tan, Tan, "Tan", [F32, F64, C64, C128] via [F16], |v| v.tan(),
    saves Saves::INPUTS,
    vjp |cx, dy| {
        let sec = reciprocal(&cos(cx.input(0)?)?)?;
        multiply(dy, &conj(&square(&sec)?)?)?
    }
);

unary_op!(
    /// Arcsine. TF equivalent: `tf.math.asin`. Gradient `dy / conj(√(1-x²))`.
    asin, Asin, "Asin", [F32, F64, C64, C128] via [F16], |v| AsinFn::asin_(v),
    saves Saves::INPUTS,
    vjp |cx, dy| {
        let x = cx.input(0)?;
        divide(dy, &conj(&sqrt(&subtract(&scalar_like(x, 1.0), &square(x)?)?)?)?)?
    }
);

unary_op!(
    /// Arccosine. TF equivalent: `tf.math.acos`. Gradient `-dy / conj(√(1-x²))`.
    acos, Acos, "Acos", [F32, F64, C64, C128] via [F16], |v| v.acos(),
    saves Saves::INPUTS,
    vjp |cx, dy| {
        let x = cx.input(0)?;
        neg(&divide(dy, &conj(&sqrt(&subtract(&scalar_like(x, 1.0), &square(x)?)?)?)?)?)?
    }
);

unary_op!(
    /// Arctangent. TF equivalent: `tf.math.atan`. Gradient `dy / conj(1+x²)`.
    atan, Atan, "Atan", [F32, F64, C64, C128] via [F16], |v| AsinFn::atan_(v),
    saves Saves::INPUTS,
    vjp |cx, dy| {
        let x = cx.input(0)?;
        divide(dy, &conj(&add(&scalar_like(x, 1.0), &square(x)?)?)?)?
    }
);

unary_op!(
    /// Hyperbolic sine. TF equivalent: `tf.math.sinh`. Gradient `dy * conj(cosh x)`.
    sinh, Sinh, "Sinh", [F32, F64, C64, C128] via [F16], |v| v.sinh(),
    saves Saves::INPUTS, vjp |cx, dy| multiply(dy, &conj(&cosh(cx.input(0)?)?)?)?
);

unary_op!(
    /// Hyperbolic cosine. TF equivalent: `tf.math.cosh`. Gradient `dy * conj(sinh x)`.
    cosh, Cosh, "Cosh", [F32, F64, C64, C128] via [F16], |v| v.cosh(),
    saves Saves::INPUTS, vjp |cx, dy| multiply(dy, &conj(&sinh(cx.input(0)?)?)?)?
);

unary_op!(
    /// Hyperbolic tangent. TF equivalent: `tf.math.tanh`. Gradient `dy (1 - y²)`.
    tanh, Tanh, "Tanh", [F32, F64, C64, C128] via [F16], |v| v.vtanh(),
    saves Saves::OUTPUT,
    vjp |cx, dy| {
        let y = cx.output(0)?;
        match fused_grad!(dy, y, |d, y| d * (1.0 - y * y))? {
            Some(g) => g,
            None => {
                let y = conj(y)?;
                multiply(dy, &subtract(&scalar_like(dy, 1.0), &multiply(&y, &y)?)?)?
            }
        }
    }
);

unary_op!(
    /// Logistic sigmoid. TF equivalent: `tf.math.sigmoid` / `tf.nn.sigmoid`.
    /// Gradient `dy conj(y (1 - y))`.
    sigmoid, Sigmoid, "Sigmoid", [F32, F64, C64, C128] via [F16], |v| SigmoidFn::sigmoid_(v),
    saves Saves::OUTPUT,
    vjp |cx, dy| {
        let y = cx.output(0)?;
        match fused_grad!(dy, y, |d, y| d * (y * (1.0 - y)))? {
            Some(g) => g,
            None => {
                let y = conj(y)?;
                multiply(dy, &multiply(&y, &subtract(&scalar_like(&y, 1.0), &y)?)?)?
            }
        }
    }
);

unary_op!(
    /// Error function. TF equivalent: `tf.math.erf`. Gradient `dy 2/√π e^(-x²)`.
    erf, Erf, "Erf", [F32, F64] via [F16], |v| ErfFn::erf(v),
    saves Saves::INPUTS,
    vjp |cx, dy| {
        let x = cx.input(0)?;
        let k = scalar_like(x, std::f64::consts::FRAC_2_SQRT_PI);
        multiply(dy, &multiply(&k, &exp(&neg(&square(x)?)?)?)?)?
    }
);

/// `erf` on both float widths through libm.
trait ErfFn {
    fn erf(self) -> Self;
}
impl ErfFn for f32 {
    fn erf(self) -> f32 {
        libm::erff(self)
    }
}
impl ErfFn for f64 {
    fn erf(self) -> f64 {
        libm::erf(self)
    }
}

unary_op!(
    /// Rectified linear unit. TF equivalent: `tf.nn.relu`. Gradient `dy` where
    /// `y > 0`, else 0 (so 0 at the kink, as TF).
    relu, Relu, "Relu", [F32, F64, I32, I64, U64] via [F16, I8, I16, U8, U16, U32], |v| if v > Default::default() { v } else { Default::default() },
    saves Saves::OUTPUT,
    vjp |cx, dy| {
        let y = cx.output(0)?;
        match fused_grad!(dy, y, |d, y| if y > 0.0 { d } else { 0.0 })? {
            Some(g) => g,
            None => add(
                &where_(&greater(y, &zeros_like(y)?)?, dy, &zeros_like(dy)?)?,
                &connected_zero(y)?,
            )?,
        }
    }
);

unary_op!(
    /// Exponential linear unit. TF equivalent: `tf.nn.elu`. Gradient `dy (y + 1)` where
    /// `y < 0`, else `dy` (TF's EluGrad; at 0 both give `dy`, and the second derivative
    /// there is 0, as TF's EluGradGrad).
    elu, Elu, "Elu", [F32, F64] via [F16], |v| if v > 0.0 { v } else { v.vexpm1() },
    saves Saves::OUTPUT,
    vjp |cx, dy| {
        let y = cx.output(0)?;
        match fused_grad!(dy, y, |d, y| if y < 0.0 { d * (y + 1.0) } else { d })? {
            Some(g) => g,
            None => {
                let neg_branch = multiply(dy, &add(y, &scalar_like(y, 1.0))?)?;
                where_(&less(y, &zeros_like(y)?)?, &neg_branch, dy)?
            }
        }
    }
);

unary_op!(
    /// `log(1 + eˣ)`, computed stably. TF equivalent: `tf.math.softplus` /
    /// `tf.nn.softplus`. Gradient `dy sigmoid(x)`.
    softplus, Softplus, "Softplus", [F32, F64] via [F16], |v| {
        if v > 0.0 { v + (-v).exp().ln_1p() } else { v.exp().ln_1p() }
    },
    saves Saves::INPUTS, vjp |cx, dy| multiply(dy, &sigmoid(cx.input(0)?)?)?
);

unary_op!(
    /// `x / (1 + |x|)`. TF equivalent: `tf.nn.softsign`. Gradient `dy / (1+|x|)²`.
    softsign, Softsign, "Softsign", [F32, F64] via [F16], |v| v / (1.0 + v.abs()),
    saves Saves::INPUTS,
    vjp |cx, dy| {
        let x = cx.input(0)?;
        divide(dy, &square(&add(&scalar_like(x, 1.0), &abs(x)?)?)?)?
    }
);

/// Returns `x` under a new identity, recorded with gradient `dy`.
/// TF equivalent: `tf.identity`.
pub fn identity(x: &Tensor) -> Result<Tensor> {
    unary_out(Identity, x, x.fresh())
}
struct Identity;
impl Op for Identity {
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "Identity"
    }
    fn jvp(&self, _cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        Some(
            tangents[0]
                .as_ref()
                .map(identity)
                .transpose()
                .map(|t| grads![t]),
        )
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn vjp(&self, _cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        Ok(grads![Some(dys[0].clone())])
    }
    fn passes_sparse(&self) -> bool {
        true
    }
}

/// Zeros shaped like `t`, recorded as depending on `t` with a zero gradient. A mask
/// rule (relu's `where(y > 0, dy, 0)`) adds it so that, as TF's ReluGrad does for its
/// features input, the input gets a zero second derivative instead of none. (The product
/// with 0 ignores an infinite `t`: its value is 0 everywhere.)
pub(crate) fn connected_zero(t: &Tensor) -> Result<Tensor> {
    multiply_no_nan(t, &zeros_like(t)?)
}

/// Returns `x` under a new identity that no tape records: gradients stop here.
/// TF equivalent: `tf.stop_gradient`.
pub fn stop_gradient(x: &Tensor) -> Result<Tensor> {
    let out = x.fresh();
    if crate::tape::provenance::enabled() {
        crate::tape::provenance::note("StopGradient", &[x.id()], &[&out]);
    }
    Ok(out)
}

macro_rules! rounding {
    ($(#[$doc:meta])* $fname:ident, $tf:literal, |$v:ident| $kernel:expr) => {
        $(#[$doc])*
        pub fn $fname(x: &Tensor) -> Result<Tensor> {
            if x.dtype().is_integer() {
                return Ok(x.fresh());
            }
            // Not recorded: TF registers no gradient for this op (see `nondiff.rs`).
            Ok(Tensor::new(map_dtypes!($tf, x.data(), [F32, F64] via [F16], a => map(a, |$v| $kernel)?)))
        }
    };
}

rounding!(
    /// Rounds half to even ("banker's rounding"). TF equivalent: `tf.math.round`.
    /// Gradient: None.
    round, "Round", |v| v.round_ties_even()
);
rounding!(
    /// Largest integer not greater than `x`. TF equivalent: `tf.math.floor`.
    /// Gradient: None.
    floor, "Floor", |v| v.floor()
);
rounding!(
    /// Smallest integer not less than `x`. TF equivalent: `tf.math.ceil`.
    /// Gradient: None.
    ceil, "Ceil", |v| v.ceil()
);

/// Clamps `t` to `[clip_value_min, clip_value_max]`. TF equivalent:
/// `tf.clip_by_value`, composed as TF does (`maximum(minimum(t, hi), lo)`), so the
/// gradient goes to `t` where `lo <= t <= hi` and to the bound that clipped elsewhere.
pub fn clip_by_value(
    t: &Tensor,
    clip_value_min: &Tensor,
    clip_value_max: &Tensor,
) -> Result<Tensor> {
    let out = crate::ops::maximum(&crate::ops::minimum(t, clip_value_max)?, clip_value_min)?;
    if out.shape() != t.shape() {
        return Err(crate::error::Error::invalid(
            "ClipByValue",
            format!(
                "clip bounds must broadcast to the shape of t {:?}, got {:?}",
                t.shape(),
                out.shape()
            ),
        ));
    }
    Ok(out)
}

/// Rescales `t` so that its L2 norm over `axes` (all by default) is at most
/// `clip_norm`. TF equivalent: `tf.clip_by_norm`, with TF's formula
/// `t * clip_norm / maximum(l2norm, clip_norm)` and its safe norm at zero.
pub fn clip_by_norm(t: &Tensor, clip_norm: &Tensor, axes: Option<&[isize]>) -> Result<Tensor> {
    use crate::ops::{maximum, ones_like, reduce_sum};
    // TF: a negative clip_norm counts as 0.
    let clip_norm = &maximum(clip_norm, &zeros_like(clip_norm)?)?;
    let l2sum = reduce_sum(&multiply(t, t)?, axes, true)?;
    let pred = greater(&l2sum, &zeros_like(&l2sum)?)?;
    let l2sum_safe = where_(&pred, &l2sum, &ones_like(&l2sum)?)?;
    let l2norm = where_(&pred, &sqrt(&l2sum_safe)?, &l2sum)?;
    let scaled = multiply(t, clip_norm)?;
    let out = divide(&scaled, &maximum(&l2norm, clip_norm)?)?;
    if out.shape() != t.shape() {
        return Err(crate::error::Error::invalid(
            "ClipByNorm",
            format!(
                "clip_norm must be a scalar, got shape {:?}",
                clip_norm.shape()
            ),
        ));
    }
    identity(&out)
}

/// The Python functions of this family: bindings and where they appear (see
/// `src/ops/README.md`).
#[cfg(feature = "python")]
pub(super) mod python {
    use crate::python::binding::*;

    /// ``t`` clipped elementwise to ``[clip_value_min, clip_value_max]``. TF equivalent:
    /// ``tf.clip_by_value``.
    ///
    /// >>> print(gt.clip_by_value(gt.constant([-2.0, 0.5, 3.0]), 0.0, 1.0))
    /// gt.Tensor([0.  0.5 1. ], shape=(3,), dtype=float32)
    #[pyfunction]
    #[pyo3(signature = (t, clip_value_min, clip_value_max, name=None))]
    fn clip_by_value(
        py: Python<'_>,
        t: &Bound<'_, PyAny>,
        clip_value_min: &Bound<'_, PyAny>,
        clip_value_max: &Bound<'_, PyAny>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let x = crate::python::convert::to_tensor(t, None)?;
        let lo = crate::python::convert::to_tensor(clip_value_min, Some(x.dtype()))?;
        let hi = crate::python::convert::to_tensor(clip_value_max, Some(x.dtype()))?;
        let f = |xs: &[Tensor]| ops::clip_by_value(&xs[0], &xs[1], &xs[2]);
        Ok(call_n(py, "ClipByValue", String::new, &[x, lo, hi], f)?.into())
    }

    /// ``t`` rescaled so its L2 norm (over ``axes``, or all elements) is at most ``clip_norm``.
    /// A ``gt.IndexedSlices`` stays one: its values are clipped by their own norm (as
    /// TF does, duplicate indices are not summed first). TF equivalent: ``tf.clip_by_norm``.
    ///
    /// >>> print(gt.clip_by_norm(gt.constant([3.0, 4.0]), 1.0))
    /// gt.Tensor([0.6 0.8], shape=(2,), dtype=float32)
    #[pyfunction]
    #[pyo3(signature = (t, clip_norm, axes=None, name=None))]
    fn clip_by_norm(
        py: Python<'_>,
        t: &Bound<'_, PyAny>,
        clip_norm: &Bound<'_, PyAny>,
        axes: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let _ = name;
        let cls = t.get_type();
        if cls.hasattr("_gt_dense_")? && cls.hasattr("indices")? {
            let values = t.getattr("values")?;
            let clipped = Py::new(py, clip_dense(py, &values, clip_norm, axes)?)?;
            let parts = (clipped, t.getattr("indices")?, t.getattr("dense_shape")?);
            return Ok(cls.call1(parts)?.unbind());
        }
        Ok(Py::new(py, clip_dense(py, t, clip_norm, axes)?)?.into_any())
    }

    /// `clip_by_norm` of a dense tensor (or anything that converts to one).
    fn clip_dense(
        py: Python<'_>,
        t: &Bound<'_, PyAny>,
        clip_norm: &Bound<'_, PyAny>,
        axes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let x = crate::python::convert::to_tensor(t, None)?;
        let c = crate::python::convert::to_tensor(clip_norm, Some(x.dtype()))?;
        let axes = axes_arg(axes)?;
        let key = || format!("{axes:?}");
        let owned = axes.clone();
        let f = move |x: &Tensor, c: &Tensor| ops::clip_by_norm(x, c, owned.as_deref());
        Ok(call2(py, "ClipByNorm", key, &x, &c, f)?.into())
    }

    expose! {
        /// Elementwise ``-x``. TF equivalent: ``tf.math.negative``.
        ///
        /// >>> print(gt.negative(gt.constant([-1.0, 0.0, 2.0])))
        /// gt.Tensor([ 1. -0. -2.], shape=(3,), dtype=float32)
        unary negative = ops::neg, in [gt, math];
        /// Elementwise absolute value (the modulus for complex ``x``, as a real tensor).
        /// TF equivalent: ``tf.math.abs``.
        ///
        /// >>> print(gt.abs(gt.constant([-1.0, 0.0, 2.0])))
        /// gt.Tensor([1. 0. 2.], shape=(3,), dtype=float32)
        unary abs = ops::abs, in [gt, math];
        /// Elementwise sign: -1, 0 or 1. TF equivalent: ``tf.math.sign``.
        ///
        /// >>> print(gt.sign(gt.constant([-1.0, 0.0, 2.0])))
        /// gt.Tensor([-1.  0.  1.], shape=(3,), dtype=float32)
        unary sign = ops::sign, in [gt, math];
        /// Elementwise ``x * x``. TF equivalent: ``tf.math.square``.
        ///
        /// >>> print(gt.square(gt.constant([-1.0, 0.0, 2.0])))
        /// gt.Tensor([1. 0. 4.], shape=(3,), dtype=float32)
        unary square = ops::square, in [gt, math];
        /// Elementwise square root. TF equivalent: ``tf.math.sqrt``.
        ///
        /// >>> print(gt.sqrt(gt.constant([0.0, 1.0, 4.0])))
        /// gt.Tensor([0. 1. 2.], shape=(3,), dtype=float32)
        unary sqrt = ops::sqrt, in [gt, math];
        /// Elementwise ``1 / sqrt(x)``. TF equivalent: ``tf.math.rsqrt``.
        ///
        /// >>> print(gt.rsqrt(gt.constant([1.0, 4.0])))
        /// gt.Tensor([1.  0.5], shape=(2,), dtype=float32)
        unary rsqrt = ops::rsqrt, in [gt, math];
        /// Elementwise ``1 / x``. TF equivalent: ``tf.math.reciprocal``.
        ///
        /// >>> print(gt.reciprocal(gt.constant([1.0, 2.0, 4.0])))
        /// gt.Tensor([1.   0.5  0.25], shape=(3,), dtype=float32)
        unary reciprocal = ops::reciprocal, in [gt, math];
        /// Elementwise ``e ** x``. TF equivalent: ``tf.math.exp``.
        ///
        /// >>> print(gt.exp(gt.constant([0.0, 1.0])))
        /// gt.Tensor([1.        2.7182817], shape=(2,), dtype=float32)
        unary exp = ops::exp, in [gt, math];
        /// Elementwise ``exp(x) - 1``, accurate near 0. TF equivalent: ``tf.math.expm1``.
        ///
        /// >>> print(gt.expm1(gt.constant([0.0, 1.0])))
        /// gt.Tensor([0.        1.7182817], shape=(2,), dtype=float32)
        unary expm1 = ops::expm1, in [gt, math];
        /// Elementwise natural logarithm. TF equivalent: ``tf.math.log``.
        ///
        /// >>> print(gt.log(gt.constant([1.0, 2.0])))
        /// gt.Tensor([0.        0.6931472], shape=(2,), dtype=float32)
        unary log = ops::log, in [gt, math];
        /// Elementwise ``log(1 + x)``, accurate near 0. TF equivalent: ``tf.math.log1p``.
        ///
        /// >>> print(gt.log1p(gt.constant([0.0, 1.0])))
        /// gt.Tensor([0.        0.6931472], shape=(2,), dtype=float32)
        unary log1p = ops::log1p, in [gt, math];
        /// Elementwise sine. TF equivalent: ``tf.math.sin``.
        ///
        /// >>> print(gt.sin(gt.constant([0.0, 1.0])))
        /// gt.Tensor([0.         0.84147096], shape=(2,), dtype=float32)
        unary sin = ops::sin, in [gt, math];
        /// Elementwise cosine. TF equivalent: ``tf.math.cos``.
        ///
        /// >>> print(gt.cos(gt.constant([0.0, 1.0])))
        /// gt.Tensor([1.        0.5403023], shape=(2,), dtype=float32)
        unary cos = ops::cos, in [gt, math];
        /// Elementwise tangent. TF equivalent: ``tf.math.tan``.
        ///
        /// >>> print(gt.tan(gt.constant([0.0, 1.0])))
        /// gt.Tensor([0.        1.5574077], shape=(2,), dtype=float32)
        unary tan = ops::tan, in [gt, math];
        /// Elementwise arcsine. TF equivalent: ``tf.math.asin``.
        ///
        /// >>> print(gt.asin(gt.constant([0.0, 1.0])))
        /// gt.Tensor([0.        1.5707964], shape=(2,), dtype=float32)
        unary asin = ops::asin, in [gt, math];
        /// Elementwise arccosine. TF equivalent: ``tf.math.acos``.
        ///
        /// >>> print(gt.acos(gt.constant([0.0, 1.0])))
        /// gt.Tensor([1.5707964 0.       ], shape=(2,), dtype=float32)
        unary acos = ops::acos, in [gt, math];
        /// Elementwise arctangent. TF equivalent: ``tf.math.atan``.
        ///
        /// >>> print(gt.atan(gt.constant([0.0, 1.0])))
        /// gt.Tensor([0.        0.7853982], shape=(2,), dtype=float32)
        unary atan = ops::atan, in [gt, math];
        /// Elementwise hyperbolic sine. TF equivalent: ``tf.math.sinh``.
        ///
        /// >>> print(gt.sinh(gt.constant([0.0, 1.0])))
        /// gt.Tensor([0.        1.1752012], shape=(2,), dtype=float32)
        unary sinh = ops::sinh, in [gt, math];
        /// Elementwise hyperbolic cosine. TF equivalent: ``tf.math.cosh``.
        ///
        /// >>> print(gt.cosh(gt.constant([0.0, 1.0])))
        /// gt.Tensor([1.        1.5430806], shape=(2,), dtype=float32)
        unary cosh = ops::cosh, in [gt, math];
        /// Elementwise hyperbolic tangent. TF equivalent: ``tf.math.tanh``.
        ///
        /// >>> print(gt.tanh(gt.constant([0.0, 1.0])))
        /// gt.Tensor([0.        0.7615942], shape=(2,), dtype=float32)
        unary tanh = ops::tanh, in [gt, math, nn];
        /// Elementwise logistic function ``1 / (1 + exp(-x))``. TF equivalent: ``tf.math.sigmoid``.
        ///
        /// >>> print(gt.sigmoid(gt.constant([0.0, 2.0])))
        /// gt.Tensor([0.5      0.880797], shape=(2,), dtype=float32)
        unary sigmoid = ops::sigmoid, in [gt, math, nn];
        /// Elementwise Gauss error function. TF equivalent: ``tf.math.erf``.
        ///
        /// >>> print(gt.erf(gt.constant([0.0, 1.0])))
        /// gt.Tensor([0.        0.8427008], shape=(2,), dtype=float32)
        unary erf = ops::erf, in [gt, math];
        /// Elementwise ``max(x, 0)``. TF equivalent: ``tf.nn.relu``.
        ///
        /// >>> print(gt.nn.relu(gt.constant([-1.0, 0.0, 2.0])))
        /// gt.Tensor([0. 0. 2.], shape=(3,), dtype=float32)
        unary relu = ops::relu, in [nn];
        /// Exponential linear unit: ``x`` if ``x > 0`` else ``exp(x) - 1``. TF equivalent:
        /// ``tf.nn.elu``.
        ///
        /// >>> print(gt.nn.elu(gt.constant([-1.0, 0.0, 2.0])))
        /// gt.Tensor([-0.63212055  0.          2.        ], shape=(3,), dtype=float32)
        unary elu = ops::elu, in [nn];
        /// Elementwise ``log(exp(x) + 1)``, computed stably. TF equivalent: ``tf.math.softplus``.
        ///
        /// >>> print(gt.math.softplus(gt.constant([0.0, 1.0])))
        /// gt.Tensor([0.6931472 1.3132617], shape=(2,), dtype=float32)
        unary softplus = ops::softplus, in [math, nn];
        /// Elementwise ``x / (|x| + 1)``. TF equivalent: ``tf.math.softsign``.
        ///
        /// >>> print(gt.nn.softsign(gt.constant([-1.0, 3.0])))
        /// gt.Tensor([-0.5   0.75], shape=(2,), dtype=float32)
        unary softsign = ops::softsign, in [math, nn];
        /// Elementwise complex conjugate (real tensors are returned unchanged). TF equivalent:
        /// ``tf.math.conj``.
        ///
        /// >>> print(gt.conj(gt.constant([1 + 2j])))
        /// gt.Tensor([1.-2.j], shape=(1,), dtype=complex128)
        unary conj = ops::conj, in [gt, math];
        /// A tensor with the value of ``x``; recorded, so its gradient is the incoming one.
        /// TF equivalent: ``tf.identity``.
        ///
        /// >>> print(gt.identity(gt.constant([1.0, 2.0])))
        /// gt.Tensor([1. 2.], shape=(2,), dtype=float32)
        unary identity = ops::identity, in [gt];
        /// The value of ``x``, treated as a constant by tapes (no gradient flows through it).
        /// TF equivalent: ``tf.stop_gradient``.
        ///
        /// >>> x = gt.constant(3.0)
        /// >>> with gt.GradientTape() as t:
        /// ...     t.watch(x)
        /// ...     y = x * gt.stop_gradient(x)
        /// >>> print(t.gradient(y, x))
        /// gt.Tensor(3.0, shape=(), dtype=float32)
        unary stop_gradient = ops::stop_gradient, in [gt];
        /// Elementwise rounding to the nearest integer, halves to even. TF equivalent:
        /// ``tf.math.round``.
        ///
        /// >>> print(gt.round(gt.constant([0.5, 1.5, 2.7])))
        /// gt.Tensor([0. 2. 3.], shape=(3,), dtype=float32)
        unary round = ops::round, in [gt, math];
        /// Elementwise largest integer not greater than ``x``. TF equivalent: ``tf.math.floor``.
        ///
        /// >>> print(gt.floor(gt.constant([-1.5, 2.5])))
        /// gt.Tensor([-2.  2.], shape=(2,), dtype=float32)
        unary floor = ops::floor, in [gt, math];
        /// Elementwise smallest integer not less than ``x``. TF equivalent: ``tf.math.ceil``.
        ///
        /// >>> print(gt.math.ceil(gt.constant([-1.5, 2.5])))
        /// gt.Tensor([-1.  3.], shape=(2,), dtype=float32)
        unary ceil = ops::ceil, in [math];
        fn clip_by_value in [gt]: "(t: TensorLike, clip_value_min: TensorLike, clip_value_max: TensorLike, name: str | None = None) -> Tensor";
        fn clip_by_norm in [gt]: "(t: IndexedSlices, clip_norm: TensorLike, axes: AxisLike | None = None, name: str | None = None) -> IndexedSlices ;; (t: TensorLike, clip_norm: TensorLike, axes: AxisLike | None = None, name: str | None = None) -> Tensor";
    }
}

/// `sign · dy · k(x)` for sin's and cos's rules in one pass (see [`fused_grad`]): `k`
/// is the other function's chunk kernel.
fn fused_trig(
    dy: &Tensor,
    x: &Tensor,
    k: fn(&[f32], &mut [std::mem::MaybeUninit<f32>]),
    sign: f32,
) -> Result<Option<Tensor>> {
    use crate::kernels::elementwise::zip_chunk_kernel;
    use crate::tensor::Data;
    if crate::tape::stack::any_active() {
        return Ok(None);
    }
    match (x.data(), dy.data()) {
        (Data::F32(a), Data::F32(d)) => {
            // SAFETY: the VMath chunk kernels write every element.
            Ok(unsafe { zip_chunk_kernel(a, d, k, |d, c| sign * d * c) }?
                .map(|r| Tensor::new(Data::F32(r.into_shared()))))
        }
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testutil::{close, grad, t64, vals};
    use crate::GradientTape;

    /// The gradient of `<w, f(x)>` w.r.t. `x`, with an outer tape recording the
    /// backward pass (`outer`, so the rules' composed engine ops run) or not (so the
    /// fused kernels run).
    fn rule_grad(f: fn(&Tensor) -> Result<Tensor>, x: &Tensor, w: &Tensor, outer: bool) -> Tensor {
        use crate::tape::{Source, UnconnectedGradients};
        let outer_tape = GradientTape::new();
        let _recording = outer.then(|| {
            let r = outer_tape.enter();
            outer_tape.watch(x);
            r
        });
        let tape = GradientTape::new();
        let y = {
            let _r = tape.enter();
            tape.watch(x);
            f(x).unwrap()
        };
        let g = tape
            .gradient(
                &[y],
                &[Source::Tensor(x)],
                Some(&[Some(w.clone())]),
                UnconnectedGradients::None,
            )
            .unwrap();
        g[0].clone().expect("connected")
    }

    #[test]
    fn fused_backward_kernels_equal_the_composed_rules() {
        let n = 3000; // several vector lengths plus a scalar tail
        let xs: Vec<f32> = (0..n).map(|i| (i as f32 - 1500.0) / 300.0).collect();
        let ws: Vec<f32> = (0..n).map(|i| ((i * 37) % 19) as f32 / 7.0 - 1.0).collect();
        let x = Tensor::from_vec(xs.clone(), &[n]).unwrap();
        let w = Tensor::from_vec(ws, &[n]).unwrap();
        let x64 = crate::ops::cast(&x, crate::DType::F64).unwrap();
        let w64 = crate::ops::cast(&w, crate::DType::F64).unwrap();
        type UnaryFn = fn(&Tensor) -> Result<Tensor>;
        let fs: [(&str, UnaryFn); 6] = [
            ("sin", sin),
            ("cos", cos),
            ("tanh", tanh),
            ("sigmoid", sigmoid),
            ("relu", relu),
            ("elu", elu),
        ];
        for (name, f) in fs {
            let fused = rule_grad(f, &x, &w, false).to_vec::<f32>().unwrap();
            let composed = rule_grad(f, &x, &w, true).to_vec::<f32>().unwrap();
            assert_eq!(fused, composed, "{name} (float32)");
            let fused = rule_grad(f, &x64, &w64, false).to_vec::<f64>().unwrap();
            let composed = rule_grad(f, &x64, &w64, true).to_vec::<f64>().unwrap();
            assert_eq!(fused, composed, "{name} (float64)");
        }
        // The values themselves: d/dx sin = cos, at a few points.
        let g = rule_grad(
            sin,
            &x,
            &Tensor::from_vec(vec![1.0f32; n], &[n]).unwrap(),
            false,
        );
        let g = g.to_vec::<f32>().unwrap();
        for i in [0, 777, 1500, 2999] {
            assert!(
                (g[i] - xs[i].cos()).abs() <= 2e-7,
                "{} vs {}",
                g[i],
                xs[i].cos()
            );
        }
    }

    #[test]
    fn round_is_bankers_and_floor_ceil_have_no_gradient() {
        let x = t64(&[0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6], &[7]);
        close(&vals(&round(&x).unwrap()), &[0., 2., 2., 0., -2., 2., -3.]);
        close(&vals(&floor(&x).unwrap()), &[0., 1., 2., -1., -2., 2., -3.]);
        close(&vals(&ceil(&x).unwrap()), &[1., 2., 3., 0., -1., 3., -2.]);
        for f in [round, floor, ceil] {
            let g = GradientTape::new();
            let y = {
                let _r = g.enter();
                g.watch(&x);
                f(&x).unwrap()
            };
            assert!(g.gradient1(&y, &x).unwrap().is_none());
        }
    }

    #[test]
    fn clip_by_value_routes_the_gradient_like_tf() {
        let x = t64(&[-2., 0., 0.5, 1., 3.], &[5]);
        let lo = Tensor::scalar(0.0f64);
        let hi = Tensor::scalar(1.0f64);
        close(
            &vals(&clip_by_value(&x, &lo, &hi).unwrap()),
            &[0., 0., 0.5, 1., 1.],
        );
        close(
            &grad(&x, None, |x| clip_by_value(x, &lo, &hi).unwrap()),
            &[0., 1., 1., 1., 0.],
        );
        close(
            &grad(&lo, None, |l| clip_by_value(&x, l, &hi).unwrap()),
            &[1.],
        );
        close(
            &grad(&hi, None, |h| clip_by_value(&x, &lo, h).unwrap()),
            &[1.],
        );
        assert!(clip_by_value(&x, &t64(&[0., 1.], &[2]), &hi).is_err());
    }

    #[test]
    fn clip_by_norm_rescales_only_long_vectors() {
        let t = t64(&[3., 4.], &[2]);
        let two = Tensor::scalar(2.0f64);
        close(&vals(&clip_by_norm(&t, &two, None).unwrap()), &[1.2, 1.6]);
        close(
            &vals(&clip_by_norm(&t, &Tensor::scalar(10.0f64), None).unwrap()),
            &[3., 4.],
        );
        close(
            &grad(&t, None, |t| clip_by_norm(t, &two, None).unwrap()),
            &[0.064, -0.048],
        );
        let z = t64(&[0., 0.], &[2]);
        close(&vals(&clip_by_norm(&z, &two, None).unwrap()), &[0., 0.]);
        close(
            &grad(&z, None, |t| clip_by_norm(t, &two, None).unwrap()),
            &[1., 1.],
        );
        let m = t64(&[3., 4., 0.3, 0.4], &[2, 2]);
        close(
            &vals(&clip_by_norm(&m, &Tensor::scalar(1.0f64), Some(&[1])).unwrap()),
            &[0.6, 0.8, 0.3, 0.4],
        );
    }
}
