package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/ggml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

const (
	testData      = "../data"
	testConstants = "../constants_gen.go"
	testDocs      = "../../../docs/accuracy.md"
)

// Bounds promised in docs/accuracy.md ("Throughput (decode and prefill)").
const (
	decodeMedianBound  = 0.25
	prefillMedianBound = 0.50
	// singleDecodeMedianBound and singlePrefillMedianBound hold for rows
	// measured on one device (achieved: 6.6 % and 16.1 %).
	singleDecodeMedianBound  = 0.10
	singlePrefillMedianBound = 0.20
	// heldOutDecodeMedianMax is the ratchet on the median |error| of decode
	// over the held-out rows (issue 12: within 15 %). With the constants
	// fitted on 2023-24 builds (148 us per layer, 90 % of bandwidth on every
	// device) the median was 23.6 %; with the memory-class fractions and 92 us
	// per layer fitted on the May 2024 llama-bench rows, 10.4 %. Tighten it
	// when the model improves; the test fails when it gets worse.
	heldOutDecodeMedianMax = 0.11
	// heldOutDecodeP90Max is issue 22's bound on the p90 (achieved with the
	// per-family fractions and per-backend latencies: 19.6 %; before, 28.3 %).
	heldOutDecodeP90Max = 0.35
)

// The fit takes seconds; the tests share one run.
var (
	fitOnce   sync.Once
	fitResult *result
	fitErr    error
)

func fitted(t *testing.T) *result {
	t.Helper()
	fitOnce.Do(func() { fitResult, fitErr = fitAll(testData) })
	require.NoError(t, fitErr)
	return fitResult
}

// TestGeneratedUpToDate fails when `go generate ./internal/calibration`
// would change constants_gen.go or the generated parts of docs/accuracy.md.
func TestGeneratedUpToDate(t *testing.T) {
	r := fitted(t)
	src, err := constantsSource(r)
	require.NoError(t, err)
	committed, err := os.ReadFile(testConstants)
	require.NoError(t, err)
	assert.Equal(t, string(committed), string(src), "constants_gen.go is stale: run go generate ./internal/calibration")

	doc, err := os.ReadFile(testDocs)
	require.NoError(t, err)
	regenerated, err := splice(doc, docSections(r))
	require.NoError(t, err)
	assert.Equal(t, string(doc), string(regenerated), "docs/accuracy.md is stale: run go generate ./internal/calibration")
}

// TestFittedMatchesGenerated checks that the constants in use are the ones
// the fit writes (the compiled package is the committed file).
func TestFittedMatchesGenerated(t *testing.T) {
	r := fitted(t)
	assert.Equal(t, r.throughput(), calibration.Fitted)
	assert.Equal(t, float64(r.attention.tenths)/10, calibration.AttentionHiddenRows)
	assert.Equal(t, int64(r.overhead.mib)<<20, int64(calibration.GPURuntimeOverheadBytes))
	assert.Equal(t, int64(r.llamaOverhead.mib)<<20, int64(calibration.LlamaCPPCUDAOverheadBytes))
	assert.Equal(t, int64(r.llamaFitOverhead.mib)<<20, int64(calibration.LlamaCPPCUDAFitOverheadBytes))
	assert.Equal(t, r.shape.a, float64(calibration.ShapeLayersLogIntercept))
	assert.Equal(t, r.shape.b, float64(calibration.ShapeLayersExponent))
	assert.Equal(t, r.shape.kvHeads, calibration.ShapeKVHeads)
}

// TestSpliceNeedsMarkers checks that a docs file without the markers is an
// error, not a silent no-op.
func TestSpliceNeedsMarkers(t *testing.T) {
	_, err := splice([]byte("no markers\n"), map[string]string{"held-out": "x\n"})
	require.Error(t, err)
	out, err := splice([]byte("a\n"+beginMarker("s")+"old\n"+endMarker("s")+"b\n"), map[string]string{"s": "new\n"})
	require.NoError(t, err)
	assert.Equal(t, "a\n"+beginMarker("s")+"new\n"+endMarker("s")+"b\n", string(out))
}

// TestCalibrationReplay replays every row of inference.json the planner can
// map and checks the accuracy promised in docs/accuracy.md (run with -v for
// every row).
func TestCalibrationReplay(t *testing.T) {
	r := fitted(t)
	reasons := map[string]int{}
	for _, why := range r.unmapped {
		reasons[why]++
	}
	for why, n := range reasons {
		t.Logf("unmapped %3d rows: %s", n, why)
	}
	c := calibration.Fitted
	dec, pre := decodeErrors(r.replayed, c), prefillErrors(r.replayed, c)
	t.Logf("rows: %d replayed, %d unmapped", len(r.replayed), len(r.unmapped))
	t.Logf("decode:  n=%d median %.3f p90 %.3f", len(dec), quantile(dec, 0.5), quantile(dec, 0.9))
	t.Logf("prefill: n=%d median %.3f p90 %.3f", len(pre), quantile(pre, 0.5), quantile(pre, 0.9))
	var single []speedCase
	for _, sc := range r.replayed {
		if sc.single() {
			single = append(single, sc)
		}
	}
	sd, sp := decodeErrors(single, c), prefillErrors(single, c)
	t.Logf("single-device: decode n=%d median %.3f; prefill n=%d median %.3f", len(sd), quantile(sd, 0.5), len(sp), quantile(sp, 0.5))
	if testing.Verbose() {
		for _, sc := range r.replayed {
			d, p := sc.replay.Decode(c), sc.replay.Prefill(c)
			t.Logf("%-36s x%d %-38s %-6s tg %7.2f pred %7.2f (%+.0f%%)  pp %8.1f pred %8.1f", sc.row.Hardware, sc.row.DeviceCount,
				sc.row.Model, sc.row.Quant, sc.row.TG, d, 100*(d/sc.row.TG-1), sc.row.PP, p)
		}
	}
	require.GreaterOrEqual(t, len(dec), 150, "most rows must be replayable")
	require.NotEmpty(t, pre)
	assert.LessOrEqual(t, quantile(dec, 0.5), decodeMedianBound)
	assert.LessOrEqual(t, quantile(pre, 0.5), prefillMedianBound)
	assert.LessOrEqual(t, quantile(sd, 0.5), singleDecodeMedianBound)
	assert.LessOrEqual(t, quantile(sp, 0.5), singlePrefillMedianBound)
}

// TestDecodeHeldOut replays the published decode speeds the constants were
// not fitted on and ratchets their median error (run with -v for the rows).
func TestDecodeHeldOut(t *testing.T) {
	r := fitted(t)
	var errs []float64
	for _, sc := range r.heldOut {
		d := sc.replay.Decode(calibration.Fitted)
		require.Positive(t, d, sc.row.Hardware)
		e := d/sc.row.TG - 1
		errs = append(errs, max(e, -e))
		t.Logf("%-32s %-26s %-7s measured %7.2f estimate %7.2f (%+.0f%%)  %s", sc.row.Hardware, sc.row.Model, sc.row.Quant, sc.row.TG, d, 100*e, sc.row.Source)
	}
	t.Logf("held-out decode: n=%d median %.3f p90 %.3f", len(errs), quantile(errs, 0.5), quantile(errs, 0.9))
	assert.LessOrEqual(t, quantile(errs, 0.5), heldOutDecodeMedianMax)
	assert.LessOrEqual(t, quantile(errs, 0.9), heldOutDecodeP90Max)
}

