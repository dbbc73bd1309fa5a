#!/usr/bin/env bash
# Unpack the llama.cpp source staged by prepare.sh and build the programs
# h200-run.sh runs, for one backend (README.md beside this file).
#
#   build-llama.sh cuda|cpu SRC_TGZ DIR JOBS
#
# DIR/llama.cpp is the source, DIR/llama.cpp/build the build; a build already
# there is reused (cmake only rebuilds what changed). Targets: llama-bench
# (prefill/decode, -ncmoe, -ot), llama-completion (the memory table at exit),
# llama-fit-params (--fit's own placement), llama-mtmd-cli (a vision
# projector) and libllama for scripts/llamacpp-measure/measure.cpp.
# cuda: one architecture, sm_90 (the H200), as the recorded H200 build
# (shared/calibration/llamacpp-cuda-h200/README.md: 90-real, 258 s on 16
# cores); cpu: the dry run, at -O1 because 2 shared cores compile it.
set -euo pipefail
mode=${1:?cuda or cpu} tgz=${2:?source tarball} dir=${3:?build dir} jobs=${4:-$(nproc)}
mkdir -p "$dir"
if [[ ! -f $dir/llama.cpp/CMakeLists.txt ]]; then
    tar -xzf "$tgz" -C "$dir"
fi
cd "$dir/llama.cpp"
flags=(-DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF
       -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF)
case $mode in
cuda) flags+=(-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90-real -DGGML_NATIVE=ON) ;;
cpu) flags+=(-DGGML_NATIVE=ON "-DCMAKE_C_FLAGS_RELEASE=-O1 -DNDEBUG" "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG") ;;
*) echo "mode: cuda or cpu" >&2; exit 2 ;;
esac
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
[[ -f build/CMakeCache.txt ]] || cmake -B build "${gen[@]}" "${flags[@]}"
cmake --build build -j "$jobs" --target llama-bench llama-completion llama-fit-params llama-mtmd-cli
ls build/bin
