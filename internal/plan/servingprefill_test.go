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

// A serving prompt runs in passes of up to Chunk tokens: each pass is its
// matmuls or one read of the weights, whichever is longer, plus its
// all-reduces; the attention FLOPs run at the matmuls' rate.
func TestServingPromptSeconds(t *testing.T) {
	in := servingPromptInputs{MatmulParams: 1e9, Prompt: 3000, Chunk: 1000, PeakTFLOPS: 100, TP: 1, MFU: 0.5,
		WeightBytes: 2e9, WeightGBs: 1000}
	// Compute: 2e9 FLOPs a token × 1000 tokens at 5e13 FLOP/s = 40 ms a
	// pass; the weights, 2 ms a pass: three passes of 40 ms.
	assert.InDelta(t, 3*40e-3/3000, servingPromptSeconds(in), 1e-12)

	// A weight read longer than the matmuls sets each pass: 3 × 100 ms.
	slow := in
	slow.WeightGBs = 20
	assert.InDelta(t, 3*100e-3/3000, servingPromptSeconds(slow), 1e-12)

	// A last, shorter chunk: 2500 tokens are 40 ms + 20 ms of matmuls.
	short := in
	short.Prompt = 2500
	assert.InDelta(t, (2*40e-3+20e-3)/2500, servingPromptSeconds(short), 1e-12)

	// Attention: 1e9 FLOPs a token more, at the same 5e13 FLOP/s.
	attn := in
	attn.Attention = 1e9
	assert.InDelta(t, (3*40e-3+3000*1e9/5e13)/3000, servingPromptSeconds(attn), 1e-12)

	// Tensor parallel over 2: the matmuls halve, and each pass pays its
	// all-reduces, each the fixed time plus a ring of the chunk's 16-bit
	// activations (2 × 1/2 × 1000 tokens × 4096 × 2 bytes over 100 GB/s).
	tp := in
	tp.TP, tp.AllReduces, tp.AllReduceSeconds, tp.Hidden, tp.LinkGBs = 2, 10, 10e-6, 4096, 100
	ar := 10 * (10e-6 + 1000*4096*2/100e9)
	assert.InDelta(t, 3*(20e-3+ar)/3000, servingPromptSeconds(tp), 1e-12)

	// No chunk: the whole prompt in one pass, whose 120 ms of matmuls
	// outlast its one 100 ms read of the weights.
	whole := slow
	whole.Chunk = 0
	assert.InDelta(t, 120e-3/3000, servingPromptSeconds(whole), 1e-12)
}

// A vLLM prompt pays none of llama.cpp's per-pass costs: its prefill does
// not move with llama.cpp's per-layer prompt time, and an int4 (AWQ,
// Marlin) plan reads its packed weights, with no dequantized copy, so
// its prefill is at least the bf16 plan's on the same GPUs. Under
// llama.cpp the per-layer time still counts.
func TestServingPromptHasNoLlamaCppPassCosts(t *testing.T) {
	m, err := modelio.Resolve(model.Spec{Name: "Qwen2.5-72B"})
	require.NoError(t, err)
	s, ok := specs.ByName("NVIDIA H100 SXM5 80GB")
	require.True(t, ok)
	base := calibration.Fitted
	bigger := base
	bigger.PrefillLayerLatency *= 10
	bigger.PrefillLayerLatencyPreMMQ *= 10

	r := NewServingPromptReplay(engine.NameVLLM, m, quant.Level("bf16"), s, 2, 2048, 2048)
	require.Positive(t, r.Prefill(base))
	assert.Equal(t, r.Prefill(base), r.Prefill(bigger), "vLLM pays no llama.cpp per-layer time")
	same := base
	same.VLLMPromptRequestSeconds = same.ServingPromptRequestSeconds
	assert.Equal(t, r.Prefill(same), NewServingPromptReplay(engine.NameSGLang, m, quant.Level("bf16"), s, 2, 2048, 2048).Prefill(same),
		"SGLang's chunk on an H100 (8192) holds the 2048-token prompt in one pass as vLLM's does")

	int4 := NewServingPromptReplay(engine.NameVLLM, m, quant.Level("int4"), s, 2, 2048, 2048)
	assert.GreaterOrEqual(t, int4.Prefill(base), r.Prefill(base), "int4 runs Marlin at the 16-bit peak, reading fewer bytes")

	llama := NewServingPromptReplay(engine.NameLlamaCPP, m, quant.Level("bf16"), s, 2, 2048, 2048)
	assert.Greater(t, llama.Prefill(base), llama.Prefill(bigger), "llama.cpp's passes pay the per-layer time")
}

