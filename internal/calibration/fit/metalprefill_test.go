package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
)

// TestMetalPrefill replays every Apple GPU prompt row under the shipped
// constants: the May 2024 llama-bench rows of data/inference.json the
// Metal fractions are fitted on, and the held-out 2023 ./main rows and
// pp512 rows of today's builds (data/apple_today.json), and asserts each
// set's median |error| and largest. The shipped fractions must be the
// ones the fit gives.
func TestMetalPrefill(t *testing.T) {
	all, _, err := loadSpeedRows(testData)
	require.NoError(t, err)
	today, err := loadAppleTodayPrefill(testData)
	require.NoError(t, err)
	fit, main2023 := metalPrefillSets(all)
	c := calibration.Fitted
	f := fitMetalPrefill(all, today, c)
	assert.InDelta(t, float64(f.float)/1000, c.PrefillMFUMetal, 1e-9)
	assert.InDelta(t, float64(f.quant)/1000, c.PrefillMFUMetalQuant, 1e-9)
	sets := []struct {
		name  string
		rows  []speedCase
		n     int
		med   float64
		worst float64
	}{
		// Ratchets at what the shipped constants meet: tighten them when
		// the model improves; they fail when it gets worse.
		// The fit set's largest is the M1 Max's Llama 3 70B Q4_K_M (+26 %);
		// the 2023 set's the M3 Max (48 GB) at LLaMA 65B Q4_0 (9.91
		// tokens/s measured, +553 %: a 37 GB model on a 48 GB machine);
		// today's the M4 at Llama 3.1 8B Q4_K_M (-35 %). Today's median was
		// 15.2 % on the first 6 rows; the M3 Ultra row's pp512 (replayed
		// since its record gained an FP32 figure on 2026-11-29, held out by
		// the file's rule) is 26 % too slow, like the other M3/M4 rows, and
		// moves it to 18.7 %.
		{"fit (May 2024 llama-bench)", fit, 11, 0.061, 0.264},
		{"held out (2023 ./main)", main2023, 35, 0.125, 5.54},
		{"held out (today's builds)", today, 7, 0.187, 0.348},
	}
	for _, s := range sets {
		var errs []float64
		for _, sc := range s.rows {
			p := sc.replay.Prefill(c)
			require.Positive(t, p, sc.row.Hardware)
			e := p/sc.row.PP - 1
			errs = append(errs, max(e, -e))
			t.Logf("%-36s %-34s %-7s measured %8.2f estimate %8.2f (%+.0f%%)", sc.row.Hardware, sc.row.Model, sc.row.Quant, sc.row.PP, p, 100*e)
		}
		t.Logf("%s: n=%d median %.3f largest %.3f", s.name, len(errs), quantile(errs, 0.5), quantile(errs, 1))
		assert.Len(t, errs, s.n, s.name)
		assert.LessOrEqual(t, quantile(errs, 0.5), s.med, s.name)
		assert.LessOrEqual(t, quantile(errs, 1), s.worst, s.name)
	}
}
