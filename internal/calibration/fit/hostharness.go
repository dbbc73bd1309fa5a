package main

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/ggml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// harnessRow is one row of data/host_harness.json: a llama.cpp CPU run of
// scripts/llamacpp-measure/cpuspeed.cpp, timed in CPU seconds.
type harnessRow struct {
	Model         string  `json:"model"`
	Quant         string  `json:"quant"`
	Use           string  `json:"use"`
	Threads       int     `json:"threads"`
	Reps          int     `json:"reps"`
	DecodeTokens  int     `json:"decode_tokens"`
	DecodeCPU     float64 `json:"decode_cpu_s"`
	PrefillTokens int     `json:"prefill_tokens"`
	PrefillCPU    float64 `json:"prefill_cpu_s"`
	Why           string  `json:"why"`
	// Pure marks a GGUF quantized with llama_model_quantize_params.pure
	// (llama-quantize --pure): every matrix in the type Quant names.
	Pure bool `json:"pure"`
	// Machine names the machine of the run (the file's machines).
	Machine string `json:"machine"`
	// StoredTypes is the GGUF's census (gguf_types.py): the weights of its
	// matrices per ggml type, and the token embedding's and output's type.
	StoredTypes *storedTypes `json:"stored_types"`
	// bestPrefill, when set (fastestRuns), is the prompt rate of the
	// file's fastest prompt test, which need not be its fastest decode's run.
	bestPrefill float64
}

// storedTypes is scripts/llamacpp-measure/gguf_types.py's output.
type storedTypes struct {
	Matrices  map[string]float64 `json:"matrices"`
	TokenEmbd *typedTensor       `json:"token_embd"`
	Output    *typedTensor       `json:"output"`
}

// typedTensor is one tensor of a census: its type and weights.
type typedTensor struct {
	Type    string  `json:"type"`
	Weights float64 `json:"weights"`
}

// level is the row's level: a pure GGUF's (quant.PureLevel of the type
// its quant names), else the level its quant names.
func (r harnessRow) level() (quant.Level, error) {
	if !r.Pure {
		return quant.Parse(r.Quant)
	}
	t, ok := ggml.ParseType(r.Quant)
	l, pure := quant.PureLevel(t)
	if !ok || !pure {
		return "", fmt.Errorf("a pure row's quant names a ggml type")
	}
	return l, nil
}

// useOtherMachine marks a run on another machine than the fit rows'
// (the file's machines; why says how it differs): replayed under the
// constants and shown, not held to the bound, since a per-core rate is the
// core's.
const useOtherMachine = "other_machine"

// harnessUses are the uses a row may have, in table order.
var harnessUses = []string{"fit", "held_out", useOtherMachine}

// decodeRate is the row's decode tokens per CPU-second: one core's rate
// (the run used one thread).
func (r harnessRow) decodeRate() float64 {
	return float64(r.DecodeTokens*r.Reps) / r.DecodeCPU
}

// prefillRate is the row's prompt tokens per CPU-second.
func (r harnessRow) prefillRate() float64 {
	if r.bestPrefill > 0 {
		return r.bestPrefill
	}
	return float64(r.PrefillTokens*r.Reps) / r.PrefillCPU
}

// harnessCase is a harness row laid out for the speed model; stored is
// the one ggml type every matrix of its GGUF is stored in (0 for a file of
// several, a mix: quant.MatmulTypes).
type harnessCase struct {
	row    harnessRow
	stored ggml.Type
	replay *plan.Replay
}

// harnessBandwidthGBs is the memory bandwidth the harness rows are replayed
// at: the first machine's CPU reported family 25 model 17 (AMD EPYC 9004,
// Genoa) to lscpu, whose socket streams 460.8 GB/s (internal/specs/host.go);
// the second's (family 26, Zen 5) has no record there. One core's work, not
// the socket's memory, bounds a one-thread run, so the figure only keeps the
// bandwidth term out of the way on both.
const harnessBandwidthGBs = 460.8

// hostCoreFit is the per-core rate of each stored type measured and the
// replay of every row.
type hostCoreFit struct {
	// tenthsG are the decode rates per type in 0.1 G weights/s, fitRows
	// the rate each fit row gave, G weights/s.
	tenthsG map[ggml.Type]int
	fitRows map[ggml.Type][]float64
	// prefillG are the prompt rates per type in G FLOP/s per core, and
	// prefillRows what each fit row gave.
	prefillG    map[ggml.Type]int
	prefillRows map[ggml.Type][]float64
	cases       []harnessCase
}

