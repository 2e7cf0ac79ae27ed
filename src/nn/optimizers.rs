//! Optimizers with Keras 3's update rules: [`Sgd`] (with momentum and Nesterov),
//! [`Adam`] (with AMSGrad), [`AdamW`], [`RmsProp`], [`Adagrad`], [`Nadam`], [`Adamax`],
//! [`Adadelta`], [`Ftrl`] and [`Lion`], for float16, float32 and float64 variables
//! (float16 computed as TF does: each operation rounded to float16), and for
//! complex64 and complex128 variables (every rule, with the operations of TF's
//! training ops on complex numbers: `g * g` for the square, principal square roots
//! and powers, `sign(z) = z / |z|`; where a rule takes a maximum or clips, complex
//! numbers compare by modulus).
//!
//! Each step of a variable is one fused kernel ([`apply_update`]), one generic
//! function for every element type (real and complex): a single pass over
//! the variable, its gradient and its slots (in parallel over chunks for big
//! variables), writing the new value and the new slots. The updates are not recorded
//! by tapes (as TF's are not). The Python package's optimizers (`gt.optimizers`) call
//! the same kernel, so the two agree to the bit.
//!
//! ```
//! use gradtape::nn::{Adam, Optimizer};
//! use gradtape::{GradientTape, Tensor, Variable};
//!
//! let w = Variable::new(Tensor::scalar(1.0f32), true, Some("w"));
//! let mut opt = Adam::new(0.1);
//! for _ in 0..3 {
//!     let tape = GradientTape::new();
//!     let loss = tape.record(|| w.read().square())?; // loss = w², gradient 2w
//!     let grads = tape.gradients(&loss, &[&w])?;
//!     opt.apply_gradients(&[(grads[0].clone().expect("connected"), &w)])?;
//! }
//! assert_eq!(opt.iterations(), 3);
//! // Adam's first steps are about `learning_rate` each: 1 -> 0.9 -> 0.8 -> 0.7.
//! let w_now = w.value_unrecorded().to_f64_scalar()?;
//! assert!((w_now - 0.7).abs() < 2e-3, "{w_now}");
//! assert!(opt.slot(&w, "m").is_some() && opt.slot(&w, "v").is_some());
//! # Ok::<(), gradtape::Error>(())
//! ```

use std::collections::HashMap;
use std::mem::MaybeUninit;

use half::{bf16, f16};
use num_complex::{Complex32, Complex64};
use num_traits::Float;

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels::elementwise::CHUNK;
use crate::kernels::PAR_THRESHOLD;
use crate::tensor::{Tensor, TensorId};
use crate::variable::Variable;

const OP: &str = "ResourceApplyOptimizer";

/// The update rule of an optimizer: its hyperparameters, without the learning rate
/// (which may change every step).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    /// Keras 3 `SGD`: `var -= lr * g`; with momentum `m = momentum * m - lr * g`,
    /// then `var += m` (or, Nesterov, `var += momentum * m - lr * g`).
    Sgd { momentum: f64, nesterov: bool },
    /// Keras 3 `Adam`: `m += (g - m)(1 - β1)`, `v += (g² - v)(1 - β2)` (AMSGrad:
    /// `v̂ = max(v̂, v)` is used for `v`), `var -= m α / (√v + ε)` with
    /// `α = lr √(1 - β2^t) / (1 - β1^t)` at step `t` (in the variable's dtype, as
    /// Keras computes it).
    Adam {
        beta_1: f64,
        beta_2: f64,
        epsilon: f64,
        amsgrad: bool,
    },
    /// Keras 3 `RMSprop`: `v = ρ v + (1 - ρ) g²` (centered: `a = ρ a + (1 - ρ) g` and
    /// `v - a²` in the denominator), `inc = lr g / √(v + ε)`, with momentum
    /// `m = momentum m + inc`, `var -= m` (else `var -= inc`).
    RmsProp {
        rho: f64,
        momentum: f64,
        epsilon: f64,
        centered: bool,
    },
    /// Keras 3 `Adagrad`: `acc += g²`, `var -= lr g / √(acc + ε)`; the accumulator
    /// starts at `initial_accumulator_value`.
    Adagrad {
        initial_accumulator_value: f64,
        epsilon: f64,
    },
    /// Keras 3 `Nadam`: Adam's moments with Nesterov momentum and the momentum
    /// schedule `u_t = β1 (1 - ½ 0.96^t)`: `m̂ = u_{t+1} m / (1 - Πu_{..t+1}) +
    /// (1 - u_t) g / (1 - Πu_{..t})`, `var -= lr m̂ / (√(v / (1 - β2^t)) + ε)`.
    Nadam {
        beta_1: f64,
        beta_2: f64,
        epsilon: f64,
    },
    /// Keras 3 `Adamax`: `m += (g - m)(1 - β1)`, `u = max(β2 u, |g|)`,
    /// `var -= lr m / ((1 - β1^t)(u + ε))`.
    Adamax {
        beta_1: f64,
        beta_2: f64,
        epsilon: f64,
    },
    /// Keras 3 `Adadelta`: `a = ρ a + (1 - ρ) g²`, `Δ = -√(d + ε) g / √(a + ε)`,
    /// `d = ρ d + (1 - ρ) Δ²`, `var += lr Δ`.
    Adadelta { rho: f64, epsilon: f64 },
    /// Keras 3 `Ftrl` (follow the regularized leader): the accumulator `n` (starting at
    /// `initial_accumulator_value`) and the linear term `z`; `var = (clip(z, ±l1) - z)
    /// / (n^-p / lr + 2 (l2 + β / 2lr))`.
    Ftrl {
        learning_rate_power: f64,
        initial_accumulator_value: f64,
        l1: f64,
        l2: f64,
        l2_shrinkage: f64,
        beta: f64,
    },
    /// Keras 3 `Lion`: `var -= lr sign(β1 m + (1 - β1) g)`, then
    /// `m = β2 m + (1 - β2) g`.
    Lion { beta_1: f64, beta_2: f64 },
}

impl Rule {
    /// The names of the slots the rule keeps for each variable, in the order
    /// [`apply_update`] takes them (the names Keras gives them).
    pub fn slot_names(&self) -> Vec<&'static str> {
        match *self {
            Rule::Sgd { momentum, .. } if momentum != 0.0 => vec!["momentum"],
            Rule::Sgd { .. } => vec![],
            Rule::Adam { amsgrad: false, .. } => vec!["m", "v"],
            Rule::Adam { amsgrad: true, .. } => vec!["m", "v", "vhat"],
            Rule::RmsProp {
                momentum, centered, ..
            } => {
                let mut names = vec!["velocity"];
                if momentum > 0.0 {
                    names.push("momentum");
                }
                if centered {
                    names.push("average_gradient");
                }
                names
            }
            Rule::Adagrad { .. } => vec!["accumulator"],
            Rule::Nadam { .. } => vec!["momentum", "velocity"],
            Rule::Adamax { .. } => vec!["momentum", "norm"],
            Rule::Adadelta { .. } => vec!["accumulated_grad", "accumulated_delta_var"],
            Rule::Ftrl { .. } => vec!["accumulator", "linear"],
            Rule::Lion { .. } => vec!["momentum"],
        }
    }

    /// A slot's value before the first update (Adagrad's accumulator starts at
    /// `initial_accumulator_value`, the others at zero).
    pub fn slot_initial(&self, name: &str) -> f64 {
        match *self {
            Rule::Adagrad {
                initial_accumulator_value,
                ..
            } if name == "accumulator" => initial_accumulator_value,
            Rule::Ftrl {
                initial_accumulator_value,
                ..
            } if name == "accumulator" => initial_accumulator_value,
            _ => 0.0,
        }
    }
}

/// One step's scalars: the learning rate, the step number `t` (1 for the first
/// update; Adam's bias correction uses it) and the weight decay, if any (Keras 3:
/// `var -= var * weight_decay * lr` before the update).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    pub learning_rate: f64,
    pub step: i64,
    pub weight_decay: Option<f64>,
}

