//! The plans without a device: argument lists against `kernels/SPEC.md`, launch geometry, and
//! the order of the checks. Whether the kernels compute the right thing with these launches is
//! `runtime/tests/backends.rs`'s question, on every backend present.

use mvision_core::filter::{Kernel2dF32, Kernel2dQ, SepKernelQ};
use mvision_core::{Border, Error as CoreError};

use super::*;
use crate::{names, INTEGRAL_SCAN_MAX};

/// A CUDA-like device: 1024 work-items per group, 48 KiB of shared memory, warps of 32.
const GPU: Limits = Limits {
    max_group: 1024,
    max_items: [1024, 1024],
    local_mem_bytes: 48 * 1024,
    simd_width: Some(32),
    dp2a: true,
    mma: false,
    lookback: true,
    dense_f32_halo_from: None,
};

/// A small OpenCL device: groups of 128 work-items, 4 KiB of local memory.
const SMALL: Limits = Limits {
    max_group: 128,
    max_items: [128, 64],
    local_mem_bytes: 4096,
    simd_width: None,
    dp2a: false,
    mma: false,
    lookback: false,
    dense_f32_halo_from: None,
};

const CTX: u64 = 7;

fn img(buf: u32, width: usize, height: usize) -> Img<u32> {
    Img {
        buf,
        width,
        height,
        context: CTX,
    }
}

fn foreign(buf: u32, width: usize, height: usize) -> Img<u32> {
    Img {
        context: CTX + 1,
        ..img(buf, width, height)
    }
}

#[test]
fn variant_defaults_to_the_default_tile() {
    assert_eq!(Variant::default(), Variant::Tiled { w: 16, h: 16 });
}

#[test]
fn tiles_are_checked_against_the_device_limits() {
    assert_eq!(GPU.check_tile(Tile::new(32, 32)), Ok(()));
    assert_eq!(
        GPU.check_tile(Tile::new(64, 64)),
        Err(Refusal::TileWorkGroup)
    );
    assert_eq!(
        GPU.check_tile(Tile::new(2048, 1)),
        Err(Refusal::TileWorkGroup)
    );
    assert_eq!(
        GPU.check_tile(Tile::new(usize::MAX, 2)),
        Err(Refusal::TileWorkGroup)
    );
    assert_eq!(
        SMALL.check_tile(Tile::new(1, 128)),
        Err(Refusal::TileWorkGroup),
        "longer than the device allows along y"
    );
    // 16 × 8 fits 128 work-items, but its separable rows need 4·(16·8)·22 bytes.
    assert_eq!(
        SMALL.check_tile(Tile::new(16, 8)),
        Err(Refusal::TileLocalMemory)
    );
    assert_eq!(GPU.default_tile(), Tile::DEFAULT);
    assert_eq!(SMALL.default_tile(), Tile::new(4, 4));
    let tiny = Limits {
        local_mem_bytes: 0,
        ..SMALL
    };
    assert_eq!(tiny.default_tile(), Tile::new(1, 1));
}

#[test]
fn dense_filters_take_the_spec_arguments() {
    let p = Planner::new(CTX, GPU);
    let k = Kernel2dQ::new(3, &[1, 2, 1, 2, 4, 2, 1, 2, 1], 4).unwrap();
    let l = p
        .filter2d_u8(
            img(1, 17, 5),
            img(2, 17, 5),
            &k,
            Border::Constant(9),
            Variant::Naive,
        )
        .unwrap();
    let bytes: Vec<u8> = k.coeffs().iter().flat_map(|c| c.to_ne_bytes()).collect();
    let table = Table {
        bytes,
        slots: crate::TAPS_SLOTS,
    };
    assert_eq!(
        l.args,
        [
            Arg::Buf(1),
            Arg::I32(17),
            Arg::Buf(2),
            Arg::I32(17),
            Arg::I32(17),
            Arg::I32(5),
            Arg::Table(table),
            Arg::I32(3),
            Arg::I32(4),
            Arg::I32(crate::BORDER_CONSTANT),
            Arg::I32(9),
        ]
    );
    assert_eq!(l.kernel, names::FILTER2D_U8_NAIVE);
    assert_eq!((l.set, l.tile), (KernelSet::Filter, Tile::DEFAULT));
    assert_eq!(
        (l.global, l.local, l.groups()),
        ([32, 16], [16, 16], [2, 1])
    );

    let kf = Kernel2dF32::new(1, &[0.5]).unwrap();
    let l = p
        .filter2d_f32(
            img(1, 40, 9),
            img(2, 40, 9),
            &kf,
            Border::Replicate,
            Variant::Tiled { w: 8, h: 4 },
        )
        .unwrap();
    assert_eq!(l.kernel, names::FILTER2D_F32_TILED);
    assert_eq!(l.args.len(), 10, "no shift argument");
    assert_eq!(l.args[8], Arg::I32(crate::BORDER_REPLICATE));
    assert_eq!(l.args[9], Arg::F32(0.0));
    assert_eq!(
        (l.tile, l.global, l.local),
        (Tile::SEED_8X4, [16, 8], [8, 4]),
        "4 × 2 outputs per work-item: 40 × 9 pixels in 2 × 2 groups of 8 × 4"
    );
}

