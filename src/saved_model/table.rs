//! The generic half of the op vocabulary: ops that declare, next to their own code (each
//! op family's `SAVED` table, collected in `crate::ops::SAVED`), how a traced node of
//! theirs is saved and rebuilt.
//!
//! A traced node's key is the `Debug` text of the op's non-tensor arguments, separated by
//! commas (`[1, 1],Same,[1, 1]`). [`debug_json`] reads any such text into JSON, the way
//! serde writes the same Rust values (a struct or tuple variant as `{"Variant": ...}`, a
//! unit variant as its name, `Some(x)` as `x`, `None` as `null`, tuples and arrays as
//! lists, a dtype as its name), so an [`OpDef`] only names the parts of its key (its
//! `fields`) and says how to rebuild the computation from those attributes (`build`,
//! usually one `serde` read per attribute and the same engine call the traced closure
//! makes). Adding a saveable op is one row beside the op.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::Forward;
use crate::tensor::Tensor;

/// The attributes of a saved node.
pub type Attrs = Map<String, Value>;

/// How one traced op is saved and loaded.
pub struct OpDef {
    /// The traced node's name (TF's op type).
    pub traced: &'static str,
    /// How many inputs the traced node has: `(at least, at most)`.
    pub inputs: (usize, usize),
    /// The op's name in files (usually `traced`; another when one traced name has
    /// several forms, e.g. a reshape to a static or a computed shape).
    pub op: &'static str,
    /// The names of the key's comma-separated parts (the attributes).
    pub fields: &'static [&'static str],
    /// Whether the key is stored whole as the string attribute named by `fields[0]`
    /// (an einsum equation, which has commas of its own).
    pub raw: bool,
    /// Whether the key is JSON, stored as the attribute named by `fields[0]`.
    pub json: bool,
    /// How many outputs (`None`: given by the attributes and the inputs, at least one).
    pub outputs: Option<usize>,
    /// The computation, from the attributes and the number of inputs.
    pub build: fn(&Attrs, usize) -> Result<Forward>,
    /// Draws random numbers or has another effect: run on every call, never merged.
    pub stateful: bool,
}

impl OpDef {
    /// A row: `traced` saved under the same name, with exactly `n` inputs and one output.
    pub const fn new(
        traced: &'static str,
        n: usize,
        fields: &'static [&'static str],
        build: fn(&Attrs, usize) -> Result<Forward>,
    ) -> OpDef {
        OpDef {
            traced,
            inputs: (n, n),
            op: traced,
            fields,
            raw: false,
            json: false,
            outputs: Some(1),
            build,
            stateful: false,
        }
    }
    /// Saved under the name `op`.
    pub const fn named(mut self, op: &'static str) -> OpDef {
        self.op = op;
        self
    }
    /// Takes `lo..=hi` inputs.
    pub const fn inputs(mut self, lo: usize, hi: usize) -> OpDef {
        self.inputs = (lo, hi);
        self
    }
    /// Gives `outputs` outputs (`None`: a number the attributes and inputs decide).
    pub const fn outputs(mut self, outputs: Option<usize>) -> OpDef {
        self.outputs = outputs;
        self
    }
    /// An op with an effect (a random draw).
    pub const fn stateful(mut self) -> OpDef {
        self.stateful = true;
        self
    }
    /// The key is JSON: one attribute.
    pub const fn json(mut self) -> OpDef {
        self.json = true;
        self
    }
    /// The key is one string attribute.
    pub const fn raw(mut self) -> OpDef {
        self.raw = true;
        self
    }
}

/// Every op family's rows, and the graph's own effects (a print).
fn rows() -> impl Iterator<Item = &'static OpDef> {
    crate::ops::SAVED
        .iter()
        .flat_map(|t| t.iter())
        .chain(EFFECTS.iter())
}

/// `gt.print` in a traced function: its key is the JSON of a [`PrintSpec`]; a traced
/// `gt.assert_*`: its key is the JSON of an [`AssertSpec`].
const EFFECTS: &[OpDef] = &[
    OpDef::new("PrintV2", 0, &["spec"], print_node)
        .inputs(0, usize::MAX)
        .outputs(Some(0))
        .stateful()
        .json(),
    OpDef::new("Assert", 0, &["spec"], assert_node)
        .inputs(1, usize::MAX)
        .outputs(Some(0))
        .stateful()
        .json(),
];

