package model

import "iter"

// LayerKind says what one decoder layer keeps between the tokens of a
// sequence: a cache that grows with the tokens (the attention kinds), none
// of its own (SharedKV), or a state of fixed size (Recurrent).
type LayerKind uint8

const (
	// FullAttention caches a key and a value per KV head for every token of
	// the context.
	FullAttention LayerKind = iota
	// SlidingWindow attends to the last Window tokens only, so its cache
	// holds at most Window tokens per sequence (Mistral 7B paper, arXiv
	// 2310.06825 §2 "rolling buffer cache"; Gemma 2/3 local layers).
	SlidingWindow
	// ChunkedAttention attends within the current chunk of Window tokens
	// (Llama 4's local layers, attention_chunk_size), so its cache holds at
	// most one chunk per sequence.
	ChunkedAttention
	// LatentAttention is multi-head latent attention (DeepSeek V2/V3): the
	// cache holds a compressed latent of LatentDim values and the decoupled
	// RoPE key of RopeDim values per token (DeepSeek-V2 paper, arXiv
	// 2405.04434, §2.1 and Table 1: (d_c + d_h^R) values per token).
	LatentAttention
	// SharedKV reads the cache of layer SharesWith and keeps none of its
	// own (cross-layer KV sharing, e.g. the KV-shared layers of Gemma 3n).
	SharedKV
	// Recurrent keeps a state of fixed size per sequence instead of a
	// per-token cache: a short convolution's last inputs (ConvState) and
	// the SSM or linear-attention state (SSMState). Mamba/Mamba2 blocks,
	// gated DeltaNet and RWKV layers are of this kind.
	Recurrent
	// FeedForward is a block without a token mixer: it keeps nothing
	// between tokens (the MLP-only blocks of Nemotron-H, "-" in its
	// hybrid_override_pattern).
	FeedForward
)

// FFNKind is the feed-forward block of one layer.
type FFNKind uint8

const (
	// FFNModel is the model's FFN: routed experts in a MoE model (past its
	// DenseLayers leading dense layers), else a dense FFN.
	FFNModel FFNKind = iota
	// FFNDense is a dense FFN of Intermediate width in a MoE model (Jamba's
	// even layers, Llama 4 Maverick's non-MoE layers).
	FFNDense
	// FFNNone: the layer has no FFN (Nemotron-H's mixer blocks).
	FFNNone
)

// String names the kind as the Hugging Face layer_types lists do where they
// name it.
func (k LayerKind) String() string {
	switch k {
	case FullAttention:
		return "full_attention"
	case SlidingWindow:
		return "sliding_attention"
	case ChunkedAttention:
		return "chunked_attention"
	case LatentAttention:
		return "latent_attention"
	case SharedKV:
		return "shared_kv"
	case Recurrent:
		return "recurrent"
	case FeedForward:
		return "mlp"
	}
	return "unknown"
}

