//! TLD's NN classifier: normalised patches against a plain reference (the shared bilinear
//! reference resize, the mean in `f64`), NCC against its definition, `Sr`/`Sc` against a
//! brute-force evaluation of every template, the learning rule and the replacement policy
//! against an unbounded-`Vec` model of the documented rules, bounded memory over 10 000
//! insertions, determinism, and no heap use (a counting allocator, as in `no_alloc.rs`).

#[allow(dead_code)]
#[path = "common/mod.rs"]
mod common;

use std::hint::black_box;

use common::{random_u8, Img, Rng};
use mvision_core::tld::nn::{
    nn_len, NnClassifier, NnParams, NnSimilarity, NnUpdate, NN_DETECT_THRESHOLD,
    NN_NEGATIVE_THRESHOLD, NN_VALID_THRESHOLD,
};
use mvision_core::tld::patch::{
    extract_patch, ncc, patch_energy, patch_similarity, zero_mean_patch, Patch, PATCH_LEN,
    PATCH_SIZE,
};
use mvision_core::{Error, Rect};

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::heap_calls;

#[global_allocator]
static GLOBAL: counting_alloc::Counting = counting_alloc::Counting;

// ---------------------------------------------------------------------------------------------
// References
// ---------------------------------------------------------------------------------------------

/// The documented patch: the reference bilinear resize of the box to 15 × 15, minus its mean
/// (in `f64`).
fn reference_patch(frame: &Img<u8>, r: Rect) -> Vec<f64> {
    let crop = frame.plane().crop(
        r.x as usize,
        r.y as usize,
        r.width as usize,
        r.height as usize,
    );
    let px = common::resize_u8(&crop, PATCH_SIZE, PATCH_SIZE).px;
    let mean = px.iter().map(|&v| v as f64).sum::<f64>() / PATCH_LEN as f64;
    px.iter().map(|&v| v as f64 - mean).collect()
}

/// NCC by its definition in `f64`; 0 when either patch is flat.
fn reference_ncc(a: &Patch, b: &Patch) -> f64 {
    let (mut ab, mut aa, mut bb) = (0.0f64, 0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b.iter()) {
        let (x, y) = (x as f64, y as f64);
        ab += x * y;
        aa += x * x;
        bb += y * y;
    }
    if aa * bb == 0.0 {
        0.0
    } else {
        ab / (aa * bb).sqrt()
    }
}

/// Seed 003's confidence `(1 − S⁻)/(2 − S⁺ − S⁻)` with OpenTLD's degenerate cases, in `f64`.
fn reference_relative(np: usize, nn: usize, s_pos: f64, s_neg: f64) -> f64 {
    if np == 0 {
        0.0
    } else if nn == 0 {
        1.0
    } else if 2.0 - s_pos - s_neg == 0.0 {
        0.5
    } else {
        (1.0 - s_neg) / (2.0 - s_pos - s_neg)
    }
}

/// `(Sr, Sc, S⁺, S⁺ early, S⁻)` by brute force over the stored templates, in `f64`.
fn reference_similarity(nn: &NnClassifier<'_>, p: &Patch) -> [f64; 5] {
    let sim = |t: &Patch| 0.5 * (reference_ncc(p, t) + 1.0);
    let np = nn.positive_len();
    let early = np.div_ceil(2);
    let (mut sp, mut spe, mut sn) = (0.0f64, 0.0f64, 0.0f64);
    for i in 0..np {
        let s = sim(nn.positive(i).unwrap());
        sp = sp.max(s);
        if i < early {
            spe = spe.max(s);
        }
    }
    for i in 0..nn.negative_len() {
        sn = sn.max(sim(nn.negative(i).unwrap()));
    }
    let nl = nn.negative_len();
    [
        reference_relative(np, nl, sp, sn),
        reference_relative(np, nl, spe, sn),
        sp,
        spe,
        sn,
    ]
}

