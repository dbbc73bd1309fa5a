#!/usr/bin/env python3
"""Read what scripts/device/h200-run.sh captured and turn it into calibration rows.

    convert.py line --stage S --step NAME --kind KIND --status ok --rc 0 --seconds 1.2 [--file F] [--cmd C]
        one JSON line for results.jsonl: the step and, when FILE parses as
        KIND, what it says (h200-run.sh calls this after every step)
    convert.py rows [--any-backend] OUT_DIR DEST_DIR
        from OUT_DIR (results.jsonl and raw.tar.gz, or raw/ unpacked), copy every
        capture that parses, and that ran on CUDA unless --any-backend (the
        --cpu dry run's captures are not H200 rows), into DEST_DIR laid out like internal/calibration/data
        (h200-speed/, llamacpp-cuda-h200-memory/, llamacpp-cuda-h200-fit/) and
        write DEST_DIR/summary.json and summary.md (the figures, for review and
        for docs/performance.md); captures that do not parse (a run cut by its
        deadline) are listed and left out

KIND is one of: bench (llama-bench -o json), memory (a llama-completion log
ending with llama.cpp's own memory table), fit (llama-fit-params output),
gobench (`go test -bench` output), timing (lines "NAME MICROSECONDS us", the
format of testdata/machines/h200-vm/captures/timing.txt), text (kept, not read).
The formats are those of the real H200 captures in shared/calibration/
llamacpp-cuda-h200/ (copied verbatim into internal/calibration/data/),
which test_convert.py reads. Standard library only: the GPU machine runs it
under its own python3.
"""
import argparse
import json
import os
import re
import statistics
import sys
import tarfile

# Where each kind of capture goes in internal/calibration/data (its README.md
# says which test replays each directory).
DEST = {"bench": "h200-speed", "memory": "llamacpp-cuda-h200-memory", "fit": "llamacpp-cuda-h200-fit"}


def parse_bench(text):
    """llama-bench -o json: one row per test (pp = prompt of n_prompt tokens,
    tg = n_gen tokens decoded, after n_depth tokens of context)."""
    rows = []
    for r in json.loads(text):
        rows.append({k: r.get(k) for k in (
            "model_filename", "model_type", "model_size", "n_gpu_layers", "n_cpu_moe", "tensor_buft_overrides",
            "flash_attn", "type_k", "type_v", "n_threads", "n_prompt", "n_gen", "n_depth", "avg_ts", "stddev_ts",
            "backends", "gpu_info", "build_commit")})
    if not rows:
        raise ValueError("no llama-bench rows")
    return rows


# common_memory_breakdown_print: |   - CUDA0 (H200)       | 143155 = 137373 + (5173 =  4403 +     512 +     258) +         608 |
# common_memory_breakdown_print: |   - CUDA0 (H200)       | 143155 = 141031 + ( 1445 =   760 +     384 +     300) +         679 |
# llama.cpp pads every column to its widest figure over all rows, the host's
# included, so a GPU's self can follow "(" after spaces (the second line: 17435
# MiB on the host, --n-cpu-moe 48); unaccounted is signed (total - free - self).
# common_memory_breakdown_print in common/fit.cpp of ggml-org/llama.cpp @ 34af94cd.
_DEVICE_ROW = re.compile(r"common_memory_breakdown_print: \|\s+- (.+?)\s+\|\s+(\d+) =\s+(\d+) \+ \(\s*(\d+) =\s+(\d+) \+\s+(\d+) \+\s+(\d+)\) \+\s+(-?\d+) \|")
# common_memory_breakdown_print: |   - Host               |                     301 =   281 +       0 +      20                |
_HOST_ROW = re.compile(r"common_memory_breakdown_print: \|\s+- (.+?)\s+\|\s+(\d+) =\s+(\d+) \+\s+(\d+) \+\s+(\d+)\s+\|")
# load_tensors:        CUDA0 model buffer size =  4403.49 MiB
_BUFFER = re.compile(r"(?:load_tensors|llama_context|llama_kv_cache|sched_reserve|llama_memory_recurrent):\s+(\S+)\s+(model|output|KV|compute|RS) buffer size =\s+([\d.]+) MiB")
_PERF = re.compile(r"common_perf_print: (prompt eval|       eval) time =.*?([\d.]+) tokens per second")
_RC = re.compile(r"^rc=(\d+)\s*$", re.M)