// TestDecodeTargets checks issue 22's decode targets on the rows the fit
// sees: within 12 % at the median on the fit set and on the H200 rows
// (data/h200-speed, every tg record, the depth rows included).
func TestDecodeTargets(t *testing.T) {
	r := fitted(t)
	fit := decodeErrors(decodeFitSet(r.replayed, r.bench), calibration.Fitted)
	var h200 []speedCase
	for _, sc := range r.bench {
		if sc.row.TG > 0 {
			h200 = append(h200, sc)
		}
	}
	hb := decodeErrors(h200, calibration.Fitted)
	t.Logf("fit set n=%d median %.3f; H200 decode n=%d median %.3f", len(fit), quantile(fit, 0.5), len(hb), quantile(hb, 0.5))
	require.Len(t, hb, 6, "4 tg128 records and 2 depth records")
	assert.LessOrEqual(t, quantile(fit, 0.5), 0.12)
	assert.LessOrEqual(t, quantile(hb, 0.5), 0.12)
}

// TestPrefillH200Targets checks issue 22's prefill target on the H200
// llama-bench pp512 records (data/h200-speed; llama.cpp 81ff7abe50b9 CUDA):
// within 20 % at the median, each within 25 %.
func TestPrefillH200Targets(t *testing.T) {
	r := fitted(t)
	var errs []float64
	for _, sc := range r.bench {
		if sc.row.PP <= 0 {
			continue
		}
		p := sc.replay.Prefill(calibration.Fitted)
		require.Positive(t, p, "%s %s", sc.row.Model, sc.row.Quant)
		rel := p/sc.row.PP - 1
		errs = append(errs, math.Abs(rel))
		t.Logf("%-13s %-7s pp%d measured %8.1f estimate %8.1f (%+.0f%%)", sc.row.Model, sc.row.Quant, sc.row.Prompt, sc.row.PP, p, 100*rel)
		assert.LessOrEqual(t, math.Abs(rel), 0.25, "%s %s pp%d", sc.row.Model, sc.row.Quant, sc.row.Prompt)
	}
	require.Len(t, errs, 4, "4 pp512 records")
	t.Logf("H200 prefill: n=%d median %.3f", len(errs), quantile(errs, 0.5))
	assert.LessOrEqual(t, quantile(errs, 0.5), 0.20)
}

// TestPrefillFitAndHeldOut checks the prefill fit set (every single-device
// row with a prompt figure: inference.json and the H200 pp512 records) and
// ratchets it and the held-out rows (the multi-GPU llama-bench rows of May
// 2024, which the fit never sees). Issue 22 asks for 20 % at the median.
// History of the held-out median: 22.2 % with one MFU and one pass time,
// 23.3 % with the MMQ path, 19.4 % with the RTX 4090's FP16-accumulate
// peak, 13.5 % with the pass time of May 2024 fitted apart from 2023's (fit
// set 16.9, 13.7, 12.6, 7.7 %). With -v it prints every held-out row beside
// the same GPU, model and type measured on one device (a fit row): at pp512
// the layer split costs little (one 512-token micro-batch, not pipelined),
// so a held-out row's error is mostly its one-device row's.
func TestPrefillFitAndHeldOut(t *testing.T) {
	r := fitted(t)
	c := calibration.Fitted
	pre, h200 := prefillFitSet(r.replayed, r.bench)
	fit := prefillErrors(append(append([]speedCase(nil), pre...), h200...), c)
	held := prefillErrors(prefillHeldOut(r.replayed), c)
	if testing.Verbose() {
		logHeldOutBesideOneDevice(t, prefillHeldOut(r.replayed), pre, c)
	}
	t.Logf("prefill fit set n=%d median %.3f; held-out n=%d median %.3f p90 %.3f", len(fit), quantile(fit, 0.5), len(held), quantile(held, 0.5), quantile(held, 0.9))
	require.Len(t, fit, 54)
	require.Len(t, held, 34)
	assert.LessOrEqual(t, quantile(fit, 0.5), 0.08)
	assert.LessOrEqual(t, quantile(held, 0.5), 0.14)
}

// logHeldOutBesideOneDevice logs each held-out row: GPU, count, model,
// type, measured and estimated pp512 and the error, and, where the fit set
// holds the same GPU, model and type on one device, that row's measured
// figure, the ratio of the two measurements and the one-device error.
func logHeldOutBesideOneDevice(t *testing.T, held, oneDevice []speedCase, c calibration.Throughput) {
	t.Helper()
	key := func(sc speedCase) string { return sc.row.Hardware + "|" + sc.row.Model + "|" + sc.row.Quant }
	one := map[string]speedCase{}
	for _, sc := range oneDevice {
		if sc.llamaBench2024() {
			one[key(sc)] = sc
		}
	}
	for _, sc := range held {
		p := sc.replay.Prefill(c)
		if p <= 0 {
			continue
		}
		line := fmt.Sprintf("held out: %-28.28s x%d %-20.20s %-6s measured %7.1f estimate %7.1f (%+4.0f%%)", sc.row.Hardware, sc.row.DeviceCount, sc.row.Model, sc.row.Quant, sc.row.PP, p, 100*(p/sc.row.PP-1))
		if o, ok := one[key(sc)]; ok {
			op := o.replay.Prefill(c)
			line += fmt.Sprintf("  | x1 measured %7.1f (x%d/x1 %.2f), x1 error %+4.0f%%", o.row.PP, sc.row.DeviceCount, sc.row.PP/o.row.PP, 100*(op/o.row.PP-1))
		}
		t.Log(line)
	}
}

// TestDataFilesHaveSources checks that every data file is described in the
// folder's README and that every row of the speed sets names an https source.
func TestDataFilesHaveSources(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(testData, "README.md"))
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(testData, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		assert.Contains(t, string(readme), "`"+filepath.Base(f)+"`", "data/README.md must describe %s", filepath.Base(f))
	}
	r := fitted(t)
	for _, sc := range append(append([]speedCase(nil), r.replayed...), r.heldOut...) {
		assert.True(t, strings.HasPrefix(sc.row.Source, "https://"), "%s / %s: source %q", sc.row.Hardware, sc.row.Model, sc.row.Source)
	}
}

// TestServingFitBeatsBorrowedConstants replays the vLLM batch-1 rows of
// data/serving_decode.json under the fitted vLLM overhead and under what a
// vLLM plan paid before it (llama.cpp's CUDA per-layer time, no step,
// all-reduce latency or MoE cost): the fit must be closer at the median.
func TestServingFitBeatsBorrowedConstants(t *testing.T) {
	r := fitted(t)
	var vllm []servingCase
	for _, sc := range r.serving {
		if sc.row.Engine == "vllm" {
			vllm = append(vllm, sc)
		}
	}
	require.GreaterOrEqual(t, len(vllm), 4)
	c := r.throughput()
	borrowed := c
	borrowed.VLLM = calibration.ServingDecode{PartSeconds: c.LayerLatencyCUDA / 2, PartSecondsLater: c.LayerLatencyCUDA / 2}
	fit, old := quantile(replayErrors(vllm, c), 0.5), quantile(replayErrors(vllm, borrowed), 0.5)
	t.Logf("vLLM rows: median |error| %.3f fitted, %.3f with llama.cpp's constants", fit, old)
	assert.Less(t, fit, old)
}

