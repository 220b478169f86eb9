//! Results on disk and on stdout: the OTB result file (one `x,y,w,h` row per frame, the format
//! benchmark toolkits read) and the JSON summary of a run.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};
use mvision_core::RectF;
use serde_json::{json, Value};

use crate::RunResult;

/// `v` with at most 3 decimals and no trailing zeros (`12`, `12.5`, `12.346`).
fn format_value(v: f32) -> String {
    let s = format!("{:.3}", v);
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        &s
    };
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// One OTB result row: `x,y,w,h` in pixels with at most 3 decimals, or `NaN,NaN,NaN,NaN` when
/// the target is reported absent.
pub fn otb_row(bbox: Option<RectF>) -> String {
    match bbox {
        None => "NaN,NaN,NaN,NaN".to_string(),
        Some(b) => format!(
            "{},{},{},{}",
            format_value(b.x),
            format_value(b.y),
            format_value(b.width),
            format_value(b.height)
        ),
    }
}

/// Writes one [`otb_row`] per box to `path` (created or truncated), each ending in `\n`.
///
/// # Errors
/// The file cannot be created or written (the message names it).
pub fn write_otb_results(path: &Path, boxes: &[Option<RectF>]) -> Result<()> {
    let file = File::create(path).with_context(|| format!("cannot create '{}'", path.display()))?;
    let mut w = BufWriter::new(file);
    for &b in boxes {
        writeln!(w, "{}", otb_row(b))
            .with_context(|| format!("cannot write '{}'", path.display()))?;
    }
    w.flush()
        .with_context(|| format!("cannot write '{}'", path.display()))
}

/// A finite `f64` as JSON, or `null` for NaN and infinities (which JSON cannot carry).
fn number(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

/// The JSON summary of a run: `tracker`, `sequence`, `frames`, `width`, `height`, `fps`
/// (tracker time only), `tracking_seconds`, `absent_frames` (frames reported absent),
/// `success_auc` and `precision20` (both `null` without ground truth).
pub fn run_summary_json(result: &RunResult) -> Value {
    json!({
        "tracker": result.tracker,
        "sequence": result.sequence,
        "frames": result.frames(),
        "width": result.frame_size.0,
        "height": result.frame_size.1,
        "fps": number(result.fps()),
        "tracking_seconds": result.tracking_time.as_secs_f64(),
        "absent_frames": result.boxes.iter().filter(|b| b.is_none()).count(),
        "success_auc": result.scores.as_ref().map_or(Value::Null, |s| number(s.success_auc())),
        "precision20": result.scores.as_ref().map_or(Value::Null, |s| number(s.precision20())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_use_three_decimals_at_most() {
        let b = RectF {
            x: 12.0,
            y: 3.5,
            width: 10.123_456,
            height: -0.0001,
        };
        assert_eq!(otb_row(Some(b)), "12,3.5,10.123,0");
        assert_eq!(otb_row(None), "NaN,NaN,NaN,NaN");
    }

    #[test]
    fn results_round_trip_through_the_ground_truth_parser() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.txt");
        let boxes = [
            Some(RectF {
                x: 1.25,
                y: 2.0,
                width: 30.5,
                height: 40.0,
            }),
            None,
        ];
        write_otb_results(&path, &boxes).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "1.25,2,30.5,40\nNaN,NaN,NaN,NaN\n");
        assert_eq!(crate::sequence::parse_ground_truth(&text).unwrap(), boxes);
    }
}
