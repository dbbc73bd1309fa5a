package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A decode step on a paged KV pool reads the cache of every sequence it
// runs: the plan holds one full-context sequence (fitBatch), so the step of
// a batch of 4 reads four times its KV cache, and one sequence decodes
// slower than alone. (Before, the step read one sequence's cache whatever
// the batch, while the decode note said it read all of them.)
func TestPagedDecodeReadsEveryRunningSequence(t *testing.T) {
	body := `{"model":{"name":"llama-3.1-70b"},"context_length":32768,"placement":"fewest","batch_size":`
	one := shard(t, request(t, body+`1}`, eightH100(t, true)))
	four := shard(t, request(t, body+`4}`, eightH100(t, true)))
	require.True(t, one.Fits.Yes())
	require.True(t, four.Fits.Yes())
	// The same devices and layers: one sequence of 32k is what the pool
	// must hold. Each device's bytes differ by vLLM's sampler warm-up,
	// which --max-num-seqs 4 makes smaller than vLLM's default 1024.
	require.Equal(t, len(one.Shards), len(four.Shards))
	for i := range one.Shards {
		a, b := one.Shards[i], four.Shards[i]
		a.MemoryBytes, b.MemoryBytes = 0, 0
		require.Equal(t, a, b, "the same plan: one sequence of 32k is what the pool must hold")
	}
	// The memory counts the KV cache the batch holds: four sequences of
	// 32k, all of which the pool holds at once (pagedmemory.go).
	require.GreaterOrEqual(t, four.MaxBatchSize, 4)
	require.Equal(t, 4*one.Memory.KVCacheBytes, four.Memory.KVCacheBytes)
	perSeq := four.Throughput.DecodeTokensPerS / 4
	assert.Less(t, perSeq, one.Throughput.DecodeTokensPerS*0.95, "four sequences' KV cache is read each step")
	assert.Greater(t, four.Throughput.DecodeTokensPerS, one.Throughput.DecodeTokensPerS, "the weights are read once for all four")
}

// betterLayout compares one sequence's speed at batch 1 and all
// sequences' above it; speeds within relTie are equal, and then more
// devices win, then the larger tensor-parallel size.
func TestBetterLayout(t *testing.T) {
	dev := func(n int) []stage {
		return []stage{{Devices: make([]*device, n)}}
	}
	tp8 := layout{Plan: planned{TP: 8, Stages: dev(8)}, PerSequence: 45, Total: 45}
	dp8 := layout{Plan: planned{TP: 1, DP: 8, Stages: dev(1), Replicas: [][]stage{dev(1), dev(1), dev(1), dev(1), dev(1), dev(1), dev(1), dev(1)}},
		PerSequence: 40, Total: 320}
	assert.True(t, betterLayout(&tp8, &dp8, 1), "batch 1: the faster sequence")
	assert.False(t, betterLayout(&tp8, &dp8, 8), "batch 8: more tokens/s in all")
	assert.True(t, betterLayout(&dp8, &tp8, 8))

	tie := dp8
	tie.PerSequence = 45 * (1 - relTie/2)
	assert.True(t, betterLayout(&tp8, &tie, 1), "equal speed, equal devices: the larger TP")
	assert.False(t, betterLayout(&tie, &tp8, 1))
	four := layout{Plan: planned{TP: 4, Stages: dev(4)}, PerSequence: 45}
	assert.True(t, betterLayout(&tp8, &four, 1), "equal speed: more devices")
	assert.False(t, betterLayout(&four, &tp8, 1))
}

// The serving placement is the plan's only: suggest_quant names the fewest
// devices, as before.
func TestSuggestKeepsTheFewestDevices(t *testing.T) {
	req := request(t, `{"model":{"name":"llama-3.1-70b"}}`, eightH100(t, true))
	s, err := SuggestQuant(req)
	require.NoError(t, err)
	assert.Equal(t, []string{"cuda:0", "cuda:1"}, s.Devices)
	a := shard(t, req)
	assert.Len(t, a.Shards, 8)
}
