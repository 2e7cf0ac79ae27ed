//! Reductions over a set of axes; scans (cumsum, cumprod) and arg-extremes (argmax,
//! argmin) along one axis.

use ndarray::{ArcArray, ArrayD, ArrayViewD, Axis, IxDyn, Zip};

use super::elementwise::to_standard;
use crate::error::{Error, Result};
use crate::size::{try_collect, try_full, try_uninit, try_vec_filled};

/// Folds `a` over `axes` (sorted, unique, in range) with `f`, starting from `init`.
/// With `keepdims` the reduced axes stay as size 1. `op` names the reduction in the
/// error for an output too large to hold (an empty input may reduce to a large one).
pub fn fold_axes<T, F>(
    op: &'static str,
    a: &ArcArray<T, IxDyn>,
    axes: &[usize],
    keepdims: bool,
    init: T,
    f: F,
) -> Result<ArrayD<T>>
where
    T: Copy + Send + Sync,
    F: Fn(T, T) -> T + Copy,
{
    let full = axes.len() == a.ndim();
    let out: ArrayD<T> = if full {
        let v = match a.as_slice() {
            Some(s) => s.iter().fold(init, |acc, &x| f(acc, x)),
            None => a.iter().fold(init, |acc, &x| f(acc, x)),
        };
        ArrayD::from_elem(IxDyn(&[]), v)
    } else if axes.is_empty() {
        to_standard(&a.view(), a.shape())?
    } else if a.is_empty() {
        // Nothing to fold: every output element is `init` (and the output may be
        // larger than any intermediate of the general path would allow).
        try_full(op, &reduced_shape(a.shape(), axes), init)?
    } else {
        // Highest axis first, so the axis numbers below stay valid; every
        // intermediate is smaller than the (non-empty) input.
        let mut cur: Option<ArrayD<T>> = None;
        for &ax in axes.iter().rev() {
            let next = {
                let v = match &cur {
                    Some(c) => c.view(),
                    None => a.view(),
                };
                let mut out = try_uninit::<T>(op, &reduced_shape(v.shape(), &[ax]))?;
                Zip::from(&mut out)
                    .and(v.lanes(Axis(ax)))
                    .for_each(|o, lane| {
                        o.write(lane.fold(init, |acc, &x| f(acc, x)));
                    });
                // SAFETY: the zip wrote every element.
                unsafe { out.assume_init() }
            };
            cur = Some(next);
        }
        cur.ok_or_else(|| Error::Internal("fold over no axes".into()))?
    };
    Ok(keep_dims(out, axes, keepdims))
}

/// `shape` without `axes` (sorted).
fn reduced_shape(shape: &[usize], axes: &[usize]) -> Vec<usize> {
    shape
        .iter()
        .enumerate()
        .filter(|(i, _)| !axes.contains(i))
        .map(|(_, &d)| d)
        .collect()
}

/// `out` with the reduced `axes` put back as size 1 when `keepdims`.
fn keep_dims<T>(mut out: ArrayD<T>, axes: &[usize], keepdims: bool) -> ArrayD<T> {
    if keepdims {
        for &ax in axes {
            out.insert_axis_inplace(Axis(ax));
        }
    }
    out
}

/// Sum over `axes`, using ndarray's unrolled (more accurate) summation along the
/// contiguous axis and row-by-row accumulation along the others (as ndarray's
/// `sum_axis`, with fallible allocation).
pub fn sum_axes<T>(a: &ArcArray<T, IxDyn>, axes: &[usize], keepdims: bool) -> Result<ArrayD<T>>
where
    T: Copy + num_traits::Zero + std::ops::Add<Output = T> + Send + Sync,
{
    if axes.is_empty() {
        // Reducing over no axes is the identity (TF: `reduce_sum(x, axis=[])`).
        return to_standard(&a.view(), a.shape());
    }
    let out: ArrayD<T> = if axes.len() == a.ndim() {
        ArrayD::from_elem(IxDyn(&[]), sum_all(a)?)
    } else if a.is_empty() {
        try_full("Sum", &reduced_shape(a.shape(), axes), T::zero())?
    } else if let (Some(s), true) = (a.as_slice(), axes.iter().enumerate().all(|(i, &x)| i == x)) {
        // The leading axes of a standard-layout array (a bias's gradient over the batch
        // and pixels): the sum of the rows of a [rows, cols] matrix.
        let shape = reduced_shape(a.shape(), axes);
        let cols = shape.iter().product::<usize>();
        crate::size::shaped("Sum", &shape, sum_rows(s, cols)?)?
    } else {
        let mut cur: Option<ArrayD<T>> = None;
        for &ax in axes.iter().rev() {
            let next = {
                let v = match &cur {
                    Some(c) => c.view(),
                    None => a.view(),
                };
                sum_axis(&v, ax)?
            };
            cur = Some(next);
        }
        cur.ok_or_else(|| Error::Internal("sum over no axes".into()))?
    };
    Ok(keep_dims(out, axes, keepdims))
}

