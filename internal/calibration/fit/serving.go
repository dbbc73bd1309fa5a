package main

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/modelio"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
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
	WhyNot       string  `json:"why_not"`
	Spec         string  `json:"spec"`
	CatalogModel string  `json:"catalog_model"`
	Quote        string  `json:"quote"`
	Source       string  `json:"source"`
}

// servingCase is a replayable serving row with the counts of its fixed
// costs: the step, its layers, all-reduces and MoE layers.
type servingCase struct {
	row                           servingRow
	replay                        *plan.Replay
	layers, allReduces, moeLayers int
}

// loadServing reads data/serving_decode.json: every row, and the replayed
// ones laid out.
func loadServing(dataDir string) (rows []servingRow, cases []servingCase, err error) {
	var doc struct {
		Rows []servingRow `json:"rows"`
	}
	if err := readJSON(filepath.Join(dataDir, "serving_decode.json"), &doc); err != nil {
		return nil, nil, err
	}
	for _, r := range doc.Rows {
		name := r.Model + " / " + r.GPU
		if !strings.HasPrefix(r.Source, "https://") || r.TokensPerS <= 0 || r.Quote == "" {
			return nil, nil, fmt.Errorf("serving_decode.json: %s: needs an https source, a quote and a speed", name)
		}
		if !r.Replayed {
			if r.WhyNot == "" {
				return nil, nil, fmt.Errorf("serving_decode.json: %s: a row not replayed says why", name)
			}
			continue
		}
		s, ok := specs.ByName(r.Spec)
		if !ok || s.BandwidthGBs <= 0 {
			return nil, nil, fmt.Errorf("serving_decode.json: %s: no datasheet bandwidth for %q", name, r.Spec)
		}
		m, err := modelio.Resolve(model.Spec{Name: r.CatalogModel})
		if err != nil {
			return nil, nil, fmt.Errorf("serving_decode.json: %s: %w", name, err)
		}
		l, err := quant.Parse(r.Precision)
		if err != nil {
			return nil, nil, fmt.Errorf("serving_decode.json: %s: %w", name, err)
		}
		c := servingCase{row: r, replay: plan.NewServingReplay(m, l, s, r.TP, r.Input+r.Output/2), layers: m.Layers}
		if r.TP > 1 {
			c.allReduces = 2 * m.Layers
		}
		if m.IsMoE() {
			c.moeLayers = m.Layers - m.DenseLayers
		}
		cases = append(cases, c)
	}
	return doc.Rows, cases, nil
}

// servingFit is the fitted vLLM overhead, in microseconds.
type servingFit struct {
	stepUS, layerUS, allReduceUS, moeUS int
	n                                   int
	medianError, maxError               float64
}

func (f servingFit) decode() calibration.ServingDecode {
	return calibration.ServingDecode{StepSeconds: float64(f.stepUS) / 1e6, LayerSeconds: float64(f.layerUS) / 1e6,
		AllReduceSeconds: float64(f.allReduceUS) / 1e6, MoELayerSeconds: float64(f.moeUS) / 1e6}
}

