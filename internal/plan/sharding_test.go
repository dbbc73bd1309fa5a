package plan

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// checkInvariants asserts what every answer must satisfy: no shard over its
// device's memory, every layer covered exactly once per tensor-parallel
// rank, fits false with an empty shard list.
func checkInvariants(t testing.TB, a *ShardingAnswer) {
	t.Helper()
	if !a.Fits.Yes() {
		assert.Empty(t, a.Shards)
		assert.NotEmpty(t, a.Explanation)
		return
	}
	require.NotEmpty(t, a.Shards)
	var total int64
	// Layers are covered per tensor-parallel rank of each data-parallel
	// replica (replica 0 when the plan has none).
	type rankKey struct{ replica, rank int }
	byRank := map[rankKey][]Shard{}
	replicas := map[int]bool{}
	used := map[string]bool{}
	for _, s := range a.Shards {
		assert.LessOrEqual(t, s.MemoryBytes, s.MemoryAvailableBytes, "shard %s overfilled", s.DeviceID)
		assert.Less(t, s.LayerStart, s.LayerEnd, "shard %s holds no layer", s.DeviceID)
		assert.False(t, used[s.DeviceID], "device %s in two shards", s.DeviceID)
		used[s.DeviceID] = true
		k := rankKey{rank: s.TPRank}
		if s.Replica != nil {
			k.replica = *s.Replica
		}
		replicas[k.replica] = true
		byRank[k] = append(byRank[k], s)
		total += s.MemoryBytes
	}
	assert.Equal(t, total, a.Memory.TotalBytes)
	assert.Len(t, byRank, a.TPSize*len(replicas))
	if a.DPSize > 0 {
		assert.Len(t, replicas, a.DPSize)
	}
	for rank, ss := range byRank {
		next := 0
		for _, s := range ss {
			assert.Equal(t, next, s.LayerStart, "rank %d: layers not contiguous", rank)
			next = s.LayerEnd
		}
		if a.Model.Layers > 0 {
			assert.Equal(t, a.Model.Layers, next, "rank %d: layers not all covered", rank)
		}
	}
}

func eightH100(t testing.TB, withHost bool) *registry.Registry {
	var devs []registry.Device
	if withHost {
		devs = append(devs, host(2000*gibBytes))
	}
	for i := 0; i < 8; i++ {
		devs = append(devs, h100(i))
	}
	return reg(t, devs, link(registry.LinkNVSwitch, 900, ids("cuda", 8)...))
}

// §7.1 #4: 80 GB + 24 GB GPUs and a 30B fp16 model: the 24 GB card is never
// given more than it has.
func TestHeterogeneousGPUsNotOverfilled(t *testing.T) {
	big := gpu(registry.KindCUDA, 0, "NVIDIA A100-SXM4-80GB", 80*gibBytes, "8.0")
	small := gpu(registry.KindCUDA, 1, "NVIDIA GeForce RTX 4090", 24*gibBytes, "8.9")
	r := reg(t, []registry.Device{big, small})
	a := shard(t, request(t, `{"model":{"params_b":30},"quant":"fp16"}`, r))
	checkInvariants(t, a)
	require.True(t, a.Fits.Yes())
	assert.Equal(t, StrategyNone, a.Strategy, "60 GB of weights fit the 80 GB card alone")
	assert.Equal(t, "cuda:0", a.Shards[0].DeviceID)

	// 45B fp16 (90 GB of weights) needs both: the split follows capacity.
	a = shard(t, request(t, `{"model":{"params_b":45},"quant":"fp16"}`, r))
	checkInvariants(t, a)
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Equal(t, StrategyPipeline, a.Strategy)
	require.Len(t, a.Shards, 2)
	l0 := a.Shards[0].LayerEnd - a.Shards[0].LayerStart
	l1 := a.Shards[1].LayerEnd - a.Shards[1].LayerStart
	assert.Greater(t, l0, 2*l1, "the 80 GB card takes most layers")
}

