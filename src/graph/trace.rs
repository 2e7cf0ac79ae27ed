//! Tracing: running a function once while every engine call it makes is recorded.
//!
//! Tracing is by example: the function runs on real input tensors, so every op computes
//! its value as usual, and [`apply`] also appends the op to the innermost active trace
//! of this thread. Tensors are known to a trace by id: a trace's inputs and the outputs
//! of its recorded calls are graph values; any other tensor an op reads is captured as
//! a constant of the graph (an eager tensor from outside, a converted literal), or — when
//! an enclosing trace knows it (a branch of `cond` reading a value of the function) —
//! becomes an extra input of the subgraph, fed by the enclosing trace.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use super::{check_loop_vars, truth, Elementwise, Forward, Graph, Kind, Node, Spec, Value};
use crate::error::{Error, Result};
use crate::tensor::{Tensor, TensorId};
use crate::variable::Variable;

struct Tracer {
    graph: Graph,
    /// Graph value of each tensor the trace knows.
    map: HashMap<TensorId, Value>,
    /// Constants by tensor id (a tensor captured twice is one constant).
    consts: HashMap<TensorId, u32>,
    /// Tensors of enclosing traces this trace reads; each became an input after the
    /// declared ones (a subgraph's implicit arguments).
    outer: Vec<Tensor>,
    /// Whether tensors from enclosing traces become inputs (subgraphs) or constants.
    captures_outer: bool,
    /// The traced code read the static shape of one of this trace's values.
    read_shape: bool,
    /// Some input of this trace (or of one enclosing it, when this one reads their
    /// values) has dimensions of unknown size: values carry shadows (see [`Shadow`]).
    poly: bool,
    /// Per value computed from an input with unknown dimensions, its shadow. A value
    /// with none does not depend on those sizes.
    shadows: HashMap<Value, Shadow>,
    /// Per value computed from an input of unknown rank, its *rank shadow*: the value
    /// computed on inputs with one more leading axis. A value whose rank shadow has
    /// another rank than its example has an unknown rank (TF's `TensorShape(None)`).
    ranks: HashMap<Value, Tensor>,
    /// Tapes the trace used, by key: their slot is the position.
    tapes: Vec<usize>,
    /// Ids at or above this were made during the trace: such a tensor the trace does not
    /// know came from a call that bypassed [`apply`], and cannot be a constant.
    first_id: TensorId,
    /// A scratch trace ([`scratch`]): its graph is dropped, any tensor it does not know
    /// is a constant, and what it reads of shapes binds no enclosing trace.
    scratch: bool,
    /// How many of the inputs are the trace's own (fresh placeholders); the others are
    /// tensors of enclosing traces.
    own_inputs: u32,
    /// Its symbolic tensors were recorded as retired ([`retire`]).
    retired: bool,
    /// The variables the traced code read or assigned (its own or an inner trace's),
    /// in first-use order.
    variables: Vec<Variable>,
}

/// Where a symbolic tensor of a finished trace was made.
#[derive(Clone)]
struct Retired {
    /// In a subgraph (a branch, a loop body) rather than a function's trace.
    subgraph: bool,
    /// The user's line that made it.
    origin: Option<Arc<str>>,
}

/// The symbolic tensors of the last [`RETIRED_TRACES`] finished traces (all threads):
/// a later trace that reads one would otherwise capture its example value as a
/// constant, a silently wrong number. TF's "out of scope" errors.
struct RetiredTensors {
    at: HashMap<TensorId, Retired>,
    order: VecDeque<Vec<TensorId>>,
}

const RETIRED_TRACES: usize = 256;

static RETIRED: Mutex<Option<RetiredTensors>> = Mutex::new(None);

/// Records the symbolic tensors of a trace that just ended (`nodes`: its graph's).
fn retire(tr: &mut Tracer, nodes: &[Node]) {
    if tr.scratch || tr.retired {
        return;
    }
    tr.retired = true;
    let origins: Vec<Option<Arc<str>>> = nodes.iter().map(|n| n.origin.clone()).collect();
    let ids: Vec<(TensorId, Retired)> = tr
        .map
        .iter()
        .filter_map(|(&id, v)| {
            let origin = match *v {
                // Only tensors the trace made: an older tensor an op passed through
                // (the same tensor as its input) is not symbolic.
                Value::Node(..) if id < tr.first_id || tr.consts.contains_key(&id) => return None,
                Value::Node(n, _) => origins.get(n as usize).cloned().flatten(),
                Value::Input(i) if i < tr.own_inputs => None,
                _ => return None,
            };
            Some((
                id,
                Retired {
                    subgraph: tr.captures_outer,
                    origin,
                },
            ))
        })
        .collect();
    if ids.is_empty() {
        return;
    }
    let mut guard = RETIRED.lock().unwrap_or_else(|e| e.into_inner());
    let r = guard.get_or_insert_with(|| RetiredTensors {
        at: HashMap::new(),
        order: VecDeque::new(),
    });
    if r.order.len() == RETIRED_TRACES {
        for id in r.order.pop_front().unwrap_or_default() {
            r.at.remove(&id);
        }
    }
    r.order.push_back(ids.iter().map(|(id, _)| *id).collect());
    r.at.extend(ids);
}

/// An out-of-scope error with the user's line that read the tensor in front.
fn used_at(e: Error, origin: Option<&str>) -> Error {
    match (e, origin) {
        (Error::Type(m), Some(o)) => Error::Type(format!("{o}: {m}")),
        (Error::Inaccessible(m), Some(o)) => Error::Inaccessible(format!("{o}: {m}")),
        (e, _) => e,
    }
}

fn retired(id: TensorId) -> Option<Retired> {
    let guard = RETIRED.lock().unwrap_or_else(|e| e.into_inner());
    guard.as_ref()?.at.get(&id).cloned()
}

