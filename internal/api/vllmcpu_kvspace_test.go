package api

import (
	"context"
	"strconv"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A vLLM plan on the CPU alone names the KV cache space it sized
// (VLLM_CPU_KVCACHE_SPACE, whole GiB, rounded down), so that vLLM's pool is
// the plan's and not its own default (4 GiB in the releases read,
// internal/engine/vllmcpu.go): on the thinkpad-p16s-krackan fixture (a
// Ryzen with 86.1 GiB available), Llama-shaped 70B at int8 leaves 20.7
// GiB beside its weights and activations, so 20; the weights, that pool
// and the activations fit the host's available memory, and the pool holds
// the one full-context sequence vLLM checks at start-up.
func TestVLLMCPUPlanNamesKVCacheSpace(t *testing.T) {
	out := PlanSharding(context.Background(),
		[]byte(`{"model":{"params_b":70},"engine":"vllm","context_length":32768,`+detectSource("thinkpad-p16s-krackan")+`}`), NoEnv)
	require.Equal(t, "", errorCode(t, out), string(out))
	var p struct {
		Fits   bool `json:"fits"`
		Memory struct {
			Weights     int64 `json:"weights_bytes"`
			KV          int64 `json:"kv_cache_bytes"`
			Activations int64 `json:"activations_bytes"`
			Overhead    int64 `json:"overhead_bytes"`
		} `json:"memory"`
		Shards []struct {
			Available int64 `json:"memory_available_bytes"`
		} `json:"shards"`
		Env        map[string]map[string]string `json:"engine_env"`
		MaxContext int64                        `json:"max_context_length"`
		MaxBatch   int64                        `json:"max_batch_size"`
		Expect     map[string]vllmCPUExpect     `json:"engine_expect"`
	}
	require.NoError(t, json.Unmarshal(out, &p))
	require.True(t, p.Fits, string(out))
	require.Len(t, p.Shards, 1)
	g, err := strconv.ParseInt(p.Env["vllm"]["VLLM_CPU_KVCACHE_SPACE"], 10, 64)
	require.NoError(t, err, string(out))
	assert.Equal(t, int64(20), g)
	pool := g << 30
	assert.LessOrEqual(t, p.Memory.Weights+pool+p.Memory.Activations+p.Memory.Overhead, p.Shards[0].Available)
	assert.GreaterOrEqual(t, pool, p.Memory.KV, "the pool holds one sequence of the context")
	assert.Greater(t, p.Memory.Weights+pool+(1<<30)+p.Memory.Activations+p.Memory.Overhead, p.Shards[0].Available, "rounded down, not a GiB short")
	// The pool holds 74898 tokens of 280 KiB (the shape estimated from
	// 70B), 585 whole blocks of 128: 74880, the longest --max-model-len
	// vLLM starts with (a request holds whole blocks), and what
	// engine_expect says it prints.
	assert.Equal(t, int64(280<<10), p.Memory.KV/32768)
	assert.Equal(t, int64(74880), p.MaxContext)
	require.Contains(t, p.Expect, "vllm", string(out))
	assert.Equal(t, float64(20), p.Expect["vllm"].KVCacheGiB)
	assert.Equal(t, int64(74880), p.Expect["vllm"].KVCacheTokens)
	assert.Equal(t, 2.28, p.Expect["vllm"].MaxConcurrency, "20 GiB over one sequence of 32768 tokens (256 whole blocks) at 280 KiB a token, 8.75 GiB: 2.2857, rounded down")
}

// The room a vLLM CPU plan reports (max_context_length, max_batch_size) is
// what the pool it names holds, not the host's unrounded remainder: vLLM
// gets VLLM_CPU_KVCACHE_SPACE GiB and no more. Qwen2.5-32B (catalog
// shape, 256 KiB of KV cache per token in bf16) at bf16 on the
// thinkpad-p16s-krackan fixture leaves 25.2 GiB; the pool is 25 GiB,
// 102400 tokens, where the remainder would give 102818.
func TestVLLMCPURoomIsTheNamedPool(t *testing.T) {
	out := PlanSharding(context.Background(),
		[]byte(`{"model":{"name":"Qwen2.5-32B"},"engine":"vllm","context_length":32768,`+detectSource("thinkpad-p16s-krackan")+`}`), NoEnv)
	require.Equal(t, "", errorCode(t, out), string(out))
	var p struct {
		Fits   bool   `json:"fits"`
		Quant  string `json:"quant"`
		Memory struct {
			KV int64 `json:"kv_cache_bytes"`
		} `json:"memory"`
		Env        map[string]map[string]string `json:"engine_env"`
		MaxContext int64                        `json:"max_context_length"`
		MaxBatch   int64                        `json:"max_batch_size"`
	}
	require.NoError(t, json.Unmarshal(out, &p))
	require.True(t, p.Fits, string(out))
	require.Equal(t, "bf16", p.Quant)
	g, err := strconv.ParseInt(p.Env["vllm"]["VLLM_CPU_KVCACHE_SPACE"], 10, 64)
	require.NoError(t, err, string(out))
	assert.Equal(t, int64(25), g)
	perToken := p.Memory.KV / 32768
	assert.Equal(t, int64(256<<10), perToken)
	assert.Equal(t, (g<<30)/perToken, p.MaxContext, "the tokens 25 GiB hold")
	assert.Equal(t, (g<<30)/p.Memory.KV, p.MaxBatch)
}

// A context whose KV cache fits the host's remainder but not its whole
// GiB is refused for vLLM on the CPU, with the reason: Qwen2.5-32B in bf16
// at 102700 tokens (25.07 GiB of KV cache) on thinkpad-p16s-krackan leaves
// 25.1 GiB, which VLLM_CPU_KVCACHE_SPACE can name only as 25, so vLLM would
// refuse --max-model-len 102700; the plan that fits is 102400 tokens.
func TestVLLMCPURefusesAPoolShortOfOneSequence(t *testing.T) {
	plan := func(ctx string) []byte {
		out := PlanSharding(context.Background(),
			[]byte(`{"model":{"name":"Qwen2.5-32B"},"engine":"vllm","quant":"bf16","context_length":`+ctx+`,`+detectSource("thinkpad-p16s-krackan")+`}`), NoEnv)
		require.Equal(t, "", errorCode(t, out), string(out))
		return out
	}
	var p struct {
		Fits   bool `json:"fits"`
		Levels []struct {
			Reason string `json:"reason"`
		} `json:"levels"`
		Env map[string]map[string]string `json:"engine_env"`
	}
	require.NoError(t, json.Unmarshal(plan("102700"), &p))
	assert.False(t, p.Fits)
	require.NotEmpty(t, p.Levels)
	assert.Contains(t, p.Levels[0].Reason, "vLLM's CPU KV cache is VLLM_CPU_KVCACHE_SPACE in whole GiB: the 25.1 GiB left beside the weights and activations give 25 GiB, less than the KV cache's 25.1 GiB")
	p.Fits = false
	require.NoError(t, json.Unmarshal(plan("102400"), &p))
	assert.True(t, p.Fits)
	assert.Equal(t, "25", p.Env["vllm"]["VLLM_CPU_KVCACHE_SPACE"])
}

// cpuOnlyCluster is a cluster of n copies of the fixture's registry kept to
// its CPU device: n hosts planned on host memory alone; memory, where
// given, is each host's memory_bytes.
func cpuOnlyCluster(t *testing.T, name string, n int, memory ...int64) string {
	t.Helper()
	dir := fixture(name)
	out := Detect(context.Background(), []byte(`{"sysroot":"`+dir+`/root","path":"`+dir+`/bin","cache_ttl_ms":0}`), NoEnv)
	require.Equal(t, "", errorCode(t, out), string(out))
	var r map[string]any
	require.NoError(t, json.Unmarshal(out, &r))
	var cpus []any
	for _, d := range r["devices"].([]any) {
		if d.(map[string]any)["kind"] == "cpu" {
			cpus = append(cpus, d)
		}
	}
	r["devices"] = cpus
	nodes := make([]any, n)
	for i := range nodes {
		nodes[i] = r
		if i < len(memory) {
			b, err := json.Marshal(r)
			require.NoError(t, err)
			var node map[string]any
			require.NoError(t, json.Unmarshal(b, &node))
			node["devices"].([]any)[0].(map[string]any)["memory_bytes"] = memory[i]
			nodes[i] = node
		}
	}
	b, err := json.Marshal(nodes)
	require.NoError(t, err)
	return `"cluster":` + string(b)
}

// Every rank of a vLLM plan on the CPUs of several hosts sizes its KV pool
// from VLLM_CPU_KVCACHE_SPACE as the single-device plan does (each CPU
// worker's determine_available_memory returns that pool, and the engine
// takes the fewest blocks over the workers), so a pipeline-parallel or
// data-parallel plan over two thinkpad-p16s-krackan hosts (86.1 GiB
// available each) names the variable too: the whole GiB every host has
// left beside its shard, holding that shard's KV cache. It also states
// what vLLM will report (engine_expect): that pool, and the tokens it
// holds in whole blocks, at least one sequence of the context.
func TestVLLMCPUClusterNamesKVCacheSpace(t *testing.T) {
	for _, c := range []struct{ model, quant, strategy string }{
		{"Llama-3.3-70B-Instruct", "bf16", "pipeline_parallel"},
		{"Qwen2.5-32B", "bf16", "data_parallel"},
	} {
		t.Run(c.strategy, func(t *testing.T) {
			out := PlanSharding(context.Background(), []byte(`{"model":{"name":"`+c.model+`"},"engine":"vllm","quant":"`+c.quant+
				`","context_length":32768,`+cpuOnlyCluster(t, "thinkpad-p16s-krackan", 2)+`}`), NoEnv)
			require.Equal(t, "", errorCode(t, out), string(out))
			var p struct {
				Fits     bool   `json:"fits"`
				Strategy string `json:"strategy"`
				Memory   struct {
					KV int64 `json:"kv_cache_bytes"`
				} `json:"memory"`
				Shards []struct {
					Memory    int64 `json:"memory_bytes"`
					Available int64 `json:"memory_available_bytes"`
				} `json:"shards"`
				Env    map[string]map[string]string `json:"engine_env"`
				Expect map[string]vllmCPUExpect     `json:"engine_expect"`
			}
			require.NoError(t, json.Unmarshal(out, &p))
			require.True(t, p.Fits, string(out))
			require.Equal(t, c.strategy, p.Strategy)
			require.Len(t, p.Shards, 2)
			g, err := strconv.ParseInt(p.Env["vllm"]["VLLM_CPU_KVCACHE_SPACE"], 10, 64)
			require.NoError(t, err, string(out))
			pool := g << 30
			kvShard := p.Memory.KV / 2 // two equal shards: 40 layers each, or one replica each
			for _, s := range p.Shards {
				assert.LessOrEqual(t, kvShard, pool, "the pool holds the shard's KV cache")
				assert.LessOrEqual(t, s.Memory-kvShard+pool, s.Available, "the pool fits beside the shard")
				assert.Greater(t, s.Memory-kvShard+pool+(1<<30), s.Available, "rounded down, not a GiB short")
			}
			e, ok := p.Expect["vllm"]
			require.True(t, ok, string(out))
			assert.Equal(t, float64(g), e.KVCacheGiB)
			assert.GreaterOrEqual(t, e.KVCacheTokens, int64(32768))
			assert.GreaterOrEqual(t, e.MaxConcurrency, 1.0)
		})
	}
}

// Hosts of unequal memory get the one pool the least room gives, so the
// pipeline split must hold each stage's KV cache in it, not in its own
// host's room: two thinkpad-p16s-krackan hosts, the second given 70 GiB,
// split Llama-3.3-70B at bf16 44 layers to 36 and leave 10 GiB on the
// second; at a context of 65536 the first stage's 11 GiB of KV cache fits
// its own host's room but not that pool, and vLLM, given 10 GiB on every
// rank, would refuse --max-model-len 65536 (a plan said it fits, with
// engine_expect's 59520 tokens under its context). At 57344 it fits, and
// its room is the pool's.
func TestVLLMCPUUnequalHostsShareTheLeastPool(t *testing.T) {
	plan := func(ctx string) (bool, map[string]string, int64, int64) {
		out := PlanSharding(context.Background(), []byte(`{"model":{"name":"Llama-3.3-70B-Instruct"},"engine":"vllm","quant":"bf16","context_length":`+ctx+`,`+
			cpuOnlyCluster(t, "thinkpad-p16s-krackan", 2, 92413652992, 70<<30)+`}`), NoEnv)
		require.Equal(t, "", errorCode(t, out), string(out))
		var p struct {
			Fits   bool                         `json:"fits"`
			Env    map[string]map[string]string `json:"engine_env"`
			Expect map[string]struct {
				KVCacheTokens int64 `json:"kv_cache_tokens"`
			} `json:"engine_expect"`
			MaxContext int64 `json:"max_context_length"`
		}
		require.NoError(t, json.Unmarshal(out, &p))
		return p.Fits, p.Env["vllm"], p.Expect["vllm"].KVCacheTokens, p.MaxContext
	}
	fits, env, tokens, room := plan("57344")
	require.True(t, fits)
	assert.Equal(t, "10", env["VLLM_CPU_KVCACHE_SPACE"])
	assert.GreaterOrEqual(t, tokens, int64(57344))
	assert.Equal(t, tokens, room, "the room is what the named pool holds on the costliest stage")
	fits, _, _, _ = plan("65536")
	assert.False(t, fits, "the first stage's KV cache does not fit the pool every rank gets")
}

// vllmCPUExpect is the part of a CPU vLLM plan's engine_expect these tests
// read: the KV pool vLLM will report at start-up.
type vllmCPUExpect struct {
	KVCacheGiB     float64 `json:"kv_cache_gib"`
	KVCacheTokens  int64   `json:"kv_cache_tokens"`
	MaxConcurrency float64 `json:"max_concurrency"`
}
