#!/usr/bin/env bash
# Unpack the llama.cpp source staged by prepare.sh and build the programs
# h200-run.sh runs, for one backend (README.md beside this file).
#
#   build-llama.sh cuda|cpu SRC_TGZ DIR JOBS
#
# DIR/llama.cpp is the source, DIR/llama.cpp/build the build; a build already
# there is reused (cmake only rebuilds what changed). Targets: llama-bench
# (prefill/decode, -ncmoe, -ot), llama-completion (the memory table at exit),
# llama-fit-params (--fit's own placement) and llama-quantize (Q8_0, Q4_K_M
# from make_gguf.py's F16), with libllama and libggml. No llama-mtmd-cli: no
# projector GGUF can be made without a download (h200-run.sh, stage 4).
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
# CPU_MODELS="qwen2 qwen3moe" (cpu mode): compile only those files of
# src/models/ and keep only their cases in llama_model_mapping, as the
# recorded CPU runs did on 2 shared cores (scripts/llamacpp-measure/README.md,
# change 2); no buffer is sized differently. Never on the GPU machine.
if [[ $mode == cpu && -n ${CPU_MODELS:-} && ! -f src/.cpu-models ]]; then
    python3 - "$CPU_MODELS" <<'PY'
import re, sys
files = sys.argv[1].split()
kept = set()
for f in files:
    kept |= set(re.findall(r"llama_model_(\w+)::", open(f"src/models/{f}.cpp").read()))
cm = open("src/CMakeLists.txt").read()
cm = cm.replace('file(GLOB LLAMA_MODELS_SOURCES "models/*.cpp")',
                "set(LLAMA_MODELS_SOURCES " + " ".join(f"models/{f}.cpp" for f in files) + ")")
open("src/CMakeLists.txt", "w").write(cm)
src = open("src/llama-model.cpp").read()
start = src.index("static llama_model * llama_model_mapping(")
end = src.index("default:", start)
out, group = [], []
for line in src[start:end].splitlines(keepends=True):
    if line.strip().startswith("case "):
        group.append(line)
        continue
    m = re.search(r"return new llama_model_(\w+)\(", line)
    if m:
        if m.group(1) in kept:
            out += group + [line]
        group = []
        continue
    out += group + [line]
    group = []
open("src/llama-model.cpp", "w").write(src[:start] + "".join(out) + src[end:])
PY
    echo "$CPU_MODELS" >src/.cpu-models
fi
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
cmake --build build -j "$jobs" --target llama-bench llama-completion llama-fit-params llama-quantize
ls build/bin
