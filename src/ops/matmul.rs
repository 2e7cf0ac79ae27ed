//! Matrix products: matmul (with transposes and batch broadcasting), matvec, tensordot.

use super::{binary_out, grads, Grads, Op, VjpCx};
use crate::broadcast::norm_axis;
use crate::error::{Error, Result};
use crate::kernels::matmul::batched_matmul;
use crate::ops::{conj, reshape, transpose};
use crate::tensor::Tensor;

/// Matrix product of the last two axes, batch axes broadcast. `transpose_a/b`
/// transpose an operand first. TF equivalent: `tf.linalg.matmul` (`@`).
/// Gradient: `dy @ bᴴ` and `aᴴ @ dy` (with the transposes of TF's rule).
pub fn matmul_t(a: &Tensor, b: &Tensor, transpose_a: bool, transpose_b: bool) -> Result<Tensor> {
    let out = Tensor::new(
        map_pair!("MatMul", a.data(), b.data(), [F32, F64, I32, I64, C64, C128] via [F16], x, y => {
            batched_matmul(x, y, transpose_a, transpose_b)?
        }),
    );
    binary_out(
        MatMul {
            ta: transpose_a,
            tb: transpose_b,
        },
        a,
        b,
        out,
    )
}

/// `a @ b`. TF equivalent: `tf.linalg.matmul`.
pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    matmul_t(a, b, false, false)
}

struct MatMul {
    ta: bool,
    tb: bool,
}
impl Op for MatMul {
    fn jvp(&self, cx: &VjpCx<'_>, tangents: &[Option<Tensor>]) -> Option<Result<Grads>> {
        // Bilinear: d(a b) = da b + a db (with the same transposes).
        let go = || -> Result<Grads> {
            let mut out: Option<Tensor> = None;
            if let Some(ta) = &tangents[0] {
                out = Some(matmul_t(ta, cx.input(1)?, self.ta, self.tb)?);
            }
            if let Some(tb) = &tangents[1] {
                let p = matmul_t(cx.input(0)?, tb, self.ta, self.tb)?;
                out = Some(match out {
                    Some(o) => crate::ops::add(&o, &p)?,
                    None => p,
                });
            }
            Ok(grads![out])
        };
        Some(go())
    }
    fn batched(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "MatMul"
    }
    fn vjp(&self, cx: &VjpCx<'_>, dys: &[Tensor]) -> Result<Grads> {
        let dy = &dys[0];
        let a = conj(cx.input(0)?)?;
        let b = conj(cx.input(1)?)?;
        let (ga, gb) = match (self.ta, self.tb) {
            (false, false) => (
                cx.needs(0).then(|| matmul_t(dy, &b, false, true)),
                cx.needs(1).then(|| matmul_t(&a, dy, true, false)),
            ),
            (false, true) => (
                cx.needs(0).then(|| matmul_t(dy, &b, false, false)),
                cx.needs(1).then(|| matmul_t(dy, &a, true, false)),
            ),
            (true, false) => (
                cx.needs(0).then(|| matmul_t(&b, dy, false, true)),
                cx.needs(1).then(|| matmul_t(&a, dy, false, false)),
            ),
            (true, true) => (
                cx.needs(0).then(|| matmul_t(&b, dy, true, true)),
                cx.needs(1).then(|| matmul_t(dy, &a, true, true)),
            ),
        };
        Ok(grads![ga.transpose()?, gb.transpose()?])
    }
}

/// Which axes [`tensordot`] contracts.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum TensordotAxes {
    /// The last `n` axes of `a` with the first `n` of `b`.
    N(usize),
    /// These axes of `a` with these of `b`, pairwise.
    Pairs(Vec<isize>, Vec<isize>),
}

