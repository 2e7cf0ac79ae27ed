//! Reductions: sum, mean, max, min, prod, and their composites.
//!
//! `axis` follows TF: `None` reduces everything, negative axes count from the end,
//! repeated axes are an error.

use super::{grads, record, Grads, Op, Saves, VjpCx};
use crate::broadcast::norm_axis;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels::reduce::{arg_extreme_lanes, fold_axes, scan, sum_axes};
use crate::ops::{broadcast_to, cast, divide, equal, multiply, reshape, scalar_like};
use crate::tensor::Tensor;

/// Sorted, unique, non-negative axes; `None` means all.
pub(crate) fn norm_axes(
    op: &'static str,
    axes: Option<&[isize]>,
    ndim: usize,
) -> Result<Vec<usize>> {
    let mut v = match axes {
        None => (0..ndim).collect::<Vec<_>>(),
        Some(a) => a
            .iter()
            .map(|&x| norm_axis(op, x, ndim))
            .collect::<Result<Vec<_>>>()?,
    };
    v.sort_unstable();
    let n = v.len();
    v.dedup();
    if v.len() != n {
        return Err(Error::invalid(op, "axes contain duplicates"));
    }
    Ok(v)
}

/// The shape of a reduction's output with reduced axes kept as 1.
fn kept_shape(shape: &[usize], axes: &[usize]) -> Vec<usize> {
    shape
        .iter()
        .enumerate()
        .map(|(i, &d)| if axes.contains(&i) { 1 } else { d })
        .collect()
}

/// Broadcasts a reduction's output gradient back over the reduced axes; the first
/// `batch` dimensions of `dy` are carried along (see [`VjpCx::batch`]).
fn spread(dy: &Tensor, in_shape: &[usize], axes: &[usize], batch: usize) -> Result<Tensor> {
    let lead = &dy.shape()[..batch];
    let kept: Vec<usize> = lead
        .iter()
        .copied()
        .chain(kept_shape(in_shape, axes))
        .collect();
    let full: Vec<usize> = lead.iter().chain(in_shape).copied().collect();
    let g = if dy.shape() == kept.as_slice() {
        dy.clone()
    } else {
        reshape(dy, &kept)?
    };
    broadcast_to(&g, &full)
}

/// Sum over `axis`. TF equivalent: `tf.math.reduce_sum`. Gradient: `dy` broadcast back.
pub fn reduce_sum(x: &Tensor, axis: Option<&[isize]>, keepdims: bool) -> Result<Tensor> {
    let axes = norm_axes("Sum", axis, x.ndim())?;
    let out = if x.dtype() == DType::Bool {
        return reduce_sum(&cast(x, DType::I32)?, axis, keepdims);
    } else {
        Tensor::new(
            map_dtypes!("Sum", x.data(), [F32, F64, I32, I64, U64, C64, C128] via [F16, I8, I16, U8, U16, U32], a => sum_axes(a, &axes, keepdims)?),
        )
    };
    record(Sum { axes }, &[x], &[&out])?;
    Ok(out)
}
struct Sum {
    axes: Vec<usize>,
}
impl Op for Sum {
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        // Linear: the tangent is summed the same way.
        let t = tangents[0].as_ref()?;
        let axes: Vec<isize> = self.axes.iter().map(|&a| a as isize).collect();
        let go = || reshape(&reduce_sum(t, Some(&axes), false)?, cx.output_shape(0));
        Some(go().map(|t| grads![Some(t)]))
    }
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "Sum"
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        Ok(grads![Some(spread(
            &dys[0],
            cx.input_shape(0),
            &self.axes,
            cx.batch()
        )?)])
    }
}

