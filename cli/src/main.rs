//! `mvision`: the libmvision command-line tool.
//!
//! * `info` reports the build, the backends and the CPU device (`MVISION_CPU` caps the
//!   instruction-set level of the core's hot loops for any command; `MVISION_GEMM=crate` lets
//!   large GEMMs go to the `gemm` crate instead of the core's own kernels, which `libmvision`
//!   runs);
//! * `filter` runs one core operation on a PNG/JPEG file;
//! * `demo` runs the whole CPU filter pipeline on a generated image and times it, then tracks
//!   an object with TLD through a generated sequence and writes an annotated GIF;
//! * `track` runs one tracker over one sequence (OTB folder, image folder or generated), with
//!   accuracy, FPS, OTB result files and annotated GIF/PNG output;
//! * `eval` runs several trackers over several sequences: tables and OTB precision/success plots;
//! * `infer` runs a `.mvnn` network on `.npy` tensors; `classify` runs a classifier on an image;
//! * `bench` measures filter throughput (`bench filter`) and the CNN core (`bench gemm`,
//!   `bench conv`, `bench net`), for BENCHMARKS.md;
//! * `convert` turns an ONNX model into a `.mvnn` file for the CPU inference engine.
//!
//! This file holds the command-line definitions and the dispatch; each command lives in its own
//! module, and the image operations they share live in `ops`. Every failure is reported as one
//! `error: …` line on stderr with exit status 1 (2 for command-line syntax, from clap).

mod bench;
mod classify;
mod convert;
mod demo;
mod eval;
mod filter;
mod imageio;
mod infer;
mod info;
mod nn;
mod ops;
mod track;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use demo::DemoSize;
use filter::KernelSpec;
use ops::BorderMode;

#[derive(Parser, Debug)]
#[command(
    name = "mvision",
    version = mvision_core::VERSION,
    about = "libmvision command-line tool: inspect the build, filter images, track objects, run the demo"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Show the version, build features, compute backends and the CPU device.
    Info {
        /// Print one JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Apply one filter to an image file (processed as 8-bit gray).
    #[command(long_about = FILTER_LONG_ABOUT)]
    Filter(FilterArgs),
    /// Run the CPU filter pipeline and a TLD tracking run on generated input; writes PNGs, a GIF
    /// and prints timings and accuracy.
    #[command(long_about = DEMO_LONG_ABOUT)]
    Demo(DemoArgs),
    /// Track an object through a sequence; prints FPS and, with ground truth, accuracy.
    #[command(long_about = TRACK_LONG_ABOUT)]
    Track(track::TrackArgs),
    /// Evaluate trackers on OTB sequences: tables and precision/success plots.
    #[command(long_about = EVAL_LONG_ABOUT)]
    Eval(eval::EvalArgs),
    /// Run a .mvnn network on .npy tensors and write its outputs as .npy.
    #[command(long_about = INFER_LONG_ABOUT)]
    Infer(infer::InferArgs),
    /// Classify an image with a .mvnn network: the top-k classes and their probabilities.
    #[command(long_about = CLASSIFY_LONG_ABOUT)]
    Classify(classify::ClassifyArgs),
    /// Measure throughput: `bench filter` (the core's filters), `bench gemm`, `bench conv`,
    /// `bench net` (the CNN core).
    Bench(bench::BenchArgs),
    /// Convert an ONNX model to a .mvnn file; prints nodes, tensors, weight and arena bytes.
    Convert(convert::ConvertArgs),
}

const FILTER_LONG_ABOUT: &str = "\
Apply one filter to an image file.

The input (PNG or JPEG) is converted to 8-bit gray (colour by Rec. 709 luma, alpha dropped);
the output is written as 8-bit gray PNG or JPEG, chosen by OUT's extension. By default the
fixed-point u8 path runs (the bit-exact reference); --float runs the f32 path on the same
pixels and rounds the result back to 8 bits.

