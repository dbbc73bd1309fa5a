package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// sglangOffloadFlag is the --cpu-offload-gb of a plan's SGLang command, in
// bytes as SGLang counts them (int(cpu_offload_gb * 1024**3)); the flag
// must be an integer, as SGLang's argument parser takes it.
func sglangOffloadFlag(t *testing.T, a *ShardingAnswer) int64 {
	t.Helper()
	args := a.EngineArgs["sglang"]
	i := slices.Index(args, "--cpu-offload-gb")
	require.GreaterOrEqual(t, i, 0, "%v", args)
	gb, err := strconv.Atoi(args[i+1])
	require.NoError(t, err, "SGLang's --cpu-offload-gb is an int")
	return int64(gb) * gibBytes
}

// Qwen2.5-14B at bf16 (27.4 GiB of weights) on a 24 GiB RTX 4090 with
// SGLang and cpu_offload. SGLang's --cpu-offload-gb N (an integer number of
// GiB) moves the decoder layers' parameters, from the first layer, into
// (pinned) host memory until N GiB are taken, and copies each offloaded
// layer's weights to the GPU in its forward pass (OffloaderV1 in
// python/sglang/srt/utils/offloader.py at sgl-project/sglang 046a9e40): the
// GPU runs every layer and holds every layer's KV cache, its pool sized
// from what the weights left on it leave of --mem-fraction-static. The plan
// used to split whole layers as llama.cpp does: the host shard held the
// last 15 layers' KV cache beside their weights, the GPU ran only 33
// layers, the flag (10) was not the host shard (10.5 GiB) and decode was
// llama.cpp's.
func TestSGLangOffloadKeepsTheKVCacheOnTheGPU(t *testing.T) {
	r := rtx4090Offload(t, true)
	const body = `{"model":{"name":"Qwen2.5-14B"},"engine":"sglang","quant":"bf16","cpu_offload":true,"context_length":%d}`
	a := shard(t, request(t, fmt.Sprintf(body, 4096), r))
	require.True(t, a.Fits.Yes(), dump(t, a))
	require.Equal(t, StrategyOffload, a.Strategy)
	checkInvariants(t, a)
	require.Len(t, a.Shards, 2)
	flag := sglangOffloadFlag(t, a)
	gpu, hostShard := shardOf(t, a, "cuda:0"), shardOf(t, a, "cpu:0")

	// The host holds the command's offload and nothing else.
	assert.Equal(t, flag, hostShard.MemoryBytes, "host shard = --cpu-offload-gb")
	// SGLang offloads from the first decoder layer; the GPU runs every layer.
	assert.Equal(t, 0, hostShard.LayerStart)
	assert.Equal(t, 48, gpu.LayerEnd)
	// Every layer's KV cache, on the GPU: 48 layers x 8 KV heads x 128 x
	// (K, V) x 2 bytes x 4096 tokens at least.
	assert.GreaterOrEqual(t, a.Memory.KVCacheBytes, int64(48*8*128*2*2*4096))
	assert.Equal(t, a.Memory.TotalBytes-flag, gpu.MemoryBytes, "the GPU holds everything but the offloaded weights")
	assert.LessOrEqual(t, gpu.MemoryBytes, gpu.MemoryAvailableBytes)

	// The offload is the fewest whole GiB that fit: a GiB less does not.
	req := planningOf(t, request(t, fmt.Sprintf(body, 4096), r))
	ch, err := choose(req)
	require.NoError(t, err)
	pl := ch.Plan
	require.True(t, pl.streamed())
	par := pl.Pool.Budget.Engine.Parallelism()
	less := stage{Devices: pl.Stages[0].Devices, Part: streamedGPUPart(pl.Costs, flag-gibBytes, par)}
	assert.False(t, less.Part.total() <= less.budget() && pl.Costs.staticHolds(less, 1), "%d GiB would do", flag/gibBytes-1)

	// Decode pays the offloaded bytes over PCIe every step, on top of
	// SGLang's decode of the GPU part (vLLM's constants off HBM GPUs).
	require.NotNil(t, a.Throughput)
	d := a.Throughput.DecodeTokensPerS
	require.Positive(t, d)
	assert.GreaterOrEqual(t, 1/d, float64(flag)/31.51e9)
	assert.Equal(t, BoundPCIe, a.Throughput.Bound)
	notes := strings.Join(a.Throughput.Assumptions, "\n")
	assert.Contains(t, notes, "SGLang --cpu-offload-gb")
	assert.NotContains(t, notes, "vLLM --cpu-offload-gb")
	assert.Contains(t, notes, "SGLang batch-1 decode", "the GPU part is a serving decode, not llama.cpp's")
	assert.NotContains(t, notes, "pipeline stages run one after another", "one GPU runs every layer")
	assert.NotContains(t, notes, "offloaded layers run on the CPU", "not the whole-layer split's note")
	assert.True(t, strings.HasPrefix(a.Throughput.ValidatedOn, NotValidated), a.Throughput.ValidatedOn)
	assert.Contains(t, a.Throughput.ValidatedOn, "SGLang's --cpu-offload-gb")

	expl := strings.Join(a.Explanation, "\n")
	assert.Contains(t, expl, "SGLang's --cpu-offload-gb")
	assert.Contains(t, expl, "whole GiB")

	checkRoomIsTheCommandsOffload(t, a, body, r, sglangOffloadFlag)
}

