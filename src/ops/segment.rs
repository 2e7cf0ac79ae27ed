//! Segment reductions (`tf.math.segment_*`, `tf.math.unsorted_segment_*`) and the
//! indices of `tf.math.top_k`.
//!
//! The sums are the scatter-add primitive (`remap::scatter_rows`, a gather's adjoint),
//! so their gradient is TF's: the incoming gradient gathered back to each row (rows
//! with a negative id, dropped by the unsorted ops, get 0). Means and `sqrt_n` divide
//! the sums by per-segment constants (TF composes `unsorted_segment_mean` the same way;
//! `SegmentMean`'s own gradient is the same gather of `dy / count`).

use super::{grads, Grads, Op, Saves, VjpCx};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::index::index_values;
use crate::ops::remap::scatter_rows;
use crate::ops::{cast, divide, gather, multiply, reshape};
use crate::tensor::Tensor;

/// The ids (checked to be a prefix of `data`'s shape) as a flat list.
fn segment_ids(op: &'static str, data: &Tensor, ids: &Tensor) -> Result<Vec<i64>> {
    let idv = index_values(op, ids, &[DType::I16])?;
    let (ds, is) = (data.shape(), ids.shape());
    if is.len() > ds.len() || ds[..is.len()] != *is {
        return Err(Error::invalid(
            op,
            format!("segment_ids.shape = {is:?} does not prefix data.shape = {ds:?}"),
        ));
    }
    Ok(idv)
}

/// Sums of `data`'s rows (its shape after `ids`' axes) by id into `n` segments; negative
/// ids are dropped (TF's unsorted ops), ids of `n` or more are an error.
fn segment_sum_impl(
    op: &'static str,
    data: &Tensor,
    ids: &[i64],
    id_rank: usize,
    n: usize,
) -> Result<Tensor> {
    if let Some((i, &bad)) = ids.iter().enumerate().find(|(_, &v)| v >= n as i64) {
        return Err(Error::invalid(
            op,
            format!("segment_ids[{i}] = {bad} is out of range [0, {n})"),
        ));
    }
    let rest = &data.shape()[id_rank..];
    let mut flat = vec![ids.len()];
    flat.extend_from_slice(rest);
    let rows = reshape(data, &flat)?;
    let mut dense = vec![n];
    dense.extend_from_slice(rest);
    crate::size::check_shape(op, &dense, data.dtype())?;
    // The per-segment tables below are `n` long even when the output is empty.
    crate::size::check_shape(op, &[n], DType::F64)?;
    if ids.iter().all(|&v| v >= 0) {
        return scatter_rows(&rows, ids, &dense, 0);
    }
    let keep: Vec<i64> = (0..ids.len() as i64)
        .filter(|&i| ids[i as usize] >= 0)
        .collect();
    let kept_ids: Vec<i64> = keep.iter().map(|&i| ids[i as usize]).collect();
    let at = Tensor::from_vec(keep.clone(), &[keep.len()])?;
    let kept = gather(&rows, &at, Some(0), 0)?;
    scatter_rows(&kept, &kept_ids, &dense, 0)
}

/// Per segment, how many ids name it (negative ids counted nowhere).
fn counts(ids: &[i64], n: usize) -> Result<Vec<f64>> {
    let mut c = crate::size::try_vec_filled("SegmentReduce", n, 0.0)?;
    for &v in ids {
        if v >= 0 && (v as usize) < n {
            c[v as usize] += 1.0;
        }
    }
    Ok(c)
}

/// The sums divided by `f(count)` of each segment (empty segments: by 1, so 0).
fn scaled(sums: &Tensor, ids: &[i64], n: usize, f: fn(f64) -> f64) -> Result<Tensor> {
    let scale: Vec<f64> = counts(ids, n)?.into_iter().map(|c| f(c.max(1.0))).collect();
    let mut shape = vec![n];
    shape.extend(std::iter::repeat_n(1, sums.ndim().saturating_sub(1)));
    let dt = sums.dtype();
    if dt.is_integer() {
        // TF's integer means divide and truncate.
        let q = divide(&cast(sums, DType::F64)?, &Tensor::from_vec(scale, &shape)?)?;
        return cast(&q, dt);
    }
    let s = cast(
        &Tensor::from_vec(scale.into_iter().map(|v| 1.0 / v).collect(), &shape)?,
        dt,
    )?;
    multiply(sums, &s)
}

/// Sums of `data`'s slices by segment id into `num_segments` segments (negative ids are
/// dropped). TF equivalent: `tf.math.unsorted_segment_sum`.
pub fn unsorted_segment_sum(data: &Tensor, ids: &Tensor, num_segments: usize) -> Result<Tensor> {
    const OP: &str = "UnsortedSegmentSum";
    let idv = segment_ids(OP, data, ids)?;
    segment_sum_impl(OP, data, &idv, ids.ndim(), num_segments)
}

/// Means by segment (0 for an empty one). TF equivalent: `tf.math.unsorted_segment_mean`.
pub fn unsorted_segment_mean(data: &Tensor, ids: &Tensor, num_segments: usize) -> Result<Tensor> {
    const OP: &str = "UnsortedSegmentMean";
    let idv = segment_ids(OP, data, ids)?;
    let s = segment_sum_impl(OP, data, &idv, ids.ndim(), num_segments)?;
    scaled(&s, &idv, num_segments, |c| c)
}

