package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// A llama.cpp plan sized at one of llama.cpp's quantized cache types
// (kv_cache_dtype q4_0: 18 bytes per 32 values) must pass the type to
// llama-server: without --cache-type-k/-v it allocates f16, its default
// (common/arg.cpp of ggml-org/llama.cpp), 3.6 times the cache the plan
// counted (Llama-3.1-8B at 131072 tokens: 16.0 GiB, not 4.5).
func TestLlamaCPPCommandCarriesItsCacheType(t *testing.T) {
	r := reg(t, []registry.Device{h100(0)})
	for _, kv := range []string{"q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl", "f32"} {
		a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","context_length":4096,"kv_cache_dtype":"`+kv+`"}`, r))
		require.True(t, a.Fits.Yes(), kv)
		args := a.EngineArgs["llama.cpp"]
		assert.Equal(t, kv, argValue(args, "--cache-type-k"), "%s: %v", kv, args)
		assert.Equal(t, kv, argValue(args, "--cache-type-v"), "%s: %v", kv, args)
	}
	// int8 is written as llama.cpp's q8_0, as before; the 16-bit default
	// needs no flag.
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","context_length":4096,"kv_cache_dtype":"int8"}`, r))
	assert.Equal(t, "q8_0", argValue(a.EngineArgs["llama.cpp"], "--cache-type-k"))
	a = shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","context_length":4096}`, r))
	assert.NotContains(t, a.EngineArgs["llama.cpp"], "--cache-type-k")
}

// llama.cpp's quantized cache types (q8_0, q4_0, ...) are its own
// --cache-type-k/-v values: vLLM's --kv-cache-dtype takes auto, bfloat16 and
// fp8 variants (https://docs.vllm.ai/en/latest/configuration/engine_args/),
// SGLang's auto, bf16 and fp8 variants. A vLLM plan sized at q4_0 printed a KV room
// 3.6 times what the printed command, which carries no cache flag, gets
// (Llama-3.1-8B on an H200: 3084k tokens against 867k). Named with such an
// engine the type is refused; with no engine named it chooses llama.cpp, as
// a GGUF quant does.
func TestLlamaCPPCacheTypesAreLlamaCPPs(t *testing.T) {
	for _, eng := range []string{"vllm", "sglang"} {
		for _, kv := range []string{"q8_0", "q4_0", "iq4_nl", "f32"} {
			_, err := decode([]byte(`{"model":{"name":"Llama-3.1-8B"},"engine":"` + eng + `","kv_cache_dtype":"` + kv + `"}`))
			require.Error(t, err, "%s %s", eng, kv)
			assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err), "%s %s", eng, kv)
			assert.Contains(t, err.Error(), "llama.cpp", "%s %s: the message names the engine whose type it is", eng, kv)
		}
		for _, kv := range []string{"fp16", "bf16", "fp8", "int8"} {
			_, err := decode([]byte(`{"model":{"name":"Llama-3.1-8B"},"engine":"` + eng + `","kv_cache_dtype":"` + kv + `"}`))
			assert.NoError(t, err, "%s %s: a common cache type", eng, kv)
		}
	}
	_, err := decode([]byte(`{"model":{"name":"Llama-3.1-8B"},"engine":"none","kv_cache_dtype":"q4_0"}`))
	assert.NoError(t, err, "engine none writes no command and sizes any type")

	r := reg(t, []registry.Device{h100(0)})
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"kv_cache_dtype":"q4_0","context_length":4096}`, r))
	require.True(t, a.Fits.Yes(), dump(t, a.Explanation))
	require.NotNil(t, a.Budget)
	assert.Equal(t, "llama.cpp", a.Budget.Engine, "no engine named: a llama.cpp cache type chooses llama.cpp")
	assert.True(t, a.Budget.EngineDefault)
	assert.Equal(t, "q4_0", argValue(a.EngineArgs["llama.cpp"], "--cache-type-k"))
	assert.NotContains(t, a.EngineArgs, "vllm")
}

// llama.cpp cannot hold a quantized V cache without flash attention: it
// refuses to create the context ("quantized V cache requires flash_attn to
// be enabled", src/llama-context.cpp of ggml-org/llama.cpp @ 34af94cd), so
// `-fa off --cache-type-v q4_0` is a command it rejects. flash_attention
// false with such a cache is invalid_argument where the plan's engine is
// llama.cpp: named, or chosen by one of its own cache types; f32 (not
// quantized) and the 16-bit default pass, and so does an engine that takes
// the type without that rule.
func TestQuantizedVCacheNeedsFlashAttentionInLlamaCPP(t *testing.T) {
	for _, body := range []string{
		`{"model":{"name":"Llama-3.1-8B"},"flash_attention":false,"kv_cache_dtype":"q4_0"}`,
		`{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","flash_attention":false,"kv_cache_dtype":"q8_0"}`,
		`{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","flash_attention":false,"kv_cache_dtype":"int8"}`,
	} {
		_, err := decode([]byte(body))
		require.Error(t, err, body)
		assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err), body)
		assert.Contains(t, err.Error(), "flash attention", body)
	}
	for _, body := range []string{
		`{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","flash_attention":false,"kv_cache_dtype":"f32"}`,
		`{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","flash_attention":false}`,
		`{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","kv_cache_dtype":"q4_0"}`,
		`{"model":{"name":"Llama-3.1-8B"},"engine":"vllm","flash_attention":false,"kv_cache_dtype":"int8"}`,
	} {
		_, err := decode([]byte(body))
		assert.NoError(t, err, body)
	}
}

