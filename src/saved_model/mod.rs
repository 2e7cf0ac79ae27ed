//! SavedModels: traced functions, their variables and the objects holding them, on disk,
//! loadable with no Python.
//!
//! A SavedModel is a directory of three files (`docs/saved_model.md` is the full
//! description of the format, version 2):
//!
//! - `saved_model.json`: the structure — format name and version, the variables
//!   (name, dtype, shape, trainable), the functions (each a graph: argument specs,
//!   constants, nodes naming ops of a fixed vocabulary with their attributes, outputs),
//!   the signatures and the object tree (modules, lists, dicts) that holds them;
//! - `variables.safetensors`: each variable's value, under its index (`"0"`, `"1"`, ...);
//! - `constants.safetensors`: the constants the graphs use, under their index.
//!
//! Nothing in the files is code: loading parses JSON and safetensors, checks every
//! reference, count, dtype and shape, and only then builds the graphs, so a bad file is
//! an [`Error::DataLoss`] naming what is wrong and nothing is half loaded.
//!
//! The Python package writes SavedModels (`gt.saved_model.save`); [`load`] reads them:
//!
//! ```no_run
//! use gradtape::{saved_model, GradientTape, Tensor};
//!
//! let model = saved_model::load("saved_model")?;
//! let f = model.signature("serving_default").expect("a signature");
//! let x = Tensor::from_vec(vec![1.0f32, 2.0], &[1, 2])?;
//! let tape = GradientTape::new();
//! let y = {
//!     let _r = tape.enter();
//!     tape.watch(&x);
//!     f.call(&[x.clone()])?.remove(0)
//! };
//! let dy_dx = tape.gradient1(&y, &x)?;
//! # Ok::<(), gradtape::Error>(())
//! ```

pub(crate) mod ops;
pub mod table;

pub use table::OpDef;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, LazyLock, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::custom::CustomGrads;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::{Graph, Kind, Node, Spec, Value};
use crate::tensor::Tensor;
use crate::variable::Variable;

/// The `format` field of `saved_model.json`.
pub const FORMAT: &str = "gradtape.saved_model";
/// The format version this build writes. Version 2 added the ops each op family declares
/// (`table`), variable assigns and random draws; it reads versions 1 and 2 (a version-1
/// file is a version-2 file using only the version-1 ops).
pub const VERSION: u32 = 2;
/// The oldest format version this build reads.
pub const OLDEST_VERSION: u32 = 1;
/// The structure file, the variables and the constants, inside a SavedModel directory.
pub const STRUCTURE_FILE: &str = "saved_model.json";
pub const VARIABLES_FILE: &str = "variables.safetensors";
pub const CONSTANTS_FILE: &str = "constants.safetensors";

/// Deepest nesting of subgraphs (control flow, gradients) a file may have.
const MAX_DEPTH: usize = 32;

// ------------------------------------------------------------------------- the schema

/// `saved_model.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedModelDef {
    pub format: String,
    pub version: u32,
    pub variables: Vec<VariableDef>,
    pub functions: Vec<FunctionDef>,
    pub signatures: BTreeMap<String, usize>,
    /// The object tree; object 0 is the root (what `load` returns in Python).
    pub objects: Vec<ObjectDef>,
}

/// A variable: its value is tensor `"<index>"` of `variables.safetensors`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariableDef {
    /// TF's name, `"dense/kernel:0"`.
    pub name: String,
    pub dtype: String,
    pub shape: Vec<usize>,
    pub trainable: bool,
}

/// One traced function (a concrete function).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FunctionDef {
    pub name: String,
    pub graph: GraphDef,
    /// The Python argument structure (see the format description); Rust callers pass the
    /// flat tensor arguments.
    #[serde(default)]
    pub input_structure: Json,
    /// The Python output structure: `{"tensor": i}` leaves, lists, tuples, dicts and
    /// constants.
    #[serde(default)]
    pub output_structure: Json,
}

/// A graph: argument specs, constants, nodes in run order, outputs.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphDef {
    pub inputs: Vec<SpecDef>,
    /// Indices of tensors of `constants.safetensors`.
    pub consts: Vec<usize>,
    pub nodes: Vec<NodeDef>,
    pub outputs: Vec<ValueRef>,
}

/// An argument's dtype and shape (`null` dims any size, a `null` shape any rank).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecDef {
    pub dtype: String,
    pub shape: Option<Vec<Option<usize>>>,
}

/// A node: an op of the vocabulary (`docs/saved_model.md`) or one of `ReadVariableOp`, `Cond`,
/// `While`, `CustomGradient`, with its attributes, inputs and output count.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeDef {
    pub op: String,
    #[serde(default)]
    pub attrs: serde_json::Map<String, Json>,
    pub inputs: Vec<ValueRef>,
    pub outputs: usize,
}

/// Where a value comes from: `{"input": i}`, `{"const": i}` (the graph's `consts[i]`)
/// or `{"node": [n, k]}` (output `k` of node `n`, an earlier node).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum ValueRef {
    Input(usize),
    Const(usize),
    Node(usize, usize),
}

/// An object of the tree.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum ObjectDef {
    /// A `gt.Module` (or any object with attributes): its class name and attributes.
    Module {
        class: String,
        children: BTreeMap<String, usize>,
    },
    Variable {
        variable: usize,
    },
    /// A `gt.function`: its concrete functions (indices into `functions`).
    Function {
        functions: Vec<usize>,
    },
    List {
        items: Vec<usize>,
    },
    Tuple {
        items: Vec<usize>,
    },
    Dict {
        items: BTreeMap<String, usize>,
    },
}

// ------------------------------------------------------------------------- saving

