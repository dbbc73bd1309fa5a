package quant

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/ggml"
)

// TestMLAKVBSplitTypes: an MLA model's GGUF holds kv_b_proj as two
// per-head tensors, attn_k_b (rows of qk_nope_head_dim) and attn_v_b (rows
// of kv_lora_rank), which llama-quant types as "other" tensors: the mix's
// base type in every layer, k-quants falling back where qk_nope_head_dim
// does not divide 256 (192 for GLM-4.7-Flash, 128 for DeepSeek-V3). No
// tensor of the whole kv_b_proj's size is left.
func TestMLAKVBSplitTypes(t *testing.T) {
	cases := []struct {
		model   string
		level   Level
		kb, vb  ggml.Type
		nope    int
		layerAt []int
	}{
		// Q4_K_M: attn_v's rule would give Q6_K in the use_more_bits
		// layers (0, 46); both stay at the base type (attn_k_b's row of
		// 192 falls back from Q4_K to Q5_0).
		{"GLM-4.7-Flash", "q4_k_m", ggml.Q5_0, ggml.Q4_K, 192, []int{0, 1, 7, 46}},
		{"GLM-4.7-Flash", "q5_k_m", ggml.Q5_1, ggml.Q5_K, 192, []int{0, 20, 46}},
		{"GLM-4.7-Flash", "q6_k", ggml.Q8_0, ggml.Q6_K, 192, []int{0, 46}},
		{"GLM-4.7-Flash", "q3_k_m", ggml.Q4_0, ggml.Q3_K, 192, []int{0, 1, 46}},
		{"GLM-4.7-Flash", "q8_0", ggml.Q8_0, ggml.Q8_0, 192, []int{0, 46}},
		{"GLM-4.7-Flash", "iq2_xxs", ggml.IQ4_NL, ggml.IQ2_XXS, 192, []int{0, 46}},
		{"DeepSeek-V3", "q4_k_m", ggml.Q5_0, ggml.Q4_K, 128, []int{0, 3, 60}},
		{"DeepSeek-V3", "q2_k", ggml.Q4_0, ggml.Q2_K, 128, []int{0, 60}},
	}
	for _, c := range cases {
		m := catalogModel(t, c.model)
		require.Equal(t, c.nope, m.QKNopeHeadDim, c.model)
		info, ok := levelFor(m, c.level)
		require.True(t, ok, c.level)
		ts, ok := tensors(m)
		require.True(t, ok, c.model)
		r, H := float64(m.KVLoRARank), float64(m.Heads)
		kb := r * H * float64(m.QKNopeHeadDim)
		vb := r * H * float64(m.VHeadDim)
		for _, i := range c.layerAt {
			var gotK, gotV []ggml.Type
			for _, tt := range ts {
				if tt.layer != i || tt.cat == catF32 {
					continue
				}
				// DeepSeek-V3's two halves have the same size
				// (qk_nope_head_dim = v_head_dim = 128): the row
				// length tells them apart.
				switch {
				case tt.elements == kb && tt.cols == m.QKNopeHeadDim:
					gotK = append(gotK, ggufTensorType(m, info, tt))
				case tt.elements == vb && tt.cols == m.KVLoRARank:
					gotV = append(gotV, ggufTensorType(m, info, tt))
				case tt.elements == kb+vb:
					t.Errorf("%s layer %d: a whole attn_kv_b of %.0f weights is listed", c.model, i, tt.elements)
				}
			}
			assert.Equal(t, []ggml.Type{c.kb}, gotK, "%s %s layer %d attn_k_b", c.model, c.level, i)
			assert.Equal(t, []ggml.Type{c.vb}, gotV, "%s %s layer %d attn_v_b", c.model, c.level, i)
		}
	}
}