// Layer is one decoder layer's kind and the sizes that kind needs. A zero
// size of an attention kind means the model's (KVHeads and HeadDim: the
// model's EffectiveKVHeads and EffectiveHeadDim).
type Layer struct {
	Kind LayerKind `json:"kind"`
	// Window is the tokens a SlidingWindow layer attends to, or the chunk
	// size of a ChunkedAttention layer.
	Window int `json:"window,omitempty"`
	// KVHeads and HeadDim shape the per-token cache of FullAttention,
	// SlidingWindow and ChunkedAttention layers when the layer differs
	// from the model.
	KVHeads int `json:"kv_heads,omitempty"`
	HeadDim int `json:"head_dim,omitempty"`
	// KEqV marks an attention layer whose values are its keys (Gemma 4's
	// attention_k_eq_v global layers): it has no value projection.
	KEqV bool `json:"k_eq_v,omitempty"`
	// LatentDim and RopeDim are a LatentAttention layer's cached values
	// per token (kv_lora_rank and qk_rope_head_dim).
	LatentDim int `json:"latent_dim,omitempty"`
	RopeDim   int `json:"rope_dim,omitempty"`
	// SharesWith is the index of the layer whose cache a SharedKV layer
	// reads.
	SharesWith int `json:"shares_with,omitempty"`
	// ConvState and SSMState are a Recurrent layer's state per sequence,
	// in elements (see Mamba2State and GatedDeltaNetState).
	// An attention layer with a state runs a recurrent mixer beside its
	// attention (Falcon-H1's parallel hybrid layers).
	ConvState int64 `json:"conv_state,omitempty"`
	SSMState  int64 `json:"ssm_state,omitempty"`
	// MixerParams is the weight count of the layer's recurrent mixer
	// (projections, convolution, SSM parameters), in place of attention's
	// for a Recurrent layer, beside it for a parallel hybrid one.
	MixerParams int64 `json:"mixer_params,omitempty"`
	// FFN is the layer's feed-forward block.
	FFN FFNKind `json:"ffn,omitempty"`
	// Intermediate is the width of the layer's dense FFN when it differs
	// from the model's (the per-block ffn_mult of a Nemotron-NAS model);
	// 0 means the model's.
	Intermediate int `json:"intermediate,omitempty"`
}

// LayerKVHeads is the key/value heads of an attention layer of kind l: its
// own when it names them, else the model's.
func (m *Model) LayerKVHeads(l Layer) int {
	if l.KVHeads > 0 {
		return l.KVHeads
	}
	return m.EffectiveKVHeads()
}

// LayerIntermediate is the dense FFN width of a layer of kind l: its own
// when it names one, else the model's (4·hidden when the config omits it).
func (m *Model) LayerIntermediate(l Layer) int {
	if l.Intermediate > 0 {
		return l.Intermediate
	}
	return intermediateOrDefault(m)
}

// Mamba2State is the Recurrent layer of a Mamba2 block with inner width
// dInner (expand × hidden), nGroups B/C groups, state size dState, nHeads
// heads and a causal convolution of convKernel taps. The convolution runs
// over x, B and C and keeps its last convKernel-1 inputs; the SSM state is
// head_dim × d_state per head, dInner × dState in all (vLLM
// model_executor/layers/mamba/mamba_utils.py, mamba2_state_shape:
// conv (conv_kernel-1, intermediate + 2·n_groups·state_size), temporal
// (num_heads, head_dim, state_size); llama.cpp's recurrent cells hold the
// same r_l and s_l rows, src/llama-memory-recurrent.cpp). A Mamba (v1)
// block is nGroups = 0 with nHeads·head_dim = dInner: its convolution runs
// over x alone and its state is dInner × dState.
func Mamba2State(dInner, nGroups, dState, convKernel int) Layer {
	return Layer{Kind: Recurrent,
		ConvState: int64(max(convKernel-1, 0)) * int64(dInner+2*nGroups*dState),
		SSMState:  int64(dInner) * int64(dState)}
}

// GatedDeltaNetState is the Recurrent layer of a gated DeltaNet linear
// attention (Qwen3-Next, Qwen3.5): kHeads key heads of kDim, vHeads value
// heads of vDim, and a causal convolution of convKernel taps over q, k and
// v. The state is one kDim × vDim matrix per value head (vLLM
// model_executor/layers/mamba/mamba_utils.py, gated_delta_net_state_shape:
// conv (conv_kernel-1, 2·k_heads·k_dim + v_heads·v_dim), temporal
// (v_heads, k_dim, v_dim)).
func GatedDeltaNetState(kHeads, kDim, vHeads, vDim, convKernel int) Layer {
	return Layer{Kind: Recurrent,
		ConvState: int64(max(convKernel-1, 0)) * int64(2*kHeads*kDim+vHeads*vDim),
		SSMState:  int64(vHeads) * int64(kDim) * int64(vDim)}
}

