//! # mvision-benches
//!
//! Throughput benchmarks of libmvision's CPU filtering core.
//!
//! * [`cases`]: the catalogue — dense `filter2d` 3×3 and 7×7, separable Gaussian 3 and 7, box
//!   5×5 (each `u8` fixed-point and `f32`), integral images with and without the squared table —
//!   and [`cases::CpuCase`], one case made ready to run with its buffers allocated.
//! * `benches/filter.rs`: the same cases under criterion (`cargo bench -p mvision-benches`),
//!   at 640×480 and 1920×1080, plus 3840×2160 when `MVISION_BENCH_4K=1`.
//!
//! * [`nn_cases`]: GEMM and conv2d cases of the CNN core; `benches/gemm.rs` runs them under
//!   criterion and `examples/nn_bench.rs` prints them as JSON for `bench/gemm_compare.py`.
//!
//! `mvision bench filter` runs the same catalogue (median of N runs, table and JSON), and
//! `bench/opencv_compare.py` sets its numbers beside OpenCV's; `BENCHMARKS.md` holds the results.
#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod cases;
pub mod nn_cases;

#[cfg(test)]
mod tests {
    use super::cases::*;

    #[test]
    fn every_case_prepares_and_runs_on_awkward_sizes() {
        // 1×1 and 2×3 exercise the border reflection on every side at once; 37×23 is odd.
        for (w, h) in [(1, 1), (2, 3), (37, 23)] {
            for case in CASES {
                let mut c = CpuCase::new(case, w, h).unwrap_or_else(|e| panic!("{case:?}: {e}"));
                assert_eq!(c.pixels(), w * h);
                c.run().unwrap();
            }
        }
    }

    #[test]
    fn case_ids_are_unique_and_stable() {
        let ids: Vec<String> = CASES.iter().map(Case::id).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len());
        // The comparison script and BENCHMARKS.md key on these names.
        assert_eq!(ids[0], "filter2d_3x3_u8");
        assert!(ids.contains(&"gaussian_7_f32".to_string()));
        assert!(ids.contains(&"box_5_u8".to_string()));
        assert!(ids.contains(&"integral_sq_u8".to_string()));
    }

    #[test]
    fn dense_kernels_are_normalised_full_and_not_separable() {
        for k in DENSE_KERNEL_SIZES {
            let c = dense_kernel(k);
            assert_eq!(c.len(), k * k);
            assert!(c.iter().all(|&v| v > 0.0), "a zero tap would be skipped");
            assert!((c.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            // Rank > 1: some 2×2 minor is non-zero, so no separable shortcut exists.
            let at = |r: usize, col: usize| c[r * k + col];
            let minor = at(0, 0) * at(1, 1) - at(0, 1) * at(1, 0);
            assert!(minor.abs() > 1e-6);
            // Not symmetric either (correlation vs convolution would be indistinguishable).
            assert!((0..k * k).any(|i| c[i] != c[k * k - 1 - i]));
        }
    }

    #[test]
    fn input_is_deterministic_and_covers_the_range() {
        let a = input_u8(64, 48);
        assert_eq!(a, input_u8(64, 48));
        assert_eq!(a.len(), 64 * 48);
        assert!(a.iter().any(|&p| p < 16) && a.iter().any(|&p| p > 240));
        // A prefix of a larger image: the stream does not depend on the size.
        assert_eq!(&input_u8(64, 49)[..a.len()], &a[..]);
    }

    #[test]
    fn alexnet_layers_have_torchvisions_output_sizes() {
        let outs: Vec<(usize, usize)> = crate::nn_cases::alexnet_conv_shapes()
            .iter()
            .map(|s| {
                let d = s.shape.dims().unwrap();
                (d.out_h, s.shape.c_out)
            })
            .collect();
        assert_eq!(outs, [(55, 64), (27, 192), (13, 384), (13, 256), (13, 256)]);
    }

    #[test]
    fn unsupported_shapes_are_errors_not_panics() {
        use mvision_core::Error;
        let f32_integral = Case {
            op: Op::Integral { squared: false },
            precision: Precision::F32,
        };
        assert_eq!(
            CpuCase::new(f32_integral, 8, 8).err(),
            Some(Error::InvalidArgument)
        );
        assert_eq!(CpuCase::new(CASES[0], 0, 8).err(), Some(Error::ZeroSize));
        assert_eq!(
            CpuCase::new(CASES[0], 1 << 16, 1 << 16).err(),
            Some(Error::Overflow)
        );
        let even = Case {
            op: Op::Box { ksize: 4 },
            precision: Precision::U8,
        };
        assert_eq!(CpuCase::new(even, 8, 8).err(), Some(Error::InvalidKernel));
    }
}
