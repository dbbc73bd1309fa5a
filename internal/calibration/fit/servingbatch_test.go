package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
)

// TestServingBatchRule holds rule 6 of data/serving_concurrency.json: the
// per-sequence term is fitted on the 14 rows marked "fit" (vLLM
// benchmark_latency on 8 MI300X) and no others, the fit gives the shipped
// constants, and it is in the planner only because on the 32 held-out rows
// both the median and the p90 of |error| fell against the same replay
// without it; no batch-1 replay moves.
func TestServingBatchRule(t *testing.T) {
	_, cases, err := loadServingConcurrency(testData)
	require.NoError(t, err)
	c := calibration.Fitted
	f, err := fitServingBatch(cases, c)
	require.NoError(t, err)
	require.Len(t, f.fit, 14)
	require.Len(t, f.held, 32)
	for _, sc := range f.fit {
		assert.Equal(t, "github.com/ROCm/vllm", concurrencySource(sc.row.Source), sc.row.Model)
		assert.Equal(t, "latency", sc.row.Figure, "%s: a benchmark_latency row", sc.row.Model)
	}
	assert.Equal(t, servingBatchSecondsLiteral(f.layerCentiUS), servingBatchSecondsLiteral(int(c.ServingBatchLayerSeconds*1e8+0.5)), "go generate ./internal/calibration")
	assert.Equal(t, hundredths(f.mfuPercent), hundredths(int(c.ServingBatchMFU*100+0.5)), "go generate ./internal/calibration")

	none := withServingBatch(c, 0, 0)
	t.Log(servingBatchOutcome(f, c))
	m0, p0 := servingBatchErrors(f.held, none)
	m1, p1 := servingBatchErrors(f.held, c)
	assert.Less(t, m1, m0, "held-out median")
	assert.Less(t, p1, p0, "held-out p90")
	for _, sc := range cases {
		assert.Equal(t, sc.plannedBatch1MS(none), sc.plannedBatch1MS(c), "%s at one sequence", sc.row.Model)
	}
}