/// What a traced assertion checks at each call (TF's `Assert` node): its first input is
/// the condition (a boolean; every element must hold), the others are the data shown in
/// the `InvalidArgumentError` it raises otherwise: `message`, then one line
/// `"{name} = {values}"` per data tensor.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssertSpec {
    pub message: String,
    pub names: Vec<String>,
}

/// The check of an [`AssertSpec`] on `xs` (the condition, then the data).
pub fn assert_check(spec: &AssertSpec, xs: &[Tensor]) -> Result<()> {
    let (cond, data) = xs
        .split_first()
        .ok_or_else(|| Error::invalid("Assert", "no condition"))?;
    if cond.dtype() != DType::Bool {
        return Err(Error::invalid(
            "Assert",
            "the condition is not a boolean tensor",
        ));
    }
    if cond.to_vec::<bool>()?.iter().all(|&b| b) {
        return Ok(());
    }
    let mut text = spec.message.clone();
    for (name, t) in spec.names.iter().zip(data) {
        text.push_str(&format!("\n{name} = {}", values_text(t)));
    }
    Err(Error::invalid("Assert", text))
}

fn assert_node(a: &Attrs, n: usize) -> Result<Forward> {
    let spec: AssertSpec = get("Assert", a, "spec")?;
    ensure(
        spec.names.len() + 1 == n,
        "Assert",
        "the number of tensors does not fit the names",
    )?;
    Ok(std::sync::Arc::new(move |xs: &[Tensor]| {
        assert_check(&spec, xs)?;
        Ok(Vec::new())
    }))
}

/// What a saved print writes: `parts` in order joined by `sep`, each text as is and each
/// `null` the next input tensor (TF's print format, `summarize` items at each end of an
/// axis), then `end`, to `stream` (`"stdout"` or `"stderr"`).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrintSpec {
    pub parts: Vec<Option<String>>,
    pub sep: String,
    pub end: String,
    pub stream: String,
    pub summarize: Option<i64>,
}

/// How a loaded print prints (the Python bindings print through the package's own
/// formatting); without a hook, [`print_plain`].
pub type PrintHook = fn(&PrintSpec, &[Tensor]) -> Result<()>;

static PRINT_HOOK: std::sync::OnceLock<PrintHook> = std::sync::OnceLock::new();

/// Sets how loaded prints print; the first hook set stays.
pub fn set_print_hook(hook: PrintHook) {
    let _ = PRINT_HOOK.set(hook);
}

/// A print's text with no Python: each tensor as its values (`[1 2 3]`, nested brackets
/// per axis), the parts joined by `sep`.
pub fn print_text(spec: &PrintSpec, xs: &[Tensor]) -> Result<String> {
    let mut it = xs.iter();
    let mut pieces = Vec::with_capacity(spec.parts.len());
    for p in &spec.parts {
        pieces.push(match p {
            Some(text) => text.clone(),
            None => {
                let t = it.next().ok_or_else(|| {
                    Error::invalid("PrintV2", "fewer tensors than the print's placeholders")
                })?;
                values_text(t)
            }
        });
    }
    Ok(pieces.join(&spec.sep))
}

