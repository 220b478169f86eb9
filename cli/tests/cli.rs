//! End-to-end tests of the `mvision` binary: each runs the built executable in its own temporary
//! directory and checks exit status, output files and messages. Filter results are compared
//! pixel for pixel with direct calls into `mvision-core`, the reference the CLI must not drift
//! from (file I/O is PNG, so lossless).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

use image::GrayImage;
use mvision_core::filter::{self, Kernel2dQ};
use mvision_core::image::{ImageView, ImageViewMut};
use mvision_core::{pyramid, resize, Border};

/// A directory under the system temp dir, unique per test and process, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "mvision-cli-test-{name}-{}-{n}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        Self(dir)
    }

    fn path(&self, file: &str) -> PathBuf {
        self.0.join(file)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the binary with `args`, from `cwd`.
fn mvision<S: AsRef<OsStr>>(cwd: &Path, args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mvision"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run mvision")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A failure must be a non-zero exit with a message, never a panic.
fn assert_clean_failure(out: &Output, expect_in_message: &str) {
    let err = stderr(out);
    assert!(
        !out.status.success(),
        "expected failure, got success: {err}"
    );
    assert!(
        err.contains("error"),
        "stderr should carry an error message: {err:?}"
    );
    assert!(
        err.contains(expect_in_message),
        "stderr should mention {expect_in_message:?}: {err:?}"
    );
    assert!(!err.contains("panicked"), "panic text on stderr: {err}");
}

/// A deterministic test pattern with edges, ramps and an odd size (37 × 23) so borders,
/// rounding and the last row and column are all exercised.
fn pattern() -> GrayImage {
    GrayImage::from_fn(37, 23, |x, y| {
        let v = (x * 37 + y * 91 + (x * y) % 13 * 7) % 256;
        let v = if (8..20).contains(&x) && (5..14).contains(&y) {
            255 - v / 4
        } else {
            v
        };
        image::Luma([v as u8])
    })
}

/// Writes the pattern as PNG in `dir` and returns its path.
fn write_pattern(dir: &TempDir) -> (PathBuf, GrayImage) {
    let img = pattern();
    let path = dir.path("in.png");
    img.save(&path).expect("write test PNG");
    (path, img)
}

fn load(path: &Path) -> GrayImage {
    image::open(path)
        .unwrap_or_else(|e| panic!("decode {}: {e}", path.display()))
        .to_luma8()
}

/// Runs `filter` with `args` followed by IN and OUT, asserts success, returns the output image.
fn run_filter(dir: &TempDir, input: &Path, args: &[&str]) -> GrayImage {
    let out_path = dir.path("out.png");
    let mut all: Vec<&OsStr> = vec![OsStr::new("filter")];
    all.extend(args.iter().map(OsStr::new));
    all.push(input.as_os_str());
    all.push(out_path.as_os_str());
    let out = mvision(&dir.0, &all);
    assert!(
        out.status.success(),
        "filter {args:?} failed: {}",
        stderr(&out)
    );
    load(&out_path)
}

/// Applies a core `u8` operation to `src`, producing a `dst_w × dst_h` image.
fn reference(
    src: &GrayImage,
    dst_size: (u32, u32),
    op: impl FnOnce(&ImageView<'_, u8>, &mut ImageViewMut<'_, u8>),
) -> GrayImage {
    let (w, h) = (src.width() as usize, src.height() as usize);
    let mut dst = GrayImage::new(dst_size.0, dst_size.1);
    let view = ImageView::packed(src.as_raw(), w, h).unwrap();
    let mut dview =
        ImageViewMut::packed(&mut dst, dst_size.0 as usize, dst_size.1 as usize).unwrap();
    op(&view, &mut dview);
    dst
}

#[test]
fn info_reports_version_and_backends() {
    let dir = TempDir::new("info");
    let out = mvision(&dir.0, &["info"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(mvision_core::VERSION), "{text}");
    assert!(text.contains("opencl") && text.contains("cuda"), "{text}");

    let out = mvision(&dir.0, &["info", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    assert_eq!(v["version"], mvision_core::VERSION);
    let backends = v["backends"].as_array().unwrap();
    assert_eq!(backends[0]["name"], "cpu");
    assert_eq!(backends[0]["available"], true);
    // Availability is what the library itself reports on this machine, and every available
    // GPU backend lists at least one device.
    let bits = mvision::context::mv_backends_available();
    for (b, bit) in backends.iter().zip([1u32, 2, 4]) {
        assert_eq!(b["available"], bits & bit != 0, "{b}");
        if bit != 1 && bits & bit != 0 {
            let listed = v["gpu_devices"].as_array().unwrap().iter().any(|d| {
                d["backend"] == b["name"]
                    && d["name"].is_string()
                    && d["max_parameter_bytes"].as_u64().is_some_and(|n| n > 0)
                    && d["taps_by_value"].is_boolean()
            });
            assert!(listed, "{v}");
        }
    }

    let out = mvision(&dir.0, &["--version"]);
    assert!(out.status.success());
    assert!(stdout(&out).contains(mvision_core::VERSION));
}

#[test]
fn demo_writes_the_expected_pngs() {
    let dir = TempDir::new("demo");
    let out_dir = dir.path("out");
    let out = mvision(
        &dir.0,
        &[
            OsStr::new("demo"),
            OsStr::new("--out"),
            out_dir.as_os_str(),
            OsStr::new("--size"),
            OsStr::new("96x64"),
            OsStr::new("--track-frames"),
            OsStr::new("40"),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("central window"), "{text}");
    assert!(text.contains("resize_half.png"), "{text}");
    assert!(text.contains("success AUC"), "{text}");
    assert!(text.contains("FPS"), "{text}");
    let gif = std::fs::read(out_dir.join("track.gif")).expect("track.gif written");
    assert!(gif.starts_with(b"GIF89a"));

    let expected = [
        ("input.png", 96, 64),
        ("gaussian.png", 96, 64),
        ("box.png", 96, 64),
        ("sobel_magnitude.png", 96, 64),
        ("sharpen.png", 96, 64),
        // 48 × 32 is the last level whose larger side is ≥ 40 px.
        ("pyramid_1.png", 48, 32),
        ("resize_half.png", 48, 32),
    ];
    for (name, w, h) in expected {
        let img = load(&out_dir.join(name));
        assert_eq!(img.dimensions(), (w, h), "{name}");
    }
    assert!(!out_dir.join("pyramid_2.png").exists());

    // The synthetic input, and so every result, is deterministic.
    let again = dir.path("again");
    let out = mvision(
        &dir.0,
        &[
            OsStr::new("demo"),
            OsStr::new("--out"),
            again.as_os_str(),
            OsStr::new("--size"),
            OsStr::new("96x64"),
            OsStr::new("--track-frames"),
            OsStr::new("40"),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    for name in ["input.png", "gaussian.png", "sharpen.png"] {
        assert_eq!(
            load(&out_dir.join(name)),
            load(&again.join(name)),
            "{name} differs between runs"
        );
    }
}

#[test]
fn gaussian_matches_core_exactly() {
    let dir = TempDir::new("gaussian");
    let (input, src) = write_pattern(&dir);
    let got = run_filter(&dir, &input, &["--op", "gaussian", "--sigma", "1.5"]);
    let want = reference(&src, src.dimensions(), |s, d| {
        let mut scratch = vec![0i32; filter::separable_scratch_len(s.width(), 15, 15)];
        filter::gaussian_blur_u8(s, d, 0, 1.5, Border::Reflect101, &mut scratch).unwrap();
    });
    assert_eq!(got, want);
}

#[test]
fn box_with_replicate_border_matches_core_exactly() {
    let dir = TempDir::new("box");
    let (input, src) = write_pattern(&dir);
    let args = ["--op", "box", "--ksize", "5", "--border", "replicate"];
    let got = run_filter(&dir, &input, &args);
    let want = reference(&src, src.dimensions(), |s, d| {
        let mut scratch = vec![0i32; filter::separable_scratch_len(s.width(), 5, 5)];
        filter::box_blur_u8(s, d, 5, Border::Replicate, &mut scratch).unwrap();
    });
    assert_eq!(got, want);
}

#[test]
fn kernel_is_quantised_at_q14_and_matches_core() {
    let dir = TempDir::new("kernel");
    let (input, src) = write_pattern(&dir);
    // Leading '-' must be accepted as a value, not taken for a flag.
    let args = [
        "--op",
        "kernel",
        "--kernel",
        "-0.5,0.25,0; 0.125,1.5,-0.3; 0,0.1,-0.2",
        "--border",
        "constant:7",
    ];
    let got = run_filter(&dir, &input, &args);
    let coeffs = [-0.5, 0.25, 0.0, 0.125, 1.5, -0.3, 0.0, 0.1, -0.2];
    let kernel = Kernel2dQ::from_f32(3, &coeffs, 14).unwrap();
    let want = reference(&src, src.dimensions(), |s, d| {
        let mut scratch = vec![0i32; filter::filter2d_scratch_len(s.width(), 3)];
        filter::filter2d_u8(s, d, &kernel, Border::Constant(7), &mut scratch).unwrap();
    });
    assert_eq!(got, want);
}

#[test]
fn pyrdown_and_resize_match_core_exactly() {
    let dir = TempDir::new("pyr");
    let (input, src) = write_pattern(&dir);
    let got = run_filter(&dir, &input, &["--op", "pyrdown"]);
    let want = reference(&src, (19, 12), |s, d| {
        let mut scratch = vec![0i32; pyramid::pyr_down_scratch_len(s.width())];
        pyramid::pyr_down_u8(s, d, Border::Reflect101, &mut scratch).unwrap();
    });
    assert_eq!(got, want);

    let args = ["--op", "resize", "--width", "20", "--height", "9"];
    let got = run_filter(&dir, &input, &args);
    let want = reference(&src, (20, 9), |s, d| {
        let mut scratch = vec![0i32; resize::resize_scratch_len(20)];
        resize::resize_bilinear_u8(s, d, &mut scratch).unwrap();
    });
    assert_eq!(got, want);
}

#[test]
fn sobel_writes_magnitude_and_derivatives_with_documented_scaling() {
    let dir = TempDir::new("sobel");
    let (input, src) = write_pattern(&dir);
    let (dx_path, dy_path) = (dir.path("dx.png"), dir.path("dy.png"));
    let args = [
        "--op",
        "sobel",
        "--dx",
        dx_path.to_str().unwrap(),
        "--dy",
        dy_path.to_str().unwrap(),
    ];
    let magnitude = run_filter(&dir, &input, &args);

    let (w, h) = (src.width() as usize, src.height() as usize);
    let (mut dx, mut dy) = (vec![0i16; w * h], vec![0i16; w * h]);
    let view = ImageView::packed(src.as_raw(), w, h).unwrap();
    let mut scratch = vec![0i32; filter::separable_scratch_len(w, 3, 3)];
    filter::sobel_u8(
        &view,
        &mut ImageViewMut::packed(&mut dx, w, h).unwrap(),
        &mut ImageViewMut::packed(&mut dy, w, h).unwrap(),
        Border::Reflect101,
        &mut scratch,
    )
    .unwrap();
    let map_d = |d: i16| (128.0 + f32::from(d) / 8.0).round().clamp(0.0, 255.0) as u8;
    let map_m = |a: i16, b: i16| {
        let (a, b) = (f32::from(a), f32::from(b));
        ((a * a + b * b).sqrt() / 4.0).round().clamp(0.0, 255.0) as u8
    };
    let want_dx: Vec<u8> = dx.iter().map(|&d| map_d(d)).collect();
    let want_dy: Vec<u8> = dy.iter().map(|&d| map_d(d)).collect();
    let want_m: Vec<u8> = dx.iter().zip(&dy).map(|(&a, &b)| map_m(a, b)).collect();
    assert_eq!(load(&dx_path).into_raw(), want_dx);
    assert_eq!(load(&dy_path).into_raw(), want_dy);
    assert_eq!(magnitude.into_raw(), want_m);
}

#[test]
fn float_path_is_close_to_the_fixed_point_path() {
    let dir = TempDir::new("float");
    let (input, _) = write_pattern(&dir);
    let fixed = run_filter(&dir, &input, &["--op", "gaussian", "--sigma", "1.2"]);
    let float = run_filter(
        &dir,
        &input,
        &["--op", "gaussian", "--sigma", "1.2", "--float"],
    );
    let worst = fixed
        .as_raw()
        .iter()
        .zip(float.as_raw())
        .map(|(&a, &b)| (a as i32 - b as i32).abs())
        .max()
        .unwrap();
    assert!(worst <= 1, "u8 and f32 paths differ by {worst}");
}

#[test]
fn bad_inputs_fail_cleanly() {
    let dir = TempDir::new("bad");
    let (input, _) = write_pattern(&dir);
    let input = input.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["filter", "--op", "gaussian", "missing.png", "o.png"],
            "missing.png",
        ),
        (
            &["filter", "--op", "box", "--ksize", "4", input, "o.png"],
            "odd",
        ),
        (
            &[
                "filter", "--op", "kernel", "--kernel", "1,x,3", input, "o.png",
            ],
            "not a number",
        ),
        (
            &[
                "filter", "--op", "kernel", "--kernel", "1,2;3,4", input, "o.png",
            ],
            "odd",
        ),
        (
            &[
                "filter",
                "--op",
                "kernel",
                "--kernel",
                "1,2,3;4,5",
                input,
                "o.png",
            ],
            "square",
        ),
        (&["filter", "--op", "blur", input, "o.png"], "blur"),
        (
            &["filter", "--op", "gaussian", "--sigma", "3", input, "o.png"],
            "2.33",
        ),
        (
            &[
                "filter", "--op", "gaussian", "--sigma", "-1", input, "o.png",
            ],
            "positive",
        ),
        (&["filter", "--op", "gaussian", input, "o.bmp"], ".png"),
        (
            &["filter", "--op", "box", "--sigma", "1", input, "o.png"],
            "does not apply",
        ),
        (&["filter", "--op", "resize", input, "o.png"], "--width"),
        (
            &["filter", "--op", "box", "--border", "wrap", input, "o.png"],
            "wrap",
        ),
        (&["demo", "--size", "big"], "WxH"),
    ];
    for (args, needle) in cases {
        let out = mvision(&dir.0, args);
        assert_clean_failure(&out, needle);
    }
    // A failed run must not leave an output behind.
    assert!(!dir.path("o.png").exists());
}

#[test]
fn convert_writes_a_model_that_parses_and_reports_unsupported_input() {
    let dir = TempDir::new("convert");
    let onnx = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../convert/tests/onnx-node/cases/custom_mtcnn_like_chain/model.onnx");
    let out_path = dir.path("m.mvnn");
    let args = [
        OsStr::new("convert"),
        onnx.as_os_str(),
        OsStr::new("-o"),
        out_path.as_os_str(),
    ];
    let out = mvision(&dir.0, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("nodes 5") && text.contains("arena "),
        "{text}"
    );
    assert!(text.contains("fused activations 1"), "{text}");
    let bytes = std::fs::read(&out_path).unwrap();
    let file = mvision_convert::ModelFile::from_bytes(&bytes);
    assert_eq!(file.model().unwrap().graph().nodes.len(), 5);

    std::fs::write(dir.path("bad.onnx"), b"not a model").unwrap();
    let out = mvision(&dir.0, &["convert", "bad.onnx", "-o", "x.mvnn"]);
    assert_clean_failure(&out, "not a valid ONNX model");
    assert!(!dir.path("x.mvnn").exists());
}
