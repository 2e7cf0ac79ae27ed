//! Layers: the [`Layer`] trait, [`Dense`] and [`Sequential`].
//!
//! ```
//! use gradtape::nn::{Activation, Dense, Layer, Sequential};
//! use gradtape::Tensor;
//!
//! let model = Sequential::new()
//!     .add(Dense::new(3, 8, Activation::Relu, Some(1))?)
//!     .add(Dense::new(8, 1, Activation::Linear, Some(2))?);
//! let y = model.forward(&Tensor::from_vec(vec![0.5f32; 6], &[2, 3])?)?;
//! assert_eq!(y.shape(), &[2, 1]);
//! // Two kernels and two biases.
//! assert_eq!(model.trainable_variables().len(), 4);
//! # Ok::<(), gradtape::Error>(())
//! ```

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops;
use crate::tensor::Tensor;
use crate::variable::Variable;

/// A differentiable function with trainable variables. TF equivalent:
/// `tf.keras.layers.Layer` (built eagerly: shapes are given at construction).
pub trait Layer {
    /// The layer applied to `x`. Variables are read with [`Variable::read`], so a
    /// recording tape watches them.
    fn forward(&self, x: &Tensor) -> Result<Tensor>;
    /// The variables an optimizer updates, in a stable order.
    fn trainable_variables(&self) -> Vec<Variable>;
}

/// An elementwise activation. TF equivalent: `tf.keras.activations`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    /// The identity.
    Linear,
    Relu,
    Sigmoid,
    Tanh,
    /// Softmax over the last axis.
    Softmax,
}

impl Activation {
    /// The activation's Keras name (`"relu"`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Activation::Linear => "linear",
            Activation::Relu => "relu",
            Activation::Sigmoid => "sigmoid",
            Activation::Tanh => "tanh",
            Activation::Softmax => "softmax",
        }
    }

    /// The activation of a Keras name (`None` for another name).
    pub fn from_name(name: &str) -> Option<Activation> {
        Some(match name {
            "linear" => Activation::Linear,
            "relu" => Activation::Relu,
            "sigmoid" => Activation::Sigmoid,
            "tanh" => Activation::Tanh,
            "softmax" => Activation::Softmax,
            _ => return None,
        })
    }

    /// The activation applied to `x`.
    pub fn apply(&self, x: &Tensor) -> Result<Tensor> {
        match self {
            Activation::Linear => Ok(x.clone()),
            Activation::Relu => ops::relu(x),
            Activation::Sigmoid => ops::sigmoid(x),
            Activation::Tanh => ops::tanh(x),
            Activation::Softmax => ops::softmax(x, -1),
        }
    }
}

/// Keras' `compute_fans`: `(fan_in, fan_out)` of a kernel shape (a convolution's
/// receptive field multiplies both).
pub fn fans(shape: &[usize]) -> (f64, f64) {
    match shape {
        [] => (1.0, 1.0),
        [n] => (*n as f64, *n as f64),
        _ => {
            let receptive: usize = shape[..shape.len() - 2].iter().product();
            (
                (shape[shape.len() - 2] * receptive) as f64,
                (shape[shape.len() - 1] * receptive) as f64,
            )
        }
    }
}

/// The distribution a [`variance_scaling`] initializer draws from, with its
/// arguments: uniform on `[a, b)`, or a (truncated) normal of mean `a` and standard
/// deviation `b` (`ops::random`'s).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Draw {
    Uniform(f64, f64),
    TruncatedNormal(f64, f64),
    Normal(f64, f64),
}

impl Draw {
    /// Keras' `VarianceScaling(scale, mode, distribution)` for `shape`: the variance
    /// `scale / max(1, n)`, `n` the fan in (`"fan_in"`), out (`"fan_out"`) or their
    /// average (`"fan_avg"`); `distribution` `"uniform"` (on `±sqrt(3 variance)`),
    /// `"truncated_normal"` (or `"normal"`: the standard deviation divided by
    /// 0.8796..., the truncation's) or `"untruncated_normal"`. In Keras' order of
    /// operations (the Python `gt.initializers` draw from these numbers).
    pub fn variance_scaling(
        shape: &[usize],
        scale: f64,
        mode: &str,
        distribution: &str,
    ) -> Result<Draw> {
        const OP: &str = "VarianceScaling";
        if scale.is_nan() || scale <= 0.0 {
            return Err(Error::invalid(
                OP,
                format!("scale must be a positive float, got {scale}"),
            ));
        }
        let (fan_in, fan_out) = fans(shape);
        let n = match mode {
            "fan_in" => fan_in,
            "fan_out" => fan_out,
            "fan_avg" => (fan_in + fan_out) / 2.0,
            _ => return Err(Error::invalid(OP, format!("invalid mode {mode:?}"))),
        };
        let scale = scale / f64::max(1.0, n);
        Ok(match distribution.to_ascii_lowercase().as_str() {
            "truncated_normal" | "normal" => {
                // The standard deviation of a standard normal truncated to [-2, 2].
                Draw::TruncatedNormal(0.0, scale.sqrt() / 0.879_625_661_034_239_8)
            }
            "untruncated_normal" => Draw::Normal(0.0, scale.sqrt()),
            "uniform" => {
                let limit = (3.0 * scale).sqrt();
                Draw::Uniform(-limit, limit)
            }
            _ => {
                return Err(Error::invalid(
                    OP,
                    format!("invalid distribution {distribution:?}"),
                ))
            }
        })
    }

