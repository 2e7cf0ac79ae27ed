//! Helpers shared by the integration tests: deterministic sampling of f64 tensors
//! inside an op's domain, and a numeric VJP checker (central differences) that uses
//! only the public API.
//!
//! First order: with a random output projection `v` and input direction `u`,
//! `Σ_i <VJP_i(v), u_i>` must equal `(L(x + εu) - L(x - εu)) / 2ε`, `L(x) = <v, f(x)>`.
//! Second order: the same check on `S(x) = Σ_i <VJP_i(v), w_i>`, whose gradient comes
//! from an outer tape that recorded the inner backward pass.
#![allow(dead_code)]

use gradtape::{ops, GradientTape, Source, Tensor, UnconnectedGradients};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// An op under test, over its inputs.
pub type OpFn = fn(&[Tensor]) -> gradtape::Result<Tensor>;
/// One value inside an op's domain.
pub type Sampler = fn(&mut StdRng) -> f64;

/// Relative and absolute tolerance.
#[derive(Clone, Copy, Debug)]
pub struct Tol {
    pub rtol: f64,
    pub atol: f64,
}

/// Tolerance of analytic against numeric directional derivatives (float64).
pub const GRAD_TOL: Tol = Tol {
    rtol: 1e-6,
    atol: 1e-7,
};
/// Central-difference step.
pub const EPS: f64 = 1e-6;

/// A generator seeded from a name, so every case has its own fixed inputs.
pub fn rng(key: &str) -> StdRng {
    // FNV-1a: stable across runs and platforms.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    StdRng::seed_from_u64(h)
}

pub fn normal(r: &mut StdRng) -> f64 {
    r.random_range(-1.5..1.5)
}
pub fn positive(r: &mut StdRng) -> f64 {
    r.random_range(0.5..2.0)
}
pub fn unit_open(r: &mut StdRng) -> f64 {
    r.random_range(-0.9..0.9)
}
/// `|x|` in [0.3, 1.5] with a random sign: away from kinks at 0.
pub fn away0(r: &mut StdRng) -> f64 {
    let m = r.random_range(0.3..1.5);
    if r.random_bool(0.5) {
        m
    } else {
        -m
    }
}
/// Multiples of 0.5 plus noise; never within 0.05 of a `grid_offset` value.
pub fn grid(r: &mut StdRng) -> f64 {
    0.5 * r.random_range(-3i32..4) as f64 + r.random_range(-0.1..0.1)
}
pub fn grid_offset(r: &mut StdRng) -> f64 {
    grid(r) + 0.25
}
/// Odd integers ± 0.4: divided by `mod_denominator`, never near an integer.
pub fn mod_numerator(r: &mut StdRng) -> f64 {
    2.0 * r.random_range(-2i32..3) as f64 + 1.0 + r.random_range(-0.4..0.4)
}
pub fn mod_denominator(r: &mut StdRng) -> f64 {
    r.random_range(1.95..2.05)
}

/// A float64 tensor of `shape` from `v`.
pub fn t64(v: Vec<f64>, shape: &[usize]) -> Tensor {
    Tensor::from_vec(v, shape).expect("length matches shape")
}

/// A float64 tensor of `shape` drawn from `s`.
pub fn sample(r: &mut StdRng, shape: &[usize], s: Sampler) -> Tensor {
    let n = shape.iter().product();
    t64((0..n).map(|_| s(r)).collect(), shape)
}

/// Values of `shape` with no ties, at least 0.2 apart and away from 0 (max/min).
pub fn distinct(r: &mut StdRng, shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let mut idx: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        idx.swap(i, r.random_range(0..=i));
    }
    let v = idx
        .into_iter()
        .map(|k| {
            let v = (k as f64 - n as f64 / 2.0 + 0.5) * 0.3 + r.random_range(-0.05..0.05);
            if v.abs() < 0.1 {
                v + 0.17
            } else {
                v
            }
        })
        .collect();
    t64(v, shape)
}

pub fn values(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>().expect("a float64 tensor")
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(p, q)| p * q).sum()
}

/// `x + a u`, computed outside any tape.
fn axpy(x: &Tensor, a: f64, u: &Tensor) -> Tensor {
    let v = values(x)
        .iter()
        .zip(values(u))
        .map(|(p, q)| p + a * q)
        .collect();
    t64(v, x.shape())
}

fn gaussian_like(r: &mut StdRng, shape: &[usize]) -> Tensor {
    // Sum of uniforms: a cheap, bounded stand-in for a normal draw.
    let n = shape.iter().product();
    t64(
        (0..n)
            .map(|_| (0..3).map(|_| r.random_range(-1.0..1.0)).sum::<f64>())
            .collect(),
        shape,
    )
}

