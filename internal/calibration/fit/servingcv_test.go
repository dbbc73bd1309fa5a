package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
)

// cvOf is a servingCV under terms t whose out-of-sample |errors| are errs.
func cvOf(t servingTerms, errs ...float64) servingCV {
	return servingCV{terms: t, errors: errs}
}

// TestKeepTermNeedsTheDistributionToImprove checks keepTerm on error
// distributions of ten rows: a term is kept only where the median falls
// and the p90 does not rise.
func TestKeepTermNeedsTheDistributionToImprove(t *testing.T) {
	without := cvOf(servingTerms{}, 0.02, 0.04, 0.06, 0.08, 0.10, 0.12, 0.14, 0.16, 0.30, 0.50)
	require.InDelta(t, 0.11, without.median(), 1e-12)
	require.InDelta(t, 0.32, without.p90(), 1e-12)
	for _, c := range []struct {
		name string
		with servingCV
		keep bool
	}{
		{"both lower", cvOf(servingTerms{}, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.20, 0.40), true},
		{"median lower, p90 the same", cvOf(servingTerms{}, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.30, 0.50), true},
		{"median lower, p90 higher", cvOf(servingTerms{}, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.40, 0.50), false},
		{"median the same, p90 lower", cvOf(servingTerms{}, 0.02, 0.04, 0.06, 0.08, 0.10, 0.12, 0.14, 0.16, 0.20, 0.40), false},
		{"both higher", cvOf(servingTerms{}, 0.04, 0.06, 0.08, 0.10, 0.12, 0.14, 0.16, 0.18, 0.40, 0.60), false},
	} {
		assert.Equal(t, c.keep, keepTerm(c.with, without), "%s: median %.3f, p90 %.3f", c.name, c.with.median(), c.with.p90())
	}
}

// TestChooseTermsDropsATermThatRaisesTheP90 is a small selection problem:
// the per-part time lowers the median and the p90 (kept); the indexer term
// lowers the median from 0.12 to 0.11 but raises the p90 from 0.22 to 0.32
// (dropped, which the median alone would have kept); the per-part time by
// generation, tried on top of the per-part time without the indexer,
// lowers both (kept). Each term is tried on top of the kept ones only.
func TestChooseTermsDropsATermThatRaisesTheP90(t *testing.T) {
	parts := servingTerms{parts: true}
	byTerms := map[servingTerms][]float64{
		{}:                              {0.05, 0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40, 0.50, 0.60},
		parts:                           {0.02, 0.04, 0.06, 0.10, 0.12, 0.12, 0.14, 0.16, 0.20, 0.40},
		{parts: true, indexer: true}:    {0.02, 0.04, 0.06, 0.08, 0.10, 0.12, 0.14, 0.16, 0.30, 0.50},
		{parts: true, generation: true}: {0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.15, 0.30},
	}
	cv := func(ts servingTerms) servingCV {
		errs, ok := byTerms[ts]
		require.True(t, ok, "terms %+v are not tried on top of the kept ones", ts)
		return cvOf(ts, errs...)
	}
	tried, kept, chosen := chooseTerms(cv)
	require.Len(t, tried, len(servingTermOrder)+1)
	assert.Equal(t, []bool{true, true, false, true}, kept)
	assert.Equal(t, servingTerms{parts: true, generation: true}, chosen.terms)
	assert.Less(t, tried[2].median(), tried[1].median(), "the indexer lowers the median: the median alone would keep it")
	assert.Greater(t, tried[2].p90(), tried[1].p90())
}

// TestServingVariantsFindsTheTermsOfSyntheticRows runs the whole
// selection (fits and leave-one-source-out cross-validation) on twelve
// synthetic rows of six sources whose speeds are made from known constants
// under the per-part time by GPU generation, on hybrid and transformer
// models, MoE and dense, one GPU and tensor parallel; no row has an
// indexer. The rule must keep the per-part and generation terms, drop the
// indexer term (it changes nothing, so the median does not fall), and the
// out-of-sample errors of the chosen terms must be near 0.
func TestServingVariantsFindsTheTermsOfSyntheticRows(t *testing.T) {
	truth := servingTerms{parts: true, generation: true}
	want := servingConstants{1 / 0.85, 0, 60, 35, 3, 20, 0, 0}
	type shape struct {
		layers, parts, moe int
		stream             float64
		later              bool
		tp                 int
	}
	shapes := []shape{
		{28, 56, 0, 0.0012, false, 1}, {40, 80, 0, 0.0060, false, 1},
		{52, 29, 23, 0.0015, true, 2}, {80, 160, 0, 0.0110, true, 4},
		{36, 72, 36, 0.0020, true, 8}, {80, 120, 0, 0.0130, true, 1},
		{48, 96, 48, 0.0025, false, 1}, {32, 64, 0, 0.0030, true, 1},
		{64, 100, 0, 0.0090, false, 2}, {126, 252, 0, 0.0080, true, 8},
		{24, 30, 12, 0.0010, false, 1}, {60, 90, 30, 0.0050, true, 4},
	}
	var cases []servingCase
	for i, s := range shapes {
		sc := servingCase{
			row: servingRow{Engine: "vllm", Source: fmt.Sprintf("https://example.org/source/%d", i/2), CatalogModel: fmt.Sprintf("model-%d", i),
				Precision: "bf16", Spec: "gpu", TP: s.tp},
			layers: s.layers, moeLayers: s.moe, blocks: plan.ServingBlocks{Parts: s.parts, MoE: s.moe},
			later: s.later, stream: s.stream,
		}
		sc.row.TokensPerS = 1 / want.seconds(sc.features(truth))
		cases = append(cases, sc)
	}
	tried, kept, chosen := servingVariants(cases)
	for i, cv := range tried {
		t.Logf("variant %d %+v: median %.4f, p90 %.4f, kept %v", i, cv.terms, cv.median(), cv.p90(), kept[i])
	}
	assert.Equal(t, 6, chosen.groups)
	assert.Equal(t, []bool{true, true, false, true}, kept)
	assert.Equal(t, truth, chosen.terms)
	assert.Less(t, chosen.p90(), 0.005)
	got := fitConstants(cases, chosen.terms)
	assert.InDelta(t, 0.85, 1/got[colStream], 0.005)
	for j := colStep; j < servingCols; j++ {
		assert.InDelta(t, want[j], got[j], 1, "constant %d", j)
	}
}
