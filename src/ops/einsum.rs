//! `einsum`, composed of engine ops (diagonal extraction, transpose, reshape,
//! reduce_sum, matmul), so its gradient is the composition's and is differentiable
//! again.

use crate::error::{Error, Result};
use crate::ops::{broadcast_to, diag_part, matmul, reduce_sum, reshape, transpose};
use crate::tensor::Tensor;

const OP: &str = "Einsum";

/// Label of the `i`-th ellipsis axis (counted from the left of the widest ellipsis):
/// private-use characters, which sort after every letter.
fn ellipsis_label(i: usize) -> char {
    char::from_u32(0xE000 + i as u32).expect("private-use range")
}

fn is_ellipsis(c: char) -> bool {
    ('\u{E000}'..='\u{F8FF}').contains(&c)
}

/// Parses one subscript (`"ab...c"`) for an operand of rank `rank` (or, for the
/// output, `rank` = the widest ellipsis); returns its labels.
fn labels_of(sub: &str, rank: Option<usize>, widest: usize) -> Result<(Vec<char>, usize)> {
    let parts: Vec<&str> = sub.split("...").collect();
    if parts.len() > 2 {
        return Err(Error::invalid(
            OP,
            format!("more than one ellipsis in '{sub}'"),
        ));
    }
    for p in &parts {
        if let Some(c) = p.chars().find(|c| !c.is_ascii_alphabetic()) {
            return Err(Error::invalid(
                OP,
                format!("invalid character '{c}' in subscript '{sub}'"),
            ));
        }
    }
    let letters: usize = parts.iter().map(|p| p.len()).sum();
    let ell = if parts.len() == 2 {
        match rank {
            Some(r) => r.checked_sub(letters).ok_or_else(|| {
                Error::invalid(
                    OP,
                    format!("subscript '{sub}' has more labels than the operand's rank {r}"),
                )
            })?,
            None => widest,
        }
    } else {
        if let Some(r) = rank {
            if r != letters {
                return Err(Error::invalid(
                    OP,
                    format!("subscript '{sub}' has {letters} labels but the operand has rank {r}"),
                ));
            }
        }
        0
    };
    let mut v: Vec<char> = parts[0].chars().collect();
    if parts.len() == 2 {
        v.extend((widest.max(ell) - ell..widest.max(ell)).map(ellipsis_label));
        v.extend(parts[1].chars());
    }
    Ok((v, ell))
}

/// One operand in flight: a tensor and the label of each of its axes.
struct Term {
    t: Tensor,
    labels: Vec<char>,
}

fn permute(t: &Tensor, perm: &[usize]) -> Result<Tensor> {
    if perm.iter().enumerate().all(|(i, &p)| i == p) {
        Ok(t.clone())
    } else {
        transpose(t, Some(perm))
    }
}

/// Replaces every repeated label of `term` by its diagonal (the label moves last).
fn take_diagonals(mut term: Term) -> Result<Term> {
    loop {
        let n = term.labels.len();
        let Some((i, j)) = (0..n).find_map(|i| {
            (i + 1..n)
                .find(|&j| term.labels[j] == term.labels[i])
                .map(|j| (i, j))
        }) else {
            return Ok(term);
        };
        let (si, sj) = (term.t.shape()[i], term.t.shape()[j]);
        if si != sj {
            return Err(Error::invalid(
                OP,
                format!(
                    "repeated label '{}' has different dimensions {si} and {sj}",
                    term.labels[i]
                ),
            ));
        }
        let mut perm: Vec<usize> = (0..n).filter(|&k| k != i && k != j).collect();
        perm.extend([i, j]);
        let t = diag_part(&permute(&term.t, &perm)?)?;
        let mut labels: Vec<char> = perm[..n - 2].iter().map(|&k| term.labels[k]).collect();
        labels.push(term.labels[i]);
        term = Term { t, labels };
    }
}

/// Sums away the axes of `term` whose labels `keep` rejects.
fn sum_out(term: Term, keep: impl Fn(char) -> bool) -> Result<Term> {
    let axes: Vec<isize> = (0..term.labels.len())
        .filter(|&k| !keep(term.labels[k]))
        .map(|k| k as isize)
        .collect();
    if axes.is_empty() {
        return Ok(term);
    }
    let t = reduce_sum(&term.t, Some(&axes), false)?;
    let labels = term.labels.into_iter().filter(|&c| keep(c)).collect();
    Ok(Term { t, labels })
}

fn dims(term: &Term, ls: &[char]) -> Vec<usize> {
    ls.iter()
        .map(|c| term.t.shape()[term.labels.iter().position(|x| x == c).expect("label")])
        .collect()
}

