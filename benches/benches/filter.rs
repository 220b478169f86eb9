//! Criterion benchmarks of the CPU filtering core: every case of `mvision_benches::cases::CASES`
//! at 640×480 and 1920×1080 (and 3840×2160 when `MVISION_BENCH_4K=1`), with throughput in
//! pixels so criterion reports Melem/s (= Mpixel/s, the unit of `mvision bench filter`).
//!
//! ```sh
//! cargo bench -p mvision-benches                      # all cases
//! cargo bench -p mvision-benches -- filter2d_3x3_u8   # one case (criterion's name filter)
//! MVISION_BENCH_4K=1 cargo bench -p mvision-benches   # add 4K
//! ```

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mvision_benches::cases::{CpuCase, CASES};

/// Sizes always measured: VGA and 1080p.
const SIZES: [(usize, usize); 2] = [(640, 480), (1920, 1080)];

/// Added when `MVISION_BENCH_4K` is set to anything but `0` or empty: 4K UHD roughly doubles
/// the run time, so it is opt-in.
const SIZE_4K: (usize, usize) = (3840, 2160);

fn sizes() -> Vec<(usize, usize)> {
    let mut sizes = SIZES.to_vec();
    if std::env::var("MVISION_BENCH_4K").is_ok_and(|v| !v.is_empty() && v != "0") {
        sizes.push(SIZE_4K);
    }
    sizes
}

fn filters(c: &mut Criterion) {
    let sizes = sizes();
    for case in CASES {
        let mut group = c.benchmark_group(case.id());
        // Every run is milliseconds at most; 20 samples over 2 s keep the whole suite near
        // a minute on two cores while the confidence intervals stay within a few percent.
        group
            .sample_size(20)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2));
        for &(w, h) in &sizes {
            let mut prepared = CpuCase::new(case, w, h)
                .unwrap_or_else(|e| panic!("cannot prepare {} at {w}x{h}: {e}", case.id()));
            group.throughput(Throughput::Elements(prepared.pixels() as u64));
            group.bench_function(BenchmarkId::from_parameter(format!("{w}x{h}")), |b| {
                b.iter(|| black_box(&mut prepared).run().expect("prepared case runs"))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, filters);
criterion_main!(benches);
