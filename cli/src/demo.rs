//! `mvision demo`: the whole CPU pipeline on a generated test image, then TLD tracking on a
//! generated sequence, so the library can be seen working (and timed) on a machine with no
//! image files and no GPU.
//!
//! The filter input is deterministic — a smooth gradient, a few filled shapes with hard edges, a
//! checkerboard patch and seeded noise — so two runs, or two machines, produce byte-identical
//! PNGs and only the timings differ. The tracking part runs TLD on `mvision_track`'s synthetic
//! sequence (exact ground truth) and writes the annotated run as `track.gif`.

use std::fmt;
use std::io::Write;
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use image::GrayImage;
use mvision_core::image::{ImageView, ImageViewMut};
use mvision_core::integral::{integral_size, integral_u8, IntegralImage, MAX_INTEGRAL_PIXELS};
use mvision_core::rng::SplitMix64;
use mvision_core::Rect;

use mvision_track::draw::{GifOptions, GifWriter};
use mvision_track::{RunOptions, Sequence, SyntheticParams, SyntheticSequence};

use crate::imageio;
use crate::ops::{self, BorderMode, Precision, Timed};
use crate::track::{self, Annotations};
use crate::DemoArgs;

/// GIF of the tracking demo: every second frame, shown 8/100 s, so it plays at real speed
/// (about 12 frames/s of a 25 frames/s sequence) and stays small.
const DEMO_GIF: GifOptions = GifOptions {
    delay_cs: 8,
    every_nth: 2,
    scale: 1.0,
    quantize_speed: 10,
};

/// Pyramid levels are generated while the new level's larger side is at least this many
/// pixels (640 × 480 gives four levels, down to 40 × 30).
const PYRAMID_MIN_SIDE_PX: usize = 40;

/// Smallest demo image side: below this the shapes degenerate to single pixels.
const MIN_SIDE_PX: usize = 8;

/// Seed of the noise generator; fixed so every run writes the same input image.
const NOISE_SEED: u64 = 0x6d76_6973_696f_6e21;

/// Noise amplitude: uniform integers in `−NOISE_AMPLITUDE..=NOISE_AMPLITUDE` gray levels, enough
/// to make the blurs visibly smooth something without hiding the shapes.
const NOISE_AMPLITUDE: i32 = 8;

/// The 3 × 3 sharpening kernel (identity plus a negative Laplacian); its coefficients are
/// integers, so Q14 quantisation is exact.
const SHARPEN_3X3: [f32; 9] = [0.0, -1.0, 0.0, -1.0, 5.0, -1.0, 0.0, -1.0, 0.0];

/// σ of the demo's Gaussian blur, in pixels.
const GAUSSIAN_SIGMA_PX: f32 = 2.0;

/// Side of the demo's box blur window, in pixels.
const BOX_KSIZE: usize = 5;

/// Demo image size, parsed from `WxH`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DemoSize {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
}

impl FromStr for DemoSize {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let (w, h) = s
            .split_once(['x', 'X'])
            .ok_or_else(|| format!("'{s}' is not a size: use WxH, for example 640x480"))?;
        let side = |v: &str| {
            v.trim()
                .parse::<usize>()
                .map_err(|_| format!("'{v}' in '{s}' is not a whole number of pixels"))
        };
        let (width, height) = (side(w)?, side(h)?);
        if width < MIN_SIDE_PX || height < MIN_SIDE_PX {
            return Err(format!(
                "{width}x{height} is too small: each side must be at least {MIN_SIDE_PX} px"
            ));
        }
        // The u32 integral image (one of the demo's steps) caps the pixel count.
        if (width as u64).saturating_mul(height as u64) > MAX_INTEGRAL_PIXELS {
            return Err(format!(
                "{width}x{height} is too large: the demo's integral image holds at most \
                 {MAX_INTEGRAL_PIXELS} pixels"
            ));
        }
        Ok(Self { width, height })
    }
}

impl fmt::Display for DemoSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.width, self.height)
    }
}

/// Uniform in `−a..=a` (the modulo bias, under 2⁻⁵⁹, does not matter for noise).
fn symmetric(rng: &mut SplitMix64, a: i32) -> i32 {
    (rng.next_u64() % (2 * a as u64 + 1)) as i32 - a
}

/// A plane of `i32` gray values, so shapes can be drawn before noise and saturation.
struct Canvas {
    width: i64,
    height: i64,
    px: Vec<i32>,
}

