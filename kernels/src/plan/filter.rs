//! Plans of the linear filters (`kernels/common/filter.h`): dense (naive or tiled), separable
//! (and the box and Gaussian blurs built on it) and Sobel.

use mvision_core::filter::{
    gaussian_kernel_f32, gaussian_kernel_q, reduce_separable_taps, Kernel2dF32, Kernel2dQ,
    SepKernelF32, SepKernelQ, MAX_KERNEL_SIZE,
};
use mvision_core::{Border, Error as CoreError};

use super::{
    border_f32, border_u8, same_size, table_f32, table_i32, Arg, Img, Launch, MmaTaps, PlanError,
    Planner, Variant,
};
use crate::{
    names, FilterTuning, KernelSet, MmaMode, StreamMode, DENSE_COLS_WIDE_MIN_PIXELS,
    DENSE_COLS_WIDE_TILE, DENSE_ROWS, LINE_SLOTS, PX_F32, PX_U8, STREAM_PX, TAPS_SLOTS,
};

const ONES_I32: [i32; MAX_KERNEL_SIZE] = [1; MAX_KERNEL_SIZE];
const ONES_F32: [f32; MAX_KERNEL_SIZE] = [1.0; MAX_KERNEL_SIZE];

/// The box size check of `mvision_core::filter::box_blur_*`.
fn check_box(ksize: usize) -> Result<(), CoreError> {
    if ksize == 0 {
        Err(CoreError::ZeroSize)
    } else if ksize.is_multiple_of(2) || ksize > MAX_KERNEL_SIZE {
        Err(CoreError::InvalidKernel)
    } else {
        Ok(())
    }
}

/// The parts of a dense filter that differ between `u8` and `f32`.
struct Dense<'a, B> {
    /// `[naive, tiled]` kernel names.
    names: [&'static str; 2],
    /// The streaming kernel (3 × 3).
    stream: Option<&'static str>,
    /// The streaming kernel with packed products and the coefficients it checks (`u8`).
    packed: Option<(&'static str, &'a [i32])>,
    coeffs: Arg<B>,
    ksize: usize,
    /// `Some(shift)` for the fixed-point kernel (the float kernel has no shift argument).
    shift: Option<u32>,
    border: [Arg<B>; 2],
    /// Output pixels per work-item of the tiled kernel ([`PX_U8`] / [`PX_F32`]).
    px: usize,
    /// Pixels from which the halo tile replaces the streaming kernel under `auto`.
    halo_from: Option<usize>,
    /// The coefficients of the matrix-unit kernel, where it runs this filter (`u8`).
    mma: Option<MmaTaps>,
    /// The column-tile kernel (`f32`).
    cols: Option<&'static str>,
}

/// The parts of a separable filter that differ between `u8` and `f32`.
struct Separable<'a, B> {
    /// The tiled kernel.
    tiled: &'static str,
    /// The streaming kernel for these taps, if there is one.
    stream: Option<&'static str>,
    /// The streaming kernel with packed products and the horizontal taps it checks (`u8`).
    packed: Option<(&'static str, &'a [i32])>,
    /// The column-tile kernel.
    cols: Option<&'static str>,
    kx: (Arg<B>, usize),
    ky: (Arg<B>, usize),
    /// What follows `ky_len`: `shift, finish, area` (`u8`) or `scale` (`f32`).
    finish: Vec<Arg<B>>,
    border: [Arg<B>; 2],
    /// Output pixels per work-item ([`PX_U8`] / [`PX_F32`]).
    px: usize,
}

