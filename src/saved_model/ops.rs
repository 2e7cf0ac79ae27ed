//! The op vocabulary of saved graphs: each graph node a SavedModel can hold, how a traced
//! node becomes a `{"op", "attrs"}` entry (from its name and key, the text of its
//! non-tensor arguments), and how a loader turns an entry back into the same computation.
//!
//! A traced node is a closure; what makes it saveable is that its name and key say
//! everything the closure does (the graph optimizer relies on this too: equal name, key
//! and inputs compute the same thing). The version-1 ops of `docs/saved_model.md` are
//! here, with the same attributes; every other op declares its saved form beside its own
//! code (see `table`), and a traced node neither knows cannot be saved (`encode` says
//! which one it is).

use serde_json::{json, Map, Value};

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::{Elementwise, Forward};
use crate::ops;
use crate::tensor::Tensor;

type UnaryFn = fn(&Tensor) -> Result<Tensor>;
type BinaryFn = fn(&Tensor, &Tensor) -> Result<Tensor>;

/// Elementwise unary ops by their `gt` name.
const UNARY: &[(&str, UnaryFn)] = &[
    ("abs", ops::abs),
    ("acos", ops::acos),
    ("angle", ops::angle),
    ("asin", ops::asin),
    ("atan", ops::atan),
    ("ceil", ops::ceil),
    ("conj", ops::conj),
    ("cos", ops::cos),
    ("cosh", ops::cosh),
    ("elu", ops::elu),
    ("erf", ops::erf),
    ("exp", ops::exp),
    ("expm1", ops::expm1),
    ("floor", ops::floor),
    ("identity", ops::identity),
    ("imag", ops::imag),
    ("log", ops::log),
    ("log1p", ops::log1p),
    ("logical_not", ops::logical_not),
    ("negative", ops::neg),
    ("real", ops::real),
    ("reciprocal", ops::reciprocal),
    ("relu", ops::relu),
    ("relu6", ops::relu6),
    ("round", ops::round),
    ("rsqrt", ops::rsqrt),
    ("selu", ops::selu),
    ("sigmoid", ops::sigmoid),
    ("sign", ops::sign),
    ("sin", ops::sin),
    ("sinh", ops::sinh),
    ("softplus", ops::softplus),
    ("softsign", ops::softsign),
    ("sqrt", ops::sqrt),
    ("square", ops::square),
    ("stop_gradient", ops::stop_gradient),
    ("tan", ops::tan),
    ("tanh", ops::tanh),
    // issue 14's math ops (ops/special.rs)
    ("acosh", ops::acosh),
    ("asinh", ops::asinh),
    ("atanh", ops::atanh),
    ("erfc", ops::erfc),
    ("lgamma", ops::lgamma),
    ("digamma", ops::digamma_t),
    ("log_sigmoid", ops::log_sigmoid),
    ("reciprocal_no_nan", ops::reciprocal_no_nan),
    ("is_finite", ops::is_finite),
    ("is_nan", ops::is_nan),
    ("is_inf", ops::is_inf),
    ("rint", ops::rint),
];

/// Elementwise binary ops (broadcasting) by their `gt` name.
const BINARY: &[(&str, BinaryFn)] = &[
    ("add", ops::add),
    ("atan2", ops::atan2),
    ("complex", ops::complex),
    ("divide", ops::divide),
    ("equal", ops::equal),
    ("floordiv", ops::floordiv),
    ("floormod", ops::floormod),
    ("greater", ops::greater),
    ("greater_equal", ops::greater_equal),
    ("less", ops::less),
    ("less_equal", ops::less_equal),
    ("logical_and", ops::logical_and),
    ("logical_or", ops::logical_or),
    ("logical_xor", ops::logical_xor),
    ("maximum", ops::maximum),
    ("minimum", ops::minimum),
    ("multiply", ops::multiply),
    ("multiply_no_nan", ops::multiply_no_nan),
    ("not_equal", ops::not_equal),
    ("pow", ops::pow),
    ("squared_difference", ops::squared_difference),
    ("subtract", ops::subtract),
    ("truediv", ops::truediv),
    // issue 14's math ops (ops/special.rs)
    ("xlogy", ops::xlogy),
    ("xdivy", ops::xdivy),
    ("xlog1py", ops::xlog1py),
    ("divide_no_nan", ops::divide_no_nan),
    ("polygamma", ops::polygamma_t),
];

