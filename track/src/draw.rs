//! Annotated frames: box outlines drawn on a frame's RGB pixels (clipped to the frame, a colour
//! per role), saved as PNG files or appended to an animated GIF whose palette is quantised per
//! frame. GIFs can skip frames and scale down to stay small.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use anyhow::{ensure, Context, Result};
use image::imageops::FilterType;
use image::RgbImage;
use mvision_core::RectF;

use crate::{Frame, TrackOutput};

/// An 8-bit RGB colour.
pub type Rgb = [u8; 3];

/// Colour of the tracker's result box: red.
pub const RESULT_COLOR: Rgb = [255, 40, 40];
/// Colour of the ground-truth box: green.
pub const GROUND_TRUTH_COLOR: Rgb = [40, 230, 40];
/// Colour of detection boxes (drawn only when asked for): light blue.
pub const DETECTION_COLOR: Rgb = [80, 170, 255];
/// Width of every outline, in pixels, drawn inside the box's edges.
pub const LINE_WIDTH_PX: usize = 2;

/// A packed RGB image to draw on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Canvas {
    width: usize,
    height: usize,
    rgb: Vec<u8>,
}

impl Canvas {
    /// A copy of `frame`'s RGB pixels.
    pub fn from_frame(frame: &Frame) -> Self {
        Self {
            width: frame.width(),
            height: frame.height(),
            rgb: frame.rgb_bytes().to_vec(),
        }
    }

    /// Width in pixels.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> usize {
        self.height
    }

    /// The pixels, row-major, 3 bytes each.
    pub fn rgb_bytes(&self) -> &[u8] {
        &self.rgb
    }

    /// The colour of pixel `(x, y)`, or `None` outside the image.
    pub fn pixel(&self, x: usize, y: usize) -> Option<Rgb> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let i = 3 * (y * self.width + x);
        Some([self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]])
    }

    /// Paints the pixels `[x0, x1) × [y0, y1)`, clipped to the image.
    fn fill(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, color: Rgb) {
        let (x0, x1) = (x0.max(0), x1.min(self.width as i64));
        let (y0, y1) = (y0.max(0), y1.min(self.height as i64));
        for y in y0..y1 {
            for x in x0..x1 {
                let i = 3 * (y as usize * self.width + x as usize);
                self.rgb[i..i + 3].copy_from_slice(&color);
            }
        }
    }

    /// Draws the outline of `rect` (pixels; edges rounded to whole pixels) `thickness_px` wide,
    /// inside its edges, in `color`. Parts outside the image are clipped; a box that covers no
    /// whole pixel draws nothing.
    pub fn draw_box(&mut self, rect: RectF, thickness_px: usize, color: Rgb) {
        let r = rect.round();
        if r.is_empty() {
            return;
        }
        let (x0, y0, x1, y1) = (r.x as i64, r.y as i64, r.right(), r.bottom());
        let t = thickness_px as i64;
        self.fill(x0, y0, x1, (y0 + t).min(y1), color);
        self.fill(x0, (y1 - t).max(y0), x1, y1, color);
        self.fill(x0, y0, (x0 + t).min(x1), y1, color);
        self.fill((x1 - t).max(x0), y0, x1, y1, color);
    }

    /// Writes the image as an 8-bit RGB PNG.
    ///
    /// # Errors
    /// The file cannot be created or encoded (the message names it).
    pub fn save_png(&self, path: &Path) -> Result<()> {
        image::save_buffer_with_format(
            path,
            &self.rgb,
            self.width as u32,
            self.height as u32,
            image::ExtendedColorType::Rgb8,
            image::ImageFormat::Png,
        )
        .with_context(|| format!("cannot write PNG '{}'", path.display()))
    }
}

/// `frame` with boxes drawn: detections first (when `draw_detections`), then the ground truth
/// (when given and present), then the tracker's result on top.
pub fn annotate(
    frame: &Frame,
    ground_truth: Option<RectF>,
    output: &TrackOutput,
    draw_detections: bool,
) -> Canvas {
    let mut canvas = Canvas::from_frame(frame);
    if draw_detections {
        for &d in &output.detections {
            canvas.draw_box(d, 1, DETECTION_COLOR);
        }
    }
    if let Some(g) = ground_truth {
        canvas.draw_box(g, LINE_WIDTH_PX, GROUND_TRUTH_COLOR);
    }
    if let Some(b) = output.bbox {
        canvas.draw_box(b, LINE_WIDTH_PX, RESULT_COLOR);
    }
    canvas
}

/// How an animated GIF is made.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GifOptions {
    /// Time each GIF frame is shown, in hundredths of a second (default 4: 25 frames/s).
    pub delay_cs: u16,
    /// Keep one frame in this many (default 1: all); the frame index counts from 0.
    pub every_nth: usize,
    /// Scale factor in `(0, 1]` applied to every frame (default 1).
    pub scale: f32,
    /// Palette quantisation speed, 1 (best) to 30 (fastest); default 10.
    pub quantize_speed: i32,
}

impl Default for GifOptions {
    fn default() -> Self {
        Self {
            delay_cs: 4,
            every_nth: 1,
            scale: 1.0,
            quantize_speed: 10,
        }
    }
}

/// An animated GIF being written, one [`Canvas`] at a time; loops forever.
pub struct GifWriter {
    encoder: gif::Encoder<BufWriter<File>>,
    options: GifOptions,
    source_size: (usize, usize),
    size: (u16, u16),
    written: usize,
    path: String,
}