/// Checks a gradient against its variable for `rule` (float32 or float64, same dtype
/// and shape); the error [`apply_update`] would give, without changing anything.
pub fn check_update(var: &Variable, grad: &Tensor) -> Result<()> {
    let dtype = var.dtype();
    if !matches!(
        dtype,
        DType::F16 | DType::BF16 | DType::F32 | DType::F64 | DType::C64 | DType::C128
    ) {
        return Err(Error::dtype(
            OP,
            format!(
                "the fused optimizer kernels update floating and complex variables, '{}' is {}",
                var.name(),
                dtype.name()
            ),
        ));
    }
    if grad.dtype() != dtype {
        return Err(Error::dtype(
            OP,
            format!(
                "gradient of dtype {} does not match variable '{}' of dtype {}",
                grad.dtype().name(),
                var.name(),
                dtype.name()
            ),
        ));
    }
    let shape = var.shape();
    if grad.shape() != shape.as_slice() {
        return Err(Error::invalid(
            OP,
            format!(
                "gradient shape {:?} does not match variable '{}' of shape {:?}",
                grad.shape(),
                var.name(),
                shape
            ),
        ));
    }
    Ok(())
}

/// One optimizer step of `var` by `rule`: reads the variable, `grad` and the slots
/// once, and stores the new variable and slots (one fused pass, in parallel over
/// chunks above the engine's parallel threshold). `slots` are the variables named by
/// [`Rule::slot_names`], in that order, of `var`'s dtype and shape. `grad_squared`
/// (Adam only) replaces `g²` in the second moment: a sparse gradient's squares summed
/// per row, as Keras applies `IndexedSlices`. Not recorded by tapes; inside a traced
/// function ([`crate::graph`]) it is recorded as one stateful node, run on every call.
pub fn apply_update(
    rule: &Rule,
    var: &Variable,
    grad: &Tensor,
    slots: &[&Variable],
    step: Step,
    grad_squared: Option<&Tensor>,
) -> Result<()> {
    let lr = Tensor::scalar(step.learning_rate);
    let t = Tensor::scalar(step.step);
    apply_update_with(
        rule,
        var,
        grad,
        slots,
        &lr,
        &t,
        step.weight_decay,
        grad_squared,
    )
}

/// [`apply_update`] with the learning rate and the step number as scalar tensors
/// (any real dtype), which a trace reads when its graph runs (a schedule's value,
/// the step counter).
#[allow(clippy::too_many_arguments)]
pub fn apply_update_with(
    rule: &Rule,
    var: &Variable,
    grad: &Tensor,
    slots: &[&Variable],
    learning_rate: &Tensor,
    step: &Tensor,
    weight_decay: Option<f64>,
    grad_squared: Option<&Tensor>,
) -> Result<()> {
    check_update(var, grad)?;
    let names = rule.slot_names();
    if slots.len() != names.len() {
        return Err(Error::invalid(
            OP,
            format!(
                "{rule:?} keeps {} slots ({names:?}), got {}",
                names.len(),
                slots.len()
            ),
        ));
    }
    for (s, name) in slots.iter().zip(&names) {
        check_update(var, &s.value_unrecorded())
            .map_err(|e| Error::invalid(OP, format!("slot '{name}': {e}")))?;
    }
    if let Some(sq) = grad_squared {
        if !matches!(rule, Rule::Adam { .. }) {
            return Err(Error::invalid(OP, "only Adam takes squared gradients"));
        }
        check_update(var, sq)?;
    }
    for t in [learning_rate, step] {
        if t.size() != 1 || !(t.dtype().is_floating() || t.dtype().is_integer()) {
            return Err(Error::invalid(
                OP,
                format!("the learning rate and the step are real scalars, got {t:?}"),
            ));
        }
    }
    let rule = *rule;
    let scalars = move |x: &[Tensor]| -> Result<Step> {
        Ok(Step {
            learning_rate: x[1].to_f64_scalar()?,
            step: x[2].to_f64_scalar()? as i64,
            weight_decay,
        })
    };
    let mut inputs = vec![grad, learning_rate, step];
    inputs.extend(grad_squared);
    if !crate::graph::is_tracing() {
        let x: Vec<Tensor> = inputs.into_iter().cloned().collect();
        return update_now(&rule, var, &x[0], slots, scalars(&x)?, x.get(3));
    }
    // Traced: the variables are restored when the trace ends, and every call of the
    // graph runs the step on its own (or substituted) variables.
    crate::graph::on_variable_assign(var);
    for s in slots {
        crate::graph::on_variable_assign(s);
    }
    let var = var.clone();
    let slots: Vec<Variable> = slots.iter().map(|s| (*s).clone()).collect();
    crate::graph::apply_stateful(OP, &inputs, move |x| {
        let v = crate::graph::resolve(&var);
        let s: Vec<Variable> = slots.iter().map(crate::graph::resolve).collect();
        let refs: Vec<&Variable> = s.iter().collect();
        update_now(&rule, &v, &x[0], &refs, scalars(x)?, x.get(3))?;
        Ok(Vec::new())
    })?;
    Ok(())
}

/// The step itself, on values checked by [`apply_update_with`].
fn update_now(
    rule: &Rule,
    var: &Variable,
    grad: &Tensor,
    slots: &[&Variable],
    step: Step,
    grad_squared: Option<&Tensor>,
) -> Result<()> {
    loop {
        let cur = var.value_unrecorded();
        let slot_values: Vec<Tensor> = slots.iter().map(|s| s.value_unrecorded()).collect();
        let (new, new_slots) = match cur.dtype() {
            DType::F16 => fused::<f16>(rule, &cur, grad, &slot_values, step, grad_squared)?,
            DType::BF16 => fused::<bf16>(rule, &cur, grad, &slot_values, step, grad_squared)?,
            DType::F32 => fused::<f32>(rule, &cur, grad, &slot_values, step, grad_squared)?,
            DType::C64 => fused::<Complex32>(rule, &cur, grad, &slot_values, step, grad_squared)?,
            DType::C128 => fused::<Complex64>(rule, &cur, grad, &slot_values, step, grad_squared)?,
            _ => fused::<f64>(rule, &cur, grad, &slot_values, step, grad_squared)?,
        };
        if var.store_if_current(&cur, new) {
            for (s, value) in slots.iter().zip(new_slots) {
                s.restore_unrecorded(value);
            }
            return Ok(());
        }
    }
}

/// The real types a step's scalars (Adam's `α`, Nadam's momentum schedule, ...) are
/// computed in: the variable's own dtype for real variables (as Keras 3 computes
/// them), float64 for complex ones (rounded once to the element type).
trait Coef: Float + Send + Sync {
    fn from_f64(v: f64) -> Self;
}
impl Coef for f32 {
    fn from_f64(v: f64) -> f32 {
        v as f32
    }
}
impl Coef for f64 {
    fn from_f64(v: f64) -> f64 {
        v
    }
}
/// float16 as TF computes it: every operation in float32, rounded to float16.
impl Coef for f16 {
    fn from_f64(v: f64) -> f16 {
        f16::from_f64(v)
    }
}
/// bfloat16 likewise: every operation in float32, rounded to bfloat16.
impl Coef for bf16 {
    fn from_f64(v: f64) -> bf16 {
        bf16::from_f64(v)
    }
}

/// The element types of the fused kernel: float16, bfloat16, float32, float64, complex64 and
/// complex128. One kernel ([`fused`]) holds every rule; what differs between real
/// and complex elements is only these operations. On complex numbers they follow
/// TF's training ops (`ApplyAdam`, `ApplyAdadelta`, `ApplyFtrl`, ... on
/// complex64/complex128), whose formulas Keras 3's optimizers spell with the same
/// ops: the square is `g * g` (not `|g|²`), `sqrt` and `pow` are the principal
/// branches, `sign(z) = z / |z|` (as `tf.sign`), `abs` is the modulus. Where those
/// formulas compare numbers, the complex elements compare moduli: see
/// [`Elem::maximum`] and [`Elem::clip`].
trait Elem:
    Copy
    + Send
    + Sync
    + crate::dtype::Element
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
{
    /// The type of the step's scalars.
    type Coef: Coef;
    /// A real scalar as an element (a zero imaginary part for complex ones).
    fn from_coef(c: Self::Coef) -> Self;
    fn sqrt(self) -> Self;
    /// `self ** p` for a real `p` (a complex `p`'s imaginary part is zero).
    fn powf(self, p: Self) -> Self;
    /// `|self|` (the modulus, a real element, for complex ones).
    fn abs(self) -> Self;
    /// `tf.sign`: -1, 0 or 1 (NaN for NaN); `z / |z|` (0 for 0) for complex `z`.
    fn sign(self) -> Self;
    /// `tf.maximum`, NaN propagating (AMSGrad's `v̂`, Adamax's norm). Complex: the
    /// one of the larger modulus (the earlier on a tie). Keras 3 leaves this
    /// undefined (TF's `maximum` takes no complex numbers; JAX and NumPy compare
    /// them lexicographically); by modulus, AMSGrad keeps its point, a denominator
    /// `|√v̂|` that never decreases, and Adamax's norm (real, `|g|`) is the real max.
    fn maximum(self, other: Self) -> Self;
    /// Ftrl's `clip(z, -l1, l1)` for a real `l1 ≥ 0` (`tf.clip_by_value`, NaN
    /// staying NaN). Complex: `z` shrunk onto the disk `|z| ≤ l1`, as TF's
    /// `ApplyFtrl` on complex computes it (`l1 sign(z)` where `|z| > l1`).
    fn clip(self, l1: Self) -> Self;
}

