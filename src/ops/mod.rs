//! Ops: forward functions with TF's names, and their gradient rules.
//!
//! Each op family lives in one file. A differentiable op is a struct implementing
//! [`Op`]; its public function (named like TF's Python function) computes the value
//! with a kernel and calls `record` with the struct, which every tape watching an
//! input stores. Gradient rules are written with these same public functions, so a
//! backward pass run while another tape records is itself recorded (higher order for
//! free).

use smallvec::SmallVec;

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tape::arena::Node;
use crate::tensor::Tensor;

mod binary;
mod complex;
mod concat;
mod conv;
mod create;
mod einsum;
mod index;
mod linalg;
mod logic;
mod matmul;
mod nn;
mod nondiff;
pub mod philox;
pub mod philox_rejection;
pub mod random;
mod reduce;
mod remap;
mod reshape;
#[macro_use]
mod unary;
mod segment;
mod special;

pub use binary::*;
pub use complex::*;
pub use concat::*;
pub use conv::*;
pub use create::*;
pub use einsum::*;
pub use index::*;
pub use linalg::*;
pub use logic::*;
pub use matmul::*;
pub use nn::*;
pub use nondiff::*;
pub use reduce::*;
pub use remap::*;
pub use reshape::*;
pub use segment::*;
pub use special::*;
pub use unary::*;

pub(crate) use crate::tape::stack::record;

/// Every family's saved-op rows (`saved_model::table`): how their traced nodes are saved.
pub(crate) const SAVED: &[&[crate::saved_model::OpDef]] = &[
    concat::saved::SAVED,
    conv::saved::SAVED,
    create::saved::SAVED,
    einsum::saved::SAVED,
    index::saved::SAVED,
    linalg::saved::SAVED,
    matmul::saved::SAVED,
    nn::saved::SAVED,
    philox::saved::SAVED,
    philox_rejection::saved::SAVED,
    random::saved::SAVED,
    remap::saved::SAVED,
    reshape::saved::SAVED,
    segment::saved::SAVED,
];

/// Every family's Python functions (its `python` module's `expose!` table).
#[cfg(feature = "python")]
pub(crate) const PYTHON: &[crate::python::expose::Family] = &[
    family!(binary),
    family!(complex),
    family!(concat),
    family!(conv),
    family!(create),
    family!(einsum),
    family!(index),
    family!(linalg),
    family!(logic),
    family!(matmul),
    family!(nn),
    family!(philox),
    family!(philox_rejection),
    family!(reduce),
    family!(random),
    family!(remap),
    family!(reshape),
    family!(segment),
    family!(special),
    family!(unary),
];

#[cfg(feature = "python")]
macro_rules! family {
    ($f:ident) => {
        crate::python::expose::Family {
            register: $f::python::register,
            exports: $f::python::EXPORTS,
        }
    };
}
#[cfg(feature = "python")]
use family;

/// Gradients of an op's inputs, one per input (`None`: no gradient / not needed).
pub type Grads = SmallVec<[Option<Tensor>; 2]>;

/// Which inputs and outputs a recorded node keeps for its gradient: bit `i` of a mask
/// keeps input (output) `i`; a mask of all ones ([`Saves::ALL`]) keeps every one of
/// them, however many there are (a custom gradient may have any number of inputs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Saves {
    pub inputs: u64,
    pub outputs: u64,
}

impl Saves {
    /// The mask that keeps every input (or output).
    pub const ALL: u64 = u64::MAX;
    pub const NOTHING: Saves = Saves {
        inputs: 0,
        outputs: 0,
    };
    pub const INPUTS: Saves = Saves {
        inputs: Saves::ALL,
        outputs: 0,
    };
    pub const OUTPUT: Saves = Saves {
        inputs: 0,
        outputs: 1,
    };
    pub const INPUTS_AND_OUTPUT: Saves = Saves {
        inputs: Saves::ALL,
        outputs: 1,
    };
    /// Every input and every output.
    pub const EVERYTHING: Saves = Saves {
        inputs: Saves::ALL,
        outputs: Saves::ALL,
    };
    /// Saves input `i` only (`i < 64`).
    pub const fn input_only(i: u8) -> Saves {
        Saves {
            inputs: 1 << i,
            outputs: 0,
        }
    }
    pub fn input(self, i: usize) -> bool {
        Saves::has(self.inputs, i)
    }
    pub fn output(self, i: usize) -> bool {
        Saves::has(self.outputs, i)
    }
    fn has(mask: u64, i: usize) -> bool {
        mask == Saves::ALL || (i < 64 && mask & (1 << i) != 0)
    }
}

