//! Reading sequences: the OTB layout and plain folders (generated in a temporary folder), the
//! generated sequence's properties, and the real clips under `../shared/data/tracking` when
//! they exist.

mod common;

use std::path::Path;

use image::{Rgb, RgbImage};
use mvision_track::sequence::is_otb_dir;
use mvision_track::{FolderSequence, RectF, Sequence, SyntheticParams, SyntheticSequence};

/// Writes `n` PNG frames `w × h` into `dir`, frame `i` filled with gray level `10 · i`.
fn write_frames(dir: &Path, n: usize, w: u32, h: u32) {
    std::fs::create_dir_all(dir).unwrap();
    for i in 0..n {
        let v = (10 * i) as u8;
        let img = RgbImage::from_pixel(w, h, Rgb([v, v, v]));
        img.save(dir.join(format!("{:04}.png", i + 1))).unwrap();
    }
}

#[test]
fn otb_folder_reads_frames_in_order_and_nan_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let seq_dir = tmp.path().join("tiny");
    write_frames(&seq_dir.join("img"), 3, 24, 16);
    // A stray non-image file must be ignored.
    std::fs::write(seq_dir.join("img").join("notes.txt"), "x").unwrap();
    std::fs::write(
        seq_dir.join("groundtruth_rect.txt"),
        "1\t2\t10\t8\nNaN\tNaN\tNaN\tNaN\n3.5\t4\t10\t8\n",
    )
    .unwrap();
    assert!(is_otb_dir(&seq_dir));
    let seq = FolderSequence::open(&seq_dir).unwrap();
    assert_eq!(seq.name(), "tiny");
    assert_eq!(seq.len(), 3);
    assert_eq!(seq.size(), (24, 16));
    let gt = seq.ground_truth().unwrap();
    assert_eq!(gt[1], None);
    assert_eq!(
        gt[2],
        Some(RectF {
            x: 3.5,
            y: 4.0,
            width: 10.0,
            height: 8.0
        })
    );
    for i in 0..3 {
        let f = seq.frame(i).unwrap();
        assert_eq!((f.width(), f.height()), (24, 16));
        assert!(f.gray_bytes().iter().all(|&p| p == (10 * i) as u8));
        assert_eq!(f.rgb_bytes().len(), 24 * 16 * 3);
    }
    assert!(seq.frame(3).is_err());
}

#[test]
fn otb_row_count_mismatch_is_an_error_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    write_frames(&tmp.path().join("img"), 2, 8, 8);
    std::fs::write(tmp.path().join("groundtruth_rect.txt"), "1,1,2,2\n").unwrap();
    let e = format!("{:#}", FolderSequence::open(tmp.path()).unwrap_err());
    assert!(
        e.contains("groundtruth_rect.txt") && e.contains("1 rows"),
        "{e}"
    );
}

#[test]
fn bad_frames_are_errors_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    write_frames(tmp.path(), 1, 8, 8);
    // A second frame of another size, and a third that is not an image at all.
    RgbImage::new(9, 8)
        .save(tmp.path().join("0002.png"))
        .unwrap();
    std::fs::write(tmp.path().join("0003.png"), b"not a png").unwrap();
    let seq = FolderSequence::open(tmp.path()).unwrap();
    let e = format!("{:#}", seq.frame(1).unwrap_err());
    assert!(e.contains("0002.png") && e.contains("9x8"), "{e}");
    let e = format!("{:#}", seq.frame(2).unwrap_err());
    assert!(e.contains("0003.png"), "{e}");
}

#[test]
fn plain_folder_has_no_ground_truth() {
    let tmp = tempfile::tempdir().unwrap();
    write_frames(tmp.path(), 4, 12, 10);
    assert!(!is_otb_dir(tmp.path()));
    let seq = FolderSequence::open(tmp.path()).unwrap();
    assert_eq!(seq.len(), 4);
    assert_eq!(seq.size(), (12, 10));
    assert!(seq.ground_truth().is_none());
    assert!(FolderSequence::open(&tmp.path().join("missing")).is_err());
    let empty = tempfile::tempdir().unwrap();
    assert!(FolderSequence::open(empty.path()).is_err());
}