#[test]
fn separable_filters_finish_by_shift_or_box_mean() {
    let p = Planner::new(CTX, SMALL);
    let k = SepKernelQ::new(&[1, 2, 1], &[1, 1, 1, 1, 1], 6).unwrap();
    let l = p
        .sep_filter_u8(img(1, 5, 5), img(2, 5, 5), &k, Border::Reflect101)
        .unwrap();
    assert_eq!(l.kernel, names::SEP_FILTER_U8_TILED);
    assert_eq!(l.args.len(), 15);
    assert_eq!(l.args[7], Arg::I32(3));
    assert_eq!(l.args[9], Arg::I32(5));
    assert_eq!(l.args[10..13], [Arg::I32(6), Arg::I32(0), Arg::I32(1)]);
    assert_eq!(
        (l.tile, l.local),
        (Tile::new(4, 4), [4, 4]),
        "the device's default tile"
    );

    let l = p
        .box_blur_u8(img(1, 5, 5), img(2, 5, 5), 7, Border::Replicate)
        .unwrap();
    // (Under MVISION_FILTER_MMA=on the box runs as a dense filter on the matrix units.)
    if l.kernel != names::FILTER2D_U8_MMA {
        assert_eq!(l.args[10..13], [Arg::I32(0), Arg::I32(1), Arg::I32(49)]);
    }
    let l = p
        .box_blur_f32(img(1, 5, 5), img(2, 5, 5), 3, Border::Replicate)
        .unwrap();
    assert_eq!(l.args.len(), 13);
    assert_eq!(l.args[10], Arg::F32(1.0 / 9.0));
    if crate::FilterTuning::get() != crate::FilterTuning::DEFAULT {
        return; // the kernel choice below is the default tuning's (MVISION_FILTER_STREAM* set)
    }
    // f32 square separable filters of 3, 5 and 7 taps take the column tile at every size.
    assert_eq!(l.kernel, names::SEP_FILTER_F32_COLS);
    let (big_w, big_h) = (3840, 2160);
    let l = p
        .box_blur_u8(
            img(1, big_w, big_h),
            img(2, big_w, big_h),
            5,
            Border::Replicate,
        )
        .unwrap();
    assert_eq!(l.kernel, names::SEP_FILTER_U8_STREAM);
    assert_eq!(l.global, [960, 540], "one work-item per 4 × 4 outputs");
    // f32: the column tile for 3, 5 and 7 taps (the streaming kernels, one per tap count, run
    // under MVISION_FILTER_STREAM=on).
    for k in [3, 5, 7] {
        let l = p
            .box_blur_f32(
                img(1, big_w, big_h),
                img(2, big_w, big_h),
                k,
                Border::Replicate,
            )
            .unwrap();
        assert_eq!(l.kernel, names::SEP_FILTER_F32_COLS, "{k} taps");
        assert_eq!(l.global, [960, 540], "one work-item per 4 × 4 outputs");
    }
    assert_eq!(
        names::sep_filter_f32_stream(3),
        Some(names::SEP_FILTER_F32_STREAM_K3)
    );
    assert_eq!(
        names::sep_filter_f32_stream(7),
        Some(names::SEP_FILTER_F32_STREAM_K7)
    );
    assert_eq!(names::sep_filter_f32_stream(9), None);
    let l = p
        .box_blur_f32(
            img(1, big_w, big_h),
            img(2, big_w, big_h),
            9,
            Border::Replicate,
        )
        .unwrap();
    assert_eq!(
        l.kernel,
        names::SEP_FILTER_F32_TILED,
        "9 taps: no streaming or column-tile kernel"
    );
}

#[test]
fn the_streaming_filters_run_where_the_tuning_says() {
    use crate::{FilterTuning, StreamMode, STREAM_MIN_ITEMS};
    let auto = FilterTuning::parse(None, None);
    assert_eq!(auto, FilterTuning::DEFAULT);
    assert_eq!((auto.stream, auto.stream_rows), (StreamMode::Auto, 4));
    // Dense: 3 × 3 only, at every size.
    assert!(auto.streams_dense(3) && !auto.streams_dense(5) && !auto.streams_dense(7));
    // Separable: 3, 5, 7 taps on launches of at least STREAM_MIN_ITEMS work-items.
    assert!(auto.streams_separable(7, 3840, 2160));
    assert!(!auto.streams_separable(7, 1920, 1080));
    assert!(!auto.streams_separable(9, 3840, 2160));
    let edge_h = 4 * STREAM_MIN_ITEMS / 1024;
    assert!(auto.streams_separable(3, 4096, edge_h));
    assert!(!auto.streams_separable(3, 4096, edge_h - 4));
    let on = FilterTuning::parse(Some("on"), Some("16"));
    assert_eq!((on.stream, on.stream_rows), (StreamMode::On, 16));
    assert!(on.streams_separable(5, 1, 1) && on.streams_dense(3));
    let off = FilterTuning::parse(Some(" off "), Some("3"));
    assert_eq!(
        (off.stream, off.stream_rows),
        (StreamMode::Off, 4),
        "3 rows is not allowed"
    );
    assert!(!off.streams_separable(3, 3840, 2160) && !off.streams_dense(3));
    assert_eq!(
        FilterTuning::parse(Some("fast"), None),
        FilterTuning::DEFAULT
    );
    assert_eq!(on.label(), "on/16");
}

#[test]
fn large_dense_3x3_f32_images_take_the_halo_tile_where_the_device_says() {
    use crate::{FilterTuning, StreamMode, DENSE_F32_HALO_MIN_PIXELS};
    if FilterTuning::get().stream != StreamMode::Auto {
        return; // the choice below is `auto`'s (MVISION_FILTER_STREAM set)
    }
    let cuda = Planner::new(
        CTX,
        Limits {
            dense_f32_halo_from: Some(DENSE_F32_HALO_MIN_PIXELS),
            ..GPU
        },
    );
    let f = Kernel2dF32::new(3, &[0.125; 9]).unwrap();
    let q = Kernel2dQ::new(3, &[1; 9], 3).unwrap();
    // The default tile runs the column tile under MVISION_FILTER_COLS=auto (below); another
    // tile keeps the streaming / halo-tile rule.
    let tiled = Variant::Tiled { w: 32, h: 8 };
    let f32_launch = |p: &Planner, w, h| {
        p.filter2d_f32(img(1, w, h), img(2, w, h), &f, Border::Replicate, tiled)
            .unwrap()
    };
    let f32_name = |p: &Planner, w, h| f32_launch(p, w, h).kernel;
    assert_eq!(f32_name(&cuda, 3840, 2160), names::FILTER2D_F32_TILED);
    assert_eq!(
        f32_name(&cuda, 2048, 2048),
        names::FILTER2D_F32_TILED,
        "exactly 2^22"
    );
    assert_eq!(f32_name(&cuda, 2047, 2048), names::FILTER2D_F32_STREAM);
    assert_eq!(f32_name(&cuda, 1920, 1080), names::FILTER2D_F32_STREAM);
    assert_eq!(
        f32_name(&Planner::new(CTX, GPU), 3840, 2160),
        names::FILTER2D_F32_STREAM
    );
    // u8 keeps its streaming kernel; the halo tile runs 4 × 2 outputs a work-item, whole groups.
    let (w, h) = (3840, 2160);
    let l = cuda.filter2d_u8(img(1, w, h), img(2, w, h), &q, Border::Replicate, tiled);
    assert_ne!(l.unwrap().kernel, names::FILTER2D_U8_TILED);
    let l = f32_launch(&cuda, w, h);
    assert_eq!(l.global, [3840 / 4, 2160 / 2]);
    if FilterTuning::get().cols == crate::ColsMode::Auto {
        let default = Variant::Tiled { w: 16, h: 16 };
        assert_eq!(cuda.default_tile(), crate::Tile::new(16, 16));
        for k in [3, 5, 7] {
            let c = Kernel2dF32::new(k, &vec![0.125; k * k]).unwrap();
            let l = cuda
                .filter2d_f32(img(1, w, h), img(2, w, h), &c, Border::Replicate, default)
                .unwrap();
            assert_eq!(l.kernel, names::FILTER2D_F32_COLS, "{k} × {k}");
            // From 2^22 pixels in 32 × 8 groups, 4 rows a work-item either way.
            assert_eq!(l.local, [32, 8]);
            assert_eq!(l.global, [960, 544]);
            // At exactly 2^22 pixels, and one column less.
            for (sw, group) in [(2048, [32, 8]), (2047, [16, 16])] {
                let l = cuda
                    .filter2d_f32(
                        img(1, sw, 2048),
                        img(2, sw, 2048),
                        &c,
                        Border::Replicate,
                        default,
                    )
                    .unwrap();
                assert_eq!(
                    (l.kernel, l.local),
                    (names::FILTER2D_F32_COLS, group),
                    "{sw}"
                );
                assert_eq!(l.global, [512, 512]);
            }
        }
        let c = Kernel2dF32::new(9, &[0.125; 81]).unwrap();
        let l = cuda.filter2d_f32(img(1, w, h), img(2, w, h), &c, Border::Replicate, default);
        assert_eq!(l.unwrap().kernel, names::FILTER2D_F32_TILED, "9 × 9");
    }
}

