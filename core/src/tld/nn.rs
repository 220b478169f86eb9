//! The nearest-neighbour (NN) classifier of TLD's detection cascade, after OpenTLD's
//! `FerNNClassifier` (`NNConf`, `trainNN`) and seed 003's `NCC` kernel, with bounded template
//! stores (the future work named by seed 000): memory is fixed at construction and never grows.
//!
//! The model is a store of positive and a store of negative [`Patch`]es. For a patch `x`, with
//! `S⁺` and `S⁻` its largest
//! [`patch_similarity`](crate::tld::patch::patch_similarity) to any positive and to any negative template:
//!
//! * relative similarity `Sr = (1 − S⁻) / ((1 − S⁻) + (1 − S⁺))`, seed 003's confidence
//!   `(1 − maxN)/(2 − maxP − maxN)` and OpenTLD's `rsconf`;
//! * conservative similarity `Sc`, the same with `S⁺` taken over the earliest `⌈n/2⌉` of the `n`
//!   positive templates only (OpenTLD's `csconf`, `valid = 0.5`).
//!
//! Note: Kalal's paper writes `Sr = S⁺/(S⁺ + S⁻)`. That is *not* the same function: the two
//! agree only where `S⁺ = S⁻` (both ½) or `S⁺ + S⁻ = 1`; both rise with `S⁺` and fall with `S⁻`.
//! We follow seed 003 and OpenTLD, whose thresholds (0.65, 0.7) are calibrated on this form.
//! Degenerate cases, as OpenTLD: no positive template gives `Sr = Sc = 0`; positives but no
//! negative give `Sr = Sc = 1`; `S⁺ = S⁻ = 1` (denominator 0) gives ½.
//!
//! Storage is the caller's `f32` slice of [`nn_len`] elements: positive templates (225 values
//! each, contiguous, in insertion order), negative templates, then one cached energy `Σt²` per
//! template. Nothing allocates.

use crate::error::{Error, Result};
use crate::tld::patch::{ncc_from_sums, patch_dot, patch_energy, Patch, PATCH_LEN};

/// Default detection threshold on `Sr` (OpenTLD `thr_nn`): a window is the target if
/// `Sr > 0.65`; a positive example is learned if `Sr ≤ 0.65`.
pub const NN_DETECT_THRESHOLD: f32 = 0.65;

/// Default validation threshold on `Sc` (OpenTLD `thr_nn_valid`): the tracker's patch may be
/// learned from if `Sc > 0.7`.
pub const NN_VALID_THRESHOLD: f32 = 0.7;

/// Default threshold on `Sr` above which a negative example is learned (OpenTLD's constant 0.5).
pub const NN_NEGATIVE_THRESHOLD: f32 = 0.5;

/// Parameters of the NN classifier. Thresholds are similarities in `[0, 1]`; capacities are
/// numbers of templates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NnParams {
    /// Most positive templates kept (≥ 2: the init template plus at least one learned one).
    /// Default 100.
    pub max_positive: usize,
    /// Most negative templates kept (≥ 1). Default 100.
    pub max_negative: usize,
    /// [`NN_DETECT_THRESHOLD`] by default. Detection accepts `Sr >` this; a positive example is
    /// learned when `Sr ≤` this.
    pub detect_threshold: f32,
    /// [`NN_VALID_THRESHOLD`] by default. A patch validates learning when `Sc >` this.
    pub valid_threshold: f32,
    /// [`NN_NEGATIVE_THRESHOLD`] by default. A negative example is learned when `Sr >` this.
    pub negative_threshold: f32,
}

impl NnParams {
    /// OpenTLD's defaults with 100 positive and 100 negative templates.
    pub const DEFAULT: NnParams = NnParams {
        max_positive: 100,
        max_negative: 100,
        detect_threshold: NN_DETECT_THRESHOLD,
        valid_threshold: NN_VALID_THRESHOLD,
        negative_threshold: NN_NEGATIVE_THRESHOLD,
    };

