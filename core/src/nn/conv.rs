//! 2-D convolution of NCHW `f32` tensors (cross-correlation, as in every CNN framework) with
//! stride, asymmetric zero padding, dilation and groups (depthwise when `groups = c_in`), by four
//! methods that compute the same result and differ in speed and working memory:
//!
//! * [`ConvMethod::Direct`]: nested loops, no working memory (depthwise 3×3 layers by the
//!   one-pass kernel of `depthwise`, stride-2 to stride-4 first layers of at most 4 input
//!   channels by the AVX-512 or AVX2 kernel of `few_channels`, pointwise layers on small maps or with
//!   few weights by the AVX-512 kernel of `small_pointwise`, all with their bias and ReLU /
//!   ReLU6 / Clip fused);
//! * [`ConvMethod::Im2col`]: lower the input to a `(C/g·Kh·Kw) × (Oh·Ow)` matrix, one GEMM per
//!   group (skipped lowering for 1×1, stride-1, unpadded kernels, whose input already is that
//!   matrix, and whose bias and clamp are one pass after the GEMM; stride-2 kernels on
//!   AVX-512, and stride-1 kernels with few weights on AVX2, split the input into phase
//!   images (a padded copy at stride 1) instead and multiply the weights in place, with the
//!   bias and clamp fused, see `phases`; strided unpadded 1×1 kernels on AVX-512 lower to the
//!   subsampled input and multiply it by `small_pointwise`'s kernel where that applies);
//! * [`ConvMethod::Mec`]: Cho & Brand's memory-efficient convolution (2017): lower each output
//!   column's `Hp × Kw` input strip once (`Ow × Hp·Kw·C/g`), then one GEMM per output row over an
//!   overlapping window of that matrix;
//! * [`ConvMethod::Mfca`]: seed 004's method: split the output into `m` column blocks, lower and
//!   multiply one block at a time, and copy ("concatenate") its result into the output;
//! * [`ConvMethod::Winograd`]: Lavin & Gray's F(2×2, 3×3) for 3×3, stride-1, undilated kernels:
//!   input tiles and weights transformed, 16 GEMMs over all the batch's tiles, 2.25× fewer
//!   multiplications than im2col on whole tiles; [`conv2d_winograd_prepared`] runs it on
//!   weights transformed once ([`winograd_prepare_weights`], 16/9 of the weights' memory);
//! * [`ConvMethod::Blocked`]: direct convolution on output channels blocked by 16 (ONNX
//!   Runtime's "NCHWc" kernel with NCHW input and output): a register tile of 6 output pixels
//!   × 64 output channels accumulates broadcast inputs times weight vectors over every tap;
//!   [`conv2d_blocked_prepared`] runs it on weights re-laid out once
//!   ([`blocked_prepare_weights`]).
//!
//! Weights are `c_out × c_in/groups × kh × kw` (ONNX / PyTorch order), bias one value per output
//! channel. [`workspace_len`] gives each method's working memory; [`choose_method`] picks the
//! fastest that fits a budget (direct for few output channels per group, else im2col, MFCA, MEC,
//! direct, as measured). [`lowered_len`], [`mfca_model_len`] and [`mfca_best_m`] are the
//! memory model of seed 004 (see their docs for where the paper's formulas and the methods
//! differ).

use super::blocked;
use super::depthwise::{self, Clamp, NO_CLAMP};
use super::few_channels;
use super::gemm::{gemm_pack_len, sgemm, Order, Transpose};
use super::phases;
use super::small_pointwise;
use super::tensor::{checked_bytes, checked_product};
use super::winograd;
use crate::error::{Error, Result};

/// Geometry of one 2-D convolution. Lengths are in elements; the output size follows from the
/// rest ([`Conv2dShape::dims`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Conv2dShape {
    /// Batch size.
    pub n: usize,
    /// Input channels (a multiple of `groups`).
    pub c_in: usize,
    /// Input height.
    pub h: usize,
    /// Input width.
    pub w: usize,
    /// Output channels (a multiple of `groups`).
    pub c_out: usize,
    /// Kernel height.
    pub kh: usize,
    /// Kernel width.
    pub kw: usize,
    /// Vertical stride.
    pub stride_h: usize,
    /// Horizontal stride.
    pub stride_w: usize,
    /// Zero rows above the input.
    pub pad_top: usize,
    /// Zero columns left of the input.
    pub pad_left: usize,
    /// Zero rows below the input.
    pub pad_bottom: usize,
    /// Zero columns right of the input.
    pub pad_right: usize,
    /// Vertical dilation (1 = dense kernel).
    pub dilation_h: usize,
    /// Horizontal dilation (1 = dense kernel).
    pub dilation_w: usize,
    /// Channel groups: input and output channels are split into `groups` independent
    /// convolutions (`groups = c_in = c_out` is depthwise).
    pub groups: usize,
}

impl Conv2dShape {
    /// A convolution of `n × c_in × h × w` by `c_out` kernels of `kh × kw`, with stride 1, no
    /// padding, no dilation, one group; change the public fields for the rest.
    pub const fn new(
        n: usize,
        c_in: usize,
        h: usize,
        w: usize,
        c_out: usize,
        kh: usize,
        kw: usize,
    ) -> Self {
        Self {
            n,
            c_in,
            h,
            w,
            c_out,
            kh,
            kw,
            stride_h: 1,
            stride_w: 1,
            pad_top: 0,
            pad_left: 0,
            pad_bottom: 0,
            pad_right: 0,
            dilation_h: 1,
            dilation_w: 1,
            groups: 1,
        }
    }

    /// Validates the shape and derives the output size and buffer lengths.
    ///
    /// # Errors
    /// [`Error::ZeroSize`] if a size, stride, dilation or `groups` is 0;
    /// [`Error::InvalidArgument`] if `groups` does not divide `c_in` and `c_out`;
    /// [`Error::SizeMismatch`] if the dilated kernel is larger than the padded input;
    /// [`Error::Overflow`] if a length (or its byte count) overflows.
    pub fn dims(&self) -> Result<ConvDims> {
        let s = self;
        let all = [
            s.n,
            s.c_in,
            s.h,
            s.w,
            s.c_out,
            s.kh,
            s.kw,
            s.stride_h,
            s.stride_w,
            s.dilation_h,
            s.dilation_w,
            s.groups,
        ];
        if all.contains(&0) {
            return Err(Error::ZeroSize);
        }
        if !s.c_in.is_multiple_of(s.groups) || !s.c_out.is_multiple_of(s.groups) {
            return Err(Error::InvalidArgument);
        }
        let out = |size: usize, pa: usize, pb: usize, k: usize, d: usize, st: usize| {
            let padded = size
                .checked_add(pa)
                .and_then(|x| x.checked_add(pb))
                .ok_or(Error::Overflow)?;
            let span = (k - 1)
                .checked_mul(d)
                .and_then(|x| x.checked_add(1))
                .ok_or(Error::Overflow)?;
            if padded < span {
                return Err(Error::SizeMismatch);
            }
            Ok(((padded - span) / st + 1, padded))
        };
        let (out_h, padded_h) = out(s.h, s.pad_top, s.pad_bottom, s.kh, s.dilation_h, s.stride_h)?;
        let (out_w, _) = out(s.w, s.pad_left, s.pad_right, s.kw, s.dilation_w, s.stride_w)?;
        let cg = s.c_in / s.groups;
        let dims = ConvDims {
            out_h,
            out_w,
            padded_h,
            input_len: checked_bytes(checked_product(&[s.n, s.c_in, s.h, s.w])?)?,
            weight_len: checked_bytes(checked_product(&[s.c_out, cg, s.kh, s.kw])?)?,
            output_len: checked_bytes(checked_product(&[s.n, s.c_out, out_h, out_w])?)?,
            k: checked_product(&[cg, s.kh, s.kw])?,
        };
        Ok(dims)
    }

