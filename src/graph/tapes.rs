//! Gradient tapes used inside a traced function.
//!
//! A tape the function creates, enters, watches with and asks for gradients is traced
//! like any op: each use is a node, and the nodes of one tape share a slot. When the
//! graph runs, its `Start` node makes a new tape in that slot of the run's frame (a
//! frame per top-level run; control-flow subgraphs share their caller's), and the other
//! nodes use it: so every call differentiates its own ops, exactly as the eager code
//! would on each call. Each use is described by a [`TapeSpec`] (its node's key), which
//! is also what a SavedModel stores of it: a loaded function does the same with the
//! loading program's tapes, in Rust with no Python.

use std::cell::RefCell;

use super::trace;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

use crate::tape::{ForwardAccumulator, Grad, GradientTape, Source, UnconnectedGradients};
use crate::tensor::Tensor;
use crate::variable::Variable;

thread_local! {
    static FRAMES: RefCell<Vec<Vec<Option<GradientTape>>>> = const { RefCell::new(Vec::new()) };
    /// The forward accumulators of each run, by slot (as the tapes).
    static ACC_FRAMES: RefCell<Vec<Vec<Option<ForwardAccumulator>>>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` (a top-level graph run) with a frame of tape slots of its own, as one long
/// call of the pool (ops in it may keep a pool thread awake for their pieces).
pub(super) fn with_frame<R>(f: impl FnOnce() -> R) -> R {
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            let frame = FRAMES.with(|s| s.borrow_mut().pop());
            // A tape the function entered and did not leave (an error in between)
            // stops recording with the call.
            for t in frame.into_iter().flatten().flatten() {
                t.exit();
            }
            let accs = ACC_FRAMES.with(|s| s.borrow_mut().pop());
            for a in accs.into_iter().flatten().flatten() {
                a.exit();
            }
        }
    }
    FRAMES.with(|s| s.borrow_mut().push(Vec::new()));
    ACC_FRAMES.with(|s| s.borrow_mut().push(Vec::new()));
    let _pop = Pop;
    crate::pool::long_call(f)
}

fn slot_tape(slot: usize) -> Result<GradientTape> {
    FRAMES.with(|s| {
        s.borrow()
            .last()
            .and_then(|f| f.get(slot).cloned().flatten())
            .ok_or_else(|| Error::Internal(format!("graph tape slot {slot} used before its Start")))
    })
}

/// Where a traced tape call finds a source when the graph runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SourceRef {
    /// The node's input `k`.
    Input(usize),
    /// The node's variable `k` (the variables [`record_tape_use`] was given).
    Variable(usize),
}

/// What a traced function did with a tape: each use is one graph node, and this is
/// all a run (or a SavedModel) needs to do it again with the run's own tape.
///
/// `present` says which results of a call were not `None` when traced: the node's
/// outputs are those results, so every run must give the same ones.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "use", deny_unknown_fields)]
pub enum TapeSpec {
    /// Entered it (`with tape:`): the run makes a new tape with these options.
    Start {
        persistent: bool,
        watch_accessed_variables: bool,
    },
    /// Left it.
    Exit,
    /// `tape.reset()`.
    Reset,
    /// Entered `tape.stop_recording()`.
    Pause,
    /// Left `tape.stop_recording()`; `was` is what the pause returned.
    Resume { was: bool },
    /// `tape.watch(source)`.
    Watch { source: SourceRef },
    /// `tape.gradient`: the targets are the node's first `targets` inputs; an output
    /// gradient `k` is input `k`. With `sparse`, each gradient is flattened as
    /// [`flatten_grads`] does, and `sparse` says which were `IndexedSlices` when traced.
    Gradient {
        targets: usize,
        sources: Vec<SourceRef>,
        output_gradients: Option<Vec<Option<usize>>>,
        zero_unconnected: bool,
        sparse: Option<Vec<bool>>,
        present: Vec<bool>,
    },
    /// `tape.jacobian` of input 0.
    Jacobian {
        sources: Vec<SourceRef>,
        zero_unconnected: bool,
        parallel_iterations: Option<usize>,
        use_pfor: bool,
        present: Vec<bool>,
    },
    /// `tape.batch_jacobian` of input 0 with respect to input 1.
    BatchJacobian {
        zero_unconnected: bool,
        parallel_iterations: Option<usize>,
        use_pfor: bool,
        present: Vec<bool>,
    },
}

/// The node names of tape uses (TF has no such ops: these are gradtape's own).
pub const TAPE_OPS: &[&str] = &[
    "TapeStart",
    "TapeExit",
    "TapeReset",
    "TapePause",
    "TapeResume",
    "TapeWatch",
    "Gradient",
    "Jacobian",
    "BatchJacobian",
];

/// How a traced tape use is keyed: its tape's slot in the trace, what it does, and the
/// ids of the variables it names (in a SavedModel: their indices among the saved
/// variables).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TapeKey {
    pub slot: usize,
    pub spec: TapeSpec,
    pub variables: Vec<u64>,
}

fn unconnected(zero: bool) -> UnconnectedGradients {
    if zero {
        UnconnectedGradients::Zero
    } else {
        UnconnectedGradients::None
    }
}

/// Gradients as a flat list of tensors: a dense gradient (or `None`) as one entry, an
/// `IndexedSlices` as three (values, indices, the dense shape as an int32 tensor).
pub fn flatten_grads(r: Vec<Option<Grad>>) -> Result<Vec<Option<Tensor>>> {
    let mut flat = Vec::with_capacity(r.len());
    for g in r {
        match g {
            None => flat.push(None),
            Some(Grad::Dense(t)) => flat.push(Some(t)),
            Some(Grad::Sparse(s)) => {
                let dims: Vec<i32> = s
                    .dense_shape
                    .iter()
                    .map(|&d| i32::try_from(d).unwrap_or(i32::MAX))
                    .collect();
                let n = dims.len();
                flat.push(Some(s.values));
                flat.push(Some(s.indices));
                flat.push(Some(Tensor::from_vec(dims, &[n])?));
            }
        }
    }
    Ok(flat)
}

impl TapeSpec {
    /// The node's name.
    pub fn name(&self) -> &'static str {
        match self {
            TapeSpec::Start { .. } => "TapeStart",
            TapeSpec::Exit => "TapeExit",
            TapeSpec::Reset => "TapeReset",
            TapeSpec::Pause => "TapePause",
            TapeSpec::Resume { .. } => "TapeResume",
            TapeSpec::Watch { .. } => "TapeWatch",
            TapeSpec::Gradient { .. } => "Gradient",
            TapeSpec::Jacobian { .. } => "Jacobian",
            TapeSpec::BatchJacobian { .. } => "BatchJacobian",
        }
    }

    fn present(&self) -> Option<&[bool]> {
        match self {
            TapeSpec::Gradient { present, .. }
            | TapeSpec::Jacobian { present, .. }
            | TapeSpec::BatchJacobian { present, .. } => Some(present),
            _ => None,
        }
    }

    /// How many outputs the node has.
    pub fn outputs(&self) -> usize {
        self.present()
            .map_or(0, |p| p.iter().filter(|&&b| b).count())
    }

    /// Checks that the use fits a node of `n_inputs` inputs naming `n_vars` variables
    /// (what a file says of it is not trusted).
    pub fn check(&self, n_inputs: usize, n_vars: usize) -> Result<()> {
        let bad = |what: &str| Err(Error::invalid(self.name(), what.to_string()));
        let fits = |r: &SourceRef| match *r {
            SourceRef::Input(k) => k < n_inputs,
            SourceRef::Variable(k) => k < n_vars,
        };
        match self {
            TapeSpec::Watch { source } if !fits(source) => bad("the watched source is not there"),
            TapeSpec::Gradient {
                targets,
                sources,
                output_gradients,
                sparse,
                present,
                ..
            } => {
                if *targets > n_inputs || !sources.iter().all(fits) {
                    return bad("a target or source is not there");
                }
                if let Some(og) = output_gradients {
                    if og.len() != *targets || og.iter().flatten().any(|&k| k >= n_inputs) {
                        return bad("the output gradients do not fit the targets");
                    }
                }
                let flat = match sparse {
                    Some(kinds) if kinds.len() != sources.len() => {
                        return bad("one sparse flag per source is needed")
                    }
                    Some(kinds) => kinds.iter().map(|&s| if s { 3 } else { 1 }).sum(),
                    None => sources.len(),
                };
                if present.len() != flat {
                    return bad("the results do not fit the sources");
                }
                Ok(())
            }
            TapeSpec::Jacobian {
                sources, present, ..
            } => {
                if n_inputs == 0 || !sources.iter().all(fits) || present.len() != sources.len() {
                    return bad("the target, sources or results are not there");
                }
                Ok(())
            }
            TapeSpec::BatchJacobian { present, .. } => {
                if n_inputs != 2 || present.len() != 1 {
                    return bad("a batch jacobian takes a target and a source");
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Does the use with `tape` on the node's inputs `xs` and variables `vars`.
    fn run(&self, tape: &GradientTape, vars: &[Variable], xs: &[Tensor]) -> Result<Vec<Tensor>> {
        let missing = || Error::Internal(format!("{}: an input is missing", self.name()));
        let source = |r: &SourceRef| -> Result<Source<'_>> {
            Ok(match *r {
                SourceRef::Input(k) => Source::Tensor(xs.get(k).ok_or_else(missing)?),
                SourceRef::Variable(k) => Source::Variable(vars.get(k).ok_or_else(missing)?),
            })
        };
        let results: Vec<Option<Tensor>> = match self {
            TapeSpec::Start { .. } | TapeSpec::Exit => {
                return Err(Error::Internal(format!("{} runs on its own", self.name())))
            }
            TapeSpec::Reset => {
                tape.reset();
                return Ok(Vec::new());
            }
            TapeSpec::Pause => {
                tape.pause()?;
                return Ok(Vec::new());
            }
            TapeSpec::Resume { was } => {
                tape.resume(*was);
                return Ok(Vec::new());
            }
            TapeSpec::Watch { source: r } => {
                match source(r)? {
                    Source::Tensor(t) => tape.watch(t),
                    Source::Variable(v) => tape.watch_variable(v),
                }
                return Ok(Vec::new());
            }
            TapeSpec::Gradient {
                targets,
                sources,
                output_gradients,
                zero_unconnected,
                sparse,
                ..
            } => {
                let ts = xs.get(..*targets).ok_or_else(missing)?;
                let src = sources.iter().map(source).collect::<Result<Vec<_>>>()?;
                let og = output_gradients
                    .as_ref()
                    .map(|og| {
                        og.iter()
                            .map(|k| {
                                k.map(|k| xs.get(k).cloned().ok_or_else(missing))
                                    .transpose()
                            })
                            .collect::<Result<Vec<_>>>()
                    })
                    .transpose()?;
                let un = unconnected(*zero_unconnected);
                match sparse {
                    None => tape.gradient(ts, &src, og.as_deref(), un)?,
                    Some(want) => {
                        let r = tape.gradient_sparse(ts, &src, og.as_deref(), un)?;
                        let got: Vec<bool> = r
                            .iter()
                            .map(|g| matches!(g, Some(Grad::Sparse(_))))
                            .collect();
                        if &got != want {
                            return Err(Error::Internal(
                                "a gradient in a gt.function was sparse (IndexedSlices) when \
                                 traced and dense when run, or the other way round"
                                    .into(),
                            ));
                        }
                        flatten_grads(r)?
                    }
                }
            }
            TapeSpec::Jacobian {
                sources,
                zero_unconnected,
                parallel_iterations,
                use_pfor,
                ..
            } => {
                let t = xs.first().ok_or_else(missing)?;
                let src = sources.iter().map(source).collect::<Result<Vec<_>>>()?;
                tape.jacobian(
                    t,
                    &src,
                    unconnected(*zero_unconnected),
                    *parallel_iterations,
                    *use_pfor,
                )?
            }
            TapeSpec::BatchJacobian {
                zero_unconnected,
                parallel_iterations,
                use_pfor,
                ..
            } => {
                let (t, s) = (
                    xs.first().ok_or_else(missing)?,
                    xs.get(1).ok_or_else(missing)?,
                );
                vec![tape.batch_jacobian(
                    t,
                    s,
                    unconnected(*zero_unconnected),
                    *parallel_iterations,
                    *use_pfor,
                )?]
            }
        };
        let present = self.present().unwrap_or(&[]);
        if results.len() != present.len()
            || results.iter().zip(present).any(|(g, p)| g.is_some() != *p)
        {
            return Err(Error::Internal(format!(
                "{} in a gt.function gave a different set of None results than when traced",
                self.name()
            )));
        }
        Ok(results.into_iter().flatten().collect())
    }
}

/// What a run does for `spec` with the tape in `slot` of its frame: `variables` are
/// the ones the spec names (each looked up again in the run, as a traced variable read
/// is: a run with other variables as arguments uses those).
pub fn tape_forward(slot: usize, spec: TapeSpec, variables: Vec<Variable>) -> super::Forward {
    match spec {
        TapeSpec::Start {
            persistent,
            watch_accessed_variables,
        } => {
            // A traced function that uses a tape is a loop body: while it lives, the
            // allocator cache keeps what it keeps while a tape is alive, so repeated
            // calls reuse their large buffers instead of faulting in fresh pages.
            let life = std::sync::Arc::new(crate::alloc::TapeLife::new());
            std::sync::Arc::new(move |_: &[Tensor]| {
                let _ = &life;
                let t = GradientTape::with_options(persistent, watch_accessed_variables);
                t.start();
                FRAMES.with(|s| {
                    let mut s = s.borrow_mut();
                    let frame = s
                        .last_mut()
                        .ok_or_else(|| Error::Internal("a graph tape outside a run".into()))?;
                    if frame.len() <= slot {
                        frame.resize(slot + 1, None);
                    }
                    frame[slot] = Some(t);
                    Ok::<_, Error>(())
                })?;
                Ok(Vec::new())
            })
        }
        TapeSpec::Exit => std::sync::Arc::new(move |_: &[Tensor]| {
            slot_tape(slot)?.exit();
            Ok(Vec::new())
        }),
        spec => std::sync::Arc::new(move |xs: &[Tensor]| {
            let vars: Vec<Variable> = variables.iter().map(super::resolve).collect();
            spec.run(&slot_tape(slot)?, &vars, xs)
        }),
    }
}

/// Records a use of `tape` in the current trace (nothing when not tracing): `inputs`
/// and `variables` are what `spec` refers to, `outputs` the values the use gave during
/// the trace (its results that were not `None`).
pub fn record_tape_use(
    tape: &GradientTape,
    spec: TapeSpec,
    variables: &[Variable],
    inputs: &[&Tensor],
    outputs: &[Tensor],
) -> Result<()> {
    if !trace::is_tracing() {
        return Ok(());
    }
    spec.check(inputs.len(), variables.len())?;
    let slot = trace::tape_slot(tape.key());
    let name = spec.name();
    let key = TapeKey {
        slot,
        spec: spec.clone(),
        variables: variables.iter().map(Variable::id).collect(),
    };
    let key = serde_json::to_string(&key).map_err(|e| Error::Internal(e.to_string()))?;
    let f = tape_forward(slot, spec, variables.to_vec());
    trace::push_effect_keyed(name, key, f, inputs, outputs)
}

fn slot_acc(slot: usize) -> Result<ForwardAccumulator> {
    ACC_FRAMES.with(|s| {
        s.borrow()
            .last()
            .and_then(|f| f.get(slot).cloned().flatten())
            .ok_or_else(|| {
                Error::Internal(format!(
                    "graph accumulator slot {slot} used before its Start"
                ))
            })
    })
}

/// A use of a forward accumulator when the graph runs: the run's accumulator and the
/// node's inputs.
pub type AccCall = Box<dyn Fn(&ForwardAccumulator, &[Tensor]) -> Result<Vec<Tensor>> + Send + Sync>;

/// What a traced function did with a forward accumulator.
pub enum AccUse {
    /// Created it: the run makes a new, empty accumulator.
    New,
    /// Entered it (`with acc:`).
    Start,
    /// Left it.
    Exit,
    /// Any other use (a watch, a jvp): run `f` with the run's accumulator.
    Call(AccCall),
}

/// Records a use of `acc` in the current trace (nothing when not tracing); `outputs`
/// are the values the use gave during the trace. An accumulator used in a trace gets a
/// new accumulator on every run, as a tape does.
pub fn record_acc_use(
    name: &str,
    acc: &ForwardAccumulator,
    what: AccUse,
    inputs: &[&Tensor],
    outputs: &[Tensor],
) -> Result<()> {
    if !trace::is_tracing() {
        return Ok(());
    }
    let slot = trace::tape_slot(acc.key());
    let f: super::Forward = match what {
        AccUse::New => std::sync::Arc::new(move |_: &[Tensor]| {
            ACC_FRAMES.with(|s| {
                let mut s = s.borrow_mut();
                let frame = s
                    .last_mut()
                    .ok_or_else(|| Error::Internal("a graph accumulator outside a run".into()))?;
                if frame.len() <= slot {
                    frame.resize(slot + 1, None);
                }
                frame[slot] = Some(ForwardAccumulator::new());
                Ok::<_, Error>(())
            })?;
            Ok(Vec::new())
        }),
        AccUse::Start => std::sync::Arc::new(move |_: &[Tensor]| {
            slot_acc(slot)?.start()?;
            Ok(Vec::new())
        }),
        AccUse::Exit => std::sync::Arc::new(move |_: &[Tensor]| {
            slot_acc(slot)?.exit();
            Ok(Vec::new())
        }),
        AccUse::Call(f) => std::sync::Arc::new(move |xs: &[Tensor]| f(&slot_acc(slot)?, xs)),
    };
    trace::push_effect(name, f, inputs, outputs)
}
