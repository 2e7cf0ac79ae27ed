//! Neural-network activations and losses that are primitives (TF registers a
//! gradient for them and composing would lose accuracy or TF's numbers): relu6,
//! selu, leaky_relu, softmax, log_softmax and the softmax cross-entropies.

use super::{grads, record, unary_out, Grads, Op, Saves, VjpCx};
use crate::error::{Error, Result};
use crate::kernels::elementwise::map;
use crate::kernels::softmax::softmax_kernel;
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
        Ok(grads![Some(where_(
            &inside,
            &dys[0],
            &zeros_like(&dys[0])?
        )?)])
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
/// SeluGrad, from the output): `dy*scale` where `y > 0`, else `dy*(y + scale*alpha)`.
pub fn selu(x: &Tensor) -> Result<Tensor> {
    let out =
        Tensor::new(map_dtypes!("Selu", x.data(), [F32, F64] via [F16], a => map(a, selu_k)?));
    unary_out(Selu, x, out)
}
struct Selu;
impl Op for Selu {
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
        Ok(grads![Some(where_(
            &greater(y, &zeros_like(y)?)?,
            &pos,
            &negb
        )?)])
    }
}

/// `x` where `x > 0`, else `alpha * x`. TF equivalent: `tf.nn.leaky_relu`.
/// Gradient (TF's LeakyReluGrad, from the input): `dy` where `x > 0`, else `alpha*dy`.
pub fn leaky_relu(x: &Tensor, alpha: f64) -> Result<Tensor> {
    let out = Tensor::new(
        map_dtypes!("LeakyRelu", x.data(), [F32, F64] via [F16], a => map(a, |v| leaky_k(v, alpha))?),
    );
    unary_out(LeakyRelu { alpha }, x, out)
}
struct LeakyRelu {
    alpha: f64,
}
impl Op for LeakyRelu {
    fn name(&self) -> &'static str {
        "LeakyRelu"
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let (x, dy) = (cx.input(0)?, &dys[0]);
        let scaled = multiply(dy, &scalar_like(dy, self.alpha))?;
        Ok(grads![Some(where_(
            &greater(x, &zeros_like(x)?)?,
            dy,
            &scaled
        )?)])
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
    record(Softmax { log }, &[x], &[&out]);
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
    record(SoftmaxXent, &[&lg, &lb], &[&out]);
    Ok(out)
}
struct SoftmaxXent;
impl Op for SoftmaxXent {
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
                Ok(heavy(py, x.size(), || $f(&x))?.into())
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
        Ok(heavy(py, x.size(), || ops::leaky_relu(&x, alpha))?.into())
    }

    macro_rules! py_softmax {
        ($($(#[$doc:meta])* $py:ident => $f:path),* $(,)?) => {$(
            $(#[$doc])*
            #[pyfunction]
            #[pyo3(signature = (logits, axis=None, name=None))]
            fn $py(py: Python<'_>, logits: &Bound<'_, PyAny>, axis: Option<isize>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
                let _ = name;
                let x = to_tensor(logits, None)?;
                Ok(heavy(py, x.size(), || $f(&x, axis.unwrap_or(-1)))?.into())
            }
        )*};
    }
    py_softmax! {
        /// ``exp(x) / sum(exp(x))`` along ``axis`` (the last by default), computed stably.
        /// TF equivalent: ``tf.nn.softmax``.
        ///
        /// >>> print(gt.nn.softmax(gt.constant([0.0, 1.0, 2.0])))
        /// gt.Tensor([0.09003057 0.24472848 0.66524094], shape=(3,), dtype=float32)
        softmax => ops::softmax,
        /// ``log(softmax(x))`` along ``axis`` (the last by default), computed stably.
        /// TF equivalent: ``tf.nn.log_softmax``.
        ///
        /// >>> print(gt.nn.log_softmax(gt.constant([0.0, 1.0, 2.0])))
        /// gt.Tensor([-2.407606   -1.4076059  -0.40760595], shape=(3,), dtype=float32)
        log_softmax => ops::log_softmax,
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
        Ok(heavy(py, lg.size(), || {
            ops::softmax_cross_entropy_with_logits(&lb, &lg, axis)
        })?
        .into())
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
        Ok(heavy(py, lg.size(), || {
            ops::sparse_softmax_cross_entropy_with_logits(&lb, &lg)
        })?
        .into())
    }

    expose! {
        fn relu6 in [nn]: "(features: TensorLike, name: str | None=None) -> Tensor";
        fn selu in [nn]: "(features: TensorLike, name: str | None=None) -> Tensor";
        fn leaky_relu in [nn]: "(features: TensorLike, alpha: float=0.2, name: str | None=None) -> Tensor";
        fn softmax in [math, nn]: "(logits: TensorLike, axis: int | None=None, name: str | None=None) -> Tensor";
        fn log_softmax in [math, nn]: "(logits: TensorLike, axis: int | None=None, name: str | None=None) -> Tensor";
        fn softmax_cross_entropy_with_logits in [nn]: "(labels: TensorLike, logits: TensorLike, axis: int=-1, name: str | None=None) -> Tensor";
        fn sparse_softmax_cross_entropy_with_logits in [nn]: "(labels: TensorLike, logits: TensorLike, name: str | None=None) -> Tensor";
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

        let x = t64(&[-2., 3.], &[2]);
        close(&vals(&leaky_relu(&x, 0.2).unwrap()), &[-0.4, 3.]);
        close(&grad(&x, None, |x| leaky_relu(x, 0.2).unwrap()), &[0.2, 1.]);
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
}