/// The attributes of a saved node, as `encode` makes them.
pub type Attrs = Map<String, Value>;

fn unsupported(name: &str) -> Error {
    Error::invalid(
        "saved_model",
        format!(
            "a traced {name} op cannot be saved yet (docs/saved_model.md lists the ops a \
             SavedModel holds)"
        ),
    )
}

fn bad_key(name: &str, key: &str) -> Error {
    Error::Internal(format!(
        "saved_model: cannot read the arguments {key:?} of a traced {name} op"
    ))
}

/// Splits `a,b,[c, d],Some([e])` at the commas outside brackets and parentheses.
fn parts(key: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in key.char_indices() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(key[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(key[start..].trim());
    out
}

fn p_bool(s: &str) -> Option<Value> {
    s.parse::<bool>().ok().map(Value::Bool)
}

fn p_int(s: &str) -> Option<Value> {
    s.parse::<i64>().ok().map(Value::from)
}

fn p_float(s: &str) -> Option<Value> {
    // f64's Debug text; JSON has no NaN or infinities, so those travel as strings.
    let x = s.parse::<f64>().ok()?;
    Some(if x.is_finite() {
        json!(x)
    } else {
        Value::String(s.to_string())
    })
}

/// `[1, -2]` (a Debug-printed list of integers).
fn p_ints(s: &str) -> Option<Value> {
    let inner = s.strip_prefix('[')?.strip_suffix(']')?;
    if inner.trim().is_empty() {
        return Some(json!([]));
    }
    inner
        .split(',')
        .map(|x| x.trim().parse::<i64>().ok().map(Value::from))
        .collect::<Option<Vec<_>>>()
        .map(Value::Array)
}

/// `None` or `Some(x)`.
fn p_opt(s: &str, inner: fn(&str) -> Option<Value>) -> Option<Value> {
    if s == "None" {
        return Some(Value::Null);
    }
    inner(s.strip_prefix("Some(")?.strip_suffix(')')?)
}

/// A DType's Debug text (`F32`, `I64`, ...) as TF's name (`float32`, `int64`).
fn p_dtype(s: &str) -> Option<Value> {
    DType::ALL
        .iter()
        .find(|d| format!("{d:?}") == s)
        .map(|d| Value::String(d.name().to_string()))
}

/// Attributes from `key`'s parts read by `readers`, named `names`.
/// Reads one part of a key into an attribute value.
type Reader = fn(&str) -> Option<Value>;

fn read(name: &str, key: &str, fields: &[(&str, Reader)]) -> Result<Attrs> {
    let ps = if fields.is_empty() && key.is_empty() {
        Vec::new()
    } else {
        parts(key)
    };
    if ps.len() != fields.len() {
        return Err(bad_key(name, key));
    }
    let mut m = Map::new();
    for ((field, reader), p) in fields.iter().zip(ps) {
        m.insert(
            (*field).to_string(),
            reader(p).ok_or_else(|| bad_key(name, key))?,
        );
    }
    Ok(m)
}

fn opt_ints(s: &str) -> Option<Value> {
    p_opt(s, p_ints)
}
fn opt_int(s: &str) -> Option<Value> {
    p_opt(s, p_int)
}
fn opt_dtype(s: &str) -> Option<Value> {
    p_opt(s, p_dtype)
}

/// The saved `(op, attrs)` of a traced engine-call node.
pub(crate) fn encode(
    name: &str,
    key: Option<&str>,
    elementwise: Option<&Elementwise>,
    n_inputs: usize,
) -> Result<(String, Attrs)> {
    let mut attrs = Map::new();
    match elementwise {
        Some(Elementwise::Unary(f)) => {
            let found = UNARY.iter().find(|(_, g)| *g as usize == *f as usize);
            let (fname, _) = found.ok_or_else(|| unsupported("elementwise unary"))?;
            attrs.insert("fn".into(), json!(fname));
            return Ok(("Unary".into(), attrs));
        }
        Some(Elementwise::Binary(f)) => {
            let found = BINARY.iter().find(|(_, g)| *g as usize == *f as usize);
            let (fname, _) = found.ok_or_else(|| unsupported("elementwise binary"))?;
            attrs.insert("fn".into(), json!(fname));
            return Ok(("Binary".into(), attrs));
        }
        None => {}
    }
    let Some(key) = key else {
        return Err(unsupported(name));
    };
    let attrs = match (name, n_inputs) {
        ("Const", 1) => read(name, key, &[("dtype", opt_dtype), ("shape", opt_ints)])?,
        ("Cast", 1) => read(name, key, &[("dtype", p_dtype)])?,
        ("BatchMatMulV2", 2) => read(
            name,
            key,
            &[
                ("transpose_a", p_bool),
                ("transpose_b", p_bool),
                ("adjoint_a", p_bool),
                ("adjoint_b", p_bool),
            ],
        )?,
        (
            "Sum" | "Mean" | "Max" | "Min" | "Prod" | "ReduceVariance" | "ReduceStd"
            | "ReduceLogSumExp",
            1,
        ) => read(name, key, &[("axis", opt_ints), ("keepdims", p_bool)])?,
        ("Cumsum" | "Cumprod", 1) => read(
            name,
            key,
            &[("axis", p_int), ("exclusive", p_bool), ("reverse", p_bool)],
        )?,
        ("ArgMax" | "ArgMin", 1) => {
            read(name, key, &[("axis", opt_int), ("output_type", p_dtype)])?
        }
        ("Softmax" | "LogSoftmax", 1) => read(name, key, &[("axis", p_int)])?,
        ("LeakyRelu", 1) => read(name, key, &[("alpha", p_float)])?,
        ("Gelu", 1) => read(name, key, &[("approximate", p_bool)])?,
        ("Silu", 1) => read(name, key, &[("beta", p_float)])?,
        ("L2Loss", 1) | ("SelectV2", 3) | ("ClipByValue", 3) => read(name, key, &[])?,
        ("ClipByNorm", 2) => read(name, key, &[("axes", opt_ints)])?,
        ("Reshape", 1) => read(name, key, &[("shape", p_ints)])?,
        ("Transpose", 1) => read(name, key, &[("perm", opt_ints), ("conjugate", p_bool)])?,
        ("ExpandDims", 1) => read(name, key, &[("axis", p_int)])?,
        ("Squeeze", 1) => read(name, key, &[("axis", opt_ints)])?,
        ("BroadcastTo", 1) => read(name, key, &[("shape", p_ints)])?,
        ("ConcatV2" | "Pack", n) if n > 0 => read(name, key, &[("axis", p_int)])?,
        ("ZerosLike" | "OnesLike", 1) => read(name, key, &[("dtype", p_dtype)])?,
        ("Zeros" | "Ones", 0) => read(name, key, &[("shape", p_ints), ("dtype", p_dtype)])?,
        _ => {
            // An op that declares its saved form beside its code.
            let def = super::table::for_traced(name, n_inputs).ok_or_else(|| unsupported(name))?;
            return Ok((def.op.to_string(), super::table::encode(def, key)?));
        }
    };
    Ok((name.to_string(), attrs))
}

fn bad_attrs(op: &str, what: &str) -> Error {
    Error::DataLoss(format!(
        "node {op}: attribute {what} is missing or malformed"
    ))
}

fn a_bool(op: &str, a: &Attrs, k: &str) -> Result<bool> {
    a.get(k)
        .and_then(Value::as_bool)
        .ok_or_else(|| bad_attrs(op, k))
}

fn a_int(op: &str, a: &Attrs, k: &str) -> Result<isize> {
    a.get(k)
        .and_then(Value::as_i64)
        .and_then(|x| isize::try_from(x).ok())
        .ok_or_else(|| bad_attrs(op, k))
}

fn a_float(op: &str, a: &Attrs, k: &str) -> Result<f64> {
    match a.get(k) {
        Some(Value::Number(n)) => n.as_f64().ok_or_else(|| bad_attrs(op, k)),
        Some(Value::String(s)) => s.parse::<f64>().map_err(|_| bad_attrs(op, k)),
        _ => Err(bad_attrs(op, k)),
    }
}

fn a_ints(op: &str, a: &Attrs, k: &str) -> Result<Vec<i64>> {
    a.get(k)
        .and_then(Value::as_array)
        .and_then(|xs| xs.iter().map(Value::as_i64).collect::<Option<Vec<_>>>())
        .ok_or_else(|| bad_attrs(op, k))
}

fn a_opt_ints(op: &str, a: &Attrs, k: &str) -> Result<Option<Vec<isize>>> {
    match a.get(k) {
        Some(Value::Null) => Ok(None),
        _ => a_ints(op, a, k)?
            .into_iter()
            .map(|x| isize::try_from(x).map_err(|_| bad_attrs(op, k)))
            .collect::<Result<Vec<_>>>()
            .map(Some),
    }
}

fn a_usizes(op: &str, a: &Attrs, k: &str) -> Result<Vec<usize>> {
    a_ints(op, a, k)?
        .into_iter()
        .map(|x| usize::try_from(x).map_err(|_| bad_attrs(op, k)))
        .collect()
}

fn a_dtype(op: &str, a: &Attrs, k: &str) -> Result<DType> {
    a.get(k)
        .and_then(Value::as_str)
        .and_then(DType::from_name)
        .ok_or_else(|| bad_attrs(op, k))
}

fn a_opt_dtype(op: &str, a: &Attrs, k: &str) -> Result<Option<DType>> {
    match a.get(k) {
        Some(Value::Null) => Ok(None),
        _ => a_dtype(op, a, k).map(Some),
    }
}

fn one(f: impl Fn(&Tensor) -> Result<Tensor> + Send + Sync + 'static) -> Forward {
    std::sync::Arc::new(move |xs: &[Tensor]| Ok(vec![f(&xs[0])?]))
}

fn two(f: impl Fn(&Tensor, &Tensor) -> Result<Tensor> + Send + Sync + 'static) -> Forward {
    std::sync::Arc::new(move |xs: &[Tensor]| Ok(vec![f(&xs[0], &xs[1])?]))
}

fn many(f: impl Fn(&[Tensor]) -> Result<Tensor> + Send + Sync + 'static) -> Forward {
    std::sync::Arc::new(move |xs: &[Tensor]| Ok(vec![f(xs)?]))
}

/// The numbers of inputs `op` takes (at least, at most) and of its outputs (`None`: at
/// least one, as its attributes say), or an error for an op outside the vocabulary.
pub(crate) fn arity(op: &str) -> Result<((usize, usize), Option<usize>)> {
    if let Some(k) = fixed_arity(op) {
        return Ok(match k {
            Some(k) => ((k, k), Some(1)),
            None => ((1, usize::MAX), Some(1)),
        });
    }
    match super::table::for_op(op) {
        Some(d) => Ok((d.inputs, d.outputs)),
        None => Err(Error::DataLoss(format!("unknown op {op:?}"))),
    }
}

/// The version-1 ops' input counts (`Some(None)`: any number of at least one).
fn fixed_arity(op: &str) -> Option<Option<usize>> {
    Some(Some(match op {
        "Zeros" | "Ones" => 0,
        "Unary" | "Const" | "Cast" | "Sum" | "Mean" | "Max" | "Min" | "Prod" | "ReduceVariance"
        | "ReduceStd" | "ReduceLogSumExp" | "Cumsum" | "Cumprod" | "ArgMax" | "ArgMin"
        | "Softmax" | "LogSoftmax" | "LeakyRelu" | "Gelu" | "Silu" | "L2Loss" | "Reshape"
        | "Transpose" | "ExpandDims" | "Squeeze" | "BroadcastTo" | "ZerosLike" | "OnesLike" => 1,
        "Binary" | "BatchMatMulV2" | "ClipByNorm" => 2,
        "SelectV2" | "ClipByValue" => 3,
        "ConcatV2" | "Pack" => return Some(None),
        _ => return None,
    }))
}

/// The computation of a saved `(op, attrs)` node with `n_inputs` inputs.
pub(crate) fn build(op: &str, a: &Attrs, n_inputs: usize) -> Result<Forward> {
    Ok(match op {
        "Unary" => {
            let fname = a.get("fn").and_then(Value::as_str).unwrap_or("");
            let (_, f) = UNARY
                .iter()
                .find(|(n, _)| *n == fname)
                .ok_or_else(|| Error::DataLoss(format!("unknown unary op {fname:?}")))?;
            let f = *f;
            one(f)
        }
        "Binary" => {
            let fname = a.get("fn").and_then(Value::as_str).unwrap_or("");
            let (_, f) = BINARY
                .iter()
                .find(|(n, _)| *n == fname)
                .ok_or_else(|| Error::DataLoss(format!("unknown binary op {fname:?}")))?;
            let f = *f;
            two(f)
        }
        "Const" => {
            // As gt.constant's binding: the dtype it asked for, then the shape.
            let dt = a_opt_dtype(op, a, "dtype")?;
            let dims = match a.get("shape") {
                Some(Value::Null) => None,
                _ => Some(a_usizes(op, a, "shape")?),
            };
            one(move |t| {
                crate::tape::stack::suspended(|| {
                    let t = match dt {
                        Some(d) if d != t.dtype() => ops::cast(t, d)?,
                        _ => t.fresh(),
                    };
                    Ok(match &dims {
                        Some(dims) if t.size() == 1 => {
                            ops::broadcast_to(&ops::reshape(&t, &[])?, dims)?
                        }
                        Some(dims) => ops::reshape(&t, dims)?,
                        None => t,
                    })
                })
            })
        }
        "Cast" => {
            let d = a_dtype(op, a, "dtype")?;
            one(move |x| ops::cast(x, d))
        }
        "BatchMatMulV2" => {
            let (ta, tb) = (a_bool(op, a, "transpose_a")?, a_bool(op, a, "transpose_b")?);
            let (aa, ab) = (a_bool(op, a, "adjoint_a")?, a_bool(op, a, "adjoint_b")?);
            two(move |x, y| {
                let x = if aa { ops::conj(x)? } else { x.clone() };
                let y = if ab { ops::conj(y)? } else { y.clone() };
                ops::matmul_t(&x, &y, ta || aa, tb || ab)
            })
        }
        "Sum" | "Mean" | "Max" | "Min" | "Prod" | "ReduceVariance" | "ReduceStd"
        | "ReduceLogSumExp" => {
            let f: fn(&Tensor, Option<&[isize]>, bool) -> Result<Tensor> = match op {
                "Sum" => ops::reduce_sum,
                "Mean" => ops::reduce_mean,
                "Max" => ops::reduce_max,
                "Min" => ops::reduce_min,
                "Prod" => ops::reduce_prod,
                "ReduceVariance" => ops::reduce_variance,
                "ReduceStd" => ops::reduce_std,
                _ => ops::reduce_logsumexp,
            };
            let axis = a_opt_ints(op, a, "axis")?;
            let keepdims = a_bool(op, a, "keepdims")?;
            one(move |x| f(x, axis.as_deref(), keepdims))
        }
        "Cumsum" | "Cumprod" => {
            let f = if op == "Cumsum" {
                ops::cumsum
            } else {
                ops::cumprod
            };
            let axis = a_int(op, a, "axis")?;
            let (ex, rev) = (a_bool(op, a, "exclusive")?, a_bool(op, a, "reverse")?);
            one(move |x| f(x, axis, ex, rev))
        }
        "ArgMax" | "ArgMin" => {
            let f = if op == "ArgMax" {
                ops::argmax
            } else {
                ops::argmin
            };
            let axis = match a.get("axis") {
                Some(Value::Null) => None,
                _ => Some(a_int(op, a, "axis")?),
            };
            let dt = a_dtype(op, a, "output_type")?;
            one(move |x| f(x, axis, dt))
        }
        "Softmax" | "LogSoftmax" => {
            let f = if op == "Softmax" {
                ops::softmax
            } else {
                ops::log_softmax
            };
            let axis = a_int(op, a, "axis")?;
            one(move |x| f(x, axis))
        }
        "LeakyRelu" => {
            let alpha = a_float(op, a, "alpha")?;
            one(move |x| ops::leaky_relu(x, alpha))
        }
        "Gelu" => {
            let approximate = a_bool(op, a, "approximate")?;
            one(move |x| ops::gelu(x, approximate))
        }
        "Silu" => {
            let beta = a_float(op, a, "beta")?;
            one(move |x| ops::silu(x, beta))
        }
        "L2Loss" => one(ops::l2_loss),
        "SelectV2" => many(|xs| ops::where_(&xs[0], &xs[1], &xs[2])),
        "ClipByValue" => many(|xs| ops::clip_by_value(&xs[0], &xs[1], &xs[2])),
        "ClipByNorm" => {
            let axes = a_opt_ints(op, a, "axes")?;
            two(move |x, c| ops::clip_by_norm(x, c, axes.as_deref()))
        }
        "Reshape" => {
            let shape = a_ints(op, a, "shape")?;
            one(move |x| ops::reshape_infer(x, &shape))
        }
        "Transpose" => {
            let perm = match a.get("perm") {
                Some(Value::Null) => None,
                _ => Some(a_usizes(op, a, "perm")?),
            };
            let conjugate = a_bool(op, a, "conjugate")?;
            one(move |x| {
                let t = ops::transpose(x, perm.as_deref())?;
                if conjugate {
                    ops::conj(&t)
                } else {
                    Ok(t)
                }
            })
        }
        "ExpandDims" => {
            let axis = a_int(op, a, "axis")?;
            one(move |x| ops::expand_dims(x, axis))
        }
        "Squeeze" => {
            let axis = a_opt_ints(op, a, "axis")?;
            one(move |x| ops::squeeze(x, axis.as_deref()))
        }
        "BroadcastTo" => {
            let shape = a_usizes(op, a, "shape")?;
            one(move |x| ops::broadcast_to(x, &shape))
        }
        "ConcatV2" | "Pack" => {
            let f = if op == "ConcatV2" {
                ops::concat
            } else {
                ops::stack
            };
            let axis = a_int(op, a, "axis")?;
            many(move |xs| f(xs, axis))
        }
        "ZerosLike" | "OnesLike" => {
            let f = if op == "ZerosLike" {
                ops::zeros
            } else {
                ops::ones
            };
            let dt = a_dtype(op, a, "dtype")?;
            one(move |t| f(t.shape(), dt))
        }
        "Zeros" | "Ones" => {
            let f = if op == "Zeros" { ops::zeros } else { ops::ones };
            let shape = a_usizes(op, a, "shape")?;
            crate::size::num_elements(op_static(op), &shape)?;
            let dt = a_dtype(op, a, "dtype")?;
            std::sync::Arc::new(move |_: &[Tensor]| Ok(vec![f(&shape, dt)?]))
        }
        _ => match super::table::for_op(op) {
            // Any failure to build from a file's attributes (a hostile size too) is the
            // file's fault.
            Some(d) => (d.build)(a, n_inputs).map_err(|e| match e {
                Error::DataLoss(m) => Error::DataLoss(m),
                e => Error::DataLoss(format!("node {op}: {e}")),
            })?,
            None => return Err(Error::DataLoss(format!("unknown op {op:?}"))),
        },
    })
}

/// The fusable kernel of a saved elementwise node (the loaded graph fuses chains of them).
pub(crate) fn elementwise_of(op: &str, a: &Attrs) -> Option<Elementwise> {
    let fname = a.get("fn").and_then(Value::as_str)?;
    match op {
        "Unary" => UNARY
            .iter()
            .find(|(n, _)| *n == fname)
            .map(|(_, f)| Elementwise::Unary(*f)),
        "Binary" => BINARY
            .iter()
            .find(|(n, _)| *n == fname)
            .map(|(_, f)| Elementwise::Binary(*f)),
        _ => None,
    }
}

fn op_static(op: &str) -> &'static str {
    if op == "Zeros" {
        "Zeros"
    } else {
        "Ones"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_split_outside_brackets() {
        assert_eq!(
            parts("Some([1, 2]),true,None"),
            vec!["Some([1, 2])", "true", "None"]
        );
        assert_eq!(opt_ints("Some([-1, 2])"), Some(json!([-1, 2])));
        assert_eq!(opt_ints("None"), Some(Value::Null));
        assert_eq!(p_dtype("F32"), Some(json!("float32")));
        assert_eq!(p_float("inf"), Some(json!("inf")));
    }

    #[test]
    fn encoded_nodes_build_the_same_computation() {
        let (op, attrs) = encode("Sum", Some("Some([0]),true"), None, 1).unwrap();
        let f = build(&op, &attrs, 1).unwrap();
        let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
        let y = f(&[x]).unwrap().remove(0);
        assert_eq!(y.shape(), &[1, 2]);
        assert_eq!(y.to_vec::<f32>().unwrap(), vec![4.0, 6.0]);
        let e = Elementwise::Unary(ops::exp);
        assert_eq!(
            encode("Unary", Some("k"), Some(&e), 1).unwrap().1["fn"],
            "exp"
        );
        assert!(encode("RandomStandardNormal", None, None, 0).is_err());
        assert!(build("Nope", &Attrs::new(), 1).is_err());
        assert!(build("Cast", &Attrs::new(), 1).is_err());
    }
}
