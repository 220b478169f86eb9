//! Launch plans: everything a driver decides on the host before it touches its API, written
//! once for both drivers.
//!
//! For each operation a [`Planner`] checks the arguments exactly as the `mvision-core` function
//! it mirrors (same checks, same order, same [`mvision_core::Error`]), then returns a [`Launch`]:
//! the program and kernel to run, the arguments in the order of `kernels/SPEC.md`, and the
//! work-item range and work-group shape. A driver binds the buffer handles and coefficient
//! tables of a launch in its own API and enqueues it; it decides nothing else. Plans are generic
//! over the driver's buffer handle `B` (an OpenCL `cl_mem`, a CUDA device pointer), which they
//! only copy into argument lists, never dereference.

mod filter;
mod mma;
mod resample;
#[cfg(test)]
mod tests;

pub use mma::MmaTaps;
pub use resample::{IntegralPlan, IntegralScratch};

use mvision_core::{Border, Error as CoreError};

use crate::{border_code, Backend, KernelSet, Tile};

/// Which implementation of the dense filters (`filter2d_u8`, `filter2d_f32`) runs on a GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// One work-item per output pixel, every tap read from global memory (through the cache).
    Naive,
    /// Work-groups of `w × h` work-items (CUDA: thread blocks) that first load their
    /// `(w + k − 1) × (h + k − 1)` halo tile into local (shared) memory. The tile must fit the
    /// device's work-group size and local memory; each distinct tile compiles its own program
    /// (once per context).
    Tiled {
        /// Work-items along x.
        w: usize,
        /// Work-items along y.
        h: usize,
    },
}

impl Default for Variant {
    /// `Tiled { w: 16, h: 16 }` ([`Tile::DEFAULT`]).
    fn default() -> Self {
        Variant::Tiled {
            w: Tile::DEFAULT.w,
            h: Tile::DEFAULT.h,
        }
    }
}

/// What a device allows a launch, in the terms of both APIs (a CUDA thread block is a
/// work-group, its shared memory the local memory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most work-items in one work-group.
    pub max_group: usize,
    /// Most work-items along each of the first two work-group dimensions.
    pub max_items: [usize; 2],
    /// Local (shared) memory one work-group may declare, in bytes.
    pub local_mem_bytes: u64,
    /// Work-items that run in lock-step (a CUDA warp: 32), when the API says so. The integral
    /// row pass then runs with the fewest whole SIMD groups that cover a row; without it
    /// (OpenCL), with the largest group allowed.
    pub simd_width: Option<usize>,
    /// The device has packed 16 × 8-bit dot products (PTX `dp2a`: NVIDIA compute capability
    /// 6.1 or later) and its programs are built to use them (`MV_DP2A_HW`); [`DotMode::Auto`]
    /// then runs the `_dp` filter kernels.
    ///
    /// [`DotMode::Auto`]: crate::DotMode::Auto
    pub dp2a: bool,
    /// The device has warp-wide 8-bit integer matrix products (PTX `mma.m16n8k16` with `u8` /
    /// `s8` operands: NVIDIA compute capability 8.0 or later) and its programs are built to
    /// use them (`MV_MMA_HW`); [`MmaMode::Auto`] then runs the matrix-unit `u8` filter.
    ///
    /// [`MmaMode::Auto`]: crate::MmaMode::Auto
    pub mma: bool,
    /// Work-groups may wait on work-groups that started earlier, seeing their global stores
    /// after a fence ([`crate::IntegralScan::Auto`] then runs the look-back scan): CUDA, and
    /// NVIDIA's OpenCL.
    pub lookback: bool,
    /// Images of at least this many pixels run the dense 3 × 3 `f32` filter on the halo tile
    /// instead of the streaming kernel under [`StreamMode::Auto`]; `None`: never. CUDA:
    /// [`crate::DENSE_F32_HALO_MIN_PIXELS`].
    ///
    /// [`StreamMode::Auto`]: crate::StreamMode::Auto
    pub dense_f32_halo_from: Option<usize>,
}

/// Work-group shapes tried for [`Limits::default_tile`], largest first.
const DEFAULT_TILES: [Tile; 6] = [
    Tile::DEFAULT,
    Tile::new(16, 8),
    Tile::new(8, 8),
    Tile::SEED_8X4,
    Tile::new(4, 4),
    Tile::new(2, 2),
];