#[test]
fn synthetic_sequence_is_deterministic_and_truthful() {
    let params = SyntheticParams {
        frames: 120,
        ..SyntheticParams::default()
    };
    let a = SyntheticSequence::new(params).unwrap();
    let b = SyntheticSequence::new(params).unwrap();
    let c = SyntheticSequence::new(SyntheticParams { seed: 2, ..params }).unwrap();
    assert_eq!(a.ground_truth(), b.ground_truth());
    assert_eq!(a.frame(37).unwrap(), b.frame(37).unwrap());
    assert_ne!(a.frame(37).unwrap(), c.frame(37).unwrap());

    let (w, h) = a.size();
    let gt = a.ground_truth().unwrap();
    assert_eq!(gt.len(), 120);
    let hidden: Vec<usize> = (0..gt.len()).filter(|&i| gt[i].is_none()).collect();
    assert!(
        (2..=15).contains(&hidden.len()),
        "fully hidden on {} frames",
        hidden.len()
    );
    // One contiguous occlusion, not at the start.
    assert!(hidden[0] > 10);
    assert_eq!(hidden.last().unwrap() - hidden[0] + 1, hidden.len());

    let (mut min_area, mut max_area) = (f32::MAX, 0f32);
    for (i, truth) in gt.iter().enumerate() {
        let obj = a.object_box(i).unwrap();
        assert!(obj.is_inside(w, h), "frame {i}: {obj:?}");
        if let Some(g) = *truth {
            assert_eq!(g, obj.to_f32());
            min_area = min_area.min(g.width * g.height);
            max_area = max_area.max(g.width * g.height);
        }
    }
    // Scale swings between about 0.7 and 1.4 (area ratio up to 4).
    assert!(max_area / min_area > 2.5, "{min_area} .. {max_area}");

    // The object is visible where the truth says so and hidden where it says absent: its
    // bright centre disc shows in the frame only when present.
    for i in [hidden[0] - 20, hidden[0] + hidden.len() / 2] {
        let f = a.frame(i).unwrap();
        let obj = a.object_box(i).unwrap();
        let (cx, cy) = (
            (obj.x + obj.width / 2) as usize,
            (obj.y + obj.height / 2) as usize,
        );
        let centre = f.rgb_bytes()[3 * (cy * w + cx)..3 * (cy * w + cx) + 3].to_vec();
        assert_eq!(centre == [245, 240, 220], gt[i].is_some(), "frame {i}");
    }
}

#[test]
fn synthetic_sequence_rejects_bad_parameters() {
    let p = SyntheticParams::default();
    assert!(SyntheticSequence::new(SyntheticParams { width: 32, ..p }).is_err());
    assert!(SyntheticSequence::new(SyntheticParams { frames: 0, ..p }).is_err());
    let short = SyntheticSequence::new(SyntheticParams { frames: 5, ..p }).unwrap();
    assert!(short.ground_truth().unwrap().iter().all(Option::is_some));
}

#[test]
fn real_clips_have_the_documented_frames_sizes_and_ground_truth() {
    let Some(root) = common::real_clips("reading the real clips") else {
        return;
    };
    let expected = [
        ("01_david", 761, (320, 240), false),
        ("02_jumping", 313, (352, 288), false),
        ("03_pedestrian1", 140, (320, 240), false),
        ("06_car", 945, (320, 240), true),
    ];
    for (name, frames, size, has_absent) in expected {
        let seq = FolderSequence::open(&root.join(name)).unwrap();
        assert_eq!(seq.name(), name);
        assert_eq!(seq.len(), frames, "{name}");
        assert_eq!(seq.size(), size, "{name}");
        let gt = seq.ground_truth().unwrap();
        assert_eq!(gt.len(), frames);
        assert!(
            gt[0].is_some(),
            "{name}: first row must give the initial box"
        );
        assert_eq!(gt.iter().any(Option::is_none), has_absent, "{name}");
        let last = seq.frame(frames - 1).unwrap();
        assert_eq!((last.width(), last.height()), size);
    }
}
