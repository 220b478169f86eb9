//! Times the CNN core's GEMM and conv cases (`mvision_benches::nn_cases`) the way
//! `bench/gemm_compare.py` times numpy: an untimed warm-up of at least 50 ms, then N samples of
//! at least `--min-ms` of back-to-back runs each; one JSON object per case on stdout with the
//! median seconds per run.
//!
//! ```sh
//! cargo run --release -p mvision-benches --example nn_bench -- [--samples N] [--min-ms T] \
//!     [--gemm] [--conv] [--naive-max N] [--sweep] [--only SUBSTR] [--methods A,B]
//! ```
//!
//! `--only` keeps the conv shapes whose id contains `SUBSTR`; `--methods` the conv cases whose
//! method is in the list (`Direct`, `Im2col`, `Mec`, `Mfca`, `Winograd`, `Blocked`,
//! `WinogradPrepared`, `BlockedPrepared`). Conv cases are every method of `conv_methods`, then
//! `WinogradPrepared` where Winograd applies and `BlockedPrepared`: those methods on weights
//! transformed once before timing (what a network that keeps them runs; their bytes are
//! `prepared_weight_bytes`, outside `workspace_bytes`).
//!
//! `--sweep` times only `sgemm` on small cubes (2³…128³), where the `gemm` crate's fixed cost
//! decides the crossover `GEMM_CRATE_MIN_FLOP`.

use std::time::{Duration, Instant};

use mvision_benches::nn_cases::{conv_cases, conv_shapes, gemm_shapes, GemmCase, GemmVariant};

fn time(mut run: impl FnMut(), samples: usize, min: Duration) -> f64 {
    let warm = Instant::now();
    while warm.elapsed() < Duration::from_millis(50) {
        run();
    }
    let mut per_run: Vec<f64> = (0..samples)
        .map(|_| {
            let t = Instant::now();
            let mut runs = 0u32;
            while t.elapsed() < min {
                run();
                runs += 1;
            }
            t.elapsed().as_secs_f64() / runs as f64
        })
        .collect();
    per_run.sort_by(f64::total_cmp);
    per_run[per_run.len() / 2]
}

fn main() {
    // Same contract as the CLI: MVISION_CPU caps the core's instruction-set level.
    if let Ok(name) = std::env::var("MVISION_CPU") {
        let level = mvision_core::cpu::Level::parse(&name).expect("MVISION_CPU: a level name");
        mvision_core::cpu::set_cap(level);
    }
    let args: Vec<String> = std::env::args().collect();
    let opt = |name: &str, default: usize| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map_or(default, |v| v.parse().expect("a number"))
    };
    let samples = opt("--samples", 7);
    let min = Duration::from_millis(opt("--min-ms", 200) as u64);
    let naive_max = opt("--naive-max", 512);
    if args.iter().any(|a| a == "--sweep") {
        for n in [2, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128] {
            let mut case = GemmCase::new(GemmVariant::Sgemm, n, n, n).expect("case");
            let s = time(|| case.run().expect("runs"), samples, min);
            println!(
                "{{\"kind\":\"sweep\",\"impl\":\"{}\",\"n\":{n},\"seconds\":{s:e},\"gflops\":{:.3}}}",
                GemmVariant::Sgemm.id(),
                case.flop() as f64 / s / 1e9
            );
        }
        return;
    }
    let both = !args.iter().any(|a| a == "--gemm" || a == "--conv");
    if both || args.iter().any(|a| a == "--gemm") {
        for (m, n, k) in gemm_shapes() {
            for variant in [GemmVariant::Sgemm, GemmVariant::Tiled32, GemmVariant::Naive] {
                // The naive kernel takes tens of seconds per 2048³ product: bounded by default.
                if variant == GemmVariant::Naive && m == n && n == k && m > naive_max {
                    continue;
                }
                let mut case = GemmCase::new(variant, m, n, k).expect("case");
                let s = time(|| case.run().expect("runs"), samples, min);
                println!(
                    "{{\"kind\":\"gemm\",\"impl\":\"{}\",\"m\":{m},\"n\":{n},\"k\":{k},\"seconds\":{s:e},\"gflops\":{:.3}}}",
                    variant.id(),
                    case.flop() as f64 / s / 1e9
                );
            }
        }
    }
    if both || args.iter().any(|a| a == "--conv") {
        let only = args
            .iter()
            .position(|a| a == "--only")
            .and_then(|i| args.get(i + 1))
            .map_or("", |s| s.as_str());
        let methods: Vec<&str> = args
            .iter()
            .position(|a| a == "--methods")
            .and_then(|i| args.get(i + 1))
            .map_or(Vec::new(), |s| s.split(',').collect());
        // `Mfca { m: 3 }` is selected as `Mfca`.
        let keep = |label: &str| {
            methods.is_empty() || methods.contains(&label.split(' ').next().unwrap_or(label))
        };
        for cs in conv_shapes().into_iter().filter(|c| c.id.contains(only)) {
            let cases = conv_cases(&cs.shape).expect("valid shape");
            for mut case in cases.into_iter().filter(|c| keep(&c.label())) {
                let s = time(|| case.run().expect("runs"), samples, min);
                let g = &cs.shape;
                println!(
                    "{{\"kind\":\"conv\",\"shape\":\"{}\",\"geometry\":{{\"n\":{},\"c\":{},\"h\":{},\"w\":{},\"out_c\":{},\"kh\":{},\"kw\":{},\"stride\":[{},{}],\"pads\":[{},{},{},{}],\"dilation\":[{},{}],\"groups\":{}}},\"method\":\"{}\",\"seconds\":{s:e},\"workspace_bytes\":{},\"prepared_weight_bytes\":{},\"gflops\":{:.3}}}",
                    cs.id,
                    g.n,
                    g.c_in,
                    g.h,
                    g.w,
                    g.c_out,
                    g.kh,
                    g.kw,
                    g.stride_h,
                    g.stride_w,
                    g.pad_top,
                    g.pad_left,
                    g.pad_bottom,
                    g.pad_right,
                    g.dilation_h,
                    g.dilation_w,
                    g.groups,
                    case.label(),
                    case.workspace_bytes(),
                    case.prepared_bytes(),
                    case.flop() as f64 / s / 1e9
                );
            }
        }
    }
}