def parse_memory(text):
    """A llama-completion log: llama.cpp's own table at exit (MiB per device:
    self = model + context + compute, and unaccounted: what the process holds
    on the GPU beyond its buffers), the buffer lines, the tokens/s it printed.
    A log without the table (the run was cut or failed) does not parse."""
    devices = {}
    for m in _DEVICE_ROW.finditer(text):
        devices[m.group(1)] = dict(zip(("total", "free", "self", "model", "context", "compute", "unaccounted"),
                                       map(int, m.groups()[1:])))
    for m in _HOST_ROW.finditer(text):
        devices.setdefault(m.group(1), dict(zip(("self", "model", "context", "compute"), map(int, m.groups()[1:]))))
    if not devices:
        raise ValueError("no common_memory_breakdown_print table (cut or failed run)")
    buffers = {}
    for m in _BUFFER.finditer(text):
        key = f"{m.group(1)} {m.group(2)}"
        buffers[key] = round(buffers.get(key, 0.0) + float(m.group(3)), 2)
    out = {"devices": devices, "buffers_mib": buffers}
    for m in _PERF.finditer(text):
        out["prompt_tps" if m.group(1) == "prompt eval" else "eval_tps"] = float(m.group(2))
    rc = _RC.findall(text)
    if rc:
        out["rc"] = int(rc[-1])
    return out


_FIT = re.compile(r"^-c (\d+) -ngl (-?\d+)(.*)$", re.M)


def parse_fit(text):
    """llama-fit-params: its last stdout line is the arguments --fit chose
    (-c context, -ngl layers on the GPU, -1 all; then any -ot/--n-cpu-moe)."""
    m = list(_FIT.finditer(text))
    if not m:
        raise ValueError("no fitted '-c N -ngl N' line")
    last = m[-1]
    return {"ctx": int(last.group(1)), "ngl": int(last.group(2)), "rest": last.group(3).strip()}


_GOBENCH = re.compile(r"^(Benchmark\S+?)(?:-(\d+))?\s+(\d+)\s+([\d.]+) ns/op", re.M)
_GOSKIP = re.compile(r"^\s+\S+\.go:\d+: (.*)\n--- SKIP: (Benchmark\S+)", re.M)


def parse_gobench(text):
    """`go test -bench` output (also a test binary's, with -test.v): ns per
    operation per benchmark run, and the skipped benchmarks with their reason."""
    runs = [{"name": m.group(1), "procs": int(m.group(2) or 1), "n": int(m.group(3)), "ns_per_op": float(m.group(4))}
            for m in _GOBENCH.finditer(text)]
    skips = [{"name": m.group(2), "reason": m.group(1)} for m in _GOSKIP.finditer(text)]
    if not runs and not skips:
        raise ValueError("no benchmark result")
    return {"runs": runs, "skipped": skips}


_TIMING = re.compile(r"^(\S+) (\d+) us$", re.M)


def parse_timing(text):
    """Lines "NAME MICROSECONDS us", one per whole-process run; the median per name."""
    by = {}
    for m in _TIMING.finditer(text):
        by.setdefault(m.group(1), []).append(int(m.group(2)))
    if not by:
        raise ValueError("no timing line")
    return {k: {"runs_us": v, "median_ms": round(statistics.median(v) / 1000, 2)} for k, v in by.items()}


PARSERS = {"bench": parse_bench, "memory": parse_memory, "fit": parse_fit, "gobench": parse_gobench,
           "timing": parse_timing}


