//! One test body per operation, run on every backend present, each compared with the
//! `mvision-core` CPU reference under the rules of `mvision_kernels::testing`: integer outputs
//! exactly, `f32` within 1e-5 relative to the magnitudes summed.
//!
//! Inputs are uploaded from host views with random strides whose row gaps hold garbage (NaN for
//! `f32`), and outputs are downloaded into views whose gaps hold a sentinel that must survive.
//! The CPU backend always runs. OpenCL must be present when the `CI` environment variable is set
//! (CI installs PoCL); elsewhere a missing backend is skipped with a message. CUDA runs where a
//! device exists (the lent GPU machine).
//!
//! What only one driver has (device memory and mapping, device-to-device copies, images of a
//! foreign context, compiler logs, device enumeration) is tested in that driver's crate.

mod errors;
mod filter;
mod imgproc;
mod transfers;

use std::sync::OnceLock;

use mvision_core::{ImageView, ImageViewMut, Pixel, Result as CoreResult};
use mvision_kernels::testing::HostImage;
use mvision_runtime::{Backend, BackendSet, Context, Image, Variant};

/// Image sizes every operation is tried on: a single pixel, one-row and one-column images,
/// tiny and odd shapes (narrower than a 15-tap kernel's radius, so reflect-101 reflects
/// repeatedly), sizes that are not multiples of any tile, and a VGA frame.
pub const SIZES: [(usize, usize); 11] = [
    (1, 1),
    (1, 7),
    (9, 1),
    (2, 3),
    (3, 2),
    (17, 5),
    (17, 9),
    (17, 13),
    (31, 33),
    (97, 61),
    (640, 480),
];

/// The dense-filter variants: naive, the default tile, the PowerVR seed's 8 × 4, a wide
/// 32 × 8, and an odd 7 × 3 that divides nothing.
pub const VARIANTS: [Variant; 5] = [
    Variant::Naive,
    Variant::Tiled { w: 16, h: 16 },
    Variant::Tiled { w: 8, h: 4 },
    Variant::Tiled { w: 32, h: 8 },
    Variant::Tiled { w: 7, h: 3 },
];

/// Pixel types with a recognisable value for the gaps of download destinations.
pub trait Sentinel: Pixel {
    /// What the gaps of a destination hold; no operation may write it there.
    const SENTINEL: Self;
}

macro_rules! sentinel {
    ($($t:ty = $v:expr),*) => {
        $(impl Sentinel for $t {
            const SENTINEL: Self = $v;
        })*
    };
}
sentinel!(
    u8 = 0xA5,
    u16 = 0xBEEF,
    i16 = -12345,
    u32 = 0xDEAD_BEEF,
    u64 = u64::MAX - 7,
    f32 = f32::NAN
);

/// The contexts to test: one per backend present, created once per test binary.
pub fn contexts() -> &'static [(Backend, Context)] {
    static CTX: OnceLock<Vec<(Backend, Context)>> = OnceLock::new();
    CTX.get_or_init(|| {
        let in_ci = std::env::var_os("CI").is_some();
        let mut v = Vec::new();
        for b in Backend::ALL {
            match Context::new(BackendSet::CPU.with(b)) {
                Ok(c) => {
                    note(&format!(
                        "backends: testing {} on {}",
                        b.name(),
                        c.device_name(b).unwrap()
                    ));
                    v.push((b, c));
                }
                Err(e) if b == Backend::OpenCl && in_ci => {
                    panic!("CI requires an OpenCL device (PoCL): {e}")
                }
                Err(e) => note(&format!("backends: SKIPPING {} ({e})", b.name())),
            }
        }
        v
    })
}

/// A line on the process's stderr itself: libtest captures `eprintln!` of passing tests, and
/// which backends ran (or were skipped) must be visible.
fn note(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The GPU contexts only.
pub fn gpu_contexts() -> impl Iterator<Item = &'static (Backend, Context)> {
    contexts().iter().filter(|(b, _)| *b != Backend::Cpu)
}

