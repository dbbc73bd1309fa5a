package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLayerCountsCoverEveryLayer: the pattern's counts add up to the
// model's depth and agree with a walk over every layer, for every catalog
// model.
func TestLayerCountsCoverEveryLayer(t *testing.T) {
	for _, e := range catalog.entries {
		m := e.model
		total := 0
		byKind := map[LayerKind]int{}
		for l, n := range m.LayerCounts() {
			total += n
			byKind[l.Kind] += n
		}
		assert.Equal(t, m.Layers, total, e.Name)
		walked := map[LayerKind]int{}
		for i := 0; i < m.Layers; i++ {
			walked[m.LayerAt(i).Kind]++
		}
		assert.Equal(t, walked, byKind, e.Name)
	}
}

// TestSlidingLayerIndices: which layers use the window, by index, as the
// reference implementations decide: Gemma 2 slides on even layers
// (transformers Gemma2DecoderLayer: is_sliding = not bool(layer_idx % 2)),
// Gemma 3 keeps every 6th layer global (is_sliding = bool((layer_idx + 1) %
// sliding_window_pattern)), gpt-oss lists layer_types starting with
// "sliding_attention".
func TestSlidingLayerIndices(t *testing.T) {
	for _, tc := range []struct {
		name   string
		global []int // some global layers
		local  []int // some windowed layers
	}{
		{"Gemma-2-9B", []int{1, 3, 41}, []int{0, 2, 40}},
		{"Gemma-3-27B", []int{5, 11, 59}, []int{0, 4, 6, 60, 61}},
		{"gpt-oss-120b", []int{1, 35}, []int{0, 34}},
	} {
		m := Lookup(tc.name)
		require.NotNil(t, m, tc.name)
		for _, i := range tc.global {
			assert.Equal(t, FullAttention, m.LayerAt(i).Kind, "%s layer %d", tc.name, i)
		}
		for _, i := range tc.local {
			assert.Equal(t, SlidingWindow, m.LayerAt(i).Kind, "%s layer %d", tc.name, i)
		}
	}
}

// TestDefaultLayer: a model without a pattern is uniform: MLA when it has a
// latent, else full attention.
func TestDefaultLayer(t *testing.T) {
	ds := Lookup("DeepSeek-V3")
	require.NotNil(t, ds)
	assert.Empty(t, ds.LayerKinds)
	assert.Equal(t, Layer{Kind: LatentAttention, LatentDim: 512, RopeDim: 64}, ds.LayerAt(60))
	assert.Equal(t, 61, ds.CountLayers(LatentAttention))
	ll := Lookup("Llama-3.1-8B")
	require.NotNil(t, ll)
	assert.Equal(t, 32, ll.CountLayers(FullAttention))
	w, n := ll.SlidingLayers()
	assert.Zero(t, w)
	assert.Zero(t, n)
}

// TestRecurrentStateSizes: per-sequence state of the published shapes.
// Qwen3-Next-80B-A3B's gated DeltaNet
// (https://huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct/blob/main/config.json:
// linear_num_key_heads 16, linear_key_head_dim 128, linear_num_value_heads
// 32, linear_value_head_dim 128, linear_conv_kernel_dim 4) keeps a 3-tap
// window of q, k, v (2·16·128 + 32·128 = 8192 channels) and a 128 × 128
// matrix per value head. Jamba-v0.1's Mamba layers
// (https://huggingface.co/ai21labs/Jamba-v0.1/blob/main/config.json, the
// defaults of transformers' JambaConfig: hidden_size 4096, mamba_expand 2,
// mamba_d_state 16, mamba_d_conv 4) keep 3 inputs of the 8192-wide inner
// stream and an 8192 × 16 state.
func TestRecurrentStateSizes(t *testing.T) {
	gdn := GatedDeltaNetState(16, 128, 32, 128, 4)
	assert.Equal(t, Recurrent, gdn.Kind)
	assert.Equal(t, int64(3*8192), gdn.ConvState)
	assert.Equal(t, int64(32*128*128), gdn.SSMState)
	assert.Equal(t, int64(24576+524288), gdn.StateElements())
	assert.False(t, gdn.CachesPerToken())

	mamba := Mamba2State(2*4096, 0, 16, 4)
	assert.Equal(t, int64(3*8192), mamba.ConvState)
	assert.Equal(t, int64(8192*16), mamba.SSMState)
	// Mamba2 adds the B and C groups to the convolution's channels.
	m2 := Mamba2State(8192, 8, 128, 4)
	assert.Equal(t, int64(3*(8192+2*8*128)), m2.ConvState)

	hybrid := &Model{Layers: 48, LayerKinds: []Layer{gdn, gdn, gdn, {Kind: FullAttention}}}
	assert.InDelta(t, 36*float64(gdn.StateElements()), hybrid.RecurrentStateElements(), 0)
	assert.Zero(t, Lookup("Llama-3.1-8B").RecurrentStateElements())

	assert.Zero(t, Layer{Kind: FullAttention}.StateElements())
	assert.False(t, Layer{Kind: SharedKV}.CachesPerToken())
}

