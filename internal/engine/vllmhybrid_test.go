package engine

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// printedBytes is a figure vLLM printed in GiB to two decimals, as bytes.
func printedBytes(g float64) int64 { return int64(math.Round(g * (1 << 30))) }

// TestVLLMHybridLayoutQwen36 replays two start-up logs of the same setup
// (noonghunna/club-3090 issues 612 and 652: Qwen3.6-35B-A3B NVFP4 on one
// RTX 5090, vLLM 0.24.0, --kv-cache-dtype fp8, --max-model-len 131072,
// prefix caching on). From the printed "Available KV cache memory" (5.98
// and 6.01 GiB) the layout must give the printed "GPU KV cache size"
// (567,978 and 569,878 tokens) and "Maximum concurrency" (4.33x, 4.35x):
// 10 attention layers and 30 gated-DeltaNet layers make one attention and
// three state groups of 10 layers; the state page (conv in bf16, the SSM
// state in float32 as the config's mamba_ssm_dtype says: 2,146,304 bytes)
// raises the attention block to 2,096 tokens of 1,024 bytes; a request
// takes 63 attention blocks and 2 blocks in each state group (align mode).
func TestVLLMHybridLayoutQwen36(t *testing.T) {
	m := model.Lookup("Qwen3.6-35B-A3B")
	require.NotNil(t, m)
	l, ok := VLLMHybridLayoutOf(m, VLLMCacheSetup{Version: Version{0, 24, 0}, TP: 1, MaxModelLen: 131072, KVBytes: 1, ModelBytes: 2})
	require.True(t, ok)
	assert.Equal(t, 2096, l.BlockTokens)
	assert.Equal(t, int64(2146304), l.PageBytes)
	assert.Equal(t, 10, l.LayersPerGroup)
	assert.Equal(t, 1, l.AttentionGroups)
	assert.Equal(t, 3, l.StateGroups)
	assert.Equal(t, 2, l.StateBlocksPerRequest)
	assert.Equal(t, 69, l.BlocksPerRequest())
	for _, row := range []struct {
		gib    float64
		tokens int64
		conc   float64
	}{{5.98, 567978, 4.33}, {6.01, 569878, 4.35}} {
		blocks := l.Blocks(printedBytes(row.gib))
		assert.Equal(t, row.tokens, l.Tokens(blocks), "%.2f GiB", row.gib)
		assert.InDelta(t, row.conc, l.MaxConcurrency(blocks), 0.005, "%.2f GiB", row.gib)
	}
}

// TestVLLMHybridLayoutQwen35 replays vllm-project/vllm issue 40691 (vLLM
// 0.19.0, Qwen3.5-27B on one H20, --max-model-len 32768): "GPU KV cache
// size: 290,864 tokens", "Maximum concurrency for 32,768 tokens per
// request: 33.04x". 16 attention layers of 4 KV heads of 256 in bf16
// (4,096 bytes a token) and 48 gated-DeltaNet layers (3,207,168 bytes of
// state) give blocks of 784 tokens in four groups of 16 layers; before
// 0.20.2 vLLM printed the tokens as the blocks shared out over the groups
// times the block (1,487 // 4 x 784), and a request takes 42 attention
// blocks and one block per state group.
func TestVLLMHybridLayoutQwen35(t *testing.T) {
	m := model.Lookup("Qwen3.5-27B")
	require.NotNil(t, m)
	l, ok := VLLMHybridLayoutOf(m, VLLMCacheSetup{Version: Version{0, 19, 0}, TP: 1, MaxModelLen: 32768, KVBytes: 2, ModelBytes: 2})
	require.True(t, ok)
	assert.Equal(t, 784, l.BlockTokens)
	assert.Equal(t, int64(784*4096), l.PageBytes)
	assert.Equal(t, 16, l.LayersPerGroup)
	assert.Equal(t, 45, l.BlocksPerRequest())
	// The log prints no KV memory: 1,487 blocks is the count both printed
	// lines agree on (1,484 to 1,487 give the tokens, 1,487 the 33.04x).
	const blocks = 1487
	assert.Equal(t, int64(290864), l.Tokens(blocks))
	assert.InDelta(t, 33.04, l.MaxConcurrency(blocks), 0.005)
	assert.Equal(t, int64(blocks), l.Blocks(blocks*l.PageBytes*int64(l.LayersPerGroup)))
}