/// An image on `backend` holding `host`'s pixels, uploaded from its strided view.
pub fn upload<T: Pixel>(ctx: &Context, backend: Backend, host: &HostImage<T>) -> Image<T> {
    Image::from_view(ctx, backend, &host.view())
        .unwrap_or_else(|e| panic!("{} upload: {e}", backend.name()))
}

/// A new `width × height` image on `backend`.
pub fn alloc<T: Pixel>(ctx: &Context, backend: Backend, size: (usize, usize)) -> Image<T> {
    Image::new(ctx, backend, size.0, size.1)
        .unwrap_or_else(|e| panic!("{} alloc {size:?}: {e}", backend.name()))
}

/// The pixels of `img`, packed, downloaded into a view whose row gaps hold the sentinel, which
/// must survive.
pub fn download<T: Sentinel>(backend: Backend, img: &Image<T>) -> Vec<T> {
    let (w, h) = img.size();
    let mut out = HostImage::new(w, h, w + 3, T::SENTINEL, || T::SENTINEL);
    img.download(&mut out.view_mut())
        .unwrap_or_else(|e| panic!("{} download: {e}", backend.name()));
    out.assert_gaps_untouched(&format!("{} download {w}x{h}", backend.name()));
    out.packed()
}

/// A packed `width × height` host image of `T::default()`.
pub fn zeros<T: Pixel>((w, h): (usize, usize)) -> HostImage<T> {
    HostImage::new(w, h, w, T::default(), T::default)
}

/// The CPU reference: `cpu` (a core function, given its scratch by the caller) run on `src`'s
/// strided view into a new packed image of `out_size`.
#[track_caller]
pub fn reference<T: Pixel, U: Pixel>(
    src: &HostImage<T>,
    out_size: (usize, usize),
    cpu: impl FnOnce(&ImageView<'_, T>, &mut ImageViewMut<'_, U>) -> CoreResult<()>,
) -> HostImage<U> {
    let mut want = zeros(out_size);
    cpu(&src.view(), &mut want.view_mut()).expect("the reference accepts every test case");
    want
}

/// Runs `op` on every backend that `on` accepts, with `src` uploaded and an output of
/// `out_size`, and returns each backend's output, packed.
pub fn run_where<T: Pixel, U: Sentinel>(
    on: impl Fn(Backend) -> bool,
    src: &HostImage<T>,
    out_size: (usize, usize),
    op: impl Fn(&Image<T>, &mut Image<U>) -> mvision_runtime::Result<()>,
) -> Vec<(Backend, Vec<U>)> {
    contexts()
        .iter()
        .filter(|(b, _)| on(*b))
        .map(|(b, ctx)| {
            let a = upload(ctx, *b, src);
            let mut o = alloc(ctx, *b, out_size);
            op(&a, &mut o).unwrap_or_else(|e| panic!("{}: {e}", b.name()));
            (*b, download(*b, &o))
        })
        .collect()
}

/// [`run_where`] on every backend.
pub fn run_everywhere<T: Pixel, U: Sentinel>(
    src: &HostImage<T>,
    out_size: (usize, usize),
    op: impl Fn(&Image<T>, &mut Image<U>) -> mvision_runtime::Result<()>,
) -> Vec<(Backend, Vec<U>)> {
    run_where(|_| true, src, out_size, op)
}

/// Every backend's output equals `want` exactly.
#[track_caller]
pub fn assert_exact<T: Pixel>(got: &[(Backend, Vec<T>)], want: &HostImage<T>, what: &str) {
    let (width, want) = (want.width, want.packed());
    for (b, g) in got {
        let what = format!("{} {what}", b.name());
        mvision_kernels::testing::assert_exact(g, &want, width, &what);
    }
}

/// Every backend's output is within the `f32` tolerance of `want` (see
/// `mvision_kernels::testing::assert_close` for `scale`).
#[track_caller]
pub fn assert_close(got: &[(Backend, Vec<f32>)], want: &HostImage<f32>, scale: f32, what: &str) {
    let (width, want) = (want.width, want.packed());
    for (b, g) in got {
        let what = format!("{} {what}", b.name());
        mvision_kernels::testing::assert_close(g, &want, width, scale, &what);
    }
}
