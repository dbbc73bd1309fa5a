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
)

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
}

// Bytes is all the profile charges beside the weights.
func (s VLLMStartup) Bytes() int64 { return s.ActivationBytes + s.NonTorchBytes + s.CUDAGraphBytes }

// VLLMStartupOf is vLLM's start-up charge for model m on a GPU of setup d.
func VLLMStartupOf(m *model.Model, d VLLMSetup) VLLMStartup {
	s := VLLMStartup{Version: d.Version}
	s.MaxNumBatchedTokens, s.MaxNumSeqs = vllmBatchDefaults(d)
	if d.MaxNumSeqs > 0 {
		s.MaxNumSeqs = d.MaxNumSeqs
	}
	tp := max(d.TP, 1)
	act := vllmForwardBytes(m, s.MaxNumBatchedTokens, tp)
	if !d.Version.Before(vllmV1Default) {
		act = max(act, int64(float64(s.MaxNumSeqs)*float64(m.Vocab)*calibration.VLLMSamplerBytesPerLogit))
		act += vllmMoEWorkspaceBytes(m, s.MaxNumBatchedTokens)
	}
	s.ActivationBytes = act
	s.NonTorchBytes = calibration.VLLMNonTorchBytes
	if tp > 1 {
		s.NonTorchBytes = calibration.VLLMNonTorchTPBytes
	}
	if d.Graphs && !d.Version.Before(vllmCUDAGraphsInside) {
		s.CUDAGraphBytes = calibration.VLLMCUDAGraphBytes
	}
	return s
}

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
	if d.TotalBytes >= 70<<30 && !strings.Contains(strings.ToLower(d.Name), "a100") {
		return 8192, 1024
	}
	return 2048, 256
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
