#!/usr/bin/env bash
# End-to-end test of the CMake package of libmvision:
#   1. cargo build --release -p mvision-ffi
#   2. configure, build and install cmake/ into <build_root>/prefix
#   3. build cmake/examples against it in <build_root>/examples and run ctest
#   4. the same with -DMVISION_SANITIZE=ON (ASan + UBSan) in <build_root>/examples-asan
#   5. copy the prefix elsewhere and check that find_package and pkg-config still work
#      (the package is relocatable)
# Exits non-zero if anything fails. Logs of quiet steps are in <build_root>/logs and are shown
# when a step fails.
#
# usage: cmake/run-tests.sh <repo_root> <build_root>
set -uo pipefail

if [[ $# -ne 2 ]]; then
    echo "usage: $0 <repo_root> <build_root>" >&2
    exit 2
fi
repo=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" || exit 2
build=$(cd "$2" && pwd) || exit 2
jobs=$(nproc 2>/dev/null || echo 4)
logs=$build/logs
mkdir -p "$logs"

failures=()

# run <log name> <command...>: runs quietly; on failure prints the log's tail and returns 1.
run() {
    local name=$1
    shift
    if "$@" >"$logs/$name.log" 2>&1; then
        return 0
    fi
    echo "FAILED: $*" >&2
    echo "---- last lines of $logs/$name.log ----" >&2
    tail -n 60 "$logs/$name.log" >&2
    echo "----" >&2
    return 1
}

step() { printf '==> %s\n' "$*"; }

# ctest_pass <label> <examples build dir> [extra cmake args...]
ctest_pass() {
    local label=$1 dir=$2
    shift 2
    rm -rf "$dir"
    step "examples ($label): configure + build in $dir"
    if ! run "examples-$label-configure" cmake -S "$repo/cmake/examples" -B "$dir" \
            -DCMAKE_PREFIX_PATH="$build/prefix" "$@" ||
        ! run "examples-$label-build" cmake --build "$dir" --parallel "$jobs"; then
        failures+=("examples ($label) build")
        return
    fi
    step "examples ($label): ctest"
    if ! (cd "$dir" && ctest --output-on-failure --parallel "$jobs"); then
        failures+=("ctest ($label)")
    fi
}

step "cargo build --release -p mvision-ffi"
if ! run cargo bash -c "cd '$repo' && cargo build --release -p mvision-ffi"; then
    exit 1
fi

step "package: configure + build + install into $build/prefix"
rm -rf "$build/pkg" "$build/prefix"
if ! run pkg-configure cmake -S "$repo/cmake" -B "$build/pkg" -DCMAKE_INSTALL_PREFIX="$build/prefix" ||
    ! run pkg-build cmake --build "$build/pkg" ||
    ! run pkg-install cmake --install "$build/pkg"; then
    exit 1
fi
(cd "$build/prefix" && find . -type f | sort | sed 's|^\./|    |')

ctest_pass default "$build/examples"
ctest_pass asan "$build/examples-asan" -DMVISION_SANITIZE=ON

step "relocated prefix: find_package and pkg-config from a copy of the install tree"
reloc=$build/relocated/some/other/prefix
rm -rf "$build/relocated"
mkdir -p "$(dirname "$reloc")"
cp -a "$build/prefix" "$reloc"
version=$(sed -n 's/^#define MV_VERSION_STRING "\(.*\)"$/\1/p' "$reloc/include/mvision.h")
if ! run relocated-find-package ctest --build-and-test "$repo/cmake/examples/consumer" \
        "$build/relocated/consumer" --build-generator "Unix Makefiles" \
        --build-options -DCMAKE_PREFIX_PATH="$reloc" -DMVISION_EXPECTED_VERSION="$version" \
        -DMVISION_EXPECTED_PREFIX="$reloc" \
        -DMVISION_EXAMPLE_SOURCE="$repo/cmake/examples/example_c.c" \
        --test-command ctest --output-on-failure; then
    failures+=("relocated find_package")
fi
if ! run relocated-pkgconfig sh "$repo/cmake/examples/pkgconfig/check_pkgconfig.sh" \
        "$reloc/lib/pkgconfig" "$repo/cmake/examples/example_c.c" "$build/relocated/pc" \
        "$version"; then
    failures+=("relocated pkg-config")
fi

if [[ ${#failures[@]} -ne 0 ]]; then
    printf 'FAILED: %s\n' "${failures[@]}" >&2
    exit 1
fi
echo "All CMake package tests passed."