def parse_file(kind, text):
    """(parsed, error): what a capture says, or why it does not parse."""
    if kind not in PARSERS:
        return None, None
    try:
        return PARSERS[kind](text), None
    except (ValueError, KeyError, TypeError) as e:  # json.JSONDecodeError is a ValueError
        return None, f"{type(e).__name__}: {e}"


def line(a):
    rec = {"stage": a.stage, "step": a.step, "kind": a.kind, "status": a.status, "rc": a.rc,
           "seconds": a.seconds}
    if a.cmd:
        rec["cmd"] = a.cmd
    if a.note:
        rec["note"] = a.note
    if a.file:
        rec["file"] = os.path.relpath(a.file, a.raw) if a.raw else a.file
        if os.path.exists(a.file):
            with open(a.file, errors="replace") as f:
                parsed, err = parse_file(a.kind, f.read())
            if parsed is not None:
                rec["parsed"] = parsed
            if err:
                rec["parse_error"] = err
    print(json.dumps(rec, sort_keys=True))


def read_out(out_dir):
    """results.jsonl's records and {raw path: bytes} from raw.tar.gz or raw/
    (bytes, so rows() copies a capture byte for byte: a log's generated text
    may hold bytes that are not UTF-8)."""
    results = []
    path = os.path.join(out_dir, "results.jsonl")
    if os.path.exists(path):
        with open(path) as f:
            for ln in f:
                ln = ln.strip()
                if ln:
                    try:
                        results.append(json.loads(ln))
                    except ValueError:  # a line cut when the run was killed
                        pass
    files = {}
    tgz = os.path.join(out_dir, "raw.tar.gz")
    if os.path.exists(tgz):
        with tarfile.open(tgz) as t:
            for m in t.getmembers():
                if m.isfile():
                    files[os.path.relpath(m.name, "raw")] = t.extractfile(m).read()
    else:
        root = os.path.join(out_dir, "raw")
        for d, _, names in os.walk(root):
            for n in names:
                p = os.path.join(d, n)
                with open(p, "rb") as f:
                    files[os.path.relpath(p, root)] = f.read()
    return results, files


def kind_of(rel):
    """The kind of a raw capture from where h200-run.sh writes it."""
    top = rel.split("/")[0]
    if top == "speed" and rel.endswith(".json"):
        return "bench"
    if top == "memory" and rel.endswith(".log"):
        return "memory"
    if top == "fit" and rel.endswith(".txt") and not rel.endswith("free.txt"):
        return "fit"
    if top == "detect" and rel.endswith("-bench.txt"):
        return "gobench"
    if top == "detect" and rel.endswith("timing.txt"):
        return "timing"
    return None


def not_on_gpu(kind, parsed):
    """Why a parsed capture is not a GPU row ("" when it is): the directories
    rows() fills are the H200's."""
    if kind == "bench":
        cpu = sorted({b.get("backends") or "" for b in parsed if "CUDA" not in (b.get("backends") or "")})
        return f"not a GPU run (backends {', '.join(cpu)})" if cpu else ""
    if kind == "memory" and not any(d.startswith("CUDA") for d in parsed["devices"]):
        return f"not a GPU run (memory table rows {', '.join(parsed['devices'])})"
    return ""