    const fn cg(&self) -> usize {
        self.c_in / self.groups
    }

    const fn ocg(&self) -> usize {
        self.c_out / self.groups
    }

    /// Whether im2col lowering is the identity (1×1 kernel, stride 1, no padding).
    pub(crate) const fn is_pointwise(&self) -> bool {
        self.kh == 1
            && self.kw == 1
            && self.stride_h == 1
            && self.stride_w == 1
            && self.pad_top == 0
            && self.pad_left == 0
            && self.pad_bottom == 0
            && self.pad_right == 0
    }
}

/// Sizes derived from a valid [`Conv2dShape`] (elements).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConvDims {
    /// Output height `(h + pad_top + pad_bottom − dilation_h·(kh − 1) − 1) / stride_h + 1`.
    pub out_h: usize,
    /// Output width, likewise.
    pub out_w: usize,
    /// Padded input height `h + pad_top + pad_bottom`.
    pub padded_h: usize,
    /// Input length `n·c_in·h·w`.
    pub input_len: usize,
    /// Weight length `c_out·(c_in/groups)·kh·kw`.
    pub weight_len: usize,
    /// Output length `n·c_out·out_h·out_w`.
    pub output_len: usize,
    /// Inner GEMM dimension `(c_in/groups)·kh·kw`.
    pub k: usize,
}

/// How [`conv2d`] computes a convolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConvMethod {
    /// Direct nested loops; no working memory (depthwise 3×3 and, on AVX-512, stride-2 to
    /// stride-4 layers of at most 4 input channels and pointwise layers on small maps or with
    /// few weights by their own kernels).
    Direct,
    /// im2col lowering and one GEMM per group and image. On AVX-512, stride-2 kernels larger
    /// than 1×1 lower to the input's phase images (about the input's size, within this
    /// method's workspace) and multiply them by the weights in place, summing in
    /// `(ic, ky, kx)` order like [`ConvMethod::Blocked`] (the same bits); strided unpadded
    /// 1×1 kernels with at least 16 output channels per group on maps of at most 256 pixels
    /// (or with at most 8192 weights per group) multiply their lowered, subsampled input by the
    /// small-map pointwise kernel of [`ConvMethod::Direct`] instead of a GEMM.
    Im2col,
    /// MEC (Cho & Brand 2017): column strips lowered once, one GEMM per output row.
    Mec,
    /// MFCA (seed 004): `m` column blocks lowered and multiplied one at a time
    /// (`1 ≤ m ≤ out_w`; [`mfca_best_m`] gives the paper's choice).
    Mfca {
        /// Number of column blocks.
        m: usize,
    },
    /// Winograd F(2×2, 3×3) (Lavin & Gray 2016): only for 3×3 kernels with stride 1 and
    /// dilation 1 (any padding, batch and groups); other shapes are [`Error::InvalidArgument`].
    /// Weights are transformed on every call ([`conv2d_winograd_prepared`] takes them
    /// transformed once, [`winograd_prepare_weights`]); results differ from direct summation by a few
    /// more ulps than the other methods: their error scales with the transformed operands' sizes
    /// (a 4×4 input patch and a whole kernel per element), not with each `x·w`.
    Winograd,
    /// Direct convolution on output channels blocked by 16 (any geometry): weights re-laid out
    /// on every call into the workspace, one pass of up to 64 output channels at a time
    /// ([`conv2d_blocked_prepared`] takes them all re-laid out once,
    /// [`blocked_prepare_weights`]), the input zero-padded into it when the shape has padding.
    /// Taps are summed in `(ic, ky, kx)` order like [`ConvMethod::Direct`], with fused
    /// multiply-adds on AVX-512.
    Blocked,
}

fn add(a: usize, b: usize) -> Result<usize> {
    a.checked_add(b).ok_or(Error::Overflow)
}

/// Width of MFCA's widest column block, `⌈out_w / m⌉`, checking `1 ≤ m ≤ out_w`.
fn mfca_block_w(d: &ConvDims, m: usize) -> Result<usize> {
    if m == 0 || m > d.out_w {
        return Err(Error::InvalidArgument);
    }
    Ok(d.out_w.div_ceil(m))
}

/// Working memory (`f32` elements) that [`conv2d`] needs for `method` on `shape`:
/// * Direct: 0;
/// * Im2col: the lowered matrix `K·Oh·Ow` (0 for pointwise kernels), plus GEMM packing;
/// * Mec: the lowered matrix `Ow·Hp·Kw·C/g`, the weights reordered (`K·c_out/g`), GEMM packing;
/// * Mfca{m}: one block's lowered matrix `K·Oh·⌈Ow/m⌉`, its `c_out/g × Oh·⌈Ow/m⌉` result, GEMM
///   packing;
/// * Winograd: with `T = n·⌈Oh/2⌉·⌈Ow/2⌉` tiles, `C = c_in/g`, `O = c_out/g`, the transformed
///   weights `16·O·C`, input `16·C·T` and products `16·O·T`, GEMM packing of `O × T × C`;
/// * Blocked: the weights of one pass of up to 64 output channels, re-laid out,
///   `min(⌈(c_out/g)/16⌉, 4)·16·K`, and, with padding, one zero-padded group of input
///   channels `C/g·Hp·Wp` ([`blocked_workspace_len`]);
///
/// with `K = C/g·Kh·Kw`, `Hp` the padded height and packing [`gemm_pack_len`] of the largest
/// GEMM. The workspace is reused across images and groups.
///
/// # Errors
/// Those of [`Conv2dShape::dims`]; [`Error::InvalidArgument`] for an MFCA `m` outside
/// `1..=out_w` or Winograd on a shape that is not 3×3, stride 1, dilation 1;
/// [`Error::Overflow`] if the length overflows.
pub fn workspace_len(method: ConvMethod, shape: &Conv2dShape) -> Result<usize> {
    let d = shape.dims()?;
    let (oh, ow, k, ocg) = (d.out_h, d.out_w, d.k, shape.ocg());
    let len = match method {
        ConvMethod::Direct => 0,
        ConvMethod::Im2col => {
            let ohw = checked_product(&[oh, ow])?;
            let lowered = if shape.is_pointwise() {
                0
            } else {
                checked_product(&[k, ohw])?
            };
            add(lowered, gemm_pack_len(ocg, ohw, k))?
        }
        ConvMethod::Mec => {
            let lowered = lowered_len(ConvMethod::Mec, shape)?;
            let kg = if shape.dilation_h == 1 {
                k
            } else {
                shape.kw * shape.cg()
            };
            add(
                add(lowered, checked_product(&[k, ocg])?)?,
                gemm_pack_len(ow, ocg, kg),
            )?
        }
        ConvMethod::Mfca { m } => {
            let cols = checked_product(&[oh, mfca_block_w(&d, m)?])?;
            let lowered = checked_product(&[k, cols])?;
            let result = checked_product(&[ocg, cols])?;
            add(add(lowered, result)?, gemm_pack_len(ocg, cols, k))?
        }
        ConvMethod::Winograd => winograd::workspace_len(shape, &d)?,
        ConvMethod::Blocked => add(blocked_pass_len(shape)?, blocked_workspace_len(shape)?)?,
    };
    checked_bytes(len)?;
    Ok(len)
}

