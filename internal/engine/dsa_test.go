package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// TestDSACacheRules: each engine's cache of a DeepSeek Sparse Attention
// model, one token over DeepSeek-V3.2's 61 layers. llama.cpp keeps the
// indexer key at its cache type; vLLM and SGLang keep a 132-byte key
// whatever the cache type, and their fp8 latent is FlashMLA's 656-byte
// layout (vLLM only for DeepseekV32ForCausalLM, whose config class sets
// fp8_ds_mla; GLM-5's fp8 latent stays 576 bytes there).
func TestDSACacheRules(t *testing.T) {
	v32 := model.Lookup("DeepSeek-V3.2")
	glm := model.Lookup("GLM-5")
	v3 := model.Lookup("DeepSeek-V3")
	require.NotNil(t, v32)
	require.NotNil(t, glm)
	require.NotNil(t, v3)
	perToken := func(name string, m *model.Model, bytes float64) int64 {
		e, ok := Lookup(name)
		require.True(t, ok, name)
		const ctx = 1 << 16
		return quant.KVCacheBytes(m, ctx, 1, e.KVRules(quant.KVOptions{Bytes: bytes}, m)) / ctx
	}
	assert.Equal(t, int64(61*(576+128)*2), perToken(NameLlamaCPP, v32, 2))
	// llama.cpp runs a one-byte cache as q8_0: 34 bytes per 32 values.
	assert.Equal(t, int64(61*(576+128)*34/32), perToken(NameLlamaCPP, v32, 1))
	for _, name := range []string{NameVLLM, NameSGLang} {
		assert.Equal(t, int64(61*(1152+132)), perToken(name, v32, 2), name)
		assert.Equal(t, int64(61*(656+132)), perToken(name, v32, 1), name)
		assert.Equal(t, int64(61*576*2), perToken(name, v3, 2), name)
	}
	gl := int64(glm.Layers)
	key := int64(glm.IndexerHeadDim + glm.IndexerHeadDim/128*4)
	latent := int64(glm.KVLoRARank + glm.QKRopeHeadDim)
	assert.Equal(t, gl*(latent+key), perToken(NameVLLM, glm, 1))
	assert.Equal(t, gl*(latent+int64(glm.KVLoRARank/128*4+glm.QKRopeHeadDim)+key), perToken(NameSGLang, glm, 1))
}
