//! Integral images, pyramid levels and bilinear resize on the device
//! (`kernels/common/integral.h`, `kernels/common/resample.h`).

use mvision_core::integral::{integral_size, MAX_INTEGRAL_PIXELS};
use mvision_core::pyramid::pyr_down_size;
use mvision_core::{Border, Error as CoreError, Pixel};
use mvision_kernels::{names, KernelSet, Tile, INTEGRAL_SCAN_MAX};

use super::{border_f32, border_u8, grid, image_args, size_args};
use crate::context::{Arg, Context};
use crate::error::Result;
use crate::image::{same_size, DeviceImage};

/// Threads per block of the integral column pass (one thread per table column).
const COLS_BLOCK: usize = 256;

impl Context {
    /// Integral image `sum` and, if given, squared integral image `sqsum` of a `u8` image, as
    /// `mvision_core::integral::integral_u8`.
    ///
    /// Errors: [`crate::Error::Invalid`] with `SizeMismatch` unless the tables are
    /// `(w + 1) × (h + 1)`, `Overflow` for more than `MAX_INTEGRAL_PIXELS` pixels; driver errors.
    pub fn integral_u8(
        &self,
        src: &DeviceImage<u8>,
        sum: &mut DeviceImage<u32>,
        sqsum: Option<&mut DeviceImage<u64>>,
    ) -> Result<()> {
        self.owns(src)?;
        self.owns(sum)?;
        let (w, h) = src.size();
        let size = integral_size(w, h);
        same_size(size, sum.size())?;
        if let Some(sq) = sqsum.as_deref() {
            self.owns(sq)?;
            same_size(size, sq.size())?;
        }
        if (w as u64).saturating_mul(h as u64) > MAX_INTEGRAL_PIXELS {
            return Err(CoreError::Overflow.into());
        }
        let [sum_ptr, sum_stride] = image_args(sum);
        let (sq_ptr, sq_stride, want_sq) = match sqsum.as_deref() {
            Some(sq) => {
                let [p, s] = image_args(sq);
                (p, s, 1)
            }
            None => (Arg::Ptr(0), Arg::I32(0), 0),
        };
        let [s, ss] = image_args(src);
        let [wa, ha] = size_args(src);
        let rows = [
            s,
            ss,
            sum_ptr,
            sum_stride,
            sq_ptr,
            sq_stride,
            wa,
            ha,
            Arg::I32(want_sq),
        ];
        // One block per source row; its threads scan the row in chunks of the block width.
        let scan = w
            .next_multiple_of(32)
            .min(INTEGRAL_SCAN_MAX)
            .min(self.info().max_work_group_size);
        let tile = Tile::DEFAULT;
        let set = KernelSet::Integral;
        let (rows_grid, rows_block) = ((h as u32, 1), (scan as u32, 1));
        self.launch(
            set,
            tile,
            names::INTEGRAL_ROWS_U8,
            rows_grid,
            rows_block,
            &rows,
        )?;
        let cols = [
            sum_ptr,
            sum_stride,
            sq_ptr,
            sq_stride,
            wa,
            ha,
            Arg::I32(want_sq),
        ];
        let cols_grid = ((w + 1).div_ceil(COLS_BLOCK) as u32, 1);
        let cols_block = (COLS_BLOCK as u32, 1);
        self.launch(
            set,
            tile,
            names::INTEGRAL_COLS,
            cols_grid,
            cols_block,
            &cols,
        )
    }

    /// One pyramid level down of a `u8` image, as `mvision_core::pyramid::pyr_down_u8`.
    ///
    /// Errors: [`crate::Error::Invalid`] (`SizeMismatch`) unless `dst` is `pyr_down_size` of
    /// `src`; driver errors.
    pub fn pyr_down_u8(
        &self,
        src: &DeviceImage<u8>,
        dst: &mut DeviceImage<u8>,
        border: Border<u8>,
    ) -> Result<()> {
        self.pyr_down(src, dst, border_u8(border), names::PYR_DOWN_U8)
    }

    /// One pyramid level down of an `f32` image, as `mvision_core::pyramid::pyr_down_f32`.
    ///
    /// Errors: as [`Context::pyr_down_u8`].
    pub fn pyr_down_f32(
        &self,
        src: &DeviceImage<f32>,
        dst: &mut DeviceImage<f32>,
        border: Border<f32>,
    ) -> Result<()> {
        self.pyr_down(src, dst, border_f32(border), names::PYR_DOWN_F32)
    }

    fn pyr_down<T: Pixel>(
        &self,
        src: &DeviceImage<T>,
        dst: &mut DeviceImage<T>,
        [mode, value]: [Arg; 2],
        name: &'static str,
    ) -> Result<()> {
        self.owns(src)?;
        self.owns(dst)?;
        same_size(pyr_down_size(src.width, src.height), dst.size())?;
        self.resample(src, dst, name, &[mode, value])
    }

    /// Bilinear resize of a `u8` image to `dst`'s size, as
    /// `mvision_core::resize::resize_bilinear_u8`.
    ///
    /// Errors: driver errors only (any two sizes are valid).
    pub fn resize_bilinear_u8(
        &self,
        src: &DeviceImage<u8>,
        dst: &mut DeviceImage<u8>,
    ) -> Result<()> {
        self.owns(src)?;
        self.owns(dst)?;
        self.resample(src, dst, names::RESIZE_BILINEAR_U8, &[])
    }

    /// Bilinear resize of an `f32` image to `dst`'s size, as
    /// `mvision_core::resize::resize_bilinear_f32`.
    ///
    /// Errors: as [`Context::resize_bilinear_u8`].
    pub fn resize_bilinear_f32(
        &self,
        src: &DeviceImage<f32>,
        dst: &mut DeviceImage<f32>,
    ) -> Result<()> {
        self.owns(src)?;
        self.owns(dst)?;
        self.resample(src, dst, names::RESIZE_BILINEAR_F32, &[])
    }

    /// Launches a resample kernel: `src, src_stride, src_w, src_h, dst, dst_stride, dst_w,
    /// dst_h`, then `extra`, one thread per destination pixel.
    fn resample<T: Pixel>(
        &self,
        src: &DeviceImage<T>,
        dst: &mut DeviceImage<T>,
        name: &'static str,
        extra: &[Arg],
    ) -> Result<()> {
        let tile = Tile::DEFAULT;
        let [s, ss] = image_args(src);
        let [sw, sh] = size_args(src);
        let [d, ds] = image_args(dst);
        let [dw, dh] = size_args(dst);
        let mut args = vec![s, ss, sw, sh, d, ds, dw, dh];
        args.extend_from_slice(extra);
        let g = grid(dst.width, dst.height, tile);
        let b = (tile.w as u32, tile.h as u32);
        self.launch(KernelSet::Resample, tile, name, g, b, &args)
    }
}