impl Canvas {
    /// Sets every pixel of `[x0, x1) × [y0, y1)` (clipped to the canvas) to `f(x, y)`.
    fn fill(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, f: impl Fn(i64, i64) -> i32) {
        for y in y0.max(0)..y1.min(self.height) {
            for x in x0.max(0)..x1.min(self.width) {
                self.px[(y * self.width + x) as usize] = f(x, y);
            }
        }
    }
}

/// The smooth background of a `w × h` image: a diagonal ramp from 40 to 220.
fn background(x: i64, y: i64, w: i64, h: i64) -> i32 {
    (40 + 120 * x / w + 60 * y / h) as i32
}

/// The deterministic test image. Every feature scales with the image size, so small test
/// sizes still contain every shape.
pub fn synthetic_image(width: usize, height: usize) -> GrayImage {
    let (w, h) = (width.max(1) as i64, height.max(1) as i64);
    let mut c = Canvas {
        width: w,
        height: h,
        px: vec![0; (w * h) as usize],
    };
    c.fill(0, 0, w, h, |x, y| background(x, y, w, h));
    // A bright and a dark rectangle: straight edges in both directions.
    c.fill(w / 10, h / 6, 3 * w / 10, h / 2, |_, _| 235);
    c.fill(6 * w / 10, 6 * h / 10, 9 * w / 10, 9 * h / 10, |_, _| 20);
    // A checkerboard patch: high frequencies for the blurs to remove.
    let cell = (w.min(h) / 24).max(2);
    c.fill(6 * w / 10, h / 8, 9 * w / 10, h / 2, |x, y| {
        if (x / cell + y / cell) % 2 == 0 {
            10
        } else {
            245
        }
    });
    // A filled disc: edges in every orientation for Sobel.
    let (cx, cy, r) = (w * 4 / 10, h * 7 / 10, w.min(h) / 6);
    c.fill(cx - r, cy - r, cx + r + 1, cy + r + 1, |x, y| {
        let (dx, dy) = (x - cx, y - cy);
        if dx * dx + dy * dy <= r * r {
            180
        } else {
            background(x, y, w, h)
        }
    });
    let mut rng = SplitMix64(NOISE_SEED);
    let mut out = GrayImage::new(w as u32, h as u32);
    for (o, &v) in out.iter_mut().zip(&c.px) {
        *o = (v + symmetric(&mut rng, NOISE_AMPLITUDE)).clamp(0, 255) as u8;
    }
    out
}

/// One row of the timing table.
struct Step {
    name: String,
    size: (usize, usize),
    elapsed: Duration,
    runs: u32,
}

/// Collects timing rows and the files written, so the report is printed in one place.
struct Run<'a> {
    dir: &'a Path,
    steps: Vec<Step>,
    files: Vec<String>,
}

impl Run<'_> {
    /// Saves `image` as `name` in the output directory and records it.
    fn save(&mut self, image: &GrayImage, name: &str) -> Result<()> {
        imageio::save_gray(image, &self.dir.join(name))?;
        self.files.push(name.to_string());
        Ok(())
    }

    /// Records a timed step and saves its image.
    fn image_step(&mut self, name: &str, timed: Timed<GrayImage>, file: &str) -> Result<()> {
        self.steps.push(Step {
            name: name.to_string(),
            size: ops::dims(&timed.output),
            elapsed: timed.elapsed,
            runs: timed.runs,
        });
        self.save(&timed.output, file)
    }
}

/// Mean and variance of a window, from the integral images and, as a cross-check, directly.
struct WindowStats {
    rect: Rect,
    mean: f64,
    variance: f64,
    direct_mean: f64,
    direct_variance: f64,
}

/// The central window (half the width and height) of `image`.
fn central_window(width: usize, height: usize) -> Rect {
    let (w, h) = (width as i32, height as i32);
    Rect::new(w / 4, h / 4, (w / 2).max(1), (h / 2).max(1))
}

