package wire

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// TestKVUpperBoundCoversEveryLayerKind: the request guard's bound is above
// the cache quant computes for every layer kind, recurrent state included,
// at short contexts (where a hybrid's fixed state dominates) and long ones.
// Qwen3-Next-80B-A3B's shape (see quant's TestKVCacheOfHybridModels).
func TestKVUpperBoundCoversEveryLayerKind(t *testing.T) {
	gdn := model.GatedDeltaNetState(16, 128, 32, 128, 4)
	hybrid := &model.Model{Layers: 48, Hidden: 2048, Heads: 16, KVHeads: 2, HeadDim: 256,
		LayerKinds: []model.Layer{gdn, gdn, gdn, {Kind: model.FullAttention}}}
	mla := model.Lookup("DeepSeek-V3")
	gemma := model.Lookup("Gemma-3-27B")
	for _, m := range []*model.Model{hybrid, mla, gemma} {
		for _, ctx := range []int{1, 16, 4096, 262144} {
			for _, batch := range []int{1, 64} {
				got := float64(quant.KVCacheBytes(m, ctx, batch, quant.KVOptions{Bytes: 2}))
				assert.GreaterOrEqual(t, kvUpperBound(m, ctx, batch), got, "%s ctx %d batch %d", m.Name, ctx, batch)
			}
		}
	}
}
