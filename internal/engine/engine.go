package engine

import (
	"github.com/ai-hwaccel/ai-hwaccel/internal/calibration"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/specs"
)

// Names of the built-in engines, as requests and answers spell them.
const (
	NameVLLM     = "vllm"
	NameLlamaCPP = "llama.cpp"
	// NameNone is the engine of plans no inference engine's rules apply
	// to: training estimates, and devices no engine runs on.
	NameNone = "none"
)

// CPUFloor is implemented by an engine whose CPU backend needs a vector
// extension some x86 CPUs lack (vLLM: AVX-512 or AVX2); llama.cpp, which
// builds for any x86-64, does not implement it.
type CPUFloor interface {
	// CannotRunOnCPU says why the engine cannot run on a CPU with vector v,
	// "" when it can.
	CannotRunOnCPU(v specs.CPUVector) string
}

// PromptChunker is implemented by a serving engine that runs a prompt in
// forward passes of at most a set number of tokens (vLLM's
// --max-num-batched-tokens, SGLang's chunked_prefill_size).
type PromptChunker interface {
	// PromptChunk is the engine's default for the most prompt tokens of one
	// pass on a GPU of totalBytes named name.
	PromptChunk(totalBytes int64, name string) int
	// PromptChunkSetting is the setting that sets it.
	PromptChunkSetting() string
}

// PromptRequestTimer is implemented by a serving engine whose time to
// first token carries a fixed time per request of its own, fitted on its
// own rows of internal/calibration/data/serving_prefill.json: what a
// client-side time to first token holds besides the prompt's forward
// passes (the HTTP request, tokenizing, scheduling, sampling, detokenizing
// and streaming the first token back).
type PromptRequestTimer interface {
	// PromptRequestSeconds is the engine's fixed time per request under
	// the fitted constants c.
	PromptRequestSeconds(c calibration.Throughput) float64
}

// ContextFitter is implemented by an engine that, asked to, chooses its
// own context at launch the way the planner chooses one when a request
// gives none: the longest with which one sequence fits its KV pool (vLLM's
// --max-model-len auto). llama.cpp's --fit, which the planner follows
// itself, is Memory.ContextFloor.
type ContextFitter interface {
	// ContextFitNote says what the engine does with the context of a plan
	// whose context the planner chose, and how it would choose its own.
	ContextFitNote() string
}

// CommandContextNamer is implemented by an engine whose command gives the
// context it runs as a setting of its own: a reader of the command (the
// CLI's headline and Room line) finds the context there by asking the
// engine for the setting, not by knowing each engine's flags.
type CommandContextNamer interface {
	// ContextSetting is the flag, without its value, the engine's command
	// gives its context with ("--max-model-len").
	ContextSetting() string
	// SequencesSetting is the flag of the number of sequences that share
	// that context, each holding its share ("-np": llama.cpp's -c is
	// split over its -np slots); "" where the context is each request's.
	SequencesSetting() string
}

// Versioned is implemented by an engine whose rules the planner follows
// by release, so that a request may name the release (engine_version).
type Versioned interface {
	// DefaultVersion is the release planned for when the request names
	// none.
	DefaultVersion() string
}

// WeightsSizer is implemented by an engine that loads a contract level as
// a file type of its own, of another size than the level's generic bits:
// llama.cpp loads int8 and int4 as the GGUF types Q8_0 and Q4_K_M
// (quant.Level.LlamaCPPLevel). The planner sizes a level's weights at
// WeightsLevel on that engine's pools, named or the default, and keeps the
// contract level as the answer's level.
type WeightsSizer interface {
	// WeightsLevel is the level whose bytes the engine loads for l.
	WeightsLevel(l quant.Level) quant.Level
	// SizedAsNote is the explanation's note that l, on devices of kinds
	// ("cuda_gpu and cpu"), is sized as WeightsLevel(l), in the engine's
	// own words (llama.cpp: "the GGUF type Q4_K_M").
	SizedAsNote(l quant.Level, kinds string) string
}

