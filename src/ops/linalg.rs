//! Matrix products and linear algebra.

use ndarray::{ArrayD, IxDyn};

use super::{binary_out, grads, Grads, Op, VjpCx};
use crate::broadcast::broadcast_shapes;
use crate::error::{Error, Result};
use crate::kernels::matmul::{matmul2, Gemm, Raw, RawMut};
use crate::ops::conj;
use crate::tensor::Tensor;

fn mm<T: Gemm>(
    a: &ndarray::ArcArray<T, IxDyn>,
    b: &ndarray::ArcArray<T, IxDyn>,
    ta: bool,
    tb: bool,
) -> Result<ArrayD<T>> {
    let (ra, rb) = (a.ndim(), b.ndim());
    if ra < 2 || rb < 2 {
        return Err(Error::invalid(
            "MatMul",
            format!(
                "In[0] and In[1] must have rank >= 2, got shapes {:?} and {:?}",
                a.shape(),
                b.shape()
            ),
        ));
    }
    let (sa, sb) = (a.shape(), b.shape());
    let (m, ka) = if ta {
        (sa[ra - 1], sa[ra - 2])
    } else {
        (sa[ra - 2], sa[ra - 1])
    };
    let (kb, n) = if tb {
        (sb[rb - 1], sb[rb - 2])
    } else {
        (sb[rb - 2], sb[rb - 1])
    };
    if ka != kb {
        return Err(Error::invalid(
            "MatMul",
            format!("Matrix size-incompatible: In[0]: {sa:?}, In[1]: {sb:?}"),
        ));
    }
    if ra == 2 && rb == 2 {
        let av = a
            .view()
            .into_dimensionality::<ndarray::Ix2>()
            .expect("rank 2");
        let bv = b
            .view()
            .into_dimensionality::<ndarray::Ix2>()
            .expect("rank 2");
        let av = if ta { av.reversed_axes() } else { av };
        let bv = if tb { bv.reversed_axes() } else { bv };
        return Ok(matmul2(av, bv).into_dyn());
    }
    let batch = broadcast_shapes("MatMul", &sa[..ra - 2], &sb[..rb - 2])?;
    let nb: usize = batch.iter().product();
    let mut shape = batch.clone();
    shape.extend([m, n]);
    let mut out = ArrayD::<T>::zeros(IxDyn(&shape));
    if nb == 0 || m == 0 || n == 0 {
        return Ok(out);
    }
    // Element offsets of each batch entry in `a` and `b` (broadcast axes: stride 0);
    // the operands are read in place, whatever their layout.
    let offsets = |x: &ndarray::ArcArray<T, IxDyn>| -> Vec<isize> {
        let r = x.ndim() - 2;
        let lead = batch.len() - r;
        let strides: Vec<isize> = (0..batch.len())
            .map(|d| {
                if d < lead || x.shape()[d - lead] == 1 {
                    0
                } else {
                    x.strides()[d - lead]
                }
            })
            .collect();
        let mut offs = Vec::with_capacity(nb);
        let mut idx = vec![0usize; batch.len()];
        for _ in 0..nb {
            offs.push(
                idx.iter()
                    .zip(&strides)
                    .map(|(&i, &s)| i as isize * s)
                    .sum(),
            );
            for d in (0..batch.len()).rev() {
                idx[d] += 1;
                if idx[d] < batch[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        offs
    };
    let (oa, ob) = (offsets(a), offsets(b));
    let raw = |x: &ndarray::ArcArray<T, IxDyn>, t: bool| {
        let s = x.strides();
        let r = Raw {
            ptr: x.as_ptr(),
            rs: s[s.len() - 2],
            cs: s[s.len() - 1],
        };
        if t {
            r.t()
        } else {
            r
        }
    };
    let (pa, pb) = (raw(a, ta), raw(b, tb));
    let job = Batch {
        a: pa,
        b: pb,
        out: RawMut {
            ptr: out.as_mut_ptr(),
            rs: n as isize,
            cs: 1,
        },
        oa: &oa,
        ob: &ob,
        m,
        n,
        k: ka,
    };
    let work = m.saturating_mul(n).saturating_mul(ka);
    #[cfg(feature = "rayon")]
    if work < crate::kernels::matmul::PAR_WORK
        && work.saturating_mul(nb) >= crate::kernels::matmul::PAR_WORK
        && rayon::current_num_threads() > 1
    {
        use rayon::prelude::*;
        (0..nb).into_par_iter().for_each(|i| job.run(i));
        return Ok(out);
    }
    (0..nb).for_each(|i| job.run(i));
    Ok(out)
}

/// One batched product: operands read in place at per-entry offsets, entry `i`
/// written to the `i`-th `(m, n)` block of the output.
struct Batch<'a, T> {
    a: Raw<T>,
    b: Raw<T>,
    out: RawMut<T>,
    oa: &'a [isize],
    ob: &'a [isize],
    m: usize,
    n: usize,
    k: usize,
}

impl<T: Gemm> Batch<'_, T> {
    fn run(&self, i: usize) {
        let a = Raw {
            ptr: self.a.ptr.wrapping_offset(self.oa[i]),
            ..self.a
        };
        let b = Raw {
            ptr: self.b.ptr.wrapping_offset(self.ob[i]),
            ..self.b
        };
        let o = RawMut {
            ptr: self.out.ptr.wrapping_add(i * self.m * self.n),
            ..self.out
        };
        // SAFETY: offsets stay inside the operands (computed from their shapes and
        // strides); each entry writes its own disjoint (m, n) block of the output.
        unsafe { T::gemm(a, b, o, self.m, self.n, self.k) };
    }
}

/// Matrix product of the last two axes, batch axes broadcast. `transpose_a/b`
/// transpose an operand first. TF equivalent: `tf.linalg.matmul` (`@`).
/// Gradient: `dy @ bᴴ` and `aᴴ @ dy` (with the transposes of TF's rule).
pub fn matmul_t(a: &Tensor, b: &Tensor, transpose_a: bool, transpose_b: bool) -> Result<Tensor> {
    let out = Tensor::new(
        map_pair!("MatMul", a.data(), b.data(), [F32, F64, I32, I64, C64, C128], x, y => {
            mm(x, y, transpose_a, transpose_b)?
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
