//! Dtype dispatch macros shared by kernels and ops.

/// The one list of every dtype: calls `$m!(args.. [F16, BF16, ..., Str])`. The
/// whole-dtype tables (`dispatch!`, `map_same!`, concat, gather, select, ...) expand
/// it, so a new dtype is added here and in `Data`/`DType` only.
macro_rules! all_dtypes {
    ($m:ident ! ($($pre:tt)*)) => {
        $m!($($pre)* [F16, BF16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, Bool, C64, C128, Str])
    };
    // The list in the middle: `all_dtypes!(m!(before..) then (after..))`.
    ($m:ident ! ($($pre:tt)*) then ($($post:tt)*)) => {
        $m!($($pre)* [F16, BF16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, Bool, C64, C128, Str] $($post)*)
    };
}

/// Runs `$body` with `$a` bound to the typed array inside a [`Data`](crate::tensor::Data),
/// rewrapping nothing: the body's type must be the same for every dtype.
macro_rules! dispatch {
    (@ $data:expr, $a:ident => $body:expr, [$($dt:ident),*]) => {
        match $data {
            $($crate::tensor::Data::$dt($a) => $body,)*
        }
    };
    ($data:expr, $a:ident => $body:expr) => {
        all_dtypes!(dispatch!(@ $data, $a => $body,))
    };
}

/// `dispatch!` over the numeric (and bool) dtypes; `string` returns
/// `Err(Error::unsupported($op, string))` from the enclosing function.
macro_rules! dispatch_num {
    (@ $op:expr, $data:expr, $a:ident => $body:expr, [$($dt:ident),*]) => {
        match $data {
            $($crate::tensor::Data::$dt($a) => $body,)*
            $crate::tensor::Data::Str(_) => {
                return Err($crate::error::Error::unsupported($op, $crate::dtype::DType::Str).into())
            }
        }
    };
    ($op:expr, $data:expr, $a:ident => $body:expr) => {
        dispatch_num!(@ $op, $data, $a => $body, [F16, BF16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, Bool, C64, C128])
    };
}

/// Maps every dtype to the same dtype: `$body` yields an owned array of the input's
/// element type, which is rewrapped in the same `Data` variant.
macro_rules! map_same {
    (@ $data:expr, $a:ident => $body:expr, [$($dt:ident),*]) => {
        match $data {
            $($crate::tensor::Data::$dt($a) => $crate::tensor::Data::$dt($body.into_shared()),)*
        }
    };
    ($data:expr, $a:ident => $body:expr) => {
        all_dtypes!(map_same!(@ $data, $a => $body,))
    };
}

/// Like `map_same!` for the dtypes listed in brackets; any other dtype returns
/// `Err(Error::unsupported($op, dtype))` from the enclosing function.
///
/// A second list, `[..] via [..]`, names narrow dtypes the op also takes (`F16`
/// stands for both half types, see [`DType::via_class`](crate::dtype::DType::via_class)): their data
/// is converted to its [`DType::compute_dtype`](crate::dtype::DType::compute_dtype)
/// (which must be in the first list), computed there, and the result converted back
/// (rounded or wrapped, as TF's narrow kernels give). No kernel is compiled for them.
macro_rules! map_dtypes {
    (@ $op:expr, $data:expr, $orig:expr, [$($dt:ident),*], $a:ident => $body:expr) => {
        match $data {
            $($crate::tensor::Data::$dt($a) => $crate::tensor::Data::$dt($body.into_shared()),)*
            #[allow(unreachable_patterns)]
            _ => return Err($crate::error::Error::unsupported($op, $orig)),
        }
    };
    ($op:expr, $data:expr, [$($dt:ident),*] via [$($nw:ident),+], $a:ident => $body:expr) => {{
        let data: &$crate::tensor::Data = $data;
        let orig = data.dtype();
        // The kernels once, as a closure: the common dtypes call it directly (no
        // copies of the data on the way), the narrow ones on widened data.
        #[allow(unused_mut)]
        let mut run = |d: &$crate::tensor::Data| -> $crate::error::Result<$crate::tensor::Data> {
            Ok(map_dtypes!(@ $op, d, orig, [$($dt),*], $a => $body))
        };
        if [$($crate::dtype::DType::$nw),+].contains(&orig.via_class()) {
            $crate::ops::through_wide(data, &mut run)?
        } else {
            run(data)?
        }
    }};
    ($op:expr, $data:expr, [$($dt:ident),*], $a:ident => $body:expr) => {
        map_dtypes!(@ $op, $data, $data.dtype(), [$($dt),*], $a => $body)
    };
}

