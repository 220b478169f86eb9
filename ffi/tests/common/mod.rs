//! Helpers shared by the tracker tests of the C API (`tld.rs`, `kcf.rs`): a generated frame and
//! packed image descriptors.

use mvision::image::{mv_image, MV_PIXEL_RGB8};

/// Test frames are `W × H` pixels.
pub const W: u32 = 96;
/// Test frames are `W × H` pixels.
pub const H: u32 = 72;

fn hash(x: u32, y: u32, s: u32) -> u8 {
    let mut h = x.wrapping_mul(0x9E37_79B9) ^ y.wrapping_mul(0x85EB_CA6B) ^ s;
    h ^= h >> 15;
    h = h.wrapping_mul(0x2C1B_3C6D);
    h ^= h >> 12;
    (h >> 24) as u8
}

/// A `W × H` textured gray frame with a differently textured `ow × oh` object at `(ox, oy)`,
/// `channels` identical bytes a pixel (1: gray, 3: RGB).
pub fn frame_pixels(ox: u32, oy: u32, ow: u32, oh: u32, channels: u32) -> Vec<u8> {
    let mut v = Vec::with_capacity((W * H * channels) as usize);
    for y in 0..H {
        for x in 0..W {
            let inside = (ox..ox + ow).contains(&x) && (oy..oy + oh).contains(&y);
            let g = if inside {
                hash((x - ox) / 3, (y - oy) / 3, 2)
            } else {
                hash(x / 4, y / 4, 1) / 2 + 40
            };
            v.extend(std::iter::repeat_n(g, channels as usize));
        }
    }
    v
}

/// A packed `width × height` image of `format` (`MV_PIXEL_U8` or `MV_PIXEL_RGB8`) over `pixels`.
pub fn image(pixels: &mut [u8], width: u32, height: u32, format: u32) -> mv_image {
    let bpp = if format == MV_PIXEL_RGB8 { 3 } else { 1 };
    mv_image {
        data: pixels.as_mut_ptr().cast(),
        data_size: pixels.len(),
        width,
        height,
        stride: (width * bpp) as usize,
        format,
    }
}
