package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
)

// quantile is the q-quantile of xs, interpolated between order statistics.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	pos := q * float64(len(s)-1)
	lo, hi := int(math.Floor(pos)), int(math.Ceil(pos))
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}

// decodeErrors is |estimate/measured - 1| of decode for every case with both.
func decodeErrors(cases []speedCase, c calibration.Throughput) []float64 {
	var out []float64
	for _, sc := range cases {
		if d := sc.replay.Decode(c); d > 0 && sc.row.TG > 0 {
			out = append(out, math.Abs(d/sc.row.TG-1))
		}
	}
	return out
}

// prefillErrors is the same for prefill.
func prefillErrors(cases []speedCase, c calibration.Throughput) []float64 {
	var out []float64
	for _, sc := range cases {
		if p := sc.replay.Prefill(c); p > 0 && sc.row.PP > 0 {
			out = append(out, math.Abs(p/sc.row.PP-1))
		}
	}
	return out
}

// decodeBackends are the backends whose per-layer latency the decode fit
// sets, with the memory classes whose rows ran on each (llama.cpp CUDA on
// NVIDIA GDDR and HBM GPUs, Metal on Apple unified memory).
var decodeBackends = []struct {
	name    string
	classes []string
}{
	{"cuda", []string{plan.MemoryClassGDDR, plan.MemoryClassHBM}},
	{"metal", []string{plan.MemoryClassUnified}},
}

// decodeFamilies are the weight type families, in table order.
var decodeFamilies = []string{plan.WeightsFloat, plan.WeightsQ8, plan.WeightsKQuant}

// classFractions returns a pointer to a class's fraction set in c.
func classFractions(c *calibration.Throughput, class string) *calibration.DecodeFractions {
	switch class {
	case plan.MemoryClassHBM:
		return &c.DecodeHBM
	case plan.MemoryClassUnified:
		return &c.DecodeUnified
	}
	return &c.DecodeGDDR
}

// familyFraction returns a pointer to a family's fraction in f.
func familyFraction(f *calibration.DecodeFractions, family string) *float64 {
	switch family {
	case plan.WeightsFloat:
		return &f.Float
	case plan.WeightsQ8:
		return &f.Q8
	}
	return &f.KQuant
}

func setLatency(c *calibration.Throughput, backend string, us int) {
	if backend == "metal" {
		c.LayerLatencyMetal = float64(us) / 1e6
		return
	}
	c.LayerLatencyCUDA = float64(us) / 1e6
}

// cell is one (memory class, weight family) pair of the decode fit.
type cell struct{ class, family string }

// decodeFit is the result of the decode search.
type decodeFit struct {
	fractions   map[cell]int   // hundredths, every class and family
	rows        map[cell]int   // fit-set rows a cell's fraction was fitted on; 0: the cell took its class's k-quant fraction
	h200Only    []cell         // cells fitted on their H200 rows alone (newestBuild)
	latencyUS   map[string]int // per backend
	backendRows map[string]int // fit-set rows per backend
	kvRatio     int            // KVReadRatio in hundredths
	kvRows      int            // depth rows it was fitted on
	n           int
	medianError float64
}

// decodeFitSet is the single-device llama-bench rows of May 2024 of
// inference.json and the H200 llama-bench tg rows from an empty cache.
func decodeFitSet(all, bench []speedCase) []speedCase {
	var out []speedCase
	for _, c := range all {
		if c.single() && c.llamaBench2024() {
			out = append(out, c)
		}
	}
	for _, c := range bench {
		if c.row.TG > 0 && c.depth == 0 {
			out = append(out, c)
		}
	}
	return out
}

// depthRows are the llama-bench decode rows measured behind a filled cache
// (-d), which fit KVReadRatio.
func depthRows(bench []speedCase) []speedCase {
	var out []speedCase
	for _, c := range bench {
		if c.row.TG > 0 && c.depth > 0 {
			out = append(out, c)
		}
	}
	return out
}

// fitDecode fits the decode constants. For each backend, for each per-layer
// latency on a 1 us grid from 0 to 150 us, each (memory class, weight
// family) cell of its classes takes the fraction (0.10 to 1.00 on a 0.01
// grid) that minimises the median |error| over the cell's rows (a cell's
// rows depend on its fraction alone), and the backend's latency is the one
// whose resulting median over the backend's rows is smallest. A cell with
// no row takes its class's k-quant fraction (the integer kernels' rate;
// only the H200 has Q8_0 rows). Then KVReadRatio (0.10 to 2.00, 0.01 grid)
// minimises the median over the depth rows; the search runs twice, the
// second time with that ratio. The first minimum on each grid wins.
func fitDecode(cases, depth []speedCase) (decodeFit, error) {
	byCell := map[cell][]speedCase{}
	for _, c := range cases {
		byCell[cell{c.class, c.family}] = append(byCell[cell{c.class, c.family}], c)
	}
	if len(depth) == 0 {
		return decodeFit{}, fmt.Errorf("decode fit: no depth row")
	}
	c := calibration.Throughput{KVReadRatio: 1}
	var fit decodeFit
	for round := 0; round < 2; round++ {
		fit = decodeFit{fractions: map[cell]int{}, rows: map[cell]int{}, latencyUS: map[string]int{}, backendRows: map[string]int{},
			n: len(cases), kvRows: len(depth)}
		for _, b := range decodeBackends {
			if err := fitBackend(&c, &fit, b.name, b.classes, byCell); err != nil {
				return fit, err
			}
		}
		fit.kvRatio = fitKVRatio(&c, depth)
	}
	fit.medianError = quantile(decodeErrors(cases, c), 0.5)
	return fit, nil
}

