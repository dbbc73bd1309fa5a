#!/usr/bin/env python3
"""Print the weights of a GGUF's matrices per stored ggml type, as JSON.

Usage: gguf_types.py FILE.gguf   (PYTHONPATH=<llama.cpp>/gguf-py)

Reads the tensor infos only (gguf-py's GGUFReader): for every tensor of two
or more dimensions, its element count under its ggml type name; the token
embedding and the output matrix are also listed apart ("token_embd",
"output"), since a decode multiplies the output matrix (the token embedding
where the model ties them) and only looks rows of the embedding up. This is
what internal/calibration/data/host_harness.json's stored_types record.
"""
import json
import sys

from gguf import GGUFReader

reader = GGUFReader(sys.argv[1])
by_type, apart = {}, {}
for t in reader.tensors:
    if len([d for d in t.shape if d > 1]) < 2:
        continue
    name = t.tensor_type.name
    n = int(t.n_elements)
    by_type[name] = by_type.get(name, 0) + n
    if t.name in ("token_embd.weight", "output.weight"):
        apart[t.name.split(".")[0]] = {"type": name, "weights": n}
print(json.dumps({"matrices": dict(sorted(by_type.items())), **apart}))
