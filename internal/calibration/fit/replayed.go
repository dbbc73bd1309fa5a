package main

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/modelio"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
)

// readRows reads the "rows" of the data file file in dataDir (every data
// file but inference.json keeps them so); a file without rows is an error.
func readRows[R any](dataDir, file string) ([]R, error) {
	var doc struct {
		Rows []R `json:"rows"`
	}
	if err := readJSON(filepath.Join(dataDir, file), &doc); err != nil {
		return nil, err
	}
	if len(doc.Rows) == 0 {
		return nil, fmt.Errorf("%s: no rows", file)
	}
	return doc.Rows, nil
}

// whyNotError is the error of the row name of file, not replayed, when it
// does not say why (whyNot); nil when it does.
func whyNotError(file, name, whyNot string) error {
	if whyNot == "" {
		return fmt.Errorf("%s: %s: a row not replayed says why", file, name)
	}
	return nil
}

// resolveRow is the catalog model and quantization level that the
// replayed row name of file names.
func resolveRow(file, name, catalogModel, level string) (m *model.Model, l quant.Level, err error) {
	if m, err = modelio.Resolve(model.Spec{Name: catalogModel}); err != nil {
		return nil, l, fmt.Errorf("%s: %s: %w", file, name, err)
	}
	if l, err = quant.Parse(level); err != nil {
		return nil, l, fmt.Errorf("%s: %s: %w", file, name, err)
	}
	return m, l, nil
}

// replayedCase is a replayed row of data/serving_decode.json or
// data/offload_decode.json: the decode rate its replay estimates under c
// and the rate measured.
type replayedCase interface {
	decode(c calibration.Throughput) float64
	measured() float64
}

func (sc servingCase) decode(c calibration.Throughput) float64 { return sc.replay.Decode(c) }
func (sc servingCase) measured() float64                       { return sc.row.TokensPerS }
func (oc offloadCase) decode(c calibration.Throughput) float64 { return oc.replay.Decode(c) }
func (oc offloadCase) measured() float64                       { return oc.row.TokensPerS }

// fitErrors is how fitted constants fare: on the n fit rows and on the
// heldOut held-out rows, the median and largest |error| (the held-out ones
// 0 when none has an estimate).
type fitErrors struct {
	n, heldOut                int
	medianError, maxError     float64
	heldOutMedian, heldOutMax float64
}

// scoreFit is fitErrors of the constants c on fitCases and heldCases.
func scoreFit[C replayedCase](fitCases, heldCases []C, c calibration.Throughput) fitErrors {
	errs, held := replayErrors(fitCases, c), replayErrors(heldCases, c)
	f := fitErrors{n: len(fitCases), medianError: quantile(errs, 0.5), maxError: quantile(errs, 1), heldOut: len(heldCases)}
	if len(held) > 0 {
		f.heldOutMedian, f.heldOutMax = quantile(held, 0.5), quantile(held, 1)
	}
	return f
}

// replayErrors is |estimate/measured - 1| of every case with an estimate.
func replayErrors[C replayedCase](cases []C, c calibration.Throughput) []float64 {
	var out []float64
	for _, rc := range cases {
		if d := rc.decode(c); d > 0 {
			out = append(out, math.Abs(d/rc.measured()-1))
		}
	}
	return out
}

// byKey is cases by key, for a table that looks each of its rows' case up.
func byKey[C any](cases []C, key func(C) string) map[string]C {
	m := make(map[string]C, len(cases))
	for _, c := range cases {
		m[key(c)] = c
	}
	return m
}

// estimateCells are the estimate, error and use cells of a table row: the
// case's estimate under c where the row is replayed (ok), else what the
// row says of why not.
func estimateCells[C replayedCase](rc C, ok bool, c calibration.Throughput, whyNot, use string) (est, errText, useText string) {
	if !ok {
		return "—", "not replayed: " + whyNot, "—"
	}
	d := rc.decode(c)
	return fmt.Sprintf("%.1f", d), signedPct(d/rc.measured() - 1), strings.ReplaceAll(use, "_", "-")
}