/// Elements of the lowered input matrix alone (what seed 004's memory formulas count, less the
/// kernel's `Kh·Kw`), per image and group:
/// * Direct: 0; Im2col: `K·Oh·Ow` (also for pointwise kernels);
/// * Mec: `Ow·Hp·Kw·C/g` (one `Hp × Kw` strip per output column);
/// * Mfca{m}: `K·Oh·⌈Ow/m⌉` (one block at a time);
/// * Winograd: the transformed input, `16·C/g·n·⌈Oh/2⌉·⌈Ow/2⌉` (for the whole batch);
/// * Blocked: nothing is lowered; the zero-padded input copy `C/g·Hp·Wp` (0 without padding).
///
/// # Errors
/// As [`workspace_len`].
pub fn lowered_len(method: ConvMethod, shape: &Conv2dShape) -> Result<usize> {
    let d = shape.dims()?;
    match method {
        ConvMethod::Direct => Ok(0),
        ConvMethod::Im2col => checked_product(&[d.k, d.out_h, d.out_w]),
        ConvMethod::Mec => checked_product(&[d.out_w, d.padded_h, shape.kw, shape.cg()]),
        ConvMethod::Mfca { m } => checked_product(&[d.k, d.out_h, mfca_block_w(&d, m)?]),
        ConvMethod::Winograd => {
            winograd::workspace_len(shape, &d)?;
            checked_product(&[
                16,
                shape.cg(),
                shape.n,
                d.out_h.div_ceil(2),
                d.out_w.div_ceil(2),
            ])
        }
        ConvMethod::Blocked => blocked_workspace_len(shape),
    }
}

/// Seed 004's memory model of MFCA with `m` blocks, in elements, for one channel:
/// `M(m) = (⌈Ow/m⌉ + Kw − 1)·Kh·(m·Oh + Ow)`. The paper writes `Ow/m`; where `m` does not divide
/// `Ow` the blocks cannot all be equal, and the widest, `⌈Ow/m⌉`, is what must be stored, so we
/// round up. This is the quantity the paper minimises to choose `m`; it is not the working
/// memory of our implementation ([`workspace_len`]), which lowers one block at a time.
///
/// # Errors
/// As [`workspace_len`] for `ConvMethod::Mfca { m }`.
pub fn mfca_model_len(shape: &Conv2dShape, m: usize) -> Result<usize> {
    let d = shape.dims()?;
    let bw = mfca_block_w(&d, m)?;
    let strip = add(bw, shape.kw - 1)?;
    let rows = add(checked_product(&[m, d.out_h])?, d.out_w)?;
    checked_product(&[strip, shape.kh, rows])
}

/// The paper's choice of `m` for MFCA: the real minimiser of `(Ow/m + Kw − 1)·Kh·(m·Oh + Ow)`,
/// `m* = √(Ow² / ((Kw − 1)·Oh))`, rounded to whichever integer neighbour gives the smaller
/// [`mfca_model_len`] (the smaller `m` on a tie), clamped to `1..=Ow`. For `Kw = 1` the model
/// decreases in `m` and the answer is `Ow`.
///
/// # Errors
/// Those of [`Conv2dShape::dims`].
pub fn mfca_best_m(shape: &Conv2dShape) -> Result<usize> {
    let d = shape.dims()?;
    let ow = d.out_w;
    if shape.kw == 1 {
        return Ok(ow);
    }
    let ratio = (ow as f64) * (ow as f64) / (((shape.kw - 1) as f64) * (d.out_h as f64));
    let m_star = libm::sqrt(ratio);
    let lo = (libm::floor(m_star) as usize).clamp(1, ow);
    let hi = (libm::ceil(m_star) as usize).clamp(1, ow);
    if lo == hi {
        return Ok(lo);
    }
    let (a, b) = (mfca_model_len(shape, lo)?, mfca_model_len(shape, hi)?);
    Ok(if b < a { hi } else { lo })
}

/// Output channels per group up to which [`choose_method`] prefers [`ConvMethod::Direct`]: the
/// GEMM methods then multiply a matrix with at most this many rows, which fills a fraction of the
/// `MR`-row register tile, and lowering costs more than it saves. Measured (BENCHMARKS.md,
/// "Convolution methods"): at `c_out/g = 1` (seed 004's nine shapes) direct is 3–8× faster than
/// the fastest GEMM method; at `c_out/g ≥ 64` (FastPoorNet) it is 3–7× slower. The cut at 4 lies
/// between the two measured regimes and is not itself measured.
pub const DIRECT_MAX_COUT_PER_GROUP: usize = 4;

/// Input and output channels per group from which [`choose_method`] prefers
/// [`ConvMethod::Winograd`] on 3×3, stride-1, undilated kernels. Measured single-threaded on
/// an AMD Zen 5 (AVX-512; `gemm-crate` build; `bench/conv_compare.py --samples 5 --min-ms 100`,
/// best of 2–3 rounds on a shared, noisy machine), Winograd / im2col in ms: FastPoorNet
/// 64×25²→192 0.676 / 0.859, 192×12²→96 0.275 / 0.341, 96×12²→160 0.219 / 0.250,
/// 160×12²→144 0.393 / 0.383 (0.325 / 0.427 in an earlier run), 144×12²→160 0.308 / 0.379,
/// 160×12²→256 0.489 / 0.621; AlexNet 192×13²→384 1.157 / 1.163, 384×13²→256 1.599 / 1.650,
/// 256×13²→256 1.021 / 1.086. All measured layers have 64–384 channels; on single-channel
/// maps (seed 004's 3×3 shapes, 56² to 514²) Winograd is 9–24× slower, its transforms not
/// amortised by a GEMM. Between 1 and 64 channels nothing was measured, so the cut is the
/// smallest measured count rather than a crossover.
pub const WINOGRAD_MIN_CHANNELS_PER_GROUP: usize = 64;

/// [`WINOGRAD_MIN_CHANNELS_PER_GROUP`] where the CPU runs AVX-512 (x86-64-v4 active), whose
/// weight and output transforms are gathers and scatters there (branch `nn-sqz`): Winograd then
/// beats the other methods on SqueezeNet's 32- and 48-channel layers in the network (ms, min
/// over 4 alternating rounds, AMD Zen 5): 32×27²→128 0.247–0.265 against the blocked method's
/// 0.282–0.301, 48×13²→192 0.148 against im2col's 0.174–0.181. Alone its 16×55²→64 layer was
/// slower (0.37–0.45 against blocked 0.29) until such layers ran in strips of tiles (16 to 31 channels,
/// `winograd::fused`); between 16 and 32 channels only 16 was measured.
pub const WINOGRAD_MIN_CHANNELS_PER_GROUP_AVX512: usize = 32;

/// Output pixels per channel from which [`choose_method`] prefers [`ConvMethod::Winograd`]
/// where the CPU does not run AVX-512 (its transforms and GEMMs then run portable or at
/// x86-64-v3). In ResNet-18 on an AMD Zen 3 (AVX2, in the network, 3 alternating rounds, min
/// of each node's median), Winograd against im2col in ms: 512 × 7² (49 pixels) 4.66–5.09
/// against 3.71–3.76, i.e. slower, each of the 16 small GEMMs (N = 16 tiles) streaming its
/// 512 × 512 transformed weights for little work; but 256 × 14² 2.15–2.31 against 3.07–3.14,
/// and 13² maps with 192–384 channels (SqueezeNet, AlexNet) as fast or faster. The cut lies
/// between the 49- and 169-pixel maps measured. At x86-64-v4 the rule is not applied (not
/// measured there).
pub const WINOGRAD_MIN_OUT_PIXELS: usize = 100;

