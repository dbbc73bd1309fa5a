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

// Each backend's own rule (VLLMBackend): tpu-inference charges nothing
// beside the weights from 0.12.0 (earlier TPU releases profile as the GPU
// worker does); the Gaudi workers take --gpu-memory-utilization of the
// memory free after the weights and the profile run and keep
// VLLM_GRAPH_RESERVED_MEM of it for HPU graphs. The Gaudi figures are the
// log of row vllm-gaudi-docs-gaudi2-llama3.1-8b (vllm_startup.json):
// 94.62 GiB, 15.05 GiB of weights, a 355 MiB profile run, 7.13 GiB for HPU
// graphs and 64.17 GiB for the KV cache at utilization 0.9.
func TestVLLMStartupOfBackends(t *testing.T) {
	m := model.Lookup("Llama-3.1-8B")
	require.NotNil(t, m)
	tpu := VLLMSetup{Version: Version{0, 26, 0}, TotalBytes: 16 << 30, Name: "TPU v5e", TP: 1, Backend: VLLMBackendTPU}
	s := VLLMStartupOf(m, tpu)
	assert.Zero(t, s.Bytes(), "tpu-inference charges nothing beside the weights")
	c, g := s.Charge(tpu.TotalBytes, 10<<30, 0.92)
	assert.Zero(t, c)
	assert.Zero(t, g)
	tpu.Version = Version{0, 11, 0}
	assert.Equal(t, VLLMBackendGPU, tpu.Rule())
	assert.Positive(t, VLLMStartupOf(m, tpu).Bytes(), "torch_xla's worker profiled a forward pass")

	gaudi := VLLMSetup{Version: Version{0, 6, 4}, TotalBytes: gibOf(94.62), Name: "Gaudi 2", TP: 1, MaxModelLen: 131072, Backend: VLLMBackendGaudi}
	s = VLLMStartupOf(m, gaudi)
	assert.True(t, s.OfFree)
	assert.Zero(t, s.CUDAGraphBytes)
	s.ActivationBytes = 355 << 20 // the printed profile run
	weights := gibOf(15.05)
	c, g = s.Charge(gaudi.TotalBytes, weights, 0.9)
	kv := float64(int64(float64(gaudi.TotalBytes)*0.9)-weights-c) / (1 << 30)
	assert.InDelta(t, 64.17, kv, 0.01, "KV cache")
	assert.InDelta(t, 7.13, float64(g)/(1<<30), 0.01, "HPU graphs")
	// Weights that fill most of the device: the fork would leave the cache
	// more than total x utilization less the weights; the charge is held
	// to the profile run.
	c, g = s.Charge(gaudi.TotalBytes, 80<<30, 0.9)
	assert.Equal(t, s.Bytes(), c)
	assert.Zero(t, g)
	c, g = s.Charge(gaudi.TotalBytes, 200<<30, 0.9)
	assert.Equal(t, s.Bytes(), c, "weights above the device")
	assert.Zero(t, g)
}

func gibOf(g float64) int64 { return int64(g * (1 << 30)) }