// fitServing fits calibration.Throughput.VLLM on the replayed vLLM rows:
// the step time is the weight and KV stream (the llama.cpp-fitted fractions,
// c) plus the four fixed costs times their counts, so each row's error is
// computed from its stream time and counts; a grid (step 0-3000 us,
// layer 0-200, all-reduce 0-60, MoE layer 0-400; coarse, then by 50, 2, 2
// and 5 us around the coarse best) minimises the sum of squared log errors.
func fitServing(cases []servingCase, c calibration.Throughput) (servingFit, error) {
	type obs struct{ stream, target float64 }
	var rows []servingCase
	var os []obs
	c.VLLM = calibration.ServingDecode{}
	for _, sc := range cases {
		if sc.row.Engine != "vllm" {
			continue
		}
		d := sc.replay.Decode(c)
		if d <= 0 {
			return servingFit{}, fmt.Errorf("serving_decode.json: %s / %s: no estimate", sc.row.Model, sc.row.GPU)
		}
		rows = append(rows, sc)
		os = append(os, obs{1 / d, 1 / sc.row.TokensPerS})
	}
	if len(rows) == 0 {
		return servingFit{}, fmt.Errorf("serving_decode.json: no replayed vLLM row")
	}
	loss := func(f servingFit) float64 {
		l := 0.0
		for i, sc := range rows {
			t := os[i].stream + float64(f.stepUS+f.layerUS*sc.layers+f.allReduceUS*sc.allReduces+f.moeUS*sc.moeLayers)/1e6
			e := math.Log(os[i].target / t)
			l += e * e
		}
		return l
	}
	// A coarse pass over the whole grid, then the fine grid within one
	// coarse step of its best point.
	coarse := servingGrid{step: [3]int{0, 3000, 200}, layer: [3]int{0, 200, 10}, allReduce: [3]int{0, 60, 10}, moe: [3]int{0, 400, 25}}
	best := coarse.search(loss)
	fine := servingGrid{
		step:      [3]int{max(0, best.stepUS-200), min(3000, best.stepUS+200), 50},
		layer:     [3]int{max(0, best.layerUS-10), min(200, best.layerUS+10), 2},
		allReduce: [3]int{max(0, best.allReduceUS-10), min(60, best.allReduceUS+10), 2},
		moe:       [3]int{max(0, best.moeUS-25), min(400, best.moeUS+25), 5},
	}
	best = fine.search(loss)
	c.VLLM = best.decode()
	errs := servingErrors(rows, c)
	best.n, best.medianError, best.maxError = len(rows), quantile(errs, 0.5), quantile(errs, 1)
	return best, nil
}

// servingGrid is a grid of the four constants: from, to, step in us.
type servingGrid struct{ step, layer, allReduce, moe [3]int }

// search is the grid point of least loss (the first one on ties).
func (g servingGrid) search(loss func(servingFit) float64) servingFit {
	best, bestLoss := servingFit{}, math.Inf(1)
	for s := g.step[0]; s <= g.step[1]; s += g.step[2] {
		for l := g.layer[0]; l <= g.layer[1]; l += g.layer[2] {
			for a := g.allReduce[0]; a <= g.allReduce[1]; a += g.allReduce[2] {
				for m := g.moe[0]; m <= g.moe[1]; m += g.moe[2] {
					f := servingFit{stepUS: s, layerUS: l, allReduceUS: a, moeUS: m}
					if v := loss(f); v < bestLoss {
						best, bestLoss = f, v
					}
				}
			}
		}
	}
	return best
}

// servingErrors is |estimate/measured - 1| of every case.
func servingErrors(cases []servingCase, c calibration.Throughput) []float64 {
	var out []float64
	for _, sc := range cases {
		if d := sc.replay.Decode(c); d > 0 {
			out = append(out, math.Abs(d/sc.row.TokensPerS-1))
		}
	}
	return out
}

// servingTable is every row of data/serving_decode.json with the model's
// estimate where replayed.
func servingTable(r *result) string {
	c := r.throughput()
	var b strings.Builder
	b.WriteString("| engine | version | model | precision | GPUs | measured tok/s | estimate | error | source |\n|---|---|---|---|---|---|---|---|---|\n")
	replayed := map[string]servingCase{}
	for _, sc := range r.serving {
		replayed[sc.row.Source+sc.row.Engine+sc.row.Model] = sc
	}
	for _, row := range r.servingRows {
		est, errText := "—", "not replayed: "+row.WhyNot
		if sc, ok := replayed[row.Source+row.Engine+row.Model]; ok {
			d := sc.replay.Decode(c)
			est, errText = fmt.Sprintf("%.1f", d), signedPct(d/row.TokensPerS-1)
			if row.Engine != "vllm" {
				errText += " (vLLM's constants; SGLang has none fitted)"
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d × %s, TP %d | %.1f | %s | %s | %s |\n", row.Engine, row.Version, row.Model, row.Precision,
			row.GPUs, row.GPU, row.TP, row.TokensPerS, est, errText, row.Source)
	}
	f := r.servingFit
	fmt.Fprintf(&b, "\nvLLM constants fitted on %d rows: %d us per step, %d us per layer, %d us per all-reduce, %d us per MoE layer; median |error| %s, largest %s.\n",
		f.n, f.stepUS, f.layerUS, f.allReduceUS, f.moeUS, pct(f.medianError), pct(f.maxError))
	return b.String()
}
