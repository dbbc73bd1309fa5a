package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/modelio"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// fitSetSource names the May 2024 llama-bench rows of inference.json (the
// README of https://github.com/XiongjieDai/GPU-Benchmarks-on-LLM-Inference
// at aa72e0ec86c3): tg512 from an empty context. The other rows are ./main
// runs of 2023.
const fitSetSource = "aa72e0ec86c3"

// speedRow is one llama.cpp speed measurement of data/inference.json.
type speedRow struct {
	Hardware    string  `json:"hardware"`
	DeviceCount int     `json:"device_count"`
	Model       string  `json:"model"`
	Quant       string  `json:"quantization"`
	Backend     string  `json:"backend"`
	Prompt      any     `json:"prompt_tokens"`
	Gen         int     `json:"gen_tokens"`
	TG          float64 `json:"tg_tokens_per_s"`
	PP          float64 `json:"pp_tokens_per_s"`
	Source      string  `json:"source"`
}

// speedRowsEngine is the engine the speed rows are replayed as
// (plan.NewReplay, NewOffloadReplay, NewHostReplay): the one they ran,
// llama.cpp, for every file without an engine field (inference.json,
// prefill_today.json, h200-speed, host_harness.json, offload_decode.json),
// and for the held-out rows of decode_published.json whatever their engine
// (its MLC LLM rows check the llama.cpp speed model too). Naming the
// engine of the data is the fit's: the planner names none.
const speedRowsEngine = engine.NameLlamaCPP

// heldOutRow is one row of data/decode_published.json.
type heldOutRow struct {
	Hardware string  `json:"hardware"`
	Model    string  `json:"model"`
	Quant    string  `json:"quant"`
	Engine   string  `json:"engine"`
	Backend  string  `json:"backend"`
	Date     string  `json:"date"`
	Context  int     `json:"context"`
	TG       float64 `json:"tg_tokens_per_s"`
	Source   string  `json:"source"`
}

// speedCase is a replayable speed row.
type speedCase struct {
	row    speedRow
	replay *plan.Replay
	class  string // memory class (plan.MemoryClass*)
	family string // weight type family (plan.Weights*)
	bench  bool   // a record of data/h200-speed
	depth  int    // tokens already in the cache before the measured decode (llama-bench -d)
	label  string // held-out and llama-bench rows: the engine, backend and year; prefill_today rows: the build
	arch   string // prefill_today rows: the GPU architecture (archOf)
	use    string // prefill_today rows: useFit or useHeldOut

	// steady is, for a llama-bench record, the median of its samples
	// (benchRecord.Samples), NaN where it has none.
	steady float64
}

// single reports whether the row was measured on one device.
func (c speedCase) single() bool { return c.row.DeviceCount == 1 }

// llamaBench2024 reports whether the row is of the May 2024 llama-bench runs.
func (c speedCase) llamaBench2024() bool { return strings.Contains(c.row.Source, fitSetSource) }

