package engine

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// vllm is vLLM (https://docs.vllm.ai/): the server data-center
// accelerators run, tensor and pipeline parallel, loading Hugging Face
// checkpoints.
type vllm struct{}

// Name implements Engine.
func (vllm) Name() string { return NameVLLM }

// Title implements Engine.
func (vllm) Title() string { return "vLLM" }

// vllmKinds are the device kinds vLLM runs on: CUDA, ROCm, TPU, Gaudi,
// Neuron, Intel GPU, CPU.
var vllmKinds = map[registry.Kind]bool{
	registry.KindCUDA: true, registry.KindROCm: true, registry.KindTPU: true, registry.KindGaudi: true,
	registry.KindNeuron: true, registry.KindIntelGPU: true, registry.KindCPU: true,
}

// RunsOn implements Engine: vllmKinds.
func (vllm) RunsOn(k registry.Kind) bool { return vllmKinds[k] }

// vllmCUDAFloor is the lowest compute capability vLLM runs on: its
// installation page for CUDA requires "compute capability 7.0 or higher
// (e.g., V100, T4, RTX20xx, A100, L4, H100, etc.)"
// (docs/getting_started/installation/gpu.cuda.inc.md at vllm-project/vllm
// 8744bb0924a53c0d16867426b8b17428d41e4002,
// https://github.com/vllm-project/vllm/blob/8744bb0924a53c0d16867426b8b17428d41e4002/docs/getting_started/installation/gpu.cuda.inc.md),
// and its build compiles its kernels for CUDA_SUPPORTED_ARCHS, which start
// at 7.0 with a CUDA 12 toolkit and at 7.5 with CUDA 13 (CMakeLists.txt at
// bc390b9142e8399054bb81ebe739a23ae2cd5d86). The planner follows the CUDA
// 12 wheels, vLLM's default ("compiled with CUDA 12.9", the same page): a
// Pascal GPU (P40, P100, GTX 10xx: 6.x) or older has no vLLM.
var vllmCUDAFloor = cudaFloor{"vLLM", 70, "vLLM's CUDA installation requirements, docs/getting_started/installation/gpu.cuda.inc.md; CUDA_SUPPORTED_ARCHS in its CMakeLists.txt start at 7.0, 7.5 with CUDA 13"}

// Preference: vLLM is the server of the data-center accelerators it runs
// on (llama.cpp claims shared-memory GPUs, the CPU and GGUF models first),
// but not of an NVIDIA GPU below its floor (vllmCUDAFloor), which llama.cpp
// claims instead.
func (vllm) Preference(d Device) Preference {
	if vllmKinds[d.Kind] && vllmCUDAFloor.admits(d) {
		return Primary
	}
	return Never
}

// vllmMemoryUtilization is vLLM's default --gpu-memory-utilization: the
// fraction of a GPU's TOTAL memory one vLLM instance may use
// (https://docs.vllm.ai/en/latest/configuration/engine_args/). vLLM's worker
// requests total × utilization at start-up and refuses to start when less is
// free; inside it sit the weights, the activation peak of a profiling
// forward pass and the memory allocated outside torch (NCCL buffers,
// attention workspaces), and the KV cache gets what is left
// (Worker.init_device and determine_available_memory in
// vllm/v1/worker/gpu_worker.py, memory_profiling in vllm/utils/mem_utils.py;
// https://github.com/vllm-project/vllm/blob/35d5cda123ec28581759b6d34cde8052314fb1e6/vllm/v1/worker/gpu_worker.py).
// The planner charges those to each device as the estimate's activations and
// runtime overhead; the answer's engine_expect.vllm follows vLLM's own
// accounting by release (VLLMStartupOf, vllmstartup.go). CUDA graphs are
// captured after the KV cache is allocated (compile_or_warm_up_model in the
// same file): before 0.21.0 they live in the (1 - utilization) left over;
// from 0.21.0 vLLM estimates them while profiling and keeps them inside the
// fraction (PR 30515, https://github.com/vllm-project/vllm/pull/30515).
const vllmMemoryUtilization = 0.9