/// Mean over `axis`. TF equivalent: `tf.math.reduce_mean` (integer inputs give an
/// integer mean, as in TF: the sum taken in 64 bits, divided with truncation toward
/// zero). Gradient: `dy / n` broadcast back.
pub fn reduce_mean(x: &Tensor, axis: Option<&[isize]>, keepdims: bool) -> Result<Tensor> {
    let axes = norm_axes("Mean", axis, x.ndim())?;
    let n: usize = axes.iter().map(|&a| x.shape()[a]).product();
    if x.dtype().is_integer() {
        // Not recorded: integer outputs carry no gradient.
        let wide = if x.dtype().is_unsigned() {
            DType::U64
        } else {
            DType::I64
        };
        let w = crate::ops::cast_data(x.data(), wide)?;
        let nn = n.max(1);
        let m = map_dtypes!("Mean", &w, [I64, U64], a => {
            truncating_div(sum_axes(a, &axes, keepdims)?, nn)
        });
        return Ok(Tensor::new(crate::ops::narrow(m, x.dtype())?));
    }
    let s = map_dtypes!("Mean", x.data(), [F32, F64, C64, C128] via [F16], a => sum_axes(a, &axes, keepdims)?);
    // Divide rather than multiply by 1/n: TF's Mean divides. In the compute dtype:
    // a float16 mean is rounded once.
    let s = Tensor::new(crate::ops::widen(&s)?);
    let nn = crate::tensor::scalar_of(n as f64, s.dtype());
    let m = map_pair!("Mean", s.data(), nn.data(), [F32, F64, C64, C128], a, b =>
        crate::kernels::elementwise::zip("Mean", a, b, |p, q| p / q)?);
    let out = Tensor::new(crate::ops::narrow(m, x.dtype())?);
    record(Mean { axes, n }, &[x], &[&out])?;
    Ok(out)
}
/// `a / n` elementwise, integer division truncating toward zero.
fn truncating_div<T>(mut a: ndarray::ArrayD<T>, n: usize) -> ndarray::ArrayD<T>
where
    T: num_traits::NumCast + Copy + std::ops::Div<Output = T>,
{
    // n counts elements of an array in memory: it fits in 64 bits.
    let n: T = num_traits::NumCast::from(n).expect("an element count fits in 64 bits");
    a.mapv_inplace(|v| v / n);
    a
}

struct Mean {
    axes: Vec<usize>,
    n: usize,
}
impl Op for Mean {
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        let t = tangents[0].as_ref()?;
        let axes: Vec<isize> = self.axes.iter().map(|&a| a as isize).collect();
        let go = || reshape(&reduce_mean(t, Some(&axes), false)?, cx.output_shape(0));
        Some(go().map(|t| grads![Some(t)]))
    }
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "Mean"
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let g = divide(&dys[0], &scalar_like(&dys[0], self.n as f64))?;
        Ok(grads![Some(spread(
            &g,
            cx.input_shape(0),
            &self.axes,
            cx.batch()
        )?)])
    }
}

fn minmax(x: &Tensor, axis: Option<&[isize]>, keepdims: bool, max: bool) -> Result<Tensor> {
    let op = if max { "Max" } else { "Min" };
    let axes = norm_axes(op, axis, x.ndim())?;
    if x.size() == 0 && !axes.is_empty() {
        return Err(Error::invalid(
            op,
            "reduction over an empty tensor has no identity here",
        ));
    }
    macro_rules! mm {
        ($a:expr, $lo:expr, $hi:expr) => {
            if max {
                fold_axes(op, $a, &axes, keepdims, $lo, |p, q| {
                    if q > p || q != q {
                        q
                    } else {
                        p
                    }
                })?
            } else {
                fold_axes(op, $a, &axes, keepdims, $hi, |p, q| {
                    if q < p || q != q {
                        q
                    } else {
                        p
                    }
                })?
            }
        };
    }
    let out = Tensor::new(
        map_dtypes!(op, x.data(), [F32, F64, I32, I64, U64] via [F16, I8, I16, U8, U16, U32], a => {
            mm!(a, Bounded::lowest(), Bounded::highest())
        }),
    );
    record(MinMaxReduce { axes, max }, &[x], &[&out])?;
    Ok(out)
}

trait Bounded {
    fn lowest() -> Self;
    fn highest() -> Self;
}
macro_rules! bounded {
    ($($t:ty: $lo:expr, $hi:expr;)*) => {$(
        impl Bounded for $t {
            fn lowest() -> Self { $lo }
            fn highest() -> Self { $hi }
        }
    )*};
}
bounded! {
    f32: f32::NEG_INFINITY, f32::INFINITY;
    f64: f64::NEG_INFINITY, f64::INFINITY;
    i32: i32::MIN, i32::MAX;
    i64: i64::MIN, i64::MAX;
    u64: u64::MIN, u64::MAX;
}

/// Maximum over `axis`. TF equivalent: `tf.math.reduce_max`. Gradient: `dy` shared
/// equally among the elements equal to the maximum (TF's rule).
pub fn reduce_max(x: &Tensor, axis: Option<&[isize]>, keepdims: bool) -> Result<Tensor> {
    minmax(x, axis, keepdims, true)
}
/// Minimum over `axis`. TF equivalent: `tf.math.reduce_min`.
pub fn reduce_min(x: &Tensor, axis: Option<&[isize]>, keepdims: bool) -> Result<Tensor> {
    minmax(x, axis, keepdims, false)
}
struct MinMaxReduce {
    axes: Vec<usize>,
    max: bool,
}
impl Op for MinMaxReduce {
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        if self.max {
            "Max"
        } else {
            "Min"
        }
    }
    fn saves(&self) -> Saves {
        Saves::INPUTS_AND_OUTPUT
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let x = cx.input(0)?;
        let shape = cx.input_shape(0);
        let y = spread(cx.output(0)?, shape, &self.axes, 0)?;
        let ind = cast(&equal(&y, x)?, x.dtype())?;
        let count = reduce_sum(
            &ind,
            Some(&self.axes.iter().map(|&a| a as isize).collect::<Vec<_>>()),
            true,
        )?;
        let dy = spread(&dys[0], shape, &self.axes, cx.batch())?;
        let count = broadcast_to(&count, shape)?;
        Ok(grads![Some(multiply(&divide(&ind, &count)?, &dy)?)])
    }
}