/// Output channels per group from which [`choose_method`] prefers [`ConvMethod::Blocked`]
/// (where it applies, see there): one full 16-channel block. Measured single-threaded on an AMD
/// Zen 5 (AVX-512, `gemm-crate` build, `bench/conv_compare.py --samples 5 --min-ms 100`, best
/// of 2 rounds, shared machine), blocked / im2col in ms: FastPoorNet's 3 → 64 11×11 stride 4
/// 0.639 / 0.936, AlexNet's 64 → 192 5×5 2.349 / 2.746 (2.016 on weights re-laid out once;
/// ONNX Runtime 2.384). Only these two layers (64 and 192 channels) were measured outside
/// 3×3, so the cut is one block, below which most of the 64-channel register tile is zeros.
pub const BLOCKED_MIN_COUT_PER_GROUP: usize = 16;

/// The fastest method whose [`workspace_len`] fits `budget_bytes` (bytes of `f32` workspace).
///
/// When `c_out/groups ≤` [`DIRECT_MAX_COUT_PER_GROUP`] (single-channel filters, depthwise
/// layers) that is [`ConvMethod::Direct`], which also needs no workspace; so it is, where the
/// CPU runs AVX-512, for first layers (one group of at most 4 input channels, at most 196
/// taps and 10 240 weights, output channels a multiple of 16, the same stride of 2 to 4 both
/// ways, padding narrower than the kernel, output rows of at least 16 pixels), which an
/// AVX-512 kernel vectorised over output pixels runs (SqueezeNet's 3 → 64 3×3 / 2 layer:
/// 0.23–0.26 ms against the blocked method's 0.28–0.29, BENCHMARKS.md, branch `nn-mobile2`;
/// ResNet-18's 3 → 64 7×7 / 2 one with padding 3: 1.20–1.24 ms in the network against
/// 1.46–1.83, branch `nn-first`), and for pointwise kernels (1×1, stride 1, unpadded) with at least 16
/// output channels per group on maps of at most 256 pixels or with at most 8192 weights per
/// group, which an AVX-512 kernel runs without the GEMM's packing (faster than im2col on all
/// of MobileNetV2's 1×1 layers and all but two of SqueezeNet's, which were within noise;
/// BENCHMARKS.md, branch `nn-mobile3`). 3×3, stride-1,
/// undilated kernels with at least [`WINOGRAD_MIN_CHANNELS_PER_GROUP`] (where the CPU runs
/// AVX-512, [`WINOGRAD_MIN_CHANNELS_PER_GROUP_AVX512`]) input and output channels
/// per group (and, without AVX-512, outputs of at least [`WINOGRAD_MIN_OUT_PIXELS`] pixels),
/// or where the CPU runs AVX-512 with 16 to 31 input channels (up to 64 on outputs at least
/// 27 wide) and a multiple of 8 output channels per group, which it computes strip by strip
/// of tiles (SqueezeNet's 16 → 64 3×3 layers: 0.18–0.19 ms against the blocked method's
/// 0.24–0.26, BENCHMARKS.md, nineteenth session), try [`ConvMethod::Winograd`] first (up to 27 % faster than im2col on the nine
/// measured layers, within the noise on three of them, at 1.2–1.8× its workspace; the blocked
/// method was 0.9–1.4× Winograd's time on them, slower on six of nine). Other kernels, except
/// other pointwise ones (im2col needs no lowering there, and was 1.04–5.5×
/// faster than the blocked method on MobileNetV2's and SqueezeNet's twelve 1×1 layers; blocked
/// on prepared weights won one, 0.045 vs 0.053 ms), with at least
/// [`BLOCKED_MIN_COUT_PER_GROUP`] output channels per group try [`ConvMethod::Blocked`] first
/// where the CPU runs its AVX-512 or AVX2 tile (elsewhere its portable tile spills and the
/// GEMM methods are kept): with AVX-512 15–32 % faster than im2col on the two measured layers,
/// at a quarter of its workspace or less; with AVX2 (Zen 3, prepared weights) 1.15–1.36×
/// faster than im2col on ResNet-18's 512 × 7² and stride-2 layers and AlexNet's 11 × 11 / 4 and
/// 5 × 5 layers, 1.25–1.52× faster than phase images on SqueezeNet's 3 × 3 layers of 16–48
/// channels (BENCHMARKS.md, fourteenth session); with AVX2
/// it takes no 1 × 1 layer but those with prepared weights on maps of at most
/// [`BLOCKED_AVX2_MAX_1X1_PIXELS`] pixels. Otherwise, and when neither fits, the methods are
/// tried in their measured order of speed on the FastPoorNet layers (single-threaded,
/// BENCHMARKS.md): im2col (fastest on 5 of 7), MFCA with [`mfca_best_m`] (3–41 % slower than
/// im2col on 5 of 7, faster on 2, at about half its workspace), MEC (33–79 % slower than im2col
/// on 6 of 7: its GEMMs have only `out_w` rows), then direct, which always fits.
///
/// With weights as stored (this function's case: [`conv2d`] re-lays the blocked method's weights
/// out on every call), the blocked method is taken only for outputs of at least
/// [`BLOCKED_MIN_OUT_PIXELS`] pixels per channel; a plan that keeps the layer's weights prepared
/// takes it at any size.
///
/// # Errors
/// Those of [`Conv2dShape::dims`].
pub fn choose_method(shape: &Conv2dShape, budget_bytes: usize) -> Result<ConvMethod> {
    choose_method_for(shape, budget_bytes, false)
}

/// Output pixels per channel from which [`choose_method`] takes [`ConvMethod::Blocked`] for
/// weights that are re-laid out on every call: that copy of the weights costs about what
/// `out_h · out_w` multiply-adds per weight do not amortise on small maps. ResNet-18 (whose
/// stride-2 layers have 784, 196 and 49 output pixels) ran 22.9 → 24.5 ms without a limit
/// (fifth session). With the weights re-laid out one pass at a time, its 1 × 1 / 2 layer on
/// 196 pixels ran 0.112 → 0.078 ms blocked instead of through im2col, and the one on 49
/// pixels 0.095 → 0.116 (BENCHMARKS.md, twenty-third session). Below it, stride-2 layers run
/// through im2col's phase images (`phases`), which read the weights in place: ResNet-18's
/// 256 → 512 3 × 3 / 2 layer on 49 pixels took 1.37–1.38 ms either way, its layers on 196 and
/// 784 pixels 1.18–1.23 → 1.12–1.14 and 1.10–1.13 → 1.10–1.11 ms blocked (twenty-fourth
/// session).
pub const BLOCKED_MIN_OUT_PIXELS: usize = 128;

/// Largest output map (pixels per channel) on which a 1 × 1 layer with prepared weights takes
/// [`ConvMethod::Blocked`] where the CPU runs its AVX2 tile (x86-64-v3): one band of its sums.
/// `nn_bench`, AMD Zen 3, min of 3 rounds against im2col's GEMM: MobileNetV2's 320 × 7² → 1280
/// 1.36× and 960 × 7² → 160 1.13×, ResNet-18's 256 × 14² → 512 × 7² / 2 1.16×; on 14² and
/// larger maps 0.67–1.05× (BENCHMARKS.md, fourteenth session).
pub const BLOCKED_AVX2_MAX_1X1_PIXELS: usize = 64;