impl Limits {
    /// Whether a tiled filter may run with work-groups of `tile` (the tile is not zero): its
    /// work-items fit the group limits and its halo arrays the local memory.
    ///
    /// Errors: the [`Refusal`] naming the limit the tile exceeds.
    pub fn check_tile(&self, tile: Tile) -> Result<(), Refusal> {
        let items_fit = tile
            .w
            .checked_mul(tile.h)
            .is_some_and(|n| n <= self.max_group)
            && tile.w <= self.max_items[0]
            && tile.h <= self.max_items[1];
        if !items_fit {
            Err(Refusal::TileWorkGroup)
        } else if KernelSet::Filter.local_mem_bytes(tile) as u64 > self.local_mem_bytes {
            Err(Refusal::TileLocalMemory)
        } else {
            Ok(())
        }
    }

    /// The work-group shape of the kernels that take no [`Variant`] (separable, Sobel, naive
    /// dense, pyramid, resize): 16 × 16, or the largest of 16 × 8, 8 × 8, 8 × 4, 4 × 4, 2 × 2,
    /// 1 × 1 the device accepts (every CUDA device takes 16 × 16).
    pub fn default_tile(&self) -> Tile {
        DEFAULT_TILES
            .into_iter()
            .find(|&t| self.check_tile(t).is_ok())
            .unwrap_or(Tile::new(1, 1))
    }
}

/// A launch a driver must refuse although its arguments are valid for the core: the device
/// cannot run it. Drivers report it as their API's `Device` error (OpenCL
/// `CL_INVALID_WORK_GROUP_SIZE`, CUDA `CUDA_ERROR_INVALID_VALUE`), in their own words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// The tile has more work-items than a work-group may have, or is too long along x or y.
    TileWorkGroup,
    /// The tile's halo arrays exceed the local (shared) memory of a work-group.
    TileLocalMemory,
}

impl Refusal {
    /// What was refused, in the API's own terms: the `call` of the driver's `Device` error.
    pub const fn what(self, backend: Backend) -> &'static str {
        match (self, backend) {
            (Refusal::TileWorkGroup, Backend::OpenCl) => {
                "tiled filter: the tile exceeds the device's work-group size limits"
            }
            (Refusal::TileWorkGroup, Backend::Cuda) => {
                "tiled filter: the tile exceeds the device's threads per block"
            }
            (Refusal::TileLocalMemory, Backend::OpenCl) => {
                "tiled filter: the tile's halo exceeds the device's local memory"
            }
            (Refusal::TileLocalMemory, Backend::Cuda) => {
                "tiled filter: the tile's halo exceeds the device's shared memory per block"
            }
        }
    }
}

/// Why a [`Planner`] rejected an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanError {
    /// The arguments are invalid, exactly as the CPU reference would report them.
    Invalid(CoreError),
    /// The device cannot run the launch.
    Refused(Refusal),
}

impl From<CoreError> for PlanError {
    fn from(e: CoreError) -> Self {
        PlanError::Invalid(e)
    }
}

/// A device image as a plan sees it: the driver's handle to its packed pixels (row pitch =
/// width), its size, and the context that allocated it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Img<B> {
    /// The driver's buffer handle.
    pub buf: B,
    /// Width in pixels (also the row pitch, in elements).
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// The id of the context that allocated the image ([`Planner::context`]).
    pub context: u64,
}

impl<B: Copy> Img<B> {
    /// `(width, height)`.
    pub fn size(&self) -> (usize, usize) {
        (self.width, self.height)
    }

    /// The kernel arguments `ptr, stride_elems`. Every image has fewer than 2³¹ elements
    /// ([`image_len`]), so its sizes fit the kernels' `int`.
    fn data(&self) -> [Arg<B>; 2] {
        [Arg::Buf(self.buf), Arg::I32(self.width as i32)]
    }

    /// The kernel arguments `width, height`.
    fn dims(&self) -> [Arg<B>; 2] {
        [Arg::I32(self.width as i32), Arg::I32(self.height as i32)]
    }
}

