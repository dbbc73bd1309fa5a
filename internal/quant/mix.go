package quant

import (
	"sync"

	"github.com/ai-hwaccel/ai-hwaccel/internal/ggml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// mixes lists the llama.cpp quantization mixes (enum llama_ftype) accepted
// as levels: most weight matrices in the mix's base type (ggml.FileType.Base),
// some raised to higher types by llama-quant's per-tensor rules
// (ggufTensorType).
var mixes = map[Level]ggml.FileType{
	"q4_0":   ggml.MostlyQ4_0,
	"q4_1":   ggml.MostlyQ4_1,
	"q5_0":   ggml.MostlyQ5_0,
	"q5_1":   ggml.MostlyQ5_1,
	"q8_0":   ggml.MostlyQ8_0,
	"q2_k":   ggml.MostlyQ2_K,
	"q3_k_s": ggml.MostlyQ3_K_S,
	"q3_k_m": ggml.MostlyQ3_K_M,
	"q3_k_l": ggml.MostlyQ3_K_L,
	"q4_k_s": ggml.MostlyQ4_K_S,
	"q4_k_m": ggml.MostlyQ4_K_M,
	"q5_k_s": ggml.MostlyQ5_K_S,
	"q5_k_m": ggml.MostlyQ5_K_M,
	"q6_k":   ggml.MostlyQ6_K,
	"iq4_xs": ggml.MostlyIQ4_XS,
	"iq4_nl": ggml.MostlyIQ4_NL,
	// The i-quant mixes and Q2_K_S (issue 27 item 4): the low-bit files
	// people download for a large model on a small GPU.
	"q2_k_s":  ggml.MostlyQ2_K_S,
	"iq3_m":   ggml.MostlyIQ3_M,
	"iq3_s":   ggml.MostlyIQ3_S,
	"iq3_xs":  ggml.MostlyIQ3_XS,
	"iq3_xxs": ggml.MostlyIQ3_XXS,
	"iq2_m":   ggml.MostlyIQ2_M,
	"iq2_s":   ggml.MostlyIQ2_S,
	"iq2_xs":  ggml.MostlyIQ2_XS,
	"iq2_xxs": ggml.MostlyIQ2_XXS,
	"iq1_m":   ggml.MostlyIQ1_M,
	"iq1_s":   ggml.MostlyIQ1_S,
}

// ggufTensorType is the ggml type llama-quant gives tensor t of model m for
// level l (llama_tensor_get_type_impl, src/llama-quant.cpp, ggml-org/llama.cpp
// @ 007dbbf), including the fallback for rows whose length does not divide
// the block size (tensor_type_fallback). No importance matrix is assumed,
// except where llama-quantize cannot write the mix without one: it refuses
// to write IQ1/IQ2/IQ3_XXS tensors, and Q2_K_S's Q2_K ones, without an
// importance matrix (tensor_requires_imatrix), so IQ1_*, IQ2_*, IQ3_XXS,
// IQ3_XS and Q2_K_S files all carry one. has_imatrix changes only IQ3_XXS
// among those (attn_v stays IQ3_XXS, ffn_down is not raised).
// Elsewhere an importance matrix changes two rules, which this function
// leaves at their static form: IQ4_NL and IQ4_XS raise the first eighth of
// the ffn_down tensors to Q5_K only without one (since the IQ4_XS mix
// itself, ggml-org/llama.cpp#5747), and Q4_0/Q5_0 raise them to Q4_1/Q5_1
// only with one. So an imatrix IQ4_XS file is smaller than derived here:
// the catalog's bartowski and legraphista IQ4_XS files of models of 3.8 B
// weights and more lie 0.60 to 0.97 % under the derived size and within
// 0.4 % of what it would be without that rule, while mradermacher's static
// files match it (TestCatalogAgainstPublishedTotals' log). A checkpoint
// does not record whether it was made with an importance matrix, so the
// static (larger) size is kept.
// Plain ggml type levels ("q4_k") are "pure": no per-tensor changes.
// info is the level's description (lookup).
func ggufTensorType(m *model.Model, info levelInfo, t tensor) ggml.Type {
	if !info.isMix {
		return fallback(info.typ, t.cols)
	}
	if lowBitIQ(info.mix) {
		return fallback(lowBitIQType(m, info, t), t.cols)
	}
	return fallback(mixTensorType(m, info, t), t.cols)
}

// mixTensorType is ggufTensorType before the fallback for the mixes outside
// lowBitIQ.
func mixTensorType(m *model.Model, info levelInfo, t tensor) ggml.Type {
	typ := info.typ
	ft := info.mix
	nGQA := gqaOf(m)
	nExpert := m.Experts
	L := m.Layers
	i := t.layer
	moreBits := func() bool { return useMoreBits(i, L) }
	falcon := m.Arch().Falcon

	switch t.cat {
	case catOutput:
		typ = outputType(typ, ft, falcon, t.cols)
	case catTokenEmbd:
		// A tied table is the output too and gets the output's type; an
		// untied one keeps the default type but for IQ3_XXS (IQ3_S).
		switch {
		case m.TieEmbeddings:
			typ = outputType(typ, ft, falcon, t.cols)
		case ft == ggml.MostlyIQ3_XXS:
			typ = ggml.IQ3_S
		}
	case catAttnV, catAttnQKV:
		// A fused attn_qkv takes attn_v's rules (category_is_attn_v; so
		// would a 2-D attn_kv_b, which no file converted since April 2025
		// holds: appendMLAKVB).
		// Before ggml-org/llama.cpp#19770 (1dab5f5a, March 2026) it had a
		// rule of its own (Q3_K_M/Q3_K_L/IQ3_M to Q4_K, Q4_K_M to Q5_K,
		// Q5_K_M to Q6_K, nothing else): that branch is still in
		// src/llama-quant.cpp but no longer reached, and files made
		// before it (the catalog's phi3 GGUF files) are typed by it.
		switch {
		case ft == ggml.MostlyQ2_K:
			typ = ggml.Q3_K
			if nGQA >= 4 {
				typ = ggml.Q4_K
			}
		case ft == ggml.MostlyQ2_K_S && nGQA >= 4:
			typ = ggml.Q4_K
		case ft == ggml.MostlyIQ3_XXS:
			// With an importance matrix (always, see above): IQ3_XXS stays.
			if nGQA >= 4 {
				typ = ggml.Q4_K
			}
		case (ft == ggml.MostlyIQ3_XS || ft == ggml.MostlyIQ3_S) && nGQA >= 4:
			typ = ggml.Q4_K
		case ft == ggml.MostlyIQ3_M:
			typ = ggml.Q4_K
		case ft == ggml.MostlyQ3_K_M:
			typ = ggml.Q4_K
			if i < 2 {
				typ = ggml.Q5_K
			}
		case ft == ggml.MostlyQ3_K_L:
			typ = ggml.Q5_K
		case (ft == ggml.MostlyIQ4_NL || ft == ggml.MostlyIQ4_XS) && nGQA >= 4:
			typ = ggml.Q5_K
		case (ft == ggml.MostlyQ4_K_M || ft == ggml.MostlyQ5_K_M) && moreBits():
			typ = ggml.Q6_K
		case ft == ggml.MostlyQ4_K_S && i < 4:
			typ = ggml.Q5_K
		}
		if is70B(m) && (typ == ggml.Q3_K || typ == ggml.Q4_K) {
			typ = ggml.Q5_K
		}
		if nExpert == 8 {
			typ = ggml.Q8_0
		}
	case catAttnK:
		switch {
		case nExpert == 8:
			typ = ggml.Q8_0
		case ft == ggml.MostlyIQ3_XS:
			typ = ggml.IQ3_XXS
		case ft == ggml.MostlyIQ3_XXS:
			typ = ggml.IQ2_S
		}
	case catAttnQ:
		switch ft {
		case ggml.MostlyIQ3_XS:
			typ = ggml.IQ3_XXS
		case ggml.MostlyIQ3_XXS:
			typ = ggml.IQ2_S
		}
	case catFFNDown:
		typ = ffnDownType(typ, ft, falcon, nExpert, i, L)
	case catFFNUp, catFFNGate:
		if ft == ggml.MostlyIQ3_XS && i >= L/8 && i < 7*L/8 {
			typ = ggml.IQ3_XXS
		}
	case catAttnOutput:
		typ = attnOutputType(typ, ft, falcon, nExpert)
	}
	return typ
}

// ffnDownType is the ffn_down rule of mixTensorType for layer i of L.
func ffnDownType(typ ggml.Type, ft ggml.FileType, falcon bool, nExpert, i, L int) ggml.Type {
	moreBits := useMoreBits(i, L)
	switch {
	case ft == ggml.MostlyQ2_K:
		typ = ggml.Q3_K
	case ft == ggml.MostlyQ2_K_S:
		if i < L/8 {
			typ = ggml.Q4_K
		}
	case ft == ggml.MostlyQ3_K_M:
		switch {
		case i < L/16:
			typ = ggml.Q5_K
		case !falcon || moreBits:
			typ = ggml.Q4_K
		}
	case ft == ggml.MostlyIQ3_M && (i < L/8 || (nExpert == 8 && moreBits)):
		typ = ggml.Q4_K
	case ft == ggml.MostlyQ3_K_L:
		typ = ggml.Q5_K
		if falcon {
			typ = ggml.Q4_K
		}
	case ft == ggml.MostlyQ4_K_M:
		if falcon {
			switch {
			case i < L/16:
				typ = ggml.Q6_K
			case moreBits:
				typ = ggml.Q5_K
			}
		} else if moreBits {
			typ = ggml.Q6_K
		}
	case i < L/8 && (ft == ggml.MostlyIQ4_NL || ft == ggml.MostlyIQ4_XS):
		typ = ggml.Q5_K
	case ft == ggml.MostlyQ5_K_M && moreBits:
		typ = ggml.Q6_K
	case ft == ggml.MostlyQ4_K_S && !falcon && i < L/8:
		typ = ggml.Q5_K
	}
	return typ
}

// attnOutputType is the attn_output rule of mixTensorType.
func attnOutputType(typ ggml.Type, ft ggml.FileType, falcon bool, nExpert int) ggml.Type {
	if falcon {
		if ft == ggml.MostlyQ3_K_L {
			typ = ggml.Q4_K
		}
		return typ
	}
	if nExpert == 8 {
		switch ft {
		case ggml.MostlyQ2_K, ggml.MostlyIQ3_XS, ggml.MostlyIQ3_XXS, ggml.MostlyQ3_K_S, ggml.MostlyQ3_K_M, ggml.MostlyIQ4_NL,
			ggml.MostlyQ4_K_S, ggml.MostlyQ4_K_M, ggml.MostlyIQ3_S, ggml.MostlyIQ3_M, ggml.MostlyIQ4_XS:
			typ = ggml.Q5_K
		}
		return typ
	}
	switch ft {
	case ggml.MostlyQ2_K:
		typ = ggml.Q3_K
	case ggml.MostlyIQ3_XXS:
		typ = ggml.IQ3_S
	case ggml.MostlyQ3_K_M, ggml.MostlyIQ3_M:
		typ = ggml.Q4_K
	case ggml.MostlyQ3_K_L:
		typ = ggml.Q5_K
	}
	return typ
}

// lowBitIQ reports whether ft is one of the 1- and 2-bit i-quant mixes,
// which llama-quant handles in a branch of their own.
func lowBitIQ(ft ggml.FileType) bool {
	switch ft {
	case ggml.MostlyIQ2_XXS, ggml.MostlyIQ2_XS, ggml.MostlyIQ2_S, ggml.MostlyIQ2_M, ggml.MostlyIQ1_S, ggml.MostlyIQ1_M:
		return true
	}
	return false
}

// lowBitIQType is llama-quant's branch for the lowBitIQ mixes: the output
// head at Q5_K, the token table at Q2_K (IQ3_S for IQ2_S/IQ2_M), attn_v at
// Q4_K with grouped KV heads or experts, the first eighth of the ffn_down
// tensors and attn_output one step up; nothing else changes (no 70B or
// 8-expert attn_v rule applies to them).
func lowBitIQType(m *model.Model, info levelInfo, t tensor) ggml.Type {
	ft := info.mix
	iq2sm := ft == ggml.MostlyIQ2_S || ft == ggml.MostlyIQ2_M
	step := ggml.Q2_K // the one-step-up type of the branch
	if iq2sm {
		step = ggml.IQ3_S
	}
	switch t.cat {
	case catOutput:
		return outputType(info.typ, ft, m.Arch().Falcon, t.cols)
	case catTokenEmbd:
		if m.TieEmbeddings {
			return outputType(info.typ, ft, m.Arch().Falcon, t.cols)
		}
		return step
	case catAttnV, catAttnQKV:
		// A fused attn_qkv takes attn_v's rule here since
		// ggml-org/llama.cpp#19770 (1dab5f5a, March 2026); this branch
		// matched attn_v.weight only before it, so an older file keeps
		// attn_qkv at the base type (Phi-4-mini-instruct's IQ2_M file,
		// 2.9 % under today's figure, and its Q2_K file by the rule of
		// mixTensorType's attn_qkv before that change: their notes).
		if gqaOf(m) >= 4 || m.Experts >= 4 {
			return ggml.Q4_K
		}
		return step
	case catAttnK:
		if m.Experts == 8 {
			return ggml.Q4_K
		}
	case catFFNDown:
		// llama-quant counts ffn_down tensors here, not layers: the first
		// n_layer/8 of them in load order (ffnDownBefore), which are those
		// of the first info.raisedDown layers (levelFor).
		if t.layer < info.raisedDown {
			return step
		}
	case catAttnOutput:
		switch {
		case m.Experts == 8:
			return ggml.Q5_K
		case ft == ggml.MostlyIQ1_S || ft == ggml.MostlyIQ1_M:
			return ggml.IQ2_XXS
		case iq2sm:
			return ggml.IQ3_S
		}
	}
	return info.typ
}

// gqaOf is llama.cpp's n_gqa(): query heads per KV head (1 without).
func gqaOf(m *model.Model) int {
	if kv := m.EffectiveKVHeads(); kv > 0 {
		return m.Heads / kv
	}
	return 1
}

// ffnDownBefore is how many ffn_down tensors llama.cpp loads before layer
// i's: one per layer with an FFN, two in a MoE layer with shared experts
// (ffn_down_exps and ffn_down_shexp). Tensors load in layer order
// (weight_name_comparer in src/llama-model-loader.h). The count stands for
// both tensors of a layer, which may misplace one small shared-expert
// tensor at the boundary.
func ffnDownBefore(m *model.Model, i int) int {
	n := 0
	for j := 0; j < i; j++ {
		n += ffnDownTensors(m, j)
	}
	return n
}

// ffnDownTensors is how many ffn_down tensors layer j holds (ffnDownBefore).
func ffnDownTensors(m *model.Model, j int) int {
	l := m.LayerAt(j)
	switch {
	case l.FFN == model.FFNNone:
		return 0
	case m.IsMoE() && j >= m.DenseLayers && l.FFN != model.FFNDense && (m.SharedExperts > 0 || m.SharedIntermediate > 0):
		return 2
	}
	return 1
}

// raisedFFNDownLayers is how many leading layers a lowBitIQ mix raises the
// ffn_down of: layer i is raised when ffnDownBefore(m, i) < n_layer/8, and
// that count only grows with i, so the raised layers are a prefix, found in
// one pass.
func raisedFFNDownLayers(m *model.Model) int {
	limit, n := m.Layers/8, 0
	for j := 0; j < m.Layers; j++ {
		if n >= limit {
			return j
		}
		n += ffnDownTensors(m, j)
	}
	return m.Layers
}

// outputType: the output head (and a tied token table) goes to Q8_0 for
// Falcon or when the row does not divide the block, to Q5_K for the
// 1-2-bit i-quant mixes and IQ3_XXS, else to Q6_K unless the mix is Q8_0
// (stays).
func outputType(base ggml.Type, ft ggml.FileType, falcon bool, cols int) ggml.Type {
	blk := base.BlockSize()
	switch {
	case falcon || (blk > 0 && cols%blk != 0):
		return ggml.Q8_0
	case lowBitIQ(ft) || ft == ggml.MostlyIQ3_XXS:
		return ggml.Q5_K
	case base != ggml.Q8_0:
		return ggml.Q6_K
	}
	return base
}

// useMoreBits is llama-quant's use_more_bits: the first and last eighth of
// the layers and every third layer in between.
func useMoreBits(i, n int) bool {
	return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2
}

// is70B approximates llama.cpp's LLM_TYPE_70B (assigned from the layer
// count: 80 layers for the llama architecture).
func is70B(m *model.Model) bool {
	return m.Layers == 80 && m.Arch().Llama70B
}

// fallback is tensor_type_fallback: a type whose block does not divide the
// row length is replaced by a 32-block type of similar size, or F16.
func fallback(t ggml.Type, cols int) ggml.Type {
	blk := t.BlockSize()
	if cols <= 0 || blk <= 1 || cols%blk == 0 {
		return t
	}
	var r ggml.Type
	switch t {
	case ggml.IQ1_S, ggml.IQ1_M, ggml.IQ2_XXS, ggml.IQ2_XS, ggml.IQ2_S, ggml.IQ3_XXS, ggml.IQ3_S, ggml.IQ4_XS:
		r = ggml.IQ4_NL
	case ggml.Q2_K, ggml.Q3_K, ggml.TQ1_0, ggml.TQ2_0:
		r = ggml.Q4_0
	case ggml.Q4_K:
		r = ggml.Q5_0
	case ggml.Q5_K:
		r = ggml.Q5_1
	case ggml.Q6_K:
		r = ggml.Q8_0
	default:
		return ggml.F16
	}
	if cols%r.BlockSize() != 0 {
		return ggml.F16
	}
	return r
}

// ReferenceModel is the catalog model whose shape defines the whole-model
// bits per weight of a mix (Level.BitsPerWeight), used when a model's own
// shape is unknown. Llama-3.1-8B is the model of llama.cpp's published
// quantize table (tools/quantize/README.md), which the tests compare with.
const ReferenceModel = "Llama-3.1-8B"

var (
	effectiveOnce sync.Once
	effective     map[Level]float64
)

// effectiveBits is the whole-model bits per weight of a mix: the per-tensor
// rules applied to the reference model's shape.
func effectiveBits(l Level) float64 {
	effectiveOnce.Do(func() {
		effective = map[Level]float64{}
		ref := model.Lookup(ReferenceModel)
		for name := range mixes {
			effective[name] = float64(WeightsBytes(ref, name)) * 8 / float64(ref.Params)
		}
	})
	return effective[l]
}

// Imatrix says what an importance matrix (llama-quantize --imatrix) does to
// the file of a GGUF level, read from llama-quant of ggml-org/llama.cpp @
// 34af94cd and ggml/src/ggml-quants.c at the same commit.
type Imatrix int

const (
	// ImatrixUnused: the level's types do not read one (quantize_q8_0 and
	// quantize_mxfp4 ignore their quant_weights; float types are not
	// quantized).
	ImatrixUnused Imatrix = iota
	// ImatrixOptional: the quantizers weigh the values by it, the tensor
	// types stay as derived (IQ4_NL/IQ4_XS: one rule fewer raises
	// ffn_down, so the file is no larger than derived).
	ImatrixOptional
	// ImatrixRequired: llama-quantize refuses to write the level without
	// one (tensor_requires_imatrix: IQ1_*, IQ2_*, IQ3_XXS tensors, and the
	// Q2_K tensors of a Q2_K_S file; the IQ3_XS mix writes IQ3_XXS ones).
	ImatrixRequired
	// ImatrixGrows: with one llama-quant raises the first eighth of the
	// ffn_down tensors of a Q4_0 or Q5_0 file to Q4_1 or Q5_1 ("Guard
	// against craziness in the first few ffn_down layers"), a larger file
	// than the one derived without it.
	ImatrixGrows
)

// ImatrixFor is what an importance matrix does to level l's file (see
// Imatrix); ImatrixUnused for levels that are not GGUF types.
func ImatrixFor(l Level) Imatrix {
	info, ok := lookup(l.LlamaCPPLevel())
	if !ok || !info.typ.IsWeightFormat() {
		return ImatrixUnused
	}
	if info.isMix {
		switch {
		case lowBitIQ(info.mix), info.mix == ggml.MostlyIQ3_XXS, info.mix == ggml.MostlyIQ3_XS, info.mix == ggml.MostlyQ2_K_S:
			return ImatrixRequired
		case info.mix == ggml.MostlyQ4_0, info.mix == ggml.MostlyQ5_0:
			return ImatrixGrows
		}
	}
	switch info.typ {
	case ggml.Q8_0, ggml.MXFP4: // quantize_q8_0, quantize_mxfp4: unused
		return ImatrixUnused
	case ggml.IQ1_S, ggml.IQ1_M, ggml.IQ2_XXS, ggml.IQ2_XS, ggml.IQ2_S, ggml.IQ3_XXS:
		return ImatrixRequired
	}
	return ImatrixOptional
}

// IsPureType reports whether l is a plain ggml type level ("q4_k"), every
// tensor in that one type, which llama-quantize writes only with --pure
// (without it "Q4_K" is its alias of the Q4_K_M mix).
func IsPureType(l Level) bool {
	info, ok := lookup(l.LlamaCPPLevel())
	return ok && !info.isMix && !info.format && !l.IsContract() && info.typ.IsWeightFormat()
}