/// The taps and shift with which `mv_sep_filter_u8_cols` computes the separable `u8` filter
/// `(kx, ky, shift)` exactly in `f32`, if it can: with `reduce` (the rounding finish) the powers
/// of two common to each axis's taps are first taken out of them and out of the shift by the
/// core's own [`reduce_separable_taps`]; then every product and partial sum is an integer
/// of magnitude at most `255·Σ|kx'|·max(1, Σ|ky'|)`, exact in `f32` while below 2²⁴. `None`
/// when that bound is not met (the integer kernels run).
pub(crate) fn exact_in_f32(
    kx: &[i32],
    ky: &[i32],
    shift: u32,
    reduce: bool,
) -> Option<(Vec<i32>, Vec<i32>, u32)> {
    let (mut rx, mut ry) = (kx.to_vec(), ky.to_vec());
    // The box finish divides by the area: nothing comes out (a budget of 0).
    let budget = if reduce { shift } else { 0 };
    let left = reduce_separable_taps(kx, ky, budget, &mut rx, &mut ry);
    let rshift = if reduce { left } else { shift };
    let gain = |k: &[i32]| k.iter().map(|&c| i64::from(c).abs()).sum::<i64>();
    let worst = gain(&rx).checked_mul(gain(&ry).max(1))?.checked_mul(255)?;
    (worst < 1 << 24).then_some((rx, ry, rshift))
}

impl Planner {
    /// `mv_filter2d_u8_*`, as `mvision_core::filter::filter2d_u8`.
    ///
    /// Errors: `Invalid(InvalidArgument)` for an image of another context;
    /// `Invalid(SizeMismatch)` unless `dst` is `src`'s size; for [`Variant::Tiled`],
    /// `Invalid(ZeroSize)` for a zero tile side and a [`super::Refusal`] for a tile beyond the
    /// device's limits.
    pub fn filter2d_u8<B: Copy>(
        &self,
        src: Img<B>,
        dst: Img<B>,
        kernel: &Kernel2dQ,
        border: Border<u8>,
        variant: Variant,
    ) -> Result<Launch<B>, PlanError> {
        let k = kernel.size();
        let pixels = src.width * src.height;
        let mma = if variant != Variant::Naive && self.uses_mma(k, pixels, false) {
            let coeffs: Vec<i64> = kernel.coeffs().iter().map(|&c| i64::from(c)).collect();
            MmaTaps::new(&coeffs, k, (1i64 << kernel.shift()) >> 1)
        } else {
            None
        };
        let dense = Dense {
            names: [names::FILTER2D_U8_NAIVE, names::FILTER2D_U8_TILED],
            stream: Some(names::FILTER2D_U8_STREAM),
            packed: Some((names::FILTER2D_U8_STREAM_DP, kernel.coeffs())),
            coeffs: table_i32(kernel.coeffs(), TAPS_SLOTS),
            ksize: kernel.size(),
            shift: Some(kernel.shift()),
            border: border_u8(border),
            px: PX_U8,
            halo_from: None,
            mma,
            cols: None,
        };
        self.dense(src, dst, dense, variant)
    }

    /// `mv_filter2d_f32_*`, as `mvision_core::filter::filter2d_f32`.
    ///
    /// Errors: as [`Planner::filter2d_u8`].
    pub fn filter2d_f32<B: Copy>(
        &self,
        src: Img<B>,
        dst: Img<B>,
        kernel: &Kernel2dF32,
        border: Border<f32>,
        variant: Variant,
    ) -> Result<Launch<B>, PlanError> {
        let dense = Dense {
            names: [names::FILTER2D_F32_NAIVE, names::FILTER2D_F32_TILED],
            stream: Some(names::FILTER2D_F32_STREAM),
            packed: None,
            coeffs: table_f32(kernel.coeffs(), TAPS_SLOTS),
            ksize: kernel.size(),
            shift: None,
            border: border_f32(border),
            px: PX_F32,
            halo_from: self.limits().dense_f32_halo_from,
            mma: None,
            cols: Some(names::FILTER2D_F32_COLS),
        };
        self.dense(src, dst, dense, variant)
    }

