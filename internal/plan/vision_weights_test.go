package plan

import (
	"fmt"
	"strings"
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
	require.True(t, ans.Fits.Yes(), dump(t, ans))
	return ans, m
}

// vLLM builds the vision tower in its own process beside the language
// model (Qwen2_5_VLForConditionalGeneration.__init__ in
// vllm/model_executor/models/qwen2_5_vl.py): a plan for vLLM counts it in
// the weights, at 16 bits, beside the text model and the rotary table
// each GPU holds (engine.VLLMRopeCacheBytes).
func TestVLLMCountsTheVisionTower(t *testing.T) {
	ans, m := visionPlan(t, engineVLLM, "bf16", 1, 1)
	text := quant.WeightsBytes(m, quant.BF16)
	rope := engine.VLLMRopeCacheBytes(m, 2)
	require.Positive(t, rope)
	assert.InDelta(t, float64(text+2*m.VisionParams+rope), float64(ans.Memory.WeightsBytes), 64,
		"text model %d + tower %d x 2 bytes + rotary table %d", text, m.VisionParams, rope)
	assert.InDelta(t, float64(text+2*m.VisionParams+rope)/float64(gibBytes), ans.EngineExpect[engineVLLM].ModelLoadingGiB, 0.01)
}

// The tower's linear layers are Column/RowParallelLinear in vLLM (sharded
// over the tensor-parallel group unless --mm-encoder-tp-mode data): each
// of two ranks holds half of them, and the patch embedding and norms
// whole (model.Model.VisionWholeParams).
func TestVLLMShardsTheVisionTowerOverTP(t *testing.T) {
	ans, m := visionPlan(t, engineVLLM, "bf16", 2, 2)
	require.Equal(t, 2, ans.TPSize)
	text := quant.WeightsBytes(m, quant.BF16)
	whole := 2 * m.VisionWholeParams
	require.Positive(t, whole)
	rope := engine.VLLMRopeCacheBytes(m, 2)
	assert.InDelta(t, float64(text+2*m.VisionParams+whole+2*rope), float64(ans.Memory.WeightsBytes), 64,
		"the group holds one tower, a second copy of its whole part and a rotary table a rank")
	assert.InDelta(t, float64(text+2*m.VisionParams+whole+2*rope)/2/float64(gibBytes), ans.EngineExpect[engineVLLM].ModelLoadingGiB, 0.01,
		"each rank half of the tower's split part")
}

// vllmPR26000 are the "Model loading took" lines vLLM printed for
// Qwen/Qwen3-VL-235B-A22B-Instruct at TP 8 (vllm serve ... --load-format
// dummy -tp 8, vLLM main of 2025-10-01, so 8192 batched tokens), verbatim
// from https://github.com/vllm-project/vllm/pull/26000:
//
//	Without setting limit:
//	(Worker_TP4 pid=7041) INFO 10-01 01:54:18 [gpu_model_runner.py:2758] Model loading took 55.4919 GiB and 0.376107 seconds
//	Without setting limit + DP ViT:
//	(Worker_TP3 pid=21254) INFO 10-01 02:11:51 [gpu_model_runner.py:2758] Model loading took 56.4331 GiB and 0.335513 seconds
//	Setting all limits to 0:
//	(Worker_TP6 pid=17841) INFO 10-01 02:09:06 [gpu_model_runner.py:2758] Model loading took 55.1608 GiB and 0.320821 seconds
const (
	pr26000SplitGiB = 55.4919 // the tower split over the ranks (the default)
	pr26000WholeGiB = 56.4331 // --mm-encoder-tp-mode data: the tower whole on each
	pr26000TextGiB  = 55.1608 // text-only: no tower
)

// towerOnRank is what the vision tower adds to each rank of a one-stage
// plan of req's model split tp ways on pool ps[0] at level l: the stage's
// weights with it less those without it.
func towerOnRank(t *testing.T, req *planning, l quant.Level, tp int) float64 {
	t.Helper()
	ps := registryPools(req, nil)
	require.NotEmpty(t, ps)
	b, ok := estimateSaneOn(req, ps[0], l, 8192, 1)
	require.True(t, ok)
	cs := req.costsOf(b, l, 8192, 1).on(ps[0])
	require.Positive(t, cs.Vision)
	bare := cs
	bare.Vision, bare.VisionWhole = 0, 0
	return float64(cs.stagePart(0, cs.Layers, tp).Weights - bare.stagePart(0, cs.Layers, tp).Weights)
}

