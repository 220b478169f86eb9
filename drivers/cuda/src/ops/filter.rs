//! Linear filters on the device: dense, separable, box blur and Sobel (`kernels/common/filter.h`).

use mvision_core::filter::{
    gaussian_kernel_f32, gaussian_kernel_q, Kernel2dF32, Kernel2dQ, SepKernelF32, SepKernelQ,
    MAX_KERNEL_SIZE,
};
use mvision_core::{Border, Error as CoreError};
use mvision_kernels::{names, KernelSet, Tile};

use super::{border_f32, border_u8, f32_bytes, grid, i32_bytes, image_args, size_args, Variant};
use crate::context::{Arg, Context};
use crate::error::Result;
use crate::image::{same_size, DeviceImage};

const ONES: [i32; MAX_KERNEL_SIZE] = [1; MAX_KERNEL_SIZE];
const ONES_F32: [f32; MAX_KERNEL_SIZE] = [1.0; MAX_KERNEL_SIZE];

/// The box size check of `mvision_core::filter::box_blur_*`.
fn check_box(ksize: usize) -> core::result::Result<(), CoreError> {
    if ksize == 0 {
        Err(CoreError::ZeroSize)
    } else if ksize % 2 == 0 || ksize > MAX_KERNEL_SIZE {
        Err(CoreError::InvalidKernel)
    } else {
        Ok(())
    }
}

impl Context {
    /// The kernel name and tile of a dense filter variant (the naive kernels run in blocks of
    /// the default tile, from the default-tile program).
    fn dense(
        &self,
        variant: Variant,
        naive: &'static str,
        tiled: &'static str,
    ) -> Result<(&'static str, Tile)> {
        match variant {
            Variant::Naive => Ok((naive, Tile::DEFAULT)),
            Variant::Tiled { w, h } => Ok((tiled, self.check_tile(w, h)?)),
        }
    }

    /// Dense fixed-point filter of a `u8` image, as `mvision_core::filter::filter2d_u8`.
    ///
    /// Errors: [`crate::Error::Invalid`] (`SizeMismatch`) unless `dst` is `src`'s size,
    /// (`InvalidArgument`) for a tile the device cannot run; driver errors.
    pub fn filter2d_u8(
        &self,
        src: &DeviceImage<u8>,
        dst: &mut DeviceImage<u8>,
        kernel: &Kernel2dQ,
        border: Border<u8>,
        variant: Variant,
    ) -> Result<()> {
        self.owns(src)?;
        self.owns(dst)?;
        same_size(src.size(), dst.size())?;
        let (name, tile) =
            self.dense(variant, names::FILTER2D_U8_NAIVE, names::FILTER2D_U8_TILED)?;
        let (_tables, [coeffs]) = self.coeffs([&i32_bytes(kernel.coeffs())])?;
        let [mode, value] = border_u8(border);
        let [s, ss] = image_args(src);
        let [d, ds] = image_args(dst);
        let [w, h] = size_args(src);
        let args = [
            s,
            ss,
            d,
            ds,
            w,
            h,
            Arg::Ptr(coeffs),
            Arg::I32(kernel.size() as i32),
            Arg::I32(kernel.shift() as i32),
            mode,
            value,
        ];
        let g = grid(src.width, src.height, tile);
        self.launch(
            KernelSet::Filter,
            tile,
            name,
            g,
            (tile.w as u32, tile.h as u32),
            &args,
        )
    }

    /// Dense float filter of an `f32` image, as `mvision_core::filter::filter2d_f32`.
    ///
    /// Errors: as [`Context::filter2d_u8`].
    pub fn filter2d_f32(
        &self,
        src: &DeviceImage<f32>,
        dst: &mut DeviceImage<f32>,
        kernel: &Kernel2dF32,
        border: Border<f32>,
        variant: Variant,
    ) -> Result<()> {
        self.owns(src)?;
        self.owns(dst)?;
        same_size(src.size(), dst.size())?;
        let (name, tile) = self.dense(
            variant,
            names::FILTER2D_F32_NAIVE,
            names::FILTER2D_F32_TILED,
        )?;
        let (_tables, [coeffs]) = self.coeffs([&f32_bytes(kernel.coeffs())])?;
        let [mode, value] = border_f32(border);
        let [s, ss] = image_args(src);
        let [d, ds] = image_args(dst);
        let [w, h] = size_args(src);
        let args = [
            s,
            ss,
            d,
            ds,
            w,
            h,
            Arg::Ptr(coeffs),
            Arg::I32(kernel.size() as i32),
            mode,
            value,
        ];
        let g = grid(src.width, src.height, tile);
        self.launch(
            KernelSet::Filter,
            tile,
            name,
            g,
            (tile.w as u32, tile.h as u32),
            &args,
        )
    }