/// One kernel argument, in the order of `kernels/SPEC.md`.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg<B> {
    /// A device buffer (`T*` in the kernel).
    Buf(B),
    /// A null buffer pointer (an optional output that is not wanted).
    Null,
    /// An `int`.
    I32(i32),
    /// A `float`.
    F32(f32),
    /// Filter coefficients as the kernel reads them. The driver passes them by value where
    /// [`crate::FilterTuning::taps_by_value`] says so, else copies them to the device and
    /// passes the address.
    Table(Table),
}

/// A kernel's coefficient table: `int`s or `float`s in native byte order, and the 32-bit slots
/// of the struct it fills when passed by value ([`crate::TAPS_SLOTS`] for a dense table,
/// [`crate::LINE_SLOTS`] for a line of separable taps; the slots past the coefficients are 0).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Table {
    /// The coefficients' bytes (4 each).
    pub bytes: Vec<u8>,
    /// The slots of the by-value struct: at least `bytes.len() / 4`.
    pub slots: usize,
}

impl Table {
    /// The by-value struct's slots: the coefficients' bit patterns, then zeros.
    ///
    /// Errors: `None` when the coefficients do not fit `N` slots or `N` is not [`Self::slots`].
    pub fn padded<const N: usize>(&self) -> Option<[u32; N]> {
        if N != self.slots || self.bytes.len() > 4 * N || !self.bytes.len().is_multiple_of(4) {
            return None;
        }
        let mut out = [0u32; N];
        for (o, c) in out.iter_mut().zip(self.bytes.chunks_exact(4)) {
            *o = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]);
        }
        Some(out)
    }

    /// This table as the struct its kernel takes by value: a dense table's
    /// ([`crate::TAPS_SLOTS`] slots), a line's ([`crate::LINE_SLOTS`]) or the matrix-unit
    /// filter's byte rows ([`crate::MMA_SLOTS`]), zero-padded.
    ///
    /// Errors: `None` when its slots are neither or its coefficients do not fit them.
    pub fn by_value(&self) -> Option<TableValue> {
        match self.slots {
            crate::LINE_SLOTS => self.padded().map(TableValue::Line),
            crate::TAPS_SLOTS => self.padded().map(|t| TableValue::Taps(Box::new(t))),
            crate::MMA_SLOTS => self.padded().map(|t| TableValue::Mma(Box::new(t))),
            _ => None,
        }
    }
}

/// A coefficient table as the by-value struct a kernel takes ([`Table::by_value`]): 32-bit
/// slots, the coefficients' bits first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableValue {
    /// A dense table (`mv_taps_i32` / `mv_taps_f32`).
    Taps(Box<[u32; crate::TAPS_SLOTS]>),
    /// A line of separable taps (`mv_line_i32` / `mv_line_f32`).
    Line([u32; crate::LINE_SLOTS]),
    /// The matrix-unit filter's byte rows (`mv_mma_taps`, [`MmaTaps`]).
    Mma(Box<[u32; crate::MMA_SLOTS]>),
}

/// One kernel launch: which kernel of which program, its arguments, and its 2-D range.
#[derive(Clone, Debug, PartialEq)]
pub struct Launch<B> {
    /// The program the kernel belongs to.
    pub set: KernelSet,
    /// The build of `set` to use (normalised by [`KernelSet::program_tile`]).
    pub tile: Tile,
    /// The kernel's entry point (one of [`crate::names`]).
    pub kernel: &'static str,
    /// The arguments, in order.
    pub args: Vec<Arg<B>>,
    /// Work-items along x and y: the output range rounded up to whole work-groups (every
    /// work-item checks bounds).
    pub global: [usize; 2],
    /// The work-group (CUDA block) shape.
    pub local: [usize; 2],
}

impl<B> Launch<B> {
    fn new(
        set: KernelSet,
        tile: Tile,
        kernel: &'static str,
        args: Vec<Arg<B>>,
        range: [usize; 2],
        local: [usize; 2],
    ) -> Self {
        Self {
            set,
            tile: set.program_tile(tile),
            kernel,
            args,
            global: [
                range[0].div_ceil(local[0]) * local[0],
                range[1].div_ceil(local[1]) * local[1],
            ],
            local,
        }
    }

    /// Work-groups along x and y (a CUDA grid).
    pub fn groups(&self) -> [usize; 2] {
        [
            self.global[0] / self.local[0],
            self.global[1] / self.local[1],
        ]
    }
}

