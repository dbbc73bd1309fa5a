package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// offloadRow is one row of data/offload_decode.json.
type offloadRow struct {
	Model         string  `json:"model"`
	GPU           string  `json:"gpu"`
	Placement     string  `json:"placement"`
	TokensPerS    float64 `json:"tokens_per_s"`
	Quote         string  `json:"quote"`
	Source        string  `json:"source"`
	RecordedBy    string  `json:"recorded_by"`
	Replayed      bool    `json:"replayed"`
	WhyNot        string  `json:"why_not"`
	Use           string  `json:"use"`
	CatalogModel  string  `json:"catalog_model"`
	Level         string  `json:"level"`
	GPULayers     int     `json:"n_gpu_layers"`
	CPUMoE        int     `json:"n_cpu_moe"`
	DecodeContext int     `json:"decode_context"`
	GPUSpec       string  `json:"gpu_spec"`
	GPUDatasheet  bool    `json:"gpu_datasheet"`
	GPUBandwidth  float64 `json:"gpu_bandwidth_gb_s"`
	GPUPCIe       float64 `json:"gpu_pcie_gb_s"`
	GPUSource     string  `json:"gpu_figures_source"`
	HostBandwidth float64 `json:"host_bandwidth_gb_s"`
	HostCores     int     `json:"host_cores"`
	HostSource    string  `json:"host_figures_source"`
	GPUOnly       bool    `json:"gpu_only"`
}

// published reports whether the row is a public measurement (its source a
// URL), not one this project recorded (recorded_by, its source a file of
// data/): the recorded rows are the H200 VM's, whose host bandwidth is its
// socket's peak, an upper bound on what the VM's 16 vCPUs get.
func (r offloadRow) published() bool { return strings.HasPrefix(r.Source, "https://") }

// offloadCase is a replayable offload row and its hand-overs per step.
type offloadCase struct {
	row       offloadRow
	replay    *plan.Replay
	handovers int
}

// loadOffload reads data/offload_decode.json: every row, and the replayed
// ones laid out on their GPU (a record built from the row's figures: the
// GPUs of these rows are consumer and workstation parts the datasheet
// table may lack) and host.
func loadOffload(dataDir string) (rows []offloadRow, cases []offloadCase, err error) {
	const file = "offload_decode.json"
	if rows, err = readRows[offloadRow](dataDir, file); err != nil {
		return nil, nil, err
	}
	for _, r := range rows {
		name := r.Model + " / " + r.GPU
		if !r.Replayed {
			if err := whyNotError(file, name, r.WhyNot); err != nil {
				return nil, nil, err
			}
			continue
		}
		if r.Use != useFit && r.Use != useHeldOut {
			return nil, nil, fmt.Errorf("offload_decode.json: %s: use is %q or %q, not %q", name, useFit, useHeldOut, r.Use)
		}
		if r.GPUBandwidth <= 0 || r.HostBandwidth <= 0 || r.HostCores <= 0 || r.GPUSource == "" || r.HostSource == "" || r.DecodeContext <= 0 {
			return nil, nil, fmt.Errorf("offload_decode.json: %s: a replayed row states its GPU and host figures with their sources and its decode context", name)
		}
		m, l, err := resolveRow(file, name, r.CatalogModel, r.Level)
		if err != nil {
			return nil, nil, err
		}
		gpu, err := offloadGPU(r)
		if err != nil {
			return nil, nil, fmt.Errorf("offload_decode.json: %s: %w", name, err)
		}
		c := offloadCase{row: r, handovers: 1,
			replay: plan.NewOffloadReplay(speedRowsEngine, m, l, gpu, r.GPUPCIe, plan.OffloadHost{BandwidthGBs: r.HostBandwidth, Cores: r.HostCores}, r.GPULayers, r.CPUMoE, r.DecodeContext)}
		if r.CPUMoE > 0 {
			c.handovers = max(0, min(r.CPUMoE, m.Layers)-max(m.DenseLayers, 0))
		}
		cases = append(cases, c)
	}
	return rows, cases, nil
}

// offloadGPU is the GPU of a replayed row: the datasheet record gpu_spec
// names where the row says so (gpu_datasheet: an HBM part such as the
// H200, whose decode fractions are not the GDDR ones), its bandwidth the
// one the row states; else a record built from the row's figures (the GPUs
// of the published rows are consumer and workstation GDDR parts the
// datasheet table may lack).
func offloadGPU(r offloadRow) (specs.Spec, error) {
	if !r.GPUDatasheet {
		return specs.Spec{Name: r.GPUSpec, Vendor: "NVIDIA", Category: specs.ConsumerGPU, Memory: specs.MemoryGDDR6, BandwidthGBs: r.GPUBandwidth}, nil
	}
	s, ok := specs.ByName(r.GPUSpec)
	if !ok {
		return specs.Spec{}, fmt.Errorf("gpu_spec %q is not a datasheet record", r.GPUSpec)
	}
	if s.BandwidthGBs != r.GPUBandwidth {
		return specs.Spec{}, fmt.Errorf("gpu_bandwidth_gb_s %g is not the record's %g", r.GPUBandwidth, s.BandwidthGBs)
	}
	return s, nil
}

