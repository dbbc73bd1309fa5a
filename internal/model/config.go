package model

import (
	"fmt"
	"math"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// maxDim bounds any single shape field of a config (layers, hidden size,
// vocabulary, context...). 2^31 is far above every published model and keeps
// all products inside float64's exact integer range before the MaxParams check.
const maxDim = 1 << 31

// configKeys lists, per Model field, the config.json keys that carry it,
// first match wins. Hugging Face names first, then GPT-2/Falcon style names
// (n_layer, n_embd, n_head) used by older configs.
var configKeys = struct {
	layers, hidden, heads, kvHeads, headDim, inter, vocab, maxCtx []string
	experts, expertsPerTok, shared, moeInter, denseLayers         []string
	kvLoRA, qLoRA, rope, nope, vHead, window                      []string
	sharedInter, mtp                                              []string
}{
	layers:        []string{"num_hidden_layers", "n_layer", "num_layers", "n_layers"},
	hidden:        []string{"hidden_size", "n_embd", "d_model", "dim"},
	heads:         []string{"num_attention_heads", "n_head", "num_heads", "n_heads"},
	kvHeads:       []string{"num_key_value_heads", "num_kv_heads", "n_head_kv", "n_kv_heads"},
	headDim:       []string{"head_dim", "attention_head_dim"},
	inter:         []string{"intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim", "inter_dim"},
	vocab:         []string{"vocab_size", "padded_vocab_size"},
	maxCtx:        []string{"max_position_embeddings", "n_positions", "max_sequence_length", "seq_length", "max_seq_len"},
	experts:       []string{"num_local_experts", "n_routed_experts", "num_experts"},
	expertsPerTok: []string{"num_experts_per_tok", "n_activated_experts", "moe_top_k", "experts_per_token", "top_k_experts"},
	shared:        []string{"n_shared_experts", "num_shared_experts"},
	moeInter:      []string{"moe_intermediate_size", "moe_inter_dim"},
	denseLayers:   []string{"first_k_dense_replace", "n_dense_layers"},
	kvLoRA:        []string{"kv_lora_rank"},
	qLoRA:         []string{"q_lora_rank"},
	rope:          []string{"qk_rope_head_dim"},
	nope:          []string{"qk_nope_head_dim"},
	vHead:         []string{"v_head_dim"},
	window:        []string{"sliding_window"},
	sharedInter:   []string{"shared_expert_intermediate_size"},
	mtp:           []string{"num_nextn_predict_layers", "mtp_num_hidden_layers"},
}

// FromConfig builds a Model from Hugging Face config.json fields. A
// multimodal config's language model is read from its nested text_config.
// The parameter count is computed from the shape (ShapeParams) unless the
// config states one ("num_parameters").
func FromConfig(cfg map[string]any) (*Model, error) {
	if cfg == nil {
		return nil, errs.New(errs.InvalidArgument, "model: config is empty")
	}
	cfgVision, _ := cfg["vision_config"].(map[string]any)
	wrapper := cfg // before text_config's keys (model_type) replace its own
	if tc, ok := cfg["text_config"].(map[string]any); ok {
		// Multimodal wrappers (Gemma 3, Llama 4, Qwen-VL...) keep the
		// language model under text_config; top-level keys fill the gaps.
		merged := make(map[string]any, len(cfg)+len(tc))
		for k, v := range cfg {
			merged[k] = v
		}
		for k, v := range tc {
			merged[k] = v
		}
		delete(merged, "text_config")
		cfg = merged
	}
	m := &Model{Source: "config"}
	c := configReader{cfg: cfg}
	m.Layers = c.int(configKeys.layers)
	if p := nemotronHBlocks(c.cfg); p != "" {
		// NemotronHConfig counts its layers by layers_block_type, whatever
		// num_hidden_layers says (or when it is left out, as in
		// NVIDIA-Nemotron-3-Ultra's config).
		m.Layers = len(p)
	}
	m.Hidden = c.int(configKeys.hidden)
	m.Heads = c.int(configKeys.heads)
	m.KVHeads = c.int(configKeys.kvHeads)
	if m.KVHeads == 0 && c.bool("multi_query") {
		m.KVHeads = 1 // Falcon-7B style multi-query attention
	}
	m.HeadDim = c.int(configKeys.headDim)
	m.Intermediate = c.int(configKeys.inter)
	m.Vocab = c.int(configKeys.vocab)
	m.MaxContext = c.int(configKeys.maxCtx)
	m.Rope, m.SlidingRope = readRope(c.cfg)
	m.Experts = c.int(configKeys.experts)
	m.ExpertsPerToken = c.int(configKeys.expertsPerTok)
	m.SharedExperts = c.int(configKeys.shared)
	m.MoEIntermediate = c.int(configKeys.moeInter)
	m.DenseLayers = c.int(configKeys.denseLayers)
	if m.DenseLayers == 0 {
		m.DenseLayers = leadingDenseLayers(c.cfg)
	}
	m.KVLoRARank = c.int(configKeys.kvLoRA)
	m.QLoRARank = c.int(configKeys.qLoRA)
	m.QKRopeHeadDim = c.int(configKeys.rope)
	m.QKNopeHeadDim = c.int(configKeys.nope)
	m.VHeadDim = c.int(configKeys.vHead)
	m.Architecture = c.str("model_type")
	readIndexer(&c, m)
	readGroupedOutput(&c, m)
	m.SharedIntermediate = c.int(configKeys.sharedInter)
	m.TieEmbeddings = tiedEmbeddings(c, m.Architecture)
	readArchitectureFFN(&c, m)
	readLayerKinds(&c, m)
	readGlobalAttention(&c, m)
	m.SSMStateBytes = dtypeBytes(c.str("mamba_ssm_dtype") + c.str("mamba_ssm_cache_dtype"))
	m.Layout = readLayout(c.cfg)
	if n, ok := c.name(); ok {
		m.Name = n
	}
	if c.err != nil {
		return nil, c.err
	}
	if m.Experts > 0 && m.ExpertsPerToken > m.Experts {
		return nil, errs.New(errs.InvalidArgument, "model: config has %d experts per token but only %d experts", m.ExpertsPerToken, m.Experts)
	}
	if m.Heads > 0 && m.KVHeads > m.Heads {
		return nil, errs.New(errs.InvalidArgument, "model: config has more key/value heads (%d) than attention heads (%d)", m.KVHeads, m.Heads)
	}
	stated := c.float("num_parameters")
	if c.err != nil {
		return nil, c.err
	}
	total, active, err := ShapeParams(m)
	if err != nil && stated == 0 {
		return nil, err
	}
	if stated > 0 {
		if stated > MaxParams {
			return nil, errs.New(errs.InvalidArgument, "model: config num_parameters %.4g exceeds 1e14", stated)
		}
		m.Params = int64(stated)
		m.ActiveParams = m.Params
		if total > 0 && active < total {
			m.ActiveParams = int64(float64(m.Params) * float64(active) / float64(total))
		}
		return m, nil
	}
	m.Params, m.ActiveParams = total, active
	if n := c.int(configKeys.mtp); n > 0 {
		m.MTPLayers = n
		m.MTPParams = mtpParams(m, n)
	}
	readVision(wrapper, cfgVision, m)
	return m, nil
}

// readIndexer reads the lightning indexer of DeepSeek Sparse Attention
// (Model.IndexerHeads): index_n_heads, index_head_dim, index_topk beside an
// MLA latent (DeepseekV32ForCausalLM, GlmMoeDsaForCausalLM), and
// indexer_types where the config lists which layers run their own
// ("full") and which reuse the previous one's choice ("shared": GLM-5.2).
// DeepSeek-V4's indexer scores compressed entries (compress_ratios) and
// is not read: that model is planned approximately as a whole (its
// catalog notes).
func readIndexer(c *configReader, m *Model) {
	if m.KVLoRARank <= 0 || m.Architecture == "deepseek_v4" {
		return
	}
	heads, dim := c.optInt("index_n_heads"), c.optInt("index_head_dim")
	if heads <= 0 || dim <= 0 {
		return
	}
	m.IndexerHeads, m.IndexerHeadDim, m.IndexerTopK = heads, dim, c.optInt("index_topk")
	m.IndexerLayers = m.Layers
	types, _ := c.cfg["indexer_types"].([]any)
	if len(types) == 0 {
		return
	}
	full := 0
	for _, t := range types[:min(len(types), max(m.Layers, 0))] {
		if s, _ := t.(string); s != "shared" {
			full++
		}
	}
	m.IndexerLayers = full
}

// readGroupedOutput reads DeepSeek-V4's grouped low-rank output
// projection (Model.OGroups, Model.OLoRARank), both keys or neither.
func readGroupedOutput(c *configReader, m *Model) {
	groups, rank := c.optInt("o_groups"), c.optInt("o_lora_rank")
	if groups <= 0 || rank <= 0 {
		return
	}
	m.OGroups, m.OLoRARank = groups, rank
}

// readGlobalAttention gives the full-attention layers of a model whose
// global layers are shaped apart from its sliding ones (Gemma 4) their own
// shape: global_head_dim per head and, when attention_k_eq_v says their
// values are their keys, num_global_key_value_heads key heads and no value
// projection. The rule is vLLM's: get_layer_kv_params in
// https://github.com/vllm-project/tpu-inference/blob/b8692ff01fa191343836996c27a39dc95f008b88/tpu_inference/utils.py,
// from which its models/jax/gemma4.py builds the q/k/v projections and
// the cache. Configs without global_head_dim are left as they are.
func readGlobalAttention(c *configReader, m *Model) {
	dim := c.optInt("global_head_dim")
	if dim <= 0 || m.Layers <= 0 {
		return
	}
	global := Layer{Kind: FullAttention, HeadDim: dim}
	if kEqV, _ := c.cfg["attention_k_eq_v"].(bool); kEqV {
		global.KEqV = true
		if k := c.optInt("num_global_key_value_heads"); k > 0 && k <= m.Heads {
			global.KVHeads = k
		}
	}
	if len(m.LayerKinds) == 0 {
		m.LayerKinds = []Layer{global}
		return
	}
	for i, l := range m.LayerKinds {
		if l.Kind == FullAttention && l.HeadDim == 0 && l.KVHeads == 0 && l.MixerParams == 0 {
			global.FFN, global.Intermediate = l.FFN, l.Intermediate
			m.LayerKinds[i] = global
		}
	}
}

// tiedEmbeddings reads tie_word_embeddings; when the key is absent it uses
// the default of the architecture's transformers config class
// (Arch.TiedByDefault).
func tiedEmbeddings(c configReader, arch string) bool {
	// tie_embedding: LFM2 configs carry their own key beside (or instead
	// of) the transformers one.
	for _, k := range []string{"tie_word_embeddings", "tie_embedding"} {
		if v, ok := c.cfg[k].(bool); ok {
			return v
		}
	}
	return ArchOf(arch).TiedByDefault
}

// readSlidingWindow sets the sliding-window layers of LayerKinds. Sources:
//   - layer_types (transformers >= 4.53, Gemma 3, gpt-oss, Qwen3): a list of
//     "sliding_attention" / "full_attention" per layer;
//   - sliding_window_pattern N (Gemma 3 configs): every N-th layer is global;
//   - the architecture's pattern (Arch.GlobalEvery: Gemma 2 alternates);
//   - otherwise sliding_window applies to every layer (Mistral 7B v0.1,
//     Phi-3), unless use_sliding_window is false (Qwen2 configs carry a
//     window but disable it).
func readSlidingWindow(c configReader, m *Model) {
	w := c.int(configKeys.window)
	if w <= 0 || m.Layers <= 0 {
		return
	}
	if v, ok := c.cfg["use_sliding_window"].(bool); ok && !v {
		return
	}
	if lt, ok := c.cfg["layer_types"].([]any); ok && len(lt) > 0 {
		// The list is the pattern: one entry per layer (transformers
		// checks that its length is num_hidden_layers); entries past the
		// layers are none.
		kinds := make([]Layer, min(len(lt), m.Layers))
		for i := range kinds {
			if s, _ := lt[i].(string); s == "sliding_attention" {
				kinds[i] = Layer{Kind: SlidingWindow, Window: w}
			}
		}
		m.LayerKinds = kinds
		return
	}
	if p := c.int([]string{"sliding_window_pattern"}); p > 1 {
		m.LayerKinds = slidingPattern(w, p)
		return
	}
	m.LayerKinds = slidingPattern(w, ArchOf(m.Architecture).GlobalEvery)
}

// dtypeBytes is the width of a dtype a config names ("float32",
// "bfloat16", "float16"), 0 for none or another word.
func dtypeBytes(name string) int {
	switch name {
	case "float32":
		return 4
	case "bfloat16", "float16":
		return 2
	}
	return 0
}

// configReader reads typed values out of a decoded JSON object, keeping the
// first type or range error.
type configReader struct {
	cfg map[string]any
	err error
}

func (c *configReader) lookup(keys []string) (string, any, bool) {
	for _, k := range keys {
		if v, ok := c.cfg[k]; ok && v != nil {
			return k, v, true
		}
	}
	return "", nil, false
}

// int returns the first present key as a non-negative integer below maxDim.
func (c *configReader) int(keys []string) int {
	k, v, ok := c.lookup(keys)
	if !ok {
		return 0
	}
	f, isNum := number(v)
	if !isNum || f < 0 || f != math.Trunc(f) || f >= maxDim {
		c.fail(fmt.Errorf("config %s: want a non-negative integer below 2^31, got %v", k, v))
		return 0
	}
	return int(f)
}

func (c *configReader) float(key string) float64 {
	v, ok := c.cfg[key]
	if !ok || v == nil {
		return 0
	}
	f, isNum := number(v)
	if !isNum || !validCount(f) {
		c.fail(fmt.Errorf("config %s: want a positive number, got %v", key, v))
		return 0
	}
	return f
}

func (c *configReader) bool(key string) bool {
	v, _ := c.cfg[key].(bool)
	return v
}

func (c *configReader) str(key string) string {
	v, _ := c.cfg[key].(string)
	return v
}

func (c *configReader) name() (string, bool) {
	for _, k := range []string{"_name_or_path", "name"} {
		if v, ok := c.cfg[k].(string); ok && v != "" {
			return v, true
		}
	}
	return "", false
}

func (c *configReader) fail(err error) {
	if c.err == nil {
		c.err = errs.Wrap(errs.InvalidArgument, err, "model")
	}
}

// number accepts the numeric types a decoded JSON object or a Go literal map
// may hold.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case uint32:
		return float64(x), true
	}
	return 0, false
}