/// Pairs two `Data` of the same dtype among those listed; a dtype mismatch or an
/// unlisted dtype returns the matching error from the enclosing function.
/// `[..] via [..]` widens narrow dtypes as in `map_dtypes!`.
macro_rules! map_pair {
    ($op:expr, $x:expr, $y:expr, [$($dt:ident),*] via [$($nw:ident),+], $a:ident, $b:ident => $body:expr) => {{
        let (x, y): (&$crate::tensor::Data, &$crate::tensor::Data) = ($x, $y);
        let orig = x.dtype();
        // As in `map_dtypes!`: one copy of the kernels, called directly for the common
        // dtypes and on widened data for the narrow ones.
        #[allow(unused_mut)]
        let mut run = |p: &$crate::tensor::Data, q: &$crate::tensor::Data| -> $crate::error::Result<$crate::tensor::Data> {
            Ok(pair!(same, $op, p, q, orig, [$($dt),*], $a, $b => $body))
        };
        if orig == y.dtype() && [$($crate::dtype::DType::$nw),+].contains(&orig.via_class()) {
            $crate::ops::through_wide2(x, y, true, &mut run)?
        } else {
            run(x, y)?
        }
    }};
    ($op:expr, $x:expr, $y:expr, [$($dt:ident),*], $a:ident, $b:ident => $body:expr) => {
        pair!(same, $op, $x, $y, $x.dtype(), [$($dt),*], $a, $b => $body)
    };
}

/// Like `map_pair!` but the body yields an array of `bool` (comparisons).
macro_rules! map_pair_to_bool {
    ($op:expr, $x:expr, $y:expr, [$($dt:ident),*] via [$($nw:ident),+], $a:ident, $b:ident => $body:expr) => {{
        let (x, y): (&$crate::tensor::Data, &$crate::tensor::Data) = ($x, $y);
        let orig = x.dtype();
        #[allow(unused_mut)]
        let mut run = |p: &$crate::tensor::Data, q: &$crate::tensor::Data| -> $crate::error::Result<$crate::tensor::Data> {
            Ok(pair!(bool, $op, p, q, orig, [$($dt),*], $a, $b => $body))
        };
        if orig == y.dtype() && [$($crate::dtype::DType::$nw),+].contains(&orig.via_class()) {
            $crate::ops::through_wide2(x, y, false, &mut run)?
        } else {
            run(x, y)?
        }
    }};
    ($op:expr, $x:expr, $y:expr, [$($dt:ident),*], $a:ident, $b:ident => $body:expr) => {
        pair!(bool, $op, $x, $y, $x.dtype(), [$($dt),*], $a, $b => $body)
    };
}

/// The match behind `map_pair!` (`same`: the output has the inputs' dtype) and
/// `map_pair_to_bool!` (`bool`); errors name `$orig`, the dtype before widening.
macro_rules! pair {
    (@err $op:expr, $p:expr, $q:expr, $orig:expr) => {
        if $p.dtype() != $q.dtype() {
            $crate::error::Error::dtype_mismatch($op, $orig, $q.dtype())
        } else {
            $crate::error::Error::unsupported($op, $orig)
        }
    };
    (same, $op:expr, $x:expr, $y:expr, $orig:expr, [$($dt:ident),*], $a:ident, $b:ident => $body:expr) => {
        match ($x, $y) {
            $(($crate::tensor::Data::$dt($a), $crate::tensor::Data::$dt($b)) => $crate::tensor::Data::$dt($body.into_shared()),)*
            #[allow(unreachable_patterns)]
            (p, q) => return Err(pair!(@err $op, p, q, $orig)),
        }
    };
    (bool, $op:expr, $x:expr, $y:expr, $orig:expr, [$($dt:ident),*], $a:ident, $b:ident => $body:expr) => {
        match ($x, $y) {
            $(($crate::tensor::Data::$dt($a), $crate::tensor::Data::$dt($b)) => $crate::tensor::Data::Bool($body.into_shared()),)*
            #[allow(unreachable_patterns)]
            (p, q) => return Err(pair!(@err $op, p, q, $orig)),
        }
    };
}
