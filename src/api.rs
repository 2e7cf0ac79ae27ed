//! The crate's math-like surface: arithmetic operators on tensor references that
//! return [`Result`] (`(&a * &b)?`, as candle's do), the common ops as methods for
//! chaining (`x.matmul(&w)?.add(&b)?.relu()?`), and conversions into [`Source`] so
//! `gradient` takes tensors and variables alike.
//!
//! ```
//! use gradtape::{GradientTape, Tensor, Variable};
//!
//! let x = Tensor::from_vec(vec![1.0f32, 2.0], &[1, 2])?;
//! let w = Variable::new(Tensor::from_vec(vec![0.5f32, -1.0], &[2, 1])?, true, Some("w"));
//! let b = Tensor::scalar(0.25f32);
//! let tape = GradientTape::new();
//! let loss = tape.record(|| -> gradtape::Result<Tensor> {
//!     tape.watch(&b);
//!     let y = x.matmul(&w.read())?.add(&b)?; // [[-1.25]]
//!     (&y * &y)?.sum()
//! })?;
//! assert_eq!(loss.to_vec::<f32>()?, vec![1.5625]);
//! // Variables and tensors mix in one list of sources.
//! let g = tape.gradients(&loss, &gradtape::sources![&w, &b])?;
//! assert_eq!(g[0].as_ref().unwrap().to_vec::<f32>()?, vec![-2.5, -5.0]); // 2y x^T
//! assert_eq!(g[1].as_ref().unwrap().to_vec::<f32>()?, vec![-2.5]); // 2y
//! # Ok::<(), gradtape::Error>(())
//! ```

use crate::error::Result;
use crate::ops;
use crate::tape::Source;
use crate::tensor::Tensor;
use crate::variable::Variable;

/// A list of [`Source`]s from tensors and variables mixed:
/// `tape.gradients(&loss, &sources![&w, &b, &x])`.
#[macro_export]
macro_rules! sources {
    ($($s:expr),* $(,)?) => {
        [$($crate::Source::from($s)),*]
    };
}

impl<'a> From<&'a Tensor> for Source<'a> {
    fn from(t: &'a Tensor) -> Source<'a> {
        Source::Tensor(t)
    }
}

impl<'a> From<&'a Variable> for Source<'a> {
    fn from(v: &'a Variable) -> Source<'a> {
        Source::Variable(v)
    }
}

macro_rules! binary_operator {
    ($($trait:ident $method:ident => $op:path),* $(,)?) => {$(
        /// Elementwise, broadcasting as NumPy does; recorded like the op function.
        impl std::ops::$trait<&Tensor> for &Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: &Tensor) -> Result<Tensor> {
                $op(self, rhs)
            }
        }
        /// As for references (the tensors are shared, not copied).
        impl std::ops::$trait<Tensor> for Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: Tensor) -> Result<Tensor> {
                $op(&self, &rhs)
            }
        }
        /// As for references.
        impl std::ops::$trait<&Tensor> for Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: &Tensor) -> Result<Tensor> {
                $op(&self, rhs)
            }
        }
    )*};
}

binary_operator! {
    Add add => ops::add,
    Sub sub => ops::subtract,
    Mul mul => ops::multiply,
    Div div => ops::divide,
}

impl std::ops::Neg for &Tensor {
    type Output = Result<Tensor>;
    fn neg(self) -> Result<Tensor> {
        ops::negative(self)
    }
}

impl std::ops::Neg for Tensor {
    type Output = Result<Tensor>;
    fn neg(self) -> Result<Tensor> {
        ops::negative(&self)
    }
}