Ops and the options they take:
  gaussian  --sigma S (default 1 when --ksize is also absent), --ksize K (odd, <= 15; 0 or
            absent: 2*ceil(3*S)+1, so S > 2.33 needs --ksize), --border
  box       --ksize K (odd, <= 15, default 3), --border
  sobel     --border, --dx FILE, --dy FILE. OUT is the gradient magnitude / 4, saturated
            at 255; dx and dy are written as 128 + d/8 (zero is mid-gray).
  kernel    --kernel \"a,b,c;d,e,f;g,h,i\" (square, odd size <= 15, correlation, not
            flipped), --border. The u8 path quantises the coefficients with 14 fractional
            bits, or fewer when the kernel's gain needs the headroom.
  pyrdown   --border. One Gaussian pyramid level: ceil(w/2) x ceil(h/2).
  resize    --width W and/or --height H (the other keeps the aspect ratio). Bilinear.

--border is replicate, reflect101 (default) or constant[:V] (V in 0..=255, default 0).

Prints one line: op, sizes, time and Mpixel/s (output pixels). The time is that of the core
call alone (no file I/O or conversions): the fastest of up to 5 runs after a warm-up run.";

const INFER_LONG_ABOUT: &str = "\
Run a .mvnn network on tensors from .npy files and write its outputs as .npy files.

Give --input once per model input and --output once per model output, in the model's order.
Inputs are little-endian float32 .npy (C or Fortran order) of rank <= 4 whose shape equals the
model input's NCHW shape after trailing 1s are dropped from both: for a 1x10x1x1 input,
(1, 10), (1, 10, 1) and (1, 10, 1, 1) are accepted, (10,) is not.

Outputs are written as float32 C-order .npy with the rank the graph gives them (the file stores
every tensor as 4-D, an ONNX rank-r tensor padded with trailing 1s): graph inputs have their
.npy's rank; Conv, pooling, Pad, BatchNorm and ReduceMean give 4; Flatten and fully connected
layers 2; element-wise ops, Softmax and Concat keep their input's rank; MatMul its recorded
rank. So 1x4x1x1 from a convolution is written (1, 4, 1, 1), after a fully connected layer
(1, 4). Where the rank is unknown (Reshape, Constant), the 4-D shape less trailing 1s, at
least 2-D.

Prints each output's shape and the forward time (median of --repeat runs, single thread).";

const CLASSIFY_LONG_ABOUT: &str = "\
Classify an image with a .mvnn network and print the top-k classes as `rank label score`.

The model must have one input of 1 x C x H x W with C = 1 (the image is converted to 8-bit gray,
Rec. 709 luma) or C = 3 (RGB, channels in R, G, B order). Each channel is resized bilinearly
to H x W (the core's resize: pixel-centre aligned, as OpenCV's INTER_LINEAR, no
antialiasing), then every 0..255 value p becomes p*S + O (--scale, default 1/255; --offset,
default 0). The first output, flattened, holds the class scores: when they are already
probabilities (each in [0, 1], summing to 1 +- 1e-3) they are printed as they are, otherwise
softmax is applied first; the first line says which. --labels names the classes, one per line.

--tiles: IMG is a sheet of tiles of exactly the input's W x H, row-major (for example
models/data/digits_heldout.png, 20 x 18 digits of 8 x 8); every tile is classified without
resizing and printed as `tile T label score`. --truth FILE (one class index per tile and line)
adds the top-1 and top-k accuracy.";

const DEMO_LONG_ABOUT: &str = "\
Run the CPU filter pipeline and a tracking run on generated input.

Filtering: the input is synthetic and deterministic (gradient, shapes, checkerboard, seeded noise), so
no files are needed. Steps: Gaussian blur (sigma 2), 5x5 box blur, Sobel magnitude, 3x3
sharpen kernel, pyramid levels down to about 40 px, bilinear resize to half size, integral
images with the mean and variance of the central window. Every image result is written as a
PNG to --out.

