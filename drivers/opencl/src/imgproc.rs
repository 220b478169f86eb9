//! Integral images, pyramid levels and bilinear resize on device images, matching
//! `mvision_core::{integral, pyramid, resize}` bit for bit on integer outputs.

use mvision_core::integral::{integral_size, MAX_INTEGRAL_PIXELS};
use mvision_core::pyramid::pyr_down_size;
use mvision_core::{Border, Pixel};
use mvision_kernels::{border_code, names, KernelSet, Tile, INTEGRAL_SCAN_MAX};

use crate::context::{Arg, Context};
use crate::error::Result;
use crate::image::{same_size, DeviceImage};

impl Context {
    /// The integral image `sum` and, if given, the squared integral image `sqsum` of a `u8`
    /// image, as [`mvision_core::integral::integral_u8`]: two kernels, a scan of every row
    /// (one work-group per row) and a running sum down every column.
    ///
    /// Errors: `Invalid(SizeMismatch)` unless the tables are `(w + 1) × (h + 1)`;
    /// `Invalid(Overflow)` above [`MAX_INTEGRAL_PIXELS`] pixels.
    pub fn integral_u8(
        &self,
        src: &DeviceImage<u8>,
        sum: &mut DeviceImage<u32>,
        sqsum: Option<&mut DeviceImage<u64>>,
    ) -> Result<()> {
        self.own(src)?;
        self.own(sum)?;
        let (w, h) = src.size();
        let size = integral_size(w, h);
        same_size(size, sum.size())?;
        if let Some(sq) = sqsum.as_deref() {
            self.own(sq)?;
            same_size(size, sq.size())?;
        }
        if (w as u64).saturating_mul(h as u64) > MAX_INTEGRAL_PIXELS {
            return Err(mvision_core::Error::Overflow.into());
        }
        let (sq_mem, sq_stride, want_sq) = match sqsum.as_deref() {
            Some(sq) => (sq.arg(), sq.stride_arg(), 1),
            None => (Arg::NullMem, Arg::I32(0), 0),
        };
        let group = INTEGRAL_SCAN_MAX
            .min(self.info().max_work_group_size)
            .min(self.info().max_work_item_sizes[0])
            .min(self.kernel_max_group(
                KernelSet::Integral,
                Tile::DEFAULT,
                names::INTEGRAL_ROWS_U8,
            )?)
            .min(self.kernel_max_group(
                KernelSet::Integral,
                Tile::DEFAULT,
                names::INTEGRAL_COLS,
            )?);
        let rows = [
            src.arg(),
            src.stride_arg(),
            sum.arg(),
            sum.stride_arg(),
            sq_mem,
            sq_stride,
            src.w_arg(),
            src.h_arg(),
            Arg::I32(want_sq),
        ];
        self.launch(
            KernelSet::Integral,
            Tile::DEFAULT,
            names::INTEGRAL_ROWS_U8,
            [group * h, 1],
            [group, 1],
            &rows,
        )?;
        let cols = [
            sum.arg(),
            sum.stride_arg(),
            sq_mem,
            sq_stride,
            src.w_arg(),
            src.h_arg(),
            Arg::I32(want_sq),
        ];
        self.launch(
            KernelSet::Integral,
            Tile::DEFAULT,
            names::INTEGRAL_COLS,
            [w + 1, 1],
            [group, 1],
            &cols,
        )
    }

    /// One Gaussian pyramid level down of a `u8` image, as
    /// [`mvision_core::pyramid::pyr_down_u8`].
    ///
    /// Errors: `Invalid(SizeMismatch)` unless `dst` is [`pyr_down_size`] of `src`.
    pub fn pyr_down_u8(
        &self,
        src: &DeviceImage<u8>,
        dst: &mut DeviceImage<u8>,
        border: Border<u8>,
    ) -> Result<()> {
        let (mode, value) = border_code(&border);
        let value = Arg::I32(i32::from(value.unwrap_or(0)));
        self.pyr_down(src, dst, mode, value, names::PYR_DOWN_U8)
    }

    /// One Gaussian pyramid level down of an `f32` image, as
    /// [`mvision_core::pyramid::pyr_down_f32`].
    ///
    /// Errors: as [`Context::pyr_down_u8`].
    pub fn pyr_down_f32(
        &self,
        src: &DeviceImage<f32>,
        dst: &mut DeviceImage<f32>,
        border: Border<f32>,
    ) -> Result<()> {
        let (mode, value) = border_code(&border);
        self.pyr_down(
            src,
            dst,
            mode,
            Arg::F32(value.unwrap_or(0.0)),
            names::PYR_DOWN_F32,
        )
    }

    fn pyr_down<T: Pixel>(
        &self,
        src: &DeviceImage<T>,
        dst: &mut DeviceImage<T>,
        mode: i32,
        value: Arg,
        name: &'static str,
    ) -> Result<()> {
        self.own(src)?;
        self.own(dst)?;
        same_size(pyr_down_size(src.width(), src.height()), dst.size())?;
        let args = [
            src.arg(),
            src.stride_arg(),
            src.w_arg(),
            src.h_arg(),
            dst.arg(),
            dst.stride_arg(),
            dst.w_arg(),
            dst.h_arg(),
            Arg::I32(mode),
            value,
        ];
        self.launch_resample(name, dst.size(), &args)
    }

    /// Bilinear resize of a `u8` image to `dst`'s size (pixel-centre aligned, Q11 coordinates),
    /// as [`mvision_core::resize::resize_bilinear_u8`].
    ///
    /// Errors: none beyond [`crate::Error::Device`] (every pair of device images is a valid
    /// resize).
    pub fn resize_bilinear_u8(
        &self,
        src: &DeviceImage<u8>,
        dst: &mut DeviceImage<u8>,
    ) -> Result<()> {
        self.resize(src, dst, names::RESIZE_BILINEAR_U8)
    }

    /// Bilinear resize of an `f32` image, as [`mvision_core::resize::resize_bilinear_f32`].
    ///
    /// Errors: as [`Context::resize_bilinear_u8`].
    pub fn resize_bilinear_f32(
        &self,
        src: &DeviceImage<f32>,
        dst: &mut DeviceImage<f32>,
    ) -> Result<()> {
        self.resize(src, dst, names::RESIZE_BILINEAR_F32)
    }

    fn resize<T: Pixel>(
        &self,
        src: &DeviceImage<T>,
        dst: &mut DeviceImage<T>,
        name: &'static str,
    ) -> Result<()> {
        self.own(src)?;
        self.own(dst)?;
        let args = [
            src.arg(),
            src.stride_arg(),
            src.w_arg(),
            src.h_arg(),
            dst.arg(),
            dst.stride_arg(),
            dst.w_arg(),
            dst.h_arg(),
        ];
        self.launch_resample(name, dst.size(), &args)
    }

    fn launch_resample(&self, name: &'static str, out: (usize, usize), args: &[Arg]) -> Result<()> {
        let tile = self.default_tile();
        self.launch(
            KernelSet::Resample,
            Tile::DEFAULT,
            name,
            [out.0, out.1],
            [tile.w, tile.h],
            args,
        )
    }
}
