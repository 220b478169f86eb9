//! Criterion benchmarks of the CNN core's GEMM: `sgemm` (portable, or through the `gemm` crate
//! with `--features gemm-crate`) and the seed variants at 256…2048 and on the FastPoorNet
//! shapes, throughput in flops (criterion's "Gelem/s" is GFLOP/s).
//!
//! ```sh
//! cargo bench -p mvision-benches --bench gemm                         # portable sgemm
//! cargo bench -p mvision-benches --bench gemm --features gemm-crate   # with the gemm crate
//! MVISION_BENCH_SEEDS=1 cargo bench -p mvision-benches --bench gemm   # + naive, tiled32
//! ```
//!
//! The tables in BENCHMARKS.md come from `examples/nn_bench.rs` through
//! `bench/gemm_compare.py`, which also times numpy (OpenBLAS) in the same run.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mvision_benches::nn_cases::{gemm_shapes, GemmCase, GemmVariant};

fn gemm(c: &mut Criterion) {
    let mut variants = vec![GemmVariant::Sgemm];
    if std::env::var("MVISION_BENCH_SEEDS").is_ok_and(|v| !v.is_empty() && v != "0") {
        variants.extend([GemmVariant::Tiled32, GemmVariant::Naive]);
    }
    for variant in variants {
        let mut group = c.benchmark_group(format!("gemm/{}", variant.id()));
        // Up to seconds per run at 2048³: 10 samples keep the suite within minutes on 2 cores.
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(2));
        for (m, n, k) in gemm_shapes() {
            if variant == GemmVariant::Naive && m == n && n == k && m > 512 {
                continue;
            }
            let mut case = GemmCase::new(variant, m, n, k).expect("case");
            group.throughput(Throughput::Elements(case.flop()));
            group.bench_function(BenchmarkId::from_parameter(format!("{m}x{n}x{k}")), |b| {
                b.iter(|| black_box(&mut case).run().expect("runs"))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, gemm);
criterion_main!(benches);