// Where llama.cpp is the default engine (a CPU-only machine) and a common
// cache type it quantizes (int8, written as q8_0) comes with
// flash_attention false, Validate cannot know the engine yet; the command
// must still be one llama.cpp accepts: no `-fa off` beside a quantized V
// cache. llama.cpp's default, -fa auto, turns flash attention on for it
// ("enabling flash_attn since it is required for quantized V cache",
// src/llama-context.cpp @ 34af94cd), and the explanation says so; the
// working buffer stays sized without flash attention (the larger).
func TestDefaultLlamaCPPQuantizedVCacheLeavesFlashAttentionToLlamaCPP(t *testing.T) {
	r := reg(t, []registry.Device{host(64 << 30)})
	a := shard(t, request(t, `{"model":{"name":"Llama-3.2-1B"},"context_length":4096,"kv_cache_dtype":"int8","flash_attention":false}`, r))
	args := a.EngineArgs["llama.cpp"]
	require.NotEmpty(t, args, "%v", a.EngineArgs)
	assert.Equal(t, "q8_0", argValue(args, "--cache-type-v"), "%v", args)
	assert.NotEqual(t, "off", argValue(args, "-fa"), "%v", args)
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "quantized V cache", "%v", a.Explanation)
	// A 16-bit cache keeps -fa off as asked.
	a = shard(t, request(t, `{"model":{"name":"Llama-3.2-1B"},"context_length":4096,"flash_attention":false}`, r))
	assert.Equal(t, "off", argValue(a.EngineArgs["llama.cpp"], "-fa"))
}

