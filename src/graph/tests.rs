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

#[test]
fn a_chain_summed_whole_is_one_node_with_the_unfused_sum_and_gradient() {
    // reduce_sum(exp(sin(x) * x) + x): the chain and the sum one node.
    let n = 50_001;
    let xs: Vec<f64> = (0..n).map(|i| (i as f64 * 0.61).cos() * 1.5).collect();
    let x = Tensor::from_vec(xs, &[n]).unwrap();
    let traced = trace(std::slice::from_ref(&x), vec![Spec::of(&x)], |a| {
        let s = traced_unary("Sin", ops::sin, &a[0])?;
        let m = traced_binary("Mul", ops::multiply, &s, &a[0])?;
        let e = traced_unary("Exp", ops::exp, &m)?;
        let y = traced_binary("AddV2", ops::add, &e, &a[0])?;
        Ok(vec![op("Sum", "None,false", &[&y], |t| {
            ops::reduce_sum(&t[0], None, false)
        })?])
    })
    .unwrap();
    let fused = traced.graph.optimize().unwrap();
    assert_eq!(
        fused.op_counts(),
        vec![("Fused[Sin,Mul,Exp,AddV2,Sum]".to_string(), 1)]
    );
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1.0);
    let got = vals(&fused.run(std::slice::from_ref(&x)).unwrap()[0]);
    let want = vals(&traced.graph.run(std::slice::from_ref(&x)).unwrap()[0]);
    assert_eq!(got.len(), 1);
    assert!(close(got[0], want[0]), "{got:?} vs {want:?}");
    // The gradient: computed with the sum in one tiled pass (a tape watches x), the
    // unfused ops' values; the sum that pass gives is the no-tape one, bit for bit.
    let grad = |g: &Graph, seed: f64| {
        let tape = crate::GradientTape::new();
        tape.watch(&x);
        let (y, z) = {
            let _rec = tape.enter();
            let y = g.run(std::slice::from_ref(&x)).unwrap().remove(0);
            let z = ops::multiply(&y, &Tensor::scalar(seed)).unwrap();
            (y, z)
        };
        (vals(&y)[0], vals(&tape.gradient1(&z, &x).unwrap().unwrap()))
    };
    let ((y1, g1), (_, g2)) = (grad(&fused, 1.0), grad(&traced.graph, 1.0));
    assert_eq!(y1.to_bits(), got[0].to_bits());
    assert!(g1.iter().zip(&g2).all(|(&a, &b)| close(a, b)));
    // Another seed scales the gradient.
    let (_, g3) = grad(&fused, 3.0);
    assert!(g3.iter().zip(&g1).all(|(&a, &b)| close(a, 3.0 * b)));
}

/// A chain through every compiled op: `x`, a broadcast single element `c` and a
/// full-size `w` as operands, `x` read by three steps.
fn long_chain(a: &[Tensor]) -> Result<Vec<Tensor>> {
    let (x, c, w) = (&a[0], &a[1], &a[2]);
    let u = traced_binary("Mul", ops::multiply, x, c)?;
    let u = traced_binary("AddV2", ops::add, &u, x)?;
    let u = traced_unary("Sin", ops::sin, &u)?;
    let u = traced_unary("Cos", ops::cos, &u)?;
    let u = traced_unary("Sqrt", ops::sqrt, &u)?;
    let u = traced_unary("Log", ops::log, &u)?;
    let u = traced_unary("Exp", ops::exp, &u)?;
    let u = traced_unary("Tanh", ops::tanh, &u)?;
    let u = traced_unary("Sigmoid", ops::sigmoid, &u)?;
    let u = traced_unary("Reciprocal", ops::reciprocal, &u)?;
    let u = traced_unary("Square", ops::square, &u)?;
    let u = traced_unary("Relu", ops::relu, &u)?;
    let u = traced_unary("Neg", ops::neg, &u)?;
    let u = traced_binary("Sub", ops::subtract, &u, x)?;
    let u = traced_binary("RealDiv", ops::divide, &u, c)?;
    let u = traced_binary("Mul", ops::multiply, &u, w)?;
    Ok(vec![u])
}

