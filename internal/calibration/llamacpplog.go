package calibration

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// LlamaCPPMemoryRow is one device row of the memory table llama.cpp prints
// at exit (common_memory_breakdown_print in common/common.cpp of
// https://github.com/ggml-org/llama.cpp), in MiB:
//
//	| - CUDA0 (H200) | total = free + (self = model + context + compute) + unaccounted |
//	| - Host         |                 self = model + context + compute               |
//
// A host row has no total, free or unaccounted figure.
type LlamaCPPMemoryRow struct {
	Device                        string // "CUDA0 (H200)", "Host"
	Total, Free                   int
	Self, Model, Context, Compute int
	Unaccounted                   int
}

// ReadLlamaCPPMemoryTable reads the device rows of llama.cpp's exit memory
// table from a whole log (data/llamacpp-cuda-h200-memory).
func ReadLlamaCPPMemoryTable(r io.Reader) ([]LlamaCPPMemoryRow, error) {
	var rows []LlamaCPPMemoryRow
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.Index(line, "common_memory_breakdown_print: |   - ")
		if i < 0 {
			continue
		}
		cells := strings.Split(line[i+len("common_memory_breakdown_print: |   - "):], "|")
		if len(cells) < 2 {
			continue
		}
		row, err := parseMemoryRow(strings.TrimSpace(cells[0]), cells[1])
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no common_memory_breakdown_print row")
	}
	return rows, nil
}

// parseMemoryRow reads "143155 = 137373 + (5173 = 4403 + 512 + 258) + 608"
// (a device) or "301 = 281 + 0 + 20" (the host): the numbers in order.
func parseMemoryRow(device, figures string) (LlamaCPPMemoryRow, error) {
	var n []int
	for _, f := range strings.FieldsFunc(figures, func(r rune) bool { return strings.ContainsRune(" =+()", r) }) {
		v, err := strconv.Atoi(f)
		if err != nil {
			return LlamaCPPMemoryRow{}, fmt.Errorf("%s: %q: %w", device, figures, err)
		}
		n = append(n, v)
	}
	row := LlamaCPPMemoryRow{Device: device}
	switch len(n) {
	case 7:
		row.Total, row.Free, row.Self, row.Model, row.Context, row.Compute, row.Unaccounted = n[0], n[1], n[2], n[3], n[4], n[5], n[6]
	case 4:
		row.Self, row.Model, row.Context, row.Compute = n[0], n[1], n[2], n[3]
	default:
		return row, fmt.Errorf("%s: %q: %d figures", device, figures, len(n))
	}
	return row, nil
}
