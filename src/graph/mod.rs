//! Graphs: a function traced once into a list of engine calls, run many times.
//!
//! A [`Graph`] is built by tracing ([`trace`]): the function runs once on example
//! inputs, and every engine call made through [`apply`] (the Python bindings route every
//! op through it) is recorded as a [`Node`] — the op's forward as a closure over its
//! non-tensor arguments, and which earlier values feed it. Variables are captured by
//! reference: a read is a node that reads the variable when the graph runs, an assign a
//! node that assigns it. Running a graph ([`Graph::run`]) calls the nodes in order with
//! no per-op binding work; the ops record on any active tape as they would eagerly, so
//! gradients (any order, jacobians, persistent and nested tapes) are the eager ones.
//!
//! Control flow is graph nodes too: [`Graph::cond`] picks one of two subgraphs by a
//! scalar predicate, [`Graph::while_loop`] runs a body subgraph while a condition
//! subgraph gives true. Subgraphs read values of the enclosing trace through extra
//! inputs that tracing adds by itself.
//!
//! Before a graph runs, [`Graph::optimize`] removes what no output or effect needs,
//! folds subexpressions of constants, merges repeated computations and fuses chains of
//! elementwise ops into one tiled pass (see `fuse`).

mod call;
mod chain;
mod fuse;
mod passes;
mod tapes;
mod trace;

use std::fmt;
use std::sync::Arc;

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;
use crate::variable::Variable;

pub use tapes::{
    flatten_grads, record_acc_use, record_tape_use, tape_forward, AccCall, AccUse, SourceRef,
    TapeKey, TapeSpec, TAPE_OPS,
};
pub use trace::{
    apply, apply_stateful, apply_stateful_keyed, constant, is_tracing, lookup, note_shape_read,
    paused, peek_static_shape, record_effect, record_effect_keyed, resume, scratch, static_shape,
    suspend, symbolic_name, trace, trace_subgraph, traced_variables, StaticShape, Traced,
};
pub(crate) use trace::{on_variable_assign, on_variable_read};

/// `f(x)` for an elementwise unary op (`ops::exp`, ...): run now, and recorded (fusable)
/// while tracing. The Rust way to write a traced function's elementwise steps.
pub fn elementwise1(f: fn(&Tensor) -> Result<Tensor>, x: &Tensor) -> Result<Tensor> {
    if !is_tracing() {
        return f(x);
    }
    let key = format!("{:p}", f as *const ());
    Ok(apply(
        "Unary",
        Some(key),
        Some(Elementwise::Unary(f)),
        &[x],
        move |a| Ok(vec![f(&a[0])?]),
    )?
    .remove(0))
}

/// `f(x, y)` for an elementwise binary op with broadcasting (`ops::add`, ...), as
/// [`elementwise1`].
pub fn elementwise2(
    f: fn(&Tensor, &Tensor) -> Result<Tensor>,
    x: &Tensor,
    y: &Tensor,
) -> Result<Tensor> {
    if !is_tracing() {
        return f(x, y);
    }
    let key = format!("{:p}", f as *const ());
    Ok(apply(
        "Binary",
        Some(key),
        Some(Elementwise::Binary(f)),
        &[x, y],
        move |a| Ok(vec![f(&a[0], &a[1])?]),
    )?
    .remove(0))
}

/// Any other op on `xs` (a matmul, a reduction with its axes captured): `f` owns the
/// op's other arguments; `name` and `key` (those arguments as text) identify repeats.
pub fn op<F>(name: &str, key: &str, xs: &[&Tensor], f: F) -> Result<Tensor>
where
    F: Fn(&[Tensor]) -> Result<Tensor> + Send + Sync + 'static,
{
    if !is_tracing() {
        let owned: Vec<Tensor> = xs.iter().map(|t| (*t).clone()).collect();
        return f(&owned);
    }
    Ok(apply(name, Some(key.to_string()), None, xs, move |a| {
        Ok(vec![f(a)?])
    })?
    .remove(0))
}

/// A node's forward: output tensors from input tensors.
pub type Forward = Arc<dyn Fn(&[Tensor]) -> Result<Vec<Tensor>> + Send + Sync>;

/// Where a node's input comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// Argument `i` of the graph.
    Input(u32),
    /// A tensor fixed when the graph was traced (a captured eager tensor or a literal).
    Const(u32),
    /// Output `k` of node `i`.
    Node(u32, u32),
}

