//! Elementwise maps and broadcasting zips.

use ndarray::{ArcArray, ArrayD, IxDyn, Zip};

use super::PAR_THRESHOLD;
use crate::broadcast::broadcast_shapes;
use crate::error::Result;

/// Applies `f` to every element.
#[inline]
pub fn map<T, U, F>(a: &ArcArray<T, IxDyn>, f: F) -> ArrayD<U>
where
    T: Copy + Send + Sync,
    U: Send + Sync + Copy,
    F: Fn(T) -> U + Sync + Send,
{
    if let Some(s) = a.as_slice() {
        let v = map_slice(s, &f);
        return ArrayD::from_shape_vec(a.raw_dim(), v).expect("same length");
    }
    #[cfg(feature = "rayon")]
    if a.len() >= PAR_THRESHOLD {
        return Zip::from(a).par_map_collect(|&x| f(x));
    }
    Zip::from(a).map_collect(|&x| f(x))
}

#[inline]
fn map_slice<T, U, F>(s: &[T], f: &F) -> Vec<U>
where
    T: Copy + Send + Sync,
    U: Send + Sync + Copy,
    F: Fn(T) -> U + Sync + Send,
{
    #[cfg(feature = "rayon")]
    if s.len() >= PAR_THRESHOLD {
        use rayon::prelude::*;
        return s.par_iter().map(|&x| f(x)).collect();
    }
    s.iter().map(|&x| f(x)).collect()
}

/// Applies `f` pairwise with numpy broadcasting.
#[inline]
pub fn zip<A, B, C, F>(
    op: &'static str,
    a: &ArcArray<A, IxDyn>,
    b: &ArcArray<B, IxDyn>,
    f: F,
) -> Result<ArrayD<C>>
where
    A: Copy + Send + Sync,
    B: Copy + Send + Sync,
    C: Send + Sync + Copy,
    F: Fn(A, B) -> C + Sync + Send,
{
    if a.shape() == b.shape() {
        if let (Some(x), Some(y)) = (a.as_slice(), b.as_slice()) {
            #[cfg(feature = "rayon")]
            if x.len() >= PAR_THRESHOLD {
                use rayon::prelude::*;
                let v: Vec<C> = x
                    .par_iter()
                    .zip(y.par_iter())
                    .map(|(&p, &q)| f(p, q))
                    .collect();
                return Ok(ArrayD::from_shape_vec(a.raw_dim(), v).expect("same length"));
            }
            let v: Vec<C> = x.iter().zip(y).map(|(&p, &q)| f(p, q)).collect();
            return Ok(ArrayD::from_shape_vec(a.raw_dim(), v).expect("same length"));
        }
    }
    // One side a single element that does not add dimensions: map the other side.
    if b.len() == 1 && b.ndim() <= a.ndim() {
        let q = *b.iter().next().expect("one element");
        return Ok(map(a, |p| f(p, q)));
    }
    if a.len() == 1 && a.ndim() <= b.ndim() {
        let p = *a.iter().next().expect("one element");
        return Ok(map(b, |q| f(p, q)));
    }
    let shape = broadcast_shapes(op, a.shape(), b.shape())?;
    let av = a.broadcast(IxDyn(&shape)).expect("shapes broadcast");
    let bv = b.broadcast(IxDyn(&shape)).expect("shapes broadcast");
    #[cfg(feature = "rayon")]
    if av.len() >= PAR_THRESHOLD {
        return Ok(Zip::from(&av).and(&bv).par_map_collect(|&p, &q| f(p, q)));
    }
    Ok(Zip::from(&av).and(&bv).map_collect(|&p, &q| f(p, q)))
}

/// Applies `f` to three operands with broadcasting (used by `where`).
pub fn zip3<A, B, C, D, F>(
    op: &'static str,
    a: &ArcArray<A, IxDyn>,
    b: &ArcArray<B, IxDyn>,
    c: &ArcArray<C, IxDyn>,
    f: F,
) -> Result<ArrayD<D>>
where
    A: Copy + Send + Sync,
    B: Copy + Send + Sync,
    C: Copy + Send + Sync,
    D: Send + Sync + Copy,
    F: Fn(A, B, C) -> D + Sync + Send,
{
    let s = broadcast_shapes(op, a.shape(), b.shape())?;
    let s = broadcast_shapes(op, &s, c.shape())?;
    let av = a.broadcast(IxDyn(&s)).expect("shapes broadcast");
    let bv = b.broadcast(IxDyn(&s)).expect("shapes broadcast");
    let cv = c.broadcast(IxDyn(&s)).expect("shapes broadcast");
    Ok(Zip::from(&av)
        .and(&bv)
        .and(&cv)
        .map_collect(|&p, &q, &r| f(p, q, r)))
}
