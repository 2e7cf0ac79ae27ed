//! A custom gradient given as a closure, as with TF's `tf.custom_gradient`:
//! `log(1 + exp(x))` differentiated naively overflows to NaN at `x = 100` in float32,
//! while the hand-written gradient `dy * sigmoid(x)` stays exact (it is 1.0 there).
//!
//! ```text
//! cargo run --example custom_gradient
//! ```

use gradtape::{custom_gradient, ops, GradientTape, Tensor};

/// `log(1 + exp(x))`, computed as `max(x, 0) + log1p(exp(-|x|))` so it does not overflow,
/// with the gradient `dy * sigmoid(x)`.
fn log1pexp(x: &Tensor) -> gradtape::Result<Tensor> {
    let zero = Tensor::scalar(0.0f32);
    let mut outs = custom_gradient(
        &[x],
        |xs| {
            let x = &xs[0];
            let tail = ops::log1p(&ops::exp(&ops::negative(&ops::abs(x)?)?)?)?;
            Ok(vec![ops::add(&ops::maximum(x, &zero)?, &tail)?])
        },
        |xs, dys, _variables| {
            let dx = ops::mul(&dys[0], &ops::sigmoid(&xs[0])?)?;
            Ok((vec![Some(dx)], vec![]))
        },
    )?;
    Ok(outs.remove(0))
}

fn main() -> gradtape::Result<()> {
    let x = Tensor::from_vec(vec![0.0f32, 100.0], &[2])?;

    // Naively: d/dx log(1 + exp(x)) = exp(x) / (1 + exp(x)) = inf / inf at x = 100.
    let tape = GradientTape::new();
    let y = {
        let _recording = tape.enter();
        tape.watch(&x);
        ops::log(&ops::add(&Tensor::scalar(1.0f32), &ops::exp(&x)?)?)?
    };
    let naive = tape
        .gradient1(&y, &x)?
        .expect("y depends on x")
        .to_vec::<f32>()?;

    let tape = GradientTape::new();
    let y = {
        let _recording = tape.enter();
        tape.watch(&x);
        log1pexp(&x)?
    };
    let grad = tape
        .gradient1(&y, &x)?
        .expect("y depends on x")
        .to_vec::<f32>()?;
    let y = y.to_vec::<f32>()?;

    println!("naive dy_dx = [{:.1}, {:.1}]", naive[0], naive[1]);
    println!("y = [{:.4}, {:.4}]", y[0], y[1]);
    println!("dy_dx = [{:.1}, {:.1}]", grad[0], grad[1]);
    assert_eq!(naive[0], 0.5);
    assert!(naive[1].is_nan());
    assert!((y[0] - std::f32::consts::LN_2).abs() < 1e-6 && y[1] == 100.0);
    assert_eq!(grad, vec![0.5, 1.0]);
    Ok(())
}
