package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
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
	borrowed.VLLM = calibration.ServingDecode{LayerSeconds: c.LayerLatencyCUDA}
	fit, old := quantile(replayErrors(vllm, c), 0.5), quantile(replayErrors(vllm, borrowed), 0.5)
	t.Logf("vLLM rows: median |error| %.3f fitted, %.3f with llama.cpp's constants", fit, old)
	assert.Less(t, fit, old)
}

// servingHeldOutMedianMax is the ratchet on the median |error| of the
// held-out vLLM rows of data/serving_decode.json, which the fit never sees.
// On the first three held-out rows (Llama-3.1-8B on an A100, Llama-3.1-405B
// on 8 MI300X, gemma-3-4b on an A100) it was 9.4 %, within the 15 % of
// issue 22; AMD's Llama-3.1-70B rows on 8 MI300X (servingGaps) raised it to
// 16.6 %; with the H100 rows of vLLM PRs 23197 and 26051 (Llama-3.3-70B
// over 4, Llama-3.1-8B bf16, int8 and int4 on one: -15 to -20 %), the two
// DeepSeek AWQ rows on 8 H100s and Vultr's two Nemotron rows on B200s it
// was 16.6 % over 14 rows; the ROCm fork's README rows (Llama-3.1-70B and
// 405B FP8 on 8 MI300X under vLLM 0.7.3, 405B under 0.10.0) bring it to
// 15.9 % over 17; the README's other vLLM versions (0.6.6, 0.8.3, 0.8.5,
// 0.9.0.1 for both models, 0.9.1 for 405B) to 15.5 % over 26. Tighten it
// when the model improves; the test fails when it gets worse.
const servingHeldOutMedianMax = 0.16

// servingGaps are the replayed vLLM rows (by source and model,
// servingGapKey) that miss issue 22's 25 %, each with the bound it is held
// to and why it misses.
var servingGaps = map[string]struct {
	Bound float64
	Why   string
}{
	"https://www.amd.com/fr/developer/resources/rocm-hub/dev-ai/performance-results.html|Llama-3.1-70B-Instruct (amd/Llama-3.1-70B-Instruct-FP8-KV)":    {Bound: 0.35, Why: amdLlama70BGap},
	"https://www.amd.com/zh-cn/developer/resources/rocm-hub/dev-ai/performance-results.html|Llama-3.1-70B-Instruct (amd/Llama-3.1-70B-Instruct-FP8-KV)": {Bound: 0.35, Why: amdLlama70BGap},
	"https://github.com/tenstorrent/tt-inference-server/issues/356|DeepSeek-R1-0528-AWQ":                                                                {Bound: 0.55, Why: deepSeekMLAGap},
	"https://docs.vultr.com/inference-cookbook/cuda/optimization/concurrency-tuning|Nemotron Nano 30B (FP8)":                                            {Bound: 0.55, Why: hybridBlockGap},

	// The ROCm fork's README (the setup of AMD's page) under vLLM 0.8.3, 0.8.5
	// and 0.9.0.1: 7.5-7.6 ms a token, the same gap.
	"https://github.com/ROCm/vllm/blob/402118091eb54d81abcc322c51d1bf5491c3ef93/docs/dev-docker/README.md|Llama-3.1-70B-Instruct (amd/Llama-3.1-70B-Instruct-FP8-KV)": {Bound: 0.35, Why: amdLlama70BGap},
	"https://github.com/ROCm/vllm/blob/16d2b92ebcf90fe55cf73fa0b9329a6c9d3dede8/docs/dev-docker/README.md|Llama-3.1-70B-Instruct (amd/Llama-3.1-70B-Instruct-FP8-KV)": {Bound: 0.35, Why: amdLlama70BGap},
	"https://github.com/ROCm/vllm/blob/68af0558487474544f16002b57de8ab53d5f19db/docs/dev-docker/README.md|Llama-3.1-70B-Instruct (amd/Llama-3.1-70B-Instruct-FP8-KV)": {Bound: 0.35, Why: amdLlama70BGap},
}

// servingGapKey is a row's key in servingGaps.
func servingGapKey(r servingRow) string { return r.Source + "|" + r.Model }

