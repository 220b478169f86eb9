//! `mvision classify`: an image through a classification network, top-k classes printed.
//!
//! The image (PNG or JPEG) is converted to the model input's channel count (1: 8-bit gray by
//! Rec. 709 luma; 3: RGB, in R, G, B channel order), each channel resized bilinearly to the
//! input's H×W with the core's `resize_bilinear_f32` (pixel-centre aligned, OpenCV's
//! `INTER_LINEAR` mapping, no antialiasing), then every 0..255 value `p` becomes `p·S + O`.
//! The first output, flattened, is taken as the class scores: if they already are
//! probabilities (all in [0, 1], sum 1 ± 1e-3) they are printed as they are, otherwise softmax
//! is applied first; the report says which.
//!
//! With `--tiles` the image is a sheet of tiles of exactly the input's W×H (row-major, e.g.
//! `models/data/digits_heldout.png`, 20 × 18 digits of 8×8): each tile is classified without
//! resizing, and `--truth` (one class index per tile and line) gives the accuracy.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use mvision_core::image::{ImageView, ImageViewMut};
use mvision_core::resize::{resize_bilinear_f32, resize_scratch_len};

use crate::imageio::{load_gray, load_rgb};
use crate::nn::{dims_text, parse_model, read_model_file, Runner, DEFAULT_WORKSPACE_BYTES};

/// `mvision classify` arguments.
#[derive(Args, Debug)]
pub struct ClassifyArgs {
    /// The model (.mvnn): one input of 1 × (1 or 3) × H × W; the first output holds the scores.
    #[arg(long, value_name = "M.mvnn")]
    model: PathBuf,
    /// The image (PNG or JPEG).
    #[arg(long, value_name = "IMG")]
    image: PathBuf,
    /// How many classes to print, best first.
    #[arg(long, value_name = "K", default_value_t = 5)]
    top: usize,
    /// Scale S of the pixel mapping p·S + O (p in 0..255).
    #[arg(long, value_name = "S", default_value_t = 1.0 / 255.0, allow_negative_numbers = true)]
    scale: f32,
    /// Offset O of the pixel mapping p·S + O.
    #[arg(
        long,
        value_name = "O",
        default_value_t = 0.0,
        allow_negative_numbers = true
    )]
    offset: f32,
    /// Class names, one per line in class order (classes without a line print their index).
    #[arg(long, value_name = "FILE")]
    labels: Option<PathBuf>,
    /// Most working memory one convolution may use, bytes.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_WORKSPACE_BYTES)]
    workspace_budget: usize,
    /// Most memory for Winograd and blocked-convolution weights transformed once at load
    /// instead of on every pass, bytes (each 3×3 Winograd layer so run takes 16/9 of its
    /// weights, each blocked layer its weights; 0: none).
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    prepared_budget: usize,
    /// IMG is a sheet of tiles of exactly the model input's W x H, row-major: classify each
    /// tile (no resize) and print its top-1 class.
    #[arg(long)]
    tiles: bool,
    /// With --tiles: the true class index of every tile, one per line; prints the top-1 (and
    /// top-k) accuracy.
    #[arg(long, value_name = "FILE", requires = "tiles")]
    truth: Option<PathBuf>,
}

/// Resizes one `sw × sh` f32 plane to `dw × dh` with the core's bilinear resize.
fn resize_plane(src: &[f32], sw: usize, sh: usize, dw: usize, dh: usize) -> Result<Vec<f32>> {
    let mut dst = vec![0.0; dw * dh];
    let mut scratch = vec![0i32; resize_scratch_len(dw)];
    let s = ImageView::new(src, sw, sh, sw).map_err(|e| anyhow!("{e}"))?;
    let mut d = ImageViewMut::new(&mut dst, dw, dh, dw).map_err(|e| anyhow!("{e}"))?;
    resize_bilinear_f32(&s, &mut d, &mut scratch).map_err(|e| anyhow!("resize failed: {e}"))?;
    Ok(dst)
}