/// Sums by segment divided by the square root of the segment's size. TF equivalent:
/// `tf.math.unsorted_segment_sqrt_n`.
pub fn unsorted_segment_sqrt_n(data: &Tensor, ids: &Tensor, num_segments: usize) -> Result<Tensor> {
    const OP: &str = "UnsortedSegmentSqrtN";
    let idv = segment_ids(OP, data, ids)?;
    if data.dtype().is_integer() {
        return Err(Error::unsupported(OP, data.dtype()));
    }
    let s = segment_sum_impl(OP, data, &idv, ids.ndim(), num_segments)?;
    scaled(&s, &idv, num_segments, f64::sqrt)
}

/// Sorted ids (TF's `segment_*`): 1-D, non-negative and non-decreasing; the number of
/// segments is the last id + 1.
fn sorted_ids(op: &'static str, data: &Tensor, ids: &Tensor) -> Result<(Vec<i64>, usize)> {
    if ids.ndim() != 1 {
        return Err(Error::invalid(
            op,
            format!(
                "segment_ids should be a vector, got shape {:?}",
                ids.shape()
            ),
        ));
    }
    if data.ndim() == 0 || data.shape()[0] != ids.shape()[0] {
        return Err(Error::invalid(
            op,
            format!(
                "segment_ids should be the same size as dimension 0 of input, got {:?} and {:?}",
                ids.shape(),
                data.shape()
            ),
        ));
    }
    let idv = segment_ids(op, data, ids)?;
    if idv.iter().any(|&v| v < 0) {
        return Err(Error::invalid(op, "segment ids must be >= 0"));
    }
    if idv.windows(2).any(|w| w[1] < w[0]) {
        return Err(Error::invalid(op, "segment ids are not increasing"));
    }
    let n = idv.last().map_or(0, |&v| v as usize + 1);
    Ok((idv, n))
}

/// Sums by sorted segment id. TF equivalent: `tf.math.segment_sum`.
pub fn segment_sum(data: &Tensor, ids: &Tensor) -> Result<Tensor> {
    const OP: &str = "SegmentSum";
    let (idv, n) = sorted_ids(OP, data, ids)?;
    segment_sum_impl(OP, data, &idv, 1, n)
}

/// Means by sorted segment id (0 for an id that does not occur). TF equivalent:
/// `tf.math.segment_mean`.
pub fn segment_mean(data: &Tensor, ids: &Tensor) -> Result<Tensor> {
    const OP: &str = "SegmentMean";
    let (idv, n) = sorted_ids(OP, data, ids)?;
    let s = segment_sum_impl(OP, data, &idv, 1, n)?;
    scaled(&s, &idv, n, |c| c)
}

/// The positions of the `k` largest entries of each last-axis row of `x` (int32): by
/// value, descending, equal values by position (TF's order) when `sorted`, else in
/// position order (which TF's CPU kernel also leaves them in for small `k`... TF only
/// promises some order, so the ascending positions are as good as any).
/// The int32 positions that sort each last-axis row of `x` in descending order (ties
/// keep their order): [`top_k_indices`] of the whole row, whatever its length when it
/// runs (a traced sort of a `None`-length axis).
pub fn sort_indices(x: &Tensor) -> Result<Tensor> {
    let n = x.shape().last().copied().unwrap_or(0);
    top_k_indices(x, n, true)
}

pub fn top_k_indices(x: &Tensor, k: usize, sorted: bool) -> Result<Tensor> {
    const OP: &str = "TopKV2";
    if x.ndim() == 0 {
        return Err(Error::invalid(OP, "input must be at least rank 1"));
    }
    let n = *x.shape().last().unwrap_or(&0);
    if k > n {
        return Err(Error::invalid(
            OP,
            format!("input must have at least k columns. Had {n}, needed {k}"),
        ));
    }
    let rows = x.size().checked_div(n).unwrap_or(0);
    let mut shape = x.shape().to_vec();
    *shape.last_mut().expect("rank >= 1") = k;
    if rows == 0 || k == 0 {
        crate::size::check_shape(OP, &shape, DType::I32)?;
        return Tensor::from_vec(Vec::<i32>::new(), &shape);
    }
    let v: Vec<f64> = cast(x, DType::F64)?.to_vec::<f64>()?;
    let mut out: Vec<i32> = crate::size::try_vec(OP, rows * k)?;
    let mut order: Vec<usize> = crate::size::try_vec(OP, n)?;
    for r in 0..rows {
        let row = &v[r * n..(r + 1) * n];
        order.clear();
        order.extend(0..n);
        // Descending by value, ties (and NaNs, as the largest) by position.
        order.sort_by(|&a, &b| {
            let (p, q) = (row[a], row[b]);
            match (p.is_nan(), q.is_nan()) {
                (true, true) => a.cmp(&b),
                (true, false) => std::cmp::Ordering::Less,
                (false, true) => std::cmp::Ordering::Greater,
                _ => q
                    .partial_cmp(&p)
                    .unwrap_or(std::cmp::Ordering::Equal)
                    .then(a.cmp(&b)),
            }
        });
        let top = &mut order[..k];
        if !sorted {
            top.sort_unstable();
        }
        out.extend(top.iter().map(|&i| i as i32));
    }
    Tensor::from_vec(out, &shape)
}

/// Which reduction [`unsorted_segment_reduce`] and [`sorted_segment_reduce`] compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduce {
    /// The largest element (TF's `SegmentMax`).
    Max,
    /// The smallest element (TF's `SegmentMin`).
    Min,
    /// The product (TF's `SegmentProd`).
    Prod,
}

