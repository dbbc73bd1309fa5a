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

// The other Phi entries with 131072 positions scale their rotary
// embedding with LongRoPE too ("rope_scaling": {"long_factor": [...],
// "short_factor": [...], "type": "longrope"} beside
// "original_max_position_embeddings": 4096 in each entry's source:
// Phi-4-mini-instruct's preset "phi-4" of mlc-ai/mlc-llm
// python/mlc_llm/model/model_preset.py @ 79d603f0, Phi-4-mini-reasoning's
// and Phi-3-mini-128k-instruct's _ccached_ configs of sdpython/onnx-diagnostic
// onnx_diagnostic/torch_models/hghub/hub_data_cached_configs.py @
// cc937c25), so vLLM builds the short table of 4096 positions beside the
// long one. Phi-4-mini rotates 96 of its 128-wide heads
// (partial_rotary_factor 0.75), Phi-3-mini all 96 of its own. Kept
// without their rope_scaling, the entries were charged the default kind's
// one table of 131072 positions.
func TestPhiLongContextEntriesChargedTheirLongRoPETables(t *testing.T) {
	for _, name := range []string{"Phi-4-mini-instruct", "Phi-4-mini-reasoning", "Phi-3-mini-128k-instruct"} {
		m := model.Lookup(name)
		require.NotNil(t, m, name)
		assert.Equal(t, "longrope", m.Rope.Type, name)
		assert.Equal(t, 4096, m.Rope.OriginalMaxPositions, name)
		assert.Equal(t, 131_072, m.MaxContext, name)
		assert.Equal(t, int64((4096+131_072)*96*2), VLLMRopeCacheBytes(m, 2), name)
	}
	// The 4k model has no scaling: one table of its 4096 positions.
	short := model.Lookup("Phi-3-mini-4k-instruct")
	require.NotNil(t, short)
	assert.Empty(t, short.Rope.Type)
	assert.Equal(t, int64(4096*96*2), VLLMRopeCacheBytes(short, 2))
}