/// Product over `axis`. TF equivalent: `tf.math.reduce_prod`. Gradient: the product
/// of the other elements (computed without division, so zeros are handled).
pub fn reduce_prod(x: &Tensor, axis: Option<&[isize]>, keepdims: bool) -> Result<Tensor> {
    let axes = norm_axes("Prod", axis, x.ndim())?;
    let out = Tensor::new(
        map_dtypes!("Prod", x.data(), [F32, F64, I32, I64, U64, C64, C128] via [F16, I8, I16, U8, U16, U32], a => {
            fold_axes("Prod", a, &axes, keepdims, num_traits::One::one(), |p, q| p * q)?
        }),
    );
    record(Prod { axes }, &[x], &[&out])?;
    Ok(out)
}
struct Prod {
    axes: Vec<usize>,
}
impl Op for Prod {
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "Prod"
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        // d prod / d x_i = prod_{j != i} x_j = exclusive-cumprod from the left times
        // exclusive-cumprod from the right, along the flattened reduced axes.
        let x = cx.input(0)?;
        let shape = cx.input_shape(0).to_vec();
        let nd = shape.len();
        let kept: Vec<usize> = (0..nd).filter(|a| !self.axes.contains(a)).collect();
        let mut perm = kept.clone();
        perm.extend(&self.axes);
        let xt = crate::ops::transpose(x, Some(&perm))?;
        let outer: usize = kept.iter().map(|&a| shape[a]).product();
        let inner: usize = self.axes.iter().map(|&a| shape[a]).product();
        let flat = reshape(&xt, &[outer, inner])?;
        let left = crate::ops::cumprod(&flat, 1, true, false)?;
        let right = crate::ops::cumprod(&flat, 1, true, true)?;
        let others = multiply(&left, &right)?;
        let tshape: Vec<usize> = perm.iter().map(|&a| shape[a]).collect();
        let others = reshape(&others, &tshape)?;
        let mut inv = vec![0; nd];
        for (i, &p) in perm.iter().enumerate() {
            inv[p] = i;
        }
        let others = crate::ops::transpose(&others, Some(&inv))?;
        let dy = spread(&dys[0], &shape, &self.axes, cx.batch())?;
        Ok(grads![Some(multiply(&dy, &crate::ops::conj(&others)?)?)])
    }
}

/// Cumulative sum along `axis`. TF equivalent: `tf.math.cumsum`. Gradient: the
/// cumulative sum of `dy` in the opposite direction.
pub fn cumsum(x: &Tensor, axis: isize, exclusive: bool, reverse: bool) -> Result<Tensor> {
    let ax = norm_axis("Cumsum", axis, x.ndim())?;
    let out = Tensor::new(
        map_dtypes!("Cumsum", x.data(), [F32, F64, I32, I64, U64, C64, C128] via [F16, I8, I16, U8, U16, U32], a => {
            scan(a, ax, exclusive, reverse, num_traits::Zero::zero(), |p, q| p + q)?
        }),
    );
    record(
        Cumsum {
            axis: ax,
            exclusive,
            reverse,
        },
        &[x],
        &[&out],
    )?;
    Ok(out)
}
struct Cumsum {
    axis: usize,
    exclusive: bool,
    reverse: bool,
}
impl Op for Cumsum {
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "Cumsum"
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        Ok(grads![Some(cumsum(
            &dys[0],
            (self.axis + cx.batch()) as isize,
            self.exclusive,
            !self.reverse
        )?)])
    }
}

