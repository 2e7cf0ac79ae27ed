//! # gradtape
//!
//! Reverse-mode automatic differentiation with the semantics of TensorFlow 2's
//! `tf.GradientTape`, as a Rust crate (this) and a Python package (`gradtape`, built
//! with the `python` feature).
//!
//! - [`Tensor`]: immutable n-d values with shared storage, of every TF dtype numpy
//!   also has ([`DType`]: float16 ([`f16`](struct@f16)), float32, float64, the signed and unsigned
//!   integers of 8 to 64 bits, bool, complex64, complex128), each stored as itself.
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
//!
//! ## Ops
//!
//! [`ops`] has TF's op functions under TF's names, each returning a [`Result`]: binary
//! ops broadcast as NumPy does, reductions take optional axes and `keepdims`, and the
//! gradient of every differentiable op is recorded when a tape watches its inputs. A
//! dense layer's forward pass and loss, and the gradients of the loss:
//!
//! ```
//! use gradtape::{ops, GradientTape, Source, Tensor, UnconnectedGradients};
//!
//! let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?; // a batch of 2
//! let w = Tensor::from_vec(vec![0.5f32, -1.0], &[2, 1])?;
//! let b = Tensor::scalar(1.0f32);
//! let tape = GradientTape::new();
//! let (y, loss) = {
//!     let _recording = tape.enter();
//!     tape.watch(&w);
//!     tape.watch(&b);
//!     let y = ops::add(&ops::matmul(&x, &w)?, &b)?; // (2, 1), b broadcast
//!     let loss = ops::reduce_mean(&ops::square(&y)?, None, false)?;
//!     (y, loss)
//! };
//! assert_eq!(y.to_vec::<f32>()?, vec![-0.5, -1.5]);
//! assert_eq!(loss.to_vec::<f32>()?, vec![1.25]);
//! let g = tape.gradient(&[loss], &[Source::Tensor(&w), Source::Tensor(&b)], None,
//!                       UnconnectedGradients::None)?;
//! // With n = 2 rows, dloss/dy = 2y / n = y: dloss/dw = x^T y and dloss/db = sum(y).
//! assert_eq!(g[0].as_ref().unwrap().to_vec::<f32>()?, vec![-5.0, -7.0]);
//! assert_eq!(g[1].as_ref().unwrap().to_vec::<f32>()?, vec![-2.0]);
//!
//! // Elementwise math, reductions over axes, and errors instead of panics.
//! let e = ops::exp(&Tensor::from_vec(vec![0.0f64, 1.0], &[2])?)?;
//! assert_eq!(e.to_vec::<f64>()?, vec![1.0, std::f64::consts::E]);
//! let s = ops::reduce_sum(&x, Some(&[0]), true)?;
//! assert_eq!((s.shape(), s.to_vec::<f32>()?), (&[1usize, 2][..], vec![4.0, 6.0]));
//! assert!(ops::matmul(&x, &Tensor::from_vec(vec![1.0f32; 3], &[3, 1])?).is_err());
//! # Ok::<(), gradtape::Error>(())
//! ```

// Lints (Cargo.toml's [lints]): every unsafe operation sits in its own block with a
// `SAFETY:` comment saying why it is sound, also inside `unsafe fn`s.

#[macro_use]
mod macros;

pub mod alloc;
mod api;
pub mod broadcast;
pub mod custom;
pub mod dtype;
pub mod error;
pub mod graph;
pub mod interrupt;
pub mod io;
pub mod kernels;
pub mod nn;
pub mod ops;
pub mod pool;
pub mod saved_model;
pub mod size;
pub mod tape;
pub mod tensor;
pub mod variable;

#[cfg(feature = "python")]
mod python;

pub use custom::{custom_gradient, gradient_override_map, register_gradient};
pub use dtype::DType;
pub use error::{Error, Result};
/// The float16 element type ([`DType::F16`]), re-exported from the `half` crate.
pub use half::f16;
pub use tape::{ForwardAccumulator, GradientTape, Source, UnconnectedGradients};
pub use tensor::{Data, Tensor, TensorId};
pub use variable::Variable;

// The README's Rust example is compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
