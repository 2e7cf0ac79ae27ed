//! Remapping ops: slice, pad (all modes) and tile, and the primitive behind them.
//!
//! Every output element is one input element (or a fill value), chosen
//! independently per axis. Slice, pad, tile, gather and gather_nd (in `index.rs`)
//! are all the one primitive [`remap`] with different [`AxisMaps`]; its adjoint
//! scatter-adds `dy` back. Their element loops are in `kernels/remap.rs`.

use super::{grads, record, Grads, Op, Saves, VjpCx};
use crate::error::{Error, Result};
use crate::kernels::remap::{remap_kernel, scatter_kernel};
use crate::size::{check_shape, num_elements, try_collect, try_vec};
use crate::tensor::Tensor;

/// Per output axis, the input position each output position reads (`None`: the
/// fill value), with the output shape kept apart: when the output is empty no map is
/// built (a `tile` of an empty tensor by `2**40` needs none).
#[derive(Clone, Debug)]
pub(crate) struct AxisMaps {
    shape: Vec<usize>,
    maps: Vec<Vec<Option<usize>>>,
}

impl AxisMaps {
    /// Maps for an output of `shape` whose axis `k` reads input position `f(k, j)` at
    /// output position `j`; the output (elements of `dtype`) is checked to be
    /// describable and to fit in memory first.
    pub(crate) fn new(
        op: &'static str,
        dtype: crate::dtype::DType,
        shape: Vec<usize>,
        f: impl Fn(usize, usize) -> Option<usize>,
    ) -> Result<AxisMaps> {
        let n = check_shape(op, &shape, dtype)?;
        let maps = if n == 0 {
            vec![Vec::new(); shape.len()]
        } else {
            // Each axis is at most `n` long: these are bounded by the output.
            shape
                .iter()
                .enumerate()
                .map(|(k, &len)| try_collect(op, len, (0..len).map(|j| f(k, j))))
                .collect::<Result<_>>()?
        };
        Ok(AxisMaps { shape, maps })
    }

    /// The same maps behind leading axes `lead` that are read as they are (the batch
    /// axes of a jacobian's gradients).
    fn with_lead(&self, lead: &[usize]) -> AxisMaps {
        let mut shape = lead.to_vec();
        shape.extend_from_slice(&self.shape);
        let mut maps: Vec<Vec<Option<usize>>> =
            lead.iter().map(|&n| (0..n).map(Some).collect()).collect();
        maps.extend(self.maps.iter().cloned());
        AxisMaps { shape, maps }
    }

    /// Flat input offsets (row-major in `in_shape`) of every output element, in
    /// output order; every position is checked against `in_shape`.
    fn flat_index(&self, op: &'static str, in_shape: &[usize]) -> Result<Vec<Option<usize>>> {
        let nd = in_shape.len();
        if self.maps.len() != nd {
            return Err(Error::Internal(format!(
                "{op}: {} axis maps for rank {nd}",
                self.maps.len()
            )));
        }
        let n = num_elements(op, &self.shape)?;
        if n == 0 {
            return Ok(Vec::new());
        }
        // Row-major strides of an existing input: products of its dims, no overflow.
        let mut strides = vec![1usize; nd];
        for k in (0..nd.saturating_sub(1)).rev() {
            strides[k] = strides[k + 1] * in_shape[k + 1];
        }
        let mut out: Vec<Option<usize>> = vec![Some(0)];
        for k in 0..nd {
            if let Some(&Some(bad)) = self.maps[k]
                .iter()
                .find(|m| m.is_some_and(|m| m >= in_shape[k]))
            {
                return Err(Error::Internal(format!(
                    "{op}: position {bad} read on axis {k} of shape {in_shape:?}"
                )));
            }
            let mut next = try_vec(op, out.len() * self.maps[k].len())?;
            for &b in &out {
                for &m in &self.maps[k] {
                    next.push(match (b, m) {
                        (Some(b), Some(m)) => Some(b + m * strides[k]),
                        _ => None,
                    });
                }
            }
            out = next;
        }
        Ok(out)
    }
}

