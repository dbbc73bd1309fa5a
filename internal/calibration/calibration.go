// Package calibration holds every fitted constant of the planner, each with
// the measurements it was fitted on (data/, a README there says where every
// row came from and which constant it fits). The fitted values are in
// constants_gen.go, written by the fit program (fit/, run by
// `go generate ./internal/calibration`), which also writes the constants and
// replay tables of docs/accuracy.md; a test in fit/ fails when regenerating
// would change either. Values that no fit in this repository reproduces are
// hand-set in this file, each with its reason.
//
// The package is a leaf: it imports nothing of the planner (only ggml's
// type table, itself a leaf), so the model, quant and plan packages all
// read their constants from it.
package calibration

import "github.com/ai-hwaccel/ai-hwaccel/internal/ggml"

//go:generate go run ./fit -constants constants_gen.go -docs ../../docs/accuracy.md

// Throughput is the parameter set of the speed model of internal/plan
// (throughput.go): decode streams the weights at a fraction of the memory
// bandwidth that depends on the memory class and on the weight type family
// (the kernel that dequantizes them), reads the KV cache at its own rate,
// and pays a fixed time per layer that depends on the backend; prefill runs
// the matmuls at a fraction of the peak of the kernel's precision (16-bit
// GEMM, or llama.cpp's int8 MMQ kernels for integer weights), plus a fixed
// cost per layer and prompt pass, with the constants of the newest
// llama.cpp build measured on the device's architecture.
type Throughput struct {
	// DecodeGDDR is the fraction of the datasheet memory bandwidth a decode
	// step reaches while streaming weights on a discrete GPU with GDDR memory
	// (and any device of no other class), per weight type family.
	DecodeGDDR DecodeFractions
	// DecodeHBM is that fraction on an HBM part. On fast HBM a batch-1
	// matrix-vector pass over quantized weights is limited by the
	// dequantizing kernel, not the memory: llama.cpp on an H200 streams F16
	// at about 70 % of 4.8 TB/s but Q4_K_M at under 30 %
	// (data/llamacpp-cuda-h200).
	DecodeHBM DecodeFractions
	// DecodeUnified is that fraction on Apple unified memory, whose datasheet
	// figure is the SoC's, shared with the CPU; the GPU's ALUs dequantize
	// every integer weight read, so quantized weights reach less.
	DecodeUnified DecodeFractions
	// DecodeBandwidthHost is that fraction on a CPU's host memory (its
	// family's datasheet figure, specs.HostMemoryByCPUName), any weight type.
	DecodeBandwidthHost float64
	// HostWeightsPerCore is how many weights one CPU core multiplies per
	// second in a decode step's matrix-vector products, per ggml type the
	// weights are stored in: with few cores a CPU decode is bound by this,
	// not by memory. llama.cpp's CPU backend has a kernel per type (vec_dot
	// and the repacked AVX-512 paths), and a file of one mix holds several
	// types (Q4_K_M: Q4_K and Q6_K, and Q5_0/Q8_0 where a row is not a
	// multiple of 256), so a decode's time is the sum over its types of
	// their weights / (cores x the type's rate). A type without a rate here
	// takes the rate of the measured type of its kernel family
	// (internal/plan, hostRateType). Fitted per type on one-thread runs of
	// single-type GGUFs (data/host_harness.json).
	HostWeightsPerCore map[ggml.Type]float64
	// HostCoreFactorNoAVX512 scales those rates (every type) on an x86 CPU whose
	// widest vector extension is below AVX-512 (specs.CPUVectorOf): the
	// rates are fitted on an AVX-512 core (data/host_harness.json), and
	// published llama-bench runs on AVX2 cores decode slower per core
	// (data/cpu_published.json, kept by leave-one-source-out
	// cross-validation: docs/accuracy.md, "CPU decode by instruction
	// set"). 0 leaves the rates as they are.
	HostCoreFactorNoAVX512 float64
	// HostPrefillFLOPSPerCore is the matmul FLOP/s one CPU core reaches in
	// a prompt pass (llama.cpp's CPU backend), per ggml type the weights are
	// stored in: a CPU plan's prefill is the sum over the types of their
	// share of the FLOPs over cores x the type's rate
	// (data/host_harness.json; unmeasured types as HostWeightsPerCore).
	HostPrefillFLOPSPerCore map[ggml.Type]float64
	// KVReadRatio is the rate at which a decode step reads the KV cache
	// (llama.cpp's flash-attention kernel over the cached tokens) relative
	// to the rate the class's 16-bit matrix-vector kernel streams weights:
	// decode slows with context by KV bytes / (bandwidth × Float fraction ×
	// KVReadRatio).
	KVReadRatio float64
	// LayerLatencyCUDA is the fixed time per layer per decode step, in
	// seconds (kernel launches, synchronisation, small kernels), on a
	// discrete GPU (llama.cpp's CUDA backend with CUDA graphs; Vulkan, ROCm
	// and other GPU backends are charged the same, unvalidated).
	LayerLatencyCUDA float64
	// LayerLatencyCUDAToday is that time in today's llama.cpp CUDA build
	// (2025-26, CUDA graphs) on the GDDR NVIDIA GPUs whose architecture has
	// a DecodeToday fraction, fitted with those fractions on the fit rows
	// of data/prefill_today.json (tg128). LayerLatencyCUDA stays the time of
	// the May 2024 builds (data/inference.json) and of every other GPU.
	LayerLatencyCUDAToday float64
	// DecodeTodayAmpere, DecodeTodayAda and DecodeTodayBlackwell are the
	// fraction of the datasheet bandwidth today's llama.cpp CUDA build
	// reaches streaming integer weights (Q4_0 measured; Q8_0 and k-quants
	// take it) on GDDR NVIDIA GPUs of compute capability 8.6 (Ampere
	// GA10x), 8.9 (Ada) and 12.0 (GeForce and workstation Blackwell, GDDR7;
	// not GB10's 12.1, LPDDR5X), fitted
	// on the fit rows of data/prefill_today.json (tg128). 16-bit weights
	// keep DecodeGDDR.Float (no row of today's build). 0: no row, and the
	// architecture keeps the May 2024 builds' constants.
	DecodeTodayAmpere    float64
	DecodeTodayAda       float64
	DecodeTodayBlackwell float64
	// LayerLatencyMetal is that time on an Apple GPU (llama.cpp's Metal
	// backend).
	LayerLatencyMetal float64
	// LayerLatencyHost is that time on a CPU (llama.cpp's CPU threads): 0,
	// because the host constants are fitted without one (fit/fitHost).
	LayerLatencyHost float64
	// PrefillMFU is the fraction of the dense 16-bit (fp8 for fp8 weights)
	// peak tensor throughput the matmuls of a prompt-processing pass reach
	// through cuBLAS: 16-bit weights, and integer weights dequantized into
	// a 16-bit buffer where no quantized kernel runs them.
	PrefillMFU float64
	// PrefillMFUQ8 and PrefillMFUKQuant are the fractions of the dense
	// INT8 peak that llama.cpp's quantized matrix-multiplication kernels
	// (MMQ: activations quantized to 8 bits, the weights unpacked to int8
	// in the tile, int8 tensor-core products) reach in a prompt pass on an
	// NVIDIA Hopper GPU, for Q8_0 weights and for k-quant and other
	// sub-8-bit types (more unpacking per weight). MMQ has been llama.cpp's
	// path for integer weights on NVIDIA GPUs with int8 tensor cores since
	// June 2024 (https://github.com/ggml-org/llama.cpp/pull/8075); the
	// fraction is Hopper's (measured on an H200) and does not carry over to
	// other architectures (docs/accuracy.md).
	PrefillMFUQ8     float64
	PrefillMFUKQuant float64
	// PrefillMFUKQuantAda and PrefillMFUKQuantAmpere are that fraction for
	// integer weights on NVIDIA Ada GPUs (compute capability 8.9) and
	// Ampere GA10x GPUs (8.6; not the A100's GA100, 8.0, whose tensor cores
	// differ), fitted per architecture on today's builds' llama-bench rows
	// of those GPUs (data/prefill_today.json, Q4_0): MMQ reaches a far
	// larger part of their INT8 peak than of Hopper's. Q8_0 takes the same
	// fraction there (no Q8_0 row on those GPUs). 0: no row, and the
	// architecture keeps the 2023-24 builds' path.
	PrefillMFUKQuantAda    float64
	PrefillMFUKQuantAmpere float64
	// PrefillMFUKQuantBlackwell and PrefillMFUKQuantGA100 are that fraction
	// on NVIDIA GDDR7 Blackwell GPUs (compute capability 12.0: RTX 50, RTX
	// PRO Blackwell; not B200/B300, 10.x, nor GB10, 12.1) and on the
	// GA100's tensor cores (8.0: A100, A30), fitted the same way on one
	// GPU of each (data/prefill_today.json).
	PrefillMFUKQuantBlackwell float64
	PrefillMFUKQuantGA100     float64
	// PrefillMFUMetal and PrefillMFUMetalQuant are the fractions of an Apple
	// GPU's FP32 peak (specs.Spec.GPUFP32TFLOPS) that llama.cpp's Metal
	// matrix-multiplication kernels reach in a prompt pass, for 16-bit
	// weights and for integer weights (dequantized tile by tile inside the
	// kernel, no 16-bit copy), fitted on the May 2024 llama-bench rows of
	// Apple GPUs in data/inference.json. 0: no Apple prefill figure.
	PrefillMFUMetal      float64
	PrefillMFUMetalQuant float64
	// PrefillLayerLatency is the time per layer per prompt micro-batch that
	// does not scale with the matmul FLOPs: the layer's other kernels (norms,
	// rope, attention, copies) and launches, in seconds, in today's
	// llama.cpp build (data/h200-speed: flash attention on). Plans on the
	// architectures with MMQ fractions of today's build (Hopper, Ada,
	// Ampere GA10x) take it; the Ada and Ampere rows (data/prefill_today.json,
	// flash attention off) are fitted with it, not refit.
	PrefillLayerLatency float64
	// PrefillLayerLatencyPreMMQ is that time in the llama.cpp build of May
	// 2024 that measured the llama-bench rows of data/inference.json
	// (llama-bench's default then: no flash attention), the newest build
	// before MMQ: their replay, and plans on the devices today's build is
	// not measured on, take it.
	PrefillLayerLatencyPreMMQ float64
	// PrefillLayerLatency2023 is that time in the ./main runs of 2023 builds
	// of data/inference.json (prompts of about 500 tokens): only their
	// replay takes it. At the same cuBLAS MFU those builds processed prompts
	// far slower than May 2024's llama-bench on the same GPUs (H100 PCIe,
	// 16-bit weights: Llama 2 7B 7367 tok/s in 2023, Llama 3 8B 10815 in
	// 2024), so one pass time for both fitted neither.
	PrefillLayerLatency2023 float64
	// OffloadHandoverSeconds is the time of one hand-over between the GPU
	// and the CPU in a llama.cpp decode step with part of the model in host
	// memory: the hidden state copied to the host, the stream synchronised,
	// the CPU threads woken and the result copied back before the GPU goes
	// on. Under --n-cpu-moe every layer whose experts are on the host pays
	// it (attention on the GPU, experts on the CPU, the next layer on the
	// GPU); under -ngl below the layer count the step crosses once.
	OffloadHandoverSeconds float64
	// ServingPromptMFU and ServingPromptRequestSeconds are the two fitted
	// constants of a vLLM or SGLang prompt (servingPromptSeconds in
	// internal/plan): the time to first token of a request is, per prompt
	// chunk, the longer of its matmul FLOPs at ServingPromptMFU of the
	// dense peak x TP and one read of the weights, plus its attention at
	// the same rate and its all-reduces, plus ServingPromptRequestSeconds
	// once per request (the request's handling, scheduling and first
	// sampling, which a measured time to first token includes). Both are
	// fitted on the SGLang fit rows of data/serving_prefill.json only
	// (SGLang cookbook runs, concurrency 1), so ServingPromptRequestSeconds
	// is SGLang's request time (engine.PromptRequestTimer).
	ServingPromptMFU            float64
	ServingPromptRequestSeconds float64
	// ServingMoEPromptMFU is the fraction of the dense peak x TP a MoE
	// prompt pass's routed-expert GEMMs reach (the ninth rule of
	// data/serving_prefill.json: each expert's GEMM has about T·k/E rows);
	// 0 plans a MoE pass as a dense one (every matmul at ServingPromptMFU,
	// one read of every expert).
	ServingMoEPromptMFU float64
	// VLLMPromptRequestSeconds is vLLM's fixed time per request in the
	// same model, fitted on the vLLM fit rows of data/serving_prefill.json
	// under the ServingPromptMFU the SGLang rows give; the other vLLM rows
	// are held out.
	VLLMPromptRequestSeconds float64
	// ServingBatchLayerSeconds and ServingBatchMFU are what a vLLM or
	// SGLang decode step of C sequences adds for each sequence beyond the
	// first (servingBatchSeconds in internal/plan), besides its KV cache
	// reads and all-reduce bytes: ServingBatchLayerSeconds per layer (the
	// attention kernel's blocks and reduction per sequence, the per-token
	// norm, rotary, activation and quantisation kernels) and the matrix
	// products of one more token at ServingBatchMFU of the dense peak, on
	// top of the weight stream (vLLM runs a skinny GEMV at one token and a
	// GEMM of M = the step's tokens above it). Fitted on the MI300X
	// benchmark_latency rows of data/serving_concurrency.json (its rule 6);
	// 0 and 0 add nothing. Neither moves a step of one sequence.
	ServingBatchLayerSeconds float64
	ServingBatchMFU          float64
	// VLLM is the batch-1 decode overhead of vLLM (CUDA/HIP graphs, its
	// fused MoE and all-reduce kernels), fitted on data/serving_decode.json;
	// a vLLM plan pays it instead of LayerLatencyCUDA.
	VLLM ServingDecode
	// SGLang is the batch-1 decode overhead of SGLang on NVIDIA GPUs, of
	// the form of VLLM: its MoE-layer and MLA-layer times fitted on
	// SGLang's own rows of data/serving_decode.json, its bandwidth
	// fraction and step, per-part (both GPU generations), all-reduce and
	// indexer times VLLM's (the rows, mostly multi-GPU MoE steps, do not
	// separate them: fitSGLang in
	// internal/calibration/fit/sglang.go). SGLangROCm is the same with the
	// fixed times scaled by the factor those rows give AMD GPUs. An SGLang
	// plan pays them on the HBM GPUs the rows ran on, and VLLM elsewhere
	// (internal/plan/sglangspeed.go).
	SGLang, SGLangROCm ServingDecode
}

