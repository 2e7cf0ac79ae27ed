//! Fusion: a chain of elementwise ops runs as one pass over memory, in tiles.
//!
//! A chain is a run of elementwise nodes (unary, or binary with broadcasting) where each
//! node reads the previous one's output and nothing else reads that output; the other
//! operands are any earlier values. The fused node computes the chain tile by tile
//! (`TILE` elements, small enough to stay in cache), tiles spread over the pool's
//! threads, so the chain's intermediates are never written to memory at full size. A
//! compiled chain whose only reader is a sum over all of its elements (`reduce_sum(x)`)
//! fuses with it: each tile is summed where it is computed (see `chain::run_sum`).
//!
//! Tapes record the ops of a chain one by one (their gradients need them): while a tape
//! is active on the thread, or when the operands do not tile (mixed shapes other than
//! scalars, strided storage), a fused node runs its ops unfused, with the same results.

use std::sync::{Arc, Mutex};

use super::chain::{self, Arg, Chain, Step};
use super::{Graph, Kind, Node, Value};
use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// Elements per tile: 16 K (64 KiB of f32) keeps a chain's temporaries in L2.
const TILE: usize = 1 << 14;
/// Below this many elements a chain runs unfused (tiling costs more than it saves).
const MIN_FUSED: usize = 1 << 15;

/// Replaces every chain of two or more fusable nodes with one fused node.
pub(super) fn fuse_elementwise(g: &Graph) -> Graph {
    let n = g.nodes.len();
    let mut uses = vec![0usize; n];
    // The first node reading each node's outputs.
    let mut reader: Vec<Option<usize>> = vec![None; n];
    // Readers per node: a node reading a value twice (`h * h`) is one reader.
    for (j, node) in g.nodes.iter().enumerate() {
        let mut seen: Vec<u32> = Vec::new();
        for v in &node.inputs {
            if let Value::Node(m, _) = v {
                if !seen.contains(m) {
                    seen.push(*m);
                    uses[*m as usize] += 1;
                    reader[*m as usize].get_or_insert(j);
                }
            }
        }
    }
    for v in &g.outputs {
        if let Value::Node(m, _) = v {
            uses[*m as usize] += 1;
        }
    }
    let fusable = |i: usize| g.nodes[i].elementwise.is_some() && !g.nodes[i].stateful;
    // chain_next[i] = the node continuing i's chain.
    let mut next: Vec<Option<usize>> = vec![None; n];
    let mut has_prev = vec![false; n];
    for (j, node) in g.nodes.iter().enumerate() {
        if !fusable(j) {
            continue;
        }
        for v in &node.inputs {
            if let Value::Node(m, 0) = *v {
                let m = m as usize;
                if fusable(m) && uses[m] == 1 && next[m].is_none() && !has_prev[j] {
                    next[m] = Some(j);
                    has_prev[j] = true;
                    break;
                }
            }
        }
    }
    let mut out = g.clone();
    let mut removed = vec![false; n];
    for start in 0..n {
        if has_prev[start] || next[start].is_none() {
            continue;
        }
        let mut chain = vec![start];
        while let Some(j) = next[*chain.last().expect("non-empty")] {
            chain.push(j);
        }
        let mut inputs: Vec<Value> = Vec::new();
        let ext = |v: Value, inputs: &mut Vec<Value>| -> Arg {
            Arg::Ext(match inputs.iter().position(|&u| u == v) {
                Some(k) => k,
                None => {
                    inputs.push(v);
                    inputs.len() - 1
                }
            })
        };
        let last = *chain.last().expect("non-empty");
        let mut steps = Vec::with_capacity(chain.len());
        let mut names = Vec::with_capacity(chain.len());
        for (k, &i) in chain.iter().enumerate() {
            let node = &g.nodes[i];
            let prev = if k == 0 { None } else { Some(chain[k - 1]) };
            let mut args = [Arg::Carry; 2];
            for (a, v) in node.inputs.iter().enumerate().take(2) {
                args[a] = match (*v, prev) {
                    (Value::Node(m, 0), Some(p)) if m as usize == p => Arg::Carry,
                    _ => ext(*v, &mut inputs),
                };
            }
            steps.push(Step {
                f: node.elementwise.expect("fusable"),
                args,
            });
            names.push(node.name.clone());
        }
        let steps: Arc<[Step]> = steps.into();
        let compiled = Chain::compile(&steps, inputs.len()).map(Arc::new);
        // A compiled chain read only by a sum over all its elements: the two are one
        // node, and the chain's result is never stored.
        let summed = compiled.as_ref().and_then(|c| {
            let j = reader[last].filter(|_| uses[last] == 1)?;
            is_full_sum(&g.nodes[j], last).then(|| (j, c.clone()))
        });
        if let Some((j, c)) = summed {
            names.push(g.nodes[j].name.clone());
            let fused = Node {
                name: format!("Fused[{}]", names.join(",")),
                key: None,
                elementwise: None,
                kind: Kind::Call(Arc::new(move |xs: &[Tensor]| {
                    Ok(vec![run_sum(&steps, &c, xs)?])
                })),
                inputs,
                outputs: 1,
                stateful: false,
                origin: g.nodes[j].origin.clone(),
            };
            out.nodes[j] = fused;
            for &i in &chain {
                removed[i] = true;
            }
            continue;
        }
        let fused = Node {
            name: format!("Fused[{}]", names.join(",")),
            key: None,
            elementwise: None,
            kind: Kind::Call(Arc::new(move |xs: &[Tensor]| {
                Ok(vec![run(&steps, compiled.as_ref(), xs)?])
            })),
            inputs,
            outputs: 1,
            stateful: false,
            origin: g.nodes[last].origin.clone(),
        };
        // The fused node takes the last node's place (its readers see no change); the
        // others go.
        out.nodes[last] = fused;
        for &i in &chain[..chain.len() - 1] {
            removed[i] = true;
        }
    }
    if !removed.iter().any(|&r| r) {
        return out;
    }
    // The chains' other nodes have no readers left (each fed only the next).
    super::passes::rebuild(&out, |i| !removed[i])
}