macro_rules! real_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            type Coef = $t;
            #[inline(always)]
            fn from_coef(c: $t) -> $t {
                c
            }
            #[inline(always)]
            fn sqrt(self) -> $t {
                Float::sqrt(self)
            }
            #[inline(always)]
            fn powf(self, p: $t) -> $t {
                Float::powf(self, p)
            }
            #[inline(always)]
            fn abs(self) -> $t {
                Float::abs(self)
            }
            #[inline(always)]
            fn sign(self) -> $t {
                if self > <$t as num_traits::Zero>::zero() {
                    <$t as num_traits::One>::one()
                } else if self < <$t as num_traits::Zero>::zero() {
                    -<$t as num_traits::One>::one()
                } else {
                    self
                }
            }
            #[inline(always)]
            fn maximum(self, other: $t) -> $t {
                if self.is_nan() || self >= other {
                    self
                } else {
                    other
                }
            }
            #[inline(always)]
            fn clip(self, l1: $t) -> $t {
                if self > l1 {
                    l1
                } else if self < -l1 {
                    -l1
                } else {
                    self
                }
            }
        }
    )*};
}
real_elem!(f16, bf16, f32, f64);

macro_rules! complex_elem {
    ($t:ty, $r:ty) => {
        impl Elem for $t {
            type Coef = f64;
            #[inline(always)]
            fn from_coef(c: f64) -> $t {
                <$t>::new(c as $r, 0.0)
            }
            #[inline(always)]
            fn sqrt(self) -> $t {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn powf(self, p: $t) -> $t {
                <$t>::powf(self, p.re)
            }
            #[inline(always)]
            fn abs(self) -> $t {
                <$t>::new(self.norm(), 0.0)
            }
            #[inline(always)]
            fn sign(self) -> $t {
                let n = self.norm();
                if n == 0.0 {
                    self
                } else {
                    self / n
                }
            }
            #[inline(always)]
            fn maximum(self, other: $t) -> $t {
                if self.is_nan() {
                    self
                } else if other.is_nan() {
                    other
                } else if self.norm() >= other.norm() {
                    self
                } else {
                    other
                }
            }
            #[inline(always)]
            fn clip(self, l1: $t) -> $t {
                let n = self.norm();
                if n > l1.re {
                    self * (l1.re / n)
                } else {
                    self
                }
            }
        }
    };
}
complex_elem!(Complex32, f32);
complex_elem!(Complex64, f64);

/// Nadam's `u_product` after `step` steps, as Keras 3 keeps it (one running product,
/// in the variable's dtype): `Π_{k ≤ t} β1 (1 - ½ 0.96^k)`. Past 2000 factors the
/// `0.96^k` term is below every dtype's precision, so the rest is `β1^(t - 2000)`.
fn nadam_u_product<T: Coef>(beta_1: T, step: i64) -> T {
    let (half, decay) = (T::from_f64(0.5), T::from_f64(0.96));
    let mut u = T::one();
    let exact = step.clamp(0, 2000);
    for k in 1..=exact {
        u = u * beta_1 * (T::one() - half * decay.powf(T::from_f64(k as f64)));
    }
    if step > exact {
        u = u * beta_1.powf(T::from_f64((step - exact) as f64));
    }
    u
}

/// The elements of a tensor, contiguous (a copy only for a strided layout).
fn elems<T: Elem>(t: &Tensor) -> Result<std::borrow::Cow<'_, [T]>> {
    let a = t.array::<T>()?;
    Ok(match a.as_slice() {
        Some(s) => std::borrow::Cow::Borrowed(s),
        None => std::borrow::Cow::Owned(a.iter().copied().collect()),
    })
}