// Qwen3-VL's tower at TP 8 under vLLM: its linear layers split eight ways,
// its patch embedding and norms and vLLM's three deepstack buffers (3 ×
// 8192 tokens × 4096 × 2 bytes, engine.VLLMDeepstackBytes) whole on each
// rank. PR 26000's lines give 0.3311 GiB a rank split (55.4919 − 55.1608)
// and 1.2723 whole (56.4331 − 55.1608); dividing the whole tower by 8, as
// the plan did, gave 0.13 (−60 %).
func TestVLLMVisionTowerPerRankPR26000(t *testing.T) {
	q := request(t, `{"model":{"name":"Qwen3-VL-235B-A22B-Instruct"},"engine":"vllm","quant":"bf16","context_length":8192,"tensor_parallel_size":8}`, h200s(t, 8))
	req := planningOf(t, q)
	m := req.Model
	require.Equal(t, 3, m.VisionDeepstack)

	split := pr26000SplitGiB - pr26000TextGiB
	got := towerOnRank(t, req, quant.BF16, 8) / float64(gibBytes)
	t.Logf("tower a rank at TP 8: %.4f GiB planned, %.4f printed", got, split)
	assert.InEpsilon(t, split, got, pr26000Target)

	whole := pr26000WholeGiB - pr26000TextGiB
	all := float64(quant.VisionBytes(m, quant.BF16)+engine.VLLMDeepstackBytes(m, 8192, 2)) / float64(gibBytes)
	t.Logf("tower whole (data mode, not planned): %.4f GiB from the model, %.4f printed", all, whole)
	assert.InEpsilon(t, whole, all, pr26000Target)

	ans := shard(t, q)
	require.True(t, ans.Fits.Yes(), dump(t, ans))
	t.Logf("Model loading took: %.4f GiB planned, %.4f printed", ans.EngineExpect[engineVLLM].ModelLoadingGiB, pr26000SplitGiB)
	assert.InEpsilon(t, pr26000SplitGiB, ans.EngineExpect[engineVLLM].ModelLoadingGiB, pr26000Target)
}

// pr26000Target is how far the plan may be from PR 26000's figures: with
// the position table (2304 × 1152, whole on each rank) the tower a rank
// reads −0.7 % (0.3289 GiB against 0.3311; −2.1 % without it), the whole
// tower −0.9 % and Model loading took −0.8 %.
const pr26000Target = 0.01

// Gemma 3's projector matrix (an nn.Parameter in vLLM's gemma3_mm.py) and
// Mistral 3's patch_merger (an nn.Linear in mistral3.py) are whole on each
// rank of a TP 2 group, beside half the tower's parallel layers.
func TestVLLMProjectorWholeOnEachRank(t *testing.T) {
	for _, c := range []struct {
		name  string
		whole int64 // bytes of the family's whole projector part
	}{
		{"Gemma-3-27B", 2 * 1152 * 5376},
		{"Mistral-Small-3.2-24B-Instruct-2506", 2 * 4 * 1024 * 1024},
	} {
		q := request(t, fmt.Sprintf(`{"model":{"name":%q},"engine":"vllm","quant":"bf16","context_length":8192,"tensor_parallel_size":2}`, c.name), h200s(t, 2))
		req := planningOf(t, q)
		tower, whole := float64(quant.VisionBytes(req.Model, quant.BF16)), float64(quant.VisionWholeBytes(req.Model, quant.BF16))
		require.Greater(t, whole, float64(c.whole), c.name)
		got := towerOnRank(t, req, quant.BF16, 2)
		assert.InDelta(t, (tower-whole)/2+whole, got, 2, c.name)
		assert.Greater(t, got, tower/2+float64(c.whole)/2, "%s: half of the projector's whole part more than half the tower", c.name)
	}
}

// SGLang splits the tower's linear layers over the ranks as vLLM does
// (ColumnParallelLinear, RowParallelLinear and VisionAttention with
// use_qkv_parallel in python/sglang/srt/models/qwen3_vl.py at
// sgl-project/sglang 005fa8330a5843e541fe075249f1d3da3d48ae0f, unless
// --mm-enable-dp-encoder, off by default) and keeps its nn.Conv3d patch
// embedding whole; it allocates no deepstack buffer when it builds the
// model.
func TestSGLangVisionTowerPerRank(t *testing.T) {
	q := request(t, `{"model":{"name":"Qwen3-VL-235B-A22B-Instruct"},"engine":"sglang","quant":"bf16","context_length":8192,"tensor_parallel_size":8}`, h200s(t, 8))
	req := planningOf(t, q)
	m := req.Model
	tower, whole := float64(quant.VisionBytes(m, quant.BF16)), float64(quant.VisionWholeBytes(m, quant.BF16))
	require.Positive(t, whole)
	got := towerOnRank(t, req, quant.BF16, 8)
	// SGLang's allocator rounding depends on the tensors, not the tower.
	assert.InDelta(t, (tower-whole)/8+whole, got, 2)
}

