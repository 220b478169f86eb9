//! Checks of the assembled sources that need no GPU. The OpenCL driver's tests compile and run
//! every kernel on PoCL; here the CUDA source is at least parsed as C++ by the host compiler.

use super::*;

const SPEC_MACROS: &[&str] = &[
    "MV_KERNEL",
    "MV_KERNEL_TILED",
    "MV_KERNEL_LEAN",
    "MV_KERNEL_MMA",
    "MV_GLOBAL",
    "MV_CONSTANT",
    "MV_LOCAL",
    "MV_LOCAL_ARRAY(type, name, n)",
    "MV_BARRIER()",
    "MV_GID_X",
    "MV_GID_Y",
    "MV_LID_X",
    "MV_LID_Y",
    "MV_GROUP_X",
    "MV_GROUP_Y",
    "MV_LSIZE_X",
    "MV_LSIZE_Y",
    "MV_INLINE",
];

const SPEC_TYPES: &[&str] = &[
    "mv_i32;", "mv_u32;", "mv_i64;", "mv_u64;", "mv_u8;", "mv_i16;",
];

#[test]
fn both_preludes_define_the_whole_dialect() {
    for prelude in [PRELUDE_OPENCL, PRELUDE_CUDA] {
        for m in SPEC_MACROS {
            let defined = prelude.lines().any(|l| {
                l.strip_prefix("#define ")
                    .and_then(|rest| rest.strip_prefix(m))
                    .is_some_and(|after| after.is_empty() || after.starts_with(' '))
            });
            assert!(defined, "prelude lacks {m}");
        }
        for t in SPEC_TYPES {
            assert!(prelude.contains(t), "prelude lacks typedef {t}");
        }
    }
}

#[test]
fn every_listed_kernel_is_defined_in_its_set_for_both_backends() {
    for set in KernelSet::ALL {
        for backend in [Backend::OpenCl, Backend::Cuda] {
            let src = source(set, backend);
            for name in set.kernel_names() {
                let plain = format!("MV_KERNEL {name}(");
                let tiled = format!("MV_KERNEL_TILED {name}(");
                let lean = format!("MV_KERNEL_LEAN {name}(");
                let mma = format!("MV_KERNEL_MMA {name}(");
                assert!(
                    src.contains(&plain)
                        || src.contains(&tiled)
                        || src.contains(&lean)
                        || src.contains(&mma),
                    "{name} missing from {set:?}/{backend:?}"
                );
            }
            let defined = src.matches("MV_KERNEL ").count()
                + src.matches("MV_KERNEL_TILED ").count()
                + src.matches("MV_KERNEL_LEAN ").count()
                + src.matches("MV_KERNEL_MMA ").count();
            // Each prelude mentions the four macros once in its #defines.
            assert_eq!(defined - 4, set.kernel_names().len(), "{set:?}/{backend:?}");
        }
    }
}

#[test]
fn constants_come_from_the_core() {
    let c = constants();
    assert!(c.contains(&format!("#define MV_MAX_KSIZE {}\n", MAX_KERNEL_SIZE)));
    assert!(c.contains(&format!(
        "#define MV_RESIZE_FRAC_BITS {}\n",
        RESIZE_FRAC_BITS
    )));
    assert!(c.contains("#define MV_BORDER_REPLICATE 0\n"));
    assert!(c.contains("#define MV_BORDER_REFLECT_101 1\n"));
    assert!(c.contains("#define MV_BORDER_CONSTANT 2\n"));
    assert_eq!(border_code(&Border::<u8>::Replicate), (0, None));
    assert_eq!(border_code(&Border::<u8>::Reflect101), (1, None));
    assert_eq!(border_code(&Border::Constant(7u8)), (2, Some(7)));
    // No body hard-codes what the constants carry.
    for body in [BORDER_H, FIXED_POINT_H, FILTER_H, INTEGRAL_H, RESAMPLE_H] {
        for name in [
            "MV_MAX_KSIZE",
            "MV_RESIZE_FRAC_BITS",
            "MV_BORDER_",
            "MV_SCAN_MAX",
            "MV_ITILE_",
            "MV_IGROUP_MAX",
        ] {
            assert!(
                !body.contains(&format!("#define {name}")),
                "{name} defined in a body"
            );
        }
    }
}