// servingCVMedianMax and servingCVP90Max are the ratchets on the
// leave-one-source-out cross-validation of the vLLM rows of
// data/serving_decode.json (servingCV): each source's rows predicted by
// constants fitted on the other sources' rows, the check the fitting never
// sees. Issue 22 asks for 15 % at the median and 35 % at p90. Per-layer
// time, all-reduce, MoE and MLA terms gave 15.4 % and 48.4 % over 24 rows
// of 14 sources; the per-part time (a hybrid block of one mixer pays one
// part) 12.2 % and 42.8 %; the per-part time by GPU generation 10.6 % and
// 39.1 %. The ROCm fork README's other vLLM versions (12 rows of that
// source, 33 vLLM rows) took it to 10.1 % and 43.1 % with every row
// weighing the same; with each setup weighing one row (setupWeights) in
// every fit, 9.8 % and 33.0 %, within issue 22's figures. Replaying the
// two rows that could be laid out but were held back (QwQ-32B on 8 A100s,
// vLLM issue 16300; Qwen2.5-72B on 2 H100s, tt-inference-server issue 143:
// 35 rows of 16 sources) took them to 11.5 % and 31.0 %: QwQ-32B is +35 %
// out of sample (TP 8 over A100s pays more per all-reduce than the fit
// charges), and in the folds that fit on it the all-reduce time rises (3 us
// to 8 us in the shipped fit), which puts the eight Llama-3.1-70B rows on 8
// MI300X 3-4 points further below their measurements (-12 to -22 %, were
// -9 to -20 %); the median bound was raised from 10 % to 12 % to what is
// met (issue 22's 15 % still holds), the p90 bound tightened from 34 % to
// 32 %. Replaying Red Hat's three DeepSeek-R1-Distill-Llama-70B rows (vLLM
// 0.7.2 on H100s; 38 rows of 17 sources) took them to 9.2 % and 34.5 %:
// the bf16 and FP8 rows are within 6 % out of sample, the w4a16 row +59 %,
// and the bandwidth fraction falls from 0.87 to 0.83, which moves the
// RTX 4090 and QwQ-32B rows out (servingCVGaps); the p90 bound was raised
// by the new rows from 32 % to 35 %, issue 22's figure and never above
// it, the median bound tightened from 12 % to 10 %. Recording the FP8
// layout of DeepSeek-V3.1 and V3.2 took the p90 to 34.8 %, and the MI300X's
// Infinity Fabric figure the median to 9.1 %. GPUStack's Qwen3-8B bf16
// row on one H100 SXM (vLLM v0.11.0, 39 rows of 18 sources; -13 % out of
// sample) took them to 9.4 % and 34.2 %. Tighten them when the model
// improves; the test fails when it gets worse.
const (
	servingCVMedianMax = 0.10
	servingCVP90Max    = 0.35
)

// servingCVGaps are the replayed vLLM rows (by source and model,
// servingGapKey) whose out-of-sample estimate misses issue 22's 25 %, each
// with the bound it is held to and why it misses.
var servingCVGaps = map[string]struct {
	Bound float64
	Why   string
}{
	"https://github.com/vllm-project/vllm/issues/30832|DeepSeek-V3.2":                                                                                              {Bound: 0.50, Why: dsaGap},
	"https://github.com/tenstorrent/tt-inference-server/issues/356|DeepSeek-R1-0528-AWQ":                                                                           {Bound: 0.52, Why: mlaEraGap},
	"https://github.com/dzhsurf/deepseek-v3-r1-deploy-and-benchmarks|DeepSeek-V3-AWQ (cognitivecomputations)":                                                      {Bound: 0.36, Why: mlaEraGap},
	"https://github.com/vllm-project/vllm/issues/16300|QwQ-32B":                                                                                                    {Bound: 0.39, Why: a100TP8Gap},
	"https://github.com/tenstorrent/tt-inference-server/issues/394|Qwen3-4B":                                                                                       {Bound: 0.28, Why: rtx4090Gap},
	"https://huggingface.co/neuralmagic/DeepSeek-R1-Distill-Llama-70B-FP8-dynamic/blob/main/README.md|DeepSeek-R1-Distill-Llama-70B-quantized.w4a16 (neuralmagic)": {Bound: 0.60, Why: w4a16Gap},
	"https://blogs.oracle.com/cloud-infrastructure/serving-llama-31-405b-model-with-amd-mi300x-gpus|Llama-3.1-405B (FP8)":                                          {Bound: 0.35, Why: oracle405BGap},
}

// servingGapKey is a row's key in servingCVGaps.
func servingGapKey(r servingRow) string { return r.Source + "|" + r.Model }

// dsaGap is why DeepSeek-V3.2 on 8 H20s is predicted too fast out of
// sample.
const dsaGap = "its layers run DeepSeek Sparse Attention's indexer beside MLA; no other row has one, so the MLA time fitted without it (on the DeepSeek-V3 and R1 AWQ rows) leaves the indexer out. An indexer term fits it in sample but cannot be checked out of sample, and the cross-validation does not keep it"

// mlaEraGap is why the two DeepSeek AWQ rows on 8 H100s are predicted
// apart from each other.
const mlaEraGap = "the same model on the same GPUs decodes at 33 tokens/s under vLLM 0.7.3 and 62 under a mid-2025 build: MLA decode got faster across 2025 builds, and with one row of each era out, the other sets the MLA time (with V3.2's indexer folded in)"

// a100TP8Gap is why QwQ-32B on 8 A100s is predicted too fast out of
// sample.
const a100TP8Gap = "tensor parallelism over 8 A100s: the same table gives 36.2 tokens/s at TP 2, 50 at TP 4 and 63 at TP 8, 1.7x from 2 to 8 GPUs where the weight stream alone would buy 4x, so each all-reduce costs more on these A100s than the one all-reduce time fitted on every GPU charges (+25 % in sample). It is the one TP-8 A100 vLLM row: an all-reduce time by GPU generation would be fitted on it alone, so no term is added"

// rtx4090Gap is why Qwen3-4B on an RTX 4090 is predicted too slow out of
// sample.
const rtx4090Gap = "the one vLLM row on a GDDR GPU: the per-part time of Ampere and Ada GPUs is fitted on the A100 rows, and a 4B model's 72 parts at it add about 4 ms to a weight stream of about 10 ms. It was -25 % out of sample until Red Hat's three H100 rows lowered the bandwidth fraction the fit finds (0.87 to 0.83; 0.84 in the shipped fit since GPUStack's Qwen3-8B row), which every row's weight stream pays: -26 % out of sample with them"

