//! What only the CUDA driver has, on the device `MVISION_CUDA_DEVICE` selects (default 0):
//! device attributes, device-to-device copies, mapped (zero-copy) and staged maps, images of a
//! foreign context, NVRTC logs. The operations themselves are tested once for every backend,
//! against the CPU reference, by `runtime/tests/backends`.
//!
//! The tests need a CUDA GPU. Where libcuda is missing, cannot initialise, or sees no device
//! they are skipped with a message; where a GPU is present but unusable (no NVRTC, say) they
//! fail.

mod memory;

use mvision_core::Pixel;
use mvision_cuda::{devices, loader, Context, DeviceImage};
use mvision_kernels::testing::{read_packed, HostImage};

/// Says that `test` is skipped and why, on stderr itself: libtest captures `eprintln!` of
/// passing tests, and a skip must not be silent.
pub fn skip(test: &str, why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}

/// A context on the device of `MVISION_CUDA_DEVICE` (default 0), or `None` (after saying so)
/// where there is no GPU.
pub fn gpu(test: &str) -> Option<Context> {
    if !loader::driver_present() {
        skip(test, "libcuda not found (no NVIDIA driver on this machine)");
        return None;
    }
    match devices() {
        Ok(list) if list.is_empty() => {
            skip(test, "the CUDA driver sees no device");
            return None;
        }
        Ok(_) => {}
        Err(mvision_cuda::Error::Unavailable(why)) => {
            skip(test, &why);
            return None;
        }
        Err(e) => panic!("{test}: libcuda is present but enumeration failed: {e}"),
    }
    match Context::from_env() {
        Ok(ctx) => Some(ctx),
        Err(e) => panic!("{test}: a CUDA device is present but unusable: {e}"),
    }
}

/// Uploads a host image (from its strided view) into a new device image.
pub fn upload<T: Pixel>(ctx: &Context, host: &HostImage<T>) -> DeviceImage<T> {
    let mut img = ctx.alloc::<T>(host.width, host.height).unwrap();
    ctx.upload(&host.view(), &mut img).unwrap();
    img
}

/// The device image's pixels, packed.
pub fn download<T: Pixel>(ctx: &Context, img: &DeviceImage<T>) -> Vec<T> {
    read_packed(img.size(), |v| ctx.download(img, v))
}
