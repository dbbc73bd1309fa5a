package main

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// cpuPublishedRow is one row of data/cpu_published.json: a published
// llama-bench run of llama.cpp's CPU backend with the CPU's widest vector
// extension.
type cpuPublishedRow struct {
	Use          string   `json:"use"`
	Hardware     string   `json:"hardware"`
	ISA          string   `json:"isa"`
	ISASource    string   `json:"isa_source"`
	CatalogModel string   `json:"catalog_model"`
	Quant        string   `json:"quant"`
	Threads      int      `json:"threads"`
	TG           float64  `json:"tg_tokens_per_s"`
	Build        string   `json:"build"`
	BandwidthGBs float64  `json:"memory_bandwidth_gb_s"`
	Why          string   `json:"why"`
	Lines        []string `json:"lines"`
	Source       string   `json:"source"`
}

// cpuISAs are the names a row's isa may take: the widest-vector names
// specs.CPUVectorOf gives (internal/specs/cpuvector.go, widestVector) for
// the x86 and Arm CPUs the rows ran on.
var cpuISAs = []string{"AVX-512", "AVX2", "ASIMD (NEON)", "SVE2"}

// useHarness marks a cpuISACase of host_harness.json (its use there: fit).
const useHarness = "harness fit"

// harnessISA is the widest vector extension of the machine the
// host_harness.json rows ran on: its /proc/cpuinfo flags list avx512f
// (AMD EPYC, family 26 model 2, Zen 5; scripts/llamacpp-measure/README.md,
// "CPU speed").
const harnessISA = "AVX-512"

// cpuComputeOnlyGBs is the bandwidth a row whose source does not state
// its memory is replayed at: high enough that the per-core term alone is
// the bound, as the row's few threads make it (its bound_note).
const cpuComputeOnlyGBs = 1e4

// cpuISACase is one CPU run laid out for the speed model: a fit row of
// host_harness.json (tokens per CPU-second of one thread) or a held-out
// row of cpu_published.json.
type cpuISACase struct {
	source, hardware, isa, model, quant, build, use string
	threads                                         int
	measured                                        float64 // decode tokens/s
	weights                                         float64 // weights read per token
	replay                                          *plan.Replay
}

// perCoreG is the weights per second one thread multiplied in the run, in
// G: what HostWeightsPerCoreSecond* would have to be for the row.
func (c cpuISACase) perCoreG() float64 {
	return c.measured * c.weights / float64(c.threads) / 1e9
}

// loadCPUPublished reads data/cpu_published.json and lays out its fit
// rows on one CPU of the row's threads and ISA.
func loadCPUPublished(dataDir string) ([]cpuPublishedRow, []cpuISACase, error) {
	var doc struct {
		Rows []cpuPublishedRow `json:"rows"`
	}
	if err := readJSON(filepath.Join(dataDir, "cpu_published.json"), &doc); err != nil {
		return nil, nil, err
	}
	var out []cpuISACase
	for _, r := range doc.Rows {
		if !strings.HasPrefix(r.Source, "https://") || len(r.Lines) == 0 || !slices.Contains(cpuISAs, r.ISA) || r.ISASource == "" {
			return nil, nil, fmt.Errorf("cpu_published.json: %s: needs a source URL, its lines, an isa of %v and where it was read", r.Hardware, cpuISAs)
		}
		switch r.Use {
		case "fit":
		case "not_replayed":
			if r.Why == "" {
				return nil, nil, fmt.Errorf("cpu_published.json: %s: not_replayed needs why", r.Hardware)
			}
			continue
		default:
			return nil, nil, fmt.Errorf("cpu_published.json: %s: use fit or not_replayed", r.Hardware)
		}
		m := model.Lookup(r.CatalogModel)
		if m == nil {
			return nil, nil, fmt.Errorf("cpu_published.json: %s is not in the catalog", r.CatalogModel)
		}
		l, err := quant.Parse(r.Quant)
		if err != nil || r.Threads <= 0 || r.TG <= 0 {
			return nil, nil, fmt.Errorf("cpu_published.json: %s: a type, threads and a decode speed: %v", r.Hardware, err)
		}
		bw := r.BandwidthGBs
		if bw <= 0 {
			bw = cpuComputeOnlyGBs
		}
		out = append(out, cpuISACase{source: r.Source, hardware: r.Hardware, isa: r.ISA, model: r.CatalogModel, quant: r.Quant, build: r.Build, use: r.Use,
			threads: r.Threads, measured: r.TG, weights: weightsReadPerToken(m),
			replay: plan.NewHostReplay(speedRowsEngine, m, l, r.Threads, bw, 0, 1).WithCPUFeatures(isaFeatures[r.ISA]...)})
	}
	return doc.Rows, out, nil
}

