//! Linear filters on device images: dense `k × k` (naive or tiled), separable (and the box and
//! Gaussian blurs built on it) and Sobel, matching `mvision_core::filter` bit for bit on `u8`.
//!
//! Each operation validates like its CPU counterpart, then enqueues one kernel of
//! `kernels/common/filter.h` and returns.

use mvision_core::filter::{
    gaussian_kernel_f32, gaussian_kernel_q, Kernel2dF32, Kernel2dQ, SepKernelF32, SepKernelQ,
    MAX_KERNEL_SIZE,
};
use mvision_core::{Border, Pixel};
use mvision_kernels::{border_code, names, KernelSet, Tile};

use crate::context::{mem, Arg, Context};
use crate::error::Result;
use crate::image::{same_size, DeviceImage};

/// Which implementation of [`Context::filter2d_u8`] / [`Context::filter2d_f32`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// One work-item per output pixel reading its `k²` inputs from global memory.
    Naive,
    /// Work-groups of `w × h` work-items that first load their shared halo tile into local
    /// memory (`kernels/SPEC.md`). The tile must fit the device's work-group size and local
    /// memory; each distinct tile compiles its own program (once per context).
    Tiled {
        /// Work-items along x.
        w: usize,
        /// Work-items along y.
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

/// `border_mode, border_value` of a `u8` kernel.
fn border_u8(b: Border<u8>) -> [Arg; 2] {
    let (mode, value) = border_code(&b);
    [Arg::I32(mode), Arg::I32(i32::from(value.unwrap_or(0)))]
}

/// `border_mode, border_value` of an `f32` kernel.
fn border_f32(b: Border<f32>) -> [Arg; 2] {
    let (mode, value) = border_code(&b);
    [Arg::I32(mode), Arg::F32(value.unwrap_or(0.0))]
}

/// `box_blur_*`'s size check, as the core's.
fn check_box(ksize: usize) -> Result<()> {
    if ksize == 0 {
        Err(mvision_core::Error::ZeroSize.into())
    } else if ksize % 2 == 0 || ksize > MAX_KERNEL_SIZE {
        Err(mvision_core::Error::InvalidKernel.into())
    } else {
        Ok(())
    }
}

const ONES_I32: [i32; MAX_KERNEL_SIZE] = [1; MAX_KERNEL_SIZE];
const ONES_F32: [f32; MAX_KERNEL_SIZE] = [1.0; MAX_KERNEL_SIZE];

/// The parts of a dense filter call that differ between `u8` and `f32`.
struct Dense<'a, C> {
    coeffs: &'a [C],
    ksize: usize,
    /// `Some(shift)` for the fixed-point kernel (the float kernel has no shift argument).
    shift: Option<u32>,
    border: [Arg; 2],
    names: [&'static str; 2],
}

impl Context {
    /// Dense fixed-point convolution of a `u8` image, as [`mvision_core::filter::filter2d_u8`].
    ///
    /// Errors: `Invalid(SizeMismatch)` if `dst` is not `src`'s size; for `Variant::Tiled`,
    /// `Invalid(ZeroSize)` for a zero tile side and `Device { code: CL_INVALID_WORK_GROUP_SIZE }`
    /// when the tile exceeds the device's work-group or local-memory limits.
    pub fn filter2d_u8(
        &self,
        src: &DeviceImage<u8>,
        dst: &mut DeviceImage<u8>,
        kernel: &Kernel2dQ,
        border: Border<u8>,
        variant: Variant,
    ) -> Result<()> {
        let dense = Dense {
            coeffs: kernel.coeffs(),
            ksize: kernel.size(),
            shift: Some(kernel.shift()),
            border: border_u8(border),
            names: [names::FILTER2D_U8_NAIVE, names::FILTER2D_U8_TILED],
        };
        self.filter2d(src, dst, dense, variant)
    }

    /// Dense float convolution of an `f32` image, as [`mvision_core::filter::filter2d_f32`].
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
        let dense = Dense {
            coeffs: kernel.coeffs(),
            ksize: kernel.size(),
            shift: None,
            border: border_f32(border),
            names: [names::FILTER2D_F32_NAIVE, names::FILTER2D_F32_TILED],
        };
        self.filter2d(src, dst, dense, variant)
    }

    fn filter2d<T: Pixel, C: Copy>(
        &self,
        src: &DeviceImage<T>,
        dst: &mut DeviceImage<T>,
        dense: Dense<'_, C>,
        variant: Variant,
    ) -> Result<()> {
        self.own(src)?;
        self.own(dst)?;
        same_size(src.size(), dst.size())?;
        let (name, tile) = match variant {
            Variant::Naive => (dense.names[0], self.default_tile()),
            Variant::Tiled { w, h } => (dense.names[1], self.check_tile(w, h)?),
        };
        let coeffs = self.constant_buffer(dense.coeffs)?;
        let mut args = vec![
            src.arg(),
            src.stride_arg(),
            dst.arg(),
            dst.stride_arg(),
            src.w_arg(),
            src.h_arg(),
            mem(&coeffs),
            Arg::I32(dense.ksize as i32),
        ];
        if let Some(shift) = dense.shift {
            args.push(Arg::I32(shift as i32));
        }
        args.extend(dense.border);
        self.launch(
            KernelSet::Filter,
            tile,
            name,
            [src.width(), src.height()],
            [tile.w, tile.h],
            &args,
        )
    }

    /// Separable fixed-point convolution of a `u8` image, as
    /// [`mvision_core::filter::sep_filter_u8`].
    ///
    /// Errors: `Invalid(SizeMismatch)` if `dst` is not `src`'s size.
    pub fn sep_filter_u8(
        &self,
        src: &DeviceImage<u8>,
        dst: &mut DeviceImage<u8>,
        kernel: &SepKernelQ,
        border: Border<u8>,
    ) -> Result<()> {
        self.sep_u8(
            src,
            dst,
            kernel.kx(),
            kernel.ky(),
            kernel.shift(),
            None,
            border,
        )
    }

    /// Separable float convolution of an `f32` image, as
    /// [`mvision_core::filter::sep_filter_f32`].
    ///
    /// Errors: as [`Context::sep_filter_u8`].
    pub fn sep_filter_f32(
        &self,
        src: &DeviceImage<f32>,
        dst: &mut DeviceImage<f32>,
        kernel: &SepKernelF32,
        border: Border<f32>,
    ) -> Result<()> {
        self.sep_f32(src, dst, kernel.kx(), kernel.ky(), 1.0, border)
    }

    /// Box blur of a `u8` image (exact sum, rounded division by `ksize²`), as
    /// [`mvision_core::filter::box_blur_u8`].
    ///
    /// Errors: `Invalid(ZeroSize)` / `Invalid(InvalidKernel)` for a bad `ksize`, then
    /// `Invalid(SizeMismatch)`.
    pub fn box_blur_u8(
        &self,
        src: &DeviceImage<u8>,
        dst: &mut DeviceImage<u8>,
        ksize: usize,
        border: Border<u8>,
    ) -> Result<()> {
        check_box(ksize)?;
        let ones = &ONES_I32[..ksize];
        let area = (ksize * ksize) as i32;
        self.sep_u8(src, dst, ones, ones, 0, Some(area), border)
    }

    /// Box blur of an `f32` image (window sum times `1/ksize²`), as
    /// [`mvision_core::filter::box_blur_f32`].
    ///
    /// Errors: as [`Context::box_blur_u8`].
    pub fn box_blur_f32(
        &self,
        src: &DeviceImage<f32>,
        dst: &mut DeviceImage<f32>,
        ksize: usize,
        border: Border<f32>,
    ) -> Result<()> {
        check_box(ksize)?;
        let ones = &ONES_F32[..ksize];
        let inv = 1.0 / (ksize * ksize) as f32;
        self.sep_f32(src, dst, ones, ones, inv, border)
    }

    /// Gaussian blur of a `u8` image with the fixed-point kernel of
    /// [`mvision_core::filter::gaussian_kernel_q`] (`ksize` 0: from `sigma_px`; `sigma_px` ≤ 0:
    /// from `ksize`), as [`mvision_core::filter::gaussian_blur_u8`].
    ///
    /// Errors: those of `gaussian_kernel_q`, then `Invalid(SizeMismatch)`.
    pub fn gaussian_blur_u8(
        &self,
        src: &DeviceImage<u8>,
        dst: &mut DeviceImage<u8>,
        ksize: usize,
        sigma_px: f32,
        border: Border<u8>,
    ) -> Result<()> {
        let k = gaussian_kernel_q(ksize, sigma_px)?;
        self.sep_filter_u8(src, dst, &k, border)
    }

    /// Gaussian blur of an `f32` image, as [`mvision_core::filter::gaussian_blur_f32`].
    ///
    /// Errors: those of [`mvision_core::filter::gaussian_kernel_f32`], then
    /// `Invalid(SizeMismatch)`.
    pub fn gaussian_blur_f32(
        &self,
        src: &DeviceImage<f32>,
        dst: &mut DeviceImage<f32>,
        ksize: usize,
        sigma_px: f32,
        border: Border<f32>,
    ) -> Result<()> {
        let k = gaussian_kernel_f32(ksize, sigma_px)?;
        self.sep_filter_f32(src, dst, &k, border)
    }

    /// `mv_sep_filter_u8_tiled`: `box_area` selects the box finish, else the rounding shift.
    #[allow(clippy::too_many_arguments)]
    fn sep_u8(
        &self,
        src: &DeviceImage<u8>,
        dst: &mut DeviceImage<u8>,
        kx: &[i32],
        ky: &[i32],
        shift: u32,
        box_area: Option<i32>,
        border: Border<u8>,
    ) -> Result<()> {
        self.own(src)?;
        self.own(dst)?;
        same_size(src.size(), dst.size())?;
        let (bx, by) = (self.constant_buffer(kx)?, self.constant_buffer(ky)?);
        let [mode, value] = border_u8(border);
        let args = [
            src.arg(),
            src.stride_arg(),
            dst.arg(),
            dst.stride_arg(),
            src.w_arg(),
            src.h_arg(),
            mem(&bx),
            Arg::I32(kx.len() as i32),
            mem(&by),
            Arg::I32(ky.len() as i32),
            Arg::I32(shift as i32),
            Arg::I32(i32::from(box_area.is_some())),
            Arg::I32(box_area.unwrap_or(1)),
            mode,
            value,
        ];
        self.launch_tiled(names::SEP_FILTER_U8_TILED, src.size(), &args)
    }

    /// `mv_sep_filter_f32_tiled` with `dst = acc · scale`.
    fn sep_f32(
        &self,
        src: &DeviceImage<f32>,
        dst: &mut DeviceImage<f32>,
        kx: &[f32],
        ky: &[f32],
        scale: f32,
        border: Border<f32>,
    ) -> Result<()> {
        self.own(src)?;
        self.own(dst)?;
        same_size(src.size(), dst.size())?;
        let (bx, by) = (self.constant_buffer(kx)?, self.constant_buffer(ky)?);
        let [mode, value] = border_f32(border);
        let args = [
            src.arg(),
            src.stride_arg(),
            dst.arg(),
            dst.stride_arg(),
            src.w_arg(),
            src.h_arg(),
            mem(&bx),
            Arg::I32(kx.len() as i32),
            mem(&by),
            Arg::I32(ky.len() as i32),
            Arg::F32(scale),
            mode,
            value,
        ];
        self.launch_tiled(names::SEP_FILTER_F32_TILED, src.size(), &args)
    }

    /// 3 × 3 Sobel derivatives of a `u8` image into `i16` images, as
    /// [`mvision_core::filter::sobel_u8`].
    ///
    /// Errors: `Invalid(SizeMismatch)` unless `dx` and `dy` have `src`'s size.
    pub fn sobel_u8(
        &self,
        src: &DeviceImage<u8>,
        dx: &mut DeviceImage<i16>,
        dy: &mut DeviceImage<i16>,
        border: Border<u8>,
    ) -> Result<()> {
        self.sobel(src, dx, dy, border_u8(border), names::SOBEL_U8)
    }

    /// 3 × 3 Sobel derivatives of an `f32` image, as [`mvision_core::filter::sobel_f32`].
    ///
    /// Errors: as [`Context::sobel_u8`].
    pub fn sobel_f32(
        &self,
        src: &DeviceImage<f32>,
        dx: &mut DeviceImage<f32>,
        dy: &mut DeviceImage<f32>,
        border: Border<f32>,
    ) -> Result<()> {
        self.sobel(src, dx, dy, border_f32(border), names::SOBEL_F32)
    }

    fn sobel<S: Pixel, D: Pixel>(
        &self,
        src: &DeviceImage<S>,
        dx: &mut DeviceImage<D>,
        dy: &mut DeviceImage<D>,
        border: [Arg; 2],
        name: &'static str,
    ) -> Result<()> {
        self.own(src)?;
        self.own(dx)?;
        self.own(dy)?;
        same_size(src.size(), dy.size())?;
        same_size(src.size(), dx.size())?;
        let [mode, value] = border;
        let args = [
            src.arg(),
            src.stride_arg(),
            dx.arg(),
            dx.stride_arg(),
            dy.arg(),
            dy.stride_arg(),
            src.w_arg(),
            src.h_arg(),
            mode,
            value,
        ];
        self.launch_tiled(name, src.size(), &args)
    }

    /// Launches a tiled kernel of the filter program built for the default tile.
    fn launch_tiled(&self, name: &'static str, size: (usize, usize), args: &[Arg]) -> Result<()> {
        let tile = self.default_tile();
        self.launch(
            KernelSet::Filter,
            tile,
            name,
            [size.0, size.1],
            [tile.w, tile.h],
            args,
        )
    }
}
