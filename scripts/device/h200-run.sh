#!/usr/bin/env bash
# One prepared run on a GPU machine lent by the device tool (one NVIDIA H200,
# 16 cores, no network): every measurement issues 27, 22 and 28 still lack,
# in order of value, each step under a deadline, results written as it goes.
# README.md beside this file gives the exact device-tool call.
#
#   scripts/device/h200-run.sh          on the GPU machine ($OUT set by the tool)
#   scripts/device/h200-run.sh --cpu    the same steps here on the CPU, tiny settings (dry run)
#
# Needs .device/ from scripts/device/prepare.sh (llama.cpp's source, the
# detection test binary). Writes to $OUT (default .device/out-cuda or
# .device/out-cpu), at most 8 files as the tool brings back:
#   results.jsonl  one JSON line per step (stage, step, status, rc, seconds,
#                  and what the capture says, from convert.py)
#   raw.tar.gz     the captures themselves (raw/speed/*.json llama-bench,
#                  raw/memory/*.log llama-completion, raw/fit/*.txt
#                  llama-fit-params, raw/detect/*, raw/env/*, raw/build/*),
#                  repacked after every step
#   run.log        this script's output
# convert.py rows $OUT DEST turns them into calibration rows.
#
# Stages (GPU mode; seconds are deadlines, the whole run stops at BUDGET=480):
#   1 env+detect  nvidia-smi, 5 timed nvidia-smi --query-gpu runs, the
#                 detection benchmarks of issue 28 (NVML and nvidia-smi,
#                 warm and cold), before the build loads the CPUs     ~25 s
#   2 build       llama.cpp CUDA sm_90 (build-llama.sh), the GGUFs written
#                 alongside (make_gguf.py --sparse)                 <= 330 s
#   3 dense       prefill/decode and memory of dense models at F16,
#                 Q8_0, Q4_K_M beside the recorded Llama rows (issue 22,
#                 still open, so before the MoE)                       ~120 s
#   4 moe         Qwen3-30B-A3B Q4_K_M: --fit on imitated 8-24 GiB cards,
#                 memory with --n-cpu-moe 0/24/48 and -ot, then
#                 prefill/decode of the same (issue 27, resolved)      rest
#   5 projector   not measured: make_gguf.py writes no mmproj GGUF     0 s
set -uo pipefail

mode=cuda
[[ ${1:-} == --cpu ]] && mode=cpu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
dev=$repo/.device
OUT=${OUT:-$dev/out-$mode}
# a python3 with numpy (make_gguf.py); the CUDA image's python3 has it
py=${PYTHON:-python3}
"$py" -c 'import numpy' 2>/dev/null || py=/usr/bin/python3
mkdir -p "$OUT"
: >"$OUT/results.jsonl"
exec > >(tee "$OUT/run.log") 2>&1
tee_pid=$!
# let tee write run.log's end before the device tool collects $OUT
trap 'exec >&- 2>&-; wait "$tee_pid"' EXIT

if [[ $mode == cuda ]]; then
    work=${WORK:-/tmp/h200run}
    budget=${BUDGET:-480}
    jobs=$(nproc)
    build_deadline=${BUILD_DEADLINE:-330}
    moe=Qwen3-30B-A3B moe_layers="" ncmoe="0 24 48"
    # the back half of the experts on the CPU, as --fit's own -ot does (issue 27)
    ot='blk\.(2[4-9]|3[0-9]|4[0-7])\.ffn_(up|down|gate)_exps=CPU'
    cards="24576 16384 12288 8192"
    dense=${DENSE:-"Phi-3-mini-4k-instruct:Q4_K_M Phi-3-mini-4k-instruct:Q8_0 Phi-3-mini-4k-instruct:F16 Llama-3.2-1B:Q8_0 Llama-3.2-1B:F16 Qwen3-0.6B:Q4_K_M Qwen3-0.6B:F16"}
    bench_args=(-p 512 -n 128 -r 3) moe_bench_args=(-p 512 -n 128 -r 2) ctx=4096 ngl=99 prompt_tokens=512
