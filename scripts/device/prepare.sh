#!/usr/bin/env bash
# Stage, on this machine, everything scripts/device/h200-run.sh needs on a GPU
# machine that has no network (see README.md beside this file):
#
#   .device/llama.cpp-src.tar.gz  llama.cpp's source at the pinned commit,
#                                 from a local git snapshot (git archive)
#   .device/detect.test           internal/detect's test binary (go test -c):
#                                 the GPU machine has no Go toolchain
#   .device/COMMIT                the pinned commit, read by h200-run.sh
#
#   scripts/device/prepare.sh [LLAMA_CPP_GIT_DIR]
#
# LLAMA_CPP_GIT_DIR: a git repository (bare or not) holding LLAMA_COMMIT;
# default the fetch tool's snapshot of github.com/unslothai/llama.cpp, a fork
# whose history contains the commit (ggml-org's own snapshot here predates it;
# scripts/llamacpp-measure/README.md, "Session 1").
# .device/ is ignored by git (.gitignore) and travels with the device tool's
# `carry` (at most 64 MiB with the working tree; this prints the sizes).
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
# The commit scripts/llamacpp-measure measured on the CPU (its README.md,
# "Building llama.cpp"): one build for CPU and GPU rows.
commit=${LLAMA_COMMIT:-34af94cd9ab277632e27caeec2d41de2fd091b31}
src=${1:-/work/.mirror/unslothai+llama.cpp/repo}
dev=$repo/.device
mkdir -p "$dev"

# Left out: vocabulary files (models/, some of whose blobs the snapshot lacks,
# and which random-weight GGUFs do not need), documentation, CI, the web UI of
# llama-server and the examples; none is built (LLAMA_BUILD_EXAMPLES=OFF,
# LLAMA_BUILD_SERVER=OFF in h200-run.sh).
git -C "$src" cat-file -e "$commit^{commit}"
# git names one blob of models/ it cannot read ("invalid object") even though
# models/ is excluded, and still writes the whole archive (rc 0; gzip -t below)
git -C "$src" archive --format=tar --prefix=llama.cpp/ "$commit" -- . \
    ':(exclude)models' ':(exclude)docs' ':(exclude)benches' ':(exclude).github' \
    ':(exclude)tools/ui' ':(exclude)examples' | gzip -9 >"$dev/llama.cpp-src.tar.gz.tmp"
mv "$dev/llama.cpp-src.tar.gz.tmp" "$dev/llama.cpp-src.tar.gz"
echo "$commit" >"$dev/COMMIT"

# The detection benchmarks of issue 28 (internal/detect/detect_live_bench_test.go)
# as a binary: cgo (dlopen of libnvidia-ml.so.1) links it against the C
# library of this machine, so it needs a glibc at least as new there
# (Debian 12 here: 2.36; the CUDA image's Python 3.12.3 is Ubuntu 24.04's, glibc 2.39).
(cd "$repo" && CGO_ENABLED=1 go test -c -o "$dev/detect.test" ./internal/detect/)

carried=("$dev/llama.cpp-src.tar.gz" "$dev/detect.test" "$dev/COMMIT")
gzip -t "${carried[0]}"
du -b "${carried[@]}"
echo "total $(du -cb "${carried[@]}" | tail -1 | cut -f1) bytes to carry (limit 64 MiB with the working tree)"
