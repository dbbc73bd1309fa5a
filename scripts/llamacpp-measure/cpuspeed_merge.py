#!/usr/bin/env python3
"""Append cpuspeed.sh runs to internal/calibration/data/host_harness.json.

Usage: cpuspeed_merge.py RECORDED.json OUT.jsonl WORK_DIR MACHINE USES.json
       (PYTHONPATH=<llama.cpp>/gguf-py)

Each line of OUT.jsonl (cpuspeed.sh's output) becomes a row: its fields as
they are, the machine's key, the use USES.json gives its "MODEL QUANT" or
"MODEL QUANT pure" ("fit" or "held_out"), and the census of the GGUF it ran
(gguf_types.py on WORK_DIR/<the file of its command>). The file's rows
already recorded are kept as they are.
"""
import json
import os
import subprocess
import sys

recorded, runs, work, machine, uses_file = sys.argv[1:6]
here = os.path.dirname(os.path.abspath(__file__))
doc = json.load(open(recorded))
uses = json.load(open(uses_file))
census = {}
for line in open(runs):
    run = json.loads(line)
    key = f'{run["model"]} {run["quant"]}' + (" pure" if run["pure"] else "")
    gguf = run["command"].split()[1]
    if gguf not in census:
        out = subprocess.run([sys.executable, os.path.join(here, "gguf_types.py"), os.path.join(work, gguf)],
                             check=True, capture_output=True, text=True).stdout
        census[gguf] = json.loads(out)
    row = {"model": run["model"], "quant": run["quant"], "pure": run["pure"], "quantize_type": run["quantize_type"],
           "use": uses[key], "machine": machine}
    for k in ("threads", "reps", "prefill_tokens", "prefill_cpu_s", "prefill_wall_s", "decode_tokens", "decode_cpu_s",
              "decode_wall_s", "model_tensor_bytes", "model_params", "loadavg_before", "loadavg_after", "series", "command"):
        row[k] = run[k]
    row["stored_types"] = census[gguf]
    doc["rows"].append(row)
with open(recorded, "w") as f:
    json.dump(doc, f, indent=1, ensure_ascii=False)
    f.write("\n")