/// Output `[i0, i1, ...] = x[maps[0][i0], maps[1][i1], ...]` or `fill` where a map
/// is `None`. `names` = (this op's TF type, its adjoint's TF type).
pub(crate) fn remap(
    x: &Tensor,
    maps: AxisMaps,
    fill: Option<&Tensor>,
    names: (&'static str, &'static str),
) -> Result<Tensor> {
    let idx = maps.flat_index(names.0, x.shape())?;
    let zero;
    let fill = match fill {
        Some(f) => f,
        None => {
            zero = crate::tensor::scalar_of(0.0, x.dtype());
            &zero
        }
    };
    if fill.size() != 1 {
        return Err(Error::invalid(
            names.0,
            format!(
                "the fill value must be a scalar, got shape {:?}",
                fill.shape()
            ),
        ));
    }
    let out = Tensor::new(
        all_dtypes!(map_pair!(names.0, x.data(), fill.data(),) then (, a, f => {
            let f = *f.iter().next().ok_or_else(|| Error::Internal("a scalar has an element".into()))?;
            remap_kernel(a, &idx, f, &maps.shape)?
        })),
    );
    record(
        Remap {
            names,
            maps: std::sync::Arc::new(maps),
            in_shape: x.shape().to_vec(),
        },
        &[x],
        &[&out],
    )?;
    Ok(out)
}

/// `values` (`[lead.., k, rest..]`, `batch` leading axes) added at rows `rows` of
/// zeros of `[lead.., dense_shape..]` (`rest = dense_shape[1..]`): a gather's
/// gradient (TF's `UnsortedSegmentSum` of its rows), recorded.
pub(crate) fn scatter_rows(
    values: &Tensor,
    rows: &[i64],
    dense_shape: &[usize],
    batch: usize,
) -> Result<Tensor> {
    const OP: &str = "UnsortedSegmentSum";
    let lead = values.shape()[..batch].to_vec();
    let n = dense_shape.first().copied().unwrap_or(0);
    let inner: usize = dense_shape.iter().skip(1).product();
    if let Some(&bad) = rows.iter().find(|&&r| r < 0 || r as u64 >= n as u64) {
        return Err(Error::invalid(
            OP,
            format!("segment id {bad} out of range [0, {n})"),
        ));
    }
    let k = rows.len();
    let maps = AxisMaps::new(OP, values.dtype(), vec![k, inner], |a, j| {
        Some(if a == 0 { rows[j] as usize } else { j })
    })?
    .with_lead(&lead);
    let mut flat = lead.clone();
    flat.extend([k, inner]);
    let mut in_shape = lead.clone();
    in_shape.extend([n, inner]);
    let v = crate::ops::reshape(values, &flat)?;
    let out = remap_adjoint(&v, std::sync::Arc::new(maps), &in_shape, ("GatherV2", OP))?;
    let mut shape = lead;
    shape.extend_from_slice(dense_shape);
    crate::ops::reshape(&out, &shape)
}

/// The adjoint of [`remap`]: `dy` scatter-added into zeros of `in_shape`.
fn remap_adjoint(
    dy: &Tensor,
    maps: std::sync::Arc<AxisMaps>,
    in_shape: &[usize],
    names: (&'static str, &'static str),
) -> Result<Tensor> {
    if dy.shape() != maps.shape.as_slice() {
        return Err(Error::shapes(names.1, dy.shape(), &maps.shape));
    }
    let idx = maps.flat_index(names.1, in_shape)?;
    let out = Tensor::new(
        map_dtypes!(names.1, dy.data(), [F32, F64, I32, I64, C64, C128] via [F16], a => {
            scatter_kernel(a, &idx, in_shape)?
        }),
    );
    record(
        RemapAdjoint {
            names,
            maps,
            in_shape: in_shape.to_vec(),
        },
        &[dy],
        &[&out],
    )?;
    Ok(out)
}

struct Remap {
    names: (&'static str, &'static str),
    maps: std::sync::Arc<AxisMaps>,
    in_shape: Vec<usize>,
}
impl Op for Remap {
    fn name(&self) -> &'static str {
        self.names.0
    }
    fn batched(&self) -> bool {
        true
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let dy = &dys[0];
        if cx.batch() == 0 {
            return Ok(grads![Some(remap_adjoint(
                dy,
                self.maps.clone(),
                &self.in_shape,
                self.names
            )?)]);
        }
        let lead = &dy.shape()[..cx.batch()];
        Ok(grads![Some(remap_adjoint(
            dy,
            std::sync::Arc::new(self.maps.with_lead(lead)),
            &cx.batched(dy, &self.in_shape),
            self.names
        )?)])
    }
}

