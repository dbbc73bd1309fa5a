package engine

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// VLLMDefaultVersion is the vLLM release a plan is for when the request
// names none (engine_version): the newest whose start-up accounting the
// replay of real start-up logs covers (TestVLLMStartupReplay in
// internal/plan, rows of internal/calibration/data/vllm_startup.json).
// Later releases are planned by its rules.
const VLLMDefaultVersion = "0.21.0"

// VLLMOldestVersion is the oldest vLLM release whose start-up accounting
// the planner models: the oldest whose real start-up logs the replay holds
// within 10 % (vllm issue 10517, 0.6.4; internal/calibration/data/
// vllm_startup.json). An older engine_version is planned by the rules of
// the oldest range, and engine_expect.vllm warns that its figures may be
// far off: 0.2.5 took every byte in use on the device after its profile
// run as the model's (vllm issue 2248), which at TP 4 left 30 % fewer KV
// blocks than these rules give (vllm PR 2031).
var VLLMOldestVersion = Version{0, 6, 4}

// Version is an engine release, major.minor.patch.
type Version struct{ Major, Minor, Patch int }

// versionForm is a release as pip and the engines' banners write it:
// "0.11.0", "0.21", "0.6.4.post1", "0.10.1rc1", "0.19.0+cu128".
var versionForm = regexp.MustCompile(`^(\d{1,4})\.(\d{1,4})(?:\.(\d{1,4}))?(?:[.+-]?[0-9a-z.+-]*)?$`)

// ParseVersion reads a release number (a leading "v" allowed); what
// follows major.minor.patch (".post1", "rc1", "+cu128") is ignored.
func ParseVersion(s string) (Version, error) {
	m := versionForm.FindStringSubmatch(strings.TrimPrefix(strings.TrimSpace(s), "v"))
	if m == nil {
		return Version{}, fmt.Errorf("%q is not a release number such as 0.11.0", s)
	}
	var v Version
	v.Major, _ = strconv.Atoi(m[1])
	v.Minor, _ = strconv.Atoi(m[2])
	if m[3] != "" {
		v.Patch, _ = strconv.Atoi(m[3])
	}
	return v, nil
}

// Before reports whether v is an earlier release than o.
func (v Version) Before(o Version) bool {
	if v.Major != o.Major {
		return v.Major < o.Major
	}
	if v.Minor != o.Minor {
		return v.Minor < o.Minor
	}
	return v.Patch < o.Patch
}

// String writes v as major.minor.patch.
func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// The vLLM releases whose start-up accounting changed.
var (
	// vllmV1Default: the V1 engine is the default from 0.8.0 (V0 is
	// removed later): chunked prefill is always on, so the profile run
	// takes max_num_batched_tokens tokens, chosen by the GPU
	// (get_batch_defaults in vllm/engine/arg_utils.py), and the sampler is
	// warmed up on max_num_seqs dummy requests (_dummy_sampler_run in
	// vllm/v1/worker/gpu_model_runner.py).
	vllmV1Default = Version{0, 8, 0}
	// vllmCUDAGraphsInside: from 0.21.0 vLLM estimates the memory of its
	// CUDA graphs while profiling and takes it out of the KV cache, inside
	// --gpu-memory-utilization (PR 30515,
	// https://github.com/vllm-project/vllm/pull/30515, opt-in
	// VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 at first; the start-up log
	// of 0.21 and later says "CUDA graph memory profiling is enabled
	// (default since v0.21.0)", rows lmcache-3430 and gpustack/runner PR
	// 251). Before, the graphs were captured after the KV cache was sized,
	// in the memory the fraction leaves free.
	vllmCUDAGraphsInside = Version{0, 21, 0}
	// vllmMXFP4TritonOnHopper: from 0.14 vLLM runs MXFP4 MoE layers on an
	// H100/H200 (compute capability 9.0) with its Triton backend
	// (triton_kernels, shipped with vLLM; the 0.14.1 log of vllm issue
	// 33155 says "Using Triton backend", the 0.19.0 log of the
	// llm-d-planner row for gpt-oss-20b "Using 'TRITON' Mxfp4 MoE
	// backend"). Before, without triton_kernels installed, it fell back to
	// Marlin: the 0.10.1 log of issue 23278 warns "Weight-only FP4
	// compression will be used leveraging the Marlin kernel"
	// (marlin_utils_fp4.py), and the 0.11.0 start of issue 27508 leaves
	// the KV cache that Marlin's padded weights leave. The releases between
	// 0.11.0 and 0.14.1 are not pinned by a log: a December 2025 build of
	// 0.11.1 already loads the copy of triton_kernels inside vLLM
	// (vllm/third_party/triton_kernels, https://github.com/stepfun-ai/Step3-VL-10B/issues/10),
	// so the switch may be as early as 0.11.1.
	vllmMXFP4TritonOnHopper = Version{0, 14, 0}
	// vllmTritonTopKTopP: the sampler's top-k and top-p run in a Triton
	// kernel instead of PyTorch's sort of the vocabulary (PR 33538,
	// https://github.com/vllm-project/vllm/pull/33538, merged in February
	// 2026; apply_top_k_top_p in vllm/v1/sample/ops/topk_topp_sampler.py
	// calls apply_top_k_top_p_triton whenever Triton is present). The
	// 0.19.0 logs are the first replayed with it; 0.15 to 0.18 are not
	// pinned by a log and keep the sort's larger charge.
	vllmTritonTopKTopP = Version{0, 19, 0}
)

