package modelio

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// loadFixtureConfig reads a published config.json of testdata/configs
// (SOURCES.md says where each comes from).
func loadFixtureConfig(t *testing.T, name string) (map[string]any, []byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "configs", name))
	require.NoError(t, err)
	cfg, err := DecodeConfig(b)
	require.NoError(t, err, name)
	return cfg, b
}

// TestDecodeConfigPythonFloats: Nemotron-H's published config carries
// Infinity, which strict JSON refuses; config reading accepts it (and NaN,
// -Infinity), outside strings only.
func TestDecodeConfigPythonFloats(t *testing.T) {
	_, raw := loadFixtureConfig(t, "nemotron-h-56b-base-8k.json")
	var strict map[string]any
	require.Error(t, json.Unmarshal(raw, &strict), "the published file is not strict JSON")
	cfg, err := DecodeConfig(raw)
	require.NoError(t, err)
	assert.Equal(t, []any{0.0, nil}, cfg["time_step_limit"])

	cfg, err = DecodeConfig([]byte(`{"a": [NaN, -Infinity, Infinity], "b": "NaN and -Infinity stay text"}`))
	require.NoError(t, err)
	assert.Equal(t, []any{nil, nil, nil}, cfg["a"])
	assert.Equal(t, "NaN and -Infinity stay text", cfg["b"])
	_, err = DecodeConfig([]byte(`{"a": Infinit}`))
	assert.Error(t, err, "other bare words stay errors")
}

// TestFromDirPythonFloats: a model directory whose config.json is the
// published Nemotron-H one plans from its config.
func TestFromDirPythonFloats(t *testing.T) {
	_, raw := loadFixtureConfig(t, "nemotron-h-56b-base-8k.json")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), raw, 0o644))
	m, err := FromPath(dir)
	require.NoError(t, err)
	assert.Equal(t, 118, m.Layers)
	assert.Equal(t, 10, m.CountLayers(model.FullAttention))
}

// countKinds is how many of the model's layers are of each kind.
func countKinds(m *model.Model) map[model.LayerKind]int {
	out := map[model.LayerKind]int{}
	for i := 0; i < m.Layers; i++ {
		out[m.LayerAt(i).Kind]++
	}
	return out
}

func num(t *testing.T, cfg map[string]any, key string) int64 {
	t.Helper()
	v, ok := cfg[key].(float64)
	require.True(t, ok, key)
	return int64(v)
}

// TestNemotronHLayers: hybrid_override_pattern gives one block per letter
// (M Mamba2, * attention, - MLP); the Mamba2 state per sequence is vLLM's
// mamba2_state_shape from the config's sizes: conv (conv_kernel-1) ×
// (heads·head_dim + 2·n_groups·ssm_state_size), SSM heads·head_dim ×
// ssm_state_size.
func TestNemotronHLayers(t *testing.T) {
	cfg, _ := loadFixtureConfig(t, "nemotron-h-56b-base-8k.json")
	m, err := model.FromConfig(cfg)
	require.NoError(t, err)
	p := cfg["hybrid_override_pattern"].(string)
	assert.Equal(t, map[model.LayerKind]int{model.Recurrent: strings.Count(p, "M"), model.FullAttention: strings.Count(p, "*"), model.FeedForward: strings.Count(p, "-")}, countKinds(m))
	inner := num(t, cfg, "mamba_num_heads") * num(t, cfg, "mamba_head_dim")
	conv := (num(t, cfg, "conv_kernel") - 1) * (inner + 2*num(t, cfg, "n_groups")*num(t, cfg, "ssm_state_size"))
	ssm := inner * num(t, cfg, "ssm_state_size")
	assert.Equal(t, float64(int64(strings.Count(p, "M"))*(conv+ssm)), m.RecurrentStateElements())
	// The mixer blocks have no FFN and the MLP blocks no mixer: the count
	// is the 56B of the name (within 1 %), where costing every block as
	// attention plus a gated FFN gave far more.
	assert.InEpsilon(t, 56e9, float64(m.Params), 0.01)
	assert.Equal(t, m.Params, m.ActiveParams)
}