/// The error for a tensor of a finished trace read by another: TF's "out of scope".
fn out_of_scope(t: &Tensor, r: Retired) -> Error {
    let made = r
        .origin
        .as_deref()
        .map_or(String::new(), |o| format!(" (made at {o})"));
    let what = format!(
        "a symbolic tensor of dtype {} and shape {:?}{made}",
        t.dtype().name(),
        t.shape()
    );
    if r.subgraph {
        Error::Inaccessible(format!(
            "{what} is out of scope and cannot be used here: it was made inside a \
             control-flow body or branch (gt.while_loop, gt.cond, or a loop AutoGraph \
             converted); return it from the body, or gather values in a gt.TensorArray"
        ))
    } else {
        Error::Type(format!(
            "{what} is out of scope and cannot be used here: it belongs to another \
             gt.function trace, which is finished; use that function's return values"
        ))
    }
}

impl Tracer {
    fn new(inputs: &[Tensor], specs: Vec<Spec>, captures_outer: bool) -> Tracer {
        let mut map = HashMap::with_capacity(inputs.len() * 4);
        for (i, t) in inputs.iter().enumerate() {
            map.insert(t.id(), Value::Input(i as u32));
        }
        Tracer {
            graph: Graph {
                inputs: specs,
                ..Graph::default()
            },
            map,
            consts: HashMap::new(),
            outer: Vec::new(),
            captures_outer,
            read_shape: false,
            poly: false,
            shadows: HashMap::new(),
            ranks: HashMap::new(),
            tapes: Vec::new(),
            first_id: crate::tensor::next_id(),
            scratch: false,
            own_inputs: inputs.len() as u32,
            retired: false,
            variables: Vec::new(),
        }
    }
}

/// What a trace knows of a value's static shape when its inputs have dimensions of
/// unknown size (`None` in their specs). The trace runs on example tensors, so every
/// value has its example's sizes; to tell which of them follow the unknown ones, each
/// op is run a second time on *shadows*: inputs whose unknown dimensions have another
/// size (2, or 3 when the example's is 2; small, so the second run is cheap), made of
/// the example's own rows so that value-dependent ops (gathers, reshapes) still work.
/// A dimension whose size differs between the example value and its shadow is unknown
/// (`None`, as TF's static shape says), the others are the example's.
#[derive(Clone)]
enum Shadow {
    /// The value computed on the shadows of the inputs.
    Of(Tensor),
    /// Not known (a stateful op, or the op failed on the shadows): the static shape is
    /// taken to be the example's, and a read of it makes the graph shape-dependent.
    Lost,
}

/// The size a shadow gives a dimension of unknown size `n`: never 1 (that would
/// broadcast where `n` does not) and never `n`.
fn shadow_size(n: usize) -> usize {
    if n == 2 {
        3
    } else {
        2
    }
}

/// The shadow of input `example` of a trace that accepts `spec`, when the spec leaves
/// sizes unknown.
fn shadow_input(example: &Tensor, spec: &Spec) -> Option<Shadow> {
    let axes: Vec<usize> = match &spec.shape {
        None => (0..example.ndim()).collect(),
        Some(dims) if dims.len() == example.ndim() => dims
            .iter()
            .enumerate()
            .filter(|(_, d)| d.is_none())
            .map(|(a, _)| a)
            .collect(),
        Some(_) => return Some(Shadow::Lost),
    };
    if axes.is_empty() {
        // A scalar of unknown rank: the value is its own shadow.
        return spec.shape.is_none().then(|| Shadow::Of(example.clone()));
    }
    Some(shadow_along(example, &axes).map_or(Shadow::Lost, Shadow::Of))
}

/// `example` with other sizes along `axes` ([`shadow_size`]), made of its own rows.
fn shadow_along(example: &Tensor, axes: &[usize]) -> Option<Tensor> {
    let made = paused(|| {
        crate::tape::stack::suspended(|| -> Result<Tensor> {
            if example.size() == 0 {
                let mut shape = example.shape().to_vec();
                for &a in axes {
                    shape[a] = shadow_size(shape[a]);
                }
                return crate::ops::zeros(&shape, example.dtype());
            }
            let mut x = example.clone();
            for &a in axes {
                let n = x.shape()[a];
                let rows: Vec<i64> = (0..shadow_size(n)).map(|i| (i % n) as i64).collect();
                let len = rows.len();
                let idx = Tensor::from_vec(rows, &[len])?;
                x = crate::ops::gather(&x, &idx, Some(a as isize), 0)?;
            }
            Ok(x)
        })
    });
    made.ok()
}

/// The rank shadow of input `example` of a trace whose spec leaves the rank unknown:
/// the example twice along a new leading axis (so value-dependent ops still work).
fn rank_shadow_input(example: &Tensor) -> Option<Tensor> {
    paused(|| {
        crate::tape::stack::suspended(|| crate::ops::stack(&[example.clone(), example.clone()], 0))
    })
    .ok()
}

/// Whether running `g` has no effect beyond its outputs (variable reads aside).
fn pure(g: &Graph) -> bool {
    g.nodes.iter().all(|n| match &n.kind {
        Kind::Read(_) => true,
        Kind::Call(_) => !n.stateful,
        Kind::Cond { then, otherwise } => pure(then) && pure(otherwise),
        Kind::While { cond, body, .. } => pure(cond) && pure(body),
    })
}

/// The shadows of `node`'s outputs, given the shadows of its inputs (`None`: the
/// input's example value is its shadow) and the outputs' example values; `None` for an
/// output that does not depend on unknown sizes. `None` when no input has a shadow.
fn shadows_of(
    node: &Node,
    ins: Vec<Option<Shadow>>,
    examples: &[&Tensor],
    outs: &[Tensor],
    same_rank: bool,
) -> Option<Vec<Option<Shadow>>> {
    if ins.iter().all(Option::is_none) {
        return None;
    }
    let lost = || Some(vec![Some(Shadow::Lost); outs.len()]);
    if let Some(grads) = gradient_shadows(node, &ins, examples, outs) {
        return Some(grads);
    }
    if node.name == "CustomGradient" && outs.len() <= ins.len() {
        // A custom gradient's outputs are its last inputs (the body's values), linked
        // to its gradient function.
        return Some(ins[ins.len() - outs.len()..].to_vec());
    }
    if ins.iter().any(|s| matches!(s, Some(Shadow::Lost))) {
        return lost();
    }
    let args: Vec<Tensor> = ins
        .into_iter()
        .zip(examples)
        .map(|(s, x)| match s {
            Some(Shadow::Of(t)) => t,
            _ => (*x).clone(),
        })
        .collect();
    match &node.kind {
        Kind::Call(_) if node.stateful => return lost(),
        Kind::Cond { then, otherwise } if !(pure(then) && pure(otherwise)) => return lost(),
        Kind::While { n, .. } => {
            // Not run again (a loop on other values may not end): TF's loop variables
            // keep their shapes, so each output's shadow is its variable's.
            return Some(
                (0..*n)
                    .map(|k| {
                        Some(if outs[k].shape() == examples[k].shape() {
                            Shadow::Of(args[k].clone())
                        } else {
                            Shadow::Lost
                        })
                    })
                    .collect(),
            );
        }
        _ => {}
    }
    let ran = paused(|| crate::tape::stack::suspended(|| super::run_node(node, &args)));
    match ran {
        Ok(r)
            if r.len() == outs.len()
                && r.iter().zip(outs).all(|(a, b)| {
                    a.dtype() == b.dtype() && (!same_rank || a.ndim() == b.ndim())
                }) =>
        {
            Some(r.into_iter().map(|t| Some(Shadow::Of(t))).collect())
        }
        _ => lost(),
    }
}

