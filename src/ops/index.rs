//! Indexing: `x[...]` (TF's strided slice) and its gradient, a scatter into zeros.

use ndarray::{IxDyn, SliceInfo, SliceInfoElem};

use super::{grads, record, unary_out, Grads, Op, Saves, VjpCx};
use crate::error::{Error, Result};
use crate::kernels::elementwise::to_standard;
use crate::kernels::fill::set_one_hot;
use crate::size::{check_shape, try_collect, try_full};
use crate::tensor::{Data, Tensor};

/// One entry of an index expression, with Python's meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Index {
    /// `x[i]`: selects one position and drops the axis (negative counts from the end).
    Int(isize),
    /// `x[start:stop:step]`.
    Slice {
        start: Option<isize>,
        stop: Option<isize>,
        step: isize,
    },
    /// `x[None]` / `x[np.newaxis]`: inserts a size-1 axis.
    NewAxis,
    /// `x[...]`: as many full slices as needed.
    Ellipsis,
}

/// Python's `slice.indices` followed by conversion to ndarray's convention
/// (ndarray slices `start..end` first, then steps from the end when `step < 0`).
/// Any `isize` bounds and step are valid (`x[::2**63-1]` takes the first element);
/// no arithmetic here can overflow.
fn slice_elem(start: Option<isize>, stop: Option<isize>, step: isize, len: usize) -> SliceInfoElem {
    // A dimension of an existing array: at most isize::MAX.
    let n = len as isize;
    // `first` is the first position taken, `count` how many are taken.
    let (first, count) = if step > 0 {
        let clamp = |v: isize| {
            if v < 0 {
                v.saturating_add(n).max(0)
            } else {
                v.min(n)
            }
        };
        let s = start.map_or(0, clamp);
        let e = stop.map_or(n, clamp);
        // 0 <= s < e <= n: e - s - 1 cannot overflow; so is the quotient + 1 <= n.
        (
            s,
            if e > s {
                (e - s - 1) as usize / step as usize + 1
            } else {
                0
            },
        )
    } else {
        let clamp = |v: isize| {
            if v < 0 {
                v.saturating_add(n).max(-1)
            } else {
                v.min(n - 1)
            }
        };
        let s = start.map_or(n - 1, clamp);
        let e = stop.map_or(-1, clamp);
        // -1 <= e < s <= n - 1: s - e - 1 fits; `unsigned_abs` holds isize::MIN.
        (
            s,
            if s > e {
                (s - e - 1) as usize / step.unsigned_abs() + 1
            } else {
                0
            },
        )
    };
    if count == 0 {
        return SliceInfoElem::Slice {
            start: 0,
            end: Some(0),
            step: 1,
        };
    }
    if count == 1 {
        // One position: the step does not matter (and may be too large for ndarray).
        return SliceInfoElem::Slice {
            start: first,
            end: Some(first + 1),
            step: 1,
        };
    }
    // Two or more positions: |step| * (count - 1) < n, so these stay in 0..n.
    let span = step * (count - 1) as isize;
    if step > 0 {
        SliceInfoElem::Slice {
            start: first,
            end: Some(first + span + 1),
            step,
        }
    } else {
        SliceInfoElem::Slice {
            start: first + span,
            end: Some(first + 1),
            step,
        }
    }
}

/// Resolves an index expression against `shape` into ndarray slice elements.
fn resolve(index: &[Index], shape: &[usize]) -> Result<Vec<SliceInfoElem>> {
    let consumed = index
        .iter()
        .filter(|i| matches!(i, Index::Int(_) | Index::Slice { .. }))
        .count();
    let ellipses = index
        .iter()
        .filter(|i| matches!(i, Index::Ellipsis))
        .count();
    if ellipses > 1 {
        return Err(Error::invalid(
            "StridedSlice",
            "an index can only have a single ellipsis ('...')",
        ));
    }
    if consumed > shape.len() {
        return Err(Error::invalid(
            "StridedSlice",
            format!(
                "too many indices: the tensor has rank {} but {} were given",
                shape.len(),
                consumed
            ),
        ));
    }
    let mut out = Vec::with_capacity(shape.len() + 2);
    let mut axis = 0;
    for it in index {
        match *it {
            Index::Int(i) => {
                let n = shape[axis] as isize;
                let j = if i < 0 { i.saturating_add(n) } else { i };
                if j < 0 || j >= n {
                    return Err(Error::invalid(
                        "StridedSlice",
                        format!("slice index {i} of dimension {axis} out of bounds."),
                    ));
                }
                out.push(SliceInfoElem::Index(j));
                axis += 1;
            }
            Index::Slice { start, stop, step } => {
                if step == 0 {
                    return Err(Error::invalid("StridedSlice", "slice step cannot be zero"));
                }
                out.push(slice_elem(start, stop, step, shape[axis]));
                axis += 1;
            }
            Index::NewAxis => out.push(SliceInfoElem::NewAxis),
            Index::Ellipsis => {
                let k = shape.len() - consumed;
                for _ in 0..k {
                    out.push(SliceInfoElem::Slice {
                        start: 0,
                        end: None,
                        step: 1,
                    });
                    axis += 1;
                }
            }
        }
    }
    while axis < shape.len() {
        out.push(SliceInfoElem::Slice {
            start: 0,
            end: None,
            step: 1,
        });
        axis += 1;
    }
    Ok(out)
}

fn info(elems: &[SliceInfoElem]) -> Result<SliceInfo<Vec<SliceInfoElem>, IxDyn, IxDyn>> {
    SliceInfo::try_from(elems.to_vec())
        .map_err(|e| Error::Internal(format!("StridedSlice: slice info {elems:?}: {e}")))
}

/// A standard-layout copy of `x[si]`, allocated fallibly.
fn sliced<T: Copy + Send + Sync>(
    a: &ndarray::ArcArray<T, IxDyn>,
    si: &SliceInfo<Vec<SliceInfoElem>, IxDyn, IxDyn>,
) -> Result<ndarray::ArrayD<T>> {
    let v = a.slice(si);
    let shape = v.shape().to_vec();
    to_standard(&v, &shape)
}

