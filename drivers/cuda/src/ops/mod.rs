//! The image operations of [`crate::Context`], one kernel launch (or two) each.
//!
//! Every operation first checks its arguments exactly as the `mvision-core` function it mirrors
//! (same checks, same order, same [`mvision_core::Error`]), then enqueues and returns. Argument
//! lists follow the table of `kernels/SPEC.md`, built from the kernel names and border codes of
//! `mvision_kernels`, so nothing is spelled twice.

mod filter;
mod resample;

use cudarc::driver::sys::CUresult;
use mvision_core::{Border, Error as CoreError, Pixel};
use mvision_kernels::{border_code, KernelSet, Tile};

use crate::context::{Arg, Context};
use crate::error::{Error, Result};
use crate::image::DeviceImage;

/// How a dense filter runs: straight from global memory, or through a halo tile in shared
/// memory loaded by a `w × h` thread block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// One thread per pixel, every tap read from global memory (through the cache).
    Naive,
    /// A `w × h` block loads its `(w + k − 1) × (h + k − 1)` window into shared memory once.
    Tiled {
        /// Threads along x.
        w: usize,
        /// Threads along y.
        h: usize,
    },
}

impl Default for Variant {
    /// `Tiled { w: 16, h: 16 }`.
    fn default() -> Self {
        Variant::Tiled {
            w: Tile::DEFAULT.w,
            h: Tile::DEFAULT.h,
        }
    }
}

impl Context {
    /// The tile of `Variant::Tiled { w, h }`, checked against the device's block limits.
    ///
    /// Errors (as the OpenCL driver's): `Invalid(ZeroSize)` for a zero side;
    /// `Device { code: CUDA_ERROR_INVALID_VALUE }` for a tile with more threads than a block may
    /// have, or whose shared arrays exceed the device's shared memory per block.
    pub(crate) fn check_tile(&self, w: usize, h: usize) -> Result<Tile> {
        if w == 0 || h == 0 {
            return Err(Error::Invalid(CoreError::ZeroSize));
        }
        let tile = Tile::new(w, h);
        let info = self.info();
        let [max_x, max_y] = info.max_work_item_sizes;
        let threads_fit = w
            .checked_mul(h)
            .is_some_and(|n| n <= info.max_work_group_size)
            && w <= max_x
            && h <= max_y;
        let refused = |call| Error::Device {
            call,
            code: CUresult::CUDA_ERROR_INVALID_VALUE as i32,
        };
        if !threads_fit {
            return Err(refused(
                "tiled filter: the tile exceeds the device's threads per block",
            ));
        }
        if KernelSet::Filter.local_mem_bytes(tile) as u64 > info.local_mem_bytes {
            return Err(refused(
                "tiled filter: the tile's halo exceeds the device's shared memory per block",
            ));
        }
        Ok(tile)
    }
}

/// Blocks of `tile` covering a `width × height` output.
pub(crate) fn grid(width: usize, height: usize, tile: Tile) -> (u32, u32) {
    (
        width.div_ceil(tile.w) as u32,
        height.div_ceil(tile.h) as u32,
    )
}

/// `(ptr, stride_elems)` of a packed image.
pub(crate) fn image_args<T: Pixel>(img: &DeviceImage<T>) -> [Arg; 2] {
    // Sizes were checked at allocation: every image has fewer than 2^31 elements.
    [Arg::Ptr(img.ptr), Arg::I32(img.width as i32)]
}

/// `(width, height)` as kernel `int`s.
pub(crate) fn size_args<T: Pixel>(img: &DeviceImage<T>) -> [Arg; 2] {
    [Arg::I32(img.width as i32), Arg::I32(img.height as i32)]
}

/// `(border_mode, border_value)` of a `u8` border (the value travels as `int`).
pub(crate) fn border_u8(border: Border<u8>) -> [Arg; 2] {
    let (code, value) = border_code(&border);
    [Arg::I32(code), Arg::I32(value.unwrap_or(0) as i32)]
}

/// `(border_mode, border_value)` of an `f32` border.
pub(crate) fn border_f32(border: Border<f32>) -> [Arg; 2] {
    let (code, value) = border_code(&border);
    [Arg::I32(code), Arg::F32(value.unwrap_or(0.0))]
}

/// The bytes of a coefficient table, as the kernel reads them (`int` or `float`, native order).
pub(crate) fn i32_bytes(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|c| c.to_ne_bytes()).collect()
}

/// As [`i32_bytes`] for `float` tables.
pub(crate) fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|c| c.to_ne_bytes()).collect()
}
