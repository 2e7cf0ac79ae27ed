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
use std::collections::HashMap;
use std::sync::Arc;

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
    /// Tapes the trace used, by key: their slot is the position.
    tapes: Vec<usize>,
    /// Ids at or above this were made during the trace: such a tensor the trace does not
    /// know came from a call that bypassed [`apply`], and cannot be a constant.
    first_id: TensorId,
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
            tapes: Vec::new(),
            first_id: crate::tensor::next_id(),
        }
    }
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
    ASSIGNED.with(|a| {
        let mut a = a.borrow_mut();
        if !a.iter().any(|(v, _)| v.id() == var.id()) {
            a.push((var.clone(), var.value_unrecorded()));
        }
    });
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
    if made_here && !known_outside {
        return Err(Error::invalid(
            "function",
            "the traced function uses a tensor made by something the trace did not see \
             (gt ops, variables, constants, tapes and custom gradients are traced; a \
             tensor made another way, for example through numpy, cannot be replayed)",
        ));
    }
    let tr = &mut stack[level];
    let v = if known_outside {
        let i = tr.graph.inputs.len() as u32;
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
    TRACERS.with(|s| {
        let mut s = s.borrow_mut();
        let level = match s.len() {
            0 => return Ok(()),
            n => n - 1,
        };
        let ins: Vec<Value> = inputs
            .iter()
            .map(|t| value_of(&mut s, level, t))
            .collect::<Result<_>>()?;
        let tr = &mut s[level];
        let id = tr.graph.nodes.len() as u32;
        let mut node = node_of(ins);
        node.origin = origin;
        tr.graph.nodes.push(node);
        for (k, t) in outputs.iter().enumerate() {
            tr.map.insert(t.id(), Value::Node(id, k as u32));
        }
        Ok(())
    })
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
            matches!(
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
                s.pop();
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
    let inputs: Vec<Tensor> = inputs.iter().map(Tensor::fresh).collect();
    TRACERS.with(|s| {
        s.borrow_mut()
            .push(Tracer::new(&inputs, specs, captures_outer))
    });
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
    // Placeholders with the loop variables' values, so the subgraphs see them as inputs
    // (not as the values they have before the loop).
    let slots: Vec<Tensor> = vars.iter().map(|t| t.fresh()).collect();
    let (c, c_outer) = trace_subgraph(&slots, |a| Ok(vec![cond(a)?]))?;
    let (b, b_outer) = trace_subgraph(&slots, |a| body(a))?;
    check_loop_vars(&slots, &b.outputs)?;
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
    Ok(outs)
}
