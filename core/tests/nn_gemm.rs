//! GEMM against an `f64` reference: [`sgemm`] on random shapes (1×1×1, primes, the blocking
//! edges, the seven FastPoorNet conv shapes of seed 000) in both storage orders, all four
//! transpose combinations, leading dimensions with NaN garbage in the gaps (any read of it would
//! poison a result) and sentinels in C's gaps (which must survive bit for bit), and several α/β
//! (β = 0 must ignore NaN already in C, as the reference BLAS does). The seed variants
//! ([`sgemm_naive`], [`sgemm_tiled32`]) on the same references, the integer GEMM exactly, and
//! every error.
//!
//! Tolerance: a float dot product of length k is within `γ_k·Σ|a||b|` of the true value
//! (`γ_k ≈ k·u`, `u = 2⁻²⁴`); we allow `(k + 2)·ε` (ε = 2⁻²³, twice that bound plus the α, β
//! roundings) relative to `|α|·Σ|a||b| + |β|·|c|`.
//!
//! With `--features gemm-crate` the large shapes run through the `gemm` crate, so running the
//! suite with and without the feature tests both paths against the same reference.

#[allow(dead_code)]
#[path = "common/mod.rs"]
mod common;

use common::Rng;
use mvision_core::cpu::{self, Level};
use mvision_core::nn::gemm::{
    gemm_pack_len, igemm_i8, sgemm, sgemm_naive, sgemm_portable, sgemm_tiled32, tiled32_work_len,
    Order, Transpose, IGEMM_I8_MAX_K, KC, MC, MR, NC, NR,
};
use mvision_core::Error;

/// [`sgemm`]'s signature (it and [`sgemm_portable`]).
type Sgemm = fn(
    Order,
    Transpose,
    Transpose,
    usize,
    usize,
    usize,
    f32,
    &[f32],
    usize,
    &[f32],
    usize,
    f32,
    &mut [f32],
    usize,
    &mut [f32],
) -> mvision_core::Result<()>;

/// The seven (M, N, K) GEMMs of FastPoorNet's conv layers (seed 000).
const FASTPOORNET: [(usize, usize, usize); 7] = [
    (2916, 64, 363),
    (625, 192, 576),
    (144, 96, 1728),
    (144, 160, 864),
    (144, 144, 1440),
    (144, 160, 1296),
    (144, 256, 1440),
];

/// Gaps between stored rows/columns hold NaN: reading one would poison a result.
const GARBAGE: f32 = f32::NAN;
/// C's gaps hold a sentinel checked bit for bit afterwards.
const SENTINEL: f32 = -12345.678;

fn random_matrix(rng: &mut Rng, rows: usize, cols: usize) -> Vec<f32> {
    (0..rows * cols).map(|_| rng.f32_in(-1.0, 1.0)).collect()
}

/// Stores the logical `rows × cols` matrix `x` (row-major) so that `op(stored) = x`, with `pad`
/// extra elements per leading dimension filled with `fill`; returns the buffer and `ld`.
fn store(
    x: &[f32],
    rows: usize,
    cols: usize,
    order: Order,
    trans: Transpose,
    pad: usize,
    fill: f32,
) -> (Vec<f32>, usize) {
    let (sr, sc) = match trans {
        Transpose::No => (rows, cols),
        Transpose::Yes => (cols, rows),
    };
    let (outer, inner) = match order {
        Order::RowMajor => (sr, sc),
        Order::ColMajor => (sc, sr),
    };
    let ld = inner.max(1) + pad;
    let mut buf = vec![fill; outer.max(1) * ld + pad];
    for i in 0..rows {
        for j in 0..cols {
            let (r, c) = match trans {
                Transpose::No => (i, j),
                Transpose::Yes => (j, i),
            };
            let at = match order {
                Order::RowMajor => r * ld + c,
                Order::ColMajor => r + c * ld,
            };
            buf[at] = x[i * cols + j];
        }
    }
    (buf, ld)
}

fn c_index(order: Order, ld: usize, i: usize, j: usize) -> usize {
    match order {
        Order::RowMajor => i * ld + j,
        Order::ColMajor => i + j * ld,
    }
}

