package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// ropeBytes is VLLMRopeCacheBytes of the catalog model name at 2 bytes a
// value.
func ropeBytes(t *testing.T, name string) int64 {
	t.Helper()
	m := model.Lookup(name)
	require.NotNil(t, m, name)
	return VLLMRopeCacheBytes(m, 2)
}

// The rotary table vLLM builds for a Llama or Llama 4 model: its
// max_position_embeddings positions of head_dim cos and sin values in the
// model's dtype, whole on each rank. Llama 4 Scout's 10,485,760 positions
// make it 2.5 GiB, which the "Model loading took 53.12 GiB" of row
// llmd-meta-llama-llama-4-scout--h100-80gb--tp4pp1dp1--8192
// (internal/calibration/data/vllm_startup.json) holds beside the 50.59 GiB
// of weights a rank; Llama 3.1 8B's 131,072 positions make 32 MiB (its
// rows print 0.03 GiB above the weights at TP 1, 2 and 4), 64 MiB at fp32.
func TestVLLMRopeCacheBytes(t *testing.T) {
	assert.Equal(t, int64(10_485_760*128*2), ropeBytes(t, "Llama-4-Scout-17B-16E-Instruct"))
	assert.Equal(t, int64(5<<29), ropeBytes(t, "Llama-4-Scout-17B-16E-Instruct"), "2.5 GiB")
	llama := model.Lookup("Llama-3.1-8B")
	require.NotNil(t, llama)
	assert.Equal(t, int64(32<<20), VLLMRopeCacheBytes(llama, 2))
	assert.Equal(t, int64(64<<20), VLLMRopeCacheBytes(llama, 4))
	// Gemma 3 4B: a default table for its sliding layers and the global
	// layers' table of linear scaling factor 8 (8 × 131,072 positions),
	// × 256 values × 2 bytes: 64 + 512 MiB, the 0.57 GiB its row prints
	// above the weights; the 27B's head_dim of 128 halves it.
	assert.Equal(t, int64((131_072+8*131_072)*256*2), ropeBytes(t, "Gemma-3-4B"))
	assert.Equal(t, int64((131_072+8*131_072)*128*2), ropeBytes(t, "Gemma-3-27B"))
	assert.Zero(t, VLLMRopeCacheBytes(&model.Model{Architecture: "llama", HeadDim: 128}, 2), "no max_position_embeddings")
	assert.Zero(t, VLLMRopeCacheBytes(nil, 2))
	huge := &model.Model{Architecture: "llama", MaxContext: 1 << 30, HeadDim: 1 << 20, Rope: model.Rope{Type: "linear", Factor: 1024}}
	assert.Equal(t, int64(1<<50), VLLMRopeCacheBytes(huge, 4), "capped, not overflowed")
}