// SGLang's forward pass of an offloaded layer copies its weights to the GPU
// (module.state_dict() moved .to(device) before functional_call, in
// OffloaderV1.maybe_offload_to_cpu): the GPU holds that copy of one layer
// while the layer runs, beyond its own weights, so the plan counts one
// layer's weights in the GPU's working memory. vLLM's UVA reads them in
// place and counts none.
func TestSGLangOffloadCountsOneLayersCopyOnTheGPU(t *testing.T) {
	r := rtx4090Offload(t, true)
	for _, e := range []string{"sglang", "vllm"} {
		req := planningOf(t, request(t, `{"model":{"name":"Qwen2.5-14B"},"engine":"`+e+`","quant":"bf16","cpu_offload":true,"context_length":4096}`, r))
		ch, err := choose(req)
		require.NoError(t, err)
		pl := ch.Plan
		require.True(t, pl.streamed(), e)
		par := pl.Pool.Budget.Engine.Parallelism()
		off := pl.Stages[1].Part.Weights
		require.Greater(t, off, int64(pl.Costs.LayerWeights))
		with, without := streamedGPUPart(pl.Costs, off, par), streamedGPUPart(pl.Costs, 0, par)
		if e == "sglang" {
			assert.Equal(t, int64(pl.Costs.LayerWeights), with.Activations-without.Activations, "one layer's copy")
		} else {
			assert.LessOrEqual(t, with.Activations, without.Activations, "vLLM reads the offloaded weights in place")
		}
	}
}

// A mixture-of-experts layer offloaded by SGLang is copied whole in every
// forward pass, whatever experts its router picks (the module's whole
// state_dict moves to the GPU), so decode pays every offloaded byte over
// PCIe; under vLLM's UVA the GPU reads only what the step touches, at one
// sequence the active share (TestVLLMOffloadOfMoEReadsTheBatchsExperts:
// at several). Qwen3-30B-A3B at bf16 (57 GiB) on the 24 GiB RTX 4090.
func TestSGLangOffloadCopiesWholeMoELayers(t *testing.T) {
	r := rtx4090Offload(t, true)
	step := map[string]float64{}
	for _, e := range []string{"sglang", "vllm"} {
		req := planningOf(t, request(t, `{"model":{"name":"Qwen3-30B-A3B"},"engine":"`+e+`","quant":"bf16","cpu_offload":true,"context_length":4096}`, r))
		ch, err := choose(req)
		require.NoError(t, err)
		pl := ch.Plan
		require.True(t, pl.streamed(), e)
		s, note, ok := streamedStepSeconds(&pl, 1)
		require.True(t, ok, note)
		host := float64(pl.Stages[1].Part.Weights)
		step[e] = s / host // seconds per offloaded byte
		if e == "sglang" {
			assert.InDelta(t, host/31.51e9, s, 1e-9, "every offloaded byte crosses the link")
			assert.Contains(t, note, "copies")
		} else {
			assert.InDelta(t, host*pl.Costs.ActiveRatio/31.51e9, s, 1e-9, "the active share")
		}
	}
	assert.Greater(t, step["sglang"], 5*step["vllm"], "Qwen3-30B-A3B activates about a tenth of its weights")
}

