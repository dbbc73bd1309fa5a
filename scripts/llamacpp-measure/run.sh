#!/usr/bin/env bash
# Measure what llama.cpp allocates for random-weight GGUFs of real
# architectures and write one JSON record per run (see README.md).
#
#   run.sh LLAMA_CPP_DIR WORK_DIR [OUT_JSON]
#
# LLAMA_CPP_DIR: a llama.cpp checkout with libllama already built in
#   LLAMA_CPP_DIR/build (README.md gives the commands). Its commit is read with
#   git, or from LLAMA_COMMIT when the checkout has no .git.
# WORK_DIR: scratch space for the GGUFs (several GB) and the logs.
# OUT_JSON: default internal/calibration/data/llamacpp_measurements.json.
# MODELS, QUANTS, LONG_QUANT, THREADS, BENCH (0 to skip tokens/s) and APPEND
# (1 to add to WORK_DIR/records.jsonl) may be set in the environment. Nothing is downloaded.
# SPARSE=1 writes the GGUFs with make_gguf.py --sparse (zero matrices, for
# models larger than the disk) and marks the records "sparse"; DECODE=0 skips
# the one-token decode (MEASURE_DECODE=0, for sparse GGUFs too large to read)
# and sets MEASURE_NO_PREFETCH=1, which the patched scratch checkout reads to
# map the file without MAP_POPULATE (README.md, change 4).
# CPU_MOE="N ..." adds, per model, q4_k_m speed runs with --n-cpu-moe N
# (MEASURE_N_CPU_MOE) beside the run without it, and OT="regex=CPU" one with
# -ot (MEASURE_OT), with MOE_BENCH="PP TG REPS" (default 128 32 2); MEMORY=0
# skips the memory matrix; see README.md "MoE experts on the CPU".
set -euo pipefail