// §7.1 #6/#9: host RAM does not choose the precision when GPUs exist.
func TestHostRAMDoesNotPickPrecision(t *testing.T) {
	card := gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 4090", 24*gibBytes, "8.9")
	r := reg(t, []registry.Device{host(512 * gibBytes), card})
	body := `{"model":{"name":"llama-3.1-70b"}}`
	v, err := SuggestQuant(request(t, body, r))
	require.NoError(t, err)
	s := v
	assert.False(t, s.Fits.Yes(), "70B does not fit a 24 GB GPU at any level")
	for _, d := range s.Devices {
		assert.NotEqual(t, "cpu:0", d)
	}
	assert.Contains(t, strings.Join(s.Explanation, "\n"), "cpu_offload", "the answer names the way out")

	a := shard(t, request(t, body, r))
	checkInvariants(t, a)
	assert.False(t, a.Fits.Yes())

	// include_cpu allows host RAM, only because no GPU plan fits.
	a = shard(t, request(t, `{"model":{"name":"llama-3.1-70b"},"include_cpu":true}`, r))
	checkInvariants(t, a)
	require.True(t, a.Fits.Yes())
	assert.Equal(t, "cpu:0", a.Shards[0].DeviceID)
	// bf16 fits the 512 GB host, but no published GGUF of Llama-3.1-70B
	// holds it (published.go); of the published levels, on a CPU the
	// level is weighed by speed too (cpuspeed.go): int4 decodes about
	// 1.8x faster than int8 from the Xeon's memory.
	assert.Equal(t, "int4", a.Quant)
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "x the decode speed of int8 on this CPU")

	// cpu_offload keeps the weights that do not fit in host RAM: under
	// vLLM, the default engine here, the first layers' (its offloader
	// takes them from the first layer, vllmoffload_test.go).
	a = shard(t, request(t, `{"model":{"name":"llama-3.1-70b"},"cpu_offload":true}`, r))
	checkInvariants(t, a)
	require.True(t, a.Fits.Yes())
	assert.Equal(t, StrategyOffload, a.Strategy)
	require.Len(t, a.Shards, 2)
	assert.Equal(t, "cpu:0", a.Shards[0].DeviceID)
	assert.Zero(t, a.Shards[0].LayerStart)
	assert.Equal(t, "cuda:0", a.Shards[1].DeviceID)
	require.NotNil(t, a.Throughput)
	assert.Contains(t, strings.Join(a.Throughput.Assumptions, "\n"), "PCIe")
}

// 70B on 8×H100 NVSwitch with "placement": "fewest": bf16 on as few GPUs
// as memory dictates (TP 2), not all eight (placement_test.go has the
// default).
func TestLlama70BOnEightH100(t *testing.T) {
	a := shard(t, request(t, `{"model":{"name":"llama-3.1-70b"},"placement":"fewest"}`, eightH100(t, true)))
	checkInvariants(t, a)
	require.True(t, a.Fits.Yes())
	assert.Equal(t, "bf16", a.Quant)
	assert.Equal(t, StrategyTensor, a.Strategy)
	assert.Equal(t, 2, a.TPSize)
	assert.Equal(t, 1, a.PPSize)
	require.NotNil(t, a.Throughput)
	assert.Greater(t, a.Throughput.DecodeTokensPerS, 10.0)
	assert.Less(t, a.Throughput.DecodeTokensPerS, 100.0, "70B bf16 over 2×3.35 TB/s cannot stream faster")
	assert.Equal(t, BoundBandwidth, a.Throughput.Bound)
	assert.Contains(t, a.EngineArgs["vllm"], "--tensor-parallel-size")
	assert.Equal(t, "2", a.EngineArgs["vllm"][1])

	// A long context needs more KV cache: more GPUs, still tensor parallel.
	a = shard(t, request(t, `{"model":{"name":"llama-3.1-70b"},"context_length":131072,"batch_size":8,"placement":"fewest"}`, eightH100(t, true)))
	checkInvariants(t, a)
	require.True(t, a.Fits.Yes())
	assert.Greater(t, a.TPSize, 2)
	assert.Equal(t, StrategyTensor, a.Strategy)
}

// 405B on 8×MI300X (xGMI): bf16 with tensor parallel across the hive.
func TestLlama405BOnEightMI300X(t *testing.T) {
	var devs []registry.Device
	devs = append(devs, host(1<<40))
	for i := 0; i < 8; i++ {
		devs = append(devs, mi300x(i))
	}
	r := reg(t, devs, link(registry.LinkXGMI, 896, ids("rocm", 8)...))
	a := shard(t, request(t, `{"model":{"name":"llama-3.1-405b"},"engine":"vllm"}`, r))
	checkInvariants(t, a)
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Equal(t, "bf16", a.Quant)
	assert.Equal(t, StrategyTensor, a.Strategy)
	assert.Equal(t, 8, a.TPSize, "bf16 405B needs 8 MI300X within vLLM's 0.9 cap")
	for _, s := range a.Shards {
		assert.True(t, strings.HasPrefix(s.DeviceID, "rocm:"))
	}
	// suggest_quant agrees and never uses the host's 1 TiB.
	v, err := SuggestQuant(request(t, `{"model":{"name":"llama-3.1-405b"},"engine":"vllm"}`, r))
	require.NoError(t, err)
	s := v
	assert.Equal(t, "bf16", s.Quant)
	assert.Len(t, s.Devices, 8)
}

