package api

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The eight Gaudi 2 OAM modules of gaudi2-8 are joined all-to-all by their
// on-chip RoCE scale-up ports (21 x 100 GbE each, docs.habana.ai "Intel
// Gaudi Network Configuration"): detection reports that domain and a 70B
// model is planned tensor parallel over Gaudis, as on an NVLink machine, not
// as a pipeline over PCIe.
func TestPlan70BTensorParallelOverGaudiScaleUp(t *testing.T) {
	a := fullPlan(t, "gaudi2-8", `{"model":{"name":"Llama-3.3-70B-Instruct"}}`)
	require.Equal(t, true, a["fits"])
	assert.Equal(t, "tensor_parallel", a["strategy"], "%v", explanation(a))
	tp := int(a["tp_size"].(float64))
	assert.GreaterOrEqual(t, tp, 2)
	shards := a["shards"].([]any)
	require.Len(t, shards, tp)
	for _, s := range shards {
		assert.Regexp(t, `^gaudi:\d$`, s.(map[string]any)["device_id"])
	}
}
