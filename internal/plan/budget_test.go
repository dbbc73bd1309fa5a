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
	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// argValue is the value after flag in args, "" when absent.
func argValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

func nvlinked(n int) *registry.Registry {
	var devs []registry.Device
	for i := 0; i < n; i++ {
		devs = append(devs, h100(i))
	}
	r := registry.New()
	r.Devices = devs
	r.SystemIO.Interconnects = []registry.Interconnect{link(registry.LinkNVSwitch, 900, ids("cuda", n)...)}
	return r
}

// Without an engine a CUDA plan is made for vLLM on vLLM's budget: every
// shard within 0.9 of its GPU's total memory, the budget in the answer,
// and only vLLM's flags (issue 12 item 1).
func TestNoEngineCUDAPlanIsVLLMWithinItsBudget(t *testing.T) {
	r := nvlinked(8)
	require.NoError(t, r.Validate())
	a := shard(t, request(t, `{"model":{"name":"Llama-3.3-70B-Instruct"}}`, r))
	require.True(t, a.Fits.Yes(), a.Explanation)
	require.NotNil(t, a.Budget)
	assert.Equal(t, engineVLLM, a.Budget.Engine)
	assert.True(t, a.Budget.EngineDefault)
	assert.Equal(t, 0.9, a.Budget.MemoryFraction)
	assert.Positive(t, a.Budget.EngineReservedBytes)
	assert.Equal(t, []string{engineVLLM}, mapKeys(a.EngineArgs), "one engine's flags, the one the budget is for")
	assert.Equal(t, "0.9", argValue(a.EngineArgs[engineVLLM], "--gpu-memory-utilization"))
	for _, s := range a.Shards {
		assert.LessOrEqual(t, s.MemoryAvailableBytes, h100Budget(0.9))
		assert.LessOrEqual(t, s.MemoryBytes, s.MemoryAvailableBytes)
	}
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "budget: no engine named: vllm")
}

// max_batch_size and max_context_length are computed on the budget of the
// args beside them: the plan at max_batch_size still fits within vLLM's 0.9
// on the same devices, and one more sequence does not.
func TestMaximaOnTheSameBudgetAsTheArgs(t *testing.T) {
	r := nvlinked(2)
	require.NoError(t, r.Validate())
	a := shard(t, request(t, `{"model":{"name":"Llama-3.3-70B-Instruct"},"context_length":32768,"quant":"fp8"}`, r))
	require.True(t, a.Fits.Yes(), a.Explanation)
	require.Equal(t, 2, a.TPSize)
	require.Greater(t, a.MaxBatchSize, 1)
	at := func(batch int) *ShardingAnswer {
		body := `{"model":{"name":"Llama-3.3-70B-Instruct"},"context_length":32768,"quant":"fp8","tensor_parallel_size":2,"batch_size":` + itoa(batch) + `}`
		return shard(t, request(t, body, r))
	}
	top := at(a.MaxBatchSize)
	require.True(t, top.Fits.Yes(), top.Explanation)
	assert.Equal(t, "0.9", argValue(top.EngineArgs[engineVLLM], "--gpu-memory-utilization"))
	for _, s := range top.Shards {
		assert.LessOrEqual(t, s.MemoryBytes, h100Budget(0.9), "the largest batch fits vLLM's 0.9")
	}
	// vLLM serves the batch from one paged pool: one more sequence than
	// fit at once still plans (one full-length sequence must fit), with
	// the same maximum, and the explanation says the rest wait.
	next := at(a.MaxBatchSize + 1)
	require.True(t, next.Fits.Yes(), next.Explanation)
	assert.Equal(t, a.MaxBatchSize, next.MaxBatchSize, "the pool holds as many full-length sequences as before")
	assert.Contains(t, strings.Join(next.Explanation, "\n"), "which holds "+counted(a.MaxBatchSize, "sequence")+" of 32768 tokens at once")
}