/// Lowest and highest values of an element type (TF's empty-segment fills).
trait Bounds: Copy {
    fn lowest() -> Self;
    fn highest() -> Self;
}
macro_rules! bounds {
    ($($t:ty),*) => {$(
        impl Bounds for $t {
            fn lowest() -> Self {
                <$t>::MIN
            }
            fn highest() -> Self {
                <$t>::MAX
            }
        }
    )*};
}
bounds!(f32, f64, i32, i64);

/// The reduction of `a`'s rows (`inner` elements each, row `r` to segment `ids[r]`;
/// negative ids dropped) into `n` segments by `combine`, starting from `init`; an empty
/// segment holds `empty` when given, else `init`.
fn segment_kernel<T: Copy + Send + Sync>(
    a: &ndarray::ArcArray<T, ndarray::IxDyn>,
    ids: &[i64],
    n: usize,
    inner: usize,
    init: T,
    combine: impl Fn(T, T) -> T,
    empty: Option<T>,
) -> Result<ndarray::ArrayD<T>> {
    let data = a.as_standard_layout();
    let flat = data
        .as_slice()
        .ok_or_else(|| Error::Internal("standard layout".into()))?;
    let len = crate::size::num_elements("SegmentReduce", &[n, inner])?;
    let mut out = crate::size::try_vec("SegmentReduce", len)?;
    out.resize(len, init);
    let mut seen = crate::size::try_vec_filled("SegmentReduce", n, false)?;
    for (r, &id) in ids.iter().enumerate() {
        if id < 0 {
            continue;
        }
        let (o, i) = (id as usize * inner, r * inner);
        seen[id as usize] = true;
        for j in 0..inner {
            out[o + j] = combine(out[o + j], flat[i + j]);
        }
    }
    if let Some(e) = empty {
        for (k, _) in seen.iter().enumerate().filter(|(_, s)| !**s) {
            out[k * inner..(k + 1) * inner].fill(e);
        }
    }
    ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[n, inner]), out)
        .map_err(|e| Error::Internal(format!("segment reduce: {e}")))
}

/// [`segment_kernel`] for an ordered element type: max, min or prod (TF's unsorted
/// fills: lowest, highest, 1).
fn segment_kernel_ordered<T>(
    a: &ndarray::ArcArray<T, ndarray::IxDyn>,
    ids: &[i64],
    n: usize,
    inner: usize,
    how: Reduce,
    empty: Option<T>,
) -> Result<ndarray::ArrayD<T>>
where
    T: Bounds + num_traits::One + PartialOrd + std::ops::Mul<Output = T> + Send + Sync,
{
    match how {
        Reduce::Max => segment_kernel(
            a,
            ids,
            n,
            inner,
            T::lowest(),
            |p, q| if q > p { q } else { p },
            empty,
        ),
        Reduce::Min => segment_kernel(
            a,
            ids,
            n,
            inner,
            T::highest(),
            |p, q| if q < p { q } else { p },
            empty,
        ),
        Reduce::Prod => segment_kernel(a, ids, n, inner, T::one(), |p, q| p * q, empty),
    }
}

/// `data` reduced by segment; `sorted` ids (TF's `segment_*`) fill an empty segment
/// with 0 (max, min) or 1 (prod), the unsorted ones with the lowest / highest value / 1.
fn segment_reduce(
    op: &'static str,
    data: &Tensor,
    ids: &Tensor,
    idv: Vec<i64>,
    n: usize,
    how: Reduce,
    sorted: bool,
) -> Result<Tensor> {
    if let Some((i, &bad)) = idv.iter().enumerate().find(|(_, &v)| v >= n as i64) {
        return Err(Error::invalid(
            op,
            format!("segment_ids[{i}] = {bad} is out of range [0, {n})"),
        ));
    }
    let rest = data.shape()[ids.ndim()..].to_vec();
    let inner: usize = rest.iter().product();
    let out = if data.dtype().is_complex() {
        // Complex numbers have no order: products only (TF registers no complex
        // segment max or min).
        if how != Reduce::Prod {
            return Err(Error::unsupported(op, data.dtype()));
        }
        Tensor::new(map_dtypes!(op, data.data(), [C64, C128], a => {
            segment_kernel(a, &idv, n, inner, num_traits::One::one(), |p, q| p * q, None)?
        }))
    } else {
        Tensor::new(
            map_dtypes!(op, data.data(), [F32, F64, I32, I64] via [F16], a => {
                let empty = (sorted && how != Reduce::Prod).then(num_traits::Zero::zero);
                segment_kernel_ordered(a, &idv, n, inner, how, empty)?
            }),
        )
    };
    let mut shape = vec![n];
    shape.extend_from_slice(&rest);
    let out = reshape(&out, &shape)?.fresh();
    crate::ops::record(
        SegmentReduce {
            name: op,
            how,
            ids: ids.clone(),
            idv: std::sync::Arc::new(idv),
            n,
        },
        &[data],
        &[&out],
    )?;
    Ok(out)
}

