//! Jacobians: many output gradients in one vectorized sweep.
//!
//! TF equivalent: `tf.GradientTape.jacobian` / `batch_jacobian`. Instead of one
//! backward pass per output element, the seeds for a chunk of rows (one-hot output
//! gradients) travel together through one sweep with a leading batch axis; gradient
//! rules broadcast over it (see [`crate::ops::Op::batched`]). Without pfor, rows are
//! swept one at a time (the reference path; both give the same numbers).

use super::backward::{sweep, Source, UnconnectedGradients};
use super::{stack, GradientTape};
use crate::error::{Error, Result};
use crate::ops;
use crate::tensor::Tensor;

/// Elements (rows × largest source) a chunk may hold before rows are split.
const CHUNK_ELEMENTS: usize = 1 << 24;

/// One-hot rows `rows` of an `n`-element target, shaped `(len(rows),) + shape`.
fn one_hot_rows(rows: std::ops::Range<usize>, n: usize, target: &Tensor) -> Result<Tensor> {
    let c = rows.len();
    let mut shape = vec![c];
    shape.extend_from_slice(target.shape());
    let ones = rows.enumerate().map(|(i, r)| i * n + r);
    ops::one_hot_seeds(&shape, ones, target.dtype())
}

fn check_target(op: &'static str, target: &Tensor) -> Result<()> {
    if !target.dtype().is_differentiable() {
        return Err(Error::invalid(
            op,
            format!(
                "target must be a floating or complex tensor, got {}",
                target.dtype()
            ),
        ));
    }
    Ok(())
}

impl GradientTape {
    /// TF refuses the row-by-row loop (`experimental_use_pfor=False`) on a
    /// non-persistent tape in eager mode: each row is a separate `gradient` call. A
    /// used tape reports that first, as TF does.
    fn check_loop_allowed(&self, op: &str, use_pfor: bool) -> Result<()> {
        let t = self.cell.lock();
        if use_pfor || t.persistent {
            return Ok(());
        }
        if t.released {
            return Err(Error::Tape(super::USED.into()));
        }
        Err(Error::Tape(format!(
            "GradientTape must be created with persistent=True to compute the {op} with \
             eager execution enabled and with experimental_use_pfor set to False."
        )))
    }

