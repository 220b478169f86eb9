//! CPU building blocks of CNN inference: NCHW shapes and views ([`tensor`]), matrix
//! multiplication ([`gemm`]), 2-D convolution by six methods with their working-memory
//! formulas and a method selector ([`conv`]), and the layer operators of issue 4:
//! activations and fused convolution ([`activation`]), pooling ([`pool`]), fully connected
//! layers ([`dense`]), the product of two tensors ([`matmul`]), softmax and reduce-mean
//! ([`reduce`]), addition, subtraction and multiplication with broadcasting ([`elementwise`]),
//! concat / flatten / pad ([`layout`]) and batch normalisation, standalone or
//! folded into a convolution ([`batchnorm`]). A whole network is data ([`graph`]: flat
//! `#[repr(C)]` tensors and nodes, weights by range, validated up front) run by a plan
//! ([`plan`]) that places every activation in one caller arena by liveness, and is stored as a
//! `.mvnn` file that is read in place, without copying ([`model`]). All take packed NCHW `f32`
//! tensors with any batch size. Like the rest of the core, nothing here allocates (except inside
//! the optional `gemm` crate, see [`gemm`]): working memory is the caller's, sized by the
//! `*_len` functions.

pub mod activation;
pub mod batchnorm;
mod blocked;
pub mod conv;
pub mod dense;
mod depthwise;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod depthwise_phases;
pub mod elementwise;
mod few_channels;
pub mod gemm;
pub mod graph;
pub mod layout;
pub mod matmul;
pub mod model;
pub mod plan;
pub mod pool;
pub mod reduce;
mod small_pointwise;
pub mod tensor;
mod winograd;