// loadHarness reads data/host_harness.json and lays out each row: the
// catalog model at the row's GGUF type on one CPU of the row's threads.
func loadHarness(dataDir string) ([]harnessCase, error) {
	var doc struct {
		Rows []harnessRow `json:"rows"`
	}
	if err := readJSON(filepath.Join(dataDir, "host_harness.json"), &doc); err != nil {
		return nil, err
	}
	var out []harnessCase
	for _, r := range fastestRuns(doc.Rows) {
		m := model.Lookup(r.Model)
		if m == nil {
			return nil, fmt.Errorf("host_harness.json: %s is not in the catalog", r.Model)
		}
		l, err := r.level()
		if err != nil {
			return nil, fmt.Errorf("host_harness.json: %s %s: %w", r.Model, r.Quant, err)
		}
		if r.Use != "fit" && r.Use != "held_out" && (r.Use != useOtherMachine || r.Why == "") || r.Threads != 1 || r.DecodeCPU <= 0 || r.Machine == "" {
			return nil, fmt.Errorf("host_harness.json: %s %s: use fit, held_out or other_machine (with why), one thread, a decode time, a machine", r.Model, r.Quant)
		}
		stored := storedType(m, l)
		if r.Use == "fit" && stored == 0 {
			return nil, fmt.Errorf("host_harness.json: %s %s: a fit row is of one stored type (a pure GGUF)", r.Model, r.Quant)
		}
		rp := plan.NewHostReplay(speedRowsEngine, m, l, r.Threads, harnessBandwidthGBs, r.PrefillTokens, 1)
		out = append(out, harnessCase{row: r, stored: stored, replay: rp})
	}
	return out, nil
}

// storedType is the one type every matrix of m at level l is stored in,
// 0 where there are several (quant.MatmulTypes).
func storedType(m *model.Model, l quant.Level) ggml.Type {
	mw, ok := quant.MatmulTypes(m, l)
	if !ok || len(mw.Layers) != 1 || (mw.Head.Weights > 0 && mw.Head.Type != mw.Layers[0].Type) {
		return 0
	}
	return mw.Layers[0].Type
}

// fitHostCores derives the per-core rate of each stored type from the
// "fit" rows, each of one type: the speed model's decode of a one-core run
// is proportional to the rate, so each row gives rate = trial × measured /
// modelled(trial); the type's rate is the mean of its rows, rounded to
// 0.1 G weights/s (prompt: 1 G FLOP/s). base is the rest of the constant
// set (the KV read rate, the bandwidth fraction), under which the rates
// are fitted.
func fitHostCores(cases []harnessCase, base calibration.Throughput) (hostCoreFit, error) {
	f := hostCoreFit{tenthsG: map[ggml.Type]int{}, fitRows: map[ggml.Type][]float64{}, prefillG: map[ggml.Type]int{}, prefillRows: map[ggml.Type][]float64{}, cases: cases}
	const trial = 10e9
	c := base
	c.HostWeightsPerCore, c.HostPrefillFLOPSPerCore = map[ggml.Type]float64{}, map[ggml.Type]float64{}
	for _, hc := range cases {
		if hc.row.Use == "fit" {
			c.HostWeightsPerCore[hc.stored], c.HostPrefillFLOPSPerCore[hc.stored] = trial, trial
		}
	}
	for _, hc := range cases {
		if hc.row.Use != "fit" {
			continue
		}
		est := hc.replay.Decode(c)
		if est <= 0 {
			return f, fmt.Errorf("host_harness.json: %s %s: no estimate", hc.row.Model, hc.row.Quant)
		}
		f.fitRows[hc.stored] = append(f.fitRows[hc.stored], trial*hc.row.decodeRate()/est/1e9)
		pre := hc.replay.Prefill(c)
		if pre <= 0 || hc.row.PrefillCPU <= 0 {
			return f, fmt.Errorf("host_harness.json: %s %s: no prefill", hc.row.Model, hc.row.Quant)
		}
		f.prefillRows[hc.stored] = append(f.prefillRows[hc.stored], trial*hc.row.prefillRate()/pre/1e9)
	}
	if len(f.fitRows[ggml.Q4_K]) == 0 {
		return f, fmt.Errorf("host_harness.json: no fit row of Q4_K weights (the rate of every type without one, plan.hostRateType)")
	}
	for t, rows := range f.fitRows {
		f.tenthsG[t] = int(math.Round(mean(rows) * 10))
		f.prefillG[t] = int(math.Round(mean(f.prefillRows[t])))
	}
	return f, nil
}

