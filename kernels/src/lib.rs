//! # mvision-kernels
//!
//! The GPU kernel sources of libmvision, written once and compiled by both GPU backends, and the
//! host side that launches them, written once for both drivers.
//!
//! Layers, bottom up (the contract is `kernels/SPEC.md`):
//! * `kernels/opencl/prelude.cl` and `kernels/cuda/prelude.cuh` map a small portable dialect
//!   (`MV_KERNEL`, `MV_GLOBAL`, `MV_LOCAL_ARRAY`, `MV_BARRIER()`, `MV_GID_X`, `mv_i32`, …) onto
//!   OpenCL C 1.2 and CUDA C++ (NVRTC).
//! * [`constants`] emits the values shared with the host as `#define`s, taken from the Rust
//!   constants of `mvision-core` (kernel size limit, resize fraction bits) and of this crate
//!   (border codes, scan width), so no number is written twice.
//! * `kernels/common/*.h` hold the kernel bodies, one file per concept: borders, the fixed-point
//!   finish, filters, integral images, resampling.
//!
//! [`source`] assembles `prelude + constants + bodies` for one [`KernelSet`] and one
//! [`Backend`]; [`build_options`] gives the `-D` flags of a work-group [`Tile`]. Everything is
//! embedded with `include_str!`: nothing is looked up on disk at run time. Drivers compile each
//! `(KernelSet, Tile)` once per context and cache it.
//!
//! The host side of the kernels is written here once too, for both drivers:
//! * [`plan`]: for each operation, the checks (identical to the core's), the kernel's argument
//!   list and its launch geometry, as a [`plan::Launch`] that a driver only binds and enqueues.
//! * [`device_ops!`]: the image operations of a driver's `Context` (`filter2d_u8`, …,
//!   `resize_bilinear_f32`), generated from the plans, so the two driver APIs cannot drift;
//!   [`device_image_accessors!`] and [`driver_error_conversions!`] do the same for the parts of
//!   the driver's image and error types that do not depend on the API.
//! * `testing` (feature `testing`, for the test suites of the drivers and the runtime): seeded
//!   random images with garbage in their row gaps, and the comparison rules of the contract.
#![deny(missing_docs)]

mod device_ops;
pub mod plan;
#[cfg(feature = "testing")]
pub mod testing;

pub use plan::Variant;

use mvision_core::filter::MAX_KERNEL_SIZE;
use mvision_core::resize::RESIZE_FRAC_BITS;
use mvision_core::Border;

/// What [`device_ops!`] expands to refers to through here, so a driver needs no `use` for it.
#[doc(hidden)]
pub mod __private {
    pub use mvision_core;
}

/// The OpenCL prelude (`kernels/opencl/prelude.cl`).
pub const PRELUDE_OPENCL: &str = include_str!("../opencl/prelude.cl");
/// The CUDA prelude (`kernels/cuda/prelude.cuh`).
pub const PRELUDE_CUDA: &str = include_str!("../cuda/prelude.cuh");
/// Border mapping and pixel fetch (`kernels/common/border.h`).
pub const BORDER_H: &str = include_str!("../common/border.h");
/// Fixed-point rounding and saturation (`kernels/common/fixed_point.h`).
pub const FIXED_POINT_H: &str = include_str!("../common/fixed_point.h");
/// Dense, separable and Sobel filters (`kernels/common/filter.h`).
pub const FILTER_H: &str = include_str!("../common/filter.h");
/// Integral images (`kernels/common/integral.h`).
pub const INTEGRAL_H: &str = include_str!("../common/integral.h");
/// Pyramid and bilinear resize (`kernels/common/resample.h`).
pub const RESAMPLE_H: &str = include_str!("../common/resample.h");

/// Kernel code of [`Border::Replicate`] (`MV_BORDER_REPLICATE`).
pub const BORDER_REPLICATE: i32 = 0;
/// Kernel code of [`Border::Reflect101`] (`MV_BORDER_REFLECT_101`).
pub const BORDER_REFLECT_101: i32 = 1;
/// Kernel code of [`Border::Constant`] (`MV_BORDER_CONSTANT`).
pub const BORDER_CONSTANT: i32 = 2;

/// Output pixels each work-item of the tiled dense and separable `u8` filters computes, side by
/// side along x (`MV_PX_U8`, a multiple of 8): a work-group covers `MV_TILE_W · PX_U8` columns
/// (the dense filters do so in [`DENSE_ROWS`] rows per work-item).
pub const PX_U8: usize = 8;

/// Output pixels each work-item of the tiled dense and separable `f32` filters computes
/// (`MV_PX_F32`, a multiple of 4).
pub const PX_F32: usize = 4;

/// Output rows each work-item of the tiled dense filters computes (two: the kernel rows they
/// share are read once); a work-group covers `DENSE_ROWS · MV_TILE_H` rows.
pub const DENSE_ROWS: usize = 2;

/// Largest work-group the integral row pass may run with (`MV_SCAN_MAX`): it sizes that
/// kernel's local scan arrays (`12 · MV_SCAN_MAX` bytes).
pub const INTEGRAL_SCAN_MAX: usize = 256;

/// Source columns of one tile of the tiled integral scan (`MV_ITILE_W`): 32 lanes of 8
/// adjacent pixels (`kernels/common/integral.h`).
pub const INTEGRAL_TILE_W: usize = 256;

/// Source rows of one tile of the tiled integral scan (`MV_ITILE_H`, a multiple of
/// `INTEGRAL_GROUP_MAX / 32`): taller tiles mean fewer column carries to scan, shorter ones
/// more tiles to spread over the device.
pub const INTEGRAL_TILE_H: usize = 64;

/// Tallest tile [`IntegralTuning`] accepts (`MVISION_INTEGRAL_TILE=256x128`): it bounds the
/// integral kernels' local arrays of left carries in [`KernelSet::local_mem_bytes`].
pub const INTEGRAL_TILE_H_MAX: usize = 128;

/// Run-time tuning of the tiled integral scan, read once per process from the environment
/// ([`IntegralTuning::get`]); every setting gives bit-identical tables, only the speed differs.
/// * `MVISION_INTEGRAL_TILE=256xH`: tile height `H` ∈ {8, 16, 32, 64, 128} (the width stays
///   [`INTEGRAL_TILE_W`]); default `256x64`.
/// * `MVISION_INTEGRAL_VARIANT=local|shfl`: how the 32 lanes of a tile row combine their sums
///   (pass 1's row sums, pass 3's row prefix): `local` scans in local memory between barriers;
///   `shfl` (the default) with warp shuffles, no barrier, on CUDA and NVIDIA's OpenCL (PTX
///   `shfl.sync`; elsewhere it is `local`).
/// * `MVISION_INTEGRAL_GROUP=32|64|128|256`: the largest work-group of the tiled kernels
///   (default 256, [`INTEGRAL_GROUP_MAX`]).
/// * `MVISION_INTEGRAL_CARRIES=tiled|par`: pass 2 (`mv_integral_carries`,
///   `MV_ICARRY_TILED`, `MV_ICARRY_PAR`), see [`IntegralCarries`]; default `tiled`.
/// * `MVISION_INTEGRAL_SCAN=auto|lookback|tiled` ([`IntegralScan`]): one look-back launch per
///   table or the three-pass tiled scan; default `auto`.
/// * `MVISION_INTEGRAL_LOOKBACK=auto|direct|walk` ([`IntegralLookBack`]): how the look-back scan
///   gathers its carries; default `auto`.
///
/// Unparsable values are ignored (the default holds).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IntegralTuning {
    /// Source rows of one tile (`MV_ITILE_H`).
    pub tile_h: usize,
    /// Lane sums by warp shuffles where the backend has them (`MV_ISHFL_WANT`).
    pub shuffle: bool,
    /// Largest work-group of the tiled kernels, at most [`INTEGRAL_GROUP_MAX`].
    pub group_max: usize,
    /// How pass 2 computes the carries from the left.
    pub carries: IntegralCarries,
    /// Which scan runs.
    pub scan: IntegralScan,
    /// How the look-back scan gathers its carries.
    pub lookback: IntegralLookBack,
}