func TestFitsNowhere(t *testing.T) {
	card := gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 4090", 24*gibBytes, "8.9")
	r := reg(t, []registry.Device{card})
	a := shard(t, request(t, `{"model":{"name":"llama-3.1-405b"}}`, r))
	checkInvariants(t, a)
	assert.False(t, a.Fits.Yes())
	text := strings.Join(a.Explanation, "\n")
	assert.Contains(t, text, "does not fit")
	assert.Contains(t, text, "GiB")
	assert.Greater(t, a.Memory.TotalBytes, int64(24*gibBytes))

	// No device at all.
	a = shard(t, request(t, `{"model":{"params_b":1}}`, reg(t, nil)))
	assert.False(t, a.Fits.Yes())
}

func TestPrecisionOnlyWhereSupported(t *testing.T) {
	// A T4 (compute capability 7.5) has no bf16: auto picks fp16.
	t4 := gpu(registry.KindCUDA, 0, "Tesla T4", 15360<<20, "7.5")
	a := shard(t, request(t, `{"model":{"params_b":3}}`, reg(t, []registry.Device{t4})))
	require.True(t, a.Fits.Yes())
	assert.Equal(t, "fp16", a.Quant)
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "do not support bf16")

	// A first-generation AMD XDNA NPU (1022:1502) runs int8 only
	// (internal/precision); an Intel NPU runs int8 and fp16, so auto picks
	// fp16 there.
	xdna := registry.Device{ID: "amd_xdna_npu:0", Kind: registry.KindAMDXDNA, PCIID: "1022:1502", Available: true, MemoryBytes: 16 * gibBytes}
	a = shard(t, request(t, `{"model":{"params_b":3}}`, reg(t, []registry.Device{xdna})))
	require.True(t, a.Fits.Yes())
	assert.Equal(t, "int8", a.Quant)
	npu := registry.Device{ID: "intel_npu:0", Kind: registry.KindIntelNPU, Available: true, MemoryBytes: 16 * gibBytes}
	a = shard(t, request(t, `{"model":{"params_b":3}}`, reg(t, []registry.Device{npu})))
	require.True(t, a.Fits.Yes())
	assert.Equal(t, "fp16", a.Quant)

	// Compute capability 6.0 (Tesla P100) is below vLLM's 7.0: an explicit
	// int8 is planned with llama.cpp, the default there, whose CUDA backend
	// runs Q8_0 without the int8 dot product (dp4a needs 6.1) by
	// dequantizing (engine.LevelRule, internal/engine/llamacpp.go); named,
	// vLLM refuses it.
	p100 := gpu(registry.KindCUDA, 0, "Tesla P100-PCIE-16GB", 16*gibBytes, "6.0")
	a = shard(t, request(t, `{"model":{"params_b":3},"quant":"int8"}`, reg(t, []registry.Device{p100})))
	assert.True(t, a.Fits.Yes(), dump(t, a.Levels))
	assert.Contains(t, a.EngineArgs, "llama.cpp")
	a = shard(t, request(t, `{"model":{"params_b":3},"quant":"int8","engine":"vllm"}`, reg(t, []registry.Device{p100})))
	assert.False(t, a.Fits.Yes())

	// Explicit fp8 on an Ampere card: its precision list has no fp8, but
	// vLLM (the default engine there) runs fp8 weight-only through Marlin
	// from compute capability 8.0 (engine.LevelRule, internal/engine/vllm.go);
	// llama.cpp has no fp8 type.
	a100 := gpu(registry.KindCUDA, 0, "NVIDIA A100-SXM4-80GB", 80*gibBytes, "8.0")
	a = shard(t, request(t, `{"model":{"params_b":3},"quant":"fp8"}`, reg(t, []registry.Device{a100})))
	assert.True(t, a.Fits.Yes())
	a = shard(t, request(t, `{"model":{"params_b":3},"quant":"fp8","engine":"llama.cpp"}`, reg(t, []registry.Device{a100})))
	assert.False(t, a.Fits.Yes())

	// The registry's list wins over inference.
	listed := h100(0)
	listed.Quantizations = []string{"fp16", "int8"}
	a = shard(t, request(t, `{"model":{"params_b":3}}`, reg(t, []registry.Device{listed})))
	assert.Equal(t, "fp16", a.Quant)
}

