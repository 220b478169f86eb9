//! `mvision info`: what this build of mvision is and what it can run on.
//!
//! Only facts known to this binary are reported: backend availability comes from the library's
//! `mv_backends_available()` (the CPU is always there), so nobody mistakes a placeholder for a
//! device.

use std::io::Write;

use anyhow::{Context, Result};
use mvision_runtime::Backend;
use serde_json::{json, Value};

/// Cargo features this binary was built with (comma-separated, set by `build.rs`).
const CLI_FEATURES: &str = env!("MVISION_CLI_FEATURES");

/// The target triple this binary was built for (set by `build.rs`).
const TARGET: &str = env!("MVISION_CLI_TARGET");

/// Status line of a backend the library reports as unavailable.
const UNAVAILABLE: &str = "not available (no driver library or no device)";

/// The backends, in report order, with the flag the C API uses for each.
const BACKENDS: &[(&str, u32)] = &[
    ("cpu", mvision::context::MV_BACKEND_CPU),
    ("opencl", mvision::context::MV_BACKEND_OPENCL),
    ("cuda", mvision::context::MV_BACKEND_CUDA),
];

/// SIMD target features that matter for image kernels, with whether each was compiled in
/// (the baseline of this build). The core's hot loops also carry x86-64-v3/v4 variants chosen at
/// run time: see `cpu_level` in the report.
const SIMD_FEATURES: &[(&str, bool)] = &[
    ("sse2", cfg!(target_feature = "sse2")),
    ("sse3", cfg!(target_feature = "sse3")),
    ("ssse3", cfg!(target_feature = "ssse3")),
    ("sse4.1", cfg!(target_feature = "sse4.1")),
    ("sse4.2", cfg!(target_feature = "sse4.2")),
    ("avx", cfg!(target_feature = "avx")),
    ("avx2", cfg!(target_feature = "avx2")),
    ("fma", cfg!(target_feature = "fma")),
    ("avx512f", cfg!(target_feature = "avx512f")),
    ("avx512bw", cfg!(target_feature = "avx512bw")),
    ("neon", cfg!(target_feature = "neon")),
    ("sve", cfg!(target_feature = "sve")),
    ("simd128", cfg!(target_feature = "simd128")),
];

/// Everything `info` reports, gathered once and rendered as text or JSON.
fn collect() -> Value {
    let features: Vec<&str> = CLI_FEATURES.split(',').filter(|f| !f.is_empty()).collect();
    let simd: Vec<&str> = SIMD_FEATURES
        .iter()
        .filter(|(_, on)| *on)
        .map(|(name, _)| *name)
        .collect();
    // None (JSON null) when the OS will not say, rather than a made-up 1.
    let cores = std::thread::available_parallelism().ok().map(|n| n.get());
    // Asked of the library itself, so the report follows what a C caller would see.
    let available = mvision::context::mv_backends_available();
    let backends: Vec<Value> = BACKENDS
        .iter()
        .map(|&(name, flag)| {
            let on = available & flag != 0;
            json!({
                "name": name,
                "available": on,
                "status": if on { "available" } else { UNAVAILABLE },
            })
        })
        .collect();
    // GPU devices as the drivers enumerate them; a missing driver is reported, not fatal.
    let mut gpus = Vec::new();
    for backend in [Backend::OpenCl, Backend::Cuda] {
        match mvision_runtime::devices(backend) {
            Ok(list) => gpus.extend(list.into_iter().map(|d| {
                json!({
                    "backend": backend.name(),
                    "index": d.index,
                    "platform": d.platform,
                    "name": d.name,
                    "compute_units": d.compute_units,
                    "local_mem_bytes": d.local_mem_bytes,
                    "max_work_group_size": d.max_work_group_size,
                    "global_mem_bytes": d.global_mem_bytes,
                    "unified_memory": d.unified_memory,
                    "max_parameter_bytes": d.max_parameter_bytes,
                    "taps_by_value": d.taps_by_value,
                })
            })),
            Err(e) => gpus.push(json!({ "backend": backend.name(), "error": e.to_string() })),
        }
    }
    json!({
        "version": mvision_core::VERSION,
        "build_profile": if cfg!(debug_assertions) { "debug" } else { "release" },
        "cli_features": features,
        "backends": backends,
        "devices": [{
            "backend": "cpu",
            "logical_cores": cores,
            "arch": std::env::consts::ARCH,
            "os": std::env::consts::OS,
            "target": TARGET,
            "simd_features": simd,
            "cpu_level_detected": mvision_core::cpu::detected().name(),
            "cpu_level": mvision_core::cpu::active().name(),
        }],
        "gpu_devices": gpus,
    })
}

