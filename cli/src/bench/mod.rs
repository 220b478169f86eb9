//! `mvision bench filter`: throughput of the core's filters on generated images, as a table and,
//! with `--json`, one JSON object on the last line (what `bench/opencv_compare.py` reads).
//! `bench gemm`, `bench conv` and `bench net` (the CNN core) live in [`nn`].
//!
//! The cases (operations, kernels, input) are those of the `mvision-benches` crate, so this
//! command and the criterion benches measure the same thing. This module
//! adds the measurement: per case and size, an untimed warm-up, then `--repeat` timed samples
//! whose median is reported. A sample is as many back-to-back runs as make it last at least
//! [`MIN_SAMPLE`], so sub-millisecond cases are not at the mercy of the clock and scheduler.
//!
//! Backends: the work is reached through [`Prepared`], one case made ready on one backend; the
//! GPU cases and the `transfer` suite (zero-copy against copies) live in [`gpu`].

use std::fmt;
use std::io::Write;
use std::str::FromStr;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use serde_json::{json, Value};

// Compiled from the benches crate's source (see that file's header for why it stays
// self-contained); a dependency on `mvision-benches` in cli/Cargo.toml would do the same.
use mvision_benches::cases;

mod gpu;
mod layers;
mod nn;

use cases::{Case, CpuCase, CASES, DENSE_KERNEL_SIZES, MAX_BENCH_PIXELS};

/// Sizes measured when `--sizes` is not given: VGA, 1080p, 4K UHD.
const DEFAULT_SIZES: &str = "640x480,1920x1080,3840x2160";

/// Timed samples per case and size when `--repeat` is not given: enough for a stable median,
/// few enough that the default run (three sizes) takes about 15 s on one core.
const DEFAULT_REPEAT: u32 = 15;

/// Upper bound of `--repeat`, so a typo cannot start an hour-long run.
const MAX_REPEAT: u32 = 1000;

/// Warm-up: untimed runs until this much time has passed (at least one run). It faults in the
/// output pages, fills the caches and lets the clock settle, and measures the run time that
/// sizes the samples.
const WARM_UP: Duration = Duration::from_millis(50);

/// A timed sample repeats the operation until it lasts at least this long.
const MIN_SAMPLE: Duration = Duration::from_millis(10);

/// `mvision bench …`: which suite to run.
#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    suite: Suite,
}

#[derive(Subcommand, Debug)]
enum Suite {
    /// Mpixel/s of dense (3x3, 7x7), separable Gaussian (3, 7) and box (5x5) filters, u8
    /// fixed-point and f32, and integral images, on generated images of several sizes.
    #[command(long_about = FILTER_LONG_ABOUT)]
    Filter(FilterBenchArgs),
    /// Zero-copy against copies: a frame's round trip (host in, 5x5 box blur, host out) with
    /// device images uploaded and downloaded, and with mapped host-visible images used in place.
    Transfer(gpu::TransferBenchArgs),
    /// GFLOP/s of the core's SGEMM (portable path and the gemm crate) at 256..2048 and the
    /// FastPoorNet shapes.
    #[command(long_about = nn::GEMM_LONG_ABOUT)]
    Gemm(nn::GemmBenchArgs),
    /// Each convolution method (direct, im2col, MEC, MFCA) on seed 004's shapes and AlexNet's
    /// conv layers: ms, GFLOP/s and workspace bytes.
    #[command(long_about = nn::CONV_LONG_ABOUT)]
    Conv(nn::ConvBenchArgs),
    /// Latency of a whole .mvnn network, with its arena and scratch bytes.
    #[command(long_about = nn::NET_LONG_ABOUT)]
    Net(nn::NetBenchArgs),
}

const FILTER_LONG_ABOUT: &str = "\
Mpixel/s of the core's filters on generated images of several sizes.

Cases: dense filter2d 3x3 and 7x7 (a fixed non-separable kernel, all taps non-zero), separable
Gaussian 3 and 7 (sigma from ksize, as OpenCV's GaussianBlur with sigma 0), box 5x5 -- each
on the u8 fixed-point path and the f32 path -- and the u8 integral image, alone and with the
squared table. Borders are reflect101. The input is seeded uniform noise, the same on every
run and machine.

Each case and size: an untimed warm-up (at least 50 ms), then --repeat samples of at least
10 ms each (back-to-back runs); the median run time is reported, as Mpixel/s of output (of
input for the integral image). Single-threaded.

The table goes to stdout; --json adds one JSON object as the very last line (for scripts:
`mvision bench filter --json | tail -n 1`).";

/// The compute backend a benchmark runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Backend {
    /// The portable CPU core (single thread).
    Cpu,
    /// The OpenCL device chosen by MVISION_OPENCL_DEVICE (default: device 0).
    Opencl,
    /// The CUDA device chosen by MVISION_CUDA_DEVICE (default: device 0).
    Cuda,
}