/// A segment max, min or prod. Gradients (TF's `_UnsortedSegmentMinOrMaxGrad` and
/// `_UnsortedSegmentProdGrad`, which the sorted ops share): max/min send each
/// segment's gradient to the rows equal to its result, split evenly between ties;
/// prod sends `dy * prod / x` to each row, with the product of the other rows where
/// `x` is the segment's one zero, and 0 where a segment has more than one zero.
struct SegmentReduce {
    name: &'static str,
    how: Reduce,
    ids: Tensor,
    idv: std::sync::Arc<Vec<i64>>,
    n: usize,
}
impl Op for SegmentReduce {
    fn name(&self) -> &'static str {
        self.name
    }
    fn batched(&self) -> bool {
        true
    }
    fn saves(&self) -> Saves {
        Saves::INPUTS_AND_OUTPUT
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        use crate::ops::{equal, greater, logical_and, ones_like, where_, zeros_like};
        let (x, y, dy) = (cx.input(0)?, cx.output(0)?, &dys[0]);
        let b = cx.batch();
        let r = self.ids.ndim();
        // The ids with the dropped (negative) ones at 0, and where they were kept, shaped
        // to broadcast against `x`.
        let clipped: Vec<i64> = self.idv.iter().map(|&v| v.max(0)).collect();
        let at = Tensor::from_vec(clipped, self.ids.shape())?;
        let mut keep_shape = self.ids.shape().to_vec();
        keep_shape.extend(std::iter::repeat_n(1, x.ndim() - r));
        let keep = Tensor::from_vec(
            self.idv.iter().map(|&v| v >= 0).collect::<Vec<bool>>(),
            &keep_shape,
        )?;
        // gather(t, ids) along axis `axis` (t's segment axis), zero at the dropped rows.
        let gather_kept = |t: &Tensor, axis: usize| -> Result<Tensor> {
            let g = gather(t, &at, Some(axis as isize), 0)?;
            where_(&keep, &g, &zeros_like(&g)?)
        };
        let sum_by = |t: &Tensor| segment_sum_impl(self.name, t, &self.idv, r, self.n);
        let g = match self.how {
            Reduce::Max | Reduce::Min => {
                let sel = logical_and(&equal(x, &gather(y, &at, Some(0), 0)?)?, &keep)?;
                let self_f = cast(&sel, x.dtype())?;
                // An empty segment's count (0) is never gathered back: 1 there keeps the
                // division (and forward mode's transpose of it) finite.
                let count = sum_by(&self_f)?;
                let count = crate::ops::maximum(&count, &ones_like(&count)?)?;
                let w = divide(dy, &count)?;
                let gw = gather_kept(&w, b)?;
                where_(&sel, &gw, &zeros_like(&gw)?)?
            }
            Reduce::Prod => {
                // TF's formula, for complex data too: `dy * prod / x`, not conjugated
                // (TF's `_UnsortedSegmentProdGrad` has no `conj`).
                let zero = equal(x, &zeros_like(x)?)?;
                let zeros = sum_by(&cast(&zero, DType::I32)?)?;
                let one = Tensor::from_vec(vec![1i32], &[])?;
                let dy = where_(&greater(&zeros, &one)?, &zeros_like(dy)?, dy)?;
                let nonzero = where_(&zero, &ones_like(x)?, x)?;
                let nz_prod = segment_reduce(
                    self.name,
                    &nonzero,
                    &self.ids,
                    (*self.idv).clone(),
                    self.n,
                    Reduce::Prod,
                    false,
                )?;
                let by_el = divide(&gather(y, &at, Some(0), 0)?, &nonzero)?;
                let partial = where_(&zero, &gather(&nz_prod, &at, Some(0), 0)?, &by_el)?;
                multiply(&gather_kept(&dy, b)?, &partial)?
            }
        };
        Ok(grads![Some(g)])
    }
}

/// Reduces `data` by unsorted segment id (`how`: max, min or prod).
pub fn unsorted_segment_reduce(
    data: &Tensor,
    ids: &Tensor,
    num_segments: usize,
    how: Reduce,
) -> Result<Tensor> {
    let op = match how {
        Reduce::Max => "UnsortedSegmentMax",
        Reduce::Min => "UnsortedSegmentMin",
        Reduce::Prod => "UnsortedSegmentProd",
    };
    let idv = segment_ids(op, data, ids)?;
    segment_reduce(op, data, ids, idv, num_segments, how, false)
}

/// Reduces `data` by sorted segment id (`how`: max, min or prod).
pub fn sorted_segment_reduce(data: &Tensor, ids: &Tensor, how: Reduce) -> Result<Tensor> {
    let op = match how {
        Reduce::Max => "SegmentMax",
        Reduce::Min => "SegmentMin",
        Reduce::Prod => "SegmentProd",
    };
    let (idv, n) = sorted_ids(op, data, ids)?;
    segment_reduce(op, data, ids, idv, n, how, true)
}