/// The shadows of a traced `tape.gradient`'s dense gradients: each has its source's
/// shape, so a gradient with respect to a variable is known and one with respect to a
/// tensor follows that tensor. `None` for any other node.
fn gradient_shadows(
    node: &Node,
    ins: &[Option<Shadow>],
    examples: &[&Tensor],
    outs: &[Tensor],
) -> Option<Vec<Option<Shadow>>> {
    use super::tapes::{SourceRef, TapeKey, TapeSpec};
    if node.name != "Gradient" {
        return None;
    }
    let key: TapeKey = serde_json::from_str(node.key.as_deref()?).ok()?;
    let TapeSpec::Gradient {
        sources,
        sparse,
        present,
        ..
    } = key.spec
    else {
        return None;
    };
    if sparse.is_some_and(|s| s.iter().any(|&b| b)) {
        return None;
    }
    let kept: Vec<&SourceRef> = sources
        .iter()
        .zip(&present)
        .filter(|(_, &p)| p)
        .map(|(s, _)| s)
        .collect();
    if kept.len() != outs.len() {
        return None;
    }
    Some(
        kept.iter()
            .zip(outs)
            .map(|(src, out)| match src {
                SourceRef::Variable(_) => None,
                SourceRef::Input(k) if examples.get(*k)?.shape() == out.shape() => {
                    ins.get(*k).cloned().flatten()
                }
                SourceRef::Input(_) => Some(Shadow::Lost),
            })
            .collect(),
    )
}

thread_local! {
    static TRACERS: RefCell<Vec<Tracer>> = const { RefCell::new(Vec::new()) };
    static TRACING: Cell<bool> = const { Cell::new(false) };
    /// Variables the outermost trace assigned, with their values before: tracing runs
    /// the function once for real, but its effects belong to the calls of the graph, so
    /// they are undone when the trace ends.
    static ASSIGNED: RefCell<Vec<(Variable, Tensor)>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with tracing off on this thread (work done for the trace itself, such as a
/// loop's value on the example inputs, is not part of the graph).
pub fn paused<R>(f: impl FnOnce() -> R) -> R {
    struct Resume(bool);
    impl Drop for Resume {
        fn drop(&mut self) {
            TRACING.with(|t| t.set(self.0));
        }
    }
    let _resume = Resume(TRACING.with(|t| t.replace(false)));
    f()
}

/// Runs `f`, work a trace does for an example value only, with tracing on but its
/// calls recorded into a graph that is then dropped. A traced `tape.gradient` is one
/// node, computed again on every run: while the trace computes its example value, the
/// ops of Python gradient functions it calls are traced (so they see a symbolic world,
/// as TF's do) but belong to no graph, and the tensors they read (the upstream
/// gradients, made by the sweep) are constants of the scratch graph.
pub fn scratch<R>(f: impl FnOnce() -> R) -> R {
    if !is_tracing() {
        return f();
    }
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            TRACERS.with(|s| s.borrow_mut().pop());
            set_tracing();
        }
    }
    let mut tracer = Tracer::new(&[], Vec::new(), false);
    tracer.scratch = true;
    TRACERS.with(|s| s.borrow_mut().push(tracer));
    let _pop = Pop;
    f()
}

/// Turns tracing off on this thread until [`resume`] (the two halves of [`paused`], for
/// a Python context manager: `gt.init_scope`). Returns the state to resume.
pub fn suspend() -> bool {
    TRACING.with(|t| t.replace(false))
}

/// Puts back the tracing state [`suspend`] returned.
pub fn resume(state: bool) {
    TRACING.with(|t| t.set(state));
}

/// Notes that a trace is about to assign `var` (its current value is put back when the
/// outermost trace ends).
pub(crate) fn on_variable_assign(var: &Variable) {
    if !is_tracing() {
        return;
    }
    note_variable(var);
    ASSIGNED.with(|a| {
        let mut a = a.borrow_mut();
        if !a.iter().any(|(v, _)| v.id() == var.id()) {
            a.push((var.clone(), var.value_unrecorded()));
        }
    });
}

/// Notes that the traces on this thread use `var`.
fn note_variable(var: &Variable) {
    TRACERS.with(|s| {
        for tr in s.borrow_mut().iter_mut().filter(|tr| !tr.scratch) {
            if !tr.variables.iter().any(|v| v.id() == var.id()) {
                tr.variables.push(var.clone());
            }
        }
    });
}

/// The variables the innermost (non-scratch) trace has read or assigned so far, in
/// first-use order (TF's `ConcreteFunction.variables`).
pub fn traced_variables() -> Vec<Variable> {
    TRACERS.with(|s| {
        (s.borrow().iter().rev())
            .find(|tr| !tr.scratch)
            .map(|tr| tr.variables.clone())
            .unwrap_or_default()
    })
}

/// Whether this thread is tracing (ops are being recorded into a graph).
#[inline]
pub fn is_tracing() -> bool {
    TRACING.with(|t| t.get())
}

fn set_tracing() {
    TRACING.with(|t| t.set(TRACERS.with(|s| !s.borrow().is_empty())));
}

