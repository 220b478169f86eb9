//! Image sequences with optional ground truth: the [`Sequence`] abstraction, and
//! [`FolderSequence`] for folders on disk — the OTB benchmark layout (`img/*.jpg|png` plus
//! `groundtruth_rect.txt`) and plain folders of images (no ground truth). Frames are decoded
//! one at a time, when asked for, so a long clip never sits in memory.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context, Result};
use mvision_core::RectF;

use crate::Frame;

/// The OTB ground-truth file name.
pub const GROUND_TRUTH_FILE: &str = "groundtruth_rect.txt";

/// The OTB frame folder name.
pub const FRAME_DIR: &str = "img";

/// A finite sequence of equally sized frames, possibly with ground truth.
pub trait Sequence {
    /// A short name for reports (the folder name, `synthetic`).
    fn name(&self) -> &str;

    /// Number of frames.
    fn len(&self) -> usize;

    /// True if there are no frames (never for sequences made by this crate).
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Frame size in pixels, `(width, height)`.
    fn size(&self) -> (usize, usize);

    /// Frame `index` (0-based), decoded or generated now.
    ///
    /// # Errors
    /// `index >= len()`, an unreadable or undecodable file (named in the message), or a frame
    /// whose size differs from [`size`](Sequence::size).
    fn frame(&self, index: usize) -> Result<Frame>;

    /// One box per frame (`None` = target absent), or `None` when there is no ground truth.
    fn ground_truth(&self) -> Option<&[Option<RectF>]>;
}

/// A folder of image files: the OTB layout or a plain folder.
#[derive(Clone, Debug)]
pub struct FolderSequence {
    name: String,
    files: Vec<PathBuf>,
    size: (usize, usize),
    ground_truth: Option<Vec<Option<RectF>>>,
}

/// True if `path` names a file this crate decodes (`.jpg`, `.jpeg`, `.png`, any case).
fn is_image_file(path: &Path) -> bool {
    path.is_file()
        && path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "jpg" | "jpeg" | "png"))
}

/// True if `dir` looks like one OTB sequence: it has an `img/` folder or a
/// `groundtruth_rect.txt`.
pub fn is_otb_dir(dir: &Path) -> bool {
    dir.join(FRAME_DIR).is_dir() || dir.join(GROUND_TRUTH_FILE).is_file()
}

/// Opens the sequence in `dir`, a shorthand for [`FolderSequence::open`].
///
/// # Errors
/// As [`FolderSequence::open`].
pub fn open_sequence(dir: &Path) -> Result<FolderSequence> {
    FolderSequence::open(dir)
}

impl FolderSequence {
    /// Opens `dir`: if it holds `img/`, the frames are the images in `img/` and the ground truth
    /// is `groundtruth_rect.txt` when present; otherwise the frames are the images in `dir`
    /// itself, with no ground truth. Frames are taken in file-name order (byte-wise, so
    /// `00001.jpg` … sort as numbers when zero-padded). Only the first frame's header is read
    /// now, for the size.
    ///
    /// # Errors
    /// A missing or unreadable folder, a folder with no PNG/JPEG file, a malformed ground-truth
    /// file (see [`parse_ground_truth`]), or a ground-truth row count different from the frame
    /// count (OTB clips whose ground truth covers a sub-range must be trimmed first).
    pub fn open(dir: &Path) -> Result<Self> {
        ensure!(
            dir.is_dir(),
            "sequence folder '{}' does not exist or is not a folder",
            dir.display()
        );
        let otb = dir.join(FRAME_DIR).is_dir();
        let frame_dir = if otb {
            dir.join(FRAME_DIR)
        } else {
            dir.to_path_buf()
        };
        let mut files = Vec::new();
        for entry in fs::read_dir(&frame_dir)
            .with_context(|| format!("cannot list '{}'", frame_dir.display()))?
        {
            let path = entry
                .with_context(|| format!("cannot list '{}'", frame_dir.display()))?
                .path();
            if is_image_file(&path) {
                files.push(path);
            }
        }
        files.sort();
        ensure!(
            !files.is_empty(),
            "no .jpg or .png frames in '{}'",
            frame_dir.display()
        );
        let (w, h) = image::image_dimensions(&files[0])
            .with_context(|| format!("cannot read the size of '{}'", files[0].display()))?;
        let gt_path = dir.join(GROUND_TRUTH_FILE);
        let ground_truth = if otb && gt_path.is_file() {
            let text = fs::read_to_string(&gt_path)
                .with_context(|| format!("cannot read '{}'", gt_path.display()))?;
            let rows = parse_ground_truth(&text)
                .with_context(|| format!("bad ground truth in '{}'", gt_path.display()))?;
            ensure!(
                rows.len() == files.len(),
                "'{}' has {} rows but '{}' has {} frames",
                gt_path.display(),
                rows.len(),
                frame_dir.display(),
                files.len()
            );
            Some(rows)
        } else {
            None
        };
        let name = dir
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| dir.display().to_string());
        Ok(Self {
            name,
            files,
            size: (w as usize, h as usize),
            ground_truth,
        })
    }

    /// The frame files, in frame order.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }
}

