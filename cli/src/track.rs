//! `mvision track`: one tracker over one sequence (an OTB folder, a plain image folder or the
//! generated sequence), with OTB result files, accuracy against the ground truth, and annotated
//! GIF or PNG output. Also the helpers `mvision eval` and `mvision demo` share with it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{Context, Result};
use clap::Args;
use mvision_track::draw::{annotate, GifOptions, GifWriter};
use mvision_track::output::{run_summary_json, write_otb_results};
use mvision_track::{
    make_tracker, run_sequence_with, FolderSequence, RectF, RunOptions, RunResult, Sequence,
    SyntheticParams, SyntheticSequence,
};

/// The `--seq` value that selects the generated sequence instead of a folder.
pub const SYNTHETIC: &str = "synthetic";

/// A box typed as `x,y,w,h` in pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoxArg(pub RectF);

impl FromStr for BoxArg {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let v = s
            .split(',')
            .map(|t| t.trim().parse::<f32>())
            .collect::<std::result::Result<Vec<f32>, _>>()
            .map_err(|_| format!("'{s}' is not a box: use x,y,w,h in pixels, e.g. 10,20,40,30"))?;
        match v[..] {
            [x, y, w, h] if v.iter().all(|c| c.is_finite()) && w > 0.0 && h > 0.0 => {
                Ok(Self(RectF {
                    x,
                    y,
                    width: w,
                    height: h,
                }))
            }
            _ => Err(format!(
                "'{s}' is not a box: use x,y,w,h in pixels with w and h > 0"
            )),
        }
    }
}

#[derive(Args, Debug)]
pub struct TrackArgs {
    /// Tracker to run (see `mvision track --help` for the list).
    #[arg(long, default_value = "tld", value_name = "NAME")]
    tracker: String,
    /// Sequence: an OTB folder (img/ + groundtruth_rect.txt), a folder of images, or
    /// `synthetic` for the generated sequence.
    #[arg(long, value_name = "DIR", required_unless_present = "synthetic")]
    seq: Option<PathBuf>,
    /// Run the generated sequence (same as --seq synthetic).
    #[arg(long, conflicts_with = "seq")]
    synthetic: bool,
    /// Seed of the generated sequence.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Initial box x,y,w,h in pixels (default: the first ground-truth row).
    #[arg(long, value_name = "x,y,w,h", allow_hyphen_values = true)]
    init: Option<BoxArg>,
    /// Write the per-frame results in OTB format to DIR/<sequence>_<tracker>.txt.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print one JSON object (the only stdout line) instead of text.
    #[arg(long)]
    json: bool,
    /// Write an animated GIF of the annotated frames.
    #[arg(long, value_name = "FILE")]
    save_gif: Option<PathBuf>,
    /// Write every annotated frame as DIR/00001.png, ...
    #[arg(long, value_name = "DIR")]
    save_frames: Option<PathBuf>,
    /// Also draw the tracker's detections (thin, light blue).
    #[arg(long)]
    draw_detections: bool,
    /// Track at most N frames (the first included).
    #[arg(long, value_name = "N")]
    max_frames: Option<usize>,
    /// GIF: keep one frame in N.
    #[arg(long, value_name = "N", default_value_t = 1)]
    gif_step: usize,
    /// GIF: scale factor in (0, 1].
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    gif_scale: f32,
    /// GIF: delay per GIF frame in hundredths of a second.
    #[arg(long, value_name = "CS", default_value_t = 4)]
    gif_delay: u16,
}

/// Opens `dir`, or generates the synthetic sequence when `dir` is exactly `synthetic` (a folder
/// of that name is reached as `./synthetic`).
pub fn open_sequence(dir: &Path, seed: u64) -> Result<Box<dyn Sequence>> {
    if dir.as_os_str() == SYNTHETIC {
        return Ok(Box::new(SyntheticSequence::new(SyntheticParams {
            seed,
            ..SyntheticParams::default()
        })?));
    }
    let seq = FolderSequence::open(dir)
        .with_context(|| format!("cannot open sequence '{}'", dir.display()))?;
    Ok(Box::new(seq))
}

/// Where annotated frames go during a run.
#[derive(Default)]
pub struct Annotations {
    /// The GIF being written, if any.
    pub gif: Option<GifWriter>,
    /// The folder for PNG frames, if any.
    pub frames_dir: Option<PathBuf>,
    /// Draw detections as well.
    pub draw_detections: bool,
}