// VLLMBackend is the vLLM worker that sizes the KV cache on a device kind:
// each states its own budget.
type VLLMBackend int

const (
	// VLLMBackendGPU is vLLM's GPU worker (NVIDIA, and AMD through ROCm,
	// where the same vllm/v1/worker/gpu_worker.py runs): total x
	// --gpu-memory-utilization less the weights and the start-up profile
	// (VLLMStartupOf).
	VLLMBackendGPU VLLMBackend = iota
	// VLLMBackendTPU is tpu-inference's TPU worker, vLLM's TPU backend
	// from 0.12.0 (vllm-project/tpu-inference, tags v0.12.0 to v0.27.0,
	// tpu_inference/worker/tpu_worker.py determine_available_memory): the
	// cache gets total x --gpu-memory-utilization less the HBM in use once
	// the weights are loaded, summed over the chips of the mesh. It runs no
	// profile pass before and captures no CUDA graphs: the XLA programs
	// are compiled after the cache is sized (row kerasio-tpu-v5e-gemma3-1b
	// of vllm_startup.json).
	VLLMBackendTPU
	// VLLMBackendGaudi is Intel Gaudi's HPU worker (HabanaAI/vllm-fork
	// vllm/worker/habana_worker.py, later hpu_worker.py, tags
	// v0.5.3.post1+Gaudi-1.18.0 to v0.7.2+Gaudi-1.21.0; vllm-project/
	// vllm-gaudi vllm_gaudi/v1/worker/hpu_worker.py at v0.26.0): after the
	// weights and a profile run, --gpu-memory-utilization takes its share
	// of the memory then FREE, not of the total, and VLLM_GRAPH_RESERVED_MEM
	// of that share (0.1 by default from HabanaAI/vllm-fork commit ed19acd8
	// of 2024-09-17, 0.4 before) is kept for HPU graphs; the KV cache gets
	// the rest.
	VLLMBackendGaudi
)

// vllmTPUWorker is the first vLLM release whose TPU backend is
// tpu-inference (its first tag, v0.12.0); earlier releases profiled a
// forward pass on torch_xla (vllm/v1/worker/tpu_worker.py), which the GPU
// rule stands in for.
var vllmTPUWorker = Version{0, 12, 0}

// vllmGaudiGraphReserve is VLLM_GRAPH_RESERVED_MEM's default in the Gaudi
// workers (VLLMBackendGaudi).
const vllmGaudiGraphReserve = 0.1

