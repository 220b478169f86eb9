#!/usr/bin/env bash
# Installs what the test suite needs, and only what is missing: Debian packages (CMake,
# pkg-config, C/C++ compilers, the aarch64 cross toolchain and qemu-user to run its binaries,
# PoCL's CPU OpenCL device), NVRTC (PyPI wheel) and the Rust targets/components (bare-metal
# Cortex-M, aarch64 Linux, rustfmt, clippy).
# Idempotent; safe to run on every test run.
set -euo pipefail

need_apt=()
have() { command -v "$1" >/dev/null 2>&1; }
have cmake || need_apt+=(cmake)
have pkg-config || need_apt+=(pkg-config)
have cc || need_apt+=(gcc)
have c++ || need_apt+=(g++)
have make || need_apt+=(make)
have aarch64-linux-gnu-gcc || need_apt+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
have qemu-aarch64 || need_apt+=(qemu-user) # runs the aarch64 test binaries (no binfmt needed)
have readelf || need_apt+=(binutils)
[ -e /usr/lib/x86_64-linux-gnu/libOpenCL.so ] || need_apt+=(ocl-icd-opencl-dev)
ls /etc/OpenCL/vendors/pocl*.icd >/dev/null 2>&1 || need_apt+=(pocl-opencl-icd)

if [ ${#need_apt[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${need_apt[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# NVRTC from NVIDIA's PyPI wheel: CI compiles every CUDA kernel for Jetson (sm_87) and Hopper
# (sm_90) without a GPU or a CUDA toolkit. Pinned so the compile check is reproducible.
nvrtc_wheel="nvidia-cuda-nvrtc-cu12==12.9.86"
if ! bash "$(dirname "$0")/../drivers/cuda/nvrtc-env.sh" >/dev/null 2>&1; then
  echo "install-deps: pip install $nvrtc_wheel"
  python3 -m pip install --quiet --disable-pip-version-check "$nvrtc_wheel"
fi

if ! have cargo; then
  echo "install-deps: cargo not found; install Rust with rustup (https://rustup.rs) first" >&2
  exit 1
fi
installed=$(rustup target list --installed 2>/dev/null || true)
for t in thumbv7em-none-eabihf aarch64-unknown-linux-gnu; do
  grep -qx "$t" <<<"$installed" || rustup target add "$t"
done
components=$(rustup component list --installed 2>/dev/null || true)
for c in rustfmt clippy; do
  grep -q "^$c" <<<"$components" || rustup component add "$c"
done
echo "install-deps: all present"
