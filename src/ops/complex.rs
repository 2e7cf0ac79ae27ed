//! Complex numbers: building, taking apart, modulus and angle.
//!
//! Gradients follow TF's convention for real-valued functions of complex inputs:
//! the gradient of a real loss `L` with respect to `z` is `∂L/∂re + i ∂L/∂im`.

use num_complex::{Complex32, Complex64};

use super::{grads, record, unary_out, Grads, Op, Saves, VjpCx};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels::elementwise::{map, zip};
use crate::ops::{cast, divide, multiply, where_, zeros_like};
use crate::tensor::{Data, Tensor};

/// `real + i·imag`. TF equivalent: `tf.complex`.
pub fn complex(real: &Tensor, imag: &Tensor) -> Result<Tensor> {
    let out = match (real.data(), imag.data()) {
        (Data::F32(a), Data::F32(b)) => {
            Data::C64(zip("Complex", a, b, Complex32::new)?.into_shared())
        }
        (Data::F64(a), Data::F64(b)) => {
            Data::C128(zip("Complex", a, b, Complex64::new)?.into_shared())
        }
        (p, q) if p.dtype() != q.dtype() => {
            return Err(Error::dtype_mismatch("Complex", p.dtype(), q.dtype()))
        }
        (p, _) => return Err(Error::unsupported("Complex", p.dtype())),
    };
    let out = Tensor::new(out);
    record(MakeComplex, &[real, imag], &[&out])?;
    Ok(out)
}
struct MakeComplex;
impl Op for MakeComplex {
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "Complex"
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn vjp(&self, _cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        Ok(grads![Some(real(&dys[0])?), Some(imag(&dys[0])?)])
    }
}

/// Real part (the input itself for real dtypes). TF equivalent: `tf.math.real`.
pub fn real(x: &Tensor) -> Result<Tensor> {
    let out = match x.data() {
        Data::C64(a) => Data::F32(map(a, |v| v.re)?.into_shared()),
        Data::C128(a) => Data::F64(map(a, |v| v.re)?.into_shared()),
        _ => return Ok(x.clone()),
    };
    unary_out(Real, x, Tensor::new(out))
}
struct Real;
impl Op for Real {
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "Real"
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn vjp(&self, _cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        Ok(grads![Some(complex(&dys[0], &zeros_like(&dys[0])?)?)])
    }
}

/// Imaginary part (zeros for real dtypes). TF equivalent: `tf.math.imag`.
pub fn imag(x: &Tensor) -> Result<Tensor> {
    let out = match x.data() {
        Data::C64(a) => Data::F32(map(a, |v| v.im)?.into_shared()),
        Data::C128(a) => Data::F64(map(a, |v| v.im)?.into_shared()),
        _ => return zeros_like(x),
    };
    unary_out(Imag, x, Tensor::new(out))
}
struct Imag;
impl Op for Imag {
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "Imag"
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn vjp(&self, _cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        Ok(grads![Some(complex(&zeros_like(&dys[0])?, &dys[0])?)])
    }
}

/// Modulus `|z|` of a complex tensor, as a real tensor. TF equivalent: `tf.abs` on
/// complex (ComplexAbs). Gradient `dy · z/|z|` (0 at 0).
pub fn complex_abs(x: &Tensor) -> Result<Tensor> {
    let out = match x.data() {
        Data::C64(a) => Data::F32(map(a, |v| v.norm())?.into_shared()),
        Data::C128(a) => Data::F64(map(a, |v| v.norm())?.into_shared()),
        d => return Err(Error::unsupported("ComplexAbs", d.dtype())),
    };
    let out = Tensor::new(out);
    record(ComplexAbs, &[x], &[&out])?;
    Ok(out)
}
struct ComplexAbs;
impl Op for ComplexAbs {
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "ComplexAbs"
    }
    fn saves(&self) -> Saves {
        Saves::INPUTS_AND_OUTPUT
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let z = cx.input(0)?;
        let r = cx.output(0)?;
        let nz = crate::ops::not_equal(r, &zeros_like(r)?)?;
        let safe_r = where_(&nz, r, &crate::ops::ones_like(r)?)?;
        let dt = z.dtype();
        let unit = divide(z, &cast(&safe_r, dt)?)?;
        let unit = where_(&nz, &unit, &zeros_like(&unit)?)?;
        Ok(grads![Some(multiply(&cast(&dys[0], dt)?, &unit)?)])
    }
}

/// Argument (phase) of a complex tensor; 0 (or π for negatives) for reals.
/// TF equivalent: `tf.math.angle`.
pub fn angle(x: &Tensor) -> Result<Tensor> {
    match x.dtype() {
        DType::C64 | DType::C128 => crate::ops::atan2(&imag(x)?, &real(x)?),
        DType::F16 | DType::F32 | DType::F64 => crate::ops::atan2(&zeros_like(x)?, x),
        d => Err(Error::unsupported("Angle", d)),
    }
}

/// The Python functions of this family: bindings and where they appear (see
/// `src/ops/README.md`).
#[cfg(feature = "python")]
pub(super) mod python {
    use crate::python::binding::*;

    expose! {
        /// The real part of a complex tensor (a real tensor passes through). TF equivalent:
        /// ``tf.math.real``.
        ///
        /// >>> print(gt.real(gt.constant([1 + 2j])))
        /// gt.Tensor([1.], shape=(1,), dtype=float64)
        unary real = ops::real, in [gt, math];
        /// The imaginary part of a complex tensor (zeros for a real tensor). TF equivalent:
        /// ``tf.math.imag``.
        ///
        /// >>> print(gt.imag(gt.constant([1 + 2j])))
        /// gt.Tensor([2.], shape=(1,), dtype=float64)
        unary imag = ops::imag, in [gt, math];
        /// Elementwise argument of a complex tensor. TF equivalent: ``tf.math.angle``.
        ///
        /// >>> print(gt.angle(gt.constant([1j])))
        /// gt.Tensor([1.57079633], shape=(1,), dtype=float64)
        unary angle = ops::angle, in [gt, math];
        /// A complex tensor from real and imaginary parts (float32 gives complex64). TF equivalent:
        /// ``tf.complex``.
        ///
        /// >>> print(gt.complex(gt.constant([1.0]), gt.constant([2.0])))
        /// gt.Tensor([1.+2.j], shape=(1,), dtype=complex64)
        binary complex = ops::complex, in [gt, math];
    }
}