    fn dense<B: Copy>(
        &self,
        src: Img<B>,
        dst: Img<B>,
        dense: Dense<'_, B>,
        variant: Variant,
    ) -> Result<Launch<B>, PlanError> {
        self.owns_all([&src, &dst])?;
        same_size(src.size(), dst.size())?;
        let tile = self.variant_tile(variant)?;
        if let Some(taps) = dense.mma {
            let shift = dense.shift.unwrap_or(0);
            return Ok(self.mma(src, dst, taps, dense.ksize, shift, None, dense.border, tile));
        }
        let tuning = FilterTuning::get();
        let (w, h) = src.size();
        // The column tile, for the default tile only (other tiles keep seed 002's kernel).
        let cols = dense.cols.filter(|_| {
            variant != Variant::Naive
                && tile == self.default_tile()
                && tuning.uses_cols(dense.ksize)
        });
        // The streaming kernel replaces the halo tile where it exists and the tuning allows
        // (under `auto`, not on images from `halo_from` pixels on).
        let halo = tuning.stream == StreamMode::Auto && dense.halo_from.is_some_and(|p| w * h >= p);
        let stream = dense
            .stream
            .filter(|_| {
                variant != Variant::Naive
                    && cols.is_none()
                    && tuning.streams_dense(dense.ksize)
                    && !halo
            })
            .map(|plain| match dense.packed {
                Some((packed, c)) if tuning.packs(c, self.limits().dp2a) => packed,
                _ => plain,
            });
        let name = cols
            .or(stream)
            .unwrap_or(dense.names[usize::from(variant != Variant::Naive)]);
        let mut args = Vec::with_capacity(11);
        args.extend(src.data());
        args.extend(dst.data());
        args.extend(src.dims());
        args.push(dense.coeffs);
        args.push(Arg::I32(dense.ksize as i32));
        if let Some(shift) = dense.shift {
            args.push(Arg::I32(shift as i32));
        }
        args.extend(dense.border);
        // The tiled kernel computes `px` outputs per work-item along x, in DENSE_ROWS rows; the
        // streaming one STREAM_PX in `stream_rows`.
        let (px, py) = if variant == Variant::Naive {
            (1, 1)
        } else if cols.is_some() {
            (STREAM_PX, tile.cols_rows())
        } else if stream.is_some() {
            (STREAM_PX, tuning.stream_rows)
        } else {
            (dense.px, DENSE_ROWS)
        };
        let range = (w.div_ceil(px), h.div_ceil(py));
        // Large images take the column tile in wider groups (the same rows per work-item).
        let wide = DENSE_COLS_WIDE_TILE;
        let tile = if cols.is_some()
            && w.saturating_mul(h) >= DENSE_COLS_WIDE_MIN_PIXELS
            && wide.cols_rows() == py
            && self.limits().check_tile(wide).is_ok()
        {
            wide
        } else {
            tile
        };
        Ok(self.launch_2d(KernelSet::Filter, tile, name, args, range))
    }

    /// `mv_sep_filter_u8_tiled` with the rounding shift, as
    /// `mvision_core::filter::sep_filter_u8`.
    ///
    /// Errors: `Invalid(InvalidArgument)` for an image of another context;
    /// `Invalid(SizeMismatch)` unless `dst` is `src`'s size.
    pub fn sep_filter_u8<B: Copy>(
        &self,
        src: Img<B>,
        dst: Img<B>,
        kernel: &SepKernelQ,
        border: Border<u8>,
    ) -> Result<Launch<B>, PlanError> {
        self.owns_all([&src, &dst])?;
        same_size(src.size(), dst.size())?;
        Ok(self.sep_u8(
            src,
            dst,
            kernel.kx(),
            kernel.ky(),
            kernel.shift(),
            None,
            border,
        ))
    }

