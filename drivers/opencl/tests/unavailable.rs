//! Without OpenCL every entry point returns `Error::Unavailable` — no panic, no abort.
//!
//! Both situations are simulated in a child process (this test binary run again), because they
//! must hold from the process's first OpenCL call on:
//! * no platform: the ICD loader is pointed at an empty vendor directory (`OCL_ICD_VENDORS`);
//! * no library: a file named `libOpenCL.so.1` that is not a shared library comes first on
//!   `LD_LIBRARY_PATH`, so the run-time `dlopen` fails as if the library were missing.

use std::path::Path;
use std::process::Command;

use mvision_opencl::{devices, Context, Error};

/// Set in the child: the text its `Unavailable` errors must contain.
const CHILD_EXPECTS: &str = "MVISION_OPENCL_TEST_EXPECT";

fn run_child(test: &str, env: &[(&str, &Path)], expect: &str) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD_EXPECTS, expect)
        .env_remove("OPENCL_DYLIB_PATH")
        // ocl-icd loads these ICDs whatever OCL_ICD_VENDORS says (the GPU runner sets it).
        .env_remove("OCL_ICD_FILENAMES")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "child failed ({}):\n{}\n{stderr}",
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
    // The child really ran the checks (and was not, say, filtered to zero tests).
    assert!(stderr.contains("devices: Unavailable("), "{stderr}");
    eprint!("{stderr}");
}

/// In the child: every entry point reports `Unavailable` with the expected reason.
fn check_child(expect: &str) {
    let check = |what: &str, r: Result<(), Error>| match r {
        Err(Error::Unavailable(why)) if why.contains(expect) => {
            eprintln!("{what}: Unavailable({why})")
        }
        other => panic!("{what}: expected Unavailable(…{expect}…), got {other:?}"),
    };
    check("devices", devices().map(drop));
    check("Context::new", Context::new(0).map(drop));
    check("Context::from_env", Context::from_env().map(drop));
}

fn scratch_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mvision-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn no_platform_means_unavailable() {
    if let Ok(expect) = std::env::var(CHILD_EXPECTS) {
        return check_child(&expect);
    }
    let empty = scratch_dir("no-icd");
    run_child(
        "no_platform_means_unavailable",
        &[("OCL_ICD_VENDORS", &empty)],
        "no OpenCL platform",
    );
    std::fs::remove_dir_all(&empty).ok();
}

#[test]
fn no_library_means_unavailable() {
    if let Ok(expect) = std::env::var(CHILD_EXPECTS) {
        return check_child(&expect);
    }
    let dir = scratch_dir("no-libopencl");
    std::fs::write(dir.join("libOpenCL.so.1"), b"not a shared library").unwrap();
    run_child(
        "no_library_means_unavailable",
        &[("LD_LIBRARY_PATH", &dir)],
        "could not be loaded",
    );
    std::fs::remove_dir_all(&dir).ok();
}