#[test]
fn integral_tuning_parses_its_variables() {
    let d = IntegralTuning::DEFAULT;
    assert_eq!(IntegralTuning::parse(None, None, None), d);
    assert_eq!(d.label(), "256x64/shfl/g256");
    let t = IntegralTuning::parse_all(None, None, None, Some("serial"));
    assert_eq!(
        t, d,
        "the serial carries pass was removed: the default holds"
    );
    let t = IntegralTuning::parse_all(None, None, None, Some("par"));
    assert_eq!(t.carries, IntegralCarries::Par);
    assert_eq!(t.label(), "256x64/shfl/g256/par");
    assert_eq!(
        IntegralTuning::parse_all(None, None, None, Some("tiled")),
        d
    );
    assert_eq!(IntegralTuning::parse_all(None, None, None, Some("nope")), d);
    assert_eq!(d.scan, crate::IntegralScan::Auto);
    let t = d.with_scan(Some(" lookback "));
    assert_eq!(t.scan, crate::IntegralScan::LookBack);
    assert_eq!(t.label(), "256x64/shfl/g256/lookback");
    assert_eq!(d.with_scan(Some("tiled")).label(), "256x64/shfl/g256/tiled");
    assert_eq!(t.with_scan(Some("auto")), d);
    assert_eq!(d.with_scan(Some("fast")), d);
    assert_eq!(d.with_scan(None), d);
    assert_eq!(d.lookback, crate::IntegralLookBack::Auto);
    assert_eq!(
        d.lookback.direct_max_side(),
        crate::INTEGRAL_LOOKBACK_DIRECT_MAX_SIDE
    );
    let t = d.with_lookback(Some(" walk "));
    assert_eq!(t.lookback, crate::IntegralLookBack::Walk);
    assert_eq!(t.lookback.direct_max_side(), 0);
    assert_eq!(t.label(), "256x64/shfl/g256/walk");
    let t = d.with_lookback(Some("direct"));
    assert_eq!(t.label(), "256x64/shfl/g256/direct");
    assert!(t.lookback.direct_max_side() >= i32::MAX as usize);
    assert_eq!(t.with_lookback(Some("auto")), d);
    assert_eq!(d.with_lookback(Some("fast")), d);
    assert_eq!(d.with_lookback(None), d);
    let t = IntegralTuning::parse(Some("256x32"), Some("shfl"), Some("128"));
    assert_eq!((t.tile_h, t.shuffle, t.group_max), (32, true, 128));
    assert_eq!(t.label(), "256x32/shfl/g128");
    let t = IntegralTuning::parse(Some("16"), Some("local"), None);
    assert_eq!((t.tile_h, t.shuffle), (16, false));
    // The removed strip variant is an unknown value now: the default holds.
    assert_eq!(
        IntegralTuning::parse(None, Some("strip"), None),
        IntegralTuning::DEFAULT
    );
    // Out of range or unparsable: the default holds.
    for (tile, group) in [
        ("256x4", "16"),
        ("256x256", "512"),
        ("256x48", "96"),
        ("x", "y"),
    ] {
        let t = IntegralTuning::parse(Some(tile), Some("nope"), Some(group));
        assert_eq!(t, d, "{tile} {group}");
    }
}

#[test]
fn build_options_carry_the_tile() {
    assert_eq!(
        build_options(Tile::DEFAULT),
        "-DMV_TILE_W=16 -DMV_TILE_H=16"
    );
    assert_eq!(
        build_option_list(Tile::SEED_8X4, Backend::Cuda),
        ["-DMV_TILE_W=8", "-DMV_TILE_H=4", "--fmad=false"]
    );
    assert_eq!(Tile::default(), Tile::new(16, 16));
    assert_eq!(Tile::new(32, 8).halo(), (46, 22));
}

#[test]
fn only_the_filter_program_fuses_multiply_adds() {
    use crate::{program_option_list, FilterTuning, FmaMode};
    let t = Tile::SEED_8X4;
    let tile = ["-DMV_TILE_W=8", "-DMV_TILE_H=4"];
    for set in KernelSet::ALL {
        for backend in [Backend::Cuda, Backend::OpenCl] {
            assert_eq!(
                program_option_list(set, t, backend, FmaMode::Off),
                build_option_list(t, backend),
                "{set:?} {backend:?}: off is the plain options"
            );
        }
    }
    assert_eq!(
        program_option_list(KernelSet::Filter, t, Backend::Cuda, FmaMode::On),
        [tile[0], tile[1], "--fmad=true"]
    );
    assert_eq!(
        program_option_list(KernelSet::Filter, t, Backend::OpenCl, FmaMode::On),
        [tile[0], tile[1], "-DMV_FP_CONTRACT=1"]
    );
    for set in [KernelSet::Integral, KernelSet::Resample] {
        assert_eq!(
            program_option_list(set, t, Backend::Cuda, FmaMode::On),
            [tile[0], tile[1], "--fmad=false"],
            "{set:?}"
        );
        assert_eq!(
            program_option_list(set, t, Backend::OpenCl, FmaMode::On),
            tile,
            "{set:?}"
        );
    }
    let d = FilterTuning::DEFAULT;
    assert_eq!(d.fma, FmaMode::On);
    assert_eq!(d.label(), "auto/4");
    let off = d.with_fma(Some(" off "));
    assert_eq!(off.fma, FmaMode::Off);
    assert_eq!(off.label(), "auto/4/fma-off");
    assert_eq!(
        FilterTuning::parse(Some("off"), None)
            .with_fma(Some("off"))
            .label(),
        "off/fma-off"
    );
    assert_eq!(off.with_fma(Some("on")), d);
    assert_eq!(d.with_fma(Some("fused")), d, "unparsable: unchanged");
    assert_eq!(d.with_fma(None), d);
    assert_eq!(
        KernelSet::Filter.local_mem_bytes(Tile::DEFAULT),
        4 * (16 * crate::STREAM_PX + 8) * (16 * 4 + 6),
        "the separable f32 column tile, 4 rows per work-item"
    );
    assert_eq!(Tile::DEFAULT.cols_rows(), 4);
    assert_eq!(
        Tile { w: 32, h: 32 }.cols_rows(),
        1,
        "within COLS_MAX_BYTES"
    );
    let cols = d.with_cols(Some("on"));
    assert_eq!(cols.label(), "auto/4/cols-on");
    assert!(cols.uses_cols(5) && !cols.uses_cols(9));
    // auto: 3, 5 and 7 taps at every size, unless the streaming or halo-tile kernels are
    // asked for by name.
    assert!(d.uses_cols(3) && d.uses_cols(5) && d.uses_cols(7));
    assert!(!d.uses_cols(9));
    for stream in ["on", "off"] {
        let s = FilterTuning::parse(Some(stream), None);
        assert!(!s.uses_cols(7), "MVISION_FILTER_STREAM={stream}");
        assert!(s.with_cols(Some("on")).uses_cols(7));
    }
    assert!(!d.with_cols(Some("off")).uses_cols(7));
}

