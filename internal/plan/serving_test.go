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

// TestServingDecodeChargesEngineCosts: a vLLM batch-1 step of DeepSeek-V3
// fp8 tensor-parallel over 8 H200s pays, besides the weight stream, the
// step time once, the later generation's part time per part (61 layers of
// a mixer and a feed-forward block: 122), the all-reduce latency once per
// part, the MoE time per expert layer (61 less its 3 dense layers = 58)
// and the MLA time per latent-attention layer (all 61), no indexer time
// (V3 has no sparse-attention indexer), and nothing of llama.cpp's
// per-layer time.
func TestServingDecodeChargesEngineCosts(t *testing.T) {
	m, err := modelio.Resolve(model.Spec{Name: "DeepSeek-V3"})
	require.NoError(t, err)
	require.Equal(t, 61, m.Layers)
	require.Equal(t, 3, m.DenseLayers)
	s, ok := specs.ByName("NVIDIA H200 SXM 141GB")
	require.True(t, ok)
	r := NewServingReplay(engine.NameVLLM, m, quant.Level("fp8"), s, 8, 1024)

	base := calibration.Fitted
	base.VLLM = calibration.ServingDecode{}
	charged := base
	charged.VLLM = calibration.ServingDecode{StepSeconds: 1e-3, PartSeconds: 10e-6, PartSecondsLater: 50e-6, AllReduceSeconds: 20e-6,
		MoELayerSeconds: 50e-6, MLALayerSeconds: 200e-6, IndexerSeconds: 300e-6}
	want := 1e-3 + 122*50e-6 + 122*20e-6 + 58*50e-6 + 61*200e-6
	got := 1/r.Decode(charged) - 1/r.Decode(base)
	assert.InDelta(t, want, got, want*0.01, "extra step time, s")

	// llama.cpp's per-layer time is not charged to a vLLM step.
	noLlama := base
	noLlama.LayerLatencyCUDA = 0
	assert.InDelta(t, r.Decode(base), r.Decode(noLlama), 0.01)
}

// TestServingDecodeHybridBlocks: NVIDIA-Nemotron-3-Nano-30B-A3B's 52
// blocks hold one mixer or one MoE block each (hybrid_override_pattern:
// 23 Mamba2, 23 MoE, 6 attention), so a vLLM step pays 52 parts, 52
// all-reduces over 2 GPUs and 23 MoE times, not 52 transformer layers of
// two parts and 52 MoE layers.
func TestServingDecodeHybridBlocks(t *testing.T) {
	m, err := modelio.Resolve(model.Spec{Name: "NVIDIA-Nemotron-3-Nano-30B-A3B"})
	require.NoError(t, err)
	assert.Equal(t, ServingBlocks{Parts: 52, MoE: 23}, CountServingBlocks(m, 0, m.Layers))
	s, ok := specs.ByName("NVIDIA B200 SXM")
	require.True(t, ok)
	r := NewServingReplay(engine.NameVLLM, m, quant.Level("fp8"), s, 2, 1024)
	base := calibration.Fitted
	base.VLLM = calibration.ServingDecode{}
	charged := base
	charged.VLLM = calibration.ServingDecode{PartSecondsLater: 40e-6, AllReduceSeconds: 5e-6, MoELayerSeconds: 30e-6}
	want := 52*40e-6 + 52*5e-6 + 23*30e-6
	assert.InDelta(t, want, 1/r.Decode(charged)-1/r.Decode(base), want*0.01, "extra step time, s")
}

// TestServingBlocksIndexer: DeepSeek-V3.2 runs the sparse-attention
// indexer beside every one of its 61 MLA layers; a stage of half the
// layers holds half of them.
func TestServingBlocksIndexer(t *testing.T) {
	m, err := modelio.Resolve(model.Spec{Name: "DeepSeek-V3.2"})
	require.NoError(t, err)
	assert.Equal(t, ServingBlocks{Parts: 122, MoE: 58, MLA: 61, Indexer: 61}, CountServingBlocks(m, 0, 61))
	assert.Equal(t, 30, CountServingBlocks(m, 0, 30).Indexer)
	assert.Equal(t, 31, CountServingBlocks(m, 30, 61).Indexer)
}

// TestLaterServingGeneration: Hopper, Blackwell and CDNA3 GPUs (by compute
// capability, gfx target or, without either, HBM3 memory) take the later
// per-part time; Ampere, Ada and CDNA2 the earlier.
func TestLaterServingGeneration(t *testing.T) {
	for name, later := range map[string]bool{
		"NVIDIA H100 SXM5 80GB": true, "NVIDIA H20": true, "NVIDIA H200 SXM 141GB": true, "NVIDIA B200 SXM": true, "AMD Instinct MI300X": true,
		"NVIDIA A100 SXM4 80GB": false, "NVIDIA GeForce RTX 4090": false, "NVIDIA L40S": false, "AMD Instinct MI250X": false,
	} {
		s, ok := specs.ByName(name)
		require.True(t, ok, name)
		assert.Equal(t, later, LaterServingGeneration("", &s), name)
	}
	assert.True(t, LaterServingGeneration("9.0", nil), "a detected compute capability")
	assert.False(t, LaterServingGeneration("8.6", nil))
}

// TestServingDecodeOnlyOnGPUs: the vLLM constants, fitted on NVIDIA and
// AMD GPUs, are not charged to a TPU.
func TestServingDecodeOnlyOnGPUs(t *testing.T) {
	tpu := &device{Spec: &specs.Spec{Vendor: "Google"}}
	gpu := &device{Spec: &specs.Spec{Vendor: "AMD"}}
	e := efficiency(calibration.Fitted)
	vllm := (&planning{Request: &Request{Engine: "vllm"}}).requestEngine()
	require.NotNil(t, vllm)
	_, onTPU := e.servingDecode(vllm, &planned{Stages: []stage{{Devices: []*device{tpu}}}})
	_, onGPU := e.servingDecode(vllm, &planned{Stages: []stage{{Devices: []*device{gpu}}}})
	assert.False(t, onTPU)
	assert.True(t, onGPU)
}

// TestServingDecodeStreamsAtVLLMFraction: a vLLM step streams the weights
// at the serving fraction, not llama.cpp's per-class one: halving the
// fraction doubles the stream time of a dense single-GPU step with no
// fixed costs.
func TestServingDecodeStreamsAtVLLMFraction(t *testing.T) {
	m, err := modelio.Resolve(model.Spec{Name: "Llama-3.1-8B"})
	require.NoError(t, err)
	s, ok := specs.ByName("NVIDIA H100 SXM5 80GB")
	require.True(t, ok)
	r := NewServingReplay(engine.NameVLLM, m, quant.Level("bf16"), s, 1, 1)
	full, half := calibration.Fitted, calibration.Fitted
	full.VLLM = calibration.ServingDecode{BandwidthFraction: 1}
	half.VLLM = calibration.ServingDecode{BandwidthFraction: 0.5}
	assert.InDelta(t, 2, r.Decode(full)/r.Decode(half), 0.01)
	// About 16 GB of bf16 weights at the full 3.35 TB/s: about 4.8 ms.
	assert.InDelta(t, 16e9/3350e9, 1/r.Decode(full), 0.6e-3)
}
