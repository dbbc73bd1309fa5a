package plan

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
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
	require.True(t, a.Fits.Yes(), strings.Join(a.Explanation, "\n"))
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
	if ot := argValue(args, "-ot"); ot == "" {
		assert.Equal(t, n, itoa(hostShard.LayerEnd), "the host shard holds the experts of the first N layers")
	} else {
		assert.Equal(t, itoa(atoi(n)+1), itoa(hostShard.LayerEnd), "the host shard holds the experts of the first N layers and part of layer N")
	}
	assert.Greater(t, hostShard.MemoryBytes, int64(30<<30), "tens of GiB of experts are charged to host RAM")
	assert.Equal(t, gpuShard.MemoryBytes+hostShard.MemoryBytes, a.Memory.TotalBytes)
	require.NotNil(t, a.Throughput)
	assert.Greater(t, a.Throughput.DecodeTokensPerS, 0.0, strings.Join(a.Throughput.Assumptions, "\n"))
	assert.Contains(t, strings.Join(a.Throughput.Assumptions, "\n"), "--n-cpu-moe")
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "--n-cpu-moe "+n)
	assert.NotContains(t, strings.Join(a.Explanation, "\n"), "bound by PCIe")
	assert.Contains(t, strings.Join(a.Explanation, "\n"), `ffn_(up|down|gate)_exps=CPU`, "the -ot form for builds without the flag")
	// 24 GiB leave the experts of 24 layers and two tensors of the 25th on
	// the host (--fit's order), in the GPU's host buffer: no CPU_REPACK
	// copy of them is made (moeHostPart), none is charged.
	assert.Equal(t, `blk\.`+n+`\.ffn_(gate|down)_exps=CPU`, argValue(args, "-ot"), "%v", args)
	assert.NotContains(t, strings.Join(a.Explanation, "\n"), "CPU_REPACK")
	assert.Less(t, hostShard.MemoryBytes, int64(70<<30), "the experts once, not a repacked copy beside them")
	assert.True(t, strings.HasPrefix(a.Throughput.ValidatedOn, NotValidated), a.Throughput.ValidatedOn)
	assert.Contains(t, a.Throughput.ValidatedOn, "--n-cpu-moe row")
}

// moeTestCosts is 10 layers of 10 bytes, 8 of them routed experts in three
// tensors of equal size, 2 leading dense layers, 20 bytes of overhead on
// each device: the whole model is 120 bytes.
func moeTestCosts() costs {
	return costs{Layers: 10, LayerWeights: 10, ExpertLayerWeights: 8, ExpertActive: 0.25, DenseLayers: 2, Overhead: 20,
		ExpertShares: [3]float64{1.0 / 3, 1.0 / 3, 1.0 / 3}}
}

// moeSplit takes the smallest N that fits: a GPU of 89 needs 31 bytes of
// experts moved; three layers and two tensors of a fourth free 29.3 (30
// rounded up), so four whole layers (32 bytes) it is: N = 2 dense + 4 = 6.
func TestMoESplitTakesSmallestN(t *testing.T) {
	c := moeTestCosts()
	g, h := &device{ID: "cuda:0", Usable: 89}, &device{ID: "cpu:0", Usable: 1 << 40}
	stages, mh, ok := moeSplit(c, []*device{g}, h)
	require.True(t, ok)
	assert.Equal(t, moeHost{Layers: 6}, mh)
	assert.Equal(t, int64(120-32), stages[0].Part.total())
	assert.Equal(t, int64(32), stages[1].Part.Weights)
	assert.Equal(t, 6, stages[1].End)
	gp, _ := moeSplitParts(c, 5)
	assert.Greater(t, gp.total(), g.Usable, "N-1 would have fit")

	// A host too small for the experts: no split.
	_, _, ok = moeSplit(c, []*device{g}, &device{ID: "cpu:0", Usable: 16})
	assert.False(t, ok)
	// A GPU too small even without any expert: no split.
	_, _, ok = moeSplit(c, []*device{{ID: "cuda:0", Usable: 50}}, h)
	assert.False(t, ok)
}

// A GPU of 92 needs 28 bytes moved: three whole layers (24) and the down
// and gate tensors of the fourth (5.3) free them with a third less CPU work
// than a fourth whole layer, so the split is --n-cpu-moe 5 and -ot for
// layer 5's ffn_down and ffn_gate; one tensor (26.7) would not do. The
// memory is exact: the GPU holds 120 - ceil(29.3) bytes, the host those
// 30 and its runtime overhead.
func TestMoESplitMovesPartOfALayer(t *testing.T) {
	c := moeTestCosts()
	g, h := &device{ID: "cuda:0", Usable: 92}, &device{ID: "cpu:0", Usable: 1 << 40}
	stages, mh, ok := moeSplit(c, []*device{g}, h)
	require.True(t, ok)
	assert.Equal(t, moeHost{Layers: 5, Part: 2}, mh)
	require.Len(t, stages, 2)
	assert.Equal(t, int64(120-30), stages[0].Part.total())
	assert.Equal(t, int64(30), stages[1].Part.Weights)
	assert.Equal(t, 0, stages[1].Start)
	assert.Equal(t, 6, stages[1].End, "the host holds part of layer 5")
	assert.Equal(t, int64(quant.HostOverheadBytes), stages[1].Part.Overhead, "no CPU_REPACK copy")
	assert.Equal(t, 4, c.offloadedLayers(mh), "three whole layers and the partial one hand over")
	one := moeGPUPart(c, moeHost{Layers: 5, Part: 1}, 0, c.Layers)
	assert.Greater(t, one.total(), g.Usable, "one tensor of layer 5 is not enough")
	assert.Less(t, c.hostExperts(mh), c.hostExperts(moeHost{Layers: 6}), "less CPU work than a whole layer")
}