func TestLlamaCPPEngineUsesLayerSplit(t *testing.T) {
	var devs []registry.Device
	for i := 0; i < 4; i++ {
		d := gpu(registry.KindCUDA, i, "NVIDIA GeForce RTX 3090", 24*gibBytes, "8.6")
		devs = append(devs, d)
	}
	r := reg(t, devs)
	a := shard(t, request(t, `{"model":{"name":"llama-3.1-70b"},"quant":"q4_k_m","engine":"llama.cpp","context_length":8192}`, r))
	checkInvariants(t, a)
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Equal(t, StrategyPipeline, a.Strategy)
	assert.Equal(t, 1, a.TPSize)
	args := a.EngineArgs["llama.cpp"]
	require.NotEmpty(t, args)
	// 80 repeating layers and the output layer, which llama.cpp counts as
	// layer 80: -ngl 80 left the output layer on the CPU (issue 12 item 4).
	assert.Equal(t, []string{"-ngl", "81"}, args[:2])
	assert.Contains(t, args, "--tensor-split")
	assert.Contains(t, args, "layer")
	assert.NotContains(t, a.EngineArgs, "vllm")
	require.NotNil(t, a.Throughput)
	// 70B Q4_K_M on RTX 3090s, llama.cpp: ~15-20 tok/s is what such rigs
	// measure (inference.json); the sum of stage times must not pretend 4x.
	assert.Greater(t, a.Throughput.DecodeTokensPerS, 8.0)
	assert.Less(t, a.Throughput.DecodeTokensPerS, 30.0)
}

func TestVLLMArgs(t *testing.T) {
	a := shard(t, request(t, `{"model":{"name":"llama-3.1-8b"},"quant":"fp8","kv_cache_dtype":"fp8","engine":"vllm","batch_size":16,"context_length":4096,"placement":"fewest"}`, eightH100(t, false)))
	require.True(t, a.Fits.Yes())
	args := strings.Join(a.EngineArgs["vllm"], " ")
	assert.Contains(t, args, "--quantization fp8")
	assert.Contains(t, args, "--kv-cache-dtype fp8")
	assert.Contains(t, args, "--max-model-len 4096")
	assert.Contains(t, args, "--gpu-memory-utilization 0.9")
	assert.Contains(t, args, "--max-num-seqs 16")
	assert.NotContains(t, args, "--tensor-parallel-size")
}

func TestInverseQuestions(t *testing.T) {
	a := shard(t, request(t, `{"model":{"name":"llama-3.1-8b"},"placement":"fewest"}`, eightH100(t, false)))
	require.True(t, a.Fits.Yes())
	assert.GreaterOrEqual(t, a.MaxContextLength, 4096)
	assert.Greater(t, a.MaxBatchSize, 1)
	// A plan at the reported maximum context still fits; one beyond does not.
	body := `{"model":{"name":"llama-3.1-8b"},"placement":"fewest","batch_size":` + itoa(a.MaxBatchSize) + `}`
	b := shard(t, request(t, body, eightH100(t, false)))
	assert.True(t, b.Fits.Yes())
	assert.Equal(t, StrategyNone, b.Strategy)
}

