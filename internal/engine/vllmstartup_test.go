package engine

import (
	"strings"
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

// Before 0.19.0 vLLM's sampler warm-up ran top-k and top-p through
// PyTorch's sort (apply_top_k_top_p in vllm/v1/sample/ops/topk_topp_sampler.py,
// replaced by the Triton kernel of PR 33538), which holds more per logit.
func TestVLLMSortSamplerBeforeTriton(t *testing.T) {
	m := model.Lookup("Llama-3.1-8B")
	require.NotNil(t, m)
	h100 := VLLMSetup{Version: Version{0, 10, 1}, TotalBytes: 80 << 30, Name: "NVIDIA H100 80GB HBM3", TP: 1, Graphs: true}
	logits := 1024 * float64(m.Vocab)
	assert.Equal(t, int64(logits*calibration.VLLMSortSamplerBytesPerLogit), VLLMStartupOf(m, h100).ActivationBytes)
	h100.Version = Version{0, 19, 0}
	assert.Equal(t, int64(logits*calibration.VLLMSamplerBytesPerLogit), VLLMStartupOf(m, h100).ActivationBytes)
	assert.Greater(t, calibration.VLLMSortSamplerBytesPerLogit, 2*calibration.VLLMSamplerBytesPerLogit,
		"PR 33538 measured PyTorch's path at 3.2 times the Triton kernel's memory")
}

// TestVLLMMarlinMXFP4Padding: vLLM's Marlin MXFP4 MoE backend pads each
// expert to the kernel's tiles (intermediate per rank to a multiple of
// 128, hidden to 256: Mxfp4MoEMethod.create_weights in
// vllm/model_executor/layers/quantization/mxfp4.py). gpt-oss-120b on one
// H100 under 0.10.1 (whose log warns that the Marlin kernel is used,
// vllm issue 23278) loads 65.97 GiB where its checkpoint holds 60.7: the
// padding of 2880 x 2880 experts to 2944 x 3072 is 5.1 GiB. 0.19.0 on the
// same GPU uses the Triton backend (its log: "Using 'TRITON' Mxfp4 MoE
// backend"), which the rule leaves alone; an A100 (8.0) is Marlin in
// every release.
func TestVLLMMarlinMXFP4Padding(t *testing.T) {
	m := model.Lookup("gpt-oss-120b")
	require.NotNil(t, m)
	h100 := VLLMSetup{Version: Version{0, 10, 1}, TotalBytes: 80 << 30, Name: "NVIDIA H100", TP: 1, MaxModelLen: 8192,
		Graphs: true, MXFP4Experts: true, Capability: "9.0"}
	st := VLLMStartupOf(m, h100)
	total := float64(st.MoEPaddingBytesPerLayer) * float64(m.Layers) / (1 << 30)
	// 128 experts x 3 x (2944 x 3072 - 2880 x 2880) weights x 4.25 bits.
	want := 128 * 3 * float64(2944*3072-2880*2880) * 4.25 / 8 * 36 / (1 << 30)
	assert.InDelta(t, want, total, 0.01)
	assert.InDelta(t, 5.2, total, 0.1, "65.97 GiB loaded less the checkpoint's 60.7")
	assert.Zero(t, st.Bytes()-VLLMStartupOf(m, withoutMXFP4(h100)).Bytes(), "the padding is weights, not the profile's charge")

	h100.Version = Version{0, 19, 0}
	assert.Zero(t, VLLMStartupOf(m, h100).MoEPaddingBytesPerLayer, "0.19.0 uses the Triton backend on an H100")
	a100 := h100
	a100.Capability = "8.0"
	assert.Positive(t, VLLMStartupOf(m, a100).MoEPaddingBytesPerLayer, "Marlin on an A100 in every release")
	assert.Zero(t, VLLMStartupOf(m, withoutMXFP4(a100)).MoEPaddingBytesPerLayer, "bf16 experts are not padded by this rule")
	b200 := h100
	b200.Capability = "10.0"
	assert.Zero(t, VLLMStartupOf(m, b200).MoEPaddingBytesPerLayer, "Blackwell has FP4 kernels")

	// gpt-oss-20b on an A100 under 0.19.0 (https://myoceane.fr/index.php/ai-vllm-a100-gemma-4/,
	// row myoceane-a100-gpt-oss-20b of vllm_startup.json): "Model loading
	// took 13.72 GiB" for a checkpoint of 12.80 GiB.
	small := model.Lookup("gpt-oss-20b")
	require.NotNil(t, small)
	a100.Version = Version{0, 19, 0}
	pad := float64(VLLMStartupOf(small, a100).MoEPaddingBytesPerLayer) * float64(small.Layers) / (1 << 30)
	assert.InDelta(t, 13.72-12.80, pad, 0.1)

	// TP 2 splits the intermediate first: 1440 pads to 1536.
	a100.TP = 2
	perRank := 128 * 3 * float64(1536*3072-1440*2880) * 4.25 / 8
	assert.InDelta(t, perRank, float64(VLLMStartupOf(m, a100).MoEPaddingBytesPerLayer), 1<<20)
}

func withoutMXFP4(s VLLMSetup) VLLMSetup {
	s.MXFP4Experts = false
	return s
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

// namesA100 answers as the lower-cased comparison it replaces, on the GPU
// names of testdata/machines and on cases and runes around the match.
func TestNamesA100(t *testing.T) {
	for _, name := range []string{
		"NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe", "NVIDIA A100-SXM4-80GB MIG 1g.20gb",
		"NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA A10", "NVIDIA A40", "a100", "A100", "xA10",
		"", "a", "A10 0", "\u0130A100", "\u212a a100", "\xffA100", "\u00c5100",
	} {
		assert.Equal(t, strings.Contains(strings.ToLower(name), "a100"), namesA100(name), name)
	}
}

// Qwen3-VL's deepstack buffers: three levels of 8192 batched tokens of the
// 4096-wide language model at 2 bytes, 192 MiB on each rank; none for a
// model without deepstack levels.
func TestVLLMDeepstackBytes(t *testing.T) {
	m := &model.Model{Hidden: 4096, VisionParams: 1, VisionDeepstack: 3}
	assert.Equal(t, int64(3*8192*4096*2), VLLMDeepstackBytes(m, 8192, 2))
	assert.Equal(t, int64(192<<20), VLLMDeepstackBytes(m, 8192, 2))
	assert.Zero(t, VLLMDeepstackBytes(&model.Model{Hidden: 4096, VisionParams: 1}, 8192, 2))
	assert.Zero(t, VLLMDeepstackBytes(nil, 8192, 2))
}

// A prompt's chunk under `vllm serve` is V1's default
// --max-num-batched-tokens (EngineArgs.get_batch_defaults in
// vllm/engine/arg_utils.py, vllm-project/vllm at 99d7eb5d): 8192 on a GPU
// of 70 GiB or more whose name does not contain "a100", else 2048.
func TestVLLMServeChunkTokens(t *testing.T) {
	assert.Equal(t, 8192, VLLMServeChunkTokens(80<<30, "NVIDIA H100 80GB HBM3"))
	assert.Equal(t, 8192, VLLMServeChunkTokens(192<<30, "NVIDIA B200"))
	assert.Equal(t, 2048, VLLMServeChunkTokens(80<<30, "NVIDIA A100-SXM4-80GB"), "PR 17885 keeps the A100 at 2048")
	assert.Equal(t, 2048, VLLMServeChunkTokens(24<<30, "NVIDIA GeForce RTX 4090"))
}
