//! The crate's finite-difference checker (`tests/common`) on compositions through the
//! public Rust API: complex ops through real-valued losses, and the checker's own
//! ability to catch a wrong first or second derivative.
//!
//! Per-op gradient checks are driven by one table, `tests/python/op_specs.py` (run by
//! `tests/python/test_gradcheck.py`); each family file in `src/ops/` also tests its
//! rules in Rust.

mod common;

use common::*;
use gradtape::ops;
use gradtape::Tensor;

/// One op under test: inputs are drawn per input with `samplers` (one sampler is
/// used for every input), or with no ties when `distinct`.
struct Row {
    name: &'static str,
    f: OpFn,
    shapes: Vec<Vec<Vec<usize>>>,
    samplers: Vec<Sampler>,
    distinct: bool,
    order: u8,
}

fn shapes(cases: &[&[&[usize]]]) -> Vec<Vec<Vec<usize>>> {
    cases
        .iter()
        .map(|c| c.iter().map(|s| s.to_vec()).collect())
        .collect()
}

fn row(name: &'static str, f: OpFn, cases: &[&[&[usize]]], samplers: &[Sampler]) -> Row {
    Row {
        name,
        f,
        shapes: shapes(cases),
        samplers: samplers.to_vec(),
        distinct: false,
        order: 2,
    }
}

fn run(rows: &[Row]) {
    let mut failures = Vec::new();
    let mut checked = 0;
    for r in rows {
        for (k, case) in r.shapes.iter().enumerate() {
            let key = format!("{}-{k}-{case:?}", r.name);
            let mut g = rng(&key);
            let xs: Vec<Tensor> = case
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    if r.distinct {
                        distinct(&mut g, s)
                    } else {
                        sample(&mut g, s, r.samplers[i.min(r.samplers.len() - 1)])
                    }
                })
                .collect();
            if let Err(e) = check(r.f, &xs, r.order, &key) {
                failures.push(format!("{key}: {e}"));
            }
            checked += 1;
        }
    }
    assert!(checked > 0);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn complex_through_real_losses() {
    const PAIRS: &[&[&[usize]]] = &[&[&[], &[]], &[&[3], &[3]], &[&[2, 3], &[3]]];
    fn re_im(z: &Tensor) -> gradtape::Result<Tensor> {
        let i2 = ops::multiply(&ops::imag(z)?, &Tensor::scalar(2.0f64))?;
        ops::add(&ops::real(z)?, &i2)
    }
    run(&[
        row(
            "complex_square",
            |x| re_im(&ops::square(&ops::complex(&x[0], &x[1])?)?),
            PAIRS,
            &[normal],
        ),
        row(
            "complex_abs",
            |x| ops::abs(&ops::complex(&x[0], &x[1])?),
            PAIRS,
            &[away0, normal],
        ),
        row(
            "angle",
            |x| ops::angle(&ops::complex(&x[0], &x[1])?),
            PAIRS,
            &[positive, normal],
        ),
        row(
            "complex_exp",
            |x| re_im(&ops::exp(&ops::complex(&x[0], &x[1])?)?),
            PAIRS,
            &[normal],
        ),
        row(
            "complex_log",
            |x| re_im(&ops::log(&ops::complex(&x[0], &x[1])?)?),
            PAIRS,
            &[positive, normal],
        ),
        row(
            "complex_conj_mul",
            |x| {
                let z = ops::complex(&x[0], &x[1])?;
                re_im(&ops::multiply(&ops::conj(&z)?, &ops::sin(&z)?)?)
            },
            PAIRS,
            &[normal],
        ),
        row(
            "complex_div",
            |x| {
                re_im(&ops::divide(
                    &ops::complex(&x[0], &x[1])?,
                    &ops::complex(&x[1], &x[0])?,
                )?)
            },
            PAIRS,
            &[positive],
        ),
    ]);
}

/// The checker itself must reject a wrong gradient and a non-differentiable VJP.
#[test]
fn checker_catches_wrong_gradients() {
    let mut g = rng("checker");
    let x = [sample(&mut g, &[3], normal)];
    // Value sin(x), gradient cos(x) * x / x... but with x's own gradient stopped.
    let wrong: OpFn = |x| {
        ops::multiply(
            &ops::sin(&x[0])?,
            &ops::divide(&ops::stop_gradient(&x[0])?, &x[0])?,
        )
    };
    assert!(check(wrong, &x, 1, "wrong")
        .unwrap_err()
        .contains("first order"));
    // Right first derivative, but built from a constant: the second order is wrong.
    let frozen: OpFn = |x| {
        let s = ops::stop_gradient(&x[0])?;
        let lin = ops::multiply(
            &ops::subtract(&x[0], &s)?,
            &ops::stop_gradient(&ops::cos(&x[0])?)?,
        )?;
        ops::add(&ops::sin(&s)?, &lin)
    };
    assert!(check(frozen, &x, 1, "frozen").is_ok());
    assert!(check(frozen, &x, 2, "frozen")
        .unwrap_err()
        .contains("second order"));
}
