//! `mvision eval`: several trackers over several sequences, with a Markdown table per sequence
//! and pooled over all frames, OTB result files, and the OTB precision and success plots.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use mvision_track::output::{run_summary_json, write_otb_results};
use mvision_track::plot::{plot_precision, plot_success};
use mvision_track::sequence::is_otb_dir;
use mvision_track::{RunOptions, RunResult, Scores};
use serde_json::json;

use crate::track::{open_sequence, track, Annotations, SYNTHETIC};

#[derive(Args, Debug)]
pub struct EvalArgs {
    /// Trackers to run, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "tld",
        value_name = "NAMES"
    )]
    trackers: Vec<String>,
    /// Folder for plots (precision.png, success.png) and results (<tracker>/<sequence>.txt).
    #[arg(long, value_name = "DIR", default_value = "mvision-eval-out")]
    out: PathBuf,
    /// Print one JSON object as the last stdout line after the tables.
    #[arg(long)]
    json: bool,
    /// Track at most N frames of each sequence.
    #[arg(long, value_name = "N")]
    max_frames: Option<usize>,
    /// Seed of the generated sequence, when `synthetic` is one of the DIRs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// OTB sequence folders, folders of them, or `synthetic`.
    #[arg(value_name = "DIR", required = true)]
    dirs: Vec<PathBuf>,
}

/// The sequence folders named by `dir`: itself if it is an OTB sequence (or `synthetic`), else
/// its OTB sub-folders in name order.
fn expand(dir: &Path) -> Result<Vec<PathBuf>> {
    if dir.as_os_str() == SYNTHETIC || is_otb_dir(dir) {
        return Ok(vec![dir.to_path_buf()]);
    }
    let mut found = Vec::new();
    for entry in
        std::fs::read_dir(dir).with_context(|| format!("cannot list '{}'", dir.display()))?
    {
        let path = entry
            .with_context(|| format!("cannot list '{}'", dir.display()))?
            .path();
        if path.is_dir() && is_otb_dir(&path) {
            found.push(path);
        }
    }
    found.sort();
    if found.is_empty() {
        bail!(
            "'{}' is neither an OTB sequence (img/ + {}) nor a folder of them",
            dir.display(),
            mvision_track::sequence::GROUND_TRUTH_FILE
        );
    }
    Ok(found)
}

/// Headline figures of one row of the table.
struct Row {
    sequence: String,
    tracker: String,
    frames: usize,
    auc: f64,
    p20: f64,
    fps: f64,
}

fn table(out: &mut impl Write, rows: &[Row]) -> std::io::Result<()> {
    writeln!(
        out,
        "| sequence | tracker | frames | success AUC | precision@20px | FPS |"
    )?;
    writeln!(out, "| --- | --- | ---: | ---: | ---: | ---: |")?;
    for r in rows {
        writeln!(
            out,
            "| {} | {} | {} | {:.3} | {:.3} | {:.1} |",
            r.sequence, r.tracker, r.frames, r.auc, r.p20, r.fps
        )?;
    }
    Ok(())
}

/// Runs `mvision eval`.
pub fn run(args: &EvalArgs, out: &mut impl Write) -> Result<()> {
    let mut dirs = Vec::new();
    for d in &args.dirs {
        dirs.extend(expand(d)?);
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create output folder '{}'", args.out.display()))?;
    let options = RunOptions {
        init: None,
        max_frames: args.max_frames,
        progress: true,
    };
    let mut results: Vec<RunResult> = Vec::new();
    for dir in &dirs {
        let seq = open_sequence(dir, args.seed)?;
        if seq.ground_truth().is_none() {
            bail!(
                "sequence '{}' has no ground truth; eval needs {}",
                dir.display(),
                mvision_track::sequence::GROUND_TRUTH_FILE
            );
        }
        for name in &args.trackers {
            let (result, _) = track(name, seq.as_ref(), &options, Annotations::default())
                .with_context(|| format!("{name} on '{}'", dir.display()))?;
            let tracker_dir = args.out.join(&result.tracker);
            std::fs::create_dir_all(&tracker_dir)
                .with_context(|| format!("cannot create '{}'", tracker_dir.display()))?;
            write_otb_results(
                &tracker_dir.join(format!("{}.txt", result.sequence)),
                &result.boxes,
            )?;
            results.push(result);
        }
    }

    let row = |r: &RunResult| {
        let s = r
            .scores
            .as_ref()
            .expect("eval only runs sequences with ground truth");
        Row {
            sequence: r.sequence.clone(),
            tracker: r.tracker.clone(),
            frames: r.frames(),
            auc: s.success_auc(),
            p20: s.precision20(),
            fps: r.fps(),
        }
    };
    let per_sequence: Vec<Row> = results.iter().map(row).collect();
    let mut pooled = Vec::new();
    let mut pooled_scores = Vec::new();
    for name in &args.trackers {
        let runs: Vec<&RunResult> = results
            .iter()
            .filter(|r| r.tracker.eq_ignore_ascii_case(name))
            .collect();
        let scores = Scores::pooled(runs.iter().filter_map(|r| r.scores.as_ref()));
        let seconds: f64 = runs.iter().map(|r| r.tracking_time.as_secs_f64()).sum();
        let frames = scores.len();
        pooled.push(Row {
            sequence: format!("all ({} sequences)", dirs.len()),
            tracker: name.clone(),
            frames,
            auc: scores.success_auc(),
            p20: scores.precision20(),
            fps: if seconds > 0.0 {
                frames as f64 / seconds
            } else {
                0.0
            },
        });
        pooled_scores.push((name.clone(), scores));
    }

    let curves: Vec<(&str, &Scores)> = pooled_scores.iter().map(|(n, s)| (n.as_str(), s)).collect();
    let title_suffix = if dirs.len() == 1 {
        per_sequence
            .first()
            .map_or(String::new(), |r| r.sequence.clone())
    } else {
        format!("{} sequences", dirs.len())
    };
    let precision_png = args.out.join("precision.png");
    let success_png = args.out.join("success.png");
    plot_precision(
        &precision_png,
        &format!("Precision plots of OPE on {title_suffix}"),
        &curves,
    )?;
    plot_success(
        &success_png,
        &format!("Success plots of OPE on {title_suffix}"),
        &curves,
    )?;

    writeln!(out, "Per sequence:")?;
    writeln!(out)?;
    table(out, &per_sequence)?;
    writeln!(out)?;
    writeln!(out, "Pooled over all frames:")?;
    writeln!(out)?;
    table(out, &pooled)?;
    writeln!(out)?;
    writeln!(
        out,
        "FPS counts tracker time only (init + update; decoding excluded). Wrote {}, {} and \
         results under {}/<tracker>/.",
        precision_png.display(),
        success_png.display(),
        args.out.display()
    )?;
    if args.json {
        let runs: Vec<_> = results.iter().map(run_summary_json).collect();
        let pooled: Vec<_> = pooled
            .iter()
            .map(|r| {
                json!({
                    "tracker": r.tracker,
                    "frames": r.frames,
                    "success_auc": r.auc,
                    "precision20": r.p20,
                    "fps": r.fps,
                })
            })
            .collect();
        let doc = json!({
            "runs": runs,
            "pooled": pooled,
            "precision_plot": precision_png.display().to_string(),
            "success_plot": success_png.display().to_string(),
        });
        writeln!(out, "{doc}")?;
    }
    Ok(())
}
