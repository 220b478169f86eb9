//! `mvision classify`: an image through a classification network, top-k classes printed.
//!
//! The image (PNG or JPEG) is converted to the model input's channel count (1: 8-bit gray by
//! Rec. 709 luma; 3: RGB, in R, G, B channel order), each channel resized bilinearly to the
//! input's H×W with the core's `resize_bilinear_f32` (pixel-centre aligned, OpenCV's
//! `INTER_LINEAR` mapping, no antialiasing), then every 0..255 value `p` becomes `p·S + O`.
//! The first output, flattened, is taken as the class scores: if they already are
//! probabilities (all in [0, 1], sum 1 ± 1e-3) they are printed as they are, otherwise softmax
//! is applied first; the report says which.

use std::io::Write;
use std::path::PathBuf;
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
    let mut runner = Runner::new(*model.graph(), args.workspace_budget)?;
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
    let planes: Vec<Vec<f32>> = if c == 1 {
        let g = load_gray(&args.image)?;
        let (sw, sh) = (g.width() as usize, g.height() as usize);
        let p: Vec<f32> = g.as_raw().iter().map(|&v| v as f32).collect();
        vec![resize_plane(&p, sw, sh, w, h)?]
    } else {
        let rgb = load_rgb(&args.image)?;
        let (sw, sh) = (rgb.width() as usize, rgb.height() as usize);
        (0..3)
            .map(|ch| {
                let p: Vec<f32> = rgb
                    .as_raw()
                    .iter()
                    .skip(ch)
                    .step_by(3)
                    .map(|&v| v as f32)
                    .collect();
                resize_plane(&p, sw, sh, w, h)
            })
            .collect::<Result<_>>()?
    };
    let input: Vec<f32> = planes
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
        if softmaxed {
            "softmax applied (the output did not sum to 1)"
        } else {
            "the output is already probabilities"
        }
    )?;
    for (rank, (i, score)) in top_k(&p, args.top).into_iter().enumerate() {
        let label = labels
            .get(i)
            .filter(|l| !l.is_empty())
            .cloned()
            .unwrap_or_else(|| i.to_string());
        writeln!(out, "{} {label} {score:.6}", rank + 1)?;
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
