package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/modelio"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// TestServingBatchReplayIsThePlannersFigure: the concurrency replay of
// internal/calibration/fit (NewServingBatchReplay) gives the decode
// tokens/s the planner states for the same request, a vLLM plan of
// Llama-3.1-70B bf16 over H100s with batch_size 16 at 1,024 tokens, and a
// step that grows with the batch (the sixteen sequences' KV reads and
// all-reduce messages) while one sequence's replay is the batch-1
// replay's.
func TestServingBatchReplayIsThePlannersFigure(t *testing.T) {
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-70B"},"engine":"vllm","quant":"bf16","context_length":1024,"batch_size":16}`, eightH100(t, false)))
	require.True(t, a.Fits, a.Explanation)
	require.Positive(t, a.Throughput.DecodeTokensPerS)
	tp := len(a.Shards)
	require.Equal(t, StrategyTensor, a.Strategy)
	m, err := modelio.Resolve(model.Spec{Name: "Llama-3.1-70B"})
	require.NoError(t, err)
	c := calibration.Fitted
	s, ok := specs.ByName("NVIDIA H100 SXM5 80GB")
	require.True(t, ok)
	batch := NewServingBatchReplay(engine.NameVLLM, m, quant.Level("bf16"), s, tp, 16, 1024)
	assert.InEpsilon(t, a.Throughput.DecodeTokensPerS, batch.Decode(c), 0.01, "TP %d", tp)

	one := NewServingBatchReplay(engine.NameVLLM, m, quant.Level("bf16"), s, tp, 1, 1024)
	assert.Equal(t, NewServingReplay(engine.NameVLLM, m, quant.Level("bf16"), s, tp, 1024).Decode(c), one.Decode(c))
	stepOne, stepBatch := 1/one.Decode(c), 16/batch.Decode(c)
	t.Logf("TP %d: planned %.1f tokens/s, replay %.1f; step %.2f ms at 16, %.2f ms at 1", tp, a.Throughput.DecodeTokensPerS, batch.Decode(c), stepBatch*1e3, stepOne*1e3)
	assert.Greater(t, stepBatch, stepOne, "sixteen sequences' KV cache is read each step")
}
