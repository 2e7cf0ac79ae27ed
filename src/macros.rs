//! Dtype dispatch macros shared by kernels and ops.

/// Runs `$body` with `$a` bound to the typed array inside a [`Data`](crate::tensor::Data),
/// rewrapping nothing: the body's type must be the same for every dtype.
macro_rules! dispatch {
    ($data:expr, $a:ident => $body:expr) => {
        match $data {
            $crate::tensor::Data::F32($a) => $body,
            $crate::tensor::Data::F64($a) => $body,
            $crate::tensor::Data::I32($a) => $body,
            $crate::tensor::Data::I64($a) => $body,
            $crate::tensor::Data::Bool($a) => $body,
            $crate::tensor::Data::C64($a) => $body,
            $crate::tensor::Data::C128($a) => $body,
        }
    };
}

/// Maps every dtype to the same dtype: `$body` yields an owned array of the input's
/// element type, which is rewrapped in the same `Data` variant.
macro_rules! map_same {
    ($data:expr, $a:ident => $body:expr) => {
        match $data {
            $crate::tensor::Data::F32($a) => $crate::tensor::Data::F32($body.into_shared()),
            $crate::tensor::Data::F64($a) => $crate::tensor::Data::F64($body.into_shared()),
            $crate::tensor::Data::I32($a) => $crate::tensor::Data::I32($body.into_shared()),
            $crate::tensor::Data::I64($a) => $crate::tensor::Data::I64($body.into_shared()),
            $crate::tensor::Data::Bool($a) => $crate::tensor::Data::Bool($body.into_shared()),
            $crate::tensor::Data::C64($a) => $crate::tensor::Data::C64($body.into_shared()),
            $crate::tensor::Data::C128($a) => $crate::tensor::Data::C128($body.into_shared()),
        }
    };
}

/// Like `map_same!` for the dtypes listed in brackets; any other dtype returns
/// `Err(Error::unsupported($op, dtype))` from the enclosing function.
macro_rules! map_dtypes {
    ($op:expr, $data:expr, [$($dt:ident),*], $a:ident => $body:expr) => {
        match $data {
            $($crate::tensor::Data::$dt($a) => $crate::tensor::Data::$dt($body.into_shared()),)*
            #[allow(unreachable_patterns)]
            other => return Err($crate::error::Error::unsupported($op, other.dtype())),
        }
    };
}

/// Pairs two `Data` of the same dtype among those listed; a dtype mismatch or an
/// unlisted dtype returns the matching error from the enclosing function.
macro_rules! map_pair {
    ($op:expr, $x:expr, $y:expr, [$($dt:ident),*], $a:ident, $b:ident => $body:expr) => {
        match ($x, $y) {
            $(($crate::tensor::Data::$dt($a), $crate::tensor::Data::$dt($b)) => $crate::tensor::Data::$dt($body.into_shared()),)*
            #[allow(unreachable_patterns)]
            (p, q) => {
                return Err(if p.dtype() != q.dtype() {
                    $crate::error::Error::dtype_mismatch($op, p.dtype(), q.dtype())
                } else {
                    $crate::error::Error::unsupported($op, p.dtype())
                })
            }
        }
    };
}

/// Like `map_pair!` but the body yields an array of `bool` (comparisons).
macro_rules! map_pair_to_bool {
    ($op:expr, $x:expr, $y:expr, [$($dt:ident),*], $a:ident, $b:ident => $body:expr) => {
        match ($x, $y) {
            $(($crate::tensor::Data::$dt($a), $crate::tensor::Data::$dt($b)) => $crate::tensor::Data::Bool($body.into_shared()),)*
            #[allow(unreachable_patterns)]
            (p, q) => {
                return Err(if p.dtype() != q.dtype() {
                    $crate::error::Error::dtype_mismatch($op, p.dtype(), q.dtype())
                } else {
                    $crate::error::Error::unsupported($op, p.dtype())
                })
            }
        }
    };
}
