//! The panic boundary: every exported function body runs inside [`guard`], so a Rust panic
//! becomes `MV_STATUS_PANIC` instead of unwinding into C (undefined behaviour).

use crate::status::mv_status;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `f`, mapping `Ok` to `MV_STATUS_OK`, `Err(s)` to `s` and a panic to `MV_STATUS_PANIC`.
pub fn guard(f: impl FnOnce() -> Result<(), mv_status>) -> mv_status {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => mv_status::MV_STATUS_OK,
        Ok(Err(s)) => s,
        Err(_) => mv_status::MV_STATUS_PANIC,
    }
}

/// Runs `f` for functions that return a value rather than a status; a panic yields `fallback`.
pub fn guard_value<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// `Err(MV_STATUS_NULL_POINTER)` if `p` is NULL.
pub fn non_null<T>(p: *const T) -> Result<(), mv_status> {
    if p.is_null() {
        Err(mv_status::MV_STATUS_NULL_POINTER)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_a_status() {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let s = guard(|| panic!("boom"));
        let v = guard_value(7u32, || panic!("boom"));
        std::panic::set_hook(prev);
        assert_eq!(s, mv_status::MV_STATUS_PANIC);
        assert_eq!(v, 7);
        assert_eq!(guard(|| Ok(())), mv_status::MV_STATUS_OK);
        assert_eq!(
            guard(|| Err(mv_status::MV_STATUS_OVERFLOW)),
            mv_status::MV_STATUS_OVERFLOW
        );
    }
}