fn values_text(t: &Tensor) -> String {
    fn fmt(v: f64) -> String {
        if v == v.trunc() && v.abs() < 1e16 {
            format!("{v:.0}")
        } else {
            let s = format!("{v:.6}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        }
    }
    let vals: Vec<String> = match crate::ops::cast(t, DType::F64).and_then(|c| c.to_vec::<f64>()) {
        Ok(v) => v.into_iter().map(fmt).collect(),
        Err(_) => return format!("{t}"),
    };
    fn nest(vals: &[String], shape: &[usize]) -> String {
        match shape.split_first() {
            None => vals.first().cloned().unwrap_or_default(),
            Some((&n, rest)) => {
                let step = rest.iter().product::<usize>();
                let items: Vec<String> = (0..n)
                    .map(|i| nest(&vals[i * step..(i + 1) * step], rest))
                    .collect();
                format!("[{}]", items.join(" "))
            }
        }
    }
    nest(&vals, t.shape())
}

/// Prints as [`print_text`] writes.
pub fn print_plain(spec: &PrintSpec, xs: &[Tensor]) -> Result<()> {
    let text = print_text(spec, xs)?;
    if spec.stream == "stdout" {
        print!("{text}{}", spec.end);
    } else {
        eprint!("{text}{}", spec.end);
    }
    Ok(())
}

fn print_node(a: &Attrs, n: usize) -> Result<Forward> {
    let spec: PrintSpec = get("PrintV2", a, "spec")?;
    let holes = spec.parts.iter().filter(|p| p.is_none()).count();
    ensure(
        holes == n,
        "PrintV2",
        "the number of tensors does not fit the parts",
    )?;
    ensure(
        spec.stream == "stdout" || spec.stream == "stderr",
        "PrintV2",
        "stream is neither stdout nor stderr",
    )?;
    Ok(std::sync::Arc::new(move |xs: &[Tensor]| {
        match PRINT_HOOK.get() {
            Some(h) => h(&spec, xs)?,
            None => print_plain(&spec, xs)?,
        }
        Ok(Vec::new())
    }))
}

/// The row that saves a traced node `name` with `n` inputs.
pub(crate) fn for_traced(name: &str, n: usize) -> Option<&'static OpDef> {
    rows().find(|d| d.traced == name && (d.inputs.0..=d.inputs.1).contains(&n))
}

/// The row of a saved op.
pub(crate) fn for_op(op: &str) -> Option<&'static OpDef> {
    rows().find(|d| d.op == op)
}

/// Whether saved op `op` has an effect (a random draw).
pub(crate) fn is_stateful(op: &str) -> bool {
    for_op(op).is_some_and(|d| d.stateful)
}

/// The attributes of a traced node of `def` with key `key`.
pub(crate) fn encode(def: &OpDef, key: &str) -> Result<Attrs> {
    let bad = || {
        Error::Internal(format!(
            "saved_model: cannot read the arguments {key:?} of a traced {} op",
            def.traced
        ))
    };
    let mut m = Map::new();
    if def.raw {
        m.insert(def.fields[0].to_string(), Value::String(key.to_string()));
        return Ok(m);
    }
    if def.json {
        m.insert(
            def.fields[0].to_string(),
            serde_json::from_str(key).map_err(|_| bad())?,
        );
        return Ok(m);
    }
    let values = if key.is_empty() {
        Vec::new()
    } else {
        debug_json(key).ok_or_else(bad)?
    };
    if values.len() != def.fields.len() {
        return Err(bad());
    }
    for (f, v) in def.fields.iter().zip(values) {
        m.insert((*f).to_string(), v);
    }
    Ok(m)
}

// ------------------------------------------------------------------ reading attributes

fn malformed(op: &str, what: &str) -> Error {
    Error::DataLoss(format!(
        "node {op}: attribute {what} is missing or malformed"
    ))
}

/// Attribute `k` read as a `T` (serde's JSON form of it).
pub fn get<T: DeserializeOwned>(op: &str, a: &Attrs, k: &str) -> Result<T> {
    let v = a.get(k).ok_or_else(|| malformed(op, k))?;
    serde_json::from_value(v.clone()).map_err(|_| malformed(op, k))
}

/// A float attribute (`"inf"`, `"NaN"` as strings).
pub fn get_f64(op: &str, a: &Attrs, k: &str) -> Result<f64> {
    match a.get(k) {
        Some(Value::Number(n)) => n.as_f64().ok_or_else(|| malformed(op, k)),
        Some(Value::String(s)) => s.parse::<f64>().map_err(|_| malformed(op, k)),
        _ => Err(malformed(op, k)),
    }
}

/// A dtype attribute (its name, `"float32"`).
pub fn get_dtype(op: &str, a: &Attrs, k: &str) -> Result<DType> {
    a.get(k)
        .and_then(Value::as_str)
        .and_then(DType::from_name)
        .ok_or_else(|| malformed(op, k))
}