/// One step of every rule, for real and complex elements alike (see [`Elem`]).
fn fused<T: Elem>(
    rule: &Rule,
    cur: &Tensor,
    grad: &Tensor,
    slots: &[Tensor],
    step: Step,
    grad_squared: Option<&Tensor>,
) -> Result<(Tensor, Vec<Tensor>)> {
    let x = elems::<T>(cur)?;
    let g = elems::<T>(grad)?;
    let s: Vec<std::borrow::Cow<'_, [T]>> = slots.iter().map(elems::<T>).collect::<Result<_>>()?;
    let sq = grad_squared.map(elems::<T>).transpose()?;
    let lr = step.learning_rate;
    // `k`: a scalar in the step's scalar type; `c`: a constant as an element.
    let k = <T::Coef as Coef>::from_f64;
    let c = |v: f64| T::from_coef(k(v));
    let one = T::from_coef(<T::Coef as num_traits::One>::one());
    // Keras 3: weight decay first (`var -= var * weight_decay * lr`, in the variable's
    // dtype and that order), then the rule's update.
    let decay = step.weight_decay.map(|wd| (c(wd), c(lr)));
    let dx = move |x: T| match decay {
        Some((wd, lr)) => x - x * wd * lr,
        None => x,
    };
    let shape = cur.shape();
    let (new, outs) = match *rule {
        Rule::Sgd { momentum, nesterov } => {
            let lr = c(lr);
            if momentum == 0.0 {
                let (n, []) = run(&x, &g, &g, [], |x, g, _, []| (dx(x) - g * lr, []))?;
                (n, vec![])
            } else {
                let mo = c(momentum);
                let (n, [m]) = run(&x, &g, &g, [&s[0]], |x, g, _, [m]| {
                    let m = m * mo - g * lr;
                    let x = dx(x);
                    (
                        if nesterov {
                            x + (m * mo - g * lr)
                        } else {
                            x + m
                        },
                        [m],
                    )
                })?;
                (n, vec![m])
            }
        }
        Rule::Adam {
            beta_1,
            beta_2,
            epsilon,
            amsgrad,
        } => {
            // As Keras 3, in the variable's dtype: the step and the betas cast, then
            // `lr * sqrt(1 - b2^t) / (1 - b1^t)`.
            let t = k(step.step as f64);
            let o = <T::Coef as num_traits::One>::one();
            let alpha = T::from_coef(
                k(lr) * Float::sqrt(o - Float::powf(k(beta_2), t))
                    / (o - Float::powf(k(beta_1), t)),
            );
            let (c1, c2, eps) = (c(1.0 - beta_1), c(1.0 - beta_2), c(epsilon));
            let sq_or_g: &[T] = sq.as_deref().unwrap_or(&g);
            let squared = sq.is_some();
            let moments = move |g: T, q: T, m: T, v: T| {
                let q = if squared { q } else { g * g };
                (m + (g - m) * c1, v + (q - v) * c2)
            };
            if amsgrad {
                let (n, [m, v, vh]) = run(
                    &x,
                    &g,
                    sq_or_g,
                    [&s[0], &s[1], &s[2]],
                    |x, g, q, [m, v, vh]| {
                        let (m, v) = moments(g, q, m, v);
                        let vh = vh.maximum(v);
                        (dx(x) - (m * alpha) / (vh.sqrt() + eps), [m, v, vh])
                    },
                )?;
                (n, vec![m, v, vh])
            } else {
                let (n, [m, v]) = run(&x, &g, sq_or_g, [&s[0], &s[1]], |x, g, q, [m, v]| {
                    let (m, v) = moments(g, q, m, v);
                    (dx(x) - (m * alpha) / (v.sqrt() + eps), [m, v])
                })?;
                (n, vec![m, v])
            }
        }
        Rule::RmsProp {
            rho,
            momentum,
            epsilon,
            centered,
        } => {
            let (r, c1, lr, eps, mo) = (c(rho), c(1.0 - rho), c(lr), c(epsilon), c(momentum));
            let vel = move |g: T, v: T| v * r + g * g * c1;
            match (momentum > 0.0, centered) {
                (false, false) => {
                    let (n, [v]) = run(&x, &g, &g, [&s[0]], |x, g, _, [v]| {
                        let v = vel(g, v);
                        (dx(x) - (g * lr) / (v + eps).sqrt(), [v])
                    })?;
                    (n, vec![v])
                }
                (true, false) => {
                    let (n, [v, m]) = run(&x, &g, &g, [&s[0], &s[1]], |x, g, _, [v, m]| {
                        let v = vel(g, v);
                        let m = m * mo + (g * lr) / (v + eps).sqrt();
                        (dx(x) - m, [v, m])
                    })?;
                    (n, vec![v, m])
                }
                (false, true) => {
                    let (n, [v, a]) = run(&x, &g, &g, [&s[0], &s[1]], |x, g, _, [v, a]| {
                        let v = vel(g, v);
                        let a = a * r + g * c1;
                        (dx(x) - (g * lr) / (v - a * a + eps).sqrt(), [v, a])
                    })?;
                    (n, vec![v, a])
                }
                (true, true) => {
                    let (n, [v, m, a]) =
                        run(&x, &g, &g, [&s[0], &s[1], &s[2]], |x, g, _, [v, m, a]| {
                            let v = vel(g, v);
                            let a = a * r + g * c1;
                            let m = m * mo + (g * lr) / (v - a * a + eps).sqrt();
                            (dx(x) - m, [v, m, a])
                        })?;
                    (n, vec![v, m, a])
                }
            }
        }
        Rule::Adagrad { epsilon, .. } => {
            let (lr, eps) = (c(lr), c(epsilon));
            let (n, [acc]) = run(&x, &g, &g, [&s[0]], |x, g, _, [acc]| {
                let acc = acc + g * g;
                (dx(x) - (g * lr) / (acc + eps).sqrt(), [acc])
            })?;
            (n, vec![acc])
        }
        Rule::Nadam {
            beta_1,
            beta_2,
            epsilon,
        } => {
            // Keras 3's order; the schedule's scalars in the variable's dtype.
            let o = <T::Coef as num_traits::One>::one();
            let (b1, b2) = (k(beta_1), k(beta_2));
            let (half, decay) = (k(0.5), k(0.96));
            let (t, t1) = (k(step.step as f64), k(step.step as f64 + 1.0));
            let u_t = b1 * (o - half * Float::powf(decay, t));
            let u_t_1 = b1 * (o - half * Float::powf(decay, t1));
            let u_prod = nadam_u_product(b1, step.step);
            let u_prod_1 = u_prod * u_t_1;
            let b2_power = Float::powf(b2, t);
            let e = T::from_coef;
            let (u_t, u_t_1, u_prod, u_prod_1, b2_power) =
                (e(u_t), e(u_t_1), e(u_prod), e(u_prod_1), e(b2_power));
            let (lr, eps) = (c(lr), c(epsilon));
            let (c1, c2) = (one - e(b1), one - e(b2));
            let (n, [m, v]) = run(&x, &g, &g, [&s[0], &s[1]], |x, g, _, [m, v]| {
                let m = m + (g - m) * c1;
                let v = v + (g * g - v) * c2;
                let m_hat = (u_t_1 * m) / (one - u_prod_1) + ((one - u_t) * g) / (one - u_prod);
                let v_hat = v / (one - b2_power);
                (dx(x) - (m_hat * lr) / (v_hat.sqrt() + eps), [m, v])
            })?;
            (n, vec![m, v])
        }
        Rule::Adamax {
            beta_1,
            beta_2,
            epsilon,
        } => {
            let (lr, eps, c1, b2) = (c(lr), c(epsilon), c(1.0 - beta_1), c(beta_2));
            let b1_power = T::from_coef(Float::powf(k(beta_1), k(step.step as f64)));
            let (n, [m, u]) = run(&x, &g, &g, [&s[0], &s[1]], |x, g, _, [m, u]| {
                let m = m + (g - m) * c1;
                let u = (b2 * u).maximum(g.abs());
                (dx(x) - (lr * m) / ((one - b1_power) * (u + eps)), [m, u])
            })?;
            (n, vec![m, u])
        }
        Rule::Adadelta { rho, epsilon } => {
            let (lr, eps, r, c1) = (c(lr), c(epsilon), c(rho), c(1.0 - rho));
            let (n, [a, d]) = run(&x, &g, &g, [&s[0], &s[1]], |x, g, _, [a, d]| {
                let a = r * a + c1 * (g * g);
                let delta = -(((d + eps).sqrt() * g) / (a + eps).sqrt());
                let d = r * d + c1 * (delta * delta);
                (dx(x) + lr * delta, [a, d])
            })?;
            (n, vec![a, d])
        }
        Rule::Ftrl {
            learning_rate_power,
            l1,
            l2,
            l2_shrinkage,
            beta,
            ..
        } => {
            let lr = c(lr);
            let l2_reg = c(l2) + c(beta) / (c(2.0) * lr);
            let (p, shrink, l1) = (c(-learning_rate_power), c(2.0 * l2_shrinkage), c(l1));
            let two_l2 = c(2.0) * l2_reg;
            let (n, [acc, lin]) = run(&x, &g, &g, [&s[0], &s[1]], |x, g, _, [acc, lin]| {
                let x = dx(x);
                let grad_to_use = g + shrink * x;
                let new_acc = acc + g * g;
                let lin = lin + (grad_to_use - ((new_acc.powf(p) - acc.powf(p)) / lr) * x);
                let quadratic = new_acc.powf(p) / lr + two_l2;
                ((lin.clip(l1) - lin) / quadratic, [new_acc, lin])
            })?;
            (n, vec![acc, lin])
        }
        Rule::Lion { beta_1, beta_2 } => {
            let (lr, b1, b2) = (c(lr), c(beta_1), c(beta_2));
            let (n, [m]) = run(&x, &g, &g, [&s[0]], |x, g, _, [m]| {
                let update = (m * b1 + g * (one - b1)).sign();
                (dx(x) - lr * update, [m * b2 + g * (one - b2)])
            })?;
            (n, vec![m])
        }
    };
    let tensor = |v: Vec<T>| -> Result<Tensor> {
        let a = crate::size::shaped(OP, shape, v)?;
        Ok(Tensor::new(<T as crate::dtype::Element>::wrap(
            a.into_shared(),
        )))
    };
    Ok((
        tensor(new)?,
        outs.into_iter().map(tensor).collect::<Result<_>>()?,
    ))
}

/// One chunk's output pieces: where it starts, the variable's and the slots'.
type Piece<'a, T, const S: usize> = (
    usize,
    &'a mut [MaybeUninit<T>],
    [&'a mut [MaybeUninit<T>]; S],
);