// TestArchTable: the quirks are looked up by model_type, families share
// theirs, an unknown architecture has none, and the GGUF names map back.
func TestArchTable(t *testing.T) {
	f := ArchOf("falcon")
	assert.True(t, f.PlainMLP && f.Falcon && f.TiedByDefault)
	assert.True(t, ArchOf("gpt_neox").PlainMLP)
	assert.False(t, ArchOf("gpt_neox").Falcon)
	assert.True(t, ArchOf("gemma3").TiedByDefault, "gemma family")
	assert.True(t, ArchOf("gemma3n_text").TiedByDefault, "gemma family")
	assert.Equal(t, 2, ArchOf("gemma2").GlobalEvery)
	assert.True(t, ArchOf("phi3").LlamaCPPFullWindow)
	assert.True(t, ArchOf("llama").Llama70B)
	assert.True(t, ArchOf("").Llama70B)
	assert.Equal(t, Arch{}, ArchOf("qwen2"))
	for gguf, hf := range map[string]string{"gpt-oss": "gpt_oss", "qwen3moe": "qwen3_moe", "qwen2moe": "qwen2_moe", "deepseek2": "deepseek_v3", "gemma3": "gemma3_text",
		"qwen3next": "qwen3_next", "qwen35": "qwen3_5_text", "qwen35moe": "qwen3_5_moe_text", "falcon-h1": "falcon_h1", "granitehybrid": "granitemoehybrid",
		"deepseek32": "deepseek_v32", "glm-dsa": "glm_moe_dsa"} {
		assert.Equal(t, hf, ggufArchitectures[gguf], gguf)
	}
	assert.Len(t, ggufArchitectures, 12)
	assert.True(t, ArchOf("nemotron_h").PlainMLP, "relu2 MLP: up and down only")
	assert.True(t, ArchOf("qwen3_5_text").GatedAttention)
	assert.True(t, ArchOf("muse_glimmer_text").GatedAttention, "Muse Glimmer's gate_proj is q_proj's shape")
	assert.True(t, ArchOf("cohere").TiedByDefault, "CohereConfig ties by default")
}

// TestLayerKindNames: the attention kinds that Hugging Face layer_types
// lists carry its names ("full_attention", "sliding_attention",
// "chunked_attention" in transformers' configs).
func TestLayerKindNames(t *testing.T) {
	assert.Equal(t, "full_attention", FullAttention.String())
	assert.Equal(t, "sliding_attention", SlidingWindow.String())
	assert.Equal(t, "chunked_attention", ChunkedAttention.String())
	assert.Equal(t, "recurrent", Recurrent.String())
	assert.Equal(t, "unknown", LayerKind(200).String())
}

