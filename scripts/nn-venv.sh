#!/usr/bin/env bash
# Creates (or reuses) the Python venv for models/ and installs models/requirements.txt.
#   usage: scripts/nn-venv.sh [VENV_DIR]     (default: build/venv-nn in the repo, git-ignored)
# Reinstalls only when requirements.txt changed since the last install (hash stamp in the
# venv). The last line of stdout is the venv's python, e.g.
#   PY=$(scripts/nn-venv.sh | tail -n1) && "$PY" models/make_archs.py --out build/nn-models
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
venv="${1:-$repo/build/venv-nn}"
req="$repo/models/requirements.txt"
python="${PYTHON:-python3}"

command -v "$python" >/dev/null 2>&1 || { echo "nn-venv: $python not found" >&2; exit 1; }
[ -f "$req" ] || { echo "nn-venv: $req missing" >&2; exit 1; }

if [ ! -x "$venv/bin/python" ]; then
  echo "nn-venv: creating $venv" >&2
  "$python" -m venv "$venv" >&2 || {
    echo "nn-venv: '$python -m venv' failed (on Debian: apt-get install python3-venv)" >&2; exit 1; }
fi
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$req" | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  echo "nn-venv: pip install -r models/requirements.txt" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req" >&2
  echo "$want" > "$stamp"
fi
echo "$venv/bin/python"
