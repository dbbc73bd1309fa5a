package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/modelio"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// TestServingDecodeChargesEngineCosts: a vLLM batch-1 step of DeepSeek-V3
// fp8 tensor-parallel over 8 H200s pays, besides the weight stream, the
// step time once, the layer time per layer (61), the all-reduce latency
// twice per layer, the MoE time per expert layer (61 less its 3 dense
// layers = 58) and the MLA time per latent-attention layer (all 61), and
// nothing of llama.cpp's per-layer time.
func TestServingDecodeChargesEngineCosts(t *testing.T) {
	m, err := modelio.Resolve(model.Spec{Name: "DeepSeek-V3"})
	require.NoError(t, err)
	require.Equal(t, 61, m.Layers)
	require.Equal(t, 3, m.DenseLayers)
	s, ok := specs.ByName("NVIDIA H200 SXM 141GB")
	require.True(t, ok)
	r := NewServingReplay(m, quant.Level("fp8"), s, 8, 1024)

	base := calibration.Fitted
	base.VLLM = calibration.ServingDecode{}
	charged := base
	charged.VLLM = calibration.ServingDecode{StepSeconds: 1e-3, LayerSeconds: 100e-6, AllReduceSeconds: 20e-6, MoELayerSeconds: 50e-6, MLALayerSeconds: 200e-6}
	want := 1e-3 + 61*100e-6 + 2*61*20e-6 + 58*50e-6 + 61*200e-6
	got := 1/r.Decode(charged) - 1/r.Decode(base)
	assert.InDelta(t, want, got, want*0.01, "extra step time, s")

	// llama.cpp's per-layer time is not charged to a vLLM step.
	noLlama := base
	noLlama.LayerLatencyCUDA = 0
	assert.InDelta(t, r.Decode(base), r.Decode(noLlama), 0.01)
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
	r := NewServingReplay(m, quant.Level("bf16"), s, 1, 1)
	full, half := calibration.Fitted, calibration.Fitted
	full.VLLM = calibration.ServingDecode{BandwidthFraction: 1}
	half.VLLM = calibration.ServingDecode{BandwidthFraction: 0.5}
	assert.InDelta(t, 2, r.Decode(full)/r.Decode(half), 0.01)
	// About 16 GB of bf16 weights at the full 3.35 TB/s: about 4.8 ms.
	assert.InDelta(t, 16e9/3350e9, 1/r.Decode(full), 0.6e-3)
}
