//! Nested tapes give higher derivatives, as in TF's docs: the inner tape's gradient is
//! computed while the outer tape records, so the outer tape can differentiate it again.
//! With `y = x^3` at `x = 3.0`: `dy/dx = 3x^2 = 27` and `d2y/dx2 = 6x = 18`.
//!
//! ```text
//! cargo run --example nested_tapes
//! ```

use gradtape::{ops, GradientTape, Tensor};

fn main() -> gradtape::Result<()> {
    let x = Tensor::scalar(3.0f32);
    let outer = GradientTape::new();
    let dy_dx = {
        let _outer_recording = outer.enter();
        outer.watch(&x);
        let inner = GradientTape::new();
        let y = {
            let _inner_recording = inner.enter();
            inner.watch(&x);
            ops::mul(&ops::mul(&x, &x)?, &x)?
        };
        // Still inside the outer recording: the gradient's own ops are recorded.
        inner.gradient1(&y, &x)?.expect("y depends on x")
    };
    let d2y_dx2 = outer.gradient1(&dy_dx, &x)?.expect("dy_dx depends on x");
    let (first, second) = (dy_dx.to_vec::<f32>()?[0], d2y_dx2.to_vec::<f32>()?[0]);
    println!("dy_dx = {first:.1}");
    println!("d2y_dx2 = {second:.1}");
    assert_eq!((first, second), (27.0, 18.0));
    Ok(())
}
