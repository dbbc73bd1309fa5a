package quant

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

func catalogModel(t *testing.T, name string) *model.Model {
	t.Helper()
	m := model.Lookup(name)
	require.NotNil(t, m, name)
	return m
}

func TestParse(t *testing.T) {
	for in, want := range map[string]Level{
		"fp16": FP16, "FP16": FP16, "f16": FP16, "BF16": BF16, "fp32": FP32, "F32": FP32,
		"fp8": FP8, "int8": INT8, "int4": INT4, "Q4_K_M": "q4_k_m", "q8_0": "q8_0",
		"IQ4_XS": "iq4_xs", "q4_k": "q4_k", " q6_k ": "q6_k", "mxfp4": "mxfp4",
	} {
		got, err := Parse(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "int3", "q9_k", "auto", "f64", "i32", "q8_k"} {
		_, err := Parse(bad)
		require.Error(t, err, bad)
		assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err), bad)
	}
}

func TestLevelsOrder(t *testing.T) {
	assert.Equal(t, []Level{FP32, BF16, FP16, FP8, INT8, INT4}, Levels())
	for _, l := range Levels() {
		assert.True(t, l.IsContract())
		assert.Equal(t, string(l), l.Native())
	}
}

// Bits per weight of uniform types: block bytes × 8 / block size from
// ggml's type traits (Q4_0: 18 B / 32, Q8_0: 34 B / 32, Q6_K: 210 B / 256).
func TestBitsPerWeight(t *testing.T) {
	for l, want := range map[Level]float64{
		FP32: 32, FP16: 16, BF16: 16, FP8: 8, INT8: 8, INT4: 4.125,
		"q4_k": 4.5, "q6_k": 6.5625, "q3_k": 3.4375, "mxfp4": 4.25,
	} {
		assert.InDelta(t, want, l.BitsPerWeight(), 0.07, l)
	}
	// Mixes: whole-model figure on the reference shape, above the base type.
	assert.Greater(t, Level("q4_k_m").BitsPerWeight(), 4.5)
	assert.Less(t, Level("q4_k_m").BitsPerWeight(), 5.0)
	assert.InDelta(t, 4.5, Level("q4_0").BitsPerWeight(), 0.15)
	assert.Zero(t, Level("nope").BitsPerWeight())
}

func TestNative(t *testing.T) {
	for l, want := range map[Level]string{"q4_k_m": "int4", "q4_0": "int4", "iq4_xs": "int4", "q8_0": "int8", "q6_k": "int8", "q5_k_m": "int8", "q2_k": "int4"} {
		assert.Equal(t, want, l.Native(), l)
	}
}

func TestWeightsBytesWithoutShape(t *testing.T) {
	m := &model.Model{Params: 70e9}
	assert.Equal(t, int64(140e9), WeightsBytes(m, FP16))
	assert.Equal(t, int64(70e9), WeightsBytes(m, INT8))
	assert.Equal(t, int64(280e9), WeightsBytes(m, FP32))
	assert.Zero(t, WeightsBytes(&model.Model{}, FP16))
}

// Quantized contract levels keep the token embeddings and the head at 16
// bits: for Llama-3.1-8B (1.05 B of its 8.03 B in those two tables) int4
// is far above params/2.
func TestWeightsKeepEmbeddingsAt16Bits(t *testing.T) {
	m := catalogModel(t, "Llama-3.1-8B")
	embed := 2 * 128256.0 * 4096
	want := (float64(m.Params)-embed)*4.125/8 + embed*2
	assert.InDelta(t, want, float64(WeightsBytes(m, INT4)), 0.01*want)
	assert.Equal(t, WeightsBytes(m, FP16), 2*m.Params)
}

