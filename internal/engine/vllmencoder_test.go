package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// Qwen2.5-VL-7B-Instruct's encoder pass, by hand from its configs (the
// catalog's config.json vision_config and preprocessor_config.json):
//   - largest image: max_pixels 12,845,056 / (patch 14 × merge 2)² =
//     16,384 tokens of 2 × 2 patches, 65,536 patches, each of
//     3 × 14 × 14 × 2 (temporal) = 1,176 pixel values;
//   - budget at vllm serve's 8192 batched tokens: max(8192, 16,384) =
//     16,384 tokens, one item (vLLM 0.8.2 prints "a budget of 16384
//     tokens, and profiled with 1 image items");
//   - live per patch: the gated MLP's 4 × 1280 + 3 × 3420 = 15,380
//     values (the attention's 9 × 1280 = 11,520 is less), bf16, and the
//     float32 pixels: 65,536 × (15,380 × 2 + 1,176 × 4) = 2,324,168,704 B;
//   - encoder cache: 16,384 × 3,584 (the language model's width) × 2 =
//     117,440,512 B.
func TestVLLMEncoderPassQwen25VL7B(t *testing.T) {
	m := model.Lookup("Qwen2.5-VL-7B-Instruct")
	require.NotNil(t, m)
	require.NotNil(t, m.VisionItem)
	assert.Equal(t, 65536, m.VisionItem.Patches)
	assert.Equal(t, 16384, m.VisionItem.Tokens)
	e := VLLMEncoderPassOf(m, 8192, 2, 1)
	assert.Equal(t, 16384, e.BudgetTokens)
	assert.Equal(t, 1, e.Items)
	assert.Equal(t, int64(2_324_168_704), e.ActivationBytes)
	assert.Equal(t, int64(117_440_512), e.CacheBytes)
	// The LLM class's 16,384 batched tokens give the same budget.
	assert.Equal(t, e, VLLMEncoderPassOf(m, 16384, 2, 1))
}

// Gemma 3 4B's: SigLIP's fixed 896-pixel image is (896 / 14)² = 4,096
// patches of 3 × 14 × 14 = 588 values, pooled to 256 tokens; the budget
// of 8192 tokens holds 32 items (vLLM 0.19.0 prints "a budget of 8192
// tokens, and profiled with 32 image items"), 131,072 patches; live per
// patch 4 × 1152 + 2 × 4304 = 13,216 values (attention 9 × 1152 =
// 10,368): 131,072 × (13,216 × 2 + 588 × 4) = 3,772,776,448 B; cache
// 8192 × 2560 × 2 = 41,943,040 B. At vLLM 0.19.0 on an H100 the sampler
// warm-up (1024 × 262,208 logits × 15.45 B) outweighs the tower, so the
// profile's peak is the sampler's plus the cache.
func TestVLLMEncoderPassGemma3(t *testing.T) {
	m := model.Lookup("Gemma-3-4B")
	require.NotNil(t, m)
	e := VLLMEncoderPassOf(m, 8192, 2, 1)
	assert.Equal(t, VLLMEncoderPass{BudgetTokens: 8192, Items: 32, ActivationBytes: 3_772_776_448, CacheBytes: 41_943_040}, e)

	v, err := ParseVersion("0.19.0")
	require.NoError(t, err)
	d := VLLMSetup{Version: v, TotalBytes: 80 << 30, Name: "NVIDIA H100 80GB HBM3", TP: 1, MaxModelLen: 8192}
	s := VLLMStartupOf(m, d)
	assert.Equal(t, e, s.Encoder)
	sampler := int64(float64(1024) * float64(m.Vocab) * calibration.VLLMSamplerBytesPerLogit)
	assert.Greater(t, sampler, e.ActivationBytes)
	assert.Equal(t, sampler+e.CacheBytes, s.ActivationBytes)
}

// A model without a tower, or with one whose largest item is not known,
// has no encoder pass; the V0 engine (before 0.8.0) profiles none here.
func TestVLLMEncoderPassNone(t *testing.T) {
	assert.Zero(t, VLLMEncoderPassOf(model.Lookup("Llama-3.1-8B"), 8192, 2, 1))
	v, err := ParseVersion("0.7.3")
	require.NoError(t, err)
	s := VLLMStartupOf(model.Lookup("Qwen2.5-VL-7B-Instruct"), VLLMSetup{Version: v, TotalBytes: 80 << 30, TP: 1, MaxModelLen: 8192})
	assert.Zero(t, s.Encoder)
}

