//! Layers and optimizers: [`Dense`] and [`Sequential`] behind the [`Layer`] trait, and
//! Keras 3's optimizers ([`Sgd`], [`Adam`], [`AdamW`], [`RmsProp`], [`Adagrad`],
//! [`Nadam`], [`Adamax`], [`Adadelta`], [`Ftrl`], [`Lion`]) behind
//! the [`Optimizer`] trait, each variable's step one fused kernel
//! ([`optimizers::apply_update`]). The Python package's `gt.layers.Dense` and
//! `gt.optimizers` run this code. TF equivalent: `tf.keras.layers`,
//! `tf.keras.optimizers`.
//!
//! A regression fitted by a two-layer network:
//!
//! ```
//! use gradtape::nn::{Activation, Adam, Dense, Layer, Optimizer, Sequential};
//! use gradtape::{GradientTape, Tensor};
//!
//! let x = Tensor::from_vec((0..16).map(|i| i as f32 / 8.0 - 1.0).collect(), &[16, 1])?;
//! let y = x.mul(&x)?; // y = x²
//! let model = Sequential::new()
//!     .add(Dense::new(1, 16, Activation::Tanh, Some(0))?)
//!     .add(Dense::new(16, 1, Activation::Linear, Some(1))?);
//! let vars = model.trainable_variables();
//! let mut opt = Adam::new(0.05);
//! let mut losses = vec![];
//! for _ in 0..100 {
//!     let tape = GradientTape::new();
//!     let loss = tape.record(|| model.forward(&x)?.squared_difference(&y)?.mean())?;
//!     let grads = tape.gradients(&loss, &vars.iter().collect::<Vec<_>>())?;
//!     let pairs: Vec<_> = grads.into_iter().zip(&vars).filter_map(|(g, v)| Some((g?, v))).collect();
//!     opt.apply_gradients(&pairs)?;
//!     losses.push(loss.to_f64_scalar()?);
//! }
//! assert!(losses[99] < losses[0] / 5.0);
//! # Ok::<(), gradtape::Error>(())
//! ```

pub mod layers;
pub mod optimizers;

pub use layers::{Activation, Dense, Layer, Sequential};
pub use optimizers::{
    Adadelta, Adagrad, Adam, AdamW, Adamax, Ftrl, Lion, Nadam, Optimizer, RmsProp, Rule, Sgd,
};
