package main

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
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
}

// useMixedTypes marks a run whose GGUF is mostly of other types than its
// name says (llama-quantize's fallbacks): replayed and shown, not held to
// the bound.
const useMixedTypes = "mixed_types"

// decodeRate is the row's decode tokens per CPU-second: one core's rate
// (the run used one thread).
func (r harnessRow) decodeRate() float64 {
	return float64(r.DecodeTokens*r.Reps) / r.DecodeCPU
}

// prefillRate is the row's prompt tokens per CPU-second.
func (r harnessRow) prefillRate() float64 {
	return float64(r.PrefillTokens*r.Reps) / r.PrefillCPU
}

// harnessCase is a harness row laid out for the speed model.
type harnessCase struct {
	row    harnessRow
	family string
	replay *plan.Replay
}

// harnessBandwidthGBs is the memory bandwidth the harness rows are replayed
// at: the machine's CPU reports family 25 model 17 (AMD EPYC 9004, Genoa)
// to lscpu, whose socket streams 460.8 GB/s (internal/specs/host.go). One
// core's work, not the socket's memory, bounds a one-thread run, so the
// figure only keeps the bandwidth term out of the way.
const harnessBandwidthGBs = 460.8

// hostCoreFit is the three per-core rates and the replay of every row.
type hostCoreFit struct {
	// tenthsG are the rates per weight family in 0.1 G weights/s.
	tenthsG map[string]int
	fitRows map[string][]float64 // the rate each fit row gave, G weights/s
	// prefillG are the prompt rates per family in G FLOP/s per core, and
	// prefillRows what each fit row gave.
	prefillG    map[string]int
	prefillRows map[string][]float64
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
		l, err := quant.Parse(r.Quant)
		if err != nil {
			return nil, fmt.Errorf("host_harness.json: %s: %w", r.Quant, err)
		}
		if r.Use != "fit" && r.Use != "held_out" && (r.Use != useMixedTypes || r.Why == "") || r.Threads != 1 || r.DecodeCPU <= 0 {
			return nil, fmt.Errorf("host_harness.json: %s %s: use fit, held_out or mixed_types (with why), one thread, a decode time", r.Model, r.Quant)
		}
		rp := plan.NewHostReplay(speedRowsEngine, m, l, r.Threads, harnessBandwidthGBs, r.PrefillTokens, 1)
		out = append(out, harnessCase{row: r, family: rp.WeightFamily(), replay: rp})
	}
	return out, nil
}

// fitHostCores derives the per-core rate of each weight family from the
// "fit" rows: the speed model's decode of a one-core run is proportional to
// the rate, so each row gives rate = trial × measured / modelled(trial);
// the family's rate is the mean of its rows, rounded to 0.1 G weights/s.
// base is the rest of the constant set (the KV read rate, the bandwidth
// fraction), under which the rates are fitted.
func fitHostCores(cases []harnessCase, base calibration.Throughput) (hostCoreFit, error) {
	f := hostCoreFit{tenthsG: map[string]int{}, fitRows: map[string][]float64{}, prefillG: map[string]int{}, prefillRows: map[string][]float64{}, cases: cases}
	const trial = 10e9
	c := base
	c.HostWeightsPerCoreSecond, c.HostWeightsPerCoreSecondQ8, c.HostWeightsPerCoreSecondFloat = trial, trial, trial
	c.HostPrefillFLOPSPerCore, c.HostPrefillFLOPSPerCoreQ8, c.HostPrefillFLOPSPerCoreFloat = trial, trial, trial
	for _, hc := range cases {
		if hc.row.Use != "fit" {
			continue
		}
		est := hc.replay.Decode(c)
		if est <= 0 {
			return f, fmt.Errorf("host_harness.json: %s %s: no estimate", hc.row.Model, hc.row.Quant)
		}
		f.fitRows[hc.family] = append(f.fitRows[hc.family], trial*hc.row.decodeRate()/est/1e9)
		pre := hc.replay.Prefill(c)
		if pre <= 0 || hc.row.PrefillCPU <= 0 {
			return f, fmt.Errorf("host_harness.json: %s %s: no prefill", hc.row.Model, hc.row.Quant)
		}
		f.prefillRows[hc.family] = append(f.prefillRows[hc.family], trial*hc.row.prefillRate()/pre/1e9)
	}
	for _, fam := range decodeFamilies {
		if len(f.fitRows[fam]) == 0 {
			return f, fmt.Errorf("host_harness.json: no fit row of %s weights", fam)
		}
		f.tenthsG[fam] = int(math.Round(mean(f.fitRows[fam]) * 10))
		f.prefillG[fam] = int(math.Round(mean(f.prefillRows[fam])))
	}
	return f, nil
}

// rate is a family's fitted rate in weights/s.
func (f hostCoreFit) rate(family string) float64 { return float64(f.tenthsG[family]) * 1e8 }

// prefillRate is a family's fitted prompt rate in FLOP/s per core.
func (f hostCoreFit) prefillRate(family string) float64 { return float64(f.prefillG[family]) * 1e9 }

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
	b.WriteString("| model | type | use | decode tok/s per core | estimate | error | prefill (pp 128) tok/s per core | estimate | error |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, hc := range r.hostCores.cases {
		est, pre := hc.replay.Decode(c), hc.replay.Prefill(c)
		fmt.Fprintf(&b, "| %s | %s | %s | %.1f | %.1f | %s | %.0f | %.0f | %s |\n", hc.row.Model, hc.row.Quant, hc.row.Use, hc.row.decodeRate(), est, signedPct(est/hc.row.decodeRate()-1),
			hc.row.prefillRate(), pre, signedPct(pre/hc.row.prefillRate()-1))
	}
	for _, use := range []string{"fit", "held_out", useMixedTypes} {
		e, p := harnessErrors(r.hostCores.cases, c, use), harnessPrefillErrors(r.hostCores.cases, c, use)
		fmt.Fprintf(&b, "\n%s rows: %d, decode median |error| %s, largest %s; prefill median %s, largest %s", use, len(e), pct(quantile(e, 0.5)), pct(quantile(e, 1)), pct(quantile(p, 0.5)), pct(quantile(p, 1)))
	}
	b.WriteString("\n")
	return b.String()
}

// fastestRuns keeps, of the runs of each model and type, the one with the
// most decode tokens per CPU-second. Other work on the machine slows a
// core's work even in CPU time (the memory system and the caches are
// shared) and never speeds it up, so the fastest run is the least
// disturbed, as llama-bench users take the best of several runs.
func fastestRuns(rows []harnessRow) []harnessRow {
	var out []harnessRow
	at := map[string]int{}
	for _, r := range rows {
		k := r.Model + " " + r.Quant
		i, ok := at[k]
		switch {
		case !ok:
			at[k] = len(out)
			out = append(out, r)
		case r.decodeRate() > out[i].decodeRate():
			out[i] = r
		}
	}
	return out
}
