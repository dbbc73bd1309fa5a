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
	assertTensorsHoldParams(t, m)
	v31 := catalogModel(t, "DeepSeek-V3.1")
	// The indexer's three matrices are quantized like the other 2-D
	// weights: at fp8 they add a byte each and, as both checkpoints record
	// 128x128 blocks with a float32 scale each (catalog.json's layouts of
	// V3.1 and V3.2), four bytes per 16384 weights (852 blocks a layer);
	// the k_norm vectors two bytes each.
	matrices := int64(13959424 - 256)
	assert.Equal(t, int64(61*matrices+61*(matrices/16384)*4+61*256*2), WeightsBytes(m, FP8)-WeightsBytes(v31, FP8))
}
