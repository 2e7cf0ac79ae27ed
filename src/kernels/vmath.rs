//! Transcendental functions that vectorize.
//!
//! The standard library's `f32::exp`, `sin`, `tanh`, ... are calls into the C library,
//! one element at a time: a loop over them cannot use SIMD. The float32 versions here
//! are branch-free range reductions and polynomials (the classic Cephes schemes), so
//! the elementwise loops in [`super::elementwise`] compile to AVX2/AVX-512 code.
//! Their error is a few ulp over the whole range (measured by the tests below);
//! float64 and complex numbers keep the standard library's functions.
//!
//! `sin` and `cos` reduce their argument with a two-part float64 `π/4`, exact enough
//! only for `|x| <= TRIG_LIMIT`; [`VMath::sin_chunk`]/[`VMath::cos_chunk`] recompute any element beyond
//! it (and NaN/inf) with the standard library.

use std::mem::MaybeUninit;

use num_complex::Complex;

use super::elementwise::fill;

/// Largest `|x|` for which the float32 `sin`/`cos` reduction is used.
pub const TRIG_LIMIT: f32 = 1_048_576.0;

/// Per-element math with a vectorizable float32 implementation.
pub trait VMath: Copy + Send + Sync {
    fn vexp(self) -> Self;
    fn vexpm1(self) -> Self;
    fn vtanh(self) -> Self;
    /// `sin` over a chunk (see the module docs for float32's large arguments).
    fn sin_chunk(x: &[Self], out: &mut [MaybeUninit<Self>]);
    /// `cos` over a chunk.
    fn cos_chunk(x: &[Self], out: &mut [MaybeUninit<Self>]);
}

impl VMath for f32 {
    #[inline(always)]
    fn vexp(self) -> f32 {
        exp_f32(self)
    }
    #[inline(always)]
    fn vexpm1(self) -> f32 {
        expm1_f32(self)
    }
    #[inline(always)]
    fn vtanh(self) -> f32 {
        tanh_f32(self)
    }
    fn sin_chunk(x: &[f32], out: &mut [MaybeUninit<f32>]) {
        fill(x, out, &sin_f32);
        patch_large(x, out, f32::sin);
    }
    fn cos_chunk(x: &[f32], out: &mut [MaybeUninit<f32>]) {
        fill(x, out, &cos_f32);
        patch_large(x, out, f32::cos);
    }
}

macro_rules! std_vmath {
    ($($t:ty),*) => {$(
        impl VMath for $t {
            #[inline(always)]
            fn vexp(self) -> Self {
                self.exp()
            }
            #[inline(always)]
            fn vexpm1(self) -> Self {
                std_expm1(self)
            }
            #[inline(always)]
            fn vtanh(self) -> Self {
                self.tanh()
            }
            fn sin_chunk(x: &[Self], out: &mut [MaybeUninit<Self>]) {
                fill(x, out, &|v: Self| v.sin());
            }
            fn cos_chunk(x: &[Self], out: &mut [MaybeUninit<Self>]) {
                fill(x, out, &|v: Self| v.cos());
            }
        }
    )*};
}
std_vmath!(f64, Complex<f32>, Complex<f64>);

/// `expm1` where the type has one (complex numbers do not: `exp - 1`).
trait StdExpm1 {
    fn expm1_(self) -> Self;
}
impl StdExpm1 for f64 {
    fn expm1_(self) -> f64 {
        self.exp_m1()
    }
}
impl<T: num_traits::Float> StdExpm1 for Complex<T> {
    /// `e^z - 1` without the cancellation of `exp(z) - 1` near 0: the real part is
    /// `expm1(x) cos(y) - 2 sin²(y/2)`, the imaginary part `eˣ sin(y)`.
    fn expm1_(self) -> Self {
        let (x, y) = (self.re, self.im);
        let half = (y / (T::one() + T::one())).sin();
        let re = x.exp_m1() * y.cos() - (T::one() + T::one()) * half * half;
        Complex::new(re, x.exp() * y.sin())
    }
}
#[inline(always)]
fn std_expm1<T: StdExpm1>(v: T) -> T {
    v.expm1_()
}

/// Recomputes with `exact` the elements whose argument is beyond [`TRIG_LIMIT`] (or
/// not finite). The check is one vectorized pass over a chunk that is still in cache.
fn patch_large(x: &[f32], out: &mut [MaybeUninit<f32>], exact: fn(f32) -> f32) {
    // Written so that NaN counts as far.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    let far = |v: f32| !(v.abs() <= TRIG_LIMIT);
    if x.iter().fold(false, |any, &v| any | far(v)) {
        for (o, &v) in out.iter_mut().zip(x) {
            if far(v) {
                o.write(exact(v));
            }
        }
    }
}

const LOG2E: f32 = std::f32::consts::LOG2_E;
/// `ln 2` split so that `n * LN2_HI` is exact for the `n` that occur.
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;
/// Adding and subtracting 1.5·2²³ rounds a float32 of magnitude < 2²² to an integer.
const ROUND: f32 = 12_582_912.0;