/// The scores as probabilities, and whether softmax was applied.
pub fn probabilities(scores: &[f32]) -> (Vec<f32>, bool) {
    let sum: f64 = scores.iter().map(|&v| v as f64).sum();
    let already = scores.iter().all(|&v| (0.0..=1.0).contains(&v)) && (sum - 1.0).abs() <= 1e-3;
    if already {
        return (scores.to_vec(), false);
    }
    let max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f64> = scores.iter().map(|&v| ((v - max) as f64).exp()).collect();
    let total: f64 = e.iter().sum();
    (e.iter().map(|&v| (v / total) as f32).collect(), true)
}

/// The `top` best (index, probability) pairs, best first (ties: lower index first).
pub fn top_k(p: &[f32], top: usize) -> Vec<(usize, f32)> {
    let mut idx: Vec<usize> = (0..p.len()).collect();
    idx.sort_by(|&a, &b| p[b].total_cmp(&p[a]).then(a.cmp(&b)));
    idx.into_iter().take(top).map(|i| (i, p[i])).collect()
}

/// Runs `mvision classify`.
pub fn run(args: &ClassifyArgs, out: &mut impl Write) -> Result<()> {
    let labels: Vec<String> = match &args.labels {
        Some(path) => std::fs::read_to_string(path)
            .with_context(|| format!("cannot read labels '{}'", path.display()))?
            .lines()
            .map(|l| l.trim().to_string())
            .collect(),
        None => Vec::new(),
    };
    let bytes = read_model_file(&args.model)?;
    let model = parse_model(&bytes, &args.model)?;
    let mut runner = Runner::new(*model.graph(), args.workspace_budget, args.prepared_budget)?;
    if runner.graph().inputs.len() != 1 {
        bail!(
            "classify needs a model with one input; this one has {}",
            runner.graph().inputs.len()
        );
    }
    let [n, c, h, w] = runner.input_dims(0);
    if n != 1 || (c != 1 && c != 3) {
        bail!(
            "classify needs an input of 1 x 1 or 3 x H x W; the model's is {}",
            dims_text(&[n, c, h, w])
        );
    }
    let (planes, sw, sh) = load_planes(&args.image, c)?;
    let label_of = |i: usize| {
        labels
            .get(i)
            .filter(|l| !l.is_empty())
            .cloned()
            .unwrap_or_else(|| i.to_string())
    };
    if args.tiles {
        return run_tiles(args, &mut runner, &planes, (sw, sh), (w, h), &label_of, out);
    }
    let resized = planes
        .iter()
        .map(|p| resize_plane(p, sw, sh, w, h))
        .collect::<Result<Vec<_>>>()?;
    let input: Vec<f32> = resized
        .iter()
        .flatten()
        .map(|&p| p * args.scale + args.offset)
        .collect();
    let mut outputs = runner.output_buffers();
    let t = Instant::now();
    runner.run(&[&input], &mut outputs)?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let (p, softmaxed) = probabilities(&outputs[0]);
    writeln!(
        out,
        "{}: {} classes, {}; forward {ms:.3} ms",
        args.image.display(),
        p.len(),
        softmax_note(softmaxed)
    )?;
    for (rank, (i, score)) in top_k(&p, args.top).into_iter().enumerate() {
        writeln!(out, "{} {} {score:.6}", rank + 1, label_of(i))?;
    }
    Ok(())
}

fn softmax_note(softmaxed: bool) -> &'static str {
    if softmaxed {
        "softmax applied (the output did not sum to 1)"
    } else {
        "the output is already probabilities"
    }
}

/// The image's channels as `c` planes (1: gray, 3: R, G, B) of 0..255 values, with its size.
fn load_planes(path: &Path, c: usize) -> Result<(Vec<Vec<f32>>, usize, usize)> {
    if c == 1 {
        let g = load_gray(path)?;
        let p = g.as_raw().iter().map(|&v| v as f32).collect();
        return Ok((vec![p], g.width() as usize, g.height() as usize));
    }
    let rgb = load_rgb(path)?;
    let planes = (0..3)
        .map(|ch| {
            rgb.as_raw()
                .iter()
                .skip(ch)
                .step_by(3)
                .map(|&v| v as f32)
                .collect()
        })
        .collect();
    Ok((planes, rgb.width() as usize, rgb.height() as usize))
}