/// A differentiable primitive: its TF op type name and its gradient rule.
pub trait Op: Send + Sync + 'static {
    /// TF's op type name ("Exp", "MatMul", "AddV2"): the key of gradient overrides.
    fn name(&self) -> &'static str;
    /// What the node must keep for [`Op::vjp`]. Default: all inputs.
    fn saves(&self) -> Saves {
        Saves::INPUTS
    }
    /// Vector-Jacobian product: input gradients from output gradients `dys`, written
    /// with public ops. Gradients may be output-shaped: the tape sums broadcast
    /// dimensions away.
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads>;
    /// Jacobian-vector product (forward mode): output tangents from input tangents
    /// (`None` where an input has none), written with public ops like [`Op::vjp`] (so
    /// that outer tapes and accumulators see them: higher order, forward over reverse).
    /// `cx` reads every input and output (all are kept for forward mode), and
    /// `cx.needs(i)` is true where input `i` has a tangent. `None` (the default): forward
    /// mode transposes [`Op::vjp`] (TF's generic rule, exact for any VJP written in
    /// engine ops, at the cost of one VJP and one backward pass through it). Elementwise
    /// ops return [`elementwise_jvp`]; linear ops apply themselves to the tangent.
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        let _ = (cx, tangents);
        None
    }
    /// Whether [`Op::vjp`] accepts output gradients with leading batch dimensions
    /// (`cx.batch()` of them, used by `jacobian`): elementwise rules do by
    /// broadcasting; shape-aware rules must prefix the batch dimensions themselves.
    /// Rules that do not are run once per batch row.
    fn batched(&self) -> bool {
        false
    }
    /// TF's sparse gradient (`IndexedSlices`) for input 0 from the output gradient `dy`
    /// (no batch axes): the rows of a gather. `None`: the op has no sparse gradient.
    /// Asked only by [`crate::tape::GradientTape::gradient_sparse`].
    fn sparse_vjp(&self, cx: &VjpCx<'_>, dy: &Tensor) -> Option<Result<Sparse>> {
        let _ = (cx, dy);
        None
    }
    /// [`Op::vjp`] giving sparse input gradients (TF's `IndexedSlices`) where it has
    /// them, for any number of inputs (no batch axes): a graph call's rule sweeps its
    /// own tape keeping them. `None` (the default): the op has none beyond
    /// [`Op::sparse_vjp`]. Asked only by [`crate::tape::GradientTape::gradient_sparse`].
    fn vjp_keeping_sparse(
        &self,
        cx: &VjpCx<'_>,
        dys: &[Tensor],
    ) -> Option<Result<Vec<Option<crate::tape::Grad>>>> {
        let _ = (cx, dys);
        None
    }
    /// Whether the op is an identity of its one input whose gradient passes a sparse
    /// gradient through unchanged (TF's `Identity` and `ReadVariableOp`).
    fn passes_sparse(&self) -> bool {
        false
    }
    /// Whether [`Op::vjp`] calls back into user code (a custom or registered gradient
    /// function, possibly Python's): such rules run on the thread that asked for the
    /// gradient, never on a pool thread (see [`crate::pool`]).
    fn calls_user_code(&self) -> bool {
        false
    }
    /// What the rule keeps alive for a binding (a Python callback), so that the
    /// binding's garbage collector can see through a tape that holds it.
    fn owned(&self) -> Option<&crate::custom::Owned> {
        None
    }
    /// Whether [`Op::vjp`] asks which output gradients are absent
    /// ([`VjpCx::has_gradient`]): the sweep then passes a scalar zero in their place
    /// instead of a zero tensor of the output's shape (a graph call's node has an output
    /// for every value its backward reads, most of them without a gradient).
    fn knows_absent(&self) -> bool {
        false
    }
}