// KV cache sizes from the formula's published examples.
func TestKVCacheBytes(t *testing.T) {
	kv := KVOptions{}
	// Llama 3.1 8B at 128k: 32 × 8 × 128 × 2 × 2 B × 131072 ≈ 17 GB.
	assert.Equal(t, int64(32*8*128*2*2*131072), KVCacheBytes(catalogModel(t, "Llama-3.1-8B"), 131072, 1, kv))
	// 70B at 128k ≈ 43 GB.
	assert.Equal(t, int64(80*8*128*2*2*131072), KVCacheBytes(catalogModel(t, "Llama-3.1-70B"), 131072, 1, kv))
	// Batch and fp8 cache scale linearly.
	m := catalogModel(t, "Llama-3.1-8B")
	assert.Equal(t, 4*KVCacheBytes(m, 1000, 1, kv), KVCacheBytes(m, 1000, 4, kv))
	assert.Equal(t, KVCacheBytes(m, 1000, 2, kv)/2, KVCacheBytes(m, 1000, 2, KVOptions{Bytes: 1}))
	// MHA without num_key_value_heads: kv heads = heads; head_dim = hidden/heads.
	assert.Equal(t, int64(32*32*128*2*2*4096), KVCacheBytes(catalogModel(t, "Llama-2-7B"), 4096, 1, kv))
	// MLA: DeepSeek-V3 caches 512 + 64 values per token per layer.
	assert.Equal(t, int64(61*576*2*32768), KVCacheBytes(catalogModel(t, "DeepSeek-V3"), 32768, 1, kv))
	// Sliding window: Mistral 7B v0.1 caps every layer at 4096 tokens.
	mis := catalogModel(t, "Mistral-7B-v0.1")
	assert.Equal(t, KVCacheBytes(mis, 4096, 1, kv), KVCacheBytes(mis, 32768, 1, kv))
	// Gemma 2 9B: 21 global layers grow, 21 local ones stop at 4096.
	g := catalogModel(t, "Gemma-2-9B")
	per := int64(2 * 8 * 256 * 2)
	assert.Equal(t, per*(21*8192+21*4096), KVCacheBytes(g, 8192, 1, kv))
	// No shape: unknown, 0.
	assert.Zero(t, KVCacheBytes(&model.Model{Params: 7e9}, 4096, 1, kv))
	assert.Zero(t, KVCacheBytes(m, 0, 1, kv))
}

// The one KV-capacity row of memory.json: SGLang, Qwen3-235B-A22B-FP8 on 4
// H100 (TP 4, so each GPU holds 1 of the 4 KV heads): 367404 tokens, K
// cache 8.23 (GiB) per GPU.
func TestKVCapacityRow(t *testing.T) {
	m := catalogModel(t, "Qwen3-235B-A22B")
	kv := float64(KVCacheBytes(m, 367404, 1, KVOptions{Bytes: 2}))
	perGPUK := kv / 2 / 4
	assert.InDelta(t, 8.23, perGPUK/(1<<30), 0.01*8.23)
}

// TestInferenceMemoryRow replays the nvidia-smi row of memory.json:
// Llama-2-7b, FastChat (HF transformers) --load-8bit on an RTX 3090,
// 7843 MiB. The row does not say how long the conversation was; it is
// replayed at 512 tokens and asserted within 15 % (docs/accuracy.md).
func TestInferenceMemoryRow(t *testing.T) {
	m := catalogModel(t, "Llama-2-7B")
	b := Estimate(m, INT8, 512, 1, KVOptions{})
	got := float64(b.TotalBytes) / (1 << 20)
	t.Logf("Llama-2-7B int8 ctx 512: estimate %.0f MiB, measured 7843 MiB (%+.1f%%)", got, 100*(got-7843)/7843)
	assert.InDelta(t, 7843, got, 0.15*7843)
}

