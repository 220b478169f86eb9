#!/usr/bin/env bash
# Prints the folder holding NVRTC (libnvrtc.so.12) from the nvidia-cuda-nvrtc-cu12 wheel, for
#   export LD_LIBRARY_PATH=$(bash drivers/cuda/nvrtc-env.sh):$LD_LIBRARY_PATH
# so mvision-cuda's NVRTC compile test runs on machines without a CUDA toolkit (CI).
# NVRTC_LIB_DIR, when set, wins. Prints nothing and exits 1 when the wheel is not installed
# (install it with: python3 -m pip install nvidia-cuda-nvrtc-cu12).
set -euo pipefail
if [ -n "${NVRTC_LIB_DIR:-}" ]; then
  echo "$NVRTC_LIB_DIR"
  exit 0
fi
dir=$(python3 - 2>/dev/null <<'PY'
import os
import nvidia.cuda_nvrtc as m
for base in m.__path__:
    lib = os.path.join(base, "lib")
    if any(n.startswith("libnvrtc.so") for n in os.listdir(lib)):
        print(lib)
        break
PY
) || true
if [ -z "$dir" ]; then
  echo "nvrtc-env.sh: the nvidia-cuda-nvrtc-cu12 wheel is not installed" \
       "(python3 -m pip install nvidia-cuda-nvrtc-cu12)" >&2
  exit 1
fi
echo "$dir"
