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

// servingConcurrencyRow is one row of data/serving_concurrency.json: a
// published vLLM or SGLang run of C sequences decoding at once, and the
// per-sequence time per output token it measured.
type servingConcurrencyRow struct {
	Engine       string  `json:"engine"`
	Version      string  `json:"engine_version"`
	Model        string  `json:"model"`
	Precision    string  `json:"precision"`
	GPU          string  `json:"gpu"`
	GPUs         int     `json:"gpus"`
	TP           int     `json:"tp"`
	Concurrency  int     `json:"concurrency"`
	Input        int     `json:"input_tokens"`
	Output       int     `json:"output_tokens"`
	Figure       string  `json:"figure"`
	TPOTms       float64 `json:"tpot_ms"`
	MedianITLms  float64 `json:"median_itl_ms"`
	Batch1TPOTms float64 `json:"batch1_tpot_ms"`
	Replayed     bool    `json:"replayed"`
	Use          string  `json:"use"`
	// AfterRule is the last numbered rule of the file's description that
	// had been judged when the row was added (0: a row from the start); a
	// rule's criterion counts only the rows it was judged on (judgedBy).
	AfterRule    int    `json:"after_rule"`
	WhyNot       string `json:"why_not"`
	Spec         string `json:"spec"`
	CatalogModel string `json:"catalog_model"`
	Quote        string `json:"quote"`
	Source       string `json:"source"`
}

// The figures a row's tpot_ms is read from (the file's rule, point 4).
var concurrencyFigures = map[string]bool{"median_tpot": true, "mean_tpot": true, "tpot": true, "latency": true}

// servingConcurrencyCase is a replayed row laid out twice through the
// planner: at its concurrency (batch) and, for the growth the plan
// gives, at one sequence (one), both at the batch-1 replay's context.
type servingConcurrencyCase struct {
	row        servingConcurrencyRow
	batch, one *plan.Replay
	// experts and perToken are the model's routed experts and the experts
	// each token routes to (0 for a dense model).
	experts, perToken int
	// routedShare is the share of one token's matrix products its routed
	// experts take (plan.ServingBatchRoutedShare; rule 7).
	routedShare float64
}

// expertsRead is how many times the routed-expert weights of one token a
// step of the case's concurrency reads, if each token picked its experts
// uniformly and independently: a layer's expected distinct experts,
// E (1 - (1 - k/E)^C), over the k of one token; 0 for a dense model. It is
// the "experts read" column of docs/accuracy.md's table and picks the MoE
// rows the expert-read rule (point 5 of the file's description) is judged
// on; the planner charges the same reads itself (costs.batchExpertReads of
// internal/plan), so this figure is the table's, not the planner's.
func (sc servingConcurrencyCase) expertsRead() float64 {
	if sc.experts <= 1 || sc.perToken <= 0 {
		return 0
	}
	e, k := float64(sc.experts), float64(sc.perToken)
	return e * (1 - math.Pow(1-k/e, float64(sc.row.Concurrency))) / k
}

// plannedMS is the per-sequence time per token the planner gives the
// case's concurrency under the constants c: the step time, batch over
// the plan's decode tokens/s; 0 when no figure.
func (sc servingConcurrencyCase) plannedMS(c calibration.Throughput) float64 {
	return stepMS(sc.batch, sc.row.Concurrency, c)
}

// plannedBatch1MS is the same setup's planned step at one sequence.
func (sc servingConcurrencyCase) plannedBatch1MS(c calibration.Throughput) float64 {
	return stepMS(sc.one, 1, c)
}

// stepMS is the step time of a replay of n sequences in ms, 0 without a
// decode figure.
func stepMS(r *plan.Replay, n int, c calibration.Throughput) float64 {
	d := r.Decode(c)
	if d <= 0 {
		return 0
	}
	return float64(n) / d * 1000
}

// loadServingConcurrency reads data/serving_concurrency.json and lays out
// its replayed rows at the batch-1 replay's context, input + output / 2
// (loadServing).
func loadServingConcurrency(dataDir string) ([]servingConcurrencyRow, []servingConcurrencyCase, error) {
	const file = "serving_concurrency.json"
	rows, err := readRows[servingConcurrencyRow](dataDir, file)
	if err != nil {
		return nil, nil, err
	}
	var cases []servingConcurrencyCase
	for _, r := range rows {
		name := fmt.Sprintf("%s / %s at concurrency %d", r.Model, r.GPU, r.Concurrency)
		if !strings.HasPrefix(r.Source, "https://") || r.TPOTms <= 0 || r.Quote == "" || r.Concurrency < 2 || !concurrencyFigures[r.Figure] {
			return nil, nil, fmt.Errorf("%s: %s: needs an https source, a quote, a concurrency above 1 and a time per token from a named figure", file, name)
		}
		if !r.Replayed {
			if err := whyNotError(file, name, r.WhyNot); err != nil {
				return nil, nil, err
			}
			continue
		}
		if r.Use != useHeldOut && r.Use != useFit || !servingEngines[r.Engine] {
			return nil, nil, fmt.Errorf("%s: %s: a replayed row is a vLLM or SGLang row, held out or (rule 6) fitting the per-sequence term", file, name)
		}
		s, ok := specs.ByName(r.Spec)
		if !ok || s.BandwidthGBs <= 0 {
			return nil, nil, fmt.Errorf("%s: %s: no datasheet bandwidth for %q", file, name, r.Spec)
		}
		m, l, err := resolveRow(file, name, r.CatalogModel, r.Precision)
		if err != nil {
			return nil, nil, err
		}
		context := r.Input + r.Output/2
		cases = append(cases, servingConcurrencyCase{row: r,
			batch: plan.NewServingBatchReplay(r.Engine, m, l, s, r.TP, r.Concurrency, context),
			one:   plan.NewServingBatchReplay(r.Engine, m, l, s, r.TP, 1, context), experts: m.Experts, perToken: m.ExpertsPerToken,
			routedShare: plan.ServingBatchRoutedShare(m)})
	}
	return rows, cases, nil
}