// optInt is the integer at key, 0 when absent or not a non-negative
// integer below maxDim: for keys whose configs may hold a word instead
// (Jamba's mamba_dt_rank "auto").
func (c *configReader) optInt(keys ...string) int {
	_, v, ok := c.lookup(keys)
	if !ok {
		return 0
	}
	f, isNum := number(v)
	if !isNum || f < 0 || f != math.Trunc(f) || f >= maxDim {
		return 0
	}
	return int(f)
}

// leadingDenseLayers is the number of leading layers a per-layer list marks
// dense in a MoE config without first_k_dense_replace: the "dense" entries
// that open mlp_layer_types (poolside's Laguna), the 0 entries that open a
// moe_layer_freq list (MiMo-V2-Flash; DeepSeek's configs give an int), or
// the indices 0, 1, ... that open mlp_only_layers (the Qwen2-MoE key, used
// by Laguna-S-2.1). A dense layer later in the model is not a leading one
// and is not counted.
func leadingDenseLayers(cfg map[string]any) int {
	n := 0
	if types, ok := cfg["mlp_layer_types"].([]any); ok {
		for _, t := range types {
			if t != "dense" {
				break
			}
			n++
		}
		return n
	}
	if freq, ok := cfg["moe_layer_freq"].([]any); ok {
		for _, v := range freq {
			if f, isNum := number(v); !isNum || f != 0 {
				break
			}
			n++
		}
		return n
	}
	only, _ := cfg["mlp_only_layers"].([]any)
	for _, v := range only {
		if i, ok := number(v); !ok || int(i) != n {
			break
		}
		n++
	}
	return n
}