// w4a16Gap is why the w4a16 DeepSeek-R1-Distill-Llama-70B row on one H100 is
// predicted too fast.
const w4a16Gap = "its step, 30.5 ms (32.8 tokens/s under vLLM 0.7.2), is about 2.8 times the 36 GB of 4-bit weights read at the H100 SXM5's 3.35 TB/s; the same table's bf16 and FP8 rows on 2 H100s are at -5 % and +6 % out of sample, and the one other 4-bit Marlin row (Llama-3.1-8B RTN int4 on an H100, vLLM PR 26051) is at -2 % out of sample. The model has no kernel efficiency by weight format for vLLM, and one row could not check one (+52 % in sample)"

// oracle405BGap is why Oracle's Llama-3.1-405B row on 8 MI300X is predicted
// too fast.
const oracle405BGap = "an earlier ROCm build (blog of 2024) at 36 tokens/s; the ROCm fork's README measures the same model on the same GPUs at 39-45 under vLLM 0.6.6 to 0.10.0 (seven rows of one setup), which the later-generation per-part time follows"

// TestServingCrossValidation checks the leave-one-source-out
// cross-validation of the vLLM rows: the median and p90 of the
// out-of-sample |error| within their ratchets, every row within 25 %
// out of sample but the servingCVGaps rows, held to their own bounds; and
// how many of issue 22's family (servingInFamily) are within 25 % out of
// sample: the vLLM rows by the cross-validation, the SGLang rows held out
// of SGLang's fit by SGLang's constants (an SGLang fit row has no
// out-of-sample estimate). 11 of those 14 rows are: the ROCm fork README's
// five Llama-3.1-70B rows, AMD's page's three, Llama-3.3-70B on 4 H100s,
// and Red Hat's DeepSeek-R1-Distill-Llama-70B bf16 and FP8 rows on 2 H100s
// (the distill is counted as a Llama-3.x-70B: it is Llama-3.3-70B-Instruct
// fine-tuned, with its architecture and shapes, laid out as it); the two
// DeepSeek AWQ rows on 8 H100s and the distill's w4a16 row on one H100
// miss (SGLang's DeepSeek-V3 on 8 H200s of sglang issue 3196, a row that
// missed, is not replayed: its figure is words over the whole request's
// time, not a decode rate). Issue 22 asks for 10; the rows meet it by row
// count, of five setups (the eight MI300X rows are one model on one GPU).
func TestServingCrossValidation(t *testing.T) {
	r := fitted(t)
	cv := r.servingFit.cv
	require.Len(t, cv.errors, 39)
	assert.Equal(t, 18, cv.groups)
	family := 0
	for i, sc := range r.serving {
		if sc.row.Engine != "vllm" {
			if sc.row.Use == useHeldOut && servingInFamily(sc.row) && math.Abs(sc.replay.Decode(r.throughput())/sc.row.TokensPerS-1) <= 0.25 {
				family++
			}
			continue
		}
		rel := cv.estimates[i]/sc.row.TokensPerS - 1
		if servingInFamily(sc.row) && math.Abs(rel) <= 0.25 {
			family++
		}
		t.Logf("%-8s %-40.40s %-36.36s TP%d measured %6.1f out of sample %6.1f (%+.0f%%)", sc.row.Use, sc.row.Model, sc.row.GPU, sc.row.TP, sc.row.TokensPerS, cv.estimates[i], rel*100)
		bound := 0.25
		if gap, ok := servingCVGaps[servingGapKey(sc.row)]; ok {
			bound = gap.Bound
			assert.Greater(t, math.Abs(rel), 0.25, "%s on %s is within 25 %% out of sample: drop it from servingCVGaps", sc.row.Model, sc.row.GPU)
			t.Logf("  held to %.0f %%: %s", 100*bound, gap.Why)
		}
		assert.LessOrEqual(t, math.Abs(rel), bound, "%s on %s (%s)", sc.row.Model, sc.row.GPU, sc.row.Source)
	}
	t.Logf("out of sample: median %.1f%%, p90 %.1f%%; per setup median %.1f%%, p90 %.1f%%; issue 22's family within 25 %%: %d", 100*cv.median(), 100*cv.p90(), 100*cv.setupMedian(), 100*cv.setupP90(), family)
	assert.GreaterOrEqual(t, family, 11)
	assert.LessOrEqual(t, cv.median(), servingCVMedianMax)
	assert.LessOrEqual(t, cv.p90(), servingCVP90Max)
}

// servingGapFigure is a figure a servingCVGaps reason quotes from the
// replay: the row's error in sample (the shipped constants) or out of
// sample (the leave-one-source-out cross-validation), as signedPct prints
// it with an ASCII minus.
type servingGapFigure struct {
	why, key    string
	outOfSample bool
	quote       string // the figure and what follows it in why
}

// distillSource is Red Hat's table of DeepSeek-R1-Distill-Llama-70B rows.
const distillSource = "https://huggingface.co/neuralmagic/DeepSeek-R1-Distill-Llama-70B-FP8-dynamic/blob/main/README.md"

// servingGapFigures are the figures the reasons quote (docs audit of
// session 16: a100TP8Gap said +26 % in sample and w4a16Gap -6 % for the
// RTN int4 row when the replay gave +25 % and -2 %).
var servingGapFigures = []servingGapFigure{
	{a100TP8Gap, "https://github.com/vllm-project/vllm/issues/16300|QwQ-32B", false, "+25 % in sample"},
	{w4a16Gap, distillSource + "|DeepSeek-R1-Distill-Llama-70B (bf16: deepseek-ai/DeepSeek-R1-Distill-Llama-70B)", true, "-5 % and"},
	{w4a16Gap, distillSource + "|DeepSeek-R1-Distill-Llama-70B-FP8-dynamic (neuralmagic)", true, "+6 % out of sample"},
	{w4a16Gap, "https://github.com/vllm-project/vllm/pull/26051|Llama-3.1-8B (RTN int4, group 128)", true, "-2 % out of sample"},
	{w4a16Gap, distillSource + "|DeepSeek-R1-Distill-Llama-70B-quantized.w4a16 (neuralmagic)", false, "+52 % in sample"},
	{rtx4090Gap, "https://github.com/tenstorrent/tt-inference-server/issues/394|Qwen3-4B", true, "-26 % out of sample with them"},
}

// TestServingGapFiguresReplayed checks every servingGapFigures quote: it
// is in its reason, and its figure is the replayed row's error today, so
// a refit that moves one fails here until the reason is rewritten.
func TestServingGapFiguresReplayed(t *testing.T) {
	r := fitted(t)
	c := r.throughput()
	index := map[string]int{}
	for i, sc := range r.serving {
		index[servingGapKey(sc.row)] = i
	}
	for _, f := range servingGapFigures {
		assert.Contains(t, f.why, f.quote)
		i, ok := index[f.key]
		require.True(t, ok, "no replayed row %s", f.key)
		sc := r.serving[i]
		est := sc.decode(c)
		if f.outOfSample {
			est = r.servingFit.cv.estimates[i]
		}
		figure := strings.Replace(signedPct(est/sc.measured()-1), "−", "-", 1)
		assert.True(t, strings.HasPrefix(f.quote, figure+" "), "%s: the replay gives %s, the reason quotes %q", f.key, figure, f.quote)
	}
	// rtx4090Gap quotes the shipped bandwidth fraction too.
	assert.Contains(t, rtx4090Gap, fmt.Sprintf("%.2f in the shipped fit", c.VLLM.BandwidthFraction))
}

