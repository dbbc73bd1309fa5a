package main

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
)

// decodeStep is a decode record's time per token beside the planner's
// terms for it, all in seconds: the measured step (1 / tg128), the
// modelled step under the shipped constants, its weight-streaming part
// (the other terms zeroed), its per-layer part, and the weight bytes' time
// at the full datasheet bandwidth (every decode fraction 1).
type decodeStep struct {
	measured, modelled, weights, layers, datasheet float64
}

// gap is the time per token the model is missing (positive: the record
// is slower than the model).
func (s decodeStep) gap() float64 { return s.measured - s.modelled }

// decodeStepOf splits a tg record's step into the planner's terms by
// replaying it under altered copies of calibration.Fitted; the KV read is
// made free (a huge KVReadRatio) where only the weights are wanted.
func decodeStepOf(t *testing.T, sc speedCase) decodeStep {
	t.Helper()
	step := func(c calibration.Throughput) float64 {
		d := sc.replay.Decode(c)
		require.Positive(t, d, "%s %s", sc.row.Model, sc.row.Quant)
		return 1 / d
	}
	c := calibration.Fitted
	noLayers := c
	noLayers.LayerLatencyCUDA, noLayers.LayerLatencyCUDAToday = 0, 0
	weightsOnly := noLayers
	weightsOnly.KVReadRatio = 1e12
	full := weightsOnly
	full.DecodeHBM = calibration.DecodeFractions{Float: 1, Q8: 1, KQuant: 1}
	return decodeStep{measured: 1 / sc.row.TG, modelled: step(c), weights: step(weightsOnly),
		layers: step(c) - step(noLayers), datasheet: step(full)}
}

// h200DecodeSteps is every H200 tg record from an empty cache, fitted
// (data/h200-speed) and held out (data/h200-speed-34af94cd), keyed by
// model and type, each with its decodeStep.
func h200DecodeSteps(t *testing.T) map[[2]string]decodeStep {
	t.Helper()
	r := fitted(t)
	out := map[[2]string]decodeStep{}
	for _, set := range [][]speedCase{r.bench, r.benchHeldOut} {
		for _, sc := range set {
			if sc.row.TG <= 0 || sc.depth != 0 {
				continue
			}
			s := decodeStepOf(t, sc)
			out[[2]string{sc.row.Model, sc.row.Quant}] = s
			t.Logf("%-24s %-6s measured %.3f ms modelled %.3f ms (weights %.3f, layers %.3f) gap %+.3f ms = %+.2f of the weights' time",
				sc.row.Model, sc.row.Quant, 1e3*s.measured, 1e3*s.modelled, 1e3*s.weights, 1e3*s.layers, 1e3*s.gap(), s.gap()/s.weights)
		}
	}
	require.Len(t, out, 11, "4 fitted and 7 held-out tg128 records")
	return out
}

// TestPhi3PaysACostLlamaDoesNot backs the analysis of Phi-3-mini-4k-instruct's
// slow decode in docs/accuracy.md ("Why Phi-3-mini decodes slower"). Llama-3.1-8B and
// Phi-3-mini both have 32 layers and about 1.05 M matrix-vector rows per
// token (Llama: 32 x (4096 + 1024 + 1024 + 4096 + 14336 fused gate/up +
// 4096) + 128256; Phi-3: 32 x (9216 + 3072 + 16384 + 3072) + 32064), so a
// per-token, per-layer or per-row cost they share cancels between them;
// yet at F16 and at Q8_0 Phi-3's step is shorter by less than the
// datasheet bandwidth needs for the weight bytes it does not read. So
// Phi-3 pays a cost that Llama-3.1-8B does not.
func TestPhi3PaysACostLlamaDoesNot(t *testing.T) {
	s := h200DecodeSteps(t)
	const llama, phi = "Llama-3.1-8B", "Phi-3-mini-4k-instruct"
	for _, q := range []string{"FP16", "Q8_0"} {
		l, p := s[[2]string{llama, q}], s[[2]string{phi, q}]
		require.Positive(t, l.measured, "%s %s record", llama, q)
		require.Positive(t, p.measured, "%s %s record", phi, q)
		saved, needed := l.measured-p.measured, l.datasheet-p.datasheet
		t.Logf("%s: Phi-3 is %.3f ms a token faster than Llama-3.1-8B; the weight bytes it does not read take %.3f ms at the datasheet bandwidth (%.1fx)",
			q, 1e3*saved, 1e3*needed, needed/saved)
		assert.Less(t, saved, needed, "%s: Phi-3 saves less time than its fewer bytes need at the full datasheet rate", q)
	}
}

// TestOnlyPhi3MissesTheModel checks the other side of the analysis: each
// Phi-3 record misses the model by more than three times as much as any
// other H200 decode record, fitted or held out (two other architectures of
// the held-out build, with zero weights as Phi-3's); so what slows Phi-3
// is a property of its graph or shapes, not of the newer build or of
// zero weights.
func TestOnlyPhi3MissesTheModel(t *testing.T) {
	phiLeast, othersMost := math.Inf(1), 0.0
	for k, s := range h200DecodeSteps(t) {
		if k[0] == "Phi-3-mini-4k-instruct" {
			phiLeast = math.Min(phiLeast, s.gap())
		} else {
			othersMost = math.Max(othersMost, math.Abs(s.gap()))
		}
	}
	t.Logf("Phi-3's smallest gap %.3f ms a token; largest of the others %.3f ms", 1e3*phiLeast, 1e3*othersMost)
	assert.Greater(t, phiLeast, 3*othersMost)
}