// readArchitectureFFN reads the FFN widths of architectures whose configs
// name them apart from the Llama keys.
func readArchitectureFFN(c *configReader, m *Model) {
	// dense_intermediate_size: the width of a MoE model's dense layers
	// when intermediate_size is an expert's (MiniMax-M3).
	if d := c.optInt("dense_intermediate_size"); d > 0 && m.Experts > 0 {
		if m.MoEIntermediate == 0 {
			m.MoEIntermediate = m.Intermediate
		}
		m.Intermediate = d
	}
	switch m.Architecture {
	case "lfm2":
		// block_ff_dim: the FFN width of LFM2 configs written before the
		// transformers port, which Lfm2Config reads in place of
		// intermediate_size (transformers
		// src/transformers/models/lfm2/configuration_lfm2.py).
		if d := c.optInt("block_ff_dim"); d > 0 {
			m.Intermediate = d
		}
		// Lfm2MLP narrows the stated width: 2/3 of it, times
		// block_ffn_dim_multiplier, rounded up to block_multiple_of
		// (transformers src/transformers/models/lfm2/modeling_lfm2.py,
		// Lfm2MLP.__init__).
		if v, _ := c.cfg["block_auto_adjust_ff_dim"].(bool); v && m.Intermediate > 0 {
			inter := 2 * m.Intermediate / 3
			if f, ok := number(c.cfg["block_ffn_dim_multiplier"]); ok && f > 0 {
				inter = int(f * float64(inter))
			}
			if mult := c.optInt("block_multiple_of"); mult > 0 {
				inter = (inter + mult - 1) / mult * mult
			}
			m.Intermediate = inter
		}
	case "granitemoehybrid":
		// Every layer has a shared MLP of shared_intermediate_size; the
		// routed experts (num_local_experts > 0) are intermediate_size
		// wide (transformers granitemoehybrid GraniteMoeHybridDecoderLayer).
		if s := c.optInt("shared_intermediate_size"); s > 0 {
			if m.Experts > 0 {
				m.MoEIntermediate, m.SharedIntermediate = m.Intermediate, s
			} else {
				m.Intermediate = s
			}
		}
	case "llama4_text", "llama4":
		// Llama 4: intermediate_size is an expert's (and the one shared
		// expert's) width, intermediate_size_mlp the dense layers'
		// (transformers llama4 Llama4TextConfig).
		if m.Experts > 0 {
			m.MoEIntermediate = m.Intermediate
			m.SharedIntermediate = m.Intermediate
			if d := c.optInt("intermediate_size_mlp"); d > 0 {
				m.Intermediate = d
			}
		}
	case "gemma4_text", "gemma4":
		// enable_moe_block: every layer keeps its dense MLP of
		// intermediate_size beside the routed experts of
		// moe_intermediate_size, always active like a shared expert
		// (AI-Hypercomputer/maxtext src/maxtext/configs/models/gemma4-26b.yml:
		// base_mlp_dim 2112, base_moe_mlp_dim 704, shared_experts 1; its
		// src/maxtext/models/gemma4.py adds the two outputs).
		if c.cfg["enable_moe_block"] == true && m.Experts > 0 && m.MoEIntermediate > 0 {
			m.SharedIntermediate = m.Intermediate
		}
	case "nemotron_h":
		if s := c.optInt("moe_shared_expert_intermediate_size"); s > 0 {
			m.SharedIntermediate = s
		}
		// moe_latent_size (null: none): the routed experts' width in and
		// out, between fc1_latent_proj (hidden to latent) and
		// fc2_latent_proj (back); the router and the shared expert see
		// the hidden state (NVIDIA/TensorRT-LLM
		// tensorrt_llm/_torch/models/modeling_nemotron_h.py, NemotronHMOE).
		m.MoELatent = c.optInt("moe_latent_size")
	}
}