// TestServingTermsKeptByCrossValidation checks the choice of terms on the
// rows: every candidate set was cross-validated; each accepted set but the
// base lowered the out-of-sample median of every accepted set it extends
// without raising its p90 (keepTerm), each rejected one failed that
// against one of them; the shipped terms are the accepted set of the
// lowest median, and the planner charges them as the fitter does
// (plannerCharges).
func TestServingTermsKeptByCrossValidation(t *testing.T) {
	f := fitted(t).servingFit
	require.Len(t, f.tried, len(servingCandidates))
	for i, cv := range f.tried {
		require.Equal(t, servingCandidates[i], cv.terms)
		t.Logf("%s: median %.3f, p90 %.3f: accepted %v", servingTermsText(cv.terms), cv.median(), cv.p90(), f.accepted[i])
		beatsAll := true
		for j, sub := range f.tried[:i] {
			if f.accepted[j] && sub.terms.within(cv.terms) {
				beatsAll = beatsAll && cv.median() < sub.median() && cv.p90() <= sub.p90()
			}
		}
		assert.Equal(t, beatsAll, f.accepted[i], servingTermsText(cv.terms))
		if f.accepted[i] {
			assert.GreaterOrEqual(t, cv.median(), f.cv.median(), "an accepted set has a lower median than the shipped one")
		}
	}
	assert.Equal(t, servingTerms{parts: true, generation: true}, f.cv.terms, "the terms the rows support today")
	require.NoError(t, plannerCharges(f.cv.terms))
}

// TestServingGroups checks the source groups of the cross-validation on
// the rows' own URLs: the three locales of AMD's page are one source, the
// ROCm fork's README at two commits one, two issues of one repository two.
func TestServingGroups(t *testing.T) {
	amd := servingGroup("https://www.amd.com/en/developer/resources/rocm-hub/dev-ai/performance-results.html")
	assert.Equal(t, amd, servingGroup("https://www.amd.com/fr/developer/resources/rocm-hub/dev-ai/performance-results.html"))
	assert.Equal(t, amd, servingGroup("https://www.amd.com/zh-cn/developer/resources/rocm-hub/dev-ai/performance-results.html"))
	assert.Equal(t, servingGroup("https://github.com/ROCm/vllm/blob/b309ea79418c6fc9058a6b2dec312375d3c75753/docs/dev-docker/README.md"),
		servingGroup("https://github.com/ROCm/vllm/blob/040de12d45c16d6de6ad386cc57dd68b8c5b805e/docs/dev-docker/README.md"))
	assert.NotEqual(t, servingGroup("https://github.com/tenstorrent/tt-inference-server/issues/340"),
		servingGroup("https://github.com/tenstorrent/tt-inference-server/issues/356"))
}

// TestServingReplayMatchesFit checks that the planner's replay of every
// vLLM row under the generated constants is the fitter's arithmetic: both
// count the same parts, MoE, MLA and indexer layers and pick the same
// per-part time for the GPU. Within 0.1 %: the planner rounds a speed of
// 100 tokens/s or more to 0.1 (the stream-only replay the fitter starts
// from, too), and the fitter scales the ring all-reduce's transfer time,
// a few microseconds a step, with the bandwidth fraction.
func TestServingReplayMatchesFit(t *testing.T) {
	r := fitted(t)
	c := r.throughput()
	f := r.servingFit
	for _, sc := range r.serving {
		if sc.row.Engine != "vllm" {
			continue
		}
		assert.InEpsilon(t, 1/f.constants.seconds(sc.features(f.cv.terms)), sc.replay.Decode(c), 1e-3, "%s on %s", sc.row.Model, sc.row.GPU)
	}
}

// servingInFamily reports whether a row is of issue 22's family:
// DeepSeek-V3/R1 (the catalog's DeepSeek-V3, V3.1, V3.2 and R1),
// Llama-3.x-70B and Qwen3 MoE models on H100, H200 and MI300X, of either
// engine. Qwen3 MoE is the catalog architecture qwen3_moe (Qwen3MoeForCausalLM:
// Qwen3-30B-A3B, Qwen3-235B-A22B, Qwen3-Coder-480B-A35B), not a name
// prefix: "Qwen3" also begins Qwen3.5, Qwen3-Next and Qwen3-VL, other
// architectures.
func servingInFamily(r servingRow) bool {
	name := r.CatalogModel
	family := strings.HasPrefix(name, "DeepSeek-V3") || strings.HasPrefix(name, "DeepSeek-R1") ||
		strings.HasPrefix(name, "Llama-3") && strings.Contains(name, "70B") || qwen3MoE(name)
	gpu := strings.Contains(r.Spec, "H100") || strings.Contains(r.Spec, "H200") || strings.Contains(r.Spec, "MI300X")
	return family && gpu
}

// qwen3MoE reports whether the catalog model name is of the Qwen3 MoE
// architecture.
func qwen3MoE(name string) bool {
	m := model.Lookup(name)
	return m != nil && m.Architecture == "qwen3_moe"
}

// TestServingInFamily checks servingInFamily on catalog names: Qwen3 MoE
// models are in, Qwen3.5 and Qwen3-Next MoE models and dense Qwen3 are
// not; DeepSeek-V3 and Llama-3.1-70B are; no GPU outside H100, H200 and
// MI300X is.
func TestServingInFamily(t *testing.T) {
	h100 := "NVIDIA H100 SXM5 80GB"
	for name, want := range map[string]bool{
		"Qwen3-30B-A3B": true, "Qwen3-235B-A22B": true, "Qwen3-Coder-480B-A35B-Instruct": true,
		"Qwen3.5-35B-A3B": false, "Qwen3.5-397B-A17B": false, "Qwen3-Next-80B-A3B-Instruct": false, "Qwen3-32B": false,
		"DeepSeek-V3": true, "DeepSeek-R1": true, "Llama-3.1-70B": true, "Llama-3.3-70B-Instruct": true, "Qwen2.5-72B": false,
	} {
		require.NotNil(t, model.Lookup(name), name)
		assert.Equal(t, want, servingInFamily(servingRow{CatalogModel: name, Spec: h100}), name)
	}
	assert.False(t, servingInFamily(servingRow{CatalogModel: "Qwen3-235B-A22B", Spec: "NVIDIA B200 SXM"}))
	assert.True(t, servingInFamily(servingRow{CatalogModel: "DeepSeek-V3.1", Spec: "AMD Instinct MI300X"}))
}