// An explicit engine gets its own budget: llama.cpp keeps its --fit margin
// free on each GPU and has no --gpu-memory-utilization.
func TestLlamaCPPBudgetKeepsFitMargin(t *testing.T) {
	r := nvlinked(1)
	require.NoError(t, r.Validate())
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp"}`, r))
	require.True(t, a.Fits.Yes(), a.Explanation)
	require.NotNil(t, a.Budget)
	assert.Equal(t, engineLlamaCPP, a.Budget.Engine)
	assert.False(t, a.Budget.EngineDefault)
	assert.Equal(t, int64(llamaFitMarginBytes), a.Budget.MarginBytes)
	// --fit keeps its margin free of its buffers beyond the CUDA context it
	// measured free memory after; the rest of the overhead comes out of the
	// margin (engine.Memory.FitOverheadBytes).
	credit := int64(calibration.LlamaCPPCUDAOverheadBytes - calibration.LlamaCPPCUDAFitOverheadBytes)
	assert.Equal(t, int64(81559<<20)-llamaFitMarginBytes+credit, a.Shards[0].MemoryAvailableBytes)
	assert.Equal(t, []string{engineLlamaCPP}, mapKeys(a.EngineArgs))
}

// A Mac is planned for llama.cpp within the GPU working-set cap
// (memory_usable_bytes), not its whole unified memory: on a 36 GB Mac
// (cap 27 GiB, 3/4 of RAM as llama.cpp reports recommendedMaxWorkingSetSize
// above 32 GB) Qwen2.5-32B int8 does not fit (issue 12 item 1).
func TestMetalIsBudgetedForLlamaCPPWithinTheWorkingSetCap(t *testing.T) {
	d := registry.Device{ID: "metal:0", Kind: registry.KindMetal, Family: registry.KindMetal.Family(), Name: "Apple M3 Max",
		Vendor: "apple", Available: true, MemoryBytes: 36 << 30, MemoryUsableBytes: 27 << 30, MemoryShared: true}
	r := reg(t, []registry.Device{d})
	a := shard(t, request(t, `{"model":{"name":"Qwen2.5-32B"},"quant":"int8"}`, r))
	assert.False(t, a.Fits.Yes(), "33.9 GiB of int8 weights do not fit a 27 GiB working set")
	a = shard(t, request(t, `{"model":{"name":"Qwen2.5-32B"}}`, r))
	require.True(t, a.Fits.Yes(), a.Explanation)
	require.NotNil(t, a.Budget)
	assert.Equal(t, engineLlamaCPP, a.Budget.Engine)
	assert.True(t, a.Budget.EngineDefault)
	assert.Equal(t, int64(27<<30)-llamaFitMarginBytes, a.Shards[0].MemoryAvailableBytes)
	assert.Equal(t, []string{engineLlamaCPP}, mapKeys(a.EngineArgs), "vLLM does not run on Metal")
}

// memory_fraction overrides the engine's default and is echoed into vLLM's
// flags; outside (0, 1] it is invalid_argument.
func TestMemoryFraction(t *testing.T) {
	r := nvlinked(2)
	require.NoError(t, r.Validate())
	a := shard(t, request(t, `{"model":{"name":"Llama-3.3-70B-Instruct"},"memory_fraction":0.95}`, r))
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Equal(t, 0.95, a.Budget.MemoryFraction)
	assert.Equal(t, "0.95", argValue(a.EngineArgs[engineVLLM], "--gpu-memory-utilization"))
	for _, s := range a.Shards {
		assert.Equal(t, h100Budget(0.95), s.MemoryAvailableBytes)
	}
	for _, bad := range []string{`0`, `-0.5`, `1.01`, `"0.9"`, `null`} {
		body := `{"model":{"params_b":7},"memory_fraction":` + bad + `}`
		_, err := decode([]byte(body))
		if bad == `null` {
			assert.NoError(t, err, "null is absent")
			continue
		}
		require.Error(t, err, bad)
		assert.Contains(t, []string{errs.InvalidArgument, errs.InvalidJSON}, errs.CodeOf(err), bad)
	}
}

