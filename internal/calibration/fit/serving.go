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

// servingRow is one row of data/serving_decode.json.
type servingRow struct {
	Engine       string  `json:"engine"`
	Version      string  `json:"engine_version"`
	Model        string  `json:"model"`
	Precision    string  `json:"precision"`
	GPU          string  `json:"gpu"`
	GPUs         int     `json:"gpus"`
	TP           int     `json:"tp"`
	Input        int     `json:"input_tokens"`
	Output       int     `json:"output_tokens"`
	TokensPerS   float64 `json:"tokens_per_s"`
	Replayed     bool    `json:"replayed"`
	Use          string  `json:"use"`
	WhyNot       string  `json:"why_not"`
	Spec         string  `json:"spec"`
	CatalogModel string  `json:"catalog_model"`
	Quote        string  `json:"quote"`
	Source       string  `json:"source"`
}

// Uses of a replayed row of data/serving_decode.json or
// data/offload_decode.json: the constants are fitted on the "fit" rows;
// the "held_out" rows only check them. The vLLM constants are now fitted
// on every vLLM row and checked by cross-validation (servingcv.go); their
// split is scored for continuity. SGLang's are fitted on its "fit" rows
// (sglang.go).
const (
	useFit     = "fit"
	useHeldOut = "held_out"
)

// servingCase is a replayable serving row with the counts of its fixed
// costs: its layers, all-reduces (two a layer under tensor parallelism)
// and MoE layers counted per layer, what its layers hold (blocks), whether
// its GPU is of a later generation (plan.LaterServingGeneration), and
// stream, the seconds a step streams the weights and KV cache at the full
// datasheet bandwidth (the planner's replay with no fixed cost).
type servingCase struct {
	row               servingRow
	replay            *plan.Replay
	layers, moeLayers int
	blocks            plan.ServingBlocks
	later             bool
	stream            float64
}

// fitted reports whether the case is a vLLM "fit" row of the fixed split.
func (sc servingCase) fitted() bool {
	return sc.row.Engine == engine.NameVLLM && sc.row.Use == useFit
}

// loadServing reads data/serving_decode.json: every row, and the replayed
// ones laid out.
func loadServing(dataDir string) (rows []servingRow, cases []servingCase, err error) {
	const file = "serving_decode.json"
	if rows, err = readRows[servingRow](dataDir, file); err != nil {
		return nil, nil, err
	}
	for _, r := range rows {
		name := r.Model + " / " + r.GPU
		if !strings.HasPrefix(r.Source, "https://") || r.TokensPerS <= 0 || r.Quote == "" {
			return nil, nil, fmt.Errorf("serving_decode.json: %s: needs an https source, a quote and a speed", name)
		}
		if !r.Replayed {
			if err := whyNotError(file, name, r.WhyNot); err != nil {
				return nil, nil, err
			}
			continue
		}
		if r.Use != useFit && r.Use != useHeldOut || !servingEngines[r.Engine] {
			return nil, nil, fmt.Errorf("serving_decode.json: %s: a replayed row is a vLLM or SGLang row, %q or %q, not %s %q", name, useFit, useHeldOut, r.Engine, r.Use)
		}
		s, ok := specs.ByName(r.Spec)
		if !ok || s.BandwidthGBs <= 0 {
			return nil, nil, fmt.Errorf("serving_decode.json: %s: no datasheet bandwidth for %q", name, r.Spec)
		}
		m, l, err := resolveRow(file, name, r.CatalogModel, r.Precision)
		if err != nil {
			return nil, nil, err
		}
		c := servingCase{row: r, replay: plan.NewServingReplay(r.Engine, m, l, s, r.TP, r.Input+r.Output/2), layers: m.Layers,
			blocks: plan.CountServingBlocks(m, 0, m.Layers), later: plan.LaterServingGeneration("", &s)}
		if m.IsMoE() {
			c.moeLayers = m.Layers - m.DenseLayers
		}
		cases = append(cases, c)
	}
	return rows, cases, nil
}

// servingFit is the fitted vLLM overhead: the constants fitted on every
// vLLM row under the terms the cross-validation chooses, that
// cross-validation (cv; tried and accepted: every candidate term set,
// servingVariants)
// and, for continuity, the same terms fitted on the "fit" rows alone
// (split) and how they do on those and on the held-out rows (fitErrors).
type servingFit struct {
	constants servingConstants
	cv        servingCV
	tried     []servingCV
	accepted  []bool
	split     servingConstants
	all       int // the vLLM rows the shipped constants are fitted on
	fitErrors
	// baseSplit is the fixed split under the base terms alone (the model
	// before the cross-validation chose terms).
	baseSplit fitErrors
}

