package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// catalogConfig is the config of the catalog entry named name.
func catalogConfig(t *testing.T, name string) map[string]any {
	t.Helper()
	for _, e := range Catalog() {
		if e.Name == name {
			return e.Config
		}
	}
	t.Fatalf("no catalog entry %s", name)
	return nil
}

// TestGemma4GlobalLayersFromConfig: Gemma 4's full-attention layers take
// global_head_dim (512) and, with attention_k_eq_v, their own
// num_global_key_value_heads (4 on the 31B) and no value projection, as
// vLLM builds them (get_layer_kv_params in
// https://github.com/vllm-project/tpu-inference/blob/b8692ff01fa191343836996c27a39dc95f008b88/tpu_inference/utils.py
// and its tests: (512, 4) for a full layer, (256, 16) for a sliding one);
// the sliding layers keep head_dim 256 and 16 key/value heads.
func TestGemma4GlobalLayersFromConfig(t *testing.T) {
	m, err := FromConfig(catalogConfig(t, "Gemma-4-31B-IT"))
	require.NoError(t, err)
	counts := map[Layer]int{}
	for l, n := range m.LayerCounts() {
		counts[l] += n
	}
	global := Layer{Kind: FullAttention, HeadDim: 512, KVHeads: 4, KEqV: true}
	sliding := Layer{Kind: SlidingWindow, Window: 1024}
	assert.Equal(t, map[Layer]int{global: 10, sliding: 50}, counts)
	assert.Equal(t, 256, m.EffectiveHeadDim())
	assert.Equal(t, 16, m.EffectiveKVHeads())

	// The attention weights of each kind, from the shapes of the HF
	// tensors: a sliding layer's q (32×256), k and v (16×256 each) and o;
	// a global layer's q (32×512), k (4×512) and o, no v.
	h := 5376.0
	assert.InDelta(t, h*(32*256+2*16*256+32*256), attentionParams(m, sliding), 0)
	assert.InDelta(t, h*(32*512+4*512+32*512), attentionParams(m, global), 0)
}

// TestGlobalAttentionOnlyWithGlobalHeadDim: a config without
// global_head_dim (Gemma 3, gpt-oss) keeps its full-attention layers as
// they were.
func TestGlobalAttentionOnlyWithGlobalHeadDim(t *testing.T) {
	m, err := FromConfig(catalogConfig(t, "Gemma-3-27B"))
	require.NoError(t, err)
	for l := range m.LayerCounts() {
		assert.Zero(t, l.HeadDim, l.Kind)
		assert.Zero(t, l.KVHeads, l.Kind)
		assert.False(t, l.KEqV, l.Kind)
	}
}

// TestCountedAs: the parts a published count holds are added by name; a
// stored tied head is vocab × hidden; an unknown part, or a tied head on a
// model that does not tie it, is an error.
func TestCountedAs(t *testing.T) {
	m := &Model{Params: 1000, MTPParams: 30, VisionParams: 200, Vocab: 10, Hidden: 4, TieEmbeddings: true}
	for include, want := range map[string]int64{
		"": 1000, "mtp": 1030, "vision": 1200, "mtp+vision": 1230, "tied-head": 1040, "vision+tied-head": 1240,
	} {
		got, err := CatalogEntry{Name: "x", ParamsInclude: include}.CountedAs(m)
		require.NoError(t, err, include)
		assert.Equal(t, want, got, include)
	}
	_, err := CatalogEntry{Name: "x", ParamsInclude: "mtp+audio"}.CountedAs(m)
	assert.ErrorContains(t, err, `"audio"`)
	m.TieEmbeddings = false
	_, err = CatalogEntry{Name: "x", ParamsInclude: "tied-head"}.CountedAs(m)
	assert.ErrorContains(t, err, "does not tie")
}

// TestCountedAsMTPEmbedHead: "mtp-embed-head" adds, per MTP layer the
// config declares, the copy of the embedding and of the output head
// (2 x vocab x hidden) that GLM-4.5 and GLM-4.7 checkpoints store in the
// MTP layer (model.layers.92.embed_tokens, shared_head.head; vLLM PR 27597
// says GLM-4.6's leaves them out). A config without MTP layers is an error.
func TestCountedAsMTPEmbedHead(t *testing.T) {
	m := &Model{Params: 1000, MTPParams: 30, Vocab: 10, Hidden: 4}
	for layers, want := range map[float64]int64{1: 1110, 2: 1190} {
		e := CatalogEntry{Name: "x", ParamsInclude: "mtp+mtp-embed-head", Config: map[string]any{"num_nextn_predict_layers": layers}}
		got, err := e.CountedAs(m)
		require.NoError(t, err, layers)
		assert.Equal(t, want, got, layers)
	}
	_, err := CatalogEntry{Name: "x", ParamsInclude: "mtp-embed-head", Config: map[string]any{}}.CountedAs(m)
	assert.ErrorContains(t, err, "no MTP layer")
}

// TestCountedAsExpertScales: "expert-scales/N" adds one scale per N routed
// expert weights, what the Hub counts beside the unpacked weights of a
// checkpoint that group-quantizes its routed experts (Kimi K2.5's
// compressed-tensors INT4, group_size 32): Kimi K2 Thinking's 60 MoE
// layers of 384 experts of 3 x 7,168 x 2,048 weights give 31,708,938,240.
// A group size that is not a positive integer, or a model without routed
// experts, is an error.
func TestCountedAsExpertScales(t *testing.T) {
	m := Lookup("Kimi-K2-Thinking")
	require.NotNil(t, m)
	assert.Equal(t, 60, m.MoELayers())
	got, err := CatalogEntry{Name: "x", ParamsInclude: "expert-scales/32"}.CountedAs(m)
	require.NoError(t, err)
	assert.Equal(t, m.Params+31_708_938_240, got)
	for _, bad := range []string{"expert-scales/0", "expert-scales/x", "expert-scales/", "expert-scales"} {
		_, err := CatalogEntry{Name: "x", ParamsInclude: bad}.CountedAs(m)
		assert.Error(t, err, bad)
	}
	dense := Lookup("Llama-2-7B")
	require.NotNil(t, dense)
	assert.Zero(t, dense.MoELayers())
	_, err = CatalogEntry{Name: "x", ParamsInclude: "expert-scales/32"}.CountedAs(dense)
	assert.ErrorContains(t, err, "routed experts")
}