/// How the look-back integral scan gathers a tile's carries from the tiles before it
/// (`MVISION_INTEGRAL_LOOKBACK`); the tables are the same. Each way is its own kernel
/// ([`names::INTEGRAL_LOOKBACK_U8`], [`names::INTEGRAL_LOOKBACK_WALK_U8`] and their squares),
/// chosen per launch from the image's tiles ([`IntegralLookBack::direct_max_side`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntegralLookBack {
    /// `auto` (the default): [`IntegralLookBack::Direct`] on images of at most
    /// [`INTEGRAL_LOOKBACK_DIRECT_MAX_SIDE`] tiles along each side, [`IntegralLookBack::Walk`]
    /// on wider or taller ones.
    Auto,
    /// `direct`: every tile publishes its row sums, column sums and total once, waits for all
    /// the tiles above-left of it, and adds their sums with independent loads.
    Direct,
    /// `walk`: decoupled look-back, walking left along its row of tiles and up its column, each
    /// walk stopping at the nearest tile whose inclusive sums are out (four publications a tile).
    Walk,
}

/// The most tiles along each side of an image (up to 16384 × 8192 pixels, more than a `u32`
/// table allows, but in thin shapes) on which [`IntegralLookBack::Auto`] adds the carries
/// directly: the direct loads per work-item grow with the tiles left of and above its tile (at
/// 16384 × 1024, 128 × 16 tiles, up to 16 flags and 16 totals, 127 row and 15 column sums a
/// work-item); on thinner images (a `u32` table may be 131 587 tiles wide) the walks, which
/// stop at the nearest published inclusive sums, take over. On the H100 the direct sums ran
/// 0.98–1.39× the walks on CUDA and 0.97–1.29× on NVIDIA's OpenCL, from 4096 × 4096 and
/// 16384 × 1024 down to 640 × 480, gaining the most on the small images (BENCHMARKS.md,
/// tenth session).
pub const INTEGRAL_LOOKBACK_DIRECT_MAX_SIDE: usize = 128;

impl IntegralLookBack {
    /// The most tiles along each side of an image on which the carries are added directly
    /// (the direct kernels run); on larger images the walks run.
    pub fn direct_max_side(self) -> usize {
        match self {
            IntegralLookBack::Auto => INTEGRAL_LOOKBACK_DIRECT_MAX_SIDE,
            IntegralLookBack::Direct => i32::MAX as usize,
            IntegralLookBack::Walk => 0,
        }
    }
}

/// Which scan computes an integral image on a GPU (`MVISION_INTEGRAL_SCAN`); both give the
/// same tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntegralScan {
    /// `auto` (the default): [`IntegralScan::LookBack`] on devices where work-groups may wait
    /// on earlier ones ([`plan::Limits::lookback`]) unless the table of squares is wanted on an
    /// image of at least [`INTEGRAL_LOOKBACK_SQ_MAX_PIXELS`]; else [`IntegralScan::Tiled`].
    Auto,
    /// `lookback`: one launch per table (`mv_integral_lookback_u8`, `…_sq_u8`) of one
    /// [`INTEGRAL_LOOKBACK_GROUP`]-work-item group per tile of [`INTEGRAL_LOOKBACK_TILE_W`] ×
    /// [`INTEGRAL_LOOKBACK_TILE_H`] pixels, each tile taking its carries from the tiles before
    /// it as they finish (`kernels/SPEC.md`). Forced on a device without
    /// [`plan::Limits::lookback`], it relies on that device making a work-group's fenced global
    /// stores visible to the others (true of CPU devices such as PoCL).
    LookBack,
    /// `tiled`: tile sums, carries, tiles (three launches, a fourth for the squares).
    Tiled,
}

/// Work-items of a look-back integral work-group (`MV_LB_N`): four rows of 32 lanes. A device
/// that allows fewer runs the tiled scan.
pub const INTEGRAL_LOOKBACK_GROUP: usize = 128;

/// Source columns of one tile of the look-back integral scan (`MV_LB_W`): 32 lanes of 4
/// adjacent pixels.
pub const INTEGRAL_LOOKBACK_TILE_W: usize = 128;

/// Source rows of one tile of the look-back integral scan (`MV_LB_H`, a multiple of 32), kept in
/// registers by its work-group. Tall tiles keep the look-back up a column of tiles short: its
/// column sums cost `w · h² / (2 · MV_LB_H²)` loads from the cache over an image.
pub const INTEGRAL_LOOKBACK_TILE_H: usize = 64;

/// With the table of squares, [`IntegralScan::Auto`] runs the look-back scan only on images of
/// fewer pixels than this (2²², between 1920 × 1080 and 3840 × 2160), the tiled scan from it
/// on. Measured on the H100 with the direct carries ([`IntegralLookBack::Direct`]), tiled /
/// look-back with squares: 3840 × 2160 CUDA 1.16×, NVIDIA OpenCL 1.13×; 1920 × 1080 0.85× /
/// 0.87× (BENCHMARKS.md, tenth session; with the walks the cut was at 2²⁰). The table of
/// pixels alone takes the look-back scan at every size.
pub const INTEGRAL_LOOKBACK_SQ_MAX_PIXELS: usize = 1 << 22;

/// Pass 2 of the tiled integral scan (`MVISION_INTEGRAL_CARRIES`); the column groups are the
/// same in `Tiled` and `Par`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntegralCarries {
    /// `tiled` (`MV_ICARRY_TILED`, the default): one row group per tile (tx ≥ 1, ty), its left
    /// carries from the corner (the totals of the tiles above-left, written by pass 1) plus a
    /// scan of its own rows' left row sums.
    Tiled,
    /// `par` (`MV_ICARRY_PAR`): one row group per tile column tx ≥ 1 scanning all rows, every
    /// column / row sum loaded once into registers, a batch at a time.
    Par,
}

impl IntegralTuning {
    /// `256x64`, shuffles, groups of up to 256, the tiled carries pass.
    pub const DEFAULT: IntegralTuning = IntegralTuning {
        tile_h: INTEGRAL_TILE_H,
        shuffle: true,
        group_max: INTEGRAL_GROUP_MAX,
        carries: IntegralCarries::Tiled,
        scan: IntegralScan::Auto,
        lookback: IntegralLookBack::Auto,
    };

    /// The tuning of the first three variables' values (`None` where unset), with the default
    /// carries pass.
    pub fn parse(tile: Option<&str>, variant: Option<&str>, group: Option<&str>) -> Self {
        Self::parse_all(tile, variant, group, None)
    }

    /// The tuning of the four variables' values (`None` where unset).
    pub fn parse_all(
        tile: Option<&str>,
        variant: Option<&str>,
        group: Option<&str>,
        carries: Option<&str>,
    ) -> Self {
        let mut t = Self::DEFAULT;
        if let Some(h) = tile.and_then(|v| {
            let v = v.trim();
            let h = v.strip_prefix(&format!("{INTEGRAL_TILE_W}x")).unwrap_or(v);
            h.parse::<usize>().ok()
        }) {
            if h.is_power_of_two() && (INTEGRAL_GROUP_MAX / 32..=INTEGRAL_TILE_H_MAX).contains(&h) {
                t.tile_h = h;
            }
        }
        match variant.map(str::trim) {
            Some("local") => t.shuffle = false,
            Some("shfl") => t.shuffle = true,
            _ => {}
        }
        if let Some(g) = group.and_then(|v| v.trim().parse::<usize>().ok()) {
            if g.is_power_of_two() && (INTEGRAL_GROUP_MIN..=INTEGRAL_GROUP_MAX).contains(&g) {
                t.group_max = g;
            }
        }
        match carries.map(str::trim) {
            Some("tiled") => t.carries = IntegralCarries::Tiled,
            Some("par") => t.carries = IntegralCarries::Par,
            _ => {}
        }
        t
    }

    /// This tuning with the scan of `MVISION_INTEGRAL_SCAN`'s value (`None`: unchanged).
    pub fn with_scan(mut self, scan: Option<&str>) -> Self {
        match scan.map(str::trim) {
            Some("auto") => self.scan = IntegralScan::Auto,
            Some("lookback") => self.scan = IntegralScan::LookBack,
            Some("tiled") => self.scan = IntegralScan::Tiled,
            _ => {}
        }
        self
    }

    /// This tuning with the carries of `MVISION_INTEGRAL_LOOKBACK`'s value (`None`: unchanged).
    pub fn with_lookback(mut self, lookback: Option<&str>) -> Self {
        match lookback.map(str::trim) {
            Some("auto") => self.lookback = IntegralLookBack::Auto,
            Some("direct") => self.lookback = IntegralLookBack::Direct,
            Some("walk") => self.lookback = IntegralLookBack::Walk,
            _ => {}
        }
        self
    }