// fitBackend searches one backend's latency and its classes' fractions,
// leaving the result in c and fit.
func fitBackend(c *calibration.Throughput, fit *decodeFit, backend string, classes []string, byCell map[cell][]speedCase) error {
	var rows []speedCase
	for _, class := range classes {
		for _, fam := range []string{plan.WeightsFloat, plan.WeightsKQuant} {
			if len(byCell[cell{class, fam}]) == 0 {
				return fmt.Errorf("decode fit: no fit-set row of %s %s weights", class, fam)
			}
		}
		for _, fam := range decodeFamilies {
			rows = append(rows, byCell[cell{class, fam}]...)
		}
	}
	bestM, bestUS := math.Inf(1), 0
	var best map[cell]int
	for us := 0; us <= 150; us++ {
		setLatency(c, backend, us)
		fr := fitCells(c, classes, byCell)
		if m := quantile(decodeErrors(rows, *c), 0.5); m < bestM {
			bestM, bestUS, best = m, us, fr
		}
	}
	setLatency(c, backend, bestUS)
	fit.latencyUS[backend], fit.backendRows[backend] = bestUS, len(rows)
	for k, v := range best {
		fit.fractions[k] = v
		*familyFraction(classFractions(c, k.class), k.family) = float64(v) / 100
		fit.rows[k] = len(newestBuild(byCell[k]))
		if fit.rows[k] > 0 && fit.rows[k] < len(byCell[k]) {
			fit.h200Only = append(fit.h200Only, k)
		}
	}
	return nil
}

// fitCells sets, under c's latency, every fitted cell of classes to its
// best fraction and every empty cell to its class's k-quant fraction.
func fitCells(c *calibration.Throughput, classes []string, byCell map[cell][]speedCase) map[cell]int {
	out := map[cell]int{}
	for _, class := range classes {
		for _, fam := range decodeFamilies {
			k := cell{class, fam}
			if len(byCell[k]) == 0 {
				continue
			}
			p := familyFraction(classFractions(c, class), fam)
			bestF, bestM := 0, math.Inf(1)
			rows := newestBuild(byCell[k])
			for f := 10; f <= 100; f++ {
				*p = float64(f) / 100
				if m := quantile(decodeErrors(rows, *c), 0.5); m < bestM {
					bestM, bestF = m, f
				}
			}
			*p = float64(bestF) / 100
			out[k] = bestF
		}
		for _, fam := range decodeFamilies {
			if k := (cell{class, fam}); len(byCell[k]) == 0 {
				out[k] = out[cell{class, plan.WeightsKQuant}]
				*familyFraction(classFractions(c, class), fam) = float64(out[k]) / 100
			}
		}
	}
	return out
}

// fitKVRatio sets c.KVReadRatio to the grid point minimising the median
// |error| over the depth rows and returns it in hundredths.
func fitKVRatio(c *calibration.Throughput, depth []speedCase) int {
	bestR, bestM := 0, math.Inf(1)
	for r := 10; r <= 200; r++ {
		c.KVReadRatio = float64(r) / 100
		if m := quantile(decodeErrors(depth, *c), 0.5); m < bestM {
			bestM, bestR = m, r
		}
	}
	c.KVReadRatio = float64(bestR) / 100
	return bestR
}

// prefillFit is the prefill fit: the cuBLAS MFU and the per-layer pass
// time of the builds before MMQ (fitted on the rows of inference.json,
// 2023-24), today's
// per-layer pass time and the MMQ fractions (fitted on the H200 records),
// and how the constants fare on the fit and held-out rows.
type prefillFit struct {
	mfu            int // PrefillMFU, hundredths
	preMMQUS       int // PrefillLayerLatencyPreMMQ, us
	main2023US     int // PrefillLayerLatency2023, us
	n2024, n2023   int // single-device rows of inference.json of each build with an estimate
	latencyUS      int // PrefillLayerLatency, us
	q8, kquant     int // PrefillMFUQ8, PrefillMFUKQuant, thousandths
	nPreMMQ, nH200 int // fit rows with an estimate of each stage
	n, heldOut     int // fit and held-out rows with an estimate
	medianError    float64
	heldOutMedian  float64
	heldOutP90     float64
	h200Median     float64
	preMMQMedian   float64 // the fit rows of inference.json

	// arch is the per-architecture MMQ fractions (prefillTodayArchs;
	// thousandths), fitted on the fit rows of
	// data/prefill_today.json; todayFit and todayHeld are those rows' and
	// the held-out rows' errors under the fitted constants.
	arch                map[string]int
	todayFit, todayHeld []float64
	// fitGPUs names, per architecture, the GPUs of its fit rows.
	fitGPUs map[string][]string
}