// SizedAsNote is engine e's note that level l is sized as another level on
// devices of kinds (WeightsSizer), "" where e sizes l as l.
func SizedAsNote(e Engine, l quant.Level, kinds string) string {
	s, ok := e.(WeightsSizer)
	if !ok || s.WeightsLevel(l) == l {
		return ""
	}
	return s.SizedAsNote(l, kinds)
}

// WeightsLevel is the level whose bytes engine e loads for level l: its
// own (WeightsSizer), else l; l when e is nil.
func WeightsLevel(e Engine, l quant.Level) quant.Level {
	if s, ok := e.(WeightsSizer); ok {
		return s.WeightsLevel(l)
	}
	return l
}

// DeviceFloor is implemented by an engine that runs nothing, at any level,
// on some devices of a kind it runs on (vLLM and SGLang below their CUDA
// compute capability floors). The planner keeps such a device out of the
// pool of the devices the engine runs on, so that a P40 does not refuse
// vLLM the A100 beside it.
type DeviceFloor interface {
	// CannotRunDevice says why the engine runs nothing on d, "" when it
	// runs (or d's capability is not known).
	CannotRunDevice(d *registry.Device) string
}

// CannotRunDevice is e's DeviceFloor answer for d, "" for an engine without
// one.
func CannotRunDevice(e Engine, d *registry.Device) string {
	if f, ok := e.(DeviceFloor); ok {
		return f.CannotRunDevice(d)
	}
	return ""
}

// LowerLevel is a level of an engine's own quality ladder below a refused
// one, with what it costs in quality, in words ("mean KL divergence ...").
type LowerLevel struct {
	Level   quant.Level
	Quality string
}

// Ladder is implemented by an engine whose quant auto walks levels of its
// own below int4 (llama.cpp's GGUF types, down to IQ1_S): a refusal at a
// level may then point to a lower one that fits.
type Ladder interface {
	// LevelsBelow lists the levels below l (as the engine loads l,
	// WeightsLevel) that a refusal may point to, best first.
	LevelsBelow(l quant.Level) []LowerLevel
	// QualityBelow is what level lo of the ladder costs in quality against
	// l, in the words of LevelsBelow, whether or not LevelsBelow lists it;
	// "" for a level not on the ladder.
	QualityBelow(lo, l quant.Level) string
}

// LevelsBelow is e's Ladder below l, nil for an engine without one.
func LevelsBelow(e Engine, l quant.Level) []LowerLevel {
	if s, ok := e.(Ladder); ok {
		return s.LevelsBelow(l)
	}
	return nil
}

// QualityBelow is e's Ladder's quality of lo against l, "" for an engine
// without one.
func QualityBelow(e Engine, lo, l quant.Level) string {
	if s, ok := e.(Ladder); ok {
		return s.QualityBelow(lo, l)
	}
	return ""
}

// LevelRule is implemented by an engine whose kernels, not a device's
// precision list (registry quantizations, internal/precision), decide which
// weights it runs on a device: llama.cpp's CUDA backend runs every GGUF type
// on GPUs whose list has no int4, and each of vLLM's quantization methods
// names its own minimum compute capability. The planner asks it of every
// device of a pool; where it has no rule (decided false), and for an engine
// without one, the device's precision list decides.
type LevelRule interface {
	// CannotRunLevel says why the engine cannot run the weights of model m
	// at level l on device d, "" when it can; decided is false when the
	// engine has no rule of its own for d and l.
	CannotRunLevel(d *registry.Device, m *model.Model, l quant.Level) (why string, decided bool)
}

// BudgetNamer is implemented by an engine whose share of a device's memory
// is set by a setting of its own (vLLM's --gpu-memory-utilization, SGLang's
// --mem-fraction-static, llama.cpp's --fit-target): a refusal names that
// share by it, beside the device's free memory, rather than calling the
// share free memory.
type BudgetNamer interface {
	// BudgetSetting is the setting, with its value, that sets the engine's
	// share of a device under rule m (m.Fraction the device's own
	// fraction): "--mem-fraction-static 0.897".
	BudgetSetting(m Memory) string
}

// BudgetSetting is e's BudgetNamer answer under m, "" for an engine
// without one.
func BudgetSetting(e Engine, m Memory) string {
	if n, ok := e.(BudgetNamer); ok {
		return n.BudgetSetting(m)
	}
	return ""
}