// llama.cpp has no fp8 KV cache (its --cache-type-k/-v values are the
// kv_cache_types of common/arg.cpp: f32, f16, bf16 and ggml's quantized
// types). A llama.cpp plan with kv_cache_dtype fp8 was sized at one byte an
// element (0.5 GiB for Llama-3.1-8B at 8192 tokens) while its command
// carried no cache flag, so llama-server allocated its f16 default, twice
// that (1.0 GiB; 16 GiB at the model's 131072), with a note calling q8_0
// the nearest. The command now stores it as q8_0, as it does int8, the
// one-byte cache the plan sized, and says so.
func TestLlamaCPPStoresAnFP8CacheAsQ8_0(t *testing.T) {
	r := reg(t, []registry.Device{h100(0)})
	fp8 := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","context_length":8192,"kv_cache_dtype":"fp8"}`, r))
	f16 := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","context_length":8192}`, r))
	require.True(t, fp8.Fits.Yes(), dump(t, fp8.Explanation))
	require.True(t, f16.Fits.Yes(), dump(t, f16.Explanation))
	require.Less(t, fp8.Memory.KVCacheBytes, f16.Memory.KVCacheBytes*3/4, "the plan sizes a one-byte cache")
	args := fp8.EngineArgs["llama.cpp"]
	assert.Equal(t, "q8_0", argValue(args, "--cache-type-k"), "%v", args)
	assert.Equal(t, "q8_0", argValue(args, "--cache-type-v"), "%v", args)
	assert.Contains(t, dump(t, fp8.Explanation), "llama.cpp has no fp8 KV cache: the command stores it as q8_0")

	// Like int8, fp8 is then a quantized V cache: refused with flash
	// attention off where llama.cpp is named.
	_, err := decode([]byte(`{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","flash_attention":false,"kv_cache_dtype":"fp8"}`))
	require.Error(t, err)
	assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err))
}

// llama.cpp takes bf16 as a cache type (kv_cache_types in common/arg.cpp of
// ggml-org/llama.cpp @ 34af94cd: f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl,
// q5_0, q5_1) and allocates f16 without a flag (its default). A llama.cpp
// plan with kv_cache_dtype bf16 printed no cache flag, so the command ran
// an f16 cache where the plan said bf16: the same size, another type. The
// command now passes bf16 on. bf16 is not a quantized ggml type
// (is_quantized false in ggml/src/ggml.c), so llama.cpp's "quantized V
// cache requires flash_attn" check (src/llama-context.cpp) does not apply:
// flash_attention false is accepted and keeps -fa off. fp16 is llama.cpp's
// default and needs no flag.
func TestLlamaCPPCommandCarriesABF16Cache(t *testing.T) {
	r := reg(t, []registry.Device{h100(0)})
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","context_length":8192,"kv_cache_dtype":"bf16"}`, r))
	f16 := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","context_length":8192,"kv_cache_dtype":"fp16"}`, r))
	require.True(t, a.Fits.Yes(), dump(t, a.Explanation))
	require.True(t, f16.Fits.Yes(), dump(t, f16.Explanation))
	assert.Equal(t, f16.Memory.KVCacheBytes, a.Memory.KVCacheBytes, "bf16 and f16 are both two bytes an element")
	args := a.EngineArgs["llama.cpp"]
	assert.Equal(t, "bf16", argValue(args, "--cache-type-k"), "%v", args)
	assert.Equal(t, "bf16", argValue(args, "--cache-type-v"), "%v", args)
	assert.NotContains(t, f16.EngineArgs["llama.cpp"], "--cache-type-k", "f16 is llama.cpp's default")

	body := `{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","context_length":8192,"kv_cache_dtype":"bf16","flash_attention":false}`
	_, err := decode([]byte(body))
	require.NoError(t, err, "a bf16 V cache is not quantized: llama.cpp holds it without flash attention")
	off := shard(t, request(t, body, r))
	args = off.EngineArgs["llama.cpp"]
	assert.Equal(t, "off", argValue(args, "-fa"), "%v", args)
	assert.Equal(t, "bf16", argValue(args, "--cache-type-v"), "%v", args)
}