// ShortConvState is the Recurrent layer of LFM2's gated short
// convolution over the hidden width h with convKernel taps (conv_L_cache):
// it keeps its last convKernel-1 inputs and no SSM state (vLLM
// model_executor/layers/mamba/mamba_utils.py, short_conv_state_shape:
// (conv_kernel-1, hidden)).
func ShortConvState(h, convKernel int) Layer {
	return Layer{Kind: Recurrent, ConvState: int64(max(convKernel-1, 0)) * int64(h)}
}

// The mixers' weight counts below count matrices and per-channel vectors,
// no biases (the convention of ShapeParams).

// Mamba2Params is the weights of a Mamba2 mixer of hidden width h: in_proj
// h × (2·dInner + 2·nGroups·dState + nHeads) (z, x, B, C, dt), the
// depthwise convolution (dInner + 2·nGroups·dState) × convKernel, A_log, D
// and dt_bias per head, the gated norm over dInner, out_proj dInner × h
// (transformers src/transformers/models/nemotron_h/modeling_nemotron_h.py,
// NemotronHMamba2Mixer; Falcon-H1, granite-4.0-h and Bamba use the same
// mixer).
func Mamba2Params(h, dInner, nGroups, dState, nHeads, convKernel int) int64 {
	H, di, gs := int64(h), int64(dInner), 2*int64(nGroups)*int64(dState)
	return H*(2*di+gs+int64(nHeads)) + (di+gs)*int64(convKernel) + 3*int64(nHeads) + di + di*H
}

// MambaParams is the weights of a Mamba (v1) mixer as Jamba has it: in_proj
// h × 2·dInner, the depthwise convolution dInner × convKernel, x_proj
// dInner × (dtRank + 2·dState), dt_proj dtRank × dInner, A_log dInner ×
// dState, D dInner, out_proj dInner × h, and the dt, B and C norms
// (transformers src/transformers/models/jamba/modeling_jamba.py,
// JambaMambaMixer).
func MambaParams(h, dInner, dState, dtRank, convKernel int) int64 {
	H, di, ds, r := int64(h), int64(dInner), int64(dState), int64(dtRank)
	return H*2*di + di*int64(convKernel) + di*(r+2*ds) + r*di + di*ds + di + di*H + r + 2*ds
}

// GatedDeltaNetParams is the weights of a gated DeltaNet mixer: in_proj_qkvz
// h × (2·kHeads·kDim + 2·vHeads·vDim), in_proj_ba h × 2·vHeads, the
// convolution over q, k and v (2·kHeads·kDim + vHeads·vDim) × convKernel,
// dt_bias and A_log per value head, the gated norm vDim, out_proj
// vHeads·vDim × h (transformers
// src/transformers/models/qwen3_next/modeling_qwen3_next.py,
// Qwen3NextGatedDeltaNet).
func GatedDeltaNetParams(h, kHeads, kDim, vHeads, vDim, convKernel int) int64 {
	H, k, v := int64(h), int64(kHeads)*int64(kDim), int64(vHeads)*int64(vDim)
	return H*(2*k+2*v) + H*2*int64(vHeads) + (2*k+v)*int64(convKernel) + 2*int64(vHeads) + int64(vDim) + v*H
}

// ShortConvParams is the weights of LFM2's short convolution block:
// in_proj h × 3h (B, C, x), the depthwise convolution h × convKernel,
// out_proj h × h (transformers src/transformers/models/lfm2/modeling_lfm2.py,
// Lfm2ShortConv).
func ShortConvParams(h, convKernel int) int64 {
	H := int64(h)
	return H*3*H + H*int64(convKernel) + H*H
}

// CachesPerToken reports whether the layer's cache grows with the tokens
// of a sequence.
func (l Layer) CachesPerToken() bool {
	switch l.Kind {
	case FullAttention, SlidingWindow, ChunkedAttention, LatentAttention:
		return true
	}
	return false
}

// StateElements is the state the layer keeps per sequence whatever the
// context: a Recurrent layer's, or the mixer's beside a parallel hybrid's
// attention; 0 for the other layers.
func (l Layer) StateElements() int64 {
	return l.ConvState + l.SSMState
}

