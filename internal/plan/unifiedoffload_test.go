package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// appleM3Pro36 is testdata/machines/macbook-m3-pro as ai-hwaccel detects
// it: a GPU that may use 24 GiB of the host's 36 GiB (Metal's working set),
// shared.
func appleM3Pro36(t *testing.T) *registry.Registry {
	d := gpu(registry.KindMetal, 0, "Apple M3 Pro", 38654705664, "")
	d.Vendor, d.MemoryShared, d.MemoryUsableBytes, d.MemoryBandwidthGBs = "apple", true, 25769803776, 150
	cpu := host(38654705664)
	cpu.Name, cpu.Vendor = "Apple M3 Pro", "apple"
	return reg(t, []registry.Device{cpu, d})
}

// An accelerator that shares the host's memory (a DGX Spark's GB10, an
// Apple GPU) takes its part of the plan out of the same RAM the host's
// part would use: offloading layers or experts to the host adds nothing
// beyond what the GPU does not use. The plan counted both: DeepSeek-R1
// with cpu_offload "fit" a 128 GB DGX Spark at q2_k, 117.7 GiB on cuda:0
// plus 111.2 GiB on cpu:0, 229 GiB in all.
func TestOffloadBesideUnifiedMemoryCountsItOnce(t *testing.T) {
	for name, c := range map[string]struct {
		r   *registry.Registry
		ram int64
	}{
		"dgx-spark":      {dgxSpark(t), 128501256192},
		"macbook-m3-pro": {appleM3Pro36(t), 38654705664},
	} {
		for _, body := range []string{
			`{"model":{"name":"DeepSeek-R1"},"engine":"llama.cpp","cpu_offload":true}`,
			`{"model":{"name":"Llama-3.3-70B-Instruct"},"engine":"llama.cpp","cpu_offload":true,"quant":"q8_0"}`,
			`{"model":{"name":"Qwen3-30B-A3B"},"engine":"llama.cpp","cpu_offload":true,"quant":"bf16"}`,
		} {
			a := shard(t, request(t, body, c.r))
			if !a.Fits {
				continue
			}
			var total int64
			for _, s := range a.Shards {
				total += s.MemoryBytes
			}
			assert.LessOrEqual(t, total, c.ram, "%s %s: %s on %d shards", name, body, a.Strategy, len(a.Shards))
		}
	}
	a := shard(t, request(t, `{"model":{"name":"DeepSeek-R1"},"engine":"llama.cpp","cpu_offload":true}`, dgxSpark(t)))
	require.NotNil(t, a)
	assert.False(t, a.Fits && a.Strategy == StrategyOffload, "DeepSeek-R1 offloaded on a DGX Spark: %s %s", a.Quant, a.Explanation)
}