impl GifWriter {
    /// Creates `path` for frames of `width × height` pixels (before scaling).
    ///
    /// # Errors
    /// Options out of range (`every_nth` 0, `scale` outside `(0, 1]`, speed outside 1..=30), a
    /// scaled size above 65 535 pixels a side, or a file that cannot be created.
    pub fn create(path: &Path, width: usize, height: usize, options: GifOptions) -> Result<Self> {
        ensure!(options.every_nth > 0, "GIF frame step must be at least 1");
        ensure!(
            options.scale > 0.0 && options.scale <= 1.0,
            "GIF scale must be in (0, 1], got {}",
            options.scale
        );
        ensure!(
            (1..=30).contains(&options.quantize_speed),
            "GIF quantisation speed must be 1..=30, got {}",
            options.quantize_speed
        );
        let side = |v: usize| ((v as f64 * options.scale as f64).round() as usize).max(1);
        let (w, h) = (side(width), side(height));
        ensure!(
            w <= u16::MAX as usize && h <= u16::MAX as usize,
            "GIF frames are at most 65535 pixels a side, got {w}x{h}"
        );
        let file = File::create(path)
            .with_context(|| format!("cannot create GIF '{}'", path.display()))?;
        let mut encoder = gif::Encoder::new(BufWriter::new(file), w as u16, h as u16, &[])
            .with_context(|| format!("cannot start GIF '{}'", path.display()))?;
        encoder
            .set_repeat(gif::Repeat::Infinite)
            .with_context(|| format!("cannot write GIF '{}'", path.display()))?;
        Ok(Self {
            encoder,
            options,
            source_size: (width, height),
            size: (w as u16, h as u16),
            written: 0,
            path: path.display().to_string(),
        })
    }

    /// Appends `canvas` as frame `index` of the sequence, unless the frame step skips it.
    ///
    /// # Errors
    /// A canvas of another size than given to [`create`](Self::create), or a write error.
    pub fn push(&mut self, index: usize, canvas: &Canvas) -> Result<()> {
        if !index.is_multiple_of(self.options.every_nth) {
            return Ok(());
        }
        ensure!(
            (canvas.width, canvas.height) == self.source_size,
            "GIF '{}' takes {}x{} frames, got {}x{}",
            self.path,
            self.source_size.0,
            self.source_size.1,
            canvas.width,
            canvas.height
        );
        let (w, h) = self.size;
        let scaled;
        let rgb = if (w as usize, h as usize) == self.source_size {
            &canvas.rgb
        } else {
            let img = RgbImage::from_raw(
                canvas.width as u32,
                canvas.height as u32,
                canvas.rgb.clone(),
            )
            .context("canvas buffer does not match its size")?;
            scaled = image::imageops::resize(&img, w as u32, h as u32, FilterType::Triangle);
            scaled.as_raw()
        };
        let mut frame = gif::Frame::from_rgb_speed(w, h, rgb, self.options.quantize_speed);
        frame.delay = self.options.delay_cs;
        self.encoder
            .write_frame(&frame)
            .with_context(|| format!("cannot write GIF '{}'", self.path))?;
        self.written += 1;
        Ok(())
    }

    /// Finishes the file and returns the number of frames written.
    ///
    /// # Errors
    /// The final write fails.
    pub fn finish(self) -> Result<usize> {
        let path = self.path;
        let mut writer = self
            .encoder
            .into_inner()
            .with_context(|| format!("cannot finish GIF '{path}'"))?;
        std::io::Write::flush(&mut writer)
            .with_context(|| format!("cannot finish GIF '{path}'"))?;
        Ok(self.written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gray_frame(w: usize, h: usize) -> Frame {
        Frame::from_rgb(w, h, vec![100; 3 * w * h]).unwrap()
    }

    #[test]
    fn outline_is_two_pixels_inside_the_edges_and_clipped() {
        let mut c = Canvas::from_frame(&gray_frame(20, 20));
        let r = RectF {
            x: 2.0,
            y: 3.0,
            width: 10.0,
            height: 8.0,
        };
        c.draw_box(r, 2, RESULT_COLOR);
        assert_eq!(c.pixel(2, 3), Some(RESULT_COLOR));
        assert_eq!(c.pixel(3, 6), Some(RESULT_COLOR));
        assert_eq!(c.pixel(4, 6), Some([100; 3])); // inside the outline
        assert_eq!(c.pixel(11, 10), Some(RESULT_COLOR)); // last column and row
        assert_eq!(c.pixel(12, 10), Some([100; 3])); // right edge is exclusive
        assert_eq!(c.pixel(1, 3), Some([100; 3]));
        // Mostly outside: only the visible part is drawn, nothing panics.
        c.draw_box(
            RectF {
                x: -5.0,
                y: 15.0,
                width: 8.0,
                height: 30.0,
            },
            2,
            GROUND_TRUTH_COLOR,
        );
        assert_eq!(c.pixel(0, 15), Some(GROUND_TRUTH_COLOR));
        assert_eq!(c.pixel(2, 19), Some(GROUND_TRUTH_COLOR));
    }

    #[test]
    fn annotate_draws_result_over_ground_truth() {
        let f = gray_frame(16, 16);
        let b = RectF {
            x: 1.0,
            y: 1.0,
            width: 8.0,
            height: 8.0,
        };
        let c = annotate(&f, Some(b), &TrackOutput::found(b, 1.0), false);
        assert_eq!(c.pixel(1, 1), Some(RESULT_COLOR));
        let c = annotate(&f, Some(b), &TrackOutput::absent(), false);
        assert_eq!(c.pixel(1, 1), Some(GROUND_TRUTH_COLOR));
    }
}