/// Integral images of `src` (timed) and the central window's statistics from them.
fn integral_step(src: &GrayImage) -> Result<(Timed<(usize, usize)>, WindowStats)> {
    let (w, h) = ops::dims(src);
    let (iw, ih) = integral_size(w, h);
    let mut sum = vec![0u32; iw * ih];
    let mut sqsum = vec![0u64; iw * ih];
    let src_view = ImageView::packed(src.as_raw(), w, h)?;
    let mut sum_view = ImageViewMut::packed(&mut sum, iw, ih)?;
    let mut sq_view = ImageViewMut::packed(&mut sqsum, iw, ih)?;
    let (elapsed, runs) =
        ops::time_best(|| integral_u8(&src_view, &mut sum_view, Some(&mut sq_view)))?;

    let table = IntegralImage::new(sum_view.as_view(), Some(sq_view.as_view()))?;
    let rect = central_window(w, h);
    let mean = table.window_mean(rect)?;
    let variance = table.window_variance(rect)?;

    // The same statistics the slow way, with the same exact-integer formula.
    let (x0, y0) = (rect.x as usize, rect.y as usize);
    let (mut s, mut q) = (0u64, 0u64);
    for y in y0..y0 + rect.height as usize {
        for &p in &src.as_raw()[y * w + x0..y * w + x0 + rect.width as usize] {
            s += u64::from(p);
            q += u64::from(p) * u64::from(p);
        }
    }
    let n = rect.area() as u128;
    let direct_mean = s as f64 / n as f64;
    let direct_variance = (n * q as u128 - (s as u128).pow(2)) as f64 / (n * n) as f64;

    Ok((
        Timed {
            output: (iw, ih),
            elapsed,
            runs,
        },
        WindowStats {
            rect,
            mean,
            variance,
            direct_mean,
            direct_variance,
        },
    ))
}

/// Runs `mvision demo`, writing PNGs into `args.out` and the report to `out`.
pub fn run(args: &DemoArgs, out: &mut impl Write) -> Result<()> {
    let (w, h) = (args.size.width, args.size.height);
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create output directory '{}'", args.out.display()))?;
    let mut run = Run {
        dir: &args.out,
        steps: Vec::new(),
        files: Vec::new(),
    };
    let border = BorderMode::Reflect101;
    let u8p = Precision::U8;

    let input = synthetic_image(w, h);
    run.save(&input, "input.png")?;

    let gauss =
        ops::gaussian(&input, 0, GAUSSIAN_SIGMA_PX, border, u8p).context("gaussian blur failed")?;
    run.image_step(
        &format!("gaussian (sigma {GAUSSIAN_SIGMA_PX})"),
        gauss,
        "gaussian.png",
    )?;

    let boxed = ops::box_blur(&input, BOX_KSIZE, border, u8p).context("box blur failed")?;
    run.image_step(&format!("box {BOX_KSIZE}x{BOX_KSIZE}"), boxed, "box.png")?;

    let grad = ops::sobel(&input, border, u8p).context("sobel failed")?;
    let magnitude = Timed {
        output: grad.output.magnitude_u8(),
        elapsed: grad.elapsed,
        runs: grad.runs,
    };
    run.image_step("sobel + magnitude", magnitude, "sobel_magnitude.png")?;

    let sharp = ops::dense(&input, 3, &SHARPEN_3X3, border, u8p).context("sharpen failed")?;
    run.image_step("sharpen 3x3 (Q14)", sharp, "sharpen.png")?;

    let mut level = input.clone();
    for i in 1.. {
        let (lw, lh) = ops::dims(&level);
        let (nw, nh) = mvision_core::pyramid::pyr_down_size(lw, lh);
        if nw.max(nh) < PYRAMID_MIN_SIDE_PX {
            break;
        }
        let down = ops::pyr_down(&level, border, u8p).context("pyramid level failed")?;
        level = down.output.clone();
        run.image_step(
            &format!("pyramid level {i}"),
            down,
            &format!("pyramid_{i}.png"),
        )?;
    }

    let half = ops::resize_bilinear(&input, (w / 2).max(1), (h / 2).max(1), u8p)
        .context("resize failed")?;
    run.image_step("resize bilinear 1/2", half, "resize_half.png")?;

    let (integral, stats) = integral_step(&input).context("integral image failed")?;
    run.steps.push(Step {
        name: "integral + squared".to_string(),
        size: integral.output,
        elapsed: integral.elapsed,
        runs: integral.runs,
    });
    if (stats.mean - stats.direct_mean).abs() > 1e-9
        || (stats.variance - stats.direct_variance).abs() > 1e-6 * stats.direct_variance.max(1.0)
    {
        bail!(
            "integral-image window statistics disagree with a direct sum: mean {} vs {}, \
             variance {} vs {}",
            stats.mean,
            stats.direct_mean,
            stats.variance,
            stats.direct_variance
        );
    }

    report(out, args, &run, &stats).context("cannot write to stdout")?;
    tracking_demo(args, out)
}

