package api

import (
	"context"
	"slices"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
)

// fixtureShardingAnswer asks PlanSharding on a fixture machine and decodes
// the whole answer, with the machine's detected total memory per device.
func fixtureShardingAnswer(t *testing.T, machine, request string) (plan.ShardingAnswer, map[string]int64) {
	t.Helper()
	detect := fixtureDetect(t, machine)
	var reg struct {
		Devices []struct {
			ID          string `json:"id"`
			MemoryBytes int64  `json:"memory_bytes"`
		} `json:"devices"`
	}
	require.NoError(t, json.Unmarshal(Detect(context.Background(), []byte(detect), NoEnv), &reg))
	total := map[string]int64{}
	for _, d := range reg.Devices {
		total[d.ID] = d.MemoryBytes
	}
	out := PlanSharding(context.Background(), []byte(request[:len(request)-1]+`,"detect":`+detect+`}`), NoEnv)
	var a plan.ShardingAnswer
	require.NoError(t, json.Unmarshal(out, &a), "%s", out)
	return a, total
}

// 405B on 8x MI300X without an engine: planned for vLLM on vLLM's default
// budget, so every shard is within 0.9 of its GPU's total memory and the
// flags say --gpu-memory-utilization 0.9 (it planned TP4 at 190.8 of 191.7
// GiB and printed --gpu-memory-utilization 1; issue 12 item 1).
func TestMI300X405BWithoutEngineFitsVLLMBudget(t *testing.T) {
	a, total := fixtureShardingAnswer(t, "mi300x-8", `{"model":{"name":"Llama-3.1-405B"}}`)
	require.True(t, a.Fits.Yes(), a.Explanation)
	require.NotNil(t, a.Budget)
	assert.Equal(t, "vllm", a.Budget.Engine)
	assert.True(t, a.Budget.EngineDefault)
	args := a.EngineArgs["vllm"]
	i := slices.Index(args, "--gpu-memory-utilization")
	require.GreaterOrEqual(t, i, 0, "%v", args)
	assert.Equal(t, "0.9", args[i+1])
	assert.NotContains(t, a.EngineArgs, "llama.cpp")
	for _, s := range a.Shards {
		assert.LessOrEqual(t, float64(s.MemoryBytes), 0.9*float64(total[s.DeviceID]), s.DeviceID)
	}
}

// 70B on the DGX H100 with tensor_parallel_size 4 uses four GPUs (issue 12
// item 6), and says the other four stay idle.
func TestDGXH100TensorParallelSize4(t *testing.T) {
	a, _ := fixtureShardingAnswer(t, "dgx-h100", `{"model":{"name":"Llama-3.3-70B-Instruct"},"tensor_parallel_size":4}`)
	require.True(t, a.Fits.Yes(), a.Explanation)
	assert.Equal(t, 4, a.TPSize)
	assert.Len(t, a.Shards, 4)
	assert.Contains(t, a.EngineArgs["vllm"], "--tensor-parallel-size")
	assert.Equal(t, "4", a.EngineArgs["vllm"][slices.Index(a.EngineArgs["vllm"], "--tensor-parallel-size")+1])
	assert.Len(t, a.IdleDevices, 4)
}
