// Package calibration holds every fitted constant of the planner, each with
// the measurements it was fitted on (data/, a README there says where every
// row came from and which constant it fits). The fitted values are in
// constants_gen.go, written by the fit program (fit/, run by
// `go generate ./internal/calibration`), which also writes the constants and
// replay tables of docs/accuracy.md; a test in fit/ fails when regenerating
// would change either. Values that no fit in this repository reproduces are
// hand-set in this file, each with its reason.
//
// The package is a leaf: it imports nothing of the planner, so the model,
// quant and plan packages all read their constants from it.
package calibration

//go:generate go run ./fit -constants constants_gen.go -docs ../../docs/accuracy.md

// Throughput is the parameter set of the speed model of internal/plan
// (throughput.go): decode streams weights and KV cache at a fraction of the
// memory bandwidth that depends on the memory class, plus a fixed time per
// layer; prefill runs the matmuls at a fraction of the dense tensor peak,
// plus a fixed cost per layer and prompt pass.
type Throughput struct {
	// DecodeBandwidth is the fraction of the datasheet memory bandwidth a
	// decode step achieves while streaming weights and KV cache on a
	// discrete GPU with GDDR memory (and any device of no other class).
	DecodeBandwidth float64
	// DecodeBandwidthHBM is that fraction on an HBM part: a batch-1
	// matrix-vector pass keeps too few bytes in flight to draw 2-3 TB/s
	// (llama.cpp on an A100 reaches 43-55 %).
	DecodeBandwidthHBM float64
	// DecodeBandwidthUnified is that fraction on Apple unified memory, whose
	// datasheet figure is the SoC's, shared with the CPU, for 16-bit (and
	// 8-bit float) weights.
	DecodeBandwidthUnified float64
	// DecodeBandwidthHost is that fraction on a CPU's host memory (its
	// family's datasheet figure, specs.HostMemoryByCPUName).
	DecodeBandwidthHost float64
	// HostWeightsPerCoreSecond is how many weights one CPU core multiplies
	// per second in a decode step's matrix-vector products (dequantizing
	// them): with few cores a CPU decode is bound by this, not by memory.
	HostWeightsPerCoreSecond float64
	// DecodeBandwidthUnifiedQuantized is that fraction for integer-quantized
	// weights (int8/int4, GGUF k-quants) on Apple GPUs, whose ALUs dequantize
	// every weight read: there the matrix-vector pass is partly compute-bound.
	DecodeBandwidthUnifiedQuantized float64
	// LayerLatency is the fixed time per layer per decode step, in seconds
	// (kernel launches, synchronisation), that does not shrink with bytes.
	LayerLatency float64
	// PrefillMFU is the fraction of the dense peak tensor throughput the
	// matmuls of a prompt-processing pass achieve.
	PrefillMFU float64
	// PrefillLayerLatency is the time per layer per prompt micro-batch that
	// does not scale with the matmul FLOPs: the layer's other kernels (norms,
	// rope, softmax, copies) and launches, in seconds.
	PrefillLayerLatency float64
}

// MicroBatchTokens is the number of prompt tokens llama.cpp processes in one
// forward pass: its default n_ubatch, 512 (common/common.h of
// https://github.com/ggml-org/llama.cpp; n_batch of its 2023 builds). It is
// not fitted: it is the engine's setting under which every measurement of
// data/ ran (llama-bench and ./main defaults; measure.cpp's -ub 512), so the
// constants fitted per pass (PrefillLayerLatency) and the working buffer
// sized per chunk (quant.ActivationsBytes, AttentionHiddenRows) hold for it.
const MicroBatchTokens = 512

// DequantCopyBytesPerParam is the extra memory traffic per weight per
// prompt pass when the weights are quantized: llama.cpp's CUDA backend (the
// builds of the calibration rows) dequantizes a quantized matrix into a
// 16-bit buffer and runs the 16-bit GEMM on it for batches of more than a
// few tokens, so each pass writes and reads 2 bytes per weight besides the
// quantized weights. Not fitted: two 16-bit accesses per weight.
const DequantCopyBytesPerParam = 4

// Hand-set prefill constants. They were fitted at commit d0c2f6d (median
// |error| of prefill over the single-device rows of data/inference.json,
// MFU on a 0.01 grid, PrefillLayerLatency on a 20 us grid refined at 10 us)
// while the GDDR decode fraction was 0.90; the decode fraction has since
// been refitted (0.93) and the model's memory inputs refined, so the same
// search today lands on a neighbouring point of the flat optimum (the fit
// program prints it in docs/accuracy.md with its median). They are kept so
// that no answer changes; refit them together with a deliberate change of
// the prefill answers.
const (
	PrefillMFUHandSet          = 0.77
	PrefillLayerLatencyHandSet = 1390e-6
)