/// [`choose_method`], for a layer whose weights are `prepared` (re-laid out once) or not.
pub(crate) fn choose_method_for(
    shape: &Conv2dShape,
    budget_bytes: usize,
    prepared: bool,
) -> Result<ConvMethod> {
    let d = shape.dims()?;
    if shape.ocg() <= DIRECT_MAX_COUT_PER_GROUP
        || few_channels::fast(shape, &d)
        || small_pointwise::fast(shape, &d)
    {
        return Ok(ConvMethod::Direct);
    }
    let m = mfca_best_m(shape)?;
    let min_channels = if blocked::fast() {
        WINOGRAD_MIN_CHANNELS_PER_GROUP_AVX512
    } else {
        WINOGRAD_MIN_CHANNELS_PER_GROUP
    };
    let wide = shape.cg().min(shape.ocg()) >= min_channels;
    let ohw = d.out_h.saturating_mul(d.out_w);
    let winograd = winograd::applies(shape)
        && ((wide && (blocked::fast() || ohw >= WINOGRAD_MIN_OUT_PIXELS))
            || winograd::fused_runs(shape, &d));
    let tile = if blocked::fast() {
        !shape.is_pointwise()
    } else {
        // AVX2: 1 × 1 layers only on maps of one band with prepared weights (elsewhere
        // im2col's GEMM, which needs no lowering there, was as fast or faster).
        blocked::tiled()
            && (shape.kh * shape.kw > 1 || (prepared && ohw <= BLOCKED_AVX2_MAX_1X1_PIXELS))
    };
    // Strided 1 × 1 layers whose subsampled input the small-map pointwise kernel takes run
    // through im2col (`small_pointwise::conv_strided`): in ResNet-18, copying the strided
    // pixels once and then streaming them beat the blocked tiles' broadcasts from 64–128
    // strided planes (weights as stored 0.164–0.177 → 0.131–0.142 ms on 784 and 196 output
    // pixels, prepared 0.154–0.166 before), and the GEMM on 49 (0.232 → 0.133–0.137;
    // BENCHMARKS.md, twenty-fourth session).
    let blocked = !winograd
        && tile
        && !small_pointwise::strided_fast(shape, &d)
        && shape.ocg() >= BLOCKED_MIN_COUT_PER_GROUP
        && (prepared || ohw >= BLOCKED_MIN_OUT_PIXELS);
    let first = if winograd {
        Some(ConvMethod::Winograd)
    } else {
        blocked.then_some(ConvMethod::Blocked)
    };
    let candidates = [ConvMethod::Im2col, ConvMethod::Mfca { m }, ConvMethod::Mec];
    for method in first.into_iter().chain(candidates) {
        if let Ok(len) = workspace_len(method, shape) {
            if len.saturating_mul(4) <= budget_bytes {
                return Ok(method);
            }
        }
    }
    Ok(ConvMethod::Direct)
}

/// Convolves `input` (`n × c_in × h × w`, packed NCHW) with `weights`
/// (`c_out × c_in/groups × kh × kw`) into `output` (`n × c_out × out_h × out_w`), adding
/// `bias[oc]` to every output of channel `oc` when given. `workspace` holds at least
/// [`workspace_len`]`(method, shape)` elements; its contents are meaningless before and after.
/// Results of different methods agree up to `f32` rounding (the summation orders differ).
///
/// # Errors
/// Those of [`workspace_len`]; [`Error::BufferTooSmall`] if `input`, `weights`, `output`,
/// `bias` (fewer than `c_out` values) or `workspace` is too short. Nothing is written on error.
#[allow(clippy::too_many_arguments)]
pub fn conv2d(
    method: ConvMethod,
    shape: &Conv2dShape,
    input: &[f32],
    weights: &[f32],
    bias: Option<&[f32]>,
    output: &mut [f32],
    workspace: &mut [f32],
) -> Result<()> {
    conv2d_clamped(
        method, shape, input, weights, bias, NO_CLAMP, output, workspace,
    )
    .map(|_| ())
}

/// [`conv2d`] that may also clamp its outputs to `clamp` (a ReLU, ReLU6 or Clip activation,
/// [`NO_CLAMP`] for none) while they are in registers: `Ok(true)` if it did (the direct
/// method's own kernels, pointwise im2col, the blocked method), `Ok(false)` if the caller
/// still has to apply the activation. Either way
/// the result equals [`conv2d`] followed by that activation, bit for bit.
#[allow(clippy::too_many_arguments)]
pub(crate) fn conv2d_clamped(
    method: ConvMethod,
    shape: &Conv2dShape,
    input: &[f32],
    weights: &[f32],
    bias: Option<&[f32]>,
    clamp: Clamp,
    output: &mut [f32],
    workspace: &mut [f32],
) -> Result<bool> {
    let d = shape.dims()?;
    let ws = workspace_len(method, shape)?;
    if input.len() < d.input_len
        || weights.len() < d.weight_len
        || output.len() < d.output_len
        || workspace.len() < ws
        || bias.is_some_and(|b| b.len() < shape.c_out)
    {
        return Err(Error::BufferTooSmall);
    }
    if method == ConvMethod::Winograd {
        // All images at once: their tiles share each GEMM.
        winograd::conv(shape, &d, input, weights, bias, output, workspace)?;
        return Ok(false);
    }
    if method == ConvMethod::Blocked {
        let (buf, pad) = workspace.split_at_mut(blocked_pass_len(shape)?);
        let w = blocked::Weights::Stored { w: weights, buf };
        blocked::conv(shape, &d, input, w, bias, clamp, output, pad);
        return Ok(true);
    }
    let s = shape;
    let ohw = d.out_h * d.out_w;
    if method == ConvMethod::Im2col
        && (small_pointwise::conv_strided(s, &d, input, weights, bias, clamp, output, workspace)
            || phases::conv(s, &d, input, weights, bias, clamp, output, workspace))
    {
        return Ok(true);
    }
    if method == ConvMethod::Im2col && s.is_pointwise() {
        pointwise(s, &d, input, weights, bias, clamp, output, workspace)?;
        return Ok(true);
    }
    if method == ConvMethod::Direct
        && (few_channels::conv(s, &d, input, weights, bias, clamp, output)
            || small_pointwise::conv(s, &d, input, weights, bias, clamp, output))
    {
        return Ok(true);
    }
    if method == ConvMethod::Direct && depthwise::applies(s) {
        // One plane per image and channel, bias and clamp fused.
        depthwise::conv(s, &d, input, weights, bias, clamp, output);
        return Ok(true);
    }
    let (cg, ocg) = (s.cg(), s.ocg());
    let in_g = cg * s.h * s.w;
    let out_g = ocg * ohw;
    let w_g = ocg * d.k;
    for b in 0..s.n {
        for g in 0..s.groups {
            let x = &input[(b * s.groups + g) * in_g..][..in_g];
            let wt = &weights[g * w_g..][..w_g];
            let y = &mut output[(b * s.groups + g) * out_g..][..out_g];
            match bias {
                Some(bias) => {
                    for (plane, &v) in y.chunks_exact_mut(ohw).zip(&bias[g * ocg..(g + 1) * ocg]) {
                        plane.fill(v);
                    }
                }
                None => y.fill(0.0),
            }
            match method {
                ConvMethod::Direct => direct(s, &d, x, wt, y),
                ConvMethod::Im2col => im2col_gemm(s, &d, x, wt, y, workspace)?,
                ConvMethod::Mec => mec(s, &d, x, wt, y, workspace)?,
                ConvMethod::Mfca { m } => mfca(s, &d, m, x, wt, y, workspace)?,
                ConvMethod::Winograd | ConvMethod::Blocked => {} // Computed above.
            }
        }
    }
    Ok(false)
}

