#!/bin/sh
# crate-compare.sh: build the Rust crate ai-hwaccel from a source tree on
# this machine and time its steady-state detection against libai_hwaccel's in
# one process (bench/crate_compare.c; docs/performance.md, "Against the
# crate, measured"). Not part of `make test`, `make bench` or CI.
#
#   bench/crate-compare.sh CRATE_SRC [both|ours|crate|show|build]
#
# CRATE_SRC is the crate's source tree (its Cargo.toml and src/), e.g. for
# release 1.2.0:
#   git -C <clone of github.com/MacCracken/ai-hwaccel> archive 3d490e4 | tar -x -C /tmp/crate
# The mode is crate_compare's ("build" only builds). The crate is GPL-3.0:
# it is copied and built under CRATE_BUILD, which must lie outside this
# repository, and nothing of it comes back here.
#
# Nothing is fetched: cargo runs --offline with crates.io replaced by a
# directory of crate sources (CARGO_REGISTRY_DIR, default Debian's
# /usr/share/cargo/registry: apt-get install librust-serde-dev
# librust-serde-derive-dev librust-serde-json-dev librust-tracing-dev).
# In the copy only, so that cargo resolves offline:
#   - Cargo.lock and rust-toolchain.toml are removed;
#   - the dev-dependencies, benches and binaries are dropped, and the
#     optional dependencies (tracing-subscriber for the CLI, tokio for
#     async-detect) with them: features "cli" and "async-detect" become
#     empty, and neither is built (--no-default-features);
#   - the library is built as a cdylib.
# The crate's own release profile is kept (lto, opt-level "z", panic abort)
# unless CRATE_OPT_LEVEL overrides opt-level.
#
# Environment: CRATE_BUILD (default ${TMPDIR:-/tmp}/ai-hwaccel-crate-build),
# CARGO (default cargo), CC (default cc), CMP_ROUNDS, CMP_BLOCK, CMP_WARMUP,
# CMP_OURS_OPTIONS
# (crate_compare.c).
set -eu

usage() {
	echo "usage: $0 CRATE_SRC [both|ours|crate|show|build]" >&2
	exit 2
}
[ $# -ge 1 ] && [ $# -le 2 ] || usage
mode=${2:-both}
case $mode in both | ours | crate | show | build) ;; *) usage ;; esac

root=$(cd "$(dirname "$0")/.." && pwd -P)
src=$(cd "$1" && pwd -P)
build=${CRATE_BUILD:-${TMPDIR:-/tmp}/ai-hwaccel-crate-build}
registry=${CARGO_REGISTRY_DIR:-/usr/share/cargo/registry}

[ -f "$src/Cargo.toml" ] && [ -f "$src/src/ffi.rs" ] || {
	echo "$0: $src is not the crate's source tree (no Cargo.toml or src/ffi.rs)" >&2
	exit 1
}
grep -q '^name = "ai-hwaccel"' "$src/Cargo.toml" || {
	echo "$0: $src/Cargo.toml is not the ai-hwaccel crate's" >&2
	exit 1
}
build=$(realpath -m "$build") # GNU coreutils: resolves links without creating anything
case $build/ in "$root"/*)
	echo "$0: CRATE_BUILD ($build) is inside this repository; the crate's GPL sources must stay outside it" >&2
	exit 1
	;;
esac
mkdir -p "$build"

# The copy.
copy=$build/crate
rm -rf "$copy"
mkdir -p "$copy"
(cd "$src" && tar -c --exclude=./target --exclude=./.git .) | tar -x -C "$copy"
rm -f "$copy/Cargo.lock" "$copy/rust-toolchain.toml" "$copy/rust-toolchain"
awk -v opt="${CRATE_OPT_LEVEL:-}" '
	/^\[/ { section = $0; drop = (section ~ /^\[(dev-dependencies|\[bench\]\]|\[bin\]\]|\[example\]\]|\[test\]\])/) }
	drop { next }
	section == "[dependencies]" && /optional *= *true/ { next }
	section == "[features]" && /^(cli|async-detect) *=/ { sub(/=.*/, "= []") }
	section == "[profile.release]" && opt != "" && /^opt-level *=/ { $0 = "opt-level = " opt }
	{ print }
	section == "[package]" && /^\[package\]/ { print "autobins = false\nautoexamples = false\nautotests = false\nautobenches = false" }
	END { print "\n[lib]\ncrate-type = [\"cdylib\"]" }
' "$src/Cargo.toml" >"$copy/Cargo.toml"
mkdir -p "$copy/.cargo"
cat >"$copy/.cargo/config.toml" <<EOF
[source.crates-io]
replace-with = "local-directory"

[source.local-directory]
directory = "$registry"
EOF

(cd "$copy" && CARGO_TARGET_DIR="$build/target" "${CARGO:-cargo}" build --offline --release --lib \
	--no-default-features --features all-backends)
crate_lib=$build/target/release/libai_hwaccel.so

# Ours, and the harness.
make -C "$root" lib
mkdir -p "$root/build/bench"
"${CC:-cc}" -O2 -std=c11 -Wall -Wextra -Werror -o "$root/build/bench/crate_compare" \
	"$root/bench/crate_compare.c" -ldl
[ "$mode" = build ] && exit 0

# An empty working directory: with PATH "" the crate looks each tool name up
# relative to it.
mkdir -p "$build/empty"
cd "$build/empty"
exec "$root/build/bench/crate_compare" "$root/build/libai_hwaccel.so" "$crate_lib" "$mode"
