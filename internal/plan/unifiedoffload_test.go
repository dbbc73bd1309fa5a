package plan

import (
	"strings"
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
			if !a.Fits.Yes() {
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
	assert.False(t, a.Fits.Yes() && a.Strategy == StrategyOffload, "DeepSeek-R1 offloaded on a DGX Spark: %s %s", a.Quant, a.Explanation)
}

// A llama.cpp plan at a low-quality type beside a GPU that shares the
// host's memory named cpu_offload as a way to keep more quality: MiniMax-M2.7
// on a DGX Spark planned iq2_xxs and said "a larger GPU, or quant q4_k_m
// with cpu_offload, keeps more of it", but with cpu_offload q4_k_m does not
// fit there (the host RAM is the GPU's). The hint names only a larger
// machine; a discrete GPU's keeps the cpu_offload advice.
func TestLowQualityNoteBesideUnifiedMemoryLeavesOutCPUOffload(t *testing.T) {
	for _, body := range []string{
		`{"model":{"name":"MiniMax-M2.7"},"engine":"llama.cpp"}`,
		`{"model":{"name":"MiniMax-M2.7"},"engine":"llama.cpp","cpu_offload":true}`,
	} {
		a := shard(t, request(t, body, dgxSpark(t)))
		require.True(t, a.Fits.Yes(), body)
		text := strings.Join(a.Explanation, "\n")
		require.Contains(t, text, a.Quant+" loses much quality", body)
		assert.NotContains(t, text, "cpu_offload, keeps more of it", body)
		assert.NotContains(t, text, "the cpu_offload asked for", body)
		assert.Contains(t, text, "cpu_offload adds no memory here", body)
	}
	q4 := shard(t, request(t, `{"model":{"name":"MiniMax-M2.7"},"engine":"llama.cpp","cpu_offload":true,"quant":"q4_k_m"}`, dgxSpark(t)))
	assert.False(t, q4.Fits.Yes(), "the advice left out would not fit: %s", q4.Explanation)

	host := registry.Device{ID: "cpu:0", Kind: registry.KindCPU, Family: registry.FamilyCPU, Name: "host", Available: true,
		MemoryBytes: 128 * gibBytes, Cores: 16}
	r := reg(t, []registry.Device{host, gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 4090", 24<<30, "8.9")})
	d := shard(t, request(t, `{"model":{"name":"Llama-3.1-70B"},"engine":"llama.cpp"}`, r))
	require.True(t, d.Fits.Yes(), d.Explanation)
	assert.Contains(t, strings.Join(d.Explanation, "\n"), "a larger GPU, or quant q4_k_m with cpu_offload, keeps more of it")
}

// appleM2Max32 is testdata/machines/macbook-m2-max-32gb as ai-hwaccel
// detects it: a GPU that may use 21.3 GiB of the host's 32 GiB (Metal's
// working set), shared.
func appleM2Max32(t *testing.T) *registry.Registry {
	d := gpu(registry.KindMetal, 0, "Apple M2 Max", 32<<30, "")
	d.Vendor, d.MemoryShared, d.MemoryUsableBytes, d.MemoryBandwidthGBs = "apple", true, 22906503168, 400
	cpu := host(32 << 30)
	cpu.Name, cpu.Vendor = "Apple M2 Max", "apple"
	return reg(t, []registry.Device{cpu, d})
}

// A refusal hinted "cpu_offload would keep the layers that do not fit in
// host RAM" wherever some host RAM lay beside the GPU, whether or not the
// model then fit: Qwen3-30B-A3B at q8_0 on a 32 GB M2 Max (about 11 GiB
// beside Metal's working set) gave the hint, and with cpu_offload it still
// did not fit. The hint is given where an offloaded plan fits, as on an
// RTX 4090 beside 128 GiB.
func TestCPUOffloadHintOnlyWhereTheOffloadFits(t *testing.T) {
	hint := "would keep the layers that do not fit in host RAM"
	body := `{"model":{"name":"Qwen3-30B-A3B"},"quant":"q8_0"}`
	a := shard(t, request(t, body, appleM2Max32(t)))
	require.False(t, a.Fits.Yes(), a.Explanation)
	assert.NotContains(t, strings.Join(a.Explanation, "\n"), hint)
	off := shard(t, request(t, `{"model":{"name":"Qwen3-30B-A3B"},"quant":"q8_0","cpu_offload":true}`, appleM2Max32(t)))
	assert.False(t, off.Fits.Yes(), "the hint left out would not help: %s", off.Explanation)

	h := registry.Device{ID: "cpu:0", Kind: registry.KindCPU, Family: registry.FamilyCPU, Name: "host", Available: true,
		MemoryBytes: 128 * gibBytes, Cores: 16}
	r := reg(t, []registry.Device{h, gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 4090", 24<<30, "8.9")})
	d := shard(t, request(t, `{"model":{"name":"Llama-3.1-70B"},"engine":"llama.cpp","quant":"q8_0"}`, r))
	require.False(t, d.Fits.Yes())
	assert.Contains(t, strings.Join(d.Explanation, "\n"), hint)
	on := shard(t, request(t, `{"model":{"name":"Llama-3.1-70B"},"engine":"llama.cpp","quant":"q8_0","cpu_offload":true}`, r))
	assert.True(t, on.Fits.Yes(), on.Explanation)
}

// A refusal with cpu_offload asked says why the offload did not help where
// there is host RAM beside the GPU but too little of it, and hints
// include_cpu only where a plan on host RAM alone fits. On a 32 GB M2 Max
// (testdata/machines/macbook-m2-max-32gb) Qwen3-30B-A3B at q8_0 (31.6 GiB)
// does not fit the GPU (21.3 GiB of Metal's working set) with the 10.7 GiB
// left beside it, and the refusal said nothing of the offload asked for;
// the host alone holds it (include_cpu plans it at -c 15872), so that hint
// stays. Llama-3.3-70B at q8_0 fits neither, and its refusal hinted
// include_cpu all the same.
func TestOffloadRefusalSaysTheHostIsTooSmall(t *testing.T) {
	a := shard(t, request(t, `{"model":{"name":"Qwen3-30B-A3B"},"quant":"q8_0","cpu_offload":true}`, appleM2Max32(t)))
	require.False(t, a.Fits.Yes(), a.Explanation)
	line := explanationWith(a.Explanation, "cpu_offload: ")
	require.NotEmpty(t, line, "%q", a.Explanation)
	assert.Contains(t, line, "metal:0 and the host RAM beside it together (10.7 GiB of cpu:0)")
	assert.NotEmpty(t, explanationWith(a.Explanation, "include_cpu: true would plan"), "the host alone holds it: %q", a.Explanation)
	onHost := shard(t, request(t, `{"model":{"name":"Qwen3-30B-A3B"},"quant":"q8_0","include_cpu":true}`, appleM2Max32(t)))
	assert.True(t, onHost.Fits.Yes(), onHost.Explanation)

	a = shard(t, request(t, `{"model":{"name":"Llama-3.3-70B-Instruct"},"quant":"q8_0","cpu_offload":true}`, appleM2Max32(t)))
	require.False(t, a.Fits.Yes(), a.Explanation)
	assert.NotEmpty(t, explanationWith(a.Explanation, "cpu_offload: no level tried fits metal:0"), "%q", a.Explanation)
	assert.Empty(t, explanationWith(a.Explanation, "include_cpu: true would plan"), "the host alone holds no level either: %q", a.Explanation)
	onHost = shard(t, request(t, `{"model":{"name":"Llama-3.3-70B-Instruct"},"quant":"q8_0","include_cpu":true}`, appleM2Max32(t)))
	assert.False(t, onHost.Fits.Yes(), onHost.Explanation)
}