// TestLFM2FullAttnIdxs: LiquidAI/LFM2-1.2B's config.json (catalog entry
// LFM2-1.2B, verbatim from a mirror of the Hugging Face repository) lists
// its attention layers in full_attn_idxs, not layer_types, and its FFN
// width as block_ff_dim: layers 2, 5, 8, 10, 12 and 14 attend, the other
// ten are short convolutions keeping conv_L_cache-1 = 2 inputs of the
// 2048-wide stream, and the FFN is 2/3 of 12288 = 8192 wide (Lfm2Config,
// Lfm2MLP). Read with 16 attention layers, the count was 1.107 B, 5.4 %
// below the card's 1,170,340,608.
func TestLFM2FullAttnIdxs(t *testing.T) {
	m := Lookup("LFM2-1.2B")
	require.NotNil(t, m)
	require.Len(t, m.LayerKinds, 16)
	var attention []int
	for i, l := range m.LayerKinds {
		if l.Kind == FullAttention {
			attention = append(attention, i)
			continue
		}
		assert.Equal(t, Recurrent, l.Kind, i)
		assert.Equal(t, int64(2*2048), l.ConvState, i)
	}
	assert.Equal(t, []int{2, 5, 8, 10, 12, 14}, attention)
	assert.Equal(t, 8192, m.Intermediate)
	assert.InEpsilon(t, 1170340608, float64(m.Params), 1e-4)
	// Indices past the model's depth or not integers are ignored.
	c := map[string]any{"model_type": "lfm2", "num_hidden_layers": 4.0, "hidden_size": 64.0, "num_attention_heads": 4.0,
		"conv_L_cache": 3.0, "full_attn_idxs": []any{1.0, 7.0, 2.5, "x"}}
	s, err := FromConfig(c)
	require.NoError(t, err)
	assert.Equal(t, 1, s.CountLayers(FullAttention))
	assert.Equal(t, FullAttention, s.LayerKinds[1].Kind)
}

// TestNemotronHBlockListAndLatentMoE: NVIDIA-Nemotron-3-Ultra's config
// (catalog entry, verbatim from aiconfigurator's copy) lists its blocks in
// layers_block_type and gives no num_hidden_layers, so its 108 layers are
// that list's (NemotronHConfig.num_hidden_layers); Nemotron-3-Super's
// routed experts work in moe_latent_size 1024 (LatentMoE): each of its 512
// experts is an up and a down matrix of 1024 × 2688 (relu2, no gate), and
// the layer adds the projections 4096 × 1024 and back. Read as experts of
// the hidden width, Super counted 458.6 B and Ultra 2094 B; now 120.7 B
// and 549.3 B, the sizes their names give.
func TestNemotronHBlockListAndLatentMoE(t *testing.T) {
	u := Lookup("NVIDIA-Nemotron-3-Ultra-550B-A55B")
	require.NotNil(t, u)
	assert.Equal(t, 108, u.Layers)
	assert.Equal(t, 48, u.CountLayers(Recurrent))
	assert.Equal(t, 12, u.CountLayers(FullAttention))
	assert.Equal(t, 2048, u.MoELatent)

	s := Lookup("NVIDIA-Nemotron-3-Super-120B-A12B")
	require.NotNil(t, s)
	assert.Equal(t, 1024, s.MoELatent)
	assert.Equal(t, int64(512*2*1024*2688), s.RoutedExpertParams())
	assert.InEpsilon(t, 120e9, float64(s.Params), 0.01)
	assert.InEpsilon(t, 550e9, float64(u.Params), 0.01)

	// The Hub's names and transformers' name the same blocks.
	for _, names := range [][]any{{"mamba", "moe", "attention", "mlp"}, {"linear_attention", "moe", "full_attention", "mlp"}} {
		m, err := FromConfig(map[string]any{"model_type": "nemotron_h", "hidden_size": 64.0, "num_attention_heads": 4.0,
			"mamba_num_heads": 2.0, "mamba_head_dim": 8.0, "ssm_state_size": 4.0, "n_groups": 1.0, "conv_kernel": 4.0,
			"n_routed_experts": 4.0, "num_experts_per_tok": 2.0, "moe_intermediate_size": 8.0, "layers_block_type": names})
		require.NoError(t, err)
		require.Len(t, m.LayerKinds, 4)
		assert.Equal(t, []LayerKind{Recurrent, FeedForward, FullAttention, FeedForward},
			[]LayerKind{m.LayerKinds[0].Kind, m.LayerKinds[1].Kind, m.LayerKinds[2].Kind, m.LayerKinds[3].Kind}, names)
		assert.Equal(t, FFNModel, m.LayerKinds[1].FFN)
		assert.Equal(t, FFNDense, m.LayerKinds[3].FFN)
		assert.Zero(t, m.MoELatent)
	}
}

