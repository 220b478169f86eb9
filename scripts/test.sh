#!/usr/bin/env bash
# The one test entry point (README, CI): installs what is missing, then runs every check.
#   scripts/test.sh            everything
#   SKIP_DEPS=1 scripts/test.sh   skip the dependency check
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
# A one-shot full check gains nothing from incremental caches (1.3 GB in target/debug/incremental).
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}
step() { printf '\n=== %s\n' "$*"; }
started=$(date +%s)

[ -n "${SKIP_DEPS:-}" ] || bash scripts/install-deps.sh
# NVRTC for the CUDA kernel compile check (no GPU needed); PoCL provides the OpenCL device.
if nvrtc_dir=$(bash drivers/cuda/nvrtc-env.sh 2>/dev/null); then
  export LD_LIBRARY_PATH="$nvrtc_dir:${LD_LIBRARY_PATH:-}"
fi

disk() { printf 'disk: %s free on %s, this checkout uses %s\n' \
  "$(df -h --output=avail . | tail -n1 | tr -d ' ')" "$(df --output=target . | tail -n1)" \
  "$(du -sh . 2>/dev/null | cut -f1)"; }
disk

step "rustfmt"
cargo fmt --all --check

step "clippy (all targets, -D warnings)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "rustdoc (-D warnings)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet

step "core for bare metal (thumbv7em-none-eabihf)"
cargo build -p mvision-core --release --locked --target thumbv7em-none-eabihf

step "clippy and rustdoc of the core for aarch64 (its NEON code compiles only there)"
cargo clippy -p mvision-core --all-targets --locked --target aarch64-unknown-linux-gnu -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc -p mvision-core --no-deps --locked --quiet \
  --target aarch64-unknown-linux-gnu

step "libmvision cross-build for Jetson (aarch64-unknown-linux-gnu)"
CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc \
  cargo build -p mvision-ffi --release --locked --target aarch64-unknown-linux-gnu
for lib in libmvision.so libmvision.a; do
  f=target/aarch64-unknown-linux-gnu/release/$lib
  if [ "$lib" = libmvision.so ]; then
    readelf -h "$f" | grep -q 'AArch64' || { echo "$f is not an AArch64 ELF" >&2; exit 1; }
  fi
  echo "built $f ($(du -h "$f" | cut -f1))"
done

step "C API: CMake package, examples, ctest, ASan+UBSan"
bash cmake/run-tests.sh "$root" "$root/build/cmake-test"

step "Rust tests (header check included)"
cargo test --workspace --locked

step "GPU filters: the streaming kernels on every size (MVISION_FILTER_STREAM=on; default auto runs them on large images only), coefficients as uploaded tables (MVISION_FILTER_TAPS=table; PoCL takes them by value by default)"
MVISION_FILTER_STREAM=on MVISION_FILTER_TAPS=table cargo test -p mvision-runtime --locked --test backends -- filter::
step "GPU filters: the local-memory halo tiles everywhere (MVISION_FILTER_STREAM=off; by default the 3 x 3 filters stream)"
MVISION_FILTER_STREAM=off cargo test -p mvision-runtime --locked --test backends -- filter::
step "GPU filters: f32 without fused multiply-adds, bit-identical to the CPU (MVISION_FILTER_FMA=off; the default fuses, within tolerance)"
MVISION_FILTER_FMA=off cargo test -p mvision-runtime --locked --test backends -- filter::
step "GPU integral: the look-back scan forced on PoCL (MVISION_INTEGRAL_SCAN=lookback; default auto runs it on CUDA and NVIDIA OpenCL)"
MVISION_INTEGRAL_SCAN=lookback cargo test -p mvision-runtime --locked --test backends -- integral
step "GPU integral: the look-back scan's walks (MVISION_INTEGRAL_LOOKBACK=walk; auto adds the carries directly up to 128 tiles a side, every test image)"
MVISION_INTEGRAL_SCAN=lookback MVISION_INTEGRAL_LOOKBACK=walk cargo test -p mvision-runtime --locked --test backends -- integral
step "GPU filters: the packed-product (dp2a) u8 kernels on every size, emulated on PoCL (MVISION_FILTER_DOT=on)"
MVISION_FILTER_STREAM=on MVISION_FILTER_DOT=on cargo test -p mvision-runtime --locked --test backends -- filter::
step "GPU filters: the matrix-unit u8 kernel at 3, 5 and 7 taps a side, its products emulated on PoCL (MVISION_FILTER_MMA=on; default auto runs it on NVIDIA GPUs of compute capability 8.0 or later)"
MVISION_FILTER_MMA=on cargo test -p mvision-runtime --locked --test backends -- filter::
step "GPU filters: the separable f32 and u8 filters and the dense f32 ones from a local-memory column tile at 3, 5 and 7 taps, every size, bit-identical to the CPU (MVISION_FILTER_COLS=on MVISION_FILTER_FMA=off; the default auto runs the tile too, except where MVISION_FILTER_STREAM is set)"
MVISION_FILTER_COLS=on MVISION_FILTER_FMA=off cargo test -p mvision-runtime --locked --test backends -- filter::
step "GPU filters: the u8 column tile of bytes with packed products (dp2a), emulated on PoCL (MVISION_FILTER_DOT=on; the default auto runs it where the device has dp2a)"
MVISION_FILTER_DOT=on cargo test -p mvision-runtime --locked --test backends -- filter::

