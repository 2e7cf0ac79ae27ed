//! The tape's node storage: one contiguous `Vec<Node>` addressed by `u32` index.
//!
//! Nodes are appended in execution order, so index order is a topological order and
//! the backward sweep simply walks indices downwards. A node keeps the op (shared,
//! usually a zero-sized rule), the ids/shapes/dtypes of its inputs and outputs, and
//! only the tensors its gradient rule asked to save (see [`crate::ops::Saves`]).

use std::sync::Arc;

use smallvec::SmallVec;

use crate::dtype::DType;
use crate::ops::Op;
use crate::tensor::{Tensor, TensorId};

/// A shape stored inline for up to four dimensions.
pub type Shape = SmallVec<[usize; 4]>;

/// What the tape remembers of one input or output of a recorded op.
#[derive(Clone, Debug)]
pub struct Slot {
    pub id: TensorId,
    pub shape: Shape,
    pub dtype: DType,
}

impl Slot {
    pub(crate) fn of(t: &Tensor) -> Slot {
        Slot {
            id: t.id(),
            shape: Shape::from_slice(t.shape()),
            dtype: t.dtype(),
        }
    }
}

/// One recorded op.
#[derive(Clone)]
pub struct Node {
    pub(crate) op: Arc<dyn Op>,
    pub(crate) inputs: SmallVec<[Slot; 2]>,
    pub(crate) outputs: SmallVec<[Slot; 1]>,
    pub(crate) saved_inputs: SmallVec<[Option<Tensor>; 2]>,
    pub(crate) saved_outputs: SmallVec<[Option<Tensor>; 1]>,
}

/// Where a tensor id stands on a tape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Entry {
    /// Watched explicitly (a source, or a variable read while watched).
    Watched,
    /// Output `out` of node `node`.
    Produced { node: u32, out: u8 },
}

impl Node {
    /// Drops the tensors the node saved for its gradient rule (the sweep past it, or a
    /// released tape that will not need it).
    pub(crate) fn release_saved(&mut self) {
        self.saved_inputs = SmallVec::new();
        self.saved_outputs = SmallVec::new();
    }
}