    /// Checks the documented ranges.
    ///
    /// Errors: [`Error::InvalidArgument`] if `max_positive < 2`, `max_negative < 1`, or a
    /// threshold is NaN or outside `[0, 1]`.
    pub fn validate(&self) -> Result<()> {
        let unit = |t: f32| (0.0..=1.0).contains(&t);
        if self.max_positive < 2
            || self.max_negative < 1
            || !unit(self.detect_threshold)
            || !unit(self.valid_threshold)
            || !unit(self.negative_threshold)
        {
            return Err(Error::InvalidArgument);
        }
        Ok(())
    }
}

impl Default for NnParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// `f32` elements of caller storage an [`NnClassifier`] with `params` needs:
/// `(max_positive + max_negative) · (225 + 1)` (templates and their cached energies).
/// Saturates at `usize::MAX` (which no slice can satisfy) instead of overflowing.
pub fn nn_len(params: &NnParams) -> usize {
    params
        .max_positive
        .saturating_add(params.max_negative)
        .saturating_mul(PATCH_LEN + 1)
}

/// How a patch relates to the model (see the module documentation for the formulas).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NnSimilarity {
    /// Relative similarity `Sr` in `[0, 1]`.
    pub relative: f32,
    /// Conservative similarity `Sc` in `[0, 1]` (never above `relative`).
    pub conservative: f32,
    /// `S⁺`: the largest similarity to a positive template (0 if there is none).
    pub max_positive: f32,
    /// `S⁺` over the earliest `⌈n/2⌉` positive templates only (0 if there is none).
    pub max_positive_early: f32,
    /// `S⁻`: the largest similarity to a negative template (0 if there is none).
    pub max_negative: f32,
}

/// What [`NnClassifier::learn_positive`] or [`NnClassifier::learn_negative`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NnUpdate {
    /// The model already classifies the example correctly; nothing changed.
    Unchanged,
    /// The example was appended to a store that had room.
    Added,
    /// The store was full: the template that was at index `evicted` (before the update) made
    /// room for the example.
    Replaced {
        /// Index of the template removed.
        evicted: usize,
    },
}

/// `Sr` (or `Sc`) from the largest positive and negative similarities, OpenTLD's degenerate
/// cases included.
fn relative_similarity(pos_len: usize, neg_len: usize, s_pos: f32, s_neg: f32) -> f32 {
    if pos_len == 0 {
        return 0.0;
    }
    if neg_len == 0 {
        return 1.0;
    }
    let (d_neg, d_pos) = (1.0 - s_neg, 1.0 - s_pos);
    let den = d_neg + d_pos;
    if den > 0.0 {
        (d_neg / den).clamp(0.0, 1.0)
    } else {
        0.5
    }
}

/// Everything one pass over the stores finds: the similarities and the templates nearest to the
/// patch (the replacement candidates).
struct Scan {
    sim: NnSimilarity,
    /// Most similar positive template other than the init template (index ≥ 1).
    nearest_positive_not_init: Option<usize>,
    /// Most similar negative template.
    nearest_negative: Option<usize>,
}

/// The NN classifier over bounded template stores in caller memory.
///
/// Replacement policy when a store is full (the example is only learned if the learning rule
/// asks for it):
/// * positives: the template most similar to the new example is removed — the one whose
///   appearance the example most nearly duplicates, so the store keeps its coverage — except
///   the first template (the init patch, the model's anchor), which is never removed. The
///   remaining templates keep their order and the example is appended as the newest, so "the
///   earliest half" used by `Sc` stays ordered by age.
/// * negatives: the template most similar to the new example is overwritten in place (negatives
///   have no order). This keeps the store's diversity; first-in-first-out would let a single
///   frame's batch of background samples flush every distractor seen before.
///
/// Ties go to the lowest index. The candidate comes from the same pass that computes `Sr`, so
/// replacement costs no extra correlation.
#[derive(Debug)]
pub struct NnClassifier<'a> {
    params: NnParams,
    positives: &'a mut [f32],
    negatives: &'a mut [f32],
    positive_energy: &'a mut [f32],
    negative_energy: &'a mut [f32],
    positive_len: usize,
    negative_len: usize,
}

