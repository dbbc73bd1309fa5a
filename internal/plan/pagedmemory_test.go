package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pagedPlan plans Llama-3.1-8B at bf16 and a context of 32768 on one
// H200 (143771 MiB, the GPU of testdata/machines/h200-vm) for engine at
// batch sequences.
func pagedPlan(t *testing.T, engine string, batch int) *ShardingAnswer {
	t.Helper()
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"`+engine+`","quant":"bf16","context_length":32768,"batch_size":`+itoa(batch)+`}`, h200s(t, 1)))
	require.True(t, a.Fits.Yes(), a.Explanation)
	return a
}

// oneSequenceKV is Llama-3.1-8B's KV cache for one sequence of 32768
// tokens at 16 bits: 32 layers x 8 KV heads x 128 (head_dim) x 2 (K and V)
// x 2 bytes = 131072 bytes a token (config.json of meta-llama/Llama-3.1-8B),
// 4 GiB.
const oneSequenceKV int64 = 32 * 8 * 128 * 2 * 2 * 32768

// checkMemorySums checks that memory is the sum of its parts and of the
// shards, and that no shard is over its device.
func checkMemorySums(t *testing.T, a *ShardingAnswer) {
	t.Helper()
	m := a.Memory
	assert.Equal(t, m.WeightsBytes+m.KVCacheBytes+m.ActivationsBytes+m.OverheadBytes, m.TotalBytes)
	var shards int64
	for _, s := range a.Shards {
		shards += s.MemoryBytes
		assert.LessOrEqual(t, s.MemoryBytes, s.MemoryAvailableBytes, s.DeviceID)
	}
	assert.Equal(t, m.TotalBytes, shards)
}

// A plan on a paged KV pool (vLLM, SGLang) fits when one full-context
// sequence does (what vLLM needs to start), but its memory is the KV cache
// the batch holds at that context: all 8 sequences of 32768 tokens, 32 GiB,
// as the schema's memory.kv_cache_bytes says (context_length x batch_size) and as a
// llama.cpp plan of the same request counts. The fit rule, the pool's
// figures (engine_expect) and max_batch_size do not change with it.
func TestPagedPlanMemoryHoldsTheBatch(t *testing.T) {
	for _, engine := range []string{"vllm", "sglang"} {
		t.Run(engine, func(t *testing.T) {
			one := pagedPlan(t, engine, 1)
			eight := pagedPlan(t, engine, 8)
			assert.EqualValues(t, oneSequenceKV, one.Memory.KVCacheBytes, "batch 1: one sequence")
			assert.Zero(t, one.Memory.KVCacheSequences, "batch 1: the field is absent")

			require.GreaterOrEqual(t, eight.MaxBatchSize, 8, "all 8 fit at once")
			assert.EqualValues(t, 8*oneSequenceKV, eight.Memory.KVCacheBytes, "8 sequences of 32768 tokens")
			assert.Equal(t, 8, eight.Memory.KVCacheSequences)
			checkMemorySums(t, eight)

			// The rest is the batch-8 plan's own: weights as at batch 1,
			// the engine's charge at --max-num-seqs 8.
			assert.Equal(t, one.Memory.WeightsBytes, eight.Memory.WeightsBytes)
			// The levels table keeps the fit rule's figure (one sequence).
			require.NotEmpty(t, eight.Levels)
			row := eight.Levels[0]
			require.Equal(t, "bf16", row.Quant)
			assert.Equal(t, eight.Memory.TotalBytes-7*oneSequenceKV, row.TotalBytes,
				"the bf16 row counts the one sequence the engine must hold to start")
			// The pool is what the engine allocates, whatever the batch.
			x1, x8 := one.EngineExpect[engine], eight.EngineExpect[engine]
			require.Positive(t, x8.KVCacheTokens)
			if engine == "sglang" {
				assert.Equal(t, x1.KVCacheTokens, x8.KVCacheTokens, "SGLang's pool does not depend on the batch")
			}
			assert.Contains(t, joinLines(eight.Explanation),
				"memory counts the 8 (KV cache 32.0 GiB)")
		})
	}
}

// A batch larger than the pool holds at full context: the memory is what
// the pool holds (max_batch_size sequences), not the batch, and the
// explanation and the throughput's assumption say so.
func TestPagedPlanMemoryHoldsWhatThePoolHolds(t *testing.T) {
	for _, engine := range []string{"vllm", "sglang"} {
		t.Run(engine, func(t *testing.T) {
			a := pagedPlan(t, engine, 64)
			n := a.MaxBatchSize
			require.Greater(t, n, 1)
			require.Less(t, n, 64, "the pool holds fewer than 64 sequences of 32768 tokens")
			assert.Equal(t, n, a.Memory.KVCacheSequences)
			assert.EqualValues(t, int64(n)*oneSequenceKV, a.Memory.KVCacheBytes)
			checkMemorySums(t, a)
			assert.Contains(t, joinLines(a.Explanation), "memory counts the "+itoa(n)+" it holds")
			require.NotNil(t, a.Throughput)
			assert.Contains(t, joinLines(a.Throughput.Assumptions), itoa(n)+" of the 64 run at once")
		})
	}
}

// llama.cpp has no paged pool: its plan holds every sequence of the batch
// and its memory always counted them (the field stays absent).
func TestLlamaCppPlanMemoryHoldsTheBatch(t *testing.T) {
	a := pagedPlan(t, "llama.cpp", 8)
	assert.EqualValues(t, 8*oneSequenceKV, a.Memory.KVCacheBytes)
	assert.Zero(t, a.Memory.KVCacheSequences)
}

// suggest_quant chooses the same plan and reports the same memory.
func TestPagedSuggestMemoryIsThePlans(t *testing.T) {
	for _, engine := range []string{"vllm", "sglang"} {
		t.Run(engine, func(t *testing.T) {
			body := `{"model":{"name":"Llama-3.1-8B"},"engine":"` + engine + `","quant":"bf16","context_length":32768,"batch_size":8}`
			s, err := SuggestQuant(request(t, body, h200s(t, 1)))
			require.NoError(t, err)
			require.True(t, s.Fits.Yes())
			p := pagedPlan(t, engine, 8)
			assert.Equal(t, p.Memory, s.Memory)
			// and says why its memory is above its row, as the plan does.
			assert.Contains(t, joinLines(s.Explanation), "memory counts the 8 (KV cache 32.0 GiB), the levels table the one")
		})
	}
}

func joinLines(lines []string) string { return strings.Join(lines, "\n") }

// Data-parallel replicas each hold their own paged KV pool: the paged line
// says so instead of "one paged KV cache" (before: 4 replicas on four H200s,
// 8 sequences of 32768, read "vLLM serves the batch from one paged KV
// cache: all 8 sequences ... fit at once (up to N would)").
func TestPagedLineUnderReplicasNamesEveryPool(t *testing.T) {
	for _, batch := range []int{8, 400} {
		a := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"engine":"vllm","quant":"bf16","context_length":32768,"replicas":4,"batch_size":`+itoa(batch)+`}`, h200s(t, 4)))
		require.True(t, a.Fits.Yes(), a.Explanation)
		require.Equal(t, 4, a.DPSize)
		why := strings.Join(a.Explanation, "\n")
		assert.NotContains(t, why, "one paged KV cache", batch)
		assert.Contains(t, why, "vLLM serves the batch from 4 paged KV caches, one per replica", batch)
	}
	one := pagedPlan(t, "vllm", 8)
	assert.Contains(t, strings.Join(one.Explanation, "\n"), "vLLM serves the batch from one paged KV cache: all 8 sequences of 32768 tokens fit at once")
}