/// `(value, [d/dx, d/dc, d/dw], d²/dx² summed, tape nodes)` of `sum(graph(x, c, w))`:
/// the first derivatives with nothing recording the backward pass (fused rules), the
/// second through an outer tape (composed rules).
fn chain_derivatives(g: &Graph, xs: &[Tensor]) -> (Tensor, Vec<Tensor>, Tensor, usize) {
    let sources: Vec<crate::tape::Source<'_>> =
        xs.iter().map(crate::tape::Source::Tensor).collect();
    let forward = |tape: &crate::GradientTape, by_op: bool| {
        let _i = tape.enter();
        for x in xs {
            tape.watch(x);
        }
        let y = if by_op {
            tapes::with_frame(|| g.run_unchecked(xs))
        } else {
            g.run(xs)
        };
        ops::reduce_sum(&y.unwrap().remove(0), None, false).unwrap()
    };
    // Run op by op (a call would be one node), the tape's node count shows what fusion
    // did.
    let tape = crate::GradientTape::new();
    let y = forward(&tape, true);
    let nodes = tape.num_nodes();
    let grads: Vec<Tensor> = tape
        .gradient(
            std::slice::from_ref(&y),
            &sources,
            None,
            crate::tape::UnconnectedGradients::Zero,
        )
        .unwrap()
        .into_iter()
        .map(|g| g.unwrap())
        .collect();
    let outer = crate::GradientTape::new();
    let gx = {
        let _o = outer.enter();
        outer.watch(&xs[0]);
        let inner = crate::GradientTape::new();
        let y = forward(&inner, false);
        let gx = inner.gradient1(&y, &xs[0]).unwrap().unwrap();
        ops::reduce_sum(&gx, None, false).unwrap()
    };
    let hxx = outer.gradient1(&gx, &xs[0]).unwrap().unwrap();
    (y, grads, hxx, nodes)
}

fn close_all(got: &Tensor, want: &Tensor, tol: f64) {
    let (g, w) = (
        got.to_vec::<f64>().unwrap_or_else(|_| {
            got.to_vec::<f32>()
                .unwrap()
                .iter()
                .map(|&v| v as f64)
                .collect()
        }),
        want.to_vec::<f64>().unwrap_or_else(|_| {
            want.to_vec::<f32>()
                .unwrap()
                .iter()
                .map(|&v| v as f64)
                .collect()
        }),
    );
    assert_eq!(g.len(), w.len());
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        assert!(
            (a - b).abs() <= tol * b.abs().max(1.0),
            "element {i}: {a} vs {b} (tolerance {tol})"
        );
    }
}

#[test]
fn a_compiled_chain_is_one_tape_node_with_the_eager_derivatives() {
    for (dtype, n, tol) in [
        (DType::F64, 7, 1e-13),
        (DType::F64, 40_000, 1e-13),
        (DType::F32, 40_000, 2e-5),
    ] {
        let cast = |v: Vec<f64>, shape: &[usize]| {
            ops::cast(&Tensor::from_vec(v, shape).unwrap(), dtype).unwrap()
        };
        let x = cast(
            (0..n).map(|i| ((i as f64) * 0.61).sin() * 1.5).collect(),
            &[n],
        );
        let c = cast(vec![0.75], &[]);
        let w = cast((0..n).map(|i| 1.0 + (i % 5) as f64 * 0.25).collect(), &[n]);
        let xs = [x, c, w];
        let specs: Vec<Spec> = xs.iter().map(Spec::of).collect();
        let traced = trace(&xs, specs, long_chain).unwrap();
        let fused = traced.graph.optimize().unwrap();
        assert_eq!(fused.nodes().len(), 1, "{:?}", fused.op_counts());
        let (y0, g0, h0, nodes0) = chain_derivatives(&traced.graph, &xs);
        let (y1, g1, h1, nodes1) = chain_derivatives(&fused, &xs);
        // One node for the chain (plus the sum) instead of one per op.
        assert_eq!((nodes0, nodes1), (17, 2));
        // Values: the ops' own kernels, bit for bit.
        assert_eq!(y0.to_vec::<f64>().ok(), y1.to_vec::<f64>().ok());
        close_all(&y1, &y0, tol);
        for (a, b) in g1.iter().zip(&g0) {
            assert_eq!(a.shape(), b.shape());
            close_all(a, b, tol);
        }
        // Second order: the rule's composed form, recorded by the outer tape.
        close_all(&h1, &h0, tol * 10.0);
    }
}

