use super::*;
use crate::graph;
use crate::ops as o;

/// The variable `w = [1, 2]`, an example `x` and its spec (float64, any length), the
/// inputs of the traced models below.
fn w_x_spec() -> (Variable, Tensor, Spec) {
    let w = Variable::new(
        Tensor::from_vec(vec![1.0f64, 2.0], &[2]).unwrap(),
        true,
        Some("w"),
    );
    let x = Tensor::from_vec(vec![0.5f64, -1.0], &[2]).unwrap();
    let spec = Spec {
        dtype: DType::F64,
        shape: Some(vec![None]),
    };
    (w, x, spec)
}

fn traced_model() -> (Graph, Variable) {
    // f(x) = sum(exp(x) * w), w a variable.
    let (w, x, spec) = w_x_spec();
    let w2 = w.clone();
    let traced = graph::trace(&[x], vec![spec], move |xs| {
        let e = graph::elementwise1(o::exp, &xs[0])?;
        let m = graph::elementwise2(o::multiply, &e, &w2.read())?;
        Ok(vec![graph::op("Sum", "None,false", &[&m], |a| {
            o::reduce_sum(&a[0], None, false)
        })?])
    })
    .unwrap();
    (traced.graph, w)
}

fn encode(g: &Graph, w: &Variable) -> (GraphDef, Vec<Tensor>) {
    let index = |v: &Variable| (v.id() == w.id()).then_some(0);
    let id_index = |id: u64| (id == w.id()).then_some(0);
    let mut enc = Encoder {
        variable_index: &index,
        variable_id_index: &id_index,
        constants: Vec::new(),
    };
    let def = enc.encode(g).unwrap();
    (def, enc.constants)
}

fn model_def(g: GraphDef) -> SavedModelDef {
    SavedModelDef {
        format: FORMAT.into(),
        version: VERSION,
        variables: vec![VariableDef {
            name: "w:0".into(),
            dtype: "float64".into(),
            shape: vec![2],
            trainable: true,
        }],
        functions: vec![FunctionDef {
            name: "f".into(),
            graph: g,
            input_structure: Json::Null,
            output_structure: Json::Null,
        }],
        signatures: [("serving_default".to_string(), 0)].into_iter().collect(),
        objects: vec![ObjectDef::Module {
            class: "M".into(),
            children: BTreeMap::new(),
        }],
    }
}

#[test]
fn a_traced_graph_round_trips_and_differentiates() {
    let (g, w) = traced_model();
    let (def, consts) = encode(&g, &w);
    let ops: Vec<&str> = def.nodes.iter().map(|n| n.op.as_str()).collect();
    assert_eq!(ops, ["Unary", "ReadVariableOp", "Binary", "Sum"]);
    let text = serde_json::to_string(&model_def(def)).unwrap();
    let parsed = parse(text.as_bytes()).unwrap();
    check(&parsed, consts.len()).unwrap();
    let w_loaded = Variable::new(w.value_unrecorded(), true, Some("w"));
    let model = build(parsed, consts, vec![w_loaded.clone()]).unwrap();
    let f = model.signature("serving_default").unwrap();
    let x = Tensor::from_vec(vec![0.0f64, 1.0, 2.0], &[3]);
    // Another shape than the trace's: the spec's dimension is None.
    assert!(
        f.call(&[x.unwrap()]).is_err(),
        "w has 2 elements: broadcasting fails"
    );
    let x = Tensor::from_vec(vec![0.0f64, 1.0], &[2]).unwrap();
    let tape = crate::GradientTape::new();
    let y = {
        let _r = tape.enter();
        tape.watch(&x);
        f.call(std::slice::from_ref(&x)).unwrap().remove(0)
    };
    let e1 = 1f64.exp();
    assert!((y.to_vec::<f64>().unwrap()[0] - (1.0 + 2.0 * e1)).abs() < 1e-12);
    let g = tape.gradient1(&y, &x).unwrap().unwrap();
    let g = g.to_vec::<f64>().unwrap();
    assert!((g[0] - 1.0).abs() < 1e-12 && (g[1] - 2.0 * e1).abs() < 1e-12);
    // The loaded function reads the loaded variable as it is now.
    w_loaded
        .assign(&Tensor::from_vec(vec![0.0f64, 0.0], &[2]).unwrap())
        .unwrap();
    assert_eq!(f.call(&[x]).unwrap()[0].to_vec::<f64>().unwrap(), vec![0.0]);
}