// readLayerKinds sets LayerKinds from the keys a config lists its layers
// by, the first that applies:
//   - hybrid_override_pattern (Nemotron-H): one letter per block, M a Mamba2
//     mixer, * attention, - an MLP, E a MoE; or the same as the list
//     layers_block_type (nemotronHBlocks);
//   - layer_types (transformers >= 4.53): full_attention,
//     sliding_attention, chunked_attention, linear_attention (gated
//     DeltaNet), conv (LFM2's short convolution), mamba and attention
//     (granite-4.0-h);
//   - full_attn_idxs (LFM2 configs written before layer_types): the
//     layers listed attend, the others are short convolutions;
//   - full_attention_interval N (Qwen3-Next, Qwen3.5): every N-th layer
//     attends, the others are gated DeltaNet;
//   - attn_layer_period and attn_layer_offset (Jamba): layer i attends when
//     i mod period = offset, the others are Mamba;
//   - Falcon-H1: every layer runs attention and a Mamba2 mixer in parallel;
//   - attention_chunk_size (Llama 4): the RoPE layers attend within chunks,
//     every no_rope_layer_interval-th layer (4) attends globally;
//   - the sliding-window keys (readSlidingWindow).
//
// Then the FFN of each layer: Jamba's expert_layer_period/offset and Llama
// 4's interleave_moe_layer_step put the experts on some layers only.
func readLayerKinds(c *configReader, m *Model) {
	if m.Layers <= 0 || m.Layers > maxListedLayers {
		return
	}
	switch {
	case c.str("hybrid_override_pattern") != "":
		m.LayerKinds = nemotronHPattern(c, m, c.str("hybrid_override_pattern"))
	case nemotronHBlocks(c.cfg) != "":
		m.LayerKinds = nemotronHPattern(c, m, nemotronHBlocks(c.cfg))
	case hasList(c.cfg["layer_types"]) && listedKindsMatter(c.cfg["layer_types"].([]any)):
		m.LayerKinds = listedKinds(c, m, c.cfg["layer_types"].([]any))
	case hasList(c.cfg["full_attn_idxs"]):
		m.LayerKinds = attentionAtIndices(c, m, c.cfg["full_attn_idxs"].([]any))
	case c.optInt("full_attention_interval") > 0:
		every := c.optInt("full_attention_interval")
		gdn := gatedDeltaNetLayer(c, m)
		if every > m.Layers {
			// No layer reaches the interval: all are linear.
			m.LayerKinds = []Layer{gdn}
			break
		}
		kinds := make([]Layer, every)
		for i := range kinds[:every-1] {
			kinds[i] = gdn
		}
		kinds[every-1] = Layer{Kind: FullAttention}
		m.LayerKinds = kinds
	case c.optInt("attn_layer_period") > 0:
		period, offset := c.optInt("attn_layer_period"), c.optInt("attn_layer_offset")
		mamba := mambaLayer(c, m)
		// A period longer than the model repeats no further than its
		// depth: layer i < Layers is entry i either way.
		kinds := make([]Layer, min(period, m.Layers))
		for i := range kinds {
			kinds[i] = mamba
			if i == offset%period {
				kinds[i] = Layer{Kind: FullAttention}
			}
		}
		m.LayerKinds = kinds
	case m.Architecture == "falcon_h1":
		l := mamba2Layer(c, m)
		l.Kind = FullAttention
		m.LayerKinds = []Layer{l}
	case c.optInt("attention_chunk_size") > 0:
		m.LayerKinds = chunkedPattern(c, m)
	case hasList(c.cfg["block_configs"]):
		m.LayerKinds = nasBlocks(c, m, c.cfg["block_configs"].([]any))
	default:
		readSlidingWindow(*c, m)
	}
	readLayerFFNs(c, m)
}

