//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};

/// `../shared/data/tracking` beside the checkout, or `None` after printing a visible `skipped:`
/// message naming `what` (the clips exist only beside a project checkout, not on a user's
/// machine).
pub fn real_clips(what: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/tracking");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "skipped: {what}: real clips not found at {} (only present beside a project checkout)",
            dir.display()
        );
        None
    }
}

use mvision_track::metrics::Scores;
use mvision_track::{
    make_tracker, run_sequence, FolderSequence, RectF, RunOptions, RunResult, Sequence,
};

/// Runs the registry's tracker `name` over `sequence`, initialised on `init` or the first
/// ground-truth box.
#[allow(dead_code)] // Not every test binary uses every helper.
pub fn run(name: &str, sequence: &dyn Sequence, init: Option<RectF>) -> RunResult {
    let (w, h) = sequence.size();
    let mut tracker = make_tracker(name, w, h).unwrap();
    let options = RunOptions {
        init,
        max_frames: None,
        progress: false,
    };
    run_sequence(tracker.as_mut(), sequence, &options).unwrap()
}

/// The scores of a run on a sequence with ground truth.
#[allow(dead_code)]
pub fn scores(result: &RunResult) -> &Scores {
    result.scores.as_ref().expect("ground truth exists")
}

/// Runs `name` on the four real clips and checks each clip's success AUC against its threshold
/// and the pooled AUC and precision@20 against theirs; prints every figure. Skipped (with the
/// message) where the clips are absent.
#[allow(dead_code)]
pub fn check_real_clips(name: &str, clips: &[(&str, f64, f64)], pooled_auc: f64, pooled_p20: f64) {
    let Some(dir) = real_clips(&format!("{name} regression on the real clips")) else {
        return;
    };
    let mut all = Vec::new();
    for &(clip, measured, threshold) in clips {
        let seq = FolderSequence::open(&dir.join(clip)).unwrap();
        let result = run(name, &seq, None);
        let s = scores(&result);
        eprintln!(
            "{name} {clip}: AUC {:.3} (measured {measured}), precision@20 {:.3}, {:.0} FPS",
            s.success_auc(),
            s.precision20(),
            result.fps()
        );
        assert!(
            s.success_auc() > threshold,
            "{name} {clip}: AUC {:.3} ≤ {threshold}",
            s.success_auc()
        );
        all.push(result.scores.unwrap());
    }
    let pooled = Scores::pooled(&all);
    eprintln!(
        "{name} pooled: AUC {:.3}, precision@20 {:.3}",
        pooled.success_auc(),
        pooled.precision20()
    );
    assert!(
        pooled.success_auc() > pooled_auc,
        "{:.3}",
        pooled.success_auc()
    );
    assert!(
        pooled.precision20() > pooled_p20,
        "{:.3}",
        pooled.precision20()
    );
}