// StartupChargeNamer is implemented by an engine whose start-up profile
// charges each device memory beside the weights and the KV cache
// (Memory.ProfiledStartup: vLLM, VLLMStartup): a refusal names that charge
// and its parts in the engine's words.
type StartupChargeNamer interface {
	// StartupChargeLine names the charge of start-up profile s under
	// backend rule b on one device: charge bytes in all, graphs bytes of
	// them kept for graphs (VLLMStartup.Charge).
	StartupChargeLine(s VLLMStartup, b VLLMBackend, charge, graphs int64) string
}

// OffloadNamer is implemented by an engine that streams the weights it
// offloads (Parallelism.StreamsOffloadedWeights): a streamed plan's
// sentences name its settings as the engine's command writes them.
type OffloadNamer interface {
	// OffloadSetting is the flag that sets how much the engine offloads
	// ("--cpu-offload-gb").
	OffloadSetting() string
	// PoolSetting is the setting, without its value, of the share of each
	// device within which the engine holds the weights it keeps and sizes
	// its KV pool ("--mem-fraction-static"; BudgetNamer names it with its
	// value).
	PoolSetting() string
}

// HostOffload is a plan's placement of weights in host memory that the
// engine runs on the CPU (Parallelism.OffloadOnHost), for a
// HostOffloadNamer to name. The zero value places nothing.
type HostOffload struct {
	// WholeLayers: whole layers stay in host memory (the first ones where
	// Parallelism.HostLayersFirst), named by their setting without a count.
	WholeLayers bool
	// ExpertLayers > 0: the routed experts of the first ExpertLayers
	// layers stay in host memory, every other weight on the accelerators.
	ExpertLayers int
	// PartTensors > 0: so do that many expert tensors of layer PartLayer,
	// down first, then gate (PartialExpertOverride).
	PartLayer, PartTensors int
	// AllExperts: every layer's routed experts stay in host memory, and
	// the accelerators hold the other weights of the last GPULayers layers
	// only, the first ones staying whole in host memory.
	AllExperts bool
	GPULayers  int
}

// HostOffloadNamer is implemented by an engine that runs what it offloads
// on the CPU (Parallelism.OffloadOnHost): a plan's sentences name its host
// placement by the settings the engine's command writes for it.
type HostOffloadNamer interface {
	// HostOffloadSettings names o as the engine's command sets it
	// ("--n-cpu-moe 24", "-ngl 60 --cpu-moe", "-ngl" for whole layers); ""
	// for a placement it has no setting for.
	HostOffloadSettings(o HostOffload) string
	// HostOffloadAside is what builds of the engine without those settings
	// take instead, "" when nothing.
	HostOffloadAside(o HostOffload) string
}

// FitFloor is a plan whose context is the floor of the context an engine
// chooses itself (Memory.ContextFloor) and that keeps weights in host
// memory, as the planner found it, for the engine to tell
// (FitNamer.FitFloorLine).
type FitFloor struct {
	// Context is the tokens a sequence the plan runs, Floor the engine's
	// floor a sequence and Seqs the sequences that share the context (1:
	// one).
	Context, Floor, Seqs int
	// Trained is the model's trained context a sequence, negative when
	// unknown.
	Trained int
	// NeedBytes is what the plan's level needs with every tensor on the
	// accelerators, UsableBytes what they have.
	NeedBytes, UsableBytes int64
	// GPUs is the accelerators' stages, Where names them ("the GPU",
	// "the 2 GPUs"); GPULayers is the layers (whole, or their dense
	// weights) on them.
	GPUs      int
	Where     string
	GPULayers int
	// Host is what stays in host memory.
	Host HostOffload
}