// VLLMSetup is what vLLM's start-up profile of one GPU depends on besides
// the model.
type VLLMSetup struct {
	Version Version
	// TotalBytes and Name are the GPU's: vLLM's batch defaults depend on
	// them.
	TotalBytes int64
	Name       string
	// TP is the tensor-parallel size; MaxModelLen is --max-model-len;
	// MaxNumSeqs is --max-num-seqs (0: vLLM's default).
	TP, MaxModelLen, MaxNumSeqs int
	// Graphs: the device runs vLLM's CUDA graphs (NVIDIA, and AMD through
	// HIP graphs); TPU, Gaudi, Neuron and CPU workers capture none.
	Graphs bool
	// MXFP4Experts: the model's MoE experts are loaded as MXFP4 (a plan at
	// mxfp4: gpt-oss's checkpoints).
	MXFP4Experts bool
	// Capability is an NVIDIA GPU's CUDA compute capability ("9.0"); ""
	// for other GPUs, or when it is not known.
	Capability string
	// Backend is the worker that sizes the cache on the device.
	Backend VLLMBackend
	// ValueBytes is the width of the model's 16-bit values (4 at fp32;
	// 0: 2), which the encoder pass's tensors take (VLLMEncoderPassOf).
	ValueBytes int
}

// Rule is the worker whose rule sizes the cache for d: its Backend, except
// a TPU before vllmTPUWorker, whose torch_xla worker profiled a forward
// pass as the GPU worker does.
func (d VLLMSetup) Rule() VLLMBackend {
	if d.Backend == VLLMBackendTPU && d.Version.Before(vllmTPUWorker) {
		return VLLMBackendGPU
	}
	return d.Backend
}

// VLLMStartup is what vLLM's start-up profile charges one GPU beside the
// weights before the KV cache gets the rest of total x
// --gpu-memory-utilization (Worker.determine_available_memory in
// vllm/v1/worker/gpu_worker.py): the peak activation of the profile run, the
// memory allocated outside torch during it and, from 0.21.0, the estimated
// CUDA graphs.
type VLLMStartup struct {
	Version             Version
	MaxNumBatchedTokens int
	MaxNumSeqs          int
	ActivationBytes     int64
	NonTorchBytes       int64
	// CUDAGraphBytes is 0 before 0.21.0: the graphs then live outside the
	// fraction.
	CUDAGraphBytes int64
	// MoEPaddingBytesPerLayer is what each MoE layer's experts take on a
	// device beyond the checkpoint's: vLLM's Marlin MXFP4 backend pads
	// them to its tiles (vllmMarlinMXFP4Padding). It is weights ("Model
	// loading took" counts it), not part of Bytes.
	MoEPaddingBytesPerLayer int64
	// GraphReserve is the share of the usable memory a Gaudi worker keeps
	// for HPU graphs (VLLM_GRAPH_RESERVED_MEM), and OfFree that its
	// utilization is of the memory free after the weights and the profile
	// run (VLLMBackendGaudi); both zero elsewhere.
	GraphReserve float64
	OfFree       bool
	// Encoder is the profile's pass through a multimodal model's vision
	// tower (VLLMEncoderPassOf), part of ActivationBytes; zero for other
	// models and backends.
	Encoder VLLMEncoderPass
}

// Bytes is all the profile charges beside the weights.
func (s VLLMStartup) Bytes() int64 { return s.ActivationBytes + s.NonTorchBytes + s.CUDAGraphBytes }

// Charge is what the start-up takes of a device's budget (totalBytes x
// utilization) beside weights bytes of weights, and of that the memory
// kept for graphs: Bytes and CUDAGraphBytes, except on a Gaudi worker
// (OfFree), whose cache gets (total - weights - profile) x utilization x
// (1 - GraphReserve). That can leave the cache more than total x
// utilization - weights when the weights are most of the device; the
// charge is then held to the profile run, with no graph memory (the plan
// stays within the fraction of the total that every backend's budget
// reads).
func (s VLLMStartup) Charge(totalBytes, weights int64, utilization float64) (charge, graphs int64) {
	if !s.OfFree {
		return s.Bytes(), s.CUDAGraphBytes
	}
	usable := float64(totalBytes-weights-s.ActivationBytes) * utilization
	kv := usable * (1 - s.GraphReserve)
	charge = int64(float64(totalBytes)*utilization) - weights - int64(kv)
	if usable <= 0 || charge <= s.Bytes() {
		return s.Bytes(), 0
	}
	return charge, int64(usable * s.GraphReserve)
}