/// A custom gradient recorded while a function is traced for saving: its gradient as a
/// graph taking the output gradients and then the captured values, giving the input
/// gradients and then the variable gradients (`None`: saved without gradients).
pub struct SavedGradient {
    pub gradient: Option<Arc<Graph>>,
    pub n_inputs: usize,
    pub n_outputs: usize,
    pub n_captured: usize,
    pub variables: Vec<Variable>,
}

static SAVED_GRADIENTS: LazyLock<Mutex<HashMap<u64, Arc<SavedGradient>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));
static NEXT_GRADIENT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Records a custom-gradient node in the current trace (a trace made for saving): its
/// inputs are `inputs`, then `outputs` (the forward's values), then `captured` (values of
/// the trace the gradient graph reads); it returns fresh outputs whose gradient is
/// `gradient`'s. The saved node names the gradient by a key into a table that
/// [`forget_saved_gradients`] empties.
pub fn record_saved_custom_gradient(
    inputs: &[Tensor],
    outputs: &[Tensor],
    captured: &[Tensor],
    saved: SavedGradient,
) -> Result<Vec<Tensor>> {
    let id = NEXT_GRADIENT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let saved = Arc::new(saved);
    SAVED_GRADIENTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(id, saved.clone());
    let all: Vec<&Tensor> = inputs.iter().chain(outputs).chain(captured).collect();
    let f = custom_forward(saved);
    crate::graph::apply(
        "CustomGradient",
        Some(format!("saved:{id}")),
        None,
        &all,
        move |a| f(a),
    )
}

/// Records a custom-gradient node of a live trace (a gt.function's) whose gradient
/// function was traced too: as [`record_saved_custom_gradient`], but in no table (the
/// trace is not saved) and never merged with another node. Its inputs are ordered
/// `inputs, captured, outputs`: the outputs last, as every custom-gradient node of a
/// trace has them (a trace's static shapes take the outputs' from there).
pub fn record_traced_custom_gradient(
    inputs: &[Tensor],
    outputs: &[Tensor],
    captured: &[Tensor],
    saved: SavedGradient,
) -> Result<Vec<Tensor>> {
    let (n_in, n_cap) = (inputs.len(), captured.len());
    let all: Vec<&Tensor> = inputs.iter().chain(captured).chain(outputs).collect();
    let f = custom_forward(Arc::new(saved));
    crate::graph::apply_stateful("CustomGradient", &all, move |a| {
        // custom_forward's order: inputs, outputs, captured.
        let (xs, rest) = a.split_at(n_in);
        let (cs, ys) = rest.split_at(n_cap);
        let ordered: Vec<Tensor> = xs.iter().chain(ys).chain(cs).cloned().collect();
        // While tracing, a forward accumulator's JVP through the gradient gives an
        // example value only (see `graph::scratch`).
        crate::graph::scratch(|| f(&ordered))
    })
}

/// Empties the table of custom gradients recorded for saving.
pub fn forget_saved_gradients() {
    SAVED_GRADIENTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clear();
}

/// The forward of a custom-gradient node: the outputs, recorded with the saved gradient.
fn custom_forward(saved: Arc<SavedGradient>) -> crate::graph::Forward {
    Arc::new(move |a: &[Tensor]| {
        let (n_in, n_out) = (saved.n_inputs, saved.n_outputs);
        let xs: Vec<&Tensor> = a[..n_in].iter().collect();
        let ys = a[n_in..n_in + n_out].to_vec();
        let captured = a[n_in + n_out..].to_vec();
        let vars: Vec<Variable> = saved.variables.iter().map(crate::graph::resolve).collect();
        let gradient = saved.gradient.clone();
        let n_vars = vars.len();
        let grad = move |_: &[Tensor], dys: &[Tensor], _: &[Variable]| -> Result<CustomGrads> {
            let Some(g) = &gradient else {
                // Saved without `experimental_custom_gradients`: TF's error.
                return Err(Error::NoGradient("IdentityN".into()));
            };
            let mut args = dys.to_vec();
            args.extend(captured.iter().cloned());
            // Called while tracing only for an example value (in a scratch trace, see
            // `graph::scratch`): the gradient's ops then run as they are, untraced.
            let mut outs: Vec<Option<Tensor>> = crate::graph::paused(|| g.run(&args))?
                .into_iter()
                .map(Some)
                .collect();
            if outs.len() != n_in + n_vars {
                return Err(Error::invalid(
                    "custom_gradient",
                    format!(
                        "the saved gradient gives {} values for {} inputs and {} variables",
                        outs.len(),
                        n_in,
                        n_vars
                    ),
                ));
            }
            let gv = outs.split_off(n_in);
            Ok((outs, gv))
        };
        crate::custom::record_custom(&xs, ys, vars, Arc::new(grad), None)
    })
}

/// Most tapes one saved function may use (a slot names one; a run keeps a slot array).
const MAX_TAPE_SLOTS: usize = 1 << 16;