/// Runs `tracker_name` on `seq`, drawing into `annotations`; returns the result and the number
/// of GIF frames written.
pub fn track(
    tracker_name: &str,
    seq: &dyn Sequence,
    options: &RunOptions,
    mut annotations: Annotations,
) -> Result<(RunResult, Option<usize>)> {
    let (w, h) = seq.size();
    let mut tracker = make_tracker(tracker_name, w, h)?;
    if let Some(dir) = &annotations.frames_dir {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create frame folder '{}'", dir.display()))?;
    }
    let gt = seq.ground_truth();
    let drawing = annotations.gif.is_some() || annotations.frames_dir.is_some();
    let result = run_sequence_with(tracker.as_mut(), seq, options, |i, frame, out| {
        if !drawing {
            return Ok(());
        }
        let canvas = annotate(
            frame,
            gt.and_then(|g| g[i]),
            out,
            annotations.draw_detections,
        );
        if let Some(gif) = annotations.gif.as_mut() {
            gif.push(i, &canvas)?;
        }
        if let Some(dir) = &annotations.frames_dir {
            canvas.save_png(&dir.join(format!("{:05}.png", i + 1)))?;
        }
        Ok(())
    })?;
    let gif_frames = annotations.gif.map(GifWriter::finish).transpose()?;
    Ok((result, gif_frames))
}

/// The accuracy line of a run, or a note that there is no ground truth.
pub fn accuracy_line(result: &RunResult) -> String {
    match &result.scores {
        Some(s) => format!(
            "success AUC {:.3}, precision@20px {:.3} ({} frames against ground truth, OTB protocol)",
            s.success_auc(),
            s.precision20(),
            s.len()
        ),
        None => "no ground truth: accuracy not measured".to_string(),
    }
}

/// The speed line of a run.
pub fn speed_line(result: &RunResult) -> String {
    format!(
        "{} frames {}x{} in {:.3} s of tracker time: {:.1} FPS (init + update only; decoding and \
         drawing excluded)",
        result.frames(),
        result.frame_size.0,
        result.frame_size.1,
        result.tracking_time.as_secs_f64(),
        result.fps()
    )
}

/// Runs `mvision track`.
pub fn run(args: &TrackArgs, out: &mut impl Write) -> Result<()> {
    let seq_path = match (&args.seq, args.synthetic) {
        (_, true) => PathBuf::from(SYNTHETIC),
        (Some(p), false) => p.clone(),
        (None, false) => anyhow::bail!("give --seq DIR or --synthetic"),
    };
    let seq = open_sequence(&seq_path, args.seed)?;
    let annotations = Annotations {
        gif: match &args.save_gif {
            Some(path) => {
                let (w, h) = seq.size();
                let options = GifOptions {
                    delay_cs: args.gif_delay,
                    every_nth: args.gif_step,
                    scale: args.gif_scale,
                    ..GifOptions::default()
                };
                Some(GifWriter::create(path, w, h, options)?)
            }
            None => None,
        },
        frames_dir: args.save_frames.clone(),
        draw_detections: args.draw_detections,
    };
    let options = RunOptions {
        init: args.init.map(|b| b.0),
        max_frames: args.max_frames,
        progress: !args.json,
    };
    let (result, gif_frames) = track(&args.tracker, seq.as_ref(), &options, annotations)?;
    let mut written = Vec::new();
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create output folder '{}'", dir.display()))?;
        let path = dir.join(format!("{}_{}.txt", result.sequence, result.tracker));
        write_otb_results(&path, &result.boxes)?;
        written.push(path.display().to_string());
    }
    if let (Some(path), Some(n)) = (&args.save_gif, gif_frames) {
        written.push(format!("{} ({n} frames)", path.display()));
    }
    if let Some(dir) = &args.save_frames {
        written.push(format!(
            "{}/ ({} PNG frames)",
            dir.display(),
            result.frames()
        ));
    }
    if args.json {
        writeln!(out, "{}", run_summary_json(&result))?;
        return Ok(());
    }
    writeln!(out, "{} on {}", result.tracker, result.sequence)?;
    writeln!(out, "{}", speed_line(&result))?;
    writeln!(out, "{}", accuracy_line(&result))?;
    let absent = result.boxes.iter().filter(|b| b.is_none()).count();
    writeln!(out, "target reported absent on {absent} frames")?;
    for w in written {
        writeln!(out, "wrote {w}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_parse() {
        let b: BoxArg = "1, 2.5,30,40".parse().unwrap();
        assert_eq!(b.0.x, 1.0);
        assert_eq!(b.0.y, 2.5);
        assert!("1,2,3".parse::<BoxArg>().is_err());
        assert!("1,2,0,4".parse::<BoxArg>().is_err());
        assert!("a,b,c,d".parse::<BoxArg>().is_err());
    }
}
