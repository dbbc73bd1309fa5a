package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decodeLine is a least-squares line through (x, y) points: y = a + b·x.
func decodeLine(xs, ys []float64) (a, b float64) {
	var sx, sy, sxx, sxy float64
	n := float64(len(xs))
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	b = (n*sxy - sx*sy) / (n*sxx - sx*sx)
	return (sy - b*sx) / n, b
}

// TestGDDRDecodeLine recomputes the line docs/accuracy.md ("Decode by
// architecture (today's build)") draws through today's tg128 rows of
// data/prefill_today.json: 1/tg128 against the time the step's bytes take
// at the datasheet bandwidth (the replay's decode with every fraction 1
// and no per-layer latency), over the 15 rows that had a record with a
// bandwidth when the constants were fitted (the RTX 5070's came later),
// and per architecture; the slope's inverse is the fraction of the
// bandwidth a step reaches, the intercept the fixed time per token, over
// Llama 2 7B's 32 layers. It was computed by hand before (docs audit of
// session 16); the doc's sentence must quote what the rows give.
func TestGDDRDecodeLine(t *testing.T) {
	r := fitted(t)
	c := r.throughput()
	c.LayerLatencyCUDAToday = 0
	for _, a := range decodeTodayArchs {
		a.set(&c, 1)
	}
	const layers = 32
	var xs, ys []float64
	byArch := map[string][2][]float64{}
	for _, sc := range r.decodeTodayRows {
		if sc.row.Hardware == "NVIDIA GeForce RTX 5070" {
			continue
		}
		x, y := 1/sc.replay.Decode(c), 1/sc.row.TG
		xs, ys = append(xs, x), append(ys, y)
		p := byArch[sc.arch]
		byArch[sc.arch] = [2][]float64{append(p[0], x), append(p[1], y)}
	}
	require.Len(t, xs, 15)
	a, b := decodeLine(xs, ys)
	quote := fmt.Sprintf("over all %d rows gives %.3f of the bandwidth and %.2f ms per token (%.0f µs per layer over %d layers), per architecture about",
		len(xs), 1/b, 1e3*a, 1e6*a/layers, layers)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, arch := range []string{"ampere", "ada", "blackwell"} {
		p := byArch[arch]
		a, b := decodeLine(p[0], p[1])
		lo, hi = min(lo, 1e6*a/layers), max(hi, 1e6*a/layers)
		quote += fmt.Sprintf(" %.2f (%s),", 1/b, strings.ToUpper(arch[:1])+arch[1:])
	}
	quote = strings.TrimSuffix(quote, ",") + fmt.Sprintf(" with %.0f-%.0f µs per layer", lo, hi)
	doc, err := os.ReadFile(filepath.Join(testData, "..", "..", "..", "docs", "accuracy.md"))
	require.NoError(t, err)
	assert.Contains(t, strings.Join(strings.Fields(string(doc)), " "), quote)
}
