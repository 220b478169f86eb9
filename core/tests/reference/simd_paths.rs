//! The explicit-SIMD paths of the `u8` filters (x86 SSE2, AArch64 NEON) against the references,
//! at their boundaries: every width from 1 to 40 (below, at and around the 8-pixel vector step,
//! where the last vector overlaps the previous one), every odd kernel size, coefficients at the
//! ends of the `i16` range that `pmaddwd` / `smlal` take, and coefficients just outside it,
//! which must take the portable path and give the same results. On targets without SIMD these
//! exercise the portable path the same way.

use super::*;

/// Coefficients for one kernel of `n` taps: what the SIMD path sees in practice and at its
/// edges. `kind` 0: random in `i16`; 1: every tap `−32768` or `32767` (the widest sums the
/// SIMD path can get); 2: as 0 with one tap just outside `i16` (portable fallback); 3: mostly
/// zero with a few `±1` (many skipped taps in the portable path).
fn i16_edge_coeffs(rng: &mut Rng, n: usize, kind: usize) -> Vec<i32> {
    let mut c: Vec<i32> = match kind {
        0 => (0..n).map(|_| rng.range(-32768, 32767) as i32).collect(),
        1 => (0..n)
            .map(|_| if rng.chance(1, 2) { -32768 } else { 32767 })
            .collect(),
        2 => (0..n).map(|_| rng.range(-2000, 2000) as i32).collect(),
        _ => (0..n)
            .map(|_| match rng.below(6) {
                0 => 1,
                1 => -1,
                _ => 0,
            })
            .collect(),
    };
    if kind == 2 {
        let i = rng.below(n);
        c[i] = if rng.chance(1, 2) { 32768 } else { -32769 };
    }
    c
}

/// A shift that keeps outputs of a kernel with `Σ|c|` = `gain` spread over `0..=255` (not all
/// saturated), within the documented limits.
fn shift_for(gain: i64) -> u32 {
    let bits = 64 - (gain.max(1) as u64).leading_zeros();
    bits.clamp(0, MAX_SHIFT)
}

#[test]
fn filter2d_u8_simd_boundaries() {
    let mut rng = Rng::new(40);
    for w in 1..=40 {
        for k in (1..=MAX_KERNEL_SIZE).step_by(2) {
            let kind = (w + k) % 4;
            let h = 1 + (w * 7 + k) % 9;
            let coeffs = i16_edge_coeffs(&mut rng, k * k, kind);
            let gain: i64 = coeffs.iter().map(|&c| (c as i64).abs()).sum();
            let shift = shift_for(gain);
            let kernel = Kernel2dQ::new(k, &coeffs, shift).unwrap();
            let borders = borders_u8(&mut rng);
            let border = borders[(w + k) % borders.len()];
            let src = random_u8(&mut rng, w, h);
            let want = common::filter_u8(&src.plane(), k, k, &wide(&coeffs), shift, border);
            let mut dst = Img::<u8>::garbage(&mut rng, w, h);
            let before = dst.snapshot();
            let mut scratch = scratch_i32(&mut rng, filter2d_scratch_len(w, k));
            filter2d_u8(
                &src.view(),
                &mut dst.view_mut(),
                &kernel,
                border,
                &mut scratch,
            )
            .unwrap();
            let ctx = format!("filter2d_u8 {w}x{h} k={k} kind={kind} shift={shift} {border:?}");
            dst.assert_pixels_eq(&want, &ctx);
            dst.assert_gaps_unchanged(&before, &ctx);
        }
    }
}

/// The largest sums: all-255 images under all-`±32768` kernels, where any lost carry of a
/// paired multiply-add would show.
#[test]
fn filter2d_u8_simd_extremes() {
    let mut rng = Rng::new(41);
    for k in (1..=MAX_KERNEL_SIZE).step_by(2) {
        for (c, shift) in [(-32768, 0), (32767, 0), (32767, 23), (-32768, MAX_SHIFT)] {
            let coeffs = vec![c; k * k];
            let kernel = Kernel2dQ::new(k, &coeffs, shift).unwrap();
            for w in [8, 9, 16, 17, 23] {
                let src = Img::from_fn(&mut rng, w, 3, |rng, x, _| {
                    if x % 3 == 0 {
                        255
                    } else {
                        rng.u8() | 0xF0
                    }
                });
                for border in [Border::Replicate, Border::Constant(255)] {
                    let want = common::filter_u8(&src.plane(), k, k, &wide(&coeffs), shift, border);
                    let mut dst = Img::<u8>::garbage(&mut rng, w, 3);
                    let mut s = vec![0; filter2d_scratch_len(w, k)];
                    filter2d_u8(&src.view(), &mut dst.view_mut(), &kernel, border, &mut s).unwrap();
                    dst.assert_pixels_eq(&want, &format!("k={k} c={c} shift={shift} w={w}"));
                }
            }
        }
    }
}