// Memory: the fraction asked, else vllmMemoryUtilization; no margin; the
// start-up profile charged inside it (ProfiledStartup, as the
// vllmMemoryUtilization comment above says). The
// KV cache is one paged pool: the scheduler admits up to --max-num-seqs
// sequences while the pool has free blocks and preempts one when it runs
// out (vllm/v1/core/sched/scheduler.py, Scheduler.schedule; PagedAttention,
// https://arxiv.org/abs/2309.06180), and the engine refuses to start only
// when one sequence of --max-model-len does not fit the pool
// (_check_enough_kv_cache_memory in vllm/v1/core/kv_cache_utils.py).
//
// A multimodal model's vision tower is loaded in the same process on the
// same GPUs (VisionInProcess): Qwen2_5_VLForConditionalGeneration.__init__
// builds Qwen2_5_VisionTransformer beside the language model whenever
// --limit-mm-per-prompt allows an image or a video (the default), on every
// pipeline rank, its attention (QKVParallelLinear, RowParallelLinear), MLP
// (MergedColumnParallelLinear, RowParallelLinear) and patch merger
// (ColumnParallelLinear, RowParallelLinear) split over the tensor-parallel
// group unless --mm-encoder-tp-mode data replicates it (vLLM's default is
// "weights", MultiModalConfig in vllm/config/multimodal.py); only the patch
// embedding (ReplicatedLinear, 1.5 M parameters on Qwen2.5-VL) and the
// norms are whole on each rank (vllm/model_executor/models/qwen2_5_vl.py at
// vllm-project/vllm 002d181a55a03803d7d69547846630069d2378b8;
// model.Model.VisionWholeParams), beside Qwen3-VL's deepstack buffers
// (VLLMDeepstackBytes). "Model loading took" counts
// it: 15.63 GiB for Qwen2.5-VL-7B-Instruct in BF16, which the plan's 14.18
// GiB of text model and 1.26 of tower (15.44) meet within 1.2 %
// (internal/calibration/data/vllm_startup.json).
func (vllm) Memory(asked float64) Memory {
	if asked == 0 {
		asked = vllmMemoryUtilization
	}
	return Memory{Fraction: asked, PagedKV: true, VisionInProcess: true, ProfiledStartup: true}
}

// BudgetSource explains vLLM's budget: --gpu-memory-utilization of each
// device's total memory, and what vLLM keeps inside it.
func (vllm) BudgetSource(who string, m Memory) string {
	return fmt.Sprintf("%s plans each device within --gpu-memory-utilization %s of its total memory, which must hold the weights, the KV cache, the activation peak of vLLM's profiling run, its memory outside torch (vllm/v1/worker/gpu_worker.py determine_available_memory) and, from vLLM 0.21.0, its CUDA graphs (earlier releases capture them in the rest)",
		who, fmtFraction(m.Fraction))
}

// BudgetSetting: vLLM's share of a device is --gpu-memory-utilization of
// its total memory.
func (vllm) BudgetSetting(m Memory) string {
	return vllmShareFlag + " " + fmtFraction(m.Fraction)
}

// vllmShareFlag sets vLLM's share of each device's total memory;
// vllmOffloadFlag how much of the layer weights it keeps in host memory,
// in GiB per GPU (cpuOffloadStep).
const (
	vllmShareFlag   = "--gpu-memory-utilization"
	vllmOffloadFlag = "--cpu-offload-gb"
)

// OffloadSetting implements OffloadNamer: --cpu-offload-gb.
func (vllm) OffloadSetting() string { return vllmOffloadFlag }

// PoolSetting implements OffloadNamer: --gpu-memory-utilization.
func (vllm) PoolSetting() string { return vllmShareFlag }

// ContextFitNote: vLLM >= 0.12 chooses the context the same way itself
// (https://github.com/vllm-project/vllm/pull/29431): with --max-model-len
// auto (or -1) _auto_fit_max_model_len in vllm/v1/core/kv_cache_utils.py
// keeps the trained context when one sequence of it fits the profiled
// pool, else binary-searches the longest that does; without the flag vLLM
// takes the trained context and refuses to start when it does not fit
// (_check_enough_kv_cache_memory).
func (vllm) ContextFitNote() string {
	return "vLLM refuses to start when one sequence of its --max-model-len does not fit the pool, and from 0.12 chooses the same way itself, from its own profiling, with --max-model-len auto (PR #29431), where this plan pins the figure"
}

// DefaultVersion: the planner follows vLLM's start-up accounting by
// release (VLLMStartupOf); VLLMDefaultVersion when none is named.
func (vllm) DefaultVersion() string { return VLLMDefaultVersion }

// KVRules: vLLM's cache is the planner's (full cells per sequence), with
// DeepSeek Sparse Attention's indexer keys in its own layout
// (dsaIndexerKeyBytes) and, for DeepSeek-V3.2, an fp8 cache in FlashMLA's
// sparse layout: DeepseekV32ForCausalLM.verify_and_update_config turns
// --kv-cache-dtype fp8 into "fp8_ds_mla" (vllm/model_executor/models/config.py
// at vllm-project/vllm 1936cf3841edb9781b06c50fc4daf4bac9d3b23e), whose
// MLAAttentionSpec page is block_size x 656 bytes (vllm/v1/kv_cache_interface.py
// at 001cabc1be16a59a70d720ed61a13b678c060a18). Other DSA models (GLM-5)
// are not in that map there: their fp8 latent is planned as 576 bytes.
func (vllm) KVRules(o quant.KVOptions, m *model.Model) quant.KVOptions {
	if m != nil && m.IndexerLayers > 0 {
		o.IndexerKeyBytes = dsaIndexerKeyBytes(m)
		o.ScaledFP8Latent = m.Architecture == "deepseek_v32"
	}
	return o
}

