package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// vLLM's CPU floor refuses an x86 CPU with neither AVX2 nor AVX-512 and
// names what it has; an x86 CPU with either, and an arm64 CPU (ARMv8 is
// one of its CPU targets), run.
func TestVLLMCannotRunOnCPU(t *testing.T) {
	floor := vllm{}
	cpu := func(line string) specs.CPUVector {
		v, ok := specs.CPUVectorOf(registry.Device{Name: "X", CPUFeatures: registry.CPUFeaturesOf(strings.Fields(line))})
		assert.True(t, ok)
		return v
	}
	assert.Equal(t, "vLLM's CPU backend needs AVX-512 or AVX2 on x86 (vllm-project/vllm cmake/cpu_extension.cmake); X has SSE4.2 at most",
		floor.CannotRunOnCPU(cpu("sse2 ssse3 sse4_1 sse4_2")))
	assert.Empty(t, floor.CannotRunOnCPU(cpu("sse2 sse4_2 avx avx2")))
	assert.Empty(t, floor.CannotRunOnCPU(cpu("sse2 sse4_2 avx avx512f")))
	assert.Empty(t, floor.CannotRunOnCPU(cpu("asimd asimddp sve")), "arm64")
}
