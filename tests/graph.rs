//! The graph layer from Rust: trace a closure, run the graph on new inputs (any batch
//! size), differentiate through a run, and read a variable by reference.

use gradtape::graph::{self, Spec};
use gradtape::{ops, DType, GradientTape, Result, Tensor, Variable};

fn loss_graph(w: &Variable) -> Result<graph::Graph> {
    let example = Tensor::from_vec(vec![1.0f64, 2.0], &[1, 2])?;
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
    traced.graph.optimize()
}

/// sum(tanh(x w)²) and its gradient with respect to w, by hand.
fn reference(x: &[[f64; 2]], w: [[f64; 2]; 2]) -> (f64, [[f64; 2]; 2]) {
    let mut loss = 0.0;
    let mut g = [[0.0; 2]; 2];
    for row in x {
        for j in 0..2 {
            let h = (row[0] * w[0][j] + row[1] * w[1][j]).tanh();
            loss += h * h;
            for (i, xi) in row.iter().enumerate() {
                g[i][j] += xi * 2.0 * h * (1.0 - h * h);
            }
        }
    }
    (loss, g)
}

#[test]
fn a_traced_rust_closure_runs_and_differentiates_like_the_eager_code() -> Result<()> {
    let wv = [[0.5, -1.0], [2.0, 0.25]];
    let w = Variable::new(
        Tensor::from_vec(vec![wv[0][0], wv[0][1], wv[1][0], wv[1][1]], &[2, 2])?,
        true,
        None,
    );
    let g = loss_graph(&w)?;
    // tanh and the square are one fused node.
    assert!(g.op_counts().iter().any(|(n, _)| n.starts_with("Fused[")));
    let rows = [[1.0, 2.0], [-0.5, 0.3], [0.0, 1.0]];
    let x = Tensor::from_vec(rows.iter().flatten().copied().collect(), &[3, 2])?;
    let tape = GradientTape::new();
    let loss = {
        let _recording = tape.enter();
        g.run(std::slice::from_ref(&x))?.remove(0)
    };
    let dw = tape
        .gradient1(&loss, &w.handle())?
        .expect("w is read by the graph");
    let (want, want_g) = reference(&rows, wv);
    assert!((loss.to_f64_scalar()? - want).abs() < 1e-12);
    for (a, b) in dw.to_vec::<f64>()?.iter().zip(want_g.iter().flatten()) {
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }
    // The variable is read when the graph runs, not frozen at trace time.
    w.assign(&Tensor::from_vec(vec![0.0f64; 4], &[2, 2])?)?;
    assert_eq!(g.run(std::slice::from_ref(&x))?[0].to_f64_scalar()?, 0.0);
    // A wrong dtype or rank is an error, not a wrong number.
    assert!(g
        .run(&[Tensor::from_vec(vec![1.0f32, 2.0], &[1, 2])?])
        .is_err());
    assert!(g
        .run(&[Tensor::from_vec(vec![1.0f64, 2.0], &[2])?])
        .is_err());
    Ok(())
}