// TestNemotronHMoELayers: Nemotron 3 Nano's E blocks are MoE FFNs (128
// routed experts, 6 per token, one shared expert of its own width).
func TestNemotronHMoELayers(t *testing.T) {
	cfg, _ := loadFixtureConfig(t, "nvidia-nemotron-3-nano-30b-a3b-bf16.json")
	m, err := model.FromConfig(cfg)
	require.NoError(t, err)
	p := cfg["hybrid_override_pattern"].(string)
	assert.Equal(t, map[model.LayerKind]int{model.Recurrent: strings.Count(p, "M"), model.FullAttention: strings.Count(p, "*"), model.FeedForward: strings.Count(p, "E")}, countKinds(m))
	assert.Equal(t, 3712, m.SharedIntermediate)
	// 30B total, about 3B active per token, as the name says.
	assert.InDelta(t, 31.5e9, float64(m.Params), 1.5e9)
	assert.InDelta(t, 3.3e9, float64(m.ActiveParams), 0.5e9)
}

// TestGatedDeltaNetLayers: Qwen3.5's layer_types name linear_attention
// (gated DeltaNet) and full_attention layers; the state per sequence is
// vLLM's gated_delta_net_state_shape from the linear_* sizes.
func TestGatedDeltaNetLayers(t *testing.T) {
	cfg, _ := loadFixtureConfig(t, "qwen3.5-35b-a3b.json")
	m, err := model.FromConfig(cfg)
	require.NoError(t, err)
	tc := cfg["text_config"].(map[string]any)
	linear := 0
	for _, v := range tc["layer_types"].([]any) {
		if v == "linear_attention" {
			linear++
		}
	}
	assert.Equal(t, map[model.LayerKind]int{model.Recurrent: linear, model.FullAttention: m.Layers - linear}, countKinds(m))
	kh, kd := num(t, tc, "linear_num_key_heads"), num(t, tc, "linear_key_head_dim")
	vh, vd := num(t, tc, "linear_num_value_heads"), num(t, tc, "linear_value_head_dim")
	conv := (num(t, tc, "linear_conv_kernel_dim") - 1) * (2*kh*kd + vh*vd)
	assert.Equal(t, float64(int64(linear)*(conv+vh*kd*vd)), m.RecurrentStateElements())
	// The MTP layer and the vision tower are counted apart from the
	// language model; together they make the 35B of the name.
	assert.Positive(t, m.MTPParams)
	assert.Positive(t, m.VisionParams)
	assert.InEpsilon(t, 35e9, float64(m.Params+m.MTPParams+m.VisionParams), 0.03)
}

// TestChunkedAttentionLayers: Llama 4 attends within 8192-token chunks on
// its RoPE layers and globally on every fourth (Llama4TextConfig's
// no_rope_layers default); Maverick's experts sit on every second layer
// (interleave_moe_layer_step 2), the others have a dense FFN of
// intermediate_size_mlp.
func TestChunkedAttentionLayers(t *testing.T) {
	cfg, _ := loadFixtureConfig(t, "llama-4-maverick-17b-128e-instruct.json")
	m, err := model.FromConfig(cfg)
	require.NoError(t, err)
	assert.Equal(t, map[model.LayerKind]int{model.ChunkedAttention: 36, model.FullAttention: 12}, countKinds(m))
	assert.Equal(t, model.Layer{Kind: model.ChunkedAttention, Window: 8192, FFN: model.FFNDense}, m.LayerAt(0))
	assert.Equal(t, model.Layer{Kind: model.FullAttention}, m.LayerAt(3))
	moe := 0
	for i := 0; i < m.Layers; i++ {
		if m.LayerAt(i).FFN == model.FFNModel {
			moe++
		}
	}
	assert.Equal(t, 24, moe)
	assert.Equal(t, 16384, m.Intermediate)
	assert.Equal(t, 8192, m.MoEIntermediate)
	// 400B total and 17B active, the model card's figures (within 1 % and
	// 10 %: the card counts the vision tower, absent from this copy).
	assert.InEpsilon(t, 400e9, float64(m.Params), 0.01)
	assert.InEpsilon(t, 17e9, float64(m.ActiveParams), 0.1)
}