// A llama.cpp plan with kv_cache_dtype int8 or fp8 runs llama-server with
// --cache-type-k q8_0 --cache-type-v q8_0 (llama.cpp has no other one-byte
// cache type), and llama.cpp stores q8_0 in ggml blocks of 34 bytes per 32
// values (block_q8_0: an fp16 scale and 32 int8, ggml/src/ggml-common.h).
// The plan sized those caches at one byte an element, 6 % less than the
// q8_0 cache its own command allocates, and so answered another memory and
// room than the same request naming q8_0, whose command is the same
// (Qwen3-32B on an H200 at 40960 tokens: KV cache 5.0 GiB and 15 sequences
// against 5.3 GiB and 14). They are now the same plan.
func TestLlamaCPPOneByteCacheIsSizedAsTheQ8_0ItRuns(t *testing.T) {
	// llama.cpp named on an H100, and llama.cpp as the default engine of
	// a Mac (no engine named).
	mac := gpu(registry.KindMetal, 0, "Apple M3 Pro", 38654705664, "")
	for _, c := range []struct {
		devs  []registry.Device
		field string
	}{{[]registry.Device{h100(0)}, `"engine":"llama.cpp",`}, {[]registry.Device{mac}, ``}} {
		r := reg(t, c.devs)
		q8 := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},`+c.field+`"context_length":8192,"kv_cache_dtype":"q8_0"}`, r))
		require.True(t, q8.Fits.Yes(), dump(t, q8.Explanation))
		for _, kv := range []string{"int8", "fp8"} {
			a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},`+c.field+`"context_length":8192,"kv_cache_dtype":"`+kv+`"}`, r))
			require.True(t, a.Fits.Yes(), dump(t, a.Explanation))
			require.Contains(t, a.EngineArgs, "llama.cpp", "%s %s", c.field, kv)
			assert.Equal(t, "q8_0", argValue(a.EngineArgs["llama.cpp"], "--cache-type-k"), "%s %s", c.field, kv)
			assert.Equal(t, q8.Memory.KVCacheBytes, a.Memory.KVCacheBytes, "%s %s: sized as the q8_0 cache its command allocates", c.field, kv)
			assert.Equal(t, q8.MaxContextLength, a.MaxContextLength, "%s %s", c.field, kv)
			assert.Equal(t, q8.MaxBatchSize, a.MaxBatchSize, "%s %s", c.field, kv)
		}
	}
}

// A 16-bit KV cache type asked of vLLM (kv_cache_dtype bf16 or fp16) prints
// no --kv-cache-dtype: vLLM's auto caches in the model's dtype, and its
// explicit "bfloat16"/"float16" values are not a conversion: the cache
// update copies the model dtype's bits into a cache of the other name, so an
// fp16 model with --kv-cache-dtype bfloat16 answers "Parislocklock..."
// (https://github.com/vllm-project/vllm/pull/54338), and vLLM's CacheConfig
// documents bfloat16 as the override of DeepSeek-V3.2's fp8 default,
// "an invalid option for models that do not default to fp8"
// (vllm/config/cache.py at vllm-project/vllm 002f10e0cfa1373a19a0d2756598a34b700d20e5).
// The plan must then be what vLLM allocates and say so: the model's type
// where it differs from the one asked (an fp16 plan: the same 2 bytes), and
// 4-byte values beside fp32 weights, where a bf16 plan was sized at half
// the cache vLLM allocates.
func TestVLLMSixteenBitCacheIsTheModels(t *testing.T) {
	r := reg(t, []registry.Device{h100(0)})
	plan := func(quant, kv string) *ShardingAnswer {
		body := `{"model":{"name":"Llama-3.1-8B"},"engine":"vllm","context_length":8192,"quant":"` + quant + `"`
		if kv != "" {
			body += `,"kv_cache_dtype":"` + kv + `"`
		}
		a := shard(t, request(t, body+`}`, r))
		require.True(t, a.Fits.Yes(), dump(t, a.Explanation))
		return a
	}
	// bf16 weights and a bf16 cache: auto is bfloat16; nothing to say.
	a := plan("bf16", "bf16")
	assert.Equal(t, "bfloat16", argValue(a.EngineArgs["vllm"], "--dtype"))
	assert.NotContains(t, a.EngineArgs["vllm"], "--kv-cache-dtype")
	assert.NotContains(t, strings.Join(a.Explanation, "\n"), "cache is the model's")

	// fp16 weights, bf16 asked: the cache is float16, and the explanation
	// says so, with why the flag is not printed.
	a = plan("fp16", "bf16")
	assert.Equal(t, "float16", argValue(a.EngineArgs["vllm"], "--dtype"))
	assert.NotContains(t, a.EngineArgs["vllm"], "--kv-cache-dtype")
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "vLLM: the KV cache is the model's float16 (--kv-cache-dtype auto), not the bf16 asked: the same 2 bytes a value", dump(t, a.Explanation))
	assert.Equal(t, plan("fp16", "").Memory.KVCacheBytes, a.Memory.KVCacheBytes)

	// int4 weights: the activations' 16-bit type is the checkpoint's.
	a = plan("int4", "fp16")
	assert.NotContains(t, a.EngineArgs["vllm"], "--kv-cache-dtype")
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "vLLM: the KV cache is the model's 16-bit type (--kv-cache-dtype auto), fp16 only if the checkpoint's is", dump(t, a.Explanation))

	// fp32 weights: vLLM's cache is 4 bytes a value whatever 16-bit type
	// was asked, and the plan counts that.
	a = plan("fp32", "bf16")
	assert.NotContains(t, a.EngineArgs["vllm"], "--kv-cache-dtype")
	assert.Equal(t, plan("fp32", "").Memory.KVCacheBytes, a.Memory.KVCacheBytes)
	assert.Equal(t, 2*plan("fp16", "").Memory.KVCacheBytes, a.Memory.KVCacheBytes)
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "vLLM: the KV cache is the model's float32 (--kv-cache-dtype auto), not the bf16 asked: 4 bytes a value, which this plan counts", dump(t, a.Explanation))
}

