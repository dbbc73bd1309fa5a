// Package model is what planning needs to know about a model: parameter
// count and, where known, the transformer shape (layers, hidden size,
// attention heads, ...) and the kind of every layer. Models come from an
// embedded catalog of published configs (catalog.json, compiled into
// catalog_gen.go), from a Hugging Face config.json object, or from a bare
// parameter count. The package holds no JSON decoder and reads no files, so
// the planner that imports it has no JSON codec among its dependencies;
// internal/modelio resolves a request's model object, reading model files
// (.gguf and .safetensors headers, config.json) into a Model.
package model

import (
	"math"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// MaxParams bounds a parameter count given on the wire (10^14, far above any
// model in existence; larger is a unit mistake).
const MaxParams = 1e14

// Spec is the "model" object of a request: exactly one of Params, ParamsB,
// Name, Path, Config (Config may accompany Name/Params/ParamsB to override
// fields of the shape).
type Spec struct {
	Params  *float64       `json:"params,omitempty"`   // count of parameters
	ParamsB *float64       `json:"params_b,omitempty"` // billions
	Name    string         `json:"name,omitempty"`     // catalog name, case/punctuation-insensitive
	Path    string         `json:"path,omitempty"`     // .gguf file, .safetensors file, or a directory
	Config  map[string]any `json:"config,omitempty"`   // Hugging Face config.json fields
	// What a host fetched from a model repository (fetched.go): the
	// model.safetensors.index.json or one safetensors header beside
	// Config, or a GGUF file's header bytes on their own.
	SafetensorsIndex  map[string]any `json:"safetensors_index,omitempty"`
	SafetensorsHeader string         `json:"safetensors_header_base64,omitempty"`
	GGUFHeader        string         `json:"gguf_header_base64,omitempty"`
}

// Model is what planning knows about a model. A zero field is unknown.
type Model struct {
	Name string `json:"name,omitempty"`
	// Params is the total parameter count (all experts of a MoE, embeddings
	// and output head counted once each, the head not at all when tied).
	Params int64 `json:"params"`
	// ActiveParams is the count used per token (MoE: routed experts chosen
	// plus shared weights); equal to Params for a dense model.
	ActiveParams int64 `json:"active_params,omitempty"`

	Layers        int  `json:"layers,omitempty"`
	Hidden        int  `json:"hidden,omitempty"`
	Heads         int  `json:"heads,omitempty"`
	KVHeads       int  `json:"kv_heads,omitempty"`
	HeadDim       int  `json:"head_dim,omitempty"`
	Intermediate  int  `json:"intermediate,omitempty"`
	Vocab         int  `json:"vocab,omitempty"`
	TieEmbeddings bool `json:"tie_embeddings,omitempty"`
	MaxContext    int  `json:"max_context,omitempty"`
	// Rope is the rotary configuration of the attention layers (of the
	// global ones where SlidingRope is set), SlidingRope the
	// sliding-window layers' own where the config gives them one
	// (rope_parameters keyed by layer type), else the zero Rope; vLLM's
	// rotary tables follow them (engine.VLLMRopeCacheBytes).
	Rope        Rope `json:"rope,omitempty"`
	SlidingRope Rope `json:"sliding_rope,omitempty"`

	Experts         int `json:"experts,omitempty"`
	ExpertsPerToken int `json:"experts_per_token,omitempty"`
	SharedExperts   int `json:"shared_experts,omitempty"`
	// MoEIntermediate is the FFN width of one routed expert when it differs
	// from Intermediate (DeepSeek, Qwen3 MoE).
	MoEIntermediate int `json:"moe_intermediate,omitempty"`
	// DenseLayers is how many leading layers use a dense FFN in a MoE model
	// (DeepSeek first_k_dense_replace).
	DenseLayers int `json:"dense_layers,omitempty"`
	// SharedIntermediate is the FFN width of a MoE layer's shared experts
	// together where the config states it apart from the routed experts'
	// (shared_expert_intermediate_size: Qwen2-MoE, Qwen3-Next; Llama 4's
	// shared expert; granite-4.0-h's shared MLP); 0: SharedExperts experts
	// of the routed width.
	SharedIntermediate int `json:"shared_intermediate,omitempty"`
	// MoELatent is the width routed experts work in when a MoE layer
	// projects the hidden state down to it first (LatentMoE: Nemotron 3
	// Super and Ultra, moe_latent_size): each expert is MoELatent wide in
	// and out, and the layer adds the two projections hidden × MoELatent
	// and back; 0: experts work in the hidden width.
	MoELatent int `json:"moe_latent,omitempty"`

	// KVLoRARank and QKRopeHeadDim describe multi-head latent attention
	// (DeepSeek V2/V3): the KV cache holds a compressed latent of
	// KVLoRARank + QKRopeHeadDim values per token per layer.
	KVLoRARank    int `json:"kv_lora_rank,omitempty"`
	QLoRARank     int `json:"q_lora_rank,omitempty"`
	QKRopeHeadDim int `json:"qk_rope_head_dim,omitempty"`
	QKNopeHeadDim int `json:"qk_nope_head_dim,omitempty"`
	VHeadDim      int `json:"v_head_dim,omitempty"`
	// OGroups and OLoRARank describe DeepSeek-V4's output projection
	// (o_groups, o_lora_rank): the heads' outputs in OGroups groups, each
	// projected to OLoRARank values (wo_a), then all of them to the hidden
	// size (wo_b), in place of one heads × head_dim by hidden matrix
	// (attentionParams in shape.go). 0 for other models.
	OGroups   int `json:"o_groups,omitempty"`
	OLoRARank int `json:"o_lora_rank,omitempty"`

	// IndexerHeads, IndexerHeadDim and IndexerTopK describe the "lightning
	// indexer" of DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5:
	// index_n_heads, index_head_dim, index_topk): beside each MLA layer a
	// small attention of IndexerHeads query heads over one key head of
	// IndexerHeadDim scores the cached tokens and picks the IndexerTopK the
	// layer attends to (class Indexer in inference/model.py of
	// https://github.com/deepseek-ai/DeepSeek-V3.2-Exp at 6d8cb70d). Its
	// weights (indexerParams in shape.go) are part of Params, and every engine keeps its key per token per
	// layer in a cache of its own beside the latent (quant.KVCacheBytes).
	IndexerHeads   int `json:"index_n_heads,omitempty"`
	IndexerHeadDim int `json:"index_head_dim,omitempty"`
	IndexerTopK    int `json:"index_topk,omitempty"`
	// IndexerLayers is how many of the Layers layers run an indexer of
	// their own (and cache its keys): all of them, except where the config
	// lists indexer_types and a "shared" layer reuses the previous full
	// layer's choice (GLM-5.2: 21 of 78).
	IndexerLayers int `json:"indexer_layers,omitempty"`
	// UncachedLayers is how many of the last of the Layers layers keep no
	// KV cache: the MTP (nextn) layers a deepseek32 or glm-dsa GGUF counts
	// in block_count, whose latent llama.cpp's main context does not cache
	// (filter_mla, il < n_layer(), in llama_model::create_memory,
	// src/llama-model.cpp of https://github.com/unslothai/llama.cpp at
	// d32676d77426540327835040d5d3279728f0b4c8, a synced fork of
	// ggml-org/llama.cpp). 0 elsewhere: a Hugging Face config counts the
	// MTP modules apart (MTPParams), and a deepseek2 file's nextn layer is
	// cached there.
	UncachedLayers int `json:"uncached_layers,omitempty"`

	// LayerKinds is the pattern of the layers' kinds, repeated over the
	// Layers layers (layer i is LayerKinds[i mod len]): what each keeps
	// between tokens (full, sliding-window, chunked or latent attention, a
	// shared cache, a recurrent state) with the sizes its kind needs. nil:
	// every layer is DefaultLayer. A pattern, not a list, so that a period
	// (Gemma 3: five windowed layers, one global) costs its length whatever
	// the depth. Shared between copies of a catalog model, never changed
	// in place.
	LayerKinds []Layer `json:"layer_kinds,omitempty"`
	// SSMStateBytes is the width of one element of the recurrent layers'
	// SSM state where the config names its own dtype ("mamba_ssm_dtype":
	// Qwen3.5, Qwen3.6; "mamba_ssm_cache_dtype": Nemotron 3), 4 for
	// float32; 0: the model's dtype. vLLM keeps the state at that width
	// (MambaStateDtypeCalculator in
	// vllm/model_executor/layers/mamba/mamba_utils.py), whatever
	// --kv-cache-dtype says.
	SSMStateBytes int `json:"ssm_state_bytes,omitempty"`

	// MTPParams is the weights of the multi-token-prediction modules
	// (num_nextn_predict_layers: DeepSeek-V3, GLM-4.5; mtp_num_hidden_layers:
	// Qwen3-Next, Qwen3.5), stored in the checkpoint beside the model but
	// not part of Params: engines load them only for speculative decoding.
	MTPParams int64 `json:"mtp_params,omitempty"`
	// MTPLayers is how many MTP layers MTPParams counts (the config's
	// num_nextn_predict_layers or mtp_num_hidden_layers; 0 without).
	MTPLayers int `json:"mtp_layers,omitempty"`
	// VisionParams is the weights of a multimodal model's vision tower and
	// projector from its vision_config, counted tensor by tensor for the
	// families whose modeling code was read (Gemma 3, Mistral 3, Llama 4,
	// Kimi-K2.5: towerOf), estimated from a generic shape for the others,
	// not part of Params (the language model): vLLM and SGLang load them beside the language model
	// (engine.Memory.VisionInProcess, quant.VisionBytes; SGLang not Llama
	// 4's unless --enable-multimodal, engine.Memory.VisionOff), llama.cpp
	// from a separate --mmproj file.
	VisionParams int64 `json:"vision_params,omitempty"`
	// VisionWholeParams is the part of VisionParams that vLLM and SGLang
	// hold whole on every tensor-parallel rank rather than split: the patch
	// embedding (an nn.Conv3d or nn.Conv2d; Llama 4's is split), the
	// blocks' norms, learned position tables (Qwen3-VL, Llama 4, Kimi) and
	// projector parts built as plain parameters, nn.Linear or
	// ReplicatedLinear (Gemma 3's projection matrix, Mistral 3's
	// patch_merger, Kimi's projector: towerOf); the attention, MLP
	// and other merger layers are split over the ranks in both engines'
	// default mode (engine.Memory.VisionInProcess).
	VisionWholeParams int64 `json:"vision_whole_params,omitempty"`
	// VisionDeepstack is the number of Qwen3-VL deepstack levels
	// (vision_config deepstack_visual_indexes), for each of which vLLM
	// keeps an input buffer beside the tower (engine.VLLMDeepstackBytes).
	VisionDeepstack int `json:"vision_deepstack,omitempty"`
	// VisionEncoder is the shape of a vision tower that llama.cpp runs on
	// one fixed-size image (a SigLIP vision_config with image_size), from
	// which the projector's compute buffer is sized
	// (quant.ProjectorComputeBytes); nil for other towers.
	VisionEncoder *VisionEncoder `json:"vision_encoder,omitempty"`
	// VisionItem is the largest image the processor gives the tower, from
	// a fixed-size tower's config or a dynamic one's preprocessor limits
	// (applyPreprocessor), which vLLM's profile run encodes
	// (engine.VLLMEncoderPassOf); nil where neither says it.
	VisionItem *VisionItem `json:"vision_item,omitempty"`

	// Layout is how the checkpoint a config describes stores its weights,
	// from its quantization_config (readLayout); zero without one. A
	// catalog checkpoint records its own (Checkpoint.Layout).
	Layout WeightLayout `json:"layout,omitzero"`

	// FileQuant is the dominant tensor type of a model file ("Q4_K_M").
	FileQuant string `json:"file_quant,omitempty"`
	// FileWeightBytes is the exact size of the tensor data of a model file,
	// from the tensor types and shapes in its header.
	FileWeightBytes int64  `json:"file_weight_bytes,omitempty"`
	Architecture    string `json:"architecture,omitempty"`

	// Source says where the facts came from: "catalog: <url>", "gguf header",
	// "safetensors header", "config", "params only".
	Source string `json:"source,omitempty"`
	// ShapeEstimated is true when the shape was derived from the parameter
	// count by the fitted relation (see EstimateShape), not read from a config.
	ShapeEstimated bool     `json:"shape_estimated,omitempty"`
	Notes          []string `json:"notes,omitempty"`

	// Checkpoints are a catalog model's published checkpoints, the
	// publisher's first (catalog.json); shared, never changed.
	Checkpoints []Checkpoint `json:"-"`
	// NamedCheckpoint is the index in Checkpoints of the one the request
	// named by its repository ("meta-llama/Llama-3.1-405B-Instruct-FP8"),
	// -1 (or no checkpoints) when the model was named. A GGUF repository
	// holds a file per type, each listed as a checkpoint: this is the
	// first listed, and Named reports the others too.
	NamedCheckpoint int `json:"-"`
	// Releases are the releases of the catalog entry and the one the
	// request named (nameRelease), whose checkpoint an engine serves at
	// every level it publishes (engine.checkpointFor); zero for a model
	// the catalog did not give.
	Releases Releases `json:"-"`
}

// NativeCheckpoint is the checkpoint that fixes the model's native format:
// the one the request named, else the publisher's (the first); nil when
// the catalog lists none.
func (m *Model) NativeCheckpoint() *Checkpoint {
	if len(m.Checkpoints) == 0 {
		return nil
	}
	if i := m.NamedCheckpoint; i > 0 && i < len(m.Checkpoints) {
		return &m.Checkpoints[i]
	}
	return &m.Checkpoints[0]
}

// Named reports whether Checkpoints[i] is what the request named: the
// named checkpoint (NamedCheckpoint), or, where that is a GGUF
// repository, the file of another type in the same repository. A user
// who names ggml-org/gemma-3-27b-it-GGUF means its files, any of its
// types, not only the one the catalog lists first.
func (m *Model) Named(i int) bool {
	n := m.NamedCheckpoint
	if n < 0 || n >= len(m.Checkpoints) || i < 0 || i >= len(m.Checkpoints) {
		return false
	}
	if i == n {
		return true
	}
	named, ck := &m.Checkpoints[n], &m.Checkpoints[i]
	return named.IsGGUF() && ck.IsGGUF() && ck.Repo == named.Repo
}

// FromParams is the model of a request that gives a parameter count
// (params), with the shape from cfg when given, else estimated from the
// count.
func FromParams(params float64, cfg map[string]any) (*Model, error) {
	return fromCount(params, cfg, "params")
}

// FromParamsB is FromParams for a count in billions (params_b).
func FromParamsB(billions float64, cfg map[string]any) (*Model, error) {
	if !validCount(billions) {
		return nil, badCount("params_b", billions)
	}
	return fromCount(billions*1e9, cfg, "params_b")
}

func validCount(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && v > 0
}

func badCount(field string, v float64) error {
	return errs.New(errs.InvalidArgument, "model: %s must be a positive finite number, got %v", field, v)
}

// fromCount builds a model from a parameter count, with the shape from the
// config when one is given, else estimated from the count.
func fromCount(params float64, cfg map[string]any, field string) (*Model, error) {
	if !validCount(params) {
		return nil, badCount(field, params)
	}
	if params > MaxParams {
		return nil, errs.New(errs.InvalidArgument, "model: %s %.4g exceeds the limit of 1e14 parameters", field, params)
	}
	if params < 1 {
		return nil, errs.New(errs.InvalidArgument, "model: %s %.4g is less than one parameter", field, params)
	}
	n := int64(math.Round(params))
	if cfg != nil {
		m, err := FromConfig(cfg)
		if err != nil {
			return nil, err
		}
		setParams(m, n)
		m.Source = "params with config"
		return m, nil
	}
	m := &Model{Params: n, ActiveParams: n, Source: "params only"}
	EstimateShape(m)
	return m, nil
}

// setParams replaces the total count, scaling ActiveParams for a MoE so the
// active fraction the shape implies is kept.
func setParams(m *Model, n int64) {
	if m.Params > 0 && m.ActiveParams > 0 && m.ActiveParams != m.Params {
		frac := float64(m.ActiveParams) / float64(m.Params)
		m.ActiveParams = int64(math.Round(frac * float64(n)))
	} else {
		m.ActiveParams = n
	}
	m.Params = n
}

// EffectiveHeadDim is the per-head dimension: head_dim when the config gives
// one, else hidden / heads (the Hugging Face default). 0 when unknown.
func (m *Model) EffectiveHeadDim() int {
	if m.HeadDim > 0 {
		return m.HeadDim
	}
	if m.Hidden > 0 && m.Heads > 0 {
		return m.Hidden / m.Heads
	}
	return 0
}

// QKHeadDim is the width of one head's query-key product: qk_nope_head_dim
// + qk_rope_head_dim under multi-head latent attention, whose heads score
// over both parts and whose hidden / heads is no head's width (DeepSeek-V3:
// 128 + 64 = 192, not 7168 / 128 = 56; qk_head_dim in class MLA of
// inference/model.py, https://github.com/deepseek-ai/DeepSeek-V3 at
// 9b4e9788; GLM-5's config states head_dim 64 beside its MLA widths, which
// the MLA widths overrule), else EffectiveHeadDim. It is the width of the
// decompressed form engines run for prefill (LatentQKDim is the absorbed
// form's); the KV cache is sized from the latent, not from it.
func (m *Model) QKHeadDim() int {
	if m.KVLoRARank > 0 && m.QKNopeHeadDim > 0 {
		return m.QKNopeHeadDim + m.QKRopeHeadDim
	}
	return m.EffectiveHeadDim()
}

// ValueHeadDim is the width of one head's value, the vector its attention
// weights sum: v_head_dim under multi-head latent attention (DeepSeek-V3:
// 128; GLM-4.7-Flash: 256), else EffectiveHeadDim.
func (m *Model) ValueHeadDim() int {
	if m.KVLoRARank > 0 && m.VHeadDim > 0 {
		return m.VHeadDim
	}
	return m.EffectiveHeadDim()
}

// LatentQKDim and LatentValueDim are one head's query-key and value widths
// in the absorbed form of multi-head latent attention, in which each query
// head meets the cached latent itself (kv_lora_rank + qk_rope_head_dim
// scored, kv_lora_rank summed: DeepSeek-V3 576 and 512; the attn_impl
// "absorb" branch of class MLA in inference/model.py, DeepSeek-V3 at
// 9b4e9788). 0 and 0 without a latent.
func (m *Model) LatentQKDim() int {
	if m.KVLoRARank <= 0 {
		return 0
	}
	return m.KVLoRARank + m.QKRopeHeadDim
}

// LatentValueDim: see LatentQKDim.
func (m *Model) LatentValueDim() int { return max(m.KVLoRARank, 0) }

// EffectiveKVHeads is the number of key/value heads: num_key_value_heads,
// else num_attention_heads (multi-head attention, the HF default). 0 when
// unknown.
func (m *Model) EffectiveKVHeads() int {
	if m.KVHeads > 0 {
		return m.KVHeads
	}
	return m.Heads
}

// IsMoE reports whether the model routes tokens to experts.
func (m *Model) IsMoE() bool { return m.Experts > 1 }

// VisionEncoder is a ViT image encoder's shape as llama.cpp's mtmd reads it
// from an mmproj GGUF (clip.vision.image_size, .patch_size,
// .embedding_length, .feed_forward_length, .attention.head_count,
// .block_count; tools/mtmd/clip-impl.h of ggml-org/llama.cpp), the same
// values as the Hugging Face vision_config's.
type VisionEncoder struct {
	ImageSize    int `json:"image_size"`
	PatchSize    int `json:"patch_size"`
	Hidden       int `json:"hidden_size"`
	Intermediate int `json:"intermediate_size"`
	Heads        int `json:"num_attention_heads"`
	Layers       int `json:"num_hidden_layers"`
}

// Patches is the number of patches of one image: (image_size / patch_size)².
func (e *VisionEncoder) Patches() int {
	if e == nil || e.PatchSize <= 0 {
		return 0
	}
	side := e.ImageSize / e.PatchSize
	return side * side
}

// MaxPatchSide bounds a vision encoder's patches per image side (image_size
// / patch_size) read from a config or a file: 256 (65,536 patches) is four
// times Gemma 3's 64, and keeps n²·heads·4, the score matrix of
// quant.ProjectorComputeBytes, far inside an int64.
const MaxPatchSide = 256
