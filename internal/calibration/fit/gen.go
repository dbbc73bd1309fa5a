package main

import (
	"bytes"
	"fmt"
	"go/format"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
)

// result is everything the fit computes from the data.
type result struct {
	decode    decodeFit
	prefill   prefillFit
	host      hostFit
	hostCores hostCoreFit
	// cpuISA is the host_harness.json fit rows and the held-out rows of
	// data/cpu_published.json, each with its CPU's vector ISA (cpuisa.go).
	cpuISA []cpuISACase
	// cpuISAFit is HostCoreFactorNoAVX512 and its cross-validation.
	cpuISAFit        cpuISAFit
	attention        attentionFit
	overhead         overheadFit
	llamaOverhead    llamaOverheadFit
	llamaFitOverhead llamaFitOverheadFit
	shape            shapeFit
	replayed         []speedCase
	unmapped         []string
	heldOut          []speedCase
	bench            []speedCase // the H200 llama-bench records (data/h200-speed)
	// benchHeldOut is the H200 llama-bench records of llama.cpp 34af94cd
	// (data/h200-speed-34af94cd): held out, replayed only.
	benchHeldOut []speedCase
	prefillToday []speedCase // today's builds' pp512 rows on Ada, Ampere GA10x, GDDR Blackwell and GA100 (data/prefill_today.json)
	// decodeTodayRows are the tg128 rows of data/prefill_today.json
	// (loadDecodeToday), decodeToday today's CUDA build's decode constants
	// fitted on their fit half.
	decodeTodayRows []speedCase
	decodeToday     decodeTodayFit
	// todayFloat are the 16-bit rows of today's CUDA builds on GDDR GPUs
	// (data/decode_today_microbatch.json: 16-bit rows held out, one Q4_0 row a method check), appleToday the tg128 rows of today's
	// Metal builds (data/apple_today.json): both held out, replayed only.
	todayFloat []speedCase
	appleToday []speedCase
	// applePrompt is the pp512 rows of data/apple_today.json (held out),
	// metalPrefill the Metal prompt fractions (metalprefill.go).
	applePrompt  []speedCase
	metalPrefill metalPrefillFit
	// servingRows are data/serving_decode.json, serving its replayed rows,
	// servingFit the vLLM constants fitted on them.
	servingRows []servingRow
	serving     []servingCase
	servingFit  servingFit
	// servingConc is the replayed rows of data/serving_concurrency.json
	// (held out, nothing fitted).
	servingConc []servingConcurrencyCase
	// servingBatch is the per-sequence term of a serving step, fitted on
	// the fit rows of data/serving_concurrency.json (its rule 6).
	servingBatch servingBatchFit
	// sglangFit is SGLang's constants, fitted on its rows of
	// data/serving_decode.json (sglang.go).
	sglangFit sglangFit
	// offloadRows are data/offload_decode.json, offload its replayed rows,
	// offloadFit the hand-over time fitted on them.
	offloadRows []offloadRow
	offload     []offloadCase
	offloadFit  offloadFit
	// servingPrompt is the replayed rows of data/serving_prefill.json,
	// servingPromptFit the prompt constants fitted on its fit rows.
	servingPrompt    []servingPrefillCase
	servingPromptFit servingPromptFit
	// vllmPromptFit is vLLM's request time, fitted on the vLLM fit rows
	// of data/serving_prefill.json under servingPromptFit's efficiency.
	vllmPromptFit vllmPromptFit
}

// fitAll runs every fit on the data under dataDir.
func fitAll(dataDir string) (*result, error) {
	r := &result{}
	var err error
	if r.replayed, r.unmapped, err = loadSpeedRows(dataDir); err != nil {
		return nil, err
	}
	if r.heldOut, err = loadHeldOut(dataDir); err != nil {
		return nil, err
	}
	if r.bench, err = loadBench(dataDir); err != nil {
		return nil, err
	}
	if r.benchHeldOut, err = loadBenchDir(dataDir, benchHeldOutDir); err != nil {
		return nil, err
	}
	if r.decode, err = fitDecode(decodeFitSet(r.replayed, r.bench), depthRows(r.bench)); err != nil {
		return nil, err
	}
	if r.host, err = fitHost(dataDir); err != nil {
		return nil, err
	}
	harness, err := loadHarness(dataDir)
	if err != nil {
		return nil, err
	}
	if r.hostCores, err = fitHostCores(harness, r.throughput()); err != nil {
		return nil, err
	}
	_, published, err := loadCPUPublished(dataDir)
	if err != nil {
		return nil, err
	}
	r.cpuISA = append(harnessISACases(harness), published...)
	if r.cpuISAFit, err = fitCPUISA(r.cpuISA, r.throughput()); err != nil {
		return nil, err
	}
	if r.decodeTodayRows, err = loadDecodeToday(dataDir); err != nil {
		return nil, err
	}
	r.decodeToday = fitDecodeToday(r.decodeTodayRows, r.throughput())
	if r.todayFloat, err = loadTodayFloat(dataDir); err != nil {
		return nil, err
	}
	if r.appleToday, err = loadAppleTodayDecode(dataDir); err != nil {
		return nil, err
	}
	if r.prefillToday, err = loadPrefillToday(dataDir); err != nil {
		return nil, err
	}
	r.prefill = fitPrefill(r.replayed, r.bench, r.prefillToday, r.throughput())
	if r.applePrompt, err = loadAppleTodayPrefill(dataDir); err != nil {
		return nil, err
	}
	r.metalPrefill = fitMetalPrefill(r.replayed, r.applePrompt, r.throughput())
	if r.servingRows, r.serving, err = loadServing(dataDir); err != nil {
		return nil, err
	}
	if r.servingFit, err = fitServing(r.serving, r.throughput()); err != nil {
		return nil, err
	}
	if r.sglangFit, err = fitSGLang(r.serving, r.throughput(), r.servingFit); err != nil {
		return nil, err
	}
	if r.servingPrompt, err = loadServingPrefill(dataDir); err != nil {
		return nil, err
	}
	if _, r.servingConc, err = loadServingConcurrency(dataDir); err != nil {
		return nil, err
	}
	if r.servingPromptFit, err = fitServingPrompt(r.servingPrompt, r.throughput()); err != nil {
		return nil, err
	}
	if r.vllmPromptFit, err = fitVLLMPromptRequest(r.servingPrompt, r.throughput()); err != nil {
		return nil, err
	}
	// After the prompt's fit: rule 7's cap is the step's tokens' matrix
	// products at ServingPromptMFU.
	if r.servingBatch, err = fitServingBatch(r.servingConc, r.throughput()); err != nil {
		return nil, err
	}
	if r.offloadRows, r.offload, err = loadOffload(dataDir); err != nil {
		return nil, err
	}
	if r.offloadFit, err = fitOffload(r.offload, r.throughput()); err != nil {
		return nil, err
	}
	if r.attention, err = fitAttentionRows(dataDir); err != nil {
		return nil, err
	}
	if r.overhead, err = fitOverhead(dataDir); err != nil {
		return nil, err
	}
	if r.llamaOverhead, err = fitLlamaOverhead(dataDir); err != nil {
		return nil, err
	}
	if r.llamaFitOverhead, err = fitLlamaFitOverhead(dataDir); err != nil {
		return nil, err
	}
	if r.shape, err = fitShape(); err != nil {
		return nil, err
	}
	return r, nil
}

