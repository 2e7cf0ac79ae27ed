//! The Jacobian of a vector function, as TF's `tape.jacobian`: for `y = sin(x) * x` and
//! `x = [0, 1, 2]`, `dy_i/dx_j` is zero off the diagonal and `cos(x) * x + sin(x)` on it.
//! A matrix-vector product `z = W x` has the Jacobian `W` itself.
//!
//! ```text
//! cargo run --example jacobian
//! ```

use gradtape::{ops, GradientTape, Source, Tensor, UnconnectedGradients};

fn main() -> gradtape::Result<()> {
    let xs = [0.0f64, 1.0, 2.0];
    let x = Tensor::from_vec(xs.to_vec(), &[3])?;
    let w = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;

    let tape = GradientTape::persistent();
    let (y, z) = {
        let _recording = tape.enter();
        tape.watch(&x);
        let y = ops::mul(&ops::sin(&x)?, &x)?;
        let z = ops::reshape(&ops::matmul(&w, &ops::reshape(&x, &[3, 1])?)?, &[2])?;
        (y, z)
    };
    let jacobian = |target: &Tensor| -> gradtape::Result<Tensor> {
        let mut js = tape.jacobian(
            target,
            &[Source::Tensor(&x)],
            UnconnectedGradients::None,
            None,
            true,
        )?;
        Ok(js.remove(0).expect("the target depends on x"))
    };

    let jy = jacobian(&y)?;
    assert_eq!(jy.shape(), &[3, 3]);
    let jy = jy.to_vec::<f64>()?;
    for row in jy.chunks(3) {
        let cells: Vec<String> = row.iter().map(|v| format!("{v:.4}")).collect();
        println!("dy/dx: [{}]", cells.join(", "));
    }
    for i in 0..3 {
        for j in 0..3 {
            let want = if i == j {
                xs[i].cos() * xs[i] + xs[i].sin()
            } else {
                0.0
            };
            assert!((jy[i * 3 + j] - want).abs() < 1e-12, "dy{i}/dx{j}");
        }
    }

    let jz = jacobian(&z)?;
    assert_eq!(jz.shape(), &[2, 3]);
    let jz = jz.to_vec::<f64>()?;
    println!("dz/dx: {jz:?}");
    assert_eq!(jz, w.to_vec::<f64>()?);
    Ok(())
}