/// Contracts two terms with one matmul: labels in both and still needed (`needed`)
/// are batch axes, labels in both and not needed are summed.
fn contract(a: Term, b: Term, needed: impl Fn(char) -> bool) -> Result<Term> {
    let batch: Vec<char> = a
        .labels
        .iter()
        .copied()
        .filter(|c| b.labels.contains(c) && needed(*c))
        .collect();
    let summed: Vec<char> = a
        .labels
        .iter()
        .copied()
        .filter(|c| b.labels.contains(c) && !needed(*c))
        .collect();
    let a_only: Vec<char> = a
        .labels
        .iter()
        .copied()
        .filter(|c| !b.labels.contains(c))
        .collect();
    let b_only: Vec<char> = b
        .labels
        .iter()
        .copied()
        .filter(|c| !a.labels.contains(c))
        .collect();
    let pos = |t: &Term, ls: &[char]| -> Vec<usize> {
        ls.iter()
            .map(|c| t.labels.iter().position(|x| x == c).expect("label"))
            .collect()
    };
    let prod = |v: &[usize]| v.iter().product::<usize>();
    let (ab, asz, aa) = (dims(&a, &batch), dims(&a, &summed), dims(&a, &a_only));
    let (bb, bsz, bo) = (dims(&b, &batch), dims(&b, &summed), dims(&b, &b_only));
    for ((c, x), y) in summed.iter().zip(&asz).zip(&bsz) {
        if x != y {
            return Err(Error::invalid(
                OP,
                format!("label '{}' has different dimensions {x} and {y}", shown(*c)),
            ));
        }
    }
    let mut pa = pos(&a, &batch);
    pa.extend(pos(&a, &a_only));
    pa.extend(pos(&a, &summed));
    let mut sa = ab.clone();
    sa.extend([prod(&aa), prod(&asz)]);
    let at = reshape(&permute(&a.t, &pa)?, &sa)?;
    let mut pb = pos(&b, &batch);
    pb.extend(pos(&b, &summed));
    pb.extend(pos(&b, &b_only));
    let mut sb = bb.clone();
    sb.extend([prod(&bsz), prod(&bo)]);
    let bt = reshape(&permute(&b.t, &pb)?, &sb)?;
    let y = matmul(&at, &bt)?;
    let mut shape: Vec<usize> = y.shape()[..batch.len()].to_vec();
    shape.extend(&aa);
    shape.extend(&bo);
    let t = reshape(&y, &shape)?;
    let mut labels = batch;
    labels.extend(a_only);
    labels.extend(b_only);
    Ok(Term { t, labels })
}

fn shown(c: char) -> String {
    if is_ellipsis(c) {
        "...".into()
    } else {
        c.to_string()
    }
}

