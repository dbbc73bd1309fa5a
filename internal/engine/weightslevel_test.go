package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// llama.cpp loads int8 and int4 as the GGUF files Q8_0 and Q4_K_M, so a
// plan for it (named or the default) sizes those levels as the files: the
// weights at WeightsLevel are the mapped GGUF type's, larger than the
// generic bits. Engines that load the level itself size it as the level.
func TestWeightsLevelIsTheLoadedType(t *testing.T) {
	llama, ok := Lookup("llama.cpp")
	require.True(t, ok)
	m := model.Lookup("Qwen3-235B-A22B")
	require.NotNil(t, m)
	for _, l := range []quant.Level{quant.INT8, quant.INT4} {
		w := WeightsLevel(llama, l)
		assert.Equal(t, l.LlamaCPPLevel(), w, l)
		assert.NotEqual(t, l, w, l)
		assert.Equal(t, quant.WeightsBytes(m, quant.Level(w)), quant.WeightsBytes(m, l.LlamaCPPLevel()), l)
		assert.Greater(t, quant.WeightsBytes(m, w), quant.WeightsBytes(m, l), "%s: the GGUF file outweighs generic bits", l)
	}
	for _, l := range []quant.Level{quant.BF16, quant.FP16, "q3_k_m"} {
		assert.Equal(t, l, WeightsLevel(llama, l), l)
	}
	vllm, ok := Lookup("vllm")
	require.True(t, ok)
	assert.Equal(t, quant.INT4, WeightsLevel(vllm, quant.INT4), "vLLM sizes int4 as int4")
	assert.Equal(t, quant.INT4, WeightsLevel(nil, quant.INT4), "no engine: the level itself")
}