/// The graph value of `t` in trace `level` (0 = outermost), making it known there if
/// needed: an input of the level when an enclosing level knows it and the level takes
/// outer tensors, else a constant.
/// The shadow of `t` in the innermost of `stack`'s traces that knows it.
fn outer_shadow(stack: &[Tracer], t: &Tensor) -> Option<Shadow> {
    stack
        .iter()
        .rev()
        .find_map(|tr| tr.map.get(&t.id()).map(|v| tr.shadows.get(v).cloned()))
        .flatten()
}

/// The rank shadow of `t` in the innermost of `stack`'s traces that knows it.
fn outer_rank(stack: &[Tracer], t: &Tensor) -> Option<Tensor> {
    stack
        .iter()
        .rev()
        .find_map(|tr| tr.map.get(&t.id()).map(|v| tr.ranks.get(v).cloned()))
        .flatten()
}

fn value_of(stack: &mut [Tracer], level: usize, t: &Tensor) -> Result<Value> {
    if let Some(&v) = stack[level].map.get(&t.id()) {
        return Ok(v);
    }
    let known_outside = level > 0
        && stack[level].captures_outer
        && stack[..level].iter().any(|tr| tr.map.contains_key(&t.id()));
    let made_here = t.id()
        >= stack[..=level]
            .iter()
            .map(|tr| tr.first_id)
            .min()
            .unwrap_or(0);
    if !known_outside && !stack[level].scratch {
        if let Some(r) = retired(t.id()) {
            return Err(out_of_scope(t, r));
        }
    }
    if made_here && !known_outside && !stack[level].scratch {
        return Err(Error::invalid(
            "function",
            "the traced function uses a tensor made by something the trace did not see \
             (gt ops, variables, constants, tapes and custom gradients are traced; a \
             tensor made another way, for example through numpy, cannot be replayed)",
        ));
    }
    let (shadow, rank) = if known_outside {
        (
            outer_shadow(&stack[..level], t),
            outer_rank(&stack[..level], t),
        )
    } else {
        (None, None)
    };
    let tr = &mut stack[level];
    let v = if known_outside {
        let i = tr.graph.inputs.len() as u32;
        if let Some(sh) = shadow {
            tr.shadows.insert(Value::Input(i), sh);
        }
        if let Some(r) = rank {
            tr.ranks.insert(Value::Input(i), r);
        }
        tr.graph.inputs.push(Spec {
            dtype: t.dtype(),
            shape: Some(t.shape().iter().map(|&d| Some(d)).collect()),
        });
        tr.outer.push(t.clone());
        Value::Input(i)
    } else {
        let i = *tr.consts.entry(t.id()).or_insert_with(|| {
            tr.graph.consts.push(t.clone());
            (tr.graph.consts.len() - 1) as u32
        });
        Value::Const(i)
    };
    tr.map.insert(t.id(), v);
    Ok(v)
}

/// Makes `t`, a tensor made from a Python or Rust value during a trace (a literal),
/// a constant of the innermost trace.
pub fn constant(t: &Tensor) {
    if !is_tracing() {
        return;
    }
    TRACERS.with(|s| {
        let mut s = s.borrow_mut();
        if let Some(tr) = s.last_mut() {
            if !tr.map.contains_key(&t.id()) {
                tr.graph.consts.push(t.clone());
                let i = (tr.graph.consts.len() - 1) as u32;
                tr.consts.insert(t.id(), i);
                tr.map.insert(t.id(), Value::Const(i));
            }
        }
    });
}

/// Appends a node to the innermost trace, mapping its outputs.
fn push_node(
    node_of: impl FnOnce(Vec<Value>) -> Node,
    inputs: &[&Tensor],
    outputs: &[Tensor],
) -> Result<()> {
    // Asked before the trace is borrowed: the hook may run Python code.
    let origin = if is_tracing() { super::origin() } else { None };
    // The node again, with its inputs' shadows (and rank shadows), when its outputs
    // need them.
    type Job = (usize, u32, Node, Vec<Option<Shadow>>, Vec<Option<Shadow>>);
    let job = TRACERS.with(|s| -> Result<Option<Job>> {
        let mut s = s.borrow_mut();
        let level = match s.len() {
            0 => return Ok(None),
            n => n - 1,
        };
        let ins: Vec<Value> = inputs
            .iter()
            .map(|t| value_of(&mut s, level, t).map_err(|e| used_at(e, origin.as_deref())))
            .collect::<Result<_>>()?;
        let tr = &mut s[level];
        let id = tr.graph.nodes.len() as u32;
        let mut node = node_of(ins);
        node.origin = origin;
        let job = (tr.poly && node.inputs.iter().any(|v| tr.shadows.contains_key(v))).then(|| {
            let shadows = node
                .inputs
                .iter()
                .map(|v| tr.shadows.get(v).cloned())
                .collect();
            let ranks = node
                .inputs
                .iter()
                .map(|v| tr.ranks.get(v).cloned().map(Shadow::Of))
                .collect();
            (level, id, node.clone(), shadows, ranks)
        });
        tr.graph.nodes.push(node);
        for (k, t) in outputs.iter().enumerate() {
            tr.map.insert(t.id(), Value::Node(id, k as u32));
        }
        Ok(job)
    })?;
    // Run outside the borrow: the node may run subgraphs (and they read the traces).
    if let Some((level, id, node, ins, rank_ins)) = job {
        let shadows = shadows_of(&node, ins, inputs, outputs, true);
        let ranks = shadows_of(&node, rank_ins, inputs, outputs, false);
        TRACERS.with(|s| {
            if let Some(tr) = s.borrow_mut().get_mut(level) {
                for (k, sh) in shadows.into_iter().flatten().enumerate() {
                    if let Some(sh) = sh {
                        tr.shadows.insert(Value::Node(id, k as u32), sh);
                    }
                }
                for (k, sh) in ranks.into_iter().flatten().enumerate() {
                    if let Some(Shadow::Of(t)) = sh {
                        tr.ranks.insert(Value::Node(id, k as u32), t);
                    }
                }
            }
        });
    }
    Ok(())
}