// FitNamer is implemented by an engine that chooses its own context and
// placement at launch (Memory.ContextFloor: llama.cpp's --fit), which the
// planner follows: the sentences that say how a plan's context and devices
// were chosen tell the engine's own steps in its words.
type FitNamer interface {
	// FitChoice is how the engine chooses a context when given none, for
	// "chosen as ...": "llama.cpp's --fit chooses with no -c".
	FitChoice() string
	// FitFloorLine says why f's context is the floor and where the
	// engine's fit puts the rest (the answer's context line).
	FitFloorLine(f FitFloor) string
	// FitSpread is what the engine does shown every GPU of a machine, for
	// a placement line: "llama.cpp shown every GPU splits ...".
	FitSpread() string
	// FitDenseOnly names the step of the engine's fit that keeps the
	// dense weights of the last layers on the accelerators and every
	// routed expert in host memory: "as llama.cpp's --fit does (its step
	// 3)".
	FitDenseOnly() string
	// FitRounding names what rounds the context the engine's fit chooses
	// down to a multiple of LlamaFitContextStep, for "as ... rounds":
	// "llama.cpp's --fit".
	FitRounding() string
}

// ReportLayout is the layout of the KV pool whose start-up report the
// answer's engine_expect foretells (StartupReportNamer).
type ReportLayout int

const (
	// ReportPaged: one block pool over every attention layer at the whole
	// context, sized by the start-up profile inside the engine's fraction.
	ReportPaged ReportLayout = iota
	// ReportWindow: sliding-window layers in groups of their own.
	ReportWindow
	// ReportHybrid: recurrent layers beside attention.
	ReportHybrid
	// ReportStatic: a fraction that holds the weights and the pool only
	// (Memory.WorkspaceOutside).
	ReportStatic
	// ReportHost: a pool in host memory the command names.
	ReportHost
)

// StartupReportNamer is implemented by an engine whose start-up report the
// answer's engine_expect foretells (Memory.PagedKV: vLLM, SGLang): what
// those figures rest on, and the warning that the engine will refuse to
// start, are in its words.
type StartupReportNamer interface {
	// ReportSource says what the figures rest on for a pool of layout l
	// on backend b (VLLMBackend: the worker that sizes the pool).
	ReportSource(l ReportLayout, b VLLMBackend) string
	// ShortPoolWarning says that by the engine's own accounting, release
	// release, one sequence of context tokens does not fit the tokens
	// its KV pool holds, so that it refuses to start; "" where the
	// engine does not check.
	ShortPoolWarning(release string, context int, tokens int64) string
}

// ReserveWarner is implemented by an engine whose memory fraction holds
// the weights and its KV pool only, leaving the rest of each GPU to what
// the plan does not estimate (SGLang's CUDA graphs): it warns when the
// fraction asked leaves less of a GPU of totalBytes outside the pool than
// its own default would.
type ReserveWarner interface {
	// ReserveWarning says that fraction asked is above the engine's own
	// default def for this GPU and layout, and what that risks.
	ReserveWarning(asked, def float64, totalBytes int64) string
}

// ReleaseWarner is implemented by a Versioned engine whose rules the
// planner follows from a release on (vLLM: VLLMOldestVersion).
type ReleaseWarner interface {
	// ReleaseWarning says that release v is older than the rules the
	// planner follows; "" for a release in their range.
	ReleaseWarning(v Version) string
}

