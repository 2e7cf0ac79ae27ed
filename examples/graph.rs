//! A function traced once into a graph, then run on new inputs and differentiated:
//! `cargo run --example graph`.
//!
//! Inside the traced closure, ops are called through `graph::elementwise1/2` and
//! `graph::op` (which record them), variables are read with `read()`, and literals made
//! in the closure are registered with `graph::constant`.

use gradtape::graph::{self, Spec};
use gradtape::{ops, DType, GradientTape, Result, Tensor, Variable};

fn main() -> Result<()> {
    let w = Variable::new(
        Tensor::from_vec(vec![0.5f64, -1.0, 2.0, 0.25], &[2, 2])?,
        true,
        None,
    );
    let example = Tensor::from_vec(vec![1.0f64, 2.0], &[1, 2])?;
    // Any batch size: the first dimension is unknown.
    let spec = Spec {
        dtype: DType::F64,
        shape: Some(vec![None, Some(2)]),
    };
    let traced = graph::trace(std::slice::from_ref(&example), vec![spec], |x| {
        let wx = graph::op("MatMul", "", &[&x[0], &w.read()], |a| {
            ops::matmul(&a[0], &a[1])
        })?;
        let h = graph::elementwise1(ops::tanh, &wx)?;
        let sq = graph::elementwise2(ops::multiply, &h, &h)?;
        let loss = graph::op("Sum", "all", &[&sq], |a| {
            ops::reduce_sum(&a[0], None, false)
        })?;
        Ok(vec![loss])
    })?;
    let g = traced.graph.optimize()?;
    println!("nodes after optimizing: {:?}", g.op_counts());

    let x = Tensor::from_vec(vec![1.0f64, 2.0, -0.5, 0.3, 0.0, 1.0], &[3, 2])?;
    let tape = GradientTape::new();
    let loss = {
        let _recording = tape.enter();
        g.run(std::slice::from_ref(&x))?.remove(0)
    };
    let dw = tape
        .gradient1(&loss, &w.handle())?
        .expect("w is read by the graph");
    println!("loss = {:.6}", loss.to_f64_scalar()?);
    println!("d loss / d w = {:?}", dw.to_vec::<f64>()?);
    Ok(())
}
