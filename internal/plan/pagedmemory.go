package plan

// A plan on a paged KV pool (vLLM, SGLang: budget.Paged) is made for one
// full-context sequence (fitBatch), the engine's own start-up rule: vLLM
// refuses to start when one request of --max-model-len does not fit the
// KV cache it leaves (docs/inference-servers.md). What the answer's memory
// reports is the KV cache the asked batch holds at that context, as the
// schema's memory.kv_cache_bytes says (schema/plan.schema.json: context_length
// x batch_size where they fit) and as a llama.cpp plan of the same request
// counts: every
// sequence where the pool holds them all, what the pool holds at once
// where fewer fit (max_batch_size, the figure the throughput's assumption
// states). The fit rule, the maxima and engine_expect are unchanged.

// heldSequences is, per replica of pl, how many full-context sequences its
// memory counts on a paged KV pool: its share of the batch (a load
// balancer's split of batch_size, the last replicas taking what is left),
// at most what its pool holds at once (maxBatch, the plan's
// max_batch_size, over the replicas). nil where the plan's parts count
// the batch already: an engine without a paged pool, a training plan, or
// a batch of one (the one sequence the plan holds).
func heldSequences(pl *planned, req *planning, maxBatch int) []int {
	if pl.Pool == nil || !pl.Pool.Budget.Paged || req.training || req.BatchSize <= 1 {
		return nil
	}
	replicas := len(pl.replicas())
	if replicas == 0 {
		return nil
	}
	share := pl.batchOf(req)
	perReplica := max(maxBatch/replicas, 1)
	held := make([]int, replicas)
	left := req.BatchSize
	for i := range held {
		asked := min(share, max(left, 0))
		left -= asked
		held[i] = min(asked, perReplica)
	}
	return held
}

// pagedHeld is heldSequences for a fitting plan whose maxima are not
// computed (suggest_quant), with the max_batch_size it used: searched only
// where the plan is on a paged pool and asked more than one sequence (0
// otherwise).
func pagedHeld(pl *planned, req *planning) ([]int, int) {
	if !pl.Fits || heldSequences(pl, req, 1) == nil {
		return nil, 0
	}
	maxBatch := maxFitting(pl, req, false)
	return heldSequences(pl, req, maxBatch), maxBatch
}

// heldPart is stage part p of replica ri with the KV cache of the
// sequences the replica holds (held: heldSequences), p's own being one
// sequence's (fitBatch; the cache is linear in sequences,
// quant.KVCacheBytes); p as planned where held is nil.
func heldPart(p part, held []int, ri int) part {
	if ri < len(held) {
		p.KV *= int64(held[ri])
	}
	return p
}
