//! SavedModels from Rust, public API only: a model traced and written by this test is
//! loaded, called, differentiated (a custom gradient included) and updated; damaged
//! copies of it are refused with errors, never a panic (issue 15).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gradtape::graph::{self, Spec};
use gradtape::saved_model::{
    self, Encoder, FunctionDef, ObjectDef, SavedGradient, SavedModelDef, VariableDef,
};
use gradtape::{ops, DType, Error, GradientTape, Source, Tensor, UnconnectedGradients, Variable};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gradtape-sm-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// `y = clip_grad(tanh(x @ w + b))`, where `clip_grad` is an identity whose gradient is
/// clipped to norm 0.5 (the seed guide's custom gradient); written to `path`.
fn write_model(path: &Path) -> (Tensor, Tensor) {
    // The table of gradients recorded for saving is the process's: one save at a time
    // (the tests of this file run in parallel).
    static SAVING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _saving = SAVING.lock().unwrap_or_else(|e| e.into_inner());
    let w0 = Tensor::from_vec(vec![0.5f32, -1.0, 0.25, 2.0], &[2, 2]).unwrap();
    let b0 = Tensor::from_vec(vec![0.1f32, -0.2], &[2]).unwrap();
    let w = Variable::new(w0.clone(), true, Some("dense/kernel"));
    let b = Variable::new(b0.clone(), true, Some("dense/bias"));
    let x = Tensor::from_vec(vec![1.0f32, 2.0], &[1, 2]).unwrap();
    let spec = Spec {
        dtype: DType::F32,
        shape: Some(vec![None, Some(2)]),
    };
    let (w2, b2) = (w.clone(), b.clone());
    let traced = graph::trace(&[x], vec![spec], move |xs| {
        let h = graph::op(
            "BatchMatMulV2",
            "false,false,false,false",
            &[&xs[0], &w2.read()],
            |a| ops::matmul(&a[0], &a[1]),
        )?;
        let h = graph::elementwise2(ops::add, &h, &b2.read())?;
        let y = graph::elementwise1(ops::tanh, &h)?;
        // The gradient graph: dy clipped to norm 0.5.
        let (grad, captured) = graph::trace_subgraph(std::slice::from_ref(&y), |dys| {
            let half = Tensor::scalar(0.5f32);
            graph::constant(&half);
            Ok(vec![graph::op(
                "ClipByNorm",
                "None",
                &[&dys[0], &half],
                |a| ops::clip_by_norm(&a[0], &a[1], None),
            )?])
        })?;
        let saved = SavedGradient {
            gradient: Some(std::sync::Arc::new(grad.graph)),
            n_inputs: 1,
            n_outputs: 1,
            n_captured: captured.len(),
            variables: vec![],
        };
        saved_model::record_saved_custom_gradient(
            std::slice::from_ref(&y),
            std::slice::from_ref(&y),
            &captured,
            saved,
        )
    })
    .unwrap();
    let vars = [w.clone(), b.clone()];
    let index = |v: &Variable| vars.iter().position(|u| u.id() == v.id());
    let id_index = |id: u64| vars.iter().position(|u| u.id() == id);
    let mut enc = Encoder {
        variable_index: &index,
        variable_id_index: &id_index,
        constants: Vec::new(),
    };
    let graph_def = enc.encode(&traced.graph).unwrap();
    saved_model::forget_saved_gradients();
    let def = SavedModelDef {
        format: saved_model::FORMAT.into(),
        version: saved_model::VERSION,
        variables: vec![
            VariableDef {
                name: "dense/kernel:0".into(),
                dtype: "float32".into(),
                shape: vec![2, 2],
                trainable: true,
            },
            VariableDef {
                name: "dense/bias:0".into(),
                dtype: "float32".into(),
                shape: vec![2],
                trainable: true,
            },
        ],
        functions: vec![FunctionDef {
            name: "__call__".into(),
            graph: graph_def,
            input_structure: serde_json::Value::Null,
            output_structure: serde_json::Value::Null,
        }],
        signatures: [("serving_default".to_string(), 0)].into_iter().collect(),
        objects: vec![
            ObjectDef::Module {
                class: "Model".into(),
                children: [("__call__".to_string(), 1usize)].into_iter().collect(),
            },
            ObjectDef::Function { functions: vec![0] },
        ],
    };
    saved_model::write(path, &def, &[w0.clone(), b0.clone()], &enc.constants).unwrap();
    (w0, b0)
}

fn close(a: &[f32], b: &[f32]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() < 1e-5, "{a:?} vs {b:?}");
    }
}