/// Runs an engine call and, when tracing, records it. `f` computes the outputs from the
/// inputs and owns the call's other arguments; `key` writes those arguments as text
/// (calls with equal name, key and inputs are merged by the optimizer; `None` never).
pub fn apply<F>(
    name: &str,
    key: Option<String>,
    elementwise: Option<Elementwise>,
    inputs: &[&Tensor],
    f: F,
) -> Result<Vec<Tensor>>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>> + Send + Sync + 'static,
{
    record(name, key, elementwise, false, inputs, Arc::new(f))
}

/// [`apply`] for a call with an effect (an assign, a print, a random draw): it runs at
/// its place on every call of the graph and is never merged, folded or removed.
pub fn apply_stateful<F>(name: &str, inputs: &[&Tensor], f: F) -> Result<Vec<Tensor>>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>> + Send + Sync + 'static,
{
    record(name, None, None, true, inputs, Arc::new(f))
}

/// [`apply_stateful`] with `key`, the text of the call's non-tensor arguments (what a
/// SavedModel stores of it; stateful nodes are never merged, whatever their keys).
pub fn apply_stateful_keyed<F>(
    name: &str,
    key: String,
    inputs: &[&Tensor],
    f: F,
) -> Result<Vec<Tensor>>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>> + Send + Sync + 'static,
{
    record(name, Some(key), None, true, inputs, Arc::new(f))
}

/// A pure effect (a print): run now when not tracing; while tracing, recorded to run on
/// every call of the graph and not run now (tracing is not a call).
pub fn record_effect<F>(name: &str, inputs: &[&Tensor], f: F) -> Result<()>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>> + Send + Sync + 'static,
{
    if !is_tracing() {
        let owned: Vec<Tensor> = inputs.iter().map(|t| (*t).clone()).collect();
        f(&owned)?;
        return Ok(());
    }
    push_call(name, None, None, true, Arc::new(f), inputs, &[])
}

/// [`record_effect`] with `key`, the text of the effect's non-tensor arguments (what a
/// SavedModel stores of a print).
pub fn record_effect_keyed<F>(name: &str, key: String, inputs: &[&Tensor], f: F) -> Result<()>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>> + Send + Sync + 'static,
{
    if !is_tracing() {
        let owned: Vec<Tensor> = inputs.iter().map(|t| (*t).clone()).collect();
        f(&owned)?;
        return Ok(());
    }
    push_call(name, Some(key), None, true, Arc::new(f), inputs, &[])
}

fn record(
    name: &str,
    key: Option<String>,
    elementwise: Option<Elementwise>,
    stateful: bool,
    inputs: &[&Tensor],
    f: Forward,
) -> Result<Vec<Tensor>> {
    let owned: Vec<Tensor> = inputs.iter().map(|t| (*t).clone()).collect();
    let outs = f(&owned)?;
    if is_tracing() {
        push_call(name, key, elementwise, stateful, f, inputs, &outs)?;
    }
    Ok(outs)
}

/// Records `f` as one node (`eval` gives its value during the trace).
pub(super) fn apply_node(
    name: &str,
    stateful: bool,
    inputs: &[&Tensor],
    f: Forward,
    eval: impl FnOnce() -> Result<Vec<Tensor>>,
) -> Result<Vec<Tensor>> {
    let outs: Vec<Tensor> = eval()?.into_iter().map(|t| t.fresh()).collect();
    push_call(name, None, None, stateful, f, inputs, &outs)?;
    Ok(outs)
}

/// The slot of a tape in the outermost trace (control-flow subgraphs share it).
pub(super) fn tape_slot(key: usize) -> usize {
    TRACERS.with(|s| {
        let mut s = s.borrow_mut();
        let Some(tr) = s.first_mut() else { return 0 };
        match tr.tapes.iter().position(|&k| k == key) {
            Some(i) => i,
            None => {
                tr.tapes.push(key);
                tr.tapes.len() - 1
            }
        }
    })
}

/// Records an effect node (always kept, run in order) whose trace-time values are
/// `outputs`.
pub(super) fn push_effect(
    name: &str,
    f: Forward,
    inputs: &[&Tensor],
    outputs: &[Tensor],
) -> Result<()> {
    push_call(name, None, None, true, f, inputs, outputs)
}

/// [`push_effect`] with `key`, the text of what the effect does (a tape use's
/// [`super::tapes::TapeKey`]), which a SavedModel stores.
pub(super) fn push_effect_keyed(
    name: &str,
    key: String,
    f: Forward,
    inputs: &[&Tensor],
    outputs: &[Tensor],
) -> Result<()> {
    push_call(name, Some(key), None, true, f, inputs, outputs)
}

/// Appends an engine-call node (`f` over `inputs`) whose trace-time values are `outputs`.
fn push_call(
    name: &str,
    key: Option<String>,
    elementwise: Option<Elementwise>,
    stateful: bool,
    f: Forward,
    inputs: &[&Tensor],
    outputs: &[Tensor],
) -> Result<()> {
    let n = outputs.len();
    push_node(
        |ins| Node {
            name: name.to_string(),
            key,
            elementwise,
            kind: Kind::Call(f),
            inputs: ins,
            outputs: n,
            stateful,
            origin: None,
        },
        inputs,
        outputs,
    )
}

/// Records a read of `var` that gave `value` (the variable is read again on every run).
pub(crate) fn on_variable_read(var: &Variable, value: &Tensor) {
    if !is_tracing() {
        return;
    }
    note_variable(var);
    // A node with no inputs cannot fail to record.
    let _ = push_node(
        |ins| Node {
            name: "ReadVariableOp".to_string(),
            key: None,
            elementwise: None,
            kind: Kind::Read(var.clone()),
            inputs: ins,
            outputs: 1,
            stateful: true,
            origin: None,
        },
        &[],
        std::slice::from_ref(value),
    );
}

/// Whether the innermost trace knows `t` as a value computed from its inputs (not a
/// constant): such a tensor is symbolic to the traced code.
pub fn lookup(t: &Tensor) -> bool {
    TRACERS.with(|s| {
        s.borrow().iter().any(|tr| {
            matches!(
                tr.map.get(&t.id()),
                Some(Value::Input(_)) | Some(Value::Node(..))
            )
        })
    })
}

