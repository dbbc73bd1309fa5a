package quant

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDSAKVCacheBytes: one token's cache of DeepSeek-V3.2 in each of its
// 61 layers is the latent and the indexer's key, as each engine stores
// them (KVOptions.IndexerKeyBytes, ScaledFP8Latent).
func TestDSAKVCacheBytes(t *testing.T) {
	m := catalogModel(t, "DeepSeek-V3.2")
	const ctx = 32768
	// llama.cpp: the key's 128 values at the cache type, beside the
	// 576-value latent (llama_kv_cache_dsa).
	assert.Equal(t, int64(61*(576+128)*2*ctx), KVCacheBytes(m, ctx, 1, KVOptions{}))
	assert.Equal(t, int64(61*(576+128)*1*ctx), KVCacheBytes(m, ctx, 1, KVOptions{Bytes: 1}))
	// vLLM and SGLang at bf16: 1152 bytes of latent and a 132-byte key
	// (128 fp8 values and one fp32 scale).
	dsa := KVOptions{IndexerKeyBytes: 132, ScaledFP8Latent: true}
	assert.Equal(t, int64(61*(1152+132)*ctx), KVCacheBytes(m, ctx, 1, dsa))
	// At fp8: FlashMLA's 656-byte latent (512 fp8, 4 fp32 scales, a
	// 64-value bf16 RoPE key) and the same key.
	dsa.Bytes = 1
	assert.Equal(t, int64(61*(656+132)*ctx), KVCacheBytes(m, ctx, 1, dsa))
	assert.Equal(t, 3*KVCacheBytes(m, ctx, 1, dsa), KVCacheBytes(m, ctx, 3, dsa))
	// An fp8 latent without the scaled layout is 576 bytes.
	dsa.ScaledFP8Latent = false
	assert.Equal(t, int64(61*(576+132)*ctx), KVCacheBytes(m, ctx, 1, dsa))

	// GLM-5.2: 21 of its 78 layers run an indexer of their own.
	g := catalogModel(t, "GLM-5.2")
	require.Equal(t, 21, g.IndexerLayers)
	latent := int64(g.KVLoRARank + g.QKRopeHeadDim)
	assert.Equal(t, (78*latent+21*int64(g.IndexerHeadDim))*2*ctx, KVCacheBytes(g, ctx, 1, KVOptions{}))

	// DeepSeek-V3, without an indexer, is unchanged by the options.
	v3 := catalogModel(t, "DeepSeek-V3")
	assert.Equal(t, int64(61*576*2*ctx), KVCacheBytes(v3, ctx, 1, KVOptions{IndexerKeyBytes: 132}))

	b := Estimate(m, FP8, ctx, 1, KVOptions{})
	assert.Contains(t, b.Notes, "KV cache also holds the sparse-attention indexer's key (128 values per token) in 61 of 61 layers")
}
