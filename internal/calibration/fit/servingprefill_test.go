package main

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// servingPrefillRow is one row of data/serving_prefill.json: the time to
// first token of a single-request vLLM run with a stated input length.
type servingPrefillRow struct {
	Engine       string  `json:"engine"`
	Model        string  `json:"model"`
	Precision    string  `json:"precision"`
	GPU          string  `json:"gpu"`
	TP           int     `json:"tp"`
	Input        int     `json:"input_tokens"`
	Output       int     `json:"output_tokens"`
	Concurrency  int     `json:"concurrency"`
	TTFTms       float64 `json:"ttft_ms"`
	Replayed     bool    `json:"replayed"`
	Use          string  `json:"use"`
	WhyNot       string  `json:"why_not"`
	Spec         string  `json:"spec"`
	CatalogModel string  `json:"catalog_model"`
	Quote        string  `json:"quote"`
	Source       string  `json:"source"`
}

// servingPrefillInput is the input length the rule of
// data/serving_prefill.json replays: one row per setup, at the 2,048
// tokens of the Vultr cookbook's B200 rows.
const servingPrefillInput = 2048

// servingPrefillMedianCeiling bounds the median error of the replayed rows:
// the figure this test printed once vLLM's prompts ran the engine's own
// prompt model (0.68: passes of up to --max-num-batched-tokens, matmuls at
// the cuBLAS fraction PrefillMFU fitted on llama.cpp's prompt passes, no
// per-layer time, no dequantized copy; docs/accuracy.md "Serving
// prefill"), rounded up. Issue 22 asks for 0.20: not met.
const servingPrefillMedianCeiling = 0.70

// TestServingPrefillHeldOut replays each row of data/serving_prefill.json
// through the planner (its prompt at the plan's prefill tokens/s, on the
// GPU record and tensor-parallel degree the row names, under vLLM's prompt
// model, servingPromptSeconds of internal/plan) under the shipped
// constants, none fitted on these rows, and compares the prompt
// time with the measured time to first token. vLLM emits the first token
// from the prompt's forward pass, so no decode step is added. Every row
// must get a prefill figure: the NVIDIA B200 rows need the record's tensor
// peaks.
func TestServingPrefillHeldOut(t *testing.T) {
	rows, err := readRows[servingPrefillRow](testData, "serving_prefill.json")
	require.NoError(t, err)
	setups := map[string]bool{}
	var errs []float64
	for _, r := range rows {
		name := r.Model + " / " + r.GPU
		assert.True(t, strings.HasPrefix(r.Source, "https://"), name)
		assert.NotEmpty(t, r.Quote, name)
		assert.Positive(t, r.TTFTms, name)
		if !r.Replayed {
			assert.NotEmpty(t, r.WhyNot, "%s: a row not replayed says why", name)
			continue
		}
		assert.Equal(t, "vllm", r.Engine, name)
		assert.Equal(t, 1, r.Concurrency, name)
		assert.Equal(t, useHeldOut, r.Use, "%s: no constant is fitted on these rows", name)
		assert.Equal(t, servingPrefillInput, r.Input, name)
		setup := r.CatalogModel + "|" + r.Spec + "|" + r.Precision
		assert.False(t, setups[setup], "%s: one row per setup", name)
		setups[setup] = true

		s, ok := specs.ByName(r.Spec)
		require.True(t, ok, name)
		m, l, err := resolveRow("serving_prefill.json", name, r.CatalogModel, r.Precision)
		require.NoError(t, err)
		rp := plan.NewServingPromptReplay(m, l, s, r.TP, r.Input, r.Input+r.Output/2).OnEngine(r.Engine)
		prefill := rp.Prefill(calibration.Fitted)
		if !assert.Positive(t, prefill, "%s: no prefill figure (a tensor peak missing from %s?)", name, r.Spec) {
			continue
		}
		ms := float64(r.Input) / prefill * 1000
		e := math.Abs(ms-r.TTFTms) / r.TTFTms
		errs = append(errs, e)
		t.Logf("%s, TP %d, %d tokens: planned %.1f ms, measured TTFT %.1f ms (%+.0f %%)", name, r.TP, r.Input, ms, r.TTFTms, (ms/r.TTFTms-1)*100)
	}
	require.NotEmpty(t, errs)
	median := quantile(errs, 0.5)
	t.Logf("%d rows, median error %.0f %%", len(errs), median*100)
	assert.LessOrEqual(t, median, servingPrefillMedianCeiling)
}
