package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
)

// floatRows are the held-out 16-bit rows of data/decode_today_microbatch.json.
func floatRows(t *testing.T) []speedCase {
	t.Helper()
	cases, err := loadTodayFloat(testData)
	require.NoError(t, err)
	var out []speedCase
	for _, sc := range cases {
		if sc.use == useHeldOut {
			require.Equal(t, plan.WeightsFloat, sc.family, sc.row.Hardware)
			out = append(out, sc)
		}
	}
	return out
}

// TestDecodeTodayFloat replays the 16-bit rows of
// data/decode_today_microbatch.json (today's CUDA builds on GDDR GPUs)
// under the shipped constants and asserts the median |error| and the
// largest.
func TestDecodeTodayFloat(t *testing.T) {
	var errs []float64
	for _, sc := range floatRows(t) {
		require.NotEmpty(t, sc.arch, "%s: an architecture with today's decode constants", sc.row.Hardware)
		d := sc.replay.Decode(calibration.Fitted)
		require.Positive(t, d, sc.row.Hardware)
		e := d/sc.row.TG - 1
		errs = append(errs, max(e, -e))
		t.Logf("%-26s %-9s %-13s %-5s measured %7.2f estimate %7.2f (%+.0f%%)  %s", sc.row.Hardware, sc.arch, sc.row.Model, sc.row.Quant, sc.row.TG, d, 100*e, sc.row.Source)
	}
	t.Logf("today's CUDA build, 16-bit weights on GDDR: n=%d median %.3f largest %.3f", len(errs), quantile(errs, 0.5), quantile(errs, 1))
	assert.Len(t, errs, 4)
	// Ratchets at what the shipped constants meet (median 11.2 %, largest
	// 18.5 %, the RTX 5090 Llama-3.2-1B row): tighten them when the model
	// improves; they fail when it gets worse. The median was 11.0 % on the
	// first 3 rows; the RTX 3090 Llama-3.2-1B F16 row added on 2026-11-29
	// (held out, the file's rule) replays 11 % too slow.
	assert.LessOrEqual(t, quantile(errs, 0.5), 0.112)
	assert.LessOrEqual(t, quantile(errs, 1), 0.186)
}

// TestTodayFloatCheckQuotesTheReplay checks the figures plan.TodayFloatCheck
// quotes in the validated_on of 16-bit plans on today's GDDR architectures:
// how many rows of each type, the range and median of the signed errors of
// the rows of data/decode_today_microbatch.json, in whole percent, and
// that every row is too slow.
func TestTodayFloatCheckQuotesTheReplay(t *testing.T) {
	var slow []float64
	types := map[string]int{}
	for _, sc := range floatRows(t) {
		e := sc.replay.Decode(calibration.Fitted)/sc.row.TG - 1
		require.Negative(t, e, "%s: the quote says every row replays too slow", sc.row.Hardware)
		slow = append(slow, -e)
		types[sc.row.Quant]++
	}
	quoted := fmt.Sprintf("%d 16-bit rows (%d BF16, %d F16), one GPU per architecture (RTX 3090, RTX 4090, RTX 5090), replay %.0f-%.0f%% too slow, median %.0f%%",
		len(slow), types["bf16"], types["f16"], 100*quantile(slow, 0), 100*quantile(slow, 1), 100*quantile(slow, 0.5))
	assert.Equal(t, quoted, plan.TodayFloatCheck)
}

// TestMicrobatchMethodCheck replays the Q4_0 row of
// data/decode_today_microbatch.json, measured the way the 16-bit rows are
// (llama-bench pp512 at a micro-batch of one token), under today's Q4_0
// constants, which are fitted on the scoreboard's tg128 rows: within 1.3 %
// (a ratchet at what is met, −1.2 %), so what the 16-bit rows show is the
// 16-bit fraction, not the way they are measured or replayed.
func TestMicrobatchMethodCheck(t *testing.T) {
	cases, err := loadTodayFloat(testData)
	require.NoError(t, err)
	n := 0
	for _, sc := range cases {
		if sc.use != useMethodCheck {
			continue
		}
		n++
		require.Equal(t, plan.WeightsKQuant, sc.family, sc.row.Hardware)
		d := sc.replay.Decode(calibration.Fitted)
		t.Logf("%s %s %s measured %.2f estimate %.2f (%+.1f%%)", sc.row.Hardware, sc.row.Model, sc.row.Quant, sc.row.TG, d, 100*(d/sc.row.TG-1))
		assert.InEpsilon(t, sc.row.TG, d, 0.013, sc.row.Hardware)
	}
	assert.Equal(t, 1, n, "one method-check row")
}
