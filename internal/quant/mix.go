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
}

// ggufTensorType is the ggml type llama-quant gives tensor t of model m for
// level l (llama_tensor_get_type_impl, src/llama-quant.cpp, ggml-org/llama.cpp
// @ 007dbbf), including the fallback for rows whose length does not divide
// the block size (tensor_type_fallback). No importance matrix is assumed.
// Plain ggml type levels ("q4_k") are "pure": no per-tensor changes.
// info is the level's description (lookup).
func ggufTensorType(m *model.Model, info levelInfo, t tensor) ggml.Type {
	typ := info.typ
	if !info.isMix {
		return fallback(typ, t.cols)
	}
	ft := info.mix
	nGQA := 1
	if kv := m.EffectiveKVHeads(); kv > 0 {
		nGQA = m.Heads / kv
	}
	nExpert := m.Experts
	L := m.Layers
	i := t.layer
	moreBits := func() bool { return useMoreBits(i, L) }
	falcon := m.Arch().Falcon

	switch t.cat {
	case catOutput:
		typ = outputType(typ, falcon, t.cols)
	case catTokenEmbd:
		// A tied table is the output too and gets the output's type; an
		// untied one keeps the default type (the IQ exceptions are not
		// among the supported mixes).
		if m.TieEmbeddings {
			typ = outputType(typ, falcon, t.cols)
		}
	case catAttnV, catAttnQKV, catAttnKVB:
		if t.cat == catAttnQKV {
			switch ft {
			case ggml.MostlyQ3_K_M, ggml.MostlyQ3_K_L:
				typ = ggml.Q4_K
			case ggml.MostlyQ4_K_M:
				typ = ggml.Q5_K
			case ggml.MostlyQ5_K_M:
				typ = ggml.Q6_K
			}
			break
		}
		switch {
		case ft == ggml.MostlyQ2_K:
			typ = ggml.Q3_K
			if nGQA >= 4 {
				typ = ggml.Q4_K
			}
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
		if nExpert == 8 {
			typ = ggml.Q8_0
		}
	case catFFNDown:
		switch {
		case ft == ggml.MostlyQ2_K:
			typ = ggml.Q3_K
		case ft == ggml.MostlyQ3_K_M:
			switch {
			case i < L/16:
				typ = ggml.Q5_K
			case !falcon || moreBits():
				typ = ggml.Q4_K
			}
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
				case moreBits():
					typ = ggml.Q5_K
				}
			} else if moreBits() {
				typ = ggml.Q6_K
			}
		case i < L/8 && (ft == ggml.MostlyIQ4_NL || ft == ggml.MostlyIQ4_XS):
			typ = ggml.Q5_K
		case ft == ggml.MostlyQ5_K_M && moreBits():
			typ = ggml.Q6_K
		case ft == ggml.MostlyQ4_K_S && !falcon && i < L/8:
			typ = ggml.Q5_K
		}
	case catAttnOutput:
		if falcon {
			if ft == ggml.MostlyQ3_K_L {
				typ = ggml.Q4_K
			}
			break
		}
		if nExpert == 8 {
			switch ft {
			case ggml.MostlyQ2_K, ggml.MostlyQ3_K_S, ggml.MostlyQ3_K_M, ggml.MostlyIQ4_NL, ggml.MostlyQ4_K_S, ggml.MostlyQ4_K_M, ggml.MostlyIQ4_XS:
				typ = ggml.Q5_K
			}
			break
		}
		switch ft {
		case ggml.MostlyQ2_K:
			typ = ggml.Q3_K
		case ggml.MostlyQ3_K_M:
			typ = ggml.Q4_K
		case ggml.MostlyQ3_K_L:
			typ = ggml.Q5_K
		}
	}
	return fallback(typ, t.cols)
}

// outputType: the output head (and a tied token table) goes to Q6_K unless
// the mix is Q8_0 (stays) or the model is Falcon / the row does not divide
// the block (Q8_0).
func outputType(base ggml.Type, falcon bool, cols int) ggml.Type {
	blk := base.BlockSize()
	switch {
	case falcon || (blk > 0 && cols%blk != 0):
		return ggml.Q8_0
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