/// `log(sum(exp(x)))` running along `axis` (TF's `exclusive` and `reverse` as in
/// `cumsum`), computed pairwise so that no term underflows. TF equivalent:
/// `tf.math.cumulative_logsumexp`.
pub fn cumulative_logsumexp(
    x: &Tensor,
    axis: isize,
    exclusive: bool,
    reverse: bool,
) -> Result<Tensor> {
    const OP: &str = "CumulativeLogsumexp";
    let ax = crate::broadcast::norm_axis(OP, axis, x.ndim())?;
    fn lae<T: num_traits::Float>(p: T, q: T) -> T {
        if p == T::neg_infinity() {
            return q;
        }
        if q == T::neg_infinity() {
            return p;
        }
        let (hi, lo) = if p > q { (p, q) } else { (q, p) };
        if hi == T::infinity() {
            return hi;
        }
        hi + (lo - hi).exp().ln_1p()
    }
    let out = Tensor::new(map_dtypes!(OP, x.data(), [F32, F64] via [F16], a => {
        crate::kernels::reduce::scan(a, ax, exclusive, reverse, num_traits::Float::neg_infinity(), lae)?
    }));
    crate::ops::record(
        CumLogSumExp {
            axis: ax,
            exclusive,
            reverse,
        },
        &[x],
        &[&out],
    )?;
    Ok(out)
}
struct CumLogSumExp {
    axis: usize,
    exclusive: bool,
    reverse: bool,
}
impl Op for CumLogSumExp {
    fn name(&self) -> &'static str {
        "CumulativeLogsumexp"
    }
    fn batched(&self) -> bool {
        true
    }
    fn saves(&self) -> Saves {
        Saves::INPUTS_AND_OUTPUT
    }
    /// TF's rule: the gradient's positive and negative parts go through the same
    /// running log-sum-exp in the other direction, in log space.
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        use crate::ops::{exp, greater, less, log, neg, subtract, where_};
        let (x, y, dy) = (cx.input(0)?, cx.output(0)?, &dys[0]);
        let lowest = crate::tensor::scalar_of(
            if dy.dtype() == DType::F64 {
                f64::MIN
            } else if dy.dtype() == DType::F16 {
                -65504.0
            } else {
                f32::MIN as f64
            },
            dy.dtype(),
        );
        let zero = crate::ops::zeros_like(dy)?;
        let pos = where_(&greater(dy, &zero)?, &log(dy)?, &lowest)?;
        let negl = where_(&less(dy, &zero)?, &log(&neg(dy)?)?, &lowest)?;
        let axis = (self.axis + cx.batch()) as isize;
        let part = |l: &Tensor| -> Result<Tensor> {
            let c = cumulative_logsumexp(&subtract(l, y)?, axis, self.exclusive, !self.reverse)?;
            exp(&crate::ops::add(&c, x)?)
        };
        Ok(grads![Some(subtract(&part(&pos)?, &part(&negl)?)?)])
    }
}

/// How traced segment and top-k nodes are saved (`saved_model::table`).
pub(super) mod saved {
    use crate::error::Result;
    use crate::graph::Forward;
    use crate::ops;
    use crate::saved_model::table::{get, one_out, Attrs, OpDef};

    pub(crate) const SAVED: &[OpDef] = &[
        OpDef::new("UnsortedSegmentSum", 2, &["num_segments"], unsorted_sum),
        OpDef::new("UnsortedSegmentMean", 2, &["num_segments"], unsorted_mean),
        OpDef::new(
            "UnsortedSegmentSqrtN",
            2,
            &["num_segments"],
            unsorted_sqrt_n,
        ),
        OpDef::new("SegmentSum", 2, &[], segment_sum),
        OpDef::new("SegmentMean", 2, &[], segment_mean),
        OpDef::new("TopKIndices", 1, &["k", "sorted"], top_k_indices),
        OpDef::new("SortIndices", 1, &[], sort_indices),
        OpDef::new("UnsortedSegmentMax", 2, &["num_segments"], unsorted_max),
        OpDef::new("UnsortedSegmentMin", 2, &["num_segments"], unsorted_min),
        OpDef::new("UnsortedSegmentProd", 2, &["num_segments"], unsorted_prod),
        OpDef::new("SegmentMax", 2, &[], sorted_max),
        OpDef::new("SegmentMin", 2, &[], sorted_min),
        OpDef::new("SegmentProd", 2, &[], sorted_prod),
        OpDef::new(
            "CumulativeLogsumexp",
            1,
            &["axis", "exclusive", "reverse"],
            cum_lse,
        ),
    ];

    fn unsorted(op: &str, a: &Attrs, how: ops::Reduce) -> Result<Forward> {
        let n: usize = get(op, a, "num_segments")?;
        Ok(one_out(move |xs| {
            ops::unsorted_segment_reduce(&xs[0], &xs[1], n, how)
        }))
    }
    fn unsorted_max(a: &Attrs, _: usize) -> Result<Forward> {
        unsorted("UnsortedSegmentMax", a, ops::Reduce::Max)
    }
    fn unsorted_min(a: &Attrs, _: usize) -> Result<Forward> {
        unsorted("UnsortedSegmentMin", a, ops::Reduce::Min)
    }
    fn unsorted_prod(a: &Attrs, _: usize) -> Result<Forward> {
        unsorted("UnsortedSegmentProd", a, ops::Reduce::Prod)
    }
    fn sorted_max(_: &Attrs, _: usize) -> Result<Forward> {
        Ok(one_out(|xs| {
            ops::sorted_segment_reduce(&xs[0], &xs[1], ops::Reduce::Max)
        }))
    }
    fn sorted_min(_: &Attrs, _: usize) -> Result<Forward> {
        Ok(one_out(|xs| {
            ops::sorted_segment_reduce(&xs[0], &xs[1], ops::Reduce::Min)
        }))
    }
    fn sorted_prod(_: &Attrs, _: usize) -> Result<Forward> {
        Ok(one_out(|xs| {
            ops::sorted_segment_reduce(&xs[0], &xs[1], ops::Reduce::Prod)
        }))
    }
    fn cum_lse(a: &Attrs, _: usize) -> Result<Forward> {
        let op = "CumulativeLogsumexp";
        let axis: isize = get(op, a, "axis")?;
        let (e, r): (bool, bool) = (get(op, a, "exclusive")?, get(op, a, "reverse")?);
        Ok(one_out(move |xs| {
            ops::cumulative_logsumexp(&xs[0], axis, e, r)
        }))
    }

