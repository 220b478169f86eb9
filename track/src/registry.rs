//! Trackers by name, so that the command-line tool and the evaluation code need no list of their
//! own: adding a tracker is one name here and one arm in [`make_tracker`].

use anyhow::{bail, Result};

use crate::baseline::StaticTracker;
use crate::kcf::{KcfDpTracker, KcfTracker};
use crate::tld::TldTracker;
use crate::Tracker;

/// The names [`make_tracker`] accepts, in the order tools list them: `tld` (Kalal et al.), `kcf`
/// (Henriques et al.), `kcfdp` (KCF with EdgeBoxes proposals, SEEDS.md 003) and `static` (the initial box on every frame: a lower bound, see
/// [`crate::baseline`]).
pub fn tracker_names() -> &'static [&'static str] {
    &["tld", "kcf", "kcfdp", "static"]
}

/// A new tracker called `name` (case-insensitive) for frames of `width × height` pixels.
///
/// # Errors
/// An unknown name (the message lists the known ones), or the tracker's own error for a frame
/// size it cannot take.
pub fn make_tracker(name: &str, width: usize, height: usize) -> Result<Box<dyn Tracker>> {
    match name.to_ascii_lowercase().as_str() {
        "tld" => Ok(Box::new(TldTracker::new(width, height)?)),
        "kcf" => Ok(Box::new(KcfTracker::new(width, height)?)),
        "kcfdp" => Ok(Box::new(KcfDpTracker::new(width, height)?)),
        "static" => Ok(Box::new(StaticTracker::new())),
        _ => bail!(
            "unknown tracker '{name}': known trackers are {}",
            tracker_names().join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_name_is_made_and_unknown_names_are_refused() {
        for &name in tracker_names() {
            assert_eq!(make_tracker(name, 64, 48).unwrap().name(), name);
        }
        let err = make_tracker("nope", 64, 48).err().unwrap().to_string();
        assert!(err.contains("tld"), "{err}");
    }
}