/// `x[index]` with Python/numpy basic-indexing semantics. TF equivalent:
/// `tf.Tensor.__getitem__` (StridedSlice). Gradient: `dy` scattered into zeros.
pub fn strided_slice(x: &Tensor, index: &[Index]) -> Result<Tensor> {
    let elems = resolve(index, x.shape())?;
    let si = info(&elems)?;
    let out = Tensor::new(map_same!(x.data(), a => sliced(a, &si)?));
    record(StridedSlice { elems }, &[x], &[&out])?;
    Ok(out)
}
struct StridedSlice {
    elems: Vec<SliceInfoElem>,
}
impl Op for StridedSlice {
    fn name(&self) -> &'static str {
        "StridedSlice"
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn batched(&self) -> bool {
        true
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let shape = cx.batched(&dys[0], cx.input_shape(0));
        let elems = with_batch(&self.elems, cx.batch());
        Ok(grads![Some(slice_scatter(&dys[0], &shape, &elems)?)])
    }
}

/// Zeros of `shape` with `dy` written into the slice `elems` (the adjoint of
/// `strided_slice`). TF equivalent: `StridedSliceGrad`.
fn slice_scatter(dy: &Tensor, shape: &[usize], elems: &[SliceInfoElem]) -> Result<Tensor> {
    let si = info(elems)?;
    let out = Tensor::new(
        map_dtypes!("StridedSliceGrad", dy.data(), [F32, F64, C64, C128] via [F16], g => {
            let mut o = try_full("StridedSliceGrad", shape, num_traits::Zero::zero())?;
            let mut part = o.slice_mut(&si);
            if part.shape() != g.shape() {
                return Err(Error::shapes("StridedSliceGrad", part.shape(), g.shape()));
            }
            part.assign(g);
            o
        }),
    );
    unary_out(
        SliceScatter {
            elems: elems.to_vec(),
        },
        dy,
        out,
    )
}
struct SliceScatter {
    elems: Vec<SliceInfoElem>,
}
impl Op for SliceScatter {
    fn name(&self) -> &'static str {
        "StridedSliceGrad"
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn batched(&self) -> bool {
        true
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let elems = with_batch(&self.elems, cx.batch());
        let si = info(&elems)?;
        let out = Tensor::new(map_same!(dys[0].data(), a => sliced(a, &si)?));
        record(StridedSlice { elems }, &[&dys[0]], &[&out])?;
        Ok(grads![Some(out)])
    }
}

/// `elems` behind `batch` full slices (for batched gradients).
fn with_batch(elems: &[SliceInfoElem], batch: usize) -> Vec<SliceInfoElem> {
    let full = SliceInfoElem::Slice {
        start: 0,
        end: None,
        step: 1,
    };
    std::iter::repeat_n(full, batch)
        .chain(elems.iter().copied())
        .collect()
}

/// The values of an integer index tensor, as `i64`: int32 or int64, or one of the
/// narrow integer dtypes in `also` (TF: GatherV2 and GatherNd take int16 indices,
/// OneHot uint8 and int8 ones).
pub(super) fn index_values(
    op: &'static str,
    indices: &Tensor,
    also: &[crate::dtype::DType],
) -> Result<Vec<i64>> {
    use crate::tensor::Data;
    let wide;
    let data = if also.contains(&indices.dtype()) {
        wide = crate::ops::widen(indices.data())?;
        &wide
    } else {
        indices.data()
    };
    match data {
        Data::I32(a) => try_collect(op, a.len(), a.iter().map(|&v| v as i64)),
        Data::I64(a) => try_collect(op, a.len(), a.iter().copied()),
        _ => Err(Error::dtype(
            op,
            format!(
                "indices must be int32 or int64, got {}",
                indices.dtype().name()
            ),
        )),
    }
}

/// `gather` with `batch_dims != 0` (TF's checks and words): the batch axes and the
/// gathered axis of `params` are flattened into one axis of `B * n` rows, each index
/// offset by its example's `k * n`, gathered once, and the result put in TF's order
/// `params.shape[:axis] + indices.shape[b:] + params.shape[axis+1:]`.
fn gather_batched(
    params: &Tensor,
    indices: &Tensor,
    axis: Option<isize>,
    batch_dims: isize,
) -> Result<Tensor> {
    const OP: &str = "GatherV2";
    let (pr, ir) = (params.ndim() as isize, indices.ndim() as isize);
    if batch_dims < -ir || batch_dims > ir {
        return Err(Error::invalid(
            OP,
            format!(
                "Expected batch_dims in the range [{}, {ir}], but got {batch_dims}",
                -ir
            ),
        ));
    }
    let b = if batch_dims < 0 {
        batch_dims + ir
    } else {
        batch_dims
    };
    let ax = match axis {
        None => b,
        Some(a) if a < 0 => a + pr,
        Some(a) => a,
    };
    if b >= pr {
        return Err(Error::invalid(
            OP,
            format!("batch_dims ({b}) must be less than rank(params) ({pr})."),
        ));
    }
    if ax < b || ax >= pr {
        return Err(Error::invalid(
            OP,
            format!("batch_dims ({b}) must be less than or equal to axis ({ax})."),
        ));
    }
    let (b, ax) = (b as usize, ax as usize);
    let (ps, is) = (params.shape().to_vec(), indices.shape().to_vec());
    for i in 0..b {
        if ps[i] != is[i] {
            return Err(Error::invalid(
                OP,
                format!(
                    "params.shape[{i}]: {} should be equal to indices.shape[{i}]: {}",
                    ps[i], is[i]
                ),
            ));
        }
    }
    let n = ps[ax];
    let batch: usize = ps[..b].iter().product();
    let per: usize = is[b..].iter().product();
    let idx = index_values(OP, indices, &[crate::dtype::DType::I16])?;
    let mut flat = crate::size::try_vec(OP, idx.len())?;
    for (k, &v) in idx.iter().enumerate() {
        if v < 0 || v as u64 >= n as u64 {
            return Err(Error::invalid(
                OP,
                format!("indices[{k}] = {v} is not in [0, {n})"),
            ));
        }
        flat.push((k / per.max(1) * n) as i64 + v);
    }
    // params → (batch..., n, rest...) → (batch * n, rest...)
    let rest: Vec<usize> = (b..ps.len()).filter(|&d| d != ax).collect();
    let mut perm: Vec<usize> = (0..b).collect();
    perm.push(ax);
    perm.extend(&rest);
    let pt = crate::ops::transpose(params, Some(&perm))?;
    let mut rows_shape = vec![batch * n];
    rows_shape.extend(rest.iter().map(|&d| ps[d]));
    let rows = crate::ops::reshape(&pt, &rows_shape)?;
    let offsets = Tensor::from_vec(flat, &[idx.len()])?;
    let g = gather(&rows, &offsets, Some(0), 0)?;
    // g: (batch * per, rest...) → (batch..., I..., rest...) → TF's order.
    let mut g_shape: Vec<usize> = ps[..b].to_vec();
    g_shape.extend(&is[b..]);
    g_shape.extend(rest.iter().map(|&d| ps[d]));
    let g = crate::ops::reshape(&g, &g_shape)?;
    let (ni, lead) = (is.len() - b, ax - b);
    let mut out_perm: Vec<usize> = (0..b).collect();
    out_perm.extend((0..lead).map(|j| b + ni + j));
    out_perm.extend((0..ni).map(|j| b + j));
    out_perm.extend((lead..rest.len()).map(|j| b + ni + j));
    if out_perm.iter().enumerate().all(|(i, &p)| i == p) {
        return Ok(g);
    }
    crate::ops::transpose(&g, Some(&out_perm))
}

