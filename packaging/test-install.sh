#!/usr/bin/env bash
# test-install.sh: `make install` into temporary prefixes, then real hosts
# built against the installed tree only (never against the source tree):
#   1. layout: versioned library, SONAME and dev links, headers, .pc, CMake files;
#   2. the prefix is MOVED after install (proves the .pc and CMake files are
#      relocatable), then
#      a. a C host and the C++ example compiled with `pkg-config --cflags --libs`,
#      b. a C host found with CMake find_package(ai_hwaccel 0.1 CONFIG REQUIRED)
#         and the C++ example's own CMakeLists.txt,
#      each run on the cpu-only fixture, checking it loaded the installed library;
#   3. find_package with incompatible versions (1.0, a newer minor) fails;
#   4. a DESTDIR-staged install resolves to the staging tree;
#   5. uninstall leaves no file behind.
# Run by `make test-install` (MAKE is set by make).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
MAKE=${MAKE:-make}
CC=${CC:-cc}
CXX=${CXX:-c++}
fixture=$root/testdata/machines/cpu-only/root
header=$root/include/ai_hwaccel.h
define() { sed -n "s/^#define $1 \\([0-9][0-9]*\\)\$/\\1/p" "$header"; }
major=$(define HWACCEL_VERSION_MAJOR)
minor=$(define HWACCEL_VERSION_MINOR)
version=$major.$minor.$(define HWACCEL_VERSION_PATCH)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test-install: FAIL: $*" >&2; exit 1; }
step() { echo "test-install: $*"; }

# --- 1. layout -------------------------------------------------------------
step "make install PREFIX=$tmp/first"
$MAKE -s --no-print-directory install PREFIX="$tmp/first" >/dev/null
p=$tmp/first
for f in lib/libai_hwaccel.so.$version include/ai_hwaccel.h include/ai_hwaccel.hpp \
         lib/pkgconfig/ai_hwaccel.pc lib/cmake/ai_hwaccel/ai_hwaccel-config.cmake \
         lib/cmake/ai_hwaccel/ai_hwaccel-config-version.cmake; do
    [[ -f $p/$f && ! -L $p/$f ]] || fail "$f missing or not a regular file"
done
[[ $(readlink "$p/lib/libai_hwaccel.so.$major") == libai_hwaccel.so.$version ]] || fail ".so.$major link"
[[ $(readlink "$p/lib/libai_hwaccel.so") == libai_hwaccel.so.$major ]] || fail ".so link"
soname=$(objdump -p "$p/lib/libai_hwaccel.so.$version" | awk '$1 == "SONAME" {print $2}')
[[ $soname == libai_hwaccel.so.$major ]] || fail "installed SONAME is '$soname'"
if grep -rl "$tmp" "$p/lib/pkgconfig" "$p/lib/cmake"; then fail "packaging files hold an absolute path"; fi

# --- 2. move the prefix, then consume it ----------------------------------
mv "$tmp/first" "$tmp/moved"
p=$tmp/moved
export PKG_CONFIG_PATH=$p/lib/pkgconfig
unset PKG_CONFIG_LIBDIR || true

step "pkg-config consumers"
[[ $(pkg-config --modversion ai_hwaccel) == "$version" ]] || fail "pkg-config --modversion"
pkg-config --exists "ai_hwaccel >= $major.$minor" || fail "pkg-config version >= $major.$minor"
! pkg-config --exists "ai_hwaccel >= $((major + 1)).0" || fail "pkg-config accepted a newer major"
libdir=$(pkg-config --variable=libdir ai_hwaccel)
[[ $(realpath "$libdir") == "$(realpath "$p/lib")" ]] || fail "pkg-config libdir $libdir"
# shellcheck disable=SC2046 # word splitting of the flags is intended
$CC -Wall -Wextra -Werror -o "$tmp/consumer-pc" packaging/tests/consumer.c $(pkg-config --cflags --libs ai_hwaccel)
LD_LIBRARY_PATH=$libdir "$tmp/consumer-pc" "$fixture" "$libdir"
# shellcheck disable=SC2046
$CXX -std=c++17 -Wall -Wextra -Werror -o "$tmp/plan-pc" examples/cpp/plan_model.cpp $(pkg-config --cflags --libs ai_hwaccel)
LD_LIBRARY_PATH=$libdir "$tmp/plan-pc" --sysroot "$fixture" --params-b 8 >"$tmp/plan.json" 2>/dev/null
grep -q '"fits":true' "$tmp/plan.json" || fail "C++ example via pkg-config: $(head -c 300 "$tmp/plan.json")"

step "CMake find_package consumers"
cmake_q() { cmake "$@" >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log" >&2; return 1; }; }
cmake_q -S packaging/tests/cmake-consumer -B "$tmp/cb" -DCMAKE_PREFIX_PATH="$p" || fail "configure"
grep -q "ai_hwaccel $version (ABI" "$tmp/cmake.log" || fail "find_package did not report version $version"
cmake_q --build "$tmp/cb" || fail "build"
"$tmp/cb/consumer" "$fixture" "$p/lib"
cmake_q -S examples/cpp -B "$tmp/cpp" -DCMAKE_PREFIX_PATH="$p" || fail "configure examples/cpp"
cmake_q --build "$tmp/cpp" || fail "build examples/cpp"
"$tmp/cpp/plan_model" --sysroot "$fixture" --params-b 8 2>/dev/null | grep -q '"fits":true' ||
    fail "examples/cpp via CMake"

# --- 3. version checks -----------------------------------------------------
for want in "$((major + 1)).0" "$major.$((minor + 1))"; do
    if cmake -S packaging/tests/cmake-consumer -B "$tmp/cb-$want" -DCMAKE_PREFIX_PATH="$p" \
        -DHWACCEL_WANT_VERSION="$want" >"$tmp/neg.log" 2>&1; then
        fail "find_package(ai_hwaccel $want) accepted version $version"
    fi
    grep -q "not compatible\|suitable version\|version: $version" "$tmp/neg.log" ||
        { cat "$tmp/neg.log" >&2; fail "find_package($want) failed for another reason"; }
done

# --- 4. DESTDIR staging ----------------------------------------------------
step "make install DESTDIR=$tmp/stage PREFIX=/usr"
$MAKE -s --no-print-directory install DESTDIR="$tmp/stage" PREFIX=/usr >/dev/null
cflags=$(PKG_CONFIG_PATH=$tmp/stage/usr/lib/pkgconfig pkg-config --cflags ai_hwaccel)
[[ $cflags == *"$tmp/stage/usr/"* ]] || fail "staged .pc resolves to '$cflags'"
[[ -f $tmp/stage/usr/lib/cmake/ai_hwaccel/ai_hwaccel-config.cmake ]] || fail "staged CMake files"

# --- 5. uninstall ----------------------------------------------------------
step "make uninstall"
$MAKE -s --no-print-directory uninstall DESTDIR="$tmp/stage" PREFIX=/usr >/dev/null
left=$(find "$tmp/stage" -type f -o -type l)
[[ -z $left ]] || fail "uninstall left: $left"

step "ok"