// throughput is the constant set the generated file holds.
func (r *result) throughput() calibration.Throughput {
	c := calibration.Throughput{
		KVReadRatio:             float64(r.decode.kvRatio) / 100,
		LayerLatencyCUDA:        float64(r.decode.latencyUS["cuda"]) / 1e6,
		LayerLatencyMetal:       float64(r.decode.latencyUS["metal"]) / 1e6,
		DecodeBandwidthHost:     float64(r.host.bandwidth) / 100,
		HostWeightsPerCore:      r.hostCores.rates(),
		HostPrefillFLOPSPerCore: r.hostCores.prefillRates(),
		HostCoreFactorNoAVX512:  float64(r.cpuISAFit.hundredths) / 100,
		VLLM:                    r.servingFit.decode(),
		SGLang:                  r.sglangFit.decode(),
		SGLangROCm:              r.sglangFit.decodeROCm(),
		OffloadHandoverSeconds:  float64(r.offloadFit.handoverUS) / 1e6,
	}
	c = withServingBatch(c, r.servingBatch.layerCentiUS, r.servingBatch.mfuPercent)
	for k, v := range r.decode.fractions {
		*familyFraction(classFractions(&c, k.class), k.family) = float64(v) / 100
	}
	if r.decodeToday.fractions != nil {
		c = r.decodeToday.apply(c)
	}
	return r.metalPrefill.apply(r.vllmPromptFit.apply(r.servingPromptFit.apply(r.prefill.apply(c))))
}

// fractionsSource is a DecodeFractions literal of class's fitted fractions.
func (r *result) fractionsSource(class string) string {
	f := func(fam string) string {
		k := cell{class, fam}
		note := fmt.Sprintf("%d rows", r.decode.rows[k])
		if slices.Contains(r.decode.h200Only, k) {
			note = fmt.Sprintf("%d H200 rows", r.decode.rows[k])
		}
		if r.decode.rows[k] == 0 {
			note = "no row: the k-quant fraction"
		}
		return fmt.Sprintf("%s /* %s */", hundredths(r.decode.fractions[k]), note)
	}
	return fmt.Sprintf("calibration.DecodeFractions{Float: %s, Q8: %s, KQuant: %s}", f(plan.WeightsFloat), f(plan.WeightsQ8), f(plan.WeightsKQuant))
}

func hundredths(v int) string { return fmt.Sprintf("%d.%02d", v/100, v%100) }

func thousandths(v int) string { return fmt.Sprintf("%d.%03d", v/1000, v%1000) }

