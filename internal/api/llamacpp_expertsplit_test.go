package api

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
)

// checkMoEOffload checks what every llama.cpp MoE offload answer holds:
// every layer on the GPUs (-ngl n_layer+1), each shard within its device,
// the host shard last, a decode speed with the --n-cpu-moe assumption and a
// validated_on that says why it is not validated.
func checkMoEOffload(t *testing.T, a plan.ShardingAnswer) []string {
	t.Helper()
	require.True(t, a.Fits.Yes(), strings.Join(a.Explanation, "\n"))
	assert.Equal(t, plan.StrategyOffload, a.Strategy)
	args := a.EngineArgs["llama.cpp"]
	assert.Equal(t, strconv.Itoa(a.Model.Layers+1), flagValue(args, "-ngl"), "%v", args)
	for _, s := range a.Shards {
		assert.LessOrEqual(t, s.MemoryBytes, s.MemoryAvailableBytes, s.DeviceID)
	}
	require.NotNil(t, a.Throughput)
	assert.Positive(t, a.Throughput.DecodeTokensPerS, strings.Join(a.Throughput.Assumptions, "\n"))
	assert.Contains(t, strings.Join(a.Throughput.Assumptions, "\n"), "run on the CPU (llama.cpp --n-cpu-moe ")
	assert.True(t, strings.HasPrefix(a.Throughput.ValidatedOn, plan.NotValidated), a.Throughput.ValidatedOn)
	return args
}

// Qwen3-235B-A22B Q4_K_M with two sequences of 22016 tokens (44032 in
// all) on the H200 machine (one H200, 125 GiB of host RAM) misses a few
// GiB: llama.cpp's --fit order moves the experts of layer 0 and then single
// expert tensors of layer 1 (ffn_down first) rather than all of layer 1's,
// so the plan is --n-cpu-moe 1 with -ot for the rest and the host shard
// holds layers 0-1; llama.cpp keeps those experts in the GPU's host buffer,
// not repacked into CPU_REPACK (plan's moeHostPart), so nothing is charged
// for a copy. (One sequence of the trained 40960 tokens needs layer 0's
// experts only: its ffn_down_exps are Q6_K, larger than the average
// layer's.)
func TestExpertSplitMovesPartOfALayerOnH200(t *testing.T) {
	a, _ := fixtureShardingAnswer(t, "h200-vm", `{"model":{"name":"Qwen3-235B-A22B"},"engine":"llama.cpp","cpu_offload":true,"quant":"q4_k_m","context_length":22016,"batch_size":2}`)
	args := checkMoEOffload(t, a)
	n, err := strconv.Atoi(flagValue(args, "--n-cpu-moe"))
	require.NoError(t, err, "%v", args)
	ot := flagValue(args, "-ot")
	require.NotEmpty(t, ot, "%v", args)
	assert.Contains(t, []string{`blk\.` + strconv.Itoa(n) + `\.ffn_down_exps=CPU`, `blk\.` + strconv.Itoa(n) + `\.ffn_(gate|down)_exps=CPU`}, ot)
	require.Len(t, a.Shards, 2)
	gpu, host := a.Shards[0], a.Shards[1]
	assert.Equal(t, "cuda:0", gpu.DeviceID)
	assert.Equal(t, a.Model.Layers, gpu.LayerEnd)
	assert.Equal(t, "cpu:0", host.DeviceID)
	assert.Equal(t, n+1, host.LayerEnd, "the host holds the experts of layers 0..N-1 and part of layer N")
	assert.Equal(t, gpu.MemoryBytes+host.MemoryBytes, a.Memory.TotalBytes)
	why := strings.Join(a.Explanation, "\n")
	assert.NotContains(t, why, "CPU_REPACK")
	assert.Contains(t, why, "ffn_down_exps")
	assert.Contains(t, a.Throughput.ValidatedOn, "-ot")
}