// HasAttention reports whether the layer holds attention weights (q, k, v,
// o projections): every kind but Recurrent and FeedForward.
func (l Layer) HasAttention() bool {
	return l.Kind != Recurrent && l.Kind != FeedForward
}

// DefaultLayer is the kind of every layer of a model without LayerKinds:
// latent attention when the model has an MLA latent (kv_lora_rank), else
// full attention.
func (m *Model) DefaultLayer() Layer {
	if m.KVLoRARank > 0 {
		return Layer{Kind: LatentAttention, LatentDim: m.KVLoRARank, RopeDim: m.QKRopeHeadDim}
	}
	return Layer{Kind: FullAttention}
}

// LayerAt is layer i of the model: LayerKinds[i mod its length], or
// DefaultLayer when the model has no LayerKinds.
func (m *Model) LayerAt(i int) Layer {
	if len(m.LayerKinds) == 0 {
		return m.DefaultLayer()
	}
	return m.LayerKinds[i%len(m.LayerKinds)]
}

// LayerCounts yields each entry of the model's layer pattern with how many
// of its Layers layers it describes (an entry equal to another is yielded
// apart; sums add them). A model without LayerKinds is one entry,
// DefaultLayer × Layers. The cost is the pattern's length, not the
// model's depth: memory sums call it on every estimate.
func (m *Model) LayerCounts() iter.Seq2[Layer, int] {
	return func(yield func(Layer, int) bool) {
		if m.Layers <= 0 {
			return
		}
		p := len(m.LayerKinds)
		if p == 0 {
			yield(m.DefaultLayer(), m.Layers)
			return
		}
		full, rest := m.Layers/p, m.Layers%p
		for j, l := range m.LayerKinds {
			n := full
			if j < rest {
				n++
			}
			if n > 0 && !yield(l, n) {
				return
			}
		}
	}
}

// CachedLayerCounts is LayerCounts over the layers that keep a KV cache:
// the first Layers - UncachedLayers of them.
func (m *Model) CachedLayerCounts() iter.Seq2[Layer, int] {
	if m.UncachedLayers <= 0 {
		return m.LayerCounts()
	}
	trunk := *m
	trunk.Layers = max(m.Layers-m.UncachedLayers, 0)
	return trunk.LayerCounts()
}

// RecurrentStateElements is the state all the model's Recurrent layers
// keep per sequence, in elements (0 for a model without such layers).
func (m *Model) RecurrentStateElements() float64 {
	var e float64
	for l, n := range m.LayerCounts() {
		e += float64(n) * float64(l.StateElements())
	}
	return e
}

// CountLayers is how many of the model's layers are of kind k.
func (m *Model) CountLayers(k LayerKind) int {
	n := 0
	for l, count := range m.LayerCounts() {
		if l.Kind == k {
			n += count
		}
	}
	return n
}

// SlidingLayers is the window of the model's sliding-window layers and how
// many of its layers use it (0, 0 when none do; the largest window when
// they differ).
func (m *Model) SlidingLayers() (window, count int) {
	for l, n := range m.LayerCounts() {
		if l.Kind == SlidingWindow {
			window = max(window, l.Window)
			count += n
		}
	}
	return window, count
}

// slidingPattern is the layer pattern of a model whose every every-th
// layer attends globally and whose other layers use window: layer i is
// global when (i+1) % every == 0, the rule of Gemma 3
// (sliding_window_pattern) and of llama.cpp's set_swa_pattern
// (src/llama-hparams.cpp); every <= 1: every layer uses the window.
func slidingPattern(window, every int) []Layer {
	sliding := Layer{Kind: SlidingWindow, Window: window}
	if every <= 1 {
		return []Layer{sliding}
	}
	kinds := make([]Layer, every)
	for i := range kinds[:every-1] {
		kinds[i] = sliding
	}
	kinds[every-1] = Layer{Kind: FullAttention}
	return kinds
}
