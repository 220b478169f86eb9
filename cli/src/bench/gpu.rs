//! The GPU side of `mvision bench filter`: the catalogue's cases run on OpenCL or CUDA through
//! `mvision-runtime`, with images resident on the device, plus the device-to-device copy
//! bandwidth that every kernel is reported against.
//!
//! A timed run enqueues [`BATCH`] operations and then waits once: the figure is the device's
//! throughput. Waiting after every operation would measure launch and synchronisation latency
//! (tens of microseconds), which on an H100 exceeds the kernel time of a 4K `u8` filter.

use super::cases::{dense_kernel, input_u8, Case, Op, Precision, BORDER, BORDER_F32};
use super::{measure, BenchSize, Prepared, DEFAULT_REPEAT, DEFAULT_SIZES, MAX_REPEAT};
use anyhow::{anyhow, Result};
use clap::Args;
use mvision_core::filter::{self, Kernel2dF32, Kernel2dQ, SepKernelF32, SepKernelQ};
use mvision_core::integral::integral_size;
use mvision_core::ImageView;
use mvision_runtime::{ops, Backend, BackendSet, Context, Image, Variant};
use serde_json::json;
use std::io::Write;
use std::sync::Arc;

/// Operations enqueued per timed run.
pub const BATCH: usize = 20;

/// A device context shared by every case of one benchmark run.
pub fn context(backend: Backend) -> Result<Arc<Context>> {
    let ctx = Context::new(BackendSet::CPU.with(backend))
        .map_err(|e| anyhow!("--backend {}: {e}", backend.name()))?;
    Ok(Arc::new(ctx))
}

/// What a prepared GPU case holds: kernel built once, images resident on the device.
enum Work {
    DenseU8(Kernel2dQ, Image<u8>, Image<u8>),
    DenseF32(Kernel2dF32, Image<f32>, Image<f32>),
    SepU8(SepKernelQ, Image<u8>, Image<u8>),
    SepF32(SepKernelF32, Image<f32>, Image<f32>),
    BoxU8(usize, Image<u8>, Image<u8>),
    BoxF32(usize, Image<f32>, Image<f32>),
    Integral(Image<u8>, Image<u32>, Option<Image<u64>>),
    Copy(Image<u32>, Image<u32>),
}

/// One case on one image size, ready to run on a GPU backend.
pub struct GpuCase {
    ctx: Arc<Context>,
    pixels: usize,
    bytes: usize,
    variant: Variant,
    work: Work,
}

impl GpuCase {
    /// Prepares `case` at `width × height` on the GPU backend of `ctx`, uploading the same
    /// seeded input the CPU case uses; dense filters use `variant`.
    ///
    /// Errors: the runtime's (allocation, kernel build, invalid sizes).
    pub fn new(
        ctx: Arc<Context>,
        backend: Backend,
        case: Case,
        (w, h): (usize, usize),
        variant: Variant,
    ) -> Result<Self> {
        let src = input_u8(w, h);
        let srcf: Vec<f32> = src.iter().map(|&v| f32::from(v)).collect();
        let up = |v: &[u8]| -> Result<Image<u8>> {
            Ok(Image::from_view(
                &ctx,
                backend,
                &ImageView::packed(v, w, h)?,
            )?)
        };
        let upf = |v: &[f32]| -> Result<Image<f32>> {
            Ok(Image::from_view(
                &ctx,
                backend,
                &ImageView::packed(v, w, h)?,
            )?)
        };
        let out = || -> Result<Image<u8>> { Ok(Image::new(&ctx, backend, w, h)?) };
        let outf = || -> Result<Image<f32>> { Ok(Image::new(&ctx, backend, w, h)?) };
        // Bytes one run reads and writes, for the fraction of copy bandwidth.
        let per_px = match case.precision {
            Precision::U8 => 2,
            Precision::F32 => 8,
        };
        let (work, bytes_per_px) = match (case.op, case.precision) {
            (Op::Filter2d { ksize }, Precision::U8) => (
                Work::DenseU8(
                    Kernel2dQ::from_f32_auto(ksize, &dense_kernel(ksize))?,
                    up(&src)?,
                    out()?,
                ),
                per_px,
            ),
            (Op::Filter2d { ksize }, Precision::F32) => (
                Work::DenseF32(
                    Kernel2dF32::new(ksize, &dense_kernel(ksize))?,
                    upf(&srcf)?,
                    outf()?,
                ),
                per_px,
            ),
            (Op::Gaussian { ksize }, Precision::U8) => (
                Work::SepU8(filter::gaussian_kernel_q(ksize, 0.0)?, up(&src)?, out()?),
                per_px,
            ),
            (Op::Gaussian { ksize }, Precision::F32) => (
                Work::SepF32(
                    filter::gaussian_kernel_f32(ksize, 0.0)?,
                    upf(&srcf)?,
                    outf()?,
                ),
                per_px,
            ),
            (Op::Box { ksize }, Precision::U8) => (Work::BoxU8(ksize, up(&src)?, out()?), per_px),
            (Op::Box { ksize }, Precision::F32) => {
                (Work::BoxF32(ksize, upf(&srcf)?, outf()?), per_px)
            }
            (Op::Integral { squared }, Precision::U8) => {
                let (tw, th) = integral_size(w, h);
                let sum = Image::new(&ctx, backend, tw, th)?;
                let sq = if squared {
                    Some(Image::new(&ctx, backend, tw, th)?)
                } else {
                    None
                };
                (
                    Work::Integral(up(&src)?, sum, sq),
                    if squared { 13 } else { 5 },
                )
            }
            (Op::Integral { .. }, Precision::F32) => {
                return Err(anyhow!("the integral image has no f32 case"))
            }
        };
        let mut prepared = Self {
            ctx: ctx.clone(),
            pixels: w * h,
            bytes: bytes_per_px * w * h,
            variant,
            work,
        };
        prepared.run()?; // builds the kernels, outside the timed loop
        Ok(prepared)
    }

