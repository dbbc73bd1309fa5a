#!/usr/bin/env bash
# check-symbols.sh: the library exports exactly what include/ai_hwaccel.h
# declares, under the expected SONAME, with prototypes that agree with the Go
# exports (docs/abi.md, "Guarantees").
#
#   scripts/check-symbols.sh [LIBRARY]     default: build/libai_hwaccel.so
#
# Checks:
#  1. names: every dynamic symbol the library defines, of any type (functions,
#     data, weak, absolute/version nodes), is exactly the set of hwaccel_*
#     functions declared in the header, as `nm -D --defined-only` prints them;
#  2. the export map lists the same names;
#  3. SONAME is libai_hwaccel.so.<HWACCEL_VERSION_MAJOR>;
#  4. signatures: a C file including both the public header and cgo's
#     generated header (build/gen/libai_hwaccel_cgo.h) compiles with -Werror,
#     and assigns every Go export to a pointer of the public type it backs;
#  5. hwaccel_abi_version() and hwaccel_version() of the loaded library equal
#     the header's HWACCEL_ABI_VERSION and HWACCEL_VERSION_STRING.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
lib=${1:-$root/build/libai_hwaccel.so}
header=$root/include/ai_hwaccel.h
cgo_header=$root/build/gen/libai_hwaccel_cgo.h
map=$root/capi/exports.map
CC=${CC:-cc}
failed=0
fail() { echo "check-symbols: FAIL: $*" >&2; failed=1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. Names: header declarations vs. the library's defined dynamic symbols.
# Declarations look like "HWACCEL_API <type> *?hwaccel_name(".
grep -oE '^HWACCEL_API[^(]*\bhwaccel_[a-z0-9_]+\(' "$header" |
  grep -oE 'hwaccel_[a-z0-9_]+' | sort -u >"$tmp/header"
nm -D --defined-only "$lib" | awk '{ print $NF }' | sort -u >"$tmp/lib"
if [ ! -s "$tmp/header" ]; then fail "no hwaccel_* declarations found in $header"; fi
if ! diff -u --label header "$tmp/header" --label library "$tmp/lib"; then
  fail "exported symbols of $lib differ from the declarations in $header"
fi

# 2. The version script lists exactly the header's functions.
sed -n '/global:/,/local:/p' "$map" | grep -oE 'hwaccel_[a-z0-9_]+' | sort -u >"$tmp/map"
if ! diff -u --label header "$tmp/header" --label exports.map "$tmp/map"; then
  fail "capi/exports.map differs from the declarations in $header"
fi

# 3. SONAME follows the major version.
major=$(sed -n 's/^#define HWACCEL_VERSION_MAJOR \([0-9]*\)$/\1/p' "$header")
soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
if [ "$soname" != "libai_hwaccel.so.$major" ]; then
  fail "SONAME is '$soname', want 'libai_hwaccel.so.$major'"
fi

# 4. Signatures: both headers in one translation unit. Conflicting types fail
# the compile; the pointer assignments fail when a Go export's prototype does
# not match the public function it backs (capi/shim.c forwards to them).
if [ ! -f "$cgo_header" ]; then
  fail "missing $cgo_header (run make)"
else
  cat >"$tmp/both.c" <<'C'
#include "ai_hwaccel.h"
#include "libai_hwaccel_cgo.h"
char *(*const check_detect)(const char *) = aihw_go_detect_json;
char *(*const check_quant)(const char *) = aihw_go_suggest_quant;
char *(*const check_plan)(const char *) = aihw_go_plan_sharding;
char *(*const check_train)(const char *) = aihw_go_estimate_training;
char *(*const pub_detect)(const char *) = hwaccel_detect_json;
char *(*const pub_quant)(const char *) = hwaccel_suggest_quant;
char *(*const pub_plan)(const char *) = hwaccel_plan_sharding;
char *(*const pub_train)(const char *) = hwaccel_estimate_training;
char *(*const check_models)(const char *) = aihw_go_models_json;
char *(*const check_fit)(const char *) = aihw_go_fit_json;
char *(*const pub_models)(const char *) = hwaccel_models_json;
char *(*const pub_fit)(const char *) = hwaccel_fit_json;
char *(*const check_rent)(const char *) = aihw_go_rent_json;
char *(*const pub_rent)(const char *) = hwaccel_rent_json;
C
  if ! "$CC" -std=c11 -Wall -Wextra -Werror -I"$root/include" -I"$root/build/gen" -I"$root/capi" \
    -c "$tmp/both.c" -o "$tmp/both.o"; then
    fail "include/ai_hwaccel.h and cgo's generated header disagree"
  fi
fi

# 5. Run-time versions equal the header's.
cat >"$tmp/ver.c" <<'C'
#include <stdio.h>
#include <string.h>
#include "ai_hwaccel.h"
int main(void) {
  if (hwaccel_abi_version() != HWACCEL_ABI_VERSION) {
    fprintf(stderr, "abi %d != %d\n", hwaccel_abi_version(), HWACCEL_ABI_VERSION);
    return 1;
  }
  if (strcmp(hwaccel_version(), HWACCEL_VERSION_STRING) != 0) {
    fprintf(stderr, "version %s != %s\n", hwaccel_version(), HWACCEL_VERSION_STRING);
    return 1;
  }
  return 0;
}
C
libdir=$(cd "$(dirname "$lib")" && pwd)
if ! "$CC" -std=c11 -Wall -Wextra -Werror -I"$root/include" "$tmp/ver.c" -o "$tmp/ver" \
  -L"$libdir" -l:"$(basename "$(readlink -f "$lib")")" -Wl,-rpath,"$libdir"; then
  fail "cannot build the version check against $lib"
elif ! "$tmp/ver"; then
  fail "run-time version of $lib differs from the header"
fi

if [ "$failed" -ne 0 ]; then exit 1; fi
echo "check-symbols: OK: $(wc -l <"$tmp/header") functions, SONAME $soname, prototypes agree, ABI $(grep -oE 'HWACCEL_ABI_VERSION [0-9]+' "$header" | cut -d' ' -f2)"