fn bad(mutate: impl FnOnce(&mut Json)) -> String {
    let (g, w) = traced_model();
    let (def, consts) = encode(&g, &w);
    let mut v = serde_json::to_value(model_def(def)).unwrap();
    mutate(&mut v);
    let text = serde_json::to_vec(&v).unwrap();
    let r = parse(&text).and_then(|d| {
        check(&d, consts.len())?;
        build(d, consts.clone(), vec![w.clone()]).map(|_| ())
    });
    match r {
        Err(Error::DataLoss(m)) => m,
        Err(e) => panic!("not a DataLoss error: {e}"),
        Ok(()) => panic!("accepted"),
    }
}

#[test]
fn bad_structures_are_refused_naming_what_is_wrong() {
    assert!(bad(|v| v["version"] = 3.into()).contains("unsupported SavedModel format version 3"));
    assert!(bad(|v| v["format"] = "x".into()).contains("not a gradtape SavedModel"));
    assert!(
        bad(|v| v["functions"][0]["graph"]["nodes"][2]["inputs"][0] =
            serde_json::json!({"node": [7, 0]}))
        .contains("does not exist")
    );
    assert!(
        bad(|v| v["functions"][0]["graph"]["nodes"][1]["attrs"]["variable"] = 5.into())
            .contains("variable 5")
    );
    assert!(
        bad(|v| v["functions"][0]["graph"]["nodes"][0]["op"] = "Launch".into())
            .contains("unknown op")
    );
    assert!(
        bad(|v| v["functions"][0]["graph"]["nodes"][0]["attrs"]["fn"] = "system".into())
            .contains("unknown unary op")
    );
    assert!(
        bad(|v| v["functions"][0]["graph"]["nodes"][3]["inputs"] = serde_json::json!([]))
            .contains("number of inputs")
    );
    assert!(
        bad(|v| v["functions"][0]["graph"]["nodes"][3]["attrs"]["keepdims"] = 3.into())
            .contains("keepdims")
    );
    assert!(
        bad(|v| v["functions"][0]["graph"]["outputs"][0] = serde_json::json!({"const": 0}))
            .contains("does not exist")
    );
    assert!(bad(|v| v["signatures"]["serving_default"] = 9.into()).contains("function 9"));
    assert!(bad(|v| v["objects"] = serde_json::json!([])).contains("no root"));
    assert!(bad(|v| v["objects"][0]["children"]["a"] = 4.into()).contains("object 4"));
    assert!(bad(|v| v["variables"][0]["dtype"] = "float128".into()).contains("float128"));
    assert!(
        bad(|v| v["functions"][0]["graph"]["inputs"][0]["dtype"] = "q".into()).contains("\"q\"")
    );
    assert!(bad(|v| v["surprise"] = 1.into()).contains("malformed"));
}

#[test]
fn hostile_nesting_is_refused() {
    // A Cond whose then-branch holds a Cond ... deeper than MAX_DEPTH.
    let mut g = serde_json::json!({"inputs": [], "consts": [], "nodes": [], "outputs": []});
    for _ in 0..MAX_DEPTH + 2 {
        g = serde_json::json!({"inputs": [], "consts": [], "outputs": [], "nodes": [
            {"op": "Zeros", "attrs": {"shape": [], "dtype": "bool"}, "inputs": [], "outputs": 1},
            {"op": "Cond", "attrs": {"then": g, "else": {"inputs": [], "consts": [], "nodes": [], "outputs": []}},
             "inputs": [{"node": [0, 0]}], "outputs": 0}
        ]});
    }
    let m = bad(|v| v["functions"][0]["graph"] = g);
    assert!(
        m.contains("nested too deeply") || m.contains("recursion"),
        "{m}"
    );
}

