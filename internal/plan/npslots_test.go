package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// A llama.cpp plan for N sequences runs llama-server with N slots of the
// planned context each: -c is the total (N x the context), -np N, and no
// --kv-unified, so llama.cpp gives each slot -c/N cells in its own stream
// (src/llama-context.cpp and src/llama-kv-cache.cpp at 81ff7abe50b9); the
// KV memory is N slots' worth. A plan for one sequence says -np 1:
// without it llama-server runs 4 slots sharing one unified cache
// (tools/server/server.cpp), which is not the plan (a sliding-window or
// recurrent model's cache grows with the slots). The hand-off keeps the
// planned floor per sequence: --fit-ctx is a total, so 4096 x N.
func TestLlamaCPPSlotsMatchThePlan(t *testing.T) {
	r := reg(t, []registry.Device{h100(0)})
	one := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"q4_k_m","engine":"llama.cpp","context_length":8192}`, r))
	four := shard(t, request(t, `{"model":{"name":"Llama-3.1-8B"},"quant":"q4_k_m","engine":"llama.cpp","context_length":8192,"batch_size":4}`, r))
	require.True(t, one.Fits.Yes(), one.Explanation)
	require.True(t, four.Fits.Yes(), four.Explanation)

	a1, a4 := one.EngineArgs["llama.cpp"], four.EngineArgs["llama.cpp"]
	assert.Equal(t, "8192", flagAfter(a1, "-c"))
	assert.Equal(t, "1", flagAfter(a1, "-np"), "llama-server's default is 4 unified slots")
	assert.Equal(t, "32768", flagAfter(a4, "-c"), "-c is the total of the 4 slots")
	assert.Equal(t, "4", flagAfter(a4, "-np"))
	for _, a := range [][]string{a1, a4} {
		assert.NotContains(t, a, "--kv-unified")
		assert.NotContains(t, a, "-kvu")
	}

	// Llama-3.1-8B's f16 cache: 32 layers x 8 KV heads x 128 x 2 (K, V) x
	// 2 bytes = 128 KiB a token; 8192 cells a slot.
	assert.Equal(t, int64(8192*128<<10), one.Memory.KVCacheBytes)
	assert.Equal(t, 4*one.Memory.KVCacheBytes, four.Memory.KVCacheBytes, "four slots of 8192 cells")

	assert.Contains(t, strings.Join(one.Explanation, "\n"), "--fit-ctx 4096")
	assert.Contains(t, strings.Join(four.Explanation, "\n"), "--fit-ctx 16384", "--fit-ctx is the total floor: 4096 a slot")
}

// A batch-4 llama.cpp plan that keeps the floor and moves experts says the
// floor as the --fit-ctx that keeps it, a total over the 4 slots, and the
// trained context per slot (Qwen3-30B-A3B's 40960 over -np 4).
func TestLlamaCPPFloorLineCountsTheSlots(t *testing.T) {
	r := reg(t, []registry.Device{rtx3090(), host(64 << 30)})
	a := shard(t, request(t, `{"model":{"name":"Qwen3-30B-A3B"},"engine":"llama.cpp","cpu_offload":true,"quant":"q8_0","batch_size":4}`, r))
	require.True(t, a.Fits.Yes(), strings.Join(a.Explanation, "\n"))
	args := a.EngineArgs["llama.cpp"]
	assert.Equal(t, "16384", flagAfter(args, "-c"), "%v", args)
	assert.Equal(t, "4", flagAfter(args, "-np"), "%v", args)
	var line string
	for _, l := range a.Explanation {
		if strings.HasPrefix(l, "context: ") {
			line = l
		}
	}
	assert.True(t, strings.HasPrefix(line, "context: 4096 tokens per sequence, llama.cpp --fit's floor (--fit-ctx 16384 over -np 4)"), line)
	assert.Contains(t, line, "trained context (10240 per sequence)")
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "--fit on --fit-target 1024 --fit-ctx 16384")
}
