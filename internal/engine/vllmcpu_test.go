package engine

import (
	"strconv"
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
// down: 20.7 GiB left gives 20, never 21; exactly 20 GiB gives 20. Under
// one GiB there is no value to name (0 would mean the 4 GiB default).
// Accelerator plans get none.
func TestVLLMCPUKVCacheSpace(t *testing.T) {
	const gib = int64(1) << 30
	e := vllm{}
	cpu := func(space int64) *Placement { return &Placement{Kind: registry.KindCPU, HostKVSpaceBytes: space} }
	// thinkpad-p16s-krackan, plan-70b-vllm: 86.1 GiB available less 65.2 GiB of weights and 0.2 of activations
	assert.Equal(t, map[string]string{"VLLM_CPU_KVCACHE_SPACE": "20"}, e.Env(cpu(22232249344)))
	assert.Equal(t, map[string]string{"VLLM_CPU_KVCACHE_SPACE": "20"}, e.Env(cpu(20*gib)))
	assert.Equal(t, map[string]string{"VLLM_CPU_KVCACHE_SPACE": "8"}, e.Env(cpu(9*gib-1)))
	assert.Nil(t, e.Env(cpu(gib-1)), "under one GiB: no variable")
	assert.Equal(t, 20*gib, e.HostKVPoolBytes(22232249344))
	assert.Nil(t, e.Env(&Placement{Kind: registry.KindTPU, HostKVSpaceBytes: 20 * gib}))
}

// A refusal says which setting sizes vLLM's CPU KV pool by asking the
// engine (HostKVPooler.HostKVPoolSetting): it is the variable the plan's
// environment sets, and the pool the planner fits is its value in GiB.
func TestVLLMHostKVPoolSettingIsTheVariableItSets(t *testing.T) {
	e := vllm{}
	var k HostKVPooler = e
	for _, room := range []int64{22232249344, 20 << 30, 9<<30 - 1} {
		env := e.Env(&Placement{Kind: registry.KindCPU, HostKVSpaceBytes: room})
		v, ok := env[k.HostKVPoolSetting()]
		require.True(t, ok, "%v has no %s", env, k.HostKVPoolSetting())
		assert.Equal(t, strconv.FormatInt(k.HostKVPoolBytes(room)>>30, 10), v, room)
	}
}

// Replicas of pipelines that themselves span hosts' CPUs get no vLLM flags
// (cpuMultiHostArgs: vLLM documents no such launch), and a pipeline over
// three hosts names three nodes, this one rank 0, never Ray.
func TestVLLMCPUMultiHostArgs(t *testing.T) {
	cpu := &registry.Device{Kind: registry.KindCPU}
	stage := func(host string) Stage { return Stage{Devices: []PlacedDevice{{ID: host + "/cpu", Dev: cpu}}} }
	pipe := &Placement{Kind: registry.KindCPU, MultiNode: true, Stages: []Stage{stage("node0"), stage("node1"), stage("node2")}}
	args, notes, ok := cpuMultiHostArgs(pipe)
	assert.True(t, ok)
	assert.Equal(t, []string{"--distributed-executor-backend", "mp", "--nnodes", "3", "--node-rank", "0"}, args)
	assert.Contains(t, strings.Join(notes, " "), "(1..2)")
	both := &Placement{Kind: registry.KindCPU, MultiNode: true, DP: 2,
		Stages:   []Stage{stage("node0"), stage("node1")},
		Replicas: [][]Stage{{stage("node0"), stage("node1")}, {stage("node2"), stage("node3")}}}
	args, notes, ok = cpuMultiHostArgs(both)
	assert.False(t, ok)
	assert.Nil(t, args)
	assert.Contains(t, strings.Join(notes, " "), "no flags are given")
}