/// A sparse gradient, TF's `IndexedSlices`: the dense gradient (of `dense_shape`) is
/// `values[i]` added at row `indices[i]` of zeros, for every `i`.
#[derive(Clone, Debug)]
pub struct Sparse {
    /// `[k, dense_shape[1..]..]`.
    pub values: Tensor,
    /// `[k]`, int32 or int64 (as the gather's indices).
    pub indices: Tensor,
    pub dense_shape: Vec<usize>,
}

impl Sparse {
    /// The dense gradient: the rows scatter-added (recorded, so differentiable in
    /// `values`).
    pub fn to_dense(&self) -> Result<Tensor> {
        let rows = index::index_values("UnsortedSegmentSum", &self.indices, &[DType::I16])?;
        remap::scatter_rows(&self.values, &rows, &self.dense_shape, 0)
    }
    /// The concatenation of sparse gradients of one dense shape (TF's aggregation:
    /// indices of mixed dtypes become int64).
    pub fn concat(parts: &[Sparse]) -> Result<Sparse> {
        let mixed = parts
            .iter()
            .any(|p| p.indices.dtype() != parts[0].indices.dtype());
        let indices: Vec<Tensor> = parts
            .iter()
            .map(|p| {
                if mixed {
                    cast(&p.indices, DType::I64)
                } else {
                    Ok(p.indices.clone())
                }
            })
            .collect::<Result<_>>()?;
        let values: Vec<Tensor> = parts.iter().map(|p| p.values.clone()).collect();
        Ok(Sparse {
            values: concat(&values, 0)?,
            indices: concat(&indices, 0)?,
            dense_shape: parts[0].dense_shape.clone(),
        })
    }
}

/// What a gradient rule may read of its node.
pub struct VjpCx<'a> {
    node: &'a Node,
    needs: &'a [bool],
    batch: usize,
    /// Which outputs have a gradient, when the sweep says ([`Op::knows_absent`]).
    present: Option<&'a [bool]>,
}

impl<'a> VjpCx<'a> {
    pub(crate) fn new(node: &'a Node, needs: &'a [bool], batch: usize) -> Self {
        VjpCx {
            node,
            needs,
            batch,
            present: None,
        }
    }
    /// The same, telling which outputs have a gradient.
    pub(crate) fn with_present(self, present: &'a [bool]) -> Self {
        VjpCx {
            present: Some(present),
            ..self
        }
    }
    /// The same node with other inputs wanted.
    pub fn with_needs<'b>(&'b self, needs: &'b [bool]) -> VjpCx<'b> {
        VjpCx {
            node: self.node,
            needs,
            batch: self.batch,
            present: self.present,
        }
    }
    /// Whether output `i` has a gradient (always true unless the op
    /// [`knows_absent`](Op::knows_absent): then an absent one is a scalar zero).
    pub fn has_gradient(&self, i: usize) -> bool {
        self.present.is_none_or(|p| p[i])
    }
    /// The node's op (its rule, or the override that replaced it).
    pub(crate) fn op(&self) -> &dyn Op {
        &*self.node.op
    }
    /// Number of outputs.
    pub fn num_outputs(&self) -> usize {
        self.node.outputs.len()
    }
    /// Dtype of output `i`.
    pub fn output_dtype(&self, i: usize) -> DType {
        self.node.outputs[i].dtype
    }
    /// Number of leading batch dimensions on the output gradients (0 outside
    /// `jacobian`).
    pub fn batch(&self) -> usize {
        self.batch
    }
    /// `shape` prefixed with the batch dimensions of `dy`.
    pub fn batched(&self, dy: &Tensor, shape: &[usize]) -> Vec<usize> {
        let mut s = dy.shape()[..self.batch].to_vec();
        s.extend_from_slice(shape);
        s
    }
    /// Whether input `i`'s gradient is wanted (skip the work otherwise).
    pub fn needs(&self, i: usize) -> bool {
        self.needs.get(i).copied().unwrap_or(false)
    }
    pub fn num_inputs(&self) -> usize {
        self.node.inputs.len()
    }
    /// Saved input `i` (the op must list it in [`Op::saves`]).
    pub fn input(&self, i: usize) -> Result<&Tensor> {
        self.node
            .saved_inputs
            .get(i)
            .and_then(|t| t.as_ref())
            .ok_or_else(|| {
                Error::Internal(format!("{}: input {i} was not saved", self.node.op.name()))
            })
    }
    /// Saved output `i` (the op must list it in [`Op::saves`]).
    pub fn output(&self, i: usize) -> Result<&Tensor> {
        self.node
            .saved_outputs
            .get(i)
            .and_then(|t| t.as_ref())
            .ok_or_else(|| {
                Error::Internal(format!("{}: output {i} was not saved", self.node.op.name()))
            })
    }
    pub fn input_shape(&self, i: usize) -> &[usize] {
        &self.node.inputs[i].shape
    }
    pub fn input_dtype(&self, i: usize) -> DType {
        self.node.inputs[i].dtype
    }
    pub fn output_shape(&self, i: usize) -> &[usize] {
        &self.node.outputs[i].shape
    }
    pub fn op_name(&self) -> &'static str {
        self.node.op.name()
    }
}

