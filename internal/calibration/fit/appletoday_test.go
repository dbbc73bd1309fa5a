package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
)

// TestAppleTodayDecode replays the tg128 rows of data/apple_today.json
// (llama.cpp Metal builds of Nov 2024 to 2026) under the shipped constants,
// which are fitted on the May 2024 rows of data/inference.json, and asserts
// the median |error| and the largest.
func TestAppleTodayDecode(t *testing.T) {
	cases, err := loadAppleTodayDecode(testData)
	require.NoError(t, err)
	var errs []float64
	for _, sc := range cases {
		d := sc.replay.Decode(calibration.Fitted)
		require.Positive(t, d, sc.row.Hardware)
		e := d/sc.row.TG - 1
		errs = append(errs, max(e, -e))
		t.Logf("%-16s %-26s %-7s %-s measured %7.2f estimate %7.2f (%+.0f%%)  %s", sc.row.Hardware, sc.row.Model, sc.row.Quant, sc.family, sc.row.TG, d, 100*e, sc.row.Source)
	}
	t.Logf("today's Metal decode: n=%d median %.3f largest %.3f", len(errs), quantile(errs, 0.5), quantile(errs, 1))
	assert.Len(t, errs, 6)
	// Ratchets at what the shipped constants meet (median 10.3 %, largest
	// 14.3 %, the M4 Llama-3.1-8B row): tighten them when the model
	// improves; they fail when it gets worse. The median was 7.6 % on the
	// first 5 rows; the M3 Ultra row added on 2026-11-28 (held out by the
	// rule the file states) replays 13 % too slow, as the M4 row does.
	assert.LessOrEqual(t, quantile(errs, 0.5), 0.103)
	assert.LessOrEqual(t, quantile(errs, 1), 0.144)
}