/// Einstein summation over `inputs` as `equation` says (numpy/TF syntax: explicit
/// `"ij,jk->ik"` or implicit `"ij,jk"` output, repeated labels for diagonals
/// (`"ii->i"`), `"..."` for broadcast axes). TF equivalent: `tf.einsum`.
pub fn einsum(equation: &str, inputs: &[Tensor]) -> Result<Tensor> {
    let eq: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l, Some(r)),
        None => (eq.as_str(), None),
    };
    let subs: Vec<&str> = lhs.split(',').collect();
    if subs.len() != inputs.len() {
        return Err(Error::invalid(
            OP,
            format!(
                "equation '{equation}' names {} operands but {} were given",
                subs.len(),
                inputs.len()
            ),
        ));
    }
    if let Some(t) = inputs
        .iter()
        .skip(1)
        .find(|t| t.dtype() != inputs[0].dtype())
    {
        return Err(Error::dtype_mismatch(OP, inputs[0].dtype(), t.dtype()));
    }
    // The widest ellipsis fixes the labels of broadcast axes (aligned on the right).
    let mut widest = 0;
    for (s, t) in subs.iter().zip(inputs) {
        widest = widest.max(labels_of(s, Some(t.ndim()), 0)?.1);
    }
    let mut terms = Vec::with_capacity(inputs.len());
    for (s, t) in subs.iter().zip(inputs) {
        let (labels, _) = labels_of(s, Some(t.ndim()), widest)?;
        terms.push(Term {
            t: t.clone(),
            labels,
        });
    }
    // Size of every label; broadcast axes of size 1 stretch to the others.
    let mut size: Vec<(char, usize)> = Vec::new();
    for term in &terms {
        for (k, &c) in term.labels.iter().enumerate() {
            let d = term.t.shape()[k];
            match size.iter_mut().find(|(x, _)| *x == c) {
                None => size.push((c, d)),
                Some((_, s)) if *s == d => {}
                Some((_, s)) if is_ellipsis(c) && (*s == 1 || d == 1) => *s = (*s).max(d),
                Some((_, s)) => {
                    return Err(Error::invalid(
                        OP,
                        format!(
                            "label '{}' has different dimensions {s} and {d} in '{equation}'",
                            shown(c)
                        ),
                    ))
                }
            }
        }
    }
    let output: Vec<char> = match rhs {
        Some(r) => {
            let (ls, _) = labels_of(r, None, widest)?;
            for (k, c) in ls.iter().enumerate() {
                if ls[..k].contains(c) {
                    return Err(Error::invalid(
                        OP,
                        format!("output label '{c}' appears more than once in '{equation}'"),
                    ));
                }
                if !size.iter().any(|(x, _)| x == c) {
                    return Err(Error::invalid(
                        OP,
                        format!("output label '{c}' does not appear in the inputs of '{equation}'"),
                    ));
                }
            }
            ls
        }
        None => {
            let count = |c: char| {
                terms
                    .iter()
                    .flat_map(|t| &t.labels)
                    .filter(|&&x| x == c)
                    .count()
            };
            let mut ell: Vec<char> = (0..widest).map(ellipsis_label).collect();
            let mut once: Vec<char> = size
                .iter()
                .map(|&(c, _)| c)
                .filter(|&c| !is_ellipsis(c) && count(c) == 1)
                .collect();
            once.sort_unstable();
            ell.extend(once);
            ell
        }
    };
    // Stretch size-1 broadcast axes when operands meet.
    if terms.len() > 1 {
        for term in &mut terms {
            let full: Vec<usize> = term
                .labels
                .iter()
                .map(|c| size.iter().find(|(x, _)| x == c).expect("sized").1)
                .collect();
            if full != term.t.shape() {
                term.t = broadcast_to(&term.t, &full)?;
            }
        }
    }
    // Diagonals, then sums over labels no other operand or the output needs.
    let mut pending: Vec<Term> = Vec::with_capacity(terms.len());
    for (k, term) in terms.into_iter().enumerate() {
        let term = take_diagonals(term)?;
        let others: Vec<char> = subs
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != k)
            .flat_map(|(j, s)| {
                labels_of(s, Some(inputs[j].ndim()), widest)
                    .map(|l| l.0)
                    .unwrap_or_default()
            })
            .collect();
        pending.push(sum_out(term, |c| {
            output.contains(&c) || others.contains(&c)
        })?);
    }
    // Contract left to right.
    let mut rest = pending.into_iter();
    let mut acc = rest
        .next()
        .ok_or_else(|| Error::invalid(OP, "einsum needs at least one operand"))?;
    let later: Vec<Term> = rest.collect();
    for (k, b) in later.iter().enumerate() {
        let still: Vec<char> = later[k + 1..]
            .iter()
            .flat_map(|t| t.labels.iter().copied())
            .chain(output.iter().copied())
            .collect();
        let b = Term {
            t: b.t.clone(),
            labels: b.labels.clone(),
        };
        acc = contract(acc, b, |c| still.contains(&c))?;
        acc = sum_out(acc, |c| still.contains(&c))?;
    }
    let acc = sum_out(acc, |c| output.contains(&c))?;
    let perm: Vec<usize> = output
        .iter()
        .map(|c| {
            acc.labels
                .iter()
                .position(|x| x == c)
                .expect("output label kept")
        })
        .collect();
    permute(&acc.t, &perm)
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

    pub(crate) const SAVED: &[OpDef] = &[OpDef::new("Einsum", 1, &["equation"], einsum)
        .inputs(1, usize::MAX)
        .raw()];

    fn einsum(a: &Attrs, _: usize) -> Result<Forward> {
        let eq: String = get("Einsum", a, "equation")?;
        Ok(one_out(move |xs| ops::einsum(&eq, xs)))
    }
}

/// The Python functions of this family: bindings and where they appear (see
/// `src/ops/README.md`).
#[cfg(feature = "python")]
pub(super) mod python {
    use crate::python::binding::*;