    /// The process's tuning: `MVISION_INTEGRAL_TILE`, `MVISION_INTEGRAL_VARIANT`,
    /// `MVISION_INTEGRAL_GROUP`, `MVISION_INTEGRAL_CARRIES`, `MVISION_INTEGRAL_SCAN` and
    /// `MVISION_INTEGRAL_LOOKBACK`, read on the first call.
    pub fn get() -> Self {
        static TUNING: std::sync::OnceLock<IntegralTuning> = std::sync::OnceLock::new();
        *TUNING.get_or_init(|| {
            let var = |k| std::env::var(k).ok();
            Self::parse_all(
                var("MVISION_INTEGRAL_TILE").as_deref(),
                var("MVISION_INTEGRAL_VARIANT").as_deref(),
                var("MVISION_INTEGRAL_GROUP").as_deref(),
                var("MVISION_INTEGRAL_CARRIES").as_deref(),
            )
            .with_scan(var("MVISION_INTEGRAL_SCAN").as_deref())
            .with_lookback(var("MVISION_INTEGRAL_LOOKBACK").as_deref())
        })
    }

    /// `"256x64/shfl/g256"`, as benchmarks print it (`"/par"` appended with that carries
    /// pass, `"/lookback"` or `"/tiled"` with a scan other than `auto`, `"/direct"` or
    /// `"/walk"` with look-back carries other than `auto`).
    pub fn label(&self) -> String {
        let variant = if self.shuffle { "shfl" } else { "local" };
        let carries = match self.carries {
            IntegralCarries::Tiled => "",
            IntegralCarries::Par => "/par",
        };
        let scan = match self.scan {
            IntegralScan::Auto => "",
            IntegralScan::LookBack => "/lookback",
            IntegralScan::Tiled => "/tiled",
        };
        let lookback = match self.lookback {
            IntegralLookBack::Auto => "",
            IntegralLookBack::Direct => "/direct",
            IntegralLookBack::Walk => "/walk",
        };
        format!(
            "{INTEGRAL_TILE_W}x{}/{variant}/g{}{carries}{scan}{lookback}",
            self.tile_h, self.group_max
        )
    }
}

/// Output rows each work-item of the streaming filters computes by default
/// (`MV_STREAM_ROWS`, [`FilterTuning`]).
pub const STREAM_ROWS: usize = 4;

/// Output columns each work-item of the streaming filters computes (`MV_SPX` in
/// `kernels/common/filter.h`).
pub const STREAM_PX: usize = 4;

/// Most bytes of local memory `mv_sep_filter_f32_cols`' column tile takes
/// (`MV_COLS_MAX_BYTES`, [`Tile::cols_rows`]): with the default 16 × 16 tile it holds 4 rows
/// per work-item (20 160 bytes).
pub const COLS_MAX_BYTES: usize = 24 * 1024;

/// Fewest work-items for which [`StreamMode::Auto`] runs a separable filter's streaming kernel:
/// about the threads an H100/H200 holds at once (132 SMs × 2048). Below it the streaming
/// kernel leaves the device partly idle and the halo tiles were faster on the H200 (5 × 5 and
/// 7 × 7 taps at 640 × 480 and 1920 × 1080; BENCHMARKS.md); above it (3840 × 2160) the
/// streaming kernel was 1.1–1.5× faster.
pub const STREAM_MIN_ITEMS: usize = 1 << 18;

/// When the streaming filter kernels run (`MVISION_FILTER_STREAM`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StreamMode {
    /// `off`: the local-memory halo tiles of seed 002 everywhere.
    Off,
    /// `auto` (the default): the dense 3 × 3 filters (`u8`, `f32`) always; separable filters
    /// of 3, 5 or 7 square taps when the launch has at least [`STREAM_MIN_ITEMS`] work-items.
    Auto,
    /// `on`: wherever a streaming kernel exists (dense 3 × 3 `u8` and `f32`; separable 3, 5,
    /// 7 square).
    On,
}

/// Run-time choice of the filter kernels, read once per process from the environment
/// ([`FilterTuning::get`]); every setting but `MVISION_FILTER_FMA` gives bit-identical images,
/// only the speed differs (`f32` ones: when not fused).
/// * `MVISION_FILTER_STREAM=off|auto|on` ([`StreamMode`]): whether the tiled variant of the
///   separable filters (box and Gaussian blurs included) and of the 3 × 3 dense filters runs
///   the streaming kernels (register windows read straight from global memory, no local memory)
///   or the halo tiles. Default `auto`.
/// * `MVISION_FILTER_STREAM_ROWS=N`, `N` ∈ {2, 4, 8, 16, 32}: output rows per work-item of the
///   streaming kernels (`MV_STREAM_ROWS`); default [`STREAM_ROWS`] (the fastest of 2 … 32 on
///   the H200, CUDA and OpenCL).
///
/// * `MVISION_FILTER_DOT=off|auto|on` ([`DotMode`]): whether the streaming `u8` kernels take
///   their inside rows' sums, and the `u8` column tile its rows' sums, from packed 16 × 8-bit
///   products (`dp2a`, the `_dp` kernels) when the coefficients fit 16 bits. Default `auto`:
///   where the device has the instruction ([`plan::Limits::dp2a`]).
/// * `MVISION_FILTER_FMA=on|off` ([`FmaMode`]): whether the `f32` filters fuse each
///   multiply-add (one rounding instead of two). Default `on`. Unlike the settings above this
///   one changes `f32` images, within the contract's tolerance; `off` makes them bit-identical
///   to the CPU's. `u8` images are the same either way.
///
/// * `MVISION_FILTER_TAPS=auto|table` ([`TapsMode`]): whether OpenCL filter kernels take their
///   coefficients by value where the device allows ([`FilterTuning::taps_by_value`]) or always
///   as an uploaded table. Default `auto`. CUDA always takes them by value.
/// * `MVISION_FILTER_MMA=off|auto|on` ([`MmaMode`]): whether the `u8` filters of 3, 5 or 7
///   taps a side run on the matrix units (`mv_filter2d_u8_mma`). Default `auto`.
///
/// Unparsable values are ignored (the default holds).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FilterTuning {
    /// When the streaming kernels run.
    pub stream: StreamMode,
    /// Output rows per work-item of the streaming kernels (`MV_STREAM_ROWS`).
    pub stream_rows: usize,
    /// When the streaming `u8` kernels use packed products.
    pub dot: DotMode,
    /// Whether the `f32` filters fuse their multiply-adds.
    pub fma: FmaMode,
    /// How OpenCL filter kernels take their coefficients.
    pub taps: TapsMode,
    /// When the dense and separable `u8` filters run on the matrix units.
    pub mma: MmaMode,
    /// When the square separable filters and the dense `f32` ones run from a column tile
    /// ([`ColsMode`]).
    pub cols: ColsMode,
}

/// When the square separable filters of 3, 5 or 7 taps (box and Gaussian blurs included) and
/// the dense `f32` ones run from a column tile in local memory (`MVISION_FILTER_COLS`):
/// `mv_sep_filter_f32_cols`, the streaming kernel's work-items fed from the tile,
/// `mv_sep_filter_u8_cols`, the same in `f32` arithmetic for `u8` taps whose sums it holds
/// exactly, or `mv_sep_filter_u8_cols_dp` from a tile of bytes where the device has dp2a
/// ([`FilterTuning::uses_cols_u8`]), and `mv_filter2d_f32_cols` ([`FilterTuning::uses_cols`],
/// default tile); the images are the same either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ColsMode {
    /// `off`: never.
    Off,
    /// `auto` (the default): 3, 5 and 7 taps at every size while `MVISION_FILTER_STREAM` is
    /// `auto` ([`FilterTuning::uses_cols`]): on the H200, with border tiles loading vectors,
    /// 1.2–1.5× the streaming kernel at 3840 × 2160 and the halo tile at 1920 × 1080
    /// (BENCHMARKS.md). With the streaming setting `on` or `off` those kernels run.
    Auto,
    /// `on`: 3, 5 and 7 taps at every size, whatever the streaming setting.
    On,
}

/// When the `u8` filters of 3, 5 or 7 taps a side (dense, and square separable ones, box and
/// Gaussian blurs included) run the matrix-unit kernel `mv_filter2d_u8_mma`
/// (`MVISION_FILTER_MMA`); only ever for coefficients it takes exactly
/// ([`plan::MmaTaps::new`]), and the images are the same either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmaMode {
    /// `off`: never.
    Off,
    /// `auto` (the default): on devices with 8-bit integer matrix products
    /// ([`plan::Limits::mma`]: NVIDIA compute capability 8.0 or later, CUDA or OpenCL), for
    /// the kernel and image sizes it ran faster at on the H200 ([`FilterTuning::uses_mma`]).
    Auto,
    /// `on`: for every size it takes; a device without the products computes the same sums
    /// from local memory (`mv_mma_soft`), which lets the tests cover the kernel on PoCL.
    On,
}

