package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
)

// servingBatchFit is the per-sequence term of a serving decode step of C
// sequences (calibration.Throughput.ServingBatchLayerSeconds and
// ServingBatchMFU): fitted on the rows marked "fit" (the MI300X
// benchmark_latency rows) in rule 6's form of data/serving_concurrency.json,
// the planner's, and in rule 7's (the FLOPs part but the routed experts'
// capped at the step's tokens at the prompt's efficiency), which was tried
// and not adopted; judged on the held-out rest.
type servingBatchFit struct {
	layerCentiUS int // ServingBatchLayerSeconds in hundredths of a microsecond (rule 6)
	mfuPercent   int // ServingBatchMFU in hundredths (rule 6)
	// rule7CentiUS and rule7Percent are the same fit in rule 7's form;
	// rule7TopPercent is the highest efficiency whose sum of squares ties
	// rule7Percent's (the fit rows, all dense and capped over it, do not
	// tell them apart).
	rule7CentiUS, rule7Percent, rule7TopPercent int
	// fit and held are the cases of each kind, fitSteps and heldSteps
	// their steps as the constants move.
	fit, held           []servingConcurrencyCase
	fitSteps, heldSteps []batchStep
}

// Grids of the fit (rules 6 and 7): the time per layer per sequence 0 to
// 5 µs by 0.01 µs, the efficiency 1 % to 100 % by 1 %.
const (
	servingBatchMaxCentiUS = 500
	servingBatchMaxPercent = 100
)

// withServingBatch is c with the term's constants set.
func withServingBatch(c calibration.Throughput, layerCentiUS, mfuPercent int) calibration.Throughput {
	c.ServingBatchLayerSeconds = float64(layerCentiUS) / 1e8
	c.ServingBatchMFU = float64(mfuPercent) / 100
	return c
}

// batchStep is a case's planned step (ms) as the term's two constants
// move: base + perUS × t (µs) + the FLOPs part, routed / mfu plus, in
// rule 7's form, min(other / mfu, capped), in rule 6's other / mfu (the
// planner's form; rule 7's is replayed here only). routed and other are
// the (C - 1) tokens' matrix products at the full dense peak; capped is C
// tokens' other products at the prompt's efficiency.
type batchStep struct {
	measured, base, perUS, routed, other, capped float64
	dense, nvidia                                bool
	engine                                       string
	// afterRule is the row's after_rule (servingConcurrencyRow.judgedBy).
	afterRule int
}

// planned is the step under t (0.01 µs) and mfu (%), in rule 7's form or,
// with rule6, rule 6's.
func (b batchStep) planned(centiUS, percent int, rule6 bool) float64 {
	inv := 100 / float64(percent)
	other := b.other * inv
	if !rule6 && b.capped > 0 {
		other = min(other, b.capped)
	}
	return b.base + b.perUS*float64(centiUS)/100 + b.routed*inv + other
}

// err is |measured / planned - 1|, the error concurrencyErrors takes.
func (b batchStep) err(centiUS, percent int, rule6 bool) float64 {
	return math.Abs(b.measured/b.planned(centiUS, percent, rule6) - 1)
}

// newBatchStep replays sc three times under c (whose own term is
// replaced) to lay out its batchStep: without the term, at 1 µs a layer,
// and at the full peak, whose FLOPs part it splits by the routed experts'
// share of the matrix products (plan.ServingBatchRoutedShare); the cap is
// C / (C - 1) of the other part at ServingPromptMFU instead of the full
// peak.
func newBatchStep(sc servingConcurrencyCase, c calibration.Throughput) (batchStep, error) {
	base := sc.plannedMS(withServingBatch(c, 0, 0))
	if base <= 0 {
		return batchStep{}, fmt.Errorf("serving_concurrency.json: %s at %d: no decode figure", sc.row.Model, sc.row.Concurrency)
	}
	if c.ServingPromptMFU <= 0 {
		return batchStep{}, fmt.Errorf("serving_concurrency.json: rule 7 needs the prompt's efficiency fitted first")
	}
	full := sc.plannedMS(withServingBatch(c, 0, 100)) - base
	n := float64(sc.row.Concurrency)
	b := batchStep{measured: sc.row.TPOTms, base: base, perUS: sc.plannedMS(withServingBatch(c, 100, 0)) - base,
		routed: full * sc.routedShare, other: full * (1 - sc.routedShare),
		dense: sc.experts <= 1, nvidia: strings.HasPrefix(sc.row.GPU, "NVIDIA"), engine: sc.row.Engine, afterRule: sc.row.AfterRule}
	b.capped = b.other * n / ((n - 1) * c.ServingPromptMFU)
	return b, nil
}

