//! A persistent tape answers several `gradient` calls over one recording, as in TF's
//! docs: with `y = x * x` and `z = y * y` at `x = 3.0`, `dz/dx = 4x^3 = 108` and
//! `dy/dx = 2x = 6`.
//!
//! ```text
//! cargo run --example persistent
//! ```

use gradtape::{ops, GradientTape, Tensor};

fn main() -> gradtape::Result<()> {
    let x = Tensor::scalar(3.0f32);
    let g = GradientTape::persistent();
    let (y, z) = {
        // The guard form of `record`: the tape records while `_recording` lives. Bind it
        // to a name; `let _ = g.enter();` would drop the guard at once and record nothing.
        let _recording = g.enter();
        g.watch(&x);
        let y = ops::mul(&x, &x)?;
        let z = ops::mul(&y, &y)?;
        (y, z)
    };
    let dz_dx = g
        .gradient1(&z, &x)?
        .expect("z depends on x")
        .to_vec::<f32>()?[0];
    let dy_dx = g
        .gradient1(&y, &x)?
        .expect("y depends on x")
        .to_vec::<f32>()?[0];
    println!("dz_dx = {dz_dx:.1}");
    println!("dy_dx = {dy_dx:.1}");
    assert_eq!((dz_dx, dy_dx), (108.0, 6.0));
    // The recording is released when the tape is dropped.
    drop(g);
    Ok(())
}