// VLLMStartupOf is vLLM's start-up charge for model m on a GPU of setup d.
func VLLMStartupOf(m *model.Model, d VLLMSetup) VLLMStartup {
	s := VLLMStartup{Version: d.Version}
	s.MaxNumBatchedTokens, s.MaxNumSeqs = vllmBatchDefaults(d)
	if d.MaxNumSeqs > 0 {
		s.MaxNumSeqs = d.MaxNumSeqs
	}
	tp := max(d.TP, 1)
	switch d.Rule() {
	case VLLMBackendTPU:
		// Nothing beside the weights: no profile pass, no graphs.
		return s
	case VLLMBackendGaudi:
		// The profile run's forward pass (HabanaMemoryProfiler counts all
		// device memory it takes: no separate non-torch figure), then the
		// share of the free memory and the HPU-graph reserve (Charge).
		s.ActivationBytes = vllmForwardBytes(m, s.MaxNumBatchedTokens, tp)
		s.GraphReserve, s.OfFree = vllmGaudiGraphReserve, true
		return s
	}
	act := vllmForwardBytes(m, s.MaxNumBatchedTokens, tp)
	if !d.Version.Before(vllmV1Default) {
		perLogit := calibration.VLLMSamplerBytesPerLogit
		if d.Version.Before(vllmTritonTopKTopP) {
			perLogit = calibration.VLLMSortSamplerBytesPerLogit
		}
		act = max(act, int64(float64(s.MaxNumSeqs)*float64(m.Vocab)*perLogit))
		act += vllmMoEWorkspaceBytes(m, s.MaxNumBatchedTokens)
		// A multimodal model's encoder pass comes first; its embeddings
		// stay in the encoder cache through the passes above.
		valueBytes := d.ValueBytes
		if valueBytes <= 0 {
			valueBytes = 2
		}
		if enc := VLLMEncoderPassOf(m, s.MaxNumBatchedTokens, valueBytes, tp); enc.Items > 0 {
			s.Encoder = enc
			act = max(enc.ActivationBytes, act+enc.CacheBytes)
		}
	}
	s.ActivationBytes = act
	s.NonTorchBytes = calibration.VLLMNonTorchBytes
	if tp > 1 {
		s.NonTorchBytes = calibration.VLLMNonTorchTPBytes
	}
	if d.Graphs && !d.Version.Before(vllmCUDAGraphsInside) {
		s.CUDAGraphBytes = calibration.VLLMCUDAGraphBytes
	}
	if d.MXFP4Experts && vllmMXFP4OnMarlin(d) {
		s.MoEPaddingBytesPerLayer = vllmMarlinMXFP4Padding(m, tp)
	}
	return s
}

// vllmMXFP4OnMarlin reports whether vLLM runs MXFP4 MoE layers with its
// Marlin backend (weight-only FP4, for GPUs without FP4 kernels) on an
// NVIDIA GPU of setup d: on compute capability 8.x in every release (MXFP4
// needs 8.0, Mxfp4Config.get_min_capability; the Triton backend needs 9.0
// to below 11.0, get_mxfp4_backend in
// vllm/model_executor/layers/quantization/mxfp4.py) and on 9.0 before
// vllmMXFP4TritonOnHopper. Blackwell (10.x) has FlashInfer's FP4 kernels,
// whose own padding is not modelled; other capabilities are left out.
func vllmMXFP4OnMarlin(d VLLMSetup) bool {
	switch {
	case strings.HasPrefix(d.Capability, "8."):
		return true
	case d.Capability == "9.0":
		return d.Version.Before(vllmMXFP4TritonOnHopper)
	}
	return false
}

// vllmMXFP4BitsPerWeight is MXFP4's storage: 4-bit values and one 8-bit
// scale per block of 32 (mxfp4_block in mxfp4.py).
const vllmMXFP4BitsPerWeight = 4 + 8.0/32

// vllmMarlinMXFP4Padding is the bytes one MoE layer's experts take on each
// device of a tensor-parallel group of tp beyond the checkpoint's when
// vLLM's Marlin backend holds them: Mxfp4MoEMethod.create_weights
// (vllm/model_executor/layers/quantization/mxfp4.py) rounds the
// intermediate size per rank up to a multiple of 128 and the hidden size
// to 256 ("The moe marlin kernel requires that for each linear n % 256 ==
// 0 and k % 128 == 0"), for the fused gate-and-up and the down projection
// of every expert, values and scales alike.
func vllmMarlinMXFP4Padding(m *model.Model, tp int) int64 {
	if m.Experts == 0 {
		return 0
	}
	inter := m.MoEIntermediate
	if inter == 0 {
		inter = m.Intermediate
	}
	perRank := inter / max(tp, 1)
	padded := roundUp(perRank, 128) * roundUp(m.Hidden, 256)
	extra := float64(padded-perRank*m.Hidden) * 3 * float64(m.Experts)
	return int64(extra * vllmMXFP4BitsPerWeight / 8)
}

