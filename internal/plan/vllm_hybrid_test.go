package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// TestVLLMHybridConcurrencyCap: for a hybrid model vLLM's concurrency is
// capped by the state blocks each request holds, not by its KV tokens.
// NVIDIA-Nemotron-3-Nano-30B-A3B (6 attention layers, 23 Mamba2 layers)
// on one H100 at a 4096-token context, vLLM 0.24.0: a Mamba2 layer's state
// (conv in bf16, SSM in float32: 2,134,016 bytes) raises the attention
// block to 2,096 tokens, and a request holds 2 attention blocks and 2
// state blocks in each of 4 state groups, 10 blocks of 6 layers: about
// five times what its 4096 tokens of attention cache take.
func TestVLLMHybridConcurrencyCap(t *testing.T) {
	d := gpu(registry.KindCUDA, 0, "NVIDIA H100 80GB HBM3", 80*gibBytes, "9.0")
	d.Vendor = "nvidia"
	ans := shard(t, request(t, `{"model":{"name":"NVIDIA-Nemotron-3-Nano-30B-A3B"},"quant":"bf16","engine":"vllm","engine_version":"0.24.0","context_length":4096}`,
		reg(t, []registry.Device{d})))
	require.True(t, ans.Fits.Yes(), dump(t, ans))
	ex, ok := ans.EngineExpect[engineVLLM]
	require.True(t, ok)
	t.Logf("kv %.2f GiB, %d tokens, %.2fx", ex.KVCacheGiB, ex.KVCacheTokens, ex.MaxConcurrency)
	require.Positive(t, ex.KVCacheTokens)
	// 0.24.0 prints the tokens as concurrency x context.
	assert.InDelta(t, float64(ex.KVCacheTokens)/4096, ex.MaxConcurrency, 0.01)
	// The attention cache alone is 6 layers x 2 KV heads x 128 x 2 x 2
	// bytes = 6 KiB a token.
	attentionOnly := ex.KVCacheGiB * float64(gibBytes) / (6 * 1024) / 4096
	assert.Less(t, ex.MaxConcurrency, attentionOnly/3, "state blocks cap the concurrency")
	assert.Contains(t, ex.Source, "recurrent")
}