// Two GPUs split the layers in order, each as many as fit, and the host
// holds the experts of the first N layers: GPUs of 70 and 60 bytes hold 130
// bytes between them, the layers and two overheads need 140. With the
// experts of layer 2 (the first MoE layer, 8 bytes) and the down tensor of
// layer 3 (2.7) on the host, GPU 0 takes layers 0-5 (60 - 8 - 3 + 20 = 69)
// and GPU 1 layers 6-9 (40 + 20 = 60): --n-cpu-moe 3, -ot for layer 3's
// ffn_down, --tensor-split 6,4(+1).
func TestMoESplitOverTwoGPUs(t *testing.T) {
	c := moeTestCosts()
	g0, g1 := &device{ID: "cuda:0", Usable: 70}, &device{ID: "cuda:1", Usable: 60}
	h := &device{ID: "cpu:0", Usable: 1 << 40}
	stages, mh, ok := moeSplit(c, []*device{g0, g1}, h)
	require.True(t, ok)
	require.Len(t, stages, 3)
	assert.Equal(t, moeHost{Layers: 3, Part: 1}, mh)
	assert.Equal(t, part{Weights: 49, Overhead: 20}, stages[0].Part)
	assert.Equal(t, part{Weights: 40, Overhead: 20}, stages[1].Part)
	assert.Equal(t, int64(11), stages[2].Part.Weights)
	assert.Equal(t, 0, stages[0].Start)
	assert.Equal(t, 6, stages[0].End)
	assert.Equal(t, stages[0].End, stages[1].Start)
	assert.Equal(t, c.Layers, stages[1].End)
	for i, s := range stages[:2] {
		assert.LessOrEqual(t, s.Part.total(), s.Devices[0].Usable, "GPU %d", i)
		assert.Equal(t, moeGPUPart(c, mh, s.Start, s.End), s.Part)
	}
	var gpuWeights int64
	for _, s := range stages[:2] {
		gpuWeights += s.Part.Weights
	}
	assert.InDelta(t, 100-c.hostExperts(mh), float64(gpuWeights), 2, "the GPUs hold every weight the host does not")
	// One expert tensor fewer on the host does not fit either GPU split.
	prev := moeHost{Layers: mh.Layers, Part: mh.Part - 1}
	if mh.Part == 0 {
		prev = moeHost{Layers: mh.Layers - 1, Part: 2}
	}
	_, fits := moeLayerSplit(c, prev, []*device{g0, g1})
	assert.False(t, fits, "%+v would have fit", prev)
}

// Two 24 GiB consumer GPUs and 256 GiB of host RAM for Qwen3-235B-A22B
// Q4_K_M (135 GiB): the layers split over both GPUs in order, the experts
// of the first N layers (and part of the next) on the host, emitted with
// --tensor-split (the output layer counted on the second GPU, so the
// entries sum to -ngl), and a decode estimate over both GPUs and the host.
func TestMoEOffloadOverTwoConsumerGPUs(t *testing.T) {
	second := rtx3090()
	second.ID, second.Index = "cuda:1", 1
	r := reg(t, []registry.Device{rtx3090(), second, host(256 << 30)})
	a := shard(t, request(t, `{"model":{"name":"Qwen3-235B-A22B"},"engine":"llama.cpp","cpu_offload":true,"quant":"q4_k_m","context_length":8192}`, r))
	require.True(t, a.Fits.Yes(), strings.Join(a.Explanation, "\n"))
	args := a.EngineArgs["llama.cpp"]
	assert.Equal(t, itoa(a.Model.Layers+1), argValue(args, "-ngl"), "%v", args)
	require.Len(t, a.Shards, 3)
	g0, g1, h := a.Shards[0], a.Shards[1], a.Shards[2]
	assert.Equal(t, []string{"cuda:0", "cuda:1", "cpu:0"}, []string{g0.DeviceID, g1.DeviceID, h.DeviceID})
	assert.Equal(t, g0.LayerEnd, g1.LayerStart)
	assert.Equal(t, a.Model.Layers, g1.LayerEnd)
	assert.Equal(t, "layer", argValue(args, "--split-mode"))
	assert.Equal(t, itoa(g0.LayerEnd)+","+itoa(g1.LayerEnd-g1.LayerStart+1), argValue(args, "--tensor-split"))
	n := atoi(argValue(args, "--n-cpu-moe"))
	require.Positive(t, n, "%v", args)
	for _, s := range a.Shards {
		assert.LessOrEqual(t, s.MemoryBytes, s.MemoryAvailableBytes, s.DeviceID)
	}
	require.NotNil(t, a.Throughput)
	assert.Greater(t, a.Throughput.DecodeTokensPerS, 0.0)
	assert.Contains(t, a.Throughput.ValidatedOn, "over 2 GPUs")
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "2 GPUs (cuda:0 layers 0-")
}

// A dense model keeps the whole-layer split.
func TestDenseOffloadStaysWholeLayers(t *testing.T) {
	r := reg(t, []registry.Device{rtx3090(), host(128 << 30)})
	a := shard(t, request(t, `{"model":{"name":"llama-3.1-70b"},"engine":"llama.cpp","cpu_offload":true,"quant":"q4_k_m"}`, r))
	require.True(t, a.Fits.Yes())
	checkInvariants(t, a)
	assert.Empty(t, argValue(a.EngineArgs["llama.cpp"], "--n-cpu-moe"))
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}
