package quant

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/ggml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// shares is mw's weights per type over all its weights, head included.
func shares(mw MatmulWeights) map[ggml.Type]float64 {
	out := map[ggml.Type]float64{}
	var n float64
	for _, p := range mw.Layers {
		out[p.Type] += p.Weights
		n += p.Weights
	}
	out[mw.Head.Type] += mw.Head.Weights
	n += mw.Head.Weights
	for t := range out {
		out[t] /= n
	}
	return out
}

// TestMatmulTypesFollowTheFallback checks the per-tensor types a CPU
// decode is charged by: Qwen2.5-0.5B's rows of 896 are not multiples of
// 256, so its Q4_K_M holds Q5_0 where the mix says Q4_K and Q8_0 where it
// says Q6_K, the tied embedding (the head) included; Llama-3.2-1B's Q4_K_M
// holds Q4_K and Q6_K only.
func TestMatmulTypesFollowTheFallback(t *testing.T) {
	qwen, ok := MatmulTypes(model.Lookup("Qwen2.5-0.5B"), "q4_k_m")
	require.True(t, ok)
	s := shares(qwen)
	assert.InDelta(t, 0.51, s[ggml.Q5_0], 0.01)
	assert.Equal(t, ggml.Q8_0, qwen.Head.Type, "the tied embedding: Q6_K, fallen back to Q8_0")
	assert.InDelta(t, 0.28, s[ggml.Q8_0], 0.01)
	llama, ok := MatmulTypes(model.Lookup("Llama-3.2-1B"), "q4_k_m")
	require.True(t, ok)
	s = shares(llama)
	assert.Len(t, s, 2)
	assert.InDelta(t, 0.67, s[ggml.Q4_K], 0.01)
	assert.InDelta(t, 0.33, s[ggml.Q6_K], 0.01)
	for i := 1; i < len(llama.Layers); i++ {
		assert.Less(t, llama.Layers[i-1].Type, llama.Layers[i].Type, "sorted by type")
	}
}

// TestPureLevel checks that a pure level stores every matrix in its type
// (llama-quantize --pure), while the mix of the same lowercase name gives
// the output its own type (Q5_0's head is Q6_K, llama-quant's output rule).
func TestPureLevel(t *testing.T) {
	m := model.Lookup("Llama-3.2-1B")
	l, ok := PureLevel(ggml.Q5_0)
	require.True(t, ok)
	pure, ok := MatmulTypes(m, l)
	require.True(t, ok)
	assert.Equal(t, map[ggml.Type]float64{ggml.Q5_0: 1}, shares(pure))
	mix, ok := MatmulTypes(m, "q5_0")
	require.True(t, ok)
	assert.Equal(t, ggml.Q6_K, mix.Head.Type)
	for typ, want := range map[ggml.Type]Level{ggml.F16: FP16, ggml.BF16: BF16, ggml.F32: FP32} {
		got, ok := PureLevel(typ)
		assert.True(t, ok)
		assert.Equal(t, want, got)
	}
	_, ok = PureLevel(ggml.I32)
	assert.False(t, ok, "a type that stores no weights")
}

// TestMatmulTypesCountActiveExperts checks that a MoE layer's routed
// experts count at the share a token uses: Mixtral-8x7B (2 of 8 experts)
// multiplies its attention and a quarter of its experts per layer.
func TestMatmulTypesCountActiveExperts(t *testing.T) {
	m := model.Lookup("Mixtral-8x7B-v0.1")
	mw, ok := MatmulTypes(m, FP16)
	require.True(t, ok)
	h, I, kv := float64(m.Hidden), float64(m.Intermediate), float64(m.KVHeads*m.EffectiveHeadDim())
	perLayer := 2*h*h + 2*h*kv + 3*h*I*float64(m.ExpertsPerToken)
	require.Len(t, mw.Layers, 1)
	assert.InEpsilon(t, float64(m.Layers)*perLayer, mw.Layers[0].Weights, 1e-9)
	assert.Equal(t, ggml.F16, mw.Head.Type)
	assert.InEpsilon(t, float64(m.Vocab)*h, mw.Head.Weights, 1e-9, "the untied output head")
}

// TestMatmulTypesWithoutShape checks the fallback: a model without a
// shape counts one weight of the level's own type.
func TestMatmulTypesWithoutShape(t *testing.T) {
	mw, ok := MatmulTypes(&model.Model{Params: 1e9}, "q4_k_m")
	require.True(t, ok)
	assert.Equal(t, []TypeWeights{{ggml.Q4_K, 1}}, mw.Layers)
	mw, ok = MatmulTypes(&model.Model{Params: 1e9}, INT8)
	require.True(t, ok)
	assert.Equal(t, []TypeWeights{{ggml.Q8_0, 1}}, mw.Layers)
	_, ok = MatmulTypes(nil, "no-such-level")
	assert.False(t, ok)
}