// SGLang's --kv-cache-dtype takes "bf16" (choices auto, fp8_e5m2, fp8_e4m3,
// bf16, bfloat16, fp4_e2m1; "bf16" or "bfloat16" for BF16 KV cache:
// python/sglang/srt/server_args.py of sgl-project/sglang), so a plan with a
// bf16 cache carries it; it has no float16 value, so an fp16 cache is auto,
// the model's type, which the plan says where --dtype does not pin it.
func TestSGLangBF16CacheIsCarried(t *testing.T) {
	r := reg(t, []registry.Device{h100(0)})
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"sglang","context_length":8192,"quant":"fp16","kv_cache_dtype":"bf16"}`, r))
	require.True(t, a.Fits.Yes(), dump(t, a.Explanation))
	assert.Equal(t, "bf16", argValue(a.EngineArgs["sglang"], "--kv-cache-dtype"))

	a = shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"sglang","context_length":8192,"quant":"fp16","kv_cache_dtype":"fp16"}`, r))
	assert.NotContains(t, a.EngineArgs["sglang"], "--kv-cache-dtype")
	assert.NotContains(t, strings.Join(a.Explanation, "\n"), "cache is the model's")

	a = shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"sglang","context_length":8192,"quant":"bf16","kv_cache_dtype":"fp16"}`, r))
	assert.NotContains(t, a.EngineArgs["sglang"], "--kv-cache-dtype")
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "SGLang: the KV cache is the model's bfloat16 (--kv-cache-dtype auto; SGLang has no float16 value), not the fp16 asked: the same 2 bytes a value", dump(t, a.Explanation))

	// fp32 weights: auto is float32 (configure_kv_cache_dtype sets
	// kv_cache_dtype to the model's dtype, and the pool's cell is
	// element_size(kv_cache_dtype): sgl-project/sglang
	// python/sglang/srt/model_executor/model_runner.py @ 0005834c,
	// model_runner_kv_cache_mixin.py @ 001ccef0), so SGLang's plan counts 4
	// bytes a value, with no type asked as with fp16 asked; a bf16 cache
	// asked is --kv-cache-dtype bf16, 2 bytes.
	sg := func(quant, kv string) *ShardingAnswer {
		body := `{"model":{"name":"Llama-3.1-8B"},"engine":"sglang","context_length":8192,"quant":"` + quant + `"`
		if kv != "" {
			body += `,"kv_cache_dtype":"` + kv + `"`
		}
		a := shard(t, request(t, body+`}`, r))
		require.True(t, a.Fits.Yes(), dump(t, a.Explanation))
		return a
	}
	a = sg("fp32", "fp16")
	assert.NotContains(t, a.EngineArgs["sglang"], "--kv-cache-dtype")
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "SGLang: the KV cache is the model's float32 (--kv-cache-dtype auto; SGLang has no float16 value), not the fp16 asked: 4 bytes a value, which this plan counts", dump(t, a.Explanation))
	half := sg("fp16", "").Memory.KVCacheBytes
	assert.Equal(t, 2*half, a.Memory.KVCacheBytes)
	assert.Equal(t, 2*half, sg("fp32", "").Memory.KVCacheBytes)
	b := sg("fp32", "bf16")
	assert.Equal(t, "bf16", argValue(b.EngineArgs["sglang"], "--kv-cache-dtype"))
	assert.Equal(t, half, b.Memory.KVCacheBytes)
}

// vLLM's CacheConfig.cache_dtype documents DeepSeek-V3.2 as defaulting to
// fp8 (vllm/config/cache.py at vllm-project/vllm 002f10e0), but its code
// turns only an fp8 type asked into fp8_ds_mla and bfloat16 into auto
// (DeepseekV32ForCausalLM.verify_and_update_config,
// vllm/model_executor/models/config.py at 1936cf38); auto became fp8_ds_mla
// on main with PR 25988 (2025-09-30) and stopped with PR 27121
// (2025-10-17), and no stored source pins the release that carried it. So
// a plan with no cache type keeps vLLM's 16-bit auto cache and says so; one
// asking fp8 gets fp8_ds_mla with no such line.
func TestVLLMDeepSeekV32CacheDefaultIsNamed(t *testing.T) {
	const ctx = 32768
	plan := func(kv string) *ShardingAnswer {
		body := `{"model":{"name":"DeepSeek-V3.2"},"engine":"vllm","quant":"int4","tensor_parallel_size":8,"context_length":` + itoa(ctx)
		if kv != "" {
			body += `,"kv_cache_dtype":"` + kv + `"`
		}
		a := shard(t, request(t, body+`}`, nvlinked(8)))
		require.True(t, a.Fits.Yes(), dump(t, a.Explanation))
		return a
	}
	a := plan("")
	// The 16-bit latent and the indexer keys, as before.
	assert.InEpsilon(t, float64(61*((512+64)*2+132)*ctx), float64(a.Memory.KVCacheBytes/8), 0.01)
	assert.NotContains(t, a.EngineArgs["vllm"], "--kv-cache-dtype")
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "vLLM: DeepSeek-V3.2's KV cache under --kv-cache-dtype auto is counted in the model's 16-bit type", dump(t, a.Explanation))
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "PR 25988", dump(t, a.Explanation))

	a = plan("fp8")
	assert.Equal(t, "fp8", argValue(a.EngineArgs["vllm"], "--kv-cache-dtype"))
	assert.NotContains(t, strings.Join(a.Explanation, "\n"), "DeepSeek-V3.2's KV cache under --kv-cache-dtype auto")

	// A model without the rule gets no such line.
	b := shard(t, request(t, `{"model":{"name":"DeepSeek-V3"},"engine":"vllm","quant":"int4","tensor_parallel_size":8,"context_length":8192}`, nvlinked(8)))
	assert.NotContains(t, strings.Join(b.Explanation, "\n"), "KV cache under --kv-cache-dtype auto is counted")
}