// tensor_parallel_size forces the degree; one that does not divide the
// heads, or that llama.cpp cannot run, is invalid_argument; one the devices
// cannot hold is a plan that does not fit, with the reason (issue 12 item 6).
func TestTensorParallelSize(t *testing.T) {
	r := nvlinked(8)
	require.NoError(t, r.Validate())
	a := shard(t, request(t, `{"model":{"name":"Llama-3.3-70B-Instruct"},"tensor_parallel_size":4}`, r))
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Equal(t, 4, a.TPSize)
	assert.Len(t, a.Shards, 4)
	assert.Equal(t, "4", argValue(a.EngineArgs[engineVLLM], "--tensor-parallel-size"))

	a = shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"tensor_parallel_size":1}`, r))
	require.True(t, a.Fits.Yes())
	assert.Equal(t, 1, a.TPSize)

	a = shard(t, request(t, `{"model":{"name":"Llama-3.3-70B-Instruct"},"tensor_parallel_size":16,"quant":"bf16"}`, r))
	assert.False(t, a.Fits.Yes())
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "tensor_parallel_size 16")

	for _, body := range []string{
		`{"model":{"name":"Llama-3.3-70B-Instruct"},"tensor_parallel_size":3}`, // 64 heads
		`{"model":{"name":"Llama-3.3-70B-Instruct"},"tensor_parallel_size":0}`,
		`{"model":{"name":"Llama-3.3-70B-Instruct"},"tensor_parallel_size":2,"engine":"llama.cpp"}`,
	} {
		_, err := decode([]byte(body))
		require.Error(t, err, body)
		assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err), body)
	}
}

// Named devices a plan leaves unused are listed and explained: 70B on four
// named H100s plans tensor parallel 2 (issue 12 item 6).
func TestIdleNamedDevicesAreSaid(t *testing.T) {
	r := nvlinked(8)
	require.NoError(t, r.Validate())
	a := shard(t, request(t, `{"model":{"name":"Llama-3.3-70B-Instruct"},"devices":["cuda:0","cuda:1","cuda:2","cuda:3"]}`, r))
	require.True(t, a.Fits.Yes(), a.Explanation)
	require.Equal(t, 2, a.TPSize)
	assert.Equal(t, []string{"cuda:2", "cuda:3"}, a.IdleDevices)
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "idle: cuda:2, cuda:3 of the 4 named")
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "tensor_parallel_size 4")

	a = shard(t, request(t, `{"model":{"name":"Llama-3.3-70B-Instruct"},"devices":["cuda:0","cuda:1","cuda:2","cuda:3"],"tensor_parallel_size":4}`, r))
	require.True(t, a.Fits.Yes())
	assert.Empty(t, a.IdleDevices, "tensor_parallel_size 4 uses them all")
}

func mapKeys(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// h100Budget is fraction f of an H100's total memory, as the planner
// computes it.
func h100Budget(f float64) int64 {
	total := float64(int64(81559 << 20))
	return int64(total * f)
}

// vLLM refuses to start when less than --gpu-memory-utilization of the
// GPU's total memory is free; the plan says so and which fraction would
// start.
func TestVLLMStartCheckOnABusyGPU(t *testing.T) {
	d := h100(0)
	free := int64(40 << 30)
	d.MemoryFreeBytes = &free
	r := reg(t, []registry.Device{d})
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"}}`, r))
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Equal(t, free, a.Shards[0].MemoryAvailableBytes, "the plan fits the free memory")
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "cuda:0 has 40.0 GiB free of 79.6 GiB; free those devices, or ask memory_fraction 0.5")
}

// A pool planned for llama.cpp by default follows llama.cpp's KV cache
// rules too (its sliding-window cache: window + micro-batch padded to 256),
// as when engine llama.cpp is asked: the budget and the memory it holds come
// from the same engine.
func TestDefaultLlamaCPPPoolUsesLlamaCPPKVRules(t *testing.T) {
	r := reg(t, []registry.Device{host(256 << 30)})
	asked := shard(t, request(t, `{"model":{"name":"gpt-oss-20b"},"quant":"bf16","context_length":8192}`, r))
	named := shard(t, request(t, `{"model":{"name":"gpt-oss-20b"},"quant":"bf16","context_length":8192,"engine":"llama.cpp"}`, r))
	require.True(t, asked.Fits.Yes())
	require.True(t, named.Fits.Yes())
	assert.Equal(t, engineLlamaCPP, asked.Budget.Engine)
	assert.Equal(t, named.Memory, asked.Memory)
	assert.Equal(t, named.MaxBatchSize, asked.MaxBatchSize)
}

