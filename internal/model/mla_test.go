package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMLAHeadWidths: under multi-head latent attention a head's widths are
// the config's MLA widths, not hidden / heads nor a head_dim key beside
// them. DeepSeek-V3 (config.json of deepseek-ai/DeepSeek-V3): 128 + 64
// scored, 128 summed, against 7168 / 128 = 56; absorbed, 512 + 64 and 512.
// GLM-4.7-Flash (no head_dim): 192 + 64 and 256, against 2048 / 20 = 102.
// GLM-5 (config.json of zai-org/GLM-5) states head_dim 64 beside
// qk_nope 192, qk_rope 64 and v_head_dim 256: the MLA widths hold. A model
// without a latent keeps its head size in both, and has no latent widths.
func TestMLAHeadWidths(t *testing.T) {
	cases := []struct {
		name                 string
		qk, v, latentQK, lat int
	}{
		{"DeepSeek-V3", 192, 128, 576, 512},
		{"GLM-4.7-Flash", 256, 256, 576, 512},
		{"GLM-5", 256, 256, 576, 512},
		{"Kimi-K2-Instruct", 192, 128, 576, 512},
		{"DeepSeek-V2-Lite", 192, 128, 576, 512},
		{"Llama-3.1-8B", 128, 128, 0, 0},
	}
	for _, c := range cases {
		m := Lookup(c.name)
		require.NotNil(t, m, c.name)
		assert.Equal(t, c.qk, m.QKHeadDim(), c.name)
		assert.Equal(t, c.v, m.ValueHeadDim(), c.name)
		assert.Equal(t, c.latentQK, m.LatentQKDim(), c.name)
		assert.Equal(t, c.lat, m.LatentValueDim(), c.name)
	}
	// An MLA config whose nope width is unknown (a GGUF without it) keeps
	// the fallback rather than a RoPE-only width.
	m := &Model{Hidden: 7168, Heads: 128, KVLoRARank: 512, QKRopeHeadDim: 64}
	assert.Equal(t, 56, m.QKHeadDim())
}
