package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
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
// the "held_out" rows (other sources; every SGLang row) only check them.
const (
	useFit     = "fit"
	useHeldOut = "held_out"
)

// servingCase is a replayable serving row with the counts of its fixed
// costs: the step, its layers, all-reduces, MoE and MLA layers.
type servingCase struct {
	row                                      servingRow
	replay                                   *plan.Replay
	layers, allReduces, moeLayers, mlaLayers int
}

// fitted reports whether the case is one the vLLM constants are fitted on.
func (sc servingCase) fitted() bool {
	return sc.row.Engine == "vllm" && sc.row.Use == useFit
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
		c := servingCase{row: r, replay: plan.NewServingReplay(m, l, s, r.TP, r.Input+r.Output/2).OnEngine(r.Engine), layers: m.Layers}
		if r.TP > 1 {
			c.allReduces = 2 * m.Layers
		}
		if m.IsMoE() {
			c.moeLayers = m.Layers - m.DenseLayers
		}
		if m.KVLoRARank > 0 {
			c.mlaLayers = m.Layers
		}
		cases = append(cases, c)
	}
	return rows, cases, nil
}

// servingFit is the fitted vLLM overhead: the bandwidth fraction in
// hundredths, the fixed costs in microseconds, and how the constants do on
// the fit rows and on the held-out vLLM rows.
type servingFit struct {
	fractionPct                                int
	stepUS, layerUS, allReduceUS, moeUS, mlaUS int
	fitErrors
}

func (f servingFit) decode() calibration.ServingDecode {
	return calibration.ServingDecode{BandwidthFraction: float64(f.fractionPct) / 100,
		StepSeconds: float64(f.stepUS) / 1e6, LayerSeconds: float64(f.layerUS) / 1e6,
		AllReduceSeconds: float64(f.allReduceUS) / 1e6, MoELayerSeconds: float64(f.moeUS) / 1e6,
		MLALayerSeconds: float64(f.mlaUS) / 1e6}
}

// fitServing fits calibration.Throughput.VLLM on the vLLM rows marked
// "fit": a step is the weight and KV stream at the fraction f of the
// datasheet bandwidth plus the five fixed costs times their counts. Each
// row's stream time at f = 1 is computed once by the planner (its
// replay), so a grid point's loss, the sum of squared log errors, is
// arithmetic. The grid is searched coarse (f 0.50-1.00 by 0.02, step
// 0-2000 us by 250, layer 0-200 by 10, all-reduce 0-60 by 10, MoE layer
// 0-300 by 25, MLA layer 0-1000 by 50), then fine within one coarse step of
// the best point (f by 0.01, step by 50, layer, all-reduce by 2, MoE by 5,
// MLA by 10 us); the first minimum wins.
func fitServing(cases []servingCase, c calibration.Throughput) (servingFit, error) {
	type obs struct {
		sc             servingCase
		stream, target float64
	}
	var fitRows []obs
	unit := c
	unit.VLLM = calibration.ServingDecode{BandwidthFraction: 1}
	for _, sc := range cases {
		if !sc.fitted() {
			continue
		}
		d := sc.replay.Decode(unit)
		if d <= 0 {
			return servingFit{}, fmt.Errorf("serving_decode.json: %s / %s: no estimate", sc.row.Model, sc.row.GPU)
		}
		fitRows = append(fitRows, obs{sc, 1 / d, 1 / sc.row.TokensPerS})
	}
	if len(fitRows) == 0 {
		return servingFit{}, fmt.Errorf("serving_decode.json: no vLLM row to fit on")
	}
	loss := func(f servingFit) float64 {
		l := 0.0
		for _, o := range fitRows {
			sc := o.sc
			t := o.stream*100/float64(f.fractionPct) + float64(f.stepUS+f.layerUS*sc.layers+f.allReduceUS*sc.allReduces+
				f.moeUS*sc.moeLayers+f.mlaUS*sc.mlaLayers)/1e6
			e := math.Log(o.target / t)
			l += e * e
		}
		return l
	}
	coarse := servingGrid{fraction: [3]int{50, 100, 2}, step: [3]int{0, 2000, 250}, layer: [3]int{0, 200, 10},
		allReduce: [3]int{0, 60, 10}, moe: [3]int{0, 300, 25}, mla: [3]int{0, 1000, 50}}
	best := coarse.search(loss)
	fine := servingGrid{
		fraction:  around(best.fractionPct, coarse.fraction, 1),
		step:      around(best.stepUS, coarse.step, 50),
		layer:     around(best.layerUS, coarse.layer, 2),
		allReduce: around(best.allReduceUS, coarse.allReduce, 2),
		moe:       around(best.moeUS, coarse.moe, 5),
		mla:       around(best.mlaUS, coarse.mla, 10),
	}
	best = fine.search(loss)
	c.VLLM = best.decode()
	var fitCases, heldCases []servingCase
	for _, sc := range cases {
		switch {
		case sc.fitted():
			fitCases = append(fitCases, sc)
		case sc.row.Engine == "vllm":
			heldCases = append(heldCases, sc)
		}
	}
	best.fitErrors = scoreFit(fitCases, heldCases, c)
	return best, nil
}