// types are the stored types with a fitted rate, by type id.
func (f hostCoreFit) types() []ggml.Type {
	var out []ggml.Type
	for t := range f.tenthsG {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// rates are the fitted decode rates in weights/s, per type.
func (f hostCoreFit) rates() map[ggml.Type]float64 {
	out := map[ggml.Type]float64{}
	for t, v := range f.tenthsG {
		out[t] = float64(v) * 1e8
	}
	return out
}

// prefillRates are the fitted prompt rates in FLOP/s per core, per type.
func (f hostCoreFit) prefillRates() map[ggml.Type]float64 {
	out := map[ggml.Type]float64{}
	for t, v := range f.prefillG {
		out[t] = float64(v) * 1e9
	}
	return out
}

// harnessErrors are the replay errors |estimate / measured − 1| of the
// rows of one use under the constants c.
func harnessErrors(cases []harnessCase, c calibration.Throughput, use string) []float64 {
	var out []float64
	for _, hc := range cases {
		if hc.row.Use == use {
			out = append(out, math.Abs(hc.replay.Decode(c)/hc.row.decodeRate()-1))
		}
	}
	return out
}

// harnessPrefillErrors are harnessErrors of prefill.
func harnessPrefillErrors(cases []harnessCase, c calibration.Throughput, use string) []float64 {
	var out []float64
	for _, hc := range cases {
		if hc.row.Use == use {
			out = append(out, math.Abs(hc.replay.Prefill(c)/hc.row.prefillRate()-1))
		}
	}
	return out
}

// harnessTable is the generated replay table of docs/accuracy.md.
func harnessTable(r *result) string {
	c := r.throughput()
	var b strings.Builder
	b.WriteString("| model | file | machine | use | decode tok/s per core | estimate | error | prefill (pp 128) tok/s per core | estimate | error |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, hc := range r.hostCores.cases {
		est, pre := hc.replay.Decode(c), hc.replay.Prefill(c)
		file := hc.row.Quant
		if hc.row.Pure {
			file += " (pure)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.1f | %.1f | %s | %.0f | %.0f | %s |\n", hc.row.Model, file, hc.row.Machine, hc.row.Use, hc.row.decodeRate(), est, signedPct(est/hc.row.decodeRate()-1),
			hc.row.prefillRate(), pre, signedPct(pre/hc.row.prefillRate()-1))
	}
	for _, use := range harnessUses {
		e, p := harnessErrors(r.hostCores.cases, c, use), harnessPrefillErrors(r.hostCores.cases, c, use)
		fmt.Fprintf(&b, "\n%s rows: %d, decode median |error| %s, largest %s; prefill median %s, largest %s", use, len(e), pct(quantile(e, 0.5)), pct(quantile(e, 1)), pct(quantile(p, 0.5)), pct(quantile(p, 1)))
	}
	b.WriteString("\n")
	return b.String()
}

// fastestRuns keeps, of the runs of each model, type and machine, the one with the
// most decode tokens per CPU-second, its prompt rate the most prompt tokens
// per CPU-second of any of those runs. Other work on the machine slows a
// core's work even in CPU time (the memory system and the caches are
// shared) and never speeds it up, so the fastest run is the least
// disturbed, as llama-bench users take the best of several runs; a run's
// prompt test and decode test are timed apart, and one may be disturbed
// while the other is not (on 2026-11-29 a Q5_K file's fastest decode, 1 %
// above the next, came with a prompt rate 15 % below that run's).
func fastestRuns(rows []harnessRow) []harnessRow {
	var out []harnessRow
	at := map[string]int{}
	for _, r := range rows {
		k := fmt.Sprint(r.Model, r.Quant, r.Pure, r.Machine)
		i, ok := at[k]
		if !ok {
			at[k] = len(out)
			r.bestPrefill = r.prefillRate()
			out = append(out, r)
			continue
		}
		best := max(out[i].bestPrefill, r.prefillRate())
		if r.decodeRate() > out[i].decodeRate() {
			out[i] = r
		}
		out[i].bestPrefill = best
	}
	return out
}
