package main

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
)

// TestPrefillHeldOutQuotesTheReplays recomputes plan.PrefillHeldOut, which
// a plan's prefill_validated_on quotes and decides by: every held-out
// prompt row of today's builds (the held-out pp512 rows of
// data/prefill_today.json, every pp512 record of
// data/h200-speed-34af94cd at avg_ts, and every pp512 row of
// data/apple_today.json) and every held_out row of data/host_harness.json,
// replayed under the
// shipped constants and keyed by the cell its replay falls in
// (Replay.PrefillCell, the function plans use), with each cell's row count
// and median |error| rounded to 0.001. A row no cell takes fails: it
// would vouch for no plan.
func TestPrefillHeldOutQuotesTheReplays(t *testing.T) {
	type heldRow struct {
		name     string
		replay   *plan.Replay
		measured float64
	}
	var rows []heldRow
	today, err := loadPrefillToday(testData)
	require.NoError(t, err)
	for _, sc := range today {
		if sc.use == useHeldOut {
			rows = append(rows, heldRow{sc.row.Hardware + " " + sc.row.Model, sc.replay, sc.row.PP})
		}
	}
	h200, err := loadBenchDir(testData, benchHeldOutDir)
	require.NoError(t, err)
	for _, sc := range h200 {
		if sc.row.PP > 0 {
			rows = append(rows, heldRow{sc.row.Hardware + " " + sc.row.Model + " " + sc.row.Quant, sc.replay, sc.row.PP})
		}
	}
	apple, err := loadAppleTodayPrefill(testData)
	require.NoError(t, err)
	for _, sc := range apple {
		require.Equal(t, useHeldOut, sc.use)
		rows = append(rows, heldRow{sc.row.Hardware + " " + sc.row.Model + " " + sc.row.Quant, sc.replay, sc.row.PP})
	}
	harness, err := loadHarness(testData)
	require.NoError(t, err)
	for _, hc := range harness {
		if hc.row.Use == useHeldOut {
			rows = append(rows, heldRow{hc.row.Model + " " + hc.row.Quant + " (CPU)", hc.replay, hc.row.prefillRate()})
		}
	}
	errs := map[plan.PrefillCell][]float64{}
	for _, r := range rows {
		cell, ok := r.replay.PrefillCell()
		require.True(t, ok, "%s: a held-out row no cell takes", r.name)
		p := r.replay.Prefill(calibration.Fitted)
		require.Positive(t, p, r.name)
		errs[cell] = append(errs[cell], math.Abs(p/r.measured-1))
		t.Logf("%-60s %v %+.1f%%", r.name, cell, 100*(p/r.measured-1))
	}
	got := map[plan.PrefillCell]plan.PrefillCheck{}
	for cell, e := range errs {
		got[cell] = plan.PrefillCheck{Rows: len(e), Median: math.Round(1000*quantile(e, 0.5)) / 1000}
	}
	assert.Equal(t, got, plan.PrefillHeldOut)
}

// TestServingPromptQuoteIsTheReplay checks the figures
// calibration.ServingPromptHeldOut quotes in a vLLM plan's prefill_validated_on:
// the held-out vLLM rows of data/serving_prefill.json and the median
// |log(planned/measured)| of TestServingPrefillHeldOut, with its factor.
func TestServingPromptQuoteIsTheReplay(t *testing.T) {
	cases, err := loadServingPrefill(testData)
	require.NoError(t, err)
	var logs []float64
	for _, sc := range cases {
		if sc.row.Use != useHeldOut {
			continue
		}
		ms := sc.plannedMS(calibration.Fitted)
		require.Positive(t, ms, sc.row.Model)
		logs = append(logs, math.Abs(math.Log(ms/sc.row.TTFTms)))
	}
	m := quantile(logs, 0.5)
	want := fmt.Sprintf("%d held-out vLLM rows, median |log(planned/measured)| %.3f (a factor of %.2f)", len(logs), m, math.Exp(m))
	assert.Equal(t, want, calibration.ServingPromptHeldOut)
	assert.Greater(t, math.Exp(m)-1, plan.PrefillBound, "the quote says the vLLM prompt rows miss issue 22's bound")
}