func exact(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// constantsSource is the Go source of constants_gen.go.
func constantsSource(r *result) ([]byte, error) {
	d := r.decode
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("// Code generated by go run ./fit; DO NOT EDIT.")
	p("")
	p("package calibration")
	p("")
	p("import \"github.com/ai-hwaccel/ai-hwaccel/internal/ggml\"")
	p("")
	p("// Fitted is the speed model's constants in use (docs/accuracy.md,")
	p("// \"Throughput (decode and prefill)\").")
	p("var Fitted = Throughput{")
	p("// Decode, fitted on the %d single-device llama-bench rows of", d.n)
	p("// data/inference.json (May 2024) and data/h200-speed (median |error|")
	p("// %.3f): per memory class and weight family the fraction on a 0.01 grid,", d.medianError)
	p("// per backend the per-layer latency on a 1 us grid; KVReadRatio on the")
	p("// %d depth rows of data/h200-speed.", d.kvRows)
	p("DecodeGDDR: %s,", strings.TrimPrefix(r.fractionsSource(plan.MemoryClassGDDR), "calibration."))
	p("DecodeHBM: %s,", strings.TrimPrefix(r.fractionsSource(plan.MemoryClassHBM), "calibration."))
	p("DecodeUnified: %s,", strings.TrimPrefix(r.fractionsSource(plan.MemoryClassUnified), "calibration."))
	p("KVReadRatio: %s,", hundredths(d.kvRatio))
	p("LayerLatencyCUDA: %de-6, // %d rows", d.latencyUS["cuda"], d.backendRows["cuda"])
	dt := r.decodeToday
	p("// Today's CUDA build on GDDR GPUs: per architecture the integer-weight")
	p("// fraction (0.01 grid) and the per-layer latency (1 us grid) on the %d fit", len(dt.fit))
	p("// rows of data/prefill_today.json (tg128; median |error| %.3f; the %d", quantile(dt.fit, 0.5), len(dt.held))
	p("// held-out rows: median %.3f).", quantile(dt.held, 0.5))
	p("LayerLatencyCUDAToday: %de-6,", dt.latencyUS)
	p("DecodeTodayAmpere: %s,", hundredths(dt.fractions["ampere"]))
	p("DecodeTodayAda: %s,", hundredths(dt.fractions["ada"]))
	p("DecodeTodayBlackwell: %s,", hundredths(dt.fractions["blackwell"]))
	p("LayerLatencyMetal: %de-6, // %d rows", d.latencyUS["metal"], d.backendRows["metal"])
	p("LayerLatencyHost: 0, // the host fit has none")
	p("// CPU decode: the bandwidth fraction from the bandwidth row(s) of")
	p("// data/host_decode.json (mean, rounded to 0.01); the per-core rates per")
	p("// stored type from the \"fit\" rows of data/host_harness.json (one")
	p("// thread, tokens per CPU-second, a GGUF of one type each; means rounded")
	p("// to 0.1 G weights/s).")
	p("DecodeBandwidthHost: %s,", hundredths(r.host.bandwidth))
	p("HostWeightsPerCore: map[ggml.Type]float64{")
	for _, t := range r.hostCores.types() {
		p("ggml.%s: %de8, // %d row(s)", t, r.hostCores.tenthsG[t], len(r.hostCores.fitRows[t]))
	}
	p("},")
	p("// The per-core rates' factor on an x86 CPU without AVX-512: the median")
	p("// measured / estimate of the %d compute-bound AVX2 rows of", len(r.cpuISAFit.rows))
	p("// data/cpu_published.json (0.01 grid; leave-one-source-out median |error| %.3f", quantile(r.cpuISAFit.cv.withFactor, 0.5))
	p("// against %.3f without, p90 %.3f against %.3f).", quantile(r.cpuISAFit.cv.base, 0.5), quantile(r.cpuISAFit.cv.withFactor, 0.9), quantile(r.cpuISAFit.cv.base, 0.9))
	p("HostCoreFactorNoAVX512: %s,", hundredths(r.cpuISAFit.hundredths))
	p("// CPU prefill: the matmul FLOP/s per core per stored type, from the same")
	p("// rows (means rounded to 1 G FLOP/s).")
	p("HostPrefillFLOPSPerCore: map[ggml.Type]float64{")
	for _, t := range r.hostCores.types() {
		p("ggml.%s: %de9,", t, r.hostCores.prefillG[t])
	}
	p("},")
	pf := r.prefill
	p("// Prefill, fitted on the %d single-device rows with a prompt figure", pf.n)
	p("// (median |error| %.3f; the %d held-out multi-GPU llama-bench rows: median", pf.medianError, pf.heldOut)
	p("// %.3f): the cuBLAS MFU (0.01 grid) and the May 2024 pass time (20 us", pf.heldOutMedian)
	p("// grid refined at 10 us) on the %d llama-bench rows of data/inference.json,", pf.n2024)
	p("// with that MFU the 2023 ./main pass time on its %d rows; today's pass", pf.n2023)
	p("// time (same grid) and the MMQ fractions of the INT8 peak (0.002 grid)")
	p("// on the %d H200 records.", pf.nH200)
	p("PrefillMFU: %s,", hundredths(pf.mfu))
	p("PrefillMFUQ8: %s,", thousandths(pf.q8))
	p("PrefillMFUKQuant: %s,", thousandths(pf.kquant))
	p("// Today's build on Ada, Ampere GA10x, GDDR Blackwell and GA100: the MMQ")
	p("// fraction of the INT8 peak (0.002 grid) on the fit rows of")
	p("// data/prefill_today.json (%d, one GPU per architecture; the %d held-out", len(pf.todayFit), len(pf.todayHeld))
	p("// rows: median %.3f), with the H200 records' pass time.", quantile(pf.todayHeld, 0.5))
	for _, a := range prefillTodayArchs {
		p("%s: %s,", a.field, thousandths(pf.arch[a.arch]))
	}
	mp := r.metalPrefill
	p("// llama.cpp Metal on Apple GPUs: the fraction of the GPU's FP32 peak")
	p("// (0.002 grid) for 16-bit and integer weights on the %d and %d May 2024", mp.nFitFloat, mp.nFitQuant)
	p("// llama-bench pp512 rows of Apple GPUs in data/inference.json (median")
	p("// |error| %.3f; held out: the %d 2023 ./main rows, median %.3f, and the %d", quantile(mp.fit, 0.5), len(mp.held2023), quantile(mp.held2023, 0.5), len(mp.heldNow))
	p("// pp512 rows of today's builds in data/apple_today.json, median %.3f).", quantile(mp.heldNow, 0.5))
	p("PrefillMFUMetal: %s,", thousandths(mp.float))
	p("PrefillMFUMetalQuant: %s,", thousandths(mp.quant))
	p("PrefillLayerLatency: %de-6,", pf.latencyUS)
	p("PrefillLayerLatencyPreMMQ: %de-6,", pf.preMMQUS)
	p("PrefillLayerLatency2023: %de-6,", pf.main2023US)
	f := r.servingFit
	p("// vLLM batch-1 decode, fitted on all %d vLLM rows of data/serving_decode.json,", f.all)
	p("// each setup weighing one row (setupWeights in internal/calibration/fit/servingcv.go)")
	p("// (%s); leave-one-source-out cross-validation over %d sources:", servingTermsText(f.cv.terms), f.cv.groups)
	p("// out-of-sample median |error| %.3f, p90 %.3f. The bandwidth fraction in", f.cv.median(), f.cv.p90())
	p("// hundredths, the fixed costs in whole microseconds.")
	o := r.offloadFit
	p("// The GPU-CPU hand-over of an offloaded llama.cpp step, fitted on the %d", o.n)
	p("// rows of data/offload_decode.json marked \"fit\" on a 1 us grid (median |error|")
	p("// %.3f; the %d held-out rows: median %.3f, largest %.3f).", o.medianError, o.heldOut, o.heldOutMedian, o.heldOutMax)
	p("OffloadHandoverSeconds: %de-6,", o.handoverUS)
	v := f.decode()
	p("VLLM: ServingDecode{BandwidthFraction: %s, StepSeconds: %.0fe-6, PartSeconds: %.0fe-6, PartSecondsLater: %.0fe-6, AllReduceSeconds: %.0fe-6, MoELayerSeconds: %.0fe-6, MLALayerSeconds: %.0fe-6, IndexerSeconds: %.0fe-6},",
		hundredths(int(math.Round(v.BandwidthFraction*100))), v.StepSeconds*1e6, v.PartSeconds*1e6, v.PartSecondsLater*1e6, v.AllReduceSeconds*1e6, v.MoELayerSeconds*1e6, v.MLALayerSeconds*1e6, v.IndexerSeconds*1e6)
	p("%s", sglangConstant(r.sglangFit))
	sb := r.servingBatch
	p("// What a vLLM or SGLang decode step adds per sequence beyond the first:")
	p("// a time per layer (0.01 us grid) and an efficiency of the dense peak for")
	p("// one more token's matrix products (0.01 grid), fitted on the %d rows of", len(sb.fit))
	p("// data/serving_concurrency.json marked \"fit\" (vLLM benchmark_latency on 8")
	p("// MI300X), least squares of log(planned/measured); adopted by its rule 6")
	p("// (the %d held-out rows' median and p90 both fell).", len(sb.judgedHeld(6)))
	p("ServingBatchLayerSeconds: %s,", servingBatchSecondsLiteral(sb.layerCentiUS))
	p("ServingBatchMFU: %s,", hundredths(sb.mfuPercent))
	sp := r.servingPromptFit
	p("// A vLLM or SGLang prompt's efficiency of the dense peak and fixed time per")
	p("// request (SGLang's), fitted on the %d SGLang fit rows of", sp.n)
	p("// data/serving_prefill.json (SGLang cookbook TTFT at concurrency 1) on a grid")
	p("// of 1 %% and 1 ms, least squares of log(planned/measured); fit rows' median")
	p("// |log error| %.3f.", sp.median)
	p("ServingPromptMFU: %s,", hundredths(sp.mfuPercent))
	p("ServingPromptRequestSeconds: %de-3,", sp.requestMS)
	vp := r.vllmPromptFit
	p("// vLLM's fixed time per request, fitted on the %d vLLM fit rows of", vp.n)
	p("// data/serving_prefill.json under that efficiency on a 1 ms grid (fit rows'")
	p("// median |log error| %.3f); the held-out vLLM rows check it.", vp.median)
	p("VLLMPromptRequestSeconds: %de-3,", vp.requestMS)
	p("}")
	p("")
	p("// AttentionHiddenRows is the number of hidden-sized fp32 rows per token")
	p("// alive beside the scores in llama.cpp's attention step without flash")
	p("// attention: the largest remainder of the %d attention-bound -fa off runs", len(r.attention.rows))
	p("// of data/llamacpp_measurements.json, rounded to 0.1 row.")
	p("const AttentionHiddenRows = %d.%d", r.attention.tenths/10, r.attention.tenths%10)
	p("")
	p("// GPURuntimeOverheadBytes is the runtime overhead per accelerator (the")
	p("// CUDA context and the caching allocator's slack): the largest CUDA")
	p("// context of data/cuda_context.json (%d MiB) rounded up to 256 MiB.", r.overhead.largest)
	p("const GPURuntimeOverheadBytes = %d << 20", r.overhead.mib)
	p("")
	p("// LlamaCPPCUDAOverheadBytes is what a llama.cpp process holds on a CUDA")
	p("// GPU beyond its model, KV and compute buffers (CUDA context, cuBLAS")
	p("// workspace, driver reservations: \"unaccounted\" in llama.cpp's memory")
	p("// table): the largest of the %d GPU rows of data/%s", len(r.llamaOverhead.rows), llamaMemoryDir)
	p("// (%s MiB) rounded up to 16 MiB.", intList(r.llamaOverhead.rows))
	p("const LlamaCPPCUDAOverheadBytes = %d << 20", r.llamaOverhead.mib)
	p("")
	p("// LlamaCPPCUDAFitOverheadBytes is the part of it llama.cpp's --fit finds")
	p("// already used when it measures a GPU's free memory (its CUDA context;")
	p("// cuBLAS workspace and the rest come later, inside --fit's margin): card")
	p("// size less the buffers at the context --fit chose, largest of the %d", len(r.llamaFitOverhead.rows))
	p("// rows (card MiB:context) %s of data/%s.", strings.Join(r.llamaFitOverhead.rows, ", "), llamaFitDir)
	p("const LlamaCPPCUDAFitOverheadBytes = %d << 20", r.llamaFitOverhead.mib)
	p("")
	p("// The params → shape relation of model.EstimateShape, over the %d dense", r.shape.n)
	p("// catalog models of the frozen list shapeFitModels (internal/calibration/fit):")
	p("// layers = exp(a) · P^b by least squares on the logarithms, and their most")
	p("// common key/value head count.")
	p("const (")
	p("ShapeLayersLogIntercept = %s", exact(r.shape.a))
	p("ShapeLayersExponent = %s", exact(r.shape.b))
	p("ShapeKVHeads = %d", r.shape.kvHeads)
	p(")")
	return format.Source(b.Bytes())
}

// Markers around each generated part of docs/accuracy.md.
func beginMarker(name string) string {
	return "<!-- generated by go generate ./internal/calibration: " + name + " -->\n"
}
func endMarker(name string) string { return "<!-- end generated: " + name + " -->\n" }

// splice replaces the text between each section's markers in doc.
func splice(doc []byte, sections map[string]string) ([]byte, error) {
	out := string(doc)
	names := make([]string, 0, len(sections))
	for n := range sections {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		begin, end := beginMarker(n), endMarker(n)
		i := strings.Index(out, begin)
		j := strings.Index(out, end)
		if i < 0 || j < i {
			return nil, fmt.Errorf("docs: markers of %q missing or out of order", n)
		}
		out = out[:i+len(begin)] + sections[n] + out[j:]
	}
	return []byte(out), nil
}

// pct formats a fraction as a percentage: one decimal below 100 %.
func pct(x float64) string {
	if v := 100 * x; v < 100 {
		return fmt.Sprintf("%.1f %%", v)
	}
	return fmt.Sprintf("%.0f %%", 100*x)
}

func signedPct(x float64) string {
	s := fmt.Sprintf("%+.0f %%", 100*x)
	return strings.Replace(s, "-", "−", 1)
}

// docSections are the generated parts of docs/accuracy.md.
func docSections(r *result) map[string]string {
	return map[string]string{
		"fitted-constants":    fittedConstantsTable(r),
		"throughput-fit":      throughputFit(r),
		"held-out":            heldOutTable(r),
		"prefill-today":       prefillTodayTable(r),
		"decode-today":        decodeTodayTable(r),
		"float-today":         checkTable(r.todayFloat, r.throughput(), "pp512 at micro-batch 1"),
		"apple-today":         checkTable(r.appleToday, r.throughput(), "tg128"),
		"apple-prefill":       metalPrefillTable(r),
		"h200":                benchTable(r),
		"h200-held-out":       benchHeldOutTable(r),
		"throughput-replay":   replayTable(r),
		"serving":             servingTable(r),
		"serving-concurrency": servingConcurrencyTable(r.servingConc, r.throughput()) + "\n" + servingBatchOutcome(r.servingBatch),
		"offload":             offloadTable(r),
		"host-harness":        harnessTable(r),
		"cpu-isa":             cpuISATable(r),
	}
}

func fittedConstantsTable(r *result) string {
	c := r.throughput()
	d := r.decode
	var b strings.Builder
	b.WriteString("| constant (`internal/calibration`) | value | fitted on | rule |\n|---|---|---|---|\n")
	row := func(name, value, on, rule string) {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", name, value, on, rule)
	}
	for _, class := range []string{plan.MemoryClassGDDR, plan.MemoryClassHBM, plan.MemoryClassUnified} {
		for _, fam := range decodeFamilies {
			k := cell{class, fam}
			on, rule := fmt.Sprintf("%d %s %s rows of the decode fit set", d.rows[k], class, fam), "decode fit (Throughput)"
			if slices.Contains(d.h200Only, k) {
				on = fmt.Sprintf("%d %s %s H200 rows (`data/h200-speed`; the cell's May 2024 rows are replayed, not fitted)", d.rows[k], class, fam)
			}
			if d.rows[k] == 0 {
				on, rule = "no row", "the class's k-quant fraction"
			}
			row(fmt.Sprintf("Fitted.Decode%s.%s", classField[class], familyField[fam]), hundredths(d.fractions[k]), on, rule)
		}
	}
	row("Fitted.KVReadRatio", hundredths(d.kvRatio), fmt.Sprintf("%d depth rows of `data/h200-speed` (llama-bench -d)", d.kvRows), "decode fit, after the fractions")
	row("Fitted.LayerLatencyCUDA", fmt.Sprintf("%d µs", d.latencyUS["cuda"]), fmt.Sprintf("the %d GDDR and HBM rows of the decode fit set", d.backendRows["cuda"]), "decode fit")
	dt := r.decodeToday
	row("Fitted.LayerLatencyCUDAToday", fmt.Sprintf("%d µs", dt.latencyUS), fmt.Sprintf("the %d fit rows of `data/prefill_today.json` (tg128)", len(dt.fit)), "decode fit of today's CUDA build, with its fractions")
	for _, a := range []struct{ field, arch, rule string }{
		{"DecodeTodayAmpere", "ampere", "compute capability 8.6"}, {"DecodeTodayAda", "ada", "8.9"}, {"DecodeTodayBlackwell", "blackwell", "12.0"}} {
		row("Fitted."+a.field, hundredths(dt.fractions[a.arch]), fmt.Sprintf("the %s fit rows of `data/prefill_today.json` (tg128, Llama 2 7B Q4_0)", a.arch),
			"decode fit of today's CUDA build: integer weights on GDDR NVIDIA GPUs of "+a.rule)
	}
	row("Fitted.LayerLatencyMetal", fmt.Sprintf("%d µs", d.latencyUS["metal"]), fmt.Sprintf("the %d Apple rows of the decode fit set", d.backendRows["metal"]), "decode fit")
	row("Fitted.LayerLatencyHost", "0 µs", "—", "not fitted: the host constants are derived without one")
	row("Fitted.DecodeBandwidthHost", exact(c.DecodeBandwidthHost), "`data/host_decode.json` bandwidth row(s): "+pctList(r.host.bandwidthRows, 1), "mean, rounded to 0.01")
	for _, t := range r.hostCores.types() {
		row(fmt.Sprintf("Fitted.HostWeightsPerCore[%s]", t), fmt.Sprintf("%.1f G weights/s", float64(r.hostCores.tenthsG[t])/10),
			fmt.Sprintf("`data/host_harness.json` %s fit row(s): %s", t, gList(r.hostCores.fitRows[t])), "mean, rounded to 0.1 G")
	}
	row("Fitted.HostCoreFactorNoAVX512", hundredths(r.cpuISAFit.hundredths), "`data/cpu_published.json` compute-bound AVX2 row(s): "+pctList(r.cpuISAFit.rows, 1),
		"median, rounded to 0.01; kept by leave-one-source-out cross-validation (median falls, p90 does not rise)")
	for _, t := range r.hostCores.types() {
		row(fmt.Sprintf("Fitted.HostPrefillFLOPSPerCore[%s]", t), fmt.Sprintf("%d G FLOP/s", r.hostCores.prefillG[t]),
			fmt.Sprintf("`data/host_harness.json` %s fit row(s): %s", t, gList(r.hostCores.prefillRows[t])), "mean, rounded to 1 G")
	}
	pf := r.prefill
	row("Fitted.PrefillMFU", hundredths(pf.mfu), fmt.Sprintf("the %d single-device llama-bench rows of May 2024 in `inference.json` (build before MMQ)", pf.n2024), "prefill fit, first stage (cuBLAS: 16-bit weights, and integer weights dequantized)")
	row("Fitted.PrefillLayerLatencyPreMMQ", fmt.Sprintf("%d µs", pf.preMMQUS), "the same rows", "prefill fit, first stage; the May 2024 build's time: its replay, and plans on any device but an NVIDIA Hopper, Ada, Ampere GA10x or GA100 GPU or a GDDR Blackwell one (12.0)")
	row("Fitted.PrefillLayerLatency2023", fmt.Sprintf("%d µs", pf.main2023US), fmt.Sprintf("the %d single-device ./main rows of 2023 in `inference.json`, with that MFU", pf.n2023), "prefill fit, first stage; only the replay of those 2023 builds")
	mp := r.metalPrefill
	row("Fitted.PrefillMFUMetal", thousandths(mp.float), fmt.Sprintf("the %d 16-bit May 2024 llama-bench pp512 rows of Apple GPUs in `inference.json`", mp.nFitFloat), "Metal prefill fit (fraction of the GPU's FP32 peak, `GPUFP32TFLOPS` of the Apple records)")
	row("Fitted.PrefillMFUMetalQuant", thousandths(mp.quant), fmt.Sprintf("the %d integer-weight May 2024 llama-bench pp512 rows of Apple GPUs in `inference.json`", mp.nFitQuant), "Metal prefill fit (integer weights, dequantized inside the kernel)")
	row("Fitted.PrefillLayerLatency", fmt.Sprintf("%d µs", pf.latencyUS), fmt.Sprintf("the %d H200 pp512 records (`data/h200-speed`)", pf.nH200), "prefill fit, second stage; today's build: plans on NVIDIA Hopper, Ada, Ampere GA10x, GA100 and GDDR Blackwell (12.0) GPUs")
	row("Fitted.PrefillMFUQ8", thousandths(pf.q8), "the H200 Q8_0 pp512 record", "prefill fit, second stage (MMQ, fraction of the INT8 peak)")
	row("Fitted.PrefillMFUKQuant", thousandths(pf.kquant), "the 2 H200 Q4_K_M pp512 records", "prefill fit, second stage (MMQ, fraction of the INT8 peak)")
	for _, a := range prefillTodayArchs {
		row("Fitted."+a.field, thousandths(pf.arch[a.arch]),
			fmt.Sprintf("the %s fit row(s) of `data/prefill_today.json` (%s, Llama 2 7B Q4_0 pp512)", a.arch, strings.Join(pf.fitGPUs[a.arch], ", ")),
			fmt.Sprintf("prefill fit, third stage (MMQ on compute capability %s; Q8_0 takes it too)", prefillArchRule[a.arch]))
	}
	sf := r.servingFit
	sv := sf.decode()
	row("Fitted.VLLM", fmt.Sprintf("f %.2f; step %.0f, part %.0f (Hopper/Blackwell/CDNA3: %.0f), all-reduce %.0f, MoE layer %.0f, MLA layer %.0f, indexer %.0f µs", sv.BandwidthFraction, sv.StepSeconds*1e6, sv.PartSeconds*1e6, sv.PartSecondsLater*1e6, sv.AllReduceSeconds*1e6, sv.MoELayerSeconds*1e6, sv.MLALayerSeconds*1e6, sv.IndexerSeconds*1e6),
		fmt.Sprintf("all %d vLLM rows of `data/serving_decode.json`; terms chosen and checked by leave-one-source-out cross-validation over %d sources", sf.all, sf.cv.groups), "coordinate descent, least squares of the log error, each setup (source, model, precision, GPU, TP) weighing one row")
	gf := r.sglangFit
	gv := gf.decode()
	row("Fitted.SGLang, Fitted.SGLangROCm", fmt.Sprintf("MoE layer %.0f, MLA layer %.0f µs; fixed times x %s on AMD GPUs; f %.2f, step %.0f, part %.0f (Hopper/Blackwell/CDNA3: %.0f), all-reduce %.0f, indexer %.0f µs: vLLM's", gv.MoELayerSeconds*1e6, gv.MLALayerSeconds*1e6, hundredths(gf.rocmPct), gv.BandwidthFraction, gv.StepSeconds*1e6, gv.PartSeconds*1e6, gv.PartSecondsLater*1e6, gv.AllReduceSeconds*1e6, gv.IndexerSeconds*1e6),
		fmt.Sprintf("the %d `fit` SGLang rows of `data/serving_decode.json`: NVIDIA B200 and AMD MI300X (%d held out: other GPUs)", gf.n, gf.heldOut), "grid, least squares of the log error; the rest taken from `Fitted.VLLM` (too few dense rows)")
	sb := r.servingBatch
	row("Fitted.ServingBatchLayerSeconds, Fitted.ServingBatchMFU", fmt.Sprintf("%.2f µs per layer, %s of the dense peak (per sequence beyond the first)", float64(sb.layerCentiUS)/100, hundredths(sb.mfuPercent)),
		fmt.Sprintf("the %d `fit` rows of `data/serving_concurrency.json`: vLLM `benchmark_latency --batch-size` 2-128, Llama-3.1-70B and 405B FP8 on 8 MI300X (%d held out: Vultr's and GPUStack's vLLM rows, the SGLang cookbook's)", len(sb.fit), len(sb.held)),
		"grid (0.01 µs, 0.01), least squares of the log error; rule 6 of the file, adopted because the held-out rows' median and p90 both fell")
	sp, vp := r.servingPromptFit, r.vllmPromptFit
	row("Fitted.ServingPromptMFU, Fitted.ServingPromptRequestSeconds", fmt.Sprintf("%s of the dense peak, %d ms per request", hundredths(sp.mfuPercent), sp.requestMS),
		fmt.Sprintf("the %d `fit` SGLang rows of `data/serving_prefill.json`: the SGLang cookbook's concurrency-1 Median TTFT (the file's vLLM fit rows fit only vLLM's request time, its held-out vLLM rows nothing)", sp.n),
		fmt.Sprintf("grid (1 %%, 1 ms), least squares of log(planned / measured); fit rows' median absolute log error %.3f (Serving prefill)", sp.median))
	row("Fitted.VLLMPromptRequestSeconds", fmt.Sprintf("%d ms", vp.requestMS),
		fmt.Sprintf("the %d `fit` vLLM rows of `data/serving_prefill.json` (sources other than the held-out rows'), at `ServingPromptMFU`", vp.n),
		fmt.Sprintf("1 ms grid, least squares of log(planned / measured); fit rows' median absolute log error %.3f (Serving prefill)", vp.median))
	row("Fitted.OffloadHandoverSeconds", fmt.Sprintf("%d µs", r.offloadFit.handoverUS),
		fmt.Sprintf("the %d `fit` rows of `data/offload_decode.json` (%d held out)", r.offloadFit.n, r.offloadFit.heldOut), "1 µs grid, least squares of the log error")
	row("AttentionHiddenRows", fmt.Sprintf("%d.%d", r.attention.tenths/10, r.attention.tenths%10), "`data/llamacpp_measurements.json`, attention-bound `-fa off` runs: "+attentionList(r.attention), "largest, rounded to 0.1")
	row("GPURuntimeOverheadBytes", fmt.Sprintf("%d MiB", r.overhead.mib), fmt.Sprintf("`data/cuda_context.json` (largest %d MiB)", r.overhead.largest), "rounded up to 256 MiB")
	row("LlamaCPPCUDAOverheadBytes", fmt.Sprintf("%d MiB", r.llamaOverhead.mib), fmt.Sprintf("`data/%s`, unaccounted MiB of the GPU rows: %s", llamaMemoryDir, intList(r.llamaOverhead.rows)), "largest, rounded up to 16 MiB")
	row("LlamaCPPCUDAFitOverheadBytes", fmt.Sprintf("%d MiB", r.llamaFitOverhead.mib), fmt.Sprintf("`data/%s`, rows (card MiB:context) %s", llamaFitDir, strings.Join(r.llamaFitOverhead.rows, ", ")), "card less the buffers at --fit's context, largest, rounded up to 1 MiB")
	row("ShapeLayersLogIntercept, ShapeLayersExponent", fmt.Sprintf("a = %.4f, b = %.4f", r.shape.a, r.shape.b), fmt.Sprintf("%d dense models of `internal/model/catalog.json`, a frozen list (`shapeFitModels` in internal/calibration/fit/fit.go)", r.shape.n), "least squares of ln layers on ln params")
	row("ShapeKVHeads", strconv.Itoa(r.shape.kvHeads), "the same entries", "most common key/value head count")
	row("MicroBatchTokens", strconv.Itoa(calibration.MicroBatchTokens), "—", "not fitted: llama.cpp's default `n_ubatch`, under which every row ran")
	row("DequantCopyBytesPerParam", strconv.Itoa(calibration.DequantCopyBytesPerParam), "—", "not fitted: a 16-bit copy written and read per weight")
	return b.String()
}

func pctList(xs []float64, _ int) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprintf("%.3f", x))
	}
	return strings.Join(s, ", ")
}