    /// The draw's tensor of `shape` and `dtype` (`seed` the op seed, as
    /// `ops::random`'s).
    pub fn sample(&self, shape: &[usize], dtype: DType, seed: Option<i64>) -> Result<Tensor> {
        use crate::ops::random;
        match *self {
            Draw::Uniform(a, b) => random::uniform(shape, a, b, dtype, seed),
            Draw::TruncatedNormal(a, b) => random::truncated_normal(shape, a, b, dtype, seed),
            Draw::Normal(a, b) => random::normal(shape, a, b, dtype, seed),
        }
    }
}

/// Keras' `VarianceScaling` initializer (see [`Draw::variance_scaling`]): a tensor
/// of `shape` and `dtype`. TF equivalent: `tf.keras.initializers.VarianceScaling`.
pub fn variance_scaling(
    shape: &[usize],
    scale: f64,
    mode: &str,
    distribution: &str,
    dtype: DType,
    seed: Option<i64>,
) -> Result<Tensor> {
    Draw::variance_scaling(shape, scale, mode, distribution)?.sample(shape, dtype, seed)
}

/// Keras' Glorot-uniform initializer: uniform on `±sqrt(6 / (fan_in + fan_out))`,
/// `VarianceScaling(1, "fan_avg", "uniform")` (from `gradtape::ops::uniform` with
/// `seed`, so the Python `GlorotUniform(seed)` draws the same values). TF equivalent:
/// `tf.keras.initializers.GlorotUniform`.
pub fn glorot_uniform(shape: &[usize], dtype: DType, seed: Option<i64>) -> Result<Tensor> {
    variance_scaling(shape, 1.0, "fan_avg", "uniform", dtype, seed)
}

/// `activation(x @ kernel + bias)` over the last axis of `x` (inputs of rank above 2
/// are flattened to rows and back). The forward pass of [`Dense`] and of the Python
/// `gt.layers.Dense`.
pub fn dense(
    x: &Tensor,
    kernel: &Tensor,
    bias: Option<&Tensor>,
    activation: Activation,
) -> Result<Tensor> {
    let (xs, ks) = (x.shape().to_vec(), kernel.shape());
    if xs.is_empty() || ks.len() != 2 || xs[xs.len() - 1] != ks[0] {
        return Err(Error::invalid(
            "Dense",
            format!(
                "inputs of shape {xs:?} do not match a kernel of shape {ks:?} (the last axis must be {})",
                ks.first().copied().unwrap_or(0)
            ),
        ));
    }
    let y = if xs.len() == 2 {
        ops::matmul(x, kernel)?
    } else {
        let rows = xs[..xs.len() - 1].iter().product();
        let y = ops::matmul(&ops::reshape(x, &[rows, ks[0]])?, kernel)?;
        let mut out = xs[..xs.len() - 1].to_vec();
        out.push(ks[1]);
        ops::reshape(&y, &out)?
    };
    let y = match bias {
        Some(b) => ops::add(&y, b)?,
        None => y,
    };
    activation.apply(&y)
}

/// A densely connected layer: `activation(x @ kernel + bias)`. TF equivalent:
/// `tf.keras.layers.Dense` (Glorot-uniform kernel, zeros bias).
#[derive(Clone, Debug)]
pub struct Dense {
    pub kernel: Variable,
    pub bias: Option<Variable>,
    pub activation: Activation,
}

impl Dense {
    /// A float32 layer from `input_dim` features to `units`, with a bias; `seed` is the
    /// op seed of the kernel's uniform draw (as `ops::random::uniform`'s: with a global
    /// seed set, the same program draws the same kernels).
    pub fn new(
        input_dim: usize,
        units: usize,
        activation: Activation,
        seed: Option<i64>,
    ) -> Result<Dense> {
        Dense::with_options(input_dim, units, activation, true, DType::F32, seed)
    }