/// Notes that the traced code read `t`'s static shape: when `t` is computed from the
/// inputs of a trace, that trace (and those enclosing it) depend on the inputs' shapes.
pub fn note_shape_read(t: &Tensor) {
    if !is_tracing() {
        return;
    }
    TRACERS.with(|s| {
        let mut s = s.borrow_mut();
        if s.iter().any(|tr| {
            !tr.scratch
                && matches!(
                    tr.map.get(&t.id()),
                    Some(Value::Input(_)) | Some(Value::Node(..))
                )
        }) {
            for tr in s.iter_mut() {
                tr.read_shape = true;
            }
        }
    });
}

/// The static shape a trace gives a tensor (see [`static_shape`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StaticShape {
    /// The tensor's own shape (an eager tensor, a constant, or a traced value whose
    /// sizes do not depend on unknown ones).
    Example,
    /// A traced value with sizes that follow the inputs' unknown dimensions: `None` for
    /// those dimensions (TF's static shape); `None` for all when the rank is unknown.
    Partial(Option<Vec<Option<usize>>>),
}

/// The static shape the traced code sees for `t`, as TF's `x.shape` in a
/// `tf.function`: `None` where the size follows an input dimension the signature left
/// unknown. [`StaticShape::Example`] for a traced value whose shape the trace cannot
/// tell apart from its example's marks the trace shape-dependent (as
/// [`note_shape_read`]); a caller that uses a `Partial` answer's example sizes anyway
/// must call [`note_shape_read`].
pub fn static_shape(t: &Tensor) -> StaticShape {
    lookup_static_shape(t, false).unwrap_or_else(|| {
        TRACERS.with(|s| {
            for tr in s.borrow_mut().iter_mut() {
                tr.read_shape = true;
            }
        });
        StaticShape::Example
    })
}

/// [`static_shape`] for a caller that only reports it: `None` (the trace left as it
/// is) where [`static_shape`] would give the example's shape and mark the trace. In a
/// trace of exact input shapes, the example's shape.
pub fn peek_static_shape(t: &Tensor) -> Option<StaticShape> {
    lookup_static_shape(t, true)
}

fn lookup_static_shape(t: &Tensor, exact_known: bool) -> Option<StaticShape> {
    if !is_tracing() {
        return Some(StaticShape::Example);
    }
    TRACERS.with(|s| {
        let s = s.borrow();
        match known_at(&s, t) {
            Some((level, _)) if exact_known && !s[level].poly => Some(StaticShape::Example),
            Some((level, v)) => shape_at(&s[level], v, t),
            None => Some(StaticShape::Example),
        }
    })
}

/// The innermost (non-scratch) trace that knows `t` as a value computed from its
/// inputs, and that value.
fn known_at(s: &[Tracer], t: &Tensor) -> Option<(usize, Value)> {
    s.iter()
        .enumerate()
        .rev()
        .find_map(|(l, tr)| match tr.map.get(&t.id()) {
            Some(&v @ (Value::Input(_) | Value::Node(..))) if !tr.scratch => Some((l, v)),
            _ => None,
        })
}

/// The static shape of value `v` (whose example is `t`) in `tr`; `None` when the trace
/// cannot tell it from the example's (a read of it binds the trace to that shape).
fn shape_at(tr: &Tracer, v: Value, t: &Tensor) -> Option<StaticShape> {
    if !tr.poly {
        return None;
    }
    let rank = tr.ranks.get(&v);
    if rank.is_some_and(|r| r.ndim() != t.ndim()) {
        return Some(StaticShape::Partial(None));
    }
    let sizes = match tr.shadows.get(&v) {
        None => None,
        Some(Shadow::Lost) => return None,
        Some(Shadow::Of(_)) if matches!(v, Value::Input(i) if tr.graph.inputs[i as usize].shape.is_none()) =>
        {
            return Some(StaticShape::Partial(None));
        }
        Some(Shadow::Of(x)) if x.ndim() != t.ndim() => return None,
        Some(Shadow::Of(x)) => Some(x),
    };
    // A dimension is known where neither shadow changed it.
    let dims: Vec<Option<usize>> = (t.shape().iter().enumerate())
        .map(|(i, &n)| {
            let kept = |x: Option<&Tensor>| x.is_none_or(|x| x.shape()[i] == n);
            (kept(sizes) && kept(rank)).then_some(n)
        })
        .collect();
    Some(if dims.iter().all(Option::is_some) {
        StaticShape::Example
    } else {
        StaticShape::Partial(Some(dims))
    })
}

/// How a symbolic tensor of the trace prints, as TF's graph tensors do: its name (the
/// op that made it, numbered as TF numbers repeats: `MatMul:0`, `MatMul_1:0`; `args_i`
/// for argument `i`) and its static shape. `None` for a tensor that is not symbolic.
/// Printing binds the trace to nothing.
pub fn symbolic_name(t: &Tensor) -> Option<(String, StaticShape)> {
    if !is_tracing() {
        return None;
    }
    TRACERS.with(|s| {
        let s = s.borrow();
        let (level, v) = known_at(&s, t)?;
        let tr = &s[level];
        let name = match v {
            Value::Input(i) => format!("args_{i}:0"),
            Value::Node(n, k) => {
                let op = &tr.graph.nodes[n as usize].name;
                let before = tr.graph.nodes[..n as usize]
                    .iter()
                    .filter(|m| &m.name == op)
                    .count();
                match before {
                    0 => format!("{op}:{k}"),
                    c => format!("{op}_{c}:{k}"),
                }
            }
            Value::Const(_) => return None,
        };
        Some((name, shape_at(tr, v, t).unwrap_or(StaticShape::Example)))
    })
}

/// A finished trace: the graph, and the tensors the traced function returned (their
/// example values).
pub struct Traced {
    pub graph: Graph,
    pub outputs: Vec<Tensor>,
}