func gList(xs []float64) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprintf("%.1f G", x))
	}
	return strings.Join(s, ", ")
}

func attentionList(f attentionFit) string {
	var s []string
	for i, run := range f.runs {
		s = append(s, fmt.Sprintf("%s %.2f", run, f.rows[i]))
	}
	return strings.Join(s, "; ")
}

// classField and familyField name the Throughput fields of a cell.
var (
	classField  = map[string]string{plan.MemoryClassGDDR: "GDDR", plan.MemoryClassHBM: "HBM", plan.MemoryClassUnified: "Unified"}
	familyField = map[string]string{plan.WeightsFloat: "Float", plan.WeightsQ8: "Q8", plan.WeightsKQuant: "KQuant"}
)

func throughputFit(r *result) string {
	c := r.throughput()
	d := r.decode
	held := decodeErrors(r.heldOut, c)
	var bench []speedCase
	for _, sc := range r.bench {
		if sc.row.TG > 0 {
			bench = append(bench, sc)
		}
	}
	hb := decodeErrors(bench, c)
	var b strings.Builder
	fmt.Fprintf(&b, "    decode: fraction of bandwidth (float / q8 / k-quant)")
	for _, class := range []string{plan.MemoryClassGDDR, plan.MemoryClassHBM, plan.MemoryClassUnified} {
		fmt.Fprintf(&b, " %s %s/%s/%s", class, hundredths(d.fractions[cell{class, plan.WeightsFloat}]),
			hundredths(d.fractions[cell{class, plan.WeightsQ8}]), hundredths(d.fractions[cell{class, plan.WeightsKQuant}]))
	}
	fmt.Fprintf(&b, ",\n    KV read ratio %s, layer latency CUDA %d us Metal %d us;\n", hundredths(d.kvRatio), d.latencyUS["cuda"], d.latencyUS["metal"])
	fmt.Fprintf(&b, "    fit set (n=%d) median %.3f; H200 decode rows (n=%d) median %.3f;\n", d.n, d.medianError, len(hb), quantile(hb, 0.5))
	fmt.Fprintf(&b, "    held-out (n=%d) median %.3f p90 %.3f\n", len(held), quantile(held, 0.5), quantile(held, 0.9))
	dt := r.decodeToday
	fmt.Fprintf(&b, "    today's CUDA build on GDDR: integer weights %s (Ampere) / %s (Ada) / %s (Blackwell), layer latency %d us;\n",
		hundredths(dt.fractions["ampere"]), hundredths(dt.fractions["ada"]), hundredths(dt.fractions["blackwell"]), dt.latencyUS)
	fmt.Fprintf(&b, "    tg128 fit (n=%d) median %.3f, held-out (n=%d) median %.3f largest %.3f\n", len(dt.fit), quantile(dt.fit, 0.5), len(dt.held), quantile(dt.held, 0.5), quantile(dt.held, 1))
	fmt.Fprintf(&b, "    per cell, every fit-set row (fitted or replayed) n / median:")
	byCell := map[cell][]speedCase{}
	for _, sc := range decodeFitSet(r.replayed, r.bench) {
		byCell[cell{sc.class, sc.family}] = append(byCell[cell{sc.class, sc.family}], sc)
	}
	for _, class := range []string{plan.MemoryClassGDDR, plan.MemoryClassHBM, plan.MemoryClassUnified} {
		for _, fam := range decodeFamilies {
			if rows := byCell[cell{class, fam}]; len(rows) > 0 {
				fmt.Fprintf(&b, " %s-%s %d/%.2f", class, fam, len(rows), quantile(decodeErrors(rows, c), 0.5))
			}
		}
	}
	b.WriteString("\n")
	pf := r.prefill
	fmt.Fprintf(&b, "    prefill: cuBLAS MFU %s, MMQ %s (Q8_0) / %s (k-quant) of the INT8 peak, per layer and pass %d us (May 2024 build before MMQ %d us, 2023 ./main %d us);\n",
		hundredths(pf.mfu), thousandths(pf.q8), thousandths(pf.kquant), pf.latencyUS, pf.preMMQUS, pf.main2023US)
	fmt.Fprintf(&b, "    fit set, single-device (n=%d) median %.3f (inference.json rows %.3f, H200 records %.3f);\n", pf.n, pf.medianError, pf.preMMQMedian, pf.h200Median)
	fmt.Fprintf(&b, "    held-out, multi-GPU llama-bench 2024 (n=%d) median %.3f p90 %.3f\n", pf.heldOut, pf.heldOutMedian, pf.heldOutP90)
	fmt.Fprintf(&b, "    today's build: MMQ %s (Ada) / %s (Ampere) / %s (Blackwell) / %s (GA100) of the INT8 peak; fit (n=%d) median %.3f, held-out (n=%d) median %.3f\n",
		thousandths(pf.arch["ada"]), thousandths(pf.arch["ampere"]), thousandths(pf.arch["blackwell"]), thousandths(pf.arch["ga100"]),
		len(pf.todayFit), quantile(pf.todayFit, 0.5), len(pf.todayHeld), quantile(pf.todayHeld, 0.5))
	return b.String()
}