/// How the OpenCL filter kernels take their coefficients (`MVISION_FILTER_TAPS`); the images
/// are the same either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TapsMode {
    /// `auto` (the default): by value where the device accepts [`TAPS_PARAM_BYTES`] of kernel
    /// parameters, else as a table.
    Auto,
    /// `table`: always as a read-only table the driver uploads (and caches); for tests of that
    /// path on devices that would take them by value.
    Table,
}

/// Whether the `f32` filter kernels (dense, separable, box, Gaussian, Sobel) compute `a·b + c`
/// as one fused multiply-add (`MVISION_FILTER_FMA`). The CPU reference rounds the product and
/// the sum separately, so fused results differ from it in the last bits, within the contract's
/// `f32` tolerance (`|got − want| ≤ 1e-5·|want| + 1e-5·scale`, `kernels/SPEC.md`); they are
/// faster on the GPU (7 × 7 `f32` 1.26×, Gaussian 7 `f32` 1.14× on the H200; BENCHMARKS.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FmaMode {
    /// `off`: two roundings, as the CPU; `f32` images bit-identical to the CPU's.
    Off,
    /// `on` (the default): fused; CUDA builds the filter program with `--fmad=true`, OpenCL
    /// with `-DMV_FP_CONTRACT=1` (`#pragma OPENCL FP_CONTRACT ON`; the compiler fuses where the
    /// device has a fused multiply-add).
    On,
}

/// When the streaming `u8` filters and the `u8` column tile use packed 16 × 8-bit products
/// (`MVISION_FILTER_DOT`); only
/// ever for coefficients that fit 16 bits (the dense ones, a separable filter's horizontal
/// ones), and the images are the same either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DotMode {
    /// `off`: never.
    Off,
    /// `auto` (the default): where the device has the instruction (CUDA devices of compute
    /// capability 6.1 or later, NVIDIA's OpenCL on them).
    Auto,
    /// `on`: everywhere; a device without the instruction computes the same sums with plain
    /// multiply-adds (`mv_dp2a_soft`), which lets the tests cover the packed kernels on PoCL.
    On,
}

impl FilterTuning {
    /// [`StreamMode::Auto`], [`STREAM_ROWS`] rows per work-item.
    pub const DEFAULT: FilterTuning = FilterTuning {
        stream: StreamMode::Auto,
        stream_rows: STREAM_ROWS,
        dot: DotMode::Auto,
        fma: FmaMode::On,
        taps: TapsMode::Auto,
        mma: MmaMode::Auto,
        cols: ColsMode::Auto,
    };

    /// The tuning of `MVISION_FILTER_STREAM`'s and `MVISION_FILTER_STREAM_ROWS`'s values
    /// (`None` where unset), with the default [`DotMode`].
    pub fn parse(stream: Option<&str>, rows: Option<&str>) -> Self {
        Self::parse_all(stream, rows, None)
    }

    /// The tuning of the three variables' values (`None` where unset).
    pub fn parse_all(stream: Option<&str>, rows: Option<&str>, dot: Option<&str>) -> Self {
        let mut t = Self::DEFAULT;
        match dot.map(str::trim) {
            Some("off") => t.dot = DotMode::Off,
            Some("auto") => t.dot = DotMode::Auto,
            Some("on") => t.dot = DotMode::On,
            _ => {}
        }
        match stream.map(str::trim) {
            Some("off") => t.stream = StreamMode::Off,
            Some("auto") => t.stream = StreamMode::Auto,
            Some("on") => t.stream = StreamMode::On,
            _ => {}
        }
        if let Some(n) = rows.and_then(|v| v.trim().parse::<usize>().ok()) {
            if matches!(n, 2 | 4 | 8 | 16 | 32) {
                t.stream_rows = n;
            }
        }
        t
    }

    /// This tuning with the fused multiply-adds of `MVISION_FILTER_FMA`'s value (`None` or
    /// unparsable: unchanged).
    pub fn with_fma(mut self, fma: Option<&str>) -> Self {
        match fma.map(str::trim) {
            Some("off") => self.fma = FmaMode::Off,
            Some("on") => self.fma = FmaMode::On,
            _ => {}
        }
        self
    }

    /// This tuning with the coefficient passing of `MVISION_FILTER_TAPS`'s value (`None` or
    /// unparsable: unchanged).
    pub fn with_taps(mut self, taps: Option<&str>) -> Self {
        match taps.map(str::trim) {
            Some("auto") => self.taps = TapsMode::Auto,
            Some("table") => self.taps = TapsMode::Table,
            _ => {}
        }
        self
    }

    /// This tuning with the matrix-unit filter mode of `MVISION_FILTER_MMA`'s value (`None` or
    /// unparsable: unchanged).
    pub fn with_mma(mut self, mma: Option<&str>) -> Self {
        match mma.map(str::trim) {
            Some("off") => self.mma = MmaMode::Off,
            Some("auto") => self.mma = MmaMode::Auto,
            Some("on") => self.mma = MmaMode::On,
            _ => {}
        }
        self
    }

    /// This tuning with the column-tile mode of `MVISION_FILTER_COLS`'s value (`None` or
    /// unparsable: unchanged).
    pub fn with_cols(mut self, cols: Option<&str>) -> Self {
        match cols.map(str::trim) {
            Some("off") => self.cols = ColsMode::Off,
            Some("auto") => self.cols = ColsMode::Auto,
            Some("on") => self.cols = ColsMode::On,
            _ => {}
        }
        self
    }

    /// The process's tuning, read on the first call.
    pub fn get() -> Self {
        static TUNING: std::sync::OnceLock<FilterTuning> = std::sync::OnceLock::new();
        *TUNING.get_or_init(|| {
            let var = |k| std::env::var(k).ok();
            Self::parse_all(
                var("MVISION_FILTER_STREAM").as_deref(),
                var("MVISION_FILTER_STREAM_ROWS").as_deref(),
                var("MVISION_FILTER_DOT").as_deref(),
            )
            .with_fma(var("MVISION_FILTER_FMA").as_deref())
            .with_taps(var("MVISION_FILTER_TAPS").as_deref())
            .with_mma(var("MVISION_FILTER_MMA").as_deref())
            .with_cols(var("MVISION_FILTER_COLS").as_deref())
        })
    }

    /// `"auto/4"`, `"on/4"` or `"off"`, as benchmarks print it, with `"/dot-off"` or
    /// `"/dot-on"` appended unless the packed products are `auto`, `"/fma-off"` without
    /// fused multiply-adds, `"/taps-table"` with OpenCL coefficient tables forced, and
    /// `"/mma-off"` or `"/mma-on"` unless the matrix-unit filter is `auto`, and `"/cols-off"`
    /// or `"/cols-on"` unless the column tile is `auto`.
    pub fn label(&self) -> String {
        let mma = match self.mma {
            MmaMode::Off => "/mma-off",
            MmaMode::Auto => "",
            MmaMode::On => "/mma-on",
        };
        let cols = match self.cols {
            ColsMode::Off => "/cols-off",
            ColsMode::Auto => "",
            ColsMode::On => "/cols-on",
        };
        format!("{}{mma}{cols}", self.stream_label())
    }

    /// [`FilterTuning::label`] without the matrix-unit part.
    fn stream_label(&self) -> String {
        let dot = match self.dot {
            DotMode::Off => "/dot-off",
            DotMode::Auto => "",
            DotMode::On => "/dot-on",
        };
        let fma = match (self.fma, self.taps) {
            (FmaMode::Off, TapsMode::Auto) => "/fma-off",
            (FmaMode::On, TapsMode::Auto) => "",
            (FmaMode::Off, TapsMode::Table) => "/fma-off/taps-table",
            (FmaMode::On, TapsMode::Table) => "/taps-table",
        };
        match self.stream {
            StreamMode::Off => format!("off{fma}"),
            StreamMode::Auto => format!("auto/{}{dot}{fma}", self.stream_rows),
            StreamMode::On => format!("on/{}{dot}{fma}", self.stream_rows),
        }
    }