// TestServingRowsWithin25Percent replays every replayable row of
// data/serving_decode.json under the shipped constants (an SGLang row
// under SGLang's own) and prints it; at least 10 must be within 25 %
// (issue 22), and of issue 22's family (servingInFamily, both engines: 14
// vLLM rows, Red Hat's three DeepSeek-R1-Distill-Llama-70B rows counted as
// Llama-3.x-70B, and 1 SGLang row) the rows within 25 % are listed and
// counted: 13 in sample, the 10 by row count, of seven setups (the
// ROCm fork README's five Llama-3.1-70B rows and AMD's page's three are
// one setup each; Llama-3.3-70B on 4 H100s, the distill in bf16 and in FP8
// on 2 H100s, DeepSeek-V3-AWQ on 8 H100s and SGLang's DeepSeek-V3.1 on 8
// MI300X, a row SGLang's constants are fitted on). DeepSeek-R1-0528-AWQ on
// 8 H100s and the distill's w4a16 row on one H100 miss. The SGLang rows
// are bound by TestSGLangRowsReplay (sglang_test.go).
func TestServingRowsWithin25Percent(t *testing.T) {
	r := fitted(t)
	c := r.throughput()
	within, family := 0, 0
	for _, sc := range r.serving {
		d := sc.replay.Decode(c)
		rel := d/sc.row.TokensPerS - 1
		t.Logf("%-6s %-8s %-26s %-44s TP%d measured %6.1f estimate %6.1f (%+.0f%%)", sc.row.Engine, sc.row.Use, sc.row.Model, sc.row.GPU, sc.row.TP, sc.row.TokensPerS, d, rel*100)
		if math.Abs(rel) > 0.25 {
			continue
		}
		within++
		if servingInFamily(sc.row) {
			family++
			t.Logf("  in issue 22's family, within 25 %%: %s %s on %d × %s", sc.row.Engine, sc.row.Model, sc.row.GPUs, sc.row.GPU)
		}
	}
	assert.GreaterOrEqual(t, within, 10)
	assert.GreaterOrEqual(t, family, 13)
}

// TestOffloadRowsHaveSources checks data/offload_decode.json: every row
// names its model, GPU, placement and speed and quotes an https source, or,
// where this project recorded it (recorded_by says how), the file of data/
// it quotes.
func TestOffloadRowsHaveSources(t *testing.T) {
	var doc struct {
		Rows []struct {
			Model      string  `json:"model"`
			GPU        string  `json:"gpu"`
			Placement  string  `json:"placement"`
			TokensPerS float64 `json:"tokens_per_s"`
			Quote      string  `json:"quote"`
			Source     string  `json:"source"`
			RecordedBy string  `json:"recorded_by"`
		} `json:"rows"`
	}
	require.NoError(t, readJSON(filepath.Join(testData, "offload_decode.json"), &doc))
	require.GreaterOrEqual(t, len(doc.Rows), 5)
	for _, row := range doc.Rows {
		if row.RecordedBy != "" {
			const dir = "internal/calibration/data/"
			require.True(t, strings.HasPrefix(row.Source, dir), row.Model)
			raw, err := os.ReadFile(filepath.Join(testData, strings.TrimPrefix(row.Source, dir)))
			require.NoError(t, err, row.Model)
			text := strings.Join(strings.Fields(string(raw)), " ") // the quote joins the file's lines with one space
			for _, part := range strings.Split(row.Quote, " ... ") {
				assert.Contains(t, text, part, "%s %s: the quote is the file's text", row.Model, row.Placement)
			}
			assert.Contains(t, row.Quote, fmt.Sprintf(`"avg_ts": %s,`, strconv.FormatFloat(row.TokensPerS, 'f', -1, 64)), "%s %s: tokens_per_s is the record's avg_ts", row.Model, row.Placement)
		} else {
			assert.True(t, strings.HasPrefix(row.Source, "https://"), row.Model)
		}
		assert.NotEmpty(t, row.Quote, row.Model)
		assert.NotEmpty(t, row.Placement, row.Model)
		assert.NotEmpty(t, row.GPU, row.Model)
		assert.Positive(t, row.TokensPerS, row.Model)
	}
}

// TestOffloadReplay replays the replayed rows of data/offload_decode.json
// (MoE experts on the CPU with --n-cpu-moe, layers on the CPU with -ngl)
// under the fitted constants and prints them: at least 5 published rows,
// every row within 25 %, and every held-out row (which the hand-over fit
// never sees: the published ones and the three this project recorded on the
// H200 VM, whose host bandwidth is the socket's peak, an upper bound on the
// VM's share) within 15 % at the median, and the published ones alone too.
func TestOffloadReplay(t *testing.T) {
	r := fitted(t)
	c := r.throughput()
	published := 0
	for _, oc := range r.offload {
		d := oc.replay.Decode(c)
		rel := d/oc.row.TokensPerS - 1
		t.Logf("%-8s %-28s %-32s %-40s measured %5.1f estimate %5.1f (%+.0f%%)", oc.row.Use, oc.row.Model, oc.row.GPU, oc.row.Placement, oc.row.TokensPerS, d, rel*100)
		assert.LessOrEqual(t, math.Abs(rel), 0.25, "%s on %s, %s", oc.row.Model, oc.row.GPU, oc.row.Placement)
		if oc.row.published() {
			published++
		}
	}
	assert.GreaterOrEqual(t, published, 5)
	heldOut, recorded := offloadHeldOutErrors(r.offload, c)
	require.NotEmpty(t, heldOut)
	assert.LessOrEqual(t, quantile(heldOut, 0.5), 0.15)
	assert.LessOrEqual(t, quantile(append(append([]float64(nil), heldOut...), recorded...), 0.5), 0.15)
	assert.Len(t, recorded, 3, "the H200 VM's --n-cpu-moe 24, 48 and -ot rows")
}

// TestH200OffloadBaseline replays the all-GPU run beside the H200 VM's
// offload rows (data/offload_decode.json, gpu_only: Qwen3-30B-A3B Q4_K_M,
// -ngl 99, 300.1 tok/s) as a one-GPU run: the GPU part of those rows under
// the same constants, within issue 22's 12 % decode bound for the H200.
// Its error is part of theirs: the GPU's share of an offloaded step is the
// same kernels less the host's experts.
func TestH200OffloadBaseline(t *testing.T) {
	rows, _, err := loadOffload(testData)
	require.NoError(t, err)
	c := fitted(t).throughput()
	n := 0
	for _, row := range rows {
		if !row.GPUOnly {
			continue
		}
		m, l, err := resolveRow("offload_decode.json", row.Model, row.CatalogModel, row.Level)
		require.NoError(t, err)
		gpu, err := offloadGPU(row)
		require.NoError(t, err)
		d := plan.NewReplay(speedRowsEngine, m, l, gpu, 1, 0, row.DecodeContext).Decode(c)
		rel := d/row.TokensPerS - 1
		t.Logf("%s %s on %s, %s: measured %.1f, estimate %.1f (%+.1f%%)", row.Model, row.Level, row.GPU, row.Placement, row.TokensPerS, d, rel*100)
		assert.LessOrEqual(t, math.Abs(rel), 0.12)
		n++
	}
	assert.Equal(t, 1, n)
}

