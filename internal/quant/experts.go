package quant

import (
	"github.com/ai-hwaccel/ai-hwaccel/internal/ggml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// RoutedExperts is the routed-expert weights of a MoE model at one level,
// summed over its MoE layers, tensor by tensor as llama.cpp names them
// (blk.N.ffn_gate_exps, ffn_up_exps, ffn_down_exps): what --n-cpu-moe and
// -ot move to host memory.
type RoutedExperts struct {
	// Gate, Up and Down are the bytes of each tensor kind over all MoE
	// layers (Gate is 0 for a model without a gate matrix).
	Gate, Up, Down float64
	// Repacked is the part of them llama.cpp's CPU backend copies into its
	// CPU_REPACK buffer when they stay on the CPU (RepacksOnCPU).
	Repacked float64
	// ByLayer is each layer's share, indexed by layer (zero for a layer
	// without routed experts): llama-quant's types vary by layer (a
	// Q4_K_M file keeps ffn_down_exps in Q6_K in the first and last
	// eighth of the layers and every third one between), so the experts
	// --n-cpu-moe N moves are not N times the average.
	ByLayer []LayerExperts
}

// LayerExperts is one layer's routed-expert bytes, tensor by tensor.
type LayerExperts struct{ Gate, Up, Down float64 }

// Total is the layer's routed-expert bytes.
func (l LayerExperts) Total() float64 { return l.Gate + l.Up + l.Down }

// Total is the routed experts' bytes.
func (r RoutedExperts) Total() float64 { return r.Gate + r.Up + r.Down }

// RoutedExpertBytes is m's routed experts at level l, each tensor at the
// type llama-quant gives it (ggufTensorType: a Q4_K_M file keeps some
// ffn_down_exps in Q6_K, and a row length that does not divide the block
// size falls back to another type); false for a dense model, a model
// without a shape, or a level that is not a GGUF type, a llama.cpp mix or
// MXFP4.
func RoutedExpertBytes(m *model.Model, l Level) (RoutedExperts, bool) {
	var r RoutedExperts
	if m == nil || !m.IsMoE() || m.Hidden <= 0 || m.Layers <= 0 || m.ShapeEstimated {
		return r, false
	}
	info, ok := levelFor(m, l)
	if !ok || l.IsContract() {
		return r, false
	}
	in, inter := routedDims(m)
	e, h, I := float64(m.Experts), float64(in), float64(inter)
	r.ByLayer = make([]LayerExperts, m.Layers)
	for i := max(m.DenseLayers, 0); i < m.Layers; i++ {
		if m.LayerAt(i).FFN == model.FFNNone || m.LayerAt(i).FFN == model.FFNDense {
			continue
		}
		up := tensor{catFFNUp, i, e * h * I, in, partRoutedExperts}
		down := tensor{catFFNDown, i, e * I * h, inter, partRoutedExperts}
		l := &r.ByLayer[i]
		l.Up = expertBytes(m, info, up, inter, &r.Repacked)
		l.Down = expertBytes(m, info, down, in, &r.Repacked)
		if !plainMLP(m) {
			l.Gate = expertBytes(m, info, tensor{catFFNGate, i, e * h * I, in, partRoutedExperts}, inter, &r.Repacked)
		}
		r.Up += l.Up
		r.Down += l.Down
		r.Gate += l.Gate
	}
	return r, r.Total() > 0
}

// routedDims is the width a routed expert reads (the hidden size, or a
// LatentMoE's latent) and its FFN width, as appendFFNTensors sizes them.
func routedDims(m *model.Model) (in, inter int) {
	in, inter = m.Hidden, m.Intermediate
	if inter == 0 {
		inter = 4 * m.Hidden
	}
	if m.MoEIntermediate > 0 {
		inter = m.MoEIntermediate
	}
	if m.MoELatent > 0 {
		in = m.MoELatent
	}
	return in, inter
}

// expertBytes is the bytes of tensor t, whose rows number rows (ggml's
// ne[1] of one expert), adding them to *repacked when the CPU backend
// repacks its type.
func expertBytes(m *model.Model, info levelInfo, t tensor, rows int, repacked *float64) float64 {
	typ := info.typ
	if !info.format {
		typ = ggufTensorType(m, info, t)
	}
	b := t.elements * typ.BitsPerWeight() / 8
	if RepacksOnCPU(typ, rows) {
		*repacked += b
	}
	return b
}

// RepacksOnCPU reports whether llama.cpp's CPU backend on an x86-64 host
// with AVX2 copies a weight of type t with rows rows (ne[1]) into its
// CPU_REPACK buffer, an interleaved copy of the same size in anonymous
// memory (its log: "buffer type overridden to CPU_REPACK"): Q4_0, Q4_K,
// IQ4_NL and MXFP4 whose rows divide by 8 (ggml_repack_get_optimal_repack_type
// in ggml/src/ggml-cpu/repack.cpp of ggml-org/llama.cpp @ 00d3d1d8, which
// also repacks Q2_K on AVX-512 and Q5_K/Q6_K/Q8_0 on Arm with i8mm or
// dotprod: not counted here).
func RepacksOnCPU(t ggml.Type, rows int) bool {
	switch t {
	case ggml.Q4_0, ggml.Q4_K, ggml.IQ4_NL, ggml.MXFP4:
		return rows > 0 && rows%8 == 0
	}
	return false
}