// TestSSMStateBytes: the SSM state's element width comes from the config
// key that names it (Qwen3.5 and Qwen3.6 "mamba_ssm_dtype": "float32",
// Nemotron 3 "mamba_ssm_cache_dtype": "float32"); a config without one
// keeps the model's dtype (0).
func TestSSMStateBytes(t *testing.T) {
	for _, name := range []string{"Qwen3.5-27B", "Qwen3.6-35B-A3B", "NVIDIA-Nemotron-3-Nano-30B-A3B"} {
		m := Lookup(name)
		require.NotNil(t, m, name)
		assert.Equal(t, 4, m.SSMStateBytes, name)
	}
	assert.Zero(t, Lookup("Qwen3-Next-80B-A3B-Instruct").SSMStateBytes)
	m, err := FromConfig(map[string]any{"model_type": "nemotron_h", "hidden_size": 1024.0, "num_hidden_layers": 2.0,
		"num_attention_heads": 8.0, "mamba_ssm_cache_dtype": "bfloat16"})
	require.NoError(t, err)
	assert.Equal(t, 2, m.SSMStateBytes)
}

// TestStarcoder2Shape: bigcode/starcoder2-7b's config.json (catalog entry,
// verbatim from mlc-llm's preset) names no tie_word_embeddings and has a
// plain two-matrix GELU MLP (c_fc, c_proj): its weights are 32 layers of
// attention (36 query heads, 4 key/value heads of 128) and a 4608 × 18432
// MLP, one tied 49152 × 4608 table, 7.17 B in all (biases, which the count
// leaves out, add 0.0 B). A gated FFN or an untied head would give 8.04 B
// or 7.40 B.
func TestStarcoder2Shape(t *testing.T) {
	m := Lookup("starcoder2:7b")
	require.NotNil(t, m)
	assert.True(t, m.TieEmbeddings)
	const h, layers = 4608, 32
	attention := int64(h*36*128 + 2*h*4*128 + 36*128*h)
	mlp := int64(2 * h * 18432)
	want := layers*(attention+mlp+2*h) + 49152*h + h
	assert.Equal(t, want, m.Params)
	assert.InDelta(t, 7.17e9, float64(m.Params), 0.01e9)
	assert.Equal(t, layers, m.CountLayers(SlidingWindow), "every layer windowed")
}

// TestNemotronNASBlocks: nvidia/Llama-3_3-Nemotron-Super-49B-v1's
// config.json (catalog entry, verbatim from aiconfigurator's copy) lists one
// block per layer: 49 attention blocks with n_heads_in_group 8 (64/8 = 8
// key/value heads), 31 whose attention is a no_op, and an FFN of its own
// ffn_mult in each (width 2·mult·hidden/3 rounded up to 256: 5.25 gives
// 28672, 0.5 gives 2816). The model card names it 49B; a uniform reading
// of its 80 layers gave 88 B.
func TestNemotronNASBlocks(t *testing.T) {
	m := Lookup("Llama-3.3-Nemotron-Super-49B-v1")
	require.NotNil(t, m)
	assert.Equal(t, 49, m.CountLayers(FullAttention))
	assert.Equal(t, 31, m.CountLayers(FeedForward))
	widths := map[int]int{}
	for i := range m.Layers {
		l := m.LayerAt(i)
		widths[l.Intermediate]++
		if l.HasAttention() {
			assert.Equal(t, 8, m.LayerKVHeads(l), "layer %d", i)
		}
	}
	assert.Equal(t, 49, widths[28672], "ffn_mult 5.25")
	assert.Equal(t, 6, widths[2816], "ffn_mult 0.5")
	assert.Zero(t, widths[0], "every block names its FFN")
	assert.Equal(t, 28672, m.Intermediate, "the widest block stands for the model (intermediate_size is null)")
	assert.InDelta(t, 49.9e9, float64(m.Params), 0.5e9)
	// The KV cache is the 49 attention layers' alone.
	kvPerToken := int64(0)
	for i := range m.Layers {
		if l := m.LayerAt(i); l.CachesPerToken() {
			kvPerToken += int64(2 * m.LayerKVHeads(l) * m.EffectiveHeadDim())
		}
	}
	assert.Equal(t, int64(49*2*8*128), kvPerToken)
}

