package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// heldOutFile holds published decode speeds that the constants were not
// fitted on (docs/accuracy.md, "Throughput": fit set and held-out set).
var heldOutFile = filepath.Join("testdata", "decode_published.json")

// heldOutDecodeMedianMax is the ratchet on the median |error| of the decode
// estimate over the held-out rows (issue 12: within 15 %). With the
// constants fitted on 2023-24 builds (148 us per layer, 90 % of bandwidth on
// every device) the median was 23.6 %; with the memory-class fractions and
// 92 us per layer fitted on the May 2024 llama-bench rows, 10.4 %. Tighten it
// when the model improves; the test fails when it gets worse.
const heldOutDecodeMedianMax = 0.11

type heldOutRow struct {
	Hardware string  `json:"hardware"`
	Model    string  `json:"model"`
	Quant    string  `json:"quant"`
	Engine   string  `json:"engine"`
	Backend  string  `json:"backend"`
	Date     string  `json:"date"`
	Context  int     `json:"context"`
	TG       float64 `json:"tg_tokens_per_s"`
	Source   string  `json:"source"`
}

// loadHeldOut maps every held-out row to a calibration case (one device,
// batch 1, decode at the row's average context). A row that does not map
// fails the test: the file holds only rows the planner can replay.
func loadHeldOut(t *testing.T) []calCase {
	t.Helper()
	data, err := os.ReadFile(heldOutFile)
	require.NoError(t, err)
	var doc struct {
		Rows []heldOutRow `json:"rows"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	require.NotEmpty(t, doc.Rows)
	var cases []calCase
	for _, r := range doc.Rows {
		name := r.Hardware + " / " + r.Model + " / " + r.Quant
		require.True(t, strings.HasPrefix(r.Source, "https://"), name)
		require.Positive(t, r.TG, name)
		s, ok := specs.ByName(r.Hardware)
		require.True(t, ok && s.BandwidthGBs > 0, "%s: no datasheet bandwidth", name)
		m, err := model.Resolve(model.Spec{Name: r.Model})
		require.NoError(t, err, name)
		l, err := quant.Parse(r.Quant)
		require.NoError(t, err, name)
		c := calCase{row: calRow{Hardware: r.Hardware, DeviceCount: 1, Model: r.Model, Quant: r.Quant, TG: r.TG, Source: r.Source},
			spec: s, model: m, level: l, decodeContext: r.Context}
		c.decodePlan, c.decodeReq = c.plan(r.Context)
		c.prefillPlan, c.prefillReq = c.decodePlan, c.decodeReq // no prefill figure: PP is 0
		cases = append(cases, c)
	}
	return cases
}

// TestDecodeHeldOut replays the published decode speeds the constants were
// not fitted on and ratchets their median error (run with -v for the rows).
func TestDecodeHeldOut(t *testing.T) {
	cases := loadHeldOut(t)
	var errs []float64
	for _, c := range cases {
		d := estimateWith(c.decodePlan, c.decodeReq, 0, fitted).DecodeTokensPerS
		require.Positive(t, d, c.row.Hardware)
		e := d/c.row.TG - 1
		errs = append(errs, abs(e))
		t.Logf("%-32s %-26s %-7s measured %7.2f estimate %7.2f (%+.0f%%)  %s", c.row.Hardware, c.row.Model, c.row.Quant, c.row.TG, d, 100*e, c.row.Source)
	}
	t.Logf("held-out decode: n=%d median %.3f p90 %.3f", len(errs), quantile(errs, 0.5), quantile(errs, 0.9))
	assert.LessOrEqual(t, quantile(errs, 0.5), heldOutDecodeMedianMax)
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