impl Sequence for FolderSequence {
    fn name(&self) -> &str {
        &self.name
    }

    fn len(&self) -> usize {
        self.files.len()
    }

    fn size(&self) -> (usize, usize) {
        self.size
    }

    fn frame(&self, index: usize) -> Result<Frame> {
        let path = self.files.get(index).with_context(|| {
            format!(
                "frame {index} is past the end of '{}' ({} frames)",
                self.name,
                self.files.len()
            )
        })?;
        let image = image::open(path)
            .with_context(|| format!("cannot decode frame '{}'", path.display()))?;
        let frame =
            Frame::from_image(&image).with_context(|| format!("bad frame '{}'", path.display()))?;
        ensure!(
            (frame.width(), frame.height()) == self.size,
            "frame '{}' is {}x{}, the sequence's first frame {}x{}",
            path.display(),
            frame.width(),
            frame.height(),
            self.size.0,
            self.size.1
        );
        Ok(frame)
    }

    fn ground_truth(&self) -> Option<&[Option<RectF>]> {
        self.ground_truth.as_deref()
    }
}

/// Parses an OTB ground-truth text: one row per frame, `x y w h` in pixels separated by commas,
/// tabs or spaces (runs of them count as one). A row whose four values are all `NaN` (any case)
/// means the target is absent. Blank lines are skipped, so a trailing newline is fine.
///
/// # Errors
/// A row without exactly four values, a value that is not a number, some but not all values
/// `NaN`, an infinite value, or a non-positive width or height; the message gives the line
/// number (1-based).
pub fn parse_ground_truth(text: &str) -> Result<Vec<Option<RectF>>> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let values = line
            .split([',', '\t', ' '])
            .filter(|t| !t.is_empty())
            .map(|t| {
                t.parse::<f32>()
                    .with_context(|| format!("line {}: '{t}' is not a number", i + 1))
            })
            .collect::<Result<Vec<f32>>>()?;
        ensure!(
            values.len() == 4,
            "line {}: expected 4 values (x,y,w,h), found {}",
            i + 1,
            values.len()
        );
        let nans = values.iter().filter(|v| v.is_nan()).count();
        if nans == 4 {
            rows.push(None);
            continue;
        }
        if nans > 0 || values.iter().any(|v| v.is_infinite()) {
            bail!(
                "line {}: mixes numbers with NaN or infinity: '{line}'",
                i + 1
            );
        }
        ensure!(
            values[2] > 0.0 && values[3] > 0.0,
            "line {}: width and height must be positive: '{line}'",
            i + 1
        );
        rows.push(Some(RectF {
            x: values[0],
            y: values[1],
            width: values[2],
            height: values[3],
        }));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ground_truth_takes_every_separator_and_nan_rows() {
        let rows =
            parse_ground_truth("1,2,3,4\n5\t6\t7\t8\nNaN,NaN,NaN,NaN\n 9 10  11 12 \n\n").unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!(
            rows[1],
            Some(RectF {
                x: 5.0,
                y: 6.0,
                width: 7.0,
                height: 8.0
            })
        );
        assert_eq!(rows[2], None);
        assert_eq!(rows[3].unwrap().height, 12.0);
    }

    #[test]
    fn ground_truth_errors_name_the_line() {
        let e = format!("{:#}", parse_ground_truth("1,2,3,4\n1,2,3\n").unwrap_err());
        assert!(e.contains("line 2"), "{e}");
        assert!(parse_ground_truth("1,2,x,4").is_err());
        assert!(parse_ground_truth("NaN,2,3,4").is_err());
        assert!(parse_ground_truth("1,2,0,4").is_err());
    }
}