/// Runs the gradient rule of a node (or the override registered for its op type).
pub(crate) fn run_vjp(cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
    cx.node.op.vjp(cx, dys)
}

/// The forward rule of an elementwise op (one output, inputs broadcast to it), from its
/// VJP: its Jacobian for each input is a diagonal scaling after broadcasting, so for
/// real dtypes `J_i t_i` is the VJP's output-shaped gradient for `dy = broadcast(t_i)`.
/// `None` (use the generic rule) for complex dtypes (the VJP conjugates) and when the
/// rule does not give an output-shaped gradient.
pub fn elementwise_jvp(cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
    if cx.num_outputs() != 1 || !cx.output_dtype(0).is_floating() {
        return None;
    }
    if (0..cx.num_inputs()).any(|i| tangents[i].is_some() && !cx.input_dtype(i).is_floating()) {
        return None;
    }
    let go = || -> Result<Option<Tensor>> {
        let out_shape = cx.output_shape(0).to_vec();
        let mut acc: Option<Tensor> = None;
        for (i, t) in tangents.iter().enumerate() {
            let Some(t) = t else { continue };
            let mut needs = vec![false; cx.num_inputs()];
            needs[i] = true;
            let dy = if t.shape() == out_shape.as_slice() {
                t.clone()
            } else {
                broadcast_to(t, &out_shape)?
            };
            let g = cx.op().vjp(&cx.with_needs(&needs), &[dy])?;
            let Some(Some(g)) = g.into_iter().nth(i) else {
                continue;
            };
            if g.shape() != out_shape.as_slice() {
                return Ok(None);
            }
            acc = Some(match acc {
                None => g,
                Some(a) => add(&a, &g)?,
            });
        }
        Ok(acc)
    };
    match go() {
        Ok(Some(t)) => Some(Ok(grads![Some(t)])),
        Ok(None) => None,
        Err(e) => Some(Err(e)),
    }
}

/// `Grads` from a list of `Option<Tensor>` expressions.
#[macro_export]
#[doc(hidden)]
macro_rules! grads {
    ($($g:expr),* $(,)?) => {{
        let mut v: $crate::ops::Grads = smallvec::SmallVec::new();
        $(v.push($g);)*
        v
    }};
}
pub(crate) use grads;

/// The read of a variable into a tensor: an identity from the variable's id.
pub(crate) struct ReadVariable;

impl Op for ReadVariable {
    fn name(&self) -> &'static str {
        "ReadVariableOp"
    }
    fn batched(&self) -> bool {
        true
    }
    fn saves(&self) -> Saves {
        Saves::NOTHING
    }
    fn vjp(&self, _cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        Ok(grads![Some(dys[0].clone())])
    }
    fn passes_sparse(&self) -> bool {
        true
    }
}

