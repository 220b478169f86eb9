//! Plans of the integral image (`kernels/common/integral.h`) and of the pyramid level and
//! bilinear resize (`kernels/common/resample.h`).

use mvision_core::integral::{integral_size, MAX_INTEGRAL_PIXELS};
use mvision_core::pyramid::pyr_down_size;
use mvision_core::{Border, Error as CoreError};

use super::{border_f32, border_u8, same_size, Arg, Img, Launch, Limits, PlanError, Planner};
use crate::{
    names, IntegralCarries, IntegralScan, IntegralTuning, KernelSet, Tile, INTEGRAL_GROUP_MIN,
    INTEGRAL_LOOKBACK_GROUP, INTEGRAL_LOOKBACK_SQ_MAX_PIXELS, INTEGRAL_LOOKBACK_TILE_H,
    INTEGRAL_LOOKBACK_TILE_W, INTEGRAL_SCAN_MAX, INTEGRAL_TILE_W,
};

/// A validated integral image: its launches, whose work-group size waits for the limit the
/// driver may only learn by compiling the program, and whose scratch the driver provides
/// ([`IntegralPlan::launches`]).
#[derive(Clone, Debug, PartialEq)]
pub struct IntegralPlan<B> {
    src: [Arg<B>; 2],
    sum: [Arg<B>; 2],
    sq: [Arg<B>; 2],
    want_sq: bool,
    size: (usize, usize),
    limits: Limits,
}

/// Device scratch of the GPU integral scans ([`IntegralPlan::scratch`]): per tile, the
/// column and row sums (tiled scan: and the carries; look-back scan: aggregate and inclusive)
/// as `u32` for the table of pixels and `u64` for the table of squares, and the look-back
/// scan's control words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntegralScratch {
    /// Bytes of the `u32` scratch buffer (`scratch` of `kernels/SPEC.md`).
    pub bytes_u32: usize,
    /// Bytes of the `u64` scratch buffer (`scratch64`); 0 without the squared table, whose
    /// kernels then take a null buffer.
    pub bytes_u64: usize,
    /// Bytes of the look-back scan's control words (`ctl`), 0 for the tiled scan. The driver
    /// zeroes this buffer when it allocates it; every launch leaves it zero.
    pub bytes_ctl: usize,
}

impl<B: Copy> IntegralPlan<B> {
    /// The largest work-group allowed: at most [`INTEGRAL_SCAN_MAX`] work-items, what the
    /// device allows along x and in total, and `kernel_limit` (the largest group the compiled
    /// kernels accept, where the API reports one; else `usize::MAX`).
    fn group_limit(&self, kernel_limit: usize) -> usize {
        INTEGRAL_SCAN_MAX
            .min(self.limits.max_group)
            .min(self.limits.max_items[0])
            .min(kernel_limit)
    }

    /// The work-group of the tiled scan (the largest of 256, 128, 64 or 32 work-items within
    /// the limits and [`IntegralTuning::group_max`], [`INTEGRAL_GROUP_MIN`] …
    /// [`crate::INTEGRAL_GROUP_MAX`]), or `None` where the device
    /// allows fewer than 32 or lacks the local memory: the row and column passes run instead.
    pub fn tiled_group(&self, kernel_limit: usize) -> Option<usize> {
        let limit = self
            .group_limit(kernel_limit)
            .min(IntegralTuning::get().group_max);
        let local = KernelSet::Integral.local_mem_bytes(Tile::DEFAULT) as u64;
        if limit < INTEGRAL_GROUP_MIN || self.limits.local_mem_bytes < local {
            return None;
        }
        let mut group = INTEGRAL_GROUP_MIN;
        while group * 2 <= limit {
            group *= 2;
        }
        Some(group)
    }

    /// Tiles along x and y of the tiled scan (tile height [`IntegralTuning::tile_h`]).
    fn tiles(&self) -> (usize, usize) {
        let (w, h) = self.size;
        (
            w.div_ceil(INTEGRAL_TILE_W),
            h.div_ceil(IntegralTuning::get().tile_h),
        )
    }

    /// Whether the look-back scan runs ([`IntegralScan`]): asked for, or `auto` on a device
    /// with [`Limits::lookback`] (with the squares: on images of fewer than
    /// [`INTEGRAL_LOOKBACK_SQ_MAX_PIXELS`]); and the device allows work-groups of
    /// [`INTEGRAL_LOOKBACK_GROUP`] (as [`IntegralPlan::tiled_group`] sees it: the same limits
    /// bound both scans' groups, whose local memory the tiled scan's check covers).
    fn lookback(&self, group: Option<usize>) -> bool {
        let wanted = match IntegralTuning::get().scan {
            IntegralScan::Auto => {
                let (w, h) = self.size;
                self.limits.lookback && !(self.want_sq && w * h >= INTEGRAL_LOOKBACK_SQ_MAX_PIXELS)
            }
            IntegralScan::LookBack => true,
            IntegralScan::Tiled => false,
        };
        wanted && group.is_some_and(|g| g >= INTEGRAL_LOOKBACK_GROUP)
    }

