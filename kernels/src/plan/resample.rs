//! Plans of the integral image (`kernels/common/integral.h`) and of the pyramid level and
//! bilinear resize (`kernels/common/resample.h`).

use mvision_core::integral::{integral_size, MAX_INTEGRAL_PIXELS};
use mvision_core::pyramid::pyr_down_size;
use mvision_core::{Border, Error as CoreError};

use super::{border_f32, border_u8, same_size, Arg, Img, Launch, Limits, PlanError, Planner};
use crate::{names, KernelSet, Tile, INTEGRAL_SCAN_MAX};

/// A validated integral image: its two launches, whose work-group size waits for the limit
/// the driver may only learn by compiling the program ([`IntegralPlan::launches`]).
#[derive(Clone, Debug, PartialEq)]
pub struct IntegralPlan<B> {
    rows: Vec<Arg<B>>,
    cols: Vec<Arg<B>>,
    size: (usize, usize),
    limits: Limits,
}

impl<B> IntegralPlan<B> {
    /// The row pass (`mv_integral_rows_u8`: one work-group per source row, scanning it in
    /// chunks of the group's width) and the column pass (`mv_integral_cols`: one work-item per
    /// table column), to be enqueued in this order.
    ///
    /// Work-groups have at most [`INTEGRAL_SCAN_MAX`] work-items, and at most what the device
    /// allows along x and in total, and `kernel_limit` (the largest group the compiled kernels
    /// accept, where the API reports one; else `usize::MAX`). With a known
    /// [`Limits::simd_width`], a row's group is cut to the fewest whole SIMD groups covering the
    /// row.
    pub fn launches(self, kernel_limit: usize) -> [Launch<B>; 2] {
        let (w, h) = self.size;
        let group = INTEGRAL_SCAN_MAX
            .min(self.limits.max_group)
            .min(self.limits.max_items[0])
            .min(kernel_limit);
        let row_group = match self.limits.simd_width {
            Some(simd) => w.next_multiple_of(simd).min(group),
            None => group,
        };
        let set = KernelSet::Integral;
        let rows = Launch::new(
            set,
            Tile::DEFAULT,
            names::INTEGRAL_ROWS_U8,
            self.rows,
            [row_group * h, 1],
            [row_group, 1],
        );
        let cols = Launch::new(
            set,
            Tile::DEFAULT,
            names::INTEGRAL_COLS,
            self.cols,
            [w + 1, 1],
            [group, 1],
        );
        [rows, cols]
    }
}

impl Planner {
    /// `mv_integral_rows_u8` then `mv_integral_cols`: the integral image `sum` and, if given,
    /// the squared integral image `sqsum` of a `u8` image, as
    /// `mvision_core::integral::integral_u8`.
    ///
    /// Errors: `Invalid(InvalidArgument)` for an image of another context;
    /// `Invalid(SizeMismatch)` unless the tables are `(w + 1) × (h + 1)`; `Invalid(Overflow)`
    /// above [`MAX_INTEGRAL_PIXELS`] pixels.
    pub fn integral_u8<B: Copy>(
        &self,
        src: Img<B>,
        sum: Img<B>,
        sqsum: Option<Img<B>>,
    ) -> Result<IntegralPlan<B>, PlanError> {
        self.owns_all([&src, &sum])?;
        let (w, h) = src.size();
        let size = integral_size(w, h);
        same_size(size, sum.size())?;
        if let Some(sq) = sqsum {
            self.owns(sq.context)?;
            same_size(size, sq.size())?;
        }
        if (w as u64).saturating_mul(h as u64) > MAX_INTEGRAL_PIXELS {
            return Err(CoreError::Overflow.into());
        }
        let (sq, want_sq) = match sqsum {
            Some(sq) => (sq.data(), 1),
            None => ([Arg::Null, Arg::I32(0)], 0),
        };
        let mut rows = Vec::with_capacity(9);
        rows.extend(src.data());
        let mut cols = Vec::with_capacity(7);
        for pass in [&mut rows, &mut cols] {
            pass.extend(sum.data());
            pass.extend(sq.iter().cloned());
            pass.extend(src.dims());
            pass.push(Arg::I32(want_sq));
        }
        Ok(IntegralPlan {
            rows,
            cols,
            size: (w, h),
            limits: self.limits,
        })
    }

    /// `mv_pyr_down_u8`: one Gaussian pyramid level down, as
    /// `mvision_core::pyramid::pyr_down_u8`.
    ///
    /// Errors: `Invalid(InvalidArgument)` for an image of another context;
    /// `Invalid(SizeMismatch)` unless `dst` is `pyr_down_size` of `src`.
    pub fn pyr_down_u8<B: Copy>(
        &self,
        src: Img<B>,
        dst: Img<B>,
        border: Border<u8>,
    ) -> Result<Launch<B>, PlanError> {
        self.pyr_down(src, dst, border_u8(border), names::PYR_DOWN_U8)
    }

    /// `mv_pyr_down_f32`, as `mvision_core::pyramid::pyr_down_f32`.
    ///
    /// Errors: as [`Planner::pyr_down_u8`].
    pub fn pyr_down_f32<B: Copy>(
        &self,
        src: Img<B>,
        dst: Img<B>,
        border: Border<f32>,
    ) -> Result<Launch<B>, PlanError> {
        self.pyr_down(src, dst, border_f32(border), names::PYR_DOWN_F32)
    }

    fn pyr_down<B: Copy>(
        &self,
        src: Img<B>,
        dst: Img<B>,
        border: [Arg<B>; 2],
        name: &'static str,
    ) -> Result<Launch<B>, PlanError> {
        self.owns_all([&src, &dst])?;
        same_size(pyr_down_size(src.width, src.height), dst.size())?;
        Ok(self.resample(src, dst, name, border))
    }

    /// `mv_resize_bilinear_u8`: bilinear resize to `dst`'s size (pixel-centre aligned, Q11
    /// coordinates), as `mvision_core::resize::resize_bilinear_u8`.
    ///
    /// Errors: `Invalid(InvalidArgument)` for an image of another context (any two sizes are a
    /// valid resize).
    pub fn resize_bilinear_u8<B: Copy>(
        &self,
        src: Img<B>,
        dst: Img<B>,
    ) -> Result<Launch<B>, PlanError> {
        self.owns_all([&src, &dst])?;
        Ok(self.resample(src, dst, names::RESIZE_BILINEAR_U8, []))
    }

    /// `mv_resize_bilinear_f32`, as `mvision_core::resize::resize_bilinear_f32`.
    ///
    /// Errors: as [`Planner::resize_bilinear_u8`].
    pub fn resize_bilinear_f32<B: Copy>(
        &self,
        src: Img<B>,
        dst: Img<B>,
    ) -> Result<Launch<B>, PlanError> {
        self.owns_all([&src, &dst])?;
        Ok(self.resample(src, dst, names::RESIZE_BILINEAR_F32, []))
    }

    /// A resample kernel: `src, src_stride, src_w, src_h, dst, dst_stride, dst_w, dst_h`, then
    /// `extra`, one work-item per destination pixel.
    fn resample<B: Copy, const N: usize>(
        &self,
        src: Img<B>,
        dst: Img<B>,
        name: &'static str,
        extra: [Arg<B>; N],
    ) -> Launch<B> {
        let mut args = Vec::with_capacity(8 + N);
        args.extend(src.data());
        args.extend(src.dims());
        args.extend(dst.data());
        args.extend(dst.dims());
        args.extend(extra);
        let tile = self.default_tile();
        self.launch_2d(KernelSet::Resample, tile, name, args, dst.size())
    }
}
