//! Records what `mvision info` reports about the build itself: the enabled cargo features of
//! this package and the target triple. Cargo passes both only to build scripts, and deriving
//! the feature list here keeps it correct when features are added to Cargo.toml.

use std::env;

fn main() {
    let mut features: Vec<String> = env::vars()
        .filter_map(|(key, _)| {
            key.strip_prefix("CARGO_FEATURE_")
                .map(|f| f.to_ascii_lowercase().replace('_', "-"))
        })
        .collect();
    features.sort();
    println!(
        "cargo:rustc-env=MVISION_CLI_FEATURES={}",
        features.join(",")
    );
    let target = env::var("TARGET").unwrap_or_else(|_| "unknown".to_string());
    println!("cargo:rustc-env=MVISION_CLI_TARGET={target}");
    println!("cargo:rerun-if-changed=build.rs");
}
