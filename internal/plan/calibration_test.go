package plan

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// calibrationFile holds published llama.cpp measurements (every row names
// its source).
var calibrationFile = filepath.Join("testdata", "inference.json")

// Bounds promised in docs/accuracy.md ("Throughput (decode and prefill)").
const (
	decodeMedianBound  = 0.25
	prefillMedianBound = 0.50
	// singleDecodeMedianBound and singlePrefillMedianBound hold for rows
	// measured on one device (achieved: 6.6 % and 16.1 %).
	singleDecodeMedianBound  = 0.10
	singlePrefillMedianBound = 0.20
)

type calRow struct {
	Hardware    string  `json:"hardware"`
	DeviceCount int     `json:"device_count"`
	Model       string  `json:"model"`
	ParamsB     float64 `json:"params_b_nominal"`
	Quant       string  `json:"quantization"`
	Backend     string  `json:"backend"`
	Prompt      any     `json:"prompt_tokens"`
	Gen         int     `json:"gen_tokens"`
	TG          float64 `json:"tg_tokens_per_s"`
	PP          float64 `json:"pp_tokens_per_s"`
	Source      string  `json:"source"`
}

// calHardware maps the rows' hardware labels to datasheet records
// (internal/specs: devices.json and the hand-kept datasheets_extra.go).
// Labels whose part has no record are absent and their rows are reported as
// unmapped: RTX 4000/5000 Ada and RTX 3070/3080 Ti (no sourced bandwidth at
// hand), "A100 80GB (form factor not stated)" (PCIe 1940 or SXM 2039 GB/s).
var calHardware = map[string]string{
	"NVIDIA RTX A6000 48GB":               "NVIDIA RTX A6000",
	"NVIDIA RTX 6000 Ada 48GB":            "NVIDIA RTX 6000 Ada Generation",
	"NVIDIA GeForce RTX 3080 10GB":        "NVIDIA GeForce RTX 3080 (10GB)",
	"NVIDIA GeForce RTX 4070 Ti 12GB":     "NVIDIA GeForce RTX 4070 Ti",
	"NVIDIA GeForce RTX 3090 24GB":        "NVIDIA GeForce RTX 3090",
	"NVIDIA GeForce RTX 4090 24GB":        "NVIDIA GeForce RTX 4090",
	"NVIDIA GeForce RTX 4080 16GB":        "NVIDIA GeForce RTX 4080 (16GB)",
	"NVIDIA A100 PCIe 80GB":               "NVIDIA A100 PCIe 80GB",
	"NVIDIA A100 SXM 80GB":                "NVIDIA A100 SXM4 80GB",
	"NVIDIA A40 48GB":                     "NVIDIA A40",
	"NVIDIA H100 PCIe 80GB":               "NVIDIA H100 PCIe 80GB",
	"NVIDIA L40S 48GB":                    "NVIDIA L40S",
	"Apple M1 (7-core GPU, 8GB)":          "Apple M1",
	"Apple M1 Max (24-core GPU, 32GB)":    "Apple M1 Max",
	"Apple M1 Max (32-core GPU, 64GB)":    "Apple M1 Max",
	"Apple M2 Ultra (76-core GPU, 192GB)": "Apple M2 Ultra",
	"Apple M3 (10-core GPU, 16GB)":        "Apple M3",
	"Apple M3 Max (40-core GPU, 48GB)":    "Apple M3 Max (16-core CPU / 40-core GPU)",
	"Apple M3 Max (40-core GPU, 64GB)":    "Apple M3 Max (16-core CPU / 40-core GPU)",
}

// calModels maps the rows' model labels (by prefix) to catalog names, or to
// a config for LLaMA (v1), which the catalog does not hold. LLaMA (v1)
// shapes: Touvron et al. 2023, "LLaMA: Open and Efficient Foundation
// Language Models", arXiv:2302.13971, Table 2 (dimension, heads, layers);
// FFN widths and the 32000-token vocabulary are those of the released
// checkpoints' params (same SwiGLU rule as Llama 2 7B/13B in the catalog).
var calModels = []struct {
	prefix string
	spec   model.Spec
}{
	{"Meta-Llama-3-8B", model.Spec{Name: "Meta-Llama-3-8B"}},
	{"Meta-Llama-3-70B", model.Spec{Name: "Meta-Llama-3-70B"}},
	{"LLaMA 2 7B", model.Spec{Name: "Llama-2-7B"}},
	{"LLaMA 2 13B", model.Spec{Name: "Llama-2-13B"}},
	{"LLaMA 2 70B", model.Spec{Name: "Llama-2-70B"}},
	{"LLaMA (v1) 7B", model.Spec{Name: "Llama-2-7B"}}, // same shape as Llama 2 7B
	{"LLaMA (v1) 13B", model.Spec{Name: "Llama-2-13B"}},
	{"LLaMA (v1) 30B", model.Spec{Config: llamaV1(60, 6656, 52, 17920)}},
	{"LLaMA (v1) 65B", model.Spec{Config: llamaV1(80, 8192, 64, 22016)}},
}

