//! Deterministic random numbers: SplitMix64 (Steele, Lea & Flood 2014), whose sequence depends
//! only on the seed and is the same on every platform. The TLD tracker draws everything random
//! from it (pixel pairs, warps, shuffles, Gaussian noise from a fixed table); the std-side tools
//! use it for generated test inputs, so there is one definition.

/// SplitMix64: 64 bits of state (the field, the seed at creation), one add and three
/// xor-shift-multiplies per output.
#[derive(Clone, Copy, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A relative coordinate `u / 2²⁴ ∈ [0, 1)`, as the 24-bit integer `u`.
    pub(crate) fn unit_q24(&mut self) -> u32 {
        (self.next_u64() >> 40) as u32
    }

    /// A uniform integer in `[0, n)` (`n > 0`), by multiply-shift (bias below 2⁻³²·n).
    pub(crate) fn below(&mut self, n: u32) -> u32 {
        (((self.next_u64() >> 32) * n as u64) >> 32) as u32
    }

    /// A uniform real in `[0, 1)` with 53 random bits.
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A uniform real in `[−1, 1)`, with 24 random bits.
    pub(crate) fn signed_unit(&mut self) -> f32 {
        self.unit_q24() as f32 * (2.0 / 16_777_216.0) - 1.0
    }
}

/// Entries of the Gaussian noise table (a power of two, indexed by random bits).
pub(crate) const NOISE_TABLE_LEN: usize = 4096;

/// Fills `table` with standard normal samples by the Box–Muller transform (libm, so identical
/// everywhere). Warping draws noise by indexing it with random bits: one cheap lookup per pixel
/// instead of a logarithm and a cosine.
pub(crate) fn fill_noise_table(rng: &mut SplitMix64, table: &mut [f32]) {
    for pair in table.chunks_mut(2) {
        // u1 in (0, 1] so the logarithm is finite.
        let u1 = (rng.unit_q24() as f32 + 1.0) / 16_777_216.0;
        let u2 = rng.unit_q24() as f32 / 16_777_216.0;
        let r = libm::sqrtf(-2.0 * libm::logf(u1));
        let t = 2.0 * core::f32::consts::PI * u2;
        pair[0] = r * libm::cosf(t);
        if let Some(second) = pair.get_mut(1) {
            *second = r * libm::sinf(t);
        }
    }
}
