package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
)

// servingPrefillInput is the input length the rule of
// data/serving_prefill.json replays: one row per setup, at the 2,048
// tokens of the Vultr cookbook's B200 rows.
const servingPrefillInput = 2048

// servingPrefillHeldOutLogCeiling bounds the median |log(planned /
// measured)| of the held-out rows: 0.56, the figure this test printed once
// the prompt constants were fitted on the SGLang fit rows (0.549, rounded
// up); main's llama.cpp-pass figure gave 1.00 (planned 2.7 times the
// measured time), the unfitted serving model 1.13 (three times too fast).
// Issue 22 asks for a median error of 20 %: not met.
const servingPrefillHeldOutLogCeiling = 0.56

// TestServingPrefillHeldOut replays each held-out row of
// data/serving_prefill.json (the vLLM rows) through the planner (its
// prompt at the plan's prefill tokens/s, on the GPU record and
// tensor-parallel degree the row names, under the serving prompt model,
// servingPromptSeconds of internal/plan) under the shipped constants, none
// fitted on these rows, and compares the prompt time with the measured
// time to first token. vLLM emits the first token from the prompt's
// forward pass, so no decode step is added. Every row must get a prefill
// figure: the NVIDIA B200 rows need the record's tensor peaks.
func TestServingPrefillHeldOut(t *testing.T) {
	cases, err := loadServingPrefill(testData)
	require.NoError(t, err)
	setups := map[string]bool{}
	var logs []float64
	for _, sc := range cases {
		r := sc.row
		name := r.Model + " / " + r.GPU
		if r.Use == useFit {
			assert.Equal(t, "sglang", r.Engine, "%s: the fit rows are the SGLang cookbook's", name)
			continue
		}
		assert.Equal(t, "vllm", r.Engine, name)
		assert.Equal(t, useHeldOut, r.Use, "%s: no constant is fitted on these rows", name)
		assert.Equal(t, servingPrefillInput, r.Input, name)
		setup := r.CatalogModel + "|" + r.Spec + "|" + r.Precision
		assert.False(t, setups[setup], "%s: one row per setup", name)
		setups[setup] = true
		ms := sc.plannedMS(calibration.Fitted)
		if !assert.Positive(t, ms, "%s: no prefill figure (a tensor peak missing from %s?)", name, r.Spec) {
			continue
		}
		logs = append(logs, math.Abs(math.Log(ms/r.TTFTms)))
		t.Logf("%s, TP %d, %d tokens: planned %.1f ms, measured TTFT %.1f ms (%+.0f %%)", name, r.TP, r.Input, ms, r.TTFTms, (ms/r.TTFTms-1)*100)
	}
	require.Len(t, logs, 5)
	median := quantile(logs, 0.5)
	t.Logf("%d held-out rows, median |log(planned/measured)| %.3f", len(logs), median)
	assert.LessOrEqual(t, median, servingPrefillHeldOutLogCeiling)
}

// The fit rows of data/serving_prefill.json are the SGLang cookbook's
// concurrency-1 runs, and the shipped constants are the fit's.
func TestServingPromptFitRows(t *testing.T) {
	cases, err := loadServingPrefill(testData)
	require.NoError(t, err)
	n := 0
	for _, sc := range cases {
		if sc.row.Use == useFit {
			n++
			assert.Contains(t, sc.row.Source, "github.com/sgl-project/sgl-cookbook/blob/7b5bd9c05e3d86da5161ac2be9b91c19a34bf49d/")
			assert.Equal(t, 1, sc.row.Concurrency)
		}
	}
	assert.Equal(t, 11, n)
	f, err := fitServingPrompt(cases, calibration.Fitted)
	require.NoError(t, err)
	assert.InDelta(t, calibration.Fitted.ServingPromptMFU, float64(f.mfuPercent)/100, 1e-9)
	assert.InDelta(t, calibration.Fitted.ServingPromptRequestSeconds, float64(f.requestMS)/1000, 1e-9)
	assert.Less(t, f.mfuPercent, servingPromptMFUMax, "the efficiency is not pinned at the grid's edge")
	assert.Positive(t, f.requestMS)
}