    /// Whether the filter kernels take their coefficients by value (a struct of [`TAPS_SLOTS`]
    /// or [`LINE_SLOTS`] zero-padded slots; the program is built with `MV_TAPS_BY_VALUE` 1)
    /// rather than as a pointer to a table the driver uploads, on a device of `backend` that
    /// accepts `max_parameter_bytes` of kernel parameters. CUDA: always (every device takes
    /// 4 KiB); OpenCL: from [`TAPS_PARAM_BYTES`] on, unless `MVISION_FILTER_TAPS=table`
    /// ([`TapsMode`]). NVIDIA GPUs keep kernel parameters in their constant bank, which the
    /// multiply-adds read directly, where each coefficient read through a pointer is a load: on
    /// the H200 at 3840 × 2160, dense 7 × 7 `f32` 1.16× (CUDA) and 1.10× (OpenCL), the 3 × 3
    /// `f32` halo tile 1.12× (CUDA); neutral on PoCL.
    pub fn taps_by_value(&self, backend: Backend, max_parameter_bytes: usize) -> bool {
        match backend {
            Backend::Cuda => true,
            Backend::OpenCl => {
                self.taps == TapsMode::Auto && max_parameter_bytes >= TAPS_PARAM_BYTES
            }
        }
    }

    /// Whether a streaming `u8` kernel with these coefficients (the dense ones, or a separable
    /// filter's horizontal ones) takes packed products on a device that has them (`hw`) or not.
    pub fn packs(&self, coeffs: &[i32], hw: bool) -> bool {
        let fit = coeffs.iter().all(|&c| i16::try_from(c).is_ok());
        fit && match self.dot {
            DotMode::Off => false,
            DotMode::Auto => hw,
            DotMode::On => true,
        }
    }

    /// Whether a separable filter of `k × k` taps over a `width × height` image runs the
    /// streaming kernel.
    pub fn streams_separable(&self, k: usize, width: usize, height: usize) -> bool {
        let items = width.div_ceil(STREAM_PX) * height.div_ceil(self.stream_rows);
        matches!(k, 3 | 5 | 7)
            && match self.stream {
                StreamMode::Off => false,
                StreamMode::Auto => items >= STREAM_MIN_ITEMS,
                StreamMode::On => true,
            }
    }

    /// Whether a `u8` filter of `k × k` taps (dense, or square `separable`) over `pixels`
    /// pixels runs the matrix-unit kernel on a device that has the products (`hw`) or not, its
    /// coefficients permitting ([`plan::MmaTaps::new`]). `auto`: where `hw`, from 5 × 5 on,
    /// dense filters from [`MMA_DENSE_MIN_PIXELS`] and separable ones from
    /// [`MMA_SEPARABLE_MIN_PIXELS`] (where the H200 ran them faster than the other kernels).
    pub fn uses_mma(&self, k: usize, hw: bool, pixels: usize, separable: bool) -> bool {
        let from = if separable {
            MMA_SEPARABLE_MIN_PIXELS
        } else {
            MMA_DENSE_MIN_PIXELS
        };
        matches!(k, 3 | 5 | 7)
            && match self.mma {
                MmaMode::Off => false,
                MmaMode::Auto => hw && k >= 5 && pixels >= from,
                MmaMode::On => true,
            }
    }

    /// Whether a square separable `u8` filter of `k × k` taps over `pixels` pixels runs a
    /// column-tile kernel (its coefficients permitting, `plan::exact_in_f32`): `auto` (with
    /// `MVISION_FILTER_STREAM=auto`) at every size where the taps are `packed`
    /// (`mv_sep_filter_u8_cols_dp`, [`FilterTuning::packs`]), else (`mv_sep_filter_u8_cols`)
    /// for 7 taps at every size and for 3 and 5 taps below [`COLS_U8_SMALL_TAPS_MAX_PIXELS`];
    /// `on` for 3, 5 and 7 taps at every size.
    pub fn uses_cols_u8(&self, k: usize, pixels: usize, packed: bool) -> bool {
        self.uses_cols(k)
            && (self.cols == ColsMode::On
                || packed
                || k == 7
                || pixels < COLS_U8_SMALL_TAPS_MAX_PIXELS)
    }

    /// Whether a dense filter of `k × k` taps runs the streaming kernel (3 × 3 only: `u8` was
    /// faster at every size measured, while at 7 × 7 the halo tile was; a device may still
    /// send large `f32` images to the halo tile, [`plan::Limits::dense_f32_halo_from`]).
    pub fn streams_dense(&self, k: usize) -> bool {
        self.stream != StreamMode::Off && k == 3
    }

    /// Whether a square separable `f32` filter of `k × k` taps runs `mv_sep_filter_f32_cols`
    /// rather than the streaming or the tiled kernel (at any image size), and a dense `f32`
    /// one in the default tile `mv_filter2d_f32_cols` (on the H200 the latter ran 3 × 3 and
    /// 7 × 7 at 1.09–1.34× the previous kernels at 3840 × 2160 and 1920 × 1080; BENCHMARKS.md).
    pub fn uses_cols(&self, k: usize) -> bool {
        match self.cols {
            ColsMode::Off => false,
            // Measured to win at every size on the H200 once border tiles load vectors (the
            // explicit streaming or halo-tile settings keep their kernels, for tests).
            ColsMode::Auto => matches!(k, 3 | 5 | 7) && self.stream == StreamMode::Auto,
            ColsMode::On => matches!(k, 3 | 5 | 7),
        }
    }
}

/// Pixels from which CUDA runs the dense 3 × 3 `f32` filter on the halo tile rather than the
/// streaming kernel ([`plan::Limits::dense_f32_halo_from`]): with coefficients by value the
/// halo tile ran 1.12× the streaming kernel at 3840 × 2160 on the H200 (83 % against 74 % of
/// copy bandwidth) but 0.93× at 1920 × 1080 and even at 640 × 480. NVIDIA's OpenCL keeps the
/// streaming kernel at every size (1.26× the halo tile at 4K). The default tile takes
/// `mv_filter2d_f32_cols` before either ([`FilterTuning::uses_cols`]); this rule holds
/// for other tiles and under `MVISION_FILTER_COLS=off`.
pub const DENSE_F32_HALO_MIN_PIXELS: usize = 1 << 22;

/// Pixels from which `mv_filter2d_f32_cols` runs in work-groups of [`DENSE_COLS_WIDE_TILE`]
/// instead of the default tile: on the H200 at 3840 × 2160 the 32 × 8 groups (128 columns by
/// 32 rows each) ran dense 7 × 7 `f32` 1.02–1.03× the 16 × 16 ones (71–72 % of copy bandwidth
/// on CUDA and NVIDIA OpenCL), at 1920 × 1080 0.94–0.97× (BENCHMARKS.md).
pub const DENSE_COLS_WIDE_MIN_PIXELS: usize = 1 << 22;

/// The work-group of `mv_filter2d_f32_cols` on images of at least
/// [`DENSE_COLS_WIDE_MIN_PIXELS`] (where the device takes it; its program is built on first
/// use, like any tile's).
pub const DENSE_COLS_WIDE_TILE: Tile = Tile::new(32, 8);

/// Largest work-group of the tiled integral kernels (`MV_IGROUP_MAX`): it sizes their local
/// arrays. They run with 32, 64, 128 or 256 work-items (32 lanes × 1 to 8 rows).
pub const INTEGRAL_GROUP_MAX: usize = 256;

/// Smallest work-group of the tiled integral kernels (one row of 32 lanes); a device that allows
/// less runs the row and column passes instead.
pub const INTEGRAL_GROUP_MIN: usize = 32;

/// The kernel code of a border mode and its constant value (`None` unless constant).
pub fn border_code<T: Copy>(border: &Border<T>) -> (i32, Option<T>) {
    match *border {
        Border::Replicate => (BORDER_REPLICATE, None),
        Border::Reflect101 => (BORDER_REFLECT_101, None),
        Border::Constant(v) => (BORDER_CONSTANT, Some(v)),
    }
}

