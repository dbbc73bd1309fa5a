package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// laptop4060 is an 8 GiB RTX 4060 Laptop GPU (the slimbook-hero-rtx4060-igpu
// fixture's, 8188 MiB, a PCIe 4.0 x8 link) beside 64 GiB of host RAM.
func laptop4060(t *testing.T) *registry.Registry {
	d := gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 4060 Laptop GPU", 8188<<20, "8.9")
	free := int64(7800 << 20)
	bw := 256.0
	d.Vendor, d.MemoryFreeBytes, d.MemoryBandwidthGBs = "nvidia", &free, bw
	d.PCIe = &registry.PCIe{CurrentSpeedGTs: 16, CurrentWidth: 8, MaxSpeedGTs: 16, MaxWidth: 8, BandwidthGBs: 15.75}
	return reg(t, []registry.Device{host(64 << 30), d})
}

// Qwen3-30B-A3B on an 8 GiB GPU with cpu_offload: auto took bf16, the
// highest level that fits with its experts in host RAM (a MoE plan was
// taken at the first level that split), and that plan's own decode
// estimate is a quarter of q4_k_m's, since almost every expert byte a
// token reads crosses to host memory. Offloaded, as on a CPU, the level
// weighs speed: auto takes the highest-quality level whose decode (the
// plan's own figure, empty cache) is at least cpuSpeedFraction of the
// fastest fitting level's down to q4_k_m, and the explanation says so.
func TestOffloadAutoWeighsDecodeSpeed(t *testing.T) {
	r := laptop4060(t)
	const body = `{"model":{"name":"Qwen3-30B-A3B"},"engine":"llama.cpp","cpu_offload":true`
	decodeAt := map[string]float64{}
	for _, q := range []string{"bf16", "q8_0", "q6_k", "q5_k_m", "q4_k_m"} {
		a := shard(t, request(t, body+`,"quant":"`+q+`"}`, r))
		require.True(t, a.Fits.Yes(), q)
		require.Equal(t, StrategyOffload, a.Strategy, q)
		require.NotNil(t, a.Throughput, q)
		require.Greater(t, a.Throughput.DecodeTokensPerS, 0.0, q)
		decodeAt[q] = a.Throughput.DecodeTokensPerS
	}
	require.Greater(t, decodeAt["q4_k_m"], 2*decodeAt["bf16"], "the premise: bf16 in host RAM decodes far slower")

	a := shard(t, request(t, body+`}`, r))
	require.True(t, a.Fits.Yes())
	assert.NotEqual(t, "bf16", a.Quant, "%q", a.Explanation)
	fastest := 0.0
	for _, v := range decodeAt {
		fastest = max(fastest, v)
	}
	got, ok := decodeAt[a.Quant]
	require.True(t, ok, a.Quant)
	assert.GreaterOrEqual(t, got, cpuSpeedFraction*fastest*0.98, "the chosen level keeps the rule's share of the fastest")
	for _, q := range []string{"bf16", "q8_0", "q6_k", "q5_k_m", "q4_k_m"} {
		if q == a.Quant {
			break
		}
		assert.Less(t, decodeAt[q], cpuSpeedFraction*fastest*1.02, "%s, above the choice, is too slow", q)
	}
	assert.Contains(t, explanationWith(a.Explanation, "speed:"), "cpu_offload", "%q", a.Explanation)
	// docs/inference-servers.md ("With `cpu_offload`, `auto` weighs decode
	// speed by the same rule") quotes this choice: rewrite it when it moves.
	assert.Equal(t, "q6_k", a.Quant)
	assert.Contains(t, explanationWith(a.Explanation, "speed:"), "q6_k: 1.2x the decode speed of q8_0 with cpu_offload")

	// Without the GPU's PCIe bandwidth and a host whose memory bandwidth
	// is known (an unnamed CPU), no offload plan's decode is estimated:
	// the layer rule stands (the first level whose experts split) and says
	// so, among the levels a published GGUF runs (preferPublished): not
	// bf16, of which the catalog knows no GGUF, which the explanation
	// names.
	r.Devices[1].PCIe = nil
	r.Devices[0].Name, r.Devices[0].Vendor = "", ""
	a = shard(t, request(t, body+`}`, r))
	require.True(t, a.Fits.Yes())
	assert.NotEqual(t, "bf16", a.Quant)
	assert.NotEmpty(t, a.Load["llama.cpp"].Repo, "the chosen level's GGUF is published")
	assert.NotEmpty(t, explanationWith(a.Explanation, "speed not weighed"), "%q", a.Explanation)
	assert.NotEmpty(t, explanationWith(a.Explanation, "published: bf16 ("), "%q", a.Explanation)

	// A named level is planned as asked.
	a = shard(t, request(t, body+`,"quant":"bf16"}`, r))
	assert.Equal(t, "bf16", a.Quant)
}