// TestHostHarnessWithin20Percent replays data/host_harness.json (one
// thread of llama.cpp's CPU backend, tokens per CPU-second) through the
// planner's CPU speed model, each file at the types its matrices are stored
// in: every fit row (Llama-3.2-1B, one pure GGUF per type) and every
// held-out row of Qwen2.5-0.5B (which the fit never sees; its Q4_K_M file
// mostly Q5_0 and Q8_0 by llama-quantize's fallback) and of Llama-3.2-1B's
// Q4_K_M mix within 20 %, decode and prefill: issue 22's bound for this
// harness. (The mix was held to 25 % while its fastest run, 18.9 tokens per
// CPU-second, replayed +22 %; session 13's runs of it spread 2.1 to 25.1,
// docs/accuracy.md "CPU decode".) Rows of the other machine (other_machine,
// why) are shown in docs/accuracy.md, not held.
func TestHostHarnessWithin20Percent(t *testing.T) {
	r := fitted(t)
	c := r.throughput()
	held := map[string]bool{}
	for _, hc := range r.hostCores.cases {
		d := hc.replay.Decode(c)
		rel := d/hc.row.decodeRate() - 1
		p := hc.replay.Prefill(c)
		t.Logf("%-13s %-14s %-7s pure %-5v measured %5.1f tok/s per core, estimate %5.1f (%+.0f%%); prefill %5.0f, estimate %5.0f (%+.0f%%)",
			hc.row.Use, hc.row.Model, hc.row.Quant, hc.row.Pure, hc.row.decodeRate(), d, rel*100, hc.row.prefillRate(), p, (p/hc.row.prefillRate()-1)*100)
		if hc.row.Use == useOtherMachine {
			continue
		}
		assert.LessOrEqual(t, math.Abs(rel), 0.20, "%s %s", hc.row.Model, hc.row.Quant)
		assert.InDelta(t, 0, p/hc.row.prefillRate()-1, 0.20, "prefill %s %s", hc.row.Model, hc.row.Quant)
		if hc.row.Use == useHeldOut {
			held[hc.row.Model+" "+hc.row.Quant] = true
		}
	}
	for _, k := range []string{"Qwen2.5-0.5B f16", "Qwen2.5-0.5B q8_0", "Qwen2.5-0.5B q4_k_m", "Llama-3.2-1B q4_k_m"} {
		assert.True(t, held[k], "held out: %s", k)
	}
	assert.Greater(t, c.HostWeightsPerCore[ggml.Q8_0], c.HostWeightsPerCore[ggml.F16], "per core, Q8_0 multiplies more weights per second than 16-bit")
}

// TestHarnessFilesHoldTheEnumeratedTypes checks the per-tensor typing the
// CPU model charges (quant.MatmulTypes) against the census of the GGUFs
// the harness ran (stored_types, gguf-py's GGUFReader on the files
// llama_model_quantize wrote): each type's share of the matrices, and the
// output head's type (the tied token embedding). Qwen2.5-0.5B's Q4_K_M
// file is the case of the fallback: its 896-wide rows take Q5_0 for Q4_K
// and Q8_0 for Q6_K.
func TestHarnessFilesHoldTheEnumeratedTypes(t *testing.T) {
	r := fitted(t)
	n := 0
	for _, hc := range r.hostCores.cases {
		st := hc.row.StoredTypes
		if st == nil {
			continue
		}
		n++
		l, err := hc.row.level()
		require.NoError(t, err)
		m := model.Lookup(hc.row.Model)
		mw, ok := quant.MatmulTypes(m, l)
		require.True(t, ok)
		// The census counts every matrix, the token embedding too; the
		// enumeration leaves an untied embedding out (a lookup).
		enumerated := map[string]float64{}
		var total, census float64
		for _, p := range mw.Layers {
			enumerated[p.Type.String()] += p.Weights
			total += p.Weights
		}
		enumerated[mw.Head.Type.String()] += mw.Head.Weights
		total += mw.Head.Weights
		for _, v := range st.Matrices {
			census += v
		}
		name := hc.row.Model + " " + hc.row.Quant
		require.NotNil(t, st.TokenEmbd, name)
		assert.True(t, m.TieEmbeddings && st.Output == nil, "%s: the harness models tie their embeddings", name)
		assert.Equal(t, st.TokenEmbd.Type, mw.Head.Type.String(), "%s: the head's type", name)
		for typ, v := range st.Matrices {
			assert.InDelta(t, v/census, enumerated[typ]/total, 0.005, "%s: %s's share", name, typ)
		}
		for typ := range enumerated {
			assert.Contains(t, st.Matrices, typ, "%s: %s in the file", name, typ)
		}
	}
	assert.GreaterOrEqual(t, n, 10, "the census of each file of the 2026-11-29 series")
}

// TestPrefillTodayByArchitecture replays today's llama.cpp builds' pp512
// rows on Ada, Ampere GA10x, GDDR Blackwell and GA100 GPUs
// (data/prefill_today.json) under the constants in use: the fit rows, one
// GPU per architecture, within 10 % at the median, and the held-out rows
// (other GPUs and builds, never seen by the fit) within 25 % at the median,
// per architecture too, and each within 35 %. Before the per-architecture
// MMQ fractions every such plan took the 2023-24 dequantize-then-GEMM path
// and was about 3 times too slow (RTX 4090, Llama 2 7B Q4_0: about 3800
// against 11993 measured), or had no figure (the Blackwell and A30 records
// hold no 16-bit peak).
func TestPrefillTodayByArchitecture(t *testing.T) {
	cases, err := loadPrefillToday(testData)
	require.NoError(t, err)
	fitGPU, fitModel := map[string]string{}, map[string]string{}
	for _, sc := range cases {
		if sc.use != useFit {
			continue
		}
		if g, ok := fitGPU[sc.arch]; ok {
			assert.Equal(t, g, sc.row.Hardware, "%s: the fit rows are of one GPU", sc.arch)
		}
		fitGPU[sc.arch], fitModel[sc.arch] = sc.row.Hardware, sc.row.Model
	}
	assert.Len(t, fitGPU, 4, "ada, ampere, blackwell and ga100 each have a fit GPU")
	heldByArch := map[string][]float64{}
	var fit, held []float64
	for _, sc := range cases {
		p := sc.replay.Prefill(calibration.Fitted)
		require.Positive(t, p, "%s %s", sc.row.Hardware, sc.row.Model)
		rel := p/sc.row.PP - 1
		t.Logf("%-8s %-6s %-26s %-16s measured %8.1f estimate %8.1f (%+.0f%%)", sc.use, sc.arch, sc.row.Hardware, sc.row.Model, sc.row.PP, p, 100*rel)
		if sc.use == useFit {
			fit = append(fit, math.Abs(rel))
			continue
		}
		assert.False(t, sc.row.Hardware == fitGPU[sc.arch] && sc.row.Model == fitModel[sc.arch], "held-out %s %s: the fit row's GPU and model", sc.row.Hardware, sc.row.Model)
		held = append(held, math.Abs(rel))
		heldByArch[sc.arch] = append(heldByArch[sc.arch], math.Abs(rel))
		assert.LessOrEqual(t, math.Abs(rel), 0.35, "held-out %s %s", sc.row.Hardware, sc.row.Model)
	}
	require.NotEmpty(t, fit)
	require.NotEmpty(t, held)
	t.Logf("today's build: fit n=%d median %.3f; held-out n=%d median %.3f", len(fit), quantile(fit, 0.5), len(held), quantile(held, 0.5))
	assert.LessOrEqual(t, quantile(fit, 0.5), 0.10)
	assert.LessOrEqual(t, quantile(held, 0.5), 0.25)
	assert.GreaterOrEqual(t, len(heldByArch["blackwell"]), 3, "the RTX 5080, 5070 Ti and 5070 check the RTX 5090's fraction")
	for arch, errs := range heldByArch {
		t.Logf("held-out %s n=%d median %.3f", arch, len(errs), quantile(errs, 0.5))
		assert.LessOrEqual(t, quantile(errs, 0.5), 0.25, arch)
	}
}

