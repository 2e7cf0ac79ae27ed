//! Neural-network activations and losses that are primitives (TF registers a
//! gradient for them and composing would lose accuracy or TF's numbers): relu6,
//! selu, leaky_relu, softmax, log_softmax and the softmax cross-entropies.

use super::{grads, record, unary_out, Grads, Op, Saves, VjpCx};
use crate::error::{Error, Result};
use crate::kernels::elementwise::map;
use crate::kernels::softmax::softmax_kernel;
use crate::ops::unary::connected_zero;
use crate::ops::{
    add, exp, expand_dims, greater, less, logical_and, multiply, neg, reduce_sum, scalar_like,
    subtract, transpose, where_, zeros_like,
};
use crate::tensor::Tensor;

/// `min(max(x, 0), 6)`. TF equivalent: `tf.nn.relu6`. Gradient `dy` where
/// `0 < y < 6`, else 0 (TF's Relu6Grad, from the output).
pub fn relu6(x: &Tensor) -> Result<Tensor> {
    let out = Tensor::new(
        map_dtypes!("Relu6", x.data(), [F32, F64] via [F16], a => map(a, |v| {
        if v > 0.0 { if v < 6.0 { v } else { 6.0 } } else { 0.0 }
    })?),
    );
    unary_out(Relu6, x, out)
}
struct Relu6;
impl Op for Relu6 {
    fn batched(&self) -> bool {
        true
    }
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        super::elementwise_jvp(cx, tangents)
    }
    fn name(&self) -> &'static str {
        "Relu6"
    }
    fn saves(&self) -> Saves {
        Saves::OUTPUT
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let y = cx.output(0)?;
        let inside = logical_and(
            &greater(y, &zeros_like(y)?)?,
            &less(y, &scalar_like(y, 6.0))?,
        )?;
        let g = where_(&inside, &dys[0], &zeros_like(&dys[0])?)?;
        Ok(grads![Some(add(&g, &connected_zero(y)?)?)])
    }
}

const SELU_SCALE: f64 = 1.050_700_987_355_480_5;
const SELU_ALPHA: f64 = 1.673_263_242_354_377_3;

fn selu_k<T: num_traits::Float>(v: T) -> T {
    let f = |c: f64| T::from(c).expect("float constant");
    if v > T::zero() {
        v * f(SELU_SCALE)
    } else {
        f(SELU_SCALE * SELU_ALPHA) * v.exp_m1()
    }
}

fn leaky_k<T: num_traits::Float>(v: T, alpha: f64) -> T {
    if v > T::zero() {
        v
    } else {
        v * T::from(alpha).expect("float constant")
    }
}

/// Scaled exponential linear unit. TF equivalent: `tf.nn.selu`. Gradient (TF's
/// SeluGrad, from the output): `dy*(y + scale*alpha)` where `y < 0`, else `dy*scale`.
pub fn selu(x: &Tensor) -> Result<Tensor> {
    let out =
        Tensor::new(map_dtypes!("Selu", x.data(), [F32, F64] via [F16], a => map(a, selu_k)?));
    unary_out(Selu, x, out)
}
struct Selu;
impl Op for Selu {
    fn batched(&self) -> bool {
        true
    }
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        super::elementwise_jvp(cx, tangents)
    }
    fn name(&self) -> &'static str {
        "Selu"
    }
    fn saves(&self) -> Saves {
        Saves::OUTPUT
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let (y, dy) = (cx.output(0)?, &dys[0]);
        let pos = multiply(dy, &scalar_like(dy, SELU_SCALE))?;
        let negb = multiply(dy, &add(y, &scalar_like(y, SELU_SCALE * SELU_ALPHA))?)?;
        // TF's SeluGrad tests `y < 0`: at exactly 0 the gradient is `scale`.
        Ok(grads![Some(where_(
            &less(y, &zeros_like(y)?)?,
            &negb,
            &pos
        )?)])
    }
}

/// `x` where `x > 0`, else `alpha * x`. TF equivalent: `tf.nn.leaky_relu`.
/// Gradient (TF's LeakyReluGrad, from the input): `dy` where `x > 0`, else `alpha*dy`.
/// `alpha` is rounded to float32 first, as TF keeps it in a float attribute: in float64,
/// `leaky_relu(-1.0)` is -0.20000000298023224 in both.
pub fn leaky_relu(x: &Tensor, alpha: f64) -> Result<Tensor> {
    let alpha = f64::from(alpha as f32);
    let out = Tensor::new(
        map_dtypes!("LeakyRelu", x.data(), [F32, F64] via [F16], a => map(a, |v| leaky_k(v, alpha))?),
    );
    unary_out(LeakyRelu { alpha }, x, out)
}
struct LeakyRelu {
    alpha: f64,
}
impl Op for LeakyRelu {
    fn batched(&self) -> bool {
        true
    }
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        super::elementwise_jvp(cx, tangents)
    }
    fn name(&self) -> &'static str {
        "LeakyRelu"
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let (x, dy) = (cx.input(0)?, &dys[0]);
        let scaled = multiply(dy, &scalar_like(dy, self.alpha))?;
        let g = where_(&greater(x, &zeros_like(x)?)?, dy, &scaled)?;
        // TF's LeakyReluGrad gives its features input a zero gradient, not none.
        Ok(grads![Some(add(&g, &connected_zero(x)?)?)])
    }
}

/// The permutation moving `axis` to the end, and its inverse.
fn to_end(op: &'static str, axis: isize, nd: usize) -> Result<(usize, Vec<usize>, Vec<usize>)> {
    if nd == 0 {
        return Err(Error::invalid(
            op,
            "logits must have >= 1 dimension, got shape []",
        ));
    }
    let ax = crate::broadcast::norm_axis(op, axis, nd)?;
    let perm: Vec<usize> = (0..nd).filter(|&i| i != ax).chain([ax]).collect();
    let mut inv = vec![0; nd];
    for (i, &p) in perm.iter().enumerate() {
        inv[p] = i;
    }
    Ok((ax, perm, inv))
}

