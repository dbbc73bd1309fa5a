package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
)

// moeFitPairs is the pairs the ninth rule of data/serving_prefill.json
// fits ServingMoEPromptMFU on: those of a MoE model from a source other
// than the held-out rows' (tenstorrent/tt-inference-server's pairs share
// their long runs with held-out rows).
func moeFitPairs(pairs []ratePairCase) ([]ratePairCase, error) {
	var out []ratePairCase
	for _, pc := range pairs {
		if heldOutSource(pc.pair.Source) {
			continue
		}
		m, _, err := resolveRow("serving_prefill.json", pc.pair.Setup, pc.pair.CatalogModel, pc.pair.Precision)
		if err != nil {
			return nil, err
		}
		if m.IsMoE() {
			out = append(out, pc)
		}
	}
	return out, nil
}

// servingMoEPromptFit is the ninth rule's fit: ServingMoEPromptMFU on the
// MoE pairs, then ServingPromptMFU with SGLang's request time on the
// SGLang fit rows and vLLM's request time on the vLLM fit rows at it.
type servingMoEPromptFit struct {
	moePercent int     // ServingMoEPromptMFU in hundredths
	pairs      int     // MoE pairs fitted on
	pairMedian float64 // their median |log(planned rate / measured rate)|
	sglang     servingPromptFit
	vllm       vllmPromptFit
}

// fitServingMoEPrompt fits the ninth rule's constants on cases and pairs
// (every rate pair of the file; moeFitPairs selects) starting from c, one
// round: the MoE efficiency at c's ServingPromptMFU (1 % grid, least
// squares of log(planned rate / measured rate)), then the generator's
// fits at it.
func fitServingMoEPrompt(cases []servingPrefillCase, pairs []ratePairCase, c calibration.Throughput) (servingMoEPromptFit, calibration.Throughput, error) {
	moe, err := moeFitPairs(pairs)
	if err != nil {
		return servingMoEPromptFit{}, c, err
	}
	f := servingMoEPromptFit{pairs: len(moe)}
	f.moePercent, f.pairMedian = pairGrid(moe, c, 1, servingPromptMFUMax, func(k *calibration.Throughput, v float64) { k.ServingMoEPromptMFU = v })
	c.ServingMoEPromptMFU = float64(f.moePercent) / 100
	if f.sglang, err = fitServingPrompt(cases, c); err != nil {
		return f, c, err
	}
	c = f.sglang.apply(c)
	if f.vllm, err = fitVLLMPromptRequest(cases, c); err != nil {
		return f, c, err
	}
	return f, f.vllm.apply(c), nil
}

// The ninth rule's MoE pairs are the four MoE SGLang cookbook pairs and
// pavanyellow/vllm's Qwen3.6-35B-A3B FP8: none from the held-out rows'
// sources, no dense one.
func TestServingMoEFitPairs(t *testing.T) {
	pairs, err := loadRatePairs(testData)
	require.NoError(t, err)
	moe, err := moeFitPairs(pairs)
	require.NoError(t, err)
	require.Len(t, moe, 5)
	sglang := 0
	for _, pc := range moe {
		assert.False(t, heldOutSource(pc.pair.Source), pc.pair.Setup)
		if pc.pair.Engine == engine.NameSGLang {
			sglang++
		}
	}
	assert.Equal(t, 4, sglang)
}