/// What a node does when the graph runs.
#[derive(Clone)]
pub enum Kind {
    /// An engine call.
    Call(Forward),
    /// Reads a variable (its value at that point of the run).
    Read(Variable),
    /// Runs `then` when input 0 (a scalar) is true, else `otherwise`, on the other inputs.
    Cond {
        then: Arc<Graph>,
        otherwise: Arc<Graph>,
    },
    /// Loop variables are the first `n` inputs, the rest are read by both subgraphs:
    /// while `cond(vars, extra)` is true, `vars = body(vars, extra)`.
    While {
        cond: Arc<Graph>,
        body: Arc<Graph>,
        n: usize,
    },
}

/// One recorded call.
#[derive(Clone)]
pub struct Node {
    /// TF's op type name (or a description), for errors and drawings.
    pub name: String,
    /// The call's non-tensor arguments as text: two nodes with the same name, key and
    /// inputs compute the same thing. `None`: never merged.
    pub key: Option<String>,
    /// An elementwise op (unary, or binary with broadcasting): fusable.
    pub elementwise: Option<Elementwise>,
    pub kind: Kind,
    pub inputs: Vec<Value>,
    pub outputs: usize,
    /// Has an effect beyond its outputs (assigns, prints, draws random numbers): always
    /// kept, never merged or folded, run in order.
    pub stateful: bool,
    /// Where the traced code made the call (`file:line`, from the origin hook), named in
    /// errors the node raises when the graph runs.
    pub origin: Option<Arc<str>>,
}

static ORIGIN_HOOK: std::sync::OnceLock<fn() -> Option<String>> = std::sync::OnceLock::new();

/// Sets how tracing learns where the traced code is (the Python bindings give the user's
/// `file:line`); the first hook set stays.
pub fn set_origin_hook(hook: fn() -> Option<String>) {
    let _ = ORIGIN_HOOK.set(hook);
}

fn origin() -> Option<Arc<str>> {
    ORIGIN_HOOK.get().and_then(|h| h()).map(Arc::from)
}

/// `e` with the place the failing node was traced at, for errors about the arguments.
fn located(e: Error, node: &Node) -> Error {
    let Some(at) = &node.origin else { return e };
    match e {
        Error::InvalidArgument { op, msg } => Error::InvalidArgument {
            op,
            msg: format!("{msg} (in the traced function at {at})"),
        },
        Error::ShapeMismatch { op, lhs, rhs } => Error::InvalidArgument {
            op,
            msg: format!(
                "incompatible shapes: {lhs:?} vs. {rhs:?} (in the traced function at {at})"
            ),
        },
        Error::DType { op, msg } => Error::DType {
            op,
            msg: format!("{msg} (in the traced function at {at})"),
        },
        other => other,
    }
}

/// The kernel of an elementwise node, for fusion.
#[derive(Clone, Copy)]
pub enum Elementwise {
    Unary(fn(&Tensor) -> Result<Tensor>),
    Binary(fn(&Tensor, &Tensor) -> Result<Tensor>),
}

/// The dtype and (partly known) shape a graph argument accepts: `None` dims take any
/// size, a `None` shape any rank.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Spec {
    pub dtype: DType,
    pub shape: Option<Vec<Option<usize>>>,
}

impl Spec {
    /// The spec of exactly this tensor's dtype and shape.
    pub fn of(t: &Tensor) -> Spec {
        Spec {
            dtype: t.dtype(),
            shape: Some(t.shape().iter().map(|&d| Some(d)).collect()),
        }
    }

    /// Whether `t` fits the spec.
    pub fn accepts(&self, t: &Tensor) -> bool {
        if t.dtype() != self.dtype {
            return false;
        }
        match &self.shape {
            None => true,
            Some(dims) => {
                dims.len() == t.ndim()
                    && dims
                        .iter()
                        .zip(t.shape())
                        .all(|(d, &n)| d.is_none_or(|d| d == n))
            }
        }
    }
}

/// A partly known shape as TF prints it: `(None, 3)`, `(5,)`, `<unknown>` (`None`).
pub fn shape_text(shape: Option<&[Option<usize>]>) -> String {
    let Some(d) = shape else {
        return "<unknown>".to_string();
    };
    let dims: Vec<String> = d
        .iter()
        .map(|d| d.map_or("None".to_string(), |n| n.to_string()))
        .collect();
    match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shape = shape_text(self.shape.as_deref());
        write!(f, "TensorSpec(shape={shape}, dtype={})", self.dtype.name())
    }
}