/// Elements of the pre-transformed Winograd weights of `shape` ([`winograd_prepare_weights`]):
/// `16·c_in/groups·c_out`, 16/9 of the weights. A network that keeps them (its weights are
/// otherwise read in place) spends that much memory once to skip the weight transform that
/// [`ConvMethod::Winograd`] repeats on every call.
///
/// # Errors
/// Those of [`Conv2dShape::dims`]; [`Error::InvalidArgument`] if Winograd does not apply (not
/// 3×3, stride 1, dilation 1); [`Error::Overflow`] if the length overflows.
pub fn winograd_weights_len(shape: &Conv2dShape) -> Result<usize> {
    shape.dims()?;
    let len = winograd::prepared_len(shape)?;
    checked_bytes(len)?;
    Ok(len)
}

/// Working memory (`f32` elements) of [`conv2d_winograd_prepared`]: the transformed input and
/// products of [`workspace_len`]`(Winograd, shape)` without its weight planes, plus GEMM packing.
///
/// # Errors
/// As [`winograd_weights_len`].
pub fn winograd_prepared_workspace_len(shape: &Conv2dShape) -> Result<usize> {
    let d = shape.dims()?;
    let len = winograd::prepared_workspace_len(shape, &d)?;
    checked_bytes(len)?;
    Ok(len)
}

/// Transforms `weights` (`c_out × c_in/groups × 3 × 3`) once into `prepared`
/// ([`winograd_weights_len`] elements) for [`conv2d_winograd_prepared`].
///
/// # Errors
/// As [`winograd_weights_len`]; [`Error::BufferTooSmall`] if `weights` or `prepared` is too
/// short. Nothing is written on error.
pub fn winograd_prepare_weights(
    shape: &Conv2dShape,
    weights: &[f32],
    prepared: &mut [f32],
) -> Result<()> {
    let d = shape.dims()?;
    let len = winograd_weights_len(shape)?;
    if weights.len() < d.weight_len || prepared.len() < len {
        return Err(Error::BufferTooSmall);
    }
    winograd::prepare_weights(shape, weights, prepared);
    Ok(())
}

/// [`conv2d`] with [`ConvMethod::Winograd`] on weights already transformed by
/// [`winograd_prepare_weights`] (for the same `shape`): the same result, bit for bit, without
/// the per-call weight transform. `workspace` holds at least
/// [`winograd_prepared_workspace_len`] elements.
///
/// # Errors
/// As [`winograd_weights_len`]; [`Error::BufferTooSmall`] if `input`, `prepared`, `output`,
/// `bias` or `workspace` is too short. Nothing is written on error.
pub fn conv2d_winograd_prepared(
    shape: &Conv2dShape,
    input: &[f32],
    prepared: &[f32],
    bias: Option<&[f32]>,
    output: &mut [f32],
    workspace: &mut [f32],
) -> Result<()> {
    conv2d_winograd_prepared_clamped(shape, input, prepared, bias, NO_CLAMP, output, workspace)
        .map(|_| ())
}

/// [`conv2d_winograd_prepared`] that may also clamp its outputs to `clamp` (a ReLU, ReLU6 or
/// Clip activation) before they are stored: `Ok(true)` if it did (the strips for few input
/// channels), `Ok(false)` if the caller still has to apply the activation. Either way the
/// result equals [`conv2d_winograd_prepared`] followed by that activation, bit for bit.
pub(crate) fn conv2d_winograd_prepared_clamped(
    shape: &Conv2dShape,
    input: &[f32],
    prepared: &[f32],
    bias: Option<&[f32]>,
    clamp: Clamp,
    output: &mut [f32],
    workspace: &mut [f32],
) -> Result<bool> {
    let d = shape.dims()?;
    let lens = (
        winograd_weights_len(shape)?,
        winograd_prepared_workspace_len(shape)?,
    );
    check_prepared_buffers(shape, &d, lens, input, prepared, bias, output, workspace)?;
    winograd::conv_prepared(shape, &d, input, prepared, bias, clamp, output, workspace)
}

/// `Err(`[`Error::BufferTooSmall`]`)` unless `input`, `output` and `bias` (`c_out` values) fit
/// `shape` (dims `d`), `prepared` holds `lens.0` and `workspace` `lens.1` elements: the checks
/// of the prepared-weight convolutions.
#[allow(clippy::too_many_arguments)]
fn check_prepared_buffers(
    shape: &Conv2dShape,
    d: &ConvDims,
    (prepared_len, workspace_len): (usize, usize),
    input: &[f32],
    prepared: &[f32],
    bias: Option<&[f32]>,
    output: &[f32],
    workspace: &[f32],
) -> Result<()> {
    if input.len() < d.input_len
        || prepared.len() < prepared_len
        || output.len() < d.output_len
        || workspace.len() < workspace_len
        || bias.is_some_and(|b| b.len() < shape.c_out)
    {
        return Err(Error::BufferTooSmall);
    }
    Ok(())
}

/// Elements of the weights re-laid out for [`ConvMethod::Blocked`]
/// ([`blocked_prepare_weights`]): `groups·⌈(c_out/groups)/16⌉·16·K`, the weights' size when
/// `c_out/groups` is a multiple of 16 (zeros fill each group's last block otherwise).
///
/// # Errors
/// Those of [`Conv2dShape::dims`]; [`Error::Overflow`] if the length overflows.
pub fn blocked_weights_len(shape: &Conv2dShape) -> Result<usize> {
    let d = shape.dims()?;
    let len = checked_product(&blocked::weights_len(shape, &d))?;
    checked_bytes(len)?;
    Ok(len)
}

/// Elements of one pass's re-laid-out weights, which [`ConvMethod::Blocked`] keeps in its
/// workspace when its weights are not prepared.
fn blocked_pass_len(shape: &Conv2dShape) -> Result<usize> {
    let d = shape.dims()?;
    checked_product(&blocked::pass_len(shape, &d))
}

/// Working memory (`f32` elements) of [`conv2d_blocked_prepared`]: one zero-padded group of
/// input channels, `c_in/groups·(h + pad_top + pad_bottom)·(w + pad_left + pad_right)`, or 0
/// when the shape has no padding.
///
/// # Errors
/// As [`blocked_weights_len`].
pub fn blocked_workspace_len(shape: &Conv2dShape) -> Result<usize> {
    let d = shape.dims()?;
    let len = checked_product(&blocked::padded_len(shape, &d))?;
    checked_bytes(len)?;
    Ok(len)
}

/// Re-lays out `weights` (`c_out × c_in/groups × kh × kw`) once into `prepared`
/// ([`blocked_weights_len`] elements) for [`conv2d_blocked_prepared`].
///
/// # Errors
/// As [`blocked_weights_len`]; [`Error::BufferTooSmall`] if `weights` or `prepared` is too
/// short. Nothing is written on error.
pub fn blocked_prepare_weights(
    shape: &Conv2dShape,
    weights: &[f32],
    prepared: &mut [f32],
) -> Result<()> {
    let d = shape.dims()?;
    if weights.len() < d.weight_len || prepared.len() < blocked_weights_len(shape)? {
        return Err(Error::BufferTooSmall);
    }
    blocked::prepare_weights(shape, &d, weights, prepared);
    Ok(())
}