else
    work=${WORK:-$dev/cpu-work}
    budget=${BUDGET:-3000}
    jobs=${JOBS:-2}
    build_deadline=${BUILD_DEADLINE:-2400}
    # two of the model's 48 layers: the same tensors and options, a 3.6 GB file
    moe=Qwen3-30B-A3B moe_layers=2 ncmoe="0 1 2"
    ot='blk\.1\.ffn_(up|down|gate)_exps=CPU'
    cards=""
    dense=${DENSE:-"Qwen2.5-0.5B:Q4_K_M"}
    bench_args=(-p 16 -n 4 -r 1 -t 2) moe_bench_args=("${bench_args[@]}") ctx=512 ngl=0 prompt_tokens=64
    # only the two architectures run here are compiled (build-llama.sh)
    export CPU_MODELS=${CPU_MODELS:-"qwen2 qwen3moe"}
fi
raw=$work/raw
models=$work/models
rm -rf "$raw"
mkdir -p "$raw"/{env,detect,build,memory,speed,fit} "$models"
# the build: on the GPU machine under WORK; here the one CPU build is kept in
# .device/cpu between dry runs (BUILD_DIR)
build_dir=${BUILD_DIR:-$work/build}
[[ $mode == cpu ]] && build_dir=${BUILD_DIR:-$dev/cpu}
llama=$build_dir/llama.cpp
bin=$llama/build/bin
start=$SECONDS
# a prompt of the synthetic vocabulary's tokens (make_gguf.py: "▁t0" ...),
# 512 as the recorded H200 memory logs
prompt=$(for i in $(seq 1 $prompt_tokens); do printf 't%d ' "$i"; done)
export LLAMA_ARG_LOG_COLORS=off

left() { echo $((budget - (SECONDS - start))); }

pack() { # raw/ into $OUT, replaced whole so a killed run leaves the last good copy
    tar -czf "$OUT/raw.tar.gz.$BASHPID" -C "$work" raw && mv "$OUT/raw.tar.gz.$BASHPID" "$OUT/raw.tar.gz"
}

record() { # STAGE STEP KIND STATUS RC SECONDS FILE CMD [NOTE]
    "$py" "$here/convert.py" line --stage "$1" --step "$2" --kind "$3" --status "$4" --rc "$5" \
        --seconds "$6" ${7:+--file "$7"} --raw "$raw" ${8:+--cmd "$8"} ${9:+--note "$9"} >>"$OUT/results.jsonl"
}

# step STAGE NAME KIND DEADLINE FILE -- CMD...: run CMD with its output in
# FILE (and "rc=N" after it, as the recorded H200 logs have, but for JSON), under
# min(DEADLINE, what is left of the budget less 10 s for packing), then
# record it. Returns CMD's status (124: deadline).
step() {
    local stage=$1 name=$2 kind=$3 deadline=$4 file=$5
    shift 6
    local l
    l=$(($(left) - 10))
    ((deadline < l)) || deadline=$l
    if ((deadline < 5)); then
        record "$stage" "$name" "$kind" skipped 0 0 "" "$*" "budget spent"
        echo "-- $stage/$name: skipped, budget spent"
        return 125
    fi
    echo "-- $stage/$name (deadline ${deadline}s, $(left)s left): $*"
    local t0=$SECONDS rc status=ok
    timeout -k 5 "$deadline" "$@" >"$file" 2>&1
    rc=$?
    [[ $kind == bench ]] || echo "rc=$rc" >>"$file"
    ((rc == 0)) || status=failed
    ((rc == 124 || rc == 137)) && status=timeout
    record "$stage" "$name" "$kind" "$status" "$rc" $((SECONDS - t0)) "$file" "$*"
    pack
    echo "   $status rc=$rc in $((SECONDS - t0))s"
    return $rc
}

skip() { # STAGE NAME WHY
    record "$1" "$2" text skipped 0 0 "" "" "$3"
    echo "-- $1/$2: skipped, $3"
}