// benchTable is the H200 llama-bench records against the model.
func benchTable(r *result) string {
	c := r.throughput()
	var b strings.Builder
	b.WriteString("| model | type | test | measured | estimate | error | file |\n|---|---|---|---|---|---|---|\n")
	for _, sc := range r.bench {
		test, meas, est := fmt.Sprintf("tg%d", sc.row.Gen), sc.row.TG, sc.replay.Decode(c)
		if sc.depth > 0 {
			test += fmt.Sprintf(" @ depth %d", sc.depth)
		}
		if sc.row.PP > 0 {
			test, meas, est = fmt.Sprintf("pp%d", sc.row.Prompt), sc.row.PP, sc.replay.Prefill(c)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.1f | %.1f | %s | `%s` |\n", sc.row.Model, sc.row.Quant, test, meas, est, signedPct(est/meas-1), sc.row.Source)
	}
	return b.String()
}

// benchHeldOutTable is the held-out H200 records
// (data/h200-speed-34af94cd) under the constants in use: each record's
// avg_ts (what the checks read), for pp512 also its steady rate (the
// median of its samples) and the error against it, then the medians and
// p90s of decode and prefill.
func benchHeldOutTable(r *result) string {
	c := r.throughput()
	var b strings.Builder
	b.WriteString("| model | type | test | measured (avg_ts) | steady (median sample) | estimate | error | error vs steady | file |\n|---|---|---|---|---|---|---|---|---|\n")
	var dec, pre, steady []float64
	for _, sc := range r.benchHeldOut {
		if sc.row.TG > 0 {
			est := sc.replay.Decode(c)
			dec = append(dec, math.Abs(est/sc.row.TG-1))
			fmt.Fprintf(&b, "| %s | %s | tg%d | %.1f | | %.1f | %s | | `%s` |\n", sc.row.Model, sc.row.Quant, sc.row.Gen, sc.row.TG, est, signedPct(est/sc.row.TG-1), sc.row.Source)
			continue
		}
		est := sc.replay.Prefill(c)
		pre, steady = append(pre, math.Abs(est/sc.row.PP-1)), append(steady, math.Abs(est/sc.steady-1))
		fmt.Fprintf(&b, "| %s | %s | pp%d | %.1f | %.1f | %.1f | %s | %s | `%s` |\n", sc.row.Model, sc.row.Quant, sc.row.Prompt, sc.row.PP, sc.steady, est,
			signedPct(est/sc.row.PP-1), signedPct(est/sc.steady-1), sc.row.Source)
	}
	fmt.Fprintf(&b, "\n| held-out H200 records | n | median \\|error\\| | p90 |\n|---|---|---|---|\n")
	fmt.Fprintf(&b, "| decode tg128 | %d | %s | %s |\n", len(dec), pct(quantile(dec, 0.5)), pct(quantile(dec, 0.9)))
	fmt.Fprintf(&b, "| prefill pp512 (avg_ts) | %d | %s | %s |\n", len(pre), pct(quantile(pre, 0.5)), pct(quantile(pre, 0.9)))
	fmt.Fprintf(&b, "| prefill pp512 (steady) | %d | %s | %s |\n", len(steady), pct(quantile(steady, 0.5)), pct(quantile(steady, 0.9)))
	return b.String()
}

// prefillTodayTable is today's builds' pp512 rows on Ada, Ampere GA10x,
// GDDR Blackwell and GA100 GPUs (data/prefill_today.json) under the constants in use and, for the
// "before" column, without the per-architecture fractions (the 2023-24
// dequantize-then-GEMM path those GPUs took), with the fit and held-out
// medians of both.
func prefillTodayTable(r *result) string {
	c := r.throughput()
	before := c
	for _, a := range prefillTodayArchs {
		a.set(&before, 0)
	}
	var b strings.Builder
	b.WriteString("| use | architecture | hardware | model | build | measured pp512 | before | estimate | error |\n|---|---|---|---|---|---|---|---|---|\n")
	errs := map[string][2][]float64{}
	for _, sc := range r.prefillToday {
		was, est := sc.replay.Prefill(before), sc.replay.Prefill(c)
		wasCell := "none (no 16-bit peak in the record)"
		e := errs[sc.use]
		if was > 0 {
			wasCell = fmt.Sprintf("%.1f (%s)", was, signedPct(was/sc.row.PP-1))
			e[0] = append(e[0], math.Abs(was/sc.row.PP-1))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.1f | %s | %.1f | %s |\n", sc.use, sc.arch, sc.row.Hardware, sc.row.Model, sc.label,
			sc.row.PP, wasCell, est, signedPct(est/sc.row.PP-1))
		e[1] = append(e[1], math.Abs(est/sc.row.PP-1))
		errs[sc.use] = e
	}
	b.WriteString("\n| median \\|error\\| | before (rows with a figure) | after |\n|---|---|---|\n")
	for _, use := range []string{useFit, useHeldOut} {
		e := errs[use]
		fmt.Fprintf(&b, "| %s (%d) | %.1f %% (%d) | %.1f %% |\n", use, len(e[1]), 100*quantile(e[0], 0.5), len(e[0]), 100*quantile(e[1], 0.5))
	}
	return b.String()
}

// decodeTodayTable is the tg128 rows of today's builds
// (data/prefill_today.json) under the constants in use and, for the
// "before" column, under the May 2024 builds' (no DecodeToday fraction),
// with the fit and held-out medians of both.
func decodeTodayTable(r *result) string {
	c := r.throughput()
	before := c
	before.DecodeTodayAmpere, before.DecodeTodayAda, before.DecodeTodayBlackwell = 0, 0, 0
	var b strings.Builder
	b.WriteString("| use | architecture | hardware | build | measured tg128 | before | estimate | error |\n|---|---|---|---|---|---|---|---|\n")
	errs := map[string][2][]float64{}
	for _, sc := range r.decodeTodayRows {
		was, est := sc.replay.Decode(before), sc.replay.Decode(c)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.1f | %.1f (%s) | %.1f | %s |\n", sc.use, sc.arch, sc.row.Hardware, sc.label,
			sc.row.TG, was, signedPct(was/sc.row.TG-1), est, signedPct(est/sc.row.TG-1))
		e := errs[sc.use]
		e[0], e[1] = append(e[0], math.Abs(was/sc.row.TG-1)), append(e[1], math.Abs(est/sc.row.TG-1))
		errs[sc.use] = e
	}
	b.WriteString("\n| median \\|error\\| | before | after | largest after |\n|---|---|---|---|\n")
	for _, use := range []string{useFit, useHeldOut} {
		e := errs[use]
		fmt.Fprintf(&b, "| %s (%d) | %.1f %% | %.1f %% | %.1f %% |\n", use, len(e[1]), 100*quantile(e[0], 0.5), 100*quantile(e[1], 0.5), 100*quantile(e[1], 1))
	}
	return b.String()
}