/// A traced function: arguments, constants, nodes in the order they ran, outputs.
#[derive(Clone, Default)]
pub struct Graph {
    pub(crate) inputs: Vec<Spec>,
    pub(crate) consts: Vec<Tensor>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) outputs: Vec<Value>,
    /// The traced code read the static shape of a value computed from the inputs: the
    /// graph may hold that shape as a constant, so it is only valid for inputs of the
    /// shapes it was traced with.
    pub(crate) shape_dependent: bool,
    /// Per node, the node outputs it reads last ([`Graph::last_reads`]), worked out on
    /// the first run.
    pub(crate) last_reads: std::sync::OnceLock<Arc<LastReads>>,
}

/// Per node, the node outputs `(node, output)` no later node and no graph output reads:
/// a run drops them once the node ran, so it holds only values still to be read
/// (outputs nothing reads are dropped right after the node that made them).
type LastReads = Vec<Vec<(u32, u32)>>;

impl Graph {
    /// The argument specs.
    pub fn inputs(&self) -> &[Spec] {
        &self.inputs
    }

    /// The recorded nodes, in run order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Whether the traced code read a static shape of a traced value (then the graph is
    /// only valid for its example's shapes: a caller traces again for others).
    pub fn shape_dependent(&self) -> bool {
        self.shape_dependent
    }

    /// How many outputs a run returns.
    pub fn num_outputs(&self) -> usize {
        self.outputs.len()
    }

    /// Runs the graph on `args` (one per input spec, checked against it).
    pub fn run(&self, args: &[Tensor]) -> Result<Vec<Tensor>> {
        if args.len() != self.inputs.len() {
            return Err(Error::invalid(
                "Graph::run",
                format!(
                    "the graph takes {} argument(s), got {}",
                    self.inputs.len(),
                    args.len()
                ),
            ));
        }
        for (i, (spec, a)) in self.inputs.iter().zip(args).enumerate() {
            if !spec.accepts(a) {
                return Err(Error::invalid(
                    "Graph::run",
                    format!(
                        "argument {i} (dtype {}, shape {:?}) does not match {spec}",
                        a.dtype().name(),
                        a.shape()
                    ),
                ));
            }
        }
        if is_tracing() {
            // Run inside another trace: one node of that trace, running this graph.
            let g = Arc::new(self.clone());
            let ins: Vec<&Tensor> = args.iter().collect();
            return trace::apply_node(
                "PartitionedCall",
                true,
                &ins,
                Arc::new(move |a: &[Tensor]| tapes::with_frame(|| g.run_unchecked(a))),
                || paused(|| tapes::with_frame(|| self.run_unchecked(args))),
            );
        }
        if crate::tape::any_active() {
            if let Some(r) = call::run_as_one_node(self, args) {
                return r;
            }
        }
        tapes::with_frame(|| self.run_unchecked(args))
    }

    /// Which values each node reads last (see [`LastReads`]); cached, and worked out
    /// again if nodes were added since.
    fn last_reads(&self) -> Arc<LastReads> {
        let work = || {
            let mut last: rustc_hash::FxHashMap<(u32, u32), usize> = Default::default();
            for (i, node) in self.nodes.iter().enumerate() {
                for k in 0..node.outputs {
                    last.insert((i as u32, k as u32), i);
                }
                for v in &node.inputs {
                    if let Value::Node(n, k) = *v {
                        last.insert((n, k), i);
                    }
                }
            }
            for v in &self.outputs {
                if let Value::Node(n, k) = *v {
                    last.remove(&(n, k));
                }
            }
            let mut reads: LastReads = vec![Vec::new(); self.nodes.len()];
            for ((n, k), i) in last {
                reads[i].push((n, k));
            }
            Arc::new(reads)
        };
        let cached = self.last_reads.get_or_init(work);
        if cached.len() == self.nodes.len() {
            cached.clone()
        } else {
            work()
        }
    }

    /// Runs the graph; `args` already match the specs (subgraphs of control flow).
    /// Each node output is dropped after its last reader, so memory is released (and
    /// reused, cache-warm) as the run goes, as an eager program's temporaries are.
    fn run_unchecked(&self, args: &[Tensor]) -> Result<Vec<Tensor>> {
        let last_reads = self.last_reads();
        let mut slots: Vec<Vec<Option<Tensor>>> = Vec::with_capacity(self.nodes.len());
        let get = |slots: &Vec<Vec<Option<Tensor>>>, v: Value| -> Result<Tensor> {
            match v {
                Value::Input(i) => Ok(args[i as usize].clone()),
                Value::Const(i) => Ok(self.consts[i as usize].clone()),
                Value::Node(n, k) => slots[n as usize][k as usize].clone().ok_or_else(|| {
                    Error::Internal(format!("graph value {n}:{k} read after its last reader"))
                }),
            }
        };
        let mut ins: Vec<Tensor> = Vec::new();
        for (i, node) in self.nodes.iter().enumerate() {
            crate::interrupt::check()?;
            ins.clear();
            for &v in &node.inputs {
                ins.push(get(&slots, v)?);
            }
            let outs = run_node(node, &ins).map_err(|e| located(e, node))?;
            ins.clear();
            if outs.len() != node.outputs {
                return Err(Error::Internal(format!(
                    "graph node {} gave {} outputs where its trace gave {}",
                    node.name,
                    outs.len(),
                    node.outputs
                )));
            }
            slots.push(outs.into_iter().map(Some).collect());
            for &(n, k) in &last_reads[i] {
                slots[n as usize][k as usize] = None;
            }
        }
        self.outputs.iter().map(|&v| get(&slots, v)).collect()
    }