#[test]
fn coefficients_go_by_value_where_the_device_takes_them() {
    use crate::{Backend, FilterTuning, TapsMode, LINE_SLOTS, TAPS_PARAM_BYTES, TAPS_SLOTS};
    let auto = FilterTuning::DEFAULT;
    assert_eq!(auto.taps, TapsMode::Auto);
    assert!(auto.taps_by_value(Backend::Cuda, 0), "CUDA: always");
    assert!(auto.taps_by_value(Backend::OpenCl, TAPS_PARAM_BYTES));
    assert!(
        !auto.taps_by_value(Backend::OpenCl, 256),
        "embedded profile"
    );
    let table = auto.with_taps(Some(" table "));
    assert_eq!(table.taps, TapsMode::Table);
    assert!(!table.taps_by_value(Backend::OpenCl, 4352));
    assert!(table.taps_by_value(Backend::Cuda, 4352));
    assert_eq!(table.label(), "auto/4/taps-table");
    assert_eq!(
        table.with_fma(Some("off")).label(),
        "auto/4/fma-off/taps-table"
    );
    assert_eq!(auto.with_taps(Some("bytes")), auto);
    const {
        assert!(
            4 * TAPS_SLOTS + 64 <= TAPS_PARAM_BYTES,
            "the dense kernels' parameters fit"
        )
    };

    // The by-value structs: the coefficients' bits, then zeros; the wrong size is refused.
    let t = Table {
        bytes: [1.5f32, -2.0]
            .iter()
            .flat_map(|c| c.to_ne_bytes())
            .collect(),
        slots: LINE_SLOTS,
    };
    let p = t.padded::<LINE_SLOTS>().unwrap();
    assert_eq!((p[0], p[1]), (1.5f32.to_bits(), (-2.0f32).to_bits()));
    assert!(p[2..].iter().all(|&w| w == 0));
    assert!(t.padded::<TAPS_SLOTS>().is_none(), "slots differ");
    let long = Table {
        bytes: vec![0; 4 * LINE_SLOTS + 4],
        slots: LINE_SLOTS,
    };
    assert!(
        long.padded::<LINE_SLOTS>().is_none(),
        "more coefficients than slots"
    );
    let ragged = Table {
        bytes: vec![0; 6],
        slots: LINE_SLOTS,
    };
    assert!(ragged.padded::<LINE_SLOTS>().is_none());
    // What the drivers pass: the struct of the table's kind.
    match t.by_value() {
        Some(TableValue::Line(l)) => assert_eq!(l, p),
        other => panic!("a line's table gave {other:?}"),
    }
    let square = Table {
        bytes: t.bytes.clone(),
        slots: TAPS_SLOTS,
    };
    match square.by_value() {
        Some(TableValue::Taps(s)) => assert_eq!((s[0], s[1], s[2]), (p[0], p[1], 0)),
        other => panic!("a dense table gave {other:?}"),
    }
    let odd = Table {
        bytes: t.bytes.clone(),
        slots: 9,
    };
    assert_eq!(odd.by_value(), None, "no struct of 9 slots");
    assert_eq!(long.by_value(), None);

    // Dense plans carry a square table, separable ones two lines.
    let k = Kernel2dQ::new(3, &[1; 9], 4).unwrap();
    let l = Planner::new(CTX, GPU)
        .filter2d_u8(
            img(1, 8, 8),
            img(2, 8, 8),
            &k,
            Border::Replicate,
            Variant::Naive,
        )
        .unwrap();
    assert!(l
        .args
        .iter()
        .any(|a| matches!(a, Arg::Table(t) if t.slots == TAPS_SLOTS)));
    let s = SepKernelQ::new(&[1, 2, 1], &[1, 2, 1], 4).unwrap();
    let l = Planner::new(CTX, GPU)
        .sep_filter_u8(img(1, 8, 8), img(2, 8, 8), &s, Border::Replicate)
        .unwrap();
    let lines = l
        .args
        .iter()
        .filter(|a| matches!(a, Arg::Table(t) if t.slots == LINE_SLOTS));
    if l.kernel == names::FILTER2D_U8_MMA {
        // MVISION_FILTER_MMA=on: the square filter runs as the dense one on the matrix units,
        // its taps in byte planes rather than lines.
        assert_eq!(lines.count(), 0);
    } else {
        assert_eq!(lines.count(), 2);
    }
}