impl Backend {
    /// The runtime backend, `None` for the CPU (which runs the core directly).
    fn gpu(self) -> Option<mvision_runtime::Backend> {
        match self {
            Backend::Cpu => None,
            Backend::Opencl => Some(mvision_runtime::Backend::OpenCl),
            Backend::Cuda => Some(mvision_runtime::Backend::Cuda),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::Opencl => "opencl",
            Backend::Cuda => "cuda",
        }
    }
}

#[derive(Args, Debug)]
struct FilterBenchArgs {
    /// Image sizes to measure, comma-separated WxH.
    #[arg(long, value_name = "WxH,...", value_delimiter = ',', default_value = DEFAULT_SIZES)]
    sizes: Vec<BenchSize>,
    /// Timed samples per case and size; the median is reported.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_REPEAT,
          value_parser = clap::value_parser!(u32).range(1..=MAX_REPEAT as i64))]
    repeat: u32,
    /// Only these cases (comma-separated ids as in the JSON, e.g. filter2d_3x3_u8,box_5_u8);
    /// all when absent. For profiling one case.
    #[arg(long, value_name = "ID,...", value_delimiter = ',')]
    cases: Vec<String>,
    /// Also print one JSON object with every result, as the last line.
    #[arg(long)]
    json: bool,
    /// Where the filters run.
    #[arg(long, value_enum, default_value_t = Backend::Cpu)]
    backend: Backend,
    /// GPU dense-filter kernel: naive (one work-item per pixel, taps from global memory) or
    /// tiled (a 16x16 work-group loads its halo tile into local memory) or tiled:WxH.
    #[arg(long, value_name = "naive|tiled[:WxH]", default_value = "tiled", value_parser = parse_variant)]
    variant: mvision_runtime::Variant,
}

/// Parses `--variant`.
fn parse_variant(s: &str) -> std::result::Result<mvision_runtime::Variant, String> {
    use mvision_runtime::Variant;
    match s {
        "naive" => Ok(Variant::Naive),
        "tiled" => Ok(Variant::default()),
        _ => {
            let size = s
                .strip_prefix("tiled:")
                .ok_or_else(|| format!("'{s}': use naive, tiled or tiled:WxH"))?;
            let b = BenchSize::from_str(size)?;
            Ok(Variant::Tiled {
                w: b.width,
                h: b.height,
            })
        }
    }
}

/// An image size from `WxH`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct BenchSize {
    width: usize,
    height: usize,
}

impl FromStr for BenchSize {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let (w, h) = s
            .split_once(['x', 'X'])
            .ok_or_else(|| format!("'{s}' is not a size: use WxH, for example 1920x1080"))?;
        let side = |v: &str| match v.trim().parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!(
                "'{v}' in '{s}' is not a positive whole number of pixels"
            )),
        };
        let (width, height) = (side(w)?, side(h)?);
        // The integral cases' u32 table caps the pixel count; one limit for every case.
        if (width as u64).saturating_mul(height as u64) > MAX_BENCH_PIXELS {
            return Err(format!(
                "{width}x{height} is too large: at most {MAX_BENCH_PIXELS} pixels (the u32 \
                 integral image's limit)"
            ));
        }
        Ok(Self { width, height })
    }
}

impl fmt::Display for BenchSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.width, self.height)
    }
}

/// One case made ready on one backend: input in place, output and scratch allocated.
trait Prepared {
    /// Runs the operation once. Returns only when the output is complete (a GPU backend waits
    /// for its queue), so the wall time around it is the operation's time.
    fn run(&mut self) -> Result<()>;

    /// Pixels one run processes: the unit of the reported throughput.
    fn pixels(&self) -> usize;

    /// Device-memory bytes one run reads plus writes, where that is meaningful (GPU cases,
    /// for the fraction of copy bandwidth).
    fn bytes(&self) -> Option<usize> {
        None
    }
}

impl Prepared for gpu::GpuCase {
    fn run(&mut self) -> Result<()> {
        gpu::GpuCase::run(self)
    }

    fn pixels(&self) -> usize {
        gpu::GpuCase::pixels(self)
    }

    fn bytes(&self) -> Option<usize> {
        Some(gpu::GpuCase::bytes(self))
    }
}

