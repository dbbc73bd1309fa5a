package calibration

// ServingFit names a serving engine's fitted batch-1 decode set: the rows
// of data/serving_decode.json its constants were fitted on (fit/), and so
// which of Throughput's sets a plan for the engine pays. An engine names
// its own (engine.ServingFitted); one no rows were fitted on names none,
// and its plans pay no engine's constants: a figure fitted on one engine's
// runs is not shown for another's.
type ServingFit string

const (
	// ServingFitVLLM: vLLM's batch-1 rows (Throughput.VLLM).
	ServingFitVLLM ServingFit = "vllm"
	// ServingFitSGLang: SGLang's batch-1 rows (Throughput.SGLang and
	// SGLangROCm on HBM GPUs, where they ran; Throughput.VLLM elsewhere,
	// internal/plan's sglangDecode says why).
	ServingFitSGLang ServingFit = "sglang"
)
