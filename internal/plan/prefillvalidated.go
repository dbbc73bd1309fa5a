package plan

import (
	"fmt"

	"github.com/ai-hwaccel/ai-hwaccel/internal/engine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// PrefillBound is the median |error| a held-out set of prompt rows must
// meet for a prefill figure of its cell to be validated: issue 22's
// "prefill within 20 % at the median".
const PrefillBound = 0.20

// Measured sets of prompt rows whose held-out rows can vouch for a plan's
// prefill figure (PrefillCell.Set): today's llama.cpp CUDA build
// (internal/calibration/data/prefill_today.json), llama.cpp's Metal
// backend in today's builds (data/apple_today.json), and llama.cpp on a
// CPU (data/host_harness.json). Each is named by its backend and build;
// prose puts the engine whose runs they are before it where that engine
// names the rows as its own (speedRows: "llama.cpp Metal").
const (
	PrefillSetCUDAToday = "CUDA, today's build"
	PrefillSetMetal     = "Metal"
	PrefillSetHost      = "CPU"
)

// Device classes of PrefillCell.Class besides today's CUDA architectures
// (archAda, …): Apple GPUs under Metal, and x86 CPUs.
const (
	prefillClassApple = "apple"
	prefillClassX86   = "x86"
)

// PrefillCell is the cell whose constants a prefill figure takes: the
// measured set (engine, backend and build), the device class (a CUDA
// architecture, Apple GPUs, x86 CPUs) and the weight family (weightFamily).
type PrefillCell struct {
	Set, Class, Family string
}

// PrefillCheck is what a cell's held-out prompt rows give under the
// shipped constants: how many rows, and their median |estimate/measured - 1|
// rounded to 0.001.
type PrefillCheck struct {
	Rows   int
	Median float64
}

// PrefillHeldOut is the held-out check of every cell that has held-out
// prompt rows: the held-out pp512 rows of prefill_today.json, the pp512
// records of h200-speed-34af94cd (an H200, llama.cpp 34af94cd; read at
// llama-bench's avg_ts, as the fitted h200-speed records are), the pp512
// rows of today's builds in apple_today.json, and the held_out rows of
// host_harness.json, each keyed by the cell its replay falls in
// (Replay.PrefillCell). TestPrefillHeldOutQuotesTheReplays
// (internal/calibration/fit) recomputes it from those rows and the shipped
// constants; a cell absent here has no held-out row.
var PrefillHeldOut = map[PrefillCell]PrefillCheck{
	{PrefillSetCUDAToday, archAda, WeightsKQuant}:           {Rows: 5, Median: 0.060},
	{PrefillSetCUDAToday, archAmpere, WeightsKQuant}:        {Rows: 3, Median: 0.107},
	{PrefillSetCUDAToday, archBlackwellGDDR, WeightsKQuant}: {Rows: 3, Median: 0.077},
	{PrefillSetCUDAToday, archHopper, WeightsFloat}:         {Rows: 3, Median: 0.133},
	{PrefillSetCUDAToday, archHopper, WeightsKQuant}:        {Rows: 2, Median: 0.071},
	{PrefillSetCUDAToday, archHopper, WeightsQ8}:            {Rows: 2, Median: 0.031},
	{PrefillSetMetal, prefillClassApple, WeightsFloat}:      {Rows: 1, Median: 0.050},
	{PrefillSetMetal, prefillClassApple, WeightsKQuant}:     {Rows: 6, Median: 0.187},
	{PrefillSetHost, prefillClassX86, WeightsFloat}:         {Rows: 1, Median: 0.061},
	{PrefillSetHost, prefillClassX86, WeightsQ8}:            {Rows: 1, Median: 0.001},
	{PrefillSetHost, prefillClassX86, WeightsKQuant}:        {Rows: 2, Median: 0.073},
}

// prefillSetRows names, per measured set, the rows its held-out checks are
// of (docs/accuracy.md has their tables), after the engine's name
// (heldOutRowsOf).
var prefillSetRows = map[string]string{
	PrefillSetCUDAToday: "CUDA scoreboard pp512 rows of internal/calibration/data/prefill_today.json (docs/accuracy.md, \"Prefill by architecture\")",
	PrefillSetMetal:     "Metal pp512 rows of today's builds in internal/calibration/data/apple_today.json (docs/accuracy.md, \"Prefill on Apple GPUs\")",
	PrefillSetHost:      "CPU harness rows of internal/calibration/data/host_harness.json (docs/accuracy.md, CPU prefill)",
}

// prefillClassRows names, for a device class whose held-out rows are not
// its set's (prefillSetRows), the rows they are, after their build
// (heldOutRowsOf).
var prefillClassRows = map[string]string{
	archHopper: "pp512 records of an NVIDIA H200 in internal/calibration/data/h200-speed-" + h200Build + " (docs/accuracy.md, \"Fit set and held-out set\")",
}

// heldOutRowsOf names the held-out rows of cell in the words of rows.
func heldOutRowsOf(rows speedRows, cell PrefillCell) string {
	if r, ok := prefillClassRows[cell.Class]; ok && cell.Set == PrefillSetCUDAToday {
		if b := rows.build(h200Build); b != "" {
			return b + " " + r
		}
		return r
	}
	return rows.engine + prefillSetRows[cell.Set]
}

// prefillClassNames names the device classes of the cells.
var prefillClassNames = map[string]string{
	archAda:           "NVIDIA Ada GPUs (compute capability 8.9)",
	archAmpere:        "NVIDIA Ampere GA10x GPUs (8.6)",
	archBlackwellGDDR: "NVIDIA GeForce Blackwell GPUs (12.0)",
	archGA100:         "NVIDIA GA100 GPUs (8.0: A100, A30)",
	archHopper:        "NVIDIA Hopper GPUs (9.x)",
	prefillClassApple: "Apple GPUs",
	prefillClassX86:   "x86 CPUs (the rows: one AMD EPYC Zen 5 vCPU, one thread)",
}

// prefillNoHeldOut says, for a cell whose constants are fitted but that
// has no held-out row, what they rest on.
var prefillNoHeldOut = map[PrefillCell]string{
	{PrefillSetCUDAToday, archGA100, WeightsKQuant}: "the GA100 fraction is fitted on one A30 row and no A100 row of today's build checks it",
}

// prefillValidatedOn says which held-out prompt rows vouch for a plan's
// prefill figure, or, beginning with NotValidated, why none do: a cell
// (prefillCellOf) is validated only where its held-out rows meet
// PrefillBound at the median (PrefillHeldOut).
func prefillValidatedOn(pl *planned, req *planning) string {
	cell, why := prefillCellOf(pl, req)
	if why != "" {
		return NotValidated + ": " + why
	}
	rows := speedRowsOf(planEngine(pl, req))
	check, ok := PrefillHeldOut[cell]
	what := fmt.Sprintf("%s weights on %s under %s%s", cell.Family, prefillClassNames[cell.Class], rows.engine, cell.Set)
	switch {
	case !ok && prefillNoHeldOut[cell] != "":
		return fmt.Sprintf("%s: no held-out prompt row of %s: %s", NotValidated, what, prefillNoHeldOut[cell])
	case !ok:
		return fmt.Sprintf("%s: no held-out prompt row of %s", NotValidated, what)
	case check.Median > PrefillBound:
		return fmt.Sprintf("%s: %s: the %s of %s miss by %.1f%% at the median, past the %.0f%% a validated prefill figure meets",
			NotValidated, what, heldOutRows(check.Rows), heldOutRowsOf(rows, cell), 100*check.Median, 100*PrefillBound)
	}
	return fmt.Sprintf("%s: %s, %s weights; %s, median |error| %.1f%% (within %.0f%%)",
		heldOutRowsOf(rows, cell), prefillClassNames[cell.Class], cell.Family, heldOutRows(check.Rows), 100*check.Median, 100*PrefillBound)
}

// heldOutRows is "n held-out row(s)" in words.
func heldOutRows(n int) string {
	if n == 1 {
		return "1 held-out row"
	}
	return fmt.Sprintf("%d held-out rows", n)
}

// prefillCellOf is the cell whose constants a plan's prefill takes, or why
// no cell's rows can vouch for it: the prompt rows are llama.cpp runs of one
// prompt on one device, so another engine, offloaded layers, tensor
// parallelism, a split over several devices, an Apple CPU and a GPU that
// takes the May 2024 build's constants (no row of today's build measures
// its architecture) have none.
func prefillCellOf(pl *planned, req *planning) (PrefillCell, string) {
	e := planEngine(pl, req)
	speed := engine.SpeedModelOf(e)
	if fit := servingFitOf(e); fit != "" && efficiency(fitted).servingUsed(e, pl) {
		return PrefillCell{}, fit.PromptNotValidatedWhy(PrefillBound)
	}
	if speed != engine.SpeedKernels {
		return PrefillCell{}, fmt.Sprintf("the prompt model is fitted on %s; no %s prompt measurement checks it", fittedOn(), orUnspecified(e))
	}
	if pl.Offloaded || pl.AllExpertsOnHost || pl.moeOffload() {
		return PrefillCell{}, "part of the model runs from host memory, which no prompt row measures"
	}
	if len(pl.Stages) == 0 {
		return PrefillCell{}, "no stage"
	}
	for _, s := range pl.Stages {
		if len(s.Devices) > 1 {
			return PrefillCell{}, "tensor parallelism, which no prompt row measures"
		}
	}
	if len(pl.Stages) > 1 {
		return PrefillCell{}, "the prompt rows of the builds plans take are of one device each; none splits the layers over several (the May 2024 layer-split rows are of an older build)"
	}
	devs := pl.Stages[0].Devices
	d := devs[0]
	family := weightFamily(pl.Level)
	switch {
	case d.Dev.Kind == registry.KindCPU && appleCPU(d):
		return PrefillCell{}, "the CPU prompt rows are of an x86 CPU, none of an Apple SoC's CPU"
	case d.Dev.Kind == registry.KindCPU:
		return PrefillCell{PrefillSetHost, prefillClassX86, family}, ""
	case appleGPU(d):
		return PrefillCell{PrefillSetMetal, prefillClassApple, family}, ""
	}
	path := efficiency(fitted).requestPrefillPath(devs, pl, req)
	if !path.TodaysBuild {
		return PrefillCell{}, "no prompt row of today's " + speedRowsOf(e).engine + "build measures this GPU's architecture; the May 2024 build's constants, fitted on NVIDIA rows, are applied"
	}
	return PrefillCell{PrefillSetCUDAToday, path.Arch, family}, ""
}

// PrefillCell is the cell the replayed prompt falls in (prefillCellOf) and
// true, or false when the replay has no prompt or no cell vouches for it.
func (r *Replay) PrefillCell() (PrefillCell, bool) {
	if r.prefillPlan == nil {
		return PrefillCell{}, false
	}
	c, why := prefillCellOf(r.prefillPlan, r.prefillReq)
	return c, why == ""
}
