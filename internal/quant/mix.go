package quant

import (
	"sync"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// mix is a llama.cpp quantization mix (enum llama_ftype): most weight
// matrices in the base type, some raised to higher types by llama-quant's
// per-tensor rules (ggufTensorType).
type mix struct {
	base string // ggml type of the bulk of the weights (llama_model_quantize_impl's default_type)
}

// mixes lists the llama.cpp mixes and uniform GGUF types accepted as levels.
var mixes = map[Level]mix{
	"q4_0":   {base: "Q4_0"},
	"q4_1":   {base: "Q4_1"},
	"q5_0":   {base: "Q5_0"},
	"q5_1":   {base: "Q5_1"},
	"q8_0":   {base: "Q8_0"},
	"q2_k":   {base: "Q2_K"},
	"q3_k_s": {base: "Q3_K"},
	"q3_k_m": {base: "Q3_K"},
	"q3_k_l": {base: "Q3_K"},
	"q4_k_s": {base: "Q4_K"},
	"q4_k_m": {base: "Q4_K"},
	"q5_k_s": {base: "Q5_K"},
	"q5_k_m": {base: "Q5_K"},
	"q6_k":   {base: "Q6_K"},
	"iq4_xs": {base: "IQ4_XS"},
	"iq4_nl": {base: "IQ4_NL"},
}

func ggml(name string) model.GGMLType {
	t, _ := model.GGMLTypeByName(name)
	return t
}

// ggufTensorType is the ggml type llama-quant gives tensor t of model m for
// level l (llama_tensor_get_type_impl, src/llama-quant.cpp, ggml-org/llama.cpp
// @ 007dbbf), including the fallback for rows whose length does not divide
// the block size (tensor_type_fallback). No importance matrix is assumed.
// Plain ggml type levels ("q4_k") are "pure": no per-tensor changes.
func ggufTensorType(m *model.Model, l Level, t tensor) model.GGMLType {
	mx, isMix := mixes[l]
	if !isMix {
		typ, _ := model.GGMLTypeByName(string(l))
		return fallback(typ, t.cols)
	}
	typ := ggml(mx.base)
	nGQA := 1
	if kv := m.EffectiveKVHeads(); kv > 0 {
		nGQA = m.Heads / kv
	}
	nExpert := m.Experts
	L := m.Layers
	i := t.layer
	moreBits := func() bool { return useMoreBits(i, L) }
	falcon := m.Architecture == "falcon"

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
			switch l {
			case "q3_k_m", "q3_k_l":
				typ = ggml("Q4_K")
			case "q4_k_m":
				typ = ggml("Q5_K")
			case "q5_k_m":
				typ = ggml("Q6_K")
			}
			break
		}
		switch {
		case l == "q2_k":
			typ = ggml("Q3_K")
			if nGQA >= 4 {
				typ = ggml("Q4_K")
			}
		case l == "q3_k_m":
			typ = ggml("Q4_K")
			if i < 2 {
				typ = ggml("Q5_K")
			}
		case l == "q3_k_l":
			typ = ggml("Q5_K")
		case (l == "iq4_nl" || l == "iq4_xs") && nGQA >= 4:
			typ = ggml("Q5_K")
		case (l == "q4_k_m" || l == "q5_k_m") && moreBits():
			typ = ggml("Q6_K")
		case l == "q4_k_s" && i < 4:
			typ = ggml("Q5_K")
		}
		if is70B(m) && (typ == ggml("Q3_K") || typ == ggml("Q4_K")) {
			typ = ggml("Q5_K")
		}
		if nExpert == 8 {
			typ = ggml("Q8_0")
		}
	case catAttnK:
		if nExpert == 8 {
			typ = ggml("Q8_0")
		}
	case catFFNDown:
		switch {
		case l == "q2_k":
			typ = ggml("Q3_K")
		case l == "q3_k_m":
			switch {
			case i < L/16:
				typ = ggml("Q5_K")
			case !falcon || moreBits():
				typ = ggml("Q4_K")
			}
		case l == "q3_k_l":
			typ = ggml("Q5_K")
			if falcon {
				typ = ggml("Q4_K")
			}
		case l == "q4_k_m":
			if falcon {
				switch {
				case i < L/16:
					typ = ggml("Q6_K")
				case moreBits():
					typ = ggml("Q5_K")
				}
			} else if moreBits() {
				typ = ggml("Q6_K")
			}
		case i < L/8 && (l == "iq4_nl" || l == "iq4_xs"):
			typ = ggml("Q5_K")
		case l == "q5_k_m" && moreBits():
			typ = ggml("Q6_K")
		case l == "q4_k_s" && !falcon && i < L/8:
			typ = ggml("Q5_K")
		}
	case catAttnOutput:
		if falcon {
			if l == "q3_k_l" {
				typ = ggml("Q4_K")
			}
			break
		}
		if nExpert == 8 {
			switch l {
			case "q2_k", "q3_k_s", "q3_k_m", "iq4_nl", "q4_k_s", "q4_k_m", "iq4_xs":
				typ = ggml("Q5_K")
			}
			break
		}
		switch l {
		case "q2_k":
			typ = ggml("Q3_K")
		case "q3_k_m":
			typ = ggml("Q4_K")
		case "q3_k_l":
			typ = ggml("Q5_K")
		}
	}
	return fallback(typ, t.cols)
}

// outputType: the output head (and a tied token table) goes to Q6_K unless
// the mix is Q8_0 (stays) or the model is Falcon / the row does not divide
// the block (Q8_0).
func outputType(base model.GGMLType, falcon bool, cols int) model.GGMLType {
	blk := blockSize(base)
	switch {
	case falcon || (blk > 0 && cols%blk != 0):
		return ggml("Q8_0")
	case base != ggml("Q8_0"):
		return ggml("Q6_K")
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
	return m.Layers == 80 && (m.Architecture == "llama" || m.Architecture == "")
}

func blockSize(t model.GGMLType) int {
	bits := t.BitsPerWeight()
	if bits == 0 {
		return 0
	}
	// Block sizes: 256 for K and IQ (except IQ4_NL) types, 32 for the
	// legacy and IQ4_NL/MXFP4 types, 1 for float types.
	switch t.Name() {
	case "F32", "F16", "BF16":
		return 1
	case "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "IQ4_NL", "MXFP4":
		return 32
	}
	return 256
}

// fallback is tensor_type_fallback: a type whose block does not divide the
// row length is replaced by a 32-block type of similar size, or F16.
func fallback(t model.GGMLType, cols int) model.GGMLType {
	blk := blockSize(t)
	if cols <= 0 || blk <= 1 || cols%blk == 0 {
		return t
	}
	var r model.GGMLType
	switch t.Name() {
	case "IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ4_XS":
		r = ggml("IQ4_NL")
	case "Q2_K", "Q3_K", "TQ1_0", "TQ2_0":
		r = ggml("Q4_0")
	case "Q4_K":
		r = ggml("Q5_0")
	case "Q5_K":
		r = ggml("Q5_1")
	case "Q6_K":
		r = ggml("Q8_0")
	default:
		return ggml("F16")
	}
	if cols%blockSize(r) != 0 {
		return ggml("F16")
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
