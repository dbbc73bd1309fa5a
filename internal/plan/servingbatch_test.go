package plan

import (
	"strings"
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
	require.True(t, a.Fits.Yes(), a.Explanation)
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

// TestServingValidatedOnSaysWhatChecksTheConcurrency: a vLLM or SGLang
// plan decoding several sequences a step says in validated_on that its
// constants are batch-1 fits, how many sequences the step holds, and what
// the published runs at a concurrency above 1 give
// (VLLMConcurrencyCheck, SGLangConcurrencyCheck); at one sequence it says
// nothing of concurrency. An SGLang plan paying vLLM's constants off HBM
// GPUs says no run checks it.
func TestServingValidatedOnSaysWhatChecksTheConcurrency(t *testing.T) {
	m, err := modelio.Resolve(model.Spec{Name: "Llama-3.1-70B"})
	require.NoError(t, err)
	h100, ok := specs.ByName("NVIDIA H100 SXM5 80GB")
	require.True(t, ok)
	for _, tc := range []struct{ engine, check string }{{engine.NameVLLM, VLLMConcurrencyCheck}, {engine.NameSGLang, SGLangConcurrencyCheck}} {
		one := NewServingBatchReplay(tc.engine, m, quant.Level("bf16"), h100, 4, 1, 1024)
		v1, ok := validatedOn(one.decodePlan, one.decodeReq)
		assert.False(t, ok)
		assert.NotContains(t, v1, "serving_concurrency.json", tc.engine)
		assert.NotContains(t, v1, "sequences a step", tc.engine)

		many := NewServingBatchReplay(tc.engine, m, quant.Level("bf16"), h100, 4, 16, 1024)
		v, ok := validatedOn(many.decodePlan, many.decodeReq)
		assert.False(t, ok)
		assert.True(t, strings.HasPrefix(v, v1), "%s: the batch-1 wording stays: %s", tc.engine, v)
		assert.Contains(t, v, "at 16 sequences a step the figure is the batch-1 step plus their KV cache reads, all-reduce messages and, for a MoE model, the experts they route to", tc.engine)
		assert.Contains(t, v, "internal/calibration/data/serving_concurrency.json: "+tc.check, tc.engine)
	}

	rtx, ok := specs.ByName("NVIDIA GeForce RTX 4090")
	require.True(t, ok)
	small, err := modelio.Resolve(model.Spec{Name: "Llama-3.1-8B"})
	require.NoError(t, err)
	r := NewServingBatchReplay(engine.NameSGLang, small, quant.Level("bf16"), rtx, 1, 8, 1024)
	v, _ := validatedOn(r.decodePlan, r.decodeReq)
	assert.Contains(t, v, sglangFallback)
	assert.Contains(t, v, "at 8 sequences a step")
	assert.Contains(t, v, "no published run at a concurrency above 1 on these GPUs checks it")
	assert.NotContains(t, v, SGLangConcurrencyCheck)

	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-70B"},"engine":"vllm","quant":"bf16","context_length":1024,"batch_size":16}`, eightH100(t, false)))
	assert.Contains(t, a.Throughput.ValidatedOn, VLLMConcurrencyCheck, "the answer carries it")
}