// CacheTypes: vLLM takes the common ones (--kv-cache-dtype fp8).
func (vllm) CacheTypes() []CacheType { return nil }

// VLLMAutoCache reports whether vLLM runs a plan's KV cache type kv as
// --kv-cache-dtype auto, a cache in the model's dtype: no type asked, or a
// 16-bit one. vLLM's explicit "bfloat16" and "float16" are no conversion:
// its cache update copies the model dtype's bits into a cache of the other
// name, so an fp16 model with --kv-cache-dtype bfloat16 answers
// "Parislocklock..." (https://github.com/vllm-project/vllm/pull/54338,
// open), and CacheConfig.cache_dtype documents bfloat16 as the override of
// DeepSeek-V3.2's fp8 default, "an invalid option for models that do not
// default to fp8" (vllm/config/cache.py at vllm-project/vllm
// 002f10e0cfa1373a19a0d2756598a34b700d20e5); float16 is a value only since
// https://github.com/vllm-project/vllm/pull/37199 (2026-03). Beside fp32
// weights auto is a cache of 4-byte values, which the planner counts.
func VLLMAutoCache(kv string) bool { return kv == "" || isSixteenBitCache(kv) }

// vllmFP8DefaultNote says, for a DeepSeek-V3.2 plan with no cache type
// asked, which cache vLLM's auto is counted as: the model's 16-bit type.
// vLLM's CacheConfig.cache_dtype documents the model as defaulting to fp8
// (vllm/config/cache.py at 002f10e0cfa1373a19a0d2756598a34b700d20e5), but
// DeepseekV32ForCausalLM.verify_and_update_config turns only an fp8 type
// asked into fp8_ds_mla (vllm/model_executor/models/config.py at
// 1936cf3841edb9781b06c50fc4daf4bac9d3b23e). auto became fp8_ds_mla on
// vLLM's main with https://github.com/vllm-project/vllm/pull/25988
// (2025-09-30) and was turned back with
// https://github.com/vllm-project/vllm/pull/27121 (2025-10-17, "Disable
// fp8 kv-cache by default for DeepSeek V3.2"); no source read pins the
// release that shipped the fp8 default (0.11.0 is the only candidate), so
// the sizing stays 16-bit and the note says so. "" for other models.
func vllmFP8DefaultNote(p *Placement) string {
	if p.Model == nil || p.Model.Architecture != "deepseek_v32" {
		return ""
	}
	return "vLLM: DeepSeek-V3.2's KV cache under --kv-cache-dtype auto is counted in the model's 16-bit type, as vLLM's code allocates it (only an fp8 type asked becomes fp8_ds_mla), though vLLM's documentation says this model defaults to fp8; vLLM's main defaulted it to fp8 between PR 25988 (2025-09-30) and PR 27121 (2025-10-17), a release carrying that (0.11.0 at most; not pinned) allocates the smaller fp8 cache; kv_cache_dtype fp8 plans that cache"
}

// isSixteenBitCache reports whether kv is one of the 16-bit common cache
// types (fp16, bf16).
func isSixteenBitCache(kv string) bool { return kv == "fp16" || kv == "bf16" }

// Levels implements Engine: vLLM runs the planner's levels as they are.
func (vllm) Levels(levels []quant.Level) ([]quant.Level, []string) { return levels, nil }

// CannotLoad implements Engine: vLLM runs every level but the GGUF types.
// Its GGUF loading is "highly experimental and under-optimized", has moved
// out of tree to the vllm-gguf-plugin, takes a single-file GGUF and wants
// the base model's tokenizer (docs/features/quantization/gguf.md of
// vllm-project/vllm, https://docs.vllm.ai/en/latest/features/quantization/gguf.html);
// the planner's vLLM memory and speed figures are not fitted on it, so a
// GGUF type is planned with llama.cpp, which loads it, rather than printed
// as a vllm serve line that may not start.
func (vllm) CannotLoad(l quant.Level) string {
	if l.IsGGUF() {
		return fmt.Sprintf("vLLM does not plan GGUF types (%s): its GGUF loading is experimental and out of tree (vllm-gguf-plugin); plan it with engine %s, which loads GGUF files, or ask vLLM for a Hugging Face precision (int4, fp8...)", l, NameLlamaCPP)
	}
	return ""
}