func TestMultiNodeCluster(t *testing.T) {
	node := func() *registry.Registry {
		r := eightH100(t, true)
		r.SystemIO.Interconnects = append(r.SystemIO.Interconnects,
			registry.Interconnect{Kind: registry.LinkInfiniBand, Name: "mlx5_0", BandwidthGBs: 50, Devices: []string{}},
			registry.Interconnect{Kind: registry.LinkInfiniBand, Name: "mlx5_1", BandwidthGBs: 50, Devices: []string{}})
		return r
	}
	req := request(t, `{"model":{"name":"llama-3.1-405b"},"engine":"vllm","context_length":8192}`, nil)
	req.Cluster = []*registry.Registry{node(), node()}
	req.Registry = registry.New()
	a := shard(t, req)
	checkInvariants(t, a)
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Equal(t, "bf16", a.Quant)
	assert.Equal(t, StrategyPipeline, a.Strategy)
	assert.Equal(t, 8, a.TPSize)
	assert.Equal(t, 2, a.PPSize)
	assert.Equal(t, "node0/cuda:0", a.Shards[0].DeviceID)
	assert.Equal(t, "node1/cuda:0", a.Shards[8].DeviceID)
	args := strings.Join(a.EngineArgs["vllm"], " ")
	assert.Contains(t, args, "--tensor-parallel-size 8")
	assert.Contains(t, args, "--pipeline-parallel-size 2")
	assert.Contains(t, args, "--distributed-executor-backend ray")
	require.NotNil(t, a.Throughput)
	assert.Greater(t, a.Throughput.DecodeTokensPerS, 0.0)

	// A model that fits one node stays on one node with "placement":
	// "fewest"; by default it is tensor parallel within each node's
	// NVSwitch, one replica per node.
	req = request(t, `{"model":{"name":"llama-3.1-70b"},"placement":"fewest"}`, nil)
	req.Cluster = []*registry.Registry{node(), node()}
	req.Registry = registry.New()
	a = shard(t, req)
	require.True(t, a.Fits.Yes())
	for _, s := range a.Shards {
		assert.True(t, strings.HasPrefix(s.DeviceID, "node0/"))
	}
	req = request(t, `{"model":{"name":"llama-3.1-70b"}}`, nil)
	req.Cluster = []*registry.Registry{node(), node()}
	req.Registry = registry.New()
	a = shard(t, req)
	checkInvariants(t, a)
	require.True(t, a.Fits.Yes())
	assert.Equal(t, StrategyData, a.Strategy)
	assert.Equal(t, 8, a.TPSize)
	assert.Equal(t, 2, a.DPSize)
	for r, ds := range replicaDevices(t, a) {
		for _, d := range ds {
			assert.True(t, strings.HasPrefix(d, fmt.Sprintf("node%d/", r)), "replica %d is one node's NVSwitch domain: %s", r, d)
		}
	}
}

func TestDevicesSubset(t *testing.T) {
	a := shard(t, request(t, `{"model":{"name":"llama-3.1-70b"},"devices":["cuda:4","cuda:5","cuda:6","cuda:7"]}`, eightH100(t, true)))
	checkInvariants(t, a)
	require.True(t, a.Fits.Yes())
	for _, s := range a.Shards {
		assert.Contains(t, []string{"cuda:4", "cuda:5", "cuda:6", "cuda:7"}, s.DeviceID)
	}
}

func TestFreeMemoryIsRespected(t *testing.T) {
	d := h100(0)
	free := int64(10 * gibBytes)
	d.MemoryFreeBytes = &free
	a := shard(t, request(t, `{"model":{"name":"llama-3.1-8b"}}`, reg(t, []registry.Device{d})))
	checkInvariants(t, a)
	require.True(t, a.Fits.Yes())
	assert.NotEqual(t, "bf16", a.Quant, "16 GB of bf16 weights do not fit 10 GiB free")
	assert.Equal(t, free, a.Shards[0].MemoryAvailableBytes)
}

func TestAssignLayersCoversExactlyOnce(t *testing.T) {
	c := costs{Layers: 10, LayerWeights: 1 << 30, Overhead: 1 << 28}
	mk := func(gibs ...int64) []stage {
		var out []stage
		for _, g := range gibs {
			out = append(out, stage{Devices: []*device{{Usable: g << 30}}})
		}
		return out
	}
	st := mk(8, 4)
	require.True(t, assignLayers(st, c, false))
	assert.Equal(t, 0, st[0].Start)
	assert.Equal(t, st[0].End, st[1].Start)
	assert.Equal(t, 10, st[1].End)
	for _, s := range st {
		assert.LessOrEqual(t, s.Part.total(), s.budget())
	}
	assert.False(t, assignLayers(mk(4, 3), c, false), "7 layers of room for 10")
	st = mk(6, 100)
	require.True(t, assignLayers(st, c, true))
	assert.Equal(t, 5, st[0].End, "greedy fills the first stage")
	assert.False(t, assignLayers(mk(100, 100, 100), costs{Layers: 2, LayerWeights: 1}, false), "more stages than layers")
}

