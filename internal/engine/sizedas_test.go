package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// The note that a level is sized as another file type is the engine's own
// (WeightsSizer): llama.cpp says which GGUF type it loads for int4; an
// engine that loads int4 as int4, and llama.cpp at a level it loads as
// itself, write none.
func TestSizedAsNoteIsTheEngines(t *testing.T) {
	llama, ok := Lookup(NameLlamaCPP)
	require.True(t, ok)
	vllm, ok := Lookup(NameVLLM)
	require.True(t, ok)
	n := SizedAsNote(llama, quant.INT4, "cuda_gpu and cpu")
	assert.Contains(t, n, "int4 is sized as the GGUF type Q4_K_M, the file llama.cpp loads for it on cuda_gpu and cpu devices (")
	assert.Contains(t, n, "bits per weight on the reference model), not as generic int4 weights")
	assert.Empty(t, SizedAsNote(llama, quant.BF16, "cpu"))
	assert.Empty(t, SizedAsNote(vllm, quant.INT4, "cuda_gpu"))
}

// CommonCacheNames and IsCommonCacheType read the one list.
func TestCommonCacheNames(t *testing.T) {
	assert.Equal(t, []string{"fp16", "bf16", "fp8", "int8"}, CommonCacheNames())
	for _, n := range CommonCacheNames() {
		assert.True(t, IsCommonCacheType(n), n)
	}
	assert.False(t, IsCommonCacheType("q8_0"))
}