// vLLM's methods whose floors were read in vllm-project/vllm (paths under
// vllm/model_executor/layers/quantization/):
//   - fp8, the method of FP8 checkpoints and of --quantization fp8 on a
//     16-bit one: 80 (Fp8Config, fp8.py at 1436674bcb3f46f4c960d09334cf7dd1534943ca);
//     below 8.9 Fp8LinearMethod sets use_marlin and runs the weights
//     weight-only through its Marlin FP8 kernel, so an A100 (8.0) runs fp8
//     checkpoints though it has no FP8 tensor cores;
//   - awq: 75, "The AWQ kernel only supports Turing or newer GPUs" (AWQConfig,
//     awq.py at 92d756e9ccd74c7772d5d9936ac5631b811a961f); from 8.0 vLLM
//     runs such a checkpoint with awq_marlin;
//   - mxfp4 (gpt-oss): 80 (Mxfp4Config, mxfp4.py at 007d50058a06dec0f82472d63c819244d460c40d).
//
// GPTQ is left to the device's precision list: GPTQConfig returns 60 (gptq.py
// at e5dd90be38faf08d3f841f7ef1f4d7e64a70147d, exllama kernels), but newer
// vLLM loads GPTQ checkpoints as auto_gptq, whose linear method runs Marlin
// only (AutoGPTQLinearMethod calls verify_marlin_supported, auto_gptq.py at
// 055e47c28003156421365af985d676fc921cb075) and Marlin takes no type below
// 75 (query_marlin_supported_quant_types, utils/marlin_utils.py), which is
// the list's int4 floor. compressed-tensors and modelopt choose a kernel per
// scheme; their floors are not read here either.
var (
	vllmFP8   = quantMethod{"fp8", 80, "Fp8Config.get_min_capability, vllm/model_executor/layers/quantization/fp8.py; weight-only through Marlin below 8.9"}
	vllmAWQ   = quantMethod{"AWQ", 75, "AWQConfig.get_min_capability, vllm/model_executor/layers/quantization/awq.py"}
	vllmMXFP4 = quantMethod{"MXFP4", 80, "Mxfp4Config.get_min_capability, vllm/model_executor/layers/quantization/mxfp4.py"}
)

// vllmMethodFor is the quantization method vLLM runs model m's weights at
// level l with, among those whose floor is known: the method of the
// published checkpoint the plan loads (checkpointFor, as Load picks it), fp8
// or mxfp4 when none is published (vLLM quantizes a 16-bit checkpoint to fp8
// on load, quantArgs); ok is false otherwise (float levels, GGUF types, an
// int4/int8 level with no published checkpoint, GPTQ, compressed-tensors,
// modelopt).
func vllmMethodFor(m *model.Model, l quant.Level) (quantMethod, bool) {
	method := publishedMethod(m, l)
	switch {
	case l == quant.FP8 && (method == "" || method == "fp8"):
		return vllmFP8, true
	case l == quant.MXFP4 && (method == "" || method == "mxfp4"):
		return vllmMXFP4, true
	case l == quant.INT4 && method == "awq":
		return vllmAWQ, true
	}
	return quantMethod{}, false
}

// CannotRunDevice implements DeviceFloor: nothing runs below vllmCUDAFloor.
func (vllm) CannotRunDevice(d *registry.Device) string {
	cc, ok := cudaCapability(d)
	if !ok {
		return ""
	}
	return vllmCUDAFloor.refusal(d, cc)
}

// CannotRunLevel implements LevelRule for vLLM on CUDA: below vLLM's floor
// (vllmCUDAFloor) no level runs; above it the level's quantization method
// (vllmMethodFor) must meet its minimum compute capability. Float levels
// and methods whose floor is not known are left to the device's precision
// list (bf16 from 8.0 there). Other kinds have no rule here.
func (vllm) CannotRunLevel(d *registry.Device, m *model.Model, l quant.Level) (string, bool) {
	cc, ok := cudaCapability(d)
	if !ok {
		return "", false
	}
	if why := vllmCUDAFloor.refusal(d, cc); why != "" {
		return why, true
	}
	q, ok := vllmMethodFor(m, l)
	if !ok {
		return "", false
	}
	return q.refusal("vLLM", d, cc), true
}

// Parallelism implements Engine: tensor and pipeline parallel; weights
// offloaded with --cpu-offload-gb are read from host memory by the GPU
// (StreamsOffloadedWeights), the flag in tenths of a GiB.
func (vllm) Parallelism() Parallelism {
	return Parallelism{Tensor: true, StreamsOffloadedWeights: true, OffloadStep: cpuOffloadStep,
		BlockSplitRefusal: vllmBlockSplitRefusal, ExpertParallel: "--enable-expert-parallel"}
}

