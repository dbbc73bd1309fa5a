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

// sglangReplay is a batch-1 SGLang run of name at level on n GPUs of the
// record spec, decoding at 1024 tokens.
func sglangReplay(t *testing.T, name, level, spec string, n int) *Replay {
	t.Helper()
	m, err := modelio.Resolve(model.Spec{Name: name})
	require.NoError(t, err)
	s, ok := specs.ByName(spec)
	require.True(t, ok, spec)
	return NewServingReplay(engine.NameSGLang, m, quant.Level(level), s, n, 1024)
}

// TestSGLangPlanPaysSGLangConstants: an SGLang step of DeepSeek-V3 fp8 over
// 8 H200s (HBM GPUs, which SGLang's rows cover) pays SGLang's fixed costs
// (step once, the later-generation part time per part — a layer's mixer
// and its feed-forward block, 122 over 61 layers — one all-reduce per
// part, MoE per expert layer, MLA per latent-attention layer; the earlier
// generations' part time not at all, an H200 being Hopper) and none of
// vLLM's.
func TestSGLangPlanPaysSGLangConstants(t *testing.T) {
	r := sglangReplay(t, "DeepSeek-V3", "fp8", "NVIDIA H200 SXM 141GB", 8)
	base := calibration.Fitted
	base.SGLang = calibration.ServingDecode{BandwidthFraction: 1}
	base.VLLM = calibration.ServingDecode{BandwidthFraction: 1}
	charged := base
	charged.SGLang = calibration.ServingDecode{BandwidthFraction: 1, StepSeconds: 1e-3, PartSeconds: 300e-6, PartSecondsLater: 100e-6, AllReduceSeconds: 20e-6, MoELayerSeconds: 50e-6, MLALayerSeconds: 200e-6}
	want := 1e-3 + 122*100e-6 + 122*20e-6 + 58*50e-6 + 61*200e-6
	assert.InDelta(t, want, 1/r.Decode(charged)-1/r.Decode(base), want*0.01, "extra step time, s")

	vllmOnly := base
	vllmOnly.VLLM = charged.SGLang
	assert.InDelta(t, r.Decode(base), r.Decode(vllmOnly), 0.01, "vLLM's constants are not charged to an SGLang plan on HBM GPUs")

	notes := strings.Join(estimateWith(r.decodePlan, r.decodeReq, 0, efficiency(charged)).Assumptions, "\n")
	assert.Contains(t, notes, "SGLang batch-1 decode streams")
	assert.NotContains(t, notes, "vLLM batch-1 decode", "vLLM's note is not an SGLang plan's")
	assert.NotContains(t, notes, calibration.SGLangOffHBM)
}

// TestSGLangFallsBackToVLLMOffHBM: SGLang's rows are all of HBM GPUs, so an
// SGLang plan on a GDDR GPU (an RTX 4090) pays vLLM's constants, whose fit
// rows include an RTX 4090, and its assumptions say so.
func TestSGLangFallsBackToVLLMOffHBM(t *testing.T) {
	r := sglangReplay(t, "Qwen3-4B", "bf16", "NVIDIA GeForce RTX 4090", 1)
	c := calibration.Fitted
	c.VLLM = calibration.ServingDecode{BandwidthFraction: 0.8, PartSeconds: 50e-6, PartSecondsLater: 50e-6}
	c.SGLang = calibration.ServingDecode{BandwidthFraction: 0.5, PartSeconds: 150e-6, PartSecondsLater: 150e-6}
	asVLLM := c
	asVLLM.SGLang = c.VLLM
	assert.InDelta(t, r.Decode(asVLLM), r.Decode(c), 0.01)

	notes := strings.Join(estimateWith(r.decodePlan, r.decodeReq, 0, efficiency(c)).Assumptions, "\n")
	assert.Contains(t, notes, "vLLM's constants")
	assert.Contains(t, notes, "no SGLang row")
}

// TestSGLangValidatedOnNamesItsRows: an SGLang plan's validated_on names
// SGLang's rows and the GPUs they ran on, not llama.cpp's, and stays not
// validated (the held-out SGLang rows do not meet the 12 % of a validated
// figure); on a GDDR GPU it says vLLM's constants stand in.
func TestSGLangValidatedOnNamesItsRows(t *testing.T) {
	hbm := sglangReplay(t, "Llama-3.1-70B", "bf16", "NVIDIA H100 SXM5 80GB", 4)
	v, ok := validatedOn(hbm.decodePlan, hbm.decodeReq)
	assert.False(t, ok)
	assert.True(t, strings.HasPrefix(v, NotValidated), v)
	assert.Contains(t, v, "SGLang")
	assert.Contains(t, v, "serving_decode.json")
	assert.NotContains(t, v, "fitted on llama.cpp")

	gddr := sglangReplay(t, "Qwen3-4B", "bf16", "NVIDIA GeForce RTX 4090", 1)
	v, ok = validatedOn(gddr.decodePlan, gddr.decodeReq)
	assert.False(t, ok)
	assert.Contains(t, v, "vLLM's constants")
}