/// `--tiles`: classifies every `w × h` tile of the `sw × sh` sheet (row-major, no resize) and,
/// with `--truth`, reports the top-1 and top-k accuracy.
fn run_tiles(
    args: &ClassifyArgs,
    runner: &mut Runner<'_>,
    planes: &[Vec<f32>],
    (sw, sh): (usize, usize),
    (w, h): (usize, usize),
    label_of: &dyn Fn(usize) -> String,
    out: &mut impl Write,
) -> Result<()> {
    if sw % w != 0 || sh % h != 0 {
        bail!("--tiles: the image is {sw}x{sh}, not a whole number of {w}x{h} model inputs");
    }
    let (cols, rows) = (sw / w, sh / h);
    let truth: Option<Vec<usize>> = match &args.truth {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read --truth '{}'", path.display()))?;
            let v = text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| l.trim().parse::<usize>())
                .collect::<std::result::Result<Vec<_>, _>>()
                .with_context(|| {
                    format!("--truth '{}': one class index per line", path.display())
                })?;
            if v.len() != cols * rows {
                bail!(
                    "--truth '{}' has {} labels for {} tiles",
                    path.display(),
                    v.len(),
                    cols * rows
                );
            }
            Some(v)
        }
        None => None,
    };
    let mut input = vec![0.0f32; planes.len() * w * h];
    let mut outputs = runner.output_buffers();
    let (mut top1, mut topk, mut softmaxed_any) = (0usize, 0usize, false);
    for t in 0..cols * rows {
        let (x0, y0) = ((t % cols) * w, (t / cols) * h);
        for (dst, plane) in input.chunks_exact_mut(w * h).zip(planes) {
            for (y, row) in dst.chunks_exact_mut(w).enumerate() {
                let src = &plane[(y0 + y) * sw + x0..][..w];
                for (d, &p) in row.iter_mut().zip(src) {
                    *d = p * args.scale + args.offset;
                }
            }
        }
        runner.run(&[&input], &mut outputs)?;
        let (p, softmaxed) = probabilities(&outputs[0]);
        softmaxed_any |= softmaxed;
        let best = top_k(&p, args.top.max(1));
        let (i, score) = best[0];
        write!(out, "tile {t} {} {score:.6}", label_of(i))?;
        if let Some(truth) = &truth {
            let want = truth[t];
            top1 += usize::from(i == want);
            topk += usize::from(best.iter().any(|&(j, _)| j == want));
            if i != want {
                write!(out, " (truth {})", label_of(want))?;
            }
        }
        writeln!(out)?;
    }
    let n = cols * rows;
    writeln!(
        out,
        "{n} tiles of {w}x{h} from {}; {}",
        args.image.display(),
        softmax_note(softmaxed_any)
    )?;
    if truth.is_some() {
        let pct = |k: usize| 100.0 * k as f64 / n as f64;
        writeln!(out, "top-1 accuracy: {top1}/{n} ({:.2} %)", pct(top1))?;
        if args.top > 1 {
            writeln!(
                out,
                "top-{} accuracy: {topk}/{n} ({:.2} %)",
                args.top,
                pct(topk)
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probabilities_are_kept_and_logits_softmaxed() {
        let (p, soft) = probabilities(&[0.25, 0.5, 0.25]);
        assert_eq!((p, soft), (vec![0.25, 0.5, 0.25], false));
        let (p, soft) = probabilities(&[0.0, 0.0]);
        assert!(soft);
        assert_eq!(p, [0.5, 0.5]);
        // Sums to 1 but has a negative score: not probabilities.
        assert!(probabilities(&[1.5, -0.5]).1);
    }

    #[test]
    fn top_k_orders_by_score_then_index() {
        assert_eq!(
            top_k(&[0.1, 0.4, 0.4, 0.1], 3),
            [(1, 0.4), (2, 0.4), (0, 0.1)]
        );
        assert_eq!(top_k(&[0.3], 5), [(0, 0.3)]);
    }
}
