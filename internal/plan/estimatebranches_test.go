package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A tensor-parallel step whose all-reduces take more than half of it is
// bound by the interconnect. Llama-3.1-70B bf16 under vLLM on the DGX
// H100's NVSwitch is bound by memory bandwidth; the same plan with its
// links slowed to 0.01 GB/s (made slow, as in
// TestLlamaCPPLayerSplitChargesOneHandOff, so that the link dominates) is
// bound by the interconnect, and slower.
func TestTensorParallelStepOnASlowLinkIsInterconnectBound(t *testing.T) {
	req := planningOf(t, request(t, `{"model":{"name":"llama-3.1-70b"},"engine":"vllm","quant":"bf16","context_length":4096}`, eightH100(t, false)))
	ch, err := choose(req)
	require.NoError(t, err)
	pl := ch.Plan
	require.Equal(t, StrategyTensor, pl.Strategy)
	require.Greater(t, len(pl.Stages[0].Devices), 1)
	fast := estimateThroughput(&pl, req, 0)
	require.Positive(t, fast.DecodeTokensPerS)
	assert.Equal(t, BoundBandwidth, fast.Bound)

	for _, d := range pl.Stages[0].Devices {
		d.LinkGBs, d.MeshLinkGBs = 0.01, 0
	}
	slow := estimateThroughput(&pl, req, 0)
	require.Positive(t, slow.DecodeTokensPerS)
	assert.Equal(t, BoundInterconnect, slow.Bound)
	assert.Less(t, slow.DecodeTokensPerS, fast.DecodeTokensPerS)
}

// A model whose active parameters are not known (0) is estimated as a
// dense one: its prompt multiplies all of its parameters. Llama-3.1-8B is
// dense, so clearing its active count leaves the figures as they are.
func TestUnknownActiveParamsAreEstimatedAsDense(t *testing.T) {
	req := planningOf(t, request(t, `{"model":{"name":"llama-3.1-8b"},"engine":"llama.cpp","quant":"q8_0","context_length":4096}`, eightH100(t, false)))
	ch, err := choose(req)
	require.NoError(t, err)
	pl := ch.Plan
	require.Equal(t, req.Model.Params, req.Model.ActiveParams)
	want := estimateThroughput(&pl, req, 0)
	require.Positive(t, want.PrefillTokensPerS)

	m := *req.Model
	m.ActiveParams = 0
	req.Model = &m
	got := estimateThroughput(&pl, req, 0)
	assert.Equal(t, want.PrefillTokensPerS, got.PrefillTokensPerS)
	assert.Equal(t, want.DecodeTokensPerS, got.DecodeTokensPerS)
}

// The decode step of a streamed vLLM offload (--cpu-offload-gb) of a MoE
// model charges the GPU's memory with the extra expert reads of a batch
// only for the experts the GPU holds (streamedGPUExpertReads): the host's
// cross PCIe in streamedStepSeconds. Mixtral-8x7B bf16 on the RTX 4090
// (TestVLLMOffloadOfMoEReadsTheBatchsExperts): what the step reads from
// GPU memory is found from how its time changes with the GPU's bandwidth
// (at a hundredth of it, where the GPU's reads dominate the rounded
// figure), at 8 sequences and at 1; the difference is the GPU's extra
// expert reads plus 7 more reads of one sequence's KV cache.
func TestStreamedMoEOffloadChargesTheGPUItsOwnExpertsExtraReads(t *testing.T) {
	r := rtx4090Offload(t, true)
	const body = `{"model":{"name":"Mixtral-8x7B-v0.1"},"engine":"vllm","quant":"bf16","cpu_offload":true,"context_length":4096,"batch_size":8}`
	req := planningOf(t, request(t, body, r))
	ch, err := choose(req)
	require.NoError(t, err)
	pl := ch.Plan
	require.True(t, pl.streamed())
	require.Equal(t, 8, pl.runningOf(req))
	gpu := pl.Stages[0].Devices[0]
	serving, ok := fitted.servingDecode(planEngine(&pl, req), &pl)
	require.True(t, ok)
	f := serving.BandwidthFraction
	require.Positive(t, f)

	// gpuBytes is what a step at batch reads from GPU memory.
	bw := gpu.BandwidthGBs
	gpuBytes := func(batch int) float64 {
		req.BatchSize = batch
		stepAt := func(gbs float64) float64 {
			gpu.BandwidthGBs = gbs
			est := estimateThroughput(&pl, req, 0)
			require.Positive(t, est.DecodeTokensPerS)
			return float64(pl.runningOf(req)) / est.DecodeTokensPerS
		}
		slow, fast := stepAt(bw/100), stepAt(bw)
		gpu.BandwidthGBs = bw
		return (slow - fast) * f * 1e9 / (100/bw - 1/bw)
	}
	one, eight := gpuBytes(1), gpuBytes(8)

	c := pl.Costs
	kv := c.VLLM.readKV(float64(pl.Stages[0].Part.KV), 1, c.kvSplit(1))
	own := streamedGPUExpertReads(&pl, 8)
	whole := c.batchExpertReads(0, c.Layers, 1, 8)
	require.Less(t, own, whole/2, "most experts are in host memory")
	want := own + (pagedSequences(&pl, 8)-pagedSequences(&pl, 1))*kv
	assert.InDelta(t, want, eight-one, want*0.01, "GPU reads %.3g GB more at 8 sequences; its own experts' extra %.3g GB, all experts' %.3g GB", (eight-one)/1e9, own/1e9, whole/1e9)
}
