//! CPU building blocks of CNN inference: NCHW shapes and views ([`tensor`]), matrix
//! multiplication ([`gemm`]), 2-D convolution by four methods with their working-memory
//! formulas and a method selector ([`conv`]), and the layer operators of issue 4:
//! activations and fused convolution ([`activation`]), pooling ([`pool`]). Like the rest of the
//! core, nothing here allocates (except inside the optional `gemm` crate, see [`gemm`]): working
//! memory is the caller's, sized by the `*_len` functions.

pub mod activation;
pub mod conv;
pub mod gemm;
pub mod pool;
pub mod tensor;
