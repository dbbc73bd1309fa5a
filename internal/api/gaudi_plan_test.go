package api

import (
	"fmt"
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

// vllm-gaudi sets --block-size 128 where the user gives none
// (HpuPlatform.check_and_update_config in vllm_gaudi/platform.py,
// vllm-project/vllm-gaudi at 00db483642505ddfde2d446bef6b3eaf94b1f16d:
// "default block size for Gaudi should be 128"), so a sequence of 4100
// tokens holds 33 blocks of 128 (4224 tokens), as much as one of 4224,
// and the pool's tokens are whole blocks of 128.
func TestGaudiCountsVLLMBlocksOf128(t *testing.T) {
	kv := func(ctx int) (float64, map[string]any) {
		a := fullPlan(t, "gaudi2-8", fmt.Sprintf(`{"model":{"name":"Llama-3.1-8B"},"engine":"vllm","context_length":%d}`, ctx))
		require.Equal(t, true, a["fits"], "%v", a)
		x := a["engine_expect"].(map[string]any)["vllm"].(map[string]any)
		return a["memory"].(map[string]any)["kv_cache_bytes"].(float64), x
	}
	short, x := kv(4100)
	whole, _ := kv(4224)
	assert.Equal(t, whole, short, "4100 tokens hold the blocks of 4224")
	tokens := int(x["kv_cache_tokens"].(float64))
	assert.Zero(t, tokens%128, "kv_cache_tokens %d in blocks of 128", tokens)
}