impl Prepared for CpuCase {
    fn run(&mut self) -> Result<()> {
        CpuCase::run(self).map_err(|e| anyhow!(e))
    }

    fn pixels(&self) -> usize {
        CpuCase::pixels(self)
    }
}

/// Prepares `case` at `size` on `backend` (`gpu`: the shared device context of a GPU run).
fn prepare(
    backend: Backend,
    case: Case,
    size: BenchSize,
    gpu: Option<&Gpu>,
    variant: mvision_runtime::Variant,
) -> Result<Box<dyn Prepared>> {
    match (backend.gpu(), gpu) {
        (Some(b), Some(g)) => {
            let prepared =
                gpu::GpuCase::new(g.clone(), b, case, (size.width, size.height), variant)
                    .with_context(|| format!("cannot prepare {} at {size}", case.id()))?;
            Ok(Box::new(prepared))
        }
        _ => {
            let prepared = CpuCase::new(case, size.width, size.height)
                .map_err(|e| anyhow!(e))
                .with_context(|| format!("cannot prepare {} at {size}", case.id()))?;
            Ok(Box::new(prepared))
        }
    }
}

/// The device context of a GPU benchmark run.
type Gpu = std::sync::Arc<mvision_runtime::Context>;

/// The timing of one case at one size.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Measurement {
    /// Pixels per run.
    pixels: usize,
    /// Median time of one run.
    median: Duration,
    /// Fastest and slowest sample, per run.
    min: Duration,
    max: Duration,
    /// Runs per timed sample.
    runs_per_sample: u32,
    /// Device bytes read plus written per run (GPU cases).
    bytes: Option<usize>,
}

/// The median of `times` (the mean of the middle two for an even count). `times` is sorted in
/// place; it must not be empty.
pub(crate) fn median(times: &mut [Duration]) -> Duration {
    times.sort_unstable();
    let n = times.len();
    if n % 2 == 1 {
        times[n / 2]
    } else {
        (times[n / 2 - 1] + times[n / 2]) / 2
    }
}

/// Timed samples of one operation: the median, fastest and slowest run time, and how many
/// back-to-back runs made one sample.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Timing {
    median: Duration,
    min: Duration,
    max: Duration,
    runs_per_sample: u32,
}

/// Warm-up, then `repeat` samples of `runs_per_sample` back-to-back runs of `run` each.
fn time_runs(run: &mut dyn FnMut() -> Result<()>, repeat: u32) -> Result<Timing> {
    let start = Instant::now();
    let mut warm_runs = 0u32;
    while warm_runs == 0 || start.elapsed() < WARM_UP {
        run()?;
        warm_runs += 1;
    }
    let per_run = start.elapsed() / warm_runs;
    let runs_per_sample = if per_run >= MIN_SAMPLE {
        1
    } else {
        let nanos = per_run.as_nanos().max(1);
        MIN_SAMPLE.as_nanos().div_ceil(nanos).min(u32::MAX as u128) as u32
    };
    let mut samples = Vec::with_capacity(repeat as usize);
    for _ in 0..repeat.max(1) {
        let t = Instant::now();
        for _ in 0..runs_per_sample {
            run()?;
        }
        samples.push(t.elapsed() / runs_per_sample);
    }
    let median = median(&mut samples);
    Ok(Timing {
        median,
        min: samples[0],
        max: samples[samples.len() - 1],
        runs_per_sample,
    })
}

/// Warm-up, then `repeat` samples of `runs_per_sample` back-to-back runs each.
fn measure(work: &mut dyn Prepared, repeat: u32) -> Result<Measurement> {
    let t = time_runs(&mut || work.run(), repeat)?;
    Ok(Measurement {
        pixels: work.pixels(),
        median: t.median,
        min: t.min,
        max: t.max,
        runs_per_sample: t.runs_per_sample,
        bytes: work.bytes(),
    })
}

/// Millions of pixels per second, or `None` when the clock did not advance.
fn mpixel_per_s(pixels: usize, t: Duration) -> Option<f64> {
    let secs = t.as_secs_f64();
    (secs > 0.0).then(|| pixels as f64 / secs / 1e6)
}

/// The widest SIMD level the compiler was allowed to use for this binary (the core has no
/// runtime dispatch, so this is what runs): the first thing to check when comparing builds.
fn simd_level() -> &'static str {
    const LEVELS: &[(&str, bool)] = &[
        ("avx512bw", cfg!(target_feature = "avx512bw")),
        ("avx2", cfg!(target_feature = "avx2")),
        ("avx", cfg!(target_feature = "avx")),
        ("sse4.1", cfg!(target_feature = "sse4.1")),
        ("ssse3", cfg!(target_feature = "ssse3")),
        ("sse2", cfg!(target_feature = "sse2")),
        ("sve", cfg!(target_feature = "sve")),
        ("neon", cfg!(target_feature = "neon")),
    ];
    LEVELS
        .iter()
        .find(|(_, on)| *on)
        .map_or("none", |(name, _)| name)
}