func TestAllReduceUsesLinkBandwidth(t *testing.T) {
	body := `{"model":{"name":"llama-3.1-70b"},"batch_size":64,"context_length":1024,"placement":"fewest"}`
	fast := shard(t, request(t, body, eightH100(t, false)))
	require.True(t, fast.Fits.Yes())
	require.Greater(t, fast.TPSize, 1)
	// The same link without a reported rate falls back to the datasheet's
	// 900 GB/s: the same estimate.
	var devs []registry.Device
	for i := 0; i < 8; i++ {
		devs = append(devs, h100(i))
	}
	noRate := shard(t, request(t, body, reg(t, devs, link(registry.LinkNVSwitch, 0, ids("cuda", 8)...))))
	assert.InDelta(t, fast.Throughput.DecodeTokensPerS, noRate.Throughput.DecodeTokensPerS, 0.01*fast.Throughput.DecodeTokensPerS)
	// A slow link costs time.
	slow := shard(t, request(t, body, reg(t, devs, link(registry.LinkNVLink, 10, ids("cuda", 8)...))))
	require.Equal(t, fast.TPSize, slow.TPSize)
	assert.Less(t, slow.Throughput.DecodeTokensPerS, fast.Throughput.DecodeTokensPerS)
}

// llama.cpp refuses --tensor-split with 16 or more entries ("got 16 input
// configs, but system only has 16 devices"): a plan over 16 GPUs gives no
// llama.cpp flags and says why; over 15 it gives all 15 entries.
func TestLlamaCPPTensorSplitWithinLlamaMaxDevices(t *testing.T) {
	// GPUs just large enough that 405B int8 (GGUF Q8_0 for llama.cpp,
	// 403 GiB) needs every one of them (with the 1 GiB llama.cpp's --fit
	// keeps free on each).
	for n, memory := range map[int]int64{15: 31 * gibBytes, 16: 119 * gibBytes / 4} {
		var devs []registry.Device
		for i := 0; i < n; i++ {
			devs = append(devs, gpu(registry.KindCUDA, i, "GPU", memory, "8.6"))
		}
		a := shard(t, request(t, `{"model":{"name":"llama-3.1-405b"},"quant":"int8","engine":"llama.cpp","context_length":512}`, reg(t, devs)))
		require.True(t, a.Fits.Yes(), a.Explanation)
		require.Equal(t, n, a.PPSize, "one stage per GPU")
		args, ok := a.EngineArgs["llama.cpp"]
		if n == 15 {
			require.True(t, ok)
			i := slices.Index(args, "--tensor-split")
			require.GreaterOrEqual(t, i, 0)
			assert.Len(t, strings.Split(args[i+1], ","), 15)
			continue
		}
		assert.False(t, ok, "llama.cpp would refuse the flags")
		assert.Contains(t, strings.Join(a.Explanation, "\n"), "--tensor-split takes at most 15 entries")
	}
}

// TestStageCapacityChargesEmbeddingsWhereTheyAre checks that a pipeline
// stage's capacity (maxLayers) counts the memory the stage really holds:
// its layers, the input embedding on the first stage only and the output
// head on the last only. Before, every stage was charged the input
// embedding (stage 0 twice), so three stages with room for 4 + 4 + 2
// layers were refused 10 layers.
func TestStageCapacityChargesEmbeddingsWhereTheyAre(t *testing.T) {
	const g = int64(1 << 30)
	c := costs{Layers: 10, LayerWeights: float64(g), EmbedIn: float64(3 * g), EmbedOut: float64(2 * g), Overhead: g / 4}
	mk := func(budgets ...int64) []stage {
		var out []stage
		for _, b := range budgets {
			out = append(out, stage{Devices: []*device{{Usable: b}}})
		}
		return out
	}
	// First: 0.25 + 3 (embedding) + 4 layers; middle: 0.25 + 4 layers;
	// last: 0.25 + 2 (head) + 2 layers.
	st := mk(g/4+7*g, g/4+4*g, g/4+4*g)
	assert.Equal(t, []int{4, 4, 2}, []int{maxLayers(&st[0], 0, 3, c), maxLayers(&st[1], 1, 3, c), maxLayers(&st[2], 2, 3, c)})
	require.True(t, assignLayers(st, c, false), "4 + 4 + 2 layers of room for 10")
	assert.Equal(t, []int{4, 8, 10}, []int{st[0].End, st[1].End, st[2].End})
	for _, s := range st {
		assert.LessOrEqual(t, s.Part.total(), s.budget())
	}
	one := mk(g/4 + 15*g)
	assert.Equal(t, 10, maxLayers(&one[0], 0, 1, c), "one stage holds both embeddings and every layer")
	assert.Equal(t, 0, maxLayers(&mk(g/4 + 15*g - 1)[0], 0, 1, c), "a byte short of the whole model")
}