// checkTable is the replay of rows that no fit sees under the constants
// c: each row with its use, build and error, then per use the median and
// the largest |error|; test names the measured figure.
func checkTable(cases []speedCase, c calibration.Throughput, test string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| use | hardware | model | type | build | measured %s | estimate | error |\n|---|---|---|---|---|---|---|---|\n", test)
	errs := map[string][]float64{}
	var uses []string
	for _, sc := range cases {
		d := sc.replay.Decode(c)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.1f | %.1f | %s |\n", sc.use, sc.row.Hardware, sc.row.Model, sc.row.Quant, sc.label, sc.row.TG, d, signedPct(d/sc.row.TG-1))
		if _, seen := errs[sc.use]; !seen {
			uses = append(uses, sc.use)
		}
		errs[sc.use] = append(errs[sc.use], math.Abs(d/sc.row.TG-1))
	}
	b.WriteString("\n")
	for _, use := range uses {
		e := errs[use]
		fmt.Fprintf(&b, "%s (%d): median |error| %.1f %%, largest %.1f %%\n", use, len(e), 100*quantile(e, 0.5), 100*quantile(e, 1))
	}
	return b.String()
}

func heldOutTable(r *result) string {
	c := r.throughput()
	var b strings.Builder
	b.WriteString("| hardware | model | quant | engine | measured | estimate | error |\n|---|---|---|---|---|---|---|\n")
	for _, sc := range r.heldOut {
		d := sc.replay.Decode(c)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.1f | %.1f | %s |\n", sc.row.Hardware, sc.row.Model, sc.row.Quant, sc.label,
			sc.row.TG, d, signedPct(d/sc.row.TG-1))
	}
	return b.String()
}

