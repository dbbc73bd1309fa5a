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
		require.True(t, a.Fits, q)
		require.Equal(t, StrategyOffload, a.Strategy, q)
		require.NotNil(t, a.Throughput, q)
		require.Greater(t, a.Throughput.DecodeTokensPerS, 0.0, q)
		decodeAt[q] = a.Throughput.DecodeTokensPerS
	}
	require.Greater(t, decodeAt["q4_k_m"], 2*decodeAt["bf16"], "the premise: bf16 in host RAM decodes far slower")

	a := shard(t, request(t, body+`}`, r))
	require.True(t, a.Fits)
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

	// Without the GPU's PCIe bandwidth and a host whose memory bandwidth
	// is known (an unnamed CPU), no offload plan's decode is estimated:
	// the layer rule stands (bf16, experts split) and says so.
	r.Devices[1].PCIe = nil
	r.Devices[0].Name, r.Devices[0].Vendor = "", ""
	a = shard(t, request(t, body+`}`, r))
	require.True(t, a.Fits)
	assert.Equal(t, "bf16", a.Quant)
	assert.NotEmpty(t, explanationWith(a.Explanation, "speed not weighed"), "%q", a.Explanation)

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