// The ninth rule's adoption test (2026-11-29): ServingMoEPromptMFU fitted
// on the MoE pairs of fit sources at the shipped ServingPromptMFU, then
// ServingPromptMFU and SGLang's request time refitted on the SGLang fit
// rows and vLLM's on the vLLM fit rows, one round; adopted only if the
// held-out median falls below its shipped value and neither engine's fit
// rows' median rises by more than 0.03. It fails on the last count: the
// MoE efficiency lands at 16 %, the held-out median falls (0.459 ->
// 0.391) and SGLang's barely moves (0.332 -> 0.339), but the refit takes
// ServingPromptMFU to 66 % and the three dense vLLM fit rows' median from
// 0.172 to 0.209. The form stays in the planner switched off (the shipped
// ServingMoEPromptMFU is 0, which plans every pass as before): this holds
// the outcome docs/accuracy.md reports.
func TestServingMoEPromptRuleOutcome(t *testing.T) {
	pairs, err := loadRatePairs(testData)
	require.NoError(t, err)
	cases, err := loadServingPrefill(testData)
	require.NoError(t, err)
	shipped := calibration.Fitted
	require.Zero(t, shipped.ServingMoEPromptMFU, "the ninth rule's form is off in the shipped constants")
	_, sgShipped, vShipped, err := refitRequestTimes(cases, shipped)
	require.NoError(t, err)
	f, k, err := fitServingMoEPrompt(cases, pairs, shipped)
	require.NoError(t, err)
	heldOut, shippedHeldOut := heldOutMedian(cases, k), heldOutMedian(cases, shipped)
	t.Logf("ServingMoEPromptMFU %d %% on %d MoE pairs (their median |log| %.3f); ServingPromptMFU %d %%, SGLang %d ms (fit rows' median %.3f against %.3f), vLLM %d ms (%.3f against %.3f); held-out median %.3f against %.3f",
		f.moePercent, f.pairs, f.pairMedian, f.sglang.mfuPercent, f.sglang.requestMS, f.sglang.median, sgShipped.median,
		f.vllm.requestMS, f.vllm.median, vShipped.median, heldOut, shippedHeldOut)
	for _, sc := range cases {
		if sc.row.Use == useHeldOut {
			t.Logf("    held out %s / %s: %.1f ms planned (%.1f shipped), %.1f measured", sc.row.Model, sc.row.GPU, sc.plannedMS(k), sc.plannedMS(shipped), sc.row.TTFTms)
		}
	}
	for _, pc := range pairs {
		t.Logf("    pair %s: planned rate %+.0f %% (shipped %+.0f %%)", pc.pair.Setup, (math.Exp(pc.rateLogError(k))-1)*100, (math.Exp(pc.rateLogError(shipped))-1)*100)
	}
	adopted := heldOut < shippedHeldOut && f.sglang.median <= sgShipped.median+0.03 && f.vllm.median <= vShipped.median+0.03
	assert.False(t, adopted, "the ninth rule's test now passes: adopt ServingMoEPromptMFU and rewrite the outcome")
	assert.Equal(t, 16, f.moePercent, "the outcome docs/accuracy.md reports")
	assert.Equal(t, 66, f.sglang.mfuPercent, "the outcome docs/accuracy.md reports")
	assert.Less(t, heldOut, shippedHeldOut, "the held-out rows improve under the form")
	assert.Greater(t, f.vllm.median, vShipped.median+0.03, "what fails: the vLLM fit rows")

	// A second round moves nothing (the rule's one round is its fixed point).
	f2, _, err := fitServingMoEPrompt(cases, pairs, k)
	require.NoError(t, err)
	assert.Equal(t, f.moePercent, f2.moePercent)
	assert.Equal(t, f.sglang.mfuPercent, f2.sglang.mfuPercent)

	// For information, not a test of the rule (chosen after the outcome
	// above was seen): ServingPromptMFU held at the shipped 62 %, only the
	// request times refitted at the rule's 16 %.
	info := shipped
	info.ServingMoEPromptMFU = float64(f.moePercent) / 100
	info, sg, v, err := refitRequestTimes(cases, info)
	require.NoError(t, err)
	t.Logf("dense efficiency held (information): SGLang %d ms (%.3f), vLLM %d ms (%.3f), held-out %.3f", sg.requestMS, sg.median, v.requestMS, v.median, heldOutMedian(cases, info))
	assert.InDelta(t, 0.402, heldOutMedian(cases, info), 0.0005, "the figure docs/accuracy.md reports")
}