/// Kernel entry-point names, identical in both backends (`kernels/SPEC.md` gives each one's
/// arguments).
pub mod names {
    /// Dense `k × k` fixed-point filter of a `u8` image, one work-item per pixel.
    pub const FILTER2D_U8_NAIVE: &str = "mv_filter2d_u8_naive";
    /// Dense fixed-point filter, halo tile in local memory.
    pub const FILTER2D_U8_TILED: &str = "mv_filter2d_u8_tiled";
    /// Dense float filter, one work-item per pixel.
    pub const FILTER2D_F32_NAIVE: &str = "mv_filter2d_f32_naive";
    /// Dense float filter, halo tile in local memory.
    pub const FILTER2D_F32_TILED: &str = "mv_filter2d_f32_tiled";
    /// Dense fixed-point 3 × 3 filter, streaming (register windows).
    pub const FILTER2D_U8_STREAM: &str = "mv_filter2d_u8_stream";
    /// Separable fixed-point filter, square 3, 5 or 7 taps, streaming (register windows).
    pub const SEP_FILTER_U8_STREAM: &str = "mv_sep_filter_u8_stream";
    /// [`FILTER2D_U8_STREAM`] with packed 16 × 8-bit products (`dp2a`) for coefficients that
    /// fit 16 bits.
    pub const FILTER2D_U8_STREAM_DP: &str = "mv_filter2d_u8_stream_dp";
    /// [`SEP_FILTER_U8_STREAM`] with packed 16 × 8-bit products (`dp2a`) for horizontal taps
    /// that fit 16 bits.
    pub const SEP_FILTER_U8_STREAM_DP: &str = "mv_sep_filter_u8_stream_dp";
    /// Separable float filter, square 3 taps, streaming (register windows); one kernel per tap
    /// count, so that each compiles only its own path ([`sep_filter_f32_stream`]).
    pub const SEP_FILTER_F32_STREAM_K3: &str = "mv_sep_filter_f32_stream_k3";
    /// [`SEP_FILTER_F32_STREAM_K3`] for square 5 taps.
    pub const SEP_FILTER_F32_STREAM_K5: &str = "mv_sep_filter_f32_stream_k5";
    /// [`SEP_FILTER_F32_STREAM_K3`] for square 7 taps.
    pub const SEP_FILTER_F32_STREAM_K7: &str = "mv_sep_filter_f32_stream_k7";
    /// Separable float filter, square 3, 5 or 7 taps, the streaming kernel's work-items fed
    /// from a column tile in local memory.
    pub const SEP_FILTER_F32_COLS: &str = "mv_sep_filter_f32_cols";
    /// Separable fixed-point filter, square 3, 5 or 7 taps, from a column tile as
    /// [`SEP_FILTER_F32_COLS`], summed in `f32`: only for taps whose sums all stay integers
    /// below 2²⁴ in magnitude, where that is exact.
    pub const SEP_FILTER_U8_COLS: &str = "mv_sep_filter_u8_cols";
    /// [`SEP_FILTER_U8_COLS`] from a tile of the bytes themselves, each row's horizontal sums
    /// from packed 16 × 8-bit products (dp2a) and the vertical ones in `int`: for taps of 16
    /// bits within the same bound, where the device has dp2a.
    pub const SEP_FILTER_U8_COLS_DP: &str = "mv_sep_filter_u8_cols_dp";
    /// Dense float filter, 3 × 3, 5 × 5 or 7 × 7, from the column tile of
    /// [`SEP_FILTER_F32_COLS`]: each work-item reads its window rows once for all its output
    /// rows.
    pub const FILTER2D_F32_COLS: &str = "mv_filter2d_f32_cols";
    /// Dense float 3 × 3 filter, streaming (register windows).
    pub const FILTER2D_F32_STREAM: &str = "mv_filter2d_f32_stream";
    /// Dense fixed-point 3 × 3, 5 × 5 or 7 × 7 filter (also square separable ones, as the dense
    /// filter of their outer product) on the matrix units: warp-wide 8-bit integer matrix
    /// products (PTX `mma`, where [`crate::plan::Limits::mma`]; elsewhere the same products
    /// from local memory).
    pub const FILTER2D_U8_MMA: &str = "mv_filter2d_u8_mma";
    /// Separable fixed-point filter (also box and Gaussian blur).
    pub const SEP_FILTER_U8_TILED: &str = "mv_sep_filter_u8_tiled";
    /// Separable float filter (also box and Gaussian blur).
    pub const SEP_FILTER_F32_TILED: &str = "mv_sep_filter_f32_tiled";
    /// 3 × 3 Sobel of a `u8` image into two `i16` images.
    pub const SOBEL_U8: &str = "mv_sobel_u8";
    /// 3 × 3 Sobel of an `f32` image.
    pub const SOBEL_F32: &str = "mv_sobel_f32";
    /// Integral image, pass 1: prefix sums of each source row.
    pub const INTEGRAL_ROWS_U8: &str = "mv_integral_rows_u8";
    /// Integral image, pass 2: running sums down each table column.
    pub const INTEGRAL_COLS: &str = "mv_integral_cols";
    /// Tiled integral image, pass 1: column and row sums of each tile.
    pub const INTEGRAL_TILE_SUMS_U8: &str = "mv_integral_tile_sums_u8";
    /// Tiled integral image, pass 2: the carries into each tile from above and from the left.
    pub const INTEGRAL_CARRIES: &str = "mv_integral_carries";
    /// Tiled integral image, pass 3: each tile's part of the table of pixels.
    pub const INTEGRAL_TILES_U8: &str = "mv_integral_tiles_u8";
    /// Tiled integral image, pass 3 of the squares: each tile's part of the table of squares.
    pub const INTEGRAL_TILES_SQ_U8: &str = "mv_integral_tiles_sq_u8";
    /// Integral image in one launch: each tile adds the published sums of every tile above-left
    /// of it ([`crate::IntegralLookBack::Direct`]).
    pub const INTEGRAL_LOOKBACK_U8: &str = "mv_integral_lookback_u8";
    /// The table of squares in one launch, as [`INTEGRAL_LOOKBACK_U8`].
    pub const INTEGRAL_LOOKBACK_SQ_U8: &str = "mv_integral_lookback_sq_u8";
    /// Integral image in one launch, each tile's carries by decoupled look-back walks over
    /// earlier tiles ([`crate::IntegralLookBack::Walk`]).
    pub const INTEGRAL_LOOKBACK_WALK_U8: &str = "mv_integral_lookback_walk_u8";
    /// The table of squares in one launch, as [`INTEGRAL_LOOKBACK_WALK_U8`].
    pub const INTEGRAL_LOOKBACK_WALK_SQ_U8: &str = "mv_integral_lookback_walk_sq_u8";
    /// One pyramid level down of a `u8` image.
    pub const PYR_DOWN_U8: &str = "mv_pyr_down_u8";
    /// One pyramid level down of an `f32` image.
    pub const PYR_DOWN_F32: &str = "mv_pyr_down_f32";
    /// Bilinear resize of a `u8` image.
    pub const RESIZE_BILINEAR_U8: &str = "mv_resize_bilinear_u8";
    /// Bilinear resize of an `f32` image.
    pub const RESIZE_BILINEAR_F32: &str = "mv_resize_bilinear_f32";

    /// The streaming separable float kernel of `k` square taps: [`SEP_FILTER_F32_STREAM_K3`],
    /// `_K5` or `_K7`, and `None` for other sizes (which never stream).
    pub const fn sep_filter_f32_stream(k: usize) -> Option<&'static str> {
        match k {
            3 => Some(SEP_FILTER_F32_STREAM_K3),
            5 => Some(SEP_FILTER_F32_STREAM_K5),
            7 => Some(SEP_FILTER_F32_STREAM_K7),
            _ => None,
        }
    }
}

/// Which compiler a source is assembled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// OpenCL C 1.2 (`clBuildProgram`).
    OpenCl,
    /// CUDA C++ (NVRTC).
    Cuda,
}

/// 32-bit slots of a dense filter's coefficient table passed by value (`mv_taps_i32` /
/// `mv_taps_f32` in `kernels/common/filter.h`): one per tap of the largest kernel.
pub const TAPS_SLOTS: usize = MAX_KERNEL_SIZE * MAX_KERNEL_SIZE;

/// 32-bit slots of one line of separable taps passed by value (`mv_line_i32` / `mv_line_f32`).
pub const LINE_SLOTS: usize = MAX_KERNEL_SIZE;

/// Warps side by side in a work-group of the matrix-unit filter (`MV_MMA_WARPS`,
/// `mv_filter2d_u8_mma`): 8 (64 output columns) was at least as fast as 4 and 16 on the H200.
pub const MMA_WARPS: usize = 8;

/// Output columns one work-group of the matrix-unit filter covers (`MV_MMA_COLS`); it covers
/// `16 · k` rows of a `k × k` kernel.
pub const MMA_COLS: usize = 8 * MMA_WARPS;

