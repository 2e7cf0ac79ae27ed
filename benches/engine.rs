//! Criterion benchmarks of the engine with no Python: elementwise kernels, GEMM, and
//! the tape's recording and backward cost per op.
//!
//! ```text
//! cargo bench --bench engine                 # everything
//! cargo bench --bench engine -- record       # one group
//! ```

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gradtape::{ops, GradientTape, Tensor};
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

criterion_group!(benches, elementwise, matmul, tape);
criterion_main!(benches);
