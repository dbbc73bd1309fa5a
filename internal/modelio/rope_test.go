package modelio

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// TestRopeParametersOfPublishedConfigs: transformers v5's rope_parameters
// in Qwen3.5-35B-A3B's published config.json (testdata/configs/SOURCES.md)
// hold rope_theta, the type, partial_rotary_factor and the MRoPE sections
// (text_config.rope_parameters: {"mrope_interleaved": true,
// "mrope_section": [11, 11, 10], "rope_type": "default", "rope_theta":
// 10000000, "partial_rotary_factor": 0.25}). vLLM's MRotaryEmbedding
// tabulates four times the 262,144 positions, on a quarter of each
// 256-wide head: 262,144 × 4 × 64 × 2 bytes, 128 MiB. Llama 4 Maverick's
// rope_scaling null is the default kind (1,048,576 × 128 × 2 bytes, 256
// MiB); Nemotron 3 Nano's attention has no rotary embedding, whatever its
// partial_rotary_factor and rope_theta say.
func TestRopeParametersOfPublishedConfigs(t *testing.T) {
	cfg, _ := loadFixtureConfig(t, "qwen3.5-35b-a3b.json")
	m, err := model.FromConfig(cfg)
	require.NoError(t, err)
	assert.Equal(t, model.Rope{Type: "default", Theta: 1e7, PartialFactor: 0.25, MRoPE: true}, m.Rope)
	assert.Zero(t, m.SlidingRope)
	assert.Equal(t, int64(262_144*4*64*2), engine.VLLMRopeCacheBytes(m, 2))

	cfg, _ = loadFixtureConfig(t, "llama-4-maverick-17b-128e-instruct.json")
	m, err = model.FromConfig(cfg)
	require.NoError(t, err)
	assert.Equal(t, model.Rope{Theta: 500000}, m.Rope)
	assert.Equal(t, int64(256<<20), engine.VLLMRopeCacheBytes(m, 2))

	cfg, _ = loadFixtureConfig(t, "nvidia-nemotron-3-nano-30b-a3b-bf16.json")
	m, err = model.FromConfig(cfg)
	require.NoError(t, err)
	assert.Equal(t, 1.0, m.Rope.PartialFactor)
	assert.Zero(t, engine.VLLMRopeCacheBytes(m, 2))
}