// prefillArchRule is the compute capability each architecture of
// prefillTodayArchs stands for, as the constants table says it.
var prefillArchRule = map[string]string{"ada": "8.9", "ampere": "8.6", "blackwell": "12.0", "ga100": "8.0"}

// prefillFitSet is the rows the prefill constants are fitted on: the
// single-device rows of inference.json with a prompt figure, less the
// Apple GPUs' (Metal has its own fractions: fitMetalPrefill) (llama-bench
// pp512 of May 2024 and ./main prompts of about 500 tokens of 2023: builds
// before MMQ) and the H200 pp512 records (today's build).
func prefillFitSet(all, bench []speedCase) (preMMQ, h200 []speedCase) {
	for _, c := range all {
		if c.single() && c.row.PP > 0 && c.class != plan.MemoryClassUnified {
			preMMQ = append(preMMQ, c)
		}
	}
	for _, c := range bench {
		if c.row.PP > 0 {
			h200 = append(h200, c)
		}
	}
	return preMMQ, h200
}

// prefillHeldOut is the prefill held-out set: the llama-bench rows of May
// 2024 measured with the layers split over several GPUs (pp512), which the
// fit never sees. They share the fit rows' source, builds and GPUs; what
// they check is the model away from the one-device layout it was fitted on.
func prefillHeldOut(all []speedCase) []speedCase {
	var out []speedCase
	for _, c := range all {
		if !c.single() && c.llamaBench2024() && c.row.PP > 0 && c.class != plan.MemoryClassUnified {
			out = append(out, c)
		}
	}
	return out
}

// fitPrefill fits the prefill constants in stages, with the decode
// constants of c. First, on the single-device rows of inference.json
// (builds before MMQ: cuBLAS, integer weights dequantized; the search of
// commit d0c2f6d): on the llama-bench rows of May 2024, PrefillMFU (0.05
// to 1.00 on a 0.01 grid) and PrefillLayerLatencyPreMMQ (0 to 3000 us on a
// 20 us grid, then refined at 10 us) minimising the median |error|; then,
// with that MFU (the same cuBLAS GEMM), PrefillLayerLatency2023 (same
// grids) on the 2023 ./main rows. Then, with that MFU
// (cuBLAS runs the 16-bit weights in both builds), on the H200 records
// (today's build): for each PrefillLayerLatency on a 20 us grid from 0 to
// 3000 us, each MMQ family's fraction of the INT8 peak (0.020 to 1.000 on a
// 0.002 grid) minimising the median over its records, and the latency
// whose median over all four records is smallest, refined at 10 us. Last,
// with that latency, the MMQ fraction of each other architecture with rows
// of today's build (today: data/prefill_today.json) on its fit rows
// (fitArchitectures). The first minimum on each grid wins. The held-out
// rows are only scored.
func fitPrefill(all, bench, today []speedCase, c calibration.Throughput) prefillFit {
	rowsPre, h200 := prefillFitSet(all, bench)
	f := prefillFit{nH200: len(h200)}
	var rows2024, rows2023 []speedCase
	for _, sc := range rowsPre {
		if sc.llamaBench2024() {
			rows2024 = append(rows2024, sc)
		} else {
			rows2023 = append(rows2023, sc)
		}
	}
	best := math.Inf(1)
	try := func(mfu, us int) {
		c.PrefillMFU, c.PrefillLayerLatencyPreMMQ = float64(mfu)/100, float64(us)/1e6
		if m := quantile(prefillErrors(rows2024, c), 0.5); m < best {
			best, f.mfu, f.preMMQUS = m, mfu, us
		}
	}
	for mfu := 5; mfu <= 100; mfu++ {
		for us := 0; us <= 3000; us += 20 {
			try(mfu, us)
		}
	}
	for us, coarse := max(0, f.preMMQUS-20), f.preMMQUS; us <= coarse+20; us += 10 {
		try(f.mfu, us)
	}
	c.PrefillMFU, c.PrefillLayerLatencyPreMMQ = float64(f.mfu)/100, float64(f.preMMQUS)/1e6
	f.main2023US = fitPassTime(rows2023, c, func(t *calibration.Throughput, s float64) { t.PrefillLayerLatency2023 = s })
	c.PrefillLayerLatency2023 = float64(f.main2023US) / 1e6
	f.n2024, f.n2023 = len(prefillErrors(rows2024, c)), len(prefillErrors(rows2023, c))
	f.preMMQMedian, f.nPreMMQ = quantile(prefillErrors(rowsPre, c), 0.5), len(prefillErrors(rowsPre, c))
	fitTodaysPrefill(&f, h200, c)
	c = f.apply(c)
	f.arch = fitArchitectures(today, c)
	c = f.apply(c)
	f.fitGPUs = map[string][]string{}
	for _, sc := range today {
		errs := prefillErrors([]speedCase{sc}, c)
		if sc.use == useFit {
			if !slices.Contains(f.fitGPUs[sc.arch], sc.row.Hardware) {
				f.fitGPUs[sc.arch] = append(f.fitGPUs[sc.arch], sc.row.Hardware)
			}
			f.todayFit = append(f.todayFit, errs...)
		} else {
			f.todayHeld = append(f.todayHeld, errs...)
		}
	}
	fitRows := append(append([]speedCase(nil), rowsPre...), h200...)
	errs, held := prefillErrors(fitRows, c), prefillErrors(prefillHeldOut(all), c)
	f.n, f.medianError = len(errs), quantile(errs, 0.5)
	f.heldOut, f.heldOutMedian, f.heldOutP90 = len(held), quantile(held, 0.5), quantile(held, 0.9)
	f.h200Median = quantile(prefillErrors(h200, c), 0.5)
	return f
}