/// [`conv2d`] with [`ConvMethod::Blocked`] on weights already re-laid out by
/// [`blocked_prepare_weights`] (for the same `shape`): the same result, bit for bit, without
/// the per-call re-layout. `workspace` holds at least [`blocked_workspace_len`] elements (none
/// without padding).
///
/// # Errors
/// As [`blocked_weights_len`]; [`Error::BufferTooSmall`] if `input`, `prepared`, `output`,
/// `bias` or `workspace` is too short. Nothing is written on error.
pub fn conv2d_blocked_prepared(
    shape: &Conv2dShape,
    input: &[f32],
    prepared: &[f32],
    bias: Option<&[f32]>,
    output: &mut [f32],
    workspace: &mut [f32],
) -> Result<()> {
    conv2d_blocked_prepared_clamped(shape, input, prepared, bias, NO_CLAMP, output, workspace)
}

/// [`conv2d_blocked_prepared`] that also clamps its outputs to `clamp` before they are stored,
/// as [`conv2d_clamped`] does for the blocked method: the result equals
/// [`conv2d_blocked_prepared`] followed by that clamp, bit for bit.
pub(crate) fn conv2d_blocked_prepared_clamped(
    shape: &Conv2dShape,
    input: &[f32],
    prepared: &[f32],
    bias: Option<&[f32]>,
    clamp: Clamp,
    output: &mut [f32],
    workspace: &mut [f32],
) -> Result<()> {
    let d = shape.dims()?;
    let lens = (blocked_weights_len(shape)?, blocked_workspace_len(shape)?);
    check_prepared_buffers(shape, &d, lens, input, prepared, bias, output, workspace)?;
    let w = blocked::Weights::Prepared(prepared);
    blocked::conv(shape, &d, input, w, bias, clamp, output, workspace);
    Ok(())
}

/// Output columns `ox` whose input column `ox·stride + kx·dilation − pad` lies in `0..w`.
fn valid_range(out: usize, size: usize, pad: usize, stride: usize, off: usize) -> (usize, usize) {
    // ix = ox·stride + off − pad ≥ 0  ⇔  ox ≥ ⌈(pad − off) / stride⌉
    let lo = if pad > off {
        (pad - off).div_ceil(stride)
    } else {
        0
    };
    // ix ≤ size − 1  ⇔  ox ≤ (size − 1 + pad − off) / stride
    let hi = match (size - 1 + pad).checked_sub(off) {
        Some(x) => (x / stride + 1).min(out),
        None => 0,
    };
    (lo.min(hi), hi)
}