#[test]
fn packed_products_run_where_the_device_has_them_and_the_coefficients_fit() {
    use crate::{DotMode, FilterTuning};
    let auto = FilterTuning::DEFAULT;
    assert_eq!(auto.dot, DotMode::Auto);
    let fit = [-32768, 0, 1, 32767];
    let wide = [1, 32768, 1];
    assert!(auto.packs(&fit, true) && !auto.packs(&fit, false));
    assert!(!auto.packs(&wide, true), "a coefficient beyond 16 bits");
    assert!(!auto.packs(&[-32769], true));
    let on = FilterTuning::parse_all(None, None, Some("on"));
    assert!(on.packs(&fit, false) && !on.packs(&wide, false));
    let off = FilterTuning::parse_all(None, None, Some("off"));
    assert!(!off.packs(&fit, true));
    assert_eq!(on.label(), "auto/4/dot-on");
    assert_eq!(off.label(), "auto/4/dot-off");
    assert_eq!(FilterTuning::parse_all(None, None, Some("x")), auto);

    if FilterTuning::get() != FilterTuning::DEFAULT {
        return; // the kernel choice below is the default tuning's (MVISION_FILTER_* set)
    }
    let (w, h) = (3840, 2160);
    let gpu = Planner::new(CTX, GPU);
    let nodot = Planner::new(CTX, Limits { dp2a: false, ..GPU });
    let blur = |p: &Planner, k| {
        p.box_blur_u8(img(1, w, h), img(2, w, h), k, Border::Replicate)
            .unwrap()
            .kernel
    };
    assert_eq!(
        blur(&gpu, 5),
        names::SEP_FILTER_U8_COLS_DP,
        "the byte column tile"
    );
    assert_eq!(blur(&nodot, 5), names::SEP_FILTER_U8_STREAM, "no dp2a");
    assert_eq!(
        blur(&Planner::new(CTX, SMALL), 5),
        names::SEP_FILTER_U8_STREAM
    );
    let sep = |p: &Planner, kx: &[i32]| {
        let k = SepKernelQ::new(kx, &[1, 2, 1], 2).unwrap();
        p.sep_filter_u8(img(1, w, h), img(2, w, h), &k, Border::Replicate)
            .unwrap()
            .kernel
    };
    assert_eq!(
        sep(&gpu, &[-3, 10, -3]),
        names::SEP_FILTER_U8_COLS_DP,
        "exact in f32: the byte column tile"
    );
    let k = SepKernelQ::new(&[-3, 10, -3], &[1999, 3999, 1999], 2).unwrap();
    let l = gpu.sep_filter_u8(img(1, w, h), img(2, w, h), &k, Border::Replicate);
    assert_eq!(
        l.unwrap().kernel,
        names::SEP_FILTER_U8_STREAM_DP,
        "sums past 2^24: the streaming kernel"
    );
    assert_eq!(
        sep(&gpu, &[1, 40000, 1]),
        names::SEP_FILTER_U8_STREAM,
        "horizontal taps beyond 16 bits"
    );
    let dense = |p: &Planner, c: &[i32]| {
        let k = Kernel2dQ::new(3, c, 4).unwrap();
        p.filter2d_u8(
            img(1, 64, 64),
            img(2, 64, 64),
            &k,
            Border::Replicate,
            Variant::default(),
        )
        .unwrap()
        .kernel
    };
    let small_taps = [1, 2, 1, 2, 4, 2, 1, 2, 1];
    let mut big_taps = small_taps;
    big_taps[4] = 1 << 16;
    assert_eq!(dense(&gpu, &small_taps), names::FILTER2D_U8_STREAM_DP);
    assert_eq!(dense(&nodot, &small_taps), names::FILTER2D_U8_STREAM);
    assert_eq!(dense(&gpu, &big_taps), names::FILTER2D_U8_STREAM);
}

#[test]
fn checks_come_in_the_cores_order_after_ownership() {
    let p = Planner::new(CTX, GPU);
    let b = Border::Replicate;
    let inv = |e| Err(PlanError::Invalid(e));
    // Ownership first, then the kernel size, then the image sizes.
    assert_eq!(
        p.box_blur_u8(foreign(1, 4, 4), img(2, 5, 5), 4, b),
        inv(CoreError::InvalidArgument)
    );
    assert_eq!(
        p.box_blur_u8(img(1, 4, 4), img(2, 5, 5), 0, b),
        inv(CoreError::ZeroSize)
    );
    assert_eq!(
        p.box_blur_u8(img(1, 4, 4), img(2, 5, 5), 17, b),
        inv(CoreError::InvalidKernel)
    );
    assert_eq!(
        p.box_blur_u8(img(1, 4, 4), img(2, 5, 5), 3, b),
        inv(CoreError::SizeMismatch)
    );
    // Sizes before the tile.
    let k = Kernel2dQ::new(1, &[1], 0).unwrap();
    let zero = Variant::Tiled { w: 0, h: 4 };
    assert_eq!(
        p.filter2d_u8(img(1, 4, 4), img(2, 5, 5), &k, b, zero),
        inv(CoreError::SizeMismatch)
    );
    assert_eq!(
        p.filter2d_u8(img(1, 4, 4), img(2, 4, 4), &k, b, zero),
        inv(CoreError::ZeroSize)
    );
    assert_eq!(
        p.filter2d_u8(
            img(1, 4, 4),
            img(2, 4, 4),
            &k,
            b,
            Variant::Tiled { w: 64, h: 64 }
        ),
        Err(PlanError::Refused(Refusal::TileWorkGroup))
    );
    // The Gaussian kernel is built before anything else is looked at.
    assert_eq!(
        p.gaussian_blur_u8(img(1, 4, 4), img(2, 5, 5), 0, 0.0, b),
        inv(CoreError::InvalidArgument)
    );
    assert_eq!(
        p.sobel_u8(img(1, 4, 4), img(2, 4, 4), foreign(3, 4, 4), b),
        inv(CoreError::InvalidArgument)
    );
    assert_eq!(
        p.resize_bilinear_u8(img(1, 4, 4), foreign(2, 9, 9)),
        inv(CoreError::InvalidArgument)
    );
    assert_eq!(
        p.pyr_down_f32(img(1, 5, 5), img(2, 2, 3), Border::Replicate),
        inv(CoreError::SizeMismatch)
    );
}

/// The launches of a plan as an array of `N`.
fn launches<const N: usize>(
    plan: IntegralPlan<u32>,
    limit: usize,
    s: Option<(u32, Option<u32>, Option<u32>)>,
) -> [Launch<u32>; N] {
    plan.launches(limit, s).try_into().expect("launch count")
}

