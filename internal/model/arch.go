package model

import "strings"

// Arch is what planning needs to know about an architecture beyond the
// shape its config states. The zero value is a Llama-style decoder: gated
// FFN, separate q/k/v projections, untied embeddings unless the config
// says so, every sliding-window layer listed or all layers windowed.
type Arch struct {
	// PlainMLP: the FFN is two h×I matrices (up, down) with no gate, the
	// GELU MLP of GPT-2 and Falcon; gated units (SwiGLU/GeGLU) have three.
	PlainMLP bool
	// Falcon: llama.cpp's LLM_ARCH_FALCON: one fused query-key-value
	// tensor (attn_qkv) and the Falcon exceptions of its k-quant mixes
	// (llama_tensor_get_type in src/llama-quant.cpp of ggml-org/llama.cpp).
	Falcon bool
	// FusedQKV: the GGUF file stores each layer's query, key and value
	// projections as one attn_qkv tensor, which llama-quant types as a
	// whole (Falcon's query_key_value; phi3's self_attn.qkv_proj, mapped
	// to blk.N.attn_qkv by gguf-py/gguf/tensor_mapping.py and kept fused
	// by Phi3MiniModel in conversion/phi.py of ggml-org/llama.cpp).
	FusedQKV bool
	// FusedGateUp: the GGUF file stores each layer's gate and up
	// projections as one ffn_up tensor twice the intermediate width
	// (phi3's mlp.gate_up_proj: tensor_mapping.py, and {n_embd, 2 * n_ff}
	// in src/models/phi3.cpp of ggml-org/llama.cpp).
	FusedGateUp bool
	// Llama70B: llama.cpp types a model of this architecture with 80 layers
	// as LLM_TYPE_70B, which its k-quant mixes treat apart (llama
	// architecture; src/llama-model.cpp load_hparams).
	Llama70B bool
	// TiedByDefault: the transformers config class defaults
	// tie_word_embeddings to True (PretrainedConfig's default, kept by
	// Gemma/Gemma 2/Gemma 3, Falcon, GPT-2; the Llama, Mistral, Mixtral,
	// Qwen2 and DeepSeek classes set False).
	TiedByDefault bool
	// GlobalEvery: when the config does not list its layer types, every
	// GlobalEvery-th layer attends globally and the others use the
	// sliding window (0: every layer uses the window). Gemma 2 alternates
	// (arXiv 2408.00118 §2: "alternate between a local sliding window
	// attention and global attention in every other layer"); llama.cpp sets
	// the same patterns when it loads a GGUF file, which does not list them
	// (set_swa_pattern in src/llama-model.cpp: 2 for gemma2 and gpt-oss, 6
	// for gemma3).
	GlobalEvery int
	// GGUFGlobalEvery is GlobalEvery for a GGUF file of the architecture,
	// where it differs (Gemma 3 and gpt-oss configs list their layer types;
	// their GGUF files do not).
	GGUFGlobalEvery int
	// LlamaCPPFullWindow: llama.cpp ignores the sliding window on load and
	// caches the whole context on every layer ("Phi SWA is currently
	// disabled", https://github.com/ggml-org/llama.cpp/pull/13676).
	LlamaCPPFullWindow bool
	// GGUF is the architecture's general.architecture in a GGUF file where
	// it differs from the Hugging Face model_type.
	GGUF string
	// GatedAttention: the query projection also yields a sigmoid gate on
	// the attention output, doubling q_proj (Qwen3-Next and Qwen3.5's
	// attn_output_gate: transformers
	// src/transformers/models/qwen3_next/modeling_qwen3_next.py,
	// Qwen3NextAttention, q_proj of num_heads × head_dim × 2), or a
	// separate gate projection of q_proj's shape, the same weights (Muse
	// Glimmer's gate_proj).
	GatedAttention bool
	// DenseMTPWithHead: each multi-token-prediction layer is a dense decoder
	// layer (intermediate_size) with an output head of its own (vocab ×
	// hidden and its norm), not one more layer like the model's last that
	// shares the model's head (mtpParams). Step-3.5's MTP layers sit past
	// num_hidden_layers, outside moe_layers_enum, and each carries a
	// SharedHead with its own head (Step3p5AMultiTokenPredictorLayer in
	// vllm/model_executor/models/step3p5_mtp.py and Step3p5DecoderLayer in
	// step3p5.py of vllm-project/vllm).
	DenseMTPWithHead bool
	// NoRotary: the family's attention layers have no rotary embedding,
	// so vLLM builds no rotary table for them (engine.VLLMRopeCacheBytes):
	// learned or ALiBi positions (GPT-2's wpe, BLOOM's ALiBi,
	// OPT's learned positions, StarCoder's wpe), or none at all
	// (NemotronHAttention in vllm/model_executor/models/nemotron_h.py at
	// vllm-project/vllm 00b08dc44519a82cbdd9061d92d1226985094622 builds no
	// rotary_emb and takes no positions).
	NoRotary bool
	// VLLMRotaryFloat32: vLLM builds the family's rotary table in float32
	// whatever the model's dtype (OAIAttention passes dtype=torch.float32
	// to get_rope in vllm/model_executor/models/gpt_oss.py at
	// vllm-project/vllm 0025d69bcf08bb1b135103167f0bbc82b9af6e69).
	VLLMRotaryFloat32 bool
	// VLLMLocalRotary: the sliding-window layers build a second table of
	// the default kind beside the global layers', where the config gives
	// them no rotary configuration of their own (Model.SlidingRope;
	// Gemma3Attention in
	// vllm/model_executor/models/gemma3.py at vllm-project/vllm
	// 004dc924965cf24a4ade341394c45290169dd2ba: rope_local_base_freq and
	// {"rope_type": "default"} on sliding layers, the config's rope_theta
	// and rope_scaling on global ones, both at max_position_embeddings).
	VLLMLocalRotary bool
}

