package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lookupRope is the rotary configurations of the catalog model name.
func lookupRope(t *testing.T, name string) (Rope, Rope) {
	t.Helper()
	m := Lookup(name)
	require.NotNil(t, m, name)
	return m.Rope, m.SlidingRope
}

// The older keys: rope_scaling (its type under "rope_type", or "type" in
// older configs) with rope_theta, partial_rotary_factor, rotary_dim and
// Phi-3's original_max_position_embeddings beside it, as the catalog's
// verbatim configs give them.
func TestRopeFromOlderKeys(t *testing.T) {
	// Gemma 3's global layers interpolate positions 8 times (MedGemma
	// 27B's verbatim config.json, the catalog's source).
	for _, name := range []string{"medgemma-27b-it", "Gemma-3-4B", "Gemma-3-12B", "Gemma-3-27B"} {
		full, sliding := lookupRope(t, name)
		assert.Equal(t, "linear", full.Type, name)
		assert.Equal(t, 8.0, full.Factor, name)
		assert.Zero(t, sliding, name+": the sliding layers' table comes from the family (Arch.VLLMLocalRotary)")
	}
	full, _ := lookupRope(t, "Gemma-3-1B")
	assert.Zero(t, full.Factor, "the 1B's 32k context is not interpolated")

	full, _ = lookupRope(t, "Phi-4-mini-instruct")
	assert.Equal(t, Rope{Type: "longrope", Theta: 10000, PartialFactor: 0.75, OriginalMaxPositions: 4096}, full)
	full, _ = lookupRope(t, "Qwen3-Next-80B-A3B-Instruct")
	assert.Equal(t, Rope{Theta: 1e7, PartialFactor: 0.25}, full)
	// GLM-4.7 rotates half of each head (its config.json at tt-metal's
	// copy, the catalog's source; rope_scaling null).
	full, _ = lookupRope(t, "GLM-4.7")
	assert.Equal(t, Rope{Theta: 1e6, PartialFactor: 0.5}, full)
	full, _ = lookupRope(t, "stablelm-2-zephyr-1_6b")
	assert.Equal(t, 0.25, full.PartialFactor)
	full, _ = lookupRope(t, "MiniMax-M2.5")
	assert.Equal(t, Rope{Theta: 5e6, RotaryDim: 64}, full)
	full, _ = lookupRope(t, "Reka-Flash-3")
	assert.Equal(t, Rope{Theta: 8e6}, full, "rope_scaling null is the default kind")

	// Qwen2.5-VL's rope_scaling {"type": "mrope", "mrope_section": [16,
	// 24, 24]} (onnx-diagnostic's copy of its config.json, the catalog's
	// source): the default kind with MRoPE sections.
	full, _ = lookupRope(t, "Qwen2.5-VL-7B-Instruct")
	assert.Equal(t, Rope{Type: "default", Theta: 1e6, MRoPE: true}, full)

	// "type" of older configs, and the names vLLM normalises ("mrope" is
	// the default kind with sections, "su" LongRoPE's first name).
	assert.Equal(t, Rope{Type: "linear", Factor: 4}, ropeFrom(map[string]any{"factor": 4.0, "type": "linear"}))
	assert.Equal(t, Rope{Type: "default", MRoPE: true}, ropeFrom(map[string]any{"type": "mrope", "mrope_section": []any{16.0, 24.0, 24.0}}))
	assert.Equal(t, "longrope", ropeFrom(map[string]any{"type": "su"}).Type)
	// Values out of range are left out, not taken.
	assert.Zero(t, ropeFrom(map[string]any{"rope_type": "linear", "factor": 1e9}).Factor)
	assert.Zero(t, ropeFrom(map[string]any{"partial_rotary_factor": 1.5}).PartialFactor)
	assert.Zero(t, ropeFrom(map[string]any{"factor": "8"}).Factor)
}

// transformers v5's rope_parameters, flat or keyed by layer type, with
// rope_theta, the type, the factor and partial_rotary_factor under it.
func TestRopeFromRopeParameters(t *testing.T) {
	// Flat, with partial_rotary_factor moved under it (and kept beside it).
	full, sliding := lookupRope(t, "Qwen3.8-2.4T-A95B")
	assert.Equal(t, Rope{Type: "default", Theta: 1e7, PartialFactor: 0.25}, full)
	assert.Zero(t, sliding)
	// Flat, with the MRoPE sections (Qwen3.5's and Qwen3.6's published
	// text_config.rope_parameters, the aiconfigurator copies the catalog
	// cites).
	for _, name := range []string{"Qwen3.5-27B", "Qwen3.5-397B-A17B", "Qwen3.6-27B"} {
		full, _ = lookupRope(t, name)
		assert.Equal(t, Rope{Type: "default", Theta: 1e7, PartialFactor: 0.25, MRoPE: true}, full, name)
	}
	// Flat YaRN under multi-head latent attention.
	full, _ = lookupRope(t, "Kimi-K2.7-Code")
	assert.Equal(t, Rope{Type: "yarn", Theta: 50000, Factor: 64, OriginalMaxPositions: 4096}, full)
	full, _ = lookupRope(t, "GLM-5")
	assert.Equal(t, Rope{Type: "default", Theta: 1e6}, full)
	// Keyed by layer type: Gemma 4's proportional global layers on a
	// quarter of each head, default sliding ones.
	full, sliding = lookupRope(t, "Gemma-4-31B-IT")
	assert.Equal(t, Rope{Type: "proportional", Theta: 1e6, PartialFactor: 0.25}, full)
	assert.Equal(t, Rope{Type: "default", Theta: 10000}, sliding)
	// Laguna's YaRN global layers on half of each head, whole-head
	// default sliding ones.
	full, sliding = lookupRope(t, "Laguna-XS.2")
	assert.Equal(t, Rope{Type: "yarn", Theta: 500000, Factor: 64, OriginalMaxPositions: 4096, PartialFactor: 0.5}, full)
	assert.Equal(t, Rope{Type: "default", Theta: 10000, PartialFactor: 1}, sliding)
}

// Families without rotary positions, by the config or by the family.
func TestHasRotaryPositions(t *testing.T) {
	for _, name := range []string{"Llama-3.1-8B", "Qwen3-8B", "gpt-oss-20b", "DeepSeek-V2-Lite", "Falcon-40B"} {
		m := Lookup(name)
		require.NotNil(t, m, name)
		assert.True(t, m.HasRotaryPositions(), name)
	}
	m := Lookup("NVIDIA-Nemotron-Nano-9B-v2")
	require.NotNil(t, m)
	assert.False(t, m.HasRotaryPositions(), "Nemotron-H's attention has no rotary embedding")
	assert.True(t, ropeFrom(nil) == Rope{})
	full, _ := readRope(map[string]any{"position_embedding_type": "nope"})
	assert.True(t, full.None, "Granite 4.0-H's nope")
	full, _ = readRope(map[string]any{"position_embedding_type": "rope"})
	assert.False(t, full.None)
	full, _ = readRope(map[string]any{"alibi": true})
	assert.True(t, full.None, "Falcon's ALiBi variants")
}