/// One row of results: a case and its measurement at each size, in `--sizes` order.
struct Row {
    case: Case,
    cells: Vec<(BenchSize, Measurement)>,
}

/// Device-to-device copy bandwidth (bytes read plus written per second) at each size of a GPU
/// run: the reference each kernel's bandwidth is reported against.
struct CopyBandwidth(Vec<(BenchSize, f64)>);

impl CopyBandwidth {
    fn at(&self, size: BenchSize) -> Option<f64> {
        self.0.iter().find(|(s, _)| *s == size).map(|(_, b)| *b)
    }
}

/// Bytes per second of a measurement, where its bytes are known.
fn bytes_per_s(m: &Measurement) -> Option<f64> {
    let secs = m.median.as_secs_f64();
    m.bytes.filter(|_| secs > 0.0).map(|b| b as f64 / secs)
}

/// Runs `mvision bench` and writes the report to `out`.
pub fn run(args: &BenchArgs, out: &mut impl Write) -> Result<()> {
    match &args.suite {
        Suite::Filter(a) => run_filter(a, out),
        Suite::Transfer(a) => gpu::run_transfer(a, out),
        Suite::Gemm(a) => nn::run_gemm(a, out),
        Suite::Conv(a) => nn::run_conv(a, out),
        Suite::Net(a) => nn::run_net(a, out),
    }
}

fn run_filter(args: &FilterBenchArgs, out: &mut impl Write) -> Result<()> {
    if args.sizes.is_empty() {
        bail!("--sizes needs at least one WxH");
    }
    let selected = selected_cases(&args.cases)?;
    let gpu = args.backend.gpu().map(gpu::context).transpose()?;
    let mut copy = CopyBandwidth(Vec::new());
    if let (Some(b), Some(g)) = (args.backend.gpu(), &gpu) {
        for &size in &args.sizes {
            let mut work = gpu::GpuCase::copy(g.clone(), b, (size.width, size.height))?;
            let m = measure(&mut work, args.repeat)?;
            copy.0.push((size, bytes_per_s(&m).unwrap_or(0.0)));
        }
    }
    let mut rows = Vec::with_capacity(selected.len());
    for case in selected {
        let mut cells = Vec::with_capacity(args.sizes.len());
        for &size in &args.sizes {
            let mut work = prepare(args.backend, case, size, gpu.as_ref(), args.variant)?;
            let m = measure(work.as_mut(), args.repeat)
                .with_context(|| format!("{} at {size} failed", case.id()))?;
            cells.push((size, m));
        }
        rows.push(Row { case, cells });
    }
    write_table(args, &rows, &copy, gpu.as_deref(), out).context("cannot write to stdout")?;
    if args.json {
        writeln!(out, "{}", report_json(args, &rows, &copy, gpu.as_deref()))
            .context("cannot write to stdout")?;
    }
    Ok(())
}

/// The cases `--cases` names, in catalogue order; every case when it is empty.
fn selected_cases(ids: &[String]) -> Result<Vec<Case>> {
    if let Some(unknown) = ids.iter().find(|id| !CASES.iter().any(|c| c.id() == **id)) {
        let known: Vec<String> = CASES.iter().map(Case::id).collect();
        bail!(
            "--cases: unknown case '{unknown}'; the cases are {}",
            known.join(", ")
        );
    }
    Ok(CASES
        .into_iter()
        .filter(|c| ids.is_empty() || ids.contains(&c.id()))
        .collect())
}

/// The device a GPU run measured, for the report header.
fn device_name(args: &FilterBenchArgs, gpu: Option<&mvision_runtime::Context>) -> String {
    match (args.backend.gpu(), gpu) {
        (Some(b), Some(g)) => g.device_name(b).unwrap_or_default(),
        _ => "host CPU, 1 thread".to_string(),
    }
}