Tracking: TLD (or the --tracker given) follows a textured object that moves, scales
(0.7x-1.4x) and is briefly hidden by a sweeping panel over a textured background (generated,
exact ground truth). The annotated run is written to --out as track.gif (red: tracker, green:
ground truth); FPS (tracker time only) and the OTB success AUC and precision@20px are
printed.";

const TRACK_LONG_ABOUT: &str = "\
Track one object through a sequence.

--seq takes an OTB folder (img/*.jpg|png sorted by name, groundtruth_rect.txt with x,y,w,h
rows separated by commas, tabs or spaces; NaN rows mark the target absent), a plain folder of
images (no ground truth: --init is required), or `synthetic` (the generated sequence, also
--synthetic). The tracker starts on frame 1 from --init or the first ground-truth row.

Prints frames and FPS (time inside the tracker's init and update only; decoding and drawing
excluded) and, with ground truth, the OTB success AUC (mean of the share of frames with IoU >
t, t = 0, 0.05, ..., 1) and precision@20px (share of frames with centre error <= 20 px); a frame
where both truth and result say absent scores IoU 1, error 0; one where only one does scores 0
and fails precision. --json prints only one JSON object (tracker, sequence, frames, fps,
success_auc, precision20 - null without ground truth - and more).

--out DIR writes DIR/<sequence>_<tracker>.txt, one x,y,w,h row per frame (NaN,NaN,NaN,NaN when
absent). --save-gif / --save-frames draw the result (red), the ground truth (green) and with
--draw-detections the detections (light blue). Trackers: tld, kcf, kcfdp (KCF with EdgeBoxes
proposals: follows scale and aspect-ratio change) and static (reports the initial box on every
frame: the lower bound any tracker should beat).";

const EVAL_LONG_ABOUT: &str = "\
Evaluate trackers on OTB sequences.

Each DIR is an OTB sequence, a folder of OTB sequences, or `synthetic`. Every tracker of
--trackers runs on every sequence from its first ground-truth box. Prints a Markdown table per
sequence and one pooled over all frames (frame-weighted), with frames, success AUC,
precision@20px and FPS (tracker time only); writes the OTB plots precision.png and success.png
(pooled curves, one line per tracker) and the result files <tracker>/<sequence>.txt to --out.
--json adds one JSON object as the last line.";

/// The operations `mvision filter --op` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum FilterOp {
    /// Gaussian blur.
    Gaussian,
    /// Mean over a square window.
    Box,
    /// Sobel gradient magnitude (and optionally derivatives).
    Sobel,
    /// Dense convolution with a kernel given by --kernel.
    Kernel,
    /// One Gaussian pyramid level down.
    Pyrdown,
    /// Bilinear resize.
    Resize,
}

impl FilterOp {
    /// The name as typed on the command line, for messages.
    fn name(self) -> &'static str {
        match self {
            FilterOp::Gaussian => "gaussian",
            FilterOp::Box => "box",
            FilterOp::Sobel => "sobel",
            FilterOp::Kernel => "kernel",
            FilterOp::Pyrdown => "pyrdown",
            FilterOp::Resize => "resize",
        }
    }
}

#[derive(Args, Debug)]
struct FilterArgs {
    /// Operation to run.
    #[arg(long, value_enum)]
    op: FilterOp,
    /// Gaussian standard deviation in pixels.
    #[arg(long, allow_negative_numbers = true)]
    sigma: Option<f32>,
    /// Kernel side length in pixels (odd, at most 15).
    #[arg(long)]
    ksize: Option<usize>,
    /// Border mode: replicate, reflect101 (default), constant (value 0) or constant:V.
    #[arg(long, value_name = "MODE")]
    border: Option<BorderMode>,
    /// Kernel coefficients, rows separated by ';', values by ','.
    #[arg(long, value_name = "ROWS", allow_hyphen_values = true)]
    kernel: Option<KernelSpec>,
    /// Resize target width in pixels.
    #[arg(long)]
    width: Option<usize>,
    /// Resize target height in pixels.
    #[arg(long)]
    height: Option<usize>,
    /// Run the f32 path instead of the fixed-point u8 path.
    #[arg(long)]
    float: bool,
    /// Sobel only: also write the x derivative (as 128 + dx/8).
    #[arg(long, value_name = "FILE")]
    dx: Option<PathBuf>,
    /// Sobel only: also write the y derivative (as 128 + dy/8).
    #[arg(long, value_name = "FILE")]
    dy: Option<PathBuf>,
    /// Input image (PNG or JPEG).
    #[arg(value_name = "IN")]
    input: PathBuf,
    /// Output image; .png, .jpg or .jpeg.
    #[arg(value_name = "OUT")]
    output: PathBuf,
}

#[derive(Args, Debug)]
struct DemoArgs {
    /// Directory for the output PNGs (created if missing).
    #[arg(long, value_name = "DIR", default_value = "mvision-demo-out")]
    out: PathBuf,
    /// Size of the generated image, WxH.
    #[arg(long, value_name = "WxH", default_value = "640x480")]
    size: DemoSize,
    /// Frames of the generated tracking sequence (320x240).
    #[arg(long, value_name = "N", default_value_t = 300)]
    track_frames: usize,
    /// Tracker of the tracking part (tld, kcf, kcfdp, or static: the initial box on every frame).
    #[arg(long, value_name = "NAME", default_value = "tld")]
    tracker: String,
}

/// Applies `MVISION_CPU` (a level name: `baseline`, `x86-64-v3`, `x86-64-v4`), which caps the
/// instruction set of the core's hot loops for this process (results are identical; speed is
/// not), and `MVISION_GEMM` (`own`, the default: every GEMM on the core's own kernels, as in
/// `libmvision`, so that what this tool measures is what the library runs; `crate`: large
/// products through the `gemm` crate). An unknown value is an error rather than silently
/// ignored.
fn apply_cpu_env() -> anyhow::Result<()> {
    if let Some(v) = std::env::var_os("MVISION_CPU") {
        let name = v.to_string_lossy();
        let level = mvision_core::cpu::Level::parse(&name).ok_or_else(|| {
            anyhow::anyhow!("MVISION_CPU={name}: expected baseline, x86-64-v3 or x86-64-v4")
        })?;
        mvision_core::cpu::set_cap(level);
    }
    let gemm = std::env::var("MVISION_GEMM").unwrap_or_else(|_| "own".into());
    match gemm.as_str() {
        "own" => mvision_core::nn::gemm::set_gemm_crate(false),
        "crate" => mvision_core::nn::gemm::set_gemm_crate(true),
        other => anyhow::bail!("MVISION_GEMM={other}: expected own or crate"),
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(e) = apply_cpu_env() {
        let _ = writeln!(std::io::stderr(), "error: {e:#}");
        return ExitCode::FAILURE;
    }
    let mut stdout = std::io::stdout().lock();
    let result = match &cli.command {
        Command::Info { json } => info::run(*json, &mut stdout),
        Command::Filter(args) => filter::run(args, &mut stdout),
        Command::Demo(args) => demo::run(args, &mut stdout),
        Command::Track(args) => track::run(args, &mut stdout),
        Command::Eval(args) => eval::run(args, &mut stdout),
        Command::Infer(args) => infer::run(args, &mut stdout),
        Command::Classify(args) => classify::run(args, &mut stdout),
        Command::Bench(args) => bench::run(args, &mut stdout),
        Command::Convert(args) => convert::run(args, &mut stdout),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // `{:#}` prints the whole context chain on one line: "what we tried: why it failed".
            let _ = writeln!(std::io::stderr(), "error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
