package main

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"

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

// decodeClasses are the memory classes whose fraction the decode fit sets;
// every one must have rows in the fit set.
var decodeClasses = []string{plan.MemoryClassGDDR, plan.MemoryClassHBM, plan.MemoryClassUnified, plan.MemoryClassUnifiedQuantized}

func setClassFraction(c *calibration.Throughput, class string, f float64) {
	switch class {
	case plan.MemoryClassHBM:
		c.DecodeBandwidthHBM = f
	case plan.MemoryClassUnified:
		c.DecodeBandwidthUnified = f
	case plan.MemoryClassUnifiedQuantized:
		c.DecodeBandwidthUnifiedQuantized = f
	default:
		c.DecodeBandwidth = f
	}
}

// decodeFit is the result of the decode search.
type decodeFit struct {
	fractions   map[string]int // per class, in hundredths
	latencyUS   int
	rows        map[string]int // fit-set rows per class
	n           int
	medianError float64
}

// decodeFitSet is the single-device llama-bench rows of May 2024.
func decodeFitSet(all []speedCase) []speedCase {
	var out []speedCase
	for _, c := range all {
		if c.single() && c.llamaBench2024() {
			out = append(out, c)
		}
	}
	return out
}

// fitDecode searches the per-layer latency (0 to 150 us on a 2 us grid) and,
// for each memory class, the bandwidth fraction (0.30 to 1.00 on a 0.01
// grid) that minimise the median |error| of decode over the fit set: for a
// latency, each class's fraction is the one minimising the median over that
// class's rows (a class's rows depend on its fraction alone), and the
// latency is the one whose resulting median over all rows is smallest. The
// first minimum on each grid wins, so the result is a grid point: fractions
// in hundredths, the latency in whole microseconds.
func fitDecode(cases []speedCase) (decodeFit, error) {
	byClass := map[string][]speedCase{}
	for _, c := range cases {
		byClass[c.class] = append(byClass[c.class], c)
	}
	fit := decodeFit{rows: map[string]int{}, n: len(cases), medianError: math.Inf(1)}
	for _, class := range decodeClasses {
		if len(byClass[class]) == 0 {
			return fit, fmt.Errorf("decode fit: no fit-set row of memory class %s", class)
		}
		fit.rows[class] = len(byClass[class])
	}
	for us := 0; us <= 150; us += 2 {
		c := calibration.Throughput{LayerLatency: float64(us) / 1e6}
		fractions := map[string]int{}
		for _, class := range decodeClasses {
			bestF, bestM := 0, math.Inf(1)
			for f := 30; f <= 100; f++ {
				setClassFraction(&c, class, float64(f)/100)
				if m := quantile(decodeErrors(byClass[class], c), 0.5); m < bestM {
					bestM, bestF = m, f
				}
			}
			setClassFraction(&c, class, float64(bestF)/100)
			fractions[class] = bestF
		}
		if m := quantile(decodeErrors(cases, c), 0.5); m < fit.medianError {
			fit.medianError, fit.fractions, fit.latencyUS = m, fractions, us
		}
	}
	return fit, nil
}

// prefillRefit is what the prefill search of commit d0c2f6d gives today.
type prefillRefit struct {
	mfu         int // hundredths
	latencyUS   int
	n           int
	medianError float64
	inUseMedian float64 // the hand-set constants' median on the same rows
}

// refitPrefill runs the prefill search of d0c2f6d on the single-device rows
// with a prefill figure, with the decode constants of c: MFU 0.05 to 1.00 on
// a 0.01 grid and the per-layer pass time 0 to 3000 us on a 20 us grid,
// then the pass time refined at 10 us around the optimum.
func refitPrefill(all []speedCase, c calibration.Throughput) prefillRefit {
	var cases []speedCase
	for _, sc := range all {
		if sc.single() && sc.row.PP > 0 {
			cases = append(cases, sc)
		}
	}
	r := prefillRefit{medianError: math.Inf(1), inUseMedian: quantile(prefillErrors(cases, c), 0.5)}
	try := func(mfu, us int) {
		e := c
		e.PrefillMFU, e.PrefillLayerLatency = float64(mfu)/100, float64(us)/1e6
		errs := prefillErrors(cases, e)
		if m := quantile(errs, 0.5); m < r.medianError {
			r.medianError, r.mfu, r.latencyUS, r.n = m, mfu, us, len(errs)
		}
	}
	for mfu := 5; mfu <= 100; mfu++ {
		for us := 0; us <= 3000; us += 20 {
			try(mfu, us)
		}
	}
	mfu, coarse := r.mfu, r.latencyUS
	for us := max(0, coarse-20); us <= coarse+20; us += 10 {
		try(mfu, us)
	}
	return r
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

// shapeFit is the params → layers relation over the dense catalog entries.
type shapeFit struct {
	a, b    float64
	kvHeads int
	n       int
}

// fitShape regresses ln(layers) on ln(params) by least squares over the
// dense catalog entries with a known shape (no MoE, no MLA, no recurrent
// or MLP-only layers: the relation is a transformer's), and takes the
// most common key/value head count of those entries (the smallest on a
// tie). The values are written exactly (shortest float64 form).
func fitShape() (shapeFit, error) {
	var xs, ys []float64
	kv := map[int]int{}
	for _, e := range model.Catalog() {
		m := model.Lookup(e.Name)
		if m == nil || m.IsMoE() || m.KVLoRARank > 0 || m.Layers == 0 || m.Params == 0 ||
			m.CountLayers(model.Recurrent) > 0 || m.CountLayers(model.FeedForward) > 0 {
			continue
		}
		xs = append(xs, math.Log(float64(m.Params)))
		ys = append(ys, math.Log(float64(m.Layers)))
		kv[m.EffectiveKVHeads()]++
	}
	f := shapeFit{n: len(xs)}
	if f.n < 2 {
		return f, fmt.Errorf("shape fit: %d dense catalog entries", f.n)
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