// vllmBlockSplitRefusal is vLLM's error for a block-quantized fp8
// checkpoint split into part blocks: Fp8LinearMethod.create_weights
// ("Weight output_partition_size = ... is not divisible by weight
// quantization block_n") and Fp8MoEMethod.create_weights ("The
// output_size of gate's and up's weight = 192 is not divisible by weight
// quantization block_n = 128"), vllm/model_executor/layers/quantization/
// fp8.py of ROCm/vllm @ f8c9a385. vLLM's MiniMax-M2.5 recipe says so of
// its 1536-wide experts: "Pure TP8 is not supported. For >4 GPUs use
// DP+EP or TP+EP" (vllm-project/recipes models/MiniMaxAI/MiniMax-M2.5.yaml
// @ 8959cf64).
const vllmBlockSplitRefusal = `vLLM refuses to load it ("is not divisible by weight quantization block_n")`

// cpuOffloadStep is the step in which vllm.Args writes --cpu-offload-gb: a
// tenth of a GiB. vLLM takes a float number of GiB ("The space in GiB to
// offload to CPU, per GPU", OffloadConfig.cpu_offload_gb in
// vllm/config/offload.py at vllm-project/vllm 00593fa7) and offloads
// int(cpu_offload_gb * 1024**3) bytes (create_offloader,
// vllm/model_executor/offloader/base.py at 03584c33).
const cpuOffloadStep = float64(1<<30) / 10

// Load is what vLLM loads for a plan at level l, with a note when no
// checkpoint at that level is published. Float levels load the float
// checkpoint (--dtype converts between bf16, fp16 and fp32); fp8 without an FP8 release
// loads it too and quantizes on load (--quantization fp8); int8/int4 need
// a pre-quantized checkpoint, except int8 on TPU, which vLLM's tpu_int8
// applies on load to the 16-bit one (quantArgs).
func (vllm) Load(p *Placement) (*Load, string) {
	m, l := p.Model, p.Level
	ck := checkpointFor(m, l, false)
	onLoad := isFloat(l) || l == quant.FP8 || (l == quant.INT8 && p.Kind == registry.KindTPU)
	if need := givenWeightsNeed(m, l, l == quant.FP8 || (l == quant.INT8 && p.Kind == registry.KindTPU), ck); need != "" {
		ld := &Load{Quant: string(l), Needs: need}
		if ck != nil {
			ld.Repo, ld.Method, ld.Source, ld.Switch = ck.Repo, ck.Method, ck.Source, releaseSwitch(m, ck, l, false)
		}
		return ld, "vLLM: needs " + need + "; serving the given weights would run them as stored"
	}
	if onLoad && (ck == nil || ck.Release != m.Releases.Named) {
		ck = preferNamed(m, ck, floatCheckpoint(m))
	}
	if ck != nil {
		return &Load{Quant: string(l), Repo: ck.Repo, Method: ck.Method, Source: ck.Source, Switch: releaseSwitch(m, ck, l, false)}, ""
	}
	if len(m.Checkpoints) == 0 {
		return nil, ""
	}
	name := m.Name
	switch {
	case l == quant.INT8 || l == quant.INT4:
		return unpublishedNeed(m, l), fmt.Sprintf("vLLM: no %s checkpoint of %s is published in the catalog; vLLM loads a pre-quantized one (AWQ, GPTQ, compressed-tensors) and reads the method from it", l, name)
	case l.IsGGUF():
		return nil, ""
	}
	return unpublishedNeed(m, l), fmt.Sprintf("vLLM: no %s checkpoint of %s is published in the catalog", l, name)
}

