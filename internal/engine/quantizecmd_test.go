package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// The llama-quantize line of a type no catalog repository publishes writes
// the file the plan sized. Before, every type was told to use --imatrix:
// Q8_0 does not read one (quantize_q8_0 ignores quant_weights), and with one
// a Q4_0 or Q5_0 file has its first ffn_down tensors raised to Q4_1/Q5_1
// (llama-quant.cpp), larger than planned; a plain "q4_k" level was written
// as llama-quantize's Q4_K alias, the Q4_K_M mix, not the pure type sized.
func TestQuantizeCommandWritesTheFilePlanned(t *testing.T) {
	for _, c := range []struct {
		level quant.Level
		want  string
	}{
		{"iq2_xxs", "llama-quantize --imatrix IMATRIX.gguf M-F16.gguf M-IQ2_XXS.gguf IQ2_XXS (from a 16-bit GGUF; llama-quantize refuses IQ2_XXS without an importance matrix"},
		{"iq3_xs", "llama-quantize --imatrix IMATRIX.gguf M-F16.gguf M-IQ3_XS.gguf IQ3_XS"},
		{"q2_k_s", "llama-quantize --imatrix IMATRIX.gguf M-F16.gguf M-Q2_K_S.gguf Q2_K_S"},
		{"q4_k_m", "llama-quantize M-F16.gguf M-Q4_K_M.gguf Q4_K_M (from a 16-bit GGUF; --imatrix IMATRIX.gguf, which llama-imatrix computes, improves its quality at no larger size)"},
		{"int4", "llama-quantize M-F16.gguf M-Q4_K_M.gguf Q4_K_M (from a 16-bit GGUF; --imatrix"},
		{"q8_0", "llama-quantize M-F16.gguf M-Q8_0.gguf Q8_0 (from a 16-bit GGUF; an importance matrix would change nothing"},
		{"q4_0", "llama-quantize M-F16.gguf M-Q4_0.gguf Q4_0 (from a 16-bit GGUF, without --imatrix: with an importance matrix llama-quantize stores the ffn_down tensors of the first eighth of the layers as Q4_1, a larger file than planned)"},
		{"q5_0", "as Q5_1, a larger file"},
		{"q4_k", "llama-quantize --pure M-F16.gguf M-Q4_K.gguf Q4_K (from a 16-bit GGUF; --imatrix"},
	} {
		assert.Contains(t, quantizeCommand(c.level, "M", c.level.GGUFType()), c.want, c.level)
	}
}

func TestImatrixFor(t *testing.T) {
	for l, want := range map[quant.Level]quant.Imatrix{
		"iq1_s": quant.ImatrixRequired, "iq2_m": quant.ImatrixRequired, "iq3_xxs": quant.ImatrixRequired,
		"iq3_m": quant.ImatrixOptional, "iq4_xs": quant.ImatrixOptional, "q6_k": quant.ImatrixOptional,
		"q5_0": quant.ImatrixGrows, "q8_0": quant.ImatrixUnused, "int8": quant.ImatrixUnused,
		"fp16": quant.ImatrixUnused, "mxfp4": quant.ImatrixUnused, "iq2_xxs": quant.ImatrixRequired,
	} {
		assert.Equal(t, want, quant.ImatrixFor(l), l)
	}
	assert.True(t, quant.IsPureType("q5_k"))
	assert.False(t, quant.IsPureType("q5_k_m"))
	assert.False(t, quant.IsPureType("int4"))
	assert.False(t, quant.IsPureType("mxfp4"))
}