/// A version-2 graph written by hand (as the Python package writes them): family ops,
/// an assign and a random draw, built and run with no Python.
#[test]
fn family_ops_assigns_and_draws_load_without_python() {
    let g = serde_json::json!({
        "inputs": [{"dtype": "float64", "shape": [1, 4, 4, 1]}],
        "consts": [],
        "nodes": [
            {"op": "MaxPool", "attrs": {"ksize": [2, 2], "strides": [2, 2], "padding": "Valid"},
             "inputs": [{"input": 0}], "outputs": 1},
            {"op": "StridedSlice", "attrs": {"index": [{"Int": 0}, {"Int": -1}, {"Slice": {"start": null, "stop": null, "step": 1}}, "Ellipsis"],
             "tensor_positions": []}, "inputs": [{"node": [0, 0]}], "outputs": 1},
            {"op": "Reshape", "attrs": {"shape": [2]}, "inputs": [{"node": [1, 0]}], "outputs": 1},
            {"op": "Sum", "attrs": {"axis": null, "keepdims": false}, "inputs": [{"node": [2, 0]}], "outputs": 1},
            {"op": "Reshape", "attrs": {"shape": [1]}, "inputs": [{"node": [3, 0]}], "outputs": 1},
            {"op": "Tile", "attrs": {"multiples": [2]}, "inputs": [{"node": [4, 0]}], "outputs": 1},
            {"op": "AssignAddVariableOp", "attrs": {"variable": 0}, "inputs": [{"node": [5, 0]}], "outputs": 0},
            {"op": "RandomUniform", "attrs": {"shape": [3], "a": 0.0, "b": 1.0, "dtype": "float64", "seed": null},
             "inputs": [], "outputs": 1},
            {"op": "Unpack", "attrs": {"num": null, "axis": 0}, "inputs": [{"node": [2, 0]}], "outputs": 2}
        ],
        "outputs": [{"node": [2, 0]}, {"node": [7, 0]}, {"node": [8, 1]}]
    });
    let def: GraphDef = serde_json::from_value(g).unwrap();
    let text = serde_json::to_string(&model_def(def)).unwrap();
    let parsed = parse(text.as_bytes()).unwrap();
    let w = Variable::new(
        Tensor::from_vec(vec![1.0f64, 2.0], &[2]).unwrap(),
        true,
        Some("w"),
    );
    let model = build(parsed, vec![], vec![w.clone()]).unwrap();
    let f = model.signature("serving_default").unwrap();
    let x = Tensor::from_vec((0..16).map(f64::from).collect(), &[1, 4, 4, 1]).unwrap();
    let tape = crate::GradientTape::new();
    let out = {
        let _r = tape.enter();
        tape.watch(&x);
        f.call(std::slice::from_ref(&x)).unwrap()
    };
    // Pooled [[5, 7], [13, 15]]; its last row: [13, 15].
    assert_eq!(out[0].to_vec::<f64>().unwrap(), vec![13.0, 15.0]);
    assert_eq!(out[2].to_vec::<f64>().unwrap(), vec![15.0]);
    assert_eq!(
        w.value_unrecorded().to_vec::<f64>().unwrap(),
        vec![29.0, 30.0]
    );
    let u = out[1].to_vec::<f64>().unwrap();
    assert!(u.iter().all(|v| (0.0..1.0).contains(v)));
    let again = f.call(std::slice::from_ref(&x)).unwrap();
    assert_ne!(
        again[1].to_vec::<f64>().unwrap(),
        u,
        "a fresh draw on every call"
    );
    assert_eq!(
        w.value_unrecorded().to_vec::<f64>().unwrap(),
        vec![57.0, 58.0]
    );
    // The gradient of the slice goes back through the pool to the maxima.
    let g = tape
        .gradient1(&out[0], &x)
        .unwrap()
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    let hot: Vec<usize> = (0..16).filter(|&i| g[i] != 0.0).collect();
    assert_eq!(hot, vec![13, 15]);
}

