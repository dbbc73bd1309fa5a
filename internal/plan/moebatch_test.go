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

// TestBatchExpertReads: a decode step of 16 tokens of Qwen3-30B-A3B (128
// routed experts, 8 a token) reads, under uniform routing, the share
// 1 - (15/16)^16 = 64.4 % of each MoE layer's experts, not the 6.25 % of
// one token: the step grows by those bytes at the stream's bandwidth
// beside the fifteen more sequences' KV reads. One sequence's step and a
// dense model's are unchanged.
func TestBatchExpertReads(t *testing.T) {
	m, err := modelio.Resolve(model.Spec{Name: "Qwen3-30B-A3B"})
	require.NoError(t, err)
	require.Equal(t, 128, m.Experts)
	require.Equal(t, 8, m.ExpertsPerToken)
	s, ok := specs.ByName("NVIDIA H100 SXM5 80GB")
	require.True(t, ok)
	stream := calibration.Fitted
	stream.VLLM = calibration.ServingDecode{BandwidthFraction: 1}
	// Without the per-sequence term (TestServingStepAddsTheBatchTerm): the
	// growth here is the bytes alone.
	stream.ServingBatchLayerSeconds, stream.ServingBatchMFU = 0, 0

	one := NewServingBatchReplay(engine.NameVLLM, m, quant.Level("bf16"), s, 1, 1, 1024)
	many := NewServingBatchReplay(engine.NameVLLM, m, quant.Level("bf16"), s, 1, 16, 1024)
	c := &many.decodePlan.Costs
	assert.InDelta(t, 1-math.Pow(15.0/16, 16), c.batchExpertShare(16), 1e-9)
	assert.InDelta(t, 1.0/16, c.batchExpertShare(1), 1e-9, "one token reads its own share")
	assert.Zero(t, c.batchExpertReads(0, c.Layers, 1, 1))

	experts := c.expertsIn(0, c.Layers) * (c.batchExpertShare(16) - c.ExpertActive)
	kv := float64(many.decodePlan.Stages[0].Part.KV - one.decodePlan.Stages[0].Part.KV)
	want := (experts + kv) / (s.BandwidthGBs * 1e9)
	got := 16/many.Decode(stream) - 1/one.Decode(stream)
	assert.InDelta(t, want, got, want*0.01, "step growth, s")
	assert.Greater(t, experts, 10*kv, "at 1,024 tokens the experts, not the KV cache, make the growth")

	dense, err := modelio.Resolve(model.Spec{Name: "Llama-3.1-8B"})
	require.NoError(t, err)
	d := NewServingBatchReplay(engine.NameVLLM, dense, quant.Level("bf16"), s, 1, 16, 1024)
	assert.Zero(t, d.decodePlan.Costs.batchExpertReads(0, dense.Layers, 1, 16))
}

// TestBatchExpertNoteOnlyAboveOneSequence: a MoE plan decoding 16
// sequences says what its step reads of the experts; at one sequence it
// does not.
func TestBatchExpertNoteOnlyAboveOneSequence(t *testing.T) {
	note := func(batch string) bool {
		a := shard(t, request(t, `{"model":{"name":"Qwen3-30B-A3B"},"engine":"vllm","quant":"bf16","context_length":1024,"batch_size":`+batch+`}`, eightH100(t, false)))
		require.True(t, a.Fits.Yes(), a.Explanation)
		for _, s := range a.Throughput.Assumptions {
			if strings.HasPrefix(s, "MoE at ") {
				assert.Contains(t, s, "sequences a step: each layer reads the routed experts any of them routes to")
				return true
			}
		}
		return false
	}
	assert.True(t, note("16"))
	assert.False(t, note("1"))
}