    /// [`Dense::new`] with the bias optional and any float dtype.
    pub fn with_options(
        input_dim: usize,
        units: usize,
        activation: Activation,
        use_bias: bool,
        dtype: DType,
        seed: Option<i64>,
    ) -> Result<Dense> {
        if units == 0 || input_dim == 0 {
            return Err(Error::invalid(
                "Dense",
                format!("units and input_dim must be positive, got {units} and {input_dim}"),
            ));
        }
        let kernel = glorot_uniform(&[input_dim, units], dtype, seed)?;
        let bias = if use_bias {
            let zeros = crate::tensor::full(&[units], 0.0, dtype)?;
            Some(Variable::new(zeros, true, Some("dense/bias")))
        } else {
            None
        };
        Ok(Dense {
            kernel: Variable::new(kernel, true, Some("dense/kernel")),
            bias,
            activation,
        })
    }
}

impl Layer for Dense {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let b = self.bias.as_ref().map(Variable::read);
        dense(x, &self.kernel.read(), b.as_ref(), self.activation)
    }
    fn trainable_variables(&self) -> Vec<Variable> {
        let mut v = vec![self.kernel.clone()];
        v.extend(self.bias.clone());
        v
    }
}

/// Layers applied one after another. TF equivalent: `tf.keras.Sequential`.
#[derive(Default)]
pub struct Sequential {
    layers: Vec<Box<dyn Layer + Send + Sync>>,
}

impl Sequential {
    /// An empty stack (the identity).
    pub fn new() -> Sequential {
        Sequential::default()
    }
    /// The stack with `layer` appended (Keras' `model.add`, in builder form).
    #[allow(clippy::should_implement_trait)] // Keras' name, not `+`
    pub fn add(mut self, layer: impl Layer + Send + Sync + 'static) -> Sequential {
        self.push(layer);
        self
    }
    /// Appends `layer`.
    pub fn push(&mut self, layer: impl Layer + Send + Sync + 'static) {
        self.layers.push(Box::new(layer));
    }
    /// The number of layers.
    pub fn len(&self) -> usize {
        self.layers.len()
    }
    /// Whether there are no layers.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }
}

