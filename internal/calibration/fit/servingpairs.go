package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// servingPrefillRun is one run of a rate pair of data/serving_prefill.json
// (the seventh rule of its description): its input length, the time to
// first token its source prints and, where its requests hit vLLM's prefix
// cache, what each timed request found cached (as a row's members).
type servingPrefillRun struct {
	Input        int     `json:"input_tokens"`
	Output       int     `json:"output_tokens"`
	TTFTms       float64 `json:"ttft_ms"`
	Requests     int     `json:"requests"`
	PromptTokens int     `json:"prompt_tokens"`
	CachedPrefix []int   `json:"cached_prefix_tokens"`
}

// servingRatePair is two runs of one setup by one source, server and
// client at concurrency 1: the difference of their times over the
// difference of their uncached tokens is the engine's prompt rate with the
// request time cancelled.
type servingRatePair struct {
	Setup        string            `json:"setup"`
	Engine       string            `json:"engine"`
	CatalogModel string            `json:"catalog_model"`
	Precision    string            `json:"precision"`
	Spec         string            `json:"spec"`
	TP           int               `json:"tp"`
	Source       string            `json:"source"`
	Quote        string            `json:"quote"`
	Derivation   string            `json:"derivation"`
	Short        servingPrefillRun `json:"short"`
	Long         servingPrefillRun `json:"long"`
}

// ratePairCase is a rate pair laid out: each run as a replayed row.
type ratePairCase struct {
	pair        servingRatePair
	short, long servingPrefillCase
}

// asRow is the run r of the pair p as a row of the file, so that it is
// checked and replayed as the held-out rows are.
func (p servingRatePair) asRow(r servingPrefillRun) servingPrefillRow {
	row := servingPrefillRow{Engine: p.Engine, Model: p.Setup, Precision: p.Precision, GPU: p.Spec, TP: p.TP,
		Input: r.Input, Output: r.Output, Concurrency: 1, TTFTms: r.TTFTms, Replayed: true, Spec: p.Spec,
		CatalogModel: p.CatalogModel, Quote: p.Quote, Source: p.Source,
		Requests: r.Requests, PromptTokens: r.PromptTokens, CachedPrefix: r.CachedPrefix}
	if len(r.CachedPrefix) > 0 {
		row.CachedDerivation = p.Derivation
	}
	return row
}

// layOut replays the row r on the record s: its whole prompt and, where
// it states cached prefixes, each timed request's uncached tokens.
func layOut(r servingPrefillRow, s specs.Spec) (servingPrefillCase, error) {
	name := r.Model + " / " + r.GPU
	if err := cachedPrefixError("serving_prefill.json", name, r); err != nil {
		return servingPrefillCase{}, err
	}
	m, l, err := resolveRow("serving_prefill.json", name, r.CatalogModel, r.Precision)
	if err != nil {
		return servingPrefillCase{}, err
	}
	replay := func(prompt int) *plan.Replay {
		return plan.NewServingPromptReplay(r.Engine, m, l, s, r.TP, prompt, r.Input+r.Output/2)
	}
	return servingPrefillCase{row: r, replay: replay(r.Input), requests: requestReplays(r, replay)}, nil
}

// loadRatePairs reads the rate_pairs of data/serving_prefill.json and lays
// out both runs of each.
func loadRatePairs(dataDir string) ([]ratePairCase, error) {
	const file = "serving_prefill.json"
	var doc struct {
		Pairs []servingRatePair `json:"rate_pairs"`
	}
	if err := readJSON(dataDir+"/"+file, &doc); err != nil {
		return nil, err
	}
	if len(doc.Pairs) == 0 {
		return nil, fmt.Errorf("%s: no rate_pairs", file)
	}
	var out []ratePairCase
	for _, p := range doc.Pairs {
		if !strings.HasPrefix(p.Source, "https://") || p.Quote == "" || p.Derivation == "" || !servingEngines[p.Engine] {
			return nil, fmt.Errorf("%s: pair %s: needs an https source, a quote, a derivation and a serving engine", file, p.Setup)
		}
		if p.Short.TTFTms <= 0 || p.Long.TTFTms <= 0 {
			return nil, fmt.Errorf("%s: pair %s: both runs need a TTFT", file, p.Setup)
		}
		s, ok := specs.ByName(p.Spec)
		if !ok {
			return nil, fmt.Errorf("%s: pair %s: no datasheet record %q", file, p.Setup, p.Spec)
		}
		short, err := layOut(p.asRow(p.Short), s)
		if err != nil {
			return nil, err
		}
		long, err := layOut(p.asRow(p.Long), s)
		if err != nil {
			return nil, err
		}
		pc := ratePairCase{pair: p, short: short, long: long}
		if pc.uncachedTokens() <= 0 {
			return nil, fmt.Errorf("%s: pair %s: the long run computes no more tokens than the short", file, p.Setup)
		}
		out = append(out, pc)
	}
	return out, nil
}