#[test]
fn integral_runs_tiled_where_the_device_allows() {
    if crate::IntegralTuning::get() != crate::IntegralTuning::DEFAULT {
        return; // the geometry below is the default tuning's (MVISION_INTEGRAL_* set)
    }
    // A device on which work-groups may not wait on each other: the three-pass tiled scan.
    let p = Planner::new(
        CTX,
        Limits {
            lookback: false,
            ..GPU
        },
    );
    // 3840 x 2160: 15 x 34 tiles of 256 x 64.
    let plan = p
        .integral_u8(
            img(1, 3840, 2160),
            img(2, 3841, 2161),
            Some(img(3, 3841, 2161)),
        )
        .unwrap();
    assert_eq!(plan.tiled_group(usize::MAX), Some(256));
    let elems = 34 * 3840 + 2 * 15 * 2160 + 15 * 34;
    assert_eq!(
        plan.scratch(usize::MAX),
        IntegralScratch {
            bytes_u32: 4 * elems,
            bytes_u64: 8 * elems,
            bytes_ctl: 0,
        }
    );
    let [sums, carries, tiles, tiles_sq] = launches(plan, usize::MAX, Some((8, Some(9), None)));
    assert_eq!(
        (sums.kernel, sums.groups(), sums.local),
        (names::INTEGRAL_TILE_SUMS_U8, [15 * 34, 1], [256, 1])
    );
    assert_eq!(sums.args.len(), 7);
    assert_eq!(sums.args[2..4], [Arg::Buf(8), Arg::Buf(9)]);
    assert_eq!(
        (carries.kernel, carries.groups()),
        (names::INTEGRAL_CARRIES, [3840 / 32 + 14 * 34, 1])
    );
    assert_eq!(carries.args.len(), 5);
    assert_eq!(
        (tiles.kernel, tiles.groups(), tiles.args.len()),
        (names::INTEGRAL_TILES_U8, [15 * 34, 1], 7)
    );
    assert_eq!(tiles.args[2..5], [Arg::Buf(2), Arg::I32(3841), Arg::Buf(8)]);
    assert_eq!(
        (tiles_sq.kernel, tiles_sq.groups(), tiles_sq.args.len()),
        (names::INTEGRAL_TILES_SQ_U8, [15 * 34, 1], 7)
    );
    assert_eq!(
        tiles_sq.args[2..7],
        [
            Arg::Buf(3),
            Arg::I32(3841),
            Arg::Buf(9),
            Arg::I32(3840),
            Arg::I32(2160)
        ]
    );
    // Without squares: no u64 scratch, a null one in its place; a kernel limit of 200 gives
    // groups of 128 (four rows of lanes).
    let plan = p.integral_u8(img(1, 1, 1), img(2, 2, 2), None).unwrap();
    assert_eq!(plan.scratch(usize::MAX).bytes_u64, 0);
    assert_eq!(plan.scratch(usize::MAX).bytes_u32, 4 * (1 + 2 + 1));
    assert_eq!(plan.tiled_group(200), Some(128));
    let [_, carries, tiles] = launches(plan, 200, Some((8, None, None)));
    assert_eq!((carries.groups(), carries.local), ([1, 1], [128, 1]));
    assert_eq!(carries.args[1], Arg::Null);
    assert_eq!(tiles.kernel, names::INTEGRAL_TILES_U8);
    // Too small a group or too little local memory: the row and column passes.
    let plan = p.integral_u8(img(1, 5, 3), img(2, 6, 4), None).unwrap();
    assert_eq!(plan.tiled_group(31), None);
    let plan = Planner::new(CTX, SMALL)
        .integral_u8(img(1, 5, 3), img(2, 6, 4), None)
        .unwrap();
    assert_eq!(plan.tiled_group(usize::MAX), None);
    let [rows, _] = launches(plan, usize::MAX, Some((8, None, None)));
    assert_eq!(rows.kernel, names::INTEGRAL_ROWS_U8);
}

#[test]
fn integral_runs_the_lookback_scan_where_work_groups_may_wait() {
    if crate::IntegralTuning::get() != crate::IntegralTuning::DEFAULT {
        return; // the choice below is the default tuning's (MVISION_INTEGRAL_* set)
    }
    let p = Planner::new(CTX, GPU);
    // With the squares, from INTEGRAL_LOOKBACK_SQ_MAX_PIXELS on: the tiled scan; the table of
    // pixels alone: the look-back scan at any size.
    let big = |sq: bool| {
        let sq = sq.then(|| img(3, 3841, 2161));
        p.integral_u8(img(1, 3840, 2160), img(2, 3841, 2161), sq)
            .unwrap()
    };
    assert_eq!(big(true).scratch(usize::MAX).bytes_ctl, 0);
    let [tile_sums, _, _, _] = launches(big(true), usize::MAX, Some((8, Some(9), Some(10))));
    assert_eq!(tile_sums.kernel, names::INTEGRAL_TILE_SUMS_U8);
    let [one] = launches(big(false), usize::MAX, Some((8, None, Some(10))));
    assert_eq!(one.kernel, names::INTEGRAL_LOOKBACK_U8);
    let (w, h) = (2048, 2047); // 4 192 256 pixels, just under 2^22
    assert!(w * h < crate::INTEGRAL_LOOKBACK_SQ_MAX_PIXELS);
    assert!(w * (h + 1) >= crate::INTEGRAL_LOOKBACK_SQ_MAX_PIXELS);
    let edge = p
        .integral_u8(
            img(1, w, h + 1),
            img(2, w + 1, h + 2),
            Some(img(3, w + 1, h + 2)),
        )
        .unwrap();
    assert_eq!(
        edge.scratch(usize::MAX).bytes_ctl,
        0,
        "2^22 pixels and more: tiled"
    );
    // Both tables of a w x h image.
    let with_sq = |w: usize, h: usize| {
        p.integral_u8(
            img(1, w, h),
            img(2, w + 1, h + 1),
            Some(img(3, w + 1, h + 1)),
        )
        .unwrap()
    };
    let plan = with_sq(w, h);
    // 16 x 32 tiles of 128 x 64; per tile 2 · 64 row sums, 2 · 128 column sums and two
    // totals of each type; two control words plus two flags a tile.
    let nt = 16 * 32;
    assert_eq!(
        plan.scratch(usize::MAX),
        IntegralScratch {
            bytes_u32: 4 * nt * 386,
            bytes_u64: 8 * nt * 386,
            bytes_ctl: 4 * (2 + 2 * nt),
        }
    );
    let [sums, squares] = launches(plan.clone(), usize::MAX, Some((8, Some(9), Some(10))));
    assert_eq!(sums.local, [128, 1]);
    assert_eq!(
        (sums.kernel, sums.groups(), sums.local),
        (names::INTEGRAL_LOOKBACK_U8, [nt, 1], [128, 1])
    );
    // src, stride, table, stride, control words, data, width, height.
    assert_eq!(
        sums.args[2..8],
        [
            Arg::Buf(2),
            Arg::I32(2049),
            Arg::Buf(10),
            Arg::Buf(8),
            Arg::I32(2048),
            Arg::I32(2047)
        ]
    );
    assert_eq!(squares.kernel, names::INTEGRAL_LOOKBACK_SQ_U8);
    assert_eq!(
        squares.args[2..6],
        [Arg::Buf(3), Arg::I32(2049), Arg::Buf(10), Arg::Buf(9)]
    );
    // Groups below 128 (a kernel limit of 100 gives 64): the tiled scan, and its scratch.
    assert_eq!(plan.scratch(100).bytes_ctl, 0);
    let [tile_sums, _, _, _] = launches(plan, 100, Some((8, Some(9), None)));
    assert_eq!(tile_sums.kernel, names::INTEGRAL_TILE_SUMS_U8);
    // Without squares: one launch, no u64 scratch.
    let plan = p.integral_u8(img(1, 5, 3), img(2, 6, 4), None).unwrap();
    assert_eq!(plan.scratch(usize::MAX).bytes_u64, 0);
    let [one] = launches(plan, usize::MAX, Some((8, None, Some(10))));
    assert_eq!(
        (one.kernel, one.groups()),
        (names::INTEGRAL_LOOKBACK_U8, [1, 1])
    );
    // Up to INTEGRAL_LOOKBACK_DIRECT_MAX_SIDE tiles along each side the direct kernels, one
    // tile more along either side the walks (both tables; 1 - 2 Mpx, so the look-back scan).
    let side = crate::INTEGRAL_LOOKBACK_DIRECT_MAX_SIDE;
    let (tw, th) = (
        crate::INTEGRAL_LOOKBACK_TILE_W,
        crate::INTEGRAL_LOOKBACK_TILE_H,
    );
    for (w, h, direct) in [
        (side * tw, 64, true),
        (side * tw + 1, 64, false),
        (64, side * th, true),
        (64, side * th + 1, false),
    ] {
        let [sums, squares] = launches(with_sq(w, h), usize::MAX, Some((8, Some(9), Some(10))));
        let want = if direct {
            [names::INTEGRAL_LOOKBACK_U8, names::INTEGRAL_LOOKBACK_SQ_U8]
        } else {
            [
                names::INTEGRAL_LOOKBACK_WALK_U8,
                names::INTEGRAL_LOOKBACK_WALK_SQ_U8,
            ]
        };
        assert_eq!([sums.kernel, squares.kernel], want, "{w} x {h}");
    }
}