/// Tracks with TLD through the generated sequence, writes `track.gif` and prints FPS and
/// accuracy.
fn tracking_demo(args: &DemoArgs, out: &mut impl Write) -> Result<()> {
    let seq = SyntheticSequence::new(SyntheticParams {
        frames: args.track_frames,
        ..SyntheticParams::default()
    })?;
    let (w, h) = seq.size();
    let hidden = seq
        .ground_truth()
        .map_or(0, |g| g.iter().filter(|b| b.is_none()).count());
    writeln!(out)?;
    writeln!(
        out,
        "tracking: {} on a generated {w}x{h} sequence of {} frames (a textured object \
         moving and scaling 0.7x-1.4x over a textured background, fully hidden on {hidden} frames)",
        args.tracker,
        seq.len()
    )?;
    out.flush()?;
    let gif_path = args.out.join("track.gif");
    let gif = GifWriter::create(&gif_path, w, h, DEMO_GIF)?;
    let options = RunOptions {
        progress: true,
        ..RunOptions::default()
    };
    let annotations = Annotations {
        gif: Some(gif),
        ..Annotations::default()
    };
    let (result, gif_frames) =
        track::track(&args.tracker, &seq, &options, annotations).context("tracking demo failed")?;
    writeln!(out, "{}", track::speed_line(&result))?;
    writeln!(out, "{}", track::accuracy_line(&result))?;
    writeln!(
        out,
        "wrote {} ({} frames; red: {}, green: ground truth)",
        gif_path.display(),
        gif_frames.unwrap_or(0),
        args.tracker
    )?;
    Ok(())
}

/// Prints the timing table, the window statistics and the files written.
fn report(
    out: &mut impl Write,
    args: &DemoArgs,
    run: &Run<'_>,
    stats: &WindowStats,
) -> std::io::Result<()> {
    writeln!(
        out,
        "mvision {} demo: synthetic {} gray image, CPU, u8 fixed-point path",
        mvision_core::VERSION,
        args.size
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "{:<22} {:>11} {:>10} {:>10} {:>5}",
        "step", "output", "ms", "Mpixel/s", "runs"
    )?;
    let mut total = Duration::ZERO;
    for s in &run.steps {
        let (ms, rate) = ops::format_timing(s.size.0 * s.size.1, s.elapsed);
        let size = format!("{}x{}", s.size.0, s.size.1);
        writeln!(
            out,
            "{:<22} {:>11} {:>10} {:>10} {:>5}",
            s.name, size, ms, rate, s.runs
        )?;
        total += s.elapsed;
    }
    writeln!(
        out,
        "{:<22} {:>11} {:>10.3}",
        "total",
        "",
        total.as_secs_f64() * 1e3
    )?;
    writeln!(
        out,
        "(ms: fastest timed run of the core call(s) after a warm-up; Mpixel/s: output pixels)"
    )?;
    writeln!(out)?;
    let r = stats.rect;
    writeln!(
        out,
        "central window x={} y={} {}x{}: mean {:.3}, variance {:.3}, std dev {:.3} \
         (integral image; matches a direct sum)",
        r.x,
        r.y,
        r.width,
        r.height,
        stats.mean,
        stats.variance,
        stats.variance.sqrt()
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "wrote {} files to {}:",
        run.files.len(),
        args.out.display()
    )?;
    for f in &run.files {
        writeln!(out, "  {f}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_within_limits() {
        assert_eq!(
            "640x480".parse(),
            Ok(DemoSize {
                width: 640,
                height: 480
            })
        );
        assert!("96X64".parse::<DemoSize>().is_ok());
        assert!("640".parse::<DemoSize>().is_err());
        assert!("4x4".parse::<DemoSize>().is_err());
        assert!("5000x5000".parse::<DemoSize>().is_err());
    }

    #[test]
    fn synthetic_image_is_deterministic_and_uses_the_full_range() {
        let a = synthetic_image(64, 48);
        assert_eq!(a, synthetic_image(64, 48));
        let (lo, hi) = a
            .as_raw()
            .iter()
            .fold((255, 0), |(lo, hi), &p| (lo.min(p), hi.max(p)));
        assert!(lo < 30 && hi > 225, "range {lo}..{hi}");
    }
}