/// Separable kernels with `i16` taps near the limits the accumulator allows, and with one tap
/// outside `i16` (portable path), at every width around the vector step.
#[test]
fn sep_filter_u8_simd_boundaries() {
    let mut rng = Rng::new(42);
    for w in 1..=40 {
        for k in (1..=MAX_KERNEL_SIZE).step_by(2) {
            let ly = [1, 3, 5, 7, 9, 11, 13, 15][(w + k / 2) % 8];
            let h = 1 + (w * 5 + k) % 11;
            let kind = (w * 3 + k) % 4;
            // Within the accumulator budget: the vertical taps take what the horizontal leave.
            let g = |v: &[i32]| v.iter().map(|&c| (c as i64).abs()).sum::<i64>();
            let kx = i16_edge_coeffs(&mut rng, k, kind);
            let room = (abs_budget(MAX_SHIFT) / g(&kx).max(1)).min(32767 * ly as i64);
            let per_tap = (room / ly as i64).clamp(1, 32767);
            let ky: Vec<i32> = (0..ly)
                .map(|_| match (kind, rng.below(4)) {
                    (1, _) => (if rng.chance(1, 2) { per_tap } else { -per_tap }) as i32,
                    (_, 0) => 0,
                    _ => rng.range(-per_tap, per_tap) as i32,
                })
                .collect();
            let gain = kx.iter().map(|&c| (c as i64).abs()).sum::<i64>()
                * ky.iter().map(|&c| (c as i64).abs()).sum::<i64>();
            let shift = shift_for(gain);
            let kernel = SepKernelQ::new(&kx, &ky, shift).unwrap();
            let borders = borders_u8(&mut rng);
            let border = borders[(w + k) % borders.len()];
            let src = random_u8(&mut rng, w, h);
            let dense = wide(&common::outer(&kx, &ky));
            let want = common::filter_u8(&src.plane(), k, ly, &dense, shift, border);
            let mut dst = Img::<u8>::garbage(&mut rng, w, h);
            let before = dst.snapshot();
            let mut scratch = scratch_i32(&mut rng, separable_scratch_len(w, k, ly));
            sep_filter_u8(
                &src.view(),
                &mut dst.view_mut(),
                &kernel,
                border,
                &mut scratch,
            )
            .unwrap();
            let ctx =
                format!("sep_filter_u8 {w}x{h} {k}x{ly} {kx:?} {ky:?} shift={shift} {border:?}");
            dst.assert_pixels_eq(&want, &ctx);
            dst.assert_gaps_unchanged(&before, &ctx);
        }
    }
}

/// Gaussian, box and Sobel at every width around the vector step and every size.
#[test]
fn blurs_and_sobel_simd_boundaries() {
    let mut rng = Rng::new(43);
    for w in 1..=40 {
        for k in (1..=MAX_KERNEL_SIZE).step_by(2) {
            let h = 1 + (w + 3 * k) % 10;
            let borders = borders_u8(&mut rng);
            let border = borders[(w + k) % borders.len()];
            let src = if (w + k) % 7 == 0 {
                Img::from_fn(&mut rng, w, h, |_, _, _| 255)
            } else {
                random_u8(&mut rng, w, h)
            };
            let p = src.plane();
            let ctx = format!("{w}x{h} k={k} {border:?}");
            let mut scratch = scratch_i32(&mut rng, separable_scratch_len(w, k, k));

            let mut dst = Img::<u8>::garbage(&mut rng, w, h);
            let before = dst.snapshot();
            box_blur_u8(&src.view(), &mut dst.view_mut(), k, border, &mut scratch).unwrap();
            dst.assert_pixels_eq(&common::box_u8(&p, k, border), &format!("box {ctx}"));
            dst.assert_gaps_unchanged(&before, &ctx);

            let g = gaussian_kernel_q(k, 0.0).unwrap();
            let dense = wide(&common::outer(g.kx(), g.ky()));
            let want = common::filter_u8(&p, k, k, &dense, g.shift(), border);
            let mut dst = Img::<u8>::garbage(&mut rng, w, h);
            gaussian_blur_u8(
                &src.view(),
                &mut dst.view_mut(),
                k,
                0.0,
                border,
                &mut scratch,
            )
            .unwrap();
            dst.assert_pixels_eq(&want, &format!("gaussian {ctx}"));

            if k == 3 {
                let (wx, wy) = common::sobel_i16(&p, border);
                let mut dx = Img::<i16>::garbage(&mut rng, w, h);
                let mut dy = Img::<i16>::garbage(&mut rng, w, h);
                sobel_u8(
                    &src.view(),
                    &mut dx.view_mut(),
                    &mut dy.view_mut(),
                    border,
                    &mut scratch,
                )
                .unwrap();
                dx.assert_pixels_eq(&wx, &format!("sobel dx {ctx}"));
                dy.assert_pixels_eq(&wy, &format!("sobel dy {ctx}"));
            }
        }
    }
}