// decode is k as the planner's constants under terms t: without the
// generation term one per-part time holds for every GPU.
func decode(k servingConstants, t servingTerms) calibration.ServingDecode {
	later := k[colUnitLater]
	if !t.generation {
		later = k[colUnit]
	}
	return calibration.ServingDecode{BandwidthFraction: math.Round(100/k[colStream]) / 100,
		StepSeconds: k[colStep] / 1e6, PartSeconds: k[colUnit] / 1e6, PartSecondsLater: later / 1e6,
		AllReduceSeconds: k[colAllReduce] / 1e6, MoELayerSeconds: k[colMoE] / 1e6,
		MLALayerSeconds: k[colMLA] / 1e6, IndexerSeconds: k[colIndexer] / 1e6}
}

func (f servingFit) decode() calibration.ServingDecode { return decode(f.constants, f.cv.terms) }

// fitServing fits calibration.Throughput.VLLM on the vLLM rows: a step is
// the weight and KV stream at the fraction f of the datasheet bandwidth
// plus the fixed costs times their counts (servingCase.features). Each
// row's stream time at f = 1 is computed once by the planner (its
// replay), so a fit is arithmetic (fitConstants). The optional terms are
// chosen by leave-one-source-out cross-validation (servingVariants); the
// shipped constants are fitted on every vLLM row under them; the constants
// fitted on the "fit" rows alone are scored on those and on the held-out
// rows, the fixed split kept for continuity.
func fitServing(cases []servingCase, c calibration.Throughput) (servingFit, error) {
	unit := c
	unit.VLLM = calibration.ServingDecode{BandwidthFraction: 1}
	unit.SGLang, unit.SGLangROCm = unit.VLLM, unit.VLLM // an SGLang row's stream, for fitSGLang
	var vllm, fitCases, heldCases []servingCase
	for i := range cases {
		sc := &cases[i]
		d := sc.replay.Decode(unit)
		if d <= 0 {
			return servingFit{}, fmt.Errorf("serving_decode.json: %s / %s: no estimate", sc.row.Model, sc.row.GPU)
		}
		sc.stream = 1 / d
		if sc.row.Engine != engine.NameVLLM {
			continue
		}
		vllm = append(vllm, *sc)
		if sc.fitted() {
			fitCases = append(fitCases, *sc)
		} else {
			heldCases = append(heldCases, *sc)
		}
	}
	if len(fitCases) == 0 {
		return servingFit{}, fmt.Errorf("serving_decode.json: no vLLM row to fit on")
	}
	var f servingFit
	f.tried, f.accepted, f.cv = servingVariants(cases)
	if err := plannerCharges(f.cv.terms); err != nil {
		return servingFit{}, err
	}
	f.constants = fitConstants(vllm, f.cv.terms)
	f.all = len(vllm)
	f.split = fitConstants(fitCases, f.cv.terms)
	f.fitErrors = scoreSplit(fitCases, heldCases, f.split, f.cv.terms)
	f.baseSplit = scoreSplit(fitCases, heldCases, fitConstants(fitCases, servingTerms{}), servingTerms{})
	return f, nil
}

// plannerCharges is nil where the planner applies constants fitted under
// terms t as the fitter fitted them, and the reason otherwise. The
// planner charges the fixed time per part of a layer
// (plan.CountServingBlocks; calibration.ServingDecode.PartSeconds): a
// set without the per-part time is fitted per layer, and its constants,
// shipped, would be charged per part, twice per transformer layer, and
// the planner's replay would no longer be the fitter's arithmetic
// (TestServingReplayMatchesFit). The generator stops rather than ship
// them.
func plannerCharges(t servingTerms) error {
	if !t.parts {
		return fmt.Errorf("serving_decode.json: the vLLM rows choose the terms %q, without the per-part time the planner charges; the planner would apply the per-layer constants per part: change the planner or the candidate terms, not the constants", servingTermsText(t))
	}
	return nil
}

// scoreSplit is fitErrors of the constants k under terms t on fitCases
// and heldCases, from the fit's arithmetic (the base terms charge per
// layer, which the planner, charging per part, does not).
func scoreSplit(fitCases, heldCases []servingCase, k servingConstants, t servingTerms) fitErrors {
	errs := func(cases []servingCase) []float64 {
		var out []float64
		for _, sc := range cases {
			out = append(out, math.Abs(1/k.seconds(sc.features(t))/sc.row.TokensPerS-1))
		}
		return out
	}
	fit, held := errs(fitCases), errs(heldCases)
	return fitErrors{n: len(fitCases), heldOut: len(heldCases), medianError: quantile(fit, 0.5), maxError: quantile(fit, 1),
		heldOutMedian: quantile(held, 0.5), heldOutMax: quantile(held, 1)}
}

