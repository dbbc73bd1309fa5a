package quant

import (
	"math"
	"os"
	"sort"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// Bounds promised in docs/accuracy.md ("Weights"): every gguf_file_size row
// within 3 % except the outliers listed below (within 20 %, each explained);
// the secondary model_size_table rows (a third-party table, "GB as
// printed") within 7 %.
const (
	weightsBound          = 0.03
	weightsOutlierBound   = 0.20
	weightsSecondaryBound = 0.07
)

// weightsOutliers are rows the current llama-quant rules do not reproduce,
// with the reason.
var weightsOutliers = map[string]string{
	"Mixtral 8x7B Q3_K_L": "2024 file (PR 6083): 19.03 GiB matches the expert ffn_down tensors left at Q3_K " +
		"(18.90 GiB, -0.7 %); today's Q3_K_L rule raises ffn_down to Q5_K. Not verified against that file's tensor list.",
}

// memoryRow is one record of testdata/memory.json, a copy of
// shared/calibration/memory.json (each record names its source).
type memoryRow struct {
	Kind         string   `json:"kind"`
	Model        string   `json:"model"`
	Quantization string   `json:"quantization"`
	Size         float64  `json:"size"`
	Unit         string   `json:"unit"`
	ParamsB      *float64 `json:"params_b"`
	Q40Size      float64  `json:"q4_0_size"`
	F16Size      float64  `json:"f16_size"`
	Source       string   `json:"source"`
}

func loadMemoryRows(t *testing.T) []memoryRow {
	t.Helper()
	b, err := os.ReadFile("testdata/memory.json")
	require.NoError(t, err)
	var doc struct {
		Rows []memoryRow `json:"memory_measured"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	return doc.Rows
}

// calibrationModels maps the model names of the size rows to catalog
// entries with the same architecture. "Llama 7B" in the llama.cpp PR tables
// is the LLaMA/Llama-2 7B shape (6.74 B params, the rows say so); the
// model_size_table "LLaMA 13B" is LLaMA-1 13B, whose tensor shapes equal
// Llama-2-13B's (40 layers, 5120 hidden, 13824 FFN, 32000 vocab).
var calibrationModels = map[string]string{
	"Llama 7B":         "Llama-2-7B",
	"TinyLlama 1.1B":   "TinyLlama-1.1B-Chat-v1.0",
	"Mixtral 8x7B":     "Mixtral-8x7B-v0.1",
	"Llama-3.2-3B":     "Llama-3.2-3B",
	"Llama-3.1-8B":     "Llama-3.1-8B",
	"Meta-Llama-3-70B": "Meta-Llama-3-70B",
	"LLaMA 13B":        "Llama-2-13B",
	"LLaMA 2 70B":      "Llama-2-70B",
}

var unitBytes = map[string]float64{"GiB": 1 << 30, "MiB": 1 << 20}

type sizeCase struct {
	model, quant string
	want         float64 // bytes
	source       string
	secondary    bool // model_size_table row
}

// sizeCases collects every gguf_file_size row, and the model_size_table
// rows (q4_0 and f16 columns, "GB as printed", which match GiB) whose
// model has a catalog shape.
func sizeCases(t *testing.T) []sizeCase {
	var cs []sizeCase
	for _, r := range loadMemoryRows(t) {
		switch r.Kind {
		case "gguf_file_size":
			u, ok := unitBytes[r.Unit]
			require.True(t, ok, "unit %q", r.Unit)
			cs = append(cs, sizeCase{r.Model, r.Quantization, r.Size * u, r.Source, false})
		case "model_size_table":
			if _, ok := calibrationModels[r.Model]; !ok {
				continue
			}
			cs = append(cs,
				sizeCase{r.Model, "Q4_0", r.Q40Size * (1 << 30), r.Source, true},
				sizeCase{r.Model, "F16", r.F16Size * (1 << 30), r.Source, true})
		}
	}
	return cs
}

// TestWeightsAgainstGGUFSizes replays the GGUF size rows of memory.json
// and prints the table of docs/accuracy.md:
//
//	go test ./internal/quant/ -run TestWeightsAgainstGGUFSizes -v
func TestWeightsAgainstGGUFSizes(t *testing.T) {
	var ggufErrs, secErrs []float64
	t.Logf("%-18s %-7s %10s %10s %8s  %s", "model", "quant", "measured", "estimate", "error", "row")
	for _, c := range sizeCases(t) {
		name, ok := calibrationModels[c.model]
		require.True(t, ok, "no catalog model for %q", c.model)
		m := model.Lookup(name)
		require.NotNil(t, m, name)
		l, err := Parse(c.quant)
		require.NoError(t, err, c.quant)
		got := float64(WeightsBytes(m, l))
		rel := (got - c.want) / c.want
		t.Logf("%-18s %-7s %9.2fG %9.2fG %+7.2f%%  %s", c.model, c.quant, c.want/(1<<30), got/(1<<30), 100*rel, c.source)
		bound := weightsBound
		if why, ok := weightsOutliers[c.model+" "+c.quant]; ok {
			bound = weightsOutlierBound
			t.Logf("  outlier: %s", why)
		}
		if c.secondary {
			bound = weightsSecondaryBound
			secErrs = append(secErrs, math.Abs(rel))
		} else {
			ggufErrs = append(ggufErrs, math.Abs(rel))
		}
		assert.LessOrEqual(t, math.Abs(rel), bound, "%s %s", c.model, c.quant)
	}
	require.GreaterOrEqual(t, len(ggufErrs), 14)
	med, p90 := medianP90(ggufErrs)
	t.Logf("weights vs gguf_file_size rows: n=%d median |error| %.2f%% p90 %.2f%% max %.2f%%", len(ggufErrs), 100*med, 100*p90, 100*maxOf(ggufErrs))
	med, p90 = medianP90(secErrs)
	t.Logf("weights vs model_size_table rows: n=%d median |error| %.2f%% p90 %.2f%% max %.2f%%", len(secErrs), 100*med, 100*p90, 100*maxOf(secErrs))
}

// TestMixBitsAgainstQuantizeTable checks the whole-model bits per weight of
// the mixes (used without a shape) against llama.cpp's quantize table for
// Llama-3.1-8B (tools/quantize/README.md @ 311c2c9f, rows in memory.json).
func TestMixBitsAgainstQuantizeTable(t *testing.T) {
	const params = 8.03e9
	for _, c := range []struct {
		l   Level
		gib float64
	}{{"q4_k_m", 4.58}, {"q4_k_s", 4.36}, {"q6_k", 6.14}, {FP16, 14.96}} {
		want := c.gib * (1 << 30) * 8 / params
		assert.InDelta(t, want, c.l.BitsPerWeight(), 0.03*want, c.l)
	}
}

func medianP90(xs []float64) (float64, float64) {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	q := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return q(0.5), q(0.9)
}

func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
