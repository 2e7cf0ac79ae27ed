//! The bindings of the shape family (moving into `src/ops/` with the family's split).

pub(crate) mod shape;