    /// Constant folding, common subexpressions, dead code elimination and fusion of
    /// elementwise chains (see `fuse`), in that order; the result computes the same outputs and effects.
    pub fn optimize(&self) -> Result<Graph> {
        let mut g = passes::fold_constants(self)?;
        g = passes::merge_common(&g);
        g = passes::remove_dead(&g);
        Ok(fuse::fuse_elementwise(&g))
    }

    /// Counts of nodes by name (for tests and drawings).
    pub fn op_counts(&self) -> Vec<(String, usize)> {
        let mut out: Vec<(String, usize)> = Vec::new();
        for n in &self.nodes {
            match out.iter_mut().find(|(k, _)| *k == n.name) {
                Some((_, c)) => *c += 1,
                None => out.push((n.name.clone(), 1)),
            }
        }
        out
    }
}

/// TF's `If` op (and `While`, see `run_node`) takes every tensor its branches read as an input, so its outputs are
/// connected to all of them whichever branch runs: an input the taken branch does not
/// use gets a zero gradient and gives a zero tangent, not `None`. An output the branch
/// computed without an input is made to depend on it with a zero term (the sum of an
/// empty slice of it, selected away): its value is unchanged, bit for bit.
fn connect_cond_outputs(outs: Vec<Tensor>, ins: &[Tensor]) -> Result<Vec<Tensor>> {
    use crate::ops;
    let diff: Vec<&Tensor> = ins
        .iter()
        .filter(|t| t.dtype().is_differentiable())
        .collect();
    if diff.is_empty() {
        return Ok(outs);
    }
    let no = Tensor::scalar(false);
    outs.into_iter()
        .map(|mut o| {
            if !o.dtype().is_differentiable() {
                return Ok(o);
            }
            for x in &diff {
                let flat = ops::reshape(x, &[x.size()])?;
                let empty = ops::slice(&flat, &[0], &[0])?;
                let zero = ops::cast(&ops::reduce_sum(&empty, None, false)?, o.dtype())?;
                o = ops::where_(&no, &zero, &o)?;
            }
            Ok(o)
        })
        .collect()
}

fn run_node(node: &Node, ins: &[Tensor]) -> Result<Vec<Tensor>> {
    match &node.kind {
        Kind::Call(f) => f(ins),
        Kind::Read(v) => Ok(vec![resolve(v).read()]),
        Kind::Cond { then, otherwise } => {
            let branch = if truth(&ins[0], "cond")? {
                then
            } else {
                otherwise
            };
            let outs = branch.run_unchecked(&ins[1..])?;
            if crate::tape::any_active() {
                connect_cond_outputs(outs, &ins[1..])
            } else {
                Ok(outs)
            }
        }
        Kind::While { cond, body, n } => {
            let mut vars: Vec<Tensor> = ins[..*n].to_vec();
            let extra = &ins[*n..];
            let mut args: Vec<Tensor> = Vec::with_capacity(ins.len());
            loop {
                args.clear();
                args.extend(vars.iter().cloned());
                args.extend(extra.iter().cloned());
                let c = cond.run_unchecked(&args)?;
                if !truth(&c[0], "while_loop")? {
                    // TF's `While` takes every loop variable and captured tensor as an
                    // input: each output is connected to all of them (a zero gradient,
                    // not None, for one it does not depend on), as for `If`.
                    if crate::tape::any_active() {
                        return connect_cond_outputs(vars, ins);
                    }
                    return Ok(vars);
                }
                crate::interrupt::check()?;
                vars = body.run_unchecked(&args)?;
                for (i, v) in vars.iter().enumerate() {
                    let spec = &body.inputs[i];
                    if v.dtype() != spec.dtype {
                        return Err(Error::invalid(
                            "while_loop",
                            format!(
                                "loop variable {i} enters the loop as {} but the body returns {}",
                                spec.dtype.name(),
                                v.dtype().name()
                            ),
                        ));
                    }
                }
            }
        }
    }
}