// roundUp is n rounded up to a multiple of k.
func roundUp(n, k int) int { return (n + k - 1) / k * k }

// vllmBatchDefaults are vLLM's --max-num-batched-tokens and --max-num-seqs
// for `vllm serve` when not given. V1 (0.8.0 on): 8192 and 1024 on a GPU of
// 70 GiB or more that is not an A100, else 2048 and 256
// (EngineArgs.get_batch_defaults / _set_default_args in
// vllm/engine/arg_utils.py; the A100 exception is PR 17885). V0: chunked
// prefill is off up to 32k context, so the profile run takes the whole
// --max-model-len (at least 2048 tokens), and 256 sequences; above 32k it
// is on with 2048 tokens per step.
func vllmBatchDefaults(d VLLMSetup) (tokens, seqs int) {
	if d.Version.Before(vllmV1Default) {
		if d.MaxModelLen > 32768 {
			return 2048, 256
		}
		return max(d.MaxModelLen, 2048), 256
	}
	if d.TotalBytes >= 70<<30 && !namesA100(d.Name) {
		return 8192, 1024
	}
	return 2048, 256
}

// namesA100 reports whether a GPU name contains "a100" in any case, as
// strings.Contains(strings.ToLower(name), "a100") does, without the copy:
// the planner asks it for every cost of a vLLM plan. Comparing ASCII bytes
// is the same test: no other rune lowers to 'a', '1' or '0'.
func namesA100(name string) bool {
	const want = "a100"
	for i := 0; i+len(want) <= len(name); i++ {
		if name[i]|0x20 == want[0] && name[i+1:i+len(want)] == want[1:] {
			return true
		}
	}
	return false
}

// vllmForwardBytes is the activation peak of a forward pass over tokens
// tokens on one GPU of a tensor-parallel group of tp: per token about four
// hidden-sized bf16 rows (residual, normed input, attention input and
// output: 8 bytes per hidden unit) and the MLP's gate-and-up output with
// its activated half (2I + I bf16 values: 6 bytes per intermediate unit,
// split over tp). A MoE layer's intermediate is its routed experts' and
// shared experts' width per token. Not fitted: the 20000- and 29000-token
// profiles of vllm-10517 print 2.07 and 2.99 GiB against 2.21 and 3.21
// GiB from this.
func vllmForwardBytes(m *model.Model, tokens, tp int) int64 {
	inter := float64(m.Intermediate)
	if m.Experts > 0 && m.ExpertsPerToken > 0 {
		w := m.MoEIntermediate
		if w == 0 {
			w = m.Intermediate
		}
		shared := m.SharedIntermediate
		if shared == 0 {
			shared = m.SharedExperts * w
		}
		inter = float64(m.ExpertsPerToken*w + shared)
	}
	return int64(float64(tokens) * (8*float64(m.Hidden) + 6*inter/float64(tp)))
}

// vllmMoEWorkspaceBytes is the fused-MoE workspace a MoE model keeps from
// the profile's forward pass: one fp32 hidden-sized row per routed expert
// per token, which stays allocated under the sampler warm-up (rows
// Qwen3-30B-A3B, Qwen1.5-MoE-A2.7B, DeepSeek-V2-Lite and Mixtral print
// 0.05 to 0.47 GiB more than the larger of forward and sampler).
func vllmMoEWorkspaceBytes(m *model.Model, tokens int) int64 {
	if m.Experts == 0 || m.ExpertsPerToken == 0 {
		return 0
	}
	return int64(tokens) * int64(m.ExpertsPerToken) * int64(m.Hidden) * 4
}

