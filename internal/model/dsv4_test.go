package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeepSeekV4Attention: DeepSeek-V4's attention is read from its
// config's o_groups and o_lora_rank, and one layer's weights are those of
// class Attention in the reference inference/model.py of the release
// (copied at https://github.com/tenstorrent/tt-metal/blob/53cf8635645eac8664b01588c9c30ff80c5e89ed/plans/hf_model_cards/deepseek-v4-flash/inference/model.py):
// wq_a (dim × q_lora_rank), q_norm, wq_b (q_lora_rank × n_heads·head_dim),
// wkv (dim × head_dim, the one head that is key and value), kv_norm, wo_a
// (n_heads·head_dim/o_groups × o_groups·o_lora_rank) and wo_b
// (o_groups·o_lora_rank × dim). DeepSeek-V4-Pro: 7168 wide, 128 heads of
// 512, q_lora_rank 1536, 16 groups of rank 1024.
func TestDeepSeekV4Attention(t *testing.T) {
	pro := Lookup("DeepSeek-V4-Pro")
	require.NotNil(t, pro)
	assert.Equal(t, 16, pro.OGroups)
	assert.Equal(t, 1024, pro.OLoRARank)
	want := 7168*1536 + 1536 + 1536*128*512 + 7168*512 + 512 + 128*512/16*16*1024 + 16*1024*7168
	assert.InDelta(t, float64(want), attentionParams(pro, pro.LayerAt(0)), 0)

	flash := Lookup("DeepSeek-V4-Flash")
	require.NotNil(t, flash)
	assert.Equal(t, 8, flash.OGroups)
	assert.Equal(t, 1024, flash.OLoRARank)

	// A config without the keys keeps the attention it had.
	v3 := Lookup("DeepSeek-V3")
	require.NotNil(t, v3)
	assert.Zero(t, v3.OGroups)
	assert.Zero(t, v3.OLoRARank)
}