// fitPassTime is the pass time (us, 0 to 3000 on a 20 us grid refined at
// 10 us; the first minimum wins) that, set into c by set, minimises the
// median |error| over rows.
func fitPassTime(rows []speedCase, c calibration.Throughput, set func(*calibration.Throughput, float64)) int {
	bestUS, bestM := 0, math.Inf(1)
	try := func(us int) {
		set(&c, float64(us)/1e6)
		if m := quantile(prefillErrors(rows, c), 0.5); m < bestM {
			bestM, bestUS = m, us
		}
	}
	for us := 0; us <= 3000; us += 20 {
		try(us)
	}
	for us, coarse := max(0, bestUS-20), bestUS; us <= coarse+20; us += 10 {
		try(us)
	}
	return bestUS
}

// fitTodaysPrefill is fitPrefill's second stage, on the H200 records.
func fitTodaysPrefill(f *prefillFit, h200 []speedCase, c calibration.Throughput) {
	byFamily := map[string][]speedCase{}
	for _, sc := range h200 {
		byFamily[sc.family] = append(byFamily[sc.family], sc)
	}
	best := math.Inf(1)
	try := func(us int) {
		c.PrefillLayerLatency = float64(us) / 1e6
		q8 := fitMMQFraction(byFamily[plan.WeightsQ8], c, func(t *calibration.Throughput, v float64) { t.PrefillMFUQ8 = v })
		kq := fitMMQFraction(byFamily[plan.WeightsKQuant], c, func(t *calibration.Throughput, v float64) { t.PrefillMFUKQuant = v })
		c.PrefillMFUQ8, c.PrefillMFUKQuant = float64(q8)/1000, float64(kq)/1000
		if m := quantile(prefillErrors(h200, c), 0.5); m < best {
			best, f.latencyUS, f.q8, f.kquant = m, us, q8, kq
		}
	}
	for us := 0; us <= 3000; us += 20 {
		try(us)
	}
	for us, coarse := max(0, f.latencyUS-20), f.latencyUS; us <= coarse+20; us += 10 {
		try(us)
	}
}

// prefillTodayArchs are the architectures of today's per-architecture MMQ
// fractions, in the order the tables list them, with the field each sets
// (calibration.Throughput.PrefillMFUKQuant*).
var prefillTodayArchs = []struct {
	arch  string
	field string
	set   func(*calibration.Throughput, float64)
}{
	{"ada", "PrefillMFUKQuantAda", func(t *calibration.Throughput, v float64) { t.PrefillMFUKQuantAda = v }},
	{"ampere", "PrefillMFUKQuantAmpere", func(t *calibration.Throughput, v float64) { t.PrefillMFUKQuantAmpere = v }},
	{"blackwell", "PrefillMFUKQuantBlackwell", func(t *calibration.Throughput, v float64) { t.PrefillMFUKQuantBlackwell = v }},
	{"ga100", "PrefillMFUKQuantGA100", func(t *calibration.Throughput, v float64) { t.PrefillMFUKQuantGA100 = v }},
}

// fitArchitectures fits, per architecture, the MMQ fraction of today's
// build (prefillTodayArchs) on the fit rows of data/prefill_today.json,
// with today's per-layer pass time of the H200 records in c; the held-out
// rows are not seen.
func fitArchitectures(today []speedCase, c calibration.Throughput) map[string]int {
	byArch := map[string][]speedCase{}
	for _, sc := range today {
		if sc.use == useFit {
			byArch[sc.arch] = append(byArch[sc.arch], sc)
		}
	}
	out := map[string]int{}
	for _, a := range prefillTodayArchs {
		out[a.arch] = fitMMQFraction(byArch[a.arch], c, a.set)
	}
	return out
}

// fitMMQFraction is the MMQ fraction (thousandths, 0.020 to 1.000 on a
// 0.002 grid) that, set into c by set, minimises the median over rows; 0
// for no row.
func fitMMQFraction(rows []speedCase, c calibration.Throughput, set func(*calibration.Throughput, float64)) int {
	if len(rows) == 0 {
		return 0
	}
	bestF, bestM := 0, math.Inf(1)
	for f := 20; f <= 1000; f += 2 {
		set(&c, float64(f)/1000)
		if m := quantile(prefillErrors(rows, c), 0.5); m < bestM {
			bestM, bestF = m, f
		}
	}
	return bestF
}

