//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};

/// `../shared/data/tracking` beside the checkout, or `None` after printing a visible `skipped:`
/// message naming `what` (the clips exist only beside a project checkout, not on a user's
/// machine).
pub fn real_clips(what: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/tracking");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "skipped: {what}: real clips not found at {} (only present beside a project checkout)",
            dir.display()
        );
        None
    }
}