    /// Tiles of the look-back scan ([`INTEGRAL_LOOKBACK_TILE_W`] ×
    /// [`INTEGRAL_LOOKBACK_TILE_H`]), in all.
    fn lookback_tiles(&self) -> usize {
        let (w, h) = self.size;
        w.div_ceil(INTEGRAL_LOOKBACK_TILE_W) * h.div_ceil(INTEGRAL_LOOKBACK_TILE_H)
    }

    /// Whether the look-back scan adds its carries directly ([`crate::IntegralLookBack::Direct`]) rather
    /// than by walks: at most [`crate::IntegralLookBack::direct_max_side`] tiles along each side.
    fn lookback_direct(&self) -> bool {
        let (w, h) = self.size;
        let most = IntegralTuning::get().lookback.direct_max_side();
        w.div_ceil(INTEGRAL_LOOKBACK_TILE_W) <= most && h.div_ceil(INTEGRAL_LOOKBACK_TILE_H) <= most
    }

    /// The scratch of the scan that runs with the kernels' group limit `kernel_limit`: the
    /// tiled scan `nty · w + 2 · ntx · h + ntx · nty` elements of each type, `ntx × nty` being
    /// its tiles; the look-back scan `nt · (2 · 64 + 2 · 128 + 2)` elements of each type and
    /// `2 + 2 · nt` control words, `nt` being its tiles.
    pub fn scratch(&self, kernel_limit: usize) -> IntegralScratch {
        let (w, h) = self.size;
        let (elems, ctl) = if self.lookback(self.tiled_group(kernel_limit)) {
            let nt = self.lookback_tiles();
            let per_tile = 2 * INTEGRAL_LOOKBACK_TILE_H + 2 * INTEGRAL_LOOKBACK_TILE_W + 2;
            (nt * per_tile, 2 + 2 * nt)
        } else {
            let (ntx, nty) = self.tiles();
            (nty * w + 2 * ntx * h + ntx * nty, 0)
        };
        IntegralScratch {
            bytes_u32: 4 * elems,
            bytes_u64: if self.want_sq { 8 * elems } else { 0 },
            bytes_ctl: 4 * ctl,
        }
    }