// Each serving engine's time to first token carries its own fixed time
// per request (engine.PromptRequestTimer): on the same prompt and GPUs,
// vLLM's and SGLang's times differ by exactly the difference of their
// request times.
func TestServingPromptRequestTimeIsTheEngines(t *testing.T) {
	m, err := modelio.Resolve(model.Spec{Name: "Qwen2.5-72B"})
	require.NoError(t, err)
	s, ok := specs.ByName("NVIDIA H100 SXM5 80GB")
	require.True(t, ok)
	c := calibration.Fitted
	c.VLLMPromptRequestSeconds, c.ServingPromptRequestSeconds = 0.010, 0.090
	const prompt = 2048
	ttft := func(en string) float64 {
		p := NewServingPromptReplay(en, m, quant.Level("bf16"), s, 2, prompt, prompt).Prefill(c)
		require.Positive(t, p, en)
		return prompt / p
	}
	assert.InDelta(t, 0.080, ttft(engine.NameSGLang)-ttft(engine.NameVLLM), 1e-4, "SGLang pays its 90 ms, vLLM its 10 ms (to the rounding of tokens/s)")
	vllm, _ := engine.Lookup(engine.NameVLLM)
	assert.Contains(t, servingPrefillNote(vllm, 8192, 0.64, "bf16", 8e-6, efficiency(c).promptRequestSeconds(vllm)), "and 10 ms per request")
}

// A serving prompt's chunk is the engine's default for the GPU, read from
// its record when the device carries no detected memory or name: vLLM's
// 2048 on an A100 (PR 17885's exception), 8192 on an H100; SGLang's 8192
// for an 80 GB GPU.
func TestServingPromptChunksByGPU(t *testing.T) {
	a100, ok := specs.ByName("NVIDIA A100 SXM4 80GB")
	require.True(t, ok)
	h100, ok := specs.ByName("NVIDIA H100 SXM5 80GB")
	require.True(t, ok)
	vllm, ok := engine.Lookup(engine.NameVLLM)
	require.True(t, ok)
	assert.Equal(t, 2048, servingChunkTokens(vllm, []*device{{Spec: &a100}}))
	assert.Equal(t, 8192, servingChunkTokens(vllm, []*device{{Spec: &h100}}))
	sg, ok := engine.Lookup(engine.NameSGLang)
	require.True(t, ok)
	assert.Equal(t, 8192, servingChunkTokens(sg, []*device{{Spec: &a100}}), "SGLang's 80 GB tier")
}

// No serving prompt figure goes above what the GPUs' dense peak allows:
// prefill tokens/s × 2 × active weights ≤ peak × TP, for dense and MoE
// models from 8B to 671B on each GPU record that a serving fit row runs
// on (A100, H100, H200, B200, MI300X), at TP 1 to 8 and prompts of 2,048
// and 32,768 tokens. Llama-3.1-8B on 8 MI300X, the figure that rose
// 30-fold under the unfitted model, stays below the bound.
func TestServingPromptWithinPeak(t *testing.T) {
	gpus := []string{"NVIDIA A100 SXM4 80GB", "NVIDIA H100 SXM5 80GB", "NVIDIA H200 SXM 141GB", "NVIDIA B200 SXM", "AMD Instinct MI300X"}
	models := []string{"Llama-3.1-8B", "Qwen2.5-72B", "Qwen3-30B-A3B", "DeepSeek-R1"}
	checked := 0
	for _, g := range gpus {
		s, ok := specs.ByName(g)
		require.True(t, ok, g)
		for _, name := range models {
			m, err := modelio.Resolve(model.Spec{Name: name})
			require.NoError(t, err, name)
			active := float64(m.Params)
			if m.ActiveParams > 0 {
				active = float64(m.ActiveParams)
			}
			for _, tp := range []int{1, 2, 4, 8} {
				for _, prompt := range []int{2048, 32768} {
					for _, level := range []string{"bf16", "fp8"} {
						peak := s.BF16TFLOPS
						if level == "fp8" && s.FP8TFLOPS > 0 {
							peak = s.FP8TFLOPS
						}
						p := NewServingPromptReplay(engine.NameVLLM, m, quant.Level(level), s, tp, prompt, prompt).Prefill(calibration.Fitted)
						if p <= 0 {
							continue
						}
						checked++
						assert.LessOrEqual(t, p*2*active, peak*1e12*float64(tp), "%s %s on %d %s, %d tokens: %.0f tokens/s", name, level, tp, g, prompt, p)
					}
				}
			}
		}
	}
	assert.Greater(t, checked, 100)
}