// Engine is everything the planner knows about one inference engine. The
// planner asks it, never compares engine names.
type Engine interface {
	// Name is the engine's name in requests and answers ("vllm").
	Name() string
	// Title is the engine's name in prose ("vLLM").
	Title() string

	// RunsOn reports whether the engine runs on devices of kind k.
	RunsOn(k registry.Kind) bool
	// Preference is how strongly the engine claims a device when the
	// request names no engine: the highest wins (Default).
	Preference(d Device) Preference
	// Memory is the engine's memory rule on an accelerator when the
	// request asks for fraction asked of each device (0: not asked). The
	// host's memory is never capped by an engine: the planner gives a CPU
	// fraction 1 and no margin.
	Memory(asked float64) Memory
	// BudgetSource explains rule m in one line, beginning with who (the
	// engine, or why it was chosen); "" leaves the planner's generic
	// sentence.
	BudgetSource(who string, m Memory) string

	// KVRules is o with the engine's own KV cache rules (sliding-window
	// cells) for model m. (A value in and out: the planner asks it for
	// every estimate, and a pointer through an interface would escape.)
	KVRules(o quant.KVOptions, m *model.Model) quant.KVOptions
	// CacheTypes are the KV cache types the engine adds to the ones every
	// request may ask for (CommonCacheTypes).
	CacheTypes() []CacheType

	// Levels maps the levels a request tries to what the engine runs, with
	// a note for each level it replaced; applied when the request names
	// the engine.
	Levels(levels []quant.Level) ([]quant.Level, []string)
	// CannotLoad says why the engine cannot run weights at level l, ""
	// when it can.
	CannotLoad(l quant.Level) string
	// Parallelism is how the engine spreads a model over devices.
	Parallelism() Parallelism

	// Load is what the engine loads to run p, with a note when no
	// checkpoint at p's level is published; nil when it loads nothing the
	// catalog knows.
	Load(p *Placement) (*Load, string)
	// Args are the command-line flags that realise p, with notes on what
	// they cannot say; ok is false when the engine cannot express p (the
	// notes say why).
	Args(p *Placement) (args, notes []string, ok bool)
	// Env is the environment the engine needs to run p on p's devices;
	// nil when none.
	Env(p *Placement) map[string]string
	// StartNotes warn about what the engine will do or refuse at start-up
	// on p's devices.
	StartNotes(p *Placement) []string
	// Command is the program and model arguments that precede Args on a
	// command line; nil when the engine has no program.
	Command(s Served) []string
}

// Device is what an engine reads of a device to claim it by default.
type Device struct {
	Kind registry.Kind
	// SharedMemory: the device shares host memory (an iGPU or APU).
	SharedMemory bool
	// GGUF: the request points at a GGUF model file or a GGUF quant type.
	GGUF bool
	// ComputeCapability is a CUDA device's compute capability as the
	// registry reports it ("6.1"); "" or a value that is not one (another
	// kind, or detection could not read it) sets no floor: an engine then
	// claims the device as if it met its own.
	ComputeCapability string
}

// Preference is how strongly an engine claims a device when the request
// names no engine.
type Preference int

// Preferences, weakest first. Of equal preferences the engine registered
// first wins.
const (
	// Never: the engine is never a default.
	Never Preference = iota
	// Fallback: the default when no other engine claims the device.
	Fallback
	// Secondary: the default when no primary engine runs on the device.
	Secondary
	// Primary: the server the device's machines usually run.
	Primary
	// Preferred: the device or the request's model file calls for this
	// engine above a primary one.
	Preferred
)