# --- 1 env + detection (issue 28), before the build loads the CPUs ---------
step env nvidia-smi text 15 "$raw/env/nvidia-smi.txt" -- nvidia-smi
step env query-gpu text 15 "$raw/env/query-gpu.csv" -- nvidia-smi \
    --query-gpu=index,name,memory.total,memory.reserved,memory.used,memory.free,driver_version,compute_cap --format=csv
{ nproc; free -m; uname -a; cat /proc/loadavg; } >"$raw/env/host.txt" 2>&1
query_timing() { # five whole nvidia-smi --query-gpu runs, as captures/timing.txt
    for _ in 1 2 3 4 5; do
        local t0 t1
        t0=$(date +%s%N)
        nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,memory.total,memory.free --format=csv,noheader >/dev/null || return
        t1=$(date +%s%N)
        echo "nvidia-smi-query $(((t1 - t0) / 1000)) us"
    done
}
export -f query_timing
step detect nvidia-smi-timing timing 20 "$raw/detect/nvidia-smi-timing.txt" -- bash -c query_timing
detect_test=$dev/detect.test
if [[ -x $detect_test ]]; then
    # the test binary runs in its package's directory, as go test does
    step detect warm-bench gobench 30 "$raw/detect/warm-bench.txt" -- bash -c "cd '$repo/internal/detect' && '$detect_test' \
        -test.run '^\$' -test.bench 'DetectLive(NVML|NvidiaSMI)\$' -test.benchtime 1s -test.count 3 -test.v"
    step detect cold-bench gobench 30 "$raw/detect/cold-bench.txt" -- bash -c "cd '$repo/internal/detect' && for i in 1 2 3 4 5; do \
        '$detect_test' -test.run '^\$' -test.bench 'DetectLiveNVMLCold\$' -test.benchtime 1x -test.v; done"
else
    skip detect bench "no .device/detect.test (run scripts/device/prepare.sh)"
fi

# --- 2 build, the GGUFs written alongside -------------------------------------
mkdir -p "$build_dir"
[[ -f $llama/CMakeLists.txt ]] || tar -xzf "$dev/llama.cpp-src.tar.gz" -C "$build_dir"
commit=$(cat "$dev/COMMIT" 2>/dev/null || echo unknown)
echo "llama.cpp $commit" >"$raw/build/commit.txt"
write_ggufs() { # F16 GGUFs, matrices as holes of sparse files (make_gguf.py --sparse)
    local name
    PYTHONPATH=$llama/gguf-py "$py" "$repo/scripts/llamacpp-measure/make_gguf.py" "$moe" "$models/$moe-F16.gguf" \
        --catalog "$repo/internal/model/catalog.json" --sparse ${moe_layers:+--layers $moe_layers} || return
    for name in $(for d in $dense; do echo "${d%%:*}"; done | sort -u); do
        PYTHONPATH=$llama/gguf-py "$py" "$repo/scripts/llamacpp-measure/make_gguf.py" "$name" "$models/$name-F16.gguf" \
            --catalog "$repo/internal/model/catalog.json" --sparse || return
    done
}
export -f write_ggufs
export moe moe_layers dense models llama py repo
step build ggufs text 120 "$raw/build/ggufs.log" -- bash -c write_ggufs &
gguf_pid=$!
step build llama.cpp text "$build_deadline" "$raw/build/build.log" -- \
    "$here/build-llama.sh" "$mode" "$dev/llama.cpp-src.tar.gz" "$build_dir" "$jobs"
built=$?
wait "$gguf_pid"
# keep the build log's end only: the whole log would crowd out the rest
tail -c 20000 "$raw/build/build.log" >"$raw/build/build.tail" && mv "$raw/build/build.tail" "$raw/build/build.log"
pack
if ((built != 0)); then
    echo "build failed or cut (rc=$built): nothing more to measure"
    exit 1
fi

quantize() { # NAME TYPE: the TYPE GGUF from the F16 one (llama-quantize), once
    local name=$1 type=$2
    [[ $type == F16 || -s $models/$name-$type.gguf ]] && return 0
    step quant "$name-$type" text "${3:-150}" "$raw/build/quantize-$name-$type.log" -- \
        "$bin/llama-quantize" "$models/$name-F16.gguf" "$models/$name-$type.gguf" "$type" "$jobs" ||
        { rm -f "$models/$name-$type.gguf"; return 1; } # a cut file would load as garbage
}