def rows(out_dir, dest, any_backend=False):
    results, files = read_out(out_dir)
    summary = {"steps": [{k: r.get(k) for k in ("stage", "step", "status", "rc", "seconds", "note")} for r in results],
               "rows": {}, "rejected": {}}
    for rel in sorted(files):
        kind = kind_of(rel)
        if kind is None:
            continue
        parsed, err = parse_file(kind, files[rel].decode(errors="replace"))
        if not err and not any_backend:
            err = not_on_gpu(kind, parsed)
            if kind == "fit" and "fit/free.txt" not in files:
                # h200-run.sh writes the GPU's free memory beside its --fit runs
                # (the cards are imitated as margins below it); a CPU run has none
                err = "not a GPU run (no fit/free.txt)"
        if err:
            summary["rejected"][rel] = err
            continue
        summary["rows"][rel] = {"kind": kind, "parsed": parsed}
        if kind in DEST:
            d = os.path.join(dest, DEST[kind])
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, os.path.basename(rel)), "wb") as f:
                f.write(files[rel])
    if "fit/free.txt" in files:
        d = os.path.join(dest, DEST["fit"])
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "free.txt"), "wb") as f:
            f.write(files["fit/free.txt"])
    os.makedirs(dest, exist_ok=True)
    with open(os.path.join(dest, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(dest, "summary.md"), "w") as f:
        f.write(markdown(summary))
    return summary


def markdown(summary):
    """Tables of the figures, to review and to quote in docs."""
    out = ["| capture | what it says |", "|---|---|"]
    for rel, r in summary["rows"].items():
        p = r["parsed"]
        if r["kind"] == "bench":
            for b in p:
                test = f"pp{b['n_prompt']}" if b["n_prompt"] else f"tg{b['n_gen']}"
                if b.get("n_depth"):
                    test += f" @ d{b['n_depth']}"
                extra = f", n_cpu_moe {b['n_cpu_moe']}" if b.get("n_cpu_moe") else ""
                if b.get("tensor_buft_overrides") not in (None, "none"):
                    extra += f", -ot {b['tensor_buft_overrides']}"
                out.append(f"| {rel} | {test}{extra}: {b['avg_ts']:.1f} tok/s (± {b['stddev_ts']:.1f}) |")
        elif r["kind"] == "memory":
            cells = []
            for dev, v in p["devices"].items():
                un = f", unaccounted {v['unaccounted']}" if "unaccounted" in v else ""
                cells.append(f"{dev}: self {v['self']} = {v['model']} + {v['context']} + {v['compute']}{un}")
            out.append(f"| {rel} | {'; '.join(cells)} MiB |")
        elif r["kind"] == "fit":
            out.append(f"| {rel} | -c {p['ctx']} -ngl {p['ngl']} {p['rest']} |")
        elif r["kind"] == "gobench":
            for b in p["runs"]:
                out.append(f"| {rel} | {b['name']}: {b['ns_per_op'] / 1e6:.3f} ms/op ({b['n']} ops) |")
            for s in p["skipped"]:
                out.append(f"| {rel} | {s['name']} skipped: {s['reason']} |")
        elif r["kind"] == "timing":
            for name, t in p.items():
                out.append(f"| {rel} | {name}: median {t['median_ms']} ms over {len(t['runs_us'])} runs |")
    for rel, err in summary["rejected"].items():
        out.append(f"| {rel} | not used: {err} |")
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    ln = sub.add_parser("line")
    for flag in ("--stage", "--step", "--kind", "--status"):
        ln.add_argument(flag, required=True)
    ln.add_argument("--rc", type=int, default=0)
    ln.add_argument("--seconds", type=float, default=0.0)
    ln.add_argument("--file")
    ln.add_argument("--raw", help="the raw/ directory, to record FILE relative to it")
    ln.add_argument("--cmd", dest="cmd_line")
    ln.add_argument("--note")
    rw = sub.add_parser("rows")
    rw.add_argument("--any-backend", action="store_true",
                    help="keep captures of any backend (to review a --cpu dry run)")
    rw.add_argument("out_dir")
    rw.add_argument("dest")
    a = ap.parse_args(argv)
    if a.cmd == "line":
        a.cmd = a.cmd_line
        line(a)
    else:
        s = rows(a.out_dir, a.dest, a.any_backend)
        print(f"{len(s['rows'])} captures parsed, {len(s['rejected'])} left out; see {a.dest}/summary.md")


if __name__ == "__main__":
    sys.exit(main())