// rowHardware maps the rows' hardware labels to datasheet records
// (internal/specs). Labels whose part has no record are absent and their
// rows are reported as unmapped: RTX 4000/5000 Ada and RTX 3070/3080 Ti (no
// sourced bandwidth at hand), "A100 80GB (form factor not stated)" (PCIe
// 1940 or SXM 2039 GB/s).
var rowHardware = map[string]string{
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

// rowModels maps the rows' model labels (by prefix) to catalog names, or to
// a config for LLaMA (v1), which the catalog does not hold. LLaMA (v1)
// shapes: Touvron et al. 2023, "LLaMA: Open and Efficient Foundation
// Language Models", arXiv:2302.13971, Table 2 (dimension, heads, layers);
// FFN widths and the 32000-token vocabulary are those of the released
// checkpoints' params (same SwiGLU rule as Llama 2 7B/13B in the catalog).
var rowModels = []struct {
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

// rowLevels maps the rows' GGUF types to levels.
var rowLevels = map[string]string{"Q4_0": "q4_0", "Q4_K_M": "q4_k_m", "F16": "fp16"}

var promptDigits = regexp.MustCompile(`\d+`)

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// loadSpeedRows replays every row of inference.json the planner can map;
// unmapped lists the others with the reason.
func loadSpeedRows(dataDir string) (cases []speedCase, unmapped []string, err error) {
	var doc struct {
		Rows []speedRow `json:"llm_inference_measured"`
	}
	if err := readJSON(filepath.Join(dataDir, "inference.json"), &doc); err != nil {
		return nil, nil, err
	}
	if len(doc.Rows) == 0 {
		return nil, nil, fmt.Errorf("inference.json: no rows")
	}
	for _, r := range doc.Rows {
		c, why := mapSpeedRow(r)
		if why != "" {
			unmapped = append(unmapped, why)
			continue
		}
		cases = append(cases, c)
	}
	return cases, unmapped, nil
}

func mapSpeedRow(r speedRow) (speedCase, string) {
	if strings.Contains(r.Backend, "CPU") {
		return speedCase{}, "measured on the CPU backend; host memory bandwidth is not in the datasheet table"
	}
	name, ok := rowHardware[r.Hardware]
	if !ok {
		return speedCase{}, "hardware not in the datasheet table"
	}
	s, ok := specs.ByName(name)
	if !ok || s.BandwidthGBs <= 0 {
		return speedCase{}, "datasheet record has no memory bandwidth"
	}
	var m *model.Model
	for _, rm := range rowModels {
		if strings.HasPrefix(r.Model, rm.prefix) {
			mm, err := modelio.Resolve(rm.spec)
			if err != nil {
				return speedCase{}, "model does not resolve: " + err.Error()
			}
			m = mm
		}
	}
	if m == nil {
		return speedCase{}, "model not mapped"
	}
	lv, ok := rowLevels[r.Quant]
	if !ok {
		return speedCase{}, "quantization not mapped"
	}
	l, err := quant.Parse(lv)
	if err != nil {
		return speedCase{}, err.Error()
	}
	prompt := 0
	switch p := r.Prompt.(type) {
	case float64:
		prompt = int(p)
	case string:
		// "~500 (README: "around 500 tokens")"
		prompt, _ = strconv.Atoi(promptDigits.FindString(p))
	}
	if prompt <= 0 {
		return speedCase{}, "prompt length unknown"
	}
	decodeContext := prompt + r.Gen/2 // ./main: the prompt, then gen tokens
	if r.Gen == 512 && r.TG > 0 && strings.Contains(r.Source, fitSetSource) {
		decodeContext = r.Gen / 2 // llama-bench tg512 generates from an empty context
	}
	// Every row of inference.json is of a build before June 2024 (May 2024
	// llama-bench, 2023 ./main), whose prompt passes dequantized integer
	// weights for cuBLAS.
	rp := plan.NewReplay(speedRowsEngine, m, l, s, r.DeviceCount, prompt, decodeContext).BuiltBeforeMMQ()
	if !strings.Contains(r.Source, fitSetSource) {
		rp.BuiltIn2023() // ./main of 2023: that build's prompt pass time
	}
	if m := gpuCoresLabel.FindStringSubmatch(r.Hardware); m != nil {
		n, _ := strconv.Atoi(m[1])
		rp.WithGPUCores(n) // an Apple GPU's label states its cores: "Apple M1 Max (24-core GPU, 32GB)"
	}
	return speedCase{row: r, replay: rp, class: rp.MemoryClass(), family: rp.WeightFamily()}, ""
}

// gpuCoresLabel reads the GPU core count of a hardware label
// ("Apple M1 Max (24-core GPU, 32GB)").
var gpuCoresLabel = regexp.MustCompile(`\((\d+)-core GPU`)

// todaysBuildsFrom is the first date of today's llama.cpp CUDA builds:
// June 2024, when MMQ became the default for integer weights
// (https://github.com/ggml-org/llama.cpp/pull/8075). A held-out row measured
// before it is replayed as the older builds it ran (Replay.BuiltBeforeMMQ):
// the May 2024 constants, not today's decode fractions (the RTX 4090's
// Llama 2 7B Q4_0 tg128 was 146.8 tokens/s with CUDA graphs in April 2024,
// PR 6766, and is 186.2 on the 2025-26 scoreboard).
const todaysBuildsFrom = "2024-06"

// loadHeldOut maps every held-out row; a row that does not map is an error:
// the file holds only rows the planner can replay.
func loadHeldOut(dataDir string) ([]speedCase, error) {
	rows, err := readRows[heldOutRow](dataDir, "decode_published.json")
	if err != nil {
		return nil, err
	}
	var cases []speedCase
	for _, r := range rows {
		name := r.Hardware + " / " + r.Model + " / " + r.Quant
		if !strings.HasPrefix(r.Source, "https://") || r.TG <= 0 {
			return nil, fmt.Errorf("decode_published.json: %s: needs an https source and a speed", name)
		}
		s, m, l, err := resolveRowOn("decode_published.json", name, r.Hardware, r.Model, r.Quant)
		if err != nil {
			return nil, err
		}
		rp := plan.NewReplay(speedRowsEngine, m, l, s, 1, 0, r.Context)
		if r.Date < todaysBuildsFrom {
			rp.BuiltBeforeMMQ()
		}
		if r.Backend == "Vulkan" {
			// today's decode constants are the CUDA backend's
			rp.OnOtherBackend()
		}
		cases = append(cases, speedCase{
			row:    speedRow{Hardware: r.Hardware, DeviceCount: 1, Model: r.Model, Quant: r.Quant, TG: r.TG, Source: r.Source},
			replay: rp, class: rp.MemoryClass(), family: rp.WeightFamily(),
			label: fmt.Sprintf("%s %s %s", r.Engine, r.Backend, r.Date[:min(4, len(r.Date))]),
		})
	}
	return cases, nil
}

// resolveRowOn is resolveRow with the record of hardware, which must
// have a datasheet bandwidth.
func resolveRowOn(file, name, hardware, catalogModel, level string) (specs.Spec, *model.Model, quant.Level, error) {
	s, ok := specs.ByName(hardware)
	if !ok || s.BandwidthGBs <= 0 {
		return s, nil, "", fmt.Errorf("%s: %s: no record with a datasheet bandwidth", file, name)
	}
	m, l, err := resolveRow(file, name, catalogModel, level)
	return s, m, l, err
}

// prefillTodayRow is one row of data/prefill_today.json.
type prefillTodayRow struct {
	SourceDevice      string  `json:"source_device"`
	Hardware          string  `json:"hardware"`
	ComputeCapability string  `json:"compute_capability"`
	Model             string  `json:"model"`
	Quant             string  `json:"quant"`
	Build             string  `json:"build"`
	PP                float64 `json:"pp_tokens_per_s"`
	TG                float64 `json:"tg_tokens_per_s"`
	Use               string  `json:"use"`
	Source            string  `json:"source"`
}

// readTodayRows reads the rows of data/prefill_today.json.
func readTodayRows(dataDir string) ([]prefillTodayRow, error) {
	var doc struct {
		Rows []prefillTodayRow `json:"rows"`
	}
	if err := readJSON(filepath.Join(dataDir, "prefill_today.json"), &doc); err != nil {
		return nil, err
	}
	return doc.Rows, nil
}

// name is how errors name row r.
func (r prefillTodayRow) name() string { return r.SourceDevice + " / " + r.Model + " / " + r.Quant }

// replayOn is the replay of row r on hardware s with a prompt of prompt
// tokens (0: decode only): its catalog model at its level, one device.
func (r prefillTodayRow) replayOn(s specs.Spec, prompt int) (*plan.Replay, error) {
	m, err := modelio.Resolve(model.Spec{Name: r.Model})
	if err != nil {
		return nil, fmt.Errorf("prefill_today.json: %s: %w", r.name(), err)
	}
	l, err := quant.Parse(r.Quant)
	if err != nil {
		return nil, fmt.Errorf("prefill_today.json: %s: %w", r.name(), err)
	}
	return plan.NewReplay(speedRowsEngine, m, l, s, 1, prompt, 64).WithComputeCapability(r.ComputeCapability), nil
}

// loadPrefillToday replays the rows of data/prefill_today.json marked fit
// or held-out (pp512 of today's build, one GPU); the other rows say why
// they are not replayed. A replayed row that does not map is an error.
func loadPrefillToday(dataDir string) ([]speedCase, error) {
	rows, err := readTodayRows(dataDir)
	if err != nil {
		return nil, err
	}
	var cases []speedCase
	for _, r := range rows {
		if !strings.HasPrefix(r.Source, "https://") || r.PP <= 0 {
			return nil, fmt.Errorf("prefill_today.json: %s: needs an https source and a prompt speed", r.name())
		}
		if r.Use != useFit && r.Use != useHeldOut {
			continue
		}
		s, ok := specs.ByName(r.Hardware)
		if !ok || s.PeakTFLOPS("int8") <= 0 {
			return nil, fmt.Errorf("prefill_today.json: %s: no record with an INT8 peak", r.name())
		}
		rp, err := r.replayOn(s, 512)
		if err != nil {
			return nil, err
		}
		cases = append(cases, speedCase{
			row:    speedRow{Hardware: r.Hardware, DeviceCount: 1, Model: r.Model, Quant: r.Quant, Prompt: 512, PP: r.PP, TG: r.TG, Source: r.Source},
			replay: rp, class: rp.MemoryClass(), family: rp.WeightFamily(),
			arch: archOf(r.ComputeCapability), use: r.Use, label: r.Build,
		})
	}
	return cases, nil
}

// archOf is the architecture a compute capability belongs to, as the
// per-architecture MMQ fractions are keyed (calibration.Throughput).
func archOf(cc string) string {
	switch {
	case cc == "8.9":
		return "ada"
	case cc == "8.6":
		return "ampere"
	case cc == "8.0":
		return "ga100"
	case cc == "12.0":
		return "blackwell"
	case strings.HasPrefix(cc, "9."):
		return "hopper"
	}
	return ""
}

// loadDecodeToday replays the tg128 figure of every row of
// data/prefill_today.json whose hardware has a record with a datasheet
// bandwidth (one GPU, Llama 2 7B Q4_0, decode at the middle of the 128
// generated tokens), with the row's architecture (decodeArchOf) and its
// decode use (decodeSplit). Rows without such a record are left out (the
// RTX PRO 6000 Max-Q: no record), and so are GPUs of no GDDR architecture
// of today's decode fractions (the A30: GA100, HBM2).
func loadDecodeToday(dataDir string) ([]speedCase, error) {
	rows, err := readTodayRows(dataDir)
	if err != nil {
		return nil, err
	}
	var cases []speedCase
	for _, r := range rows {
		if r.TG <= 0 {
			continue
		}
		s, ok := specs.ByName(r.Hardware)
		if !ok || s.BandwidthGBs <= 0 || decodeArchOf(r.ComputeCapability) == "" {
			continue
		}
		rp, err := r.replayOn(s, 0)
		if err != nil {
			return nil, err
		}
		cases = append(cases, speedCase{
			row:    speedRow{Hardware: r.Hardware, DeviceCount: 1, Model: r.Model, Quant: r.Quant, Gen: 128, TG: r.TG, Source: r.Source},
			replay: rp, class: rp.MemoryClass(), family: rp.WeightFamily(),
			arch: decodeArchOf(r.ComputeCapability), label: r.Build,
		})
	}
	decodeSplit(cases)
	return cases, nil
}

// decodeArchOf is the architecture a compute capability belongs to, as
// today's decode fractions are keyed (calibration.Throughput.DecodeToday*:
// GDDR GPUs of Ampere GA10x, Ada and Blackwell); "" for any other.
func decodeArchOf(cc string) string {
	switch a := archOf(cc); a {
	case "ampere", "ada", "blackwell":
		return a
	}
	return ""
}

// decodeSplit marks half of the decode rows fit and the rest held out, by a
// rule fixed before the fit: within each architecture the rows ranked by
// measured tg128, fastest first, the 1st, 3rd, 5th… fit and the 2nd, 4th…
// held out, so both sets span each architecture's range of GPUs.
func decodeSplit(cases []speedCase) {
	byArch := map[string][]int{}
	for i, c := range cases {
		byArch[c.arch] = append(byArch[c.arch], i)
	}
	for _, idx := range byArch {
		sort.SliceStable(idx, func(a, b int) bool { return cases[idx[a]].row.TG > cases[idx[b]].row.TG })
		for rank, i := range idx {
			cases[i].use = useHeldOut
			if rank%2 == 0 {
				cases[i].use = useFit
			}
		}
	}
}