// h100Offload is one 80 GiB H100 (HBM3) on a PCIe 5.0 x16 link (63.02 GB/s)
// beside 512 GiB of host RAM.
func h100Offload(t *testing.T) *registry.Registry {
	g := h100(0)
	g.MemoryBandwidthGBs = 3350
	g.PCIe = &registry.PCIe{CurrentSpeedGTs: 32, CurrentWidth: 16, MaxSpeedGTs: 32, MaxWidth: 16, BandwidthGBs: 63.02}
	return reg(t, []registry.Device{host(512 * gibBytes), g})
}

// On an HBM GPU, where SGLang's own decode constants apply, an offload plan
// pays them for the GPU's part: host memory is not a device of the plan's
// decode (its bytes cross PCIe), so it does not send the plan to vLLM's
// constants. Qwen2.5-72B at bf16 (135 GiB) on one 80 GiB H100.
func TestSGLangOffloadOnHBMUsesSGLangConstants(t *testing.T) {
	a := shard(t, request(t, `{"model":{"name":"Qwen2.5-72B"},"engine":"sglang","quant":"bf16","cpu_offload":true,"context_length":4096}`, h100Offload(t)))
	require.True(t, a.Fits.Yes(), dump(t, a))
	require.Equal(t, StrategyOffload, a.Strategy)
	assert.Equal(t, sglangOffloadFlag(t, a), shardOf(t, a, "cpu:0").MemoryBytes)
	require.NotNil(t, a.Throughput)
	notes := strings.Join(a.Throughput.Assumptions, "\n")
	assert.Contains(t, notes, "SGLang batch-1 decode")
	assert.NotContains(t, notes, calibration.SGLangOffHBM)
	assert.Positive(t, a.Throughput.DecodeTokensPerS)
}

// An offload plan whose prefill is omitted lists no prefill model beside
// the omission, and the omission says why: part of the weights is in host
// memory. (Offload plans used to list "prefill: ..." or "prefill matmuls
// ..." next to "prefill omitted".)
func TestOffloadPlansStatePrefillOnce(t *testing.T) {
	r := rtx4090Offload(t, true)
	for _, e := range []string{"sglang", "vllm", "llama.cpp"} {
		a := shard(t, request(t, `{"model":{"name":"Qwen2.5-14B"},"engine":"`+e+`","quant":"bf16","cpu_offload":true,"context_length":4096}`, r))
		require.True(t, a.Fits.Yes(), e)
		require.Equal(t, StrategyOffload, a.Strategy, e)
		require.NotNil(t, a.Throughput, e)
		assert.Zero(t, a.Throughput.PrefillTokensPerS, e)
		var prefill []string
		for _, n := range a.Throughput.Assumptions {
			if strings.HasPrefix(n, "prefill") {
				prefill = append(prefill, n)
			}
		}
		require.Len(t, prefill, 1, "%s: %q", e, prefill)
		assert.True(t, strings.HasPrefix(prefill[0], "prefill omitted: "), "%s: %q", e, prefill[0])
		assert.Contains(t, prefill[0], "host memory", e)
		assert.NotContains(t, prefill[0], "datasheet", "%s: the device's figures are known", e)
	}
}