    /// `mv_sep_filter_f32_tiled` with scale 1, as `mvision_core::filter::sep_filter_f32`.
    ///
    /// Errors: as [`Planner::sep_filter_u8`].
    pub fn sep_filter_f32<B: Copy>(
        &self,
        src: Img<B>,
        dst: Img<B>,
        kernel: &SepKernelF32,
        border: Border<f32>,
    ) -> Result<Launch<B>, PlanError> {
        self.owns_all([&src, &dst])?;
        same_size(src.size(), dst.size())?;
        Ok(self.sep_f32(src, dst, kernel.kx(), kernel.ky(), 1.0, border))
    }

    /// `mv_sep_filter_u8_tiled` with the box finish (exact sum, rounded division by
    /// `ksize²`), as `mvision_core::filter::box_blur_u8`.
    ///
    /// Errors: `Invalid(InvalidArgument)` for an image of another context; `Invalid(ZeroSize)`
    /// / `Invalid(InvalidKernel)` for a bad `ksize`, then `Invalid(SizeMismatch)`.
    pub fn box_blur_u8<B: Copy>(
        &self,
        src: Img<B>,
        dst: Img<B>,
        ksize: usize,
        border: Border<u8>,
    ) -> Result<Launch<B>, PlanError> {
        self.owns_all([&src, &dst])?;
        check_box(ksize)?;
        same_size(src.size(), dst.size())?;
        let ones = &ONES_I32[..ksize];
        let area = (ksize * ksize) as i32;
        Ok(self.sep_u8(src, dst, ones, ones, 0, Some(area), border))
    }

    /// `mv_sep_filter_f32_tiled` with scale `1/ksize²` (rounded to `f32` as the CPU rounds it),
    /// as `mvision_core::filter::box_blur_f32`.
    ///
    /// Errors: as [`Planner::box_blur_u8`].
    pub fn box_blur_f32<B: Copy>(
        &self,
        src: Img<B>,
        dst: Img<B>,
        ksize: usize,
        border: Border<f32>,
    ) -> Result<Launch<B>, PlanError> {
        self.owns_all([&src, &dst])?;
        check_box(ksize)?;
        same_size(src.size(), dst.size())?;
        let ones = &ONES_F32[..ksize];
        let inv = 1.0 / (ksize * ksize) as f32;
        Ok(self.sep_f32(src, dst, ones, ones, inv, border))
    }

    /// The separable filter of `mvision_core::filter::gaussian_kernel_q(ksize, sigma_px)`, as
    /// `mvision_core::filter::gaussian_blur_u8`.
    ///
    /// Errors: those of `gaussian_kernel_q`, then as [`Planner::sep_filter_u8`].
    pub fn gaussian_blur_u8<B: Copy>(
        &self,
        src: Img<B>,
        dst: Img<B>,
        ksize: usize,
        sigma_px: f32,
        border: Border<u8>,
    ) -> Result<Launch<B>, PlanError> {
        let kernel = gaussian_kernel_q(ksize, sigma_px)?;
        self.sep_filter_u8(src, dst, &kernel, border)
    }

    /// The separable filter of `mvision_core::filter::gaussian_kernel_f32(ksize, sigma_px)`,
    /// as `mvision_core::filter::gaussian_blur_f32`.
    ///
    /// Errors: those of `gaussian_kernel_f32`, then as [`Planner::sep_filter_f32`].
    pub fn gaussian_blur_f32<B: Copy>(
        &self,
        src: Img<B>,
        dst: Img<B>,
        ksize: usize,
        sigma_px: f32,
        border: Border<f32>,
    ) -> Result<Launch<B>, PlanError> {
        let kernel = gaussian_kernel_f32(ksize, sigma_px)?;
        self.sep_filter_f32(src, dst, &kernel, border)
    }

