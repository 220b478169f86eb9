//! `mvision filter`: one operation on one image file, with the parameters checked up front so
//! every mistake gets a message that names the option to fix.

use std::io::Write;
use std::str::FromStr;

use anyhow::{anyhow, bail, Context, Result};
use mvision_core::filter::{gaussian_kernel_size, MAX_KERNEL_SIZE};
use mvision_core::Error;

use crate::imageio;
use crate::ops::{self, BorderMode, Precision};
use crate::{FilterArgs, FilterOp};

/// σ used when neither `--sigma` nor `--ksize` is given to `--op gaussian`.
const DEFAULT_SIGMA_PX: f32 = 1.0;

/// Window size used when `--ksize` is not given to `--op box`.
const DEFAULT_BOX_KSIZE: usize = 3;

/// A dense square kernel parsed from `"a,b,c;d,e,f;g,h,i"` (rows separated by `;`, values by
/// `,`, whitespace ignored).
#[derive(Clone, Debug, PartialEq)]
pub struct KernelSpec {
    /// Side length (odd, 1..=15).
    pub size: usize,
    /// `size²` row-major coefficients, all finite.
    pub coeffs: Vec<f32>,
}

impl FromStr for KernelSpec {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let mut rows: Vec<Vec<f32>> = Vec::new();
        for (r, row) in s.split(';').enumerate() {
            let mut values = Vec::new();
            for item in row.split(',') {
                let item = item.trim();
                let v: f32 = item.parse().map_err(|_| {
                    if item.is_empty() {
                        format!("row {} has an empty value", r + 1)
                    } else {
                        format!("'{item}' in row {} is not a number", r + 1)
                    }
                })?;
                if !v.is_finite() {
                    return Err(format!("'{item}' in row {} is not finite", r + 1));
                }
                values.push(v);
            }
            rows.push(values);
        }
        let size = rows.len();
        if let Some((r, row)) = rows.iter().enumerate().find(|(_, row)| row.len() != size) {
            return Err(format!(
                "the kernel must be square: {size} rows, but row {} has {} values",
                r + 1,
                row.len()
            ));
        }
        if size.is_multiple_of(2) || size > MAX_KERNEL_SIZE {
            return Err(format!(
                "the kernel is {size}x{size}; it must be odd-sized and at most \
                 {MAX_KERNEL_SIZE}x{MAX_KERNEL_SIZE} so it has a centre pixel"
            ));
        }
        Ok(Self {
            size,
            coeffs: rows.concat(),
        })
    }
}

/// The options each op reads; anything else given is an error rather than silently ignored,
/// since a forgotten `--op` change is the usual cause.
fn check_applicable(args: &FilterArgs) -> Result<()> {
    let op = args.op;
    let given = [
        ("--sigma", args.sigma.is_some(), op == FilterOp::Gaussian),
        (
            "--ksize",
            args.ksize.is_some(),
            matches!(op, FilterOp::Gaussian | FilterOp::Box),
        ),
        ("--border", args.border.is_some(), op != FilterOp::Resize),
        ("--kernel", args.kernel.is_some(), op == FilterOp::Kernel),
        ("--width", args.width.is_some(), op == FilterOp::Resize),
        ("--height", args.height.is_some(), op == FilterOp::Resize),
        ("--dx", args.dx.is_some(), op == FilterOp::Sobel),
        ("--dy", args.dy.is_some(), op == FilterOp::Sobel),
    ];
    for (name, present, applies) in given {
        if present && !applies {
            bail!("{name} does not apply to --op {}", op.name());
        }
    }
    Ok(())
}

/// `--ksize` must be odd and 1..=15; checked here so the message can say so instead of the
/// core's generic "invalid filter kernel".
fn check_ksize(ksize: usize) -> Result<()> {
    if ksize == 0 || ksize.is_multiple_of(2) || ksize > MAX_KERNEL_SIZE {
        bail!("--ksize must be odd and between 1 and {MAX_KERNEL_SIZE} (got {ksize})");
    }
    Ok(())
}

/// Checks `--sigma` and, when no `--ksize` is given, that the derived kernel (`2·⌈3σ⌉ + 1`)
/// fits the core's 15-pixel limit.
fn check_sigma(sigma: f32, ksize: Option<usize>) -> Result<()> {
    if !(sigma.is_finite() && sigma > 0.0) {
        bail!("--sigma must be a positive number (got {sigma})");
    }
    if ksize.is_none() && gaussian_kernel_size(sigma) == Err(Error::InvalidKernel) {
        bail!(
            "--sigma {sigma} is too large: sigma > 2.33 needs a kernel larger than \
             {MAX_KERNEL_SIZE} (2*ceil(3*sigma)+1 taps), the core's maximum; use a smaller \
             --sigma, or add --ksize {MAX_KERNEL_SIZE} to truncate the kernel"
        );
    }
    Ok(())
}

/// The resize target: both sides given, or one side with the other following the aspect
/// ratio (rounded, at least 1).
fn resize_target(args: &FilterArgs, src: (usize, usize)) -> Result<(usize, usize)> {
    if args.width == Some(0) || args.height == Some(0) {
        bail!("--width and --height must be positive");
    }
    let (sw, sh) = (src.0 as f64, src.1 as f64);
    let scaled = |n: usize, num: f64, den: f64| ((n as f64 * num / den).round() as usize).max(1);
    let (w, h) = match (args.width, args.height) {
        (Some(w), Some(h)) => (w, h),
        (Some(w), None) => (w, scaled(w, sh, sw)),
        (None, Some(h)) => (scaled(h, sw, sh), h),
        (None, None) => bail!("--op resize needs --width and/or --height"),
    };
    // The image crate (and PNG) address at most 2³¹ pixels per side; far beyond any real use.
    if w > i32::MAX as usize || h > i32::MAX as usize {
        bail!("resize target {w}x{h} is too large");
    }
    Ok((w, h))
}

