package model

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// catalogEntry is the catalog entry of that name.
func catalogEntry(t *testing.T, name string) CatalogEntry {
	t.Helper()
	for _, e := range Catalog() {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("no catalog entry %q", name)
	return CatalogEntry{}
}

// TestIndexerFromConfig: the lightning indexer of DeepSeek Sparse
// Attention is read from the config's index_* keys beside an MLA latent,
// every layer's unless indexer_types marks some "shared" (GLM-5.2: 21 of
// its 78 entries are "full"), and not for DeepSeek-V4 (compressed
// attention, planned approximately) nor a model without the keys.
func TestIndexerFromConfig(t *testing.T) {
	v32 := Lookup("DeepSeek-V3.2")
	require.NotNil(t, v32)
	assert.Equal(t, 64, v32.IndexerHeads)
	assert.Equal(t, 128, v32.IndexerHeadDim)
	assert.Equal(t, 2048, v32.IndexerTopK)
	assert.Equal(t, 61, v32.IndexerLayers)

	glm := Lookup("GLM-5")
	require.NotNil(t, glm)
	assert.Equal(t, 32, glm.IndexerHeads)
	assert.Equal(t, glm.Layers, glm.IndexerLayers)

	glm52 := Lookup("GLM-5.2")
	require.NotNil(t, glm52)
	assert.Equal(t, 78, glm52.Layers)
	assert.Equal(t, 21, glm52.IndexerLayers)

	for _, name := range []string{"DeepSeek-V3", "DeepSeek-V3.1", "DeepSeek-V4-Flash"} {
		m := Lookup(name)
		require.NotNil(t, m, name)
		assert.Zero(t, m.IndexerLayers, name)
		assert.Zero(t, m.IndexerHeads, name)
	}

	// The keys without an MLA latent are not an indexer this reads.
	m, err := FromConfig(map[string]any{"num_hidden_layers": 2.0, "hidden_size": 64.0, "num_attention_heads": 4.0,
		"vocab_size": 100.0, "index_n_heads": 4.0, "index_head_dim": 16.0})
	require.NoError(t, err)
	assert.Zero(t, m.IndexerLayers)
}

// TestIndexerWeightsAgainstHubCounts: DeepSeek-V3.1 and DeepSeek-V3.2
// share one shape but the indexer, and the Hugging Face Hub counts their
// checkpoints (hub_params: 684,531,386,000 and 685,396,921,376). The
// difference, 865,535,376 parameters, is the indexers of the 61 layers
// and of the MTP layer; the shape's is 62 x 13,959,424 = 865,484,288
// (the rest, 51,088, is the checkpoints' own differences in the MTP
// layer's copies, 0.006 %).
func TestIndexerWeightsAgainstHubCounts(t *testing.T) {
	v31, v32 := catalogEntry(t, "DeepSeek-V3.1"), catalogEntry(t, "DeepSeek-V3.2")
	require.Positive(t, v31.HubParams)
	require.Positive(t, v32.HubParams)
	a, err := FromConfig(v31.Config)
	require.NoError(t, err)
	b, err := FromConfig(v32.Config)
	require.NoError(t, err)

	assert.Equal(t, 13959424.0, indexerParams(b), "one layer's indexer: 1536 x 8192 + 7168 x 128 + 256 + 7168 x 64")
	derived := (b.Params + b.MTPParams) - (a.Params + a.MTPParams)
	assert.Equal(t, int64(62*13959424), derived)
	hub := v32.HubParams - v31.HubParams
	rel := float64(derived)/float64(hub) - 1
	t.Logf("indexer weights: %d derived, %d between the Hub counts (%+.4f %%)", derived, hub, 100*rel)
	assert.LessOrEqual(t, math.Abs(rel), 0.001)

	// Every token runs the indexer: it is active weight too.
	assert.Equal(t, int64(61*13959424), b.ActiveParams-a.ActiveParams)
}
