package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
)

// servingRatePairLogCeiling bounds the median |log(planned rate / measured
// rate)| of the rate pairs of data/serving_prefill.json (the seventh rule)
// under the shipped constants: 0.30. It was 0.275 when the pairs were
// first replayed (2026-11-29, issue 22): the planner's rate 6 % slower to
// 32 % faster on four pairs, 2.4 times faster on Qwen3-14B on the A100,
// 18 and 33 times faster on the two MoE pairs (it charges a 15-token pass
// a read of every expert, so it plans their short runs about as long as
// their long ones).
const servingRatePairLogCeiling = 0.30

// servingRatePairs is the number of pairs the seventh rule takes: the six
// tenstorrent/tt-inference-server setups of the held-out rows and
// pavanyellow/vllm's Qwen3.6-35B-A3B FP8.
const servingRatePairs = 7

// TestServingRatePairs replays the rate pairs of data/serving_prefill.json:
// two runs of one setup, each replayed as the held-out rows are (the mean
// over its timed requests of each one's uncached tokens, request time
// included), the difference of the planned times set against the
// difference of the measured ones over the same difference of uncached
// tokens: the prompt rate with the request time cancelled.
func TestServingRatePairs(t *testing.T) {
	pairs, err := loadRatePairs(testData)
	require.NoError(t, err)
	require.Len(t, pairs, servingRatePairs)
	var logs []float64
	for _, pc := range pairs {
		name := pc.pair.Setup
		require.Positive(t, pc.measuredMS(), "%s: the long run measured longer than the short", name)
		require.Positive(t, pc.plannedMS(calibration.Fitted), "%s: the long run planned longer than the short", name)
		e := pc.rateLogError(calibration.Fitted)
		logs = append(logs, math.Abs(e))
		t.Logf("%s: %.0f more uncached tokens a request (%d -> %d input): measured +%.1f ms, %.0f tokens/s; planned +%.1f ms, %.0f tokens/s (planned rate %+.0f %%); runs planned %.1f and %.1f ms, measured %.1f and %.1f",
			name, pc.uncachedTokens(), pc.short.row.Input, pc.long.row.Input, pc.measuredMS(), pc.measuredRate(),
			pc.plannedMS(calibration.Fitted), pc.plannedRate(calibration.Fitted), (math.Exp(e)-1)*100,
			pc.short.plannedMS(calibration.Fitted), pc.long.plannedMS(calibration.Fitted), pc.short.row.TTFTms, pc.long.row.TTFTms)
	}
	median := quantile(logs, 0.5)
	t.Logf("%d pairs, median |log(planned rate / measured rate)| %.3f", len(logs), median)
	assert.LessOrEqual(t, median, servingRatePairLogCeiling)
}

// The tenstorrent/tt-inference-server pairs are the setups of the held-out
// rows, their long run the held-out row itself (the same TTFT and cached
// prefixes), their short run every request of which computes its last
// block only.
func TestServingRatePairsShareTheHeldOutRuns(t *testing.T) {
	pairs, err := loadRatePairs(testData)
	require.NoError(t, err)
	cases, err := loadServingPrefill(testData)
	require.NoError(t, err)
	n := 0
	for _, pc := range pairs {
		if !heldOutSource(pc.pair.Source) {
			continue
		}
		n++
		var row *servingPrefillRow
		for _, sc := range cases {
			if sc.row.Use == useHeldOut && sc.row.Source == pc.pair.Source && sc.row.CatalogModel == pc.pair.CatalogModel && sc.row.Spec == pc.pair.Spec {
				row = &sc.row
			}
		}
		if !assert.NotNil(t, row, "%s: no held-out row of this setup", pc.pair.Setup) {
			continue
		}
		assert.Equal(t, row.TTFTms, pc.long.row.TTFTms, pc.pair.Setup)
		assert.Equal(t, row.CachedPrefix, pc.long.row.CachedPrefix, pc.pair.Setup)
		assert.Equal(t, row.TP, pc.pair.TP, pc.pair.Setup)
		for _, rq := range pc.short.requests {
			assert.LessOrEqual(t, rq.uncached, vllmCacheBlock, "%s: a short-run request computes its last block", pc.pair.Setup)
		}
	}
	assert.Equal(t, 6, n)
}

// The seventh rule's adoption test (2026-11-29): a vLLM-own prompt
// efficiency fitted on the pairs, vLLM's request time refitted on its fit
// rows at it, is adopted only if the held-out rows' median falls below its
// value at the shipped constants and the vLLM fit rows' median rises by at
// most 0.03 (SGLang's is untouched by a vLLM-own efficiency). It fails:
// the fit lands at 27 % of the peak (the MoE pairs and the Qwen3-14B pair
// pull it down), the held-out median rises and so does the vLLM fit rows'.
// Nothing is changed; this holds the outcome docs/accuracy.md reports.
func TestServingRatePairRuleOutcome(t *testing.T) {
	pairs, err := loadRatePairs(testData)
	require.NoError(t, err)
	cases, err := loadServingPrefill(testData)
	require.NoError(t, err)
	shipped := calibration.Fitted
	shippedHeldOut := heldOutMedian(cases, shipped)
	shippedFit, err := fitVLLMPromptRequest(cases, shipped)
	require.NoError(t, err)

	mfu, pairMedian := vllmPairEfficiency(pairs, shipped)
	k := shipped
	k.ServingPromptMFU = float64(mfu) / 100
	refit, err := fitVLLMPromptRequest(cases, k)
	require.NoError(t, err)
	k = refit.apply(k)
	heldOut := heldOutMedian(cases, k)
	t.Logf("candidate vLLM efficiency %d %% (pairs' median %.3f); vLLM request time %d ms (fit rows' median %.3f against %.3f at %d ms); held-out median %.3f against %.3f",
		mfu, pairMedian, refit.requestMS, refit.median, shippedFit.median, shippedFit.requestMS, heldOut, shippedHeldOut)
	adopted := heldOut < shippedHeldOut && refit.median <= shippedFit.median+0.03
	assert.False(t, adopted, "the seventh rule's test now passes: adopt the efficiency and rewrite the outcome")
	assert.Equal(t, 27, mfu, "the outcome docs/accuracy.md reports")
	assert.Less(t, mfu, int(math.Round(shipped.ServingPromptMFU*100)), "the pairs ask a lower efficiency than the SGLang rows'")

	// For information, not a test of the rule (the selection was made
	// after the pairs above had been seen): the dense pairs alone, no
	// routed experts.
	var dense []ratePairCase
	for _, pc := range pairs {
		m, _, err := resolveRow("serving_prefill.json", pc.pair.Setup, pc.pair.CatalogModel, pc.pair.Precision)
		require.NoError(t, err)
		if !m.IsMoE() {
			dense = append(dense, pc)
		}
	}
	require.Len(t, dense, 4)
	denseMFU, denseMedian := vllmPairEfficiency(dense, shipped)
	k = shipped
	k.ServingPromptMFU = float64(denseMFU) / 100
	denseRefit, err := fitVLLMPromptRequest(cases, k)
	require.NoError(t, err)
	k = denseRefit.apply(k)
	t.Logf("dense pairs only (information): %d %% (pairs' median %.3f); vLLM request time %d ms (fit rows' median %.3f); held-out median %.3f",
		denseMFU, denseMedian, denseRefit.requestMS, denseRefit.median, heldOutMedian(cases, k))
	assert.Equal(t, 46, denseMFU, "the figure docs/accuracy.md reports")
}