// explanationWith is the first line of lines starting with prefix, or "".
func explanationWith(lines []string, prefix string) string {
	for _, l := range lines {
		if len(l) >= len(prefix) && l[:len(prefix)] == prefix {
			return l
		}
	}
	return ""
}

// The Room of a llama.cpp plan with experts in host RAM counted host RAM
// as room for the KV cache: Qwen3-30B-A3B at q4_k_m on the 8 GiB laptop
// GPU said "up to 134 sequences at once", which the printed command
// (-ngl 49 --n-cpu-moe N: every layer on the GPU) cannot hold, since
// llama.cpp allocates each layer's KV cache on the layer's device
// (llama_kv_cache in src/llama-kv-cache.cpp of ggml-org/llama.cpp): the
// host's free RAM holds none of it. The room is now what the printed
// placement holds, each layer's cache where llama.cpp puts it: the GPU's
// free memory over one sequence's cache, at most.
func TestOffloadRoomCountsTheCacheWhereLlamaCPPAllocatesIt(t *testing.T) {
	r := laptop4060(t)
	a := shard(t, request(t, `{"model":{"name":"Qwen3-30B-A3B"},"engine":"llama.cpp","cpu_offload":true,"quant":"q4_k_m","context_length":4096}`, r))
	require.True(t, a.Fits.Yes())
	require.Equal(t, StrategyOffload, a.Strategy)
	require.Len(t, a.Shards, 2)
	gpuShard := a.Shards[0]
	require.Equal(t, "cuda:0", gpuShard.DeviceID)
	require.Equal(t, 0, gpuShard.LayerStart, "every layer on the GPU, experts in host RAM: %q", a.Explanation)
	kv := a.Memory.KVCacheBytes
	require.Greater(t, kv, int64(0))
	free := gpuShard.MemoryAvailableBytes - gpuShard.MemoryBytes
	// Every sequence's cache is on the GPU: the room holds the plan's
	// sequence and as many more as the GPU's free memory holds.
	assert.GreaterOrEqual(t, a.MaxBatchSize, 1)
	assert.LessOrEqual(t, int64(a.MaxBatchSize-1)*kv, free, "room %d sequences: their cache does not fit the GPU", a.MaxBatchSize)
	assert.LessOrEqual(t, int64(a.MaxContextLength-4096)*kv/4096, free, "context %d: its cache does not fit the GPU", a.MaxContextLength)

	// A dense plan with whole layers in host RAM (-ngl): the cache of the
	// GPU's layers is on the GPU, so the GPU's free memory bounds the room
	// as well.
	a = shard(t, request(t, `{"model":{"name":"Llama-3.1-70B"},"engine":"llama.cpp","cpu_offload":true,"quant":"q4_k_m","context_length":4096}`, r))
	require.True(t, a.Fits.Yes())
	require.Equal(t, StrategyOffload, a.Strategy)
	var gpuKV, gpuFree int64
	for _, s := range a.Shards {
		if s.DeviceID == "cuda:0" {
			gpuFree = s.MemoryAvailableBytes - s.MemoryBytes
			gpuKV = a.Memory.KVCacheBytes * int64(s.LayerEnd-s.LayerStart) / int64(a.Model.Layers)
		}
	}
	require.Greater(t, gpuKV, int64(0))
	assert.LessOrEqual(t, int64(a.MaxBatchSize-1)*gpuKV, gpuFree+gpuKV/10, "room %d sequences: the GPU layers' cache does not fit the GPU", a.MaxBatchSize)
}
