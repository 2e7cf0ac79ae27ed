//! Gradient tapes used inside a traced function.
//!
//! A tape the function creates, enters, watches with and asks for gradients is traced
//! like any op: each use is a node, and the nodes of one tape share a slot. When the
//! graph runs, its `Start` node makes a new tape in that slot of the run's frame (a
//! frame per top-level run; control-flow subgraphs share their caller's), and the other
//! nodes use it: so every call differentiates its own ops, exactly as the eager code
//! would on each call.

use std::cell::RefCell;

use super::trace;
use crate::error::{Error, Result};
use crate::tape::{ForwardAccumulator, GradientTape};
use crate::tensor::Tensor;

thread_local! {
    static FRAMES: RefCell<Vec<Vec<Option<GradientTape>>>> = const { RefCell::new(Vec::new()) };
    /// The forward accumulators of each run, by slot (as the tapes).
    static ACC_FRAMES: RefCell<Vec<Vec<Option<ForwardAccumulator>>>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` (a top-level graph run) with a frame of tape slots of its own.
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
    f()
}

fn slot_tape(slot: usize) -> Result<GradientTape> {
    FRAMES.with(|s| {
        s.borrow()
            .last()
            .and_then(|f| f.get(slot).cloned().flatten())
            .ok_or_else(|| Error::Internal(format!("graph tape slot {slot} used before its Start")))
    })
}

/// A use of a tape when the graph runs: the run's tape and the node's inputs.
pub type TapeCall = Box<dyn Fn(&GradientTape, &[Tensor]) -> Result<Vec<Tensor>> + Send + Sync>;

/// What a traced function did with a tape.
pub enum TapeUse {
    /// Entered it (`with tape:`): the run makes a new tape with these options.
    Start {
        persistent: bool,
        watch_accessed_variables: bool,
    },
    /// Left it.
    Exit,
    /// Any other use: run `f` with the run's tape and the node's input tensors.
    Call(TapeCall),
}

/// Records a use of `tape` in the current trace (nothing when not tracing); `outputs`
/// are the values the use gave during the trace.
pub fn record_tape_use(
    name: &str,
    tape: &GradientTape,
    what: TapeUse,
    inputs: &[&Tensor],
    outputs: &[Tensor],
) -> Result<()> {
    if !trace::is_tracing() {
        return Ok(());
    }
    let slot = trace::tape_slot(tape.key());
    let f: super::Forward = match what {
        TapeUse::Start {
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
        TapeUse::Exit => std::sync::Arc::new(move |_: &[Tensor]| {
            slot_tape(slot)?.exit();
            Ok(Vec::new())
        }),
        TapeUse::Call(f) => std::sync::Arc::new(move |xs: &[Tensor]| f(&slot_tape(slot)?, xs)),
    };
    trace::push_effect(name, f, inputs, outputs)
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
