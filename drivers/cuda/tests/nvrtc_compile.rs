//! Every kernel program compiles with NVRTC for the GPUs we ship to: Jetson Orin (`sm_87`) and
//! H100/H200 (`sm_90`), and its PTX defines every entry point of `kernels/SPEC.md`.
//!
//! Needs NVRTC only (no driver, no GPU): CI gets it from the `nvidia-cuda-nvrtc-cu12` wheel,
//! `LD_LIBRARY_PATH=$(bash drivers/cuda/nvrtc-env.sh)`. Without NVRTC the tests fail when `CI`
//! is set and are skipped, with a message, otherwise.

use mvision_cuda::nvrtc::{self, Target};
use mvision_cuda::{loader, Error, KernelSet, Tile};

/// Jetson Orin and H100/H200.
const TARGETS: [Target; 2] = [Target::Real(8, 7), Target::Real(9, 0)];

/// Tiles the drivers use: the default, the tuned ones of the device tests.
const TILES: [Tile; 4] = [
    Tile::DEFAULT,
    Tile::SEED_8X4,
    Tile { w: 32, h: 8 },
    Tile { w: 8, h: 8 },
];

/// `true` when NVRTC can be used; otherwise panics under CI or says why it skips.
fn nvrtc_or_skip(test: &str) -> bool {
    if loader::nvrtc_present() {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "{test}: NVRTC not found and CI is set; run with \
             LD_LIBRARY_PATH=$(bash drivers/cuda/nvrtc-env.sh)"
        );
    }
    // Straight to stderr: libtest captures `eprintln!` of passing tests, and a skip must show.
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {test}: NVRTC not found (pip install nvidia-cuda-nvrtc-cu12, then \
         LD_LIBRARY_PATH=$(bash drivers/cuda/nvrtc-env.sh))"
    );
    false
}

/// Whether the PTX defines an entry point called `name`.
fn defines_entry(ptx: &str, name: &str) -> bool {
    ptx.lines().any(|l| {
        let l = l.trim_start();
        (l.starts_with(".visible .entry") || l.starts_with(".entry"))
            && l.contains(&format!(" {name}("))
    })
}

#[test]
fn every_kernel_set_compiles_for_orin_and_hopper() {
    if !nvrtc_or_skip("every_kernel_set_compiles_for_orin_and_hopper") {
        return;
    }
    let version = nvrtc::version().expect("NVRTC version");
    let archs = nvrtc::supported_archs().expect("NVRTC architectures");
    eprintln!("NVRTC {}.{}; architectures {archs:?}", version.0, version.1);
    for target in TARGETS {
        let mut kernels = 0;
        for set in KernelSet::ALL {
            let tiles: &[Tile] = if set.uses_tile() {
                &TILES
            } else {
                &[Tile::DEFAULT]
            };
            for &tile in tiles {
                let compiled = match nvrtc::compile_kernel_set(set, tile, target) {
                    Ok(c) => c,
                    Err(Error::KernelBuild { kernel, log }) => {
                        panic!("{kernel} did not compile:\n{log}")
                    }
                    Err(e) => panic!("{set:?} {tile:?} {}: {e}", target.arch_flag()),
                };
                if !compiled.log.trim().is_empty() {
                    eprintln!(
                        "{set:?} {tile:?} {}: NVRTC warnings:\n{}",
                        target.arch_flag(),
                        compiled.log
                    );
                }
                for name in set.kernel_names() {
                    assert!(
                        defines_entry(&compiled.ptx, name),
                        "{} PTX of {set:?} {tile:?} lacks entry {name}",
                        target.arch_flag()
                    );
                }
                let cubin = compiled.cubin.as_deref().unwrap_or_default();
                assert!(cubin.starts_with(b"\x7fELF"), "no CUBIN for {set:?}");
                if tile == Tile::DEFAULT {
                    kernels += set.kernel_names().len();
                }
            }
        }
        eprintln!("{}: {kernels} kernels compiled", target.arch_flag());
        assert_eq!(kernels, 35, "kernels/SPEC.md lists 35 entry points");
    }
}

