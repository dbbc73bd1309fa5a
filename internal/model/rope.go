package model

import "math"

// Rope is a rotary position embedding's configuration as a Hugging Face
// config.json gives it: the rope_scaling object of older configs (with
// rope_theta, partial_rotary_factor and rotary_dim beside it at the top
// level) or transformers v5's rope_parameters, which holds those keys
// itself, flat or keyed by layer type ("full_attention",
// "sliding_attention": Gemma 3 and 4, Laguna). The zero Rope is the
// default rotary embedding over the whole head. Engines size their
// rotary tables from it (engine.VLLMRopeCacheBytes).
type Rope struct {
	// Type is rope_type ("type" in older configs): "default", "linear",
	// "dynamic", "yarn", "llama3", "longrope"…; "" where none is given.
	// "mrope" is read as "default" with MRoPE set, "su" as "longrope", as
	// vLLM renames them (patch_rope_scaling_dict in
	// vllm/transformers_utils/config.py of vllm-project/vllm).
	Type string `json:"type,omitempty"`
	// Theta is rope_theta (the base), 0 where not given.
	Theta float64 `json:"theta,omitempty"`
	// Factor is the scaling factor of a scaled type (linear, dynamic,
	// yarn, llama3), 0 where not given.
	Factor float64 `json:"factor,omitempty"`
	// OriginalMaxPositions is original_max_position_embeddings, the
	// pre-training length a YaRN or LongRoPE scaling extends.
	OriginalMaxPositions int `json:"original_max_positions,omitempty"`
	// PartialFactor is partial_rotary_factor, the share of each head that
	// is rotated (Phi-4-mini 0.75, Qwen3-Next 0.25); 0 where not given
	// (the whole head).
	PartialFactor float64 `json:"partial_factor,omitempty"`
	// RotaryDim is an explicit rotary_dim (MiniMax-M2: 64 of 128), 0
	// where not given.
	RotaryDim int `json:"rotary_dim,omitempty"`
	// MRoPE: the configuration carries an mrope_section (multimodal
	// rotary embedding: Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Qwen3.5).
	MRoPE bool `json:"mrope,omitempty"`
	// None: the config says its positions are not rotary
	// (position_embedding_type other than "rope": Granite 4.0-H's "nope";
	// alibi true: Falcon's ALiBi variants).
	None bool `json:"none,omitempty"`
}

// Bounds on the values read, beyond which a configuration is not a real
// model's: a factor of 1024 stretches a 4k pre-training length to 4M
// positions (the longest table in use, Llama 4 Scout's 10M positions, is
// its max_position_embeddings, scaled by no factor), no model pre-trains
// on more than 2^24 positions, and no head is 2^16 values wide.
const (
	maxRopeFactor         = 1024
	maxRopeOriginalMaxPos = 1 << 24
	maxRopeRotaryDim      = 1 << 16
)

// readRope reads cfg's rotary configurations: the one of the full (or
// only) attention layers, and the sliding-window layers' own where the
// config gives them one (rope_parameters keyed by layer type), else the
// zero Rope. Values out of range are left out rather than refused: no
// planning figure but an engine's rotary table reads them.
func readRope(cfg map[string]any) (full, sliding Rope) {
	params, _ := cfg["rope_parameters"].(map[string]any)
	fullParams, byLayer := params["full_attention"].(map[string]any)
	slidingParams, slidingByLayer := params["sliding_attention"].(map[string]any)
	switch {
	case byLayer || slidingByLayer:
		full = ropeFrom(fullParams)
		if slidingByLayer {
			sliding = ropeFrom(slidingParams)
		}
	case params != nil:
		full = ropeFrom(params)
	default:
		scaling, _ := cfg["rope_scaling"].(map[string]any)
		full = ropeFrom(scaling)
	}
	fillTopLevel(&full, cfg)
	pe, _ := cfg["position_embedding_type"].(string)
	alibi, _ := cfg["alibi"].(bool)
	full.None = (pe != "" && pe != "rope") || alibi
	return full, sliding
}

// ropeFrom reads one rope_parameters or rope_scaling object (nil: the zero
// Rope).
func ropeFrom(p map[string]any) Rope {
	var r Rope
	if p == nil {
		return r
	}
	r.Type, _ = p["rope_type"].(string)
	if r.Type == "" {
		r.Type, _ = p["type"].(string)
	}
	switch r.Type {
	case "mrope":
		r.Type, r.MRoPE = "default", true
	case "su":
		r.Type = "longrope"
	}
	if _, ok := p["mrope_section"]; ok {
		r.MRoPE = true
	}
	r.Theta = positiveNumber(p["rope_theta"], math.MaxFloat64)
	r.Factor = positiveNumber(p["factor"], maxRopeFactor)
	r.OriginalMaxPositions = int(positiveNumber(p["original_max_position_embeddings"], maxRopeOriginalMaxPos))
	r.PartialFactor = positiveNumber(p["partial_rotary_factor"], 1)
	r.RotaryDim = int(positiveNumber(p["rotary_dim"], maxRopeRotaryDim))
	return r
}

// fillTopLevel fills r's gaps from the keys older configs keep beside
// rope_scaling (rope_theta, partial_rotary_factor, rotary_dim, and Phi-3's
// original_max_position_embeddings); rope_parameters' own values win.
func fillTopLevel(r *Rope, cfg map[string]any) {
	if r.Theta == 0 {
		r.Theta = positiveNumber(cfg["rope_theta"], math.MaxFloat64)
	}
	if r.PartialFactor == 0 {
		r.PartialFactor = positiveNumber(cfg["partial_rotary_factor"], 1)
	}
	if r.RotaryDim == 0 {
		r.RotaryDim = int(positiveNumber(cfg["rotary_dim"], maxRopeRotaryDim))
	}
	if r.OriginalMaxPositions == 0 {
		r.OriginalMaxPositions = int(positiveNumber(cfg["original_max_position_embeddings"], maxRopeOriginalMaxPos))
	}
}

// positiveNumber is v where it is a number in (0, max], else 0.
func positiveNumber(v any, max float64) float64 {
	f, ok := number(v)
	if !ok || f <= 0 || f > max {
		return 0
	}
	return f
}

// HasRotaryPositions reports whether the model's attention layers rotate
// their queries and keys: not where the config says its positions are
// not rotary (Rope.None), nor for the families whose attention has no
// rotary embedding (Arch.NoRotary).
func (m *Model) HasRotaryPositions() bool {
	return !m.Rope.None && !m.Arch().NoRotary
}