// nasBlocks reads the per-layer blocks of a Nemotron-NAS model (DeciLM,
// model_type nemotron-nas: the Llama-3.x-Nemotron Super and Ultra models),
// one block_configs entry per layer. An attention block that is a no_op has
// no attention and caches nothing; replace_with_linear puts one hidden ×
// hidden matrix in its place; otherwise it has num_attention_heads /
// n_heads_in_group key/value heads. The FFN's width is
// int(2·ffn_mult·hidden/3) rounded up to a multiple of 256; a no_op FFN is
// none and replace_with_linear one hidden × hidden matrix (ggml-org/llama.cpp
// convert_hf_to_gguf.py, DeciModel._ffn_mult_to_intermediate_size and its
// handling of no_op and replace_with_linear blocks).
func nasBlocks(c *configReader, m *Model, blocks []any) []Layer {
	if len(blocks) != m.Layers {
		c.fail(fmt.Errorf("config block_configs lists %d blocks for %d layers", len(blocks), m.Layers))
		return nil
	}
	h := int64(m.Hidden)
	out := make([]Layer, len(blocks))
	widest := 0
	for i, b := range blocks {
		block, _ := b.(map[string]any)
		attention, _ := block["attention"].(map[string]any)
		ffn, _ := block["ffn"].(map[string]any)
		l := Layer{Kind: FullAttention}
		switch {
		case attention["no_op"] == true:
			l.Kind = FeedForward
		case attention["replace_with_linear"] == true:
			l.Kind, l.MixerParams = FeedForward, h*h
		default:
			if g, ok := number(attention["n_heads_in_group"]); ok && g >= 1 && int(g) <= m.Heads {
				l.KVHeads = m.Heads / int(g)
			}
		}
		switch {
		case ffn["no_op"] == true:
			l.FFN = FFNNone
		case ffn["replace_with_linear"] == true:
			l.FFN, l.MixerParams = FFNNone, l.MixerParams+h*h
		default:
			if mult, ok := number(ffn["ffn_mult"]); ok && mult > 0 && c.mixerInBounds("block_configs ffn_mult", 2*mult*float64(h)/3) {
				l.Intermediate = nasFFNWidth(mult, m.Hidden)
			}
		}
		out[i] = l
		widest = max(widest, l.Intermediate)
	}
	if m.Intermediate == 0 {
		// The config's intermediate_size is null: the widest block stands
		// for the model where one width is asked (activation peaks).
		m.Intermediate = widest
	}
	return out
}