func TestEstimateBreakdown(t *testing.T) {
	m := catalogModel(t, "Llama-3.1-70B")
	b := Estimate(m, BF16, 8192, 4, KVOptions{})
	assert.Equal(t, b.WeightsBytes+b.KVCacheBytes+b.ActivationsBytes+b.OverheadBytes, b.TotalBytes)
	assert.Equal(t, WeightsBytes(m, BF16), b.WeightsBytes)
	assert.Equal(t, KVCacheBytes(m, 8192, 4, KVOptions{}), b.KVCacheBytes)
	assert.Positive(t, b.ActivationsBytes)
	assert.Equal(t, PerDeviceOverheadBytes(), b.OverheadBytes)
	// Activations depend on the chunk, not the whole context.
	assert.Equal(t, ActivationsBytes(m, 8192, 4, KVOptions{}), ActivationsBytes(m, 100000, 4, KVOptions{}))
	assert.Less(t, ActivationsBytes(m, 16, 1, KVOptions{}), ActivationsBytes(m, 8192, 1, KVOptions{}))

	est := Estimate(&model.Model{Params: 7e9, ActiveParams: 7e9}, FP16, 4096, 1, KVOptions{})
	assert.Contains(t, est.Notes[0], "shape unknown")
	long := Estimate(catalogModel(t, "Mistral-7B-v0.1"), FP16, 65536, 1, KVOptions{})
	assert.Len(t, long.Notes, 2) // sliding window; over the maximum context
}

// A model read from a GGUF file, asked about at its own type, is charged
// the exact tensor bytes of the file; at another level, the per-tensor model.
func TestWeightsOfGGUFModelAtItsOwnType(t *testing.T) {
	m := *catalogModel(t, "Llama-3.1-8B")
	m.FileQuant, m.FileWeightBytes = "Q4_K_M", 4_920_000_000
	assert.Equal(t, int64(4_920_000_000), WeightsBytes(&m, "q4_k_m"))
	assert.Equal(t, WeightsBytes(catalogModel(t, "Llama-3.1-8B"), "q8_0"), WeightsBytes(&m, "q8_0"))
	noHeads := &model.Model{Params: 1e9, Layers: 10, Hidden: 2048}
	assert.Contains(t, Estimate(noHeads, FP16, 1024, 1, KVOptions{}).Notes, "attention heads unknown: the KV cache is not counted")
}

func TestLargest(t *testing.T) {
	for _, tc := range []struct {
		name      string
		limit, at int // ok(n) is n <= at
		want      int
	}{
		{"none fits", 100, 0, 0},
		{"only one", 100, 1, 1},
		{"middle", 100, 37, 37},
		{"all fit", 100, 1000, 100},
		{"limit one", 1, 5, 1},
		{"limit below one", 0, 5, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			got := Largest(tc.limit, func(n int) bool { calls++; return n <= tc.at })
			assert.Equal(t, tc.want, got)
			assert.LessOrEqual(t, calls, 1+int(math.Ceil(math.Log2(float64(tc.limit)+1))), "binary search, not a scan")
		})
	}
}

// TestActivationsWithoutFlashAttention checks the working buffer of
// llama.cpp -fa off against the compute buffers it allocated (CPU backend,
// internal/calibration/data/llamacpp_measurements.json, llama.cpp 34af94cd, n_ubatch 512):
// the fp32 scores of one micro-batch over the whole context for every head,
// the fp32 mask beside them, and a few hidden-sized rows. With flash
// attention the same runs allocate 258.5 and 300.25 MiB.
func TestActivationsWithoutFlashAttention(t *testing.T) {
	off := KVOptions{NoFlashAttention: true}
	for _, tc := range []struct {
		model       string
		ctx         int
		measuredMiB float64
	}{
		{"Llama-3.2-1B", 32768, 2134.01},
		{"Llama-3.2-1B", 4096, 286.01},
		{"Qwen2.5-0.5B", 32768, 969.26},
		{"TinyLlama-1.1B-Chat-v1.0", 2048, 153.01},
		{"Phi-3-mini-4k-instruct", 4096, 294.01},
	} {
		m := catalogModel(t, tc.model)
		// llama.cpp disables Phi-3's window: every layer attends the context.
		off.NoSlidingWindow = m.Arch().LlamaCPPFullWindow
		got := float64(ActivationsBytes(m, tc.ctx, 1, off)) / (1 << 20)
		t.Logf("%s ctx %d -fa off: %.1f MiB, llama.cpp %.1f MiB (%+.1f%%)", tc.model, tc.ctx, got, tc.measuredMiB, 100*(got/tc.measuredMiB-1))
		assert.InDelta(t, tc.measuredMiB, got, 0.05*tc.measuredMiB, tc.model)
	}
	// Flash attention (the default) does not grow with the context.
	m := catalogModel(t, "Llama-3.2-1B")
	assert.Equal(t, ActivationsBytes(m, 4096, 1, KVOptions{}), ActivationsBytes(m, 32768, 1, KVOptions{}))
	assert.Greater(t, ActivationsBytes(m, 32768, 1, off), 7*ActivationsBytes(m, 32768, 1, KVOptions{}))
}