    /// The separable `u8` kernel with its finishing step (`finish` 0: fixed-point rounding by
    /// `shift`; 1: box mean over `area`).
    #[allow(clippy::too_many_arguments)]
    fn sep_u8(
        &self,
        src: &DeviceImage<u8>,
        dst: &mut DeviceImage<u8>,
        kx: &[i32],
        ky: &[i32],
        shift: u32,
        finish: i32,
        area: i32,
        border: Border<u8>,
    ) -> Result<()> {
        let tile = Tile::DEFAULT;
        let (_tables, [kx_ptr, ky_ptr]) = self.coeffs([&i32_bytes(kx), &i32_bytes(ky)])?;
        let [mode, value] = border_u8(border);
        let [s, ss] = image_args(src);
        let [d, ds] = image_args(dst);
        let [w, h] = size_args(src);
        let args = [
            s,
            ss,
            d,
            ds,
            w,
            h,
            Arg::Ptr(kx_ptr),
            Arg::I32(kx.len() as i32),
            Arg::Ptr(ky_ptr),
            Arg::I32(ky.len() as i32),
            Arg::I32(shift as i32),
            Arg::I32(finish),
            Arg::I32(area),
            mode,
            value,
        ];
        let g = grid(src.width, src.height, tile);
        let b = (tile.w as u32, tile.h as u32);
        self.launch(
            KernelSet::Filter,
            tile,
            names::SEP_FILTER_U8_TILED,
            g,
            b,
            &args,
        )
    }

    /// The separable `f32` kernel, `dst = sum · scale`.
    fn sep_f32(
        &self,
        src: &DeviceImage<f32>,
        dst: &mut DeviceImage<f32>,
        kx: &[f32],
        ky: &[f32],
        scale: f32,
        border: Border<f32>,
    ) -> Result<()> {
        let tile = Tile::DEFAULT;
        let (_tables, [kx_ptr, ky_ptr]) = self.coeffs([&f32_bytes(kx), &f32_bytes(ky)])?;
        let [mode, value] = border_f32(border);
        let [s, ss] = image_args(src);
        let [d, ds] = image_args(dst);
        let [w, h] = size_args(src);
        let args = [
            s,
            ss,
            d,
            ds,
            w,
            h,
            Arg::Ptr(kx_ptr),
            Arg::I32(kx.len() as i32),
            Arg::Ptr(ky_ptr),
            Arg::I32(ky.len() as i32),
            Arg::F32(scale),
            mode,
            value,
        ];
        let g = grid(src.width, src.height, tile);
        let b = (tile.w as u32, tile.h as u32);
        self.launch(
            KernelSet::Filter,
            tile,
            names::SEP_FILTER_F32_TILED,
            g,
            b,
            &args,
        )
    }

    /// Separable fixed-point filter of a `u8` image, as `mvision_core::filter::sep_filter_u8`.
    ///
    /// Errors: [`crate::Error::Invalid`] (`SizeMismatch`) unless `dst` is `src`'s size; driver
    /// errors.
    pub fn sep_filter_u8(
        &self,
        src: &DeviceImage<u8>,
        dst: &mut DeviceImage<u8>,
        kernel: &SepKernelQ,
        border: Border<u8>,
    ) -> Result<()> {
        self.owns(src)?;
        self.owns(dst)?;
        same_size(src.size(), dst.size())?;
        self.sep_u8(
            src,
            dst,
            kernel.kx(),
            kernel.ky(),
            kernel.shift(),
            0,
            1,
            border,
        )
    }

    /// Separable float filter of an `f32` image, as `mvision_core::filter::sep_filter_f32`.
    ///
    /// Errors: as [`Context::sep_filter_u8`].
    pub fn sep_filter_f32(
        &self,
        src: &DeviceImage<f32>,
        dst: &mut DeviceImage<f32>,
        kernel: &SepKernelF32,
        border: Border<f32>,
    ) -> Result<()> {
        self.owns(src)?;
        self.owns(dst)?;
        same_size(src.size(), dst.size())?;
        self.sep_f32(src, dst, kernel.kx(), kernel.ky(), 1.0, border)
    }

    /// Gaussian blur of a `u8` image with the fixed-point kernel of
    /// `mvision_core::filter::gaussian_kernel_q` (`ksize` 0: from `sigma_px`; `sigma_px` ≤ 0:
    /// from `ksize`), as `mvision_core::filter::gaussian_blur_u8`.
    ///
    /// Errors: those of `gaussian_kernel_q`, then as [`Context::sep_filter_u8`].
    pub fn gaussian_blur_u8(
        &self,
        src: &DeviceImage<u8>,
        dst: &mut DeviceImage<u8>,
        ksize: usize,
        sigma_px: f32,
        border: Border<u8>,
    ) -> Result<()> {
        let kernel = gaussian_kernel_q(ksize, sigma_px)?;
        self.sep_filter_u8(src, dst, &kernel, border)
    }

