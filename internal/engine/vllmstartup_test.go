package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// Release numbers as pip and vLLM's banner write them.
func TestParseVersion(t *testing.T) {
	for s, want := range map[string]Version{
		"0.11.0": {0, 11, 0}, "v0.21": {0, 21, 0}, "0.6.4.post1": {0, 6, 4}, "0.10.1rc1": {0, 10, 1}, "0.19.0+cu128": {0, 19, 0},
	} {
		v, err := ParseVersion(s)
		require.NoError(t, err, s)
		assert.Equal(t, want, v, s)
	}
	for _, s := range []string{"", "latest", "0", "0.x", "1.2.3.4.5 beta"} {
		_, err := ParseVersion(s)
		assert.Error(t, err, s)
	}
	assert.True(t, Version{0, 9, 2}.Before(Version{0, 21, 0}))
	assert.False(t, Version{0, 21, 0}.Before(Version{0, 21, 0}))
	_, err := ParseVersion(VLLMDefaultVersion)
	assert.NoError(t, err)
}

// vLLM's batch defaults (get_batch_defaults in vllm/engine/arg_utils.py):
// 8192 tokens and 1024 sequences on a GPU of 70 GiB or more that is not an
// A100, 2048 and 256 otherwise; V0 profiles the whole context up to 32k.
// The profile charges the larger of the forward pass and the sampler,
// the fused-MoE workspace on top, and the CUDA graphs from 0.21.0 only.
func TestVLLMStartupOf(t *testing.T) {
	m := model.Lookup("Llama-3.1-8B")
	require.NotNil(t, m)
	v21, v19, v06 := Version{0, 21, 0}, Version{0, 19, 0}, Version{0, 6, 4}
	for _, c := range []struct {
		d            VLLMSetup
		tokens, seqs int
	}{
		{VLLMSetup{Version: v21, TotalBytes: 80 << 30, Name: "NVIDIA H100 80GB HBM3", TP: 1}, 8192, 1024},
		{VLLMSetup{Version: v21, TotalBytes: 80 << 30, Name: "NVIDIA A100-SXM4-80GB", TP: 1}, 2048, 256},
		{VLLMSetup{Version: v21, TotalBytes: 24 << 30, Name: "NVIDIA GeForce RTX 4090", TP: 1}, 2048, 256},
		{VLLMSetup{Version: v21, TotalBytes: 24 << 30, Name: "NVIDIA GeForce RTX 4090", TP: 1, MaxNumSeqs: 8}, 2048, 8},
		{VLLMSetup{Version: v06, TotalBytes: 80 << 30, Name: "NVIDIA H100 80GB HBM3", MaxModelLen: 20000}, 20000, 256},
		{VLLMSetup{Version: v06, TotalBytes: 80 << 30, Name: "NVIDIA H100 80GB HBM3", MaxModelLen: 1024}, 2048, 256},
		{VLLMSetup{Version: v06, TotalBytes: 80 << 30, Name: "NVIDIA H100 80GB HBM3", MaxModelLen: 65536}, 2048, 256},
	} {
		s := VLLMStartupOf(m, c.d)
		assert.Equal(t, c.tokens, s.MaxNumBatchedTokens, "%+v", c.d)
		assert.Equal(t, c.seqs, s.MaxNumSeqs, "%+v", c.d)
	}
	h100 := VLLMSetup{Version: v21, TotalBytes: 80 << 30, Name: "NVIDIA H100 80GB HBM3", TP: 1, Graphs: true}
	s := VLLMStartupOf(m, h100)
	perLogit := calibration.VLLMSamplerBytesPerLogit
	assert.Equal(t, int64(1024*float64(m.Vocab)*perLogit), s.ActivationBytes, "the sampler is the peak")
	assert.Equal(t, int64(calibration.VLLMNonTorchBytes), s.NonTorchBytes)
	assert.Equal(t, int64(calibration.VLLMCUDAGraphBytes), s.CUDAGraphBytes)
	tpu := h100
	tpu.Graphs = false
	assert.Zero(t, VLLMStartupOf(m, tpu).CUDAGraphBytes, "no CUDA graphs off CUDA and ROCm")
	h100.Version = v19
	assert.Zero(t, VLLMStartupOf(m, h100).CUDAGraphBytes, "graphs outside the fraction before 0.21.0")
	h100.TP = 2
	assert.Equal(t, int64(calibration.VLLMNonTorchTPBytes), VLLMStartupOf(m, h100).NonTorchBytes)

	moe := model.Lookup("Qwen3-30B-A3B")
	require.NotNil(t, moe)
	h100.TP = 1
	got := VLLMStartupOf(moe, h100)
	sampler := int64(1024 * float64(moe.Vocab) * perLogit)
	assert.Equal(t, sampler+int64(8192*moe.ExpertsPerToken*moe.Hidden*4), got.ActivationBytes)
}