fn softmax_last(x: &Tensor, log: bool) -> Result<Tensor> {
    let op = if log { "LogSoftmax" } else { "Softmax" };
    let out =
        Tensor::new(map_dtypes!(op, x.data(), [F32, F64] via [F16], a => softmax_kernel(a, log)?));
    record(Softmax { log }, &[x], &[&out])?;
    Ok(out)
}

fn along_axis(x: &Tensor, axis: isize, log: bool) -> Result<Tensor> {
    let op = if log { "LogSoftmax" } else { "Softmax" };
    let (ax, perm, inv) = to_end(op, axis, x.ndim())?;
    if ax == x.ndim() - 1 {
        return softmax_last(x, log);
    }
    let y = softmax_last(&transpose(x, Some(&perm))?, log)?;
    transpose(&y, Some(&inv))
}

/// `exp(x) / sum(exp(x))` along `axis`, computed stably. TF equivalent:
/// `tf.nn.softmax`. Gradient `(dy - sum(dy*y)) * y`.
pub fn softmax(x: &Tensor, axis: isize) -> Result<Tensor> {
    along_axis(x, axis, false)
}

/// `x - log(sum(exp(x)))` along `axis`, computed stably. TF equivalent:
/// `tf.nn.log_softmax`. Gradient `dy - exp(y) * sum(dy)`.
pub fn log_softmax(x: &Tensor, axis: isize) -> Result<Tensor> {
    along_axis(x, axis, true)
}

struct Softmax {
    log: bool,
}
impl Op for Softmax {
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        if self.log {
            "LogSoftmax"
        } else {
            "Softmax"
        }
    }
    fn saves(&self) -> Saves {
        Saves::OUTPUT
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let (y, dy) = (cx.output(0)?, &dys[0]);
        let last = [-1isize];
        let g = if self.log {
            subtract(
                dy,
                &multiply(&exp(y)?, &reduce_sum(dy, Some(&last), true)?)?,
            )?
        } else {
            let s = reduce_sum(&multiply(dy, y)?, Some(&last), true)?;
            multiply(&subtract(dy, &s)?, y)?
        };
        Ok(grads![Some(g)])
    }
}

/// Cross-entropy between `labels` (a distribution per row) and `softmax(logits)`
/// along `axis`. TF equivalent: `tf.nn.softmax_cross_entropy_with_logits`.
/// Gradient (TF's): `dy * (softmax(logits) - labels)` to logits and
/// `dy * -log_softmax(logits)` to labels.
pub fn softmax_cross_entropy_with_logits(
    labels: &Tensor,
    logits: &Tensor,
    axis: isize,
) -> Result<Tensor> {
    const OP: &str = "SoftmaxCrossEntropyWithLogits";
    if labels.shape() != logits.shape() {
        return Err(Error::invalid(
            OP,
            format!(
                "logits and labels must be broadcastable: logits_size={:?} labels_size={:?}",
                logits.shape(),
                labels.shape()
            ),
        ));
    }
    if labels.dtype() != logits.dtype() {
        return Err(Error::dtype_mismatch(OP, logits.dtype(), labels.dtype()));
    }
    let (ax, perm, _) = to_end(OP, axis, logits.ndim())?;
    let (lg, lb) = if ax == logits.ndim() - 1 {
        (logits.clone(), labels.clone())
    } else {
        (
            transpose(logits, Some(&perm))?,
            transpose(labels, Some(&perm))?,
        )
    };
    let last = lg.ndim() - 1;
    let out = Tensor::new(
        map_pair!(OP, lg.data(), lb.data(), [F32, F64] via [F16], a, b => {
            let mut ls = softmax_kernel(a, true)?;
            ndarray::Zip::from(&mut ls).and(b).for_each(|p, &q| *p = -(*p * q));
            crate::kernels::reduce::sum_axes(&ls.into_shared(), &[last], false)?
        }),
    );
    record(SoftmaxXent, &[&lg, &lb], &[&out])?;
    Ok(out)
}
struct SoftmaxXent;
impl Op for SoftmaxXent {
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "SoftmaxCrossEntropyWithLogits"
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let (logits, labels) = (cx.input(0)?, cx.input(1)?);
        let dy = expand_dims(&dys[0], -1)?;
        let gl = if cx.needs(0) {
            Some(multiply(
                &dy,
                &subtract(&softmax_last(logits, false)?, labels)?,
            )?)
        } else {
            None
        };
        let gb = if cx.needs(1) {
            Some(multiply(&dy, &neg(&softmax_last(logits, true)?)?)?)
        } else {
            None
        };
        Ok(grads![gl, gb])
    }
}

/// Cross-entropy of integer class `labels` against `softmax(logits)` over the last
/// axis. TF equivalent: `tf.nn.sparse_softmax_cross_entropy_with_logits`.
/// Gradient `dy * (softmax(logits) - one_hot(labels))`; none for labels.
pub fn sparse_softmax_cross_entropy_with_logits(
    labels: &Tensor,
    logits: &Tensor,
) -> Result<Tensor> {
    const OP: &str = "SparseSoftmaxCrossEntropyWithLogits";
    if logits.ndim() == 0 {
        return Err(Error::invalid(
            OP,
            "logits must have >= 1 dimension, got shape []",
        ));
    }
    let nd = logits.ndim();
    if labels.shape() != &logits.shape()[..nd - 1] {
        return Err(Error::invalid(
            OP,
            format!(
                "labels shape must equal logits shape except for the last dimension; got labels {:?} and logits {:?}",
                labels.shape(),
                logits.shape()
            ),
        ));
    }
    let depth = logits.shape()[nd - 1];
    let vals: Vec<i64> = match labels.data() {
        crate::tensor::Data::I32(a) => {
            crate::size::try_collect(OP, a.len(), a.iter().map(|&v| v as i64))?
        }
        crate::tensor::Data::I64(a) => crate::size::try_collect(OP, a.len(), a.iter().copied())?,
        d => {
            return Err(Error::dtype(
                OP,
                format!("labels must be int32 or int64, got {}", d.dtype().name()),
            ))
        }
    };
    if let Some(v) = vals.iter().find(|&&v| v < 0 || v as usize >= depth) {
        return Err(Error::invalid(
            OP,
            format!(
                "Received a label value of {v} which is outside the valid range of [0, {depth})."
            ),
        ));
    }
    let oh = crate::ops::one_hot(labels, depth, 1.0, 0.0, -1, logits.dtype())?;
    softmax_cross_entropy_with_logits(&oh, logits, -1)
}