fn write_table(
    args: &FilterBenchArgs,
    rows: &[Row],
    copy: &CopyBandwidth,
    gpu: Option<&mvision_runtime::Context>,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let profile = if cfg!(debug_assertions) {
        "DEBUG build: numbers are meaningless, build with --release"
    } else {
        "release build"
    };
    writeln!(
        out,
        "mvision bench filter: backend {} ({}), {} {}, {profile}, median of {} samples",
        args.backend.name(),
        device_name(args, gpu),
        std::env::consts::ARCH,
        simd_level(),
        args.repeat
    )?;
    if gpu.is_some() {
        writeln!(
            out,
            "GPU: {} operations per timed run, one wait; dense filters {:?}; kernel tuning {}; \
             cells are Mpixel/s (% of device-to-device copy bandwidth)",
            gpu::BATCH,
            args.variant,
            kernel_tuning()
        )?;
    }
    const LABEL_W: usize = 20;
    let col_w = args
        .sizes
        .iter()
        .map(|s| s.to_string().len())
        .max()
        .unwrap_or(0)
        .max(9);
    write!(out, "{:<LABEL_W$}", "Mpixel/s")?;
    for s in &args.sizes {
        write!(out, "  {:>col_w$}", s.to_string())?;
    }
    writeln!(out)?;
    let col_w = if gpu.is_some() { col_w.max(16) } else { col_w };
    for row in rows {
        write!(out, "{:<LABEL_W$}", row.case.label())?;
        for (size, m) in &row.cells {
            let mut rate = mpixel_per_s(m.pixels, m.median)
                .map_or_else(|| "n/a".to_string(), |r| format!("{r:.1}"));
            if let (Some(bps), Some(c)) = (bytes_per_s(m), copy.at(*size)) {
                rate = format!("{rate} ({:.0}%)", 100.0 * bps / c);
            }
            write!(out, "  {rate:>col_w$}")?;
        }
        writeln!(out)?;
    }
    if !copy.0.is_empty() {
        write!(out, "{:<LABEL_W$}", "copy GB/s (r+w)")?;
        for (_, b) in &copy.0 {
            write!(out, "  {:>col_w$}", format!("{:.1}", b / 1e9))?;
        }
        writeln!(out)?;
    }
    Ok(())
}

fn report_json(
    args: &FilterBenchArgs,
    rows: &[Row],
    copy: &CopyBandwidth,
    gpu: Option<&mvision_runtime::Context>,
) -> Value {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let results: Vec<Value> = rows
        .iter()
        .flat_map(|row| {
            row.cells.iter().map(move |(size, m)| {
                json!({
                    "case": row.case.id(),
                    "label": row.case.label(),
                    "precision": row.case.precision.name(),
                    "width": size.width,
                    "height": size.height,
                    "pixels": m.pixels,
                    "median_ms": ms(m.median),
                    "min_ms": ms(m.min),
                    "max_ms": ms(m.max),
                    "mpixel_per_s": mpixel_per_s(m.pixels, m.median),
                    "samples": args.repeat,
                    "runs_per_sample": m.runs_per_sample,
                    "gbytes_per_s": bytes_per_s(m).map(|b| b / 1e9),
                    "fraction_of_copy": bytes_per_s(m)
                        .zip(copy.at(*size))
                        .map(|(b, c)| b / c),
                })
            })
        })
        .collect();
    // The dense kernels, so a comparison can run exactly the same coefficients.
    let kernels: serde_json::Map<String, Value> = DENSE_KERNEL_SIZES
        .iter()
        .map(|&k| (format!("{k}x{k}"), json!(cases::dense_kernel(k))))
        .collect();
    json!({
        "command": "bench filter",
        "version": mvision_core::VERSION,
        "backend": args.backend.name(),
        "device": device_name(args, gpu),
        "variant": format!("{:?}", args.variant),
        "kernel_tuning": kernel_tuning(),
        "copy_gbytes_per_s": copy.0.iter().map(|(s, b)| json!({"size": s.to_string(), "gbytes_per_s": b / 1e9})).collect::<Vec<_>>(),
        "build_profile": if cfg!(debug_assertions) { "debug" } else { "release" },
        "arch": std::env::consts::ARCH,
        "simd": simd_level(),
        "threads": 1,
        "border": "reflect101",
        "input": format!("uniform u8 noise, SplitMix64 seed {:#x}", cases::INPUT_SEED),
        "repeat": args.repeat,
        "sizes": args.sizes.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "dense_kernels": kernels,
        "results": results,
    })
}

/// The process's GPU kernel tuning (`MVISION_FILTER_*`, `MVISION_INTEGRAL_*`), as
/// `"filter auto/4, integral 256x64/shfl/g256"`.
fn kernel_tuning() -> String {
    format!(
        "filter {}, integral {}",
        mvision_runtime::FilterTuning::get().label(),
        mvision_runtime::IntegralTuning::get().label()
    )
}

#[cfg(test)]
mod tests;
