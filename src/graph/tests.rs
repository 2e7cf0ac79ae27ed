use super::*;
use crate::ops;

fn t(v: &[f64]) -> Tensor {
    Tensor::from_vec(v.to_vec(), &[v.len()]).unwrap()
}

/// A literal made inside a trace is registered as a constant.
fn lit(v: &[f64]) -> Tensor {
    let x = t(v);
    constant(&x);
    x
}

fn vals(x: &Tensor) -> Vec<f64> {
    match x.data() {
        crate::tensor::Data::F64(a) => a.iter().copied().collect(),
        _ => panic!("not f64"),
    }
}

fn traced_exp(x: &Tensor) -> Result<Tensor> {
    Ok(apply("Exp", Some(String::new()), None, &[x], |a| {
        Ok(vec![ops::exp(&a[0])?])
    })?
    .remove(0))
}

fn traced_mul(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    Ok(apply("Mul", Some(String::new()), None, &[x, y], |a| {
        Ok(vec![ops::multiply(&a[0], &a[1])?])
    })?
    .remove(0))
}

#[test]
fn a_traced_graph_runs_on_new_inputs() {
    let x = t(&[0.0, 1.0]);
    let c = t(&[2.0, 3.0]);
    let spec = Spec {
        dtype: DType::F64,
        shape: Some(vec![None]),
    };
    let traced = trace(std::slice::from_ref(&x), vec![spec], |a| {
        Ok(vec![traced_mul(&traced_exp(&a[0])?, &c)?])
    })
    .unwrap();
    assert_eq!(vals(&traced.outputs[0]), vec![2.0, 3.0 * 1f64.exp()]);
    let out = traced.graph.run(&[t(&[1.0, 2.0, 0.0])]);
    // c has 2 elements: a 3-element input does not broadcast.
    assert!(out.is_err());
    let out = traced.graph.run(&[t(&[2.0, 0.5])]).unwrap();
    assert_eq!(vals(&out[0]), vec![2.0 * 2f64.exp(), 3.0 * 0.5f64.exp()]);
    assert!(traced
        .graph
        .run(&[Tensor::from_vec(vec![1f32], &[1]).unwrap()])
        .is_err());
}

#[test]
fn repeated_and_unused_calls_are_removed() {
    let x = t(&[0.5]);
    let traced = trace(std::slice::from_ref(&x), vec![Spec::of(&x)], |a| {
        let e1 = traced_exp(&a[0])?;
        let e2 = traced_exp(&a[0])?;
        let _unused = traced_exp(&e1)?;
        Ok(vec![traced_mul(&e1, &e2)?])
    })
    .unwrap();
    assert_eq!(traced.graph.nodes().len(), 4);
    let g = traced.graph.optimize().unwrap();
    assert_eq!(
        g.op_counts(),
        vec![("Exp".to_string(), 1), ("Mul".to_string(), 1)]
    );
    let y = g.run(&[t(&[1.0])]).unwrap();
    assert_eq!(vals(&y[0]), vec![1f64.exp() * 1f64.exp()]);
}

#[test]
fn variables_are_read_and_assigned_on_every_run() {
    let v = Variable::new(t(&[1.0]), true, None);
    let x = t(&[2.0]);
    let traced = trace(std::slice::from_ref(&x), vec![Spec::of(&x)], |a| {
        v.assign_add(&a[0])?;
        Ok(vec![traced_mul(&v.read(), &a[0])?])
    })
    .unwrap();
    // Tracing ran the function once, but its assign is undone.
    assert_eq!(vals(&v.value_unrecorded()), vec![1.0]);
    assert_eq!(vals(&traced.outputs[0]), vec![6.0]);
    let y = traced.graph.run(&[t(&[3.0])]).unwrap();
    assert_eq!(vals(&y[0]), vec![12.0]);
    assert_eq!(vals(&v.value_unrecorded()), vec![4.0]);
    v.assign(&t(&[0.0])).unwrap();
    let y = traced.graph.optimize().unwrap().run(&[t(&[1.0])]).unwrap();
    assert_eq!(vals(&y[0]), vec![1.0]);
}

#[test]
fn cond_and_while_loop_are_nodes() {
    let x = t(&[3.0]);
    let traced = trace(std::slice::from_ref(&x), vec![Spec::of(&x)], |a| {
        let pred = apply("Greater", None, None, &[&a[0]], move |b| {
            Ok(vec![ops::greater(&b[0], &Tensor::scalar(0.0f64))?])
        })?
        .remove(0);
        let _ = pred.clone();
        let _ = ops::reshape(&pred, &[])?;
        let y = Graph::cond(
            &ops::reshape(&pred, &[])?,
            || Ok(vec![traced_exp(&a[0])?]),
            || Ok(vec![traced_mul(&a[0], &a[0])?]),
        )?;
        Ok(y)
    });
    // `ops::reshape` bypasses `apply`: the trace refuses its result instead of
    // freezing it as a constant.
    assert!(traced.is_err());

    let traced = trace(std::slice::from_ref(&x), vec![Spec::of(&x)], |a| {
        let pred = apply("Greater", None, None, &[&a[0]], move |b| {
            Ok(vec![ops::greater(
                &ops::reshape(&b[0], &[])?,
                &Tensor::scalar(0.0f64),
            )?])
        })?
        .remove(0);
        Graph::cond(
            &pred,
            || Ok(vec![traced_exp(&a[0])?]),
            || Ok(vec![traced_mul(&a[0], &a[0])?]),
        )
    })
    .unwrap();
    assert_eq!(vals(&traced.outputs[0]), vec![3f64.exp()]);
    assert_eq!(
        vals(&traced.graph.run(&[t(&[-2.0])]).unwrap()[0]),
        vec![4.0]
    );
    assert_eq!(
        vals(&traced.graph.run(&[t(&[1.0])]).unwrap()[0]),
        vec![1f64.exp()]
    );

    // while x < limit: x = x * 2
    let limit = t(&[10.0]);
    let traced = trace(std::slice::from_ref(&x), vec![Spec::of(&x)], |a| {
        let lim = traced_mul(&limit, &lit(&[1.0]))?;
        Graph::while_loop(
            vec![a[0].clone()],
            |v| {
                Ok(apply("Less", None, None, &[&v[0], &lim], |b| {
                    Ok(vec![ops::reshape(&ops::less(&b[0], &b[1])?, &[])?])
                })?
                .remove(0))
            },
            |v| Ok(vec![traced_mul(&v[0], &lit(&[2.0]))?]),
        )
    })
    .unwrap();
    assert_eq!(vals(&traced.outputs[0]), vec![12.0]);
    assert_eq!(
        vals(&traced.graph.run(&[t(&[1.0])]).unwrap()[0]),
        vec![16.0]
    );
    assert_eq!(
        vals(&traced.graph.run(&[t(&[11.0])]).unwrap()[0]),
        vec![11.0]
    );
}