/// An error unless `ok` (a file whose inputs do not fit its attributes).
pub fn ensure(ok: bool, op: &str, what: &str) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::DataLoss(format!("node {op}: {what}")))
    }
}

/// A forward of one output.
pub fn one_out(f: impl Fn(&[Tensor]) -> Result<Tensor> + Send + Sync + 'static) -> Forward {
    std::sync::Arc::new(move |xs: &[Tensor]| Ok(vec![f(xs)?]))
}

/// A forward of several outputs.
pub fn many_out(f: impl Fn(&[Tensor]) -> Result<Vec<Tensor>> + Send + Sync + 'static) -> Forward {
    std::sync::Arc::new(f)
}

// ------------------------------------------------------------------ Debug text to JSON

/// `text`, a comma-separated list of `Debug`-printed values, as serde's JSON of them
/// (`None`: not such a text).
pub fn debug_json(text: &str) -> Option<Vec<Value>> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    let out = p.list(None)?;
    p.ws();
    (p.i == p.s.len()).then_some(out)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// Values separated by commas up to `close` (or the end of the text); a trailing
    /// comma is allowed (`(1,)`).
    fn list(&mut self, close: Option<u8>) -> Option<Vec<Value>> {
        let mut out = Vec::new();
        loop {
            match (self.peek(), close) {
                (None, None) => return Some(out),
                (Some(c), Some(cl)) if c == cl => {
                    self.i += 1;
                    return Some(out);
                }
                (None, Some(_)) => return None,
                _ => {}
            }
            out.push(self.value()?);
            if !self.eat(b',') {
                if let Some(cl) = close {
                    return self.eat(cl).then_some(out);
                }
                return (self.peek().is_none()).then_some(out);
            }
        }
    }

    fn value(&mut self) -> Option<Value> {
        self.depth += 1;
        if self.depth > 64 {
            return None;
        }
        let v = self.value_inner();
        self.depth -= 1;
        v
    }

    fn value_inner(&mut self) -> Option<Value> {
        let c = self.peek()?;
        match c {
            b'[' | b'(' => {
                self.i += 1;
                let close = if c == b'[' { b']' } else { b')' };
                Some(Value::Array(self.list(Some(close))?))
            }
            b'"' => {
                let start = self.i;
                self.i += 1;
                while self.i < self.s.len() && self.s[self.i] != b'"' {
                    if self.s[self.i] == b'\\' {
                        self.i += 1;
                    }
                    self.i += 1;
                }
                self.i += 1;
                let text = std::str::from_utf8(self.s.get(start..self.i)?).ok()?;
                serde_json::from_str(text).ok()
            }
            b'-' | b'0'..=b'9' => {
                let start = self.i;
                self.i += 1;
                while self.i < self.s.len()
                    && (self.s[self.i].is_ascii_alphanumeric() || b".+-_".contains(&self.s[self.i]))
                {
                    self.i += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.i]).ok()?;
                number(text)
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = self.i;
                while self.i < self.s.len()
                    && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_')
                {
                    self.i += 1;
                }
                let name = std::str::from_utf8(&self.s[start..self.i])
                    .ok()?
                    .to_string();
                if self.eat(b'(') {
                    let mut items = self.list(Some(b')'))?;
                    if name == "Some" && items.len() == 1 {
                        return items.pop();
                    }
                    let payload = if items.len() == 1 {
                        items.pop()?
                    } else {
                        Value::Array(items)
                    };
                    let mut m = Map::new();
                    m.insert(name, payload);
                    return Some(Value::Object(m));
                }
                if self.eat(b'{') {
                    let mut fields = Map::new();
                    loop {
                        if self.eat(b'}') {
                            break;
                        }
                        self.ws();
                        let fs = self.i;
                        while self.i < self.s.len()
                            && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_')
                        {
                            self.i += 1;
                        }
                        let field = std::str::from_utf8(&self.s[fs..self.i]).ok()?.to_string();
                        if field.is_empty() || !self.eat(b':') {
                            return None;
                        }
                        let v = self.value()?;
                        fields.insert(field, v);
                        if !self.eat(b',') {
                            if !self.eat(b'}') {
                                return None;
                            }
                            break;
                        }
                    }
                    let mut m = Map::new();
                    m.insert(name, Value::Object(fields));
                    return Some(Value::Object(m));
                }
                Some(match name.as_str() {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    "None" => Value::Null,
                    "inf" | "NaN" => Value::String(name),
                    _ => match DType::ALL.iter().find(|d| format!("{d:?}") == name) {
                        Some(d) => Value::String(d.name().to_string()),
                        None => Value::String(name),
                    },
                })
            }
            _ => None,
        }
    }
}