llama=$(cd "${1:?llama.cpp checkout}" && pwd)
work=$(mkdir -p "${2:?work dir}" && cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${3:-$repo/internal/calibration/data/llamacpp_measurements.json}
threads=${THREADS:-2}
models=${MODELS:-"Qwen2.5-0.5B Qwen3-0.6B Llama-3.2-1B TinyLlama-1.1B-Chat-v1.0 Gemma-3-1B Gemma-2-2B"}
quants=${QUANTS:-"f16 q8_0 q4_k_m"}
bench=${BENCH:-1}
sparse=${SPARSE:-0}
moe_bench=${MOE_BENCH:-"128 32 2"} # PP TG REPS of the CPU_MOE / OT runs
[[ ${DECODE:-1} == 1 ]] || export MEASURE_DECODE=0 MEASURE_NO_PREFETCH=1
longq=${LONG_QUANT:-q4_k_m} # the quant of the long-context and q8_0-KV runs
commit=${LLAMA_COMMIT:-$(git -C "$llama" rev-parse HEAD)}
py=/usr/bin/python3 # Debian's, with python3-numpy

lib=$llama/build/bin
[[ $work/measure -nt $here/measure.cpp ]] || g++ -std=c++17 -O2 "$here/measure.cpp" -I "$llama/include" -I "$llama/ggml/include" \
    -L "$lib" -lllama -lggml -lggml-base -Wl,-rpath,"$lib" -o "$work/measure"

records=$work/records.jsonl
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
[[ ${APPEND:-0} == 1 ]] || : >"$records" # APPEND=1 adds to an earlier run

# n_ctx_train of a catalog model, to keep every run within the model's limit.
ctx_train() {
    "$py" -c 'import json,sys; print(next(m for m in json.load(open(sys.argv[1]))["models"] if m["name"]==sys.argv[2])["config"]["max_position_embeddings"])' \
        "$repo/internal/model/catalog.json" "$1"
}

# one NAME QUANT CTX FA CTK CTV [PP TG REPS]: run measure once, append a record.
one() {
    local name=$1 q=$2 ctx=$3 fa=$4 ctk=$5 ctv=$6
    shift 6
    local gguf=$work/$name-$q.gguf
    local cmd=(./measure load "$(basename "$gguf")" "$ctx" "$fa" "$ctk" "$ctv" "$threads" "$@")
    local log=$work/$name-$q-c$ctx-fa$fa-$ctk${MEASURE_N_CPU_MOE:+-ncmoe$MEASURE_N_CPU_MOE}${MEASURE_OT:+-ot}${1:+-bench}.log
    echo "== $name $q ctx=$ctx fa=$fa kv=$ctk/$ctv ${MEASURE_N_CPU_MOE:+n_cpu_moe=$MEASURE_N_CPU_MOE }${MEASURE_OT:+ot=$MEASURE_OT }$*" >&2
    if ! json=$(cd "$work" && "${cmd[@]}" 2>"$log"); then
        echo "   failed, see $log" >&2
        return 0
    fi
    local envs="${MEASURE_N_CPU_MOE:+MEASURE_N_CPU_MOE=$MEASURE_N_CPU_MOE }${MEASURE_OT:+MEASURE_OT='$MEASURE_OT' }${MEASURE_DECODE:+MEASURE_DECODE=$MEASURE_DECODE }${MEASURE_NO_PREFETCH:+MEASURE_NO_PREFETCH=$MEASURE_NO_PREFETCH }"
    "$py" - "$repo/internal/model/catalog.json" "$name" "$q" "$ctx" "$fa" "$ctk" "$ctv" "$threads" "$commit" "$envs${cmd[*]}" "$json" "$sparse" >>"$records" <<'EOF'
import json, sys
cat, name, q, ctx, fa, ctk, ctv, threads, commit, cmd, got, sparse = sys.argv[1:]
entry = next(m for m in json.load(open(cat))["models"] if m["name"] == name)
rec = {"model": name, "architecture": entry["config"].get("model_type"),
       "config_source": entry["source"], "quant": q, "context_length": int(ctx),
       "flash_attention": fa == "1", "cache_type_k": ctk, "cache_type_v": ctv,
       "threads": int(threads), "llama_cpp_commit": commit, "command": cmd}
if sparse == "1":
    rec["sparse"] = True
rec.update(json.loads(got))
print(json.dumps(rec, sort_keys=True))
EOF
}

for name in $models; do
    f16=$work/$name-f16.gguf
    sparse_flag=()
    [[ $sparse == 1 ]] && sparse_flag=(--sparse)
    [[ -s $f16 ]] || PYTHONPATH=$llama/gguf-py "$py" "$here/make_gguf.py" "$name" "$f16" --catalog "$repo/internal/model/catalog.json" "${sparse_flag[@]}"
    for q in $quants; do
        [[ $q == f16 || -s $work/$name-$q.gguf ]] || (cd "$work" && ./measure quant "$name-f16.gguf" "$name-$q.gguf" "$q" "$threads" >"$work/$name-$q.quant.log" 2>&1)
    done
    train=$(ctx_train "$name")
    small=$((train < 4096 ? train : 4096))
    if [[ ${MEMORY:-1} == 1 ]]; then
    for q in $quants; do
        one "$name" "$q" "$small" 1 f16 f16
        one "$name" "$q" "$small" 0 f16 f16
    done
    one "$name" "$longq" "$small" 1 q8_0 q8_0
    if ((train >= 32768)); then
        one "$name" "$longq" 32768 1 f16 f16
        one "$name" "$longq" 32768 0 f16 f16
        one "$name" "$longq" 32768 1 q8_0 q8_0
    elif ((train > 4096)); then
        one "$name" "$longq" "$train" 1 f16 f16
        one "$name" "$longq" "$train" 0 f16 f16
    fi
    fi # MEMORY
    if [[ $bench == 1 ]]; then
        one "$name" q4_k_m "$small" 1 f16 f16 128 32 2
        one "$name" q8_0 "$small" 1 f16 f16 128 32 2
    fi
    # MoE experts on the CPU: what --n-cpu-moe N and -ot "...=CPU" change on
    # this CPU-only build (README.md), with the run without them beside.
    if [[ -n ${CPU_MOE:-} || -n ${OT:-} ]]; then
        one "$name" q4_k_m "$small" 1 f16 f16 $moe_bench
        for n in ${CPU_MOE:-}; do
            MEASURE_N_CPU_MOE=$n one "$name" q4_k_m "$small" 1 f16 f16 $moe_bench
        done
        [[ -z ${OT:-} ]] || MEASURE_OT=$OT one "$name" q4_k_m "$small" 1 f16 f16 $moe_bench
    fi
done

mkdir -p "$(dirname "$out")"
"$py" - "$records" "$out" "$(nproc)" "$load_start" "$(cut -d' ' -f1-3 /proc/loadavg)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" <<'EOF'
import json, sys
records, out, nproc, load0, load1, cpu = sys.argv[1:]
runs = [json.loads(l) for l in open(records)]
doc = {"_comment": "What llama.cpp (CPU backend) allocates for random-weight GGUFs of real architectures; "
                   "written by scripts/llamacpp-measure/run.sh, see its README.md. Byte figures are llama.cpp's "
                   "log lines (MiB with two decimals) times 2^20; model_tensor_bytes is llama_model_size().",
       "machine": {"cpu": cpu, "nproc": int(nproc), "loadavg_at_start": load0, "loadavg_at_end": load1,
                   "note": "shared 2-core machine, loaded by other work: tokens/s are a lower bound"},
       "runs": runs}
json.dump(doc, open(out, "w"), indent=1, sort_keys=True)
open(out, "a").write("\n")
print(f"{out}: {len(runs)} runs")
EOF