// Memory is an engine's memory rule on one accelerator.
type Memory struct {
	// Fraction of the device's total memory the engine may use (1: no
	// cap).
	Fraction float64
	// MarginBytes are left free on the device.
	MarginBytes int64
	// OverheadBytes is the engine process's memory on a device of each
	// kind beyond its buffers (its GPU context and libraries); a kind not
	// listed takes the planner's default (quant.PerDeviceOverheadBytes).
	OverheadBytes map[registry.Kind]int64
	// FitOverheadBytes is the part of OverheadBytes the engine finds
	// already used when it measures a device's free memory to place a
	// model (llama.cpp's --fit, after creating its CUDA context): the rest
	// is allocated later, out of MarginBytes. A kind not listed: all of it.
	FitOverheadBytes map[registry.Kind]int64
	// HostTokenEmbeddings: the token embedding table stays in host memory
	// whatever the device (llama.cpp looks tokens up on the CPU).
	HostTokenEmbeddings bool
	// ContextFloor: with no context asked, the engine chooses its own, the
	// model's trained context reduced to fit down to this many tokens
	// (llama.cpp's --fit); 0: it runs the context it is given.
	ContextFloor int
	// PagedKV: the engine serves its sequences from one KV pool shared in
	// blocks (vLLM's PagedAttention), so the batch a request asks for is
	// concurrency: the pool must hold one sequence at full context, the
	// engine caps the sequences it runs at once (--max-num-seqs) and
	// queues or preempts the rest when the pool is full. Without it every
	// sequence of the batch has its full-context cache reserved.
	PagedKV bool
	// FractionOf, when set, is the engine's own fraction for a device of
	// that total memory, used instead of Fraction (SGLang's
	// --mem-fraction-static grows with the GPU's memory); nil when the
	// fraction does not depend on the device or was asked.
	FractionOf func(totalBytes int64) float64
	// FractionAt, when set, is the engine's own fraction for a layout: the
	// flag a plan is started with (SGLang reserves memory per parallel
	// rank, for its CUDA graphs, and more for MLA models). FractionOf is
	// its value on one CUDA GPU without MLA.
	FractionAt func(Layout) float64
	// LinkedGroupBytes is the memory each rank of a tensor-parallel group
	// joined by a high-bandwidth link (NVLink, xGMI) holds for the
	// engine's process groups (custom all-reduce and NCCL buffers) before
	// the engine measures its free memory; 0: none counted.
	LinkedGroupBytes int64
	// ProfiledStartup: the engine profiles a forward pass at start-up and
	// keeps what it measures beside the weights (the activation peak, the
	// memory allocated outside torch and, by release, its CUDA graphs)
	// inside Fraction with the KV pool, which gets the rest (vLLM:
	// VLLMStartupOf, VLLMStartup.Charge); the planner charges each device
	// that start-up profile.
	ProfiledStartup bool
	// WorkspaceOutside: the engine reserves its activations and CUDA
	// graphs outside Fraction, which holds the weights and the KV pool
	// only (SGLang's --mem-fraction-static); without it they sit inside
	// (vLLM's --gpu-memory-utilization). The planner then fits a plan as
	// the engine divides the device: the weights and the KV cache within
	// Fraction of the memory free after its CUDA context, the activations
	// within the rest (internal/plan's staticPool and restHolds).
	WorkspaceOutside bool
	// VisionInProcess: the engine builds a multimodal model's vision tower
	// and projector (model.VisionParams) in its own process, beside the
	// language model, on every pipeline stage, its linear layers split over
	// the stage's tensor-parallel ranks and its patch embedding, norms,
	// position table and plain-parameter projector parts whole on each
	// (model.VisionWholeParams; vLLM's --mm-encoder-tp-mode
	// data, which holds it all whole, is opt-in and not planned), and keeps
	// it at 16 bits whatever the level (VisionBytes). Without it the tower
	// is not the engine's weights: llama.cpp loads it from a separate
	// --mmproj file, counted only when the request gives one.
	VisionInProcess bool
	// VisionOff are the model types (model.Model.Architecture) whose tower
	// the engine's default launch does not build although VisionInProcess:
	// it serves them text-only unless a flag asks for images (SGLang's
	// --enable-multimodal for Llama 4, sglangTowerOff). nil: it builds every
	// multimodal model's tower.
	VisionOff []string
}

// Layout is what an engine's own memory fraction may depend on
// (Memory.FractionAt).
type Layout struct {
	// TotalBytes is the total memory of the plan's smallest device.
	TotalBytes int64
	// Kind is the devices' kind.
	Kind registry.Kind
	// TP and PP are the tensor- and pipeline-parallel degrees (1: none).
	TP, PP int
	// Latent: the model caches an MLA latent (kv_lora_rank).
	Latent bool
}