/// Work-items of one work-group of the matrix-unit filter (its fixed group shape is
/// `MMA_THREADS × 1`).
pub const MMA_THREADS: usize = 32 * MMA_WARPS;

/// The largest kernel side the matrix-unit filter takes (`MV_MMA_MAX_K`); it takes 3, 5 and 7.
pub const MMA_MAX_K: usize = 7;

/// Byte planes the matrix-unit filter splits coefficients into, at most: 1 for coefficients in
/// −128 … 127, 2 within 16 bits, 3 within 24.
pub const MMA_PLANES: usize = 3;

/// 32-bit words the matrix-unit filter takes per kernel row of one plane (`MV_MMA_ROW_WORDS`).
pub const MMA_ROW_WORDS: usize = 8;

/// 32-bit slots of the matrix-unit filter's coefficients passed by value (`mv_mma_taps`,
/// `MV_MMA_WORDS`): [`MMA_PLANES`] × [`MMA_MAX_K`] rows of [`MMA_ROW_WORDS`].
pub const MMA_SLOTS: usize = MMA_PLANES * MMA_MAX_K * MMA_ROW_WORDS;

/// Pixels from which [`MmaMode::Auto`] runs a dense `u8` filter of 5 × 5 or 7 × 7 taps on the
/// matrix units (about 1920 × 1080). On the H200 the matrix-unit kernel ran dense 7 × 7 `u8`
/// 1.7–1.9× the halo tile at 3840 × 2160 and 1.2–1.4× at 1920 × 1080 (CUDA, NVIDIA OpenCL), but
/// 0.9–1.0× at 640 × 480, where its work-groups of 64 × 112 outputs leave the GPU partly idle.
pub const MMA_DENSE_MIN_PIXELS: usize = 2_000_000;

/// Pixels from which [`ColsMode::Auto`] leaves square separable `u8` filters of 3 and 5 taps
/// (box and Gaussian blurs included) to the streaming and matrix-unit kernels rather than
/// `mv_sep_filter_u8_cols` (the float tile, where the device has no dp2a): on the H200 that
/// tile ran Gaussian 3 and box 5 `u8` at 0.88–0.97× of those at 3840 × 2160 but 1.26–1.55×
/// the halo tile at 1920 × 1080, and Gaussian 7 1.10–1.13× and 1.36–1.60× (CUDA, NVIDIA
/// OpenCL; BENCHMARKS.md). The byte tile with packed products (`mv_sep_filter_u8_cols_dp`)
/// beat them at 4K too (1.08–1.20×) and takes every size.
pub const COLS_U8_SMALL_TAPS_MAX_PIXELS: usize = 1 << 22;

/// Pixels from which [`MmaMode::Auto`] runs a square separable `u8` filter of 5 or 7 taps (box
/// and Gaussian blurs included) on the matrix units: at 3840 × 2160 the H200 ran box 5 1.16×
/// and Gaussian 7 1.01–1.03× the streaming kernels; at 1920 × 1080 CUDA's Gaussian 7 was 0.92×.
pub const MMA_SEPARABLE_MIN_PIXELS: usize = 1 << 22;

/// Kernel parameter bytes an OpenCL device must accept (`CL_DEVICE_MAX_PARAMETER_SIZE`) for
/// its filter kernels to take their coefficients by value: the full profile's minimum, above
/// the largest filter's parameters (a [`TAPS_SLOTS`] table and ten more arguments). Embedded-
/// profile devices may accept only 256.
pub const TAPS_PARAM_BYTES: usize = 1024;

/// A program: a group of kernels compiled together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KernelSet {
    /// Dense, separable (box, Gaussian) and Sobel filters; depends on the [`Tile`].
    Filter,
    /// Integral images (the tiled scan; the row and column passes for small devices).
    Integral,
    /// Pyramid level and bilinear resize.
    Resample,
}

impl KernelSet {
    /// Every kernel set.
    pub const ALL: [KernelSet; 3] = [KernelSet::Filter, KernelSet::Integral, KernelSet::Resample];

    /// Lower-case name (`"filter"`, `"integral"`, `"resample"`).
    pub const fn name(self) -> &'static str {
        match self {
            KernelSet::Filter => "filter",
            KernelSet::Integral => "integral",
            KernelSet::Resample => "resample",
        }
    }

    /// The entry points this program defines.
    pub const fn kernel_names(self) -> &'static [&'static str] {
        use names::*;
        match self {
            KernelSet::Filter => &[
                FILTER2D_U8_NAIVE,
                FILTER2D_U8_TILED,
                FILTER2D_F32_NAIVE,
                FILTER2D_F32_TILED,
                SEP_FILTER_U8_TILED,
                SEP_FILTER_F32_TILED,
                FILTER2D_U8_STREAM,
                SEP_FILTER_U8_STREAM,
                SEP_FILTER_F32_STREAM_K3,
                SEP_FILTER_F32_STREAM_K5,
                SEP_FILTER_F32_STREAM_K7,
                SEP_FILTER_F32_COLS,
                SEP_FILTER_U8_COLS,
                SEP_FILTER_U8_COLS_DP,
                FILTER2D_F32_COLS,
                FILTER2D_F32_STREAM,
                FILTER2D_U8_STREAM_DP,
                SEP_FILTER_U8_STREAM_DP,
                FILTER2D_U8_MMA,
                SOBEL_U8,
                SOBEL_F32,
            ],
            KernelSet::Integral => &[
                INTEGRAL_ROWS_U8,
                INTEGRAL_COLS,
                INTEGRAL_TILE_SUMS_U8,
                INTEGRAL_CARRIES,
                INTEGRAL_TILES_U8,
                INTEGRAL_TILES_SQ_U8,
                INTEGRAL_LOOKBACK_U8,
                INTEGRAL_LOOKBACK_SQ_U8,
                INTEGRAL_LOOKBACK_WALK_U8,
                INTEGRAL_LOOKBACK_WALK_SQ_U8,
            ],
            KernelSet::Resample => &[
                PYR_DOWN_U8,
                PYR_DOWN_F32,
                RESIZE_BILINEAR_U8,
                RESIZE_BILINEAR_F32,
            ],
        }
    }

    /// Whether the compiled program depends on the tile size (only [`KernelSet::Filter`]'s
    /// local arrays do; drivers key the others by [`Tile::DEFAULT`]).
    pub const fn uses_tile(self) -> bool {
        matches!(self, KernelSet::Filter)
    }

    /// The tile a program of this set is built (and cached) with when asked for `tile`:
    /// `tile` itself if the set [uses](KernelSet::uses_tile) it, else [`Tile::DEFAULT`].
    pub const fn program_tile(self, tile: Tile) -> Tile {
        if self.uses_tile() {
            tile
        } else {
            Tile::DEFAULT
        }
    }

    /// The common bodies of this program, in inclusion order.
    pub const fn bodies(self) -> &'static [&'static str] {
        match self {
            KernelSet::Filter => &[BORDER_H, FIXED_POINT_H, FILTER_H],
            KernelSet::Integral => &[INTEGRAL_H],
            KernelSet::Resample => &[BORDER_H, FIXED_POINT_H, RESAMPLE_H],
        }
    }

    /// Bytes of local (shared) memory the most demanding kernel of this program declares when
    /// built for `tile`, so a driver can reject a tile before compiling it.
    pub const fn local_mem_bytes(self, tile: Tile) -> usize {
        match self {
            KernelSet::Filter => {
                // The tiled dense and separable filters (kernels/common/filter.h): a halo of
                // `MV_HP_<T> × MV_HR` pixels (separable), whose memory they reuse for their
                // `MV_RW_<T> × MV_HR` horizontal-pass rows (i32 / f32).
                // The dense filters' halo has `2 · MV_TILE_H + MV_MAX_KSIZE − 1` rows (two output
                // rows per work-item).
                let (_, hr) = tile.halo();
                let hr2 = hr + tile.h;
                let dense_u8 = ((tile.w * PX_U8 + 16) * hr2).div_ceil(16) * 16;
                let dense_f32 = 4 * (tile.w * PX_F32 + 16) * hr2;
                let rows_u8 = 4 * tile.w * PX_U8 * hr;
                let rows_f32 = 4 * tile.w * PX_F32 * hr;
                let sobel_f32 = 4 * (tile.w + 2) * (tile.h + 2);
                let cols_f32 = tile.cols_bytes(tile.cols_rows());
                max(
                    max(max(dense_u8, rows_u8), max(dense_f32, rows_f32)),
                    max(sobel_f32, cols_f32),
                )
            }
            KernelSet::Integral => {
                // mv_integral_tiles_sq_u8: a band of up to 8 padded rows, the column carries,
                // the lanes' totals and the tile's left carries, all u64; more than the row
                // pass's scan arrays or the tile sums' arrays.
                let pitch = INTEGRAL_TILE_W + INTEGRAL_TILE_W / 8;
                let band = INTEGRAL_GROUP_MAX / 32 * pitch;
                let tiles = 8 * (band + INTEGRAL_TILE_W + INTEGRAL_GROUP_MAX + INTEGRAL_TILE_H_MAX);
                // (mv_integral_lookback_sq_u8 needs less: 8 · (64 · 33 + 32 + 64 + 128) + 136.)
                max(tiles, INTEGRAL_SCAN_MAX * (4 + 8))
            }
            KernelSet::Resample => 0,
        }
    }
}

