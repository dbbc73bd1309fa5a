#!/bin/sh
# Regenerates the table of docs/accuracy.md "Against llama.cpp's allocation"
# from TestLlamaCPPAllocationError's -v output (run from the repository root):
#   scripts/llamacpp-measure/doc-table.sh
set -eu
out=$(mktemp)
go test ./internal/api -run TestLlamaCPPAllocationError -count=1 -v |
	sed -n 's/^ *\(|.*\)$/\1/p' >"$out"
python3 - "$out" docs/accuracy.md <<'PY'
import sys
table = open(sys.argv[1]).read().splitlines()
doc = open(sys.argv[2]).read().splitlines()
start = doc.index(table[0])
end = next(i for i in range(start, len(doc)) if doc[i].startswith("|total| error:"))
doc[start:end + 1] = table
open(sys.argv[2], "w").write("\n".join(doc) + "\n")
PY
rm -f "$out"
