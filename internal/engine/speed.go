package engine

import "github.com/ai-hwaccel/ai-hwaccel/internal/calibration"

// SpeedModel is which of the planner's fitted speed models an engine's
// plans are estimated and checked with. The models' constants are fitted
// on published runs of particular engines (internal/calibration/data), so
// an engine takes the model whose runs were its own.
type SpeedModel int

// Speed models; the zero value is an engine no rows measured.
const (
	// SpeedUnmeasured: no rows ran the engine; its plans take the
	// planner's generic per-layer figures and are not validated (Base,
	// none).
	SpeedUnmeasured SpeedModel = iota
	// SpeedKernels: the engine whose runs the speed rows of
	// internal/calibration/data measured (llama.cpp's): its prompt passes
	// run the kernels those rows ran (MMQ, cuBLAS), its plans on a CPU
	// take the per-core rates fitted on its CPU backend (so auto may pick
	// a level by speed there), and a plan is validated where rows of its
	// device class and weight family exist.
	SpeedKernels
	// SpeedServing: a serving engine's batch-1 step model (per-step,
	// per-layer and per-all-reduce times and a bandwidth fraction) and the
	// serving prompt model (data/serving_prefill.json), with the constants
	// of the calibration set the engine names as its own (ServingFitted:
	// vLLM's rows, SGLang's); an engine that names none pays no engine's
	// constants and takes the generic per-layer figures, not validated.
	SpeedServing
)

// SpeedModeled is implemented by an engine whose plans take one of the
// fitted speed models (SpeedModelOf).
type SpeedModeled interface {
	// SpeedModel is the engine's speed model.
	SpeedModel() SpeedModel
}

// SpeedModelOf is e's speed model: SpeedUnmeasured for an engine that
// does not implement SpeedModeled, and for nil.
func SpeedModelOf(e Engine) SpeedModel {
	if s, ok := e.(SpeedModeled); ok {
		return s.SpeedModel()
	}
	return SpeedUnmeasured
}

// ServingFitted is implemented by a serving engine whose batch-1 decode
// constants were fitted on its own published runs: it names that
// calibration set, so its plans pay its constants and speak of its rows,
// never another engine's.
type ServingFitted interface {
	// ServingFit is the calibration set fitted on the engine's runs.
	ServingFit() calibration.ServingFit
}

// ServingFitOf is the calibration set e names (ServingFitted), "" for an
// engine that names none and for nil.
func ServingFitOf(e Engine) calibration.ServingFit {
	if f, ok := e.(ServingFitted); ok {
		return f.ServingFit()
	}
	return ""
}

// SpeedRowsNamer is implemented by the engine whose runs the speed rows of
// internal/calibration/data are (SpeedKernels: llama.cpp's): it names them
// in its own words, by its title and the settings they ran with. A plan of
// that engine speaks of the rows that check it in those words; a plan of
// an engine whose runs no row measured names it (SpeedRowsEngine) as what
// the figures it borrows are fitted on. An engine that declares
// SpeedKernels without naming the rows has them named by what they
// measured, never in another engine's words.
type SpeedRowsNamer interface {
	// SpeedRows names the speed rows by the settings they ran with.
	SpeedRows() SpeedRows
}

// SpeedRows are an engine's names for the settings its speed rows ran
// with where they kept part of the model in host memory
// (internal/calibration/data/offload_decode.json), as its command writes
// them.
type SpeedRows struct {
	// ExpertsOnHost is the setting of the rows that run the routed
	// experts of the first layers on the CPU ("--n-cpu-moe").
	ExpertsOnHost string
	// LayersOnHost is the setting of the rows that run whole layers on
	// the CPU ("-ngl").
	LayersOnHost string
	// PartOfLayerExperts is the setting that keeps part of one layer's
	// experts on the CPU, which no row ran ("-ot").
	PartOfLayerExperts string
}

// SpeedRowsOf is e's SpeedRowsNamer answer; false for an engine that does
// not name the speed rows, and for nil.
func SpeedRowsOf(e Engine) (SpeedRows, bool) {
	if n, ok := e.(SpeedRowsNamer); ok {
		return n.SpeedRows(), true
	}
	return SpeedRows{}, false
}

// SpeedRowsEngine is the first registered engine that names the speed
// rows as its runs (SpeedKernels and SpeedRowsNamer), nil when none is
// registered.
func SpeedRowsEngine() Engine {
	for _, e := range All() {
		if _, ok := SpeedRowsOf(e); ok && SpeedModelOf(e) == SpeedKernels {
			return e
		}
	}
	return nil
}