/// Direct convolution of one image and group, accumulating into `y` (already holding the bias).
fn direct(s: &Conv2dShape, d: &ConvDims, x: &[f32], wt: &[f32], y: &mut [f32]) {
    let (oh, ow, hw) = (d.out_h, d.out_w, s.h * s.w);
    for (oc, plane) in y.chunks_exact_mut(oh * ow).enumerate() {
        for ic in 0..s.cg() {
            let xc = &x[ic * hw..][..hw];
            for ky in 0..s.kh {
                let (oy0, oy1) = valid_range(oh, s.h, s.pad_top, s.stride_h, ky * s.dilation_h);
                for kx in 0..s.kw {
                    let wv = wt[((oc * s.cg() + ic) * s.kh + ky) * s.kw + kx];
                    let off = kx * s.dilation_w;
                    let (ox0, ox1) = valid_range(ow, s.w, s.pad_left, s.stride_w, off);
                    for oy in oy0..oy1 {
                        let iy = oy * s.stride_h + ky * s.dilation_h - s.pad_top;
                        let row = &xc[iy * s.w..][..s.w];
                        let out = &mut plane[oy * ow..][..ow];
                        if s.stride_w == 1 {
                            let ix0 = ox0 + off - s.pad_left;
                            for (o, &v) in out[ox0..ox1].iter_mut().zip(&row[ix0..]) {
                                *o += wv * v;
                            }
                        } else {
                            for (ox, o) in out.iter_mut().enumerate().take(ox1).skip(ox0) {
                                *o += wv * row[ox * s.stride_w + off - s.pad_left];
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Writes the im2col matrix of output columns `x0..x0 + bw` into `col`
/// (`K × Oh·bw`, row `(ic·Kh + ky)·Kw + kx`, column `oy·bw + ox − x0`).
///
/// With a horizontal stride `sw > 1` (and no dilation), row `kx ≥ sw` is row `kx − sw` shifted
/// left by one output column (both read input column `ox·sw + kx − pad`), so it is copied from
/// there and only its last column is read from the input: strided reads (scalar) are 34 % of
/// an 11×11 stride-4 convolution (perf), copies vectorise.
fn lower_im2col(s: &Conv2dShape, d: &ConvDims, x: &[f32], x0: usize, bw: usize, col: &mut [f32]) {
    let (oh, hw, sw) = (d.out_h, s.h * s.w, s.stride_w);
    let plane = oh * bw;
    let shift = sw > 1 && s.dilation_w == 1;
    let mut r = 0;
    for ic in 0..s.cg() {
        let xc = &x[ic * hw..][..hw];
        for ky in 0..s.kh {
            let (oy0, oy1) = valid_range(oh, s.h, s.pad_top, s.stride_h, ky * s.dilation_h);
            for kx in 0..s.kw {
                let Some((done, rest)) = col.split_at_mut_checked(r * plane) else {
                    return;
                };
                let Some(rp) = rest.get_mut(..plane) else {
                    return;
                };
                // The row `sw` before, when this one is its shifted copy.
                let prev = (shift && kx >= sw).then(|| &done[(r - sw) * plane..][..plane]);
                r += 1;
                let off = kx * s.dilation_w;
                let (ox0, ox1) = valid_range(d.out_w, s.w, s.pad_left, sw, off);
                let (ox0, ox1) = (ox0.clamp(x0, x0 + bw), ox1.clamp(x0, x0 + bw));
                for (oy, out) in rp.chunks_exact_mut(bw).enumerate() {
                    if oy < oy0 || oy >= oy1 || ox0 >= ox1 {
                        out.fill(0.0);
                        continue;
                    }
                    let iy = oy * s.stride_h + ky * s.dilation_h - s.pad_top;
                    let row = &xc[iy * s.w..][..s.w];
                    out[..ox0 - x0].fill(0.0);
                    out[ox1 - x0..].fill(0.0);
                    let mut from = ox0;
                    if let Some(prev) = prev {
                        // Columns whose right neighbour is inside this block.
                        let end = ox1.min(x0 + bw - 1).max(ox0);
                        let src = &prev[oy * bw + ox0 - x0 + 1..][..end - ox0];
                        out[ox0 - x0..end - x0].copy_from_slice(src);
                        from = end;
                    }
                    if from == ox1 {
                        continue;
                    }
                    let dst = &mut out[from - x0..ox1 - x0];
                    let src = &row[from * sw + off - s.pad_left..];
                    match sw {
                        1 => dst.copy_from_slice(&src[..dst.len()]),
                        2 => gather_every::<2>(dst, src),
                        4 => gather_every::<4>(dst, src),
                        _ => {
                            for (o, &v) in dst.iter_mut().zip(src.iter().step_by(sw)) {
                                *o = v;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `dst[i] = src[i·S]` (`src` holds at least `(dst.len() − 1)·S + 1` values): whole groups of
/// `S` as fixed-size arrays, which LLVM turns into vector loads and shuffles, then the last
/// value, whose group may be cut short.
#[inline(always)]
fn gather_every<const S: usize>(dst: &mut [f32], src: &[f32]) {
    let Some((last, head)) = dst.split_last_mut() else {
        return;
    };
    for (o, g) in head.iter_mut().zip(src.chunks_exact(S)) {
        *o = g[0];
    }
    *last = src[head.len() * S];
}

/// Im2col of a pointwise (1×1, stride 1, unpadded) convolution, whose input already is the
/// `K × Oh·Ow` matrix: per image and group one GEMM with β = 0, then the bias and clamp in one
/// pass ([`depthwise::add_clamp`], none without either). Filling the output with the bias, a
/// β = 1 GEMM and a separate activation pass moved the output through memory three times
/// (MobileNetV2's 16 → 96 layer on 112² maps: 0.46 → 0.30 ms in the network, ONNX Runtime
/// 0.28 ms). GEMMs over blocks of 256 KiB of output, each block's bias and clamp applied while
/// in cache, measured the same within noise on the whole network and split the 7 × 7 layers
/// into a 48-column and a 1-column GEMM, so the output is computed whole.
#[allow(clippy::too_many_arguments)]
fn pointwise(
    s: &Conv2dShape,
    d: &ConvDims,
    input: &[f32],
    weights: &[f32],
    bias: Option<&[f32]>,
    clamp: Clamp,
    output: &mut [f32],
    pack: &mut [f32],
) -> Result<()> {
    let (k, ocg) = (d.k, s.ocg());
    let ohw = d.out_h * d.out_w;
    let (in_g, out_g) = (k * ohw, ocg * ohw);
    let (no, rm) = (Transpose::No, Order::RowMajor);
    for b in 0..s.n {
        for g in 0..s.groups {
            let x = &input[(b * s.groups + g) * in_g..][..in_g];
            let wt = &weights[g * ocg * k..][..ocg * k];
            let y = &mut output[(b * s.groups + g) * out_g..][..out_g];
            let bias_g = bias.map(|v| &v[g * ocg..][..ocg]);
            sgemm(
                rm, no, no, ocg, ohw, k, 1.0, wt, k, x, ohw, 0.0, y, ohw, pack,
            )?;
            if bias.is_none() && clamp == NO_CLAMP {
                continue;
            }
            for (oc, plane) in y.chunks_exact_mut(ohw).enumerate() {
                depthwise::add_clamp(plane, Some(bias_g.map_or(0.0, |v| v[oc])), clamp);
            }
        }
    }
    Ok(())
}

fn im2col_gemm(
    s: &Conv2dShape,
    d: &ConvDims,
    x: &[f32],
    wt: &[f32],
    y: &mut [f32],
    ws: &mut [f32],
) -> Result<()> {
    let ohw = d.out_h * d.out_w;
    let (col, pack): (&[f32], &mut [f32]) = if s.is_pointwise() {
        (x, ws)
    } else {
        let (col, pack) = ws.split_at_mut(d.k * ohw);
        lower_im2col(s, d, x, 0, d.out_w, col);
        (col, pack)
    };
    let (n, k) = (ohw, d.k);
    let (no, rm) = (Transpose::No, Order::RowMajor);
    sgemm(
        rm,
        no,
        no,
        s.ocg(),
        n,
        k,
        1.0,
        wt,
        k,
        col,
        n,
        1.0,
        y,
        n,
        pack,
    )
}

fn mfca(
    s: &Conv2dShape,
    d: &ConvDims,
    m: usize,
    x: &[f32],
    wt: &[f32],
    y: &mut [f32],
    ws: &mut [f32],
) -> Result<()> {
    let (oh, ow, k, ocg) = (d.out_h, d.out_w, d.k, s.ocg());
    let wb = ow.div_ceil(m);
    let (col, rest) = ws.split_at_mut(k * oh * wb);
    let (res, pack) = rest.split_at_mut(ocg * oh * wb);
    let (no, rm) = (Transpose::No, Order::RowMajor);
    for x0 in (0..ow).step_by(wb) {
        let bw = wb.min(ow - x0);
        let n = oh * bw;
        lower_im2col(s, d, x, x0, bw, &mut col[..k * n]);
        sgemm(rm, no, no, ocg, n, k, 1.0, wt, k, col, n, 0.0, res, n, pack)?;
        // Concatenate: add the block's rows into the output (which holds the bias).
        for (plane, r) in y.chunks_exact_mut(oh * ow).zip(res.chunks_exact(n)) {
            for (out_row, r_row) in plane.chunks_exact_mut(ow).zip(r.chunks_exact(bw)) {
                for (o, &v) in out_row[x0..x0 + bw].iter_mut().zip(r_row) {
                    *o += v;
                }
            }
        }
    }
    Ok(())
}

fn mec(
    s: &Conv2dShape,
    d: &ConvDims,
    x: &[f32],
    wt: &[f32],
    y: &mut [f32],
    ws: &mut [f32],
) -> Result<()> {
    let (oh, ow, k, cg, ocg) = (d.out_h, d.out_w, d.k, s.cg(), s.ocg());
    let (hp, kw, hw) = (d.padded_h, s.kw, s.h * s.w);
    let ld = hp * kw * cg;
    let (l, rest) = ws.split_at_mut(ow * ld);
    let (wr, pack) = rest.split_at_mut(k * ocg);
    // L[ox][(iy·Kw + kx)·Cg + ic] = padded input (ic, iy, ox·sw + kx·dw).
    for (ox, lrow) in l.chunks_exact_mut(ld).enumerate() {
        for (iy, strip) in lrow.chunks_exact_mut(kw * cg).enumerate() {
            let y_in = iy.checked_sub(s.pad_top).filter(|&v| v < s.h);
            for kx in 0..kw {
                let ix = (ox * s.stride_w + kx * s.dilation_w)
                    .checked_sub(s.pad_left)
                    .filter(|&v| v < s.w);
                for ic in 0..cg {
                    strip[kx * cg + ic] = match (y_in, ix) {
                        (Some(yy), Some(xx)) => x[ic * hw + yy * s.w + xx],
                        _ => 0.0,
                    };
                }
            }
        }
    }
    // W'[(ky·Kw + kx)·Cg + ic][oc] = W[oc][ic][ky][kx].
    for oc in 0..ocg {
        for ic in 0..cg {
            for ky in 0..s.kh {
                for kx in 0..kw {
                    wr[((ky * kw + kx) * cg + ic) * ocg + oc] =
                        wt[((oc * cg + ic) * s.kh + ky) * kw + kx];
                }
            }
        }
    }
    // Output row oy as a column-major Ow × Cout/g matrix (element (ox, oc) at oc·Oh·Ow + ox),
    // from the Ow × K window of L starting at row oy·sh (transposed view of the row-major L).
    let ohw = oh * ow;
    let (yes, cm) = (Transpose::Yes, Order::ColMajor);
    let strip = kw * cg;
    for oy in 0..oh {
        let c = &mut y[oy * ow..];
        if s.dilation_h == 1 {
            let a = &l[oy * s.stride_h * strip..];
            sgemm(
                cm, yes, yes, ow, ocg, k, 1.0, a, ld, wr, ocg, 1.0, c, ohw, pack,
            )?;
        } else {
            for ky in 0..s.kh {
                let a = &l[(oy * s.stride_h + ky * s.dilation_h) * strip..];
                let b = &wr[ky * strip * ocg..];
                sgemm(
                    cm, yes, yes, ow, ocg, strip, 1.0, a, ld, b, ocg, 1.0, c, ohw, pack,
                )?;
            }
        }
    }
    Ok(())
}