// SGLang sizes its KV pool before any forward pass: ModelRunner loads the
// model (the offloaded layers already in pinned host memory), snapshots
// the free memory (post_model_load_memory) and sizes the pool from it,
// --mem-fraction-static of the memory free before loading less what the
// weights left on the GPU take (profile_max_num_token in
// python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py at
// sgl-project/sglang 001ccef0), and only then captures its CUDA graphs
// (init_backends in python/sglang/srt/model_executor/model_runner.py at
// 0005834c). The copy an offloaded layer's forward pass makes
// (OffloaderV1's state_dict .to(device), python/sglang/srt/utils/
// offloader.py at 046a9e40) is allocated in those passes, from what the
// pool leaves: the rest outside --mem-fraction-static, beside the
// activations and the CUDA graphs, not the pool's share. The plan counts
// it there (restHolds): Qwen2.5-14B at bf16 on a 24 GiB RTX 4090 (rest
// 3.9 GiB at SGLang's own 0.833, activations 0.4 GiB and one layer's copy
// 0.5 GiB) fits with --mem-fraction-static 0.95 (rest 1.2 GiB) and is
// refused at 0.974 (rest 0.6 GiB: the activations fit, not with the copy;
// in the pool's share it would fit). The explanation said the GPU held
// "a copy of one offloaded layer and a KV pool of at least one sequence
// within --mem-fraction-static"; it now says where the copy is.
func TestSGLangOffloadCopyIsOutsideThePool(t *testing.T) {
	r := rtx4090Offload(t, true)
	const body = `{"model":{"name":"Qwen2.5-14B"},"engine":"sglang","quant":"bf16","cpu_offload":true,"context_length":4096%s}`
	req := planningOf(t, request(t, fmt.Sprintf(body, ""), r))
	ch, err := choose(req)
	require.NoError(t, err)
	pl := ch.Plan
	require.True(t, pl.streamed())
	g, st, off := pl.Stages[0], pl.Costs.Static, pl.Stages[1].Part.Weights
	require.NotNil(t, st)
	f := st.fraction(g, 1, pl.Costs.Latent)
	par := offloadOf(&pl)
	copied := min(off, int64(pl.Costs.LayerWeights))
	require.Positive(t, copied)
	par.OffloadCopiedPerPass = false
	noCopy := stage{Devices: g.Devices, Part: streamedGPUPart(pl.Costs, off, par)}
	assert.Equal(t, staticPool(noCopy, f, st.Linked), staticPool(g, f, st.Linked), "the copy takes nothing of the pool")
	assert.Equal(t, copied, g.Part.Activations-noCopy.Part.Activations, "the copy is in the GPU's working memory")
	assert.LessOrEqual(t, g.Part.Activations, staticRest(g, f, st.Linked), "the rest holds the activations and the copy")
	// The figures the comment and docs/inference-servers.md quote.
	const gib = float64(gibBytes)
	assert.InDelta(t, 0.833, f, 0.0005)
	assert.InDelta(t, 3.9, float64(staticRest(g, f, st.Linked))/gib, 0.05)
	assert.InDelta(t, 0.4, float64(noCopy.Part.Activations)/gib, 0.05)
	assert.InDelta(t, 0.5, float64(copied)/gib, 0.05)
	assert.InDelta(t, 1.2, float64(staticRest(g, 0.95, st.Linked))/gib, 0.05)

	fits := shard(t, request(t, fmt.Sprintf(body, `,"memory_fraction":0.95`), r))
	require.True(t, fits.Fits.Yes(), dump(t, fits))
	assert.Equal(t, StrategyOffload, fits.Strategy)
	short := shard(t, request(t, fmt.Sprintf(body, `,"memory_fraction":0.974`), r))
	require.False(t, short.Fits.Yes(), dump(t, short))
	require.NotNil(t, short.Refusal)
	assert.Contains(t, short.Refusal.Text, "leaves the rest (0.6 GiB) to its activations and CUDA graphs")

	line := ""
	for _, e := range fits.Explanation {
		if strings.HasPrefix(e, "cpu_offload: ") {
			line = e
		}
	}
	assert.Contains(t, line, "holds the rest and the embeddings with a KV pool of at least one sequence within --mem-fraction-static, and a copy of one offloaded layer beside the activations outside it")
	assert.NotContains(t, line, "a copy of one offloaded layer and a KV pool")
}

// The refusal of that plan at --mem-fraction-static 0.974 listed the
// activations (0.4 GiB) against a rest of 0.6 GiB and said only that no
// level fits the GPU and the host RAM together: nothing a user could read
// said that offloading failed on the 0.5 GiB copy of one offloaded layer
// SGLang makes in that rest. The refusal now names the copy with its size.
func TestSGLangOffloadRefusalNamesTheCopy(t *testing.T) {
	r := rtx4090Offload(t, true)
	short := shard(t, request(t, `{"model":{"name":"Qwen2.5-14B"},"engine":"sglang","quant":"bf16","cpu_offload":true,"context_length":4096,"memory_fraction":0.974}`, r))
	require.False(t, short.Fits.Yes(), dump(t, short))
	require.NotNil(t, short.Refusal)
	assert.Contains(t, short.Refusal.Text, "; offloaded, SGLang's --mem-fraction-static 0.974 leaves 0.6 GiB outside its KV pool, less than the activations (0.4 GiB) and the copy of one offloaded layer (0.5 GiB) its forward pass makes there", dump(t, short.Explanation))

	// Where the copy is not why (0.95 fits), no such clause.
	fits := shard(t, request(t, `{"model":{"name":"Qwen2.5-14B"},"engine":"sglang","quant":"bf16","cpu_offload":true,"context_length":4096,"memory_fraction":0.95}`, r))
	assert.NotContains(t, strings.Join(fits.Explanation, "\n"), "less than the activations")
}