/// An unbounded-`Vec` model of the documented learning rule and replacement policy, deciding
/// with the core's own (separately tested) `patch_similarity`, so its choices are exact.
struct Model {
    pos: Vec<Patch>,
    neg: Vec<Patch>,
    cap_pos: usize,
    cap_neg: usize,
}

impl Model {
    fn relative(&self, p: &Patch) -> f32 {
        if self.pos.is_empty() {
            return 0.0;
        }
        if self.neg.is_empty() {
            return 1.0;
        }
        let sp = self
            .pos
            .iter()
            .map(|t| patch_similarity(p, t))
            .fold(0.0, f32::max);
        let sn = self
            .neg
            .iter()
            .map(|t| patch_similarity(p, t))
            .fold(0.0, f32::max);
        let (dn, dp) = (1.0 - sn, 1.0 - sp);
        if dn + dp > 0.0 {
            (dn / (dn + dp)).clamp(0.0, 1.0)
        } else {
            0.5
        }
    }

    /// Index of the most similar template among `from..`, lowest index on ties.
    fn nearest(store: &[Patch], p: &Patch, from: usize) -> usize {
        let mut best = (from, f32::NEG_INFINITY);
        for (i, t) in store.iter().enumerate().skip(from) {
            let s = patch_similarity(p, t);
            if s > best.1 {
                best = (i, s);
            }
        }
        best.0
    }

    fn learn_positive(&mut self, p: &Patch) -> NnUpdate {
        if !self.pos.is_empty() && self.relative(p) > NN_DETECT_THRESHOLD {
            return NnUpdate::Unchanged;
        }
        if self.pos.len() < self.cap_pos {
            self.pos.push(*p);
            return NnUpdate::Added;
        }
        let evicted = Self::nearest(&self.pos, p, 1);
        self.pos.remove(evicted);
        self.pos.push(*p);
        NnUpdate::Replaced { evicted }
    }