    /// Einstein summation. TF equivalent: `tf.einsum(equation, *inputs)`.
    ///
    /// >>> import gradtape as gt
    /// >>> gt.einsum("ij,jk->ik", gt.constant([[1.0, 2.0]]), gt.constant([[3.0], [4.0]])).numpy().tolist()
    /// [[11.0]]
    #[pyfunction]
    #[pyo3(signature = (equation, *inputs, **kwargs))]
    fn einsum(
        py: Python<'_>,
        equation: &str,
        inputs: &Bound<'_, pyo3::types::PyTuple>,
        kwargs: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> PyResult<PyTensor> {
        if let Some(kw) = kwargs {
            for k in kw.keys() {
                let k: String = k.extract()?;
                if k != "name" && k != "optimize" {
                    return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                        "einsum() got an unexpected keyword argument '{k}'"
                    )));
                }
            }
        }
        let mut ts: Vec<crate::tensor::Tensor> = Vec::with_capacity(inputs.len());
        let first = inputs
            .iter()
            .find_map(|x| crate::python::convert::as_tensor(&x).map(|t| t.dtype()));
        for x in inputs.iter() {
            ts.push(match crate::python::convert::as_tensor(&x) {
                Some(t) => t,
                None => crate::python::convert::convert_value(&x, first)?,
            });
        }
        let eq = equation.to_string();
        let f = move |xs: &[Tensor]| ops::einsum(&eq, xs);
        Ok(call_n(py, "Einsum", || equation.to_string(), &ts, f)?.into())
    }

    expose! {
        fn einsum in [gt, linalg]: "(equation: str, *inputs: TensorLike, **kwargs: Any) -> Tensor";
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testutil::{close, grad, t64, vals};

    fn seq(shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        t64(&(0..n).map(|v| v as f64 - 2.0).collect::<Vec<_>>(), shape)
    }

    #[test]
    fn matmul_trace_diag_outer() {
        let a = seq(&[2, 3]);
        let b = seq(&[3, 2]);
        close(
            &vals(&einsum("ij,jk->ik", &[a.clone(), b.clone()]).unwrap()),
            &vals(&matmul(&a, &b).unwrap()),
        );
        close(
            &vals(&einsum("ij,jk", &[a.clone(), b.clone()]).unwrap()),
            &vals(&matmul(&a, &b).unwrap()),
        );
        let s = seq(&[3, 3]);
        close(
            &vals(&einsum("ii", std::slice::from_ref(&s)).unwrap()),
            &[-2.0 + 2.0 + 6.0],
        );
        close(
            &vals(&einsum("ii->i", std::slice::from_ref(&s)).unwrap()),
            &[-2.0, 2.0, 6.0],
        );
        close(
            &vals(&einsum("ij->ji", std::slice::from_ref(&a)).unwrap()),
            &vals(&transpose(&a, None).unwrap()),
        );
        let o = einsum(
            "i,j->ij",
            &[t64(&[1.0, 2.0], &[2]), t64(&[3.0, 4.0, 5.0], &[3])],
        )
        .unwrap();
        close(&vals(&o), &[3.0, 4.0, 5.0, 6.0, 8.0, 10.0]);
        // 'bxby->bxy': diagonal over two non-adjacent axes
        let x = seq(&[2, 2, 2, 3]);
        let y = einsum("bxby->bxy", std::slice::from_ref(&x)).unwrap();
        assert_eq!(y.shape(), &[2, 2, 3]);
        let xv = vals(&x);
        let want: Vec<f64> = (0..2)
            .flat_map(|b| (0..2).flat_map(move |xx| (0..3).map(move |yy| (b, xx, yy))))
            .map(|(b, xx, yy)| xv[((b * 2 + xx) * 2 + b) * 3 + yy])
            .collect();
        close(&vals(&y), &want);
        // batch broadcast through '...'
        let e = einsum("...ij,...jk->...ik", &[seq(&[2, 2, 3]), seq(&[3, 2])]).unwrap();
        close(
            &vals(&e),
            &vals(&matmul(&seq(&[2, 2, 3]), &seq(&[3, 2])).unwrap()),
        );
    }

    #[test]
    fn gradient_of_trace_is_identity() {
        let g = grad(&seq(&[3, 3]), None, |m| {
            einsum("ii", std::slice::from_ref(m)).unwrap()
        });
        close(&g, &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
    }

    #[test]
    fn bad_equations() {
        let a = seq(&[2, 3]);
        assert!(einsum("ij,jk->ik", std::slice::from_ref(&a)).is_err());
        assert!(einsum("ijk->i", std::slice::from_ref(&a)).is_err());
        assert!(einsum("ij->iz", std::slice::from_ref(&a)).is_err());
        assert!(einsum("ii->i", std::slice::from_ref(&a)).is_err());
        assert!(einsum("ij,ij->i", &[a.clone(), seq(&[3, 2])]).is_err());
        assert!(einsum("i1->i", &[a]).is_err());
    }
}
