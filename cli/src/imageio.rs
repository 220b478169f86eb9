//! Reading and writing image files: PNG and JPEG in, 8-bit gray in memory, PNG or JPEG out.
//!
//! The core works on single-channel images, so every input is reduced to 8-bit luma on load by
//! the tools' one conversion rule, `mvision_track::frame::gray_from_image` (Rec. 709 weights;
//! alpha is dropped; 16-bit samples are scaled to 8 bits). The output format follows the output file's extension, checked before any work is
//! done so a typo does not cost a whole run.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{bail, Context, Result};
use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::PngEncoder;
use image::{ExtendedColorType, GrayImage, ImageEncoder, ImageReader};

/// JPEG quality used for every JPEG we write: high, because outputs are inspected for filter
/// artefacts and the encoder's own blocking should not be mistaken for them.
const JPEG_QUALITY: u8 = 95;

/// The file formats this build can write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// Lossless; the right choice for comparing results.
    Png,
    /// Lossy, quality [`JPEG_QUALITY`].
    Jpeg,
}

/// The format `path`'s extension asks for (`.png`, `.jpg`, `.jpeg`, any case).
pub fn output_format(path: &Path) -> Result<OutputFormat> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("png") => Ok(OutputFormat::Png),
        Some("jpg" | "jpeg") => Ok(OutputFormat::Jpeg),
        _ => bail!(
            "cannot tell the output format of '{}': use a .png, .jpg or .jpeg extension",
            path.display()
        ),
    }
}

/// Decodes a PNG or JPEG file. The format is sniffed from the file's first bytes, not its
/// name, so a mislabelled file still loads.
fn decode(path: &Path) -> Result<image::DynamicImage> {
    let reader = ImageReader::open(path)
        .with_context(|| format!("cannot open input image '{}'", path.display()))?
        .with_guessed_format()
        .with_context(|| format!("cannot read input image '{}'", path.display()))?;
    reader.decode().with_context(|| {
        format!(
            "cannot decode '{}' (this build reads PNG and JPEG)",
            path.display()
        )
    })
}

/// Loads a PNG or JPEG file as 8-bit gray.
pub fn load_gray(path: &Path) -> Result<GrayImage> {
    Ok(mvision_track::frame::gray_from_image(&decode(path)?))
}

/// Loads a PNG or JPEG file as 8-bit RGB (gray is replicated, alpha dropped, 16-bit samples
/// scaled to 8 bits), for models that take colour (`mvision classify`).
pub fn load_rgb(path: &Path) -> Result<image::RgbImage> {
    Ok(decode(path)?.to_rgb8())
}

/// Writes `image` to `path` in the format its extension names.
pub fn save_gray(image: &GrayImage, path: &Path) -> Result<()> {
    let format = output_format(path)?;
    let file = File::create(path)
        .with_context(|| format!("cannot create output file '{}'", path.display()))?;
    let mut writer = BufWriter::new(file);
    let (w, h) = image.dimensions();
    let encoded = match format {
        OutputFormat::Png => {
            PngEncoder::new(&mut writer).write_image(image.as_raw(), w, h, ExtendedColorType::L8)
        }
        OutputFormat::Jpeg => JpegEncoder::new_with_quality(&mut writer, JPEG_QUALITY).write_image(
            image.as_raw(),
            w,
            h,
            ExtendedColorType::L8,
        ),
    };
    encoded.with_context(|| format!("cannot encode '{}'", path.display()))?;
    // An explicit flush: dropping a BufWriter would swallow a failed final write (disk full).
    writer
        .flush()
        .with_context(|| format!("cannot write '{}'", path.display()))
}