/// Joins a JSON array of strings for the text report, `none` when empty.
fn list(v: &Value) -> String {
    let items: Vec<&str> = v
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if items.is_empty() {
        "none".to_string()
    } else {
        items.join(", ")
    }
}

/// Runs `mvision info`, writing text or (with `json`) one JSON document to `out`.
pub fn run(json: bool, out: &mut impl Write) -> Result<()> {
    let info = collect();
    if json {
        let text = serde_json::to_string_pretty(&info).context("cannot serialise info")?;
        writeln!(out, "{text}").context("cannot write to stdout")?;
        return Ok(());
    }
    let mut text = String::new();
    let s = |v: &Value| v.as_str().unwrap_or("").to_string();
    text += &format!(
        "mvision {} ({} build)\n",
        s(&info["version"]),
        s(&info["build_profile"])
    );
    text += &format!("cli features: {}\n", list(&info["cli_features"]));
    text += "backends:\n";
    for b in info["backends"].as_array().into_iter().flatten() {
        text += &format!("  {:<8} {}\n", s(&b["name"]), s(&b["status"]));
    }
    text += "devices:\n";
    for d in info["devices"].as_array().into_iter().flatten() {
        let cores = d["logical_cores"]
            .as_u64()
            .map_or_else(|| "unknown".to_string(), |n| n.to_string());
        text += &format!("  {} (host CPU)\n", s(&d["backend"]));
        text += &format!("    logical cores: {cores}\n");
        text += &format!(
            "    target:        {} ({} / {})\n",
            s(&d["target"]),
            s(&d["arch"]),
            s(&d["os"])
        );
        text += &format!("    simd:          {}\n", list(&d["simd_features"]));
        text += &format!(
            "    cpu level:     {} (detected {}; cap with MVISION_CPU=baseline|x86-64-v3)\n",
            s(&d["cpu_level"]),
            s(&d["cpu_level_detected"])
        );
    }
    for d in info["gpu_devices"].as_array().into_iter().flatten() {
        if let Some(err) = d["error"].as_str() {
            text += &format!("  {}: no devices ({err})\n", s(&d["backend"]));
            continue;
        }
        let mib = |v: &Value| v.as_u64().unwrap_or(0) / (1024 * 1024);
        let kib = |v: &Value| v.as_u64().unwrap_or(0) / 1024;
        text += &format!(
            "  {} device {}: {} [{}]\n",
            s(&d["backend"]),
            d["index"],
            s(&d["name"]),
            s(&d["platform"])
        );
        text += &format!(
            "    compute units: {}, local memory: {} KiB, max work-group: {}, global memory: {} MiB{}\n",
            d["compute_units"],
            kib(&d["local_mem_bytes"]),
            d["max_work_group_size"],
            mib(&d["global_mem_bytes"]),
            if d["unified_memory"].as_bool() == Some(true) { ", unified memory" } else { "" }
        );
        text += &format!(
            "    kernel arguments: up to {} bytes (filter coefficients {})\n",
            d["max_parameter_bytes"],
            if d["taps_by_value"].as_bool() == Some(true) {
                "passed by value"
            } else {
                "in an uploaded table"
            }
        );
    }
    out.write_all(text.as_bytes())
        .context("cannot write to stdout")
}