#[test]
fn a_compiled_chain_reading_one_tensor_twice_counts_both_uses() {
    // f(x, x) with the chain x*y + y: both operands are one tensor at run time.
    let x = t(&[0.5, -2.0, 3.0]);
    let traced = trace(
        &[x.clone(), x.clone()],
        vec![Spec::of(&x), Spec::of(&x)],
        |a| {
            let u = traced_binary("Mul", ops::multiply, &a[0], &a[1])?;
            Ok(vec![traced_unary("Exp", ops::exp, &u)?])
        },
    )
    .unwrap();
    let fused = traced.graph.optimize().unwrap();
    assert_eq!(fused.nodes().len(), 1);
    for second_order in [false, true] {
        let outer = crate::GradientTape::new();
        let tape = crate::GradientTape::new();
        let g = {
            let _o = second_order.then(|| outer.enter());
            outer.watch(&x);
            let y = {
                let _r = tape.enter();
                tape.watch(&x);
                fused.run(&[x.clone(), x.clone()]).unwrap().remove(0)
            };
            tape.gradient1(&y, &x).unwrap().unwrap()
        };
        // d/dx exp(x²) = 2x exp(x²)
        for (gi, xi) in vals(&g).iter().zip([0.5f64, -2.0, 3.0]) {
            let want = 2.0 * xi * (xi * xi).exp();
            assert!((gi - want).abs() <= 1e-12 * want.abs(), "{gi} vs {want}");
        }
    }
}

#[test]
fn a_compiled_chain_broadcasts_rows_and_single_elements() {
    // tanh(relu(x + b) * s) with x [50, 70], a bias row b [70] and s [1, 1].
    let (rows, cols) = (50, 70);
    let x = Tensor::from_vec(
        (0..rows * cols)
            .map(|i| ((i as f64) * 0.37).sin())
            .collect(),
        &[rows, cols],
    )
    .unwrap();
    let b = Tensor::from_vec(
        (0..cols).map(|i| (i as f64) * 0.01 - 0.3).collect(),
        &[cols],
    )
    .unwrap();
    let s = Tensor::from_vec(vec![1.5], &[1, 1]).unwrap();
    let xs = [x, b, s];
    let specs: Vec<Spec> = xs.iter().map(Spec::of).collect();
    let traced = trace(&xs, specs, |a| {
        let u = traced_binary("AddV2", ops::add, &a[0], &a[1])?;
        let u = traced_unary("Relu", ops::relu, &u)?;
        let u = traced_binary("Mul", ops::multiply, &u, &a[2])?;
        Ok(vec![traced_unary("Tanh", ops::tanh, &u)?])
    })
    .unwrap();
    let fused = traced.graph.optimize().unwrap();
    assert_eq!(fused.nodes().len(), 1);
    let run = |g: &Graph| {
        // Op by op (see `chain_derivatives`).
        let tape = crate::GradientTape::new();
        let y = {
            let _r = tape.enter();
            for x in &xs {
                tape.watch(x);
            }
            tapes::with_frame(|| g.run_unchecked(&xs))
                .unwrap()
                .remove(0)
        };
        let nodes = tape.num_nodes();
        let sources: Vec<crate::tape::Source<'_>> =
            xs.iter().map(crate::tape::Source::Tensor).collect();
        let grads = tape
            .gradient(
                std::slice::from_ref(&y),
                &sources,
                None,
                crate::tape::UnconnectedGradients::Zero,
            )
            .unwrap();
        (y, grads, nodes)
    };
    let (y0, g0, n0) = run(&traced.graph);
    let (y1, g1, n1) = run(&fused);
    assert_eq!((n0, n1), (4, 1));
    assert_eq!(vals(&y0), vals(&y1));
    for (a, b) in g1.iter().zip(&g0) {
        let (a, b) = (a.as_ref().unwrap(), b.as_ref().unwrap());
        assert_eq!(a.shape(), b.shape());
        close_all(a, b, 1e-13);
    }
}

#[test]
fn a_run_drops_each_value_after_its_last_reader_and_keeps_outputs() {
    let x = t(&[0.5, 1.0]);
    let spec = Spec::of(&x);
    let traced = trace(std::slice::from_ref(&x), vec![spec], |a| {
        let e1 = traced_exp(&a[0])?;
        let e2 = traced_exp(&e1)?;
        let unused = traced_exp(&e2)?;
        let _ = unused;
        let m = traced_mul(&e2, &e1)?;
        Ok(vec![m, e1])
    })
    .unwrap();
    let g = &traced.graph;
    assert_eq!(g.nodes().len(), 4);
    let reads = g.last_reads();
    // e1 is an output (kept); e2 is read last by the mul; the unused exp's output is
    // dropped as soon as it is made; the mul's output is an output.
    assert_eq!(reads[0], vec![]);
    assert_eq!(reads[1], vec![]);
    assert_eq!(reads[2], vec![(2, 0)]);
    assert_eq!(reads[3], vec![(1, 0)]);
    let out = g.run(&[t(&[0.0, 1.0])]).unwrap();
    let e = 1f64.exp();
    assert_eq!(vals(&out[1]), vec![1.0, e]);
    assert_eq!(vals(&out[0]), vec![1f64.exp(), e.exp() * e]);
}