// fitServingBatch fits the term on the cases marked "fit" under the
// constants c (their own term left out): least squares of
// log(planned / measured) over the grids, in rule 7's form and in rule
// 6's.
func fitServingBatch(cases []servingConcurrencyCase, c calibration.Throughput) (servingBatchFit, error) {
	var f servingBatchFit
	for _, sc := range cases {
		b, err := newBatchStep(sc, c)
		if err != nil {
			return f, err
		}
		if sc.row.Use == useFit {
			f.fit, f.fitSteps = append(f.fit, sc), append(f.fitSteps, b)
		} else {
			f.held, f.heldSteps = append(f.held, sc), append(f.heldSteps, b)
		}
	}
	if len(f.fit) == 0 {
		return f, fmt.Errorf("serving_concurrency.json: no fit rows for the batch term (rules 6 and 7)")
	}
	f.layerCentiUS, f.mfuPercent, _ = leastSquaresBatch(f.fitSteps, true)
	f.rule7CentiUS, f.rule7Percent, f.rule7TopPercent = leastSquaresBatch(f.fitSteps, false)
	return f, nil
}

// leastSquaresBatch is the grid point of least sum of log(planned /
// measured)² over steps (the first, lowest efficiency, of a tie) and the
// highest efficiency that ties it at the same time per layer.
func leastSquaresBatch(steps []batchStep, rule6 bool) (centiUS, percent, top int) {
	sum := func(t, p int) float64 {
		var s2 float64
		for _, s := range steps {
			e := math.Log(s.planned(t, p, rule6) / s.measured)
			s2 += e * e
		}
		return s2
	}
	best := math.Inf(1)
	for t := 0; t <= servingBatchMaxCentiUS; t++ {
		for p := 1; p <= servingBatchMaxPercent; p++ {
			if s2 := sum(t, p); s2 < best-1e-12 {
				best, centiUS, percent = s2, t, p
			}
		}
	}
	top = percent
	for p := percent + 1; p <= servingBatchMaxPercent && sum(centiUS, p) < best+1e-12; p++ {
		top = p
	}
	return centiUS, percent, top
}

// batchErrors is the median and p90 of |error| of steps under t and mfu
// in rule 7's form or rule 6's; keep picks the steps (nil: all).
func batchErrors(steps []batchStep, centiUS, percent int, rule6 bool, keep func(batchStep) bool) (median, p90 float64, n int) {
	var errs []float64
	for _, s := range steps {
		if keep == nil || keep(s) {
			errs = append(errs, s.err(centiUS, percent, rule6))
		}
	}
	return quantile(errs, 0.5), quantile(errs, 0.9), len(errs)
}

// nvidiaDense picks dense models on NVIDIA GPUs, the held-out rows rule 7
// names (ruleSevenDense) and those added after it.
func nvidiaDense(s batchStep) bool { return s.dense && s.nvidia }

// judgedBy says whether rule n counted the step's row
// (servingConcurrencyRow.judgedBy).
func (b batchStep) judgedBy(n int) bool { return b.afterRule < n }

// ruleSevenRows are the held-out rows rule 7 was judged on (the 32 of
// rule 6); ruleSevenDense the 8 NVIDIA dense ones among them. Rows added
// after it (after_rule 7: GPUStack's Qwen3-8B runs) are reported apart
// and do not re-decide it.
func ruleSevenRows(s batchStep) bool  { return s.judgedBy(7) }
func ruleSevenDense(s batchStep) bool { return nvidiaDense(s) && s.judgedBy(7) }

// addedAfterRules are the held-out rows added after rules 6 and 7 were
// judged.
func addedAfterRules(s batchStep) bool { return !s.judgedBy(7) }

// adopted is rule 7's criterion, on the rows it was judged on: on the
// held-out rows the median and p90 of |error| do not rise above rule 6's,
// and the NVIDIA dense held-out rows' median falls (the batch-1 replays,
// which the term cannot move, are checked by TestServingBatchRule).
func (f servingBatchFit) adopted() bool {
	m6, p6, _ := batchErrors(f.heldSteps, f.layerCentiUS, f.mfuPercent, true, ruleSevenRows)
	m7, p7, _ := batchErrors(f.heldSteps, f.rule7CentiUS, f.rule7Percent, false, ruleSevenRows)
	d6, _, _ := batchErrors(f.heldSteps, f.layerCentiUS, f.mfuPercent, true, ruleSevenDense)
	d7, _, _ := batchErrors(f.heldSteps, f.rule7CentiUS, f.rule7Percent, false, ruleSevenDense)
	return m7 <= m6 && p7 <= p6 && d7 < d6
}

