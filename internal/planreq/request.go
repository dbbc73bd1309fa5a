// Package planreq is a planning request as the planner takes it: plain,
// checked values with no wire format and no planning state. internal/api/wire
// decodes the JSON of the contract ("Planning requests", docs/requests.md)
// into it; internal/plan plans it.
package planreq

import (
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Request limits: anything outside is a unit mistake or hostile input.
const (
	DefaultContextLength = 4096
	DefaultBatchSize     = 1
	MaxContextLength     = 1 << 24 // 16 Mi tokens
	MaxBatchSize         = 1 << 20
	// MaxTrainingCount bounds training.micro_batch, lora_rank,
	// num_devices and tensor_parallel.
	MaxTrainingCount = 1 << 16
	// MaxZeROStage is the last ZeRO stage: DeepSpeed defines stages 0 to 3
	// (https://www.deepspeed.ai/docs/config-json/, "zero_optimization.stage":
	// 0, 1, 2 or 3).
	MaxZeROStage    = 3
	MaxClusterNodes = 1024
	// MaxLayers bounds a model's layer count (the largest published models
	// have a few hundred): planning walks layers.
	MaxLayers         = 1 << 16
	MaxRequestDevices = registry.MaxDevices
	// MaxTensorParallel bounds tensor-parallel groups: all-reduce per layer
	// across more devices than this is not a plan any engine runs.
	MaxTensorParallel = 512
)

// Placements of a request ("placement"): how a plan with no devices,
// tensor_parallel_size or replicas named uses the devices.
const (
	// PlacementServing: for a serving engine with a paged KV pool (vLLM,
	// SGLang), tensor parallel within the high-bandwidth domain and
	// data-parallel replicas beyond it, chosen by the speed model at the
	// asked batch; the fewest devices for every other engine.
	PlacementServing = "serving"
	// PlacementFewest: the fewest devices that hold the model.
	PlacementFewest = "fewest"
)

// MaxPlanBytes (1 EiB) is more memory than any machine or cluster holds;
// estimates above it are refused rather than carried into int64 arithmetic.
const MaxPlanBytes = 1 << 60

// Request is a decoded planning request. The api layer fills Registry by
// detection when the host gave none (and no cluster).
type Request struct {
	ModelSpec model.Spec
	Model     *model.Model
	Quant     string // "auto" or a quant.Level name
	// ContextLength is the context planned; ContextCapped says no
	// context_length was given and the default was longer than the model's
	// maximum, so the model's maximum is planned.
	ContextLength int
	ContextCapped bool
	// ContextGiven: context_length was a number. ContextAuto: it was
	// "auto", the context the engine would choose itself (llama.cpp's
	// --fit: the model's trained context reduced to fit); a request with
	// no context_length gets that from an engine that chooses its own
	// (engine.Memory.ContextFloor) and DefaultContextLength from the others.
	// Either way the plan starts at ContextLength (DefaultContextLength,
	// the floor) and grows from there.
	ContextGiven, ContextAuto bool
	BatchSize                 int
	// KVCacheDType is "" (the model's 16-bit dtype), "fp16", "bf16", "fp8",
	// "int8", or a llama.cpp cache type ("q8_0", ...), lower case; the
	// planner checks the name (plan.Validate).
	KVCacheDType string
	Devices      []string // restrict to these answer ids; nil = all
	// Engine is the engine asked for, lower case ("" when none); the
	// planner checks the name (plan.Validate).
	Engine string
	// EngineVersion is engine_version: the release of the engine the plan
	// is for ("0.11.0"), "" when not asked (the engine's newest supported
	// one); the planner checks the form (plan.Validate).
	EngineVersion string
	CPUOffload    bool
	IncludeCPU    bool
	// NoFlashAttention is "flash_attention": false (llama.cpp -fa off): the
	// compute buffer holds a micro-batch's attention scores over the whole
	// context (quant.KVOptions.NoFlashAttention).
	NoFlashAttention bool
	// TensorParallel is tensor_parallel_size: the tensor-parallel degree
	// every plan must use (0: the planner chooses).
	TensorParallel int
	// MemoryFraction is memory_fraction: the share of each accelerator's
	// total memory the engine may use, overriding the engine's default
	// (vLLM's --gpu-memory-utilization 0.9); 0 when not asked.
	MemoryFraction float64
	// Replicas is the number of data-parallel replicas asked for (0: not
	// asked); ReplicasMax is "replicas": "max".
	Replicas    int
	ReplicasMax bool
	// Placement is "placement": PlacementServing (the default: a serving
	// engine with a paged KV pool spreads over its scale-up domain) or
	// PlacementFewest (the fewest devices that hold the model).
	Placement string
	// Registry is the machine planned on. RegistryShared says it was
	// decoded through regjson.DecodeShared and is never changed, so
	// planning may remember its pools across requests.
	Registry       *registry.Registry
	RegistryShared bool
	// Cluster holds one registry per node for a multi-node plan.
	Cluster []*registry.Registry
	// Training holds the "training" object of an estimate_training request;
	// nil when absent.
	Training *TrainingOptions
	// Draft is draft_model: the small model of speculative decoding
	// (llama.cpp -md), loaded beside the model; nil when none.
	Draft *Companion
	// Projector is mmproj: a multimodal projector file (llama.cpp
	// --mmproj); nil when none.
	Projector *Projector
}

// Companion is a second model a request loads beside its model: the model
// and the file it was given as ("" for a catalog name or a shape).
type Companion struct {
	Model *model.Model
	File  string
}

// Projector is a multimodal projector: its file (when given as one) and
// its bytes (the file's size, or size_bytes). OnHost is "offload": false,
// llama.cpp's --no-mmproj-offload: the projector stays in host memory.
type Projector struct {
	File   string
	Bytes  int64
	OnHost bool
	// Encoder is the vision encoder the file's header describes, nil when
	// it was given by size or its projector type is warmed up otherwise
	// (modelio.ReadProjectorGGUF); the plan then uses the model's own
	// (model.Model.VisionEncoder).
	Encoder *model.VisionEncoder
}

// TrainingOptions is the "training" object of an estimate_training request,
// as given: the planner applies defaults and checks the values.
type TrainingOptions struct {
	// Method: full (default), lora, qlora, prefix, dpo, rlhf (alias ppo),
	// distillation. dpo, rlhf and distillation train the policy/student
	// fully, or with LoRA adapters when lora_rank is given.
	Method string
	// Optimizer: adamw (default), adamw_8bit, sgd (no momentum, the torch
	// default), adafactor.
	Optimizer string
	// Precision: bf16 (mixed precision, default), fp16 (mixed), fp32.
	Precision string
	// SeqLen and MicroBatch default to the request's context_length and
	// batch_size.
	SeqLen     int
	MicroBatch int
	// GradientCheckpointing defaults to true for lora and qlora, what their
	// reference trainers run (qlora.py --gradient_checkpointing defaults to
	// true, https://github.com/artidoro/qlora/blob/main/qlora.py; PEFT's
	// prepare_model_for_kbit_training enables it by default,
	// https://huggingface.co/docs/peft/package_reference/peft_model), and to
	// false otherwise; an explicit false is honoured.
	GradientCheckpointing *bool
	// FlashAttention (default true): attention scores are not stored.
	FlashAttention *bool
	// ZeROStage 0-3 partitions optimizer states (1), gradients (2) and
	// weights (3) over the data-parallel devices; FSDP (full shard) is stage 3.
	ZeROStage int
	FSDP      bool
	// NumDevices is the number of devices trained on (default: every
	// device of the chosen pool); TensorParallel splits each layer over that
	// many of them (Megatron style), the rest is data parallel.
	NumDevices     int
	TensorParallel int
	// LoRARank (default 16) and LoRATargets (default q and v projections,
	// PEFT's default for Llama-family models; "all-linear" for every
	// projection) describe the adapters.
	LoRARank    int
	LoRATargets []string
	// BaseQuant (qlora only) is the precision the frozen base is stored in:
	// nf4 (the default, QLoRA's 4-bit NormalFloat, sized as int4), int8
	// (bitsandbytes 8-bit), or any level the planner knows, GGUF types
	// included (q4_k_m, q8_0, iq4_xs), sized by its tensor rules.
	BaseQuant string
	// Teacher (distillation), Reference (dpo, rlhf) and Reward/Critic (rlhf)
	// are resolved from the request's model specs; nil defaults to the
	// trained model itself.
	Teacher   *model.Model
	Reference *model.Model
	Reward    *model.Model
	Critic    *model.Model
}