// nasFFNWidth is a Nemotron-NAS FFN's width for ffn_mult: int(2·mult·
// hidden/3), rounded up to a multiple of 256.
func nasFFNWidth(mult float64, hidden int) int {
	w := int(2 * mult * float64(hidden) / 3)
	return (w + 255) / 256 * 256
}

// maxListedLayers bounds the depth a per-layer list is built for; deeper
// configs (no published model comes near) keep the uniform default.
const maxListedLayers = 1 << 16

func hasList(v any) bool {
	l, ok := v.([]any)
	return ok && len(l) > 0
}

// listedKindsMatter: a layer_types list of full attention only (Qwen3,
// SmolLM3) is the default; one naming a window is read by
// readSlidingWindow, which knows the window keys.
func listedKindsMatter(lt []any) bool {
	for _, v := range lt {
		switch s, _ := v.(string); s {
		case "full_attention", "attention", "sliding_attention":
		default:
			return true
		}
	}
	return false
}

// listedKinds reads layer_types, one entry per layer (entries past the
// model's layers are none; missing ones are full attention).
func listedKinds(c *configReader, m *Model, lt []any) []Layer {
	w := c.int(configKeys.window)
	kinds := make([]Layer, m.Layers)
	for i := range kinds {
		s := ""
		if i < len(lt) {
			s, _ = lt[i].(string)
		}
		switch s {
		case "sliding_attention":
			if w > 0 {
				kinds[i] = Layer{Kind: SlidingWindow, Window: w}
			}
		case "chunked_attention":
			kinds[i] = Layer{Kind: ChunkedAttention, Window: c.optInt("attention_chunk_size")}
		case "linear_attention":
			kinds[i] = gatedDeltaNetLayer(c, m)
		case "conv":
			kinds[i] = shortConvLayer(c, m)
		case "mamba":
			kinds[i] = mamba2Layer(c, m)
		}
	}
	return kinds
}

// attentionAtIndices reads LFM2's full_attn_idxs: the layers at those
// indices are full attention, every other layer a short convolution
// (transformers src/transformers/models/lfm2/configuration_lfm2.py:
// layer_types defaults to "full_attention" at full_attn_idxs and "conv"
// elsewhere). Indices outside the model are ignored.
func attentionAtIndices(c *configReader, m *Model, idxs []any) []Layer {
	conv := shortConvLayer(c, m)
	kinds := make([]Layer, m.Layers)
	for i := range kinds {
		kinds[i] = conv
	}
	for _, v := range idxs {
		f, ok := number(v)
		if ok && f >= 0 && f < float64(m.Layers) && f == math.Trunc(f) {
			kinds[int(f)] = Layer{Kind: FullAttention}
		}
	}
	return kinds
}