/// Slices of `params` along `axis` at `indices`. TF equivalent: `tf.gather`
/// (`axis=None` means `batch_dims`). Gradient: `dy` scatter-added into zeros of
/// `params`' shape (repeated indices accumulate). With `batch_dims = b > 0` the first
/// `b` axes of `params` and `indices` are a batch: example `k` gathers from its own
/// `params[k]` (composed of transpose, reshape and one gather, so differentiable).
pub fn gather(
    params: &Tensor,
    indices: &Tensor,
    axis: Option<isize>,
    batch_dims: isize,
) -> Result<Tensor> {
    if batch_dims != 0 {
        return gather_batched(params, indices, axis, batch_dims);
    }
    if params.ndim() == 0 {
        return Err(Error::invalid(
            "GatherV2",
            "params must be at least 1 dimensional",
        ));
    }
    let ax = crate::broadcast::norm_axis("GatherV2", axis.unwrap_or(0), params.ndim())?;
    let idx = index_values("GatherV2", indices, &[crate::dtype::DType::I16])?;
    let shape = params.shape();
    let n = shape[ax];
    if let Some((k, &v)) = idx
        .iter()
        .enumerate()
        .find(|(_, &v)| v < 0 || v as u64 >= n as u64)
    {
        return Err(Error::invalid(
            "GatherV2",
            format!("indices[{k}] = {v} is not in [0, {n})"),
        ));
    }
    if ax == 0 {
        let out_shape: Vec<usize> = indices.shape().iter().chain(&shape[1..]).copied().collect();
        let flat = crate::ops::reshape(indices, &[idx.len()])?;
        return gather_rows("GatherV2", params, idx, flat, out_shape);
    }
    // Products of params' own dims: they fit (an empty params may still have a huge
    // `outer` or `inner`, which the maps below never materialize for an empty output).
    let outer: usize = shape[..ax].iter().product();
    let inner: usize = shape[ax + 1..].iter().product();
    let p3 = crate::ops::reshape(params, &[outer, n, inner])?;
    let maps = crate::ops::AxisMaps::new(
        "GatherV2",
        params.dtype(),
        vec![outer, idx.len(), inner],
        |k, j| Some(if k == 1 { idx[j] as usize } else { j }),
    )?;
    let g = crate::ops::remap(&p3, maps, None, ("GatherV2", "UnsortedSegmentSum"))?;
    let out_shape: Vec<usize> = shape[..ax]
        .iter()
        .chain(indices.shape())
        .chain(&shape[ax + 1..])
        .copied()
        .collect();
    crate::ops::reshape(&g, &out_shape)
}

/// Rows `rows` (checked) of `params` as `out_shape`, recorded as one [`GatherRows`]
/// (TF's sparse gradient: `IndexedSlices` of `indices`, the 1-D indices).
fn gather_rows(
    name: &'static str,
    params: &Tensor,
    rows: Vec<i64>,
    indices: Tensor,
    out_shape: Vec<usize>,
) -> Result<Tensor> {
    let shape = params.shape().to_vec();
    let (n, inner) = (shape[0], shape[1..].iter().product::<usize>());
    let out = crate::tape::stack::suspended(|| -> Result<Tensor> {
        let p2 = crate::ops::reshape(params, &[n, inner])?;
        let maps =
            crate::ops::AxisMaps::new(name, params.dtype(), vec![rows.len(), inner], |k, j| {
                Some(if k == 0 { rows[j] as usize } else { j })
            })?;
        let g = crate::ops::remap(&p2, maps, None, (name, "UnsortedSegmentSum"))?;
        crate::ops::reshape(&g, &out_shape)
    })?;
    let out_shape = out.shape().to_vec();
    record(
        GatherRows {
            name,
            rows: std::sync::Arc::new(rows),
            indices,
            params_shape: shape,
            out_shape,
        },
        &[params],
        &[&out],
    )?;
    Ok(out)
}

/// Rows of `params` (`GatherV2` on axis 0, or `GatherNd` with one index per row).
/// Gradient: the rows scatter-added (`UnsortedSegmentSum`); TF's `IndexedSlices` for
/// a gradient that keeps it sparse. Tangent: the same rows of the tangent.
struct GatherRows {
    name: &'static str,
    rows: std::sync::Arc<Vec<i64>>,
    indices: Tensor,
    params_shape: Vec<usize>,
    out_shape: Vec<usize>,
}
impl Op for GatherRows {
    fn name(&self) -> &'static str {
        self.name
    }
    fn batched(&self) -> bool {
        true
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let dy = &dys[0];
        let b = cx.batch();
        let mut flat = dy.shape()[..b].to_vec();
        flat.push(self.rows.len());
        flat.extend_from_slice(&self.params_shape[1..]);
        let v = crate::ops::reshape(dy, &flat)?;
        let g = crate::ops::remap::scatter_rows(&v, &self.rows, &self.params_shape, b)?;
        Ok(grads![Some(g)])
    }
    fn jvp(&self, _cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        let Some(t) = tangents.first().cloned().flatten() else {
            return Some(Ok(grads![None]));
        };
        let r = gather_rows(
            self.name,
            &t,
            (*self.rows).clone(),
            self.indices.clone(),
            self.out_shape.clone(),
        );
        Some(r.map(|g| grads![Some(g)]))
    }
    fn sparse_vjp(&self, _cx: &VjpCx<'_>, dy: &Tensor) -> Option<Result<super::Sparse>> {
        let mut shape = vec![self.rows.len()];
        shape.extend_from_slice(&self.params_shape[1..]);
        Some(crate::ops::reshape(dy, &shape).map(|values| super::Sparse {
            values,
            indices: self.indices.clone(),
            dense_shape: self.params_shape.clone(),
        }))
    }
}

