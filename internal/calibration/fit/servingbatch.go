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
// ServingBatchMFU; rule 6 of data/serving_concurrency.json): fitted on
// the rows marked "fit" (the MI300X benchmark_latency rows), judged on
// the held-out rest against the same replay without it.
type servingBatchFit struct {
	layerCentiUS int // ServingBatchLayerSeconds in hundredths of a microsecond
	mfuPercent   int // ServingBatchMFU in hundredths
	// fit and held are the cases of each kind.
	fit, held []servingConcurrencyCase
}

// Grids of the fit (rule 6): the time per layer per sequence 0 to 5 µs
// by 0.01 µs, the efficiency 1 % to 100 % by 1 %.
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

// constants is c with the fitted term.
func (f servingBatchFit) constants(c calibration.Throughput) calibration.Throughput {
	return withServingBatch(c, f.layerCentiUS, f.mfuPercent)
}

// linearStep is a case's planned step as the term's two constants move:
// base + perUS × t (µs) + atFullPeak / mfu (ms). The term is linear in t
// and in 1 / mfu, so three replays of a case give every point of the grid.
type linearStep struct {
	measured, base, perUS, atFullPeak float64
}

func (l linearStep) planned(centiUS, percent int) float64 {
	return l.base + l.perUS*float64(centiUS)/100 + l.atFullPeak*100/float64(percent)
}

// fitServingBatch fits the term on the cases marked "fit" under the
// constants c (their own term left out): least squares of
// log(planned / measured) over the grids.
func fitServingBatch(cases []servingConcurrencyCase, c calibration.Throughput) (servingBatchFit, error) {
	var f servingBatchFit
	for _, sc := range cases {
		if sc.row.Use == useFit {
			f.fit = append(f.fit, sc)
		} else {
			f.held = append(f.held, sc)
		}
	}
	if len(f.fit) == 0 {
		return f, fmt.Errorf("serving_concurrency.json: no fit rows for the batch term (rule 6)")
	}
	none := withServingBatch(c, 0, 0)
	var steps []linearStep
	for _, sc := range f.fit {
		base := sc.plannedMS(none)
		perUS := sc.plannedMS(withServingBatch(c, 100, 0)) - base
		full := sc.plannedMS(withServingBatch(c, 0, 100)) - base
		if base <= 0 {
			return f, fmt.Errorf("serving_concurrency.json: %s at %d: no decode figure", sc.row.Model, sc.row.Concurrency)
		}
		steps = append(steps, linearStep{measured: sc.row.TPOTms, base: base, perUS: perUS, atFullPeak: full})
	}
	best := math.Inf(1)
	for t := 0; t <= servingBatchMaxCentiUS; t++ {
		for p := 1; p <= servingBatchMaxPercent; p++ {
			var sum float64
			for _, s := range steps {
				e := math.Log(s.planned(t, p) / s.measured)
				sum += e * e
			}
			if sum < best-1e-12 {
				best, f.layerCentiUS, f.mfuPercent = sum, t, p
			}
		}
	}
	return f, nil
}

// servingBatchErrors is the median and p90 of |error| of the cases under
// c.
func servingBatchErrors(cases []servingConcurrencyCase, c calibration.Throughput) (median, p90 float64) {
	errs, _ := concurrencyErrors(cases, c)
	return quantile(errs, 0.5), quantile(errs, 0.9)
}

// servingBatchOutcome is the line of docs/accuracy.md that says what the
// term gives on the fit and the held-out rows, without it and with it
// (under c, whose own term is replaced).
func servingBatchOutcome(f servingBatchFit, c calibration.Throughput) string {
	none, with := withServingBatch(c, 0, 0), f.constants(c)
	fm0, fp0 := servingBatchErrors(f.fit, none)
	fm1, fp1 := servingBatchErrors(f.fit, with)
	hm0, hp0 := servingBatchErrors(f.held, none)
	hm1, hp1 := servingBatchErrors(f.held, with)
	var b strings.Builder
	fmt.Fprintf(&b, "Rule 6 (per-sequence term): %.2f µs per layer and %d %% of the dense peak, fitted on %d rows (median %s, p90 %s without the term; %s, %s with it); the %d held-out rows: median %s, p90 %s without it, %s, %s with it",
		float64(f.layerCentiUS)/100, f.mfuPercent, len(f.fit), pct(fm0), pct(fp0), pct(fm1), pct(fp1), len(f.held), pct(hm0), pct(hp0), pct(hm1), pct(hp1))
	for _, e := range []string{engine.NameVLLM, engine.NameSGLang} {
		var rows []servingConcurrencyCase
		for _, sc := range f.held {
			if sc.row.Engine == e {
				rows = append(rows, sc)
			}
		}
		m0, p0 := servingBatchErrors(rows, none)
		m1, p1 := servingBatchErrors(rows, with)
		fmt.Fprintf(&b, "; held-out %s %d rows: median %s, p90 %s without, %s, %s with", e, len(rows), pct(m0), pct(p0), pct(m1), pct(p1))
	}
	b.WriteString(".\n")
	return b.String()
}

// servingBatchSecondsLiteral is ServingBatchLayerSeconds as the generated
// file writes it: hundredths of a microsecond, "0.77e-6".
func servingBatchSecondsLiteral(centiUS int) string {
	return hundredths(centiUS) + "e-6"
}
