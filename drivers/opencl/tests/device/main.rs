//! What only the OpenCL driver has, on the device `MVISION_OPENCL_DEVICE` selects (PoCL in CI):
//! device enumeration, device-to-device copies, zero-copy mapped images, images of a foreign
//! context, compiler logs. The operations themselves are tested once for every backend, against
//! the CPU reference, by `runtime/tests/backends`. One test binary, so every test shares one
//! context.

mod memory;

use std::sync::OnceLock;

use mvision_core::{Border, Error as CoreError, ImageViewMut, Pixel};
use mvision_kernels::testing::{read_packed, HostImage};
use mvision_opencl::{devices, Context, DeviceImage, Error, KernelSet, Tile};

/// The context shared by every test of this binary (PoCL compiles slowly), or `None` — with a
/// visible message — when there is no OpenCL device. Under CI (`CI` set) a missing device fails
/// the test instead.
pub fn ctx(test: &str) -> Option<&'static Context> {
    static CTX: OnceLock<Result<Context, Error>> = OnceLock::new();
    match CTX.get_or_init(Context::from_env) {
        Ok(c) => Some(c),
        Err(e) if std::env::var_os("CI").is_some() => {
            panic!("{test}: CI requires an OpenCL device (install PoCL), got: {e}")
        }
        Err(e) => {
            // Straight to the process's stderr: libtest captures `eprintln!` of passing tests,
            // and a skip must be visible.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "SKIPPED {test}: no OpenCL device: {e}");
            None
        }
    }
}

/// The shared context, or return from the test (see [`ctx`]).
#[macro_export]
macro_rules! ctx_or_skip {
    ($name:expr) => {
        match $crate::ctx($name) {
            Some(c) => c,
            None => return,
        }
    };
}

/// A new device image holding `host`'s pixels (uploaded from its strided view).
pub fn upload<T: Pixel>(ctx: &Context, host: &HostImage<T>) -> DeviceImage<T> {
    let mut d = ctx.alloc::<T>(host.width, host.height).unwrap();
    ctx.upload(&host.view(), &mut d).unwrap();
    d
}

/// The device image's pixels, packed.
pub fn download<T: Pixel>(ctx: &Context, img: &DeviceImage<T>) -> Vec<T> {
    read_packed(img.size(), |v| ctx.download(img, v))
}

#[test]
fn devices_are_described() {
    let ctx = ctx_or_skip!("devices_are_described");
    let all = devices().unwrap();
    assert!(!all.is_empty());
    for (i, d) in all.iter().enumerate() {
        assert_eq!(d.index, i);
        assert!(!d.platform.is_empty() && !d.name.is_empty(), "{d:?}");
        assert!(d.compute_units >= 1 && d.max_work_group_size >= 1, "{d:?}");
        assert!(d.local_mem_bytes > 0 && d.max_alloc_bytes > 0, "{d:?}");
    }
    assert!(all.contains(ctx.info()));
    eprintln!(
        "OpenCL device: {} ({}, {} CU, {} KiB local, max group {}, unified {})",
        ctx.info().full_name(),
        ctx.info().kind.name(),
        ctx.info().compute_units,
        ctx.info().local_mem_bytes / 1024,
        ctx.info().max_work_group_size,
        ctx.info().unified_memory
    );
    assert!(matches!(
        Context::new(all.len()),
        Err(Error::Unavailable(_))
    ));
}

#[test]
fn images_of_another_context_are_refused() {
    let ctx = ctx_or_skip!("images_of_another_context_are_refused");
    let other = Context::new(ctx.info().index).unwrap();
    let foreign = other.alloc::<u8>(4, 4).unwrap();
    let mut mine = ctx.alloc::<u8>(4, 4).unwrap();
    let refused = Err(Error::Invalid(CoreError::InvalidArgument));
    assert_eq!(ctx.copy(&foreign, &mut mine), refused);
    assert_eq!(
        ctx.box_blur_u8(&foreign, &mut mine, 3, Border::Replicate),
        refused
    );
    assert_eq!(
        ctx.box_blur_u8(&mine, &mut other.alloc(4, 4).unwrap(), 3, Border::Replicate),
        refused
    );
    let mut host = [0u8; 16];
    assert_eq!(
        ctx.download(
            &foreign,
            &mut ImageViewMut::packed(&mut host, 4, 4).unwrap()
        ),
        refused
    );
}

#[test]
fn compiler_errors_carry_the_build_log() {
    let ctx = ctx_or_skip!("compiler_errors_carry_the_build_log");
    let broken = "__kernel void broken(__global int* p) { p[0] = mv_no_such_symbol; }";
    match ctx.build_custom(broken) {
        Err(Error::KernelBuild { kernel, log }) => {
            assert_eq!(kernel, "custom");
            assert!(
                log.contains("mv_no_such_symbol"),
                "log lacks the culprit:\n{log}"
            );
        }
        other => panic!("expected KernelBuild, got {other:?}"),
    }
    ctx.build_custom("__kernel void fine(__global int* p) { p[0] = 1; }")
        .unwrap();
    // The library's own programs compile ahead of use, for any tile the device can run.
    for set in KernelSet::ALL {
        ctx.prepare(set, ctx.default_tile()).unwrap();
    }
    ctx.prepare(KernelSet::Filter, Tile::SEED_8X4).unwrap();
}