# memory NAME TYPE SUFFIX [ARGS...]: llama-completion's table, the recorded
# H200 logs' command (shared/calibration/llamacpp-cuda-h200/README.md).
memory() {
    local name=$1 type=$2 suffix=$3
    shift 3
    step memory "$name-$type$suffix" memory 60 "$raw/memory/$name-$type-c$ctx-faon-f16$suffix.log" -- \
        "$bin/llama-completion" -m "$models/$name-$type.gguf" -ngl $ngl -c $ctx -n 4 -fa on -ctk f16 -ctv f16 \
        -fit off -no-cnv --no-warmup -lv 4 -p "$prompt" "$@"
}

# speed NAME TYPE SUFFIX DEADLINE [ARGS...]: llama-bench -o json (stdout; its
# log to a .stderr beside), as the recorded rows; ARGS after bench_args.
speed() {
    local name=$1 type=$2 suffix=$3 deadline=$4
    shift 4
    step speed "$name-$type$suffix" bench "$deadline" "$raw/speed/$name-$type$suffix.json" -- \
        bash -c '"$@" 2>"$0"' "$raw/speed/$name-$type$suffix.stderr" \
        "$bin/llama-bench" -m "$models/$name-$type.gguf" -ngl $ngl -fa 1 "$@"
}

# fit NAME ARGS...: llama-fit-params' whole log in raw/fit/NAME.log, its last
# two lines (the log line announcing them and the chosen arguments) in
# NAME.txt, as the recorded fit/ files keep them.
fit() {
    local name=$1
    shift
    step fit "$name" fit 30 "$raw/fit/$name.log" -- "$bin/llama-fit-params" -m "$models/$moe-Q4_K_M.gguf" "$@"
    grep -v '^rc=' "$raw/fit/$name.log" | tail -2 >"$raw/fit/$name.txt"
}

# --- 3 dense prefill/decode and memory (issue 22, open), before the MoE ----
for d in $dense; do
    name=${d%%:*} type=${d#*:}
    quantize "$name" "$type" 60 || continue
    speed "$name" "$type" "" 60 "${bench_args[@]}" -o json
done
for d in $dense; do
    name=${d%%:*} type=${d#*:}
    [[ -s $models/$name-$type.gguf ]] && memory "$name" "$type" ""
done


# --- 4 MoE experts on the CPU (issue 27, resolved: what the budget leaves) ---
if quantize "$moe" Q4_K_M; then
    if [[ $mode == cuda ]]; then
        free=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits | head -1)
        free=${free:-0}
        echo "free=$free" >"$raw/fit/free.txt"
        # --fit as on a card with CARD MiB free: the margin is the rest (README
        # of shared/calibration/llamacpp-cuda-h200, fit/)
        for card in $cards; do
            fit "$moe-card$card" -fitt $((free - card))
            fit "$moe-card$card-c32768" -fitt $((free - card)) -c 32768
        done
    else
        fit "$moe-cpu" -c $ctx
    fi
    for n in $ncmoe; do
        memory "$moe" Q4_K_M "-ncmoe$n" --n-cpu-moe "$n"
    done
    memory "$moe" Q4_K_M -ot -ot "$ot"
    speed "$moe" Q4_K_M -ncmoe 150 "${moe_bench_args[@]}" -o json -ncmoe "$(echo $ncmoe | tr ' ' ,)"
    speed "$moe" Q4_K_M -ot 60 "${moe_bench_args[@]}" -o json -ot "$ot"
fi

# --- 5 vision projector -------------------------------------------------------
skip projector mmproj "make_gguf.py writes no projector (mmproj) GGUF; nothing to load"

pack
echo "done in $((SECONDS - start))s; $(grep -c '"status": "ok"' "$OUT/results.jsonl") steps ok of $(wc -l <"$OUT/results.jsonl")"
