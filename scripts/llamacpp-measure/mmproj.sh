#!/usr/bin/env bash
# Measure what llama.cpp's mtmd allocates for random-weight vision projectors
# (mmproj GGUFs) on the CPU backend and write one JSON record per run (see
# README.md, "Vision projectors").
#
#   mmproj.sh LLAMA_CPP_DIR WORK_DIR [OUT_JSON]
#
# LLAMA_CPP_DIR: a llama.cpp checkout with libmtmd built in LLAMA_CPP_DIR/build
#   (cmake -DLLAMA_BUILD_MTMD=ON ...; README.md). Its commit is LLAMA_COMMIT,
#   or read with git.
# WORK_DIR: scratch space for the GGUFs (about 1.5 GB) and the logs.
# OUT_JSON: default internal/calibration/data/llamacpp_mmproj.json.
# MODELS (default medgemma-27b-it), QUANTS (default "f16 q8_0"), THREADS and
# VARIANTS (vision_config replacements written as F16 files, each a list of
# KEY=INT joined by "+", e.g. "image_size=448 intermediate_size=2304") may be
# set in the environment. Nothing is downloaded.
set -euo pipefail

llama=$(cd "${1:?llama.cpp checkout}" && pwd)
work=$(mkdir -p "${2:?work dir}" && cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${3:-$repo/internal/calibration/data/llamacpp_mmproj.json}
threads=${THREADS:-2}
models=${MODELS:-medgemma-27b-it}
quants=${QUANTS:-f16 q8_0}
commit=${LLAMA_COMMIT:-$(git -C "$llama" rev-parse HEAD)}
py=${PYTHON:-python3}

g++ -std=c++17 -O2 "$here/mmproj.cpp" -I "$llama/tools/mtmd" -I "$llama/include" -I "$llama/ggml/include" \
  -L "$llama/build/bin" -lmtmd -lllama -lggml -lggml-base -Wl,-rpath,"$llama/build/bin" -o "$work/mmproj"

records=$work/mmproj-records.jsonl
: > "$records"

# run FILE MODEL QUANT VARIANT: both flash-attention settings llama-server
# can pass to mtmd (-fa auto, its default, and -fa off).
run() {
  local f=$1 model=$2 quant=$3 variant=$4
  for fa in auto off; do
    (cd "$work" && ./mmproj "$(basename "$f")" "$fa" "$threads" > "$f.$fa.json" 2> "$f.$fa.log")
    MODEL=$model QUANT=$quant VARIANT=$variant FA=$fa FILE=$(basename "$f") COMMIT=$commit THREADS=$threads \
      "$py" - "$f.$fa.json" "$repo/internal/model/catalog.json" >> "$records" <<'EOF'
import json, os, sys
run = json.load(open(sys.argv[1]))
entry = next(m for m in json.load(open(sys.argv[2]))["models"] if m["name"] == os.environ["MODEL"])
variant = {}
for kv in filter(None, os.environ["VARIANT"].split("+")):
    k, v = kv.split("=")
    variant[k] = int(v)
run.update({
    "model": os.environ["MODEL"], "quant": os.environ["QUANT"], "config_source": entry["source"].split()[0],
    "vision_config_changes": variant, "llama_cpp_commit": os.environ["COMMIT"],
    "command": f"./mmproj {os.environ['FILE']} {os.environ['FA']} {os.environ['THREADS']}",
})
print(json.dumps(run, sort_keys=True))
EOF
  done
}

for m in $models; do
  for q in $quants; do
    f=$work/$m-mmproj-$q.gguf
    PYTHONPATH=$llama/gguf-py "$py" "$here/make_gguf.py" "$m" "$f" --mmproj "$q" --catalog "$repo/internal/model/catalog.json"
    run "$f" "$m" "$q" ""
  done
  for v in ${VARIANTS:-}; do
    f=$work/$m-mmproj-f16-${v//[=+]/_}.gguf
    args=()
    for kv in ${v//+/ }; do args+=(--vision "$kv"); done
    PYTHONPATH=$llama/gguf-py "$py" "$here/make_gguf.py" "$m" "$f" --mmproj f16 "${args[@]}" --catalog "$repo/internal/model/catalog.json"
    run "$f" "$m" f16 "$v"
    rm -f "$f"
  done
done

"$py" - "$records" "$out" <<'EOF'
import json, os, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
doc = {
    "_comment": "What llama.cpp's mtmd (CPU backend) allocates when it loads a random-weight vision projector "
                "(mmproj GGUF written by scripts/llamacpp-measure/make_gguf.py --mmproj) and warms it up; written by "
                "scripts/llamacpp-measure/mmproj.sh, see its README.md. model_size_bytes and compute_buffer_bytes are "
                "clip.cpp's log lines (MiB with two decimals) times 2^20; log keeps those lines verbatim. "
                "vision_config_changes: the catalog's vision_config values replaced to see how the buffers scale "
                "(not a published model).",
    "machine": {"nproc": os.cpu_count(), "loadavg": open("/proc/loadavg").read().split()[:3]},
    "runs": runs,
}
json.dump(doc, open(sys.argv[2], "w"), indent=1, sort_keys=True)
open(sys.argv[2], "a").write("\n")
EOF
echo "wrote $out"
