//! Jacobians through the public API: vectorized and row-by-row paths agree.

use gradtape::{ops, GradientTape, Source, Tensor, UnconnectedGradients};

fn mat(v: &[f64], r: usize, c: usize) -> Tensor {
    Tensor::from_vec(v.to_vec(), &[r, c]).unwrap()
}

#[test]
fn jacobian_of_matmul_tanh_matches_loop_and_shapes() {
    let x = mat(&[0.1, -0.2, 0.3, 0.4, 0.5, -0.6], 2, 3);
    let w = mat(&[0.2, 0.1, -0.3, 0.4, 0.05, -0.1], 3, 2);
    let tape = GradientTape::persistent();
    let y = {
        let _r = tape.enter();
        tape.watch(&x);
        tape.watch(&w);
        ops::tanh(&ops::matmul(&x, &w).unwrap()).unwrap()
    };
    let src = [Source::Tensor(&x), Source::Tensor(&w)];
    let a = tape
        .jacobian(&y, &src, UnconnectedGradients::None, None, true)
        .unwrap();
    let b = tape
        .jacobian(&y, &src, UnconnectedGradients::None, None, false)
        .unwrap();
    let jx = a[0].as_ref().unwrap();
    assert_eq!(jx.shape(), &[2, 2, 2, 3]);
    assert_eq!(a[1].as_ref().unwrap().shape(), &[2, 2, 3, 2]);
    for (p, q) in a.iter().zip(&b) {
        let (p, q) = (
            p.as_ref().unwrap().to_vec::<f64>().unwrap(),
            q.as_ref().unwrap().to_vec::<f64>().unwrap(),
        );
        for (u, v) in p.iter().zip(&q) {
            assert!((u - v).abs() < 1e-14);
        }
    }
    // x[1, :] does not affect y[0, :].
    let v = jx.to_vec::<f64>().unwrap();
    assert!(v[3..6].iter().all(|&e| e == 0.0));
}

#[test]
fn batch_jacobian_of_elementwise_square() {
    let x = mat(&[1.0, 2.0, 3.0, 4.0], 2, 2);
    let tape = GradientTape::persistent();
    let y = {
        let _r = tape.enter();
        tape.watch(&x);
        ops::square(&x).unwrap()
    };
    let jb = tape
        .batch_jacobian(&y, &x, UnconnectedGradients::None, None, true)
        .unwrap()
        .unwrap();
    assert_eq!(jb.shape(), &[2, 2, 2]);
    assert_eq!(
        jb.to_vec::<f64>().unwrap(),
        vec![2.0, 0.0, 0.0, 4.0, 6.0, 0.0, 0.0, 8.0]
    );
}

#[test]
fn jacobian_wrt_a_bias_broadcast_over_the_batch() {
    // y = x W + b with b of shape [2] broadcast over 3 rows: dy[i, j] / db[k] = δ_jk,
    // on both paths (the vectorized one unbroadcasts a seed with a leading batch axis).
    let x = mat(&[0.1, -0.2, 0.3, 0.4, 0.5, -0.6], 3, 2);
    let w = mat(&[0.2, 0.1, -0.3, 0.4], 2, 2);
    let b = Tensor::from_vec(vec![0.5, -1.0], &[2]).unwrap();
    let tape = GradientTape::persistent();
    let y = {
        let _r = tape.enter();
        tape.watch(&b);
        ops::add(&ops::matmul(&x, &w).unwrap(), &b).unwrap()
    };
    for pfor in [true, false] {
        let j = tape
            .jacobian(
                &y,
                &[Source::Tensor(&b)],
                UnconnectedGradients::None,
                None,
                pfor,
            )
            .unwrap();
        let j = j[0].as_ref().unwrap();
        assert_eq!(j.shape(), &[3, 2, 2]);
        let eye = [1.0, 0.0, 0.0, 1.0];
        let want: Vec<f64> = (0..3).flat_map(|_| eye).collect();
        assert_eq!(j.to_vec::<f64>().unwrap(), want, "pfor={pfor}");
    }
}

#[test]
fn row_by_row_loop_needs_a_persistent_tape_and_unconnected_batch_jacobian_is_zeros() {
    // TF (eager): experimental_use_pfor=False on a non-persistent tape is refused
    // (RuntimeError in Python), and the tape stays usable.
    let x = mat(&[1.0, 2.0], 1, 2);
    let tape = GradientTape::new();
    let y = {
        let _r = tape.enter();
        tape.watch(&x);
        ops::square(&x).unwrap()
    };
    let refused = tape.batch_jacobian(&y, &x, UnconnectedGradients::None, None, false);
    assert!(matches!(refused, Err(gradtape::Error::Tape(_))));
    let src = [Source::Tensor(&x)];
    let refused = tape.jacobian(&y, &src, UnconnectedGradients::None, None, false);
    assert!(matches!(refused, Err(gradtape::Error::Tape(_))));
    let jb = tape
        .batch_jacobian(&y, &x, UnconnectedGradients::None, None, true)
        .unwrap()
        .unwrap();
    assert_eq!(jb.to_vec::<f64>().unwrap(), vec![2.0, 0.0, 0.0, 4.0]);

    // A target that does not depend on the source: zeros of the target's dtype,
    // whatever `unconnected` says (TF's compatibility behaviour).
    let tape = GradientTape::persistent();
    let c = {
        let _r = tape.enter();
        tape.watch(&x);
        mat(&[1.0, 1.0, 1.0], 1, 3)
    };
    for how in [UnconnectedGradients::None, UnconnectedGradients::Zero] {
        let z = tape
            .batch_jacobian(&c, &x, how, None, true)
            .unwrap()
            .unwrap();
        assert_eq!(z.shape(), &[1, 3, 2]);
        assert!(z.to_vec::<f64>().unwrap().iter().all(|&v| v == 0.0));
    }
    // Rank below 2 is TF's ValueError.
    let v = Tensor::from_vec(vec![1.0, 2.0], &[2]).unwrap();
    assert!(tape
        .batch_jacobian(&v, &x, UnconnectedGradients::None, None, true)
        .is_err());
}