    /// `mv_sep_filter_u8_tiled`: `box_area` selects the box finish, else the rounding shift.
    #[allow(clippy::too_many_arguments)]
    fn sep_u8<B: Copy>(
        &self,
        src: Img<B>,
        dst: Img<B>,
        kx: &[i32],
        ky: &[i32],
        shift: u32,
        box_area: Option<i32>,
        border: Border<u8>,
    ) -> Launch<B> {
        let k = kx.len();
        // What follows `ky_len`: the shift, the finish (1: box mean) and the box's area.
        let finish = |shift: u32| {
            vec![
                Arg::I32(shift as i32),
                Arg::I32(i32::from(box_area.is_some())),
                Arg::I32(box_area.unwrap_or(1)),
            ]
        };
        let tuning = FilterTuning::get();
        // The matrix-unit kernel when asked for by name (`MVISION_FILTER_MMA=on`, for tests).
        let pixels = src.width * src.height;
        let exact = (ky.len() == k && tuning.uses_cols(k) && tuning.mma != MmaMode::On)
            .then(|| exact_in_f32(kx, ky, shift, box_area.is_none()))
            .flatten();
        if let Some((rx, ry, rshift)) = exact {
            // From the bytes with packed products where the device has them, else from floats.
            let packed = tuning.packs(&rx, self.limits().dp2a);
            if tuning.uses_cols_u8(k, pixels, packed) {
                let sep = Separable {
                    tiled: names::SEP_FILTER_U8_TILED,
                    stream: None,
                    packed: None,
                    cols: Some(if packed {
                        names::SEP_FILTER_U8_COLS_DP
                    } else {
                        names::SEP_FILTER_U8_COLS
                    }),
                    kx: (table_i32(&rx, LINE_SLOTS), k),
                    ky: (table_i32(&ry, LINE_SLOTS), k),
                    finish: finish(rshift),
                    border: border_u8(border),
                    px: PX_U8,
                };
                return self.separable(src, dst, sep);
            }
        }
        if ky.len() == k && self.uses_mma(k, pixels, true) {
            // Exact integers: Σ ky·(Σ kx·p) is the dense sum of the outer product.
            let coeffs: Vec<i64> = ky
                .iter()
                .flat_map(|&y| kx.iter().map(move |&x| i64::from(y) * i64::from(x)))
                .collect();
            let round = box_area.map_or((1i64 << shift) >> 1, |a| i64::from(a / 2));
            if let Some(taps) = MmaTaps::new(&coeffs, k, round) {
                let tile = self.default_tile();
                return self.mma(src, dst, taps, k, shift, box_area, border_u8(border), tile);
            }
        }
        let sep = Separable {
            tiled: names::SEP_FILTER_U8_TILED,
            stream: Some(names::SEP_FILTER_U8_STREAM),
            packed: Some((names::SEP_FILTER_U8_STREAM_DP, kx)),
            cols: None,
            kx: (table_i32(kx, LINE_SLOTS), kx.len()),
            ky: (table_i32(ky, LINE_SLOTS), ky.len()),
            finish: finish(shift),
            border: border_u8(border),
            px: PX_U8,
        };
        self.separable(src, dst, sep)
    }

    /// `mv_sep_filter_f32_tiled` with `dst = acc · scale`.
    fn sep_f32<B: Copy>(
        &self,
        src: Img<B>,
        dst: Img<B>,
        kx: &[f32],
        ky: &[f32],
        scale: f32,
        border: Border<f32>,
    ) -> Launch<B> {
        let sep = Separable {
            tiled: names::SEP_FILTER_F32_TILED,
            stream: names::sep_filter_f32_stream(kx.len()),
            packed: None,
            cols: Some(names::SEP_FILTER_F32_COLS),
            kx: (table_f32(kx, LINE_SLOTS), kx.len()),
            ky: (table_f32(ky, LINE_SLOTS), ky.len()),
            finish: vec![Arg::F32(scale)],
            border: border_f32(border),
            px: PX_F32,
        };
        self.separable(src, dst, sep)
    }