// ServingDecode is the fixed time a serving engine spends in one batch-1
// decode step besides streaming the weights and the KV cache: per step
// (scheduler, sampling, the host round trip of one token), per part of a
// layer — a token mixer (attention, latent attention, a Mamba or
// linear-attention state) or a feed-forward block: its norm, residual add
// and the kernels besides the matrix-vector products, launched from a
// captured graph; a transformer layer is two parts, a hybrid block of one
// mixer one (plan.ServingBlocks) — per tensor-parallel all-reduce (one
// after each part's row-parallel output projection: the collective's
// latency over NVLink/XGMI, which a one-token message never amortises),
// per MoE layer (the router, top-k, token permutation and the fused expert
// kernel's fixed cost), per multi-head latent attention layer (MLA: the
// latent down- and up-projections, the absorbed per-head matrix products
// and the split rope path are kernels a grouped-query attention layer does
// not launch) and per DeepSeek Sparse Attention indexer (its own small
// attention over the cached keys and top-k, beside the MLA layer). Public
// single-request figures of vLLM and SGLang on multi-GPU MoE nodes
// (data/serving_decode.json) are 3-20 times below what the weight stream
// alone allows: these terms, not the memory, set the pace there.
// BandwidthFraction is the fraction of the datasheet bandwidth vLLM's
// batch-1 matrix-vector kernels (cuBLAS/hipBLASLt GEMMs at one row, the
// fused-MoE and FP8/Marlin kernels) reach while streaming weights and the
// KV cache, in place of llama.cpp's per-class fractions. PartSeconds is the
// per-part time on Ampere and Ada GPUs, PartSecondsLater on Hopper,
// Blackwell and CDNA3 (plan.LaterServingGeneration); they are one figure
// where the fit does not split them.
type ServingDecode struct {
	BandwidthFraction float64
	StepSeconds       float64
	PartSeconds       float64
	PartSecondsLater  float64
	AllReduceSeconds  float64
	MoELayerSeconds   float64
	MLALayerSeconds   float64
	IndexerSeconds    float64
}

// DecodeFractions are the fractions of a memory class's datasheet bandwidth
// a batch-1 decode step reaches, per family of weight type.
type DecodeFractions struct {
	// Float is for 16-bit (and 32-bit and fp8) weights: no dequantization.
	Float float64
	// Q8 is for 8-bit integer weights with one scale per block (GGUF Q8_0,
	// int8): a cheap dequantization.
	Q8 float64
	// KQuant is for the other integer types: GGUF k-quants (Q4_K … Q6_K),
	// legacy 4/5-bit blocks, IQ types, int4 and MXFP4, whose unpacking costs
	// more ALU work per byte.
	KQuant float64
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