#[test]
fn a_written_model_loads_calls_differentiates_and_updates() {
    let path = dir("ok");
    write_model(&path);
    let model = saved_model::load(&path).unwrap();
    assert_eq!(model.signature_names(), vec!["serving_default"]);
    let f = model.function("__call__").unwrap();
    assert_eq!(f.inputs()[0].shape, Some(vec![None, Some(2)]));
    // Two rows where the trace had one: the batch dimension is free.
    let x = Tensor::from_vec(vec![1.0f32, 2.0, -1.0, 0.5], &[2, 2]).unwrap();
    let w = model.variable("dense/kernel").unwrap().clone();
    let tape = GradientTape::new();
    let (y, sum) = {
        let _r = tape.enter();
        tape.watch(&x);
        let y = f.call(std::slice::from_ref(&x)).unwrap().remove(0);
        let sum = ops::reduce_sum(&y, None, false).unwrap();
        (y, sum)
    };
    // tanh([1, 2] @ w + b) by hand.
    let h = |x0: f32, x1: f32| {
        [
            (x0 * 0.5 + x1 * 0.25 + 0.1).tanh(),
            (-x0 + x1 * 2.0 - 0.2).tanh(),
        ]
    };
    let want: Vec<f32> = [h(1.0, 2.0), h(-1.0, 0.5)].concat();
    close(&y.to_vec::<f32>().unwrap(), &want);
    // The custom gradient: the all-ones output gradient (norm 2) clipped to norm 0.5,
    // i.e. 0.25 each, then back through tanh and the product.
    let g = tape
        .gradient(
            &[sum],
            &[Source::Tensor(&x), Source::Variable(&w)],
            None,
            UnconnectedGradients::None,
        )
        .unwrap();
    let d = |t: f32| 0.25 * (1.0 - t * t);
    let gx0 = [
        d(want[0]) * 0.5 - d(want[1]),
        d(want[0]) * 0.25 + d(want[1]) * 2.0,
    ];
    let gx1 = [
        d(want[2]) * 0.5 - d(want[3]),
        d(want[2]) * 0.25 + d(want[3]) * 2.0,
    ];
    close(
        &g[0].as_ref().unwrap().to_vec::<f32>().unwrap(),
        &[gx0, gx1].concat(),
    );
    assert_eq!(g[1].as_ref().unwrap().shape(), &[2, 2]);
    // Variables update in place and the function reads them.
    w.assign(&ops::zeros(&[2, 2], DType::F32).unwrap()).unwrap();
    let y0 = f.call(&[x]).unwrap().remove(0);
    close(
        &y0.to_vec::<f32>().unwrap(),
        &[
            0.1f32.tanh(),
            (-0.2f32).tanh(),
            0.1f32.tanh(),
            (-0.2f32).tanh(),
        ],
    );
    let _ = std::fs::remove_dir_all(&path);
}

fn load_err(path: &Path) -> Error {
    match saved_model::load(path) {
        Ok(_) => panic!("a damaged SavedModel loaded"),
        Err(e) => e,
    }
}

#[test]
fn damaged_models_are_refused_naming_the_problem() {
    let path = dir("bad");
    write_model(&path);
    let read = |f: &str| std::fs::read(path.join(f)).unwrap();
    let (structure, vars, consts) = (
        read("saved_model.json"),
        read("variables.safetensors"),
        read("constants.safetensors"),
    );
    let restore = || {
        std::fs::write(path.join("saved_model.json"), &structure).unwrap();
        std::fs::write(path.join("variables.safetensors"), &vars).unwrap();
        std::fs::write(path.join("constants.safetensors"), &consts).unwrap();
    };
    let mut cases: BTreeMap<&str, Box<dyn Fn()>> = BTreeMap::new();
    let p = path.clone();
    let v2 = vars.clone();
    cases.insert(
        "truncated variables",
        Box::new(move || {
            std::fs::write(p.join("variables.safetensors"), &v2[..v2.len() - 3]).unwrap()
        }),
    );
    let p = path.clone();
    cases.insert(
        "missing constants",
        Box::new(move || std::fs::remove_file(p.join("constants.safetensors")).unwrap()),
    );
    let p = path.clone();
    let s = String::from_utf8(structure.clone()).unwrap();
    let s2 = s.clone();
    cases.insert(
        "wrong version",
        Box::new(move || {
            std::fs::write(
                p.join("saved_model.json"),
                s2.replace("\"version\": 2", "\"version\": 7"),
            )
            .unwrap()
        }),
    );
    let p = path.clone();
    let s2 = s.clone();
    cases.insert(
        "shape mismatch",
        Box::new(move || {
            std::fs::write(
                p.join("saved_model.json"),
                s2.replacen(
                    "\"shape\": [\n        2,\n        2\n      ]",
                    "\"shape\": [\n        4\n      ]",
                    1,
                ),
            )
            .unwrap()
        }),
    );
    let p = path.clone();
    let s2 = s.clone();
    cases.insert(
        "truncated structure",
        Box::new(move || {
            std::fs::write(p.join("saved_model.json"), &s2.as_bytes()[..s2.len() / 2]).unwrap()
        }),
    );
    let p = path.clone();
    cases.insert(
        "hostile header size",
        Box::new(move || {
            let mut v = std::fs::read(p.join("variables.safetensors")).unwrap();
            v[..8].copy_from_slice(&(u64::MAX / 2).to_le_bytes());
            std::fs::write(p.join("variables.safetensors"), v).unwrap()
        }),
    );
    for (name, damage) in &cases {
        restore();
        damage();
        let e = load_err(&path);
        let msg = e.to_string();
        assert!(matches!(e, Error::DataLoss(_)), "{name}: {msg}");
        assert!(!msg.is_empty(), "{name}");
    }
    restore();
    assert!(saved_model::load(&path).is_ok());
    let e = load_err(&path.join("nowhere"));
    assert!(matches!(e, Error::Io { .. }), "{e}");
    let _ = std::fs::remove_dir_all(&path);
}
