package plan

import (
	"math"
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
// step that grows with the batch (the sixteen sequences' KV reads,
// all-reduce messages and per-sequence term) while one sequence's replay
// is the batch-1 replay's.
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
// (calibration.VLLMConcurrencyCheck, calibration.SGLangConcurrencyCheck);
// at one sequence it says nothing of concurrency. An SGLang plan paying vLLM's constants off HBM
// GPUs says no run checks it.
func TestServingValidatedOnSaysWhatChecksTheConcurrency(t *testing.T) {
	m, err := modelio.Resolve(model.Spec{Name: "Llama-3.1-70B"})
	require.NoError(t, err)
	h100, ok := specs.ByName("NVIDIA H100 SXM5 80GB")
	require.True(t, ok)
	for _, tc := range []struct{ engine, check string }{{engine.NameVLLM, calibration.VLLMConcurrencyCheck}, {engine.NameSGLang, calibration.SGLangConcurrencyCheck}} {
		one := NewServingBatchReplay(tc.engine, m, quant.Level("bf16"), h100, 4, 1, 1024)
		v1, ok := validatedOn(one.decodePlan, one.decodeReq)
		assert.False(t, ok)
		assert.NotContains(t, v1, "serving_concurrency.json", tc.engine)
		assert.NotContains(t, v1, "sequences a step", tc.engine)

		many := NewServingBatchReplay(tc.engine, m, quant.Level("bf16"), h100, 4, 16, 1024)
		v, ok := validatedOn(many.decodePlan, many.decodeReq)
		assert.False(t, ok)
		assert.True(t, strings.HasPrefix(v, v1), "%s: the batch-1 wording stays: %s", tc.engine, v)
		assert.Contains(t, v, "at 16 sequences a step the figure is the batch-1 step plus their KV cache reads, all-reduce messages, a time per layer and their matrix products at a fitted efficiency for each sequence beyond the first and, for a MoE model, the experts they route to", tc.engine)
		assert.Contains(t, v, "internal/calibration/data/serving_concurrency.json: "+tc.check, tc.engine)
	}

	rtx, ok := specs.ByName("NVIDIA GeForce RTX 4090")
	require.True(t, ok)
	small, err := modelio.Resolve(model.Spec{Name: "Llama-3.1-8B"})
	require.NoError(t, err)
	r := NewServingBatchReplay(engine.NameSGLang, small, quant.Level("bf16"), rtx, 1, 8, 1024)
	v, _ := validatedOn(r.decodePlan, r.decodeReq)
	assert.Contains(t, v, calibration.SGLangOffHBM)
	assert.Contains(t, v, "at 8 sequences a step")
	assert.Contains(t, v, "no published run at a concurrency above 1 on these GPUs checks it")
	assert.NotContains(t, v, calibration.SGLangConcurrencyCheck)

	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-70B"},"engine":"vllm","quant":"bf16","context_length":1024,"batch_size":16}`, eightH100(t, false)))
	assert.Contains(t, a.Throughput.ValidatedOn, calibration.VLLMConcurrencyCheck, "the answer carries it")
}

// TestServingBatchSecondsPerSequenceBeyondTheFirst: the per-sequence term
// of a serving step (rule 6 of serving_concurrency.json) is zero at one
// sequence and (C - 1) x (layers x the layer time + one token's FLOPs /
// (peak x efficiency)) above, without the FLOPs part where the peak is
// unknown, and nothing without constants.
func TestServingBatchSecondsPerSequenceBeyondTheFirst(t *testing.T) {
	e := efficiency{ServingBatchLayerSeconds: 1e-6, ServingBatchMFU: 0.5}
	assert.Zero(t, e.servingBatchSeconds(1, 80, 17.6e9, 2614.9))
	assert.Zero(t, e.servingBatchSeconds(0, 80, 17.6e9, 2614.9))
	assert.InDelta(t, 127*(80e-6+17.6e9/(2614.9e12*0.5)), e.servingBatchSeconds(128, 80, 17.6e9, 2614.9), 1e-12)
	assert.InDelta(t, 127*80e-6, e.servingBatchSeconds(128, 80, 17.6e9, 0), 1e-12)
	assert.InDelta(t, 127*80e-6, e.servingBatchSeconds(128, 80, 17.6e9, math.Inf(1)), 1e-12)
	assert.Zero(t, efficiency{}.servingBatchSeconds(128, 80, 17.6e9, 2614.9))
}

// TestServingStepAddsTheBatchTerm: a vLLM plan of Llama-3.1-70B fp8 on 8
// MI300X (the fit rows' setup) at 32 sequences plans a step longer by
// exactly the per-sequence term under the shipped constants than without
// it: 31 x (80 layers x the layer time + 2 x the weights one token
// multiplies on one GPU / (the MI300X's fp8 dense peak x the efficiency));
// at one sequence the two are the same; a llama.cpp plan does not pay it.
func TestServingStepAddsTheBatchTerm(t *testing.T) {
	m, err := modelio.Resolve(model.Spec{Name: "Llama-3.1-70B"})
	require.NoError(t, err)
	mi300x, ok := specs.ByName("AMD Instinct MI300X")
	require.True(t, ok)
	c := calibration.Fitted
	require.Positive(t, c.ServingBatchLayerSeconds)
	require.Positive(t, c.ServingBatchMFU)
	none := c
	none.ServingBatchLayerSeconds, none.ServingBatchMFU = 0, 0
	step := func(engineName string, batch int, k calibration.Throughput) float64 {
		r := NewServingBatchReplay(engineName, m, quant.Level("fp8"), mi300x, 8, batch, 1152)
		d := r.Decode(k)
		require.Positive(t, d)
		return float64(batch) / d
	}
	assert.Equal(t, step(engine.NameVLLM, 1, none), step(engine.NameVLLM, 1, c))
	flops := 2 * matmulParams(m, float64(m.Params)) / 8
	want := 31 * (80*c.ServingBatchLayerSeconds + flops/(mi300x.FP8TFLOPS*1e12*c.ServingBatchMFU))
	assert.InEpsilon(t, want, step(engine.NameVLLM, 32, c)-step(engine.NameVLLM, 32, none), 1e-3)
	assert.Equal(t, step(engine.NameLlamaCPP, 32, none), step(engine.NameLlamaCPP, 32, c))
}

// TestServingBatchNoteOnlyAboveOneSequence: a vLLM plan decoding 16
// sequences names the per-sequence term and its constants in its
// assumptions; at one sequence it does not.
func TestServingBatchNoteOnlyAboveOneSequence(t *testing.T) {
	notes := func(batch string) []string {
		a := shard(t, request(t, `{"model":{"name":"Llama-3.1-70B"},"engine":"vllm","quant":"bf16","context_length":1024,"batch_size":`+batch+`}`, eightH100(t, false)))
		require.True(t, a.Fits.Yes(), a.Explanation)
		return a.Throughput.Assumptions
	}
	want := efficiency(calibration.Fitted).servingBatchNote(16)
	require.NotEmpty(t, want)
	assert.Contains(t, want, "16 sequences a step: each one beyond the first adds 0.78 us per layer")
	assert.Contains(t, notes("16"), want)
	for _, n := range notes("1") {
		assert.NotContains(t, n, "beyond the first", n)
	}
}

// TestServingBatchRoutedShare: a dense model has no routed share; a MoE
// model's is k / E of its routed experts' weights in its MoE layers over
// one token's matrix-product weights, between 0 and 1.
func TestServingBatchRoutedShare(t *testing.T) {
	dense := model.Lookup("Llama-3.1-70B")
	require.NotNil(t, dense)
	assert.Zero(t, ServingBatchRoutedShare(dense))

	moe := model.Lookup("Qwen3-30B-A3B")
	require.NotNil(t, moe)
	require.True(t, moe.IsMoE())
	routed := float64(moe.RoutedExpertParams()) * float64(moe.MoELayers()) * float64(moe.ExpertsPerToken) / float64(moe.Experts)
	share := ServingBatchRoutedShare(moe)
	assert.InDelta(t, routed/matmulParams(moe, float64(moe.ActiveParams)), share, 1e-12)
	assert.Greater(t, share, 0.5, "most of a sparse MoE's active weights are its routed experts")
	assert.Less(t, share, 1.0)
}
