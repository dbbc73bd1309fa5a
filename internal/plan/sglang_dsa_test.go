package plan

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// sglangPoolLine is SGLang's allocation line of a pool that prints its
// size whole ("KV Cache is allocated. #tokens: N, KV size: X GB", X in
// GiB: SGLang's GB divides by 1 << 30).
var sglangPoolLine = regexp.MustCompile(`#tokens: (\d+), KV size: ([\d.]+) GB`)

// TestSGLangDSAPoolBytesPerToken checks one token's cache in SGLang's
// pool for an MLA model (with or without DeepSeek Sparse Attention)
// against the kv_layout_only rows of internal/calibration/data/
// sglang_startup.json: KV size over #tokens of each allocation line, the
// first counting the latent and the indexer keys, a second (main's log
// before sgl-project/sglang PR 11309) the latent alone; in a TP group's
// log, each rank's line is that rank's pool, the whole latent (kvSplit).
// The plan's figure is quant.KVCacheBytes under SGLang's KV rules at the
// row's kv_cache_dtype, the options every SGLang plan sizes its pool with
// (kvOptionsFor).
func TestSGLangDSAPoolBytesPerToken(t *testing.T) {
	e, ok := engine.Lookup(engine.NameSGLang)
	require.True(t, ok)
	rows := 0
	for _, r := range loadSGLangStartupRows(t).Rows {
		if !r.KVLayoutOnly {
			continue
		}
		rows++
		m := model.Lookup(r.CatalogModel)
		require.NotNil(t, m, r.ID)
		require.Positive(t, m.KVLoRARank, "%s: an MLA model", r.ID)
		ct, ok := engine.LookupCacheType(r.KVCacheDType)
		require.True(t, ok, r.ID)
		o := e.KVRules(quant.KVOptions{Bytes: ct.BytesPerElement}, m)
		const ctx = 1 << 20
		full := float64(quant.KVCacheBytes(m, ctx, 1, o)) / ctx
		latentOnly := *m
		latentOnly.IndexerLayers = 0
		latent := float64(quant.KVCacheBytes(&latentOnly, ctx, 1, o)) / ctx
		var logged, bounds []float64
		for _, l := range r.Log {
			if g := sglangPoolLine.FindStringSubmatch(l); g != nil {
				tokens, err := strconv.ParseFloat(g[1], 64)
				require.NoError(t, err)
				gib, err := strconv.ParseFloat(g[2], 64)
				require.NoError(t, err)
				logged = append(logged, gib*(1<<30)/tokens)
				// Two decimals of GiB: good to 0.005 GiB (0.01 % of
				// ~50 GiB, 0.8 % of 0.65), and never tighter than 0.1 %.
				bounds = append(bounds, max(0.001, 0.005/gib))
			}
		}
		require.NotEmpty(t, logged, "%s: no allocation line with the pool's size", r.ID)
		want := []float64{full, latent}
		if m.IndexerLayers == 0 {
			// Every line is the latent: one per rank of a TP group.
			want = slices.Repeat([]float64{full}, len(logged))
		}
		for i, b := range logged {
			require.Less(t, i, len(want), "%s: more allocation lines than the row's note explains", r.ID)
			rel := want[i]/b - 1
			t.Logf("%s line %d: %.0f bytes per token logged, %.0f planned (%+.3f %%)", r.ID, i+1, b, want[i], 100*rel)
			assert.LessOrEqual(t, math.Abs(rel), bounds[i], "%s line %d", r.ID, i+1)
		}
	}
	assert.Positive(t, rows, "no kv_layout_only row")
}