/// A saved tape use (`graph::TapeSpec`): its slot, what it does, and the indices of the
/// saved variables it names (fewer than `n_vars`), all checked against the node.
fn tape_parts(nd: &NodeDef, n_vars: usize) -> Result<(usize, crate::graph::TapeSpec, Vec<usize>)> {
    let op = nd.op.as_str();
    let a = &nd.attrs;
    let bad = |what: String| Error::DataLoss(format!("node {op}: {what}"));
    let slot = attr_usize(a, "slot", op)?;
    if slot >= MAX_TAPE_SLOTS {
        return Err(bad(format!("tape slot {slot} is out of range")));
    }
    let spec: crate::graph::TapeSpec = a
        .get("spec")
        .cloned()
        .ok_or_else(|| bad("no spec".into()))
        .and_then(|v| serde_json::from_value(v).map_err(|e| bad(format!("bad spec: {e}"))))?;
    if spec.name() != op {
        return Err(bad(format!("the spec is a {}", spec.name())));
    }
    let variables = a
        .get("variables")
        .and_then(Json::as_array)
        .ok_or_else(|| bad("no variables".into()))?
        .iter()
        .map(|i| {
            i.as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .filter(|&i| i < n_vars)
                .ok_or_else(|| bad(format!("variable {i} does not exist")))
        })
        .collect::<Result<Vec<_>>>()?;
    spec.check(nd.inputs.len(), variables.len())
        .map_err(|e| bad(e.to_string()))?;
    if spec.outputs() != nd.outputs {
        return Err(bad(format!(
            "declares {} outputs where its spec gives {}",
            nd.outputs,
            spec.outputs()
        )));
    }
    Ok((slot, spec, variables))
}

/// The ops that write a variable: one input (the value), no outputs.
const ASSIGN_OPS: &[&str] = &[
    "AssignVariableOp",
    "AssignAddVariableOp",
    "AssignSubVariableOp",
];

/// What saving a graph needs to know of the objects around it.
pub struct Encoder<'a> {
    /// The index of a variable among the saved variables (`None`: not saved).
    pub variable_index: &'a dyn Fn(&Variable) -> Option<usize>,
    /// The index of the saved variable with this id (what an assign node names).
    pub variable_id_index: &'a dyn Fn(u64) -> Option<usize>,
    /// The constants of every graph saved so far (`constants.safetensors`).
    pub constants: Vec<Tensor>,
}