    /// Jacobian of `target` with respect to each source: shape
    /// `target.shape + source.shape`. TF equivalent: `tape.jacobian`.
    /// `use_pfor` selects the vectorized sweep; `parallel_iterations` caps the rows
    /// per sweep.
    ///
    /// ```
    /// use gradtape::{ops, GradientTape, Source, Tensor, UnconnectedGradients};
    ///
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2])?;
    /// let tape = GradientTape::new();
    /// let y = {
    ///     let _recording = tape.enter();
    ///     tape.watch(&x);
    ///     ops::square(&x)? // y_i = x_i^2
    /// };
    /// let j = tape.jacobian(&y, &[Source::Tensor(&x)], UnconnectedGradients::None, None, true)?;
    /// let j = j[0].as_ref().expect("y depends on x");
    /// assert_eq!(j.shape(), &[2, 2]);
    /// assert_eq!(j.to_vec::<f32>()?, vec![2.0, 0.0, 0.0, 4.0]); // diag(2x)
    /// # Ok::<(), gradtape::Error>(())
    /// ```
    pub fn jacobian(
        &self,
        target: &Tensor,
        sources: &[Source<'_>],
        unconnected: UnconnectedGradients,
        parallel_iterations: Option<usize>,
        use_pfor: bool,
    ) -> Result<Vec<Option<Tensor>>> {
        self.check_loop_allowed("jacobian", use_pfor)?;
        self.begin_use()?;
        check_target("jacobian", target)?;
        let n = target.size();
        let targets = std::slice::from_ref(target);
        let biggest = sources.iter().map(source_size).max().unwrap_or(1).max(1);
        let chunk = if use_pfor {
            parallel_iterations
                .unwrap_or(CHUNK_ELEMENTS / biggest)
                .clamp(1, n.max(1))
        } else {
            1
        };
        let persistent = self.is_persistent();
        let run = |rows: std::ops::Range<usize>, release: bool| -> Result<Vec<Option<Tensor>>> {
            let seeds = one_hot_rows(rows, n, target)?;
            if use_pfor {
                sweep(
                    self,
                    targets,
                    vec![Some(seeds)],
                    sources,
                    1,
                    release,
                    unconnected,
                )
            } else {
                let seed = ops::reshape(&seeds, target.shape())?;
                sweep(
                    self,
                    targets,
                    vec![Some(seed)],
                    sources,
                    0,
                    release,
                    unconnected,
                )?
                .into_iter()
                .map(|g| g.map(|g| ops::expand_dims(&g, 0)).transpose())
                .collect()
            }
        };
        let ranges: Vec<std::ops::Range<usize>> = (0..n)
            .step_by(chunk)
            .map(|s| s..(s + chunk).min(n))
            .collect();
        // Chunks are independent sweeps: run them on the pool when no tape on this
        // thread would record them (with one recording, the sweeps must run here so
        // that it sees them: higher-order jacobians), and when no rule calls back into
        // user code (a Python gradient function must not run on a pool thread: see
        // `crate::pool`).
        let parallel = ranges.len() > 1
            && crate::pool::threads() > 1
            && !stack::any_active()
            && !self.calls_user_code();
        let results: Vec<Vec<Option<Tensor>>> = if parallel {
            // Pool threads stop for an interrupt when the caller would.
            let watch = crate::interrupt::is_watching();
            let r = crate::pool::map(ranges.len(), |i| {
                crate::interrupt::watching(watch, || run(ranges[i].clone(), false))
            })
            .into_iter()
            .collect::<Result<Vec<_>>>()?;
            if !persistent {
                self.release();
            }
            r
        } else {
            let last = ranges.len().saturating_sub(1);
            ranges
                .iter()
                .enumerate()
                .map(|(i, r)| run(r.clone(), !persistent && i == last))
                .collect::<Result<_>>()?
        };
        // Per source, the row blocks; `None` once a sweep found it unconnected
        // (connectivity does not depend on the seed, so then every sweep does).
        let mut parts: Vec<Option<Vec<Tensor>>> = vec![Some(Vec::new()); sources.len()];
        for g in results {
            for (p, g) in parts.iter_mut().zip(g) {
                match (p.as_mut(), g) {
                    (Some(v), Some(t)) => v.push(t),
                    _ => *p = None,
                }
            }
        }
        if n == 0 && !persistent {
            self.release();
        }
        sources
            .iter()
            .zip(parts)
            .map(|(s, p)| {
                let mut shape = target.shape().to_vec();
                shape.extend(source_shape(s));
                let p = match p {
                    Some(p) if !p.is_empty() => p,
                    // No rows (an empty target) or an unconnected source.
                    _ => {
                        return Ok(match (unconnected, n) {
                            (UnconnectedGradients::Zero, _) | (_, 0) => {
                                Some(ops::zeros(&shape, source_dtype(s))?)
                            }
                            _ => None,
                        })
                    }
                };
                let joined = if p.len() == 1 {
                    p.into_iter().next().expect("one part")
                } else {
                    ops::concat(&p, 0)?
                };
                Ok(Some(ops::reshape(&joined, &shape)?))
            })
            .collect()
    }

    /// Per-example Jacobians: for `target` `(batch, ...)` and `source` `(batch, ...)`,
    /// the result has shape `(batch,) + target.shape[1:] + source.shape[1:]`, computed
    /// without the full Jacobian (row `j` of every example in one sweep).
    /// TF equivalent: `tape.batch_jacobian`.
    pub fn batch_jacobian(
        &self,
        target: &Tensor,
        source: &Tensor,
        unconnected: UnconnectedGradients,
        parallel_iterations: Option<usize>,
        use_pfor: bool,
    ) -> Result<Option<Tensor>> {
        self.check_loop_allowed("batch_jacobian", use_pfor)?;
        self.begin_use()?;
        check_target("batch_jacobian", target)?;
        let (ts, ss) = (target.shape().to_vec(), source.shape().to_vec());
        // TF's checks and words (`TensorShape.with_rank_at_least(2)` on each, then
        // the batch sizes).
        for s in [&ts, &ss] {
            if s.len() < 2 {
                return Err(Error::invalid(
                    "batch_jacobian",
                    format!("Shape {} must have rank at least 2", tf_shape(s)),
                ));
            }
        }
        if ts[0] != ss[0] {
            return Err(Error::invalid(
                "batch_jacobian",
                format!(
                    "Need first dimension of target shape ({}) and source shape ({}) to match.",
                    tf_shape(&ts),
                    tf_shape(&ss)
                ),
            ));
        }
        let b = ts[0];
        let m: usize = ts[1..].iter().product();
        // TF computes the rows in chunks of `parallel_iterations`, each a `gradient`
        // call: more than one chunk needs a persistent tape.
        if use_pfor && !self.is_persistent() && parallel_iterations.is_some_and(|p| p < m) {
            return Err(Error::Tape(
                "GradientTape must be created with persistent=True to compute the \
                 batch_jacobian with parallel_iterations."
                    .into(),
            ));
        }
        let mut out_shape = vec![b];
        out_shape.extend_from_slice(&ts[1..]);
        out_shape.extend_from_slice(&ss[1..]);
        // An empty result (no example, or an empty target row) has nothing to sweep
        // (and `m` empty rows may be 2**31 of them): zeros, as `jacobian` gives for an
        // empty target.
        if crate::size::check_shape("batch_jacobian", &out_shape, source.dtype())? == 0 {
            if !self.is_persistent() {
                self.release();
            }
            return Ok(Some(ops::zeros(&out_shape, source.dtype())?));
        }
        // Seeds: for output position j, a one-hot over target.shape[1:] in every
        // example: shape (m, b) + target.shape[1:].
        let mut seed_shape = vec![m];
        seed_shape.extend_from_slice(&ts);
        let ones = (0..m).flat_map(|j| (0..b).map(move |e| (j * b + e) * m + j));
        let seeds = ops::one_hot_seeds(&seed_shape, ones, target.dtype())?;
        // Reuse `jacobian`'s machinery on the seeds: sweep with a batch axis of m.
        let src = [Source::Tensor(source)];
        let targets = std::slice::from_ref(target);
        let release = !self.is_persistent();
        let g = if use_pfor {
            let chunk = parallel_iterations.unwrap_or(m).clamp(1, m.max(1));
            if chunk >= m {
                sweep(
                    self,
                    targets,
                    vec![Some(seeds)],
                    &src,
                    1,
                    release,
                    unconnected,
                )?
                .pop()
                .flatten()
            } else {
                let mut parts = Vec::new();
                let mut start = 0;
                let mut none = false;
                while start < m {
                    let end = (start + chunk).min(m);
                    let s = ops::strided_slice(
                        &seeds,
                        &[ops::Index::Slice {
                            start: Some(start as isize),
                            stop: Some(end as isize),
                            step: 1,
                        }],
                    )?;
                    let r = sweep(
                        self,
                        targets,
                        vec![Some(s)],
                        &src,
                        1,
                        release && end == m,
                        unconnected,
                    )?
                    .pop()
                    .flatten();
                    match r {
                        Some(t) => parts.push(t),
                        None => none = true,
                    }
                    start = end;
                }
                if none {
                    None
                } else {
                    Some(ops::concat(&parts, 0)?)
                }
            }
        } else {
            let mut rows = crate::size::try_vec("batch_jacobian", m)?;
            let mut none = false;
            for j in 0..m {
                let s = ops::strided_slice(&seeds, &[ops::Index::Int(j as isize)])?;
                let r = sweep(
                    self,
                    targets,
                    vec![Some(s)],
                    &src,
                    0,
                    release && j + 1 == m,
                    unconnected,
                )?
                .pop()
                .flatten();
                match r {
                    Some(t) => rows.push(t),
                    None => none = true,
                }
            }
            if none || rows.is_empty() {
                None
            } else {
                Some(ops::stack(&rows, 0)?)
            }
        };
        // An unconnected target gives zeros of the target's dtype whatever
        // `unconnected_gradients` says: TF keeps this older behaviour of
        // `batch_jacobian` for compatibility.
        let Some(g) = g else {
            return Ok(Some(ops::zeros(&out_shape, target.dtype())?));
        };
        // g: (m, b) + source.shape[1:] → (b, m, s...) → (b,) + t[1:] + s[1:].
        let k = ss.len() - 1;
        let mut perm = vec![1, 0];
        perm.extend(2..2 + k);
        let g = ops::transpose(&g, Some(&perm))?;
        Ok(Some(ops::reshape(&g, &out_shape)?))
    }
}

/// A shape as TF's `TensorShape` prints it: `(2,)`, `(2, 3)`, `()`.
fn tf_shape(s: &[usize]) -> String {
    match s {
        [d] => format!("({d},)"),
        _ => format!(
            "({})",
            s.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn source_size(s: &Source<'_>) -> usize {
    source_shape(s).iter().product()
}

fn source_shape(s: &Source<'_>) -> Vec<usize> {
    match s {
        Source::Tensor(t) => t.shape().to_vec(),
        Source::Variable(v) => v.shape(),
    }
}

fn source_dtype(s: &Source<'_>) -> crate::DType {
    match s {
        Source::Tensor(t) => t.dtype(),
        Source::Variable(v) => v.dtype(),
    }
}