func replayTable(r *result) string {
	c := r.throughput()
	var single, multiBench, multiMain, bench, mainRows []speedCase
	for _, sc := range r.replayed {
		switch {
		case sc.single():
			single = append(single, sc)
		case sc.llamaBench2024():
			multiBench = append(multiBench, sc)
		default:
			multiMain = append(multiMain, sc)
		}
		if sc.llamaBench2024() {
			bench = append(bench, sc)
		} else {
			mainRows = append(mainRows, sc)
		}
	}
	var b strings.Builder
	b.WriteString("| rows | n | decode median | decode p90 | prefill n | prefill median | prefill p90 |\n|---|---|---|---|---|---|---|\n")
	for _, g := range []struct {
		name  string
		cases []speedCase
	}{{"all replayed", r.replayed}, {"one device", single}, {"several devices, llama-bench 2024", multiBench},
		{"several devices, ./main 2023", multiMain}, {"llama-bench, 2024", bench}, {"./main, 2023", mainRows}} {
		d, p := decodeErrors(g.cases, c), prefillErrors(g.cases, c)
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %d | %s | %s |\n", g.name, len(d), pct(quantile(d, 0.5)), pct(quantile(d, 0.9)),
			len(p), pct(quantile(p, 0.5)), pct(quantile(p, 0.9)))
	}
	fmt.Fprintf(&b, "\n%d rows replayed, %d unmapped.\n", len(r.replayed), len(r.unmapped))
	return b.String()
}

