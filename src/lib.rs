//! # gradtape
//!
//! Reverse-mode automatic differentiation with the semantics of TensorFlow 2's
//! `tf.GradientTape`, as a Rust crate (this) and a Python package (`gradtape`, built
//! with the `python` feature).
//!
//! - [`Tensor`]: immutable n-d values (f32, f64, i32, i64, bool, complex64,
//!   complex128) with shared storage.
//! - [`Variable`]: mutable shared cells, watched automatically when trainable.
//! - [`GradientTape`]: records ops whose inputs it watches into an arena; its
//!   [`gradient`](GradientTape::gradient) runs the reverse sweep. Gradient rules are
//!   written with the public [`ops`], so gradients taken while another tape records
//!   are recorded too: nested tapes give higher derivatives.
//!
//! ```
//! use gradtape::{ops, GradientTape, Tensor};
//!
//! let x = Tensor::scalar(3.0f32);
//! let outer = GradientTape::new();
//! let inner = GradientTape::new();
//! let dy_dx = {
//!     let _o = outer.enter();
//!     outer.watch(&x);
//!     let y = {
//!         let _i = inner.enter();
//!         inner.watch(&x);
//!         ops::mul(&x, &x).unwrap()
//!     };
//!     // Computed while `outer` records: the gradient is differentiable again.
//!     inner.gradient1(&y, &x).unwrap().unwrap()
//! };
//! let d2y_dx2 = outer.gradient1(&dy_dx, &x).unwrap().unwrap();
//! assert_eq!(dy_dx.to_vec::<f32>().unwrap(), vec![6.0]);
//! assert_eq!(d2y_dx2.to_vec::<f32>().unwrap(), vec![2.0]);
//! ```

#[macro_use]
mod macros;

pub mod broadcast;
pub mod custom;
pub mod dtype;
pub mod error;
pub mod kernels;
pub mod ops;
pub mod tape;
pub mod tensor;
pub mod variable;

#[cfg(feature = "python")]
mod python;

pub use custom::{custom_gradient, gradient_override_map, register_gradient};
pub use dtype::DType;
pub use error::{Error, Result};
pub use tape::{GradientTape, Source, UnconnectedGradients};
pub use tensor::{Data, Tensor, TensorId};
pub use variable::Variable;

// The README's Rust example is compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