#[test]
fn bad_family_op_attributes_are_refused() {
    let node = |attrs: Json| {
        serde_json::json!({"inputs": [{"dtype": "float64", "shape": null}], "consts": [],
            "nodes": [{"op": "Tile", "attrs": attrs, "inputs": [{"input": 0}], "outputs": 1}],
            "outputs": [{"node": [0, 0]}]})
    };
    assert!(
        bad(|v| v["functions"][0]["graph"] = node(serde_json::json!({"multiples": "x"})))
            .contains("multiples")
    );
    assert!(
        bad(|v| v["functions"][0]["graph"] = node(serde_json::json!({}))).contains("multiples")
    );
    let assign = serde_json::json!({"inputs": [{"dtype": "float64", "shape": null}], "consts": [],
        "nodes": [{"op": "AssignVariableOp", "attrs": {"variable": 3}, "inputs": [{"input": 0}], "outputs": 0}],
        "outputs": []});
    assert!(bad(|v| v["functions"][0]["graph"] = assign).contains("variable 3"));
    let draw = serde_json::json!({"inputs": [], "consts": [],
        "nodes": [{"op": "RandomStandardNormal", "attrs": {"shape": [1u64 << 40, 1u64 << 40], "a": 0.0, "b": 1.0,
                   "dtype": "float32", "seed": null}, "inputs": [], "outputs": 1}],
        "outputs": [{"node": [0, 0]}]});
    let m = bad(|v| v["functions"][0]["graph"] = draw);
    assert!(m.contains("RandomStandardNormal"), "{m}");
}

/// g(x) = (s, ds/dx, ds/dw) with s = sum(exp(x) * w), the gradients taken by a tape
/// the traced function makes (start, watch, exit, gradient: one node each).
fn traced_tape_model() -> (Graph, Variable) {
    use crate::graph::{SourceRef, TapeSpec};
    use crate::tape::{GradientTape, Source, UnconnectedGradients};
    let (w, x, spec) = w_x_spec();
    let w2 = w.clone();
    let traced = graph::trace(&[x], vec![spec], move |xs| {
        let x = &xs[0];
        let tape = GradientTape::new();
        tape.start();
        let start = TapeSpec::Start {
            persistent: false,
            watch_accessed_variables: true,
        };
        graph::record_tape_use(&tape, start, &[], &[], &[])?;
        tape.watch(x);
        let watch = TapeSpec::Watch {
            source: SourceRef::Input(0),
        };
        graph::record_tape_use(&tape, watch, &[], &[x], &[])?;
        let e = graph::elementwise1(o::exp, x)?;
        let m = graph::elementwise2(o::multiply, &e, &w2.read())?;
        let s = graph::op("Sum", "None,false", &[&m], |a| {
            o::reduce_sum(&a[0], None, false)
        })?;
        tape.exit();
        graph::record_tape_use(&tape, TapeSpec::Exit, &[], &[], &[])?;
        let r = tape.gradient(
            std::slice::from_ref(&s),
            &[Source::Tensor(x), Source::Variable(&w2)],
            None,
            UnconnectedGradients::None,
        )?;
        let grad = TapeSpec::Gradient {
            targets: 1,
            sources: vec![SourceRef::Input(1), SourceRef::Variable(0)],
            output_gradients: None,
            zero_unconnected: false,
            sparse: None,
            present: vec![true, true],
        };
        let r: Vec<Tensor> = r.into_iter().flatten().collect();
        graph::record_tape_use(&tape, grad, std::slice::from_ref(&w2), &[&s, x], &r)?;
        Ok(vec![s, r[0].clone(), r[1].clone()])
    })
    .unwrap();
    (traced.graph, w)
}