// Batch is concurrency for vLLM (issue 21 item 3): 8 sequences of 128k
// tokens of Llama-3.1-8B with an fp8 KV cache on a 24 GB GPU plan (one
// sequence's 8 GiB of cache fits beside the weights), with --max-num-seqs 8;
// the same request on llama.cpp, which reserves every sequence's cache, does
// not fit, and its refusal names the KV cache as the larger need.
func TestPagedBatchIsConcurrency(t *testing.T) {
	r := reg(t, []registry.Device{gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 4090", 24*gibBytes, "8.9")})
	body := `{"model":{"name":"Llama-3.1-8B"},"kv_cache_dtype":"fp8","context_length":131072,"batch_size":8%s}`
	a := shard(t, request(t, fmt.Sprintf(body, ""), r))
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Equal(t, "8", argValue(a.EngineArgs[engineVLLM], "--max-num-seqs"))
	assert.Equal(t, "131072", argValue(a.EngineArgs[engineVLLM], "--max-model-len"))
	assert.GreaterOrEqual(t, a.MaxBatchSize, 1)
	assert.Less(t, a.MaxBatchSize, 8, "eight 128k sequences do not all fit at once")

	l := shard(t, request(t, fmt.Sprintf(body, `,"engine":"llama.cpp"`), r))
	require.False(t, l.Fits.Yes())
	assert.Contains(t, l.Refusal.Text, "(KV cache ", "the refusal names the KV cache first")
}

// A size alone gets a shape TP 2, 4 and 8 can split (issue 21 item 6):
// {"params_b": 70} used to have 71 heads, and every TP size above 1 was
// refused.
func TestParamsOnlyTakesTensorParallel(t *testing.T) {
	r := nvlinked(8)
	for _, tp := range []int{2, 4, 8} {
		a := shard(t, request(t, `{"model":{"params_b":70},"tensor_parallel_size":`+itoa(tp)+`}`, r))
		require.True(t, a.Fits.Yes(), "tp %d: %v", tp, a.Explanation)
		assert.Equal(t, tp, a.TPSize)
		assert.Equal(t, itoa(tp), argValue(a.EngineArgs[engineVLLM], "--tensor-parallel-size"))
	}
}

// engine_expect (issue 21 item 1): what vLLM will print at start-up for a
// plan, by vLLM's own accounting for the release. Llama-3.1-8B bf16 on one
// H100 at 8k, no engine_version: the answer says it is for 0.21.0
// (engine.VLLMDefaultVersion); the KV memory is 0.9 of the GPU's total less
// the weights, the profile's activation peak (the sampler warm-up on 1024
// requests of a 128256-token vocabulary, the larger on an H100 at 8192
// batched tokens), the memory outside torch and the CUDA graphs; the tokens
// are that memory over 128 KiB a token (32 layers x 8 KV heads x 128 x 2 x 2
// B) in whole 16-token blocks; the concurrency is tokens over the context.
// llama.cpp, which reserves its slots' cache itself, gets none.
func TestEngineExpectOfAVLLMPlan(t *testing.T) {
	r := nvlinked(1)
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"bf16","context_length":8192}`, r))
	require.True(t, a.Fits.Yes(), a.Explanation)
	x, ok := a.EngineExpect[engineVLLM]
	require.True(t, ok, "a vLLM plan carries engine_expect.vllm")
	assert.Equal(t, engine.VLLMDefaultVersion, x.EngineVersion)
	assert.Equal(t, 8192, x.MaxNumBatchedTokens)
	assert.Equal(t, 1024, x.MaxNumSeqs)
	assert.InDelta(t, float64(a.Memory.WeightsBytes)/float64(gibBytes), x.ModelLoadingGiB, 0.01)
	sampler := 1024 * 128256 * calibration.VLLMSamplerBytesPerLogit
	assert.InDelta(t, sampler/float64(gibBytes), x.PeakActivationGiB, 0.01)
	assert.InDelta(t, float64(calibration.VLLMNonTorchBytes)/float64(gibBytes), x.NonTorchGiB, 0.01)
	assert.InDelta(t, float64(calibration.VLLMCUDAGraphBytes)/float64(gibBytes), x.CUDAGraphGiB, 0.01)
	total := r.Devices[0].MemoryBytes
	kv := int64(float64(total)*0.9) - a.Memory.WeightsBytes - int64(sampler) - calibration.VLLMNonTorchBytes - calibration.VLLMCUDAGraphBytes
	assert.InDelta(t, float64(kv)/float64(gibBytes), x.KVCacheGiB, 0.01)
	const perToken = 32 * 8 * 128 * 2 * 2
	assert.InDelta(t, kv/perToken/16*16, x.KVCacheTokens, 16)
	assert.Zero(t, x.KVCacheTokens%16, "whole blocks")
	assert.InDelta(t, float64(x.KVCacheTokens)/8192, x.MaxConcurrency, 0.01)
	assert.Equal(t, x.MaxConcurrency >= 1, a.MaxBatchSize >= 1)

	l := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"bf16","context_length":8192,"engine":"llama.cpp"}`, r))
	require.True(t, l.Fits.Yes(), l.Explanation)
	assert.Empty(t, l.EngineExpect)
}