/// An integer, or a float (JSON has no infinities or NaN: those as strings).
fn number(text: &str) -> Option<Value> {
    if let Ok(i) = text.parse::<i64>() {
        return Some(Value::from(i));
    }
    if let Ok(u) = text.parse::<u64>() {
        return Some(Value::from(u));
    }
    let x = text.parse::<f64>().ok()?;
    Some(if x.is_finite() {
        serde_json::json!(x)
    } else {
        Value::String(text.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn debug_text_reads_as_serde_json() {
        let idx = [
            crate::ops::Index::Int(-1),
            crate::ops::Index::Slice {
                start: Some(1),
                stop: None,
                step: 2,
            },
            crate::ops::Index::NewAxis,
        ];
        let p = crate::ops::Padding::Explicit(vec![(1, 2), (0, 0)]);
        let key = format!(
            "{idx:?},{p:?},{:?},{:?},{},{:?}",
            DType::F32,
            Some(3usize),
            1e-5f64,
            f64::INFINITY
        );
        let v = debug_json(&key).unwrap();
        assert_eq!(
            v[0],
            json!([{"Int": -1}, {"Slice": {"start": 1, "stop": null, "step": 2}}, "NewAxis"])
        );
        assert_eq!(v[1], json!({"Explicit": [[1, 2], [0, 0]]}));
        assert_eq!(v[2], json!("float32"));
        assert_eq!(v[3], json!(3));
        assert_eq!(v[4], json!(1e-5));
        assert_eq!(v[5], json!("inf"));
        let back: Vec<crate::ops::Index> = serde_json::from_value(v[0].clone()).unwrap();
        assert_eq!(back, idx);
        let back: crate::ops::Padding = serde_json::from_value(v[1].clone()).unwrap();
        assert_eq!(back, p);
        assert_eq!(debug_json("(1,)").unwrap(), vec![json!([1])]);
        assert!(debug_json("[1, 2").is_none());
        assert!(debug_json("Some(").is_none());
        assert!(debug_json(&"[".repeat(100)).is_none());
    }

    /// A traced node's saved form rebuilds the computation the traced closure made.
    fn round_trip(name: &str, key: &str, xs: &[Tensor]) -> Vec<Tensor> {
        let def = for_traced(name, xs.len()).expect("a row");
        let attrs = encode(def, key).unwrap();
        let text = serde_json::to_string(&attrs).unwrap();
        let back: Attrs = serde_json::from_str(&text).unwrap();
        let f = super::super::ops::build(def.op, &back, xs.len()).unwrap();
        f(xs).unwrap()
    }

    #[test]
    fn family_rows_rebuild_their_ops() {
        let x = Tensor::from_vec((0..16).map(|v| v as f32).collect(), &[1, 4, 4, 1]).unwrap();
        let w = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2, 1, 1]).unwrap();
        let (s, p, d) = ([1usize, 1], crate::ops::Padding::Same, [1usize, 1]);
        let y = round_trip(
            "Conv2D",
            &format!("{s:?},{p:?},{d:?}"),
            &[x.clone(), w.clone()],
        );
        let want = crate::ops::conv2d(&x, &w, s, &p, d).unwrap();
        assert_eq!(y[0].to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap());

        let x3 = Tensor::from_vec((0..27).map(|v| v as f32).collect(), &[1, 3, 3, 3, 1]).unwrap();
        let w3 = Tensor::from_vec(vec![1.0f32, -1.0], &[2, 1, 1, 1, 1]).unwrap();
        let (s3, d3) = ([1usize, 2, 1], [1usize, 1, 1]);
        let y = round_trip(
            "Conv3D",
            &format!("{s3:?},{p:?},{d3:?}"),
            &[x3.clone(), w3.clone()],
        );
        let want = crate::ops::conv3d(&x3, &w3, s3, &p, d3).unwrap();
        assert_eq!(y[0].to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap());

        let idx = vec![
            crate::ops::Index::Int(0),
            crate::ops::Index::Slice {
                start: Some(1),
                stop: None,
                step: 2,
            },
            crate::ops::Index::Ellipsis,
        ];
        let at: Vec<usize> = vec![];
        let y = round_trip(
            "StridedSlice",
            &format!("{idx:?},{at:?}"),
            std::slice::from_ref(&x),
        );
        let want = crate::ops::strided_slice(&x, &idx).unwrap();
        assert_eq!(y[0].shape(), want.shape());
        assert_eq!(y[0].to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap());

        let v = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0], &[5]).unwrap();
        let spec = crate::ops::SplitSpec::Sizes(vec![2, -1]);
        let parts = round_trip("SplitV", &format!("{spec:?},0"), std::slice::from_ref(&v));
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[1].to_vec::<f32>().unwrap(), vec![3.0, 4.0, 5.0]);

        let y = round_trip("Einsum", "i,i->", &[v.clone(), v.clone()]);
        assert_eq!(y[0].to_vec::<f32>().unwrap(), vec![55.0]);

        // A key that does not fit its row is an error, not a panic.
        let def = for_traced("Conv2D", 2).unwrap();
        assert!(encode(def, "[1, 1],Same").is_err());
        let mut bad = Attrs::new();
        bad.insert("strides".into(), serde_json::json!("x"));
        assert!(super::super::ops::build("Conv2D", &bad, 2).is_err());
    }

    #[test]
    fn a_saved_print_without_python_prints_the_values() {
        let spec = PrintSpec {
            parts: vec![Some("x:".into()), None, Some("n".into()), None],
            sep: " ".into(),
            end: "\n".into(),
            stream: "stderr".into(),
            summarize: Some(3),
        };
        let x = Tensor::from_vec(vec![1.0f32, 2.5, -3.0, 0.125], &[2, 2]).unwrap();
        let n = Tensor::from_vec(vec![7i64], &[]).unwrap();
        assert_eq!(
            print_text(&spec, &[x.clone(), n]).unwrap(),
            "x: [[1 2.5] [-3 0.125]] n 7"
        );
        assert!(print_text(&spec, std::slice::from_ref(&x)).is_err());
        let attrs = encode(
            for_traced("PrintV2", 2).unwrap(),
            &serde_json::to_string(&spec).unwrap(),
        )
        .unwrap();
        assert!(super::super::ops::build("PrintV2", &attrs, 2).is_ok());
        assert!(super::super::ops::build("PrintV2", &attrs, 1).is_err());
    }

    #[test]
    fn a_saved_assert_raises_with_its_message_and_data() {
        let spec = AssertSpec {
            message: "Condition x == y did not hold.".into(),
            names: vec!["x".into(), "y".into()],
        };
        let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
        let y = Tensor::from_vec(vec![1.0f32, 3.0], &[2]).unwrap();
        let yes = Tensor::from_vec(vec![true], &[]).unwrap();
        let no = Tensor::from_vec(vec![false], &[]).unwrap();
        let attrs = encode(
            for_traced("Assert", 3).unwrap(),
            &serde_json::to_string(&spec).unwrap(),
        )
        .unwrap();
        let f = super::super::ops::build("Assert", &attrs, 3).unwrap();
        assert!(f(&[yes, x.clone(), y.clone()]).unwrap().is_empty());
        let err = f(&[no, x, y]).unwrap_err().to_string();
        assert_eq!(
            err,
            "Assert: Condition x == y did not hold.\nx = [1 2]\ny = [1 3]"
        );
        assert!(super::super::ops::build("Assert", &attrs, 2).is_err());
    }
}