// around is the fine range of one constant: within one coarse step of v,
// clipped to the coarse range, by step.
func around(v int, coarse [3]int, step int) [3]int {
	return [3]int{max(coarse[0], v-coarse[2]), min(coarse[1], v+coarse[2]), step}
}

// servingGrid is a grid of the six constants: from, to, step (hundredths
// for the fraction, us for the rest).
type servingGrid struct{ fraction, step, layer, allReduce, moe, mla [3]int }

// search is the grid point of least loss (the first one on ties).
func (g servingGrid) search(loss func(servingFit) float64) servingFit {
	best, bestLoss := servingFit{}, math.Inf(1)
	for f := g.fraction[0]; f <= g.fraction[1]; f += g.fraction[2] {
		for s := g.step[0]; s <= g.step[1]; s += g.step[2] {
			for l := g.layer[0]; l <= g.layer[1]; l += g.layer[2] {
				for a := g.allReduce[0]; a <= g.allReduce[1]; a += g.allReduce[2] {
					for m := g.moe[0]; m <= g.moe[1]; m += g.moe[2] {
						for x := g.mla[0]; x <= g.mla[1]; x += g.mla[2] {
							p := servingFit{fractionPct: f, stepUS: s, layerUS: l, allReduceUS: a, moeUS: m, mlaUS: x}
							if v := loss(p); v < bestLoss {
								best, bestLoss = p, v
							}
						}
					}
				}
			}
		}
	}
	return best
}

// servingTable is every row of data/serving_decode.json with the model's
// estimate where replayed and the row's use (fit or held out).
func servingTable(r *result) string {
	c := r.throughput()
	var b strings.Builder
	b.WriteString("| engine | version | model | precision | GPUs | measured tok/s | estimate | error | use | source |\n|---|---|---|---|---|---|---|---|---|---|\n")
	replayed := byKey(r.serving, func(sc servingCase) string { return servingKey(sc.row) })
	for _, row := range r.servingRows {
		sc, ok := replayed[servingKey(row)]
		est, errText, use := estimateCells(sc, ok, c, row.WhyNot, row.Use)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d × %s, TP %d | %.1f | %s | %s | %s | %s |\n", row.Engine, row.Version, row.Model, row.Precision,
			row.GPUs, row.GPU, row.TP, row.TokensPerS, est, errText, use, row.Source)
	}
	f := r.servingFit
	fmt.Fprintf(&b, "\nvLLM constants fitted on %d rows: weights and KV cache at %s of the datasheet bandwidth, %d us per step, %d us per layer, %d us per all-reduce, %d us per MoE layer, %d us per MLA layer; fit rows median |error| %s, largest %s; %d held-out vLLM rows median %s, largest %s; %d of %d replayed rows within 25 %%.\n",
		f.n, pct(float64(f.fractionPct)/100), f.stepUS, f.layerUS, f.allReduceUS, f.moeUS, f.mlaUS, pct(f.medianError), pct(f.maxError),
		f.heldOut, pct(f.heldOutMedian), pct(f.heldOutMax), servingWithin(r.serving, c, 0.25), len(r.serving))
	b.WriteString("\n" + sglangSummary(r.sglangFit))
	return b.String()
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