// arches is every architecture quirk planning knows, keyed by Hugging Face
// model_type; a model_type not listed is the zero Arch, "" (a model given
// without one) is planned as llama.
var arches = map[string]Arch{
	"":            {Llama70B: true},
	"llama":       {Llama70B: true},
	"falcon":      {PlainMLP: true, Falcon: true, FusedQKV: true, TiedByDefault: true},
	"gpt2":        {PlainMLP: true, TiedByDefault: true, NoRotary: true},
	"gpt_neox":    {PlainMLP: true},
	"gptj":        {PlainMLP: true},
	"bloom":       {PlainMLP: true, NoRotary: true},
	"opt":         {PlainMLP: true, NoRotary: true},
	"starcoder":   {PlainMLP: true, NoRotary: true},
	"t5":          {PlainMLP: true},
	"gemma":       {TiedByDefault: true},
	"gemma2":      {TiedByDefault: true, GlobalEvery: 2, GGUFGlobalEvery: 2},
	"gemma3_text": {TiedByDefault: true, GGUFGlobalEvery: 6, GGUF: "gemma3", VLLMLocalRotary: true},
	"gpt_oss":     {GGUFGlobalEvery: 2, GGUF: "gpt-oss", VLLMRotaryFloat32: true},
	"phi3":        {LlamaCPPFullWindow: true, FusedQKV: true, FusedGateUp: true},
	"qwen3_moe":   {GGUF: "qwen3moe"},
	"qwen2_moe":   {GGUF: "qwen2moe"},
	"deepseek_v3": {GGUF: "deepseek2"},
	// DeepSeek Sparse Attention models (llama.cpp's LLM_ARCH_DEEPSEEK32
	// and LLM_ARCH_GLM_DSA, src/llama-arch.cpp of ggml-org/llama.cpp).
	"deepseek_v32": {GGUF: "deepseek32"},
	"glm_moe_dsa":  {GGUF: "glm-dsa"},
	// Nemotron-H's MLP and experts are up and down projections with a
	// squared ReLU (mlp_hidden_act "relu2"; transformers
	// src/transformers/models/nemotron_h/modeling_nemotron_h.py, NemotronHMLP).
	"nemotron_h": {PlainMLP: true, NoRotary: true},
	// Cohere (Command R, Aya 23) ties its embeddings unless told otherwise
	// (CohereConfig's tie_word_embeddings defaults to True: transformers
	// src/transformers/models/cohere/configuration_cohere.py).
	"cohere": {TiedByDefault: true},
	// SmolLM3 and LFM2 tie their embeddings unless told otherwise
	// (SmolLM3Config and Lfm2Config default tie_word_embeddings to True).
	"smollm3":          {TiedByDefault: true},
	"lfm2":             {TiedByDefault: true},
	"qwen3_next":       {GatedAttention: true, GGUF: "qwen3next"},
	"qwen3_5_text":     {GatedAttention: true, GGUF: "qwen35"},
	"qwen3_5_moe_text": {GatedAttention: true, GGUF: "qwen35moe"},
	"falcon_h1":        {GGUF: "falcon-h1"},
	// OLMo 3: every 4th layer attends globally, the others within
	// sliding_window, when the config does not list layer_types
	// (transformers src/transformers/models/olmo3/configuration_olmo3.py).
	"olmo3": {GlobalEvery: 4},
	// StarCoder2's MLP is c_fc and c_proj around a GELU, no gate, and its
	// config class ties the embeddings unless told otherwise (transformers
	// src/transformers/models/starcoder2/configuration_starcoder2.py:
	// tie_word_embeddings = True; modeling_starcoder2.py, Starcoder2MLP).
	"starcoder2":       {PlainMLP: true, TiedByDefault: true},
	"granitemoehybrid": {GGUF: "granitehybrid"},
	// Muse Glimmer's text layers gate the attention output with a
	// gate_proj of q_proj's shape (num_heads × head_dim × hidden), which
	// the config states no key for: MuseGlimmerQKVGMapping in
	// https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/cccdcbcd82da797efe668342405cc78efb8f2cc4/src/megatron/bridge/models/muse_glimmer/muse_glimmer_bridge.py
	// fuses q, k, v and that gate, and requires gate and query to be the
	// same shape.
	"muse_glimmer_text": {GatedAttention: true},
	// Step-3.5-Flash and Step-3.7-Flash, whose text backbone is Step-3.5's
	// (NVIDIA-NeMo/Megatron-Bridge@067f987
	// examples/models/stepfun/step37/README.md).
	"step3p5": {DenseMTPWithHead: true},
	"step3p7": {DenseMTPWithHead: true},
}

// archFamilies are model_type prefixes whose unlisted members share the
// family's quirks (gemma3, gemma3n, codegemma...: tied embeddings by
// default, as every Gemma config class).
var archFamilies = []string{"gemma"}

// ArchOf is the quirks of the architecture named by a Hugging Face
// model_type.
func ArchOf(modelType string) Arch {
	if a, ok := arches[modelType]; ok {
		return a
	}
	for _, f := range archFamilies {
		if strings.HasPrefix(modelType, f) {
			return arches[f]
		}
	}
	return Arch{}
}

// Arch is the quirks of the model's architecture.
func (m *Model) Arch() Arch { return ArchOf(m.Architecture) }

// ggufArchitectures maps a GGUF general.architecture to the Hugging Face
// model_type of the arches table where they differ.
var ggufArchitectures = func() map[string]string {
	out := map[string]string{}
	for hf, a := range arches {
		if a.GGUF != "" {
			out[a.GGUF] = hf
		}
	}
	return out
}()
