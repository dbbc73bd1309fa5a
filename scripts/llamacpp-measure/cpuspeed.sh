#!/usr/bin/env bash
# cpuspeed.sh LLAMA_CPP_DIR WORK_DIR OUT_JSONL: builds measure and cpuspeed
# against LLAMA_CPP_DIR/build, writes the F16 GGUFs (make_gguf.py), the
# GGUFs of RUNS with `measure quant` and runs cpuspeed on each, one thread,
# appending one JSON object per run to OUT_JSONL: cpuspeed's output with the
# model, the type, whether the file is pure (every matrix one type), the
# series, the load average before and after and the command, verbatim
# (README.md, "CPU speed by stored type").
#
#   RUNS    "MODEL:TYPE[:pure] ..." (default: the series of 2026-11-29)
#   SERIES  "1 2": each series runs every entry of RUNS once, in order
#   PP TG REPS  cpuspeed's test sizes (128 32 3)
#   QTHREADS    threads for llama_model_quantize (2)
#   PYTHON      a python3 with numpy (python3)
set -euo pipefail
llama=$(cd "$1" && pwd)
work=$2
out=$3
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
py=${PYTHON:-python3}
mkdir -p "$work"
runs=${RUNS:-"Llama-3.2-1B:f16 Llama-3.2-1B:bf16:pure Llama-3.2-1B:q8_0:pure Llama-3.2-1B:q6_k:pure Llama-3.2-1B:q5_k_m:pure Llama-3.2-1B:q4_k_m:pure Llama-3.2-1B:q3_k_m:pure Llama-3.2-1B:q2_k:pure Llama-3.2-1B:q5_0:pure Llama-3.2-1B:q5_1:pure Llama-3.2-1B:q4_0:pure Llama-3.2-1B:q4_1:pure Llama-3.2-1B:iq4_nl:pure Llama-3.2-1B:iq4_xs:pure Llama-3.2-1B:q4_k_m Qwen2.5-0.5B:f16 Qwen2.5-0.5B:q8_0 Qwen2.5-0.5B:q4_k_m"}
series=${SERIES:-"1 2"}
pp=${PP:-128} tg=${TG:-32} reps=${REPS:-3} qthreads=${QTHREADS:-2}

build() { # build NAME SOURCE
    [[ $work/$1 -nt $here/$2 ]] || g++ -std=c++17 -O2 "$here/$2" -I "$llama/include" -I "$llama/ggml/include" \
        -L "$llama/build/bin" -lllama -lggml -lggml-base -Wl,-rpath,"$llama/build/bin" -o "$work/$1"
}
build measure measure.cpp
build cpuspeed cpuspeed.cpp

# gguf NAME TYPE PURE: the file a run reads, written when missing.
gguf() {
    local f16=$work/$1-f16.gguf file=$work/$1-$2${3:+-pure}.gguf
    [[ -s $f16 ]] || PYTHONPATH=$llama/gguf-py "$py" "$here/make_gguf.py" "$1" "$f16" --catalog "$repo/internal/model/catalog.json" >&2
    if [[ $2 == f16 && -z $3 ]]; then echo "$f16"; return; fi
    [[ -s $file ]] || (cd "$work" && ./measure quant "$1-f16.gguf" "$(basename "$file")" "$2" "$qthreads" ${3:+pure} >"$file.quant.log" 2>&1)
    echo "$file"
}

for r in $runs; do
    IFS=: read -r name type pure <<<"$r"
    gguf "$name" "$type" "$pure" >/dev/null
done
for s in $series; do
    for r in $runs; do
        IFS=: read -r name type pure <<<"$r"
        file=$(basename "$(gguf "$name" "$type" "$pure")")
        cmd="./cpuspeed $file 1 $pp $tg $reps"
        before=$(cut -d' ' -f1-3 /proc/loadavg)
        json=$(cd "$work" && $cmd)
        after=$(cut -d' ' -f1-3 /proc/loadavg)
        "$py" - "$json" "$name" "$type" "${pure:+true}" "$s" "$before" "$after" "$cmd" >>"$out" <<'EOF'
import json, sys
row = json.loads(sys.argv[1])
pure = sys.argv[4] == "true"
# A pure file of a mix's type holds its base type only: named by that type,
# as the planner names a pure level (q4_k), with the type quantized beside.
quant = {"q5_k_m": "q5_k", "q4_k_m": "q4_k", "q3_k_m": "q3_k"}.get(sys.argv[3], sys.argv[3]) if pure else sys.argv[3]
row.update(model=sys.argv[2], quant=quant, quantize_type=sys.argv[3], pure=pure, series=int(sys.argv[5]),
           loadavg_before=sys.argv[6], loadavg_after=sys.argv[7], command=sys.argv[8])
print(json.dumps(row))
EOF
    done
done
