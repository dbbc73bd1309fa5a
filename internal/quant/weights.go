package quant

import (
	"math"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// The weight-memory model. When the shape of a model is known, its weights
// are enumerated tensor by tensor (embeddings, per-layer attention and FFN
// matrices, norms) and each tensor is charged the bits of the type it gets:
//
//   - contract levels fp32/bf16/fp16: every tensor at that width;
//   - contract levels fp8/int8/int4: the linear layers at the level's width,
//     the token embeddings and the output head kept at 16 bits, as
//     transformers' quantizers (bitsandbytes, GPTQ, AWQ, fp8) leave
//     nn.Embedding and lm_head unconverted (get_keys_to_not_convert in
//     transformers/integrations/bitsandbytes.py; vLLM's quantized linear
//     methods likewise skip the embedding and the head);
//   - GGUF types and llama.cpp mixes: the per-tensor rules of
//     llama_tensor_get_type_impl in src/llama-quant.cpp (ggml-org/llama.cpp
//     @ 007dbbf), reproduced in ggufTensorType below;
//   - in GGUF files 1-D tensors (norms) and the MoE router stay in f32
//     (llama-quant only quantizes 2-D/3-D "weight" tensors and never
//     ffn_gate_inp); for contract levels they are in the checkpoint dtype.
//
// Without a shape, weights = params × BitsPerWeight / 8.

// category mirrors llama-quant's tensor_category.
type category int

const (
	catTokenEmbd category = iota
	catOutput
	catAttnQ
	catAttnK
	catAttnV
	catAttnQKV
	catAttnOutput
	catFFNUp
	catFFNGate
	catFFNDown
	catOther2D // MLA projections (attn_q_a, attn_q_b, attn_kv_a_mqa, attn_k_b, attn_v_b)
	catF32     // norms, router: never quantized
)

// part is what a tensor does in the model, as a checkpoint's quantization
// config selects tensors (model.WeightLayout.Quantized): llama-quant's
// categories do not tell a routed expert from a shared one.
type part uint8

const (
	partNone part = iota // norms, router, biases: never quantized
	partEmbedding
	partHead
	partAttention
	partDenseMLP
	partSharedExperts
	partRoutedExperts
	partMixer
)

// layoutParts names each part as model.WeightLayout does.
var layoutParts = [...]string{
	partHead: model.PartHead, partAttention: model.PartAttention, partDenseMLP: model.PartDenseMLP,
	partSharedExperts: model.PartSharedExperts, partRoutedExperts: model.PartRoutedExperts, partMixer: model.PartMixer,
}

// tensor is one weight tensor (or a group of identical ones in one layer).
type tensor struct {
	cat      category
	layer    int     // -1 outside the layer stack
	elements float64 // number of weights
	cols     int     // ne[0], the row length that must divide the block size
	part     part
}

// tensors enumerates the weight tensors of a model from its shape, in the
// order llama.cpp stores them. ok is false when the shape is too incomplete
// to enumerate (layers, hidden, heads, vocab are needed).
func tensors(m *model.Model) ([]tensor, bool) {
	if !hasShape(m) {
		return nil, false
	}
	h := float64(m.Hidden)
	V := float64(m.Vocab)
	// At most 12 tensors per layer (MLA with q_lora, MoE router, gate),
	// 4 more with an indexer, plus embedding, final norm and head: one
	// allocation.
	per := 12
	if m.IndexerLayers > 0 {
		per = 16
	}
	ts := make([]tensor, 0, per*m.Layers+3)
	ts = append(ts, tensor{catTokenEmbd, -1, V * h, m.Hidden, partEmbedding})
	for i := 0; i < m.Layers; i++ {
		ts = appendLayerTensors(ts, m, i)
	}
	ts = append(ts, tensor{catF32, -1, h, 0, partNone})
	if !m.TieEmbeddings {
		ts = append(ts, tensor{catOutput, -1, V * h, m.Hidden, partHead})
	}
	return ts, true
}

// hasShape reports whether m's shape is complete enough to enumerate its
// tensors (layers, hidden, heads, vocab, not estimated).
func hasShape(m *model.Model) bool {
	return m != nil && m.Layers > 0 && m.Hidden > 0 && m.Heads > 0 && m.Vocab > 0 && !m.ShapeEstimated
}

// appendLayerTensors appends the tensors of layer i to ts.
func appendLayerTensors(ts []tensor, m *model.Model, i int) []tensor {
	h := float64(m.Hidden)
	l := m.LayerAt(i)
	if l.MixerParams > 0 {
		// A recurrent mixer (Mamba's ssm_in/ssm_out, LFM2's shortconv
		// projections...): quantized as the other 2-D tensors; its
		// convolution and per-head vectors are a small part of it.
		ts = append(ts, tensor{catF32, i, h, 0, partNone}, tensor{catOther2D, i, float64(l.MixerParams), m.Hidden, partMixer})
	}
	if l.HasAttention() {
		ts = appendAttentionTensors(ts, m, i, m.LayerKVHeads(l))
	}
	return appendFFNTensors(ts, m, i, l)
}

// appendAttentionTensors appends the attention tensors of layer i, of
// kvHeads key/value heads, and its norm.
func appendAttentionTensors(ts []tensor, m *model.Model, i, kvHeads int) []tensor {
	start := len(ts)
	ts = appendAttentionOf(ts, m, i, kvHeads)
	for k := start; k < len(ts); k++ {
		ts[k].part = partAttention
	}
	return ts
}

// appendAttentionOf is appendAttentionTensors without the tensors' part.
func appendAttentionOf(ts []tensor, m *model.Model, i, kvHeads int) []tensor {
	h := float64(m.Hidden)
	H := float64(m.Heads)
	ts = append(ts, tensor{catF32, i, h, 0, partNone}) // attn_norm
	if m.KVLoRARank > 0 {
		dn, dr, dv := float64(m.QKNopeHeadDim), float64(m.QKRopeHeadDim), float64(m.VHeadDim)
		r := float64(m.KVLoRARank)
		if m.QLoRARank > 0 {
			ql := float64(m.QLoRARank)
			ts = append(ts,
				tensor{catOther2D, i, h * ql, m.Hidden, partNone},
				tensor{catF32, i, ql, 0, partNone},
				tensor{catOther2D, i, ql * H * (dn + dr), m.QLoRARank, partNone})
		} else {
			ts = append(ts, tensor{catAttnQ, i, h * H * (dn + dr), m.Hidden, partNone})
		}
		ts = append(ts,
			tensor{catOther2D, i, h * (r + dr), m.Hidden, partNone},
			tensor{catF32, i, r, 0, partNone})
		ts = appendMLAKVB(ts, m, i)
		ts = append(ts, tensor{catAttnOutput, i, H * dv * h, m.Heads * m.VHeadDim, partNone})
		if i < m.IndexerLayers {
			ts = appendIndexerTensors(ts, m, i)
		}
	} else if m.OLoRARank > 0 {
		ts = appendGroupedOutputAttention(ts, m, i, kvHeads)
	} else {
		d := float64(m.EffectiveHeadDim())
		K := float64(kvHeads)
		qd := m.Heads * m.EffectiveHeadDim()
		if m.Arch().FusedQKV {
			ts = append(ts, tensor{catAttnQKV, i, h * (H + 2*K) * d, m.Hidden, partNone})
		} else {
			ts = append(ts,
				tensor{catAttnQ, i, qGate(m) * h * H * d, m.Hidden, partNone},
				tensor{catAttnK, i, h * K * d, m.Hidden, partNone},
				tensor{catAttnV, i, h * K * d, m.Hidden, partNone})
		}
		ts = append(ts, tensor{catAttnOutput, i, H * d * h, qd, partNone})
	}
	return ts
}

// appendMLAKVB appends layer i's kv_b_proj as llama.cpp's GGUF holds it
// since ggml-org/llama.cpp#12801 (daa4228, April 2025): split per head
// into attn_k_b, transposed to rows of qk_nope_head_dim ({qk_nope,
// kv_lora_rank, n_head}), and attn_v_b, rows of kv_lora_rank ({kv_lora_rank,
// v_head_dim, n_head}) (DeepseekV2Model.modify_tensors in
// conversion/deepseek.py, inherited by GLM-4.7-Flash's and GLM-5's
// converters in conversion/glm.py). llama-quant's tensor_get_category
// (src/llama-quant.cpp) matches "attn_kv_b.weight", "attn_k.weight" and
// "attn_v.weight", none of which these names contain, so both are "other"
// tensors at the mix's base type, and a row of 192 or 128 (GLM's, DeepSeek's
// qk_nope_head_dim) takes tensor_type_fallback's 32-block type under the
// k-quants (Q4_K to Q5_0, Q6_K to Q8_0). Files converted before the split
// hold one 2-D attn_kv_b (rows of kv_lora_rank) instead: the catalog's
// DeepSeek-V2-Lite (legraphista, llama.cpp PR 7519, May 2024) and
// DeepSeek-V3-0324 (bartowski, release b4944, March 2025) files, told apart
// by the build their cards name. Those builds typed it at the base type
// too (only attn_v.weight matched the attn_v rule before
// ggml-org/llama.cpp#19770), so today's list differs for them only by
// attn_k_b's row fallback: 28.3 M weights of DeepSeek-V2-Lite and 512 M of
// DeepSeek-V3, at most 0.2 % of a file (IQ1_S); the checks of
// TestCatalogAgainstPublishedTotals keep them within 1 % with today's list.
func appendMLAKVB(ts []tensor, m *model.Model, i int) []tensor {
	r, H := float64(m.KVLoRARank), float64(m.Heads)
	return append(ts,
		tensor{catOther2D, i, r * H * float64(m.QKNopeHeadDim), m.QKNopeHeadDim, partNone},
		tensor{catOther2D, i, r * H * float64(m.VHeadDim), m.KVLoRARank, partNone})
}

// appendGroupedOutputAttention appends layer i's DeepSeek-V4 attention
// (model.Model.OGroups; groupedOutputAttention in internal/model/shape.go):
// wq_a, q_norm, wq_b, wkv (the kvHeads heads that are keys and values),
// kv_norm, wo_a (the grouped low-rank output) and wo_b.
func appendGroupedOutputAttention(ts []tensor, m *model.Model, i, kvHeads int) []tensor {
	h, H := float64(m.Hidden), float64(m.Heads)
	d, K := float64(m.EffectiveHeadDim()), float64(kvHeads)
	qd := m.Heads * m.EffectiveHeadDim()
	if m.QLoRARank > 0 {
		ql := float64(m.QLoRARank)
		ts = append(ts,
			tensor{catOther2D, i, h * ql, m.Hidden, partNone},
			tensor{catF32, i, ql, 0, partNone},
			tensor{catAttnQ, i, ql * H * d, m.QLoRARank, partNone})
	} else {
		ts = append(ts, tensor{catAttnQ, i, h * H * d, m.Hidden, partNone})
	}
	r, g := float64(m.OLoRARank), float64(m.OGroups)
	return append(ts,
		tensor{catOther2D, i, h * K * d, m.Hidden, partNone},
		tensor{catF32, i, K * d, 0, partNone},
		tensor{catOther2D, i, H * d * r, qd / m.OGroups, partNone},
		tensor{catAttnOutput, i, g * r * h, m.OGroups * m.OLoRARank, partNone})
}

// appendIndexerTensors appends layer i's lightning indexer (model.Model.
// IndexerHeads): blk.N.indexer.attn_q_b, attn_k and proj, which llama.cpp's
// quantizer types as any other 2-D weight (only MiniMax's indexer
// projections are kept out, llama_tensor_get_type in src/llama-quant.cpp),
// and the k_norm weight and bias. The indexer layers are taken to be the
// first IndexerLayers: only GLM-5.2's indexer_types spreads them, which
// moves nothing but a pipeline stage's share by a few megabytes.
func appendIndexerTensors(ts []tensor, m *model.Model, i int) []tensor {
	h, hi, di := float64(m.Hidden), float64(m.IndexerHeads), float64(m.IndexerHeadDim)
	q, qCols := float64(m.QLoRARank), m.QLoRARank
	if q <= 0 {
		q, qCols = h, m.Hidden
	}
	return append(ts,
		tensor{catOther2D, i, q * hi * di, qCols, partNone},
		tensor{catOther2D, i, h * di, m.Hidden, partNone},
		tensor{catF32, i, 2 * di, 0, partNone},
		tensor{catOther2D, i, h * hi, m.Hidden, partNone})
}

// appendFFNTensors appends the FFN tensors of layer i (of kind l) and its
// norm: none, dense, or the routed and shared experts with the router.
func appendFFNTensors(ts []tensor, m *model.Model, i int, l model.Layer) []tensor {
	if l.FFN == model.FFNNone {
		return ts
	}
	h := float64(m.Hidden)
	ts = append(ts, tensor{catF32, i, h, 0, partNone}) // ffn_norm
	inter := m.Intermediate
	if inter == 0 {
		inter = 4 * m.Hidden
	}
	if !m.IsMoE() || i < m.DenseLayers || l.FFN == model.FFNDense {
		if l.Intermediate > 0 {
			inter = l.Intermediate // a Nemotron-NAS block's own width
		}
		return appendMLP(ts, m, i, 1, inter, partDenseMLP)
	}
	ts = append(ts, tensor{catF32, i, h * float64(m.Experts), 0, partNone}) // router
	expert := inter
	if m.MoEIntermediate > 0 {
		expert = m.MoEIntermediate
	}
	if m.MoELatent > 0 {
		// LatentMoE: the experts work in the latent width, between the
		// projections to it and back (model.Model.MoELatent).
		l := float64(m.MoELatent)
		ts = append(ts, tensor{catOther2D, i, h * l, m.Hidden, partRoutedExperts}, tensor{catOther2D, i, l * h, m.MoELatent, partRoutedExperts})
		ts = appendMLPOf(ts, m, i, float64(m.Experts), m.MoELatent, expert, partRoutedExperts)
		if m.SharedIntermediate > 0 {
			return appendMLP(ts, m, i, 1, m.SharedIntermediate, partSharedExperts)
		}
		return appendMLP(ts, m, i, float64(m.SharedExperts), expert, partSharedExperts)
	}
	if m.SharedIntermediate > 0 {
		ts = appendMLP(ts, m, i, float64(m.Experts), expert, partRoutedExperts)
		return appendMLP(ts, m, i, 1, m.SharedIntermediate, partSharedExperts)
	}
	ts = appendMLP(ts, m, i, float64(m.Experts), expert, partRoutedExperts)
	if m.SharedExperts > 0 {
		// llama.cpp stores the shared experts as one FFN of
		// n_expert_shared x n_ff_exp (ffn_*_shexp in
		// src/models/deepseek2.cpp of ggml-org/llama.cpp), as the
		// checkpoint does (DeepseekV2MoE's shared_experts MLP): its
		// ffn_down rows are that wide, which decides the block fallback
		// (DeepSeek-V2-Lite: 2 x 1,408 = 2,816 divides 256, 1,408 does not).
		ts = appendMLP(ts, m, i, 1, m.SharedExperts*expert, partSharedExperts)
	}
	return ts
}

// appendMLP appends the gate, up and down matrices of n FFNs of width
// inter, of part p.
func appendMLP(ts []tensor, m *model.Model, i int, n float64, inter int, p part) []tensor {
	return appendMLPOf(ts, m, i, n, m.Hidden, inter, p)
}

// appendMLPOf appends the gate, up and down matrices of n FFNs of width
// inter that read and write vectors of width in (the hidden size, or a
// LatentMoE's latent), of part p.
func appendMLPOf(ts []tensor, m *model.Model, i int, n float64, in, inter int, p part) []tensor {
	h, I := float64(in), float64(inter)
	if m.Arch().FusedGateUp {
		// One ffn_up holding gate and up (model.Arch.FusedGateUp), typed
		// as an ffn_up.
		return append(ts,
			tensor{catFFNUp, i, 2 * n * h * I, in, p},
			tensor{catFFNDown, i, n * I * h, inter, p})
	}
	if !plainMLP(m) {
		ts = append(ts, tensor{catFFNGate, i, n * h * I, in, p})
	}
	return append(ts,
		tensor{catFFNUp, i, n * h * I, in, p},
		tensor{catFFNDown, i, n * I * h, inter, p})
}

// plainMLP mirrors model's FFN projection count: falcon and GPT-2 style
// models have no gate matrix (model.Arch.PlainMLP).
func plainMLP(m *model.Model) bool { return m.Arch().PlainMLP }

// WeightsBytes is the storage of the model's weights at level l: exact per
// tensor when the shape is known (see the comment at the top of this file),
// params × bits per weight otherwise. A model read from a GGUF file at its
// own quantization returns the file's exact tensor bytes.
func WeightsBytes(m *model.Model, l Level) int64 {
	return NewWeights(m).Bytes(l)
}

// Weights answers WeightsBytes for one model at several levels: from the
// process-wide memo (weights_cache.go), else from the model's tensor list,
// enumerated on first need and kept for the other levels (the list depends
// on the shape only; building it is half the cost of one answer). Not safe
// for concurrent use; the model must not change while it is in use.
type Weights struct {
	m      *model.Model
	key    shapeKey
	built  bool
	ts     []tensor
	shaped bool
	elems  float64 // elements of all tensors, summed in tensor order
}

// NewWeights prepares WeightsBytes answers for m.
func NewWeights(m *model.Model) *Weights {
	w := &Weights{m: m}
	if m != nil {
		w.key = shapeOf(m)
	}
	return w
}

// Bytes is WeightsBytes(m, l).
func (w *Weights) Bytes(l Level) int64 {
	m := w.m
	if m == nil || m.Params <= 0 {
		return 0
	}
	lk := keyOf(storedLayout(m, l))
	k := weightsKey{w.key, l, lk}
	if v, ok := recall(k); ok {
		return v
	}
	v := w.compute(l, lk)
	remember(k, v)
	return v
}

// compute is WeightsBytes without the memo, for weights stored in layout
// lk (the zero key: the level's rule).
func (w *Weights) compute(l Level, lk layoutKey) int64 {
	m := w.m
	if m.FileWeightBytes > 0 && fileLevel(m) == l {
		return m.FileWeightBytes
	}
	info, ok := levelFor(m, l)
	if !ok {
		return 0
	}
	if !w.built {
		w.ts, w.shaped = tensors(m)
		for _, t := range w.ts {
			w.elems += t.elements
		}
		w.built = true
	}
	if !w.shaped {
		return int64(math.Ceil(float64(m.Params) * l.BitsPerWeight() / 8))
	}
	contract := l.IsContract()
	var bits float64
	if lk.bits > 0 {
		for _, t := range w.ts {
			bits += t.elements * layoutBits(lk, t)
		}
	} else {
		for _, t := range w.ts {
			bits += t.elements * tensorBits(m, l, contract, info, t)
		}
	}
	// The enumeration covers the shape; scale it to the model's stated
	// total so a published count (which may include biases or extra
	// tensors the shape formula leaves out) is honoured.
	scale := float64(m.Params) / w.elems
	return int64(math.Ceil(bits / 8 * scale))
}

// fileLevel is the Level of a GGUF model's own file type ("" if none).
func fileLevel(m *model.Model) Level {
	if m.FileQuant == "" {
		return ""
	}
	l, err := Parse(m.FileQuant)
	if err != nil {
		return ""
	}
	return l
}

// tensorBits is the bits per weight a tensor is stored with at level l
// (contract is l.IsContract(), asked once per level by the caller).
func tensorBits(m *model.Model, l Level, contract bool, info levelInfo, t tensor) float64 {
	if contract {
		// Checkpoints store norms and routers in the model dtype; the
		// quantized levels keep them (with embeddings and head) at 16 bits.
		switch {
		case l == FP32 || l == FP16 || l == BF16:
			return info.bits
		case t.cat == catTokenEmbd || t.cat == catOutput || t.cat == catF32:
			return 16
		}
		return info.bits
	}
	if info.format {
		return formatBits(m, info, t)
	}
	if t.cat == catF32 {
		return 32
	}
	return ggufTensorType(m, info, t).BitsPerWeight()
}

// formatBits is the bits of tensor t in an MXFP4 checkpoint (see MXFP4):
// the FFN weights of the MoE layers (every linear layer of a dense model)
// at the format's bits, everything else in BF16.
func formatBits(m *model.Model, info levelInfo, t tensor) float64 {
	switch t.cat {
	case catFFNUp, catFFNGate, catFFNDown:
		if !m.IsMoE() || t.layer >= m.DenseLayers {
			return info.bits
		}
	case catAttnQ, catAttnK, catAttnV, catAttnQKV, catAttnOutput, catOther2D:
		if !m.IsMoE() {
			return info.bits
		}
	}
	return 16
}

// qGate is 2 when the query projection also yields an output gate
// (model.Arch.GatedAttention), else 1.
func qGate(m *model.Model) float64 {
	if m.Arch().GatedAttention {
		return 2
	}
	return 1
}