// hybridBlockGap is why NVIDIA-Nemotron-3-Nano-30B-A3B on 2 B200s (Vultr's
// cookbook, vLLM 0.12 or 0.16) is estimated at half its measured speed.
const hybridBlockGap = "the row decodes a token in 2.91 ms over 52 blocks, 23 Mamba2, 23 MoE and 6 attention, each a single mixer: the per-layer time fitted on transformer layers (attention and MLP, their norms and residuals) charges 110 us a block, 5.7 ms, twice the measured step before any weight is read. A hybrid block is not a transformer layer; no fit row is a hybrid, so no per-block time can be fitted yet"

// amdLlama70BGap is why AMD's Llama-3.1-70B FP8 rows on 8 MI300X (ROCm vLLM
// 0.10.1 and 0.10.2 on AMD's page; 0.8.3, 0.8.5 and 0.9.0.1 in the ROCm
// fork's README) are estimated too slow.
const amdLlama70BGap = "the rows decode a token in 7.4-7.8 ms over 80 layers: at most 97 us a layer even if the weights streamed in no time (8.8 GB a GPU, about 1.9 ms at the fitted fraction), where the fit charges 110 us a layer; the per-layer time fitted on A100 and RTX 4090 rows and mid-2025 builds does not hold for these ROCm builds at TP 8 (the 0.9.1 build of the same page, -22 %, is within 25 %). Fitting on them would change every vLLM plan's speed"

// deepSeekMLAGap is why DeepSeek-R1-0528-AWQ on 8 H100s (vLLM, mid 2025)
// is estimated at half its measured speed.
const deepSeekMLAGap = "the row decodes a token in 16.1 ms over 61 layers; the MLA term (410 us a layer) was fitted on the one MLA fit row, DeepSeek-V3.2 on 8 H20s (vLLM 0.13), whose layers also run V3.2's sparse-attention indexer, which R1 has not: it charges 25 ms a token here, about three times what the row leaves for MLA (16.1 ms less the 8 ms the weights and the GQA-sized fixed costs take). The vLLM 0.7.3 build of the same model on the same GPUs (33 tokens/s, another held-out row) is within 8 %: MLA decode got faster across 2025 builds, and one row per era cannot fit both"

// TestServingRowsWithin25Percent replays every replayable row of
// data/serving_decode.json under the fitted constants and prints it; at
// least 10 must be within 25 % (issue 22), every vLLM row must be (fit and
// held out) but the servingGaps rows, which are held to their own bounds,
// and the held-out vLLM rows, which the fit never sees, must stay within
// servingHeldOutMedianMax at the median. The SGLang rows are replayed
// under SGLang's own constants and bound by TestSGLangRowsReplay
// (sglang_test.go).
func TestServingRowsWithin25Percent(t *testing.T) {
	r := fitted(t)
	c := r.throughput()
	within := 0
	var heldOut []float64
	for _, sc := range r.serving {
		d := sc.replay.Decode(c)
		rel := d/sc.row.TokensPerS - 1
		t.Logf("%-6s %-8s %-26s %-44s TP%d measured %6.1f estimate %6.1f (%+.0f%%)", sc.row.Engine, sc.row.Use, sc.row.Model, sc.row.GPU, sc.row.TP, sc.row.TokensPerS, d, rel*100)
		if math.Abs(rel) <= 0.25 {
			within++
		}
		if sc.row.Engine != "vllm" {
			continue
		}
		bound := 0.25
		if gap, ok := servingGaps[servingGapKey(sc.row)]; ok {
			bound = gap.Bound
			t.Logf("  held to %.0f %%: %s", 100*bound, gap.Why)
		}
		assert.LessOrEqual(t, math.Abs(rel), bound, "%s on %s (%s)", sc.row.Model, sc.row.GPU, sc.row.Source)
		if sc.row.Use == useHeldOut {
			heldOut = append(heldOut, math.Abs(rel))
		}
	}
	assert.GreaterOrEqual(t, within, 10)
	require.NotEmpty(t, heldOut)
	t.Logf("held-out vLLM rows: %d, median |error| %.1f%%", len(heldOut), 100*quantile(heldOut, 0.5))
	assert.LessOrEqual(t, quantile(heldOut, 0.5), servingHeldOutMedianMax)
}