// Parallelism is how an engine spreads a model over devices.
type Parallelism struct {
	// Tensor: the engine splits a layer's tensors over devices; without
	// it the engine splits whole layers only (pipeline).
	Tensor bool
	// NoTensorWhy says why tensor parallelism is refused ("llama.cpp
	// splits layers, not tensors, across devices"), and Instead what to
	// ask for instead ("engine vllm"); both "" when Tensor. InsteadEngine
	// is the engine Instead names, if it names one ("vllm"), so that an
	// error can name it as the request's option (plan.HintEngine).
	NoTensorWhy, Instead, InsteadEngine string
	// OffloadOnHost: layers kept in host memory run on the CPU (llama.cpp
	// computes the layers -ngl leaves out with its CPU backend); without
	// it offloaded weights cross PCIe to the GPU every step (vLLM's
	// --cpu-offload-gb).
	OffloadOnHost bool
	// StreamsOffloadedWeights: the engine keeps the weights it offloads in
	// pinned host memory and the accelerator reads them over PCIe in every
	// forward pass, every layer still running on the accelerator, whose
	// KV cache stays there whole (vLLM's --cpu-offload-gb: UVAOffloader,
	// vllm/model_executor/offloader/uva.py at vllm-project/vllm 00593fa7).
	// SGLang's --cpu-offload-gb keeps them in host memory too, copying
	// each offloaded layer's to the accelerator in its forward pass
	// (OffloadCopiedPerPass). Its plans offload only the bytes the
	// accelerator cannot hold.
	StreamsOffloadedWeights bool
	// OffloadStep is the step, in bytes, of the flag that sets how much a
	// StreamsOffloadedWeights engine offloads: a tenth of a GiB for vLLM,
	// whose --cpu-offload-gb is a float, a GiB for SGLang, whose is an
	// integer (OffloadBytes).
	OffloadStep float64
	// OffloadCopiedPerPass: the engine copies an offloaded layer's weights
	// to the accelerator in the layer's forward pass, all of them whatever
	// a mixture-of-experts router picks, and holds that copy while the
	// layer runs (SGLang: OffloaderV1.maybe_offload_to_cpu in
	// python/sglang/srt/utils/offloader.py at sgl-project/sglang
	// 046a9e40); without it the accelerator reads them in place, only the
	// bytes a step touches (vLLM's UVA).
	OffloadCopiedPerPass bool
	// HostLayersFirst: with layers in host memory the engine keeps the
	// first layers on the host and the last ones on the accelerators
	// (llama.cpp: i_gpu_start = n_layer - n_gpu_layers in load_tensors,
	// src/llama-model.cpp of ggml-org/llama.cpp); without it the
	// accelerators hold the first layers.
	HostLayersFirst bool
	// ExpertsOnHost: the engine can keep a mixture-of-experts model's
	// routed experts in host memory and every other weight on the
	// accelerators (llama.cpp's --n-cpu-moe and --cpu-moe), so the planner
	// tries that placement before offloading whole layers.
	ExpertsOnHost bool
	// ProcessPerReplica: the engine has no data-parallel mode, so a plan
	// of replicas runs one process per replica, each seeing only its
	// replica's devices (llama.cpp), and the command printed is one
	// replica's; without it one command serves every replica (vLLM's
	// --data-parallel-size, SGLang's --dp-size).
	ProcessPerReplica bool
	// BlockSplitRefusal, where set, says that the engine refuses to load a
	// checkpoint stored in square blocks (fp8 weight_block_size) with a
	// tensor-parallel size that leaves a rank part of a block of an FFN
	// matrix, in the engine's words; the planner then plans only the
	// sizes that split every FFN width into whole blocks. ExpertParallel
	// is the engine's flag that keeps routed experts whole on a rank
	// instead, which the planner does not plan.
	BlockSplitRefusal, ExpertParallel string
}

// Load is what an engine loads to run a plan: a Hugging Face repository
// (and, for a GGUF engine, the file and type) from the catalog's published
// checkpoints (internal/model/catalog.json).
type Load struct {
	Quant    string // level of the weights loaded
	Repo     string // Hugging Face repository id; "" when none is published
	File     string // GGUF file within Repo
	GGUFType string // GGUF file type the level means ("Q4_K_M")
	Method   string // quantization method the checkpoint declares; "" for 16-bit weights
	Source   string
	// Needs says which checkpoint the plan needs when the weights the user
	// gave (a folder, a file, a fetched repository) are stored at another
	// level than the plan's and the engine cannot convert them on load
	// (givenWeightsNeed); "" otherwise. A command then serves Repo, or is
	// withheld when Repo is "".
	Needs string
	// Switch is the warning that Repo is a checkpoint of another release
	// of the catalog entry than the request named, the only one published
	// at the level (releaseSwitch); "" otherwise.
	Switch string
}

// Served is the model a command line serves: what the user gave and what
// the plan loads.
type Served struct {
	// Dir is the model directory or name the user gave (vllm serve DIR).
	Dir string
	// File is the model file the user gave (llama-server -m FILE).
	File string
	// Load is what the plan loads; zero when nothing is published.
	Load Load
}

