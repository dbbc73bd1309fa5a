package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// b200s is n B200s behind one NVSwitch: 180 GB each and compute capability
// 10.0 (NVIDIA's MIG User Guide, Supported GPUs: "B200 | Blackwell | GB100 |
// 10.0 | 180GB | 7", the specs record of internal/specs/records_nvidia.go).
func b200s(t *testing.T, n int) *registry.Registry {
	var devs []registry.Device
	for i := 0; i < n; i++ {
		d := gpu(registry.KindCUDA, i, "NVIDIA B200", 180e9, "10.0")
		d.Vendor = "nvidia"
		devs = append(devs, d)
	}
	return reg(t, devs, link(registry.LinkNVSwitch, 900, ids("cuda", n)...))
}

// SGLang picks a DeepSeek Sparse Attention model's KV cache itself when
// --kv-cache-dtype is auto: fp8_e4m3 on compute capability 10 and above,
// bfloat16 below, and it takes no other type for it (assert
// kv_cache_dtype in ["bfloat16", "fp8_e4m3"], "DeepSeek DSA only supports
// bf16/bfloat16 or fp8_e4m3 kv_cache_dtype": _set_default_nsa_kv_cache_dtype
// in python/sglang/srt/server_args.py of sgl-project/sglang, the same rule
// in the arg_groups passes of later versions). PR 11309's log of
// DeepSeek-V3.2-Exp on B200s with no --kv-cache-dtype shows it: 656 bytes
// a token a layer for the latent, FlashMLA's fp8 layout
// (https://github.com/sgl-project/sglang/pull/11309, the
// sglang-pr11309-b200-deepseek-v3.2-exp row of
// internal/calibration/data/sglang_startup.json). So a plan with no cache
// type on a B200, sized at the 16-bit latent, must pin that cache in its
// command, and a one-byte cache asked must be fp8_e4m3 (fp8_e5m2, SGLang's
// one-byte type for other models, stops it at start-up). On an H200 auto
// is the 16-bit cache the plan sized: no flag.
func TestSGLangDSACacheIsTheOnePlanned(t *testing.T) {
	const ctx = 32768
	plan := func(r *registry.Registry, kv string) *ShardingAnswer {
		body := `{"model":{"name":"DeepSeek-V3.2"},"engine":"sglang","quant":"fp8","tensor_parallel_size":8,"context_length":` + itoa(ctx)
		if kv != "" {
			body += `,"kv_cache_dtype":"` + kv + `"`
		}
		a := shard(t, request(t, body+`}`, r))
		require.True(t, a.Fits.Yes(), dump(t, a.Explanation))
		return a
	}
	// 16-bit latent (512 + 64 values) and the 132-byte indexer key, 61 layers.
	sixteen := float64(61 * ((512+64)*2 + 132) * ctx)

	a := plan(b200s(t, 8), "")
	assert.InEpsilon(t, sixteen, float64(a.Memory.KVCacheBytes/8), 0.01, "the 16-bit cache")
	assert.Equal(t, "bf16", argValue(a.EngineArgs["sglang"], "--kv-cache-dtype"), "the cache sized, pinned: auto would be fp8_e4m3 on compute capability 10.0")
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "fp8_e4m3", dump(t, a.Explanation))

	a = plan(h200s(t, 8), "")
	assert.InEpsilon(t, sixteen, float64(a.Memory.KVCacheBytes/8), 0.01, "the 16-bit cache")
	assert.NotContains(t, a.EngineArgs["sglang"], "--kv-cache-dtype", "auto is bfloat16 below compute capability 10")

	for _, r := range []*registry.Registry{b200s(t, 8), h200s(t, 8)} {
		for _, kv := range []string{"fp8", "int8"} {
			a = plan(r, kv)
			assert.Equal(t, "fp8_e4m3", argValue(a.EngineArgs["sglang"], "--kv-cache-dtype"), "%s on %s", kv, r.Devices[0].Name)
		}
	}

	// A model without DSA keeps SGLang's usual flags.
	b := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"sglang","context_length":8192}`, b200s(t, 1)))
	require.True(t, b.Fits.Yes(), dump(t, b.Explanation))
	assert.NotContains(t, b.EngineArgs["sglang"], "--kv-cache-dtype")
	b = shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"sglang","context_length":8192,"kv_cache_dtype":"fp8"}`, b200s(t, 1)))
	assert.Equal(t, "fp8_e5m2", argValue(b.EngineArgs["sglang"], "--kv-cache-dtype"))
}
