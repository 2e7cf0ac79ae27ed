//! Tape semantics through the public API only: the seeds' first examples.

use gradtape::{ops, GradientTape, Source, Tensor, UnconnectedGradients, Variable};

fn val(t: &Tensor) -> f32 {
    t.to_vec::<f32>().unwrap()[0]
}

#[test]
fn first_gradient_is_six() {
    let x = Tensor::scalar(3.0f32);
    let g = GradientTape::new();
    let y = {
        let _r = g.enter();
        g.watch(&x);
        ops::mul(&x, &x).unwrap()
    };
    assert_eq!(val(&g.gradient1(&y, &x).unwrap().unwrap()), 6.0);
    // Non-persistent: a second call is tape misuse.
    assert!(matches!(g.gradient1(&y, &x), Err(gradtape::Error::Tape(_))));
}

#[test]
fn unwatched_constant_gives_none() {
    let x = Tensor::scalar(3.0f32);
    let g = GradientTape::new();
    let y = {
        let _r = g.enter();
        ops::mul(&x, &x).unwrap()
    };
    assert!(g.gradient1(&y, &x).unwrap().is_none());
}

#[test]
fn persistent_tape_gives_108_and_6() {
    let x = Tensor::scalar(3.0f32);
    let g = GradientTape::persistent();
    let (y, z) = {
        let _r = g.enter();
        g.watch(&x);
        let y = ops::mul(&x, &x).unwrap();
        let z = ops::mul(&y, &y).unwrap();
        (y, z)
    };
    assert_eq!(val(&g.gradient1(&z, &x).unwrap().unwrap()), 108.0);
    assert_eq!(val(&g.gradient1(&y, &x).unwrap().unwrap()), 6.0);
    assert_eq!(val(&g.gradient1(&z, &x).unwrap().unwrap()), 108.0);
}

#[test]
fn third_derivative_through_three_tapes() {
    let x = Variable::new(Tensor::scalar(1.0f32), true, None);
    let (t1, t2, t3) = (
        GradientTape::new(),
        GradientTape::new(),
        GradientTape::new(),
    );
    let src = [Source::Variable(&x)];
    let grad = |t: &GradientTape, y: &Tensor| {
        t.gradient(
            std::slice::from_ref(y),
            &src,
            None,
            UnconnectedGradients::None,
        )
        .unwrap()
        .pop()
        .unwrap()
        .unwrap()
    };
    let _a = t3.enter();
    let _b = t2.enter();
    let _c = t1.enter();
    let xr = x.read();
    let y = ops::mul(&ops::mul(&xr, &xr).unwrap(), &xr).unwrap();
    drop(_c);
    let d1 = grad(&t1, &y);
    drop(_b);
    let d2 = grad(&t2, &d1);
    drop(_a);
    let d3 = grad(&t3, &d2);
    assert_eq!((val(&d1), val(&d2), val(&d3)), (3.0, 6.0, 6.0));
}

#[test]
fn variables_are_watched_when_read() {
    let w = Variable::new(Tensor::from(vec![1.0f32, 2.0]), true, Some("w"));
    let frozen = Variable::new(Tensor::from(vec![1.0f32, 2.0]), false, Some("f"));
    let g = GradientTape::new();
    let loss = {
        let _r = g.enter();
        let p = ops::mul(&w.read(), &frozen.read()).unwrap();
        ops::reduce_sum(&p, None, false).unwrap()
    };
    assert_eq!(g.watched_variables().len(), 1);
    assert_eq!(g.watched_variables()[0].name(), "w:0");
    let gs = g
        .gradient(
            &[loss],
            &[Source::Variable(&w), Source::Variable(&frozen)],
            None,
            UnconnectedGradients::Zero,
        )
        .unwrap();
    assert_eq!(
        gs[0].as_ref().unwrap().to_vec::<f32>().unwrap(),
        vec![1.0, 2.0]
    );
    assert_eq!(
        gs[1].as_ref().unwrap().to_vec::<f32>().unwrap(),
        vec![0.0, 0.0]
    );
}

#[test]
fn broadcasting_is_undone() {
    let a = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    let b = Tensor::from(vec![1.0f64, 1.0, 1.0]);
    let g = GradientTape::persistent();
    let s = {
        let _r = g.enter();
        g.watch(&a);
        g.watch(&b);
        ops::reduce_sum(&ops::mul(&a, &b).unwrap(), None, false).unwrap()
    };
    let gb = g.gradient1(&s, &b).unwrap().unwrap();
    assert_eq!(gb.shape(), &[3]);
    assert_eq!(gb.to_vec::<f64>().unwrap(), vec![5.0, 7.0, 9.0]);
}

#[test]
fn failed_op_leaves_tape_unchanged() {
    let a = Tensor::from(vec![1.0f32, 2.0]);
    let b = Tensor::from(vec![1.0f32, 2.0, 3.0]);
    let g = GradientTape::persistent();
    let _r = g.enter();
    g.watch(&a);
    assert!(ops::add(&a, &b).is_err());
    assert_eq!(g.num_nodes(), 0);
}

#[test]
fn rejected_arguments_leave_a_non_persistent_tape_usable() {
    let x = Tensor::from(vec![1.0f32, 2.0]);
    let g = GradientTape::new();
    let y = {
        let _r = g.enter();
        g.watch(&x);
        ops::mul(&x, &x).unwrap()
    };
    let src = [Source::Tensor(&x)];
    let bad = [Some(Tensor::from(vec![1.0f32, 2.0, 3.0]))];
    let e = g.gradient(
        std::slice::from_ref(&y),
        &src,
        Some(&bad),
        UnconnectedGradients::None,
    );
    assert!(matches!(e, Err(gradtape::Error::InvalidArgument { .. })));
    let i = Tensor::from_vec(vec![1i32, 2], &[2]).unwrap();
    assert!(g
        .jacobian(&i, &src, UnconnectedGradients::None, None, true)
        .is_err());
    assert!(g.gradient1(&y, &x).unwrap().is_some());
    // Used up: the tape says so before looking at the arguments, as TF does.
    let e = g.gradient(
        std::slice::from_ref(&y),
        &src,
        Some(&bad),
        UnconnectedGradients::None,
    );
    assert!(matches!(e, Err(gradtape::Error::Tape(_))));
}

#[test]
fn registered_gradient_overrides_a_builtin_rule_in_scope() {
    gradtape::register_gradient("RustTripleExp", |info, dys| {
        Ok(vec![Some(ops::mul(
            &dys[0],
            &ops::mul(&info.outputs[0], &Tensor::scalar(3.0f32))?,
        )?)])
    })
    .unwrap();
    let x = Tensor::scalar(0.0f32);
    let g = GradientTape::persistent();
    let (a, b) = {
        let _r = g.enter();
        g.watch(&x);
        let a = {
            let _o = gradtape::gradient_override_map(&[("Exp", "RustTripleExp")]).unwrap();
            ops::exp(&x).unwrap()
        };
        (a, ops::exp(&x).unwrap())
    };
    assert_eq!(val(&g.gradient1(&a, &x).unwrap().unwrap()), 3.0);
    assert_eq!(val(&g.gradient1(&b, &x).unwrap().unwrap()), 1.0);
    assert!(gradtape::gradient_override_map(&[("Exp", "Missing")]).is_err());
}
