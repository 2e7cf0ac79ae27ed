//! A two-layer MLP fitted to y = sin(3x) + x on 64 points by gradient descent:
//! `cargo run --example mlp` prints the loss falling.
use gradtape::{GradientTape, Result, Tensor, Variable};

/// A trainable variable of small deterministic pseudo-random values.
fn param(shape: &[usize], seed: f32) -> Result<Variable> {
    let n: usize = shape.iter().product();
    let v = (0..n).map(|i| ((i as f32 + seed) * 12.9898).sin() * 0.8).collect();
    Ok(Variable::new(Tensor::from_vec(v, shape)?, true, None))
}

fn main() -> Result<()> {
    let xs: Vec<f32> = (0..64).map(|i| i as f32 / 32.0 - 1.0).collect();
    let ys: Vec<f32> = xs.iter().map(|x| (3.0 * x).sin() + x).collect();
    let (x, y) = (Tensor::from_vec(xs, &[64, 1])?, Tensor::from_vec(ys, &[64, 1])?);
    let (w1, b1, w2, b2) = (param(&[1, 32], 1.0)?, param(&[32], 2.0)?, param(&[32, 1], 3.0)?, param(&[1], 4.0)?);
    let lr = Tensor::scalar(0.2f32);
    let mut losses = Vec::new();
    for step in 0..=400 {
        let tape = GradientTape::new();
        let loss = tape.record(|| {
            let h = x.matmul(&w1.read())?.add(&b1.read())?.tanh()?;
            h.matmul(&w2.read())?.add(&b2.read())?.squared_difference(&y)?.mean()
        })?;
        let params = [&w1, &b1, &w2, &b2];
        for (v, g) in params.iter().zip(tape.gradients(&loss, &params)?) {
            v.assign_sub(&(&g.expect("every parameter is used") * &lr)?)?;
        }
        losses.push(loss.to_f64_scalar()?);
        if step % 50 == 0 {
            println!("step {step:3}  loss {:.4}", losses[step]);
        }
    }
    assert!(losses[400] < losses[0] / 10.0, "the loss did not fall: {losses:?}");
    Ok(())
}
