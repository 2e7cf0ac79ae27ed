//! Criterion benchmarks of the engine with no Python: elementwise kernels, GEMM, the
//! tape's recording and backward cost per op, and an optimizer step.
//!
//! ```text
//! cargo bench --bench engine                 # everything
//! cargo bench --bench engine -- record       # one group
//! ```

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gradtape::nn::{Adam, Optimizer};
use gradtape::{ops, GradientTape, Tensor, Variable};
use std::hint::black_box;

fn data(n: usize) -> Tensor {
    let v: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 2000) as f32 / 1000.0 - 1.0)
        .collect();
    Tensor::from_vec(v, &[n]).expect("valid shape")
}

fn elementwise(c: &mut Criterion) {
    let mut g = c.benchmark_group("elementwise");
    for n in [4usize, 4096, 1 << 20] {
        let x = data(n);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("add", n), &x, |b, x| {
            b.iter(|| ops::add(black_box(x), x).expect("add"))
        });
        g.bench_with_input(BenchmarkId::new("exp", n), &x, |b, x| {
            b.iter(|| ops::exp(black_box(x)).expect("exp"))
        });
        g.bench_with_input(BenchmarkId::new("sin", n), &x, |b, x| {
            b.iter(|| ops::sin(black_box(x)).expect("sin"))
        });
        g.bench_with_input(BenchmarkId::new("tanh", n), &x, |b, x| {
            b.iter(|| ops::tanh(black_box(x)).expect("tanh"))
        });
    }
    g.finish();
}

fn matmul(c: &mut Criterion) {
    let mut g = c.benchmark_group("matmul");
    g.sample_size(10);
    for n in [64usize, 256, 1024] {
        let a = ops::reshape(&data(n * n), &[n, n]).expect("reshape");
        g.throughput(Throughput::Elements((2 * n * n * n) as u64)); // flops
        g.bench_with_input(BenchmarkId::new("f32", n), &a, |b, a| {
            b.iter(|| ops::matmul(black_box(a), a).expect("matmul"))
        });
    }
    g.finish();
}

/// The tape's own cost: recording one small op, and the backward sweep per op.
fn tape(c: &mut Criterion) {
    const OPS: usize = 1000;
    let x = data(4);
    let k = data(4);
    let mut g = c.benchmark_group("tape");
    g.throughput(Throughput::Elements(OPS as u64));
    g.bench_function("record 1000 adds", |b| {
        b.iter(|| {
            let tape = GradientTape::new();
            let _recording = tape.enter();
            tape.watch(&x);
            let mut y = x.clone();
            for _ in 0..OPS {
                y = ops::add(&y, &k).expect("add");
            }
            y
        })
    });
    g.bench_function("backward of 1000 adds", |b| {
        b.iter_batched(
            || {
                let tape = GradientTape::new();
                let y = {
                    let _recording = tape.enter();
                    tape.watch(&x);
                    let mut y = x.clone();
                    for _ in 0..OPS {
                        y = ops::add(&y, &k).expect("add");
                    }
                    y
                };
                (tape, y)
            },
            |(tape, y)| tape.gradient1(&y, &x).expect("gradient"),
            criterion::BatchSize::SmallInput,
        )
    });
    g.finish();
}

criterion_group!(benches, elementwise, matmul, tape, optimizer);
criterion_main!(benches);

/// One Adam step over an MLP's variables (784-256-256-10, 270k parameters): the
/// crate's fused kernel against the same update as a chain of engine ops (what the
/// Python optimizers ran before), each op a pass over the data.
fn optimizer(c: &mut Criterion) {
    let shapes: [&[usize]; 6] = [&[784, 256], &[256], &[256, 256], &[256], &[256, 10], &[10]];
    let fresh = || -> Vec<(Tensor, Variable)> {
        shapes
            .iter()
            .map(|s| {
                let n = s.iter().product();
                let g = ops::reshape(&data(n), s).expect("reshape");
                let v = Variable::new(ops::reshape(&data(n), s).expect("reshape"), true, None);
                (g, v)
            })
            .collect()
    };
    let mut g = c.benchmark_group("optimizer");
    g.throughput(Throughput::Elements(
        shapes
            .iter()
            .map(|s| s.iter().product::<usize>() as u64)
            .sum(),
    ));
    let vars = fresh();
    let pairs: Vec<(Tensor, &Variable)> = vars.iter().map(|(g, v)| (g.clone(), v)).collect();
    let mut adam = Adam::new(1e-3);
    g.bench_function("adam_mlp/fused", |b| {
        b.iter(|| adam.apply_gradients(black_box(&pairs)).expect("step"))
    });
    let vars = fresh();
    let moments: Vec<(Variable, Variable)> = vars
        .iter()
        .map(|(g, _)| {
            let z = ops::zeros_like(g).expect("zeros");
            (
                Variable::new(z.clone(), false, None),
                Variable::new(z, false, None),
            )
        })
        .collect();
    let s = |x: f32| Tensor::scalar(x);
    g.bench_function("adam_mlp/op_chain", |b| {
        b.iter(|| {
            for ((grad, v), (m, vv)) in vars.iter().zip(&moments) {
                let (mv, vvv) = (m.value_unrecorded(), vv.value_unrecorded());
                let m1 = ops::add(&mv, &ops::mul(&ops::subtract(grad, &mv)?, &s(0.1))?)?;
                let sq = ops::mul(grad, grad)?;
                let v1 = ops::add(&vvv, &ops::mul(&ops::subtract(&sq, &vvv)?, &s(0.001))?)?;
                let den = ops::add(&ops::sqrt(&v1)?, &s(1e-7))?;
                v.assign_sub(&ops::divide(&ops::mul(&m1, &s(1e-3))?, &den)?)?;
                m.assign(&m1)?;
                vv.assign(&v1)?;
            }
            Ok::<(), gradtape::Error>(())
        })
    });
    g.finish();
}