// TestShortConvAndTiedDefaults: LFM2's conv layers keep (L_cache-1) ×
// hidden of state and no per-token cache; its FFN is narrowed as Lfm2MLP
// does (2/3, rounded up to block_multiple_of); SmolLM3 and LFM2 tie their
// embeddings by default. The sizes are those of an Lfm2ForCausalLM
// config.json with LFM2-1.2B's shape,
// https://huggingface.co/saranshagarwal2020/p-vector/blob/main/config.json
// (hidden 2048, 16 layers listed in layer_types, 32 heads, 8 KV heads,
// block_ff_dim 12288 auto-adjusted, conv_L_cache 3, vocabulary 65536).
func TestShortConvAndTiedDefaults(t *testing.T) {
	kinds := []any{}
	for _, k := range []string{"conv", "conv", "full_attention", "conv", "conv", "full_attention", "conv", "conv", "full_attention", "conv", "full_attention", "conv", "full_attention", "conv", "full_attention", "conv"} {
		kinds = append(kinds, k)
	}
	cfg := map[string]any{"model_type": "lfm2", "hidden_size": 2048.0, "num_hidden_layers": 16.0, "num_attention_heads": 32.0,
		"num_key_value_heads": 8.0, "intermediate_size": 12288.0, "block_auto_adjust_ff_dim": true, "block_ffn_dim_multiplier": 1.0,
		"block_multiple_of": 256.0, "conv_L_cache": 3.0, "vocab_size": 65536.0, "layer_types": kinds}
	m, err := model.FromConfig(cfg)
	require.NoError(t, err)
	assert.True(t, m.TieEmbeddings)
	assert.Equal(t, 8192, m.Intermediate)
	assert.Equal(t, map[model.LayerKind]int{model.Recurrent: 10, model.FullAttention: 6}, countKinds(m))
	assert.Equal(t, float64(10*2*2048), m.RecurrentStateElements())
	// LFM2-1.2B: its bf16 model.safetensors is 2.34 GB
	// (https://huggingface.co/LiquidAI/LFM2-1.2B/tree/main), 1.17 B
	// parameters; all-attention costing and an untied head gave several
	// percent more.
	assert.InEpsilon(t, 1.17e9, float64(m.Params), 0.01)
	assert.True(t, model.ArchOf("smollm3").TiedByDefault)
}

