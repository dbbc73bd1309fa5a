package modelio

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

func TestCatalogLoads(t *testing.T) {
	c := model.Catalog()
	require.NotEmpty(t, c)
	for _, e := range c {
		m := model.Lookup(e.Name)
		require.NotNil(t, m, e.Name)
		assert.Positive(t, m.Params, e.Name)
		assert.NotEmpty(t, e.Source, e.Name)
	}
}

func TestResolveByName(t *testing.T) {
	for _, tc := range []struct {
		name   string
		want   string
		layers int
	}{
		{"llama-2-7b", "Llama-2-7B", 32},
		{"LLAMA 2 7B", "Llama-2-7B", 32},
		{"meta-llama/Llama-2-7b-hf", "Llama-2-7B", 32},
		{"Meta-Llama-3-70B-Instruct", "Meta-Llama-3-70B", 80},
	} {
		m, err := Resolve(model.Spec{Name: tc.name})
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, m.Name)
		assert.Equal(t, tc.layers, m.Layers)
	}
}

func TestResolveErrors(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		spec model.Spec
		code string
	}{
		{model.Spec{}, errs.InvalidArgument},
		{model.Spec{Params: f(7e9), Name: "x"}, errs.InvalidArgument},
		{model.Spec{Params: f(-1)}, errs.InvalidArgument},
		{model.Spec{Params: f(2e14)}, errs.InvalidArgument},
		{model.Spec{ParamsB: f(0)}, errs.InvalidArgument},
		{model.Spec{Name: "llama-9-900b"}, errs.UnknownModel},
		{model.Spec{Path: "/nonexistent/x.gguf"}, errs.ModelFile},
	} {
		_, err := Resolve(tc.spec)
		require.Error(t, err)
		assert.Equal(t, tc.code, errs.CodeOf(err), "%+v: %v", tc.spec, err)
	}
}

func TestUnknownModelSuggests(t *testing.T) {
	_, err := Resolve(model.Spec{Name: "llama-3.1-7b"})
	require.Error(t, err)
	assert.Equal(t, errs.UnknownModel, errs.CodeOf(err))
	assert.Contains(t, err.Error(), "Llama-3.1-8B")
	assert.Empty(t, model.Suggest("zzzzzzzzzzzzzzzzzzzzzzzz", 3))
}

func TestResolveWithConfigOverride(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	// Name + config: the config's fields win, the rest is the catalog's.
	m, err := Resolve(model.Spec{Name: "Llama-3.1-8B", Config: map[string]any{"max_position_embeddings": 8192.0}})
	require.NoError(t, err)
	assert.Equal(t, 8192, m.MaxContext)
	assert.Equal(t, 32, m.Layers)
	assert.Contains(t, m.Source, "overrides")
	// Params + config: the count is the given one, the shape the config's.
	m, err = Resolve(model.Spec{ParamsB: f(8), Config: map[string]any{"num_hidden_layers": 32.0, "hidden_size": 4096.0, "num_attention_heads": 32.0, "num_key_value_heads": 8.0}})
	require.NoError(t, err)
	assert.Equal(t, int64(8e9), m.Params)
	assert.Equal(t, 8, m.KVHeads)
	assert.False(t, m.ShapeEstimated)
	// Params only: shape estimated and flagged.
	m, err = Resolve(model.Spec{Params: f(7e9)})
	require.NoError(t, err)
	assert.True(t, m.ShapeEstimated)
	assert.Equal(t, "params only", m.Source)
	// Config only, with a nested text_config.
	m, err = Resolve(model.Spec{Config: map[string]any{"model_type": "gemma3", "text_config": map[string]any{
		"num_hidden_layers": 26.0, "hidden_size": 1152.0, "num_attention_heads": 4.0, "num_key_value_heads": 1.0,
		"head_dim": 256.0, "intermediate_size": 6912.0, "vocab_size": 262144.0}}})
	require.NoError(t, err)
	assert.Equal(t, 26, m.Layers)
	assert.True(t, m.TieEmbeddings) // gemma default
	// Path with config is refused.
	_, err = Resolve(model.Spec{Path: "/x.gguf", Config: map[string]any{}})
	assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err))
	// NaN, Inf and fractions of one parameter.
	for _, v := range []float64{math.NaN(), math.Inf(1), 0.5} {
		_, err = Resolve(model.Spec{Params: f(v)})
		assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err), v)
	}
}