// judgedHeld are the held-out cases rule n was judged on.
func (f servingBatchFit) judgedHeld(n int) []servingConcurrencyCase {
	var out []servingConcurrencyCase
	for _, sc := range f.held {
		if sc.row.judgedBy(n) {
			out = append(out, sc)
		}
	}
	return out
}

// servingBatchErrors is the median and p90 of |error| of the cases under
// c.
func servingBatchErrors(cases []servingConcurrencyCase, c calibration.Throughput) (median, p90 float64) {
	errs, _ := concurrencyErrors(cases, c)
	return quantile(errs, 0.5), quantile(errs, 0.9)
}

// servingBatchOutcome is the line of docs/accuracy.md that says what the
// term gives on the fit and the held-out rows, without it, in rule 6's
// form and in rule 7's.
func servingBatchOutcome(f servingBatchFit) string {
	type form struct {
		name  string
		t, p  int
		rule6 bool
	}
	forms := []form{{"without the term", 0, 0, true}, {"rule 6", f.layerCentiUS, f.mfuPercent, true}, {"rule 7", f.rule7CentiUS, f.rule7Percent, false}}
	var b strings.Builder
	fmt.Fprintf(&b, "Per-sequence term: rule 6 (no cap, in the planner) fits %.2f µs per layer and %d %% of the dense peak, rule 7 (the FLOPs but the routed experts' at most the step's tokens at the prompt's efficiency) %.2f µs and %d %% (every efficiency from %d %% to %d %% gives the fit rows the same figures), on the %d fit rows; median and p90 of |error|",
		float64(f.layerCentiUS)/100, f.mfuPercent, float64(f.rule7CentiUS)/100, f.rule7Percent, f.rule7Percent, f.rule7TopPercent, len(f.fit))
	sets := []struct {
		name  string
		steps []batchStep
		keep  func(batchStep) bool
	}{
		{"fit rows", f.fitSteps, nil},
		{"held-out rows", f.heldSteps, nil},
		{"held-out rows the rules were judged on", f.heldSteps, ruleSevenRows},
		{"held-out NVIDIA dense rows rule 7 names", f.heldSteps, ruleSevenDense},
		{"held-out NVIDIA dense rows", f.heldSteps, nvidiaDense},
		{"held-out rows added after rule 7", f.heldSteps, addedAfterRules},
		{"held-out other rows", f.heldSteps, func(s batchStep) bool { return !nvidiaDense(s) }},
		{"held-out vllm rows", f.heldSteps, func(s batchStep) bool { return s.engine == engine.NameVLLM }},
		{"held-out sglang rows", f.heldSteps, func(s batchStep) bool { return s.engine == engine.NameSGLang }},
	}
	for i, set := range sets {
		sep := ";"
		if i == 0 {
			sep = ":"
		}
		_, _, n := batchErrors(set.steps, f.layerCentiUS, f.mfuPercent, true, set.keep)
		fmt.Fprintf(&b, "%s %d %s", sep, n, set.name)
		for j, fm := range forms {
			m, p := zeroTermErrors(set.steps, set.keep)
			if j > 0 {
				m, p, _ = batchErrors(set.steps, fm.t, fm.p, fm.rule6, set.keep)
			}
			sepForm := ","
			if j == 0 {
				sepForm = ""
			}
			fmt.Fprintf(&b, "%s %s %s, %s", sepForm, fm.name, pct(m), pct(p))
		}
	}
	if f.adopted() {
		b.WriteString("; rule 7 is adopted (on the rows it was judged on).\n")
	} else {
		b.WriteString("; rule 7 is not adopted (on the rows it was judged on).\n")
	}
	return b.String()
}

// zeroTermErrors is the median and p90 of |error| of steps without the
// term (base alone).
func zeroTermErrors(steps []batchStep, keep func(batchStep) bool) (median, p90 float64) {
	var errs []float64
	for _, s := range steps {
		if keep == nil || keep(s) {
			errs = append(errs, math.Abs(s.measured/s.base-1))
		}
	}
	return quantile(errs, 0.5), quantile(errs, 0.9)
}

// servingBatchSecondsLiteral is ServingBatchLayerSeconds as the generated
// file writes it: hundredths of a microsecond, "0.77e-6".
func servingBatchSecondsLiteral(centiUS int) string {
	return hundredths(centiUS) + "e-6"
}