#[test]
fn integral_groups_follow_the_device() {
    // CUDA-like: the row pass uses whole warps covering the row, the column pass 256 items.
    let p = Planner::new(CTX, GPU);
    let [rows, cols] = launches(
        p.integral_u8(img(1, 5, 3), img(2, 6, 4), None).unwrap(),
        usize::MAX,
        None,
    );
    assert_eq!(
        (rows.kernel, rows.groups(), rows.local),
        (names::INTEGRAL_ROWS_U8, [3, 1], [32, 1])
    );
    assert_eq!(
        (cols.kernel, cols.groups(), cols.local),
        (names::INTEGRAL_COLS, [1, 1], [256, 1])
    );
    assert_eq!(rows.args[4..6], [Arg::Null, Arg::I32(0)]);
    assert_eq!(rows.args[8], Arg::I32(0));
    assert_eq!(cols.args.len(), 7);
    let [rows, _] = launches(
        p.integral_u8(img(1, 1000, 2), img(2, 1001, 3), Some(img(3, 1001, 3)))
            .unwrap(),
        usize::MAX,
        None,
    );
    assert_eq!(rows.local, [INTEGRAL_SCAN_MAX, 1]);
    assert_eq!(rows.args[4..6], [Arg::Buf(3), Arg::I32(1001)]);
    assert_eq!(rows.args[8], Arg::I32(1));

    // OpenCL-like: no SIMD width, so the largest group the device and the kernels allow.
    let p = Planner::new(CTX, SMALL);
    let [rows, cols] = launches(
        p.integral_u8(img(1, 5, 3), img(2, 6, 4), None).unwrap(),
        100,
        None,
    );
    assert_eq!((rows.global, rows.local), ([300, 1], [100, 1]));
    assert_eq!((cols.global, cols.local), ([100, 1], [100, 1]));
    assert_eq!((rows.set, rows.tile), (KernelSet::Integral, Tile::DEFAULT));

    assert_eq!(
        p.integral_u8(img(1, 4105, 4104), img(2, 4106, 4105), None),
        Err(PlanError::Invalid(CoreError::Overflow))
    );
}

#[test]
fn resampling_runs_over_the_destination() {
    let p = Planner::new(CTX, SMALL);
    let l = p
        .pyr_down_u8(img(1, 9, 5), img(2, 5, 3), Border::Constant(3))
        .unwrap();
    assert_eq!(l.args.len(), 10);
    assert_eq!(
        l.args[4..8],
        [Arg::Buf(2), Arg::I32(5), Arg::I32(5), Arg::I32(3)]
    );
    assert_eq!((l.global, l.local), ([8, 4], [4, 4]));
    let l = p.resize_bilinear_f32(img(1, 9, 5), img(2, 3, 3)).unwrap();
    assert_eq!((l.kernel, l.args.len()), (names::RESIZE_BILINEAR_F32, 8));
    assert_eq!(
        (l.set, l.tile),
        (KernelSet::Resample, Tile::DEFAULT),
        "the resample program does not depend on the tile"
    );
}

#[test]
fn device_images_are_sized_for_int_indices() {
    assert_eq!(image_len(3, 5), Ok(15));
    assert_eq!(image_len(0, 5), Err(CoreError::ZeroSize));
    assert_eq!(image_len(5, 0), Err(CoreError::ZeroSize));
    assert_eq!(image_len(1 << 16, 1 << 15), Err(CoreError::Overflow));
    assert_eq!(image_len(usize::MAX, 2), Err(CoreError::Overflow));
    assert_eq!(same_size((1, 2), (2, 1)), Err(CoreError::SizeMismatch));
}

#[test]
fn matrix_unit_taps_split_coefficients_into_byte_planes() {
    let row = 4 * crate::MMA_ROW_WORDS;
    // 3 × 3 within a signed byte: one plane, tap kx of row ky at byte 12 − 1 + kx.
    let c: Vec<i64> = (1..=9).map(|v| if v % 2 == 0 { -v } else { v }).collect();
    let t = MmaTaps::new(&c, 3, 8).unwrap();
    assert_eq!((t.planes, t.table.slots), (1, crate::MMA_SLOTS));
    assert_eq!(t.table.bytes.len(), 3 * row);
    for ky in 0..3 {
        let r = &t.table.bytes[ky * row..(ky + 1) * row];
        assert!(
            r[..11].iter().chain(&r[14..]).all(|&b| b == 0),
            "zeros around row {ky}"
        );
        for kx in 0..3 {
            assert_eq!(r[11 + kx] as i8, c[ky * 3 + kx] as i8);
        }
    }
    // 5 × 5 needing 16 bits: the signed high byte first, then the low byte.
    let mut c = vec![0i64; 25];
    c[0] = -300; // 0xfed4: high −2, low 0xd4
    c[24] = 32767;
    let t = MmaTaps::new(&c, 5, 1 << 13).unwrap();
    assert_eq!(t.planes, 2);
    let at = |p: usize, ky: usize, kx: usize| t.table.bytes[(p * 5 + ky) * row + 10 + kx];
    assert_eq!((at(0, 0, 0) as i8, at(1, 0, 0)), (-2, 0xd4));
    assert_eq!((at(0, 4, 4), at(1, 4, 4)), (0x7f, 0xff));
    // 7 × 7 within 24 bits: three planes; the byte rows rebuild every coefficient.
    let c: Vec<i64> = (0..49).map(|i| (i * 7_919 % 160_001) - 80_000).collect();
    let gain: i64 = c.iter().map(|v| v.abs()).sum();
    assert!(
        255 * (gain + 65536 * 49) < i64::from(i32::MAX),
        "the test's own bound"
    );
    let t = MmaTaps::new(&c, 7, 0).unwrap();
    assert_eq!(t.planes, 3);
    for (i, &want) in c.iter().enumerate() {
        let (ky, kx) = (i / 7, i % 7);
        let b = |p: usize| t.table.bytes[(p * 7 + ky) * row + 9 + kx];
        let got = (i64::from(b(0) as i8) << 16) + (i64::from(b(1)) << 8) + i64::from(b(2));
        assert_eq!(got, want, "coefficient {i}");
    }
    // What the kernel cannot take exactly.
    assert_eq!(MmaTaps::new(&[1; 9], 3, 0).map(|t| t.planes), Some(1));
    assert!(MmaTaps::new(&[1; 81], 9, 0).is_none(), "9 × 9");
    assert!(
        MmaTaps::new(&[1; 8], 3, 0).is_none(),
        "8 coefficients for 3 × 3"
    );
    assert!(
        MmaTaps::new(&[1 << 23; 9], 3, 0).is_none(),
        "beyond 24 bits"
    );
    assert_eq!(MmaTaps::new(&[(1 << 23) - 1], 1, 0), None, "1 × 1");
    let mut big = vec![0i64; 9];
    big[4] = 7_000_000; // 3 planes: 255 · (7e6 + 65536 · 9) + 2^20 < 2^31 − 1
    assert!(MmaTaps::new(&big, 3, 1 << 20).is_some());
    assert!(
        MmaTaps::new(&big, 3, 1 << 30).is_none(),
        "a partial sum could leave an int"
    );
}