/// Tensor contraction. TF equivalent: `tf.tensordot`. Composed of transpose,
/// reshape and matmul, so its gradient is theirs.
pub fn tensordot(a: &Tensor, b: &Tensor, axes: &TensordotAxes) -> Result<Tensor> {
    let (ra, rb) = (a.ndim(), b.ndim());
    let (ax_a, ax_b): (Vec<usize>, Vec<usize>) = match axes {
        TensordotAxes::N(n) => {
            if *n > ra || *n > rb {
                return Err(Error::invalid(
                    "Tensordot",
                    format!("'axes' must be at most {}, got {n}", ra.min(rb)),
                ));
            }
            ((ra - n..ra).collect(), (0..*n).collect())
        }
        TensordotAxes::Pairs(p, q) => {
            if p.len() != q.len() {
                return Err(Error::invalid(
                    "Tensordot",
                    format!(
                        "Different number of contraction axes 'a' and 'b', {} != {}.",
                        p.len(),
                        q.len()
                    ),
                ));
            }
            (
                p.iter()
                    .map(|&i| norm_axis("Tensordot", i, ra))
                    .collect::<Result<_>>()?,
                q.iter()
                    .map(|&i| norm_axis("Tensordot", i, rb))
                    .collect::<Result<_>>()?,
            )
        }
    };
    for (&i, &j) in ax_a.iter().zip(&ax_b) {
        if a.shape()[i] != b.shape()[j] {
            return Err(Error::invalid(
                "Tensordot",
                format!(
                    "contracted dimensions differ: a.shape[{i}] = {} vs. b.shape[{j}] = {}",
                    a.shape()[i],
                    b.shape()[j]
                ),
            ));
        }
    }
    let free_a: Vec<usize> = (0..ra).filter(|i| !ax_a.contains(i)).collect();
    let free_b: Vec<usize> = (0..rb).filter(|i| !ax_b.contains(i)).collect();
    let prod = |t: &Tensor, ax: &[usize]| ax.iter().map(|&i| t.shape()[i]).product::<usize>();
    let pa: Vec<usize> = free_a.iter().chain(&ax_a).copied().collect();
    let pb: Vec<usize> = ax_b.iter().chain(&free_b).copied().collect();
    let a2 = reshape(
        &transpose(a, Some(&pa))?,
        &[prod(a, &free_a), prod(a, &ax_a)],
    )?;
    let b2 = reshape(
        &transpose(b, Some(&pb))?,
        &[prod(b, &ax_b), prod(b, &free_b)],
    )?;
    let m = crate::ops::matmul(&a2, &b2)?;
    let out_shape: Vec<usize> = free_a
        .iter()
        .map(|&i| a.shape()[i])
        .chain(free_b.iter().map(|&i| b.shape()[i]))
        .collect();
    reshape(&m, &out_shape)
}

/// Matrix-vector product over the last axes: `a [..., m, n]`, `b [..., n]`.
/// TF equivalent: `tf.linalg.matvec`.
pub fn matvec(a: &Tensor, b: &Tensor, transpose_a: bool, adjoint_a: bool) -> Result<Tensor> {
    if b.ndim() < 1 {
        return Err(Error::invalid(
            "MatVec",
            format!("b must have rank >= 1, got shape {:?}", b.shape()),
        ));
    }
    let a = if adjoint_a { conj(a)? } else { a.clone() };
    let y = matmul_t(
        &a,
        &crate::ops::expand_dims(b, -1)?,
        transpose_a || adjoint_a,
        false,
    )?;
    crate::ops::squeeze(&y, Some(&[-1]))
}

/// How this family's traced ops are saved in SavedModels (see `saved_model::table`).
pub(crate) mod saved {
    #[allow(unused_imports)]
    use crate::error::Result;
    #[allow(unused_imports)]
    use crate::graph::Forward;
    #[allow(unused_imports)]
    use crate::ops;
    #[allow(unused_imports)]
    use crate::saved_model::table::{
        ensure, get, get_dtype, get_f64, many_out, one_out, Attrs, OpDef,
    };
    #[allow(unused_imports)]
    use crate::tensor::Tensor;

    pub(crate) const SAVED: &[OpDef] = &[
        OpDef::new("MatVec", 2, &["transpose_a", "adjoint_a"], matvec),
        OpDef::new("Tensordot", 2, &["axes"], tensordot),
    ];

    fn matvec(a: &Attrs, _: usize) -> Result<Forward> {
        let (t, adj): (bool, bool) = (
            get("MatVec", a, "transpose_a")?,
            get("MatVec", a, "adjoint_a")?,
        );
        Ok(one_out(move |xs| ops::matvec(&xs[0], &xs[1], t, adj)))
    }

    fn tensordot(a: &Attrs, _: usize) -> Result<Forward> {
        let axes: ops::TensordotAxes = get("Tensordot", a, "axes")?;
        Ok(one_out(move |xs| ops::tensordot(&xs[0], &xs[1], &axes)))
    }
}

/// The Python functions of this family: bindings and where they appear (see
/// `src/ops/README.md`).
#[cfg(feature = "python")]
pub(super) mod python {
    use crate::python::binding::*;