thread_local! {
    /// Variables a run uses in place of the ones its graph was traced with (a traced
    /// function called with other variables as arguments), innermost run last.
    static SUBSTITUTES: std::cell::RefCell<Vec<Vec<(Variable, Variable)>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The variable a running graph uses for `v`: its substitute in this run, or `v`.
pub(crate) fn resolve(v: &Variable) -> Variable {
    SUBSTITUTES.with(|s| {
        s.borrow()
            .last()
            .and_then(|subs| subs.iter().find(|(t, _)| t.id() == v.id()))
            .map(|(_, a)| a.clone())
            .unwrap_or_else(|| v.clone())
    })
}

impl Graph {
    /// [`Graph::run`] with variables the function takes as arguments: each pair is a
    /// variable the trace saw and the one this run reads and assigns instead.
    pub fn run_with_variables(
        &self,
        args: &[Tensor],
        variables: Vec<(Variable, Variable)>,
    ) -> Result<Vec<Tensor>> {
        for (traced, actual) in &variables {
            if traced.dtype() != actual.dtype() || traced.shape() != actual.shape() {
                return Err(Error::invalid(
                    "Graph::run",
                    format!(
                        "variable '{}' ({} {:?}) does not match the traced '{}' ({} {:?})",
                        actual.name(),
                        actual.dtype().name(),
                        actual.shape(),
                        traced.name(),
                        traced.dtype().name(),
                        traced.shape()
                    ),
                ));
            }
        }
        struct Pop;
        impl Drop for Pop {
            fn drop(&mut self) {
                SUBSTITUTES.with(|s| s.borrow_mut().pop());
            }
        }
        SUBSTITUTES.with(|s| s.borrow_mut().push(variables));
        let _pop = Pop;
        self.run(args)
    }
}

/// The value of a scalar boolean predicate.
pub(crate) fn truth(t: &Tensor, op: &'static str) -> Result<bool> {
    if t.size() != 1 {
        return Err(Error::invalid(
            op,
            format!("the predicate must be a scalar, got shape {:?}", t.shape()),
        ));
    }
    let b = crate::ops::cast(t, DType::Bool)?;
    match b.data() {
        crate::tensor::Data::Bool(a) => Ok(*a.iter().next().unwrap_or(&false)),
        _ => Err(Error::Internal("cast to bool gave another dtype".into())),
    }
}

impl Graph {
    /// `then()` if `pred` else `otherwise()`, traced as one node when a trace is active
    /// (both branches traced; they must give the same number of outputs and dtypes),
    /// run directly otherwise.
    pub fn cond(
        pred: &Tensor,
        then: impl FnOnce() -> Result<Vec<Tensor>>,
        otherwise: impl FnOnce() -> Result<Vec<Tensor>>,
    ) -> Result<Vec<Tensor>> {
        if !is_tracing() {
            return if truth(pred, "cond")? {
                then()
            } else {
                otherwise()
            };
        }
        trace::cond(pred, then, otherwise)
    }

    /// `while cond(vars): vars = body(vars)`, traced as one node when a trace is active.
    pub fn while_loop(
        vars: Vec<Tensor>,
        mut cond: impl FnMut(&[Tensor]) -> Result<Tensor>,
        mut body: impl FnMut(&[Tensor]) -> Result<Vec<Tensor>>,
    ) -> Result<Vec<Tensor>> {
        if !is_tracing() {
            let mut vars = vars;
            loop {
                if !truth(&cond(&vars)?, "while_loop")? {
                    return Ok(vars);
                }
                crate::interrupt::check()?;
                let next = body(&vars)?;
                check_loop_vars(&vars, &next)?;
                vars = next;
            }
        }
        trace::while_loop(vars, &mut cond, &mut body)
    }
}

pub(crate) fn check_loop_vars(before: &[Tensor], after: &[Tensor]) -> Result<()> {
    if before.len() != after.len() {
        return Err(Error::invalid(
            "while_loop",
            format!(
                "the body returns {} loop variable(s), the loop has {}",
                after.len(),
                before.len()
            ),
        ));
    }
    for (i, (a, b)) in before.iter().zip(after).enumerate() {
        if a.dtype() != b.dtype() {
            return Err(Error::invalid(
                "while_loop",
                format!(
                    "loop variable {i} enters the loop as {} but the body returns {}",
                    a.dtype().name(),
                    b.dtype().name()
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
