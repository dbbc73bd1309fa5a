package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// TestLevelRulesDecideOnlyCUDAWithKnownCapability: the engines' rules
// answer for a CUDA device whose compute capability is known, and leave
// every other device (another kind, or a capability detection could not
// read: "pci-id-table" is a source, not a value) to its precision list.
func TestLevelRulesDecideOnlyCUDAWithKnownCapability(t *testing.T) {
	rules := []LevelRule{llamaCPP{}, vllm{}, sglang{}}
	undecided := []registry.Device{
		{Kind: registry.KindCUDA, Name: "unknown"},
		{Kind: registry.KindCUDA, Name: "odd", ComputeCapability: "pci-id-table"},
		{Kind: registry.KindROCm, Name: "MI300X", Architecture: "gfx942"},
		{Kind: registry.KindCPU, Name: "host"},
	}
	for _, r := range rules {
		for _, d := range undecided {
			for _, l := range []quant.Level{quant.FP8, quant.INT4, "q4_k_m"} {
				_, decided := r.CannotRunLevel(&d, nil, l)
				assert.False(t, decided, "%T on %s at %s", r, d.Name, l)
			}
		}
	}
	// llama.cpp decides every GGUF type on a known CUDA GPU; bf16 it leaves.
	v100 := registry.Device{Kind: registry.KindCUDA, Name: "Tesla V100", ComputeCapability: "7.0"}
	for _, l := range []quant.Level{"q4_k_m", "iq2_xs", "q8_0", quant.INT4, quant.FP16} {
		why, decided := llamaCPP{}.CannotRunLevel(&v100, nil, l)
		assert.True(t, decided, l)
		assert.Empty(t, why, l)
	}
	_, decided := llamaCPP{}.CannotRunLevel(&v100, nil, quant.BF16)
	assert.False(t, decided)
	// Maxwell (5.2) is llama.cpp's floor's side that runs; Kepler (3.5) not.
	maxwell := registry.Device{Kind: registry.KindCUDA, Name: "GTX 980", ComputeCapability: "5.2"}
	why, _ := llamaCPP{}.CannotRunLevel(&maxwell, nil, "q4_k_m")
	assert.Empty(t, why)
	kepler := registry.Device{Kind: registry.KindCUDA, Name: "GT 640", ComputeCapability: "3.5"}
	why, decided = llamaCPP{}.CannotRunLevel(&kepler, nil, quant.FP16)
	assert.True(t, decided)
	assert.Contains(t, why, "GT 640 has 3.5")
	// vLLM's fp8 without a model (no published checkpoint: quantized on
	// load) is its fp8 method: 8.0 runs, 7.5 does not.
	a100 := registry.Device{Kind: registry.KindCUDA, Name: "A100", ComputeCapability: "8.0"}
	t4 := registry.Device{Kind: registry.KindCUDA, Name: "T4", ComputeCapability: "7.5"}
	why, decided = vllm{}.CannotRunLevel(&a100, nil, quant.FP8)
	assert.True(t, decided)
	assert.Empty(t, why)
	why, _ = vllm{}.CannotRunLevel(&t4, nil, quant.FP8)
	assert.Contains(t, why, "T4 has 7.5")
}