// An fp8 plan keeps the tower at 16 bits: quantized VLM checkpoints leave
// the vision modules out of their quantization (and vLLM drops a GPTQ
// config for the tower, _maybe_ignore_quant_config).
func TestVLLMKeepsTheVisionTowerAt16Bits(t *testing.T) {
	ans, m := visionPlan(t, engineVLLM, "fp8", 1, 1)
	text := quant.WeightsBytes(m, quant.FP8)
	assert.InDelta(t, float64(text+2*m.VisionParams+engine.VLLMRopeCacheBytes(m, 2)), float64(ans.Memory.WeightsBytes), 64)
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

// visionWeightsGaps are the VLM rows whose "Model loading took" the plan
// misses by more than visionWeightsTarget, each with its bound and why.
// None since vLLM's rotary tables are charged (engine.VLLMRopeCacheBytes):
// the 0.57, 0.61 and 0.35 GiB Gemma 3 4B, 12B and 27B loaded beyond their
// language model and tower were their two tables, the global one spanning
// 8 x 131,072 positions (8.57/8.58, 23.26/23.31 and 51.38/51.45 GiB now).
var visionWeightsGaps = map[string]struct {
	bound float64
	why   string
}{}

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
		target := visionWeightsTarget
		if gap, ok := visionWeightsGaps[r.ID]; ok {
			target = gap.bound
		}
		assert.InEpsilon(t, p, ex.ModelLoadingGiB, target, "%s: %s", r.ID, visionWeightsGaps[r.ID].why)
		n++
	}
	assert.GreaterOrEqual(t, n, 1, "rows of a VLM with the weights printed")
}

// Every pipeline stage holds the tower (vLLM and SGLang build it whatever
// the pipeline rank), its split part over the stage's tensor-parallel
// ranks and its whole part on each; a llama.cpp pool holds none of it.
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
		whole := float64(2 * req.Model.VisionWholeParams)
		require.InDelta(t, whole, cs.VisionWhole, 1, c.engine)
		half := cs.Layers / 2
		bare := cs
		bare.Vision, bare.VisionWhole = 0, 0
		for _, span := range [][2]int{{0, half}, {half, cs.Layers}} {
			got := cs.stagePart(span[0], span[1], 2).Weights - bare.stagePart(span[0], span[1], 2).Weights
			assert.InDelta(t, (tower-whole)/2+whole, float64(got), 2,
				"%s: stage %v holds half the tower's split part and its whole part on each of its 2 ranks", c.engine, span)
		}
	}
}

// towerPlan plans catalog model name under engine e in bf16 at TP tp on
// tp H200s and returns the pool costs and the answer.
func towerPlan(t *testing.T, name, e string, tp int) (costs, *ShardingAnswer) {
	t.Helper()
	q := request(t, fmt.Sprintf(`{"model":{"name":%q},"engine":%q,"quant":"bf16","context_length":8192,"tensor_parallel_size":%d}`, name, e, tp), h200s(t, tp))
	req := planningOf(t, q)
	require.Positive(t, req.Model.VisionParams, name)
	ps := registryPools(req, nil)
	require.NotEmpty(t, ps, name)
	b, ok := estimateSaneOn(req, ps[0], quant.BF16, 8192, 1)
	require.True(t, ok, name)
	ans := shard(t, q)
	require.True(t, ans.Fits.Yes(), dump(t, ans))
	return req.costsOf(b, quant.BF16, 8192, 1).on(ps[0]), ans
}