// TestGGUFHybridLayers: llama.cpp's hybrid GGUF files mark a recurrent
// layer by head_count_kv 0 in the per-layer array (nemotron_h: an MLP block
// has a feed_forward_length), and Qwen3.5 by full_attention_interval.
func TestGGUFHybridLayers(t *testing.T) {
	var w ggufWriter
	w.header(3, 1, 9)
	w.kvString("general.architecture", "nemotron_h")
	w.kvU32("nemotron_h.block_count", 4)
	w.kvU32("nemotron_h.embedding_length", 64)
	w.kvU32("nemotron_h.attention.head_count", 4)
	w.kvU32Array("nemotron_h.attention.head_count_kv", 0, 0, 2, 0)
	w.kvU32Array("nemotron_h.feed_forward_length", 0, 128, 0, 128)
	w.kvU32("nemotron_h.ssm.conv_kernel", 4)
	w.kvU32("nemotron_h.ssm.inner_size", 128)
	w.kvU32("nemotron_h.ssm.state_size", 16)
	w.tensor("token_embd.weight", 1, 64, 100)
	m, err := ReadGGUF(bytes.NewReader(w.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, []model.LayerKind{model.Recurrent, model.FeedForward, model.FullAttention, model.FeedForward}, []model.LayerKind{m.LayerAt(0).Kind, m.LayerAt(1).Kind, m.LayerAt(2).Kind, m.LayerAt(3).Kind})
	assert.Equal(t, model.Mamba2State(128, 0, 16, 4), m.LayerAt(0))

	w = ggufWriter{}
	w.header(3, 1, 11)
	w.kvString("general.architecture", "qwen35")
	w.kvU32("qwen35.block_count", 8)
	w.kvU32("qwen35.embedding_length", 64)
	w.kvU32("qwen35.attention.head_count", 4)
	w.kvU32("qwen35.attention.head_count_kv", 2)
	w.kvU32("qwen35.full_attention_interval", 4)
	w.kvU32("qwen35.ssm.conv_kernel", 4)
	w.kvU32("qwen35.ssm.state_size", 128)
	w.kvU32("qwen35.ssm.group_count", 16)
	w.kvU32("qwen35.ssm.time_step_rank", 32)
	w.kvU32("qwen35.ssm.inner_size", 4096)
	w.tensor("token_embd.weight", 1, 64, 100)
	m, err = ReadGGUF(bytes.NewReader(w.Bytes()))
	require.NoError(t, err)
	gdn := model.GatedDeltaNetState(16, 128, 32, 128, 4)
	assert.Equal(t, []model.Layer{gdn, gdn, gdn, {Kind: model.FullAttention}}, m.LayerKinds)
}

// kvU32Array writes a metadata array of uint32 values.
func (w *ggufWriter) kvU32Array(k string, vs ...uint32) {
	w.str(k)
	w.u32(gArray)
	w.u32(gUint32)
	w.u64(uint64(len(vs)))
	for _, v := range vs {
		w.u32(v)
	}
}

// TestHostileHybridConfigs: sizes no model has are refused or bounded,
// never wrapped into int64 garbage or allocated: a state of 2^31 × 2^31
// elements, an interval or period of 2^31 - 1 layers, a vision tower of
// 2^31 layers.
func TestHostileHybridConfigs(t *testing.T) {
	big := float64(1<<31 - 1)
	base := func() map[string]any {
		return map[string]any{"num_hidden_layers": 8.0, "hidden_size": 64.0, "num_attention_heads": 4.0, "vocab_size": 100.0}
	}
	cfg := base()
	cfg["hybrid_override_pattern"] = "M*M*M*M*"
	cfg["mamba_num_heads"], cfg["mamba_head_dim"], cfg["ssm_state_size"], cfg["conv_kernel"] = big, big, big, 4.0
	_, err := model.FromConfig(cfg)
	assert.Error(t, err, "a Mamba2 state of 2^62 elements")

	cfg = base()
	cfg["full_attention_interval"] = big
	cfg["linear_num_key_heads"], cfg["linear_key_head_dim"], cfg["linear_num_value_heads"], cfg["linear_value_head_dim"], cfg["linear_conv_kernel_dim"] = 2.0, 8.0, 2.0, 8.0, 4.0
	m, err := model.FromConfig(cfg)
	require.NoError(t, err)
	assert.Len(t, m.LayerKinds, 1, "no layer reaches the interval")
	assert.Equal(t, 0, m.CountLayers(model.FullAttention))

	cfg = base()
	cfg["attn_layer_period"], cfg["attn_layer_offset"] = big, 3.0
	cfg["mamba_d_state"], cfg["mamba_d_conv"], cfg["mamba_expand"] = 16.0, 4.0, 2.0
	m, err = model.FromConfig(cfg)
	require.NoError(t, err)
	assert.Len(t, m.LayerKinds, 8)
	assert.Equal(t, 1, m.CountLayers(model.FullAttention))

	cfg = base()
	cfg["vision_config"] = map[string]any{"depth": big, "hidden_size": big}
	m, err = model.FromConfig(cfg)
	require.NoError(t, err)
	assert.Zero(t, m.VisionParams)
}
