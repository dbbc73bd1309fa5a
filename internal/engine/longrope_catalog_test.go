package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// Phi-3.5-mini-instruct's config.json scales its rotary embedding with
// LongRoPE ("rope_scaling": {"type": "longrope", ...},
// "original_max_position_embeddings": 4096, the preset "phi-3_5" of
// mlc-ai/mlc-llm python/mlc_llm/model/model_preset.py @ 01ced331, the
// catalog entry's source), so vLLM builds its short table of 4096
// positions beside the long one of 131072 (phi3_long_rope_scaled_rope.py,
// vllmrope.go), each 96 values (3072 / 32 heads) wide in bf16. Kept
// without its rope_scaling, the entry was charged the default kind's one
// table.
func TestPhi35ChargedItsLongRoPETables(t *testing.T) {
	m := model.Lookup("Phi-3.5-mini-instruct")
	require.NotNil(t, m)
	assert.Equal(t, "longrope", m.Rope.Type)
	assert.Equal(t, 4096, m.Rope.OriginalMaxPositions)
	assert.Equal(t, int64((4096+131_072)*96*2), VLLMRopeCacheBytes(m, 2))
}