/// `(x', s') = f(x[i], g[i], q[i], s[i])` for every element: one pass reading the
/// inputs and writing `S + 1` new arrays, in chunks shared with the engine's pool
/// above [`PAR_THRESHOLD`] elements.
#[inline(always)]
fn run<T: Copy + Send + Sync, const S: usize>(
    x: &[T],
    g: &[T],
    q: &[T],
    s: [&[T]; S],
    f: impl Fn(T, T, T, [T; S]) -> (T, [T; S]) + Sync,
) -> Result<(Vec<T>, [Vec<T>; S])> {
    let n = x.len();
    let mut out: Vec<T> = crate::size::try_vec(OP, n)?;
    let mut outs: [Vec<T>; S] = [(); S].map(|_| Vec::new());
    for o in outs.iter_mut() {
        *o = crate::size::try_vec(OP, n)?;
    }
    let chunk = if n >= PAR_THRESHOLD { CHUNK } else { n.max(1) };
    {
        let mut slot_chunks = outs
            .each_mut()
            .map(|o| o.spare_capacity_mut()[..n].chunks_mut(chunk));
        let mut pieces: Vec<Piece<'_, T, S>> = out.spare_capacity_mut()[..n]
            .chunks_mut(chunk)
            .enumerate()
            .map(|(i, o)| {
                let so = std::array::from_fn(|k| slot_chunks[k].next().unwrap_or_default());
                (i * chunk, o, so)
            })
            .collect();
        crate::pool::pieces(&mut pieces, 1, |_, p| {
            for (start, o, so) in p.iter_mut() {
                let len = o.len();
                let (x, g, q) = (
                    &x[*start..][..len],
                    &g[*start..][..len],
                    &q[*start..][..len],
                );
                let s: [&[T]; S] = std::array::from_fn(|k| &s[k][*start..][..len]);
                for i in 0..len {
                    let (nx, ns) = f(x[i], g[i], q[i], std::array::from_fn(|k| s[k][i]));
                    o[i].write(nx);
                    for k in 0..S {
                        so[k][i].write(ns[k]);
                    }
                }
            }
        });
    }
    // SAFETY: the pieces cover `0..n` of every output, and the loop above wrote each
    // of their elements (a panic unwinds before this and drops the vectors empty).
    unsafe {
        out.set_len(n);
        for o in outs.iter_mut() {
            o.set_len(n);
        }
    }
    Ok((out, outs))
}

/// An optimizer: applies gradients to variables, keeping slots (as variables) and
/// a step counter. TF equivalent: `tf.keras.optimizers.Optimizer`.
pub trait Optimizer {
    /// Applies one update per `(gradient, variable)` pair and counts one step. Every
    /// pair is checked (float32/float64, gradient dtype and shape) before any variable
    /// changes.
    fn apply_gradients(&mut self, grads_and_vars: &[(Tensor, &Variable)]) -> Result<()>;
    /// The number of steps applied. TF equivalent: `optimizer.iterations`.
    fn iterations(&self) -> i64;
    /// The step counter as a variable (int64 scalar), as checkpoints save it.
    fn iterations_variable(&self) -> &Variable;
    /// The slot `name` of `var` (`"m"`, `"v"`, `"momentum"`, ...), once made by a
    /// first update of `var`.
    fn slot(&self, var: &Variable, name: &str) -> Option<Variable>;
}

/// What every optimizer keeps: the step counter and each variable's slots.
#[derive(Clone, Debug)]
struct State {
    iterations: Variable,
    slots: HashMap<TensorId, (Vec<&'static str>, Vec<Variable>)>,
}

impl Default for State {
    fn default() -> State {
        State {
            iterations: Variable::new(Tensor::scalar(0i64), false, Some("iteration")),
            slots: HashMap::new(),
        }
    }
}

impl State {
    fn iterations(&self) -> i64 {
        self.iterations
            .value_unrecorded()
            .to_i64_scalar()
            .unwrap_or(0)
    }

    fn apply(
        &mut self,
        rule: Rule,
        learning_rate: f64,
        weight_decay: Option<f64>,
        grads_and_vars: &[(Tensor, &Variable)],
    ) -> Result<()> {
        for (g, v) in grads_and_vars {
            check_update(v, g)?;
        }
        let step = self.iterations() + 1;
        let names = rule.slot_names();
        for (g, v) in grads_and_vars {
            let entry = self.slots.entry(v.id()).or_insert_with(|| (vec![], vec![]));
            if entry.0 != names {
                // Made on the first update (or remade if the rule's slots changed).
                let base = v.name().split(':').next().unwrap_or("").to_string();
                let mut made = Vec::with_capacity(names.len());
                for name in &names {
                    let init = crate::tensor::full(&v.shape(), rule.slot_initial(name), v.dtype())?;
                    made.push(Variable::new(init, false, Some(&format!("{base}/{name}"))));
                }
                *entry = (names.clone(), made);
            }
            let slots: Vec<&Variable> = entry.1.iter().collect();
            let s = Step {
                learning_rate,
                step,
                weight_decay,
            };
            apply_update(&rule, v, g, &slots, s, None)?;
        }
        self.iterations.assign(&Tensor::scalar(step))
    }

    fn slot(&self, var: &Variable, name: &str) -> Option<Variable> {
        let (names, vars) = self.slots.get(&var.id())?;
        names
            .iter()
            .position(|n| *n == name)
            .map(|i| vars[i].clone())
    }
}

macro_rules! optimizer {
    ($ty:ident, |$s:ident| $rule:expr, $wd:expr) => {
        impl Optimizer for $ty {
            fn apply_gradients(&mut self, grads_and_vars: &[(Tensor, &Variable)]) -> Result<()> {
                let $s = &*self;
                let (rule, wd) = ($rule, $wd);
                let lr = self.learning_rate;
                self.state.apply(rule, lr, wd, grads_and_vars)
            }
            fn iterations(&self) -> i64 {
                self.state.iterations()
            }
            fn iterations_variable(&self) -> &Variable {
                &self.state.iterations
            }
            fn slot(&self, var: &Variable, name: &str) -> Option<Variable> {
                self.state.slot(var, name)
            }
        }
    };
}

/// Stochastic gradient descent, optionally with (Nesterov) momentum.
/// TF equivalent: `tf.keras.optimizers.SGD` (learning rate 0.01, no momentum).
///
/// ```
/// use gradtape::nn::{Optimizer, Sgd};
/// use gradtape::{Tensor, Variable};
///
/// let w = Variable::new(Tensor::scalar(1.0f32), true, None);
/// let mut sgd = Sgd::new(0.1).with_momentum(0.9, false);
/// sgd.apply_gradients(&[(Tensor::scalar(2.0f32), &w)])?; // m = -0.2, w = 0.8
/// sgd.apply_gradients(&[(Tensor::scalar(2.0f32), &w)])?; // m = -0.38, w = 0.42
/// assert!((w.value_unrecorded().to_f64_scalar()? - 0.42).abs() < 1e-6);
/// # Ok::<(), gradtape::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Sgd {
    pub learning_rate: f64,
    pub momentum: f64,
    pub nesterov: bool,
    /// Keras 3's decoupled weight decay (`var -= var * weight_decay * lr`), if any.
    pub weight_decay: Option<f64>,
    state: State,
}

impl Sgd {
    /// Plain SGD at `learning_rate`.
    pub fn new(learning_rate: f64) -> Sgd {
        Sgd {
            learning_rate,
            momentum: 0.0,
            nesterov: false,
            weight_decay: None,
            state: State::default(),
        }
    }
    /// With `momentum` (and Nesterov's form if `nesterov`).
    pub fn with_momentum(mut self, momentum: f64, nesterov: bool) -> Sgd {
        self.momentum = momentum;
        self.nesterov = nesterov;
        self
    }
}

impl Default for Sgd {
    fn default() -> Sgd {
        Sgd::new(0.01)
    }
}

optimizer!(
    Sgd,
    |s| Rule::Sgd {
        momentum: s.momentum,
        nesterov: s.nesterov
    },
    s.weight_decay
);

/// Adam. TF equivalent: `tf.keras.optimizers.Adam` (learning rate 0.001, β1 0.9,
/// β2 0.999, ε 1e-7, Keras' update order; `amsgrad` keeps the running maximum of
/// `v`).
#[derive(Clone, Debug)]
pub struct Adam {
    pub learning_rate: f64,
    pub beta_1: f64,
    pub beta_2: f64,
    pub epsilon: f64,
    pub amsgrad: bool,
    /// Keras 3's decoupled weight decay (`var -= var * weight_decay * lr`), if any.
    pub weight_decay: Option<f64>,
    state: State,
}

impl Adam {
    /// Adam at `learning_rate` with Keras' other defaults.
    pub fn new(learning_rate: f64) -> Adam {
        Adam {
            learning_rate,
            beta_1: 0.9,
            beta_2: 0.999,
            epsilon: 1e-7,
            amsgrad: false,
            weight_decay: None,
            state: State::default(),
        }
    }
}

impl Default for Adam {
    fn default() -> Adam {
        Adam::new(0.001)
    }
}

optimizer!(
    Adam,
    |s| Rule::Adam {
        beta_1: s.beta_1,
        beta_2: s.beta_2,
        epsilon: s.epsilon,
        amsgrad: s.amsgrad
    },
    s.weight_decay
);

