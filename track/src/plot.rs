//! OTB precision and success plots as PNG: one line per tracker, the legend sorted best first
//! and labelled as in the OTB toolkit (`name [0.xxx]`: success AUC on the success plot,
//! precision at 20 px on the precision plot).
//!
//! Text is drawn with `ab_glyph` from DejaVu Sans embedded in the binary (the `dejavu` crate;
//! the font is under the permissive Bitstream Vera / DejaVu licence), so plots render
//! identically on a machine with no fonts, fontconfig or FreeType installed. The chart is drawn
//! into a memory buffer and encoded as PNG by the `image` crate.

use std::path::Path;
use std::sync::OnceLock;

use anyhow::{anyhow, Context, Result};
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

use crate::metrics::{success_threshold, PRECISION_MAX_PX, SUCCESS_POINTS};
use crate::Scores;

/// Plot size in pixels, `(width, height)`.
pub const PLOT_SIZE_PX: (u32, u32) = (640, 480);

/// The font family name the embedded font is registered under.
const FONT: &str = "sans-serif";

/// Line colours, in legend order (colour-blind-safe Okabe–Ito palette, no yellow).
const PALETTE: [RGBColor; 7] = [
    RGBColor(213, 94, 0),
    RGBColor(0, 114, 178),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
];

/// Registers the embedded font with plotters, once per process.
fn register_embedded_font() -> Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED
        .get_or_init(|| register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).is_ok());
    if ok {
        Ok(())
    } else {
        Err(anyhow!("the embedded DejaVu Sans font could not be loaded"))
    }
}

/// One curve to draw.
struct Curve {
    label: String,
    score: f64,
    points: Vec<(f64, f64)>,
}

/// Axis description of a plot.
struct Axes<'a> {
    title: &'a str,
    x_desc: &'a str,
    y_desc: &'a str,
    x_max: f64,
}

/// Draws `curves` (best first in the legend) and writes the PNG.
fn render(path: &Path, axes: &Axes<'_>, mut curves: Vec<Curve>) -> Result<()> {
    register_embedded_font()?;
    curves.sort_by(|a, b| b.score.total_cmp(&a.score));
    let (w, h) = PLOT_SIZE_PX;
    let mut buf = vec![255u8; 3 * w as usize * h as usize];
    {
        let plot_err = |e: &dyn std::fmt::Display| anyhow!("cannot draw '{}': {e}", path.display());
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| plot_err(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(axes.title, (FONT, 22))
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(54)
            .build_cartesian_2d(0.0..axes.x_max, 0.0..1.0)
            .map_err(|e| plot_err(&e))?;
        chart
            .configure_mesh()
            .x_desc(axes.x_desc)
            .y_desc(axes.y_desc)
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 16))
            .draw()
            .map_err(|e| plot_err(&e))?;
        for (i, c) in curves.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            chart
                .draw_series(LineSeries::new(
                    c.points.iter().copied(),
                    color.stroke_width(2),
                ))
                .map_err(|e| plot_err(&e))?
                .label(format!("{} [{:.3}]", c.label, c.score))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(2))
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font((FONT, 14))
            .draw()
            .map_err(|e| plot_err(&e))?;
        root.present().map_err(|e| plot_err(&e))?;
    }
    image::save_buffer_with_format(
        path,
        &buf,
        w,
        h,
        image::ExtendedColorType::Rgb8,
        image::ImageFormat::Png,
    )
    .with_context(|| format!("cannot write plot '{}'", path.display()))
}

/// Writes the OTB success plot, `S(t)` against the overlap threshold `t` in `[0, 1]`, one line
/// per `(label, scores)`, legend values = success AUC.
///
/// # Errors
/// No curves, the font cannot be loaded, or the PNG cannot be written (the message names it).
pub fn plot_success(path: &Path, title: &str, curves: &[(&str, &Scores)]) -> Result<()> {
    anyhow::ensure!(
        !curves.is_empty(),
        "nothing to plot in '{}'",
        path.display()
    );
    let curves = curves
        .iter()
        .map(|(label, s)| Curve {
            label: label.to_string(),
            score: s.success_auc(),
            points: (0..SUCCESS_POINTS)
                .map(|i| (success_threshold(i), s.success_curve()[i]))
                .collect(),
        })
        .collect();
    let axes = Axes {
        title,
        x_desc: "Overlap threshold",
        y_desc: "Success rate",
        x_max: 1.0,
    };
    render(path, &axes, curves)
}

/// Writes the OTB precision plot, `P(d)` against the centre-error threshold `d` in `0..=50`
/// pixels, one line per `(label, scores)`, legend values = precision at 20 px.
///
/// # Errors
/// No curves, the font cannot be loaded, or the PNG cannot be written (the message names it).
pub fn plot_precision(path: &Path, title: &str, curves: &[(&str, &Scores)]) -> Result<()> {
    anyhow::ensure!(
        !curves.is_empty(),
        "nothing to plot in '{}'",
        path.display()
    );
    let curves = curves
        .iter()
        .map(|(label, s)| Curve {
            label: label.to_string(),
            score: s.precision20(),
            points: s
                .precision_curve()
                .iter()
                .enumerate()
                .map(|(d, &p)| (d as f64, p))
                .collect(),
        })
        .collect();
    let axes = Axes {
        title,
        x_desc: "Location error threshold (px)",
        y_desc: "Precision",
        x_max: PRECISION_MAX_PX as f64,
    };
    render(path, &axes, curves)
}