// TestOffloadRowsHaveSources checks data/offload_decode.json: every row
// names its model, GPU, placement and speed and quotes an https source.
func TestOffloadRowsHaveSources(t *testing.T) {
	var doc struct {
		Rows []struct {
			Model      string  `json:"model"`
			GPU        string  `json:"gpu"`
			Placement  string  `json:"placement"`
			TokensPerS float64 `json:"tokens_per_s"`
			Quote      string  `json:"quote"`
			Source     string  `json:"source"`
		} `json:"rows"`
	}
	require.NoError(t, readJSON(filepath.Join(testData, "offload_decode.json"), &doc))
	require.GreaterOrEqual(t, len(doc.Rows), 5)
	for _, row := range doc.Rows {
		assert.True(t, strings.HasPrefix(row.Source, "https://"), row.Model)
		assert.NotEmpty(t, row.Quote, row.Model)
		assert.NotEmpty(t, row.Placement, row.Model)
		assert.NotEmpty(t, row.GPU, row.Model)
		assert.Positive(t, row.TokensPerS, row.Model)
	}
}

// TestOffloadReplay replays the replayed rows of data/offload_decode.json
// (MoE experts on the CPU with --n-cpu-moe, layers on the CPU with -ngl)
// under the fitted constants and prints them: at least 5 rows, every one
// within 25 %, the held-out rows (which the hand-over fit never sees)
// within 15 % at the median.
func TestOffloadReplay(t *testing.T) {
	r := fitted(t)
	c := r.throughput()
	var heldOut []float64
	for _, oc := range r.offload {
		d := oc.replay.Decode(c)
		rel := d/oc.row.TokensPerS - 1
		t.Logf("%-8s %-28s %-32s %-40s measured %5.1f estimate %5.1f (%+.0f%%)", oc.row.Use, oc.row.Model, oc.row.GPU, oc.row.Placement, oc.row.TokensPerS, d, rel*100)
		assert.LessOrEqual(t, math.Abs(rel), 0.25, "%s on %s, %s", oc.row.Model, oc.row.GPU, oc.row.Placement)
		if oc.row.Use == useHeldOut {
			heldOut = append(heldOut, math.Abs(rel))
		}
	}
	assert.GreaterOrEqual(t, len(r.offload), 5)
	require.NotEmpty(t, heldOut)
	assert.LessOrEqual(t, quantile(heldOut, 0.5), 0.15)
}

// TestHostHarnessWithin20Percent replays the CPU runs of
// data/host_harness.json (llama.cpp's CPU backend, one thread, tokens per
// CPU-second on this project's 2-vCPU AMD EPYC machine) through the
// planner's CPU speed model: every row, fitted (Llama-3.2-1B) or held out
// (Qwen2.5-0.5B, which the fit never sees), within 20 %, but the one whose
// file is mostly other types than its name (use mixed_types, why), and
// each weight family has its own rate.
func TestHostHarnessWithin20Percent(t *testing.T) {
	r := fitted(t)
	c := r.throughput()
	held := 0
	for _, hc := range r.hostCores.cases {
		d := hc.replay.Decode(c)
		rel := d/hc.row.decodeRate() - 1
		t.Logf("%-8s %-14s %-7s measured %5.1f tok/s per core, estimate %5.1f (%+.0f%%)", hc.row.Use, hc.row.Model, hc.row.Quant, hc.row.decodeRate(), d, rel*100)
		if hc.row.Use == useMixedTypes {
			continue // mostly other types than its name (why), shown in docs/accuracy.md
		}
		assert.LessOrEqual(t, math.Abs(rel), 0.20, "%s %s", hc.row.Model, hc.row.Quant)
		p := hc.replay.Prefill(c)
		t.Logf("         prefill measured %5.0f tok/s per core, estimate %5.0f (%+.0f%%)", hc.row.prefillRate(), p, (p/hc.row.prefillRate()-1)*100)
		assert.InDelta(t, 0, p/hc.row.prefillRate()-1, 0.20, "prefill %s %s", hc.row.Model, hc.row.Quant)
		if hc.row.Use == useHeldOut {
			held++
		}
	}
	assert.GreaterOrEqual(t, held, 2, "the held-out model at F16 and Q8_0")
	assert.Greater(t, c.HostWeightsPerCoreSecondQ8, c.HostWeightsPerCoreSecondFloat, "per core, Q8_0 multiplies more weights per second than 16-bit")
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