// apply is c with the fitted prefill constants.
func (f prefillFit) apply(c calibration.Throughput) calibration.Throughput {
	c.PrefillMFU, c.PrefillLayerLatencyPreMMQ = float64(f.mfu)/100, float64(f.preMMQUS)/1e6
	c.PrefillLayerLatency2023 = float64(f.main2023US) / 1e6
	c.PrefillLayerLatency = float64(f.latencyUS) / 1e6
	c.PrefillMFUQ8, c.PrefillMFUKQuant = float64(f.q8)/1000, float64(f.kquant)/1000
	for _, a := range prefillTodayArchs {
		a.set(&c, float64(f.arch[a.arch])/1000)
	}
	return c
}

// hostRow is one row of data/host_decode.json.
type hostRow struct {
	Use          string  `json:"use"`
	Hardware     string  `json:"hardware"`
	BandwidthGBs float64 `json:"memory_bandwidth_gb_s"`
	Model        string  `json:"model"`
	CatalogModel string  `json:"catalog_model"`
	FileGiB      float64 `json:"file_gib"`
	Threads      int     `json:"threads"`
	TG           float64 `json:"tg_tokens_per_s"`
	Source       string  `json:"source"`
}

// hostFit is the two host constants and what each row gave.
type hostFit struct {
	bandwidth        int // DecodeBandwidthHost in hundredths
	perCoreG         int // HostWeightsPerCoreSecond in G weights/s
	bandwidthRows    []float64
	perCoreRows      []float64 // G weights/s per row
	bandwidthSources []string
	perCoreSources   []string
}

// weightsReadPerToken is what a decode step multiplies: the model's
// parameters less an untied input embedding (a row lookup).
func weightsReadPerToken(m *model.Model) float64 {
	w := float64(m.Params)
	if !m.TieEmbeddings {
		w -= float64(m.Vocab) * float64(m.Hidden)
	}
	return w
}