    fn learn_negative(&mut self, p: &Patch) -> NnUpdate {
        if self.relative(p) <= NN_NEGATIVE_THRESHOLD {
            return NnUpdate::Unchanged;
        }
        if self.neg.len() < self.cap_neg {
            self.neg.push(*p);
            return NnUpdate::Added;
        }
        let evicted = Self::nearest(&self.neg, p, 0);
        self.neg[evicted] = *p;
        NnUpdate::Replaced { evicted }
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// A zero-mean patch from 225 random grey levels.
fn random_patch(rng: &mut Rng) -> Patch {
    let mut raw = [0u8; PATCH_LEN];
    raw.iter_mut().for_each(|v| *v = rng.u8());
    let mut p = [0.0; PATCH_LEN];
    zero_mean_patch(&raw, &mut p);
    p
}

/// A patch near `base`: grey levels `base ± amp`, `amp` drawn from `[lo, hi)`, re-centred.
fn perturbed(rng: &mut Rng, base: &Patch, (lo, hi): (f32, f32)) -> Patch {
    let amp = if lo < hi { rng.f32_in(lo, hi) } else { lo };
    let mut p = *base;
    p.iter_mut().for_each(|v| *v += rng.f32_in(-amp, amp));
    let mean = p.iter().sum::<f32>() / PATCH_LEN as f32;
    p.iter_mut().for_each(|v| *v -= mean);
    p
}

fn bits(p: &Patch) -> Vec<u32> {
    p.iter().map(|v| v.to_bits()).collect()
}

fn params(max_positive: usize, max_negative: usize) -> NnParams {
    NnParams {
        max_positive,
        max_negative,
        ..NnParams::DEFAULT
    }
}

fn assert_sim_close(got: &NnSimilarity, want: [f64; 5], ctx: &str) {
    let g = [
        got.relative,
        got.conservative,
        got.max_positive,
        got.max_positive_early,
        got.max_negative,
    ];
    for (k, (&g, &w)) in g.iter().zip(want.iter()).enumerate() {
        assert!(
            (g as f64 - w).abs() <= 2e-5,
            "{ctx}: field {k} got {g}, want {w}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Patches
// ---------------------------------------------------------------------------------------------

#[test]
fn extract_patch_matches_the_reference_resample_minus_mean() {
    let mut rng = Rng::new(500);
    for &(w, h) in &[
        (15usize, 15usize),
        (40, 30),
        (97, 61),
        (16, 200),
        (320, 240),
    ] {
        let frame = random_u8(&mut rng, w, h);
        for _ in 0..40 {
            let bw = 1 + rng.below(w);
            let bh = 1 + rng.below(h);
            let r = Rect::new(
                rng.below(w - bw + 1) as i32,
                rng.below(h - bh + 1) as i32,
                bw as i32,
                bh as i32,
            );
            let mut got = [f32::NAN; PATCH_LEN];
            extract_patch(&frame.view(), r, &mut got).unwrap();
            let want = reference_patch(&frame, r);
            for (i, (&g, &w)) in got.iter().zip(want.iter()).enumerate() {
                assert!(
                    (g as f64 - w).abs() <= 1e-4,
                    "{r:?} in {w}x{h}: value {i} got {g}, want {w}"
                );
            }
            let sum: f64 = got.iter().map(|&v| v as f64).sum();
            assert!(sum.abs() < 1e-2, "{r:?}: not zero-mean ({sum})");
        }
    }
}

#[test]
fn extract_patch_copies_a_15x15_box_and_flattens_a_1x1_box() {
    let mut rng = Rng::new(501);
    let frame = random_u8(&mut rng, 30, 20);
    let r = Rect::new(7, 3, 15, 15);
    let mut got = [0.0; PATCH_LEN];
    extract_patch(&frame.view(), r, &mut got).unwrap();
    let mut raw = [0u8; PATCH_LEN];
    for y in 0..PATCH_SIZE {
        for x in 0..PATCH_SIZE {
            raw[y * PATCH_SIZE + x] = frame.at(7 + x, 3 + y);
        }
    }
    let mut want = [0.0; PATCH_LEN];
    zero_mean_patch(&raw, &mut want);
    assert_eq!(bits(&got), bits(&want));

    extract_patch(&frame.view(), Rect::new(29, 19, 1, 1), &mut got).unwrap();
    assert!(got.iter().all(|&v| v == 0.0), "a 1x1 box is flat");
}

#[test]
fn extract_patch_rejects_empty_and_outside_boxes_without_writing() {
    let mut rng = Rng::new(502);
    let frame = random_u8(&mut rng, 30, 20);
    let cases = [
        (Rect::new(0, 0, 0, 5), Error::ZeroSize),
        (Rect::new(0, 0, 5, -1), Error::ZeroSize),
        (Rect::new(-1, 0, 5, 5), Error::OutOfBounds),
        (Rect::new(0, -1, 5, 5), Error::OutOfBounds),
        (Rect::new(26, 0, 5, 5), Error::OutOfBounds),
        (Rect::new(0, 16, 5, 5), Error::OutOfBounds),
        (Rect::new(i32::MAX, 0, i32::MAX, 5), Error::OutOfBounds),
    ];
    for (r, e) in cases {
        let mut out = [7.5f32; PATCH_LEN];
        assert_eq!(extract_patch(&frame.view(), r, &mut out), Err(e), "{r:?}");
        assert!(out.iter().all(|&v| v == 7.5), "{r:?}: output written");
    }
}

// ---------------------------------------------------------------------------------------------
// NCC
// ---------------------------------------------------------------------------------------------

#[test]
fn ncc_matches_its_definition_and_is_symmetric() {
    let mut rng = Rng::new(510);
    for _ in 0..500 {
        let a = random_patch(&mut rng);
        let b = if rng.chance(1, 2) {
            random_patch(&mut rng)
        } else {
            perturbed(&mut rng, &a, (0.0, 80.0))
        };
        let n = ncc(&a, &b);
        assert!((n as f64 - reference_ncc(&a, &b)).abs() <= 1e-5);
        assert_eq!(n.to_bits(), ncc(&b, &a).to_bits(), "symmetric bit for bit");
        assert!((-1.0..=1.0).contains(&n));
        let s = patch_similarity(&a, &b);
        assert!((0.0..=1.0).contains(&s));
        assert_eq!(s, 0.5 * (n + 1.0));
    }
}

/// The documented summation order: lane `k` sums `i ≡ k (mod 16)` in increasing order, then the
/// lanes fold in halves. A GPU kernel that follows it reproduces the CPU's bits.
fn ordered_sum(a: &Patch, b: &Patch) -> f32 {
    let mut l = [0.0f32; 16];
    for i in 0..PATCH_LEN {
        l[i % 16] += a[i] * b[i];
    }
    for h in [8, 4, 2, 1] {
        for k in 0..h {
            l[k] += l[k + h];
        }
    }
    l[0]
}

#[test]
fn ncc_follows_the_documented_summation_order_bit_for_bit() {
    let mut rng = Rng::new(514);
    for _ in 0..200 {
        let a = random_patch(&mut rng);
        let b = perturbed(&mut rng, &a, (0.0, 100.0));
        let (ea, eb) = (ordered_sum(&a, &a), ordered_sum(&b, &b));
        assert_eq!(patch_energy(&a).to_bits(), ea.to_bits());
        let want = (ordered_sum(&a, &b) / (ea * eb).sqrt()).clamp(-1.0, 1.0);
        assert_eq!(ncc(&a, &b).to_bits(), want.to_bits());
    }
}

#[test]
fn ncc_is_one_for_identical_and_minus_one_for_negated_patches() {
    let mut rng = Rng::new(511);
    for _ in 0..100 {
        let a = random_patch(&mut rng);
        let neg = a.map(|v| -v);
        assert!((ncc(&a, &a) - 1.0).abs() <= 1e-6);
        assert!((ncc(&a, &neg) + 1.0).abs() <= 1e-6);
        assert!((patch_similarity(&a, &a) - 1.0).abs() <= 1e-6);
        assert!(patch_similarity(&a, &neg).abs() <= 1e-6);
    }
}

#[test]
fn ncc_ignores_gain_and_offset() {
    // A 15x15 box is copied unchanged, so the frame 2f + 10 gives the patch of f scaled by 2.
    let mut rng = Rng::new(512);
    let full = Rect::new(0, 0, 15, 15);
    for _ in 0..100 {
        let f = Img::from_fn(&mut rng, 15, 15, |rng, _, _| rng.range(0, 122) as u8);
        let g = Img::from_fn(&mut rng, 15, 15, |_, x, y| 2 * f.at(x, y) + 10);
        let other = random_patch(&mut rng);
        let (mut pf, mut pg) = ([0.0; PATCH_LEN], [0.0; PATCH_LEN]);
        extract_patch(&f.view(), full, &mut pf).unwrap();
        extract_patch(&g.view(), full, &mut pg).unwrap();
        assert!((ncc(&pf, &other) - ncc(&pg, &other)).abs() <= 1e-5);
        assert!((ncc(&pf, &pg) - 1.0).abs() <= 1e-6);
    }
}

#[test]
fn a_flat_patch_has_ncc_zero_and_similarity_one_half() {
    let mut rng = Rng::new(513);
    let mut flat = [0.0; PATCH_LEN];
    zero_mean_patch(&[77u8; PATCH_LEN], &mut flat);
    assert!(flat.iter().all(|&v| v == 0.0));
    assert_eq!(patch_energy(&flat), 0.0);
    let a = random_patch(&mut rng);
    for (x, y) in [(&flat, &a), (&a, &flat), (&flat, &flat)] {
        assert_eq!(ncc(x, y), 0.0);
        assert_eq!(patch_similarity(x, y), 0.5);
    }
}

// ---------------------------------------------------------------------------------------------
// Classifier: similarities
// ---------------------------------------------------------------------------------------------

#[test]
fn parameters_and_storage_are_checked() {
    let p = NnParams::default();
    assert_eq!(p, NnParams::DEFAULT);
    assert_eq!((p.max_positive, p.max_negative), (100, 100));
    assert_eq!(
        (p.detect_threshold, p.valid_threshold, p.negative_threshold),
        (0.65, 0.7, 0.5)
    );
    assert_eq!(nn_len(&p), 200 * 226);
    let mut store = vec![0.0f32; nn_len(&p)];
    assert!(NnClassifier::new(p, &mut store).is_ok());
    assert_eq!(
        NnClassifier::new(p, &mut store[..nn_len(&p) - 1]).unwrap_err(),
        Error::BufferTooSmall
    );
    for bad in [
        params(1, 10),
        params(10, 0),
        NnParams {
            detect_threshold: f32::NAN,
            ..p
        },
        NnParams {
            valid_threshold: 1.5,
            ..p
        },
        NnParams {
            negative_threshold: -0.1,
            ..p
        },
    ] {
        assert_eq!(
            NnClassifier::new(bad, &mut store).unwrap_err(),
            Error::InvalidArgument
        );
    }
    assert_eq!(nn_len(&params(usize::MAX, 1)), usize::MAX);
    let mut nn = NnClassifier::new(params(3, 4), &mut store).unwrap();
    let raised = NnParams {
        detect_threshold: 0.8,
        max_positive: 50,
        ..p
    };
    nn.set_thresholds(&raised).unwrap();
    assert_eq!(nn.params().detect_threshold, 0.8);
    assert_eq!(nn.params().max_positive, 3, "capacities are fixed");
    assert_eq!(
        nn.set_thresholds(&NnParams {
            valid_threshold: f32::NAN,
            ..p
        }),
        Err(Error::InvalidArgument)
    );
}

#[test]
fn similarities_match_brute_force_on_random_stores() {
    let mut rng = Rng::new(520);
    for round in 0..30 {
        let (cp, cn) = (2 + rng.below(30), 1 + rng.below(30));
        let mut store = vec![f32::NAN; nn_len(&params(cp, cn))];
        let mut nn = NnClassifier::new(params(cp, cn), &mut store).unwrap();
        let base = random_patch(&mut rng);
        let steps = rng.below(200);
        for _ in 0..steps {
            let p = perturbed(&mut rng, &base, (10.0, 200.0));
            if rng.chance(1, 2) {
                nn.learn_positive(&p);
            } else {
                nn.learn_negative(&p);
            }
        }
        for _ in 0..20 {
            let q = if rng.chance(1, 2) {
                random_patch(&mut rng)
            } else {
                perturbed(&mut rng, &base, (60.0, 60.0))
            };
            let got = nn.classify(&q);
            let ctx = format!("round {round} ({cp}, {cn})");
            assert_sim_close(&got, reference_similarity(&nn, &q), &ctx);
            // Cached energies give the same bits as recomputing every similarity.
            let sp = (0..nn.positive_len())
                .map(|i| patch_similarity(&q, nn.positive(i).unwrap()))
                .fold(0.0, f32::max);
            assert_eq!(got.max_positive.to_bits(), sp.to_bits(), "{ctx}");
            assert!(got.conservative <= got.relative, "{ctx}");
            assert_eq!(nn.is_target(&got), got.relative > 0.65);
            assert_eq!(nn.is_valid(&got), got.conservative > 0.7);
        }
    }
}

#[test]
fn degenerate_stores_follow_opentld() {
    let mut rng = Rng::new(521);
    let mut store = vec![0.0; nn_len(&params(4, 4))];
    let mut nn = NnClassifier::new(params(4, 4), &mut store).unwrap();
    let a = random_patch(&mut rng);
    let s = nn.classify(&a);
    assert_eq!((s.relative, s.conservative), (0.0, 0.0), "no positives");
    assert_eq!(nn.learn_negative(&a), NnUpdate::Unchanged, "Sr 0 ≤ 0.5");
    assert_eq!(nn.learn_positive(&a), NnUpdate::Added);
    let s = nn.classify(&random_patch(&mut rng));
    assert_eq!((s.relative, s.conservative), (1.0, 1.0), "no negatives");
    // S⁺ = S⁻ = 1: the formula's 0/0 is defined as ½.
    assert_eq!(nn.learn_negative(&a), NnUpdate::Added);
    let s = nn.classify(&a);
    assert_eq!((s.max_positive, s.max_negative), (1.0, 1.0));
    assert_eq!(s.relative, 0.5);
    nn.clear();
    assert_eq!((nn.positive_len(), nn.negative_len()), (0, 0));
    assert!(nn.positive(0).is_none() && nn.negative(0).is_none());
}

/// Seed 003's confidence is the relative similarity used; Kalal's paper form S⁺/(S⁺ + S⁻)
/// differs except where S⁺ = S⁻ or S⁺ + S⁻ = 1.
#[test]
fn relative_similarity_is_seed_003_confidence_not_the_paper_ratio() {
    // u and v: orthogonal zero-mean patches of equal energy (alternating signs on halves).
    let mut u = [0.0f32; PATCH_LEN];
    let mut v = [0.0f32; PATCH_LEN];
    for i in 0..224 {
        u[i] = if i % 2 == 0 { 1.0 } else { -1.0 };
        v[i] = if (i / 2) % 2 == 0 { 1.0 } else { -1.0 };
    }
    assert!(ncc(&u, &v).abs() < 1e-6);
    let mut store = vec![0.0; nn_len(&params(4, 4))];
    let mut nn = NnClassifier::new(params(4, 4), &mut store).unwrap();
    nn.learn_positive(&u);
    nn.learn_negative(&v);
    // Query u: S⁺ = 1, S⁻ = ½ → seed 003: (1 − ½)/(2 − 1 − ½) = 1; paper: 1/1.5 = ⅔.
    let s = nn.classify(&u);
    assert!((s.max_positive - 1.0).abs() < 1e-6 && (s.max_negative - 0.5).abs() < 1e-6);
    let conf = (1.0 - s.max_negative) / (2.0 - s.max_positive - s.max_negative);
    assert!((s.relative - conf).abs() < 1e-6);
    let paper = s.max_positive / (s.max_positive + s.max_negative);
    assert!((paper - 2.0 / 3.0).abs() < 1e-5 && (s.relative - paper).abs() > 0.3);
    // Query u + v: S⁺ = ½(1 + 1/√2), S⁻ the same → both forms give ½.
    let w: Patch = core::array::from_fn(|i| u[i] + v[i]);
    let s = nn.classify(&w);
    assert!((s.relative - 0.5).abs() < 1e-6);
    assert!((s.max_positive / (s.max_positive + s.max_negative) - 0.5).abs() < 1e-6);
}

// ---------------------------------------------------------------------------------------------
// Classifier: learning and bounded memory
// ---------------------------------------------------------------------------------------------

#[test]
fn learning_rule_follows_train_nn() {
    let mut rng = Rng::new(530);
    let mut store = vec![0.0; nn_len(&params(10, 10))];
    let mut nn = NnClassifier::new(params(10, 10), &mut store).unwrap();
    let init = random_patch(&mut rng);
    assert_eq!(nn.learn_positive(&init), NnUpdate::Added, "first positive");
    let other = random_patch(&mut rng);
    assert_eq!(
        nn.learn_positive(&other),
        NnUpdate::Unchanged,
        "no negatives: Sr = 1 > 0.65"
    );
    let bg = random_patch(&mut rng);
    assert_eq!(
        nn.learn_negative(&bg),
        NnUpdate::Added,
        "no negatives: Sr = 1 > 0.5"
    );
    assert_eq!(
        nn.learn_negative(&bg),
        NnUpdate::Unchanged,
        "a known negative: S⁻ = 1, Sr = 0"
    );
    assert_eq!(
        nn.learn_positive(&init),
        NnUpdate::Unchanged,
        "a known positive: Sr = 1"
    );
    // Thresholds are applied as documented: positive iff Sr ≤ 0.65, negative iff Sr > 0.5.
    for _ in 0..300 {
        let p = random_patch(&mut rng);
        let sr = nn.classify(&p).relative;
        let (np, nneg) = (nn.positive_len(), nn.negative_len());
        if rng.chance(1, 2) {
            let u = nn.learn_positive(&p);
            assert_eq!(
                u == NnUpdate::Unchanged,
                sr > NN_DETECT_THRESHOLD,
                "Sr {sr}"
            );
            assert_eq!(nn.negative_len(), nneg);
        } else {
            let u = nn.learn_negative(&p);
            assert_eq!(
                u == NnUpdate::Unchanged,
                sr <= NN_NEGATIVE_THRESHOLD,
                "Sr {sr}"
            );
            assert_eq!(nn.positive_len(), np);
        }
    }
    assert_eq!(NN_VALID_THRESHOLD, 0.7);
}

#[test]
fn the_init_template_survives_when_the_example_duplicates_it() {
    let mut rng = Rng::new(531);
    let mut store = vec![0.0; nn_len(&params(2, 4))];
    let mut nn = NnClassifier::new(params(2, 4), &mut store).unwrap();
    let a = random_patch(&mut rng);
    let b = random_patch(&mut rng);
    assert_eq!(nn.learn_positive(&a), NnUpdate::Added);
    assert_eq!(nn.learn_negative(&a), NnUpdate::Added); // Sr = 1 with no negatives
    assert_eq!(nn.learn_positive(&b), NnUpdate::Added); // S⁺ ≈ S⁻ ≈ ½
                                                        // Near a: S⁺ ≈ S⁻ ≈ 1, Sr ≈ ½ → learned; a is the nearest but is the anchor, so b goes.
    let a2 = perturbed(&mut rng, &a, (5.0, 5.0));
    assert_eq!(nn.learn_positive(&a2), NnUpdate::Replaced { evicted: 1 });
    assert_eq!(bits(nn.positive(0).unwrap()), bits(&a));
    assert_eq!(bits(nn.positive(1).unwrap()), bits(&a2));
}

#[test]
fn stores_stay_bounded_over_10000_insertions_and_match_the_model() {
    for (seed, cp, cn) in [(540u64, 5usize, 7usize), (541, 100, 100), (542, 2, 1)] {
        let mut rng = Rng::new(seed);
        let p = params(cp, cn);
        // Storage with a sentinel tail that must never be written.
        let need = nn_len(&p);
        let mut store = vec![f32::NAN; need + 64];
        let tail_before: Vec<u32> = store[need..].iter().map(|v| v.to_bits()).collect();
        let mut model = Model {
            pos: Vec::new(),
            neg: Vec::new(),
            cap_pos: cp,
            cap_neg: cn,
        };
        let (mut replaced_pos, mut replaced_neg) = (0, 0);
        {
            let mut nn = NnClassifier::new(p, &mut store).unwrap();
            let bases: Vec<Patch> = (0..4).map(|_| random_patch(&mut rng)).collect();
            let init = bases[0];
            assert_eq!(nn.learn_positive(&init), NnUpdate::Added);
            model.learn_positive(&init);
            for step in 0..10_000 {
                let k = rng.below(4);
                let x = perturbed(&mut rng, &bases[k], (20.0, 300.0));
                let positive = rng.chance(1, 2);
                let (got, want) = if positive {
                    (nn.learn_positive(&x), model.learn_positive(&x))
                } else {
                    (nn.learn_negative(&x), model.learn_negative(&x))
                };
                assert_eq!(got, want, "seed {seed} step {step}");
                match got {
                    NnUpdate::Replaced { .. } if positive => replaced_pos += 1,
                    NnUpdate::Replaced { .. } => replaced_neg += 1,
                    _ => {}
                }
                assert!(nn.positive_len() <= cp && nn.negative_len() <= cn);
                assert_eq!(
                    (nn.positive_len(), nn.negative_len()),
                    (model.pos.len(), model.neg.len())
                );
                assert_eq!(bits(nn.positive(0).unwrap()), bits(&init), "init kept");
                if step % 997 == 0 {
                    for (i, t) in model.pos.iter().enumerate() {
                        assert_eq!(bits(nn.positive(i).unwrap()), bits(t));
                    }
                    for (i, t) in model.neg.iter().enumerate() {
                        assert_eq!(bits(nn.negative(i).unwrap()), bits(t));
                    }
                }
            }
        }
        let tail_after: Vec<u32> = store[need..].iter().map(|v| v.to_bits()).collect();
        assert_eq!(tail_before, tail_after, "storage past nn_len written");
        assert!(
            replaced_pos > 0 && replaced_neg > 0,
            "seed {seed}: the stores filled ({replaced_pos}, {replaced_neg} replacements)"
        );
    }
}

#[test]
fn learning_and_classification_are_deterministic() {
    let run = || {
        let mut rng = Rng::new(550);
        let p = params(20, 20);
        let mut store = vec![0.0f32; nn_len(&p)];
        let mut log = Vec::new();
        {
            let mut nn = NnClassifier::new(p, &mut store).unwrap();
            let base = random_patch(&mut rng);
            for _ in 0..2000 {
                let x = perturbed(&mut rng, &base, (10.0, 200.0));
                let s = nn.classify(&x);
                log.push(s.relative.to_bits() as u64 | (s.conservative.to_bits() as u64) << 32);
                let u = if rng.chance(1, 2) {
                    nn.learn_positive(&x)
                } else {
                    nn.learn_negative(&x)
                };
                log.push(match u {
                    NnUpdate::Unchanged => 0,
                    NnUpdate::Added => 1,
                    NnUpdate::Replaced { evicted } => 2 + evicted as u64,
                });
            }
        }
        (log, store.iter().map(|v| v.to_bits()).collect::<Vec<_>>())
    };
    assert_eq!(run(), run());
}

#[test]
fn classify_learn_and_extract_do_not_allocate() {
    let mut rng = Rng::new(560);
    let frame = random_u8(&mut rng, 64, 48);
    let p = params(8, 8);
    let mut store = vec![0.0f32; nn_len(&p)];
    let examples: Vec<Patch> = (0..200).map(|_| random_patch(&mut rng)).collect();
    let mut patch = [0.0f32; PATCH_LEN];

    let before = heap_calls();
    let mut nn = NnClassifier::new(p, &mut store).unwrap();
    assert_eq!(
        extract_patch(&frame.view(), Rect::new(60, 0, 10, 10), &mut patch),
        Err(Error::OutOfBounds)
    );
    extract_patch(&frame.view(), Rect::new(3, 5, 31, 22), &mut patch).unwrap();
    nn.learn_positive(&patch);
    let mut acc = 0.0f32;
    for (i, x) in examples.iter().enumerate() {
        let s = nn.classify(x);
        acc += s.relative + s.conservative;
        black_box((nn.is_target(&s), nn.is_valid(&s)));
        black_box(if i % 2 == 0 {
            nn.learn_positive(x)
        } else {
            nn.learn_negative(x)
        });
        acc += ncc(x, &patch) + patch_similarity(x, &patch) + patch_energy(x);
    }
    black_box(acc);
    black_box((nn.positive(0), nn.negative(0), nn_len(&p)));
    nn.clear();
    let after = heap_calls();
    assert_eq!(
        after,
        before,
        "the NN classifier made {} heap calls",
        after - before
    );
}