// Every family's table follows its rotary configuration, not a list of
// families: the default kind over max_position_embeddings (Qwen2.5 7B's
// 131,072 × 128 × 2 bytes, 32 MiB), a partial rotary dimension
// (Phi-4-mini's 0.75 of 128, Qwen3-Next's 0.25 of 256, MiniMax-M2.5's
// rotary_dim 64), multi-head latent attention's qk_rope_head_dim
// (DeepSeek-V2-Lite: 163,840 × 64), gpt-oss's float32 table whatever the
// model's dtype, a flat transformers-v5 YaRN (Kimi-K2.7-Code: 4096 × 64
// positions of its 64 rotated values), and per-layer-type tables (Laguna:
// YaRN global layers on half of each 128-wide head, default sliding ones
// on all of it; Gemma 4: proportional global layers on a quarter of their
// 512-wide heads, default sliding ones on the 256-wide), MRoPE's four
// times the positions (Qwen3.6: 262,144 × 4 on a quarter of 256;
// Qwen2.5-VL: 128,000 × 4 × 128, 125 MiB, with which its row's "Model
// loading took 15.63 GiB" is met to −0.4 %).
// Nemotron-H's attention has none.
func TestVLLMRopeCacheBytesByConfiguration(t *testing.T) {
	for name, want := range map[string]int64{
		"Qwen2.5-7B":                  131_072 * 128 * 2,
		"Phi-4-mini-instruct":         (4096 + 131_072) * 96 * 2,
		"Qwen3-Next-80B-A3B-Instruct": 262_144 * 64 * 2,
		"MiniMax-M2.5":                196_608 * 64 * 2,
		"DeepSeek-V2-Lite":            163_840 * 64 * 2,
		"gpt-oss-20b":                 131_072 * 64 * 4,
		"Kimi-K2.7-Code":              4096 * 64 * 64 * 2,
		"Laguna-XS.2":                 4096*64*64*2 + 262_144*128*2,
		"Gemma-4-31B-IT":              262_144*128*2 + 262_144*256*2,
		"NVIDIA-Nemotron-Nano-9B-v2":  0,
		"Qwen3.6-27B":                 262_144 * 4 * 64 * 2,
		"Qwen2.5-VL-7B-Instruct":      128_000 * 4 * 128 * 2,
	} {
		assert.Equal(t, want, ropeBytes(t, name), name)
	}
	gptOSS := model.Lookup("gpt-oss-20b")
	require.NotNil(t, gptOSS)
	assert.Equal(t, VLLMRopeCacheBytes(gptOSS, 2), VLLMRopeCacheBytes(gptOSS, 4), "float32 whatever the dtype")
}

// The positions each rotary class tabulates for max_position_embeddings
// n (vllm/model_executor/layers/rotary_embedding/ at the commits
// vllmrope.go cites): n for the default and Llama 3 kinds; n × factor for
// linear and dynamic NTK scaling; ⌈original × factor⌉ for YaRN; original
// + n for LongRoPE's short and long tables; four times the length given
// for MRoPE, before a YaRN factor. The configurations are Phi-3.5-mini's
// (rope_scaling "longrope", original_max_position_embeddings 4096,
// max_position_embeddings 131072), Llama 3.1's (llama3, factor 8,
// original 8192), gpt-oss's (yarn, factor 32, original 4096) and
// Qwen2.5-VL's (mrope sections, 128000 positions); the dynamic NTK and
// MRoPE-with-YaRN lines check the classes' formulas alone.
func TestVLLMRotaryPositions(t *testing.T) {
	assert.Equal(t, int64(131_072), vllmRotaryPositions(model.Rope{}, 131_072))
	assert.Equal(t, int64(131_072), vllmRotaryPositions(model.Rope{Type: "llama3", Factor: 8, OriginalMaxPositions: 8192}, 131_072))
	assert.Equal(t, int64(8*131_072), vllmRotaryPositions(model.Rope{Type: "linear", Factor: 8}, 131_072))
	assert.Equal(t, int64(4*2048), vllmRotaryPositions(model.Rope{Type: "dynamic", Factor: 4}, 2048))
	assert.Equal(t, int64(131_072), vllmRotaryPositions(model.Rope{Type: "yarn", Factor: 32, OriginalMaxPositions: 4096}, 131_072))
	assert.Equal(t, int64(4096+131_072), vllmRotaryPositions(model.Rope{Type: "longrope", OriginalMaxPositions: 4096}, 131_072))
	assert.Equal(t, int64(4*128_000), vllmRotaryPositions(model.Rope{Type: "default", MRoPE: true}, 128_000))
	assert.Equal(t, int64(4*32_768*4), vllmRotaryPositions(model.Rope{Type: "yarn", Factor: 4, OriginalMaxPositions: 32_768, MRoPE: true}, 131_072))
	assert.Equal(t, int64(2048), vllmRotaryPositions(model.Rope{Type: "an unknown kind", Factor: 4}, 2048), "an unknown kind: the default length")
}