/// Turns a core error into a message that names the operation.
fn core_error(op: FilterOp, e: Error) -> anyhow::Error {
    anyhow!(e).context(format!("{} failed", op.name()))
}

/// Runs `mvision filter` and prints its one-line report to `out`.
pub fn run(args: &FilterArgs, out: &mut impl Write) -> Result<()> {
    check_applicable(args)?;
    // Validate everything that does not need the pixels before reading them.
    imageio::output_format(&args.output)?;
    for path in [&args.dx, &args.dy].into_iter().flatten() {
        imageio::output_format(path)?;
    }
    if let Some(k) = args.ksize {
        check_ksize(k)?;
    }
    if let Some(sigma) = args.sigma {
        check_sigma(sigma, args.ksize)?;
    }
    if args.op == FilterOp::Kernel && args.kernel.is_none() {
        bail!("--op kernel needs --kernel \"a,b,c;d,e,f;g,h,i\"");
    }

    let src = imageio::load_gray(&args.input)?;
    let (w, h) = ops::dims(&src);
    let border = args.border.unwrap_or(BorderMode::Reflect101);
    let precision = if args.float {
        Precision::F32
    } else {
        Precision::U8
    };
    let op = args.op;
    let mut detail = String::new();

    let timed = match op {
        FilterOp::Gaussian => {
            let (ksize, sigma) = match (args.ksize, args.sigma) {
                (None, None) => (0, DEFAULT_SIGMA_PX),
                (k, s) => (k.unwrap_or(0), s.unwrap_or(0.0)),
            };
            detail = match (ksize, sigma > 0.0) {
                (0, _) => format!(" sigma {sigma}"),
                (k, true) => format!(" sigma {sigma} ksize {k}"),
                (k, false) => format!(" ksize {k}"),
            };
            ops::gaussian(&src, ksize, sigma, border, precision)
        }
        FilterOp::Box => {
            let ksize = args.ksize.unwrap_or(DEFAULT_BOX_KSIZE);
            detail = format!(" ksize {ksize}");
            ops::box_blur(&src, ksize, border, precision)
        }
        FilterOp::Kernel => {
            // Checked above; `let else` keeps this path free of unwrap.
            let Some(kernel) = &args.kernel else {
                bail!("--op kernel needs --kernel");
            };
            detail = format!(" {0}x{0}", kernel.size);
            if precision == Precision::U8 {
                let q = ops::quantise_kernel(kernel.size, &kernel.coeffs).map_err(|_| {
                    anyhow!(
                        "kernel coefficients are too large to accumulate in 32 bits even \
                         without fractional bits (sum of |c| must stay below 8.4 million)"
                    )
                })?;
                detail.push_str(&format!(" Q{}", q.shift()));
            }
            ops::dense(&src, kernel.size, &kernel.coeffs, border, precision)
        }
        FilterOp::Pyrdown => ops::pyr_down(&src, border, precision),
        FilterOp::Resize => {
            let (tw, th) = resize_target(args, (w, h))?;
            ops::resize_bilinear(&src, tw, th, precision)
        }
        FilterOp::Sobel => {
            let grad = ops::sobel(&src, border, precision).map_err(|e| core_error(op, e))?;
            imageio::save_gray(&grad.output.magnitude_u8(), &args.output)?;
            if let Some(path) = &args.dx {
                imageio::save_gray(&grad.output.dx_u8(), path)?;
            }
            if let Some(path) = &args.dy {
                imageio::save_gray(&grad.output.dy_u8(), path)?;
            }
            let timing = (grad.elapsed, grad.runs);
            return report(out, op, &detail, (w, h), (w, h), precision, timing);
        }
    }
    .map_err(|e| core_error(op, e))?;

    imageio::save_gray(&timed.output, &args.output)?;
    let dst = ops::dims(&timed.output);
    let timing = (timed.elapsed, timed.runs);
    report(out, op, &detail, (w, h), dst, precision, timing)
}

/// The one-line summary: op and parameters, sizes, path, time (fastest of `runs`) and output
/// throughput.
fn report(
    out: &mut impl Write,
    op: FilterOp,
    detail: &str,
    src: (usize, usize),
    dst: (usize, usize),
    precision: Precision,
    (elapsed, runs): (std::time::Duration, u32),
) -> Result<()> {
    let (ms, rate) = ops::format_timing(dst.0 * dst.1, elapsed);
    writeln!(
        out,
        "{}{detail} [{precision}] {}x{} -> {}x{}: {ms} ms (best of {runs}), {rate} Mpixel/s",
        op.name(),
        src.0,
        src.1,
        dst.0,
        dst.1
    )
    .context("cannot write to stdout")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_parse_with_whitespace_and_any_odd_size() {
        let k: KernelSpec = " 1, 2 ,3; 4,5,6 ;7,8,9 ".parse().unwrap();
        assert_eq!(k.size, 3);
        assert_eq!(k.coeffs, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
        assert_eq!("-2.5".parse::<KernelSpec>().unwrap().coeffs, [-2.5]);
    }

    #[test]
    fn bad_kernels_say_what_is_wrong() {
        let err = |s: &str| s.parse::<KernelSpec>().unwrap_err();
        assert!(err("").contains("empty"));
        assert!(err("1,,3;4,5,6;7,8,9").contains("empty"));
        assert!(err("1,a,3;4,5,6;7,8,9").contains("'a' in row 1"));
        assert!(err("1,2,3;4,5,6").contains("square"));
        assert!(err("1,2;3,4").contains("odd"));
        assert!(err("inf").contains("finite"));
    }
}