// servingTable is every row of data/serving_decode.json with the model's
// estimate where replayed (the shipped constants, fitted on every vLLM
// row), the out-of-sample estimate of the leave-one-source-out
// cross-validation, and the row's use in the fixed split kept for
// continuity; then the variants the cross-validation tried.
func servingTable(r *result) string {
	c := r.throughput()
	f := r.servingFit
	var b strings.Builder
	b.WriteString("| engine | version | model | precision | GPUs | measured tok/s | estimate | error | out of sample | use | source |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	index := map[string]int{}
	for i, sc := range r.serving {
		index[servingKey(sc.row)] = i
	}
	for _, row := range r.servingRows {
		i, ok := index[servingKey(row)]
		var sc servingCase
		if ok {
			sc = r.serving[i]
		}
		est, errText, use := estimateCells(sc, ok, c, row.WhyNot, row.Use)
		cv := "—"
		if ok && row.Engine == engine.NameVLLM {
			cv = fmt.Sprintf("%.1f (%s)", f.cv.estimates[i], signedPct(f.cv.estimates[i]/row.TokensPerS-1))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d × %s, TP %d | %.1f | %s | %s | %s | %s | %s |\n", row.Engine, row.Version, row.Model, row.Precision,
			row.GPUs, row.GPU, row.TP, row.TokensPerS, est, errText, cv, use, row.Source)
	}
	v := f.decode()
	fmt.Fprintf(&b, "\nvLLM constants fitted on all %d vLLM rows, each setup weighing one row: weights and KV cache at %s of the datasheet bandwidth, %.0f us per step, %.0f us per part of a layer on Ampere and Ada (%.0f us on Hopper, Blackwell and CDNA3), %.0f us per all-reduce, %.0f us per MoE layer, %.0f us per MLA layer, %.0f us per DSA indexer; %d of %d replayed rows within 25 %%. Leave-one-source-out cross-validation (%d sources; each source's rows predicted by constants fitted on the others): median |error| %s, p90 %s, largest %s over the rows (each setup weighing one row: median %s, p90 %s); %d of %d vLLM rows within 25 %% out of sample.\n",
		f.all, pct(v.BandwidthFraction), v.StepSeconds*1e6, v.PartSeconds*1e6, v.PartSecondsLater*1e6, v.AllReduceSeconds*1e6, v.MoELayerSeconds*1e6, v.MLALayerSeconds*1e6, v.IndexerSeconds*1e6,
		servingWithin(r.serving, c, 0.25), len(r.serving), f.cv.groups, pct(f.cv.median()), pct(f.cv.p90()), pct(quantile(f.cv.errors, 1)), pct(f.cv.setupMedian()), pct(f.cv.setupP90()), within(f.cv.errors, 0.25), len(f.cv.errors))
	fmt.Fprintf(&b, "\nFixed split, for continuity: the same terms fitted on the %d `fit` rows alone: median |error| %s, largest %s; the %d held-out vLLM rows median %s, largest %s. The base terms alone on the same split: fit rows median %s, largest %s; held-out median %s, largest %s.\n",
		f.n, pct(f.medianError), pct(f.maxError), f.heldOut, pct(f.heldOutMedian), pct(f.heldOutMax),
		pct(f.baseSplit.medianError), pct(f.baseSplit.maxError), pct(f.baseSplit.heldOutMedian), pct(f.baseSplit.heldOutMax))
	b.WriteString("\n| terms (leave-one-source-out) | median | p90 | accepted | shipped |\n|---|---|---|---|---|\n")
	for i, cv := range f.tried {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", servingTermsText(cv.terms), pct(cv.median()), pct(cv.p90()), yesNo(f.accepted[i]), yesNo(cv.terms == f.cv.terms))
	}
	b.WriteString("\n" + sglangSummary(r.sglangFit))
	return b.String()
}

// yesNo is "yes" or "no".
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// within is how many of errs are at most bound.
func within(errs []float64, bound float64) int {
	n := 0
	for _, e := range errs {
		if e <= bound {
			n++
		}
	}
	return n
}

// servingKey identifies a row of data/serving_decode.json.
func servingKey(r servingRow) string { return r.Source + "|" + r.Engine + "|" + r.Model + "|" + r.GPU }

// servingWithin is how many replayed rows the constants c reproduce within
// bound.
func servingWithin(cases []servingCase, c calibration.Throughput, bound float64) int {
	n := 0
	for _, sc := range cases {
		if d := sc.replay.Decode(c); d > 0 && math.Abs(d/sc.row.TokensPerS-1) <= bound {
			n++
		}
	}
	return n
}