/// Gathers slices of `params` addressed by the last axis of `indices`.
/// TF equivalent: `tf.gather_nd`. Gradient: scatter-add into zeros (`ScatterNd`).
pub fn gather_nd(params: &Tensor, indices: &Tensor) -> Result<Tensor> {
    let idx = index_values("GatherNd", indices, &[crate::dtype::DType::I16])?;
    if indices.ndim() == 0 {
        return Err(Error::invalid(
            "GatherNd",
            "indices must be at least a vector",
        ));
    }
    let k = *indices.shape().last().expect("rank >= 1");
    let shape = params.shape();
    if k > shape.len() {
        return Err(Error::invalid(
            "GatherNd",
            format!(
                "index innermost dimension length must be <= params rank; saw: {k} vs. {}",
                shape.len()
            ),
        ));
    }
    let rows: usize = shape[..k].iter().product();
    let inner: usize = shape[k..].iter().product();
    let lead: usize = indices.shape()[..indices.ndim() - 1].iter().product();
    // With k == 0 every row reads the whole of `params` (row 0): `lead` rows, which
    // may be many more than the indices hold (`[2**40, 0]`); no per-row work then.
    let count = idx.len().checked_div(k).unwrap_or(lead);
    let tuples = if k == 0 { 0 } else { count };
    let mut maps_rows = crate::size::try_vec("GatherNd", tuples)?;
    for r in 0..tuples {
        let tuple = &idx[r * k..(r + 1) * k];
        let mut flat = 0usize;
        for (j, &v) in tuple.iter().enumerate() {
            if v < 0 || v as usize >= shape[j] {
                return Err(Error::invalid(
                    "GatherNd",
                    format!("indices[{r}] = {tuple:?} does not index into param shape {shape:?}"),
                ));
            }
            flat = flat * shape[j] + v as usize;
        }
        maps_rows.push(Some(flat));
    }
    if k == 1 && indices.ndim() == 2 {
        // One index per row: TF's gradient is sparse (`IndexedSlices`) here.
        let rows: Vec<i64> = maps_rows.iter().map(|r| r.unwrap_or(0) as i64).collect();
        let flat = crate::ops::reshape(indices, &[count])?;
        let out_shape: Vec<usize> = [count].iter().chain(&shape[1..]).copied().collect();
        return gather_rows("GatherNd", params, rows, flat, out_shape);
    }
    let p2 = crate::ops::reshape(params, &[rows, inner])?;
    let maps =
        crate::ops::AxisMaps::new("GatherNd", params.dtype(), vec![count, inner], |axis, j| {
            match axis {
                0 if k == 0 => Some(0),
                0 => maps_rows[j],
                _ => Some(j),
            }
        })?;
    let g = crate::ops::remap(&p2, maps, None, ("GatherNd", "ScatterNd"))?;
    let out_shape: Vec<usize> = indices.shape()[..indices.ndim() - 1]
        .iter()
        .chain(&shape[k..])
        .copied()
        .collect();
    crate::ops::reshape(&g, &out_shape)
}

/// One-hot encoding: a new axis of length `depth` at `axis` (-1: last) holding
/// `on_value` at each index and `off_value` elsewhere (out-of-range indices give a
/// row of `off_value`). TF equivalent: `tf.one_hot`. Not differentiable.
pub fn one_hot(
    indices: &Tensor,
    depth: usize,
    on_value: f64,
    off_value: f64,
    axis: isize,
    dtype: crate::dtype::DType,
) -> Result<Tensor> {
    let idx = index_values(
        "OneHot",
        indices,
        &[crate::dtype::DType::U8, crate::dtype::DType::I8],
    )?;
    let nd = indices.ndim();
    if axis < -1 || axis > nd as isize {
        return Err(Error::invalid(
            "OneHot",
            format!("Expected axis to be -1 or between [0, {nd}).  But received: {axis}"),
        ));
    }
    let ax = if axis == -1 { nd } else { axis as usize };
    let shape = indices.shape();
    let mut out_shape = shape.to_vec();
    out_shape.insert(ax, depth);
    check_shape("OneHot", &out_shape, dtype)?;
    // Both at most the number of output elements (or of indices): no overflow below.
    let outer: usize = shape[..ax].iter().product();
    let inner: usize = shape[ax..].iter().product();
    fn set<T: crate::dtype::Element>(
        mut a: ndarray::ArcArray<T, IxDyn>,
        idx: &[i64],
        dims: (usize, usize, usize),
        on: T,
    ) -> Result<Data> {
        let s = a
            .as_slice_mut()
            .ok_or_else(|| Error::Internal("a fresh array is contiguous".into()))?;
        set_one_hot(s, idx, dims, on);
        Ok(T::wrap(a))
    }
    let dims = (outer, depth, inner);
    let on = crate::tensor::scalar_of(on_value, dtype);
    let off = crate::tensor::full_op("OneHot", &out_shape, off_value, dtype)?;
    let data = dispatch!(off.into_data(), a => {
        let on = *crate::dtype::Element::unwrap(on.data())
            .and_then(|o: &ndarray::ArcArray<_, IxDyn>| o.iter().next())
            .ok_or_else(|| Error::Internal("OneHot: on value of the output's dtype".into()))?;
        set(a, &idx, dims, on)?
    });
    Ok(Tensor::new(data))
}