/// Plans the operations of one driver context: which context owns images, what its device
/// allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Planner {
    context: u64,
    limits: Limits,
    default_tile: Tile,
}

impl Planner {
    /// The planner of context `context` (an id unique among the driver's contexts) on a device
    /// with `limits`.
    pub fn new(context: u64, limits: Limits) -> Self {
        Self {
            context,
            limits,
            default_tile: limits.default_tile(),
        }
    }

    /// The id of the context.
    pub fn context(&self) -> u64 {
        self.context
    }

    /// The device's limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The work-group shape of the kernels that take no [`Variant`] ([`Limits::default_tile`]).
    pub fn default_tile(&self) -> Tile {
        self.default_tile
    }

    /// Checks that an image of context `context` may be used here: its work is ordered on its
    /// own context's queue (or lives on another device).
    ///
    /// Errors: `InvalidArgument` for another context's image.
    pub fn owns(&self, context: u64) -> Result<(), CoreError> {
        if context == self.context {
            Ok(())
        } else {
            Err(CoreError::InvalidArgument)
        }
    }

    /// [`Planner::owns`] for every image of a call, in order.
    fn owns_all<B, const N: usize>(&self, images: [&Img<B>; N]) -> Result<(), CoreError> {
        images.iter().try_for_each(|img| self.owns(img.context))
    }

    /// The tile of a dense filter variant: the default tile for the naive kernels, else the
    /// variant's tile once it is positive and fits the device.
    fn variant_tile(&self, variant: Variant) -> Result<Tile, PlanError> {
        match variant {
            Variant::Naive => Ok(self.default_tile),
            Variant::Tiled { w: 0, .. } | Variant::Tiled { h: 0, .. } => {
                Err(CoreError::ZeroSize.into())
            }
            Variant::Tiled { w, h } => {
                let tile = Tile::new(w, h);
                self.limits.check_tile(tile).map_err(PlanError::Refused)?;
                Ok(tile)
            }
        }
    }

    /// A 2-D launch over an output of `size` in work-groups of `tile`.
    fn launch_2d<B>(
        &self,
        set: KernelSet,
        tile: Tile,
        kernel: &'static str,
        args: Vec<Arg<B>>,
        size: (usize, usize),
    ) -> Launch<B> {
        Launch::new(set, tile, kernel, args, [size.0, size.1], [tile.w, tile.h])
    }
}

/// Checks that two images have one size, as the core does.
///
/// Errors: `SizeMismatch`.
pub fn same_size(a: (usize, usize), b: (usize, usize)) -> Result<(), CoreError> {
    if a == b {
        Ok(())
    } else {
        Err(CoreError::SizeMismatch)
    }
}

/// The element count of a `width × height` device image, checked: positive, and small enough
/// for the kernels' `int` indices.
///
/// Errors: `ZeroSize` for a zero side; `Overflow` beyond `i32::MAX` elements.
pub fn image_len(width: usize, height: usize) -> Result<usize, CoreError> {
    if width == 0 || height == 0 {
        return Err(CoreError::ZeroSize);
    }
    width
        .checked_mul(height)
        .filter(|&n| n <= i32::MAX as usize)
        .ok_or(CoreError::Overflow)
}

/// `border_mode, border_value` of a `u8` kernel (the value travels as `int`).
fn border_u8<B>(border: Border<u8>) -> [Arg<B>; 2] {
    let (mode, value) = border_code(&border);
    [Arg::I32(mode), Arg::I32(i32::from(value.unwrap_or(0)))]
}

/// `border_mode, border_value` of an `f32` kernel.
fn border_f32<B>(border: Border<f32>) -> [Arg<B>; 2] {
    let (mode, value) = border_code(&border);
    [Arg::I32(mode), Arg::F32(value.unwrap_or(0.0))]
}

/// An `int` coefficient table of `slots` by-value slots.
fn table_i32<B>(v: &[i32], slots: usize) -> Arg<B> {
    let bytes = v.iter().flat_map(|c| c.to_ne_bytes()).collect();
    Arg::Table(Table { bytes, slots })
}

/// A `float` coefficient table of `slots` by-value slots.
fn table_f32<B>(v: &[f32], slots: usize) -> Arg<B> {
    let bytes = v.iter().flat_map(|c| c.to_ne_bytes()).collect();
    Arg::Table(Table { bytes, slots })
}