#[test]
fn a_run_under_one_tape_is_one_node_with_the_op_by_op_gradients() {
    let (traced, xs) = sin_xw_plus_x();
    let run = |tape: &crate::GradientTape, graph: bool| {
        let y = {
            let _r = tape.enter();
            for x in &xs {
                tape.watch(x);
            }
            if graph {
                traced.graph.run(&xs).unwrap().remove(0)
            } else {
                let u = ops::sin(&ops::multiply(&xs[0], &xs[1]).unwrap()).unwrap();
                ops::add(&u, &xs[0]).unwrap()
            }
        };
        let nodes = tape.num_nodes();
        let sources: Vec<crate::tape::Source<'_>> =
            xs.iter().map(crate::tape::Source::Tensor).collect();
        let grads = tape
            .gradient(
                std::slice::from_ref(&y),
                &sources,
                None,
                crate::tape::UnconnectedGradients::Zero,
            )
            .unwrap();
        let grads: Vec<Vec<f64>> = grads
            .into_iter()
            .map(|g| g.unwrap().to_vec::<f64>().unwrap())
            .collect();
        (y.to_vec::<f64>().unwrap(), grads, nodes)
    };
    let (y0, g0, n0) = run(&crate::GradientTape::new(), false);
    let (y1, g1, n1) = run(&crate::GradientTape::new(), true);
    let (y2, g2, n2) = run(&crate::GradientTape::persistent(), true);
    assert_eq!((n0, n1, n2), (3, 1, 1));
    assert_eq!((&y0, &g0), (&y1, &g1));
    assert_eq!((&y0, &g0), (&y2, &g2));
    // d/dx = cos(x w) w + 1, d/dw = cos(x w) x
    let (xv, wv): ([f64; 3], [f64; 3]) = ([0.5, -1.25, 2.0], [1.5, 0.25, -0.75]);
    for i in 0..3 {
        let c = (xv[i] * wv[i]).cos();
        assert!((g1[0][i] - (c * wv[i] + 1.0)).abs() < 1e-15);
        assert!((g1[1][i] - c * xv[i]).abs() < 1e-15);
    }
}

/// `sin(x w) + x`, traced, with its arguments.
fn sin_xw_plus_x() -> (Traced, [Tensor; 2]) {
    let x = Tensor::from_vec(vec![0.5, -1.25, 2.0], &[3]).unwrap();
    let w = Tensor::from_vec(vec![1.5, 0.25, -0.75], &[3]).unwrap();
    let xs = [x, w];
    let specs: Vec<Spec> = xs.iter().map(Spec::of).collect();
    let traced = trace(&xs, specs, |a| {
        let u = traced_binary("Mul", ops::multiply, &a[0], &a[1])?;
        let u = traced_unary("Sin", ops::sin, &u)?;
        Ok(vec![traced_binary("AddV2", ops::add, &u, &a[0])?])
    })
    .unwrap();
    (traced, xs)
}