// nemotronHBlockLetters are the hybrid_override_pattern letters of the
// block names a Nemotron-H layers_block_type list holds: transformers'
// names (linear_attention for the Mamba2 mixer, full_attention, moe, mlp)
// and the ones configs on the Hub still carry (mamba, attention), which it
// remaps (transformers src/transformers/models/nemotron_h/
// configuration_nemotron_h.py, _list_to_pattern and
// remap_legacy_layer_types).
var nemotronHBlockLetters = map[string]byte{
	"linear_attention": 'M', "mamba": 'M', "full_attention": '*', "attention": '*', "moe": 'E', "mlp": '-',
}

// nemotronHBlocks is a nemotron_h config's layers_block_type (or
// layer_types, its alias in NemotronHConfig) as a hybrid_override_pattern
// string, "" when the config has neither; a name it does not know is read
// as attention, as nemotronHPattern reads an unknown letter.
func nemotronHBlocks(cfg map[string]any) string {
	if t, _ := cfg["model_type"].(string); t != "nemotron_h" {
		return ""
	}
	list, ok := cfg["layers_block_type"].([]any)
	if !ok {
		list, _ = cfg["layer_types"].([]any)
	}
	if len(list) == 0 || len(list) > maxListedLayers {
		return ""
	}
	b := make([]byte, len(list))
	for i, v := range list {
		s, _ := v.(string)
		b[i] = '*'
		if l, ok := nemotronHBlockLetters[s]; ok {
			b[i] = l
		}
	}
	return string(b)
}

// nemotronHPattern reads Nemotron-H's hybrid_override_pattern: each block
// holds one of a Mamba2 mixer (M), attention (*), an MLP (-) or a MoE (E),
// never two (transformers src/transformers/models/nemotron_h/
// configuration_nemotron_h.py, layers_block_type).
func nemotronHPattern(c *configReader, m *Model, p string) []Layer {
	mamba := mamba2Layer(c, m)
	mamba.FFN = FFNNone
	kinds := make([]Layer, m.Layers)
	for i := range kinds {
		var b byte = '*'
		if i < len(p) {
			b = p[i]
		}
		switch b {
		case 'M':
			kinds[i] = mamba
		case '-':
			kinds[i] = Layer{Kind: FeedForward, FFN: FFNDense}
		case 'E':
			kinds[i] = Layer{Kind: FeedForward}
		default:
			kinds[i] = Layer{Kind: FullAttention, FFN: FFNNone}
		}
	}
	return kinds
}

// chunkedPattern is Llama 4's: layer i attends globally (no RoPE) when
// no_rope_layers[i] is 0, else within attention_chunk_size tokens; without
// the list, every no_rope_layer_interval-th layer (default 4) is global
// (transformers llama4 Llama4TextConfig.__init__).
func chunkedPattern(c *configReader, m *Model) []Layer {
	chunk := Layer{Kind: ChunkedAttention, Window: c.optInt("attention_chunk_size")}
	kinds := make([]Layer, m.Layers)
	list, _ := c.cfg["no_rope_layers"].([]any)
	every := c.optInt("no_rope_layer_interval")
	if every == 0 {
		every = 4
	}
	for i := range kinds {
		rope := (i+1)%every != 0
		if i < len(list) {
			f, _ := number(list[i])
			rope = f != 0
		}
		if rope {
			kinds[i] = chunk
		}
	}
	return kinds
}

// readLayerFFNs marks the layers of a MoE model whose FFN is dense:
// Jamba's (experts where i mod expert_layer_period = expert_layer_offset)
// and Llama 4's (experts on every interleave_moe_layer_step-th layer,
// transformers llama4: moe_layers = range(step-1, layers, step)).
func readLayerFFNs(c *configReader, m *Model) {
	if !m.IsMoE() {
		return
	}
	period, offset := c.optInt("expert_layer_period"), c.optInt("expert_layer_offset")
	if period == 0 {
		if step := c.optInt("interleave_moe_layer_step"); step > 1 {
			period, offset = step, step-1
		}
	}
	if period <= 1 {
		return
	}
	kinds := m.LayerKinds
	if len(kinds) == 0 {
		kinds = []Layer{m.DefaultLayer()}
	}
	n := lcm(len(kinds), period)
	if len(kinds)%period == 0 {
		n = len(kinds)
	}
	if n > m.Layers {
		n = m.Layers
	}
	out := make([]Layer, n)
	for i := range out {
		out[i] = kinds[i%len(kinds)]
		if i%period != offset%period {
			out[i].FFN = FFNDense
		}
	}
	m.LayerKinds = out
}

func lcm(a, b int) int {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}

