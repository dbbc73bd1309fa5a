package plan

import (
	"math"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// engineExpectCPU is what vLLM will report at start-up for a fitting plan
// on host memory alone (hostKVPool): the weights of the first stage's
// device, the pool the command names for every rank (VLLM_CPU_KVCACHE_SPACE,
// engine/vllmcpu.go) and the tokens it holds, in whole blocks, on the rank
// whose layers cost the most per token, as vLLM prints them (every
// attention layer at the whole context: vllmTokenScale); max_concurrency
// is the full-context sequences of the plan's own KV cache that pool holds
// (the rule of its max_batch_size: hostKVHoldsUnits), rounded down. nil
// where the engine names no such pool.
func engineExpectCPU(pl *planned, req *planning) map[string]EngineExpect {
	pool, ok := hostKVPool(pl)
	if !ok || pool <= 0 {
		return nil
	}
	block := int64(max(pl.Costs.HostKVBlock, 1))
	tokens, concurrency := int64(-1), -1.0
	var out EngineExpect
	for _, r := range pl.replicas() {
		for _, s := range r {
			if len(s.Devices) == 0 || s.Part.KV <= 0 || s.Devices[0].Dev.Kind != registry.KindCPU {
				return nil
			}
			// Part.KV is one full-context sequence (fitBatch) on one device.
			perToken := float64(s.Part.KV) / float64(req.ContextLength*fitBatch(pl.Pool, pl.batchOf(req))) * vllmTokenScale(pl, req)
			n := int64(float64(pool)/perToken) / block * block
			if tokens < 0 || n < tokens {
				tokens = n
			}
			// The sequences of the plan's own KV cache the pool holds, in
			// whole blocks: max_batch_size's rule (hostKVHoldsUnits).
			if c := float64(pool) / float64(pl.Costs.hostKVNeed(s.Part.KV)); concurrency < 0 || c < concurrency {
				concurrency = c
			}
			if out.ModelLoadingGiB == 0 {
				out.ModelLoadingGiB = gibFloat(s.Part.Weights)
			}
		}
	}
	out.KVCacheGiB = gibFloat(pool)
	out.KVCacheTokens = max(tokens, 0)
	out.MaxConcurrency = math.Floor(max(concurrency, 0)*100) / 100
	out.Source = reportSource(pl.Pool.Budget.Engine, engine.ReportHost, engine.VLLMBackendGPU)
	out.EngineVersion = vllmVersion(req).String()
	out.warn(releaseWarning(pl.Pool.Budget.Engine, vllmVersion(req)))
	return map[string]EngineExpect{pl.Pool.Budget.Engine.Name(): out}
}
