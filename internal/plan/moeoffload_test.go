package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// rtx3090 is a 24 GiB CUDA GPU (the card of the hardware-corner.net row of
// internal/calibration/data/offload_decode.json).
func rtx3090() registry.Device {
	d := gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 3090", 24<<30, "8.6")
	d.Vendor = "nvidia"
	return d
}

// gpt-oss-120b does not fit a 24 GiB GPU: llama.cpp keeps attention, the
// shared weights and the KV cache on the GPU with every layer (-ngl past the
// layer count) and the experts of the first N layers in host memory
// (--n-cpu-moe N), and the plan gives that split a decode speed.
func TestMoEOffloadKeepsExpertsOfFirstLayersOnHost(t *testing.T) {
	r := reg(t, []registry.Device{rtx3090(), host(128 << 30)})
	a := shard(t, request(t, `{"model":{"name":"gpt-oss-120b"},"engine":"llama.cpp","cpu_offload":true,"context_length":4096}`, r))
	require.True(t, a.Fits, strings.Join(a.Explanation, "\n"))
	assert.Equal(t, StrategyOffload, a.Strategy)
	args := a.EngineArgs["llama.cpp"]
	require.NotEmpty(t, args)
	ngl := argValue(args, "-ngl")
	assert.Equal(t, itoa(a.Model.Layers+1), ngl, "every layer and the output on the GPU: %v", args)
	n := argValue(args, "--n-cpu-moe")
	require.NotEmpty(t, n, "%v", args)
	assert.NotEqual(t, "0", n)
	require.Len(t, a.Shards, 2)
	gpuShard, hostShard := a.Shards[0], a.Shards[1]
	assert.Equal(t, "cuda:0", gpuShard.DeviceID)
	assert.Equal(t, 0, gpuShard.LayerStart)
	assert.Equal(t, a.Model.Layers, gpuShard.LayerEnd)
	assert.LessOrEqual(t, gpuShard.MemoryBytes, gpuShard.MemoryAvailableBytes)
	assert.Equal(t, "cpu:0", hostShard.DeviceID)
	assert.Equal(t, n, itoa(hostShard.LayerEnd), "the host shard holds the experts of the first N layers")
	assert.Greater(t, hostShard.MemoryBytes, int64(30<<30), "tens of GiB of experts are charged to host RAM")
	assert.Equal(t, gpuShard.MemoryBytes+hostShard.MemoryBytes, a.Memory.TotalBytes)
	require.NotNil(t, a.Throughput)
	assert.Greater(t, a.Throughput.DecodeTokensPerS, 0.0, strings.Join(a.Throughput.Assumptions, "\n"))
	assert.Contains(t, strings.Join(a.Throughput.Assumptions, "\n"), "--n-cpu-moe")
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "--n-cpu-moe "+n)
	assert.NotContains(t, strings.Join(a.Explanation, "\n"), "bound by PCIe")
	assert.Contains(t, strings.Join(a.Explanation, "\n"), `ffn_(up|down|gate)_exps=CPU`, "the -ot form for builds without the flag")
	assert.True(t, strings.HasPrefix(a.Throughput.ValidatedOn, NotValidated), a.Throughput.ValidatedOn)
	assert.Contains(t, a.Throughput.ValidatedOn, "--n-cpu-moe row")
}

// moeSplit takes the smallest N that fits: 10 layers of 10 bytes, 8 of
// them experts, 2 leading dense layers, 20 bytes of overhead on the GPU.
// The whole model is 120 bytes; a GPU of 90 needs 30 bytes of experts
// moved, four expert layers (32 bytes), so N = 2 dense + 4 = 6.
func TestMoESplitTakesSmallestN(t *testing.T) {
	c := costs{Layers: 10, LayerWeights: 10, ExpertLayerWeights: 8, ExpertActive: 0.25, DenseLayers: 2, Overhead: 20}
	g, h := &device{ID: "cuda:0", Usable: 90}, &device{ID: "cpu:0", Usable: 1 << 40}
	stages, n, ok := moeSplit(c, g, h)
	require.True(t, ok)
	assert.Equal(t, 6, n)
	assert.Equal(t, int64(120-32), stages[0].Part.total())
	assert.Equal(t, int64(32), stages[1].Part.Weights)
	gp, _ := moeSplitParts(c, n-1)
	assert.Greater(t, gp.total(), g.Usable, "N-1 would have fit")

	// A host too small for the experts: no split.
	_, _, ok = moeSplit(c, g, &device{ID: "cpu:0", Usable: 16})
	assert.False(t, ok)
	// A GPU too small even without any expert: no split.
	_, _, ok = moeSplit(c, &device{ID: "cuda:0", Usable: 50}, h)
	assert.False(t, ok)
}

// A dense model keeps the whole-layer split.
func TestDenseOffloadStaysWholeLayers(t *testing.T) {
	r := reg(t, []registry.Device{rtx3090(), host(128 << 30)})
	a := shard(t, request(t, `{"model":{"name":"llama-3.1-70b"},"engine":"llama.cpp","cpu_offload":true,"quant":"q4_k_m"}`, r))
	require.True(t, a.Fits)
	checkInvariants(t, a)
	assert.Empty(t, argValue(a.EngineArgs["llama.cpp"], "--n-cpu-moe"))
}
