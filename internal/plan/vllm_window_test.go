package plan

import (
	"math"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// logConcurrency is vLLM's "Maximum concurrency for N tokens per request:
// Xx" line.
var logConcurrency = regexp.MustCompile(`Maximum concurrency for [\d,]+ tokens per request: ([\d.]+)x`)

// TestVLLMWindowStartupLayout replays the GPU rows of vllm_startup.json of
// models with sliding-window layers (gpt-oss-20b, Gemma 2) from the pool
// they printed: vLLM's layout (engine.VLLMWindowLayoutOf) must give the
// "Maximum concurrency" of the row's log to its two decimals and the
// printed "GPU KV cache size" exactly. The pool's blocks are read from the
// printed tokens (blocks // groups x 16 in these releases; the printed GiB
// are rounded to 0.01, tens of blocks), and must agree with the printed
// GiB within 1 %. Counting every layer at the whole length (the tokens
// over --max-model-len) misses the concurrency by 0.31 on gpt-oss-20b and
// 0.02 on Gemma-2-9B: each request also holds one block more in the
// window group.
func TestVLLMWindowStartupLayout(t *testing.T) {
	n := 0
	for _, r := range loadVLLMStartupRows(t) {
		p := r.Printed
		m := model.Lookup(r.Model)
		if m == nil || r.DeviceKind != "" || p.KVCacheGiB == nil || p.KVCacheTokens == nil {
			continue
		}
		if _, windowed := m.SlidingLayers(); windowed == 0 {
			continue
		}
		var printed float64
		for _, line := range r.Log {
			if g := logConcurrency.FindStringSubmatch(line); g != nil {
				var err error
				printed, err = strconv.ParseFloat(g[1], 64)
				require.NoError(t, err, r.ID)
			}
		}
		if printed == 0 {
			continue
		}
		v, err := engine.ParseVersion(r.EngineVersion)
		require.NoError(t, err, r.ID)
		l, ok := engine.VLLMWindowLayoutOf(m, engine.VLLMWindowSetup{Version: v, TP: r.TensorParallel,
			MaxModelLen: r.MaxModelLen, MaxNumBatchedTokens: r.MaxNumBatchedTokens, KVBytes: 2})
		require.True(t, ok, r.ID)
		groups := int64(l.FullGroups + l.WindowGroups)
		blocks := *p.KVCacheTokens / 16 * groups
		fromGiB := l.Blocks(int64(math.Round(*p.KVCacheGiB * float64(gibBytes))))
		got := l.MaxConcurrency(blocks)
		t.Logf("%s: %d blocks (%d from the GiB), %d a request: %d tokens (printed %d), %.3fx (printed %.2fx)",
			r.ID, blocks, fromGiB, l.BlocksPerRequest(), l.Tokens(blocks), *p.KVCacheTokens, got, printed)
		assert.InEpsilon(t, float64(blocks), float64(fromGiB), 0.01, "%s: blocks", r.ID)
		assert.Equal(t, *p.KVCacheTokens, l.Tokens(blocks), "%s: kv_cache_tokens", r.ID)
		// The pool may hold up to groups - 1 blocks more than the printed
		// tokens show.
		assert.InDelta(t, printed, got, 0.005+float64(groups-1)/float64(l.BlocksPerRequest()), "%s: max_concurrency", r.ID)
		n++
	}
	assert.GreaterOrEqual(t, n, 3, "sliding-window rows with the concurrency printed")
}

// At a context far beyond the window, a window group holds a request's
// window and one --max-num-batched-tokens step, not its whole length
// (SlidingWindowSpec.max_memory_usage_bytes in vllm/v1/kv_cache_interface.py:
// cdiv(min(window - 1 + max_num_batched_tokens, max_model_len), block) + 1):
// gpt-oss-120b (18 full and 18 window layers of 128 tokens) at 131072
// tokens and 8192 batched tokens holds 8192 + 521 blocks, and TP 8 of
// Gemma 3 27B (10 global, 52 local layers of 1024) groups its layers by
// ten, one full group and six window groups of cdiv(1023 + 8192, 16) + 1
// blocks each.
func TestVLLMWindowLayoutAtLongContext(t *testing.T) {
	v := engine.Version{Major: 0, Minor: 21}
	oss := model.Lookup("gpt-oss-120b")
	require.NotNil(t, oss)
	l, ok := engine.VLLMWindowLayoutOf(oss, engine.VLLMWindowSetup{Version: v, TP: 1, MaxModelLen: 131072, MaxNumBatchedTokens: 8192, KVBytes: 2})
	require.True(t, ok)
	assert.Equal(t, 18, l.LayersPerGroup)
	assert.Equal(t, 8192+521, l.BlocksPerRequest())

	gemma := model.Lookup("google/gemma-3-27b-it")
	require.NotNil(t, gemma)
	l, ok = engine.VLLMWindowLayoutOf(gemma, engine.VLLMWindowSetup{Version: v, TP: 8, MaxModelLen: 131072, MaxNumBatchedTokens: 8192, KVBytes: 2})
	require.True(t, ok)
	assert.Equal(t, 10, l.LayersPerGroup)
	assert.Equal(t, 1, l.FullGroups)
	assert.Equal(t, 6, l.WindowGroups)
	assert.Equal(t, 8192+6*(576+1), l.BlocksPerRequest())

	// Before the oldest release a log pins, and for a model without
	// windows, there is no window layout.
	_, ok = engine.VLLMWindowLayoutOf(oss, engine.VLLMWindowSetup{Version: engine.Version{Minor: 10, Patch: 1}, MaxModelLen: 131072, MaxNumBatchedTokens: 8192, KVBytes: 2})
	assert.False(t, ok)
	_, ok = engine.VLLMWindowLayoutOf(model.Lookup("Llama-3.1-8B"), engine.VLLMWindowSetup{Version: v, MaxModelLen: 131072, MaxNumBatchedTokens: 8192, KVBytes: 2})
	assert.False(t, ok)
}