    fn separable<B: Copy>(&self, src: Img<B>, dst: Img<B>, sep: Separable<'_, B>) -> Launch<B> {
        let tuning = FilterTuning::get();
        let (w, h) = src.size();
        let stream = sep
            .stream
            .filter(|_| sep.kx.1 == sep.ky.1 && tuning.streams_separable(sep.kx.1, w, h));
        let mut args = Vec::with_capacity(15);
        args.extend(src.data());
        args.extend(dst.data());
        args.extend(src.dims());
        args.extend([sep.kx.0, Arg::I32(sep.kx.1 as i32)]);
        args.extend([sep.ky.0, Arg::I32(sep.ky.1 as i32)]);
        args.extend(sep.finish);
        args.extend(sep.border);
        let tile = self.default_tile();
        let cols = sep
            .cols
            .filter(|_| sep.kx.1 == sep.ky.1 && tuning.uses_cols(sep.kx.1));
        if let Some(name) = cols {
            // STREAM_PX outputs per work-item along x, in the tile's `cols_rows` rows.
            let range = (w.div_ceil(STREAM_PX), h.div_ceil(tile.cols_rows()));
            return self.launch_2d(KernelSet::Filter, tile, name, args, range);
        }
        // `px` outputs per work-item along x (streaming: STREAM_PX in `stream_rows` rows).
        let range = if stream.is_some() {
            (w.div_ceil(STREAM_PX), h.div_ceil(tuning.stream_rows))
        } else {
            (w.div_ceil(sep.px), h)
        };
        let name = match (stream, sep.packed) {
            (Some(_), Some((packed, kx))) if tuning.packs(kx, self.limits().dp2a) => packed,
            (Some(stream), _) => stream,
            (None, _) => sep.tiled,
        };
        self.launch_2d(KernelSet::Filter, tile, name, args, range)
    }

    /// Whether a `u8` filter of `k × k` taps (`separable` or dense) over `pixels` runs the
    /// matrix-unit kernel on this device under the process's tuning (its coefficients
    /// permitting).
    fn uses_mma(&self, k: usize, pixels: usize, separable: bool) -> bool {
        FilterTuning::get().uses_mma(k, self.limits().mma, pixels, separable)
    }

    /// `mv_sobel_u8`: 3 × 3 derivatives into `i16` images, as `mvision_core::filter::sobel_u8`.
    ///
    /// Errors: `Invalid(InvalidArgument)` for an image of another context;
    /// `Invalid(SizeMismatch)` unless `dx` and `dy` have `src`'s size (`dy` is checked first,
    /// as the core does).
    pub fn sobel_u8<B: Copy>(
        &self,
        src: Img<B>,
        dx: Img<B>,
        dy: Img<B>,
        border: Border<u8>,
    ) -> Result<Launch<B>, PlanError> {
        self.sobel(src, dx, dy, border_u8(border), names::SOBEL_U8)
    }

    /// `mv_sobel_f32`, as `mvision_core::filter::sobel_f32`.
    ///
    /// Errors: as [`Planner::sobel_u8`].
    pub fn sobel_f32<B: Copy>(
        &self,
        src: Img<B>,
        dx: Img<B>,
        dy: Img<B>,
        border: Border<f32>,
    ) -> Result<Launch<B>, PlanError> {
        self.sobel(src, dx, dy, border_f32(border), names::SOBEL_F32)
    }

    fn sobel<B: Copy>(
        &self,
        src: Img<B>,
        dx: Img<B>,
        dy: Img<B>,
        border: [Arg<B>; 2],
        name: &'static str,
    ) -> Result<Launch<B>, PlanError> {
        self.owns_all([&src, &dx, &dy])?;
        same_size(src.size(), dy.size())?;
        same_size(src.size(), dx.size())?;
        let mut args = Vec::with_capacity(10);
        args.extend(src.data());
        args.extend(dx.data());
        args.extend(dy.data());
        args.extend(src.dims());
        args.extend(border);
        let tile = self.default_tile();
        Ok(self.launch_2d(KernelSet::Filter, tile, name, args, src.size()))
    }
}
