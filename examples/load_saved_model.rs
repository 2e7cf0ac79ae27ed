//! Loads a SavedModel written by the Python package (`gt.saved_model.save`), with no
//! Python: calls its default signature, checks the gradient against central finite
//! differences, reads and updates a variable.
//!
//! ```text
//! python -c 'import gradtape as gt
//! class M(gt.Module):
//!     def __init__(self):
//!         super().__init__()
//!         self.w = gt.Variable([[1.0], [-2.0]], name="w")
//!     @gt.function(input_signature=[gt.TensorSpec([None, 2])])
//!     def __call__(self, x):
//!         return gt.tanh(x @ self.w)
//! gt.saved_model.save(M(), "my_model")'
//! cargo run --example load_saved_model -- my_model
//! ```
//!
//! The model's default signature must take one float32 tensor of shape `[None, n]`.

use gradtape::{ops, saved_model, DType, GradientTape, Tensor};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: load_saved_model SAVED_MODEL_DIR");
        std::process::exit(2);
    };
    let model = saved_model::load(&dir)?;
    let f = model
        .signature("serving_default")
        .ok_or("the model has no serving_default signature")?;
    let spec = &f.inputs()[0];
    let n = spec
        .shape
        .as_ref()
        .and_then(|s| s.last().copied().flatten())
        .unwrap_or(1);
    if spec.dtype != DType::F32 {
        return Err("the signature must take a float32 tensor".into());
    }
    // A batch of 2 rows with values 0.1, 0.2, ...
    let xs: Vec<f32> = (0..2 * n).map(|i| 0.1 * (i as f32 + 1.0)).collect();
    let x = Tensor::from_vec(xs.clone(), &[2, n])?;

    let tape = GradientTape::new();
    let loss = {
        let _r = tape.enter();
        tape.watch(&x);
        let y = f.call(std::slice::from_ref(&x))?.remove(0);
        println!("y = {:?}", y.to_vec::<f32>()?);
        ops::reduce_sum(&y, None, false)?
    };
    let g = tape
        .gradient1(&loss, &x)?
        .ok_or("the output does not depend on x")?;
    let g = g.to_vec::<f32>()?;
    println!("d sum(y) / dx = {g:?}");

    // Central differences of sum(y) in float64 steps of the float32 input.
    let eps = 1e-2f32;
    let value = |v: Vec<f32>| -> Result<f32, gradtape::Error> {
        let y = f.call(&[Tensor::from_vec(v, &[2, n])?])?.remove(0);
        Ok(y.to_vec::<f32>()?.iter().sum())
    };
    let mut worst = 0.0f32;
    for i in 0..xs.len() {
        let (mut hi, mut lo) = (xs.clone(), xs.clone());
        hi[i] += eps;
        lo[i] -= eps;
        let fd = (value(hi)? - value(lo)?) / (2.0 * eps);
        worst = worst.max((fd - g[i]).abs());
    }
    println!("largest |gradient - finite difference| = {worst:.2e}");

    for v in model.variables() {
        println!("variable {} {:?}", v.name(), v.shape());
    }
    if let Some(v) = model.variables().first() {
        // Zero the first variable: the function reads the new value.
        v.assign(&ops::zeros(&v.shape(), v.dtype())?)?;
        let y = f.call(&[x])?.remove(0);
        println!("after zeroing {}: y = {:?}", v.name(), y.to_vec::<f32>()?);
    }
    Ok(())
}