#[test]
fn gradients_flow_through_a_run() {
    let x = t(&[0.3]);
    let traced = trace(std::slice::from_ref(&x), vec![Spec::of(&x)], |a| {
        Ok(vec![traced_mul(&traced_exp(&a[0])?, &a[0])?])
    })
    .unwrap();
    let tape = crate::GradientTape::new();
    let x = t(&[0.7]);
    tape.watch(&x);
    let y = {
        let _rec = tape.enter();
        traced
            .graph
            .run(std::slice::from_ref(&x))
            .unwrap()
            .remove(0)
    };
    let g = tape.gradient1(&y, &x).unwrap().unwrap();
    // d/dx x e^x = (1 + x) e^x
    assert!((vals(&g)[0] - 1.7 * 0.7f64.exp()).abs() < 1e-12);
}

fn traced_unary(name: &str, f: fn(&Tensor) -> Result<Tensor>, x: &Tensor) -> Result<Tensor> {
    Ok(apply(
        name,
        Some(String::new()),
        Some(Elementwise::Unary(f)),
        &[x],
        move |a| Ok(vec![f(&a[0])?]),
    )?
    .remove(0))
}

fn traced_binary(
    name: &str,
    f: fn(&Tensor, &Tensor) -> Result<Tensor>,
    x: &Tensor,
    y: &Tensor,
) -> Result<Tensor> {
    Ok(apply(
        name,
        Some(String::new()),
        Some(Elementwise::Binary(f)),
        &[x, y],
        move |a| Ok(vec![f(&a[0], &a[1])?]),
    )?
    .remove(0))
}

#[test]
fn an_elementwise_chain_is_fused_and_gives_the_unfused_values() {
    // reduce_sum(exp(sin(x) * x) + x), the chain fused, the sum not.
    let n = 100_003;
    let xs: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin() * 2.0).collect();
    let x = Tensor::from_vec(xs.clone(), &[n]).unwrap();
    let any_length = Spec {
        dtype: DType::F64,
        shape: Some(vec![None]),
    };
    let traced = trace(std::slice::from_ref(&x), vec![any_length], |a| {
        let s = traced_unary("Sin", ops::sin, &a[0])?;
        let m = traced_binary("Mul", ops::multiply, &s, &a[0])?;
        let e = traced_unary("Exp", ops::exp, &m)?;
        let y = traced_binary("AddV2", ops::add, &e, &a[0])?;
        let half = lit(&[0.5]);
        Ok(vec![traced_binary("Mul", ops::multiply, &y, &half)?])
    })
    .unwrap();
    let fused = traced.graph.optimize().unwrap();
    assert_eq!(fused.nodes().len(), 1, "{:?}", fused.op_counts());
    assert!(fused.nodes()[0].name.starts_with("Fused["));
    let got = vals(&fused.run(std::slice::from_ref(&x)).unwrap()[0]);
    let want = vals(&traced.graph.run(std::slice::from_ref(&x)).unwrap()[0]);
    assert_eq!(got, want);
    for (i, &xi) in xs.iter().enumerate().step_by(9973) {
        let expect = ((xi.sin() * xi).exp() + xi) * 0.5;
        assert!((got[i] - expect).abs() <= 1e-15 * expect.abs().max(1.0));
    }
    // NaN and inf go through the fused kernels as through the unfused ones.
    let mut special = xs.clone();
    special[5] = f64::NAN;
    special[70_000] = f64::INFINITY;
    special[70_001] = f64::NEG_INFINITY;
    let x = Tensor::from_vec(special, &[n]).unwrap();
    let got = vals(&fused.run(std::slice::from_ref(&x)).unwrap()[0]);
    let want = vals(&traced.graph.run(std::slice::from_ref(&x)).unwrap()[0]);
    for (a, b) in got.iter().zip(&want) {
        assert!(a == b || (a.is_nan() && b.is_nan()));
    }
    // Under a tape the chain runs op by op, so the gradient is the eager one.
    let tape = crate::GradientTape::new();
    let x = t(&[0.3, -1.2]);
    tape.watch(&x);
    let y = {
        let _rec = tape.enter();
        fused.run(std::slice::from_ref(&x)).unwrap().remove(0)
    };
    let g = vals(&tape.gradient1(&y, &x).unwrap().unwrap());
    for (gi, xi) in g.iter().zip([0.3f64, -1.2]) {
        let m = xi.sin() * xi;
        let expect = 0.5 * (m.exp() * (xi.cos() * xi + xi.sin()) + 1.0);
        assert!((gi - expect).abs() < 1e-14);
    }
}