// The ninth rule's form of a MoE prompt pass (data/serving_prefill.json,
// switched off in the shipped constants): its dense part and its routed
// experts' part, each the longer of its matmuls and its read, summed; the
// experts' read only of those the pass's tokens touch.
func TestServingPromptMoEPass(t *testing.T) {
	// 1 - (1 - k/E)^T: Qwen3-30B-A3B's 8 of 128 experts, a 15-token pass
	// touches 62 % of them, 610 tokens all; k = E touches all at once.
	assert.InDelta(t, 0.6202, touchedExperts(15, 128, 8), 5e-5)
	assert.InDelta(t, 1, touchedExperts(610, 128, 8), 1e-9)
	assert.InDelta(t, 0.0625, touchedExperts(1, 128, 8), 1e-12)
	assert.Equal(t, 1.0, touchedExperts(3, 4, 4))
	assert.Zero(t, touchedExperts(0, 128, 8))

	in := servingPromptInputs{MatmulParams: 1e9, Prompt: 1000, Chunk: 1000, PeakTFLOPS: 100, TP: 1, MFU: 0.5,
		WeightBytes: 10e9, WeightGBs: 1000, RoutedMatmulShare: 0.5, RoutedByteShare: 0.9, Experts: 100, ExpertsPerToken: 10}
	// Off (no MoE efficiency): one pass, the longer of 40 ms of matmuls
	// and a 10 ms read of every weight.
	assert.InDelta(t, 40e-3/1000, servingPromptSeconds(in), 1e-12)

	// On at 10 %: dense max(20 ms of matmuls at 50 %, 1 ms read of the
	// non-expert tenth) + experts max(1e12 FLOPs at 1e13 FLOP/s = 100 ms,
	// a read of the touched 9 GB) = 120 ms.
	on := in
	on.MoEMFU = 0.1
	assert.InDelta(t, 120e-3/1000, servingPromptSeconds(on), 1e-12)

	// A 2-token pass: dense max(40 us, 1 ms) + experts max(200 us, 9 ms ×
	// touched(2) = 9 ms × 0.19 = 1.71 ms): the read of the experts the two
	// tokens touch, not of all of them (9 ms).
	few := on
	few.Prompt, few.Chunk = 2, 2
	assert.InDelta(t, (1e-3+9e-3*0.19)/2, servingPromptSeconds(few), 1e-12)

	// A dense model has no routed part, whatever the MoE efficiency.
	dense := in
	dense.MoEMFU, dense.RoutedMatmulShare, dense.RoutedByteShare, dense.Experts, dense.ExpertsPerToken = 0.1, 0, 0, 0, 0
	assert.InDelta(t, servingPromptSeconds(in), servingPromptSeconds(dense), 1e-15)
}

// The routed experts' byte share is their parameters' share: most of a
// fine-grained MoE, none of a dense model.
func TestRoutedByteShare(t *testing.T) {
	moe := model.Lookup("Qwen3-30B-A3B")
	require.NotNil(t, moe)
	share := routedByteShare(moe)
	assert.Greater(t, share, 0.9)
	assert.Less(t, share, 1.0)
	dense := model.Lookup("Qwen3-8B")
	require.NotNil(t, dense)
	assert.Zero(t, routedByteShare(dense))
}