/// The work-group shape of the tiled kernels (`MV_TILE_W × MV_TILE_H` work-items; one output
/// pixel each, or [`PX_U8`] / [`PX_F32`] side by side for the tiled dense and separable
/// filters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tile {
    /// Work-items along x (`MV_TILE_W`).
    pub w: usize,
    /// Work-items along y (`MV_TILE_H`).
    pub h: usize,
}

impl Tile {
    /// 16 × 16, the default of `kernels/SPEC.md`.
    pub const DEFAULT: Tile = Tile { w: 16, h: 16 };
    /// 8 × 4, the work-group of the PowerVR filtering case study.
    pub const SEED_8X4: Tile = Tile { w: 8, h: 4 };

    /// A `w × h` tile.
    pub const fn new(w: usize, h: usize) -> Self {
        Self { w, h }
    }

    /// Work-items per group.
    pub const fn items(self) -> usize {
        self.w * self.h
    }

    /// `(width, height)` of the largest halo tile (kernel size [`MAX_KERNEL_SIZE`]) that the
    /// filter kernels reserve in local memory.
    pub const fn halo(self) -> (usize, usize) {
        (self.w + MAX_KERNEL_SIZE - 1, self.h + MAX_KERNEL_SIZE - 1)
    }

    /// Output rows per work-item of `mv_sep_filter_f32_cols` built for this tile
    /// (`MV_COLS_ROWS`): 4, or 2 or 1 where the column tile of 4 would pass
    /// [`COLS_MAX_BYTES`] of local memory.
    pub const fn cols_rows(self) -> usize {
        if self.cols_bytes(4) <= COLS_MAX_BYTES {
            4
        } else if self.cols_bytes(2) <= COLS_MAX_BYTES {
            2
        } else {
            1
        }
    }

    /// Bytes of `mv_sep_filter_f32_cols`' column tile with `rows` output rows per work-item:
    /// `f32` rows of the group's `4·w` columns plus a 4-pixel apron each side, `rows·h`
    /// rows plus 3 above and below (`MV_COLS_BYTES`).
    const fn cols_bytes(self, rows: usize) -> usize {
        4 * (self.w * STREAM_PX + 8) * (self.h * rows + 6)
    }
}

impl Default for Tile {
    fn default() -> Self {
        Tile::DEFAULT
    }
}

/// `const` maximum of two sizes.
const fn max(a: usize, b: usize) -> usize {
    if a > b {
        a
    } else {
        b
    }
}

/// The `#define`s of the host-shared constants, one per line.
pub fn constants() -> String {
    let tuning = IntegralTuning::get();
    let itile_h = tuning.tile_h;
    let ishfl = u8::from(tuning.shuffle);
    let icarry_par = u8::from(tuning.carries == IntegralCarries::Par);
    let icarry_tiled = u8::from(tuning.carries == IntegralCarries::Tiled);
    let stream_rows = FilterTuning::get().stream_rows;
    format!(
        "#define MV_MAX_KSIZE {MAX_KERNEL_SIZE}\n\
         #define MV_RESIZE_FRAC_BITS {RESIZE_FRAC_BITS}\n\
         #define MV_BORDER_REPLICATE {BORDER_REPLICATE}\n\
         #define MV_BORDER_REFLECT_101 {BORDER_REFLECT_101}\n\
         #define MV_BORDER_CONSTANT {BORDER_CONSTANT}\n\
         #define MV_SCAN_MAX {INTEGRAL_SCAN_MAX}\n\
         #define MV_ITILE_W {INTEGRAL_TILE_W}\n\
         #define MV_ITILE_H {itile_h}\n\
         #define MV_ISHFL_WANT {ishfl}\n\
         #define MV_ICARRY_PAR {icarry_par}\n\
         #define MV_ICARRY_TILED {icarry_tiled}\n\
         #define MV_IGROUP_MAX {INTEGRAL_GROUP_MAX}\n\
         #define MV_LB_W {INTEGRAL_LOOKBACK_TILE_W}\n\
         #define MV_LB_H {INTEGRAL_LOOKBACK_TILE_H}\n\
         #define MV_PX_U8 {PX_U8}\n\
         #define MV_PX_F32 {PX_F32}\n\
         #define MV_STREAM_ROWS {stream_rows}\n\
         #define MV_MMA_WARPS {MMA_WARPS}\n\
         #define MV_MMA_COLS {MMA_COLS}\n\
         #define MV_MMA_MAX_K {MMA_MAX_K}\n\
         #define MV_MMA_ROW_WORDS {MMA_ROW_WORDS}\n\
         #define MV_MMA_WORDS {MMA_SLOTS}\n\
         #define MV_COLS_MAX_BYTES {COLS_MAX_BYTES}\n"
    )
}

/// The complete source of `set` for `backend`: prelude, constants, then the common bodies.
pub fn source(set: KernelSet, backend: Backend) -> String {
    let prelude = match backend {
        Backend::OpenCl => PRELUDE_OPENCL,
        Backend::Cuda => PRELUDE_CUDA,
    };
    let mut out = String::with_capacity(
        prelude.len() + 512 + set.bodies().iter().map(|b| b.len() + 1).sum::<usize>(),
    );
    out.push_str(prelude);
    out.push_str("\n/* ---- constants generated by mvision-kernels ---- */\n");
    out.push_str(&constants());
    for body in set.bodies() {
        out.push('\n');
        out.push_str(body);
    }
    out
}

/// The tile's `-D` flags as one string (`"-DMV_TILE_W=16 -DMV_TILE_H=16"`), as
/// `clBuildProgram` takes them.
pub fn build_options(tile: Tile) -> String {
    build_option_list(tile, Backend::OpenCl).join(" ")
}

/// The compiler options of a program built for `tile`, one per element (NVRTC takes an array).
/// For [`Backend::Cuda`] this adds `--fmad=false`, without which NVRTC contracts `a·b + c`
/// into fused multiply-adds and float results drift from the CPU reference (the OpenCL prelude
/// gets the same effect from `#pragma OPENCL FP_CONTRACT OFF`).
pub fn build_option_list(tile: Tile, backend: Backend) -> Vec<String> {
    option_list(tile, backend, false)
}

/// The compiler options of `set`'s program for `tile` under `fma`: [`build_option_list`], and
/// for [`KernelSet::Filter`] with [`FmaMode::On`] fused multiply-adds in the `f32` filters
/// (CUDA: `--fmad=true` instead of `--fmad=false`; OpenCL: `-DMV_FP_CONTRACT=1`, which turns
/// the prelude's `FP_CONTRACT` pragma on). The other sets always round twice: their `f32`
/// kernels (resize, pyramid) stay bit-identical to the CPU.
pub fn program_option_list(
    set: KernelSet,
    tile: Tile,
    backend: Backend,
    fma: FmaMode,
) -> Vec<String> {
    option_list(
        tile,
        backend,
        set == KernelSet::Filter && fma == FmaMode::On,
    )
}

/// The tile's `-D` flags and the contraction choice (`fused`) in `backend`'s words.
fn option_list(tile: Tile, backend: Backend, fused: bool) -> Vec<String> {
    let mut v = vec![
        format!("-DMV_TILE_W={}", tile.w),
        format!("-DMV_TILE_H={}", tile.h),
    ];
    match (backend, fused) {
        (Backend::Cuda, false) => v.push("--fmad=false".to_owned()),
        (Backend::Cuda, true) => v.push("--fmad=true".to_owned()),
        (Backend::OpenCl, true) => v.push("-DMV_FP_CONTRACT=1".to_owned()),
        (Backend::OpenCl, false) => {}
    }
    v
}

#[cfg(test)]
mod tests;