// engine_version (issue 21 item 1): vLLM's accounting by release. On the
// same plan 0.20.0 charges no CUDA graphs (they were captured after the KV
// cache was sized, outside --gpu-memory-utilization), so its pool is larger
// by the graphs' estimate; 0.6.4 (V0) profiles the whole --max-model-len
// with 256 sequences and no sampler warm-up; a plan's --max-num-seqs is the
// sampler's request count. A malformed version, or one for another engine,
// is refused.
func TestEngineExpectByVLLMVersion(t *testing.T) {
	r := nvlinked(1)
	expect := func(extra string) EngineExpect {
		t.Helper()
		a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"bf16","context_length":8192`+extra+`}`, r))
		require.True(t, a.Fits.Yes(), a.Explanation)
		return a.EngineExpect[engineVLLM]
	}
	now, before := expect(`,"engine_version":"0.21.0"`), expect(`,"engine_version":"v0.20.2"`)
	assert.Equal(t, "0.20.2", before.EngineVersion)
	assert.Zero(t, before.CUDAGraphGiB)
	assert.InDelta(t, now.KVCacheGiB+float64(calibration.VLLMCUDAGraphBytes)/float64(gibBytes), before.KVCacheGiB, 0.011)

	v0 := expect(`,"engine_version":"0.6.4"`)
	assert.Equal(t, 8192, v0.MaxNumBatchedTokens)
	assert.Equal(t, 256, v0.MaxNumSeqs)
	forward := 8192 * (8*4096 + 6*14336)
	assert.InDelta(t, float64(forward)/float64(gibBytes), v0.PeakActivationGiB, 0.01)

	b8 := expect(`,"batch_size":8`)
	assert.Equal(t, 8, b8.MaxNumSeqs, "the plan's --max-num-seqs")
	assert.Less(t, b8.PeakActivationGiB, now.PeakActivationGiB)

	for _, body := range []string{
		`{"model":{"name":"Llama-3.1-8B"},"engine_version":"latest"}`,
		`{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","engine_version":"0.11.0"}`,
	} {
		_, err := decode([]byte(body))
		assert.Error(t, err, body)
	}
	_, err := decode([]byte(`{"model":{"name":"Llama-3.1-8B"},"engine":"llama.cpp","engine_version":"0.11.0"}`))
	assert.ErrorContains(t, err, "engine_version is read for engine vllm only, not llama.cpp", "the engines that read it (engine.Versioned) named")
}

