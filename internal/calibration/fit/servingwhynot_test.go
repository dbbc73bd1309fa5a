package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// whyNotFigure is a figure the why_not of an unreplayed row of
// data/serving_decode.json quotes: the row laid out as if replayed (on
// spec, as catalogModel) under the shipped constants, as
// "give E tokens/s, ±N % on the M measured", or "E on <where>" for the
// same row on another GPU.
type whyNotFigure struct {
	source, model      string
	spec, catalogModel string
	where              string // "" for the main figure
}

// whyNotFigures are the unreplayed rows whose why_not says what the
// planner would give (docs audit of session 16: no test checked them).
var whyNotFigures = []whyNotFigure{
	{"https://github.com/m8ngotree/sglang/blob/7ff9c1b7af3b697c6c698cc08fe5a3c6e23d27aa/BENCHMARK_REPORT_qwen3_235b_fp8.md", "Qwen3-235B-A22B-Instruct-2507-FP8",
		"NVIDIA H200 SXM 141GB", "Qwen3-235B-A22B", ""},
	{"https://github.com/vllm-project/recipes/blob/8959cf64189c71d36e11c6a30335f923f261b1f7/DeepSeek/DeepSeek-V3.md", "DeepSeek-R1-0528",
		"NVIDIA H200 SXM 141GB", "DeepSeek-R1", ""},
	{"https://github.com/vllm-project/recipes/blob/8959cf64189c71d36e11c6a30335f923f261b1f7/DeepSeek/DeepSeek-V3.md", "DeepSeek-R1-0528",
		"AMD Instinct MI300X", "DeepSeek-R1", "8 MI300X"},
}

// TestServingWhyNotFiguresReplayed lays out each whyNotFigures row as its
// why_not says and checks the figure it quotes, and docs/accuracy.md's
// sentence of the row ("give E tokens/s, ±N %"), is what the shipped
// constants give today.
func TestServingWhyNotFiguresReplayed(t *testing.T) {
	c := fitted(t).throughput()
	rows, err := readRows[servingRow](testData, "serving_decode.json")
	require.NoError(t, err)
	doc, err := os.ReadFile(filepath.Join(testData, "..", "..", "..", "docs", "accuracy.md"))
	require.NoError(t, err)
	prose := strings.Join(strings.Fields(string(doc)), " ")
	for _, f := range whyNotFigures {
		var row *servingRow
		for i := range rows {
			if rows[i].Source == f.source && rows[i].Model == f.model {
				row = &rows[i]
			}
		}
		require.NotNil(t, row, "no row %s of %s", f.model, f.source)
		require.False(t, row.Replayed)
		s, ok := specs.ByName(f.spec)
		require.True(t, ok, f.spec)
		m, l, err := resolveRow("serving_decode.json", f.model, f.catalogModel, row.Precision)
		require.NoError(t, err)
		est := plan.NewServingReplay(row.Engine, m, l, s, row.TP, row.Input+row.Output/2).Decode(c)
		quote := fmt.Sprintf("(%.1f on %s)", est, f.where)
		if f.where == "" {
			rel := strings.Replace(signedPct(est/row.TokensPerS-1), "−", "-", 1)
			quote = fmt.Sprintf("give %.1f tokens/s, %s on the %.1f measured", est, rel, row.TokensPerS)
			assert.Contains(t, prose, fmt.Sprintf("give %.1f tokens/s, %s", est, signedPct(est/row.TokensPerS-1)), "%s: rewrite docs/accuracy.md's sentence of the row", f.model)
		}
		assert.Contains(t, row.WhyNot, quote, "%s: rewrite its why_not", f.model)
	}
}