// judgedBy says whether rule n of the file's description counted the row:
// a row added after the rule was judged (after_rule n or above) is held
// out and replayed like any other, but cannot re-decide the rule.
func (r servingConcurrencyRow) judgedBy(n int) bool { return r.AfterRule < n }

// concurrencyErrors is the |error| of each case's planned per-sequence
// decode rate against the measured one, |measured ms / planned ms - 1|
// (the batch-1 tables' convention: tokens/s estimated over measured), and,
// where the row prints a median ITL, the same against it (itl).
func concurrencyErrors(cases []servingConcurrencyCase, c calibration.Throughput) (errs, itl []float64) {
	for _, sc := range cases {
		p := sc.plannedMS(c)
		if p <= 0 {
			continue
		}
		errs = append(errs, math.Abs(sc.row.TPOTms/p-1))
		if sc.row.MedianITLms > 0 {
			itl = append(itl, math.Abs(sc.row.MedianITLms/p-1))
		}
	}
	return errs, itl
}

// moeCases are the cases of MoE models (the rows the expert-read rule of
// the file's description, point 5, is judged on).
func moeCases(cases []servingConcurrencyCase) []servingConcurrencyCase {
	var out []servingConcurrencyCase
	for _, sc := range cases {
		if sc.expertsRead() > 0 {
			out = append(out, sc)
		}
	}
	return out
}

// concurrencySource is the publication a row's source belongs to: a GitHub
// repository, else the site (the cookbook's pages are one source).
func concurrencySource(url string) string {
	parts := strings.Split(strings.TrimPrefix(url, "https://"), "/")
	if parts[0] == "github.com" && len(parts) >= 3 {
		return strings.Join(parts[:3], "/")
	}
	return parts[0]
}

// servingConcurrencyTable is the table of docs/accuracy.md ("Serving
// engines at concurrency above 1"): every replayed row of
// data/serving_concurrency.json with the planned step under the constants
// c, the same setup's planned and measured step at one sequence, the
// growth of each, and the routed-expert reads uniform routing predicts
// (expertsRead); then the median and p90 of the error, overall, per
// engine and on the MoE rows.
func servingConcurrencyTable(cases []servingConcurrencyCase, c calibration.Throughput) string {
	var b strings.Builder
	b.WriteString("| engine | model | GPUs | C | in / out | measured ms/token (figure) | median ITL | measured at C=1 | planned step | error | planned at C=1 | growth measured | growth planned | experts read |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	sources := map[string]bool{}
	byEngine := map[string][]servingConcurrencyCase{}
	for _, sc := range cases {
		r := sc.row
		p, p1 := sc.plannedMS(c), sc.plannedBatch1MS(c)
		if p <= 0 || p1 <= 0 {
			continue
		}
		sources[concurrencySource(r.Source)] = true
		byEngine[r.Engine] = append(byEngine[r.Engine], sc)
		itl := "—"
		if r.MedianITLms > 0 {
			itl = fmt.Sprintf("%.2f", r.MedianITLms)
		}
		experts := "—"
		if x := sc.expertsRead(); x > 0 {
			experts = fmt.Sprintf("%.1f×", x)
		}
		fmt.Fprintf(&b, "| %s | %s | %d × %s, TP %d | %d | %d / %d | %.2f (%s) | %s | %.2f | %.2f | %s | %.2f | %.2f× | %.2f× | %s |\n",
			r.Engine, r.Model, r.GPUs, r.GPU, r.TP, r.Concurrency, r.Input, r.Output, r.TPOTms, r.Figure, itl, r.Batch1TPOTms,
			p, signedPct(r.TPOTms/p-1), p1, r.TPOTms/r.Batch1TPOTms, p/p1, experts)
	}
	errs, itl := concurrencyErrors(cases, c)
	fmt.Fprintf(&b, "\n%d rows of %d sources: median |error| %s, p90 %s (against the median ITL where printed, %d rows: median %s, p90 %s)",
		len(errs), len(sources), pct(quantile(errs, 0.5)), pct(quantile(errs, 0.9)), len(itl), pct(quantile(itl, 0.5)), pct(quantile(itl, 0.9)))
	for _, e := range []string{engine.NameSGLang, engine.NameVLLM} {
		ee, _ := concurrencyErrors(byEngine[e], c)
		fmt.Fprintf(&b, "; %s %d rows: median %s, p90 %s", e, len(ee), pct(quantile(ee, 0.5)), pct(quantile(ee, 0.9)))
	}
	moe, _ := concurrencyErrors(moeCases(cases), c)
	fmt.Fprintf(&b, "; MoE %d rows: median %s, p90 %s.\n", len(moe), pct(quantile(moe, 0.5)), pct(quantile(moe, 0.9)))
	return b.String()
}