// Args are vllm serve's flags for a plan: parallel sizes, context, memory
// utilization, batch, quantization, KV cache type, offload and the
// multi-node executor (https://docs.vllm.ai/en/latest/configuration/engine_args/).
func (e vllm) Args(p *Placement) ([]string, []string, bool) {
	var a, notes []string
	pp := len(p.Stages)
	if p.Offloaded {
		pp = len(p.Stages) - 1
	}
	if tp := tensorParallelSize(p); tp > 1 {
		a = append(a, "--tensor-parallel-size", strconv.Itoa(tp))
	}
	if pp > 1 {
		a = append(a, "--pipeline-parallel-size", strconv.Itoa(pp))
	}
	if p.DP > 1 {
		// vLLM data-parallel deployment (docs/serving/data_parallel_deployment.md,
		// https://docs.vllm.ai/en/latest/serving/data_parallel_deployment/):
		// --data-parallel-size N runs N engine copies behind one endpoint,
		// each with --tensor-parallel-size GPUs; --max-num-seqs is per copy.
		a = append(a, "--data-parallel-size", strconv.Itoa(p.DP))
		if m := p.Model; m.ActiveParams > 0 && m.ActiveParams < m.Params {
			notes = append(notes, "vLLM: for a mixture-of-experts model --data-parallel-size makes the expert layers one group across all replicas (dp_size x tp_size devices, synchronised every step); this plan counts full independent replicas, so its memory is an upper bound and decode_tokens_per_s_total an optimistic figure")
		}
	}
	a = append(a, e.ContextSetting(), strconv.Itoa(p.Context))
	if p.Kind != registry.KindCPU && p.Kind != registry.KindNeuron { // Neuron: no such flag (tensorParallelSize)
		a = append(a, vllmShareFlag, strconv.FormatFloat(p.Memory.Fraction, 'f', -1, 64))
	}
	if p.Batch > 1 {
		a = append(a, "--max-num-seqs", strconv.Itoa(p.Batch))
	}
	qa, qn := e.quantArgs(p)
	a = append(a, qa...)
	notes = append(notes, qn...)
	if p.KVCacheDType == "fp8" || p.KVCacheDType == "int8" {
		a = append(a, "--kv-cache-dtype", "fp8")
	}
	if VLLMAutoCache(p.KVCacheDType) {
		notes = appendNonEmpty(notes, modelCacheNote(autoCache{title: "vLLM", fp32: "which this plan counts"}, p))
	}
	if p.KVCacheDType == "" {
		notes = appendNonEmpty(notes, vllmFP8DefaultNote(p))
	}
	if p.NoFlashAttention {
		notes = append(notes, "vLLM: no command-line flag turns flash attention off (vLLM chooses its attention backend); the memory figures assume attention without it")
	}
	if p.Offloaded {
		// Per GPU; a plan offloads on one GPU (OffloadedWeightBytes).
		a = append(a, vllmOffloadFlag, strconv.FormatFloat(offloadSteps(p.OffloadedWeightBytes, cpuOffloadStep)/10, 'f', 1, 64))
	}
	if p.MultiNode && p.Kind == registry.KindCPU {
		ca, cn, ok := cpuMultiHostArgs(p)
		return append(a, ca...), append(notes, cn...), ok
	}
	if p.MultiNode {
		a = append(a, "--distributed-executor-backend", "ray")
		if nodes := nodeVisibleDevices(p); nodes != "" {
			// Ray places the ranks on the GPUs each node's Ray
			// exposes, every one it has unless the variable limits
			// them where that node's Ray starts ("set the
			// CUDA_VISIBLE_DEVICES environment variable before starting
			// a Ray node", ROCR_VISIBLE_DEVICES for AMD GPUs:
			// https://docs.ray.io/en/latest/ray-core/scheduling/accelerators.html).
			notes = append(notes, "vLLM: Ray runs this plan's ranks on the GPUs each node's Ray exposes, all of the node's unless limited where Ray starts there; start Ray on each node with the plan's GPUs visible (set before ray start: "+nodes+")")
		}
		if p.DP > 1 {
			if local, ok := replicasOnHead(p); ok {
				// Run as printed on the head node without
				// --data-parallel-size-local, vLLM would start every
				// rank there ("Local DP size defaults to global DP size
				// if not set", EngineArgs.create_engine_config in
				// vllm/engine/arg_utils.py); the Ray data-parallel
				// backend starts the other ranks on the Ray cluster's
				// nodes from this one command, a rank's GPUs packed on
				// one node (CoreEngineActorManager's placement groups,
				// vllm/v1/engine/utils.py; both read at ROCm/vllm
				// f8c9a3852, a fork of vllm-project/vllm, and its
				// docs/serving/data_parallel_deployment.md).
				a = append(a, "--data-parallel-size-local", strconv.Itoa(local), "--data-parallel-backend", "ray")
			} else {
				notes = append(notes, "vLLM: replicas that each span several nodes need one vllm serve per node (--data-parallel-size-local, --data-parallel-start-rank, --data-parallel-address); vLLM's Ray data-parallel backend places each replica on one node; see vLLM's data parallel deployment guide")
			}
		}
	}
	return a, notes, true
}

// replicasOnHead is how many of a multi-node plan's replicas sit on the
// node of its first device (the head, where the command runs), and
// whether every replica sits on one node.
func replicasOnHead(p *Placement) (int, bool) {
	head, local := "", 0
	for i, u := range p.Units() {
		hosts := map[string]bool{}
		for _, s := range u {
			for _, d := range s.Devices {
				h, _, _ := strings.Cut(d.ID, "/")
				hosts[h] = true
				if i == 0 && head == "" {
					head = h
				}
			}
		}
		if len(hosts) != 1 {
			return 0, false
		}
		if hosts[head] {
			local++
		}
	}
	return local, true
}