// ---- Composites: TF's own compositions of engine ops (their gradients, to any
// order, are those of their parts).

/// Float dtypes only, for the composites whose TF kernels are float-only.
fn floating(op: &'static str, x: &Tensor) -> Result<()> {
    if x.dtype().is_floating() {
        Ok(())
    } else {
        Err(Error::unsupported(op, x.dtype()))
    }
}

/// Gaussian error linear unit. TF equivalent: `tf.nn.gelu`, composed as TF does:
/// `0.5 x (1 + erf(x / sqrt(2)))`, or with `approximate` the tanh form
/// `0.5 x (1 + tanh(0.7978845608028654 (x + 0.044715 x³)))`.
pub fn gelu(x: &Tensor, approximate: bool) -> Result<Tensor> {
    use crate::ops::{divide, erf, pow, tanh};
    floating("Gelu", x)?;
    let half_x = multiply(&scalar_like(x, 0.5), x)?;
    let one = scalar_like(x, 1.0);
    if approximate {
        let cube = pow(x, &scalar_like(x, 3.0))?;
        let inner = add(x, &multiply(&scalar_like(x, 0.044715), &cube)?)?;
        let t = tanh(&multiply(&scalar_like(x, 0.797_884_560_802_865_4), &inner)?)?;
        multiply(&half_x, &add(&one, &t)?)
    } else {
        let e = erf(&divide(x, &scalar_like(x, std::f64::consts::SQRT_2))?)?;
        multiply(&half_x, &add(&one, &e)?)
    }
}

/// `x * sigmoid(beta * x)`. TF equivalent: `tf.nn.silu` (`tf.nn.swish`).
pub fn silu(x: &Tensor, beta: f64) -> Result<Tensor> {
    if !x.dtype().is_complex() {
        floating("Silu", x)?; // complex is fine too, as in TF
    }
    let bx = multiply(&scalar_like(x, beta), x)?;
    multiply(x, &crate::ops::sigmoid(&bx)?)
}

/// `sum(t²) / 2`. TF equivalent: `tf.nn.l2_loss`. Gradient `t`.
pub fn l2_loss(t: &Tensor) -> Result<Tensor> {
    floating("L2Loss", t)?;
    multiply(
        &reduce_sum(&multiply(t, t)?, None, false)?,
        &scalar_like(t, 0.5),
    )
}

/// Elementwise logistic loss of `logits` against `labels` (same shape and dtype),
/// computed stably as TF does: `max(x, 0) - x z + log(1 + exp(-|x|))`. TF
/// equivalent: `tf.nn.sigmoid_cross_entropy_with_logits`.
pub fn sigmoid_cross_entropy_with_logits(labels: &Tensor, logits: &Tensor) -> Result<Tensor> {
    use crate::ops::{greater_equal, log1p};
    const OP: &str = "sigmoid_cross_entropy_with_logits";
    if labels.shape() != logits.shape() {
        return Err(Error::invalid(
            OP,
            format!(
                "logits and labels must have the same shape ({:?} vs {:?})",
                logits.shape(),
                labels.shape()
            ),
        ));
    }
    if labels.dtype() != logits.dtype() {
        return Err(Error::dtype_mismatch(OP, logits.dtype(), labels.dtype()));
    }
    floating(OP, logits)?;
    let zeros = zeros_like(logits)?;
    let cond = greater_equal(logits, &zeros)?;
    let relu_logits = where_(&cond, logits, &zeros)?;
    let neg_abs_logits = where_(&cond, &neg(logits)?, logits)?;
    add(
        &subtract(&relu_logits, &multiply(logits, labels)?)?,
        &log1p(&exp(&neg_abs_logits)?)?,
    )
}

/// `x / sqrt(max(sum(|x|²), epsilon))` over `axis` (all axes by default). TF
/// equivalent: `tf.math.l2_normalize` (`tf.nn.l2_normalize`), composed as TF does;
/// complex inputs have their real and imaginary parts scaled alike.
pub fn l2_normalize(x: &Tensor, axis: Option<&[isize]>, epsilon: f64) -> Result<Tensor> {
    use crate::ops::{complex, imag, maximum, real, rsqrt, square};
    let inv_norm = |square_sum: Tensor| -> Result<Tensor> {
        rsqrt(&maximum(&square_sum, &scalar_like(&square_sum, epsilon))?)
    };
    if x.dtype().is_complex() {
        let (re, im) = (real(x)?, imag(x)?);
        let sq = add(&square(&re)?, &square(&im)?)?;
        let inv = inv_norm(reduce_sum(&sq, axis, true)?)?;
        return complex(&multiply(&re, &inv)?, &multiply(&im, &inv)?);
    }
    let inv = inv_norm(reduce_sum(&square(x)?, axis, true)?)?;
    multiply(x, &inv)
}

/// Zeros each element (or each slice of `noise_shape`, which broadcasts to `x`'s
/// shape) with probability `rate` and scales the others by `1 / (1 - rate)`. TF
/// equivalent: `tf.nn.dropout` (the random stream is gradtape's: see
/// [`crate::ops::random`]; the mask is drawn as `uniform(noise_shape, seed) >= rate`).
/// Gradient: `dy` through the mask, scaled. `rate` must be in `[0, 1)`; at 0, `x`
/// itself is returned.
pub fn dropout(
    x: &Tensor,
    rate: f64,
    noise_shape: Option<&[usize]>,
    seed: Option<i64>,
) -> Result<Tensor> {
    use crate::ops::{greater_equal, random};
    const OP: &str = "dropout";
    if !(0.0..1.0).contains(&rate) {
        return Err(Error::invalid(
            OP,
            format!("rate must be a scalar tensor or a float in the range [0, 1), got {rate}"),
        ));
    }
    if !x.dtype().is_floating() {
        return Err(Error::invalid(
            OP,
            format!(
                "x has to be a floating point tensor since it's going to be scaled. Got a {} tensor instead.",
                x.dtype().name()
            ),
        ));
    }
    if rate == 0.0 {
        return Ok(x.clone());
    }
    let noise_shape = noise_shape.unwrap_or(x.shape());
    let joint = crate::broadcast::broadcast_shapes(OP, noise_shape, x.shape());
    if joint.as_deref().ok() != Some(x.shape()) {
        return Err(Error::invalid(
            OP,
            format!(
                "noise_shape {noise_shape:?} must broadcast to the shape of x {:?}",
                x.shape()
            ),
        ));
    }
    let u = random::uniform(noise_shape, 0.0, 1.0, x.dtype(), seed)?;
    let keep = greater_equal(&u, &scalar_like(&u, rate))?;
    let scaled = multiply(x, &scalar_like(x, 1.0 / (1.0 - rate)))?;
    // TF's select (not a product with the mask): a dropped inf or NaN gives 0.
    where_(
        &crate::ops::broadcast_to(&keep, x.shape())?,
        &scaled,
        &zeros_like(x)?,
    )
}