/// Adam with decoupled weight decay. TF equivalent: `tf.keras.optimizers.AdamW`
/// (weight decay 0.004: `var -= var * weight_decay * lr` before each Adam step).
///
/// ```
/// use gradtape::nn::{AdamW, Optimizer};
/// use gradtape::{Tensor, Variable};
///
/// let w = Variable::new(Tensor::scalar(1.0f32), true, None);
/// AdamW::new(0.1).apply_gradients(&[(Tensor::scalar(2.0f32), &w)])?;
/// // 1 - 1 * 0.004 * 0.1, then Adam's first step of 0.1: 0.8996 (as Keras 3).
/// assert!((w.value_unrecorded().to_f64_scalar()? - 0.8996).abs() < 1e-6);
/// # Ok::<(), gradtape::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct AdamW {
    pub learning_rate: f64,
    pub weight_decay: f64,
    pub beta_1: f64,
    pub beta_2: f64,
    pub epsilon: f64,
    pub amsgrad: bool,
    state: State,
}

impl AdamW {
    /// AdamW at `learning_rate` with Keras' other defaults (weight decay 0.004).
    pub fn new(learning_rate: f64) -> AdamW {
        AdamW {
            learning_rate,
            weight_decay: 0.004,
            beta_1: 0.9,
            beta_2: 0.999,
            epsilon: 1e-7,
            amsgrad: false,
            state: State::default(),
        }
    }
}

impl Default for AdamW {
    fn default() -> AdamW {
        AdamW::new(0.001)
    }
}

optimizer!(
    AdamW,
    |s| Rule::Adam {
        beta_1: s.beta_1,
        beta_2: s.beta_2,
        epsilon: s.epsilon,
        amsgrad: s.amsgrad
    },
    (s.weight_decay != 0.0).then_some(s.weight_decay)
);

/// RMSprop. TF equivalent: `tf.keras.optimizers.RMSprop` (learning rate 0.001, ρ 0.9,
/// no momentum, ε 1e-7, not centered).
#[derive(Clone, Debug)]
pub struct RmsProp {
    pub learning_rate: f64,
    pub rho: f64,
    pub momentum: f64,
    pub epsilon: f64,
    pub centered: bool,
    /// Keras 3's decoupled weight decay (`var -= var * weight_decay * lr`), if any.
    pub weight_decay: Option<f64>,
    state: State,
}

impl RmsProp {
    /// RMSprop at `learning_rate` with Keras' other defaults.
    pub fn new(learning_rate: f64) -> RmsProp {
        RmsProp {
            learning_rate,
            rho: 0.9,
            momentum: 0.0,
            epsilon: 1e-7,
            centered: false,
            weight_decay: None,
            state: State::default(),
        }
    }
}

impl Default for RmsProp {
    fn default() -> RmsProp {
        RmsProp::new(0.001)
    }
}

optimizer!(
    RmsProp,
    |s| Rule::RmsProp {
        rho: s.rho,
        momentum: s.momentum,
        epsilon: s.epsilon,
        centered: s.centered
    },
    s.weight_decay
);

/// Adagrad. TF equivalent: `tf.keras.optimizers.Adagrad` (learning rate 0.001,
/// initial accumulator 0.1, ε 1e-7).
#[derive(Clone, Debug)]
pub struct Adagrad {
    pub learning_rate: f64,
    pub initial_accumulator_value: f64,
    pub epsilon: f64,
    /// Keras 3's decoupled weight decay (`var -= var * weight_decay * lr`), if any.
    pub weight_decay: Option<f64>,
    state: State,
}

impl Adagrad {
    /// Adagrad at `learning_rate` with Keras' other defaults.
    pub fn new(learning_rate: f64) -> Adagrad {
        Adagrad {
            learning_rate,
            initial_accumulator_value: 0.1,
            epsilon: 1e-7,
            weight_decay: None,
            state: State::default(),
        }
    }
}

impl Default for Adagrad {
    fn default() -> Adagrad {
        Adagrad::new(0.001)
    }
}

optimizer!(
    Adagrad,
    |s| Rule::Adagrad {
        initial_accumulator_value: s.initial_accumulator_value,
        epsilon: s.epsilon
    },
    s.weight_decay
);

/// Nadam. TF equivalent: `tf.keras.optimizers.Nadam` (learning rate 0.001, β1 0.9,
/// β2 0.999, ε 1e-7).
#[derive(Clone, Debug)]
pub struct Nadam {
    pub learning_rate: f64,
    pub beta_1: f64,
    pub beta_2: f64,
    pub epsilon: f64,
    /// Keras 3's decoupled weight decay (`var -= var * weight_decay * lr`), if any.
    pub weight_decay: Option<f64>,
    state: State,
}

impl Nadam {
    /// Nadam at `learning_rate` with Keras' other defaults.
    pub fn new(learning_rate: f64) -> Nadam {
        Nadam {
            learning_rate,
            beta_1: 0.9,
            beta_2: 0.999,
            epsilon: 1e-7,
            weight_decay: None,
            state: State::default(),
        }
    }
}

optimizer!(
    Nadam,
    |s| Rule::Nadam {
        beta_1: s.beta_1,
        beta_2: s.beta_2,
        epsilon: s.epsilon
    },
    s.weight_decay
);

/// Adamax. TF equivalent: `tf.keras.optimizers.Adamax` (learning rate 0.001, β1 0.9,
/// β2 0.999, ε 1e-7).
#[derive(Clone, Debug)]
pub struct Adamax {
    pub learning_rate: f64,
    pub beta_1: f64,
    pub beta_2: f64,
    pub epsilon: f64,
    /// Keras 3's decoupled weight decay (`var -= var * weight_decay * lr`), if any.
    pub weight_decay: Option<f64>,
    state: State,
}

impl Adamax {
    /// Adamax at `learning_rate` with Keras' other defaults.
    pub fn new(learning_rate: f64) -> Adamax {
        Adamax {
            learning_rate,
            beta_1: 0.9,
            beta_2: 0.999,
            epsilon: 1e-7,
            weight_decay: None,
            state: State::default(),
        }
    }
}

optimizer!(
    Adamax,
    |s| Rule::Adamax {
        beta_1: s.beta_1,
        beta_2: s.beta_2,
        epsilon: s.epsilon
    },
    s.weight_decay
);

/// Adadelta. TF equivalent: `tf.keras.optimizers.Adadelta` (learning rate 0.001,
/// ρ 0.95, ε 1e-7).
#[derive(Clone, Debug)]
pub struct Adadelta {
    pub learning_rate: f64,
    pub rho: f64,
    pub epsilon: f64,
    /// Keras 3's decoupled weight decay (`var -= var * weight_decay * lr`), if any.
    pub weight_decay: Option<f64>,
    state: State,
}

impl Adadelta {
    /// Adadelta at `learning_rate` with Keras' other defaults.
    pub fn new(learning_rate: f64) -> Adadelta {
        Adadelta {
            learning_rate,
            rho: 0.95,
            epsilon: 1e-7,
            weight_decay: None,
            state: State::default(),
        }
    }
}

optimizer!(
    Adadelta,
    |s| Rule::Adadelta {
        rho: s.rho,
        epsilon: s.epsilon
    },
    s.weight_decay
);

/// FTRL. TF equivalent: `tf.keras.optimizers.Ftrl` (learning rate 0.001, power -0.5,
/// initial accumulator 0.1, no regularization, β 0).
#[derive(Clone, Debug)]
pub struct Ftrl {
    pub learning_rate: f64,
    pub learning_rate_power: f64,
    pub initial_accumulator_value: f64,
    pub l1_regularization_strength: f64,
    pub l2_regularization_strength: f64,
    pub l2_shrinkage_regularization_strength: f64,
    pub beta: f64,
    /// Keras 3's decoupled weight decay (`var -= var * weight_decay * lr`), if any.
    pub weight_decay: Option<f64>,
    state: State,
}

impl Ftrl {
    /// FTRL at `learning_rate` with Keras' other defaults.
    pub fn new(learning_rate: f64) -> Ftrl {
        Ftrl {
            learning_rate,
            learning_rate_power: -0.5,
            initial_accumulator_value: 0.1,
            l1_regularization_strength: 0.0,
            l2_regularization_strength: 0.0,
            l2_shrinkage_regularization_strength: 0.0,
            beta: 0.0,
            weight_decay: None,
            state: State::default(),
        }
    }
}