func TestReadGGUFMoE(t *testing.T) {
	var w ggufWriter
	w.header(3, 2, 9)
	w.kvString("general.architecture", "qwen3moe")
	w.kvU32("qwen3moe.block_count", 2)
	w.kvU32("qwen3moe.embedding_length", 256)
	w.kvU32("qwen3moe.attention.head_count", 4)
	w.kvU32("qwen3moe.attention.head_count_kv", 2)
	w.kvU32("qwen3moe.expert_count", 8)
	w.kvU32("qwen3moe.expert_used_count", 2)
	w.kvU32("qwen3moe.expert_feed_forward_length", 128)
	w.kvU32("qwen3moe.attention.key_length", 64)
	w.tensor("token_embd.weight", 1, 256, 100)
	w.tensor("blk.0.ffn_down_exps.weight", 1, 128, 256, 8)
	m, err := ReadGGUF(bytes.NewReader(w.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, "qwen3_moe", m.Architecture)
	assert.Equal(t, 8, m.Experts)
	assert.Equal(t, 2, m.ExpertsPerToken)
	assert.Equal(t, 64, m.HeadDim)
	assert.True(t, m.TieEmbeddings) // no output.weight
	assert.Equal(t, int64(256*100+128*256*8), m.Params)
	assert.Less(t, m.ActiveParams, m.Params)
	assert.Equal(t, "F16", m.FileQuant) // no general.file_type: dominant tensor type
}

// Published checkpoints: the native format is the publisher's first entry,
// or the checkpoint whose repository the request named.
func TestCatalogCheckpoints(t *testing.T) {
	for _, tc := range []struct {
		name, quant, repo string
	}{
		{"gpt-oss-120b", "mxfp4", "openai/gpt-oss-120b"},
		{"openai/gpt-oss-20b", "mxfp4", "openai/gpt-oss-20b"},
		{"DeepSeek-V3", "fp8", "deepseek-ai/DeepSeek-V3"},
		{"deepseek-ai/DeepSeek-R1", "fp8", "deepseek-ai/DeepSeek-R1"},
		{"Llama-3.1-405B", "bf16", "meta-llama/Llama-3.1-405B"},
		{"meta-llama/Llama-3.1-405B-Instruct-FP8", "fp8", "meta-llama/Llama-3.1-405B-Instruct-FP8"},
		{"Qwen/Qwen3-32B-AWQ", "int4", "Qwen/Qwen3-32B-AWQ"},
		{"hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4", "int4", "hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4"},
		{"Qwen/Qwen2.5-7B-Instruct", "bf16", "Qwen/Qwen2.5-7B-Instruct"},
		{"DeepSeek-V3.2", "fp8", "deepseek-ai/DeepSeek-V3.2"},
		{"zai-org/GLM-5-FP8", "fp8", "zai-org/GLM-5-FP8"},
	} {
		m, err := Resolve(model.Spec{Name: tc.name})
		require.NoError(t, err, tc.name)
		ck := m.NativeCheckpoint()
		require.NotNil(t, ck, tc.name)
		assert.Equal(t, tc.quant, ck.Quant, tc.name)
		assert.Equal(t, tc.repo, ck.Repo, tc.name)
	}
	// Every checkpoint names a repository and a source a reader can open.
	for _, e := range model.Catalog() {
		for _, ck := range e.Checkpoints {
			assert.NotEmpty(t, ck.Repo, e.Name)
			assert.Contains(t, ck.Source, "https://", e.Name)
			assert.NotEmpty(t, ck.Quant, e.Name)
			if ck.IsGGUF() && ck.File == "" {
				// A repository of one file per type: llama.cpp's -hf
				// REPO:TYPE picks the file, so the type must be one.
				l, err := quant.Parse(ck.Quant)
				require.NoError(t, err, e.Name)
				assert.NotEmpty(t, l.GGUFType(), "%s %s", e.Name, ck.Quant)
			}
		}
	}
	// An entry that lists none has its Hugging Face repository in the
	// config's dtype.
	m := model.Lookup("Phi-3-mini-4k-instruct")
	require.NotNil(t, m)
	assert.Equal(t, &model.Checkpoint{Quant: "bf16", Repo: "microsoft/Phi-3-mini-4k-instruct", Source: "https://huggingface.co/microsoft/Phi-3-mini-4k-instruct"}, m.NativeCheckpoint())
	assert.Equal(t, "fp16", model.Lookup("Llama-2-7B").NativeCheckpoint().Quant)
}

// TestSuggestKeepsTheFamily: an id the catalog lacks (a dated release of a
// catalog model) suggests the model it extends, not a shorter name of
// another family a few edits away (issue 25: "…-2507" suggested
// "Qwen2.5-72B").
func TestSuggestKeepsTheFamily(t *testing.T) {
	for name, want := range map[string]string{
		"Qwen/Qwen3-30B-A3B-Instruct-2507":  "Qwen3-30B-A3B",
		"Qwen3-235B-A22B-Thinking-2507-FP8": "Qwen3-235B-A22B",
		"Llama-4-Scout-17B-16E-Original":    "Llama-4-Scout-17B-16E-Instruct",
	} {
		s := model.Suggest(name, 3)
		require.NotEmpty(t, s, name)
		assert.Equal(t, want, s[0], name)
	}
	_, err := Resolve(model.Spec{Name: "Qwen/Qwen3-30B-A3B-Instruct-2507"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Qwen3-30B-A3B")
	assert.NotContains(t, err.Error(), "Qwen2.5-72B")
}

// TestOllamaAliases: the names ollama users type resolve, and so do the
// Hugging Face ids of catalog models.
func TestOllamaAliases(t *testing.T) {
	for name, want := range map[string]string{
		"qwen3:30b-a3b": "Qwen3-30B-A3B", "qwen3:30b": "Qwen3-30B-A3B", "qwen3:235b": "Qwen3-235B-A22B",
		"llama4:scout": "Llama-4-Scout-17B-16E-Instruct", "qwen3.5:35b": "Qwen3.5-35B-A3B",
		"deepseek-r1:671b": "DeepSeek-R1", "gpt-oss:20b": "gpt-oss-20b", "gemma3:27b": "Gemma-3-27B",
		"mixtral:8x7b": "Mixtral-8x7B-Instruct-v0.1", "llama3.3:70b": "Llama-3.3-70B-Instruct",
		"qwen3:4b": "Qwen3-4B", "qwen3:14b": "Qwen3-14B", "phi4-mini:3.8b": "Phi-4-mini-instruct",
		"qwen3-next:80b": "Qwen3-Next-80B-A3B-Instruct", "meta-llama/Llama-4-Scout-17B-16E": "Llama-4-Scout-17B-16E-Instruct",
		"deepseek-r1:32b": "DeepSeek-R1-Distill-Qwen-32B", "deepseek-v3.1:671b": "DeepSeek-V3.1", "lfm2:1.2b": "LFM2-1.2B",
		"smollm3:3b": "SmolLM3-3B", "cogito:14b": "cogito-v1-preview-qwen-14B", "nemotron-3-super:120b": "NVIDIA-Nemotron-3-Super-120B-A12B",
		"Qwen/Qwen2-1.5B": "Qwen2-1.5B-Instruct", "moonshotai/Kimi-K2.6": "Kimi-K2.6", "mistralai/Devstral-Small-2507": "Devstral-Small-2507",
	} {
		m := model.Lookup(name)
		if assert.NotNil(t, m, name) {
			assert.Equal(t, want, m.Name, name)
		}
	}
}

// TestCatalogHybridReadsItsLayers: Qwen3-Next-80B-A3B keeps a KV cache in
// 12 of its 48 layers (full_attention_interval 4); the other 36 are gated
// DeltaNet layers with a recurrent state (issue 25).
func TestCatalogHybridReadsItsLayers(t *testing.T) {
	m := model.Lookup("Qwen3-Next-80B-A3B-Instruct")
	require.NotNil(t, m)
	assert.Equal(t, 48, m.Layers)
	assert.Equal(t, 36, m.CountLayers(model.Recurrent))
}