step "GEMM through the gemm crate (feature gemm-crate) and the explicit AVX+FMA micro-kernel"
cargo clippy -p mvision-core --all-targets --features gemm-crate --locked -- -D warnings
cargo test -p mvision-core --features gemm-crate --locked --test nn_gemm --test nn_gemm_cap --test nn_conv --test nn_layers --test nn_plan
# Without the crate every level's GEMMs are the portable ones, so Winograd's AVX-512 transforms
# are compared bit for bit with the portable ones (the workspace run above has the crate).
cargo test -p mvision-core --locked --test nn_winograd_levels
if grep -qw avx /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
  # Its own target dir: other RUSTFLAGS would invalidate the main build's cache.
  CARGO_TARGET_DIR="$root/target/avx-fma" RUSTFLAGS="-C target-feature=+avx,+fma" \
    cargo test -p mvision-core --locked --lib --test nn_gemm --test nn_conv --test nn_layers --test nn_plan
  rm -rf "$root/target/avx-fma" # used once; frees its disk for the CNN models below
else
  echo "skipped: the AVX+FMA micro-kernel (this CPU has no AVX or FMA)"
fi

step "CNN: AlexNet, SqueezeNet 1.1, ResNet-18, MobileNetV2 and MTCNN vs ONNX Runtime (scripts/nn-check.sh)"
cargo build --release --locked -p mvision-cli
bash scripts/nn-check.sh "$root/target/release/mvision"

step "aarch64 (Jetson, Snapdragon) under qemu-user: the core's, C API's, runtime's, trackers' and converter's tests, the CLI's unit tests, and the CNN checks through the aarch64 CLI"
# The boards run the NEON and portable paths that the x86 runs above never execute. CI is unset:
# the cross sysroot has no libOpenCL, so the backend suites take their "backend unavailable"
# path here (PoCL is required on the host run above). The CLI's integration tests spawn its
# binary directly, which needs binfmt_misc; the CNN checks run it through a qemu wrapper instead.
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"
aarch64=(--release --locked --target aarch64-unknown-linux-gnu)
env -u CI cargo test "${aarch64[@]}" -p mvision-core -p mvision-ffi -p mvision-runtime \
  -p mvision-track -p mvision-convert
env -u CI cargo test "${aarch64[@]}" -p mvision-cli --bins
cargo build "${aarch64[@]}" -p mvision-cli
printf '#!/bin/sh\nexec qemu-aarch64 -L /usr/aarch64-linux-gnu "%s" "$@"\n' \
  "$root/target/aarch64-unknown-linux-gnu/release/mvision" >"$root/build/mvision-aarch64"
chmod +x "$root/build/mvision-aarch64"
bash scripts/nn-check.sh "$root/build/mvision-aarch64"

echo
disk
echo "all checks passed in $(( $(date +%s) - started )) s"