// Placement is a fitting plan as an engine sees it: which weights, on
// which devices, split how.
type Placement struct {
	Model *model.Model
	Level quant.Level
	// Kind is the kind of the plan's accelerators (registry.KindCPU for a
	// plan on host memory alone).
	Kind   registry.Kind
	Memory Memory
	// Stages are replica 0's pipeline stages (the whole plan without
	// replicas); Replicas hold every replica's when DP > 0.
	Stages   []Stage
	Replicas [][]Stage
	TP, DP   int
	// Layers is the model's transformer layers.
	Layers int
	// Offloaded: the last stage is host memory (cpu_offload), holding
	// OffloadedWeightBytes of weights.
	Offloaded            bool
	OffloadedWeightBytes int64
	// OffloadFits, where the request allowed cpu_offload (whether or not
	// this plan offloads), reports whether level l fits with it on the
	// plan's accelerators and the host; nil where it did not. A hint then
	// does not tell the caller to ask for cpu_offload again, and names
	// only a level that fits.
	OffloadFits func(l quant.Level) bool
	// HostShared: the plan's accelerators share the host's memory (a DGX
	// Spark's GB10, an Apple GPU, an APU), so cpu_offload would add none
	// beside it; a hint does not name cpu_offload as a way to more room.
	HostShared bool
	// CPUMoE > 0: the host holds only the routed experts of the first
	// CPUMoE layers and the accelerators every layer's other weights
	// (llama.cpp --n-cpu-moe); CPUMoEPart > 0: it also holds that many
	// expert tensors of layer CPUMoE, down first, then gate (-ot,
	// PartialExpertOverride).
	CPUMoE, CPUMoEPart int
	// AllExpertsOnHost: the host holds every layer's routed experts and the
	// accelerators only the other weights of the layers they hold
	// (llama.cpp -ngl K --cpu-moe, --fit's step 3).
	AllExpertsOnHost bool
	// Context and Batch are the tokens per sequence and the sequences one
	// replica serves.
	Context, Batch int
	// KVCacheDType is the request's kv_cache_dtype ("": the model's
	// 16-bit type).
	KVCacheDType string
	// NoFlashAttention: the request turned flash attention off.
	NoFlashAttention bool
	// MultiNode: the plan spans several machines of a cluster.
	MultiNode bool
	// Draft is the request's draft model (speculative decoding), nil when
	// none; Projector its multimodal projector (mmproj), nil when none.
	Draft     *Companion
	Projector *ProjectorFile
	// HostKVSpaceBytes, on a plan on host memory alone (Kind
	// registry.KindCPU: one host, or one per pipeline stage or replica of a
	// cluster), is the room it leaves for the KV cache on the host with the
	// least: a host's usable memory less the weights, activations and
	// overhead it places on it (vLLM's VLLM_CPU_KVCACHE_SPACE, one figure
	// for every rank: vllmcpu.go); 0 elsewhere.
	HostKVSpaceBytes int64
	// FitTargetBytes are, per accelerator of Stages in their order, the
	// bytes an engine that places the model itself (llama.cpp's --fit)
	// must leave free on it for its placement to stay within the plan's
	// budget: the engine's margin, or more where a memory fraction caps
	// the device below its free memory. Empty: the margin on each.
	FitTargetBytes []int64
}

// Companion is a draft model as an engine loads it: the model, its file
// ("" when named from the catalog or by shape) and the level it is sized at.
type Companion struct {
	Model *model.Model
	File  string
	Level quant.Level
}

// ProjectorFile is a multimodal projector: its file ("" when given by size
// only) and whether it stays in host memory (--no-mmproj-offload).
type ProjectorFile struct {
	File   string
	OnHost bool
}

// Units are the stages of every replica (one replica, Stages, without
// replicas).
func (p *Placement) Units() [][]Stage {
	if len(p.Replicas) > 0 {
		return p.Replicas
	}
	return [][]Stage{p.Stages}
}

// Stage is one pipeline stage: TP devices holding layers [Start, End).
type Stage struct {
	Devices    []PlacedDevice
	Start, End int
}

// PlacedDevice is one device of a plan.
type PlacedDevice struct {
	// ID is the device's id in the answer ("node1/cuda:0" in a cluster).
	ID  string
	Dev *registry.Device
}