    /// A device-to-device copy of a `width × height` `u32` image: the bandwidth reference.
    ///
    /// Errors: the runtime's.
    pub fn copy(ctx: Arc<Context>, backend: Backend, (w, h): (usize, usize)) -> Result<Self> {
        let a = Image::from_view(&ctx, backend, &ImageView::packed(&vec![7u32; w * h], w, h)?)?;
        let b = Image::new(&ctx, backend, w, h)?;
        let mut prepared = Self {
            ctx,
            pixels: w * h,
            bytes: 8 * w * h,
            variant: Variant::default(),
            work: Work::Copy(a, b),
        };
        prepared.run()?;
        Ok(prepared)
    }

    /// Pixels one run processes ([`BATCH`] operations).
    pub fn pixels(&self) -> usize {
        self.pixels * BATCH
    }

    /// Bytes one run reads plus writes in device memory ([`BATCH`] operations).
    pub fn bytes(&self) -> usize {
        self.bytes * BATCH
    }

    /// Enqueues [`BATCH`] operations and waits for them.
    ///
    /// Errors: the runtime's.
    pub fn run(&mut self) -> Result<()> {
        let v = self.variant;
        for _ in 0..BATCH {
            match &mut self.work {
                Work::DenseU8(k, a, b) => ops::filter2d_u8(a, b, k, BORDER, v)?,
                Work::DenseF32(k, a, b) => ops::filter2d_f32(a, b, k, BORDER_F32, v)?,
                Work::SepU8(k, a, b) => ops::sep_filter_u8(a, b, k, BORDER)?,
                Work::SepF32(k, a, b) => ops::sep_filter_f32(a, b, k, BORDER_F32)?,
                Work::BoxU8(k, a, b) => ops::box_blur_u8(a, b, *k, BORDER)?,
                Work::BoxF32(k, a, b) => ops::box_blur_f32(a, b, *k, BORDER_F32)?,
                Work::Integral(a, s, q) => ops::integral_u8(a, s, q.as_mut())?,
                Work::Copy(a, b) => ops::copy(a, b)?,
            }
        }
        self.ctx.sync()?;
        Ok(())
    }
}

/// One frame's round trip through a 5×5 box blur on a GPU backend: a host frame goes in, the
/// filtered frame comes back to host memory. With `mapped`, both images live in host-visible
/// memory the device uses in place (zero-copy on unified-memory devices); otherwise the frame is
/// uploaded to and downloaded from device memory.
pub struct TransferCase {
    ctx: Arc<Context>,
    mapped: bool,
    size: (usize, usize),
    frame: Vec<u8>,
    result: Vec<u8>,
    a: Image<u8>,
    b: Image<u8>,
}