// offloadFit is OffloadHandoverSeconds in microseconds and how the rows
// fare under it.
type offloadFit struct {
	handoverUS int
	fitErrors
}

// fitOffload fits calibration.Throughput.OffloadHandoverSeconds on the
// rows marked "fit", with every other constant of c as fitted: a row's
// step time is its replay's at no hand-over cost plus its hand-overs times
// the constant, so the grid (0 to 2000 us by 1 us) minimises the sum of
// squared log errors arithmetically; the first minimum wins.
func fitOffload(cases []offloadCase, c calibration.Throughput) (offloadFit, error) {
	c.OffloadHandoverSeconds = 0
	type obs struct {
		base, target float64
		handovers    int
	}
	var fitRows []obs
	var fitCases, heldCases []offloadCase
	for _, oc := range cases {
		if oc.row.Use != useFit {
			heldCases = append(heldCases, oc)
			continue
		}
		d := oc.replay.Decode(c)
		if d <= 0 {
			return offloadFit{}, fmt.Errorf("offload_decode.json: %s / %s: no estimate", oc.row.Model, oc.row.GPU)
		}
		fitRows = append(fitRows, obs{1 / d, 1 / oc.row.TokensPerS, oc.handovers})
		fitCases = append(fitCases, oc)
	}
	if len(fitRows) == 0 {
		return offloadFit{}, fmt.Errorf("offload_decode.json: no row to fit on")
	}
	best, bestLoss := offloadFit{}, math.Inf(1)
	for us := 0; us <= 2000; us++ {
		l := 0.0
		for _, o := range fitRows {
			e := math.Log(o.target / (o.base + float64(o.handovers*us)/1e6))
			l += e * e
		}
		if l < bestLoss {
			best.handoverUS, bestLoss = us, l
		}
	}
	c.OffloadHandoverSeconds = float64(best.handoverUS) / 1e6
	best.fitErrors = scoreFit(fitCases, heldCases, c)
	return best, nil
}

// offloadTable is every row of data/offload_decode.json with the model's
// estimate where replayed.
func offloadTable(r *result) string {
	c := r.throughput()
	var b strings.Builder
	b.WriteString("| model | GPU | host | placement | measured tok/s | estimate | error | use | source |\n|---|---|---|---|---|---|---|---|---|\n")
	replayed := byKey(r.offload, func(oc offloadCase) string { return offloadKey(oc.row) })
	for _, row := range r.offloadRows {
		oc, ok := replayed[offloadKey(row)]
		est, errText, use := estimateCells(oc, ok, c, row.WhyNot, row.Use)
		host := "—"
		if ok {
			host = fmt.Sprintf("%.1f GB/s, %d cores", row.HostBandwidth, row.HostCores)
		}
		// A '|' of an -ot pattern would end the cell, code span or not (GitHub's tables).
		placement := strings.ReplaceAll(row.Placement, "|", `\|`)
		fmt.Fprintf(&b, "| %s | %s | %s | `%s` | %.1f | %s | %s | %s | %s |\n", row.Model, row.GPU, host, placement, row.TokensPerS, est, errText, use, row.Source)
	}
	f := r.offloadFit
	fmt.Fprintf(&b, "\nHand-over fitted on %d rows: %d us; fit rows median |error| %s, largest %s; %d held-out rows median %s, largest %s",
		f.n, f.handoverUS, pct(f.medianError), pct(f.maxError), f.heldOut, pct(f.heldOutMedian), pct(f.heldOutMax))
	pub, own := offloadHeldOutErrors(r.offload, c)
	fmt.Fprintf(&b, " (the %d published ones median %s; the %d this project recorded on the H200 VM, whose host bandwidth is an upper bound, median %s).\n",
		len(pub), pct(quantile(pub, 0.5)), len(own), pct(quantile(own, 0.5)))
	return b.String()
}

// offloadHeldOutErrors is |estimate/measured - 1| of the held-out cases
// under c, the published rows' and the recorded ones' apart.
func offloadHeldOutErrors(cases []offloadCase, c calibration.Throughput) (published, recorded []float64) {
	for _, oc := range cases {
		if oc.row.Use != useHeldOut {
			continue
		}
		e := math.Abs(oc.replay.Decode(c)/oc.row.TokensPerS - 1)
		if oc.row.published() {
			published = append(published, e)
		} else {
			recorded = append(recorded, e)
		}
	}
	return published, recorded
}

// offloadKey identifies a row of data/offload_decode.json.
func offloadKey(r offloadRow) string { return r.Source + "|" + r.Model + "|" + r.Placement }