// TestKVCacheSumsPerLayer: the cache is the sum over the layers of what
// each layer's kind holds. Gemma 3 27B under llama.cpp's rules: 52 windowed
// layers hold the 1024-token window plus one 512-token micro-batch, padded
// to 256 (1536 cells), the 10 global layers the whole context.
func TestKVCacheSumsPerLayer(t *testing.T) {
	g := catalogModel(t, "Gemma-3-27B")
	perCell := int64(2 * 16 * 128 * 2) // K and V, 16 KV heads of 128, fp16
	llama := KVOptions{Bytes: 2, SlidingExtra: 512, SlidingPad: 256}
	assert.Equal(t, perCell*(52*1536+10*32768), KVCacheBytes(g, 32768, 1, llama))
	// The same sum, walked layer by layer.
	var walked int64
	for i := 0; i < g.Layers; i++ {
		cells := int64(32768)
		if l := g.LayerAt(i); l.Kind == model.SlidingWindow {
			cells = 1536
		}
		walked += perCell * cells
	}
	assert.Equal(t, walked, KVCacheBytes(g, 32768, 1, llama))
	// Below the window every layer holds the context.
	assert.Equal(t, perCell*62*1000, KVCacheBytes(g, 1000, 1, llama))
}

// TestKVCacheChunkedAndSharedLayers: a chunked layer holds at most one
// chunk; a layer reading another's cache holds nothing.
func TestKVCacheChunkedAndSharedLayers(t *testing.T) {
	kv := KVOptions{Bytes: 2}
	m := &model.Model{Layers: 48, Hidden: 5120, Heads: 40, KVHeads: 8, HeadDim: 128,
		LayerKinds: []model.Layer{
			{Kind: model.ChunkedAttention, Window: 8192}, {Kind: model.ChunkedAttention, Window: 8192},
			{Kind: model.ChunkedAttention, Window: 8192}, {Kind: model.FullAttention},
		}}
	perCell := int64(2 * 8 * 128 * 2)
	assert.Equal(t, perCell*(36*8192+12*65536), KVCacheBytes(m, 65536, 1, kv))
	assert.Equal(t, perCell*48*4096, KVCacheBytes(m, 4096, 1, kv))

	shared := &model.Model{Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128,
		LayerKinds: []model.Layer{{Kind: model.FullAttention}, {Kind: model.SharedKV, SharesWith: 0}}}
	full := &model.Model{Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128}
	assert.Equal(t, KVCacheBytes(full, 8192, 1, kv)/2, KVCacheBytes(shared, 8192, 1, kv))

	// A layer with its own KV heads or head size caches at its own width.
	wide := &model.Model{Layers: 2, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128,
		LayerKinds: []model.Layer{{Kind: model.FullAttention}, {Kind: model.FullAttention, KVHeads: 4, HeadDim: 256}}}
	assert.Equal(t, int64((2*8*128+2*4*256)*1000*2), KVCacheBytes(wide, 1000, 1, kv))
}