/// `y · 2ⁿ` for `n` in `[-151, 129]`, in two halves so that the extremes neither
/// overflow the exponent field nor lose subnormal results.
#[inline(always)]
fn scale2(y: f32, n: i32) -> f32 {
    let h = n >> 1;
    let s1 = f32::from_bits(((h + 127) as u32) << 23);
    let s2 = f32::from_bits(((n - h + 127) as u32) << 23);
    y * s1 * s2
}

/// `eˣ` for float32: `x = n ln2 + r`, `|r| <= ln2/2`, a degree-7 polynomial for `eʳ`.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    // Beyond these bounds the result is 0 or inf anyway; NaN passes through.
    let x = x.clamp(-104.0, 89.0);
    // `t` is n + 1.5·2²³ exactly, so n is also the difference of the bit patterns:
    // an integer conversion that vectorizes (a float-to-int cast must saturate NaN,
    // which compiles to per-lane scalar code).
    let t = x * LOG2E + ROUND;
    let n = t - ROUND;
    let ni = t.to_bits() as i32 - ROUND.to_bits() as i32;
    let r = (x - n * LN2_HI) - n * LN2_LO;
    let p = 1.987_569_1e-4;
    let p = p * r + 1.398_199_9e-3;
    let p = p * r + 8.333_452e-3;
    let p = p * r + 4.166_579_6e-2;
    let p = p * r + 1.666_666_5e-1;
    let p = p * r + 5e-1;
    scale2(p * r * r + r + 1.0, ni)
}

/// `eˣ - 1` for float32: a Taylor polynomial near 0 (where `eˣ - 1` would cancel),
/// `exp_f32(x) - 1` elsewhere.
#[inline(always)]
pub fn expm1_f32(x: f32) -> f32 {
    let p = 1.0 / 40320.0;
    let p = p * x + 1.0 / 5040.0;
    let p = p * x + 1.0 / 720.0;
    let p = p * x + 1.0 / 120.0;
    let p = p * x + 1.0 / 24.0;
    let p = p * x + 1.0 / 6.0;
    let p = p * x + 0.5;
    // x (1 + p x): keeps the sign of -0.0 and returns tiny x unchanged.
    let near = x * (1.0 + p * x);
    let far = exp_f32(x) - 1.0;
    if x.abs() < 0.5 {
        near
    } else {
        far
    }
}

/// `tanh x` for float32: an odd polynomial for `|x| < 0.625`, `1 - 2/(e²ˣ + 1)` beyond.
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    let ax = x.abs();
    let z = x * x;
    let p = -5.704_988_7e-3;
    let p = p * z + 2.063_909e-2;
    let p = p * z - 5.373_971_6e-2;
    let p = p * z + 1.333_144_2e-1;
    let p = p * z - 3.333_328e-1;
    let near = p * z * x + x;
    let far = (1.0 - 2.0 / (exp_f32(ax + ax) + 1.0)).copysign(x);
    if ax < 0.625 {
        near
    } else {
        far
    }
}

/// `4/π`, and `π/4` in two float64 parts; `y * PIO4_1` is exact for the octants of
/// `|x| <= TRIG_LIMIT` (PIO4_1 has 27 significant bits).
const FOPI: f64 = 1.273_239_544_735_162_8;
const PIO4_1: f64 = 0.785_398_162_901_401_5;
const PIO4_2: f64 = 4.960_467_898_402_702e-10;

/// `|x|` reduced to `z` in `[-π/4, π/4]` (in float64, then rounded once), with the
/// even octant `j` it came from.
#[inline(always)]
fn reduce_quarter_pi(x: f32) -> (f32, i32) {
    // `min` drops NaN, so `ax` is in [0, TRIG_LIMIT].
    let ax = x.abs().min(TRIG_LIMIT) as f64;
    // SAFETY: `ax * FOPI` is finite and below 2²¹. (A plain `as` cast would have to
    // saturate NaN, which does not vectorize.)
    let j = (unsafe { (ax * FOPI).to_int_unchecked::<i32>() } + 1) & !1;
    let y = j as f64;
    (((ax - y * PIO4_1) - y * PIO4_2) as f32, j)
}

/// `sin z` and `cos z` for `|z| <= π/4`.
#[inline(always)]
fn sin_cos_poly(z: f32) -> (f32, f32) {
    let zz = z * z;
    let s = -1.951_529_6e-4;
    let s = s * zz + 8.332_161e-3;
    let s = s * zz - 1.666_665_5e-1;
    let s = s * zz * z + z;
    let c = 2.443_315_7e-5;
    let c = c * zz - 1.388_731_6e-3;
    let c = c * zz + 4.166_664_6e-2;
    let c = c * zz * zz - 0.5 * zz + 1.0;
    (s, c)
}

/// `sin x` for float32, `|x| <= TRIG_LIMIT`.
#[inline(always)]
pub fn sin_f32(x: f32) -> f32 {
    let (z, j) = reduce_quarter_pi(x);
    let (s, c) = sin_cos_poly(z);
    // Octants 2 and 6 take the cosine; 4 and 6 flip the sign; so does a negative x.
    let r = if j & 2 != 0 { c } else { s };
    let sign = (((j & 4) as u32) << 29) ^ (x.to_bits() & 0x8000_0000);
    f32::from_bits(r.to_bits() ^ sign)
}

