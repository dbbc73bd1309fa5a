package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
)

// servingRatePairLogCeiling bounds the median |log(planned rate / measured
// rate)| of the rate pairs of data/serving_prefill.json (the seventh rule)
// under the shipped constants: 0.30. It was 0.275 when the pairs were
// first replayed (2026-11-29, issue 22): the planner's rate 6 % slower to
// 32 % faster on four pairs, 2.4 times faster on Qwen3-14B on the A100,
// 18 and 33 times faster on the two MoE pairs (it charges a 15-token pass
// a read of every expert, so it plans their short runs about as long as
// their long ones).
//
// For the SGLang pairs (the eighth rule): 1.65. It was 1.604 when they
// were first replayed (2026-11-29): the four MoE pairs' planned rates 2.4
// to 8.4 times the measured (the read of every expert that the planner
// charges the 610-token run is most of its pass, so the 4,194-token run
// adds little), Llama-3.1-70B on 8 A100 half the measured (whose rate,
// 109 % of the dense peak on the mean prompt, says the median TTFT is not
// that of the mean prompt).
var servingRatePairLogCeiling = map[string]float64{engine.NameVLLM: 0.30, engine.NameSGLang: 1.65}

// The pairs the rules take: the seventh rule's vLLM pairs, the six
// tenstorrent/tt-inference-server setups of the held-out rows and
// pavanyellow/vllm's Qwen3.6-35B-A3B FP8; the eighth rule's SGLang pairs,
// the SGLang cookbook's fit rows whose page prints an 8,000-token
// concurrency-1 run.
var servingRatePairs = map[string]int{engine.NameVLLM: 7, engine.NameSGLang: 5}

// TestServingRatePairs replays the rate pairs of data/serving_prefill.json:
// two runs of one setup, each replayed as the held-out rows are (the mean
// over its timed requests of each one's uncached tokens, request time
// included), the difference of the planned times set against the
// difference of the measured ones over the same difference of uncached
// tokens: the prompt rate with the request time cancelled.
func TestServingRatePairs(t *testing.T) {
	all, err := loadRatePairs(testData)
	require.NoError(t, err)
	n := 0
	for _, e := range []string{engine.NameVLLM, engine.NameSGLang} {
		pairs := ratePairsOf(all, e)
		require.Len(t, pairs, servingRatePairs[e], e)
		n += len(pairs)
		median := logRatePairs(t, pairs)
		t.Logf("%s: %d pairs, median |log(planned rate / measured rate)| %.3f", e, len(pairs), median)
		assert.LessOrEqual(t, median, servingRatePairLogCeiling[e], e)
	}
	assert.Len(t, all, n, "every pair is of vLLM or SGLang")
}

// logRatePairs prints each pair of pairs under the shipped constants and
// returns the median |log(planned rate / measured rate)|.
func logRatePairs(t *testing.T, pairs []ratePairCase) float64 {
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
	return quantile(logs, 0.5)
}

// The tenstorrent/tt-inference-server pairs are the setups of the held-out
// rows, their long run the held-out row itself (the same TTFT and cached
// prefixes), their short run every request of which computes its last
// block only.
func TestServingRatePairsShareTheHeldOutRuns(t *testing.T) {
	all, err := loadRatePairs(testData)
	require.NoError(t, err)
	pairs := ratePairsOf(all, engine.NameVLLM)
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
	all, err := loadRatePairs(testData)
	require.NoError(t, err)
	pairs := ratePairsOf(all, engine.NameVLLM)
	cases, err := loadServingPrefill(testData)
	require.NoError(t, err)
	shipped := calibration.Fitted
	shippedHeldOut := heldOutMedian(cases, shipped)
	shippedFit, err := fitVLLMPromptRequest(cases, shipped)
	require.NoError(t, err)

	mfu, pairMedian := pairEfficiency(pairs, shipped)
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
	denseMFU, denseMedian := pairEfficiency(dense, shipped)
	k = shipped
	k.ServingPromptMFU = float64(denseMFU) / 100
	denseRefit, err := fitVLLMPromptRequest(cases, k)
	require.NoError(t, err)
	k = denseRefit.apply(k)
	t.Logf("dense pairs only (information): %d %% (pairs' median %.3f); vLLM request time %d ms (fit rows' median %.3f); held-out median %.3f",
		denseMFU, denseMedian, denseRefit.requestMS, denseRefit.median, heldOutMedian(cases, k))
	assert.Equal(t, 46, denseMFU, "the figure docs/accuracy.md reports")
}

// The eighth rule's adoption test (2026-11-29): ServingPromptMFU refitted
// on the SGLang pairs, both engines' request times refitted on their fit
// rows at it, adopted only if the held-out median falls below its value at
// the shipped constants and neither engine's fit rows' median rises by
// more than 0.03. It fails: the refit lands at 29 % (the MoE pairs, whose
// short runs the planner charges a read of every expert, ask a slow
// rate), every median rises. Nothing is changed; this holds the outcome
// docs/accuracy.md reports.
func TestServingSGLangRatePairRuleOutcome(t *testing.T) {
	all, err := loadRatePairs(testData)
	require.NoError(t, err)
	pairs := ratePairsOf(all, engine.NameSGLang)
	cases, err := loadServingPrefill(testData)
	require.NoError(t, err)
	shipped := calibration.Fitted
	_, sgShipped, vShipped, err := refitRequestTimes(cases, shipped)
	require.NoError(t, err)
	assert.InDelta(t, shipped.ServingPromptRequestSeconds, float64(sgShipped.requestMS)/1000, 1e-9, "the refit at the shipped efficiency is the shipped request time")
	assert.InDelta(t, shipped.VLLMPromptRequestSeconds, float64(vShipped.requestMS)/1000, 1e-9)

	mfu, pairMedian := pairEfficiency(pairs, shipped)
	k := shipped
	k.ServingPromptMFU = float64(mfu) / 100
	k, sg, v, err := refitRequestTimes(cases, k)
	require.NoError(t, err)
	heldOut, shippedHeldOut := heldOutMedian(cases, k), heldOutMedian(cases, shipped)
	t.Logf("candidate ServingPromptMFU %d %% (pairs' median %.3f); SGLang request time %d ms (fit rows' median %.3f against %.3f), vLLM %d ms (%.3f against %.3f); held-out median %.3f against %.3f",
		mfu, pairMedian, sg.requestMS, sg.median, sgShipped.median, v.requestMS, v.median, vShipped.median, heldOut, shippedHeldOut)
	for _, sc := range cases {
		if sc.row.Use == useHeldOut {
			t.Logf("    %s / %s: %.1f ms planned (%.1f shipped), %.1f measured", sc.row.Model, sc.row.GPU, sc.plannedMS(k), sc.plannedMS(shipped), sc.row.TTFTms)
		}
	}
	adopted := heldOut < shippedHeldOut && sg.median <= sgShipped.median+0.03 && v.median <= vShipped.median+0.03
	assert.False(t, adopted, "the eighth rule's test now passes: adopt the efficiency and rewrite the outcome")
	assert.Equal(t, 29, mfu, "the outcome docs/accuracy.md reports")
}