/// Sum of `a` over one axis: lane sums when it is the axis of smallest stride,
/// otherwise the sub-arrays along it added up one by one (cache-friendly).
fn sum_axis<T>(a: &ArrayViewD<'_, T>, ax: usize) -> Result<ArrayD<T>>
where
    T: Copy + num_traits::Zero + std::ops::Add<Output = T> + Send + Sync,
{
    let shape = reduced_shape(a.shape(), &[ax]);
    let stride = |k: usize| a.strides()[k].unsigned_abs();
    let min_stride = (0..a.ndim())
        .filter(|&k| a.shape()[k] > 1)
        .map(stride)
        .min()
        .unwrap_or(0);
    if a.shape()[ax] <= 1 || stride(ax) <= min_stride {
        let mut out = try_uninit::<T>("Sum", &shape)?;
        Zip::from(&mut out)
            .and(a.lanes(Axis(ax)))
            .for_each(|o, lane| {
                o.write(lane.sum());
            });
        // SAFETY: the zip wrote every element.
        return Ok(unsafe { out.assume_init() });
    }
    let mut out = try_full("Sum", &shape, T::zero())?;
    for sub in a.axis_iter(Axis(ax)) {
        Zip::from(&mut out).and(&sub).for_each(|o, &x| *o = *o + x);
    }
    Ok(out)
}

/// The sum of the `cols`-element rows of `s` (not empty): blocks of rows summed into
/// their own accumulator row (in parallel for a large `s`), then the blocks' rows added.
fn sum_rows<T>(s: &[T], cols: usize) -> Result<Vec<T>>
where
    T: Copy + num_traits::Zero + std::ops::Add<Output = T> + Send + Sync,
{
    use super::elementwise::CHUNK;
    let rows = s.len() / cols;
    let block = if s.len() >= super::PAR_THRESHOLD {
        (CHUNK / cols).max(1)
    } else {
        rows
    };
    let blocks = rows.div_ceil(block);
    let mut partial = try_vec_filled("Sum", blocks * cols, T::zero())?;
    crate::pool::pieces(&mut partial, cols, |i, acc| {
        let end = ((i + 1) * block).min(rows);
        for row in s[i * block * cols..end * cols].chunks_exact(cols) {
            for (a, &v) in acc.iter_mut().zip(row) {
                *a = *a + v;
            }
        }
    });
    let (first, rest) = partial.split_at_mut(cols);
    for acc in rest.chunks_exact(cols) {
        for (a, &v) in first.iter_mut().zip(acc) {
            *a = *a + v;
        }
    }
    partial.truncate(cols);
    Ok(partial)
}

fn sum_all<T>(a: &ArcArray<T, IxDyn>) -> Result<T>
where
    T: Copy + num_traits::Zero + std::ops::Add<Output = T> + Send + Sync,
{
    if a.len() >= super::PAR_THRESHOLD {
        if let Some(s) = a.as_slice() {
            use super::elementwise::CHUNK;
            let mut partial = try_vec_filled("Sum", s.len().div_ceil(CHUNK), T::zero())?;
            crate::pool::pieces(&mut partial, 1, |i, p| {
                let c = &s[i * CHUNK..((i + 1) * CHUNK).min(s.len())];
                p[0] = ndarray::ArrayView1::from(c).sum();
            });
            return Ok(partial.into_iter().fold(T::zero(), |p, q| p + q));
        }
    }
    Ok(a.sum())
}

/// A running fold of `f` from `init` along `axis` (from its end when `reverse`) into a
/// standard-layout copy of `a`: element `i` holds the fold through `i`, or up to `i`
/// when `exclusive`. The kernel of cumsum and cumprod.
pub fn scan<T: Copy + Send + Sync>(
    a: &ArcArray<T, IxDyn>,
    axis: usize,
    exclusive: bool,
    reverse: bool,
    init: T,
    f: impl Fn(T, T) -> T,
) -> Result<ArrayD<T>> {
    let mut out = to_standard(&a.view(), a.shape())?;
    if out.is_empty() {
        // No lane to scan (and there may be 2**62 empty ones).
        return Ok(out);
    }
    for mut lane in out.lanes_mut(Axis(axis)) {
        let n = lane.len();
        let mut acc = init;
        for k in 0..n {
            let i = if reverse { n - 1 - k } else { k };
            let v = lane[i];
            if exclusive {
                lane[i] = acc;
                acc = f(acc, v);
            } else {
                acc = f(acc, v);
                lane[i] = acc;
            }
        }
    }
    Ok(out)
}

/// Position of the first largest (`max`) or smallest element of every lane of `a`
/// along `axis` (not empty), in lane order. Plain comparisons, so a NaN is never
/// preferred over an earlier element (Eigen's reducer, which TF uses).
pub fn arg_extreme_lanes<T: Copy + PartialOrd>(
    op: &'static str,
    a: &ArcArray<T, IxDyn>,
    axis: usize,
    max: bool,
) -> Result<Vec<i64>> {
    let lanes = a.lanes(Axis(axis));
    let n = a.len() / a.shape()[axis];
    try_collect(
        op,
        n,
        lanes.into_iter().map(|lane| {
            let mut best = 0usize;
            for (i, &q) in lane.iter().enumerate() {
                let p = lane[best];
                if (max && q > p) || (!max && q < p) {
                    best = i;
                }
            }
            best as i64
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_over_leading_axes_match_the_axis_by_axis_sums() {
        // Large enough for several blocks of rows summed in parallel.
        let a = ndarray::ArrayD::from_shape_fn(IxDyn(&[9, 37, 41, 5]), |ix| {
            ((ix[0] * 7 + ix[1] * 3 + ix[2]) % 11) as f64 + ix[3] as f64 * 0.25
        })
        .into_shared();
        for axes in [&[0][..], &[0, 1], &[0, 1, 2], &[1, 2], &[0, 2]] {
            let got = sum_axes(&a, axes, false).unwrap();
            let mut want = a.to_owned();
            for &ax in axes.iter().rev() {
                want = want.sum_axis(Axis(ax));
            }
            assert_eq!(got, want, "axes {axes:?}");
        }
        let kept = sum_axes(&a, &[0, 1], true).unwrap();
        assert_eq!(kept.shape(), &[1, 1, 41, 5]);
    }
}