    fn unsorted_sum(a: &Attrs, _: usize) -> Result<Forward> {
        let n: usize = get("UnsortedSegmentSum", a, "num_segments")?;
        Ok(one_out(move |xs| {
            ops::unsorted_segment_sum(&xs[0], &xs[1], n)
        }))
    }
    fn unsorted_mean(a: &Attrs, _: usize) -> Result<Forward> {
        let n: usize = get("UnsortedSegmentMean", a, "num_segments")?;
        Ok(one_out(move |xs| {
            ops::unsorted_segment_mean(&xs[0], &xs[1], n)
        }))
    }
    fn unsorted_sqrt_n(a: &Attrs, _: usize) -> Result<Forward> {
        let n: usize = get("UnsortedSegmentSqrtN", a, "num_segments")?;
        Ok(one_out(move |xs| {
            ops::unsorted_segment_sqrt_n(&xs[0], &xs[1], n)
        }))
    }
    fn segment_sum(_: &Attrs, _: usize) -> Result<Forward> {
        Ok(one_out(|xs| ops::segment_sum(&xs[0], &xs[1])))
    }
    fn segment_mean(_: &Attrs, _: usize) -> Result<Forward> {
        Ok(one_out(|xs| ops::segment_mean(&xs[0], &xs[1])))
    }
    fn sort_indices(_: &Attrs, _: usize) -> Result<Forward> {
        Ok(one_out(|xs| ops::sort_indices(&xs[0])))
    }
    fn top_k_indices(a: &Attrs, _: usize) -> Result<Forward> {
        let k: usize = get("TopKIndices", a, "k")?;
        let sorted: bool = get("TopKIndices", a, "sorted")?;
        Ok(one_out(move |xs| ops::top_k_indices(&xs[0], k, sorted)))
    }
}

/// The Python functions of this family (see `src/ops/README.md`).
#[cfg(feature = "python")]
pub(super) mod python {
    use crate::python::binding::*;

    fn segments(n: &Bound<'_, PyAny>) -> PyResult<usize> {
        let n = int_arg(n, "num_segments")?;
        usize::try_from(n).map_err(|_| {
            InvalidArgumentError::new_err(format!("num_segments must be non-negative, got {n}"))
        })
    }