// TestGemma4MoEBlock: google/gemma-4-26B-A4B's config.json (catalog entry,
// verbatim from aiconfigurator's copy) sets enable_moe_block: every layer
// has a dense MLP of intermediate_size 2112 beside 128 routed experts of
// moe_intermediate_size 704, top_k_experts 8 of them per token (maxtext
// src/maxtext/configs/models/gemma4-26b.yml: base_mlp_dim 2112,
// base_moe_mlp_dim 704, num_experts_per_tok 8, shared_experts 1). Read as
// routed experts alone, with no top-k key, the model had 1.8 B active
// parameters; the name says about 4.
func TestGemma4MoEBlock(t *testing.T) {
	m := Lookup("gemma-4-26B-A4B")
	require.NotNil(t, m)
	assert.Equal(t, 128, m.Experts)
	assert.Equal(t, 8, m.ExpertsPerToken)
	assert.Equal(t, 704, m.MoEIntermediate)
	assert.Equal(t, 2112, m.SharedIntermediate)
	assert.InDelta(t, 3.9e9, float64(m.ActiveParams), 0.3e9)
	assert.InDelta(t, 25.5e9, float64(m.Params+m.VisionParams), 1e9)
	// Gemma 4 31B (no MoE block) keeps its dense FFN.
	dense := Lookup("Gemma-4-31B-IT")
	require.NotNil(t, dense)
	assert.False(t, dense.IsMoE())
	assert.Zero(t, dense.SharedIntermediate)
}

// TestLeadingDenseLayersFromLists: poolside's Laguna configs (catalog
// entries, verbatim from aiconfigurator's copies) name their dense first
// layer by a per-layer list, not first_k_dense_replace: mlp_layer_types
// ("dense", then "sparse" ×39, Laguna-XS.2) or mlp_only_layers ([0],
// Laguna-S-2.1, the Qwen2-MoE key). That layer is a 2048 × 8192 MLP, not
// 256 experts: read as experts, XS.2 counted 0.75 B too many.
func TestLeadingDenseLayersFromLists(t *testing.T) {
	for _, name := range []string{"Laguna-XS.2", "Laguna-S-2.1"} {
		m := Lookup(name)
		require.NotNil(t, m, name)
		assert.Equal(t, 1, m.DenseLayers, name)
	}
	xs := Lookup("Laguna-XS.2")
	assert.InDelta(t, 33.2e9, float64(xs.Params), 0.1e9)
	// Qwen1.5-MoE-A2.7B lists no mlp_only_layers entry: no dense layer.
	assert.Zero(t, Lookup("Qwen1.5-MoE-A2.7B").DenseLayers)
}

// TestLeadingDenseLayersFromMoELayerFreq: MiMo-V2-Flash's config (catalog
// entry) marks its MoE layers by a per-layer moe_layer_freq list, 0 for a
// dense layer ([0, 1, 1, ...]: layer 0 is a 4096 x 16384 MLP), where
// DeepSeek's configs give an int; vLLM builds a MoE block only where the
// list entry is non-zero (is_moe_layer in
// https://github.com/vllm-project/vllm/blob/01ed47b4166b26251895a9c298352fcdb2385149/vllm/model_executor/models/mimo_v2_flash.py).
// Read as experts, layer 0 counted 6.2 B too many.
func TestLeadingDenseLayersFromMoELayerFreq(t *testing.T) {
	m := Lookup("MiMo-V2-Flash")
	require.NotNil(t, m)
	assert.Equal(t, 1, m.DenseLayers)
	assert.InDelta(t, 309.4e9, float64(m.Params), 0.1e9)
	assert.Equal(t, 2, leadingDenseLayers(map[string]any{"moe_layer_freq": []any{0.0, 0.0, 1.0, 0.0, 1.0}}))
	// DeepSeek's int moe_layer_freq (every layer's period) marks none.
	assert.Zero(t, leadingDenseLayers(map[string]any{"moe_layer_freq": 1.0}))
}

