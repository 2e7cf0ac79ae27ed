//! Every core differentiable op against central finite differences, first and second
//! order, in float64, through the public API only. The Python twin is
//! `tests/python/test_gradcheck.py`; this table covers the Rust ops without Python.

mod common;

use common::*;
use gradtape::ops::{self, Index};
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

const UNARY: &[&[&[usize]]] = &[&[&[]], &[&[3]], &[&[2, 3]], &[&[1, 3, 1]], &[&[0]]];
const BINARY: &[&[&[usize]]] = &[
    &[&[], &[]],
    &[&[3], &[3]],
    &[&[2, 3], &[3]],
    &[&[3, 1], &[1, 4]],
    &[&[2, 1, 3], &[4, 1]],
    &[&[], &[2, 3]],
    &[&[0, 3], &[3]],
];

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

fn unary(name: &'static str, f: OpFn, s: Sampler) -> Row {
    row(name, f, UNARY, &[s])
}

fn binary(name: &'static str, f: OpFn, s: &[Sampler]) -> Row {
    row(name, f, BINARY, s)
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
fn unary_math() {
    run(&[
        unary("neg", |x| ops::neg(&x[0]), normal),
        unary("identity", |x| ops::identity(&x[0]), normal),
        unary("abs", |x| ops::abs(&x[0]), away0),
        unary("sign", |x| ops::sign(&x[0]), away0),
        unary("square", |x| ops::square(&x[0]), normal),
        unary("sqrt", |x| ops::sqrt(&x[0]), positive),
        unary("rsqrt", |x| ops::rsqrt(&x[0]), positive),
        unary("reciprocal", |x| ops::reciprocal(&x[0]), positive),
        unary("exp", |x| ops::exp(&x[0]), normal),
        unary("expm1", |x| ops::expm1(&x[0]), normal),
        unary("log", |x| ops::log(&x[0]), positive),
        unary("log1p", |x| ops::log1p(&x[0]), positive),
        unary("sin", |x| ops::sin(&x[0]), normal),
        unary("cos", |x| ops::cos(&x[0]), normal),
        unary("tan", |x| ops::tan(&x[0]), unit_open),
        unary("asin", |x| ops::asin(&x[0]), unit_open),
        unary("acos", |x| ops::acos(&x[0]), unit_open),
        unary("atan", |x| ops::atan(&x[0]), normal),
        unary("sinh", |x| ops::sinh(&x[0]), normal),
        unary("cosh", |x| ops::cosh(&x[0]), normal),
        unary("tanh", |x| ops::tanh(&x[0]), normal),
        unary("sigmoid", |x| ops::sigmoid(&x[0]), normal),
        unary("erf", |x| ops::erf(&x[0]), normal),
        unary("relu", |x| ops::relu(&x[0]), away0),
        unary("elu", |x| ops::elu(&x[0]), away0),
        unary("softplus", |x| ops::softplus(&x[0]), normal),
        unary("softsign", |x| ops::softsign(&x[0]), away0),
    ]);
}

#[test]
fn binary_arithmetic_with_broadcasting() {
    run(&[
        binary("add", |x| ops::add(&x[0], &x[1]), &[normal]),
        binary("subtract", |x| ops::subtract(&x[0], &x[1]), &[normal]),
        binary("multiply", |x| ops::multiply(&x[0], &x[1]), &[normal]),
        binary("divide", |x| ops::divide(&x[0], &x[1]), &[normal, away0]),
        binary("pow", |x| ops::pow(&x[0], &x[1]), &[positive, normal]),
        binary(
            "maximum",
            |x| ops::maximum(&x[0], &x[1]),
            &[grid, grid_offset],
        ),
        binary(
            "minimum",
            |x| ops::minimum(&x[0], &x[1]),
            &[grid, grid_offset],
        ),
        binary(
            "squared_difference",
            |x| ops::squared_difference(&x[0], &x[1]),
            &[normal],
        ),
        binary("atan2", |x| ops::atan2(&x[0], &x[1]), &[away0, normal]),
        binary(
            "floormod",
            |x| ops::floormod(&x[0], &x[1]),
            &[mod_numerator, mod_denominator],
        ),
        binary(
            "where",
            |x| {
                let c = ops::greater(
                    &ops::cos(&ops::range(0.0, 24.0, 1.0, gradtape::DType::F64)?)?,
                    &Tensor::scalar(0.0f64),
                )?;
                let shape =
                    gradtape::broadcast::broadcast_shapes("Where", x[0].shape(), x[1].shape())?;
                let n: usize = shape.iter().product();
                let c = ops::reshape(
                    &ops::strided_slice(
                        &c,
                        &[Index::Slice {
                            start: None,
                            stop: Some(n as isize),
                            step: 1,
                        }],
                    )?,
                    &shape,
                )?;
                ops::where_(&c, &x[0], &x[1])
            },
            &[normal],
        ),
    ]);
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

#[test]
fn reductions_and_scans() {
    const R: &[&[&[usize]]] = &[&[&[3]], &[&[2, 3]], &[&[2, 1, 3]]];
    const M: &[&[&[usize]]] = &[&[&[2, 3]], &[&[2, 1, 3]]];
    let mut rows = vec![
        row(
            "reduce_sum",
            |x| ops::reduce_sum(&x[0], None, false),
            UNARY,
            &[normal],
        ),
        row(
            "reduce_sum_axis0",
            |x| ops::reduce_sum(&x[0], Some(&[0]), false),
            R,
            &[normal],
        ),
        row(
            "reduce_sum_keep",
            |x| ops::reduce_sum(&x[0], Some(&[-1, 0]), true),
            M,
            &[normal],
        ),
        row(
            "reduce_mean",
            |x| ops::reduce_mean(&x[0], None, false),
            R,
            &[normal],
        ),
        row(
            "reduce_mean_axis",
            |x| ops::reduce_mean(&x[0], Some(&[-1]), true),
            M,
            &[normal],
        ),
        row(
            "reduce_prod",
            |x| ops::reduce_prod(&x[0], None, false),
            R,
            &[away0],
        ),
        row(
            "reduce_prod_axis",
            |x| ops::reduce_prod(&x[0], Some(&[1]), false),
            M,
            &[away0],
        ),
        row(
            "cumsum",
            |x| ops::cumsum(&x[0], 1, false, false),
            M,
            &[normal],
        ),
        row(
            "cumsum_excl_rev",
            |x| ops::cumsum(&x[0], -1, true, true),
            M,
            &[normal],
        ),
        row(
            "cumprod",
            |x| ops::cumprod(&x[0], 0, false, false),
            M,
            &[away0],
        ),
        row(
            "cumprod_excl_rev",
            |x| ops::cumprod(&x[0], -1, true, true),
            M,
            &[away0],
        ),
    ];
    for mut r in [
        row(
            "reduce_max",
            |x| ops::reduce_max(&x[0], None, false),
            R,
            &[normal],
        ),
        row(
            "reduce_max_axis",
            |x| ops::reduce_max(&x[0], Some(&[-1]), true),
            M,
            &[normal],
        ),
        row(
            "reduce_min",
            |x| ops::reduce_min(&x[0], None, false),
            R,
            &[normal],
        ),
        row(
            "reduce_min_axis",
            |x| ops::reduce_min(&x[0], Some(&[0]), false),
            M,
            &[normal],
        ),
    ] {
        r.distinct = true;
        rows.push(r);
    }
    run(&rows);
}

#[test]
fn shapes_and_indexing() {
    const M: &[&[&[usize]]] = &[&[&[2, 3]]];
    const C: &[&[&[usize]]] = &[&[&[2, 3, 4]]];
    run(&[
        row("reshape", |x| ops::reshape(&x[0], &[3, 2]), M, &[normal]),
        row(
            "reshape_infer",
            |x| ops::reshape_infer(&x[0], &[-1, 2]),
            C,
            &[normal],
        ),
        row("transpose", |x| ops::transpose(&x[0], None), C, &[normal]),
        row(
            "transpose_perm",
            |x| ops::transpose(&x[0], Some(&[1, 2, 0])),
            C,
            &[normal],
        ),
        row(
            "expand_dims",
            |x| ops::expand_dims(&x[0], -1),
            UNARY,
            &[normal],
        ),
        row(
            "squeeze",
            |x| ops::squeeze(&x[0], None),
            &[&[&[1, 3, 1]], &[&[1]]],
            &[normal],
        ),
        row(
            "squeeze_axis",
            |x| ops::squeeze(&x[0], Some(&[0])),
            &[&[&[1, 3, 1]]],
            &[normal],
        ),
        row(
            "broadcast_to",
            |x| ops::broadcast_to(&x[0], &[4, 2, 3]),
            &[&[&[]], &[&[3]], &[&[2, 1]], &[&[1, 2, 3]]],
            &[normal],
        ),
        row(
            "slice_int",
            |x| ops::strided_slice(&x[0], &[Index::Int(-1)]),
            M,
            &[normal],
        ),
        row(
            "slice_neg_step",
            |x| {
                ops::strided_slice(
                    &x[0],
                    &[
                        Index::Slice {
                            start: None,
                            stop: None,
                            step: -1,
                        },
                        Index::Slice {
                            start: Some(1),
                            stop: None,
                            step: 1,
                        },
                    ],
                )
            },
            M,
            &[normal],
        ),
        row(
            "slice_step2_rev",
            |x| {
                ops::strided_slice(
                    &x[0],
                    &[
                        Index::Ellipsis,
                        Index::Slice {
                            start: Some(-1),
                            stop: None,
                            step: -2,
                        },
                    ],
                )
            },
            C,
            &[normal],
        ),
        row(
            "slice_newaxis",
            |x| {
                ops::strided_slice(
                    &x[0],
                    &[
                        Index::NewAxis,
                        Index::Int(1),
                        Index::Ellipsis,
                        Index::NewAxis,
                    ],
                )
            },
            C,
            &[normal],
        ),
        row(
            "slice_empty",
            |x| {
                ops::strided_slice(
                    &x[0],
                    &[Index::Slice {
                        start: Some(5),
                        stop: None,
                        step: 1,
                    }],
                )
            },
            M,
            &[normal],
        ),
    ]);
}

#[test]
fn matmul_plain_batched_and_transposed() {
    run(&[
        row(
            "matmul",
            |x| ops::matmul(&x[0], &x[1]),
            &[
                &[&[2, 3], &[3, 4]],
                &[&[2, 2, 3], &[3, 4]],
                &[&[1, 2, 3], &[2, 3, 2]],
                &[&[0, 3], &[3, 2]],
            ],
            &[normal],
        ),
        row(
            "matmul_ta",
            |x| ops::matmul_t(&x[0], &x[1], true, false),
            &[&[&[3, 2], &[3, 4]]],
            &[normal],
        ),
        row(
            "matmul_tb",
            |x| ops::matmul_t(&x[0], &x[1], false, true),
            &[&[&[2, 3], &[2, 4, 3]]],
            &[normal],
        ),
        row(
            "matmul_tab",
            |x| ops::matmul_t(&x[0], &x[1], true, true),
            &[&[&[2, 3, 2], &[4, 3]]],
            &[normal],
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