macro_rules! unary_methods {
    ($($(#[$doc:meta])* $name:ident => $op:path),* $(,)?) => {$(
        $(#[$doc])*
        pub fn $name(&self) -> Result<Tensor> {
            $op(self)
        }
    )*};
}

macro_rules! binary_methods {
    ($($(#[$doc:meta])* $name:ident => $op:path),* $(,)?) => {$(
        $(#[$doc])*
        pub fn $name(&self, other: &Tensor) -> Result<Tensor> {
            $op(self, other)
        }
    )*};
}

/// The common ops as methods, for chaining: `x.matmul(&w)?.add(&b)?.relu()?`.
/// Each is the [`ops`] function of the same (or TF's) name.
impl Tensor {
    binary_methods! {
        /// [`ops::add`].
        add => ops::add,
        /// [`ops::subtract`].
        sub => ops::subtract,
        /// [`ops::multiply`].
        mul => ops::multiply,
        /// [`ops::divide`].
        div => ops::divide,
        /// [`ops::matmul`].
        matmul => ops::matmul,
        /// [`ops::pow`].
        pow => ops::pow,
        /// [`ops::maximum`].
        maximum => ops::maximum,
        /// [`ops::minimum`].
        minimum => ops::minimum,
        /// [`ops::squared_difference`].
        squared_difference => ops::squared_difference,
    }
    unary_methods! {
        /// [`ops::negative`].
        neg => ops::negative,
        /// [`ops::abs`].
        abs => ops::abs,
        /// [`ops::exp`].
        exp => ops::exp,
        /// [`ops::log`].
        log => ops::log,
        /// [`ops::sqrt`].
        sqrt => ops::sqrt,
        /// [`ops::square`].
        square => ops::square,
        /// [`ops::tanh`].
        tanh => ops::tanh,
        /// [`ops::sigmoid`].
        sigmoid => ops::sigmoid,
        /// [`ops::relu`].
        relu => ops::relu,
    }

    /// The sum of all elements ([`ops::reduce_sum`] over every axis).
    pub fn sum(&self) -> Result<Tensor> {
        ops::reduce_sum(self, None, false)
    }

    /// The mean of all elements ([`ops::reduce_mean`] over every axis).
    pub fn mean(&self) -> Result<Tensor> {
        ops::reduce_mean(self, None, false)
    }

    /// [`ops::reduce_sum`] over `axes` (negative counts from the end).
    pub fn sum_axes(&self, axes: &[isize], keepdims: bool) -> Result<Tensor> {
        ops::reduce_sum(self, Some(axes), keepdims)
    }

    /// [`ops::reduce_mean`] over `axes` (negative counts from the end).
    pub fn mean_axes(&self, axes: &[isize], keepdims: bool) -> Result<Tensor> {
        ops::reduce_mean(self, Some(axes), keepdims)
    }

    /// [`ops::reshape`].
    pub fn reshape(&self, shape: &[usize]) -> Result<Tensor> {
        ops::reshape(self, shape)
    }

    /// The transpose of a matrix, or the axes reversed ([`ops::transpose`]).
    pub fn t(&self) -> Result<Tensor> {
        ops::transpose(self, None)
    }

    /// [`ops::cast`].
    pub fn cast(&self, dtype: crate::DType) -> Result<Tensor> {
        ops::cast(self, dtype)
    }
}

#[cfg(test)]
mod tests {
    use crate::{GradientTape, Tensor, Variable};

    #[test]
    fn operators_and_chains_match_the_op_functions() -> crate::Result<()> {
        let a = Tensor::from_vec(vec![1.0f64, 2.0, 3.0], &[3])?;
        let b = Tensor::from_vec(vec![4.0f64, 5.0, 6.0], &[3])?;
        assert_eq!((&a + &b)?.to_vec::<f64>()?, vec![5.0, 7.0, 9.0]);
        assert_eq!((&a - &b)?.to_vec::<f64>()?, vec![-3.0, -3.0, -3.0]);
        assert_eq!((&a * &b)?.to_vec::<f64>()?, vec![4.0, 10.0, 18.0]);
        assert_eq!((&b / &a)?.to_vec::<f64>()?, vec![4.0, 2.5, 2.0]);
        assert_eq!((-&a)?.to_vec::<f64>()?, vec![-1.0, -2.0, -3.0]);
        assert_eq!((a.clone() * b.clone())?.sum()?.to_vec::<f64>()?, vec![32.0]);
        // A shape mismatch is an error, not a panic.
        let c = Tensor::from_vec(vec![1.0f64, 2.0], &[2])?;
        assert!((&a + &c).is_err());
        let m = a
            .reshape(&[1, 3])?
            .matmul(&b.reshape(&[3, 1])?)?
            .add(&a.sum()?)?;
        assert_eq!(m.to_vec::<f64>()?, vec![38.0]);
        Ok(())
    }

    #[test]
    fn record_closure_and_mixed_sources() -> crate::Result<()> {
        let x = Tensor::scalar(3.0f64);
        let v = Variable::new(Tensor::scalar(2.0f64), true, None);
        let tape = GradientTape::persistent();
        let y = tape.record(|| {
            tape.watch(&x);
            (&x * &v.read())?.mul(&x)
        })?;
        assert!(!tape.is_active());
        let g = tape.gradients(&y, &crate::sources![&x, &v])?;
        assert_eq!(g[0].as_ref().unwrap().to_vec::<f64>()?, vec![12.0]); // 2xv
        assert_eq!(g[1].as_ref().unwrap().to_vec::<f64>()?, vec![9.0]); // x^2
        assert_eq!(tape.gradient1(&y, &v)?.unwrap().to_vec::<f64>()?, vec![9.0]);
        assert_eq!(
            tape.gradient1(&y, &x)?.unwrap().to_vec::<f64>()?,
            vec![12.0]
        );
        Ok(())
    }

    #[test]
    fn a_guard_bound_to_underscore_records_nothing() -> crate::Result<()> {
        // The pitfall the docs call out: `let _ = tape.enter();` drops the guard at once.
        let x = Tensor::scalar(3.0f64);
        let tape = GradientTape::new();
        #[allow(let_underscore_drop, unused_must_use)]
        let _ = tape.enter();
        tape.watch(&x);
        let y = (&x * &x)?;
        assert!(tape.gradient1(&y, &x)?.is_none());
        Ok(())
    }

    #[test]
    fn snapshot_reports_nodes_and_saved_bytes() -> crate::Result<()> {
        let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3])?;
        let tape = GradientTape::new();
        let y = tape.record(|| {
            tape.watch(&x);
            x.exp()?.sum() // Exp saves its output (12 bytes), Sum nothing
        })?;
        let s = tape.snapshot();
        let ops: Vec<&str> = s.nodes.iter().map(|n| n.op).collect();
        assert_eq!(ops, ["Exp", "Sum"]);
        assert_eq!(s.saved_bytes(), 12);
        assert_eq!(s.watched, vec![x.id()]);
        assert!(!s.used && s.recording && !s.persistent);
        assert_eq!(s.nodes[1].outputs[0].id, y.id());
        tape.gradient1(&y, &x)?;
        let s = tape.snapshot();
        assert!(s.used && s.nodes.is_empty());
        Ok(())
    }
}
