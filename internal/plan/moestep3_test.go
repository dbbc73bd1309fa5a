package plan

import (
	"strings"
	"testing"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// DeepSeek-V3 (671B, 61 layers, 3 leading dense) on one 24 GiB GPU and
// 512 GiB of host RAM: not even every layer's dense weights fit the GPU
// at q4_k_m with all experts on the host, so llama.cpp's --fit (its step 3,
// common_params_fit_impl in common/fit.cpp) gives the GPU the dense
// weights and KV cache of the last layers that fit and keeps every routed
// expert in host memory: -ngl K with --cpu-moe, and the plan gives that
// split a speed.
func TestStep3DeepSeekV3DenseWeightsOfLastLayersOnGPU(t *testing.T) {
	r := reg(t, []registry.Device{rtx3090(), host(512 << 30)})
	a := shard(t, request(t, `{"model":{"name":"DeepSeek-V3"},"engine":"llama.cpp","cpu_offload":true,"quant":"q2_k","context_length":4096}`, r))
	require.True(t, a.Fits.Yes(), strings.Join(a.Explanation, "\n"))
	assert.Equal(t, StrategyOffload, a.Strategy)
	args := a.EngineArgs["llama.cpp"]
	ngl := atoi(argValue(args, "-ngl"))
	assert.Greater(t, ngl, 0, "%v", args)
	assert.Less(t, ngl, a.Model.Layers, "not every layer's dense weights fit: %v", args)
	assert.Contains(t, args, "--cpu-moe", "every routed expert in host memory: %v", args)
	assert.Empty(t, argValue(args, "--n-cpu-moe"), "%v", args)
	require.Len(t, a.Shards, 2)
	hostShard, gpuShard := a.Shards[0], a.Shards[1] // llama.cpp's order: the host's layers first
	assert.Equal(t, "cuda:0", gpuShard.DeviceID)
	assert.Equal(t, a.Model.Layers-ngl, gpuShard.LayerStart, "the GPU holds the last layers, as llama.cpp numbers them")
	assert.Equal(t, a.Model.Layers, gpuShard.LayerEnd)
	assert.LessOrEqual(t, gpuShard.MemoryBytes, gpuShard.MemoryAvailableBytes)
	assert.Equal(t, "cpu:0", hostShard.DeviceID)
	assert.Equal(t, 0, hostShard.LayerStart)
	assert.LessOrEqual(t, hostShard.MemoryBytes, hostShard.MemoryAvailableBytes)
	assert.Greater(t, hostShard.MemoryBytes, int64(200<<30), "every expert of 58 layers is in host RAM")
	// A whole layer of DeepSeek-V3 at q2_k is about 4 GiB, its dense part
	// a few hundred MiB: dense-only layers put many more on the GPU than
	// the 4-5 whole layers a whole-layer split would.
	assert.Greater(t, ngl, 10, "%v", args)
	require.NotNil(t, a.Throughput)
	assert.Greater(t, a.Throughput.DecodeTokensPerS, 0.0, strings.Join(a.Throughput.Assumptions, "\n"))
	assert.Contains(t, strings.Join(a.Throughput.Assumptions, "\n"), "--cpu-moe")
	assert.True(t, strings.HasPrefix(a.Throughput.ValidatedOn, NotValidated), a.Throughput.ValidatedOn)
	assert.Contains(t, a.Throughput.ValidatedOn, "--cpu-moe")
	ex := strings.Join(a.Explanation, "\n")
	assert.Contains(t, ex, "--cpu-moe")
	assert.Contains(t, ex, `exps=CPU`, "the -ot form for builds without the flag")
	assert.NotContains(t, ex, "bound by PCIe")
}

// step3Split on moeTestCosts (10 layers of 10 bytes, 8 of them experts, 2
// leading dense layers, 20 bytes of overhead): a GPU of 30 has 10 bytes for
// layers, the 2-byte dense parts of the last 5 layers; the host keeps layers
// 0-4 whole (50) and the 40 bytes of experts of layers 5-9. Two GPUs fill
// from the back: the last takes the last layers.
func TestStep3SplitFillsFromTheBack(t *testing.T) {
	c := moeTestCosts()
	g, h := &device{ID: "cuda:0", Usable: 30}, &device{ID: "cpu:0", Usable: 1 << 40}
	stages, ok := step3Split(c, []*device{g}, h)
	require.True(t, ok)
	require.Len(t, stages, 2)
	assert.Equal(t, 5, stages[0].End, "5 layers on the GPU (planning order: GPU first)")
	assert.Equal(t, int64(30), stages[0].Part.total())
	assert.Equal(t, int64(50+40), stages[1].Part.Weights)
	assert.Equal(t, 5, stages[1].Start)

	g1 := &device{ID: "cuda:1", Usable: 26}
	stages, ok = step3Split(c, []*device{g1, g}, h)
	require.True(t, ok)
	require.Len(t, stages, 3)
	assert.Equal(t, g1, stages[0].Devices[0])
	assert.Equal(t, 3, stages[0].End-stages[0].Start, "layers 2-4 as llama.cpp numbers them, 2 bytes each")
	assert.Equal(t, 5, stages[1].End-stages[1].Start)
	assert.Equal(t, int64(20+8*8), stages[2].Part.Weights, "layers 0-1 whole and the experts of layers 2-9")

	// Every layer's dense weights fit: step 4 (moeSplit) applies, not this.
	_, ok = step3Split(c, []*device{&device{ID: "cuda:0", Usable: 1 << 20}}, h)
	assert.False(t, ok)
	// A host too small: no split.
	_, ok = step3Split(c, []*device{g}, &device{ID: "cpu:0", Usable: 50})
	assert.False(t, ok)
}