/// The elements (or slices along `axis`) of `tensor` where `mask` is true.
/// TF equivalent: `tf.boolean_mask`. Gradient: through a gather.
pub fn boolean_mask(tensor: &Tensor, mask: &Tensor, axis: isize) -> Result<Tensor> {
    let m = match mask.data() {
        crate::tensor::Data::Bool(a) => a,
        d => {
            return Err(Error::dtype(
                "BooleanMask",
                format!("mask must be a bool tensor, got {}", d.dtype().name()),
            ))
        }
    };
    let k = mask.ndim();
    if k == 0 {
        return Err(Error::invalid("BooleanMask", "mask cannot be scalar."));
    }
    let nd = tensor.ndim();
    let ax = if axis < 0 { axis + nd as isize } else { axis };
    if ax < 0 || ax as usize + k > nd {
        return Err(Error::invalid(
            "BooleanMask",
            format!("mask of rank {k} at axis {axis} does not fit a tensor of rank {nd}"),
        ));
    }
    let ax = ax as usize;
    let shape = tensor.shape();
    if &shape[ax..ax + k] != mask.shape() {
        return Err(Error::invalid(
            "BooleanMask",
            format!(
                "Shapes {:?} and {:?} are incompatible",
                &shape[ax..ax + k],
                mask.shape()
            ),
        ));
    }
    let mut flat_shape = shape[..ax].to_vec();
    flat_shape.push(mask.size());
    flat_shape.extend_from_slice(&shape[ax + k..]);
    let flat = crate::ops::reshape(tensor, &flat_shape)?;
    let count = m.iter().filter(|&&b| b).count();
    let pos = try_collect(
        "BooleanMask",
        count,
        m.iter()
            .enumerate()
            .filter(|(_, &b)| b)
            .map(|(i, _)| i as i64),
    )?;
    let n = pos.len();
    let idx = Tensor::from_vec(pos, &[n])?;
    gather(&flat, &idx, Some(ax as isize), 0)
}

/// The computation of a traced `gt.one_hot`: its inputs are the indices, then
/// `on_value` and `off_value` when given (`has_on`, `has_off`).
pub(crate) fn one_hot_node(
    depth: usize,
    axis: isize,
    dt: crate::dtype::DType,
    has_on: bool,
    has_off: bool,
) -> impl Fn(&[Tensor]) -> Result<Tensor> + Send + Sync + 'static {
    move |xs: &[Tensor]| {
        let on = if has_on { xs[1].to_f64_scalar()? } else { 1.0 };
        let off = if has_off {
            xs[1 + usize::from(has_on)].to_f64_scalar()?
        } else {
            0.0
        };
        one_hot(&xs[0], depth, on, off, axis, dt)
    }
}

/// The computation of a traced `gt.one_hot` whose depth is a tensor of the trace: its
/// inputs are those of [`one_hot_node`], then the depth (a non-negative integer scalar).
pub(crate) fn one_hot_depth_node(
    axis: isize,
    dt: crate::dtype::DType,
    has_on: bool,
    has_off: bool,
) -> impl Fn(&[Tensor]) -> Result<Tensor> + Send + Sync + 'static {
    move |xs: &[Tensor]| {
        let (d, rest) = xs
            .split_last()
            .ok_or_else(|| Error::Internal("OneHotDepth: no inputs".into()))?;
        let depth = match d.to_i64_scalar() {
            Some(v) if v >= 0 && d.dtype().is_integer() => v as usize,
            _ => {
                return Err(Error::invalid(
                    "OneHot",
                    "depth must be a non-negative integer scalar",
                ))
            }
        };
        one_hot_node(depth, axis, dt, has_on, has_off)(rest)
    }
}

/// The computation of a traced `x[...]`: `template` with the scalar index tensors (the
/// inputs after `x`) put at `places`.
/// Which part of index entry `k` a tensor input of a traced slice gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Part {
    Start(usize),
    Stop(usize),
    Step(usize),
}

/// Where a traced slice (`x[i]`, `x[a:b:c]` with tensors) reads each tensor input after
/// `x`: entry `k` as an integer index (written as the bare number, the form files of
/// format version 2 have), or a bound of the slice at entry `k`.
#[derive(Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
pub enum Place {
    Int(usize),
    Part(Part),
}

impl std::fmt::Debug for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Int(k) => write!(f, "{k}"),
            Place::Part(p) => write!(f, "{p:?}"),
        }
    }
}

impl Place {
    /// The index entry this place is in.
    pub fn entry(self) -> usize {
        match self {
            Place::Int(k) | Place::Part(Part::Start(k) | Part::Stop(k) | Part::Step(k)) => k,
        }
    }

    /// Whether `template` has an entry of the right kind here.
    pub fn fits(self, template: &[Index]) -> bool {
        matches!(
            (self, template.get(self.entry())),
            (Place::Int(_), Some(Index::Int(_))) | (Place::Part(_), Some(Index::Slice { .. }))
        )
    }
}