// explains reports whether a line of the answer's explanation holds every
// part.
func explains(ans *ShardingAnswer, parts ...string) bool {
	for _, line := range ans.Explanation {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}

// SGLang serves Llama 4 text-only unless --enable-multimodal
// (mm_disabled_models in ModelConfig.__init__,
// python/sglang/srt/configs/model_config.py at sgl-project/sglang
// 001adf564fd332c285397a46a034ee2f93ba7515), and
// Llama4ForConditionalGeneration then builds no vision_model nor
// multi_modal_projector (python/sglang/srt/models/mllama4.py at
// 0076e713398e6fbb7279a61940428b611b800a24): an SGLang plan of Llama 4
// counts no tower, and says what --enable-multimodal adds a rank.
func TestSGLangLeavesLlama4TowerOut(t *testing.T) {
	cs, ans := towerPlan(t, "Llama-4-Scout-17B-16E-Instruct", "sglang", 2)
	assert.Zero(t, cs.Vision, "no tower in SGLang's default launch")
	assert.Zero(t, cs.VisionWhole)
	m := model.Lookup("Llama-4-Scout-17B-16E-Instruct")
	tower, whole := float64(quant.VisionBytes(m, quant.BF16)), float64(quant.VisionWholeBytes(m, quant.BF16))
	perRank := fmt.Sprintf("%.2f GiB a rank", ((tower-whole)/2+whole)/float64(gibBytes))
	assert.True(t, explains(ans, "Llama 4", "text-only", "--enable-multimodal", perRank), "%s\n%s", perRank, dump(t, ans.Explanation))
	assert.NotContains(t, ans.EngineArgs["sglang"], "--enable-multimodal", "the plan is the default, text-only launch")
}

// vLLM has no mm_disabled_models: its default launch (images allowed)
// builds Llama 4's tower, so its plan still counts it and says nothing of
// --enable-multimodal.
func TestVLLMStillCountsLlama4Tower(t *testing.T) {
	cs, ans := towerPlan(t, "Llama-4-Scout-17B-16E-Instruct", engineVLLM, 2)
	m := model.Lookup("Llama-4-Scout-17B-16E-Instruct")
	assert.InDelta(t, float64(quant.VisionBytes(m, quant.BF16)), cs.Vision, 1)
	assert.False(t, explains(ans, "--enable-multimodal"), dump(t, ans.Explanation))
}

// Gemma 3 is in mm_disabled_models too, but Gemma3ForConditionalGeneration
// builds its SigLIP tower and projector whatever the flag
// (python/sglang/srt/models/gemma3_mm.py at
// 017f5d473f3f81d668e92be0437ad8711ab4a11e): the plan keeps counting it,
// and says images need --enable-multimodal.
func TestSGLangCountsGemma3TowerTextOnly(t *testing.T) {
	cs, ans := towerPlan(t, "Gemma-3-27B", "sglang", 1)
	m := model.Lookup("Gemma-3-27B")
	assert.InDelta(t, float64(quant.VisionBytes(m, quant.BF16)), cs.Vision, 1, "the tower is built either way")
	assert.True(t, explains(ans, "Gemma 3", "text-only", "--enable-multimodal"), dump(t, ans.Explanation))
	assert.False(t, explains(ans, "a rank more"), "no memory to add: %s", dump(t, ans.Explanation))
}

// A VLM outside the list (Qwen2.5-VL) is multimodal by default in SGLang:
// no note.
func TestSGLangMultimodalByDefaultElsewhere(t *testing.T) {
	cs, ans := towerPlan(t, "Qwen2.5-VL-7B-Instruct", "sglang", 1)
	assert.Positive(t, cs.Vision)
	assert.False(t, explains(ans, "--enable-multimodal"), dump(t, ans.Explanation))
}

// vlmPeakGaps are the VLM rows whose printed peak activation the plan
// misses by more than 3 %, each with its bound and why.
var vlmPeakGaps = map[string]struct {
	bound float64
	why   string
}{
	"llmd-w8a8-mistral-small-24b--h100-80gb--tp1pp1dp1--8192": {bound: 0.10,
		why: "(2.01 GiB planned, 2.18 printed): at TP 1 the W8A8 language model's 8192-token pass, 1.81 GiB as the planner counts it at 16 bits, with the int8 copies of the activations its kernels quantize (0.25 GiB for the down projection's 8192 x 32,768 input) outweighs the sampler's 1.93 GiB; the int8 copies are not modelled (at TP 2 the pass halves and the row is within 1 %)"},
}

// TestVLLMStartupVLMPeakActivation holds the profile's peak activation of
// the VLM rows that print it ("torch peak memory increase") to 3 %: the
// larger of the encoder pass and the language model's peak with the
// encoder cache (engine.VLLMEncoderPassOf). On the Gemma 3 rows the
// sampler warm-up over the 262,208-token vocabulary is the peak, the
// cache of 8192 tokens adds 0.04 to 0.08 GiB (3.90, 3.92, 3.95 GiB
// planned against 3.89, 3.94, 3.99 printed; without the cache the 27B row is 3.3 % under).
func TestVLLMStartupVLMPeakActivation(t *testing.T) {
	n := 0
	for _, r := range loadVLLMStartupRows(t) {
		m := model.Lookup(r.Model)
		if !r.Replayed || m == nil || m.VisionItem == nil || r.Printed.PeakActivationGiB == nil {
			continue
		}
		ex := vllmStartupExpect(t, r)
		p := *r.Printed.PeakActivationGiB
		t.Logf("%s: peak activation %.2f GiB planned, %.2f printed", r.ID, ex.PeakActivationGiB, p)
		bound, why := 0.03, ""
		if gap, ok := vlmPeakGaps[r.ID]; ok {
			bound, why = gap.bound, gap.why
		}
		assert.InEpsilon(t, p, ex.PeakActivationGiB, bound, "%s %s", r.ID, why)
		n++
	}
	assert.GreaterOrEqual(t, n, 5, "VLM rows with the peak activation printed")
}