impl<'a> NnClassifier<'a> {
    /// An empty classifier whose templates live in `storage` (at least [`nn_len`] elements; the
    /// initial contents do not matter).
    ///
    /// Errors: [`Error::InvalidArgument`] as [`NnParams::validate`];
    /// [`Error::BufferTooSmall`] if `storage` is shorter than [`nn_len`]`(params)`.
    pub fn new(params: NnParams, storage: &'a mut [f32]) -> Result<Self> {
        params.validate()?;
        let need = nn_len(&params);
        if storage.len() < need {
            return Err(Error::BufferTooSmall);
        }
        // No overflow: the products are bounded by `need`, which did not saturate.
        let (positives, rest) = storage[..need].split_at_mut(params.max_positive * PATCH_LEN);
        let (negatives, rest) = rest.split_at_mut(params.max_negative * PATCH_LEN);
        let (positive_energy, negative_energy) = rest.split_at_mut(params.max_positive);
        Ok(Self {
            params,
            positives,
            negatives,
            positive_energy,
            negative_energy,
            positive_len: 0,
            negative_len: 0,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &NnParams {
        &self.params
    }

    /// Changes the thresholds (capacities are fixed at construction; theirs are ignored), e.g.
    /// to raise `detect_threshold` after OpenTLD's evaluation on negative examples at init.
    ///
    /// Errors: [`Error::InvalidArgument`] for a NaN threshold or one outside `[0, 1]`.
    pub fn set_thresholds(&mut self, params: &NnParams) -> Result<()> {
        let p = NnParams {
            max_positive: self.params.max_positive,
            max_negative: self.params.max_negative,
            ..*params
        };
        p.validate()?;
        self.params = p;
        Ok(())
    }

    /// Number of positive templates stored (≤ `max_positive`).
    pub fn positive_len(&self) -> usize {
        self.positive_len
    }

    /// Number of negative templates stored (≤ `max_negative`).
    pub fn negative_len(&self) -> usize {
        self.negative_len
    }

    /// Positive template `i` (0 is the oldest, the init patch), or `None` past the end.
    pub fn positive(&self, i: usize) -> Option<&Patch> {
        (i < self.positive_len).then(|| template(self.positives, i))
    }

    /// Negative template `i`, or `None` past the end.
    pub fn negative(&self, i: usize) -> Option<&Patch> {
        (i < self.negative_len).then(|| template(self.negatives, i))
    }

    /// Forgets every template (for re-initialisation).
    pub fn clear(&mut self) {
        self.positive_len = 0;
        self.negative_len = 0;
    }

    /// `Sr`, `Sc`, `S⁺` and `S⁻` of `patch` against the model: one NCC per template.
    pub fn classify(&self, patch: &Patch) -> NnSimilarity {
        self.scan(patch).sim
    }

    /// True if `sim` passes detection: `Sr > detect_threshold`.
    pub fn is_target(&self, sim: &NnSimilarity) -> bool {
        sim.relative > self.params.detect_threshold
    }

    /// True if `sim` validates learning: `Sc > valid_threshold`.
    pub fn is_valid(&self, sim: &NnSimilarity) -> bool {
        sim.conservative > self.params.valid_threshold
    }

    /// Learns `patch` as a positive example (OpenTLD `trainNN`): added if the store is empty or
    /// its `Sr ≤ detect_threshold`; otherwise nothing changes. When the store is full, the
    /// replacement policy of [`NnClassifier`] makes room. The first positive ever added is kept
    /// until [`clear`](Self::clear).
    pub fn learn_positive(&mut self, patch: &Patch) -> NnUpdate {
        let scan = self.scan(patch);
        if self.positive_len > 0 && scan.sim.relative > self.params.detect_threshold {
            return NnUpdate::Unchanged;
        }
        let cap = self.params.max_positive;
        let energy = patch_energy(patch);
        if self.positive_len < cap {
            let i = self.positive_len;
            template_mut(self.positives, i).copy_from_slice(patch);
            self.positive_energy[i] = energy;
            self.positive_len += 1;
            return NnUpdate::Added;
        }
        // Full (cap ≥ 2, so a candidate other than the init template exists).
        let evicted = scan.nearest_positive_not_init.unwrap_or(cap - 1);
        // Close the gap, keeping the order by age, and append as the newest.
        self.positives.copy_within(
            (evicted + 1) * PATCH_LEN..cap * PATCH_LEN,
            evicted * PATCH_LEN,
        );
        self.positive_energy.copy_within(evicted + 1..cap, evicted);
        template_mut(self.positives, cap - 1).copy_from_slice(patch);
        self.positive_energy[cap - 1] = energy;
        NnUpdate::Replaced { evicted }
    }

    /// Learns `patch` as a negative example (OpenTLD `trainNN`): added if its
    /// `Sr > negative_threshold`; otherwise nothing changes. When the store is full, the
    /// replacement policy of [`NnClassifier`] makes room.
    pub fn learn_negative(&mut self, patch: &Patch) -> NnUpdate {
        let scan = self.scan(patch);
        if scan.sim.relative <= self.params.negative_threshold {
            return NnUpdate::Unchanged;
        }
        let (i, update) = if self.negative_len < self.params.max_negative {
            self.negative_len += 1;
            (self.negative_len - 1, NnUpdate::Added)
        } else {
            // Full, so at least one negative exists and the scan found the nearest.
            let evicted = scan.nearest_negative.unwrap_or(0);
            (evicted, NnUpdate::Replaced { evicted })
        };
        template_mut(self.negatives, i).copy_from_slice(patch);
        self.negative_energy[i] = patch_energy(patch);
        update
    }

    fn scan(&self, patch: &Patch) -> Scan {
        let energy = patch_energy(patch);
        let early = self.positive_len.div_ceil(2);
        let (mut s_pos, mut s_pos_early, mut s_neg) = (0.0f32, 0.0f32, 0.0f32);
        let (mut best_not_init, mut best_not_init_sim) = (None, f32::NEG_INFINITY);
        for i in 0..self.positive_len {
            let s = similarity(
                patch,
                energy,
                template(self.positives, i),
                self.positive_energy[i],
            );
            s_pos = s_pos.max(s);
            if i < early {
                s_pos_early = s_pos_early.max(s);
            }
            if i > 0 && s > best_not_init_sim {
                best_not_init = Some(i);
                best_not_init_sim = s;
            }
        }
        let (mut nearest_negative, mut best_neg_sim) = (None, f32::NEG_INFINITY);
        for i in 0..self.negative_len {
            let s = similarity(
                patch,
                energy,
                template(self.negatives, i),
                self.negative_energy[i],
            );
            s_neg = s_neg.max(s);
            if s > best_neg_sim {
                nearest_negative = Some(i);
                best_neg_sim = s;
            }
        }
        let (np, nn) = (self.positive_len, self.negative_len);
        Scan {
            sim: NnSimilarity {
                relative: relative_similarity(np, nn, s_pos, s_neg),
                conservative: relative_similarity(np, nn, s_pos_early, s_neg),
                max_positive: s_pos,
                max_positive_early: s_pos_early,
                max_negative: s_neg,
            },
            nearest_positive_not_init: best_not_init,
            nearest_negative,
        }
    }
}

/// [`patch_similarity`](crate::tld::patch::patch_similarity) with both energies known; the same
/// bits as recomputing them.
fn similarity(patch: &Patch, energy: f32, t: &Patch, t_energy: f32) -> f32 {
    0.5 * (ncc_from_sums(patch_dot(patch, t), energy, t_energy) + 1.0)
}

fn template(store: &[f32], i: usize) -> &Patch {
    store[i * PATCH_LEN..(i + 1) * PATCH_LEN]
        .try_into()
        .expect("a template is PATCH_LEN values")
}

fn template_mut(store: &mut [f32], i: usize) -> &mut Patch {
    (&mut store[i * PATCH_LEN..(i + 1) * PATCH_LEN])
        .try_into()
        .expect("a template is PATCH_LEN values")
}