/// Cumulative product along `axis`. TF equivalent: `tf.math.cumprod`.
/// Gradient (TF's): `cumsum(y * dy, reversed) / x`; it is not defined where `x == 0`.
pub fn cumprod(x: &Tensor, axis: isize, exclusive: bool, reverse: bool) -> Result<Tensor> {
    let ax = norm_axis("Cumprod", axis, x.ndim())?;
    let out = Tensor::new(
        map_dtypes!("Cumprod", x.data(), [F32, F64, I32, I64, U64, C64, C128] via [F16, I8, I16, U8, U16, U32], a => {
            scan(a, ax, exclusive, reverse, num_traits::One::one(), |p, q| p * q)?
        }),
    );
    record(
        Cumprod {
            axis: ax,
            exclusive,
            reverse,
        },
        &[x],
        &[&out],
    )?;
    Ok(out)
}
struct Cumprod {
    axis: usize,
    exclusive: bool,
    reverse: bool,
}
impl Op for Cumprod {
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "Cumprod"
    }
    fn saves(&self) -> Saves {
        Saves::INPUTS_AND_OUTPUT
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let x = cx.input(0)?;
        let y = cx.output(0)?;
        // dx_i = sum_{j >= i} dy_j conj(y_j / x_i) (TF's rule, conjugated for complex).
        let s = cumsum(
            &multiply(&crate::ops::conj(y)?, &dys[0])?,
            (self.axis + cx.batch()) as isize,
            self.exclusive,
            !self.reverse,
        )?;
        Ok(grads![Some(divide(&s, &crate::ops::conj(x)?)?)])
    }
}

fn arg_extreme(
    op: &'static str,
    x: &Tensor,
    axis: Option<isize>,
    dtype: DType,
    max: bool,
) -> Result<Tensor> {
    let ax = norm_axis(op, axis.unwrap_or(0), x.ndim())?;
    if x.shape()[ax] == 0 {
        return Err(Error::invalid(
            op,
            format!("Reduction axis {ax} is empty in shape {:?}", x.shape()),
        ));
    }
    if !matches!(dtype, DType::I32 | DType::I64) {
        return Err(Error::dtype(
            op,
            format!("output_type must be int32 or int64, got {}", dtype.name()),
        ));
    }
    // Every real dtype, as TF's ArgMax/ArgMin; the narrow ones compared widened
    // (the order is the same).
    let v = match &crate::ops::widen(x.data())? {
        crate::tensor::Data::F32(a) => arg_extreme_lanes(op, a, ax, max)?,
        crate::tensor::Data::F64(a) => arg_extreme_lanes(op, a, ax, max)?,
        crate::tensor::Data::I32(a) => arg_extreme_lanes(op, a, ax, max)?,
        crate::tensor::Data::I64(a) => arg_extreme_lanes(op, a, ax, max)?,
        crate::tensor::Data::U64(a) => arg_extreme_lanes(op, a, ax, max)?,
        _ => return Err(Error::unsupported(op, x.dtype())),
    };
    let mut shape = x.shape().to_vec();
    shape.remove(ax);
    let t = Tensor::from_vec(v, &shape)?;
    if dtype == DType::I64 {
        Ok(t)
    } else {
        crate::tape::stack::suspended(|| cast(&t, dtype))
    }
}

/// Index of the largest value along `axis` (`None`: 0). TF equivalent:
/// `tf.math.argmax`. Not differentiable.
pub fn argmax(x: &Tensor, axis: Option<isize>, output_type: DType) -> Result<Tensor> {
    arg_extreme("ArgMax", x, axis, output_type, true)
}

/// Index of the smallest value along `axis` (`None`: 0). TF equivalent:
/// `tf.math.argmin`. Not differentiable.
pub fn argmin(x: &Tensor, axis: Option<isize>, output_type: DType) -> Result<Tensor> {
    arg_extreme("ArgMin", x, axis, output_type, false)
}

// ---- Composites: short chains of the ops above (their gradients, to any order, are
// those of their parts).

/// Float or complex dtypes only (TF raises for integer inputs of the moments).
fn float_or_complex(op: &'static str, x: &Tensor) -> Result<()> {
    if x.dtype().is_floating() || x.dtype().is_complex() {
        Ok(())
    } else {
        Err(Error::dtype(
            op,
            format!(
                "Input must be either real or complex, got {}",
                x.dtype().name()
            ),
        ))
    }
}

/// Variance over `axis`: `mean(|x - mean(x)|²)`, real for complex inputs. TF
/// equivalent: `tf.math.reduce_variance` (composed as TF does; float and complex
/// dtypes only).
pub fn reduce_variance(x: &Tensor, axis: Option<&[isize]>, keepdims: bool) -> Result<Tensor> {
    use crate::ops::{conj, real, square, subtract};
    float_or_complex("reduce_variance", x)?;
    let mean = reduce_mean(x, axis, true)?;
    let d = subtract(x, &mean)?;
    let sq = if x.dtype().is_complex() {
        multiply(&d, &conj(&d)?)?
    } else {
        square(&d)?
    };
    real(&reduce_mean(&sq, axis, keepdims)?)
}

/// Standard deviation over `axis`: `sqrt(reduce_variance(x))`. TF equivalent:
/// `tf.math.reduce_std`.
pub fn reduce_std(x: &Tensor, axis: Option<&[isize]>, keepdims: bool) -> Result<Tensor> {
    float_or_complex("reduce_std", x)?;
    crate::ops::sqrt(&reduce_variance(x, axis, keepdims)?)
}