impl Encoder<'_> {
    /// `g` as saved, its constants appended to [`Encoder::constants`].
    pub fn encode(&mut self, g: &Graph) -> Result<GraphDef> {
        self.encode_at(g, 0)
    }

    fn encode_at(&mut self, g: &Graph, depth: usize) -> Result<GraphDef> {
        if depth > MAX_DEPTH {
            return Err(Error::invalid(
                "saved_model",
                "control flow nested too deeply",
            ));
        }
        let consts = g
            .consts
            .iter()
            .map(|t| {
                self.constants.push(t.clone());
                self.constants.len() - 1
            })
            .collect();
        let mut nodes = Vec::with_capacity(g.nodes.len());
        for node in &g.nodes {
            nodes.push(self.encode_node(node, depth).map_err(|e| match e {
                Error::InvalidArgument { op, msg } => Error::InvalidArgument {
                    op,
                    msg: match &node.origin {
                        Some(at) => format!("{msg} (traced at {at})"),
                        None => msg,
                    },
                },
                e => e,
            })?);
        }
        Ok(GraphDef {
            inputs: g.inputs.iter().map(spec_def).collect(),
            consts,
            nodes,
            outputs: g.outputs.iter().map(|&v| value_ref(v)).collect(),
        })
    }

    fn encode_node(&mut self, node: &Node, depth: usize) -> Result<NodeDef> {
        let inputs = node.inputs.iter().map(|&v| value_ref(v)).collect();
        let mut attrs = serde_json::Map::new();
        let op = match &node.kind {
            Kind::Read(v) => {
                let i = (self.variable_index)(v).ok_or_else(|| {
                    Error::invalid(
                        "saved_model",
                        format!(
                            "the function reads variable '{}', which is not an attribute of \
                             the saved object (assign it to one, e.g. `model.v = v`)",
                            v.name()
                        ),
                    )
                })?;
                attrs.insert("variable".into(), i.into());
                "ReadVariableOp".to_string()
            }
            Kind::Cond { then, otherwise } => {
                attrs.insert("then".into(), self.sub(then, depth)?);
                attrs.insert("else".into(), self.sub(otherwise, depth)?);
                "Cond".to_string()
            }
            Kind::While { cond, body, n } => {
                attrs.insert("cond".into(), self.sub(cond, depth)?);
                attrs.insert("body".into(), self.sub(body, depth)?);
                attrs.insert("n".into(), (*n).into());
                "While".to_string()
            }
            Kind::Call(_) if node.name == "CustomGradient" => {
                let saved = node
                    .key
                    .as_deref()
                    .and_then(|k| k.strip_prefix("saved:"))
                    .and_then(|id| id.parse::<u64>().ok())
                    .and_then(|id| {
                        SAVED_GRADIENTS
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .get(&id)
                            .cloned()
                    })
                    .ok_or_else(|| {
                        Error::invalid(
                            "saved_model",
                            "a custom gradient traced outside gt.saved_model.save cannot be saved",
                        )
                    })?;
                attrs.insert("n_inputs".into(), saved.n_inputs.into());
                attrs.insert("n_outputs".into(), saved.n_outputs.into());
                attrs.insert("n_captured".into(), saved.n_captured.into());
                let vars = saved
                    .variables
                    .iter()
                    .map(|v| {
                        (self.variable_index)(v).ok_or_else(|| {
                            Error::invalid(
                                "saved_model",
                                format!(
                                    "the custom gradient reads variable '{}', which is not saved",
                                    v.name()
                                ),
                            )
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                attrs.insert("variables".into(), vars.into());
                let grad = match &saved.gradient {
                    Some(g) => self.sub(g, depth)?,
                    None => Json::Null,
                };
                attrs.insert("gradient".into(), grad);
                "CustomGradient".to_string()
            }
            Kind::Call(_) if ASSIGN_OPS.contains(&node.name.as_str()) => {
                let i = node
                    .key
                    .as_deref()
                    .and_then(|k| k.strip_prefix("variable:"))
                    .and_then(|id| id.parse::<u64>().ok())
                    .and_then(|id| (self.variable_id_index)(id))
                    .ok_or_else(|| {
                        Error::invalid(
                            "saved_model",
                            format!(
                                "the function assigns a variable ({}) that is not an attribute \
                                 of the saved object (assign it to one, e.g. `model.v = v`)",
                                node.name
                            ),
                        )
                    })?;
                attrs.insert("variable".into(), i.into());
                node.name.clone()
            }
            Kind::Call(_) if crate::graph::TAPE_OPS.contains(&node.name.as_str()) => {
                let key: crate::graph::TapeKey = node
                    .key
                    .as_deref()
                    .and_then(|k| serde_json::from_str(k).ok())
                    .ok_or_else(|| {
                        Error::Internal(format!("a traced {} node has no readable key", node.name))
                    })?;
                let vars = key
                    .variables
                    .iter()
                    .map(|&id| {
                        (self.variable_id_index)(id).ok_or_else(|| {
                            Error::invalid(
                                "saved_model",
                                format!(
                                    "the function's tape ({}) uses a variable that is not an \
                                     attribute of the saved object (assign it to one, e.g. \
                                     `model.v = v`)",
                                    node.name
                                ),
                            )
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                attrs.insert("slot".into(), key.slot.into());
                attrs.insert(
                    "spec".into(),
                    serde_json::to_value(&key.spec).map_err(|e| Error::Internal(e.to_string()))?,
                );
                attrs.insert("variables".into(), vars.into());
                node.name.clone()
            }
            Kind::Call(_) => {
                let saveable = !node.stateful
                    || table::for_traced(&node.name, node.inputs.len()).is_some_and(|d| d.stateful);
                if !saveable {
                    return Err(Error::invalid(
                        "saved_model",
                        format!(
                            "a traced {} op (it has an effect beyond its outputs) cannot be \
                             saved",
                            node.name
                        ),
                    ));
                }
                let (op, a) = ops::encode(
                    &node.name,
                    node.key.as_deref(),
                    node.elementwise.as_ref(),
                    node.inputs.len(),
                )?;
                attrs = a;
                op
            }
        };
        Ok(NodeDef {
            op,
            attrs,
            inputs,
            outputs: node.outputs,
        })
    }

    fn sub(&mut self, g: &Graph, depth: usize) -> Result<Json> {
        let def = self.encode_at(g, depth + 1)?;
        serde_json::to_value(def).map_err(|e| Error::Internal(e.to_string()))
    }
}

fn spec_def(s: &Spec) -> SpecDef {
    SpecDef {
        dtype: s.dtype.name().to_string(),
        shape: s.shape.clone(),
    }
}

fn value_ref(v: Value) -> ValueRef {
    match v {
        Value::Input(i) => ValueRef::Input(i as usize),
        Value::Const(i) => ValueRef::Const(i as usize),
        Value::Node(n, k) => ValueRef::Node(n as usize, k as usize),
    }
}

/// Writes a SavedModel directory: `def` as `saved_model.json`, `variables` (one value per
/// declared variable) and `constants` (those [`Encoder`] collected) as safetensors. The
/// Python package's `gt.saved_model.save` writes the same files.
pub fn write(
    dir: impl AsRef<Path>,
    def: &SavedModelDef,
    variables: &[Tensor],
    constants: &[Tensor],
) -> Result<()> {
    let dir = dir.as_ref();
    if variables.len() != def.variables.len() {
        return Err(Error::invalid(
            "saved_model",
            format!(
                "{} variable values for {} declared variables",
                variables.len(),
                def.variables.len()
            ),
        ));
    }
    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
        path: dir.display().to_string(),
        source,
    })?;
    let named = |ts: &[Tensor]| -> Vec<(String, Tensor)> {
        ts.iter()
            .enumerate()
            .map(|(i, t)| (i.to_string(), t.clone()))
            .collect()
    };
    let (vs, cs) = (named(variables), named(constants));
    let meta = crate::io::Metadata::new();
    crate::io::save_file(
        dir.join(VARIABLES_FILE),
        vs.iter().map(|(n, t)| (n.as_str(), t)),
        &meta,
    )?;
    crate::io::save_file(
        dir.join(CONSTANTS_FILE),
        cs.iter().map(|(n, t)| (n.as_str(), t)),
        &meta,
    )?;
    let text = serde_json::to_vec_pretty(def).map_err(|e| Error::Internal(e.to_string()))?;
    crate::io::write_atomic(&dir.join(STRUCTURE_FILE), &text)
}

// ------------------------------------------------------------------------- loading

/// A loaded SavedModel: its variables, its functions and the structure they came with.
pub struct SavedModel {
    def: SavedModelDef,
    variables: Vec<Variable>,
    functions: Vec<ConcreteFunction>,
}

/// A loaded traced function: call it on its flat tensor arguments; the ops it runs
/// record on the active tapes (gradients, custom gradients included).
#[derive(Clone)]
pub struct ConcreteFunction {
    name: String,
    graph: Arc<Graph>,
}

impl ConcreteFunction {
    /// The function's name (the Python function's).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The specs of the flat tensor arguments.
    pub fn inputs(&self) -> &[Spec] {
        self.graph.inputs()
    }
    /// Runs the function on `args` (one tensor per input spec, checked against it).
    pub fn call(&self, args: &[Tensor]) -> Result<Vec<Tensor>> {
        self.graph.run(args)
    }
    /// The graph (for the Python bindings).
    pub fn graph(&self) -> &Arc<Graph> {
        &self.graph
    }
}

impl SavedModel {
    /// The structure as read from `saved_model.json`.
    pub fn def(&self) -> &SavedModelDef {
        &self.def
    }
    /// The variables, in the file's order.
    pub fn variables(&self) -> &[Variable] {
        &self.variables
    }
    /// The variable named `name` (`"dense/kernel:0"`; the `:0` may be left out).
    pub fn variable(&self, name: &str) -> Option<&Variable> {
        self.variables
            .iter()
            .find(|v| v.name() == name || v.name().strip_suffix(":0") == Some(name))
    }
    /// Every concrete function, in the file's order.
    pub fn functions(&self) -> &[ConcreteFunction] {
        &self.functions
    }
    /// The signature `name` (`"serving_default"`, ...).
    pub fn signature(&self, name: &str) -> Option<&ConcreteFunction> {
        self.def
            .signatures
            .get(name)
            .and_then(|&i| self.functions.get(i))
    }
    /// The names of the signatures.
    pub fn signature_names(&self) -> Vec<&str> {
        self.def.signatures.keys().map(String::as_str).collect()
    }
    /// The first concrete function of the `gt.function` at attribute path `path` of the
    /// root object (`"call"`, `"encoder.__call__"`).
    pub fn function(&self, path: &str) -> Option<&ConcreteFunction> {
        let mut obj = self.def.objects.first()?;
        for part in path.split('.') {
            let next = match obj {
                ObjectDef::Module { children, .. } => children.get(part)?,
                ObjectDef::Dict { items } => items.get(part)?,
                ObjectDef::List { items } | ObjectDef::Tuple { items } => {
                    items.get(part.parse::<usize>().ok()?)?
                }
                _ => return None,
            };
            obj = self.def.objects.get(*next)?;
        }
        match obj {
            ObjectDef::Function { functions } => self.functions.get(*functions.first()?),
            _ => None,
        }
    }
}

/// Loads the SavedModel in directory `path` (see the module docs).
pub fn load(path: impl AsRef<Path>) -> Result<SavedModel> {
    let dir = path.as_ref();
    let parts = read(dir)?;
    let variables = parts
        .def
        .variables
        .iter()
        .zip(parts.values)
        .map(|(d, t)| {
            let name = d.name.strip_suffix(":0").unwrap_or(&d.name);
            Variable::new(t, d.trainable, Some(name))
        })
        .collect();
    build(parts.def, parts.constants, variables)
}

/// The checked contents of a SavedModel directory, before anything is built.
pub struct Parts {
    pub def: SavedModelDef,
    /// Each variable's value, checked against its dtype and shape.
    pub values: Vec<Tensor>,
    pub constants: Vec<Tensor>,
}

fn missing(dir: &Path, file: &str, e: Error) -> Error {
    match e {
        Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            Error::DataLoss(format!(
                "{}: the SavedModel is missing its {file}",
                dir.display()
            ))
        }
        e => e,
    }
}

/// Reads and checks a SavedModel directory: the structure, every reference in it, and
/// the tensors' dtypes and shapes.
pub fn read(dir: &Path) -> Result<Parts> {
    let structure = dir.join(STRUCTURE_FILE);
    if !structure.exists() {
        return Err(Error::Io {
            path: dir.display().to_string(),
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("SavedModel file does not exist (no {STRUCTURE_FILE})"),
            ),
        });
    }
    let bytes = crate::io::read(&structure)?;
    let def = parse(&bytes).map_err(|e| crate::io::in_file(&structure, e))?;
    let bad = |e: Error| crate::io::in_file(dir, e);
    let (vals, _) = crate::io::load_file(dir.join(VARIABLES_FILE))
        .map_err(|e| missing(dir, VARIABLES_FILE, e))?;
    let (consts, _) = crate::io::load_file(dir.join(CONSTANTS_FILE))
        .map_err(|e| missing(dir, CONSTANTS_FILE, e))?;
    let values = indexed(vals, def.variables.len(), VARIABLES_FILE).map_err(bad)?;
    let constants = indexed(consts, usize::MAX, CONSTANTS_FILE).map_err(bad)?;
    for (i, (d, t)) in def.variables.iter().zip(&values).enumerate() {
        if t.dtype().name() != d.dtype || t.shape() != d.shape.as_slice() {
            return Err(bad(Error::DataLoss(format!(
                "variable {i} ({}) is declared {} {:?} but its stored value is {} {:?}",
                d.name,
                d.dtype,
                d.shape,
                t.dtype().name(),
                t.shape()
            ))));
        }
    }
    check(&def, constants.len()).map_err(bad)?;
    Ok(Parts {
        def,
        values,
        constants,
    })
}

/// `saved_model.json`'s structure, with its format and version checked.
pub fn parse(bytes: &[u8]) -> Result<SavedModelDef> {
    // The version first, so a newer file says so rather than failing on a new field.
    let raw: Json = serde_json::from_slice(bytes)
        .map_err(|e| Error::DataLoss(format!("not valid JSON: {e}")))?;
    let format = raw.get("format").and_then(Json::as_str);
    if format != Some(FORMAT) {
        return Err(Error::DataLoss(format!(
            "not a gradtape SavedModel (format {format:?}, expected {FORMAT:?})"
        )));
    }
    match raw.get("version").and_then(Json::as_u64) {
        Some(v) if (u64::from(OLDEST_VERSION)..=u64::from(VERSION)).contains(&v) => {}
        v => {
            return Err(Error::DataLoss(format!(
                "unsupported SavedModel format version {} (this gradtape reads versions \
                 {OLDEST_VERSION} to {VERSION})",
                v.map_or("(none)".to_string(), |v| v.to_string())
            )))
        }
    }
    serde_json::from_value(raw)
        .map_err(|e| Error::DataLoss(format!("malformed SavedModel structure: {e}")))
}

/// Tensors named `"0"`, `"1"`, ... in order; `expected` of them (`usize::MAX`: any).
fn indexed(named: Vec<(String, Tensor)>, expected: usize, file: &str) -> Result<Vec<Tensor>> {
    let n = named.len();
    if expected != usize::MAX && n != expected {
        return Err(Error::DataLoss(format!(
            "{file} holds {n} tensors where the structure declares {expected}"
        )));
    }
    let mut out: Vec<Option<Tensor>> = vec![None; n];
    for (name, t) in named {
        let i = name
            .parse::<usize>()
            .ok()
            .filter(|&i| i < n)
            .ok_or_else(|| Error::DataLoss(format!("{file} has an unexpected tensor {name:?}")))?;
        out[i] = Some(t);
    }
    // n names, each a distinct index below n: all present.
    out.into_iter()
        .enumerate()
        .map(|(i, t)| t.ok_or_else(|| Error::DataLoss(format!("{file} lacks tensor \"{i}\""))))
        .collect()
}

/// Every reference of the structure is in range and every count agrees.
fn check(def: &SavedModelDef, n_consts: usize) -> Result<()> {
    for (i, d) in def.variables.iter().enumerate() {
        DType::from_name(&d.dtype).ok_or_else(|| {
            Error::DataLoss(format!("variable {i} has unknown dtype {:?}", d.dtype))
        })?;
    }
    let cx = Cx {
        n_vars: def.variables.len(),
        n_consts,
    };
    for (i, f) in def.functions.iter().enumerate() {
        check_graph(&f.graph, &cx, 0)
            .map_err(|e| prefix(e, &format!("function {i} ({})", f.name)))?;
    }
    for (name, &i) in &def.signatures {
        if i >= def.functions.len() {
            return Err(Error::DataLoss(format!(
                "signature {name:?} names function {i}, which does not exist"
            )));
        }
    }
    if def.objects.is_empty() {
        return Err(Error::DataLoss("the object tree has no root".into()));
    }
    let n_obj = def.objects.len();
    let in_range = |i: usize, what: &str| {
        if i >= n_obj {
            Err(Error::DataLoss(format!(
                "{what} names object {i}, which does not exist"
            )))
        } else {
            Ok(())
        }
    };
    for (k, o) in def.objects.iter().enumerate() {
        let what = format!("object {k}");
        match o {
            ObjectDef::Module { children, .. } | ObjectDef::Dict { items: children } => {
                for &c in children.values() {
                    in_range(c, &what)?;
                }
            }
            ObjectDef::List { items } | ObjectDef::Tuple { items } => {
                for &c in items {
                    in_range(c, &what)?;
                }
            }
            ObjectDef::Variable { variable } => {
                if *variable >= def.variables.len() {
                    return Err(Error::DataLoss(format!(
                        "{what} names variable {variable}, which does not exist"
                    )));
                }
            }
            ObjectDef::Function { functions } => {
                for &f in functions {
                    if f >= def.functions.len() {
                        return Err(Error::DataLoss(format!(
                            "{what} names function {f}, which does not exist"
                        )));
                    }
                }
            }
        }
    }
    Ok(())
}

fn prefix(e: Error, what: &str) -> Error {
    match e {
        Error::DataLoss(m) => Error::DataLoss(format!("{what}: {m}")),
        e => e,
    }
}

struct Cx {
    n_vars: usize,
    n_consts: usize,
}

fn sub_def(attrs: &serde_json::Map<String, Json>, key: &str, op: &str) -> Result<GraphDef> {
    let v = attrs
        .get(key)
        .ok_or_else(|| Error::DataLoss(format!("{op} node lacks its {key:?} graph")))?;
    serde_json::from_value(v.clone())
        .map_err(|e| Error::DataLoss(format!("{op} node's {key:?} graph is malformed: {e}")))
}

fn attr_usize(attrs: &serde_json::Map<String, Json>, key: &str, op: &str) -> Result<usize> {
    attrs
        .get(key)
        .and_then(Json::as_u64)
        .and_then(|x| usize::try_from(x).ok())
        .ok_or_else(|| Error::DataLoss(format!("{op} node lacks its {key:?} count")))
}

fn spec(s: &SpecDef) -> Result<Spec> {
    Ok(Spec {
        dtype: DType::from_name(&s.dtype)
            .ok_or_else(|| Error::DataLoss(format!("unknown dtype {:?}", s.dtype)))?,
        shape: s.shape.clone(),
    })
}

fn check_graph(g: &GraphDef, cx: &Cx, depth: usize) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(Error::DataLoss("subgraphs nested too deeply".into()));
    }
    for s in &g.inputs {
        spec(s)?;
    }
    for &c in &g.consts {
        if c >= cx.n_consts {
            return Err(Error::DataLoss(format!(
                "constant {c} does not exist ({} stored)",
                cx.n_consts
            )));
        }
    }
    let mut outs_of: Vec<usize> = Vec::with_capacity(g.nodes.len());
    let refs_ok = |r: &ValueRef, outs_of: &[usize]| -> Result<()> {
        let ok = match *r {
            ValueRef::Input(i) => i < g.inputs.len(),
            ValueRef::Const(i) => i < g.consts.len(),
            ValueRef::Node(n, k) => n < outs_of.len() && k < outs_of[n],
        };
        if ok {
            Ok(())
        } else {
            Err(Error::DataLoss(format!(
                "a value refers to {r:?}, which does not exist at that point"
            )))
        }
    };
    for (n, node) in g.nodes.iter().enumerate() {
        let at = |e: Error| prefix(e, &format!("node {n} ({})", node.op));
        for r in &node.inputs {
            refs_ok(r, &outs_of).map_err(at)?;
        }
        check_node(node, cx, depth).map_err(at)?;
        outs_of.push(node.outputs);
    }
    for r in &g.outputs {
        refs_ok(r, &outs_of)?;
    }
    Ok(())
}

fn count_is(what: &str, got: usize, want: usize) -> Result<()> {
    if got != want {
        return Err(Error::DataLoss(format!("{what} is {got}, expected {want}")));
    }
    Ok(())
}

fn check_node(node: &NodeDef, cx: &Cx, depth: usize) -> Result<()> {
    let (op, a, n_in) = (node.op.as_str(), &node.attrs, node.inputs.len());
    match op {
        "AssignVariableOp" | "AssignAddVariableOp" | "AssignSubVariableOp" => {
            count_is("the number of inputs", n_in, 1)?;
            count_is("the number of outputs", node.outputs, 0)?;
            let v = attr_usize(a, "variable", op)?;
            if v >= cx.n_vars {
                return Err(Error::DataLoss(format!("variable {v} does not exist")));
            }
        }
        "ReadVariableOp" => {
            count_is("the number of inputs", n_in, 0)?;
            count_is("the number of outputs", node.outputs, 1)?;
            let v = attr_usize(a, "variable", op)?;
            if v >= cx.n_vars {
                return Err(Error::DataLoss(format!("variable {v} does not exist")));
            }
        }
        "Cond" => {
            let (t, e) = (sub_def(a, "then", op)?, sub_def(a, "else", op)?);
            check_graph(&t, cx, depth + 1)?;
            check_graph(&e, cx, depth + 1)?;
            count_is("the number of inputs", n_in, 1 + t.inputs.len())?;
            count_is("the else branch's inputs", e.inputs.len(), t.inputs.len())?;
            count_is("the number of outputs", node.outputs, t.outputs.len())?;
            count_is(
                "the else branch's outputs",
                e.outputs.len(),
                t.outputs.len(),
            )?;
        }
        "While" => {
            let (c, b) = (sub_def(a, "cond", op)?, sub_def(a, "body", op)?);
            check_graph(&c, cx, depth + 1)?;
            check_graph(&b, cx, depth + 1)?;
            let n = attr_usize(a, "n", op)?;
            count_is("the condition's inputs", c.inputs.len(), n_in)?;
            count_is("the body's inputs", b.inputs.len(), n_in)?;
            count_is("the condition's outputs", c.outputs.len(), 1)?;
            count_is("the body's outputs", b.outputs.len(), n)?;
            count_is("the number of outputs", node.outputs, n)?;
            if n > n_in {
                return Err(Error::DataLoss(format!(
                    "{n} loop variables but {n_in} inputs"
                )));
            }
        }
        "CustomGradient" => {
            let n_i = attr_usize(a, "n_inputs", op)?;
            let n_o = attr_usize(a, "n_outputs", op)?;
            let n_c = attr_usize(a, "n_captured", op)?;
            let vars: Vec<usize> = a
                .get("variables")
                .and_then(Json::as_array)
                .and_then(|v| {
                    v.iter()
                        .map(|x| x.as_u64().and_then(|x| usize::try_from(x).ok()))
                        .collect()
                })
                .ok_or_else(|| Error::DataLoss("CustomGradient node lacks its variables".into()))?;
            if let Some(&v) = vars.iter().find(|&&v| v >= cx.n_vars) {
                return Err(Error::DataLoss(format!("variable {v} does not exist")));
            }
            let total = n_i
                .checked_add(n_o)
                .and_then(|x| x.checked_add(n_c))
                .ok_or_else(|| Error::DataLoss("input counts overflow".into()))?;
            count_is("the number of inputs", n_in, total)?;
            count_is("the number of outputs", node.outputs, n_o)?;
            if !matches!(a.get("gradient"), Some(Json::Null)) {
                let g = sub_def(a, "gradient", op)?;
                check_graph(&g, cx, depth + 1)?;
                count_is("the gradient's inputs", g.inputs.len(), n_o + n_c)?;
                count_is("the gradient's outputs", g.outputs.len(), n_i + vars.len())?;
            }
        }
        _ if crate::graph::TAPE_OPS.contains(&op) => {
            tape_parts(node, cx.n_vars)?;
        }
        _ => {
            let ((lo, hi), outs) = ops::arity(op)?;
            if n_in < lo || n_in > hi {
                return Err(Error::DataLoss(if lo == hi {
                    format!("the number of inputs is {n_in}, expected {lo}")
                } else {
                    format!("the number of inputs is {n_in}, expected {lo} to {hi}")
                }));
            }
            match outs {
                Some(k) => count_is("the number of outputs", node.outputs, k)?,
                None if node.outputs == 0 => {
                    return Err(Error::DataLoss("the op needs at least one output".into()))
                }
                None => {}
            }
            // Attributes are read (and checked) by `build`.
            ops::build(op, a, n_in)?;
        }
    }
    Ok(())
}

/// Builds the functions of a checked structure over `variables` (one per declared
/// variable, in order: the Python binding makes them, so that they are Python objects).
pub fn build(
    def: SavedModelDef,
    constants: Vec<Tensor>,
    variables: Vec<Variable>,
) -> Result<SavedModel> {
    if variables.len() != def.variables.len() {
        return Err(Error::invalid(
            "saved_model",
            format!(
                "{} variables for {} declared variables",
                variables.len(),
                def.variables.len()
            ),
        ));
    }
    check(&def, constants.len())?;
    let consts: Vec<Tensor> = constants;
    let functions = def
        .functions
        .iter()
        .map(|f| {
            let g = build_graph(&f.graph, &consts, &variables, false)?;
            Ok(ConcreteFunction {
                name: f.name.clone(),
                graph: Arc::new(g),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(SavedModel {
        def,
        variables,
        functions,
    })
}

fn to_value(r: ValueRef) -> Value {
    // In range of u32: checked graphs refer to existing values only, and a graph of
    // 2^32 nodes does not fit a file the JSON parser accepts.
    match r {
        ValueRef::Input(i) => Value::Input(i as u32),
        ValueRef::Const(i) => Value::Const(i as u32),
        ValueRef::Node(n, k) => Value::Node(n as u32, k as u32),
    }
}

/// A graph of a checked structure. `relaxed`: inputs take any shape (a gradient graph,
/// whose example shapes are those of one call).
fn build_graph(g: &GraphDef, consts: &[Tensor], vars: &[Variable], relaxed: bool) -> Result<Graph> {
    let inputs = g
        .inputs
        .iter()
        .map(|s| {
            let mut s = spec(s)?;
            if relaxed {
                s.shape = None;
            }
            Ok(s)
        })
        .collect::<Result<Vec<_>>>()?;
    let mut nodes = Vec::with_capacity(g.nodes.len());
    for nd in &g.nodes {
        let a = &nd.attrs;
        let op = nd.op.as_str();
        let (kind, elementwise, stateful) = match op {
            "ReadVariableOp" => (
                Kind::Read(vars[attr_usize(a, "variable", op)?].clone()),
                None,
                false,
            ),
            "AssignVariableOp" | "AssignAddVariableOp" | "AssignSubVariableOp" => {
                let v = vars[attr_usize(a, "variable", op)?].clone();
                let write: fn(&Variable, &Tensor) -> Result<()> = match op {
                    "AssignVariableOp" => Variable::assign,
                    "AssignAddVariableOp" => Variable::assign_add,
                    _ => Variable::assign_sub,
                };
                let f: crate::graph::Forward = Arc::new(move |x: &[Tensor]| {
                    write(&crate::graph::resolve(&v), &x[0])?;
                    Ok(Vec::new())
                });
                (Kind::Call(f), None, true)
            }
            "Cond" => (
                Kind::Cond {
                    then: Arc::new(build_graph(
                        &sub_def(a, "then", op)?,
                        consts,
                        vars,
                        relaxed,
                    )?),
                    otherwise: Arc::new(build_graph(
                        &sub_def(a, "else", op)?,
                        consts,
                        vars,
                        relaxed,
                    )?),
                },
                None,
                false,
            ),
            "While" => (
                Kind::While {
                    cond: Arc::new(build_graph(
                        &sub_def(a, "cond", op)?,
                        consts,
                        vars,
                        relaxed,
                    )?),
                    body: Arc::new(build_graph(
                        &sub_def(a, "body", op)?,
                        consts,
                        vars,
                        relaxed,
                    )?),
                    n: attr_usize(a, "n", op)?,
                },
                None,
                false,
            ),
            "CustomGradient" => {
                let gradient = match a.get("gradient") {
                    Some(Json::Null) | None => None,
                    Some(_) => Some(Arc::new(build_graph(
                        &sub_def(a, "gradient", op)?,
                        consts,
                        vars,
                        true,
                    )?)),
                };
                let variables = a
                    .get("variables")
                    .and_then(Json::as_array)
                    .map(|v| {
                        v.iter()
                            .filter_map(|x| x.as_u64())
                            .map(|i| vars[i as usize].clone())
                            .collect()
                    })
                    .unwrap_or_default();
                let saved = SavedGradient {
                    gradient,
                    n_inputs: attr_usize(a, "n_inputs", op)?,
                    n_outputs: attr_usize(a, "n_outputs", op)?,
                    n_captured: attr_usize(a, "n_captured", op)?,
                    variables,
                };
                (Kind::Call(custom_forward(Arc::new(saved))), None, true)
            }
            _ if crate::graph::TAPE_OPS.contains(&op) => {
                let (slot, spec, vs) = tape_parts(nd, vars.len())?;
                let vs = vs.into_iter().map(|i| vars[i].clone()).collect();
                (
                    Kind::Call(crate::graph::tape_forward(slot, spec, vs)),
                    None,
                    true,
                )
            }
            _ => {
                let f = ops::build(op, a, nd.inputs.len())?;
                // A file's output count is checked when the node runs (an unstack's
                // number of parts is its input's size).
                let (n_out, name) = (nd.outputs, nd.op.clone());
                let f: crate::graph::Forward = Arc::new(move |xs: &[Tensor]| {
                    let out = f(xs)?;
                    if out.len() != n_out {
                        return Err(Error::invalid(
                            "saved_model",
                            format!(
                                "node {name} gave {} outputs where the file declares {n_out}",
                                out.len()
                            ),
                        ));
                    }
                    Ok(out)
                });
                let ew = ops::elementwise_of(op, a);
                (Kind::Call(f), ew, table::is_stateful(op))
            }
        };
        nodes.push(Node {
            name: nd.op.clone(),
            key: None,
            elementwise,
            kind,
            inputs: nd.inputs.iter().map(|&r| to_value(r)).collect(),
            outputs: nd.outputs,
            stateful,
            origin: None,
        });
    }
    let consts = g.consts.iter().map(|&c| consts[c].clone()).collect();
    Ok(Graph {
        inputs,
        consts,
        nodes,
        outputs: g.outputs.iter().map(|&r| to_value(r)).collect(),
        ..Graph::default()
    })
}

#[cfg(test)]
mod tests;