// TestDecodeTodayByArchitecture replays the tg128 figures of today's
// llama.cpp CUDA builds (data/prefill_today.json: Llama 2 7B Q4_0 on 16
// GDDR GPUs of Ampere GA10x, Ada and Blackwell with a datasheet
// bandwidth) under the constants in use, split by decodeSplit: issue 22's
// medians (fit 12 %, held-out 15 %), each held-out row within 15 %, and no
// bias left (the median signed error of all rows within ±5 %). Under the
// May 2024 builds' constants every row was too slow (median −14 %, the
// RTX 4080 SUPER −18 %).
func TestDecodeTodayByArchitecture(t *testing.T) {
	cases, err := loadDecodeToday(testData)
	require.NoError(t, err)
	require.Len(t, cases, 16, "every GDDR scoreboard row with a datasheet bandwidth")
	var fit, held, signed []float64
	for _, sc := range cases {
		d := sc.replay.Decode(calibration.Fitted)
		require.Positive(t, d, "%s", sc.row.Hardware)
		rel := d/sc.row.TG - 1
		t.Logf("%-8s %-9s %-32s measured %6.1f estimate %6.1f (%+.1f%%)", sc.use, sc.arch, sc.row.Hardware, sc.row.TG, d, 100*rel)
		signed = append(signed, rel)
		if sc.use == useFit {
			fit = append(fit, math.Abs(rel))
			continue
		}
		held = append(held, math.Abs(rel))
		assert.LessOrEqual(t, math.Abs(rel), 0.15, "held-out %s", sc.row.Hardware)
	}
	require.Len(t, fit, 8)
	require.Len(t, held, 8)
	t.Logf("today's build, decode: fit n=%d median %.3f; held-out n=%d median %.3f; signed median %+.3f", len(fit), quantile(fit, 0.5), len(held), quantile(held, 0.5), quantile(signed, 0.5))
	assert.LessOrEqual(t, quantile(fit, 0.5), 0.12)
	assert.LessOrEqual(t, quantile(held, 0.5), 0.15)
	assert.InDelta(t, 0, quantile(signed, 0.5), 0.05, "median signed error")
}

// TestFitConstantsRecoversKnownConstants fits the vLLM rows' own counts
// (their models, GPUs and stream times) with speeds made from known
// constants under every term: the coordinate descent must find them again
// (within the rounding the generated file applies), so a change of the
// search that stops short of the least-squares point fails here.
func TestFitConstantsRecoversKnownConstants(t *testing.T) {
	r := fitted(t)
	terms := servingTerms{parts: true, generation: true, indexer: true}
	want := servingConstants{1 / 0.8, 300, 60, 35, 10, 40, 250, 150}
	var cases []servingCase
	for _, sc := range r.serving {
		if sc.row.Engine == "vllm" {
			sc.row.TokensPerS = 1 / want.seconds(sc.features(terms))
			cases = append(cases, sc)
		}
	}
	got := fitConstants(cases, terms)
	assert.InDelta(t, 0.8, 1/got[colStream], 0.005)
	for j := colStep; j < servingCols; j++ {
		assert.InDelta(t, want[j], got[j], 1, "constant %d", j)
	}
}

// TestFitConstantsCountsASetupOnce: repeating a setup's rows (as a source
// does that publishes one setup under several engine versions) leaves the
// fitted constants as they are, since each setup weighs one row in all
// (setupWeights). The DeepSeek-V3.2 row alone sets the MLA time with the
// AWQ rows, so counted five times unweighted it would move it.
func TestFitConstantsCountsASetupOnce(t *testing.T) {
	r := fitted(t)
	terms := r.servingFit.cv.terms
	var cases, repeated []servingCase
	for _, sc := range r.serving {
		if sc.row.Engine != "vllm" {
			continue
		}
		cases = append(cases, sc)
		repeated = append(repeated, sc)
		if sc.row.CatalogModel == "DeepSeek-V3.2" || strings.Contains(sc.row.Source, "ROCm/vllm") {
			for range 4 {
				repeated = append(repeated, sc)
			}
		}
	}
	require.Greater(t, len(repeated), len(cases)+40)
	assert.Equal(t, fitConstants(cases, terms), fitConstants(repeated, terms))
	ws := setupWeights(repeated)
	sum := map[string]float64{}
	for i, sc := range repeated {
		sum[servingSetup(sc.row)] += ws[i]
	}
	for setup, w := range sum {
		assert.InDelta(t, 1, w, 1e-9, setup)
	}
}

// TestSetupWeights checks setupWeights on the rows: the three locales of
// AMD's page are one setup (a third each), the ROCm fork README's five
// Llama-3.1-70B rows one (a fifth each) and its seven Llama-3.1-405B rows
// another (a seventh), and tt-inference-server issue 340's four models on
// an A100 four setups (one each).
func TestSetupWeights(t *testing.T) {
	var cases []servingCase
	for _, sc := range fitted(t).serving {
		if sc.row.Engine == "vllm" {
			cases = append(cases, sc)
		}
	}
	ws := setupWeights(cases)
	seen := map[string]int{}
	for i, sc := range cases {
		var want float64
		switch {
		case strings.Contains(sc.row.Source, "amd.com"):
			want, seen["amd"] = 1.0/3, seen["amd"]+1
		case strings.Contains(sc.row.Source, "ROCm/vllm") && sc.row.CatalogModel == "Llama-3.1-70B":
			want, seen["readme70"] = 1.0/5, seen["readme70"]+1
		case strings.Contains(sc.row.Source, "ROCm/vllm") && sc.row.CatalogModel == "Llama-3.1-405B":
			want, seen["readme405"] = 1.0/7, seen["readme405"]+1
		case strings.HasSuffix(sc.row.Source, "tt-inference-server/issues/340"):
			want, seen["tt340"] = 1, seen["tt340"]+1
		default:
			continue
		}
		assert.InDelta(t, want, ws[i], 1e-12, "%s on %s (%s)", sc.row.Model, sc.row.GPU, sc.row.Source)
	}
	assert.Equal(t, map[string]int{"amd": 3, "readme70": 5, "readme405": 7, "tt340": 4}, seen)
}

// TestVLLMValidatedOnQuotesTheCrossValidation: the figures a vLLM plan's
// validated_on quotes (calibration.VLLMOutOfSample) are the fit's: the vLLM rows
// and sources of the leave-one-source-out cross-validation and its
// out-of-sample median and p90.
func TestVLLMValidatedOnQuotesTheCrossValidation(t *testing.T) {
	cv := fitted(t).servingFit.cv
	want := fmt.Sprintf("%d rows of %d sources; out of sample median %s, p90 %s", len(cv.errors), cv.groups, pct(cv.median()), pct(cv.p90()))
	assert.Equal(t, want, calibration.VLLMOutOfSample)
}
