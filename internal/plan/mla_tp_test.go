package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// h200s is n H200s (143771 MiB) behind one NVSwitch.
func h200s(t *testing.T, n int) *registry.Registry {
	var devs []registry.Device
	for i := 0; i < n; i++ {
		d := gpu(registry.KindCUDA, i, "NVIDIA H200", 143771<<20, "9.0")
		d.Vendor = "nvidia"
		devs = append(devs, d)
	}
	return reg(t, devs, link(registry.LinkNVSwitch, 900, ids("cuda", n)...))
}

// An MLA model's cache is one latent "head" (vLLM's MLAAttentionSpec has
// num_kv_heads 1, vllm/model_executor/layers/attention/mla_attention.py;
// ModelConfig.get_num_kv_heads returns 1 under use_mla, vllm/config/
// model.py; SGLang's MLATokenToKVPool, python/sglang/srt/mem_cache/
// memory_pool.py, holds kv_lora_rank + qk_rope_head_dim per token on
// every rank): tensor parallelism does not divide it. Every GPU of a
// TP-8 vLLM plan of DeepSeek-V3 holds the whole latent of every token,
// (512 + 64) x 61 layers x 2 bytes, and DeepSeek-V3.2 also the lightning
// indexer's key (128 fp8 values and a 4-byte scale a layer, vLLM's
// DeepseekV32IndexerCache): 61 x (1152 + 132) = 78,324 bytes. The KV pool
// vLLM reports (engine_expect) is its memory over that, and the plan's
// shard of one sequence is that times the context.
func TestMLACacheWholeOnEveryTPRank(t *testing.T) {
	const ctx = 32768
	for _, c := range []struct {
		name, model, quant string
		r                  *registry.Registry
		perToken           int64
	}{
		{"DeepSeek-V3 fp8 on 8 H200", "DeepSeek-V3", "fp8", h200s(t, 8), (512 + 64) * 61 * 2},
		{"DeepSeek-V3.2 int4 on 8 H100", "DeepSeek-V3.2", "int4", nvlinked(8), 61 * ((512+64)*2 + 132)},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := shard(t, request(t, `{"model":{"name":"`+c.model+`"},"engine":"vllm","quant":"`+c.quant+`","tensor_parallel_size":8,"context_length":`+itoa(ctx)+`}`, c.r))
			require.True(t, a.Fits.Yes(), a.Explanation)
			require.Equal(t, 8, a.TPSize)
			require.Len(t, a.Shards, 8)
			// One sequence of the context on each GPU, whole.
			perGPU := a.Memory.KVCacheBytes / 8
			assert.InEpsilon(t, float64(c.perToken*ctx), float64(perGPU), 0.01,
				"each GPU's KV: %d bytes, the whole latent of %d tokens is %d", perGPU, ctx, c.perToken*ctx)
			x := a.EngineExpect[engineVLLM]
			require.Positive(t, x.KVCacheTokens)
			// vLLM's GPU KV cache size: its pool over the whole latent.
			logged := x.KVCacheGiB * float64(gibBytes) / float64(x.KVCacheTokens)
			assert.InEpsilon(t, float64(c.perToken), logged, 0.005,
				"bytes per token of vLLM's pool: %.0f (pool %.2f GiB, %d tokens)", logged, x.KVCacheGiB, x.KVCacheTokens)
			assert.InDelta(t, float64(x.KVCacheTokens)/ctx, x.MaxConcurrency, 0.01)
			assert.LessOrEqual(t, a.MaxBatchSize, int(x.MaxConcurrency)+1,
				"the plan's batch room cannot exceed what vLLM's pool holds")
		})
	}
}
