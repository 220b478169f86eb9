//! Criterion benchmark of the TLD tracker's per-frame `update` (Median-Flow + detection cascade +
//! learning) on the toolkit's generated sequence at 320×240 and 640×480, throughput in frames
//! (criterion's elem/s = frames per second, single-threaded). The real-clip figures against
//! OpenCV come from `mvision eval` and `bench/tracking_compare.py` (BENCHMARKS.md).
//!
//! ```sh
//! cargo bench -p mvision-benches --bench tld
//! ```

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mvision_core::tld::{workspace_len, Tld, TldParams};
use mvision_core::ImageView;
use mvision_track::{Sequence, SyntheticParams, SyntheticSequence};

/// Frames of the generated sequence cycled through (forwards then backwards, so the motion
/// stays continuous and the tracker keeps its target).
const FRAMES: usize = 120;

fn tld_update(c: &mut Criterion) {
    let mut group = c.benchmark_group("tld_update");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(1));
    for (w, h) in [(320usize, 240usize), (640, 480)] {
        let seq = SyntheticSequence::new(SyntheticParams {
            width: w,
            height: h,
            frames: FRAMES,
            seed: 1,
        })
        .expect("valid synthetic parameters");
        let frames: Vec<Vec<u8>> = (0..FRAMES)
            .map(|i| seq.frame(i).expect("frame").gray_bytes().to_vec())
            .collect();
        let init = seq.ground_truth().expect("ground truth")[0]
            .expect("the object is visible on frame 0")
            .round();
        let params = TldParams::default();
        let mut workspace = vec![0u8; workspace_len(&params, w, h).expect("workspace size")];
        let mut tld = Tld::new(&params, w, h, &mut workspace).expect("tracker");
        let view = |i: usize| ImageView::packed(&frames[i], w, h).expect("frame view");
        tld.init(&view(0), init).expect("init");
        let period = 2 * (FRAMES - 1);
        let mut k = 0usize;
        group.bench_function(format!("{w}x{h}"), |b| {
            b.iter(|| {
                k = (k + 1) % period;
                let i = if k < FRAMES { k } else { period - k };
                tld.update(&view(i)).expect("update")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, tld_update);
criterion_main!(benches);