impl Layer for Sequential {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let mut y = x.clone();
        for layer in &self.layers {
            y = layer.forward(&y)?;
        }
        Ok(y)
    }
    fn trainable_variables(&self) -> Vec<Variable> {
        self.layers
            .iter()
            .flat_map(|l| l.trainable_variables())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_computes_activation_of_affine() {
        let d = Dense::new(2, 3, Activation::Relu, Some(7)).unwrap();
        let k = d.kernel.value_unrecorded().to_vec::<f32>().unwrap();
        // Glorot-uniform bound sqrt(6 / (2 + 3)); the bias starts at zero.
        let limit = (6.0f32 / 5.0).sqrt();
        assert!(k.iter().all(|v| v.abs() <= limit) && k.iter().any(|v| *v != 0.0));
        assert_eq!(
            d.bias
                .as_ref()
                .unwrap()
                .value_unrecorded()
                .to_vec::<f32>()
                .unwrap(),
            vec![0.0; 3]
        );
        d.bias
            .as_ref()
            .unwrap()
            .assign(&Tensor::from_vec(vec![0.5f32, -0.5, 0.0], &[3]).unwrap())
            .unwrap();
        let x = [1.0f32, -2.0];
        let y = d
            .forward(&Tensor::from_vec(x.to_vec(), &[1, 2]).unwrap())
            .unwrap();
        let b = [0.5f32, -0.5, 0.0];
        let want: Vec<f32> = (0..3)
            .map(|j| (x[0] * k[j] + x[1] * k[3 + j] + b[j]).max(0.0))
            .collect();
        let got = y.to_vec::<f32>().unwrap();
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() < 1e-6, "{got:?} vs {want:?}");
        }
        // Rank-3 inputs map their last axis.
        let y3 = d
            .forward(&Tensor::from_vec(vec![0.0f32; 8], &[2, 2, 2]).unwrap())
            .unwrap();
        assert_eq!(y3.shape(), &[2, 2, 3]);
        assert!(d
            .forward(&Tensor::from_vec(vec![0.0f32; 3], &[1, 3]).unwrap())
            .is_err());
        assert!(Dense::new(0, 3, Activation::Linear, None).is_err());
    }

    #[test]
    fn sequential_chains_and_collects_variables() {
        let a = Dense::with_options(3, 4, Activation::Tanh, false, DType::F64, Some(1)).unwrap();
        let b = Dense::new(4, 2, Activation::Softmax, Some(2)).unwrap();
        assert!(a.bias.is_none());
        let x = Tensor::from_vec(vec![0.1f64, 0.2, 0.3], &[1, 3]).unwrap();
        let h = a.forward(&x).unwrap();
        let seq = Sequential::new().add(a);
        assert_eq!(
            seq.forward(&x).unwrap().to_vec::<f64>().unwrap(),
            h.to_vec::<f64>().unwrap()
        );
        assert_eq!(seq.trainable_variables().len(), 1);
        let probs = b
            .forward(&Tensor::from_vec(vec![1.0f32; 4], &[1, 4]).unwrap())
            .unwrap();
        let p = probs.to_vec::<f32>().unwrap();
        assert!((p[0] + p[1] - 1.0).abs() < 1e-6);
        assert!(Sequential::new().is_empty());
    }

    #[test]
    fn initializers_draw_the_python_initializers_values() {
        // The values `gt.initializers` drew before it called this code (its own fans
        // and scaling in Python, then `gt.random`), after `gt.random.set_seed(1)`:
        // GlorotUniform(seed=3) of (3, 4) float32 (also `gt.layers.Dense(4,
        // kernel_initializer=GlorotUniform(seed=3))` on 3 features), of (2, 3, 5)
        // float64, HeNormal(seed=5) of (4, 2) float32, and VarianceScaling(2,
        // "fan_out", "untruncated_normal", seed=7) of (3, 3) float64; the first five.
        let _s = crate::ops::random::serial();
        let first5 = |t: Tensor| -> Vec<f64> {
            let v = t.cast(DType::F64).unwrap().to_vec::<f64>().unwrap();
            v[..5].to_vec()
        };
        let seeded = |f: &dyn Fn() -> Result<Tensor>| {
            crate::ops::random::set_seed(Some(1));
            f().unwrap()
        };
        let dense = || -> Result<Tensor> {
            let d = Dense::with_options(3, 4, Activation::Linear, true, DType::F32, Some(3))?;
            Ok(d.kernel.value_unrecorded())
        };
        let glorot = [
            0.29728612303733826,
            -0.2828279137611389,
            -0.6354122161865234,
            0.6615937948226929,
            -0.5772815942764282,
        ];
        let cases = [
            (
                seeded(&|| glorot_uniform(&[3, 4], DType::F32, Some(3))),
                glorot,
            ),
            (seeded(&dense), glorot),
            (
                seeded(&|| glorot_uniform(&[2, 3, 5], DType::F64, Some(3))),
                [
                    -0.18707303707572176,
                    0.4376031970159953,
                    -0.1375332464045057,
                    0.37655247620986665,
                    0.45592212542173816,
                ],
            ),
            (
                seeded(&|| {
                    variance_scaling(
                        &[4, 2],
                        2.0,
                        "fan_in",
                        "truncated_normal",
                        DType::F32,
                        Some(5),
                    )
                }),
                [
                    0.1435403823852539,
                    1.5380715131759644,
                    -1.1103193759918213,
                    0.9088544845581055,
                    0.4992775321006775,
                ],
            ),
            (
                seeded(&|| {
                    let f64_ = DType::F64;
                    variance_scaling(&[3, 3], 2.0, "fan_out", "untruncated_normal", f64_, Some(7))
                }),
                [
                    0.46591994545684573,
                    -0.15971530700401082,
                    1.0392945332473398,
                    0.7848374494624943,
                    0.34222837435079406,
                ],
            ),
        ];
        crate::ops::random::set_seed(None);
        for (i, (t, want)) in cases.into_iter().enumerate() {
            assert_eq!(first5(t), want, "case {i}");
        }
        // The scaling: Keras' numbers; bad arguments are errors.
        let limit = (6.0f64 / 7.0).sqrt();
        assert_eq!(
            Draw::variance_scaling(&[3, 4], 1.0, "fan_avg", "uniform").unwrap(),
            Draw::Uniform(-limit, limit)
        );
        // A 3x3 convolution from 2 to 8 channels: fan_in 18.
        assert_eq!(
            Draw::variance_scaling(&[3, 3, 2, 8], 2.0, "fan_in", "untruncated_normal").unwrap(),
            Draw::Normal(0.0, (2.0f64 / 18.0).sqrt())
        );
        assert!(Draw::variance_scaling(&[3], 0.0, "fan_in", "uniform").is_err());
        assert!(Draw::variance_scaling(&[3], 1.0, "fan", "uniform").is_err());
        assert!(Draw::variance_scaling(&[3], 1.0, "fan_in", "cauchy").is_err());
    }
}