/// JetPack 5 ships NVRTC 11.4, which has no `__grid_constant__`: the prelude then passes the
/// filter coefficients as plain `const` structs (copied per thread). No NVRTC 11.4 wheel
/// exists, so `-DMV_NO_GRID_CONSTANT` takes that path here, for Xavier (`sm_72`) and Orin.
#[test]
fn every_kernel_set_compiles_without_grid_constant_for_jetpack_5() {
    if !nvrtc_or_skip("every_kernel_set_compiles_without_grid_constant_for_jetpack_5") {
        return;
    }
    let source_with = |set: KernelSet| mvision_kernels::source(set, mvision_kernels::Backend::Cuda);
    for target in [Target::Real(7, 2), Target::Real(8, 7)] {
        for set in KernelSet::ALL {
            let tile = set.program_tile(Tile::DEFAULT);
            let mut options = mvision_kernels::program_option_list(
                set,
                tile,
                mvision_kernels::Backend::Cuda,
                mvision_kernels::FilterTuning::get().fma,
            );
            options.push("-DMV_NO_GRID_CONSTANT".into());
            let name = format!("mv_{}_jetpack5.cu", set.name());
            let compiled = match nvrtc::compile(&name, &source_with(set), target, &options) {
                Ok(c) => c,
                Err(Error::KernelBuild { kernel, log }) => {
                    panic!("{kernel} did not compile:\n{log}")
                }
                Err(e) => panic!("{set:?} {}: {e}", target.arch_flag()),
            };
            for name in set.kernel_names() {
                assert!(defines_entry(&compiled.ptx, name), "{set:?} lacks {name}");
            }
        }
    }
}

#[test]
fn a_device_newer_than_nvrtc_gets_ptx_for_the_newest_virtual_arch() {
    if !nvrtc_or_skip("a_device_newer_than_nvrtc_gets_ptx_for_the_newest_virtual_arch") {
        return;
    }
    let archs = nvrtc::supported_archs().unwrap();
    let newest = *archs.iter().max().unwrap();
    assert_eq!(
        nvrtc::target_for((newest / 10, newest % 10)).unwrap(),
        Target::Real(newest / 10, newest % 10)
    );
    // A compute capability one major version beyond anything this NVRTC knows.
    let future = (newest / 10 + 1, 0);
    let target = nvrtc::target_for(future).unwrap();
    assert_eq!(target, Target::Virtual(newest / 10, newest % 10));
    let compiled = nvrtc::compile_kernel_set(KernelSet::Resample, Tile::DEFAULT, target).unwrap();
    assert!(compiled.cubin.is_none());
    assert!(defines_entry(&compiled.ptx, "mv_resize_bilinear_u8"));
}

#[test]
fn a_compile_error_returns_the_nvrtc_log() {
    if !nvrtc_or_skip("a_compile_error_returns_the_nvrtc_log") {
        return;
    }
    let src = "extern \"C\" __global__ void broken(int* p) { p[0] = undefined_name; }";
    match nvrtc::compile("broken.cu", src, Target::Real(8, 7), &[]) {
        Err(Error::KernelBuild { kernel, log }) => {
            assert!(
                kernel.contains("broken.cu") && kernel.contains("sm_87"),
                "{kernel}"
            );
            assert!(log.contains("undefined_name"), "log: {log}");
        }
        other => panic!("expected KernelBuild, got {other:?}"),
    }
}

#[test]
fn a_tiny_inline_kernel_compiles_without_any_driver() {
    if !nvrtc_or_skip("a_tiny_inline_kernel_compiles_without_any_driver") {
        return;
    }
    let src = "extern \"C\" __global__ void add_one(float* p, int n) {\n\
               int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
               if (i < n) p[i] = p[i] + 1.0f;\n}\n";
    let compiled = nvrtc::compile("add_one.cu", src, Target::Real(9, 0), &[]).unwrap();
    assert!(defines_entry(&compiled.ptx, "add_one"));
    assert!(compiled.ptx.contains(".target sm_90"));
}