// SGLang, named (issue 21 item 5): Llama-3.1-8B at fp8 with an fp8 KV cache at
// 128k and 8 requests on a 24 GiB GPU plans within SGLang's own
// --mem-fraction-static for that GPU (0.833: 24576 MiB less its 4096 MiB
// reserve of 512 + 1.5 x 2048 + 128 + 2 x 24 + 8 x 42 prefill graphs),
// emits its flags, and says what it will log as max_total_num_tokens:
// the fraction of the memory free once its CUDA context exists, less the
// weights, over one token's cache (32 layers x 8 KV heads x 128 x 2 x 1 B).
// At TP 2 the fraction is SGLang's for two ranks (128 MiB more reserve).
func TestSGLangPlan(t *testing.T) {
	r := reg(t, []registry.Device{gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 4090", 24*gibBytes, "8.9")})
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"sglang","kv_cache_dtype":"fp8","context_length":131072,"batch_size":8,"quant":"fp8"}`, r))
	require.True(t, a.Fits.Yes(), a.Explanation)
	require.NotNil(t, a.Budget)
	assert.Equal(t, "sglang", a.Budget.Engine)
	assert.Equal(t, "fp8", a.Quant)
	assert.Equal(t, 0.833, a.Budget.MemoryFraction)
	args := a.EngineArgs["sglang"]
	assert.Equal(t, "0.833", argValue(args, "--mem-fraction-static"))
	assert.Equal(t, "131072", argValue(args, "--context-length"))
	assert.Equal(t, "8", argValue(args, "--max-running-requests"))
	assert.Equal(t, "fp8_e5m2", argValue(args, "--kv-cache-dtype"))
	assert.Empty(t, a.EngineArgs[engineVLLM])
	x := a.EngineExpect["sglang"]
	free := 24*gibBytes - a.Memory.OverheadBytes
	pool := int64(0.833*float64(free)) - a.Memory.WeightsBytes
	const perToken = 32 * 8 * 128 * 2 * 1
	assert.Equal(t, pool/perToken, x.MaxTotalNumTokens)
	assert.Equal(t, x.MaxTotalNumTokens, x.KVCacheTokens)

	tp := shard(t, request(t, `{"model":{"name":"Llama-3.3-70B-Instruct"},"engine":"sglang","quant":"fp8"}`, nvlinked(2)))
	require.True(t, tp.Fits.Yes(), tp.Explanation)
	assert.Equal(t, "2", argValue(tp.EngineArgs["sglang"], "--tp"))
	// H100 (81559 MiB) at TP 2: 512 + 1.5 x 8192 + 2 x 128 + 2 x 256 + 8 x 58 = 14032 MiB.
	assert.Equal(t, "0.828", argValue(tp.EngineArgs["sglang"], "--mem-fraction-static"))
	assert.Equal(t, 0.828, tp.Budget.MemoryFraction)
}

// SGLang with an MLA model (issue 21 item 2): DeepSeek-V3 at fp8 on 8 H200s
// at TP 8 starts with SGLang's MLA default (0.886: 143771 MiB less 512 +
// 1.5 x 8192 + 1024 + 2 x 512 + 1536 for MLA prefill graphs), and its pool
// holds a token's whole latent on every rank: (512 + 64) x 61 layers x 2
// bytes, not an eighth of it.
func TestSGLangMLAPool(t *testing.T) {
	var devs []registry.Device
	for i := 0; i < 8; i++ {
		d := gpu(registry.KindCUDA, i, "NVIDIA H200", 143771<<20, "9.0")
		d.Vendor = "nvidia"
		devs = append(devs, d)
	}
	r := reg(t, devs, link(registry.LinkNVSwitch, 900, ids("cuda", 8)...))
	a := shard(t, request(t, `{"model":{"name":"DeepSeek-V3"},"engine":"sglang","quant":"fp8","tensor_parallel_size":8,"context_length":32768}`, r))
	require.True(t, a.Fits.Yes(), a.Explanation)
	args := a.EngineArgs["sglang"]
	assert.Equal(t, "0.886", argValue(args, "--mem-fraction-static"))
	x := a.EngineExpect["sglang"]
	const cell = (512 + 64) * 61 * 2
	// a.Memory sums the 8 devices; SGLang's free memory is one rank's, less
	// its CUDA context and 2 GiB of NVLinked process groups.
	free := int64(143771<<20) - a.Memory.OverheadBytes/8 - 2<<30
	pool := int64(0.886*float64(free)) - int64(x.ModelLoadingGiB*float64(gibBytes))
	assert.InDelta(t, float64(pool/cell), float64(x.MaxTotalNumTokens), float64(x.MaxTotalNumTokens)*0.001,
		"the pool over a whole latent per token")
}

// A vLLM plan fits exactly when vLLM's own start-up accounting leaves one
// sequence of KV cache (a 70B at 16k on two H100s: vLLM charges each GPU
// about 4.8 GiB of activation peak, NCCL buffers and CUDA graphs, which
// the planner's generic estimate put under 1 GiB): the refusal names
// vLLM's charge; at 4k the plan fits and vLLM's pool holds the sequence.
func TestVLLMFitsAsVLLMStarts(t *testing.T) {
	r := nvlinked(2)
	at := func(ctx int) *ShardingAnswer {
		t.Helper()
		return shard(t, request(t, `{"model":{"name":"Llama-3.1-70B"},"quant":"bf16","engine":"vllm","tensor_parallel_size":2,"context_length":`+itoa(ctx)+`}`, r))
	}
	long := at(16384)
	require.False(t, long.Fits.Yes(), long.Explanation)
	require.NotNil(t, long.Refusal)
	assert.Contains(t, long.Refusal.Text, "vLLM 0.21.0's start-up charge")
	assert.Contains(t, long.Refusal.Text, "split 2 ways each device needs")

	short := at(4096)
	require.True(t, short.Fits.Yes(), short.Explanation)
	x := short.EngineExpect[engineVLLM]
	assert.Empty(t, x.Warning)
	assert.GreaterOrEqual(t, x.KVCacheTokens, int64(4096))
	// The answer's memory lines are vLLM's charge: two GPUs' peak
	// activation, and their non-torch memory and CUDA graphs.
	assert.InDelta(t, 2*x.PeakActivationGiB, float64(short.Memory.ActivationsBytes)/float64(gibBytes), 0.02)
	assert.InDelta(t, 2*(x.NonTorchGiB+x.CUDAGraphGiB), float64(short.Memory.OverheadBytes)/float64(gibBytes), 0.02)
	assert.Equal(t, short.Memory.ActivationsBytes/2+short.Memory.OverheadBytes/2, short.Budget.EngineReservedBytes)
	// The longest context is the longest vLLM starts with.
	assert.Less(t, short.MaxContextLength, 16384)
	edge := at(short.MaxContextLength)
	require.True(t, edge.Fits.Yes(), edge.Explanation)
	assert.Empty(t, edge.EngineExpect[engineVLLM].Warning)
	assert.False(t, at(short.MaxContextLength+1).Fits.Yes())
}

// The golden question plan-70b-vllm (a 70B by size at 32k on two NVLinked
// H100s, bf16) fitted on the planner's own estimate while vLLM's
// accounting left about 19k tokens; it no longer fits, and with no context
// asked the chosen context is one vLLM's pool holds.
func TestVLLM70BAt32kOnTwoH100(t *testing.T) {
	r := nvlinked(2)
	a := shard(t, request(t, `{"model":{"params_b":70},"engine":"vllm","quant":"bf16","context_length":32768}`, r))
	require.False(t, a.Fits.Yes(), a.Explanation)
	assert.Contains(t, a.Refusal.Text, "start-up charge")
	assert.Contains(t, a.Refusal.Text, "split 2 ways (the largest tensor-parallel group) each device needs")
	assert.Contains(t, a.Refusal.Text, "non-torch memory 2.1 GiB", "the TP-2 group's charge")

	c := shard(t, request(t, `{"model":{"params_b":70},"engine":"vllm","quant":"bf16"}`, r))
	require.True(t, c.Fits.Yes(), c.Explanation)
	x := c.EngineExpect[engineVLLM]
	ctx, err := strconv.Atoi(argValue(c.EngineArgs["vllm"], "--max-model-len"))
	require.NoError(t, err)
	assert.Less(t, ctx, 32768)
	assert.Empty(t, x.Warning)
	assert.GreaterOrEqual(t, x.KVCacheTokens, int64(ctx))
}

// An SGLang plan fits when SGLang's own pool holds one sequence: at TP 8
// SGLang's --mem-fraction-static (0.799 on H100s) is below the single-GPU
// share the plan's split is checked against, and its process groups take
// 2 GiB a rank first. Kimi-K2-Instruct at int4 over eight H100s splits
// within the share but leaves SGLang no pool: refused, saying so. A plan
// that fits holds its context, up to max_context_length and not past it.
func TestSGLangFitsItsOwnPool(t *testing.T) {
	k := shard(t, request(t, `{"model":{"name":"Kimi-K2-Instruct"},"engine":"sglang","quant":"int4","tensor_parallel_size":8,"context_length":32768}`, nvlinked(8)))
	require.False(t, k.Fits.Yes(), k.Explanation)
	assert.Contains(t, k.Refusal.Text, "SGLang's --mem-fraction-static 0.799 at TP 8 leaves each device -0.6 GiB of KV pool", "the figure docs/inference-servers.md quotes")
	assert.Contains(t, k.Refusal.Text, "fewer than one sequence of 32768")

	r := reg(t, []registry.Device{gpu(registry.KindCUDA, 0, "NVIDIA L4", 24*gibBytes, "8.9")})
	at := func(ctx string) *ShardingAnswer {
		t.Helper()
		return shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"sglang","quant":"bf16"`+ctx+`}`, r))
	}
	chosen := at("")
	require.True(t, chosen.Fits.Yes(), chosen.Explanation)
	ctx, err := strconv.Atoi(argValue(chosen.EngineArgs["sglang"], "--context-length"))
	require.NoError(t, err)
	require.Less(t, ctx, 131072, "the pool, not the model, limits the context")
	assert.GreaterOrEqual(t, chosen.EngineExpect["sglang"].MaxTotalNumTokens, int64(ctx))
	a := at(`,"context_length":4096`)
	require.True(t, a.Fits.Yes(), a.Explanation)
	edge := at(`,"context_length":` + itoa(a.MaxContextLength))
	require.True(t, edge.Fits.Yes(), edge.Explanation)
	assert.GreaterOrEqual(t, edge.EngineExpect["sglang"].MaxTotalNumTokens, int64(a.MaxContextLength))
	assert.False(t, at(`,"context_length":`+itoa(a.MaxContextLength+1)).Fits.Yes())
}