optimizer!(
    Ftrl,
    |s| Rule::Ftrl {
        learning_rate_power: s.learning_rate_power,
        initial_accumulator_value: s.initial_accumulator_value,
        l1: s.l1_regularization_strength,
        l2: s.l2_regularization_strength,
        l2_shrinkage: s.l2_shrinkage_regularization_strength,
        beta: s.beta
    },
    s.weight_decay
);

/// Lion. TF equivalent: `tf.keras.optimizers.Lion` (learning rate 0.001, β1 0.9,
/// β2 0.99).
#[derive(Clone, Debug)]
pub struct Lion {
    pub learning_rate: f64,
    pub beta_1: f64,
    pub beta_2: f64,
    /// Keras 3's decoupled weight decay (`var -= var * weight_decay * lr`), if any.
    pub weight_decay: Option<f64>,
    state: State,
}

impl Lion {
    /// Lion at `learning_rate` with Keras' other defaults.
    pub fn new(learning_rate: f64) -> Lion {
        Lion {
            learning_rate,
            beta_1: 0.9,
            beta_2: 0.99,
            weight_decay: None,
            state: State::default(),
        }
    }
}

optimizer!(
    Lion,
    |s| Rule::Lion {
        beta_1: s.beta_1,
        beta_2: s.beta_2
    },
    s.weight_decay
);

#[cfg(test)]
mod tests {
    use super::*;

    /// TF 2.21's Keras 3 on `[1, -2, 0.5]` (float32) after five steps of the
    /// gradients `[0.3 t, -1, 2 if t <= 2 else 0.01]` (learning rate 0.1).
    const KERAS: &[(&str, [f64; 3])] = &[
        (
            "sgd",
            [0.5500000715255737, -1.4999998807907104, 0.09700000286102295],
        ),
        (
            "sgd_momentum",
            [
                0.04890698194503784,
                -0.6855900287628174,
                -1.0124298334121704,
            ],
        ),
        (
            "sgd_nesterov",
            [
                -0.30598366260528564,
                -0.31703096628189087,
                -1.2641868591308594,
            ],
        ),
        (
            "adam",
            [0.5149227380752563, -1.5000051259994507, 0.10472580790519714],
        ),
        (
            "adam_amsgrad",
            [0.5149227380752563, -1.5000051259994507, 0.10490702837705612],
        ),
        (
            "adamw",
            [0.5133150815963745, -1.4964077472686768, 0.10409396886825562],
        ),
        (
            "rmsprop",
            [
                -0.32277846336364746,
                -0.9354715347290039,
                -0.04947051778435707,
            ],
        ),
        (
            "rmsprop_momentum_centered",
            [
                -1.4535036087036133,
                0.03664600849151611,
                -0.6296383738517761,
            ],
        ),
        (
            "rmsprop_momentum",
            [
                -1.1829137802124023,
                -0.20893675088882446,
                -0.5482168793678284,
            ],
        ),
        (
            "rmsprop_centered",
            [
                -0.5023789405822754,
                -0.7728959321975708,
                -0.09240526705980301,
            ],
        ),
        (
            "adagrad",
            [0.6346341371536255, -1.6851837635040283, 0.3299000859260559],
        ),
        (
            "nadam",
            [0.519058108329773, -1.604022741317749, 0.27931922674179077],
        ),
        (
            "adamax",
            [0.6247041821479797, -1.5000001192092896, 0.1572778970003128],
        ),
        (
            "adadelta",
            [0.9989217519760132, -1.999279499053955, 0.49971264600753784],
        ),
        (
            "ftrl",
            [
                -0.09084215760231018,
                -1.0821610689163208,
                0.25181323289871216,
            ],
        ),
        (
            "ftrl_regularized",
            [
                -0.1202469915151596,
                -0.9520427584648132,
                0.23459981381893158,
            ],
        ),
        (
            "lion",
            [
                0.49999991059303284,
                -1.4999998807907104,
                1.4901161193847656e-08,
            ],
        ),
    ];

    fn optimizer(name: &str) -> Box<dyn Optimizer> {
        match name {
            "sgd" => Box::new(Sgd::new(0.1)),
            "sgd_momentum" => Box::new(Sgd::new(0.1).with_momentum(0.9, false)),
            "sgd_nesterov" => Box::new(Sgd::new(0.1).with_momentum(0.9, true)),
            "adam" => Box::new(Adam::new(0.1)),
            "adam_amsgrad" => Box::new(Adam {
                amsgrad: true,
                ..Adam::new(0.1)
            }),
            "adamw" => Box::new(AdamW::new(0.1)),
            "rmsprop" => Box::new(RmsProp::new(0.1)),
            "rmsprop_momentum_centered" => Box::new(RmsProp {
                momentum: 0.5,
                centered: true,
                ..RmsProp::new(0.1)
            }),
            "rmsprop_momentum" => Box::new(RmsProp {
                momentum: 0.5,
                ..RmsProp::new(0.1)
            }),
            "rmsprop_centered" => Box::new(RmsProp {
                centered: true,
                ..RmsProp::new(0.1)
            }),
            "adagrad" => Box::new(Adagrad::new(0.1)),
            "nadam" => Box::new(Nadam::new(0.1)),
            "adamax" => Box::new(Adamax::new(0.1)),
            "adadelta" => Box::new(Adadelta::new(0.1)),
            "ftrl" => Box::new(Ftrl::new(0.1)),
            "ftrl_regularized" => Box::new(Ftrl {
                l1_regularization_strength: 0.01,
                l2_regularization_strength: 0.02,
                l2_shrinkage_regularization_strength: 0.03,
                beta: 0.1,
                ..Ftrl::new(0.1)
            }),
            "lion" => Box::new(Lion::new(0.1)),
            _ => unreachable!("{name}"),
        }
    }

    fn grad(t: usize) -> Tensor {
        let last = if t <= 2 { 2.0 } else { 0.01 };
        Tensor::from_vec(vec![0.3 * t as f32, -1.0, last], &[3]).unwrap()
    }

    #[test]
    fn five_steps_match_keras() {
        for (name, want) in KERAS {
            let mut opt = optimizer(name);
            let v = Variable::new(
                Tensor::from_vec(vec![1.0f32, -2.0, 0.5], &[3]).unwrap(),
                true,
                Some("v"),
            );
            for t in 1..=5 {
                opt.apply_gradients(&[(grad(t), &v)]).unwrap();
            }
            assert_eq!(opt.iterations(), 5);
            let got = v.value_unrecorded().to_vec::<f32>().unwrap();
            for (g, w) in got.iter().zip(want) {
                assert!(
                    (*g as f64 - w).abs() <= 1e-6 * w.abs().max(1.0),
                    "{name}: {got:?} vs Keras {want:?}"
                );
            }
        }
    }

    #[test]
    fn first_steps_by_hand() {
        let v = |x: f32| Variable::new(Tensor::scalar(x), true, None);
        let value = |v: &Variable| v.value_unrecorded().to_f64_scalar().unwrap();
        // Adam: m = 0.2, v = 0.004, alpha = 0.1 * sqrt(0.001) / 0.1, step = m alpha / sqrt(v).
        let w = v(1.0);
        let mut adam = Adam::new(0.1);
        adam.apply_gradients(&[(Tensor::scalar(2.0f32), &w)])
            .unwrap();
        assert!((value(&w) - 0.9).abs() < 1e-6);
        assert!((value(&adam.slot(&w, "m").unwrap()) - 0.2).abs() < 1e-7);
        assert!((value(&adam.slot(&w, "v").unwrap()) - 0.004).abs() < 1e-8);
        // RMSprop: velocity 0.4, step 0.1 * 2 / sqrt(0.4 + 1e-7).
        let w = v(1.0);
        RmsProp::new(0.1)
            .apply_gradients(&[(Tensor::scalar(2.0f32), &w)])
            .unwrap();
        assert!((value(&w) - (1.0 - 0.2 / (0.4f64 + 1e-7).sqrt())).abs() < 1e-6);
        // Adagrad: accumulator 0.1 + 4, step 0.1 * 2 / sqrt(4.1 + 1e-7).
        let w = v(1.0);
        Adagrad::new(0.1)
            .apply_gradients(&[(Tensor::scalar(2.0f32), &w)])
            .unwrap();
        assert!((value(&w) - (1.0 - 0.2 / (4.1f64 + 1e-7).sqrt())).abs() < 1e-6);
    }