#[test]
fn the_matrix_unit_filter_runs_where_the_device_has_it() {
    use crate::{FilterTuning, MmaMode};
    use crate::{MMA_DENSE_MIN_PIXELS as DENSE, MMA_SEPARABLE_MIN_PIXELS as SEP};
    let auto = FilterTuning::DEFAULT;
    assert_eq!(auto.mma, MmaMode::Auto);
    assert!(auto.uses_mma(5, true, DENSE, false) && auto.uses_mma(7, true, SEP, true));
    assert!(!auto.uses_mma(7, true, DENSE - 1, false), "a small image");
    assert!(
        !auto.uses_mma(7, true, SEP - 1, true),
        "a small image, separable"
    );
    assert!(
        !auto.uses_mma(3, true, SEP, false),
        "3 × 3 streams under auto"
    );
    assert!(!auto.uses_mma(7, false, SEP, false) && !auto.uses_mma(9, true, SEP, false));
    let on = auto.with_mma(Some("on"));
    assert!(on.uses_mma(3, false, 1, true) && on.uses_mma(7, false, 1, false));
    assert!(!on.uses_mma(9, false, SEP, false));
    let off = auto.with_mma(Some(" off "));
    assert!(!off.uses_mma(7, true, SEP, false));
    assert_eq!(on.label(), "auto/4/mma-on");
    assert_eq!(off.label(), "auto/4/mma-off");
    assert_eq!(auto.with_mma(Some("x")), auto);

    if FilterTuning::get() != FilterTuning::DEFAULT {
        return; // the kernel choice below is the default tuning's (MVISION_FILTER_* set)
    }
    let mma = Planner::new(CTX, Limits { mma: true, ..GPU });
    let (w, h) = (3840, 2160);
    let dense = |p: &Planner, k: &Kernel2dQ, v| {
        p.filter2d_u8(img(1, w, h), img(2, w, h), k, Border::Constant(3), v)
            .unwrap()
    };
    let k5 = Kernel2dQ::new(5, &[-20_000; 25], 14).unwrap();
    let l = dense(&mma, &k5, Variant::default());
    assert_eq!(l.kernel, names::FILTER2D_U8_MMA);
    let taps = MmaTaps::new(&[-20_000; 25], 5, 1 << 13).unwrap();
    assert_eq!(
        l.args,
        [
            Arg::Buf(1),
            Arg::I32(3840),
            Arg::Buf(2),
            Arg::I32(3840),
            Arg::I32(3840),
            Arg::I32(2160),
            Arg::Table(taps.table),
            Arg::I32(5),
            Arg::I32(2),
            Arg::I32(14),
            Arg::I32(0),
            Arg::I32(1),
            Arg::I32(crate::BORDER_CONSTANT),
            Arg::I32(3),
        ]
    );
    // 3840 columns in groups of 64, 2160 rows in groups of 16 · 5.
    let n = crate::MMA_THREADS;
    assert_eq!((l.local, l.groups()), ([n, 1], [60, 27]));
    assert_eq!(l.tile, Tile::DEFAULT);
    let l = dense(&mma, &k5, Variant::Tiled { w: 8, h: 4 });
    assert_eq!((l.kernel, l.tile), (names::FILTER2D_U8_MMA, Tile::SEED_8X4));
    assert_eq!(
        dense(&mma, &k5, Variant::Naive).kernel,
        names::FILTER2D_U8_NAIVE
    );
    assert_eq!(
        dense(&Planner::new(CTX, GPU), &k5, Variant::default()).kernel,
        names::FILTER2D_U8_TILED,
        "no matrix units"
    );
    let k3 = Kernel2dQ::new(3, &[1; 9], 3).unwrap();
    assert_eq!(
        dense(&mma, &k3, Variant::default()).kernel,
        names::FILTER2D_U8_STREAM_DP
    );
    let wide = Kernel2dQ::new(7, &[1 << 23; 49], 24).unwrap_err();
    assert_eq!(wide, CoreError::InvalidKernel, "the core refuses it first");
    let mut c = [0i32; 49];
    c[24] = 1 << 23; // a valid kernel whose centre needs four bytes
    let k7 = Kernel2dQ::new(7, &c, 0).unwrap();
    assert_eq!(
        dense(&mma, &k7, Variant::default()).kernel,
        names::FILTER2D_U8_TILED
    );

    // Square separable filters as the dense filter of their outer product, where no column
    // tile takes them (without dp2a: the float tile's size rule).
    let nodp = Planner::new(
        CTX,
        Limits {
            mma: true,
            dp2a: false,
            ..GPU
        },
    );
    let sep = |kx: &[i32], ky: &[i32]| {
        let k = SepKernelQ::new(kx, ky, 6).unwrap();
        nodp.sep_filter_u8(img(1, w, h), img(2, w, h), &k, Border::Replicate)
            .unwrap()
    };
    let l = sep(&[1, -2, 3], &[4, 5, 6]);
    assert_eq!(
        l.kernel,
        names::SEP_FILTER_U8_STREAM,
        "3 × 3 streams under auto"
    );
    let l = sep(&[1, -2, 3, 4, 5], &[6, 7, 8, 9, 10]);
    assert_eq!(l.kernel, names::FILTER2D_U8_MMA);
    let outer: Vec<i64> = [6i64, 7, 8, 9, 10]
        .iter()
        .flat_map(|y| [1i64, -2, 3, 4, 5].map(|x| x * y))
        .collect();
    let taps = MmaTaps::new(&outer, 5, 32).unwrap();
    assert_eq!(taps.planes, 1);
    assert_eq!(l.args[6], Arg::Table(taps.table));
    assert_eq!(&l.args[7..12], &[5, 1, 6, 0, 1].map(Arg::I32));
    assert_eq!(
        sep(&[1, 2, 3, 4, 5], &[1, 2, 3]).kernel,
        names::SEP_FILTER_U8_TILED,
        "5 × 3 is not square"
    );
    let l = nodp
        .box_blur_u8(img(1, w, h), img(2, w, h), 5, Border::Replicate)
        .unwrap();
    assert_eq!(l.kernel, names::FILTER2D_U8_MMA);
    assert_eq!(&l.args[7..12], &[5, 1, 0, 1, 25].map(Arg::I32));
    assert_eq!(l.groups(), [60, 27]);
    let small = nodp
        .box_blur_u8(img(1, 1920, 1080), img(2, 1920, 1080), 5, Border::Replicate)
        .unwrap();
    assert_eq!(
        small.kernel,
        names::SEP_FILTER_U8_COLS,
        "1080p: the column tile below the bound"
    );
    let box7 = nodp
        .box_blur_u8(img(1, w, h), img(2, w, h), 7, Border::Replicate)
        .unwrap();
    assert_eq!(
        box7.kernel,
        names::SEP_FILTER_U8_COLS,
        "7 taps: the column tile"
    );
    let dense_1080 = mma
        .filter2d_u8(
            img(1, 1920, 1080),
            img(2, 1920, 1080),
            &k5,
            Border::Replicate,
            Variant::default(),
        )
        .unwrap();
    assert_eq!(
        dense_1080.kernel,
        names::FILTER2D_U8_MMA,
        "1080p: dense from about 2 Mpx"
    );
    // OpenCV's 7-tap table reduces to Q6 per axis: exact in f32, the column tile.
    let l = nodp
        .gaussian_blur_u8(img(1, w, h), img(2, w, h), 7, 0.0, Border::Replicate)
        .unwrap();
    assert_eq!(l.kernel, names::SEP_FILTER_U8_COLS);
    // With dp2a the byte tile takes 3, 5 and 7 taps at every size.
    for k in [3, 5, 7] {
        let l = mma
            .gaussian_blur_u8(img(1, w, h), img(2, w, h), k, 0.0, Border::Replicate)
            .unwrap();
        assert_eq!(l.kernel, names::SEP_FILTER_U8_COLS_DP, "Gaussian {k}");
        let l = mma
            .box_blur_u8(img(1, w, h), img(2, w, h), k, Border::Replicate)
            .unwrap();
        assert_eq!(l.kernel, names::SEP_FILTER_U8_COLS_DP, "box {k}");
    }
    // A Gaussian of σ 1.5 keeps Q10 per axis: sums up to 255 · 2²⁰, not exact in f32.
    let l = mma
        .gaussian_blur_u8(img(1, w, h), img(2, w, h), 7, 1.5, Border::Replicate)
        .unwrap();
    assert_eq!(l.kernel, names::FILTER2D_U8_MMA);
    assert_eq!(
        l.args[8],
        Arg::I32(3),
        "Q10 × Q10 products take three planes"
    );
}

