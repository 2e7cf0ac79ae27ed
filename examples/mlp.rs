//! A two-layer MLP fitted to y = sin(3x) + x on 64 points by gradient descent:
//! `cargo run --example mlp` prints the loss falling.
use gradtape::{GradientTape, Result, Tensor, Variable};

fn param(shape: &[usize]) -> Variable {
    let (n, k): (usize, f32) = (shape.iter().product(), 0.8 / (shape[0] as f32).sqrt());
    let v = (0..n).map(|i| ((i + shape[0]) as f32 * 12.9898).sin() * k); // pseudo-random
    let t = Tensor::from_vec(v.collect(), shape).expect("n values");
    Variable::new(t, true, None)
}

fn main() -> Result<()> {
    let xs: Vec<f32> = (0..64).map(|i| i as f32 / 32.0 - 1.0).collect();
    let ys = xs.iter().map(|x| (3.0 * x).sin() + x).collect();
    let x = Tensor::from_vec(xs, &[64, 1])?;
    let y = Tensor::from_vec(ys, &[64, 1])?;
    let shapes: [&[usize]; 4] = [&[1, 32], &[32], &[32, 1], &[1]]; // w1, b1, w2, b2
    let p = shapes.map(param);
    let (lr, mut losses) = (Tensor::scalar(0.1f32), Vec::new());
    for step in 0..=600 {
        let tape = GradientTape::new();
        let loss = tape.record(|| {
            let h = x.matmul(&p[0].read())?.add(&p[1].read())?.tanh()?;
            let out = h.matmul(&p[2].read())?.add(&p[3].read())?;
            out.squared_difference(&y)?.mean()
        })?;
        let grads = tape.gradients(&loss, &[&p[0], &p[1], &p[2], &p[3]])?;
        for (v, g) in p.iter().zip(grads) {
            v.assign_sub(&(&g.expect("every parameter is used") * &lr)?)?;
        }
        losses.push(loss.to_f64_scalar()?);
        if step % 100 == 0 {
            println!("step {step:3}  loss {:.4}", losses[step]);
        }
    }
    assert!(losses[600] < losses[0] / 10.0, "no fall: {losses:?}");
    Ok(())
}
