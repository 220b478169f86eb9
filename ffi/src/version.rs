//! Library version. The header's `MV_VERSION_*` macros are generated from the same crate version,
//! so the two cannot drift apart.

use std::ffi::c_char;

/// The library version as a static NUL-terminated string, `"MAJOR.MINOR.PATCH"`. Compare with
/// the `MV_VERSION_STRING` macro to detect a header/library mismatch. Never NULL.
#[no_mangle]
pub extern "C" fn mv_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The library version as one number, `MAJOR·10000 + MINOR·100 + PATCH` (same encoding as the
/// `MV_VERSION_NUMBER` macro).
#[no_mangle]
pub extern "C" fn mv_version_number() -> u32 {
    const fn parse(s: &str) -> u32 {
        let b = s.as_bytes();
        let mut i = 0;
        let mut n = 0;
        while i < b.len() {
            n = n * 10 + (b[i] - b'0') as u32;
            i += 1;
        }
        n
    }
    const N: u32 = parse(env!("CARGO_PKG_VERSION_MAJOR")) * 10000
        + parse(env!("CARGO_PKG_VERSION_MINOR")) * 100
        + parse(env!("CARGO_PKG_VERSION_PATCH"));
    N
}