struct RemapAdjoint {
    names: (&'static str, &'static str),
    maps: std::sync::Arc<AxisMaps>,
    in_shape: Vec<usize>,
}
impl Op for RemapAdjoint {
    fn name(&self) -> &'static str {
        self.names.1
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn batched(&self) -> bool {
        true
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let _ = &self.in_shape;
        let dy = &dys[0];
        let maps = if cx.batch() == 0 {
            (*self.maps).clone()
        } else {
            self.maps.with_lead(&dy.shape()[..cx.batch()])
        };
        Ok(grads![Some(remap(dy, maps, None, self.names)?)])
    }
}

/// The block of `x` starting at `begin` with extent `size` (`-1`: to the end).
/// TF equivalent: `tf.slice`. Gradient: `dy` padded back with zeros.
pub fn slice(x: &Tensor, begin: &[i64], size: &[i64]) -> Result<Tensor> {
    let shape = x.shape();
    if begin.len() != shape.len() || size.len() != shape.len() {
        return Err(Error::invalid(
            "Slice",
            format!(
                "Expected begin and size arguments to be 1-D tensors of size {}, but got shapes [{}] and [{}] instead.",
                shape.len(),
                begin.len(),
                size.len()
            ),
        ));
    }
    let mut starts = Vec::with_capacity(shape.len());
    let mut out_shape = Vec::with_capacity(shape.len());
    for i in 0..shape.len() {
        let d = shape[i] as i64;
        let b = begin[i];
        let s = if size[i] == -1 {
            d.saturating_sub(b)
        } else {
            size[i]
        };
        // `s > d - b` rather than `b + s > d`: no overflow for any i64 arguments.
        if b < 0 || b > d || s < 0 || s > d - b {
            return Err(Error::invalid(
                "Slice",
                format!(
                    "Expected begin[{i}] in [0, {d}] and size[{i}] in [0, {}], but got {} and {}",
                    (d.saturating_sub(b)).max(0),
                    b,
                    size[i]
                ),
            ));
        }
        starts.push(b as usize);
        out_shape.push(s as usize);
    }
    let maps = AxisMaps::new("Slice", x.dtype(), out_shape, |k, j| Some(starts[k] + j))?;
    remap(x, maps, None, ("Slice", "Pad"))
}

/// Padding modes of [`pad`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum PadMode {
    /// Fill with a constant.
    Constant,
    /// Mirror without repeating the edge: `[1,2,3]` padded by 2 → `[3,2,1,2,3,2,1]`.
    Reflect,
    /// Mirror repeating the edge: `[1,2,3]` padded by 2 → `[2,1,1,2,3,3,2]`.
    Symmetric,
}

impl PadMode {
    /// Parses TF's case-insensitive mode names.
    pub fn parse(s: &str) -> Result<PadMode> {
        match s.to_ascii_uppercase().as_str() {
            "CONSTANT" => Ok(PadMode::Constant),
            "REFLECT" => Ok(PadMode::Reflect),
            "SYMMETRIC" => Ok(PadMode::Symmetric),
            _ => Err(Error::invalid(
                "Pad",
                format!("Unknown padding mode: {}", s.to_ascii_uppercase()),
            )),
        }
    }
}

