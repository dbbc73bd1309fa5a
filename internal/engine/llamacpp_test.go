package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// For llama.cpp an FP8-native model is planned at Q8_0 then Q4_K_M, the
// auto ladder without its fp8 row and with each GGUF type once.
func TestLlamaCPPLevels(t *testing.T) {
	e := llamaCPP{}
	got, _ := e.Levels([]quant.Level{quant.FP8, quant.INT4})
	assert.Equal(t, []quant.Level{"q8_0", "q6_k", "q5_k_m", "q4_k_m", "iq4_xs", "q3_k_m", "q2_k"}, got, "auto walks the GGUF ladder")
	got, _ = e.Levels([]quant.Level{quant.BF16, quant.FP16, quant.FP8, quant.INT8, quant.INT4})
	assert.Equal(t, []quant.Level{quant.BF16, quant.FP16, "q8_0", "q6_k", "q5_k_m", "q4_k_m", "iq4_xs", "q3_k_m", "q2_k"}, got)
	got, _ = e.Levels([]quant.Level{quant.INT4})
	assert.Equal(t, []quant.Level{"q4_k_m"}, got, "a level asked alone is not a ladder")
	got, _ = e.Levels([]quant.Level{quant.FP8})
	assert.Equal(t, []quant.Level{quant.FP8}, got, "asked alone, fp8 is refused with its reason")
	assert.Equal(t, "llama.cpp has no fp8 weight format", e.CannotLoad(quant.FP8))
}

// --n-cpu-moe 3 is the experts of layers 0, 1 and 2 on the CPU: the -ot
// form names exactly those layers' ffn_*_exps tensors.
func TestCPUMoEOverride(t *testing.T) {
	assert.Contains(t, cpuMoEOverride(3), `-ot "blk\.(0|1|2)\.ffn_(up|down|gate)_exps=CPU"`)
}
