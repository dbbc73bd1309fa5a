package plan

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// visionPlan plans Qwen2.5-VL-7B-Instruct (a 0.68 B vision tower beside a
// 7.6 B language model) on n H100s under engine e at level q and
// tensor-parallel size tp, and returns the answer with the model.
func visionPlan(t *testing.T, e, q string, n, tp int) (*ShardingAnswer, *model.Model) {
	t.Helper()
	m := model.Lookup("Qwen2.5-VL-7B-Instruct")
	require.NotNil(t, m)
	require.Positive(t, m.VisionParams, "the catalog entry carries its vision_config")
	var devs []registry.Device
	for i := 0; i < n; i++ {
		devs = append(devs, h100(i))
	}
	body := fmt.Sprintf(`{"model":{"name":"Qwen2.5-VL-7B-Instruct"},"engine":%q,"quant":%q,"context_length":8192,"tensor_parallel_size":%d}`, e, q, tp)
	ans := shard(t, request(t, body, reg(t, devs)))
	require.True(t, ans.Fits, dump(t, ans))
	return ans, m
}

// vLLM builds the vision tower in its own process beside the language
// model (Qwen2_5_VLForConditionalGeneration.__init__ in
// vllm/model_executor/models/qwen2_5_vl.py): a plan for vLLM counts it in
// the weights, at 16 bits.
func TestVLLMCountsTheVisionTower(t *testing.T) {
	ans, m := visionPlan(t, engineVLLM, "bf16", 1, 1)
	text := quant.WeightsBytes(m, quant.BF16)
	assert.InDelta(t, float64(text+2*m.VisionParams), float64(ans.Memory.WeightsBytes), 64,
		"text model %d + tower %d x 2 bytes", text, m.VisionParams)
	assert.InDelta(t, float64(text+2*m.VisionParams)/float64(gibBytes), ans.EngineExpect[engineVLLM].ModelLoadingGiB, 0.01)
}

// The tower's linear layers are Column/RowParallelLinear in vLLM (sharded
// over the tensor-parallel group unless --mm-encoder-tp-mode data): each
// of two ranks holds half of it.
func TestVLLMShardsTheVisionTowerOverTP(t *testing.T) {
	ans, m := visionPlan(t, engineVLLM, "bf16", 2, 2)
	require.Equal(t, 2, ans.TPSize)
	text := quant.WeightsBytes(m, quant.BF16)
	assert.InDelta(t, float64(text+2*m.VisionParams), float64(ans.Memory.WeightsBytes), 64, "the group holds one tower")
	assert.InDelta(t, float64(text+2*m.VisionParams)/2/float64(gibBytes), ans.EngineExpect[engineVLLM].ModelLoadingGiB, 0.01,
		"each rank half of the tower")
}

// An fp8 plan keeps the tower at 16 bits: quantized VLM checkpoints leave
// the vision modules out of their quantization (and vLLM drops a GPTQ
// config for the tower, _maybe_ignore_quant_config).
func TestVLLMKeepsTheVisionTowerAt16Bits(t *testing.T) {
	ans, m := visionPlan(t, engineVLLM, "fp8", 1, 1)
	text := quant.WeightsBytes(m, quant.FP8)
	assert.InDelta(t, float64(text+2*m.VisionParams), float64(ans.Memory.WeightsBytes), 64)
}

// SGLang builds the tower beside the language model too
// (python/sglang/srt/models/qwen2_5_vl.py): its weights are the text
// model's, the tower's and PyTorch's allocator rounding as SGLang
// measures them.
func TestSGLangCountsTheVisionTower(t *testing.T) {
	ans, m := visionPlan(t, "sglang", "bf16", 1, 1)
	text := quant.WeightsBytes(m, quant.BF16)
	rounding := engine.SGLangAllocatorRoundingBytes(m, 16, 1, 0, m.Layers)
	assert.InDelta(t, float64(text+2*m.VisionParams+rounding), float64(ans.Memory.WeightsBytes), 64)
}

// llama.cpp loads the tower from a separate --mmproj file, counted only
// when the request gives it (companions.go): its plan's weights stay the
// language model's (at most: the token embedding stays on the host).
func TestLlamaCPPLeavesTheVisionTowerToMMProj(t *testing.T) {
	ans, m := visionPlan(t, engineLlamaCPP, "Q8_0", 1, 1)
	text := quant.WeightsBytes(m, quant.Level("Q8_0"))
	assert.LessOrEqual(t, ans.Memory.WeightsBytes, text)
}

// visionWeightsTarget is how far the weights a plan says vLLM loads for a
// VLM may be from the "Model loading took" vLLM printed.
const visionWeightsTarget = 0.03

// TestVLLMStartupVisionWeights replays the rows of vllm_startup.json of a
// model with a vision tower: vLLM's "Model loading took" counts the tower
// beside the language model, and so must the plan (within 3 %; without
// the tower Qwen2.5-VL-7B-Instruct's 14.18 GiB is 9 % under the printed
// 15.63).
func TestVLLMStartupVisionWeights(t *testing.T) {
	n := 0
	for _, r := range loadVLLMStartupRows(t) {
		m := model.Lookup(r.Model)
		if !r.Replayed || m == nil || m.VisionParams == 0 || r.Printed.ModelLoadingGiB == nil {
			continue
		}
		ex := vllmStartupExpect(t, r)
		p := *r.Printed.ModelLoadingGiB
		t.Logf("%s: weights %.2f GiB planned, %.2f printed", r.ID, ex.ModelLoadingGiB, p)
		assert.InEpsilon(t, p, ex.ModelLoadingGiB, visionWeightsTarget, r.ID)
		n++
	}
	assert.GreaterOrEqual(t, n, 1, "rows of a VLM with the weights printed")
}

// Every pipeline stage holds the tower (vLLM and SGLang build it whatever
// the pipeline rank), split over the stage's tensor-parallel ranks; a
// llama.cpp pool holds none of it.
func TestVisionTowerOnEveryStage(t *testing.T) {
	for _, c := range []struct {
		engine string
		want   bool
	}{{engineVLLM, true}, {"sglang", true}, {engineLlamaCPP, false}} {
		q := request(t, fmt.Sprintf(`{"model":{"name":"Qwen2.5-VL-7B-Instruct"},"engine":%q,"quant":"bf16","context_length":8192}`, c.engine),
			reg(t, []registry.Device{h100(0), h100(1)}))
		req := planningOf(t, q)
		ps := registryPools(req, nil)
		require.NotEmpty(t, ps, c.engine)
		b, ok := estimateSaneOn(req, ps[0], quant.BF16, 8192, 1)
		require.True(t, ok, c.engine)
		cs := req.costsOf(b, quant.BF16, 8192, 1).on(ps[0])
		tower := float64(2 * req.Model.VisionParams)
		if !c.want {
			assert.Zero(t, cs.Vision, c.engine)
			continue
		}
		require.InDelta(t, tower, cs.Vision, 1, c.engine)
		half := cs.Layers / 2
		bare := cs
		bare.Vision = 0
		for _, span := range [][2]int{{0, half}, {half, cs.Layers}} {
			got := cs.stagePart(span[0], span[1], 2).Weights - bare.stagePart(span[0], span[1], 2).Weights
			assert.InDelta(t, tower/2, float64(got), 2, "%s: stage %v holds half the tower on each of its 2 ranks", c.engine, span)
		}
	}
}
