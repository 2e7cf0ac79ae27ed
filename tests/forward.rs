//! Forward mode through the public API only: accumulators with custom gradients,
//! nesting with tapes and other accumulators, errors.

use gradtape::{custom_gradient, ops, Error, ForwardAccumulator, GradientTape, Tensor};

fn vals(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>().unwrap()
}

fn t64(v: &[f64]) -> Tensor {
    Tensor::from_vec(v.to_vec(), &[v.len()]).unwrap()
}

#[test]
fn custom_gradient_is_transposed_in_forward_mode() {
    // y = sin(x) computed outside the engine, with the rule dy * cos(x): forward mode
    // transposes the rule (TF's behaviour), so the tangent is cos(x) * t.
    let x = t64(&[0.5, 1.0]);
    let acc = ForwardAccumulator::new();
    acc.watch(&x, &t64(&[2.0, -1.0])).unwrap();
    let y = {
        let _on = acc.enter().unwrap();
        custom_gradient(
            &[&x],
            |xs| {
                let v: Vec<f64> = vals(&xs[0]).iter().map(|a| a.sin()).collect();
                Ok(vec![t64(&v)])
            },
            |xs, dys, _vars| Ok((vec![Some(ops::mul(&dys[0], &ops::cos(&xs[0])?)?)], vec![])),
        )
        .unwrap()
        .remove(0)
    };
    let t = vals(&acc.jvp(&y).unwrap());
    assert!((t[0] - 2.0 * 0.5f64.cos()).abs() < 1e-12);
    assert!((t[1] + 1.0f64.cos()).abs() < 1e-12);
}

#[test]
fn a_failing_rule_is_an_error_of_the_op() {
    let x = t64(&[1.0]);
    let acc = ForwardAccumulator::new();
    acc.watch(&x, &t64(&[1.0])).unwrap();
    let _on = acc.enter().unwrap();
    let r = custom_gradient(
        &[&x],
        |xs| Ok(vec![xs[0].clone()]),
        |_, _, _| Err(Error::Type("refused".into())),
    );
    assert!(r.is_err());
}

#[test]
fn third_derivative_from_three_nested_accumulators() {
    // d³/dx³ x^4 = 24 x.
    let x = Tensor::scalar(1.5f64);
    let accs: Vec<ForwardAccumulator> = (0..3).map(|_| ForwardAccumulator::new()).collect();
    for a in &accs {
        a.watch(&x, &Tensor::scalar(1.0f64)).unwrap();
    }
    let y = {
        let _a = accs[0].enter().unwrap();
        let _b = accs[1].enter().unwrap();
        let _c = accs[2].enter().unwrap();
        ops::pow(&x, &Tensor::scalar(4.0f64)).unwrap()
    };
    let d1 = accs[2].jvp(&y).unwrap();
    let d2 = accs[1].jvp(&d1).unwrap();
    let d3 = accs[0].jvp(&d2).unwrap();
    assert!((vals(&d1)[0] - 4.0 * 1.5f64.powi(3)).abs() < 1e-10);
    assert!((vals(&d2)[0] - 12.0 * 1.5f64.powi(2)).abs() < 1e-10);
    assert!((vals(&d3)[0] - 24.0 * 1.5).abs() < 1e-10);
}

#[test]
fn inner_tape_does_not_record_outer_tangents() {
    let c = Tensor::scalar(1.0f64);
    let acc = ForwardAccumulator::new();
    acc.watch(&c, &Tensor::scalar(0.1f64)).unwrap();
    let _on = acc.enter().unwrap();
    let tape = GradientTape::new();
    let d = {
        let _r = tape.enter();
        tape.watch(&c);
        ops::cos(&c).unwrap()
    };
    let jd = acc.jvp(&d).unwrap();
    assert!(tape.gradient1(&jd, &c).unwrap().is_none());
}
