package quant

import (
	"math"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// publishedTotalBound is how far a catalog model's derived weights may be
// from its checkpoint's published total (issue 25).
const publishedTotalBound = 0.01

// TestCatalogAgainstPublishedTotals: each catalog model's weights derived
// from its config alone are within 1 % of what its publisher states: the
// exact parameter count (params_b, with its source), the Hub's count of a
// checkpoint's tensors (hub_params, a check only) and the size of every
// checkpoint whose size a source states (size_bytes). The count from the
// config adds the MTP modules, the vision tower and a stored copy of a tied
// output head when the published count includes them (ParamsInclude,
// model.CatalogEntry.CountedAs). Models without
// any published total are listed in withoutPublishedTotal, so that one
// left out is a decision in this file, not a silent skip.
func TestCatalogAgainstPublishedTotals(t *testing.T) {
	var unpublished []string
	for _, e := range model.Catalog() {
		derived, err := model.FromConfig(e.Config)
		require.NoError(t, err, e.Name)
		checked := false
		counted, err := e.CountedAs(derived)
		require.NoError(t, err, e.Name)
		got := float64(counted)
		if e.ParamsB > 0 {
			checked = true
			rel := got/(e.ParamsB*1e9) - 1
			t.Logf("%-36s params %8.3f B published %8.3f B %+6.2f%%", e.Name, got/1e9, e.ParamsB, 100*rel)
			assert.LessOrEqual(t, math.Abs(rel), publishedTotalBound, "%s: %.4g derived, %.4g published (%s)", e.Name, got, e.ParamsB*1e9, e.ParamsSource)
		}
		if e.HubParams > 0 {
			checked = true
			rel := got/float64(e.HubParams) - 1
			t.Logf("%-36s params %8.3f B Hub count %8.3f B %+6.2f%%", e.Name, got/1e9, float64(e.HubParams)/1e9, 100*rel)
			assert.LessOrEqual(t, math.Abs(rel), publishedTotalBound, "%s: %.4g derived, %d on the Hub (%s)", e.Name, got, e.HubParams, e.HubParamsSource)
		}
		m := model.Lookup(e.Name)
		for _, ck := range e.Checkpoints {
			if ck.SizeBytes == 0 {
				continue
			}
			checked = true
			l, err := Parse(ck.Quant)
			require.NoError(t, err, ck.Repo)
			got := float64(WeightsBytes(m, l))
			rel := got/float64(ck.SizeBytes) - 1
			t.Logf("%-36s %-8s %8.2f GB published %8.2f GB %+6.2f%%  %s", e.Name, ck.Quant, got/1e9, float64(ck.SizeBytes)/1e9, 100*rel, ck.Repo)
			assert.LessOrEqual(t, math.Abs(rel), publishedTotalBound, "%s %s: %.4g bytes, published %d (%s)", e.Name, ck.Repo, got, ck.SizeBytes, ck.SizeSource)
		}
		if !checked {
			unpublished = append(unpublished, e.Name)
		}
	}
	sort.Strings(unpublished)
	want := append(append([]string(nil), withoutPublishedTotal...), withoutPublishedTotalSince95...)
	sort.Strings(want)
	assert.Equal(t, want, unpublished, "catalog models without a published total")
}

// withoutPublishedTotal are the catalog models for which no source opened
// so far states an exact parameter count or checkpoint size: their weights
// are derived from the config alone, unchecked. The shape-fit models of
// internal/calibration/fit that have a Hub count record it as hub_params,
// a check only: a params_b would move the frozen fit's constants.
var withoutPublishedTotal = []string{
	"GLM-5.2", "Gemma-3-12B", "Gemma-3-27B", "Gemma-3-4B", "Kimi-K2.5",
	"MiniCPM-MoE-8x2B", "MiniMax-M3", "Nemotron-H-56B-Base-8K",
	"Step-3.7-Flash",
}

// withoutPublishedTotalSince95 are the models added after the catalog's
// first 95 (issue 25, item 2) for which no source opened states an exact
// count or checkpoint size, kept apart so that each list reads as it grew.
var withoutPublishedTotalSince95 = []string{
	"Kimi-K2-Thinking", "Kimi-K2.6", "Kimi-K2.7-Code",
	"MiniCPM-2B-sft-bf16", "NVIDIA-Nemotron-3-Ultra-550B-A55B",
	"NVIDIA-Nemotron-3.5-Lightning-30B-A3B", "Qwen3-Next-80B-A3B-Thinking",
	"Qwen3.8-2.4T-A95B",
	"DeepSeek-V4-Flash", "DeepSeek-V4-Pro",
	"Orion-14B-Chat", "Muse-Glimmer-30B", "Laguna-S-2.1",
	// GLM-4.7 and GLM-4.7-Flash: the catalog's configs are
	// ai-dynamo/aiconfigurator's reduced copies, which lack
	// num_nextn_predict_layers (so at its commit 19d098a, not dropped
	// here), so the MTP layer the checkpoints carry is not counted. The
	// Hub counts ('zai-org/GLM-4.7' 358,337,791,296, 'zai-org/GLM-4.7-Flash'
	// 31,221,488,576 in llmfit's hf_models.json) are the derived count plus
	// one MTP layer as model.mtpParams counts it plus its own copy of the
	// embedding and output head (2 x vocab x hidden), to 1.4 M and 3 k
	// parameters; 'zai-org/GLM-4.6' (356,785,898,816) is the same shape
	// without the copies. Cleared once a verbatim config with the key is
	// copied in.
	"GLM-4.7", "GLM-4.7-Flash",
}