/// `log(sum(exp(x)))` over `axis`, computed stably: the maximum is subtracted first
/// (and added back), taken as 0 where it is not finite (TF's rule: a row of `-inf`
/// gives `-inf`, not NaN). The shift carries no gradient, so the gradient is
/// `softmax(x)`. TF equivalent: `tf.math.reduce_logsumexp`.
pub fn reduce_logsumexp(x: &Tensor, axis: Option<&[isize]>, keepdims: bool) -> Result<Tensor> {
    use crate::ops::{abs, add, exp, less, log, subtract, where_, zeros_like};
    // Not recorded (TF: stop_gradient): the result does not depend on the shift.
    let my_max = crate::tape::stack::suspended(|| -> Result<Tensor> {
        let raw_max = reduce_max(x, axis, true)?;
        let finite = less(&abs(&raw_max)?, &scalar_like(&raw_max, f64::INFINITY))?;
        where_(&finite, &raw_max, &zeros_like(&raw_max)?)
    })?;
    let r = log(&reduce_sum(&exp(&subtract(x, &my_max)?)?, axis, keepdims)?)?;
    let my_max = if keepdims {
        my_max
    } else {
        reshape(&my_max, r.shape())?
    };
    add(&r, &my_max)
}

/// A bool input of `reduce_any` / `reduce_all` (TF's `Any` and `All` take bool only).
fn bool_input(op: &'static str, x: &Tensor) -> Result<()> {
    if x.dtype() == DType::Bool {
        Ok(())
    } else {
        Err(Error::dtype(
            op,
            format!("expected a bool tensor, got {}", x.dtype().name()),
        ))
    }
}

/// Logical or over `axis` (`false` over no elements). TF equivalent:
/// `tf.math.reduce_any`. Not differentiable.
pub fn reduce_any(x: &Tensor, axis: Option<&[isize]>, keepdims: bool) -> Result<Tensor> {
    bool_input("Any", x)?;
    let n = reduce_sum(&cast(x, DType::I64)?, axis, keepdims)?;
    crate::ops::greater(&n, &Tensor::scalar(0i64))
}

/// Logical and over `axis` (`true` over no elements). TF equivalent:
/// `tf.math.reduce_all`. Not differentiable.
pub fn reduce_all(x: &Tensor, axis: Option<&[isize]>, keepdims: bool) -> Result<Tensor> {
    bool_input("All", x)?;
    let n = reduce_sum(
        &cast(&crate::ops::logical_not(x)?, DType::I64)?,
        axis,
        keepdims,
    )?;
    equal(&n, &Tensor::scalar(0i64))
}

/// The Python functions of this family: bindings and where they appear (see
/// `src/ops/README.md`).
#[cfg(feature = "python")]
pub(super) mod python {
    use crate::python::binding::*;