// TestKVCacheOfHybridModels: recurrent layers keep a state per sequence,
// whatever the context, in fp32 (llama.cpp's recurrent cells); attention
// layers cache per token. Published shapes:
//   - Qwen3-Next-80B-A3B
//     (https://huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct/blob/main/config.json):
//     48 layers, full_attention_interval 4 (every 4th layer attention, the
//     others gated DeltaNet), num_key_value_heads 2, head_dim 256,
//     linear_num_key_heads 16, linear_key_head_dim 128,
//     linear_num_value_heads 32, linear_value_head_dim 128,
//     linear_conv_kernel_dim 4;
//   - Jamba-v0.1 (https://huggingface.co/ai21labs/Jamba-v0.1/blob/main/config.json):
//     32 layers, attention where (i - attn_layer_offset 4) % attn_layer_period
//     8 == 0, the others Mamba with hidden_size 4096, mamba_expand 2,
//     mamba_d_state 16, mamba_d_conv 4; num_key_value_heads 8 of 128.
func TestKVCacheOfHybridModels(t *testing.T) {
	kv := KVOptions{Bytes: 2}
	gdn := model.GatedDeltaNetState(16, 128, 32, 128, 4)
	next := &model.Model{Layers: 48, Hidden: 2048, Heads: 16, KVHeads: 2, HeadDim: 256,
		LayerKinds: []model.Layer{gdn, gdn, gdn, {Kind: model.FullAttention}}}
	state := int64(36 * (3*(2*16*128+32*128) + 32*128*128) * 4)
	attn := func(ctx int64) int64 { return 12 * 2 * 2 * 256 * ctx * 2 }
	assert.Equal(t, attn(262144)+state, KVCacheBytes(next, 262144, 1, kv))
	assert.Equal(t, attn(4096)+state, KVCacheBytes(next, 4096, 1, kv))
	assert.Equal(t, 8*(attn(4096)+state), KVCacheBytes(next, 4096, 8, kv))
	// Costed as 48 attention layers it would be four times the cache at
	// long context.
	dense := *next
	dense.LayerKinds = nil
	assert.Equal(t, 4*attn(262144), KVCacheBytes(&dense, 262144, 1, kv))
	// A bf16 state store (vLLM's mamba_cache_dtype auto on a bf16 model)
	// halves the state.
	assert.Equal(t, attn(4096)+state/2, KVCacheBytes(next, 4096, 1, KVOptions{Bytes: 2, StateBytes: 2}))

	mamba := model.Mamba2State(2*4096, 0, 16, 4)
	kinds := make([]model.Layer, 8)
	for i := range kinds {
		kinds[i] = mamba
	}
	kinds[4] = model.Layer{Kind: model.FullAttention}
	jamba := &model.Model{Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, LayerKinds: kinds}
	assert.Equal(t, 4, jamba.CountLayers(model.FullAttention))
	jambaState := int64(28 * (3*8192 + 8192*16) * 4)
	assert.Equal(t, int64(4*2*8*128*131072*2)+jambaState, KVCacheBytes(jamba, 131072, 1, kv))
	notes := estimateNotes(jamba, 131072)
	assert.Contains(t, notes, "28 of 32 layers keep a recurrent state per sequence instead of a per-token KV cache")
}