// harnessISACases are the fit rows of host_harness.json as cpuISACases:
// one source, the harness machine's ISA.
func harnessISACases(cases []harnessCase) []cpuISACase {
	var out []cpuISACase
	for _, hc := range cases {
		if hc.row.Use != "fit" {
			continue
		}
		m := model.Lookup(hc.row.Model)
		out = append(out, cpuISACase{source: "host_harness.json", hardware: "AMD EPYC (Zen 5), 2 vCPUs, this project's harness", isa: harnessISA,
			model: hc.row.Model, quant: hc.row.Quant, build: "llama.cpp 34af94cd", use: useHarness, threads: 1,
			measured: hc.row.decodeRate(), weights: weightsReadPerToken(m), replay: hc.replay})
	}
	return out
}

// isaFeatures are the /proc/cpuinfo flags a replayed row's CPU is given
// for its isa: the flags that make specs.CPUVectorOf read that widest
// vector, so that the planner's own per-ISA rule applies to the replay.
var isaFeatures = map[string][]registry.CPUFeature{
	"AVX-512":      {registry.CPUFeatureAVX512F, registry.CPUFeatureAVX2, registry.CPUFeatureAVX},
	"AVX2":         {registry.CPUFeatureAVX2, registry.CPUFeatureAVX},
	"ASIMD (NEON)": {registry.CPUFeatureASIMD},
	"SVE2":         {registry.CPUFeatureSVE2, registry.CPUFeatureASIMD},
}

// factorISA is the ISA HostCoreFactorNoAVX512 is fitted on.
const factorISA = "AVX2"

// computeBound reports whether the per-core term bounds the row's
// estimate under t: the estimate without the memory term (the bandwidth
// fraction raised out of the way) is within 1 % of the estimate with it.
// Only such rows say what a core's rate is; a memory-bound row's error is
// the bandwidth's.
func (c cpuISACase) computeBound(t calibration.Throughput) bool {
	free := t
	free.DecodeBandwidthHost = 1e3
	return c.replay.Decode(free) <= 1.01*c.replay.Decode(t)
}

// factorOf is the factor the rows give: the median of measured /
// estimate over the compute-bound published rows of factorISA that keep
// returns true for, under base (the constants without the factor); 1 when
// there is none.
func factorOf(cases []cpuISACase, base calibration.Throughput, keep func(cpuISACase) bool) (float64, []float64) {
	var ratios []float64
	for _, o := range cases {
		if o.published() && o.isa == factorISA && keep(o) && o.computeBound(base) {
			ratios = append(ratios, o.measured/o.replay.Decode(base))
		}
	}
	if len(ratios) == 0 {
		return 1, nil
	}
	return quantile(ratios, 0.5), ratios
}

// published reports whether the case is a row of cpu_published.json.
func (c cpuISACase) published() bool { return c.use != useHarness }

// isaCV is the leave-one-source-out check of HostCoreFactorNoAVX512,
// scored on the published rows: base their errors without the factor,
// withFactor with the factor read from the other sources' rows.
type isaCV struct {
	base, withFactor []float64
}

// keep is keepTerm's rule (servingcv.go): the factor is kept only if the
// out-of-sample median falls and the p90 does not rise.
func (cv isaCV) keep() bool {
	return quantile(cv.withFactor, 0.5) < quantile(cv.base, 0.5) && quantile(cv.withFactor, 0.9) <= quantile(cv.base, 0.9)
}