// Qwen3-235B-A22B Q8_0 on two H100s of the DGX with its host RAM: the
// layers split over both GPUs in order (--split-mode layer --tensor-split,
// the last entry counting the output layer, so the entries sum to -ngl),
// the experts of the first N layers on the host (--n-cpu-moe N), and a
// decode estimate over the GPUs in sequence and the host's experts.
func TestExpertSplitOverTwoGPUsOnDGX(t *testing.T) {
	a, _ := fixtureShardingAnswer(t, "dgx-h100", `{"model":{"name":"Qwen3-235B-A22B"},"engine":"llama.cpp","cpu_offload":true,"quant":"q8_0","context_length":8192,"devices":["cuda:0","cuda:1","cpu:0"]}`)
	args := checkMoEOffload(t, a)
	require.Len(t, a.Shards, 3)
	g0, g1, host := a.Shards[0], a.Shards[1], a.Shards[2]
	assert.Equal(t, []string{"cuda:0", "cuda:1", "cpu:0"}, []string{g0.DeviceID, g1.DeviceID, host.DeviceID})
	assert.Equal(t, 0, g0.LayerStart)
	assert.Equal(t, g0.LayerEnd, g1.LayerStart)
	assert.Equal(t, a.Model.Layers, g1.LayerEnd)
	assert.Equal(t, "layer", flagValue(args, "--split-mode"))
	split := strings.Split(flagValue(args, "--tensor-split"), ",")
	require.Len(t, split, 2, "%v", args)
	assert.Equal(t, strconv.Itoa(g0.LayerEnd), split[0])
	assert.Equal(t, strconv.Itoa(g1.LayerEnd-g1.LayerStart+1), split[1], "the last device counts the output layer")
	n, err := strconv.Atoi(flagValue(args, "--n-cpu-moe"))
	require.NoError(t, err, "%v", args)
	assert.Equal(t, 0, host.LayerStart)
	if flagValue(args, "-ot") == "" {
		assert.Equal(t, n, host.LayerEnd)
	} else {
		assert.Equal(t, n+1, host.LayerEnd)
	}
	assert.Equal(t, g0.MemoryBytes+g1.MemoryBytes+host.MemoryBytes, a.Memory.TotalBytes)
	assert.Contains(t, strings.Join(a.Explanation, "\n"), "2 GPUs (cuda:0 layers 0-")
	assert.Contains(t, a.Throughput.ValidatedOn, "over 2 GPUs")
	// Nothing is repacked beside a GPU: no copy is charged.
	assert.NotContains(t, strings.Join(a.Explanation, "\n"), "CPU_REPACK")
}

// contextLine is the explanation's "context:" line of a, "" without one.
func contextLine(a plan.ShardingAnswer) string {
	for _, l := range a.Explanation {
		if strings.HasPrefix(l, "context: ") {
			return l
		}
	}
	return ""
}

// On the H200 machine with no context asked, Qwen3-235B-A22B follows
// llama.cpp --fit's order (common/fit.cpp): Q4_K_M misses at its trained
// 40960 tokens but fits whole on the GPU at a shorter context, so the
// context is reduced (step 2) and no expert moves; Q8_0 does not fit even
// at the floor, so the context stays at 4096 and experts move (steps 3
// and 4). -c is the chosen context either way.
func TestFitOrderQwen3_235BOnH200(t *testing.T) {
	a, _ := fixtureShardingAnswer(t, "h200-vm", `{"model":{"name":"Qwen3-235B-A22B"},"engine":"llama.cpp","cpu_offload":true,"quant":"q4_k_m"}`)
	require.True(t, a.Fits.Yes(), strings.Join(a.Explanation, "\n"))
	args := a.EngineArgs["llama.cpp"]
	assert.Equal(t, plan.StrategyNone, a.Strategy)
	assert.Empty(t, flagValue(args, "--n-cpu-moe"), "%v", args)
	c, err := strconv.Atoi(flagValue(args, "-c"))
	require.NoError(t, err, "%v", args)
	assert.Greater(t, c, 4096)
	assert.Less(t, c, 40960)
	assert.True(t, strings.HasPrefix(contextLine(a), "context: "+strconv.Itoa(c)+" tokens per sequence, chosen as llama.cpp's --fit chooses"), contextLine(a))

	a, _ = fixtureShardingAnswer(t, "h200-vm", `{"model":{"name":"Qwen3-235B-A22B"},"engine":"llama.cpp","cpu_offload":true,"quant":"q8_0"}`)
	args = checkMoEOffload(t, a)
	assert.Equal(t, "4096", flagValue(args, "-c"), "%v", args)
	n := flagValue(args, "--n-cpu-moe")
	require.NotEmpty(t, n, "%v", args)
	line := contextLine(a)
	assert.True(t, strings.HasPrefix(line, "context: 4096 tokens per sequence, llama.cpp --fit's floor (--fit-ctx 4096)"), line)
	assert.Contains(t, line, "trained context (40960 per sequence)")
	assert.Contains(t, line, "steps 3 and 4")
	assert.Contains(t, line, "--n-cpu-moe "+n)
}