/// `mv_sep_filter_u8_cols` sums in `f32`: its plan takes the powers of two out of each axis (and
/// out of the shift) as the CPU does, and runs only while `255·Σ|kx'|·Σ|ky'|` < 2²⁴.
#[test]
fn u8_column_tile_runs_only_where_its_f32_sums_are_exact() {
    use super::filter::exact_in_f32;
    let q10 = [256, 512, 256];
    assert_eq!(
        exact_in_f32(&q10, &q10, 20, true),
        Some((vec![1, 2, 1], vec![1, 2, 1], 4))
    );
    assert_eq!(
        exact_in_f32(&[2, 2, 2], &[2, 2, 2], 0, false),
        Some((vec![2, 2, 2], vec![2, 2, 2], 0)),
        "the box finish keeps its taps"
    );
    assert_eq!(
        exact_in_f32(&[4, 8, 4], &[4, 4, 4], 3, true),
        Some((vec![1, 2, 1], vec![2, 2, 2], 0)),
        "no more than the shift comes out"
    );
    // 255 · 273 · 241 = 2²⁴ − 1; one more unit on either axis passes the bound.
    assert!(exact_in_f32(&[91, -91, 91], &[81, -79, 81], 16, true).is_some());
    assert!(exact_in_f32(&[91, -91, 91], &[81, -81, 81], 16, true).is_none());
    assert!(exact_in_f32(&[91, -92, 91], &[81, -79, 81], 16, true).is_none());
    assert!(
        exact_in_f32(&[65_794, 0, 0], &[0, 0, 0], 0, true).is_none(),
        "zero vertical taps still bound the horizontal sums"
    );
    assert!(exact_in_f32(&[i32::MAX; 15], &[i32::MAX; 15], 0, false).is_none());
    if crate::FilterTuning::get() != crate::FilterTuning::DEFAULT {
        return; // the kernel choice below is the default tuning's (MVISION_FILTER_* set)
    }
    let p = Planner::new(CTX, GPU);
    let (w, h) = (1920, 1080);
    let l = p
        .gaussian_blur_u8(img(1, w, h), img(2, w, h), 3, 0.0, Border::Replicate)
        .unwrap();
    assert_eq!(
        l.kernel,
        names::SEP_FILTER_U8_COLS_DP,
        "with dp2a: the byte tile"
    );
    assert_eq!(l.args[6], table_i32(&[1, 2, 1], crate::LINE_SLOTS));
    assert_eq!(l.args[8], table_i32(&[1, 2, 1], crate::LINE_SLOTS));
    assert_eq!(
        &l.args[10..13],
        &[4, 0, 1].map(Arg::I32),
        "Q10 + Q10 - 8 - 8"
    );
    let rows = 270usize.next_multiple_of(l.local[1]);
    assert_eq!(l.global, [480, rows], "one work-item per 4 × 4 outputs");
    let nodp = Planner::new(CTX, Limits { dp2a: false, ..GPU });
    let l = nodp
        .gaussian_blur_u8(img(1, w, h), img(2, w, h), 3, 0.0, Border::Replicate)
        .unwrap();
    assert_eq!(
        l.kernel,
        names::SEP_FILTER_U8_COLS,
        "without: the float tile"
    );
    // Without dp2a, 3 and 5 taps at 3840 × 2160 stay on the streaming and matrix-unit kernels.
    let l = nodp
        .gaussian_blur_u8(
            img(1, 3840, 2160),
            img(2, 3840, 2160),
            3,
            0.0,
            Border::Replicate,
        )
        .unwrap();
    assert_eq!(l.kernel, names::SEP_FILTER_U8_STREAM);
    // Signed taps past the bound keep the integer kernels.
    let wide = SepKernelQ::new(&[91, -92, 91], &[81, -79, 81], 16).unwrap();
    let l = p
        .sep_filter_u8(img(1, w, h), img(2, w, h), &wide, Border::Replicate)
        .unwrap();
    assert_eq!(l.kernel, names::SEP_FILTER_U8_TILED);
}
