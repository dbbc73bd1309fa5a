package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A linear rope_scaling's factor is read (rope_type, or type in older
// configs); another kind, a factor of 1 or none is 0. Gemma 3's global
// layers interpolate positions 8 times (MedGemma 27B's verbatim
// config.json, the catalog's source).
func TestLinearRopeFactor(t *testing.T) {
	assert.Equal(t, 8.0, linearRopeFactor(map[string]any{"rope_scaling": map[string]any{"factor": 8.0, "rope_type": "linear"}}))
	assert.Equal(t, 4.0, linearRopeFactor(map[string]any{"rope_scaling": map[string]any{"factor": 4.0, "type": "linear"}}))
	assert.Zero(t, linearRopeFactor(map[string]any{"rope_scaling": map[string]any{"factor": 8.0, "rope_type": "llama3"}}))
	assert.Zero(t, linearRopeFactor(map[string]any{"rope_scaling": map[string]any{"factor": 1.0, "rope_type": "linear"}}))
	assert.Zero(t, linearRopeFactor(map[string]any{"rope_scaling": nil}))
	assert.Zero(t, linearRopeFactor(map[string]any{}))
	for _, name := range []string{"medgemma-27b-it", "Gemma-3-4B", "Gemma-3-12B", "Gemma-3-27B"} {
		m := Lookup(name)
		require.NotNil(t, m, name)
		assert.Equal(t, 8.0, m.RopeLinearFactor, name)
	}
	m := Lookup("Gemma-3-1B")
	require.NotNil(t, m)
	assert.Zero(t, m.RopeLinearFactor, "the 1B's 32k context is not interpolated")
}
