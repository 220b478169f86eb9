//! A decoded video frame, held twice: packed 8-bit gray, the input of every tracker, and packed
//! 8-bit RGB, the canvas that annotated output is drawn on. This module also owns the SDK tools'
//! single colour-to-gray rule ([`gray_from_image`]), which the command-line tool uses as well.

use anyhow::{ensure, Result};
use image::{DynamicImage, GrayImage, RgbImage};
use mvision_core::ImageView;

/// Any decoded image as 8-bit gray: colour by Rec. 709 luma (`0.2126 R + 0.7152 G +
/// 0.0722 B`, computed by the `image` crate in `f32` and rounded to nearest), alpha dropped,
/// 16-bit samples scaled to 8 bits; 8-bit gray input is returned unchanged. Every tool of the
/// SDK converts through this function, so one input gives the same gray pixels everywhere.
pub fn gray_from_image(image: &DynamicImage) -> GrayImage {
    image.to_luma8()
}

/// Packed RGB (3 bytes a pixel, `width × height`) to packed gray by [`gray_from_image`]'s rule.
///
/// # Errors
/// `rgb.len() != 3 · width · height`.
pub fn gray_from_rgb(width: usize, height: usize, rgb: &[u8]) -> Result<Vec<u8>> {
    let image = RgbImage::from_raw(width as u32, height as u32, rgb.to_vec()).filter(|_| {
        width <= u32::MAX as usize && height <= u32::MAX as usize && rgb.len() == 3 * width * height
    });
    let image = image.ok_or_else(|| {
        anyhow::anyhow!("{} bytes are not a {width}x{height} RGB image", rgb.len())
    })?;
    Ok(gray_from_image(&DynamicImage::ImageRgb8(image)).into_raw())
}

/// One frame: `width × height` pixels as packed gray and packed RGB.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    width: usize,
    height: usize,
    gray: Vec<u8>,
    rgb: Vec<u8>,
}

impl Frame {
    /// A frame from packed RGB bytes (row-major, 3 bytes a pixel, no padding); gray is derived by
    /// [`gray_from_image`]'s rule.
    ///
    /// # Errors
    /// A zero width or height, or `rgb.len() != 3 · width · height`.
    pub fn from_rgb(width: usize, height: usize, rgb: Vec<u8>) -> Result<Self> {
        ensure!(
            width > 0 && height > 0,
            "a frame must have at least one pixel, got {width}x{height}"
        );
        let expected = width
            .checked_mul(height)
            .and_then(|n| n.checked_mul(3))
            .ok_or_else(|| anyhow::anyhow!("frame size {width}x{height} overflows"))?;
        ensure!(
            rgb.len() == expected,
            "a {width}x{height} RGB frame needs {expected} bytes, got {}",
            rgb.len()
        );
        let gray = gray_from_rgb(width, height, &rgb)?;
        Ok(Self {
            width,
            height,
            gray,
            rgb,
        })
    }

    /// A frame from any decoded image: RGB by the `image` crate's `to_rgb8` (alpha dropped),
    /// gray by [`gray_from_image`] on the image as decoded.
    ///
    /// # Errors
    /// An image with no pixels.
    pub fn from_image(image: &DynamicImage) -> Result<Self> {
        let (w, h) = (image.width() as usize, image.height() as usize);
        ensure!(
            w > 0 && h > 0,
            "a frame must have at least one pixel, got {w}x{h}"
        );
        Ok(Self {
            width: w,
            height: h,
            gray: gray_from_image(image).into_raw(),
            rgb: image.to_rgb8().into_raw(),
        })
    }

    /// Width in pixels.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> usize {
        self.height
    }

    /// The gray plane as a core image view (packed: stride = width).
    pub fn gray(&self) -> ImageView<'_, u8> {
        ImageView::packed(&self.gray, self.width, self.height)
            .expect("the gray plane was sized at construction")
    }

    /// The gray plane's bytes, row-major, `width · height` long.
    pub fn gray_bytes(&self) -> &[u8] {
        &self.gray
    }

    /// The RGB bytes, row-major, 3 bytes a pixel, `3 · width · height` long.
    pub fn rgb_bytes(&self) -> &[u8] {
        &self.rgb
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gray_is_rec709_and_keeps_gray_pixels() {
        let rgb = vec![255, 0, 0, 0, 255, 0, 10, 200, 90, 77, 77, 77];
        let gray = gray_from_rgb(4, 1, &rgb).unwrap();
        // 0.2126 · 255 = 54.2, 0.7152 · 255 = 182.4, 2.126 + 143.04 + 6.498 = 151.66.
        assert_eq!(gray, [54, 182, 152, 77]);
        assert!(gray_from_rgb(3, 1, &rgb).is_err());
        let f = Frame::from_image(&DynamicImage::ImageRgb8(
            RgbImage::from_raw(4, 1, rgb.clone()).unwrap(),
        ))
        .unwrap();
        assert_eq!(f.gray_bytes(), &gray[..]);
        assert_eq!(f, Frame::from_rgb(4, 1, rgb).unwrap());
    }

    #[test]
    fn frame_checks_its_buffer() {
        assert!(Frame::from_rgb(2, 2, vec![0; 11]).is_err());
        assert!(Frame::from_rgb(0, 2, vec![]).is_err());
        let f = Frame::from_rgb(2, 1, vec![255, 255, 255, 0, 0, 0]).unwrap();
        assert_eq!(f.gray_bytes(), &[255, 0]);
        assert_eq!(f.gray().size(), (2, 1));
    }
}
