package engine

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
	// SpeedServing: a serving engine's batch-1 step model, with the
	// per-step, per-layer and per-all-reduce times and the bandwidth
	// fraction fitted on vLLM's rows (calibration.Throughput.VLLM,
	// data/serving_decode.json), and the serving prompt model
	// (data/serving_prefill.json); checked by cross-validation, not
	// validated.
	SpeedServing
	// SpeedServingOwn: SpeedServing with the engine's own fitted MoE, MLA
	// and AMD constants where its rows ran (SGLang's:
	// calibration.Throughput.SGLang and SGLangROCm, HBM GPUs), the shared
	// serving ones elsewhere.
	SpeedServingOwn
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
