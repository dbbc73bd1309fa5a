package plan

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

func TestUnknownDeviceIsInvalidArgument(t *testing.T) {
	r := reg(t, nil)
	r.Devices = append(r.Devices, h100(0))
	require.NoError(t, r.Validate())
	req := request(t, `{"model":{"params_b":7},"devices":["cuda:7"]}`, r)
	_, err := PlanSharding(req)
	require.Error(t, err)
	assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err))
	_, err = SuggestQuant(req)
	assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err))
}

// Issue 12 item 2: a context beyond the model's maximum is refused when
// asked for, and the default is lowered to the model's maximum and said;
// --max-model-len is never above the model's limit.
func TestContextBeyondTheModel(t *testing.T) {
	_, err := decode([]byte(`{"model":{"name":"llama-3.1-70b"},"context_length":200000}`))
	require.Error(t, err)
	assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err))
	assert.Contains(t, errs.MessageOf(err), "131072")

	r := reg(t, []registry.Device{h100(0)})
	a := shard(t, request(t, `{"model":{"name":"llama-3.1-8b"},"context_length":131072,"engine":"vllm"}`, r))
	require.True(t, a.Fits.Yes())
	assert.Contains(t, strings.Join(a.EngineArgs[engineVLLM], " "), "--max-model-len 131072")

	small := request(t, `{"model":{"name":"TinyLlama-1.1B-Chat-v1.0"},"engine":"vllm"}`, r)
	require.Positive(t, small.Model.MaxContext)
	require.Less(t, small.Model.MaxContext, DefaultContextLength, "the catalog's TinyLlama-1.1B (2048 tokens) is shorter than the default context")
	assert.Equal(t, small.Model.MaxContext, small.ContextLength)
	a = shard(t, small)
	require.True(t, a.Fits.Yes())
	args := a.EngineArgs[engineVLLM]
	i := slices.Index(args, "--max-model-len")
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, strconv.Itoa(small.Model.MaxContext), args[i+1])
	assert.Contains(t, strings.Join(a.Warnings, "\n"), "defaults to the model's maximum context")
	assert.LessOrEqual(t, a.MaxContextLength, small.Model.MaxContext)
}

// TestFlashAttentionOff: "flash_attention": false (llama.cpp -fa off) sizes
// the working buffer for the fp32 attention scores of a micro-batch over the
// whole context; absent or true, the buffer does not grow with the context.
func TestFlashAttentionOff(t *testing.T) {
	act := func(body string) int64 {
		r, err := decode([]byte(body))
		require.NoError(t, err)
		return planningOf(t, r).estimate("fp16", r.ContextLength, r.BatchSize).ActivationsBytes
	}
	on := act(`{"model":{"name":"Llama-3.2-1B"},"context_length":32768,"engine":"llama.cpp"}`)
	assert.Equal(t, on, act(`{"model":{"name":"Llama-3.2-1B"},"context_length":32768,"engine":"llama.cpp","flash_attention":true}`))
	off := act(`{"model":{"name":"Llama-3.2-1B"},"context_length":32768,"engine":"llama.cpp","flash_attention":false}`)
	// llama.cpp 34af94cd allocated 2134 MiB for this (internal/calibration/data/llamacpp_measurements.json).
	assert.InEpsilon(t, 2134.0, float64(off)/(1<<20), 0.02)
	assert.Greater(t, off, 7*on)
}

// Planning keeps its state (the weights table, the training budget rule) in
// its own planning value: the request is the same after every answer, so a
// host may ask several questions with one request.
func TestAnswersLeaveTheRequestAlone(t *testing.T) {
	r := reg(t, []registry.Device{h100(0), h100(1)}, link(registry.LinkNVSwitch, 900, "cuda:0", "cuda:1"))
	req := request(t, `{"model":{"name":"Llama-3.1-70B"},"training":{"method":"lora"}}`, r)
	before := *req
	training := *req.Training
	plan1 := shard(t, req)
	_, err := SuggestQuant(req)
	require.NoError(t, err)
	_, err = EstimateTraining(req)
	require.NoError(t, err)
	assert.Equal(t, before, *req)
	assert.Equal(t, training, *req.Training)
	assert.Equal(t, plan1, shard(t, req), "a plan after a training estimate is the plan before it")
}
