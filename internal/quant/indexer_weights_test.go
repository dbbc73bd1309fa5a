package quant

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIndexerTensors: DeepSeek-V3.2's tensors, the indexer's among them
// (wq_b, wk, k_norm, weights_proj in each of the 61 layers), add up to the
// shape's count, and at bf16 to two bytes each.
func TestIndexerTensors(t *testing.T) {
	m := catalogModel(t, "DeepSeek-V3.2")
	require.Equal(t, 61, m.IndexerLayers)
	ts, ok := tensors(m)
	require.True(t, ok)
	var sum float64
	for _, x := range ts {
		sum += x.elements
	}
	assert.InDelta(t, float64(m.Params), sum, 1)
	assert.InDelta(t, 2*float64(m.Params), float64(WeightsBytes(m, BF16)), 2)
	v31 := catalogModel(t, "DeepSeek-V3.1")
	// The indexer's three matrices are quantized like the other 2-D
	// weights: at fp8 they add a byte each, the k_norm vectors two.
	assert.Equal(t, int64(61*(13959424-256)+61*256*2), WeightsBytes(m, FP8)-WeightsBytes(v31, FP8))
}
