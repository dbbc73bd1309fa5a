package main

import (
	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
)

// The Metal prefill cell (calibration.Throughput.PrefillMFUMetal and
// PrefillMFUMetalQuant): the fraction of an Apple GPU's FP32 peak
// (specs.Spec.GPUFP32TFLOPS, scaled to the row's GPU cores) that a
// llama.cpp Metal prompt pass reaches. The rule, set before any Apple
// prompt row was replayed: the fractions are fitted on the May 2024
// llama-bench pp512 rows of Apple GPUs in data/inference.json (one device;
// the build era the CUDA cell's PrefillMFU is fitted on), one fraction for
// 16-bit weights and one for integer weights, each the point of a 0.002
// grid (0.020 to 1.000) minimising the median |error| over its rows (the
// first minimum wins). Every other Apple prompt row is held out and only
// scored: the 2023 ./main rows of inference.json (an older build, about
// 500-token prompts) and the pp512 rows of today's builds
// (data/apple_today.json: other chips, M1 Ultra, M4, M2 Ultra, and builds of
// Nov 2024 to 2026).

// metalPrefillFit is the fitted fractions (thousandths) and the errors of
// each set under them.
type metalPrefillFit struct {
	float, quant           int
	fit, held2023, heldNow []float64
	nFitFloat, nFitQuant   int
}

// metalPrefillSets splits the Apple GPU rows of inference.json with a
// prompt figure into the fit set (May 2024 llama-bench, one device) and the
// 2023 ./main rows.
func metalPrefillSets(all []speedCase) (fit, main2023 []speedCase) {
	for _, c := range all {
		if c.class != plan.MemoryClassUnified || !c.single() || c.row.PP <= 0 {
			continue
		}
		if c.llamaBench2024() {
			fit = append(fit, c)
		} else {
			main2023 = append(main2023, c)
		}
	}
	return fit, main2023
}

// fitMetalPrefill fits the Metal fractions (the rule above) with the other
// constants of c, and scores the held-out rows (today: the pp512 rows of
// data/apple_today.json).
func fitMetalPrefill(all, today []speedCase, c calibration.Throughput) metalPrefillFit {
	fitRows, main2023 := metalPrefillSets(all)
	var float, integer []speedCase
	for _, sc := range fitRows {
		if sc.family == plan.WeightsFloat {
			float = append(float, sc)
		} else {
			integer = append(integer, sc)
		}
	}
	f := metalPrefillFit{nFitFloat: len(float), nFitQuant: len(integer)}
	f.float = fitMMQFraction(float, c, func(t *calibration.Throughput, v float64) { t.PrefillMFUMetal = v })
	f.quant = fitMMQFraction(integer, c, func(t *calibration.Throughput, v float64) { t.PrefillMFUMetalQuant = v })
	c = f.apply(c)
	f.fit, f.held2023, f.heldNow = prefillErrors(fitRows, c), prefillErrors(main2023, c), prefillErrors(today, c)
	return f
}

// apply is c with the fitted Metal fractions.
func (f metalPrefillFit) apply(c calibration.Throughput) calibration.Throughput {
	c.PrefillMFUMetal, c.PrefillMFUMetalQuant = float64(f.float)/1000, float64(f.quant)/1000
	return c
}

// loadAppleTodayPrefill replays the pp512 figure of every row of
// data/apple_today.json with one, on its chip's record at the GPU cores the
// row states (else the record's). Every row is held out.
func loadAppleTodayPrefill(dataDir string) ([]speedCase, error) {
	rows, err := readAppleToday(dataDir)
	if err != nil {
		return nil, err
	}
	var cases []speedCase
	for _, r := range rows {
		if r.PP <= 0 {
			continue
		}
		rp, err := appleTodayReplay(r, 512)
		if err != nil {
			return nil, err
		}
		if r.GPUCores > 0 {
			rp.WithGPUCores(r.GPUCores)
		}
		cases = append(cases, speedCase{
			row:    speedRow{Hardware: r.Hardware, DeviceCount: 1, Model: r.Model, Quant: r.Quant, Prompt: 512, PP: r.PP, Source: r.Source},
			replay: rp, class: rp.MemoryClass(), family: rp.WeightFamily(),
			use: useHeldOut, label: r.Build,
		})
	}
	return cases, nil
}