// VLLMDeepstackBytes is what vLLM keeps on each rank, beside the weights,
// for a Qwen3-VL model's deepstack features: one buffer of
// max_num_batched_tokens × the language model's width per deepstack level,
// in the model's dtype (valueBytes a value), allocated when the model is
// built (Qwen3VLMoeForConditionalGeneration.__init__ registers
// deepstack_input_embeds as torch.zeros(max_num_batched_tokens,
// text_config.hidden_size) for each level, in
// vllm/model_executor/models/qwen3_vl_moe.py at vllm-project/vllm
// 055e47c28003156421365af985d676fc921cb075; qwen3_vl.py does the same), so
// "Model loading took" counts it. It is whole on every rank and every
// pipeline stage that builds the tower. 0 without deepstack levels or a
// tower.
//
// With it the tower of Qwen3-VL-235B-A22B-Instruct at TP 8 meets the three
// "Model loading took" lines of vllm PR 26000
// (https://github.com/vllm-project/vllm/pull/26000): 55.4919 GiB a rank
// with the tower split, 56.4331 with it whole (--mm-encoder-tp-mode data),
// 55.1608 without it (text-only mode); the 0.20 GiB a rank that the split
// does not divide is these 3 × 8192 × 4096 × 2 bytes (0.1875 GiB) and the
// tower's patch embedding, norms and position table
// (model.Model.VisionWholeParams).
func VLLMDeepstackBytes(m *model.Model, maxNumBatchedTokens, valueBytes int) int64 {
	if m == nil || m.VisionParams <= 0 || m.VisionDeepstack <= 0 {
		return 0
	}
	return int64(m.VisionDeepstack) * int64(maxNumBatchedTokens) * int64(m.Hidden) * int64(valueBytes)
}

// VLLMServeChunkTokens is the --max-num-batched-tokens `vllm serve` (the
// V1 engine, 0.8.0 on) takes when not given, on a GPU of totalBytes named
// name (vllmBatchDefaults): the most tokens one engine step schedules, so
// the largest piece of a prompt one forward pass runs (V1 always chunks
// prompts: _set_default_args_v1 in vllm/engine/arg_utils.py).
func VLLMServeChunkTokens(totalBytes int64, name string) int {
	tokens, _ := vllmBatchDefaults(VLLMSetup{Version: vllmV1Default, TotalBytes: totalBytes, Name: name})
	return tokens
}

// PromptChunk is vLLM's default --max-num-batched-tokens for `vllm serve`
// on the GPU (VLLMServeChunkTokens).
func (vllm) PromptChunk(totalBytes int64, name string) int {
	return VLLMServeChunkTokens(totalBytes, name)
}

// PromptChunkSetting is vLLM's flag for the chunk.
func (vllm) PromptChunkSetting() string { return "--max-num-batched-tokens" }

// PromptRequestSeconds is vLLM's fixed time per request,
// c.VLLMPromptRequestSeconds: fitted on vLLM's own fit rows, not SGLang's.
func (vllm) PromptRequestSeconds(c calibration.Throughput) float64 {
	return c.VLLMPromptRequestSeconds
}

// StartupChargeLine implements StartupChargeNamer: "vLLM 0.21.0's start-up
// charge 4.5 GiB (peak activation 3.4 GiB, non-torch memory 0.2 GiB, CUDA
// graphs 0.8 GiB)", a Gaudi worker's graphs its HPU graph reserve
// (VLLM_GRAPH_RESERVED_MEM), and tpu-inference's worker, which charges
// nothing (VLLMStartupOf), saying so.
func (v vllm) StartupChargeLine(s VLLMStartup, b VLLMBackend, charge, graphs int64) string {
	if charge == 0 && b == VLLMBackendTPU {
		return fmt.Sprintf("%s %s's TPU backend charges nothing beside the weights and the KV cache", v.Title(), s.Version)
	}
	kind := "CUDA graphs"
	if s.OfFree {
		kind = "HPU graph reserve"
	}
	return fmt.Sprintf("%s %s's start-up charge %s (peak activation %s, non-torch memory %s, %s %s)",
		v.Title(), s.Version, sizeWord(charge), sizeWord(s.ActivationBytes), sizeWord(s.NonTorchBytes), kind, sizeWord(graphs))
}

// sizeWord writes bytes as the planner's sentences write a size (plan's
// gib): GiB to a tenth, "<0.1 GiB" for a positive size that would read 0.0.
func sizeWord(b int64) string {
	if b > 0 && float64(b)/(1<<30) < 0.05 {
		return "<0.1 GiB"
	}
	return gib(b)
}