// TestOlmo3SlidingPattern: OLMo 3 configs give sliding_window 4096 and, in
// maxtext's copies (catalog entries), no layer_types; Olmo3Config then makes
// every 4th layer global and the others sliding (transformers
// src/transformers/models/olmo3/configuration_olmo3.py: "sliding_attention"
// if (i + 1) % 4 != 0). Read as all-sliding, the 64-layer 32B model cached
// 4096 tokens on every layer.
func TestOlmo3SlidingPattern(t *testing.T) {
	m := Lookup("Olmo-3.1-32B-Instruct")
	require.NotNil(t, m)
	assert.Equal(t, 48, m.CountLayers(SlidingWindow))
	assert.Equal(t, 16, m.CountLayers(FullAttention))
	assert.Equal(t, FullAttention, m.LayerAt(3).Kind)
	assert.Equal(t, SlidingWindow, m.LayerAt(0).Kind)
	assert.Equal(t, 4, ArchOf("olmo3").GlobalEvery)
}

// TestFalconH1ParallelHybrid: Falcon-H1-0.5B-Instruct's config (catalog
// entry, Megatron-Bridge's copy) runs attention and a Mamba2 mixer side by
// side in every one of its 36 layers, so every layer caches keys and values
// (2 KV heads of 64) and also keeps a Mamba2 state: the 3 last inputs of the
// 24 × 64 = 1536 inner channels plus B and C (one group of 128 each), and a
// 1536 × 128 SSM state. Its weights count the mixer beside attention in
// each layer: 521.40 M against llama-bench's 521,411,104 for the GGUF file
// (AlexsJones/llmfit llmfit-core/data/benchmark_cache.json). Costed as
// attention alone it would count 340.9 M and keep no state.
func TestFalconH1ParallelHybrid(t *testing.T) {
	m := Lookup("Falcon-H1-0.5B-Instruct")
	require.NotNil(t, m)
	assert.Equal(t, 36, m.Layers)
	assert.Equal(t, 36, m.CountLayers(FullAttention))
	l := m.LayerAt(17)
	assert.Equal(t, int64(3*(1536+2*128)), l.ConvState)
	assert.Equal(t, int64(1536*128), l.SSMState)
	assert.True(t, l.HasAttention())
	assert.True(t, l.CachesPerToken())
	assert.Equal(t, 2, m.LayerKVHeads(l))
	assert.Equal(t, 64, m.EffectiveHeadDim())
	assert.InDelta(t, 36*float64(3*(1536+256)+1536*128), m.RecurrentStateElements(), 0)
	assert.InEpsilon(t, 521411104, float64(m.Params), 1e-4)
}

// TestJambaPeriodsFromConfig: AI21-Jamba-1.5-Mini's config (catalog entry,
// a copy of its config.json in sdpython/experimental-experiment) places
// attention where i mod attn_layer_period (8) = attn_layer_offset (4) and
// experts where i mod expert_layer_period (2) = expert_layer_offset (1),
// as transformers' JambaConfig.layers_block_type and layers_num_experts do:
// attention at layers 4, 12, 20, 28, Mamba (v1, 8192 inner channels,
// d_state 16, d_conv 4) in the other 28, 16 experts at the odd layers and
// the dense 14336-wide FFN at the even ones. The AI21 paper gives 12 B
// active parameters (arXiv 2408.12570, abstract) and the model card 52 B
// in all.
func TestJambaPeriodsFromConfig(t *testing.T) {
	m := Lookup("AI21-Jamba-1.5-Mini")
	require.NotNil(t, m)
	require.Equal(t, 32, m.Layers)
	var attention []int
	for i := range m.Layers {
		l := m.LayerAt(i)
		if i%2 == 1 {
			assert.Equal(t, FFNModel, l.FFN, i)
		} else {
			assert.Equal(t, FFNDense, l.FFN, i)
		}
		if l.Kind == FullAttention {
			attention = append(attention, i)
			assert.Zero(t, l.StateElements(), i)
			continue
		}
		assert.Equal(t, Recurrent, l.Kind, i)
		assert.Equal(t, int64(3*8192), l.ConvState, i)
		assert.Equal(t, int64(8192*16), l.SSMState, i)
	}
	assert.Equal(t, []int{4, 12, 20, 28}, attention)
	assert.Equal(t, 16, m.Experts)
	assert.InEpsilon(t, 52e9, float64(m.Params), 0.01)
	assert.InEpsilon(t, 12e9, float64(m.ActiveParams), 0.02)
}