    macro_rules! py_reduce {
        ($($(#[$doc:meta])* $py:ident => $f:path as $tf:literal),* $(,)?) => {$(
            $(#[$doc])*
            #[pyfunction]
            #[pyo3(signature = (input_tensor, axis=None, keepdims=false, name=None))]
            fn $py(py: Python<'_>, input_tensor: &Bound<'_, PyAny>, axis: Option<&Bound<'_, PyAny>>, keepdims: bool, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
                let _ = name;
                let x = to_tensor(input_tensor, None)?;
                let axes = axes_arg(axis)?;
                let key = || format!("{axes:?},{keepdims}");
                let owned = axes.clone();
                Ok(call(py, $tf, key, &x, move |x| $f(x, owned.as_deref(), keepdims))?.into())
            }
        )*};
    }

    py_reduce! {
        /// Sum over ``axis`` (all axes by default). TF equivalent: ``tf.math.reduce_sum``.
        ///
        /// >>> x = gt.constant([[1.0, 2.0], [3.0, 4.0]])
        /// >>> print(gt.reduce_sum(x))
        /// gt.Tensor(10.0, shape=(), dtype=float32)
        /// >>> print(gt.reduce_sum(x, axis=0, keepdims=True))
        /// gt.Tensor([[4. 6.]], shape=(1, 2), dtype=float32)
        reduce_sum => ops::reduce_sum as "Sum",
        /// Mean over ``axis`` (all axes by default); integer tensors give integer means, as in TF.
        /// TF equivalent: ``tf.math.reduce_mean``.
        ///
        /// >>> print(gt.reduce_mean(gt.constant([[1.0, 2.0], [3.0, 4.0]]), axis=1))
        /// gt.Tensor([1.5 3.5], shape=(2,), dtype=float32)
        reduce_mean => ops::reduce_mean as "Mean",
        /// Maximum over ``axis`` (all axes by default). TF equivalent: ``tf.math.reduce_max``.
        ///
        /// >>> print(gt.reduce_max(gt.constant([[1.0, 5.0], [3.0, 4.0]]), axis=0))
        /// gt.Tensor([3. 5.], shape=(2,), dtype=float32)
        reduce_max => ops::reduce_max as "Max",
        /// Minimum over ``axis`` (all axes by default). TF equivalent: ``tf.math.reduce_min``.
        ///
        /// >>> print(gt.reduce_min(gt.constant([[1.0, 5.0], [3.0, 4.0]]), axis=0))
        /// gt.Tensor([1. 4.], shape=(2,), dtype=float32)
        reduce_min => ops::reduce_min as "Min",
        /// Product over ``axis`` (all axes by default). TF equivalent: ``tf.math.reduce_prod``.
        ///
        /// >>> print(gt.reduce_prod(gt.constant([1.0, 2.0, 3.0])))
        /// gt.Tensor(6.0, shape=(), dtype=float32)
        reduce_prod => ops::reduce_prod as "Prod",
    }

    macro_rules! py_scan {
        ($($(#[$doc:meta])* $py:ident => $f:path as $tf:literal),* $(,)?) => {$(
            $(#[$doc])*
            #[pyfunction]
            #[pyo3(signature = (x, axis=0, exclusive=false, reverse=false, name=None))]
            fn $py(py: Python<'_>, x: &Bound<'_, PyAny>, axis: isize, exclusive: bool, reverse: bool, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
                let _ = name;
                let x = to_tensor(x, None)?;
                let key = || format!("{axis},{exclusive},{reverse}");
                Ok(call(py, $tf, key, &x, move |x| $f(x, axis, exclusive, reverse))?.into())
            }
        )*};
    }
    py_scan! {
        /// Cumulative sum along ``axis`` (``exclusive`` starts from 0, ``reverse`` runs from the
        /// end). TF equivalent: ``tf.math.cumsum``.
        ///
        /// >>> print(gt.cumsum(gt.constant([1.0, 2.0, 3.0])))
        /// gt.Tensor([1. 3. 6.], shape=(3,), dtype=float32)
        /// >>> print(gt.cumsum(gt.constant([1.0, 2.0, 3.0]), exclusive=True))
        /// gt.Tensor([0. 1. 3.], shape=(3,), dtype=float32)
        cumsum => ops::cumsum as "Cumsum",
        /// Cumulative product along ``axis`` (``exclusive`` starts from 1, ``reverse`` runs from
        /// the end). TF equivalent: ``tf.math.cumprod``.
        ///
        /// >>> print(gt.cumprod(gt.constant([1.0, 2.0, 3.0])))
        /// gt.Tensor([1. 2. 6.], shape=(3,), dtype=float32)
        cumprod => ops::cumprod as "Cumprod",
    }

    macro_rules! py_arg {
        ($($(#[$doc:meta])* $py:ident => $f:path as $tf:literal),* $(,)?) => {$(
            $(#[$doc])*
            #[pyfunction]
            #[pyo3(signature = (input, axis=None, output_type=None, name=None))]
            fn $py(py: Python<'_>, input: &Bound<'_, PyAny>, axis: Option<isize>, output_type: Option<&Bound<'_, PyAny>>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
                let _ = name;
                let x = to_tensor(input, None)?;
                let dt = match output_type {
                    Some(d) if !d.is_none() => crate::python::convert::to_dtype(d)?,
                    _ => crate::DType::I64,
                };
                Ok(call(py, $tf, || format!("{axis:?},{dt:?}"), &x, move |x| $f(x, axis, dt))?.into())
            }
        )*};
    }
    py_arg! {
        /// Index of the largest value along ``axis`` (0 by default), int64 unless ``output_type``
        /// says otherwise. TF equivalent: ``tf.math.argmax``.
        ///
        /// >>> print(gt.argmax(gt.constant([[1.0, 5.0], [3.0, 4.0]]), axis=1))
        /// gt.Tensor([1 1], shape=(2,), dtype=int64)
        argmax => ops::argmax as "ArgMax",
        /// Index of the smallest value along ``axis`` (0 by default), int64 unless ``output_type``
        /// says otherwise. TF equivalent: ``tf.math.argmin``.
        ///
        /// >>> print(gt.argmin(gt.constant([[1.0, 5.0], [3.0, 4.0]]), axis=1))
        /// gt.Tensor([0 0], shape=(2,), dtype=int64)
        argmin => ops::argmin as "ArgMin",
    }

    py_reduce! {
        /// Variance over ``axis`` (all axes by default); real for complex inputs.
        /// TF equivalent: ``tf.math.reduce_variance``.
        ///
        /// >>> float(gt.math.reduce_variance(gt.constant([1.0, 2.0, 3.0, 4.0])))
        /// 1.25
        reduce_variance => ops::reduce_variance as "ReduceVariance",
        /// Standard deviation over ``axis`` (all axes by default). TF equivalent:
        /// ``tf.math.reduce_std``.
        ///
        /// >>> print(f"{float(gt.math.reduce_std(gt.constant([1.0, 3.0]))):.6f}")
        /// 1.000000
        reduce_std => ops::reduce_std as "ReduceStd",
        /// ``log(sum(exp(x)))`` over ``axis``, computed stably. TF equivalent:
        /// ``tf.math.reduce_logsumexp``.
        ///
        /// >>> print(f"{float(gt.math.reduce_logsumexp(gt.constant([0.0, 0.0]))):.6f}")
        /// 0.693147
        reduce_logsumexp => ops::reduce_logsumexp as "ReduceLogSumExp",
        /// Logical or of a bool tensor over ``axis`` (``False`` over no elements).
        /// TF equivalent: ``tf.math.reduce_any``.
        ///
        /// >>> bool(gt.math.reduce_any(gt.constant([False, True])))
        /// True
        reduce_any => ops::reduce_any as "Any",
        /// Logical and of a bool tensor over ``axis`` (``True`` over no elements).
        /// TF equivalent: ``tf.math.reduce_all``.
        ///
        /// >>> bool(gt.math.reduce_all(gt.constant([False, True])))
        /// False
        reduce_all => ops::reduce_all as "All",
    }

    expose! {
        fn reduce_sum in [gt, math]: "(input_tensor: TensorLike, axis: AxisLike | None = None, keepdims: _bool = False, name: str | None = None) -> Tensor";
        fn reduce_mean in [gt, math]: "(input_tensor: TensorLike, axis: AxisLike | None = None, keepdims: _bool = False, name: str | None = None) -> Tensor";
        fn reduce_max in [gt, math]: "(input_tensor: TensorLike, axis: AxisLike | None = None, keepdims: _bool = False, name: str | None = None) -> Tensor";
        fn reduce_min in [gt, math]: "(input_tensor: TensorLike, axis: AxisLike | None = None, keepdims: _bool = False, name: str | None = None) -> Tensor";
        fn reduce_prod in [gt, math]: "(input_tensor: TensorLike, axis: AxisLike | None = None, keepdims: _bool = False, name: str | None = None) -> Tensor";
        fn cumsum in [gt, math]: "(x: TensorLike, axis: int = 0, exclusive: _bool = False, reverse: _bool = False, name: str | None = None) -> Tensor";
        fn cumprod in [gt, math]: "(x: TensorLike, axis: int = 0, exclusive: _bool = False, reverse: _bool = False, name: str | None = None) -> Tensor";
        fn argmax in [gt, math]: "(input: TensorLike, axis: int | None = None, output_type: DTypeLike | None = None, name: str | None = None) -> Tensor";
        fn argmin in [gt, math]: "(input: TensorLike, axis: int | None = None, output_type: DTypeLike | None = None, name: str | None = None) -> Tensor";
        fn reduce_variance in [gt, math]: "(input_tensor: TensorLike, axis: AxisLike | None = None, keepdims: _bool = False, name: str | None = None) -> Tensor";
        fn reduce_std in [gt, math]: "(input_tensor: TensorLike, axis: AxisLike | None = None, keepdims: _bool = False, name: str | None = None) -> Tensor";
        fn reduce_logsumexp in [gt, math]: "(input_tensor: TensorLike, axis: AxisLike | None = None, keepdims: _bool = False, name: str | None = None) -> Tensor";
        fn reduce_any in [gt, math]: "(input_tensor: TensorLike, axis: AxisLike | None = None, keepdims: _bool = False, name: str | None = None) -> Tensor";
        fn reduce_all in [gt, math]: "(input_tensor: TensorLike, axis: AxisLike | None = None, keepdims: _bool = False, name: str | None = None) -> Tensor";
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testutil::t64;

    #[test]
    fn argmax_and_argmin_take_the_first_extreme() {
        let x = t64(&[1., 5., 3., 7., 2., 7.], &[2, 3]);
        let a0 = argmax(&x, None, DType::I64).unwrap();
        assert_eq!(a0.to_vec::<i64>().unwrap(), vec![1, 0, 1]);
        let a1 = argmax(&x, Some(-1), DType::I32).unwrap();
        assert_eq!(a1.to_vec::<i32>().unwrap(), vec![1, 0]);
        let m1 = argmin(&x, Some(1), DType::I64).unwrap();
        assert_eq!(m1.to_vec::<i64>().unwrap(), vec![0, 1]);
        assert!(argmax(&x, Some(2), DType::I64).is_err());
        assert!(argmax(&x, None, DType::F32).is_err());
        assert!(argmax(&Tensor::scalar(1.0f32), None, DType::I64).is_err());
    }
    #[test]
    fn moments_match_numpy() {
        use crate::ops::testutil::{close, grad, grad2, vals};
        let x = t64(&[1., 2., 3., 4., 0., -2.], &[2, 3]);
        close(
            &vals(&reduce_variance(&x, None, false).unwrap()),
            &[3.888888888888889],
        );
        let v0 = reduce_variance(&x, Some(&[0]), true).unwrap();
        assert_eq!(v0.shape(), &[1, 3]);
        close(&vals(&v0), &[2.25, 1.0, 6.25]);
        close(
            &vals(&reduce_std(&x, Some(&[-1]), false).unwrap()),
            &[0.816496580927726, 2.494438257849294],
        );
        // d var / dx = 2 (x - mean) / n; its derivative 2 (1 - 1/n) / n per element.
        let v = t64(&[1., 2., 3., 4.], &[4]);
        close(
            &grad(&v, None, |x| reduce_variance(x, None, false).unwrap()),
            &[-0.75, -0.25, 0.25, 0.75],
        );
        // The rows of the Hessian 2/n (I - 1/n) sum to zero.
        close(
            &grad2(&v, |x| reduce_variance(x, None, false).unwrap()),
            &[0.0; 4],
        );
        // Complex: the mean of |x - mean|², real.
        let c = crate::ops::complex(&t64(&[1., 3.], &[2]), &t64(&[1., -1.], &[2])).unwrap();
        let vc = reduce_variance(&c, None, false).unwrap();
        assert_eq!(vc.dtype(), DType::F64);
        close(&vals(&vc), &[2.0]);
        assert!(matches!(
            reduce_variance(&crate::ops::testutil::ti(&[1, 2], &[2]), None, false),
            Err(Error::DType { .. })
        ));
        assert!(reduce_std(&x, Some(&[2]), false).is_err());
    }

    #[test]
    fn logsumexp_is_stable_and_its_gradient_is_softmax() {
        use crate::ops::testutil::{close, grad, vals};
        let x = t64(&[1000., 1000., 0., 1.], &[2, 2]);
        let l2 = 2f64.ln();
        close(
            &vals(&reduce_logsumexp(&x, Some(&[1]), false).unwrap()),
            &[1000. + l2, 1. + (1. + (-1f64).exp()).ln()],
        );
        let k = reduce_logsumexp(&x, Some(&[1]), true).unwrap();
        assert_eq!(k.shape(), &[2, 1]);
        let all = reduce_logsumexp(&t64(&[0., 0.], &[2]), None, false).unwrap();
        assert_eq!(all.shape(), &[] as &[usize]);
        close(&vals(&all), &[l2]);
        // A row of -inf gives -inf (TF shifts by 0 there), not NaN.
        let ninf = t64(&[f64::NEG_INFINITY; 2], &[2]);
        assert_eq!(
            vals(&reduce_logsumexp(&ninf, None, false).unwrap()),
            vec![f64::NEG_INFINITY]
        );
        let v = t64(&[0., 1., 2.], &[3]);
        let s: f64 = [0f64, 1., 2.].iter().map(|v| v.exp()).sum();
        close(
            &grad(&v, None, |x| reduce_logsumexp(x, None, false).unwrap()),
            &[1. / s, 1f64.exp() / s, 2f64.exp() / s],
        );
    }

    #[test]
    fn any_and_all() {
        let b = Tensor::from_vec(vec![true, false, false, false], &[2, 2]).unwrap();
        let a1 = reduce_any(&b, Some(&[1]), false).unwrap();
        assert_eq!(a1.to_vec::<bool>().unwrap(), vec![true, false]);
        let l0 = reduce_all(&b, Some(&[0]), true).unwrap();
        assert_eq!(l0.shape(), &[1, 2]);
        assert_eq!(l0.to_vec::<bool>().unwrap(), vec![false, false]);
        assert_eq!(
            reduce_all(&b, None, false)
                .unwrap()
                .to_vec::<bool>()
                .unwrap(),
            vec![false]
        );
        // Over no elements: any is false, all is true (TF's identities).
        let e = Tensor::from_vec(Vec::<bool>::new(), &[0]).unwrap();
        assert_eq!(
            reduce_any(&e, None, false)
                .unwrap()
                .to_vec::<bool>()
                .unwrap(),
            vec![false]
        );
        assert_eq!(
            reduce_all(&e, None, false)
                .unwrap()
                .to_vec::<bool>()
                .unwrap(),
            vec![true]
        );
        assert!(matches!(
            reduce_any(&t64(&[1.], &[1]), None, false),
            Err(Error::DType { .. })
        ));
        assert!(reduce_all(&b, Some(&[2]), false).is_err());
    }
}
