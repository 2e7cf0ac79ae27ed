//! Matrix products and linear algebra.

use ndarray::{Array3, ArrayD, Axis, Ix3, IxDyn, LinalgScalar};

use super::{binary_out, grads, Grads, Op, VjpCx};
use crate::broadcast::broadcast_shapes;
use crate::error::{Error, Result};
use crate::kernels::matmul::matmul2;
use crate::ops::conj;
use crate::tensor::Tensor;

fn mm<T: LinalgScalar + Send + Sync>(
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
    let flat3 = |x: &ndarray::ArcArray<T, IxDyn>, r: usize, c: usize| -> Array3<T> {
        let mut full = batch.clone();
        full.extend([r, c]);
        let v = x.broadcast(IxDyn(&full)).expect("batch dims broadcast");
        let owned = v.as_standard_layout().into_owned();
        owned
            .into_shape_with_order((nb, r, c))
            .expect("same size")
            .into_dimensionality::<Ix3>()
            .expect("rank 3")
    };
    let a3 = flat3(a, sa[ra - 2], sa[ra - 1]);
    let b3 = flat3(b, sb[rb - 2], sb[rb - 1]);
    let mut out = Array3::<T>::zeros((nb, m, n));
    for (i, mut o) in out.axis_iter_mut(Axis(0)).enumerate() {
        let av = a3.index_axis(Axis(0), i);
        let bv = b3.index_axis(Axis(0), i);
        let av = if ta { av.reversed_axes() } else { av };
        let bv = if tb { bv.reversed_axes() } else { bv };
        o.assign(&matmul2(av, bv));
    }
    let mut shape = batch;
    shape.extend([m, n]);
    Ok(out.into_shape_with_order(IxDyn(&shape)).expect("same size"))
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
