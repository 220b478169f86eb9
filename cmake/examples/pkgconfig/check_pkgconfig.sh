#!/bin/sh
# Builds example_c.c the plain-Makefile way, from the installed mvision.pc, and runs it:
#   cc example_c.c $(pkg-config --cflags --libs mvision)              (shared)
#   cc example_c.c $(pkg-config --cflags --static --libs mvision)     (static, via Libs.private)
#
# usage: check_pkgconfig.sh <dir of mvision.pc> <example_c.c> <work dir> [expected version]
# Environment: CC (default cc), CFLAGS (extra flags, e.g. sanitizers), PKG_CONFIG.
# Exits 77 (ctest: skipped) when pkg-config is not installed.
set -eu

pcdir=$1
src=$2
work=$3
want_version=${4:-}
CC=${CC:-cc}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}

if ! command -v "$PKG_CONFIG" >/dev/null 2>&1; then
    echo "pkg-config not found: skipping"
    exit 77
fi
PKG_CONFIG_PATH=$pcdir
export PKG_CONFIG_PATH
mkdir -p "$work"

"$PKG_CONFIG" --exists --print-errors mvision
version=$("$PKG_CONFIG" --modversion mvision)
echo "mvision.pc: version $version"
echo "  --cflags --libs:          $("$PKG_CONFIG" --cflags --libs mvision)"
echo "  --cflags --static --libs: $("$PKG_CONFIG" --cflags --static --libs mvision)"
if [ -n "$want_version" ] && [ "$version" != "$want_version" ]; then
    echo "error: mvision.pc says $version, the CMake package says $want_version" >&2
    exit 1
fi
libdir=$("$PKG_CONFIG" --variable=libdir mvision)

# Shared: -lmvision finds libmvision.so; the library has no RPATH entry, so run with
# LD_LIBRARY_PATH as a plain Makefile user would.
# shellcheck disable=SC2046,SC2086 # pkg-config output and CFLAGS are meant to be split
$CC ${CFLAGS:-} -std=c99 -Wall -Wextra -Werror -pedantic "$src" \
    $("$PKG_CONFIG" --cflags --libs mvision) -o "$work/example_c_pc"
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$work/example_c_pc"

# Static: the same --static flags, with -lmvision pinned to the archive (-l:libmvision.a) since
# the linker would otherwise prefer the .so. This checks that Libs.private is complete.
static_libs=$("$PKG_CONFIG" --static --libs mvision | sed 's/-lmvision\( \|$\)/-l:libmvision.a\1/')
# shellcheck disable=SC2046,SC2086
$CC ${CFLAGS:-} -std=c99 -Wall -Wextra -Werror -pedantic "$src" \
    $("$PKG_CONFIG" --cflags mvision) $static_libs -o "$work/example_c_pc_static"
"$work/example_c_pc_static"
echo "pkg-config check: OK"
