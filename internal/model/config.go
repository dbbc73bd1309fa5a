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
}{
	layers:        []string{"num_hidden_layers", "n_layer", "num_layers", "n_layers"},
	hidden:        []string{"hidden_size", "n_embd", "d_model", "dim"},
	heads:         []string{"num_attention_heads", "n_head", "num_heads", "n_heads"},
	kvHeads:       []string{"num_key_value_heads", "num_kv_heads", "n_head_kv", "n_kv_heads"},
	headDim:       []string{"head_dim"},
	inter:         []string{"intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim", "inter_dim"},
	vocab:         []string{"vocab_size", "padded_vocab_size"},
	maxCtx:        []string{"max_position_embeddings", "n_positions", "max_sequence_length", "seq_length", "max_seq_len"},
	experts:       []string{"num_local_experts", "n_routed_experts", "num_experts"},
	expertsPerTok: []string{"num_experts_per_tok", "n_activated_experts", "moe_top_k", "experts_per_token"},
	shared:        []string{"n_shared_experts", "num_shared_experts"},
	moeInter:      []string{"moe_intermediate_size", "moe_inter_dim"},
	denseLayers:   []string{"first_k_dense_replace", "n_dense_layers"},
	kvLoRA:        []string{"kv_lora_rank"},
	qLoRA:         []string{"q_lora_rank"},
	rope:          []string{"qk_rope_head_dim"},
	nope:          []string{"qk_nope_head_dim"},
	vHead:         []string{"v_head_dim"},
	window:        []string{"sliding_window"},
}

// FromConfig builds a Model from Hugging Face config.json fields. A
// multimodal config's language model is read from its nested text_config.
// The parameter count is computed from the shape (ShapeParams) unless the
// config states one ("num_parameters").
func FromConfig(cfg map[string]any) (*Model, error) {
	if cfg == nil {
		return nil, errs.New(errs.InvalidArgument, "model: config is empty")
	}
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
	m.Experts = c.int(configKeys.experts)
	m.ExpertsPerToken = c.int(configKeys.expertsPerTok)
	m.SharedExperts = c.int(configKeys.shared)
	m.MoEIntermediate = c.int(configKeys.moeInter)
	m.DenseLayers = c.int(configKeys.denseLayers)
	m.KVLoRARank = c.int(configKeys.kvLoRA)
	m.QLoRARank = c.int(configKeys.qLoRA)
	m.QKRopeHeadDim = c.int(configKeys.rope)
	m.QKNopeHeadDim = c.int(configKeys.nope)
	m.VHeadDim = c.int(configKeys.vHead)
	m.Architecture = c.str("model_type")
	m.TieEmbeddings = tiedEmbeddings(c, m.Architecture)
	readSlidingWindow(c, m)
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
	return m, nil
}

// tiedEmbeddings reads tie_word_embeddings; when the key is absent it uses
// the default of the architecture's transformers config class
// (Arch.TiedByDefault).
func tiedEmbeddings(c configReader, arch string) bool {
	if v, ok := c.cfg["tie_word_embeddings"].(bool); ok {
		return v
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