/// Gradients of `<v, f(xs)>` w.r.t. each input (zeros where unconnected). Records
/// on any tape that is recording when it is called.
pub fn vjp(f: OpFn, xs: &[Tensor], v: &Tensor) -> gradtape::Result<Vec<Tensor>> {
    let tape = GradientTape::new();
    let y = {
        let _r = tape.enter();
        for x in xs {
            tape.watch(x);
        }
        f(xs)?
    };
    assert_eq!(y.shape(), v.shape(), "projection has the output's shape");
    let sources: Vec<Source<'_>> = xs.iter().map(Source::Tensor).collect();
    let gs = tape.gradient(
        &[y],
        &sources,
        Some(&[Some(v.clone())]),
        UnconnectedGradients::Zero,
    )?;
    Ok(gs
        .into_iter()
        .map(|g| g.expect("zeros for unconnected sources"))
        .collect())
}

fn close(analytic: f64, numeric: f64, tol: Tol) -> bool {
    (analytic - numeric).abs() <= tol.atol + tol.rtol * analytic.abs().max(numeric.abs())
}

fn directional_fd(
    s: &dyn Fn(&[Tensor]) -> gradtape::Result<f64>,
    xs: &[Tensor],
    us: &[Tensor],
    eps: f64,
) -> gradtape::Result<f64> {
    let plus: Vec<Tensor> = xs.iter().zip(us).map(|(x, u)| axpy(x, eps, u)).collect();
    let minus: Vec<Tensor> = xs.iter().zip(us).map(|(x, u)| axpy(x, -eps, u)).collect();
    Ok((s(&plus)? - s(&minus)?) / (2.0 * eps))
}

/// Checks `f`'s VJP at `xs` against central differences, to `order` (1 or 2).
/// Returns a description of the first mismatch.
pub fn check(f: OpFn, xs: &[Tensor], order: u8, key: &str) -> Result<(), String> {
    let err = |e: gradtape::Error| format!("error: {e}");
    let mut r = rng(key);
    let y = f(xs).map_err(err)?;
    let v = gaussian_like(&mut r, y.shape());
    let us: Vec<Tensor> = xs
        .iter()
        .map(|x| gaussian_like(&mut r, x.shape()))
        .collect();
    let ws: Vec<Tensor> = xs
        .iter()
        .map(|x| gaussian_like(&mut r, x.shape()))
        .collect();

    // First order.
    let gs = vjp(f, xs, &v).map_err(err)?;
    for (g, x) in gs.iter().zip(xs) {
        if g.shape() != x.shape() || g.dtype() != x.dtype() {
            return Err(format!(
                "gradient {:?} {:?} for input {:?} {:?}",
                g.shape(),
                g.dtype(),
                x.shape(),
                x.dtype()
            ));
        }
    }
    let analytic: f64 = gs
        .iter()
        .zip(&us)
        .map(|(g, u)| dot(&values(g), &values(u)))
        .sum();
    let loss = |z: &[Tensor]| -> gradtape::Result<f64> { Ok(dot(&values(&f(z)?), &values(&v))) };
    let numeric = directional_fd(&loss, xs, &us, EPS).map_err(err)?;
    if !close(analytic, numeric, GRAD_TOL) {
        return Err(format!(
            "first order: analytic {analytic} vs finite difference {numeric}"
        ));
    }
    if order < 2 {
        return Ok(());
    }

    // Second order: the inner backward pass is recorded by `outer`.
    let outer = GradientTape::new();
    let s = {
        let _o = outer.enter();
        for x in xs {
            outer.watch(x);
        }
        let gs = vjp(f, xs, &v).map_err(err)?;
        let mut s = Tensor::scalar(0.0f64);
        for (g, w) in gs.iter().zip(&ws) {
            let p =
                ops::reduce_sum(&ops::multiply(g, w).map_err(err)?, None, false).map_err(err)?;
            s = ops::add(&s, &p).map_err(err)?;
        }
        s
    };
    let sources: Vec<Source<'_>> = xs.iter().map(Source::Tensor).collect();
    let hs = outer
        .gradient(&[s], &sources, None, UnconnectedGradients::Zero)
        .map_err(err)?;
    let analytic: f64 = hs
        .iter()
        .zip(&us)
        .map(|(h, u)| dot(&values(h.as_ref().expect("zeros")), &values(u)))
        .sum();
    let proj = |z: &[Tensor]| -> gradtape::Result<f64> {
        let gs = vjp(f, z, &v)?;
        Ok(gs
            .iter()
            .zip(&ws)
            .map(|(g, w)| dot(&values(g), &values(w)))
            .sum())
    };
    let numeric = directional_fd(&proj, xs, &us, EPS).map_err(err)?;
    if !close(analytic, numeric, GRAD_TOL) {
        return Err(format!(
            "second order: analytic {analytic} vs finite difference {numeric}"
        ));
    }
    Ok(())
}