    /// Gaussian blur of an `f32` image, as `mvision_core::filter::gaussian_blur_f32`.
    ///
    /// Errors: those of `gaussian_kernel_f32`, then as [`Context::sep_filter_f32`].
    pub fn gaussian_blur_f32(
        &self,
        src: &DeviceImage<f32>,
        dst: &mut DeviceImage<f32>,
        ksize: usize,
        sigma_px: f32,
        border: Border<f32>,
    ) -> Result<()> {
        let kernel = gaussian_kernel_f32(ksize, sigma_px)?;
        self.sep_filter_f32(src, dst, &kernel, border)
    }

    /// Box blur of a `u8` image (exact mean, halves up), as `mvision_core::filter::box_blur_u8`.
    ///
    /// Errors: [`crate::Error::Invalid`] with `ZeroSize` / `InvalidKernel` for a bad `ksize`,
    /// `SizeMismatch` unless `dst` is `src`'s size; driver errors.
    pub fn box_blur_u8(
        &self,
        src: &DeviceImage<u8>,
        dst: &mut DeviceImage<u8>,
        ksize: usize,
        border: Border<u8>,
    ) -> Result<()> {
        self.owns(src)?;
        self.owns(dst)?;
        check_box(ksize)?;
        same_size(src.size(), dst.size())?;
        let ones = &ONES[..ksize];
        self.sep_u8(src, dst, ones, ones, 0, 1, (ksize * ksize) as i32, border)
    }

    /// Box blur of an `f32` image (window sum times `1/ksize²`), as
    /// `mvision_core::filter::box_blur_f32`.
    ///
    /// Errors: as [`Context::box_blur_u8`].
    pub fn box_blur_f32(
        &self,
        src: &DeviceImage<f32>,
        dst: &mut DeviceImage<f32>,
        ksize: usize,
        border: Border<f32>,
    ) -> Result<()> {
        self.owns(src)?;
        self.owns(dst)?;
        check_box(ksize)?;
        same_size(src.size(), dst.size())?;
        let ones = &ONES_F32[..ksize];
        // The CPU's factor, rounded to f32 the same way.
        let inv = 1.0 / (ksize * ksize) as f32;
        self.sep_f32(src, dst, ones, ones, inv, border)
    }

    /// 3 × 3 Sobel derivatives of a `u8` image into `i16` images, as
    /// `mvision_core::filter::sobel_u8`.
    ///
    /// Errors: [`crate::Error::Invalid`] (`SizeMismatch`) unless `dx` and `dy` have `src`'s
    /// size; driver errors.
    pub fn sobel_u8(
        &self,
        src: &DeviceImage<u8>,
        dx: &mut DeviceImage<i16>,
        dy: &mut DeviceImage<i16>,
        border: Border<u8>,
    ) -> Result<()> {
        self.owns(src)?;
        self.owns(dx)?;
        self.owns(dy)?;
        // The core checks dy first, then dx.
        same_size(src.size(), dy.size())?;
        same_size(src.size(), dx.size())?;
        let [mode, value] = border_u8(border);
        self.sobel(
            src,
            image_args(dx),
            image_args(dy),
            names::SOBEL_U8,
            mode,
            value,
        )
    }

    /// 3 × 3 Sobel derivatives of an `f32` image, as `mvision_core::filter::sobel_f32`.
    ///
    /// Errors: as [`Context::sobel_u8`].
    pub fn sobel_f32(
        &self,
        src: &DeviceImage<f32>,
        dx: &mut DeviceImage<f32>,
        dy: &mut DeviceImage<f32>,
        border: Border<f32>,
    ) -> Result<()> {
        self.owns(src)?;
        self.owns(dx)?;
        self.owns(dy)?;
        same_size(src.size(), dy.size())?;
        same_size(src.size(), dx.size())?;
        let [mode, value] = border_f32(border);
        self.sobel(
            src,
            image_args(dx),
            image_args(dy),
            names::SOBEL_F32,
            mode,
            value,
        )
    }

    fn sobel<T: mvision_core::Pixel>(
        &self,
        src: &DeviceImage<T>,
        [dx, dxs]: [Arg; 2],
        [dy, dys]: [Arg; 2],
        name: &'static str,
        mode: Arg,
        value: Arg,
    ) -> Result<()> {
        let tile = Tile::DEFAULT;
        let [s, ss] = image_args(src);
        let [w, h] = size_args(src);
        let args = [s, ss, dx, dxs, dy, dys, w, h, mode, value];
        let g = grid(src.width, src.height, tile);
        let b = (tile.w as u32, tile.h as u32);
        self.launch(KernelSet::Filter, tile, name, g, b, &args)
    }
}
