//! Criterion benchmarks of the trackers' per-frame `update` — TLD (Median-Flow + detection
//! cascade + learning), KCF and KCFDP (KCF + EdgeBoxes proposals) — on the toolkit's generated
//! sequence at 320×240 and 640×480, throughput in frames (criterion's elem/s = frames per
//! second, single-threaded). The real-clip figures against OpenCV come from `mvision eval` and
//! `bench/tracking_compare.py` (BENCHMARKS.md).
//!
//! ```sh
//! cargo bench -p mvision-benches --bench trackers
//! cargo bench -p mvision-benches --bench trackers -- kcf   # one tracker (criterion's filter)
//! ```

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mvision_core::kcf::dp::workspace_len as kcfdp_workspace_len;
use mvision_core::kcf::{
    workspace_len as kcf_workspace_len, Frame, Kcf, KcfDp, KcfDpParams, KcfParams,
};
use mvision_core::tld::{workspace_len, Tld, TldParams};
use mvision_core::{ImageView, Rect};
use mvision_track::{Sequence, SyntheticParams, SyntheticSequence};

/// Frames of the generated sequence cycled through (forwards then backwards, so the motion
/// stays continuous and the tracker keeps its target).
const FRAMES: usize = 120;

/// The generated sequence's gray frames and first box at `w × h`.
fn sequence(w: usize, h: usize) -> (Vec<Vec<u8>>, Rect) {
    let seq = SyntheticSequence::new(SyntheticParams {
        width: w,
        height: h,
        frames: FRAMES,
        seed: 1,
    })
    .expect("valid synthetic parameters");
    let frames = (0..FRAMES)
        .map(|i| seq.frame(i).expect("frame").gray_bytes().to_vec())
        .collect();
    let init = seq.ground_truth().expect("ground truth")[0]
        .expect("the object is visible on frame 0")
        .round();
    (frames, init)
}

/// Index of the `k`-th frame when cycling forwards then backwards through the clip.
fn cycle(k: &mut usize) -> usize {
    let period = 2 * (FRAMES - 1);
    *k = (*k + 1) % period;
    if *k < FRAMES {
        *k
    } else {
        period - *k
    }
}

const SIZES: [(usize, usize); 2] = [(320, 240), (640, 480)];

fn group<'c>(
    c: &'c mut Criterion,
    name: &str,
) -> criterion::BenchmarkGroup<'c, criterion::measurement::WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(1));
    group
}

fn tld_update(c: &mut Criterion) {
    let mut group = group(c, "tld_update");
    for (w, h) in SIZES {
        let (frames, init) = sequence(w, h);
        let params = TldParams::default();
        let mut workspace = vec![0u8; workspace_len(&params, w, h).expect("workspace size")];
        let mut tld = Tld::new(&params, w, h, &mut workspace).expect("tracker");
        let view = |i: usize| ImageView::packed(&frames[i], w, h).expect("frame view");
        tld.init(&view(0), init).expect("init");
        let mut k = 0usize;
        group.bench_function(format!("{w}x{h}"), |b| {
            b.iter(|| tld.update(&view(cycle(&mut k))).expect("update"))
        });
    }
    group.finish();
}

fn kcf_update(c: &mut Criterion) {
    let mut group = group(c, "kcf_update");
    for (w, h) in SIZES {
        let (frames, init) = sequence(w, h);
        let params = KcfParams::default();
        let mut workspace = vec![0u8; kcf_workspace_len(&params, w, h).expect("workspace size")];
        let mut kcf = Kcf::new(&params, w, h, &mut workspace).expect("tracker");
        let frame = |i: usize| Frame::Gray(ImageView::packed(&frames[i], w, h).expect("view"));
        kcf.init(&frame(0), init.to_f32()).expect("init");
        let mut k = 0usize;
        group.bench_function(format!("{w}x{h}"), |b| {
            b.iter(|| kcf.update(&frame(cycle(&mut k))).expect("update"))
        });
    }
    group.finish();
}

fn kcfdp_update(c: &mut Criterion) {
    let mut group = group(c, "kcfdp_update");
    for (w, h) in SIZES {
        let (frames, init) = sequence(w, h);
        let params = KcfDpParams::default();
        let mut workspace = vec![0u8; kcfdp_workspace_len(&params, w, h).expect("workspace size")];
        let mut t = KcfDp::new(&params, w, h, &mut workspace).expect("tracker");
        let frame = |i: usize| Frame::Gray(ImageView::packed(&frames[i], w, h).expect("view"));
        t.init(&frame(0), init.to_f32()).expect("init");
        let mut k = 0usize;
        group.bench_function(format!("{w}x{h}"), |b| {
            b.iter(|| t.update(&frame(cycle(&mut k))).expect("update"))
        });
    }
    group.finish();
}

criterion_group!(benches, tld_update, kcf_update, kcfdp_update);
criterion_main!(benches);