#[test]
fn a_run_under_a_tape_that_differentiates_its_gradient_is_one_node_with_exact_second_derivatives() {
    use crate::tape::{GradientTape, Source, UnconnectedGradients::Zero};
    let (traced, xs) = sin_xw_plus_x();
    let eager =
        |x: &Tensor| -> Result<Tensor> { ops::add(&ops::sin(&ops::multiply(x, &xs[1])?)?, x) };
    let sum = |t: &Tensor| ops::reduce_sum(t, None, false).unwrap();
    let grad = |tape: &GradientTape, y: &Tensor| {
        tape.gradient(
            std::slice::from_ref(y),
            &[Source::Tensor(&xs[0])],
            None,
            Zero,
        )
        .unwrap()
        .remove(0)
        .unwrap()
    };
    // d/dx = cos(x w) w + 1; d/dx of its sum: -sin(x w) w².
    let want: Vec<f64> = (0..3)
        .map(|i| {
            let (x, w) = (vals(&xs[0])[i], vals(&xs[1])[i]);
            -(x * w).sin() * w * w
        })
        .collect();
    let close = |a: Vec<f64>, b: &[f64]| {
        for (a, b) in a.iter().zip(b) {
            assert!((a - b).abs() < 1e-14, "{a} vs {b}");
        }
    };
    // A persistent tape differentiates the gradient it computed in its context.
    for graph in [true, false] {
        let tape = GradientTape::persistent();
        let d2 = {
            let _r = tape.enter();
            tape.watch(&xs[0]);
            let y = if graph {
                traced.graph.run(&xs).unwrap().remove(0)
            } else {
                eager(&xs[0]).unwrap()
            };
            if graph {
                assert_eq!(tape.num_nodes(), 1);
            }
            let g = grad(&tape, &sum(&y));
            sum(&g)
        };
        close(vals(&grad(&tape, &d2)), &want);
    }
    // Nested tapes that both saw the call: one node on each.
    let outer = GradientTape::new();
    let d2 = {
        let _o = outer.enter();
        outer.watch(&xs[0]);
        let inner = GradientTape::new();
        let y = {
            let _i = inner.enter();
            inner.watch(&xs[0]);
            let y = traced.graph.run(&xs).unwrap().remove(0);
            assert_eq!((outer.num_nodes(), inner.num_nodes()), (1, 1));
            sum(&y)
        };
        sum(&grad(&inner, &y))
    };
    close(vals(&grad(&outer, &d2)), &want);
}

#[test]
fn a_trace_tells_sizes_that_follow_an_unknown_dimension() {
    let x = Tensor::from_vec(vec![1.0f64; 6], &[2, 3]).unwrap();
    let spec = Spec {
        dtype: DType::F64,
        shape: Some(vec![None, Some(3)]),
    };
    let w = Tensor::from_vec(vec![1.0f64; 12], &[3, 4]).unwrap();
    let mut seen = Vec::new();
    let traced = trace(std::slice::from_ref(&x), vec![spec.clone()], |a| {
        let y = op("MatMul", "", &[&a[0], &w], |v| ops::matmul(&v[0], &v[1]))?;
        let s = op("Sum", "0", &[&y], |v| {
            ops::reduce_sum(&v[0], Some(&[0]), false)
        })?;
        seen.push(static_shape(&a[0]));
        seen.push(static_shape(&y));
        seen.push(static_shape(&s));
        seen.push(static_shape(&w));
        Ok(vec![y])
    })
    .unwrap();
    use StaticShape::*;
    assert_eq!(
        seen,
        vec![
            Partial(Some(vec![None, Some(3)])),
            Partial(Some(vec![None, Some(4)])),
            Example,
            Example,
        ]
    );
    // Nothing read the example's sizes: the graph runs for any number of rows.
    assert!(!traced.graph.shape_dependent());
    let out = traced
        .graph
        .run(&[Tensor::from_vec(vec![1.0f64; 15], &[5, 3]).unwrap()]);
    assert_eq!(out.unwrap()[0].shape(), &[5, 4]);

    // A reshape to literal sizes fails on the other size: its shape is the example's,
    // and reading it makes the graph shape-dependent.
    let mut seen = Vec::new();
    let traced = trace(std::slice::from_ref(&x), vec![spec], |a| {
        let r = op("Reshape", "6", &[&a[0]], |v| ops::reshape(&v[0], &[6]))?;
        seen.push(static_shape(&r));
        Ok(vec![r])
    })
    .unwrap();
    assert_eq!(seen, vec![Example]);
    assert!(traced.graph.shape_dependent());
    // Outside a trace every tensor has its own shape.
    assert_eq!(static_shape(&x), Example);
}

#[test]
fn work_for_an_example_value_is_traced_into_a_dropped_graph() {
    let x = t(&[1.0, 2.0]);
    let traced = trace(std::slice::from_ref(&x), vec![Spec::of(&x)], |a| {
        let y = traced_exp(&a[0])?;
        // A tensor the trace did not see (made by a gradient sweep, say): an error in
        // the trace, a constant of a scratch trace, whose nodes belong to no graph.
        let unseen = ops::add(&y, &y)?;
        assert!(traced_exp(&unseen).is_err());
        let z = scratch(|| {
            assert!(is_tracing());
            traced_mul(&unseen, &a[0])
        })?;
        assert_eq!(vals(&z), vec![2.0 * 1f64.exp(), 4.0 * 2f64.exp()]);
        Ok(vec![y])
    })
    .unwrap();
    assert_eq!(traced.graph.nodes().len(), 1);
    assert!(!traced.graph.shape_dependent());
}
