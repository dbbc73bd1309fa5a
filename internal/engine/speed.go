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
