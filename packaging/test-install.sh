#!/usr/bin/env bash
# test-install.sh: `make install` and `cmake --install` into temporary
# prefixes, then real hosts built against the installed tree only (never
# against the source tree):
#   1. layout: versioned library, SONAME and dev links, headers, .pc, CMake files,
#      the ai-hwaccel command (runs from the installed tree);
#      `cmake --install` of the top CMakeLists.txt lays out the identical tree
#      (same entries, types, modes, link targets and bytes);
#   2. each prefix (make's and CMake's) is MOVED after install (proves the .pc
#      and CMake files are relocatable), then
#      a. a C host and the C++ example compiled with `pkg-config --cflags --libs`,
#      b. a C host found with CMake find_package(ai_hwaccel 0.1 CONFIG REQUIRED)
#         and the C++ example's own CMakeLists.txt,
#      each run on the cpu-only fixture, checking it loaded the installed library;
#   3. find_package with incompatible versions (1.0, a newer minor) fails;
#   4. a DESTDIR-staged install resolves to the staging tree; make and CMake
#      stage identical trees, also with Debian-style LIBDIR/INCLUDEDIR;
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
abi=$(define HWACCEL_ABI_VERSION)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test-install: FAIL: $*" >&2; exit 1; }
step() { echo "test-install: $*"; }
cmake_q() { cmake "$@" >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log" >&2; return 1; }; }

# same_tree A B: A and B hold the same entries with the same types, modes and
# symlink targets (find -printf), and the same contents (diff -r, comparing
# links as links).
tree_listing() { (cd "$1" && find . -mindepth 1 -printf '%y %m %p -> %l\n' | LC_ALL=C sort); }
same_tree() {
    diff <(tree_listing "$1") <(tree_listing "$2") >&2 || fail "$1 and $2: entries, modes or links differ"
    diff -r --no-dereference "$1" "$2" >&2 || fail "$1 and $2: contents differ"
}

# cmake_configure BUILD [options...]: configure the top CMakeLists.txt
# (the C tests off: only the install rules matter) in BUILD.
cmake_configure() {
    local build=$1
    shift
    cmake_q -S "$root" -B "$build" -DHWACCEL_TESTS=OFF "$@" || fail "configure $build for install"
}

# --- 1. layout -------------------------------------------------------------
step "make install PREFIX=$tmp/first"
$MAKE -s --no-print-directory install PREFIX="$tmp/first" >/dev/null
p=$tmp/first
for f in lib/libai_hwaccel.so.$version include/ai_hwaccel.h include/ai_hwaccel.hpp \
         lib/pkgconfig/ai_hwaccel.pc lib/cmake/ai_hwaccel/ai_hwaccel-config.cmake \
         lib/cmake/ai_hwaccel/ai_hwaccel-config-version.cmake; do
    [[ -f $p/$f && ! -L $p/$f ]] || fail "$f missing or not a regular file"
done
[[ -f $p/bin/ai-hwaccel && -x $p/bin/ai-hwaccel ]] || fail "bin/ai-hwaccel missing or not executable"
[[ $("$p/bin/ai-hwaccel" version) == "ai-hwaccel $version "* ]] || fail "bin/ai-hwaccel version: $("$p/bin/ai-hwaccel" version)"
cli_plan=$("$p/bin/ai-hwaccel" plan --model 1b --sysroot "$fixture" --path "") || fail "bin/ai-hwaccel plan failed"
[[ ${cli_plan%%$'\n'*} == "1b fits "* ]] || fail "bin/ai-hwaccel plan on the cpu-only fixture: ${cli_plan%%$'\n'*}"
[[ $(readlink "$p/lib/libai_hwaccel.so.$major") == libai_hwaccel.so.$version ]] || fail ".so.$major link"
[[ $(readlink "$p/lib/libai_hwaccel.so") == libai_hwaccel.so.$major ]] || fail ".so link"
soname=$(objdump -p "$p/lib/libai_hwaccel.so.$version" | awk '$1 == "SONAME" {print $2}')
[[ $soname == libai_hwaccel.so.$major ]] || fail "installed SONAME is '$soname'"
if grep -rl "$tmp" "$p/lib/pkgconfig" "$p/lib/cmake"; then fail "packaging files hold an absolute path"; fi

step "cmake --install --prefix $tmp/cmake-first"
cmake_configure "$tmp/cmake-build"
cmake_q --install "$tmp/cmake-build" --prefix "$tmp/cmake-first" || fail "cmake --install"
same_tree "$tmp/first" "$tmp/cmake-first"

# --- 2. move the prefixes, then consume them ------------------------------
unset PKG_CONFIG_LIBDIR || true

# consume PREFIX NAME: C and C++ hosts found by pkg-config and by CMake
# find_package in PREFIX (build directories $tmp/NAME-*).
consume() {
    local p=$1 n=$2
    export PKG_CONFIG_PATH=$p/lib/pkgconfig

    step "$n: pkg-config consumers"
    [[ $(pkg-config --modversion ai_hwaccel) == "$version" ]] || fail "pkg-config --modversion"
    pkg-config --exists "ai_hwaccel >= $major.$minor" || fail "pkg-config version >= $major.$minor"
    ! pkg-config --exists "ai_hwaccel >= $((major + 1)).0" || fail "pkg-config accepted a newer major"
    local libdir
    libdir=$(pkg-config --variable=libdir ai_hwaccel)
    [[ $(realpath "$libdir") == "$(realpath "$p/lib")" ]] || fail "pkg-config libdir $libdir"
    # shellcheck disable=SC2046 # word splitting of the flags is intended
    $CC -Wall -Wextra -Werror -o "$tmp/$n-consumer-pc" packaging/tests/consumer.c $(pkg-config --cflags --libs ai_hwaccel)
    LD_LIBRARY_PATH=$libdir "$tmp/$n-consumer-pc" "$fixture" "$libdir"
    # shellcheck disable=SC2046
    $CXX -std=c++17 -Wall -Wextra -Werror -o "$tmp/$n-plan-pc" examples/cpp/plan_model.cpp $(pkg-config --cflags --libs ai_hwaccel)
    LD_LIBRARY_PATH=$libdir "$tmp/$n-plan-pc" --sysroot "$fixture" --params-b 8 --engine llama.cpp >"$tmp/plan.json" 2>/dev/null
    grep -q '"fits":true' "$tmp/plan.json" || fail "$n: C++ example via pkg-config: $(head -c 300 "$tmp/plan.json")"
    # A --sysroot machine is that machine: a vendor tool on this process's
    # PATH (here the dgx-h100 fixture's fake nvidia-smi) must not add this
    # host's GPUs to the CPU-only fixture's devices.
    PATH=$root/testdata/machines/dgx-h100/bin:$PATH LD_LIBRARY_PATH=$libdir "$tmp/$n-plan-pc" --sysroot "$fixture" \
        --params-b 8 --engine llama.cpp 2>"$tmp/devices.txt" >/dev/null
    [[ $(cat "$tmp/devices.txt") == "device cpu:0" ]] || fail "$n: C++ example ran a tool on PATH for --sysroot: $(tr '\n' ' ' <"$tmp/devices.txt")"

    step "$n: CMake find_package consumers"
    cmake_q -S packaging/tests/cmake-consumer -B "$tmp/$n-cb" -DCMAKE_PREFIX_PATH="$p" || fail "$n: configure"
    grep -qF "ai_hwaccel $version (ABI $abi) from $p/lib/cmake/ai_hwaccel" "$tmp/cmake.log" ||
        fail "$n: find_package did not report version $version from $p"
    cmake_q --build "$tmp/$n-cb" || fail "$n: build"
    "$tmp/$n-cb/consumer" "$fixture" "$p/lib"
    cmake_q -S examples/cpp -B "$tmp/$n-cpp" -DCMAKE_PREFIX_PATH="$p" || fail "$n: configure examples/cpp"
    cmake_q --build "$tmp/$n-cpp" || fail "$n: build examples/cpp"
    "$tmp/$n-cpp/plan_model" --sysroot "$fixture" --params-b 8 --engine llama.cpp 2>/dev/null | grep -q '"fits":true' ||
        fail "$n: examples/cpp via CMake"
}

mv "$tmp/first" "$tmp/moved"
mv "$tmp/cmake-first" "$tmp/cmake-moved"
consume "$tmp/moved" make
consume "$tmp/cmake-moved" cmake
p=$tmp/moved

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

step "DESTDIR=$tmp/cmake-stage cmake --install --prefix /usr"
DESTDIR=$tmp/cmake-stage cmake_q --install "$tmp/cmake-build" --prefix /usr || fail "staged cmake --install"
same_tree "$tmp/stage" "$tmp/cmake-stage"

# Debian-style directories: make takes absolute LIBDIR/INCLUDEDIR, CMake
# relative (GNUInstallDirs style) and absolute ones; all three trees match.
step "LIBDIR=/usr/lib/x86_64-linux-gnu INCLUDEDIR=/usr/include/hw, make and CMake"
$MAKE -s --no-print-directory install DESTDIR="$tmp/deb-make" PREFIX=/usr \
    LIBDIR=/usr/lib/x86_64-linux-gnu INCLUDEDIR=/usr/include/hw >/dev/null
cmake_configure "$tmp/deb-build-rel" -DCMAKE_INSTALL_PREFIX=/usr \
    -DCMAKE_INSTALL_LIBDIR=lib/x86_64-linux-gnu -DCMAKE_INSTALL_INCLUDEDIR=include/hw
DESTDIR=$tmp/deb-rel cmake_q --install "$tmp/deb-build-rel" || fail "cmake --install, relative dirs"
same_tree "$tmp/deb-make" "$tmp/deb-rel"
cmake_configure "$tmp/deb-build-abs" \
    -DCMAKE_INSTALL_LIBDIR=/usr/lib/x86_64-linux-gnu -DCMAKE_INSTALL_INCLUDEDIR=/usr/include/hw
DESTDIR=$tmp/deb-abs cmake_q --install "$tmp/deb-build-abs" --prefix /usr || fail "cmake --install, absolute dirs"
same_tree "$tmp/deb-make" "$tmp/deb-abs"
grep -qx 'prefix=${pcfiledir}/../../..' "$tmp/deb-abs/usr/lib/x86_64-linux-gnu/pkgconfig/ai_hwaccel.pc" ||
    fail "Debian-style .pc: $(grep prefix= "$tmp/deb-abs/usr/lib/x86_64-linux-gnu/pkgconfig/ai_hwaccel.pc")"

# --- 5. uninstall ----------------------------------------------------------
step "make uninstall"
$MAKE -s --no-print-directory uninstall DESTDIR="$tmp/stage" PREFIX=/usr >/dev/null
left=$(find "$tmp/stage" -type f -o -type l)
[[ -z $left ]] || fail "uninstall left: $left"

step "ok"