/// `cos x` for float32, `|x| <= TRIG_LIMIT`.
#[inline(always)]
pub fn cos_f32(x: f32) -> f32 {
    let (z, j) = reduce_quarter_pi(x);
    let (s, c) = sin_cos_poly(z);
    let r = if j & 2 != 0 { s } else { c };
    let sign = (((j + 2) & 4) as u32) << 29;
    f32::from_bits(r.to_bits() ^ sign)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distance in float32 ulps between `got` and the float64 reference `want`.
    fn ulps(got: f32, want: f64) -> f64 {
        if got as f64 == want || (got.is_nan() && want.is_nan()) {
            return 0.0;
        }
        let w = want as f32;
        let ulp = if w == 0.0 {
            f32::from_bits(1) as f64
        } else {
            ((f32::from_bits(w.abs().to_bits() + 1) - w.abs()) as f64)
                .max(f32::MIN_POSITIVE as f64 * f32::EPSILON as f64)
        };
        (got as f64 - want).abs() / ulp
    }

    /// Max ulp error of `f` against `reference` on a dense grid over `[lo, hi]`.
    fn max_ulps(f: impl Fn(f32) -> f32, reference: impl Fn(f64) -> f64, lo: f32, hi: f32) -> f64 {
        let n = 200_000;
        (0..=n)
            .map(|i| {
                let x = lo + (hi - lo) * (i as f32 / n as f32);
                ulps(f(x), reference(x as f64))
            })
            .fold(0.0, f64::max)
    }

    #[test]
    fn exp_is_within_two_ulps() {
        assert!(max_ulps(exp_f32, f64::exp, -87.0, 88.7) <= 2.0);
        assert!(max_ulps(exp_f32, f64::exp, -1.0, 1.0) <= 1.0);
        // Subnormal results, overflow, underflow and the special values.
        assert!(max_ulps(exp_f32, f64::exp, -103.0, -87.5) <= 2.0);
        assert_eq!(exp_f32(89.0), f32::INFINITY);
        assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp_f32(-120.0), 0.0);
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert!(exp_f32(f32::NAN).is_nan());
        assert_eq!(exp_f32(0.0), 1.0);
    }

    #[test]
    fn expm1_keeps_relative_accuracy_near_zero() {
        assert!(max_ulps(expm1_f32, f64::exp_m1, -0.6, 0.6) <= 3.0);
        assert!(max_ulps(expm1_f32, f64::exp_m1, -20.0, 20.0) <= 3.0);
        assert_eq!(expm1_f32(1e-30), 1e-30);
        assert_eq!(expm1_f32(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(expm1_f32(f32::NEG_INFINITY), -1.0);
        assert_eq!(expm1_f32(f32::INFINITY), f32::INFINITY);
        assert!(expm1_f32(f32::NAN).is_nan());
    }

    #[test]
    fn tanh_is_within_three_ulps() {
        assert!(max_ulps(tanh_f32, f64::tanh, -10.0, 10.0) <= 3.0);
        assert!(max_ulps(tanh_f32, f64::tanh, -0.7, 0.7) <= 2.0);
        assert_eq!(tanh_f32(50.0), 1.0);
        assert_eq!(tanh_f32(f32::NEG_INFINITY), -1.0);
        assert!(tanh_f32(f32::NAN).is_nan());
        assert_eq!(tanh_f32(1e-20), 1e-20);
    }

    #[test]
    fn sin_cos_are_within_two_ulps_up_to_the_limit() {
        for (lo, hi) in [
            (-4.0, 4.0),
            (-100.0, 100.0),
            (-5000.0, 5000.0),
            (-TRIG_LIMIT, TRIG_LIMIT),
        ] {
            assert!(
                max_ulps(sin_f32, f64::sin, lo, hi) <= 2.0,
                "sin on [{lo}, {hi}]"
            );
            assert!(
                max_ulps(cos_f32, f64::cos, lo, hi) <= 2.0,
                "cos on [{lo}, {hi}]"
            );
        }
    }

    #[test]
    fn chunks_patch_large_and_special_arguments() {
        let x = [0.5f32, 1e5, -3e30, f32::NAN, f32::INFINITY, -2.0, 2e6];
        let mut out = vec![MaybeUninit::uninit(); x.len()];
        f32::sin_chunk(&x, &mut out);
        for (o, &v) in out.iter().zip(&x) {
            // SAFETY: the chunk kernels write every element.
            let got = unsafe { o.assume_init() };
            let want = v.sin();
            assert!(got == want || (got.is_nan() && want.is_nan()) || (got - want).abs() <= 2e-7);
        }
        f32::cos_chunk(&x, &mut out);
        // SAFETY: as above.
        let (c1, c4) = unsafe { (out[1].assume_init(), out[4].assume_init()) };
        assert_eq!(c1, 1e5f32.cos());
        assert!(c4.is_nan());
    }
}