/// A traced slice: `template` with the tensor inputs after `x` written in at `places`.
pub(crate) fn strided_slice_node(
    template: Vec<Index>,
    places: Vec<Place>,
) -> impl Fn(&[Tensor]) -> Result<Tensor> + Send + Sync + 'static {
    move |xs: &[Tensor]| {
        let mut idx = template.clone();
        for (t, &place) in xs[1..].iter().zip(&places) {
            let i = t.to_i64_scalar().ok_or_else(|| {
                crate::error::Error::invalid(
                    "StridedSlice",
                    "an index tensor is not an integer scalar that fits an int64",
                )
            })?;
            let i = isize::try_from(i).unwrap_or(if i < 0 { isize::MIN } else { isize::MAX });
            match (place, idx.get_mut(place.entry())) {
                (Place::Int(_), Some(e @ Index::Int(_))) => *e = Index::Int(i),
                (Place::Part(p), Some(Index::Slice { start, stop, step })) => match p {
                    Part::Start(_) => *start = Some(i),
                    Part::Stop(_) => *stop = Some(i),
                    Part::Step(_) => *step = i,
                },
                _ => {
                    return Err(crate::error::Error::invalid(
                        "StridedSlice",
                        "a tensor position does not fit the index",
                    ))
                }
            }
        }
        strided_slice(&xs[0], &idx)
    }
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
        OpDef::new("GatherV2", 2, &["axis", "batch_dims"], gather),
        OpDef::new("GatherNd", 2, &[], gather_nd),
        OpDef::new(
            "IndexedSlicesToDense",
            2,
            &["dense_shape"],
            indexed_slices_to_dense,
        ),
        OpDef::new(
            "OneHot",
            1,
            &["depth", "axis", "dtype", "has_on", "has_off"],
            one_hot,
        )
        .inputs(1, 3),
        OpDef::new(
            "OneHotDepth",
            2,
            &["axis", "dtype", "has_on", "has_off"],
            one_hot_depth,
        )
        .inputs(2, 4),
        OpDef::new("BooleanMask", 2, &["axis"], boolean_mask),
        OpDef::new(
            "StridedSlice",
            1,
            &["index", "tensor_positions"],
            strided_slice,
        )
        .inputs(1, usize::MAX),
    ];

    fn gather(a: &Attrs, _: usize) -> Result<Forward> {
        let axis: Option<isize> = get("GatherV2", a, "axis")?;
        let b: isize = get("GatherV2", a, "batch_dims")?;
        Ok(one_out(move |xs| ops::gather(&xs[0], &xs[1], axis, b)))
    }

    fn gather_nd(_: &Attrs, _: usize) -> Result<Forward> {
        Ok(one_out(|xs| ops::gather_nd(&xs[0], &xs[1])))
    }

    /// `gt.IndexedSlices(values, indices, dense_shape)` densified (a scatter-add of rows:
    /// `gt.scatter_nd` and the `gt.tensor_scatter_nd_*` ops trace to it).
    fn indexed_slices_to_dense(a: &Attrs, _: usize) -> Result<Forward> {
        let dense_shape: Vec<usize> = get("IndexedSlicesToDense", a, "dense_shape")?;
        Ok(one_out(move |xs| {
            ops::Sparse {
                values: xs[0].clone(),
                indices: xs[1].clone(),
                dense_shape: dense_shape.clone(),
            }
            .to_dense()
        }))
    }

    fn one_hot(a: &Attrs, n: usize) -> Result<Forward> {
        let op = "OneHot";
        let depth: usize = get(op, a, "depth")?;
        let axis: isize = get(op, a, "axis")?;
        let dt = get_dtype(op, a, "dtype")?;
        let (on, off): (bool, bool) = (get(op, a, "has_on")?, get(op, a, "has_off")?);
        ensure(
            n == 1 + usize::from(on) + usize::from(off),
            op,
            "inputs do not fit has_on and has_off",
        )?;
        Ok(one_out(super::one_hot_node(depth, axis, dt, on, off)))
    }

    fn one_hot_depth(a: &Attrs, n: usize) -> Result<Forward> {
        let op = "OneHotDepth";
        let axis: isize = get(op, a, "axis")?;
        let dt = get_dtype(op, a, "dtype")?;
        let (on, off): (bool, bool) = (get(op, a, "has_on")?, get(op, a, "has_off")?);
        ensure(
            n == 2 + usize::from(on) + usize::from(off),
            op,
            "inputs do not fit has_on and has_off",
        )?;
        Ok(one_out(super::one_hot_depth_node(axis, dt, on, off)))
    }

    fn boolean_mask(a: &Attrs, _: usize) -> Result<Forward> {
        let axis: isize = get("BooleanMask", a, "axis")?;
        Ok(one_out(move |xs| ops::boolean_mask(&xs[0], &xs[1], axis)))
    }

    fn strided_slice(a: &Attrs, n: usize) -> Result<Forward> {
        let op = "StridedSlice";
        let idx: Vec<ops::Index> = get(op, a, "index")?;
        let at: Vec<super::Place> = get(op, a, "tensor_positions")?;
        ensure(
            at.len() + 1 == n && at.iter().all(|p| p.fits(&idx)),
            op,
            "tensor positions do not fit the inputs",
        )?;
        Ok(one_out(super::strided_slice_node(idx, at)))
    }
}

/// The Python functions of this family: bindings and where they appear (see
/// `src/ops/README.md`).
#[cfg(feature = "python")]
pub(super) mod python {
    #[allow(unused_imports)]
    use crate::python::binding::*;

    /// Slices of ``params`` along ``axis`` (``batch_dims``, 0 by default) at ``indices``;
    /// with ``batch_dims=b`` the first ``b`` axes are a batch, each example gathering
    /// from its own slice. TF equivalent: ``tf.gather``.
    ///
    /// >>> print(gt.gather(gt.constant([10, 20, 30]), [2, 0]))
    /// gt.Tensor([30 10], shape=(2,), dtype=int32)
    /// >>> print(gt.gather(gt.constant([[1, 2, 3], [4, 5, 6]]), [[2, 0], [1, 1]], batch_dims=1))
    /// gt.Tensor(
    /// [[3 1]
    ///  [5 5]], shape=(2, 2), dtype=int32)
    #[pyfunction]
    #[pyo3(signature = (params, indices, validate_indices=None, axis=None, batch_dims=0, name=None))]
    fn gather(
        py: Python<'_>,
        params: &Bound<'_, PyAny>,
        indices: &Bound<'_, PyAny>,
        validate_indices: Option<&Bound<'_, PyAny>>,
        axis: Option<&Bound<'_, PyAny>>,
        batch_dims: isize,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = (name, validate_indices);
        let p = to_tensor(params, None)?;
        let i = to_tensor(indices, None)?;
        let axis = opt_axis(axis)?;
        let f = move |p: &Tensor, i: &Tensor| ops::gather(p, i, axis, batch_dims);
        let key = || format!("{axis:?},{batch_dims}");
        Ok(call2(py, "GatherV2", key, &p, &i, f)?.into())
    }