    /// Matrix product of the last two axes (batch axes broadcast).
    /// TF equivalent: `tf.linalg.matmul` (`a @ b`).
    ///
    /// >>> import gradtape as gt
    /// >>> gt.linalg.matmul(gt.constant([[1.0, 2.0]]), gt.constant([[3.0], [4.0]])).numpy().tolist()
    /// [[11.0]]
    #[pyfunction]
    #[pyo3(signature = (a, b, transpose_a=false, transpose_b=false, adjoint_a=false, adjoint_b=false, name=None))]
    #[allow(clippy::too_many_arguments)]
    fn matmul(
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
        transpose_a: bool,
        transpose_b: bool,
        adjoint_a: bool,
        adjoint_b: bool,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let (x, y) = pair(a, b)?;
        let f = move |x: &Tensor, y: &Tensor| {
            let x = if adjoint_a { ops::conj(x)? } else { x.clone() };
            let y = if adjoint_b { ops::conj(y)? } else { y.clone() };
            ops::matmul_t(&x, &y, transpose_a || adjoint_a, transpose_b || adjoint_b)
        };
        let key = || format!("{transpose_a},{transpose_b},{adjoint_a},{adjoint_b}");
        Ok(call2(py, "BatchMatMulV2", key, &x, &y, f)?.into())
    }

    /// Matrix-vector product. TF equivalent: `tf.linalg.matvec`.
    ///
    /// >>> import gradtape as gt
    /// >>> gt.linalg.matvec(gt.constant([[1.0, 2.0], [3.0, 4.0]]), gt.constant([1.0, 1.0])).numpy().tolist()
    /// [3.0, 7.0]
    #[pyfunction]
    #[pyo3(signature = (a, b, transpose_a=false, adjoint_a=false, a_is_sparse=false, b_is_sparse=false, name=None))]
    #[allow(clippy::too_many_arguments)]
    fn matvec(
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
        transpose_a: bool,
        adjoint_a: bool,
        a_is_sparse: bool,
        b_is_sparse: bool,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = (name, a_is_sparse, b_is_sparse);
        let (x, y) = pair(a, b)?;
        let f = move |x: &Tensor, y: &Tensor| ops::matvec(x, y, transpose_a, adjoint_a);
        let key = || format!("{transpose_a},{adjoint_a}");
        Ok(call2(py, "MatVec", key, &x, &y, f)?.into())
    }

    fn axes_list(ob: &Bound<'_, PyAny>) -> PyResult<Vec<isize>> {
        if let Ok(i) = ob.extract::<isize>() {
            return Ok(vec![i]);
        }
        Ok(shape_arg(ob)?.into_iter().map(|v| v as isize).collect())
    }

    /// Sum of products over the given axes of ``a`` and ``b``: ``axes`` is an int (last axes of
    /// ``a`` with first axes of ``b``) or a pair of axis lists. TF equivalent:
    /// ``tf.tensordot``.
    ///
    /// >>> a = gt.constant([[1.0, 2.0], [3.0, 4.0]])
    /// >>> print(gt.tensordot(a, a, axes=1))
    /// gt.Tensor(
    /// [[ 7. 10.]
    ///  [15. 22.]], shape=(2, 2), dtype=float32)
    /// >>> print(gt.tensordot(a, a, axes=[[0, 1], [0, 1]]))
    /// gt.Tensor(30.0, shape=(), dtype=float32)
    #[pyfunction]
    #[pyo3(signature = (a, b, axes, name=None))]
    fn tensordot(
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
        axes: &Bound<'_, PyAny>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let _ = name;
        let (x, y) = crate::python::args::pair(a, b)?;
        let spec = if let Ok(n) = axes.extract::<i64>().or_else(|e| {
            // A scalar int tensor counts as an int (not a float one: no silent truncation).
            match as_tensor(axes).filter(|t| t.ndim() == 0) {
                Some(t) => t.to_i64_scalar().ok_or_else(|| {
                    PyTypeError::new_err("'axes' must be an int or a pair of lists of ints")
                }),
                None => Err(e),
            }
        }) {
            if n < 0 {
                return Err(PyValueError::new_err(format!(
                    "'axes' must be at least 0, got {n}"
                )));
            }
            ops::TensordotAxes::N(n as usize)
        } else if as_tensor(axes).is_some_and(|t| t.ndim() == 0) {
            return Err(PyTypeError::new_err(
                "'axes' must be an int or a pair of lists of ints",
            ));
        } else {
            let items: Vec<Bound<'_, PyAny>> = axes.try_iter()?.collect::<PyResult<_>>()?;
            if items.len() != 2 {
                return Err(PyValueError::new_err(
                    "'axes' must be an integer or have length 2",
                ));
            }
            ops::TensordotAxes::Pairs(axes_list(&items[0])?, axes_list(&items[1])?)
        };
        let key = || format!("{spec:?}");
        let owned = spec.clone();
        let f = move |x: &Tensor, y: &Tensor| ops::tensordot(x, y, &owned);
        Ok(call2(py, "Tensordot", key, &x, &y, f)?.into())
    }