/// `(Σ_p a·b, Σ_p |a||b|)` in f64 for every element of `A·B` (row-major logical operands).
fn reference(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> (Vec<f64>, Vec<f64>) {
    let mut dot = vec![0.0f64; m * n];
    let mut mag = vec![0.0f64; m * n];
    for i in 0..m {
        for p in 0..k {
            let av = a[i * k + p] as f64;
            for j in 0..n {
                let bv = b[p * n + j] as f64;
                dot[i * n + j] += av * bv;
                mag[i * n + j] += (av * bv).abs();
            }
        }
    }
    (dot, mag)
}

struct Case {
    m: usize,
    n: usize,
    k: usize,
    a: Vec<f32>,
    b: Vec<f32>,
    c0: Vec<f32>,
    dot: Vec<f64>,
    mag: Vec<f64>,
}

impl Case {
    fn new(rng: &mut Rng, m: usize, n: usize, k: usize) -> Self {
        let a = random_matrix(rng, m, k);
        let b = random_matrix(rng, k, n);
        let c0 = random_matrix(rng, m, n);
        let (dot, mag) = reference(&a, &b, m, n, k);
        Self {
            m,
            n,
            k,
            a,
            b,
            c0,
            dot,
            mag,
        }
    }

    /// Runs `sgemm` in the given layout and checks every element and every gap of C.
    #[allow(clippy::too_many_arguments)]
    #[allow(clippy::too_many_arguments)]
    fn check(
        &self,
        order: Order,
        ta: Transpose,
        tb: Transpose,
        pad: usize,
        alpha: f32,
        beta: f32,
        nan_c: bool,
    ) {
        self.check_with(sgemm, order, ta, tb, pad, alpha, beta, nan_c);
    }

    /// [`Case::check`] of `gemm` (`sgemm` or `sgemm_portable`).
    #[allow(clippy::too_many_arguments)]
    fn check_with(
        &self,
        gemm: Sgemm,
        order: Order,
        ta: Transpose,
        tb: Transpose,
        pad: usize,
        alpha: f32,
        beta: f32,
        nan_c: bool,
    ) {
        let (m, n, k) = (self.m, self.n, self.k);
        let (a, lda) = store(&self.a, m, k, order, ta, pad, GARBAGE);
        let (b, ldb) = store(&self.b, k, n, order, tb, pad + 1, GARBAGE);
        let c_init: Vec<f32> = if nan_c {
            vec![f32::NAN; m * n]
        } else {
            self.c0.clone()
        };
        let (mut c, ldc) = store(&c_init, m, n, order, Transpose::No, pad + 2, SENTINEL);
        let mut pack = vec![GARBAGE; gemm_pack_len(m, n, k)];
        gemm(
            order, ta, tb, m, n, k, alpha, &a, lda, &b, ldb, beta, &mut c, ldc, &mut pack,
        )
        .unwrap();
        let eps = f32::EPSILON as f64 * (k as f64 + 2.0);
        let mut inside = vec![false; c.len()];
        for i in 0..m {
            for j in 0..n {
                let at = c_index(order, ldc, i, j);
                inside[at] = true;
                let c0 = if beta == 0.0 {
                    0.0
                } else {
                    c_init[i * n + j] as f64
                };
                let want = alpha as f64 * self.dot[i * n + j] + beta as f64 * c0;
                let bound = (alpha as f64).abs() * self.mag[i * n + j] + (beta as f64 * c0).abs();
                let got = c[at] as f64;
                assert!(
                    (got - want).abs() <= eps * bound + f64::MIN_POSITIVE,
                    "{m}x{n}x{k} {order:?} {ta:?} {tb:?} α={alpha} β={beta}: C[{i}][{j}] = {got}, want {want}"
                );
            }
        }
        for (at, (&v, &ins)) in c.iter().zip(&inside).enumerate() {
            if !ins {
                assert_eq!(v.to_bits(), SENTINEL.to_bits(), "gap {at} of C overwritten");
            }
        }
    }
}

const LAYOUTS: [(Order, Transpose, Transpose); 8] = {
    use Order::*;
    use Transpose::*;
    [
        (RowMajor, No, No),
        (RowMajor, No, Yes),
        (RowMajor, Yes, No),
        (RowMajor, Yes, Yes),
        (ColMajor, No, No),
        (ColMajor, No, Yes),
        (ColMajor, Yes, No),
        (ColMajor, Yes, Yes),
    ]
};

const SCALARS: [(f32, f32, bool); 5] = [
    (1.0, 0.0, false),
    (1.0, 0.0, true), // β = 0 ignores NaN in C
    (-0.5, 0.25, false),
    (2.0, 1.0, false),
    (0.0, 0.5, false), // α = 0: C ← β·C
];

#[test]
fn small_and_prime_shapes_all_layouts_and_scalars() {
    let mut rng = Rng::new(0x6e6e_6765_6d6d_0001);
    let shapes = [
        (1, 1, 1),
        (7, 13, 29),
        (97, 61, 53),
        (2, 3, 1),
        (MR + 1, NR + 1, 3),
        (MR * 2 - 1, NR * 3 - 1, KC + 1),
        (MC + 3, 17, KC * 2 + 5),
        (3, NC + 5, 4),
    ];
    for (m, n, k) in shapes {
        let case = Case::new(&mut rng, m, n, k);
        for (order, ta, tb) in LAYOUTS {
            for (alpha, beta, nan_c) in SCALARS {
                case.check(order, ta, tb, 0, alpha, beta, nan_c);
                case.check(order, ta, tb, 3, alpha, beta, nan_c);
            }
        }
    }
}

/// The core's own path at every instruction-set level this CPU has (each runs its own
/// micro-kernel, `gemm::kernel_at`: on x86 the 12 × 32 AVX-512, 6 × 16 AVX2 + FMA and
/// portable ones, on AArch64 the 8 × 12 NEON one), on shapes around each kernel's tile, every
/// layout and scalar case. Other tests of this binary may run meanwhile at whichever level is
/// set: they check tolerances only.
#[test]
fn every_level_and_kernel_tile_edge() {
    let mut rng = Rng::new(0x6e6e_6765_6d6d_0003);
    let shapes = [
        (6, 16, 3),
        (7, 17, 5),
        (12, 32, KC + 1),
        (13, 33, 9),
        (25, 65, 2),
        (11, 31, 40),
        (5, 7, 1),
        (9, 25, KC + 1),
        // More than 128 columns: A is packed (fewer are read in place), 16 steps at a time.
        (25, 161, 37),
        (13, 130, KC + 17),
    ];
    let detected = cpu::detected();
    for level in Level::ALL.into_iter().filter(|&l| l <= detected) {
        cpu::set_cap(level);
        for &(m, n, k) in &shapes {
            let case = Case::new(&mut rng, m, n, k);
            for (order, ta, tb) in LAYOUTS {
                for (alpha, beta, nan_c) in SCALARS {
                    case.check_with(sgemm_portable, order, ta, tb, 1, alpha, beta, nan_c);
                }
            }
        }
    }
    cpu::set_cap(Level::X86V4);
}

#[test]
fn fastpoornet_shapes_all_layouts() {
    let mut rng = Rng::new(0x6e6e_6765_6d6d_0002);
    for (s, (m, n, k)) in FASTPOORNET.into_iter().enumerate() {
        let case = Case::new(&mut rng, m, n, k);
        for (l, (order, ta, tb)) in LAYOUTS.into_iter().enumerate() {
            let (alpha, beta, nan_c) = SCALARS[(s + l) % SCALARS.len()];
            case.check(order, ta, tb, (s + l) % 3, alpha, beta, nan_c);
        }
    }
}

#[test]
fn zero_dimensions_follow_blas() {
    // k = 0: C ← β·C; m = 0 or n = 0: nothing.
    let mut c = vec![1.0, 2.0, f32::NAN, 4.0];
    let mut pack = [0.0f32; 0];
    let rm = Order::RowMajor;
    let no = Transpose::No;
    sgemm(
        rm,
        no,
        no,
        2,
        2,
        0,
        1.0,
        &[],
        1,
        &[],
        2,
        0.5,
        &mut c,
        2,
        &mut pack,
    )
    .unwrap();
    assert_eq!(&c[..2], &[0.5, 1.0]);
    assert!(c[2].is_nan());
    sgemm(
        rm,
        no,
        no,
        2,
        2,
        0,
        1.0,
        &[],
        1,
        &[],
        2,
        0.0,
        &mut c,
        2,
        &mut pack,
    )
    .unwrap();
    assert_eq!(c, [0.0; 4]);
    let mut c = vec![7.0f32; 4];
    sgemm(
        rm,
        no,
        no,
        0,
        2,
        3,
        1.0,
        &[],
        3,
        &[0.0; 6],
        2,
        0.0,
        &mut c,
        2,
        &mut pack,
    )
    .unwrap();
    sgemm(
        rm,
        no,
        no,
        2,
        0,
        3,
        1.0,
        &[0.0; 6],
        3,
        &[],
        1,
        0.0,
        &mut c,
        1,
        &mut pack,
    )
    .unwrap();
    assert_eq!(c, [7.0; 4]);
}

#[test]
fn errors_leave_c_untouched() {
    let (m, n, k) = (5, 6, 7);
    let a = vec![1.0f32; m * k];
    let b = vec![1.0f32; k * n];
    let mut c = vec![3.0f32; m * n];
    let mut pack = vec![0.0f32; gemm_pack_len(m, n, k)];
    let full = pack.len();
    let (rm, cm) = (Order::RowMajor, Order::ColMajor);
    let (no, yes) = (Transpose::No, Transpose::Yes);
    let mut run =
        |order, ta, tb, lda, ldb, ldc, a: &[f32], b: &[f32], c_len: usize, pack_len: usize| {
            sgemm(
                order,
                ta,
                tb,
                m,
                n,
                k,
                1.0,
                a,
                lda,
                b,
                ldb,
                0.0,
                &mut c[..c_len],
                ldc,
                &mut pack[..pack_len],
            )
        };
    assert_eq!(
        run(rm, no, no, k - 1, n, n, &a, &b, m * n, full),
        Err(Error::StrideTooSmall)
    );
    assert_eq!(
        run(rm, yes, no, m - 1, n, n, &a, &b, m * n, full),
        Err(Error::StrideTooSmall)
    );
    assert_eq!(
        run(cm, no, no, m, k, m - 1, &a, &b, m * n, full),
        Err(Error::StrideTooSmall)
    );
    assert_eq!(
        run(rm, no, no, k, n, 0, &a, &b, m * n, full),
        Err(Error::StrideTooSmall)
    );
    assert_eq!(
        run(rm, no, no, k, n, n, &a[1..], &b, m * n, full),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(
        run(rm, no, no, k, n, n, &a, &b[1..], m * n, full),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(
        run(rm, no, no, k, n, n, &a, &b, m * n - 1, full),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(
        run(rm, no, no, k, n, n, &a, &b, m * n, full - 1),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(run(rm, no, no, k, n, n, &a, &b, m * n, full), Ok(()));
    assert!(c.iter().all(|&x| x == k as f32));
    // (m − 1)·ld overflows.
    let mut c1 = [0.0f32; 1];
    let huge = usize::MAX / 2 + 1;
    assert_eq!(
        sgemm(rm, no, no, 3, 1, 1, 1.0, &a, huge, &b, 1, 0.0, &mut c1, 1, &mut pack),
        Err(Error::Overflow)
    );
    assert_eq!(c1, [0.0]);
}

#[test]
fn pack_len_is_bounded() {
    assert_eq!(gemm_pack_len(0, 0, 0), 0);
    assert_eq!(gemm_pack_len(1, 1, 1), MR + NR);
    let max = (MC + NC) * KC;
    assert_eq!(gemm_pack_len(usize::MAX, usize::MAX, usize::MAX), max);
}

fn check_seed_variant(run: impl Fn(&Case) -> Vec<f32>, case: &Case) {
    let c = run(case);
    let eps = f32::EPSILON as f64 * (case.k as f64 + 2.0);
    for (i, &got) in c.iter().enumerate() {
        let want = case.dot[i];
        assert!(
            (got as f64 - want).abs() <= eps * case.mag[i] + f64::MIN_POSITIVE,
            "element {i}"
        );
    }
}

#[test]
fn seed_variants_match_reference() {
    let mut rng = Rng::new(0x6e6e_6765_6d6d_0003);
    let mut shapes = vec![
        (1, 1, 1),
        (7, 13, 29),
        (97, 61, 53),
        (32, 32, 32),
        (33, 65, 31),
    ];
    shapes.extend_from_slice(&FASTPOORNET[2..4]);
    for (m, n, k) in shapes {
        let case = Case::new(&mut rng, m, n, k);
        check_seed_variant(
            |c| {
                let mut out = vec![f32::NAN; m * n];
                sgemm_naive(m, n, k, &c.a, &c.b, &mut out).unwrap();
                out
            },
            &case,
        );
        check_seed_variant(
            |c| {
                // The portable path even where `sgemm` would call the gemm crate.
                let mut out = vec![f32::NAN; m * n];
                let mut pack = vec![f32::NAN; gemm_pack_len(m, n, k)];
                let (rm, no) = (Order::RowMajor, Transpose::No);
                sgemm_portable(
                    rm, no, no, m, n, k, 1.0, &c.a, k, &c.b, n, 0.0, &mut out, n, &mut pack,
                )
                .unwrap();
                out
            },
            &case,
        );
        check_seed_variant(
            |c| {
                let mut out = vec![f32::NAN; m * n];
                let mut work = vec![f32::NAN; tiled32_work_len(m, n, k).unwrap()];
                sgemm_tiled32(m, n, k, &c.a, &c.b, &mut out, &mut work).unwrap();
                out
            },
            &case,
        );
    }
    let mut c = [0.0f32; 4];
    assert_eq!(
        sgemm_naive(2, 2, 2, &[0.0; 3], &[0.0; 4], &mut c),
        Err(Error::BufferTooSmall)
    );
    let mut work = vec![0.0; tiled32_work_len(2, 2, 2).unwrap() - 1];
    assert_eq!(
        sgemm_tiled32(2, 2, 2, &[0.0; 4], &[0.0; 4], &mut c, &mut work),
        Err(Error::BufferTooSmall)
    );
    assert_eq!(tiled32_work_len(usize::MAX, 1, 1), Err(Error::Overflow));
    assert_eq!(tiled32_work_len(1, 1, 1), Ok(2 * 32 * 32));
}

fn igemm_reference(a: &[i8], b: &[i8], m: usize, n: usize, k: usize) -> Vec<i64> {
    let mut c = vec![0i64; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k)
                .map(|p| a[i * k + p] as i64 * b[p * n + j] as i64)
                .sum();
        }
    }
    c
}

#[test]
fn igemm_is_exact() {
    let mut rng = Rng::new(0x6e6e_6765_6d6d_0004);
    for (m, n, k) in [(1, 1, 1), (7, 13, 29), (97, 61, 53), (144, 96, 1728)] {
        let a: Vec<i8> = (0..m * k).map(|_| rng.u8() as i8).collect();
        let b: Vec<i8> = (0..k * n).map(|_| rng.u8() as i8).collect();
        // Leading dimensions with gaps; C's gaps must survive.
        let (lda, ldb, ldc) = (k + 2, n + 1, n + 3);
        let mut ap = vec![99i8; m * lda];
        let mut bp = vec![99i8; k * ldb];
        for i in 0..m {
            ap[i * lda..i * lda + k].copy_from_slice(&a[i * k..(i + 1) * k]);
        }
        for p in 0..k {
            bp[p * ldb..p * ldb + n].copy_from_slice(&b[p * n..(p + 1) * n]);
        }
        let mut c = vec![i32::MIN; m * ldc];
        igemm_i8(m, n, k, &ap, lda, &bp, ldb, &mut c, ldc).unwrap();
        let want = igemm_reference(&a, &b, m, n, k);
        for i in 0..m {
            for j in 0..n {
                assert_eq!(c[i * ldc + j] as i64, want[i * n + j]);
            }
            assert!(c[i * ldc + n..(i + 1) * ldc].iter().all(|&x| x == i32::MIN));
        }
    }
    // The extreme: every product 128², summed over the largest k allowed, is exact.
    let k = 1000;
    let a = vec![-128i8; k];
    let b = vec![-128i8; k];
    let mut c = [0i32; 1];
    igemm_i8(1, 1, k, &a, k, &b, 1, &mut c, 1).unwrap();
    assert_eq!(c[0], 16384 * k as i32);
    assert_eq!(
        IGEMM_I8_MAX_K as i64 * 16384,
        (i32::MAX as i64 / 16384) * 16384
    );
    assert_eq!(
        igemm_i8(1, 1, IGEMM_I8_MAX_K + 1, &[], 1, &[], 1, &mut c, 1),
        Err(Error::Overflow)
    );
    assert_eq!(
        igemm_i8(1, 1, 2, &a, 1, &b, 1, &mut c, 1),
        Err(Error::StrideTooSmall)
    );
    assert_eq!(
        igemm_i8(2, 1, 2, &a[..3], 2, &b, 1, &mut c, 1),
        Err(Error::BufferTooSmall)
    );
}