// crossValidateISA scores the factor on the published cases under c, the
// constants without it.
func crossValidateISA(cases []cpuISACase, c calibration.Throughput) isaCV {
	var cv isaCV
	for _, hc := range cases {
		if !hc.published() {
			continue
		}
		cv.base = append(cv.base, math.Abs(hc.replay.Decode(c)/hc.measured-1))
		f, _ := factorOf(cases, c, func(o cpuISACase) bool { return o.source != hc.source })
		with := c
		with.HostCoreFactorNoAVX512 = f
		cv.withFactor = append(cv.withFactor, math.Abs(hc.replay.Decode(with)/hc.measured-1))
	}
	return cv
}

// cpuISAFit is HostCoreFactorNoAVX512 in hundredths (0: not kept), the
// ratios it was taken from and its cross-validation.
type cpuISAFit struct {
	hundredths int
	rows       []float64
	cv         isaCV
}

// fitCPUISA fits HostCoreFactorNoAVX512 on every compute-bound published
// AVX2 row under base (the constants without it), kept only where the
// leave-one-source-out check says it helps.
func fitCPUISA(cases []cpuISACase, base calibration.Throughput) (cpuISAFit, error) {
	base.HostCoreFactorNoAVX512 = 0
	f, ratios := factorOf(cases, base, func(cpuISACase) bool { return true })
	fit := cpuISAFit{rows: ratios, cv: crossValidateISA(cases, base)}
	if len(fit.cv.base) == 0 {
		return fit, fmt.Errorf("cpu_published.json: no replayed row")
	}
	if fit.cv.keep() {
		fit.hundredths = int(math.Round(f * 100))
	}
	return fit, nil
}

// cpuISATable is the generated table of docs/accuracy.md's "CPU decode by
// instruction set": every harness fit row and published row by ISA, its
// error without HostCoreFactorNoAVX512 and under the shipped constants,
// the per-core rate it implies, and the factor's cross-validation.
func cpuISATable(r *result) string {
	c := r.throughput()
	without := c
	without.HostCoreFactorNoAVX512 = 0
	cases := slices.Clone(r.cpuISA)
	slices.SortStableFunc(cases, func(a, b cpuISACase) int { return slices.Index(cpuISAs, a.isa) - slices.Index(cpuISAs, b.isa) })
	var b strings.Builder
	b.WriteString("| CPU | ISA | threads | model | type | build | use | decode tok/s | estimate without the factor | error | estimate | error | G weights/s per thread |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, hc := range cases {
		e0, e := hc.replay.Decode(without), hc.replay.Decode(c)
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %.2f | %.2f | %s | %.2f | %s | %.1f |\n", hc.hardware, hc.isa, hc.threads, hc.model, hc.quant, hc.build, hc.use,
			hc.measured, e0, signedPct(e0/hc.measured-1), e, signedPct(e/hc.measured-1), hc.perCoreG())
	}
	b.WriteString("\n")
	for _, isa := range cpuISAs {
		var e0, e []float64
		for _, hc := range cases {
			if hc.isa == isa && hc.published() {
				e0 = append(e0, hc.replay.Decode(without)/hc.measured-1)
				e = append(e, hc.replay.Decode(c)/hc.measured-1)
			}
		}
		if len(e) > 0 {
			fmt.Fprintf(&b, "%s published rows: %d, median error %s without the factor, %s with; ", isa, len(e), signedPct(quantile(e0, 0.5)), signedPct(quantile(e, 0.5)))
		}
	}
	cv := r.cpuISAFit.cv
	verdict := "not kept (HostCoreFactorNoAVX512 0: the rates unchanged)"
	if cv.keep() {
		verdict = "kept: HostCoreFactorNoAVX512 " + hundredths(r.cpuISAFit.hundredths)
	}
	fmt.Fprintf(&b, "\n\nthe factor, leave one source out over the %d published rows: median |error| %s without, %s with; p90 %s without, %s with; %s\n",
		len(cv.base), pct(quantile(cv.base, 0.5)), pct(quantile(cv.withFactor, 0.5)), pct(quantile(cv.base, 0.9)), pct(quantile(cv.withFactor, 0.9)), verdict)
	return b.String()
}