/// Pads `x` by `paddings[i] = (before, after)` on axis `i`. TF equivalent:
/// `tf.pad`. Gradient: the middle slice (constant) or the mirrored parts folded back
/// onto the edge (reflect, symmetric). `constant_values` has no gradient, as in TF.
pub fn pad(
    x: &Tensor,
    paddings: &[(usize, usize)],
    mode: PadMode,
    constant_values: Option<&Tensor>,
) -> Result<Tensor> {
    let shape = x.shape();
    let op = if mode == PadMode::Constant {
        "PadV2"
    } else {
        "MirrorPad"
    };
    if paddings.len() != shape.len() {
        return Err(Error::invalid(
            op,
            format!(
                "The first dimension of paddings must be the rank of inputs[{},2], got [{},2]",
                shape.len(),
                paddings.len()
            ),
        ));
    }
    let mut out_shape = Vec::with_capacity(shape.len());
    for (i, (&d, &(lo, hi))) in shape.iter().zip(paddings).enumerate() {
        match mode {
            PadMode::Reflect if lo >= d.max(1) || hi >= d.max(1) => {
                return Err(Error::invalid(
                    op,
                    format!("paddings must be less than the dimension size: {lo}, {hi} not less than {d} (axis {i})"),
                ))
            }
            PadMode::Symmetric if lo > d || hi > d => {
                return Err(Error::invalid(
                    op,
                    format!("paddings must be no greater than the dimension size: {lo}, {hi} greater than {d} (axis {i})"),
                ))
            }
            _ => {}
        }
        // TF's message for an output dimension beyond int64.
        let len = lo
            .checked_add(d)
            .and_then(|n| n.checked_add(hi))
            .filter(|&n| n <= i64::MAX as usize)
            .ok_or_else(|| {
                Error::invalid(
                    op,
                    format!("Encountered overflow when padding dimension {i} of size {d} by ({lo}, {hi})"),
                )
            })?;
        out_shape.push(len);
    }
    // Output position `j` of axis `k` is input position `j - lo` (every quantity
    // below is at most the output length, which fits i64).
    let map = |k: usize, j: usize| -> Option<usize> {
        let (n, lo) = (shape[k] as i64, paddings[k].0 as i64);
        let j = j as i64 - lo;
        if (0..n).contains(&j) {
            return Some(j as usize);
        }
        match mode {
            PadMode::Constant => None,
            PadMode::Reflect => Some(if j < 0 { -j } else { 2 * (n - 1) - j } as usize),
            PadMode::Symmetric => Some(if j < 0 { -j - 1 } else { 2 * n - 1 - j } as usize),
        }
    };
    let maps = AxisMaps::new(op, x.dtype(), out_shape, map)?;
    let names = match mode {
        PadMode::Constant => ("PadV2", "Slice"),
        _ => ("MirrorPad", "MirrorPadGrad"),
    };
    let cv;
    let fill = match constant_values {
        Some(c) if c.dtype() != x.dtype() => {
            cv = crate::ops::cast(c, x.dtype())?;
            Some(&cv)
        }
        other => other,
    };
    remap(x, maps, fill, names)
}

/// Repeats `x` `multiples[i]` times along axis `i`. TF equivalent: `tf.tile`.
/// Gradient: `dy` summed over the copies.
pub fn tile(x: &Tensor, multiples: &[usize]) -> Result<Tensor> {
    let shape = x.shape();
    if multiples.len() != shape.len() {
        return Err(Error::invalid(
            "Tile",
            format!(
                "Expected multiples argument to be a vector of length {} but got length {}",
                shape.len(),
                multiples.len()
            ),
        ));
    }
    let mut out_shape = Vec::with_capacity(shape.len());
    for (&d, &m) in shape.iter().zip(multiples) {
        out_shape.push(d.checked_mul(m).ok_or_else(|| {
            Error::invalid(
                "Tile",
                format!("Encountered overflow when multiplying {d} with {m}"),
            )
        })?);
    }
    let maps = AxisMaps::new("Tile", x.dtype(), out_shape, |k, j| {
        Some(j % shape[k].max(1))
    })?;
    remap(x, maps, None, ("Tile", "TileGrad"))
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
        OpDef::new("PadV2", 1, &["paddings", "mode", "has_constant"], pad).inputs(1, 2),
        OpDef::new("Slice", 1, &["begin", "size"], slice),
        OpDef::new("Tile", 1, &["multiples"], tile),
    ];

    fn pad(a: &Attrs, n: usize) -> Result<Forward> {
        let pairs: Vec<(usize, usize)> = get("PadV2", a, "paddings")?;
        let mode: ops::PadMode = get("PadV2", a, "mode")?;
        let has_c: bool = get("PadV2", a, "has_constant")?;
        ensure(
            n == 1 + usize::from(has_c),
            "PadV2",
            "inputs do not fit has_constant",
        )?;
        Ok(one_out(move |xs| ops::pad(&xs[0], &pairs, mode, xs.get(1))))
    }

    fn slice(a: &Attrs, _: usize) -> Result<Forward> {
        let b: Vec<i64> = get("Slice", a, "begin")?;
        let s: Vec<i64> = get("Slice", a, "size")?;
        Ok(one_out(move |xs| ops::slice(&xs[0], &b, &s)))
    }

    fn tile(a: &Attrs, _: usize) -> Result<Forward> {
        let m: Vec<usize> = get("Tile", a, "multiples")?;
        Ok(one_out(move |xs| ops::tile(&xs[0], &m)))
    }
}

/// The Python functions of this family: bindings and where they appear (see
/// `src/ops/README.md`).
#[cfg(feature = "python")]
pub(super) mod python {
    #[allow(unused_imports)]
    use crate::python::binding::*;