// ratePairsOf is the pairs among pairs of the engine named engineName
// (data selection by the name the pairs carry).
func ratePairsOf(pairs []ratePairCase, engineName string) []ratePairCase {
	var out []ratePairCase
	for _, pc := range pairs {
		if pc.pair.Engine == engineName {
			out = append(out, pc)
		}
	}
	return out
}

// meanUncached is the mean over the case's timed requests of the tokens
// each computed; its whole input when it states no cached prefixes.
func (sc servingPrefillCase) meanUncached() float64 {
	if len(sc.requests) == 0 {
		return float64(sc.row.Input)
	}
	var sum float64
	for _, rq := range sc.requests {
		sum += float64(rq.uncached)
	}
	return sum / float64(len(sc.requests))
}

// uncachedTokens is how many more tokens per request the long run
// computed than the short one.
func (pc ratePairCase) uncachedTokens() float64 {
	return pc.long.meanUncached() - pc.short.meanUncached()
}

// measuredMS is the difference of the two runs' measured times.
func (pc ratePairCase) measuredMS() float64 {
	return pc.long.row.TTFTms - pc.short.row.TTFTms
}

// plannedMS is the difference of the two runs' planned times under c: the
// request time, charged once per request in both, cancels.
func (pc ratePairCase) plannedMS(c calibration.Throughput) float64 {
	return pc.long.plannedMS(c) - pc.short.plannedMS(c)
}

// measuredRate and plannedRate are the prompt rates, tokens per second,
// that the two differences give.
func (pc ratePairCase) measuredRate() float64 { return pc.uncachedTokens() / pc.measuredMS() * 1000 }
func (pc ratePairCase) plannedRate(c calibration.Throughput) float64 {
	return pc.uncachedTokens() / pc.plannedMS(c) * 1000
}

// rateLogError is log(planned rate / measured rate): positive where the
// planner's prompt is faster than the pair shows.
func (pc ratePairCase) rateLogError(c calibration.Throughput) float64 {
	return math.Log(pc.measuredMS() / pc.plannedMS(c))
}

// pairEfficiency is the candidate of the seventh and eighth rules: the
// fraction of the dense peak, in hundredths on the grid of
// ServingPromptMFU, that minimises the sum of squared rateLogError over
// pairs, with the median |rateLogError| there.
func pairEfficiency(pairs []ratePairCase, c calibration.Throughput) (mfuPercent int, median float64) {
	return pairGrid(pairs, c, servingPromptMFUMin, servingPromptMFUMax, func(k *calibration.Throughput, f float64) { k.ServingPromptMFU = f })
}

// pairGrid is the percent in [lo, hi] that, set into c by set, minimises
// the sum of squared rateLogError over pairs, with the median
// |rateLogError| there: the 1 % grid every pair rule fits on.
func pairGrid(pairs []ratePairCase, c calibration.Throughput, lo, hi int, set func(*calibration.Throughput, float64)) (percent int, median float64) {
	bestLoss := math.Inf(1)
	errs := make([]float64, len(pairs))
	for pct := lo; pct <= hi; pct++ {
		k := c
		set(&k, float64(pct)/100)
		var loss float64
		for i, pc := range pairs {
			e := pc.rateLogError(k)
			errs[i] = math.Abs(e)
			loss += e * e
		}
		if loss < bestLoss {
			bestLoss, percent, median = loss, pct, quantile(errs, 0.5)
		}
	}
	return percent, median
}

// heldOutMedian is the median |log(planned/measured)| of the held-out rows
// among cases under c.
func heldOutMedian(cases []servingPrefillCase, c calibration.Throughput) float64 {
	var logs []float64
	for _, sc := range cases {
		if sc.row.Use == useHeldOut {
			logs = append(logs, math.Abs(math.Log(sc.plannedMS(c)/sc.row.TTFTms)))
		}
	}
	return quantile(logs, 0.5)
}

// refitRequestTimes is c with both engines' request times refitted on
// their fit rows among cases at c's efficiency, as the generator fits
// them, with the two fits.
func refitRequestTimes(cases []servingPrefillCase, c calibration.Throughput) (calibration.Throughput, servingPromptFit, vllmPromptFit, error) {
	sg := servingPromptFit{mfuPercent: int(math.Round(c.ServingPromptMFU * 100))}
	fit := promptFitRows(cases, engine.NameSGLang)
	k := c
	k.ServingPromptRequestSeconds = 0
	prompt, err := plannedPrompts(fit, k)
	if err != nil {
		return c, sg, vllmPromptFit{}, err
	}
	sg.requestMS, _, sg.median = bestRequestTime(fit, prompt)
	sg.n = len(fit)
	c = sg.apply(c)
	v, err := fitVLLMPromptRequest(cases, c)
	if err != nil {
		return c, sg, v, err
	}
	return v.apply(c), sg, v, nil
}