    // The unsorted segment reductions' bindings: `(doc, name, TF op)` calls the op of
    // that name; with a `Reduce` kind, `unsorted_segment_reduce` of that kind.
    macro_rules! unsorted {
        ($(#[$doc:meta])* $f:ident, $tf:literal) => {
            unsorted!(@def $(#[$doc])* $f, $tf, |d, i, n| ops::$f(d, i, n));
        };
        ($(#[$doc:meta])* $f:ident, $tf:literal, $how:ident) => {
            unsorted!(@def $(#[$doc])* $f, $tf,
                |d, i, n| ops::unsorted_segment_reduce(d, i, n, ops::Reduce::$how));
        };
        (@def $(#[$doc:meta])* $f:ident, $tf:literal, |$d:ident, $i:ident, $n:ident| $op:expr) => {
            $(#[$doc])*
            #[pyfunction]
            #[pyo3(signature = (data, segment_ids, num_segments, name=None))]
            fn $f(
                py: Python<'_>,
                data: &Bound<'_, PyAny>,
                segment_ids: &Bound<'_, PyAny>,
                num_segments: &Bound<'_, PyAny>,
                name: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<PyTensor> {
                let _ = name;
                let d = to_tensor(data, None)?;
                let i = to_tensor(segment_ids, None)?;
                let count = segments(num_segments)?;
                let f = move |$d: &Tensor, $i: &Tensor| {
                    let $n = count;
                    $op
                };
                Ok(call2(py, $tf, || count.to_string(), &d, &i, f)?.into())
            }
        };
    }
    unsorted!(
        /// Sums of ``data``'s slices by ``segment_ids`` (a prefix of its shape) into
        /// ``num_segments`` segments; negative ids are dropped. TF equivalent:
        /// ``tf.math.unsorted_segment_sum``.
        ///
        /// >>> print(gt.math.unsorted_segment_sum(gt.constant([1.0, 2.0, 3.0]), [1, 0, 1], 2))
        /// gt.Tensor([2. 4.], shape=(2,), dtype=float32)
        unsorted_segment_sum, "UnsortedSegmentSum"
    );
    unsorted!(
        /// Means of ``data``'s slices by segment (0 for an empty segment). TF equivalent:
        /// ``tf.math.unsorted_segment_mean``.
        ///
        /// >>> print(gt.math.unsorted_segment_mean(gt.constant([1.0, 2.0, 3.0]), [1, 0, 1], 3))
        /// gt.Tensor([2. 2. 0.], shape=(3,), dtype=float32)
        unsorted_segment_mean, "UnsortedSegmentMean"
    );
    unsorted!(
        /// Sums by segment divided by the square root of each segment's size.
        /// TF equivalent: ``tf.math.unsorted_segment_sqrt_n``.
        ///
        /// >>> print(gt.math.unsorted_segment_sqrt_n(gt.constant([3.0, 1.0]), [0, 0], 1))
        /// gt.Tensor([2.828427], shape=(1,), dtype=float32)
        unsorted_segment_sqrt_n, "UnsortedSegmentSqrtN"
    );

    macro_rules! sorted {
        ($(#[$doc:meta])* $f:ident, $tf:literal) => {
            $(#[$doc])*
            #[pyfunction]
            #[pyo3(signature = (data, segment_ids, name=None))]
            fn $f(
                py: Python<'_>,
                data: &Bound<'_, PyAny>,
                segment_ids: &Bound<'_, PyAny>,
                name: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<PyTensor> {
                let _ = name;
                let d = to_tensor(data, None)?;
                let i = to_tensor(segment_ids, None)?;
                Ok(call2(py, $tf, String::new, &d, &i, ops::$f)?.into())
            }
        };
    }
    sorted!(
        /// Sums of ``data``'s rows by sorted ``segment_ids`` (1-D, non-decreasing).
        /// TF equivalent: ``tf.math.segment_sum``.
        ///
        /// >>> print(gt.math.segment_sum(gt.constant([1.0, 2.0, 3.0]), [0, 0, 2]))
        /// gt.Tensor([3. 0. 3.], shape=(3,), dtype=float32)
        segment_sum, "SegmentSum"
    );
    sorted!(
        /// Means of ``data``'s rows by sorted ``segment_ids`` (0 for an id that does not
        /// occur). TF equivalent: ``tf.math.segment_mean``.
        ///
        /// >>> print(gt.math.segment_mean(gt.constant([1.0, 2.0, 3.0]), [0, 0, 2]))
        /// gt.Tensor([1.5 0.  3. ], shape=(3,), dtype=float32)
        segment_mean, "SegmentMean"
    );

    /// The int32 positions of the ``k`` largest entries of each last-axis row of
    /// ``input`` (``gt.math.top_k`` gathers the values at them).
    ///
    /// >>> print(gt._gradtape._top_k_indices(gt.constant([1.0, 3.0, 2.0]), 2, True))
    /// gt.Tensor([1 2], shape=(2,), dtype=int32)
    #[pyfunction]
    #[pyo3(signature = (input, k, sorted))]
    fn _top_k_indices(
        py: Python<'_>,
        input: &Bound<'_, PyAny>,
        k: &Bound<'_, PyAny>,
        sorted: bool,
    ) -> PyResult<PyTensor> {
        let x = to_tensor(input, None)?;
        let k = int_arg(k, "k")?;
        let k = usize::try_from(k)
            .map_err(|_| InvalidArgumentError::new_err(format!("Need k >= 0, got {k}")))?;
        let f = move |x: &Tensor| ops::top_k_indices(x, k, sorted);
        Ok(call(py, "TopKIndices", || format!("{k},{sorted}"), &x, f)?.into())
    }

    /// The int32 positions that sort each last-axis row of ``input`` in descending
    /// order, ties in their order (the traced ``gt.sort`` / ``gt.argsort``): the whole
    /// row, whatever its length when the graph runs.
    ///
    /// >>> print(gt._gradtape._sort_indices(gt.constant([1.0, 3.0, 2.0])))
    /// gt.Tensor([1 2 0], shape=(3,), dtype=int32)
    #[pyfunction]
    #[pyo3(signature = (input))]
    fn _sort_indices(py: Python<'_>, input: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let x = to_tensor(input, None)?;
        Ok(call(py, "SortIndices", String::new, &x, ops::sort_indices)?.into())
    }

    unsorted!(
        /// Maxima of ``data``'s slices by segment (the dtype's lowest value for an empty
        /// segment); ties share the gradient. TF equivalent: ``tf.math.unsorted_segment_max``.
        ///
        /// >>> print(gt.math.unsorted_segment_max(gt.constant([1.0, 5.0, 3.0]), [1, 0, 1], 2))
        /// gt.Tensor([5. 3.], shape=(2,), dtype=float32)
        unsorted_segment_max, "UnsortedSegmentMax", Max
    );
    unsorted!(
        /// Minima of ``data``'s slices by segment (the dtype's highest value for an empty
        /// segment). TF equivalent: ``tf.math.unsorted_segment_min``.
        ///
        /// >>> print(gt.math.unsorted_segment_min(gt.constant([1.0, 5.0, 3.0]), [1, 0, 1], 2))
        /// gt.Tensor([5. 1.], shape=(2,), dtype=float32)
        unsorted_segment_min, "UnsortedSegmentMin", Min
    );
    unsorted!(
        /// Products of ``data``'s slices by segment (1 for an empty segment).
        /// TF equivalent: ``tf.math.unsorted_segment_prod``.
        ///
        /// >>> print(gt.math.unsorted_segment_prod(gt.constant([2.0, 5.0, 3.0]), [1, 0, 1], 2))
        /// gt.Tensor([5. 6.], shape=(2,), dtype=float32)
        unsorted_segment_prod, "UnsortedSegmentProd", Prod
    );

    macro_rules! reduce_sorted {
        ($(#[$doc:meta])* $f:ident, $tf:literal, $how:ident) => {
            $(#[$doc])*
            #[pyfunction]
            #[pyo3(signature = (data, segment_ids, name=None))]
            fn $f(
                py: Python<'_>,
                data: &Bound<'_, PyAny>,
                segment_ids: &Bound<'_, PyAny>,
                name: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<PyTensor> {
                let _ = name;
                let d = to_tensor(data, None)?;
                let i = to_tensor(segment_ids, None)?;
                let f = |d: &Tensor, i: &Tensor| ops::sorted_segment_reduce(d, i, ops::Reduce::$how);
                Ok(call2(py, $tf, String::new, &d, &i, f)?.into())
            }
        };
    }
    reduce_sorted!(
        /// Maxima of ``data``'s rows by sorted ``segment_ids`` (0 for an id that does not
        /// occur). TF equivalent: ``tf.math.segment_max``.
        ///
        /// >>> print(gt.math.segment_max(gt.constant([1.0, 5.0, 3.0]), [0, 0, 1]))
        /// gt.Tensor([5. 3.], shape=(2,), dtype=float32)
        segment_max, "SegmentMax", Max
    );
    reduce_sorted!(
        /// Minima of ``data``'s rows by sorted ``segment_ids`` (0 for an id that does not
        /// occur). TF equivalent: ``tf.math.segment_min``.
        ///
        /// >>> print(gt.math.segment_min(gt.constant([1.0, 5.0, 3.0]), [0, 0, 1]))
        /// gt.Tensor([1. 3.], shape=(2,), dtype=float32)
        segment_min, "SegmentMin", Min
    );
    reduce_sorted!(
        /// Products of ``data``'s rows by sorted ``segment_ids`` (1 for an id that does
        /// not occur). TF equivalent: ``tf.math.segment_prod``.
        ///
        /// >>> print(gt.math.segment_prod(gt.constant([2.0, 5.0, 3.0]), [0, 0, 1]))
        /// gt.Tensor([10.  3.], shape=(2,), dtype=float32)
        segment_prod, "SegmentProd", Prod
    );

    /// ``log(cumsum(exp(x)))`` along ``axis``, computed stably (``exclusive`` and
    /// ``reverse`` as in ``cumsum``). TF equivalent: ``tf.math.cumulative_logsumexp``.
    ///
    /// >>> print(gt.math.cumulative_logsumexp(gt.constant([0.0, 0.0, 0.0])))
    /// gt.Tensor([0.        0.6931472 1.0986123], shape=(3,), dtype=float32)
    #[pyfunction]
    #[pyo3(signature = (x, axis=0, exclusive=false, reverse=false, name=None))]
    fn cumulative_logsumexp(
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        axis: isize,
        exclusive: bool,
        reverse: bool,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let x = to_tensor(x, None)?;
        let f = move |x: &Tensor| ops::cumulative_logsumexp(x, axis, exclusive, reverse);
        Ok(call(
            py,
            "CumulativeLogsumexp",
            || format!("{axis},{exclusive},{reverse}"),
            &x,
            f,
        )?
        .into())
    }

    expose! {
        fn unsorted_segment_max in [math]: "(data: TensorLike, segment_ids: TensorLike, num_segments: int | Tensor, name: str | None = None) -> Tensor";
        fn unsorted_segment_min in [math]: "(data: TensorLike, segment_ids: TensorLike, num_segments: int | Tensor, name: str | None = None) -> Tensor";
        fn unsorted_segment_prod in [math]: "(data: TensorLike, segment_ids: TensorLike, num_segments: int | Tensor, name: str | None = None) -> Tensor";
        fn segment_max in [math]: "(data: TensorLike, segment_ids: TensorLike, name: str | None = None) -> Tensor";
        fn segment_min in [math]: "(data: TensorLike, segment_ids: TensorLike, name: str | None = None) -> Tensor";
        fn segment_prod in [math]: "(data: TensorLike, segment_ids: TensorLike, name: str | None = None) -> Tensor";
        fn cumulative_logsumexp in [math]: "(x: TensorLike, axis: int = 0, exclusive: _bool = False, reverse: _bool = False, name: str | None = None) -> Tensor";
        fn unsorted_segment_sum in [math]: "(data: TensorLike, segment_ids: TensorLike, num_segments: int | Tensor, name: str | None = None) -> Tensor";
        fn unsorted_segment_mean in [math]: "(data: TensorLike, segment_ids: TensorLike, num_segments: int | Tensor, name: str | None = None) -> Tensor";
        fn unsorted_segment_sqrt_n in [math]: "(data: TensorLike, segment_ids: TensorLike, num_segments: int | Tensor, name: str | None = None) -> Tensor";
        fn segment_sum in [math]: "(data: TensorLike, segment_ids: TensorLike, name: str | None = None) -> Tensor";
        fn segment_mean in [math]: "(data: TensorLike, segment_ids: TensorLike, name: str | None = None) -> Tensor";
        fn _top_k_indices in []: "(input: TensorLike, k: int | Tensor, sorted: _bool) -> Tensor";
        fn _sort_indices in []: "(input: TensorLike) -> Tensor";
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testutil::{close, grad, t64, vals};

    #[test]
    fn segment_sums_and_their_gradients() {
        let d = t64(&[1., 2., 3., 4.], &[4]);
        let ids = Tensor::from_vec(vec![0i32, -1, 2, 2], &[4]).unwrap();
        close(
            &vals(&unsorted_segment_sum(&d, &ids, 4).unwrap()),
            &[1., 0., 7., 0.],
        );
        close(
            &vals(&unsorted_segment_mean(&d, &ids, 4).unwrap()),
            &[1., 0., 3.5, 0.],
        );
        let w = t64(&[1., 10., 100., 1000.], &[4]);
        close(
            &grad(&d, Some(&w), |d| unsorted_segment_mean(d, &ids, 4).unwrap()),
            &[1., 0., 50., 50.],
        );
        let sorted = Tensor::from_vec(vec![0i32, 0, 2, 2], &[4]).unwrap();
        close(&vals(&segment_sum(&d, &sorted).unwrap()), &[3., 0., 7.]);
        let bad = Tensor::from_vec(vec![1i32, 0, 2, 2], &[4]).unwrap();
        assert!(segment_sum(&d, &bad).is_err());
        assert!(unsorted_segment_sum(&d, &ids, 2).is_err());
    }

    #[test]
    fn top_k_orders_ties_by_position() {
        let x = t64(&[1., 3., 2., 3.], &[4]);
        assert_eq!(
            top_k_indices(&x, 3, true).unwrap().to_vec::<i32>().unwrap(),
            vec![1, 3, 2]
        );
        assert_eq!(
            top_k_indices(&x, 3, false)
                .unwrap()
                .to_vec::<i32>()
                .unwrap(),
            vec![1, 2, 3]
        );
        assert!(top_k_indices(&x, 5, true).is_err());
    }
}
