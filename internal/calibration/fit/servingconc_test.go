package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
)

// The ratchet on the concurrency replay (data/serving_concurrency.json),
// set at what TestServingConcurrencyReplay printed under the shipped
// constants (nothing fitted on these rows), rounded up to the next point:
// the median (34.5 %) and p90 (140 %) of |measured ms / planned ms - 1|,
// the per-sequence decode rate's error. First replayed without the MoE
// expert reads at concurrency above 1 (costs.batchExpertReads; point 5 of
// the file's description): 69.9 % and 298 % (the 23 MoE rows 197 % and
// 386 %, now 65.8 % and 247 %). Not a target: the planned step still grows
// less with the concurrency than the measured one (docs/accuracy.md,
// "Serving engines at concurrency above 1").
const (
	servingConcurrencyMedianCeiling = 0.35
	servingConcurrencyP90Ceiling    = 1.41
)

// TestServingConcurrencyReplay replays every row of
// data/serving_concurrency.json through the planner (a plan of the row's
// setup with batch_size C at the row's context) under the shipped
// constants and compares the planned per-sequence time per token, the
// step time, with the measured TPOT; it prints the table of
// docs/accuracy.md and holds the median and p90 to the ratchet.
func TestServingConcurrencyReplay(t *testing.T) {
	rows, cases, err := loadServingConcurrency(testData)
	require.NoError(t, err)
	require.Len(t, cases, len(rows), "every row is replayed (the file's rule, point 3)")
	c := calibration.Fitted
	for _, sc := range cases {
		require.Positive(t, sc.plannedMS(c), "%s / %s at %d: no decode figure", sc.row.Model, sc.row.GPU, sc.row.Concurrency)
	}
	t.Log("\n" + servingConcurrencyTable(cases, c))
	sources := map[string]bool{}
	for _, sc := range cases {
		sources[concurrencySource(sc.row.Source)] = true
	}
	errs, _ := concurrencyErrors(cases, c)
	assert.GreaterOrEqual(t, len(sources), 3)
	assert.GreaterOrEqual(t, len(errs), 10)
	assert.LessOrEqual(t, quantile(errs, 0.5), servingConcurrencyMedianCeiling)
	assert.LessOrEqual(t, quantile(errs, 0.9), servingConcurrencyP90Ceiling)
}

// concurrencyCheck is the text plan.VLLMConcurrencyCheck and
// plan.SGLangConcurrencyCheck quote for the cases of one engine: rows,
// sources, the concurrency range and the median and p90 of the error.
func concurrencyCheck(cases []servingConcurrencyCase, c calibration.Throughput) string {
	sources := map[string]bool{}
	lo, hi := 0, 0
	for _, sc := range cases {
		sources[concurrencySource(sc.row.Source)] = true
		if lo == 0 || sc.row.Concurrency < lo {
			lo = sc.row.Concurrency
		}
		hi = max(hi, sc.row.Concurrency)
	}
	noun := "sources"
	if len(sources) == 1 {
		noun = "source"
	}
	errs, _ := concurrencyErrors(cases, c)
	return fmt.Sprintf("%d rows of %d %s at concurrency %d-%d: median error %s, p90 %s", len(errs), len(sources), noun, lo, hi, pct(quantile(errs, 0.5)), pct(quantile(errs, 0.9)))
}

// TestServingConcurrencyCheckQuotesTheReplay: the figures a serving plan
// with batch_size above 1 quotes in validated_on are the concurrency
// replay's under the shipped constants, per engine.
func TestServingConcurrencyCheckQuotesTheReplay(t *testing.T) {
	_, cases, err := loadServingConcurrency(testData)
	require.NoError(t, err)
	byEngine := map[string][]servingConcurrencyCase{}
	for _, sc := range cases {
		byEngine[sc.row.Engine] = append(byEngine[sc.row.Engine], sc)
	}
	assert.Equal(t, plan.VLLMConcurrencyCheck, concurrencyCheck(byEngine["vllm"], calibration.Fitted))
	assert.Equal(t, plan.SGLangConcurrencyCheck, concurrencyCheck(byEngine["sglang"], calibration.Fitted))
}