// TestHybridKVFollowsLayerKinds: the KV cache of the catalog's hybrid
// models is their attention layers' per-token cache plus their recurrent
// layers' fixed state, from the published sizes: Nemotron-H-56B (10
// attention layers of 118, 8 KV heads of 128; 54 Mamba2 mixers of 256
// heads of 64, 8 groups, state 256, conv 4), Qwen3.5-35B-A3B (10 of 40
// attend with 2 KV heads of 256; 30 gated DeltaNet layers of 16 key heads
// and 32 value heads of 128, conv 4), Llama 4 Scout (12 global layers of 48,
// 36 within 8192-token chunks, 8 KV heads of 128).
func TestHybridKVFollowsLayerKinds(t *testing.T) {
	const ctx = 32768
	for _, tc := range []struct {
		name string
		want float64 // bytes at ctx tokens, one sequence, 2-byte cache, 4-byte state
	}{
		{"Nemotron-H-56B-Base-8K", 10*2*8*128*ctx*2 + 54*(3*(16384+2*8*256)+16384*256)*4},
		{"Qwen3.5-35B-A3B", 10*2*2*256*ctx*2 + 30*(3*(2*16*128+32*128)+32*128*128)*4},
		{"Llama-4-Scout-17B-16E-Instruct", (12*ctx + 36*8192) * 2 * 8 * 128 * 2},
	} {
		m := model.Lookup(tc.name)
		require.NotNil(t, m, tc.name)
		assert.Equal(t, int64(tc.want), KVCacheBytes(m, ctx, 1, KVOptions{}), tc.name)
	}
}

// A window layer under WindowTokensRatio is charged that share of the
// context whatever its window, as SGLang's pools hold it
// (engine.SGLangWindowTokensRatio): gpt-oss-120b's 18 sliding layers at
// 0.8 of the context beside its 18 full ones (8 KV heads of 64, bf16:
// 2048 bytes a layer a token), Llama 4 Scout's 36 chunked layers the same,
// and at 1 every layer holds the whole context.
func TestKVCacheWindowTokensRatio(t *testing.T) {
	const ctx = 10000
	oss := catalogModel(t, "gpt-oss-120b")
	perLayer := 2.0 * 8 * 64 * 2
	assert.Equal(t, int64(math.Ceil(perLayer*ctx*(18+0.8*18))), KVCacheBytes(oss, ctx, 1, KVOptions{Bytes: 2, WindowTokensRatio: 0.8}))
	assert.Equal(t, int64(perLayer*ctx*36), KVCacheBytes(oss, ctx, 1, KVOptions{Bytes: 2, WindowTokensRatio: 1}))
	assert.Equal(t, int64(perLayer*(ctx*18+128*18)), KVCacheBytes(oss, ctx, 1, KVOptions{Bytes: 2}), "without it, the window")
	scout := catalogModel(t, "Llama-4-Scout-17B-16E-Instruct")
	perLayer = 2.0 * 8 * 128 * 2
	assert.Equal(t, int64(math.Ceil(perLayer*ctx*(12+0.8*36))), KVCacheBytes(scout, ctx, 1, KVOptions{Bytes: 2, WindowTokensRatio: 0.8}))
}

// Under StatePoolRatio a hybrid's recurrent states are not charged per
// sequence; its attention tokens are charged (1 + ratio) times instead, as
// SGLang splits its pool (engine.SGLangMambaFullMemoryRatio):
// Qwen3-Next-80B-A3B's 12 full-attention layers of 2 KV heads of 256, bf16,
// 24,576 bytes a token, at 1.9. A model without recurrent layers is
// charged as without the option.
func TestKVCacheStatePoolRatio(t *testing.T) {
	const ctx = 10000
	next := catalogModel(t, "Qwen3-Next-80B-A3B-Instruct")
	assert.Equal(t, int64(math.Ceil(24576*ctx*1.9)), KVCacheBytes(next, ctx, 1, KVOptions{Bytes: 2, StatePoolRatio: 0.9}))
	assert.Greater(t, KVCacheBytes(next, ctx, 1, KVOptions{Bytes: 2}), int64(24576*ctx), "without it, the states beside the tokens")
	llama := catalogModel(t, "Llama-3.1-8B")
	assert.Equal(t, KVCacheBytes(llama, ctx, 1, KVOptions{Bytes: 2}), KVCacheBytes(llama, ctx, 1, KVOptions{Bytes: 2, StatePoolRatio: 0.9}))
}