    /// The launches, to be enqueued in this order.
    ///
    /// With `scratch` (the driver's buffers of at least [`IntegralPlan::scratch`] bytes:
    /// `u32`, `u64` with the squared table, control words for the look-back scan) and a
    /// [`IntegralPlan::tiled_group`], the look-back scan where it runs ([`IntegralScan`]):
    /// `mv_integral_lookback_u8` and, with the squared table, `mv_integral_lookback_sq_u8`
    /// (the `_walk_` kernels instead on images of more than
    /// [`crate::IntegralLookBack::direct_max_side`] tiles along a side), each one group of [`INTEGRAL_LOOKBACK_GROUP`] per tile of [`INTEGRAL_LOOKBACK_TILE_W`] ×
    /// [`INTEGRAL_LOOKBACK_TILE_H`]; else the tiled scan: `mv_integral_tile_sums_u8`,
    /// `mv_integral_tiles_u8` and, with the squared table, `mv_integral_tiles_sq_u8` with one
    /// work-group per tile, `mv_integral_carries`
    /// (second) with one per 32 columns and one per tile outside the first tile column
    /// ([`IntegralCarries::Tiled`], the default) or one per tile column but the first (the
    /// other passes). Otherwise the row pass (`mv_integral_rows_u8`: one work-group per source row,
    /// scanning it in chunks of the group's width; with a known [`Limits::simd_width`], cut to
    /// the fewest whole SIMD groups covering the row) and the column pass (`mv_integral_cols`:
    /// one work-item per table column).
    pub fn launches(
        self,
        kernel_limit: usize,
        scratch: Option<(B, Option<B>, Option<B>)>,
    ) -> Vec<Launch<B>> {
        let (w, h) = self.size;
        let set = KernelSet::Integral;
        let want_sq = Arg::I32(i32::from(self.want_sq));
        let dims = [Arg::I32(w as i32), Arg::I32(h as i32)];
        if let (Some(group), Some((s32, s64, ctl))) = (self.tiled_group(kernel_limit), scratch) {
            let (ntx, nty) = self.tiles();
            if let (true, Some(ctl)) = (self.lookback(Some(group)), ctl) {
                let one = |kernel, table: &[Arg<B>; 2], data: B| {
                    let mut args = Vec::with_capacity(8);
                    args.extend(self.src.iter().cloned());
                    args.extend(table.iter().cloned());
                    args.extend([Arg::Buf(ctl), Arg::Buf(data)]);
                    args.extend(dims.iter().cloned());
                    let (n, groups) = (INTEGRAL_LOOKBACK_GROUP, self.lookback_tiles());
                    Launch::new(set, Tile::DEFAULT, kernel, args, [groups * n, 1], [n, 1])
                };
                let (pixels, squares) = if self.lookback_direct() {
                    (names::INTEGRAL_LOOKBACK_U8, names::INTEGRAL_LOOKBACK_SQ_U8)
                } else {
                    let sq = names::INTEGRAL_LOOKBACK_WALK_SQ_U8;
                    (names::INTEGRAL_LOOKBACK_WALK_U8, sq)
                };
                let mut launches = vec![one(pixels, &self.sum, s32)];
                if let (true, Some(s64)) = (self.want_sq, s64) {
                    launches.push(one(squares, &self.sq, s64));
                }
                return launches;
            }
            let scratch = [Arg::Buf(s32), s64.map_or(Arg::Null, Arg::Buf)];
            let mut sums = Vec::with_capacity(7);
            sums.extend(self.src.iter().cloned());
            sums.extend(scratch.iter().cloned());
            sums.extend(dims.iter().cloned());
            sums.push(want_sq.clone());
            let mut carries = Vec::with_capacity(5);
            carries.extend(scratch.iter().cloned());
            carries.extend(dims.iter().cloned());
            carries.push(want_sq.clone());
            let tiles = |table: &[Arg<B>; 2], scratch: &Arg<B>| {
                let mut args = Vec::with_capacity(7);
                args.extend(self.src.iter().cloned());
                args.extend(table.iter().cloned());
                args.push(scratch.clone());
                args.extend(dims.iter().cloned());
                args
            };
            let row_groups = match IntegralTuning::get().carries {
                IntegralCarries::Tiled => (ntx - 1) * nty,
                IntegralCarries::Par => ntx - 1,
            };
            let carry_groups = w.div_ceil(INTEGRAL_GROUP_MIN) + row_groups;
            let launch = |kernel, args, groups: usize| {
                Launch::new(
                    set,
                    Tile::DEFAULT,
                    kernel,
                    args,
                    [groups * group, 1],
                    [group, 1],
                )
            };
            let mut launches = vec![
                launch(names::INTEGRAL_TILE_SUMS_U8, sums, ntx * nty),
                launch(names::INTEGRAL_CARRIES, carries, carry_groups),
                launch(
                    names::INTEGRAL_TILES_U8,
                    tiles(&self.sum, &scratch[0]),
                    ntx * nty,
                ),
            ];
            if self.want_sq {
                launches.push(launch(
                    names::INTEGRAL_TILES_SQ_U8,
                    tiles(&self.sq, &scratch[1]),
                    ntx * nty,
                ));
            }
            return launches;
        }
        let group = self.group_limit(kernel_limit);
        let row_group = match self.limits.simd_width {
            Some(simd) => w.next_multiple_of(simd).min(group),
            None => group,
        };
        let mut rows = Vec::with_capacity(9);
        rows.extend(self.src);
        let mut cols = Vec::with_capacity(7);
        for pass in [&mut rows, &mut cols] {
            pass.extend(self.sum.iter().cloned());
            pass.extend(self.sq.iter().cloned());
            pass.extend(dims.iter().cloned());
            pass.push(want_sq.clone());
        }
        vec![
            Launch::new(
                set,
                Tile::DEFAULT,
                names::INTEGRAL_ROWS_U8,
                rows,
                [row_group * h, 1],
                [row_group, 1],
            ),
            Launch::new(
                set,
                Tile::DEFAULT,
                names::INTEGRAL_COLS,
                cols,
                [w + 1, 1],
                [group, 1],
            ),
        ]
    }
}

impl Planner {
    /// The integral image `sum` and, if given, the squared integral image `sqsum` of a `u8`
    /// image, as `mvision_core::integral::integral_u8`: the tiled scan, or the row and column
    /// passes ([`IntegralPlan::launches`]).
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
        Ok(IntegralPlan {
            src: src.data(),
            sum: sum.data(),
            sq: sqsum.map_or([Arg::Null, Arg::I32(0)], |sq| sq.data()),
            want_sq: sqsum.is_some(),
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