/// How this family's traced ops are saved in SavedModels (see `saved_model::table`).
pub(crate) mod saved {
    #[allow(unused_imports)]
    use crate::error::Result;
    #[allow(unused_imports)]
    use crate::graph::Forward;
    #[allow(unused_imports)]
    use crate::ops;
    #[allow(unused_imports)]
    use crate::saved_model::table::{
        ensure, get, get_dtype, get_f64, many_out, one_out, Attrs, OpDef,
    };
    #[allow(unused_imports)]
    use crate::tensor::Tensor;

    pub(crate) const SAVED: &[OpDef] = &[
        OpDef::new("SoftmaxCrossEntropyWithLogits", 2, &["axis"], softmax_xent),
        OpDef::new(
            "SparseSoftmaxCrossEntropyWithLogits",
            2,
            &[],
            sparse_softmax_xent,
        ),
        OpDef::new("SigmoidCrossEntropyWithLogits", 2, &[], sigmoid_xent),
        OpDef::new("L2Normalize", 1, &["axis", "epsilon"], l2_normalize),
        OpDef::new("Dropout", 1, &["rate", "noise_shape", "seed"], dropout).stateful(),
    ];

    fn dropout(a: &Attrs, _: usize) -> Result<Forward> {
        let rate = get_f64("Dropout", a, "rate")?;
        let noise: Option<Vec<usize>> = get("Dropout", a, "noise_shape")?;
        if let Some(n) = &noise {
            crate::size::num_elements("Dropout", n)?;
        }
        let seed: Option<i64> = get("Dropout", a, "seed")?;
        Ok(one_out(move |xs| {
            ops::dropout(&xs[0], rate, noise.as_deref(), seed)
        }))
    }

    fn softmax_xent(a: &Attrs, _: usize) -> Result<Forward> {
        let axis: isize = get("SoftmaxCrossEntropyWithLogits", a, "axis")?;
        Ok(one_out(move |xs| {
            ops::softmax_cross_entropy_with_logits(&xs[0], &xs[1], axis)
        }))
    }

    fn sparse_softmax_xent(_: &Attrs, _: usize) -> Result<Forward> {
        Ok(one_out(|xs| {
            ops::sparse_softmax_cross_entropy_with_logits(&xs[0], &xs[1])
        }))
    }

    fn sigmoid_xent(_: &Attrs, _: usize) -> Result<Forward> {
        Ok(one_out(|xs| {
            ops::sigmoid_cross_entropy_with_logits(&xs[0], &xs[1])
        }))
    }

    fn l2_normalize(a: &Attrs, _: usize) -> Result<Forward> {
        let axes: Option<Vec<isize>> = get("L2Normalize", a, "axis")?;
        let eps = get_f64("L2Normalize", a, "epsilon")?;
        Ok(one_out(move |xs| {
            ops::l2_normalize(&xs[0], axes.as_deref(), eps)
        }))
    }
}

/// The Python functions of this family: bindings and where they appear (see
/// `src/ops/README.md`).
#[cfg(feature = "python")]
pub(super) mod python {
    use crate::python::binding::*;

