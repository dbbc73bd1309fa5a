package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/modelio"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// benchDir is the folder of data/ that holds llama-bench JSON output kept
// verbatim (data/README.md says how it was made): the H200 records the fit
// reads.
const benchDir = "h200-speed"

// benchHeldOutDir holds the H200 llama-bench records of a newer llama.cpp
// build (34af94cd) that no fit reads: the held-out H200 set
// (data/README.md).
const benchHeldOutDir = "h200-speed-34af94cd"

// benchRecord is the part of one llama-bench `-o json` record the fit reads.
type benchRecord struct {
	GPU      string  `json:"gpu_info"`
	Backends string  `json:"backends"`
	File     string  `json:"model_filename"`
	Type     string  `json:"model_type"`
	Prompt   int     `json:"n_prompt"`
	Gen      int     `json:"n_gen"`
	Depth    int     `json:"n_depth"`
	TS       float64 `json:"avg_ts"`
	// Samples is each repetition's rate; the first pp512 sample of the
	// H200 records is 1.2-3.7x slower than the others (data/README.md),
	// so the median of the samples is the steady rate, reported beside
	// avg_ts, which the fit and the checks read.
	Samples []float64 `json:"samples_ts"`
}

// benchGPUs maps llama-bench's gpu_info to datasheet records: the H200 of
// data/h200-speed is PCI device 10de:2335, "GH100 [H200 SXM 141GB]"
// (shared/machines/h200-vm/nvidia-smi-q-x.xml, pci_device_id 233510DE).
var benchGPUs = map[string]string{"NVIDIA H200": "NVIDIA H200 SXM 141GB"}

// benchComputeCapability is the compute capability nvidia-smi reported for
// each gpu_info of data/h200-speed (shared/machines/h200-vm/query-gpu.csv,
// compute_cap 9.0: Hopper); the H200 record states no architecture.
var benchComputeCapability = map[string]string{"NVIDIA H200": "9.0"}

// benchTypes maps llama-bench's model_type suffix (the GGUF file type) to
// levels.
var benchTypes = map[string]string{"Q4_K - Medium": "q4_k_m", "Q8_0": "q8_0", "F16": "fp16"}

// benchModels maps the GGUF file names' model part to catalog names.
var benchModels = []string{"Llama-3.1-8B", "Llama-3.2-1B", "Phi-3-mini-4k-instruct", "Qwen3-0.6B"}

// loadBench replays every record of the llama-bench files under
// data/h200-speed (loadBenchDir).
func loadBench(dataDir string) ([]speedCase, error) { return loadBenchDir(dataDir, benchDir) }

// loadBenchDir replays every record of the llama-bench files under
// data/benchDir: a tgN record decodes at its depth plus N/2 tokens, a ppN
// record is a prefill of N tokens. A record that does not map is an error.
func loadBenchDir(dataDir, benchDir string) ([]speedCase, error) {
	files, err := filepath.Glob(filepath.Join(dataDir, benchDir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no llama-bench files", benchDir)
	}
	var cases []speedCase
	for _, f := range files {
		var recs []benchRecord
		if err := readJSON(f, &recs); err != nil {
			return nil, err
		}
		for _, r := range recs {
			c, err := benchCase(r, filepath.ToSlash(filepath.Join("data", benchDir, filepath.Base(f))))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			cases = append(cases, c)
		}
	}
	return cases, nil
}

func benchCase(r benchRecord, source string) (speedCase, error) {
	s, ok := specs.ByName(benchGPUs[r.GPU])
	if !ok || s.BandwidthGBs <= 0 {
		return speedCase{}, fmt.Errorf("%s: no datasheet bandwidth", r.GPU)
	}
	name := ""
	for _, n := range benchModels {
		if strings.HasPrefix(filepath.Base(r.File), n+"-") {
			name = n
		}
	}
	if name == "" {
		return speedCase{}, fmt.Errorf("%s: model not mapped", r.File)
	}
	m, err := modelio.Resolve(model.Spec{Name: name})
	if err != nil {
		return speedCase{}, err
	}
	var lv string
	for suffix, v := range benchTypes {
		if strings.HasSuffix(r.Type, " "+suffix) {
			lv = v
		}
	}
	if lv == "" {
		return speedCase{}, fmt.Errorf("%s: type not mapped", r.Type)
	}
	l, err := quant.Parse(lv)
	if err != nil {
		return speedCase{}, err
	}
	row := speedRow{Hardware: s.Name, DeviceCount: 1, Model: name, Quant: strings.ToUpper(lv), Backend: r.Backends, Source: source}
	var rp *plan.Replay
	switch {
	case r.Gen > 0 && r.Prompt == 0:
		row.TG, row.Gen = r.TS, r.Gen
		rp = plan.NewReplay(speedRowsEngine, m, l, s, 1, 0, r.Depth+r.Gen/2).WithComputeCapability(benchComputeCapability[r.GPU])
	case r.Prompt > 0 && r.Gen == 0 && r.Depth == 0:
		row.PP, row.Prompt = r.TS, r.Prompt
		rp = plan.NewReplay(speedRowsEngine, m, l, s, 1, r.Prompt, r.Prompt).WithComputeCapability(benchComputeCapability[r.GPU])
	default:
		return speedCase{}, fmt.Errorf("record with n_prompt %d n_gen %d n_depth %d: neither tg nor pp", r.Prompt, r.Gen, r.Depth)
	}
	return speedCase{row: row, replay: rp, class: rp.MemoryClass(), family: rp.WeightFamily(), bench: true, depth: r.Depth,
		steady: quantile(r.Samples, 0.5), label: fmt.Sprintf("llama.cpp %s 2026", r.Backends)}, nil
}
