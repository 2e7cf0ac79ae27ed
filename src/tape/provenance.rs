//! Where tensors came from, kept only while explanations are on ([`set_enabled`]):
//! for every op run (recorded by a tape or not), its type, the place in the caller's
//! code that ran it (through a hook a binding installs, [`set_locator`]), the ids of
//! its inputs, and which tapes were active and recording. `gt.GradientTape.explain`
//! walks this to say why a gradient is `None` and name the op and line that cut it.
//!
//! Off by default: then the only cost is one relaxed atomic load per op. The table
//! keeps the most recent [`CAPACITY`] entries.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use rustc_hash::FxHashMap;

use crate::dtype::DType;
use crate::tensor::{Tensor, TensorId};

/// Most entries kept (the oldest are forgotten first).
pub const CAPACITY: usize = 1 << 20;

static ON: AtomicBool = AtomicBool::new(false);
static LOCATOR: OnceLock<fn() -> Option<String>> = OnceLock::new();

/// How one tensor (or a variable's value) came to be.
#[derive(Clone, Debug)]
pub struct Origin {
    /// The TF op type (`"AddV2"`), or for values from outside the engine a
    /// description (`"numpy array"`, `"Python number"`).
    pub op: &'static str,
    /// `file:line` in the caller's code, when the hook could tell.
    pub location: Option<String>,
    /// Ids of the op's inputs (for a variable read: the variable's id).
    pub inputs: Vec<TensorId>,
    pub dtype: DType,
    /// Each tape active on this thread when the op ran: (its identity, recording?).
    pub tapes: Vec<(usize, bool)>,
}

#[derive(Default)]
struct Table {
    map: FxHashMap<TensorId, Arc<Origin>>,
    order: VecDeque<TensorId>,
}

fn table() -> &'static Mutex<Table> {
    static T: OnceLock<Mutex<Table>> = OnceLock::new();
    T.get_or_init(Mutex::default)
}

/// Turns the record on or off (off also forgets everything kept).
pub fn set_enabled(on: bool) {
    ON.store(on, Ordering::Relaxed);
    if !on {
        let mut t = table().lock().unwrap_or_else(|e| e.into_inner());
        *t = Table::default();
    }
}

/// Whether ops are being noted.
#[inline]
pub fn enabled() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Installs the function that says where in the caller's code an op runs (once).
pub fn set_locator(f: fn() -> Option<String>) {
    let _ = LOCATOR.set(f);
}

/// Notes that `op` made `outputs` from `inputs` (call only when [`enabled`]).
#[inline(never)]
pub(crate) fn note(op: &'static str, inputs: &[TensorId], outputs: &[&Tensor]) {
    if outputs.is_empty() {
        return;
    }
    let location = LOCATOR.get().and_then(|f| f());
    let tapes = super::stack::snapshot();
    let mut t = table().lock().unwrap_or_else(|e| e.into_inner());
    for out in outputs {
        let origin = Arc::new(Origin {
            op,
            location: location.clone(),
            inputs: inputs.to_vec(),
            dtype: out.dtype(),
            tapes: tapes.clone(),
        });
        if t.map.insert(out.id(), origin).is_none() {
            t.order.push_back(out.id());
        }
    }
    while t.order.len() > CAPACITY {
        if let Some(old) = t.order.pop_front() {
            t.map.remove(&old);
        }
    }
}

/// Where the tensor with this id came from, if it was noted.
pub fn origin(id: TensorId) -> Option<Origin> {
    let t = table().lock().unwrap_or_else(|e| e.into_inner());
    t.map.get(&id).map(|o| (**o).clone())
}