    /// ``input`` repeated ``multiples[i]`` times along each axis ``i``. TF equivalent:
    /// ``tf.tile``.
    ///
    /// >>> print(gt.tile(gt.constant([1, 2]), [2]))
    /// gt.Tensor([1 2 1 2], shape=(4,), dtype=int32)
    #[pyfunction]
    #[pyo3(signature = (input, multiples, name=None))]
    fn tile(
        py: Python<'_>,
        input: &Bound<'_, PyAny>,
        multiples: &Bound<'_, PyAny>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let x = to_tensor(input, None)?;
        let m = dims_arg(multiples)?;
        let n = m.iter().fold(x.size(), |n, &d| n.saturating_mul(d));
        let key = || format!("{m:?}");
        let owned = m.clone();
        let f = move |xs: &[Tensor]| ops::tile(&xs[0], &owned);
        Ok(call_sized(py, n, "Tile", key, &[x], f)?.into())
    }

    /// ``tensor`` padded by ``paddings[i] = [before, after]`` along each axis; modes CONSTANT,
    /// REFLECT and SYMMETRIC. TF equivalent: ``tf.pad``.
    ///
    /// >>> print(gt.pad(gt.constant([1, 2]), [[1, 2]]))
    /// gt.Tensor([0 1 2 0 0], shape=(5,), dtype=int32)
    /// >>> print(gt.pad(gt.constant([1, 2, 3]), [[1, 1]], mode="REFLECT"))
    /// gt.Tensor([2 1 2 3 2], shape=(5,), dtype=int32)
    #[pyfunction]
    #[pyo3(signature = (tensor, paddings, mode="CONSTANT", constant_values=None, name=None))]
    fn pad(
        py: Python<'_>,
        tensor: &Bound<'_, PyAny>,
        paddings: &Bound<'_, PyAny>,
        mode: &str,
        constant_values: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let x = to_tensor(tensor, None)?;
        let p = to_tensor(paddings, Some(DType::I64))?;
        if !p.dtype().is_integer() || p.ndim() != 2 || p.shape()[1] != 2 {
            return Err(InvalidArgumentError::new_err(format!(
                "paddings must be a matrix of integers with 2 columns, got shape {:?} and dtype {}",
                p.shape(),
                p.dtype().name()
            )));
        }
        let v = ops::cast(&p, DType::I64)?.to_vec::<i64>()?;
        if v.iter().any(|&d| d < 0) {
            return Err(InvalidArgumentError::new_err(format!(
                "paddings must be non-negative, got {v:?}"
            )));
        }
        let pairs: Vec<(usize, usize)> = v
            .chunks(2)
            .map(|c| (c[0] as usize, c[1] as usize))
            .collect();
        let mode = ops::PadMode::parse(mode)?;
        let cv = match constant_values {
            Some(c) if !c.is_none() => Some(to_tensor(c, Some(x.dtype()))?),
            _ => None,
        };
        let key = || format!("{pairs:?},{mode:?},{}", cv.is_some());
        let owned = pairs.clone();
        let xs: Vec<Tensor> = [x].into_iter().chain(cv.clone()).collect();
        let f = move |xs: &[Tensor]| ops::pad(&xs[0], &owned, mode, xs.get(1));
        Ok(call_n(py, "PadV2", key, &xs, f)?.into())
    }

    /// The block of ``input_`` starting at ``begin`` of extent ``size`` (-1: to the end).
    /// TF equivalent: ``tf.slice``.
    ///
    /// >>> print(gt.slice(gt.constant([[1, 2, 3], [4, 5, 6]]), [0, 1], [2, -1]))
    /// gt.Tensor(
    /// [[2 3]
    ///  [5 6]], shape=(2, 2), dtype=int32)
    #[pyfunction]
    #[pyo3(signature = (input_, begin, size, name=None))]
    fn slice(
        py: Python<'_>,
        input_: &Bound<'_, PyAny>,
        begin: &Bound<'_, PyAny>,
        size: &Bound<'_, PyAny>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let x = to_tensor(input_, None)?;
        let b = shape_arg(begin)?;
        let s = shape_arg(size)?;
        let key = || format!("{b:?},{s:?}");
        let (b2, s2) = (b.clone(), s.clone());
        Ok(call(py, "Slice", key, &x, move |x| ops::slice(x, &b2, &s2))?.into())
    }