// fitHost derives the host constants from the CPU rows: the bandwidth
// fraction is the mean over the "bandwidth" rows of tokens/s x file bytes /
// datasheet bandwidth, rounded to 0.01; the per-core rate is the mean over
// the "per_core" rows of tokens/s x weights read per token / threads,
// rounded to 1 G weights/s.
func fitHost(dataDir string) (hostFit, error) {
	var doc struct {
		Rows []hostRow `json:"rows"`
	}
	var f hostFit
	if err := readJSON(filepath.Join(dataDir, "host_decode.json"), &doc); err != nil {
		return f, err
	}
	for _, r := range doc.Rows {
		switch r.Use {
		case "bandwidth":
			f.bandwidthRows = append(f.bandwidthRows, r.TG*r.FileGiB*(1<<30)/(r.BandwidthGBs*1e9))
			f.bandwidthSources = append(f.bandwidthSources, r.Source)
		case "per_core":
			m := model.Lookup(r.CatalogModel)
			if m == nil {
				return f, fmt.Errorf("host_decode.json: %s is not in the catalog", r.CatalogModel)
			}
			f.perCoreRows = append(f.perCoreRows, r.TG*weightsReadPerToken(m)/float64(r.Threads)/1e9)
			f.perCoreSources = append(f.perCoreSources, r.Source)
		}
	}
	if len(f.bandwidthRows) == 0 || len(f.perCoreRows) == 0 {
		return f, fmt.Errorf("host_decode.json: needs bandwidth and per_core rows")
	}
	f.bandwidth = int(math.Round(mean(f.bandwidthRows) * 100))
	f.perCoreG = int(math.Round(mean(f.perCoreRows)))
	return f, nil
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// llamaCPPRun is the part of a record of data/llamacpp_measurements.json
// the attention fit reads.
type llamaCPPRun struct {
	Model          string `json:"model"`
	Quant          string `json:"quant"`
	ContextLength  int    `json:"context_length"`
	FlashAttention bool   `json:"flash_attention"`
	NUBatch        int    `json:"n_ubatch"`
	ComputeBytes   int64  `json:"compute_bytes"`
	RSBytes        int64  `json:"rs_bytes"`
}

// attentionFit is AttentionHiddenRows and the runs it was taken from.
type attentionFit struct {
	tenths int // rows per token, in tenths
	runs   []string
	rows   []float64
}

// fitAttentionRows takes, over the -fa off runs whose compute buffer is
// set by the attention step (the fp32 scores of a micro-batch over the
// context, T × n_ctx × (H + 1) × 4 B with the mask, exceed its fp32 logits,
// T × V × 4 B), what is left of the buffer beside scores and mask in
// hidden-sized fp32 rows per token, (compute − scores) / (T × h × 4); the
// largest, rounded to 0.1 row, so that the estimate covers every such run.
func fitAttentionRows(dataDir string) (attentionFit, error) {
	var doc struct {
		Runs []llamaCPPRun `json:"runs"`
	}
	var f attentionFit
	if err := readJSON(filepath.Join(dataDir, "llamacpp_measurements.json"), &doc); err != nil {
		return f, err
	}
	for _, r := range doc.Runs {
		if r.FlashAttention {
			continue
		}
		m := model.Lookup(r.Model)
		if m == nil || m.Heads <= 0 || m.Hidden <= 0 {
			return f, fmt.Errorf("llamacpp_measurements.json: %s has no catalog shape", r.Model)
		}
		if r.RSBytes > 0 || m.IsMoE() {
			// The rows beside the scores are a dense attention layer's; a
			// hybrid's mixer layers (Qwen3-Next's gated DeltaNet: 10.5 rows)
			// and a MoE's routed tensors keep others, replayed on their own
			// (internal/api TestLlamaCPPRecurrentStateAndKV, TestLlamaCPPCPUMoE).
			continue
		}
		T := float64(min(r.ContextLength, r.NUBatch))
		scoresPerToken := float64(r.ContextLength) * float64(m.Heads+1)
		if scoresPerToken <= float64(m.Vocab) {
			continue // the logits set the buffer
		}
		rows := (float64(r.ComputeBytes) - T*scoresPerToken*4) / (T * float64(m.Hidden) * 4)
		f.rows = append(f.rows, rows)
		f.runs = append(f.runs, fmt.Sprintf("%s %s %d", r.Model, r.Quant, r.ContextLength))
	}
	if len(f.rows) == 0 {
		return f, fmt.Errorf("llamacpp_measurements.json: no attention-bound -fa off run")
	}
	largest := f.rows[0]
	for _, x := range f.rows {
		largest = max(largest, x)
	}
	f.tenths = int(math.Round(largest * 10))
	return f, nil
}

// cudaContextRow is one row of data/cuda_context.json.
type cudaContextRow struct {
	ContextMiB float64 `json:"context_mib"`
	Source     string  `json:"source"`
}

// overheadFit is GPURuntimeOverheadBytes in MiB and its largest row.
type overheadFit struct {
	mib, largest int
}

// fitOverhead is the largest CUDA context of the rows rounded up to a
// multiple of 256 MiB (the caching allocator's slack).
func fitOverhead(dataDir string) (overheadFit, error) {
	var doc struct {
		Rows []cudaContextRow `json:"rows"`
	}
	if err := readJSON(filepath.Join(dataDir, "cuda_context.json"), &doc); err != nil {
		return overheadFit{}, err
	}
	largest := 0.0
	for _, r := range doc.Rows {
		largest = max(largest, r.ContextMiB)
	}
	if largest <= 0 {
		return overheadFit{}, fmt.Errorf("cuda_context.json: no row")
	}
	return overheadFit{mib: int(math.Ceil(largest/256)) * 256, largest: int(largest)}, nil
}

// llamaOverheadFit is LlamaCPPCUDAOverheadBytes in MiB and the
// "unaccounted" figures of the GPU rows it was taken from.
type llamaOverheadFit struct {
	mib  int
	rows []int
}

// llamaMemoryDir holds llama.cpp's logs of its own memory table on a CUDA
// GPU (data/README.md).
const llamaMemoryDir = "llamacpp-cuda-h200-memory"

// fitLlamaOverhead is the largest "unaccounted" GPU memory of the logs
// (the CUDA context, cuBLAS workspace and driver reservations llama.cpp's
// process holds beyond its buffers) rounded up to 16 MiB.
func fitLlamaOverhead(dataDir string) (llamaOverheadFit, error) {
	paths, err := filepath.Glob(filepath.Join(dataDir, llamaMemoryDir, "*.log"))
	if err != nil {
		return llamaOverheadFit{}, err
	}
	var f llamaOverheadFit
	largest := 0
	for _, p := range paths {
		file, err := os.Open(p)
		if err != nil {
			return f, err
		}
		rows, err := calibration.ReadLlamaCPPMemoryTable(file)
		file.Close()
		if err != nil {
			return f, fmt.Errorf("%s: %w", p, err)
		}
		for _, r := range rows {
			if r.Total > 0 {
				f.rows = append(f.rows, r.Unaccounted)
				largest = max(largest, r.Unaccounted)
			}
		}
	}
	if largest == 0 {
		return f, fmt.Errorf("%s: no GPU row", llamaMemoryDir)
	}
	f.mib = (largest + 15) / 16 * 16
	return f, nil
}

// llamaFitDir holds llama.cpp's own --fit choices on imitated cards
// (data/README.md).
const llamaFitDir = "llamacpp-cuda-h200-fit"

// llamaFitOverheadFit is LlamaCPPCUDAFitOverheadBytes in MiB and the rows
// it was taken from ("CARD:CTX").
type llamaFitOverheadFit struct {
	mib  int
	rows []string
}

var (
	llamaFitName = regexp.MustCompile(`^Llama-3\.1-8B-card(\d+)\.txt$`)
	llamaFitArgs = regexp.MustCompile(`-c (\d+) -ngl -1`)
)

// fitLlamaFitOverhead is the GPU memory llama.cpp's --fit finds already
// used when it measures free memory (its CUDA context): for every Q4_K_M
// row without -c where --fit reduced the context to c, CARD less the
// buffers at c (model + compute + KV, from the c4096 -fa on log of the same
// model, KV linear in the context); the largest, rounded up to 1 MiB. --fit
// keeps c only if those buffers fit CARD less that overhead, so with it a
// planner choosing the largest multiple of 256 that fits chooses c.
func fitLlamaFitOverhead(dataDir string) (llamaFitOverheadFit, error) {
	var f llamaFitOverheadFit
	file, err := os.Open(filepath.Join(dataDir, llamaMemoryDir, "Llama-3.1-8B-Q4_K_M-c4096-faon-f16.log"))
	if err != nil {
		return f, err
	}
	rows, err := calibration.ReadLlamaCPPMemoryTable(file)
	file.Close()
	if err != nil || len(rows) == 0 || rows[0].Total == 0 {
		return f, fmt.Errorf("%s: no GPU row: %v", llamaMemoryDir, err)
	}
	gpu := rows[0]
	paths, err := filepath.Glob(filepath.Join(dataDir, llamaFitDir, "*.txt"))
	if err != nil {
		return f, err
	}
	largest := 0.0
	for _, p := range paths {
		m := llamaFitName.FindStringSubmatch(filepath.Base(p))
		if m == nil {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return f, err
		}
		a := llamaFitArgs.FindStringSubmatch(string(data))
		if a == nil || a[1] == "0" {
			continue // layers moved, or the whole trained context kept
		}
		card, _ := strconv.Atoi(m[1])
		ctx, _ := strconv.Atoi(a[1])
		used := float64(gpu.Model+gpu.Compute) + float64(gpu.Context)*float64(ctx)/4096
		largest = max(largest, float64(card)-used)
		f.rows = append(f.rows, m[1]+":"+a[1])
	}
	if len(f.rows) == 0 {
		return f, fmt.Errorf("%s: no row with a reduced context", llamaFitDir)
	}
	f.mib = int(math.Ceil(largest))
	return f, nil
}

// shapeFit is the params → layers relation over the dense models of
// shapeFitModels.
type shapeFit struct {
	a, b    float64
	kvHeads int
	n       int
}

// shapeFitModels are the catalog models the params → layers relation is
// fitted over: the dense transformers of internal/model/catalog.json as it
// stood when the list was frozen (the 65 entries up to Cosmos-Reason2-8B,
// in catalog order). The list is fixed so that adding a model to the
// catalog never changes the shape of a size-only request (params_b): the
// fit put a 70B model at 69.58 layers, just above the 69.5 that rounds to
// 70, so almost any added dense model moved it and changed answers.
var shapeFitModels = []string{
	"Llama-2-7B",
	"Llama-2-13B",
	"Llama-2-70B",
	"CodeLlama-34B",
	"Meta-Llama-3-8B",
	"Meta-Llama-3-70B",
	"Llama-3.1-8B",
	"Llama-3.1-70B",
	"Llama-3.1-405B",
	"Llama-3.2-1B",
	"Llama-3.2-3B",
	"Mistral-7B-v0.1",
	"Mistral-7B-v0.3",
	"Qwen2.5-0.5B",
	"Qwen2.5-1.5B",
	"Qwen2.5-3B",
	"Qwen2.5-7B",
	"Qwen2.5-14B",
	"Qwen2.5-32B",
	"Qwen2.5-72B",
	"Gemma-2-2B",
	"Gemma-2-9B",
	"Gemma-2-27B",
	"Phi-3-mini-4k-instruct",
	"Phi-3.5-mini-instruct",
	"Falcon-40B",
	"Falcon-180B",
	"TinyLlama-1.1B-Chat-v1.0",
	"Llama-3.3-70B-Instruct",
	"Qwen3-0.6B",
	"Qwen3-8B",
	"Qwen3-32B",
	"Gemma-3-1B",
	"Gemma-3-4B",
	"Gemma-3-12B",
	"Gemma-3-27B",
	"Phi-3-medium-4k-instruct",
	"Phi-4",
	"Qwen3-1.7B",
	"Qwen3-VL-2B-Instruct",
	"Qwen3-VL-4B-Instruct",
	"Qwen3-VL-8B-Instruct",
	"Qwen3-VL-32B-Instruct",
	"Qwen3-VL-32B-Thinking",
	"MiMo-7B-Base",
	"Ministral-3-3B-Instruct-2512",
	"OLMo-2-1124-7B",
	"OLMo-2-1124-13B",
	"OLMo-2-0325-32B",
	"internlm2_5-7b-chat",
	"stablelm-2-zephyr-1_6b",
	"gemma-2-2b-jpn-it",
	"Qwen3-4B",
	"Qwen3-14B",
	"Phi-4-mini-instruct",
	"DeepSeek-R1-Distill-Qwen-32B",
	"Qwen2-1.5B-Instruct",
	"SmolLM-1.7B-Instruct",
	"MiniCPM-2B-sft-bf16",
	"SmolLM3-3B",
	"Devstral-Small-2507",
	"cogito-v1-preview-qwen-14B",
	"medgemma-27b-it",
	"granite-3b-code-instruct-128k",
	"Cosmos-Reason2-8B",
}

// fitShape regresses ln(layers) on ln(params) by least squares over the
// models of shapeFitModels, each of which must be a dense catalog entry
// with a known shape (no MoE, no MLA, no recurrent or MLP-only layers: the
// relation is a transformer's), and takes the most common key/value head
// count of those entries (the smallest on a tie). The values are written
// exactly (shortest float64 form).
func fitShape() (shapeFit, error) {
	var xs, ys []float64
	kv := map[int]int{}
	for _, name := range shapeFitModels {
		m := model.Lookup(name)
		if m == nil || m.IsMoE() || m.KVLoRARank > 0 || m.Layers == 0 || m.Params == 0 ||
			m.CountLayers(model.Recurrent) > 0 || m.CountLayers(model.FeedForward) > 0 {
			return shapeFit{}, fmt.Errorf("shape fit: %s is not a dense catalog model with a known shape", name)
		}
		xs = append(xs, math.Log(float64(m.Params)))
		ys = append(ys, math.Log(float64(m.Layers)))
		kv[m.EffectiveKVHeads()]++
	}
	f := shapeFit{n: len(xs)}
	if f.n < 2 {
		return f, fmt.Errorf("shape fit: %d models", f.n)
	}
	n := float64(f.n)
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	f.b = (n*sxy - sx*sy) / (n*sxx - sx*sx)
	f.a = (sy - f.b*sx) / n
	keys := make([]int, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	best := 0
	for _, k := range keys {
		if kv[k] > best {
			best, f.kvHeads = kv[k], k
		}
	}
	return f, nil
}

// newestBuild is the rows of the newest llama.cpp build among cases: the
// llama-bench records of data/h200-speed (2026) where a cell has any, else
// all its rows (May 2024). Kernels change between builds (llama.cpp's F16
// matrix-vector path on an H100 streamed 0.55 of its bandwidth in the 2024
// rows, the 2026 build 0.70 on an H200), and a plan is for today's build.
func newestBuild(cases []speedCase) []speedCase {
	var out []speedCase
	for _, c := range cases {
		if c.bench {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return cases
	}
	return out
}

// decodeTodayArchs are the architectures of today's decode fractions, in
// table order, with the constant each sets.
var decodeTodayArchs = []struct {
	name string
	set  func(*calibration.Throughput, float64)
}{
	{"ampere", func(c *calibration.Throughput, f float64) { c.DecodeTodayAmpere = f }},
	{"ada", func(c *calibration.Throughput, f float64) { c.DecodeTodayAda = f }},
	{"blackwell", func(c *calibration.Throughput, f float64) { c.DecodeTodayBlackwell = f }},
}

// decodeTodayFit is the decode fit of today's CUDA build on GDDR GPUs.
type decodeTodayFit struct {
	fractions map[string]int // hundredths, per architecture
	latencyUS int            // LayerLatencyCUDAToday
	fit, held []float64      // |error| of the fit and held-out rows under the fitted constants
}

// fitDecodeToday fits today's build's decode constants on the fit rows of
// data/prefill_today.json (decodeSplit) alone: for each
// LayerLatencyCUDAToday on a 1 us grid from 0 to 150 us, each architecture
// the fraction (0.10 to 1.00, 0.01 grid) minimising the median |error| of
// its fit rows, and the latency whose median over all fit rows is smallest
// (the first minimum wins). The held-out rows are only replayed.
func fitDecodeToday(rows []speedCase, c calibration.Throughput) decodeTodayFit {
	f := decodeTodayFit{fractions: map[string]int{}}
	var fitRows []speedCase
	byArch := map[string][]speedCase{}
	for _, r := range rows {
		if r.use == useFit {
			fitRows = append(fitRows, r)
			byArch[r.arch] = append(byArch[r.arch], r)
		}
	}
	bestM := math.Inf(1)
	for us := 0; us <= 150; us++ {
		c.LayerLatencyCUDAToday = float64(us) / 1e6
		fr := map[string]int{}
		for _, a := range decodeTodayArchs {
			fr[a.name] = fitFraction(byArch[a.name], &c, a.set)
		}
		if m := quantile(decodeErrors(fitRows, c), 0.5); m < bestM {
			bestM, f.latencyUS, f.fractions = m, us, fr
		}
	}
	c = f.apply(c)
	for _, r := range rows {
		errs := decodeErrors([]speedCase{r}, c)
		if r.use == useFit {
			f.fit = append(f.fit, errs...)
		} else {
			f.held = append(f.held, errs...)
		}
	}
	return f
}

// fitFraction sets, through set, the fraction (0.10 to 1.00, 0.01 grid)
// minimising the median |error| of rows under c and returns it in
// hundredths; 0 (none) when there is no row.
func fitFraction(rows []speedCase, c *calibration.Throughput, set func(*calibration.Throughput, float64)) int {
	if len(rows) == 0 {
		set(c, 0)
		return 0
	}
	bestF, bestM := 0, math.Inf(1)
	for fr := 10; fr <= 100; fr++ {
		set(c, float64(fr)/100)
		if m := quantile(decodeErrors(rows, *c), 0.5); m < bestM {
			bestM, bestF = m, fr
		}
	}
	set(c, float64(bestF)/100)
	return bestF
}

// apply sets the fitted constants in c.
func (f decodeTodayFit) apply(c calibration.Throughput) calibration.Throughput {
	c.LayerLatencyCUDAToday = float64(f.latencyUS) / 1e6
	for _, a := range decodeTodayArchs {
		a.set(&c, float64(f.fractions[a.name])/100)
	}
	return c
}