/// Traces `f` on example `inputs` (accepted later as `specs` say): the calls it makes
/// through [`apply`] become the graph. Nested in another trace, the new graph is
/// independent: tensors of the enclosing trace it reads become constants.
pub fn trace(
    inputs: &[Tensor],
    specs: Vec<Spec>,
    f: impl FnOnce(&[Tensor]) -> Result<Vec<Tensor>>,
) -> Result<Traced> {
    // A trace is not a call: tapes recording on this thread do not see it (each call
    // of the graph is recorded as it runs), as TF's tapes never see a FuncGraph.
    let (graph, outputs, outer) = if is_tracing() {
        run_traced(inputs, specs, false, f)?
    } else {
        crate::tape::stack::suspended(|| run_traced(inputs, specs, false, f))?
    };
    debug_assert!(outer.is_empty());
    Ok(Traced { graph, outputs })
}

/// Traces a subgraph (a branch, a loop body) inside the current trace: tensors of the
/// enclosing traces it reads become extra inputs; returns them after the graph.
pub fn trace_subgraph(
    inputs: &[Tensor],
    f: impl FnOnce(&[Tensor]) -> Result<Vec<Tensor>>,
) -> Result<(Traced, Vec<Tensor>)> {
    let specs = inputs.iter().map(Spec::of).collect();
    let (graph, outputs, outer) = run_traced(inputs, specs, true, f)?;
    Ok((Traced { graph, outputs }, outer))
}

fn run_traced(
    inputs: &[Tensor],
    specs: Vec<Spec>,
    captures_outer: bool,
    f: impl FnOnce(&[Tensor]) -> Result<Vec<Tensor>>,
) -> Result<(Graph, Vec<Tensor>, Vec<Tensor>)> {
    if specs.len() != inputs.len() {
        return Err(Error::Internal("trace: one spec per input".into()));
    }
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            let outermost = TRACERS.with(|s| {
                let mut s = s.borrow_mut();
                if let Some(mut tr) = s.pop() {
                    let nodes = std::mem::take(&mut tr.graph.nodes);
                    retire(&mut tr, &nodes);
                }
                s.is_empty()
            });
            set_tracing();
            if outermost {
                for (var, old) in ASSIGNED.with(|a| std::mem::take(&mut *a.borrow_mut())) {
                    var.restore_unrecorded(old);
                }
            }
        }
    }
    // Fresh identities: an argument passed twice, or also captured by the function, is
    // still one input per position.
    type Outer = (Vec<Option<Shadow>>, Vec<Option<Tensor>>, bool);
    let (outer, outer_ranks, poly_outside): Outer = TRACERS.with(|s| {
        let s = s.borrow();
        if !captures_outer {
            return (vec![None; inputs.len()], vec![None; inputs.len()], false);
        }
        let outer = inputs.iter().map(|t| outer_shadow(&s, t)).collect();
        let ranks = inputs.iter().map(|t| outer_rank(&s, t)).collect();
        (outer, ranks, s.last().is_some_and(|tr| tr.poly))
    });
    let ranks: Vec<Option<Tensor>> = outer_ranks
        .into_iter()
        .zip(inputs.iter().zip(&specs))
        .map(|(o, (t, spec))| {
            o.or_else(|| spec.shape.is_none().then(|| rank_shadow_input(t)).flatten())
        })
        .collect();
    let shadows: Vec<Option<Shadow>> = outer
        .into_iter()
        .zip(inputs.iter().zip(&specs))
        .map(|(o, (t, spec))| o.or_else(|| shadow_input(t, spec)))
        .collect();
    let inputs: Vec<Tensor> = inputs.iter().map(Tensor::fresh).collect();
    let mut tracer = Tracer::new(&inputs, specs, captures_outer);
    tracer.poly = poly_outside || shadows.iter().any(Option::is_some);
    for (i, sh) in shadows.into_iter().enumerate() {
        if let Some(sh) = sh {
            tracer.shadows.insert(Value::Input(i as u32), sh);
        }
    }
    for (i, r) in ranks.into_iter().enumerate() {
        if let Some(r) = r {
            tracer.ranks.insert(Value::Input(i as u32), r);
        }
    }
    TRACERS.with(|s| s.borrow_mut().push(tracer));
    set_tracing();
    let pop = Pop;
    let outputs = f(&inputs)?;
    let (graph, outer) = TRACERS.with(|s| {
        let mut s = s.borrow_mut();
        let level = s.len() - 1;
        let outs: Vec<Value> = outputs
            .iter()
            .map(|t| value_of(&mut s, level, t))
            .collect::<Result<_>>()?;
        let tr = &mut s[level];
        let mut g = std::mem::take(&mut tr.graph);
        retire(tr, &g.nodes);
        g.outputs = outs;
        g.shape_dependent = tr.read_shape;
        Ok::<_, Error>((g, std::mem::take(&mut tr.outer)))
    })?;
    drop(pop);
    Ok((graph, outputs, outer))
}

/// Both branches traced into subgraphs; one `Cond` node reading the predicate and every
/// outer tensor either branch reads.
pub(super) fn cond(
    pred: &Tensor,
    then: impl FnOnce() -> Result<Vec<Tensor>>,
    otherwise: impl FnOnce() -> Result<Vec<Tensor>>,
) -> Result<Vec<Tensor>> {
    let (t, t_outer) = trace_subgraph(&[], |_| then())?;
    let (e, e_outer) = trace_subgraph(&[], |_| otherwise())?;
    if t.outputs.len() != e.outputs.len() {
        return Err(Error::invalid(
            "cond",
            format!(
                "true_fn and false_fn must return the same structure: {} vs {} outputs",
                t.outputs.len(),
                e.outputs.len()
            ),
        ));
    }
    for (i, (a, b)) in t.outputs.iter().zip(&e.outputs).enumerate() {
        if a.dtype() != b.dtype() {
            return Err(Error::invalid(
                "cond",
                format!(
                    "output {i} of true_fn is {} but false_fn's is {}",
                    a.dtype().name(),
                    b.dtype().name()
                ),
            ));
        }
    }
    // Both subgraphs take the union of the outer tensors, in one order.
    let mut outer: Vec<Tensor> = t_outer.clone();
    for x in &e_outer {
        if !outer.iter().any(|o| o.id() == x.id()) {
            outer.push(x.clone());
        }
    }
    let then_g = widen(t.graph, &t_outer, &outer);
    let else_g = widen(e.graph, &e_outer, &outer);
    let taken = if truth(pred, "cond")? {
        t.outputs
    } else {
        e.outputs
    };
    let mut inputs: Vec<&Tensor> = vec![pred];
    inputs.extend(outer.iter());
    // The value the trace goes on with is the taken branch's: give the node's outputs
    // fresh identities so the trace maps them to the node, through an identity op so
    // that active tapes and accumulators link them to the branch's values.
    let outs: Vec<Tensor> = taken
        .iter()
        .map(crate::ops::identity)
        .collect::<Result<_>>()?;
    // As when the graph runs: the outputs depend on every input the branches read.
    let outs = if crate::tape::any_active() {
        super::connect_cond_outputs(outs, &outer)?
    } else {
        outs
    };
    let n = outs.len();
    push_node(
        |ins| Node {
            name: "If".to_string(),
            key: None,
            elementwise: None,
            kind: Kind::Cond {
                then: Arc::new(then_g),
                otherwise: Arc::new(else_g),
            },
            inputs: ins,
            outputs: n,
            stateful: true,
            origin: None,
        },
        &inputs,
        &outs,
    )?;
    Ok(outs)
}

