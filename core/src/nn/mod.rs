//! CPU building blocks of CNN inference: NCHW shapes and views ([`tensor`]), matrix
//! multiplication ([`gemm`]), 2-D convolution by six methods with their working-memory
//! formulas and a method selector ([`conv`]), and the layer operators of issue 4:
//! activations and fused convolution ([`activation`]), pooling ([`pool`]), fully connected
//! layers ([`dense`]; one feature vector as a matrix-vector product that streams the weights
//! once), the product of two tensors ([`matmul`]), softmax and reduce-mean
//! ([`reduce`]), addition, subtraction and multiplication with broadcasting ([`elementwise`]),
//! concat / flatten / pad ([`layout`]) and batch normalisation, standalone or
//! folded into a convolution ([`batchnorm`]). A whole network is data ([`graph`]: flat
//! `#[repr(C)]` tensors and nodes, weights by range, validated up front) run by a plan
//! ([`plan`]) that places every activation in one caller arena by liveness, and is stored as a
//! `.mvnn` file that is read in place, without copying ([`model`]). All take packed NCHW `f32`
//! tensors with any batch size. Like the rest of the core, nothing here allocates (except inside
//! the optional `gemm` crate, see [`gemm`]): working memory is the caller's, sized by the
//! `*_len` functions.

/// The entry points of a direct AVX-512 convolution module (`few_channels`, `small_pointwise`):
/// `fast(s, d)`, whether the module's `applies(s, d)` holds and x86-64-v4 is active, and
/// `conv(s, d, input, weights, bias, clamp, output)`, which runs the module's `avx512::conv`
/// and returns `true` where `fast`, and returns `false` having written nothing elsewhere (the
/// caller has checked every length). Expanded inside the module, which defines `applies` and,
/// on x86, `avx512::conv`.
macro_rules! direct_avx512_entry {
    () => {
        /// Whether [`conv`] runs `s` on this CPU: [`applies`] and x86-64-v4 active.
        pub(crate) fn fast(s: &Conv2dShape, d: &ConvDims) -> bool {
            applies(s, d) && super::blocked::fast()
        }

        /// Convolves `input` with `weights` into `output`, adding `bias` and clamping to
        /// `clamp`, and returns `true`, where [`fast`]; returns `false` and writes nothing
        /// otherwise. The caller has checked every length.
        #[allow(clippy::too_many_arguments)]
        pub(crate) fn conv(
            s: &Conv2dShape,
            d: &ConvDims,
            input: &[f32],
            weights: &[f32],
            bias: Option<&[f32]>,
            clamp: Clamp,
            output: &mut [f32],
        ) -> bool {
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            if fast(s, d) {
                // SAFETY: x86-64-v4 is active (AVX-512 F/BW/DQ/VL, AVX2 and FMA supported,
                // `cpu::detect`).
                #[allow(unsafe_code)]
                unsafe {
                    avx512::conv(s, d, input, weights, bias, clamp, output)
                };
                return true;
            }
            let _ = (s, d, input, weights, bias, clamp, output);
            false
        }
    };
}

pub mod activation;
pub mod batchnorm;
mod blocked;
pub mod conv;
pub mod dense;
mod depthwise;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod depthwise_channels;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod depthwise_phases;
pub mod elementwise;
mod few_channels;
pub mod gemm;
mod gemv;
pub mod graph;
pub mod layout;
pub mod matmul;
pub mod model;
// Its kernels are x86 only; elsewhere `phases::conv` declines every shape, and the selector
// no longer asks it, so its geometry is unused there.
#[cfg_attr(
    not(any(target_arch = "x86", target_arch = "x86_64")),
    allow(dead_code)
)]
mod phases;
pub mod plan;
pub mod pool;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod pool_channels;
pub mod reduce;
mod small_pointwise;
pub mod tensor;
mod winograd;