func llamaV1(layers, hidden, heads, ffn int) map[string]any {
	return map[string]any{"architectures": []any{"LlamaForCausalLM"}, "num_hidden_layers": float64(layers),
		"hidden_size": float64(hidden), "num_attention_heads": float64(heads), "num_key_value_heads": float64(heads),
		"intermediate_size": float64(ffn), "vocab_size": float64(32000), "max_position_embeddings": float64(2048)}
}

// calLevels maps the rows' GGUF types to levels.
var calLevels = map[string]string{"Q4_0": "q4_0", "Q4_K_M": "q4_k_m", "F16": "fp16"}

// calCase is one replayable row.
type calCase struct {
	// decodePlan and prefillPlan are built once (they do not depend on the
	// constants).
	decodePlan, prefillPlan *planned
	decodeReq, prefillReq   *planning

	row           calRow
	spec          specs.Spec
	model         *model.Model
	level         quant.Level
	prompt        int
	decodeContext int // average context during the generation
}

func loadCalibration(t testing.TB) ([]calCase, []string) {
	data, err := os.ReadFile(calibrationFile)
	if err != nil {
		t.Fatalf("calibration data: %v", err)
	}
	var doc struct {
		Rows []calRow `json:"llm_inference_measured"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	require.NotEmpty(t, doc.Rows)
	var cases []calCase
	var skipped []string
	for _, r := range doc.Rows {
		c, why := mapRow(r)
		if why != "" {
			skipped = append(skipped, r.Hardware+" / "+r.Model+" / "+r.Quant+": "+why)
			continue
		}
		c.decodePlan, c.decodeReq = c.plan(c.decodeContext)
		c.prefillPlan, c.prefillReq = c.plan(c.prompt)
		cases = append(cases, c)
	}
	return cases, skipped
}

func mapRow(r calRow) (calCase, string) {
	c := calCase{row: r}
	if strings.Contains(r.Backend, "CPU") {
		return c, "measured on the CPU backend; host memory bandwidth is not in the datasheet table"
	}
	name, ok := calHardware[r.Hardware]
	if !ok {
		return c, "hardware not in the datasheet table"
	}
	s, ok := specs.ByName(name)
	if !ok || s.BandwidthGBs <= 0 {
		return c, "datasheet record has no memory bandwidth"
	}
	c.spec = s
	for _, m := range calModels {
		if strings.HasPrefix(r.Model, m.prefix) {
			mm, err := model.Resolve(m.spec)
			if err != nil {
				return c, "model does not resolve: " + err.Error()
			}
			c.model = mm
		}
	}
	if c.model == nil {
		return c, "model not mapped"
	}
	lv, ok := calLevels[r.Quant]
	if !ok {
		return c, "quantization not mapped"
	}
	l, err := quant.Parse(lv)
	if err != nil {
		return c, err.Error()
	}
	c.level = l
	switch p := r.Prompt.(type) {
	case float64:
		c.prompt = int(p)
	case string:
		// "~500 (README: "around 500 tokens")"
		m := regexp.MustCompile(`\d+`).FindString(p)
		c.prompt, _ = strconv.Atoi(m)
	}
	if c.prompt <= 0 {
		return c, "prompt length unknown"
	}
	if r.Gen == 512 && r.TG > 0 && strings.Contains(r.Source, "aa72e0ec86c3") {
		// llama-bench tg512 generates from an empty context.
		c.decodeContext = r.Gen / 2
	} else {
		// ./main: the prompt, then gen tokens.
		c.decodeContext = c.prompt + r.Gen/2
	}
	return c, ""
}

// calPlan lays the model over the row's devices as llama.cpp does (layers
// split evenly across every GPU), without a memory check: the measurement
// shows the layout ran.
func (c calCase) plan(context int) (*planned, *planning) {
	req := &planning{Request: &Request{Model: c.model, Quant: string(c.level), ContextLength: context, BatchSize: 1, Engine: engineLlamaCPP}}
	b := quant.Estimate(c.model, c.level, context, 1, req.kvOptions())
	cs := newCosts(c.model, b, c.level)
	n := c.row.DeviceCount
	sp := c.spec
	var stages []stage
	for i := 0; i < n; i++ {
		d := &device{ID: "gpu", Dev: registry.Device{Name: sp.Name}, BandwidthGBs: sp.BandwidthGBs, Spec: &sp}
		stages = append(stages, stage{Devices: []*device{d}})
	}
	counts := proportional(make1(n), cs.Layers)
	start := 0
	for i := range stages {
		stages[i].Start, stages[i].End = start, start+counts[i]
		start += counts[i]
		stages[i].Part = cs.stagePart(stages[i].Start, stages[i].End, 1)
	}
	return &planned{Fits: true, Strategy: StrategyPipeline, Level: c.level, Stages: stages, TP: 1, Costs: cs}, req
}

func make1(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 1 << 20
	}
	return out
}

func (c calCase) predict(e efficiency) (decode, prefill float64) {
	decode = estimateWith(c.decodePlan, c.decodeReq, 0, e).DecodeTokensPerS
	prefill = estimateWith(c.prefillPlan, c.prefillReq, 0, e).PrefillTokensPerS
	return decode, prefill
}

// relErrors returns |predicted/measured - 1| for every case with both.
func relErrors(cases []calCase, e efficiency) (decode, prefill []float64) {
	for _, c := range cases {
		d, p := c.predict(e)
		if d > 0 && c.row.TG > 0 {
			decode = append(decode, math.Abs(d/c.row.TG-1))
		}
		if p > 0 && c.row.PP > 0 {
			prefill = append(prefill, math.Abs(p/c.row.PP-1))
		}
	}
	return decode, prefill
}

func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}

// TestCalibrationReplay replays every row of inference.json the planner can
// map and checks the accuracy promised in docs/accuracy.md.
func TestCalibrationReplay(t *testing.T) {
	cases, skipped := loadCalibration(t)
	reasons := map[string]int{}
	for _, s := range skipped {
		t.Logf("unmapped: %s", s)
		reasons[s[strings.LastIndex(s, ": ")+2:]]++
	}
	for r, n := range reasons {
		t.Logf("unmapped %3d rows: %s", n, r)
	}
	dec, pre := relErrors(cases, fitted)
	t.Logf("rows: %d replayed, %d unmapped", len(cases), len(skipped))
	t.Logf("decode:  n=%d median %.3f p90 %.3f", len(dec), quantile(dec, 0.5), quantile(dec, 0.9))
	t.Logf("prefill: n=%d median %.3f p90 %.3f", len(pre), quantile(pre, 0.5), quantile(pre, 0.9))
	var single, multi, bench, mainRows, multiBench, multiMain []calCase
	for _, c := range cases {
		isBench := strings.Contains(c.row.Source, "aa72e0ec86c3")
		switch {
		case c.row.DeviceCount == 1:
			single = append(single, c)
		case isBench:
			multi, multiBench = append(multi, c), append(multiBench, c)
		default:
			multi, multiMain = append(multi, c), append(multiMain, c)
		}
		if isBench {
			bench = append(bench, c)
		} else {
			mainRows = append(mainRows, c)
		}
	}
	for _, sub := range []struct {
		name  string
		cases []calCase
	}{{"single-device", single}, {"multi-device", multi}, {"multi-device llama-bench (2024)", multiBench},
		{"multi-device ./main (2023)", multiMain}, {"llama-bench (2024)", bench}, {"./main (2023)", mainRows}} {
		d, p := relErrors(sub.cases, fitted)
		if sub.name == "single-device" {
			assert.LessOrEqual(t, quantile(d, 0.5), singleDecodeMedianBound)
			assert.LessOrEqual(t, quantile(p, 0.5), singlePrefillMedianBound)
		}
		t.Logf("%s: decode n=%d median %.3f p90 %.3f; prefill n=%d median %.3f p90 %.3f", sub.name,
			len(d), quantile(d, 0.5), quantile(d, 0.9), len(p), quantile(p, 0.5), quantile(p, 0.9))
	}
	if testing.Verbose() {
		for _, c := range cases {
			d, p := c.predict(fitted)
			t.Logf("%-36s x%d %-38s %-6s tg %7.2f pred %7.2f (%+.0f%%)  pp %8.1f pred %8.1f", c.row.Hardware, c.row.DeviceCount,
				c.row.Model, c.row.Quant, c.row.TG, d, 100*(d/c.row.TG-1), c.row.PP, p)
		}
	}
	require.GreaterOrEqual(t, len(dec), 150, "most rows must be replayable")
	assert.LessOrEqual(t, quantile(dec, 0.5), decodeMedianBound)
	require.NotEmpty(t, pre)
	assert.LessOrEqual(t, quantile(pre, 0.5), prefillMedianBound)
}

// TestPrefillPassSeconds checks the per-pass term of the prefill model by
// hand: 7B at fp16 (14 GB) on a 1000 GB/s device at 50 % bandwidth, 32
// layers at 100 us, a 1000-token prompt in passes of 512; quantized weights
// add a 16-bit copy written and read (4 bytes per weight).
func TestPrefillPassSeconds(t *testing.T) {
	e := efficiency{DecodeBandwidth: 0.5, PrefillLayerLatency: 100e-6}
	in := prefillPassInputs{WeightBytes: 14e9, Params: 7e9, Layers: 32, Prompt: 1000, BandwidthGBs: 1000}
	assert.InDelta(t, (32*100e-6+14e9/500e9)/512, prefillPassSeconds(in, e), 1e-12)
	in.Prompt = 256 // one pass of the whole prompt
	assert.InDelta(t, (32*100e-6+14e9/500e9)/256, prefillPassSeconds(in, e), 1e-12)
	in.WeightBytes, in.Dequantized = 3.9e9, true
	assert.InDelta(t, (32*100e-6+(3.9e9+4*7e9)/500e9)/256, prefillPassSeconds(in, e), 1e-12)

	q4, err := quant.Parse("q4_k_m")
	require.NoError(t, err)
	fp16, err := quant.Parse("fp16")
	require.NoError(t, err)
	assert.True(t, dequantizedForMatmul(q4))
	assert.False(t, dequantizedForMatmul(fp16))
}

// TestCalibrationFit searches the constants (run with HWACCEL_FIT=1) and
// prints the best; copy them into `fitted` and docs/accuracy.md.
func TestCalibrationFit(t *testing.T) {
	if os.Getenv("HWACCEL_FIT") == "" {
		t.Skip("set HWACCEL_FIT=1 to refit the throughput constants")
	}
	all, _ := loadCalibration(t)
	cases := fitSet(all, os.Getenv("HWACCEL_FIT"))
	heldOut := loadHeldOut(t)
	best, bestErr := fitDecode(cases)
	decAll, _ := relErrors(all, best)
	decHeld, _ := relErrors(heldOut, best)
	t.Logf("all rows with these: median %.3f p90 %.3f", quantile(decAll, 0.5), quantile(decAll, 0.9))
	t.Logf("decode: bandwidth fraction GDDR %.2f HBM %.2f unified %.2f (quantized %.2f), layer latency %.0f us, fit set (n=%d) median %.3f; held-out (n=%d) median %.3f p90 %.3f",
		best.DecodeBandwidth, best.DecodeBandwidthHBM, best.DecodeBandwidthUnified, best.DecodeBandwidthUnifiedQuantized, best.LayerLatency*1e6, len(cases), bestErr, len(decHeld), quantile(decHeld, 0.5), quantile(decHeld, 0.9))
	// Prefill: MFU and the per-layer time per prompt pass, with the decode
	// bandwidth efficiency just fitted (the pass re-reads the weights).
	var prefillCases []calCase
	for _, c := range cases {
		if c.row.PP > 0 {
			prefillCases = append(prefillCases, c)
		}
	}
	bestErr = math.Inf(1)
	for mfu := 0.05; mfu <= 1.0001; mfu += 0.01 {
		for lat := 0.0; lat <= 3000e-6; lat += 20e-6 {
			e := best
			e.PrefillMFU, e.PrefillLayerLatency = mfu, lat
			if m := quantile(prefillErrors(prefillCases, e), 0.5); m < bestErr {
				bestErr = m
				best.PrefillMFU, best.PrefillLayerLatency = mfu, lat
			}
		}
	}
	// Refine the latency at 10 us around the coarse optimum.
	for lat := math.Max(0, best.PrefillLayerLatency-20e-6); lat <= best.PrefillLayerLatency+20e-6; lat += 10e-6 {
		e := best
		e.PrefillLayerLatency = lat
		if m := quantile(prefillErrors(prefillCases, e), 0.5); m < bestErr {
			bestErr, best.PrefillLayerLatency = m, lat
		}
	}
	_, preAll := relErrors(all, best)
	t.Logf("prefill: MFU %.2f, layer time per pass %.0f us, median %.3f p90 %.3f (all rows: median %.3f p90 %.3f)",
		best.PrefillMFU, best.PrefillLayerLatency*1e6, bestErr, quantile(prefillErrors(prefillCases, best), 0.9),
		quantile(preAll, 0.5), quantile(preAll, 0.9))
}

// fitDecode searches the per-layer latency and, for each memory class, the
// bandwidth fraction that minimise the median |error| over the rows: for a
// latency, each class's fraction is the one minimising the median over that
// class's rows (a class's rows depend on its fraction alone), and the
// latency is the one whose resulting median over all rows is smallest.
func fitDecode(cases []calCase) (efficiency, float64) {
	classes := map[string][]calCase{}
	for _, c := range cases {
		classes[memClassName(c)] = append(classes[memClassName(c)], c)
	}
	best, bestErr := fitted, math.Inf(1)
	for lat := 0.0; lat <= 150e-6; lat += 2e-6 {
		e := fitted
		e.LayerLatency = lat
		for name, cs := range classes {
			bestF, bestM := 0.0, math.Inf(1)
			for f := 0.30; f <= 1.0001; f += 0.01 {
				setClassFraction(&e, name, f)
				if m := quantile(decodeErrors(cs, e), 0.5); m < bestM {
					bestM, bestF = m, f
				}
			}
			setClassFraction(&e, name, bestF)
		}
		if m := quantile(decodeErrors(cases, e), 0.5); m < bestErr {
			bestErr, best = m, e
		}
	}
	return best, bestErr
}

// memClassName is the memory class of a case's device (decodeFraction).
func memClassName(c calCase) string {
	d := c.decodePlan.Stages[0].Devices[0]
	switch e := (efficiency{DecodeBandwidth: 1, DecodeBandwidthHBM: 2, DecodeBandwidthUnified: 3, DecodeBandwidthUnifiedQuantized: 4}); e.decodeFraction(d, c.level) {
	case 2:
		return "hbm"
	case 3:
		return "unified"
	case 4:
		return "unified-quantized"
	}
	return "gddr"
}

func setClassFraction(e *efficiency, class string, f float64) {
	switch class {
	case "hbm":
		e.DecodeBandwidthHBM = f
	case "unified":
		e.DecodeBandwidthUnified = f
	case "unified-quantized":
		e.DecodeBandwidthUnifiedQuantized = f
	default:
		e.DecodeBandwidth = f
	}
}

// decodeErrors is relErrors' decode half alone.
func decodeErrors(cases []calCase, e efficiency) []float64 {
	var out []float64
	for _, c := range cases {
		if d := estimateWith(c.decodePlan, c.decodeReq, 0, e).DecodeTokensPerS; d > 0 && c.row.TG > 0 {
			out = append(out, math.Abs(d/c.row.TG-1))
		}
	}
	return out
}

// fitSet selects the rows the constants are fitted on: "single" the
// single-device rows, "recent" the single-device llama-bench rows of May 2024
// (README @ aa72e0ec86c3), anything else every row.
func fitSet(all []calCase, mode string) []calCase {
	var out []calCase
	for _, c := range all {
		switch {
		case mode == "single" && c.row.DeviceCount == 1,
			mode == "recent" && c.row.DeviceCount == 1 && strings.Contains(c.row.Source, "aa72e0ec86c3"),
			mode != "single" && mode != "recent":
			out = append(out, c)
		}
	}
	return out
}

// prefillErrors is relErrors' prefill half alone (the fit's inner loop).
func prefillErrors(cases []calCase, e efficiency) []float64 {
	var out []float64
	for _, c := range cases {
		if p := estimateWith(c.prefillPlan, c.prefillReq, 0, e).PrefillTokensPerS; p > 0 {
			out = append(out, math.Abs(p/c.row.PP-1))
		}
	}
	return out
}