    expose! {
        fn tile in [gt]: "(input: TensorLike, multiples: ShapeLike, name: str | None = None) -> Tensor";
        fn pad in [gt]: "(tensor: TensorLike, paddings: TensorLike, mode: str = 'CONSTANT', constant_values: TensorLike | None = None, name: str | None = None) -> Tensor";
        fn slice in [gt]: "(input_: TensorLike, begin: ShapeLike, size: TensorLike, name: str | None = None) -> Tensor";
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::square;
    use crate::ops::testutil::{close, grad, grad2, t64, vals};

    #[test]
    fn tile_repeats_and_sums_back() {
        let x = t64(&[1., 2.], &[2]);
        close(&vals(&tile(&x, &[2]).unwrap()), &[1., 2., 1., 2.]);
        let y = t64(&[1., 2.], &[2, 1]);
        let t = tile(&y, &[1, 3]).unwrap();
        assert_eq!(t.shape(), &[2, 3]);
        close(&vals(&t), &[1., 1., 1., 2., 2., 2.]);
        let w = t64(&[1., 2., 3., 4.], &[4]);
        close(&grad(&x, Some(&w), |x| tile(x, &[2]).unwrap()), &[4., 6.]);
        assert!(tile(&x, &[1, 2]).is_err());
    }

    #[test]
    fn pad_modes_and_their_gradients() {
        let x = t64(&[1., 2., 3.], &[3]);
        let nine = Tensor::scalar(9.0f64);
        let c = pad(&x, &[(1, 2)], PadMode::Constant, Some(&nine)).unwrap();
        close(&vals(&c), &[9., 1., 2., 3., 9., 9.]);
        let r = pad(&x, &[(2, 2)], PadMode::Reflect, None).unwrap();
        close(&vals(&r), &[3., 2., 1., 2., 3., 2., 1.]);
        let s = pad(&x, &[(2, 2)], PadMode::Symmetric, None).unwrap();
        close(&vals(&s), &[2., 1., 1., 2., 3., 3., 2.]);

        let w6 = t64(&[1., 2., 3., 4., 5., 6.], &[6]);
        close(
            &grad(&x, Some(&w6), |x| {
                pad(x, &[(1, 2)], PadMode::Constant, None).unwrap()
            }),
            &[2., 3., 4.],
        );
        let w7 = t64(&[1., 2., 3., 4., 5., 6., 7.], &[7]);
        close(
            &grad(&x, Some(&w7), |x| {
                pad(x, &[(2, 2)], PadMode::Reflect, None).unwrap()
            }),
            &[10., 12., 6.],
        );
        close(
            &grad(&x, Some(&w7), |x| {
                pad(x, &[(2, 2)], PadMode::Symmetric, None).unwrap()
            }),
            &[5., 12., 11.],
        );
        // The fold-back is itself differentiable: d²/dx² sum(pad(x)²) = 2 * copies.
        close(
            &grad2(&x, |x| {
                square(&pad(x, &[(2, 2)], PadMode::Reflect, None).unwrap()).unwrap()
            }),
            &[4., 6., 4.],
        );

        assert!(pad(&x, &[(3, 0)], PadMode::Reflect, None).is_err());
        assert!(pad(&x, &[(3, 0)], PadMode::Symmetric, None).is_ok());
        assert!(pad(&x, &[(4, 0)], PadMode::Symmetric, None).is_err());
        assert!(pad(&x, &[(1, 1), (1, 1)], PadMode::Constant, None).is_err());
        assert!(PadMode::parse("reflect").is_ok());
        assert!(PadMode::parse("wrap").is_err());
        let m = t64(&[1., 2., 3., 4.], &[2, 2]);
        let p = pad(&m, &[(1, 0), (0, 1)], PadMode::Constant, None).unwrap();
        assert_eq!(p.shape(), &[3, 3]);
        close(&vals(&p), &[0., 0., 0., 1., 2., 0., 3., 4., 0.]);
    }

    #[test]
    fn slice_takes_a_block_and_pads_the_gradient() {
        let x = t64(&[1., 2., 3., 4., 5., 6.], &[2, 3]);
        let s = slice(&x, &[0, 1], &[-1, 2]).unwrap();
        assert_eq!(s.shape(), &[2, 2]);
        close(&vals(&s), &[2., 3., 5., 6.]);
        close(
            &grad(&x, None, |x| slice(x, &[0, 1], &[-1, 2]).unwrap()),
            &[0., 1., 1., 0., 1., 1.],
        );
        assert!(slice(&x, &[0, 2], &[1, 2]).is_err());
        assert!(slice(&x, &[0], &[1]).is_err());
    }
}