/// Records a single-input, single-output op; returns the output.
/// A gradient rule's value in one fused elementwise pass, `|dy, v| body` over the
/// output gradient and a saved tensor of the same shape, when nothing on this thread
/// could record the backward pass (with a recording tape, the rule's composition of
/// engine ops must run instead, so that it is differentiable again). Evaluates to
/// `Result<Option<Tensor>>`: `None` when the fused form does not apply (a recording
/// tape, other shapes, a batched jacobian seed, non-contiguous data, non-float
/// dtypes), an error when its output cannot be allocated.
macro_rules! fused_grad {
    ($dy:expr, $v:expr, |$d:ident, $y:ident| $body:expr) => {{
        use $crate::kernels::elementwise::zip_contiguous;
        use $crate::tensor::Data;
        let (dy, v): (&Tensor, &Tensor) = ($dy, $v);
        if $crate::tape::stack::any_active() {
            Ok(None)
        } else {
            match (dy.data(), v.data()) {
                (Data::F32(a), Data::F32(b)) => zip_contiguous(a, b, |$d: f32, $y: f32| $body)
                    .map(|r| r.map(|r| Tensor::new(Data::F32(r.into_shared())))),
                (Data::F64(a), Data::F64(b)) => zip_contiguous(a, b, |$d: f64, $y: f64| $body)
                    .map(|r| r.map(|r| Tensor::new(Data::F64(r.into_shared())))),
                _ => Ok(None),
            }
        }
    }};
}
pub(crate) use fused_grad;

#[inline]
pub(crate) fn unary_out<O: Op>(op: O, x: &Tensor, out: Tensor) -> Result<Tensor> {
    record(op, &[x], &[&out])?;
    Ok(out)
}

/// Records a two-input, single-output op; returns the output.
#[inline]
pub(crate) fn binary_out<O: Op>(op: O, x: &Tensor, y: &Tensor, out: Tensor) -> Result<Tensor> {
    record(op, &[x, y], &[&out])?;
    Ok(out)
}

/// Helpers for the ops' unit tests.
#[cfg(test)]
pub(crate) mod testutil {
    use crate::tensor::Tensor;
    use crate::GradientTape;

    /// A float64 tensor of `shape` from `v`.
    pub fn t64(v: &[f64], shape: &[usize]) -> Tensor {
        Tensor::from_vec(v.to_vec(), shape).unwrap()
    }
    /// An int32 tensor.
    pub fn ti(v: &[i32], shape: &[usize]) -> Tensor {
        Tensor::from_vec(v.to_vec(), shape).unwrap()
    }
    /// Elements as f64 (any real dtype).
    pub fn vals(t: &Tensor) -> Vec<f64> {
        let t = crate::ops::cast(t, crate::DType::F64).unwrap();
        t.to_vec::<f64>().unwrap()
    }
    /// Asserts elementwise closeness.
    pub fn close(a: &[f64], b: &[f64]) {
        assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
        for (p, q) in a.iter().zip(b) {
            assert!((p - q).abs() <= 1e-9 * (1.0 + q.abs()), "{a:?} vs {b:?}");
        }
    }
    /// Gradient of `sum(f(x) * w)` with respect to `x` (`w` = ones when `None`).
    pub fn grad(x: &Tensor, w: Option<&Tensor>, f: impl Fn(&Tensor) -> Tensor) -> Vec<f64> {
        let g = GradientTape::new();
        let y = {
            let _r = g.enter();
            g.watch(x);
            let y = f(x);
            match w {
                Some(w) => {
                    crate::ops::reduce_sum(&crate::ops::multiply(&y, w).unwrap(), None, false)
                        .unwrap()
                }
                None => crate::ops::reduce_sum(&y, None, false).unwrap(),
            }
        };
        vals(&g.gradient1(&y, x).unwrap().expect("connected"))
    }
    /// Second derivative (elementwise sum) of `sum(f(x))` via nested tapes.
    pub fn grad2(x: &Tensor, f: impl Fn(&Tensor) -> Tensor) -> Vec<f64> {
        let outer = GradientTape::new();
        let g1 = {
            let _o = outer.enter();
            outer.watch(x);
            let inner = GradientTape::new();
            let y = {
                let _r = inner.enter();
                inner.watch(x);
                crate::ops::reduce_sum(&f(x), None, false).unwrap()
            };
            let g = inner.gradient1(&y, x).unwrap().unwrap();
            crate::ops::reduce_sum(&g, None, false).unwrap()
        };
        vals(&outer.gradient1(&g1, x).unwrap().expect("connected"))
    }
}