// intList is the values in order, comma-separated.
func intList(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// metalPrefillTable is every Apple GPU prompt row against the model under
// the shipped constants: the fit rows, then the held-out 2023 ./main rows
// and today's builds' pp512 rows (metalprefill.go says the rule).
func metalPrefillTable(r *result) string {
	c := r.throughput()
	fit, main2023 := metalPrefillSets(r.replayed)
	var b strings.Builder
	b.WriteString("| use | hardware | model | type | measured pp | estimate | error |\n|---|---|---|---|---|---|---|\n")
	sets := []struct {
		use  string
		rows []speedCase
	}{{"fit (May 2024 llama-bench)", fit}, {"held out (2023 ./main)", main2023}, {"held out (today's builds)", r.applePrompt}}
	for _, s := range sets {
		for _, sc := range s.rows {
			est := sc.replay.Prefill(c)
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %.1f | %.1f | %s |\n", s.use, sc.row.Hardware, sc.row.Model, sc.row.Quant, sc.row.PP, est, signedPct(est/sc.row.PP-1))
		}
	}
	for _, s := range sets {
		e := prefillErrors(s.rows, c)
		fmt.Fprintf(&b, "\n%s (%d): median |error| %s, largest %s", s.use, len(e), pct(quantile(e, 0.5)), pct(quantile(e, 1)))
	}
	b.WriteString("\n")
	return b.String()
}
