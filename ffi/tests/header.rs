//! The committed `include/mvision.h` must be exactly what the pinned cbindgen generates from this
//! crate now. Set `MVISION_BLESS=1` to rewrite it after an intended API change.

use std::path::Path;

fn version_macros() -> String {
    let (major, minor, patch) = (
        env!("CARGO_PKG_VERSION_MAJOR"),
        env!("CARGO_PKG_VERSION_MINOR"),
        env!("CARGO_PKG_VERSION_PATCH"),
    );
    let number = major.parse::<u32>().unwrap() * 10000
        + minor.parse::<u32>().unwrap() * 100
        + patch.parse::<u32>().unwrap();
    format!(
        "\n/** Version of the header, generated from the crate version. Compare with mv_version(). */\n\
         #define MV_VERSION_MAJOR {major}\n\
         #define MV_VERSION_MINOR {minor}\n\
         #define MV_VERSION_PATCH {patch}\n\
         #define MV_VERSION_NUMBER {number}\n\
         #define MV_VERSION_STRING \"{}\"\n",
        env!("CARGO_PKG_VERSION")
    )
}

fn generate() -> String {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("ffi/cbindgen.toml must parse");
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(crate_dir.join("src/lib.rs"))
        .with_after_include(version_macros())
        .generate()
        .expect("cbindgen failed to parse the ffi crate")
        .write(&mut out);
    String::from_utf8(out).expect("header is UTF-8")
}

#[test]
fn committed_header_matches_a_fresh_generation() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../include/mvision.h");
    let fresh = generate();
    if std::env::var_os("MVISION_BLESS").is_some() {
        std::fs::write(&path, &fresh).expect("write include/mvision.h");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "include/mvision.h is stale or missing; regenerate it with \
         `MVISION_BLESS=1 cargo test -p mvision-ffi --test header` and commit the result"
    );
}

#[test]
fn header_carries_the_crate_version() {
    let h = generate();
    assert!(h.contains(&format!(
        "#define MV_VERSION_STRING \"{}\"",
        env!("CARGO_PKG_VERSION")
    )));
    assert!(h.contains("extern \"C\""), "cpp_compat guard missing");
}