/// Tokens of one backend's dialect that must not appear in the shared bodies.
const BACKEND_ONLY: &[&str] = &[
    "__kernel",
    "__global",
    "__local",
    "__constant",
    "__shared__",
    "__device__",
    "__syncthreads",
    "barrier(",
    "get_global_id",
    "get_local_id",
    "get_group_id",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "clamp(",
    "mad24",
    "mul24",
    "convert_",
    "uchar",
    "ushort",
    "uint ",
    "ulong",
    "min(",
    "max(",
    "size_t",
];

#[test]
fn shared_bodies_use_only_the_portable_dialect() {
    for (file, body) in [
        ("border.h", BORDER_H),
        ("fixed_point.h", FIXED_POINT_H),
        ("filter.h", FILTER_H),
        ("integral.h", INTEGRAL_H),
        ("resample.h", RESAMPLE_H),
    ] {
        for token in BACKEND_ONLY {
            assert!(
                !body.contains(token),
                "{file} uses backend-specific `{token}`"
            );
        }
        assert!(!body.contains("#include"), "{file} includes a file");
        for word in body.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            assert!(
                !RESERVED.contains(&word),
                "{file} uses `{word}`, reserved in OpenCL C or CUDA"
            );
        }
    }
}

/// Identifiers one of the two languages reserves (OpenCL C: `half` and friends; CUDA C++: the
/// C++ keywords a C programmer might use as names).
const RESERVED: &[&str] = &[
    "half",
    "quad",
    "complex",
    "imaginary",
    "image2d_t",
    "sampler_t",
    "event_t",
    "new",
    "delete",
    "class",
    "template",
    "this",
    "namespace",
    "operator",
    "private",
    "public",
    "protected",
    "virtual",
    "typename",
    "using",
    "restrict",
];

/// Declarations that make the CUDA source parse as host C++: the CUDA keywords become nothing
/// and the built-in index variables plain structs.
const CUDA_STUB: &str = r#"
#define __global__
#define __shared__ static
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
struct mv_stub_dim3 { unsigned x, y, z; };
static mv_stub_dim3 threadIdx, blockIdx, blockDim;
static inline void __syncthreads() {}
static inline void __threadfence() {}
static inline unsigned atomicAdd(unsigned* p, unsigned v) { unsigned o = *p; *p = o + v; return o; }
static inline int atomicMin(int* p, int v) { int o = *p; *p = v < o ? v : o; return o; }
static inline void __syncwarp() {}
"#;

#[test]
fn cuda_sources_parse_as_cpp() {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_owned());
    if std::process::Command::new(&cxx)
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            std::env::var_os("CI").is_none(),
            "no C++ compiler ({cxx}) in CI: the CUDA sources cannot be checked"
        );
        // Straight to stderr: libtest captures `eprintln!` of passing tests.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED cuda_sources_parse_as_cpp: no C++ compiler `{cxx}` here"
        );
        return;
    }
    let dir = std::env::temp_dir().join(format!("mvision-kernels-cxx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for set in KernelSet::ALL {
        for tile in [Tile::DEFAULT, Tile::SEED_8X4] {
            let path = dir.join(format!("{}_{}x{}.cu.cpp", set.name(), tile.w, tile.h));
            std::fs::write(
                &path,
                format!("{CUDA_STUB}\n{}", source(set, Backend::Cuda)),
            )
            .unwrap();
            let out = std::process::Command::new(&cxx)
                .args(["-std=c++14", "-fsyntax-only", "-Wall", "-Wextra", "-Werror"])
                .args(build_option_list(tile, Backend::OpenCl))
                .arg(&path)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{} does not parse as C++:\n{}",
                path.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