/// A subgraph whose implicit inputs were `mine` made to take `all` (a superset, in its
/// own order) instead.
fn widen(mut g: Graph, mine: &[Tensor], all: &[Tensor]) -> Graph {
    let declared = g.inputs.len() - mine.len();
    let remap: Vec<u32> = mine
        .iter()
        .map(|m| (declared + all.iter().position(|a| a.id() == m.id()).unwrap_or(0)) as u32)
        .collect();
    let fix = |v: &mut Value| {
        if let Value::Input(i) = v {
            if (*i as usize) >= declared {
                *i = remap[*i as usize - declared];
            }
        }
    };
    for n in &mut g.nodes {
        n.inputs.iter_mut().for_each(fix);
    }
    g.outputs.iter_mut().for_each(fix);
    g.inputs.truncate(declared);
    g.inputs.extend(all.iter().map(Spec::of));
    g
}

/// The loop traced as condition and body subgraphs over the loop variables; one `While`
/// node. The trace goes on with the loop's result on the example values.
pub(super) fn while_loop(
    vars: Vec<Tensor>,
    cond: &mut dyn FnMut(&[Tensor]) -> Result<Tensor>,
    body: &mut dyn FnMut(&[Tensor]) -> Result<Vec<Tensor>>,
) -> Result<Vec<Tensor>> {
    // The subgraphs take the loop variables as inputs (tracing gives them identities of
    // their own, so the traced code sees them as inputs, not as the values they have
    // before the loop; what the trace knows of their shapes comes with them).
    let (c, c_outer) = trace_subgraph(&vars, |a| Ok(vec![cond(a)?]))?;
    let (b, b_outer) = trace_subgraph(&vars, |a| body(a))?;
    check_loop_vars(&vars, &b.outputs)?;
    let mut outer: Vec<Tensor> = c_outer.clone();
    for x in &b_outer {
        if !outer.iter().any(|o| o.id() == x.id()) {
            outer.push(x.clone());
        }
    }
    let cond_g = Arc::new(widen(c.graph, &c_outer, &outer));
    let body_g = Arc::new(widen(b.graph, &b_outer, &outer));
    let n = vars.len();
    let node = Node {
        name: "While".to_string(),
        key: None,
        elementwise: None,
        kind: Kind::While {
            cond: cond_g,
            body: body_g,
            n,
        },
        inputs: Vec::new(),
        outputs: n,
        stateful: true,
        origin: None,
    };
    // The loop's value on the example inputs, computed by the node itself.
    let mut args: Vec<Tensor> = vars.clone();
    args.extend(outer.iter().cloned());
    // A frame of its own: tapes and accumulators the body makes live there.
    let outs: Vec<Tensor> = paused(|| super::tapes::with_frame(|| super::run_node(&node, &args)))?
        .iter()
        .map(crate::ops::identity)
        .collect::<Result<_>>()?;
    // As when the graph runs (TF's While): the outputs depend on every input.
    let outs = if crate::tape::any_active() {
        super::connect_cond_outputs(outs, &args)?
    } else {
        outs
    };
    let mut inputs: Vec<&Tensor> = vars.iter().collect();
    inputs.extend(outer.iter());
    push_node(
        |ins| Node {
            inputs: ins,
            ..node
        },
        &inputs,
        &outs,
    )?;
    unknown_loop_sizes(&vars, &outs);
    Ok(outs)
}

/// TF's loop variables with shape invariants: a size the loop changed is unknown
/// (`None`) in the output's static shape. Such outputs get shadows of other sizes along
/// those axes (and the trace computes shadows from then on).
fn unknown_loop_sizes(vars: &[Tensor], outs: &[Tensor]) {
    let changed: Vec<(usize, Vec<usize>)> = (vars.iter().zip(outs).enumerate())
        .filter(|(_, (v, o))| v.ndim() == o.ndim() && v.shape() != o.shape())
        .map(|(k, (v, o))| {
            let axes = (0..o.ndim())
                .filter(|&a| v.shape()[a] != o.shape()[a])
                .collect();
            (k, axes)
        })
        .collect();
    if changed.is_empty() {
        return;
    }
    let shadows: Vec<(usize, Option<Tensor>)> = changed
        .into_iter()
        .map(|(k, mut axes)| {
            // Sizes already unknown before the loop stay unknown.
            if let Some(Shadow::Of(sh)) = TRACERS.with(|s| outer_shadow(&s.borrow(), &vars[k])) {
                if sh.ndim() == outs[k].ndim() {
                    axes.extend((0..sh.ndim()).filter(|&a| sh.shape()[a] != vars[k].shape()[a]));
                }
            }
            axes.sort_unstable();
            axes.dedup();
            (k, shadow_along(&outs[k], &axes))
        })
        .collect();
    TRACERS.with(|s| {
        if let Some(tr) = s.borrow_mut().last_mut() {
            tr.poly = true;
            for (k, sh) in shadows {
                if let Some(&v) = tr.map.get(&outs[k].id()) {
                    tr.shadows.insert(v, sh.map_or(Shadow::Lost, Shadow::Of));
                }
            }
        }
    });
}