// budget.engine_reserved_bytes is what the engine holds on a device of the
// plan: on Gaudi, vLLM's charge is a share of the memory the device's
// weights leave free (engine.VLLMStartup.Charge), so it is the charge of
// the plan's shards. It was that of an empty stage holding only the token
// embedding: 9.8 GB per Gaudi 2 for Llama-3.3-70B at TP 8 where each
// shard is charged 6.5 GB (the answer's activations and overhead over 8),
// and 10.4 GB for Llama-3.1-405B at fp8, whose shards are charged 1.4 GB.
func TestEngineReservedIsWhatTheShardsAreCharged(t *testing.T) {
	var devs []registry.Device
	for i := range 8 {
		d := gpu(registry.KindGaudi, i, "Intel Gaudi 2", 96<<30, "")
		d.Vendor = "intel"
		devs = append(devs, d)
	}
	r := reg(t, devs, link(registry.LinkRoCE, 262.5, ids("gaudi", 8)...))
	for _, name := range []string{"Llama-3.3-70B-Instruct", "Llama-3.1-405B"} {
		a := shard(t, request(t, `{"model":{"name":"`+name+`"}}`, r))
		require.True(t, a.Fits.Yes(), a.Explanation)
		require.NotNil(t, a.Budget)
		require.Equal(t, "vllm", a.Budget.Engine)
		n := int64(len(a.Shards))
		require.Equal(t, int64(8), n, name)
		perDevice := (a.Memory.ActivationsBytes + a.Memory.OverheadBytes) / n
		assert.InDelta(t, perDevice, a.Budget.EngineReservedBytes, float64(n), "%s: the budget's reserve is each shard's", name)
	}
}