// tensorParallelSize is vLLM's --tensor-parallel-size for a plan: the TP
// degree in devices, except on AWS Neuron, where vLLM shards over
// NeuronCores, not chips, and has no --gpu-memory-utilization
// (tensor_parallel_size is "the number of NeuronCores" in the NxD Inference
// vLLM user guide,
// https://awsdocs-neuron.readthedocs-hosted.com/en/latest/libraries/nxd-inference/developer_guides/vllm-user-guide.html).
// A chip's cores are the detected count (neuron-ls), else its
// generation's: Inferentia2 and Trainium 2 NeuronCores-v2 each
// (https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/inferentia2.html,
// .../trainium.html); Trainium2 8 NeuronCores-v3, which the runtime
// groups by 2 by default (logical NeuronCore config LNC=2,
// .../general/arch/neuron-features/logical-neuroncore-config.html), so 4
// cores to vLLM.
func tensorParallelSize(p *Placement) int {
	if p.Kind != registry.KindNeuron || len(p.Stages) == 0 || len(p.Stages[0].Devices) == 0 {
		return p.TP
	}
	return max(p.TP, 1) * neuronCores(p.Stages[0].Devices[0].Dev)
}

// neuronCoresPerChip is the NeuronCores of one chip by architecture.
var neuronCoresPerChip = map[string]int{"inferentia": 4, "inferentia2": 2, "trainium": 2, "trainium2": 4}

func neuronCores(d *registry.Device) int {
	if d.Cores > 0 {
		return d.Cores
	}
	if n := neuronCoresPerChip[d.Architecture]; n > 0 {
		return n
	}
	return 1
}

// quantArgs are the flags that make vLLM run the plan's level, and notes
// on what it must load (Load): a checkpoint that declares its quantization
// (FP8, MXFP4, AWQ, GPTQ) needs no flag, vLLM reads the method from its
// config; a 16-bit checkpoint is quantized to fp8 on load (--quantization
// fp8); on TPU int8 is vLLM's weight-only tpu_int8
// (vllm/model_executor/layers/quantization/tpu_int8.py,
// https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/layers/quantization/tpu_int8.py),
// not a GPTQ/AWQ checkpoint.
func (e vllm) quantArgs(p *Placement) ([]string, []string) {
	ld, missing := e.Load(p)
	declared := ld != nil && ld.Method != ""
	var a, notes []string
	switch p.Level {
	case quant.BF16, quant.FP16, quant.FP32:
		a = append(a, "--dtype", torchDType[p.Level])
	case quant.FP8:
		if !declared {
			a = append(a, "--quantization", "fp8")
		}
		if n := vllmWeightOnlyFP8Note(p); n != "" {
			notes = append(notes, n)
		}
	case quant.MXFP4:
		if !declared {
			notes = append(notes, "vLLM: mxfp4 needs a checkpoint published in MXFP4 (gpt-oss); vLLM reads the method from the checkpoint")
		}
	case quant.INT8, quant.INT4:
		switch {
		case p.Kind == registry.KindTPU && p.Level == quant.INT8:
			a = append(a, "--quantization", "tpu_int8")
			return a, []string{"vLLM on TPU: int8 is the weight-only tpu_int8 method, applied on load to the 16-bit checkpoint"}
		case missing != "": // also a declared checkpoint the given weights are not (Load.Needs)
			notes = append(notes, missing)
		case declared:
		default:
			notes = append(notes, fmt.Sprintf("vLLM: %s needs a checkpoint quantized to it (e.g. GPTQ/AWQ/compressed-tensors); vLLM reads the method from the checkpoint", p.Level))
		}
		return a, notes
	default:
		notes = append(notes, fmt.Sprintf("vLLM: %s is a GGUF type; vLLM's GGUF support is experimental", p.Level))
		return a, notes
	}
	if missing != "" {
		notes = append(notes, missing)
	}
	return a, notes
}

// vllmWeightOnlyFP8Note says how vLLM runs an fp8 plan on a GPU without
// FP8 tensor cores (compute capability 8.0 to 8.8, which vllmFP8 admits):
// Fp8LinearMethod sets use_marlin below 8.9 and the Marlin kernel multiplies
// 16-bit activations by the fp8 weights, dequantized in the kernel
// (vllm/model_executor/layers/quantization/fp8.py at
// 1436674bcb3f46f4c960d09334cf7dd1534943ca, "For GPUs that lack FP8 hardware
// support, we can leverage the Marlin kernel for fast weight-only FP8
// quantization"); "" when every GPU of p has FP8 tensor cores.
func vllmWeightOnlyFP8Note(p *Placement) string {
	for _, u := range p.Units() {
		for _, s := range u {
			for _, d := range s.Devices {
				if cc, ok := cudaCapability(d.Dev); ok && cc < 89 {
					return fmt.Sprintf("vLLM: %s (compute capability %s) has no FP8 tensor cores: vLLM runs fp8 weight-only through its Marlin kernel (Fp8LinearMethod, vllm/model_executor/layers/quantization/fp8.py): the weights take fp8's memory, the matrix products run on 16-bit activations",
						deviceName(d.Dev), cc)
				}
			}
		}
	}
	return ""
}