// maxMixerSize bounds a recurrent layer's state and weights as the config
// implies them, in float64 before any int64 product (whose overflow would
// wrap): far above any published model (MaxParams), so only a hostile or
// mistaken config reaches it.
const maxMixerSize = MaxParams

// mixerInBounds reports whether every size is at most maxMixerSize, failing
// the reader when one is not.
func (c *configReader) mixerInBounds(what string, sizes ...float64) bool {
	for _, v := range sizes {
		if v > maxMixerSize {
			c.fail(fmt.Errorf("config %s: sizes imply %.4g elements per layer, above the 1e14 limit", what, v))
			return false
		}
	}
	return true
}

// gatedDeltaNetLayer is the linear-attention layer of Qwen3-Next and
// Qwen3.5 from the linear_* keys.
func gatedDeltaNetLayer(c *configReader, m *Model) Layer {
	kH, kD := c.optInt("linear_num_key_heads"), c.optInt("linear_key_head_dim")
	vH, vD := c.optInt("linear_num_value_heads"), c.optInt("linear_value_head_dim")
	k := c.optInt("linear_conv_kernel_dim")
	qk, v, h := float64(kH)*float64(kD), float64(vH)*float64(vD), float64(m.Hidden)
	if !c.mixerInBounds("linear_*", float64(k)*(2*qk+v), v*float64(kD), h*(2*qk+3*v)) {
		return Layer{Kind: Recurrent}
	}
	l := GatedDeltaNetState(kH, kD, vH, vD, k)
	l.MixerParams = GatedDeltaNetParams(m.Hidden, kH, kD, vH, vD, k)
	return l
}

// shortConvLayer is LFM2's convolution layer (conv_L_cache taps).
func shortConvLayer(c *configReader, m *Model) Layer {
	k := c.optInt("conv_L_cache")
	h := float64(m.Hidden)
	if !c.mixerInBounds("conv_L_cache", float64(k)*h, 4*h*h) {
		return Layer{Kind: Recurrent}
	}
	l := ShortConvState(m.Hidden, k)
	l.MixerParams = ShortConvParams(m.Hidden, k)
	return l
}

// mamba2Layer is a Mamba2 mixer from the keys of Nemotron-H (mamba_num_heads,
// mamba_head_dim, ssm_state_size, n_groups, conv_kernel), Falcon-H1
// (mamba_d_ssm, mamba_n_heads, mamba_d_head, mamba_d_state, mamba_n_groups,
// mamba_d_conv) and granite-4.0-h (the same with mamba_expand). The inner
// width is mamba_d_ssm, else heads × head dim, else expand × hidden.
func mamba2Layer(c *configReader, m *Model) Layer {
	heads := c.optInt("mamba_num_heads", "mamba_n_heads")
	headDim := c.optInt("mamba_head_dim", "mamba_d_head")
	state := c.optInt("ssm_state_size", "mamba_d_state", "state_size")
	groups := c.optInt("n_groups", "mamba_n_groups")
	conv := c.optInt("conv_kernel", "mamba_d_conv")
	inner := c.optInt("mamba_d_ssm")
	if inner == 0 {
		inner = heads * headDim
	}
	if inner == 0 {
		inner = max(c.optInt("mamba_expand", "expand"), 1) * m.Hidden
	}
	if heads == 0 && headDim > 0 {
		heads = inner / headDim
	}
	gs, h := 2*float64(groups)*float64(state), float64(m.Hidden)
	if !c.mixerInBounds("mamba_*", float64(conv)*(float64(inner)+gs), float64(inner)*float64(state),
		h*(2*float64(inner)+gs+float64(heads))+float64(inner)*h) {
		return Layer{Kind: Recurrent}
	}
	l := Mamba2State(inner, groups, state, conv)
	l.MixerParams = Mamba2Params(m.Hidden, inner, groups, state, heads, conv)
	return l
}

// mambaLayer is Jamba's Mamba (v1) mixer: mamba_d_state, mamba_d_conv,
// mamba_expand, mamba_dt_rank ("auto": ceil(hidden / 16), transformers
// JambaConfig).
func mambaLayer(c *configReader, m *Model) Layer {
	state, conv := c.optInt("mamba_d_state"), c.optInt("mamba_d_conv")
	inner := max(c.optInt("mamba_expand"), 1) * m.Hidden
	rank := c.optInt("mamba_dt_rank")
	if rank == 0 {
		rank = (m.Hidden + 15) / 16
	}
	di, h := float64(inner), float64(m.Hidden)
	if !c.mixerInBounds("mamba_*", float64(conv)*di, di*float64(state), di*(3*h+float64(rank)*2+2*float64(state))) {
		return Layer{Kind: Recurrent}
	}
	l := Mamba2State(inner, 0, state, conv)
	l.MixerParams = MambaParams(m.Hidden, inner, state, rank, conv)
	return l
}
