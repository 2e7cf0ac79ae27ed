//! A two-layer MLP (the crate's `Dense`, `Sequential` and `Adam`) fitted to
//! y = sin(3x) + x on 64 points: `cargo run --example mlp` prints the loss falling.
use gradtape::nn::{Activation, Adam, Dense, Layer, Optimizer, Sequential};
use gradtape::{GradientTape, Result, Tensor};

fn main() -> Result<()> {
    let xs: Vec<f32> = (0..64).map(|i| i as f32 / 32.0 - 1.0).collect();
    let ys = xs.iter().map(|x| (3.0 * x).sin() + x).collect();
    let (x, y) = (
        Tensor::from_vec(xs, &[64, 1])?,
        Tensor::from_vec(ys, &[64, 1])?,
    );
    let model = Sequential::new()
        .add(Dense::new(1, 32, Activation::Tanh, Some(1))?)
        .add(Dense::new(32, 1, Activation::Linear, Some(2))?);
    let vars = model.trainable_variables();
    let mut opt = Adam::new(0.02);
    let mut losses = Vec::new();
    for step in 0..=300 {
        let tape = GradientTape::new();
        let loss = tape.record(|| model.forward(&x)?.squared_difference(&y)?.mean())?;
        let grads = tape.gradients(&loss, &vars.iter().collect::<Vec<_>>())?;
        let pairs: Vec<_> = grads
            .into_iter()
            .zip(&vars)
            .filter_map(|(g, v)| Some((g?, v)))
            .collect();
        opt.apply_gradients(&pairs)?;
        losses.push(loss.to_f64_scalar()?);
        if step % 50 == 0 {
            println!("step {step:3}  loss {:.4}", losses[step]);
        }
    }
    assert!(losses[300] < losses[0] / 10.0, "no fall: {losses:?}");
    Ok(())
}