// torchDType is the --dtype value (vLLM and SGLang both take torch's
// names) that loads a checkpoint at a 16- or 32-bit float level.
var torchDType = map[quant.Level]string{quant.BF16: "bfloat16", quant.FP16: "float16", quant.FP32: "float32"}

// Env: the plan's GPUs made visible in placement order (visibleDevicesEnv);
// on the CPU the KV cache space the plan left (cpuKVCacheEnv).
func (vllm) Env(p *Placement) map[string]string {
	if p.Kind == registry.KindCPU {
		return cpuKVCacheEnv(p)
	}
	return visibleDevicesEnv(p)
}

// StartNotes warn when a device of a plan has less free memory than
// memory_fraction of its total: vLLM's worker refuses to start then ("Free
// memory on device ... is less than desired GPU memory utilization",
// Worker.init_device in vllm/v1/worker/gpu_worker.py, commit 35d5cda1
// above). The plan itself fits the free memory; the flag must be lowered.
func (vllm) StartNotes(p *Placement) []string {
	if p.Kind == registry.KindCPU {
		return nil
	}
	f := p.Memory.Fraction
	var short []string
	lowest := f
	for _, r := range p.Units() {
		for _, s := range r {
			for _, d := range s.Devices {
				free, total := d.Dev.MemoryFreeBytes, d.Dev.MemoryBytes
				if free == nil || total <= 0 || float64(*free) >= f*float64(total) {
					continue
				}
				short = append(short, fmt.Sprintf("%s has %s free of %s", d.ID, gib(*free), gib(total)))
				lowest = min(lowest, floorHundredth(float64(*free)/float64(total)))
			}
		}
	}
	if len(short) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("vLLM: refuses to start when less than --gpu-memory-utilization %s of a GPU's total memory is free, and %s; free those devices, or ask memory_fraction %s and plan again",
		fmtFraction(f), strings.Join(short, ", "), fmtFraction(lowest))}
}

// Command is `vllm serve MODEL` (https://docs.vllm.ai/en/latest/cli/serve.html):
// the directory or name the user gave, else the checkpoint the plan loads;
// the checkpoint the plan needs instead of the given weights (Load.Needs);
// nil when that one is not published or there is nothing to name (a model
// given by its size): never a placeholder a user would copy.
func (vllm) Command(s Served) []string {
	m, ok := servedModel(s)
	if !ok || m == "" {
		return nil
	}
	return []string{"vllm", "serve", m}
}

// CannotRunOnCPU implements CPUFloor: vLLM needs AVX-512 or AVX2 on an
// x86 CPU. Its CPU backend's build looks for avx512f, then avx2, in
// /proc/cpuinfo, and with neither (nor POWER, ARMv8, S390X or RISC-V)
// stops with "vLLM CPU backend requires AVX512, AVX2, Power9+ ISA, S390X
// ISA, ARMv8 or RISC-V support." (cmake/cpu_extension.cmake of
// vllm-project/vllm at 020450946f03086b1448089f1c84387970f36050; older
// releases required AVX-512, then AVX-512 or AVX2). Other architectures
// are not refused.
func (vllm) CannotRunOnCPU(v specs.CPUVector) string {
	if v.Arch != registry.CPUArchX86 || v.AVX2 || v.AVX512 {
		return ""
	}
	return fmt.Sprintf("vLLM's CPU backend needs AVX-512 or AVX2 on x86 (vllm-project/vllm cmake/cpu_extension.cmake); %s has %s at most", v.Family, v.Widest)
}

// SpeedModel implements SpeedModeled: vLLM's plans take the serving model.
func (vllm) SpeedModel() SpeedModel { return SpeedServing }

// ServingFit implements ServingFitted: vLLM's batch-1 rows fit the serving
// model's constants (calibration.Throughput.VLLM).
func (vllm) ServingFit() calibration.ServingFit { return calibration.ServingFitVLLM }

// ContextSetting implements CommandContextNamer: --max-model-len, the
// longest one request may be (Args).
func (vllm) ContextSetting() string { return "--max-model-len" }

// SequencesSetting implements CommandContextNamer: the context is each
// request's own.
func (vllm) SequencesSetting() string { return "" }
