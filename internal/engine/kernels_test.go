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

// TestEngineCUDAFloors: below vLLM's compute capability floor (7.0) and
// SGLang's (7.5) the engine refuses every level, whatever the weights, with
// a reason naming its floor, its source and the device; at or above it the
// float levels stay with the device's precision list.
func TestEngineCUDAFloors(t *testing.T) {
	p40 := registry.Device{Kind: registry.KindCUDA, Name: "Tesla P40", ComputeCapability: "6.1"}
	v100 := registry.Device{Kind: registry.KindCUDA, Name: "Tesla V100", ComputeCapability: "7.0"}
	t4 := registry.Device{Kind: registry.KindCUDA, Name: "Tesla T4", ComputeCapability: "7.5"}
	for _, l := range []quant.Level{quant.FP16, quant.BF16, quant.INT8, quant.INT4, "q4_k_m"} {
		why, decided := vllm{}.CannotRunLevel(&p40, nil, l)
		assert.True(t, decided, l)
		assert.Contains(t, why, "vLLM needs compute capability 7.0", l)
		assert.Contains(t, why, "gpu.cuda.inc.md", l)
		assert.Contains(t, why, "Tesla P40 has 6.1", l)

		why, decided = sglang{}.CannotRunLevel(&v100, nil, l)
		assert.True(t, decided, l)
		assert.Contains(t, why, "SGLang needs compute capability 7.5", l)
		assert.Contains(t, why, "model_runner.py", l)
		assert.Contains(t, why, "Tesla V100 has 7.0", l)
	}
	for _, l := range []quant.Level{quant.FP16, quant.BF16} {
		_, decided := vllm{}.CannotRunLevel(&v100, nil, l)
		assert.False(t, decided, "vLLM on a V100 at %s: the precision list decides", l)
	}
	_, decided := sglang{}.CannotRunLevel(&t4, nil, quant.FP16)
	assert.False(t, decided, "SGLang on a T4 at fp16: the precision list decides")
	// Below 8.0 SGLang loads float16 whatever --dtype asks
	// (sglangHalfBelow): bf16 and fp32 are its own refusal.
	for _, l := range []quant.Level{quant.BF16, quant.FP32} {
		why, decided := sglang{}.CannotRunLevel(&t4, nil, l)
		assert.True(t, decided, l)
		assert.Contains(t, why, "SGLang runs float16 weights below compute capability 8.0", l)
		assert.Contains(t, why, "Tesla T4 has 7.5", l)
	}
}

// TestPreferenceFollowsFloor: vLLM does not claim a CUDA GPU below its
// floor, and claims one whose capability is not known; SGLang is never a
// default.
func TestPreferenceFollowsFloor(t *testing.T) {
	assert.Equal(t, Never, vllm{}.Preference(Device{Kind: registry.KindCUDA, ComputeCapability: "6.1"}))
	assert.Equal(t, Primary, vllm{}.Preference(Device{Kind: registry.KindCUDA, ComputeCapability: "7.0"}))
	assert.Equal(t, Primary, vllm{}.Preference(Device{Kind: registry.KindCUDA}))
	assert.Equal(t, Primary, vllm{}.Preference(Device{Kind: registry.KindROCm, ComputeCapability: "6.1"}), "a capability is CUDA's only")
	assert.Equal(t, Secondary, llamaCPP{}.Preference(Device{Kind: registry.KindCUDA, ComputeCapability: "6.1"}))
	assert.Equal(t, Never, sglang{}.Preference(Device{Kind: registry.KindCUDA, ComputeCapability: "9.0"}))
}