// TestVLLMHybridLayoutNemotron3 replays the two start-up logs of NVIDIA's
// vLLM cookbooks (NVIDIA-NeMo/Nemotron usage-cookbook/Nemotron-3-Nano and
// Nemotron-3-Super vllm_cookbook.ipynb), Mamba2 hybrids whose config says
// "mamba_ssm_cache_dtype": "float32".
//   - Nemotron 3 Nano, BF16, one H100 80GB, vLLM 0.12.0, defaults (262,144
//     tokens, bf16 cache): "Setting attention block size to 1072 tokens",
//     7.37 GiB, "GPU KV cache size: 257,280 tokens", 4.82x. 0.12.0 does not
//     read the config's dtype: its Mamba2 state is all bf16 (18,432 conv
//     and 524,288 SSM elements: 1,085,440 bytes, 67 x 16 tokens of 1,024
//     bytes). From 0.13.0 vLLM takes the config's float32 (vllm PR 29978),
//     and the block would be 2,096 tokens.
//   - Nemotron 3 Super, 4 x H100 PCIe (TP 4), vLLM 0.14.1, fp8 cache:
//     "Updating mamba_ssm_cache_dtype to 'float32'", 4,160-token blocks,
//     7.94 GiB, 690,560 tokens, 14.49x.
func TestVLLMHybridLayoutNemotron3(t *testing.T) {
	nano := model.Lookup("NVIDIA-Nemotron-3-Nano-30B-A3B")
	require.NotNil(t, nano)
	s := VLLMCacheSetup{Version: Version{0, 12, 0}, TP: 1, MaxModelLen: 262144, KVBytes: 2, ModelBytes: 2}
	l, ok := VLLMHybridLayoutOf(nano, s)
	require.True(t, ok)
	assert.Equal(t, 1072, l.BlockTokens)
	assert.Equal(t, 249, l.BlocksPerRequest())
	blocks := l.Blocks(printedBytes(7.37))
	assert.Equal(t, int64(1201), blocks)
	assert.Equal(t, int64(257280), l.Tokens(blocks))
	assert.InDelta(t, 4.82, l.MaxConcurrency(blocks), 0.005)
	s.Version = Version{0, 13, 0}
	l, ok = VLLMHybridLayoutOf(nano, s)
	require.True(t, ok)
	assert.Equal(t, 2096, l.BlockTokens, "from 0.13.0 the SSM state is the config's float32")

	super := model.Lookup("NVIDIA-Nemotron-3-Super-120B-A12B")
	require.NotNil(t, super)
	l, ok = VLLMHybridLayoutOf(super, VLLMCacheSetup{Version: Version{0, 14, 1}, TP: 4, MaxModelLen: 262144, KVBytes: 1, ModelBytes: 2})
	require.True(t, ok)
	assert.Equal(t, 4160, l.BlockTokens)
	blocks = l.Blocks(printedBytes(7.94))
	assert.Equal(t, int64(690560), l.Tokens(blocks))
	assert.InDelta(t, 14.49, l.MaxConcurrency(blocks), 0.005)
}

// TestVLLMHybridLayoutShapes: tensor parallelism splits the state and the
// KV heads (never below one head); a model without recurrent layers, or
// with attention of several shapes, has no hybrid layout; a parallel
// hybrid layer (Falcon-H1: attention and a mixer in one layer) counts in
// both kinds; Nemotron-H's MLP-only layers count in neither.
func TestVLLMHybridLayoutShapes(t *testing.T) {
	_, ok := VLLMHybridLayoutOf(model.Lookup("Llama-3.1-8B"), VLLMCacheSetup{Version: Version{0, 21, 0}, TP: 1, MaxModelLen: 8192, KVBytes: 2, ModelBytes: 2})
	assert.False(t, ok)

	next := model.Lookup("Qwen3-Next-80B-A3B-Instruct")
	require.NotNil(t, next)
	s := VLLMCacheSetup{Version: Version{0, 19, 0}, TP: 1, MaxModelLen: 32768, KVBytes: 2, ModelBytes: 2}
	tp1, ok := VLLMHybridLayoutOf(next, s)
	require.True(t, ok)
	// bf16 state 1,097,728 bytes over 2,048 bytes a token: 536 -> 544.
	assert.Equal(t, 544, tp1.BlockTokens)
	s.TP = 4
	tp4, ok := VLLMHybridLayoutOf(next, s)
	require.True(t, ok)
	// A quarter of the state over one KV head (2 heads do not split 4
	// ways): 274,432 / 1,024 = 268 -> 272.
	assert.Equal(t, 272, tp4.BlockTokens)
	assert.Equal(t, int64(272*1024), tp4.PageBytes)

	nano := model.Lookup("NVIDIA-Nemotron-3-Nano-30B-A3B")
	require.NotNil(t, nano)
	l, ok := VLLMHybridLayoutOf(nano, VLLMCacheSetup{Version: Version{0, 24, 0}, TP: 1, MaxModelLen: 8192, KVBytes: 2, ModelBytes: 2})
	require.True(t, ok)
	// 6 attention layers and 23 Mamba2 layers: groups of 6, one attention
	// group and four state groups (the last padded).
	assert.Equal(t, 6, l.LayersPerGroup)
	assert.Equal(t, 1, l.AttentionGroups)
	assert.Equal(t, 4, l.StateGroups)

	parallel := &model.Model{Name: "parallel", Layers: 24, Hidden: 1024, Heads: 8, KVHeads: 2, HeadDim: 128,
		LayerKinds: []model.Layer{{Kind: model.FullAttention, ConvState: 3 * 1024, SSMState: 16 * 64 * 128}}}
	l, ok = VLLMHybridLayoutOf(parallel, VLLMCacheSetup{Version: Version{0, 19, 0}, TP: 1, MaxModelLen: 4096, KVBytes: 2, ModelBytes: 2})
	require.True(t, ok)
	assert.Equal(t, 24, l.LayersPerGroup)
	assert.Equal(t, 1, l.AttentionGroups)
	assert.Equal(t, 1, l.StateGroups)
}