// TestPhi3GapFitsEitherForm shows why the records cannot name the slow part
// of Phi-3's layer. Refit on all 11 H200 decode records with one rate per
// weight type and one time per layer, Phi-3's extra time fits within 10 %
// of every record in either of two forms: a time per token that is the
// same for every weight type (what the flash-attention kernel of its
// 96-wide heads, its unfused SwiGLU and its extra scale of Q would cost),
// or a slower stream of its weights by one factor for every type (matrix-
// vector products slower on its shapes). The second fits somewhat better
// (a smaller largest miss); neither can be fitted on the fit set, which
// has no row of Phi-3's shapes.
func TestPhi3GapFitsEitherForm(t *testing.T) {
	steps := h200DecodeSteps(t)
	keys := slices.SortedFunc(maps.Keys(steps), func(a, b [2]string) int { return strings.Compare(a[0]+" "+a[1], b[0]+" "+b[1]) })
	const phi = "Phi-3-mini-4k-instruct"
	types := []string{"FP16", "Q8_0", "Q4_K_M"}
	// refit fits the measured steps with per-type weight columns (weight
	// bytes / datasheet bandwidth, Phi-3's scaled by 1+slower), a layer
	// column and, with perToken, a Phi-3-only column of ones; it returns the
	// coefficients and each record's relative miss.
	refit := func(slower float64, perToken bool) (x, miss []float64) {
		var a [][]float64
		var y []float64
		for _, k := range keys {
			s := steps[k]
			row := make([]float64, 4, 5)
			for i, q := range types {
				if k[1] == q {
					row[i] = s.datasheet // its coefficient is 1 / the type's fraction
					if k[0] == phi {
						row[i] *= 1 + slower
					}
				}
			}
			row[3] = s.layers / calibration.Fitted.LayerLatencyCUDA // layers
			if perToken {
				row = append(row, 0)
				if k[0] == phi {
					row[4] = 1
				}
			}
			a, y = append(a, row), append(y, s.measured)
		}
		x = leastSquares(a, y)
		for i, row := range a {
			fit := 0.0
			for j := range row {
				fit += row[j] * x[j]
			}
			miss = append(miss, y[i]/fit-1)
		}
		return x, miss
	}
	largest := func(miss []float64) float64 {
		m := 0.0
		for _, v := range miss {
			m = math.Max(m, math.Abs(v))
		}
		return m
	}
	report := func(form string, x, miss []float64) {
		t.Logf("%s: fractions F16 %.2f Q8_0 %.2f Q4_K_M %.2f, %.1f us a layer", form, 1/x[0], 1/x[1], 1/x[2], 1e6*x[3])
		for i, k := range keys {
			t.Logf("  %-24s %-6s %+.1f%%", k[0], k[1], 100*miss[i])
		}
	}

	xTok, missTok := refit(0, true)
	require.Positive(t, xTok[4])
	report(fmt.Sprintf("Phi-3 +%.3f ms a token (%.1f us a layer) for every type", 1e3*xTok[4], 1e6*xTok[4]/32), xTok, missTok)

	bestSlower, bestMiss, bestX := 0.0, []float64(nil), []float64(nil)
	for i := 0; i <= 200; i++ {
		slower := float64(i) / 200
		x, miss := refit(slower, false)
		if bestMiss == nil || sumSquares(miss) < sumSquares(bestMiss) {
			bestSlower, bestMiss, bestX = slower, miss, x
		}
	}
	report(fmt.Sprintf("Phi-3's weights stream %.2fx as long for every type", 1+bestSlower), bestX, bestMiss)

	assert.Less(t, largest(missTok), 0.10, "a per-token cost fits within 10 %")
	assert.Less(t, largest(bestMiss), 0.10, "a slower weight stream fits within 10 %")
	assert.Less(t, largest(bestMiss), largest(missTok), "the slower weight stream fits better")
}

// sumSquares is the sum of the squares of v.
func sumSquares(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	return s
}

// leastSquares solves the normal equations of a x = y by Gaussian
// elimination with partial pivoting (a few unknowns; no library needed).
func leastSquares(a [][]float64, y []float64) []float64 {
	n := len(a[0])
	m := make([][]float64, n)
	for i := range m {
		m[i] = make([]float64, n+1)
		for r := range a {
			for j := 0; j < n; j++ {
				m[i][j] += a[r][i] * a[r][j]
			}
			m[i][n] += a[r][i] * y[r]
		}
	}
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[p][c]) {
				p = r
			}
		}
		m[c], m[p] = m[p], m[c]
		for r := 0; r < n; r++ {
			if r != c {
				f := m[r][c] / m[c][c]
				for j := c; j <= n; j++ {
					m[r][j] -= f * m[c][j]
				}
			}
		}
	}
	x := make([]float64, n)
	for i := range x {
		x[i] = m[i][n] / m[i][i]
	}
	return x
}