    #[test]
    fn float64_and_big_variables_agree_with_the_small_path() {
        // Above the parallel threshold the chunks run on the pool: same numbers.
        let n = PAR_THRESHOLD * 2 + 3;
        let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
        let g: Vec<f64> = (0..n).map(|i| (i as f64 * 0.11).cos()).collect();
        let big = Variable::new(Tensor::from_vec(x.clone(), &[n]).unwrap(), true, None);
        let mut opt = Adam::new(0.01);
        for _ in 0..3 {
            let gt = Tensor::from_vec(g.clone(), &[n]).unwrap();
            opt.apply_gradients(&[(gt, &big)]).unwrap();
        }
        let got = big.value_unrecorded().to_vec::<f64>().unwrap();
        for i in [0, 1, CHUNK - 1, CHUNK, n / 2, n - 1] {
            let small = Variable::new(Tensor::scalar(x[i]), true, None);
            let mut o = Adam::new(0.01);
            for _ in 0..3 {
                o.apply_gradients(&[(Tensor::scalar(g[i]), &small)])
                    .unwrap();
            }
            assert_eq!(
                got[i],
                small.value_unrecorded().to_f64_scalar().unwrap(),
                "at {i}"
            );
        }
    }

    #[test]
    fn bad_pairs_change_nothing() {
        let a = Variable::new(Tensor::scalar(1.0f32), true, None);
        let b = Variable::new(Tensor::from_vec(vec![1.0f32; 2], &[2]).unwrap(), true, None);
        let mut opt = Sgd::new(0.1);
        // The second pair's gradient has the wrong shape: neither variable moves.
        let err =
            opt.apply_gradients(&[(Tensor::scalar(1.0f32), &a), (Tensor::scalar(1.0f32), &b)]);
        assert!(err.is_err());
        assert_eq!(a.value_unrecorded().to_f64_scalar().unwrap(), 1.0);
        assert_eq!(opt.iterations(), 0);
        // Integer variables and mismatched dtypes are errors.
        let i = Variable::new(Tensor::scalar(1i32), true, None);
        assert!(opt.apply_gradients(&[(Tensor::scalar(1i32), &i)]).is_err());
        assert!(opt
            .apply_gradients(&[(Tensor::scalar(1.0f64), &a)])
            .is_err());
    }

    #[test]
    fn float16_matches_keras_and_complex_steps_by_hand() {
        // TF 2.21's Keras 3, float16 variables, the same five steps (gradients cast
        // from float64): Adam and Lion.
        let run = |mut opt: Box<dyn Optimizer>| {
            let v = Variable::new(
                Tensor::from_vec([1.0, -2.0, 0.5].map(f16::from_f64).to_vec(), &[3]).unwrap(),
                true,
                None,
            );
            for t in 1..=5 {
                let last = if t <= 2 { 2.0 } else { 0.01 };
                let g = [0.3 * t as f64, -1.0, last].map(f16::from_f64).to_vec();
                opt.apply_gradients(&[(Tensor::from_vec(g, &[3]).unwrap(), &v)])
                    .unwrap();
            }
            v.value_unrecorded().to_vec::<f16>().unwrap()
        };
        let adam = run(Box::new(Adam::new(0.1)));
        let lion = run(Box::new(Lion::new(0.1)));
        for (got, want) in [
            (adam, [0.52099609375, -1.5068359375, 0.10943603515625]),
            (lion, [0.49951171875, -1.501953125, -0.0001220703125]),
        ] {
            for (g, w) in got.iter().zip(want) {
                assert!((g.to_f64() - w).abs() <= 2e-3, "{got:?} vs Keras {want:?}");
            }
        }
        // Complex SGD: (1 + i) - 0.1 (2 - i) = 0.8 + 1.1i.
        let c = Variable::new(
            Tensor::from_vec(vec![Complex64::new(1.0, 1.0)], &[1]).unwrap(),
            true,
            None,
        );
        let g = Tensor::from_vec(vec![Complex64::new(2.0, -1.0)], &[1]).unwrap();
        Sgd::new(0.1).apply_gradients(&[(g.clone(), &c)]).unwrap();
        let got = c.value_unrecorded().to_vec::<Complex64>().unwrap()[0];
        assert!((got - Complex64::new(0.8, 1.1)).norm() < 1e-15, "{got}");
    }

    #[test]
    fn complex_variables_on_the_real_axis_follow_the_real_steps() {
        // Every rule on complex numbers with zero imaginary parts is the real rule
        // (the square, roots, powers, sign, maximum and clip agree there): five steps
        // of each optimizer in complex128 against float64 and complex64 against
        // float32, including a zero gradient element (sign 0, |0|).
        let x0 = [1.0, -2.0, 0.5, 0.25];
        let grads = |t: usize| [0.3 * t as f64, -1.0, if t <= 2 { 2.0 } else { 0.01 }, 0.0];
        for (name, _) in KERAS {
            let (mut real, mut cplx) = (optimizer(name), optimizer(name));
            let r = Variable::new(Tensor::from_vec(x0.to_vec(), &[4]).unwrap(), true, None);
            let c = Variable::new(
                Tensor::from_vec(x0.map(|v| Complex64::new(v, 0.0)).to_vec(), &[4]).unwrap(),
                true,
                None,
            );
            let (mut real32, mut cplx32) = (optimizer(name), optimizer(name));
            let r32 = Variable::new(
                Tensor::from_vec(x0.map(|v| v as f32).to_vec(), &[4]).unwrap(),
                true,
                None,
            );
            let c32 = Variable::new(
                Tensor::from_vec(x0.map(|v| Complex32::new(v as f32, 0.0)).to_vec(), &[4]).unwrap(),
                true,
                None,
            );
            for t in 1..=5 {
                let g = grads(t);
                let gc = g.map(|v| Complex64::new(v, 0.0)).to_vec();
                real.apply_gradients(&[(Tensor::from_vec(g.to_vec(), &[4]).unwrap(), &r)])
                    .unwrap();
                cplx.apply_gradients(&[(Tensor::from_vec(gc, &[4]).unwrap(), &c)])
                    .unwrap();
                let g32 = g.map(|v| v as f32);
                let gc32 = g32.map(|v| Complex32::new(v, 0.0)).to_vec();
                real32
                    .apply_gradients(&[(Tensor::from_vec(g32.to_vec(), &[4]).unwrap(), &r32)])
                    .unwrap();
                cplx32
                    .apply_gradients(&[(Tensor::from_vec(gc32, &[4]).unwrap(), &c32)])
                    .unwrap();
            }
            let want = r.value_unrecorded().to_vec::<f64>().unwrap();
            let got = c.value_unrecorded().to_vec::<Complex64>().unwrap();
            let want32 = r32.value_unrecorded().to_vec::<f32>().unwrap();
            let got32 = c32.value_unrecorded().to_vec::<Complex32>().unwrap();
            for i in 0..4 {
                assert!(
                    (got[i].re - want[i]).abs() <= 1e-12 && got[i].im == 0.0,
                    "{name}: {got:?} vs {want:?}"
                );
                // complex64's step scalars are computed in float64, float32's in
                // float32: a few float32 ulps apart after five steps.
                assert!(
                    (got32[i].re - want32[i]).abs() <= 1e-5 * want32[i].abs().max(1.0)
                        && got32[i].im == 0.0,
                    "{name}: {got32:?} vs {want32:?}"
                );
            }
        }
    }

    #[test]
    fn updates_are_not_recorded() {
        let w = Variable::new(Tensor::scalar(1.0f32), true, None);
        let tape = crate::GradientTape::new();
        let before = w.read();
        tape.record(|| Sgd::new(0.1).apply_gradients(&[(Tensor::scalar(2.0f32), &w)]))
            .unwrap();
        // The value read before the step is untouched; the variable moved.
        assert_eq!(before.to_f64_scalar().unwrap(), 1.0);
        assert!((w.value_unrecorded().to_f64_scalar().unwrap() - 0.8).abs() < 1e-7);
    }
}