// Where the language model's pass is small, the tower's is the peak: a
// plan of one sequence of Qwen2.5-VL-7B-Instruct (--max-num-seqs 1) at
// vLLM 0.21.0 on an H100 samples one row of logits, and the 8192-token
// forward pass, 8192 × (8 × 3584 + 6 × 18,944) = 1,166,016,512 B, with the
// 117,440,512 B cache is under the tower's 2,324,168,704 B.
func TestVLLMEncoderPassIsThePeak(t *testing.T) {
	m := model.Lookup("Qwen2.5-VL-7B-Instruct")
	require.NotNil(t, m)
	v, err := ParseVersion("0.21.0")
	require.NoError(t, err)
	s := VLLMStartupOf(m, VLLMSetup{Version: v, TotalBytes: 80 << 30, Name: "NVIDIA H100 80GB HBM3", TP: 1, MaxModelLen: 8192, MaxNumSeqs: 1})
	assert.Equal(t, int64(2_324_168_704), s.ActivationBytes)
	// Split over two ranks the tower's MLP and heads halve: 4 × 1280 +
	// 3 × 3420 / 2 = 10,250 values a patch, 65,536 × (10,250 × 2 + 1,176
	// × 4) = 1,651,769,344 B, still above the rank's forward pass and cache.
	s = VLLMStartupOf(m, VLLMSetup{Version: v, TotalBytes: 80 << 30, Name: "NVIDIA H100 80GB HBM3", TP: 2, MaxModelLen: 8192, MaxNumSeqs: 1})
	assert.Equal(t, int64(1_651_769_344), s.ActivationBytes)
}

// Mistral Small 3.2's Pixtral tower: its 1540-pixel image is (1540 / 14)²
// = 12,100 patches of 3 × 14 × 14 = 588 values, merged 2 × 2 into 55 rows
// of 55 tokens and a break each, 3,080 tokens; the budget of 8192 holds 2
// (vLLM 0.19.0 prints "profiled with 2 image items"), 24,200 patches; live
// per patch its gated MLP's 4 × 1024 + 3 × 4096 = 16,384 values
// (attention 9 × 1024 = 9,216): 24,200 × (16,384 × 2 + 588 × 4) =
// 849,904,000 B; cache 8192 × 5120 × 2 = 83,886,080 B.
func TestVLLMEncoderPassPixtral(t *testing.T) {
	m := model.Lookup("Mistral-Small-3.2-24B-Instruct-2506")
	require.NotNil(t, m)
	require.NotNil(t, m.VisionItem)
	assert.Equal(t, model.VisionItem{Patches: 12100, Tokens: 3080, PatchValues: 588, Hidden: 1024, Intermediate: 4096, GatedMLP: true}, *m.VisionItem)
	assert.Equal(t, VLLMEncoderPass{BudgetTokens: 8192, Items: 2, ActivationBytes: 849_904_000, CacheBytes: 83_886_080}, VLLMEncoderPassOf(m, 8192, 2, 1))
}

// Llama 4 Scout's tower: vLLM's dummy image is max_patches (16) tiles of
// 336 pixels tall and one wide, which the processor cuts into 16 tiles and
// adds a global one, 17 tiles of (336 / 14)² = 576 patches and a class
// token, 9,809 patches of 3 × 14 × 14 = 588 values; the pixel shuffle
// (ratio 0.5) leaves 144 tokens a tile, 2,448 an image. The budget of
// 8192 holds 3 (vLLM 0.19.0 prints "profiled with 3 image items"), 29,427
// patches; live per patch at TP 4 its plain MLP's 4 × 1408 + 2 × 5632 / 4
// = 8,448 values (attention 3 × 1408 + 6 × 1408 / 4 = 6,336): 29,427 ×
// (8,448 × 2 + 588 × 4) = 566,410,896 B; cache 8192 × 5120 × 2 =
// 83,886,080 B.
func TestVLLMEncoderPassLlama4(t *testing.T) {
	m := model.Lookup("Llama-4-Scout-17B-16E-Instruct")
	require.NotNil(t, m)
	require.NotNil(t, m.VisionItem)
	assert.Equal(t, model.VisionItem{Patches: 9809, Tokens: 2448, PatchValues: 588, Hidden: 1408, Intermediate: 5632}, *m.VisionItem)
	assert.Equal(t, VLLMEncoderPass{BudgetTokens: 8192, Items: 3, ActivationBytes: 566_410_896, CacheBytes: 83_886_080}, VLLMEncoderPassOf(m, 8192, 2, 4))
}
