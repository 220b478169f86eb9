//! KCF, the kernelised correlation filter tracker (Henriques et al., "High-speed tracking with
//! kernelized correlation filters", TPAMI 2015), as specified for KCFDP in SEEDS.md 003:
//! Gaussian-kernel correlation in the Fourier domain over FHOG (31 channels, cell 4,
//! 9 orientations) and mean-subtracted gray features, Hann window, padding 1.5, label
//! σ = 0.06·√(wh)/cell, λ = 1e-4 and the robust numerator/denominator model update with η = 0.01.
//! Unlike OpenCV's KCF it trains at init, takes gray and colour frames ([`Frame`]), reports a
//! confidence (peak and PSR), and reports the target lost and re-finds it.
//!
//! * [`fft`]: 2-D complex FFTs over power-of-two sizes 4–64 (`microfft`), in place. Measured
//!   against `rustfft` 6 (std, SIMD; rows batched, columns by transposition) on the
//!   development machine: 16 × 16 1.26 µs vs 0.53 µs, 32 × 32 5.8 vs 2.7 µs. On the default
//!   16² grid the tracker's ~37 transforms an update are ~45 µs of ~300 µs, so `rustfft` would
//!   save under a tenth; `microfft` alone keeps one no_std code path with the same results on
//!   every target.
//! * [`features`]: FHOG and gray features of a resampled patch.
//! * [`tracker`]: the tracker object, [`Kcf`].
//! * [`dp`]: KCFDP, KCF with EdgeBoxes proposals for scale and aspect ratio, [`KcfDp`].
//!
//! Colour names (van de Weijer et al.'s 11-colour `w2c` lookup table, the thesis' 42-channel
//! variant) are not included: the table (32 768 × 11 values) is distributed with the authors'
//! MATLAB code without a stated licence, and no crate on crates.io carries it; it is not
//! available offline here. [`KcfFeatures`] has room for a variant once a licensed copy exists.

pub mod dp;
pub mod features;
pub mod fft;
pub mod tracker;

pub use dp::{KcfDp, KcfDpParams};
pub use features::{Frame, KcfFeatures};
pub use tracker::{workspace_len, Kcf, KcfDetection, KcfOutput, KcfParams};