/// Whether `node` sums every element of node `of`'s output into a scalar
/// (`reduce_sum(x)`: no axes, no kept dimensions).
fn is_full_sum(node: &Node, of: usize) -> bool {
    node.name == "Sum"
        && node.key.as_deref() == Some("None,false")
        && node.inputs.as_slice() == [Value::Node(of as u32, 0)]
        && node.outputs == 1
        && !node.stateful
        && matches!(node.kind, Kind::Call(_))
}

/// Runs a chain and sums its result: in one tiled pass when the operands fit the
/// compiled loops, else the chain (as `run`) then `reduce_sum`.
fn run_sum(steps: &[Step], compiled: &Arc<Chain>, xs: &[Tensor]) -> Result<Tensor> {
    if let Some(out) = chain::run_sum(compiled, xs)? {
        return Ok(out);
    }
    let y = run(steps, Some(compiled), xs)?;
    crate::ops::reduce_sum(&y, None, false)
}

/// Runs a chain: through its compiled loops when it has them and the operands fit
/// (then recorded as one node under a tape), else tiled when nothing records and the
/// operands tile, else op by op.
fn run(steps: &[Step], compiled: Option<&Arc<Chain>>, xs: &[Tensor]) -> Result<Tensor> {
    if let Some(c) = compiled {
        if let Some(out) = chain::run(c, xs)? {
            return Ok(out);
        }
    }
    if crate::tape::stack::any_active() {
        return run_unfused(steps, xs);
    }
    let Some(full) = xs.iter().max_by_key(|t| t.size()) else {
        return run_unfused(steps, xs);
    };
    let shape = full.shape().to_vec();
    let n = full.size();
    let tiles = n >= MIN_FUSED
        && xs.iter().all(|t| {
            (t.shape() == shape.as_slice() && t.is_standard_layout())
                || (t.size() == 1 && t.ndim() <= shape.len())
        });
    if !tiles {
        return run_unfused(steps, xs);
    }
    // Operands per tile: full ones sliced, single elements as scalars.
    let scalars: Vec<Option<Tensor>> = xs
        .iter()
        .map(|t| {
            if t.shape() == shape.as_slice() {
                Ok(None)
            } else {
                crate::tape::stack::suspended(|| crate::ops::reshape(t, &[])).map(Some)
            }
        })
        .collect::<Result<_>>()?;
    let tile_inputs = |lo: usize, hi: usize| -> Result<Vec<Tensor>> {
        xs.iter()
            .zip(&scalars)
            .map(|(t, s)| match s {
                Some(s) => Ok(s.clone()),
                None => t.flat_range(lo, hi),
            })
            .collect()
    };
    // The first tile gives the result's dtype.
    let first = run_unfused(steps, &tile_inputs(0, TILE.min(n))?)?;
    let out = match first.dtype() {
        DType::F32 => fill::<f32>(steps, &tile_inputs, n, &first)?,
        DType::F64 => fill::<f64>(steps, &tile_inputs, n, &first)?,
        DType::Bool => fill::<bool>(steps, &tile_inputs, n, &first)?,
        DType::I32 => fill::<i32>(steps, &tile_inputs, n, &first)?,
        DType::I64 => fill::<i64>(steps, &tile_inputs, n, &first)?,
        _ => return run_unfused(steps, xs),
    };
    crate::tape::stack::suspended(|| crate::ops::reshape(&out, &shape))
}

/// The result buffer filled tile by tile on the pool (the first tile already computed).
fn run_unfused(steps: &[Step], xs: &[Tensor]) -> Result<Tensor> {
    chain::run_steps(steps, xs)
}

fn fill<T: Element + Default>(
    steps: &[Step],
    tile_inputs: &(dyn Fn(usize, usize) -> Result<Vec<Tensor>> + Sync),
    n: usize,
    first: &Tensor,
) -> Result<Tensor> {
    let mut buf: Vec<T> = Vec::new();
    buf.try_reserve_exact(n)
        .map_err(|_| Error::exhausted("fused", format!("cannot allocate {n} elements")))?;
    buf.resize(n, T::default());
    let error: Mutex<Option<Error>> = Mutex::new(None);
    let copy = |t: &Tensor, piece: &mut [T]| -> Result<()> {
        let a = T::unwrap(t.data())
            .ok_or_else(|| Error::Internal("fused tile dtype changed".into()))?;
        match a.as_slice() {
            Some(s) if s.len() == piece.len() => piece.copy_from_slice(s),
            _ => {
                for (d, s) in piece.iter_mut().zip(a.iter()) {
                    *d = *s;
                }
            }
        }
        Ok(())
    };
    crate::pool::pieces(&mut buf, TILE, |i, piece| {
        let lo = i * TILE;
        let r = if i == 0 {
            copy(first, piece)
        } else {
            tile_inputs(lo, lo + piece.len())
                .and_then(|ins| run_unfused(steps, &ins))
                .and_then(|t| copy(&t, piece))
        };
        if let Err(e) = r {
            let mut slot = error.lock().unwrap_or_else(|p| p.into_inner());
            slot.get_or_insert(e);
        }
    });
    if let Some(e) = error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    Tensor::from_vec(buf, &[n])
}
