//! Prints the time of `kernels::matmul::matmul2` (faer) against ndarray's `dot` and
//! of a batched engine matmul. Run with `cargo run --release --example matmul_timing`.

use std::time::Instant;

use gradtape::kernels::matmul::matmul2;
use ndarray::Array2;

fn time<F: FnMut()>(reps: usize, mut f: F) -> f64 {
    f();
    let t = Instant::now();
    for _ in 0..reps {
        f();
    }
    t.elapsed().as_secs_f64() / reps as f64
}

fn main() {
    for &(n, reps) in &[(4usize, 200_000usize), (64, 2_000), (256, 50), (1024, 3)] {
        let a = Array2::from_shape_fn((n, n), |(i, j)| ((i * 7 + j * 3) % 11) as f32 - 5.0);
        let b = Array2::from_shape_fn((n, n), |(i, j)| ((i * 5 + j) % 13) as f32 * 0.5);
        let faer = time(reps, || {
            std::hint::black_box(matmul2(a.view(), b.view()));
        });
        let nd = time(reps, || {
            std::hint::black_box(a.dot(&b));
        });
        let faer_t = time(reps, || {
            std::hint::black_box(matmul2(a.t(), b.t()));
        });
        println!(
            "f32 {n}x{n}: faer {:.3} us, faer transposed {:.3} us, ndarray dot {:.3} us",
            faer * 1e6,
            faer_t * 1e6,
            nd * 1e6
        );
    }
    let x = gradtape::ops::ones(&[512, 16, 16], gradtape::DType::F32);
    let t = time(200, || {
        std::hint::black_box(gradtape::ops::matmul(&x, &x).unwrap());
    });
    println!("batched f32 512x(16x16 @ 16x16): {:.3} us", t * 1e6);
}