    macro_rules! py_activation {
        ($($(#[$doc:meta])* $py:ident => $f:path),* $(,)?) => {$(
            $(#[$doc])*
            #[pyfunction]
            #[pyo3(signature = (features, name=None))]
            fn $py(py: Python<'_>, features: &Bound<'_, PyAny>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
                let _ = name;
                let x = to_tensor(features, None)?;
                // Elementwise: recorded as the `unary` rows are (fusable).
                Ok(crate::python::graph::unary(py, &x, $f)?.into())
            }
        )*};
    }
    py_activation! {
        /// Elementwise ``min(max(x, 0), 6)``. TF equivalent: ``tf.nn.relu6``.
        ///
        /// >>> print(gt.nn.relu6(gt.constant([-1.0, 3.0, 8.0])))
        /// gt.Tensor([0. 3. 6.], shape=(3,), dtype=float32)
        relu6 => ops::relu6,
        /// Scaled exponential linear unit (TF's constants). TF equivalent: ``tf.nn.selu``.
        ///
        /// >>> print(gt.nn.selu(gt.constant([-1.0, 1.0])))
        /// gt.Tensor([-1.1113307  1.050701 ], shape=(2,), dtype=float32)
        selu => ops::selu,
    }

    /// Elementwise ``x`` if ``x > 0`` else ``alpha * x``. TF equivalent: ``tf.nn.leaky_relu``.
    ///
    /// >>> print(gt.nn.leaky_relu(gt.constant([-1.0, 2.0])))
    /// gt.Tensor([-0.2  2. ], shape=(2,), dtype=float32)
    #[pyfunction]
    #[pyo3(signature = (features, alpha=0.2, name=None))]
    fn leaky_relu(
        py: Python<'_>,
        features: &Bound<'_, PyAny>,
        alpha: f64,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let x = to_tensor(features, None)?;
        let f = move |x: &Tensor| ops::leaky_relu(x, alpha);
        Ok(call(py, "LeakyRelu", || format!("{alpha:?}"), &x, f)?.into())
    }

    macro_rules! py_softmax {
        ($($(#[$doc:meta])* $py:ident => $f:path as $tf:literal),* $(,)?) => {$(
            $(#[$doc])*
            #[pyfunction]
            #[pyo3(signature = (logits, axis=None, name=None))]
            fn $py(py: Python<'_>, logits: &Bound<'_, PyAny>, axis: Option<isize>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
                let _ = name;
                let x = to_tensor(logits, None)?;
                let axis = axis.unwrap_or(-1);
                Ok(call(py, $tf, || axis.to_string(), &x, move |x| $f(x, axis))?.into())
            }
        )*};
    }
    py_softmax! {
        /// ``exp(x) / sum(exp(x))`` along ``axis`` (the last by default), computed stably.
        /// TF equivalent: ``tf.nn.softmax``.
        ///
        /// >>> print(gt.nn.softmax(gt.constant([0.0, 1.0, 2.0])))
        /// gt.Tensor([0.09003057 0.24472848 0.66524094], shape=(3,), dtype=float32)
        softmax => ops::softmax as "Softmax",
        /// ``log(softmax(x))`` along ``axis`` (the last by default), computed stably.
        /// TF equivalent: ``tf.nn.log_softmax``.
        ///
        /// >>> print(gt.nn.log_softmax(gt.constant([0.0, 1.0, 2.0])))
        /// gt.Tensor([-2.407606   -1.4076059  -0.40760595], shape=(3,), dtype=float32)
        log_softmax => ops::log_softmax as "LogSoftmax",
    }

    /// Cross-entropy between the distributions ``labels`` and ``softmax(logits)`` along
    /// ``axis``, one value per example. TF equivalent:
    /// ``tf.nn.softmax_cross_entropy_with_logits``.
    ///
    /// >>> print(gt.nn.softmax_cross_entropy_with_logits(labels=[[0.0, 1.0]], logits=gt.constant([[1.0, 2.0]])))
    /// gt.Tensor([0.31326166], shape=(1,), dtype=float32)
    #[pyfunction]
    #[pyo3(signature = (labels, logits, axis=-1, name=None))]
    fn softmax_cross_entropy_with_logits(
        py: Python<'_>,
        labels: &Bound<'_, PyAny>,
        logits: &Bound<'_, PyAny>,
        axis: isize,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let lg = to_tensor(logits, None)?;
        let lb = to_tensor(labels, Some(lg.dtype()))?;
        let f =
            move |lb: &Tensor, lg: &Tensor| ops::softmax_cross_entropy_with_logits(lb, lg, axis);
        let op = "SoftmaxCrossEntropyWithLogits";
        Ok(call2(py, op, || axis.to_string(), &lb, &lg, f)?.into())
    }

    /// Cross-entropy of ``softmax(logits)`` against integer class ``labels``, one value per
    /// example. TF equivalent: ``tf.nn.sparse_softmax_cross_entropy_with_logits``.
    ///
    /// >>> print(gt.nn.sparse_softmax_cross_entropy_with_logits(labels=[1], logits=gt.constant([[1.0, 2.0]])))
    /// gt.Tensor([0.31326166], shape=(1,), dtype=float32)
    #[pyfunction]
    #[pyo3(signature = (labels, logits, name=None))]
    fn sparse_softmax_cross_entropy_with_logits(
        py: Python<'_>,
        labels: &Bound<'_, PyAny>,
        logits: &Bound<'_, PyAny>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let lg = to_tensor(logits, None)?;
        let lb = to_tensor(labels, None)?;
        let op = "SparseSoftmaxCrossEntropyWithLogits";
        let f = ops::sparse_softmax_cross_entropy_with_logits;
        Ok(call2(py, op, String::new, &lb, &lg, f)?.into())
    }

    /// ``x / sqrt(max(sum(x**2), epsilon))`` over ``axis`` (all axes by default; ``dim``
    /// is TF's deprecated name for it). TF equivalent: ``tf.math.l2_normalize`` (also
    /// ``gt.nn.l2_normalize``).
    ///
    /// >>> print(gt.math.l2_normalize(gt.constant([3.0, 4.0])))
    /// gt.Tensor([0.6 0.8], shape=(2,), dtype=float32)
    #[pyfunction]
    #[pyo3(signature = (x, axis=None, epsilon=1e-12, name=None, dim=None))]
    fn l2_normalize(
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        axis: Option<&Bound<'_, PyAny>>,
        epsilon: f64,
        name: Option<&Bound<'_, PyAny>>,
        dim: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let axes = match dim.filter(|d| !d.is_none()) {
            Some(d) => axes_arg(Some(d))?,
            None => axes_arg(axis)?,
        };
        let x = to_tensor(x, None)?;
        let key = || format!("{axes:?},{epsilon:?}");
        let owned = axes.clone();
        let f = move |x: &Tensor| ops::l2_normalize(x, owned.as_deref(), epsilon);
        Ok(call(py, "L2Normalize", key, &x, f)?.into())
    }

    /// Gaussian error linear unit: exactly ``0.5 x (1 + erf(x / sqrt 2))``, or with
    /// ``approximate=True`` the tanh form ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``.
    /// TF equivalent: ``tf.nn.gelu``.
    ///
    /// >>> round(float(gt.nn.gelu(gt.constant(1.0))), 6)
    /// 0.841345
    #[pyfunction]
    #[pyo3(signature = (features, approximate=false, name=None))]
    fn gelu(
        py: Python<'_>,
        features: &Bound<'_, PyAny>,
        approximate: bool,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let x = to_tensor(features, None)?;
        let f = move |x: &Tensor| ops::gelu(x, approximate);
        Ok(call(py, "Gelu", || approximate.to_string(), &x, f)?.into())
    }

    /// ``x * sigmoid(beta * x)``. TF equivalent: ``tf.nn.silu`` / ``tf.nn.swish``.
    ///
    /// >>> round(float(gt.nn.silu(gt.constant(1.0))), 6)
    /// 0.731059
    #[pyfunction]
    #[pyo3(signature = (features, beta=1.0, name=None))]
    fn silu(
        py: Python<'_>,
        features: &Bound<'_, PyAny>,
        beta: f64,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let x = to_tensor(features, None)?;
        let f = move |x: &Tensor| ops::silu(x, beta);
        Ok(call(py, "Silu", || format!("{beta:?}"), &x, f)?.into())
    }

    /// ``sum(t ** 2) / 2``. TF equivalent: ``tf.nn.l2_loss``.
    ///
    /// >>> float(gt.nn.l2_loss(gt.constant([1.0, 2.0])))
    /// 2.5
    #[pyfunction]
    #[pyo3(signature = (t, name=None))]
    fn l2_loss(
        py: Python<'_>,
        t: &Bound<'_, PyAny>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let x = to_tensor(t, None)?;
        Ok(call(py, "L2Loss", String::new, &x, ops::l2_loss)?.into())
    }

    /// Elementwise logistic loss, computed stably as TF does:
    /// ``max(x, 0) - x * z + log(1 + exp(-|x|))``. TF equivalent:
    /// ``tf.nn.sigmoid_cross_entropy_with_logits``.
    ///
    /// >>> round(float(gt.nn.sigmoid_cross_entropy_with_logits(labels=1.0, logits=0.0)), 6)
    /// 0.693147
    #[pyfunction]
    #[pyo3(signature = (labels=None, logits=None, name=None))]
    fn sigmoid_cross_entropy_with_logits(
        py: Python<'_>,
        labels: Option<&Bound<'_, PyAny>>,
        logits: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let (Some(labels), Some(logits)) = (
            labels.filter(|l| !l.is_none()),
            logits.filter(|l| !l.is_none()),
        ) else {
            return Err(PyValueError::new_err(
                "Both labels and logits must be provided.",
            ));
        };
        let lg = to_tensor(logits, None)?;
        let lb = to_tensor(labels, Some(lg.dtype()))?;
        let op = "SigmoidCrossEntropyWithLogits";
        let f = ops::sigmoid_cross_entropy_with_logits;
        Ok(call2(py, op, String::new, &lb, &lg, f)?.into())
    }

    /// Zeros elements with probability ``rate`` and scales the rest by ``1 / (1 - rate)``;
    /// ``noise_shape`` (broadcast to ``x``'s shape) shares one decision along its size-1
    /// axes. TF equivalent: ``tf.nn.dropout`` (the random stream is gradtape's, not TF's;
    /// ``seed`` follows ``gt.random``'s rules).
    ///
    /// >>> y = gt.nn.dropout(gt.ones([1000]), rate=0.5, seed=1)
    /// >>> sorted(set(y.numpy().tolist()))
    /// [0.0, 2.0]
    #[pyfunction]
    #[pyo3(signature = (x, rate, noise_shape=None, seed=None, name=None))]
    fn dropout(
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        rate: f64,
        noise_shape: Option<&Bound<'_, PyAny>>,
        seed: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let x = to_tensor(x, None)?;
        let noise = match noise_shape.filter(|n| !n.is_none()) {
            Some(n) => Some(dims_arg(n)?),
            None => None,
        };
        let seed = seed_arg(seed)?;
        // Fresh randomness on every call: never merged.
        let key = format!("{rate:?},{noise:?},{seed:?}");
        let f = move |a: &[Tensor]| ops::dropout(&a[0], rate, noise.as_deref(), seed);
        Ok(draw(py, x.size(), "Dropout", || key, &[x], f)?.into())
    }

    expose! {
        fn relu6 in [nn]: "(features: TensorLike, name: str | None = None) -> Tensor";
        fn selu in [nn]: "(features: TensorLike, name: str | None = None) -> Tensor";
        fn leaky_relu in [nn]: "(features: TensorLike, alpha: float = 0.2, name: str | None = None) -> Tensor";
        fn softmax in [math, nn]: "(logits: TensorLike, axis: int | None = None, name: str | None = None) -> Tensor";
        fn log_softmax in [math, nn]: "(logits: TensorLike, axis: int | None = None, name: str | None = None) -> Tensor";
        fn softmax_cross_entropy_with_logits in [nn]: "(labels: TensorLike, logits: TensorLike, axis: int = -1, name: str | None = None) -> Tensor";
        fn sparse_softmax_cross_entropy_with_logits in [nn]: "(labels: TensorLike, logits: TensorLike, name: str | None = None) -> Tensor";
        fn l2_normalize in [math, nn, linalg]: "(x: TensorLike, axis: AxisLike | None = None, epsilon: float = 1e-12, name: str | None = None, dim: AxisLike | None = None) -> Tensor";
        fn gelu in [nn]: "(features: TensorLike, approximate: _bool = False, name: str | None = None) -> Tensor";
        fn silu in [nn]: "(features: TensorLike, beta: float = 1.0, name: str | None = None) -> Tensor";
        fn l2_loss in [nn]: "(t: TensorLike, name: str | None = None) -> Tensor";
        fn sigmoid_cross_entropy_with_logits in [nn]: "(labels: TensorLike | None = None, logits: TensorLike | None = None, name: str | None = None) -> Tensor";
        fn dropout in [nn]: "(x: TensorLike, rate: float | Tensor, noise_shape: ShapeLike | None = None, seed: int | None = None, name: str | None = None) -> Tensor";
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testutil::{close, grad, grad2, t64, ti, vals};

    fn sm(v: &[f64]) -> Vec<f64> {
        let s: f64 = v.iter().map(|x| x.exp()).sum();
        v.iter().map(|x| x.exp() / s).collect()
    }

    #[test]
    fn relu6_selu_leaky_relu_values_and_gradients() {
        let x = t64(&[-1., 3., 7.], &[3]);
        close(&vals(&relu6(&x).unwrap()), &[0., 3., 6.]);
        close(&grad(&x, None, |x| relu6(x).unwrap()), &[0., 1., 0.]);

        let (s, a) = (SELU_SCALE, SELU_ALPHA);
        let e = (-1f64).exp();
        let x = t64(&[1., -1.], &[2]);
        close(&vals(&selu(&x).unwrap()), &[s, s * a * (e - 1.)]);
        close(&grad(&x, None, |x| selu(x).unwrap()), &[s, s * a * e]);
        close(&grad2(&x, |x| selu(x).unwrap()), &[0., s * a * e]);

        // At exactly 0, TF's SeluGrad gives `scale` (it tests `y < 0`).
        let x = t64(&[0.], &[1]);
        assert_eq!(grad(&x, None, |x| selu(x).unwrap()), [s]);

        // alpha is a float32 attribute in TF, also for float64 inputs.
        let a32 = f64::from(0.2f32);
        let x = t64(&[-2., 0., 3.], &[3]);
        assert_eq!(vals(&leaky_relu(&x, 0.2).unwrap()), [-2. * a32, 0., 3.]);
        assert_eq!(
            grad(&x, None, |x| leaky_relu(x, 0.2).unwrap()),
            [a32, a32, 1.]
        );
    }

    #[test]
    fn softmax_and_log_softmax() {
        let x = t64(&[1., 2., 3.], &[3]);
        let y = sm(&[1., 2., 3.]);
        close(&vals(&softmax(&x, -1).unwrap()), &y);
        let ly: Vec<f64> = y.iter().map(|v| v.ln()).collect();
        close(&vals(&log_softmax(&x, -1).unwrap()), &ly);
        let w = t64(&[1., 0., 0.], &[3]);
        close(
            &grad(&x, Some(&w), |x| softmax(x, -1).unwrap()),
            &[y[0] * (1. - y[0]), -y[0] * y[1], -y[0] * y[2]],
        );
        close(
            &grad(&x, Some(&w), |x| log_softmax(x, -1).unwrap()),
            &[1. - y[0], -y[1], -y[2]],
        );
        // Large logits stay finite.
        close(
            &vals(&softmax(&t64(&[1000., 1000.], &[2]), 0).unwrap()),
            &[0.5, 0.5],
        );
        // Axis 0 of a matrix: columns sum to one.
        let m = t64(&[1., 5., 2., 5.], &[2, 2]);
        let a = sm(&[1., 2.]);
        close(&vals(&softmax(&m, 0).unwrap()), &[a[0], 0.5, a[1], 0.5]);
        assert!(softmax(&Tensor::scalar(1.0f64), -1).is_err());
        assert!(softmax(&x, 1).is_err());
    }

    #[test]
    fn softmax_cross_entropies() {
        let logits = t64(&[1., 2., 3.], &[1, 3]);
        let labels = t64(&[0., 1., 0.], &[1, 3]);
        let y = sm(&[1., 2., 3.]);
        let loss = softmax_cross_entropy_with_logits(&labels, &logits, -1).unwrap();
        assert_eq!(loss.shape(), &[1]);
        close(&vals(&loss), &[-y[1].ln()]);
        close(
            &grad(&logits, None, |l| {
                softmax_cross_entropy_with_logits(&labels, l, -1).unwrap()
            }),
            &[y[0], y[1] - 1., y[2]],
        );
        let ly: Vec<f64> = y.iter().map(|v| -v.ln()).collect();
        close(
            &grad(&labels, None, |b| {
                softmax_cross_entropy_with_logits(b, &logits, -1).unwrap()
            }),
            &ly,
        );
        // TF's logits gradient is softmax - labels even when labels do not sum to 1.
        let half = t64(&[0., 0.5, 0.], &[1, 3]);
        close(
            &grad(&logits, None, |l| {
                softmax_cross_entropy_with_logits(&half, l, -1).unwrap()
            }),
            &[y[0], y[1] - 0.5, y[2]],
        );
        let sp = sparse_softmax_cross_entropy_with_logits(&ti(&[1], &[1]), &logits).unwrap();
        close(&vals(&sp), &[-y[1].ln()]);
        close(
            &grad(&logits, None, |l| {
                sparse_softmax_cross_entropy_with_logits(&ti(&[1], &[1]), l).unwrap()
            }),
            &[y[0], y[1] - 1., y[2]],
        );
        assert!(sparse_softmax_cross_entropy_with_logits(&ti(&[3], &[1]), &logits).is_err());
        assert!(softmax_cross_entropy_with_logits(&t64(&[1., 0.], &[2]), &logits, -1).is_err());
        // axis=0 on the transposed problem gives the same loss.
        let lt = crate::ops::transpose(&logits, None).unwrap();
        let bt = crate::ops::transpose(&labels, None).unwrap();
        close(
            &vals(&softmax_cross_entropy_with_logits(&bt, &lt, 0).unwrap()),
            &[-y[1].ln()],
        );
    }
    #[test]
    fn gelu_silu_l2_loss() {
        let x = t64(&[-1., 0., 1., 2.], &[4]);
        let erf = |v: f64| libm::erf(v);
        let exact: Vec<f64> = [-1f64, 0., 1., 2.]
            .iter()
            .map(|&v| 0.5 * v * (1. + erf(v / 2f64.sqrt())))
            .collect();
        close(&vals(&gelu(&x, false).unwrap()), &exact);
        close(
            &vals(&gelu(&Tensor::scalar(1.0f64), false).unwrap()),
            &[0.8413447460685429],
        );
        let approx: Vec<f64> = [-1f64, 0., 1., 2.]
            .iter()
            .map(|&v| {
                0.5 * v
                    * (1.
                        + ((2. / std::f64::consts::PI).sqrt() * (v + 0.044715 * v * v * v)).tanh())
            })
            .collect();
        close(&vals(&gelu(&x, true).unwrap()), &approx);
        // gelu'(x) = Phi(x) + x phi(x).
        let pdf = |v: f64| (-0.5 * v * v).exp() / (2. * std::f64::consts::PI).sqrt();
        let d: Vec<f64> = [-1f64, 0., 1., 2.]
            .iter()
            .map(|&v| 0.5 * (1. + erf(v / 2f64.sqrt())) + v * pdf(v))
            .collect();
        close(&grad(&x, None, |x| gelu(x, false).unwrap()), &d);
        // gelu''(x) = phi(x) (2 - x²).
        let d2: Vec<f64> = [-1f64, 0., 1., 2.]
            .iter()
            .map(|&v| pdf(v) * (2. - v * v))
            .collect();
        close(&grad2(&x, |x| gelu(x, false).unwrap()), &d2);

        let s = |v: f64| 1. / (1. + (-v).exp());
        close(
            &vals(&silu(&x, 1.0).unwrap()),
            &[-s(-1.), 0., s(1.), 2. * s(2.)],
        );
        close(
            &vals(&silu(&x, 0.5).unwrap()),
            &[-s(-0.5), 0., s(0.5), 2. * s(1.)],
        );
        // silu'(x) = s(x) (1 + x (1 - s(x))).
        let ds: Vec<f64> = [-1f64, 0., 1., 2.]
            .iter()
            .map(|&v| s(v) * (1. + v * (1. - s(v))))
            .collect();
        close(&grad(&x, None, |x| silu(x, 1.0).unwrap()), &ds);

        close(&vals(&l2_loss(&t64(&[1., 2., 3.], &[3])).unwrap()), &[7.0]);
        close(&grad(&x, None, |x| l2_loss(x).unwrap()), &[-1., 0., 1., 2.]);
        close(&grad2(&x, |x| l2_loss(x).unwrap()), &[1.; 4]);
        for f in [
            gelu(&ti(&[1], &[1]), false),
            silu(&ti(&[1], &[1]), 1.0),
            l2_loss(&ti(&[1], &[1])),
        ] {
            assert!(matches!(f, Err(Error::DType { .. })));
        }
    }

    #[test]
    fn sigmoid_cross_entropy_is_stable() {
        let z = t64(&[0., 1., 1.], &[3]);
        let x = t64(&[0., -2., 30.], &[3]);
        let want: Vec<f64> = [(0f64, 0f64), (1., -2.), (1., 30.)]
            .iter()
            .map(|&(z, x)| x.max(0.) - x * z + (-x.abs()).exp().ln_1p())
            .collect();
        close(
            &vals(&sigmoid_cross_entropy_with_logits(&z, &x).unwrap()),
            &want,
        );
        // d/dx = sigmoid(x) - z, d/dz = -x.
        let s = |v: f64| 1. / (1. + (-v).exp());
        close(
            &grad(&x, None, |x| {
                sigmoid_cross_entropy_with_logits(&z, x).unwrap()
            }),
            &[s(0.) - 0., s(-2.) - 1., s(30.) - 1.],
        );
        close(
            &grad(&z, None, |z| {
                sigmoid_cross_entropy_with_logits(z, &x).unwrap()
            }),
            &[0., 2., -30.],
        );
        assert!(matches!(
            sigmoid_cross_entropy_with_logits(&t64(&[0., 1.], &[2]), &x),
            Err(Error::InvalidArgument { .. })
        ));
        let z32 = Tensor::from_vec(vec![0f32; 3], &[3]).unwrap();
        assert!(sigmoid_cross_entropy_with_logits(&z32, &x).is_err());
    }

    #[test]
    fn l2_normalize_values_and_gradient() {
        let x = t64(&[3., 4.], &[2]);
        close(&vals(&l2_normalize(&x, None, 1e-12).unwrap()), &[0.6, 0.8]);
        let m = t64(&[3., 4., 0., 2.], &[2, 2]);
        close(
            &vals(&l2_normalize(&m, Some(&[1]), 1e-12).unwrap()),
            &[0.6, 0.8, 0., 1.],
        );
        close(
            &vals(&l2_normalize(&m, Some(&[0]), 1e-12).unwrap()),
            &[1., 0.894427190999916, 0., 0.447213595499958],
        );
        // epsilon dominates: x / sqrt(epsilon).
        close(&vals(&l2_normalize(&x, None, 100.0).unwrap()), &[0.3, 0.4]);
        // d(x/|x|) . 1 = (1 - x (x.1)/|x|²) / |x|.
        close(
            &grad(&x, None, |x| l2_normalize(x, None, 1e-12).unwrap()),
            &[(1. - 3. * 7. / 25.) / 5., (1. - 4. * 7. / 25.) / 5.],
        );
        let c = crate::ops::complex(&t64(&[3., 0.], &[2]), &t64(&[0., 4.], &[2])).unwrap();
        let n = l2_normalize(&c, None, 1e-12).unwrap();
        close(&vals(&crate::ops::real(&n).unwrap()), &[0.6, 0.]);
        close(&vals(&crate::ops::imag(&n).unwrap()), &[0., 0.8]);
        assert!(l2_normalize(&ti(&[1], &[1]), None, 1e-12).is_err());
    }

    #[test]
    fn dropout_masks_and_scales() {
        let _s = crate::ops::random::serial();
        let x = Tensor::from_vec(vec![1.0f32; 4000], &[4000]).unwrap();
        let y = dropout(&x, 0.25, None, Some(3))
            .unwrap()
            .to_vec::<f32>()
            .unwrap();
        let scale = 1.0f32 / 0.75;
        assert!(y.iter().all(|&v| v == 0.0 || v == scale));
        let dropped = y.iter().filter(|&&v| v == 0.0).count() as f64 / 4000.0;
        assert!((0.2..0.3).contains(&dropped), "{dropped}");
        // noise_shape: one decision per column.
        let m = t64(&[1.; 12], &[3, 4]);
        let y = vals(&dropout(&m, 0.5, Some(&[1, 4]), Some(1)).unwrap());
        for r in 1..3 {
            assert_eq!(&y[4 * r..4 * r + 4], &y[..4]);
        }
        // The gradient is the mask, scaled; a dropped inf is 0 (TF's select).
        let v = t64(&[2., f64::INFINITY, 3., 4., 5., 6.], &[6]);
        let tape = crate::GradientTape::new();
        let y = {
            let _r = tape.enter();
            tape.watch(&v);
            dropout(&v, 0.5, None, Some(2)).unwrap()
        };
        let g = vals(&tape.gradient1(&y, &v).unwrap().unwrap());
        for (gi, yi) in g.iter().zip(&vals(&y)) {
            assert!(*gi == 0.0 || *gi == 2.0);
            assert_eq!(*gi == 0.0, *yi == 0.0);
        }
        // rate 0: x itself.
        assert_eq!(dropout(&x, 0.0, None, None).unwrap().id(), x.id());
        for bad in [1.0, -0.1, f64::NAN] {
            assert!(matches!(
                dropout(&x, bad, None, None),
                Err(Error::InvalidArgument { .. })
            ));
        }
        assert!(dropout(&ti(&[1], &[1]), 0.5, None, None).is_err());
        assert!(dropout(&m, 0.5, Some(&[5]), None).is_err());
        assert!(dropout(&m, 0.5, Some(&[2, 3, 4]), None).is_err());
    }
}
