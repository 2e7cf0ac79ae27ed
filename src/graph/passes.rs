//! Graph passes: each takes a graph and returns one that computes the same outputs and
//! performs the same effects, in the same order.

use std::collections::HashMap;

use super::{Graph, Kind, Node, Value};
use crate::error::Result;
use crate::tensor::Tensor;

/// Drops nodes that no output and no effect needs (stateful nodes always stay), and
/// constants nothing reads.
pub(super) fn remove_dead(g: &Graph) -> Graph {
    let mut live = vec![false; g.nodes.len()];
    let mark = |v: &Value, live: &mut Vec<bool>| {
        if let Value::Node(n, _) = v {
            live[*n as usize] = true;
        }
    };
    for v in &g.outputs {
        mark(v, &mut live);
    }
    for (i, n) in g.nodes.iter().enumerate().rev() {
        if n.stateful {
            live[i] = true;
        }
        if live[i] {
            for v in &n.inputs {
                mark(v, &mut live);
            }
        }
    }
    rebuild(g, |i| live[i])
}

/// A copy of `g` with only the nodes `keep` says (and the constants they read),
/// renumbered.
pub(super) fn rebuild(g: &Graph, keep: impl Fn(usize) -> bool) -> Graph {
    let mut node_map: Vec<Option<u32>> = vec![None; g.nodes.len()];
    let mut const_map: HashMap<u32, u32> = HashMap::new();
    let mut out = Graph {
        inputs: g.inputs.clone(),
        shape_dependent: g.shape_dependent,
        ..Graph::default()
    };
    let mut fix = |v: Value, out: &mut Graph, node_map: &[Option<u32>]| -> Value {
        match v {
            Value::Input(_) => v,
            Value::Const(c) => {
                let k = *const_map.entry(c).or_insert_with(|| {
                    out.consts.push(g.consts[c as usize].clone());
                    (out.consts.len() - 1) as u32
                });
                Value::Const(k)
            }
            Value::Node(n, k) => Value::Node(node_map[n as usize].unwrap_or(u32::MAX), k),
        }
    };
    for (i, n) in g.nodes.iter().enumerate() {
        if !keep(i) {
            continue;
        }
        let mut node = n.clone();
        node.inputs = n
            .inputs
            .iter()
            .map(|&v| fix(v, &mut out, &node_map))
            .collect();
        node_map[i] = Some(out.nodes.len() as u32);
        out.nodes.push(node);
    }
    out.outputs = g
        .outputs
        .iter()
        .map(|&v| fix(v, &mut out, &node_map))
        .collect();
    out
}

/// Computes, once, every stateless call whose inputs are all constants that the trace
/// created itself (literals, `zeros`, ...) and uses its value as a constant. Captured
/// tensors stay inputs of the computation: a tape outside may watch them. So do the
/// calls on a value a stateful node takes (a tape's `watch`, above all): a tape inside
/// the function must see them run, or `gradient` of a watched constant would be `None`
/// when the graph runs.
pub(super) fn fold_constants(g: &Graph) -> Result<Graph> {
    let mut out = g.clone();
    let effects: std::collections::HashSet<(u32, u32)> = g
        .nodes
        .iter()
        .filter(|n| n.stateful)
        .flat_map(|n| n.inputs.iter())
        .filter_map(|v| match v {
            Value::Node(m, k) => Some((*m, *k)),
            _ => None,
        })
        .collect();
    // Constants made by the trace: outputs of input-less stateless nodes, transitively.
    let mut folded: HashMap<(u32, u32), u32> = HashMap::new();
    let mut drop = vec![false; g.nodes.len()];
    for (i, n) in g.nodes.iter().enumerate() {
        let Kind::Call(f) = &n.kind else { continue };
        if n.stateful {
            continue;
        }
        let foldable = n.inputs.iter().all(|v| match v {
            Value::Node(m, k) => folded.contains_key(&(*m, *k)) && !effects.contains(&(*m, *k)),
            _ => false,
        });
        if !foldable {
            continue;
        }
        let ins: Vec<Tensor> = n
            .inputs
            .iter()
            .map(|v| match v {
                Value::Node(m, k) => out.consts[folded[&(*m, *k)] as usize].clone(),
                _ => unreachable!("checked above"),
            })
            .collect();
        let Ok(vals) = crate::tape::stack::suspended(|| f(&ins)) else {
            // An error is the graph's to raise when it runs.
            continue;
        };
        for (k, t) in vals.into_iter().enumerate() {
            out.consts.push(t);
            folded.insert((i as u32, k as u32), (out.consts.len() - 1) as u32);
        }
        drop[i] = true;
    }
    if folded.is_empty() {
        return Ok(out);
    }
    let sub = |v: &mut Value| {
        if let Value::Node(m, k) = *v {
            if let Some(&c) = folded.get(&(m, k)) {
                *v = Value::Const(c);
            }
        }
    };
    for n in &mut out.nodes {
        n.inputs.iter_mut().for_each(sub);
    }
    out.outputs.iter_mut().for_each(sub);
    Ok(rebuild(&out, |i| !drop[i]))
}

/// Whether a traced effect makes a tape or forward accumulator record what follows
/// (their nodes are named after `graph::record_tape_use` / `record_acc_use` calls).
fn starts_recording(name: &str) -> bool {
    matches!(
        name,
        "TapeStart"
            | "TapeWatch"
            | "TapeResume"
            | "TapeReset"
            | "AccumulatorStart"
            | "AccumulatorWatch"
    )
}

/// Merges calls with the same name, key and inputs (stateless, keyed ones only): later
/// copies read the first one's outputs, unless a tape or accumulator started recording
/// in between (the later copy must run again for it to see it).
pub(super) fn merge_common(g: &Graph) -> Graph {
    let mut seen: HashMap<(String, String, Vec<Value>), u32> = HashMap::new();
    let mut same: Vec<Option<u32>> = vec![None; g.nodes.len()];
    let mut out = g.clone();
    for i in 0..out.nodes.len() {
        let resolve = |v: &mut Value, same: &[Option<u32>]| {
            if let Value::Node(m, k) = *v {
                if let Some(first) = same[m as usize] {
                    *v = Value::Node(first, k);
                }
            }
        };
        let mut inputs = out.nodes[i].inputs.clone();
        inputs.iter_mut().for_each(|v| resolve(v, &same));
        out.nodes[i].inputs = inputs.clone();
        let n: &Node = &out.nodes[i];
        if n.stateful && starts_recording(&n.name) {
            // A tape or accumulator that starts (or starts watching) here must see the
            // ops after it run again, not read an earlier copy it never saw.
            seen.clear();
        }
        if n.stateful || !matches!(n.kind, Kind::Call(_)) {
            continue;
        }
        let Some(key) = &n.key else { continue };
        match seen.entry((n.name.clone(), key.clone(), inputs)) {
            std::collections::hash_map::Entry::Occupied(e) => same[i] = Some(*e.get()),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(i as u32);
            }
        }
    }
    for v in &mut out.outputs {
        if let Value::Node(m, k) = *v {
            if let Some(first) = same[m as usize] {
                *v = Value::Node(first, k);
            }
        }
    }
    remove_dead(&out)
}