#[test]
fn a_function_with_a_tape_inside_round_trips_and_differentiates_when_loaded() {
    let (g, w) = traced_tape_model();
    let (def, consts) = encode(&g, &w);
    let ops: Vec<&str> = def.nodes.iter().map(|n| n.op.as_str()).collect();
    assert_eq!(
        ops,
        [
            "TapeStart",
            "TapeWatch",
            "Unary",
            "ReadVariableOp",
            "Binary",
            "Sum",
            "TapeExit",
            "Gradient"
        ]
    );
    let text = serde_json::to_string(&model_def(def)).unwrap();
    let parsed = parse(text.as_bytes()).unwrap();
    check(&parsed, consts.len()).unwrap();
    let w_loaded = Variable::new(w.value_unrecorded(), true, Some("w"));
    let model = build(parsed, consts, vec![w_loaded.clone()]).unwrap();
    let f = model.signature("serving_default").unwrap();
    // New values of x and of the loaded variable: every call makes its own tape and
    // differentiates what that call ran.
    for (xs, ws) in [([0.0f64, 1.0], [1.0, 2.0]), ([2.0, -1.0], [3.0, -0.5])] {
        w_loaded
            .assign(&Tensor::from_vec(ws.to_vec(), &[2]).unwrap())
            .unwrap();
        let out = f
            .call(&[Tensor::from_vec(xs.to_vec(), &[2]).unwrap()])
            .unwrap();
        let e: Vec<f64> = xs.iter().map(|v| v.exp()).collect();
        let s: f64 = e.iter().zip(&ws).map(|(a, b)| a * b).sum();
        assert!((out[0].to_vec::<f64>().unwrap()[0] - s).abs() < 1e-12);
        let dx = out[1].to_vec::<f64>().unwrap();
        let dw = out[2].to_vec::<f64>().unwrap();
        for k in 0..2 {
            assert!((dx[k] - e[k] * ws[k]).abs() < 1e-12, "{dx:?}");
            assert!((dw[k] - e[k]).abs() < 1e-12, "{dw:?}");
        }
    }
}

#[test]
fn bad_tape_uses_in_a_file_are_refused() {
    let (g, w) = traced_tape_model();
    let (def, consts) = encode(&g, &w);
    let good = serde_json::to_value(model_def(def)).unwrap();
    let refuse = |mutate: &dyn Fn(&mut Json)| {
        let mut doc = good.clone();
        mutate(&mut doc["functions"][0]["graph"]);
        let text = serde_json::to_string(&doc).unwrap();
        let parsed = parse(text.as_bytes()).unwrap();
        match check(&parsed, consts.len()) {
            Ok(()) => panic!("a bad tape use was accepted"),
            Err(e) => {
                assert!(matches!(e, Error::DataLoss(_)), "{e}");
                e.to_string()
            }
        }
    };
    // Node 7 is the gradient, node 1 the watch, node 0 the start.
    let e = refuse(&|d| d["nodes"][7]["attrs"]["slot"] = 1_000_000_000.into());
    assert!(e.contains("tape slot 1000000000 is out of range"), "{e}");
    let e =
        refuse(&|d| d["nodes"][7]["attrs"]["spec"]["sources"][0] = serde_json::json!({"Input": 9}));
    assert!(e.contains("a target or source is not there"), "{e}");
    let e = refuse(&|d| d["nodes"][7]["attrs"]["variables"] = serde_json::json!([5]));
    assert!(e.contains("variable 5 does not exist"), "{e}");
    let e = refuse(&|d| d["nodes"][7]["outputs"] = 3.into());
    assert!(
        e.contains("declares 3 outputs where its spec gives 2"),
        "{e}"
    );
    let e = refuse(&|d| d["nodes"][1]["attrs"]["spec"] = serde_json::json!({"use": "Exit"}));
    assert!(e.contains("the spec is a TapeExit"), "{e}");
    let e = refuse(&|d| d["nodes"][0]["attrs"]["spec"]["extra"] = 1.into());
    assert!(e.contains("bad spec"), "{e}");
}
