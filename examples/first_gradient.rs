//! The first example of TF's `tf.GradientTape` docs, with no Python: the gradient of
//! `y = x * x` at `x = 3.0` is `6.0`.
//!
//! ```text
//! cargo run --example first_gradient
//! ```

use gradtape::{GradientTape, Tensor};

fn main() -> gradtape::Result<()> {
    let x = Tensor::scalar(3.0f32);
    let g = GradientTape::new();
    // Operations are recorded while the closure runs (TF's `with` block).
    let y = g.record(|| {
        g.watch(&x);
        &x * &x
    })?;
    // `None` would mean "y does not depend on x".
    let dy_dx = g.gradient1(&y, &x)?.expect("y depends on x");
    let v = dy_dx.to_vec::<f32>()?[0];
    println!("dy_dx = {v:.1}");
    assert_eq!(v, 6.0);
    Ok(())
}
