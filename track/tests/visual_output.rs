//! Files meant for people: annotated PNG frames, animated GIFs and the OTB plots must decode and
//! show what they claim.

use mvision_track::draw::{annotate, GifOptions, GifWriter, GROUND_TRUTH_COLOR, RESULT_COLOR};
use mvision_track::metrics::Scores;
use mvision_track::plot::{plot_precision, plot_success, PLOT_SIZE_PX};
use mvision_track::{RectF, Sequence, SyntheticParams, SyntheticSequence, TrackOutput};

fn sequence() -> SyntheticSequence {
    SyntheticSequence::new(SyntheticParams {
        width: 96,
        height: 64,
        frames: 12,
        seed: 3,
    })
    .unwrap()
}

#[test]
fn annotated_png_frames_decode_with_the_boxes_drawn() {
    let seq = sequence();
    let tmp = tempfile::tempdir().unwrap();
    let gt = seq.ground_truth().unwrap()[4].unwrap();
    // The result box on the other half of the frame from the truth, so neither covers the other.
    let rx = if gt.x + gt.width / 2.0 > 48.0 {
        2.0
    } else {
        70.0
    };
    let result = RectF {
        x: rx,
        y: 2.0,
        width: 20.0,
        height: 14.0,
    };
    let canvas = annotate(
        &seq.frame(4).unwrap(),
        Some(gt),
        &TrackOutput::found(result, 1.0),
        false,
    );
    let path = tmp.path().join("f.png");
    canvas.save_png(&path).unwrap();
    let img = image::open(&path).unwrap().to_rgb8();
    assert_eq!(img.dimensions(), (96, 64));
    assert_eq!(img.get_pixel(rx as u32, 2).0, RESULT_COLOR);
    assert_eq!(img.get_pixel(rx as u32 + 19, 15).0, RESULT_COLOR);
    assert_eq!(
        img.get_pixel(gt.x as u32 + 1, gt.y as u32 + 1).0,
        GROUND_TRUTH_COLOR
    );
}

#[test]
fn gif_has_the_kept_frames_at_the_scaled_size() {
    let seq = sequence();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("t.gif");
    let options = GifOptions {
        every_nth: 3,
        scale: 0.5,
        delay_cs: 7,
        ..GifOptions::default()
    };
    let mut gif = GifWriter::create(&path, 96, 64, options).unwrap();
    for i in 0..seq.len() {
        let c = annotate(
            &seq.frame(i).unwrap(),
            seq.ground_truth().unwrap()[i],
            &TrackOutput::absent(),
            false,
        );
        gif.push(i, &c).unwrap();
    }
    assert_eq!(gif.finish().unwrap(), 4);

    let mut opts = gif::DecodeOptions::new();
    opts.set_color_output(gif::ColorOutput::RGBA);
    let mut dec = opts.read_info(std::fs::File::open(&path).unwrap()).unwrap();
    assert_eq!((dec.width(), dec.height()), (48, 32));
    let mut frames = 0;
    let mut distinct = std::collections::HashSet::new();
    while let Some(f) = dec.read_next_frame().unwrap() {
        assert_eq!(f.delay, 7);
        frames += 1;
        distinct.extend(f.buffer.chunks_exact(4).map(|p| [p[0], p[1], p[2]]));
    }
    assert_eq!(frames, 4);
    assert!(
        distinct.len() > 16,
        "only {} colours: the palette lost the texture",
        distinct.len()
    );

    assert!(GifWriter::create(
        &tmp.path().join("x.gif"),
        96,
        64,
        GifOptions {
            every_nth: 0,
            ..GifOptions::default()
        }
    )
    .is_err());
    let mut small =
        GifWriter::create(&tmp.path().join("y.gif"), 10, 10, GifOptions::default()).unwrap();
    let c = annotate(&seq.frame(0).unwrap(), None, &TrackOutput::absent(), false);
    assert!(small.push(0, &c).is_err());
}

#[test]
fn plots_are_png_with_lines_and_text() {
    let tmp = tempfile::tempdir().unwrap();
    let b = |x| {
        Some(RectF {
            x,
            y: 0.0,
            width: 10.0,
            height: 10.0,
        })
    };
    let good = Scores::new(&[b(0.0), b(0.0), b(0.0)], &[b(0.0), b(1.0), b(3.0)]).unwrap();
    let bad = Scores::new(&[b(0.0), b(0.0), b(0.0)], &[b(0.0), b(8.0), None]).unwrap();
    let curves = [("good", &good), ("bad", &bad)];
    type PlotFn = fn(&std::path::Path, &str, &[(&str, &Scores)]) -> anyhow::Result<()>;
    let plots: [(&str, PlotFn); 2] = [
        ("success.png", plot_success),
        ("precision.png", plot_precision),
    ];
    for (name, f) in plots {
        let path = tmp.path().join(name);
        f(&path, "test plot", &curves).unwrap();
        let img = image::open(&path).unwrap().to_rgb8();
        assert_eq!(img.dimensions(), PLOT_SIZE_PX);
        let non_white = img.pixels().filter(|p| p.0 != [255, 255, 255]).count();
        let total = (PLOT_SIZE_PX.0 * PLOT_SIZE_PX.1) as usize;
        assert!(
            non_white > total / 100 && non_white < total / 2,
            "{name}: {non_white} non-white pixels"
        );
        // Both line colours appear (first two palette entries).
        for c in [[213, 94, 0], [0, 114, 178]] {
            assert!(
                img.pixels().any(|p| p.0 == c),
                "{name}: colour {c:?} missing"
            );
        }
        // Anti-aliased text leaves gray levels between black and white.
        assert!(img
            .pixels()
            .any(|p| p.0[0] == p.0[1] && p.0[1] == p.0[2] && (60..200).contains(&p.0[0])));
    }
    assert!(plot_success(&tmp.path().join("e.png"), "t", &[]).is_err());
}
