//! The level cap reaches the `gemm` crate path: while a caller caps the instruction-set level
//! below the CPU's (`cpu::set_cap`, as `MVISION_CPU` and `mv_cpu_set_max_level` do), [`sgemm`]
//! must not hand products to the crate, which would pick AVX-512 on its own; it runs the
//! core's own path with the capped level's micro-kernel, so its result equals
//! [`sgemm_portable`]'s at the same cap bit for bit. Uncapped, the crate
//! path runs and (with fused multiply-adds and another blocking) rounds differently, which this
//! test also checks so that the comparison means something. One test in its own file: the cap
//! is process-wide.
#![cfg(feature = "gemm-crate")]

#[allow(dead_code)]
#[path = "common/mod.rs"]
mod common;

use common::Rng;
use mvision_core::cpu::{self, Level};
use mvision_core::nn::gemm::{gemm_pack_len, sgemm, sgemm_portable, Order, Transpose};

fn run(portable: bool, m: usize, n: usize, k: usize, a: &[f32], b: &[f32]) -> Vec<u32> {
    let mut c = vec![0.0f32; m * n];
    let mut pack = vec![0.0f32; gemm_pack_len(m, n, k)];
    let f = if portable { sgemm_portable } else { sgemm };
    f(
        Order::RowMajor,
        Transpose::No,
        Transpose::No,
        m,
        n,
        k,
        1.0,
        a,
        k,
        b,
        n,
        0.0,
        &mut c,
        n,
        &mut pack,
    )
    .unwrap();
    c.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn a_capped_level_keeps_sgemm_off_the_gemm_crate() {
    let detected = cpu::detected();
    if detected == Level::Baseline {
        eprintln!("skipped: this CPU has no level above the baseline to cap");
        return;
    }
    let mut rng = Rng::new(0x9e33);
    // FastPoorNet's second conv layer and a ragged one: both far above GEMM_CRATE_MIN_FLOP.
    for (m, n, k) in [(625, 192, 576), (37, 53, 301)] {
        let a: Vec<f32> = (0..m * k).map(|_| rng.f32_in(-1.0, 1.0)).collect();
        let b: Vec<f32> = (0..k * n).map(|_| rng.f32_in(-1.0, 1.0)).collect();
        let portable = run(true, m, n, k, &a, &b);
        cpu::set_cap(Level::X86V4);
        let uncapped = run(false, m, n, k, &a, &b);
        assert_ne!(
            uncapped, portable,
            "{m}x{n}x{k}: the crate path should round differently from the portable one"
        );
        for cap in Level::ALL.into_iter().filter(|&l| l < detected) {
            cpu::set_cap(cap);
            let capped = run(false, m, n, k, &a, &b);
            // The core's own path at the same cap (its micro-kernel depends on the level).
            let portable = run(true, m, n, k, &a, &b);
            cpu::set_cap(Level::X86V4);
            assert!(
                capped == portable,
                "{m}x{n}x{k} capped at {}: sgemm differs from the portable path",
                cap.name()
            );
        }
        // Capped at the CPU's own level nothing is restricted: the crate runs again.
        cpu::set_cap(detected);
        let at_detected = run(false, m, n, k, &a, &b);
        cpu::set_cap(Level::X86V4);
        assert!(
            at_detected == uncapped,
            "{m}x{n}x{k}: a cap at the CPU's level changed sgemm"
        );
    }
}
