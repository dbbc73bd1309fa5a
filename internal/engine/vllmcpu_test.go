package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

// vLLM's CPU backend takes its KV cache from VLLM_CPU_KVCACHE_SPACE, whole
// GiB (int() of the variable; 0 or unset: 4 GiB), so a plan on host memory
// alone names the whole GiB of the room it left for the cache, rounded
// down: 20.7 GiB left gives 20, never 21. A plan that left less than one
// GiB gets no variable (0 would mean vLLM's 4 GiB default) and a note; a
// plan whose rounded pool cannot hold one sequence of its context (vLLM
// refuses to start then) gets a note too. Accelerator plans get none.
func TestVLLMCPUKVCacheSpace(t *testing.T) {
	const gib = int64(1) << 30
	e := vllm{}
	cpu := func(space, need int64) *Placement {
		return &Placement{Kind: registry.KindCPU, Context: 32768, HostKVSpaceBytes: space, HostKVNeedBytes: need}
	}
	p := cpu(22232249344, 9395240960) // thinkpad-p16s-krackan, plan-70b-vllm: 20.7 GiB left, 8.75 needed
	assert.Equal(t, map[string]string{"VLLM_CPU_KVCACHE_SPACE": "20"}, e.Env(p))
	assert.Empty(t, e.StartNotes(p))

	p = cpu(20*gib, 20*gib)
	assert.Equal(t, map[string]string{"VLLM_CPU_KVCACHE_SPACE": "20"}, e.Env(p), "exactly 20 GiB")
	assert.Empty(t, e.StartNotes(p))

	p = cpu(9*gib-1, 8*gib+1) // 8 whole GiB left, one sequence needs a byte more
	assert.Equal(t, map[string]string{"VLLM_CPU_KVCACHE_SPACE": "8"}, e.Env(p))
	notes := e.StartNotes(p)
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "VLLM_CPU_KVCACHE_SPACE=8")
	assert.Contains(t, notes[0], "refuses to start")

	p = cpu(gib-1, gib/2)
	assert.Nil(t, e.Env(p), "under one GiB: no variable")
	notes = e.StartNotes(p)
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "4 GiB")

	gpu := &Placement{Kind: registry.KindTPU, HostKVSpaceBytes: 20 * gib}
	assert.Nil(t, e.Env(gpu))
}