impl TransferCase {
    /// Prepares the round trip at `width × height`.
    ///
    /// Errors: the runtime's.
    pub fn new(
        ctx: Arc<Context>,
        backend: Backend,
        (w, h): (usize, usize),
        mapped: bool,
    ) -> Result<Self> {
        let alloc = |ctx: &Context| -> Result<Image<u8>> {
            Ok(if mapped {
                Image::new_mapped(ctx, backend, w, h)?
            } else {
                Image::new(ctx, backend, w, h)?
            })
        };
        let mut prepared = Self {
            a: alloc(&ctx)?,
            b: alloc(&ctx)?,
            ctx,
            mapped,
            size: (w, h),
            frame: input_u8(w, h),
            result: vec![0; w * h],
        };
        prepared.run()?;
        Ok(prepared)
    }

    /// Pixels per round trip.
    pub fn pixels(&self) -> usize {
        self.size.0 * self.size.1
    }

    /// One round trip; returns when the result is in host memory.
    ///
    /// Errors: the runtime's.
    pub fn run(&mut self) -> Result<()> {
        let (w, h) = self.size;
        if self.mapped {
            let frame = &self.frame;
            self.a.with_host(|px| px.copy_from_slice(frame))?;
            ops::box_blur_u8(&self.a, &mut self.b, 5, BORDER)?;
            let result = &mut self.result;
            self.b.with_host(|px| result.copy_from_slice(px))?;
        } else {
            self.a.upload(&ImageView::packed(&self.frame, w, h)?)?;
            ops::box_blur_u8(&self.a, &mut self.b, 5, BORDER)?;
            self.b.download(&mut mvision_core::ImageViewMut::packed(
                &mut self.result,
                w,
                h,
            )?)?;
        }
        self.ctx.sync()?;
        Ok(())
    }
}

#[derive(Args, Debug)]
pub(super) struct TransferBenchArgs {
    /// Frame sizes, comma-separated WxH.
    #[arg(long, value_name = "WxH,...", value_delimiter = ',', default_value = DEFAULT_SIZES)]
    sizes: Vec<BenchSize>,
    /// Timed samples per size; the median is reported.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_REPEAT,
          value_parser = clap::value_parser!(u32).range(1..=MAX_REPEAT as i64))]
    repeat: u32,
    /// The GPU backend (opencl or cuda).
    #[arg(long, value_enum)]
    backend: super::Backend,
    /// Also print one JSON object with every result, as the last line.
    #[arg(long)]
    json: bool,
}

impl Prepared for TransferCase {
    fn run(&mut self) -> Result<()> {
        TransferCase::run(self)
    }

    fn pixels(&self) -> usize {
        TransferCase::pixels(self)
    }
}

/// `mvision bench transfer`: copies against mapped memory, per size.
pub(super) fn run_transfer(args: &TransferBenchArgs, out: &mut impl Write) -> Result<()> {
    let backend = args
        .backend
        .gpu()
        .ok_or_else(|| anyhow!("bench transfer needs --backend opencl or cuda"))?;
    let ctx = context(backend)?;
    writeln!(
        out,
        "mvision bench transfer: backend {} ({}), frame round trip with a 5x5 box blur, median of {}",
        args.backend.name(),
        ctx.device_name(backend).unwrap_or_default(),
        args.repeat
    )?;
    writeln!(
        out,
        "{:<12} {:>12} {:>12} {:>16}",
        "size", "copies ms", "mapped ms", "mapped speed-up"
    )?;
    let mut results = Vec::new();
    for &size in &args.sizes {
        let mut t = [0.0f64; 2];
        for (i, mapped) in [false, true].into_iter().enumerate() {
            let mut work =
                TransferCase::new(ctx.clone(), backend, (size.width, size.height), mapped)?;
            t[i] = measure(&mut work, args.repeat)?.median.as_secs_f64() * 1e3;
        }
        writeln!(
            out,
            "{:<12} {:>12.3} {:>12.3} {:>15.2}x",
            size.to_string(),
            t[0],
            t[1],
            t[0] / t[1]
        )?;
        results.push(json!({"size": size.to_string(), "copies_ms": t[0], "mapped_ms": t[1]}));
    }
    if args.json {
        let device = ctx.device_name(backend).unwrap_or_default();
        writeln!(
            out,
            "{}",
            json!({"command": "bench transfer", "backend": args.backend.name(), "device": device, "results": results})
        )?;
    }
    Ok(())
}
