package modelio

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/ggml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// ggufDSA is the header of a DeepSeek Sparse Attention file of
// architecture arch (deepseek32, glm-dsa) with the keys llama.cpp reads
// for it (LLM_KV_ATTENTION_KV_LORA_RANK, LLM_KV_NEXTN_PREDICT_LAYERS and
// the LLM_KV_ATTENTION_INDEXER_* keys of src/llama-arch.cpp, ggml-org/
// llama.cpp), an indexer.types array when types is given, one tensor.
func ggufDSA(arch string, blocks, nextn, ctx uint32, types []uint32) []byte {
	var w ggufWriter
	kvs := uint64(10)
	if types != nil {
		kvs++
	}
	w.header(3, 1, kvs)
	w.kvString("general.architecture", arch)
	w.kvU32(arch+".block_count", blocks)
	w.kvU32(arch+".nextn_predict_layers", nextn)
	w.kvU32(arch+".context_length", ctx)
	w.kvU32(arch+".embedding_length", 7168)
	w.kvU32(arch+".attention.kv_lora_rank", 512)
	w.kvU32(arch+".rope.dimension_count", 64)
	w.kvU32(arch+".attention.indexer.head_count", 64)
	w.kvU32(arch+".attention.indexer.key_length", 128)
	w.kvU32(arch+".attention.indexer.top_k", 2048)
	if types != nil {
		w.kvU32Array(arch+".attention.indexer.types", types...)
	}
	w.tensor("token_embd.weight", ggml.F16, 7168, 100)
	return w.Bytes()
}

// TestGGUFIndexer: llama.cpp caches the indexer keys of every layer but
// the MTP ones (filter_lid in llama_model::create_memory), of a glm-dsa
// file only the layers indexer.types marks full; a glm-dsa file of 1M
// context without the array gets GLM-5.2's built-in pattern there, which
// is not read: every layer is costed, and a note says so.
func TestGGUFIndexer(t *testing.T) {
	m, err := ReadGGUF(bytes.NewReader(ggufDSA("deepseek32", 62, 1, 163840, nil)))
	require.NoError(t, err)
	assert.Equal(t, "deepseek_v32", m.Architecture)
	assert.Equal(t, 64, m.IndexerHeads)
	assert.Equal(t, 128, m.IndexerHeadDim)
	assert.Equal(t, 2048, m.IndexerTopK)
	assert.Equal(t, 61, m.IndexerLayers)

	m, err = ReadGGUF(bytes.NewReader(ggufDSA("glm-dsa", 9, 1, 1048576, []uint32{1, 1, 1, 0, 0, 0, 1, 0})))
	require.NoError(t, err)
	assert.Equal(t, "glm_moe_dsa", m.Architecture)
	assert.Equal(t, 4, m.IndexerLayers)
	assert.Empty(t, m.Notes)

	m, err = ReadGGUF(bytes.NewReader(ggufDSA("glm-dsa", 9, 1, 202752, nil)))
	require.NoError(t, err)
	assert.Equal(t, 8, m.IndexerLayers)
	assert.Empty(t, m.Notes)

	m, err = ReadGGUF(bytes.NewReader(ggufDSA("glm-dsa", 9, 1, 1048576, nil)))
	require.NoError(t, err)
	assert.Equal(t, 8, m.IndexerLayers)
	require.Len(t, m.Notes, 1)
	assert.Contains(t, m.Notes[0], "attention.indexer.types")

	// Without an MLA latent the keys are not read.
	var w ggufWriter
	w.header(3, 1, 4)
	w.kvString("general.architecture", "llama")
	w.kvU32("llama.block_count", 2)
	w.kvU32("llama.attention.indexer.head_count", 64)
	w.kvU32("llama.attention.indexer.key_length", 128)
	w.tensor("token_embd.weight", ggml.F16, 64, 100)
	m, err = ReadGGUF(bytes.NewReader(w.Bytes()))
	require.NoError(t, err)
	assert.Zero(t, m.IndexerLayers)
}

// TestGGUFMTPLayerHoldsNoLatent: a deepseek32 or glm-dsa file counts its
// MTP layer in block_count (62 = 61 + nextn_predict_layers 1), but
// llama.cpp's main context caches the latent of the trunk's layers only
// (filter_mla, il < n_layer(), in llama_model::create_memory, src/
// llama-model.cpp of unslothai/llama.cpp at d32676d7, a synced fork of
// ggml-org/llama.cpp): 61 x (512 + 64) values a token, like the indexer
// keys. A deepseek2 file keeps no such filter there (its nextn layer is
// cached), and a file without nextn_predict_layers caches every layer.
func TestGGUFMTPLayerHoldsNoLatent(t *testing.T) {
	latentPerToken := func(m *model.Model) float64 {
		const ctx = 1 << 16
		trunk := *m
		trunk.IndexerLayers = 0
		return float64(quant.KVCacheBytes(&trunk, ctx, 1, quant.KVOptions{Bytes: 2})) / ctx
	}
	m, err := ReadGGUF(bytes.NewReader(ggufDSA("deepseek32", 62, 1, 163840, nil)))
	require.NoError(t, err)
	assert.Equal(t, 62, m.Layers, "the MTP layer stays a layer of the file (its weights)")
	assert.Equal(t, float64(61*(512+64)*2), latentPerToken(m))

	m, err = ReadGGUF(bytes.NewReader(ggufDSA("glm-dsa", 9, 1, 202752, nil)))
	require.NoError(t, err)
	assert.Equal(t, float64(8*(512+64)*2), latentPerToken(m))

	m, err = ReadGGUF(bytes.NewReader(ggufDSA("deepseek32", 61, 0, 163840, nil)))
	require.NoError(t, err)
	assert.Equal(t, float64(61*(512+64)*2), latentPerToken(m))

	m, err = ReadGGUF(bytes.NewReader(ggufDSA("deepseek2", 62, 1, 163840, nil)))
	require.NoError(t, err)
	assert.Equal(t, float64(62*(512+64)*2), latentPerToken(m))
}