    expose! {
        fn matmul in [gt, linalg]: "(a: TensorLike, b: TensorLike, transpose_a: _bool = False, transpose_b: _bool = False, adjoint_a: _bool = False, adjoint_b: _bool = False, name: str | None = None) -> Tensor";
        fn matvec in [linalg]: "(a: TensorLike, b: TensorLike, transpose_a: _bool = False, adjoint_a: _bool = False, a_is_sparse: _bool = False, b_is_sparse: _bool = False, name: str | None = None) -> Tensor";
        fn tensordot in [gt, linalg]: "(a: TensorLike, b: TensorLike, axes: int | Sequence[int | Sequence[int]] | Tensor, name: str | None = None) -> Tensor";
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testutil::{close, grad, t64, vals};

    #[test]
    fn batched_matmul_broadcasts_and_reads_strided_operands() {
        let a = t64(&(0..12).map(|v| v as f64).collect::<Vec<_>>(), &[2, 2, 3]);
        let b = t64(&[1.0, 0.0, 0.0, 1.0, 1.0, 1.0], &[3, 2]);
        let y = matmul(&a, &b).unwrap();
        assert_eq!(y.shape(), &[2, 2, 2]);
        close(&vals(&y), &[2.0, 3.0, 8.0, 9.0, 14.0, 15.0, 20.0, 21.0]);
        // transposed batch operand (non-contiguous) gives the same as a copy
        let at = crate::ops::transpose(&a, Some(&[0, 2, 1])).unwrap();
        let y2 = matmul_t(&at, &b, true, false).unwrap();
        close(&vals(&y2), &vals(&y));
    }

    #[test]
    fn one_matrix_times_a_batch_folds_the_batch_into_columns() {
        // `a` without batch axes, `b` batched and contiguous (matrices and vectors, with
        // every transpose): the folded GEMM equals the product entry by entry.
        let a = t64(&[1., -2., 3., 0.5, 4., -1.], &[2, 3]);
        for (shape_b, n) in [(vec![2, 2, 3, 2], 2), (vec![4, 3, 1], 1)] {
            let len: usize = shape_b.iter().product();
            let b = t64(
                &(0..len).map(|v| (v as f64) * 0.5 - 3.0).collect::<Vec<_>>(),
                &shape_b,
            );
            for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
                let a2 = if ta {
                    crate::ops::transpose(&a, None).unwrap()
                } else {
                    a.clone()
                };
                let r = b.ndim();
                let mut perm: Vec<usize> = (0..r).collect();
                perm.swap(r - 2, r - 1);
                let b2 = if tb {
                    // A contiguous copy of the transpose, so that `b2` is laid out plainly.
                    crate::ops::add(
                        &crate::ops::transpose(&b, Some(&perm)).unwrap(),
                        &crate::ops::zeros(&[], crate::DType::F64).unwrap(),
                    )
                    .unwrap()
                } else {
                    b.clone()
                };
                let y = matmul_t(&a2, &b2, ta, tb).unwrap();
                let mut want_shape = shape_b[..shape_b.len() - 2].to_vec();
                want_shape.extend([2, n]);
                assert_eq!(y.shape(), want_shape.as_slice());
                // Reference: `a` broadcast to the batch first (the general path).
                let mut full = shape_b[..shape_b.len() - 2].to_vec();
                full.extend(a2.shape());
                let ab = crate::ops::broadcast_to(&a2, &full).unwrap();
                let ab = crate::ops::add(&ab, &crate::ops::zeros(&[], crate::DType::F64).unwrap())
                    .unwrap();
                let want = matmul_t(&ab, &b2, ta, tb).unwrap();
                close(&vals(&y), &vals(&want));
            }
        }
    }

    #[test]
    fn tensordot_contracts() {
        let a = t64(&[1., 2., 3., 4., 5., 6.], &[2, 3]);
        let b = t64(&[1., 2., 3., 4., 5., 6.], &[3, 2]);
        let m = tensordot(&a, &b, &TensordotAxes::N(1)).unwrap();
        close(&vals(&m), &[22., 28., 49., 64.]);
        assert_eq!(
            tensordot(&a, &b, &TensordotAxes::N(0)).unwrap().shape(),
            &[2, 3, 3, 2]
        );
        let c = t64(&[1., 2., 3., 4.], &[2, 2]);
        let p = TensordotAxes::Pairs(vec![0], vec![0]);
        let t = tensordot(&a, &c, &p).unwrap();
        assert_eq!(t.shape(), &[3, 2]);
        close(&vals(&t), &[13., 18., 17., 24., 21., 30.]);
        close(
            &grad(&a, None, |x| tensordot(x, &c, &p).unwrap()),
            &[3., 3., 3., 7., 7., 7.],
        );
        assert!(tensordot(&a, &c, &TensordotAxes::N(1)).is_err());
        assert!(tensordot(&a, &b, &TensordotAxes::Pairs(vec![0], vec![])).is_err());
    }
}