    /// Elements or slices of ``params`` at the index tuples in the last axis of ``indices``.
    /// Only ``batch_dims=0`` is supported. TF equivalent: ``tf.gather_nd``.
    ///
    /// >>> print(gt.gather_nd(gt.constant([[1, 2], [3, 4]]), [[0, 1], [1, 0]]))
    /// gt.Tensor([2 3], shape=(2,), dtype=int32)
    #[pyfunction]
    #[pyo3(signature = (params, indices, batch_dims=0, name=None))]
    fn gather_nd(
        py: Python<'_>,
        params: &Bound<'_, PyAny>,
        indices: &Bound<'_, PyAny>,
        batch_dims: isize,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        if batch_dims != 0 {
            return Err(InvalidArgumentError::new_err(format!(
                "gather_nd: batch_dims={batch_dims} is not supported (only batch_dims=0)"
            )));
        }
        let p = to_tensor(params, None)?;
        let i = to_tensor(indices, None)?;
        Ok(call2(py, "GatherNd", String::new, &p, &i, ops::gather_nd)?.into())
    }

    /// One-hot encoding of ``indices`` with ``depth`` classes (float32 by default, or the dtype
    /// of ``on_value``/``off_value``). TF equivalent: ``tf.one_hot``.
    ///
    /// >>> print(gt.one_hot([0, 2], 3))
    /// gt.Tensor(
    /// [[1. 0. 0.]
    ///  [0. 0. 1.]], shape=(2, 3), dtype=float32)
    #[pyfunction]
    #[pyo3(signature = (indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None))]
    #[allow(clippy::too_many_arguments)]
    fn one_hot(
        py: Python<'_>,
        indices: &Bound<'_, PyAny>,
        depth: &Bound<'_, PyAny>,
        on_value: Option<&Bound<'_, PyAny>>,
        off_value: Option<&Bound<'_, PyAny>>,
        axis: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let i = to_tensor(indices, None)?;
        // A depth computed in a gt.function trace is read when the graph runs (an input).
        let traced_depth = crate::python::convert::as_tensor(depth)
            .filter(|t| crate::graph::is_tracing() && crate::graph::lookup(t));
        let depth = match &traced_depth {
            Some(_) => 0,
            None => int_arg(depth, "depth")?,
        };
        if depth < 0 {
            return Err(InvalidArgumentError::new_err(format!(
                "depth must be non-negative, got: {depth}"
            )));
        }
        let on = on_value.filter(|v| !v.is_none());
        let off = off_value.filter(|v| !v.is_none());
        let value_dtype = match on.or(off) {
            Some(v) => Some(to_tensor(v, None)?.dtype()),
            None => None,
        };
        let dt = dtype_arg(dtype, value_dtype.unwrap_or(DType::F32))?;
        // `on_value` and `off_value` are inputs of the node (tensors in TF); their checks
        // come here, before the axis's, as they always have.
        let scalar = |v: Option<&Bound<'_, PyAny>>| -> PyResult<Option<Tensor>> {
            match v {
                Some(v) => {
                    let t = to_tensor(v, Some(dt))?;
                    t.to_f64_scalar()?;
                    Ok(Some(t))
                }
                None => Ok(None),
            }
        };
        let (on, off) = (scalar(on)?, scalar(off)?);
        let axis = opt_axis(axis)?.unwrap_or(-1);
        let (has_on, has_off) = (on.is_some(), off.is_some());
        let xs: Vec<Tensor> = [i].into_iter().chain(on).chain(off).collect();
        if let Some(d) = traced_depth {
            let xs: Vec<Tensor> = xs.into_iter().chain([d]).collect();
            let f = ops::one_hot_depth_node(axis, dt, has_on, has_off);
            let key = || format!("{axis},{dt:?},{has_on},{has_off}");
            return Ok(call_n(py, "OneHotDepth", key, &xs, f)?.into());
        }
        let depth = depth as usize;
        let f = ops::one_hot_node(depth, axis, dt, has_on, has_off);
        let key = || format!("{depth},{axis},{dt:?},{has_on},{has_off}");
        Ok(call_n(py, "OneHot", key, &xs, f)?.into())
    }

    /// The entries of ``tensor`` where ``mask`` is true (``mask`` covers the axes from
    /// ``axis``). TF equivalent: ``tf.boolean_mask``.
    ///
    /// >>> print(gt.boolean_mask(gt.constant([1, 2, 3]), [True, False, True]))
    /// gt.Tensor([1 3], shape=(2,), dtype=int32)
    #[pyfunction]
    #[pyo3(signature = (tensor, mask, axis=None, name=None))]
    fn boolean_mask(
        py: Python<'_>,
        tensor: &Bound<'_, PyAny>,
        mask: &Bound<'_, PyAny>,
        axis: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let x = to_tensor(tensor, None)?;
        let m = to_tensor(mask, Some(DType::Bool))?;
        let axis = opt_axis(axis)?.unwrap_or(0);
        let f = move |x: &Tensor, m: &Tensor| ops::boolean_mask(x, m, axis);
        Ok(call2(py, "BooleanMask", || axis.to_string(), &x, &m, f)?.into())
    }

    expose! {
        fn gather in [gt]: "(params: TensorLike, indices: TensorLike, validate_indices: _bool | None = None, axis: int | Tensor | None = None, batch_dims: int = 0, name: str | None = None) -> Tensor";
        fn gather_nd in [gt]: "(params: TensorLike, indices: TensorLike, batch_dims: int = 0, name: str | None = None) -> Tensor";
        fn one_hot in [gt]: "(indices: TensorLike, depth: int | Tensor, on_value: TensorLike | None = None, off_value: TensorLike | None = None, axis: int | Tensor | None = None, dtype: DTypeLike | None = None, name: str | None = None) -> Tensor";
        fn boolean_mask in [gt]: "(tensor: TensorLike, mask: TensorLike, axis: int | Tensor | None = None, name: str | None = None) -> Tensor";
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testutil::{close, grad, t64, ti, vals};

    #[test]
    fn gather_with_batch_dims_as_tf() {
        // params [2, 3], indices [2, 2], batch_dims 1: out[b, i] = p[b, idx[b, i]].
        let p = t64(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
        let idx = ti(&[2, 0, 1, 1], &[2, 2]);
        let g = gather(&p, &idx, None, 1).unwrap();
        assert_eq!(g.shape(), &[2, 2]);
        assert_eq!(vals(&g), vec![3.0, 1.0, 5.0, 5.0]);
        // The gradient scatter-adds per example (row 1 twice).
        let d = grad(&p, None, |p| gather(p, &idx, None, 1).unwrap());
        assert_eq!(d, vec![1.0, 0.0, 1.0, 0.0, 2.0, 0.0]);
        // axis 2 of [2, 2, 3] with batch_dims 1: out[b, j, i] = p[b, j, idx[b, i]].
        let p3 = t64(&(0..12).map(f64::from).collect::<Vec<_>>(), &[2, 2, 3]);
        let g = gather(&p3, &ti(&[2, 0], &[2, 1]), Some(2), 1).unwrap();
        assert_eq!(g.shape(), &[2, 2, 1]);
        assert_eq!(vals(&g), vec![2.0, 5.0, 6.0, 9.0]);
        // TF's errors: axis before the batch axes, batch sizes that differ, an index
        // out of range inside an example.
        assert!(gather(&p, &idx, Some(0), 1).is_err());
        assert!(gather(&p, &ti(&[0, 0, 0], &[3, 1]), None, 1).is_err());
        assert!(gather(&p, &ti(&[0, 3], &[2, 1]), None, 1).is_err());
        assert!(gather(&p, &idx, None, 3).is_err());
    }

    #[test]
    fn slices_with_extreme_bounds_and_steps() {
        let x = ti(&[0, 1, 2, 3, 4], &[5]);
        let take = |start, stop, step| {
            let idx = [Index::Slice { start, stop, step }];
            strided_slice(&x, &idx).unwrap().to_vec::<i32>().unwrap()
        };
        assert_eq!(take(None, None, isize::MAX), vec![0]);
        assert_eq!(take(None, None, isize::MIN), vec![4]);
        assert_eq!(take(Some(isize::MIN), Some(isize::MAX), 2), vec![0, 2, 4]);
        assert_eq!(take(Some(isize::MAX), Some(isize::MIN), -2), vec![4, 2, 0]);
        assert_eq!(take(Some(1), None, 1 << 62), vec![1]);
        assert_eq!(take(None, Some(isize::MIN), 1), Vec::<i32>::new());
        assert!(strided_slice(&x, &[Index::Int(isize::MIN)]).is_err());
        assert!(strided_slice(&x, &[Index::Int(isize::MAX)]).is_err());
    }

    #[test]
    fn gather_selects_and_scatter_adds_the_gradient() {
        let p = t64(&[1., 2., 3., 4., 5., 6.], &[3, 2]);
        let g = gather(&p, &ti(&[2, 0, 2], &[3]), None, 0).unwrap();
        assert_eq!(g.shape(), &[3, 2]);
        close(&vals(&g), &[5., 6., 1., 2., 5., 6.]);
        close(
            &grad(&p, None, |x| {
                gather(x, &ti(&[2, 0, 2], &[3]), None, 0).unwrap()
            }),
            &[1., 1., 0., 0., 2., 2.],
        );
        let h = gather(&p, &ti(&[1, 0], &[1, 2]), Some(1), 0).unwrap();
        assert_eq!(h.shape(), &[3, 1, 2]);
        close(&vals(&h), &[2., 1., 4., 3., 6., 5.]);
        assert!(matches!(
            gather(&p, &ti(&[3], &[1]), None, 0),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(gather(&p, &ti(&[-1], &[1]), None, 0).is_err());
        assert!(gather(&p, &ti(&[0], &[1]), None, 1).is_err());
        assert!(gather(&p, &t64(&[0.], &[1]), None, 0).is_err());
    }

    #[test]
    fn gather_nd_by_full_and_partial_index() {
        let p = t64(&[1., 2., 3., 4.], &[2, 2]);
        let a = gather_nd(&p, &ti(&[1, 0, 0, 1], &[2, 2])).unwrap();
        close(&vals(&a), &[3., 2.]);
        let b = gather_nd(&p, &ti(&[1], &[1, 1])).unwrap();
        assert_eq!(b.shape(), &[1, 2]);
        close(&vals(&b), &[3., 4.]);
        let w = t64(&[10., 20.], &[2]);
        close(
            &grad(&p, Some(&w), |x| {
                gather_nd(x, &ti(&[1, 0, 0, 1], &[2, 2])).unwrap()
            }),
            &[0., 20., 10., 0.],
        );
        assert!(gather_nd(&p, &ti(&[2, 0], &[1, 2])).is_err());
        assert!(gather_nd(&p, &ti(&[0, 0, 0], &[1, 3])).is_err());
    }

    #[test]
    fn one_hot_positions_and_axis() {
        let i = ti(&[0, 2, -1], &[3]);
        let o = one_hot(&i, 3, 1.0, 0.0, -1, crate::DType::F32).unwrap();
        assert_eq!(o.shape(), &[3, 3]);
        assert_eq!(o.dtype(), crate::DType::F32);
        close(&vals(&o), &[1., 0., 0., 0., 0., 1., 0., 0., 0.]);
        let o0 = one_hot(&ti(&[0, 2], &[2]), 3, 5.0, -1.0, 0, crate::DType::F64).unwrap();
        assert_eq!(o0.shape(), &[3, 2]);
        close(&vals(&o0), &[5., -1., -1., -1., -1., 5.]);
        assert!(one_hot(&i, 3, 1.0, 0.0, 3, crate::DType::F32).is_err());
    }

    #[test]
    fn boolean_mask_keeps_true_rows() {
        let mask = Tensor::from_vec(vec![false, true, true], &[3]).unwrap();
        let x = t64(&[1., 2., 3., 4., 5., 6.], &[3, 2]);
        let m = boolean_mask(&x, &mask, 0).unwrap();
        assert_eq!(m.shape(), &[2, 2]);
        close(&vals(&m), &[3., 4., 5., 6.]);
        close(
            &grad(&x, None, |x| boolean_mask(x, &mask, 0).unwrap()),
            &[0., 0., 1., 1., 1., 1.],
        );
        let m2 = Tensor::from_vec(vec![true, false, false, true, true, false], &[3, 2]).unwrap();
        close(&vals(&boolean_mask(&x, &m2, 0).unwrap()), &[1., 4., 5.]);
        let col = Tensor::from_vec(vec![false, true], &[2]).unwrap();
        close(&vals(&boolean_mask(&x, &col, 1).unwrap()), &[2., 4., 6.]);
        assert!(boolean_mask(&x, &col, 0).is_err());
        assert!(boolean_mask(&x, &Tensor::scalar(true), 0).is_err());
    }
}
